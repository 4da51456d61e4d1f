/* The cartsim command-line program: shared pieces of its subcommands.
 *
 * The top floor: it uses the library (sim/cartsim.h), the trainers (agents/)
 * and the viewer (render/); nothing below includes this file.
 * main.c holds the subcommand table; cli_args.c the flag table (the
 * program's options, cli_options.def, and the library's settings,
 * cs_config_setting_at) and the parser every subcommand shares; buf.c the output buffer (numbers are the
 * library's sim/num.c); cli_run.c, cli_replay.c, cli_dump.c, ... the subcommands.
 *
 * Exit statuses: 0 success, 1 the work failed (compile, I/O, memory),
 * 2 bad input (flags, files, environment names), 128 + N stopped by signal N
 * (130: Ctrl-C; `run` prints the summary of the steps done first). Every
 * failure prints one line "cartsim: ..." on stderr and nothing on stdout:
 * output is built in memory and written only once the work has succeeded.
 */
#ifndef CS_CLI_H
#define CS_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cartsim.h"
#include "num.h"

enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

/* train --agent mlp without --hidden (--hidden is refused for linear, so the
 * default cannot live in cli_args). */
#define CLI_DEFAULT_HIDDEN "32"

/* Every option of the program (cli_options.def); a subcommand accepts a
 * subset (its mask). The library's settings follow them as option ids
 * OPT_COUNT + the setting's index in cs_config_setting_at: a subcommand that
 * opens an environment takes them all but those it names (cli_command's
 * without and refuses). */
typedef enum {
#define OPTION(id, flag, metavar, section, key, note, help) OPT_##id,
#define KEY(id, section, key, commands)
#define RANGE(id, lo, hi)
#define FOR(id, commands, metavar, help)
#include "cli_options.def"
#undef OPTION
#undef KEY
#undef RANGE
#undef FOR
    OPT_COUNT
} cli_opt_id;

/* The library's settings the program can hold: cs_config's
 * (cs_config_setting_at), then the trainers' (cs_train_setting_at); a
 * test checks the tables fit. */
#define CLI_MAX_SETTINGS 64
#define CLI_ID_COUNT (OPT_COUNT + CLI_MAX_SETTINGS)

#define CLI_OPT(o) (UINT64_C(1) << (o))

/* Options every subcommand takes, whatever its mask says. */
#define CLI_OPTS_GLOBAL (CLI_OPT(OPT_CONFIG) | CLI_OPT(OPT_PRINT_CONFIG) | CLI_OPT(OPT_HELP))

#define CLI_MAX_POSITIONAL 4

typedef struct {
    cs_config cfg;              /* env, num_envs, backend, ... filled from the flags */
    int64_t steps;
    uint64_t seed;
    bool json, progress, open_loop, help, version;
    const char *after, *format;
    const char *arch;           /* dump --format cubin */
    const char *policy, *out;   /* view, render */
    const char *config;         /* --config FILE */
    cs_train_config tc;         /* train: the trainers' settings (cs_train_setting_at), from the flags */
    const char *agent, *algo, *hidden;           /* train (agent NULL: the algorithm's) */
    const char *plot;                            /* train: the learning curve's PNG */
    int64_t pop, generations, episodes;          /* train, eval */
    double target;                               /* train; NaN: the environment's */
    bool print_config;
    const char *positional[CLI_MAX_POSITIONAL];
    int n_positional;
    bool given[CLI_ID_COUNT];   /* which options and settings the command line set */
} cli_args;

typedef struct {
    const char *name;
    const char *summary;        /* one line for the command list */
    const char *usage;          /* after "cartsim NAME " */
    const char *details;        /* printed after the options in --help; may be NULL */
    uint64_t options;           /* CLI_OPT() mask of accepted options */
    bool settings;              /* takes the library's settings (it opens an environment) ... */
    bool train_settings;        /* takes the trainers' settings (train) */
    const char *without;        /* ... but these, " a b " (setting names): they would change nothing */
    const char *refuses;        /* " a b ": settings not taken whose flag gets refused_why, not "unknown" */
    const char *refused_why;    /* why, after "--NAME has no effect on 'cartsim NAME': " */
    int max_positional;
    bool distributed;           /* splits over MPI ranks (mpirun -n K) */
    void (*defaults)(cli_args *a);
    int (*run)(cli_args *a);    /* returns the exit status */
} cli_command;

/* main.c: the subcommand table, ends with a {NULL} entry; [0] is the default. */
extern const cli_command cli_commands[];

/* cli_args.c */
int cli_error(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_status_exit(cs_status s);
/* Reports a library failure (message flattened to one line); returns the exit status. */
int cli_lib_error(cs_status s, const char *message);
/* 0 when parsed (a->help / a->version may then be set), else the exit status. */
int cli_parse(const cli_command *cmd, int argc, char **argv, cli_args *a);
void cli_print_help(const cli_command *cmd);
/* A subcommand's defaults: cs_config_init's, then its own. */
void cli_defaults(const cli_command *cmd, cli_args *a);
void cli_print_overview(void);
bool cli_stdout_write(const char *data, size_t len);   /* false after reporting an error */
/* What an opened environment makes worth saying on stderr ("cartsim: note:
 * ...", once, by rank 0, whatever the output format): the default backend
 * fell back to the interpreter, ~100x slower (the cpu backend unusable: no C
 * compiler), and settings asked for that have no effect on what ran
 * (--math fast with f32, --block off the GPU). */
void cli_open_notices(const cs_config *cfg, cs_backend got, cs_dtype dtype, const char *notice);
void cli_env_notice(const cs_config *cfg, cs_env *env);
/* Sets an option from a configuration file's value (NULL for a switch):
 * errors read "ORIGIN: KEY: ...", ORIGIN being "FILE:LINE". */
int cli_set_option(int id, const char *value, cli_args *a, const char *origin, const char *key);
bool cli_option_takes_value(int id);
const char *cli_option_name(int id);   /* without the leading "--" */
/* Whether the subcommand takes the option or setting `id`. */
bool cli_takes(const cli_command *cmd, int id);
/* The library's settings: how many, and setting `id`'s row (NULL for a
 * program option); the id of the first setting of a kind, or -1. */
int cli_setting_count(void);
const cs_setting_info *cli_setting(int id);
/* Whether setting `id` is a trainer's (cs_train_config) rather than cs_config's. */
bool cli_setting_is_train(int id);
/* Setting `id`'s value in a as its table spells it (cs_config_get or
 * cs_train_config_get). */
cs_status cli_setting_get(const cli_args *a, int id, char *buf, size_t size);
int cli_setting_of_kind(cs_setting_kind kind);
int cli_setting_id(const char *name);

/* cli_config.c: --config FILE under the flags, and --print-config. */
int cli_config_apply(const cli_command *cmd, const char *path, cli_args *a);   /* over a's defaults; 0 or exit status */
/* After the flags: --param NAME replaces the file's NAME; the file's
 * environment and parameter names are checked (0 or the exit status). */
int cli_config_merge(cli_args *a);
int cli_print_config(const cli_command *cmd, const cli_args *a);
/* The option's value in `a` as a file would spell it ("" when it has none):
 * what --print-config prints and --help shows as the default. */
void cli_option_value(const cli_args *a, int id, char *out, size_t size);
/* Where an option's value came from, for error messages: "FILE:LINE: KEY"
 * when the configuration file set it (and no flag did), else "--NAME". */
const char *cli_option_origin(const cli_args *a, int id, char *buf, size_t size);


/* buf.c: */
/* A growing output buffer; a failed allocation sticks (failed = true). */
typedef struct {
    char *data;
    size_t len, cap;
    bool failed;
} cli_buf;

void cli_buf_add(cli_buf *b, const char *s, size_t n);
void cli_buf_str(cli_buf *b, const char *s);
void cli_buf_printf(cli_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_buf_repr(cli_buf *b, double x);
void cli_buf_json_string(cli_buf *b, const char *s);   /* quoted and escaped; NULL: null */
void cli_buf_json_number(cli_buf *b, const char *key, double v, bool last);   /* a member line; null if not finite */
void cli_buf_free(cli_buf *b);
/* cli_config.c: the JSON summaries' last member, "config": every setting of
 * the library's table with its value in cfg (numbers, booleans, strings, the
 * overrides as an array), four spaces in. */
void cli_json_config(cli_buf *b, const cs_config *cfg);
/* ...and train's "train" object: the trainers' settings in tc. */
void cli_json_train(cli_buf *b, const cs_train_config *tc);
/* cli_args.c, beside cli_stdout_write: writes the whole buffer to stdout;
 * CLI_EXIT_OK, or CLI_EXIT_FAIL after saying why (it ran out of memory while
 * built, or the write failed). */
int cli_buf_print(const cli_buf *b);

/* stop.c: the signal (SIGINT, SIGTERM) that asked the program to stop, or 0;
 * main() catches them for every subcommand and gives cs_config.interrupt
 * this flag. */
extern volatile sig_atomic_t cli_stop_signal;
void cli_catch_stop_signals(void);
/* plot.c: a learning curve (train --plot): points of (env-steps, training
 * mean return, evaluation return or NaN), drawn into a PNG. */
typedef struct cli_curve cli_curve;
cli_curve *cli_curve_new(void);
void cli_curve_add(cli_curve *c, double env_steps, double mean_return, double eval_return);
/* 0, or the exit status after saying why (render's PNG writer failed). */
int cli_curve_write(const cli_curve *c, const char *path, const char *title, double target);
void cli_curve_free(cli_curve *c);

/* dist.c: the program over several processes (mpirun -n K); one process
 * without MPI. start: 0 or the exit status; end: the job's exit status. */
int cli_dist_start(int *argc, char ***argv);
int cli_dist_end(int status);
int cli_dist_rank(void);
int cli_dist_local_rank(void);   /* among the ranks on this node */
int cli_dist_local_ranks(void);  /* the ranks on this node (1 without MPI) */
int cli_dist_ranks(void);
/* Holds a message back until the ranks agree who prints it; false: print it now. */
bool cli_dist_hold(const char *line);
/* Every rank calls it at the same point: the worst status of all ranks. */
int cli_dist_agree(int status);
/* Before anything else (dist_args.c): the worst status of all ranks, and
 * *slot the first entry of digest[n] that is not the same on every rank
 * (-1: none). */
int cli_dist_compare(int status, const uint64_t *digest, int n, int *slot);
/* Every rank's `mine` as "V on ranks 0, 2; W on rank 1" into out (each value
 * once); every rank calls it. */
void cli_dist_gather_text(const char *mine, char *out, size_t size);
/* dist_args.c: under mpirun, the ranks compare everything that decides what
 * they compute (the command, the program's options, the library's settings,
 * the contents of the files they name) before anything else: status, or 2
 * on every rank with one line naming what differs. a NULL: no command was
 * parsed (`command` says what was asked). */
int cli_dist_same_args(const cli_args *a, const char *command, int status);
/* cs_split.exchange over MPI: an allgather of the values. */
cs_status cli_dist_exchange(void *user, double *values, int64_t first, int64_t count, int64_t total);
void cli_dist_exchange_figures(int64_t *exchanges, int64_t *bytes, double *ms);
void cli_dist_sum(int64_t *values, int n);          /* in place, over all ranks */
void cli_dist_sum_real(double *values, int n);
void cli_dist_gather_real(double v, double *all);  /* all[ranks] at the root */
/* The rollout checksum of the whole batch (the root's *out is it). */
cs_status cli_dist_checksum(cs_env *env, uint64_t *out);

/* The subcommands. */
void cli_run_defaults(cli_args *a);
int cli_run(cli_args *a);
void cli_replay_defaults(cli_args *a);
int cli_replay(cli_args *a);
/* The replay file reader on a buffer (the fuzzer's way in): 0 when `data`
 * is a well-formed trajectory, checked against `env` too when not NULL;
 * else the exit status, after printing why as cli_replay does. */
int cli_replay_check(const char *data, size_t len, const cs_env_info *env);
void cli_dump_defaults(cli_args *a);
int cli_dump(cli_args *a);
void cli_train_defaults(cli_args *a);
int cli_train(cli_args *a);
void cli_eval_defaults(cli_args *a);
int cli_eval(cli_args *a);
int cli_cache(cli_args *a);

/* cli_policy.c: --policy NAME, or a trained policy file (a value with a '/'
 * or a '.'), for run, eval, view and render. prepare sets a->cfg.policy before opening;
 * apply checks the file against the opened environment and sets its weights
 * in every environment. Both return 0 or the exit status. */
typedef struct {
    bool from_file;
    const char *path;
    cs_policy_file file;
} cli_policy;

int cli_policy_prepare(cli_args *a, cli_policy *pol);
int cli_policy_apply(cs_env *env, const cli_policy *pol);
/* The same check and weights, as a status and a message (the viewer's hook). */
cs_status cli_policy_set_weights(cs_env *env, const cli_policy *pol, char *err, size_t err_size);
void cli_policy_free(cli_policy *pol);
void cli_view_defaults(cli_args *a);
int cli_view(cli_args *a);
void cli_render_defaults(cli_args *a);
int cli_render(cli_args *a);

#endif
