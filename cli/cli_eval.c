/* `cartsim eval`: a policy's return over fresh episodes. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Environments stepped at once; more episodes go in rounds. */
#define EVAL_ENVS_MAX 4096

void cli_eval_defaults(cli_args *a)
{
    a->episodes = 100;
}

int cli_eval(cli_args *a)
{
    cli_policy pol;
    int rc = cli_policy_prepare(a, &pol);
    if (rc)
        return rc;
    int64_t global_envs = a->episodes < EVAL_ENVS_MAX ? a->episodes : EVAL_ENVS_MAX;
    a->cfg.num_envs = global_envs;
    /* Under mpirun each rank plays the episodes of its share of the
     * environments; every rank ends with all the returns. */
    cs_split split = {0};
    if (cli_dist_ranks() > 1) {
        split.rank = cli_dist_rank();
        split.ranks = cli_dist_ranks();
        split.exchange = cli_dist_exchange;
        cs_split_share(global_envs, split.rank, split.ranks, &a->cfg.first_env, &a->cfg.num_envs);
        if (a->cfg.num_envs < 1) {
            cli_policy_free(&pol);
            return cli_error(CLI_EXIT_USAGE, "--episodes %" PRId64 " is fewer than the %d processes", a->episodes,
                             split.ranks);
        }
    }
    cs_env *env = NULL;
    double *ret = malloc((size_t)a->episodes * sizeof *ret);
    cs_status st = ret ? cs_env_open(&a->cfg, &env) : CS_ERR_NOMEM;
    if (st != CS_OK)
        rc = cli_lib_error(st, env ? cs_env_error(env) : "out of memory");
    else if (!(rc = cli_policy_apply(env, &pol)))
        cli_env_notice(&a->cfg, env);
    if (!rc && (st = cs_evaluate_split(env, pol.from_file ? pol.file.weights : NULL, a->episodes, a->seed, ret,
                                       global_envs, &split)) != CS_OK)
        rc = cli_lib_error(st, cs_env_error(env));
    cs_env_info info;
    if (!rc && (st = cs_env_get_info(env, &info)) != CS_OK)
        rc = cli_lib_error(st, cs_env_error(env));
    if (rc) {
        cs_env_close(env);
        cli_policy_free(&pol);
        free(ret);
        return rc;
    }

    /* Episodes that never ended (NaN states restart without ending one) are left out. */
    double sum = 0, sq = 0, lo = INFINITY, hi = -INFINITY;
    int64_t n = 0;
    for (int64_t e = 0; e < a->episodes; e++)
        if (!isnan(ret[e])) {
            sum += ret[e];
            lo = ret[e] < lo ? ret[e] : lo;
            hi = ret[e] > hi ? ret[e] : hi;
            n++;
        }
    double mean = n ? sum / (double)n : NAN;
    for (int64_t e = 0; e < a->episodes; e++)
        if (!isnan(ret[e]))
            sq += (ret[e] - mean) * (ret[e] - mean);
    double std = n ? sqrt(sq / (double)n) : NAN;
    const char *name = a->policy ? a->policy : "random";
    cli_buf b = {0};
    if (a->json) {
        cli_buf_str(&b, "{\n  \"env\": ");
        cli_buf_json_string(&b, info.name);
        cli_buf_str(&b, ",\n  \"policy\": ");
        cli_buf_json_string(&b, name);
        cli_buf_str(&b, ",\n  \"architecture\": ");
        cli_buf_json_string(&b, a->cfg.policy ? a->cfg.policy : "random");
        cli_buf_printf(&b, ",\n  \"episodes\": %" PRId64 ",\n", a->episodes);
        cli_buf_printf(&b, "  \"unfinished\": %" PRId64 ",\n", a->episodes - n);
        cli_buf_printf(&b, "  \"seed\": %" PRIu64 ",\n", a->seed);
        cli_buf_json_number(&b, "mean_return", mean, false);
        cli_buf_json_number(&b, "std_return", std, false);
        cli_buf_json_number(&b, "min_return", n ? lo : NAN, false);
        cli_buf_json_number(&b, "max_return", n ? hi : NAN, false);
        cli_buf_json_number(&b, "reward_threshold", info.reward_threshold, false);
        cli_json_config(&b, &a->cfg);
        cli_buf_str(&b, "\n}\n");
    } else {
        cli_buf_printf(&b, "env        %s (%s)\n", info.name, info.title);
        cli_buf_printf(&b, "policy     %s%s%s%s\n", name, pol.from_file ? " (" : "",
                       pol.from_file ? pol.file.policy : "", pol.from_file ? ")" : "");
        cli_buf_printf(&b, "episodes   %" PRId64 " from seed %" PRIu64 "%s\n", a->episodes, a->seed,
                       n < a->episodes ? " (some never ended: left out)" : "");
        cli_buf_printf(&b, "return     mean %.2f  std %.2f  min %.2f  max %.2f\n", mean, std, n ? lo : NAN,
                       n ? hi : NAN);
        if (!isnan(info.reward_threshold))
            cli_buf_printf(&b, "threshold  %s: %s\n", cs_shortest(info.reward_threshold, (char[CS_REPR_MAX]){0}),
                           mean >= info.reward_threshold ? "reached" : "not reached");
    }
    cs_env_close(env);
    cli_policy_free(&pol);
    free(ret);
    rc = cli_buf_print(&b);
    cli_buf_free(&b);
    return rc;
}
