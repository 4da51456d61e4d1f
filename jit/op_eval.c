/* The one evaluator of every elementwise op (cs_op_eval, declared in ir.h)
 * and of every reduction's step (cs_reduce_step).
 *
 * The interpreter computes every lane with it and constant folding folds
 * with it, so folding can never change a result: a constant is computed by
 * the very function (jit/mathf.h, jit/mathi.h, named in jit/ops.def) that
 * the generated code calls at run time. f32 ops are computed in float, f64
 * in double, i32 and u32 as C's int and unsigned with wrapping arithmetic
 * (values travel as doubles, which hold them exactly). In the fast math
 * mode the f64 library functions are jit/mathd.h's. A reduction steps
 * with its elementwise op (SUM with ADD, RMIN with MIN, ...), so a sum is
 * the chain of additions written out.
 */
#include <math.h>

#include "ir.h"

#define CS_INLINE static inline
#include "mathf.h"
#include "mathd.h"
#include "mathi.h"

static double round_f32(double x)
{
    /* past FLT_MAX + half an ulp the conversion would be undefined in C */
    if (isfinite(x) && fabs(x) >= 0x1.ffffffp127)
        return copysign(INFINITY, x);
    return (double)(float)x;
}

/* CAST (jit/ops.def): from reals as cs_f2i, between integers wrapping. */
static double cast_to(cs_type t, cs_type from, double x)
{
    bool real = cs_type_is_real(from);
    switch (t) {
    case CS_BOOL: return x != 0;
    case CS_I32:
        if (real)
            return cs_f2i(x);
        return from == CS_U32 ? (double)(int)(unsigned int)x : x;
    case CS_U32:
        return (double)(unsigned int)(real ? cs_f2i(x) : (int)(long long)x);
    case CS_F32: return round_f32(x);
    default: return x;
    }
}

/* Python's min(a, b) and max(a, b): the first argument unless the second
 * is strictly smaller (larger), as the emitter writes them. */
static double min2(double a, double b) { return b < a ? b : a; }
static double max2(double a, double b) { return b > a ? b : a; }

static double eval_f32(cs_op op, float a, float b, float c)
{
    switch (op) {
    case CS_OP_NEG: return -a;
    case CS_OP_ABS: return fabsf(a);
    case CS_OP_SQRT: return sqrtf(a);
    case CS_OP_EXP: return cs_expf(a);
    case CS_OP_LOG: return cs_logf(a);
    case CS_OP_SIN: return cs_sinf(a);
    case CS_OP_COS: return cs_cosf(a);
    case CS_OP_TAN: return cs_tanf(a);
    case CS_OP_TANH: return cs_tanhf(a);
    case CS_OP_FLOOR: return floorf(a);
    case CS_OP_ADD: return a + b;
    case CS_OP_SUB: return a - b;
    case CS_OP_MUL: return a * b;
    case CS_OP_DIV: return a / b;
    case CS_OP_POW: return cs_powf(a, b);
    case CS_OP_ATAN2: return cs_atan2f(a, b);
    case CS_OP_FMOD: return cs_fmodf(a, b);
    case CS_OP_MOD: return cs_modf(a, b);
    case CS_OP_MIN: return min2(a, b);
    case CS_OP_MAX: return max2(a, b);
    case CS_OP_CLIP: return min2(max2(a, b), c);
    case CS_OP_FMA: return fmaf(a, b, c);
    default: return 0;
    }
}

static double eval_f64(cs_op op, double a, double b, double c)
{
    switch (op) {
    case CS_OP_NEG: return -a;
    case CS_OP_ABS: return fabs(a);
    case CS_OP_SQRT: return sqrt(a);
    case CS_OP_EXP: return cs_exp(a);
    case CS_OP_LOG: return cs_log(a);
    case CS_OP_SIN: return cs_sin(a);
    case CS_OP_COS: return cs_cos(a);
    case CS_OP_TAN: return cs_tan(a);
    case CS_OP_TANH: return cs_tanh(a);
    case CS_OP_FLOOR: return floor(a);
    case CS_OP_ADD: return a + b;
    case CS_OP_SUB: return a - b;
    case CS_OP_MUL: return a * b;
    case CS_OP_DIV: return a / b;
    case CS_OP_POW: return cs_pow(a, b);
    case CS_OP_ATAN2: return cs_atan2(a, b);
    case CS_OP_FMOD: return cs_fmod(a, b);
    case CS_OP_MOD: return cs_mod(a, b);
    case CS_OP_MIN: return min2(a, b);
    case CS_OP_MAX: return max2(a, b);
    case CS_OP_CLIP: return min2(max2(a, b), c);   /* NumPy's np.clip */
    case CS_OP_FMA: return fma(a, b, c);
    default: return 0;
    }
}

/* i32 (and u32) ops: wrapping +, -, *, unary -, and mathi.h's functions. */
static double eval_int(cs_op op, cs_type t, double a, double b)
{
    if (t == CS_U32) {
        unsigned int x = (unsigned int)(long long)a, y = (unsigned int)(long long)b;
        switch (op) {
        case CS_OP_NEG: return 0u - x;
        case CS_OP_ADD: return x + y;
        case CS_OP_SUB: return x - y;
        case CS_OP_MUL: return x * y;
        default: return 0;
        }
    }
    int x = (int)a, y = (int)b;
    switch (op) {
    case CS_OP_NEG: return (int)(0u - (unsigned int)x);
    case CS_OP_ABS: return cs_iabs(x);
    case CS_OP_ADD: return (int)((unsigned int)x + (unsigned int)y);
    case CS_OP_SUB: return (int)((unsigned int)x - (unsigned int)y);
    case CS_OP_MUL: return (int)((unsigned int)x * (unsigned int)y);
    case CS_OP_IDIV: return cs_idiv(x, y);
    case CS_OP_MOD: return cs_imod(x, y);
    default: return 0;
    }
}

/* The fast math mode's f64 functions (ops.def's fast_f64 column); 0 for
 * the ops that have none (the caller computes them as in the exact mode). */
static bool eval_fast_f64(cs_op op, double a, double b, double *r)
{
    switch (op) {
    case CS_OP_EXP: *r = cs_fast_exp(a); return true;
    case CS_OP_LOG: *r = cs_fast_log(a); return true;
    case CS_OP_SIN: *r = cs_fast_sin(a); return true;
    case CS_OP_COS: *r = cs_fast_cos(a); return true;
    case CS_OP_TAN: *r = cs_fast_tan(a); return true;
    case CS_OP_TANH: *r = cs_fast_tanh(a); return true;
    case CS_OP_POW: *r = cs_fast_pow(a, b); return true;
    case CS_OP_ATAN2: *r = cs_fast_atan2(a, b); return true;
    case CS_OP_FMOD: *r = cs_fast_fmod(a, b); return true;
    case CS_OP_MOD: *r = cs_fast_mod(a, b); return true;
    default: return false;
    }
}

double cs_op_eval(cs_op op, cs_type t, bool fast_f64, double a, double b, double c)
{
    return cs_op_eval_from(op, t, t, fast_f64, a, b, c);
}

double cs_op_eval_from(cs_op op, cs_type t, cs_type from, bool fast_f64, double a, double b, double c)
{
    switch (op) {
    case CS_OP_NOT: return a == 0;
    case CS_OP_LT: return a < b;
    case CS_OP_LE: return a <= b;
    case CS_OP_GT: return a > b;
    case CS_OP_GE: return a >= b;
    case CS_OP_EQ: return a == b;
    case CS_OP_NE: return a != b;
    case CS_OP_AND: return (a != 0) && (b != 0);
    case CS_OP_OR: return (a != 0) || (b != 0);
    case CS_OP_SELECT: return a != 0 ? b : c;
    case CS_OP_CAST: return cast_to(t, from, a);
    case CS_OP_ROUND_F32: return round_f32(a);
    case CS_OP_BOUNDED: return cs_bounded((unsigned int)(long long)a, (int)b);
    case CS_OP_MIN: return min2(a, b);   /* exact in every type: the operands are the node's */
    case CS_OP_MAX: return max2(a, b);
    case CS_OP_CLIP: return min2(max2(a, b), c);
    default: break;
    }
    if (t == CS_I32 || t == CS_U32)
        return eval_int(op, t, a, b);
    double r;
    if (fast_f64 && t == CS_F64 && eval_fast_f64(op, a, b, &r))
        return r;
    /* f32 operands are floats already: converting them back is exact */
    return t == CS_F32 ? eval_f32(op, (float)a, (float)b, (float)c) : eval_f64(op, a, b, c);
}

void cs_reduce_start(cs_op op, cs_type t, double x, double *acc, double *best)
{
    (void)t;
    switch (op) {
    case CS_OP_ANY: case CS_OP_ALL: *acc = x != 0; break;
    case CS_OP_NONZERO: *acc = x != 0; break;
    case CS_OP_ARGMAX: case CS_OP_ARGMIN: *best = x; *acc = 0; break;
    default: *acc = x; break;   /* SUM, RMIN, RMAX: the first element */
    }
}

void cs_reduce_step(cs_op op, cs_type t, double x, unsigned at, double *acc, double *best)
{
    switch (op) {
    case CS_OP_SUM: *acc = cs_op_eval(CS_OP_ADD, t, false, *acc, x, 0); break;
    case CS_OP_RMIN: *acc = cs_op_eval(CS_OP_MIN, t, false, *acc, x, 0); break;
    case CS_OP_RMAX: *acc = cs_op_eval(CS_OP_MAX, t, false, *acc, x, 0); break;
    case CS_OP_ANY: *acc = cs_op_eval(CS_OP_OR, CS_BOOL, false, *acc, x != 0, 0); break;
    case CS_OP_ALL: *acc = cs_op_eval(CS_OP_AND, CS_BOOL, false, *acc, x != 0, 0); break;
    case CS_OP_NONZERO: *acc += x != 0; break;
    case CS_OP_ARGMAX:
        if (x > *best) {
            *best = x;
            *acc = at;
        }
        break;
    case CS_OP_ARGMIN:
        if (x < *best) {
            *best = x;
            *acc = at;
        }
        break;
    default: break;
    }
}
