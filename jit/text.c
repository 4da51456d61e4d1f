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

size_t cs_utf8_length(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t need;
    unsigned char lo = 0x80, hi = 0xbf;   /* range of the second byte */
    if (c < 0x80)
        return 1;
    if (c < 0xc2)
        return 0;
    if (c < 0xe0) {
        need = 1;
    } else if (c < 0xf0) {
        need = 2;
        if (c == 0xe0)
            lo = 0xa0;
        if (c == 0xed)
            hi = 0x9f;
    } else if (c < 0xf5) {
        need = 3;
        if (c == 0xf0)
            lo = 0x90;
        if (c == 0xf4)
            hi = 0x8f;
    } else {
        return 0;
    }
    if (n < need + 1 || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t k = 2; k <= need; k++)
        if (s[k] < 0x80 || s[k] > 0xbf)
            return 0;
    return need + 1;
}

char *cs_escape(const char *s, char *out, size_t size)
{
    if (!size)
        return out;
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), used = 0;
    for (size_t i = 0; i < n && used + 1 < size;) {
        size_t len = cs_utf8_length(p + i, n - i);
        /* a C1 control (U+0080 to U+009F, 0xc2 0x80-0x9f) acts as ESC [ does */
        bool shown = len > 1 ? !(p[i] == 0xc2 && p[i + 1] < 0xa0) : len == 1 && p[i] >= 0x20 && p[i] != 0x7f;
        if (shown && used + len < size) {
            memcpy(out + used, p + i, len);
            used += len;
            i += len;
        } else if (!shown && used + 4 < size) {
            snprintf(out + used, size - used, "\\x%02x", p[i]);
            used += 4;
            i++;
        } else {
            break;
        }
    }
    out[used] = 0;
    return out;
}
