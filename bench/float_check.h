/* What the exhaustive float checks (bench/mathf_exhaustive.c,
 * bench/tanhf_exhaustive.c) share: a float's bits and back, and the float
 * spacing that their errors are measured in. */
#ifndef FLOAT_CHECK_H
#define FLOAT_CHECK_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Float spacing in the binade of |t| (subnormal spacing at the bottom). */
static double float_ulp(double t)
{
    int e;
    frexp(t, &e);
    double u = ldexp(1.0, e - 24);
    return u < 0x1p-149 ? 0x1p-149 : u;
}

#endif
