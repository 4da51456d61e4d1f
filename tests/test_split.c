/* A batch split into slices (cs_config.first_env) is the same batch: every
 * slice's environments draw, step and restart exactly as the same
 * environments of the whole batch, and the chained checksum of the slices is
 * the whole batch's. This is what lets MPI ranks (or any framework) share one
 * batch without the library knowing of them. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Slices of 1 to 4 environments run the rollout's short variant (one
 * 16-byte vector, words drawn two Philox blocks ahead), 5 to 8 one padded
 * 32-byte vector, more the general loop: the same trajectories in every one,
 * f32 being where the vector width differs (and f64 where the sin and cos
 * of far lanes are redone one by one). */
Test(split, short_padded_and_long_blocks_step_as_the_whole_batch)
{
    const int64_t cuts[] = {1, 5, 8, 16, 272, 285};   /* 1, 4, 3, 8, 256, 13, 15 */
    check_split("cartpole", CS_DTYPE_F32, NULL, 300, cuts, 6, 700);
    check_split("cartpole", CS_DTYPE_F64, NULL, 300, cuts, 6, 700);   /* sin, cos: near and far lanes */
    const int64_t box_cuts[] = {2, 6};   /* 2, 4, 34 */
    check_split("mountain_car_continuous", CS_DTYPE_F32, NULL, 40, box_cuts, 2, 700);
}

/* An environment drawing `noise` uniforms per step besides its box action:
 * 1 + noise words of the step stream per step, so two (a short block's
 * words drawn ahead) or three (a refill every step). Returns its path. */
static void write_noisy_env(char *path, int noise)
{
    char terms[128] = "";
    for (int k = 0; k < noise; k++)
        strcat(terms, " + 0.01 * uniform(-1, 1)");
    char src[1024];
    int len = snprintf(src, sizeof src,
                       "env noisy \"Noisy-v0\"\nmax_steps 60\nstate x, v\naction box(-1, 1)\nobserve x, v\n"
                       "reset {\n    x = uniform(-1, 1)\n    v = uniform(-1, 1)\n}\n"
                       "step {\n    v' = v + 0.05 * (clip(action, -1, 1) - x)%s\n    x' = x + 0.05 * v'\n"
                       "    terminated = abs(x') > 1.5\n    reward = -x' * x'\n}\n",
                       terms);
    int fd = mkstemps(path, 4);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, src, (size_t)len), (ssize_t)len);
    close(fd);
}

Test(split, several_draws_per_step_in_short_blocks)
{
    const int64_t cuts[] = {1, 4, 9};   /* 1, 3, 5, 11 */
    for (int noise = 1; noise <= 2; noise++) {
        char path[] = "/tmp/cartsim-split-XXXXXX.env";
        write_noisy_env(path, noise);
        check_split(path, CS_DTYPE_F32, NULL, 20, cuts, 3, 500);
        unlink(path);
    }
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

/* ---- training and evaluation split over K "processes" (threads here; MPI
 * ranks in the program): the same weights and returns for every K ---- */
#include <pthread.h>

typedef struct {
    pthread_barrier_t barrier;
    double *shared;             /* the allgather's meeting place */
} meeting;

typedef struct {
    meeting *m;
    int rank, ranks;
    cs_train_config tc;
    cs_train_result result;
    cs_status status;
    char error[256];
} worker;

static cs_status thread_exchange(void *user, double *values, int64_t first, int64_t count, int64_t total)
{
    worker *w = user;
    memcpy(w->m->shared + first, values + first, (size_t)count * sizeof *values);
    pthread_barrier_wait(&w->m->barrier);
    memcpy(values, w->m->shared, (size_t)total * sizeof *values);
    pthread_barrier_wait(&w->m->barrier);
    return CS_OK;
}

static void *train_worker(void *arg)
{
    worker *w = arg;
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = "cartpole";
    cfg.backend = CS_BACKEND_CPU;
    cfg.dtype = CS_DTYPE_F64;
    cfg.threads = 1;
    w->tc.split.rank = w->rank;
    w->tc.split.ranks = w->ranks;
    w->tc.split.exchange = w->ranks > 1 ? thread_exchange : NULL;
    w->tc.split.user = w;
    w->status = cs_train(&cfg, &w->tc, &w->result, w->error, sizeof w->error);
    return NULL;
}

static void train_split(cs_algo algo, int ranks, cs_train_result *out)
{
    meeting m;
    pthread_barrier_init(&m.barrier, NULL, (unsigned)ranks);
    m.shared = calloc(4096, sizeof *m.shared);
    worker w[3];
    pthread_t th[3];
    for (int r = 0; r < ranks; r++) {
        memset(&w[r], 0, sizeof w[r]);
        w[r].m = &m;
        w[r].rank = r;
        w[r].ranks = ranks;
        cs_train_config_init(&w[r].tc);
        w[r].tc.algo = algo;
        w[r].tc.population = 14;    /* 14 over 3: 5, 5, 4 */
        w[r].tc.generations = 4;
        w[r].tc.seed = 5;
        w[r].tc.target = 1e9;       /* never solved: every generation runs */
        w[r].tc.eval_episodes = 20; /* more than the population: two rounds */
        pthread_create(&th[r], NULL, train_worker, &w[r]);
    }
    for (int r = 0; r < ranks; r++)
        pthread_join(th[r], NULL);
    for (int r = 0; r < ranks; r++) {
        cr_assert_eq(w[r].status, CS_OK, "rank %d of %d: %s", r, ranks, w[r].error);
        cr_assert_eq(w[r].result.n_weights, w[0].result.n_weights);
        cr_assert(memcmp(w[r].result.weights, w[0].result.weights, w[0].result.n_weights * sizeof(double)) == 0,
                  "rank %d of %d trained other weights than rank 0", r, ranks);
        cr_assert(memcmp(&w[r].result.eval_return, &w[0].result.eval_return, sizeof(double)) == 0);
    }
    *out = w[0].result;
    for (int r = 1; r < ranks; r++)
        free(w[r].result.weights);
    pthread_barrier_destroy(&m.barrier);
    free(m.shared);
}

static void same_training_for_any_split(cs_algo algo)
{
    cs_train_result one, k;
    train_split(algo, 1, &one);
    for (int ranks = 2; ranks <= 3; ranks++) {
        train_split(algo, ranks, &k);
        cr_assert_eq(k.n_weights, one.n_weights);
        cr_expect(memcmp(k.weights, one.weights, one.n_weights * sizeof(double)) == 0,
                  "%d processes trained other weights than one", ranks);
        cr_expect(memcmp(&k.eval_return, &one.eval_return, sizeof(double)) == 0, "eval %.17g vs %.17g",
                  k.eval_return, one.eval_return);
        free(k.weights);
    }
    free(one.weights);
}

Test(split, es_trains_the_same_weights_for_1_2_3_processes, .timeout = 120)
{
    same_training_for_any_split(CS_ALGO_ES);
}

Test(split, cem_trains_the_same_weights_for_1_2_3_processes, .timeout = 120)
{
    same_training_for_any_split(CS_ALGO_CEM);
}

Test(split, shares_are_contiguous_and_cover_everything)
{
    for (int ranks = 1; ranks <= 7; ranks++)
        for (int64_t n = 0; n <= 23; n++) {
            int64_t next = 0;
            for (int r = 0; r < ranks; r++) {
                int64_t first, count;
                cs_split_share(n, r, ranks, &first, &count);
                cr_assert_eq(first, next);
                cr_assert(count == n / ranks || count == n / ranks + 1);
                next = first + count;
            }
            cr_assert_eq(next, n);
        }
}
