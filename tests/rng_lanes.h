/* The check of jit/rng.h's cs_rng_lanes that tests/test_rng.c (the path
 * the build compiles) and tests/test_rng_lanes.c (the AVX-512F path) run:
 * included after rng.h. */
#ifndef CS_TEST_RNG_LANES_H
#define CS_TEST_RNG_LANES_H

#include <stdbool.h>
#include <string.h>

#include "splitmix.h"

typedef void rng_lanes_fn(unsigned long long seed, unsigned int lane, const int *at, int n, unsigned long long block,
                          int per_block, unsigned int stream_sub, unsigned int *out, int stride);

/* Every lane's four words are cs_rng_block's, for contiguous keys (a
 * block's refill), keys by index (restarts) and several blocks per call (a
 * short block's words ahead), keys past 2^32 wrapping, blocks past 2^32. */
static void check_rng_lanes(rng_lanes_fn *lanes)
{
    enum { STRIDE = 264 };   /* a multiple of 8 past the widest call */
    static unsigned int got[4 * STRIDE];
    int at[STRIDE];
    uint64_t state = 5;
    const int per_blocks[] = {256, 8, 4, 3, 1};
    for (int trial = 0; trial < 400; trial++) {
        unsigned long long seed = splitmix_next(&state), block = splitmix_next(&state) >> (trial % 64);
        unsigned int lane = (unsigned int)splitmix_next(&state);
        if (trial % 3 == 0)
            lane = 0xffffffffu - (unsigned int)(trial % 40);   /* keys wrap past 2^32 */
        int n = 1 + (int)(splitmix_next(&state) % 256), per_block = per_blocks[trial % 5];
        bool indexed = trial % 4 == 1;
        for (int j = 0; j < STRIDE; j++)
            at[j] = (int)(splitmix_next(&state) % 256);
        unsigned int stream_sub = trial % 2 ? (1u << 16) | (unsigned int)(trial % 7) : 0u;
        memset(got, 0, sizeof got);
        lanes(seed, lane, indexed ? at : NULL, n, block, indexed ? 256 : per_block, stream_sub, got, STRIDE);
        for (int j = 0; j < n; j++) {
            unsigned int want[4];
            cs_rng_block(seed, lane + (unsigned int)(indexed ? at[j] : j % per_block),
                         block + (unsigned long long)(j / (indexed ? 256 : per_block)), stream_sub, want);
            for (int k = 0; k < 4; k++)
                cr_assert_eq(got[k * STRIDE + j], want[k], "trial %d lane %d of %d word %d", trial, j, n, k);
        }
    }
}

#endif
