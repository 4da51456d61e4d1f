/* `cartsim run`: open, reset, roll out, report (text or JSON). */
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* Runs at least this long (env-steps) get a progress bar on a terminal. */
#define PROGRESS_MIN_ENV_STEPS 1e8
#define PROGRESS_CHUNKS 20
/* Long runs go in chunks of about this long, so that an interrupt is seen
 * soon; the first chunk is sized blind, a run shorter than it is one call.
 * Each chunk is one cs_env_rollout_part: persistent, one launch; chunks are
 * whole unrolls, so that --no-persistent still launches once per --unroll
 * steps. A chunk is at least MIN_CHUNK_STEPS steps: a call streams the
 * batch's state from memory and back and draws a first block of random
 * words for each lane, about 2.5 steps' time at millions of environments,
 * where a step can take longer than CHUNK_MS (16M CartPoles went one step
 * a call, 13x slower than in one call). The checksum is taken once, at the
 * end: byte-wise, it cost more than a step at that size. */
#define CHUNK_MS 250.0
#define MIN_CHUNK_STEPS 64
#define FIRST_CHUNK_ENV_STEPS ((int64_t)1 << 25)
#define FIRST_CHUNK_ENV_STEPS_INTERP ((int64_t)1 << 21)

void cli_run_defaults(cli_args *a)
{
    a->cfg.num_envs = 2048;
    a->steps = 10000;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *dtype_name(cs_dtype d)
{
    return d == CS_DTYPE_F64 ? "f64" : "f32";
}

static void show_progress(bool tty, int64_t done, int64_t total, double elapsed_ms, int64_t num_envs)
{
    enum { WIDTH = 30 };
    double frac = (double)done / (double)total;
    int filled = (int)(frac * WIDTH);
    char bar[WIDTH + 1];
    for (int i = 0; i < WIDTH; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[WIDTH] = 0;
    double rate = elapsed_ms > 0 ? (double)done * (double)num_envs / (elapsed_ms / 1e3) : 0;
    double eta_s = done > 0 ? elapsed_ms / 1e3 * (double)(total - done) / (double)done : 0;
    fprintf(stderr, "%s[%s] %3d%%  %.3g env-steps/s  eta %.0fs%s", tty ? "\r" : "", bar,
            (int)(frac * 100), rate, eta_s, tty ? "\033[K" : "\n");
    fflush(stderr);
}

/* The next chunk's length in steps: about CHUNK_MS from the rate of the
 * last one (growing at most 8-fold), a whole number of unrolls. */
static int64_t next_chunk(const cs_env_info *in, int64_t last_steps, double last_ms, int64_t left, int64_t most)
{
    int64_t n;
    if (last_steps == 0) {
        int64_t first = in->backend == CS_BACKEND_INTERP ? FIRST_CHUNK_ENV_STEPS_INTERP : FIRST_CHUNK_ENV_STEPS;
        n = first / in->num_envs;
    } else {
        double cap = 8.0 * (double)last_steps;
        double want = last_ms > 0 ? (double)last_steps * CHUNK_MS / last_ms : cap;
        if (want > cap)
            want = cap;
        n = want >= (double)left ? left : (int64_t)want;
    }
    if (n > most)
        n = most;
    if (n < MIN_CHUNK_STEPS)
        n = MIN_CHUNK_STEPS;
    if (n >= left)
        return left;   /* the rest in one call, however it divides */
    if (in->unroll > 1 && n > in->unroll)
        n -= n % in->unroll;
    return n < 1 ? 1 : n;
}

/* The rollout, in chunks: of about CHUNK_MS for a long run, and at least
 * PROGRESS_CHUNKS when a progress bar is shown. The library's random numbers
 * depend on the global step only, so chunks give the same result. A stop
 * signal ends the loop between chunks, with total->steps those done. */
static cs_status rollout(cs_env *env, const cli_args *a, const cs_env_info *in, cs_rollout_stats *total)
{
    bool tty = isatty(STDERR_FILENO);
    double env_steps = (double)a->steps * (double)a->cfg.num_envs;
    bool bar = a->progress || (tty && env_steps >= PROGRESS_MIN_ENV_STEPS);
    int64_t most = bar ? (a->steps + PROGRESS_CHUNKS - 1) / PROGRESS_CHUNKS : a->steps;

    memset(total, 0, sizeof *total);
    double return_sum = 0;
    double t0 = now_ms();
    int64_t done = 0, chunks = 0, last_steps = 0;
    double last_ms = 0;
    if (bar)
        show_progress(tty, 0, a->steps, 0, a->cfg.num_envs);
    while (done < a->steps && !cli_stop_signal) {
        int64_t n = next_chunk(in, last_steps, last_ms, a->steps - done, most);
        cs_rollout_stats s;
        memset(&s, 0, sizeof s);
        double c0 = now_ms();
        cs_status st = cs_env_rollout_part(env, n, &s);
        if (st != CS_OK) {
            if (bar && tty)
                fprintf(stderr, "\r\033[K");
            return st;
        }
        last_ms = now_ms() - c0;
        last_steps = n;
        done += n;
        chunks++;
        total->steps += s.steps;
        total->env_steps += s.env_steps;
        total->episodes += s.episodes;
        if (s.episodes > 0 && !isnan(s.mean_return))
            return_sum += s.mean_return * (double)s.episodes;
        total->nonfinite += s.nonfinite;
        total->launches += s.launches;
        total->run_ms += s.run_ms;
        if (chunks == 1)
            total->mean_return = s.mean_return;
        if (bar)
            show_progress(tty, done, a->steps, now_ms() - t0, a->cfg.num_envs);
    }
    if (chunks != 1)
        total->mean_return = total->episodes > 0 ? return_sum / (double)total->episodes : NAN;
    /* Of the final state (stopped before the first step: as reset); a run
     * over several ranks takes its own in turns later. */
    if (cli_dist_ranks() == 1) {
        cs_status st = cli_dist_checksum(env, &total->checksum);
        if (st != CS_OK)
            return st;
    }
    if (bar && tty)
        fprintf(stderr, "\r\033[K");
    /* A run too short for the library's clock still gets a rate. */
    if (!(total->run_ms > 0))
        total->run_ms = now_ms() - t0;
    return CS_OK;
}

/* Per-rank figures of a run split over processes (one rank: the run's own). */
typedef struct {
    int ranks;
    double *run_ms;             /* [ranks] */
} rank_times;

static void report_json(cli_buf *b, const cli_args *a, const cs_env_info *in, const cs_rollout_stats *s,
                        double rate, const rank_times *rt)
{
    cli_buf_str(b, "{\n  \"env\": ");
    cli_buf_json_string(b, in->name);
    cli_buf_str(b, ",\n  \"title\": ");
    cli_buf_json_string(b, in->title);
    cli_buf_str(b, ",\n  \"backend\": ");
    cli_buf_json_string(b, cs_backend_name(in->backend));
    cli_buf_str(b, ",\n  \"fusion\": ");
    cli_buf_json_string(b, cs_fusion_name(in->fusion));
    cli_buf_str(b, ",\n  \"dtype\": ");
    cli_buf_json_string(b, dtype_name(in->dtype));
    cli_buf_str(b, ",\n  \"math\": ");
    cli_buf_json_string(b, in->math == CS_MATH_FAST ? "fast" : "exact");
    cli_buf_printf(b, ",\n  \"num_envs\": %" PRId64 ",\n", in->num_envs);
    cli_buf_printf(b, "  \"steps\": %" PRId64 ",\n", s->steps);
    cli_buf_printf(b, "  \"interrupted\": %s,\n", s->steps < a->steps ? "true" : "false");
    cli_buf_printf(b, "  \"seed\": %" PRIu64 ",\n", a->seed);
    cli_buf_str(b, "  \"policy\": ");
    cli_buf_json_string(b, a->policy ? a->policy : "random");
    cli_buf_str(b, ",\n");
    cli_buf_printf(b, "  \"unroll\": %d,\n", in->unroll);
    cli_buf_printf(b, "  \"threads\": %d,\n", in->threads);
    cli_buf_json_number(b, "compile_ms", in->compile_ms, false);
    cli_buf_printf(b, "  \"cache_hit\": %s,\n", in->cache_hit ? "true" : "false");
    cli_buf_json_number(b, "run_ms", s->run_ms, false);
    cli_buf_json_number(b, "env_steps_per_sec", rate, false);
    cli_buf_printf(b, "  \"env_steps\": %" PRId64 ",\n", s->env_steps);
    cli_buf_printf(b, "  \"kernels_per_step\": %d,\n", in->kernels_per_step);
    cli_buf_printf(b, "  \"launches\": %" PRId64 ",\n", s->launches);
    cli_buf_printf(b, "  \"episodes\": %" PRId64 ",\n", s->episodes);
    cli_buf_json_number(b, "mean_return", s->mean_return, false);
    cli_buf_printf(b, "  \"checksum\": \"%016" PRIx64 "\",\n", s->checksum);
    cli_buf_printf(b, "  \"nonfinite\": %" PRId64 ",\n", s->nonfinite);
    cli_buf_str(b, "  \"device\": ");
    cli_buf_json_string(b, in->device);
    cli_buf_printf(b, ",\n  \"sm_count\": %d,\n  \"arch\": %d,\n  \"block\": %d,\n  \"registers\": %d,\n"
                      "  \"spill_bytes\": %d,\n  \"local_bytes\": %d,\n  \"persistent\": %s,\n",
                   in->sm_count, in->arch, in->block, in->registers, in->spill_bytes, in->local_bytes,
                   in->persistent ? "true" : "false");
    cli_buf_printf(b, "  \"ranks\": %d,\n  \"rank_run_ms\": [", rt->ranks);
    for (int r = 0; r < rt->ranks; r++) {
        cli_buf_str(b, r ? ", " : "");
        cli_buf_repr(b, rt->run_ms[r]);
    }
    cli_buf_str(b, "],\n  \"notice\": ");
    cli_buf_json_string(b, in->notice && *in->notice ? in->notice : NULL);
    cli_buf_str(b, ",\n");
    cli_json_config(b, &a->cfg);
    cli_buf_str(b, "\n}\n");
}

static void report_text(cli_buf *b, const cli_args *a, const cs_env_info *in, const cs_rollout_stats *s,
                        double rate, const rank_times *rt)
{
    cli_buf_printf(b, "env               %s (%s)\n", in->name ? in->name : "?", in->title ? in->title : "?");
    cli_buf_printf(b, "backend           %s\n", cs_backend_name(in->backend));
    cli_buf_printf(b, "fusion            %s\n", cs_fusion_name(in->fusion));
    cli_buf_printf(b, "dtype             %s%s\n", dtype_name(in->dtype), in->math == CS_MATH_FAST ? ", fast math" : "");
    cli_buf_printf(b, "policy            %s\n", a->policy ? a->policy : "random");
    cli_buf_printf(b, "unroll            %d\n", in->unroll);
    cli_buf_printf(b, "threads           %d\n", in->threads);
    cli_buf_printf(b, "kernels per step  %d\n", in->kernels_per_step);
    cli_buf_printf(b, "launches          %" PRId64, s->launches);
    if (in->fusion != CS_FUSION_FULL)
        cli_buf_str(b, " (every kernel, every step)\n");
    else if (in->persistent)
        cli_buf_str(b, " (persistent: one per rollout call)\n");
    else
        cli_buf_printf(b, " (not persistent: one per %d steps)\n", in->unroll);
    cli_buf_printf(b, "compile           %.1f ms (%s)\n", in->compile_ms,
                   in->cache_hit ? "kernel cache hit" : "compiled, cache miss");
    cli_buf_printf(b, "envs x steps      %" PRId64 " x %" PRId64 " = %" PRId64 " env-steps%s\n", in->num_envs,
                   s->steps, s->env_steps, s->steps < a->steps ? " (interrupted)" : "");
    cli_buf_printf(b, "run               %.3f ms\n", s->run_ms);
    cli_buf_printf(b, "throughput        %.4g env-steps/s\n", rate);
    if (isnan(s->mean_return))
        cli_buf_printf(b, "episodes          %" PRId64 " finished\n", s->episodes);
    else
        cli_buf_printf(b, "episodes          %" PRId64 " finished, mean return %.4f\n", s->episodes,
                       s->mean_return);
    if (s->nonfinite)
        cli_buf_printf(b, "nonfinite         %" PRId64 " environments restarted\n", s->nonfinite);
    cli_buf_printf(b, "checksum          %016" PRIx64 "\n", s->checksum);
    if (rt->ranks > 1) {
        cli_buf_printf(b, "ranks             %d, run ms per rank:", rt->ranks);
        for (int r = 0; r < rt->ranks; r++)
            cli_buf_printf(b, " %.3f", rt->run_ms[r]);
        cli_buf_str(b, "\n");
    }
    if (in->device)
        cli_buf_printf(b, "device            %s (sm_%d, %d SMs), block %d, %d registers, %d spill bytes, %d local "
                          "bytes\n",
                       in->device, in->arch, in->sm_count, in->block, in->registers, in->spill_bytes, in->local_bytes);
    if (in->notice && *in->notice)
        cli_buf_printf(b, "notice            %s\n", in->notice);
}

int cli_run(cli_args *a)
{
    if (a->steps > INT64_MAX / a->cfg.num_envs)
        return cli_error(CLI_EXIT_USAGE, "--envs %" PRId64 " x --steps %" PRId64 " is beyond 2^63 env-steps",
                         a->cfg.num_envs, a->steps);

    /* Under mpirun each rank steps its share of the batch, keyed by the
     * global index of its environments: the whole batch, split. */
    int64_t global_envs = a->cfg.num_envs;
    if (cli_dist_ranks() > 1) {
        cs_split_share(global_envs, cli_dist_rank(), cli_dist_ranks(), &a->cfg.first_env, &a->cfg.num_envs);
        if (a->cfg.num_envs < 1)
            return cli_error(CLI_EXIT_USAGE, "--envs %" PRId64 " is fewer than the %d processes", global_envs,
                             cli_dist_ranks());
    }
    cli_policy pol;
    int prc = cli_policy_prepare(a, &pol);
    if (prc)
        return prc;
    cs_env *env = NULL;
    cs_status st = cs_env_open(&a->cfg, &env);
    prc = st == CS_OK ? cli_policy_apply(env, &pol) : 0;
    if (st == CS_OK && !prc)
        cli_env_notice(&a->cfg, env);
    cli_policy_free(&pol);
    if (prc) {
        cs_env_close(env);
        return prc;
    }
    if (st != CS_OK) {
        /* A compiler killed by the same Ctrl-C is no compile error. */
        int rc = cli_stop_signal ? cli_error(128 + cli_stop_signal, "interrupted while compiling")
                             : cli_lib_error(st, env ? cs_env_error(env) : "out of memory");
        cs_env_close(env);
        return rc;
    }
    cs_env_info info;
    cs_rollout_stats stats;
    if ((st = cs_env_get_info(env, &info)) != CS_OK || (st = cs_env_reset(env, a->seed)) != CS_OK ||
        (st = rollout(env, a, &info, &stats)) != CS_OK) {
        int rc = cli_lib_error(st, cs_env_error(env));
        cs_env_close(env);
        return rc;
    }

    /* again: a tiered compile's wait for its optimized kernel counts as compile time */
    if ((st = cs_env_get_info(env, &info)) != CS_OK) {
        int rc = cli_lib_error(st, cs_env_error(env));
        cs_env_close(env);
        return rc;
    }
    if (cli_dist_ranks() > 1 && stats.steps < a->steps) {
        cs_env_close(env);
        return cli_error(128 + cli_stop_signal, "interrupted after %" PRId64 " of %" PRId64 " steps", stats.steps,
                         a->steps);
    }
    /* Every rank's share is done (or the job ends here): the root sums up. */
    int rc = cli_dist_agree(CLI_EXIT_OK);
    if (rc != CLI_EXIT_OK) {
        cs_env_close(env);
        return rc;
    }
    double rank_ms[cli_dist_ranks()];
    memset(rank_ms, 0, sizeof rank_ms);
    rank_times rt = {cli_dist_ranks(), rank_ms};
    cli_dist_gather_real(stats.run_ms, rank_ms);
    if (cli_dist_ranks() > 1) {
        int64_t counts[3] = {stats.env_steps, stats.episodes, stats.nonfinite};
        double return_sum = stats.episodes ? stats.mean_return * (double)stats.episodes : 0;
        cli_dist_sum(counts, 3);
        cli_dist_sum_real(&return_sum, 1);
        if ((st = cli_dist_checksum(env, &stats.checksum)) != CS_OK) {
            rc = cli_lib_error(st, cs_env_error(env));
            cs_env_close(env);
            return rc;
        }
        stats.env_steps = counts[0];
        stats.episodes = counts[1];
        stats.nonfinite = counts[2];
        stats.mean_return = counts[1] ? return_sum / (double)counts[1] : NAN;
        for (int r = 0; r < rt.ranks; r++)   /* the job's time: its slowest rank */
            stats.run_ms = rank_ms[r] > stats.run_ms ? rank_ms[r] : stats.run_ms;
        info.num_envs = global_envs;
    }

    double rate = (double)stats.env_steps / (stats.run_ms / 1e3);
    cli_buf out = {0};
    if (a->json)
        report_json(&out, a, &info, &stats, rate, &rt);
    else
        report_text(&out, a, &info, &stats, rate, &rt);
    /* info's strings belong to the handle: the report is built before closing. */
    cs_env_close(env);
    if (cli_buf_print(&out) != CLI_EXIT_OK)
        rc = CLI_EXIT_FAIL;
    cli_buf_free(&out);
    if (rc == CLI_EXIT_OK && stats.steps < a->steps)
        rc = cli_error(128 + cli_stop_signal, "interrupted after %" PRId64 " of %" PRId64 " steps: the summary is of those",
                       stats.steps, a->steps);
    return rc;
}
