/* The .env lexer: see lex.h for what it decides and docs/dsl.md for the
 * language. Nothing here allocates except the copy strtod needs for a
 * number literal, which is freed before returning. */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"
#include "lex.h"

/* ORDER TOK */
static const char *const tok_text[] = {
    "end of input", "end of line", "a name", "a next-state name", "a number", "a string",
    "'('", "')'", "'['", "']'", "'{'", "'}'",
    "','", "'='", "'?'", "':'",
    "'+'", "'-'", "'*'", "'/'", "'//'", "'%'",
    "'<'", "'<='", "'>'", "'>='", "'=='", "'!='",
    "'and'", "'or'", "'not'",
};
_Static_assert(sizeof tok_text / sizeof tok_text[0] == CS_TOK_COUNT, "tok_text: one per token kind");

const char *cs_tok_text(cs_tok_kind k)
{
    return (unsigned)k < CS_TOK_COUNT ? tok_text[k] : "?";
}

void cs_lex_init(cs_lexer *lx, const char *src, size_t len)
{
    memset(lx, 0, sizeof *lx);
    lx->src = src;
    lx->len = src ? len : 0;
    lx->last = CS_TOK_EOL;   /* leading newlines end nothing */
}

void cs_lex_position(const char *src, size_t len, size_t pos, unsigned *line, unsigned *col)
{
    unsigned l = 1, c = 1;
    if (pos > len)
        pos = len;
    for (size_t i = 0; i < pos; i++) {
        unsigned char b = (unsigned char)src[i];
        if (b == '\n') {
            l++;
            c = 1;
        } else if ((b & 0xc0) != 0x80) {   /* UTF-8 continuation bytes share a column */
            c++;
        }
    }
    *line = l;
    *col = c;
}

static int fail(cs_lexer *lx, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(cs_lexer *lx, size_t pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(lx->err, sizeof lx->err, fmt, ap);
    va_end(ap);
    lx->err_pos = pos;
    return -1;
}

/* Checks one byte of a comment or string body; returns how many bytes it
 * spans, or 0 after setting the error. */
static size_t text_char(cs_lexer *lx, size_t i)
{
    const unsigned char *s = (const unsigned char *)lx->src;
    unsigned char c = s[i];
    if (c == 0) {
        fail(lx, i, "NUL byte in the source");
        return 0;
    }
    if (c == '\r' && i + 1 < lx->len && s[i + 1] == '\n')
        return 1;
    if ((c < 0x20 && c != '\t') || c == 0x7f) {
        fail(lx, i, "control character 0x%02x in the source", c);
        return 0;
    }
    size_t n = cs_utf8_length(s + i, lx->len - i);
    if (!n)
        fail(lx, i, "invalid UTF-8 (byte 0x%02x)", c);
    return n;
}

static bool is_name_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

/* Tokens after which a newline cannot end a statement. */
static bool needs_more(cs_tok_kind k)
{
    switch (k) {
    case CS_TOK_COMMA: case CS_TOK_ASSIGN: case CS_TOK_QUESTION: case CS_TOK_COLON:
    case CS_TOK_PLUS: case CS_TOK_MINUS: case CS_TOK_STAR: case CS_TOK_SLASH: case CS_TOK_SLASHSLASH:
    case CS_TOK_PERCENT: case CS_TOK_LT: case CS_TOK_LE: case CS_TOK_GT: case CS_TOK_GE: case CS_TOK_EQ: case CS_TOK_NE:
    case CS_TOK_AND: case CS_TOK_OR: case CS_TOK_NOT:
        return true;
    default:
        return false;
    }
}

/* Length of a decimal literal at s (digits [. digits] [e [+-] digits], or
 * . digits [exponent]), 0 if none starts there. */
static size_t decimal_length(const char *s, size_t n)
{
    size_t i = 0, digits = 0;
    while (i < n && is_digit(s[i]))
        i++, digits++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && is_digit(s[i]))
            i++, digits++;
    }
    if (!digits)
        return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < n && (s[j] == '+' || s[j] == '-'))
            j++;
        if (j >= n || !is_digit(s[j]))
            return 0;
        while (j < n && is_digit(s[j]))
            j++;
        i = j;
    }
    return i;
}

/* Converts exactly the n bytes at s, which decimal_length accepted, in the
 * "C" locale (the host program's locale must not change what 0.5 means).
 * 0; -1 when it overflows a double; -2 when memory ran out. */
static int decimal_value(const char *s, size_t n, double *out)
{
    char small[64], *copy = n < sizeof small ? small : malloc(n + 1);
    if (!copy)
        return -2;
    memcpy(copy, s, n);
    copy[n] = 0;
    locale_t c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    int rc = 0;
    if (!c_locale) {
        rc = -2;
    } else {
        errno = 0;
        *out = strtod_l(copy, NULL, c_locale);
        if (isinf(*out))
            rc = -1;   /* underflow to zero or a subnormal is fine, as in Python */
        freelocale(c_locale);
    }
    if (copy != small)
        free(copy);
    return rc;
}

int cs_lex_decimal(const char *s, size_t n, double *out)
{
    if (n == 0 || decimal_length(s, n) != n)
        return -1;
    int rc = decimal_value(s, n, out);
    return rc == 0 ? 0 : rc == -1 ? -2 : -3;
}

static int lex_number(cs_lexer *lx, cs_token *tok)
{
    const char *s = lx->src + lx->pos;
    size_t n = lx->len - lx->pos;
    size_t k = decimal_length(s, n);
    if (!k || (k < n && (is_name_char(s[k]) || s[k] == '.')))
        return fail(lx, lx->pos, "malformed number");
    int rc = decimal_value(s, k, &tok->number);
    if (rc == -1)
        return fail(lx, lx->pos, "number out of range");
    if (rc)
        return fail(lx, lx->pos, "out of memory");
    tok->integer = !memchr(s, '.', k) && !memchr(s, 'e', k) && !memchr(s, 'E', k);
    if (tok->integer && tok->number > 2147483647.0)
        return fail(lx, lx->pos, "the int literal %.*s is too large (ints are 32-bit, at most 2147483647); "
                                 "write %.*s.0 for a real", (int)(k < 40 ? k : 40), s, (int)(k < 40 ? k : 40), s);
    tok->kind = CS_TOK_NUMBER;
    tok->len = k;
    lx->pos += k;
    return 0;
}

static int lex_string(cs_lexer *lx, cs_token *tok)
{
    size_t start = lx->pos, i = start + 1;
    while (i < lx->len && lx->src[i] != '"') {
        if (lx->src[i] == '\n' || lx->src[i] == '\r')
            return fail(lx, start, "unterminated string");
        size_t n = text_char(lx, i);
        if (!n)
            return -1;
        i += n;
    }
    if (i >= lx->len)
        return fail(lx, start, "unterminated string");
    tok->kind = CS_TOK_STRING;
    tok->len = i - start - 1;
    lx->pos = i + 1;
    return 0;
}

/* One- and two-character operators and punctuation. */
static int lex_symbol(cs_lexer *lx, cs_token *tok)
{
    char c = lx->src[lx->pos];
    char d = lx->pos + 1 < lx->len ? lx->src[lx->pos + 1] : 0;
    cs_tok_kind k;
    size_t n = 1;
    switch (c) {
    case '(': k = CS_TOK_LPAREN; lx->depth++; break;
    case '[': k = CS_TOK_LBRACKET; lx->depth++; break;
    case ')': k = CS_TOK_RPAREN; lx->depth -= lx->depth > 0; break;
    case ']': k = CS_TOK_RBRACKET; lx->depth -= lx->depth > 0; break;
    case '{': k = CS_TOK_LBRACE; break;
    case '}': k = CS_TOK_RBRACE; break;
    case ',': k = CS_TOK_COMMA; break;
    case '?': k = CS_TOK_QUESTION; break;
    case ':': k = CS_TOK_COLON; break;
    case '+': k = CS_TOK_PLUS; break;
    case '-': k = CS_TOK_MINUS; break;
    case '/': k = d == '/' ? (n = 2, CS_TOK_SLASHSLASH) : CS_TOK_SLASH; break;
    case '%': k = CS_TOK_PERCENT; break;
    case '*':
        if (d == '*')
            return fail(lx, lx->pos, "'**' is not an operator; write pow(a, b)");
        k = CS_TOK_STAR;
        break;
    case '=': k = d == '=' ? (n = 2, CS_TOK_EQ) : CS_TOK_ASSIGN; break;
    case '<': k = d == '=' ? (n = 2, CS_TOK_LE) : CS_TOK_LT; break;
    case '>': k = d == '=' ? (n = 2, CS_TOK_GE) : CS_TOK_GT; break;
    case '!':
        if (d != '=')
            return fail(lx, lx->pos, "unexpected '!' (write 'not' for negation)");
        k = CS_TOK_NE;
        n = 2;
        break;
    case '\'':
        return fail(lx, lx->pos, "unexpected \"'\": a next-state name is written x' with no space");
    default:
        if (c > 0x20 && c < 0x7f)
            return fail(lx, lx->pos, "unexpected character '%c'", c);
        return fail(lx, lx->pos, "unexpected character 0x%02x", (unsigned char)c);
    }
    tok->kind = k;
    tok->len = n;
    lx->pos += n;
    return 0;
}

static int lex_word(cs_lexer *lx, cs_token *tok)
{
    size_t start = lx->pos, i = start;
    while (i < lx->len && is_name_char(lx->src[i]))
        i++;
    size_t n = i - start;
    if (n > CS_LEX_NAME_MAX)
        return fail(lx, start, "name longer than %d characters", CS_LEX_NAME_MAX);
    tok->len = n;
    tok->kind = CS_TOK_NAME;
    if (n == 3 && !memcmp(lx->src + start, "and", 3))
        tok->kind = CS_TOK_AND;
    else if (n == 2 && !memcmp(lx->src + start, "or", 2))
        tok->kind = CS_TOK_OR;
    else if (n == 3 && !memcmp(lx->src + start, "not", 3))
        tok->kind = CS_TOK_NOT;
    else if (i < lx->len && lx->src[i] == '\'') {
        tok->kind = CS_TOK_PRIMED;
        i++;
    }
    lx->pos = i;
    return 0;
}

static int scan(cs_lexer *lx, cs_token *tok)
{
    for (;;) {
        tok->pos = lx->pos;
        tok->len = 0;
        tok->number = 0;
        tok->integer = false;
        if (lx->pos >= lx->len) {
            tok->kind = CS_TOK_EOF;
            return 0;
        }
        unsigned char c = (unsigned char)lx->src[lx->pos];
        if (c == ' ' || c == '\t') {
            lx->pos++;
        } else if (c == '\r' && lx->pos + 1 < lx->len && lx->src[lx->pos + 1] == '\n') {
            lx->pos++;
        } else if (c == '#') {
            size_t i = lx->pos + 1;
            while (i < lx->len && lx->src[i] != '\n') {
                size_t n = text_char(lx, i);
                if (!n)
                    return -1;
                i += n;
            }
            lx->pos = i;
        } else if (c == '\n') {
            lx->pos++;
            if (lx->depth == 0 && !needs_more(lx->last) && lx->last != CS_TOK_EOL) {
                tok->kind = CS_TOK_EOL;
                tok->len = 1;
                return 0;
            }
        } else if (c == ';') {
            lx->pos++;
            tok->kind = CS_TOK_EOL;
            tok->len = 1;
            return 0;
        } else if (c == 0) {
            return fail(lx, lx->pos, "NUL byte in the source");
        } else if (c >= 0x80) {
            return fail(lx, lx->pos, "non-ASCII byte 0x%02x outside a comment or string", c);
        } else if (c < 0x20 || c == 0x7f) {
            return fail(lx, lx->pos, "control character 0x%02x in the source", c);
        } else if (is_name_start((char)c)) {
            return lex_word(lx, tok);
        } else if (is_digit((char)c) || (c == '.' && lx->pos + 1 < lx->len && is_digit(lx->src[lx->pos + 1]))) {
            return lex_number(lx, tok);
        } else if (c == '"') {
            return lex_string(lx, tok);
        } else {
            return lex_symbol(lx, tok);
        }
    }
}

int cs_lex_next(cs_lexer *lx, cs_token *tok)
{
    if (scan(lx, tok))
        return -1;
    lx->last = tok->kind;
    return 0;
}
