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
 * harness (arguments, JSON line, checksum) is bench/ref_harness.h. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>

#include "philox.h"
#include "rng.h"
#include "ref_harness.h"

#define BLOCK 256
#define MAX_STEPS 200
/* -DTRACK=0.5f checks the termination path against
 * `cartsim --env envs/spring_mass.env --param track=0.5`: the random policy
 * never leaves the default track of 2. */
#ifndef TRACK
#define TRACK 2.0f
#endif

typedef struct {
    long long n;
    float *x, *v;
    int *segstep;
    double *seg_return, *return_sum;
    long long *episodes;
} batch;

/* The reset's uniform draws are words 0 (x) and 1 (v) of the restart block. */
static void restart_lane(const batch *b, long long lane, unsigned long long seed, unsigned long long tau)
{
    const float omega = 2.0f;
    unsigned int w[4];
    cs_rng_block(seed, (unsigned int)lane, tau, 1u << 16, w);
    b->x[lane] = -1.0f + (1.0f - -1.0f) * cs_u01_f32(w[0]);
    b->v[lane] = (-omega + (omega - -omega) * cs_u01_f32(w[1])) * 0.5f;
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
            if (step_block(b->x + base, b->v + base, b->segstep + base, b->seg_return + base, words[t & 3], done,
                           n) == 0)
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
    if (ref_parse("ref_spring_mass", argc, argv, &a, &status))
        return status;
    size_t nf = (size_t)a.envs;
    batch b = {.n = a.envs, .x = malloc(nf * sizeof(float)), .v = malloc(nf * sizeof(float)),
               .segstep = malloc(nf * sizeof(int)), .seg_return = malloc(nf * sizeof(double)),
               .return_sum = malloc(nf * sizeof(double)), .episodes = malloc(nf * sizeof(long long))};
    if (!b.x || !b.v || !b.segstep || !b.seg_return || !b.return_sum || !b.episodes) {
        fprintf(stderr, "ref_spring_mass: out of memory\n");
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
    h = ref_fnv1a(h, b.x, nf * sizeof(float), sizeof(float));
    h = ref_fnv1a(h, b.v, nf * sizeof(float), sizeof(float));
    h = ref_fnv1a(h, b.episodes, nf * sizeof(long long), sizeof(long long));
    ref_print("spring_mass", &a, best_ms, episodes, return_sum, h);
    free(b.x);
    free(b.v);
    free(b.segstep);
    free(b.seg_return);
    free(b.return_sum);
    free(b.episodes);
    return 0;
}
