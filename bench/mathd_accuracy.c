/* The error of the fast f64 functions (jit/mathd.h) against long double
 * (x87, 64-bit significand: 11 bits more than the result), in ulps of the
 * result, over many sampled inputs; and their special cases (zeros,
 * infinities, NaN, extremes) against glibc's double functions, bit for bit
 * (NaNs as one). Not part of the suite (tests/test_mathf.c keeps a small
 * sample); `make bench-mathd` builds and runs it with the cpu backend's
 * flags, so that the loops below are the vectorized code a kernel runs.
 * The bounds it prints are the ones jit/mathd.h and docs/math.md state.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CS_INLINE static inline
#include "mathf.h"
#include "mathd.h"
#include "../tests/splitmix.h"
#include "../tests/ulps.h"
#include "../tests/float_bits.h"

enum { N = 1 << 22, CHUNK = 4096 };

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* splitmix64 */
static uint64_t next_u64(void) { return splitmix_next(&rng_state); }

static double uniform(double lo, double hi) { return splitmix_uniform(&rng_state, lo, hi); }

/* |x| log-uniform in [2^lo, 2^hi], a random sign */
static double log_uniform(double lo, double hi, int signed_)
{
    double x = exp2(uniform(lo, hi));
    return signed_ && (next_u64() & 1) ? -x : x;
}



typedef struct {
    const char *name, *domain;
    double worst, worst_a, worst_b;
    long long n;
} record;

static void account(record *r, double a, double b, double got, long double exact)
{
    double e = ulps_of_double(got, exact);
    r->n++;
    if (e > r->worst || isnan(e)) {
        r->worst = e;
        r->worst_a = a;
        r->worst_b = b;
    }
}

static void print(const record *r)
{
    printf("%-6s %-44s %10lld samples  max %.3f ulp  at (%a, %a)\n", r->name, r->domain, r->n, r->worst,
           r->worst_a, r->worst_b);
}

/* unary functions: the chunk is computed in one vectorizable loop */
typedef double (*fn1)(double);
typedef long double (*ref1)(long double);

static void run1(const char *name, const char *domain, fn1 f, ref1 ref, double (*draw)(void), long long n)
{
    static double in[CHUNK], out[CHUNK];
    record r = {name, domain, 0, 0, 0, 0};
    for (long long done = 0; done < n; done += CHUNK) {
        for (int i = 0; i < CHUNK; i++)
            in[i] = draw();
        for (int i = 0; i < CHUNK; i++)
            out[i] = f(in[i]);
        for (int i = 0; i < CHUNK; i++)
            account(&r, in[i], 0, out[i], ref(in[i]));
    }
    print(&r);
}

static double draw_trig(void) { return uniform(-1e6, 1e6); }
static double draw_trig_small(void) { return log_uniform(-40, 20, 1) * (1e6 / 1048576.0); }
static double draw_exp(void) { return uniform(-746, 710); }
static double draw_exp_small(void) { return log_uniform(-60, 3, 1); }
static double draw_log(void) { return bits_double(next_u64() >> 1 & 0x7fefffffffffffffull); }
static double draw_log_near1(void) { return 1.0 + uniform(-0.3, 0.42); }
static double draw_tanh(void) { return log_uniform(-40, 4.6, 1); }

static long double ref_sin(long double x) { return sinl(x); }
static long double ref_cos(long double x) { return cosl(x); }
static long double ref_tan(long double x) { return tanl(x); }
static long double ref_exp(long double x) { return expl(x); }
static long double ref_log(long double x) { return logl(x); }
static long double ref_tanh(long double x) { return tanhl(x); }

/* The doubles nearest to k pi/2 for every k of the reduction's range, and
 * their neighbours: where x - k pi/2 cancels most. */
static void trig_hard_cases(void)
{
    record rs = {"sin", "doubles nearest k pi/2, |k| < 636620 (+-1 ulp)", 0, 0, 0, 0};
    record rc = rs, rt = rs;
    rc.name = "cos";
    rt.name = "tan";
    const long double pio2 = 1.5707963267948966192313216916397514L;
    for (long k = 1; k < 636620; k++)
        for (int d = -1; d <= 1; d++) {
            double x = (double)((long double)k * pio2);
            x = d < 0 ? nextafter(x, 0) : d > 0 ? nextafter(x, INFINITY) : x;
            account(&rs, x, 0, cs_fast_sin(x), sinl(x));
            account(&rc, x, 0, cs_fast_cos(x), cosl(x));
            account(&rt, x, 0, cs_fast_tan(x), tanl(x));
        }
    print(&rs);
    print(&rc);
    print(&rt);
}

static void atan2_sample(long long n)
{
    record r = {"atan2", "|y|, |x| log-uniform in [2^-60, 2^60], signs", 0, 0, 0, 0};
    record near = {"atan2", "|y| / |x| in [0.3, 3.3] (the reductions)", 0, 0, 0, 0};
    for (long long i = 0; i < n; i++) {
        double y = log_uniform(-60, 60, 1), x = log_uniform(-60, 60, 1);
        account(&r, y, x, cs_fast_atan2(y, x), atan2l(y, x));
        double x2 = log_uniform(-20, 20, 1), y2 = x2 * uniform(0.3, 3.3) * ((next_u64() & 1) ? -1 : 1);
        account(&near, y2, x2, cs_fast_atan2(y2, x2), atan2l(y2, x2));
    }
    print(&r);
    print(&near);
}

static void pow_sample(long long n)
{
    record r1 = {"pow", "|b ln a| <= 1", 0, 0, 0, 0}, r30 = {"pow", "|b ln a| <= 30", 0, 0, 0, 0},
           rall = {"pow", "any finite normal result (|b ln a| < 709)", 0, 0, 0, 0};
    for (long long i = 0; i < n; i++) {
        double a = log_uniform(-12, 12, 0), b = uniform(-60, 60);
        if (i % 3 == 1)
            b = uniform(-4, 4);
        if (i % 3 == 2)
            a = -a, b = (double)(long long)uniform(-40, 40);   /* negative base, integer exponent */
        long double t = (long double)b * logl(fabsl((long double)a));
        if (fabsl(t) >= 708)
            continue;
        double got = cs_fast_pow(a, b);
        long double exact = powl(a, b);
        account(&rall, a, b, got, exact);
        if (fabsl(t) <= 30)
            account(&r30, a, b, got, exact);
        if (fabsl(t) <= 1)
            account(&r1, a, b, got, exact);
    }
    print(&r1);
    print(&r30);
    print(&rall);
}

static void fmod_sample(long long n)
{
    long long wrong = 0, wrong_mod = 0;
    double wa = 0, wb = 0;
    for (long long i = 0; i < n; i++) {
        double b = log_uniform(-300, 300, 1), a = b * log_uniform(-10, (double)(i % 208), 1);
        if (!isfinite(a) || !(fabs(a) < fabs(b) * 0x1p208))
            continue;
        if (double_bits(cs_fast_fmod(a, b)) != double_bits(fmod(a, b)))
            wrong++, wa = a, wb = b;
        if (double_bits(cs_fast_mod(a, b)) != double_bits(cs_mod(a, b)))
            wrong_mod++;
    }
    printf("fmod   |a / b| < 2^208, |b| in [2^-300, 2^300]      %10lld samples  %lld not C's fmod (last %a, %a); mod: %lld\n",
           n, wrong, wa, wb, wrong_mod);
}

/* Special cases against glibc's double functions, bit for bit (NaNs as one). */
static int same(double a, double b) { return (isnan(a) && isnan(b)) || double_bits(a) == double_bits(b); }

static void specials(void)
{
    const double v[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0,
                        DBL_MAX, -DBL_MAX, DBL_MIN, -DBL_MIN, 0x1p-1074, -0x1p-1074, 710.0, -746.0, 1e300, 1e-300};
    const int nv = (int)(sizeof v / sizeof v[0]);
    int wrong = 0;
    for (int i = 0; i < nv; i++) {
        double x = v[i];
        struct { const char *name; double got, want; int exact_needed; } u[] = {
            {"exp", cs_fast_exp(x), exp(x), 1}, {"log", cs_fast_log(x), log(x), 1},
            {"tanh", cs_fast_tanh(x), tanh(x), 1}, {"sin", cs_fast_sin(x), sin(x), 1},
            {"cos", cs_fast_cos(x), cos(x), 1}, {"tan", cs_fast_tan(x), tan(x), 1}};
        for (unsigned k = 0; k < sizeof u / sizeof u[0]; k++) {
            /* finite results need only be close (the samples bound them); the
             * specials (NaN, inf, zeros) must be C's */
            int special = isnan(u[k].want) || isinf(u[k].want) || u[k].want == 0;
            if (special && !same(u[k].got, u[k].want) && fabs(x) <= 1e6) {
                printf("  special: %s(%a) = %a, C says %a\n", u[k].name, x, u[k].got, u[k].want);
                wrong++;
            }
        }
        for (int j = 0; j < nv; j++) {
            double y = v[j];
            struct { const char *name; double got, want; } b[] = {
                {"atan2", cs_fast_atan2(x, y), atan2(x, y)}, {"pow", cs_fast_pow(x, y), pow(x, y)},
                {"fmod", cs_fast_fmod(x, y), fmod(x, y)}};
            for (unsigned k = 0; k < sizeof b / sizeof b[0]; k++) {
                int special = isnan(b[k].want) || isinf(b[k].want) || b[k].want == 0 || k == 2;
                int within = ulps_of_double(b[k].got, b[k].want) <= 4;
                if (k == 2 && fabs(x) >= fabs(y) * 0x1p208 && isfinite(x) && y != 0)
                    continue;   /* past fmod's promise: NaN */
                if ((special && !same(b[k].got, b[k].want)) || (!special && !within)) {
                    printf("  special: %s(%a, %a) = %a, C says %a\n", b[k].name, x, y, b[k].got, b[k].want);
                    wrong++;
                }
            }
        }
    }
    printf("special cases: %d differ from C's\n", wrong);
}

int main(void)
{
    run1("sin", "x uniform in [-1e6, 1e6]", cs_fast_sin, ref_sin, draw_trig, N);
    run1("sin", "|x| log-uniform in [2^-40, 1e6]", cs_fast_sin, ref_sin, draw_trig_small, N);
    run1("cos", "x uniform in [-1e6, 1e6]", cs_fast_cos, ref_cos, draw_trig, N);
    run1("cos", "|x| log-uniform in [2^-40, 1e6]", cs_fast_cos, ref_cos, draw_trig_small, N);
    run1("tan", "x uniform in [-1e6, 1e6]", cs_fast_tan, ref_tan, draw_trig, N);
    run1("tan", "|x| log-uniform in [2^-40, 1e6]", cs_fast_tan, ref_tan, draw_trig_small, N);
    trig_hard_cases();
    run1("exp", "x uniform in [-746, 710]", cs_fast_exp, ref_exp, draw_exp, N);
    run1("exp", "|x| log-uniform in [2^-60, 8]", cs_fast_exp, ref_exp, draw_exp_small, N);
    run1("log", "x > 0 uniform over the bit patterns", cs_fast_log, ref_log, draw_log, N);
    run1("log", "x uniform in [0.7, 1.42]", cs_fast_log, ref_log, draw_log_near1, N);
    run1("tanh", "|x| log-uniform in [2^-40, 24]", cs_fast_tanh, ref_tanh, draw_tanh, N);
    atan2_sample(N);
    pow_sample(N);
    fmod_sample(N);
    specials();
    return 0;
}
