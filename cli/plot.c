/* --plot FILE.png: a training run's learning curve, return against
 * env-steps: the training episodes' mean return per iteration or
 * generation (a line), the scored evaluations (discs) and the target (a
 * grey line), drawn with render/'s canvas and text and written by its PNG
 * writer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "render/render.h"

enum { WIDTH = 900, HEIGHT = 540, LEFT = 80, RIGHT = 30, TOP = 50, BOTTOM = 60, TEXT = 15 };

struct cli_curve {
    double *x, *y, *eval;
    size_t n, cap;
};

cli_curve *cli_curve_new(void) { return calloc(1, sizeof(cli_curve)); }

void cli_curve_free(cli_curve *c)
{
    if (!c)
        return;
    free(c->x);
    free(c->y);
    free(c->eval);
    free(c);
}

void cli_curve_add(cli_curve *c, double x, double y, double eval)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 256;
        double *nx = realloc(c->x, cap * sizeof *nx);
        if (nx)
            c->x = nx;
        double *ny = nx ? realloc(c->y, cap * sizeof *ny) : NULL;
        if (ny)
            c->y = ny;
        double *ne = ny ? realloc(c->eval, cap * sizeof *ne) : NULL;
        if (!ne)
            return;   /* the point is lost; the file says what it has */
        c->eval = ne;
        c->cap = cap;
    }
    c->x[c->n] = x;
    c->y[c->n] = y;
    c->eval[c->n] = eval;
    c->n++;
}

/* a round step for about `ticks` ticks over span: 1, 2 or 5 times a power of 10 */
static double tick_step(double span, int ticks)
{
    double raw = span / ticks, p = pow(10, floor(log10(raw)));
    return raw / p < 1.5 ? p : raw / p < 3.5 ? 2 * p : raw / p < 7.5 ? 5 * p : 10 * p;
}

int cli_curve_write(const cli_curve *c, const char *path, const char *title, double target)
{
    double x_max = 1, y_min = INFINITY, y_max = -INFINITY;
    for (size_t k = 0; k < c->n; k++) {
        x_max = c->x[k] > x_max ? c->x[k] : x_max;
        const double v[2] = {c->y[k], c->eval[k]};
        for (int j = 0; j < 2; j++)
            if (isfinite(v[j])) {
                y_min = v[j] < y_min ? v[j] : y_min;
                y_max = v[j] > y_max ? v[j] : y_max;
            }
    }
    if (isfinite(target)) {
        y_min = target < y_min ? target : y_min;
        y_max = target > y_max ? target : y_max;
    }
    if (!(y_max > y_min)) {
        y_min = isfinite(y_min) ? y_min - 1 : 0;
        y_max = y_min + 2;
    }
    double pad = (y_max - y_min) * 0.05;
    y_min -= pad;
    y_max += pad;
    uint8_t *rgb = malloc((size_t)WIDTH * HEIGHT * 3);
    if (!rgb)
        return cli_error(CLI_EXIT_FAIL, "out of memory for the plot");
    render_canvas cv;
    render_canvas_init(&cv, rgb, WIDTH * 3, (render_rect){0, 0, WIDTH, HEIGHT}, 0, 0, 1, HEIGHT);
    render_fill(&cv, (render_colour){255, 255, 255, 255});
    render_font *font = NULL;
    char why[RENDER_ERROR_SIZE];
    render_font_open(NULL, &font, why, sizeof why);   /* without the font: the curve alone */
    const render_colour axis = {60, 60, 60, 255}, grid = {225, 225, 225, 255}, line = {31, 119, 180, 255},
                        dot = {255, 127, 14, 255}, goal = {150, 150, 150, 255};
    double pw = WIDTH - LEFT - RIGHT, ph = HEIGHT - TOP - BOTTOM;
#define PX(v) (LEFT + (v) / x_max * pw)
#define PY(v) (BOTTOM + ((v) - y_min) / (y_max - y_min) * ph)   /* frame coordinates: y up */
    char label[64];
    double ys = tick_step(y_max - y_min, 6);
    for (double v = ceil(y_min / ys) * ys; v <= y_max; v += ys) {
        render_line(&cv, LEFT, PY(v), WIDTH - RIGHT, PY(v), grid);
        snprintf(label, sizeof label, "%g", fabs(v) < ys * 1e-9 ? 0.0 : v);
        render_text(&cv, font, LEFT - 8 - render_text_width(font, label, TEXT), (int)(HEIGHT - PY(v)) - TEXT / 2, TEXT,
                    label, axis);
    }
    double xs = tick_step(x_max, 6);
    for (double v = 0; v <= x_max; v += xs) {
        render_line(&cv, PX(v), BOTTOM, PX(v), HEIGHT - TOP, grid);
        snprintf(label, sizeof label, "%g", v);
        render_text(&cv, font, (int)PX(v) - render_text_width(font, label, TEXT) / 2, HEIGHT - BOTTOM + 6, TEXT, label,
                    axis);
    }
    if (isfinite(target))
        for (double x = 0; x < x_max; x += x_max / 60)   /* dashed */
            render_line(&cv, PX(x), PY(target), PX(x + x_max / 120), PY(target), goal);
    render_line(&cv, LEFT, BOTTOM, WIDTH - RIGHT, BOTTOM, axis);
    render_line(&cv, LEFT, BOTTOM, LEFT, HEIGHT - TOP, axis);
    bool have = false;
    double px = 0, py = 0;
    for (size_t k = 0; k < c->n; k++) {
        if (!isfinite(c->y[k]))
            continue;
        if (have)
            render_line(&cv, px, py, PX(c->x[k]), PY(c->y[k]), line);
        px = PX(c->x[k]);
        py = PY(c->y[k]);
        have = true;
    }
    for (size_t k = 0; k < c->n; k++)
        if (isfinite(c->eval[k]))
            render_disc(&cv, PX(c->x[k]), PY(c->eval[k]), 4, dot);
#undef PX
#undef PY
    render_text(&cv, font, LEFT, 14, TEXT + 3, title, axis);
    render_text(&cv, font, WIDTH / 2 - 30, HEIGHT - 26, TEXT, "env-steps", axis);
    render_text(&cv, font, WIDTH - RIGHT - 330, 14, TEXT, "line: training return   dots: greedy evaluation", axis);
    render_font_close(font);
    cs_status st = render_png_write(path, rgb, WIDTH, HEIGHT, why, sizeof why);
    free(rgb);
    return st == CS_OK ? 0 : cli_lib_error(st, why);
}
