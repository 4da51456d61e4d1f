/* The hand-written MountainCar-v0 loop (and, built with -DCONTINUOUS,
 * MountainCarContinuous-v0) that the cpu backend's generated code is measured
 * against: envs/mountain_car.env and envs/mountain_car_continuous.env in f32,
 * written the fast way.
 *
 *   gcc -O3 -march=native -ffp-contract=off -fno-math-errno -fno-trapping-math -Ijit bench/ref_mountain_car.c -lm -o ref_mountain_car
 *   gcc -O3 -march=native -ffp-contract=off -fno-math-errno -fno-trapping-math -DCONTINUOUS -Ijit bench/ref_mountain_car.c -lm -o ref_mountain_car_continuous
 *   ./ref_mountain_car --envs 2048 --steps 10000 [--seed S] [--repeat R]
 *
 * Work per step and environment, f32 (constants folded in float): one draw
 * from the step stream for the action (discrete: min(floor(3u), 2); continuous:
 * a force uniform in [-1, 1)), the velocity and position clipped, the
 * inelastic left wall, termination at the goal, the reward into a double
 * running return (continuous: 100 at the goal minus 0.1 * action^2, pow(x, 2)
 * as x * x), truncation at 200 (999) steps and the auto-reset from the
 * restart stream at tau = t + 1. The harness is bench/ref_harness.h,
 * the rollout and main() bench/ref_rollout.h. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>

#include "philox.h"
#include "rng.h"
#include "mathf.h"
#include "ref_harness.h"

#ifdef CONTINUOUS
#define MAX_STEPS 999
#define REF_NAME "mountain_car_continuous"
#else
#define MAX_STEPS 200
#define REF_NAME "mountain_car"
#endif

/* ref_batch's var: position, velocity */
static void restart_lane(const ref_batch *b, long long lane, unsigned long long seed, unsigned long long tau)
{
    unsigned int w[4];
    cs_rng_block(seed, (unsigned int)lane, tau, 1u << 16, w);
    b->var[0][lane] = -0.6f + (-0.4f - -0.6f) * cs_u01_f32(w[0]);
    b->var[1][lane] = 0.0f;
}

static int step_block(float *restrict position, float *restrict velocity, int *restrict segstep,
                      double *restrict seg_return, const unsigned int *restrict words, int *restrict done, int n)
{
    const float min_position = -1.2f, max_position = 0.6f, max_speed = 0.07f;
    int ended = 0;
    for (int j = 0; j < n; j++) {
        float pos = position[j], vel = velocity[j], u01 = cs_u01_f32(words[j]);
#ifdef CONTINUOUS
        const float goal_position = 0.45f;
        float action = -1.0f + (1.0f - -1.0f) * u01;
        float force = ref_pick(action > 1.0f, 1.0f, ref_pick(action < -1.0f, -1.0f, action));
        float v = vel + (force * 0.0015f - 0.0025f * cs_cosf(3.0f * pos));
#else
        const float goal_position = 0.5f;
        float a = floorf(u01 * 3.0f);
        a = ref_pick(2.0f < a, 2.0f, a);
        float v = vel + ((a - 1.0f) * 0.001f + cs_cosf(3.0f * pos) * -0.0025f);
#endif
        v = ref_pick(v > max_speed, max_speed, v);
        v = ref_pick(v < -max_speed, -max_speed, v);
        float p = pos + v;
        p = ref_pick(p > max_position, max_position, p);
        p = ref_pick(p < min_position, min_position, p);
        v = ref_pick((p == min_position) & (v < 0), 0.0f, v);
        int terminated = (p >= goal_position) & (v >= 0);
        position[j] = p;
        velocity[j] = v;
#ifdef CONTINUOUS
        seg_return[j] += (double)(ref_pick(terminated, 100.0f, 0.0f) - (action * action) * 0.1f);
#else
        seg_return[j] += -1.0;
#endif
        ended += ref_episode_over(segstep, done, j, terminated, MAX_STEPS);
    }
    return ended;
}

static int step(const ref_batch *b, long long base, const unsigned int *words, int *done, int n)
{
    return step_block(b->var[0] + base, b->var[1] + base, b->segstep + base, b->seg_return + base, words, done, n);
}

#define REF_VARS 2
#include "ref_rollout.h"
