/* cli/buf.c: a growing output buffer. Output is built in memory and written
 * only once the work has succeeded. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- output buffer ---- */

static bool buf_reserve(cli_buf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (b->cap - b->len > extra)
        return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len <= extra) {
        if (cap > SIZE_MAX / 2) {
            b->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *data = realloc(b->data, cap);
    if (!data) {
        b->failed = true;
        return false;
    }
    b->data = data;
    b->cap = cap;
    return true;
}

void cli_buf_add(cli_buf *b, const char *s, size_t n)
{
    if (!buf_reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void cli_buf_str(cli_buf *b, const char *s)
{
    cli_buf_add(b, s, strlen(s));
}

void cli_buf_printf(cli_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if (!buf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void cli_buf_repr(cli_buf *b, double x)
{
    char tmp[CS_REPR_MAX];
    size_t n = cs_num_repr(x, tmp);
    cli_buf_add(b, tmp, n);
}

void cli_buf_json_string(cli_buf *b, const char *s)
{
    if (!s) {
        cli_buf_str(b, "null");
        return;
    }
    cli_buf_add(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char esc[2] = {'\\', (char)*p};
            cli_buf_add(b, esc, 2);
        } else if (*p == '\n') {
            cli_buf_str(b, "\\n");
        } else if (*p < 0x20) {
            cli_buf_printf(b, "\\u%04x", *p);
        } else {
            cli_buf_add(b, (const char *)p, 1);
        }
    }
    cli_buf_add(b, "\"", 1);
}

void cli_buf_free(cli_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}

/* `  "key": v,` as a JSON object's member line: null for NaN and infinities
 * (JSON has neither); `last` ends the object's members. */
void cli_buf_json_number(cli_buf *b, const char *key, double v, bool last)
{
    cli_buf_printf(b, "  \"%s\": ", key);
    if (isfinite(v))
        cli_buf_repr(b, v);   /* Python's json.dumps spells floats so, and reads them back exactly */
    else
        cli_buf_str(b, "null");
    cli_buf_str(b, last ? "\n" : ",\n");
}
