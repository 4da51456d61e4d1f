/* Settings by name (cs_config_set) and configuration files (cs_config_load):
 * INI text read with inih, every line accounted for. inih splits lines into
 * sections, keys and values; the reader below hands it the file line by line,
 * counting lines and refusing what inih would take silently (text after a
 * section's ']', indented lines that it would glue to the previous value,
 * lines too long for its buffer), and the handler refuses duplicates,
 * unknown names and bad values. Numbers are read by the command line's own
 * parser (num.c), and the command line sets these same settings through
 * cs_config_set: a file and a flag are checked by the same code. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cartsim.h"
#include "config.h"
#include "jit.h"
#include "num.h"
#include "regular_file.h"
#include "status.h"

#ifdef CS_HAVE_INIH
#include <ini.h>
#else
/* Built without inih (the Makefile found no ini.h): cs_config_load refuses
 * every file with the package to install, and the reader below goes unused. */
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

/* A configuration is a few dozen lines; anything this big is not one. */
#define MAX_FILE_BYTES (1 << 20)

/* ---- the settings of cs_config ----
 *
 * THE declaration of every setting: its name (cs_config_set's; the
 * program's flag is --NAME with '-' for '_'), its file section and key, the
 * cs_config field it sets, its kind, range (cartsim.h's CS_MAX_*) or
 * choices, its default (cs_config_init applies the defaults through
 * cs_config_set), what the default means, and its help text. The program
 * builds its flags, file keys, --help, --print-config and the JSON
 * summaries' "config" object from these rows (cs_config_setting_at), so a
 * new setting is one new row here. cs_env_open checks the fields against the
 * same rows (cs_config_check). "env" and "param" are special: a file spells
 * them [env] name/path and [params] NAME = VALUE. */

typedef struct {
    cs_setting_info info;       /* .key NULL: the name (a list's: none) */
    size_t offset, size;        /* of the field */
} cfg_setting;

/* Only these two are offered: CS_AUTORESET_DISABLED is replay's own. */
static const char *const autoreset_names[] = {[CS_AUTORESET_NEXT_STEP] = "next_step",
                                              [CS_AUTORESET_SAME_STEP] = "same_step"};
static const char *const dtype_names[] = {[CS_DTYPE_F32] = "f32", [CS_DTYPE_F64] = "f64"};
static const char *const bool_names[] = {"false", "true"};
static const char *const math_names[] = {[CS_MATH_EXACT] = "exact", [CS_MATH_FAST] = "fast"};
#define CHOICES(names) .choices = names, .n_choices = (int)(sizeof names / sizeof names[0])
#define FIELD(f) offsetof(cs_config, f), sizeof(((cs_config *)0)->f)
#define STRING_OF(x) #x
#define STRING(macro) STRING_OF(macro)   /* a number #defined once, in text */

/* A new setting is its cs_config field (cartsim.h) and one row here: its
 * flag, file key, --help line, --print-config line and JSON member follow. */
static const cfg_setting settings[] = {
    {{.name = "env", .section = "env", .key = "name", .field = "env", .kind = CS_SETTING_TEXT,
      .metavar = "NAME|PATH.env", .default_value = "cartpole",
      .help = "environment: a name from envs/, its Gymnasium id (CartPole-v1) or a .env file"}, FIELD(env)},
    {{.name = "envs", .section = "run", .field = "num_envs", .kind = CS_SETTING_INT, .metavar = "N", .min = 1,
      .max = CS_MAX_ENVS, .default_value = "1", .help = "environments stepped together"}, FIELD(num_envs)},
    {{.name = "unroll", .section = "run", .field = "unroll", .kind = CS_SETTING_INT, .metavar = "U", .min = 1,
      .max = CS_MAX_UNROLL, .default_value = "1", .help = "steps per loop iteration or launch"}, FIELD(unroll)},
    {{.name = "threads", .section = "run", .field = "threads", .kind = CS_SETTING_INT, .metavar = "K", .min = 0,
      .max = CS_MAX_THREADS, .default_value = "0", .default_note = "all cores", .help = "cpu threads"}, FIELD(threads)},
    {{.name = "block", .section = "run", .field = "block", .kind = CS_SETTING_INT, .metavar = "N", .min = 0,
      .max = CS_MAX_BLOCK, .default_value = "0", .default_note = "automatic",
      .help = "CUDA threads per block, from the occupancy API when automatic"}, FIELD(block)},
    {{.name = "device", .section = "run", .field = "device", .kind = CS_SETTING_INT, .metavar = "N", .min = 0,
      .max = CS_MAX_DEVICE, .default_value = "0",
      .help = "CUDA device, modulo the devices there are (cartsim under mpirun: the rank's index on its node)"},
     FIELD(device)},
    {{.name = "backend", .section = "run", .field = "backend", .kind = CS_SETTING_CHOICE, CHOICES(cs_backend_names),
      .default_value = "auto", .default_note = "cuda, else cpu, else the interpreter with a note on stderr",
      .help = "where the kernel runs"}, FIELD(backend)},
    {{.name = "fusion", .section = "run", .field = "fusion", .kind = CS_SETTING_CHOICE, CHOICES(cs_fusion_names),
      .default_value = "full", .help = "fusion policy"}, FIELD(fusion)},
    {{.name = "dtype", .section = "run", .field = "dtype", .kind = CS_SETTING_CHOICE, CHOICES(dtype_names),
      .default_value = "f32", .help = "floating-point type of the state and arithmetic"}, FIELD(dtype)},
    {{.name = "math", .section = "run", .field = "math", .kind = CS_SETTING_CHOICE, CHOICES(math_names),
      .default_value = "exact",
      .help = "f64's sin, cos, exp...: glibc's (Gymnasium's bits) or cartsim's vectorized ones (docs/math.md's error bounds)"},
     FIELD(math)},
    {{.name = "autoreset", .section = "env", .field = "autoreset", .kind = CS_SETTING_CHOICE, CHOICES(autoreset_names),
      .default_value = "next_step", .help = "auto-reset convention"}, FIELD(autoreset)},
    {{.name = "strict", .section = "run", .field = "strict", .kind = CS_SETTING_BOOL, CHOICES(bool_names),
      .default_value = "false",
      .help = "a NaN or infinite state or reward, or an index out of range, is an error naming the environment "
              "and step"},
     FIELD(strict)},
    {{.name = "persistent", .section = "run", .field = "persistent", .kind = CS_SETTING_BOOL, CHOICES(bool_names),
      .default_value = "true", .help = "fusion full: a rollout is one launch",
      .help_off = "fusion full: one launch per --unroll steps (the paper's XLA loop)"}, FIELD(persistent)},
    {{.name = "cc_timeout", .section = "run", .field = "cc_timeout_s", .kind = CS_SETTING_SECONDS, .metavar = "SECONDS",
      .max = CS_MAX_CC_TIMEOUT_S, .default_value = STRING(CS_CC_TIMEOUT_S_DEFAULT),
      .help = "the C compiler's time limit; past it the run fails (exit 1)"}, FIELD(cc_timeout_s)},
    {{.name = "cache_max_mb", .section = "run", .field = "cache_max_mb", .kind = CS_SETTING_INT, .metavar = "MB",
      .min = 0, .max = CS_MAX_CACHE_MAX_MB, .default_value = "0",
      .default_note = "$CARTSIM_CACHE_MAX_MB, else " STRING(CS_CACHE_MAX_MB_DEFAULT),
      .help = "the kernel cache's size bound; the least recently used entries go first"}, FIELD(cache_max_mb)},
    {{.name = "no_cache", .section = "run", .field = "no_cache", .kind = CS_SETTING_BOOL, CHOICES(bool_names),
      .default_value = "false", .help = "compile afresh, neither reading nor writing the kernel cache"},
     FIELD(no_cache)},
    {{.name = "tier", .section = "run", .field = "tier", .kind = CS_SETTING_BOOL, CHOICES(bool_names),
      .default_value = "true",
      .help = "cpu, a kernel not in the cache: run a quick -Og build at once, the optimized one swapped in when built",
      .help_off = "cpu: wait for the optimized kernel before the first step"}, FIELD(tier)},
    {{.name = "param", .section = "params", .field = "params", .kind = CS_SETTING_LIST,
      .metavar = "NAME=VALUE|NAME=LO:HI",
      .help = "override a parameter, LO:HI draws it per environment (repeatable; a file's [params] section)"},
     FIELD(params)},
};
#undef FIELD
#undef CHOICES
#undef STRING
#undef STRING_OF
#define N_SETTINGS (sizeof settings / sizeof settings[0])

/* [run] keys the program reads (cs_config_file_get), after the settings' own. */
static const char *const run_program_keys[] = {"steps", "seed"};

size_t cs_config_setting_count(void) { return N_SETTINGS; }

cs_status cs_config_setting_at(size_t i, cs_setting_info *out)
{
    if (!out || i >= N_SETTINGS)
        return CS_ERR_ARGUMENT;
    *out = settings[i].info;
    if (!out->key && out->kind != CS_SETTING_LIST)
        out->key = out->name;
    return CS_OK;
}

static const cfg_setting *find_setting(const char *name)
{
    for (size_t i = 0; i < N_SETTINGS; i++)
        if (strcmp(settings[i].info.name, name) == 0)
            return &settings[i];
    return NULL;
}

/* The setting a file's KEY in [SECTION] sets (not [env] name/path, not [params]). */
static const cfg_setting *find_key(const char *section, const char *key)
{
    for (size_t i = 0; i < N_SETTINGS; i++) {
        const cs_setting_info *in = &settings[i].info;
        if (!in->key && in->section && strcmp(in->section, section) == 0 && strcmp(in->name, key) == 0)
            return &settings[i];
    }
    return NULL;
}

/* "a, b, c": the names of the settings (section NULL: all of them; else
 * that section's keys that are their names) */
static void list_names(const char *section, char *out, size_t size)
{
    out[0] = 0;
    for (size_t i = 0; i < N_SETTINGS; i++) {
        const cs_setting_info *in = &settings[i].info;
        if (!section || (!in->key && in->kind != CS_SETTING_LIST && strcmp(in->section, section) == 0)) {
            strncat(out, *out ? ", " : "", size - strlen(out) - 1);
            strncat(out, in->name, size - strlen(out) - 1);
        }
    }
}

static int64_t get_int(const cs_config *cfg, const cfg_setting *st)
{
    const char *p = (const char *)cfg + st->offset;
    if (st->size == sizeof(int64_t)) {
        int64_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    if (st->size == sizeof(bool)) {
        bool b;
        memcpy(&b, p, sizeof b);
        return b;
    }
    int v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void put_int(cs_config *cfg, const cfg_setting *st, int64_t v)
{
    char *p = (char *)cfg + st->offset;
    if (st->size == sizeof(int64_t)) {
        memcpy(p, &v, sizeof v);
    } else if (st->size == sizeof(bool)) {
        bool b = v != 0;
        memcpy(p, &b, sizeof b);
    } else {
        int i = (int)v;   /* an int or an enum */
        memcpy(p, &i, sizeof i);
    }
}

static double get_seconds(const cs_config *cfg, const cfg_setting *st)
{
    double s;
    memcpy(&s, (const char *)cfg + st->offset, sizeof s);
    return s;
}

cs_status cs_config_check(const cs_config *cfg, char *err, size_t size)
{
    for (size_t i = 0; i < N_SETTINGS; i++) {
        const cfg_setting *st = &settings[i];
        const cs_setting_info *in = &st->info;
        if (in->kind == CS_SETTING_SECONDS) {
            double s = get_seconds(cfg, st);
            if (!(s >= 0 && s <= (double)in->max))
                return cs_say(err, size, CS_ERR_ARGUMENT, "%s must be from 0 (%s s) to %" PRId64 " seconds, not %s",
                              in->field, in->default_value, in->max, cs_shortest(s, (char[CS_REPR_MAX]){0}));
            continue;
        }
        if (in->kind != CS_SETTING_INT)
            continue;
        int64_t v = get_int(cfg, st);
        /* The note says what the default means; said here when it is the lowest value. */
        const char *lo_means = in->default_note && in->min == 0 ? in->default_note : NULL;
        if (v < in->min || v > in->max)
            return cs_say(err, size, CS_ERR_ARGUMENT,
                          "%s must be between %" PRId64 "%s%s%s and %" PRId64 ", not %" PRId64,
                          in->field, in->min, lo_means ? " (" : "", lo_means ? lo_means : "", lo_means ? ")" : "",
                          in->max, v);
    }
    return CS_OK;
}

void cs_config_init(cs_config *cfg)
{
    if (!cfg)
        return;
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < N_SETTINGS; i++)
        if (settings[i].info.default_value)
            cs_config_set(cfg, settings[i].info.name, settings[i].info.default_value, NULL, 0);
}

cs_status cs_config_get(const cs_config *cfg, const char *name, char *buf, size_t size)
{
    if (!cfg || !name || !buf || !size)
        return CS_ERR_ARGUMENT;
    buf[0] = 0;
    const cfg_setting *st = find_setting(name);
    if (!st)
        return CS_ERR_NOT_FOUND;
    const cs_setting_info *in = &st->info;
    int n = 0;
    switch (in->kind) {
    case CS_SETTING_TEXT:
        n = snprintf(buf, size, "%s", cfg->env ? cfg->env : "");
        break;
    case CS_SETTING_INT:
        n = snprintf(buf, size, "%" PRId64, get_int(cfg, st));
        break;
    case CS_SETTING_SECONDS: {   /* 0: the default, for a cs_config that was zeroed, not initialized */
        double s = get_seconds(cfg, st);
        n = s > 0 || !in->default_value ? snprintf(buf, size, "%s", cs_shortest(s, (char[CS_REPR_MAX]){0})) : snprintf(buf, size, "%s", in->default_value);
        break;
    }
    case CS_SETTING_CHOICE:
    case CS_SETTING_BOOL: {
        int64_t k = get_int(cfg, st);
        n = snprintf(buf, size, "%s", k >= 0 && k < in->n_choices ? in->choices[k] : "?");
        break;
    }
    case CS_SETTING_REAL:   /* the trainers' kind (train/settings.c): none here */
        return CS_ERR_ARGUMENT;
    case CS_SETTING_LIST:
        for (int k = 0; k < cfg->n_params && k < CS_MAX_PARAM_OVERRIDES; k++) {
            size_t used = strlen(buf);
            n = (int)used + snprintf(buf + used, size - used, "%s%s", k ? " " : "", cfg->params[k]);
            if ((size_t)n >= size)
                break;
        }
        break;
    }
    return n >= 0 && (size_t)n < size ? CS_OK : CS_ERR_LIMIT;
}

/* ---- one setting ---- */

static cs_status int_setting(const char *value, int64_t lo, int64_t hi, int64_t *out, char *err, size_t size)
{
    switch (cs_num_i64(value, lo, hi, out)) {
    case CS_NUM_OK:
        return CS_OK;
    case CS_NUM_SYNTAX:
        return cs_say(err, size, CS_ERR_ARGUMENT, "'%s' is not an integer", value);
    default:
        return cs_say(err, size, CS_ERR_ARGUMENT, "'%s' is out of range (%" PRId64 " to %" PRId64 ")", value, lo, hi);
    }
}

/* value among names[0, n): its index in *out. */
static cs_status choice_setting(const char *value, const char *const *names, int n, int *out, char *err,
                                size_t size)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], value) == 0) {
            *out = i;
            return CS_OK;
        }
    char list[128] = "";
    for (int i = 0; i < n; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, names[i], sizeof list - strlen(list) - 1);
    }
    return cs_say(err, size, CS_ERR_ARGUMENT, "'%s' is not one of %s", value, list);
}

cs_status cs_config_set(cs_config *cfg, const char *name, const char *value, char *err, size_t err_size)
{
    char tmp[1];
    if (!err || !err_size) {
        err = tmp;
        err_size = sizeof tmp;
    }
    err[0] = 0;   /* "" on success, as every call without a handle */
    if (!cfg || !name || !value)
        return cs_say(err, err_size, CS_ERR_ARGUMENT, "cs_config_set: NULL argument");

    const cfg_setting *set = find_setting(name);
    if (!set) {
        char list[256];
        list_names(NULL, list, sizeof list);
        return cs_say(err, err_size, CS_ERR_NOT_FOUND, "no setting named '%s' (%s)", name, list);
    }
    const cs_setting_info *in = &set->info;
    int64_t n = 0;
    int k = 0;
    cs_status st = CS_OK;
    switch (in->kind) {
    case CS_SETTING_TEXT:
        if (!*value)
            return cs_say(err, err_size, CS_ERR_ARGUMENT, "'' is not an environment name");
        cfg->env = value;
        return CS_OK;
    case CS_SETTING_INT:
        if ((st = int_setting(value, in->min, in->max, &n, err, err_size)))
            return st;
        put_int(cfg, set, n);
        return CS_OK;
    case CS_SETTING_SECONDS: {
        double s;
        if (!cs_num_real(value, &s) || !(s > 0) || s > (double)in->max)
            return cs_say(err, err_size, CS_ERR_ARGUMENT, "'%s' is not a time in seconds (0 < s <= %" PRId64 ")",
                          value, in->max);
        memcpy((char *)cfg + set->offset, &s, sizeof s);
        return CS_OK;
    }
    case CS_SETTING_CHOICE:
    case CS_SETTING_BOOL:
        if ((st = choice_setting(value, in->choices, in->n_choices, &k, err, err_size)))
            return st;
        put_int(cfg, set, k);
        return CS_OK;
    case CS_SETTING_LIST: {
        if (cfg->n_params < 0 || cfg->n_params >= CS_MAX_PARAM_OVERRIDES)
            return cs_say(err, err_size, CS_ERR_LIMIT, "more than %d overrides", CS_MAX_PARAM_OVERRIDES);
        /* The parser's own reading of overrides; whether NAME exists is
         * known only once the environment is parsed (cs_env_open). */
        cs_param_override ov;
        char msg[256];
        if (cs_parse_override(value, &ov, msg, sizeof msg))
            return cs_say(err, err_size, CS_ERR_ARGUMENT, "%s", msg);
        cfg->params[cfg->n_params++] = value;
        return CS_OK;
    }
    case CS_SETTING_REAL:   /* the trainers' kind: none here */
        break;
    }
    return cs_say(err, err_size, CS_ERR_ARGUMENT, "cs_config_set: internal error");
}

/* ---- files ---- */

struct cs_config_file {
    cs_config_entry *entries;
    size_t n_entries, cap_entries;
    char **strings;             /* everything entries and the loaded cs_config point to */
    size_t n_strings, cap_strings;
};

typedef enum { SEC_RUN, SEC_ENV, SEC_PARAMS, SEC_AGENT, SEC_TRAIN, SEC_VIEW, SEC_COUNT } section_id;

static const char *const section_names[SEC_COUNT] = {"run", "env", "params", "agent", "train", "view"};


typedef struct {
    cs_config_file *f;
    cs_config *cfg;
    const char *path;
    const char *text;           /* the whole file, NUL-terminated */
    size_t len, pos;            /* the reader's position */
    int line;                   /* the line the reader handed out last */
    section_id section;         /* of that line; SEC_COUNT before the first header */
    int section_line[SEC_COUNT];
    cs_status status;
    int err_line;
    char *err;
    size_t err_size;
} load_ctx;

static int fail_at(load_ctx *c, int line, cs_status st, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The first failure is kept; returns 0 (what inih's callbacks return for
 * an error). */
static int fail_at(load_ctx *c, int line, cs_status st, const char *fmt, ...)
{
    if (c->status != CS_OK)
        return 0;
    char msg[768], shown[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->err, c->err_size, "%s:%d: %s", c->path, line, cs_escape(msg, shown, sizeof shown));
    c->status = st;
    c->err_line = line;
    return 0;
}

static char *keep(cs_config_file *f, const char *s, size_t n)
{
    if (f->n_strings == f->cap_strings) {
        size_t cap = f->cap_strings ? 2 * f->cap_strings : 16;
        char **p = realloc(f->strings, cap * sizeof *p);
        if (!p)
            return NULL;
        f->strings = p;
        f->cap_strings = cap;
    }
    char *copy = malloc(n + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, n);
    copy[n] = 0;
    f->strings[f->n_strings++] = copy;
    return copy;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

static bool in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, list[i]) == 0)
            return true;
    return false;
}

/* "[name]", then nothing but spaces or a comment. */
static int section_line(load_ctx *c, const char *p, const char *end)
{
    const char *close = memchr(p, ']', (size_t)(end - p));
    if (!close)
        return fail_at(c, c->line, CS_ERR_PARSE, "section header without its ']'");
    const char *rest = close + 1;
    while (rest < end && is_space(*rest))
        rest++;
    if (rest < end && *rest != ';' && *rest != '#')
        return fail_at(c, c->line, CS_ERR_PARSE, "text after the section header: '%.*s'", (int)(end - rest), rest);
    const char *name = p + 1;
    size_t n = (size_t)(close - name);
    for (int s = 0; s < SEC_COUNT; s++)
        if (strlen(section_names[s]) == n && memcmp(section_names[s], name, n) == 0) {
            if (c->section_line[s])
                return fail_at(c, c->line, CS_ERR_PARSE, "section [%s] appears twice (first at line %d)",
                               section_names[s], c->section_line[s]);
            c->section_line[s] = c->line;
            c->section = (section_id)s;
            return 1;
        }
    return fail_at(c, c->line, CS_ERR_PARSE, "unknown section [%.*s] (sections: run, env, params, agent, train, view)",
                   (int)n, name);
}

/* inih's fgets: one line of the file per call, checked first. Comments and
 * blank lines reach inih as empty lines, so they may be of any length. */
static char *reader(char *str, int num, void *user)
{
    load_ctx *c = user;
    if (c->status != CS_OK || c->pos >= c->len)
        return NULL;
    const char *s = c->text + c->pos;
    const char *nl = memchr(s, '\n', c->len - c->pos);
    size_t n = nl ? (size_t)(nl - s) : c->len - c->pos;
    c->pos += n + (nl ? 1 : 0);
    c->line++;

    const char *end = s + n, *p = s;
    while (p < end && is_space(*p))
        p++;
    if (p == end || *p == ';' || *p == '#') {
        strcpy(str, "\n");
        return str;
    }
    if (p > s) {
        fail_at(c, c->line, CS_ERR_PARSE,
                "indented line (inih would join it to the value above): start keys and sections at the "
                "beginning of the line");
        return NULL;
    }
    if (*p == '[') {
        if (!section_line(c, p, end))
            return NULL;
        snprintf(str, (size_t)num, "[%s]\n", section_names[c->section]);
        return str;
    }
    if (c->section == SEC_COUNT) {
        fail_at(c, c->line, CS_ERR_PARSE, "'%.*s' comes before any [section]", (int)(end - p), p);
        return NULL;
    }
    size_t key_len = strcspn(p, "=:\n");
    const char *why = p + key_len >= end ? "expected 'key = value', a [section] or a comment"
                      : key_len == 0     ? "a value without a key"
                                         : NULL;
    if (why) {
        fail_at(c, c->line, CS_ERR_PARSE, "%s", why);
        return NULL;
    }
    if (n + 2 > (size_t)num) {
        fail_at(c, c->line, CS_ERR_LIMIT, "line longer than %d characters", num - 2);
        return NULL;
    }
    memcpy(str, s, n);
    str[n] = '\n';
    str[n + 1] = 0;
    return str;
}

static const cs_config_entry *find_entry(const cs_config_file *f, const char *section, const char *key)
{
    for (size_t i = 0; i < f->n_entries; i++)
        if (strcmp(f->entries[i].section, section) == 0 && strcmp(f->entries[i].key, key) == 0)
            return &f->entries[i];
    return NULL;
}

/* Applies a value through cs_config_set; the message names the file's key. */
static int apply(load_ctx *c, cs_config_entry *e, const char *setting, const char *value)
{
    char msg[512];
    cs_status st = cs_config_set(c->cfg, setting, value, msg, sizeof msg);
    if (st != CS_OK)
        return fail_at(c, e->line, st == CS_ERR_NOT_FOUND ? CS_ERR_ARGUMENT : st, "%s%s: %s",
                       strcmp(e->section, "params") == 0 ? "[params] " : "", e->key, msg);
    e->applied = true;
    return 1;
}

/* [env] path: relative to the configuration file's folder. */
static const char *env_path(load_ctx *c, const char *value)
{
    const char *slash = strrchr(c->path, '/');
    if (value[0] == '/' || !slash)
        return keep(c->f, value, strlen(value));
    size_t dir = (size_t)(slash - c->path) + 1, n = strlen(value);
    char *s = malloc(dir + n + 1);
    if (!s)
        return NULL;
    memcpy(s, c->path, dir);
    memcpy(s + dir, value, n + 1);
    const char *kept = keep(c->f, s, dir + n);
    free(s);
    return kept;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    load_ctx *c = user;
    if (c->status != CS_OK)
        return 0;
    int line = c->line;
    const cs_config_entry *first = find_entry(c->f, section, name);
    if (first)
        return fail_at(c, line, CS_ERR_PARSE, "duplicate key '%s' in [%s] (first at line %d)", name, section,
                       first->line);
    cs_config_file *f = c->f;
    if (f->n_entries == f->cap_entries) {
        size_t cap = f->cap_entries ? 2 * f->cap_entries : 16;
        cs_config_entry *p = realloc(f->entries, cap * sizeof *p);
        if (!p)
            return fail_at(c, line, CS_ERR_NOMEM, "out of memory");
        f->entries = p;
        f->cap_entries = cap;
    }
    cs_config_entry e = {section_names[c->section], keep(f, name, strlen(name)), keep(f, value, strlen(value)),
                         line, false};
    if (!e.key || !e.value)
        return fail_at(c, line, CS_ERR_NOMEM, "out of memory");
    if (!*e.value)
        return fail_at(c, line, CS_ERR_PARSE, "'%s' has no value", name);
    f->entries[f->n_entries] = e;
    cs_config_entry *ep = &f->entries[f->n_entries++];

    switch (c->section) {
    case SEC_RUN: {
        if (find_key("run", name))
            return apply(c, ep, name, ep->value);
        if (in_list(name, run_program_keys, sizeof run_program_keys / sizeof run_program_keys[0]))
            return 1;
        char list[256];
        list_names("run", list, sizeof list);
        return fail_at(c, line, CS_ERR_PARSE, "unknown key '%s' in [run] (keys: %s, steps, seed)", name, list);
    }
    case SEC_ENV:
        if (strcmp(name, "name") == 0 || strcmp(name, "path") == 0) {
            const cs_config_entry *other = find_entry(f, "env", name[0] == 'n' ? "path" : "name");
            if (other)
                return fail_at(c, line, CS_ERR_PARSE, "[env] has both name and path (the other at line %d)",
                               other->line);
            if (name[0] == 'n') {
                if (strchr(ep->value, '/') || ends_with(ep->value, ".env"))
                    return fail_at(c, line, CS_ERR_ARGUMENT, "name: '%s' is a file: write path = %s", ep->value,
                                   ep->value);
                return apply(c, ep, "env", ep->value);
            }
            if (!ends_with(ep->value, ".env"))
                return fail_at(c, line, CS_ERR_ARGUMENT, "path: '%s' does not end in .env", ep->value);
            const char *path = env_path(c, ep->value);
            if (!path)
                return fail_at(c, line, CS_ERR_NOMEM, "out of memory");
            return apply(c, ep, "env", path);
        }
        if (find_key("env", name))
            return apply(c, ep, name, ep->value);
        char list[256];
        list_names("env", list, sizeof list);
        return fail_at(c, line, CS_ERR_PARSE, "unknown key '%s' in [env] (keys: name, path, %s)", name, list);
    case SEC_PARAMS: {
        size_t n = strlen(name), v = strlen(ep->value);
        char *s = malloc(n + v + 2);
        if (!s)
            return fail_at(c, line, CS_ERR_NOMEM, "out of memory");
        memcpy(s, name, n);
        s[n] = '=';
        memcpy(s + n + 1, ep->value, v + 1);
        const char *kept = keep(f, s, n + v + 1);
        free(s);
        if (!kept)
            return fail_at(c, line, CS_ERR_NOMEM, "out of memory");
        return apply(c, ep, "param", kept);
    }
    default:
        return 1;   /* [agent], [train], [view]: the program's */
    }
}

static cs_status read_file(const char *path, char **text, size_t *len, char *err, size_t err_size)
{
    *text = NULL;
    *len = 0;
    cs_status open_st;
    char why[256];
    FILE *fp = cs_fopen_regular(path, &open_st, why, sizeof why);
    if (!fp)
        return cs_say(err, err_size, open_st, "%s: cannot open: %s", path, why);
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    cs_status st = buf ? CS_OK : CS_ERR_NOMEM;
    while (st == CS_OK) {
        if (n + 1 >= cap) {
            if (cap > MAX_FILE_BYTES) {
                st = cs_say(err, err_size, CS_ERR_LIMIT, "%s: larger than %d bytes: not a configuration file", path,
                         MAX_FILE_BYTES);
                break;
            }
            char *p = realloc(buf, 2 * cap);
            if (!p) {
                st = CS_ERR_NOMEM;
                break;
            }
            buf = p;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, fp);
        n += got;
        if (got == 0) {
            if (ferror(fp))
                st = cs_say(err, err_size, CS_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
            break;
        }
    }
    fclose(fp);
    if (st == CS_ERR_NOMEM)
        cs_say(err, err_size, st, "%s: out of memory", path);
    if (st != CS_OK) {
        free(buf);
        return st;
    }
    buf[n] = 0;
    *text = buf;
    *len = n;
    return CS_OK;
}

void cs_config_file_free(cs_config_file *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n_strings; i++)
        free(f->strings[i]);
    free(f->strings);
    free(f->entries);
    free(f);
}

size_t cs_config_file_count(const cs_config_file *f) { return f ? f->n_entries : 0; }

const cs_config_entry *cs_config_file_entry(const cs_config_file *f, size_t i)
{
    return f && i < f->n_entries ? &f->entries[i] : NULL;
}

const cs_config_entry *cs_config_file_get(const cs_config_file *f, const char *section, const char *key)
{
    return f && section && key ? find_entry(f, section, key) : NULL;
}

cs_status cs_config_load(cs_config *cfg, const char *path, cs_config_file **file, char *err, size_t err_size)
{
    char tmp[1];
    if (!err || !err_size) {
        err = tmp;
        err_size = sizeof tmp;
    }
    err[0] = 0;
    if (file)
        *file = NULL;
    if (!cfg || !path || !file)
        return cs_say(err, err_size, CS_ERR_ARGUMENT, "cs_config_load: NULL argument");
#ifndef CS_HAVE_INIH
    return cs_say(err, err_size, CS_ERR_UNAVAILABLE,
               "%s: configuration files need inih, which this build lacks (apt-get install libinih-dev, then rebuild)",
               path);
#else

    char *text;
    size_t len;
    cs_status st = read_file(path, &text, &len, err, err_size);
    if (st != CS_OK)
        return st;
    load_ctx c = {.cfg = cfg, .path = path, .text = text, .len = len, .section = SEC_COUNT,
                  .err = err, .err_size = err_size};
    /* A NUL would end inih's line early: the rest of it unread. */
    const char *nul = memchr(text, 0, len);
    if (nul) {
        int line = 1;
        for (const char *p = text; p < nul; p++)
            line += *p == '\n';
        fail_at(&c, line, CS_ERR_PARSE, "a NUL byte: not a text file");
        free(text);
        return c.status;
    }
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)   /* a UTF-8 byte order mark */
        c.pos = 3;
    if (!(c.f = calloc(1, sizeof *c.f))) {
        free(text);
        return cs_say(err, err_size, CS_ERR_NOMEM, "%s: out of memory", path);
    }
    int rc = ini_parse_stream(reader, &c, handler, &c);
    /* inih's own complaint (a line it could not split) unless ours came first. */
    if (rc > 0 && (c.status == CS_OK || rc < c.err_line)) {
        c.status = CS_OK;
        fail_at(&c, rc, CS_ERR_PARSE, "expected 'key = value', a [section] or a comment");
    } else if (rc < 0 && c.status == CS_OK) {
        fail_at(&c, c.line, CS_ERR_NOMEM, "out of memory");
    }
    free(text);
    if (c.status != CS_OK) {
        cs_config_file_free(c.f);
        return c.status;
    }
    *file = c.f;
    return CS_OK;
#endif
}
