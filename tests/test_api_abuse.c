/* Every public function of cartsim.h called the wrong way: NULL handles and
 * pointers, sizes out of range, enum values cast from ints, handles that
 * failed to open. Each call must return its status (or NULL, or a string)
 * and leave the handle usable; nothing may crash, print, or leak (make asan
 * runs this file under LeakSanitizer).
 *
 * A closed handle is freed memory, as after free(): no C API can tell it
 * from a live one, and AddressSanitizer is what catches such a use.
 *
 * CARTSIM_REPORT=1 prints how many bad calls each test made (docs/hardening.md). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cartsim.h"

static int bad_calls;

static void report(const char *test)
{
    if (getenv("CARTSIM_REPORT"))
        fprintf(stderr, "api abuse: %s: %d bad calls\n", test, bad_calls);
}

/* One bad call and the status it must give, with the handle's message. */
#define BAD(want, env, call)                                                                                \
    do {                                                                                                    \
        bad_calls++;                                                                                        \
        cs_status got_ = (call);                                                                            \
        cr_expect_eq(got_, (want), "%s gave '%s', not '%s' (%s)", #call, cs_status_string(got_),            \
                     cs_status_string(want), cs_env_error(env));                                            \
    } while (0)

static cs_config config(cs_backend b, int64_t n)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = "cartpole";
    cfg.backend = b;
    cfg.num_envs = n;
    return cfg;
}

static cs_env *open_ok(const cs_config *cfg)
{
    cs_env *env = NULL;
    cs_status s = cs_env_open(cfg, &env);
    cr_assert_eq(s, CS_OK, "open: %s", cs_env_error(env));
    return env;
}

/* Opening with `cfg` fails with `want`; the failed handle holds a message,
 * refuses every call with CS_ERR_STATE, and closes. */
static void open_fails(const cs_config *cfg, cs_status want, const char *what)
{
    cs_env *env = NULL;
    bad_calls++;
    cs_status s = cs_env_open(cfg, &env);
    cr_expect_eq(s, want, "%s: gave '%s', not '%s' (%s)", what, cs_status_string(s), cs_status_string(want),
                 cs_env_error(env));
    cr_assert_not_null(env, "%s: a failed open still gives a handle", what);
    cr_expect_neq(cs_env_error(env)[0], '\0', "%s: no message", what);
    cs_env_close(env);
}

static void refuses_everything(cs_env *env)
{
    int32_t actions[4] = {0, 0, 0, 0};
    double state[64] = {0};
    cs_env_info info;
    cs_rollout_stats stats;
    BAD(CS_ERR_STATE, env, cs_env_get_info(env, &info));
    BAD(CS_ERR_STATE, env, cs_env_reset(env, 1));
    BAD(CS_ERR_STATE, env, cs_env_step(env, actions));
    BAD(CS_ERR_STATE, env, cs_env_get_state(env, state));
    BAD(CS_ERR_STATE, env, cs_env_set_state(env, state, NULL));
    BAD(CS_ERR_STATE, env, cs_env_rollout(env, 10, &stats));
    bad_calls += 5;
    cr_expect_null(cs_env_obs(env));
    cr_expect_null(cs_env_final_obs(env));
    cr_expect_null(cs_env_rewards(env));
    cr_expect_null(cs_env_terminated(env));
    cr_expect_null(cs_env_truncated(env));
    cr_expect(strstr(cs_env_error(env), "failed"), "message: %s", cs_env_error(env));
}

Test(api_abuse, null_everywhere)
{
    cs_env_info info;
    cs_rollout_stats stats;
    int32_t actions[1] = {0};
    double state[4] = {0};
    BAD(CS_ERR_ARGUMENT, NULL, cs_env_open(NULL, NULL));
    cs_config cfg = config(CS_BACKEND_INTERP, 1);
    BAD(CS_ERR_ARGUMENT, NULL, cs_env_open(&cfg, NULL));
    cs_env *env = NULL;
    BAD(CS_ERR_ARGUMENT, env, cs_env_open(NULL, &env));
    cr_assert_not_null(env);
    refuses_everything(env);
    cs_env_close(env);

    BAD(CS_ERR_ARGUMENT, NULL, cs_env_get_info(NULL, &info));
    BAD(CS_ERR_ARGUMENT, NULL, cs_env_reset(NULL, 0));
    BAD(CS_ERR_ARGUMENT, NULL, cs_env_step(NULL, actions));
    BAD(CS_ERR_ARGUMENT, NULL, cs_env_get_state(NULL, state));
    BAD(CS_ERR_ARGUMENT, NULL, cs_env_set_state(NULL, state, NULL));
    BAD(CS_ERR_ARGUMENT, NULL, cs_env_rollout(NULL, 1, &stats));
    bad_calls += 8;
    cr_expect_null(cs_env_obs(NULL));
    cr_expect_null(cs_env_final_obs(NULL));
    cr_expect_null(cs_env_rewards(NULL));
    cr_expect_null(cs_env_terminated(NULL));
    cr_expect_null(cs_env_truncated(NULL));
    cr_expect_not_null(cs_env_error(NULL));
    cs_env_close(NULL);
    cs_config_init(NULL);
    /* a void function checks its pointers too: what it cannot store it leaves */
    int64_t first = -1, count = -1;
    cs_split_share(10, 5, 2, NULL, NULL);
    cs_split_share(10, 1, 2, &first, NULL);
    cr_expect_eq(first, 5);
    cs_split_share(10, 1, 2, NULL, &count);
    cr_expect_eq(count, 5);
    cs_split_share(-7, 0, 2, &first, &count);   /* no items, not a negative share */
    cr_expect(first == 0 && count == 0, "%lld %lld", (long long)first, (long long)count);

    env = open_ok(&cfg);
    BAD(CS_ERR_ARGUMENT, env, cs_env_get_info(env, NULL));
    BAD(CS_ERR_STATE, env, cs_env_step(env, actions));          /* before reset */
    BAD(CS_ERR_STATE, env, cs_env_rollout(env, 1, &stats));
    BAD(CS_ERR_STATE, env, cs_env_get_state(env, state));      /* zeros were no state */
    BAD(CS_OK, env, cs_env_reset(env, 0));
    BAD(CS_ERR_ARGUMENT, env, cs_env_step(env, NULL));
    BAD(CS_ERR_ARGUMENT, env, cs_env_get_state(env, NULL));
    BAD(CS_ERR_ARGUMENT, env, cs_env_set_state(env, NULL, NULL));
    BAD(CS_OK, env, cs_env_rollout(env, 3, NULL));                /* stats are optional */
    BAD(CS_OK, env, cs_env_step(env, actions));                   /* still usable */
    cs_env_close(env);

    char *text = NULL, error[256];
    BAD(CS_ERR_ARGUMENT, NULL, cs_dump(&cfg, NULL, "text", NULL, error, sizeof error));
    cr_expect_str_eq(error, "text is NULL");
    BAD(CS_ERR_ARGUMENT, NULL, cs_dump(NULL, NULL, "text", &text, error, sizeof error));
    cr_expect_null(text);
    cr_expect_str_eq(error, "no configuration given");
    BAD(CS_ERR_ARGUMENT, NULL, cs_dump(NULL, NULL, "text", &text, NULL, 0));   /* no message wanted */
    report("null_everywhere");
}

Test(api_abuse, names_of_values_out_of_range)
{
    const int bad_values[] = {-1, -2147483647 - 1, CS_STATUS_COUNT, 99, 2147483647};
    for (size_t k = 0; k < sizeof bad_values / sizeof *bad_values; k++) {
        bad_calls += 3;
        cr_expect_not_null(cs_status_string((cs_status)bad_values[k]));
        cr_expect_not_null(cs_backend_name((cs_backend)bad_values[k]));
        cr_expect_not_null(cs_fusion_name((cs_fusion)bad_values[k]));
    }
    cr_expect_str_eq(cs_version(), CS_VERSION_STRING);
    report("names_of_values_out_of_range");
}

Test(api_abuse, configurations_out_of_range)
{
    static const int64_t bad_counts[] = {0, -1, INT64_MIN, (int64_t)INT32_MAX + 1, INT64_MAX};
    for (size_t k = 0; k < sizeof bad_counts / sizeof *bad_counts; k++) {
        cs_config cfg = config(CS_BACKEND_INTERP, bad_counts[k]);
        open_fails(&cfg, CS_ERR_ARGUMENT, "num_envs");
    }
    static const int bad_enums[] = {-1, 4, 99, -2147483647 - 1};
    for (size_t k = 0; k < sizeof bad_enums / sizeof *bad_enums; k++) {
        cs_config cfg = config(CS_BACKEND_INTERP, 4);
        cfg.backend = (cs_backend)bad_enums[k];
        open_fails(&cfg, CS_ERR_ARGUMENT, "backend");
        cfg = config(CS_BACKEND_INTERP, 4);
        cfg.fusion = (cs_fusion)bad_enums[k];
        open_fails(&cfg, CS_ERR_ARGUMENT, "fusion");
        cfg = config(CS_BACKEND_INTERP, 4);
        cfg.dtype = (cs_dtype)(bad_enums[k] == 4 ? 2 : bad_enums[k]);
        open_fails(&cfg, CS_ERR_ARGUMENT, "dtype");
        cfg = config(CS_BACKEND_INTERP, 4);
        cfg.autoreset = (cs_autoreset)(bad_enums[k] == 4 ? 3 : bad_enums[k]);
        open_fails(&cfg, CS_ERR_ARGUMENT, "autoreset");
    }
    static const int bad_unrolls[] = {0, -1, 1025, 2147483647};
    for (size_t k = 0; k < sizeof bad_unrolls / sizeof *bad_unrolls; k++) {
        cs_config cfg = config(CS_BACKEND_INTERP, 4);
        cfg.unroll = bad_unrolls[k];
        open_fails(&cfg, CS_ERR_ARGUMENT, "unroll");
    }
    static const int bad_threads[] = {-1, 257, -2147483647 - 1};
    for (size_t k = 0; k < sizeof bad_threads / sizeof *bad_threads; k++) {
        cs_config cfg = config(CS_BACKEND_INTERP, 4);
        cfg.threads = bad_threads[k];
        open_fails(&cfg, CS_ERR_ARGUMENT, "threads");
        cfg = config(CS_BACKEND_INTERP, 4);
        cfg.block = bad_threads[k] == 257 ? 1025 : bad_threads[k];
        open_fails(&cfg, CS_ERR_ARGUMENT, "block");
    }
    static const int bad_param_counts[] = {-1, CS_MAX_PARAM_OVERRIDES + 1, 2147483647};
    for (size_t k = 0; k < sizeof bad_param_counts / sizeof *bad_param_counts; k++) {
        cs_config cfg = config(CS_BACKEND_INTERP, 4);
        cfg.n_params = bad_param_counts[k];
        open_fails(&cfg, CS_ERR_ARGUMENT, "n_params");
    }
    cs_config cfg = config(CS_BACKEND_INTERP, 4);
    cfg.n_params = 1;   /* params[0] left NULL */
    open_fails(&cfg, CS_ERR_ARGUMENT, "a NULL override");
    static const char *const bad_overrides[] = {"", "=", "length", "length=", "length=abc", "length=nan",
                                                "length=inf", "length=2:1", "length=1:", "1x=2",
                                                "length=1e999", "gravity=1=2"};
    for (size_t k = 0; k < sizeof bad_overrides / sizeof *bad_overrides; k++) {
        cfg = config(CS_BACKEND_INTERP, 4);
        cfg.params[0] = bad_overrides[k];
        cfg.n_params = 1;
        open_fails(&cfg, CS_ERR_ARGUMENT, bad_overrides[k]);
    }
    cfg = config(CS_BACKEND_INTERP, 4);
    cfg.params[0] = "no_such_param=1";
    cfg.n_params = 1;
    open_fails(&cfg, CS_ERR_ARGUMENT, "an unknown parameter");
    cfg.params[1] = "no_such_param=1";
    cfg.params[0] = "length=1";
    cfg.params[1] = "length=2";
    cfg.n_params = 2;
    open_fails(&cfg, CS_ERR_ARGUMENT, "a parameter overridden twice");

    static const char *const bad_envs[] = {"", "no_such_env", "../../etc/passwd", "/nonexistent/x.env",
                                           "/dev/null", "/", "cartpole\n"};
    for (size_t k = 0; k < sizeof bad_envs / sizeof *bad_envs; k++) {
        cfg = config(CS_BACKEND_INTERP, 4);
        cfg.env = bad_envs[k];
        cs_env *env = NULL;
        bad_calls++;
        cs_status s = cs_env_open(&cfg, &env);
        cr_expect(s == CS_ERR_ARGUMENT || s == CS_ERR_NOT_FOUND || s == CS_ERR_PARSE || s == CS_ERR_IO,
                  "env '%s' gave '%s' (%s)", bad_envs[k], cs_status_string(s), cs_env_error(env));
        refuses_everything(env);
        cs_env_close(env);
    }
    cfg = config(CS_BACKEND_INTERP, 4);
    cfg.env = NULL;
    open_fails(&cfg, CS_ERR_ARGUMENT, "env NULL");

    cfg = config(CS_BACKEND_CPU, 4);
    cfg.cc = "/nonexistent/cc";
    cfg.no_cache = true;
    open_fails(&cfg, CS_ERR_UNAVAILABLE, "a missing C compiler");
    cfg.cc = "false";   /* a compiler that always fails */
    open_fails(&cfg, CS_ERR_COMPILE, "a failing C compiler");
    report("configurations_out_of_range");
}

Test(api_abuse, bad_actions_states_and_counts)
{
    cs_config cfg = config(CS_BACKEND_INTERP, 4);
    cs_env *env = open_ok(&cfg);
    cr_assert_eq(cs_env_reset(env, 3), CS_OK);
    static const int32_t bad_actions[] = {-1, 2, INT32_MAX, INT32_MIN};
    for (size_t k = 0; k < sizeof bad_actions / sizeof *bad_actions; k++) {
        int32_t a[4] = {0, 1, 0, bad_actions[k]};
        BAD(CS_ERR_ARGUMENT, env, cs_env_step(env, a));
        cr_expect(strstr(cs_env_error(env), "environment 3"), "%s", cs_env_error(env));
    }
    double state[16] = {0};
    int32_t steps[4] = {0, 0, -1, 0};
    BAD(CS_ERR_ARGUMENT, env, cs_env_set_state(env, state, steps));
    steps[2] = INT32_MIN;
    BAD(CS_ERR_ARGUMENT, env, cs_env_set_state(env, state, steps));
    static const double bad_values[] = {NAN, INFINITY, -INFINITY, 1e300};   /* 1e300: no float holds it */
    for (size_t k = 0; k < sizeof bad_values / sizeof *bad_values; k++) {
        state[9] = bad_values[k];
        BAD(CS_ERR_ARGUMENT, env, cs_env_set_state(env, state, NULL));
        cr_expect(strstr(cs_env_error(env), "theta of environment 1"), "%s", cs_env_error(env));
    }
    state[9] = 0;
    static const int64_t bad_steps[] = {-1, INT64_MIN};
    for (size_t k = 0; k < sizeof bad_steps / sizeof *bad_steps; k++)
        BAD(CS_ERR_ARGUMENT, env, cs_env_rollout(env, bad_steps[k], NULL));
    /* 4 environments x 2^62 steps is beyond a 64-bit count of env-steps. */
    BAD(CS_ERR_LIMIT, env, cs_env_rollout(env, INT64_MAX, NULL));
    BAD(CS_ERR_LIMIT, env, cs_env_rollout(env, INT64_MAX / 4 + 1, NULL));
    /* Nothing above changed the batch: it steps on as if never bothered. */
    int32_t ok[4] = {0, 1, 1, 0};
    BAD(CS_OK, env, cs_env_step(env, ok));
    cs_rollout_stats st;
    BAD(CS_OK, env, cs_env_rollout(env, 0, &st));
    cr_expect_eq(st.steps, 0);
    cs_env_close(env);

    cs_config box = config(CS_BACKEND_INTERP, 2);
    box.env = "pendulum";
    cs_env *p = NULL;
    if (cs_env_open(&box, &p) == CS_OK) {
        cr_assert_eq(cs_env_reset(p, 0), CS_OK);
        const float bad_floats[] = {NAN, INFINITY, -INFINITY};
        for (size_t k = 0; k < sizeof bad_floats / sizeof *bad_floats; k++) {
            float a[2] = {0.5f, bad_floats[k]};
            BAD(CS_ERR_ARGUMENT, p, cs_env_step(p, a));
            cr_expect(strstr(cs_env_error(p), "environment 1"), "%s", cs_env_error(p));
        }
    }
    cs_env_close(p);
    report("bad_actions_states_and_counts");
}

Test(api_abuse, dump_arguments)
{
    cs_config cfg = config(CS_BACKEND_INTERP, 4);
    static const char *const bad_formats[] = {"", "TEXT", "png", "c\n", "cubin "};
    for (size_t k = 0; k < sizeof bad_formats / sizeof *bad_formats; k++) {
        char *text = NULL, error[256] = "";
        BAD(CS_ERR_ARGUMENT, NULL, cs_dump(&cfg, NULL, bad_formats[k], &text, error, sizeof error));
        cr_expect_null(text);
        cr_expect(error[0], "format '%s': no message", bad_formats[k]);
    }
    static const char *const bad_passes[] = {"", "nope", "fold ", "FOLD"};
    for (size_t k = 0; k < sizeof bad_passes / sizeof *bad_passes; k++) {
        char *text = NULL, error[256];
        BAD(CS_ERR_ARGUMENT, NULL, cs_dump(&cfg, bad_passes[k], "text", &text, error, sizeof error));
        cr_expect_null(text);
    }
    cfg.num_envs = -5;
    char *text = NULL, error[4];   /* a message cut to fit */
    BAD(CS_ERR_ARGUMENT, NULL, cs_dump(&cfg, NULL, "text", &text, error, sizeof error));
    cr_expect_eq(strlen(error), 3);
    report("dump_arguments");
}

/* Every call without a handle answers alike: a message in the caller's
 * buffer on failure, "" on success, nothing to free. */
Test(api_abuse, calls_without_a_handle_share_one_error_convention)
{
    char err[512];
    cs_config cfg = config(CS_BACKEND_INTERP, 4);
#define STALE() snprintf(err, sizeof err, "stale")
    STALE();
    cr_expect_eq(cs_config_set(&cfg, "envs", "8", err, sizeof err), CS_OK);
    cr_expect_str_eq(err, "");
    cr_expect_eq(cs_config_set(&cfg, "envs", "eight", err, sizeof err), CS_ERR_ARGUMENT);
    cr_expect(err[0] && strcmp(err, "stale"), "%s", err);
    STALE();
    char *text = NULL;
    cr_expect_eq(cs_dump(&cfg, "parse", "text", &text, err, sizeof err), CS_OK, "%s", err);
    cr_expect_str_eq(err, "");
    free(text);
    cr_expect_eq(cs_dump(&cfg, "parse", "pdf", &text, err, sizeof err), CS_ERR_ARGUMENT);
    cr_expect(strstr(err, "pdf"), "%s", err);
    char path[] = "/tmp/cartsim-convention-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    double w[2] = {0.5, -0.5};
    STALE();
    cr_expect_eq(cs_policy_save(path, "cartpole", "linear", 2, w, err, sizeof err), CS_OK, "%s", err);
    cr_expect_str_eq(err, "");
    cr_expect_neq(cs_policy_save("/nonexistent/x.pol", "cartpole", "linear", 2, w, err, sizeof err), CS_OK);
    cr_expect(strstr(err, "/nonexistent/x.pol"), "%s", err);
    cs_policy_file pf;
    STALE();
    cr_expect_neq(cs_policy_load("/nonexistent/x.pol", &pf, err, sizeof err), CS_OK);
    cr_expect(strstr(err, "/nonexistent/x.pol"), "%s", err);
    cs_config_file *file = NULL;
    STALE();
    cr_expect_eq(cs_config_load(&cfg, "/nonexistent/x.ini", &file, err, sizeof err), CS_ERR_NOT_FOUND);
    cr_expect(strstr(err, "/nonexistent/x.ini"), "%s", err);
    cr_expect_eq(cs_config_set(&cfg, "envs", "eight", NULL, 0), CS_ERR_ARGUMENT, "no buffer: no message");
#undef STALE
    unlink(path);
}

Test(api_abuse, cubin_dump_arguments)
{
    cs_config cfg = config(CS_BACKEND_INTERP, 4);
    void *cubin = NULL;
    size_t size = 0;
    char error[256];
    BAD(CS_ERR_ARGUMENT, NULL, cs_dump_cubin(&cfg, "sm_90", NULL, &size, error, sizeof error));
    BAD(CS_ERR_ARGUMENT, NULL, cs_dump_cubin(&cfg, "sm_90", &cubin, NULL, error, sizeof error));
    static const char *const bad_arches[] = {"", "sm_", "sm_9", "sm_x0", "compute_90", "sm_90 ", "sm_-1",
                                             "sm_99999999999999999999"};
    for (size_t k = 0; k < sizeof bad_arches / sizeof *bad_arches; k++) {
        error[0] = 0;
        BAD(CS_ERR_ARGUMENT, NULL, cs_dump_cubin(&cfg, bad_arches[k], &cubin, &size, error, sizeof error));
        cr_expect_null(cubin);
        cr_expect(error[0], "arch '%s': no message", bad_arches[k]);
    }
    BAD(CS_ERR_ARGUMENT, NULL, cs_dump_cubin(NULL, "sm_90", &cubin, &size, error, sizeof error));
    report("cubin_dump_arguments");
}

Test(api_abuse, renderer_arguments)
{
    cs_renderer *r = NULL;
    BAD(CS_ERR_ARGUMENT, NULL, cs_renderer_open(NULL, NULL));
    BAD(CS_ERR_ARGUMENT, NULL, cs_renderer_open(NULL, &r));
    cs_renderer_close(r);
    r = NULL;
    cs_config cfg = config(CS_BACKEND_INTERP, 4);
    cs_env *env = open_ok(&cfg);
    BAD(CS_ERR_ARGUMENT, env, cs_renderer_open(env, NULL));
    cs_status s = cs_renderer_open(env, &r);
    cr_expect_not_null(cs_renderer_error(NULL));
    int w = 0, h = 0;
    uint8_t small[16];
    bad_calls += 2;
    cr_expect_neq(cs_render_rgb(NULL, 0, 1, 1, NULL, 0, &w, &h), CS_OK);
    cr_expect_not_null(cs_renderer_error(r));
    if (s == CS_OK) {   /* built with SDL2 */
        cr_assert_eq(cs_env_reset(env, 0), CS_OK);
        const int64_t bad_first[] = {-1, 4, INT64_MAX, INT64_MIN};
        for (size_t k = 0; k < sizeof bad_first / sizeof *bad_first; k++)
            BAD(CS_ERR_ARGUMENT, NULL, cs_render_rgb(r, bad_first[k], 1, 1, NULL, 0, &w, &h));
        const int bad_count[] = {0, -1, 5, INT32_MAX};
        for (size_t k = 0; k < sizeof bad_count / sizeof *bad_count; k++)
            BAD(CS_ERR_ARGUMENT, NULL, cs_render_rgb(r, 0, bad_count[k], 1, NULL, 0, &w, &h));
        BAD(CS_ERR_ARGUMENT, NULL, cs_render_rgb(r, 0, 1, -1, NULL, 0, &w, &h));
        BAD(CS_ERR_ARGUMENT, NULL, cs_render_rgb(r, 0, 1, 1, small, sizeof small, &w, &h));   /* too small */
        BAD(CS_OK, NULL, cs_render_rgb(r, 0, 1, 1, NULL, 0, &w, &h));
        cr_expect(w > 0 && h > 0);
    } else {
        cr_expect_eq(s, CS_ERR_UNAVAILABLE, "%s", cs_renderer_error(r));
    }
    cs_renderer_close(r);
    cs_renderer_close(NULL);
    cs_env_close(env);
    report("renderer_arguments");
}

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* 1,000 open/step/close cycles: LeakSanitizer (make asan) sees every byte;
 * file descriptors are counted here. */
Test(api_abuse, a_thousand_open_step_close_cycles_leak_nothing)
{
    int fds = open_fds();
    for (int k = 0; k < 1000; k++) {
        cs_config cfg = config(CS_BACKEND_INTERP, 4);
        cfg.autoreset = (cs_autoreset)(k % 3);
        cfg.dtype = k % 2 ? CS_DTYPE_F64 : CS_DTYPE_F32;
        cs_env *env = open_ok(&cfg);
        cr_assert_eq(cs_env_reset(env, (uint64_t)k), CS_OK);
        int32_t a[4] = {0, 1, 1, 0};
        for (int t = 0; t < 5; t++)
            cr_assert_eq(cs_env_step(env, a), CS_OK);
        cr_assert_eq(cs_env_rollout(env, 10, NULL), CS_OK);
        cs_env_close(env);
        /* and one that fails to open, every tenth time */
        if (k % 10 == 0) {
            cfg.num_envs = 0;
            cs_env *bad = NULL;
            cr_assert_eq(cs_env_open(&cfg, &bad), CS_ERR_ARGUMENT);
            cs_env_close(bad);
        }
    }
    cr_expect_eq(open_fds(), fds, "file descriptors leaked");
}

/* The same through the cpu backend's cache: a kernel loaded 200 times is
 * unloaded 200 times (descriptors, mappings). */
Test(api_abuse, cached_cpu_cycles_leak_nothing)
{
    char dir[] = "/tmp/cartsim-abuse-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    int fds = -1;
    for (int k = 0; k < 200; k++) {
        cs_config cfg = config(CS_BACKEND_CPU, 4);
        cfg.cache_dir = dir;
        cs_env *env = open_ok(&cfg);
        cs_env_info info;
        cr_assert_eq(cs_env_get_info(env, &info), CS_OK);
        cr_assert_eq(info.cache_hit, k > 0, "cycle %d", k);
        cr_assert_eq(cs_env_reset(env, (uint64_t)k), CS_OK);
        cr_assert_eq(cs_env_rollout(env, 10, NULL), CS_OK);
        cs_env_close(env);
        if (k == 0)
            fds = open_fds();   /* after the first compile, whatever it opened for good */
    }
    cr_expect_eq(open_fds(), fds, "file descriptors leaked");
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

/* Settings, configuration and policy files, weights, training (agents/, sim/config.c). */
Test(api_abuse, settings_policies_and_training_arguments)
{
    char err[256];
    cs_config cfg = config(CS_BACKEND_INTERP, 4);
    BAD(CS_ERR_ARGUMENT, NULL, cs_config_set(NULL, "envs", "4", err, sizeof err));
    BAD(CS_ERR_ARGUMENT, NULL, cs_config_set(&cfg, NULL, "4", err, sizeof err));
    BAD(CS_ERR_ARGUMENT, NULL, cs_config_set(&cfg, "envs", NULL, err, sizeof err));
    BAD(CS_ERR_NOT_FOUND, NULL, cs_config_set(&cfg, "no_such_setting", "4", err, sizeof err));
    static const char *const bad_envs[] = {"0", "-1", "abc", "99999999999999999999", "2147483648", "", " 4", "4 "};
    for (size_t k = 0; k < sizeof bad_envs / sizeof *bad_envs; k++)
        BAD(CS_ERR_ARGUMENT, NULL, cs_config_set(&cfg, "envs", bad_envs[k], err, sizeof err));
    BAD(CS_ERR_ARGUMENT, NULL, cs_config_set(&cfg, "backend", "quantum", err, sizeof err));
    BAD(CS_ERR_ARGUMENT, NULL, cs_config_set(&cfg, "unroll", "1025", NULL, 0));
    cr_expect_eq(cfg.num_envs, 4, "a refused setting leaves cfg unchanged");

    cs_config_file *file = NULL;
    BAD(CS_ERR_ARGUMENT, NULL, cs_config_load(NULL, "x.ini", &file, err, sizeof err));
    BAD(CS_ERR_ARGUMENT, NULL, cs_config_load(&cfg, NULL, &file, err, sizeof err));
    BAD(CS_ERR_ARGUMENT, NULL, cs_config_load(&cfg, "x.ini", NULL, err, sizeof err));
    BAD(CS_ERR_NOT_FOUND, NULL, cs_config_load(&cfg, "/nonexistent/x.ini", &file, err, sizeof err));
    cs_status s = cs_config_load(&cfg, "/", &file, err, sizeof err);
    bad_calls++;
    cr_expect_eq(s, CS_ERR_ARGUMENT, "a directory is bad input: %s (%s)", cs_status_string(s), err);
    cr_expect_null(file);
    cr_expect_eq(cs_config_file_count(NULL), 0);
    cr_expect_null(cs_config_file_entry(NULL, 0));
    cr_expect_null(cs_config_file_get(NULL, "run", "envs"));
    cs_config_file_free(NULL);
    bad_calls += 4;

    cs_policy_file pf;
    double w[10] = {0}, nan_w[2] = {0, NAN};
    BAD(CS_ERR_ARGUMENT, NULL, cs_policy_load(NULL, &pf, err, sizeof err));
    BAD(CS_ERR_ARGUMENT, NULL, cs_policy_load("x.pol", NULL, err, sizeof err));
    BAD(CS_ERR_NOT_FOUND, NULL, cs_policy_load("/nonexistent/x.pol", &pf, err, sizeof err));
    BAD(CS_ERR_ARGUMENT, NULL, cs_policy_save(NULL, "cartpole", "linear", 10, w, err, sizeof err));
    BAD(CS_ERR_ARGUMENT, NULL, cs_policy_save("/tmp/x.pol", NULL, "linear", 10, w, err, sizeof err));
    BAD(CS_ERR_ARGUMENT, NULL, cs_policy_save("/tmp/x.pol", "cartpole", "", 10, w, err, sizeof err));
    BAD(CS_ERR_ARGUMENT, NULL, cs_policy_save("/tmp/x.pol", "cart pole", "linear", 10, w, err, sizeof err));
    BAD(CS_ERR_ARGUMENT, NULL, cs_policy_save("/tmp/x.pol", "cartpole", "linear", 10, NULL, err, sizeof err));
    BAD(CS_ERR_ARGUMENT, NULL, cs_policy_save("/tmp/x.pol", "cartpole", "linear", 2, nan_w, err, sizeof err));
    BAD(CS_ERR_ARGUMENT, NULL, cs_policy_save("/tmp/x.pol", "cartpole", "linear", UINT32_MAX, w, err, sizeof err));
    cs_policy_file_free(NULL);

    bad_calls += 3;
    cr_expect_eq(cs_env_num_weights(NULL), 0);
    cr_expect_null(cs_env_episode_returns(NULL));
    cr_expect_null(cs_env_episode_counts(NULL));
    BAD(CS_ERR_ARGUMENT, NULL, cs_env_set_weights(NULL, w));
    BAD(CS_ERR_ARGUMENT, NULL, cs_env_get_weights(NULL, w));
    cfg.policy = "linear";
    cs_env *env = open_ok(&cfg);
    unsigned n = cs_env_num_weights(env);
    cr_assert_eq(n, 10, "CartPole's linear policy");
    double *weights = calloc((size_t)n * 4, sizeof *weights);
    BAD(CS_ERR_ARGUMENT, env, cs_env_set_weights(env, NULL));
    BAD(CS_ERR_ARGUMENT, env, cs_env_get_weights(env, NULL));
    weights[13] = NAN;
    BAD(CS_ERR_ARGUMENT, env, cs_env_set_weights(env, weights));
    weights[13] = INFINITY;
    BAD(CS_ERR_ARGUMENT, env, cs_env_set_weights(env, weights));
    weights[13] = 0;
    BAD(CS_OK, env, cs_env_set_weights(env, weights));
    double returns[8];
    BAD(CS_ERR_ARGUMENT, NULL, cs_evaluate(NULL, weights, 4, 0, returns));
    BAD(CS_ERR_ARGUMENT, env, cs_evaluate(env, weights, -1, 0, returns));
    cr_expect(strstr(cs_env_error(env), "at least one episode"), "the message is on the handle: %s", cs_env_error(env));
    BAD(CS_ERR_ARGUMENT, env, cs_evaluate(env, weights, 4, 0, NULL));
    free(weights);
    cs_env_close(env);

    cs_train_config_init(NULL);
    cs_train_config tc;
    cs_train_config_init(&tc);
    cs_train_result out;
    cs_config tcfg = config(CS_BACKEND_INTERP, 4);
    BAD(CS_ERR_ARGUMENT, NULL, cs_train(NULL, &tc, &out, err, sizeof err));
    BAD(CS_ERR_ARGUMENT, NULL, cs_train(&tcfg, NULL, &out, err, sizeof err));
    BAD(CS_ERR_ARGUMENT, NULL, cs_train(&tcfg, &tc, NULL, err, sizeof err));
    const int64_t bad_population[] = {0, -1, 1, INT64_MAX};
    for (size_t k = 0; k < sizeof bad_population / sizeof *bad_population; k++) {
        cs_train_config_init(&tc);
        tc.population = bad_population[k];
        BAD(CS_ERR_ARGUMENT, NULL, cs_train(&tcfg, &tc, &out, err, sizeof err));
        cr_expect_null(out.weights);
    }
    const double bad_reals[] = {-1, NAN, INFINITY};
    for (size_t k = 0; k < sizeof bad_reals / sizeof *bad_reals; k++) {
        cs_train_config_init(&tc);
        tc.sigma = bad_reals[k];
        BAD(CS_ERR_ARGUMENT, NULL, cs_train(&tcfg, &tc, &out, err, sizeof err));
        cs_train_config_init(&tc);
        tc.learning_rate = bad_reals[k];
        BAD(CS_ERR_ARGUMENT, NULL, cs_train(&tcfg, &tc, &out, err, sizeof err));
    }
    cs_train_config_init(&tc);
    tc.generations = -1;
    BAD(CS_ERR_ARGUMENT, NULL, cs_train(&tcfg, &tc, &out, err, sizeof err));
    cs_train_config_init(&tc);
    tc.policy = "mlp:0";
    BAD(CS_ERR_ARGUMENT, NULL, cs_train(&tcfg, &tc, &out, err, sizeof err));
    cs_train_config_init(&tc);
    tc.algo = (cs_algo)7;
    BAD(CS_ERR_ARGUMENT, NULL, cs_train(&tcfg, &tc, &out, err, sizeof err));
    report("settings_policies_and_training_arguments");
}
