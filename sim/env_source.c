/* Reading .env sources: bounded, binary-safe (the parser judges the bytes). */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin_envs.h"
#include "env_source.h"
#include "regular_file.h"

#define CS_SOURCE_MAX (16u << 20)

static cs_status read_file(const char *path, cs_env_source *out, char *err, size_t err_size)
{
    cs_status st;
    char why[256];
    FILE *f = cs_fopen_regular(path, &st, why, sizeof why);
    if (!f) {
        snprintf(err, err_size, "cannot open %s: %s", path, why);
        return st;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (len == cap) {
            char more;   /* exactly the limit is fine: only a byte past it is too much */
            if (cap >= CS_SOURCE_MAX && fread(&more, 1, 1, f) == 0 && !ferror(f))
                break;
            if (cap >= CS_SOURCE_MAX) {
                free(buf);
                fclose(f);
                snprintf(err, err_size, "%s: larger than %u MiB", path, CS_SOURCE_MAX >> 20);
                return CS_ERR_PARSE;
            }
            char *b = realloc(buf, cap * 2);
            if (!b)
                break;
            buf = b;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    bool bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        snprintf(err, err_size, "cannot read %s", path);
        return buf ? CS_ERR_IO : CS_ERR_NOMEM;
    }
    out->text = buf;
    out->len = len;
    out->owned = 1;
    snprintf(out->filename, sizeof out->filename, "%s", path);
    return CS_OK;
}

static bool valid_name(const char *s)
{
    if (!*s || strlen(s) > 64)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
              *s == '-'))
            return false;
    return true;
}

/* Whether the source's `env NAME "TITLE"` line declares this title. */
static bool declares_title(const char *source, const char *title)
{
    size_t n = strlen(title);
    for (const char *line = source; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, "env ", 4) != 0)
            continue;
        const char *q = strchr(line, '"'), *nl = strchr(line, '\n');
        return q && (!nl || q < nl) && strncmp(q + 1, title, n) == 0 && q[1 + n] == '"';
    }
    return false;
}

/* A Gymnasium id (CartPole-v1) names the built-in environment that declares
 * it as its title: the first in name order (cartpole, not cartpole_concat). */
static const cs_builtin_env *builtin_by_title(const char *title)
{
    for (const cs_builtin_env *b = cs_builtin_envs; b->name; b++)
        if (declares_title(b->source, title))
            return b;
    return NULL;
}

/* Edit distance between a and b, letters compared without case (CartPole-v0
 * is one edit from CartPole-v1, cartpol one from cartpole). */
static size_t edits(const char *a, const char *b)
{
    size_t n = strlen(b), row[72];
    if (strlen(a) > 64 || n > 64)
        return SIZE_MAX;
    for (size_t j = 0; j <= n; j++)
        row[j] = j;
    for (size_t i = 1; a[i - 1]; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= n; j++) {
            size_t above = row[j];
            size_t change = diagonal + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            size_t drop = above + 1, add = row[j - 1] + 1;
            row[j] = change < drop ? (change < add ? change : add) : (drop < add ? drop : add);
            diagonal = above;
        }
    }
    return row[n];
}

/* A built-in environment's Gymnasium id, when that id names it (CartPole-v1
 * names cartpole, not cartpole_concat): "" otherwise. */
static void title_naming(const cs_builtin_env *b, char *title, size_t size)
{
    title[0] = 0;
    const char *line = strncmp(b->source, "env ", 4) == 0 ? b->source : strstr(b->source, "\nenv ");
    const char *q = line ? strchr(line, '"') : NULL, *end = q ? strchr(q + 1, '"') : NULL;
    const char *nl = line ? strchr(line + 1, '\n') : NULL;
    if (!q || !end || (nl && end > nl) || (size_t)(end - q) > size)
        return;
    snprintf(title, size, "%.*s", (int)(end - q - 1), q + 1);
    if (builtin_by_title(title) != b)
        title[0] = 0;
}

/* "unknown environment 'X' (did you mean 'Y'?); known: a (A-v1), b, ..."
 * over every name --env takes: the files' names and the Gymnasium ids. */
static cs_status unknown_environment(const char *what, char *err, size_t err_size)
{
    const char *nearest = NULL;
    char nearest_title[72] = "";
    size_t best = strlen(what) / 3 > 2 ? strlen(what) / 3 : 2;   /* beyond this it is no typo */
    for (const cs_builtin_env *b = cs_builtin_envs; b->name; b++) {
        char title[72];
        title_naming(b, title, sizeof title);
        size_t by_name = edits(what, b->name), by_title = title[0] ? edits(what, title) : SIZE_MAX;
        if (by_name <= best && by_name <= by_title) {
            best = by_name;
            nearest = b->name;
        } else if (by_title <= best) {
            best = by_title;
            nearest = nearest_title;
            snprintf(nearest_title, sizeof nearest_title, "%s", title);
        }
    }
    size_t len = 0;
    int k = snprintf(err, err_size, "unknown environment '%s'", what);
    len = k > 0 ? (size_t)k : 0;
    if (nearest && len < err_size)
        len += (size_t)snprintf(err + len, err_size - len, " (did you mean '%s'?)", nearest);
    if (len < err_size)
        len += (size_t)snprintf(err + len, err_size - len, "; known:");
    for (const cs_builtin_env *b = cs_builtin_envs; b->name && len < err_size; b++) {
        char title[72];
        title_naming(b, title, sizeof title);
        len += (size_t)snprintf(err + len, err_size - len, " %s%s%s%s%s", b->name, title[0] ? " (" : "", title,
                                title[0] ? ")" : "", b[1].name ? "," : "");
    }
    if (len < err_size)
        snprintf(err + len, err_size - len, ", or a path to a .env file");
    return CS_ERR_NOT_FOUND;
}

cs_status cs_env_source_load(const char *what, const char *dir, cs_env_source *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    size_t n = strlen(what);
    if (strchr(what, '/') || (n > 4 && !strcmp(what + n - 4, ".env")))
        return read_file(what, out, err, err_size);
    if (!valid_name(what)) {
        snprintf(err, err_size, "'%.64s' is not an environment name (letters, digits, _ and -) or a path", what);
        return CS_ERR_ARGUMENT;
    }
    if (!dir)
        dir = getenv("CARTSIM_ENV_DIR");
    if (dir && *dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.env", dir, what);
        if (access(path, F_OK) == 0)
            return read_file(path, out, err, err_size);
    }
    for (const cs_builtin_env *b = cs_builtin_envs; b->name; b++)
        if (!strcmp(b->name, what)) {
            out->text = (char *)b->source;
            out->len = strlen(b->source);
            snprintf(out->filename, sizeof out->filename, "%s.env", what);
            return CS_OK;
        }
    const cs_builtin_env *alias = builtin_by_title(what);
    if (alias)
        return cs_env_source_load(alias->name, NULL, out, err, err_size);
    return unknown_environment(what, err, err_size);
}

const char *cs_builtin_env_at(size_t i, char *title, size_t title_size)
{
    if (title && title_size)
        title[0] = 0;
    for (const cs_builtin_env *b = cs_builtin_envs; b->name; b++, i--)
        if (i == 0) {
            char own[72];
            title_naming(b, own, sizeof own);
            if (title && title_size)
                snprintf(title, title_size, "%s", own);
            return b->name;
        }
    return NULL;
}

void cs_env_source_free(cs_env_source *src)
{
    if (src->owned)
        free(src->text);
    memset(src, 0, sizeof *src);
}
