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
 * The rollout, the arguments and the JSON line are bench/ref_rollout.h's and
 * bench/ref_harness.h's, with int states; the JSON line's checksum is cartsim's own
 * (sim/env.c): FNV-1a over each state slot of every lane in breakout.env's
 * order (int32 slots' 4 bytes, bools' 1, brick_map's 100 floats as 100
 * slots), then the episode step counters and the running returns, so it
 * equals `cartsim --env Breakout-MinAtar --threads 1 --json` at the same
 * seed, envs and steps. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>

#include "philox.h"
#include "rng.h"
#include "ref_harness.h"

#define MAX_STEPS 1000
#define FULL_WALL 0x3fffffffu      /* rows 1..3: bit (row - 1) * 10 + column */

/* ref_batch's int_var, one array per gymnax field (time is the episode's
 * step count, kept in segstep); the bricks are the bits of an unsigned int. */
enum { BALL_Y, BALL_X, BALL_DIR, POS, LAST_Y, LAST_X, STRIKE, TERMINAL, COUNT, BRICKS, N_FIELDS };

static unsigned int *bricks_of(const ref_batch *b)
{
    return (unsigned int *)b->int_var[BRICKS];
}

static void restart_lane(const ref_batch *b, long long lane, unsigned long long seed, unsigned long long tau)
{
    unsigned int w[4];
    cs_rng_block(seed, (unsigned int)lane, tau, 1u << 16, w);
    int side = (int)(w[0] >> 31);               /* randint(2) = (w * 2) >> 32 */
    int *const *f = b->int_var;
    f[BALL_Y][lane] = 3;
    f[BALL_X][lane] = side ? 9 : 0;
    f[BALL_DIR][lane] = side ? 3 : 2;
    f[POS][lane] = 4;
    bricks_of(b)[lane] = FULL_WALL;
    f[COUNT][lane] = 30;
    f[STRIKE][lane] = 0;
    f[LAST_Y][lane] = 3;
    f[LAST_X][lane] = f[BALL_X][lane];
    f[TERMINAL][lane] = 0;
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

static int step(const ref_batch *b, long long base, const unsigned int *words, int *done, int n)
{
    int *const *f = b->int_var;
    return step_block(f[BALL_Y] + base, f[BALL_X] + base, f[BALL_DIR] + base, f[POS] + base, f[LAST_Y] + base,
                      f[LAST_X] + base, f[STRIKE] + base, f[TERMINAL] + base, bricks_of(b) + base, f[COUNT] + base,
                      b->segstep + base, b->seg_return + base, words, done, n);
}

/* cartsim's checksum of the batch: every state slot over the lanes, in the
 * file's order, then the step counters and the running returns. */
static uint64_t checksum(const ref_batch *b)
{
    size_t n = (size_t)b->n;
    int *const *f = b->int_var;
    const unsigned int *bricks = bricks_of(b);
    uint64_t h = 0xcbf29ce484222325ull;
    h = ref_fnv1a(h, b->segstep, n * sizeof(int), sizeof(int));            /* time */
    const int ints[] = {BALL_Y, BALL_X, BALL_DIR, POS};
    for (int k = 0; k < 4; k++)
        h = ref_fnv1a(h, f[ints[k]], n * sizeof(int), sizeof(int));
    for (int cell = 0; cell < 100; cell++) {
        int row = cell / 10, bit = (row - 1) * 10 + cell % 10;
        for (size_t i = 0; i < n; i++) {
            float v = row >= 1 && row <= 3 && (bricks[i] >> bit & 1u) ? 1.0f : 0.0f;
            h = ref_fnv1a(h, &v, sizeof v, sizeof v);
        }
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char v = (unsigned char)f[STRIKE][i];
        h = ref_fnv1a(h, &v, 1, 1);
    }
    h = ref_fnv1a(h, f[LAST_Y], n * sizeof(int), sizeof(int));
    h = ref_fnv1a(h, f[LAST_X], n * sizeof(int), sizeof(int));
    for (size_t i = 0; i < n; i++) {
        unsigned char v = (unsigned char)f[TERMINAL][i];
        h = ref_fnv1a(h, &v, 1, 1);
    }
    h = ref_fnv1a(h, b->segstep, n * sizeof(int), sizeof(int));
    return ref_fnv1a(h, b->seg_return, n * sizeof(double), sizeof(double));
}

#define REF_NAME "breakout"
#define REF_VARS 0
#define REF_INT_VARS N_FIELDS
#define REF_CHECKSUM checksum
#include "ref_rollout.h"
