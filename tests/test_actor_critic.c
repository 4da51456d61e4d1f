/* The actor-critic policy PPO's rollouts run ("ppo:ARCH", agents/
 * actor_critic.c): one set of weights for the whole batch; actions sampled
 * from softmax(z) or from a normal around the dense policy's action, the
 * greedy switch taking the dense policy's own; every step recorded (what,
 * in which order, each value what the policy computed), the same on the
 * cpu (any thread count) and the interpreter. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cartsim.h"
#include "cli_test.h"

static cs_env *open_ac(const char *env_name, const char *policy, int64_t n, cs_backend b, int threads)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = env_name;
    cfg.num_envs = n;
    cfg.backend = b;
    cfg.threads = threads;
    cfg.policy = policy;
    cs_env *env;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_OK, "open %s with %s: %s", env_name, policy, cs_env_error(env));
    return env;
}

static const void *record_of(cs_env *env, const char *name, int64_t steps)
{
    for (unsigned k = 0; k < cs_env_record_count(env); k++) {
        cs_record r;
        cr_assert_eq(cs_env_record(env, k, &r), CS_OK, "%s", cs_env_error(env));
        if (strcmp(r.name, name) == 0) {
            cr_assert_eq(r.steps, steps, "%s: %lld rows, not %lld", name, (long long)r.steps, (long long)steps);
            return r.data;
        }
    }
    cr_assert_fail("no record named %s", name);
    return NULL;
}

/* CartPole, ppo:mlp:8: the actor (4 -> 8 -> 2: 58 weights), the critic
 * (4 -> 8 -> 1: 49), the switch. Every weight 0 but the actor's output
 * biases (z = b0, b1) and the critic's (the value). */
enum { ACTOR = 58, CRITIC = 49, GREEDY = ACTOR + CRITIC };

static double *cartpole_weights(double b0, double b1, double value, double greedy)
{
    double *w = calloc(GREEDY + 1, sizeof *w);
    w[40 + 8] = b0;
    w[40 + 9 + 8] = b1;
    w[ACTOR + 40 + 8] = value;
    w[GREEDY] = greedy;
    return w;
}

Test(actor_critic, weights_are_shared_and_every_value_is_recorded_in_order)
{
    cs_env *env = open_ac("cartpole", "ppo:mlp:8", 3, CS_BACKEND_CPU, 1);
    cs_env_info info;
    cr_assert_eq(cs_env_get_info(env, &info), CS_OK);
    cr_assert(info.shared_weights);
    cr_assert_eq(cs_env_num_weights(env), GREEDY + 1);
    static const char *const names[] = {"obs0", "obs1", "obs2", "obs3", "action0", "logprob", "value", "reward",
                                        "terminated", "truncated", "final_obs0", "final_obs1", "final_obs2",
                                        "final_obs3"};
    cr_assert_eq(info.n_records, 14);
    cr_assert_eq(cs_env_record_count(env), 14);
    for (unsigned k = 0; k < 14; k++) {
        cs_record r;
        cr_assert_eq(cs_env_record(env, k, &r), CS_OK);
        cr_assert_str_eq(r.name, names[k]);
        cr_assert_eq(r.integer, k == 4 || k == 8 || k == 9, "%s", r.name);
        cr_assert_eq(r.steps, 0, "nothing recorded before a rollout");
        cr_assert_null(r.data);
    }
    cs_record r;
    cr_assert_eq(cs_env_record(env, 14, &r), CS_ERR_ARGUMENT);
    /* one set of weights: [n_weights], whatever the batch's size */
    double *w = cartpole_weights(0.5, -0.25, 1, 0), back[GREEDY + 1];
    cr_assert_eq(cs_env_set_weights(env, w), CS_OK, "%s", cs_env_error(env));
    cr_assert_eq(cs_env_get_weights(env, back), CS_OK);
    cr_assert_eq(memcmp(w, back, sizeof back), 0);
    free(w);
    cs_env_close(env);
}

Test(actor_critic, samples_softmax_and_records_the_log_probability_and_value)
{
    const int64_t n = 2048, steps = 20;
    cs_env *env = open_ac("cartpole", "ppo:mlp:8", n, CS_BACKEND_CPU, 0);
    double *w = cartpole_weights(0, log(3.0), 2.5, 0);   /* p(action 1) = 3 / 4 */
    cr_assert_eq(cs_env_set_weights(env, w), CS_OK, "%s", cs_env_error(env));
    cr_assert_eq(cs_env_reset(env, 7), CS_OK);
    cs_rollout_stats st;
    cr_assert_eq(cs_env_rollout(env, steps, &st), CS_OK, "%s", cs_env_error(env));
    const int32_t *action = record_of(env, "action0", steps);
    const float *logprob = record_of(env, "logprob", steps), *value = record_of(env, "value", steps);
    const float *reward = record_of(env, "reward", steps);
    int64_t ones = 0;
    for (int64_t i = 0; i < n * steps; i++) {
        cr_assert(action[i] == 0 || action[i] == 1);
        ones += action[i];
        double want = action[i] ? log(0.75) : log(0.25);
        cr_assert(fabs(logprob[i] - want) < 1e-6, "row %lld: log-probability %g, not %g", (long long)i, logprob[i],
                  want);
        cr_assert_eq(value[i], 2.5f);
        cr_assert_eq(reward[i], 1.0f);
    }
    double freq = (double)ones / (double)(n * steps);   /* 40960 draws: sd 0.0021 */
    cr_assert(fabs(freq - 0.75) < 0.011, "action 1 in %.4f of the steps, not 0.75", freq);
    /* greedy: the argmax, always */
    w[GREEDY] = 1;
    cr_assert_eq(cs_env_set_weights(env, w), CS_OK);
    cr_assert_eq(cs_env_rollout(env, steps, &st), CS_OK);
    action = record_of(env, "action0", steps);
    logprob = record_of(env, "logprob", steps);
    for (int64_t i = 0; i < n * steps; i++) {
        cr_assert_eq(action[i], 1);
        cr_assert(fabs(logprob[i] - log(0.75)) < 1e-6);
    }
    free(w);
    cs_env_close(env);
}

/* Pendulum, ppo:mlp:8 (3 -> 8 -> 1): actor 41 weights, critic 41, one
 * log-std, the switch. The actor's output bias 0.5 puts the dense action
 * (the mean) at -2 + 4 (tanh(0.5) + 1) / 2; the std is 0.2. */
Test(actor_critic, box_samples_a_normal_around_the_dense_action)
{
    const int64_t n = 2048, steps = 10;
    cs_env *env = open_ac("pendulum", "ppo:mlp:8", n, CS_BACKEND_CPU, 0);
    cr_assert_eq(cs_env_num_weights(env), 41 + 41 + 1 + 1);
    double w[84] = {0};
    w[32 + 8] = 0.5;
    w[82] = log(0.2);
    cr_assert_eq(cs_env_set_weights(env, w), CS_OK, "%s", cs_env_error(env));
    cr_assert_eq(cs_env_reset(env, 3), CS_OK);
    cs_rollout_stats st;
    cr_assert_eq(cs_env_rollout(env, steps, &st), CS_OK, "%s", cs_env_error(env));
    const float *action = record_of(env, "action0", steps), *logprob = record_of(env, "logprob", steps);
    double mean = -2 + 4 * (tanh(0.5) + 1) / 2, sum = 0, sum2 = 0;
    for (int64_t i = 0; i < n * steps; i++) {
        double eps = (action[i] - mean) / 0.2;
        sum += action[i];
        sum2 += (action[i] - mean) * (action[i] - mean);
        double want = -0.5 * eps * eps - log(0.2) - 0.5 * log(2 * M_PI);
        cr_assert(fabs(logprob[i] - want) < 2e-4, "row %lld: %g, not %g", (long long)i, logprob[i], want);
    }
    double m = sum / (double)(n * steps), sd = sqrt(sum2 / (double)(n * steps));
    cr_assert(fabs(m - mean) < 0.005, "mean action %g, not %g", m, mean);   /* sd of the mean 0.001 */
    cr_assert(fabs(sd - 0.2) < 0.005, "sd %g, not 0.2", sd);
    w[83] = 1;   /* greedy: the mean itself */
    cr_assert_eq(cs_env_set_weights(env, w), CS_OK);
    cr_assert_eq(cs_env_rollout(env, steps, &st), CS_OK);
    action = record_of(env, "action0", steps);
    for (int64_t i = 0; i < n * steps; i++)
        cr_assert(fabs(action[i] - mean) < 1e-6);
    cs_env_close(env);
}

/* final_obs is the observation after the step, before any restart: the
 * next row's observation wherever the episode went on. */
Test(actor_critic, final_obs_is_the_next_observation_unless_the_episode_ended)
{
    const int64_t n = 64, steps = 200;
    cs_env *env = open_ac("cartpole", "ppo:mlp:8", n, CS_BACKEND_CPU, 1);
    cr_assert_eq(cs_env_reset(env, 11), CS_OK);
    cs_rollout_stats st;
    cr_assert_eq(cs_env_rollout(env, steps, &st), CS_OK);
    cr_assert_gt(st.episodes, n, "random CartPole episodes last ~22 steps");
    const int32_t *term = record_of(env, "terminated", steps), *trunc = record_of(env, "truncated", steps);
    int64_t ends = 0, checked = 0;
    for (int k = 0; k < 4; k++) {
        char a[16], b[16];
        snprintf(a, sizeof a, "obs%d", k);
        snprintf(b, sizeof b, "final_obs%d", k);
        const float *obs = record_of(env, a, steps), *fin = record_of(env, b, steps);
        for (int64_t s = 0; s + 1 < steps; s++)
            for (int64_t i = 0; i < n; i++) {
                int64_t r = s * n + i;
                if (term[r] || trunc[r]) {
                    ends += k == 0;
                    continue;
                }
                cr_assert_eq(fin[r], obs[r + n], "step %lld env %lld obs %d", (long long)s, (long long)i, k);
                checked++;
            }
    }
    cr_assert_gt(ends, n);
    cr_assert_gt(checked, 4 * n * 150);
    cs_env_close(env);
}

/* The records are a function of (seed, environment, step) alone. */
Test(actor_critic, records_agree_on_threads_and_the_interpreter)
{
    const int64_t n = 300, steps = 60;
    cs_env *envs[3] = {open_ac("cartpole", "ppo:mlp:8", n, CS_BACKEND_CPU, 1),
                       open_ac("cartpole", "ppo:mlp:8", n, CS_BACKEND_CPU, 3),
                       open_ac("cartpole", "ppo:mlp:8", n, CS_BACKEND_INTERP, 1)};
    double w[GREEDY + 1];
    for (int k = 0; k <= GREEDY; k++)
        w[k] = sin(0.7 * k) * 0.8;
    w[GREEDY] = 0;
    for (int e = 0; e < 3; e++) {
        cr_assert_eq(cs_env_set_weights(envs[e], w), CS_OK);
        cr_assert_eq(cs_env_reset(envs[e], 5), CS_OK);
        cs_rollout_stats st;
        cr_assert_eq(cs_env_rollout(envs[e], steps, &st), CS_OK, "%s", cs_env_error(envs[e]));
    }
    for (unsigned k = 0; k < cs_env_record_count(envs[0]); k++) {
        cs_record a, b, c;
        cs_env_record(envs[0], k, &a);
        cs_env_record(envs[1], k, &b);
        cs_env_record(envs[2], k, &c);
        cr_assert_eq(memcmp(a.data, b.data, (size_t)(n * steps) * 4), 0, "%s: 1 thread and 3 differ", a.name);
        cr_assert_eq(memcmp(a.data, c.data, (size_t)(n * steps) * 4), 0, "%s: the cpu and the interpreter differ",
                     a.name);
    }
    for (int e = 0; e < 3; e++)
        cs_env_close(envs[e]);
}

/* PPO's recording rollout runs a few hundred steps per iteration, so its
 * kernel is compiled for a short compile (-O1); a plain rollout's for speed
 * (-O3). A wrapper around cc logs the level each compiler run was given. */
Test(actor_critic, the_recording_kernel_is_compiled_for_a_short_compile)
{
    char dir[] = "/tmp/cartsim-ac-opt-XXXXXX", wrapper[128], log[128];
    cli_test_scratch(dir);
    cli_test_level_logging_cc(dir, wrapper, log);
    const char *policies[2] = {"ppo:mlp:8", "random"};
    const char *expect[2] = {"-O1\n-O1\n", "-O1\n-O1\n-O3\n-O3\n"};
    for (int k = 0; k < 2; k++) {
        cs_config cfg;
        cs_config_init(&cfg);
        cfg.env = "cartpole";
        cfg.num_envs = 16;
        cfg.backend = CS_BACKEND_CPU;
        cfg.policy = policies[k];
        cfg.cc = wrapper;
        cfg.no_cache = true;
        cfg.tier = false;   /* the plain rollout's own level, not a quick one before it (tests/test_tier.c) */
        cs_env *env;
        cr_assert_eq(cs_env_open(&cfg, &env), CS_OK, "%s: %s", policies[k], cs_env_error(env));
        cs_env_close(env);
        char text[256];
        cli_test_read_text(log, text, sizeof text);
        cr_assert_str_eq(text, expect[k], "after %s: %s", policies[k], text);
    }
    cli_test_remove_tree(dir);
}

Test(actor_critic, bad_policies_are_refused)
{
    static const char *const bad[] = {"ppo:", "ppo:random", "ppo:mlp:0", "ppo:ppo:mlp:8", "ppo:heuristic"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        cs_config cfg;
        cs_config_init(&cfg);
        cfg.policy = bad[k];
        cs_env *env;
        cr_assert_eq(cs_env_open(&cfg, &env), CS_ERR_ARGUMENT, "%s was taken", bad[k]);
        cr_assert(strstr(cs_env_error(env), bad[k]), "%s: %s", bad[k], cs_env_error(env));
        cs_env_close(env);
    }
}
