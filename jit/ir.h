/* The IR: typed, hash-consed expression graphs over one lane.
 *
 * A graph owns every node it creates; nodes are 32-bit ids (0 means "none"),
 * never pointers, so the node table may grow. Creating a node that already
 * exists (same op, type, shape, operands and immediate) returns the existing
 * id: common subexpressions are shared by construction.
 *
 * A node is a scalar or a fixed-size array of one lane (up to CS_RANK_MAX
 * axes, at most CS_ARRAY_MAX elements, row-major): its shape is an id into
 * the graph's table of shapes, 0 for a scalar. An array op stays one node
 * (as ggml and XLA's HLO keep it); the emitter lowers it to loops over its
 * elements (or, for small arrays, the scalarize pass splits it first).
 * Elementwise ops (CS_KIND_MAP) broadcast their operands as NumPy does.
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
_Static_assert(CS_OP_COUNT == 63, "jit/ops.def: 63 ops expected");

typedef enum { CS_KIND_LEAF, CS_KIND_MAP, CS_KIND_SHAPE, CS_KIND_REDUCE } cs_op_kind;

/* Shapes: up to three axes, each at most 65535 long, at most CS_ARRAY_MAX
 * elements. The front end sets a smaller limit of its own (docs/dsl.md). */
#define CS_RANK_MAX 3
#define CS_ARRAY_MAX (1u << 16)
#define CS_SCALAR 0u   /* the shape id of a scalar */

typedef struct {
    unsigned rank;             /* 0 for a scalar */
    unsigned dim[CS_RANK_MAX]; /* dim[k] for k < rank, 1 beyond */
    unsigned size;             /* elements: the product of the dims (1 for a scalar) */
} cs_shape;

/* imm.i of SLICE: the start on each axis. */
#define CS_SLICE_IMM(s0, s1, s2) ((int64_t)(s0) | (int64_t)(s1) << 16 | (int64_t)(s2) << 32)
#define CS_SLICE_START(imm, axis) ((unsigned)(((imm) >> (16 * (axis))) & 0xffff))
/* imm.i of SHIFT and ROLL: the axis and the signed amount. */
#define CS_MOVE_IMM(axis, amount) ((int64_t)(amount) * 256 + (int64_t)(axis))
#define CS_MOVE_AXIS(imm) ((unsigned)((imm) & 0xff))
#define CS_MOVE_AMOUNT(imm) ((int32_t)(((imm) - (int64_t)((imm) & 0xff)) / 256))
/* imm.i of a reduction over every element. */
#define CS_ALL_AXES (-1)

typedef union {
    double f;
    int64_t i;
} cs_imm;

typedef struct {
    uint8_t op;      /* cs_op */
    uint8_t type;    /* cs_type: the element type */
    uint16_t n_in;   /* operand count */
    uint32_t in;     /* index of the first operand in the graph's operand pool */
    uint32_t shape;  /* id in the graph's shape table; CS_SCALAR for a scalar */
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
    int arity;          /* -1: variadic */
    cs_op_kind kind;
    bool leaf;          /* kind == CS_KIND_LEAF */
    const char *dsl;    /* the DSL builtin's name, "" if none */
    const char *dsl_quoted; /* the same as messages write it: 'sin' */
    int dsl_arity;      /* -1: one or more */
    const char *infix;  /* the C operator, or NULL */
    const char *fn_f64, *fn_f32; /* the function that computes it (mathf.h), or NULL */
    const char *fn_int; /* the function that computes it on i32 (mathi.h), or NULL */
    bool libm_f64;      /* fn_f64 is a C library call (scalar) */
    const char *fast_f64; /* its replacement in the fast math mode (mathd.h), or NULL */
    cs_near near_f32;   /* fn_f32 has a fast <fn_f32>_near where <fn_f32>_far is 0, used so */
    bool near_f64;      /* fn_f64 has a vectorizable <fn_f64>_near(x, &far), its bits where not far */
} cs_op_info;

extern const cs_op_info cs_op_table[CS_OP_COUNT];

/* The one evaluator of every elementwise op (CS_KIND_MAP) over one element
 * of constant operands, in the node's type (f32 in float, i32 with C's
 * wrapping, through the functions the generated code calls): the
 * interpreter computes with it and constant folding folds with it, so a
 * folded constant is the value the run would have computed. Leaves and the
 * shape and reduction ops are the caller's (they move or fold elements:
 * jit/interp.c); a and b are the operands' values, t the node's type and
 * `from` the first operand's (CAST's source). fast_f64: the fast math mode's
 * f64 functions (ops.def's fast_f64, jit/mathd.h) instead of glibc's, as the
 * program's kernels call them (cs_program.fast_f64). jit/op_eval.c */
double cs_op_eval(cs_op op, cs_type t, bool fast_f64, double a, double b, double c);
/* The same with the first operand's type given (CAST needs where it comes
 * from; cs_op_eval assumes t). */
double cs_op_eval_from(cs_op op, cs_type t, cs_type from, bool fast_f64, double a, double b, double c);
/* The step of a reduction: the accumulator after element `x` at position
 * `at` (acc holds the value so far; for ARGMAX/ARGMIN best holds the best
 * value and acc its index). The first element starts it: cs_reduce_start. */
void cs_reduce_start(cs_op op, cs_type t, double x, double *acc, double *best);
void cs_reduce_step(cs_op op, cs_type t, double x, unsigned at, double *acc, double *best);
const char *cs_type_name(cs_type t);
bool cs_type_is_real(cs_type t);

typedef struct cs_graph cs_graph;

cs_graph *cs_graph_new(void);
/* An empty graph with old's shapes and constant tables (the same ids and
 * offsets): what a pass that rebuilds the graph starts from. */
cs_graph *cs_graph_new_like(const cs_graph *old);
void cs_graph_free(cs_graph *g);
const char *cs_graph_error(const cs_graph *g);  /* "" when none */

/* Node count including the unused id 0; valid ids are 1 .. count-1, and every
 * node's operands have smaller ids (creation order is a topological order). */
uint32_t cs_graph_count(const cs_graph *g);
const cs_node_data *cs_graph_node(const cs_graph *g, cs_node n);
cs_node cs_graph_input(const cs_graph *g, cs_node n, unsigned k);

/* Shapes. cs_shape_id gives the id of a shape (CS_SCALAR for rank 0),
 * adding it to the table when new; 0 with the graph's error set when a dim
 * is 0 or the shape is too large (rank > CS_RANK_MAX, size > CS_ARRAY_MAX,
 * a dim > 65535), which the caller tells from a scalar by rank > 0. */
uint32_t cs_shape_id(cs_graph *g, unsigned rank, const unsigned *dims);
const cs_shape *cs_shape_of(const cs_graph *g, uint32_t shape);   /* the scalar's for CS_SCALAR */
const cs_shape *cs_node_shape(const cs_graph *g, cs_node n);
/* NumPy's broadcast of shapes a and b (trailing axes aligned, a 1 or a
 * missing axis stretching): true and the result, or false. */
bool cs_shape_broadcast(const cs_shape *a, const cs_shape *b, cs_shape *out);
/* Element e (row-major) of `to` reads element cs_shape_source(from, to, e)
 * of an operand of shape `from` broadcast to `to`. */
unsigned cs_shape_source(const cs_shape *from, const cs_shape *to, unsigned e);
/* e's index on each axis of s, and back. */
void cs_shape_unflatten(const cs_shape *s, unsigned e, unsigned idx[CS_RANK_MAX]);
unsigned cs_shape_flatten(const cs_shape *s, const unsigned idx[CS_RANK_MAX]);

/* Constant tables: the values of every TABLE node, one pool per graph.
 * cs_graph_add_table returns where `values` start in it (an equal table
 * added before is shared), -1 when memory ran out. */
int64_t cs_graph_add_table(cs_graph *g, const double *values, unsigned n);
const double *cs_graph_table(const cs_graph *g);
uint32_t cs_graph_table_size(const cs_graph *g);

/* Builders. Types must match as the op requires; results: arithmetic keeps the
 * operand type, comparisons and AND/OR/NOT give bool. Elementwise builders
 * give the broadcast of their operands' shapes. Each returns 0 with the
 * graph's error set on a misuse (a type or shape that does not fit). */
cs_node cs_const(cs_graph *g, cs_type t, double value);
cs_node cs_leaf(cs_graph *g, cs_op op, cs_type t, int64_t index);
/* A leaf of any shape: CARRIED, PARAM, UNIFORM, RANDBITS (imm as cs_leaf's:
 * element e is slot, or draw, index + e), IOTA (index: the axis). */
cs_node cs_leaf_shaped(cs_graph *g, cs_op op, cs_type t, uint32_t shape, int64_t index);
/* A constant array of shape `shape` (values row-major, exact in type t). */
cs_node cs_table(cs_graph *g, cs_type t, uint32_t shape, const double *values);
cs_node cs_unary(cs_graph *g, cs_op op, cs_node a);
cs_node cs_binary(cs_graph *g, cs_op op, cs_node a, cs_node b);
cs_node cs_ternary(cs_graph *g, cs_op op, cs_node a, cs_node b, cs_node c);
cs_node cs_cast(cs_graph *g, cs_type t, cs_node a);
/* n items of one type and shape, stacked on a new axis 0 (cs_stack) or
 * `axis` (0 .. the items' rank). */
cs_node cs_stack(cs_graph *g, unsigned n, const cs_node *items);
cs_node cs_stack_axis(cs_graph *g, unsigned n, const cs_node *items, unsigned axis);
/* The sub-array at position k of axis 0 (an element of a vector). */
cs_node cs_index(cs_graph *g, cs_node array, unsigned k);
/* a[idx[0], .., idx[n-1]] at run-time i32 indices (n <= rank of a). */
cs_node cs_gather(cs_graph *g, cs_node a, unsigned n, const cs_node *idx);
/* a with a[idx[0], .., idx[n-1]] = v. */
cs_node cs_scatter(cs_graph *g, cs_node a, cs_node v, unsigned n, const cs_node *idx);
/* a[start[k] : start[k] + extent[k]] on each axis k < rank of a. */
cs_node cs_slice(cs_graph *g, cs_node a, const unsigned *start, const unsigned *extent);
cs_node cs_reshape(cs_graph *g, cs_node a, uint32_t shape);
cs_node cs_broadcast(cs_graph *g, cs_node a, uint32_t shape);
cs_node cs_shift(cs_graph *g, cs_node a, cs_node fill, unsigned axis, int amount);
cs_node cs_roll(cs_graph *g, cs_node a, unsigned axis, int amount);
cs_node cs_concat(cs_graph *g, unsigned n, const cs_node *items, unsigned axis);
/* A reduction (SUM .. NONZERO) over `axis`, or every element (CS_ALL_AXES). */
cs_node cs_reduce(cs_graph *g, cs_op op, cs_node a, int axis);

/* The one general constructor the others use: hash-consed, type- and
 * shape-checked. */
cs_node cs_make(cs_graph *g, cs_op op, cs_type t, uint32_t shape, unsigned n_in, const cs_node *in, cs_imm imm);

/* Rewrite each root (0 stays 0) so that every leaf for which `map` returns a
 * node is replaced by it: how observations of a state become observations of
 * the next state. Iterative, so any graph depth is fine. 0, or -1 on failure. */
typedef cs_node (*cs_leaf_map)(void *ctx, const cs_node_data *leaf);
int cs_substitute(cs_graph *g, cs_node *roots, unsigned n_roots, cs_leaf_map map, void *ctx);

#endif
