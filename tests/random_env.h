/* Generators of random valid programs for differential testing (issue 16,
 * 7): random_env_program writes .env text, elementwise expressions over
 * states, params and the action with every operator and builtin of the
 * language; random_env_graph (issue 26) builds a program with the IR
 * builder: array, i32 and bool states, every op of jit/ops.def (gathers
 * and scatters at indices negative and out of range, reductions, shifts,
 * rolls, slices, tables, array draws, random words to a range). Header-only,
 * so that the Criterion suite (tests/test_differential.c, tests/test_cuda.c)
 * and the libFuzzer target (tests/fuzz/fuzz_differential.c) share them
 * without a library of their own.
 *
 * A program is a pure function of its seed. Values are kept mostly finite
 * (clip around the state updates); what still overflows restarts its
 * environment, which every backend must do alike. What audits found is in
 * the mix (issue 32): constants past float's range (infinite in f32, as
 * parameters, in expressions and as the bounds of a box action), step draws
 * (uniform() in the step block), and observations that are expressions, NaN
 * ones among them, whose bits must agree too. The most draws a stream may
 * have (65536) is tests/test_compile.c's: such a kernel takes minutes to
 * compile. */
#ifndef CS_RANDOM_ENV_H
#define CS_RANDOM_ENV_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "agents.h"
#include "cartsim.h"
#include "jit.h"
#include "splitmix.h"

typedef struct {
    uint64_t s;
    char *out;
    size_t len, cap;
    int n_states, n_params;
    int discrete;   /* the action: discrete 3 (an int), else a box */
    bool in_step;   /* writing the step block: uniform() may appear */
    bool in_observe;   /* writing an observation: no action */
} random_env;

static uint64_t random_env_next(random_env *g)
{
    return splitmix_next(&g->s);
}

static int random_env_below(random_env *g, int n) { return (int)(random_env_next(g) % (uint64_t)n); }

static void random_env_put(random_env *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void random_env_put(random_env *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(g->out + g->len, g->cap - g->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        g->len = g->len + (size_t)n < g->cap ? g->len + (size_t)n : g->cap - 1;
}

/* A literal written the way a person would: a few digits, sometimes negative. */
static void random_env_number(random_env *g)
{
    static const char *const numbers[] = {"0.5", "1.0", "2.0", "-1.5", "0.25", "3.0", "0.1", "-0.75", "1.25", "7.0",
                                          "0.001", "100.0", "-2.0", "0.0", "1e39", "-3.5e38"};
    random_env_put(g, "%s", numbers[random_env_below(g, sizeof numbers / sizeof numbers[0])]);
}

static void random_env_real(random_env *g, int depth);

static void random_env_leaf(random_env *g)
{
    if (g->in_step && random_env_below(g, 12) == 0) {
        random_env_put(g, "uniform(");
        random_env_number(g);
        random_env_put(g, ", ");
        random_env_number(g);
        random_env_put(g, ")");
        return;
    }
    switch (random_env_below(g, 5)) {
    case 0:
    case 1:
        random_env_put(g, "s%d", random_env_below(g, g->n_states));
        break;
    case 2:
        random_env_put(g, "p%d", random_env_below(g, g->n_params));
        break;
    case 3:
        if (g->in_observe)
            random_env_put(g, "s%d", random_env_below(g, g->n_states));
        else
            random_env_put(g, "action");
        break;
    default:
        random_env_number(g);
        break;
    }
}

/* A bool: every comparison, and, or, not, ==/!= between bools. */
static void random_env_bool(random_env *g, int depth)
{
    static const char *const cmp[] = {"<", "<=", ">", ">=", "==", "!="};
    int pick = depth <= 0 ? 0 : random_env_below(g, 6);
    if (pick <= 2) {
        random_env_put(g, "(");
        random_env_real(g, depth - 1);
        random_env_put(g, " %s ", cmp[random_env_below(g, 6)]);
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
    } else if (pick == 3) {
        random_env_put(g, "(not ");
        random_env_bool(g, depth - 1);
        random_env_put(g, ")");
    } else {
        static const char *const logic[] = {"and", "or", "==", "!="};
        random_env_put(g, "(");
        random_env_bool(g, depth - 1);
        random_env_put(g, " %s ", logic[random_env_below(g, 4)]);
        random_env_bool(g, depth - 1);
        random_env_put(g, ")");
    }
}

/* A real: every arithmetic operator and math builtin. */
static void random_env_real(random_env *g, int depth)
{
    static const char *const unary[] = {"sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "floor", "abs", "f32"};
    static const char *const binary_fn[] = {"atan2", "pow", "fmod", "min", "max"};
    static const char *const binary_op[] = {"+", "-", "*", "/", "%"};
    if (depth <= 0 || random_env_below(g, 8) == 0) {
        random_env_leaf(g);
        return;
    }
    switch (random_env_below(g, 7)) {
    case 0:
        random_env_put(g, "%s(", unary[random_env_below(g, sizeof unary / sizeof unary[0])]);
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
        break;
    case 1:
        random_env_put(g, "%s(", binary_fn[random_env_below(g, sizeof binary_fn / sizeof binary_fn[0])]);
        random_env_real(g, depth - 1);
        random_env_put(g, ", ");
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
        break;
    case 2:
    case 3:
        random_env_put(g, "(");
        random_env_real(g, depth - 1);
        random_env_put(g, " %s ", binary_op[random_env_below(g, sizeof binary_op / sizeof binary_op[0])]);
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
        break;
    case 4:
        random_env_put(g, "(-");
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
        break;
    case 5:
        random_env_put(g, "clip(");
        random_env_real(g, depth - 1);
        random_env_put(g, ", ");
        random_env_number(g);
        random_env_put(g, ", ");
        random_env_number(g);
        random_env_put(g, ")");
        break;
    default:
        random_env_put(g, "(");
        random_env_bool(g, depth - 1);
        random_env_put(g, " ? ");
        random_env_real(g, depth - 1);
        random_env_put(g, " : ");
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
        break;
    }
}

/* Writes the program of `seed` into out (NUL-terminated); its length. */
static size_t random_env_program(uint64_t seed, char *out, size_t cap)
{
    random_env g = {.s = seed, .out = out, .cap = cap};
    out[0] = '\0';
    g.n_states = 1 + random_env_below(&g, 4);
    g.n_params = 1 + random_env_below(&g, 3);
    g.discrete = random_env_below(&g, 2);
    int depth = 2 + random_env_below(&g, 3);
    random_env_put(&g, "env random_%llu \"Random-v0\"\nmax_steps %d\n", (unsigned long long)(seed % 1000000),
                   10 + random_env_below(&g, 40));
    for (int k = 0; k < g.n_params; k++) {
        random_env_put(&g, "param p%d = ", k);
        random_env_number(&g);
        random_env_put(&g, "\n");
    }
    random_env_put(&g, "state");
    for (int k = 0; k < g.n_states; k++)
        random_env_put(&g, "%s s%d", k ? "," : "", k);
    random_env_put(&g, "\naction %s\nobserve",
                   g.discrete ? "discrete 3" : random_env_below(&g, 6) ? "box(-1, 1)" : "box(-1e39, 1e39)");
    for (int k = 0; k < g.n_states; k++)
        random_env_put(&g, "%s s%d", k ? "," : "", k);
    /* one observed expression, a NaN-maker one time in three */
    int nan_maker = random_env_below(&g, 3) == 0;
    random_env_put(&g, ", ");
    if (nan_maker)
        random_env_put(&g, "(s%d * 0) / (s%d * 0)", random_env_below(&g, g.n_states), random_env_below(&g, g.n_states));
    else {
        g.in_observe = true;
        random_env_real(&g, 2);
        g.in_observe = false;
    }
    random_env_put(&g, "\nreset {\n");
    for (int k = 0; k < g.n_states; k++)
        random_env_put(&g, "    s%d = uniform(-1, 1)\n", k);
    random_env_put(&g, "}\nstep {\n");
    g.in_step = true;
    /* Bounded updates: the interesting arithmetic happens inside. */
    for (int k = 0; k < g.n_states; k++) {
        random_env_put(&g, "    s%d' = clip(", k);
        random_env_real(&g, depth);
        random_env_put(&g, ", -10, 10)\n");
    }
    /* Rare enough that episodes run for a while. */
    random_env_put(&g, "    terminated = abs(s%d') > 9.0 and ", random_env_below(&g, g.n_states));
    random_env_bool(&g, 2);
    random_env_put(&g, "\n    reward = ");
    random_env_real(&g, depth);
    random_env_put(&g, "\n}\n");
    return g.len;
}

/* ---- random array programs, built with the IR builder (issue 26) ---- */

typedef struct {
    uint64_t s;
    cs_program *p;
    cs_graph *g;
    cs_type R;
    int stream;                 /* where a draw comes from: the step's or the restart's */
    unsigned next_draw[2];      /* the next free draw number of each stream */
    unsigned n_states;
    cs_node state[8];           /* CARRIED of each variable */
    bool discrete;
    const char *fault;          /* a generator bug: a builder call refused */
} random_graph;

static unsigned rg_below(random_graph *r, unsigned n) { return (unsigned)(splitmix_next(&r->s) % n); }

static cs_node rg_check(random_graph *r, cs_node n)
{
    if (!n && !r->fault)
        r->fault = cs_graph_error(r->g);
    return n;
}

static uint32_t rg_shape(random_graph *r, unsigned rank, const unsigned *dims)
{
    return rank ? cs_shape_id(r->g, rank, dims) : CS_SCALAR;
}

static const cs_shape *rg_of(random_graph *r, uint32_t shape) { return cs_shape_of(r->g, shape); }

/* A random shape: rank 0 to 3, dims 1 to 4. */
static uint32_t rg_random_shape(random_graph *r)
{
    unsigned rank = rg_below(r, 4), dims[3];
    for (unsigned k = 0; k < rank; k++)
        dims[k] = 1 + rg_below(r, 4);
    return rg_shape(r, rank, dims);
}

/* A shape that broadcasts to s: its trailing axes, some of them 1. */
static uint32_t rg_broadcastable(random_graph *r, uint32_t shape)
{
    const cs_shape *s = rg_of(r, shape);
    unsigned pick = rg_below(r, 10);
    if (pick < 6 || s->rank == 0)
        return shape;
    if (pick == 9)
        return CS_SCALAR;
    unsigned rank = 1 + rg_below(r, s->rank), dims[3];
    for (unsigned k = 0; k < rank; k++)
        dims[k] = rg_below(r, 3) == 0 ? 1 : s->dim[s->rank - rank + k];
    return rg_shape(r, rank, dims);
}

/* s with an axis of length n inserted at `axis`. */
static uint32_t rg_insert_axis(random_graph *r, uint32_t shape, unsigned axis, unsigned n)
{
    const cs_shape *s = rg_of(r, shape);
    unsigned dims[3], rank = 0;
    for (unsigned k = 0; k <= s->rank; k++) {
        if (k == axis)
            dims[rank++] = n;
        if (k < s->rank)
            dims[rank++] = s->dim[k];
    }
    return rg_shape(r, rank, dims);
}

static cs_node rg_const(random_graph *r, cs_type t)
{
    static const double reals[] = {0.5, 1.0, 2.0, -1.5, 0.25, 3.0, 0.1, -0.75, 7.0, 0.0, -2.0};
    static const double ints[] = {0, 1, 2, 3, -1, -2, 5, 7, 13};
    double v = t == CS_BOOL ? rg_below(r, 2)
             : t == CS_I32  ? ints[rg_below(r, sizeof ints / sizeof ints[0])]
                            : reals[rg_below(r, sizeof reals / sizeof reals[0])];
    return cs_const(r->g, t, v);
}

/* n as shape s (a broadcast when s is an array). */
static cs_node rg_as(random_graph *r, cs_node n, uint32_t shape)
{
    if (!n || cs_graph_node(r->g, n)->shape == shape)
        return n;
    return rg_check(r, cs_broadcast(r->g, n, shape));
}

static cs_node rg_draws(random_graph *r, cs_op op, cs_type t, uint32_t shape)
{
    unsigned k = r->next_draw[r->stream];
    r->next_draw[r->stream] += rg_of(r, shape)->size;
    return rg_check(r, cs_leaf_shaped(r->g, op, t, shape, CS_UNIFORM_ID(r->stream, k)));
}

static cs_node rg_table(random_graph *r, cs_type t, uint32_t shape)
{
    double v[256];
    unsigned size = rg_of(r, shape)->size;
    if (size > 256)
        return rg_as(r, rg_const(r, t), shape);
    for (unsigned e = 0; e < size; e++)
        v[e] = t == CS_BOOL ? rg_below(r, 2) : t == CS_I32 ? (double)rg_below(r, 11) - 5.0
                                                          : (double)(float)((double)rg_below(r, 61) / 10.0 - 3.0);
    return rg_check(r, cs_table(r->g, t, shape, v));
}

static cs_node rg_gen(random_graph *r, cs_type t, uint32_t shape, int depth);

/* An index read at run time: often in range, sometimes negative (from the
 * end) or past the end (clamped, or a scatter dropped). */
static cs_node rg_index(random_graph *r, int depth)
{
    static const double picks[] = {0, 1, 2, -1, -2, 3, 5, -7};
    if (depth > 0 && rg_below(r, 2))
        return rg_check(r, cs_binary(r->g, CS_OP_MOD, rg_gen(r, CS_I32, CS_SCALAR, depth - 1), cs_const(r->g, CS_I32, 7)));
    return cs_const(r->g, CS_I32, picks[rg_below(r, sizeof picks / sizeof picks[0])]);
}

static cs_node rg_leaf(random_graph *r, cs_type t, uint32_t shape)
{
    cs_graph *g = r->g;
    const cs_shape *s = rg_of(r, shape);
    bool step = r->stream == CS_STREAM_STEP;
    switch (rg_below(r, 8)) {
    case 0: case 1: case 2:
        if (step) {   /* a state of this type, as it is or broadcast */
            unsigned start = rg_below(r, r->n_states);
            for (unsigned k = 0; k < r->n_states; k++) {
                cs_node c = r->state[(start + k) % r->n_states];
                const cs_node_data *d = cs_graph_node(g, c);
                cs_shape both;
                if (d->type == t && cs_shape_broadcast(rg_of(r, d->shape), s, &both) && both.size == s->size &&
                    both.rank == s->rank)
                    return rg_as(r, c, shape);
            }
        }
        break;
    case 3:
        if (s->rank)
            return rg_table(r, t, shape);
        break;
    case 4:
        if (t == CS_I32 && s->rank)
            return rg_check(r, cs_leaf_shaped(g, CS_OP_IOTA, CS_I32, shape, rg_below(r, s->rank)));
        if (t == CS_I32)
            return rg_check(r, cs_binary(g, CS_OP_BOUNDED, rg_draws(r, CS_OP_RANDBITS, CS_U32, shape),
                                         rg_const(r, CS_I32)));
        if (cs_type_is_real(t))
            return rg_draws(r, CS_OP_UNIFORM, t, shape);
        break;
    case 5:
        if (cs_type_is_real(t) && r->p->n_params)
            return rg_as(r, cs_leaf(g, CS_OP_PARAM, t, 0), shape);
        if (t == CS_I32 && step && r->discrete)
            return rg_as(r, cs_leaf(g, CS_OP_INPUT, CS_I32, 0), shape);
        if (t == CS_I32 && step)
            return rg_as(r, cs_leaf(g, CS_OP_SEGSTEP, CS_I32, 0), shape);
        break;
    case 6:
        if (t == CS_I32)   /* random words to a range */
            return rg_check(r, cs_binary(g, CS_OP_BOUNDED, rg_draws(r, CS_OP_RANDBITS, CS_U32, shape),
                                         rg_index(r, 1)));
        if (cs_type_is_real(t) && step && !r->discrete)
            return rg_as(r, cs_leaf(g, CS_OP_INPUT, t, 0), shape);
        break;
    default:
        break;
    }
    return rg_as(r, rg_const(r, t), shape);
}

/* A shape op giving type t and shape `shape`. */
static cs_node rg_shape_op(random_graph *r, cs_type t, uint32_t shape, int depth)
{
    cs_graph *g = r->g;
    const cs_shape *s = rg_of(r, shape);
    unsigned rank = s->rank, dims[3] = {s->dim[0], s->dim[1], s->dim[2]};
    switch (rg_below(r, 9)) {
    case 0:   /* index: a sub-array */
        if (rank < 3) {
            unsigned n = 1 + rg_below(r, 4);
            return rg_check(r, cs_index(g, rg_gen(r, t, rg_insert_axis(r, shape, 0, n), depth - 1), rg_below(r, n)));
        }
        break;
    case 1: {   /* gather at 1 or 2 indices read at run time */
        unsigned k = 1 + (rank < 2 ? rg_below(r, 2) : 0);
        if (rank + k > 3)
            break;
        uint32_t from = shape;
        for (unsigned j = 0; j < k; j++)
            from = rg_insert_axis(r, from, 0, 1 + rg_below(r, 4));
        cs_node idx[2] = {rg_index(r, depth - 1), rg_index(r, depth - 1)};
        return rg_check(r, cs_gather(g, rg_gen(r, t, from, depth - 1), k, idx));
    }
    case 2:   /* scatter a value (a sub-array, or a scalar broadcast) */
        if (rank) {
            unsigned k = 1 + rg_below(r, rank);
            cs_node idx[3] = {rg_index(r, depth - 1), rg_index(r, depth - 1), rg_index(r, depth - 1)};
            unsigned sub[3], sr = 0;
            for (unsigned j = k; j < rank; j++)
                sub[sr++] = dims[j];
            uint32_t vs = rg_below(r, 3) ? rg_shape(r, sr, sub) : CS_SCALAR;
            return rg_check(r, cs_scatter(g, rg_gen(r, t, shape, depth - 1), rg_gen(r, t, vs, depth - 1), k, idx));
        }
        break;
    case 3:   /* slice of a bigger array */
        if (rank) {
            unsigned big[3], start[3];
            for (unsigned j = 0; j < rank; j++) {
                big[j] = dims[j] + rg_below(r, 3);
                start[j] = rg_below(r, big[j] - dims[j] + 1);
            }
            return rg_check(r, cs_slice(g, rg_gen(r, t, rg_shape(r, rank, big), depth - 1), start, dims));
        }
        break;
    case 4:   /* reshape from the same elements in another shape */
        if (rank) {
            unsigned flat = s->size, rev[3];
            for (unsigned j = 0; j < rank; j++)
                rev[j] = dims[rank - 1 - j];
            uint32_t from = rg_below(r, 2) ? rg_shape(r, 1, &flat) : rg_shape(r, rank, rev);
            return rg_check(r, cs_reshape(g, rg_gen(r, t, from, depth - 1), shape));
        }
        break;
    case 5:   /* shift or roll along an axis */
        if (rank) {
            unsigned axis = rg_below(r, rank);
            int amount = (int)rg_below(r, 11) - 5;
            cs_node a = rg_gen(r, t, shape, depth - 1);
            if (rg_below(r, 2))
                return rg_check(r, cs_roll(g, a, axis, amount));
            return rg_check(r, cs_shift(g, a, rg_gen(r, t, CS_SCALAR, depth - 1), axis, amount));
        }
        break;
    case 6: {   /* concat of two parts along an axis */
        unsigned axis = rank ? rg_below(r, rank) : 0;
        if (rank && dims[axis] >= 2) {
            unsigned cut = 1 + rg_below(r, dims[axis] - 1), a[3] = {dims[0], dims[1], dims[2]}, b[3] = {dims[0], dims[1], dims[2]};
            a[axis] = cut;
            b[axis] = dims[axis] - cut;
            cs_node parts[2] = {rg_gen(r, t, rg_shape(r, rank, a), depth - 1), rg_gen(r, t, rg_shape(r, rank, b), depth - 1)};
            return rg_check(r, cs_concat(g, 2, parts, axis));
        }
        break;
    }
    case 7:   /* stack on an axis */
        if (rank && dims[0] <= 8 && dims[1] <= 8 && dims[2] <= 8) {
            unsigned axis = rg_below(r, rank), n = dims[axis], item[3], ir = 0;
            for (unsigned j = 0; j < rank; j++)
                if (j != axis)
                    item[ir++] = dims[j];
            cs_node items[8];
            for (unsigned j = 0; j < n; j++)
                items[j] = rg_gen(r, t, rg_shape(r, ir, item), depth - 1);
            return rg_check(r, cs_stack_axis(g, n, items, axis));
        }
        break;
    default:   /* broadcast of a smaller shape */
        if (rank)
            return rg_check(r, cs_broadcast(g, rg_gen(r, t, rg_broadcastable(r, shape), depth - 1), shape));
        break;
    }
    return rg_gen(r, t, shape, depth - 1);
}

/* A reduction giving type t and shape `shape`: of an axis inserted into
 * it, or of every element of any array (a scalar). */
static cs_node rg_reduce(random_graph *r, cs_type t, uint32_t shape, int depth)
{
    static const cs_op real_ops[] = {CS_OP_SUM, CS_OP_RMIN, CS_OP_RMAX};
    static const cs_op int_ops[] = {CS_OP_SUM, CS_OP_RMIN, CS_OP_RMAX, CS_OP_ARGMAX, CS_OP_ARGMIN, CS_OP_NONZERO};
    static const cs_op bool_ops[] = {CS_OP_ANY, CS_OP_ALL};
    const cs_shape *s = rg_of(r, shape);
    cs_op op = t == CS_BOOL ? bool_ops[rg_below(r, 2)] : t == CS_I32 ? int_ops[rg_below(r, 6)] : real_ops[rg_below(r, 3)];
    cs_type from = t;
    if (op == CS_OP_ARGMAX || op == CS_OP_ARGMIN || op == CS_OP_NONZERO)
        from = rg_below(r, 2) ? r->R : CS_I32;
    if (op == CS_OP_NONZERO && rg_below(r, 3) == 0)
        from = CS_BOOL;
    int axis;
    uint32_t operand;
    if (s->rank == 0 && rg_below(r, 2)) {
        axis = CS_ALL_AXES;
        operand = rg_random_shape(r);
    } else if (s->rank < 3) {
        axis = (int)rg_below(r, s->rank + 1);
        operand = rg_insert_axis(r, shape, (unsigned)axis, 1 + rg_below(r, 4));
    } else {
        return rg_gen(r, t, shape, depth - 1);
    }
    return rg_check(r, cs_reduce(r->g, op, rg_gen(r, from, operand, depth - 1), axis));
}

static cs_node rg_gen(random_graph *r, cs_type t, uint32_t shape, int depth)
{
    if (r->fault)
        return 0;
    cs_graph *g = r->g;
    if (depth <= 0 || rg_below(r, 7) == 0)
        return rg_leaf(r, t, shape);
    unsigned pick = rg_below(r, 10);
    if (pick == 0)
        return rg_shape_op(r, t, shape, depth);
    if (pick == 1)
        return rg_reduce(r, t, shape, depth);
    cs_node a = rg_gen(r, t, shape, depth - 1);
    if (t == CS_BOOL) {
        static const cs_op cmp[] = {CS_OP_LT, CS_OP_LE, CS_OP_GT, CS_OP_GE, CS_OP_EQ, CS_OP_NE};
        switch (rg_below(r, 5)) {
        case 0: case 1: {
            cs_type from = rg_below(r, 2) ? r->R : CS_I32;
            return rg_check(r, cs_binary(g, cmp[rg_below(r, 6)], rg_gen(r, from, shape, depth - 1),
                                         rg_gen(r, from, rg_broadcastable(r, shape), depth - 1)));
        }
        case 2: return rg_check(r, cs_unary(g, CS_OP_NOT, a));
        case 3: return rg_check(r, cs_cast(g, CS_BOOL, rg_gen(r, CS_I32, shape, depth - 1)));
        default: {
            static const cs_op logic[] = {CS_OP_AND, CS_OP_OR, CS_OP_EQ, CS_OP_NE};
            return rg_check(r, cs_binary(g, logic[rg_below(r, 4)], a, rg_gen(r, CS_BOOL, rg_broadcastable(r, shape), depth - 1)));
        }
        }
    }
    cs_node b = rg_gen(r, t, rg_broadcastable(r, shape), depth - 1);
    if (rg_below(r, 2)) {
        cs_node x = a;
        a = b, b = x;
    }
    if (t == CS_I32) {
        static const cs_op ops[] = {CS_OP_ADD, CS_OP_SUB, CS_OP_MUL, CS_OP_IDIV, CS_OP_MOD, CS_OP_MIN, CS_OP_MAX};
        switch (rg_below(r, 6)) {
        case 0: return rg_check(r, cs_unary(g, rg_below(r, 2) ? CS_OP_NEG : CS_OP_ABS, rg_gen(r, t, shape, depth - 1)));
        case 1: return rg_check(r, cs_cast(g, CS_I32, rg_gen(r, rg_below(r, 3) ? r->R : CS_BOOL, shape, depth - 1)));
        case 2: return rg_check(r, cs_ternary(g, CS_OP_SELECT, rg_gen(r, CS_BOOL, rg_broadcastable(r, shape), depth - 1), a, b));
        case 3: return rg_check(r, cs_ternary(g, CS_OP_CLIP, rg_gen(r, t, shape, depth - 1), rg_const(r, t), rg_const(r, t)));
        default: return rg_check(r, cs_binary(g, ops[rg_below(r, 7)], a, b));
        }
    }
    static const cs_op unary[] = {CS_OP_NEG, CS_OP_ABS, CS_OP_SQRT, CS_OP_EXP, CS_OP_LOG, CS_OP_SIN,
                                  CS_OP_COS, CS_OP_TAN, CS_OP_TANH, CS_OP_FLOOR, CS_OP_ROUND_F32};
    static const cs_op binary[] = {CS_OP_ADD, CS_OP_SUB, CS_OP_MUL, CS_OP_DIV, CS_OP_POW, CS_OP_ATAN2,
                                   CS_OP_FMOD, CS_OP_MOD, CS_OP_MIN, CS_OP_MAX};
    switch (rg_below(r, 7)) {
    case 0: return rg_check(r, cs_unary(g, unary[rg_below(r, 11)], rg_gen(r, t, shape, depth - 1)));
    case 1: return rg_check(r, cs_cast(g, t, rg_gen(r, rg_below(r, 3) ? CS_I32 : CS_BOOL, shape, depth - 1)));
    case 2: return rg_check(r, cs_ternary(g, CS_OP_SELECT, rg_gen(r, CS_BOOL, rg_broadcastable(r, shape), depth - 1), a, b));
    case 3:
        if (rg_below(r, 4) == 0)
            return rg_check(r, cs_ternary(g, CS_OP_FMA, a, b, rg_gen(r, t, rg_broadcastable(r, shape), depth - 1)));
        return rg_check(r, cs_ternary(g, CS_OP_CLIP, rg_gen(r, t, shape, depth - 1), rg_const(r, t), rg_const(r, t)));
    default: return rg_check(r, cs_binary(g, binary[rg_below(r, 10)], a, b));
    }
}

/* A state's value kept in range: reals clipped to [-10, 10], integers
 * taken modulo 17 (Python's: in [0, 17)). */
static cs_node rg_bounded(random_graph *r, cs_node n)
{
    const cs_node_data *d = cs_graph_node(r->g, n);
    if (!n || d->type == CS_BOOL)
        return n;
    if (d->type == CS_I32)
        return rg_check(r, cs_binary(r->g, CS_OP_MOD, n, cs_const(r->g, CS_I32, 17)));
    return rg_check(r, cs_ternary(r->g, CS_OP_CLIP, n, cs_const(r->g, d->type, -10), cs_const(r->g, d->type, 10)));
}

/* The program of `seed` in the real type R (a finished program with the
 * random policy bound), or NULL with the builder's complaint in why (a
 * generator bug). */
static inline cs_program *random_env_graph(uint64_t seed, cs_type R, char *why, size_t why_size)
{
    random_graph r = {.s = seed ^ 0x5eed0a11a11a11ull, .R = R};
    r.p = cs_program_new(R);
    if (!r.p) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    r.g = r.p->graph;
    snprintf(r.p->name, sizeof r.p->name, "graph_%llu", (unsigned long long)(seed % 1000000));
    snprintf(r.p->title, sizeof r.p->title, "RandomGraph-v0");
    r.p->max_steps = 10 + rg_below(&r, 40);
    r.discrete = rg_below(&r, 2);
    r.p->action_kind = r.discrete ? CS_ACTION_DISCRETE : CS_ACTION_BOX;
    r.p->n_actions = r.discrete ? 3 : 0;
    cs_program_add_input(r.p, "action", r.discrete ? CS_I32 : R, -1, 1);
    if (rg_below(&r, 2))
        cs_program_add_param(r.p, "p0", R);
    /* states: a real array always; then arrays or scalars of any type */
    r.n_states = 2 + rg_below(&r, 4);
    for (unsigned k = 0; k < r.n_states; k++) {
        cs_type t = k == 0 ? R : (cs_type[]){R, CS_I32, CS_BOOL}[rg_below(&r, 3)];
        uint32_t shape = rg_random_shape(&r);
        if (k == 0 && shape == CS_SCALAR)
            shape = rg_shape(&r, 1, (unsigned[]){3});
        char name[16];
        snprintf(name, sizeof name, "s%u", k);
        int v = cs_program_add_state(r.p, name, t, shape);
        r.state[k] = v < 0 ? 0 : rg_check(&r, cs_leaf_shaped(r.g, CS_OP_CARRIED, t, shape, r.p->vars[v].slot));
    }
    int depth = 2 + (int)rg_below(&r, 3);
    r.stream = CS_STREAM_RESTART;
    for (unsigned k = 0; k < r.n_states && !r.fault; k++) {
        const cs_node_data *d = cs_graph_node(r.g, r.state[k]);
        r.p->restart[k] = rg_bounded(&r, rg_gen(&r, (cs_type)d->type, d->shape, 2));
    }
    if (r.p->n_params && rg_below(&r, 2))
        r.p->param_restart[0] = rg_check(&r, cs_binary(r.g, CS_OP_MUL, rg_draws(&r, CS_OP_UNIFORM, R, CS_SCALAR),
                                                      cs_const(r.g, R, 2.0)));
    r.stream = CS_STREAM_STEP;
    for (unsigned k = 0; k < r.n_states && !r.fault; k++) {
        const cs_node_data *d = cs_graph_node(r.g, r.state[k]);
        r.p->next[k] = rg_bounded(&r, rg_gen(&r, (cs_type)d->type, d->shape, depth));
    }
    if (!r.fault) {
        r.p->reward = rg_bounded(&r, rg_gen(&r, R, CS_SCALAR, depth));
        /* rare enough that episodes run for a while */
        cs_node rare = rg_check(&r, cs_binary(r.g, CS_OP_LT, rg_draws(&r, CS_OP_UNIFORM, R, CS_SCALAR), cs_const(r.g, R, 0.08)));
        r.p->terminated = rg_check(&r, cs_binary(r.g, CS_OP_AND, rg_gen(&r, CS_BOOL, CS_SCALAR, 2), rare));
    }
    /* observations of every kind: the states as boxes, an integer as discrete */
    for (unsigned k = 0; k < r.n_states && !r.fault; k++) {
        const cs_node_data *d = cs_graph_node(r.g, r.state[k]);
        cs_node o = r.state[k];
        if (d->type == CS_I32 && rg_below(&r, 2)) {
            o = rg_check(&r, cs_ternary(r.g, CS_OP_CLIP, o, cs_const(r.g, CS_I32, 0), cs_const(r.g, CS_I32, 9)));
            cs_program_add_obs(r.p, NULL, o, CS_OBS_DISCRETE, 0, 0, 10);
        } else {
            cs_program_add_obs(r.p, NULL, o, CS_OBS_BOX, -INFINITY, INFINITY, 0);
        }
    }
    char err[256] = "";
    if (!r.fault && (cs_program_finish(r.p, err, sizeof err) || cs_policy_random(r.p) || cs_program_bind_policy(r.p)))
        r.fault = err[0] ? err : "binding the random policy failed";
    if (r.fault) {
        snprintf(why, why_size, "seed %llu: %s", (unsigned long long)seed, r.fault);
        cs_program_free(r.p);
        return NULL;
    }
    return r.p;
}

#define RANDOM_ENV_MAX_ENVS 64
#define RANDOM_ENV_MAX_OBS 5   /* the states (4 at most) and one observed expression */

/* What a backend made of a program: a rollout's statistics, then the
 * observations and rewards of a few steps after it. */
typedef struct {
    cs_rollout_stats stats;
    int64_t n_envs;
    unsigned n_obs;
    float obs[RANDOM_ENV_MAX_OBS * RANDOM_ENV_MAX_ENVS];
    double rewards[RANDOM_ENV_MAX_ENVS];
} random_env_result;

/* Runs the program at `path` on a backend: `envs` environments (at most
 * RANDOM_ENV_MAX_ENVS) from reset seed `seed`, a rollout of `steps`, then
 * three steps with fixed actions. false, and why, when it did not run. */
static inline bool random_env_run(const char *path, cs_backend backend, cs_dtype dtype, int64_t envs, uint64_t seed,
                                  int64_t steps, const volatile sig_atomic_t *interrupt, random_env_result *r,
                                  char *why, size_t size)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = path;
    cfg.num_envs = envs;
    cfg.backend = backend;
    cfg.dtype = dtype;
    cfg.threads = 1;
    cfg.no_cache = true;   /* throwaway kernels: not the cache's business */
    cfg.interrupt = interrupt;
    memset(r, 0, sizeof *r);
    cs_env *env = NULL;
    cs_env_info info;
    cs_status st = cs_env_open(&cfg, &env);
    if (st == CS_OK && (st = cs_env_get_info(env, &info)) == CS_OK &&
        (info.obs_dim > RANDOM_ENV_MAX_OBS || envs > RANDOM_ENV_MAX_ENVS || (!info.discrete && info.action_dim != 1)))
        st = CS_ERR_LIMIT;
    if (st == CS_OK && (st = cs_env_reset(env, seed)) == CS_OK)
        st = cs_env_rollout(env, steps, &r->stats);
    for (int k = 0; k < 3 && st == CS_OK; k++) {
        int32_t ints[RANDOM_ENV_MAX_ENVS];
        float reals[RANDOM_ENV_MAX_ENVS];
        for (int64_t i = 0; i < envs; i++) {
            ints[i] = (int32_t)((i + k) % 3);
            reals[i] = (float)((i + k) % 5 - 2) * 0.25f;
        }
        st = cs_env_step(env, info.discrete ? (const void *)ints : (const void *)reals);
    }
    if (st == CS_OK) {
        r->n_envs = envs;
        r->n_obs = info.obs_dim;
        memcpy(r->obs, cs_env_obs(env), sizeof(float) * info.obs_dim * (size_t)envs);
        memcpy(r->rewards, cs_env_rewards(env), sizeof(double) * (size_t)envs);
    } else {
        snprintf(why, size, "%s on %s: %s", cs_status_string(st), cs_backend_name(backend),
                 env ? cs_env_error(env) : "out of memory");
    }
    cs_env_close(env);
    return st == CS_OK;
}

/* Whether the cpu backend's and the interpreter's results of one program
 * differ, for the two differential harnesses: in the checksum, the
 * episodes, the non-finite restarts or the mean return, or in any bit of
 * the observations and rewards after it (NaN included: every backend gives
 * out one NaN). If they differ, what each gave, into why. */
static inline bool random_env_results_differ(const random_env_result *a, const random_env_result *b, char *why,
                                             size_t size)
{
    const cs_rollout_stats *cpu = &a->stats, *interp = &b->stats;
    if (cpu->checksum != interp->checksum || cpu->episodes != interp->episodes ||
        cpu->nonfinite != interp->nonfinite || memcmp(&cpu->mean_return, &interp->mean_return, sizeof(double)) != 0) {
        snprintf(why, size,
                 "cpu %016llx (%lld episodes, %lld non-finite, mean return %a), interpreter %016llx (%lld, %lld, %a)",
                 (unsigned long long)cpu->checksum, (long long)cpu->episodes, (long long)cpu->nonfinite,
                 cpu->mean_return, (unsigned long long)interp->checksum, (long long)interp->episodes,
                 (long long)interp->nonfinite, interp->mean_return);
        return true;
    }
    for (unsigned k = 0; k < a->n_obs * (unsigned)a->n_envs; k++) {
        uint32_t x, y;
        memcpy(&x, &a->obs[k], 4);
        memcpy(&y, &b->obs[k], 4);
        if (x != y) {
            snprintf(why, size, "observation %u of environment %u: cpu %08x, interpreter %08x", k / (unsigned)a->n_envs,
                     k % (unsigned)a->n_envs, x, y);
            return true;
        }
    }
    for (int64_t i = 0; i < a->n_envs; i++)
        if (memcmp(&a->rewards[i], &b->rewards[i], sizeof(double)) != 0) {
            snprintf(why, size, "reward of environment %lld: cpu %a, interpreter %a", (long long)i, a->rewards[i],
                     b->rewards[i]);
            return true;
        }
    return false;
}

#endif
