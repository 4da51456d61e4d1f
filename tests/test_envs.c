/* The environments in envs/ as a user meets them: each one on every
 * backend, fusion mode and unroll (f64 results identical to the bit); the
 * random policy over each action space; per-environment parameters, set at
 * open time or drawn per environment at each reset (the library API and the
 * command); and envs/spring_mass.env, the README's own environment, loaded
 * by path. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cartsim.h"
#include "cli_test.h"

/* ---- helpers --------------------------------------------------------- */

/* "@ROOT@/x" -> the checkout's x; anything else unchanged. The result is
 * static: one at a time. */
static const char *env_path(const char *env)
{
    static char buf[4096];
    if (strncmp(env, "@ROOT@", 6) != 0)
        return env;
    snprintf(buf, sizeof buf, "%s%s", cli_test_root(), env + 6);
    return buf;
}

typedef struct {
    cs_backend backend;
    cs_fusion fusion;
    int unroll;
} schedule;

static cs_env *open_with(const char *env, int64_t n, schedule s, cs_dtype dtype, const char *const *params)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = env_path(env);
    cfg.num_envs = n;
    cfg.backend = s.backend;
    cfg.fusion = s.fusion;
    cfg.unroll = s.unroll;
    cfg.dtype = dtype;
    for (int k = 0; params && params[k]; k++)
        cfg.params[cfg.n_params++] = params[k];
    cs_env *e = NULL;
    cs_status st = cs_env_open(&cfg, &e);
    cr_assert_eq(st, CS_OK, "open %s: %s", env, e ? cs_env_error(e) : "out of memory");
    return e;
}

static cs_env *open_f64(const char *env, int64_t n, const char *const *params)
{
    return open_with(env, n, (schedule){CS_BACKEND_CPU, CS_FUSION_FULL, 1}, CS_DTYPE_F64, params);
}

/* A temporary directory for .env files written by a test. */
static char *temp_dir(void)
{
    char tmpl[] = "/tmp/cartsim-envs-XXXXXX";
    char *d = mkdtemp(tmpl);
    cr_assert(d, "mkdtemp failed");
    return strdup(d);
}

/* Writes text to dir/name and returns the path (malloc'ed). */
static char *write_env(const char *dir, const char *name, const char *text)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    cr_assert(path);
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
    return path;
}

static void remove_env(char *dir, char *path)
{
    unlink(path);
    rmdir(dir);
    free(path);
    free(dir);
}

static bool all_equal(const double *a, const double *b, size_t n)
{
    return memcmp(a, b, n * sizeof *a) == 0;
}

/* ---- the environments ------------------------------------------------ */

typedef struct {
    const char *env;            /* a name, or "@ROOT@/envs/..." */
    const char *name, *title;
    unsigned state_dim, obs_dim;
    bool discrete;
    unsigned n_actions;         /* discrete */
    double low, high;           /* box */
    int64_t max_steps;
    double threshold;           /* NaN: none */
} env_case;

static const env_case envs[] = {
    {"cartpole", "cartpole", "CartPole-v1", 4, 4, true, 2, 0, 0, 500, 475},
    {"cartpole_concat", "cartpole_concat", "CartPole-v1", 4, 4, true, 2, 0, 0, 500, 475},
    {"pendulum", "pendulum", "Pendulum-v1", 2, 3, false, 0, -2, 2, 200, NAN},
    {"mountain_car", "mountain_car", "MountainCar-v0", 2, 2, true, 3, 0, 0, 200, -110},
    {"mountain_car_continuous", "mountain_car_continuous", "MountainCarContinuous-v0", 2, 2, false, 0, -1, 1, 999,
     90},
    {"acrobot", "acrobot", "Acrobot-v1", 4, 6, true, 3, 0, 0, 500, -100},
    {"@ROOT@/envs/spring_mass.env", "spring_mass", "SpringMass-v0", 2, 2, false, 0, -1, 1, 200, NAN},
};
#define N_ENVS (sizeof envs / sizeof envs[0])

Test(envs, info_matches_gymnasium_registration)
{
    for (size_t i = 0; i < N_ENVS; i++) {
        const env_case *c = &envs[i];
        cs_env *e = open_with(c->env, 3, (schedule){CS_BACKEND_INTERP, CS_FUSION_FULL, 1}, CS_DTYPE_F64, NULL);
        cs_env_info in;
        cr_assert_eq(cs_env_get_info(e, &in), CS_OK);
        cr_expect_str_eq(in.name, c->name);
        cr_expect_str_eq(in.title, c->title, "%s", c->name);
        cr_expect_eq(in.state_dim, c->state_dim, "%s", c->name);
        cr_expect_eq(in.obs_dim, c->obs_dim, "%s", c->name);
        cr_expect_eq(in.discrete, c->discrete, "%s", c->name);
        if (c->discrete) {
            cr_expect_eq(in.n_actions, c->n_actions, "%s", c->name);
        } else {
            cr_expect_eq(in.action_dim, 1, "%s", c->name);
            cr_expect(in.action_low[0] == c->low && in.action_high[0] == c->high, "%s: box [%g, %g]", c->name,
                      in.action_low[0], in.action_high[0]);
        }
        cr_expect_eq(in.max_steps, c->max_steps, "%s", c->name);
        if (isnan(c->threshold))
            cr_expect(isnan(in.reward_threshold), "%s: threshold %g, want none", c->name, in.reward_threshold);
        else
            cr_expect_eq(in.reward_threshold, c->threshold, "%s", c->name);
        cs_env_close(e);
    }
}

/* The reset distributions: Pendulum U(-pi, pi) x U(-1, 1); both
 * MountainCars U(-0.6, -0.4) at rest; Acrobot U(-0.1, 0.1)^4 rounded to
 * float32. */
Test(envs, reset_distributions)
{
    static const struct {
        const char *env;
        unsigned dim;
        double lo[4], hi[4];
        bool f32;
    } resets[] = {
        {"pendulum", 2, {-M_PI, -1}, {M_PI, 1}, false},
        {"mountain_car", 2, {-0.6, 0}, {-0.4, 0}, false},
        {"mountain_car_continuous", 2, {-0.6, 0}, {-0.4, 0}, false},
        {"acrobot", 4, {-0.1, -0.1, -0.1, -0.1}, {0.1, 0.1, 0.1, 0.1}, true},
    };
    const int64_t n = 4000;
    double *s = malloc(4 * (size_t)n * sizeof *s);
    cr_assert(s);
    for (size_t r = 0; r < sizeof resets / sizeof resets[0]; r++) {
        cs_env *e = open_f64(resets[r].env, n, NULL);
        cr_assert_eq(cs_env_reset(e, 8), CS_OK);
        cr_assert_eq(cs_env_get_state(e, s), CS_OK);
        for (unsigned k = 0; k < resets[r].dim; k++) {
            double lo = resets[r].lo[k], hi = resets[r].hi[k], min = INFINITY, max = -INFINITY;
            for (int64_t i = 0; i < n; i++) {
                double v = s[(size_t)k * n + i];
                cr_assert(v >= lo && v <= hi, "%s: state %u = %.17g outside [%g, %g]", resets[r].env, k, v, lo, hi);
                cr_assert(!resets[r].f32 || v == (double)(float)v, "%s: %.17g is not a float32", resets[r].env, v);
                min = fmin(min, v);
                max = fmax(max, v);
            }
            double span = hi - lo;
            cr_expect(min <= lo + 0.01 * span && max >= hi - 0.01 * span, "%s: state %u spans only [%g, %g]",
                      resets[r].env, k, min, max);
        }
        cs_env_close(e);
    }
    free(s);
}

/* Actions for step k, lane i, the same on every backend. */
static void fixed_actions(const cs_env_info *in, int64_t n, int k, int32_t *ia, float *fa)
{
    for (int64_t i = 0; i < n; i++) {
        unsigned h = (unsigned)(i * 2654435761u) ^ (unsigned)(k * 40503u);
        if (in->discrete)
            ia[i] = (int32_t)(h % in->n_actions);
        else   /* in and out of the bounds: the env clips */
            fa[i] = (float)(in->action_low[0] + (in->action_high[0] - in->action_low[0]) * ((h % 1001) / 800.0 - 0.125));
    }
}

typedef struct {
    uint64_t checksum;
    int64_t episodes;
    double *state;              /* after the stepped part */
    double *rewards;
} outcome;

/* reset(11); 230 fused steps of the random policy; then 25 steps through
 * cs_env_step with fixed actions. */
static outcome run_schedule(const char *env, int64_t n, schedule s)
{
    cs_env *e = open_with(env, n, s, CS_DTYPE_F64, NULL);
    cs_env_info in;
    cr_assert_eq(cs_env_get_info(e, &in), CS_OK);
    outcome o = {0};
    cs_rollout_stats st;
    cr_assert_eq(cs_env_reset(e, 11), CS_OK);
    cr_assert_eq(cs_env_rollout(e, 230, &st), CS_OK, "%s", cs_env_error(e));
    o.checksum = st.checksum;
    o.episodes = st.episodes;
    int32_t *ia = calloc((size_t)n, sizeof *ia);
    float *fa = calloc((size_t)n, sizeof *fa);
    o.state = calloc((size_t)n * in.state_dim, sizeof *o.state);
    o.rewards = calloc((size_t)n * 25, sizeof *o.rewards);
    cr_assert(ia && fa && o.state && o.rewards);
    for (int k = 0; k < 25; k++) {
        fixed_actions(&in, n, k, ia, fa);
        cr_assert_eq(cs_env_step(e, in.discrete ? (const void *)ia : (const void *)fa), CS_OK, "%s",
                     cs_env_error(e));
        memcpy(o.rewards + (size_t)k * n, cs_env_rewards(e), (size_t)n * sizeof *o.rewards);
    }
    cr_assert_eq(cs_env_get_state(e, o.state), CS_OK);
    free(ia);
    free(fa);
    cs_env_close(e);
    return o;
}

/* Every environment, every backend, fusion mode and unroll: in f64 the
 * fused rollout's checksum, the states and rewards of stepped actions are
 * identical to the bit (37 lanes: not a multiple of any vector width).
 * CartPole has its own such tests (test_cli.c, test_backend.c). */
Test(envs, every_backend_fusion_and_unroll_agree, .timeout = 900)
{
    static const schedule schedules[] = {
        {CS_BACKEND_CPU, CS_FUSION_FULL, 1}, {CS_BACKEND_CPU, CS_FUSION_FULL, 4}, {CS_BACKEND_CPU, CS_FUSION_RULES, 3},
        {CS_BACKEND_CPU, CS_FUSION_NONE, 2}, {CS_BACKEND_INTERP, CS_FUSION_FULL, 1},
    };
    const int64_t n = 37;
    for (size_t i = 0; i < N_ENVS; i++) {
        if (strncmp(envs[i].name, "cartpole", 8) == 0)
            continue;
        outcome base = run_schedule(envs[i].env, n, schedules[0]);
        cr_expect(base.episodes > 0 || strcmp(envs[i].name, "acrobot") == 0 ||
                      strcmp(envs[i].name, "mountain_car_continuous") == 0,
                  "%s: no episode ended in 230 random steps", envs[i].name);
        for (size_t s = 1; s < sizeof schedules / sizeof schedules[0]; s++) {
            outcome o = run_schedule(envs[i].env, n, schedules[s]);
            const char *what = envs[i].name;
            cr_expect_eq(o.checksum, base.checksum, "%s on %s/%s/unroll %d: checksum %016llx, cpu/full/1 %016llx",
                         what, cs_backend_name(schedules[s].backend), cs_fusion_name(schedules[s].fusion),
                         schedules[s].unroll, (unsigned long long)o.checksum, (unsigned long long)base.checksum);
            cr_expect_eq(o.episodes, base.episodes, "%s: episodes differ", what);
            cr_expect(all_equal(o.state, base.state, (size_t)n * envs[i].state_dim), "%s on %s/%s: states differ",
                      what, cs_backend_name(schedules[s].backend), cs_fusion_name(schedules[s].fusion));
            cr_expect(all_equal(o.rewards, base.rewards, (size_t)n * 25), "%s on %s/%s: rewards differ", what,
                      cs_backend_name(schedules[s].backend), cs_fusion_name(schedules[s].fusion));
            free(o.state);
            free(o.rewards);
        }
        free(base.state);
        free(base.rewards);
    }
}

/* Long enough for episodes to end: CartPole terminates; Pendulum and
 * MountainCar truncate at 200. */
Test(envs, rollouts_finish_episodes)
{
    static const struct {
        const char *env;
        int64_t steps;
        double lo, hi;          /* the mean return of the random policy lies in here */
    } runs[] = {
        {"cartpole", 300, 15, 30},           /* random CartPole: ~22 steps */
        {"pendulum", 600, -1700, -700},      /* Gymnasium's random Pendulum: ~ -1200 */
        {"mountain_car", 600, -200, -200},   /* random never reaches the goal: always truncated */
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        cs_env *e = open_f64(runs[i].env, 256, NULL);
        cs_rollout_stats st;
        cr_assert_eq(cs_env_reset(e, 1), CS_OK);
        cr_assert_eq(cs_env_rollout(e, runs[i].steps, &st), CS_OK);
        cr_expect(st.episodes >= 256, "%s: %lld episodes", runs[i].env, (long long)st.episodes);
        cr_expect(st.mean_return >= runs[i].lo && st.mean_return <= runs[i].hi, "%s: mean return %g outside [%g, %g]",
                  runs[i].env, st.mean_return, runs[i].lo, runs[i].hi);
        cr_expect_eq(st.nonfinite, 0);
        cs_env_close(e);
    }
}

/* Every built-in environment keeps its run-time indices in range: under
 * --strict (on the interpreter, which checks the same roots as every
 * backend) 300 steps of 64 random environments raise no fault. */
Test(envs, every_builtin_environment_runs_clean_under_strict, .timeout = 600)
{
    char title[128];
    const char *name;
    for (size_t e = 0; (name = cs_builtin_env_at(e, title, sizeof title)); e++) {
        cs_config cfg;
        cs_config_init(&cfg);
        cfg.env = name;
        cfg.num_envs = 64;
        cfg.backend = CS_BACKEND_INTERP;
        cfg.strict = true;
        cs_env *env;
        cr_assert_eq(cs_env_open(&cfg, &env), CS_OK, "%s: %s", name, cs_env_error(env));
        cr_assert_eq(cs_env_reset(env, 5), CS_OK, "%s: %s", name, cs_env_error(env));
        cs_rollout_stats s;
        cr_assert_eq(cs_env_rollout(env, 300, &s), CS_OK, "%s under --strict: %s", name, cs_env_error(env));
        cs_env_close(env);
    }
}

/* `cartsim --env NAME` runs each of them. */
Test(envs, the_command_runs_each, .timeout = 600)
{
    for (size_t i = 0; i < N_ENVS; i++) {
        const char *args[] = {"--env", env_path(envs[i].env), "--envs", "16", "--steps", "300", "--json", NULL};
        cli_result r;
        cli_test_run(args, 300, &r);
        char want[128];
        snprintf(want, sizeof want, "\"env\": \"%s\"", envs[i].name);
        bool ok = !r.timed_out && r.status == 0 && strstr(r.out, want);
        char msg[1024];
        snprintf(msg, sizeof msg, "cartsim --env %s: status %d, stderr: %.600s", envs[i].env, r.status, r.err);
        cli_result_free(&r);
        cr_expect(ok, "%s", msg);
    }
}

/* ---- the random policy over each action space ------------------------ */

/* An environment whose next state is the action it was given. */
static const char probe_box[] =
    "env probe \"Probe\"\n"
    "state a, b\n"
    "action box(-2, 3, 2)\n"
    "observe a, b\n"
    "reset { a = -10; b = -10 }\n"
    "step { a' = action[0]; b' = action[1]; reward = 0.0; terminated = false }\n";

static const char probe_discrete[] =
    "env probe \"Probe\"\n"
    "state a\n"
    "action discrete 3\n"
    "observe a\n"
    "reset { a = -10 }\n"
    "step { a' = action; reward = 0.0; terminated = false }\n";

Test(policy, random_box_actions_are_uniform_in_the_bounds)
{
    char *dir = temp_dir(), *path = write_env(dir, "probe.env", probe_box);
    const cs_dtype dtypes[] = {CS_DTYPE_F64, CS_DTYPE_F32};
    const int64_t n = 20000;
    double *s = malloc(2 * (size_t)n * sizeof *s);
    cr_assert(s);
    for (int d = 0; d < 2; d++) {
        cs_env *e = open_with(path, n, (schedule){CS_BACKEND_CPU, CS_FUSION_FULL, 1}, dtypes[d], NULL);
        cs_rollout_stats st;
        cr_assert_eq(cs_env_reset(e, 4), CS_OK);
        cr_assert_eq(cs_env_rollout(e, 1, &st), CS_OK);
        cr_assert_eq(cs_env_get_state(e, s), CS_OK);
        for (int k = 0; k < 2; k++) {
            double lo = INFINITY, hi = -INFINITY, sum = 0;
            int bins[5] = {0};
            for (int64_t i = 0; i < n; i++) {
                double a = s[(size_t)k * n + i];
                cr_assert(a >= -2 && a < 3, "action %g outside [-2, 3)", a);
                lo = fmin(lo, a);
                hi = fmax(hi, a);
                sum += a;
                bins[(int)floor(a + 2)]++;
            }
            cr_expect(lo < -1.99 && hi > 2.99, "component %d spans only [%g, %g]", k, lo, hi);
            cr_expect(fabs(sum / n - 0.5) < 0.05, "component %d: mean %g, want 0.5", k, sum / n);
            for (int b = 0; b < 5; b++)   /* 4000 expected per unit interval; 5 sigma is 320 */
                cr_expect(abs(bins[b] - 4000) < 320, "component %d: %d draws in [%d, %d)", k, bins[b], b - 2, b - 1);
        }
        int same = 0;   /* the two components are drawn separately */
        for (int64_t i = 0; i < n; i++)
            same += s[i] == s[n + i];
        cr_expect(same == 0, "%d lanes drew equal components", same);
        cs_env_close(e);
    }
    free(s);
    remove_env(dir, path);
}

Test(policy, random_discrete_actions_are_uniform)
{
    char *dir = temp_dir(), *path = write_env(dir, "probe.env", probe_discrete);
    const int64_t n = 30000;
    double *s = malloc((size_t)n * sizeof *s);
    cr_assert(s);
    cs_env *e = open_f64(path, n, NULL);
    cs_rollout_stats st;
    cr_assert_eq(cs_env_reset(e, 4), CS_OK);
    cr_assert_eq(cs_env_rollout(e, 1, &st), CS_OK);
    cr_assert_eq(cs_env_get_state(e, s), CS_OK);
    int count[3] = {0};
    for (int64_t i = 0; i < n; i++) {
        cr_assert(s[i] == 0 || s[i] == 1 || s[i] == 2, "action %g", s[i]);
        count[(int)s[i]]++;
    }
    for (int k = 0; k < 3; k++)   /* 10000 expected; 5 sigma is 410 */
        cr_expect(abs(count[k] - 10000) < 410, "action %d drawn %d times of %lld", k, count[k], (long long)n);
    cs_env_close(e);
    free(s);
    remove_env(dir, path);
}

/* Pendulum's own random torques: from theta = 0 at rest one step gives
 * theta_dot' = 0.15 u, so u is read back; it covers [-2, 2]. */
Test(policy, pendulum_torques_cover_its_box)
{
    const int64_t n = 4096;
    cs_env *e = open_f64("pendulum", n, NULL);
    double *s = calloc(2 * (size_t)n, sizeof *s);
    cr_assert(s);
    cr_assert_eq(cs_env_reset(e, 2), CS_OK);
    cr_assert_eq(cs_env_set_state(e, s, NULL), CS_OK);
    cs_rollout_stats st;
    cr_assert_eq(cs_env_rollout(e, 1, &st), CS_OK);
    cr_assert_eq(cs_env_get_state(e, s), CS_OK);
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        double u = s[n + i] / (3.0 * 0.05);
        cr_assert(u >= -2 - 1e-12 && u <= 2 + 1e-12, "torque %g", u);
        lo = fmin(lo, u);
        hi = fmax(hi, u);
    }
    cr_expect(lo < -1.99 && hi > 1.99, "torques span only [%g, %g]", lo, hi);
    free(s);
    cs_env_close(e);
}

/* ---- per-environment parameters -------------------------------------- */

/* k is readable: the reward is k, the observation's second value too. */
static const char probe_param[] =
    "env probe \"Probe\"\n"
    "max_steps 3\n"
    "param k = 1.0\n"
    "param j = 7.0\n"
    "state x\n"
    "action discrete 2\n"
    "observe x, k, j\n"
    "reset { x = uniform(0, 1) }\n"
    "step { x' = x + k; reward = k + 0 * j; terminated = false }\n";

/* The k of every lane, read from the rewards of one step. */
static void read_k(cs_env *e, int64_t n, double *k)
{
    int32_t *a = calloc((size_t)n, sizeof *a);
    cr_assert(a);
    cr_assert_eq(cs_env_step(e, a), CS_OK, "%s", cs_env_error(e));
    memcpy(k, cs_env_rewards(e), (size_t)n * sizeof *k);
    free(a);
}

static int distinct(const double *v, int64_t n)
{
    double *c = malloc((size_t)n * sizeof *c);
    cr_assert(c);
    memcpy(c, v, (size_t)n * sizeof *c);
    int d = 0;
    for (int64_t i = 0; i < n; i++) {   /* n is small: quadratic is fine */
        bool seen = false;
        for (int64_t j = 0; j < i && !seen; j++)
            seen = c[j] == c[i];
        d += !seen;
    }
    free(c);
    return d;
}

Test(params, range_is_drawn_per_environment_at_each_reset, .timeout = 300)
{
    char *dir = temp_dir(), *path = write_env(dir, "probe.env", probe_param);
    const int64_t n = 500;
    const char *params[] = {"k=0.4:0.6", NULL};
    const schedule on[] = {{CS_BACKEND_CPU, CS_FUSION_FULL, 1}, {CS_BACKEND_INTERP, CS_FUSION_FULL, 1},
                           {CS_BACKEND_CPU, CS_FUSION_NONE, 1}};
    double *k5 = malloc((size_t)n * sizeof(double) * 5), *again = k5 + n, *k6 = k5 + 2 * n, *later = k5 + 3 * n,
           *first = k5 + 4 * n;
    cr_assert(k5);
    for (size_t s = 0; s < sizeof on / sizeof on[0]; s++) {
        cs_env *e = open_with(path, n, on[s], CS_DTYPE_F64, params);
        cr_assert_eq(cs_env_reset(e, 5), CS_OK);
        /* the reset observation already shows this episode's k; j is fixed */
        const float *obs = cs_env_obs(e);
        float obs_k[500];
        memcpy(obs_k, obs + n, sizeof obs_k);
        for (int64_t i = 0; i < n; i++)
            cr_assert_eq(obs[2 * n + i], 7.0f);
        read_k(e, n, k5);
        double sum = 0;
        for (int64_t i = 0; i < n; i++) {
            cr_assert(k5[i] >= 0.4 && k5[i] < 0.6, "k %.17g outside [0.4, 0.6)", k5[i]);
            cr_assert_eq(obs_k[i], (float)k5[i], "lane %lld: observed k %g, stepped with %g", (long long)i,
                         obs_k[i], k5[i]);
            sum += k5[i];
        }
        cr_expect(distinct(k5, n) == n, "only %d distinct values of k over %lld environments", distinct(k5, n),
                  (long long)n);
        cr_expect(fabs(sum / n - 0.5) < 0.02, "mean k %g", sum / n);
        /* the same seed draws the same values; another seed others */
        cr_assert_eq(cs_env_reset(e, 5), CS_OK);
        read_k(e, n, again);
        cr_expect(all_equal(k5, again, (size_t)n), "reset(5) twice drew different k");
        cr_assert_eq(cs_env_reset(e, 6), CS_OK);
        read_k(e, n, k6);
        int same = 0;
        for (int64_t i = 0; i < n; i++)
            same += k6[i] == k5[i];
        cr_expect(same == 0, "reset(6) kept k in %d environments", same);
        /* the episode is truncated at its third step; the next step
         * restarts it (Gymnasium's next-step auto-reset: reward 0, the
         * reset observation) with a fresh k, which the step after uses */
        read_k(e, n, later);
        read_k(e, n, later);
        for (int64_t i = 0; i < n; i++)
            cr_assert(cs_env_truncated(e)[i] && later[i] == k6[i]);
        read_k(e, n, later);
        memcpy(obs_k, cs_env_obs(e) + n, sizeof obs_k);
        for (int64_t i = 0; i < n; i++)
            cr_assert(later[i] == 0 && !cs_env_truncated(e)[i], "lane %lld did not restart", (long long)i);
        read_k(e, n, later);
        same = 0;
        for (int64_t i = 0; i < n; i++) {
            cr_assert(later[i] >= 0.4 && later[i] < 0.6, "k %.17g outside [0.4, 0.6)", later[i]);
            cr_assert_eq(obs_k[i], (float)later[i]);
            same += later[i] == k6[i];
        }
        cr_expect(same == 0, "the auto-reset kept k in %d environments", same);
        if (s == 0)
            memcpy(first, k5, (size_t)n * sizeof *first);
        else   /* every backend draws the same values */
            cr_expect(all_equal(first, k5, (size_t)n), "%s/%s drew other values than cpu/full",
                      cs_backend_name(on[s].backend), cs_fusion_name(on[s].fusion));
        cs_env_close(e);
    }
    free(k5);
    remove_env(dir, path);
}

Test(params, value_override_is_a_constant)
{
    char *dir = temp_dir(), *path = write_env(dir, "probe.env", probe_param);
    const int64_t n = 8;
    const char *params[] = {"k=0.25", "j=-3", NULL};
    cs_env *e = open_f64(path, n, params);
    cr_assert_eq(cs_env_reset(e, 1), CS_OK);
    double k[8];
    read_k(e, n, k);
    for (int64_t i = 0; i < n; i++) {
        cr_expect_eq(k[i], 0.25);
        cr_expect_eq(cs_env_obs(e)[2 * n + i], -3.0f);
    }
    cs_env_close(e);
    /* folded: the generated step has the value as a literal, no parameter buffer */
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = path;
    cfg.dtype = CS_DTYPE_F64;
    cfg.params[0] = "k=0.25";
    cfg.n_params = 1;
    char *text = NULL, error[1024];
    cr_assert_eq(cs_dump(&cfg, NULL, "text", &text, error, sizeof error), CS_OK, "%s", error);
    cr_expect(strstr(text, "0.25") && !strstr(text, "param "), "%s", text);
    free(text);
    cfg.params[0] = "k=0.25:0.5";
    cr_assert_eq(cs_dump(&cfg, NULL, "text", &text, error, sizeof error), CS_OK, "%s", error);
    cr_expect(strstr(text, "param k"), "a ranged k is not a param leaf: %s", text);
    free(text);
    remove_env(dir, path);
}

/* Pendulum with g drawn from [5, 15]: from theta = 1 at rest with no
 * torque one step gives theta_dot' = (3 g / 2 sin 1) 0.05, so each lane's g
 * is read back. */
static void pendulum_g(const char *const *params, int64_t n, double *g)
{
    cs_env *e = open_f64("pendulum", n, params);
    double *s = calloc(2 * (size_t)n, sizeof *s);
    float *u = calloc((size_t)n, sizeof *u);
    cr_assert(s && u);
    cr_assert_eq(cs_env_reset(e, 3), CS_OK);
    for (int64_t i = 0; i < n; i++)
        s[i] = 1.0;
    cr_assert_eq(cs_env_set_state(e, s, NULL), CS_OK);
    cr_assert_eq(cs_env_step(e, u), CS_OK);
    cr_assert_eq(cs_env_get_state(e, s), CS_OK);
    for (int64_t i = 0; i < n; i++)
        g[i] = s[n + i] / 0.05 / sin(1.0) / 1.5;
    free(s);
    free(u);
    cs_env_close(e);
}

Test(params, pendulum_gravity_range_changes_the_dynamics)
{
    const int64_t n = 256;
    double g[256];
    pendulum_g(NULL, n, g);
    for (int64_t i = 0; i < n; i++)
        cr_assert(fabs(g[i] - 10) < 1e-9, "default g read back as %.17g", g[i]);
    const char *fixed[] = {"g=9.81", NULL};
    pendulum_g(fixed, n, g);
    for (int64_t i = 0; i < n; i++)
        cr_assert(fabs(g[i] - 9.81) < 1e-9, "g=9.81 read back as %.17g", g[i]);
    const char *range[] = {"g=5:15", NULL};
    pendulum_g(range, n, g);
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        cr_assert(g[i] >= 5 - 1e-9 && g[i] <= 15 + 1e-9, "g %.17g outside [5, 15]", g[i]);
        lo = fmin(lo, g[i]);
        hi = fmax(hi, g[i]);
    }
    cr_expect(lo < 5.5 && hi > 14.5, "g spans only [%g, %g]", lo, hi);
    cr_expect(distinct(g, n) == n, "%d distinct g over %lld environments", distinct(g, n), (long long)n);
}

/* A range on a parameter the action space needs at compile time is refused
 * with a clear message; so are bad ranges. */
Test(params, errors)
{
    static const struct {
        const char *env, *param, *message;
    } bad[] = {
        {"pendulum", "max_torque=1:2", "the low bound of the action must be a compile-time number"},
        {"pendulum", "g=15:5", "the low end 15 is above the high end 5"},
        {"pendulum", "gee=1", "unknown parameter 'gee'"},
        {"acrobot", "m1=2", "'m1' is a const and cannot be overridden"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cs_config cfg;
        cs_config_init(&cfg);
        cfg.env = bad[i].env;
        cfg.params[0] = bad[i].param;
        cfg.n_params = 1;
        cs_env *e = NULL;
        cs_status st = cs_env_open(&cfg, &e);
        cr_expect_neq(st, CS_OK, "%s --param %s opened", bad[i].env, bad[i].param);
        cr_expect(e && strstr(cs_env_error(e), bad[i].message), "%s --param %s: '%s', want '%s'", bad[i].env,
                  bad[i].param, e ? cs_env_error(e) : "", bad[i].message);
        cs_env_close(e);
    }
}

/* The checksum of `cartsim ARGS --json`, or "" on failure (stderr in msg). */
static void cli_checksum(const char *const *args, char out[17], char *msg, size_t msg_size)
{
    cli_result r;
    cli_test_run(args, 300, &r);
    out[0] = 0;
    const char *c = strstr(r.out, "\"checksum\": \"");
    if (!r.timed_out && r.status == 0 && c)
        snprintf(out, 17, "%s", c + 13);
    snprintf(msg, msg_size, "status %d, stderr: %.500s", r.status, r.err);
    cli_result_free(&r);
}

Test(params, the_command_draws_ranges_too, .timeout = 600)
{
    char msg[600];
    char ranged[17], again[17], other_seed[17], fixed[17], plain[17], interp[17];
#define RUN(out, ...)                                                                                               \
    do {                                                                                                            \
        const char *a_[] = {"--env", "pendulum", "--envs", "64", "--steps", "450", "--dtype", "f64", "--json",    \
                            __VA_ARGS__, NULL};                                                                     \
        cli_checksum(a_, out, msg, sizeof msg);                                                                     \
        cr_assert(out[0], "%s", msg);                                                                               \
    } while (0)
    RUN(ranged, "--param", "g=5:15", "--seed", "3");
    RUN(again, "--param", "g=5:15", "--seed", "3");
    RUN(interp, "--param", "g=5:15", "--seed", "3", "--backend", "interp");
    RUN(other_seed, "--param", "g=5:15", "--seed", "4");
    RUN(fixed, "--param", "g=10", "--seed", "3");
    RUN(plain, "--seed", "3");
#undef RUN
    cr_expect_str_eq(ranged, again, "the same seed gave different checksums");
    cr_expect_str_eq(ranged, interp, "cpu and interp differ with a drawn g");
    cr_expect_str_neq(ranged, other_seed, "seeds 3 and 4 gave the same checksum");
    cr_expect_str_neq(ranged, fixed, "a drawn g ran like g=10");
    cr_expect_str_eq(fixed, plain, "--param g=10 is Pendulum's default, yet the checksum changed");

    /* a bad range: one line, exit status 2 */
    const char *bad[] = {"--env", "pendulum", "--param", "g=15:5", NULL};
    cli_result r;
    cli_test_run(bad, 60, &r);
    int status = r.status;
    bool one_line = r.err_len > 0 && strchr(r.err, '\n') == r.err + r.err_len - 1;
    cli_result_free(&r);
    cr_expect_eq(status, 2);
    cr_expect(one_line, "not one line on stderr");
}

/* ---- envs/spring_mass.env: a custom environment, by path --------------- */

static char *copy_spring_mass(char **dir_out)
{
    char src[4096];
    snprintf(src, sizeof src, "%s/envs/spring_mass.env", cli_test_root());
    FILE *f = fopen(src, "rb");
    cr_assert(f, "cannot open %s", src);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    *dir_out = temp_dir();
    return write_env(*dir_out, "my_spring.env", text);
}

/* Copied where no built-in list knows it, it loads by path and runs the
 * same on the cpu (generated C) and the interpreter. */
Test(custom, spring_mass_by_path_on_cpu_and_interp, .timeout = 300)
{
    char *dir, *path = copy_spring_mass(&dir);
    uint64_t sums[2];
    int64_t episodes[2];
    const schedule on[] = {{CS_BACKEND_CPU, CS_FUSION_FULL, 1}, {CS_BACKEND_INTERP, CS_FUSION_FULL, 1}};
    for (int s = 0; s < 2; s++) {
        cs_env *e = open_with(path, 100, on[s], CS_DTYPE_F64, NULL);
        cs_env_info in;
        cr_assert_eq(cs_env_get_info(e, &in), CS_OK);
        cr_expect_str_eq(in.name, "spring_mass");
        cs_rollout_stats st;
        cr_assert_eq(cs_env_reset(e, 9), CS_OK);
        cr_assert_eq(cs_env_rollout(e, 450, &st), CS_OK);
        sums[s] = st.checksum;
        episodes[s] = st.episodes;
        cs_env_close(e);
    }
    cr_expect_eq(sums[0], sums[1], "cpu %016llx, interp %016llx", (unsigned long long)sums[0],
                 (unsigned long long)sums[1]);
    cr_expect_eq(episodes[0], episodes[1]);
    cr_expect(episodes[0] >= 200, "%lld episodes in 450 steps of 100 environments", (long long)episodes[0]);

    const char *args[] = {"--env", path, "--envs", "32", "--steps", "100", "--param", "stiffness=2:6", NULL};
    cli_result r;
    cli_test_run(args, 300, &r);
    bool ok = r.status == 0 && strstr(r.out, "spring_mass");
    char msg[700];
    snprintf(msg, sizeof msg, "status %d, stderr: %.600s", r.status, r.err);
    cli_result_free(&r);
    cr_expect(ok, "cartsim --env %s: %s", path, msg);
    remove_env(dir, path);
}

/* Tests a user can write without any recorded trajectory: physics. With no
 * damping and no force, semi-implicit Euler keeps the oscillation's energy
 * (within O(dt), no drift) and its period, 2 pi sqrt(m/k); with damping the
 * energy decays. */
Test(custom, spring_mass_physics)
{
    char *dir, *path = copy_spring_mass(&dir);
    const int64_t n = 2;
    const char *undamped[] = {"damping=0", NULL};
    const char *damped[] = {"damping=0.5", NULL};
    for (int run = 0; run < 2; run++) {
        cs_env *e = open_f64(path, n, run ? damped : undamped);
        cr_assert_eq(cs_env_reset(e, 1), CS_OK);
        double s[4] = {1.0, -0.5, 0, 0};   /* x of both lanes, then v */
        cr_assert_eq(cs_env_set_state(e, s, NULL), CS_OK);
        float u[2] = {0, 0};
        double k = 4.0, energy0 = 0.5 * k * 1.0, energy = energy0, lo = 1e9, hi = -1e9;
        int crossings = 0;
        double last_x = 1.0;
        for (int t = 0; t < 199; t++) {
            cr_assert_eq(cs_env_step(e, u), CS_OK);
            cr_assert_eq(cs_env_get_state(e, s), CS_OK);
            energy = 0.5 * k * s[0] * s[0] + 0.5 * s[2] * s[2];
            lo = fmin(lo, energy);
            hi = fmax(hi, energy);
            crossings += (s[0] < 0) != (last_x < 0);
            last_x = s[0];
        }
        if (run == 0) {
            cr_expect(lo > 0.9 * energy0 && hi < 1.1 * energy0, "undamped energy in [%g, %g], started %g", lo, hi,
                      energy0);
            /* period pi s: 199 steps of 0.05 s are 3.17 periods, 6 crossings */
            cr_expect_eq(crossings, 6, "%d zero crossings", crossings);
        } else {
            cr_expect(hi < 1.1 * energy0 && energy < 0.2 * energy0, "damped energy at most %g, %g after 10 s, started %g",
                      hi, energy, energy0);
        }
        cs_env_close(e);
    }
    remove_env(dir, path);
}
