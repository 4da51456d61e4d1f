/* A float's or a double's bits and back, and the float spacing errors are
 * measured in: what the math tests (tests/test_mathf.c) and the math
 * benchmarks (bench/mathf_exhaustive.c, tanhf_exhaustive.c,
 * mathd_accuracy.c, sincos_near.c) share. */
#ifndef FLOAT_BITS_H
#define FLOAT_BITS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline double bits_double(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static inline uint64_t double_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* Float spacing in the binade of |t| (subnormal spacing at the bottom). */
static inline double float_ulp(double t)
{
    int e;
    frexp(t, &e);
    double u = ldexp(1.0, e - 24);
    return u < 0x1p-149 ? 0x1p-149 : u;
}

#endif
