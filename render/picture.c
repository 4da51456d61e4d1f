/* The evaluator of draw programs: an environment's draw block (docs/dsl.md,
 * "Pictures"), which the parser lowered to roots of its program
 * (cs_program.draw, jit/parse_draw.c), drawn for one environment at a time.
 * The interpreter evaluates the roots over the environment's state and
 * params (cs_interp_roots, planned once), and each item becomes canvas
 * calls. Nothing here knows an environment by name.
 *
 * Values are checked here, not trusted: a shape whose colour is not a
 * colour (NaN, negative, past 0xffffff) is not drawn, nor one whose
 * position or size is not finite; the canvas clamps and clips what lies
 * far off the frame; a text's size and place are bounded before any
 * conversion to int. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env_lanes.h"
#include "render.h"

#define TEXT_SIZE_MAX 256          /* device pixels: a bigger text is not drawn */
#define TEXT_BYTES 1024            /* a text with its numbers written out */

struct render_picture {
    const cs_program *p;
    cs_interp_roots *roots;
    double *values;                /* [p->n_draw]: the environment being drawn */
    render_font *font;             /* when an item is text */
    cs_env *env;                   /* render_picture_open's */
    cs_lanes lanes;                /* ... and its values, from render_picture_read */
    bool have_lanes;
};

void render_picture_free(render_picture *pic)
{
    if (!pic)
        return;
    cs_interp_roots_free(pic->roots);
    render_font_close(pic->font);
    free(pic->values);
    free(pic);
}

cs_status render_picture_new(const cs_program *p, render_picture **out, char *err, size_t err_size)
{
    *out = NULL;
    if (!p->canvas_width)
        return cs_say(err, err_size, CS_ERR_UNAVAILABLE, "%s has no picture", p->name);
    render_picture *pic = calloc(1, sizeof *pic);
    if (!pic)
        return cs_say(err, err_size, CS_ERR_NOMEM, "out of memory");
    pic->p = p;
    pic->values = calloc(p->n_draw, sizeof *pic->values);
    pic->roots = pic->values ? cs_interp_roots_new(p, p->draw, p->n_draw) : NULL;
    if (!pic->roots) {
        render_picture_free(pic);
        return cs_say(err, err_size, CS_ERR_NOMEM, "out of memory for the picture of %s", p->name);
    }
    for (unsigned k = 0; k < p->n_draw_items; k++)
        if (p->draw_items[k].kind == CS_DRAW_TEXT && !pic->font) {
            cs_status s = render_font_open(NULL, &pic->font, err, err_size);
            if (s != CS_OK) {
                render_picture_free(pic);
                return s;
            }
        }
    *out = pic;
    return CS_OK;
}

void render_picture_size(const render_picture *pic, int *width, int *height, int *fps)
{
    *width = pic->p->canvas_width;
    *height = pic->p->canvas_height;
    *fps = pic->p->fps;
}

/* ---- values ---------------------------------------------------------- */

/* rgb()'s number, 0xRRGGBB; false for anything else. */
static bool colour_of(double v, render_colour *c)
{
    if (!(v >= 0 && v <= 0xffffff))
        return false;
    unsigned u = (unsigned)v;
    *c = (render_colour){(uint8_t)(u >> 16), (uint8_t)(u >> 8), (uint8_t)u, 255};
    return true;
}

/* Frame pixels from world units: the view. */
typedef struct {
    double x_min, y_min, scale;
} view;

static double frame_x(const view *v, double x) { return (x - v->x_min) * v->scale; }
static double frame_y(const view *v, double y) { return (y - v->y_min) * v->scale; }

/* A number as a text shows it: two decimals at most, without trailing
 * zeros ("12", "0.5", "-3.14"); beyond a billion, three digits ("1.5e+12"). */
static int number_text(char *out, size_t size, double v)
{
    if (!isfinite(v))
        return snprintf(out, size, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    if (fabs(v) >= 1e9)
        return snprintf(out, size, "%.3g", v);
    int n = snprintf(out, size, "%.2f", v);
    if (n <= 0 || (size_t)n >= size)
        return n;
    while (n > 0 && out[n - 1] == '0')
        out[--n] = 0;
    if (n > 0 && out[n - 1] == '.')
        out[--n] = 0;
    if (!strcmp(out, "-0"))
        n = snprintf(out, size, "0");
    return n;
}

/* ---- the items ------------------------------------------------------- */

static void corners(render_canvas *c, double x0, double y0, double x1, double y1, render_colour col)
{
    const double pts[8] = {x0, y0, x0, y1, x1, y1, x1, y0};
    render_polygon(c, pts, 4, col);
}

static void draw_rect(render_canvas *c, const view *v, const double *a, render_colour col)
{
    corners(c, frame_x(v, a[0]), frame_y(v, a[1]), frame_x(v, a[2]), frame_y(v, a[3]), col);
}

/* Corners around (x, y), rotated by the angle counterclockwise (y is up). */
static void draw_polygon(render_canvas *c, const view *v, const double *a, unsigned n_corners, render_colour col)
{
    double x = frame_x(v, a[0]), y = frame_y(v, a[1]), co = cos(a[2]), si = sin(a[2]), pts[2 * 16];
    for (unsigned k = 0; k < n_corners && k < 16; k++) {
        double u = a[4 + 2 * k] * v->scale, w = a[5 + 2 * k] * v->scale;
        pts[2 * k] = u * co - w * si + x;
        pts[2 * k + 1] = u * si + w * co + y;
    }
    render_polygon(c, pts, (int)n_corners, col);
}

static void draw_circle(render_canvas *c, const view *v, const double *a, render_colour col)
{
    render_disc(c, frame_x(v, a[0]), frame_y(v, a[1]), a[2] * v->scale, col);
}

static void draw_line(render_canvas *c, const view *v, const double *a, render_colour col)
{
    render_line(c, frame_x(v, a[0]), frame_y(v, a[1]), frame_x(v, a[2]), frame_y(v, a[3]), col);
}

static void draw_curve(render_canvas *c, const view *v, const double *a, unsigned points, render_colour col)
{
    for (unsigned k = 1; k < points; k++) {
        const double *p0 = a + 2 * (k - 1), *p1 = a + 2 * k;
        render_line(c, frame_x(v, p0[0]), frame_y(v, p0[1]), frame_x(v, p1[0]), frame_y(v, p1[1]), col);
    }
}

/* (x, y) is the top left of the line of text; its size is in the frame's
 * pixels, as a line's height. */
static void draw_text(render_picture *pic, render_canvas *c, const view *v, const cs_draw_item *it, const double *a,
                      render_colour col)
{
    double x, y, size = a[2] * c->scale;
    render_frame_to_device(c, frame_x(v, a[0]), frame_y(v, a[1]), &x, &y);
    if (!(size >= 1 && size <= TEXT_SIZE_MAX && fabs(x) < 1e6 && fabs(y) < 1e6))
        return;
    char text[TEXT_BYTES];
    size_t used = 0;
    unsigned number = 0;
    for (const char *s = it->text; *s && used + 1 < sizeof text; s++) {
        if (*s != CS_DRAW_NUMBER) {
            text[used++] = *s;
            continue;
        }
        int n = number_text(text + used, sizeof text - used, a[4 + number++]);
        if (n < 0 || (size_t)n >= sizeof text - used)
            break;
        used += (size_t)n;
    }
    text[used] = 0;
    render_text(c, pic->font, (int)floor(x), (int)floor(y), (int)lround(size), text, col);
}

/* (x, y) is the grid's top left corner; row 0 is the top row. A cell whose
 * value is not a colour is left as it is. */
static void draw_grid(render_canvas *c, const view *v, const cs_draw_item *it, const double *a)
{
    double x = frame_x(v, a[0]), y = frame_y(v, a[1]), w = a[2] * v->scale, h = a[3] * v->scale;
    if (!(isfinite(x) && isfinite(y) && w > 0 && h > 0 && isfinite(w) && isfinite(h)))
        return;
    for (unsigned i = 0; i < it->rows; i++)
        for (unsigned j = 0; j < it->columns; j++) {
            render_colour col;
            if (colour_of(a[4 + i * it->columns + j], &col))
                render_box(c, x + j * w, y - (i + 1) * h, x + (j + 1) * w, y - i * h, col);
        }
}

/* Each kind's colour: where it sits among its values. */
static unsigned colour_index(const cs_draw_item *it)
{
    switch (it->kind) {
    case CS_DRAW_CURVE: return 0;
    case CS_DRAW_RECT: case CS_DRAW_LINE: return 4;
    default: return 3;   /* polygon, circle, text; a grid's cells have their own */
    }
}

static void draw_item(render_picture *pic, render_canvas *c, const view *v, const cs_draw_item *it)
{
    for (unsigned i = 0; i < it->count; i++) {
        const double *a = pic->values + it->first + (size_t)i * it->per_shape;
        render_colour col;
        if (it->kind == CS_DRAW_GRID) {
            draw_grid(c, v, it, a);
            continue;
        }
        if (!colour_of(a[colour_index(it)], &col))
            continue;
        switch (it->kind) {
        case CS_DRAW_RECT: draw_rect(c, v, a, col); break;
        case CS_DRAW_POLYGON: draw_polygon(c, v, a, (it->per_shape - 4) / 2, col); break;
        case CS_DRAW_CIRCLE: draw_circle(c, v, a, col); break;
        case CS_DRAW_LINE: draw_line(c, v, a, col); break;
        case CS_DRAW_CURVE: draw_curve(c, v, a + 1, (it->per_shape - 1) / 2, col); break;
        case CS_DRAW_TEXT: draw_text(pic, c, v, it, a, col); break;
        default: break;
        }
    }
}

void render_picture_draw(render_picture *pic, render_canvas *c, const cs_lanes *l, int64_t lane)
{
    const cs_program *p = pic->p;
    double *val = pic->values;
    cs_interp_roots_eval(pic->roots, l, lane, val);
    render_colour background;
    if (!colour_of(val[CS_DRAW_BACKGROUND], &background))
        background = (render_colour){0, 0, 0, 255};
    render_fill(c, background);
    view v = {val[CS_DRAW_X_MIN], val[CS_DRAW_Y_MIN], p->canvas_width / (val[CS_DRAW_X_MAX] - val[CS_DRAW_X_MIN])};
    if (!(v.scale > 0 && isfinite(v.scale) && isfinite(v.x_min) && isfinite(v.y_min)))
        return;   /* no world to draw */
    for (unsigned k = 0; k < p->n_draw_items; k++)
        draw_item(pic, c, &v, &p->draw_items[k]);
}

/* ---- an environment's picture ---------------------------------------- */

cs_status render_picture_open(cs_env *env, render_picture **out, char *err, size_t err_size)
{
    *out = NULL;
    const cs_program *p = cs_env_program(env);
    if (!p)
        return cs_say(err, err_size, CS_ERR_STATE, "%s", env ? cs_env_error(env) : "env is NULL");
    if (!p->canvas_width)
        return cs_say(err, err_size, CS_ERR_UNAVAILABLE,
                      "environment '%s' has no picture: add a draw block to its .env file, such as "
                      "draw { canvas(600, 400); view(-3, 3, -2); circle(%s, 0, 0.2, rgb(0, 0, 0)) } "
                      "(docs/dsl.md, \"Pictures\")",
                      p->name, p->n_carried ? p->carried[0].name : "0");
    cs_status s = render_picture_new(p, out, err, err_size);
    if (s == CS_OK)
        (*out)->env = env;
    return s;
}

cs_status render_picture_read(render_picture *pic, char *err, size_t err_size)
{
    pic->have_lanes = false;
    cs_status s = cs_env_host_lanes(pic->env, &pic->lanes);
    if (s != CS_OK)
        return cs_say(err, err_size, s, "%s", cs_env_error(pic->env));
    pic->have_lanes = true;
    return CS_OK;
}

void render_picture_draw_env(render_picture *pic, render_canvas *c, int64_t env)
{
    if (pic->have_lanes)
        render_picture_draw(pic, c, &pic->lanes, env);
}
