/* The timing driver of the benchmark suite (bench/bench.py runs it): one
 * configuration, opened through the public API (cartsim.h), timed as the
 * median of repeated rollouts after a warm-up, and printed as one JSON line.
 *
 *   rollout_bench [--env NAME|PATH] [--envs N] [--steps T] [--fusion F] [--unroll U]
 *                 [--threads K] [--dtype f32|f64] [--math exact|fast] [--backend B] [--seed S]
 *                 [--chunk C] [--step-api] [--repeat R] [--cold] [--target-ms MS]
 *
 * --chunk C splits the rollout into calls of C steps: each call is one trip
 * from the host into the compiled code and back (the worker threads woken,
 * the state loaded from memory into a block and stored again), the CPU's
 * counterpart of a kernel launch. With C = U it is the paper's XLA loop, one
 * launch (set) per scan iteration of U unrolled steps; without --chunk the
 * whole rollout is one call (persistent). The trajectories do not depend on
 * the chunking: the checksum of the last repeat says so.
 *
 * --step-api steps with cs_env_step and random actions drawn on the host
 * before the timing (int32 for discrete actions, uniform in the bounds for
 * boxes), the way Gymnasium's and EnvPool's step() are driven.
 *
 * Every handle compiles untiered (cs_config.tier false): the optimized kernel
 * runs from the first call. --cold first opens the configuration without the
 * kernel cache and reports that compile time apart (cold_compile_ms), and
 * the tiered compile's time to its quick kernel (quick_compile_ms);
 * compile_ms is then a start from the cache, and second_open_ms a second handle's start while the first is
 * alive. Each repeat resets (untimed) and times the rollout alone.
 *
 * --target-ms MS lengthens the timed runs, when the warm-up run of --steps
 * took less, to about MS milliseconds each (the steps reported are the ones
 * timed): sweeps over sizes then give every point a similar run time.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cartsim.h"

#define MAX_REPEAT 64

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* JSON string contents: quotes, backslashes and control characters escaped. */
static void json_string(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static int fail(const char *what, cs_env *env)
{
    printf("{\"error\": ");
    if (env) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s: %s", what, cs_env_error(env));
        json_string(msg);
    } else {
        json_string(what);
    }
    printf("}\n");
    cs_env_close(env);
    return 1;
}

/* xorshift64*: the host's random actions in --step-api mode. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

/* --step-api draws ACTION_POOL batches of actions before the timing and
 * steps through them in turn, so that the figure is cs_env_step's alone, as
 * bench/peers.py's Python peers step through a pool of NumPy arrays. */
enum { ACTION_POOL = 64 };

typedef struct {
    int64_t steps, chunk;
    bool step_api;
    uint64_t seed;
    cs_env_info info;
    void *actions;          /* ACTION_POOL batches of action_bytes */
    size_t action_bytes;
    uint64_t host_rng;
} plan;

/* Uniformly random actions: int32 for discrete actions, uniform in the
 * bounds for boxes ([action_dim][num_envs] floats). */
static void draw_actions(plan *p, void *batch)
{
    int64_t n = p->info.num_envs;
    if (p->info.discrete) {
        int32_t *a = batch;
        for (int64_t i = 0; i < n; i++)
            a[i] = (int32_t)((rng_next(&p->host_rng) >> 33) % p->info.n_actions);
        return;
    }
    float *a = batch;
    for (unsigned k = 0; k < p->info.action_dim; k++) {
        double lo = p->info.action_low[k], hi = p->info.action_high[k];
        for (int64_t i = 0; i < n; i++)
            a[k * n + i] = (float)(lo + (hi - lo) * ((rng_next(&p->host_rng) >> 11) * 0x1p-53));
    }
}

/* One timed rollout from a fresh reset; returns its milliseconds or -1. */
static double run_once(cs_env *env, plan *p, cs_rollout_stats *last)
{
    if (cs_env_reset(env, p->seed) != CS_OK)
        return -1;
    memset(last, 0, sizeof *last);
    double start = now_ms();
    if (p->step_api) {
        for (int64_t t = 0; t < p->steps; t++)
            if (cs_env_step(env, (char *)p->actions + (size_t)(t % ACTION_POOL) * p->action_bytes) != CS_OK)
                return -1;
    } else {
        int64_t chunk = p->chunk > 0 ? p->chunk : p->steps;
        for (int64_t done = 0; done < p->steps; done += chunk) {
            int64_t c = p->steps - done < chunk ? p->steps - done : chunk;
            if (cs_env_rollout(env, c, NULL) != CS_OK)
                return -1;
        }
    }
    double ms = now_ms() - start;
    /* The checksum of the state reached, untimed: a rollout of no steps
     * computes the statistics (a byte-wise hash of every lane) and moves
     * nothing. */
    if (!p->step_api && cs_env_rollout(env, 0, last) != CS_OK)
        return -1;
    return ms;
}

static int parse_int(const char *s, long long lo, long long *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || v < lo)
        return -1;
    *out = v;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: rollout_bench [--env NAME|PATH] [--envs N] [--steps T] [--fusion none|rules|full]\n"
               "                     [--unroll U] [--threads K] [--dtype f32|f64] [--math exact|fast]\n"
               "                     [--backend cpu|cuda|interp|auto]\n"
               "                     [--seed S] [--chunk C] [--step-api] [--repeat R] [--cold] [--target-ms MS]\n");
}

int main(int argc, char **argv)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.tier = false;   /* the timed kernel is the optimized one, from the first call */
    cfg.env = "cartpole";
    cfg.num_envs = 2048;
    cfg.threads = 1;
    plan p = {.steps = 10000, .seed = 1, .host_rng = 0x9e3779b97f4a7c15ull};
    long long repeat = 5, v, target_ms = 0;
    bool cold = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--cold")) {
            cold = true;
            continue;
        } else if (!strcmp(a, "--step-api")) {
            p.step_api = true;
            continue;
        }
        if (!val) {
            usage(stderr);
            return 2;
        }
        i++;
        if (!strcmp(a, "--env")) {
            cfg.env = val;
        } else if (!strcmp(a, "--fusion")) {
            cfg.fusion = !strcmp(val, "none") ? CS_FUSION_NONE : !strcmp(val, "rules") ? CS_FUSION_RULES
                       : !strcmp(val, "full") ? CS_FUSION_FULL : CS_FUSION_COUNT;
            if (cfg.fusion == CS_FUSION_COUNT)
                return fprintf(stderr, "rollout_bench: unknown fusion '%s'\n", val), 2;
        } else if (!strcmp(a, "--backend")) {
            cfg.backend = !strcmp(val, "auto") ? CS_BACKEND_AUTO : !strcmp(val, "cpu") ? CS_BACKEND_CPU
                        : !strcmp(val, "cuda") ? CS_BACKEND_CUDA : !strcmp(val, "interp") ? CS_BACKEND_INTERP
                        : CS_BACKEND_COUNT;
            if (cfg.backend == CS_BACKEND_COUNT)
                return fprintf(stderr, "rollout_bench: unknown backend '%s'\n", val), 2;
        } else if (!strcmp(a, "--math")) {
            if (cs_config_set(&cfg, "math", val, NULL, 0) != CS_OK)
                return fprintf(stderr, "rollout_bench: unknown math '%s'\n", val), 2;
        } else if (!strcmp(a, "--dtype")) {
            if (strcmp(val, "f32") && strcmp(val, "f64"))
                return fprintf(stderr, "rollout_bench: unknown dtype '%s'\n", val), 2;
            cfg.dtype = val[1] == '3' ? CS_DTYPE_F32 : CS_DTYPE_F64;
        } else if (!strcmp(a, "--envs") && !parse_int(val, 1, &v)) {
            cfg.num_envs = v;
        } else if (!strcmp(a, "--steps") && !parse_int(val, 1, &v)) {
            p.steps = v;
        } else if (!strcmp(a, "--unroll") && !parse_int(val, 1, &v) && v <= 1024) {
            cfg.unroll = (int)v;
        } else if (!strcmp(a, "--threads") && !parse_int(val, 0, &v) && v <= 256) {
            cfg.threads = (int)v;
        } else if (!strcmp(a, "--chunk") && !parse_int(val, 0, &v)) {
            p.chunk = v;
        } else if (!strcmp(a, "--repeat") && !parse_int(val, 1, &v) && v <= MAX_REPEAT) {
            repeat = v;
        } else if (!strcmp(a, "--target-ms") && !parse_int(val, 0, &v)) {
            target_ms = v;
        } else if (!strcmp(a, "--seed") && !parse_int(val, 0, &v)) {
            p.seed = (uint64_t)v;
        } else {
            fprintf(stderr, "rollout_bench: bad option %s %s\n", a, val);
            usage(stderr);
            return 2;
        }
    }

    double cold_ms = NAN, quick_ms = NAN;
    cs_env *env = NULL;
    /* Untiered, then tiered: the time to the first result, the quick
     * kernel's compile (its optimized build stopped by the close). */
    for (int tier = 0; cold && tier < 2; tier++) {
        cs_config c = cfg;
        c.no_cache = true;
        c.tier = tier;
        if (cs_env_open(&c, &env) != CS_OK)
            return fail(tier ? "open (cold, tiered)" : "open (cold)", env);
        cs_env_get_info(env, &p.info);
        *(tier ? &quick_ms : &cold_ms) = p.info.compile_ms;
        cs_env_close(env);
    }
    /* The second open of an entry missing from the cache compiles and stores
     * it; open again so that compile_ms is a start from the cache. */
    for (int tries = 0; tries < 2; tries++) {
        if (cs_env_open(&cfg, &env) != CS_OK)
            return fail("open", env);
        cs_env_get_info(env, &p.info);
        if (p.info.cache_hit || p.info.backend == CS_BACKEND_INTERP || tries == 1)
            break;
        cs_env_close(env);
    }
    /* A second handle of the same kernel while the first is alive (Python's
     * loop of environments of one kind): a start from the cache as well. */
    double second_ms = NAN;
    bool second_hit = false;
    cs_env *second = NULL;
    if (cs_env_open(&cfg, &second) == CS_OK) {
        cs_env_info info2;
        cs_env_get_info(second, &info2);
        second_ms = info2.compile_ms;
        second_hit = info2.cache_hit;
    }
    cs_env_close(second);
    size_t per_env = p.info.discrete ? sizeof(int32_t) : p.info.action_dim * sizeof(float);
    p.action_bytes = (size_t)p.info.num_envs * (per_env ? per_env : 1);
    p.actions = calloc(ACTION_POOL, p.action_bytes);
    if (!p.actions)
        return fail("out of memory", env);
    for (int k = 0; k < ACTION_POOL; k++)
        draw_actions(&p, (char *)p.actions + (size_t)k * p.action_bytes);

    cs_rollout_stats stats;
    double warm = run_once(env, &p, &stats);   /* warm-up: pages touched, caches and predictors trained */
    if (warm < 0)
        return fail("warm-up", env);
    /* Grow the warm-up until it lasts a quarter of the target, then scale. */
    double cap = 4e9 / (double)p.info.num_envs;
    while (target_ms > 0 && p.chunk == 0 && warm < target_ms / 4.0 && p.steps < cap) {
        double scale = target_ms / 4.0 / (warm > 0.01 ? warm : 0.01) * 1.25;
        scale = scale > 64 ? 64 : scale < 2 ? 2 : scale;
        p.steps = (int64_t)((double)p.steps * scale < cap ? (double)p.steps * scale : cap);
        if ((warm = run_once(env, &p, &stats)) < 0)
            return fail("warm-up", env);
    }
    if (target_ms > 0 && p.chunk == 0 && warm < target_ms) {
        double steps = (double)p.steps * target_ms / warm;
        p.steps = (int64_t)(steps < cap ? steps : cap > (double)p.steps ? cap : (double)p.steps);
    }
    double ms[MAX_REPEAT], sorted[MAX_REPEAT];
    for (long long r = 0; r < repeat; r++)
        if ((ms[r] = run_once(env, &p, &stats)) < 0)
            return fail("rollout", env);
    memcpy(sorted, ms, sizeof(double) * (size_t)repeat);
    qsort(sorted, (size_t)repeat, sizeof(double), cmp_double);
    double median = repeat % 2 ? sorted[repeat / 2] : (sorted[repeat / 2 - 1] + sorted[repeat / 2]) / 2;

    /* Launches: kernel passes, per call: one per unroll steps under fusion
     * full (the library's launches with cs_config.persistent false), each
     * kernel every step otherwise; the interpreter, one per step. */
    int64_t chunk = p.step_api ? 1 : p.chunk > 0 ? p.chunk : p.steps;
    int64_t calls = (p.steps + chunk - 1) / chunk, launches = 0;
    for (int64_t done = 0; done < p.steps; done += chunk) {
        int64_t c = p.steps - done < chunk ? p.steps - done : chunk;
        if (p.info.backend == CS_BACKEND_INTERP)
            launches += c;
        else if (p.info.fusion == CS_FUSION_FULL && !p.step_api)
            launches += (c + p.info.unroll - 1) / p.info.unroll;
        else
            launches += c * p.info.kernels_per_step;
    }

    double env_steps = (double)p.info.num_envs * (double)p.steps;
    printf("{\"env\": ");
    json_string(p.info.name);
    printf(", \"math\": \"%s\"", p.info.math == CS_MATH_FAST ? "fast" : "exact");
    printf(", \"backend\": \"%s\", \"fusion\": \"%s\", \"dtype\": \"%s\", \"envs\": %lld, \"steps\": %lld, "
           "\"unroll\": %d, \"threads\": %d, \"mode\": \"%s\", \"chunk\": %lld, \"calls\": %lld, "
           "\"kernels_per_step\": %d, \"launches\": %lld, ",
           cs_backend_name(p.info.backend), cs_fusion_name(p.info.fusion), p.info.dtype == CS_DTYPE_F32 ? "f32" : "f64",
           (long long)p.info.num_envs, (long long)p.steps, p.info.unroll, p.info.threads,
           p.step_api ? "step_api" : p.chunk > 0 && p.chunk < p.steps ? "chunked" : "persistent", (long long)chunk,
           (long long)calls, p.info.kernels_per_step, (long long)launches);
    if (isnan(cold_ms))
        printf("\"cold_compile_ms\": null, \"quick_compile_ms\": null, ");
    else
        printf("\"cold_compile_ms\": %.3f, \"quick_compile_ms\": %.3f, ", cold_ms, quick_ms);
    printf("\"compile_ms\": %.3f, \"cache_hit\": %s, ", p.info.compile_ms, p.info.cache_hit ? "true" : "false");
    if (isnan(second_ms))
        printf("\"second_open_ms\": null, ");
    else
        printf("\"second_open_ms\": %.3f, \"second_cache_hit\": %s, ", second_ms, second_hit ? "true" : "false");
    printf("\"runs_ms\": [");
    for (long long r = 0; r < repeat; r++)
        printf("%s%.4f", r ? ", " : "", ms[r]);
    printf("], \"median_ms\": %.4f, \"env_steps_per_sec\": %.6g", median, env_steps / (median * 1e-3));
    if (!p.step_api)
        printf(", \"checksum\": \"%016llx\"", (unsigned long long)stats.checksum);
    printf(", \"notice\": ");
    json_string(p.info.notice);
    printf("}\n");
    free(p.actions);
    cs_env_close(env);
    return 0;
}
