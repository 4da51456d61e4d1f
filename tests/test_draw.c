/* The draw block (jit/parse_draw.c, docs/dsl.md "Pictures"): what it lowers
 * to, that the passes keep it, every error class with its exact position,
 * and its limits. The pictures themselves are tests/test_render.c's. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"

static char err[1024];

/* A small environment with `draw` after it. */
static char *with_draw(const char *draw)
{
    static const char *const head = "env ball \"Ball-v0\"\n"
                                    "param size = 3\n"
                                    "const half = size / 2\n"
                                    "fn point(t) = stack(t, t * t)\n"
                                    "state x, v\n"
                                    "action discrete 2\n"
                                    "observe x, v\n"
                                    "reset { x = 1; v = 0 }\n"
                                    "step { x' = x + v; v' = v; reward = 1; terminated = false }\n";
    size_t n = strlen(head) + strlen(draw) + 2;
    char *src = malloc(n);
    cr_assert(src);
    snprintf(src, n, "%s%s\n", head, draw);
    return src;
}

static cs_program *draw_ok(const char *draw, cs_type real)
{
    char *src = with_draw(draw);
    cs_program *p = NULL;
    int rc = cs_parse(src, strlen(src), "t.env", real, NULL, 0, &p, err, sizeof err);
    free(src);
    cr_assert_eq(rc, 0, "expected to parse, got: %s", err);
    return p;
}

/* The source's first lines are 9; the draw block starts on line 10. */
static void draw_fails(const char *draw, const char *message)
{
    char *src = with_draw(draw);
    cs_program *p = (cs_program *)1;
    int rc = cs_parse(src, strlen(src), "t.env", CS_F64, NULL, 0, &p, err, sizeof err);
    free(src);
    cr_assert(rc == -1 && !p, "expected the error \"%s\", but it parsed", message);
    cr_assert_str_eq(err, message);
}

/* Every draw root of lane 0 with x = 2, v = -1. */
static double *evaluate(const cs_program *p)
{
    double x = 2, v = -1;
    float xf = 2, vf = -1;
    void *carried[2] = {p->real == CS_F32 ? (void *)&xf : (void *)&x, p->real == CS_F32 ? (void *)&vf : (void *)&v};
    cs_lanes l = {.begin = 0, .end = 1, .stride = 1, .carried = carried};
    cs_interp_roots *r = cs_interp_roots_new(p, p->draw, p->n_draw);
    cr_assert(r);
    double *out = calloc(p->n_draw, sizeof *out);
    cr_assert(out);
    cs_interp_roots_eval(r, &l, 0, out);
    cs_interp_roots_free(r);
    return out;
}

/* ---- what it lowers to ------------------------------------------------ */

Test(draw, settings_shapes_and_their_values)
{
    cs_program *p = draw_ok("draw {\n"
                            "    canvas(320, 200)\n"
                            "    fps(25)\n"
                            "    background(rgb(1, 2, 3))\n"
                            "    view(-4, 4, -1)\n"
                            "    c = x > 0 ? rgb(255, 0, 0) : rgb(0, 0, 255)\n"
                            "    rect(x - half, 0, x + half, 1, c)\n"
                            "    circle(x, v, 0.5, rgb(300, -5, 127.9))\n"
                            "    line(0, 0, x, v, c)\n"
                            "    polygon(x, 1, v, c, 0, 0, 1, 0, 0, 1)\n"
                            "    text(-4, 1, 12, c, \"x \", x, \" v \", v)\n"
                            "}",
                            CS_F64);
    cr_assert_eq(p->canvas_width, 320);
    cr_assert_eq(p->canvas_height, 200);
    cr_assert_eq(p->fps, 25);
    cr_assert_eq(p->n_draw_items, 5);
    const cs_draw_kind kinds[5] = {CS_DRAW_RECT, CS_DRAW_CIRCLE, CS_DRAW_LINE, CS_DRAW_POLYGON, CS_DRAW_TEXT};
    const unsigned per_shape[5] = {5, 4, 5, 10, 6};
    for (unsigned k = 0; k < 5; k++) {
        cr_assert_eq(p->draw_items[k].kind, kinds[k], "item %u", k);
        cr_assert_eq(p->draw_items[k].count, 1);
        cr_assert_eq(p->draw_items[k].per_shape, per_shape[k], "item %u", k);
    }
    cr_assert_str_eq(p->draw_items[4].text, "x \x01 v \x01");
    double *val = evaluate(p);
    cr_assert_eq(val[CS_DRAW_BACKGROUND], 0x010203);
    cr_assert_eq(val[CS_DRAW_X_MIN], -4);
    cr_assert_eq(val[CS_DRAW_X_MAX], 4);
    cr_assert_eq(val[CS_DRAW_Y_MIN], -1);
    const double *rect = val + p->draw_items[0].first, *circle = val + p->draw_items[1].first;
    cr_assert(rect[0] == 0.5 && rect[1] == 0 && rect[2] == 3.5 && rect[3] == 1 && rect[4] == 0xff0000);
    cr_assert(circle[0] == 2 && circle[1] == -1 && circle[2] == 0.5);
    cr_assert_eq(circle[3], 0xff007f, "each channel clipped to 0..255 and floored");
    const double *text = val + p->draw_items[4].first;
    cr_assert(text[4] == 2 && text[5] == -1);
    free(val);
    cs_program_free(p);
}

Test(draw, defaults_a_white_background_and_the_canvas_as_the_world)
{
    cs_program *p = draw_ok("draw { canvas(30, 20) }", CS_F32);
    cr_assert_eq(p->fps, 30);
    cr_assert_eq(p->n_draw_items, 0);
    double *val = evaluate(p);
    cr_assert_eq(val[CS_DRAW_BACKGROUND], 0xffffff);
    cr_assert(val[CS_DRAW_X_MIN] == 0 && val[CS_DRAW_X_MAX] == 30 && val[CS_DRAW_Y_MIN] == 0);
    free(val);
    cs_program_free(p);
}

/* A vector argument draws one shape per component; scalars are shared. */
Test(draw, vectors_draw_one_shape_per_component)
{
    cs_program *p = draw_ok("draw {\n    canvas(30, 20)\n    circle(stack(1, 2, 3) * x, v, 1, rgb(0, 0, 9))\n}",
                            CS_F64);
    const cs_draw_item *it = &p->draw_items[0];
    cr_assert_eq(it->count, 3);
    double *val = evaluate(p);
    for (unsigned i = 0; i < 3; i++) {
        const double *c = val + it->first + i * it->per_shape;
        cr_assert(c[0] == 2.0 * (i + 1) && c[1] == -1 && c[2] == 1 && c[3] == 9, "shape %u", i);
    }
    free(val);
    cs_program_free(p);
}

/* curve(f, from, to, n, colour): n points f(t), t spaced as numpy.linspace. */
Test(draw, a_curve_samples_its_function)
{
    cs_program *p = draw_ok("draw {\n    canvas(30, 20)\n    curve(point, 0, x, 5, 7)\n}", CS_F64);
    const cs_draw_item *it = &p->draw_items[0];
    cr_assert_eq(it->kind, CS_DRAW_CURVE);
    cr_assert_eq(it->per_shape, 1 + 2 * 5);
    double *val = evaluate(p);
    const double *a = val + it->first;
    cr_assert_eq(a[0], 7);
    for (unsigned i = 0; i < 5; i++) {
        double t = i == 4 ? 2.0 : i * (2.0 / 4);
        cr_assert(a[1 + 2 * i] == t && a[2 + 2 * i] == t * t, "point %u: (%g, %g)", i, a[1 + 2 * i], a[2 + 2 * i]);
    }
    free(val);
    cs_program_free(p);
}

/* grid(x, y, w, h, colours): a cell per element, row after row, from an
 * array of one axis (a row) or two; its ints become reals. */
Test(draw, a_grid_takes_its_cells_from_an_array)
{
    cs_program *p = draw_ok("draw {\n"
                            "    canvas(30, 20)\n"
                            "    grid(0, 20, 2, 3, [[1, 2, 3], [4, 5, 6]] * x)\n"
                            "    grid(x, 5, 1, 1, stack(7, 8))\n"
                            "}",
                            CS_F64);
    cr_assert_eq(p->n_draw_items, 2);
    const cs_draw_item *a = &p->draw_items[0], *b = &p->draw_items[1];
    cr_assert(a->kind == CS_DRAW_GRID && a->count == 1 && a->rows == 2 && a->columns == 3 && a->per_shape == 10);
    cr_assert(b->kind == CS_DRAW_GRID && b->rows == 1 && b->columns == 2 && b->per_shape == 6);
    double *val = evaluate(p);
    const double want[10] = {0, 20, 2, 3, 2, 4, 6, 8, 10, 12};
    for (unsigned k = 0; k < 10; k++)
        cr_assert_eq(val[a->first + k], want[k], "value %u: %g", k, val[a->first + k]);
    cr_assert(val[b->first] == 2 && val[b->first + 4] == 7 && val[b->first + 5] == 8);
    free(val);
    cs_program_free(p);
}

/* The draw roots are roots: fold, concat and dce keep them, and they
 * evaluate to the same values after the passes as before. */
Test(draw, the_passes_keep_the_picture)
{
    const char *draw = "draw {\n"
                       "    canvas(30, 20)\n"
                       "    w = stack(1, 2) * half\n"
                       "    circle(w + x, sin(v) * 2, half, rgb(0, 128, 255))\n"
                       "    curve(point, -half, half, 9, rgb(9, 9, 9))\n"
                       "}";
    cs_program *p = draw_ok(draw, CS_F64);
    double *before = evaluate(p);
    cr_assert_eq(cs_optimize(p, CS_FUSION_FULL, NULL, err, sizeof err), 0, "%s", err);
    for (unsigned k = 0; k < p->n_draw; k++)
        cr_assert_neq(p->draw[k], 0, "draw root %u", k);
    double *after = evaluate(p);
    for (unsigned k = 0; k < p->n_draw; k++)
        cr_assert(before[k] == after[k], "draw root %u: %g before the passes, %g after", k, before[k], after[k]);
    cs_text t = {0};
    cr_assert_eq(cs_dump_graph(p, false, &t), 0);
    cr_assert(strstr(t.data, "draw[4] = n"), "%s", t.data);
    cs_text_free(&t);
    free(before);
    free(after);
    cs_program_free(p);
}

/* A param overridden with a value is that value in the picture; one drawn
 * per environment is a PARAM leaf the picture reads per lane. */
Test(draw, overridden_params_reach_the_picture)
{
    char *src = with_draw("draw {\n    canvas(30, 20)\n    circle(0, 0, size, 0)\n}");
    cs_param_override ov;
    char msg[256];
    cr_assert_eq(cs_parse_override("size=7.5", &ov, msg, sizeof msg), 0, "%s", msg);
    cs_program *p;
    cr_assert_eq(cs_parse(src, strlen(src), "t.env", CS_F64, &ov, 1, &p, err, sizeof err), 0, "%s", err);
    double *val = evaluate(p);
    cr_assert_eq(val[p->draw_items[0].first + 2], 7.5);
    free(val);
    cs_program_free(p);
    cr_assert_eq(cs_parse_override("size=1:2", &ov, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(cs_parse(src, strlen(src), "t.env", CS_F64, &ov, 1, &p, err, sizeof err), 0, "%s", err);
    const cs_node_data *d = cs_graph_node(p->graph, p->draw[p->draw_items[0].first + 2]);
    cr_assert_eq(d->op, CS_OP_PARAM);
    cs_program_free(p);
    free(src);
}

/* No draw block: no picture, and the program is as before. */
Test(draw, a_source_without_one_has_no_picture)
{
    char *src = with_draw("");
    cs_program *p;
    cr_assert_eq(cs_parse(src, strlen(src), "t.env", CS_F64, NULL, 0, &p, err, sizeof err), 0, "%s", err);
    cr_assert(p->canvas_width == 0 && p->n_draw == 0 && p->n_draw_items == 0);
    cs_program_free(p);
    free(src);
}

/* ---- errors, each at its place ------------------------------------------ */

Test(draw, errors_name_their_place)
{
    draw_fails("draw {\n    circle(1, 2, 3, 4)\n}", "t.env:10:1: the draw block sets no canvas: add canvas(WIDTH, HEIGHT), in pixels");
    draw_fails("draw {\n    canvas(600, 400)\n    canvas(1, 1)\n}",
               "t.env:12:5: 'canvas' is set twice in the draw block (first at 11:5)");
    draw_fails("draw {\n    canvas(0, 400)\n}", "t.env:11:12: the canvas's width must be an integer from 1 to 4096, got 0");
    draw_fails("draw {\n    canvas(600, 4097)\n}",
               "t.env:11:17: the canvas's height must be an integer from 1 to 4096, got 4097");
    draw_fails("draw {\n    canvas(x, 4)\n}",
               "t.env:11:12: the canvas's width must be a compile-time number: not a compile-time number (only "
               "numbers, pi, params, consts, + - * / // % and math functions can be used here)");
    draw_fails("draw {\n    canvas(6, 4)\n    fps(0.5)\n}", "t.env:12:9: fps must be an integer from 1 to 1000, got 0.5");
    draw_fails("draw {\n    canvas(6, 4)\n    view(1, 1, 0)\n}", "t.env:12:10: view's x_min must be below its x_max, got 1 and 1");
    draw_fails("draw {\n    canvas(6, 4)\n    circle(1, 2, 3)\n}",
               "t.env:12:5: 'circle' takes 4 arguments (x, y, radius, colour), got 3");
    draw_fails("draw {\n    canvas(6, 4)\n    rect(x, x > 0, 1, 2, 3)\n}",
               "t.env:12:13: the y0 of 'rect' must be a number, got bool");
    draw_fails("draw {\n    canvas(6, 4)\n    rect(1, 2, 3, 4, \"red\")\n}",
               "t.env:12:22: 'rect' takes numbers, not a string (strings are for text)");
    draw_fails("draw {\n    canvas(6, 4)\n    polygon(0, 0, 0, 0, 1, 2, 3, 4)\n}",
               "t.env:12:5: 'polygon' takes x, y, angle, colour and then 3 to 16 corners (x1, y1, x2, y2, ...), got 8 "
               "arguments");
    draw_fails("draw {\n    canvas(6, 4)\n    circle(stack(1, 2), stack(1, 2, 3), 1, 0)\n}",
               "t.env:12:25: 'circle' draws one shape per vector component, and its vectors have different lengths "
               "(2 and 3)");
    draw_fails("draw {\n    canvas(6, 4)\n    text(1, 2, 3, 4)\n}",
               "t.env:12:5: 'text' takes x, y, size, colour and then what to show (strings and numbers), got 4 "
               "arguments");
    draw_fails("draw {\n    canvas(6, 4)\n    text(1, \"a\", 3, 4, \"b\")\n}",
               "t.env:12:13: the y of 'text' must be a number, got a string");
    draw_fails("draw {\n    canvas(6, 4)\n    curve(x, 0, 1, 5, 0)\n}",
               "t.env:12:11: 'curve' takes a function of one argument first (fn f(t) = stack(x, y)), got 'x'");
    draw_fails("draw {\n    canvas(6, 4)\n    curve(point, 0, 1, 1, 0)\n}",
               "t.env:12:24: the points of a curve must be an integer from 2 to 4096, got 1");
    draw_fails("draw {\n    canvas(6, 4)\n    curve(point, stack(0, 1), 1, 3, 0)\n}",
               "t.env:12:18: the from of 'curve' must be one number, got int[2]");
    draw_fails("draw {\n    canvas(6, 4)\n    grid(0, 0, 1, 1, x)\n}",
               "t.env:12:22: the colours of 'grid' must be an array of numbers of one or two axes, got real");
    draw_fails("draw {\n    canvas(6, 4)\n    grid(0, 0, 1, 1, stack(1, 2) > x)\n}",
               "t.env:12:22: the colours of 'grid' must be an array of numbers of one or two axes, got bool[2]");
    draw_fails("draw {\n    canvas(6, 4)\n    grid(0, 0, 1, stack(1, 2))\n}",
               "t.env:12:5: 'grid' takes 5 arguments (x, y, cell width, cell height, colours), got 4");
    draw_fails("draw {\n    canvas(6, 4)\n    circle([[1, 2], [3, 4]], 0, 1, 0)\n}",
               "t.env:12:12: the x of 'circle' must be a number or a vector (one shape per element), got "
               "int[2][2]");
    draw_fails("draw {\n    canvas(6, 4)\n    blob(1)\n}",
               "t.env:12:5: 'blob' is not something a draw block draws or sets (canvas, fps, background, view, rect, "
               "polygon, circle, line, curve, text, grid)");
    /* the block reads states, params, consts and functions, nothing of a step */
    draw_fails("draw {\n    canvas(6, 4)\n    a = action\n}", "t.env:12:9: 'action' can only be read in the step block");
    draw_fails("draw {\n    canvas(6, 4)\n    a = x'\n}", "t.env:12:9: x' can only be read in the step block");
    draw_fails("draw {\n    canvas(6, 4)\n    a = uniform(0, 1)\n}",
               "t.env:12:9: uniform() can only be used in the reset and step blocks");
    draw_fails("draw {\n    canvas(6, 4)\n    x = 1\n}", "t.env:12:5: 'x' is already defined as a state at 5:7");
    draw_fails("draw {\n    canvas(6, 4)\n    return 1\n}", "t.env:12:5: 'return' is only allowed in a function");
    draw_fails("draw {\n    canvas(6, 4)\n", "t.env:13:1: expected '}' to close the block opened at 10:6, got end of input");
    draw_fails("draw { canvas(6, 4) }\ndraw { canvas(6, 4) }", "t.env:11:1: 'draw' is declared twice (first at 10:1)");
}

/* A type error inside rgb() is reported where the block defines it, as a
 * function's body errors are reported at the body. */
Test(draw, rgb_is_a_function_of_the_block)
{
    draw_fails("draw {\n    canvas(6, 4)\n    c = rgb(x > 0, 0, 0)\n}", "t.env:10:6: 'clip' needs numbers, got bool");
    draw_fails("draw {\n    canvas(6, 4)\n    rgb = 1\n}", "t.env:12:5: 'rgb' is already defined as a function at 10:6");
    /* a source's own rgb is the one the block calls */
    cs_program *p = draw_ok("fn rgb(r, g, b) = 42\ndraw {\n    canvas(6, 4)\n    background(rgb(1, 2, 3))\n}", CS_F64);
    double *val = evaluate(p);
    cr_assert_eq(val[CS_DRAW_BACKGROUND], 42);
    free(val);
    cs_program_free(p);
}

Test(draw, state_comes_first)
{
    static const char src[] = "env e \"E-v0\"\ndraw { canvas(6, 4) }\n";
    cs_program *p;
    cr_assert_eq(cs_parse(src, sizeof src - 1, "t.env", CS_F64, NULL, 0, &p, err, sizeof err), -1);
    cr_assert_str_eq(err, "t.env:2:1: declare 'state' before 'draw'");
}

/* ---- limits --------------------------------------------------------------- */

/* "stack(0, 0, ..., 0)" of n zeros. */
static char *zeros(unsigned n)
{
    char *s = malloc(16 + 3 * (size_t)n);
    cr_assert(s);
    size_t used = (size_t)sprintf(s, "stack(0");
    for (unsigned k = 1; k < n; k++)
        used += (size_t)sprintf(s + used, ", 0");
    sprintf(s + used, ")");
    return s;
}

Test(draw, limits_and_their_errors)
{
    /* shapes: 4000 circles (an array holds at most 4096) 17 times is past 65536 */
    char *v = zeros(4000), *text = malloc(strlen(v) + 17 * 32 + 200);
    cr_assert(text);
    int used = sprintf(text, "draw {\n    canvas(6, 4)\n    c = %s\n", v);
    for (int k = 0; k < 17; k++)
        used += sprintf(text + used, "    circle(c, 0, 1, 0)\n");
    sprintf(text + used, "}");
    draw_fails(text, "t.env:29:5: too many shapes in the draw block (at most 65536)");
    free(v);
    /* a text's strings */
    char long_string[300];
    memset(long_string, 'a', sizeof long_string - 1);
    long_string[sizeof long_string - 1] = 0;
    sprintf(text, "draw {\n    canvas(6, 4)\n    text(0, 0, 9, 0, \"%s\")\n}", long_string);
    draw_fails(text, "t.env:12:22: the strings of a text are longer than 255 bytes");
    /* the numbers it shows */
    strcpy(text, "draw {\n    canvas(6, 4)\n    text(0, 0, 9, 0");
    for (int k = 0; k < 17; k++)
        strcat(text, ", x");
    strcat(text, ")\n}");
    draw_fails(text, "t.env:12:70: a text shows at most 16 numbers");
    /* corners */
    strcpy(text, "draw {\n    canvas(6, 4)\n    polygon(0, 0, 0, 0");
    for (int k = 0; k < 17; k++)
        strcat(text, ", 1, 2");
    strcat(text, ")\n}");
    draw_fails(text, "t.env:12:5: 'polygon' takes x, y, angle, colour and then 3 to 16 corners (x1, y1, x2, y2, ...), "
                     "got 38 arguments");
    strcpy(text, "draw {\n    canvas(6, 4)\n    polygon(0, 0, 0, 0");
    for (int k = 0; k < 17; k++)
        strcat(text, ", 1");
    strcat(text, ")\n}");   /* an odd count: no whole corners */
    draw_fails(text, "t.env:12:5: 'polygon' takes x, y, angle, colour and then 3 to 16 corners (x1, y1, x2, y2, ...), "
                     "got 21 arguments");
    draw_fails("draw {\n    canvas(6, 4)\n    curve(point, 0, 1, 4097, 0)\n}",
               "t.env:12:24: the points of a curve must be an integer from 2 to 4096, got 4097");
    /* arguments of a word */
    strcpy(text, "draw {\n    canvas(6, 4)\n    text(0, 0, 9, 0");
    for (int k = 0; k < 70; k++)
        strcat(text, ", \"a\"");
    strcat(text, ")\n}");
    draw_fails(text, "t.env:12:342: too many arguments to 'text' (at most 68)");
    free(text);
}
