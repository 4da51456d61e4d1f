/* The emitter lowers arrays, integers and every op of jit/ops.def (issue
 * 26): one program computes every op over arrays of rank 1, 2 and 3 (and
 * scalars), NumPy-broadcast, of reals (f32 and f64), i32 and bool, each
 * result a state of its own. From lanes filled with ordinary and special
 * values (+-0, subnormals, +-inf, NaN, INT_MIN, indices negative and out of
 * range), the step, restart and rollout entry points of the cpu backend
 * (the C dialect's block code, every fusion mode, persistent and a launch
 * per kernel) and of the CUDA dialect built as host C (tests/cuda_shim.h)
 * give the interpreter's bits (jit/interp.c, the reference); NVRTC
 * compiles the CUDA dialect. Programs are built with the IR builder (the
 * front end does not speak arrays yet). */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents.h"
#include "jit.h"
#include "lanes_any.h"
#include "splitmix.h"

typedef struct {
    cs_program *p;
    cs_graph *g;
    cs_type R;
    uint32_t s3, s2, s1, s41;       /* [2,3,4], [3,4], [4], [4,1] */
    cs_node x3, w3, x2, x1, x0;     /* reals */
    cs_node i3, i2, i1, i0;         /* i32 */
    cs_node b3, b1, b0;             /* bools */
    unsigned results;
} opset;

static uint32_t shape_of(cs_graph *g, unsigned rank, unsigned d0, unsigned d1, unsigned d2)
{
    unsigned dims[3] = {d0, d1, d2};
    return rank ? cs_shape_id(g, rank, dims) : CS_SCALAR;
}

static cs_node zeros(opset *o, cs_type t, uint32_t shape)
{
    cs_node z = cs_const(o->g, t, 0);
    return shape == CS_SCALAR ? z : cs_broadcast(o->g, z, shape);
}

/* A state variable whose value stays (an operand of the ops). */
static cs_node operand(opset *o, const char *name, cs_type t, uint32_t shape)
{
    int v = cs_program_add_state(o->p, name, t, shape);
    cr_assert_geq(v, 0);
    cs_node c = cs_leaf_shaped(o->g, CS_OP_CARRIED, t, shape, o->p->vars[v].slot);
    cr_assert(c, "%s", cs_graph_error(o->g));
    o->p->next[v] = c;
    o->p->restart[v] = zeros(o, t, shape);
    return c;
}

/* A state variable whose next value is n (one op's result). */
static void result_at(opset *o, cs_node n, const char *what, int line)
{
    cr_assert(n, "line %d, %s: %s", line, what, cs_graph_error(o->g));
    const cs_node_data *d = cs_graph_node(o->g, n);
    char name[32];
    snprintf(name, sizeof name, "r%u", o->results++);
    int v = cs_program_add_state(o->p, name, (cs_type)d->type, d->shape);
    cr_assert_geq(v, 0);
    o->p->next[v] = n;
    o->p->restart[v] = zeros(o, (cs_type)d->type, d->shape);
}
#define result(o, n) result_at(o, n, #n, __LINE__)

static cs_node un(opset *o, cs_op op, cs_node a) { return cs_unary(o->g, op, a); }
static cs_node bi(opset *o, cs_op op, cs_node a, cs_node b) { return cs_binary(o->g, op, a, b); }
static cs_node K(opset *o, cs_type t, double v) { return cs_const(o->g, t, v); }
static cs_node at(opset *o, cs_node a, unsigned k) { return cs_index(o->g, a, k); }

static cs_node table(opset *o, cs_type t, uint32_t shape, double scale)
{
    const cs_shape *s = cs_shape_of(o->g, shape);
    double v[64];
    for (unsigned e = 0; e < s->size; e++)
        v[e] = t == CS_BOOL ? (e * 7 % 3 == 0) : t == CS_I32 ? (double)((int)(e * 37 % 11) - 5) : scale * (e * 0.37 - 2.1);
    if (t == CS_F32)
        for (unsigned e = 0; e < s->size; e++)
            v[e] = (float)v[e];
    return cs_table(o->g, t, shape, v);
}

/* Every op, over the operands' ranks and types. */
static cs_program *every_op(cs_type R)
{
    opset O = {.p = cs_program_new(R), .R = R}, *o = &O;
    cs_graph *g = o->g = o->p->graph;
    snprintf(o->p->name, sizeof o->p->name, "every_op");
    snprintf(o->p->title, sizeof o->p->title, "EveryOp-v0");
    o->s3 = shape_of(g, 3, 2, 3, 4);
    o->s2 = shape_of(g, 2, 3, 4, 1);
    o->s1 = shape_of(g, 1, 4, 1, 1);
    o->s41 = shape_of(g, 2, 4, 1, 1);
    o->x3 = operand(o, "x3", R, o->s3);
    o->w3 = operand(o, "w3", R, o->s3);
    o->x2 = operand(o, "x2", R, o->s2);
    o->x1 = operand(o, "x1", R, o->s1);
    o->x0 = operand(o, "x0", R, CS_SCALAR);
    o->i3 = operand(o, "i3", CS_I32, o->s3);
    o->i2 = operand(o, "i2", CS_I32, o->s2);
    o->i1 = operand(o, "i1", CS_I32, o->s1);
    o->i0 = operand(o, "i0", CS_I32, CS_SCALAR);
    o->b3 = operand(o, "b3", CS_BOOL, o->s3);
    o->b1 = operand(o, "b1", CS_BOOL, o->s1);
    o->b0 = operand(o, "b0", CS_BOOL, CS_SCALAR);
    o->p->action_kind = CS_ACTION_DISCRETE;
    o->p->n_actions = 3;
    cr_assert_eq(cs_program_add_input(o->p, "action", CS_I32, 0, 2), 0);
    cr_assert_eq(cs_program_add_param(o->p, "k", R), 0);
    cs_node action = cs_leaf(g, CS_OP_INPUT, CS_I32, 0), param = cs_leaf(g, CS_OP_PARAM, R, 0);
    cs_node segstep = cs_leaf(g, CS_OP_SEGSTEP, CS_I32, 0);

    /* elementwise reals: same shapes, rank 3 and 2, rank 2 and 1, rank 1 and a scalar */
    const cs_op real_binary[] = {CS_OP_ADD, CS_OP_SUB, CS_OP_MUL, CS_OP_DIV, CS_OP_POW, CS_OP_ATAN2,
                                 CS_OP_FMOD, CS_OP_MOD, CS_OP_MIN, CS_OP_MAX};
    const cs_node rpairs[][2] = {{o->x3, o->w3}, {o->x3, o->x2}, {o->x2, o->x1}, {o->x0, o->x1}};
    for (size_t k = 0; k < sizeof real_binary / sizeof real_binary[0]; k++)   /* two patterns each, in turn */
        for (size_t j = 0; j < 2; j++)
            result(o, bi(o, real_binary[k], rpairs[(k + 2 * j) % 4][0], rpairs[(k + 2 * j) % 4][1]));
    const cs_op compare[] = {CS_OP_LT, CS_OP_LE, CS_OP_GT, CS_OP_GE, CS_OP_EQ, CS_OP_NE};
    for (size_t k = 0; k < 6; k++) {
        result(o, k % 2 ? bi(o, compare[k], o->x3, o->x2) : bi(o, compare[k], o->x1, o->x0));
        result(o, k % 2 ? bi(o, compare[k], o->i0, o->i1) : bi(o, compare[k], o->i3, o->i2));
    }
    const cs_op real_unary[] = {CS_OP_NEG, CS_OP_ABS, CS_OP_SQRT, CS_OP_EXP, CS_OP_LOG, CS_OP_SIN,
                                CS_OP_COS, CS_OP_TAN, CS_OP_TANH, CS_OP_FLOOR, CS_OP_ROUND_F32};
    for (size_t k = 0; k < sizeof real_unary / sizeof real_unary[0]; k++) {
        result(o, un(o, real_unary[k], o->x3));
        result(o, un(o, real_unary[k], o->x1));
    }
    /* a chain of one shape (one nest in the C dialect) with a broadcast operand */
    result(o, un(o, CS_OP_SIN, bi(o, CS_OP_ADD, bi(o, CS_OP_MUL, o->x3, o->w3), o->x2)));
    result(o, cs_ternary(g, CS_OP_CLIP, o->x3, o->x2, o->x1));
    result(o, cs_ternary(g, CS_OP_CLIP, o->x1, o->x0, K(o, R, 2.5)));
    result(o, cs_ternary(g, CS_OP_SELECT, o->b3, o->x3, o->x2));
    result(o, cs_ternary(g, CS_OP_SELECT, o->b0, o->x2, o->x1));

    /* integers: wrapping, Python's // and %, min, max, clip, abs, neg */
    const cs_op int_binary[] = {CS_OP_ADD, CS_OP_SUB, CS_OP_MUL, CS_OP_MOD, CS_OP_IDIV, CS_OP_MIN, CS_OP_MAX};
    const cs_node ipairs[][2] = {{o->i3, o->i2}, {o->i2, o->i1}, {o->i1, o->i0}};
    for (size_t k = 0; k < sizeof int_binary / sizeof int_binary[0]; k++)
        for (size_t j = 0; j < 3; j++)
            result(o, bi(o, int_binary[k], ipairs[j][0], ipairs[j][1]));
    result(o, un(o, CS_OP_NEG, o->i3));
    result(o, un(o, CS_OP_ABS, o->i1));
    result(o, cs_ternary(g, CS_OP_CLIP, o->i3, o->i1, o->i0));
    result(o, cs_ternary(g, CS_OP_SELECT, o->b1, o->i1, o->i0));
    /* bools */
    result(o, bi(o, CS_OP_AND, o->b3, o->b1));
    result(o, bi(o, CS_OP_OR, o->b1, o->b0));
    result(o, bi(o, CS_OP_EQ, o->b3, o->b1));
    result(o, bi(o, CS_OP_NE, o->b0, o->b1));
    result(o, un(o, CS_OP_NOT, o->b3));
    result(o, cs_ternary(g, CS_OP_SELECT, o->b3, o->b1, o->b0));
    /* casts between every pair of types (u32 through i32) */
    result(o, cs_cast(g, CS_I32, o->x3));
    result(o, cs_cast(g, CS_BOOL, o->x2));
    result(o, cs_cast(g, R, o->i3));
    result(o, cs_cast(g, R, o->b3));
    result(o, cs_cast(g, CS_BOOL, o->i1));
    result(o, cs_cast(g, CS_I32, o->b1));
    result(o, cs_cast(g, CS_I32, cs_cast(g, CS_U32, o->x1)));
    result(o, cs_cast(g, R, cs_cast(g, CS_U32, o->i2)));
    /* random words to a range; draws as arrays */
    uint32_t s34 = o->s2;
    cs_node bits = cs_leaf_shaped(g, CS_OP_RANDBITS, CS_U32, s34, CS_UNIFORM_ID(CS_STREAM_STEP, 0));
    result(o, bi(o, CS_OP_BOUNDED, bits, o->i0));
    result(o, bi(o, CS_OP_BOUNDED, cs_cast(g, CS_U32, o->i3), o->i2));
    result(o, bi(o, CS_OP_BOUNDED, cs_cast(g, CS_U32, o->i1), K(o, CS_I32, 6)));
    result(o, cs_cast(g, CS_I32, bits));
    cs_node u3 = cs_leaf_shaped(g, CS_OP_UNIFORM, R, o->s3, CS_UNIFORM_ID(CS_STREAM_STEP, 12));
    result(o, u3);
    result(o, bi(o, CS_OP_ADD, cs_leaf(g, CS_OP_UNIFORM, R, CS_UNIFORM_ID(CS_STREAM_STEP, 36)), o->x1));
    /* leaves: tables, indices, the step count, a parameter, the action */
    cs_node t3 = table(o, R, o->s3, 1.5), t2 = table(o, CS_I32, s34, 1), t1 = table(o, CS_BOOL, o->s1, 1);
    result(o, bi(o, CS_OP_ADD, t3, o->x3));
    result(o, bi(o, CS_OP_MUL, t2, o->i2));
    result(o, bi(o, CS_OP_AND, t1, o->b1));
    for (int axis = 0; axis < 3; axis++)
        result(o, bi(o, CS_OP_ADD, cs_leaf_shaped(g, CS_OP_IOTA, CS_I32, o->s3, axis), o->i3));
    result(o, bi(o, CS_OP_ADD, segstep, o->i1));
    result(o, bi(o, CS_OP_MUL, param, o->x2));
    result(o, bi(o, CS_OP_SUB, o->i1, action));

    /* moving elements */
    cs_node two1[2] = {o->x1, at(o, o->x2, 1)};
    result(o, cs_stack_axis(g, 2, two1, 0));
    result(o, cs_stack_axis(g, 2, two1, 1));
    cs_node two2[2] = {o->i2, t2};
    result(o, cs_stack_axis(g, 2, two2, 2));
    cs_node scalars[3] = {o->x0, at(o, o->x1, 2), K(o, R, 0.25)};
    cs_node packed = cs_stack(g, 3, scalars);
    result(o, cs_reduce(g, CS_OP_SUM, packed, CS_ALL_AXES));
    result(o, bi(o, CS_OP_MUL, packed, o->x0));
    result(o, at(o, o->x3, 1));
    result(o, at(o, at(o, o->x3, 0), 2));
    result(o, at(o, o->x1, 3));
    result(o, at(o, o->b1, 2));
    cs_node idx1[1] = {o->i0}, idx2[2] = {o->i0, at(o, o->i1, 1)}, idx3[3] = {at(o, o->i1, 0), o->i0, at(o, o->i1, 3)};
    result(o, cs_gather(g, o->x3, 1, idx1));
    result(o, cs_gather(g, o->x3, 2, idx2));
    result(o, cs_gather(g, o->x3, 3, idx3));
    result(o, cs_gather(g, o->i2, 1, idx1));
    result(o, cs_gather(g, o->b3, 2, idx2));
    result(o, cs_gather(g, t3, 3, idx3));
    result(o, cs_gather(g, o->x1, 1, idx1));
    result(o, cs_scatter(g, o->x3, o->x1, 2, idx2));
    result(o, cs_scatter(g, o->x3, o->x0, 1, idx1));
    result(o, cs_scatter(g, o->i2, o->i1, 1, idx1));
    result(o, cs_scatter(g, o->b3, o->b0, 3, idx3));
    result(o, cs_scatter(g, o->x2, cs_reshape(g, o->x0, shape_of(g, 1, 1, 1, 1)), 1, idx1));
    result(o, cs_scatter(g, o->i1, K(o, CS_I32, -9), 1, idx1));
    unsigned st3[3] = {1, 1, 1}, ex3[3] = {1, 2, 3}, st1[1] = {1}, ex1[1] = {2}, st2[2] = {0, 1}, ex2[2] = {3, 2};
    result(o, cs_slice(g, o->x3, st3, ex3));
    result(o, cs_slice(g, o->i1, st1, ex1));
    result(o, cs_slice(g, o->x2, st2, ex2));
    result(o, cs_reshape(g, o->x3, shape_of(g, 2, 6, 4, 1)));
    result(o, cs_reshape(g, o->i2, shape_of(g, 1, 12, 1, 1)));
    result(o, cs_reshape(g, o->b1, shape_of(g, 2, 2, 2, 1)));
    result(o, cs_broadcast(g, o->x1, o->s3));
    result(o, cs_broadcast(g, o->x0, o->s2));
    result(o, cs_broadcast(g, cs_reshape(g, o->x1, o->s41), shape_of(g, 3, 2, 4, 3)));
    result(o, cs_shift(g, o->x3, o->x0, 2, 1));
    result(o, cs_shift(g, o->x3, o->x0, 0, -1));
    result(o, cs_shift(g, o->i1, o->i0, 0, 3));
    result(o, cs_shift(g, o->b3, o->b0, 1, 5));
    result(o, cs_shift(g, o->x2, K(o, R, -7), 1, -4));
    result(o, cs_roll(g, o->x3, 1, 1));
    result(o, cs_roll(g, o->x3, 2, -5));
    result(o, cs_roll(g, o->b1, 0, 1));
    result(o, cs_roll(g, o->i2, 0, 7));
    cs_node cat3[2] = {o->x3, o->w3}, cat1[2] = {o->x1, cs_slice(g, o->x1, st1, ex1)}, cat2[2] = {o->i2, t2};
    result(o, cs_concat(g, 2, cat3, 1));
    result(o, cs_concat(g, 2, cat1, 0));
    result(o, cs_concat(g, 2, cat2, 1));

    /* reductions: every element, and each axis */
    const cs_op numeric_reduce[] = {CS_OP_SUM, CS_OP_RMIN, CS_OP_RMAX, CS_OP_ARGMAX, CS_OP_ARGMIN, CS_OP_NONZERO};
    for (size_t k = 0; k < 6; k++) {
        for (int axis = -1; axis < 3; axis++)
            result(o, cs_reduce(g, numeric_reduce[k], o->x3, axis));
        result(o, cs_reduce(g, numeric_reduce[k], o->i3, CS_ALL_AXES));
        result(o, cs_reduce(g, numeric_reduce[k], o->i2, 1));
        result(o, cs_reduce(g, numeric_reduce[k], o->x1, 0));
    }
    const cs_op bool_reduce[] = {CS_OP_ANY, CS_OP_ALL, CS_OP_NONZERO};
    for (size_t k = 0; k < 3; k++) {
        result(o, cs_reduce(g, bool_reduce[k], o->b3, CS_ALL_AXES));
        result(o, cs_reduce(g, bool_reduce[k], o->b3, 2));
        result(o, cs_reduce(g, bool_reduce[k], o->b1, 0));
    }
    result(o, cs_reduce(g, CS_OP_SUM, o->x0, CS_ALL_AXES));
    /* a reduction read back by an elementwise op of its operand's shape */
    result(o, bi(o, CS_OP_SUB, o->x3, cs_reduce(g, CS_OP_SUM, o->x3, 0)));
    result(o, bi(o, CS_OP_ADD, o->i3, cs_reduce(g, CS_OP_RMAX, o->i3, 0)));

    /* observations of every kind; a reward and an end from the arrays */
    cr_assert_geq(cs_program_add_obs(o->p, "x3", o->x3, CS_OBS_BOX, -INFINITY, INFINITY, 0), 0);
    cr_assert_geq(cs_program_add_obs(o->p, "x0", o->x0, CS_OBS_BOX, -INFINITY, INFINITY, 0), 0);
    cr_assert_geq(cs_program_add_obs(o->p, "i1", o->i1, CS_OBS_DISCRETE, 0, 0, 10), 0);
    cr_assert_geq(cs_program_add_obs(o->p, "b0", o->b0, CS_OBS_DISCRETE, 0, 0, 2), 0);
    cr_assert_geq(cs_program_add_obs(o->p, "b3", o->b3, CS_OBS_BOX, 0, 1, 0), 0);
    o->p->reward = cs_reduce(g, CS_OP_SUM, o->x2, CS_ALL_AXES);
    o->p->terminated = cs_reduce(g, CS_OP_ANY, o->b1, CS_ALL_AXES);
    o->p->max_steps = 3;
    char err[256];
    cr_assert_eq(cs_program_finish(o->p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cs_policy_random(o->p), 0);
    cr_assert_eq(cs_program_bind_policy(o->p), 0);
    return o->p;
}

/* Ordinary and special values of each type, drawn per lane and element. */
static const double real_values[] = {
    0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.0, 3.0, 7.25, 0.1, -0.3, 100.5, 1e-40, -1e-42, 5e-324, 1e10, -1e30,
    3.4e38, 1e300, 0x1.000032p-1, 1e5 + 0.5, INFINITY, -INFINITY, NAN, 2147483648.0, -2147483649.0, 4294967296.5,
    -7.0, 65535.75, -0.75,
};
static const int int_values[] = {
    0, 1, -1, 2, -2, 3, -3, 4, 5, 7, -7, 100, -100, 65535, -65536, INT_MAX, INT_MIN, INT_MIN + 1, 123456789, 24, -4, 6,
};

static void fill(lanes_any *b, uint64_t seed)
{
    const cs_program *p = b->p;
    uint64_t s = seed;
    for (unsigned k = 0; k < p->n_carried; k++)
        for (long long i = 0; i < b->n; i++) {
            uint64_t r = splitmix_next(&s);
            switch (p->carried[k].type) {
            case CS_F32: ((float *)b->carried[k])[i] = (float)real_values[r % (sizeof real_values / sizeof real_values[0])]; break;
            case CS_F64: ((double *)b->carried[k])[i] = real_values[r % (sizeof real_values / sizeof real_values[0])]; break;
            case CS_I32: ((int *)b->carried[k])[i] = int_values[r % (sizeof int_values / sizeof int_values[0])]; break;
            default: ((unsigned char *)b->carried[k])[i] = (unsigned char)(r & 1); break;
            }
        }
    for (unsigned k = 0; k < p->n_params; k++)
        for (long long i = 0; i < b->n; i++) {
            double v = real_values[splitmix_next(&s) % 20];
            if (p->real == CS_F32)
                ((float *)b->params[k])[i] = (float)v;
            else
                ((double *)b->params[k])[i] = v;
        }
    for (unsigned k = 0; k < p->n_inputs; k++)
        for (long long i = 0; i < b->n; i++)
            ((int *)b->inputs[k])[i] = (int)(splitmix_next(&s) % 3);
    for (long long i = 0; i < b->n; i++) {
        b->segstep[i] = (int)(splitmix_next(&s) % 3);
        b->pending[i] = (unsigned char)(splitmix_next(&s) % 5 == 0);
    }
    for (long long w = 0; w < b->n * (p->n_step_draws + 1); w++)
        b->step_words[w] = (unsigned int)splitmix_next(&s);
    for (long long w = 0; w < b->n * (p->n_restart_draws + 1); w++)
        b->restart_words[w] = (unsigned int)splitmix_next(&s);
}

static char shim[600];

static void setup(void)
{
    const char *r = getenv("CARTSIM_ROOT");
    snprintf(shim, sizeof shim, "%s/tests/cuda_shim.h", r && *r ? r : ".");
}

TestSuite(arrays, .init = setup);

enum { LANES = 300 };   /* several blocks of the C dialect, the last one partial */

static void open_runner(runner *r, const cs_program *p, run_backend b, cs_fusion f, int unroll, bool launches)
{
    char err[4096];
    cr_assert_eq(runner_open(r, p, b, f, unroll, shim, err, sizeof err), 0, "%s (%s, %s, unroll %d)", err,
                 b == RUN_CPU ? "C" : "CUDA", cs_fusion_name(f), unroll);
    r->launches = launches;
}

static void expect_same(const lanes_any *ref, const lanes_any *got, bool obs, const char *what)
{
    char why[512];
    cr_assert(!lanes_any_differ(ref, got, obs, why, sizeof why), "%s: %s", what, why);
}

/* Steps in each auto-reset mode (replayed words or Philox's), restarts,
 * then rollouts, on every backend; each must equal the interpreter. */
static void every_op_agrees(cs_type R)
{
    cs_program *p = every_op(R);
    struct {
        run_backend backend;
        cs_fusion fusion;
        int unroll;
        bool launches;
    } runs[] = {   /* (the random array programs of tests/test_differential.c take the other schedules) */
        {RUN_CPU, CS_FUSION_FULL, 1, false}, {RUN_SHIM, CS_FUSION_FULL, 2, false},
        {RUN_CPU, CS_FUSION_NONE, 1, true},  {RUN_SHIM, CS_FUSION_NONE, 1, false},
    };
    size_t n_runs = R == CS_F64 ? 4 : 2;   /* every op between kernels: f64 */
    const int modes[] = {CS_MODE_NO_RESTART, CS_MODE_NEXT_STEP, CS_MODE_SAME_STEP};
    runner ref;
    open_runner(&ref, p, RUN_INTERP, CS_FUSION_FULL, 1, false);
    for (size_t r = 0; r < n_runs; r++) {
        runner got;
        open_runner(&got, p, runs[r].backend, runs[r].fusion, runs[r].unroll, runs[r].launches);
        char what[200];
        for (int m = 0; m < 3; m++)
            for (int replay = 0; replay < 2; replay++) {
                lanes_any a, b;
                lanes_any_init(&a, p, LANES, 77);
                lanes_any_init(&b, p, LANES, 77);
                fill(&a, 1000 + (uint64_t)m);
                lanes_any_copy(&b, &a);
                for (long long t = 0; t < 2; t++) {
                    a.l.t = b.l.t = t;
                    a.l.mode = b.l.mode = modes[m];
                    if (replay) {
                        a.l.step_words = a.step_words, a.l.restart_words = a.restart_words;
                        b.l.step_words = b.step_words, b.l.restart_words = b.restart_words;
                    }
                    runner_step(&ref, p, &a.l);
                    runner_step(&got, p, &b.l);
                    snprintf(what, sizeof what, "%s, %s (%s, unroll %d), step %lld in mode %d%s", cs_type_name(R),
                             runner_name(&got), cs_fusion_name(runs[r].fusion), runs[r].unroll, t, modes[m],
                             replay ? ", replayed words" : "");
                    expect_same(&a, &b, true, what);
                }
                lanes_any_free(&a);
                lanes_any_free(&b);
            }
        for (int replay = 0; replay < 2; replay++) {
            lanes_any a, b;
            lanes_any_init(&a, p, LANES, 5);
            lanes_any_init(&b, p, LANES, 5);
            fill(&a, 2000);
            lanes_any_copy(&b, &a);
            if (replay) {
                a.l.restart_words = a.restart_words;
                b.l.restart_words = b.restart_words;
            }
            a.l.t = b.l.t = 3;
            runner_restart(&ref, p, &a.l);
            runner_restart(&got, p, &b.l);
            snprintf(what, sizeof what, "%s, %s (%s), restart%s", cs_type_name(R), runner_name(&got),
                     cs_fusion_name(runs[r].fusion), replay ? ", replayed words" : "");
            expect_same(&a, &b, true, what);
            /* a rollout from the special values: non-finite states restart */
            fill(&a, 3000);
            lanes_any_copy(&b, &a);
            a.l.steps = b.l.steps = 4;
            runner_rollout(&ref, p, &a.l);
            runner_rollout(&got, p, &b.l);
            snprintf(what, sizeof what, "%s, %s (%s, unroll %d%s), rollout", cs_type_name(R), runner_name(&got),
                     cs_fusion_name(runs[r].fusion), runs[r].unroll, runs[r].launches ? ", a launch per kernel" : "");
            expect_same(&a, &b, false, what);
            long long episodes = 0;
            for (long long i = 0; i < LANES; i++)
                episodes += a.segments[i] + a.nonfinite[i];
            cr_assert_gt(episodes, 0, "the rollout restarts no lane");
            lanes_any_free(&a);
            lanes_any_free(&b);
        }
        runner_close(&got);
    }
    cs_program_free(p);
}

Test(arrays, every_op_in_f64_equals_the_interpreter_on_every_entry, .timeout = 900) { every_op_agrees(CS_F64); }

Test(arrays, every_op_in_f32_equals_the_interpreter_on_every_entry, .timeout = 900) { every_op_agrees(CS_F32); }

/* NVRTC compiles the CUDA dialect of arrays and integers (no GPU needed). */
Test(arrays, nvrtc_compiles_every_op, .timeout = 900)
{
    cs_nvrtc *nv;
    char err[8192];
    if (cs_nvrtc_open(&nv, err, sizeof err)) {
        fprintf(stderr, "\n*** SKIPPED %s: NVRTC is missing: %s ***\n", __func__, err);
        cr_skip_test("NVRTC is missing: %s", err);
    }
    /* NVRTC spends one to two minutes of CPU on each of these sources
     * (400 KB: every op of every shape), so `make test` compiles the f32
     * program with full fusion at unroll 1; CARTSIM_TEST_NVRTC_ALL=1 adds f64,
     * the rules mode and unroll 4
     * (the C dialect's tests run every pair). */
    const char *all = getenv("CARTSIM_TEST_NVRTC_ALL");
    const int pairs = all && !strcmp(all, "1") ? 2 : 1;
    const cs_type reals[2] = {CS_F32, CS_F64};
    const cs_fusion fusions[2] = {CS_FUSION_FULL, CS_FUSION_RULES};
    for (int t = 0; t < pairs; t++)
        for (int f = 0; f < pairs; f++) {
            cs_program *p = every_op(reals[t]);
            cs_text src;
            cr_assert_eq(lanes_emit(p, fusions[f], pairs == 2 ? 4 : 1, CS_DIALECT_CUDA, &src, err, sizeof err, NULL), 0, "%s", err);
            cs_cache cache = {.dir = ""};
            cs_cubin bin;
            cr_assert_eq(cs_cuda_compile(nv, src.data, 90, CS_CUDA_FMAD, &cache, &bin, err, sizeof err), 0,
                         "%s %s: %s", cs_type_name(reals[t]), cs_fusion_name(fusions[f]), err);
            cr_assert_gt(bin.size, 64);
            cs_cubin_free(&bin);
            cs_text_free(&src);
            cs_program_free(p);
        }
    cs_nvrtc_close(nv);
}
