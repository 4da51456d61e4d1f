/* Shapes become horizontal spans of pixels written straight into an RGB
 * buffer (3 bytes a pixel): no SDL, so headless frames need no window
 * library. Rasterizing by hand keeps the pixels exact: no antialiasing; a
 * colour with alpha below 255 is blended over what is there. Coordinates
 * that are not finite draw nothing, and huge ones are clamped before any
 * conversion to int.
 *
 * The shapes follow pygame's rules, which Gymnasium's pictures are drawn
 * with: a point stands for the frame pixel that holds it; a polygon covers
 * the frame pixels on or inside its outline through those pixels (a
 * scanline fill whose spans end at the nearest pixel, as SDL_gfx's filled
 * polygons), a disc the pixels within its radius and a half of its centre
 * pixel, a line the pixels from one end's to the other's. Those frame
 * pixels are then sampled at the device's pixel centres, so a scaled frame
 * (the viewer's tiles) shows the same shapes. A box is the one exact shape:
 * the device pixels whose centres lie in it, half-open, so that boxes that
 * share an edge tile without overlapping. */
#include <math.h>
#include <string.h>

#include "render.h"

enum { MAX_POINTS = 16 };

void render_canvas_init(render_canvas *c, uint8_t *pixels, int pitch, render_rect clip, double ox, double oy,
                        double scale, double frame_h)
{
    c->pixels = pixels;
    c->pitch = pitch;
    c->clip = clip;
    c->ox = ox;
    c->oy = oy;
    c->scale = scale;
    c->frame_h = frame_h;
}

/* r is inside the clip rectangle. */
static void push(render_canvas *c, render_rect r, render_colour col)
{
    if (!c->pixels)
        return;
    for (int y = r.y; y < r.y + r.h; y++) {
        uint8_t *p = c->pixels + (size_t)y * (size_t)c->pitch + (size_t)r.x * 3;
        if (col.a == 255) {
            /* One row pixel by pixel, the others copied from it. */
            if (y > r.y) {
                memcpy(p, p - c->pitch, (size_t)r.w * 3);
                continue;
            }
            for (int x = 0; x < r.w; x++, p += 3) {
                p[0] = col.r;
                p[1] = col.g;
                p[2] = col.b;
            }
            continue;
        }
        unsigned a = col.a, na = 255 - col.a;
        for (int x = 0; x < r.w; x++, p += 3) {
            p[0] = (uint8_t)((col.r * a + p[0] * na + 127) / 255);
            p[1] = (uint8_t)((col.g * a + p[1] * na + 127) / 255);
            p[2] = (uint8_t)((col.b * a + p[2] * na + 127) / 255);
        }
    }
}

void render_device_rect(render_canvas *c, render_rect r, render_colour col)
{
    int x0 = r.x > c->clip.x ? r.x : c->clip.x;
    int y0 = r.y > c->clip.y ? r.y : c->clip.y;
    int x1 = r.x + r.w < c->clip.x + c->clip.w ? r.x + r.w : c->clip.x + c->clip.w;
    int y1 = r.y + r.h < c->clip.y + c->clip.h ? r.y + r.h : c->clip.y + c->clip.h;
    if (x0 < x1 && y0 < y1)
        push(c, (render_rect){x0, y0, x1 - x0, y1 - y0}, col);
}

void render_fill(render_canvas *c, render_colour col)
{
    render_device_rect(c, c->clip, col);
}

/* A device coordinate as an int, clamped to just outside [lo, hi]. */
static int clamp_int(double v, int lo, int hi)
{
    if (!(v > lo - 1))
        return lo - 1;
    if (v > hi + 1)
        return hi + 1;
    return (int)v;
}

/* Pixels of row `row` whose centres lie in [xa, xb). */
static void span(render_canvas *c, int row, double xa, double xb, render_colour col)
{
    int lo = c->clip.x, hi = c->clip.x + c->clip.w;
    int x0 = clamp_int(ceil(xa - 0.5), lo, hi);
    int x1 = clamp_int(ceil(xb - 0.5), lo, hi);
    if (x0 < lo)
        x0 = lo;
    if (x1 > hi)
        x1 = hi;
    if (x0 < x1)
        push(c, (render_rect){x0, row, x1 - x0, 1}, col);
}

/* Rows of the clip rectangle whose centres may lie in [ymin, ymax]. */
static void row_range(const render_canvas *c, double ymin, double ymax, int *first, int *end)
{
    int lo = c->clip.y, hi = c->clip.y + c->clip.h;
    *first = clamp_int(floor(ymin), lo, hi);
    *end = clamp_int(ceil(ymax) + 1, lo, hi);
    if (*first < lo)
        *first = lo;
    if (*end > hi)
        *end = hi;
}

/* Even-odd scanline fill of a polygon in device coordinates. */
static void device_polygon(render_canvas *c, const double *X, const double *Y, int n, render_colour col)
{
    double ymin = Y[0], ymax = Y[0];
    for (int i = 0; i < n; i++) {
        if (!isfinite(X[i]) || !isfinite(Y[i]))
            return;
        ymin = Y[i] < ymin ? Y[i] : ymin;
        ymax = Y[i] > ymax ? Y[i] : ymax;
    }
    int first, end;
    row_range(c, ymin, ymax, &first, &end);
    for (int row = first; row < end; row++) {
        double yc = row + 0.5, xs[MAX_POINTS];
        int k = 0;
        for (int i = 0, j = n - 1; i < n; j = i++)
            if ((Y[i] <= yc) != (Y[j] <= yc))
                xs[k++] = X[j] + (yc - Y[j]) * (X[i] - X[j]) / (Y[i] - Y[j]);
        for (int i = 1; i < k; i++)
            for (int j = i; j > 0 && xs[j - 1] > xs[j]; j--) {
                double t = xs[j];
                xs[j] = xs[j - 1];
                xs[j - 1] = t;
            }
        for (int i = 0; i + 1 < k; i += 2)
            span(c, row, xs[i], xs[i + 1], col);
    }
}

static double device_x(const render_canvas *c, double x) { return c->ox + x * c->scale; }
static double device_y(const render_canvas *c, double y) { return c->oy + (c->frame_h - y) * c->scale; }

void render_frame_to_device(const render_canvas *c, double x, double y, double *dx, double *dy)
{
    *dx = device_x(c, x);
    *dy = device_y(c, y);
}

/* Frame pixel columns [xa, xb] of device row `row`: the device pixels whose
 * centres fall in them. */
static void frame_span(render_canvas *c, int row, double xa, double xb, render_colour col)
{
    span(c, row, device_x(c, xa), device_x(c, xb + 1), col);
}

/* The device rows whose centres may fall in frame pixel rows [y0, y1]. */
static void frame_rows(const render_canvas *c, double y0, double y1, int *first, int *end)
{
    int lo = c->clip.y, hi = c->clip.y + c->clip.h;   /* a row more each way: callers check frame_row */
    *first = clamp_int(floor(device_y(c, y1 + 1) - 0.5), lo, hi);
    *end = clamp_int(floor(device_y(c, y0) - 0.5) + 1, lo, hi);
    if (*first < lo)
        *first = lo;
    if (*end > hi)
        *end = hi;
}

/* The frame pixel row a device row's centre falls in. */
static double frame_row(const render_canvas *c, int row)
{
    return floor(c->frame_h - (row + 0.5 - c->oy) / c->scale);
}

void render_polygon(render_canvas *c, const double *pts, int n, render_colour col)
{
    if (n < 3 || n > MAX_POINTS || !(c->scale > 0))
        return;
    double X[MAX_POINTS], Y[MAX_POINTS], ymin = 0, ymax = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(pts[2 * i]) || !isfinite(pts[2 * i + 1]))
            return;
        X[i] = floor(pts[2 * i]);
        Y[i] = floor(pts[2 * i + 1]);
        ymin = i == 0 || Y[i] < ymin ? Y[i] : ymin;
        ymax = i == 0 || Y[i] > ymax ? Y[i] : ymax;
    }
    int first, end;
    frame_rows(c, ymin, ymax, &first, &end);
    for (int row = first; row < end; row++) {
        double y = frame_row(c, row), xs[MAX_POINTS];
        if (y < ymin || y > ymax)
            continue;
        /* Each edge from its lower end, up to but not through its upper
         * one, except on the top row: every row meets an even number. */
        int k = 0;
        for (int i = 0, j = n - 1; i < n; j = i++) {
            int lo = Y[i] < Y[j] ? i : j, up = lo == i ? j : i;
            if (Y[lo] == Y[up])
                continue;
            if ((y >= Y[lo] && y < Y[up]) || (y == ymax && y > Y[lo] && y <= Y[up]))
                xs[k++] = X[lo] + (y - Y[lo]) * (X[up] - X[lo]) / (Y[up] - Y[lo]);
        }
        for (int i = 1; i < k; i++)
            for (int j = i; j > 0 && xs[j - 1] > xs[j]; j--) {
                double t = xs[j];
                xs[j] = xs[j - 1];
                xs[j - 1] = t;
            }
        for (int i = 0; i + 1 < k; i += 2) {
            double xa = floor(xs[i] + 0.5), xb = ceil(xs[i + 1] - 0.5);   /* to the nearest pixels */
            if (xa <= xb)
                frame_span(c, row, xa, xb, col);
        }
    }
}

void render_disc(render_canvas *c, double x, double y, double r, render_colour col)
{
    if (!(fabs(x) < 1e9 && fabs(y) < 1e9 && r >= 0 && r < 1e9) || !(c->scale > 0))
        return;
    double cx = floor(x), cy = floor(y), reach = r + 0.5;
    int first, end;
    frame_rows(c, cy - floor(reach), cy + floor(reach), &first, &end);
    for (int row = first; row < end; row++) {
        double d = frame_row(c, row) - cy;
        if (d * d > reach * reach)
            continue;
        double w = floor(sqrt(reach * reach - d * d));
        frame_span(c, row, cx - w, cx + w, col);
    }
}

void render_line(render_canvas *c, double x0, double y0, double x1, double y1, render_colour col)
{
    if (!isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1))
        return;
    /* Between the centres of the end pixels, one frame pixel wide (never
     * thinner than a device pixel), the end pixels included. */
    double X0 = device_x(c, floor(x0) + 0.5), Y0 = device_y(c, floor(y0) + 0.5);
    double X1 = device_x(c, floor(x1) + 0.5), Y1 = device_y(c, floor(y1) + 0.5);
    double w = c->scale > 1 ? c->scale : 1;
    double dx = X1 - X0, dy = Y1 - Y0, len = sqrt(dx * dx + dy * dy);
    double tx = 1, ty = 0;
    if (len > 0 && isfinite(len)) {
        tx = dx / len;
        ty = dy / len;
    }
    double hx = tx * w / 2, hy = ty * w / 2, nx = -ty * w / 2, ny = tx * w / 2;
    double X[4] = {X0 - hx + nx, X1 + hx + nx, X1 + hx - nx, X0 - hx - nx};
    double Y[4] = {Y0 - hy + ny, Y1 + hy + ny, Y1 + hy - ny, Y0 - hy - ny};
    device_polygon(c, X, Y, 4, col);
}

void render_box(render_canvas *c, double x0, double y0, double x1, double y1, render_colour col)
{
    double X[4] = {device_x(c, x0), device_x(c, x0), device_x(c, x1), device_x(c, x1)};
    double Y[4] = {device_y(c, y0), device_y(c, y1), device_y(c, y1), device_y(c, y0)};
    device_polygon(c, X, Y, 4, col);
}
