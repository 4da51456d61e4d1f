/* --config FILE.ini and --print-config.
 *
 * The library reads the file (cs_config_load: inih, every line checked, the
 * cs_config's settings applied); this file maps the rest of it ([run] steps
 * and seed, [agent], [train], [view]) onto the flags, through the flags' own
 * code, and remembers where every value came from. cli_parse applies the
 * file over the defaults and the flags over the file. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Every key a file can hold, as the option or setting it stands for: the
 * library's settings' keys (cs_config_setting_at), then the program's
 * (cli_options.def; section NULL: the option has no key). [params] is the
 * repeatable --param, one key per parameter. A flag that means different
 * things to different subcommands (--out: the trained policy, the frames)
 * has one key for each, applied only for its subcommands. */
typedef struct {
    int id;                     /* cli_opt_id, or a setting's (cli.h) */
    const char *section, *key;
    const char *commands;       /* " train " : only for these; NULL: every subcommand */
} config_key;

static const config_key program_keys[] = {
#define OPTION(id, flag, metavar, section, key, note, help) {OPT_##id, section, key, NULL},
#define KEY(id, section, key, commands) {OPT_##id, section, key, commands},
#define RANGE(id, lo, hi)
#define FOR(id, commands, metavar, help)
#include "cli_options.def"
#undef OPTION
#undef KEY
#undef RANGE
#undef FOR
};
#define N_PROGRAM_KEYS (sizeof program_keys / sizeof program_keys[0])

static config_key keys[N_PROGRAM_KEYS + 2 * CLI_MAX_SETTINGS];   /* a text setting has two keys */
static size_t n_keys;

static void build_keys(void)
{
    if (n_keys)
        return;
    for (int i = 0; i < cli_setting_count(); i++) {
        const cs_setting_info *in = cli_setting(OPT_COUNT + i);
        if (!in->section || !in->key)
            continue;   /* [params]: below, one key per parameter */
        keys[n_keys++] = (config_key){OPT_COUNT + i, in->section, in->key, NULL};
        /* The environment: [env] name, or path (the library reads it
         * relative to the file). */
        if (in->kind == CS_SETTING_TEXT)
            keys[n_keys++] = (config_key){OPT_COUNT + i, in->section, "path", NULL};
    }
    for (size_t i = 0; i < N_PROGRAM_KEYS; i++)
        keys[n_keys++] = program_keys[i];
}
#define N_KEYS n_keys

static const char *const sections[] = {"run", "env", "params", "agent", "train", "view"};
#define N_SECTIONS (sizeof sections / sizeof sections[0])

/* The file, kept to the end of the program: the settings point into it. */
static cs_config_file *loaded;
static const char *loaded_path;
static int line_of[CLI_ID_COUNT];               /* the file's line that set the option, or 0 */
static bool switch_on[CLI_ID_COUNT];            /* a switch the file turned on */
static int file_params;                         /* cfg.params[0, file_params) are the file's */
static int param_line[CS_MAX_PARAM_OVERRIDES];

static const config_key *find_key(const char *section, const char *key)
{
    build_keys();
    for (size_t i = 0; i < N_KEYS; i++)
        if (keys[i].section && strcmp(keys[i].section, section) == 0 && strcmp(keys[i].key, key) == 0)
            return &keys[i];
    return NULL;
}

static bool for_command(const config_key *k, const cli_command *cmd)
{
    if (!k->commands)
        return true;
    char name[64];
    snprintf(name, sizeof name, " %s ", cmd->name);
    return strstr(k->commands, name) != NULL;
}

static int unknown_key(const cs_config_entry *e)
{
    build_keys();
    char list[512] = "";
    for (size_t i = 0; i < N_KEYS; i++)
        if (keys[i].section && strcmp(keys[i].section, e->section) == 0) {
            strncat(list, *list ? ", " : " (keys: ", sizeof list - strlen(list) - 1);
            strncat(list, keys[i].key, sizeof list - strlen(list) - 1);
        }
    strncat(list, *list ? ")" : " (none yet)", sizeof list - strlen(list) - 1);
    return cli_error(CLI_EXIT_USAGE, "%s:%d: unknown key '%s' in [%s]%s", loaded_path, e->line, e->key, e->section,
                     list);
}

int cli_config_apply(const cli_command *cmd, const char *path, cli_args *a)
{
    char err[1024];
    cs_config_file *f = NULL;
    int params_before = a->cfg.n_params;
    cs_status st = cs_config_load(&a->cfg, path, &f, err, sizeof err);
    if (st != CS_OK)
        return cli_error(st == CS_ERR_NOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE, "%s", err);
    cs_config_file_free(loaded);
    loaded = f;
    loaded_path = path;
    memset(line_of, 0, sizeof line_of);
    memset(switch_on, 0, sizeof switch_on);
    /* Defaults bring no overrides; were there any, they would stay first. */
    file_params = 0;
    for (int k = 0; k < params_before; k++)
        param_line[file_params++] = 0;

    for (size_t i = 0; i < cs_config_file_count(f); i++) {
        const cs_config_entry *e = cs_config_file_entry(f, i);
        if (strcmp(e->section, "params") == 0) {
            param_line[file_params++] = e->line;
            continue;
        }
        const config_key *k = find_key(e->section, e->key);
        if (!k)
            return unknown_key(e);
        if (!for_command(k, cmd))
            continue;   /* another subcommand's: --print-config lists it */
        /* [env] name and path both: the library said */
        if (line_of[k->id] && k->id != cli_setting_of_kind(CS_SETTING_TEXT))
            return cli_error(CLI_EXIT_USAGE, "%s:%d: '%s' sets what line %d set", path, e->line, e->key,
                             line_of[k->id]);
        line_of[k->id] = e->line;
        if (e->applied)
            continue;
        char where[1024];
        snprintf(where, sizeof where, "%s:%d", path, e->line);
        const char *value = e->value;
        if (!cli_option_takes_value(k->id)) {
            /* A switch: true turns it on, false leaves the program's off. A
             * setting's boolean takes either value: its default may be true
             * (anneal_lr = false must turn annealing off). */
            bool setting = cli_setting(k->id) != NULL;
            if (strcmp(value, "true") != 0 && strcmp(value, "false") != 0)
                return cli_error(CLI_EXIT_USAGE, "%s: %s: '%s' is not true or false", where, e->key, value);
            if (!setting && strcmp(value, "false") == 0)
                continue;
            if (!setting) {
                switch_on[k->id] = true;
                value = NULL;
            }
        }
        int rc = cli_set_option(k->id, value, a, where, e->key);
        if (rc)
            return rc;
    }
    return 0;
}

/* The length of NAME in "NAME=..." */
static size_t param_name_len(const char *p)
{
    const char *eq = strchr(p, '=');
    return eq ? (size_t)(eq - p) : strlen(p);
}

/* Whether the environment parses with these settings (the parser only:
 * nothing is compiled); else the exit status, the message after `where`. */
static int parses(const cs_config *c, const char *where)
{
    char *text = NULL, error[1024];
    cs_status st = cs_dump(c, "parse", "text", &text, error, sizeof error);
    int rc = 0;
    if (st != CS_OK)
        rc = cli_error(cli_status_exit(st) == CLI_EXIT_OK ? CLI_EXIT_FAIL : cli_status_exit(st), "%s: %s", where,
                       error);
    free(text);
    return rc;
}

/* Only the environment knows its name and its parameters' names: a file's
 * are checked here, so that a typo is reported at its line. */
static int check_names(const cli_args *a)
{
    int env = cli_setting_of_kind(CS_SETTING_TEXT);
    bool env_from_file = line_of[env] && !a->given[env];
    bool params_from_file = false;
    for (int k = 0; k < file_params; k++)
        params_from_file |= param_line[k] != 0;
    /* A policy name (not a file, not the viewer's person at the keyboard). */
    bool policy_from_file = line_of[OPT_POLICY] && !a->given[OPT_POLICY] && a->policy &&
                            !strpbrk(a->policy, "/.") && strcmp(a->policy, "human") != 0;
    if (!env_from_file && !params_from_file && !policy_from_file)
        return 0;
    cs_config c = a->cfg;
    c.n_params = 0;
    char where[1024];
    snprintf(where, sizeof where, "%s:%d", loaded_path, line_of[env]);
    if (!env_from_file) {
        char *text = NULL;
        cs_status st = cs_dump(&c, "parse", "text", &text, NULL, 0);
        free(text);
        if (st != CS_OK)
            return 0;   /* the flag's environment: the subcommand says why */
    } else {
        int rc = parses(&c, where);
        if (rc)
            return rc;
    }
    for (int k = 0; k < file_params; k++) {
        if (!param_line[k])
            continue;
        c.params[0] = a->cfg.params[k];
        c.n_params = 1;
        snprintf(where, sizeof where, "%s:%d", loaded_path, param_line[k]);
        int rc = parses(&c, where);
        if (rc)
            return rc;
    }
    if (policy_from_file) {
        c.n_params = 0;
        c.policy = a->policy;
        snprintf(where, sizeof where, "%s:%d: policy", loaded_path, line_of[OPT_POLICY]);
        return parses(&c, where);
    }
    return 0;
}

int cli_config_merge(cli_args *a)
{
    cs_config *c = &a->cfg;
    int kept = 0, n = c->n_params;
    for (int i = 0; i < file_params; i++) {
        size_t len = param_name_len(c->params[i]);
        bool replaced = false;
        for (int j = file_params; j < n && !replaced; j++)
            replaced = param_name_len(c->params[j]) == len && memcmp(c->params[i], c->params[j], len) == 0;
        if (!replaced) {
            param_line[kept] = param_line[i];
            c->params[kept++] = c->params[i];
        }
    }
    for (int j = file_params; j < n; j++)
        c->params[kept + j - file_params] = c->params[j];
    c->n_params = kept + n - file_params;
    file_params = kept;
    return check_names(a);
}

const char *cli_option_origin(const cli_args *a, int id, char *buf, size_t size)
{
    build_keys();
    const char *key = NULL;
    for (size_t i = 0; i < N_KEYS && !key; i++)
        if (keys[i].id == id && keys[i].section)
            key = keys[i].key;
    if (line_of[id] && !a->given[id] && key)
        snprintf(buf, size, "%s:%d: %s", loaded_path, line_of[id], key);
    else
        snprintf(buf, size, "--%s", cli_option_name(id));
    return buf;
}

/* ---- --print-config ---- */

static void origin(cli_buf *b, const cli_args *a, int id)
{
    if (a->given[id])
        cli_buf_str(b, "flag");
    else if (line_of[id])
        cli_buf_printf(b, "%s:%d", loaded_path, line_of[id]);
    else
        cli_buf_str(b, "default");
}

static bool env_is_path(const char *env)
{
    size_t n = strlen(env);
    return strchr(env, '/') || (n > 4 && strcmp(env + n - 4, ".env") == 0);
}

void cli_option_value(const cli_args *a, int setting_or_option, char *out, size_t size)
{
    const cs_setting_info *in = cli_setting(setting_or_option);
    if (in) {   /* the list (--param): --print-config lists it in [params] */
        if (in->kind == CS_SETTING_LIST || cli_setting_get(a, setting_or_option, out, size) != CS_OK)
            out[0] = 0;
        return;
    }
    cli_opt_id id = (cli_opt_id)setting_or_option;
    if (!cli_option_takes_value(id)) {
        snprintf(out, size, "%s", a->given[id] || switch_on[id] ? "true" : "false");
        return;
    }
    switch (id) {
    case OPT_STEPS:
        snprintf(out, size, "%" PRId64, a->steps);
        break;
    case OPT_SEED:
        snprintf(out, size, "%" PRIu64, a->seed);
        break;
    case OPT_POLICY:   /* none: the kernel's random actions */
        snprintf(out, size, "%s", a->policy ? a->policy : "random");
        break;
    case OPT_FORMAT:
        snprintf(out, size, "%s", a->format ? a->format : "");
        break;
    case OPT_AFTER:
        snprintf(out, size, "%s", a->after ? a->after : "");
        break;
    case OPT_ARCH:
        snprintf(out, size, "%s", a->arch ? a->arch : "");
        break;
    case OPT_CONFIG:
        snprintf(out, size, "%s", a->config ? a->config : "");
        break;
    case OPT_AGENT:
        snprintf(out, size, "%s", a->agent ? a->agent : "");
        break;
    case OPT_HIDDEN:
        snprintf(out, size, "%s", a->hidden ? a->hidden : "");
        break;
    case OPT_ALGO:
        snprintf(out, size, "%s", a->algo ? a->algo : "");
        break;
    case OPT_POP:
        snprintf(out, size, "%" PRId64, a->pop);
        break;
    case OPT_GENERATIONS:
        snprintf(out, size, "%" PRId64, a->generations);
        break;
    case OPT_EPISODES:
        snprintf(out, size, "%" PRId64, a->episodes);
        break;
    case OPT_TARGET:
        if (a->target - a->target == 0)   /* NaN: the environment's threshold */
            cs_num_repr(a->target, out);
        else
            out[0] = 0;
        break;
    case OPT_OUT:
        snprintf(out, size, "%s", a->out ? a->out : "");
        break;
    case OPT_PLOT:
        snprintf(out, size, "%s", a->plot ? a->plot : "");
        break;
    default:
        snprintf(out, size, "?");
        break;
    }
}

static void line(cli_buf *b, const char *key, const char *value)
{
    size_t start = b->len;
    cli_buf_printf(b, "%s = %s", key, value);
    size_t n = b->len - start;
    cli_buf_printf(b, "%*s ; ", n < 32 ? (int)(32 - n) : 0, "");
}

int cli_print_config(const cli_command *cmd, const cli_args *a)
{
    build_keys();
    int param = cli_setting_of_kind(CS_SETTING_LIST);
    int env = cli_setting_of_kind(CS_SETTING_TEXT);
    cli_buf b = {0};
    cli_buf_printf(&b, "; cartsim %s: the settings in effect, each with its origin after ';'\n"
                       "; (default, flag, or FILE:LINE). This is itself a configuration file.\n",
                   cmd->name);
    for (size_t s = 0; s < N_SECTIONS; s++) {
        bool header = false;
        if (strcmp(sections[s], "params") == 0) {
            if (!cli_takes(cmd, param))
                continue;
            cli_buf_str(&b, "\n[params]\n");
            if (a->cfg.n_params == 0)
                cli_buf_str(&b, "; none: the environment's own values\n");
            for (int k = 0; k < a->cfg.n_params; k++) {
                const char *p = a->cfg.params[k];
                size_t len = param_name_len(p);
                char name[128];
                snprintf(name, sizeof name, "%.*s", (int)len, p);
                line(&b, name, p[len] ? p + len + 1 : "");
                if (k < file_params && param_line[k])
                    cli_buf_printf(&b, "%s:%d\n", loaded_path, param_line[k]);
                else
                    cli_buf_str(&b, k < file_params ? "default\n" : "flag\n");
            }
            continue;
        }
        for (size_t i = 0; i < N_KEYS; i++) {
            const config_key *k = &keys[i];
            if (!k->section || strcmp(k->section, sections[s]) != 0 || !cli_takes(cmd, k->id) || !for_command(k, cmd))
                continue;
            char value[512];
            cli_option_value(a, k->id, value, sizeof value);
            /* [env]: one of name and path, as the value reads. */
            if (k->id == env && strcmp(k->key, env_is_path(value) ? "path" : "name") != 0)
                continue;
            if (!header)
                cli_buf_printf(&b, "\n[%s]\n", sections[s]);
            header = true;
            if (!*value)   /* unset: a comment, the file must stay loadable */
                cli_buf_str(&b, "; ");
            line(&b, k->key, value);
            origin(&b, a, k->id);
            cli_buf_str(&b, "\n");
        }
    }
    /* What the file holds that this subcommand does not use. */
    bool first = true;
    for (size_t i = 0; i < cs_config_file_count(loaded); i++) {
        const cs_config_entry *e = cs_config_file_entry(loaded, i);
        bool is_param = strcmp(e->section, "params") == 0;
        const config_key *k = is_param ? NULL : find_key(e->section, e->key);
        if (is_param ? cli_takes(cmd, param) : !k || (cli_takes(cmd, k->id) && for_command(k, cmd)))
            continue;
        if (first)
            cli_buf_printf(&b, "\n; in %s, not used by 'cartsim %s':\n", loaded_path, cmd->name);
        first = false;
        cli_buf_printf(&b, "; [%s] %s = %s (line %d)\n", e->section, e->key, e->value, e->line);
    }
    int rc = cli_buf_print(&b);
    cli_buf_free(&b);
    return rc;
}

/* ---- the JSON summaries' settings ---- */

void cli_json_config(cli_buf *b, const cs_config *cfg)
{
    cli_buf_str(b, "  \"config\": {");
    for (int i = 0; i < cli_setting_count() && !cli_setting_is_train(OPT_COUNT + i); i++) {
        const cs_setting_info *in = cli_setting(OPT_COUNT + i);
        char value[4096];
        cs_config_get(cfg, in->name, value, sizeof value);
        cli_buf_str(b, i ? ",\n    " : "\n    ");
        cli_buf_json_string(b, in->name);
        cli_buf_str(b, ": ");
        switch (in->kind) {
        case CS_SETTING_INT:
        case CS_SETTING_SECONDS:
        case CS_SETTING_BOOL:   /* digits, %g or true/false: JSON as they are */
            cli_buf_str(b, value);
            break;
        case CS_SETTING_LIST:
            cli_buf_str(b, "[");
            for (int k = 0; k < cfg->n_params; k++) {
                cli_buf_str(b, k ? ", " : "");
                cli_buf_json_string(b, cfg->params[k]);
            }
            cli_buf_str(b, "]");
            break;
        default:
            cli_buf_json_string(b, value);
            break;
        }
    }
    cli_buf_str(b, "\n  }");
}

/* One line, as the per-iteration records: "train": {"sigma": 0.2, ...}. */
void cli_json_train(cli_buf *b, const cs_train_config *tc)
{
    cli_buf_str(b, "\"train\": {");
    bool first = true;
    for (int i = 0; i < cli_setting_count(); i++) {
        if (!cli_setting_is_train(OPT_COUNT + i))
            continue;
        const cs_setting_info *in = cli_setting(OPT_COUNT + i);
        char value[128];
        cs_train_config_get(tc, in->name, value, sizeof value);
        cli_buf_str(b, first ? "" : ", ");
        first = false;
        cli_buf_json_string(b, in->name);
        cli_buf_str(b, ": ");
        if (in->kind == CS_SETTING_CHOICE || strcmp(value, "auto") == 0)
            cli_buf_json_string(b, value);
        else
            cli_buf_str(b, value);   /* digits, a repr or true/false: JSON as they are */
    }
    cli_buf_str(b, "}");
}
