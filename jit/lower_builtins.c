/* The builtins the front end maps by hand (docs/dsl.md, "Builtins"): the
 * random draws, which number their draws when lowered (outer call first,
 * so a draw in a loop gets a new number per iteration), the array
 * constructors and movers, reductions, and casts. The elementwise math
 * builtins come from jit/ops.def's dsl column instead (lower.c). Each
 * checks its arguments and reports where the mistake is. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "parse_tree.h"

static const char *const keyword_names[KW_COUNT] = {"axis", "fill", "shape"};

const char *cs_builtin_keyword(kw_name k) { return keyword_names[k]; }

static const char *name_of(const expr *e) { return cs_builtin((int)e->index)->name; }

/* The table's `arg` of the call's builtin: which op, type or variant. */
static int which(const expr *e) { return cs_builtin((int)e->index)->arg; }

static val arg(parser *P, const expr *e, unsigned k, val *frame) { return cs_lower(P, e->kid[k], frame); }

static cs_node built(parser *P, cs_node n, const expr *e) { return cs_parse_built(P, n, e->pos); }

static val value_of(parser *P, cs_node n, const expr *e) { return cs_lower_value(P, built(P, n, e)); }

/* ---- shared checks --------------------------------------------------- */

static void need_array(parser *P, const expr *e, unsigned k, val v)
{
    char t[32];
    if (!v.rank)
        cs_parse_fail_at(P, e->kid[k]->start, "%s() needs an array, got %s", name_of(e), cs_lower_type_text(v, t));
}

static void need_scalar(parser *P, const expr *e, unsigned k, val v, const char *what)
{
    char t[32];
    if (v.rank)
        cs_parse_fail_at(P, e->kid[k]->start, "%s() needs %s, got %s", name_of(e), what, cs_lower_type_text(v, t));
}

static void need_number(parser *P, const expr *e, unsigned k, val v)
{
    if (v.type == CS_BOOL)
        cs_parse_fail_at(P, e->kid[k]->start, "%s() needs numbers, got bool", name_of(e));
}

/* axis=k of an array of rank `rank` (negative counts from the end), or
 * `fallback` when not given (-2: required when rank > 1, else 0). */
static int axis_of(parser *P, const expr *e, unsigned rank, int fallback, val *frame)
{
    const kwarg *k = &e->kw[KW_AXIS];
    if (!k->value) {
        if (fallback == -2 && rank > 1)
            cs_parse_fail_at(P, e->pos, "%s() of an array of %u axes needs axis=", name_of(e), rank);
        return fallback == -2 ? 0 : fallback;
    }
    long long a = cs_lower_need_int(P, k->value, frame, "axis");
    if (a < -(long long)rank || a >= (long long)rank)
        cs_parse_fail_at(P, k->value->start, "axis %lld is out of range for an array of %u ax%s", a, rank,
                rank == 1 ? "is" : "es");
    return (int)(a < 0 ? a + rank : a);
}

/* Positional arguments first..e->n-1 as array lengths. */
static uint32_t dims_shape(parser *P, const expr *e, unsigned first, val *frame)
{
    unsigned dims[CS_RANK_MAX], rank = e->n - first;
    if (rank > CS_RANK_MAX)
        cs_parse_fail_at(P, e->kid[first + CS_RANK_MAX]->start, "an array has at most %d axes", CS_RANK_MAX);
    for (unsigned k = 0; k < rank; k++) {
        long long d = cs_lower_need_int(P, e->kid[first + k], frame, "an array's length");
        if (d < 1 || d > 65535)
            cs_parse_fail_at(P, e->kid[first + k]->start, "an array's length must be from 1 to 65535, got %lld", d);
        dims[k] = (unsigned)d;
    }
    return cs_lower_shape(P, rank, dims, e->pos);
}

/* The common type of items: all bools, or numbers (a real makes them real). */
static cs_type common_type(parser *P, const expr *e, const val *v, unsigned n)
{
    bool reals = false;
    for (unsigned k = 0; k < n; k++) {
        if ((v[k].type == CS_BOOL) != (v[0].type == CS_BOOL))
            cs_parse_fail_at(P, e->kid[k]->start, "%s() items must be all numbers or all bools", name_of(e));
        reals |= cs_type_is_real(v[k].type);
    }
    return v[0].type == CS_BOOL ? CS_BOOL : reals ? P->real : CS_I32;
}

/* ---- random draws ---------------------------------------------------- */

/* shape=[d0, ..] (or shape=d0): the shape of an array of independent
 * draws; a scalar draw without it. */
static uint32_t draw_shape(parser *P, const expr *e, val *frame)
{
    const kwarg *k = &e->kw[KW_SHAPE];
    if (!k->value)
        return CS_SCALAR;
    const expr *v = k->value;
    unsigned n = v->kind == E_ARRAY ? v->n : 1, dims[CS_RANK_MAX];
    if (n > CS_RANK_MAX)
        cs_parse_fail_at(P, v->start, "shape=: an array has at most %d axes", CS_RANK_MAX);
    for (unsigned j = 0; j < n; j++) {
        const expr *d = v->kind == E_ARRAY ? v->kid[j] : v;
        long long x = cs_lower_need_int(P, d, frame, "a length in shape=");
        if (x < 1 || x > 65535)
            cs_parse_fail_at(P, d->start, "shape=: a length must be from 1 to 65535, got %lld", x);
        dims[j] = (unsigned)x;
    }
    return cs_lower_shape(P, n, dims, v->start);
}

/* The first of `count` consecutive draw numbers of the block's stream,
 * taken before the call's arguments are lowered (the outer call counts
 * first, as uniform always did). */
static unsigned take_draws(parser *P, const expr *e, unsigned count)
{
    int stream = P->ctx == CTX_RESET ? CS_STREAM_RESTART : CS_STREAM_STEP;
    if ((size_t)P->draws[stream] + count > DRAWS_MAX)
        cs_parse_fail_at(P, e->pos, "too many random draws (at most %d per block)", DRAWS_MAX);
    unsigned k = P->draws[stream];
    P->draws[stream] += count;
    return k;
}

static cs_node draw_leaf(parser *P, const expr *e, cs_op op, uint32_t shape, unsigned draw)
{
    int stream = P->ctx == CTX_RESET ? CS_STREAM_RESTART : CS_STREAM_STEP;
    cs_type t = op == CS_OP_RANDBITS ? CS_U32 : P->real;
    return built(P, cs_leaf_shaped(P->g, op, t, shape, CS_UNIFORM_ID(stream, draw)), e);
}

/* A draw's parameter: a number of the given kind (real or int), a scalar,
 * or with shape= an array that broadcasts to the draws' shape. */
static cs_node draw_param(parser *P, const expr *e, unsigned k, val *frame, cs_type t, uint32_t shape)
{
    char ty[32], want[48];
    val v = arg(P, e, k, frame);
    if (v.type == CS_BOOL || (t == CS_I32 && v.type != CS_I32))
        cs_parse_fail_at(P, e->kid[k]->start, "%s() needs %s, got %s", name_of(e),
                t == CS_I32 ? "ints" : "scalar numbers", cs_lower_type_text(v, ty));
    if (v.rank) {
        const cs_shape *s = cs_shape_of(P->g, shape), *vs = cs_node_shape(P->g, v.node);
        cs_shape both;
        if (!s->rank)
            cs_parse_fail_at(P, e->kid[k]->start, "%s() needs scalar numbers, got %s (give shape= to draw an array)",
                    name_of(e), cs_lower_type_text(v, ty));
        if (!cs_shape_broadcast(vs, s, &both) || both.rank != s->rank || memcmp(both.dim, s->dim, sizeof s->dim))
            cs_parse_fail_at(P, e->kid[k]->start, "%s() parameter %s does not broadcast to shape=%s", name_of(e),
                    cs_lower_type_text(v, ty), strchr(cs_lower_type_shape_text(P, CS_F64, shape, want), '['));
    }
    return cs_lower_convert(P, v, t, e->kid[k]->start).node;
}

/* uniform(lo, hi) = lo + (hi - lo) * u: numpy's Generator.uniform, built
 * exactly so since the first version (the golden rows depend on it). */
static val lower_uniform(parser *P, const expr *e, val *frame)
{
    uint32_t shape = draw_shape(P, e, frame);
    unsigned draw = take_draws(P, e, cs_shape_of(P->g, shape)->size);
    cs_node lo = draw_param(P, e, 0, frame, P->real, shape), hi = draw_param(P, e, 1, frame, P->real, shape);
    cs_graph *g = P->g;
    cs_node u = draw_leaf(P, e, CS_OP_UNIFORM, shape, draw);
    cs_node span = built(P, cs_binary(g, CS_OP_SUB, hi, lo), e);
    cs_node scaled = built(P, cs_binary(g, CS_OP_MUL, span, u), e);
    return value_of(P, cs_binary(g, CS_OP_ADD, lo, scaled), e);
}

/* randint(n): BOUNDED(word, n) in [0, n); randint(lo, hi): lo + that of
 * hi - lo, in [lo, hi). */
static val lower_randint(parser *P, const expr *e, val *frame)
{
    uint32_t shape = draw_shape(P, e, frame);
    unsigned draw = take_draws(P, e, cs_shape_of(P->g, shape)->size);
    cs_graph *g = P->g;
    cs_node lo = e->n == 2 ? draw_param(P, e, 0, frame, CS_I32, shape) : 0;
    cs_node n = draw_param(P, e, e->n - 1, frame, CS_I32, shape);
    cs_node bits = draw_leaf(P, e, CS_OP_RANDBITS, shape, draw);
    const cs_node_data *dn = cs_graph_node(g, n), *dl = lo ? cs_graph_node(g, lo) : NULL;
    if (dn->op == CS_OP_CONST && (!dl || dl->op == CS_OP_CONST) && dn->imm.f - (dl ? dl->imm.f : 0) < 1)
        cs_parse_fail_at(P, e->pos, lo ? "randint(lo, hi) needs lo < hi" : "randint(n) needs n >= 1, got %.0f",
                dn->imm.f);
    if (lo)
        n = built(P, cs_binary(g, CS_OP_SUB, n, lo), e);
    cs_node r = built(P, cs_binary(g, CS_OP_BOUNDED, bits, n), e);
    return value_of(P, lo ? cs_binary(g, CS_OP_ADD, lo, r) : r, e);
}

/* bernoulli(p) = u < p. */
static val lower_bernoulli(parser *P, const expr *e, val *frame)
{
    uint32_t shape = draw_shape(P, e, frame);
    unsigned draw = take_draws(P, e, cs_shape_of(P->g, shape)->size);
    cs_node p = draw_param(P, e, 0, frame, P->real, shape);
    cs_node u = draw_leaf(P, e, CS_OP_UNIFORM, shape, draw);
    return value_of(P, cs_binary(P->g, CS_OP_LT, u, p), e);
}

/* categorical(p0, p1, ..) or categorical(p) of a vector p: Gymnasium's
 * categorical_sample, the first index whose running sum p0 + .. + pk
 * exceeds one uniform draw u, n - 1 when none does. */
static val lower_categorical(parser *P, const expr *e, val *frame)
{
    char t[32];
    uint32_t shape = draw_shape(P, e, frame);
    unsigned draw = take_draws(P, e, cs_shape_of(P->g, shape)->size);
    cs_graph *g = P->g;
    val *v = cs_parse_alloc(P, &P->temp, e->n * sizeof *v);
    for (unsigned k = 0; k < e->n; k++) {
        v[k] = arg(P, e, k, frame);
        need_number(P, e, k, v[k]);
        if (v[k].rank && (e->n > 1 || v[k].rank > 1))
            cs_parse_fail_at(P, e->kid[k]->start, "categorical() takes numbers p0, p1, .. or one vector of them, "
                    "got %s", cs_lower_type_text(v[k], t));
    }
    unsigned n = v[0].rank ? v[0].n : e->n;
    cs_lower_spend(P, 4 * (size_t)n, e->pos);
    cs_node *sum = cs_parse_alloc(P, &P->temp, n * sizeof *sum);
    for (unsigned k = 0; k < n; k++) {
        val pk = v[0].rank ? cs_lower_unpack_component(P, v[0], k, e->pos) : v[k];
        cs_node x = cs_lower_convert(P, pk, P->real, e->pos).node;
        sum[k] = k ? built(P, cs_binary(g, CS_OP_ADD, sum[k - 1], x), e) : x;
    }
    cs_node u = draw_leaf(P, e, CS_OP_UNIFORM, shape, draw);
    cs_node r = built(P, cs_const(g, CS_I32, n - 1.0), e);
    for (unsigned k = n - 1; k-- > 0;) {
        cs_node exceeds = built(P, cs_binary(g, CS_OP_GT, sum[k], u), e);
        r = built(P, cs_ternary(g, CS_OP_SELECT, exceeds, built(P, cs_const(g, CS_I32, k), e), r), e);
    }
    if (cs_graph_node(g, r)->shape != shape)   /* one probability: n - 1 = 0 for every draw */
        r = built(P, cs_broadcast(g, r, shape), e);
    return cs_lower_value(P, r);
}

/* normal() and normal(mu, sigma): Box-Muller from draws u1 and u2,
 * z = sqrt(-2 * log(1 - u1)) * cos(2 pi * u2), then mu + sigma * z. With
 * shape=S the u1 are the first |S| draws and the u2 the next |S|. */
static val lower_normal(parser *P, const expr *e, val *frame)
{
    if (e->n == 1)
        cs_parse_fail_at(P, e->pos, "normal() takes no arguments or two (mu, sigma), got 1");
    uint32_t shape = draw_shape(P, e, frame);
    unsigned size = cs_shape_of(P->g, shape)->size, draw = take_draws(P, e, 2 * size);
    cs_graph *g = P->g;
    cs_node mu = e->n ? draw_param(P, e, 0, frame, P->real, shape) : 0;
    cs_node sigma = e->n ? draw_param(P, e, 1, frame, P->real, shape) : 0;
    cs_node u1 = draw_leaf(P, e, CS_OP_UNIFORM, shape, draw), u2 = draw_leaf(P, e, CS_OP_UNIFORM, shape, draw + size);
    cs_node one = built(P, cs_const(g, P->real, 1), e), minus_two = built(P, cs_const(g, P->real, -2), e);
    cs_node two_pi = built(P, cs_const(g, P->real, 2 * M_PI), e);
    cs_node lg = built(P, cs_unary(g, CS_OP_LOG, built(P, cs_binary(g, CS_OP_SUB, one, u1), e)), e);
    cs_node radius = built(P, cs_unary(g, CS_OP_SQRT, built(P, cs_binary(g, CS_OP_MUL, minus_two, lg), e)), e);
    cs_node angle = built(P, cs_unary(g, CS_OP_COS, built(P, cs_binary(g, CS_OP_MUL, two_pi, u2), e)), e);
    cs_node z = built(P, cs_binary(g, CS_OP_MUL, radius, angle), e);
    if (!mu)
        return cs_lower_value(P, z);
    return value_of(P, cs_binary(g, CS_OP_ADD, mu, built(P, cs_binary(g, CS_OP_MUL, sigma, z), e)), e);
}

/* ---- making arrays --------------------------------------------------- */

/* zeros(d0, ..), ones(d0, ..): reals; full(value, d0, ..): value's type. */
static val lower_filled(parser *P, const expr *e, val *frame)
{
    cs_node v;
    unsigned first = 0;
    if (which(e) < 0) {
        val x = arg(P, e, 0, frame);
        need_scalar(P, e, 0, x, "a scalar value");
        v = x.node;
        first = 1;
    } else {
        v = built(P, cs_const(P->g, P->real, which(e)), e);
    }
    if (e->n == first)
        cs_parse_fail_at(P, e->pos, "%s() needs the array's lengths", name_of(e));
    return value_of(P, cs_broadcast(P->g, v, dims_shape(P, e, first, frame)), e);
}

/* arange(n): the ints 0 .. n-1. */
static val lower_arange(parser *P, const expr *e, val *frame)
{
    uint32_t shape = dims_shape(P, e, 0, frame);
    return value_of(P, cs_leaf_shaped(P->g, CS_OP_IOTA, CS_I32, shape, 0), e);
}

static val lower_reshape(parser *P, const expr *e, val *frame)
{
    char t[32], want[48];
    val a = arg(P, e, 0, frame);
    uint32_t shape = dims_shape(P, e, 1, frame);
    unsigned size = cs_shape_of(P->g, shape)->size, have = cs_node_shape(P->g, a.node)->size;
    if (size != have)
        cs_parse_fail_at(P, e->pos, "cannot reshape %s (%u elements) to %s (%u)", cs_lower_type_text(a, t), have,
                strchr(cs_lower_type_shape_text(P, a.type, shape, want), '['), size);
    return value_of(P, cs_reshape(P->g, a.node, shape), e);
}

/* stack(a, b, .., axis=k): items of one shape on a new axis (0 first). */
static val lower_stack(parser *P, const expr *e, val *frame)
{
    char t1[32], t2[32];
    val *v = cs_parse_alloc(P, &P->temp, e->n * sizeof *v);
    cs_node *items = cs_parse_alloc(P, &P->temp, e->n * sizeof *items);
    for (unsigned k = 0; k < e->n; k++) {
        v[k] = arg(P, e, k, frame);
        if (k && (v[k].rank != v[0].rank || memcmp(v[k].dim, v[0].dim, sizeof v[0].dim)))
            cs_parse_fail_at(P, e->kid[k]->start, "stack() items must have one shape, got %s and %s",
                    cs_lower_type_text(v[0], t1), cs_lower_type_text(v[k], t2));
    }
    cs_type type = common_type(P, e, v, e->n);
    int axis = axis_of(P, e, v[0].rank + 1, 0, frame);
    for (unsigned k = 0; k < e->n; k++)
        items[k] = cs_lower_convert(P, v[k], type, e->kid[k]->start).node;
    unsigned dims[CS_RANK_MAX + 1];
    for (unsigned j = 0, k = 0; j <= v[0].rank; j++)
        dims[j] = (int)j == axis ? e->n : v[0].dim[k++];
    if (v[0].rank)   /* a vector of scalars may have up to 65535, as it always could */
        cs_lower_shape(P, v[0].rank + 1, dims, e->pos);
    return value_of(P, cs_stack_axis(P->g, e->n, items, (unsigned)axis), e);
}

/* concat(a, b, .., axis=k): arrays joined along an axis they may differ in. */
static val lower_concat(parser *P, const expr *e, val *frame)
{
    char t1[32], t2[32];
    val *v = cs_parse_alloc(P, &P->temp, e->n * sizeof *v);
    cs_node *items = cs_parse_alloc(P, &P->temp, e->n * sizeof *items);
    for (unsigned k = 0; k < e->n; k++) {
        v[k] = arg(P, e, k, frame);
        need_array(P, e, k, v[k]);
    }
    int axis = axis_of(P, e, v[0].rank, 0, frame);
    unsigned total = 0;
    for (unsigned k = 0; k < e->n; k++) {
        bool fits = v[k].rank == v[0].rank;
        for (unsigned j = 0; fits && j < v[0].rank; j++)
            fits = (int)j == axis || v[k].dim[j] == v[0].dim[j];
        if (!fits)
            cs_parse_fail_at(P, e->kid[k]->start, "concat() along axis %d cannot join %s and %s", axis,
                    cs_lower_type_text(v[0], t1), cs_lower_type_text(v[k], t2));
        total += v[k].dim[axis];
    }
    cs_type type = common_type(P, e, v, e->n);
    for (unsigned k = 0; k < e->n; k++)
        items[k] = cs_lower_convert(P, v[k], type, e->kid[k]->start).node;
    unsigned dims[CS_RANK_MAX];
    memcpy(dims, v[0].dim, sizeof dims);
    dims[axis] = total > 65535 ? 65536 : total;
    cs_lower_shape(P, v[0].rank, dims, e->pos);
    return value_of(P, cs_concat(P->g, e->n, items, (unsigned)axis), e);
}

/* where(c, a, b) = c ? a : b, elementwise. */
static val lower_where(parser *P, const expr *e, val *frame)
{
    val a[3];
    for (unsigned k = 0; k < 3; k++)
        a[k] = arg(P, e, k, frame);
    return cs_lower_apply(P, CS_OP_SELECT, 3, a, e->pos, "where()");
}

/* roll(a, s, axis=k) (jnp.roll) and shift(a, s, axis=k, fill=v): element j
 * takes element j - s along the axis, wrapping around or filled. */
static val lower_move(parser *P, const expr *e, val *frame)
{
    char t[32];
    val a = arg(P, e, 0, frame);
    need_array(P, e, 0, a);
    long long amount = cs_lower_need_int(P, e->kid[1], frame, "the amount");
    int axis = axis_of(P, e, a.rank, -2, frame);
    long long dim = a.dim[axis];
    if (which(e) == 0) {   /* roll: the amount modulo the length is the same roll */
        amount %= dim;
        return value_of(P, cs_roll(P->g, a.node, (unsigned)axis, (int)amount), e);
    }
    if (amount > dim || amount < -dim)
        amount = amount < 0 ? -dim : dim;   /* every element is the fill */
    cs_node fill;
    if (e->kw[KW_FILL].value) {
        val f = cs_lower(P, e->kw[KW_FILL].value, frame);
        bool fits = !f.rank && (f.type == a.type || (f.type == CS_I32 && a.type == P->real));
        if (!fits)
            cs_parse_fail_at(P, e->kw[KW_FILL].value->start, "shift()'s fill must be a scalar of the array's type "
                    "(%s), got %s", a.type == CS_BOOL ? "bool" : a.type == CS_I32 ? "int" : "real",
                    cs_lower_type_text(f, t));
        fill = cs_lower_convert(P, f, a.type, e->pos).node;
    } else {
        fill = built(P, cs_const(P->g, a.type, 0), e);
    }
    return value_of(P, cs_shift(P->g, a.node, fill, (unsigned)axis, (int)amount), e);
}

/* set(a, i, [j, [k,]] v): a copy of a with a[i, j, k] = v (a scatter: a
 * run-time index out of range after the JAX rule changes nothing). */
static val lower_set(parser *P, const expr *e, val *frame)
{
    char t1[32], t2[48];
    val a = arg(P, e, 0, frame);
    need_array(P, e, 0, a);
    unsigned n = e->n - 2;
    if (n > a.rank)
        cs_parse_fail_at(P, e->pos, "set() got %u indices for %s, which has %u ax%s", n, cs_lower_type_text(a, t1),
                a.rank, a.rank == 1 ? "is" : "es");
    cs_node idx[CS_RANK_MAX];
    for (unsigned j = 0; j < n; j++) {
        const expr *x = e->kid[1 + j];
        long long k;
        if (cs_lower_static_int(P, x, "an index", &k)) {
            if (k < -(long long)a.dim[j] || k >= (long long)a.dim[j])
                cs_parse_fail_at(P, x->start, "index %lld is out of range for axis %u of %s", k, j,
                        cs_lower_type_text(a, t1));
            idx[j] = built(P, cs_const(P->g, CS_I32, (double)(k < 0 ? k + a.dim[j] : k)), e);
            continue;
        }
        val i = cs_lower(P, x, frame);
        if (i.rank || i.type != CS_I32)
            cs_parse_fail_at(P, x->start, "an index must be an int (or a compile-time integer), got %s%s",
                    cs_lower_type_text(i, t1), i.type == P->real && !i.rank ? "; convert it with int(...)" : "");
        cs_lower_note_index(P, i.node, a.dim[j], x->start);
        idx[j] = i.node;
    }
    const expr *vx = e->kid[e->n - 1];
    val v = cs_lower(P, vx, frame);
    cs_shape sub = {a.rank - n, {1, 1, 1}, 1}, both;
    for (unsigned j = n; j < a.rank; j++) {
        sub.dim[j - n] = a.dim[j];
        sub.size *= a.dim[j];
    }
    const cs_shape *vs = cs_node_shape(P->g, v.node);
    bool type_ok = v.type == a.type || (v.type == CS_I32 && a.type == P->real);
    bool shape_ok = cs_shape_broadcast(vs, &sub, &both) && both.rank == sub.rank &&
                    !memcmp(both.dim, sub.dim, sizeof sub.dim);
    if (!type_ok || !shape_ok) {
        char want[32];
        snprintf(want, sizeof want, "%s", a.type == CS_BOOL ? "bool" : a.type == CS_I32 ? "int" : "real");
        for (unsigned j = 0; j < sub.rank; j++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "[%u]", sub.dim[j]);
        cs_parse_fail_at(P, vx->start, "set() puts %s into %s, whose element%s %s", cs_lower_shape_text(P, v.node, t2),
                cs_lower_type_text(a, t1), sub.rank ? "s at those indices are" : " is", want);
    }
    cs_node value = cs_lower_convert(P, v, a.type, vx->start).node;
    return value_of(P, cs_scatter(P->g, a.node, value, n, idx), e);
}

/* ---- reductions and casts -------------------------------------------- */

/* sum any all count argmax argmin, and min(a)/max(a) of one array: over
 * axis= or every element. */
static val reduce(parser *P, const expr *e, cs_op op, val a, val *frame)
{
    char t[32];
    need_array(P, e, 0, a);
    switch (op) {
    case CS_OP_ANY: case CS_OP_ALL:
        if (a.type != CS_BOOL)
            cs_parse_fail_at(P, e->kid[0]->start, "%s() needs bools, got %s (compare first, e.g. %s(a != 0))",
                    name_of(e), cs_lower_type_text(a, t), name_of(e));
        break;
    case CS_OP_SUM: case CS_OP_ARGMAX: case CS_OP_ARGMIN:   /* bools count as 0 and 1, as in NumPy */
        if (a.type == CS_BOOL)
            a = cs_lower_convert(P, a, CS_I32, e->pos);
        break;
    case CS_OP_RMIN: case CS_OP_RMAX:
        need_number(P, e, 0, a);
        break;
    default:
        break;
    }
    int axis = axis_of(P, e, a.rank, CS_ALL_AXES, frame);
    return value_of(P, cs_reduce(P->g, op, a.node, axis), e);
}

static val lower_reduce(parser *P, const expr *e, val *frame)
{
    return reduce(P, e, (cs_op)which(e), arg(P, e, 0, frame), frame);
}

/* min(a, b), max(a, b) elementwise (Python's); min(a), max(a) of one array. */
static val lower_min_max(parser *P, const expr *e, val *frame)
{
    cs_op op = (cs_op)which(e);
    if (e->n == 1)
        return reduce(P, e, op == CS_OP_MIN ? CS_OP_RMIN : CS_OP_RMAX, arg(P, e, 0, frame), frame);
    if (e->kw[KW_AXIS].value)
        cs_parse_fail_at(P, e->kw[KW_AXIS].pos, "axis= goes with %s(a) of one array", name_of(e));
    val a[2] = {arg(P, e, 0, frame), arg(P, e, 1, frame)};
    return cs_lower_apply(P, op, 2, a, e->pos, cs_op_table[op].dsl_quoted);
}

/* int(x) (toward zero; NaN 0; saturating), real(x), bool(x) (!= 0). */
static val lower_cast(parser *P, const expr *e, val *frame)
{
    val v = arg(P, e, 0, frame);
    return cs_lower_convert(P, v, which(e) == CS_I32 || which(e) == CS_BOOL ? (cs_type)which(e) : P->real, e->pos);
}

/* ---- the table ------------------------------------------------------- */

#define AXIS (1u << KW_AXIS)
#define FILL (1u << KW_FILL)
#define SHAPE (1u << KW_SHAPE)

static const fe_builtin builtins[] = {
    {"uniform", 2, 2, SHAPE, true, lower_uniform, 0},
    {"randint", 1, 2, SHAPE, true, lower_randint, 0},
    {"bernoulli", 1, 1, SHAPE, true, lower_bernoulli, 0},
    {"categorical", 1, -1, SHAPE, true, lower_categorical, 0},
    {"normal", 0, 2, SHAPE, true, lower_normal, 0},
    {"zeros", 1, 3, 0, false, lower_filled, 0},
    {"ones", 1, 3, 0, false, lower_filled, 1},
    {"full", 2, 4, 0, false, lower_filled, -1},
    {"arange", 1, 1, 0, false, lower_arange, 0},
    {"reshape", 2, 4, 0, false, lower_reshape, 0},
    {"stack", 1, -1, AXIS, false, lower_stack, 0},
    {"concat", 1, -1, AXIS, false, lower_concat, 0},
    {"where", 3, 3, 0, false, lower_where, 0},
    {"roll", 2, 2, AXIS, false, lower_move, 0},
    {"shift", 2, 2, AXIS | FILL, false, lower_move, 1},
    {"set", 3, 5, 0, false, lower_set, 0},
    {"sum", 1, 1, AXIS, false, lower_reduce, CS_OP_SUM},
    {"any", 1, 1, AXIS, false, lower_reduce, CS_OP_ANY},
    {"all", 1, 1, AXIS, false, lower_reduce, CS_OP_ALL},
    {"count", 1, 1, AXIS, false, lower_reduce, CS_OP_NONZERO},
    {"argmax", 1, 1, AXIS, false, lower_reduce, CS_OP_ARGMAX},
    {"argmin", 1, 1, AXIS, false, lower_reduce, CS_OP_ARGMIN},
    {"min", 1, 2, AXIS, false, lower_min_max, CS_OP_MIN},
    {"max", 1, 2, AXIS, false, lower_min_max, CS_OP_MAX},
    {"int", 1, 1, 0, false, lower_cast, CS_I32},
    {"real", 1, 1, 0, false, lower_cast, CS_F64},
    {"bool", 1, 1, 0, false, lower_cast, CS_BOOL},
};

int cs_builtin_find(const char *s, size_t n)
{
    for (size_t k = 0; k < sizeof builtins / sizeof builtins[0]; k++)
        if (strlen(builtins[k].name) == n && !memcmp(builtins[k].name, s, n))
            return (int)k;
    return -1;
}

const fe_builtin *cs_builtin(int index) { return &builtins[index]; }
