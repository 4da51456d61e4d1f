/* `cartsim train`: a linear or MLP policy trained by ES or CEM (one line
 * per generation) or by PPO (a live status line on a terminal, JSON lines
 * with --json), then the result and, with --out, the policy file; with
 * --plot, the learning curve. The output paths are checked before any
 * training, so that a run is never lost to an unwritable file at its end. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "jit.h"

void cli_train_defaults(cli_args *a)
{
    a->agent = NULL;   /* the algorithm's: linear for es and cem, mlp:64 for ppo */
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
    bool ppo, json, live;       /* ppo: JSON lines (json) or a status line on stderr (live) */
    bool tty;
    double last_shown_ms;
    cli_curve *curve;           /* --plot's points, or NULL */
} progress_state;

static void json_real(const char *key, double v)
{
    char repr[CS_REPR_MAX];
    cs_num_repr(v, repr);
    printf(", \"%s\": %s", key, isfinite(v) ? repr : "null");
}

/* PPO's iterations: one JSON line each (--json), or the status line on a
 * terminal (or with --progress), at most ten times a second. */
static void on_iteration(progress_state *ps, const cs_train_progress *p)
{
    if (ps->curve)
        cli_curve_add(ps->curve, (double)p->env_steps, p->mean_return, p->eval_return);
    if (p->generation == 1 && !ps->json)
        fputs(ps->header, stdout);
    if (ps->json) {
        printf("{\"type\": \"iteration\", \"iteration\": %" PRId64 ", \"env_steps\": %" PRId64, p->generation,
               p->env_steps);
        json_real("mean_return", p->mean_return);
        json_real("eval_return", p->eval_return);
        json_real("env_steps_per_sec", p->env_steps_per_sec);
        json_real("elapsed_s", p->elapsed_ms / 1e3);
        json_real("policy_loss", p->policy_loss);
        json_real("value_loss", p->value_loss);
        json_real("entropy", p->entropy);
        json_real("approx_kl", p->approx_kl);
        json_real("learning_rate", p->learning_rate);
        printf("}\n");
        fflush(stdout);
        return;
    }
    if (!ps->live || (p->elapsed_ms - ps->last_shown_ms < 100 && isnan(p->eval_return)))
        return;
    ps->last_shown_ms = p->elapsed_ms;
    char ret[32] = "-", eval[32] = "-";
    if (!isnan(p->mean_return))
        snprintf(ret, sizeof ret, "%.2f", p->mean_return);
    if (!isnan(p->eval_return))
        snprintf(eval, sizeof eval, "%.2f", p->eval_return);
    fprintf(stderr, "%siteration %" PRId64 "  %" PRId64 " env-steps  return %s  eval %s  %.3g env-steps/s  %.1f s%s",
            ps->tty ? "\r" : "", p->generation, p->env_steps, ret, eval, p->env_steps_per_sec, p->elapsed_ms / 1e3,
            ps->tty ? "\033[K" : "\n");
    fflush(stderr);
}

/* The header waits for the first generation: a run that fails before it
 * (an unknown environment, a compile error) prints nothing on stdout. */
static void on_generation(void *user, const cs_train_progress *p)
{
    progress_state *ps = user;
    if (ps->ppo) {
        on_iteration(ps, p);
        return;
    }
    if (ps->curve)
        cli_curve_add(ps->curve, (double)p->env_steps, p->mean_return, p->eval_return);
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
    cli_buf_str(b, ",\n  \"plot\": ");
    cli_buf_json_string(b, a->plot);
    cli_buf_str(b, ",\n  ");
    cli_json_train(b, &a->tc);
    cli_buf_str(b, ",\n");
    cli_json_config(b, &a->cfg);
    cli_buf_str(b, "\n}\n");
}

/* An output the run will write at its end (--out, --plot), checked before
 * it starts by the writer's own rule (jit/output_file.c): absent or a
 * regular file, in a directory this process can create files in. */
static int check_output(const char *flag, const char *path)
{
    char why[1024];
    if (cs_output_check(path, why, sizeof why) != CS_OK)
        return cli_error(CLI_EXIT_USAGE, "--%s: %s: training would end with nothing written", flag, why);
    return 0;
}

/* A trainer's setting the chosen algorithm does not read: its help line
 * names the algorithms that do ("es, ppo: ..."). */
static int refuse_foreign_settings(const cli_args *a)
{
    for (int i = 0; i < cli_setting_count(); i++) {
        int id = OPT_COUNT + i;
        if (!cli_setting_is_train(id) || !a->given[id])
            continue;
        const cs_setting_info *in = cli_setting(id);
        const char *colon = strchr(in->help, ':');
        char algos[64];
        snprintf(algos, sizeof algos, " %.*s,", colon ? (int)(colon - in->help) : 0, in->help);
        char mine[16];
        snprintf(mine, sizeof mine, " %s,", a->algo);
        if (!strstr(algos, mine))
            return cli_error(CLI_EXIT_USAGE, "--%s is for %.*s: it has no effect with --algo %s", cli_option_name(id),
                             colon ? (int)(colon - in->help) : 0, in->help, a->algo);
    }
    return 0;
}

int cli_train(cli_args *a)
{
    bool ppo = strcmp(a->algo, "ppo") == 0;
    const char *agent = a->agent ? a->agent : ppo ? "mlp:64" : "linear";
    if (a->hidden && strcmp(agent, "mlp") != 0)
        return cli_error(CLI_EXIT_USAGE, "--hidden is for --agent mlp%s", strncmp(agent, "mlp:", 4) == 0 ?
                         " (--agent mlp:H names its layers itself)" : "");
    char where[1024];
    if (strcmp(a->algo, "es") == 0 && a->pop % 2)
        return cli_error(CLI_EXIT_USAGE,
                         "%s: '%" PRId64 "' is odd: evolution strategies score candidates in mirrored pairs "
                         "(use %" PRId64 " or %" PRId64 ")",
                         cli_option_origin(a, OPT_POP, where, sizeof where), a->pop, a->pop - 1, a->pop + 1);
    if (ppo && (a->given[OPT_POP] || a->given[OPT_GENERATIONS]))
        return cli_error(CLI_EXIT_USAGE, "--%s is for es and cem: ppo runs --num-envs environments for at most "
                         "--total-timesteps env-steps", a->given[OPT_POP] ? "pop" : "generations");
    int rc = refuse_foreign_settings(a);
    if (rc)
        return rc;
    if ((a->out && cli_dist_rank() == 0 && (rc = check_output("out", a->out))) ||
        (a->plot && cli_dist_rank() == 0 && (rc = check_output("plot", a->plot))))
        return rc;
    char policy[64];
    if (strcmp(agent, "mlp") == 0)
        snprintf(policy, sizeof policy, "mlp:%s", a->hidden ? a->hidden : CLI_DEFAULT_HIDDEN);
    else
        snprintf(policy, sizeof policy, "%s", agent);

    cs_train_config tc = a->tc;   /* the trainers' settings, from the defaults, the file and the flags */
    tc.algo = strcmp(a->algo, "cem") == 0 ? CS_ALGO_CEM : ppo ? CS_ALGO_PPO : CS_ALGO_ES;
    tc.policy = policy;
    tc.population = a->pop;
    tc.generations = a->generations;
    tc.eval_episodes = a->episodes;
    tc.seed = a->seed;
    tc.target = a->target;
    char header[512];
    if (ppo)
        snprintf(header, sizeof header, "training %s on %s with ppo, seed %" PRIu64 "\n", policy, a->cfg.env, a->seed);
    else
        snprintf(header, sizeof header,
                 "training %s on %s with %s: population %" PRId64 ", at most %" PRId64 " generations, seed %" PRIu64
                 "\n",
                 policy, a->cfg.env, a->algo, a->pop, a->generations, a->seed);
    cli_curve *curve = NULL;
    if (a->plot && !(curve = cli_curve_new()))
        return cli_error(CLI_EXIT_FAIL, "out of memory");
    bool tty = isatty(STDERR_FILENO);
    progress_state ps = {header, 0, 0, ppo, a->json && ppo, tty || a->progress, tty, -1e9, curve};
    tc.progress = a->json && !ppo && !curve ? NULL : on_generation;
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
    cs_status st = cs_train(&a->cfg, &tc, &r, err, sizeof err);
    if (ps.live && ppo && ps.tty && !a->json)
        fputs("\n", stderr);   /* past the status line */
    if (st == CS_ERR_NUMERIC && r.weights && a->out && cli_dist_rank() == 0) {
        /* the last finite policy is kept: saved, then the failure said */
        char why[1024];
        if (cs_policy_save(a->out, r.env, r.policy, r.n_weights, r.weights, why, sizeof why) == CS_OK)
            snprintf(err + strlen(err), sizeof err - strlen(err), "; saved it to %s", a->out);
    }
    if (st != CS_OK) {
        free(r.weights);
        cli_curve_free(curve);
        return cli_lib_error(st, err);
    }
    cli_open_notices(&a->cfg, r.backend, a->cfg.dtype, r.notice);
    /* Every rank takes part before any of them can stop: the whole job's total. */
    int64_t env_steps = r.env_steps;
    cli_dist_sum(&env_steps, 1);
    r.env_steps = env_steps;

    rc = CLI_EXIT_OK;
    const char *saved = NULL;
    if (a->out && cli_dist_rank() == 0) {
        st = cs_policy_save(a->out, r.env, r.policy, r.n_weights, r.weights, err, sizeof err);
        if (st != CS_OK)
            rc = cli_lib_error(st, err);
        else
            saved = a->out;
    }
    free(r.weights);
    if (!rc && curve && cli_dist_rank() == 0) {
        char title[160];
        snprintf(title, sizeof title, "%s on %s (%s, seed %" PRIu64 ")", r.policy, r.env, a->algo, a->seed);
        rc = cli_curve_write(curve, a->plot, title, r.target);
    }
    cli_curve_free(curve);
    if (rc) {
        fflush(stdout);
        return rc;
    }
    cli_buf b = {0};
    if (a->json && ppo) {
        cli_buf_str(&b, "{\"type\": \"result\", \"env\": ");
        cli_buf_json_string(&b, r.env);
        cli_buf_str(&b, ", \"policy\": ");
        cli_buf_json_string(&b, r.policy);
        cli_buf_printf(&b, ", \"algo\": \"ppo\", \"seed\": %" PRIu64 ", \"iterations\": %" PRId64, a->seed,
                       r.generations);
        cli_buf_printf(&b, ", \"solved\": %s", isnan(r.target) ? "null" : r.solved ? "true" : "false");
        cli_buf_str(&b, ", \"target\": ");
        if (isnan(r.target))
            cli_buf_str(&b, "null");
        else
            cli_buf_repr(&b, r.target);
        cli_buf_str(&b, ", \"eval_return\": ");
        cli_buf_repr(&b, r.eval_return);
        cli_buf_printf(&b, ", \"eval_episodes\": %" PRId64 ", \"env_steps\": %" PRId64, a->episodes, r.env_steps);
        cli_buf_printf(&b, ", \"elapsed_s\": %.6f, \"compile_s\": %.6f, \"saved\": ", r.elapsed_ms / 1e3,
                       r.compile_ms / 1e3);
        cli_buf_json_string(&b, saved);
        cli_buf_str(&b, ", \"plot\": ");
        cli_buf_json_string(&b, a->plot);
        cli_buf_str(&b, ", ");
        cli_json_train(&b, &tc);
        cli_buf_str(&b, "}\n");
    } else if (a->json) {
        report_json(&b, a, &r, saved);
    } else {
        if (isnan(r.target))
            cli_buf_printf(&b, "done: no target; the policy's mean return over %" PRId64 " fresh episodes is %.2f",
                           a->episodes, r.eval_return);
        else
            cli_buf_printf(&b, "%s: mean return %.2f over %" PRId64 " fresh episodes (target %s) after %" PRId64 " %s",
                           r.solved ? "solved" : "not solved", r.eval_return, a->episodes,
                           cs_shortest(r.target, (char[CS_REPR_MAX]){0}), r.generations,
                           ppo ? "iterations" : "generations");
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
        if (a->plot)
            cli_buf_printf(&b, "plotted %s\n", a->plot);
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
