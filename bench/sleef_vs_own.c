/* SLEEF's vectorized functions (libsleef-dev, 256-bit AVX2 entry points, the
 * vector width GCC uses for the kernels) against cartsim's own (jit/mathf.h
 * for f32, jit/mathd.h's fast f64) and glibc's scalar calls: throughput in
 * ns per element over arrays of 4096, and the largest error in ulps over
 * the same inputs (f32 against glibc's double function, f64 against long
 * double). Issue 15 part 1 asks to measure both and pick per function;
 * bench/RESULTS.md has the table and the choice. Not part of the suite:
 * `make bench-sleef` builds and runs it with the cpu backend's flags when
 * SLEEF is installed. Median of 7 runs of 400 passes each, timed in the
 * thread's CPU time (a busy machine's other processes do not count; pin it
 * with taskset all the same).
 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <immintrin.h>
#include <math.h>
#include <sleef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CS_INLINE static inline
#include "mathf.h"
#include "mathd.h"
#include "../tests/splitmix.h"

enum { N = 4096, PASSES = 400, RUNS = 7 };

static float xf[N], yf[N], of[N];
static double xd[N], yd[N], od[N];

static uint64_t rng = 0x6a09e667f3bcc909ull;

static double uniform(double lo, double hi) { return splitmix_uniform(&rng, lo, hi); }

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ns per element of body (one pass over the arrays), the median of RUNS */
#define TIME(result, body)                                      \
    do {                                                        \
        double t_[RUNS];                                        \
        for (int r_ = 0; r_ < RUNS; r_++) {                     \
            double t0_ = now_ns();                              \
            for (int p_ = 0; p_ < PASSES; p_++) {               \
                body;                                           \
                __asm__ volatile("" ::: "memory");              \
            }                                                   \
            t_[r_] = (now_ns() - t0_) / ((double)PASSES * N);   \
        }                                                       \
        qsort(t_, RUNS, sizeof t_[0], cmp_double);              \
        result = t_[RUNS / 2];                                  \
    } while (0)

/* error of got in ulps of the float (f32) or double nearest to exact */
static double ulps(double got, long double exact, int f32)
{
    if (isnan(got) || isnan((double)exact))
        return isnan(got) && isnan((double)exact) ? 0 : INFINITY;
    if (isinf(got) || isinf((double)exact))
        return got == (double)exact ? 0 : INFINITY;
    int e;
    frexpl(exact, &e);
    long double u = ldexpl(1.0L, e - (f32 ? 24 : 53)), lo = f32 ? 0x1p-149L : 0x1p-1074L;
    return (double)(fabsl((long double)got - exact) / (u < lo ? lo : u));
}

static double max_ulps_f(long double (*ref)(float, float))
{
    double m = 0;
    for (int i = 0; i < N; i++) {
        double e = ulps(of[i], ref(xf[i], yf[i]), 1);
        m = e > m ? e : m;
    }
    return m;
}

static double max_ulps_d(long double (*ref)(double, double))
{
    double m = 0;
    for (int i = 0; i < N; i++) {
        double e = ulps(od[i], ref(xd[i], yd[i]), 0);
        m = e > m ? e : m;
    }
    return m;
}

/* references: f32 against glibc's double function, f64 against long double */
static long double rf_sin(float x, float y) { (void)y; return sin(x); }
static long double rf_cos(float x, float y) { (void)y; return cos(x); }
static long double rf_exp(float x, float y) { (void)y; return exp(x); }
static long double rf_log(float x, float y) { (void)y; return log(x); }
static long double rf_tanh(float x, float y) { (void)y; return tanh(x); }
static long double rf_atan2(float x, float y) { return atan2(x, y); }
static long double rf_pow(float x, float y) { return pow(x, y); }
static long double rf_fmod(float x, float y) { return fmod(x, y); }
static long double rd_fmod(double x, double y) { return fmodl(x, y); }
static long double rd_sin(double x, double y) { (void)y; return sinl(x); }
static long double rd_cos(double x, double y) { (void)y; return cosl(x); }
static long double rd_exp(double x, double y) { (void)y; return expl(x); }
static long double rd_log(double x, double y) { (void)y; return logl(x); }
static long double rd_tanh(double x, double y) { (void)y; return tanhl(x); }
static long double rd_atan2(double x, double y) { return atan2l(x, y); }
static long double rd_pow(double x, double y) { return powl(x, y); }

static void row(const char *fn, const char *impl, double ns, double err)
{
    printf("| %-6s | %-28s | %6.2f | %8.3g |\n", fn, impl, ns, err);
}

/* The loops: own and glibc element by element (GCC vectorizes the own
 * ones), SLEEF 8 floats or 4 doubles at a time. */
#define OWN_F1(f) for (int i = 0; i < N; i++) of[i] = f(xf[i])
#define OWN_F2(f) for (int i = 0; i < N; i++) of[i] = f(xf[i], yf[i])
#define OWN_D1(f) for (int i = 0; i < N; i++) od[i] = f(xd[i])
#define OWN_D2(f) for (int i = 0; i < N; i++) od[i] = f(xd[i], yd[i])
#define SLEEF_F1(f) for (int i = 0; i < N; i += 8) _mm256_storeu_ps(of + i, f(_mm256_loadu_ps(xf + i)))
#define SLEEF_F2(f) \
    for (int i = 0; i < N; i += 8) _mm256_storeu_ps(of + i, f(_mm256_loadu_ps(xf + i), _mm256_loadu_ps(yf + i)))
#define SLEEF_D1(f) for (int i = 0; i < N; i += 4) _mm256_storeu_pd(od + i, f(_mm256_loadu_pd(xd + i)))
#define SLEEF_D2(f) \
    for (int i = 0; i < N; i += 4) _mm256_storeu_pd(od + i, f(_mm256_loadu_pd(xd + i), _mm256_loadu_pd(yd + i)))

/* tanh's own functions are SIMD clones (jit/mathf.h): GCC vectorizes a
 * loop calling them in a function of its own, as in a kernel, but not
 * inside the timing loop */
static __attribute__((noinline)) void own_tanhf(void) { OWN_F1(cs_tanhf); }
static __attribute__((noinline)) void own_tanhd(void) { OWN_D1(cs_fast_tanh); }

/* one function: fill the inputs, then time and measure each implementation */
#define MEASURE_F(name, loop, ref)  \
    do {                            \
        double ns_;                 \
        TIME(ns_, loop);            \
        row(fn, name, ns_, max_ulps_f(ref)); \
    } while (0)
#define MEASURE_D(name, loop, ref)  \
    do {                            \
        double ns_;                 \
        TIME(ns_, loop);            \
        row(fn, name, ns_, max_ulps_d(ref)); \
    } while (0)

static void fill(double lo, double hi, double lo2, double hi2)
{
    for (int i = 0; i < N; i++) {
        xd[i] = uniform(lo, hi);
        yd[i] = uniform(lo2, hi2);
        xf[i] = (float)xd[i];
        yf[i] = (float)yd[i];
    }
}

/* glibc's scalar functions under names GCC does not turn into builtins */
float g_sinf(float) __asm__("sinf");
float g_cosf(float) __asm__("cosf");
float g_expf(float) __asm__("expf");
float g_logf(float) __asm__("logf");
float g_tanhf(float) __asm__("tanhf");
float g_atan2f(float, float) __asm__("atan2f");
float g_powf(float, float) __asm__("powf");
float g_fmodf(float, float) __asm__("fmodf");

int main(void)
{
    const char *fn;
    printf("| fn     | implementation               | ns/elt | max ulp  |\n|---|---|---|---|\n");

    fn = "sin"; fill(-10, 10, 0, 1);
    MEASURE_F("f32 cartsim cs_sinf", OWN_F1(cs_sinf), rf_sin);
    MEASURE_F("f32 SLEEF u10", SLEEF_F1(Sleef_sinf8_u10avx2), rf_sin);
    MEASURE_F("f32 SLEEF u35", SLEEF_F1(Sleef_sinf8_u35avx2), rf_sin);
    MEASURE_F("f32 glibc sinf (scalar)", OWN_F1(g_sinf), rf_sin);
    MEASURE_D("f64 cartsim cs_fast_sin", OWN_D1(cs_fast_sin), rd_sin);
    MEASURE_D("f64 SLEEF u10", SLEEF_D1(Sleef_sind4_u10avx2), rd_sin);
    MEASURE_D("f64 SLEEF u35", SLEEF_D1(Sleef_sind4_u35avx2), rd_sin);
    MEASURE_D("f64 glibc sin (scalar)", OWN_D1(cs_sin), rd_sin);

    fn = "cos";
    MEASURE_F("f32 cartsim cs_cosf", OWN_F1(cs_cosf), rf_cos);
    MEASURE_F("f32 SLEEF u10", SLEEF_F1(Sleef_cosf8_u10avx2), rf_cos);
    MEASURE_F("f32 SLEEF u35", SLEEF_F1(Sleef_cosf8_u35avx2), rf_cos);
    MEASURE_F("f32 glibc cosf (scalar)", OWN_F1(g_cosf), rf_cos);
    MEASURE_D("f64 cartsim cs_fast_cos", OWN_D1(cs_fast_cos), rd_cos);
    MEASURE_D("f64 SLEEF u10", SLEEF_D1(Sleef_cosd4_u10avx2), rd_cos);
    MEASURE_D("f64 SLEEF u35", SLEEF_D1(Sleef_cosd4_u35avx2), rd_cos);
    MEASURE_D("f64 glibc cos (scalar)", OWN_D1(cs_cos), rd_cos);

    fn = "exp"; fill(-20, 20, 0, 1);
    MEASURE_F("f32 cartsim cs_expf", OWN_F1(cs_expf), rf_exp);
    MEASURE_F("f32 SLEEF u10", SLEEF_F1(Sleef_expf8_u10avx2), rf_exp);
    MEASURE_F("f32 glibc expf (scalar)", OWN_F1(g_expf), rf_exp);
    MEASURE_D("f64 cartsim cs_fast_exp", OWN_D1(cs_fast_exp), rd_exp);
    MEASURE_D("f64 SLEEF u10", SLEEF_D1(Sleef_expd4_u10avx2), rd_exp);
    MEASURE_D("f64 glibc exp (scalar)", OWN_D1(cs_exp), rd_exp);

    fn = "log"; fill(1e-3, 1e3, 0, 1);
    MEASURE_F("f32 cartsim cs_logf", OWN_F1(cs_logf), rf_log);
    MEASURE_F("f32 SLEEF u10", SLEEF_F1(Sleef_logf8_u10avx2), rf_log);
    MEASURE_F("f32 SLEEF u35", SLEEF_F1(Sleef_logf8_u35avx2), rf_log);
    MEASURE_F("f32 glibc logf (scalar)", OWN_F1(g_logf), rf_log);
    MEASURE_D("f64 cartsim cs_fast_log", OWN_D1(cs_fast_log), rd_log);
    MEASURE_D("f64 SLEEF u10", SLEEF_D1(Sleef_logd4_u10avx2), rd_log);
    MEASURE_D("f64 SLEEF u35", SLEEF_D1(Sleef_logd4_u35avx2), rd_log);
    MEASURE_D("f64 glibc log (scalar)", OWN_D1(cs_log), rd_log);

    fn = "tanh"; fill(-5, 5, 0, 1);
    MEASURE_F("f32 cartsim cs_tanhf", own_tanhf(), rf_tanh);
    MEASURE_F("f32 SLEEF u10", SLEEF_F1(Sleef_tanhf8_u10avx2), rf_tanh);
    MEASURE_F("f32 SLEEF u35", SLEEF_F1(Sleef_tanhf8_u35avx2), rf_tanh);
    MEASURE_F("f32 glibc tanhf (scalar)", OWN_F1(g_tanhf), rf_tanh);
    MEASURE_D("f64 cartsim cs_fast_tanh", own_tanhd(), rd_tanh);
    MEASURE_D("f64 SLEEF u10", SLEEF_D1(Sleef_tanhd4_u10avx2), rd_tanh);
    MEASURE_D("f64 SLEEF u35", SLEEF_D1(Sleef_tanhd4_u35avx2), rd_tanh);
    MEASURE_D("f64 glibc tanh (scalar)", OWN_D1(cs_tanh), rd_tanh);

    fn = "atan2"; fill(-10, 10, -10, 10);
    MEASURE_F("f32 cartsim cs_atan2f", OWN_F2(cs_atan2f), rf_atan2);
    MEASURE_F("f32 SLEEF u10", SLEEF_F2(Sleef_atan2f8_u10avx2), rf_atan2);
    MEASURE_F("f32 SLEEF u35", SLEEF_F2(Sleef_atan2f8_u35avx2), rf_atan2);
    MEASURE_F("f32 glibc atan2f (scalar)", OWN_F2(g_atan2f), rf_atan2);
    MEASURE_D("f64 cartsim cs_fast_atan2", OWN_D2(cs_fast_atan2), rd_atan2);
    MEASURE_D("f64 SLEEF u10", SLEEF_D2(Sleef_atan2d4_u10avx2), rd_atan2);
    MEASURE_D("f64 SLEEF u35", SLEEF_D2(Sleef_atan2d4_u35avx2), rd_atan2);
    MEASURE_D("f64 glibc atan2 (scalar)", OWN_D2(cs_atan2), rd_atan2);

    /* a non-constant exponent (pow(x, 2) is x * x in cartsim's) */
    fn = "pow"; fill(0.01, 10, -4, 4);
    MEASURE_F("f32 cartsim cs_powf", OWN_F2(cs_powf), rf_pow);
    MEASURE_F("f32 SLEEF u10", SLEEF_F2(Sleef_powf8_u10avx2), rf_pow);
    MEASURE_F("f32 glibc powf (scalar)", OWN_F2(g_powf), rf_pow);
    MEASURE_D("f64 cartsim cs_fast_pow", OWN_D2(cs_fast_pow), rd_pow);
    MEASURE_D("f64 SLEEF u10", SLEEF_D2(Sleef_powd4_u10avx2), rd_pow);
    MEASURE_D("f64 glibc pow (scalar)", OWN_D2(cs_pow), rd_pow);

    fn = "fmod"; fill(-1000, 1000, 0.1, 7);
    MEASURE_F("f32 cartsim cs_fmodf", OWN_F2(cs_fmodf), rf_fmod);
    MEASURE_F("f32 SLEEF", SLEEF_F2(Sleef_fmodf8), rf_fmod);
    MEASURE_F("f32 glibc fmodf (scalar)", OWN_F2(g_fmodf), rf_fmod);
    MEASURE_D("f64 cartsim cs_fast_fmod", OWN_D2(cs_fast_fmod), rd_fmod);
    MEASURE_D("f64 SLEEF", SLEEF_D2(Sleef_fmodd4), rd_fmod);
    MEASURE_D("f64 glibc fmod (scalar)", OWN_D2(cs_fmod), rd_fmod);

    double sum = 0;
    for (int i = 0; i < N; i++)
        sum += of[i] + od[i];
    fprintf(stderr, "(checksum %g)\n", sum);
    return 0;
}
