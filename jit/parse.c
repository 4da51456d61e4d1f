/* The .env parser (docs/dsl.md): tokens -> a small AST per statement ->
 * graph nodes through the builder (ir.c, program.c). This file parses
 * (names, expressions, statements, declarations); jit/lower.c lowers the
 * trees to nodes; jit/parse_tree.h is their shared data.
 *
 * Every statement is parsed and then lowered at once, in source order, so
 * the error reported is the first one in the file; a loop is one statement,
 * parsed whole, then lowered once per turn. Function bodies are kept as
 * ASTs and lowered again at each call: functions are inlined, and
 * hash-consing shares what the calls have in common.
 *
 * Errors longjmp back to cs_parse. Every parser allocation lives in one of
 * two arenas (perm: names, symbols, function bodies; temp: the statement
 * being parsed, emptied after each) or in three growing arrays that
 * cs_parse frees (scratch, targets, lower.c's tables), so no error path can
 * leak. Recursion is bounded (NEST_MAX while parsing, LOWER_MAX while
 * lowering) and so is the work that inlining, vectors and loops can
 * multiply (work_max): no input can overflow the stack or hang.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_tree.h"
#include "repr.h"

static const char *const sym_kind_name[] = {"param", "const", "state", "local", "function parameter",
                                            "function", "loop variable", "info value"};

static void *grow_array(parser *P, void *array, size_t *cap, size_t need, size_t size);

static void arena_free(arena *a)
{
    while (a->head) {
        chunk *c = a->head;
        a->head = c->next;
        free(c);
    }
}

/* ---- errors ---------------------------------------------------------- */

static _Noreturn void fail_plain(parser *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void write_error(parser *P, bool with_pos, size_t pos, const char *fmt, va_list ap)
{
    if (!P->err || !P->err_size)
        return;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (with_pos) {
        unsigned line, col;
        cs_lex_position(P->src, P->len, pos, &line, &col);
        snprintf(P->err, P->err_size, "%s:%u:%u: %s", P->file, line, col, msg);
    } else {
        snprintf(P->err, P->err_size, "%s: %s", P->file, msg);
    }
}

_Noreturn void cs_parse_fail_at(parser *P, size_t pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    write_error(P, true, pos, fmt, ap);
    va_end(ap);
    longjmp(P->fail, 1);
}

static _Noreturn void fail_plain(parser *P, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    write_error(P, false, 0, fmt, ap);
    va_end(ap);
    longjmp(P->fail, 1);
}

/* The caller's overrides are at fault, not the file: the message names no
 * file, and cs_parse says so by returning -2. */
static _Noreturn void fail_override(parser *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static _Noreturn void fail_override(parser *P, const char *fmt, ...)
{
    P->ov_failed = true;
    va_list ap;
    va_start(ap, fmt);
    if (P->err && P->err_size)
        vsnprintf(P->err, P->err_size, fmt, ap);
    va_end(ap);
    longjmp(P->fail, 1);
}

/* "12:5", for messages that point at a second place. */
static const char *where(parser *P, size_t pos, char buf[24])
{
    unsigned line, col;
    cs_lex_position(P->src, P->len, pos, &line, &col);
    snprintf(buf, 24, "%u:%u", line, col);
    return buf;
}

void *cs_parse_alloc(parser *P, arena *a, size_t n)
{
    const size_t align = _Alignof(max_align_t);
    if (n > SIZE_MAX / 4)
        fail_plain(P, "out of memory");
    n = n ? (n + align - 1) / align * align : align;
    chunk *c = a->head;
    if (!c || c->size - c->used < n) {
        size_t size = n > CHUNK_SIZE ? n : CHUNK_SIZE;
        c = malloc(sizeof *c + size);
        if (!c)
            fail_plain(P, "out of memory");
        c->size = size;
        c->used = 0;
        if (a->head && n > CHUNK_SIZE) {   /* a big block: keep filling the current chunk */
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    void *r = (unsigned char *)c->data + c->used;
    c->used += n;
    memset(r, 0, n);
    return r;
}

arena_mark cs_parse_mark(const arena *a)
{
    arena_mark m = {a->head, a->head ? a->head->next : NULL, a->head ? a->head->used : 0};
    return m;
}

/* Frees what was allocated after the mark: the chunks put in front of the
 * marked one, and the big blocks put right behind it (cs_parse_alloc). */
void cs_parse_release(arena *a, arena_mark m)
{
    while (a->head && a->head != m.head) {
        chunk *c = a->head;
        a->head = c->next;
        free(c);
    }
    if (!a->head)
        return;
    while (a->head->next != m.after) {
        chunk *c = a->head->next;
        a->head->next = c->next;
        free(c);
    }
    a->head->used = m.used;
}

void *cs_parse_grow(parser *P, void *array, size_t *cap, size_t need, size_t size)
{
    return grow_array(P, array, cap, need, size);
}

static void *grow_array(parser *P, void *array, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return array;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *a = realloc(array, n * size);
    if (!a)
        fail_plain(P, "out of memory");
    *cap = n;
    return a;
}

cs_node cs_parse_built(parser *P, cs_node n, size_t pos)
{
    if (!n)
        cs_parse_fail_at(P, pos, "cannot build the graph: %s", cs_graph_error(P->g));
    return n;
}

/* ---- tokens ---------------------------------------------------------- */

static void advance(parser *P)
{
    if (cs_lex_next(&P->lx, &P->tok))
        cs_parse_fail_at(P, P->lx.err_pos, "%s", P->lx.err);
}

static bool is(const parser *P, cs_tok_kind k) { return P->tok.kind == k; }

static bool word_is(const parser *P, const char *w)
{
    size_t n = strlen(w);
    return P->tok.kind == CS_TOK_NAME && P->tok.len == n && !memcmp(P->src + P->tok.pos, w, n);
}

static bool text_is(const char *s, size_t n, const char *w)
{
    return strlen(w) == n && !memcmp(s, w, n);
}

/* How the current token reads in a message. */
static const char *describe(parser *P)
{
    const cs_token *t = &P->tok;
    if (t->kind == CS_TOK_NAME)
        snprintf(P->desc, sizeof P->desc, "'%.*s'", (int)t->len, P->src + t->pos);
    else if (t->kind == CS_TOK_PRIMED)
        snprintf(P->desc, sizeof P->desc, "'%.*s''", (int)t->len, P->src + t->pos);
    else if (t->kind == CS_TOK_EOL && P->src[t->pos] == ';')
        snprintf(P->desc, sizeof P->desc, "';'");
    else
        snprintf(P->desc, sizeof P->desc, "%s", cs_tok_text(t->kind));
    return P->desc;
}

static void expect(parser *P, cs_tok_kind k, const char *after)
{
    if (!is(P, k))
        cs_parse_fail_at(P, P->tok.pos, "expected %s %s, got %s", cs_tok_text(k), after, describe(P));
    advance(P);
}

static void skip_eols(parser *P)
{
    while (is(P, CS_TOK_EOL))
        advance(P);
}

/* The kind of the token after the current one, without consuming it (a
 * token that fails to lex reads as the end of input: advance reports it). */
static cs_tok_kind peek(parser *P)
{
    cs_lexer saved = P->lx;
    cs_token t;
    cs_tok_kind k = cs_lex_next(&P->lx, &t) ? CS_TOK_EOF : t.kind;
    P->lx = saved;
    return k;
}

static const char *copy_name(parser *P, const char *s, size_t n)
{
    char *c = cs_parse_alloc(P, &P->perm, n + 1);
    memcpy(c, s, n);
    return c;
}

/* ---- names ----------------------------------------------------------- */


/* Words with a fixed meaning: never a user's name. (The words the newer
 * constructs use, for in range if, the types real int bool and the
 * observation spaces' in, mean something in one place only, as state does,
 * so files that use them as names keep parsing.) */
static const char *const reserved[] = {
    "pi", "true", "false", "action", "reward", "terminated", "env", "max_steps",
    "reward_threshold", "param", "const", "state", "observe", "fn", "reset", "step", "return",
    "discrete", "box",
};

/* The op a builtin function builds (jit/ops.def's dsl column), or -1.
 * These names cannot be redefined; the hand-mapped builtins
 * (lower_builtins.c) that are not among them can be, as in Python. */
static int find_builtin(const char *s, size_t n)
{
    for (int k = 0; k < CS_OP_COUNT; k++)
        if (cs_op_table[k].dsl[0] && text_is(s, n, cs_op_table[k].dsl))
            return k;
    return -1;
}

static bool is_reserved(const char *s, size_t n)
{
    for (size_t k = 0; k < sizeof reserved / sizeof reserved[0]; k++)
        if (text_is(s, n, reserved[k]))
            return true;
    return false;
}

static uint64_t hash_name(const char *s, size_t n) { return cs_fnv1a(CS_FNV1A_START, s, n); }

/* The table's entry for a name, created when absent. Entries are never
 * removed; scopes end by resetting `top`. */
static name_entry *entry_for(parser *P, const char *s, size_t n)
{
    if (2 * (P->table_count + 1) > P->table_cap) {
        size_t cap = P->table_cap ? 2 * P->table_cap : 256;
        name_entry *t = cs_parse_alloc(P, &P->perm, cap * sizeof *t);
        for (size_t k = 0; k < P->table_cap; k++) {
            name_entry *e = &P->table[k];
            if (!e->name)
                continue;
            size_t i = e->hash & (cap - 1);
            while (t[i].name)
                i = (i + 1) & (cap - 1);
            t[i] = *e;
            if (e->top)   /* symbols point at their entry: move them along */
                for (sym *y = e->top; y; y = y->shadowed)
                    y->entry = &t[i];
        }
        P->table = t;
        P->table_cap = cap;
    }
    uint64_t h = hash_name(s, n);
    size_t i = h & (P->table_cap - 1);
    for (;; i = (i + 1) & (P->table_cap - 1)) {
        name_entry *e = &P->table[i];
        if (!e->name) {
            e->name = copy_name(P, s, n);
            e->len = n;
            e->hash = h;
            P->table_count++;
            return e;
        }
        if (e->hash == h && e->len == n && !memcmp(e->name, s, n))
            return e;
    }
}

static sym *lookup(parser *P, const char *s, size_t n)
{
    return entry_for(P, s, n)->top;
}

static sym *define(parser *P, const char *s, size_t n, size_t pos, sym_kind kind)
{
    name_entry *e = entry_for(P, s, n);
    sym *y = cs_parse_alloc(P, &P->perm, sizeof *y);
    y->name = e->name;
    y->kind = kind;
    y->pos = pos;
    y->entry = e;
    y->shadowed = e->top;
    y->scope_next = P->scope;
    e->top = y;
    P->scope = y;
    return y;
}

/* Ends the scopes opened since `mark` (a value of P->scope). */
static void end_scope(parser *P, sym *mark)
{
    while (P->scope != mark) {
        sym *y = P->scope;
        y->entry->top = y->shadowed;
        P->scope = y->scope_next;
    }
}

/* A name about to be defined: not a builtin, not reserved, not taken.
 * Inside a function, state names are free (a function cannot see states). */
static void check_new_name(parser *P, const char *s, size_t n, size_t pos)
{
    char at[24];
    if (find_builtin(s, n) >= 0)
        cs_parse_fail_at(P, pos, "'%.*s' is a builtin function and cannot be redefined", (int)n, s);
    if (is_reserved(s, n))
        cs_parse_fail_at(P, pos, "'%.*s' is a reserved word", (int)n, s);
    sym *y = lookup(P, s, n);
    if (!y || (P->ctx == CTX_FN && y->kind == SYM_STATE))
        return;
    if (y->kind == SYM_LOCAL || y->kind == SYM_SLOT)
        cs_parse_fail_at(P, pos, "'%.*s' is already a %s (assigned at %s)", (int)n, s,
                y->kind == SYM_LOCAL ? "local" : "function parameter or local", where(P, y->pos, at));
    cs_parse_fail_at(P, pos, "'%.*s' is already defined as a %s at %s", (int)n, s, sym_kind_name[y->kind],
            where(P, y->pos, at));
}

/* ---- expressions: parsing -------------------------------------------- */

static expr *parse_expr(parser *P);

static expr *new_expr(parser *P, expr_kind kind, size_t pos, unsigned n)
{
    expr *e = cs_parse_alloc(P, P->ast, sizeof *e);
    e->kind = kind;
    e->pos = e->start = pos;
    e->n = n;
    if (n)
        e->kid = cs_parse_alloc(P, P->ast, n * sizeof *e->kid);
    return e;
}

static void enter(parser *P, size_t pos)
{
    if (++P->depth > NEST_MAX)
        cs_parse_fail_at(P, pos, "expression nested too deeply (more than %d levels)", NEST_MAX);
}

static void push(parser *P, expr *e, cs_op op, size_t pos)
{
    P->scratch = grow_array(P, P->scratch, &P->cap_scratch, P->n_scratch + 1, sizeof *P->scratch);
    P->scratch[P->n_scratch++] = (scratch_item){e, op, pos};
}

/* Moves the scratch items from `base` on into a new node's children. */
static expr *collect(parser *P, expr_kind kind, size_t pos, size_t base)
{
    unsigned n = (unsigned)(P->n_scratch - base);
    expr *e = new_expr(P, kind, pos, n);
    if (kind == E_CHAIN) {
        e->ops = cs_parse_alloc(P, P->ast, n * sizeof *e->ops);
        e->op_pos = cs_parse_alloc(P, P->ast, n * sizeof *e->op_pos);
    }
    for (unsigned k = 0; k < n; k++) {
        e->kid[k] = P->scratch[base + k].e;
        if (kind == E_CHAIN && k > 0) {
            e->ops[k - 1] = P->scratch[base + k].op;
            e->op_pos[k - 1] = P->scratch[base + k].pos;
        }
    }
    P->n_scratch = base;
    return e;
}

/* A keyword argument's name: its kw_name, or KW_COUNT. */
static kw_name keyword(const char *s, size_t n)
{
    for (int k = 0; k < KW_COUNT; k++)
        if (text_is(s, n, cs_builtin_keyword((kw_name)k)))
            return (kw_name)k;
    return KW_COUNT;
}

/* Arguments after '(' up to and including ')', pushed on the scratch.
 * `kw` (NULL: none allowed) receives keyword arguments NAME=expr, which
 * come after the positional ones; `accepted` says which. */
static void parse_args(parser *P, const char *callee, kwarg *kw, unsigned accepted)
{
    if (is(P, CS_TOK_RPAREN)) {
        advance(P);
        return;
    }
    bool keywords = false;
    for (unsigned n = 0;; n++) {
        if (n == ITEMS_MAX)
            cs_parse_fail_at(P, P->tok.pos, "too many arguments to '%s' (at most %d)", callee, ITEMS_MAX);
        size_t pos = P->tok.pos;
        if (is(P, CS_TOK_NAME) && peek(P) == CS_TOK_ASSIGN) {
            const char *s = P->src + pos;
            size_t len = P->tok.len;
            kw_name k = keyword(s, len);
            if (!kw)
                cs_parse_fail_at(P, pos, "'%s' takes no keyword arguments (%.*s=)", callee, (int)len, s);
            if (k == KW_COUNT || !(accepted & (1u << k)))
                cs_parse_fail_at(P, pos, "'%s' takes no keyword argument '%.*s'", callee, (int)len, s);
            if (kw[k].value)
                cs_parse_fail_at(P, pos, "keyword argument '%.*s' given twice", (int)len, s);
            advance(P);
            advance(P);   /* '=' */
            kw[k].value = parse_expr(P);
            kw[k].pos = pos;
            keywords = true;
        } else {
            if (keywords)
                cs_parse_fail_at(P, pos, "a positional argument after a keyword argument");
            push(P, parse_expr(P), CS_OP_COUNT, pos);
        }
        if (!is(P, CS_TOK_COMMA))
            break;
        advance(P);
    }
    if (!is(P, CS_TOK_RPAREN))
        cs_parse_fail_at(P, P->tok.pos, "expected ',' or ')' in the arguments of '%s', got %s", callee,
                describe(P));
    advance(P);
}

static void arity_error(parser *P, size_t pos, const char *name, int lo, int hi, unsigned got)
{
    if (lo == hi)
        cs_parse_fail_at(P, pos, "'%s' takes %d argument%s, got %u", name, lo, lo == 1 ? "" : "s", got);
    if (hi < 0 && lo == 1)
        cs_parse_fail_at(P, pos, "'%s' needs at least one argument", name);
    if (hi < 0)
        cs_parse_fail_at(P, pos, "'%s' needs at least %d arguments, got %u", name, lo, got);
    if (hi == lo + 1)
        cs_parse_fail_at(P, pos, "'%s' takes %d or %d arguments, got %u", name, lo, hi, got);
    cs_parse_fail_at(P, pos, "'%s' takes %d to %d arguments, got %u", name, lo, hi, got);
}

static expr *parse_call(parser *P, const char *s, size_t n, size_t pos)
{
    char name[CS_NAME_MAX];
    snprintf(name, sizeof name, "%.*s", (int)n, s);
    int b = find_builtin(s, n), f = cs_builtin_find(s, n);
    sym *y = b < 0 ? lookup(P, s, n) : NULL;
    if (y && y->kind != SYM_FN) {
        if (f >= 0)
            cs_parse_fail_at(P, pos, "'%s' is a %s here, which hides the builtin %s()", name, sym_kind_name[y->kind],
                    name);
        cs_parse_fail_at(P, pos, "'%s' is a %s, not a function", name, sym_kind_name[y->kind]);
    }
    if (y)
        f = -1;   /* a function of the file's hides a hand-mapped builtin */
    if (b < 0 && f < 0 && !y)
        cs_parse_fail_at(P, pos, "unknown function '%s'", name);
    if (y && y->fn->defining)
        cs_parse_fail_at(P, pos, "recursive call to '%s'", name);
    const fe_builtin *fb = f >= 0 ? cs_builtin(f) : NULL;
    if (fb && fb->draws && P->ctx != CTX_RESET && P->ctx != CTX_STEP)
        cs_parse_fail_at(P, pos, "%s() can only be used in the reset and step blocks", name);
    advance(P);   /* '(' */
    size_t base = P->n_scratch;
    kwarg *kw = fb ? cs_parse_alloc(P, P->ast, KW_COUNT * sizeof *kw) : NULL;
    parse_args(P, name, kw, fb ? fb->keywords : 0);
    unsigned got = (unsigned)(P->n_scratch - base);
    int lo, hi;
    if (fb) {
        lo = fb->min_args;
        hi = fb->max_args;
    } else {
        lo = hi = b >= 0 ? cs_op_table[b].dsl_arity : (int)y->fn->n_params;
        if (lo < 0)
            lo = 1;
    }
    if (got < (unsigned)lo || (hi >= 0 && got > (unsigned)hi))
        arity_error(P, pos, name, lo, hi, got);
    expr *e = collect(P, fb ? E_FUNC : b >= 0 ? E_BUILTIN : E_CALL, pos, base);
    e->op = b >= 0 ? (unsigned)b : 0;
    e->index = f >= 0 ? (unsigned)f : 0;
    e->kw = kw;
    e->sym = y;
    return e;
}

static expr *parse_name(parser *P)
{
    const char *s = P->src + P->tok.pos;
    size_t n = P->tok.len, pos = P->tok.pos;
    advance(P);
    if (is(P, CS_TOK_LPAREN))
        return parse_call(P, s, n, pos);
    if (find_builtin(s, n) >= 0)
        cs_parse_fail_at(P, pos, "'%.*s' is a function; call it as %.*s(...)", (int)n, s, (int)n, s);
    if (text_is(s, n, "pi")) {
        expr *e = new_expr(P, E_NUM, pos, 0);
        e->num = M_PI;
        return e;
    }
    if (text_is(s, n, "true") || text_is(s, n, "false")) {
        expr *e = new_expr(P, E_BOOL, pos, 0);
        e->num = text_is(s, n, "true");
        return e;
    }
    if (text_is(s, n, "action")) {
        if (P->ctx != CTX_STEP)
            cs_parse_fail_at(P, pos, "'action' can only be read in the step block");
        return new_expr(P, E_ACTION, pos, 0);
    }
    if (text_is(s, n, "reward") || text_is(s, n, "terminated")) {
        if (P->ctx != CTX_STEP)
            cs_parse_fail_at(P, pos, "'%.*s' can only be used in the step block", (int)n, s);
        expr *e = new_expr(P, E_OUTPUT, pos, 0);
        e->index = text_is(s, n, "terminated");
        return e;
    }
    if (is_reserved(s, n))
        cs_parse_fail_at(P, pos, "'%.*s' is a reserved word, not a value", (int)n, s);
    sym *y = lookup(P, s, n);
    if (!y && cs_builtin_find(s, n) >= 0)
        cs_parse_fail_at(P, pos, "'%.*s' is a function; call it as %.*s(...)", (int)n, s, (int)n, s);
    if (!y)
        cs_parse_fail_at(P, pos, "unknown name '%.*s'", (int)n, s);
    expr *e;
    switch (y->kind) {
    case SYM_FN:
        cs_parse_fail_at(P, pos, "'%s' is a function; call it as %s(...)", y->name, y->name);
    case SYM_STATE:
        if (P->ctx == CTX_FN)
            cs_parse_fail_at(P, pos, "state '%s' cannot be read inside a function; pass it as an argument", y->name);
        if (P->ctx == CTX_GLOBAL)
            cs_parse_fail_at(P, pos, "state '%s' cannot be used here (only in observe, reset and step)", y->name);
        e = new_expr(P, E_STATE, pos, 0);
        e->index = y->index;
        break;
    case SYM_INFO:
        if (P->ctx != CTX_STEP && P->ctx != CTX_RESET)
            cs_parse_fail_at(P, pos, "info value '%s' can only be read in the reset and step blocks, after it is "
                    "assigned", y->name);
        e = new_expr(P, E_INFO, pos, 0);
        e->index = y->index;
        break;
    case SYM_PARAM: e = new_expr(P, E_PARAM, pos, 0); break;
    case SYM_CONST: e = new_expr(P, E_CONST, pos, 0); break;
    case SYM_LOCAL: e = new_expr(P, E_LOCAL, pos, 0); break;
    case SYM_LOOP: e = new_expr(P, E_LOOP, pos, 0); break;
    default:
        e = new_expr(P, E_SLOT, pos, 0);
        e->index = y->index;
        break;
    }
    e->sym = y;
    return e;
}

static expr *parse_primed(parser *P)
{
    const char *s = P->src + P->tok.pos;
    size_t n = P->tok.len, pos = P->tok.pos;
    if (P->ctx != CTX_STEP)
        cs_parse_fail_at(P, pos, "%.*s' can only be read in the step block", (int)n, s);
    sym *y = lookup(P, s, n);
    if (!y || y->kind != SYM_STATE)
        cs_parse_fail_at(P, pos, "'%.*s' is not a state, so %.*s' means nothing", (int)n, s, (int)n, s);
    advance(P);
    expr *e = new_expr(P, E_NEXT, pos, 0);
    e->index = y->index;
    e->sym = y;
    return e;
}

/* [a, b, c]: the items on the scratch, then one E_ARRAY. */
static expr *parse_array(parser *P)
{
    size_t pos = P->tok.pos;
    enter(P, pos);
    advance(P);
    if (is(P, CS_TOK_RBRACKET))
        cs_parse_fail_at(P, pos, "an array literal needs at least one item ([] has no shape)");
    size_t base = P->n_scratch;
    for (;;) {
        if (P->n_scratch - base == ITEMS_MAX)
            cs_parse_fail_at(P, P->tok.pos, "too many items in an array literal (at most %d)", ITEMS_MAX);
        size_t at = P->tok.pos;
        push(P, parse_expr(P), CS_OP_COUNT, at);
        if (!is(P, CS_TOK_COMMA))
            break;
        advance(P);
    }
    if (!is(P, CS_TOK_RBRACKET))
        cs_parse_fail_at(P, P->tok.pos, "expected ',' or ']' in the array literal opened at %s, got %s",
                where(P, pos, (char[24]){0}), describe(P));
    advance(P);
    P->depth--;
    return collect(P, E_ARRAY, pos, base);
}

static expr *parse_primary(parser *P)
{
    size_t pos = P->tok.pos;
    switch (P->tok.kind) {
    case CS_TOK_NUMBER: {
        expr *e = new_expr(P, E_NUM, pos, 0);
        e->num = P->tok.number;
        e->integer = P->tok.integer;
        advance(P);
        return e;
    }
    case CS_TOK_NAME:
        return parse_name(P);
    case CS_TOK_PRIMED:
        return parse_primed(P);
    case CS_TOK_LBRACKET:
        return parse_array(P);
    case CS_TOK_LPAREN: {
        advance(P);
        expr *e = parse_expr(P);
        if (!is(P, CS_TOK_RPAREN))
            cs_parse_fail_at(P, P->tok.pos, "expected ')' to close the '(' at %s, got %s",
                    where(P, pos, (char[24]){0}), describe(P));
        advance(P);
        return e;
    }
    default:
        cs_parse_fail_at(P, pos, "expected an expression, got %s", describe(P));
    }
}

/* One item of a subscript: an index, or a slice lo:hi with either left out. */
static index_item parse_index_item(parser *P)
{
    index_item it = {false, NULL, NULL, P->tok.pos};
    if (!is(P, CS_TOK_COLON))
        it.lo = parse_expr(P);
    if (!is(P, CS_TOK_COLON))
        return it;
    it.slice = true;
    advance(P);
    if (is(P, CS_TOK_COLON))
        cs_parse_fail_at(P, P->tok.pos, "a slice takes no step: write a[i:j] (step 1)");
    if (!is(P, CS_TOK_COMMA) && !is(P, CS_TOK_RBRACKET))
        it.hi = parse_expr(P);
    if (is(P, CS_TOK_COLON))
        cs_parse_fail_at(P, P->tok.pos, "a slice takes no step: write a[i:j] (step 1)");
    return it;
}

/* a[i], a[i, j], a[i][j], a[1:3, :]: a[i][j] is kept as a[i, j] when the
 * first subscript has no slice (the same element, one gather). */
static expr *parse_postfix(parser *P)
{
    expr *e = parse_primary(P);
    unsigned entered = 0;
    while (is(P, CS_TOK_LBRACKET)) {
        size_t pos = P->tok.pos;
        enter(P, pos);   /* v[0][0]...: the AST gets deeper with each */
        entered++;
        advance(P);
        index_item items[CS_RANK_MAX];
        unsigned n = 0;
        for (;;) {
            if (n == CS_RANK_MAX)
                cs_parse_fail_at(P, P->tok.pos, "too many indices (an array has at most %d axes)", CS_RANK_MAX);
            items[n++] = parse_index_item(P);
            if (!is(P, CS_TOK_COMMA))
                break;
            advance(P);
        }
        expect(P, CS_TOK_RBRACKET, "after the index");
        bool merge = e->kind == E_INDEX && e->n_items + n <= CS_RANK_MAX;
        for (unsigned k = 0; merge && k < e->n_items; k++)
            merge = !e->items[k].slice;
        if (!merge) {
            expr *x = new_expr(P, E_INDEX, pos, 1);
            x->start = e->start;
            x->kid[0] = e;
            x->items = cs_parse_alloc(P, P->ast, CS_RANK_MAX * sizeof *x->items);
            e = x;
        }
        memcpy(e->items + e->n_items, items, n * sizeof *items);
        e->n_items += n;
    }
    P->depth -= entered;
    return e;
}

static expr *parse_unary(parser *P)
{
    if (!is(P, CS_TOK_MINUS))
        return parse_postfix(P);
    size_t pos = P->tok.pos;
    enter(P, pos);
    advance(P);
    expr *e = new_expr(P, E_NEG, pos, 1);
    e->kid[0] = parse_unary(P);
    P->depth--;
    return e;
}

enum { LEVEL_OR, LEVEL_AND, LEVEL_ADD, LEVEL_MUL };

static expr *parse_not(parser *P);

static bool chain_op(const parser *P, int level, cs_op *op)
{
    switch (P->tok.kind) {
    case CS_TOK_OR: *op = CS_OP_OR; return level == LEVEL_OR;
    case CS_TOK_AND: *op = CS_OP_AND; return level == LEVEL_AND;
    case CS_TOK_PLUS: *op = CS_OP_ADD; return level == LEVEL_ADD;
    case CS_TOK_MINUS: *op = CS_OP_SUB; return level == LEVEL_ADD;
    case CS_TOK_STAR: *op = CS_OP_MUL; return level == LEVEL_MUL;
    case CS_TOK_SLASH: *op = CS_OP_DIV; return level == LEVEL_MUL;
    case CS_TOK_SLASHSLASH: *op = CS_OP_IDIV; return level == LEVEL_MUL;
    case CS_TOK_PERCENT: *op = CS_OP_MOD; return level == LEVEL_MUL;
    default: return false;
    }
}

static expr *parse_chain(parser *P, int level);

static expr *parse_operand(parser *P, int level)
{
    switch (level) {
    case LEVEL_OR: return parse_chain(P, LEVEL_AND);
    case LEVEL_AND: return parse_not(P);
    case LEVEL_ADD: return parse_chain(P, LEVEL_MUL);
    default: return parse_unary(P);
    }
}

/* a op b op c ... at one precedence level, kept as a list: evaluated left
 * to right exactly as written, and no left-deep tree to recurse down. */
static expr *parse_chain(parser *P, int level)
{
    size_t pos = P->tok.pos;
    expr *first = parse_operand(P, level);
    cs_op op;
    if (!chain_op(P, level, &op))
        return first;
    size_t base = P->n_scratch;
    push(P, first, CS_OP_COUNT, pos);
    while (chain_op(P, level, &op)) {
        size_t op_pos = P->tok.pos;
        if (P->n_scratch - base >= UINT32_MAX / 2)
            cs_parse_fail_at(P, op_pos, "expression too long");
        advance(P);
        push(P, parse_operand(P, level), op, op_pos);
    }
    return collect(P, E_CHAIN, pos, base);
}

static bool comparison(cs_tok_kind k, cs_op *op)
{
    switch (k) {
    case CS_TOK_LT: *op = CS_OP_LT; return true;
    case CS_TOK_LE: *op = CS_OP_LE; return true;
    case CS_TOK_GT: *op = CS_OP_GT; return true;
    case CS_TOK_GE: *op = CS_OP_GE; return true;
    case CS_TOK_EQ: *op = CS_OP_EQ; return true;
    case CS_TOK_NE: *op = CS_OP_NE; return true;
    default: return false;
    }
}

static expr *parse_comparison(parser *P)
{
    expr *a = parse_chain(P, LEVEL_ADD);
    cs_op op;
    if (!comparison(P->tok.kind, &op))
        return a;
    size_t pos = P->tok.pos;
    advance(P);
    expr *e = new_expr(P, E_CMP, pos, 2);
    e->op = op;
    e->start = a->start;
    e->kid[0] = a;
    e->kid[1] = parse_chain(P, LEVEL_ADD);
    if (comparison(P->tok.kind, &op))
        cs_parse_fail_at(P, P->tok.pos, "comparisons cannot be chained; combine them with 'and'");
    return e;
}

static expr *parse_not(parser *P)
{
    if (!is(P, CS_TOK_NOT))
        return parse_comparison(P);
    size_t pos = P->tok.pos;
    enter(P, pos);
    advance(P);
    expr *e = new_expr(P, E_NOT, pos, 1);
    e->kid[0] = parse_not(P);
    P->depth--;
    return e;
}

/* c ? a : b, right-associative; the lowest precedence. */
static expr *parse_expr(parser *P)
{
    enter(P, P->tok.pos);
    expr *c = parse_chain(P, LEVEL_OR);
    if (is(P, CS_TOK_QUESTION)) {
        expr *e = new_expr(P, E_COND, P->tok.pos, 3);
        advance(P);
        e->start = c->start;
        e->kid[0] = c;
        e->kid[1] = parse_expr(P);
        expect(P, CS_TOK_COLON, "in 'cond ? a : b'");
        e->kid[2] = parse_expr(P);
        c = e;
    }
    if (word_is(P, "if"))   /* Python's a if c else b, wherever a value ends */
        cs_parse_fail_at(P, P->tok.pos, "expected the end of the expression, got 'if': a choice is written "
                "C ? A : B (y' = bounced ? -y1 : y1), not A if C else B");
    P->depth--;
    return c;
}


/* ---- statements ------------------------------------------------------ */

/* name, name', ... up to '=' (not consumed). */
static void parse_targets(parser *P)
{
    P->n_targets = 0;
    for (;;) {
        if (!is(P, CS_TOK_NAME) && !is(P, CS_TOK_PRIMED))
            cs_parse_fail_at(P, P->tok.pos, "expected a name to assign, got %s", describe(P));
        if (P->n_targets == ITEMS_MAX)
            cs_parse_fail_at(P, P->tok.pos, "too many names on the left of '='");
        P->targets = grow_array(P, P->targets, &P->cap_targets, P->n_targets + 1, sizeof *P->targets);
        target *t = &P->targets[P->n_targets++];
        memset(t, 0, sizeof *t);
        t->primed = is(P, CS_TOK_PRIMED);
        t->name = P->src + P->tok.pos;
        t->len = P->tok.len;
        t->pos = P->tok.pos;
        advance(P);
        if (!is(P, CS_TOK_COMMA))
            break;
        advance(P);
    }
    if (!is(P, CS_TOK_ASSIGN))
        cs_parse_fail_at(P, P->tok.pos, "expected '=' after the name%s to assign, got %s",
                P->n_targets > 1 ? "s" : "", describe(P));
    advance(P);
}

/* Outputs are assigned once: never inside a loop, which would assign them
 * once per iteration. */
static void not_in_loop(parser *P, const target *t, const char *what)
{
    if (P->loops)
        cs_parse_fail_at(P, t->pos, "%s cannot be assigned inside a loop (it is assigned once): compute it in "
                "a local and assign it after the loop", what);
}

/* What each target is; errors before the value is parsed, in source order.
 * A local (a function's slot) assigned before is reassigned; a new name
 * becomes one once the value is parsed (define_targets). */
static void check_targets(parser *P)
{
    cs_program *p = P->p;
    char what[CS_NAME_MAX + 8];
    for (size_t i = 0; i < P->n_targets; i++) {
        target *t = &P->targets[i];
        int n = (int)t->len;
        for (size_t j = 0; j < i; j++)
            if (P->targets[j].primed == t->primed && P->targets[j].len == t->len &&
                !memcmp(P->targets[j].name, t->name, t->len))
                cs_parse_fail_at(P, t->pos, "'%.*s%s' is assigned twice", n, t->name, t->primed ? "'" : "");
        sym *y = lookup(P, t->name, t->len);
        if (t->primed) {
            if (P->ctx != CTX_STEP)
                cs_parse_fail_at(P, t->pos, "%.*s' can only be assigned in the step block", n, t->name);
            if (!y || y->kind != SYM_STATE)
                cs_parse_fail_at(P, t->pos, "'%.*s' is not a state, so %.*s' cannot be assigned", n, t->name, n,
                        t->name);
            snprintf(what, sizeof what, "%s'", y->name);
            not_in_loop(P, t, what);
            if (p->next[y->index])
                cs_parse_fail_at(P, t->pos, "%.*s' is assigned twice", n, t->name);
            t->kind = T_NEXT;
            t->state = y->index;
            continue;
        }
        if (P->ctx == CTX_POLICY && text_is(t->name, t->len, "action")) {
            not_in_loop(P, t, "'action'");
            if (p->named[P->policy].action[0])
                cs_parse_fail_at(P, t->pos, "'action' is assigned twice");
            t->kind = T_ACTION;
            continue;
        }
        bool reward = text_is(t->name, t->len, "reward");
        if (P->ctx == CTX_STEP && (reward || text_is(t->name, t->len, "terminated"))) {
            not_in_loop(P, t, reward ? "'reward'" : "'terminated'");
            if (reward ? p->reward : p->terminated)
                cs_parse_fail_at(P, t->pos, "'%.*s' is assigned twice", n, t->name);
            t->kind = reward ? T_REWARD : T_TERMINATED;
            continue;
        }
        if (y && y->kind == SYM_INFO && (P->ctx == CTX_STEP || P->ctx == CTX_RESET)) {
            snprintf(what, sizeof what, "info '%s'", y->name);
            not_in_loop(P, t, what);
            const cs_info_item *it = &p->info_items[y->index];
            if (P->ctx == CTX_STEP ? it->step : it->restart)
                cs_parse_fail_at(P, t->pos, "info '%s' is assigned twice", y->name);
            t->kind = T_INFO;
            t->state = y->index;
            continue;
        }
        if (y && y->kind == SYM_STATE && P->ctx == CTX_STEP)
            cs_parse_fail_at(P, t->pos, "'%s' is a state: assign its next value as %s' = ...", y->name, y->name);
        if (y && y->kind == SYM_STATE && P->ctx == CTX_RESET) {
            snprintf(what, sizeof what, "state '%s'", y->name);
            not_in_loop(P, t, what);
            if (p->restart[y->index])
                cs_parse_fail_at(P, t->pos, "state '%s' is assigned twice in reset", y->name);
            t->kind = T_RESET;
            t->state = y->index;
            continue;
        }
        if (y && y->kind == SYM_LOOP)
            cs_parse_fail_at(P, t->pos, "'%s' is a loop variable and cannot be assigned", y->name);
        if (y && y->kind == (P->ctx == CTX_FN ? SYM_SLOT : SYM_LOCAL)) {
            t->kind = P->ctx == CTX_FN ? T_SLOT : T_LOCAL;   /* reassigned */
            t->sym = y;
            continue;
        }
        check_new_name(P, t->name, t->len, t->pos);
        t->kind = P->ctx == CTX_FN ? T_SLOT : T_LOCAL;
        t->fresh = true;
    }
}

/* The new names of a statement, defined once its value is parsed (so the
 * value cannot read them). */
static void define_targets(parser *P, target *targets, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        target *t = &targets[k];
        if (!t->fresh)
            continue;
        t->sym = define(P, t->name, t->len, t->pos, t->kind == T_SLOT ? SYM_SLOT : SYM_LOCAL);
        if (t->kind == T_SLOT)
            t->sym->index = P->fn->n_slots++;
    }
}

static bstmt *parse_statement(parser *P);

/* After a statement: end of line, or the block's '}'. */
static void end_statement(parser *P)
{
    if (is(P, CS_TOK_EOL))
        skip_eols(P);
    else if (!is(P, CS_TOK_RBRACE))
        cs_parse_fail_at(P, P->tok.pos, "expected the end of the statement, got %s", describe(P));
}

static void expect_block_open(parser *P, const char *what)
{
    if (!is(P, CS_TOK_LBRACE))
        cs_parse_fail_at(P, P->tok.pos, "expected '{' after '%s', got %s", what, describe(P));
    advance(P);
    skip_eols(P);
}

static void unclosed(parser *P, size_t open)
{
    char at[24];
    cs_parse_fail_at(P, P->tok.pos, "expected '}' to close the block opened at %s, got end of input",
            where(P, open, at));
}

/* for NAME in range(N) { ... } or range(A, B): parsed once, with its names
 * resolved; cs_lower_statements runs the body once per iteration, the
 * variable a compile-time int in each. Names first assigned in the body
 * are the body's. */
static bstmt *parse_for(parser *P)
{
    size_t pos = P->tok.pos;
    enter(P, pos);   /* loops in loops: the parser recurses */
    advance(P);   /* 'for' */
    const char *s = P->src + P->tok.pos;
    size_t n = P->tok.len, var_pos = P->tok.pos;
    check_new_name(P, s, n, var_pos);
    advance(P);
    if (!word_is(P, "in"))
        cs_parse_fail_at(P, P->tok.pos, "expected 'in' after 'for %.*s', got %s", (int)n, s, describe(P));
    advance(P);
    if (!word_is(P, "range") || peek(P) != CS_TOK_LPAREN)
        cs_parse_fail_at(P, P->tok.pos, "a loop runs over range(N) or range(A, B) with compile-time bounds, got %s",
                describe(P));
    size_t range_pos = P->tok.pos;
    advance(P);
    advance(P);   /* '(' */
    size_t base = P->n_scratch;
    parse_args(P, "range", NULL, 0);
    unsigned got = (unsigned)(P->n_scratch - base);
    if (got < 1 || got > 2)
        arity_error(P, range_pos, "range", 1, 2, got);
    bstmt *st = cs_parse_alloc(P, P->ast, sizeof *st);
    st->pos = pos;
    st->lo = got == 2 ? P->scratch[base].e : NULL;
    st->hi = P->scratch[base + got - 1].e;
    P->n_scratch = base;
    sym *mark = P->scope;
    st->var = define(P, s, n, var_pos, SYM_LOOP);
    size_t open = P->tok.pos;
    expect_block_open(P, "range(...)");
    P->loops++;
    bstmt **tail = &st->body;
    while (!is(P, CS_TOK_RBRACE)) {
        if (is(P, CS_TOK_EOF))
            unclosed(P, open);
        *tail = parse_statement(P);
        tail = &(*tail)->next;
        end_statement(P);
    }
    advance(P);
    P->loops--;
    P->depth--;
    end_scope(P, mark);
    return st;
}

/* One statement of a block, loop or function body, parsed with its names
 * resolved and its new names defined; not lowered. */
static bstmt *parse_statement(parser *P)
{
    size_t pos = P->tok.pos;
    cs_tok_kind next = peek(P);
    if (word_is(P, "for") && next == CS_TOK_NAME)
        return parse_for(P);
    /* Python's statements, written from habit (a name assigned is still a name) */
    static const char *const python_words[] = {"if", "elif", "else", "while", "for"};
    for (size_t k = 0; k < sizeof python_words / sizeof python_words[0]; k++)
        if (word_is(P, python_words[k]) && next != CS_TOK_ASSIGN && next != CS_TOK_COMMA)
            cs_parse_fail_at(P, pos, "'%s' starts no statement: a block holds only assignments (NAME = EXPR, "
                    "x' = EXPR) and loops (for i in range(N) { ... }); a choice is an expression, "
                    "y1' = y1 < 0 ? -y1 : y1", python_words[k]);
    if (word_is(P, "return"))
        cs_parse_fail_at(P, pos, P->ctx == CTX_FN ? "'return' must be the function's last statement, outside loops"
                                                   : "'return' is only allowed in a function");
    parse_targets(P);
    check_targets(P);
    bstmt *st = cs_parse_alloc(P, P->ast, sizeof *st);
    st->pos = pos;
    st->n_targets = (unsigned)P->n_targets;
    st->targets = cs_parse_alloc(P, P->ast, P->n_targets * sizeof *st->targets);
    memcpy(st->targets, P->targets, P->n_targets * sizeof *st->targets);
    st->value = parse_expr(P);
    define_targets(P, st->targets, st->n_targets);
    return st;
}

/* A reset, step or policy statement (or loop): parsed, then lowered and
 * assigned at once. */
static void block_statement(parser *P)
{
    cs_lower_statements(P, parse_statement(P), NULL);
}

/* reset { ... } or step { ... }. */
static void parse_block(parser *P, context ctx, const char *what)
{
    size_t open = P->tok.pos;
    expect_block_open(P, what);
    sym *mark = P->scope;
    P->ctx = ctx;
    while (!is(P, CS_TOK_RBRACE)) {
        if (is(P, CS_TOK_EOF))
            unclosed(P, open);
        block_statement(P);
        arena_free(&P->temp);
        end_statement(P);
    }
    advance(P);
    end_scope(P, mark);
    P->ctx = CTX_GLOBAL;
}

/* ---- declarations ---------------------------------------------------- */

static void once(parser *P, section *s, const char *what)
{
    char at[24];
    if (s->seen)
        cs_parse_fail_at(P, P->tok.pos, "'%s' is declared twice (first at %s)", what, where(P, s->pos, at));
    s->seen = true;
    s->pos = P->tok.pos;
    advance(P);
}

static void need(parser *P, const section *s, const char *what, const char *before)
{
    if (!s->seen)
        cs_parse_fail_at(P, P->tok.pos, "declare '%s' before '%s'", what, before);
}

/* A name being declared at top level: returns its text. */
static void declared_name(parser *P, const char *after, const char **s, size_t *n, size_t *pos)
{
    if (!is(P, CS_TOK_NAME))
        cs_parse_fail_at(P, P->tok.pos, "expected a name after '%s', got %s", after, describe(P));
    *s = P->src + P->tok.pos;
    *n = P->tok.len;
    *pos = P->tok.pos;
    check_new_name(P, *s, *n, *pos);
    advance(P);
}

/* A declared type: its element type (the program's real for `real`) and
 * shape. */
typedef struct {
    cs_type type;
    uint32_t shape;
    size_t pos;
} decl_type;

/* After ':' : real, int or bool, then dims [d0][d1] or [d0, d1]. */
static decl_type parse_type(parser *P, bool shaped)
{
    decl_type d = {P->real, CS_SCALAR, P->tok.pos};
    if (word_is(P, "int"))
        d.type = CS_I32;
    else if (word_is(P, "bool"))
        d.type = CS_BOOL;
    else if (!word_is(P, "real"))
        cs_parse_fail_at(P, P->tok.pos, "expected a type (real, int or bool) after ':', got %s", describe(P));
    advance(P);
    unsigned dims[CS_RANK_MAX], rank = 0;
    while (is(P, CS_TOK_LBRACKET)) {
        if (!shaped)
            cs_parse_fail_at(P, P->tok.pos, "a param is a number: it has no dimensions");
        advance(P);
        for (;;) {
            if (rank == CS_RANK_MAX)
                cs_parse_fail_at(P, P->tok.pos, "an array has at most %d axes", CS_RANK_MAX);
            dims[rank++] = (unsigned)cs_lower_constant_int(P, parse_expr(P), "an array's length", 1, 65535);
            if (!is(P, CS_TOK_COMMA))
                break;
            advance(P);
        }
        expect(P, CS_TOK_RBRACKET, "after the array's lengths");
    }
    d.shape = cs_lower_shape(P, rank, dims, d.pos);
    return d;
}

static void parse_env(parser *P)
{
    once(P, &P->env, "env");
    if (!is(P, CS_TOK_NAME))
        cs_parse_fail_at(P, P->tok.pos, "expected the environment's name after 'env', got %s", describe(P));
    snprintf(P->p->name, sizeof P->p->name, "%.*s", (int)P->tok.len, P->src + P->tok.pos);
    advance(P);
    if (!is(P, CS_TOK_STRING))
        cs_parse_fail_at(P, P->tok.pos, "expected the title string after 'env %s', got %s", P->p->name, describe(P));
    if (P->tok.len >= sizeof P->p->title)
        cs_parse_fail_at(P, P->tok.pos, "the title is longer than %zu bytes", sizeof P->p->title - 1);
    memcpy(P->p->title, P->src + P->tok.pos + 1, P->tok.len);
    P->p->title[P->tok.len] = 0;
    advance(P);
}

static const cs_param_override *find_override(parser *P, const char *name)
{
    for (unsigned k = 0; k < P->n_ov; k++)
        if (!strcmp(P->ov[k].name, name)) {
            P->ov_used[k] = true;
            return &P->ov[k];
        }
    return NULL;
}

/* param NAME [: int | bool | real] = E: a compile-time number the
 * overrides may replace. */
static void parse_param(parser *P)
{
    advance(P);
    const char *s;
    size_t n, pos;
    declared_name(P, "param", &s, &n, &pos);
    cs_type type = P->real;
    if (is(P, CS_TOK_COLON)) {
        advance(P);
        type = parse_type(P, false).type;
    }
    expect(P, CS_TOK_ASSIGN, "after the param's name");
    char what[CS_NAME_MAX + 16];
    snprintf(what, sizeof what, "param '%.*s'", (int)n, s);
    expr *e = parse_expr(P);
    double v = 0;
    bool is_int = false;
    if (type == CS_BOOL) {
        if (e->kind != E_BOOL)
            cs_parse_fail_at(P, e->start, "param '%.*s' is a bool: its value must be true or false", (int)n, s);
        v = e->num;
    } else {
        v = cs_lower_constant(P, e, what);
        cs_lower_ceval_typed(P, e, &v, &is_int);
        if (type == CS_I32 && !is_int)
            cs_parse_fail_at(P, e->start, "param '%.*s' is an int, got the real %s (write an int, or declare "
                    "it real)", (int)n, s, cs_shortest(v, (char[CS_REPR_MAX]){0}));
    }
    sym *y = define(P, s, n, pos, SYM_PARAM);
    y->type = type;
    *P->params_tail = y;
    P->params_tail = &y->next_param;
    const cs_param_override *o = find_override(P, y->name);
    if (o && o->is_range) {
        if (type != P->real) {
            P->ov_failed = true;
            cs_parse_fail_at(P, pos, "param '%s' is %s: only real params take a range override", y->name,
                    type == CS_I32 ? "an int" : "a bool");
        }
        int slot = cs_program_add_param(P->p, y->name, P->real);
        if (slot < 0)
            fail_plain(P, "out of memory");
        y->ranged = true;
        y->index = (unsigned)slot;
        y->low = o->low;
        y->high = o->high;
        y->v = cs_lower_scalar(cs_parse_built(P, cs_leaf(P->g, CS_OP_PARAM, P->real, slot), pos), P->real);
        return;
    }
    if (o) {
        v = o->value;
        bool fits = type == CS_BOOL ? v == 0 || v == 1
                  : type == CS_I32 ? v == floor(v) && v >= INT32_MIN && v <= INT32_MAX : true;
        if (!fits) {
            P->ov_failed = true;
            cs_parse_fail_at(P, pos, "param '%s' is %s: its override must be %s, got %s", y->name,
                    type == CS_I32 ? "an int" : "a bool", type == CS_I32 ? "an integer" : "0, 1, true or false",
                    cs_shortest(v, (char[CS_REPR_MAX]){0}));
        }
    }
    if (!isfinite(v))
        cs_parse_fail_at(P, pos, "param '%s' must be finite, got %s", y->name, cs_shortest(v, (char[CS_REPR_MAX]){0}));
    y->has_value = type != CS_BOOL;
    y->is_int = type == CS_I32;
    y->value = v;
    y->v = cs_lower_scalar(cs_parse_built(P, cs_const(P->g, type, v), pos), type);
}

/* const NAME [: TYPE] = E: the value of E, of its own type (or the
 * declared one: an int converts to real, nothing else converts). */
static void parse_const(parser *P)
{
    advance(P);
    const char *s;
    size_t n, pos;
    declared_name(P, "const", &s, &n, &pos);
    bool typed = is(P, CS_TOK_COLON);
    decl_type d = {0};
    if (typed) {
        advance(P);
        d = parse_type(P, true);
    }
    expect(P, CS_TOK_ASSIGN, "after the const's name");
    expr *e = parse_expr(P);
    val v = cs_lower(P, e, NULL);
    if (typed) {
        char want[48], got[48];
        bool fits = cs_graph_node(P->g, v.node)->shape == d.shape &&
                    (v.type == d.type || (v.type == CS_I32 && d.type == P->real));
        if (!fits)
            cs_parse_fail_at(P, e->start, "const '%.*s' is declared %s but its value is %s", (int)n, s,
                    cs_lower_type_shape_text(P, d.type, d.shape, want), cs_lower_shape_text(P, v.node, got));
        v = cs_lower_convert(P, v, d.type, e->start);
    }
    sym *y = define(P, s, n, pos, SYM_CONST);
    y->v = v;
    y->has_value = !v.n && cs_lower_ceval_typed(P, e, &y->value, &y->is_int);
    if (!y->has_value)
        y->why_not = copy_name(P, v.n ? "it is an array" : P->cerr, strlen(v.n ? "it is an array" : P->cerr));
    /* as a param's: a constant that is not a number is a mistake */
    else if (!isfinite(y->value))
        cs_parse_fail_at(P, pos, "const '%s' must be finite, got %s", y->name, cs_shortest(y->value, (char[CS_REPR_MAX]){0}));
    if (typed && d.type == P->real)
        y->is_int = false;
}

/* state a, b: int, grid: bool[10][10], c: each name with its own type
 * (real when none is written). */
static void parse_state(parser *P)
{
    once(P, &P->state, "state");
    for (;;) {
        if (P->p->n_vars == ITEMS_MAX)
            cs_parse_fail_at(P, P->tok.pos, "too many states (at most %d)", ITEMS_MAX);
        const char *s;
        size_t n, pos;
        declared_name(P, P->p->n_vars ? "," : "state", &s, &n, &pos);
        decl_type d = {P->real, CS_SCALAR, pos};
        if (is(P, CS_TOK_COLON)) {
            advance(P);
            d = parse_type(P, true);
        }
        unsigned size = cs_shape_of(P->g, d.shape)->size;
        if (P->state_elements + size > STATE_ELEMENTS_MAX)
            cs_parse_fail_at(P, pos, "too many state elements (at most %d in all)", STATE_ELEMENTS_MAX);
        P->state_elements += size;
        sym *y = define(P, s, n, pos, SYM_STATE);
        int k = cs_program_add_state(P->p, y->name, d.type, d.shape);
        if (k < 0)
            fail_plain(P, "out of memory");
        y->index = (unsigned)k;
        if (!is(P, CS_TOK_COMMA))
            break;
        advance(P);
    }
}

static void add_input(parser *P, const char *name, cs_type t, double low, double high)
{
    if (cs_program_add_input(P->p, name, t, low, high) < 0)
        fail_plain(P, "out of memory");
}

static void parse_action(parser *P)
{
    once(P, &P->action, "action");
    cs_program *p = P->p;
    size_t pos = P->tok.pos;
    if (word_is(P, "discrete")) {
        advance(P);
        double n = cs_lower_constant_int(P, parse_expr(P), "the number of discrete actions", 1, INT32_MAX);
        p->action_kind = CS_ACTION_DISCRETE;
        p->n_actions = (unsigned)n;
        add_input(P, "action", CS_I32, 0, n - 1);
        P->action_val = cs_lower_scalar(cs_parse_built(P, cs_leaf(P->g, CS_OP_INPUT, CS_I32, 0), pos), CS_I32);
        return;
    }
    if (!word_is(P, "box"))
        cs_parse_fail_at(P, pos, "expected 'discrete N' or 'box(low, high)' after 'action', got %s", describe(P));
    advance(P);
    if (!is(P, CS_TOK_LPAREN))
        cs_parse_fail_at(P, P->tok.pos, "expected '(' after 'box', got %s", describe(P));
    advance(P);
    size_t base = P->n_scratch;
    parse_args(P, "box", NULL, 0);
    unsigned got = (unsigned)(P->n_scratch - base);
    if (got != 2 && got != 3)
        cs_parse_fail_at(P, pos, "'box' takes 2 or 3 arguments (low, high[, n]), got %u", got);
    const scratch_item *a = &P->scratch[base];
    double low = cs_lower_constant(P, a[0].e, "the low bound of the action");
    double high = cs_lower_constant(P, a[1].e, "the high bound of the action");
    if (!isfinite(low) || !isfinite(high) || low > high)
        cs_parse_fail_at(P, a[0].e->start, "the action's bounds must be finite with low <= high, got %s and %s",
                         cs_shortest(low, (char[CS_REPR_MAX]){0}),
                         cs_shortest(high, (char[CS_REPR_MAX]){0}));
    p->action_kind = CS_ACTION_BOX;
    if (got == 2) {
        add_input(P, "action", P->real, low, high);
        P->action_val = cs_lower_scalar(cs_parse_built(P, cs_leaf(P->g, CS_OP_INPUT, P->real, 0), pos), P->real);
    } else {
        unsigned n = (unsigned)cs_lower_constant_int(P, a[2].e, "the number of action components", 1, ITEMS_MAX);
        cs_node *leaves = cs_parse_alloc(P, &P->temp, n * sizeof *leaves);
        for (unsigned k = 0; k < n; k++) {
            char name[CS_NAME_MAX];
            snprintf(name, sizeof name, "action%u", k);
            add_input(P, name, P->real, low, high);
            leaves[k] = cs_parse_built(P, cs_leaf(P->g, CS_OP_INPUT, P->real, k), pos);
        }
        P->action_val = cs_lower_value(P, cs_parse_built(P, cs_stack(P->g, n, leaves), pos));
    }
    P->n_scratch = base;
}

/* One observation: E [in discrete(N) | in box(LO, HI)]. */
static void parse_observation(parser *P)
{
    expr *e = parse_expr(P);
    char ty[48];
    val v = cs_lower(P, e, NULL);
    cs_obs_space space = CS_OBS_BOX;
    double low = -INFINITY, high = INFINITY;
    int64_t count = 0;
    if (word_is(P, "in")) {
        advance(P);
        size_t pos = P->tok.pos;
        bool discrete = word_is(P, "discrete");
        if (!discrete && !word_is(P, "box"))
            cs_parse_fail_at(P, pos, "expected a space after 'in': discrete(N) or box(low, high), got %s", describe(P));
        advance(P);
        if (!is(P, CS_TOK_LPAREN))
            cs_parse_fail_at(P, P->tok.pos, "expected '(' after '%s', got %s", discrete ? "discrete" : "box",
                    describe(P));
        advance(P);
        size_t base = P->n_scratch;
        parse_args(P, discrete ? "discrete" : "box", NULL, 0);
        unsigned got = (unsigned)(P->n_scratch - base);
        if (got != (discrete ? 1u : 2u))
            cs_parse_fail_at(P, pos, discrete ? "'discrete' takes 1 argument (the number of values), got %u"
                                              : "'box' takes 2 arguments (low, high), got %u", got);
        const scratch_item *a = &P->scratch[base];
        if (discrete) {
            count = (int64_t)cs_lower_constant_int(P, a[0].e, "the number of discrete values", 1, INT32_MAX);
            if (v.type == P->real)
                cs_parse_fail_at(P, e->start, "a discrete observation must be an int or a bool, got %s (convert it "
                        "with int(...))", cs_lower_shape_text(P, v.node, ty));
            space = CS_OBS_DISCRETE;
        } else {
            low = cs_lower_constant(P, a[0].e, "the low bound of the observation");
            high = cs_lower_constant(P, a[1].e, "the high bound of the observation");
            if (!isfinite(low) || !isfinite(high) || low > high)
                cs_parse_fail_at(P, a[0].e->start, "the observation's bounds must be finite with low <= high, got "
                        "%s and %s", cs_shortest(low, (char[CS_REPR_MAX]){0}), cs_shortest(high, (char[CS_REPR_MAX]){0}));
        }
        P->n_scratch = base;
    }
    /* a box is stored as float32: ints and bools become reals */
    cs_node n = space == CS_OBS_BOX ? cs_lower_convert(P, v, P->real, e->start).node : v.node;
    unsigned size = cs_node_shape(P->g, n)->size;
    if (P->obs_elements + size > OBS_ELEMENTS_MAX)
        cs_parse_fail_at(P, e->start, "too many observation elements (at most %d in all)", OBS_ELEMENTS_MAX);
    P->obs_elements += size;
    char name[CS_NAME_MAX] = "";
    if (e->sym && (e->kind == E_STATE || e->kind == E_CONST || e->kind == E_PARAM))
        snprintf(name, sizeof name, "%s", e->sym->name);
    if (cs_program_add_obs(P->p, name, n, space, low, high, count) < 0)
        fail_plain(P, "out of memory");
}

static void parse_observe(parser *P)
{
    need(P, &P->state, "state", "observe");
    once(P, &P->observe, "observe");
    P->ctx = CTX_OBSERVE;
    for (;;) {
        if (P->p->n_obs_items == ITEMS_MAX)
            cs_parse_fail_at(P, P->tok.pos, "too many observations (at most %d)", ITEMS_MAX);
        parse_observation(P);
        if (!is(P, CS_TOK_COMMA))
            break;
        advance(P);
    }
    P->ctx = CTX_GLOBAL;
}

static void parse_fn(parser *P)
{
    advance(P);
    const char *s;
    size_t n, pos;
    declared_name(P, "fn", &s, &n, &pos);
    fn_def *f = cs_parse_alloc(P, &P->perm, sizeof *f);
    f->tail = &f->body;
    f->defining = true;
    sym *self = define(P, s, n, pos, SYM_FN);
    self->fn = f;
    sym *mark = P->scope;
    P->ctx = CTX_FN;
    P->fn = f;
    P->ast = &P->perm;
    expect(P, CS_TOK_LPAREN, "after the function's name");
    while (!is(P, CS_TOK_RPAREN)) {
        if (f->n_params == ITEMS_MAX)
            cs_parse_fail_at(P, P->tok.pos, "too many parameters (at most %d)", ITEMS_MAX);
        if (!is(P, CS_TOK_NAME))
            cs_parse_fail_at(P, P->tok.pos, "expected a parameter name, got %s", describe(P));
        sym *twice = lookup(P, P->src + P->tok.pos, P->tok.len);
        if (twice && twice->kind == SYM_SLOT)
            cs_parse_fail_at(P, P->tok.pos, "parameter '%s' is declared twice (first at %s)", twice->name,
                    where(P, twice->pos, (char[24]){0}));
        check_new_name(P, P->src + P->tok.pos, P->tok.len, P->tok.pos);
        sym *y = define(P, P->src + P->tok.pos, P->tok.len, P->tok.pos, SYM_SLOT);
        y->index = f->n_slots++;
        f->n_params++;
        advance(P);
        if (is(P, CS_TOK_COMMA))
            advance(P);
        else if (!is(P, CS_TOK_RPAREN))
            cs_parse_fail_at(P, P->tok.pos, "expected ',' or ')' after a parameter, got %s", describe(P));
    }
    advance(P);
    if (is(P, CS_TOK_ASSIGN)) {
        advance(P);
        f->result = parse_expr(P);
    } else if (is(P, CS_TOK_LBRACE)) {
        size_t open = P->tok.pos;
        expect_block_open(P, "fn");
        for (;;) {
            if (is(P, CS_TOK_EOF))
                unclosed(P, open);
            if (is(P, CS_TOK_RBRACE))
                cs_parse_fail_at(P, P->tok.pos, "function '%s' ends without a return statement", self->name);
            if (word_is(P, "return")) {
                advance(P);
                f->result = parse_expr(P);
                end_statement(P);
                if (!is(P, CS_TOK_RBRACE))
                    cs_parse_fail_at(P, P->tok.pos, "expected '}' after the return statement (it must be the last), got %s",
                            describe(P));
                advance(P);
                break;
            }
            *f->tail = parse_statement(P);
            f->tail = &(*f->tail)->next;
            end_statement(P);
        }
    } else {
        cs_parse_fail_at(P, P->tok.pos, "expected '=' or '{' after the parameters of '%s', got %s", self->name,
                describe(P));
    }
    end_scope(P, mark);
    P->ctx = CTX_GLOBAL;
    P->fn = NULL;
    P->ast = &P->temp;
    f->defining = false;
}

/* info NAME [: TYPE], ...: values the reset and the step each assign once,
 * reported beside the observation (Gymnasium's info dict). */
static void parse_info(parser *P)
{
    advance(P);
    for (;;) {
        const char *s;
        size_t n, pos;
        declared_name(P, "info", &s, &n, &pos);
        decl_type d = {P->real, CS_SCALAR, pos};
        if (is(P, CS_TOK_COLON)) {
            advance(P);
            d = parse_type(P, true);
        }
        if (P->reset.seen || P->step.seen)
            cs_parse_fail_at(P, pos, "declare info '%.*s' before reset and step (both assign it)", (int)n, s);
        if (P->p->n_info + (uint64_t)cs_shape_of(P->g, d.shape)->size > STATE_ELEMENTS_MAX)
            cs_parse_fail_at(P, pos, "too many info elements (at most %d in all)", STATE_ELEMENTS_MAX);
        sym *y = define(P, s, n, pos, SYM_INFO);
        int k = cs_program_add_info(P->p, y->name, d.type, d.shape);
        if (k < 0)
            fail_plain(P, "out of memory");
        y->index = (unsigned)k;
        if (!is(P, CS_TOK_COMMA))
            break;
        advance(P);
    }
}

/* keep NAME, ...: states that keep their value through an auto-reset
 * (only an explicit reset gives them their reset value). */
static void parse_keep(parser *P)
{
    need(P, &P->state, "state", "keep");
    advance(P);
    for (;;) {
        if (!is(P, CS_TOK_NAME))
            cs_parse_fail_at(P, P->tok.pos, "expected a state's name after 'keep', got %s", describe(P));
        sym *y = lookup(P, P->src + P->tok.pos, P->tok.len);
        if (!y || y->kind != SYM_STATE)
            cs_parse_fail_at(P, P->tok.pos, "'%.*s' is not a state: only states can be kept", (int)P->tok.len,
                    P->src + P->tok.pos);
        if (P->p->vars[y->index].kept)
            cs_parse_fail_at(P, P->tok.pos, "state '%s' is kept twice", y->name);
        P->p->vars[y->index].kept = true;
        advance(P);
        if (!is(P, CS_TOK_COMMA))
            break;
        advance(P);
    }
}

/* Every info value needs a value in the block just parsed. */
static void need_info(parser *P, bool step, size_t pos)
{
    for (unsigned k = 0; k < P->p->n_info_items; k++) {
        const cs_info_item *it = &P->p->info_items[k];
        if (!(step ? it->step : it->restart))
            cs_parse_fail_at(P, pos, "%s does not assign info '%s' (both reset and step assign every info value)",
                    step ? "step" : "reset", it->name);
    }
}

static void parse_reset(parser *P)
{
    need(P, &P->state, "state", "reset");
    once(P, &P->reset, "reset");
    parse_block(P, CTX_RESET, "reset");
    for (unsigned k = 0; k < P->p->n_vars; k++)
        if (!P->p->restart[k])
            cs_parse_fail_at(P, P->reset.pos, "reset does not assign state '%s' (every state needs a reset value)",
                    P->p->vars[k].name);
    need_info(P, false, P->reset.pos);
}

static void parse_step(parser *P)
{
    need(P, &P->state, "state", "step");
    need(P, &P->action, "action", "step");
    once(P, &P->step, "step");
    parse_block(P, CTX_STEP, "step");
    cs_program *p = P->p;
    for (unsigned k = 0; k < p->n_vars; k++)
        if (!p->next[k])
            cs_parse_fail_at(P, P->step.pos, "step does not assign %s' (every state needs a next value)",
                    p->vars[k].name);
    if (!p->reward)
        cs_parse_fail_at(P, P->step.pos, "step does not assign 'reward'");
    if (!p->terminated)
        cs_parse_fail_at(P, P->step.pos, "step does not assign 'terminated'");
    need_info(P, true, P->step.pos);
}

/* policy NAME { ...; action = E }: a policy an agent can choose by name. */
static void parse_policy(parser *P)
{
    need(P, &P->state, "state", "policy");
    need(P, &P->action, "action", "policy");
    size_t at = P->tok.pos;
    advance(P);
    if (!is(P, CS_TOK_NAME))
        cs_parse_fail_at(P, P->tok.pos, "expected a name after 'policy', got %s", describe(P));
    const char *s = P->src + P->tok.pos;
    int n = (int)P->tok.len;
    static const char *const agents[] = {"random", "linear", "mlp"};
    for (size_t k = 0; k < sizeof agents / sizeof agents[0]; k++)
        if (text_is(s, (size_t)n, agents[k]))
            cs_parse_fail_at(P, P->tok.pos, "'%s' is a built-in agent: name the policy otherwise", agents[k]);
    if (n >= CS_NAME_MAX)
        cs_parse_fail_at(P, P->tok.pos, "the policy's name is longer than %d bytes", CS_NAME_MAX - 1);
    char name[CS_NAME_MAX];
    snprintf(name, sizeof name, "%.*s", n, s);
    if (cs_program_find_named(P->p, name))
        cs_parse_fail_at(P, P->tok.pos, "policy '%s' is declared twice", name);
    int k = cs_program_add_named(P->p, name);
    if (k < 0)
        fail_plain(P, "out of memory");
    P->policy = (unsigned)k;
    advance(P);
    parse_block(P, CTX_POLICY, "policy");
    if (!P->p->named[k].action[0])
        cs_parse_fail_at(P, at, "policy '%s' does not assign 'action'", name);
}

static void parse_declaration(parser *P)
{
    if (word_is(P, "env")) {
        parse_env(P);
    } else if (word_is(P, "max_steps")) {
        once(P, &P->max_steps, "max_steps");
        P->p->max_steps = (int64_t)cs_lower_constant_int(P, parse_expr(P), "max_steps", 1, INT32_MAX);
    } else if (word_is(P, "reward_threshold")) {
        once(P, &P->threshold, "reward_threshold");
        expr *e = parse_expr(P);
        double v = cs_lower_constant(P, e, "reward_threshold");
        if (!isfinite(v))
            cs_parse_fail_at(P, e->start, "reward_threshold must be finite, got %s", cs_shortest(v, (char[CS_REPR_MAX]){0}));
        P->p->reward_threshold = v;
    } else if (word_is(P, "param")) {
        parse_param(P);
    } else if (word_is(P, "const")) {
        parse_const(P);
    } else if (word_is(P, "state")) {
        parse_state(P);
    } else if (word_is(P, "action")) {
        parse_action(P);
    } else if (word_is(P, "observe")) {
        parse_observe(P);
    } else if (word_is(P, "fn")) {
        parse_fn(P);
    } else if (word_is(P, "reset")) {
        parse_reset(P);
    } else if (word_is(P, "step")) {
        parse_step(P);
    } else if (word_is(P, "info")) {
        parse_info(P);
    } else if (word_is(P, "keep")) {
        parse_keep(P);
    } else if (word_is(P, "policy")) {
        parse_policy(P);
    } else if (word_is(P, "draw")) {
        cs_parse_draw(P);
    } else {
        cs_parse_fail_at(P, P->tok.pos, "expected a declaration (env, max_steps, reward_threshold, param, const, "
                               "state, action, observe, fn, reset or step), got %s", describe(P));
    }
}

/* ---- the whole source ------------------------------------------------ */

static void check_overrides(parser *P)
{
    for (unsigned k = 0; k < P->n_ov; k++) {
        if (P->ov_used[k])
            continue;
        const char *name = P->ov[k].name;
        sym *y = lookup(P, name, strlen(name));
        P->ov_failed = true;
        if (y && y->kind == SYM_CONST)
            cs_parse_fail_at(P, y->pos, "'%s' is a const and cannot be overridden (only params can)", name);
        char list[320] = "";
        size_t used = 0;
        for (sym *q = P->params; q; q = q->next_param) {
            if (used + strlen(q->name) + 8 > sizeof list) {   /* leave room for ", ..." */
                snprintf(list + used, sizeof list - used, ", ...");
                break;
            }
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", q->name);
        }
        if (!P->params)
            fail_override(P, "unknown parameter '%s' (this environment has no params)", name);
        fail_override(P, "unknown parameter '%s' (params: %s)", name, list);
    }
}

/* Range-overridden params are redrawn at every restart, from draws
 * numbered after the reset block's, so overrides never renumber those. */
static void build_param_restarts(parser *P)
{
    cs_program *p = P->p;
    cs_graph *g = P->g;
    for (sym *y = P->params; y; y = y->next_param) {
        if (!y->ranged)
            continue;
        unsigned draw = P->draws[CS_STREAM_RESTART] + y->index;
        if (draw >= DRAWS_MAX)
            cs_parse_fail_at(P, y->pos, "too many restart draws (at most %d)", DRAWS_MAX);
        cs_node u = cs_parse_built(P, cs_leaf(g, CS_OP_UNIFORM, P->real, CS_UNIFORM_ID(CS_STREAM_RESTART, draw)), y->pos);
        cs_node lo = cs_parse_built(P, cs_const(g, P->real, y->low), y->pos);
        cs_node hi = cs_parse_built(P, cs_const(g, P->real, y->high), y->pos);
        cs_node span = cs_parse_built(P, cs_binary(g, CS_OP_SUB, hi, lo), y->pos);
        cs_node scaled = cs_parse_built(P, cs_binary(g, CS_OP_MUL, span, u), y->pos);
        p->param_restart[y->index] = cs_parse_built(P, cs_binary(g, CS_OP_ADD, lo, scaled), y->pos);
    }
}

static void parse_source(parser *P)
{
    advance(P);
    skip_eols(P);
    while (!is(P, CS_TOK_EOF)) {
        parse_declaration(P);
        arena_free(&P->temp);
        if (!is(P, CS_TOK_EOL) && !is(P, CS_TOK_EOF))
            cs_parse_fail_at(P, P->tok.pos, "expected the end of the line after the declaration, got %s", describe(P));
        skip_eols(P);
    }
    const struct {
        const section *s;
        const char *name;
    } required[] = {{&P->env, "env"},         {&P->state, "state"}, {&P->action, "action"},
                    {&P->observe, "observe"}, {&P->reset, "reset"}, {&P->step, "step"}};
    for (size_t k = 0; k < sizeof required / sizeof required[0]; k++)
        if (!required[k].s->seen)
            cs_parse_fail_at(P, P->len, "missing '%s' declaration", required[k].name);
    check_overrides(P);
    build_param_restarts(P);
    char why[256];
    int at = cs_program_finish(P->p, why, sizeof why);
    if (at) {
        /* finish re-checks what the blocks checked and says which one. */
        size_t pos = at == CS_FINISH_RESET ? P->reset.pos : at == CS_FINISH_STEP ? P->step.pos : P->state.pos;
        cs_parse_fail_at(P, pos, "%s", why);
    }
}

static void check_override_list(parser *P)
{
    for (unsigned k = 0; k < P->n_ov; k++) {
        const cs_param_override *o = &P->ov[k];
        if (!memchr(o->name, 0, sizeof o->name) || !o->name[0])
            fail_override(P, "override %u has no valid name", k);
        bool ok = o->is_range ? isfinite(o->low) && isfinite(o->high) && o->low <= o->high : isfinite(o->value);
        if (!ok)
            fail_override(P, "override of '%s': the value must be finite (and low <= high for a range)", o->name);
        for (unsigned j = 0; j < k; j++)
            if (!strcmp(P->ov[j].name, o->name))
                fail_override(P, "parameter '%s' is overridden twice", o->name);
    }
}

/* setjmp lives here, apart from the parser that cs_parse owns, so nothing
 * read after a longjmp is a changed local of the function that called
 * setjmp (never inlined, for the same reason). */
static __attribute__((noinline)) int run(parser *P)
{
    if (setjmp(P->fail))
        return -1;
    if (P->n_ov && !P->ov)
        fail_plain(P, "overrides missing");
    P->ov_used = cs_parse_alloc(P, &P->perm, (P->n_ov ? P->n_ov : 1) * sizeof *P->ov_used);
    check_override_list(P);
    if (!P->src && P->len)
        fail_plain(P, "no source (NULL with a length)");
    if (!P->src)
        P->src = "";
    if (P->len > SOURCE_MAX)
        fail_plain(P, "the source is larger than 16 MiB");
    cs_lex_init(&P->lx, P->src, P->len);
    if (P->real != CS_F32 && P->real != CS_F64)
        fail_plain(P, "the real type must be f32 or f64");
    P->p = cs_program_new(P->real);
    if (!P->p)
        fail_plain(P, "out of memory");
    P->g = P->p->graph;
    parse_source(P);
    return 0;
}

int cs_parse(const char *src, size_t len, const char *filename, cs_type real,
             const cs_param_override *overrides, unsigned n_overrides,
             cs_program **out, char *err, size_t err_size)
{
    if (err && err_size)
        err[0] = 0;
    if (!out) {
        if (err && err_size)
            snprintf(err, err_size, "%s: no place for the program", filename ? filename : "<input>");
        return -1;
    }
    *out = NULL;
    parser P;
    memset(&P, 0, sizeof P);
    P.src = src;
    P.len = len;
    P.file = filename ? filename : "<input>";
    P.real = real;
    P.ov = overrides;
    P.n_ov = n_overrides;
    P.err = err;
    P.err_size = err_size;
    P.ast = &P.temp;
    P.params_tail = &P.params;
    P.work_max = WORK_MAX + (len < SOURCE_MAX ? len : SOURCE_MAX);
    int rc = run(&P);
    arena_free(&P.perm);
    arena_free(&P.temp);
    free(P.scratch);
    free(P.targets);
    free(P.tables);
    if (rc) {
        cs_program_free(P.p);
        return P.ov_failed ? -2 : -1;
    }
    *out = P.p;
    return 0;
}

/* ---- overrides ------------------------------------------------------- */

/* An optionally signed decimal, exactly n bytes. */
static int override_number(const char *s, size_t n, double *out)
{
    bool negative = n && s[0] == '-';
    if (n && (s[0] == '-' || s[0] == '+'))
        s++, n--;
    int rc = cs_lex_decimal(s, n, out);
    if (negative)
        *out = -*out;
    return rc;
}

int cs_parse_override(const char *text, cs_param_override *out, char *err, size_t err_size)
{
    char tmp[1];
    if (!err || !err_size) {
        err = tmp;
        err_size = sizeof tmp;
    }
    err[0] = 0;
    if (!text || !out) {
        snprintf(err, err_size, "override: nothing to parse");
        return -1;
    }
    memset(out, 0, sizeof *out);
    const char *eq = strchr(text, '=');
    if (!eq) {
        snprintf(err, err_size, "override '%s': expected NAME=VALUE or NAME=LOW:HIGH", text);
        return -1;
    }
    size_t n = (size_t)(eq - text);
    bool name_ok = n > 0 && n < CS_NAME_MAX && !(text[0] >= '0' && text[0] <= '9');
    for (size_t k = 0; k < n && name_ok; k++) {
        char c = text[k];
        name_ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    }
    if (!name_ok) {
        snprintf(err, err_size, "override '%s': '%.*s' is not a parameter name", text, (int)n, text);
        return -1;
    }
    memcpy(out->name, text, n);
    out->name[n] = 0;
    const char *value = eq + 1, *colon = strchr(value, ':');
    const char *parts[2] = {value, colon ? colon + 1 : NULL};
    size_t lens[2] = {colon ? (size_t)(colon - value) : strlen(value), colon ? strlen(colon + 1) : 0};
    double v[2] = {0, 0};
    if (!colon && (!strcmp(value, "true") || !strcmp(value, "false"))) {   /* a bool param's */
        out->value = value[0] == 't';
        return 0;
    }
    for (int k = 0; k < (colon ? 2 : 1); k++) {
        int rc = override_number(parts[k], lens[k], &v[k]);
        if (rc == -2) {
            snprintf(err, err_size, "override '%s': '%.*s' is out of range", text, (int)lens[k], parts[k]);
            return -1;
        }
        if (rc) {
            snprintf(err, err_size, "override '%s': '%.*s' is not a number%s", text, (int)lens[k], parts[k],
                     rc == -3 ? " (out of memory)" : "");
            return -1;
        }
    }
    if (!colon) {
        out->value = v[0];
        return 0;
    }
    if (v[0] > v[1]) {
        snprintf(err, err_size, "override '%s': the low end %s is above the high end %s", text, cs_shortest(v[0], (char[CS_REPR_MAX]){0}),
                 cs_shortest(v[1], (char[CS_REPR_MAX]){0}));
        return -1;
    }
    out->is_range = true;
    out->low = v[0];
    out->high = v[1];
    out->value = v[0];
    return 0;
}

/* ---- for the declarations parsed in files of their own (parse_draw.c) ---- */

void cs_parse_advance(parser *P) { advance(P); }
bool cs_parse_word_is(const parser *P, const char *w) { return word_is(P, w); }
const char *cs_parse_describe(parser *P) { return describe(P); }
const char *cs_parse_where(parser *P, size_t pos, char buf[24]) { return where(P, pos, buf); }
expr *cs_parse_expr(parser *P) { return parse_expr(P); }
void cs_parse_statement(parser *P) { block_statement(P); }
void cs_parse_block_open(parser *P, const char *what) { expect_block_open(P, what); }
void cs_parse_end_statement(parser *P) { end_statement(P); }
_Noreturn void cs_parse_unclosed(parser *P, size_t open)
{
    unclosed(P, open);
    longjmp(P->fail, 1);   /* not reached: unclosed fails */
}
void cs_parse_once(parser *P, section *s, const char *what) { once(P, s, what); }
void cs_parse_need(parser *P, const section *s, const char *what, const char *before) { need(P, s, what, before); }
sym *cs_parse_lookup(parser *P, const char *s, size_t n) { return lookup(P, s, n); }
sym *cs_parse_define(parser *P, const char *s, size_t n, size_t pos, sym_kind kind) { return define(P, s, n, pos, kind); }
void cs_parse_end_scope(parser *P, sym *mark) { end_scope(P, mark); }
void cs_parse_free_temp(parser *P) { arena_free(&P->temp); }
