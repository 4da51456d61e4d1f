/* `cartsim train`: a linear or MLP policy trained by ES or CEM, one line
 * per generation, then the result and, with --out, the policy file. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jit.h"

void cli_train_defaults(cli_args *a)
{
    a->agent = "linear";
    a->algo = "es";
    a->pop = 256;
    a->generations = 200;
    a->episodes = 100;
    a->target = NAN;
}

typedef struct {
    const char *header;
    int64_t env_steps;          /* this process's, so far */
    double rollout_ms;          /* this process's training rollouts */
} progress_state;

/* The header waits for the first generation: a run that fails before it
 * (an unknown environment, a compile error) prints nothing on stdout. */
static void on_generation(void *user, const cs_train_progress *p)
{
    progress_state *ps = user;
    if (p->env_steps_per_sec > 0)
        ps->rollout_ms += (double)(p->env_steps - ps->env_steps) / p->env_steps_per_sec * 1e3;
    ps->env_steps = p->env_steps;
    if (p->generation == 1)
        fputs(ps->header, stdout);
    char eval[32] = "-";
    if (!isnan(p->eval_return))
        snprintf(eval, sizeof eval, "%.2f", p->eval_return);
    printf("gen %4" PRId64 "  mean %9.2f  best %9.2f  eval %9s  %9.3g env-steps/s  %7.2f s\n", p->generation,
           p->mean_return, p->best_return, eval, p->env_steps_per_sec, p->elapsed_ms / 1e3);
    fflush(stdout);
}

/* One JSON object for scripts: "solved" is true, false (the target was not
 * reached: a result, exit 0) or null (no target); "saved" the policy file or
 * null. */
static void report_json(cli_buf *b, const cli_args *a, const cs_train_result *r, const char *saved)
{
    cli_buf_str(b, "{\n  \"env\": ");
    cli_buf_json_string(b, r->env);
    cli_buf_str(b, ",\n  \"policy\": ");
    cli_buf_json_string(b, r->policy);
    cli_buf_str(b, ",\n  \"algo\": ");
    cli_buf_json_string(b, a->algo);
    cli_buf_printf(b, ",\n  \"pop\": %" PRId64 ",\n  \"seed\": %" PRIu64 ",\n  \"generations\": %" PRId64, a->pop,
                   a->seed, r->generations);
    cli_buf_printf(b, ",\n  \"solved\": %s", isnan(r->target) ? "null" : r->solved ? "true" : "false");
    cli_buf_str(b, ",\n  \"target\": ");
    if (isnan(r->target))
        cli_buf_str(b, "null");
    else
        cli_buf_repr(b, r->target);
    cli_buf_str(b, ",\n  \"eval_return\": ");
    cli_buf_repr(b, r->eval_return);
    cli_buf_printf(b, ",\n  \"eval_episodes\": %" PRId64 ",\n  \"env_steps\": %" PRId64, a->episodes, r->env_steps);
    cli_buf_printf(b, ",\n  \"elapsed_s\": %.6f,\n  \"compile_s\": %.6f", r->elapsed_ms / 1e3, r->compile_ms / 1e3);
    cli_buf_str(b, ",\n  \"saved\": ");
    cli_buf_json_string(b, saved);
    cli_buf_str(b, ",\n");
    cli_json_config(b, &a->cfg);
    cli_buf_str(b, "\n}\n");
}

int cli_train(cli_args *a)
{
    if (a->hidden && strcmp(a->agent, "mlp") != 0)
        return cli_error(CLI_EXIT_USAGE, "--hidden is for --agent mlp");
    char where[1024];
    if (strcmp(a->algo, "es") == 0 && a->pop % 2)
        return cli_error(CLI_EXIT_USAGE,
                         "%s: '%" PRId64 "' is odd: evolution strategies score candidates in mirrored pairs "
                         "(use %" PRId64 " or %" PRId64 ")",
                         cli_option_origin(a, OPT_POP, where, sizeof where), a->pop, a->pop - 1, a->pop + 1);
    char policy[64];
    if (strcmp(a->agent, "mlp") == 0)
        snprintf(policy, sizeof policy, "mlp:%s", a->hidden ? a->hidden : CLI_DEFAULT_HIDDEN);
    else
        snprintf(policy, sizeof policy, "linear");

    cs_train_config tc;
    cs_train_config_init(&tc);
    tc.algo = strcmp(a->algo, "cem") == 0 ? CS_ALGO_CEM : CS_ALGO_ES;
    tc.policy = policy;
    tc.population = a->pop;
    tc.generations = a->generations;
    tc.eval_episodes = a->episodes;
    tc.seed = a->seed;
    tc.target = a->target;
    char header[512];
    snprintf(header, sizeof header,
             "training %s on %s with %s: population %" PRId64 ", at most %" PRId64 " generations, seed %" PRIu64 "\n",
             policy, a->cfg.env, a->algo, a->pop, a->generations, a->seed);
    progress_state ps = {header, 0, 0};
    tc.progress = a->json ? NULL : on_generation;
    tc.user = &ps;
    /* Under mpirun every rank rolls out its share of the population and
     * only the scores travel: the same weights for any number of ranks. */
    if (cli_dist_ranks() > 1) {
        tc.split.rank = cli_dist_rank();
        tc.split.ranks = cli_dist_ranks();
        tc.split.exchange = cli_dist_exchange;
    }
    cs_train_result r;
    char err[1024];
    /* Before the first generation: a long training must not be lost at its
     * end for a destination that could never be written. */
    cs_status st = a->out && cli_dist_rank() == 0 ? cs_output_check(a->out, err, sizeof err) : CS_OK;
    if (st != CS_OK)
        return cli_lib_error(st, err);
    st = cs_train(&a->cfg, &tc, &r, err, sizeof err);
    if (st != CS_OK)
        return cli_lib_error(st, err);
    cli_fallback_notice(a->cfg.backend, r.backend, r.notice);
    /* Every rank takes part before any of them can stop: the whole job's total. */
    int64_t env_steps = r.env_steps;
    cli_dist_sum(&env_steps, 1);
    r.env_steps = env_steps;

    int rc = CLI_EXIT_OK;
    const char *saved = NULL;
    if (a->out && cli_dist_rank() == 0) {
        st = cs_policy_save(a->out, r.env, r.policy, r.n_weights, r.weights, err, sizeof err);
        if (st != CS_OK)
            rc = cli_lib_error(st, err);
        else
            saved = a->out;
    }
    free(r.weights);
    if (rc) {
        fflush(stdout);
        return rc;
    }
    cli_buf b = {0};
    if (a->json) {
        report_json(&b, a, &r, saved);
    } else {
        if (isnan(r.target))
            cli_buf_printf(&b, "done: no target; the policy's mean return over %" PRId64 " fresh episodes is %.2f",
                           a->episodes, r.eval_return);
        else
            cli_buf_printf(&b, "%s: mean return %.2f over %" PRId64 " fresh episodes (target %g) after %" PRId64
                               " generations",
                           r.solved ? "solved" : "not solved", r.eval_return, a->episodes, r.target, r.generations);
        cli_buf_printf(&b, ", %" PRId64 " env-steps, %.2f s (compile %.2f s)\n", r.env_steps, r.elapsed_ms / 1e3,
                       r.compile_ms / 1e3);
        if (cli_dist_ranks() > 1) {
            int64_t exchanges, bytes;
            double exchange_ms;
            cli_dist_exchange_figures(&exchanges, &bytes, &exchange_ms);
            double g = (double)(r.generations ? r.generations : 1);
            cli_buf_printf(&b, "ranks %d: per generation %.3f ms of rollout and %.3f ms of exchange on rank 0, %.0f "
                               "bytes gathered (scores, common starts, evaluations: %" PRId64 " exchanges in all)\n",
                           cli_dist_ranks(), ps.rollout_ms / g, exchange_ms / g, (double)bytes / g, exchanges);
        }
        if (saved)
            cli_buf_printf(&b, "saved %s (%s, %u weights)\n", saved, r.policy, r.n_weights);
        else
            cli_buf_str(&b, "not saved: the trained policy is discarded (--out FILE keeps it)\n");
    }
    if (cli_buf_print(&b) != CLI_EXIT_OK)
        rc = CLI_EXIT_FAIL;
    cli_buf_free(&b);
    return rc;
}
