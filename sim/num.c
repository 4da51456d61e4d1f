/* Numbers from the command line, configuration files and CSV files: strict
 * parsing (a typo never becomes another number). The library's own, so flags
 * and INI values are checked alike; printing them is jit/repr.c's. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"

/* ---- parsing ---- */

/* Plain decimal digits only: "1e12", "10x", " 5", "+5" and "" are not
 * integers, so a typo never becomes a different number. */
static cs_num_result digits_u64(const char *s, uint64_t *out)
{
    if (!*s)
        return CS_NUM_SYNTAX;
    uint64_t v = 0;
    bool overflow = false;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return CS_NUM_SYNTAX;
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            overflow = true;
        else
            v = v * 10 + d;
    }
    *out = v;
    return overflow ? CS_NUM_RANGE : CS_NUM_OK;
}

cs_num_result cs_num_u64(const char *s, uint64_t *out)
{
    uint64_t v;
    cs_num_result r = digits_u64(s[0] == '-' ? s + 1 : s, &v);
    if (r != CS_NUM_OK)
        return r;
    if (s[0] == '-' && v != 0)
        return CS_NUM_RANGE;
    *out = v;
    return CS_NUM_OK;
}

cs_num_result cs_num_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    bool neg = s[0] == '-';
    uint64_t mag;
    cs_num_result r = digits_u64(neg ? s + 1 : s, &mag);
    if (r != CS_NUM_OK)
        return r;
    int64_t v;
    if (neg) {
        if (mag > (uint64_t)INT64_MAX + 1)
            return CS_NUM_RANGE;
        v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    } else {
        if (mag > (uint64_t)INT64_MAX)
            return CS_NUM_RANGE;
        v = (int64_t)mag;
    }
    if (v < lo || v > hi)
        return CS_NUM_RANGE;
    *out = v;
    return CS_NUM_OK;
}

bool cs_num_real(const char *s, double *out)
{
    /* strtod skips leading space and accepts hex; refuse the first, allow
     * the second (it is exact). */
    if (!*s || *s == ' ' || *s == '\t')
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end != 0)
        return false;
    /* ERANGE on underflow still gives the correctly rounded subnormal or
     * zero, which is the value the text denotes; overflow gives inf. */
    *out = v;
    return true;
}
