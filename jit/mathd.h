/* f64's fast math (cs_config.math = CS_MATH_FAST): branch-free double
 * functions that call nothing, so that an f64 step loop using them
 * vectorizes, where glibc's exact calls (mathf.h's cs_sin ...) need a scalar
 * pass of their own. jit/ops.def names them (fast_f64); pasted after
 * mathf.h in front of every generated source of both dialects, and included
 * by the one evaluator (jit/op_eval.c), so that folding, the interpreter,
 * the C and the CUDA dialects compute each op with the same function, bit
 * for bit, in this mode. Off by default: the exact mode keeps Gymnasium's
 * bits.
 *
 * Accuracy: the bound each function keeps (tests/test_mathd.c checks a
 * sample against it) and the largest error bench/mathd_accuracy.c measured
 * against long double (x87, 64-bit significand) on 4 to 8 million samples
 * per function (uniform and log-uniform over the domain, and for sin, cos
 * and tan the doubles nearest to k pi/2 for every k of the range, where the
 * reduction cancels most), in ulps of the result:
 *   sin, cos   1 ulp (measured 0.79) for |x| <= 1e6; past it x is taken as
 *              +-0 (finite and bounded, not accurate); inf and NaN: NaN
 *   tan        3 ulp (2.32) for |x| <= 1e6
 *   exp        1 ulp (0.95) where the result is normal; 0 and inf outside
 *   log        1 ulp (0.83) for every x > 0
 *   tanh       3 ulp (2.42)
 *   atan2      3 ulp (2.60) for every pair
 *   pow        2 ulp (1.80) where the result is normal (ln|a| in
 *              double-double, b ln|a| by fma); b = 2 is a * a, correctly
 *              rounded
 *   fmod, mod  exact (as C's fmod) where |a / b| < 2^208; NaN past it
 * Every special case (zeros, infinities, NaN) is C's, checked against
 * glibc. docs/math.md lists the same numbers.
 *
 * Method: every function reduces its argument with exact or double-double
 * steps and evaluates a polynomial whose error is below 2^-60 on the
 * reduced range (Chebyshev fits for sin and cos, Taylor series elsewhere).
 * Choices are bit masks, not ?:, for mathf.h's reason (GCC keeps ?: of
 * float arithmetic as branches). sin, cos, tan, pow and fmod use C's fma:
 * one rounding everywhere, the same bits on every backend (an instruction
 * with FMA, as on the development machine; a library call without it).
 */
#ifndef CS_MATHD_H
#define CS_MATHD_H

/* c ? a : b by the bits, c a mask of all ones or zeros */
CS_INLINE double cs_mathd_pick(unsigned long long c, double a, double b)
{
    cs_mathf_dbits x, y;
    x.d = a;
    y.d = b;
    x.u = (x.u & c) | (y.u & ~c);
    return x.d;
}

CS_INLINE unsigned long long cs_mathd_mask(int c) { return 0ull - (unsigned long long)c; }

/* 2^k for an integer-valued double k in [-1022, 1023] */
CS_INLINE double cs_mathd_pow2(double k)
{
    cs_mathf_dbits b;
    b.d = k + 0x1.8p52; /* k in the low bits; the magic's low 12 bits are 0 */
    b.u = (b.u + 1023u) << 52;
    return b.d;
}

/* x = k pi/2 + (hi + lo) for |x| <= 1e6 (else x is taken as +-0, and an
 * infinity as NaN); k mod 4 in the low bits of the return. pi/2 = P + D1 +
 * D2, P = pi/2 rounded: x - k P is exact in one fma (a multiple of 2^-53
 * below 1: it fits); D1 has 33 bits, so k D1 is exact for |k| < 2^20, and
 * the difference is summed as a double-double (TwoSum), which keeps the
 * relative error of r below 2^-60 even for the doubles nearest to a
 * multiple of pi/2. */
CS_INLINE unsigned int cs_mathd_reduce(double x, double *hi, double *lo)
{
    cs_mathf_dbits zero, kbits;
    zero.d = x * 0.0;
    x = cs_mathd_pick(cs_mathd_mask((x >= -1e6) & (x <= 1e6)), x, zero.d);
    const double round_magic = 0x1.8p52;
    kbits.d = x * 0x1.45f306dc9c883p-1 + round_magic; /* 2/pi */
    double k = kbits.d - round_magic;
    double a = fma(-k, 0x1.921fb54442d18p+0, x);
    double p = k * 0x1.1a626331p-54;
    double s = a - p, v = s - a, e = (a - (s - v)) + (-p - v); /* a - p = s + e exactly */
    double tail = e - k * 0x1.1701b839a252p-88;
    double h = s + tail;
    *hi = h;
    *lo = tail - (h - s);
    return (unsigned int)kbits.u;
}

/* sin and cos of hi + lo, |hi| <= pi/4 (a little more: k is rounded from
 * x * 2/pi): polynomials in r^2 to r^15 and r^12, Chebyshev fits on |r| <=
 * 1.0001 pi/4 (mpmath's chebyfit) of (sin r - r) / r^3 and (cos r - 1 +
 * r^2/2) / r^4, relative errors of sin and cos below 2^-66 and 2^-60. */
CS_INLINE double cs_mathd_sin_poly(double hi, double lo)
{
    double z = hi * hi;
    double p = 0x1.61217ec01749dp-33 + z * -0x1.ab17a79237a19p-41;
    p = -0x1.ae64541266378p-26 + z * p;
    p = 0x1.71de3a54605eep-19 + z * p;
    p = -0x1.a01a01a019936p-13 + z * p;
    p = 0x1.1111111111110p-7 + z * p;
    p = -0x1.5555555555555p-3 + z * p;
    /* sin(hi + lo) = sin hi + lo cos hi */
    return hi + ((z * hi) * p + lo * (1.0 - 0.5 * z));
}

CS_INLINE double cs_mathd_cos_poly(double hi, double lo)
{
    double z = hi * hi;
    double p = 0x1.1eeb68b109173p-29 + z * -0x1.907d7aebd5e3dp-37;
    p = -0x1.27e4fa17a41b4p-22 + z * p;
    p = 0x1.a01a019f4e867p-16 + z * p;
    p = -0x1.6c16c16c16966p-10 + z * p;
    p = 0x1.5555555555555p-5 + z * p;
    /* 1 - z/2 rounded to w, and what the rounding lost added back;
     * cos(hi + lo) = cos hi - lo sin hi */
    double hz = 0.5 * z, w = 1.0 - hz;
    return w + (((1.0 - w) - hz) + ((z * z) * p - hi * lo));
}

/* quarter 0: sin x; 1: sin(x + pi/2) = cos x */
CS_INLINE double cs_mathd_sin_quarter(double x, unsigned int quarter)
{
    double hi, lo;
    unsigned int k = cs_mathd_reduce(x, &hi, &lo) + quarter;
    double s = cs_mathd_sin_poly(hi, lo), c = cs_mathd_cos_poly(hi, lo);
    cs_mathf_dbits out;
    out.d = cs_mathd_pick(cs_mathd_mask((int)(k & 1u)), c, s);
    out.u ^= (unsigned long long)(k & 2u) << 62;
    /* +-0 (where the reduction's sums lose the sign) are sin's own */
    return cs_mathd_pick(cs_mathd_mask(x == 0.0 && quarter == 0u), x, out.d);
}

CS_INLINE double cs_fast_sin(double x) { return cs_mathd_sin_quarter(x, 0u); }
CS_INLINE double cs_fast_cos(double x) { return cs_mathd_sin_quarter(x, 1u); }

/* tan: sin r / cos r for even k, -cos r / sin r for odd k */
CS_INLINE double cs_fast_tan(double x)
{
    double hi, lo;
    unsigned int k = cs_mathd_reduce(x, &hi, &lo);
    double s = cs_mathd_sin_poly(hi, lo), c = cs_mathd_cos_poly(hi, lo);
    unsigned long long odd = cs_mathd_mask((int)(k & 1u));
    return cs_mathd_pick(cs_mathd_mask(x == 0.0), x, cs_mathd_pick(odd, -c, s) / cs_mathd_pick(odd, s, c));
}

/* e^(y + y_lo) = 2^k e^r for |y| <= 746, |y_lo| tiny: k = nearest integer
 * to y / ln 2, r = y - k ln 2 + y_lo with ln 2 in two parts (k times the
 * first, of 42 bits, exact); e^r - 1 = r + r^2 Q(r) (Taylor to r^14,
 * truncation below 2^-60 on |r| <= 0.35), returned; *k_out = k. */
CS_INLINE double cs_mathd_expm1_parts(double y, double y_lo, double *k_out)
{
    const double round_magic = 0x1.8p52;
    double k = (y * 0x1.71547652b82fep+0 + round_magic) - round_magic; /* 1/ln 2 */
    double r = ((y - k * 0x1.62e42fefa38p-1) - k * 0x1.ef35793c7673p-45) + y_lo;
    double q = 0x1.6124613a86d09p-33 + r * 0x1.93974a8c07c9dp-37;
    q = 0x1.1eed8eff8d898p-29 + r * q;
    q = 0x1.ae64567f544e4p-26 + r * q;
    q = 0x1.27e4fb7789f5cp-22 + r * q;
    q = 0x1.71de3a556c734p-19 + r * q;
    q = 0x1.a01a01a01a01ap-16 + r * q;
    q = 0x1.a01a01a01a01ap-13 + r * q;
    q = 0x1.6c16c16c16c17p-10 + r * q;
    q = 0x1.1111111111111p-7 + r * q;
    q = 0x1.5555555555555p-5 + r * q;
    q = 0x1.5555555555555p-3 + r * q;
    q = 0.5 + r * q;
    *k_out = k;
    return r + (r * r) * q;
}

/* e^(x + x_lo): x clamped to [-746, 710] (0 and inf come out of the
 * scaling; x_lo then dropped), 1 + p rounded once, then times 2^k in two
 * exact steps (2^k alone may not be a double), the second rounding only a
 * subnormal result. */
CS_INLINE double cs_mathd_exp_dd(double x, double x_lo)
{
    unsigned long long big = cs_mathd_mask(x > 710.0), small = cs_mathd_mask(x < -746.0);
    x = cs_mathd_pick(big, 710.0, cs_mathd_pick(small, -746.0, x));
    x_lo = cs_mathd_pick(big | small, 0.0, x_lo);
    double k, p = cs_mathd_expm1_parts(x, x_lo, &k);
    double k1 = (k * 0.5 + 0x1.8p52) - 0x1.8p52, k2 = k - k1;
    return ((1.0 + p) * cs_mathd_pow2(k1)) * cs_mathd_pow2(k2);
}

CS_INLINE double cs_fast_exp(double x) { return cs_mathd_exp_dd(x, 0.0); }

/* tanh|x| = m / (m + 2), m = expm1(2|x|) = 2^k p + (2^k - 1) (both terms
 * exact, no cancellation: k >= 0); |x| clamped to 22, past which tanh is
 * 1 in double. Odd; NaN for NaN. */
CS_MATHF_SIMD_FN double cs_fast_tanh(double x)
{
    cs_mathf_dbits in, out;
    in.d = x;
    unsigned long long sign = in.u & 0x8000000000000000ull;
    in.u ^= sign;
    double y = 2.0 * cs_mathd_pick(cs_mathd_mask(in.d > 22.0), 22.0, in.d);
    double k, p = cs_mathd_expm1_parts(y, 0.0, &k);
    double scale = cs_mathd_pow2(k);
    double m = scale * p + (scale - 1.0);
    out.d = m / (m + 2.0);
    out.u |= sign;
    return out.d;
}

/* x = 2^e (1 + f) for a positive finite x, 1 + f in [sqrt(1/2), sqrt(2))
 * (subnormals scaled by 2^54 first): f returned, e in *e_out. */
CS_INLINE double cs_mathd_log_split(double x, double *e_out)
{
    unsigned long long tiny = cs_mathd_mask(x < 0x1p-1022);
    cs_mathf_dbits b, e_bits, half;
    b.d = cs_mathd_pick(tiny, x * 0x1p54, x);
    e_bits.u = 0x4330000000000000ull | ((b.u >> 52) & 0x7ffull);
    double e = e_bits.d - (0x1p52 + 1023.0) - cs_mathd_pick(tiny, 54.0, 0.0);
    b.u = (b.u & 0x000fffffffffffffull) | 0x3ff0000000000000ull; /* [1, 2) */
    half.d = b.d * 0.5;
    unsigned long long high = cs_mathd_mask(b.d > 0x1.6a09e667f3bcdp+0); /* sqrt 2 */
    b.d = cs_mathd_pick(high, half.d, b.d);
    *e_out = e + cs_mathd_pick(high, 1.0, 0.0);
    return b.d - 1.0;
}

/* The atanh series of ln(1 + f) = 2 atanh(s), s = f / (2 + f) (|s| <=
 * 0.1716): 2 atanh(s) = 2s + s^3 R(s^2), R to s^22 (truncation below
 * 2^-70 of the result). Returns s^2 R(s^2). */
CS_INLINE double cs_mathd_atanh_tail(double z)
{
    double r = 0x1.642c8590b2164p-4;
    r = 0x1.8618618618618p-4 + z * r;
    r = 0x1.af286bca1af28p-4 + z * r;
    r = 0x1.e1e1e1e1e1e1ep-4 + z * r;
    r = 0x1.1111111111111p-3 + z * r;
    r = 0x1.3b13b13b13b14p-3 + z * r;
    r = 0x1.745d1745d1746p-3 + z * r;
    r = 0x1.c71c71c71c71cp-3 + z * r;
    r = 0x1.2492492492492p-2 + z * r;
    r = 0x1.999999999999ap-2 + z * r;
    r = 0x1.5555555555555p-1 + z * r;
    return r * z;
}

/* ln x for a positive finite x: ln(1 + f) = f - f^2/2 + s (f^2/2 + s^2
 * R(s^2)), e ln 2 in two parts (e times the first, of 42 bits, exact). */
CS_INLINE double cs_mathd_log_core(double x)
{
    double e, f = cs_mathd_log_split(x, &e);
    double s = f / (2.0 + f), hfsq = 0.5 * f * f, r = cs_mathd_atanh_tail(s * s);
    return e * 0x1.62e42fefa38p-1 - ((hfsq - (s * (hfsq + r) + e * 0x1.ef35793c7673p-45)) - f);
}

/* ln x as hi + *lo for pow (whose error is |b| times ln's): s = f / (2 +
 * f) as s + s_lo (the division's remainder by fma is exact), ln(1 + f) =
 * 2s + 2 s_lo + s^3 R(s^2), and e ln 2 added in double-double: relative
 * error about 2^-60. */
CS_INLINE double cs_mathd_log_dd(double x, double *lo)
{
    double e, f = cs_mathd_log_split(x, &e);
    double d = 2.0 + f, d_lo = f - (d - 2.0); /* 2 + f = d + d_lo exactly */
    double s = f / d, s_lo = (fma(-s, d, f) - s * d_lo) / d;
    double t = 2.0 * s_lo + s * cs_mathd_atanh_tail(s * s);
    double a = e * 0x1.62e42fefa38p-1, h = 2.0 * s;
    double sum = a + h, v = sum - a, err = (a - (sum - v)) + (h - v);
    double tail = (err + t) + e * 0x1.ef35793c7673p-45;
    double hi = sum + tail;
    *lo = tail - (hi - sum);
    return hi;
}

/* log: -inf for +-0, NaN below 0 and for NaN, inf for inf. */
CS_INLINE double cs_fast_log(double x)
{
    cs_mathf_dbits in, minus_inf, nan;
    in.d = x;
    minus_inf.u = 0xfff0000000000000ull;
    nan.u = 0x7ff8000000000000ull;
    double r = cs_mathd_log_core(x);
    unsigned long long zero = cs_mathd_mask((in.u & 0x7fffffffffffffffull) == 0);
    unsigned long long negative = cs_mathd_mask((int)(in.u >> 63)) & ~zero;
    unsigned long long inf_nan = cs_mathd_mask((in.u & 0x7fffffffffffffffull) >= 0x7ff0000000000000ull);
    r = cs_mathd_pick(inf_nan, x, r);
    r = cs_mathd_pick(negative, nan.d, r);
    return cs_mathd_pick(zero, minus_inf.d, r);
}

/* atan2, C's for every special case. t = min / max of |y|, |x| in [0, 1];
 * past tan(pi/8), u = (t - 1) / (t + 1) and pi/4 added; atan u as the
 * series to u^41 (truncation below 2^-57 relative on |u| <= 0.4143); then
 * pi/2 - a where |y| > |x|, pi - a where x < 0 (pi/4, pi/2 and pi each in
 * two parts), and y's sign. */
CS_INLINE double cs_fast_atan2(double y, double x)
{
    cs_mathf_dbits in_y, in_x, out;
    in_y.d = y;
    in_x.d = x;
    double ay = fabs(y), ax = fabs(x);
    unsigned long long y_bigger = cs_mathd_mask(ay > ax);
    double num = cs_mathd_pick(y_bigger, ax, ay), den = cs_mathd_pick(y_bigger, ay, ax);
    /* two zeros: 0 / 1; two infinities: 1 / 1 (NaN stays NaN) */
    unsigned long long both_zero = cs_mathd_mask(den == 0.0);
    unsigned long long both_inf = cs_mathd_mask((num == den) & (num > 1.7976931348623157e308));
    den = cs_mathd_pick(both_zero | both_inf, 1.0, den);
    num = cs_mathd_pick(both_inf, 1.0, num);
    double t = num / den;
    unsigned long long reduce = cs_mathd_mask(t > 0x1.a827999fcef32p-2); /* tan(pi/8) */
    double u = cs_mathd_pick(reduce, (t - 1.0) / (t + 1.0), t);
    double z = u * u;
    double q = 0x1.8f9c18f9c18fap-6;
    q = -0x1.a41a41a41a41ap-6 + z * q;
    q = 0x1.bacf914c1bad0p-6 + z * q;
    q = -0x1.d41d41d41d41dp-6 + z * q;
    q = 0x1.f07c1f07c1f08p-6 + z * q;
    q = -0x1.0842108421084p-5 + z * q;
    q = 0x1.1a7b9611a7b96p-5 + z * q;
    q = -0x1.2f684bda12f68p-5 + z * q;
    q = 0x1.47ae147ae147bp-5 + z * q;
    q = -0x1.642c8590b2164p-5 + z * q;
    q = 0x1.8618618618618p-5 + z * q;
    q = -0x1.af286bca1af28p-5 + z * q;
    q = 0x1.e1e1e1e1e1e1ep-5 + z * q;
    q = -0x1.1111111111111p-4 + z * q;
    q = 0x1.3b13b13b13b14p-4 + z * q;
    q = -0x1.745d1745d1746p-4 + z * q;
    q = 0x1.c71c71c71c71cp-4 + z * q;
    q = -0x1.2492492492492p-3 + z * q;
    q = 0x1.999999999999ap-3 + z * q;
    q = -0x1.5555555555555p-2 + z * q;
    double atan_u = u + (u * z) * q;
    /* pi/4 + atan u, the constant's tail added first */
    double a = cs_mathd_pick(reduce, 0x1.921fb54442d18p-1 + (atan_u + 0x1.1a62633145c07p-55), atan_u);
    a = cs_mathd_pick(y_bigger, 0x1.921fb54442d18p+0 + (0x1.1a62633145c07p-54 - a), a);
    a = cs_mathd_pick(cs_mathd_mask((int)(in_x.u >> 63)), 0x1.921fb54442d18p+1 + (0x1.1a62633145c07p-53 - a), a);
    out.d = a;
    out.u |= in_y.u & 0x8000000000000000ull;
    return out.d;
}

/* pow: a * a for b = 2 (an exponent known when the kernel is compiled picks
 * its arm then); else |a|^b = e^(b ln|a|), b ln|a| clamped to [-800, 800]
 * (0 and inf come out of exp), with C's pow for every special case (signs
 * of zeros and negative bases with integer exponents, infinities, pow(x,
 * +-0) = pow(1, y) = 1 even for NaN, NaN for a negative finite base and a
 * non-integer exponent). */
CS_INLINE double cs_mathd_pow(double a, double b)
{
    cs_mathf_dbits in_a, in_b, out;
    in_a.d = a;
    in_b.d = b;
    double x = fabs(a);
    cs_mathf_dbits minus_inf;
    minus_inf.u = 0xfff0000000000000ull;
    /* ln|a| = l + l_lo for 0 < |a| < inf, else -inf (a = +-0), inf (a =
     * +-inf) or NaN */
    double l_lo, l = cs_mathd_log_dd(x, &l_lo);
    unsigned long long not_finite = cs_mathd_mask(!(x <= 1.7976931348623157e308)), zero = cs_mathd_mask(x == 0.0);
    l = cs_mathd_pick(not_finite, x, l);
    l = cs_mathd_pick(zero, minus_inf.d, l);
    l_lo = cs_mathd_pick(not_finite | zero, 0.0, l_lo);
    /* b ln|a| = t + t_lo (fma: the product's exact error) */
    double t = b * l, t_lo = fma(b, l, -t) + b * l_lo;
    unsigned long long out_of_range = cs_mathd_mask(!(t >= -800.0 && t <= 800.0)); /* NaN too */
    t_lo = cs_mathd_pick(out_of_range, 0.0, t_lo);
    t = cs_mathd_pick(cs_mathd_mask(t < -800.0), -800.0, cs_mathd_pick(cs_mathd_mask(t > 800.0), 800.0, t));
    out.d = cs_mathd_exp_dd(t, t_lo);
    /* a negative base (sign bit set, -0 and -inf included): an odd integer
     * exponent keeps the sign, any integer a positive result, else NaN
     * (finite nonzero bases only: -0 and -inf have a result for any b) */
    double half_b = b * 0.5;
    unsigned long long is_int = cs_mathd_mask(b == trunc(b));
    unsigned long long is_odd = is_int & cs_mathd_mask(half_b != trunc(half_b));
    unsigned long long negative = cs_mathd_mask((int)(in_a.u >> 63));
    unsigned long long finite_nonzero = cs_mathd_mask((x != 0.0) & (x <= 1.7976931348623157e308));
    out.u |= 0x8000000000000000ull & negative & is_odd;
    unsigned long long nan = negative & ~is_int & finite_nonzero;
    out.u = (out.u & ~nan) | (0x7ff8000000000000ull & nan);
    /* 1 for b = +-0 and for a = 1, NaN or not; and for a = -1, b = +-inf */
    unsigned long long one = cs_mathd_mask((in_b.u & 0x7fffffffffffffffull) == 0) |
                             cs_mathd_mask(in_a.u == 0x3ff0000000000000ull) |
                             cs_mathd_mask((in_a.u == 0xbff0000000000000ull) &
                                           ((in_b.u & 0x7fffffffffffffffull) == 0x7ff0000000000000ull));
    return cs_mathd_pick(one, 1.0, out.d);
}

CS_INLINE double cs_fast_pow(double a, double b) { return b == 2.0 ? a * a : cs_mathd_pow(a, b); }

/* One exact step of the remainder: 0 <= x < m 2^52 on entry, 0 <= x < m
 * after. q = trunc(x / m) rounded is the quotient or one more (a quotient
 * below 2^52 rounds to within half of an integer), so x - q m lies in
 * (-m, m), a multiple of m's last bit: fma computes it exactly, and adding m
 * to a negative one is exact too. An infinite m (the caller's scaling
 * overflowed) leaves x. */
CS_INLINE double cs_mathd_fmod_step(double x, double m)
{
    double r = fma(-trunc(x / m), m, x);
    r = cs_mathd_pick(cs_mathd_mask(r < 0.0), r + m, r);
    return cs_mathd_pick(cs_mathd_mask(m > 1.7976931348623157e308), x, r);
}

/* C's fmod, exactly, where |a| < |b| 2^208 (four steps of 52 bits of
 * quotient), NaN past it; a's sign. NaN for NaN, an infinite a or a zero b,
 * as fmod; a for an infinite b. */
CS_INLINE double cs_fast_fmod(double a, double b)
{
    double x = fabs(a), m = fabs(b);
    unsigned long long too_far = cs_mathd_mask(x >= m * 0x1p208);
    x = cs_mathd_fmod_step(x, m * 0x1p156);
    x = cs_mathd_fmod_step(x, m * 0x1p104);
    x = cs_mathd_fmod_step(x, m * 0x1p52);
    x = cs_mathd_fmod_step(x, m);
    cs_mathf_dbits r, in_a, in_b, nan;
    nan.u = 0x7ff8000000000000ull;
    r.d = cs_mathd_pick(too_far, nan.d, x);
    in_a.d = a;
    in_b.d = b;
    /* a zero b or an infinite a: NaN */
    unsigned long long invalid = cs_mathd_mask((m == 0.0) | !(fabs(a) <= 1.7976931348623157e308));
    r.d = cs_mathd_pick(invalid, nan.d, r.d);
    r.u |= in_a.u & 0x8000000000000000ull;
    /* b = +-inf: a itself, if finite */
    unsigned long long keep_a = cs_mathd_mask(((in_b.u & 0x7fffffffffffffffull) == 0x7ff0000000000000ull) &
                                              ((in_a.u & 0x7fffffffffffffffull) < 0x7ff0000000000000ull));
    return cs_mathd_pick(keep_a, a, r.d);
}

/* Python's float % over cs_fast_fmod, as cs_mod over glibc's fmod: the sign
 * of the divisor (a zero keeps fmod's sign). */
CS_INLINE double cs_fast_mod(double a, double b)
{
    double r = cs_fast_fmod(a, b);
    unsigned long long shift = cs_mathd_mask((r != 0.0) & ((r < 0.0) != (b < 0.0)));
    return cs_mathd_pick(shift, r + b, r);
}

#endif
