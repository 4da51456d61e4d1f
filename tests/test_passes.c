/* The passes (fold, scalarize, concat, dce), the fusion modes and the dumps.
 *
 * Programs are built with the builder API directly. Folding must give the
 * exact result the device computes in the node's precision, and must leave
 * alone everything whose result could differ at run time (NaN, -0.0,
 * infinities, division by zero) or that only holds for some values. The
 * partition tests use CartPole written the seed paper's way: the new state
 * packed into a stack that is indexed four times, and a random action. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"

#define CS_INLINE static inline
#include "mathf.h"

/* ---- building ---- */

/* One carried value x of type `real`, an action, obs x, and placeholders
 * for the rest: a test puts the expression under test in p->reward. */
static cs_program *one_slot(cs_type real)
{
    cs_program *p = cs_program_new(real);
    cr_assert(p);
    cs_graph *g = p->graph;
    cr_assert_eq(cs_program_add_state(p, "x", real, CS_SCALAR), 0);
    cr_assert_eq(cs_program_add_input(p, "action", CS_I32, 0, 1), 0);
    cs_node x = cs_leaf(g, CS_OP_CARRIED, real, 0);
    cr_assert_eq(cs_program_add_obs(p, NULL, x, CS_OBS_BOX, -INFINITY, INFINITY, 0), 0);
    p->next[0] = x;
    p->restart[0] = cs_const(g, real, 0);
    p->reward = cs_const(g, real, 0);
    p->terminated = cs_const(g, CS_BOOL, 0);
    char err[200];
    cr_assert_eq(cs_program_finish(p, err, sizeof err), 0, "%s", err);
    return p;
}

static cs_node X(cs_program *p) { return cs_leaf(p->graph, CS_OP_CARRIED, p->real, 0); }
static cs_node K(cs_program *p, double v) { return cs_const(p->graph, p->real, v); }
static cs_node I(cs_program *p, double v) { return cs_const(p->graph, CS_I32, v); }
static cs_node B(cs_program *p, bool v) { return cs_const(p->graph, CS_BOOL, v); }
static cs_node un(cs_program *p, cs_op op, cs_node a) { return cs_unary(p->graph, op, a); }
static cs_node bin(cs_program *p, cs_op op, cs_node a, cs_node b) { return cs_binary(p->graph, op, a, b); }
static cs_node tern(cs_program *p, cs_op op, cs_node a, cs_node b, cs_node c)
{
    return cs_ternary(p->graph, op, a, b, c);
}

/* Folds with `e` as the reward; the reward afterwards. */
static cs_node fold(cs_program *p, cs_node e)
{
    cr_assert(e, "builder: %s", cs_graph_error(p->graph));
    p->reward = e;
    cr_assert_geq(cs_pass_fold(p), 0);
    return p->reward;
}

static const cs_node_data *node(cs_program *p, cs_node n) { return cs_graph_node(p->graph, n); }

static void assert_const(cs_program *p, cs_node n, double want)
{
    const cs_node_data *d = node(p, n);
    cr_assert_eq(d->op, CS_OP_CONST, "n%u is a %s, not a constant", n, cs_op_table[d->op].name);
    cr_assert(d->imm.f == want && !!signbit(d->imm.f) == !!signbit(want), "folded to %.17g, want %.17g",
              d->imm.f, want);
}

static void assert_op(cs_program *p, cs_node n, cs_op op)
{
    cr_assert_eq(node(p, n)->op, op, "n%u is a %s, want %s", n, cs_op_table[node(p, n)->op].name,
                 cs_op_table[op].name);
}

/* Folding `e` must leave it an op of its kind. */
static void assert_stays(cs_program *p, cs_node e)
{
    cs_op op = (cs_op)node(p, e)->op;
    cs_node r = fold(p, e);
    cr_assert_eq(r, e, "%s was rewritten", cs_op_table[op].name);
}

/* ---- fold: constants, in the node's precision ---- */

Test(fold, arithmetic_f64_exact)
{
    cs_program *p = one_slot(CS_F64);
    assert_const(p, fold(p, bin(p, CS_OP_ADD, K(p, 0.1), K(p, 0.2))), 0.30000000000000004);
    assert_const(p, fold(p, bin(p, CS_OP_SUB, K(p, 1), K(p, 0.9))), 1 - 0.9);
    assert_const(p, fold(p, bin(p, CS_OP_MUL, K(p, 0.1), K(p, 3))), 0.1 * 3);
    assert_const(p, fold(p, bin(p, CS_OP_DIV, K(p, 4), K(p, 3))), 4.0 / 3.0);
    assert_const(p, fold(p, un(p, CS_OP_NEG, K(p, 10))), -10);
    assert_const(p, fold(p, un(p, CS_OP_ABS, K(p, -2.5))), 2.5);
    assert_const(p, fold(p, un(p, CS_OP_SQRT, K(p, 2))), sqrt(2));
    assert_const(p, fold(p, un(p, CS_OP_FLOOR, K(p, -2.5))), -3);
    cs_program_free(p);
}

Test(fold, arithmetic_f32_in_float)
{
    cs_program *p = one_slot(CS_F32);
    assert_const(p, fold(p, bin(p, CS_OP_ADD, K(p, 0.1), K(p, 0.2))), (double)(0.1f + 0.2f));
    assert_const(p, fold(p, bin(p, CS_OP_MUL, K(p, 0.1), K(p, 3))), (double)(0.1f * 3.0f));
    assert_const(p, fold(p, bin(p, CS_OP_DIV, K(p, 4), K(p, 3))), (double)(4.0f / 3.0f));
    assert_const(p, fold(p, bin(p, CS_OP_SUB, K(p, 1), K(p, 0.9))), (double)(1.0f - 0.9f));
    assert_const(p, fold(p, un(p, CS_OP_SQRT, K(p, 2))), (double)sqrtf(2.0f));
    cr_assert_neq((double)(4.0f / 3.0f), 4.0 / 3.0);
    cs_program_free(p);
}

/* A folded constant is what the run computes: the functions of mathf.h that
 * the generated code and the interpreter call, in the node's precision. */
Test(fold, transcendentals_with_the_run_times_functions_in_the_nodes_precision)
{
    cs_program *p = one_slot(CS_F64);
    assert_const(p, fold(p, un(p, CS_OP_SIN, K(p, 1))), cs_sin(1.0));
    assert_const(p, fold(p, un(p, CS_OP_COS, K(p, 0.5))), cs_cos(0.5));
    assert_const(p, fold(p, un(p, CS_OP_TAN, K(p, 0.5))), cs_tan(0.5));
    assert_const(p, fold(p, un(p, CS_OP_EXP, K(p, 1))), cs_exp(1.0));
    assert_const(p, fold(p, un(p, CS_OP_LOG, K(p, 10))), cs_log(10.0));
    assert_const(p, fold(p, un(p, CS_OP_TANH, K(p, 0.5))), cs_tanh(0.5));
    assert_const(p, fold(p, bin(p, CS_OP_POW, K(p, 2), K(p, 0.5))), cs_pow(2, 0.5));
    assert_const(p, fold(p, bin(p, CS_OP_ATAN2, K(p, 1), K(p, 2))), cs_atan2(1, 2));
    cs_program_free(p);

    p = one_slot(CS_F32);
    /* glibc's sinf and tanhf differ here from what the run computes
     * (volatile: GCC would fold them with its own arithmetic) */
    volatile float x = 0x1.000032p-1f, y = 0x1.000004p-2f;
    cr_assert_neq(sinf(x), cs_sinf(x));
    cr_assert_neq(tanhf(y), cs_tanhf(y));
    assert_const(p, fold(p, un(p, CS_OP_SIN, K(p, x))), (double)cs_sinf(x));
    assert_const(p, fold(p, un(p, CS_OP_TANH, K(p, y))), (double)cs_tanhf(y));
    assert_const(p, fold(p, un(p, CS_OP_EXP, K(p, 0.1))), (double)cs_expf(0.1f));
    assert_const(p, fold(p, bin(p, CS_OP_POW, K(p, 2), K(p, 0.5))), (double)cs_powf(2.0f, 0.5f));
    assert_const(p, fold(p, bin(p, CS_OP_POW, K(p, 1.1), K(p, 2))), (double)(1.1f * 1.1f));
    assert_const(p, fold(p, bin(p, CS_OP_ATAN2, K(p, 1), K(p, 2))), (double)cs_atan2f(1.0f, 2.0f));
    cs_program_free(p);
}

Test(fold, modulo_floored_and_fmod_truncated)
{
    cs_program *p = one_slot(CS_F64);
    assert_const(p, fold(p, bin(p, CS_OP_MOD, K(p, -7), K(p, 3))), 2);
    assert_const(p, fold(p, bin(p, CS_OP_MOD, K(p, 7), K(p, -3))), -2);
    assert_const(p, fold(p, bin(p, CS_OP_MOD, K(p, 7.5), K(p, 2))), 1.5);
    assert_const(p, fold(p, bin(p, CS_OP_FMOD, K(p, -7), K(p, 3))), -1);
    assert_const(p, fold(p, bin(p, CS_OP_FMOD, K(p, 7), K(p, -3))), 1);
    assert_stays(p, bin(p, CS_OP_MOD, K(p, 1), K(p, 0)));
    assert_stays(p, bin(p, CS_OP_FMOD, K(p, 1), K(p, 0)));
    assert_stays(p, bin(p, CS_OP_MOD, K(p, -6), K(p, 3)));    /* -0.0 */
    assert_stays(p, bin(p, CS_OP_FMOD, K(p, -6), K(p, 3)));   /* -0.0 */
    cs_program_free(p);

    p = one_slot(CS_F32);
    assert_const(p, fold(p, bin(p, CS_OP_MOD, K(p, -0.7), K(p, 0.3))), (double)(fmodf(-0.7f, 0.3f) + 0.3f));
    cs_program_free(p);
}

Test(fold, min_max_clip_only_when_unambiguous)
{
    cs_program *p = one_slot(CS_F64);
    assert_const(p, fold(p, bin(p, CS_OP_MIN, K(p, 2), K(p, -3))), -3);
    assert_const(p, fold(p, bin(p, CS_OP_MAX, K(p, 2), K(p, -3))), 2);
    assert_const(p, fold(p, tern(p, CS_OP_CLIP, K(p, 5), K(p, -1), K(p, 1))), 1);
    assert_const(p, fold(p, tern(p, CS_OP_CLIP, K(p, -5), K(p, -1), K(p, 1))), -1);
    assert_const(p, fold(p, tern(p, CS_OP_CLIP, K(p, 0.5), K(p, -1), K(p, 1))), 0.5);
    assert_const(p, fold(p, bin(p, CS_OP_MIN, K(p, 0.0), K(p, 1))), 0.0);
    assert_stays(p, bin(p, CS_OP_MIN, K(p, -0.0), K(p, 1)));   /* a -0.0 result stays */
    assert_stays(p, bin(p, CS_OP_MIN, K(p, 0.0), K(p, -0.0)));
    assert_stays(p, bin(p, CS_OP_MAX, K(p, -0.0), K(p, 0.0)));
    assert_stays(p, bin(p, CS_OP_MAX, K(p, NAN), K(p, 1)));
    assert_stays(p, tern(p, CS_OP_CLIP, K(p, 1), K(p, NAN), K(p, 2)));
    cs_program_free(p);
}

Test(fold, comparisons_and_logic)
{
    cs_program *p = one_slot(CS_F64);
    assert_const(p, fold(p, bin(p, CS_OP_LT, K(p, 1), K(p, 2))), 1);
    assert_const(p, fold(p, bin(p, CS_OP_GE, K(p, 1), K(p, 2))), 0);
    assert_const(p, fold(p, bin(p, CS_OP_EQ, K(p, 0.0), K(p, -0.0))), 1);
    assert_const(p, fold(p, bin(p, CS_OP_NE, I(p, 3), I(p, 3))), 0);
    assert_const(p, fold(p, bin(p, CS_OP_LE, I(p, -3), I(p, 3))), 1);
    assert_const(p, fold(p, bin(p, CS_OP_GT, K(p, INFINITY), K(p, 1e308))), 1);
    assert_const(p, fold(p, bin(p, CS_OP_AND, B(p, 1), B(p, 0))), 0);
    assert_const(p, fold(p, bin(p, CS_OP_OR, B(p, 1), B(p, 0))), 1);
    assert_const(p, fold(p, un(p, CS_OP_NOT, B(p, 0))), 1);
    assert_stays(p, bin(p, CS_OP_LT, K(p, NAN), K(p, 1)));
    /* a known bool decides and/or whatever the other side is */
    cs_node t = bin(p, CS_OP_LT, X(p), K(p, 1));
    cr_assert_eq(fold(p, bin(p, CS_OP_AND, t, B(p, 1))), t);
    assert_const(p, fold(p, bin(p, CS_OP_AND, B(p, 0), t)), 0);
    cr_assert_eq(fold(p, bin(p, CS_OP_OR, B(p, 0), t)), t);
    assert_const(p, fold(p, bin(p, CS_OP_OR, t, B(p, 1))), 1);
    cs_program_free(p);
}

Test(fold, integers_exactly_and_wrapping)
{
    /* i32 arithmetic is defined for every input (jit/ops.def): wrapping, and
     * Python's // and % with x // 0 = 0 and x % 0 = x, so every case folds */
    cs_program *p = one_slot(CS_F64);
    assert_const(p, fold(p, bin(p, CS_OP_ADD, I(p, 7), I(p, 5))), 12);
    assert_const(p, fold(p, bin(p, CS_OP_SUB, I(p, 5), I(p, 7))), -2);
    assert_const(p, fold(p, bin(p, CS_OP_MUL, I(p, -6), I(p, 7))), -42);
    assert_const(p, fold(p, un(p, CS_OP_NEG, I(p, 5))), -5);
    assert_const(p, fold(p, un(p, CS_OP_ABS, I(p, -5))), 5);
    assert_const(p, fold(p, bin(p, CS_OP_MAX, I(p, -5), I(p, 3))), 3);
    assert_const(p, fold(p, tern(p, CS_OP_CLIP, I(p, 9), I(p, 0), I(p, 4))), 4);
    assert_const(p, fold(p, bin(p, CS_OP_ADD, I(p, INT32_MAX), I(p, 1))), INT32_MIN);
    assert_const(p, fold(p, bin(p, CS_OP_MUL, I(p, 65536), I(p, 65536))), 0);
    assert_const(p, fold(p, un(p, CS_OP_NEG, I(p, INT32_MIN))), INT32_MIN);
    assert_const(p, fold(p, un(p, CS_OP_ABS, I(p, INT32_MIN))), INT32_MIN);
    assert_const(p, fold(p, bin(p, CS_OP_IDIV, I(p, 8), I(p, -2))), -4);
    assert_const(p, fold(p, bin(p, CS_OP_IDIV, I(p, 7), I(p, 2))), 3);
    assert_const(p, fold(p, bin(p, CS_OP_IDIV, I(p, -7), I(p, 2))), -4);
    assert_const(p, fold(p, bin(p, CS_OP_IDIV, I(p, 7), I(p, -2))), -4);
    assert_const(p, fold(p, bin(p, CS_OP_IDIV, I(p, 1), I(p, 0))), 0);
    assert_const(p, fold(p, bin(p, CS_OP_IDIV, I(p, INT32_MIN), I(p, -1))), INT32_MIN);
    assert_const(p, fold(p, bin(p, CS_OP_MOD, I(p, -7), I(p, 3))), 2);
    assert_const(p, fold(p, bin(p, CS_OP_MOD, I(p, 7), I(p, -3))), -2);
    assert_const(p, fold(p, bin(p, CS_OP_MOD, I(p, 5), I(p, 0))), 5);
    assert_const(p, fold(p, bin(p, CS_OP_MOD, I(p, INT32_MIN), I(p, -1))), 0);
    /* integer '/' does not exist: the front end converts to reals first */
    cr_assert_eq(bin(p, CS_OP_DIV, I(p, 8), I(p, 2)), 0);
    cs_program_free(p);
}

Test(fold, casts_and_round_f32)
{
    cs_program *p = one_slot(CS_F64);
    cs_graph *g = p->graph;
    assert_const(p, fold(p, cs_cast(g, CS_I32, K(p, 2.7))), 2);
    assert_const(p, fold(p, cs_cast(g, CS_I32, K(p, -2.7))), -2);
    assert_const(p, fold(p, cs_cast(g, CS_F64, I(p, -3))), -3);
    assert_const(p, fold(p, cs_cast(g, CS_F32, K(p, 0.1))), (double)0.1f);
    assert_const(p, fold(p, cs_cast(g, CS_BOOL, K(p, 0.25))), 1);
    assert_const(p, fold(p, cs_cast(g, CS_F64, B(p, 1))), 1);
    assert_const(p, fold(p, un(p, CS_OP_ROUND_F32, K(p, 0.1))), (double)0.1f);
    /* real -> i32 saturates (cs_f2i), NaN giving 0; -> u32 through it, wrapping */
    assert_const(p, fold(p, cs_cast(g, CS_I32, K(p, 3e9))), INT32_MAX);
    assert_const(p, fold(p, cs_cast(g, CS_I32, K(p, -3e9))), INT32_MIN);
    assert_const(p, fold(p, cs_cast(g, CS_U32, K(p, -1))), 4294967295.0);
    assert_stays(p, cs_cast(g, CS_F32, K(p, 1e300)));       /* inf */
    assert_stays(p, cs_cast(g, CS_F64, cs_const(g, CS_F32, -0.0)));
    cs_program_free(p);

    /* f32: round_f32 is the identity; a cast to the node's own type too */
    p = one_slot(CS_F32);
    g = p->graph;
    cr_assert_eq(fold(p, un(p, CS_OP_ROUND_F32, X(p))), X(p));
    cs_node in[1] = {X(p)};
    cs_node same = cs_make(g, CS_OP_CAST, CS_F32, CS_SCALAR, 1, in, (cs_imm){.i = 0});
    cr_assert_eq(fold(p, same), X(p));
    cs_program_free(p);
}

Test(fold, leaves_nan_infinities_negative_zero_and_division_by_zero_to_run_time)
{
    for (cs_type t = CS_F32; t <= CS_F64; t++) {
        cs_program *p = one_slot(t);
        assert_stays(p, bin(p, CS_OP_DIV, K(p, 1), K(p, 0)));
        assert_stays(p, bin(p, CS_OP_DIV, K(p, 0), K(p, 0)));
        assert_stays(p, bin(p, CS_OP_DIV, K(p, 0), K(p, -0.0)));
        assert_stays(p, un(p, CS_OP_SQRT, K(p, -1)));
        assert_stays(p, un(p, CS_OP_LOG, K(p, 0)));             /* -inf */
        assert_stays(p, un(p, CS_OP_LOG, K(p, -1)));            /* NaN */
        assert_stays(p, un(p, CS_OP_EXP, K(p, 1000)));          /* inf */
        assert_stays(p, bin(p, CS_OP_MUL, K(p, 1e200), K(p, 1e200)));
        assert_stays(p, un(p, CS_OP_NEG, K(p, 0)));             /* -0.0 */
        assert_stays(p, bin(p, CS_OP_MUL, K(p, -1), K(p, 0)));  /* -0.0 */
        assert_stays(p, un(p, CS_OP_SIN, K(p, -0.0)));          /* -0.0 */
        assert_stays(p, bin(p, CS_OP_MUL, K(p, -1e-30), K(p, 1e-300)));   /* underflows to -0.0 */
        assert_stays(p, bin(p, CS_OP_ADD, K(p, NAN), K(p, 1)));
        assert_stays(p, bin(p, CS_OP_SUB, K(p, INFINITY), K(p, INFINITY)));
        assert_stays(p, bin(p, CS_OP_POW, K(p, -8), K(p, 1.0 / 3.0)));
        cs_program_free(p);
    }
    /* 1e-300 * 1e-10 underflows to a subnormal: a device may flush it */
    cs_program *p = one_slot(CS_F64);
    assert_stays(p, bin(p, CS_OP_MUL, K(p, 1e-300), K(p, 1e-10)));
    cs_program_free(p);
}

/* ---- fold: identities, and what is not one ---- */

Test(fold, never_reassociates)
{
    cs_program *p = one_slot(CS_F64);
    cs_node inner = bin(p, CS_OP_MUL, X(p), K(p, 2));
    cs_node e = bin(p, CS_OP_MUL, inner, K(p, 3));
    cr_assert_eq(fold(p, e), e);
    assert_op(p, cs_graph_input(p->graph, e, 0), CS_OP_MUL);
    cs_node sum = bin(p, CS_OP_ADD, bin(p, CS_OP_ADD, X(p), K(p, 1)), K(p, 2));
    cr_assert_eq(fold(p, sum), sum);
    cs_program_free(p);
}

Test(fold, exact_identities)
{
    for (cs_type t = CS_F32; t <= CS_F64; t++) {
        cs_program *p = one_slot(t);
        cs_node x = X(p);
        cr_assert_eq(fold(p, bin(p, CS_OP_MUL, x, K(p, 1))), x);
        cr_assert_eq(fold(p, bin(p, CS_OP_MUL, K(p, 1), x)), x);
        cr_assert_eq(fold(p, bin(p, CS_OP_DIV, x, K(p, 1))), x);
        cr_assert_eq(fold(p, bin(p, CS_OP_SUB, x, K(p, 0.0))), x);
        cr_assert_eq(fold(p, bin(p, CS_OP_ADD, x, K(p, -0.0))), x);
        cr_assert_eq(fold(p, bin(p, CS_OP_ADD, K(p, -0.0), x)), x);
        cr_assert_eq(fold(p, un(p, CS_OP_NEG, un(p, CS_OP_NEG, x))), x);
        cs_node c = bin(p, CS_OP_LT, x, K(p, 1));
        cr_assert_eq(fold(p, un(p, CS_OP_NOT, un(p, CS_OP_NOT, c))), c);
        cs_node y = un(p, CS_OP_SIN, x);
        cr_assert_eq(fold(p, tern(p, CS_OP_SELECT, B(p, 1), x, y)), x);
        cr_assert_eq(fold(p, tern(p, CS_OP_SELECT, B(p, 0), x, y)), y);
        cr_assert_eq(fold(p, tern(p, CS_OP_SELECT, c, y, y)), y);
        cs_program_free(p);
    }
    /* f32: a constant counts as 1 when its float is 1, as the device sees it */
    cs_program *p = one_slot(CS_F32);
    cr_assert_eq(fold(p, bin(p, CS_OP_MUL, X(p), K(p, 1.00000000001))), X(p));
    cs_program_free(p);
    /* integers: x + 0 and x - 0 are exact */
    p = one_slot(CS_F64);
    cs_node n = cs_cast(p->graph, CS_I32, X(p));
    cr_assert_eq(fold(p, bin(p, CS_OP_ADD, n, I(p, 0))), n);
    cr_assert_eq(fold(p, bin(p, CS_OP_SUB, n, I(p, 0))), n);
    cr_assert_eq(fold(p, bin(p, CS_OP_MUL, I(p, 1), n)), n);
    cs_program_free(p);
}

Test(fold, not_identities_for_nan_negative_zero_or_infinity)
{
    for (cs_type t = CS_F32; t <= CS_F64; t++) {
        cs_program *p = one_slot(t);
        cs_node x = X(p);
        assert_stays(p, bin(p, CS_OP_ADD, x, K(p, 0.0)));     /* -0.0 + 0.0 is 0.0 */
        assert_stays(p, bin(p, CS_OP_ADD, K(p, 0.0), x));
        assert_stays(p, bin(p, CS_OP_SUB, x, K(p, -0.0)));    /* -0.0 - -0.0 is 0.0 */
        assert_stays(p, bin(p, CS_OP_MUL, x, K(p, 0)));       /* inf * 0 is NaN */
        assert_stays(p, bin(p, CS_OP_SUB, x, x));             /* inf - inf is NaN */
        assert_stays(p, bin(p, CS_OP_EQ, x, x));              /* NaN == NaN is false */
        assert_stays(p, bin(p, CS_OP_DIV, x, x));
        assert_stays(p, bin(p, CS_OP_MUL, x, K(p, -1)));
        cs_program_free(p);
    }
}

Test(fold, counts_what_it_changed_and_reaches_a_fixed_point)
{
    cs_program *p = one_slot(CS_F64);
    /* (4/3 - 1) * x: the division and the subtraction fold, the product stays */
    cs_node e = bin(p, CS_OP_MUL, bin(p, CS_OP_SUB, bin(p, CS_OP_DIV, K(p, 4), K(p, 3)), K(p, 1)), X(p));
    p->reward = e;
    cr_assert_eq(cs_pass_fold(p), 2);
    assert_op(p, p->reward, CS_OP_MUL);
    assert_const(p, cs_graph_input(p->graph, p->reward, 0), 4.0 / 3.0 - 1);
    cr_assert_eq(cs_pass_fold(p), 0);
    cs_program_free(p);
}

Test(fold, rewrites_every_root)
{
    cs_program *p = one_slot(CS_F64);
    p->restart[0] = bin(p, CS_OP_MUL, K(p, 0.5), K(p, 0.25));
    p->obs_items[0].restart = p->restart[0];
    p->terminated = bin(p, CS_OP_GT, K(p, 1), K(p, 2));
    cr_assert_eq(cs_pass_fold(p), 2);
    assert_const(p, p->restart[0], 0.125);
    assert_const(p, p->obs_items[0].restart, 0.125);
    assert_const(p, p->terminated, 0);
    cs_program_free(p);
}

/* ---- the CartPole of the seed paper ---- */

static const char *const state_names[4] = {"x", "x_dot", "theta", "theta_dot"};

/* Gymnasium's CartPole step, with its constants written as the DSL leaves
 * them (expressions of constants) and a random action (a uniform draw
 * through a select); the new state packed into a stack and unpacked with
 * index, as np.array([x, x_dot, theta, theta_dot]) in the paper's JAX code. */
static cs_program *cartpole_paper(void)
{
    cs_program *p = cs_program_new(CS_F64);
    cr_assert(p);
    cs_graph *g = p->graph;
    snprintf(p->name, sizeof p->name, "cartpole_paper");
    snprintf(p->title, sizeof p->title, "CartPole-v1");
    p->max_steps = 500;
    cs_node s[4];
    for (unsigned k = 0; k < 4; k++) {
        cr_assert_eq(cs_program_add_state(p, state_names[k], CS_F64, CS_SCALAR), (int)k);
        s[k] = cs_leaf(g, CS_OP_CARRIED, CS_F64, k);
        cr_assert_eq(cs_program_add_obs(p, NULL, s[k], CS_OBS_BOX, -INFINITY, INFINITY, 0), (int)k);
    }
    cr_assert_eq(cs_program_add_input(p, "action", CS_I32, 0, 1), 0);

    cs_node u = cs_leaf(g, CS_OP_UNIFORM, CS_F64, CS_UNIFORM_ID(CS_STREAM_STEP, 0));
    cs_node action = tern(p, CS_OP_SELECT, bin(p, CS_OP_LT, u, K(p, 0.5)), I(p, 1), I(p, 0));
    cs_node force_mag = K(p, 10);
    cs_node force = tern(p, CS_OP_SELECT, bin(p, CS_OP_EQ, action, I(p, 1)), force_mag,
                         un(p, CS_OP_NEG, force_mag));
    cs_node masspole = K(p, 0.1), length = K(p, 0.5), tau = K(p, 0.02);
    cs_node total_mass = bin(p, CS_OP_ADD, masspole, K(p, 1.0));
    cs_node polemass_length = bin(p, CS_OP_MUL, masspole, length);
    cs_node costheta = un(p, CS_OP_COS, s[2]), sintheta = un(p, CS_OP_SIN, s[2]);
    cs_node temp = bin(p, CS_OP_DIV,
                       bin(p, CS_OP_ADD, force,
                           bin(p, CS_OP_MUL, bin(p, CS_OP_MUL, polemass_length, bin(p, CS_OP_MUL, s[3], s[3])),
                               sintheta)),
                       total_mass);
    cs_node thetaacc = bin(
        p, CS_OP_DIV,
        bin(p, CS_OP_SUB, bin(p, CS_OP_MUL, K(p, 9.8), sintheta), bin(p, CS_OP_MUL, costheta, temp)),
        bin(p, CS_OP_MUL, length,
            bin(p, CS_OP_SUB, bin(p, CS_OP_DIV, K(p, 4.0), K(p, 3.0)),
                bin(p, CS_OP_DIV, bin(p, CS_OP_MUL, masspole, bin(p, CS_OP_MUL, costheta, costheta)),
                    total_mass))));
    cs_node xacc = bin(p, CS_OP_SUB, temp,
                       bin(p, CS_OP_DIV, bin(p, CS_OP_MUL, bin(p, CS_OP_MUL, polemass_length, thetaacc), costheta),
                           total_mass));
    cs_node next[4] = {
        bin(p, CS_OP_ADD, s[0], bin(p, CS_OP_MUL, tau, s[1])),
        bin(p, CS_OP_ADD, s[1], bin(p, CS_OP_MUL, tau, xacc)),
        bin(p, CS_OP_ADD, s[2], bin(p, CS_OP_MUL, tau, s[3])),
        bin(p, CS_OP_ADD, s[3], bin(p, CS_OP_MUL, tau, thetaacc)),
    };
    cs_node ns = cs_stack(g, 4, next);
    for (unsigned k = 0; k < 4; k++) {
        p->next[k] = cs_index(g, ns, k);
        cs_node r = cs_leaf(g, CS_OP_UNIFORM, CS_F64, CS_UNIFORM_ID(CS_STREAM_RESTART, k));
        p->restart[k] = bin(p, CS_OP_SUB, bin(p, CS_OP_MUL, r, K(p, 0.1)), K(p, 0.05));
    }
    cs_node x_threshold = K(p, 2.4);
    cs_node theta_threshold = bin(p, CS_OP_DIV, bin(p, CS_OP_MUL, bin(p, CS_OP_MUL, K(p, 12), K(p, 2)), K(p, M_PI)),
                                  K(p, 360));
    cs_node nx = cs_index(g, ns, 0), ntheta = cs_index(g, ns, 2);
    p->terminated = bin(p, CS_OP_OR,
                        bin(p, CS_OP_OR, bin(p, CS_OP_LT, nx, un(p, CS_OP_NEG, x_threshold)),
                            bin(p, CS_OP_GT, nx, x_threshold)),
                        bin(p, CS_OP_OR, bin(p, CS_OP_LT, ntheta, un(p, CS_OP_NEG, theta_threshold)),
                            bin(p, CS_OP_GT, ntheta, theta_threshold)));
    cs_node sutton_barto = K(p, 0);
    p->reward = tern(p, CS_OP_SELECT, bin(p, CS_OP_NE, sutton_barto, K(p, 0)),
                     tern(p, CS_OP_SELECT, p->terminated, K(p, -1), K(p, 0)), K(p, 1));
    char err[200];
    cr_assert_eq(cs_program_finish(p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cs_graph_error(g)[0], 0, "%s", cs_graph_error(g));
    return p;
}

static unsigned count_ops(const cs_graph *g, cs_op op)
{
    unsigned n = 0;
    for (cs_node id = 1; id < cs_graph_count(g); id++)
        n += cs_graph_node(g, id)->op == op;
    return n;
}

/* Same op, type, immediate and operand structure, across two graphs. */
static bool same_structure(const cs_graph *ga, cs_node a, const cs_graph *gb, cs_node b)
{
    const cs_node_data *da = cs_graph_node(ga, a), *db = cs_graph_node(gb, b);
    if (!da || !db)
        return !da && !db;
    if (da->op != db->op || da->type != db->type || da->n_in != db->n_in || da->imm.i != db->imm.i)
        return false;
    for (unsigned k = 0; k < da->n_in; k++)
        if (!same_structure(ga, cs_graph_input(ga, a, k), gb, cs_graph_input(gb, b, k)))
            return false;
    return true;
}

static void collect_root(void *ctx, cs_node *root)
{
    cs_node **at = ctx;
    *(*at)++ = *root;
}

/* Every root of p, in visiting order; up to 64. */
static unsigned roots_of(cs_program *p, cs_node *roots)
{
    cs_node *at = roots;
    cs_program_visit_roots(p, collect_root, &at);
    return (unsigned)(at - roots);
}

Test(concat, forwards_every_index_and_leaves_the_stack_dead)
{
    cs_program *p = cartpole_paper();
    cs_node before_next[4];
    for (unsigned k = 0; k < 4; k++)
        before_next[k] = cs_graph_input(p->graph, p->next[k], 0);
    cr_assert_eq(cs_pass_concat(p), 4);
    for (unsigned k = 0; k < 4; k++) {
        cr_assert_neq(node(p, p->next[k])->op, CS_OP_INDEX);
        cr_assert_eq(p->next[k], cs_graph_input(p->graph, before_next[k], k), "x' reads the stacked operand");
        cr_assert_eq(p->obs_items[k].next, p->next[k]);
    }
    cr_assert_eq(cs_pass_concat(p), 0);
    cr_assert_eq(count_ops(p->graph, CS_OP_STACK), 1, "still in the graph, dead");
    int removed = cs_pass_dce(p);
    cr_assert_gt(removed, 0);
    cr_assert_eq(count_ops(p->graph, CS_OP_STACK), 0);
    cr_assert_eq(count_ops(p->graph, CS_OP_INDEX), 0);
    cs_program_free(p);
}

Test(dce, removes_the_dead_and_keeps_the_structure_of_every_root)
{
    cs_program *p = cartpole_paper(), *q = cartpole_paper();
    cs_graph *g = p->graph;
    /* garbage: unused nodes, including a draw */
    cs_node garbage = bin(p, CS_OP_MUL, X(p), K(p, 123));
    bin(p, CS_OP_ADD, garbage, cs_leaf(g, CS_OP_UNIFORM, CS_F64, CS_UNIFORM_ID(CS_STREAM_STEP, 7)));
    uint32_t before = cs_graph_count(g);
    unsigned steps = p->n_step_draws, restarts = p->n_restart_draws;
    int removed = cs_pass_dce(p);
    cr_assert_eq(removed, 4, "123, the product, the draw and the sum");
    cr_assert_eq(cs_graph_count(p->graph), before - (uint32_t)removed);
    cr_assert_eq(cs_pass_dce(p), 0);
    cr_assert_eq(p->n_step_draws, steps);
    cr_assert_eq(p->n_restart_draws, restarts);

    cs_node rp[64], rq[64];
    unsigned np = roots_of(p, rp), nq = roots_of(q, rq);
    cr_assert_eq(np, nq);
    for (unsigned r = 0; r < np; r++)
        cr_assert(same_structure(p->graph, rp[r], q->graph, rq[r]), "root %u changed", r);
    cs_program_free(p);
    cs_program_free(q);
}

Test(dce, keeps_draw_numbers_and_draw_counts)
{
    cs_program *p = one_slot(CS_F64);
    cs_graph *g = p->graph;
    cs_node dead = cs_leaf(g, CS_OP_UNIFORM, CS_F64, CS_UNIFORM_ID(CS_STREAM_STEP, 0));
    cs_node kept = cs_leaf(g, CS_OP_UNIFORM, CS_F64, CS_UNIFORM_ID(CS_STREAM_STEP, 1));
    p->reward = bin(p, CS_OP_ADD, kept, K(p, 1));
    char err[200];
    cr_assert_eq(cs_program_finish(p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(p->n_step_draws, 2);
    (void)dead;
    cr_assert_gt(cs_pass_dce(p), 0);
    cr_assert_eq(count_ops(p->graph, CS_OP_UNIFORM), 1);
    const cs_node_data *u = node(p, cs_graph_input(p->graph, p->reward, 0));
    cr_assert_eq(u->op, CS_OP_UNIFORM);
    cr_assert_eq(CS_UNIFORM_DRAW(u->imm.i), 1);
    cr_assert_eq(p->n_step_draws, 2, "draw counts are part of the RNG contract");
    cs_program_free(p);
}

/* ---- partitions ---- */

static cs_partition step_partition(cs_program *p, cs_fusion fusion)
{
    cs_node roots[64];
    cr_assert_leq(cs_program_step_root_max(p), 64);
    unsigned n = cs_program_step_roots(p, false, roots);
    cs_partition part;
    cr_assert_eq(cs_partition_build(p->graph, roots, n, fusion, &part), 0);
    cr_assert_eq(part.fusion, fusion);
    return part;
}

static bool any_reason_has(const cs_partition *part, const char *what)
{
    for (unsigned k = 0; k < part->n_kernels; k++)
        if (strstr(part->reason[k], what))
            return true;
    return false;
}

static cs_node find_op(const cs_graph *g, cs_op op)
{
    for (cs_node id = 1; id < cs_graph_count(g); id++)
        if (cs_graph_node(g, id)->op == op)
            return id;
    return 0;
}

/* Computed nodes the step reaches, counted independently of partition.c. */
static unsigned computed_in_step(cs_program *p)
{
    const cs_graph *g = p->graph;
    cs_node roots[64];
    unsigned n_roots = cs_program_step_roots(p, false, roots), n = 0;
    bool *in = calloc(cs_graph_count(g), sizeof *in);
    for (unsigned r = 0; r < n_roots; r++)
        in[roots[r]] = true;
    for (cs_node id = cs_graph_count(g) - 1; id > 0; id--) {
        if (!in[id])
            continue;
        const cs_node_data *d = cs_graph_node(g, id);
        for (unsigned k = 0; k < d->n_in; k++)
            in[cs_graph_input(g, id, k)] = true;
        n += !d->n_in ? d->op == CS_OP_UNIFORM : 1;
    }
    free(in);
    return n;
}

Test(partition, full_is_one_kernel)
{
    cs_program *p = cartpole_paper();
    cs_partition part = step_partition(p, CS_FUSION_FULL);
    cr_assert_eq(part.n_kernels, 1);
    cr_assert_str_eq(part.reason[0], "");
    for (cs_node id = 1; id < cs_graph_count(p->graph); id++)
        cr_assert(part.kernel[id] == 0 || part.kernel[id] == CS_NO_KERNEL);
    cr_assert_eq(part.kernel[cs_leaf(p->graph, CS_OP_CARRIED, CS_F64, 0)], CS_NO_KERNEL);
    cr_assert_eq(part.kernel[find_op(p->graph, CS_OP_UNIFORM)], 0, "the RNG runs in the kernel");
    cs_partition_free(&part);
    cs_program_free(p);
}

Test(partition, rules_stops_at_the_rng_and_at_a_stack_with_several_users)
{
    cs_program *p = cartpole_paper();
    cr_assert_geq(cs_pass_fold(p), 1);
    cs_partition part = step_partition(p, CS_FUSION_RULES);
    cr_assert_eq(part.n_kernels, 3);
    cr_assert_str_eq(part.reason[0], "");
    cr_assert(strstr(part.reason[1], "uniform draw 0"), "%s", part.reason[1]);
    cr_assert(strstr(part.reason[1], "RNG"), "%s", part.reason[1]);
    cr_assert(strstr(part.reason[2], "stack"), "%s", part.reason[2]);
    cr_assert(strstr(part.reason[2], "(4 users)"), "%s", part.reason[2]);

    const cs_graph *g = p->graph;
    cs_node u = find_op(g, CS_OP_UNIFORM), stack = cs_graph_input(g, p->next[0], 0);
    cr_assert_eq(part.kernel[u], 0, "the draw itself sits in kernel 0");
    cr_assert_eq(part.kernel[stack], 1);
    for (unsigned k = 0; k < 4; k++)
        cr_assert_eq(part.kernel[p->next[k]], 2, "index reads the materialized stack");
    cr_assert_eq(part.kernel[p->truncated], 0, "truncation depends on no boundary");
    cs_partition_free(&part);
    cs_program_free(p);
}

Test(partition, rules_after_concat_keeps_only_the_rng_boundary)
{
    cs_program *p = cartpole_paper();
    cr_assert_geq(cs_pass_fold(p), 1);
    cr_assert_eq(cs_pass_concat(p), 4);
    cs_partition part = step_partition(p, CS_FUSION_RULES);   /* the dead stack is outside the step */
    cr_assert_eq(part.n_kernels, 2);
    cr_assert(!any_reason_has(&part, "stack"));
    cr_assert(any_reason_has(&part, "uniform"));
    cs_partition_free(&part);
    cr_assert_gt(cs_pass_dce(p), 0);
    part = step_partition(p, CS_FUSION_RULES);
    cr_assert_eq(part.n_kernels, 2);
    cr_assert(!any_reason_has(&part, "stack"));
    cs_partition_free(&part);
    cs_program_free(p);
}

Test(partition, a_stack_with_one_user_fuses)
{
    cs_program *p = one_slot(CS_F64);
    cs_node items[2] = {un(p, CS_OP_SIN, X(p)), un(p, CS_OP_COS, X(p))};
    cs_node s = cs_stack(p->graph, 2, items);
    p->next[0] = un(p, CS_OP_EXP, cs_index(p->graph, s, 1));
    cs_partition part = step_partition(p, CS_FUSION_RULES);
    cr_assert_eq(part.n_kernels, 1);
    cs_partition_free(&part);
    cs_program_free(p);
}

Test(partition, none_is_one_kernel_per_computed_node)
{
    cs_program *p = cartpole_paper();
    cs_partition part = step_partition(p, CS_FUSION_NONE);
    unsigned computed = computed_in_step(p);
    cr_assert_eq(part.n_kernels, computed);
    bool *used = calloc(part.n_kernels, sizeof *used);
    uint32_t last = 0;
    for (cs_node id = 1; id < cs_graph_count(p->graph); id++) {
        uint32_t k = part.kernel[id];
        if (k == CS_NO_KERNEL)
            continue;
        cr_assert_lt(k, part.n_kernels);
        cr_assert(!used[k], "kernel %u holds two nodes", k);
        cr_assert(k == 0 || k > last, "kernels follow id order");
        used[k] = true;
        last = k;
    }
    free(used);
    cr_assert_str_eq(part.reason[1], "fusion none: one kernel per op");
    cs_partition_free(&part);
    cs_program_free(p);
}

Test(partition, policy_names)
{
    cr_assert_str_eq(cs_fusion_name(CS_FUSION_FULL), "full");
    cr_assert_str_eq(cs_fusion_name(CS_FUSION_RULES), "rules");
    cr_assert_str_eq(cs_fusion_name(CS_FUSION_NONE), "none");
}

/* ---- dumps ---- */

static char *dump(cs_program *p, bool dot)
{
    cs_text t = {0};
    cr_assert_eq(cs_dump_graph(p, dot, &t), 0);
    return t.data;
}

#define assert_has(text, s) cr_assert(strstr(text, s), "dump lacks \"%s\":\n%s", s, text)
#define assert_lacks(text, s) cr_assert(!strstr(text, s), "dump has \"%s\":\n%s", s, text)

Test(dump, graph_text_after_each_pass)
{
    cs_program *p = cartpole_paper();
    char *text = dump(p, false);
    assert_has(text, "program cartpole_paper \"CartPole-v1\": real f64, ");
    assert_has(text, "n1 = carried x : f64\n");
    assert_has(text, " = carried theta_dot : f64\n");
    assert_has(text, " = uniform step 0 : f64\n");
    assert_has(text, " = uniform restart 3 : f64\n");
    assert_has(text, " = const 0.02 : f64\n");
    assert_has(text, " = const 1 : i32\n");
    assert_has(text, " = segstep : i32\n");
    assert_has(text, " = div n");
    assert_has(text, " : f64[4]\n");
    assert_has(text, " 2 : f64\n");   /* index n.. 2 */
    assert_has(text, " = index n");
    assert_has(text, " = stack n");
    assert_has(text, "\nroots:\n");
    assert_has(text, "  x' = n");
    assert_has(text, "  reset theta = n");
    assert_has(text, "  obs[0] = n1\n");
    assert_has(text, "  obs_next[3] = n");
    assert_has(text, "  obs_restart[0] = n");
    assert_has(text, "  reward = n");
    assert_has(text, "  terminated = n");
    assert_has(text, "  truncated = n");
    assert_lacks(text, "policy[");
    free(text);

    cr_assert_gt(cs_pass_fold(p), 0);
    text = dump(p, false);
    assert_lacks(text, " = neg ");           /* -force_mag, -x_threshold folded */
    assert_has(text, " = const 1.1 : f64\n");   /* total_mass */
    assert_has(text, " = const 1.3333333333333333 : f64\n");
    assert_has(text, " = index n");
    free(text);

    cr_assert_eq(cs_pass_concat(p), 4);
    cr_assert_gt(cs_pass_dce(p), 0);
    text = dump(p, false);
    assert_lacks(text, "index");
    assert_lacks(text, "stack");
    assert_has(text, "  x' = n");
    free(text);
    cs_program_free(p);
}

Test(dump, live_nodes_only_in_id_order)
{
    cs_program *p = one_slot(CS_F64);
    cs_node dead = bin(p, CS_OP_MUL, X(p), K(p, 77));
    p->reward = bin(p, CS_OP_ADD, X(p), K(p, 0.5));
    char *text = dump(p, false);
    char line[64];
    snprintf(line, sizeof line, "n%u = ", dead);
    assert_lacks(text, line);
    assert_lacks(text, "const 77");
    char *x = strstr(text, "= carried x"), *sum = strstr(text, "= add n");
    cr_assert(x && sum && x < sum);
    free(text);
    cs_program_free(p);
}

Test(dump, policy_and_rollout_roots)
{
    cs_program *p = one_slot(CS_F64);
    cs_graph *g = p->graph;
    cs_node action = cs_leaf(g, CS_OP_INPUT, CS_I32, 0);
    p->next[0] = bin(p, CS_OP_ADD, X(p), cs_cast(g, CS_F64, action));
    cs_node u = cs_leaf(g, CS_OP_UNIFORM, CS_F64, CS_UNIFORM_ID(CS_STREAM_STEP, 0));
    p->policy[0] = tern(p, CS_OP_SELECT, bin(p, CS_OP_LT, u, K(p, 0.5)), I(p, 1), I(p, 0));
    cr_assert_eq(cs_program_bind_policy(p), 0);
    cr_assert_eq(cs_pass_fold(p), 0);
    cr_assert_eq(cs_pass_dce(p), 0, "x' and the rollout's x' are both roots");
    char *text = dump(p, false);
    assert_has(text, " = input action : i32\n");
    assert_has(text, "  policy[0] = n");
    assert_has(text, "  rollout x' = n");
    assert_has(text, "  rollout reward = n");
    free(text);
    /* the rollout's step reads the draw through the policy: a boundary under rules */
    cs_node roots[64];
    unsigned n = cs_program_step_roots(p, true, roots);
    cs_partition part;
    cr_assert_eq(cs_partition_build(p->graph, roots, n, CS_FUSION_RULES, &part), 0);
    cr_assert_eq(part.n_kernels, 2);
    cr_assert(strstr(part.reason[1], "uniform draw 0"), "%s", part.reason[1]);
    cs_partition_free(&part);
    cs_program_free(p);
}

Test(dump, graph_dot)
{
    cs_program *p = cartpole_paper();
    char *text = dump(p, true);
    assert_has(text, "digraph \"cartpole_paper\" {\n");
    assert_has(text, "[label=\"n1 carried x : f64\", shape=box];\n");
    assert_has(text, "uniform step 0 : f64\", shape=diamond];\n");
    assert_has(text, "shape=box3d];\n");
    assert_has(text, " -> n");
    assert_has(text, "[label=\"x'\", shape=doubleoctagon];\n");
    assert_has(text, "[label=\"reward\", shape=doubleoctagon];\n");
    cr_assert_eq(text[strlen(text) - 2], '}');
    free(text);
    cs_program_free(p);
}

Test(dump, partition_rules_before_and_after_concat)
{
    cs_program *p = cartpole_paper();
    cr_assert_geq(cs_pass_fold(p), 1);
    cs_partition part = step_partition(p, CS_FUSION_RULES);
    cs_text t = {0};
    cr_assert_eq(cs_dump_partition(p, &part, &t), 0);
    assert_has(t.data, "program cartpole_paper: partition rules, 3 kernels\n");
    assert_has(t.data, "kernel 0: ");
    assert_has(t.data, "kernel 2: ");
    assert_has(t.data, "  reason: reads uniform draw 0 (n");
    assert_has(t.data, "  reason: reads stack n");
    assert_has(t.data, "(stack : f64[4]): kernel 1 -> 2\n");
    assert_has(t.data, "(uniform : f64): kernel 0 -> 1\n");
    assert_has(t.data, "materialized values: ");
    assert_has(t.data, "kernels per step: 3\n");
    cs_text_free(&t);
    cs_partition_free(&part);

    cr_assert_eq(cs_pass_concat(p), 4);
    cr_assert_gt(cs_pass_dce(p), 0);
    part = step_partition(p, CS_FUSION_RULES);
    cr_assert_eq(cs_dump_partition(p, &part, &t), 0);
    assert_lacks(t.data, "stack");
    assert_has(t.data, "(uniform : f64): kernel 0 -> 1\n");   /* and what kernel 0 computed for kernel 1 */
    assert_has(t.data, "kernels per step: 2\n");
    cs_text_free(&t);
    cs_partition_free(&part);

    part = step_partition(p, CS_FUSION_FULL);
    cr_assert_eq(cs_dump_partition(p, &part, &t), 0);
    assert_lacks(t.data, "reason");
    assert_has(t.data, "materialized values: 0\n");
    assert_has(t.data, "kernels per step: 1\n");
    cs_text_free(&t);
    cs_partition_free(&part);
    cs_program_free(p);
}

/* ---- any depth: no pass recurses over the graph ---- */

Test(deep, a_chain_of_100000_nodes)
{
    enum { DEPTH = 100000 };
    cs_program *p = one_slot(CS_F64);
    cs_node x = X(p), c = K(p, 0);
    for (int i = 0; i < DEPTH; i++) {
        x = bin(p, CS_OP_ADD, x, K(p, 0.5));
        c = bin(p, CS_OP_ADD, c, K(p, 1));
    }
    cs_node stacked[1] = {x};
    p->next[0] = cs_index(p->graph, cs_stack(p->graph, 1, stacked), 0);
    p->reward = c;
    cr_assert_eq(cs_pass_fold(p), DEPTH, "only the constant chain folds");
    assert_const(p, p->reward, DEPTH);
    cr_assert_eq(cs_pass_concat(p), 1);
    cr_assert_gt(cs_pass_dce(p), DEPTH);
    cs_partition part = step_partition(p, CS_FUSION_RULES);
    cr_assert_eq(part.n_kernels, 1);
    cs_partition_free(&part);
    char *text = dump(p, false);
    assert_has(text, "real f64, ");
    free(text);
    cs_program_free(p);
}

Test(passes, table_in_pipeline_order)
{
    const char *names[] = {"fold", "scalarize", "concat", "dce"};
    unsigned n = 0;
    for (const cs_pass_info *pass = cs_pass_table; pass->name; pass++, n++) {
        cr_assert_lt(n, 4);
        cr_assert_str_eq(pass->name, names[n]);
        cr_assert(pass->run && pass->what && pass->what[0]);
    }
    cr_assert_eq(n, 4);
}

Test(passes, a_program_without_observations)
{
    cs_program *p = cs_program_new(CS_F64);
    cs_graph *g = p->graph;
    cr_assert_eq(cs_program_add_state(p, "x", CS_F64, CS_SCALAR), 0);
    cr_assert_eq(cs_program_add_input(p, "action", CS_I32, 0, 1), 0);
    p->next[0] = bin(p, CS_OP_ADD, cs_leaf(g, CS_OP_CARRIED, CS_F64, 0), bin(p, CS_OP_MUL, K(p, 2), K(p, 3)));
    p->restart[0] = K(p, 0);
    p->reward = K(p, 1);
    p->terminated = B(p, 0);
    char err[200];
    cr_assert_eq(cs_program_finish(p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cs_pass_fold(p), 1);
    cr_assert_eq(cs_pass_concat(p), 0);
    cr_assert_eq(cs_pass_dce(p), 4, "2, 3, their product and the sum that read it");
    char *text = dump(p, false);
    assert_lacks(text, "obs");
    free(text);
    cs_program_free(p);
}
