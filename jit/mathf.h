/* The functions every math op is computed with (jit/ops.def names them),
 * pasted verbatim in front of every generated source of both dialects
 * (after rng.h), so it includes nothing; the interpreter and constant
 * folding (jit/op_eval.c) include it too, so that all of them compute an op
 * with the same function, bit for bit.
 *
 * f64 calls glibc (Gymnasium's numbers to the last bit) through names GCC
 * does not know as builtins (CS_LIBM below); f32 has cartsim's own
 * branch-free sin, cos, tan, tanh, exp, log, atan2, pow and fmod (pow(x, 2)
 * as x * x). On the GPU, CS_LIBM is CUDA's libm.
 *
 * Float math for the C dialect in f32 mode: sin, cos and tanh.
 *
 * GCC does not vectorize calls to sinf/cosf/sincosf/tanhf, and one such call
 * in the step loop keeps the whole loop scalar. These are branch-free and
 * call nothing, so a loop using them vectorizes (sin and cos inlined, tanh
 * through a SIMD clone under GCC: see cs_tanhf). The CUDA dialect calls them
 * too (not CUDA's sinf), so that the device computes what the host does.
 *
 * sin and cos. Accuracy, for |x| <= 1e5 (the promise is |x| <= 1e4): every
 * float there was checked, and each result is within 0.504 ulp of the exact
 * value, so it is the correctly rounded float or its neighbour;
 * tests/test_mathf.c keeps a sweep. Past 1e5 the argument is treated as +-0
 * (sin 0, cos 1): finite and bounded, not accurate. NaN and +-inf give NaN.
 *
 * Method: k = nearest integer to x * 2/pi (in float), then Cody-Waite
 * reduction r = x - k * pi/2 in double, pi/2 split into a 31-bit head (k *
 * head exact) and a tail. Float arithmetic cannot do this step: below 1e4
 * some floats lie within 4.2e-9 of a multiple of pi/2, so r needs about 65
 * bits of pi/2 to keep 24 good bits, more than a 3-part float constant holds
 * (such a version is 478 ulp off at x = 505.796417). Then minimax
 * polynomials (Remez, relative error) for sin and cos on |r| <= 0.8,
 * evaluated in double and rounded once (float polynomials saved only about
 * 5% of a CartPole step); k mod 4 picks and signs one.
 * cs_sinf and cs_cosf of one x share everything but the final pick, so a
 * compiler computes the pair for the price of one.
 *
 * tanh. Accuracy: every float was checked (bench/tanhf_exhaustive.c) against
 * glibc's double tanh: each result is within 0.500119 ulp of it, so it is
 * the correctly rounded float (all but 1180 of the 2^31 non-negative floats)
 * or its neighbour. Odd by construction (+-0 keep their sign); +-1 for
 * |x| > 9.0109129, as the correctly rounded value is, and for +-inf; NaN for
 * NaN. The loop compiled by the cpu backend and the interpreter's scalar
 * code give the same bits for all 2^32 inputs.
 *
 * Method: tanh|x| = m / (m + 2) with m = expm1(2|x|), all in double and
 * rounded once; no cancellation anywhere, so one formula serves from the
 * subnormals to 16 (past which it is 1 anyway; the clamp keeps 2^k finite).
 * expm1(y) = 2^k (e^r - 1) + (2^k - 1) with k = nearest integer to y / ln 2,
 * r = y - k ln 2 (|r| <= 0.347; k ln 2 rounded in double costs under 2^-51
 * of the result) and e^r - 1 = r + r^2 Q(r), Q a Chebyshev fit of degree 6
 * (relative error of e^r - 1 below 2^-36; bench/tanhf_fit.py). A relative
 * error d of m is at most d in m / (m + 2).
 */
#ifndef CS_MATHF_H
#define CS_MATHF_H

typedef union {
    float f;
    unsigned int u;
} cs_mathf_bits;

typedef union {
    double d;
    unsigned long long u;
} cs_mathf_dbits;

/* Where a value leaves a kernel (observations, rewards, returns): every NaN
 * as the one quiet NaN with its sign bit clear. Which NaN an operation gives
 * is the hardware's (x86's 0/0 is -nan) or an operand's, passed on, so it
 * differs between the compiled code and the interpreter; the bits a user
 * reads must not. */
CS_INLINE float cs_canon_nanf(float x)
{
    cs_mathf_bits b;
    b.f = x;
    b.u = x == x ? b.u : 0x7fc00000u;
    return b.f;
}

CS_INLINE double cs_canon_nan(double x)
{
    cs_mathf_dbits b;
    b.d = x;
    b.u = x == x ? b.u : 0x7ff8000000000000ull;
    return b.d;
}

/* sin r and cos r in double for |r| <= 0.8 (relative errors below 2^-37
 * and 2^-31). */
CS_INLINE void cs_mathf_sincos_r(double r, double *sin_r, double *cos_r)
{
    double s = r * r;
    /* sin r = r (1 + r^2 P(r^2)), relative error < 2^-37 on |r| <= 0.8;
     * the product, unlike r + r^3 P, keeps the sign of r = -0. */
    double ps = -0.00019839162342019542 + s * 2.7167121413975317e-06;
    ps = 0.008333328832252726 + s * ps;
    ps = -0.16666666636664446 + s * ps;
    *sin_r = r * (1.0 + s * ps);
    /* cos r = 1 - r^2/2 + r^4 Q(r^2), relative error < 2^-31 on |r| <= 0.8 */
    double pc = -0.0013887560415573794 + s * 2.4451248312691474e-05;
    pc = 0.041666653252390926 + s * pc;
    *cos_r = (1.0 - 0.5 * s) + (s * s) * pc;
}

/* x = k pi/2 + r: sin r and cos r (cs_mathf_sincos_r), and k mod 4 in the
 * low bits of the return. Shared by sin, cos and tan. */
CS_INLINE unsigned int cs_mathf_reduce(float x, double *sin_r, double *cos_r)
{
    /* Past the accurate range the reduction below would leave |r| large
     * and the polynomials unbounded: such x become +-0 (sin 0, cos 1), and
     * +-inf becomes NaN. Every choice here is a bit mask, not ?:, because
     * GCC sinks each arm of a ?: into its own block and, under the default
     * -ftrapping-math, will not if-convert float arithmetic back: the loop
     * would stay scalar. */
    cs_mathf_bits in, zero;
    in.f = x;
    zero.f = x * 0.0f;
    unsigned int keep = 0u - (unsigned int)((x >= -1e5f) & (x <= 1e5f));
    in.u = (in.u & keep) | (zero.u & ~keep);
    x = in.f;

    /* Adding 1.5 * 2^23 rounds y to an integer (ties to even) and leaves
     * k mod 4 in the low mantissa bits (exact for |y| < 2^22). */
    const float round_magic = 12582912.0f;
    float y = x * 0.636619746685028076171875f; /* 2/pi rounded to float */
    cs_mathf_bits kbits;
    kbits.f = y + round_magic;
    double k = (double)(kbits.f - round_magic);

    /* pi/2 = head + tail, head with 31 significant bits so that k * head
     * and the first subtraction are exact. |r| <= 0.796 for |x| <= 1e5. */
    const double pio2_head = 0x1.921fb544p+0;
    const double pio2_tail = 0x1.0b4611a626331p-34;
    double r = ((double)x - k * pio2_head) - k * pio2_tail;
    cs_mathf_sincos_r(r, sin_r, cos_r);
    return kbits.u;
}

/* quarter = 0: sin(x); quarter = 1: sin(x + pi/2) = cos(x). */
CS_INLINE float cs_mathf_sin_quarter(float x, unsigned int quarter)
{
    double sin_d, cos_d;
    unsigned int k = cs_mathf_reduce(x, &sin_d, &cos_d);
    float sin_r = (float)sin_d, cos_r = (float)cos_d;

    cs_mathf_bits sin_bits, cos_bits, v;
    sin_bits.f = sin_r;
    cos_bits.f = cos_r;
    unsigned int q = k + quarter;
    unsigned int odd = 0u - (q & 1u);
    v.u = (sin_bits.u & ~odd) | (cos_bits.u & odd);
    v.u ^= (q & 2u) << 30; /* quadrants 2 and 3 negate */
    return v.f;
}

CS_INLINE float cs_sinf(float x) { return cs_mathf_sin_quarter(x, 0u); }
CS_INLINE float cs_cosf(float x) { return cs_mathf_sin_quarter(x, 1u); }

/* The near range of sin and cos: |x| <= 0.75, where x 2/pi rounds to k = 0,
 * so that cs_mathf_reduce's r is x itself (x - 0 head - 0 tail; -0 stays
 * -0) and k mod 4 is 0: cs_sinf_near and cs_cosf_near, which skip the
 * reduction, are cs_sinf and cs_cosf bit for bit there (tests/test_mathf.c).
 * Their _far is 1 outside it, NaN too. The C dialect runs a kernel whose
 * f32 sin and cos read leaves (a state variable, an input) in a copy with
 * these at a step where every lane is near (jit/emit.c, trig_near): the
 * reduction was a third of the latency of a step of 4 CartPoles, whose
 * angle is always near. */
CS_INLINE int cs_sinf_far(float x)
{
    cs_mathf_bits b;
    b.f = x;
    return (b.u & 0x7fffffffu) > 0x3f400000u; /* |x| > 0.75f, or NaN */
}
CS_INLINE int cs_cosf_far(float x) { return cs_sinf_far(x); }
CS_INLINE float cs_sinf_near(float x)
{
    double sin_r, cos_r;
    cs_mathf_sincos_r((double)x, &sin_r, &cos_r);
    return (float)sin_r;
}
CS_INLINE float cs_cosf_near(float x)
{
    double sin_r, cos_r;
    cs_mathf_sincos_r((double)x, &sin_r, &cos_r);
    return (float)cos_r;
}

/* tan, from sin's reduction: sin r / cos r, or -cos r / sin r in the odd
 * quadrants, in double and rounded once: every float of |x| <= 1e5 checked
 * (bench/mathf_exhaustive.c), within 0.505 ulp, the correctly rounded float
 * or its neighbour; past 1e5, +-0 as sin. NaN for NaN and +-inf. */
CS_INLINE float cs_tanf(float x)
{
    double s, c;
    unsigned int odd = 0u - (cs_mathf_reduce(x, &s, &c) & 1u);
    cs_mathf_bits t, cot;
    t.f = (float)(s / c);
    cot.f = (float)(-c / s);
    t.u = (t.u & ~odd) | (cot.u & odd);
    return t.f;
}

/* atan2. Method: t = min(|x|, |y|) / max(|x|, |y|) in [0, 1] (0 for two
 * zeros, 1 for two infinities), atan t = pi/4 + atan u with u = (t - 1) /
 * (t + 1) for t > tan(pi/8), else atan t, |u| <= 0.4143, by its series to
 * u^23 (relative error below 2^-33); then pi/2 - a where |y| > |x|, pi - a
 * where x's sign is set, y's sign: C's atan2 for every special case
 * (signed zeros, infinities, NaN), all in double and rounded once: within
 * 0.50027 ulp over 2^28 random pairs (bench/mathf_exhaustive.c), the
 * correctly rounded float or its neighbour. */
CS_INLINE float cs_atan2f(float y, float x)
{
    cs_mathf_bits in_y, in_x, out;
    in_y.f = y;
    in_x.f = x;
    cs_mathf_dbits ay, ax, num, den;
    ay.d = (double)y;
    ax.d = (double)x;
    ay.u &= 0x7fffffffffffffffull;
    ax.u &= 0x7fffffffffffffffull;
    unsigned long long y_bigger = 0ull - (unsigned long long)(ay.d > ax.d);
    num.u = (ay.u & ~y_bigger) | (ax.u & y_bigger);
    den.u = (ax.u & ~y_bigger) | (ay.u & y_bigger);
    /* two zeros: 0 / 1; two infinities: 1 / 1 (NaN stays NaN) */
    unsigned long long both_zero = 0ull - (unsigned long long)(den.d == 0.0);
    unsigned long long both_inf = 0ull - (unsigned long long)(num.d == den.d && num.d > 1e300);
    cs_mathf_dbits one;
    one.d = 1.0;
    den.u = (den.u & ~(both_zero | both_inf)) | (one.u & (both_zero | both_inf));
    num.u = (num.u & ~both_inf) | (one.u & both_inf);
    double t = num.d / den.d;
    cs_mathf_dbits u, t_bits, shift, zero_d;
    unsigned long long reduce = 0ull - (unsigned long long)(t > 0.41421356237309503);
    t_bits.d = t;
    u.d = (t - 1.0) / (t + 1.0);
    u.u = (t_bits.u & ~reduce) | (u.u & reduce);
    shift.d = 0.78539816339744831; /* pi/4 */
    zero_d.d = 0.0;
    shift.u = (zero_d.u & ~reduce) | (shift.u & reduce);
    double v = u.d, z = v * v;
    double q = -1.0 / 23.0;
    q = 1.0 / 21.0 + z * q;
    q = -1.0 / 19.0 + z * q;
    q = 1.0 / 17.0 + z * q;
    q = -1.0 / 15.0 + z * q;
    q = 1.0 / 13.0 + z * q;
    q = -1.0 / 11.0 + z * q;
    q = 1.0 / 9.0 + z * q;
    q = -1.0 / 7.0 + z * q;
    q = 1.0 / 5.0 + z * q;
    q = -1.0 / 3.0 + z * q;
    cs_mathf_dbits a, alt;
    a.d = shift.d + (v + v * z * q);
    alt.d = 1.5707963267948966 - a.d; /* pi/2 - a */
    a.u = (a.u & ~y_bigger) | (alt.u & y_bigger);
    unsigned long long x_negative = 0ull - (unsigned long long)(in_x.u >> 31);
    alt.d = 3.1415926535897931 - a.d; /* pi - a */
    a.u = (a.u & ~x_negative) | (alt.u & x_negative);
    out.f = (float)a.d;
    out.u |= in_y.u & 0x80000000u;
    return out.f;
}

/* Out of line for GCC, whose vectorizer then calls a SIMD clone of it (a
 * copy that takes and returns a vector). Inlined, a fused MLP is one long
 * call-free block, and GCC 12's RTL combiner grows worse than quadratically
 * with it: cartpole mlp:32 (33 copies) took 86 s to compile, 0.5 s with
 * tanhf; pendulum mlp:32x32, whose loop stays scalar anyway, 31 s. With the
 * clone: 2.3 s and 1.9 s, at about 80% of the inlined kernel's speed.
 * Other compilers inline it. */
#ifndef CS_MATHF_SIMD_FN   /* a host file with short loops may inline it (train/mlp.c) */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
#define CS_MATHF_SIMD_FN __attribute__((simd("notinbranch"), noinline, unused)) static
#else
#define CS_MATHF_SIMD_FN CS_INLINE
#endif
#endif

/* e^y = 2^k (1 + p), for |y| < 700: k = nearest integer to y / ln 2, r = y -
 * k ln 2 (|r| <= 0.347; k ln 2 rounded in double costs under 2^-51 of the
 * result) and p = e^r - 1 = r + r^2 Q(r), Q a Chebyshev fit of degree 6
 * (relative error of e^r - 1 below 2^-36; bench/tanhf_fit.py). Returns p,
 * and 2^k in *scale. Shared by tanh and exp. */
CS_INLINE double cs_mathf_exp_parts(double y, double *scale)
{
    /* Adding 1.5 * 2^52 rounds to an integer and leaves k in the low bits. */
    const double round_magic = 0x1.8p52;
    cs_mathf_dbits kbits, two_k;
    kbits.d = y * 1.4426950408889634 + round_magic; /* 1/ln 2 */
    double k = kbits.d - round_magic;
    double r = y - k * 0.6931471805599453;
    double q = 0.00019899274069434545 + r * 2.48595783333601e-05;
    q = 0.0013888854049481818 + r * q;
    q = 0.008333298483621828 + r * q;
    q = 0.041666666718981143 + r * q;
    q = 0.16666666718997808 + r * q;
    q = 0.5 + r * q;
    /* 2^k: the magic's low 12 bits are 0, so its other bits shift out. */
    two_k.u = (kbits.u + 1023u) << 52;
    *scale = two_k.d;
    return r + (r * r) * q;
}

CS_MATHF_SIMD_FN float cs_tanhf(float x)
{
    cs_mathf_bits in, out;
    in.f = x;
    unsigned int sign = in.u & 0x80000000u;
    in.u ^= sign;
    /* |x| = min(|x|, 16), NaN kept. A mask, not ?:, for sin's reason: even
     * this ?: keeps the loop scalar under -ftrapping-math. */
    unsigned int big = 0u - (unsigned int)(in.f > 16.0f);
    in.u = (in.u & ~big) | (0x41800000u & big); /* 16.0f */
    double scale, p = cs_mathf_exp_parts(2.0 * (double)in.f, &scale);
    double m = scale * p + (scale - 1.0); /* expm1(2|x|) */
    out.f = (float)(m / (m + 2.0));
    out.u |= sign;
    return out.f;
}

/* exp. Method: x clamped to [-160, 100] (0 and inf come out of the final
 * rounding), e^x = 2^k + 2^k p from cs_mathf_exp_parts, rounded once to
 * float: every float checked (bench/mathf_exhaustive.c), within 0.500042
 * ulp of the exact value, so the correctly rounded float (all but 1405) or
 * its neighbour. NaN for NaN, 0 for -inf, inf for inf; branch-free. */
CS_INLINE float cs_expf(float x)
{
    cs_mathf_bits in;
    in.f = x;
    unsigned int big = 0u - (unsigned int)(x > 100.0f), small = 0u - (unsigned int)(x < -160.0f);
    in.u = (in.u & ~(big | small)) | (0x42c80000u & big) | (0xc3200000u & small); /* 100.0f, -160.0f */
    double scale, p = cs_mathf_exp_parts((double)in.f, &scale);
    return (float)(scale + scale * p);
}

/* ln x for a positive finite x (a float in double): x = 2^e m with m in
 * [sqrt(1/2), sqrt(2)) from the bits, e ln 2 + 2 atanh(s), s = (m - 1) /
 * (m + 1), |s| <= 0.1716, the series of atanh to s^13 (relative error below
 * 2^-39). Only 64-bit integer and double arithmetic, which AVX2 vectorizes.
 * Shared by log and pow. */
CS_INLINE double cs_mathf_log_core(double x)
{
    cs_mathf_dbits b, e_bits, half;
    b.d = x;
    /* the exponent as a double: 2^52 + field, less 2^52 + 1023 */
    e_bits.u = 0x4330000000000000ull | ((b.u >> 52) & 0x7ffull);
    double e = e_bits.d - (0x1p52 + 1023.0);
    b.u = (b.u & 0x000fffffffffffffull) | 0x3ff0000000000000ull; /* m in [1, 2) */
    half.d = b.d * 0.5;
    unsigned long long high = 0ull - (unsigned long long)(b.d > 1.4142135623730951);
    b.u = (b.u & ~high) | (half.u & high);
    e += (double)(high & 1ull);
    double m = b.d, s = (m - 1.0) / (m + 1.0), z = s * s;
    double q = 2.0 / 13.0;
    q = 2.0 / 11.0 + z * q;
    q = 2.0 / 9.0 + z * q;
    q = 2.0 / 7.0 + z * q;
    q = 2.0 / 5.0 + z * q;
    q = 2.0 / 3.0 + z * q;
    return e * 0.6931471805599453 + (2.0 * s + s * z * q);
}

/* log: cs_mathf_log_core of x in double (every float is normal there),
 * rounded once: every float checked (bench/mathf_exhaustive.c), within
 * 0.500011 ulp, the correctly rounded float (all but 56) or its neighbour.
 * -inf for +-0, NaN below 0 and for NaN, inf
 * for inf; branch-free. */
CS_INLINE float cs_logf(float x)
{
    double r = cs_mathf_log_core((double)x);
    cs_mathf_bits out, in;
    out.f = (float)r;
    in.f = x;
    /* specials by the bits of x: +-0 -> -inf, sign set (x < 0, -NaN) -> NaN,
     * +inf and +NaN -> x itself */
    unsigned int zero = 0u - (unsigned int)((in.u & 0x7fffffffu) == 0u);
    unsigned int negative = 0u - (unsigned int)((in.u >> 31) & ~(zero & 1u));
    unsigned int inf_nan = 0u - (unsigned int)((in.u & 0x7fffffffu) >= 0x7f800000u);
    out.u = (out.u & ~(zero | negative | inf_nan)) | (0xff800000u & zero) | (0x7fc00000u & negative) |
            (in.u & inf_nan & ~negative);
    return out.f;
}

/* ---- the library functions, under names GCC does not know ------------
 *
 * Declared under their own names, glibc's functions are builtins to GCC:
 * it folds calls with constant arguments with its own correctly rounded
 * arithmetic (atan2f(1.6f, -1.0f) is then not glibc's atan2f, which the
 * interpreter calls), turns pow(x, 2.0) into x * x and merges sin and cos
 * into one sincos call that keeps the rest of the loop scalar. The same
 * symbols under other names (asm labels) are plain calls, in the cpu
 * backend's compile, the CUDA host shim's and the library's alike, whatever
 * the flags. */
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define CS_LIBM(f) f
#else
#define CS_LIBM(f) cs_libm_##f
double cs_libm_exp(double) __asm__("exp");
double cs_libm_log(double) __asm__("log");
double cs_libm_sin(double) __asm__("sin");
double cs_libm_cos(double) __asm__("cos");
double cs_libm_tan(double) __asm__("tan");
double cs_libm_tanh(double) __asm__("tanh");
double cs_libm_atan2(double, double) __asm__("atan2");
double cs_libm_pow(double, double) __asm__("pow");
double cs_libm_fmod(double, double) __asm__("fmod");
void cs_libm_sincos(double, double *, double *) __asm__("sincos");
#endif

/* ---- f64 sin and cos near 0: glibc's bits, vectorizable ---------------
 *
 * These compute sin x or cos x as hi + lo (lo exact, by Fast2Sum) within a
 * bound E of the exact value v, and claim hi only where glibc 2.36 (s_sin.c)
 * must return it; elsewhere they OR 1 into *far and the caller must call
 * glibc (cs_sin, and the C dialect's per-lane redo: jit/emit.c). The claim
 * follows how glibc computes each range:
 *  - sin, 2^-26 <= |x| < 0.126: glibc rounds x + t once, t its Taylor tail
 *    in double; t is within 1u |x|^3 of sin x - x (four roundings of |t| <=
 *    |x|^3 / 6, its coefficients 0.15u |x|^3). Claimed where |lo| + E + 2u
 *    |x|^3 <= 0.498 ulp(hi): glibc's x + t is then nearer hi than half an
 *    ulp, so it rounds to hi.
 *  - sin, 0.126 <= |x| <= 0.25 (a table and a correction; glibc states
 *    0.548 ulp at most): claimed where |lo| + E <= 0.45 ulp(hi), so every
 *    other double is at least 0.55 ulp from v.
 *  - cos, |x| <= 0.25 (a table and a correction under 1e-3: glibc states
 *    0.51 ulp, its correction's roundings give 0.505): claimed where |lo| +
 *    E <= 0.485 ulp(hi), every other double at least 0.515 ulp from v.
 * Near: |x| <= 0.25 (CartPole's angle); glibc's own tiny-argument branches
 * (sin x = x below 2^-26, cos x = 1 below 2^-27) are copied, not far. Far
 * also: NaN, +-inf, hi a power of two (the ulp below it is half).
 * Branch-free, so a loop vectorizes.
 *
 * sin: s = x^2, t = (x s) P(s), P Taylor through x^13 (truncation below
 * 1e-6 u |x|^3, u = 2^-53), hi + lo = x + t exactly. s and x s round once
 * each, P(s) (Horner by fma: one rounding a step) is within 2.1u of the
 * series (-1/6 rounded, the last step; the other terms are 20x smaller),
 * the product rounds once: |t - (sin x - x)| < 5.2u |t| < 0.87u |x|^3.
 * E = 2u |x|^3 (measured max 0.62u |x|^3).
 * cos: s + e = x^2 exactly (fma), a + ae = 1 - s/2 exactly (Fast2Sum),
 * L = ae - e/2 + s^2 Q(s), Q Taylor through x^12; hi + lo = a + L exactly.
 * In ulps of hi (2^-53, hi in [0.96, 1)), with |s^2 Q| < 1.7e-4: the
 * truncation 4e-4, s^2 for x^4 3.4e-4, Q's and the products' roundings
 * 5.7e-4, L's last addition 1.7e-4: under 0.0015. E = 0.005 ulp(hi)
 * (measured max 0.0008 ulp). Measured on 2e7 x against __float128, and no
 * claimed lane differs from glibc in 1e9 (bench/sincos_near.c, `make
 * bench-sincos-near` runs 1e8); 6% of |x| <= 0.25 is far for sin, 4% for
 * cos, 12% of x uniform in [-0.2, 0.2] for the pair. */
/* 1 unless hi is glibc's result: |lo| + bound <= limit ulp(hi), hi not a
 * power of two, |x| <= 0.25; or |x| below glibc's tiny branch (whose value
 * hi is then: x + t rounds to x below 2^-26, a + L to 1 below 2^-27). */
CS_INLINE long long cs_mathd_far(double x, double hi, double lo, double bound, double limit, double tiny)
{
    cs_mathf_dbits h, ulp;
    h.d = hi;
    ulp.u = (h.u & 0x7ff0000000000000ull) - (52ull << 52);   /* 2^(exponent of hi - 52) */
    int near = (fabs(x) <= 0.25) & ((h.u & 0x000fffffffffffffull) != 0) & (fabs(lo) + bound <= limit * ulp.d);
    return !(near | (fabs(x) < tiny));
}

/* sin x = hi + *lo + (error below 2u |x|^3), for |x| <= 0.25 */
CS_INLINE double cs_mathd_sin_sum(double x, double *lo)
{
    double s = x * x;
    double p = 0x1.6124613a86d09p-33;   /* 1/13!, then -1/11!, ..., -1/3! */
    p = fma(s, p, -0x1.ae64567f544e4p-26);
    p = fma(s, p, 0x1.71de3a556c734p-19);
    p = fma(s, p, -0x1.a01a01a01a01ap-13);
    p = fma(s, p, 0x1.1111111111111p-7);
    p = fma(s, p, -0x1.5555555555555p-3);
    double t = x * s * p;
    double hi = x + t;
    *lo = t - (hi - x);
    return hi;
}

/* cos x = hi + *lo + (error below 0.005 ulp(hi)), for |x| <= 0.25 */
CS_INLINE double cs_mathd_cos_sum(double x, double *lo)
{
    double s = x * x;
    double e = fma(x, x, -s);
    double a = 1.0 - 0.5 * s;
    double ae = (1.0 - a) - 0.5 * s;
    double q = 0x1.1eed8eff8d898p-29;   /* 1/12!, then -1/10!, ..., 1/4! */
    q = fma(s, q, -0x1.27e4fb7789f5cp-22);
    q = fma(s, q, 0x1.a01a01a01a01ap-16);
    q = fma(s, q, -0x1.6c16c16c16c17p-10);
    q = fma(s, q, 0x1.5555555555555p-5);
    double L = (ae - 0.5 * e) + s * s * q;
    double hi = a + L;
    *lo = L - (hi - a);
    return hi;
}

CS_INLINE double cs_sin_near(double x, long long *far)
{
    double lo, hi = cs_mathd_sin_sum(x, &lo);
    int taylor = fabs(x) < 0.126;   /* glibc rounds x + t once: E + 2u|x|^3 */
    double bound = (taylor ? 0x1p-51 : 0x1p-52) * fabs(x) * (x * x);
    *far |= cs_mathd_far(x, hi, lo, bound, taylor ? 0.498 : 0.45, 0x1p-26);
    return copysign(hi, x);   /* sin -0 = -0, where x + t is +0 */
}

/* hi in [0.96, 1) has ulp 2^-53 */
CS_INLINE double cs_cos_near(double x, long long *far)
{
    double lo, hi = cs_mathd_cos_sum(x, &lo);
    *far |= cs_mathd_far(x, hi, lo, 0.005 * 0x1p-53, 0.485, 0x1p-27);
    return hi;
}

/* f64: glibc's, as Gymnasium's NumPy and Python compute them. sin and cos
 * by the near functions where they are glibc's (so the interpreter,
 * folding and the C dialect compute literally one function); on the GPU,
 * CUDA's. */
CS_INLINE double cs_exp(double x) { return CS_LIBM(exp)(x); }
CS_INLINE double cs_log(double x) { return CS_LIBM(log)(x); }
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
CS_INLINE double cs_sin(double x) { return sin(x); }
CS_INLINE double cs_cos(double x) { return cos(x); }
#else
CS_INLINE double cs_sin(double x)
{
    long long far = 0;
    double r = cs_sin_near(x, &far);
    return far ? CS_LIBM(sin)(x) : r;
}
CS_INLINE double cs_cos(double x)
{
    long long far = 0;
    double r = cs_cos_near(x, &far);
    return far ? CS_LIBM(cos)(x) : r;
}
/* glibc's call alone, for lanes known or likely far (the C dialect's
 * scalar passes): the same bits as cs_sin and cos, without the near try */
CS_INLINE double cs_sin_libm(double x) { return CS_LIBM(sin)(x); }
CS_INLINE double cs_cos_libm(double x) { return CS_LIBM(cos)(x); }
#endif
CS_INLINE double cs_tan(double x) { return CS_LIBM(tan)(x); }
CS_INLINE double cs_tanh(double x) { return CS_LIBM(tanh)(x); }
CS_INLINE double cs_atan2(double y, double x) { return CS_LIBM(atan2)(y, x); }
/* pow(x, 2.0) stays glibc's pow, as Python's x**2 is, not x * x. */
CS_INLINE double cs_pow(double a, double b) { return CS_LIBM(pow)(a, b); }
CS_INLINE double cs_fmod(double a, double b) { return CS_LIBM(fmod)(a, b); }
/* glibc's sin and cos of one x in one call, which costs about 3/4 of the
 * two (the C dialect's scalar pass of library calls); the same bits as
 * cs_sin and cs_cos (glibc computes the three with the same code; checked
 * by tests/test_mathf.c). */
CS_INLINE void cs_sincos(double x, double *s, double *c) { CS_LIBM(sincos)(x, s, c); }
/* Python's float %: the sign of the divisor (a zero keeps fmod's sign). */
CS_INLINE double cs_mod(double a, double b)
{
    double r = CS_LIBM(fmod)(a, b);
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}


/* pow in f32, branch-free. x * x for the exponent 2 (what every
 * environment of the suite writes): one multiply, the correctly rounded
 * square. Else |a|^b = e^(b ln|a|) in double (the log's relative error 2^-39
 * times |b ln|a|| <= 104 where the result is a finite nonzero float, then
 * exp's 2^-36), rounded once: the correctly rounded float or its neighbour
 * (tests/test_mathf.c checks random pairs); C's pow for every special case
 * (signs of zeros and negative bases with integer exponents, infinities,
 * pow(x, +-0) = pow(1, y) = 1 even for NaN, NaN for a negative base and a
 * non-integer exponent). */
CS_INLINE float cs_mathf_pow(float a, float b)
{
    cs_mathf_bits in_a, in_b, out;
    in_a.f = a;
    in_b.f = b;
    double x = fabs((double)a), y = (double)b;
    /* ln|a| for 0 < |a| < inf, else -inf (a = +-0), inf (a = +-inf) or NaN */
    cs_mathf_dbits l, minus_inf, x_bits;
    l.d = cs_mathf_log_core(x);
    minus_inf.u = 0xfff0000000000000ull;
    x_bits.d = x;
    unsigned long long a_zero = 0ull - (unsigned long long)(x == 0.0);
    unsigned long long a_inf_nan = 0ull - (unsigned long long)!(x <= 1.7976931348623157e308);
    l.u = (l.u & ~(a_zero | a_inf_nan)) | (minus_inf.u & a_zero) | (x_bits.u & a_inf_nan);
    /* b ln|a|, clamped to [-200, 200] (0 and inf come out of the rounding),
     * NaN kept: 0 * inf (|a| = 1 and b = +-inf) is the 1 below */
    cs_mathf_dbits t, lo, hi;
    t.d = y * l.d;
    lo.d = -200.0;
    hi.d = 200.0;
    unsigned long long below = 0ull - (unsigned long long)(t.d < -200.0);
    unsigned long long above = 0ull - (unsigned long long)(t.d > 200.0);
    t.u = (t.u & ~(below | above)) | (lo.u & below) | (hi.u & above);
    double scale, p = cs_mathf_exp_parts(t.d, &scale);
    out.f = (float)(scale + scale * p);
    /* a negative base (sign bit set, -0 and -inf included): an odd integer
     * exponent keeps the sign, any integer a positive result, else NaN
     * (finite nonzero bases only: -0 and -inf have a result for any b) */
    double half_b = y * 0.5;
    unsigned int is_int = 0u - (unsigned int)(y == trunc(y));
    unsigned int is_odd = is_int & (0u - (unsigned int)(half_b != trunc(half_b)));
    unsigned int negative = 0u - (in_a.u >> 31);
    unsigned int finite_nonzero = 0u - (unsigned int)((x != 0.0) & (x <= 3.4028234663852886e38));
    out.u |= 0x80000000u & negative & is_odd;
    unsigned int nan = negative & ~is_int & finite_nonzero;
    out.u = (out.u & ~nan) | (0x7fc00000u & nan);
    /* 1 for b = +-0 and for a = 1, NaN or not; and for a = -1, b = +-inf */
    unsigned int b_zero = 0u - (unsigned int)((in_b.u & 0x7fffffffu) == 0u);
    unsigned int a_one = 0u - (unsigned int)(in_a.u == 0x3f800000u);
    unsigned int minus_one_inf = 0u - (unsigned int)((in_a.u == 0xbf800000u) & ((in_b.u & 0x7fffffffu) == 0x7f800000u));
    unsigned int one = b_zero | a_one | minus_one_inf;
    out.u = (out.u & ~one) | (0x3f800000u & one);
    return out.f;
}

/* An exponent known when the kernel is compiled picks its arm then. */
CS_INLINE float cs_powf(float a, float b) { return b == 2.0f ? a * a : cs_mathf_pow(a, b); }

/* One step of the exact float remainder, in double: 0 <= x < m 2^29 on
 * entry, 0 <= x < m after. q = trunc(x * (1/m)) <= 2^29 is the quotient or
 * one off either way (1/m and the product each round by 2^-53), which
 * leaves -m < x - q m < 2m, and one addition or subtraction of m fixes it;
 * q m has at most 24 + 29 bits and x - q m is a multiple of m's last bit
 * below 2^26 of them (or Sterbenz's case), so every step is exact. No
 * division: 1 / m is the caller's, once (scaling it by 2^-29 is exact). */
CS_INLINE double cs_mathf_fmod_step(double x, double m, double inv_m)
{
    cs_mathf_dbits r, up, down;
    r.d = x - trunc(x * inv_m) * m;
    up.d = r.d + m;
    down.d = r.d - m;
    unsigned long long low = 0ull - (unsigned long long)(r.d < 0), high = 0ull - (unsigned long long)(r.d >= m);
    r.u = (r.u & ~(low | high)) | (up.u & low) | (down.u & high);
    return r.d;
}

/* |a| mod m for |a| < m 2^29 (x = |a| in double, m = |b| finite and
 * nonzero, inv = 1 / m): the last step of cs_fmodf, the whole reduction
 * there, then a's sign. */
CS_INLINE float cs_mathf_fmod_last(double x, double m, double inv, float a)
{
    cs_mathf_bits r, in_a;
    r.f = (float)cs_mathf_fmod_step(x, m, inv); /* the remainder is a float: exact */
    in_a.f = a;
    r.u |= in_a.u & 0x80000000u;
    return r.f;
}

/* C's fmodf, exactly, without a call or a branch, so that a loop using it
 * vectorizes: |a| reduced modulo |b| 2^261, |b| 2^232, ..., |b| (ten exact
 * steps of at most 29 bits of quotient each cover every pair of floats,
 * whose ratio is below 2^277), then a's sign. NaN for NaN, an infinite a
 * or a zero b, as fmodf; a for an infinite b. Checked against glibc's
 * fmodf by tests/test_mathf.c (and 4e8 random pairs, once). */
CS_INLINE float cs_fmodf(float a, float b)
{
    double x = fabs((double)a), m = fabs((double)b), inv = 1.0 / m;
    x = cs_mathf_fmod_step(x, m * 0x1p261, inv * 0x1p-261);
    x = cs_mathf_fmod_step(x, m * 0x1p232, inv * 0x1p-232);
    x = cs_mathf_fmod_step(x, m * 0x1p203, inv * 0x1p-203);
    x = cs_mathf_fmod_step(x, m * 0x1p174, inv * 0x1p-174);
    x = cs_mathf_fmod_step(x, m * 0x1p145, inv * 0x1p-145);
    x = cs_mathf_fmod_step(x, m * 0x1p116, inv * 0x1p-116);
    x = cs_mathf_fmod_step(x, m * 0x1p87, inv * 0x1p-87);
    x = cs_mathf_fmod_step(x, m * 0x1p58, inv * 0x1p-58);
    x = cs_mathf_fmod_step(x, m * 0x1p29, inv * 0x1p-29);
    cs_mathf_bits r, in_a, in_b;
    r.f = cs_mathf_fmod_last(x, m, inv, a);
    in_a.f = a;
    in_b.f = b;
    /* b = +-inf (the steps made NaN of inf * 0): a itself, if finite */
    unsigned int keep_a = 0u - (unsigned int)(((in_b.u & 0x7fffffffu) == 0x7f800000u) &
                                              ((in_a.u & 0x7fffffffu) < 0x7f800000u));
    r.u = (r.u & ~keep_a) | (in_a.u & keep_a);
    return r.f;
}

/* The near range, where the nine steps before the last leave |a| as it is
 * (each quotient is 0), so cs_fmodf_near is cs_fmodf bit for bit: |a| <
 * |b| 2^29, b finite and nonzero (hence a finite, not NaN). 1 outside it.
 * Pendulum's angle + pi mod 2 pi is near for |angle| < 3.3e9. */
CS_INLINE int cs_fmodf_far(float a, float b)
{
    double x = fabs((double)a), m = fabs((double)b);
    return !(x < m * 0x1p29) | !(m <= 0x1.fffffep127);
}

/* cs_fmodf for the near range only (what it gives elsewhere is undefined
 * and must not be used): one step instead of ten. The C dialect computes
 * every f32 fmod and % with it in a pass of their own over the block and
 * redoes the whole pass with cs_fmodf (cs_modf) when any lane is far
 * (jit/emit.c, emit_call_pass), so the result is always cs_fmodf's. */
CS_INLINE float cs_fmodf_near(float a, float b)
{
    double m = fabs((double)b);
    return cs_mathf_fmod_last(fabs((double)a), m, 1.0 / m, a);
}

/* Python's float % from C's fmod r (exact) in f32: the sign of the divisor
 * (a zero keeps fmod's sign). */
CS_INLINE float cs_mathf_floored(float fmod_r, float b)
{
    cs_mathf_bits r, shifted;
    r.f = fmod_r;
    shifted.f = r.f + b;
    unsigned int shift = 0u - (unsigned int)((r.f != 0.0f) & ((r.f < 0.0f) != (b < 0.0f)));
    r.u = (r.u & ~shift) | (shifted.u & shift);
    return r.f;
}

CS_INLINE float cs_modf(float a, float b) { return cs_mathf_floored(cs_fmodf(a, b), b); }
/* the near range is cs_fmodf's (cs_modf_far = cs_fmodf_far) */
CS_INLINE int cs_modf_far(float a, float b) { return cs_fmodf_far(a, b); }
CS_INLINE float cs_modf_near(float a, float b) { return cs_mathf_floored(cs_fmodf_near(a, b), b); }

#endif
