/* jit/rng.h's eight-lane path (AVX-512F's vpmuludq: what a kernel built
 * with -march=native runs on such a cpu), compiled here for AVX-512F
 * whatever the build's flags, run only where the cpu has it, and checked
 * against cs_rng_block lane by lane (tests/rng_lanes.h). tests/test_rng.c
 * checks the path the build compiles, the portable loop on most builds. */
#include <criterion/criterion.h>

#pragma GCC push_options
#pragma GCC target("avx512f")
#include "philox.h"
#include "rng.h"

#ifndef CS_PHILOX_X8
#error "rng.h's eight-lane path is not compiled under target avx512f"
#endif

static void lanes_x8(unsigned long long seed, unsigned int lane, const int *at, int n, unsigned long long block,
                     int per_block, unsigned int stream_sub, unsigned int *out, int stride)
{
    cs_rng_lanes(seed, lane, at, n, block, per_block, stream_sub, out, stride);
}
#pragma GCC pop_options

#include "rng_lanes.h"

Test(rng_lanes, eight_lane_path_draws_each_lanes_block)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f"))
        cr_skip_test("this cpu has no AVX-512F: its kernels run the portable loop (tests/test_rng.c)");
    check_rng_lanes(lanes_x8);
}
