/* cs_env_copy_state: a sibling handle continues exactly where another is,
 * which is how a rollout with another policy (Python's
 * envs.rollout(policy=...)) starts from a vector environment's state. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cartsim.h"

typedef struct {
    const char *env, *policy;
    int64_t n;
    cs_backend backend;
    cs_dtype dtype;
    int threads, unroll;
    const char *param;          /* a range: a parameter drawn per environment at each restart */
} opening;

static cs_env *open_with(const opening *o)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = o->env;
    cfg.num_envs = o->n;
    cfg.backend = o->backend;
    cfg.dtype = o->dtype;
    cfg.policy = o->policy;
    cfg.threads = o->threads ? o->threads : 1;
    cfg.unroll = o->unroll ? o->unroll : 1;
    if (o->param)
        cfg.params[cfg.n_params++] = o->param;
    cs_env *env;
    cs_status s = cs_env_open(&cfg, &env);
    cr_assert_eq(s, CS_OK, "open %s: %s", o->env, cs_env_error(env));
    return env;
}

/* Steps `a` and `b` alike (next-step auto-reset) until some environment has
 * just ended, so that restarts are pending when the state is copied. */
static void step_until_an_end(cs_env *a, cs_env *b, int64_t n)
{
    int32_t *actions = calloc((size_t)n, sizeof *actions);
    cr_assert(actions);
    bool ended = false;
    for (int t = 0; t < 200 && !ended; t++) {
        for (int64_t i = 0; i < n; i++)
            actions[i] = (int32_t)((i + t / 3) % 2);
        cr_assert_eq(cs_env_step(a, actions), CS_OK, "%s", cs_env_error(a));
        if (b)
            cr_assert_eq(cs_env_step(b, actions), CS_OK, "%s", cs_env_error(b));
        const uint8_t *term = cs_env_terminated(a), *trunc = cs_env_truncated(a);
        for (int64_t i = 0; i < n && t >= 20; i++)
            ended |= term[i] || trunc[i];
    }
    cr_assert(ended, "no episode ended: nothing pending to copy");
    free(actions);
}

static void expect_same_state(cs_env *a, cs_env *b, int64_t n, unsigned dim, const char *what)
{
    double *x = calloc((size_t)n * dim, sizeof *x), *y = calloc((size_t)n * dim, sizeof *y);
    cr_assert(x && y);
    cr_assert_eq(cs_env_get_state(a, x), CS_OK);
    cr_assert_eq(cs_env_get_state(b, y), CS_OK);
    cr_expect_eq(memcmp(x, y, (size_t)n * dim * sizeof *x), 0, "%s: the states differ", what);
    free(x);
    free(y);
}

static void expect_same_rollout(cs_env *a, cs_env *b, int64_t steps, const char *what)
{
    cs_rollout_stats sa, sb;
    cr_assert_eq(cs_env_rollout(a, steps, &sa), CS_OK, "%s", cs_env_error(a));
    cr_assert_eq(cs_env_rollout(b, steps, &sb), CS_OK, "%s", cs_env_error(b));
    cr_expect_gt(sa.episodes, 0, "%s: the rollout finished no episode", what);
    cr_expect_eq(sa.checksum, sb.checksum, "%s: checksums %016llx and %016llx", what,
                 (unsigned long long)sa.checksum, (unsigned long long)sb.checksum);
    cr_expect_eq(sa.episodes, sb.episodes, "%s: %lld and %lld episodes", what, (long long)sa.episodes,
                 (long long)sb.episodes);
    cr_expect_eq(memcmp(&sa.mean_return, &sb.mean_return, sizeof sa.mean_return), 0, "%s: mean returns %.17g and %.17g",
                 what, sa.mean_return, sb.mean_return);
}

/* The original steps on, then rolls out; the sibling takes a copy of its
 * state at the same moment and rolls out the same: every bit equal, on each
 * host backend and dtype, with per-environment parameters and restarts
 * pending, whatever the sibling's threads and unroll. Then both step once
 * more: the step counter and seed came along too. */
Test(copy_state, a_rollout_continued_in_a_sibling_equals_the_original_bit_for_bit, .timeout = 120)
{
    const cs_backend backends[] = {CS_BACKEND_CPU, CS_BACKEND_INTERP};
    const cs_dtype dtypes[] = {CS_DTYPE_F32, CS_DTYPE_F64};
    const int64_t n = 300;
    for (int bi = 0; bi < 2; bi++)
        for (int di = 0; di < 2; di++) {
            opening o = {"cartpole", "random", n, backends[bi], dtypes[di], 1, 1, "length=0.3:0.7"};
            cs_env *original = open_with(&o);
            o.threads = 2;
            o.unroll = 4;
            cs_env *sibling = open_with(&o);
            cr_assert_eq(cs_env_reset(original, 11), CS_OK);
            cr_assert_eq(cs_env_reset(sibling, 999), CS_OK, "a different state, to be overwritten");
            step_until_an_end(original, NULL, n);
            cr_assert_eq(cs_env_copy_state(sibling, original), CS_OK, "%s", cs_env_error(sibling));
            const char *what = bi == 0 ? (di == 0 ? "cpu f32" : "cpu f64") : (di == 0 ? "interp f32" : "interp f64");
            expect_same_rollout(original, sibling, 237, what);
            expect_same_state(original, sibling, n, 4, what);
            int32_t *actions = calloc((size_t)n, sizeof *actions);
            cr_assert(actions);
            cr_assert_eq(cs_env_step(original, actions), CS_OK);
            cr_assert_eq(cs_env_step(sibling, actions), CS_OK);
            cr_expect_eq(memcmp(cs_env_obs(original), cs_env_obs(sibling), (size_t)n * 4 * sizeof(float)), 0,
                         "%s: the next step's observations differ", what);
            free(actions);
            cs_env_close(original);
            cs_env_close(sibling);
        }
}

/* The policy is the one thing a sibling may change: a random batch's state,
 * rolled out by a heuristic sibling, gives what a heuristic batch stepped
 * the same way rolls out (steps do not read the policy). And the copy back
 * leaves the original where the sibling's rollout ended. */
Test(copy_state, a_sibling_with_another_policy_continues_the_same_state)
{
    const int64_t n = 256;
    opening o = {"cartpole", "random", n, CS_BACKEND_CPU, CS_DTYPE_F64, 1, 1, NULL};
    cs_env *random = open_with(&o);
    o.policy = "heuristic";
    cs_env *heuristic = open_with(&o), *reference = open_with(&o);
    cr_assert_eq(cs_env_reset(random, 3), CS_OK);
    cr_assert_eq(cs_env_reset(reference, 3), CS_OK);
    step_until_an_end(random, reference, n);
    cr_assert_eq(cs_env_reset(heuristic, 4), CS_OK);
    cr_assert_eq(cs_env_copy_state(heuristic, random), CS_OK, "%s", cs_env_error(heuristic));
    expect_same_rollout(heuristic, reference, 300, "heuristic from random's state");
    cr_assert_eq(cs_env_copy_state(random, heuristic), CS_OK, "%s", cs_env_error(random));
    expect_same_state(random, reference, n, 4, "copied back");
    cs_env_close(random);
    cs_env_close(heuristic);
    cs_env_close(reference);
}

/* Batches that are not the same shape are refused with what differs, and a
 * batch never reset has no state to give. */
Test(copy_state, refuses_what_is_not_a_sibling)
{
    opening o = {"cartpole", NULL, 8, CS_BACKEND_INTERP, CS_DTYPE_F32, 1, 1, NULL};
    cs_env *dst = open_with(&o);
    cs_env *unreset = open_with(&o);
    cr_expect_eq(cs_env_copy_state(dst, unreset), CS_ERR_STATE);
    cr_expect(strstr(cs_env_error(dst), "reset"), "%s", cs_env_error(dst));
    struct {
        opening o;
        const char *says;
    } others[] = {
        {{"pendulum", NULL, 8, CS_BACKEND_INTERP, CS_DTYPE_F32, 1, 1, NULL}, "pendulum"},
        {{"cartpole", NULL, 9, CS_BACKEND_INTERP, CS_DTYPE_F32, 1, 1, NULL}, "[0, 9)"},
        {{"cartpole", NULL, 8, CS_BACKEND_INTERP, CS_DTYPE_F64, 1, 1, NULL}, "f64"},
    };
    for (size_t k = 0; k < sizeof others / sizeof others[0]; k++) {
        cs_env *src = open_with(&others[k].o);
        cr_assert_eq(cs_env_reset(src, 1), CS_OK);
        cr_expect_eq(cs_env_copy_state(dst, src), CS_ERR_ARGUMENT, "%s", others[k].says);
        cr_expect(strstr(cs_env_error(dst), others[k].says), "'%s' does not name %s", cs_env_error(dst),
                  others[k].says);
        cs_env_close(src);
    }
    cr_expect_eq(cs_env_copy_state(dst, NULL), CS_ERR_ARGUMENT);
    cr_expect_eq(cs_env_copy_state(NULL, dst), CS_ERR_ARGUMENT);
    cs_env_close(dst);
    cs_env_close(unreset);
}
