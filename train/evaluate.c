/* Whole episodes from fresh resets: the score of one policy, exactly.
 *
 * A rollout of max_steps steps from a reset finishes every environment's
 * first episode (truncation ends it at the latest). Where an environment
 * finished only that one, its mean return is the episode's return; where it
 * finished more, the same rollout is replayed one step per call (the
 * results do not depend on how a rollout is cut) and each first episode's
 * return is read the step it ends. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "train.h"
#include "status.h"

static cs_status env_failed(cs_env *env, cs_status s, char *error, size_t size)
{
    return cs_say(error, size, s, "%s", cs_env_error(env)[0] ? cs_env_error(env) : cs_status_string(s));
}

/* First episodes of environments [0, k) after a reset seeded `seed`. */
static cs_status first_episodes(cs_env *env, int64_t max_steps, uint64_t seed, int64_t k, double *out, char *error,
                                size_t size)
{
    cs_status s;
    if ((s = cs_env_reset(env, seed)) != CS_OK || (s = cs_env_rollout(env, max_steps, NULL)) != CS_OK)
        return env_failed(env, s, error, size);
    const int64_t *count = cs_env_episode_counts(env);
    const double *ret = cs_env_episode_returns(env);
    if (!count || !ret)
        return env_failed(env, CS_ERR_NOMEM, error, size);
    bool single = true;
    for (int64_t i = 0; i < k; i++)
        single &= count[i] == 1;
    if (single) {
        for (int64_t i = 0; i < k; i++)
            out[i] = ret[i];
        return CS_OK;
    }
    bool *got = calloc((size_t)k, sizeof *got);
    if (!got)
        return cs_say(error, size, CS_ERR_NOMEM, "out of memory");
    int64_t left = k;
    if ((s = cs_env_reset(env, seed)) != CS_OK)
        left = 0;
    /* Restarts forced by a NaN state are not episodes: allow for a few. */
    for (int64_t t = 0; left > 0 && t < 4 * max_steps; t++) {
        if ((s = cs_env_rollout(env, 1, NULL)) != CS_OK || !(count = cs_env_episode_counts(env)) ||
            !(ret = cs_env_episode_returns(env))) {
            s = s != CS_OK ? s : CS_ERR_NOMEM;
            break;
        }
        for (int64_t i = 0; i < k; i++)
            if (!got[i] && count[i] > 0) {
                got[i] = true;
                out[i] = ret[i];
                left--;
            }
    }
    for (int64_t i = 0; i < k; i++)
        if (!got[i])
            out[i] = NAN;
    free(got);
    return s == CS_OK ? CS_OK : env_failed(env, s, error, size);
}

static cs_status evaluate(cs_env *env, const double *weights, int64_t episodes, uint64_t seed, double *returns,
                          int64_t global_envs, const cs_split *split, char *error, size_t error_size)
{
    if (error && error_size)
        error[0] = 0;
    cs_env_info info;
    cs_status s;
    if (!env)
        return cs_say(error, error_size, CS_ERR_ARGUMENT, "no environment handle");
    if ((s = cs_env_get_info(env, &info)) != CS_OK)
        return env_failed(env, s, error, error_size);
    if (episodes < 1 || !returns)
        return cs_say(error, error_size, CS_ERR_ARGUMENT, "evaluate needs at least one episode and a place for returns");
    if (info.max_steps <= 0)
        return cs_say(error, error_size, CS_ERR_ARGUMENT,
                   "%s declares no max_steps: its episodes need not end, so they cannot be scored whole", info.name);
    if (global_envs < info.first_env + info.num_envs)
        return cs_say(error, error_size, CS_ERR_ARGUMENT,
                      "environments [%lld, %lld) are not a slice of a batch of %lld", (long long)info.first_env,
                      (long long)(info.first_env + info.num_envs), (long long)global_envs);
    unsigned nw = cs_env_num_weights(env);
    if (nw && weights && info.shared_weights) {
        if ((s = cs_env_set_weights(env, weights)) != CS_OK)
            return env_failed(env, s, error, error_size);
    } else if (nw && weights) {
        size_t n = (size_t)info.num_envs;
        double *w = malloc((size_t)nw * n * sizeof *w);
        if (!w)
            return cs_say(error, error_size, CS_ERR_NOMEM, "out of memory for the weights");
        for (unsigned k = 0; k < nw; k++)
            for (size_t i = 0; i < n; i++)
                w[k * n + i] = weights[k];
        s = cs_env_set_weights(env, w);
        free(w);
        if (s != CS_OK)
            return env_failed(env, s, error, error_size);
    }
    /* Round r runs episodes [r G, r G + k) on environments [0, k) of the
     * batch of G; this handle has [first, first + num_envs) of them. */
    for (int64_t done = 0, round = 0; done < episodes; round++) {
        int64_t k = episodes - done < global_envs ? episodes - done : global_envs;
        int64_t mine = k - info.first_env;
        mine = mine < 0 ? 0 : mine > info.num_envs ? info.num_envs : mine;
        if (mine > 0 && (s = first_episodes(env, info.max_steps, seed + (uint64_t)round, mine,
                                            returns + done + info.first_env, error, error_size)) != CS_OK)
            return s;
        if (split && split->exchange &&
            (s = split->exchange(split->user, returns + done, info.first_env, mine, k)) != CS_OK)
            return cs_say(error, error_size, s, "another process failed");
        done += k;
    }
    return CS_OK;
}

/* The message goes on the handle, as every call on a handle's ("" on success). */
static cs_status on_handle(cs_env *env, cs_status s, const char *msg)
{
    return cs_env_say(env, s, "%s", s == CS_OK ? "" : msg[0] ? msg : cs_status_string(s));
}

double cs_mean_return(const double *returns, int64_t n)
{
    double sum = 0;
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (!isnan(returns[i])) {
            sum += returns[i];
            m++;
        }
    return m ? sum / (double)m : NAN;
}

cs_status cs_evaluate(cs_env *env, const double *weights, int64_t episodes, uint64_t seed, double *returns)
{
    cs_env_info info;
    int64_t n = 0;
    char msg[1024] = "";
    if (!env)
        return CS_ERR_ARGUMENT;
    if (cs_env_get_info(env, &info) == CS_OK) {
        if (info.first_env != 0)
            return cs_env_say(env, CS_ERR_ARGUMENT, "a slice (first_env %lld) is evaluated with cs_evaluate_split",
                              (long long)info.first_env);
        n = info.num_envs;
    }
    return on_handle(env, evaluate(env, weights, episodes, seed, returns, n, NULL, msg, sizeof msg), msg);
}

cs_status cs_evaluate_split(cs_env *env, const double *weights, int64_t episodes, uint64_t seed, double *returns,
                            int64_t global_envs, const cs_split *split)
{
    char msg[1024] = "";
    if (!env)
        return CS_ERR_ARGUMENT;
    return on_handle(env, evaluate(env, weights, episodes, seed, returns, global_envs, split, msg, sizeof msg), msg);
}

void cs_split_share(int64_t n, int rank, int ranks, int64_t *first, int64_t *count)
{
    if (ranks < 1)
        ranks = 1;
    if (rank < 0 || rank >= ranks)
        rank = 0;
    if (n < 0)
        n = 0;
    int64_t base = n / ranks, extra = n % ranks;
    if (first)
        *first = (int64_t)rank * base + (rank < extra ? rank : extra);
    if (count)
        *count = base + (rank < extra);
}
