/* The hand-written Acrobot-v1 loop ("book" dynamics) that the cpu backend's
 * generated code is measured against: envs/acrobot.env in f32, written the
 * fast way.
 *
 *   gcc -O3 -march=native -ffp-contract=off -fno-math-errno -fno-trapping-math -Ijit bench/ref_acrobot.c -lm -o ref_acrobot
 *   ./ref_acrobot --envs 2048 --steps 10000 [--seed S] [--repeat R]
 *
 * Work per step and environment, f32 (Gymnasium's constants folded in float
 * as the f32 compiler folds them, its grouping kept): a torque in {-1, 0, 1}
 * from the step stream (one draw), one RK4 step of dt = 0.2 (four
 * evaluations of the derivatives, sin and cos by jit/mathf.h), the angles
 * wrapped into [-pi, pi] as Gymnasium's `while` loops (eight passes each
 * way, as the .env file), the velocities bounded, termination when the tip
 * is above the bar, reward -1 (0 at the end), truncation at 500 steps and
 * the auto-reset from the restart stream (four values rounded to float) at
 * tau = t + 1. pow(x, 2) is x * x. The harness is bench/ref_harness.h,
 * the rollout and main() bench/ref_rollout.h. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>

#include "philox.h"
#include "rng.h"
#include "mathf.h"
#include "ref_harness.h"

#define MAX_STEPS 500
#define PI_F 3.14159265358979323846f

/* ref_batch's var: theta1, theta2, dtheta1, dtheta2 */
static void restart_lane(const ref_batch *b, long long lane, unsigned long long seed, unsigned long long tau)
{
    unsigned int w[4];
    cs_rng_block(seed, (unsigned int)lane, tau, 1u << 16, w);
    for (int k = 0; k < 4; k++)
        b->var[k][lane] = -0.1f + (0.1f - -0.1f) * cs_u01_f32(w[k]);
}

/* Gymnasium's _dsdt with m1 = m2 = l1 = I1 = I2 = 1, lc1 = lc2 = 0.5, g = 9.8. */
static inline void dsdt(float t1, float t2, float d1_, float d2_, float a, float *dd1, float *dd2)
{
    float c2 = cs_cosf(t2), s2 = cs_sinf(t2);
    float d1 = ((0.25f + (1.25f + c2)) + 1.0f) + 1.0f;
    float d2 = (0.25f + 0.5f * c2) + 1.0f;
    float phi2 = (0.5f * 9.8f) * cs_cosf((t1 + t2) - PI_F / 2.0f);
    float phi1 = ((-0.5f * (d2_ * d2_)) * s2 - (d2_ * d1_) * s2) + (1.5f * 9.8f) * cs_cosf(t1 - PI_F / 2.0f) + phi2;
    float ddt2 = (((a + d2 / d1 * phi1) - (0.5f * (d1_ * d1_)) * s2) - phi2) / (1.25f - (d2 * d2) / d1);
    *dd2 = ddt2;
    *dd1 = -(d2 * ddt2 + phi1) / d1;
}

static inline float wrap(float x)
{
    const float width = PI_F - -PI_F;
    for (int k = 0; k < 8; k++)
        x = ref_pick(x > PI_F, x - width, x);
    for (int k = 0; k < 8; k++)
        x = ref_pick(x < -PI_F, x + width, x);
    return x;
}

static inline float bound(float x, float m)
{
    x = ref_pick(-m > x, -m, x);
    return ref_pick(m < x, m, x);
}

static int step_block(float *restrict th1, float *restrict th2, float *restrict dth1, float *restrict dth2,
                      int *restrict segstep, double *restrict seg_return, const unsigned int *restrict words,
                      int *restrict done, int n)
{
    const float h = 0.2f, h2 = 0.2f / 2.0f, h6 = 0.2f / 6.0f;
    int ended = 0;
    for (int j = 0; j < n; j++) {
        float act = floorf(cs_u01_f32(words[j]) * 3.0f);
        float a = ref_pick(2.0f < act, 2.0f, act) - 1.0f;
        float y0 = th1[j], y1 = th2[j], y2 = dth1[j], y3 = dth2[j];
        float k1a, k1b, k2a, k2b, k3a, k3b, k4a, k4b;
        dsdt(y0, y1, y2, y3, a, &k1a, &k1b);
        dsdt(y0 + h2 * y2, y1 + h2 * y3, y2 + h2 * k1a, y3 + h2 * k1b, a, &k2a, &k2b);
        float k2v0 = y2 + h2 * k1a, k2v1 = y3 + h2 * k1b;
        dsdt(y0 + h2 * k2v0, y1 + h2 * k2v1, y2 + h2 * k2a, y3 + h2 * k2b, a, &k3a, &k3b);
        float k3v0 = y2 + h2 * k2a, k3v1 = y3 + h2 * k2b;
        dsdt(y0 + h * k3v0, y1 + h * k3v1, y2 + h * k3a, y3 + h * k3b, a, &k4a, &k4b);
        float k4v0 = y2 + h * k3a, k4v1 = y3 + h * k3b;
        float n0 = y0 + h6 * (((y2 + 2.0f * k2v0) + 2.0f * k3v0) + k4v0);
        float n1 = y1 + h6 * (((y3 + 2.0f * k2v1) + 2.0f * k3v1) + k4v1);
        float n2 = y2 + h6 * (((k1a + 2.0f * k2a) + 2.0f * k3a) + k4a);
        float n3 = y3 + h6 * (((k1b + 2.0f * k2b) + 2.0f * k3b) + k4b);
        float t1 = wrap(n0), t2 = wrap(n1);
        th1[j] = t1;
        th2[j] = t2;
        dth1[j] = bound(n2, 4.0f * PI_F);
        dth2[j] = bound(n3, 9.0f * PI_F);
        int terminated = -cs_cosf(t1) - cs_cosf(t2 + t1) > 1.0f;
        seg_return[j] += terminated ? 0.0 : -1.0;
        ended += ref_episode_over(segstep, done, j, terminated, MAX_STEPS);
    }
    return ended;
}

static int step(const ref_batch *b, long long base, const unsigned int *words, int *done, int n)
{
    return step_block(b->var[0] + base, b->var[1] + base, b->var[2] + base, b->var[3] + base, b->segstep + base, b->seg_return + base, words, done, n);
}

#define REF_NAME "acrobot"
#define REF_VARS 4
#include "ref_rollout.h"
