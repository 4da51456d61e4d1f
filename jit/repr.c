/* The shortest decimal that reads back as a double, spelled as Python's
 * repr(float): how every number the user gave is echoed back (the compiler's
 * messages, the library's, the program's), so that 0.6 is never shown as
 * 0.59999999999999998. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "repr.h"

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* digits: the significant digits (no dot), *exp10: the exponent of the
 * first digit (value = d.ddd x 10^exp10). */
typedef struct {
    char digits[24];
    int n;
    int exp10;
} decimal;

/* "d.ddde+XX" from printf into a decimal. */
static void from_printf(const char *s, decimal *d)
{
    d->n = 0;
    const char *p = s;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            d->digits[d->n++] = *p;
    d->digits[d->n] = 0;
    d->exp10 = *p == 'e' ? atoi(p + 1) : 0;
}

static double decimal_value(const decimal *d)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%c%s%se%d", d->digits[0], d->n > 1 ? "." : "", d->digits + 1, d->exp10);
    return strtod(buf, NULL);
}

/* The neighbour one unit in the last digit up (+1) or down (-1); false when
 * it would leave the n-digit range (then it is not a shortest candidate). */
static bool step_last_digit(const decimal *d, int dir, decimal *out)
{
    *out = *d;
    int i = out->n - 1;
    if (dir > 0) {
        while (i >= 0 && out->digits[i] == '9')
            out->digits[i--] = '0';
        if (i < 0) {
            /* 9.99 -> 10.0: one digit more, same length after renormalizing */
            out->digits[0] = '1';
            memset(out->digits + 1, '0', (size_t)(out->n - 1));
            out->exp10++;
            return true;
        }
        out->digits[i]++;
    } else {
        while (i >= 0 && out->digits[i] == '0')
            out->digits[i--] = '9';
        if (i < 0)
            return false;
        out->digits[i]--;
        if (out->digits[0] == '0')
            return false;   /* 1.00 -> 0.99: fewer significant digits, found earlier */
    }
    return true;
}

/* Shortest digits that read back as x (x finite, > 0). Of several
 * shortest ones, the nearest to x: that is Python's repr (David Gay's
 * dtoa mode 0). printf's correctly rounded n digits are the nearest
 * n-digit decimal, so when they do not read back, only a neighbour can. */
static void shortest(double x, decimal *d)
{
    char buf[48];
    for (int prec = 0; prec < 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec, x);
        from_printf(buf, d);
        if (same_bits(strtod(buf, NULL), x))
            return;
        decimal up, down;
        bool up_ok = step_last_digit(d, +1, &up) && same_bits(decimal_value(&up), x);
        bool down_ok = step_last_digit(d, -1, &down) && same_bits(decimal_value(&down), x);
        if (up_ok && down_ok) {
            /* Cannot both read back when the nearest does not; keep the
             * rule anyway: long double decides which is nearer. */
            long double du = (long double)decimal_value(&up), dd = (long double)decimal_value(&down);
            up_ok = du - (long double)x < (long double)x - dd;
            down_ok = !up_ok;
        }
        if (up_ok) {
            *d = up;
            return;
        }
        if (down_ok) {
            *d = down;
            return;
        }
    }
    snprintf(buf, sizeof buf, "%.16e", x);
    from_printf(buf, d);
}

size_t cs_num_repr(double x, char out[CS_REPR_MAX])
{
    if (x != x)
        return (size_t)snprintf(out, CS_REPR_MAX, "nan");
    char *p = out;
    if (signbit(x)) {
        *p++ = '-';
        x = -x;
    }
    if (x - x != 0)
        return (size_t)(p - out) + (size_t)snprintf(p, CS_REPR_MAX - 1, "inf");
    if (x == 0) {
        memcpy(p, "0.0", 4);
        return (size_t)(p - out) + 3;
    }
    decimal d;
    shortest(x, &d);
    /* Python: exponent form when the exponent is below -4 or at least 16. */
    if (d.exp10 < -4 || d.exp10 >= 16) {
        *p++ = d.digits[0];
        if (d.n > 1) {
            *p++ = '.';
            memcpy(p, d.digits + 1, (size_t)(d.n - 1));
            p += d.n - 1;
        }
        p += snprintf(p, 8, "e%c%02d", d.exp10 < 0 ? '-' : '+', d.exp10 < 0 ? -d.exp10 : d.exp10);
    } else if (d.exp10 < 0) {
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -d.exp10 - 1; i++)
            *p++ = '0';
        memcpy(p, d.digits, (size_t)d.n);
        p += d.n;
    } else {
        int int_digits = d.exp10 + 1;
        for (int i = 0; i < int_digits; i++)
            *p++ = i < d.n ? d.digits[i] : '0';
        *p++ = '.';
        if (d.n > int_digits) {
            memcpy(p, d.digits + int_digits, (size_t)(d.n - int_digits));
            p += d.n - int_digits;
        } else {
            *p++ = '0';
        }
    }
    *p = 0;
    return (size_t)(p - out);
}

const char *cs_shortest(double x, char buf[CS_REPR_MAX])
{
    size_t n = cs_num_repr(x, buf);
    if (n > 2 && strcmp(buf + n - 2, ".0") == 0)
        buf[n - 2] = '\0';
    return buf;
}
