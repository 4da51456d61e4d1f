/* The IR: typed, hash-consed, elementwise expression graphs over one lane.
 *
 * A graph owns every node it creates; nodes are 32-bit ids (0 means "none"),
 * never pointers, so the node table may grow. Creating a node that already
 * exists (same op, type, operands and immediate) returns the existing id:
 * common subexpressions are shared by construction.
 *
 * The builder checks types and never aborts: on a misuse it returns 0 and keeps
 * a message (cs_graph_error). Callers that build from user input (the parser)
 * check types themselves first and report positions.
 */
#ifndef CS_IR_H
#define CS_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint32_t cs_node;

typedef enum { CS_BOOL, CS_I32, CS_U32, CS_F32, CS_F64, CS_TYPE_COUNT } cs_type;

/* The ops, generated from jit/ops.def (every fact about an op is there). */
typedef enum {
#define CS_OP(id, ...) CS_OP_##id,
#include "ops.def"
#undef CS_OP
    CS_OP_COUNT
} cs_op;
/* A literal, so that a row deleted from (or added to) ops.def fails the
 * build here until this line is updated on purpose. */
_Static_assert(CS_OP_COUNT == 41, "jit/ops.def: 41 ops expected");

typedef union {
    double f;
    int64_t i;
} cs_imm;

typedef struct {
    uint8_t op;      /* cs_op */
    uint8_t type;    /* cs_type; for STACK the element type */
    uint16_t n_in;   /* operand count */
    uint32_t in;     /* index of the first operand in the graph's operand pool */
    cs_imm imm;
} cs_node_data;

/* How the C dialect computes an f32 op with its fast <fn_f32>_near, equal
 * to fn_f32 where <fn_f32>_far is 0 (jit/emit.c): in a pass of its own over
 * the block, redone with fn_f32 when some lane is far (fmod and %, whose
 * operands are often expressions and far is rare); or, where its operand is
 * a leaf, in a copy of the kernel's loop taken at a step where every lane's
 * leaf is near (sin and cos: a pass of their own would cost the redo at
 * every step of Pendulum and Acrobot, whose angles are often far). */
typedef enum { CS_NEAR_NONE, CS_NEAR_PASS, CS_NEAR_LEAF } cs_near;

/* Static facts about each op (jit/ops.c, from jit/ops.def). */
typedef struct {
    const char *name;   /* as printed by dumps */
    int arity;          /* -1: variadic (STACK) */
    bool leaf;
    const char *dsl;    /* the DSL builtin's name, "" if none */
    const char *dsl_quoted; /* the same as messages write it: 'sin' */
    int dsl_arity;      /* -1: one or more */
    const char *infix;  /* the C operator, or NULL */
    const char *fn_f64, *fn_f32; /* the function that computes it (mathf.h), or NULL */
    bool libm_f64;      /* fn_f64 is a C library call (scalar) */
    const char *fast_f64; /* its replacement in the fast math mode (mathd.h), or NULL */
    cs_near near_f32;   /* fn_f32 has a fast <fn_f32>_near where <fn_f32>_far is 0, used so */
    bool near_f64;      /* fn_f64 has a vectorizable <fn_f64>_near(x, &far), its bits where not far */
} cs_op_info;

extern const cs_op_info cs_op_table[CS_OP_COUNT];

/* The one evaluator of every op over constant operands, in the node's type
 * (f32 in float, through the functions the generated code calls): the
 * interpreter computes with it and constant folding folds with it, so a
 * folded constant is the value the run would have computed. Leaves, STACK
 * and INDEX are the caller's (they read lanes); integers are computed
 * exactly, in double, and are the caller's to range-check. fast_f64: the
 * fast math mode's f64 functions (ops.def's fast_f64, jit/mathd.h) instead
 * of glibc's, as the program's kernels call them (cs_program.fast_f64).
 * jit/op_eval.c */
double cs_op_eval(cs_op op, cs_type t, bool fast_f64, double a, double b, double c);
const char *cs_type_name(cs_type t);
bool cs_type_is_real(cs_type t);

typedef struct cs_graph cs_graph;

cs_graph *cs_graph_new(void);
void cs_graph_free(cs_graph *g);
const char *cs_graph_error(const cs_graph *g);  /* "" when none */

/* Node count including the unused id 0; valid ids are 1 .. count-1, and every
 * node's operands have smaller ids (creation order is a topological order). */
uint32_t cs_graph_count(const cs_graph *g);
const cs_node_data *cs_graph_node(const cs_graph *g, cs_node n);
cs_node cs_graph_input(const cs_graph *g, cs_node n, unsigned k);

/* Builders. Types must match as the op requires; results: arithmetic keeps the
 * operand type, comparisons and AND/OR/NOT give bool. */
cs_node cs_const(cs_graph *g, cs_type t, double value);
cs_node cs_leaf(cs_graph *g, cs_op op, cs_type t, int64_t index);
cs_node cs_unary(cs_graph *g, cs_op op, cs_node a);
cs_node cs_binary(cs_graph *g, cs_op op, cs_node a, cs_node b);
cs_node cs_ternary(cs_graph *g, cs_op op, cs_node a, cs_node b, cs_node c);
cs_node cs_cast(cs_graph *g, cs_type t, cs_node a);
cs_node cs_stack(cs_graph *g, unsigned n, const cs_node *items);
cs_node cs_index(cs_graph *g, cs_node vector, unsigned k);

/* The one general constructor the others use: hash-consed, type-checked. */
cs_node cs_make(cs_graph *g, cs_op op, cs_type t, unsigned n_in, const cs_node *in, cs_imm imm);

/* Rewrite each root (0 stays 0) so that every leaf for which `map` returns a
 * node is replaced by it: how observations of a state become observations of
 * the next state. Iterative, so any graph depth is fine. 0, or -1 on failure. */
typedef cs_node (*cs_leaf_map)(void *ctx, const cs_node_data *leaf);
int cs_substitute(cs_graph *g, cs_node *roots, unsigned n_roots, cs_leaf_map map, void *ctx);

#endif
