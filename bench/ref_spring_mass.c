/* The hand-written spring_mass loop (envs/spring_mass.env, the README's custom
 * example) that the cpu backend's generated code is measured against, in f32,
 * written the fast way.
 *
 *   gcc -O3 -march=native -ffp-contract=off -fno-math-errno -fno-trapping-math -Ijit bench/ref_spring_mass.c -lm -o ref_spring_mass
 *   ./ref_spring_mass --envs 2048 --steps 10000 [--seed S] [--repeat R]
 *
 * Work per step and environment, f32, with the file's parameters folded in
 * float as the f32 compiler folds them (mass = 1 drops the division; dt, 0.1
 * and 0.001 are the floats nearest them): a force uniform in [-1, 1) from the
 * step stream (one draw) and its clip, the spring and damper, semi-implicit
 * Euler, termination when |x'| > track with reward -100, else the quadratic
 * cost on the new state and the force (pow(x, 2) as x * x, as cs_powf does),
 * the reward into a double running return, truncation at 200 steps and the
 * auto-reset from the restart stream at tau = t + 1: x = uniform(-1, 1), then
 * v = uniform(-omega, omega) * 0.5 with omega = sqrt(4 / 1) = 2 folded. The
 * harness (arguments, JSON line, checksum) is bench/ref_harness.h; the
 * rollout and main(), bench/ref_rollout.h. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>

#include "philox.h"
#include "rng.h"
#include "ref_harness.h"

#define MAX_STEPS 200
/* -DTRACK=0.5f checks the termination path against
 * `cartsim --env envs/spring_mass.env --param track=0.5`: the random policy
 * never leaves the default track of 2. */
#ifndef TRACK
#define TRACK 2.0f
#endif

/* The reset's uniform draws are words 0 (x) and 1 (v) of the restart block.
 * ref_batch's var: x, v. */
static void restart_lane(const ref_batch *b, long long lane, unsigned long long seed, unsigned long long tau)
{
    const float omega = 2.0f;
    unsigned int w[4];
    cs_rng_block(seed, (unsigned int)lane, tau, 1u << 16, w);
    b->var[0][lane] = -1.0f + (1.0f - -1.0f) * cs_u01_f32(w[0]);
    b->var[1][lane] = (-omega + (omega - -omega) * cs_u01_f32(w[1])) * 0.5f;
}

static int step_block(float *restrict xs, float *restrict vs, int *restrict segstep, double *restrict seg_return,
                      const unsigned int *restrict words, int *restrict done, int n)
{
    const float max_force = 1.0f, stiffness = 4.0f, damping = 0.2f, dt = 0.05f, track = TRACK;
    int ended = 0;
    for (int j = 0; j < n; j++) {
        float action = -max_force + (max_force - -max_force) * cs_u01_f32(words[j]);
        /* clip as cs_clipf orders it: the low bound first */
        float f = ref_pick(-max_force > action, -max_force, action);
        f = ref_pick(max_force < f, max_force, f);
        float x = xs[j], v = vs[j];
        float a = (-stiffness * x - damping * v) + f;
        float nv = v + dt * a;
        float nx = x + dt * nv;
        int terminated = fabsf(nx) > track;
        float cost = (nx * nx + 0.1f * (nv * nv)) + 0.001f * (f * f);
        xs[j] = nx;
        vs[j] = nv;
        seg_return[j] += (double)ref_pick(terminated, -100.0f, -cost);
        ended += ref_episode_over(segstep, done, j, terminated, MAX_STEPS);
    }
    return ended;
}

static int step(const ref_batch *b, long long base, const unsigned int *words, int *done, int n)
{
    return step_block(b->var[0] + base, b->var[1] + base, b->segstep + base, b->seg_return + base, words, done, n);
}

#define REF_NAME "spring_mass"
#define REF_VARS 2
#include "ref_rollout.h"
