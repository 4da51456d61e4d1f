/* The hand-written Pendulum-v1 loop the cpu backend's generated code is
 * measured against (envs/pendulum.env in f32, written the fast way).
 *
 *   gcc -O3 -march=native -ffp-contract=off -fno-math-errno -fno-trapping-math -Ijit bench/ref_pendulum.c -lm -o ref_pendulum
 *   ./ref_pendulum --envs 2048 --steps 10000 [--seed S] [--repeat R]
 *
 * Work per step and environment, f32 (constants folded in float, as the f32
 * compiler folds them): a uniform torque in [-2, 2) from the step stream (one
 * draw), the clip, the cost on the state before the step with the angle
 * normalized by a floored modulo, the velocity clipped, the angle advanced,
 * the reward into a double running return, truncation at 200 steps and the
 * auto-reset from the restart stream (theta, theta_dot) at tau = t + 1.
 * pow(x, 2) is x * x. The floored modulo is exact, as fmodf then the sign
 * fix-up are, but vectorizes: x - floor(x / b) * b in double is the exact
 * remainder (both terms are exact there), rounded once to float. The harness
 * (arguments, JSON line, checksum) is bench/ref_harness.h; the rollout and
 * main(), bench/ref_rollout.h. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>

#include "philox.h"
#include "rng.h"
#include "mathf.h"
#include "ref_harness.h"

#define MAX_STEPS 200
#define PI_F 3.14159265358979323846f

/* ref_batch's var: theta, theta_dot */
static void restart_lane(const ref_batch *b, long long lane, unsigned long long seed, unsigned long long tau)
{
    unsigned int w[4];
    cs_rng_block(seed, (unsigned int)lane, tau, 1u << 16, w);
    b->var[0][lane] = -PI_F + (PI_F - -PI_F) * cs_u01_f32(w[0]);
    b->var[1][lane] = -1.0f + (1.0f - -1.0f) * cs_u01_f32(w[1]);
}

/* Floored modulo by b > 0: exactly fmodf's remainder, moved into [0, b). */
static inline float floored_mod(float x, float b)
{
    double r = (double)x - floor((double)x / (double)b) * (double)b;
    r = ref_pick64(r < 0, r + b, r);
    r = ref_pick64(r >= b, r - b, r);
    return (float)r;
}

static int step_block(float *restrict theta, float *restrict theta_dot, int *restrict segstep,
                      double *restrict seg_return, const unsigned int *restrict words, int *restrict done, int n)
{
    const float max_torque = 2.0f, max_speed = 8.0f, dt = 0.05f;
    int ended = 0;
    for (int j = 0; j < n; j++) {
        float action = -max_torque + (max_torque - -max_torque) * cs_u01_f32(words[j]);
        float u = ref_pick(action > max_torque, max_torque, ref_pick(action < -max_torque, -max_torque, action));
        float th = theta[j], thd = theta_dot[j];
        float an = floored_mod(th + PI_F, 2 * PI_F) - PI_F;
        float costs = an * an + 0.1f * (thd * thd) + 0.001f * (u * u);
        /* 3 * g / (2 * l) = 15 and 3 / (m * l^2) = 3 with Gymnasium's g, m, l */
        float newthdot = thd + (15.0f * cs_sinf(th) + 3.0f * u) * dt;
        float nthd = ref_pick(newthdot > max_speed, max_speed, ref_pick(newthdot < -max_speed, -max_speed, newthdot));
        theta_dot[j] = nthd;
        theta[j] = th + nthd * dt;
        seg_return[j] += (double)-costs;
        ended += ref_episode_over(segstep, done, j, 0, MAX_STEPS);   /* no termination */
    }
    return ended;
}

static int step(const ref_batch *b, long long base, const unsigned int *words, int *done, int n)
{
    return step_block(b->var[0] + base, b->var[1] + base, b->segstep + base, b->seg_return + base, words, done, n);
}

#define REF_NAME "pendulum"
#define REF_VARS 2
#include "ref_rollout.h"
