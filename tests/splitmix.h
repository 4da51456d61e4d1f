/* tests/splitmix.h: splitmix64 (every seed, even 0, gives a full-period
 * stream) and uniform doubles from it: the random arguments and programs of
 * tests/test_mathd.c, tests/random_env.h, bench/mathd_accuracy.c,
 * bench/sincos_near.c and bench/sleef_vs_own.c, each from a seed of its own. */
#ifndef CS_TESTS_SPLITMIX_H
#define CS_TESTS_SPLITMIX_H

#include <stdint.h>

static inline uint64_t splitmix_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* uniform in [lo, hi): the top 53 bits as a fraction */
static inline double splitmix_uniform(uint64_t *state, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(splitmix_next(state) >> 11) * 0x1p-53);
}

#endif
