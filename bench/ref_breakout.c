/* The hand-written Breakout-MinAtar loop (envs/breakout.env, gymnax 1.0.1's
 * MinBreakout) that the cpu backend's generated code is measured against:
 * the same rollout, written the fast way by hand (issue 26's benchmark).
 *
 *   gcc -O3 -march=native -ffp-contract=off -fno-math-errno -fno-trapping-math -Ijit bench/ref_breakout.c -lm -o ref_breakout
 *   ./ref_breakout --envs 2048 --steps 10000 [--seed S] [--repeat R]
 *
 * Work per step and environment: the random policy's action from the step
 * stream (draw 0: min(floor(u * 3), 2) in float, u the word's top 24 bits),
 * the paddle, the ball's move and its bounces off the side walls, the top, a
 * brick and the paddle in gymnax's order, the brick struck, the wall's
 * respawn, termination at the bottom row, truncation at 1000 steps, the
 * reward into a double running return, and on either flag an auto-reset
 * (same step) from the restart stream at tau = t + 1 (restart draw 0,
 * randint(2): the ball's side).
 *
 * How it is fast: blocks of 256 lanes stay in L1 for the whole rollout; the
 * step is branch-free integer code over the block, which vectorizes; the
 * bricks, which only ever stand on rows 1..3, are 30 bits of one word per
 * lane with a count beside them (cartsim's state has 100 floats and counts
 * them each step); the resets, rare, run in a scalar pass over the lanes that
 * ended.
 *
 * Prints one JSON line (bench/ref_harness.h) whose checksum is cartsim's own
 * (sim/env.c): FNV-1a over each state slot of every lane in breakout.env's
 * order (int32 slots' 4 bytes, bools' 1, brick_map's 100 floats as 100
 * slots), then the episode step counters and the running returns, so it
 * equals `cartsim --env Breakout-MinAtar --threads 1 --json` at the same
 * seed, envs and steps. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "philox.h"
#include "rng.h"
#include "ref_harness.h"

#define MAX_STEPS 1000
#define FULL_WALL 0x3fffffffu      /* rows 1..3: bit (row - 1) * 10 + column */

/* Every lane's state, one array per gymnax field (time is the episode's step
 * count, kept in segstep), and its episode bookkeeping. */
typedef struct {
    long long n;
    int *ball_y, *ball_x, *ball_dir, *pos, *last_y, *last_x, *strike, *terminal, *count, *segstep;
    unsigned int *bricks;
    double *seg_return, *return_sum;
    long long *episodes;
} breakout;

static void restart_lane(const breakout *b, long long lane, unsigned long long seed, unsigned long long tau)
{
    unsigned int w[4];
    cs_rng_block(seed, (unsigned int)lane, tau, 1u << 16, w);
    int side = (int)(w[0] >> 31);               /* randint(2) = (w * 2) >> 32 */
    b->ball_y[lane] = 3;
    b->ball_x[lane] = side ? 9 : 0;
    b->ball_dir[lane] = side ? 3 : 2;
    b->pos[lane] = 4;
    b->bricks[lane] = FULL_WALL;
    b->count[lane] = 30;
    b->strike[lane] = 0;
    b->last_y[lane] = 3;
    b->last_x[lane] = b->ball_x[lane];
    b->terminal[lane] = 0;
    b->segstep[lane] = 0;
    b->seg_return[lane] = 0.0;
}

/* One step of lanes [0, n) of a block, branch-free. Returns how many ended. */
static int step_block(int *restrict ball_y, int *restrict ball_x, int *restrict ball_dir, int *restrict pos,
                      int *restrict last_y, int *restrict last_x, int *restrict strike, int *restrict terminal,
                      unsigned int *restrict bricks, int *restrict count, int *restrict segstep,
                      double *restrict seg_return, const unsigned int *restrict words, int *restrict done, int n)
{
    int ended = 0;
    for (int j = 0; j < n; j++) {
        /* the random policy, as the f32 kernel computes it */
        float u = (float)(words[j] >> 8) * 0x1p-24f;
        int act = (int)fminf(floorf(u * 3.0f), 2.0f);
        int by = ball_y[j], bx = ball_x[j], dir = ball_dir[j], p = pos[j];
        int paddle = act == 1 ? (p > 0 ? p - 1 : 0) : act == 2 ? (p < 9 ? p + 1 : 9) : p;
        int nx = bx + ((dir == 1) | (dir == 2) ? 1 : -1);
        int ny = by + (dir < 2 ? -1 : 1);
        int side = (nx < 0) | (nx > 9);
        nx = nx < 0 ? 0 : nx > 9 ? 9 : nx;
        dir = side ? dir ^ 1 : dir;             /* [1, 0, 3, 2] */
        int top = ny < 0;
        ny = top ? 0 : ny;
        dir = top ? 3 - dir : dir;              /* [3, 2, 1, 0] */
        int bit = (ny - 1) * 10 + nx;
        int on_wall = (ny >= 1) & (ny <= 3);
        int hit = (!top) & on_wall & (int)((bricks[j] >> (on_wall ? bit : 0)) & 1u);
        int struck = (!strike[j]) & hit;
        bricks[j] &= ~((unsigned int)struck << (on_wall ? bit : 0));
        count[j] -= struck;
        ny = struck ? by : ny;
        dir = struck ? 3 - dir : dir;
        int bottom = !hit & (ny == 9);
        int respawn = bottom & (count[j] == 0);
        bricks[j] = respawn ? FULL_WALL : bricks[j];
        count[j] = respawn ? 30 : count[j];
        int redirect1 = bottom & (bx == paddle);
        dir = redirect1 ? 3 - dir : dir;
        ny = redirect1 ? by : ny;
        int redirect2 = bottom & (!redirect1) & (nx == paddle);
        dir = redirect2 ? dir ^ 2 : dir;        /* [2, 3, 0, 1] */
        ny = redirect2 ? by : ny;
        int term = bottom & (!redirect1) & (!redirect2);
        last_y[j] = by;
        last_x[j] = bx;
        ball_y[j] = ny;
        ball_x[j] = nx;
        ball_dir[j] = dir;
        pos[j] = paddle;
        strike[j] = hit;
        terminal[j] = term;
        seg_return[j] += struck ? 1.0 : 0.0;
        ended += ref_episode_over(segstep, done, j, term, MAX_STEPS);
    }
    return ended;
}

static void rollout(breakout *b, unsigned long long seed, long long steps)
{
    for (long long i = 0; i < b->n; i++) {
        restart_lane(b, i, seed, 0);
        b->episodes[i] = 0;
        b->return_sum[i] = 0.0;
    }
    static unsigned int words[4][REF_BLOCK];
    static int done[REF_BLOCK];
    for (long long base = 0; base < b->n; base += REF_BLOCK) {
        int n = b->n - base < REF_BLOCK ? (int)(b->n - base) : REF_BLOCK;
        for (long long t = 0; t < steps; t++) {
            if ((t & 3) == 0)       /* one draw a step: steps t..t+3 take words 0..3 of block t / 4 */
                for (int j = 0; j < n; j++) {
                    unsigned int out[4];
                    cs_rng_block(seed, (unsigned int)(base + j), (unsigned long long)t >> 2, 0u, out);
                    words[0][j] = out[0];
                    words[1][j] = out[1];
                    words[2][j] = out[2];
                    words[3][j] = out[3];
                }
            if (step_block(b->ball_y + base, b->ball_x + base, b->ball_dir + base, b->pos + base, b->last_y + base,
                           b->last_x + base, b->strike + base, b->terminal + base, b->bricks + base,
                           b->count + base, b->segstep + base, b->seg_return + base, words[t & 3], done, n) == 0)
                continue;
            for (int j = 0; j < n; j++) {
                if (!done[j])
                    continue;
                long long lane = base + j;
                b->episodes[lane] += 1;
                b->return_sum[lane] += b->seg_return[lane];
                restart_lane(b, lane, seed, (unsigned long long)t + 1);
            }
        }
    }
}

/* cartsim's checksum of the batch: every state slot over the lanes, in the
 * file's order, then the step counters and the running returns. */
static uint64_t checksum(const breakout *b)
{
    size_t n = (size_t)b->n;
    uint64_t h = 0xcbf29ce484222325ull;
    h = ref_fnv1a(h, b->segstep, n * sizeof(int), sizeof(int));            /* time */
    const int *ints[] = {b->ball_y, b->ball_x, b->ball_dir, b->pos};
    for (int k = 0; k < 4; k++)
        h = ref_fnv1a(h, ints[k], n * sizeof(int), sizeof(int));
    for (int cell = 0; cell < 100; cell++) {
        int row = cell / 10, bit = (row - 1) * 10 + cell % 10;
        for (size_t i = 0; i < n; i++) {
            float v = row >= 1 && row <= 3 && (b->bricks[i] >> bit & 1u) ? 1.0f : 0.0f;
            h = ref_fnv1a(h, &v, sizeof v, sizeof v);
        }
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char v = (unsigned char)b->strike[i];
        h = ref_fnv1a(h, &v, 1, 1);
    }
    h = ref_fnv1a(h, b->last_y, n * sizeof(int), sizeof(int));
    h = ref_fnv1a(h, b->last_x, n * sizeof(int), sizeof(int));
    for (size_t i = 0; i < n; i++) {
        unsigned char v = (unsigned char)b->terminal[i];
        h = ref_fnv1a(h, &v, 1, 1);
    }
    h = ref_fnv1a(h, b->segstep, n * sizeof(int), sizeof(int));
    return ref_fnv1a(h, b->seg_return, n * sizeof(double), sizeof(double));
}

int main(int argc, char **argv)
{
    ref_args a;
    int status;
    if (ref_parse("ref_breakout", argc, argv, &a, &status))
        return status;
    size_t n = (size_t)a.envs;
    breakout b = {.n = a.envs};
    int **ints[] = {&b.ball_y, &b.ball_x, &b.ball_dir, &b.pos, &b.last_y, &b.last_x, &b.strike, &b.terminal,
                    &b.count, &b.segstep};
    int ok = 1;
    for (size_t k = 0; k < sizeof ints / sizeof *ints; k++)
        ok &= (*ints[k] = malloc(n * sizeof(int))) != NULL;
    ok &= (b.bricks = malloc(n * sizeof(unsigned int))) != NULL;
    ok &= (b.seg_return = malloc(n * sizeof(double))) != NULL;
    ok &= (b.return_sum = malloc(n * sizeof(double))) != NULL;
    ok &= (b.episodes = malloc(n * sizeof(long long))) != NULL;
    if (ok) {
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
        for (size_t i = 0; i < n; i++) {
            episodes += b.episodes[i];
            return_sum += b.return_sum[i];
        }
        ref_print("breakout", &a, best_ms, episodes, return_sum, checksum(&b));
    } else {
        fprintf(stderr, "ref_breakout: out of memory\n");
    }
    for (size_t k = 0; k < sizeof ints / sizeof *ints; k++)
        free(*ints[k]);
    free(b.bricks);
    free(b.seg_return);
    free(b.return_sum);
    free(b.episodes);
    return ok ? 0 : 1;
}
