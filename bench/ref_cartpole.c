/* The hand-written CartPole loop that the cpu backend's generated code is
 * measured against: same work, written the fast way by hand.
 *
 *   gcc -O3 -march=native -ffp-contract=off -Ijit bench/ref_cartpole.c -lm -o ref_cartpole
 *   ./ref_cartpole --envs 2048 --steps 10000 [--seed S] [--hash] [--repeat R]
 *
 * Work per step and environment, f32 throughout (CartPole-v1 in Gymnasium's
 * operation order, constants folded in float as the f32 compiler folds them):
 * one random action from the step stream (jit/rng.h, one draw per step), the
 * Euler step, termination, truncation at 500 steps, reward 1 into a double
 * running return, and on either flag an auto-reset (same step) from the
 * restart stream at tau = t + 1, counting the episode and its return.
 *
 * How it is fast: lanes go in blocks small enough to stay in L1 across all
 * steps (time loop inside the block loop); the physics loop is branch-free
 * and vectorizes (cs_sinf/cs_cosf from jit/mathf.h); one Philox call gives
 * the words of four consecutive steps; the resets, rare, run in a separate
 * scalar pass over the lanes that finished.
 *
 * --hash replaces Philox by a cheap integer hash (one per step, and per
 * reset value) to show what the generator costs; --repeat runs the whole
 * rollout R times from scratch and reports the fastest.
 *
 * Prints one JSON line; the checksum is FNV-1a 64 over the little-endian bytes
 * of the final x, x_dot, theta, theta_dot arrays and then the per-environment
 * episode counts, so two implementations of the same rollout can be compared.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "philox.h"
#include "rng.h"
#include "mathf.h"
#include "ref_harness.h"

/* 256 lanes: the state, counters and four words of random bits of a block
 * take about 11 KiB, well inside L1, and a block is many vectors long.
 * -DBLOCK=N to try others. */
#ifndef BLOCK
#define BLOCK 256
#endif

#define MAX_STEPS 500

typedef struct {
    long long n;
    float *x, *x_dot, *theta, *theta_dot;
    int *segstep;          /* steps in the running episode */
    double *seg_return;    /* return of the running episode */
    long long *episodes;   /* finished episodes */
    double *return_sum;    /* sum of the finished episodes' returns */
} batch;

/* A cheap stand-in for Philox (--hash): a 32-bit finalizer of the inputs. */
static inline unsigned int cheap_hash(unsigned long long seed, unsigned int lane, unsigned long long t,
                                      unsigned int salt)
{
    unsigned int h = (unsigned int)seed ^ (unsigned int)(seed >> 32) * 0x85ebca6bu;
    h ^= lane * 0x9e3779b9u ^ (unsigned int)t * 0xc2b2ae35u ^ (unsigned int)(t >> 32) ^ salt;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return h;
}

/* The fresh state of `lane` at global time tau: four draws of one restart block. */
static void restart_lane(const batch *b, long long lane, unsigned long long seed, unsigned long long tau,
                         int use_hash)
{
    unsigned int w[4];
    if (use_hash) {
        for (unsigned int k = 0; k < 4; k++)
            w[k] = cheap_hash(seed, (unsigned int)lane, tau, 0x10000u + k);
    } else {
        /* Restart words k = 0..3 are words 0..3 of block {tau, RESTART << 16 | 0}. */
        cs_rng_block(seed, (unsigned int)lane, tau, 1u << 16, w);
    }
    b->x[lane] = -0.05f + 0.1f * cs_u01_f32(w[0]);
    b->x_dot[lane] = -0.05f + 0.1f * cs_u01_f32(w[1]);
    b->theta[lane] = -0.05f + 0.1f * cs_u01_f32(w[2]);
    b->theta_dot[lane] = -0.05f + 0.1f * cs_u01_f32(w[3]);
}

/* One step of lanes [0, n) of a block, branch-free. Returns how many ended. */
static int step_block(float *restrict x, float *restrict x_dot, float *restrict theta,
                      float *restrict theta_dot, int *restrict segstep, double *restrict seg_return,
                      const unsigned int *restrict words, unsigned char *restrict done, int n)
{
    /* Gymnasium's constants, folded in float as the f32 compiler folds them. */
    const float gravity = 9.8f, masspole = 0.1f, total_mass = 1.1f, length = 0.5f;
    const float polemass_length = 0.05f, force_mag = 10.0f, tau = 0.02f;
    const float theta_threshold = (float)(12 * 2 * 3.14159265358979323846 / 360);
    const float x_threshold = 2.4f;
    int ended = 0;
    for (int j = 0; j < n; j++) {
        /* action = min(floor(u * 2), 1) with u = (w >> 8) / 2^24 is the top bit of w. */
        unsigned int action = words[j] >> 31;
        float force = action == 1 ? force_mag : -force_mag;
        float th = theta[j], thd = theta_dot[j];
        float costheta = cs_cosf(th), sintheta = cs_sinf(th);
        float temp = (force + polemass_length * (thd * thd) * sintheta) / total_mass;
        float thetaacc = (gravity * sintheta - costheta * temp) /
                         (length * (4.0f / 3.0f - masspole * (costheta * costheta) / total_mass));
        float xacc = temp - polemass_length * thetaacc * costheta / total_mass;
        float nx = x[j] + tau * x_dot[j];
        float nxd = x_dot[j] + tau * xacc;
        float nth = th + tau * thd;
        float nthd = thd + tau * thetaacc;
        x[j] = nx;
        x_dot[j] = nxd;
        theta[j] = nth;
        theta_dot[j] = nthd;
        /* | not ||: no short-circuit branches in the vector loop. */
        int terminated = (nx < -x_threshold) | (nx > x_threshold) | (nth < -theta_threshold) |
                         (nth > theta_threshold);
        int truncated = segstep[j] + 1 >= MAX_STEPS;
        seg_return[j] += 1.0;
        segstep[j] += 1;
        done[j] = (unsigned char)(terminated | truncated);
        ended += terminated | truncated;
    }
    return ended;
}

static void rollout(batch *b, unsigned long long seed, long long steps, int use_hash)
{
    for (long long i = 0; i < b->n; i++) {
        restart_lane(b, i, seed, 0, use_hash);
        b->segstep[i] = 0;
        b->seg_return[i] = 0.0;
        b->episodes[i] = 0;
        b->return_sum[i] = 0.0;
    }
    unsigned int words[4][BLOCK];
    unsigned char done[BLOCK];
    for (long long base = 0; base < b->n; base += BLOCK) {
        int n = b->n - base < BLOCK ? (int)(b->n - base) : BLOCK;
        float *x = b->x + base, *x_dot = b->x_dot + base, *theta = b->theta + base;
        float *theta_dot = b->theta_dot + base;
        int *segstep = b->segstep + base;
        double *seg_return = b->seg_return + base;
        for (long long t = 0; t < steps; t++) {
            const unsigned int *w = words[t & 3];
            if (use_hash) {
                unsigned int *h = words[0];
                for (int j = 0; j < n; j++)
                    h[j] = cheap_hash(seed, (unsigned int)(base + j), (unsigned long long)t, 0u);
                w = h;
            } else if ((t & 3) == 0) {
                /* One draw per step: steps t..t+3 use words 0..3 of block t / 4. */
                for (int j = 0; j < n; j++) {
                    unsigned int out[4];
                    cs_rng_block(seed, (unsigned int)(base + j), (unsigned long long)t >> 2, 0u, out);
                    words[0][j] = out[0];
                    words[1][j] = out[1];
                    words[2][j] = out[2];
                    words[3][j] = out[3];
                }
            }
            if (step_block(x, x_dot, theta, theta_dot, segstep, seg_return, w, done, n) == 0)
                continue;
            for (int j = 0; j < n; j++) {
                if (!done[j])
                    continue;
                long long lane = base + j;
                b->episodes[lane] += 1;
                b->return_sum[lane] += seg_return[j];
                seg_return[j] = 0.0;
                segstep[j] = 0;
                restart_lane(b, lane, seed, (unsigned long long)t + 1, use_hash);
            }
        }
    }
}

static int parse_count(const char *s, long long *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || v <= 0)
        return -1;
    *out = v;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: ref_cartpole [--envs N] [--steps T] [--seed S] [--hash] [--repeat R]\n");
}

int main(int argc, char **argv)
{
    long long envs = 2048, steps = 10000, repeat = 1;
    unsigned long long seed = 0;
    int use_hash = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--hash")) {
            use_hash = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (i + 1 < argc && !strcmp(a, "--seed")) {
            char *end;
            seed = strtoull(argv[++i], &end, 0);
            if (*end) {
                fprintf(stderr, "ref_cartpole: bad seed '%s'\n", argv[i]);
                return 2;
            }
        } else if (i + 1 < argc && (!strcmp(a, "--envs") || !strcmp(a, "--steps") || !strcmp(a, "--repeat"))) {
            long long *dst = a[2] == 'e' ? &envs : a[2] == 's' ? &steps : &repeat;
            if (parse_count(argv[++i], dst) < 0) {
                fprintf(stderr, "ref_cartpole: %s needs a positive integer, not '%s'\n", a, argv[i]);
                return 2;
            }
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (envs > 0xffffffffll) {
        fprintf(stderr, "ref_cartpole: at most 2^32 environments (the lane is 32 bits of the key)\n");
        return 2;
    }

    batch b = {.n = envs};
    size_t nf = (size_t)envs;
    b.x = malloc(nf * sizeof *b.x);
    b.x_dot = malloc(nf * sizeof *b.x_dot);
    b.theta = malloc(nf * sizeof *b.theta);
    b.theta_dot = malloc(nf * sizeof *b.theta_dot);
    b.segstep = malloc(nf * sizeof *b.segstep);
    b.seg_return = malloc(nf * sizeof *b.seg_return);
    b.episodes = malloc(nf * sizeof *b.episodes);
    b.return_sum = malloc(nf * sizeof *b.return_sum);
    if (!b.x || !b.x_dot || !b.theta || !b.theta_dot || !b.segstep || !b.seg_return || !b.episodes ||
        !b.return_sum) {
        fprintf(stderr, "ref_cartpole: out of memory\n");
        return 1;
    }

    double best_ms = 0;
    for (long long r = 0; r < repeat; r++) {
        double t0 = ref_now_ms();
        rollout(&b, seed, steps, use_hash);
        double ms = ref_now_ms() - t0;
        if (r == 0 || ms < best_ms)
            best_ms = ms;
    }

    long long episodes = 0;
    double return_sum = 0;
    for (long long i = 0; i < envs; i++) {
        episodes += b.episodes[i];
        return_sum += b.return_sum[i];
    }
    uint64_t h = 0xcbf29ce484222325ull;
    h = ref_fnv1a(h, b.x, nf * sizeof(float), sizeof(float));
    h = ref_fnv1a(h, b.x_dot, nf * sizeof(float), sizeof(float));
    h = ref_fnv1a(h, b.theta, nf * sizeof(float), sizeof(float));
    h = ref_fnv1a(h, b.theta_dot, nf * sizeof(float), sizeof(float));
    h = ref_fnv1a(h, b.episodes, nf * sizeof(long long), sizeof(long long));

    char mean[64];
    if (episodes > 0)
        snprintf(mean, sizeof mean, "%.17g", return_sum / (double)episodes);
    else
        snprintf(mean, sizeof mean, "null");
    printf("{\"impl\":\"reference\",\"rng\":\"%s\",\"envs\":%lld,\"steps\":%lld,\"run_ms\":%.3f,"
           "\"env_steps_per_sec\":%.6g,\"episodes\":%lld,\"mean_return\":%s,\"checksum\":\"%016llx\"}\n",
           use_hash ? "hash" : "philox", envs, steps, best_ms, (double)envs * (double)steps / (best_ms * 1e-3),
           episodes, mean, (unsigned long long)h);

    free(b.x);
    free(b.x_dot);
    free(b.theta);
    free(b.theta_dot);
    free(b.segstep);
    free(b.seg_return);
    free(b.episodes);
    free(b.return_sum);
    return 0;
}
