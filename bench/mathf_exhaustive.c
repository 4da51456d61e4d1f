/* Every float through cs_expf, cs_logf and cs_tanf (|x| <= 1e5, its
 * promise), and 2^28 random pairs of floats through cs_atan2f (jit/mathf.h),
 * against glibc's double functions, in ulps of the exact value (the double),
 * and against the double rounded to float. Not part of the suite (about a
 * minute of one core); tests/test_mathf.c keeps a sparse sweep. Built with
 * the cpu backend's flags so that the loops below are the vectorized code a
 * kernel runs:
 *   cc -std=c11 -O3 -march=native -ffp-contract=off -fno-math-errno \
 *      -fno-trapping-math -fno-tree-slp-vectorize -Ijit \
 *      bench/mathf_exhaustive.c -o /tmp/mathf_exhaustive -lm
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "philox.h"
#include "mathf.h"
#include "../tests/float_bits.h"

enum { CHUNK = 1 << 16 };

typedef struct {
    const char *name;
    double worst;
    float worst_at;
    long long off_by_one, off_more, special_wrong;
} record;

static void account(record *r, float x, float got, double exact)
{
    float cr = (float)exact;
    if (isnan(exact) || isinf(exact) || isinf(cr)) {
        /* NaN for NaN; infinities and overflow exactly as rounding gives */
        r->special_wrong += isnan(exact) ? !isnan(got) : float_bits(got) != float_bits(cr);
        return;
    }
    uint32_t d = float_bits(got) - float_bits(cr);
    d = d > 0x80000000u ? 0u - d : d;
    r->off_by_one += d == 1;
    r->off_more += d > 1;
    double e = fabs((double)got - exact) / float_ulp(exact);
    if (e > r->worst) {
        r->worst = e;
        r->worst_at = x;
    }
}

int main(void)
{
    static float x[CHUNK], x2[CHUNK], ye[CHUNK], yl[CHUNK], yt[CHUNK];
    record re = {"expf", 0, 0, 0, 0, 0}, rl = {"logf", 0, 0, 0, 0, 0}, rt = {"tanf", 0, 0, 0, 0, 0},
           ra = {"atan2f", 0, 0, 0, 0, 0};
    long long checked = 0;
    for (uint64_t base = 0; base <= 0xffffffffu; base += CHUNK) {
        for (int i = 0; i < CHUNK; i++)
            x[i] = bits_float((uint32_t)base + (uint32_t)i);
        for (int i = 0; i < CHUNK; i++) {
            ye[i] = cs_expf(x[i]);
            yl[i] = cs_logf(x[i]);
            yt[i] = cs_tanf(x[i]);
        }
        for (int i = 0; i < CHUNK; i++) {
            account(&re, x[i], ye[i], exp((double)x[i]));
            account(&rl, x[i], yl[i], log((double)x[i]));
            if (fabsf(x[i]) <= 1e5f || !(x[i] == x[i]))
                account(&rt, x[i], yt[i], tan((double)x[i]));
            checked++;
        }
    }
    unsigned int ctr[4] = {0, 0, 0, 0}, key[2] = {0xa7a2, 0xf}, w[4];
    for (unsigned c = 0; c < (1u << 28) / CHUNK; c++) {
        for (int i = 0; i < CHUNK; i += 2) {
            ctr[0] = c * CHUNK + (unsigned)i;
            cs_philox4x32_10(ctr, key, w);
            x[i] = bits_float(w[0]);
            x2[i] = bits_float(w[1]);
            /* close exponents too, where the angle is not near 0 or pi/2 */
            x[i + 1] = bits_float(w[2]);
            x2[i + 1] = bits_float((w[2] & 0x7f800000u) ^ (w[3] & 0x807fffffu));
        }
        for (int i = 0; i < CHUNK; i++)
            ye[i] = cs_atan2f(x[i], x2[i]);
        for (int i = 0; i < CHUNK; i++)
            account(&ra, x[i], ye[i], atan2((double)x[i], (double)x2[i]));
    }
    printf("checked %lld floats (every bit pattern)\n", checked);
    const record *r[4] = {&re, &rl, &rt, &ra};
    for (int k = 0; k < 4; k++)
        printf("%s: max error %.6f ulp at x = %.9g (%a); 1 ulp from the rounded double: %lld; more: %lld; "
               "special values wrong: %lld\n",
               r[k]->name, r[k]->worst, r[k]->worst_at, r[k]->worst_at, r[k]->off_by_one, r[k]->off_more,
               r[k]->special_wrong);
    int bad = 0;
    for (int k = 0; k < 4; k++)
        bad |= r[k]->off_more || r[k]->special_wrong;
    return bad;
}
