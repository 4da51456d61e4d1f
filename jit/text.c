/* A growing string for emitters and dumps; allocation failure sticks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"

static bool reserve(cs_text *t, size_t extra)
{
    if (t->failed)
        return false;
    if (t->len + extra + 1 <= t->cap)
        return true;
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->len + extra + 1)
        cap *= 2;
    char *d = realloc(t->data, cap);
    if (!d) {
        t->failed = true;
        return false;
    }
    t->data = d;
    t->cap = cap;
    return true;
}

void cs_text_append(cs_text *t, const char *s, size_t n)
{
    if (!reserve(t, n))
        return;
    memcpy(t->data + t->len, s, n);
    t->len += n;
    t->data[t->len] = 0;
}

void cs_text_vprintf(cs_text *t, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0 || !reserve(t, (size_t)n))
        return;
    vsnprintf(t->data + t->len, (size_t)n + 1, fmt, ap);
    t->len += (size_t)n;
}

void cs_text_printf(cs_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cs_text_vprintf(t, fmt, ap);
    va_end(ap);
}

void cs_text_real(cs_text *t, double v)
{
    /* Of the precisions that read back exactly, the shortest text: 10 is "10", not "1e+01". */
    char best[40] = "", buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v && (!best[0] || strlen(buf) < strlen(best)))
            memcpy(best, buf, sizeof buf);
    }
    if (!best[0])
        snprintf(best, sizeof best, "%.17g", v);
    cs_text_append(t, best, strlen(best));
}

void cs_text_free(cs_text *t)
{
    free(t->data);
    memset(t, 0, sizeof *t);
}
