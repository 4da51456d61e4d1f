/* Policy files (docs/policy_format.md): a header naming the environment and
 * the architecture, one weight per line in the shortest decimal that reads
 * back exactly, and a checksum over all of it, so that a file for another
 * environment, another architecture, or a damaged one is refused. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents.h"
#include "jit.h"
#include "regular_file.h"
#include "status.h"

#define MAGIC "cartsim-policy 1"
#define FILE_MAX ((long)64 << 20)
#define WEIGHTS_MAX (1u << 22)

/* Over the names (with their terminating NULs) and each weight's bits,
 * least significant byte first whatever the machine's order. */
static uint64_t checksum(const char *env, const char *policy, unsigned n, const double *w)
{
    uint64_t h = CS_FNV1A_START;
    h = cs_fnv1a(h, env, strlen(env) + 1);
    h = cs_fnv1a(h, policy, strlen(policy) + 1);
    for (unsigned k = 0; k < n; k++) {
        uint64_t bits;
        memcpy(&bits, &w[k], sizeof bits);
        unsigned char b[8];
        for (int j = 0; j < 8; j++)
            b[j] = (unsigned char)(bits >> (8 * j));
        h = cs_fnv1a(h, b, 8);
    }
    return h;
}

static bool valid_name(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n >= max)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] <= ' ' || s[i] > '~')
            return false;
    return true;
}

/* Whether some environment (1 observation or more, 1 output or more) gives
 * the dense architecture `a` exactly n weights. The count grows by the first
 * layer's width per observation and by the last hidden width + 1 per output
 * (docs/policy_format.md), so one division per output count answers it. */
static bool count_possible(const cs_agent *a, unsigned long n)
{
    unsigned long base = cs_dense_count(a, 1, 0);
    unsigned long per_out = (a->n_hidden ? a->hidden[a->n_hidden - 1] : 1) + 1;
    for (unsigned long out = 1; base + per_out * out <= n; out++) {
        unsigned long per_obs = a->n_hidden ? a->hidden[0] : out;
        if ((n - base - per_out * out) % per_obs == 0)
            return true;
    }
    return false;
}

static void shortest(double v, char out[32])
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(out, 32, "%.*g", digits, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

cs_status cs_policy_save(const char *path, const char *env, const char *policy, unsigned n_weights,
                         const double *weights, char *error, size_t error_size)
{
    if (error && error_size)
        error[0] = 0;
    if (!path || !*path)
        return cs_say(error, error_size, CS_ERR_ARGUMENT, "no file name for the policy");
    if (!env || !policy || !valid_name(env, 64) || !valid_name(policy, 64))
        return cs_say(error, error_size, CS_ERR_ARGUMENT, "the environment and policy names must be 1 to 63 printable characters");
    if (n_weights > WEIGHTS_MAX || (n_weights && !weights))
        return cs_say(error, error_size, CS_ERR_ARGUMENT, "bad weights (%u of them)", n_weights);
    cs_agent agent;
    char why[256];
    if (cs_agent_parse(policy, &agent, why, sizeof why) || agent.kind != CS_AGENT_DENSE)
        return cs_say(error, error_size, CS_ERR_ARGUMENT, "'%s' is not a trained architecture (linear, mlp:H, mlp:HxH)",
                      policy);
    if (!count_possible(&agent, n_weights))
        return cs_say(error, error_size, CS_ERR_ARGUMENT,
                      "%u weights: no environment has a %s policy of that many (docs/policy_format.md)", n_weights,
                      policy);
    for (unsigned k = 0; k < n_weights; k++)
        if (!isfinite(weights[k]))
            return cs_say(error, error_size, CS_ERR_ARGUMENT, "weight %u is not finite", k);
    cs_output o;
    cs_status s = cs_output_begin(&o, path, 0666, error, error_size);
    if (s != CS_OK)
        return s;
    FILE *f = cs_output_stream(&o);
    if (!f) {
        cs_output_abort(&o);
        return cs_say(error, error_size, CS_ERR_NOMEM, "out of memory");
    }
    fprintf(f, "%s\n# %s: see docs/policy_format.md\nenv %s\npolicy %s\nweights %u\n", MAGIC,
            "a cartsim policy", env, policy, n_weights);
    for (unsigned k = 0; k < n_weights; k++) {
        char num[32];
        shortest(weights[k], num);
        fprintf(f, "%s\n", num);
    }
    fprintf(f, "checksum %016llx\n", (unsigned long long)checksum(env, policy, n_weights, weights));
    return cs_output_commit(&o, error, error_size);
}

typedef struct {
    const char *path;
    char *text, *at;
    unsigned line;
    char *error;
    size_t size;
} reader;

/* The next line that is not a comment, NUL-terminated in place; NULL at the end. */
static char *next_line(reader *r)
{
    while (*r->at) {
        char *line = r->at;
        char *nl = strchr(line, '\n');
        r->at = nl ? nl + 1 : line + strlen(line);
        if (nl)
            *nl = 0;
        r->line++;
        if (nl > line && nl[-1] == '\r')
            nl[-1] = 0;
        if (line[0] != '#')
            return line;
    }
    return NULL;
}

static cs_status damaged(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static cs_status damaged(reader *r, const char *fmt, ...)
{
    char msg[256], shown[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cs_say(r->error, r->size, CS_ERR_PARSE, "%s:%u: %s (not a cartsim policy file, or a damaged one)", r->path,
               r->line, cs_escape(msg, shown, sizeof shown));
}

/* "KEY VALUE": the value, or NULL. */
static const char *field(char *line, const char *key)
{
    size_t n = strlen(key);
    return line && strncmp(line, key, n) == 0 && line[n] == ' ' ? line + n + 1 : NULL;
}

static cs_status parse(reader *r, cs_policy_file *out)
{
    char *line = next_line(r);
    if (!line || strcmp(line, MAGIC) != 0)
        return damaged(r, "expected '%s' on the first line", MAGIC);
    const char *env = field(line = next_line(r), "env");
    if (!env || !valid_name(env, sizeof out->env))
        return damaged(r, "expected 'env NAME'");
    snprintf(out->env, sizeof out->env, "%s", env);
    const char *policy = field(line = next_line(r), "policy");
    cs_agent agent;
    char why[256];
    if (!policy || !valid_name(policy, sizeof out->policy))
        return damaged(r, "expected 'policy ARCHITECTURE'");
    if (cs_agent_parse(policy, &agent, why, sizeof why) || agent.kind != CS_AGENT_DENSE || agent.actor_critic)
        return damaged(r, "'%s' is not a trained architecture (linear, mlp:H, mlp:HxH)", policy);
    snprintf(out->policy, sizeof out->policy, "%s", policy);
    const char *count = field(line = next_line(r), "weights");
    char *end;
    errno = 0;
    unsigned long n = count ? strtoul(count, &end, 10) : 0;
    if (!count || *count < '0' || *count > '9' || *end || errno || n > WEIGHTS_MAX)
        return damaged(r, "expected 'weights N' with N from 0 to %u", WEIGHTS_MAX);
    if (!count_possible(&agent, n))
        return damaged(r, "no environment has a %s policy of %lu weights", out->policy, n);
    out->n_weights = (unsigned)n;
    if (!(out->weights = malloc((n ? n : 1) * sizeof *out->weights)))
        return cs_say(r->error, r->size, CS_ERR_NOMEM, "out of memory");
    for (unsigned long k = 0; k < n; k++) {
        if (!(line = next_line(r)))
            return damaged(r, "the file ends after %lu of its %lu weights", k, n);
        out->weights[k] = strtod(line, &end);   /* subnormals set ERANGE and are fine */
        if (end == line || *end || !isfinite(out->weights[k]))
            return damaged(r, "weight %lu: '%.40s' is not a finite number", k, line);
    }
    const char *sum = field(line = next_line(r), "checksum");
    unsigned long long want = sum ? strtoull(sum, &end, 16) : 0;
    if (!sum || strlen(sum) != 16 || *end)
        return damaged(r, line ? "expected 'checksum' and 16 hex digits after the weights"
                               : "the file ends before its checksum");
    if (want != checksum(out->env, out->policy, out->n_weights, out->weights))
        return damaged(r, "the checksum does not match the contents");
    if ((line = next_line(r)))
        return damaged(r, "unexpected text after the checksum");
    return CS_OK;
}

cs_status cs_policy_load(const char *path, cs_policy_file *out, char *error, size_t error_size)
{
    if (error && error_size)
        error[0] = 0;
    if (!out)
        return cs_say(error, error_size, CS_ERR_ARGUMENT, "no place for the policy");
    memset(out, 0, sizeof *out);
    if (!path || !*path)
        return cs_say(error, error_size, CS_ERR_ARGUMENT, "no policy file named");
    cs_status open_st;
    char why[256];
    FILE *f = cs_fopen_regular(path, &open_st, why, sizeof why);
    if (!f)
        return cs_say(error, error_size, open_st, "cannot open %s: %s", path, why);
    char *text = NULL;
    size_t len = 0, cap = 0;
    cs_status s = CS_OK;
    for (;;) {
        if (len == cap) {
            if (cap > (size_t)FILE_MAX) {
                s = cs_say(error, error_size, CS_ERR_PARSE, "%s is larger than %ld bytes: not a policy file", path,
                        FILE_MAX);
                break;
            }
            size_t grow = cap ? 2 * cap : 4096;
            char *more = realloc(text, grow + 1);
            if (!more) {
                s = cs_say(error, error_size, CS_ERR_NOMEM, "out of memory");
                break;
            }
            text = more;
            cap = grow;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (s == CS_OK && ferror(f))
        s = cs_say(error, error_size, CS_ERR_IO, "cannot read %s", path);
    fclose(f);
    if (s == CS_OK && len == 0)
        s = cs_say(error, error_size, CS_ERR_PARSE, "%s is empty: not a policy file", path);
    if (s == CS_OK && memchr(text, 0, len))
        s = cs_say(error, error_size, CS_ERR_PARSE, "%s holds a NUL byte: not a policy file", path);
    if (s == CS_OK) {
        text[len] = 0;
        reader r = {path, text, text, 0, error, error_size};
        s = parse(&r, out);
    }
    free(text);
    if (s != CS_OK)
        cs_policy_file_free(out);
    return s;
}

void cs_policy_file_free(cs_policy_file *f)
{
    if (!f)
        return;
    free(f->weights);
    f->weights = NULL;
    f->n_weights = 0;
}
