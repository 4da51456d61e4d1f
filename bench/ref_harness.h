/* What every hand-written reference loop (bench/ref_*.c) shares besides its
 * physics: the command line, the clock, the checksum's FNV-1a and the JSON
 * line, so that bench.py drives them all the same way:
 *
 *   ref_X [--envs N] [--steps T] [--seed S] [--repeat R]
 *
 * prints {"impl":"reference","env":...,"env_steps_per_sec":...,...}. Each
 * reference is built with the cpu backend's flags (jit/backend_cpu.c:
 * -O3 -march=native -ffp-contract=off -fno-math-errno -fno-trapping-math)
 * and follows ref_cartpole.c's scheme: f32, blocks of 256 lanes kept in
 * L1 for the whole rollout, one Philox block per lane for four steps' draws
 * (jit/rng.h), a branch-free vectorizable step, the resets in a scalar pass.
 * That rollout and main() are bench/ref_rollout.h, which a reference
 * includes after its reset of one lane and its step over a block.
 * ref_cartpole.c, the first, keeps its own rollout and main() (--hash,
 * -DBLOCK) and takes only the clock and the checksum's FNV-1a from here;
 * everything here is static inline so that it may. */
#ifndef REF_HARNESS_H
#define REF_HARNESS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* c ? a : b through a bit mask, for the step loops: a `?:` lets GCC 12
 * branch and then give up on the loop ("control flow in loop"). */
static inline float ref_pick(int c, float a, float b)
{
    union { float f; unsigned int u; } x = {a}, y = {b};
    unsigned int m = 0u - (unsigned int)c;
    x.u = (x.u & m) | (y.u & ~m);
    return x.f;
}

static inline double ref_pick64(int c, double a, double b)
{
    union { double f; unsigned long long u; } x = {a}, y = {b};
    unsigned long long m = 0ull - (unsigned long long)c;
    x.u = (x.u & m) | (y.u & ~m);
    return x.f;
}

/* A step's episode bookkeeping for lane j, in the step loops: its step
 * count, and whether its episode is over (terminated, or max_steps taken),
 * into done[j]; returns that. */
static inline int ref_episode_over(int *restrict segstep, int *restrict done, int j, int terminated, int max_steps)
{
    segstep[j] += 1;
    int over = terminated | (segstep[j] >= max_steps);
    done[j] = over;
    return over;
}

typedef struct {
    long long envs, steps, repeat;
    unsigned long long seed;
} ref_args;

static inline double ref_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* FNV-1a 64 over each element's bytes, little-endian first whatever the host. */
static inline uint64_t ref_fnv1a(uint64_t h, const void *data, size_t size, size_t elem)
{
    const unsigned char *p = data;
    int little = 1;
    little = *(const unsigned char *)&little;
    for (size_t i = 0; i < size; i += elem)
        for (size_t k = 0; k < elem; k++) {
            h ^= p[i + (little ? k : elem - 1 - k)];
            h *= 0x100000001b3ull;
        }
    return h;
}

/* 0: parsed; otherwise the exit status (0 after --help, 2 on bad input). */
static inline int ref_parse(const char *name, int argc, char **argv, ref_args *a, int *status)
{
    *a = (ref_args){2048, 10000, 1, 0};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            printf("usage: %s [--envs N] [--steps T] [--seed S] [--repeat R]\n", name);
            *status = 0;
            return -1;
        }
        char *end;
        if (i + 1 < argc && !strcmp(s, "--seed")) {
            a->seed = strtoull(argv[++i], &end, 0);
            if (*end || !*argv[i])
                goto bad;
        } else if (i + 1 < argc && (!strcmp(s, "--envs") || !strcmp(s, "--steps") || !strcmp(s, "--repeat"))) {
            long long *dst = s[2] == 'e' ? &a->envs : s[2] == 's' ? &a->steps : &a->repeat;
            *dst = strtoll(argv[++i], &end, 10);
            if (*end || !*argv[i] || *dst <= 0)
                goto bad;
        } else {
            fprintf(stderr, "%s: unknown argument '%s' (see --help)\n", name, s);
            *status = 2;
            return -1;
        }
        continue;
    bad:
        fprintf(stderr, "%s: %s needs a positive integer, not '%s'\n", name, s, argv[i]);
        *status = 2;
        return -1;
    }
    if (a->envs > 0xffffffffll) {
        fprintf(stderr, "%s: at most 2^32 environments (the lane is 32 bits of the key)\n", name);
        *status = 2;
        return -1;
    }
    return 0;
}

static inline void ref_print(const char *env, const ref_args *a, double best_ms, long long episodes, double return_sum,
                      uint64_t checksum)
{
    char mean[64];
    if (episodes > 0)
        snprintf(mean, sizeof mean, "%.17g", return_sum / (double)episodes);
    else
        snprintf(mean, sizeof mean, "null");
    printf("{\"impl\":\"reference\",\"env\":\"%s\",\"rng\":\"philox\",\"envs\":%lld,\"steps\":%lld,\"run_ms\":%.3f,"
           "\"env_steps_per_sec\":%.6g,\"episodes\":%lld,\"mean_return\":%s,\"checksum\":\"%016llx\"}\n",
           env, a->envs, a->steps, best_ms, (double)a->envs * (double)a->steps / (best_ms * 1e-3), episodes, mean,
           (unsigned long long)checksum);
}

#define REF_BLOCK 256
#define REF_MAX_VARS 4
#define REF_MAX_INT_VARS 10

/* The lanes of a rollout: the environment's state variables, one array each
 * (floats, then ints for the grid games), and every lane's episode
 * bookkeeping. */
typedef struct ref_batch {
    long long n;
    int vars, int_vars;
    float *var[REF_MAX_VARS];
    int *int_var[REF_MAX_INT_VARS];
    int *segstep;
    double *seg_return, *return_sum;
    long long *episodes;
} ref_batch;

static inline void ref_batch_free(ref_batch *b)
{
    for (int k = 0; k < b->vars; k++)
        free(b->var[k]);
    for (int k = 0; k < b->int_vars; k++)
        free(b->int_var[k]);
    free(b->segstep);
    free(b->seg_return);
    free(b->return_sum);
    free(b->episodes);
}

#endif
