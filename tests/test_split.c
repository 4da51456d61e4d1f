/* A batch split into slices (cs_config.first_env) is the same batch: every
 * slice's environments draw, step and restart exactly as the same
 * environments of the whole batch, and the chained checksum of the slices is
 * the whole batch's. This is what lets MPI ranks (or any framework) share one
 * batch without the library knowing of them. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cartsim.h"

static cs_env *open_slice(const char *name, int64_t first, int64_t n, cs_dtype dtype, const char *param)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = name;
    cfg.num_envs = n;
    cfg.first_env = first;
    cfg.backend = CS_BACKEND_CPU;
    cfg.dtype = dtype;
    cfg.threads = 1;
    if (param) {
        cfg.params[0] = param;
        cfg.n_params = 1;
    }
    cs_env *env = NULL;
    cs_status s = cs_env_open(&cfg, &env);
    cr_assert_eq(s, CS_OK, "%s: %s", name, env ? cs_env_error(env) : "no handle");
    return env;
}

/* Rolls the whole batch of n and the slices cut at `cuts` (ascending, inside
 * (0, n)) for `steps` steps and compares states and checksums. */
static void check_split(const char *name, cs_dtype dtype, const char *param, int64_t n, const int64_t *cuts,
                        int n_cuts, int64_t steps)
{
    cs_env *whole = open_slice(name, 0, n, dtype, param);
    cs_env_info info;
    cr_assert_eq(cs_env_get_info(whole, &info), CS_OK);
    unsigned dim = info.state_dim;
    cs_rollout_stats ws;
    cr_assert_eq(cs_env_reset(whole, 11), CS_OK);
    cr_assert_eq(cs_env_rollout(whole, steps, &ws), CS_OK);
    double *wstate = malloc(sizeof(double) * dim * (size_t)n);
    cr_assert_eq(cs_env_get_state(whole, wstate), CS_OK);

    int n_slices = n_cuts + 1;
    cs_env *slice[8];
    int64_t begin[9];
    begin[0] = 0;
    for (int k = 0; k < n_cuts; k++)
        begin[k + 1] = cuts[k];
    begin[n_slices] = n;
    int64_t episodes = 0;
    for (int k = 0; k < n_slices; k++) {
        int64_t m = begin[k + 1] - begin[k];
        slice[k] = open_slice(name, begin[k], m, dtype, param);
        cs_rollout_stats st;
        cr_assert_eq(cs_env_reset(slice[k], 11), CS_OK);
        cr_assert_eq(cs_env_rollout(slice[k], steps, &st), CS_OK);
        episodes += st.episodes;
        double *s = malloc(sizeof(double) * dim * (size_t)m);
        cr_assert_eq(cs_env_get_state(slice[k], s), CS_OK);
        for (unsigned c = 0; c < dim; c++)
            cr_assert(memcmp(s + (size_t)c * (size_t)m, wstate + (size_t)c * (size_t)n + begin[k],
                             sizeof(double) * (size_t)m) == 0,
                      "%s: slice [%lld, %lld) differs from the whole batch in state %u", name, (long long)begin[k],
                      (long long)begin[k + 1], c);
        free(s);
    }
    cr_expect_eq(episodes, ws.episodes, "%s: episodes %lld in slices, %lld whole", name, (long long)episodes,
                 (long long)ws.episodes);

    uint64_t h = CS_CHECKSUM_START;
    unsigned parts = cs_env_checksum_parts(slice[0]);
    cr_assert_gt(parts, 0);
    for (unsigned p = 0; p < parts; p++)
        for (int k = 0; k < n_slices; k++)
            cr_assert_eq(cs_env_checksum_part(slice[k], p, &h), CS_OK);
    cr_expect_eq(h, ws.checksum, "%s: chained checksum %016llx, whole batch %016llx", name, (unsigned long long)h,
                 (unsigned long long)ws.checksum);

    /* One handle's chain is its own rollout checksum. */
    uint64_t one = CS_CHECKSUM_START;
    for (unsigned p = 0; p < cs_env_checksum_parts(whole); p++)
        cr_assert_eq(cs_env_checksum_part(whole, p, &one), CS_OK);
    cr_expect_eq(one, ws.checksum);

    for (int k = 0; k < n_slices; k++)
        cs_env_close(slice[k]);
    cs_env_close(whole);
    free(wstate);
}

Test(split, cartpole_slices_are_the_whole_batch)
{
    const int64_t cuts[] = {3, 17, 18};
    check_split("cartpole", CS_DTYPE_F64, NULL, 40, cuts, 3, 700);
}

Test(split, box_actions_and_drawn_parameters_follow_the_global_index)
{
    /* Pendulum: random box actions (the step stream); g drawn per
     * environment at every restart (the restart stream). */
    const int64_t cuts[] = {5, 6};
    check_split("pendulum", CS_DTYPE_F32, "g=5:15", 23, cuts, 2, 450);
}

Test(split, uneven_slices_of_acrobot)
{
    const int64_t cuts[] = {1};
    check_split("acrobot", CS_DTYPE_F64, NULL, 9, cuts, 1, 600);
}

Test(split, first_env_is_checked)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = "cartpole";
    cfg.num_envs = 2;
    cfg.backend = CS_BACKEND_INTERP;
    cs_env *env = NULL;
    cfg.first_env = -1;
    cr_expect_eq(cs_env_open(&cfg, &env), CS_ERR_ARGUMENT);
    cr_expect(env && strstr(cs_env_error(env), "first_env"), "%s", env ? cs_env_error(env) : "no handle");
    cs_env_close(env);
    env = NULL;
    cfg.first_env = (INT64_C(1) << 32) - 1;
    cr_expect_eq(cs_env_open(&cfg, &env), CS_ERR_ARGUMENT);
    cs_env_close(env);
    env = NULL;
    cfg.first_env = (INT64_C(1) << 32) - 2;
    cr_expect_eq(cs_env_open(&cfg, &env), CS_OK, "%s", env ? cs_env_error(env) : "");
    cs_env_close(env);
}
