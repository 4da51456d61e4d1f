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
 * clock and JSON line are bench/ref_harness.h's; the rollout is its own (two
 * draws a step: one Philox block serves two steps, the states are ints). */
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

typedef struct {
    long long n;
    int *s, *lastaction, *segstep;
    double *seg_return, *return_sum;
    long long *episodes;
} lake;

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

/* Blocks of REF_BLOCK lanes kept in L1 for the whole rollout; Philox block
 * t / 2 of a lane holds the words of steps t and t + 1 (two draws a step). */
static void rollout(lake *b, unsigned long long seed, long long steps)
{
    for (long long i = 0; i < b->n; i++) {
        b->s[i] = 0;
        b->lastaction[i] = -1;
        b->segstep[i] = 0;
        b->seg_return[i] = 0.0;
        b->episodes[i] = 0;
        b->return_sum[i] = 0.0;
    }
    static unsigned int words[4][REF_BLOCK];
    static int done[REF_BLOCK];
    for (long long base = 0; base < b->n; base += REF_BLOCK) {
        int n = b->n - base < REF_BLOCK ? (int)(b->n - base) : REF_BLOCK;
        for (long long t = 0; t < steps; t++) {
            if ((t & 1) == 0)
                for (int j = 0; j < n; j++) {
                    unsigned int out[4];
                    cs_rng_block(seed, (unsigned int)(base + j), (unsigned long long)t >> 1, 0u, out);
                    for (int k = 0; k < 4; k++)
                        words[k][j] = out[k];
                }
            int half = (int)(t & 1) * 2;
            if (step_block(b->s + base, b->lastaction + base, b->segstep + base, b->seg_return + base, words[half],
                           words[half + 1], done, n) == 0)
                continue;
            for (int j = 0; j < n; j++) {
                if (!done[j])
                    continue;
                long long lane = base + j;
                b->episodes[lane] += 1;
                b->return_sum[lane] += b->seg_return[lane];
                b->seg_return[lane] = 0.0;
                b->segstep[lane] = 0;
                b->s[lane] = 0;
                b->lastaction[lane] = -1;
            }
        }
    }
}

int main(int argc, char **argv)
{
    ref_args a;
    int status;
    if (ref_parse("ref_" REF_NAME, argc, argv, &a, &status))
        return status;
    size_t nf = (size_t)a.envs;
    lake b = {.n = a.envs, .s = malloc(nf * sizeof(int)), .lastaction = malloc(nf * sizeof(int)),
              .segstep = malloc(nf * sizeof(int)), .seg_return = malloc(nf * sizeof(double)),
              .return_sum = malloc(nf * sizeof(double)), .episodes = malloc(nf * sizeof(long long))};
    if (!b.s || !b.lastaction || !b.segstep || !b.seg_return || !b.return_sum || !b.episodes) {
        fprintf(stderr, "ref_" REF_NAME ": out of memory\n");
        return 1;
    }
    double best_ms = 0;
    for (long long r = 0; r < a.repeat; r++) {
        double t0 = ref_now_ms();
        rollout(&b, a.seed, a.steps);
        double ms = ref_now_ms() - t0;
        if (r == 0 || ms < best_ms)
            best_ms = ms;
    }
    long long episodes = 0;
    double return_sum = 0;
    for (long long i = 0; i < a.envs; i++) {
        episodes += b.episodes[i];
        return_sum += b.return_sum[i];
    }
    uint64_t h = 0xcbf29ce484222325ull;   /* cartsim's: the carried ints, the step counters, the running returns */
    h = ref_fnv1a(h, b.s, nf * sizeof(int), 1);
    h = ref_fnv1a(h, b.lastaction, nf * sizeof(int), 1);
    h = ref_fnv1a(h, b.segstep, nf * sizeof(int), 1);
    h = ref_fnv1a(h, b.seg_return, nf * sizeof(double), 1);
    ref_print(REF_NAME, &a, best_ms, episodes, return_sum, h);
    free(b.s);
    free(b.lastaction);
    free(b.segstep);
    free(b.seg_return);
    free(b.return_sum);
    free(b.episodes);
    return 0;
}
