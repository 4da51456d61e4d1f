/* Every non-negative float through cs_tanhf (jit/mathf.h), against glibc's
 * double tanh rounded to float; negatives by symmetry, checked bit for bit.
 * Not part of the suite (a minute of one core); tests/test_mathf.c keeps a
 * sparse sweep. Built with the cpu backend's flags so that the loop below is
 * the vectorized code a kernel runs:
 *   cc -std=c11 -O3 -march=native -ffp-contract=off -fno-math-errno \
 *      -fno-trapping-math -fno-tree-slp-vectorize -Ijit \
 *      bench/tanhf_exhaustive.c -o /tmp/tanhf_exhaustive -lm
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "philox.h"
#include "mathf.h"
#include "../tests/float_bits.h"

enum { CHUNK = 1 << 16 };

int main(void)
{
    static float x[CHUNK], y[CHUNK], yn[CHUNK];
    double worst = 0;
    float worst_at = 0;
    long long off_by_one = 0, off_more = 0, asymmetric = 0, checked = 0;
    const uint32_t last = 0x7f800000u; /* +inf */
    for (uint64_t base = 0; base <= last; base += CHUNK) {
        int n = (int)(last + 1 - base < CHUNK ? last + 1 - base : CHUNK);
        for (int i = 0; i < n; i++)
            x[i] = bits_float((uint32_t)base + (uint32_t)i);
        for (int i = 0; i < n; i++) {
            y[i] = cs_tanhf(x[i]);
            yn[i] = cs_tanhf(-x[i]);
        }
        for (int i = 0; i < n; i++) {
            double t = tanh((double)x[i]);
            float cr = (float)t;
            uint32_t d = float_bits(y[i]) - float_bits(cr);
            d = d > 0x80000000u ? 0u - d : d;
            off_by_one += d == 1;
            off_more += d > 1;
            double e = fabs((double)y[i] - t) / float_ulp(t);
            if (e > worst) {
                worst = e;
                worst_at = x[i];
            }
            asymmetric += float_bits(yn[i]) != (float_bits(y[i]) ^ 0x80000000u);
            checked++;
        }
    }
    float nan_in = bits_float(0x7fc00000u);
    printf("checked %lld non-negative floats (0 to +inf) and their negatives\n", checked);
    printf("max error %.6f ulp (against double tanh) at x = %.9g (%a)\n", worst, worst_at, worst_at);
    printf("1 ulp from the rounded double: %lld; more than 1 ulp: %lld; odd symmetry broken: %lld\n", off_by_one,
           off_more, asymmetric);
    printf("tanh(+-0) = %a %a, tanh(+-inf) = %a %a, tanh(NaN) = %f, tanh(-NaN) = %f\n", cs_tanhf(0.0f),
           cs_tanhf(-0.0f), cs_tanhf(INFINITY), cs_tanhf(-INFINITY), cs_tanhf(nan_in), cs_tanhf(-nan_in));
    float below_one = 0;
    for (uint32_t b = float_bits(1.0f); b < float_bits(20.0f); b++)
        if (cs_tanhf(bits_float(b)) < 1.0f)
            below_one = bits_float(b);
    printf("largest x with tanh(x) < 1: %.9g (double tanh rounds to %a there, %a at the next float)\n", below_one,
           (float)tanh((double)below_one), (float)tanh((double)nextafterf(below_one, 100.0f)));
    return off_more || asymmetric;
}
