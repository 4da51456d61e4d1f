/* `cartsim replay`: recompute a trajectory recorded in the golden CSV format
 * (../shared/golden/README.md) and print it in the same format.
 *
 * Everything is read, checked and computed before the first byte goes to
 * stdout, so a bad file never leaves half a CSV behind. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jit.h"
#include "regular_file.h"

void cli_replay_defaults(cli_args *a)
{
    a->cfg.dtype = CS_DTYPE_F64;    /* the recordings are double precision */
}

/* The parsed file. Columns: episode, t, actions [a0, s0), state [s0, ns0),
 * next state [ns0, obs0), observation [obs0, reward), reward, terminated,
 * truncated, then extra columns (checked for count only, left out). */
typedef struct {
    const char *path;
    char *text;                 /* the whole file; header names point into it */
    char **names;
    int ncols;
    int n_action, n_state, n_obs;
    int s0, ns0, obs0, reward;  /* column indices */
    size_t nrows;
    double *v;                  /* [nrows][ncols]; integer columns as doubles too */
    long *line;                 /* [nrows] line in the file, for messages */
} table;

static void table_free(table *tb)
{
    free(tb->text);
    free(tb->names);
    free(tb->v);
    free(tb->line);
}

static double *cell(const table *tb, size_t row, int col)
{
    return &tb->v[row * (size_t)tb->ncols + (size_t)col];
}

static int file_error(const table *tb, long line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int file_error(const table *tb, long line, const char *fmt, ...)
{
    char msg[600], shown[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cs_escape(msg, shown, sizeof shown);
    if (line > 0)
        return cli_error(CLI_EXIT_USAGE, "%s:%ld: %s", tb->path, line, shown);
    return cli_error(CLI_EXIT_USAGE, "%s: %s", tb->path, shown);
}

static int read_file(table *tb, size_t *len_out)
{
    cs_status open_st;
    char why[256];
    FILE *f = strcmp(tb->path, "-") == 0 ? stdin : cs_fopen_regular(tb->path, &open_st, why, sizeof why);
    if (!f)
        return cli_error(open_st == CS_ERR_NOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE, "cannot open %s: %s", tb->path, why);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    int rc = 0;
    while (buf) {
        if (cap - len < 2) {
            char *bigger = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0)
            break;
    }
    if (!buf)
        rc = cli_error(CLI_EXIT_FAIL, "out of memory reading %s", tb->path);
    else if (ferror(f))
        rc = cli_error(CLI_EXIT_USAGE, "cannot read %s: %s", tb->path, strerror(errno));
    if (f != stdin)
        fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[len] = 0;
    tb->text = buf;
    *len_out = len;
    return 0;
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Cuts one line at ','; returns the field count (at most max). */
static int split(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n < max)
            fields[n] = p;
        n++;
        char *comma = strchr(p, ',');
        if (!comma)
            break;
        *comma = 0;
        p = comma + 1;
    }
    return n;
}

/* Next line of the buffer, cut in place (a trailing '\r' dropped); NULL at the end. */
static char *next_line(char **cursor, char *end)
{
    char *p = *cursor;
    if (p >= end)
        return NULL;
    char *nl = memchr(p, '\n', (size_t)(end - p));
    char *stop = nl ? nl : end;
    *cursor = nl ? nl + 1 : end;
    if (stop > p && stop[-1] == '\r')
        stop--;
    *stop = 0;
    return p;
}

static int parse_header(table *tb, char *line)
{
    int n = 1;
    for (const char *p = line; *p; p++)
        n += *p == ',';
    tb->names = malloc(sizeof *tb->names * (size_t)n);
    if (!tb->names)
        return cli_error(CLI_EXIT_FAIL, "out of memory");
    tb->ncols = split(line, tb->names, n);
    char **c = tb->names;
    const char *expected = "episode,t,<action columns>,s_<state>...,ns_<state>...,obs_<obs>...,reward,terminated,"
                           "truncated";
    if (n < 2 || strcmp(c[0], "episode") != 0 || strcmp(c[1], "t") != 0)
        return file_error(tb, 1, "the header must start with episode,t (expected %s)", expected);
    int i = 2;
    while (i < n && !starts_with(c[i], "s_"))
        i++;
    tb->n_action = i - 2;
    tb->s0 = i;
    if (tb->n_action == 0)
        return file_error(tb, 1, "no action column between t and the s_ columns (expected %s)", expected);
    if (i == n)
        return file_error(tb, 1, "no s_ columns (expected %s)", expected);
    while (i < n && starts_with(c[i], "s_"))
        i++;
    tb->n_state = i - tb->s0;
    tb->ns0 = i;
    for (int k = 0; k < tb->n_state; k++, i++)
        if (i >= n || !starts_with(c[i], "ns_") || strcmp(c[i] + 3, c[tb->s0 + k] + 2) != 0)
            return file_error(tb, 1, "expected column 'ns_%s' after the s_ columns, found '%s'", c[tb->s0 + k] + 2,
                              i < n ? c[i] : "end of line");
    tb->obs0 = i;
    while (i < n && starts_with(c[i], "obs_"))
        i++;
    tb->n_obs = i - tb->obs0;
    if (tb->n_obs == 0)
        return file_error(tb, 1, "expected obs_ columns after the ns_ columns, found '%s'",
                          i < n ? c[i] : "end of line");
    tb->reward = i;
    static const char *const tail[] = {"reward", "terminated", "truncated"};
    for (int k = 0; k < 3; k++, i++)
        if (i >= n || strcmp(c[i], tail[k]) != 0)
            return file_error(tb, 1, "expected column '%s' after the %s columns, found '%s'", tail[k],
                              k == 0 ? "obs_" : tail[k - 1], i < n ? c[i] : "end of line");
    return 0;
}

static int parse_rows(table *tb, char *cursor, char *end)
{
    size_t cap = 0;
    char **fields = malloc(sizeof *fields * (size_t)tb->ncols);
    if (!fields)
        return cli_error(CLI_EXIT_FAIL, "out of memory");
    int rc = 0;
    long lineno = 1;
    int64_t prev_episode = -1, prev_t = -1;
    char *line;
    while (!rc && (line = next_line(&cursor, end))) {
        lineno++;
        if (!*line && cursor >= end)
            break;   /* the newline that ends the last line */
        int n = split(line, fields, tb->ncols);
        if (n != tb->ncols) {
            rc = file_error(tb, lineno, "%d fields, but the header has %d columns", n, tb->ncols);
            break;
        }
        if (tb->nrows == cap) {
            size_t ncap = cap ? cap * 2 : 1024;
            double *v = realloc(tb->v, ncap * (size_t)tb->ncols * sizeof *v);
            if (v)
                tb->v = v;
            long *l = realloc(tb->line, ncap * sizeof *l);
            if (l)
                tb->line = l;
            if (!v || !l) {
                rc = cli_error(CLI_EXIT_FAIL, "out of memory reading %s", tb->path);
                break;
            }
            cap = ncap;
        }
        size_t r = tb->nrows;
        tb->line[r] = lineno;
        int64_t episode, t;
        if (cs_num_i64(fields[0], 0, INT64_MAX, &episode) != CS_NUM_OK) {
            rc = file_error(tb, lineno, "episode '%s' is not a non-negative integer", fields[0]);
            break;
        }
        if (cs_num_i64(fields[1], 0, INT32_MAX - 1, &t) != CS_NUM_OK) {
            rc = file_error(tb, lineno, "t '%s' is not a step index", fields[1]);
            break;
        }
        if (episode != prev_episode) {
            if (episode < prev_episode)
                rc = file_error(tb, lineno, "episode %" PRId64 " after episode %" PRId64
                                " (episodes must come in increasing order)", episode, prev_episode);
            else if (t != 0)
                rc = file_error(tb, lineno, "episode %" PRId64 " starts at t = %" PRId64 ", not 0", episode, t);
        } else if (t != prev_t + 1) {
            rc = file_error(tb, lineno, "t = %" PRId64 " follows t = %" PRId64 " (steps must be in order)", t,
                            prev_t);
        }
        if (rc)
            break;
        prev_episode = episode;
        prev_t = t;
        *cell(tb, r, 0) = (double)episode;
        *cell(tb, r, 1) = (double)t;
        for (int k = 2; k < tb->reward + 3 && !rc; k++) {
            double *out = cell(tb, r, k);
            if (k > tb->reward) {
                if (strcmp(fields[k], "0") != 0 && strcmp(fields[k], "1") != 0)
                    rc = file_error(tb, lineno, "%s '%s' is not 0 or 1", tb->names[k], fields[k]);
                *out = fields[k][0] == '1';
            } else if (!cs_num_real(fields[k], out)) {
                rc = file_error(tb, lineno, "%s '%s' is not a number", tb->names[k], fields[k]);
            }
        }
        tb->nrows++;
    }
    free(fields);
    if (!rc && tb->nrows == 0)
        rc = file_error(tb, 0, "no data rows after the header");
    return rc;
}

/* tb->text, len bytes and a NUL after them, into the table. */
static int parse_text(table *tb, size_t len)
{
    if (len == 0)
        return file_error(tb, 0, "the file is empty");
    if (memchr(tb->text, 0, len))
        return file_error(tb, 0, "not a text file (it contains a NUL byte)");
    char *cursor = tb->text, *end = tb->text + len;
    char *header = next_line(&cursor, end);
    int rc = parse_header(tb, header);
    return rc ? rc : parse_rows(tb, cursor, end);
}

static int load(table *tb)
{
    size_t len = 0;
    int rc = read_file(tb, &len);
    return rc ? rc : parse_text(tb, len);
}

/* "x, x_dot, ..." of the environment, for messages. */
static void state_list(const cs_env_info *in, char *out, size_t size)
{
    size_t used = 0;
    out[0] = 0;
    for (unsigned k = 0; k < in->state_dim && used < size; k++)
        used += (size_t)snprintf(out + used, size - used, "%s%s", k ? ", " : "",
                                 in->state_names && in->state_names[k] ? in->state_names[k] : "?");
}

static int check_against_env(const table *tb, const cs_env_info *in)
{
    char names[400];
    state_list(in, names, sizeof names);
    bool match = (unsigned)tb->n_state == in->state_dim;
    for (int k = 0; match && k < tb->n_state; k++)
        match = in->state_names && in->state_names[k] && strcmp(tb->names[tb->s0 + k] + 2, in->state_names[k]) == 0;
    if (!match)
        return file_error(tb, 1, "the s_ columns do not match the state of %s (%s)", in->name, names);
    if ((unsigned)tb->n_obs != in->obs_dim)
        return file_error(tb, 1, "%d obs_ columns, but %s observes %u values", tb->n_obs, in->name, in->obs_dim);
    unsigned want = in->discrete ? 1 : in->action_dim;
    if ((unsigned)tb->n_action != want)
        return file_error(tb, 1, "%d action columns, but %s takes %u (%s)", tb->n_action, in->name, want,
                          in->discrete ? "one integer" : "floats");
    for (size_t r = 0; r < tb->nrows; r++)
        for (int k = 0; k < tb->n_action; k++) {
            double a = *cell(tb, r, 2 + k);
            if (in->discrete && !(a >= 0 && a < in->n_actions && a == (double)(int32_t)a))
                return file_error(tb, tb->line[r], "action %s is not one of 0..%u of %s",
                                  cs_shortest(a, (char[CS_REPR_MAX]){0}), in->n_actions - 1,
                                  in->name);
            if (!in->discrete && !(a - a == 0))
                return file_error(tb, tb->line[r], "action %g is not a finite number", a);
        }
    return 0;
}

int cli_replay_check(const char *data, size_t len, const cs_env_info *env)
{
    table tb = {.path = "<buffer>"};
    if (!(tb.text = malloc(len + 1)))
        return cli_error(CLI_EXIT_FAIL, "out of memory");
    if (len)
        memcpy(tb.text, data, len);
    tb.text[len] = 0;
    int rc = parse_text(&tb, len);
    if (!rc && env)
        rc = check_against_env(&tb, env);
    table_free(&tb);
    return rc;
}

/* What cartsim computed, row by row (the table's order). */
typedef struct {
    double *s, *ns;             /* [n_state][nrows] */
    float *obs;                 /* [n_obs][nrows] */
    double *reward;
    uint8_t *terminated, *truncated;
} results;

static void results_free(results *res)
{
    free(res->s);
    free(res->ns);
    free(res->obs);
    free(res->reward);
    free(res->terminated);
    free(res->truncated);
}

static bool results_alloc(results *res, const table *tb)
{
    size_t n = tb->nrows;
    res->s = calloc(n * (size_t)tb->n_state, sizeof *res->s);
    res->ns = calloc(n * (size_t)tb->n_state, sizeof *res->ns);
    res->obs = calloc(n * (size_t)tb->n_obs, sizeof *res->obs);
    res->reward = calloc(n, sizeof *res->reward);
    res->terminated = calloc(n, 1);
    res->truncated = calloc(n, 1);
    return res->s && res->ns && res->obs && res->reward && res->terminated && res->truncated;
}

/* Actions of `lanes` environments in the library's layout; lane e takes row
 * rows[e], or action 0 where rows[e] is SIZE_MAX. */
static void fill_actions(const table *tb, const cs_env_info *in, const size_t *rows, size_t lanes, void *buf)
{
    for (size_t e = 0; e < lanes; e++)
        for (int k = 0; k < tb->n_action; k++) {
            double a = rows[e] == SIZE_MAX ? 0 : *cell(tb, rows[e], 2 + k);
            if (in->discrete)
                ((int32_t *)buf)[e] = (int32_t)a;
            else
                ((float *)buf)[(size_t)k * lanes + e] = (float)a;
        }
}

/* Copies one step's outputs of lane e to row r. */
static void collect(cs_env *env, const table *tb, size_t lanes, const double *next, size_t e, size_t r,
                    results *res)
{
    const float *obs = cs_env_obs(env);
    for (int k = 0; k < tb->n_state; k++)
        res->ns[(size_t)k * tb->nrows + r] = next[(size_t)k * lanes + e];
    for (int k = 0; k < tb->n_obs; k++)
        res->obs[(size_t)k * tb->nrows + r] = obs[(size_t)k * lanes + e];
    res->reward[r] = cs_env_rewards(env)[e];
    res->terminated[r] = cs_env_terminated(env)[e] != 0;
    res->truncated[r] = cs_env_truncated(env)[e] != 0;
}

/* Every row stepped once from its own s_* and t. */
static cs_status per_step(cs_env *env, const cs_env_info *in, const table *tb, results *res, int *oom)
{
    size_t n = tb->nrows, ns = (size_t)tb->n_state;
    double *next = malloc(n * ns * sizeof *next);
    int32_t *steps = malloc(n * sizeof *steps);
    size_t *rows = malloc(n * sizeof *rows);
    void *actions = malloc(n * (in->discrete ? sizeof(int32_t) : sizeof(float) * (size_t)tb->n_action));
    cs_status st = CS_OK;
    if (!next || !steps || !rows || !actions) {
        *oom = 1;
        goto done;
    }
    for (size_t r = 0; r < n; r++) {
        for (size_t k = 0; k < ns; k++)
            res->s[k * n + r] = *cell(tb, r, tb->s0 + (int)k);
        steps[r] = (int32_t)*cell(tb, r, 1);
        rows[r] = r;
    }
    fill_actions(tb, in, rows, n, actions);
    if ((st = cs_env_set_state(env, res->s, steps)) != CS_OK || (st = cs_env_step(env, actions)) != CS_OK ||
        (st = cs_env_get_state(env, next)) != CS_OK)
        goto done;
    for (size_t r = 0; r < n; r++)
        collect(env, tb, n, next, r, r, res);
done:
    free(next);
    free(steps);
    free(rows);
    free(actions);
    return st;
}

/* One environment per episode, from its first row's state, on its own states. */
static cs_status open_loop(cs_env *env, const cs_env_info *in, const table *tb, size_t n_episodes, results *res,
                           int *oom)
{
    size_t n = tb->nrows, ns = (size_t)tb->n_state, E = n_episodes;
    size_t *first = malloc(E * sizeof *first), *len = calloc(E, sizeof *len), *rows = malloc(E * sizeof *rows);
    double *cur = malloc(E * ns * sizeof *cur);
    int32_t *steps = calloc(E, sizeof *steps);
    void *actions = malloc(E * (in->discrete ? sizeof(int32_t) : sizeof(float) * (size_t)tb->n_action));
    cs_status st = CS_OK;
    if (!first || !len || !rows || !cur || !steps || !actions) {
        *oom = 1;
        goto done;
    }
    size_t e = SIZE_MAX, longest = 0;
    for (size_t r = 0; r < n; r++) {
        if (*cell(tb, r, 1) == 0)
            first[++e] = r;
        if (++len[e] > longest)
            longest = len[e];
    }
    for (e = 0; e < E; e++)
        for (size_t k = 0; k < ns; k++)
            cur[k * E + e] = *cell(tb, first[e], tb->s0 + (int)k);
    if ((st = cs_env_set_state(env, cur, steps)) != CS_OK)
        goto done;
    for (size_t t = 0; t < longest; t++) {
        /* Episodes that have ended keep stepping with action 0; ignored. */
        for (e = 0; e < E; e++)
            rows[e] = t < len[e] ? first[e] + t : SIZE_MAX;
        for (e = 0; e < E; e++)
            if (rows[e] != SIZE_MAX)
                for (size_t k = 0; k < ns; k++)
                    res->s[k * n + rows[e]] = cur[k * E + e];
        fill_actions(tb, in, rows, E, actions);
        if ((st = cs_env_step(env, actions)) != CS_OK || (st = cs_env_get_state(env, cur)) != CS_OK)
            goto done;
        for (e = 0; e < E; e++)
            if (rows[e] != SIZE_MAX)
                collect(env, tb, E, cur, e, rows[e], res);
    }
done:
    free(first);
    free(len);
    free(rows);
    free(cur);
    free(steps);
    free(actions);
    return st;
}

static void format_output(cli_buf *b, const table *tb, const cs_env_info *in, const results *res)
{
    for (int k = 0; k < tb->reward + 3; k++) {
        cli_buf_str(b, tb->names[k]);
        cli_buf_str(b, k + 1 < tb->reward + 3 ? "," : "\n");
    }
    size_t n = tb->nrows;
    for (size_t r = 0; r < n && !b->failed; r++) {
        cli_buf_printf(b, "%.0f,%.0f", *cell(tb, r, 0), *cell(tb, r, 1));
        for (int k = 0; k < tb->n_action; k++) {
            double a = *cell(tb, r, 2 + k);
            if (in->discrete) {
                cli_buf_printf(b, ",%d", (int)a);
            } else {
                cli_buf_str(b, ",");
                cli_buf_repr(b, (double)(float)a);   /* what the environment was given */
            }
        }
        for (int k = 0; k < tb->n_state; k++) {
            cli_buf_str(b, ",");
            cli_buf_repr(b, res->s[(size_t)k * n + r]);
        }
        for (int k = 0; k < tb->n_state; k++) {
            cli_buf_str(b, ",");
            cli_buf_repr(b, res->ns[(size_t)k * n + r]);
        }
        for (int k = 0; k < tb->n_obs; k++) {
            cli_buf_str(b, ",");
            cli_buf_repr(b, (double)res->obs[(size_t)k * n + r]);
        }
        cli_buf_str(b, ",");
        cli_buf_repr(b, res->reward[r]);
        cli_buf_printf(b, ",%d,%d\n", res->terminated[r], res->truncated[r]);
    }
}

int cli_replay(cli_args *a)
{
    if (a->n_positional != 1)
        return cli_error(CLI_EXIT_USAGE, "replay needs one trajectory file (cartsim replay --env NAME FILE.csv)");
    table tb = {.path = a->positional[0]};
    int rc = load(&tb);
    if (rc) {
        table_free(&tb);
        return rc;
    }
    size_t n_episodes = 0;
    for (size_t r = 0; r < tb.nrows; r++)
        n_episodes += *cell(&tb, r, 1) == 0;
    size_t lanes = a->open_loop ? n_episodes : tb.nrows;
    if (lanes > INT32_MAX) {
        rc = cli_error(CLI_EXIT_USAGE, "%s: too many rows", tb.path);
        table_free(&tb);
        return rc;
    }

    a->cfg.num_envs = (int64_t)lanes;
    a->cfg.autoreset = CS_AUTORESET_DISABLED;   /* rows are independent; no restarts */
    cs_env *env = NULL;
    cs_status st = cs_env_open(&a->cfg, &env);
    cs_env_info info;
    results res = {0};
    cli_buf out = {0};
    int oom = 0;
    if (st != CS_OK) {
        rc = cli_lib_error(st, env ? cs_env_error(env) : "out of memory");
        goto done;
    }
    if ((st = cs_env_get_info(env, &info)) != CS_OK) {
        rc = cli_lib_error(st, cs_env_error(env));
        goto done;
    }
    if ((rc = check_against_env(&tb, &info)))
        goto done;
    cli_open_notices(&a->cfg, info.backend, info.dtype, info.notice);
    if (!results_alloc(&res, &tb)) {
        rc = cli_error(CLI_EXIT_FAIL, "out of memory");
        goto done;
    }
    /* Reset first: the library wants a started batch before set_state. */
    st = cs_env_reset(env, 0);
    if (st == CS_OK)
        st = a->open_loop ? open_loop(env, &info, &tb, n_episodes, &res, &oom) : per_step(env, &info, &tb, &res, &oom);
    if (st != CS_OK) {
        rc = cli_lib_error(st, cs_env_error(env));
        goto done;
    }
    if (oom) {
        rc = cli_error(CLI_EXIT_FAIL, "out of memory");
        goto done;
    }
    format_output(&out, &tb, &info, &res);
    if (cli_buf_print(&out) != CLI_EXIT_OK)
        rc = CLI_EXIT_FAIL;
done:
    cs_env_close(env);
    cli_buf_free(&out);
    results_free(&res);
    table_free(&tb);
    return rc;
}
