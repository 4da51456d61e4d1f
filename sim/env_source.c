/* Reading .env sources: bounded, binary-safe (the parser judges the bytes). */
#include <errno.h>
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
    int len = snprintf(err, err_size, "unknown environment '%s' (known:", what);
    for (const cs_builtin_env *b = cs_builtin_envs; b->name && len > 0 && (size_t)len < err_size; b++)
        len += snprintf(err + len, err_size - (size_t)len, " %s", b->name);
    if (len > 0 && (size_t)len < err_size)
        snprintf(err + len, err_size - (size_t)len, ")");
    return CS_ERR_NOT_FOUND;
}

void cs_env_source_free(cs_env_source *src)
{
    if (src->owned)
        free(src->text);
    memset(src, 0, sizeof *src);
}
