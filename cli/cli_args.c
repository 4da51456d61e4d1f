/* Options of all subcommands, their parser, help text and error reporting. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* One flag: a program option (cli_options.def) or a library setting; a
 * setting's switch (a boolean) sets `value`. */
typedef struct {
    const char *name;           /* without the leading "--" */
    const char *metavar;        /* NULL: a switch that takes no value */
    const char *default_note;   /* after the default in --help; NULL: none */
    const char *help;
    int id;                     /* cli_opt_id, or OPT_COUNT + the setting's index */
    const char *value;          /* a setting's switch: what it sets ("true", "false") */
} cli_flag;

static const cli_flag program_flags[OPT_COUNT] = {
#define OPTION(id, flag, metavar, section, key, note, help) [OPT_##id] = {flag, metavar, note, help, OPT_##id, NULL},
#define KEY(id, section, key, commands)
#define RANGE(id, lo, hi)
#define FOR(id, commands, metavar, help)
#include "cli_options.def"
#undef OPTION
#undef KEY
#undef RANGE
#undef FOR
};

typedef struct {
    int64_t lo, hi;
} cli_range;

static const cli_range ranges[OPT_COUNT] = {
#define OPTION(id, flag, metavar, section, key, note, help)
#define KEY(id, section, key, commands)
#define RANGE(id, lo, hi) [OPT_##id] = {lo, hi},
#define FOR(id, commands, metavar, help)
#include "cli_options.def"
#undef OPTION
#undef KEY
#undef RANGE
#undef FOR
};

/* An option's metavar and help in one subcommand's --help (FOR rows). */
static const struct {
    cli_opt_id id;
    const char *commands, *metavar, *help;
} spellings[] = {
#define OPTION(id, flag, metavar, section, key, note, help)
#define KEY(id, section, key, commands)
#define RANGE(id, lo, hi)
#define FOR(id, commands, metavar, help) {OPT_##id, commands, metavar, help},
#include "cli_options.def"
#undef OPTION
#undef KEY
#undef RANGE
#undef FOR
};

/* The flags, built once from the library's table and the program's: the
 * settings first (a boolean whose false has its own help also gets
 * --no-NAME), then the program's options. */
static struct {
    bool built;
    int n_settings, n_flags;
    int n_config;               /* settings [0, n_config) are cs_config's, the rest the trainers' */
    cs_setting_info settings[CLI_MAX_SETTINGS];
    cli_flag flags[OPT_COUNT + 2 * CLI_MAX_SETTINGS];
    char names[2 * CLI_MAX_SETTINGS][72];     /* "cc-timeout", "no-persistent" */
    char metavars[CLI_MAX_SETTINGS][128];     /* a choice's "a|b|c" */
} table;

static void build_table(void)
{
    if (table.built)
        return;
    table.built = true;
    size_t n = cs_config_setting_count() + cs_train_setting_count();
    /* More settings than the program has room for: cli_parse refuses to
     * run (an internal error), so none goes missing quietly. */
    table.n_settings = n < CLI_MAX_SETTINGS ? (int)n : CLI_MAX_SETTINGS;
    table.n_config = (int)cs_config_setting_count();
    int nf = 0, nn = 0;
    for (int i = 0; i < table.n_settings; i++) {
        cs_setting_info *in = &table.settings[i];
        if ((i < table.n_config ? cs_config_setting_at((size_t)i, in)
                                : cs_train_setting_at((size_t)(i - table.n_config), in)) != CS_OK)
            continue;
        char *name = table.names[nn++];
        snprintf(name, sizeof table.names[0], "%s", in->name);
        for (char *c = name; *c; c++)   /* a flag spells the setting's '_' as '-' */
            *c = *c == '_' ? '-' : *c;
        cli_flag f = {name, in->metavar, NULL, in->help, OPT_COUNT + i, NULL};
        if (in->kind == CS_SETTING_CHOICE) {
            char *m = table.metavars[i];
            m[0] = 0;
            for (int k = 0; k < in->n_choices; k++)
                snprintf(m + strlen(m), sizeof table.metavars[0] - strlen(m), "%s%s", k ? "|" : "", in->choices[k]);
            f.metavar = m;
        }
        if (in->kind == CS_SETTING_BOOL) {
            f.metavar = NULL;
            f.value = "true";
        }
        table.flags[nf++] = f;
        if (in->kind == CS_SETTING_BOOL && in->help_off) {
            char *off = table.names[nn++];
            snprintf(off, sizeof table.names[0], "no-%s", in->name);
            for (char *c = off; *c; c++)
                *c = *c == '_' ? '-' : *c;
            table.flags[nf++] = (cli_flag){off, NULL, NULL, in->help_off, OPT_COUNT + i, "false"};
        }
    }
    for (int k = 0; k < OPT_COUNT; k++)
        table.flags[nf++] = program_flags[k];
    table.n_flags = nf;
}

int cli_setting_count(void)
{
    build_table();
    return table.n_settings;
}

const cs_setting_info *cli_setting(int id)
{
    build_table();
    return id >= OPT_COUNT && id < OPT_COUNT + table.n_settings ? &table.settings[id - OPT_COUNT] : NULL;
}

bool cli_setting_is_train(int id)
{
    build_table();
    return id >= OPT_COUNT + table.n_config && id < OPT_COUNT + table.n_settings;
}

cs_status cli_setting_get(const cli_args *a, int id, char *buf, size_t size)
{
    const cs_setting_info *in = cli_setting(id);
    if (!in)
        return CS_ERR_NOT_FOUND;
    return cli_setting_is_train(id) ? cs_train_config_get(&a->tc, in->name, buf, size)
                                    : cs_config_get(&a->cfg, in->name, buf, size);
}

int cli_setting_id(const char *name)
{
    build_table();
    for (int i = 0; i < table.n_settings; i++)
        if (strcmp(table.settings[i].name, name) == 0)
            return OPT_COUNT + i;
    return -1;
}

int cli_setting_of_kind(cs_setting_kind kind)
{
    build_table();
    for (int i = 0; i < table.n_settings; i++)
        if (table.settings[i].kind == kind)
            return OPT_COUNT + i;
    return -1;
}

/* The flag that shows `id` (a setting's first spelling). */
static const cli_flag *flag_of(int id)
{
    build_table();
    for (int f = 0; f < table.n_flags; f++)
        if (table.flags[f].id == id)
            return &table.flags[f];
    return NULL;
}

/* " a b " holds word */
static bool in_words(const char *words, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = words ? strstr(words, word) : NULL; p; p = strstr(p + 1, word))
        if (p > words && p[-1] == ' ' && p[n] == ' ')
            return true;
    return false;
}

bool cli_takes(const cli_command *cmd, int id)
{
    if (id >= 0 && id < OPT_COUNT)
        return ((cmd->options | CLI_OPTS_GLOBAL) & CLI_OPT(id)) != 0;
    const cs_setting_info *in = cli_setting(id);
    if (in && cli_setting_is_train(id))
        return cmd->train_settings;
    return in && cmd->settings && !in_words(cmd->without, in->name) && !in_words(cmd->refuses, in->name);
}

/* Set while a configuration file's value is applied (cli_set_option):
 * "FILE:LINE" and the file's key, which errors then name. */
static const char *value_origin, *value_key;

int cli_error(int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* One line, always: whatever went into the message (file contents,
     * library text) must not break it. */
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    char line[1200];
    snprintf(line, sizeof line, "%s%s%s", value_origin ? value_origin : "", value_origin ? ": " : "", msg);
    /* Under mpirun the ranks agree on who says it (cli/dist.c). */
    if (!cli_dist_hold(line))
        fprintf(stderr, "cartsim: %s\n", line);
    return status;
}

int cli_status_exit(cs_status s)
{
    switch (s) {
    case CS_OK:
        return CLI_EXIT_OK;
    case CS_ERR_ARGUMENT:
    case CS_ERR_PARSE:
    case CS_ERR_NOT_FOUND:
    case CS_ERR_UNAVAILABLE:
    case CS_ERR_LIMIT:
        return CLI_EXIT_USAGE;
    default:
        return CLI_EXIT_FAIL;
    }
}

int cli_lib_error(cs_status s, const char *message)
{
    /* Stopped by the program's own Ctrl-C (a compile, training between
     * generations): exit status 128 + the signal, the library's words. */
    if (s == CS_ERR_INTERRUPTED && cli_stop_signal)
        return cli_error(128 + cli_stop_signal, "%s", message && *message ? message : "interrupted");
    if (!message || !*message)
        message = cs_status_string(s);
    if (!message)
        message = "unknown error";
    int status = cli_status_exit(s);
    if (status == CLI_EXIT_OK)
        status = CLI_EXIT_FAIL;
    /* Compiler output can run over many lines: the first one is the
     * message, the rest goes after it so that nothing is lost. */
    const char *nl = strchr(message, '\n');
    if (!nl || status == CLI_EXIT_USAGE || cli_dist_ranks() > 1)
        return cli_error(status, "%s", message);
    fprintf(stderr, "cartsim: %.*s\n%s%s", (int)(nl - message), message, nl + 1,
            message[strlen(message) - 1] == '\n' ? "" : "\n");
    return status;
}

bool cli_stdout_write(const char *data, size_t len)
{
    if ((len && fwrite(data, 1, len, stdout) != len) || fflush(stdout) != 0) {
        cli_error(CLI_EXIT_FAIL, "writing the output: %s", strerror(errno));
        return false;
    }
    return true;
}

int cli_buf_print(const cli_buf *b)
{
    if (b->failed)
        return cli_error(CLI_EXIT_FAIL, "out of memory");
    return cli_stdout_write(b->data, b->len) ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

void cli_open_notices(const cs_config *cfg, cs_backend got, cs_dtype dtype, const char *notice)
{
    if (cli_dist_rank() != 0)
        return;
    if (cfg->backend == CS_BACKEND_AUTO && got == CS_BACKEND_INTERP)
        fprintf(stderr, "cartsim: note: %s\n", notice && *notice ? notice : "running the interpreter");
    if (cfg->math == CS_MATH_FAST && dtype == CS_DTYPE_F32)
        fprintf(stderr, "cartsim: note: --math fast has no effect with --dtype f32: f32 computes with cartsim's "
                        "own vectorized functions in either mode (it changes f64's)\n");
    if (cfg->block > 0 && got != CS_BACKEND_CUDA)
        fprintf(stderr, "cartsim: note: --block has no effect on the %s backend: it sets the threads per block "
                        "of a CUDA launch\n", cs_backend_name(got));
}

void cli_env_notice(const cs_config *cfg, cs_env *env)
{
    cs_env_info info;
    if (env && cs_env_get_info(env, &info) == CS_OK)
        cli_open_notices(cfg, info.backend, info.dtype, info.notice);
}

/* ---- values ---- */

static int bad_value(const char *opt, const char *value, const char *why)
{
    return cli_error(CLI_EXIT_USAGE, "%s%s: '%s' %s", value_key ? "" : "--", value_key ? value_key : opt, value,
                     why);
}

static int int_value(const char *opt, const char *value, int64_t lo, int64_t hi, int64_t *out)
{
    switch (cs_num_i64(value, lo, hi, out)) {
    case CS_NUM_OK:
        return 0;
    case CS_NUM_SYNTAX:
        return bad_value(opt, value, "is not an integer");
    default:
        return cli_error(CLI_EXIT_USAGE, "%s%s: '%s' is out of range (%" PRId64 " to %" PRId64 ")",
                         value_key ? "" : "--", value_key ? value_key : opt, value, lo, hi);
    }
}

/* A value among the option's METAVAR "a|b|c" (the table's list is the
 * list of choices): 0 and *out = value, or the exit status. */
static int choice(cli_opt_id id, const char *value, const char **out)
{
    const char *names = program_flags[id].metavar;
    size_t n = strlen(value);
    for (const char *p = names; p; p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL)
        if (strncmp(p, value, n) == 0 && (p[n] == '|' || p[n] == 0) && n > 0) {
            *out = value;
            return 0;
        }
    char why[256] = "is not one of the choices: ";
    for (const char *p = names; *p && strlen(why) + 3 < sizeof why; p++) {
        size_t len = strlen(why);
        if (*p == '|') {
            why[len++] = ',';
            why[len++] = ' ';
        } else {
            why[len++] = *p;
        }
        why[len] = 0;
    }
    return bad_value(program_flags[id].name, value, why);
}

static bool is_ident(const char *s, size_t n)
{
    if (n == 0 || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
        return false;
    for (size_t i = 1; i < n; i++) {
        char c = s[i];
        if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            return false;
    }
    return true;
}

/* A setting of the cs_config or of the trainers: the library checks it
 * (cs_config_set, cs_train_config_set), for flags and configuration files
 * alike; errors name the flag. */
static int config_value(const cs_setting_info *in, bool train, const char *opt, const char *value, cli_args *a)
{
    char msg[1024];
    cs_status st = train ? cs_train_config_set(&a->tc, in->name, value, msg, sizeof msg)
                         : cs_config_set(&a->cfg, in->name, value, msg, sizeof msg);
    if (st == CS_OK)
        return 0;
    return cli_error(cli_status_exit(st), "%s%s: %s", value_key ? "" : "--", value_key ? value_key : opt, msg);
}

/* "H" or "HxH", H from 1 to 256 without a leading zero */
static bool hidden_ok(const char *value)
{
    const char *s = value;
    int layers = 0;
    while (layers < 2 && *s >= '1' && *s <= '9') {
        char *end;
        long h = strtol(s, &end, 10);
        if (h > 256)
            break;
        layers++;
        s = end;
        if (*s != 'x' || layers == 2)
            break;
        s++;
    }
    return layers && !*s;
}

static int set_option(int setting_or_option, const char *value, cli_args *a)
{
    const cs_setting_info *in = cli_setting(setting_or_option);
    if (in) {
        const cli_flag *f = flag_of(setting_or_option);
        return config_value(in, cli_setting_is_train(setting_or_option), f->name, value ? value : "true", a);
    }
    if (setting_or_option < 0 || setting_or_option >= OPT_COUNT)
        return cli_error(CLI_EXIT_FAIL, "internal error: option %d", setting_or_option);
    cli_opt_id id = (cli_opt_id)setting_or_option;
    const char *name = program_flags[id].name;

    switch (id) {
    case OPT_STEPS:
        return int_value(name, value, ranges[id].lo, ranges[id].hi, &a->steps);
    case OPT_SEED:
        switch (cs_num_u64(value, &a->seed)) {
        case CS_NUM_OK:
            return 0;
        case CS_NUM_SYNTAX:
            return bad_value(name, value, "is not a non-negative integer");
        default:
            return bad_value(name, value, "is out of range (0 to 18446744073709551615)");
        }
    case OPT_AFTER:
        if (!is_ident(value, strlen(value)))
            return bad_value(name, value, "is not a pass name");
        a->after = value;
        return 0;
    case OPT_FORMAT:
        return choice(id, value, &a->format);
    case OPT_ARCH:
        a->arch = value;
        return 0;
    case OPT_JSON:
        a->json = true;
        return 0;
    case OPT_PROGRESS:
        a->progress = true;
        return 0;
    case OPT_OPEN_LOOP:
        a->open_loop = true;
        return 0;
    case OPT_CONFIG:
        if (!*value)
            return bad_value(name, value, "is not a file name");
        a->config = value;
        return 0;
    case OPT_PRINT_CONFIG:
        a->print_config = true;
        return 0;
    case OPT_POLICY:
        if (!*value)
            return bad_value(name, value, "is not a policy");
        a->policy = value;
        return 0;
    case OPT_OUT:
        if (!*value)
            return bad_value(name, value, "is not a path");
        a->out = value;
        return 0;
    case OPT_AGENT: {
        /* linear, mlp (its --hidden), or mlp:H[xH] spelt out */
        if (strcmp(value, "linear") != 0 && strcmp(value, "mlp") != 0 &&
            (strncmp(value, "mlp:", 4) != 0 || !hidden_ok(value + 4)))
            return bad_value(name, value, "is not linear, mlp or mlp:H[xH] with H from 1 to 256");
        a->agent = value;
        return 0;
    }
    case OPT_PLOT:
        if (!*value)
            return bad_value(name, value, "is not a path");
        a->plot = value;
        return 0;
    case OPT_ALGO:
        return choice(id, value, &a->algo);
    case OPT_POP:
        return int_value(name, value, ranges[id].lo, ranges[id].hi, &a->pop);
    case OPT_GENERATIONS:
        return int_value(name, value, ranges[id].lo, ranges[id].hi, &a->generations);
    case OPT_EPISODES:
        return int_value(name, value, ranges[id].lo, ranges[id].hi, &a->episodes);
    case OPT_HIDDEN:
        if (!hidden_ok(value))
            return bad_value(name, value, "is not H or HxH with H from 1 to 256");
        a->hidden = value;
        return 0;
    case OPT_TARGET:
        if (!cs_num_real(value, &a->target) || a->target - a->target != 0)
            return bad_value(name, value, "is not a finite number");
        return 0;
    case OPT_HELP:
        a->help = true;
        return 0;
    case OPT_VERSION:
        a->version = true;
        return 0;
    case OPT_COUNT:
        break;
    }
    return cli_error(CLI_EXIT_FAIL, "internal error: option %d", (int)id);
}

int cli_set_option(int id, const char *value, cli_args *a, const char *origin, const char *key)
{
    value_origin = origin;
    value_key = key;
    int rc = set_option(id, value, a);
    value_origin = value_key = NULL;
    return rc;
}

bool cli_option_takes_value(int id)
{
    const cli_flag *f = flag_of(id);
    return f && f->metavar != NULL;
}

const char *cli_option_name(int id)
{
    const cli_flag *f = flag_of(id);
    return f ? f->name : "?";
}

static int parse_flags(const cli_command *cmd, int argc, char **argv, cli_args *a)
{
    build_table();
    if (cs_config_setting_count() + cs_train_setting_count() > CLI_MAX_SETTINGS)
        return cli_error(CLI_EXIT_FAIL, "internal error: the library has %zu settings, the program room for %d "
                         "(cli.h's CLI_MAX_SETTINGS)", cs_config_setting_count() + cs_train_setting_count(),
                         CLI_MAX_SETTINGS);
    bool only_positional = false;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (only_positional || arg[0] != '-' || arg[1] == 0) {
            if (a->n_positional >= cmd->max_positional) {
                if (cmd->max_positional == 0)
                    return cli_error(CLI_EXIT_USAGE, "unexpected argument '%s' (try cartsim %s --help)", arg,
                                     cmd->name);
                return cli_error(CLI_EXIT_USAGE, "too many arguments: '%s'", arg);
            }
            a->positional[a->n_positional++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_positional = true;
            continue;
        }
        if (strcmp(arg, "-h") == 0)
            arg = "--help";
        if (arg[1] != '-')
            return cli_error(CLI_EXIT_USAGE, "unknown option '%s' (try cartsim %s --help)", arg, cmd->name);

        /* --name value, or --name=value */
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const cli_flag *f = NULL;
        for (int k = 0; k < table.n_flags && !f; k++)
            if (strlen(table.flags[k].name) == len && memcmp(table.flags[k].name, name, len) == 0) {
                f = &table.flags[k];
                const cs_setting_info *in = cli_setting(f->id);
                if (in && in_words(cmd->refuses, in->name))
                    return cli_error(CLI_EXIT_USAGE, "--%s has no effect on 'cartsim %s': %s", f->name, cmd->name,
                                     cmd->refused_why);
                if (!cli_takes(cmd, f->id))
                    f = NULL;
            }
        if (!f)
            return cli_error(CLI_EXIT_USAGE, "unknown option '%.*s' (try cartsim %s --help)", (int)len + 2, arg,
                             cmd->name);
        const char *value = f->value;
        if (f->metavar) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return cli_error(CLI_EXIT_USAGE, "option --%s needs a value (%s)", f->name, f->metavar);
        } else if (eq) {
            return cli_error(CLI_EXIT_USAGE, "option --%s takes no value", f->name);
        }
        const cs_setting_info *in = cli_setting(f->id);
        if (a->given[f->id] && !(in && in->kind == CS_SETTING_LIST)) {
            /* A switch with two spellings (--persistent, --no-persistent): given both, neither can win. */
            const cli_flag *first = flag_of(f->id);
            char now[8];
            if (f->value && cli_setting_get(a, f->id, now, sizeof now) == CS_OK && strcmp(now, f->value) != 0)
                return cli_error(CLI_EXIT_USAGE, "--%s and --no-%s contradict each other", first->name, first->name);
            return cli_error(CLI_EXIT_USAGE, "option --%s given twice", f->name);
        }
        a->given[f->id] = true;
        int rc = set_option(f->id, value, a);
        if (rc)
            return rc;
        /* --help and --version win over whatever else is on the line. */
        if (a->help || a->version)
            return 0;
    }
    return 0;
}

/* Defaults, then the --config file, then the flags: the flags are read once
 * to find the file and read again over it, so that they win. */
int cli_parse(const cli_command *cmd, int argc, char **argv, cli_args *a)
{
    cli_args defaults = *a;
    int rc = parse_flags(cmd, argc, argv, a);
    if (rc || !a->config || a->help || a->version)
        return rc;
    const char *path = a->config;
    *a = defaults;
    if ((rc = cli_config_apply(cmd, path, a)) || (rc = parse_flags(cmd, argc, argv, a)))
        return rc;
    return cli_config_merge(a);
}

/* ---- help ---- */

/* What the subcommand starts from before files and flags: main()'s own
 * sequence, so that --help cannot say other defaults than the ones used. */
void cli_defaults(const cli_command *cmd, cli_args *a)
{
    memset(a, 0, sizeof *a);
    cs_config_init(&a->cfg);
    cs_train_config_init(&a->tc);
    if (cmd->defaults)
        cmd->defaults(a);
}

/* "(default VALUE NOTE)", "(default NOTE)" or nothing (see cli_options.def);
 * a setting's note ("VALUE: NOTE") when the value is the table's default. */
static void default_text(const cli_args *d, const cli_flag *f, char *out, size_t size)
{
    char value[256] = "";
    const cs_setting_info *in = cli_setting(f->id);
    const char *note = f->default_note;
    char setting_note[256];
    if (in && in->default_note && in->default_value) {
        char v[256];
        if (cli_setting_get(d, f->id, v, sizeof v) == CS_OK && strcmp(v, in->default_value) == 0) {
            snprintf(setting_note, sizeof setting_note, ": %s", in->default_note);
            note = setting_note;
        }
    }
    out[0] = 0;
    cli_option_value(d, f->id, value, sizeof value);
    if (!f->metavar) {
        if (strcmp(value, f->value ? f->value : "true") == 0)   /* it starts as the switch sets it */
            snprintf(out, size, " (the default)");
        return;
    }
    if (*value)
        snprintf(out, size, " (default %s%s%s)", value, note && note[0] != ':' ? " " : "", note ? note : "");
    else if (note)
        snprintf(out, size, " (default%s%s)", note[0] == ':' ? "" : " ", note);
}

/* f as cmd's --help shows it: its own metavar and help where a FOR row says. */
static cli_flag spelled_for(const cli_command *cmd, const cli_flag *f)
{
    cli_flag out = *f;
    for (size_t k = 0; k < sizeof spellings / sizeof spellings[0]; k++)
        if ((int)spellings[k].id == f->id && in_words(spellings[k].commands, cmd->name)) {
            out.metavar = spellings[k].metavar;
            out.help = spellings[k].help;
        }
    return out;
}

static void print_options(const cli_command *cmd)
{
    cli_args d;
    cli_defaults(cmd, &d);
    build_table();
    for (int k = 0; k < table.n_flags; k++) {
        cli_flag spelled = spelled_for(cmd, &table.flags[k]);
        const cli_flag *f = &spelled;
        if (!cli_takes(cmd, f->id))
            continue;
        char dflt[320];
        default_text(&d, f, dflt, sizeof dflt);
        char left[160];
        if (f->metavar)
            snprintf(left, sizeof left, "--%s %s", f->name, f->metavar);
        else
            snprintf(left, sizeof left, "--%s", f->name);
        if (strlen(left) > 28)
            printf("  %s\n  %-28s  %s%s\n", left, "", f->help, dflt);
        else
            printf("  %-28s  %s%s\n", left, f->help, dflt);
    }
}

void cli_print_help(const cli_command *cmd)
{
    printf("usage: cartsim %s %s\n\n%s.\n\n", cmd->name, cmd->usage, cmd->summary);
    printf("options:\n");
    print_options(cmd);
    if (cmd->details)
        printf("\n%s", cmd->details);
}

void cli_print_overview(void)
{
    const cli_command *def = &cli_commands[0];
    printf("usage: cartsim [COMMAND] [flags]\n\n"
           "cartsim %s: thousands of RL environments stepped by one fused, JIT-compiled kernel.\n\n"
           "commands (default %s):\n",
           CS_VERSION_STRING, def->name);
    for (const cli_command *c = cli_commands; c->name; c++)
        printf("  %-8s  %s\n", c->name, c->summary);
    printf("\n'cartsim COMMAND --help' describes a command. Options of '%s':\n", def->name);
    print_options(def);
    if (def->details)
        printf("\n%s", def->details);
}
