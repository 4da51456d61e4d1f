/* The f64 near sin and cos (jit/mathf.h, cs_sin_near, cs_cos_near) checked
 * at scale, once (tests/test_mathd.c keeps a small sample): over N random x
 * (default 1e8) in the near domain and a little past it, every lane they
 * claim must be glibc's sin/cos bit for bit (mismatches must be 0), and the
 * far fraction is printed (the lanes the C dialect redoes with glibc); over
 * a smaller sample, the error of hi + lo against __float128 (libquadmath),
 * the measured maxima of the bounds E the header states. `make
 * bench-sincos-near` builds it with the cpu backend's flags, so that the
 * near loop is vectorized as in a kernel. Usage: sincos_near [N]
 */
#include <math.h>
#include <quadmath.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CS_INLINE static inline
#include "mathf.h"
#include "../tests/splitmix.h"
#include "../tests/float_bits.h"

#define CHUNK 4096

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_u64(void) { return splitmix_next(&rng); }

static double uniform(double lo, double hi) { return splitmix_uniform(&rng, lo, hi); }

/* half the sample uniform in [-0.3, 0.3], half of random sign with a
 * log-uniform magnitude in [2^-40, 0.25] (small angles get their share) */
static double sample(uint64_t k)
{
    if (k % 2 == 0)
        return uniform(-0.3, 0.3);
    double x = exp2(uniform(-40, -2));
    return (next_u64() & 1) ? -x : x;
}


int main(int argc, char **argv)
{
    long long n = argc > 1 ? atoll(argv[1]) : 100000000ll;
    static double x[CHUNK], s[CHUNK], c[CHUNK];
    static long long fs[CHUNK], fc[CHUNK];
    long long mismatch = 0, far_sin = 0, far_cos = 0, in_domain = 0, far_sin_dom = 0, far_cos_dom = 0;
    for (long long done = 0; done < n; done += CHUNK) {
        for (int i = 0; i < CHUNK; i++)
            x[i] = sample((uint64_t)(done + i));
        for (int i = 0; i < CHUNK; i++) {   /* the vectorized near loop */
            fs[i] = fc[i] = 0;
            s[i] = cs_sin_near(x[i], &fs[i]);
            c[i] = cs_cos_near(x[i], &fc[i]);
        }
        for (int i = 0; i < CHUNK; i++) {
            if (!fs[i] && double_bits(s[i]) != double_bits(cs_libm_sin(x[i])))
                mismatch++, printf("sin(%a): near %a, glibc %a\n", x[i], s[i], cs_libm_sin(x[i]));
            if (!fc[i] && double_bits(c[i]) != double_bits(cs_libm_cos(x[i])))
                mismatch++, printf("cos(%a): near %a, glibc %a\n", x[i], c[i], cs_libm_cos(x[i]));
            far_sin += fs[i] != 0;
            far_cos += fc[i] != 0;
            if (fabs(x[i]) <= 0.25) {
                in_domain++;
                far_sin_dom += fs[i] != 0;
                far_cos_dom += fc[i] != 0;
            }
        }
    }
    long long total = (n + CHUNK - 1) / CHUNK * CHUNK;
    printf("%lld samples (%lld with |x| <= 0.25): %lld mismatches with glibc\n", total, in_domain, mismatch);
    printf("far fraction, |x| <= 0.25: sin %.4f, cos %.4f; all samples: sin %.4f, cos %.4f\n",
           (double)far_sin_dom / (double)in_domain, (double)far_cos_dom / (double)in_domain,
           (double)far_sin / (double)total, (double)far_cos / (double)total);
    /* |x| <= 0.2 uniform, as CartPole's angle before it terminates */
    long long cp = 0, cp_far = 0;
    for (int k = 0; k < 1000000; k++) {
        double a = uniform(-0.2, 0.2);
        long long f = 0;
        (void)cs_sin_near(a, &f);
        (void)cs_cos_near(a, &f);
        cp++;
        cp_far += f != 0;
    }
    printf("far fraction of a sin/cos pair, x uniform in [-0.2, 0.2]: %.4f\n", (double)cp_far / (double)cp);

    /* the bounds: sin's error in units of u |x|^3, cos's in ulps of hi */
    long long m = n / 10 < 20000000 ? n / 10 : 20000000;
    double worst_sin = 0, worst_cos = 0, at_sin = 0, at_cos = 0;
    for (long long k = 0; k < m; k++) {
        double a = sample((uint64_t)k);
        if (!(fabs(a) <= 0.25) || fabs(a) < 0x1p-27)
            continue;
        double lo, hi = cs_mathd_sin_sum(a, &lo);
        __float128 err = fabsq((__float128)hi + (__float128)lo - sinq((__float128)a));
        double r = (double)(err / ((__float128)0x1p-53 * fabsq((__float128)a * a * a)));
        if (r > worst_sin)
            worst_sin = r, at_sin = a;
        hi = cs_mathd_cos_sum(a, &lo);
        err = fabsq((__float128)hi + (__float128)lo - cosq((__float128)a));
        r = (double)(err / (__float128)0x1p-53);
        if (r > worst_cos)
            worst_cos = r, at_cos = a;
    }
    printf("%lld samples against __float128: sin error <= %.4f u|x|^3 (at %a; bound 2), "
           "cos error <= %.5f ulp (at %a; bound 0.005)\n", m, worst_sin, at_sin, worst_cos, at_cos);
    return mismatch != 0;
}
