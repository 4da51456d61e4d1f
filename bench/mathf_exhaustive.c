/* Every float through cs_expf and cs_logf (jit/mathf.h), against glibc's
 * double exp and log, in ulps of the exact value (the double), and bit for
 * bit against the double rounded to float. Not part of the suite (about a
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

enum { CHUNK = 1 << 16 };

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
    static float x[CHUNK], ye[CHUNK], yl[CHUNK];
    record re = {"expf", 0, 0, 0, 0, 0}, rl = {"logf", 0, 0, 0, 0, 0};
    long long checked = 0;
    for (uint64_t base = 0; base <= 0xffffffffu; base += CHUNK) {
        for (int i = 0; i < CHUNK; i++)
            x[i] = bits_float((uint32_t)base + (uint32_t)i);
        for (int i = 0; i < CHUNK; i++) {
            ye[i] = cs_expf(x[i]);
            yl[i] = cs_logf(x[i]);
        }
        for (int i = 0; i < CHUNK; i++) {
            account(&re, x[i], ye[i], exp((double)x[i]));
            account(&rl, x[i], yl[i], log((double)x[i]));
            checked++;
        }
    }
    printf("checked %lld floats (every bit pattern)\n", checked);
    const record *r[2] = {&re, &rl};
    for (int k = 0; k < 2; k++)
        printf("%s: max error %.6f ulp at x = %.9g (%a); 1 ulp from the rounded double: %lld; more: %lld; "
               "special values wrong: %lld\n",
               r[k]->name, r[k]->worst, r[k]->worst_at, r[k]->worst_at, r[k]->off_by_one, r[k]->off_more,
               r[k]->special_wrong);
    return re.off_more || rl.off_more || re.special_wrong || rl.special_wrong;
}
