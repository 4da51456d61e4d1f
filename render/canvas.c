/* Shapes become horizontal spans of pixels written straight into an RGB
 * buffer (3 bytes a pixel): no SDL, so headless frames need no window
 * library. Rasterizing by hand keeps the pixels exact: no antialiasing; a
 * colour with alpha below 255 is blended over what is there. Coordinates
 * that are not finite draw nothing, and huge ones are clamped before any
 * conversion to int.
 *
 * The shapes follow pygame's rules, which Gymnasium's pictures are drawn
 * with, so that a classic environment's frame is Gymnasium's pixel for pixel
 * but for its anti-aliased outlines: a point stands for the frame pixel
 * that holds it (its coordinates truncated toward zero, as pygame's int());
 * a polygon covers the pixels of SDL_gfx's scanline fill through those
 * pixels (16.16 fixed-point crossings, spans to the nearest pixel, edges
 * included); a disc the rows of SDL_gfx's midpoint circle; a line the
 * pixels of Bresenham's walk between its end pixels, as pygame.draw.line.
 * Those frame pixels are then sampled at the device's pixel centres, so a
 * scaled frame (the viewer's tiles) shows the same shapes (a line drawn
 * smaller than its pixels keeps a device pixel for each of them). A box is
 * the one exact shape: the device pixels whose centres lie in it,
 * half-open, so that boxes that share an edge tile without overlapping. */
#include <math.h>
#include <stdlib.h>
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
    if (c->scale == 1) {   /* a frame at whole device pixels: no rounding to do */
        double bottom = c->frame_h + c->oy;
        if (fabs(bottom) < 1e9 && bottom == (double)(int64_t)bottom)
            return bottom - 1 - row;
        return floor(bottom - row - 0.5);
    }
    return floor(c->frame_h - (row + 0.5 - c->oy) / c->scale);
}

/* pygame's int(): toward zero. */
static double pixel_of(double v) { return trunc(v); }

/* Corners within this many pixels of the origin are computed as SDL_gfx
 * computes them, in 16.16 fixed point; farther ones (far off any frame)
 * in double. */
#define FIXED_REACH 1048576.0

static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

/* A 16.16 x to its pixel, halves up. */
static double nearest(int64_t v) { return (double)(floor_div(v, 65536) + (v - 65536 * floor_div(v, 65536) >= 32768)); }

/* An edge from its lower end (x0, y0) up to row y1, horizontal ones left
 * out; in fixed point also its rise and run as integers. */
typedef struct {
    double x0, y0, y1, slope;
    int64_t x0_fixed, run, rise;
} edge;

/* Where row y meets the edge, in pixels (fixed: in 1/65536 pixels, the
 * fraction of the rise truncated first, as SDL_gfx's filled polygons
 * compute it; a 32-bit division where it fits, for speed). */
static double crossing(const edge *e, double y, bool fixed)
{
    if (!fixed)
        return e->x0 + (y - e->y0) * e->slope;
    int64_t up = (int64_t)(y - e->y0), part;
    if (e->rise < 32768)
        part = (int32_t)(65536 * up) / (int32_t)e->rise;
    else
        part = 65536 * up / e->rise;
    return (double)(part * e->run + e->x0_fixed);
}

void render_polygon(render_canvas *c, const double *pts, int n, render_colour col)
{
    if (n < 3 || n > MAX_POINTS || !(c->scale > 0))
        return;
    double X[MAX_POINTS], Y[MAX_POINTS], ymin = 0, ymax = 0;
    bool fixed = true;
    for (int i = 0; i < n; i++) {
        if (!isfinite(pts[2 * i]) || !isfinite(pts[2 * i + 1]))
            return;
        X[i] = pixel_of(pts[2 * i]);
        Y[i] = pixel_of(pts[2 * i + 1]);
        fixed &= fabs(X[i]) < FIXED_REACH && fabs(Y[i]) < FIXED_REACH;
        ymin = i == 0 || Y[i] < ymin ? Y[i] : ymin;
        ymax = i == 0 || Y[i] > ymax ? Y[i] : ymax;
    }
    edge edges[MAX_POINTS];
    int n_edges = 0;
    for (int i = 0, j = n - 1; i < n; j = i++) {
        int lo = Y[i] < Y[j] ? i : j, up = lo == i ? j : i;
        if (Y[lo] == Y[up])
            continue;
        edge *e = &edges[n_edges++];
        e->x0 = X[lo];
        e->y0 = Y[lo];
        e->y1 = Y[up];
        e->slope = (X[up] - X[lo]) / (Y[up] - Y[lo]);
        if (fixed) {
            e->x0_fixed = 65536 * (int64_t)X[lo];
            e->run = (int64_t)(X[up] - X[lo]);
            e->rise = (int64_t)(Y[up] - Y[lo]);
        }
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
        for (int i = 0; i < n_edges; i++) {
            const edge *e = &edges[i];
            if ((y >= e->y0 && y < e->y1) || (y == ymax && y > e->y0 && y <= e->y1))
                xs[k++] = crossing(e, y, fixed);
        }
        for (int i = 1; i < k; i++)
            for (int j = i; j > 0 && xs[j - 1] > xs[j]; j--) {
                double t = xs[j];
                xs[j] = xs[j - 1];
                xs[j - 1] = t;
            }
        /* Each pair of crossings to the nearest pixels, both included. */
        for (int i = 0; i + 1 < k; i += 2) {
            double xa = fixed ? nearest((int64_t)xs[i] + 1) : floor(xs[i] + 0.5);
            double xb = fixed ? nearest((int64_t)xs[i + 1] - 1) : ceil(xs[i + 1] - 0.5);
            if (xa <= xb)
                frame_span(c, row, xa, xb, col);
        }
    }
}

/* The half-widths of a disc's rows, dy = 0 .. radius, as SDL_gfx's filled
 * circles (pygame's gfxdraw.filled_circle) have them: the midpoint circle
 * walked from the top, each row of the outline given the span it first
 * meets (so the top and bottom rows are one pixel wide). */
static void disc_rows(int radius, int *half)
{
    int dx = 0, dy = radius, last_dx = -1, last_dy = -1, f = 1 - radius, east = 3, south_east = 5 - 2 * radius;
    do {
        if (dy != last_dy)
            half[dy] = dx;
        if (dx != last_dx && dx != dy)
            half[dx] = dy;
        last_dx = dx;
        last_dy = dy;
        if (f < 0) {
            f += east;
            south_east += 2;
        } else {
            f += south_east;
            south_east += 4;
            dy--;
        }
        east += 2;
        dx++;
    } while (dx <= dy);
}

#define DISC_ROWS_MAX 65536   /* beyond, a disc is the pixels within r + 1/2 of its centre */

void render_disc(render_canvas *c, double x, double y, double r, render_colour col)
{
    if (!(fabs(x) < 1e9 && fabs(y) < 1e9 && r >= 0 && r < 1e9) || !(c->scale > 0))
        return;
    double cx = pixel_of(x), cy = pixel_of(y), radius = trunc(r);
    int small[257], *half = NULL;
    if (radius <= DISC_ROWS_MAX) {
        half = radius < 257 ? small : malloc(((size_t)radius + 1) * sizeof *half);
        if (!half)
            return;
        disc_rows((int)radius, half);
    }
    int first, end;
    frame_rows(c, cy - radius, cy + radius, &first, &end);
    for (int row = first; row < end; row++) {
        double d = fabs(frame_row(c, row) - cy);
        if (d > radius)
            continue;
        double w = half ? half[(int)d] : floor(sqrt((radius + 0.5) * (radius + 0.5) - d * d));
        frame_span(c, row, cx - w, cx + w, col);
    }
    if (half != small)
        free(half);
}

/* The part of a segment within a margin of the frame's visible part (the
 * clip rectangle, in frame coordinates), Liang-Barsky: a segment with an
 * end far away keeps its direction without losing its precision near the
 * frame. false when none of it is there. */
static bool clip_segment(const render_canvas *c, double *x0, double *y0, double *x1, double *y1)
{
    double lo_x = (c->clip.x - c->ox) / c->scale - 2, hi_x = (c->clip.x + c->clip.w - c->ox) / c->scale + 2;
    double lo_y = c->frame_h - (c->clip.y + c->clip.h - c->oy) / c->scale - 2;
    double hi_y = c->frame_h - (c->clip.y - c->oy) / c->scale + 2;
    double dx = *x1 - *x0, dy = *y1 - *y0, t0 = 0, t1 = 1;
    const double p[4] = {-dx, dx, -dy, dy}, q[4] = {*x0 - lo_x, hi_x - *x0, *y0 - lo_y, hi_y - *y0};
    for (int k = 0; k < 4; k++) {
        if (p[k] == 0) {
            if (q[k] < 0)
                return false;
            continue;
        }
        double t = q[k] / p[k];
        if (p[k] < 0 && t > t0)
            t0 = t;
        else if (p[k] > 0 && t < t1)
            t1 = t;
    }
    if (!(t0 <= t1))
        return false;
    double ax = *x0, ay = *y0;
    *x0 = ax + t0 * dx;
    *y0 = ay + t0 * dy;
    *x1 = ax + t1 * dx;
    *y1 = ay + t1 * dy;
    return isfinite(*x0) && isfinite(*y0) && isfinite(*x1) && isfinite(*y1);
}

/* Frame pixels [x0, x1] of row y: the device pixels whose centres fall in
 * them, or, on a frame drawn smaller than its pixels, those their centres
 * fall in (a line never vanishes from a small tile). */
static void frame_run(render_canvas *c, double x0, double x1, double y, render_colour col)
{
    if (c->scale >= 1) {
        int first, end;
        frame_rows(c, y, y, &first, &end);
        for (int row = first; row < end; row++)
            if (frame_row(c, row) == y)
                frame_span(c, row, x0, x1, col);
        return;
    }
    double dy = floor(device_y(c, y + 0.5));
    if (dy < c->clip.y || dy >= c->clip.y + c->clip.h)
        return;
    int lo = c->clip.x, hi = c->clip.x + c->clip.w;
    int a = clamp_int(floor(device_x(c, x0 + 0.5)), lo, hi), b = clamp_int(floor(device_x(c, x1 + 0.5)) + 1, lo, hi);
    a = a < lo ? lo : a;
    b = b > hi ? hi : b;
    if (a < b)
        push(c, (render_rect){a, (int)dy, b - a, 1}, col);
}

/* Lines reaching farther than this past the visible frame are clipped to
 * it first: the walk below stays short whatever the ends. */
#define LINE_REACH 4096.0

void render_line(render_canvas *c, double x0, double y0, double x1, double y1, render_colour col)
{
    if (!isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1) || !(c->scale > 0))
        return;
    double lo_x = (c->clip.x - c->ox) / c->scale - LINE_REACH, hi_x = (c->clip.x + c->clip.w - c->ox) / c->scale + LINE_REACH;
    double lo_y = c->frame_h - (c->clip.y + c->clip.h - c->oy) / c->scale - LINE_REACH;
    double hi_y = c->frame_h - (c->clip.y - c->oy) / c->scale + LINE_REACH;
    bool far = fmin(x0, x1) < lo_x || fmax(x0, x1) > hi_x || fmin(y0, y1) < lo_y || fmax(y0, y1) > hi_y;
    if (far && !clip_segment(c, &x0, &y0, &x1, &y1))
        return;
    /* Bresenham's walk from the first end's pixel to the second's, both
     * included, as pygame's draw.line takes it; each row's run of pixels
     * is drawn at once. */
    int64_t x = (int64_t)pixel_of(x0), y = (int64_t)pixel_of(y0), xe = (int64_t)pixel_of(x1), ye = (int64_t)pixel_of(y1);
    int64_t dx = xe > x ? xe - x : x - xe, dy = ye > y ? ye - y : y - ye, sx = x < xe ? 1 : -1, sy = y < ye ? 1 : -1;
    int64_t err = (dx > dy ? dx : -dy) / 2, run = x;
    for (;;) {
        if (x == xe && y == ye) {
            frame_run(c, (double)(run < x ? run : x), (double)(run < x ? x : run), (double)y, col);
            break;
        }
        int64_t e = err, was_x = x;
        if (e > -dx) {
            err -= dy;
            x += sx;
        }
        if (e < dy) {
            err += dx;
            frame_run(c, (double)(run < was_x ? run : was_x), (double)(run < was_x ? was_x : run), (double)y, col);
            y += sy;
            run = x;
        }
    }
}

void render_box(render_canvas *c, double x0, double y0, double x1, double y1, render_colour col)
{
    double X[4] = {device_x(c, x0), device_x(c, x0), device_x(c, x1), device_x(c, x1)};
    double Y[4] = {device_y(c, y0), device_y(c, y1), device_y(c, y1), device_y(c, y0)};
    device_polygon(c, X, Y, 4, col);
}
