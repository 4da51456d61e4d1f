/* The .env lexer (docs/dsl.md): source bytes -> tokens, one at a time.
 *
 * The lexer owns the line structure of the language: a newline becomes an
 * end-of-line token only where it can end a statement (outside ( ) and [ ],
 * and not after a token that needs something to follow it), and a ';' is
 * an end-of-line token too. It also checks every byte: the source is ASCII
 * outside comments and strings, comments and strings hold valid UTF-8, and
 * no control character other than tab and newline (CR only before LF).
 */
#ifndef CS_LEX_H
#define CS_LEX_H

#include <stdbool.h>
#include <stddef.h>

/* ORDER TOK: cs_tok_text in lex.c follows this enum. */
typedef enum {
    CS_TOK_EOF,
    CS_TOK_EOL,      /* a statement-ending newline, or ';' */
    CS_TOK_NAME,     /* identifier, or a word such as 'state' (keywords are contextual) */
    CS_TOK_PRIMED,   /* name' (len excludes the apostrophe) */
    CS_TOK_NUMBER,   /* value in `number`; `integer`: written without '.' or exponent */
    CS_TOK_STRING,   /* "..." (pos at the quote; text at pos + 1, len bytes) */
    CS_TOK_LPAREN, CS_TOK_RPAREN, CS_TOK_LBRACKET, CS_TOK_RBRACKET, CS_TOK_LBRACE, CS_TOK_RBRACE,
    CS_TOK_COMMA, CS_TOK_ASSIGN, CS_TOK_QUESTION, CS_TOK_COLON,
    CS_TOK_PLUS, CS_TOK_MINUS, CS_TOK_STAR, CS_TOK_SLASH, CS_TOK_SLASHSLASH, CS_TOK_PERCENT,
    CS_TOK_LT, CS_TOK_LE, CS_TOK_GT, CS_TOK_GE, CS_TOK_EQ, CS_TOK_NE,
    CS_TOK_AND, CS_TOK_OR, CS_TOK_NOT,
    CS_TOK_COUNT
} cs_tok_kind;

typedef struct {
    cs_tok_kind kind;
    size_t pos;       /* byte offset of the token's first byte */
    size_t len;       /* bytes of the token (see the kinds above) */
    double number;
    bool integer;     /* a NUMBER with no '.' or exponent: an int literal (at most 2^31 - 1) */
} cs_token;

typedef struct {
    const char *src;
    size_t len, pos;
    unsigned depth;        /* open ( and [: newlines inside them are spaces */
    cs_tok_kind last;      /* the previous token: decides what a newline means */
    size_t err_pos;
    char err[160];
} cs_lexer;

/* Names are at most this many bytes (cs_slot names are CS_NAME_MAX with the NUL). */
#define CS_LEX_NAME_MAX 47

void cs_lex_init(cs_lexer *lx, const char *src, size_t len);
/* The next token. 0, or -1 with lx->err and lx->err_pos set (then stop). */
int cs_lex_next(cs_lexer *lx, cs_token *tok);
/* How a token kind reads in a message: "')'", "a name", "end of line". */
const char *cs_tok_text(cs_tok_kind k);
/* 1-based line and column of a byte offset; columns count characters. */
void cs_lex_position(const char *src, size_t len, size_t pos, unsigned *line, unsigned *col);
/* A whole string that is one unsigned decimal literal, converted in the "C"
 * locale: 0; -1 malformed; -2 overflows a double; -3 out of memory. */
int cs_lex_decimal(const char *s, size_t n, double *out);

#endif
