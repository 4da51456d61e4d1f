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
 * restart stream at tau = t + 1. The harness is bench/ref_harness.h. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>

#include "philox.h"
#include "rng.h"
#include "mathf.h"
#include "ref_harness.h"

#define BLOCK 256
#ifdef CONTINUOUS
#define MAX_STEPS 999
#define NAME "mountain_car_continuous"
#else
#define MAX_STEPS 200
#define NAME "mountain_car"
#endif

typedef struct {
    long long n;
    float *position, *velocity;
    int *segstep;
    double *seg_return, *return_sum;
    long long *episodes;
} batch;

static void restart_lane(const batch *b, long long lane, unsigned long long seed, unsigned long long tau)
{
    unsigned int w[4];
    cs_rng_block(seed, (unsigned int)lane, tau, 1u << 16, w);
    b->position[lane] = -0.6f + (-0.4f - -0.6f) * cs_u01_f32(w[0]);
    b->velocity[lane] = 0.0f;
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
        segstep[j] += 1;
        int over = terminated | (segstep[j] >= MAX_STEPS);
        done[j] = over;
        ended += over;
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
            if (step_block(b->position + base, b->velocity + base, b->segstep + base, b->seg_return + base,
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
    if (ref_parse("ref_" NAME, argc, argv, &a, &status))
        return status;
    size_t nf = (size_t)a.envs;
    batch b = {.n = a.envs, .position = malloc(nf * sizeof(float)), .velocity = malloc(nf * sizeof(float)),
               .segstep = malloc(nf * sizeof(int)), .seg_return = malloc(nf * sizeof(double)),
               .return_sum = malloc(nf * sizeof(double)), .episodes = malloc(nf * sizeof(long long))};
    if (!b.position || !b.velocity || !b.segstep || !b.seg_return || !b.return_sum || !b.episodes) {
        fprintf(stderr, "ref_" NAME ": out of memory\n");
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
    h = ref_fnv1a(h, b.position, nf * sizeof(float), sizeof(float));
    h = ref_fnv1a(h, b.velocity, nf * sizeof(float), sizeof(float));
    h = ref_fnv1a(h, b.episodes, nf * sizeof(long long), sizeof(long long));
    ref_print(NAME, &a, best_ms, episodes, return_sum, h);
    free(b.position);
    free(b.velocity);
    free(b.segstep);
    free(b.seg_return);
    free(b.return_sum);
    free(b.episodes);
    return 0;
}
