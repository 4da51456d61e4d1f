/* Constant folding that never changes what the device would compute.
 *
 * An op whose operands are all constants becomes a constant, computed in the
 * node's own precision (f32 in float, f64 in double, integers exactly). A
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

/* ---- what the roots reach ---- */

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

static bool compare(cs_op op, double a, double b, double *r)
{
    switch (op) {
    case CS_OP_LT: *r = a < b; return true;
    case CS_OP_LE: *r = a <= b; return true;
    case CS_OP_GT: *r = a > b; return true;
    case CS_OP_GE: *r = a >= b; return true;
    case CS_OP_EQ: *r = a == b; return true;
    case CS_OP_NE: *r = a != b; return true;
    default: return false;
    }
}

static bool min_max_clip(cs_op op, const double *v, double *r)
{
    double a = v[0], b = v[1], c = v[2];
    switch (op) {
    case CS_OP_MIN:
        *r = a < b ? a : b;
        return order_is_clear(a, b);
    case CS_OP_MAX:
        *r = a > b ? a : b;
        return order_is_clear(a, b);
    case CS_OP_CLIP: {
        double lo = a > b ? a : b;
        *r = lo < c ? lo : c;
        return order_is_clear(a, b) && order_is_clear(lo, c);
    }
    default:
        return false;
    }
}

/* Floored modulo (Python's %), in the precision asked for. */
static double floored_mod(bool single, double a, double b)
{
    if (single) {
        float r = fmodf((float)a, (float)b);
        if (r != 0 && ((r < 0) != (b < 0)))
            r += (float)b;
        return r;
    }
    double r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

/* f32 in float arithmetic and the float libm, f64 in double. */
static bool fold_real(cs_op op, bool single, const double *v, double *r)
{
    double a = v[0], b = v[1];
    float fa = (float)a, fb = (float)b;
    switch (op) {
    case CS_OP_NEG: *r = single ? -fa : -a; return true;
    case CS_OP_ABS: *r = single ? fabsf(fa) : fabs(a); return true;
    case CS_OP_SQRT: *r = single ? sqrtf(fa) : sqrt(a); return true;
    case CS_OP_EXP: *r = single ? expf(fa) : exp(a); return true;
    case CS_OP_LOG: *r = single ? logf(fa) : log(a); return true;
    case CS_OP_SIN: *r = single ? sinf(fa) : sin(a); return true;
    case CS_OP_COS: *r = single ? cosf(fa) : cos(a); return true;
    case CS_OP_TAN: *r = single ? tanf(fa) : tan(a); return true;
    case CS_OP_TANH: *r = single ? tanhf(fa) : tanh(a); return true;
    case CS_OP_FLOOR: *r = single ? floorf(fa) : floor(a); return true;
    case CS_OP_ROUND_F32: *r = (float)a; return true;
    case CS_OP_ADD: *r = single ? fa + fb : a + b; return true;
    case CS_OP_SUB: *r = single ? fa - fb : a - b; return true;
    case CS_OP_MUL: *r = single ? fa * fb : a * b; return true;
    case CS_OP_DIV: *r = single ? fa / fb : a / b; return b != 0;
    case CS_OP_POW: *r = single ? powf(fa, fb) : pow(a, b); return true;
    case CS_OP_ATAN2: *r = single ? atan2f(fa, fb) : atan2(a, b); return true;
    case CS_OP_FMOD: *r = single ? fmodf(fa, fb) : fmod(a, b); return b != 0;
    case CS_OP_MOD: *r = floored_mod(single, a, b); return b != 0;
    default: return false;
    }
}

/* bool, i32 and u32, exactly; the range check afterwards catches overflow. */
static bool fold_int(cs_op op, const double *v, double *r)
{
    int64_t a = (int64_t)v[0], b = (int64_t)v[1];
    switch (op) {
    case CS_OP_NEG: *r = (double)-a; return true;
    case CS_OP_ABS: *r = (double)(a < 0 ? -a : a); return true;
    case CS_OP_NOT: *r = !a; return true;
    case CS_OP_AND: *r = a && b; return true;
    case CS_OP_OR: *r = a || b; return true;
    case CS_OP_ADD: *r = (double)(a + b); return true;
    case CS_OP_SUB: *r = (double)(a - b); return true;
    case CS_OP_MUL: *r = (double)(a * b); return true;
    /* Only exact quotients: truncating and floored division agree on them. */
    case CS_OP_DIV: *r = b ? (double)(a / b) : 0; return b != 0 && a % b == 0;
    default: return false;
    }
}

/* C conversions, folded only where C defines them. */
static bool fold_cast(cs_type to, double v, double *r)
{
    switch (to) {
    case CS_BOOL: *r = v != 0; return true;
    case CS_I32: case CS_U32: *r = trunc(v); return int_result_ok(*r, to);
    case CS_F32: *r = (float)v; return true;
    case CS_F64: *r = v; return true;
    default: return false;
    }
}

/* Folds d over the constant operands in[]; true and *r when it may. */
static bool fold_constants(const cs_graph *g, const cs_node_data *d, const cs_node *in, double *r)
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
    bool ok;
    if (op == CS_OP_CAST)
        ok = fold_cast(t, v[0], r);
    else if (compare(op, v[0], v[1], r))
        ok = true;
    else if (op == CS_OP_MIN || op == CS_OP_MAX || op == CS_OP_CLIP)
        ok = min_max_clip(op, v, r);
    else if (cs_type_is_real(from))
        ok = fold_real(op, t == CS_F32, v, r);
    else
        ok = fold_int(op, v, r);
    return ok && (cs_type_is_real(t) ? real_result_ok(*r, t) : int_result_ok(*r, t));
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
    if (all_const && d->op != CS_OP_STACK && d->op != CS_OP_INDEX && d->op != CS_OP_SELECT &&
        fold_constants(g, d, in, &r)) {
        cs_node c = cs_const(g, (cs_type)d->type, r);
        return c ? c : CS_REWRITE_FAILED;
    }
    return identity(g, d, in);
}

int cs_pass_fold(cs_program *p) { return cs_program_rewrite(p, fold_node, NULL); }
