/* The parser's data, shared by its two halves: jit/parse.c (source text ->
 * a small syntax tree per statement, names, statements, declarations) and
 * jit/lower.c (a tree -> graph nodes through the builder, and compile-time
 * values). Private to those two files. */
#ifndef CS_PARSE_TREE_H
#define CS_PARSE_TREE_H

#include <setjmp.h>
#include <stddef.h>

#include "jit.h"
#include "lex.h"

#define SOURCE_MAX ((size_t)16 << 20)
#define NEST_MAX 200                 /* ( [ ?: unary - and not, while parsing */
#define LOWER_MAX 1000               /* lowering recursion, inlined bodies included */
#define ITEMS_MAX 65535              /* the IR's operand count is 16 bits */
#define DRAWS_MAX 65536              /* a block's uniform() calls (docs/dsl.md) */
#define WORK_MAX ((size_t)1 << 22)   /* lowering steps beyond one per source byte */
#define CHUNK_SIZE ((size_t)64 << 10)

/* Lowering recurses up to LOWER_MAX deep: the functions on that path that
 * hold locals get frames of their own, so one deep path does not pay for
 * every case's locals at every level. */
#define SMALL_FRAME __attribute__((noinline))

/* ---- arenas ---------------------------------------------------------- */

typedef struct chunk {
    struct chunk *next;
    size_t size, used;
    max_align_t data[];
} chunk;

typedef struct {
    chunk *head;
} arena;

/* ---- the parser's data ----------------------------------------------- */

typedef struct {
    cs_node node;     /* a scalar's node, or the STACK node of a vector */
    uint32_t n;       /* 0: scalar; else the vector's length */
    cs_type type;     /* CS_BOOL, CS_I32 (only the discrete action) or p->real */
} val;

typedef enum { SYM_PARAM, SYM_CONST, SYM_STATE, SYM_LOCAL, SYM_SLOT, SYM_FN } sym_kind;


typedef struct expr expr;
typedef struct sym sym;
typedef struct name_entry name_entry;

typedef struct stmt {
    struct stmt *next;
    unsigned n_targets;
    unsigned *slots;      /* frame slot of each target */
    expr *value;
    size_t pos;
} stmt;

typedef struct {
    unsigned n_params, n_slots;   /* slots: parameters first, then locals */
    stmt *body, **tail;
    expr *result;
    bool defining;                /* its body is being parsed: a call is recursion */
} fn_def;

struct sym {
    const char *name;
    sym_kind kind;
    size_t pos;
    name_entry *entry;
    sym *shadowed;        /* the same name in an outer scope */
    sym *scope_next;      /* the symbol defined before it in the same scope */
    sym *next_param;      /* params in declaration order */
    val v;                /* PARAM, CONST, LOCAL */
    unsigned index;       /* STATE: carried slot; SLOT: frame slot; ranged PARAM: param slot */
    bool ranged;          /* PARAM with a range override */
    bool has_value;       /* PARAM, CONST: `value` is its compile-time number */
    double value, low, high;
    const char *why_not;  /* CONST without a compile-time value: why */
    fn_def *fn;
};

struct name_entry {
    const char *name;
    size_t len;
    uint64_t hash;
    sym *top;             /* the visible symbol of that name, or NULL */
};

typedef enum {
    E_NUM, E_BOOL, E_PARAM, E_CONST, E_STATE, E_NEXT, E_LOCAL, E_SLOT, E_ACTION, E_OUTPUT,
    E_NEG, E_NOT, E_CHAIN, E_CMP, E_COND, E_BUILTIN, E_CALL, E_INDEX
} expr_kind;

struct expr {
    expr_kind kind;
    unsigned op;          /* CMP, BUILTIN: cs_op */
    unsigned n;           /* children */
    unsigned index;       /* INDEX: component; SLOT: frame slot; OUTPUT: 0 reward, 1 terminated;
                             uniform: draw number; STATE, NEXT: carried slot */
    size_t pos;           /* where errors about the operation point: its operator */
    size_t start;         /* where errors about the value point: its first token */
    double num;
    sym *sym;
    expr **kid;
    cs_op *ops;           /* CHAIN: ops[i] joins kid[i + 1] */
    size_t *op_pos;
};

typedef enum { CTX_GLOBAL, CTX_OBSERVE, CTX_RESET, CTX_STEP, CTX_FN, CTX_POLICY } context;

typedef enum { T_LOCAL, T_NEXT, T_RESET, T_REWARD, T_TERMINATED, T_ACTION } target_kind;

typedef struct {
    target_kind kind;
    bool primed;
    const char *name;     /* in the source: not NUL-terminated */
    size_t len, pos;
    unsigned state;
} target;

typedef struct {
    expr *e;
    cs_op op;
    size_t pos;
} scratch_item;

/* A declaration that must appear once. */
typedef struct {
    bool seen;
    size_t pos;
} section;

typedef struct {
    const char *src;
    size_t len;
    const char *file;
    cs_lexer lx;
    cs_token tok;
    char desc[80];

    cs_program *p;
    cs_graph *g;
    cs_type real;
    const cs_param_override *ov;
    unsigned n_ov;
    bool *ov_used;
    bool ov_failed;       /* the failure is the caller's override, not the source */

    char *err;
    size_t err_size;
    jmp_buf fail;

    arena perm, temp;
    arena *ast;           /* where expressions go: temp, or perm for function bodies */
    scratch_item *scratch;
    size_t n_scratch, cap_scratch;
    target *targets;
    size_t n_targets, cap_targets;

    name_entry *table;
    size_t table_cap, table_count;
    sym *scope;           /* innermost scope's symbols, newest first */
    sym *params, **params_tail;

    context ctx;
    unsigned policy;      /* CTX_POLICY: the policy's index in p->named */
    unsigned depth, lower_depth;
    size_t work, work_max;
    unsigned draws[2];    /* next draw number per stream */

    section env, max_steps, threshold, state, action, observe, reset, step;
    val action_val;
    char cerr[200];       /* why ceval failed */
    size_t cerr_pos;
} parser;

/* parse.c: errors (longjmp back to cs_parse) and the arenas */
_Noreturn void cs_parse_fail_at(parser *P, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void *cs_parse_alloc(parser *P, arena *a, size_t n);
cs_node cs_parse_built(parser *P, cs_node n, size_t pos);   /* n, or the builder's error at pos */

/* lower.c: compile-time values (false with P->cerr when not one) */
bool cs_lower_ceval(parser *P, const expr *e, double *out);
double cs_lower_constant(parser *P, const expr *e, const char *what);
double cs_lower_constant_int(parser *P, const expr *e, const char *what, double lo, double hi);

/* lower.c: a tree as graph nodes (frame: a function's arguments, or NULL) */
val cs_lower(parser *P, const expr *e, val *frame);
val cs_lower_scalar(cs_node n, cs_type t);
const char *cs_lower_type_text(val v, char buf[32]);
cs_node cs_lower_to_real(parser *P, cs_node n, cs_type t, size_t pos);
cs_node cs_lower_component(parser *P, val v, unsigned k, size_t pos);
val cs_lower_unpack_component(parser *P, val v, unsigned k, size_t pos);
void cs_lower_check_unpack(parser *P, val v, unsigned n, size_t pos);
cs_node cs_lower_real_value(parser *P, val v, size_t pos, const char *what);

#endif
