/* Training a policy's weights with whole-population rollouts: each
 * generation sets one candidate per environment, rolls every environment
 * out for max_steps steps from a reset in one fused launch, and scores each
 * candidate by the mean return of the episodes it finished. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"
#include "jit.h"
#include "status.h"

/* Evaluations in a row that must reach the target to stop. */
#define SOLVED_STREAK 2

void cs_train_config_init(cs_train_config *tc)
{
    if (!tc)
        return;
    memset(tc, 0, sizeof *tc);
    tc->algo = CS_ALGO_ES;
    tc->policy = "linear";
    tc->population = 256;
    tc->generations = 200;
    tc->target = NAN;
    tc->eval_episodes = 100;
    cs_train_settings_defaults(tc);   /* the algorithms' own: train/settings.c */
}

static cs_status check(const cs_train_config *tc, char *error, size_t size)
{
    if (tc->algo != CS_ALGO_ES && tc->algo != CS_ALGO_CEM && tc->algo != CS_ALGO_PPO)
        return cs_say(error, size, CS_ERR_ARGUMENT, "unknown training algorithm %d", (int)tc->algo);
    cs_status s = cs_train_settings_check(tc, error, size);
    if (s != CS_OK)
        return s;
    if (tc->population < 2 || tc->population > (1 << 24))
        return cs_say(error, size, CS_ERR_ARGUMENT, "the population must be from 2 to %d, not %lld", 1 << 24,
                   (long long)tc->population);
    if (tc->generations < 1 || tc->generations > INT32_MAX)
        return cs_say(error, size, CS_ERR_ARGUMENT, "generations must be from 1 to %d", INT32_MAX);
    if (tc->eval_episodes < 1 || tc->eval_episodes > (1 << 24))
        return cs_say(error, size, CS_ERR_ARGUMENT, "eval_episodes must be from 1 to %d", 1 << 24);
    if (isinf(tc->target))
        return cs_say(error, size, CS_ERR_ARGUMENT, "the target must be finite (or NaN for the environment's)");
    if (tc->split.ranks > 1 && (tc->split.rank < 0 || tc->split.rank >= tc->split.ranks || !tc->split.exchange))
        return cs_say(error, size, CS_ERR_ARGUMENT, "a split needs 0 <= rank < ranks and an exchange");
    return CS_OK;
}

typedef struct {
    cs_env *env;
    cs_search search;
    double *w, *fitness, *returns, *start, *state;
    int64_t first, count;       /* this process's candidates of the population */
    double *slice_w;            /* their weights, [dim][count] */
    double *state0;             /* ES: the common start, environment 0's reset state */
} trainer;

static void trainer_free(trainer *t)
{
    cs_env_close(t->env);
    cs_search_free(&t->search);
    free(t->w);
    free(t->fitness);
    free(t->returns);
    free(t->start);
    free(t->state);
    free(t->slice_w);
    free(t->state0);
}

/* ES ranks a generation's candidates against each other: starting them all
 * from the same state (common random numbers; a new one every generation)
 * takes the luck of the draw out of the comparison. That state is candidate
 * 0's reset state, which only the process holding candidate 0 has. */
static cs_status common_start(trainer *t, const cs_env_info *info, const cs_split *split)
{
    if (t->search.algo != CS_ALGO_ES)
        return CS_OK;
    cs_status s = cs_env_get_state(t->env, t->state);
    if (s != CS_OK)
        return s;
    size_t n = (size_t)t->count;
    unsigned dim = info->state_dim;
    for (unsigned k = 0; k < dim; k++)
        t->state0[k] = t->state[k * n];
    if (split->exchange && (s = split->exchange(split->user, t->state0, 0, t->first == 0 ? dim : 0, dim)) != CS_OK)
        return s;
    for (unsigned k = 0; k < dim; k++)
        for (size_t j = 0; j < n; j++)
            t->state[k * n + j] = t->state0[k];
    return cs_env_set_state(t->env, t->state, NULL);
}

/* The mean policy on eval_episodes fresh episodes. */
static cs_status score_mean(trainer *t, const cs_train_config *tc, uint64_t seed, double *score, char *error,
                            size_t size)
{
    cs_status s = cs_evaluate_split(t->env, t->search.mean, tc->eval_episodes, seed, t->returns, t->search.pop,
                                    &tc->split);
    if (s != CS_OK)
        cs_say(error, size, s, "%s", cs_env_error(t->env));
    *score = cs_mean_return(t->returns, tc->eval_episodes);
    return s;
}

static cs_status run(trainer *t, const cs_config *cfg, const cs_train_config *tc, cs_train_result *out,
                     double start_ms, char *error, size_t size)
{
    cs_agent agent;
    char why[256];
    if (cs_agent_parse(tc->policy, &agent, why, sizeof why))
        return cs_say(error, size, CS_ERR_ARGUMENT, "%s", why);
    if (agent.kind != CS_AGENT_DENSE)
        return cs_say(error, size, CS_ERR_ARGUMENT, "policy '%s' has no weights to train (use linear or mlp:H)",
                   tc->policy ? tc->policy : "random");
    if (agent.actor_critic)
        return cs_say(error, size, CS_ERR_ARGUMENT, "policy '%s' is the actor-critic PPO trains: name its architecture "
                      "alone (%s) with algo ppo", tc->policy, tc->policy + 4);
    cs_agent_format(&agent, out->policy);
    int64_t pop = tc->population + (tc->algo == CS_ALGO_ES && tc->population % 2);

    int ranks = tc->split.ranks > 1 ? tc->split.ranks : 1;
    cs_split_share(pop, ranks > 1 ? tc->split.rank : 0, ranks, &t->first, &t->count);
    if (t->count < 1)
        return cs_say(error, size, CS_ERR_ARGUMENT, "a population of %lld cannot be split over %d processes",
                      (long long)pop, ranks);

    cs_config c = *cfg;
    c.num_envs = t->count;
    c.first_env = t->first;
    c.policy = out->policy;
    cs_status s = cs_env_open(&c, &t->env);
    if (s != CS_OK)
        return cs_say(error, size, s, "%s", t->env ? cs_env_error(t->env) : "out of memory");
    cs_env_info info;
    if ((s = cs_env_get_info(t->env, &info)) != CS_OK)
        return cs_say(error, size, s, "%s", cs_env_error(t->env));
    if (info.max_steps <= 0)
        return cs_say(error, size, CS_ERR_ARGUMENT, "%s declares no max_steps: a candidate needs whole episodes",
                   info.name);
    snprintf(out->env, sizeof out->env, "%s", info.name);
    out->compile_ms = info.compile_ms;
    out->backend = info.backend;
    snprintf(out->notice, sizeof out->notice, "%s", info.notice ? info.notice : "");
    out->target = isnan(tc->target) ? info.reward_threshold : tc->target;
    unsigned dim = cs_env_num_weights(t->env);
    unsigned n_out = info.discrete ? info.n_actions : info.action_dim;
    t->start = malloc((dim ? dim : 1) * sizeof *t->start);
    t->w = malloc((size_t)(dim ? dim : 1) * (size_t)pop * sizeof *t->w);
    t->fitness = malloc((size_t)pop * sizeof *t->fitness);
    t->returns = malloc((size_t)tc->eval_episodes * sizeof *t->returns);
    t->state = malloc((size_t)(info.state_dim ? info.state_dim : 1) * (size_t)t->count * sizeof *t->state);
    t->state0 = malloc((info.state_dim ? info.state_dim : 1) * sizeof *t->state0);
    t->slice_w = malloc((size_t)(dim ? dim : 1) * (size_t)t->count * sizeof *t->slice_w);
    if (!t->start || !t->w || !t->fitness || !t->returns || !t->state || !t->state0 || !t->slice_w)
        return cs_say(error, size, CS_ERR_NOMEM, "out of memory");
    cs_dense_init(&agent, info.obs_dim, n_out, tc->seed, t->start);
    if (cs_search_init(&t->search, tc, dim, pop, t->start))
        return cs_say(error, size, CS_ERR_NOMEM, "out of memory");

    out->eval_return = NAN;
    bool evaluated = false;
    int streak = 0;   /* evaluations in a row that reached the target */
    for (int64_t g = 0; g < tc->generations && !out->solved; g++) {
        /* The program's Ctrl-C (cs_config.interrupt) stops between generations;
         * ranks of a split job go on together (mpirun ends them all). */
        if (cfg->interrupt && *cfg->interrupt && ranks == 1)
            return cs_say(error, size, CS_ERR_INTERRUPTED, "interrupted after %lld of %lld generations", (long long)g,
                          (long long)tc->generations);
        /* Every process draws the whole population; each rolls out its own. */
        cs_search_ask(&t->search, t->w);
        for (unsigned k = 0; k < dim; k++)
            memcpy(t->slice_w + (size_t)k * (size_t)t->count, t->w + (size_t)k * (size_t)pop + t->first,
                   (size_t)t->count * sizeof *t->slice_w);
        cs_rollout_stats stats;
        if ((s = cs_env_set_weights(t->env, t->slice_w)) != CS_OK ||
            (s = cs_env_reset(t->env, cs_seed_mix(tc->seed, CS_NOISE_RESET, (uint64_t)g))) != CS_OK ||
            (s = common_start(t, &info, &tc->split)) != CS_OK ||
            (s = cs_env_rollout(t->env, info.max_steps, &stats)) != CS_OK)
            return cs_say(error, size, s, "%s", cs_env_error(t->env)[0] ? cs_env_error(t->env) : "another process failed");
        const double *ret = cs_env_episode_returns(t->env);
        if (!ret)
            return cs_say(error, size, CS_ERR_NOMEM, "%s", cs_env_error(t->env));
        memcpy(t->fitness + t->first, ret, (size_t)t->count * sizeof *t->fitness);
        /* Only the scores travel. */
        if (tc->split.exchange && (s = tc->split.exchange(tc->split.user, t->fitness, t->first, t->count, pop)) != CS_OK)
            return cs_say(error, size, s, "another process failed");
        cs_train_progress p = {0};
        p.generation = g + 1;
        p.mean_return = cs_mean_return(t->fitness, pop);
        p.best_return = NAN;
        for (int64_t i = 0; i < pop; i++)
            if (!isnan(t->fitness[i]) && !(t->fitness[i] <= p.best_return))
                p.best_return = t->fitness[i];
        p.eval_return = NAN;
        cs_search_tell(&t->search, t->fitness);
        out->env_steps += stats.env_steps;
        out->generations = g + 1;
        p.env_steps = out->env_steps;
        p.env_steps_per_sec = stats.run_ms > 0 ? (double)stats.env_steps / (stats.run_ms / 1e3) : NAN;
        /* Worth a look once some candidate scores the target. */
        if (!isnan(out->target) && p.best_return >= out->target) {
            if ((s = score_mean(t, tc, cs_seed_mix(tc->seed, CS_NOISE_EVAL, (uint64_t)g), &p.eval_return, error,
                                size)) != CS_OK)
                return s;
            out->eval_return = p.eval_return;
            /* Twice in a row, on different episodes: one lucky set of 100
             * is not a solved environment. */
            streak = p.eval_return >= out->target ? streak + 1 : 0;
            out->solved = streak >= SOLVED_STREAK;
            evaluated = g + 1 == tc->generations || out->solved;
        }
        p.elapsed_ms = cs_now_ms() - start_ms;
        if (tc->progress)
            tc->progress(tc->user, &p);
    }
    if (!evaluated &&
        (s = score_mean(t, tc, cs_seed_mix(tc->seed, CS_NOISE_EVAL, (uint64_t)tc->generations), &out->eval_return,
                        error, size)) != CS_OK)
        return s;
    out->solved = !isnan(out->target) && out->eval_return >= out->target;
    out->n_weights = dim;
    if (!(out->weights = malloc((dim ? dim : 1) * sizeof *out->weights)))
        return cs_say(error, size, CS_ERR_NOMEM, "out of memory");
    memcpy(out->weights, t->search.mean, dim * sizeof *out->weights);
    return CS_OK;
}

cs_status cs_train(const cs_config *cfg, const cs_train_config *tc, cs_train_result *out, char *error,
                   size_t error_size)
{
    double start = cs_now_ms();
    if (error && error_size)
        error[0] = 0;
    if (!out)
        return cs_say(error, error_size, CS_ERR_ARGUMENT, "no place for the result");
    memset(out, 0, sizeof *out);
    if (!cfg || !tc)
        return cs_say(error, error_size, CS_ERR_ARGUMENT, "no configuration given");
    cs_status s = check(tc, error, error_size);
    if (s != CS_OK)
        return s;
    if (tc->algo == CS_ALGO_PPO) {
        s = cs_ppo_train(cfg, tc, out, start, error, error_size);
        if (s != CS_OK && s != CS_ERR_NUMERIC) {
            free(out->weights);
            out->weights = NULL;
        }
        out->elapsed_ms = cs_now_ms() - start;
        return s;
    }
    trainer t;
    memset(&t, 0, sizeof t);
    s = run(&t, cfg, tc, out, start, error, error_size);
    trainer_free(&t);
    if (s != CS_OK) {
        free(out->weights);
        out->weights = NULL;
    }
    out->elapsed_ms = cs_now_ms() - start;
    return s;
}
