/* The hand-written FrozenLake-v1 loop (envs/frozen_lake.env, Gymnasium's 4x4
 * map, slippery) that the cpu backend's generated code is measured against,
 * written the fast way, with cartsim's own checksum.
 *
 *   gcc -O3 -march=native -ffp-contract=off -fno-math-errno -fno-trapping-math -Ijit bench/ref_frozen_lake.c -lm -o ref_frozen_lake
 *   ./ref_frozen_lake --envs 2048 --steps 10000 [--seed S] [--repeat R]
 *   (-DEIGHT -o ref_frozen_lake_8x8: FrozenLake8x8-v1's map and 200 steps)
 *
 * Work per step and environment, as `cartsim run --env FrozenLake-v1` (f32,
 * the random policy) does it: two step-stream draws, the environment's
 * categorical (draw 0: which entry of P[s][a], the running sums of
 * fail_rate, success_rate, fail_rate folded in float as the f32 compiler
 * folds them) and the policy's action (draw 1: min(floor(u * 4), 3), the top
 * two bits of the word), the slip, the clamped move, the map's table, the
 * reward into a double running return, truncation at 100 steps, and on
 * either flag the auto-reset (same step) at tau = t + 1: s = 0, lastaction
 * = -1 (its one restart draw, categorical(1.0), always gives the start, so
 * it is not made).
 *
 * The checksum is cartsim's (sim/env.c's checksum): FNV-1a over the int32
 * bytes of s, then of lastaction, then the episode step counters (int32),
 * then the running returns (doubles): `cartsim run --env FrozenLake-v1
 * --threads 1 --envs N --steps T --seed S` prints the same. The arguments,
 * clock, rollout and JSON line are bench/ref_harness.h's and
 * bench/ref_rollout.h's, with int states and two draws a step (one Philox
 * block serves two steps). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>

#include "philox.h"
#include "rng.h"
#include "ref_harness.h"

/* 0 frozen, 1 a hole, 2 the goal, row-major; -DEIGHT: FrozenLake8x8-v1's map and 200 steps
 * (envs/frozen_lake_8x8.env), the same step on the larger map. */
#ifdef EIGHT
#define MAX_STEPS 200
#define NCOL 8
#define REF_NAME "frozen_lake_8x8"
static const int desc[64] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
                             0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0,
                             0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 2};
#else
#define MAX_STEPS 100
#define NCOL 4
#define REF_NAME "frozen_lake"
static const int desc[16] = {0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 1, 0, 0, 2};
#endif

/* ref_batch's int_var: s, lastaction. The restart draw is not made (above). */
static void restart_lane(const ref_batch *b, long long lane, unsigned long long seed, unsigned long long tau)
{
    (void)seed;
    (void)tau;
    b->int_var[0][lane] = 0;
    b->int_var[1][lane] = -1;
}

/* Steps lanes [0, n) of a block with the words of their step: w0 the
 * environment's draw, w1 the policy's. Branch-free; returns how many ended. */
static int step_block(int *restrict s, int *restrict lastaction, int *restrict segstep, double *restrict seg_return,
                      const unsigned int *restrict w0, const unsigned int *restrict w1, int *restrict done, int n)
{
    const float success_rate = (float)(1.0 / 3.0);
    const float fail_rate = (1.0f - success_rate) / 2.0f;
    const float sum0 = fail_rate, sum1 = sum0 + success_rate;
    int ended = 0;
    for (int j = 0; j < n; j++) {
        float u = cs_u01_f32(w0[j]);
        int entry = sum0 > u ? 0 : sum1 > u ? 1 : 2;
        int action = (int)(w1[j] >> 30);
        int here_s = s[j];
        int row = here_s / NCOL, col = here_s % NCOL;
        int b = (action - 1 + entry + 4) % 4;
        int nr = b == 1 ? (row + 1 < NCOL - 1 ? row + 1 : NCOL - 1) : b == 3 ? (row - 1 > 0 ? row - 1 : 0) : row;
        int nc = b == 0 ? (col - 1 > 0 ? col - 1 : 0) : b == 2 ? (col + 1 < NCOL - 1 ? col + 1 : NCOL - 1) : col;
        int target = desc[nr * NCOL + nc];
        int stuck = desc[here_s] != 0;
        s[j] = stuck ? here_s : nr * NCOL + nc;
        lastaction[j] = action;
        int terminated = stuck | (target != 0);
        seg_return[j] += (!stuck & (target == 2)) ? 1.0 : 0.0;
        ended += ref_episode_over(segstep, done, j, terminated, MAX_STEPS);
    }
    return ended;
}

static int step(const ref_batch *b, long long base, const unsigned int *words, int *done, int n)
{
    return step_block(b->int_var[0] + base, b->int_var[1] + base, b->segstep + base, b->seg_return + base, words,
                      words + REF_BLOCK, done, n);
}

/* cartsim's checksum: the carried ints, the step counters, the running returns. */
static uint64_t checksum(const ref_batch *b)
{
    size_t nf = (size_t)b->n;
    uint64_t h = 0xcbf29ce484222325ull;
    h = ref_fnv1a(h, b->int_var[0], nf * sizeof(int), sizeof(int));
    h = ref_fnv1a(h, b->int_var[1], nf * sizeof(int), sizeof(int));
    h = ref_fnv1a(h, b->segstep, nf * sizeof(int), sizeof(int));
    return ref_fnv1a(h, b->seg_return, nf * sizeof(double), sizeof(double));
}

#define REF_VARS 0
#define REF_INT_VARS 2
#define REF_DRAWS 2
#define REF_CHECKSUM checksum
#include "ref_rollout.h"
