/* cartsim: the command-line program. Dispatches to a subcommand from the
 * table below; a new subcommand (train, eval, view, render) is one row here,
 * its own options in cli_options.def (the library's settings come by
 * themselves) and its function in its own cli_*.c. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const cli_command cli_commands[] = {
    {
        .name = "run",
        .distributed = true,
        .summary = "step a batch of environments with a policy (random actions by default) and report speed",
        .usage = "[flags]",
        .details = "Runs --steps steps of --envs environments in one fused kernel and prints a\n"
                   "summary (or one JSON object with --json). The checksum depends only on the\n"
                   "environment, its parameters, --dtype, --seed, --envs, --steps and --policy.\n"
                   "With fusion full each rollout call is one launch (a long run makes a call about\n"
                   "every 0.25 s); --no-persistent launches once per --unroll steps instead (the\n"
                   "paper's XLA loop), for the same checksum.\n"
                   "--autoreset is refused: the fused rollout restarts an ended episode within\n"
                   "its step whatever the convention (the library's cs_env_step follows it); a\n"
                   "configuration file's [env] autoreset is listed as not used.\n",
        .options = CLI_OPT(OPT_STEPS) | CLI_OPT(OPT_SEED) | CLI_OPT(OPT_JSON) | CLI_OPT(OPT_PROGRESS) |
                   CLI_OPT(OPT_POLICY) | CLI_OPT(OPT_VERSION),
        .settings = true,
        .refuses = " autoreset ",
        .refused_why = "its fused rollout restarts an ended episode within the step whatever the convention "
                       "(the library's cs_env_step follows it)",
        .max_positional = 0,
        .defaults = cli_run_defaults,
        .run = cli_run,
    },
    {
        .name = "replay",
        .summary = "recompute a recorded trajectory (golden CSV format) and print it as CSV",
        .usage = "[flags] FILE.csv",
        .details = "Every row is stepped from its own s_* columns and action (or, with\n"
                   "--open-loop, each episode runs from its first state on cartsim's own states).\n"
                   "The output has the input's columns, extra ones left out, with ns_*, obs_*,\n"
                   "reward, terminated and truncated computed by cartsim. Default --dtype f64.\n",
        .options = CLI_OPT(OPT_OPEN_LOOP),
        .settings = true,
        .without = " envs autoreset strict persistent ",
        .max_positional = 1,
        .defaults = cli_replay_defaults,
        .run = cli_replay,
    },
    {
        .name = "dump",
        .summary = "print the compiler's graph, partition or generated source",
        .usage = "[flags]",
        .details = "--after names the last pass to run (parse, fold, scalarize, concat, dce; default: all).\n",
        .options = CLI_OPT(OPT_AFTER) | CLI_OPT(OPT_FORMAT) | CLI_OPT(OPT_ARCH) | CLI_OPT(OPT_POLICY),
        .settings = true,
        .without = " envs autoreset strict persistent ",
        .max_positional = 0,
        .defaults = cli_dump_defaults,
        .run = cli_dump,
    },
    {
        .name = "view",
        .summary = "watch environments in a window; drive one; screenshots and recordings",
        .usage = "[flags]",
        .details = "Keys: space pause, right arrow one step while paused, + - speed, r reset the\n"
                   "selected environment (R all), click selects, left/right held drive the selected\n"
                   "one (over its policy; with --policy human the others stand still), s screenshot,\n"
                   "v start/stop recording, pgup/pgdn page, h help, q or Esc quit. Screenshots\n"
                   "(cartsim-shot-NNN.png) and recordings (cartsim-rec-NNN/, PNG frames) go into\n"
                   "--out (default: here). --policy plays what run plays (random, the .env's\n"
                   "heuristic, a trained policy file, or the one --config names). Needs a display\n"
                   "(SDL_VIDEODRIVER=offscreen runs without one, for tests).\n",
        .options = CLI_OPT(OPT_SEED) | CLI_OPT(OPT_POLICY) | CLI_OPT(OPT_OUT),
        .settings = true,
        .without = " autoreset strict persistent ",
        .max_positional = 0,
        .defaults = cli_view_defaults,
        .run = cli_view,
    },
    {
        .name = "render",
        .summary = "write frames of a run without a display: PNGs, GIF or MP4",
        .usage = "--out DIR|FILE.gif|FILE.mp4 [flags]",
        .details = "Writes --steps + 1 frames (the reset state, then the state after each step) of\n"
                   "all --envs environments tiled in one image: DIR/000000.png, ... , or a video\n"
                   "through ffmpeg at the environment's own frame rate (ffmpeg must be installed).\n"
                   "The steps are run's (--policy, same-step auto-reset): frame t is the state\n"
                   "after step t of `cartsim run` with the same policy and seed.\n",
        .options = CLI_OPT(OPT_STEPS) | CLI_OPT(OPT_SEED) | CLI_OPT(OPT_POLICY) | CLI_OPT(OPT_OUT),
        .settings = true,
        .without = " autoreset strict persistent ",
        .max_positional = 0,
        .defaults = cli_render_defaults,
        .run = cli_render,
    },
    {
        .name = "train",
        .distributed = true,
        .summary = "train a linear or MLP policy with evolution strategies, the cross-entropy method or PPO",
        .usage = "[flags]",
        .details = "es, cem: each generation runs --pop candidate policies, one per environment, for\n"
                   "a whole episode in one fused rollout, and prints the population's mean and best\n"
                   "return, the rollout's env-steps/s and the time since the start (compile\n"
                   "included). Once a candidate reaches the target, the mean policy is scored on\n"
                   "--episodes fresh episodes; training stops when that score reaches it twice in a\n"
                   "row, or after --generations. --pop must be even for es (mirrored pairs).\n"
                   "ppo: each iteration runs the actor-critic in --num-envs environments for\n"
                   "--num-steps steps in one fused rollout that records them, then updates it on the\n"
                   "cpu (docs/train.md); a status line on a terminal says the iteration, env-steps,\n"
                   "mean return and env-steps/s. Once the training episodes reach the target, the\n"
                   "greedy actor is scored on --episodes fresh episodes; training stops when that\n"
                   "score reaches it, or after --total-timesteps. The defaults are CleanRL's.\n"
                   "--out saves the policy (docs/policy_format.md; ppo: the actor), checked for\n"
                   "writing before training starts; without it the last line says the policy was\n"
                   "discarded. --plot draws the learning curve. The same --seed trains the same\n"
                   "policy on the same backend, whatever --threads. Not reaching the target is a\n"
                   "result, exit status 0: --json prints one object whose \"solved\" is true, false,\n"
                   "or null when there was no target (ppo: JSON lines, one per iteration, then it).\n",
        .options = CLI_OPT(OPT_AGENT) | CLI_OPT(OPT_ALGO) | CLI_OPT(OPT_POP) | CLI_OPT(OPT_JSON) |
                   CLI_OPT(OPT_GENERATIONS) | CLI_OPT(OPT_SEED) | CLI_OPT(OPT_HIDDEN) | CLI_OPT(OPT_OUT) |
                   CLI_OPT(OPT_EPISODES) | CLI_OPT(OPT_TARGET) | CLI_OPT(OPT_PLOT) | CLI_OPT(OPT_PROGRESS),
        .settings = true,
        .train_settings = true,
        .without = " envs autoreset strict ",
        .max_positional = 0,
        .defaults = cli_train_defaults,
        .run = cli_train,
    },
    {
        .name = "eval",
        .distributed = true,
        .summary = "score a policy on fresh episodes: mean, std, min and max return",
        .usage = "[--policy FILE|NAME] [flags]",
        .details = "Runs --episodes whole episodes from resets seeded --seed (then --seed + 1, ...\n"
                   "when there are more episodes than environments at once), with the policy\n"
                   "fused into the step kernel. Without --policy the actions are random: the\n"
                   "baseline a trained policy should beat.\n",
        .options = CLI_OPT(OPT_POLICY) | CLI_OPT(OPT_EPISODES) | CLI_OPT(OPT_SEED) | CLI_OPT(OPT_JSON),
        .settings = true,
        .without = " envs autoreset strict ",
        .max_positional = 0,
        .defaults = cli_eval_defaults,
        .run = cli_eval,
    },
    {
        .name = "cache",
        .summary = "list, size or clear the kernel cache",
        .usage = "[list|size|clear]",
        .details = "The compiled kernels in $XDG_CACHE_HOME/cartsim (else ~/.cache/cartsim), least\n"
                   "recently used first: last use, size (the object and its record), what it runs\n"
                   "(environment, dtype, fusion, unroll, backend) and its file. The\n"
                   "cache keeps itself under $CARTSIM_CACHE_MAX_MB (default 512) MiB by removing\n"
                   "the least recently used kernels after each compile (never one used in the\n"
                   "last minute). clear removes every kernel; running jobs keep what they loaded.\n",
        .options = CLI_OPT(OPT_HELP),
        .max_positional = 1,
        .defaults = NULL,
        .run = cli_cache,
    },
    {.name = NULL},
};

static const cli_command *find_command(const char *name)
{
    for (const cli_command *c = cli_commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

static int dispatch(int argc, char **argv)
{
    const cli_command *cmd = &cli_commands[0];
    int first = 1, status = 0;
    bool help_command = false;
    char asked[256];
    /* A first argument that is not an option names the subcommand. */
    if (argc > 1 && argv[1][0] != '-') {
        help_command = strcmp(argv[1], "help") == 0;
        snprintf(asked, sizeof asked, "%s%s%s", argv[1], help_command && argc > 2 ? " " : "",
                 help_command && argc > 2 ? argv[2] : "");
        if (help_command) {
            if (argc > 2 && !find_command(argv[2]))
                status = cli_error(CLI_EXIT_USAGE, "unknown command '%s' (try cartsim --help)", argv[2]);
        } else if (!(cmd = find_command(argv[1]))) {
            status = cli_error(CLI_EXIT_USAGE, "unknown command '%s' (try cartsim --help)", argv[1]);
        }
        first = 2;
    } else {
        snprintf(asked, sizeof asked, "%s", cmd->name);
    }

    cli_args a;
    bool parsed = status == 0 && !help_command;
    if (parsed) {
        cli_defaults(cmd, &a);
        status = cli_parse(cmd, argc - first, argv + first, &a);
    }
    /* Under mpirun, before any rank acts on what it was given. */
    status = cli_dist_same_args(parsed && status == 0 ? &a : NULL, asked, status);
    if (status != 0)
        return status;
    if (help_command) {
        if (argc > 2)
            cli_print_help(find_command(argv[2]));
        else
            cli_print_overview();
        return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    }
    if (a.version) {
        printf("cartsim %s\n", CS_VERSION_STRING);
        return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    }
    if (a.help) {
        if (first == 1)
            cli_print_overview();
        else
            cli_print_help(cmd);
        return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    }
    if (a.print_config)
        return cli_print_config(cmd, &a);
    /* Several GPUs on a node: one per rank there, unless --device says. */
    if (cli_dist_ranks() > 1 && !a.given[cli_setting_id("device")])
        a.cfg.device = cli_dist_local_rank();
    /* Ranks sharing a node share its cores, unless --threads says: each takes
     * its share, where every core each would oversubscribe them. */
    if (cli_dist_local_ranks() > 1 && a.cfg.threads == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        a.cfg.threads = cores > cli_dist_local_ranks() ? (int)(cores / cli_dist_local_ranks()) : 1;
    }
    if (cli_dist_ranks() > 1 && !cmd->distributed)
        return cli_error(CLI_EXIT_USAGE, "cartsim %s runs in one process: launch it without mpirun (run, train "
                                         "and eval split over processes)", cmd->name);
    /* Ctrl-C stops a compile (and the work after it) cleanly in every subcommand. */
    cli_catch_stop_signals();
    a.cfg.interrupt = &cli_stop_signal;
    return cmd->run(&a);
}

int main(int argc, char **argv)
{
    /* Past a file size limit (ulimit -f) a write then fails with EFBIG, which
     * every writer reports in one line, instead of killing the program
     * silently with partial files; the compiler and ffmpeg inherit it. */
    signal(SIGXFSZ, SIG_IGN);
    int status = cli_dist_start(&argc, &argv);
    if (status == 0)
        status = dispatch(argc, argv);
    return cli_dist_end(status);
}
