/* Constant folding that never changes what the device would compute.
 *
 * An op whose operands are all constants becomes a constant, computed by
 * cs_op_eval (jit/op_eval.c), the interpreter's evaluator, which calls the
 * very functions the generated code calls (jit/mathf.h): in the node's own
 * precision, f32 in float, f64 in double, integers exactly. A
 * result the device might produce differently stays for run time: NaN, an
 * infinity, -0.0, a subnormal (a device may flush it to zero), a division by
 * zero, an integer that overflows its type. Besides constants, only rewrites
 * that are exact for every input, NaN, -0.0 and infinities included: a select
 * with a known condition or equal arms, casts to the same type, double
 * negation, x*1, x/1, x-(+0.0), x+(-0.0), and/or with a known bool. Never
 * reassociated, never x+0.0 (wrong for -0.0), x*0, x-x or x==x.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "jit.h"

/* ---- values ---- */

/* A constant as the device sees it: an f32 literal is rounded to float. */
static double const_value(const cs_node_data *d)
{
    return d->type == CS_F32 ? (double)(float)d->imm.f : d->imm.f;
}

static bool is_const(const cs_graph *g, cs_node n)
{
    return cs_graph_node(g, n)->op == CS_OP_CONST;
}

/* n is the constant v; for reals also of the given sign (zeros differ). */
static bool is_const_value(const cs_graph *g, cs_node n, double v, bool negative)
{
    const cs_node_data *d = cs_graph_node(g, n);
    if (d->op != CS_OP_CONST)
        return false;
    double c = const_value(d);
    return c == v && (!cs_type_is_real((cs_type)d->type) || !!signbit(c) == negative);
}

/* Real results the device computes exactly like the host: normal numbers and
 * +0.0 (a -0.0 literal, a subnormal or a non-finite value might not be). */
static bool real_result_ok(double r, cs_type t)
{
    if (t == CS_F32) {
        float f = (float)r;
        return isnormal(f) || (f == 0 && !signbit(f));
    }
    return isnormal(r) || (r == 0 && !signbit(r));
}

static bool int_result_ok(double r, cs_type t)
{
    switch (t) {
    case CS_BOOL: return r == 0 || r == 1;
    case CS_I32: return r >= INT32_MIN && r <= INT32_MAX;
    case CS_U32: return r >= 0 && r <= UINT32_MAX;
    default: return false;
    }
}

/* min/max as emitted, (a < b) ? a : b, agree with every other definition
 * only when neither is NaN and they are not zeros of different signs. */
static bool order_is_clear(double a, double b)
{
    return !(a == 0 && b == 0 && signbit(a) != signbit(b));
}

/* The IEEE safety rules: may op be folded over these operands at all?
 * (The result is checked afterwards.) */
static bool may_fold(cs_op op, cs_type t, cs_type from, const double *v)
{
    double a = v[0], b = v[1], c = v[2];
    switch (op) {
    case CS_OP_MIN: case CS_OP_MAX:
        return order_is_clear(a, b);
    case CS_OP_CLIP:
        return order_is_clear(a, b) && order_is_clear(a > b ? a : b, c);
    case CS_OP_DIV:
        return b != 0;
    case CS_OP_FMOD: case CS_OP_MOD:   /* integers: jit/mathi.h defines every case */
        return b != 0 || !cs_type_is_real(from);
    case CS_OP_IDIV:
        return true;
    case CS_OP_CAST:   /* every conversion is defined (cs_f2i) */
        return true;
    case CS_OP_POW: case CS_OP_ATAN2: case CS_OP_SQRT: case CS_OP_EXP: case CS_OP_LOG:
    case CS_OP_SIN: case CS_OP_COS: case CS_OP_TAN: case CS_OP_TANH: case CS_OP_FLOOR:
    case CS_OP_ROUND_F32:
        return cs_type_is_real(from);
    case CS_OP_SELECT: case CS_OP_BOUNDED:
        return false;
    default:
        return true;
    }
}

/* Folds d over the constant operands in[]; true and *r when it may. */
static bool fold_constants(const cs_graph *g, const cs_node_data *d, const cs_node *in, bool fast_f64, double *r)
{
    cs_op op = (cs_op)d->op;
    cs_type t = (cs_type)d->type, from = (cs_type)cs_graph_node(g, in[0])->type;
    double v[3] = {0, 0, 0};
    for (unsigned k = 0; k < d->n_in; k++) {
        const cs_node_data *c = cs_graph_node(g, in[k]);
        v[k] = const_value(c);
        if (isnan(v[k]))
            return false;
        /* an integer constant the builder let through out of range stays */
        if (!cs_type_is_real((cs_type)c->type) && (v[k] != trunc(v[k]) || !int_result_ok(v[k], (cs_type)c->type)))
            return false;
    }
    if (!may_fold(op, t, from, v))
        return false;
    /* The interpreter's evaluator, so the constant is the run's value. */
    *r = cs_op_eval_from(op, t, from, fast_f64, v[0], v[1], v[2]);
    return (cs_type_is_real(t) ? real_result_ok(*r, t) : int_result_ok(*r, t));
}

/* Rewrites that hold for every value of the non-constant operands: the
 * replacement, or 0 when none applies. */
static cs_node identity(const cs_graph *g, const cs_node_data *d, const cs_node *in)
{
    cs_type t = (cs_type)d->type;
    bool real = cs_type_is_real(t);
    const cs_node_data *a = cs_graph_node(g, in[0]);
    switch ((cs_op)d->op) {
    case CS_OP_SELECT:
        if (a->op == CS_OP_CONST)
            return a->imm.f != 0 ? in[1] : in[2];
        return in[1] == in[2] ? in[1] : 0;
    case CS_OP_CAST:
        return a->type == t ? in[0] : 0;
    case CS_OP_ROUND_F32:
        return t == CS_F32 ? in[0] : 0;
    case CS_OP_NEG: case CS_OP_NOT:
        return a->op == d->op ? cs_graph_input(g, in[0], 0) : 0;
    case CS_OP_MUL:
        if (is_const_value(g, in[1], 1, false))
            return in[0];
        return is_const_value(g, in[0], 1, false) ? in[1] : 0;
    case CS_OP_DIV:
        return is_const_value(g, in[1], 1, false) ? in[0] : 0;
    case CS_OP_SUB:   /* x - (+0.0) is x, -0.0 included */
        return is_const_value(g, in[1], 0, false) ? in[0] : 0;
    case CS_OP_ADD:   /* x + (-0.0) is x, +0.0 included; x + 0.0 is not */
        if (is_const_value(g, in[1], 0, real))
            return in[0];
        return is_const_value(g, in[0], 0, real) ? in[1] : 0;
    case CS_OP_AND: case CS_OP_OR:
        for (unsigned k = 0; k < 2; k++) {
            if (!is_const(g, in[k]))
                continue;
            bool absorbs = (cs_graph_node(g, in[k])->imm.f != 0) == (d->op == CS_OP_OR);
            return absorbs ? in[k] : in[1 - k];
        }
        return 0;
    default:
        return 0;
    }
}

static cs_node fold_node(void *ctx, cs_graph *g, const cs_node_data *d, const cs_node *in)
{
    bool all_const = d->n_in > 0;
    for (unsigned k = 0; k < d->n_in; k++)
        all_const &= is_const(g, in[k]);
    double r;
    /* constants are scalars, so only a scalar elementwise op of constants folds */
    if (all_const && cs_op_table[d->op].kind == CS_KIND_MAP && d->op != CS_OP_SELECT && d->op != CS_OP_BOUNDED &&
        fold_constants(g, d, in, ((const cs_program *)ctx)->fast_f64, &r)) {
        cs_node c = cs_const(g, (cs_type)d->type, r);
        return c ? c : CS_REWRITE_FAILED;
    }
    cs_node same = identity(g, d, in);
    /* an identity that would change the shape (a scalar arm of an array
     * select, a scalar absorbing an array's 'and') is not one */
    return same && cs_graph_node(g, same)->shape == d->shape ? same : 0;
}

/* ctx: the program, whose math mode the folded constants are computed in */
int cs_pass_fold(cs_program *p) { return cs_program_rewrite(p, fold_node, p); }
