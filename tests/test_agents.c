/* Agents: policies fused into the step kernel compute what the same policy
 * computes on the host; one launch runs a different policy per environment;
 * backends agree; the `policy` declaration of the DSL; training improves the
 * return and is deterministic; policy files round-trip and refuse damage. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cartsim.h"
#include "jit.h"
#include "cli_test.h"

static cs_env *open_policy(const char *env_name, const char *policy, int64_t n, cs_backend b, cs_dtype d)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = env_name;
    cfg.num_envs = n;
    cfg.backend = b;
    cfg.dtype = d;
    cfg.policy = policy;
    cs_env *env;
    cs_status s = cs_env_open(&cfg, &env);
    cr_assert_eq(s, CS_OK, "open %s with %s: %s", env_name, policy, cs_env_error(env));
    return env;
}

/* A small environment with a two-component box action and a declared policy. */
static const char point_env[] =
    "env point \"Point-v0\"\n"
    "max_steps 40\n"
    "state x, v\n"
    "action box(-1, 2, 2)\n"
    "observe x, v, x * v\n"
    "reset {\n    x = uniform(-1, 1)\n    v = uniform(-1, 1)\n}\n"
    "step {\n"
    "    v' = v + 0.1 * (action[0] - 0.5 * action[1])\n"
    "    x' = x + 0.1 * v'\n"
    "    reward = -(x * x)\n"
    "    terminated = x' > 3 or x' < -3\n"
    "}\n"
    "policy brake { action = stack(-v * 10, x) }\n";

static char *write_temp(const char *text, const char *suffix)
{
    char *path = malloc(64);
    cr_assert(path);
    snprintf(path, 64, "/tmp/cartsim-agents-XXXXXX%s", suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    cr_assert(fd >= 0);
    cr_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* Deterministic weights in [-1, 1), different for every environment. */
static double *some_weights(unsigned nw, int64_t n, unsigned salt)
{
    double *w = malloc((size_t)nw * (size_t)n * sizeof *w);
    cr_assert(w);
    uint64_t x = 0x9e3779b97f4a7c15ull * (salt + 1);
    for (size_t k = 0; k < (size_t)nw * (size_t)n; k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        w[k] = (double)(x >> 11) / 9007199254740992.0 * 2 - 1;
    }
    return w;
}

/* The documented dense policy (docs/policy_format.md), written from the
 * spec: layer after layer, each unit's weights then its bias. */
static void host_policy(const unsigned *widths, unsigned layers, const double *w, int64_t n, int64_t lane,
                        const double *obs, bool discrete, const double *low, const double *high, double *out)
{
    double a[300], b[300];
    memcpy(a, obs, widths[0] * sizeof *a);
    size_t k = 0;
    for (unsigned l = 1; l < layers; l++) {
        for (unsigned j = 0; j < widths[l]; j++) {
            double z = 0;
            for (unsigned i = 0; i < widths[l - 1]; i++, k++)
                z = i ? z + w[k * n + lane] * a[i] : w[k * n + lane] * a[i];
            z = z + w[k++ * n + lane];
            b[j] = l + 1 < layers ? tanh(z) : z;
        }
        memcpy(a, b, widths[l] * sizeof *a);
    }
    unsigned outs = widths[layers - 1];
    if (discrete) {
        unsigned best = 0;
        for (unsigned j = 1; j < outs; j++)
            if (a[j] > a[best])
                best = j;
        out[0] = best;
    } else {
        for (unsigned j = 0; j < outs; j++)
            out[j] = low[j] + (high[j] - low[j]) * ((tanh(a[j]) + 1) * 0.5);
    }
}

/* Steps `steps` times with host-computed actions (cs_env_step) and with the
 * fused policy (cs_env_rollout of one step each), from the same reset, with
 * a different policy in every environment; the states must agree. */
static void check_fused_equals_host(const char *env_name, const char *policy, const unsigned *widths,
                                    unsigned layers, int steps, double tolerance)
{
    enum { N = 37 };
    cs_env *fused = open_policy(env_name, policy, N, CS_BACKEND_CPU, CS_DTYPE_F64);
    cs_env *host = open_policy(env_name, policy, N, CS_BACKEND_CPU, CS_DTYPE_F64);
    cs_env_info info;
    cr_assert_eq(cs_env_get_info(host, &info), CS_OK);
    unsigned nw = cs_env_num_weights(fused);
    unsigned want = 0;
    for (unsigned l = 1; l < layers; l++)
        want += (widths[l - 1] + 1) * widths[l];
    cr_assert_eq(nw, want, "%s on %s: %u weights, want %u", policy, env_name, nw, want);
    double *w = some_weights(nw, N, layers);
    cr_assert_eq(cs_env_set_weights(fused, w), CS_OK);
    double *all = malloc((size_t)nw * N * sizeof *all);
    cr_assert_eq(cs_env_get_weights(fused, all), CS_OK);
    cr_assert(memcmp(all, w, (size_t)nw * N * sizeof *all) == 0, "get_weights returns what set_weights set");
    free(all);
    cr_assert_eq(cs_env_reset(fused, 11), CS_OK);
    cr_assert_eq(cs_env_reset(host, 11), CS_OK);
    unsigned na = info.discrete ? 1 : info.action_dim;
    int32_t discrete[N];
    float box[8 * N];
    double hs[16 * N], fs[16 * N];
    int decided[2] = {0, 0};
    for (int t = 0; t < steps; t++) {
        cr_assert_eq(cs_env_get_state(host, hs), CS_OK);
        for (int64_t i = 0; i < N; i++) {
            /* Both test environments observe their state, then (point) x * v. */
            double obs[8];
            for (unsigned k = 0; k < info.state_dim; k++)
                obs[k] = hs[k * N + i];
            if (info.obs_dim > info.state_dim)
                obs[2] = obs[0] * obs[1];
            double act[8];
            host_policy(widths, layers, w, N, i, obs, info.discrete, info.action_low, info.action_high, act);
            if (info.discrete) {
                discrete[i] = (int32_t)act[0];
                decided[discrete[i] != 0]++;
            } else {
                for (unsigned k = 0; k < na; k++)
                    box[k * N + i] = (float)act[k];
            }
        }
        cr_assert_eq(cs_env_step(host, info.discrete ? (const void *)discrete : (const void *)box), CS_OK);
        cr_assert_eq(cs_env_rollout(fused, 1, NULL), CS_OK);
        cr_assert_eq(cs_env_get_state(host, hs), CS_OK);
        cr_assert_eq(cs_env_get_state(fused, fs), CS_OK);
        for (unsigned k = 0; k < info.state_dim * N; k++)
            cr_assert(fabs(hs[k] - fs[k]) <= tolerance, "%s on %s, step %d, state %u of env %u: host %.17g, fused %.17g",
                      policy, env_name, t, k / N, k % N, hs[k], fs[k]);
    }
    if (info.discrete)
        cr_assert(decided[0] && decided[1], "the weights should pick both actions somewhere (%d, %d)", decided[0],
                  decided[1]);
    free(w);
    cs_env_close(fused);
    cs_env_close(host);
}

Test(agents, fused_linear_equals_host_cartpole)
{
    const unsigned widths[] = {4, 2};
    check_fused_equals_host("cartpole", "linear", widths, 2, 5, 0);
}

Test(agents, fused_mlp_equals_host_cartpole)
{
    const unsigned widths[] = {4, 5, 3, 2};
    check_fused_equals_host("cartpole", "mlp:5x3", widths, 4, 5, 0);
}

/* Box actions pass through float on the host (cs_env_step takes float),
 * not in the kernel: equal up to float rounding of the action. */
Test(agents, fused_mlp_equals_host_box)
{
    char *path = write_temp(point_env, ".env");
    const unsigned widths[] = {3, 6, 2};
    check_fused_equals_host(path, "mlp:6", widths, 3, 6, 1e-6);
    unlink(path);
    free(path);
}

/* Every environment runs its own weights in the same launch: a policy that
 * always pushes left next to one that balances. */
Test(agents, every_environment_runs_its_own_policy)
{
    enum { N = 64 };
    cs_env *env = open_policy("cartpole", "linear", N, CS_BACKEND_CPU, CS_DTYPE_F32);
    cr_assert_eq(cs_env_num_weights(env), 10u);
    double w[10 * N] = {0};
    /* output 1 (push right) = theta + 0.5 theta_dot in odd environments; 0 in even ones */
    for (int64_t i = 1; i < N; i += 2) {
        w[7 * N + i] = 1;     /* unit 1, weight over theta */
        w[8 * N + i] = 0.5;   /* unit 1, weight over theta_dot */
    }
    cr_assert_eq(cs_env_set_weights(env, w), CS_OK);
    cr_assert_eq(cs_env_reset(env, 3), CS_OK);
    cr_assert_eq(cs_env_rollout(env, 500, NULL), CS_OK);
    const double *ret = cs_env_episode_returns(env);
    const int64_t *count = cs_env_episode_counts(env);
    cr_assert(ret && count);
    for (int64_t i = 0; i < N; i++) {
        if (i % 2)
            cr_expect(count[i] == 1 && ret[i] == 500, "env %lld balances: %lld episodes, mean %g", (long long)i,
                      (long long)count[i], ret[i]);
        else
            cr_expect(count[i] > 10 && ret[i] < 20, "env %lld falls: %lld episodes, mean %g", (long long)i,
                      (long long)count[i], ret[i]);
    }
    cs_env_close(env);
}

Test(agents, linear_and_mlp_agree_on_cpu_and_interp)
{
    const char *policies[] = {"linear", "mlp:8"};
    for (int p = 0; p < 2; p++) {
        enum { N = 50 };
        cs_env *a = open_policy("cartpole", policies[p], N, CS_BACKEND_CPU, CS_DTYPE_F64);
        cs_env *b = open_policy("cartpole", policies[p], N, CS_BACKEND_INTERP, CS_DTYPE_F64);
        unsigned nw = cs_env_num_weights(a);
        double *w = some_weights(nw, N, 7);
        cs_rollout_stats sa, sb;
        cr_assert_eq(cs_env_set_weights(a, w), CS_OK);
        cr_assert_eq(cs_env_set_weights(b, w), CS_OK);
        cr_assert_eq(cs_env_reset(a, 5), CS_OK);
        cr_assert_eq(cs_env_reset(b, 5), CS_OK);
        cr_assert_eq(cs_env_rollout(a, 300, &sa), CS_OK);
        cr_assert_eq(cs_env_rollout(b, 300, &sb), CS_OK);
        cr_expect_eq(sa.episodes, sb.episodes, "%s: %lld vs %lld episodes", policies[p], (long long)sa.episodes,
                     (long long)sb.episodes);
        double x[4 * N], y[4 * N];
        cs_env_get_state(a, x);
        cs_env_get_state(b, y);
        for (int k = 0; k < 4 * N; k++)
            cr_expect(fabs(x[k] - y[k]) <= 1e-9 * (1 + fabs(x[k])), "%s: state %d: cpu %.17g, interp %.17g",
                      policies[p], k, x[k], y[k]);
        free(w);
        cs_env_close(a);
        cs_env_close(b);
    }
}

/* In f32 both evaluate tanh with mathf.h's cs_tanhf, so the states agree to
 * the bit (with tanhf in the interpreter 29 of these 100 differ). Box
 * actions, so that the output tanh reaches the state, not only an argmax. */
Test(agents, mlp_agrees_bit_for_bit_on_cpu_and_interp_in_f32)
{
    enum { N = 50 };
    char *path = write_temp(point_env, ".env");
    cs_env *a = open_policy(path, "mlp:8", N, CS_BACKEND_CPU, CS_DTYPE_F32);
    cs_env *b = open_policy(path, "mlp:8", N, CS_BACKEND_INTERP, CS_DTYPE_F32);
    unsigned nw = cs_env_num_weights(a);
    double *w = some_weights(nw, N, 7);
    cs_rollout_stats sa, sb;
    cr_assert_eq(cs_env_set_weights(a, w), CS_OK);
    cr_assert_eq(cs_env_set_weights(b, w), CS_OK);
    cr_assert_eq(cs_env_reset(a, 5), CS_OK);
    cr_assert_eq(cs_env_reset(b, 5), CS_OK);
    cr_assert_eq(cs_env_rollout(a, 100, &sa), CS_OK);
    cr_assert_eq(cs_env_rollout(b, 100, &sb), CS_OK);
    cr_expect_eq(sa.episodes, sb.episodes, "%lld vs %lld episodes", (long long)sa.episodes, (long long)sb.episodes);
    double x[2 * N], y[2 * N];
    cs_env_get_state(a, x);
    cs_env_get_state(b, y);
    int differ = 0, first = 0;
    for (int k = 2 * N - 1; k >= 0; k--)
        if (x[k] != y[k]) {
            differ++;
            first = k;
        }
    cr_expect_eq(differ, 0, "%d of %d states differ, e.g. cpu %a, interp %a", differ, 2 * N, x[first], y[first]);
    free(w);
    cs_env_close(a);
    cs_env_close(b);
    unlink(path);
    free(path);
}

Test(agents, declared_heuristic_balances_cartpole)
{
    cs_env *env = open_policy("cartpole", "heuristic", 100, CS_BACKEND_AUTO, CS_DTYPE_F32);
    cr_assert_eq(cs_env_num_weights(env), 0u);
    double ret[100];
    cr_assert_eq(cs_evaluate(env, NULL, 100, 0, ret), CS_OK, "%s", cs_env_error(env));
    double sum = 0;
    for (int e = 0; e < 100; e++)
        sum += ret[e];
    cr_expect(sum / 100 >= 475, "heuristic mean return %g", sum / 100);
    cs_env_close(env);
}

/* Evaluating exactly: the first episode of each environment, however many
 * later ones a rollout finishes. The truth: the same policy on the host,
 * one cs_env_step at a time, summing rewards until the episode ends. */
Test(agents, evaluate_scores_first_episodes)
{
    enum { N = 30, ROUNDS = 2 };
    /* push right when theta > 0: falls after a while, so a rollout of
     * max_steps finishes several episodes in most environments */
    double w[10] = {0, 0, 0, 0, 0, 0, 0, 1, 0, 0};
    cs_env *env = open_policy("cartpole", "linear", N, CS_BACKEND_CPU, CS_DTYPE_F64);
    double ret[ROUNDS * N];
    cr_assert_eq(cs_evaluate(env, w, ROUNDS * N, 9, ret), CS_OK, "%s", cs_env_error(env));
    int short_ones = 0;
    for (int round = 0; round < ROUNDS; round++) {
        cr_assert_eq(cs_env_reset(env, 9 + (uint64_t)round), CS_OK);
        double sum[N] = {0}, state[4 * N];
        bool done[N] = {0};
        int32_t act[N];
        for (int t = 0; t < 500; t++) {
            cr_assert_eq(cs_env_get_state(env, state), CS_OK);
            for (int i = 0; i < N; i++)
                act[i] = state[2 * N + i] > 0;
            cr_assert_eq(cs_env_step(env, act), CS_OK);
            const double *r = cs_env_rewards(env);
            const uint8_t *te = cs_env_terminated(env), *tr = cs_env_truncated(env);
            for (int i = 0; i < N; i++)
                if (!done[i]) {
                    sum[i] += r[i];
                    done[i] = te[i] || tr[i];
                }
        }
        for (int i = 0; i < N; i++) {
            cr_expect(done[i]);
            short_ones += sum[i] < 250;
            cr_expect_eq(ret[round * N + i], sum[i], "episode %d: evaluate %g, stepped %g", round * N + i,
                         ret[round * N + i], sum[i]);
        }
    }
    cr_expect(short_ones > N, "the test needs short episodes: %d", short_ones);
    cs_env_close(env);
}

Test(agents, bad_policies_and_weights_are_refused)
{
    const char *bad[] = {"mlp", "mlp:", "mlp:0", "mlp:32x", "mlp:32x32x32", "mlp:257", "mlp:08", "lin ear",
                         "nosuch"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        cs_config cfg;
        cs_config_init(&cfg);
        cfg.policy = bad[k];
        cfg.backend = CS_BACKEND_INTERP;
        cs_env *env;
        cr_expect_eq(cs_env_open(&cfg, &env), CS_ERR_ARGUMENT, "policy '%s' accepted", bad[k]);
        cr_expect(strstr(cs_env_error(env), bad[k]), "message names the policy: %s", cs_env_error(env));
        cs_env_close(env);
    }
    cs_env *env = open_policy("cartpole", "linear", 2, CS_BACKEND_INTERP, CS_DTYPE_F32);
    double w[20] = {0};
    w[13] = NAN;
    cr_expect_eq(cs_env_set_weights(env, w), CS_ERR_ARGUMENT);
    cr_expect_eq(cs_env_set_weights(env, NULL), CS_ERR_ARGUMENT);
    cs_env_close(env);
}

/* ---- the DSL's policy declaration ---- */

static const char cart_head[] = "env c \"C\"\nstate x, v\naction discrete 3\nobserve x, v\n"
                                "reset {\n x = 0\n v = 0\n}\n"
                                "step {\n x' = x + v\n v' = v + action\n reward = 1\n terminated = x' > 9\n}\n";

static int parse_with(const char *tail, cs_program **p, char *err, size_t size)
{
    char src[2048];
    snprintf(src, sizeof src, "%s%s", cart_head, tail);
    return cs_parse(src, strlen(src), "t.env", CS_F64, NULL, 0, p, err, size);
}

Test(agents, dsl_policy_declarations)
{
    cs_program *p;
    char err[512];
    cr_assert_eq(parse_with("policy a { action = x > 0 ? 2 : 0 }\n"
                            "policy b {\n    k = 0.5\n    action = v * k\n}\n"
                            "policy c { action = x > v }\n",
                            &p, err, sizeof err),
                 0, "%s", err);
    cr_assert_eq(p->n_named, 3u);
    cr_expect_str_eq(p->named[0].name, "a");
    cr_expect_str_eq(p->named[2].name, "c");
    cr_assert(cs_program_find_named(p, "b"));
    cr_expect_null(cs_program_find_named(p, "d"));
    for (unsigned k = 0; k < 3; k++)
        cr_expect_eq(cs_graph_node(p->graph, p->named[k].action[0])->type, CS_I32);
    cs_program_free(p);

    const struct {
        const char *tail, *message;
    } bad[] = {
        {"policy a { k = 1 }\n", "does not assign 'action'"},
        {"policy a { action = 1\n action = 2 }\n", "'action' is assigned twice"},
        {"policy a { action = 1 }\npolicy a { action = 0 }\n", "declared twice"},
        {"policy linear { action = 1 }\n", "built-in agent"},
        {"policy a { action = action }\n", "'action' can only be read in the step block"},
        {"policy a { action = uniform(0, 1) }\n", "uniform() can only be used"},
        {"policy a { action = x' }\n", "can only be read in the step block"},
        {"policy a { action = stack(x, v) }\n", "must be a number"},
        {"policy a { x = 1\n action = 0 }\n", "already defined as a state"},
        {"policy { action = 0 }\n", "expected a name after 'policy'"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        p = NULL;
        cr_expect_eq(parse_with(bad[k].tail, &p, err, sizeof err), -1, "accepted: %s", bad[k].tail);
        cr_expect(strstr(err, bad[k].message), "%s: got '%s', want '%s'", bad[k].tail, err, bad[k].message);
        cr_expect(strncmp(err, "t.env:", 6) == 0, "position: %s", err);
        cs_program_free(p);
    }
    const char before_state[] = "env c \"C\"\npolicy a { action = 0 }\n";
    cr_expect_eq(cs_parse(before_state, strlen(before_state), "t.env", CS_F64, NULL, 0, &p, err, sizeof err), -1);
    cr_expect(strstr(err, "declare 'state' before 'policy'"), "%s", err);
}

Test(agents, dsl_policy_box_actions_are_clipped)
{
    char *path = write_temp(point_env, ".env");
    cs_env *env = open_policy(path, "brake", 8, CS_BACKEND_INTERP, CS_DTYPE_F64);
    cr_assert_eq(cs_env_reset(env, 1), CS_OK);
    double s0[16], s1[16];
    cs_env_get_state(env, s0);
    cr_assert_eq(cs_env_rollout(env, 1, NULL), CS_OK);
    cs_env_get_state(env, s1);
    for (int i = 0; i < 8; i++) {
        double x = s0[i], v = s0[8 + i];
        double a0 = fmin(fmax(-v * 10, -1), 2), a1 = fmin(fmax(x, -1), 2);
        double v1 = v + 0.1 * (a0 - 0.5 * a1);
        cr_expect(fabs(s1[8 + i] - v1) < 1e-15, "env %d: v' %.17g, want %.17g", i, s1[8 + i], v1);
    }
    cs_env_close(env);
    unlink(path);
    free(path);
}

/* ---- training ---- */

static double mean_return(const char *policy, const double *weights, uint64_t seed)
{
    cs_env *env = open_policy("cartpole", policy, 100, CS_BACKEND_AUTO, CS_DTYPE_F32);
    double ret[100];
    cr_assert_eq(cs_evaluate(env, weights, 100, seed, ret), CS_OK, "%s", cs_env_error(env));
    cs_env_close(env);
    double sum = 0;
    for (int e = 0; e < 100; e++)
        sum += ret[e];
    return sum / 100;
}

static cs_train_result train(cs_algo algo, const char *policy, uint64_t seed, int64_t generations)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cs_train_config tc;
    cs_train_config_init(&tc);
    tc.algo = algo;
    tc.policy = policy;
    tc.seed = seed;
    tc.population = 64;
    tc.generations = generations;
    tc.target = 1e9;   /* never stop early */
    tc.eval_episodes = 20;
    cs_train_result r;
    char err[512];
    cr_assert_eq(cs_train(&cfg, &tc, &r, err, sizeof err), CS_OK, "%s", err);
    cr_assert_eq(r.generations, generations);
    cr_assert_str_eq(r.env, "cartpole");
    return r;
}

Test(agents, es_and_cem_improve_the_return)
{
    double before = mean_return("linear", NULL, 77);   /* zero weights: always action 0 */
    cr_assert(before < 15, "untrained %g", before);
    cs_algo algos[] = {CS_ALGO_ES, CS_ALGO_CEM};
    for (int a = 0; a < 2; a++) {
        cs_train_result r = train(algos[a], "linear", 1, 8);
        cr_assert_eq(r.n_weights, 10u);
        cr_assert_str_eq(r.policy, "linear");
        double after = mean_return("linear", r.weights, 77);
        cr_expect(after > before + 50, "%s: mean return %g before, %g after 8 generations", a ? "cem" : "es", before,
                  after);
        free(r.weights);
    }
}

Test(agents, same_seed_same_weights)
{
    cs_train_result a = train(CS_ALGO_ES, "mlp:4", 5, 3);
    cs_train_result b = train(CS_ALGO_ES, "mlp:4", 5, 3);
    cs_train_result c = train(CS_ALGO_ES, "mlp:4", 6, 3);
    cr_assert_eq(a.n_weights, 30u);
    cr_expect(memcmp(a.weights, b.weights, a.n_weights * sizeof *a.weights) == 0, "same seed, other weights");
    cr_expect(memcmp(a.weights, c.weights, a.n_weights * sizeof *a.weights) != 0, "other seed, same weights");
    cr_expect_eq(a.eval_return, b.eval_return);
    free(a.weights);
    free(b.weights);
    free(c.weights);
}

Test(agents, train_refuses_what_it_cannot_train)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cs_train_config tc;
    cs_train_config_init(&tc);
    cs_train_result r;
    char err[512];
    tc.policy = "heuristic";
    cr_expect_eq(cs_train(&cfg, &tc, &r, err, sizeof err), CS_ERR_ARGUMENT);
    cr_expect(strstr(err, "no weights"), "%s", err);
    cr_expect_null(r.weights);
    cs_train_config_init(&tc);
    tc.population = 1;
    cr_expect_eq(cs_train(&cfg, &tc, &r, err, sizeof err), CS_ERR_ARGUMENT);
    cs_train_config_init(&tc);
    cfg.env = "nosuchenv";
    cr_expect_eq(cs_train(&cfg, &tc, &r, err, sizeof err), CS_ERR_NOT_FOUND, "%s", err);
}

/* ---- policy files ---- */

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strdup(buf);
}

Test(agents, policy_file_round_trips)
{
    /* mlp:2x1 over 1 observation and 1 output: (1 + 1) * 2 + (2 + 1) * 1 + (1 + 1) * 1 = 9 weights */
    double w[9] = {0.1, -2.5e-300, 3.0, 1.0 / 3.0, -0.0, 123456789.125, 5e-324, 7, -8};
    char *path = write_temp("", ".txt");
    char err[512];
    cr_assert_eq(cs_policy_save(path, "cartpole", "mlp:2x1", 9, w, err, sizeof err), CS_OK, "%s", err);
    cs_policy_file f;
    cr_assert_eq(cs_policy_load(path, &f, err, sizeof err), CS_OK, "%s", err);
    cr_expect_str_eq(f.env, "cartpole");
    cr_expect_str_eq(f.policy, "mlp:2x1");
    cr_assert_eq(f.n_weights, 9u);
    cr_expect(memcmp(f.weights, w, sizeof w) == 0, "weights read back exactly");
    cs_policy_file_free(&f);
    unlink(path);
    free(path);
}

Test(agents, damaged_policy_files_are_refused)
{
    double w[3] = {0.25, -1.5, 2};
    char *path = write_temp("", ".txt");
    char err[512];
    cr_assert_eq(cs_policy_save(path, "cartpole", "linear", 3, w, err, sizeof err), CS_OK, "%s", err);
    char *good = read_all(path);
    const struct {
        const char *find, *replace, *message;
    } damage[] = {
        {"-1.5", "-1.6", "checksum does not match"},
        {"cartsim-policy 1", "cartsim-policy 2", "first line"},
        {"env cartpole", "env cartpolf", "checksum"},
        {"policy linear", "policy mlp:0", "not a trained architecture"},
        {"weights 3", "weights 4", "checksum"},
        {"weights 3", "weights x", "weights N"},
        {"0.25", "0.25x", "not a finite number"},
        {"0.25", "inf", "not a finite number"},
        {"checksum ", "checksun ", "checksum"},
    };
    for (size_t k = 0; k < sizeof damage / sizeof damage[0]; k++) {
        char *at = strstr(good, damage[k].find);
        cr_assert(at, "%s not in the file", damage[k].find);
        char text[4096];
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - good), good, damage[k].replace, at + strlen(damage[k].find));
        char *bad = write_temp(text, ".txt");
        cs_policy_file f;
        cr_expect_eq(cs_policy_load(bad, &f, err, sizeof err), CS_ERR_PARSE, "%s -> %s accepted", damage[k].find,
                     damage[k].replace);
        cr_expect(strstr(err, damage[k].message), "%s -> %s: '%s'", damage[k].find, damage[k].replace, err);
        cr_expect_null(f.weights);
        unlink(bad);
        free(bad);
    }
    /* cut short, trailing text, empty */
    char text[4096];
    snprintf(text, sizeof text, "%.*s", (int)(strstr(good, "-1.5") - good), good);
    char *cut = write_temp(text, ".txt");
    snprintf(text, sizeof text, "%sextra\n", good);
    char *trail = write_temp(text, ".txt");
    char *empty = write_temp("", ".txt");
    const char *files[] = {cut, trail, empty};
    for (int k = 0; k < 3; k++) {
        cs_policy_file f;
        cr_expect_eq(cs_policy_load(files[k], &f, err, sizeof err), CS_ERR_PARSE, "file %d accepted", k);
        unlink(files[k]);
    }
    free(cut);
    free(trail);
    free(empty);
    cs_policy_file f;
    cr_expect_eq(cs_policy_load("/nonexistent/policy.txt", &f, err, sizeof err), CS_ERR_NOT_FOUND);
    free(good);
    unlink(path);
    free(path);
}

/* 64-bit FNV-1a of a policy file's contents, as docs/policy_format.md defines it. */
static uint64_t policy_checksum(const char *env, const char *policy, unsigned n, const double *w)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const char *names[2] = {env, policy};
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i <= strlen(names[s]); i++)
            h = (h ^ (unsigned char)names[s][i]) * 0x100000001b3ull;
    for (unsigned k = 0; k < n; k++) {
        uint64_t bits;
        memcpy(&bits, &w[k], sizeof bits);
        for (int j = 0; j < 8; j++)
            h = (h ^ (unsigned char)(bits >> (8 * j))) * 0x100000001b3ull;
    }
    return h;
}

/* A count of weights no environment's observation and action could give
 * the architecture (linear: (obs + 1) * out with obs, out >= 1) is refused
 * when saving and when loading; every count some environment gives is taken. */
Test(agents, policy_files_refuse_a_count_no_environment_has)
{
    double w[64] = {0};
    char *path = write_temp("", ".txt");
    char err[512];
    const struct {
        const char *policy;
        unsigned n;
        bool possible;
    } counts[] = {
        {"linear", 0, false}, {"linear", 1, false}, {"linear", 2, true}, {"linear", 3, true}, {"linear", 10, true},
        /* mlp:2x1: 2 * obs + 2 * out + 5, obs, out >= 1: odd counts from 9 */
        {"mlp:2x1", 7, false}, {"mlp:2x1", 8, false}, {"mlp:2x1", 9, true}, {"mlp:2x1", 10, false},
        {"mlp:2x1", 11, true},
        /* mlp:4: 4 * obs + 5 * out + 4: 13, 17, 18, 21, 22, 23 (4 + 5 + 4 + ... ) */
        {"mlp:4", 12, false}, {"mlp:4", 13, true}, {"mlp:4", 14, false}, {"mlp:4", 17, true}, {"mlp:4", 18, true},
        {"mlp:4", 19, false},
    };
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        cs_status st = cs_policy_save(path, "cartpole", counts[k].policy, counts[k].n, w, err, sizeof err);
        if (counts[k].possible) {
            cr_expect_eq(st, CS_OK, "%s with %u weights: %s", counts[k].policy, counts[k].n, err);
            continue;
        }
        cr_expect_eq(st, CS_ERR_ARGUMENT, "%s with %u weights saved", counts[k].policy, counts[k].n);
        cr_expect(strstr(err, counts[k].policy) && strstr(err, "weights"), "%s", err);
        /* the same file written by hand, with a right checksum, does not load */
        char text[4096];
        int len = snprintf(text, sizeof text, "cartsim-policy 1\nenv cartpole\npolicy %s\nweights %u\n",
                           counts[k].policy, counts[k].n);
        for (unsigned j = 0; j < counts[k].n; j++)
            len += snprintf(text + len, sizeof text - (size_t)len, "0\n");
        snprintf(text + len, sizeof text - (size_t)len, "checksum %016llx\n",
                 (unsigned long long)policy_checksum("cartpole", counts[k].policy, counts[k].n, w));
        char *bad = write_temp(text, ".txt");
        cs_policy_file f;
        cr_expect_eq(cs_policy_load(bad, &f, err, sizeof err), CS_ERR_PARSE, "%s with %u weights loaded",
                     counts[k].policy, counts[k].n);
        cr_expect(strstr(err, "weights"), "%s", err);
        unlink(bad);
        free(bad);
    }
    /* a policy that is no trained architecture is not saved either */
    cr_expect_eq(cs_policy_save(path, "cartpole", "heuristic", 2, w, err, sizeof err), CS_ERR_ARGUMENT);
    unlink(path);
    free(path);
}

/* ---- the command line ---- */

Test(agents, cli_train_save_eval, .timeout = 300)
{
    char *path = write_temp("", ".txt");
    const char *train_args[] = {"train", "--env", "cartpole", "--pop", "64", "--generations", "3", "--seed", "2",
                                "--out", path, NULL};
    cli_result r;
    cli_test_run(train_args, 240, &r);
    cr_assert_eq(r.status, 0, "train: %s", r.err);
    cr_expect(strstr(r.out, "gen    3  mean"), "%s", r.out);
    cr_expect(strstr(r.out, "saved "), "%s", r.out);
    cli_result_free(&r);

    const char *eval_args[] = {"eval", "--env", "cartpole", "--policy", path, "--episodes", "20", "--json", NULL};
    cli_test_run(eval_args, 240, &r);
    cr_assert_eq(r.status, 0, "eval: %s", r.err);
    cr_expect(strstr(r.out, "\"mean_return\": "), "%s", r.out);
    cr_expect(strstr(r.out, "\"episodes\": 20"), "%s", r.out);
    cli_result_free(&r);

    const char *run_args[] = {"--policy", path, "--envs", "8", "--steps", "50", NULL};
    cli_test_run(run_args, 240, &r);
    cr_expect_eq(r.status, 0, "run: %s", r.err);
    cli_result_free(&r);

    /* another environment, a name that is no policy, a damaged file: status 2, one line */
    char *point = write_temp(point_env, ".env");
    const char *other[] = {"eval", "--env", point, "--policy", path, NULL};
    cli_test_run(other, 240, &r);
    cr_expect_eq(r.status, 2, "policy for another env: %d %s", r.status, r.err);
    cr_expect(strstr(r.err, "is a policy for cartpole, not for point"), "%s", r.err);
    cr_expect_eq(r.out_len, 0u);
    cli_result_free(&r);
    const char *mlp[] = {"eval", "--policy", "nosuch", NULL};
    cli_test_run(mlp, 240, &r);
    cr_expect_eq(r.status, 2, "%s", r.err);
    cli_result_free(&r);
    FILE *f = fopen(path, "a");
    fputs("junk\n", f);
    fclose(f);
    const char *damaged[] = {"eval", "--policy", path, NULL};
    cli_test_run(damaged, 240, &r);
    cr_expect_eq(r.status, 2, "%s", r.err);
    cr_expect(strstr(r.err, "damaged"), "%s", r.err);
    cli_result_free(&r);
    unlink(point);
    free(point);
    unlink(path);
    free(path);
}
