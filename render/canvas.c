/* Shapes become horizontal spans of pixels written straight into an RGB
 * buffer (3 bytes a pixel): no SDL, so headless frames need no window
 * library. Rasterizing by hand keeps the pixels exact: no antialiasing, a
 * pixel is in when its centre is (half-open on the right and bottom edges,
 * so shapes that share an edge never overlap); a colour with alpha below 255
 * is blended over what is there. Coordinates that are not finite draw
 * nothing, and huge ones are clamped before any conversion to int. */
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

void render_polygon(render_canvas *c, const double *pts, int n, render_colour col)
{
    if (n < 3 || n > MAX_POINTS)
        return;
    double X[MAX_POINTS], Y[MAX_POINTS];
    for (int i = 0; i < n; i++) {
        X[i] = device_x(c, pts[2 * i]);
        Y[i] = device_y(c, pts[2 * i + 1]);
    }
    device_polygon(c, X, Y, n, col);
}

void render_disc(render_canvas *c, double x, double y, double r, render_colour col)
{
    double X = device_x(c, x), Y = device_y(c, y), R = r * c->scale;
    if (!isfinite(X) || !isfinite(Y) || !(R > 0) || !isfinite(R))
        return;
    int first, end;
    row_range(c, Y - R, Y + R, &first, &end);
    for (int row = first; row < end; row++) {
        double d = row + 0.5 - Y;
        if (d * d >= R * R)
            continue;
        double w = sqrt(R * R - d * d);
        span(c, row, X - w, X + w, col);
    }
}

void render_pixel_disc(render_canvas *c, double px, double py, int radius, render_colour col)
{
    /* Python's int(): toward zero; off-frame positions need no pixel index. */
    if (!(fabs(px) < 1e9) || !(fabs(py) < 1e9))
        return;
    render_disc(c, trunc(px) + 0.5, trunc(py) + 0.5, radius + 0.5, col);
}

void render_line(render_canvas *c, double x0, double y0, double x1, double y1, render_colour col)
{
    double X0 = device_x(c, x0), Y0 = device_y(c, y0), X1 = device_x(c, x1), Y1 = device_y(c, y1);
    double w = c->scale > 1 ? c->scale : 1;
    double dx = X1 - X0, dy = Y1 - Y0, len = sqrt(dx * dx + dy * dy);
    double tx = 1, ty = 0;
    if (len > 0 && isfinite(len)) {
        tx = dx / len;
        ty = dy / len;
    }
    /* Square caps: the end pixels belong to the line, as in pygame. */
    double hx = tx * w / 2, hy = ty * w / 2, nx = -ty * w / 2, ny = tx * w / 2;
    double X[4] = {X0 - hx + nx, X1 + hx + nx, X1 + hx - nx, X0 - hx - nx};
    double Y[4] = {Y0 - hy + ny, Y1 + hy + ny, Y1 + hy - ny, Y0 - hy - ny};
    device_polygon(c, X, Y, 4, col);
}
