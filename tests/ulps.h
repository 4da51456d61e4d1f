/* tests/ulps.h: a double's error in ulps of the double nearest to the exact
 * (long double) value, subnormal spacing at the bottom; an infinite or NaN
 * result is 0 ulps when it is the exact value's double, else infinitely
 * many. For tests/test_mathd.c and bench/mathd_accuracy.c, which must
 * measure the same way. */
#ifndef CS_TESTS_ULPS_H
#define CS_TESTS_ULPS_H

#include <math.h>

static inline double ulps_of_double(double got, long double exact)
{
    if (isnan(got) || isinf(got) || isinf((double)exact))
        return (double)got == (double)exact ? 0 : INFINITY;
    int e;
    frexpl(exact, &e);
    long double u = ldexpl(1.0L, e - 53);
    return (double)(fabsl((long double)got - exact) / (u < 0x1p-1074L ? 0x1p-1074L : u));
}

#endif
