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

/* grep "ORDER OP" if you change this enum: every op table (jit/ops.c, the
 * emitter's templates, the interpreter) is static_assert'ed against CS_OP_COUNT. */
typedef enum {
    /* leaves; imm.i says which one */
    CS_OP_CONST,    /* imm.f: the value (exact for bool/i32/u32) */
    CS_OP_CARRIED,  /* carried lane value imm.i (the state before the step) */
    CS_OP_INPUT,    /* per-step input imm.i (the action components) */
    CS_OP_PARAM,    /* per-lane parameter imm.i, read from a buffer */
    CS_OP_UNIFORM,  /* random draw imm.i of this step: real in [0, 1) */
    CS_OP_SEGSTEP,  /* i32: steps taken since the lane's last restart */
    /* unary */
    CS_OP_NEG, CS_OP_NOT, CS_OP_ABS, CS_OP_SQRT, CS_OP_EXP, CS_OP_LOG,
    CS_OP_SIN, CS_OP_COS, CS_OP_TAN, CS_OP_TANH, CS_OP_FLOOR,
    CS_OP_ROUND_F32, /* round to the nearest float and back (identity in f32) */
    CS_OP_CAST,      /* convert to the node's type */
    /* binary */
    CS_OP_ADD, CS_OP_SUB, CS_OP_MUL, CS_OP_DIV, CS_OP_POW, CS_OP_ATAN2,
    CS_OP_FMOD,      /* C fmod: sign of the dividend */
    CS_OP_MOD,       /* floored modulo, Python's %: sign of the divisor */
    CS_OP_MIN, CS_OP_MAX,
    CS_OP_LT, CS_OP_LE, CS_OP_GT, CS_OP_GE, CS_OP_EQ, CS_OP_NE,
    CS_OP_AND, CS_OP_OR,
    /* ternary */
    CS_OP_SELECT,    /* (cond, if_true, if_false) */
    CS_OP_CLIP,      /* (x, lo, hi) = min(max(x, lo), hi), NumPy's np.clip */
    /* vectors: the paper's concatenate */
    CS_OP_STACK,     /* n scalar operands -> one vector value */
    CS_OP_INDEX,     /* (vector), imm.i = component */
    CS_OP_COUNT
} cs_op;

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

/* Static facts about each op (jit/ops.c). */
typedef struct {
    const char *name;   /* as printed by dumps and accepted by the DSL */
    int arity;          /* -1: variadic (STACK) */
    bool leaf;
} cs_op_info;

extern const cs_op_info cs_op_table[CS_OP_COUNT];
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
