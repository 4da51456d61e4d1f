/* The parser's data, shared by its halves: jit/parse.c (source text -> a
 * small syntax tree per statement, names, statements, declarations),
 * jit/lower.c (a tree -> graph nodes through the builder, statements and
 * loops executed, compile-time values), jit/lower_builtins.c (the builtin
 * functions the front end maps by hand: arrays, casts, reductions and
 * draws) and the declarations parsed in files of their own
 * (jit/parse_draw.c: the draw block). Private to the front end. */
#ifndef CS_PARSE_TREE_H
#define CS_PARSE_TREE_H

#include <setjmp.h>
#include <stddef.h>

#include "jit.h"
#include "lex.h"

#define SOURCE_MAX ((size_t)16 << 20)
#define NEST_MAX 200                 /* ( [ ?: unary - and not, while parsing */
#define LOWER_MAX 1000               /* lowering recursion, inlined bodies and loops included */
#define ITEMS_MAX 65535              /* the IR's operand count is 16 bits */
#define DRAWS_MAX 65536              /* a block's uniform() calls (docs/dsl.md) */
#define WORK_MAX ((size_t)1 << 22)   /* lowering steps beyond one per source byte */
#define CHUNK_SIZE ((size_t)64 << 10)
#define ARRAY_ELEMENTS_MAX 4096      /* elements of one array value (docs/dsl.md's limits) */
#define STATE_ELEMENTS_MAX 65536     /* state elements (slots) in all */
#define OBS_ELEMENTS_MAX 65536       /* observation elements in all */
#define TABLE_ELEMENTS_MAX 65536     /* constant table elements in all */
#define TABLES_MAX 1024              /* distinct constant tables */

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

/* A point to return to (cs_parse_release): what a loop's iteration
 * allocated while lowering goes, its syntax trees stay. */
typedef struct {
    chunk *head, *after;
    size_t used;
} arena_mark;

/* ---- the parser's data ----------------------------------------------- */

/* A lowered value: a node, scalar or array (the node's shape, copied so
 * that messages can say it). */
typedef struct {
    cs_node node;
    uint32_t n;       /* 0: a scalar; else the length of the array's axis 0 (dim[0]) */
    cs_type type;     /* CS_BOOL, CS_I32 or p->real */
    unsigned rank;
    unsigned dim[CS_RANK_MAX];
} val;

typedef enum { SYM_PARAM, SYM_CONST, SYM_STATE, SYM_LOCAL, SYM_SLOT, SYM_FN, SYM_LOOP, SYM_INFO } sym_kind;

typedef struct parser parser;
typedef struct expr expr;
typedef struct sym sym;
typedef struct name_entry name_entry;
typedef struct bstmt bstmt;

typedef struct {
    unsigned n_params, n_slots;   /* slots: parameters first, then locals */
    bstmt *body, **tail;
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
    cs_type type;         /* PARAM: its declared type */
    unsigned index;       /* STATE: variable; SLOT: frame slot; ranged PARAM: param slot */
    bool ranged;          /* PARAM with a range override */
    bool has_value;       /* PARAM, CONST, LOOP: `value` is its compile-time number (a loop's: this iteration's) */
    bool is_int;          /* ... and it is an int */
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
    E_NEG, E_NOT, E_CHAIN, E_CMP, E_COND, E_BUILTIN, E_CALL, E_INDEX,
    E_LOOP,      /* a loop variable */
    E_FUNC,      /* a builtin that lower_builtins.c maps by hand (index: which) */
    E_ARRAY,     /* [a, b, ...] */
    E_INFO       /* an info value read back in the block that assigned it (index: which) */
} expr_kind;

/* A keyword argument of a builtin call: axis=, fill=, shape=. */
typedef enum { KW_AXIS, KW_FILL, KW_SHAPE, KW_COUNT } kw_name;

typedef struct {
    expr *value;
    size_t pos;
} kwarg;

/* One item of a subscript a[i, j:k, :]: an index, or a slice whose bounds
 * may be left out (NULL). */
typedef struct {
    bool slice;
    expr *lo, *hi;        /* index: lo */
    size_t pos;
} index_item;

struct expr {
    expr_kind kind;
    unsigned op;          /* CMP, BUILTIN: cs_op */
    unsigned n;           /* children */
    unsigned index;       /* OUTPUT: 0 reward, 1 terminated; SLOT: frame slot; STATE, NEXT: variable;
                             FUNC: the builtin (lower_builtins.c) */
    size_t pos;           /* where errors about the operation point: its operator */
    size_t start;         /* where errors about the value point: its first token */
    double num;
    bool integer;         /* NUM: an int literal */
    sym *sym;
    expr **kid;
    cs_op *ops;           /* CHAIN: ops[i] joins kid[i + 1] */
    size_t *op_pos;
    kwarg *kw;            /* FUNC: [KW_COUNT], value NULL when not given */
    index_item *items;    /* INDEX: the subscript's items (of kid[0]) */
    unsigned n_items;
};

typedef enum { CTX_GLOBAL, CTX_OBSERVE, CTX_RESET, CTX_STEP, CTX_FN, CTX_POLICY, CTX_DRAW } context;

typedef enum { T_LOCAL, T_SLOT, T_NEXT, T_RESET, T_REWARD, T_TERMINATED, T_ACTION, T_INFO } target_kind;

typedef struct {
    target_kind kind;
    bool primed;
    const char *name;     /* in the source: not NUL-terminated */
    size_t len, pos;
    unsigned state;       /* NEXT, RESET: the variable; INFO: the info value */
    sym *sym;             /* LOCAL: the local (new or reassigned); SLOT: its slot's symbol */
    bool fresh;           /* LOCAL, SLOT: first assigned by this statement */
} target;

/* A statement of a block, a loop body or a function body: an assignment
 * (n_targets > 0) or a loop `for var in range(lo, hi) { body }`. */
struct bstmt {
    bstmt *next;
    size_t pos;
    unsigned n_targets;
    target *targets;
    expr *value;
    sym *var;             /* loop */
    expr *lo, *hi;        /* loop: lo NULL means 0 */
    bstmt *body;
};

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

/* The builtins the front end maps by hand (lower_builtins.c): a name, its
 * arguments, the keywords it takes, and whether it draws. */
typedef struct {
    const char *name;
    int min_args, max_args;       /* max -1: any number */
    unsigned keywords;            /* bit k: kw_name k is accepted */
    bool draws;                   /* only in reset and step; numbered when lowered */
    val (*lower)(parser *P, const expr *e, val *frame);
    int arg;                      /* what `lower` needs to tell builtins apart (an op, a type) */
} fe_builtin;

typedef struct {
    const double *values;         /* a table's contents, for the dedup map */
    cs_node node;
} table_entry;

struct parser {
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
    fn_def *fn;           /* CTX_FN: the function being parsed */
    unsigned loops;       /* loop bodies being parsed around the current statement */
    unsigned policy;      /* CTX_POLICY: the policy's index in p->named */
    unsigned depth, lower_depth;
    size_t work, work_max;
    unsigned draws[2];    /* next draw number per stream */
    unsigned state_elements, obs_elements, table_elements;
    table_entry *tables;  /* the constant tables built so far (lower.c) */
    size_t n_tables, cap_tables;

    section env, max_steps, threshold, state, action, observe, reset, step, draw;
    val action_val;
    char cerr[200];       /* why ceval failed */
    size_t cerr_pos;
};

/* parse.c: errors (longjmp back to cs_parse), the arenas and scratch */
_Noreturn void cs_parse_fail_at(parser *P, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void *cs_parse_alloc(parser *P, arena *a, size_t n);
arena_mark cs_parse_mark(const arena *a);
void cs_parse_release(arena *a, arena_mark m);
void *cs_parse_grow(parser *P, void *array, size_t *cap, size_t need, size_t size);
cs_node cs_parse_built(parser *P, cs_node n, size_t pos);   /* n, or the builder's error at pos */

/* parse.c: what the declarations parsed in files of their own use */
void cs_parse_advance(parser *P);
bool cs_parse_word_is(const parser *P, const char *w);
const char *cs_parse_describe(parser *P);                        /* the current token, for messages */
const char *cs_parse_where(parser *P, size_t pos, char buf[24]);  /* "12:5" */
expr *cs_parse_expr(parser *P);
void cs_parse_statement(parser *P);              /* a block's `a, b = E`, parsed, lowered and assigned */
void cs_parse_block_open(parser *P, const char *what);   /* '{' and the end of lines after it */
void cs_parse_end_statement(parser *P);          /* end of line, or the block's '}' */
_Noreturn void cs_parse_unclosed(parser *P, size_t open);
void cs_parse_once(parser *P, section *s, const char *what);     /* a declaration that must appear once */
void cs_parse_need(parser *P, const section *s, const char *what, const char *before);
sym *cs_parse_lookup(parser *P, const char *s, size_t n);
sym *cs_parse_define(parser *P, const char *s, size_t n, size_t pos, sym_kind kind);
void cs_parse_end_scope(parser *P, sym *mark);   /* the scopes opened since `mark` (a P->scope) */
void cs_parse_free_temp(parser *P);              /* after a statement: its trees */

/* parse_draw.c: `draw { ... }`, the picture (docs/dsl.md, "Pictures") */
void cs_parse_draw(parser *P);

/* lower.c: compile-time values (false with P->cerr when not one) */
bool cs_lower_ceval(parser *P, const expr *e, double *out);
bool cs_lower_ceval_typed(parser *P, const expr *e, double *out, bool *is_int);
double cs_lower_constant(parser *P, const expr *e, const char *what);
double cs_lower_constant_int(parser *P, const expr *e, const char *what, double lo, double hi);
/* An integer known while lowering (a compile-time number, a loop variable,
 * an int constant): true and *out, else false (nothing lowered twice). */
bool cs_lower_static_int(parser *P, const expr *e, const char *what, long long *out);
long long cs_lower_need_int(parser *P, const expr *e, val *frame, const char *what);
/* A run-time index of axis length dim at pos: in the step, a site strict
 * mode checks (cs_program_add_index_site). */
void cs_lower_note_index(parser *P, cs_node index, unsigned dim, size_t pos);

/* lower.c: a tree as graph nodes (frame: a function's arguments, or NULL) */
val cs_lower(parser *P, const expr *e, val *frame);
val cs_lower_scalar(cs_node n, cs_type t);
val cs_lower_value(parser *P, cs_node n);          /* a node as a value: its type and length */
const char *cs_lower_type_text(val v, char buf[32]);
const char *cs_lower_shape_text(parser *P, cs_node n, char buf[48]);   /* "real[2][3]" */
const char *cs_lower_type_shape_text(parser *P, cs_type t, uint32_t shape, char buf[48]);
cs_node cs_lower_to_real(parser *P, cs_node n, cs_type t, size_t pos);
val cs_lower_convert(parser *P, val v, cs_type t, size_t pos);    /* int/bool -> real, bool -> int, ... */
cs_node cs_lower_component(parser *P, val v, unsigned k, size_t pos);
val cs_lower_unpack_component(parser *P, val v, unsigned k, size_t pos);
void cs_lower_check_unpack(parser *P, val v, unsigned n, size_t pos);
cs_node cs_lower_real_value(parser *P, val v, size_t pos, const char *what);
val cs_lower_apply(parser *P, cs_op op, unsigned na, const val *a, size_t pos, const char *what);
cs_node cs_lower_table(parser *P, cs_type t, uint32_t shape, const double *values, size_t pos);
uint32_t cs_lower_shape(parser *P, unsigned rank, const unsigned *dims, size_t pos);
void cs_lower_spend(parser *P, size_t n, size_t pos);
/* Runs statements: a block's (frame NULL, targets are locals and outputs)
 * or a function body's (targets are frame slots). */
void cs_lower_statements(parser *P, const bstmt *s, val *frame);

/* lower_builtins.c: the hand-mapped builtins */
int cs_builtin_find(const char *s, size_t n);      /* its index, or -1 */
const fe_builtin *cs_builtin(int index);
const char *cs_builtin_keyword(kw_name k);

#endif
