/* The public API, as a C program linking the library uses it: opening by name
 * and path, the auto-reset conventions, truncation, errors, determinism. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cartsim.h"
#include "cli_test.h"

static cs_env *open_env(const char *name, int64_t n, cs_backend b, cs_dtype d, cs_autoreset a)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = name;
    cfg.num_envs = n;
    cfg.backend = b;
    cfg.dtype = d;
    cfg.autoreset = a;
    cs_env *env;
    cs_status s = cs_env_open(&cfg, &env);
    cr_assert_eq(s, CS_OK, "open %s: %s", name, cs_env_error(env));
    return env;
}

static const char *root(void)
{
    const char *r = getenv("CARTSIM_ROOT");
    return r ? r : ".";
}

Test(api, info_describes_cartpole)
{
    cs_env *env = open_env("cartpole", 3, CS_BACKEND_INTERP, CS_DTYPE_F64, CS_AUTORESET_NEXT_STEP);
    cs_env_info info;
    cr_assert_eq(cs_env_get_info(env, &info), CS_OK);
    cr_assert_str_eq(info.name, "cartpole");
    cr_assert_str_eq(info.title, "CartPole-v1");
    cr_assert_eq(info.num_envs, 3);
    cr_assert_eq(info.state_dim, 4);
    cr_assert_eq(info.obs_dim, 4);
    cr_assert(info.discrete);
    cr_assert_eq(info.n_actions, 2);
    cr_assert_eq(info.max_steps, 500);
    cr_assert_eq(info.reward_threshold, 475);
    cr_assert_str_eq(info.state_names[2], "theta");
    cr_assert_eq(info.backend, CS_BACKEND_INTERP);
    cs_env_close(env);
}

/* A misspelled parameter is the caller's mistake, even for a built-in
 * environment: an argument error naming it and the parameters there are. */
Test(api, misspelled_parameter_is_an_argument_error_listing_the_parameters)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = "cartpole";
    cfg.backend = CS_BACKEND_INTERP;
    cfg.params[cfg.n_params++] = "lenght=0.6";
    cs_env *env = NULL;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_ERR_ARGUMENT, "%s", env ? cs_env_error(env) : "");
    const char *msg = cs_env_error(env);
    cr_expect(strstr(msg, "unknown parameter 'lenght'"), "%s", msg);
    cr_expect(strstr(msg, "gravity") && strstr(msg, "length") && strstr(msg, "sutton_barto_reward"), "%s", msg);
    cr_expect(!strstr(msg, ".env"), "no file prefix for a built-in environment: %s", msg);
    cs_env_close(env);
}

/* What a neural-network framework takes: a row per environment. */
Test(api, obs_rows_are_the_batch_a_row_per_environment)
{
    cs_env *env = open_env("acrobot", 5, CS_BACKEND_INTERP, CS_DTYPE_F64, CS_AUTORESET_SAME_STEP);
    cr_assert_eq(cs_env_reset(env, 3), CS_OK);
    int32_t actions[5] = {0, 1, 2, 1, 0};
    for (int t = 0; t < 3; t++)
        cr_assert_eq(cs_env_step(env, actions), CS_OK);
    cs_env_info info;
    cs_env_get_info(env, &info);
    cr_assert_eq(info.obs_dim, 6);
    float rows[5 * 6], final_rows[5 * 6];
    cr_assert_eq(cs_env_obs_rows(env, rows, 5 * 6), CS_OK, "%s", cs_env_error(env));
    const float *obs = cs_env_obs(env);
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 6; k++)
            cr_assert_eq(rows[i * 6 + k], obs[k * 5 + i], "environment %d, component %d", i, k);
    cr_assert_eq(cs_env_final_obs_rows(env, final_rows, 5 * 6), CS_OK);
    const float *final_obs = cs_env_final_obs(env);
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 6; k++)
            cr_assert_eq(memcmp(&final_rows[i * 6 + k], &final_obs[k * 5 + i], sizeof(float)), 0);
    cr_assert_eq(cs_env_obs_rows(env, rows, 5 * 6 - 1), CS_ERR_ARGUMENT);
    cr_assert(strstr(cs_env_error(env), "num_envs x obs_dim = 30"), "%s", cs_env_error(env));
    cr_assert_eq(cs_env_obs_rows(env, NULL, 30), CS_ERR_ARGUMENT);
    cr_assert_eq(cs_env_obs_rows(NULL, rows, 30), CS_ERR_ARGUMENT);
    cs_env_close(env);
}

/* Typed actions: the element type is checked against the space before any
 * element is read, and each typed step steps as cs_env_step does. */
Test(api, typed_steps_check_the_action_type)
{
    cs_env *a = open_env("cartpole", 4, CS_BACKEND_INTERP, CS_DTYPE_F64, CS_AUTORESET_NEXT_STEP);
    cs_env *b = open_env("cartpole", 4, CS_BACKEND_INTERP, CS_DTYPE_F64, CS_AUTORESET_NEXT_STEP);
    cs_env_reset(a, 9);
    cs_env_reset(b, 9);
    int32_t discrete[4] = {1, 0, 1, 1};
    cr_assert_eq(cs_env_step_discrete(a, discrete), CS_OK, "%s", cs_env_error(a));
    cr_assert_eq(cs_env_step(b, discrete), CS_OK);
    double sa[16], sb[16];
    cs_env_get_state(a, sa);
    cs_env_get_state(b, sb);
    cr_assert_eq(memcmp(sa, sb, sizeof sa), 0);
    float box[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    double box64[4] = {0.5, 0.5, 0.5, 0.5};
    cr_assert_eq(cs_env_step_box(a, box), CS_ERR_ARGUMENT);
    cr_assert(strstr(cs_env_error(a), "discrete") && strstr(cs_env_error(a), "cs_env_step_discrete"), "%s",
              cs_env_error(a));
    cr_assert_eq(cs_env_step_box_f64(a, box64), CS_ERR_ARGUMENT);
    int32_t out_of_range[4] = {0, 2, 0, 0};
    cr_assert_eq(cs_env_step_discrete(a, out_of_range), CS_ERR_ARGUMENT);
    /* int64 actions step as the int32 ones; each is checked whole, before it is narrowed */
    int64_t wide[4] = {1, 0, 0, 1};
    int32_t narrow[4] = {1, 0, 0, 1};
    cr_assert_eq(cs_env_step_discrete_i64(a, wide), CS_OK, "%s", cs_env_error(a));
    cr_assert_eq(cs_env_step_discrete(b, narrow), CS_OK);
    cs_env_get_state(a, sa);
    cs_env_get_state(b, sb);
    cr_assert_eq(memcmp(sa, sb, sizeof sa), 0);
    int64_t wraps_to_0[4] = {0, 0, INT64_C(1) << 32, 0}, negative[4] = {0, -1, 0, 0};
    cr_assert_eq(cs_env_step_discrete_i64(a, wraps_to_0), CS_ERR_ARGUMENT);
    cr_assert_str_eq(cs_env_error(a), "action 4294967296 of environment 2 is not in [0, 2)");
    cr_assert_eq(cs_env_step_discrete_i64(a, negative), CS_ERR_ARGUMENT);
    cr_assert_str_eq(cs_env_error(a), "action -1 of environment 1 is not in [0, 2)");
    cr_assert_eq(cs_env_step_discrete_i64(a, NULL), CS_ERR_ARGUMENT);
    cs_env_close(a);
    cs_env_close(b);

    cs_env *p32 = open_env("pendulum", 4, CS_BACKEND_INTERP, CS_DTYPE_F64, CS_AUTORESET_NEXT_STEP);
    cs_env *p64 = open_env("pendulum", 4, CS_BACKEND_INTERP, CS_DTYPE_F64, CS_AUTORESET_NEXT_STEP);
    cs_env_reset(p32, 2);
    cs_env_reset(p64, 2);
    cr_assert_eq(cs_env_step_discrete(p32, discrete), CS_ERR_ARGUMENT);
    cr_assert_eq(cs_env_step_discrete_i64(p32, wide), CS_ERR_ARGUMENT);
    cr_assert(strstr(cs_env_error(p32), "box") && strstr(cs_env_error(p32), "cs_env_step_box"), "%s",
              cs_env_error(p32));
    float torque[4] = {-2.0f, 0.25f, 1.0f, 2.0f};
    double torque64[4] = {-2.0, 0.25, 1.0, 2.0};
    cr_assert_eq(cs_env_step_box(p32, torque), CS_OK, "%s", cs_env_error(p32));
    cr_assert_eq(cs_env_step_box_f64(p64, torque64), CS_OK, "%s", cs_env_error(p64));
    double s32[8], s64[8];   /* pendulum: th, thdot */
    cs_env_get_state(p32, s32);
    cs_env_get_state(p64, s64);
    cr_assert_eq(memcmp(s32, s64, sizeof s32), 0, "doubles step as the floats they round to");
    double huge[4] = {1e300, 0, 0, 0};
    cr_assert_eq(cs_env_step_box_f64(p64, huge), CS_ERR_ARGUMENT, "beyond float's range");
    cr_assert_eq(cs_env_step_box(p64, NULL), CS_ERR_ARGUMENT);
    cs_env_close(p32);
    cs_env_close(p64);
}

Test(api, reset_obs_is_the_state_in_float_and_in_range)
{
    cs_env *env = open_env("cartpole", 100, CS_BACKEND_CPU, CS_DTYPE_F64, CS_AUTORESET_NEXT_STEP);
    cr_assert_eq(cs_env_reset(env, 5), CS_OK);
    double state[400];
    cs_env_get_state(env, state);
    const float *obs = cs_env_obs(env);
    for (int i = 0; i < 400; i++) {
        cr_assert(state[i] >= -0.05 && state[i] < 0.05, "reset value %g outside U(-0.05, 0.05)", state[i]);
        cr_assert_eq(obs[i], (float)state[i]);
    }
    cs_env_close(env);
}

Test(api, by_path_equals_by_name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/envs/cartpole.env", root());
    cs_env *a = open_env("cartpole", 64, CS_BACKEND_CPU, CS_DTYPE_F64, CS_AUTORESET_NEXT_STEP);
    cs_env *b = open_env(path, 64, CS_BACKEND_CPU, CS_DTYPE_F64, CS_AUTORESET_NEXT_STEP);
    cs_rollout_stats sa, sb;
    cs_env_reset(a, 3);
    cs_env_reset(b, 3);
    cs_env_rollout(a, 200, &sa);
    cs_env_rollout(b, 200, &sb);
    cr_assert_eq(sa.checksum, sb.checksum);
    cr_assert_eq(sa.episodes, sb.episodes);
    cs_env_close(a);
    cs_env_close(b);
}

/* The built-in list is envs/, in name order, each with the Gymnasium id that
 * names it: what Python registers as cartsim/<id>. */
Test(api, builtin_envs_are_listed_with_their_gymnasium_ids)
{
    char title[64], previous[64] = "";
    size_t n = 0;
    bool cartpole = false, concat = false, taxi = false;
    for (const char *name; (name = cs_builtin_env_at(n, title, sizeof title)); n++) {
        cr_expect_gt(strcmp(name, previous), 0, "%s after %s", name, previous);
        snprintf(previous, sizeof previous, "%s", name);
        cartpole |= !strcmp(name, "cartpole") && !strcmp(title, "CartPole-v1");
        concat |= !strcmp(name, "cartpole_concat") && !strcmp(title, "");
        taxi |= !strcmp(name, "taxi") && !strcmp(title, "Taxi-v4");
        if (title[0]) {
            cs_env *env = open_env(title, 1, CS_BACKEND_INTERP, CS_DTYPE_F64, CS_AUTORESET_NEXT_STEP);
            cs_env_info info;
            cs_env_get_info(env, &info);
            cr_expect_str_eq(info.name, name, "%s opens %s", title, info.name);
            cs_env_close(env);
        }
    }
    cr_expect(cartpole && concat && taxi, "cartpole (CartPole-v1), cartpole_concat (no id of its own), taxi (Taxi-v4)");
    cr_expect_gt(n, 10);
    cr_expect_null(cs_builtin_env_at(n, title, sizeof title));
    cr_expect_str_eq(title, "", "past the last: no title");
    cr_expect_str_eq(cs_builtin_env_at(0, NULL, 0), "acrobot", "the title is optional");
    char small[4];
    cs_builtin_env_at(0, small, sizeof small);
    cr_expect_str_eq(small, "Acr", "cut to fit");
}

/* Push right until the pole falls: returns the step at which env 0 ended. */
static int run_until_done(cs_env *env, float *terminal_obs, double *fresh_state)
{
    int32_t actions[1] = {1};
    for (int t = 0; t < 200; t++) {
        cr_assert_eq(cs_env_step(env, actions), CS_OK, "%s", cs_env_error(env));
        if (cs_env_terminated(env)[0]) {
            memcpy(terminal_obs, cs_env_obs(env), 4 * sizeof(float));
            cs_env_get_state(env, fresh_state);
            return t;
        }
    }
    cr_assert_fail("the pole never fell");
    return -1;
}

Test(api, next_step_and_same_step_autoreset)
{
    cs_env *next = open_env("cartpole", 1, CS_BACKEND_CPU, CS_DTYPE_F64, CS_AUTORESET_NEXT_STEP);
    cs_env *same = open_env("cartpole", 1, CS_BACKEND_CPU, CS_DTYPE_F64, CS_AUTORESET_SAME_STEP);
    cs_env_reset(next, 11);
    cs_env_reset(same, 11);
    float term_next[4], term_same[4];
    double state_next[4], state_same[4];
    int t_next = run_until_done(next, term_next, state_next);
    int t_same = run_until_done(same, term_same, state_same);
    cr_assert_eq(t_next, t_same);
    /* next-step: the ending step returns the terminal observation, reward 1 */
    cr_assert_eq(cs_env_rewards(next)[0], 1.0);
    for (int k = 0; k < 4; k++)
        cr_assert_eq(term_next[k], (float)state_next[k]);
    /* same-step: the observation is already the fresh one; the terminal one is in final_obs */
    cr_assert_eq(cs_env_rewards(same)[0], 1.0);
    for (int k = 0; k < 4; k++) {
        cr_assert_eq(cs_env_final_obs(same)[k], term_next[k]);
        cr_assert_eq(term_same[k], (float)state_same[k]);
        cr_assert(fabs(state_same[k]) < 0.05, "same-step state is a fresh reset");
    }
    /* next-step: the following step ignores the action and resets, reward 0, flags clear */
    int32_t a[1] = {0};
    cr_assert_eq(cs_env_step(next, a), CS_OK);
    cr_assert_eq(cs_env_rewards(next)[0], 0.0);
    cr_assert_eq(cs_env_terminated(next)[0], 0);
    cr_assert_eq(cs_env_truncated(next)[0], 0);
    double fresh[4];
    cs_env_get_state(next, fresh);
    for (int k = 0; k < 4; k++)
        cr_assert_eq(fresh[k], state_same[k], "both conventions draw the same fresh state");
    cs_env_close(next);
    cs_env_close(same);
}

Test(api, truncation_at_500_and_both_flags)
{
    cs_env *env = open_env("cartpole", 2, CS_BACKEND_CPU, CS_DTYPE_F64, CS_AUTORESET_DISABLED);
    /* [state_dim][num_envs]: env 0 at rest in the middle; env 1 at x = 2.4 moving out */
    double state[8] = {0, 2.4, 0, 1.0, 0, 0, 0, 0};
    int32_t steps[2] = {499, 499};
    cr_assert_eq(cs_env_set_state(env, state, steps), CS_OK);
    int32_t actions[2] = {0, 1};
    cr_assert_eq(cs_env_step(env, actions), CS_OK);
    cr_assert_eq(cs_env_truncated(env)[0], 1);
    cr_assert_eq(cs_env_terminated(env)[0], 0);
    cr_assert_eq(cs_env_truncated(env)[1], 1);
    cr_assert_eq(cs_env_terminated(env)[1], 1, "both flags can be set on the last step");
    cs_env_close(env);
}

Test(api, disabled_autoreset_keeps_stepping)
{
    cs_env *env = open_env("cartpole", 1, CS_BACKEND_INTERP, CS_DTYPE_F64, CS_AUTORESET_DISABLED);
    cs_env_reset(env, 1);
    int32_t a[1] = {1};
    int done = 0;
    for (int t = 0; t < 60; t++) {
        cs_env_step(env, a);
        done += cs_env_terminated(env)[0];
    }
    cr_assert_gt(done, 1, "terminated keeps being reported: no reset happened");
    double s[4];
    cs_env_get_state(env, s);
    cr_assert(fabs(s[2]) > 0.2, "the pole kept falling");
    cs_env_close(env);
}

Test(api, errors_are_statuses_with_messages)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cs_env *env;
    cfg.env = "no_such_env";
    cr_assert_eq(cs_env_open(&cfg, &env), CS_ERR_NOT_FOUND);
    cr_assert(strstr(cs_env_error(env), "no_such_env"), "%s", cs_env_error(env));
    cr_assert(strstr(cs_env_error(env), "cartpole"), "the message lists what exists");
    cr_assert_eq(cs_env_step(env, (int32_t[]){0}), CS_ERR_STATE, "a failed handle refuses work");
    cs_env_close(env);

    cfg.env = "cartpole";
    cfg.num_envs = 0;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_ERR_ARGUMENT);
    cs_env_close(env);
    cfg.num_envs = 4;
    cfg.params[0] = "no_such_param=1";
    cfg.n_params = 1;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_ERR_ARGUMENT);
    cr_assert(strstr(cs_env_error(env), "no_such_param"), "%s", cs_env_error(env));
    cs_env_close(env);
    cfg.n_params = 0;
    cfg.backend = CS_BACKEND_CUDA;
    cs_status s = cs_env_open(&cfg, &env);
    cr_assert(s == CS_OK || s == CS_ERR_UNAVAILABLE);
    cs_env_close(env);

    cfg.backend = CS_BACKEND_INTERP;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_OK);
    int32_t bad[4] = {0, 1, 2, 0};
    cr_assert_eq(cs_env_step(env, bad), CS_ERR_STATE, "step before reset");
    cs_env_reset(env, 0);
    cr_assert_eq(cs_env_step(env, bad), CS_ERR_ARGUMENT);
    cr_assert(strstr(cs_env_error(env), "environment 2"), "%s", cs_env_error(env));
    cr_assert_eq(cs_env_step(env, NULL), CS_ERR_ARGUMENT);
    cr_assert_eq(cs_env_rollout(env, -1, NULL), CS_ERR_ARGUMENT);
    cr_assert_eq(cs_env_rollout(env, INT64_MAX, NULL), CS_ERR_LIMIT);
    cr_assert_eq(cs_env_get_state(env, NULL), CS_ERR_ARGUMENT);
    cs_env_close(env);

    cr_assert_eq(cs_env_open(NULL, NULL), CS_ERR_ARGUMENT);
    cr_assert_eq(cs_env_reset(NULL, 0), CS_ERR_ARGUMENT);
    cr_assert_eq(cs_env_step(NULL, bad), CS_ERR_ARGUMENT);
    cr_assert_null(cs_env_obs(NULL));
    cr_assert_str_eq(cs_status_string(CS_ERR_PARSE), "parse error");
    cs_env_close(NULL);
}

/* The item queries (state variables, observations, info values) describe a
 * scalar as rank 0 and 1x1x1, an array by its dims padded with 1, and refuse
 * an item past the last, a missing out and a failed handle alike. */
Test(api, items_describe_their_shapes_and_refuse_what_is_not_there)
{
    cs_env *env = open_env("breakout", 2, CS_BACKEND_INTERP, CS_DTYPE_F32, CS_AUTORESET_NEXT_STEP);
    cs_env_info info;
    cr_assert_eq(cs_env_get_info(env, &info), CS_OK);
    cs_state_info v;
    cr_assert_eq(cs_env_state_info(env, 0, &v), CS_OK, "%s", cs_env_error(env));
    cr_assert_str_eq(v.name, "time");
    cr_assert(v.type == CS_VALUE_INT && v.rank == 0 && v.dims[0] == 1 && v.dims[1] == 1 && v.dims[2] == 1);
    cr_assert(v.first == 0 && v.size == 1);
    cr_assert_eq(cs_env_state_info(env, 5, &v), CS_OK, "%s", cs_env_error(env));
    cr_assert_str_eq(v.name, "brick_map");
    cr_assert(v.type == CS_VALUE_REAL && v.rank == 2 && v.dims[0] == 10 && v.dims[1] == 10 && v.dims[2] == 1,
              "rank %u dims %u %u %u", v.rank, v.dims[0], v.dims[1], v.dims[2]);
    cr_assert(v.first == 5 && v.size == 100);
    cs_obs_info o;
    cr_assert_eq(cs_env_obs_info(env, 0, &o), CS_OK, "%s", cs_env_error(env));
    cr_assert(o.space == CS_SPACE_BOX && o.rank == 3 && o.dims[0] == 10 && o.dims[1] == 10 && o.dims[2] == 4,
              "rank %u dims %u %u %u", o.rank, o.dims[0], o.dims[1], o.dims[2]);
    cr_assert(o.offset == 0 && o.size == 400);

    cr_assert_eq(cs_env_state_info(env, info.n_state_vars, &v), CS_ERR_ARGUMENT);
    cr_assert_str_eq(cs_env_error(env), "state variable 10 of 10");
    cr_assert_eq(cs_env_obs_info(env, info.n_obs_items, &o), CS_ERR_ARGUMENT);
    cr_assert_str_eq(cs_env_error(env), "observation 1 of 1");
    cs_info_item_desc d;
    cr_assert_eq(cs_env_info_item(env, info.n_info_items, &d), CS_ERR_ARGUMENT);
    cr_assert_str_eq(cs_env_error(env), "info value 1 of 1");
    cr_assert_eq(cs_env_obs_info(env, 0, NULL), CS_ERR_ARGUMENT);
    cr_assert_str_eq(cs_env_error(env), "out is NULL");
    cs_env_close(env);
    cr_assert_eq(cs_env_state_info(NULL, 0, &v), CS_ERR_ARGUMENT);

    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = "no_such_env";
    cr_assert_eq(cs_env_open(&cfg, &env), CS_ERR_NOT_FOUND);
    cr_assert_eq(cs_env_info_item(env, 0, &d), CS_ERR_STATE, "a failed handle describes nothing");
    cs_env_close(env);
}

Test(api, malformed_source_gives_file_line_col)
{
    char path[] = "/tmp/cartsim-api-XXXXXX.env";
    int fd = mkstemps(path, 4);
    cr_assert_geq(fd, 0);
    const char *src = "env broken \"Broken-v0\"\nstate x\naction discrete 2\nobserve x\nreset {\n  x = 0\n}\nstep {\n  x' = x + nope\n}\n";
    cr_assert_eq(write(fd, src, strlen(src)), (ssize_t)strlen(src));
    close(fd);
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = path;
    cs_env *env;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_ERR_PARSE);
    cr_assert(strstr(cs_env_error(env), ":9:"), "names the line: %s", cs_env_error(env));
    cr_assert(strstr(cs_env_error(env), "nope"), "names the problem: %s", cs_env_error(env));
    cs_env_close(env);
    unlink(path);
}

Test(api, rollouts_are_deterministic_and_seeded)
{
    uint64_t sums[4];
    const cs_backend backends[2] = {CS_BACKEND_CPU, CS_BACKEND_INTERP};
    for (int b = 0; b < 2; b++)
        for (int seed = 0; seed < 2; seed++) {
            cs_env *env = open_env("cartpole", 300, backends[b], CS_DTYPE_F64, CS_AUTORESET_NEXT_STEP);
            cs_rollout_stats st;
            cs_env_reset(env, 100 + seed);
            cr_assert_eq(cs_env_rollout(env, 300, &st), CS_OK);
            cr_assert_gt(st.episodes, 0);
            cr_assert(st.mean_return > 5 && st.mean_return < 100, "random CartPole returns ~22: %g", st.mean_return);
            sums[2 * b + seed] = st.checksum;
            cs_env_close(env);
        }
    cr_assert_eq(sums[0], sums[2], "cpu and interp agree in f64");
    cr_assert_eq(sums[1], sums[3]);
    cr_assert_neq(sums[0], sums[1], "a different seed gives a different run");
}

Test(api, chunked_rollout_equals_one_rollout)
{
    cs_env *a = open_env("cartpole", 257, CS_BACKEND_CPU, CS_DTYPE_F32, CS_AUTORESET_NEXT_STEP);
    cs_env *b = open_env("cartpole", 257, CS_BACKEND_CPU, CS_DTYPE_F32, CS_AUTORESET_NEXT_STEP);
    cs_rollout_stats sa, sb;
    cs_env_reset(a, 9);
    cs_env_reset(b, 9);
    cs_env_rollout(a, 1000, &sa);
    for (int k = 0; k < 10; k++)
        cs_env_rollout(b, 100, &sb);
    cr_assert_eq(sa.checksum, sb.checksum);
    cs_env_close(a);
    cs_env_close(b);
}

/* cs_env_step_one, a Gymnasium Env's step in one call: the same step as
 * cs_env_step and its results as the accessors give them, for a discrete
 * and a box action space; a batch of two is refused, a bad action too. */
Test(api, step_one_is_a_step_and_its_results_in_one_call)
{
    const char *names[] = {"cartpole", "pendulum"};
    for (int e = 0; e < 2; e++) {
        cs_env *one = open_env(names[e], 1, CS_BACKEND_CPU, CS_DTYPE_F32, CS_AUTORESET_NEXT_STEP);
        cs_env *ref = open_env(names[e], 1, CS_BACKEND_CPU, CS_DTYPE_F32, CS_AUTORESET_NEXT_STEP);
        cs_env_reset(one, 3);
        cs_env_reset(ref, 3);
        for (int t = 0; t < 600; t++) {
            int32_t discrete = t % 3 == 0;
            float box = (float)(t % 7) / 3.0f - 1.0f;
            const void *action = e == 0 ? (const void *)&discrete : (const void *)&box;
            float obs[8];
            double reward;
            uint8_t terminated = 9, truncated = 9;
            cr_assert_eq(cs_env_step_one(one, action, obs, &reward, &terminated, &truncated), CS_OK, "%s",
                         cs_env_error(one));
            cr_assert_eq(cs_env_step(ref, action), CS_OK);
            cs_env_info info;
            cs_env_get_info(ref, &info);
            for (unsigned k = 0; k < info.obs_dim; k++)
                cr_assert_eq(obs[k], cs_env_obs(ref)[k], "%s step %d obs %u", names[e], t, k);
            cr_assert_eq(reward, cs_env_rewards(ref)[0]);
            cr_assert_eq(terminated, cs_env_terminated(ref)[0]);
            cr_assert_eq(truncated, cs_env_truncated(ref)[0]);
        }
        cs_env_close(one);
        cs_env_close(ref);
    }
    cs_env *two = open_env("cartpole", 2, CS_BACKEND_CPU, CS_DTYPE_F32, CS_AUTORESET_NEXT_STEP);
    cs_env_reset(two, 1);
    int32_t a[2] = {0, 1};
    float obs[4];
    double reward;
    uint8_t te, tr;
    cr_assert_eq(cs_env_step_one(two, a, obs, &reward, &te, &tr), CS_ERR_ARGUMENT);
    cr_assert(strstr(cs_env_error(two), "one environment"), "%s", cs_env_error(two));
    cs_env_close(two);
    cs_env *one = open_env("cartpole", 1, CS_BACKEND_CPU, CS_DTYPE_F32, CS_AUTORESET_NEXT_STEP);
    cs_env_reset(one, 1);
    int32_t bad = 2;
    cr_assert_eq(cs_env_step_one(one, &bad, obs, &reward, &te, &tr), CS_ERR_ARGUMENT);
    cr_assert_eq(cs_env_step_one(one, a, NULL, &reward, &te, &tr), CS_ERR_ARGUMENT);
    cs_env_close(one);
}

/* A rollout in parts (cs_env_rollout_part, cartsim run's chunks): the
 * same episodes, no checksum per part (0), and the checksum taken once
 * at the end (cs_env_checksum_part) is the one-call rollout's. */
Test(api, rollout_parts_leave_the_checksum_to_the_end)
{
    cs_env *a = open_env("cartpole", 257, CS_BACKEND_CPU, CS_DTYPE_F32, CS_AUTORESET_NEXT_STEP);
    cs_env *b = open_env("cartpole", 257, CS_BACKEND_CPU, CS_DTYPE_F32, CS_AUTORESET_NEXT_STEP);
    cs_rollout_stats sa, sb;
    cs_env_reset(a, 9);
    cs_env_reset(b, 9);
    cr_assert_eq(cs_env_rollout(a, 1000, &sa), CS_OK);
    int64_t episodes = 0;
    for (int k = 0; k < 10; k++) {
        cr_assert_eq(cs_env_rollout_part(b, 100, &sb), CS_OK);
        cr_assert_eq(sb.checksum, 0, "part %d hashed the batch", k);
        episodes += sb.episodes;
    }
    cr_assert_eq(episodes, sa.episodes);
    uint64_t h = CS_CHECKSUM_START;
    for (unsigned p = 0; p < cs_env_checksum_parts(b); p++)
        cr_assert_eq(cs_env_checksum_part(b, p, &h), CS_OK);
    cr_assert_eq(h, sa.checksum);
    cs_env_close(a);
    cs_env_close(b);
}

/* cs_config.persistent on the backends this machine has: info reports it
 * (fusion full only: rules and none launch every kernel every step), a
 * rollout launches once or once per unroll steps, and the states are the
 * same bits either way, across calls that do not divide by the unroll. */
Test(api, persistent_follows_the_config_on_every_backend, .timeout = 300)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cr_assert(cfg.persistent, "persistent by default");
    const cs_backend backends[] = {CS_BACKEND_CPU, CS_BACKEND_INTERP};
    const cs_fusion fusions[] = {CS_FUSION_FULL, CS_FUSION_RULES, CS_FUSION_NONE};
    uint64_t first = 0;
    for (int b = 0; b < 2; b++)
        for (int f = 0; f < 3; f++)
            for (int persistent = 1; persistent >= 0; persistent--) {
                cs_config_init(&cfg);
                cfg.env = "cartpole";
                cfg.num_envs = 300;   /* two 256-lane blocks: two threads */
                cfg.threads = 2;
                cfg.backend = backends[b];
                cfg.fusion = fusions[f];
                cfg.dtype = CS_DTYPE_F64;
                cfg.unroll = 10;
                cfg.persistent = persistent;
                cs_env *env;
                cr_assert_eq(cs_env_open(&cfg, &env), CS_OK, "%s", cs_env_error(env));
                cs_env_info info;
                cr_assert_eq(cs_env_get_info(env, &info), CS_OK);
                const char *what = cs_fusion_name(fusions[f]);
                cr_expect_eq(info.persistent, fusions[f] == CS_FUSION_FULL && persistent, "%s %s, persistent %d",
                             cs_backend_name(backends[b]), what, persistent);
                cs_rollout_stats s1, s2;
                cr_assert_eq(cs_env_reset(env, 3), CS_OK);
                cr_assert_eq(cs_env_rollout(env, 95, &s1), CS_OK, "%s", cs_env_error(env));
                cr_assert_eq(cs_env_rollout(env, 7, &s2), CS_OK, "%s", cs_env_error(env));
                int64_t k = info.kernels_per_step;
                int64_t want1 = fusions[f] != CS_FUSION_FULL ? 95 * k : persistent ? 1 : 10;
                int64_t want2 = fusions[f] != CS_FUSION_FULL ? 7 * k : 1;
                cr_expect_eq(s1.launches, want1, "%s %s, persistent %d: %lld launches, want %lld",
                             cs_backend_name(backends[b]), what, persistent, (long long)s1.launches,
                             (long long)want1);
                cr_expect_eq(s2.launches, want2, "%s %s, persistent %d: then %lld launches, want %lld",
                             cs_backend_name(backends[b]), what, persistent, (long long)s2.launches,
                             (long long)want2);
                if (!first)
                    first = s2.checksum;
                cr_expect_eq(s2.checksum, first, "%s %s, persistent %d: checksum %016llx, want %016llx",
                             cs_backend_name(backends[b]), what, persistent, (unsigned long long)s2.checksum,
                             (unsigned long long)first);
                cs_env_close(env);
            }
}

Test(api, open_step_close_cycles)
{
    for (int k = 0; k < 100; k++) {
        cs_env *env = open_env(k % 2 ? "cartpole" : "cartpole_concat", 4, CS_BACKEND_CPU, CS_DTYPE_F32,
                               CS_AUTORESET_SAME_STEP);
        cs_env_reset(env, (uint64_t)k);
        int32_t a[4] = {0, 1, 0, 1};
        for (int t = 0; t < 20; t++)
            cr_assert_eq(cs_env_step(env, a), CS_OK);
        cs_env_close(env);
    }
}

Test(api, the_readme_example_runs)
{
    const char *ex = getenv("CARTSIM_EXAMPLE");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s", ex ? ex : "build/example");
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    char line[256] = "";
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_assert_eq(pclose(f), 0);
    cr_assert(strstr(line, "return") && strstr(line, "episodes"), "example printed: %s", line);
}

Test(api, make_install_gives_a_usable_library, .timeout = 120)
{
    const char *bin = getenv("CARTSIM_BIN");
    if (!bin)
        cr_skip_test("CARTSIM_BIN not set: run through make test");
    char build[4096], dest[] = "/tmp/cartsim-install-XXXXXX", cmd[16384];
    snprintf(build, sizeof build, "%s", bin);
    *strrchr(build, '/') = 0;   /* the build directory holding cartsim */
    if (strcmp(strrchr(build, '/') ? strrchr(build, '/') + 1 : build, "build"))
        cr_skip_test("install is checked by the normal build (this is %s)", build);
    cr_assert_not_null(mkdtemp(dest));
    /* No PKG_CONFIG_SYSROOT_DIR: cartsim.pc finds its prefix from where it lies. */
    snprintf(cmd, sizeof cmd,
             "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C '%s' install BUILD='%s' PREFIX=/usr DESTDIR='%s' >/dev/null 2>&1 && "
             "cc '%s/tests/example.c' $(PKG_CONFIG_PATH='%s/usr/lib/pkgconfig' pkg-config --cflags --libs cartsim) "
             "-o '%s/example' && "
             "readelf -d '%s/example' | grep -q 'NEEDED.*\\[libcartsim.so.%d\\]' && "
             "LD_LIBRARY_PATH='%s/usr/lib' '%s/example' | grep -q episodes && "
             "test -x '%s/usr/bin/cartsim' && test -f '%s/usr/share/cartsim/envs/cartpole.env'",
             root(), build, dest, root(), dest, dest, dest, CS_VERSION_MAJOR, dest, dest, dest, dest);
    int rc = system(cmd);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dest);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(rc, 0, "install into a DESTDIR, compile the example with pkg-config, run it");
}

/* What make prints for one object into a fresh build folder, V=1 or not. */
static void make_output(const char *build, const char *verbose, char *out, size_t size)
{
    char args[4200];
    snprintf(args, sizeof args, "%s '%s/jit/text.o'", verbose, build);
    cli_test_make(build, args, out, size);
}

/* A build says a line per file ("  CC      jit/text.c"), the whole command
 * with V=1: the short form keeps make run's result on the first screen. */
Test(api, make_prints_a_short_line_per_file_and_the_commands_with_v1, .timeout = 120)
{
    char build[] = "/tmp/cartsim-short-build-XXXXXX", out[16384], cmd[4200];
    cr_assert_not_null(mkdtemp(build));
    make_output(build, "", out, sizeof out);
    char *short_form = strdup(out);
    snprintf(cmd, sizeof cmd, "rm -f '%s/jit/text.o'", build);
    cr_assert_eq(system(cmd), 0);
    make_output(build, "V=1", out, sizeof out);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", build);
    cr_assert_eq(system(cmd), 0);
    cr_assert_str_eq(short_form, "  CC      jit/text.c\n");
    cr_assert(strstr(out, " -c jit/text.c -o ") && strstr(out, "-std=c11"), "V=1 printed:\n%s", out);
    free(short_form);
}

/* cs_config.math: the fast mode is reported, compiled into a kernel of its
 * own (two modes, two cache entries), changes f64's results and not f32's,
 * and gives the cpu backend's bits on the interpreter too. */
static cs_env *open_math(cs_math math, cs_dtype d, cs_backend b, const char *cache_dir)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = "pendulum";   /* sin, cos, pow and % */
    cfg.num_envs = 64;
    cfg.dtype = d;
    cfg.backend = b;
    cfg.math = math;
    cfg.cache_dir = cache_dir;
    cs_env *env;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_OK, "%s", cs_env_error(env));
    return env;
}

static uint64_t math_checksum(cs_env *env)
{
    cs_rollout_stats st;
    cr_assert_eq(cs_env_reset(env, 5), CS_OK);
    cr_assert_eq(cs_env_rollout(env, 300, &st), CS_OK, "%s", cs_env_error(env));
    return st.checksum;
}

Test(api, fast_math_is_reported_cached_apart_and_changes_only_f64, .timeout = 300)
{
    char dir[] = "/tmp/cartsim-math-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    cs_config defaults;
    cs_config_init(&defaults);
    cr_assert_eq(defaults.math, CS_MATH_EXACT, "exact by default");
    uint64_t sums[2][2];   /* [dtype][math] */
    for (int d = 0; d < 2; d++)
        for (int m = 0; m < 2; m++) {
            cs_env *env = open_math((cs_math)m, (cs_dtype)d, CS_BACKEND_CPU, dir);
            cs_env_info info;
            cr_assert_eq(cs_env_get_info(env, &info), CS_OK);
            cr_assert_eq(info.math, d == CS_DTYPE_F64 ? (cs_math)m : CS_MATH_EXACT, "what ran");
            /* f32 ignores the setting; f64's fast kernel is a new one */
            cr_assert_eq(info.cache_hit, d == 0 && m == 1, "dtype %d math %d: cache_hit %d", d, m, info.cache_hit);
            sums[d][m] = math_checksum(env);
            cs_env_close(env);
            env = open_math((cs_math)m, (cs_dtype)d, CS_BACKEND_CPU, dir);
            cr_assert_eq(cs_env_get_info(env, &info), CS_OK);
            cr_assert(info.cache_hit, "dtype %d math %d: the second open hits its own entry", d, m);
            cs_env_close(env);
            env = open_math((cs_math)m, (cs_dtype)d, CS_BACKEND_INTERP, dir);
            cr_assert_eq(math_checksum(env), sums[d][m], "dtype %d math %d: the interpreter differs", d, m);
            cs_env_close(env);
        }
    cr_assert_eq(sums[0][0], sums[0][1], "f32 does not depend on the math setting");
    cr_assert_neq(sums[1][0], sums[1][1], "f64's fast functions are not glibc's: some bits differ");
    cs_config bad;
    cs_config_init(&bad);
    cr_assert_eq(cs_config_set(&bad, "math", "sloppy", NULL, 0), CS_ERR_ARGUMENT);
    cr_assert_eq(cs_config_set(&bad, "math", "fast", NULL, 0), CS_OK);
    cr_assert_eq(bad.math, CS_MATH_FAST);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

/* Two cached kernels loaded through the same descriptor number: glibc finds
 * a loaded object by its name first, so while the first handle is open,
 * "/proc/self/fd/N" once gave the second handle the first one's kernel
 * (Pendulum's three observations written over MountainCar's two, a heap
 * overflow found from Python). */
Test(api, a_second_cached_kernel_is_its_own_while_the_first_is_loaded)
{
    const char *names[] = {"cartpole", "pendulum", "mountain_car"};
    for (int k = 0; k < 3; k++) /* all in the cache */
        cs_env_close(open_env(names[k], 16, CS_BACKEND_CPU, CS_DTYPE_F32, CS_AUTORESET_NEXT_STEP));
    /* A handle keeps its cache directory's descriptor: closing the one opened
     * before Pendulum's frees a lower number, so MountainCar's directory takes
     * it and its entry the number Pendulum's kernel was loaded through. */
    cs_env *before = open_env("cartpole", 16, CS_BACKEND_CPU, CS_DTYPE_F32, CS_AUTORESET_NEXT_STEP);
    cs_env *first = open_env("pendulum", 16, CS_BACKEND_CPU, CS_DTYPE_F32, CS_AUTORESET_NEXT_STEP);
    cs_env_close(before);
    cs_env *second = open_env("mountain_car", 16, CS_BACKEND_CPU, CS_DTYPE_F32, CS_AUTORESET_NEXT_STEP);
    cs_env *interp = open_env("mountain_car", 16, CS_BACKEND_INTERP, CS_DTYPE_F32, CS_AUTORESET_NEXT_STEP);
    cr_assert_eq(cs_env_reset(first, 7), CS_OK);
    cr_assert_eq(cs_env_reset(second, 7), CS_OK);
    cr_assert_eq(cs_env_reset(interp, 7), CS_OK);
    cs_rollout_stats a, b;
    cr_assert_eq(cs_env_rollout(second, 300, &a), CS_OK);
    cr_assert_eq(cs_env_rollout(interp, 300, &b), CS_OK);
    cr_assert_eq(a.checksum, b.checksum, "mountain_car ran another kernel: checksum %llx, the interpreter's %llx",
                 (unsigned long long)a.checksum, (unsigned long long)b.checksum);
    cs_env_close(interp);
    cs_env_close(second);
    cs_env_close(first);
}

/* Two handles of one kernel open at once in a process (a trainer's
 * training and evaluation batches): the second loads the cached entry (the
 * object the first loaded, glibc matching its device and inode), rather
 * than compiling it again; and a different kernel opened after them is its
 * own, not an object loaded through the same descriptor number. */
Test(api, a_second_handle_of_an_open_kernel_hits_the_cache, .timeout = 300)
{
    char dir[] = "/tmp/cartsim-twice-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    cs_env *a = open_math(CS_MATH_EXACT, CS_DTYPE_F32, CS_BACKEND_CPU, dir);
    cs_env *b = open_math(CS_MATH_EXACT, CS_DTYPE_F32, CS_BACKEND_CPU, dir);
    cs_env_info ia, ib;
    cr_assert_eq(cs_env_get_info(a, &ia), CS_OK);
    cr_assert_eq(cs_env_get_info(b, &ib), CS_OK);
    cr_assert_not(ia.cache_hit);
    cr_assert(ib.cache_hit, "the second handle compiled again (%.0f ms)", ib.compile_ms);
    uint64_t sa = math_checksum(a), sb = math_checksum(b);
    cr_assert_eq(sa, sb);
    cs_env *c = open_math(CS_MATH_EXACT, CS_DTYPE_F64, CS_BACKEND_CPU, dir);
    cs_env *c2 = open_math(CS_MATH_EXACT, CS_DTYPE_F64, CS_BACKEND_CPU, dir);
    cs_env_info ic;
    cr_assert_eq(cs_env_get_info(c2, &ic), CS_OK);
    cr_assert(ic.cache_hit);
    cr_assert_neq(math_checksum(c2), sa, "the f64 kernel is not the f32 one");
    cr_assert_eq(math_checksum(c2), math_checksum(c));
    cs_env_close(a);
    cs_env_close(b);
    cs_env_close(c);
    cs_env_close(c2);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}
