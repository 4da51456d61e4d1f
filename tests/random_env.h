/* A generator of random valid .env programs for differential testing
 * (issue 16, 7): elementwise expressions over states, params and the action
 * with every operator and builtin of the language. Header-only, so that the
 * Criterion suite (tests/test_differential.c) and the libFuzzer target
 * (tests/fuzz/fuzz_differential.c) share it without a library of their own.
 *
 * A program is a pure function of its seed. Values are kept mostly finite
 * (clip around the state updates); what still overflows restarts its
 * environment, which every backend must do alike. What audits found is in
 * the mix (issue 32): constants past float's range (infinite in f32, as
 * parameters, in expressions and as the bounds of a box action), step draws
 * (uniform() in the step block), and observations that are expressions, NaN
 * ones among them, whose bits must agree too. The most draws a stream may
 * have (65536) is tests/test_compile.c's: such a kernel takes minutes to
 * compile. */
#ifndef CS_RANDOM_ENV_H
#define CS_RANDOM_ENV_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cartsim.h"
#include "splitmix.h"

typedef struct {
    uint64_t s;
    char *out;
    size_t len, cap;
    int n_states, n_params;
    int discrete;   /* the action: discrete 3 (an int), else a box */
    bool in_step;   /* writing the step block: uniform() may appear */
    bool in_observe;   /* writing an observation: no action */
} random_env;

static uint64_t random_env_next(random_env *g)
{
    return splitmix_next(&g->s);
}

static int random_env_below(random_env *g, int n) { return (int)(random_env_next(g) % (uint64_t)n); }

static void random_env_put(random_env *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void random_env_put(random_env *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(g->out + g->len, g->cap - g->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        g->len = g->len + (size_t)n < g->cap ? g->len + (size_t)n : g->cap - 1;
}

/* A literal written the way a person would: a few digits, sometimes negative. */
static void random_env_number(random_env *g)
{
    static const char *const numbers[] = {"0.5", "1.0", "2.0", "-1.5", "0.25", "3.0", "0.1", "-0.75", "1.25", "7.0",
                                          "0.001", "100.0", "-2.0", "0.0", "1e39", "-3.5e38"};
    random_env_put(g, "%s", numbers[random_env_below(g, sizeof numbers / sizeof numbers[0])]);
}

static void random_env_real(random_env *g, int depth);

static void random_env_leaf(random_env *g)
{
    if (g->in_step && random_env_below(g, 12) == 0) {
        random_env_put(g, "uniform(");
        random_env_number(g);
        random_env_put(g, ", ");
        random_env_number(g);
        random_env_put(g, ")");
        return;
    }
    switch (random_env_below(g, 5)) {
    case 0:
    case 1:
        random_env_put(g, "s%d", random_env_below(g, g->n_states));
        break;
    case 2:
        random_env_put(g, "p%d", random_env_below(g, g->n_params));
        break;
    case 3:
        if (g->in_observe)
            random_env_put(g, "s%d", random_env_below(g, g->n_states));
        else
            random_env_put(g, "action");
        break;
    default:
        random_env_number(g);
        break;
    }
}

/* A bool: every comparison, and, or, not, ==/!= between bools. */
static void random_env_bool(random_env *g, int depth)
{
    static const char *const cmp[] = {"<", "<=", ">", ">=", "==", "!="};
    int pick = depth <= 0 ? 0 : random_env_below(g, 6);
    if (pick <= 2) {
        random_env_put(g, "(");
        random_env_real(g, depth - 1);
        random_env_put(g, " %s ", cmp[random_env_below(g, 6)]);
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
    } else if (pick == 3) {
        random_env_put(g, "(not ");
        random_env_bool(g, depth - 1);
        random_env_put(g, ")");
    } else {
        static const char *const logic[] = {"and", "or", "==", "!="};
        random_env_put(g, "(");
        random_env_bool(g, depth - 1);
        random_env_put(g, " %s ", logic[random_env_below(g, 4)]);
        random_env_bool(g, depth - 1);
        random_env_put(g, ")");
    }
}

/* A real: every arithmetic operator and math builtin. */
static void random_env_real(random_env *g, int depth)
{
    static const char *const unary[] = {"sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "floor", "abs", "f32"};
    static const char *const binary_fn[] = {"atan2", "pow", "fmod", "min", "max"};
    static const char *const binary_op[] = {"+", "-", "*", "/", "%"};
    if (depth <= 0 || random_env_below(g, 8) == 0) {
        random_env_leaf(g);
        return;
    }
    switch (random_env_below(g, 7)) {
    case 0:
        random_env_put(g, "%s(", unary[random_env_below(g, sizeof unary / sizeof unary[0])]);
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
        break;
    case 1:
        random_env_put(g, "%s(", binary_fn[random_env_below(g, sizeof binary_fn / sizeof binary_fn[0])]);
        random_env_real(g, depth - 1);
        random_env_put(g, ", ");
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
        break;
    case 2:
    case 3:
        random_env_put(g, "(");
        random_env_real(g, depth - 1);
        random_env_put(g, " %s ", binary_op[random_env_below(g, sizeof binary_op / sizeof binary_op[0])]);
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
        break;
    case 4:
        random_env_put(g, "(-");
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
        break;
    case 5:
        random_env_put(g, "clip(");
        random_env_real(g, depth - 1);
        random_env_put(g, ", ");
        random_env_number(g);
        random_env_put(g, ", ");
        random_env_number(g);
        random_env_put(g, ")");
        break;
    default:
        random_env_put(g, "(");
        random_env_bool(g, depth - 1);
        random_env_put(g, " ? ");
        random_env_real(g, depth - 1);
        random_env_put(g, " : ");
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
        break;
    }
}

/* Writes the program of `seed` into out (NUL-terminated); its length. */
static size_t random_env_program(uint64_t seed, char *out, size_t cap)
{
    random_env g = {.s = seed, .out = out, .cap = cap};
    out[0] = '\0';
    g.n_states = 1 + random_env_below(&g, 4);
    g.n_params = 1 + random_env_below(&g, 3);
    g.discrete = random_env_below(&g, 2);
    int depth = 2 + random_env_below(&g, 3);
    random_env_put(&g, "env random_%llu \"Random-v0\"\nmax_steps %d\n", (unsigned long long)(seed % 1000000),
                   10 + random_env_below(&g, 40));
    for (int k = 0; k < g.n_params; k++) {
        random_env_put(&g, "param p%d = ", k);
        random_env_number(&g);
        random_env_put(&g, "\n");
    }
    random_env_put(&g, "state");
    for (int k = 0; k < g.n_states; k++)
        random_env_put(&g, "%s s%d", k ? "," : "", k);
    random_env_put(&g, "\naction %s\nobserve",
                   g.discrete ? "discrete 3" : random_env_below(&g, 6) ? "box(-1, 1)" : "box(-1e39, 1e39)");
    for (int k = 0; k < g.n_states; k++)
        random_env_put(&g, "%s s%d", k ? "," : "", k);
    /* one observed expression, a NaN-maker one time in three */
    int nan_maker = random_env_below(&g, 3) == 0;
    random_env_put(&g, ", ");
    if (nan_maker)
        random_env_put(&g, "(s%d * 0) / (s%d * 0)", random_env_below(&g, g.n_states), random_env_below(&g, g.n_states));
    else {
        g.in_observe = true;
        random_env_real(&g, 2);
        g.in_observe = false;
    }
    random_env_put(&g, "\nreset {\n");
    for (int k = 0; k < g.n_states; k++)
        random_env_put(&g, "    s%d = uniform(-1, 1)\n", k);
    random_env_put(&g, "}\nstep {\n");
    g.in_step = true;
    /* Bounded updates: the interesting arithmetic happens inside. */
    for (int k = 0; k < g.n_states; k++) {
        random_env_put(&g, "    s%d' = clip(", k);
        random_env_real(&g, depth);
        random_env_put(&g, ", -10, 10)\n");
    }
    /* Rare enough that episodes run for a while. */
    random_env_put(&g, "    terminated = abs(s%d') > 9.0 and ", random_env_below(&g, g.n_states));
    random_env_bool(&g, 2);
    random_env_put(&g, "\n    reward = ");
    random_env_real(&g, depth);
    random_env_put(&g, "\n}\n");
    return g.len;
}

#define RANDOM_ENV_MAX_ENVS 64
#define RANDOM_ENV_MAX_OBS 5   /* the states (4 at most) and one observed expression */

/* What a backend made of a program: a rollout's statistics, then the
 * observations and rewards of a few steps after it. */
typedef struct {
    cs_rollout_stats stats;
    int64_t n_envs;
    unsigned n_obs;
    float obs[RANDOM_ENV_MAX_OBS * RANDOM_ENV_MAX_ENVS];
    double rewards[RANDOM_ENV_MAX_ENVS];
} random_env_result;

/* Runs the program at `path` on a backend: `envs` environments (at most
 * RANDOM_ENV_MAX_ENVS) from reset seed `seed`, a rollout of `steps`, then
 * three steps with fixed actions. false, and why, when it did not run. */
static inline bool random_env_run(const char *path, cs_backend backend, cs_dtype dtype, int64_t envs, uint64_t seed,
                                  int64_t steps, const volatile sig_atomic_t *interrupt, random_env_result *r,
                                  char *why, size_t size)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = path;
    cfg.num_envs = envs;
    cfg.backend = backend;
    cfg.dtype = dtype;
    cfg.threads = 1;
    cfg.no_cache = true;   /* throwaway kernels: not the cache's business */
    cfg.interrupt = interrupt;
    memset(r, 0, sizeof *r);
    cs_env *env = NULL;
    cs_env_info info;
    cs_status st = cs_env_open(&cfg, &env);
    if (st == CS_OK && (st = cs_env_get_info(env, &info)) == CS_OK &&
        (info.obs_dim > RANDOM_ENV_MAX_OBS || envs > RANDOM_ENV_MAX_ENVS || (!info.discrete && info.action_dim != 1)))
        st = CS_ERR_LIMIT;
    if (st == CS_OK && (st = cs_env_reset(env, seed)) == CS_OK)
        st = cs_env_rollout(env, steps, &r->stats);
    for (int k = 0; k < 3 && st == CS_OK; k++) {
        int32_t ints[RANDOM_ENV_MAX_ENVS];
        float reals[RANDOM_ENV_MAX_ENVS];
        for (int64_t i = 0; i < envs; i++) {
            ints[i] = (int32_t)((i + k) % 3);
            reals[i] = (float)((i + k) % 5 - 2) * 0.25f;
        }
        st = cs_env_step(env, info.discrete ? (const void *)ints : (const void *)reals);
    }
    if (st == CS_OK) {
        r->n_envs = envs;
        r->n_obs = info.obs_dim;
        memcpy(r->obs, cs_env_obs(env), sizeof(float) * info.obs_dim * (size_t)envs);
        memcpy(r->rewards, cs_env_rewards(env), sizeof(double) * (size_t)envs);
    } else {
        snprintf(why, size, "%s on %s: %s", cs_status_string(st), cs_backend_name(backend),
                 env ? cs_env_error(env) : "out of memory");
    }
    cs_env_close(env);
    return st == CS_OK;
}

/* Whether the cpu backend's and the interpreter's results of one program
 * differ, for the two differential harnesses: in the checksum, the
 * episodes, the non-finite restarts or the mean return, or in any bit of
 * the observations and rewards after it (NaN included: every backend gives
 * out one NaN). If they differ, what each gave, into why. */
static inline bool random_env_results_differ(const random_env_result *a, const random_env_result *b, char *why,
                                             size_t size)
{
    const cs_rollout_stats *cpu = &a->stats, *interp = &b->stats;
    if (cpu->checksum != interp->checksum || cpu->episodes != interp->episodes ||
        cpu->nonfinite != interp->nonfinite || memcmp(&cpu->mean_return, &interp->mean_return, sizeof(double)) != 0) {
        snprintf(why, size,
                 "cpu %016llx (%lld episodes, %lld non-finite, mean return %a), interpreter %016llx (%lld, %lld, %a)",
                 (unsigned long long)cpu->checksum, (long long)cpu->episodes, (long long)cpu->nonfinite,
                 cpu->mean_return, (unsigned long long)interp->checksum, (long long)interp->episodes,
                 (long long)interp->nonfinite, interp->mean_return);
        return true;
    }
    for (unsigned k = 0; k < a->n_obs * (unsigned)a->n_envs; k++) {
        uint32_t x, y;
        memcpy(&x, &a->obs[k], 4);
        memcpy(&y, &b->obs[k], 4);
        if (x != y) {
            snprintf(why, size, "observation %u of environment %u: cpu %08x, interpreter %08x", k / (unsigned)a->n_envs,
                     k % (unsigned)a->n_envs, x, y);
            return true;
        }
    }
    for (int64_t i = 0; i < a->n_envs; i++)
        if (memcmp(&a->rewards[i], &b->rewards[i], sizeof(double)) != 0) {
            snprintf(why, size, "reward of environment %lld: cpu %a, interpreter %a", (long long)i, a->rewards[i],
                     b->rewards[i]);
            return true;
        }
    return false;
}

#endif
