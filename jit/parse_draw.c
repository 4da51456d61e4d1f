/* The draw block (docs/dsl.md, "Pictures"): how an environment looks.
 *
 *   draw {
 *       canvas(600, 400)                  # the frame, in pixels
 *       fps(50)
 *       view(-2.4, 2.4, 0)                # the world's x from -2.4 to 2.4 across, y 0 at the bottom
 *       black = rgb(0, 0, 0)              # locals, as in step
 *       rect(x - 0.2, 0.68, x + 0.2, 0.92, black)
 *   }
 *
 * A statement is a local (`name = E`, parsed, lowered and assigned as the
 * reset's and step's locals are, by parse.c) or a call of one of the
 * block's words: a setting (canvas, fps, background, view) or a shape (rect,
 * polygon, circle, line, curve, text, grid).
 * Every argument is lowered to nodes over CARRIED, PARAM and constants and
 * becomes a draw root of the program (p->draw), so the passes keep it and
 * render/picture.c evaluates it for each drawn environment. A vector
 * argument draws one shape per component, its scalar arguments shared, as
 * arithmetic works per component on vectors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_tree.h"

#define CANVAS_MAX 4096          /* pixels a side */
#define FPS_MAX 1000
#define SHAPES_MAX 65536         /* shapes one draw block draws, every vector component counted */
#define CORNERS_MAX 16           /* a polygon's (render/canvas.c fills at most 16) */
#define POINTS_MAX 4096          /* a curve's samples */
#define TEXT_MAX 255             /* bytes of a text's strings */
#define NUMBERS_MAX 16           /* numbers one text shows */
#define ARGS_MAX (4 + 2 * CORNERS_MAX + 2 * NUMBERS_MAX)
#define VALUES_MAX ((unsigned)1 << 22)   /* draw roots, every shape's attributes counted */

typedef enum { W_CANVAS, W_FPS, W_BACKGROUND, W_VIEW, W_RECT, W_POLYGON, W_CIRCLE, W_LINE, W_CURVE, W_TEXT, W_GRID } word;

static const char *const words[] = {"canvas", "fps", "background", "view", "rect", "polygon",
                                    "circle", "line", "curve", "text", "grid"};

typedef struct {
    expr *e;               /* NULL for a string */
    const char *text;      /* a string's bytes (not NUL-terminated) */
    size_t len, pos;
} argument;

typedef struct {
    section canvas, fps, background, view;
    unsigned shapes;
} draw_block;

static int find_word(const parser *P)
{
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
        if (cs_parse_word_is(P, words[k]))
            return (int)k;
    return -1;
}

/* Is the token after the current one '('? The lexer is a plain value:
 * looking ahead is a copy. */
static bool followed_by_paren(parser *P)
{
    cs_lexer lx = P->lx;
    cs_token tok = P->tok;
    cs_parse_advance(P);
    bool paren = P->tok.kind == CS_TOK_LPAREN;
    P->lx = lx;
    P->tok = tok;
    return paren;
}

/* ---- rgb(r, g, b) ---------------------------------------------------- */

static expr *node_expr(parser *P, expr_kind kind, size_t pos, unsigned n)
{
    expr *e = cs_parse_alloc(P, &P->perm, sizeof *e);
    e->kind = kind;
    e->pos = e->start = pos;
    e->n = n;
    if (n)
        e->kid = cs_parse_alloc(P, &P->perm, n * sizeof *e->kid);
    return e;
}

static expr *number_expr(parser *P, double v, size_t pos)
{
    expr *e = node_expr(P, E_NUM, pos, 0);
    e->num = v;
    return e;
}

static expr *builtin_expr(parser *P, cs_op op, size_t pos, unsigned n)
{
    expr *e = node_expr(P, E_BUILTIN, pos, n);
    e->op = op;
    return e;
}

/* a op b op c ... */
static expr *chain_expr(parser *P, cs_op op, size_t pos, unsigned n, expr *const *kids)
{
    expr *e = node_expr(P, E_CHAIN, pos, n);
    e->ops = cs_parse_alloc(P, &P->perm, n * sizeof *e->ops);
    e->op_pos = cs_parse_alloc(P, &P->perm, n * sizeof *e->op_pos);
    for (unsigned k = 0; k < n; k++) {
        e->kid[k] = kids[k];
        e->ops[k] = op;
        e->op_pos[k] = pos;
    }
    return e;
}

/* floor(clip(argument k, 0, 255)): one channel, a whole number. */
static expr *channel_expr(parser *P, unsigned k, size_t pos)
{
    expr *clip = builtin_expr(P, CS_OP_CLIP, pos, 3);
    clip->kid[0] = node_expr(P, E_SLOT, pos, 0);
    clip->kid[0]->index = k;
    clip->kid[1] = number_expr(P, 0, pos);
    clip->kid[2] = number_expr(P, 255, pos);
    expr *floor_of = builtin_expr(P, CS_OP_FLOOR, pos, 1);
    floor_of->kid[0] = clip;
    return floor_of;
}

/* The block's own function, unless the source defines an rgb of its own:
 * fn rgb(r, g, b) = floor(clip(r, 0, 255)) * 65536 + floor(clip(g, 0, 255)) * 256
 *                   + floor(clip(b, 0, 255)),
 * a colour as one number (exact in f32, below 2^24), so that colours are
 * values like any other: locals, ?:, vectors. */
static void define_rgb(parser *P, size_t pos)
{
    if (cs_parse_lookup(P, "rgb", 3))
        return;
    expr *red[2] = {channel_expr(P, 0, pos), number_expr(P, 65536, pos)};
    expr *green[2] = {channel_expr(P, 1, pos), number_expr(P, 256, pos)};
    expr *sum[3] = {chain_expr(P, CS_OP_MUL, pos, 2, red), chain_expr(P, CS_OP_MUL, pos, 2, green),
                    channel_expr(P, 2, pos)};
    fn_def *f = cs_parse_alloc(P, &P->perm, sizeof *f);
    f->n_params = f->n_slots = 3;
    f->tail = &f->body;
    f->result = chain_expr(P, CS_OP_ADD, pos, 3, sum);
    cs_parse_define(P, "rgb", 3, pos, SYM_FN)->fn = f;
}

/* ---- arguments ------------------------------------------------------- */

/* After '(' up to and including ')': expressions, and strings where
 * `strings` (text); curve's first argument is read by its caller. */
static unsigned parse_arguments(parser *P, const char *what, bool strings, argument *args)
{
    unsigned n = 0;
    if (P->tok.kind == CS_TOK_RPAREN) {
        cs_parse_advance(P);
        return 0;
    }
    for (;;) {
        if (n == ARGS_MAX)
            cs_parse_fail_at(P, P->tok.pos, "too many arguments to '%s' (at most %d)", what, ARGS_MAX);
        argument *a = &args[n++];
        memset(a, 0, sizeof *a);
        a->pos = P->tok.pos;
        if (P->tok.kind == CS_TOK_STRING) {
            if (!strings)
                cs_parse_fail_at(P, a->pos, "'%s' takes numbers, not a string (strings are for text)", what);
            a->text = P->src + P->tok.pos + 1;
            a->len = P->tok.len;
            cs_parse_advance(P);
        } else {
            a->e = cs_parse_expr(P);
        }
        if (P->tok.kind != CS_TOK_COMMA)
            break;
        cs_parse_advance(P);
    }
    if (P->tok.kind != CS_TOK_RPAREN)
        cs_parse_fail_at(P, P->tok.pos, "expected ',' or ')' in the arguments of '%s', got %s", what,
                         cs_parse_describe(P));
    cs_parse_advance(P);
    return n;
}

static void want_arguments(parser *P, const char *what, unsigned got, unsigned want, const char *names, size_t pos)
{
    if (got != want)
        cs_parse_fail_at(P, pos, "'%s' takes %u argument%s (%s), got %u", what, want, want == 1 ? "" : "s", names,
                         got);
}

/* One number, or a vector of numbers (one per shape): its value. */
static val number_argument(parser *P, const argument *a, const char *what, const char *name)
{
    char t[32];
    val v = cs_lower(P, a->e, NULL);
    if (v.type == CS_BOOL)
        cs_parse_fail_at(P, a->e->start, "the %s of '%s' must be a number, got %s", name, what,
                         cs_lower_type_text(v, t));
    if (v.rank > 1)
        cs_parse_fail_at(P, a->e->start, "the %s of '%s' must be a number or a vector (one shape per element), "
                         "got %s", name, what, cs_lower_type_text(v, t));
    return v;
}

/* One number for the whole statement. */
static cs_node scalar_argument(parser *P, const argument *a, const char *what, const char *name)
{
    char t[32];
    val v = number_argument(P, a, what, name);
    if (v.n)
        cs_parse_fail_at(P, a->e->start, "the %s of '%s' must be one number, got %s", name, what,
                         cs_lower_type_text(v, t));
    return cs_lower_to_real(P, v.node, v.type, a->e->start);
}

/* ---- settings -------------------------------------------------------- */

static void setting_once(parser *P, section *s, const char *what, size_t pos)
{
    char at[24];
    if (s->seen)
        cs_parse_fail_at(P, pos, "'%s' is set twice in the draw block (first at %s)", what,
                         cs_parse_where(P, s->pos, at));
    s->seen = true;
    s->pos = pos;
}

static void parse_setting(parser *P, draw_block *D, word w, size_t pos, const argument *a, unsigned n)
{
    cs_program *p = P->p;
    switch (w) {
    case W_CANVAS:
        setting_once(P, &D->canvas, "canvas", pos);
        want_arguments(P, "canvas", n, 2, "width, height in pixels", pos);
        p->canvas_width = (int)cs_lower_constant_int(P, a[0].e, "the canvas's width", 1, CANVAS_MAX);
        p->canvas_height = (int)cs_lower_constant_int(P, a[1].e, "the canvas's height", 1, CANVAS_MAX);
        break;
    case W_FPS:
        setting_once(P, &D->fps, "fps", pos);
        want_arguments(P, "fps", n, 1, "frames per second", pos);
        p->fps = (int)cs_lower_constant_int(P, a[0].e, "fps", 1, FPS_MAX);
        break;
    case W_BACKGROUND:
        setting_once(P, &D->background, "background", pos);
        want_arguments(P, "background", n, 1, "colour", pos);
        p->draw[CS_DRAW_BACKGROUND] = scalar_argument(P, &a[0], "background", "colour");
        break;
    default:   /* W_VIEW */
        setting_once(P, &D->view, "view", pos);
        want_arguments(P, "view", n, 3, "x_min, x_max, y_min", pos);
        p->draw[CS_DRAW_X_MIN] = scalar_argument(P, &a[0], "view", "x_min");
        p->draw[CS_DRAW_X_MAX] = scalar_argument(P, &a[1], "view", "x_max");
        p->draw[CS_DRAW_Y_MIN] = scalar_argument(P, &a[2], "view", "y_min");
        double lo, hi;
        if (cs_lower_ceval(P, a[0].e, &lo) && cs_lower_ceval(P, a[1].e, &hi) && !(lo < hi))
            cs_parse_fail_at(P, a[0].e->start, "view's x_min must be below its x_max, got %g and %g", lo, hi);
        break;
    }
}

/* ---- shapes ---------------------------------------------------------- */

/* Appends the item whose per-shape values are vals[0, per_shape) (a vector
 * value: one shape per component), counting its shapes. item->text, if
 * any, is the parser's: the program gets a copy. */
static void add_shapes(parser *P, draw_block *D, cs_draw_item *item, const val *vals, const size_t *at,
                       const char *what, size_t pos)
{
    cs_program *p = P->p;
    unsigned count = 0;
    for (unsigned k = 0; k < item->per_shape; k++) {
        if (count && vals[k].n && vals[k].n != count)
            cs_parse_fail_at(P, at[k], "'%s' draws one shape per vector component, and its vectors have "
                             "different lengths (%u and %u)", what, count, vals[k].n);
        if (vals[k].n)
            count = vals[k].n;
    }
    count = count ? count : 1;
    if (count > SHAPES_MAX - D->shapes)
        cs_parse_fail_at(P, pos, "too many shapes in the draw block (at most %d)", SHAPES_MAX);
    D->shapes += count;
    if ((size_t)count * item->per_shape > VALUES_MAX - p->n_draw)
        cs_parse_fail_at(P, pos, "the draw block is too large (over %u values)", VALUES_MAX);
    int first = cs_program_add_draw_roots(p, count * item->per_shape);
    if (first < 0)
        cs_parse_fail_at(P, pos, "out of memory");
    item->first = (unsigned)first;
    item->count = count;
    for (unsigned i = 0; i < count; i++)
        for (unsigned k = 0; k < item->per_shape; k++) {
            const val *v = &vals[k];
            cs_node node = v->n ? cs_lower_component(P, *v, i, at[k]) : v->node;
            p->draw[item->first + i * item->per_shape + k] = cs_lower_to_real(P, node, v->type, at[k]);
        }
    if (item->text) {
        size_t n = strlen(item->text);
        char *copy = malloc(n + 1);
        if (!copy)
            cs_parse_fail_at(P, pos, "out of memory");
        memcpy(copy, item->text, n + 1);
        item->text = copy;
    }
    if (cs_program_add_draw_item(p, item) < 0) {
        free(item->text);
        cs_parse_fail_at(P, pos, "out of memory");
    }
}

/* The attribute names of the shapes with a fixed list, for messages. */
static const char *const rect_names[] = {"x0", "y0", "x1", "y1", "colour"};
static const char *const circle_names[] = {"x", "y", "radius", "colour"};
static const char *const polygon_names[] = {"x", "y", "angle", "colour"};
static const char *const text_names[] = {"x", "y", "size", "colour"};

static void parse_fixed(parser *P, draw_block *D, word w, size_t pos, const argument *a, unsigned n)
{
    const char *what = words[w];
    const char *const *names = w == W_CIRCLE ? circle_names : rect_names;
    unsigned want = w == W_CIRCLE ? 4 : 5;
    want_arguments(P, what, n, want, w == W_CIRCLE ? "x, y, radius, colour" : "x0, y0, x1, y1, colour", pos);
    val vals[5];
    size_t at[5];
    for (unsigned k = 0; k < want; k++) {
        vals[k] = number_argument(P, &a[k], what, names[k]);
        at[k] = a[k].e->start;
    }
    cs_draw_item item = {.kind = w == W_RECT ? CS_DRAW_RECT : w == W_LINE ? CS_DRAW_LINE : CS_DRAW_CIRCLE,
                         .per_shape = want};
    add_shapes(P, D, &item, vals, at, what, pos);
}

static void parse_polygon(parser *P, draw_block *D, size_t pos, const argument *a, unsigned n)
{
    if (n < 4 + 2 * 3 || n > 4 + 2 * CORNERS_MAX || n % 2)
        cs_parse_fail_at(P, pos, "'polygon' takes x, y, angle, colour and then 3 to %d corners (x1, y1, x2, y2, "
                         "...), got %u argument%s", CORNERS_MAX, n, n == 1 ? "" : "s");
    val vals[4 + 2 * CORNERS_MAX];
    size_t at[4 + 2 * CORNERS_MAX];
    for (unsigned k = 0; k < n; k++) {
        char name[32];
        if (k < 4)
            snprintf(name, sizeof name, "%s", polygon_names[k]);
        else
            snprintf(name, sizeof name, "corner %u's %s", (k - 4) / 2 + 1, k % 2 ? "y" : "x");
        vals[k] = number_argument(P, &a[k], "polygon", name);
        at[k] = a[k].e->start;
    }
    cs_draw_item item = {.kind = CS_DRAW_POLYGON, .per_shape = n};
    add_shapes(P, D, &item, vals, at, "polygon", pos);
}

/* text(x, y, size, colour, piece, ...): strings and numbers, shown one
 * after the other. */
static void parse_text(parser *P, draw_block *D, size_t pos, const argument *a, unsigned n)
{
    if (n < 5)
        cs_parse_fail_at(P, pos, "'text' takes x, y, size, colour and then what to show (strings and numbers), "
                         "got %u argument%s", n, n == 1 ? "" : "s");
    val vals[ARGS_MAX];
    size_t at[ARGS_MAX], bytes = 0;
    unsigned per_shape = 0, numbers = 0;
    for (unsigned k = 0; k < n; k++)
        bytes += a[k].e ? 1 : a[k].len;
    char *text = cs_parse_alloc(P, &P->temp, bytes + 1), *end = text;
    for (unsigned k = 0; k < n; k++) {
        if (k < 4 && !a[k].e)
            cs_parse_fail_at(P, a[k].pos, "the %s of 'text' must be a number, got a string", text_names[k]);
        if (!a[k].e) {
            if ((size_t)(end - text) - numbers + a[k].len > TEXT_MAX)
                cs_parse_fail_at(P, a[k].pos, "the strings of a text are longer than %d bytes", TEXT_MAX);
            memcpy(end, a[k].text, a[k].len);
            end += a[k].len;
            continue;
        }
        char name[32];
        if (k < 4) {
            snprintf(name, sizeof name, "%s", text_names[k]);
        } else {
            if (numbers == NUMBERS_MAX)
                cs_parse_fail_at(P, a[k].e->start, "a text shows at most %d numbers", NUMBERS_MAX);
            snprintf(name, sizeof name, "number %u", ++numbers);
            *end++ = CS_DRAW_NUMBER;
        }
        vals[per_shape] = number_argument(P, &a[k], "text", name);
        at[per_shape++] = a[k].e->start;
    }
    *end = 0;
    cs_draw_item item = {.kind = CS_DRAW_TEXT, .per_shape = per_shape, .text = text};
    add_shapes(P, D, &item, vals, at, "text", pos);
}

/* curve(f, from, to, n, colour): the polyline through f(t) = stack(x, y)
 * for n values of t from `from` to `to`, spaced as numpy.linspace spaces
 * them (t_i = i * step + from, the last one `to` itself). f is a function
 * declared before, called (inlined) once per point. */
static void parse_curve(parser *P, draw_block *D, size_t pos)
{
    char t[32];
    cs_graph *g = P->g;
    if (P->tok.kind != CS_TOK_NAME)
        cs_parse_fail_at(P, P->tok.pos, "'curve' takes a function's name first (fn f(t) = stack(x, y)), got %s",
                         cs_parse_describe(P));
    size_t fn_pos = P->tok.pos;
    sym *f = cs_parse_lookup(P, P->src + P->tok.pos, P->tok.len);
    if (!f || f->kind != SYM_FN || f->fn->n_params != 1)
        cs_parse_fail_at(P, fn_pos, "'curve' takes a function of one argument first (fn f(t) = stack(x, y)), "
                         "got %s", cs_parse_describe(P));
    cs_parse_advance(P);
    if (P->tok.kind != CS_TOK_COMMA)
        cs_parse_fail_at(P, P->tok.pos, "expected ',' after the function of 'curve', got %s", cs_parse_describe(P));
    cs_parse_advance(P);
    argument a[ARGS_MAX];
    unsigned n = parse_arguments(P, "curve", false, a);
    if (n != 4)
        cs_parse_fail_at(P, pos, "'curve' takes 5 arguments (function, from, to, points, colour), got %u", n + 1);
    cs_node from = scalar_argument(P, &a[0], "curve", "from");
    cs_node to = scalar_argument(P, &a[1], "curve", "to");
    unsigned points = (unsigned)cs_lower_constant_int(P, a[2].e, "the points of a curve", 2, POINTS_MAX);
    val *vals = cs_parse_alloc(P, &P->temp, (1 + 2 * (size_t)points) * sizeof *vals);
    size_t *at = cs_parse_alloc(P, &P->temp, (1 + 2 * (size_t)points) * sizeof *at);
    vals[0] = number_argument(P, &a[3], "curve", "colour");
    if (vals[0].n)
        cs_parse_fail_at(P, a[3].e->start, "the colour of 'curve' must be one number, got %s",
                         cs_lower_type_text(vals[0], t));
    at[0] = a[3].e->start;

    /* f(t_i), lowered as a call whose one argument is frame slot 0 */
    expr *call = cs_parse_alloc(P, &P->temp, sizeof *call), *arg = cs_parse_alloc(P, &P->temp, sizeof *arg);
    expr **kids = cs_parse_alloc(P, &P->temp, sizeof *kids);
    arg->kind = E_SLOT;
    arg->pos = arg->start = fn_pos;
    kids[0] = arg;
    call->kind = E_CALL;
    call->pos = call->start = fn_pos;
    call->n = 1;
    call->kid = kids;
    call->sym = f;
    cs_node span = cs_parse_built(P, cs_binary(g, CS_OP_SUB, to, from), pos);
    cs_node step = cs_parse_built(P, cs_binary(g, CS_OP_DIV, span, cs_const(g, P->real, points - 1.0)), pos);
    for (unsigned i = 0; i < points; i++) {
        cs_node ti = i + 1 == points ? to
                   : cs_parse_built(P, cs_binary(g, CS_OP_ADD, cs_parse_built(P, cs_binary(g, CS_OP_MUL,
                                    cs_const(g, P->real, i), step), pos), from), pos);
        val frame[1] = {cs_lower_scalar(ti, P->real)};
        val v = cs_lower(P, call, frame);
        if (v.n != 2 || v.type == CS_BOOL)
            cs_parse_fail_at(P, fn_pos, "the function of 'curve' must return a point, stack(x, y), got %s",
                             cs_lower_type_text(v, t));
        for (unsigned k = 0; k < 2; k++) {
            vals[1 + 2 * i + k] = cs_lower_unpack_component(P, v, k, fn_pos);
            at[1 + 2 * i + k] = fn_pos;
        }
    }
    cs_draw_item item = {.kind = CS_DRAW_CURVE, .per_shape = 1 + 2 * points};
    add_shapes(P, D, &item, vals, at, "curve", pos);
}

/* grid(x, y, cell_width, cell_height, colours): a cell per element of
 * colours, an array of one axis (a row) or two (rows of columns), row 0
 * on top, (x, y) the top left corner. */
static void parse_grid(parser *P, draw_block *D, size_t pos, const argument *a, unsigned n)
{
    static const char *const names[] = {"x", "y", "cell width", "cell height"};
    char t[32];
    want_arguments(P, "grid", n, 5, "x, y, cell width, cell height, colours", pos);
    val cells = cs_lower(P, a[4].e, NULL);
    if (cells.type == CS_BOOL || cells.rank < 1 || cells.rank > 2)
        cs_parse_fail_at(P, a[4].e->start, "the colours of 'grid' must be an array of numbers of one or two axes, "
                         "got %s", cs_lower_type_text(cells, t));
    unsigned rows = cells.rank == 2 ? cells.dim[0] : 1, columns = cells.rank == 2 ? cells.dim[1] : cells.dim[0];
    val *vals = cs_parse_alloc(P, &P->temp, (4 + (size_t)rows * columns) * sizeof *vals);
    size_t *at = cs_parse_alloc(P, &P->temp, (4 + (size_t)rows * columns) * sizeof *at);
    for (unsigned k = 0; k < 4; k++) {
        vals[k] = cs_lower_scalar(scalar_argument(P, &a[k], "grid", names[k]), P->real);
        at[k] = a[k].e->start;
    }
    for (unsigned i = 0; i < rows; i++) {
        cs_node row = cells.rank == 2 ? cs_lower_component(P, cells, i, a[4].e->start) : cells.node;
        for (unsigned j = 0; j < columns; j++) {
            cs_node cell = cs_parse_built(P, cs_index(P->g, row, j), a[4].e->start);
            vals[4 + i * columns + j] = cs_lower_scalar(cell, cells.type);
            at[4 + i * columns + j] = a[4].e->start;
        }
    }
    cs_draw_item item = {.kind = CS_DRAW_GRID, .per_shape = 4 + rows * columns, .rows = rows, .columns = columns};
    add_shapes(P, D, &item, vals, at, "grid", pos);
}

/* ---- statements ------------------------------------------------------ */

static void parse_call(parser *P, draw_block *D, word w)
{
    size_t pos = P->tok.pos;
    cs_parse_advance(P);   /* the word */
    cs_parse_advance(P);   /* '(' */
    if (w == W_CURVE) {
        parse_curve(P, D, pos);
        return;
    }
    argument a[ARGS_MAX];
    unsigned n = parse_arguments(P, words[w], w == W_TEXT, a);
    switch (w) {
    case W_CANVAS: case W_FPS: case W_BACKGROUND: case W_VIEW:
        parse_setting(P, D, w, pos, a, n);
        break;
    case W_POLYGON:
        parse_polygon(P, D, pos, a, n);
        break;
    case W_TEXT:
        parse_text(P, D, pos, a, n);
        break;
    case W_GRID:
        parse_grid(P, D, pos, a, n);
        break;
    default:
        parse_fixed(P, D, w, pos, a, n);
        break;
    }
}

static void draw_statement(parser *P, draw_block *D)
{
    if (P->tok.kind == CS_TOK_NAME && followed_by_paren(P)) {
        int w = find_word(P);
        if (w < 0)
            cs_parse_fail_at(P, P->tok.pos, "'%.*s' is not something a draw block draws or sets (canvas, fps, "
                             "background, view, rect, polygon, circle, line, curve, text, grid)", (int)P->tok.len,
                             P->src + P->tok.pos);
        parse_call(P, D, (word)w);
        return;
    }
    cs_parse_statement(P);   /* a local */
}

void cs_parse_draw(parser *P)
{
    cs_program *p = P->p;
    cs_graph *g = P->g;
    size_t at = P->tok.pos;
    cs_parse_need(P, &P->state, "state", "draw");
    cs_parse_once(P, &P->draw, "draw");
    size_t open = P->tok.pos;
    cs_parse_block_open(P, "draw");
    if (cs_program_add_draw_roots(p, CS_DRAW_VIEW_ROOTS) != 0)
        cs_parse_fail_at(P, at, "out of memory");
    draw_block D;
    memset(&D, 0, sizeof D);
    sym *mark = P->scope;
    P->ctx = CTX_DRAW;
    define_rgb(P, open);
    while (P->tok.kind != CS_TOK_RBRACE) {
        if (P->tok.kind == CS_TOK_EOF)
            cs_parse_unclosed(P, open);
        if (cs_parse_word_is(P, "return"))
            cs_parse_fail_at(P, P->tok.pos, "'return' is only allowed in a function");
        draw_statement(P, &D);
        cs_parse_free_temp(P);
        cs_parse_end_statement(P);
    }
    cs_parse_advance(P);
    cs_parse_end_scope(P, mark);
    P->ctx = CTX_GLOBAL;
    if (!D.canvas.seen)
        cs_parse_fail_at(P, at, "the draw block sets no canvas: add canvas(WIDTH, HEIGHT), in pixels");
    if (!D.fps.seen)
        p->fps = 30;
    /* Unset: a white background and the canvas's own pixels as the world. */
    cs_node *draw = p->draw;
    if (!draw[CS_DRAW_BACKGROUND])
        draw[CS_DRAW_BACKGROUND] = cs_parse_built(P, cs_const(g, P->real, 0xffffff), at);
    if (!D.view.seen) {
        draw[CS_DRAW_X_MIN] = draw[CS_DRAW_Y_MIN] = cs_parse_built(P, cs_const(g, P->real, 0), at);
        draw[CS_DRAW_X_MAX] = cs_parse_built(P, cs_const(g, P->real, p->canvas_width), at);
    }
}
