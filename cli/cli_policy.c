/* --policy for run, eval, view and render: a policy by name (random,
 * heuristic, linear, mlp:32), or a trained policy file, told apart by a '/'
 * or a '.' in it. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "status.h"

int cli_policy_prepare(cli_args *a, cli_policy *pol)
{
    memset(pol, 0, sizeof *pol);
    const char *spec = a->policy;
    if (!spec || (!strchr(spec, '/') && !strchr(spec, '.'))) {
        a->cfg.policy = spec;
        return 0;
    }
    char err[1024];
    cs_status st = cs_policy_load(spec, &pol->file, err, sizeof err);
    if (st != CS_OK)
        return cli_error(st == CS_ERR_IO || st == CS_ERR_NOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE, "%s", err);
    pol->from_file = true;
    pol->path = spec;
    a->cfg.policy = pol->file.policy;
    return 0;
}

cs_status cli_policy_set_weights(cs_env *env, const cli_policy *pol, char *err, size_t err_size)
{
    if (!pol->from_file)
        return CS_OK;
    cs_env_info info;
    cs_status st = cs_env_get_info(env, &info);
    if (st != CS_OK)
        return cs_say(err, err_size, st, "%s", cs_env_error(env));
    if (strcmp(info.name, pol->file.env) != 0)
        return cs_say(err, err_size, CS_ERR_ARGUMENT, "%s is a policy for %s, not for %s", pol->path, pol->file.env,
                      info.name);
    unsigned n = cs_env_num_weights(env);
    if (n != pol->file.n_weights)
        return cs_say(err, err_size, CS_ERR_ARGUMENT, "%s holds %u weights, but %s on %s has %u: not this architecture",
                      pol->path, pol->file.n_weights, pol->file.policy, info.name, n);
    size_t envs = (size_t)info.num_envs;
    double *w = malloc((n ? n : 1) * envs * sizeof *w);
    if (!w)
        return cs_say(err, err_size, CS_ERR_NOMEM, "out of memory for the weights");
    for (unsigned k = 0; k < n; k++)
        for (size_t i = 0; i < envs; i++)
            w[k * envs + i] = pol->file.weights[k];
    st = cs_env_set_weights(env, w);
    free(w);
    return st == CS_OK ? CS_OK : cs_say(err, err_size, st, "%s", cs_env_error(env));
}

int cli_policy_apply(cs_env *env, const cli_policy *pol)
{
    char err[1024];
    cs_status st = cli_policy_set_weights(env, pol, err, sizeof err);
    if (st == CS_OK)
        return 0;
    return st == CS_ERR_ARGUMENT ? cli_error(CLI_EXIT_USAGE, "%s", err) : cli_lib_error(st, err);
}

void cli_policy_free(cli_policy *pol) { cs_policy_file_free(&pol->file); }
