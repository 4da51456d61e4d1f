/* cs_sinf and cs_cosf (jit/mathf.h) against libm's double sin and cos
 * rounded to float: at most 2 ulp apart on |x| <= 1e4 (the promise; the
 * header documents accuracy to 1e5, checked here too), finite and bounded
 * beyond, NaN for NaN and infinities. cs_tanhf against double tanh rounded
 * to float: at most 1 ulp apart over all floats (bench/tanhf_exhaustive.c
 * checks every one; here every 97th), odd, +-1 where the rounded value is. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "philox.h"
#include "mathf.h"
#include "float_bits.h"


/* Floats in order as integers (-0 and +0 both 0), so ulps are a subtraction. */
static int64_t ordered(float f)
{
    uint32_t u = float_bits(f);
    return (u & 0x80000000u) ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
}

static int64_t ulps(float got, float want)
{
    int64_t d = ordered(got) - ordered(want);
    return d < 0 ? -d : d;
}

typedef struct {
    int64_t worst;
    float at;
} error_record;

static void check_point(float x, error_record *sin_err, error_record *cos_err)
{
    int64_t es = ulps(cs_sinf(x), (float)sin((double)x));
    int64_t ec = ulps(cs_cosf(x), (float)cos((double)x));
    if (es > sin_err->worst) {
        sin_err->worst = es;
        sin_err->at = x;
    }
    if (ec > cos_err->worst) {
        cos_err->worst = ec;
        cos_err->at = x;
    }
}

/* Every `stride`-th float of [0, limit] and its negative: all binades from
 * the subnormals up, with varied mantissas. */
static void sweep(float limit, uint32_t stride, error_record *s, error_record *c)
{
    uint32_t end = float_bits(limit);
    for (uint32_t b = 0; b <= end; b += stride) {
        check_point(bits_float(b), s, c);
        check_point(-bits_float(b), s, c);
    }
    check_point(limit, s, c);
    check_point(-limit, s, c);
}

Test(mathf, dense_sweep_within_2_ulp_to_1e4)
{
    error_record s = {0, 0}, c = {0, 0};
    sweep(1e4f, 251, &s, &c);
    cr_log_info("sin: %lld ulp at %a; cos: %lld ulp at %a", (long long)s.worst, s.at, (long long)c.worst, c.at);
    cr_assert_leq(s.worst, 2, "sin off by %lld ulp at %.9g", (long long)s.worst, s.at);
    cr_assert_leq(c.worst, 2, "cos off by %lld ulp at %.9g", (long long)c.worst, c.at);
}

Test(mathf, sweep_within_2_ulp_to_1e5)
{
    error_record s = {0, 0}, c = {0, 0};
    sweep(1e5f, 1009, &s, &c);
    cr_assert_leq(s.worst, 2, "sin off by %lld ulp at %.9g", (long long)s.worst, s.at);
    cr_assert_leq(c.worst, 2, "cos off by %lld ulp at %.9g", (long long)c.worst, c.at);
}

/* Near multiples of pi/2 the reduced argument cancels almost entirely: the
 * floats closest to k * pi/2 (and a few neighbours) are the hard cases. The
 * closest of all below 1e4 is 252.898209 (4.2e-9 from 161 pi/2). */
Test(mathf, near_multiples_of_half_pi)
{
    error_record s = {0, 0}, c = {0, 0};
    const double half_pi = 1.57079632679489661923;
    for (int k = 0; k <= 6366; k++) {
        float near = (float)(k * half_pi);
        for (int d = -3; d <= 3; d++) {
            float x = bits_float(float_bits(near) + (uint32_t)d);
            if (k == 0 && d < 0)
                continue;
            check_point(x, &s, &c);
            check_point(-x, &s, &c);
        }
    }
    check_point(252.898209f, &s, &c);
    cr_assert_leq(s.worst, 2, "sin off by %lld ulp at %.9g", (long long)s.worst, s.at);
    cr_assert_leq(c.worst, 2, "cos off by %lld ulp at %.9g", (long long)c.worst, c.at);
}

Test(mathf, zeros_and_tiny_values)
{
    /* sin keeps the sign of zero and returns tiny x itself; cos is 1. */
    cr_assert_eq(float_bits(cs_sinf(0.0f)), float_bits(0.0f));
    cr_assert_eq(float_bits(cs_sinf(-0.0f)), float_bits(-0.0f));
    cr_assert_eq(cs_cosf(0.0f), 1.0f);
    cr_assert_eq(cs_cosf(-0.0f), 1.0f);
    const float tiny[] = {FLT_TRUE_MIN, 1e-40f, FLT_MIN, 1e-30f, 1e-10f, 1e-5f};
    for (unsigned i = 0; i < sizeof tiny / sizeof tiny[0]; i++) {
        cr_assert_eq(cs_sinf(tiny[i]), (float)sin((double)tiny[i]), "sin(%g)", tiny[i]);
        cr_assert_eq(cs_sinf(-tiny[i]), -(float)sin((double)tiny[i]), "sin(-%g)", tiny[i]);
        cr_assert_eq(cs_cosf(tiny[i]), (float)cos((double)tiny[i]), "cos(%g)", tiny[i]);
    }
}

Test(mathf, sin_is_odd_and_cos_even)
{
    for (uint32_t b = 0; b <= float_bits(1e4f); b += 100003) {
        float x = bits_float(b);
        cr_assert_eq(float_bits(cs_sinf(-x)), float_bits(-cs_sinf(x)), "x = %a", x);
        cr_assert_eq(float_bits(cs_cosf(-x)), float_bits(cs_cosf(x)), "x = %a", x);
    }
}

Test(mathf, nan_and_infinities_give_nan)
{
    const float bad[] = {NAN, -NAN, INFINITY, -INFINITY};
    for (unsigned i = 0; i < 4; i++) {
        cr_assert(isnan(cs_sinf(bad[i])), "sin(%g)", bad[i]);
        cr_assert(isnan(cs_cosf(bad[i])), "cos(%g)", bad[i]);
    }
}

Test(mathf, huge_arguments_stay_finite_and_bounded)
{
    const float huge[] = {1.00001e5f, 1e6f, 6.6e6f, 1e7f, 3e9f, 1e30f, FLT_MAX};
    for (unsigned i = 0; i < sizeof huge / sizeof huge[0]; i++)
        for (int sign = -1; sign <= 1; sign += 2) {
            float x = (float)sign * huge[i];
            float s = cs_sinf(x), c = cs_cosf(x);
            cr_assert(isfinite(s) && s >= -1.0f && s <= 1.0f, "sin(%g) = %g", x, s);
            cr_assert(isfinite(c) && c >= -1.0f && c <= 1.0f, "cos(%g) = %g", x, c);
        }
}

/* The loop shape of a generated kernel: the pair of one argument. */
Test(mathf, same_results_in_a_vectorizable_loop)
{
    enum { N = 1024 };
    static float x[N], s[N], c[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)(i - N / 2) * 0.37f;
    for (int i = 0; i < N; i++) {
        s[i] = cs_sinf(x[i]);
        c[i] = cs_cosf(x[i]);
    }
    for (int i = 0; i < N; i++) {
        cr_assert_eq(float_bits(s[i]), float_bits(cs_sinf(x[i])));
        cr_assert_eq(float_bits(c[i]), float_bits(cs_cosf(x[i])));
        cr_assert_leq(ulps(s[i], (float)sin((double)x[i])), 2);
        cr_assert_leq(ulps(c[i], (float)cos((double)x[i])), 2);
    }
}

/* ---- tanh ---- */

static int64_t tanh_ulps(float x) { return ulps(cs_tanhf(x), (float)tanh((double)x)); }

/* Every 97th non-negative float up to +inf (all binades, subnormals and the
 * saturated range included), each with its negative, which must be the
 * exact negation. */
Test(mathf, tanh_sweep_within_1_ulp_and_odd)
{
    int64_t worst = 0;
    float at = 0;
    for (uint32_t b = 0; b <= 0x7f800000u; b += 97) {
        float x = bits_float(b);
        int64_t e = tanh_ulps(x);
        if (e > worst) {
            worst = e;
            at = x;
        }
        cr_assert_eq(float_bits(cs_tanhf(-x)), float_bits(cs_tanhf(x)) ^ 0x80000000u, "tanh(-%a) is not -tanh(%a)",
                     x, x);
    }
    cr_log_info("tanh: %lld ulp at %a", (long long)worst, at);
    cr_assert_leq(worst, 1, "tanh off by %lld ulp at %.9g", (long long)worst, at);
}

/* Where the computation changes hands: k = round(2|x| / ln 2) steps at odd
 * multiples of ln(2)/4, and the clamp at 16. */
Test(mathf, tanh_at_reduction_boundaries)
{
    int64_t worst = 0;
    float at = 0;
    for (int j = 0; j < 50; j++) {
        float edge = (float)((2 * j + 1) * 0.69314718055994531 / 4);
        for (int d = -4; d <= 4; d++) {
            float x = bits_float(float_bits(edge) + (uint32_t)d);
            int64_t e = tanh_ulps(x);
            if (e > worst) {
                worst = e;
                at = x;
            }
        }
    }
    cr_assert_leq(worst, 1, "tanh off by %lld ulp at %.9g", (long long)worst, at);
    const float clamp[] = {15.999999f, 16.0f, 16.000002f};
    for (unsigned i = 0; i < 3; i++)
        cr_assert_eq(cs_tanhf(clamp[i]), 1.0f, "tanh(%.9g)", clamp[i]);
}

Test(mathf, tanh_zeros_tiny_and_saturation)
{
    cr_assert_eq(float_bits(cs_tanhf(0.0f)), float_bits(0.0f));
    cr_assert_eq(float_bits(cs_tanhf(-0.0f)), float_bits(-0.0f));
    /* tanh x = x to float precision for tiny x, subnormals included. */
    const float tiny[] = {FLT_TRUE_MIN, 1e-40f, FLT_MIN, 1e-30f, 1e-10f, 1e-5f, 1e-4f};
    for (unsigned i = 0; i < sizeof tiny / sizeof tiny[0]; i++) {
        cr_assert_eq(cs_tanhf(tiny[i]), (float)tanh((double)tiny[i]), "tanh(%g)", tiny[i]);
        cr_assert_eq(cs_tanhf(-tiny[i]), -(float)tanh((double)tiny[i]), "tanh(-%g)", tiny[i]);
    }
    cr_assert_eq(cs_tanhf(FLT_TRUE_MIN), FLT_TRUE_MIN);
    /* 9.0109129 is the last float whose rounded tanh is below 1. */
    float last = 9.0109129f;
    cr_assert_eq((float)tanh((double)last), 0x1.fffffep-1f);
    cr_assert_eq(cs_tanhf(last), 0x1.fffffep-1f);
    cr_assert_eq(cs_tanhf(-last), -0x1.fffffep-1f);
    const float big[] = {nextafterf(last, 100.0f), 9.1f, 10.0f, 20.0f, 88.8f, 1e5f, 1e30f, FLT_MAX, INFINITY};
    for (unsigned i = 0; i < sizeof big / sizeof big[0]; i++) {
        cr_assert_eq(cs_tanhf(big[i]), 1.0f, "tanh(%g) = %a", big[i], cs_tanhf(big[i]));
        cr_assert_eq(cs_tanhf(-big[i]), -1.0f, "tanh(-%g) = %a", big[i], cs_tanhf(-big[i]));
    }
}

Test(mathf, tanh_of_nan_is_nan)
{
    const float nan[] = {NAN, -NAN};
    for (unsigned i = 0; i < 2; i++)
        cr_assert(isnan(cs_tanhf(nan[i])), "tanh(%g)", nan[i]);
}

/* The shape of a fused MLP layer. */
Test(mathf, tanh_same_results_in_a_vectorizable_loop)
{
    enum { N = 1024 };
    static float x[N], y[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)(i - N / 2) * 0.0213f;
    for (int i = 0; i < N; i++)
        y[i] = cs_tanhf(x[i]);
    for (int i = 0; i < N; i++) {
        cr_assert_eq(float_bits(y[i]), float_bits(cs_tanhf(x[i])));
        cr_assert_leq(tanh_ulps(x[i]), 1);
    }
}

/* ---- fmod and floored modulo ---- */

/* cs_fmodf must be glibc's fmodf bit for bit (fmod is exact: there is one
 * right answer), NaN for NaN whatever its sign. volatile: GCC would fold
 * fmodf of constants. */
static void expect_fmodf(float a, float b)
{
    volatile float va = a, vb = b;
    float want = fmodf(va, vb), got = cs_fmodf(va, vb);
    if (isnan(want))
        cr_assert(isnan(got), "cs_fmodf(%a, %a) = %a, want NaN", (double)a, (double)b, (double)got);
    else
        cr_assert_eq(float_bits(got), float_bits(want), "cs_fmodf(%a, %a) = %a, want %a", (double)a, (double)b,
                     (double)got, (double)want);
}

Test(mathf, fmodf_exact_on_random_pairs_of_every_magnitude)
{
    /* random bit patterns: every exponent pair, subnormals, inf and NaN */
    unsigned int ctr[4] = {0, 0, 0, 0}, key[2] = {0x5eed, 0xf00d}, w[4];
    for (unsigned i = 0; i < 1u << 20; i++) {
        ctr[0] = i;
        cs_philox4x32_10(ctr, key, w);
        expect_fmodf(bits_float(w[0]), bits_float(w[1]));
        /* close exponents, where the quotient has few bits */
        expect_fmodf(bits_float(w[2]), bits_float((w[2] & 0xff800000u) ^ (w[3] & 0x807fffffu)));
    }
}

Test(mathf, fmodf_exact_for_every_stride_of_floats_and_common_divisors)
{
    const float divisors[] = {6.28318548f, 1.0f, -3.0f, 0.1f, 1e-30f, 7e30f, 0x1p-149f, 3.4e38f};
    for (size_t k = 0; k < sizeof divisors / sizeof divisors[0]; k++)
        for (uint64_t u = 0; u <= 0xffffffffu; u += 4099)
            expect_fmodf(bits_float((uint32_t)u), divisors[k]);
}

Test(mathf, fmodf_and_modf_special_values)
{
    const float v[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.5f, -7.0f, 0x1p-149f, -0x1p-149f, 3.4e38f, INFINITY, -INFINITY, NAN};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        for (size_t j = 0; j < sizeof v / sizeof v[0]; j++) {
            expect_fmodf(v[i], v[j]);
            /* Python's %: fmod moved to the divisor's sign, a zero kept */
            volatile float a = v[i], b = v[j];
            float r = fmodf(a, b);
            if (r != 0 && ((r < 0) != (b < 0)))
                r += b;
            float got = cs_modf(a, b);
            cr_assert(isnan(r) ? isnan(got) : float_bits(got) == float_bits(r), "cs_modf(%a, %a) = %a, want %a",
                      (double)a, (double)b, (double)got, (double)r);
        }
}

/* cs_fmodf_near is cs_fmodf (glibc's fmodf) bit for bit wherever
 * cs_fmodf_far is 0, and cs_modf_near is cs_modf there: random pairs of
 * close exponents (most are near) and strides of floats by common divisors,
 * Pendulum's 2 pi first. Returns how many pairs were near. */
static long expect_near_exact(float a, float b)
{
    volatile float va = a, vb = b;
    if (cs_fmodf_far(va, vb))
        return 0;
    float want = fmodf(va, vb), got = cs_fmodf_near(va, vb);
    cr_assert_eq(float_bits(got), float_bits(want), "cs_fmodf_near(%a, %a) = %a, want %a", (double)a, (double)b,
                 (double)got, (double)want);
    cr_assert_eq(float_bits(cs_modf_near(va, vb)), float_bits(cs_modf(va, vb)), "cs_modf_near(%a, %a)", (double)a,
                 (double)b);
    return 1;
}

Test(mathf, fmodf_near_equals_fmodf_wherever_not_far)
{
    long near = 0, pairs = 0;
    unsigned int ctr[4] = {0, 0, 0, 0}, key[2] = {0xbeef, 0x1234}, w[4];
    for (unsigned i = 0; i < 1u << 19; i++, pairs += 2) {
        ctr[0] = i;
        cs_philox4x32_10(ctr, key, w);
        /* b's exponent within 0..31 below a's, either sign, any significand */
        uint32_t ea = w[0] & 0x7f800000u, eb = ea - ((w[1] & 31u) << 23);
        near += expect_near_exact(bits_float(w[0]), bits_float((eb > ea ? ea : eb) | (w[2] & 0x807fffffu)));
        near += expect_near_exact(bits_float(w[3]), bits_float(w[1]));
    }
    const float divisors[] = {6.28318548f, 0.1f, -3.0f, 1e-30f, 0x1p-149f, 3.4e38f};
    for (size_t k = 0; k < sizeof divisors / sizeof divisors[0]; k++)
        for (uint64_t u = 0; u <= 0xffffffffu; u += 8191, pairs++)
            near += expect_near_exact(bits_float((uint32_t)u), divisors[k]);
    cr_assert_gt(near, pairs / 2, "only %ld of %ld pairs near", near, pairs);
}

/* The near range's edge: |a| < |b| 2^29 with b finite and nonzero. */
Test(mathf, fmodf_far_outside_the_near_range)
{
    const float b = 6.28318548f, edge = b * 0x1p29f;   /* exact: a power of two apart */
    cr_assert(!cs_fmodf_far(nextafterf(edge, 0), b));
    cr_assert(!cs_fmodf_far(-nextafterf(edge, 0), -b));
    cr_assert(cs_fmodf_far(edge, b));
    cr_assert(cs_fmodf_far(-edge, b));
    cr_assert(!cs_fmodf_far(0.0f, 0x1p-149f));
    cr_assert(!cs_fmodf_far(3.4e38f, 3.4e38f));
    const float v[] = {0.0f, -0.0f, 1.0f, -7.0f, 0x1p-149f, 3.4e38f};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        cr_assert(cs_fmodf_far(v[i], 0.0f) && cs_fmodf_far(v[i], -0.0f), "b = 0, a = %a", (double)v[i]);
        cr_assert(cs_fmodf_far(v[i], INFINITY) && cs_fmodf_far(v[i], -INFINITY), "b = inf, a = %a", (double)v[i]);
        cr_assert(cs_fmodf_far(v[i], NAN) && cs_fmodf_far(NAN, v[i]), "NaN and %a", (double)v[i]);
        cr_assert(cs_fmodf_far(INFINITY, v[i]) && cs_fmodf_far(-INFINITY, v[i]), "a = inf, b = %a", (double)v[i]);
        cr_assert_eq(cs_modf_far(v[i], 2.5f), cs_fmodf_far(v[i], 2.5f));
    }
}

/* cs_sinf_near and cs_cosf_near are cs_sinf and cs_cosf bit for bit
 * wherever their _far is 0, and _far is 0 on all of |x| <= 0.75 (so that
 * the C dialect's near copy of a kernel is taken for CartPole's angles):
 * every 61st float of [0, 1.5] and its negative, every float within 2^16
 * of the edge 0.75 and of pi/4 (where the reduction's k turns 1), and
 * zeros and subnormals. Checked once for every float of |x| <= 1.5. */
static long expect_trig_near_exact(uint32_t u)
{
    volatile float x = bits_float(u);
    int far = cs_sinf_far(x);
    cr_assert_eq(cs_cosf_far(x), far, "cs_cosf_far(%a)", (double)x);
    cr_assert_eq(far, !(fabsf(x) <= 0.75f), "cs_sinf_far(%a) = %d", (double)x, far);
    if (far)
        return 0;
    cr_assert_eq(float_bits(cs_sinf_near(x)), float_bits(cs_sinf(x)), "cs_sinf_near(%a) = %a, cs_sinf %a",
                 (double)x, (double)cs_sinf_near(x), (double)cs_sinf(x));
    cr_assert_eq(float_bits(cs_cosf_near(x)), float_bits(cs_cosf(x)), "cs_cosf_near(%a) = %a, cs_cosf %a",
                 (double)x, (double)cs_cosf_near(x), (double)cs_cosf(x));
    return 1;
}

Test(mathf, sinf_cosf_near_equal_the_full_functions_wherever_not_far)
{
    const uint32_t edge = 0x3f400000u, quarter_pi = 0x3f490fdbu, top = 0x3fc00000u; /* 0.75, pi/4, 1.5 */
    long near = 0;
    for (uint32_t u = 0; u <= top; u += 61)
        near += expect_trig_near_exact(u) + expect_trig_near_exact(u | 0x80000000u);
    for (uint32_t c = 0; c < 2; c++)
        for (uint32_t u = (c ? quarter_pi : edge) - 65536; u <= (c ? quarter_pi : edge) + 65536; u++)
            near += expect_trig_near_exact(u) + expect_trig_near_exact(u | 0x80000000u);
    for (uint32_t u = 0; u < 4096; u++)
        near += expect_trig_near_exact(u) + expect_trig_near_exact(u | 0x80000000u);
    cr_assert_gt(near, 2 * (long)(edge / 61), "only %ld near", near);
    const float far[] = {nextafterf(0.75f, 1), -nextafterf(0.75f, 1), 0.7853982f, 3.0f, 1e5f, 1e6f,
                         INFINITY, -INFINITY, NAN};
    for (size_t k = 0; k < sizeof far / sizeof far[0]; k++)
        cr_assert(cs_sinf_far(far[k]) && cs_cosf_far(far[k]), "%a is far", (double)far[k]);
}

/* ---- exp and log (bench/mathf_exhaustive.c checks every float) ---- */

/* got is the double `exact` rounded to float or its neighbour; NaN,
 * infinities and overflow exactly as the rounding gives. */
static void expect_within_one(const char *what, float x, float got, double exact)
{
    float cr = (float)exact;
    if (isnan(exact)) {
        cr_assert(isnan(got), "%s(%a) = %a, want NaN", what, (double)x, (double)got);
        return;
    }
    if (isinf(cr)) {
        cr_assert_eq(float_bits(got), float_bits(cr), "%s(%a) = %a, want %a", what, (double)x, (double)got, (double)cr);
        return;
    }
    cr_assert_leq(ulps(got, cr), 1, "%s(%a) = %a, want %a", what, (double)x, (double)got, (double)cr);
}

Test(mathf, exp_and_log_over_a_stride_of_every_float)
{
    for (uint64_t u = 0; u <= 0xffffffffu; u += 997) {
        float x = bits_float((uint32_t)u);
        expect_within_one("cs_expf", x, cs_expf(x), exp((double)x));
        expect_within_one("cs_logf", x, cs_logf(x), log((double)x));
    }
}

Test(mathf, exp_and_log_special_values)
{
    cr_assert_eq(cs_expf(0.0f), 1.0f);
    cr_assert_eq(cs_expf(-0.0f), 1.0f);
    cr_assert_eq(float_bits(cs_expf(-INFINITY)), 0u);
    cr_assert_eq(cs_expf(INFINITY), INFINITY);
    cr_assert(isnan(cs_expf(NAN)));
    cr_assert_eq(cs_expf(88.8f), INFINITY);
    cr_assert_eq(cs_expf(-104.0f), 0.0f);
    cr_assert_eq(cs_logf(1.0f), 0.0f);
    cr_assert_eq(cs_logf(0.0f), -INFINITY);
    cr_assert_eq(cs_logf(-0.0f), -INFINITY);
    cr_assert_eq(cs_logf(INFINITY), INFINITY);
    cr_assert(isnan(cs_logf(-1.0f)) && isnan(cs_logf(-INFINITY)) && isnan(cs_logf(NAN)) && isnan(cs_logf(-NAN)));
    cr_assert(isnan(cs_logf(-0x1p-149f)));
    expect_within_one("cs_logf", 0x1p-149f, cs_logf(0x1p-149f), log(0x1p-149));
}

/* ---- tan and atan2 (bench/mathf_exhaustive.c: every float, 2^28 pairs) ---- */

Test(mathf, tan_over_a_stride_of_floats_to_1e5)
{
    for (uint32_t u = 0; u <= float_bits(1e5f); u += 499) {
        float x = bits_float(u);
        expect_within_one("cs_tanf", x, cs_tanf(x), tan((double)x));
        expect_within_one("cs_tanf", -x, cs_tanf(-x), tan(-(double)x));
    }
    cr_assert_eq(float_bits(cs_tanf(-0.0f)), 0x80000000u);
    cr_assert(isnan(cs_tanf(INFINITY)) && isnan(cs_tanf(-INFINITY)) && isnan(cs_tanf(NAN)));
}

Test(mathf, atan2_on_random_pairs_and_every_special_case)
{
    unsigned int ctr[4] = {0, 0, 0, 0}, key[2] = {0xa7, 0x2}, w[4];
    for (unsigned i = 0; i < 1u << 19; i++) {
        ctr[0] = i;
        cs_philox4x32_10(ctr, key, w);
        float y = bits_float(w[0]), x = bits_float(w[1]);
        expect_within_one("cs_atan2f", y, cs_atan2f(y, x), atan2((double)y, (double)x));
        y = bits_float(w[2]);
        x = bits_float((w[2] & 0x7f800000u) ^ (w[3] & 0x807fffffu));
        expect_within_one("cs_atan2f", y, cs_atan2f(y, x), atan2((double)y, (double)x));
    }
    /* C's atan2 for signed zeros, infinities and NaN, bit for bit */
    const float v[] = {0.0f, -0.0f, 1.0f, -1.0f, 0x1p-149f, -3e38f, INFINITY, -INFINITY, NAN};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        for (size_t j = 0; j < sizeof v / sizeof v[0]; j++) {
            volatile float y = v[i], x = v[j];
            float want = (float)atan2((double)y, (double)x), got = cs_atan2f(y, x);
            cr_assert(isnan(want) ? isnan(got) : ulps(got, want) <= 1 && signbit(got) == signbit(want),
                      "cs_atan2f(%a, %a) = %a, want %a", (double)y, (double)x, (double)got, (double)want);
        }
}

/* ---- pow ---- */

Test(mathf, pow_on_random_pairs_and_every_special_case)
{
    unsigned int ctr[4] = {0, 0, 0, 0}, key[2] = {0x90, 0x3}, w[4];
    for (unsigned i = 0; i < 1u << 19; i++) {
        ctr[0] = i;
        cs_philox4x32_10(ctr, key, w);
        /* any bits; then bases around 1 and moderate exponents, where most
         * results are finite and nonzero; then integer exponents of negative
         * bases */
        float a = bits_float(w[0]), b = bits_float(w[1]);
        expect_within_one("cs_powf", a, cs_powf(a, b), pow((double)a, (double)b));
        a = ldexpf(1.0f + (float)(w[2] >> 8) * 0x1p-24f, (int)(w[2] & 31) - 16);
        b = ((float)(int)w[3]) * 0x1p-26f;
        expect_within_one("cs_powf", a, cs_powf(a, b), pow((double)a, (double)b));
        b = (float)((int)(w[3] % 41) - 20);
        expect_within_one("cs_powf", -a, cs_powf(-a, b), pow(-(double)a, (double)b));
    }
    const float v[] = {0.0f,  -0.0f, 1.0f,     -1.0f,     2.0f,     -2.0f,    0.5f, -0.5f, 3.0f, -3.0f,
                       2.5f, -2.5f, 0x1p-149f, -0x1p-149f, INFINITY, -INFINITY, NAN,  -NAN};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        for (size_t j = 0; j < sizeof v / sizeof v[0]; j++) {
            volatile float a = v[i], b = v[j];
            float want = (float)pow((double)a, (double)b), got = cs_powf(a, b);
            cr_assert(isnan(want) ? isnan(got) : float_bits(got) == float_bits(want), "cs_powf(%a, %a) = %a, want %a",
                      (double)a, (double)b, (double)got, (double)want);
        }
    /* the exponent 2: the correctly rounded square */
    cr_assert_eq(float_bits(cs_powf(1.1f, 2.0f)), float_bits(1.1f * 1.1f));
}
