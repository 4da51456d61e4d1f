/* Dense policies as array ops (agents/dense.c): a layer is one PARAM array
 * of its weights and biases, multiplied and summed in loops, so the
 * generated code does not grow with the policy; the array parameters read
 * per lane or shared, the same bits on the cpu backend and the
 * interpreter; and an observation of 400 elements (Breakout-MinAtar) has
 * a policy. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cartsim.h"

static void config(cs_config *cfg, const char *env_name, const char *policy, int64_t n, cs_backend b, cs_dtype d)
{
    cs_config_init(cfg);
    cfg->env = env_name;
    cfg->num_envs = n;
    cfg->backend = b;
    cfg->dtype = d;
    cfg->policy = policy;
}

static cs_env *open_policy(const char *env_name, const char *policy, int64_t n, cs_backend b, cs_dtype d)
{
    cs_config cfg;
    config(&cfg, env_name, policy, n, b, d);
    cs_env *env;
    cs_status s = cs_env_open(&cfg, &env);
    cr_assert_eq(s, CS_OK, "open %s with %s: %s", env_name, policy, cs_env_error(env));
    return env;
}

static char *dump(const char *env_name, const char *policy, const char *format)
{
    cs_config cfg;
    config(&cfg, env_name, policy, 64, CS_BACKEND_CPU, CS_DTYPE_F32);
    char *text = NULL, err[512];
    cr_assert_eq(cs_dump(&cfg, NULL, format, &text, err, sizeof err), CS_OK, "dump %s of %s: %s", format, policy, err);
    return text;
}

static unsigned count_of(const char *text, const char *what)
{
    unsigned n = 0;
    for (const char *s = text; (s = strstr(s, what)); s += strlen(what))
        n++;
    return n;
}

/* Weights in [-scale, scale), deterministic, different for every slot. */
static double *some_weights(size_t count, double scale, unsigned salt)
{
    double *w = malloc(count * sizeof *w);
    cr_assert(w);
    uint64_t x = 0x9e3779b97f4a7c15ull * (salt + 1);
    for (size_t k = 0; k < count; k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        w[k] = ((double)(x >> 11) / 9007199254740992.0 * 2 - 1) * scale;
    }
    return w;
}

/* A statement per weight made mlp:256's CartPole kernel some 16 times
 * mlp:16's, and ppo:mlp:64's Catch kernel 20,000 statements: now a
 * layer is a loop nest over its PARAM array, in both dialects, and the
 * source hardly changes with the width. */
Test(dense_arrays, kernel_size_does_not_grow_with_the_hidden_width)
{
    const char *formats[] = {"c", "cuda"};
    const char *pairs[][2] = {{"mlp:16", "mlp:256"}, {"ppo:mlp:16", "ppo:mlp:256"}, {"mlp:4x4", "mlp:200x200"}};
    for (int f = 0; f < 2; f++)
        for (int k = 0; k < 3; k++) {
            char *small = dump("cartpole", pairs[k][0], formats[f]);
            char *big = dump("cartpole", pairs[k][1], formats[f]);
            size_t a = strlen(small), b = strlen(big);
            cr_expect(b < a + a / 4, "%s dialect: %s's source is %zu bytes, %s's %zu", formats[f], pairs[k][1], b,
                      pairs[k][0], a);
            /* the parameters are read in the loops, not weight by weight */
            unsigned loads = count_of(big, "params[");
            cr_expect(loads < 40, "%s dialect, %s: %u parameter loads", formats[f], pairs[k][1], loads);
            free(small);
            free(big);
        }
}

/* The dump names a layer's array by its first and last parameter slots. */
Test(dense_arrays, dump_shows_a_layer_as_one_parameter_array)
{
    char *text = dump("cartpole", "ppo:mlp:64", "text");
    cr_expect(strstr(text, "param w0..w319 (shared) : f32[64,5]"), "the actor's first layer:\n%.2000s", text);
    cr_expect(strstr(text, "param w320..w449 (shared) : f32[2,65]"), "the actor's output layer");
    free(text);
    text = dump("cartpole", "mlp:64", "text");
    cr_expect(strstr(text, "param w0..w319 : f32[64,5]"), "per-lane weights: not shared");
    free(text);
}

/* Per-lane array parameters (an ES population's policies): Breakout's
 * 400 observations through mlp:16, the cpu backend and the interpreter
 * equal to the bit, in f32 and f64. */
Test(dense_arrays, per_lane_array_parameters_agree_on_cpu_and_interp, .timeout = 300)
{
    enum { N = 20, STEPS = 60 };
    const cs_dtype dtypes[] = {CS_DTYPE_F32, CS_DTYPE_F64};
    for (int t = 0; t < 2; t++) {
        cs_env *a = open_policy("Breakout-MinAtar", "mlp:16", N, CS_BACKEND_CPU, dtypes[t]);
        cs_env *b = open_policy("Breakout-MinAtar", "mlp:16", N, CS_BACKEND_INTERP, dtypes[t]);
        unsigned nw = cs_env_num_weights(a);
        cr_assert_eq(nw, 16u * 401 + 3 * 17);
        double *w = some_weights((size_t)nw * N, 0.2, 3);
        cr_assert_eq(cs_env_set_weights(a, w), CS_OK);
        cr_assert_eq(cs_env_set_weights(b, w), CS_OK);
        cr_assert_eq(cs_env_reset(a, 9), CS_OK);
        cr_assert_eq(cs_env_reset(b, 9), CS_OK);
        cs_rollout_stats sa, sb;
        cr_assert_eq(cs_env_rollout(a, STEPS, &sa), CS_OK, "%s", cs_env_error(a));
        cr_assert_eq(cs_env_rollout(b, STEPS, &sb), CS_OK, "%s", cs_env_error(b));
        cs_env_info info;
        cr_assert_eq(cs_env_get_info(a, &info), CS_OK);
        size_t size = (size_t)info.state_dim * N;
        double *x = malloc(size * sizeof *x), *y = malloc(size * sizeof *y);
        cr_assert_eq(cs_env_get_state(a, x), CS_OK);
        cr_assert_eq(cs_env_get_state(b, y), CS_OK);
        cr_expect(memcmp(x, y, size * sizeof *x) == 0, "%s: the states differ", t ? "f64" : "f32");
        cr_expect_eq(sa.episodes, sb.episodes);
        /* the policies differ per lane: not every lane moved the same way */
        unsigned pos = 0;
        for (unsigned v = 0; v < info.n_state_vars; v++) {
            cs_state_info sv;
            cr_assert_eq(cs_env_state_info(a, v, &sv), CS_OK);
            if (!strcmp(sv.name, "pos"))
                pos = sv.first;
        }
        bool differ = false;
        for (int i = 1; i < N; i++)
            differ |= x[(size_t)pos * N + i] != x[(size_t)pos * N];
        cr_expect(differ, "every lane's paddle at the same place: the lanes' own weights unread?");
        free(x);
        free(y);
        free(w);
        cs_env_close(a);
        cs_env_close(b);
    }
}

static const void *record_of(cs_env *env, const char *name)
{
    for (unsigned k = 0; k < cs_env_record_count(env); k++) {
        cs_record r;
        cr_assert_eq(cs_env_record(env, k, &r), CS_OK, "%s", cs_env_error(env));
        if (strcmp(r.name, name) == 0)
            return r.data;
    }
    cr_assert_fail("no record named %s", name);
    return NULL;
}

/* Shared array parameters (PPO's actor-critic): Breakout's sampled actions,
 * their log-probabilities and values recorded the same to the bit on the
 * cpu backend and the interpreter. */
Test(dense_arrays, shared_array_parameters_agree_on_cpu_and_interp, .timeout = 300)
{
    enum { N = 16, STEPS = 40 };
    cs_env *a = open_policy("Breakout-MinAtar", "ppo:mlp:16", N, CS_BACKEND_CPU, CS_DTYPE_F32);
    cs_env *b = open_policy("Breakout-MinAtar", "ppo:mlp:16", N, CS_BACKEND_INTERP, CS_DTYPE_F32);
    unsigned nw = cs_env_num_weights(a);
    cr_assert_eq(nw, (16u * 401 + 3 * 17) + (16u * 401 + 17) + 1);
    double *w = some_weights(nw, 0.3, 5);
    w[nw - 1] = 0;   /* sample */
    cr_assert_eq(cs_env_set_weights(a, w), CS_OK);
    cr_assert_eq(cs_env_set_weights(b, w), CS_OK);
    cr_assert_eq(cs_env_reset(a, 4), CS_OK);
    cr_assert_eq(cs_env_reset(b, 4), CS_OK);
    cr_assert_eq(cs_env_rollout(a, STEPS, NULL), CS_OK, "%s", cs_env_error(a));
    cr_assert_eq(cs_env_rollout(b, STEPS, NULL), CS_OK, "%s", cs_env_error(b));
    const char *names[] = {"action0", "logprob", "value", "obs399"};
    for (int k = 0; k < 4; k++)
        cr_expect(memcmp(record_of(a, names[k]), record_of(b, names[k]), (size_t)N * STEPS * 4) == 0,
                  "record %s differs", names[k]);
    const float *value = record_of(a, "value");
    bool varied = false;
    for (int i = 1; i < N * STEPS; i++)
        varied |= value[i] != value[0];
    cr_expect(varied, "the critic's value never changed: the observation unread?");
    free(w);
    cs_env_close(a);
    cs_env_close(b);
}

/* Breakout-MinAtar's 10x10x4 observation (400, more than the 256 a
 * policy took before): linear and mlp:64 build, run and evaluate. */
Test(dense_arrays, breakout_has_linear_and_mlp_policies, .timeout = 300)
{
    const char *policies[] = {"linear", "mlp:64"};
    const unsigned counts[] = {3 * 401, 64 * 401 + 3 * 65};
    for (int k = 0; k < 2; k++) {
        enum { N = 32, EPISODES = 8 };
        cs_env *env = open_policy("Breakout-MinAtar", policies[k], N, CS_BACKEND_CPU, CS_DTYPE_F32);
        unsigned nw = cs_env_num_weights(env);
        cr_assert_eq(nw, counts[k], "%s: %u weights", policies[k], nw);
        double *w = some_weights(nw, 0.1, 11);
        double ret[EPISODES];
        cr_assert_eq(cs_evaluate(env, w, EPISODES, 1, ret), CS_OK, "%s: %s", policies[k], cs_env_error(env));
        for (int e = 0; e < EPISODES; e++)
            cr_expect(isfinite(ret[e]) && ret[e] >= 0, "%s: episode %d returned %g", policies[k], e, ret[e]);
        free(w);
        cs_env_close(env);
    }
}

/* The limit is a layer's array: mlp:163 fits Breakout's 400 observations
 * (163 x 401 weights), mlp:164 does not, with a message that says why. */
Test(dense_arrays, a_layer_too_big_for_one_array_is_refused)
{
    cs_config cfg;
    config(&cfg, "Breakout-MinAtar", "mlp:164", 4, CS_BACKEND_INTERP, CS_DTYPE_F32);
    cs_env *env;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_ERR_ARGUMENT);
    const char *msg = cs_env_error(env);
    cr_expect(strstr(msg, "400 observations") && strstr(msg, "layer 1") && strstr(msg, "65764 weights") &&
                  strstr(msg, "at most 65535"),
              "%s", msg);
    cs_env_close(env);
    char *text = NULL, err[512];
    config(&cfg, "Breakout-MinAtar", "mlp:163", 4, CS_BACKEND_INTERP, CS_DTYPE_F32);
    cr_expect_eq(cs_dump(&cfg, "parse", "text", &text, err, sizeof err), CS_OK, "mlp:163: %s", err);
    free(text);
}
