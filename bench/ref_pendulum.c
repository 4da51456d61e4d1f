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
 * (arguments, JSON line, checksum) is bench/ref_harness.h. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>

#include "philox.h"
#include "rng.h"
#include "mathf.h"
#include "ref_harness.h"

#define BLOCK 256
#define MAX_STEPS 200
#define PI_F 3.14159265358979323846f

typedef struct {
    long long n;
    float *theta, *theta_dot;
    int *segstep;
    double *seg_return, *return_sum;
    long long *episodes;
} batch;

static void restart_lane(const batch *b, long long lane, unsigned long long seed, unsigned long long tau)
{
    unsigned int w[4];
    cs_rng_block(seed, (unsigned int)lane, tau, 1u << 16, w);
    b->theta[lane] = -PI_F + (PI_F - -PI_F) * cs_u01_f32(w[0]);
    b->theta_dot[lane] = -1.0f + (1.0f - -1.0f) * cs_u01_f32(w[1]);
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
        segstep[j] += 1;
        int truncated = segstep[j] >= MAX_STEPS;
        done[j] = truncated;
        ended += truncated;
    }
    return ended;
}

static void rollout(batch *b, unsigned long long seed, long long steps)
{
    for (long long i = 0; i < b->n; i++) {
        restart_lane(b, i, seed, 0);
        b->segstep[i] = 0;
        b->seg_return[i] = 0.0;
        b->episodes[i] = 0;
        b->return_sum[i] = 0.0;
    }
    static unsigned int words[4][BLOCK];
    static int done[BLOCK];
    for (long long base = 0; base < b->n; base += BLOCK) {
        int n = b->n - base < BLOCK ? (int)(b->n - base) : BLOCK;
        for (long long t = 0; t < steps; t++) {
            if ((t & 3) == 0)
                for (int j = 0; j < n; j++) {
                    unsigned int out[4];
                    cs_rng_block(seed, (unsigned int)(base + j), (unsigned long long)t >> 2, 0u, out);
                    words[0][j] = out[0];
                    words[1][j] = out[1];
                    words[2][j] = out[2];
                    words[3][j] = out[3];
                }
            if (step_block(b->theta + base, b->theta_dot + base, b->segstep + base, b->seg_return + base,
                           words[t & 3], done, n) == 0)
                continue;
            for (int j = 0; j < n; j++) {
                if (!done[j])
                    continue;
                long long lane = base + j;
                b->episodes[lane] += 1;
                b->return_sum[lane] += b->seg_return[lane];
                b->seg_return[lane] = 0.0;
                b->segstep[lane] = 0;
                restart_lane(b, lane, seed, (unsigned long long)t + 1);
            }
        }
    }
}

int main(int argc, char **argv)
{
    ref_args a;
    int status;
    if (ref_parse("ref_pendulum", argc, argv, &a, &status))
        return status;
    size_t nf = (size_t)a.envs;
    batch b = {.n = a.envs, .theta = malloc(nf * sizeof(float)), .theta_dot = malloc(nf * sizeof(float)),
               .segstep = malloc(nf * sizeof(int)), .seg_return = malloc(nf * sizeof(double)),
               .return_sum = malloc(nf * sizeof(double)), .episodes = malloc(nf * sizeof(long long))};
    if (!b.theta || !b.theta_dot || !b.segstep || !b.seg_return || !b.return_sum || !b.episodes) {
        fprintf(stderr, "ref_pendulum: out of memory\n");
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
    uint64_t h = 0xcbf29ce484222325ull;
    h = ref_fnv1a(h, b.theta, nf * sizeof(float), sizeof(float));
    h = ref_fnv1a(h, b.theta_dot, nf * sizeof(float), sizeof(float));
    h = ref_fnv1a(h, b.episodes, nf * sizeof(long long), sizeof(long long));
    ref_print("pendulum", &a, best_ms, episodes, return_sum, h);
    free(b.theta);
    free(b.theta_dot);
    free(b.segstep);
    free(b.seg_return);
    free(b.return_sum);
    free(b.episodes);
    return 0;
}
