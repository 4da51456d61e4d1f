/* The emitter: one program + its plan + schedule -> source text, in a C or
 * CUDA dialect. The plan (which nodes share a kernel) is the driver's, built
 * once in jit/compile.c: the emitter reads it and never partitions.
 *
 * Shared by both dialects: naming, literals, the expression of every op,
 * loads of leaves, values materialized between kernels, and the RNG words.
 * What differs is the skeleton around the kernels: the C dialect walks blocks
 * of lanes that stay in L1 for the whole rollout (time loop inside the block
 * loop), each kernel being one vectorizable loop over the block; the CUDA
 * dialect gives each thread its lanes, grid-stride, one __global__ per kernel.
 *
 * Ops come from jit/ops.def: an infix operator or the function that computes
 * the op (jit/mathf.h, jit/mathi.h, pasted into both dialects' prelude), the
 * very function the interpreter and constant folding call (jit/op_eval.c),
 * so the cpu backend, the CUDA dialect built as host C and the interpreter
 * agree bit for bit in f32 and f64 (tests/test_cuda.c's per-op test). i32
 * arithmetic wraps through unsigned arithmetic, as op_eval computes it.
 *
 * Arrays (a node with a shape, ir.h) are lowered here, in two ways:
 *   - per lane (the CUDA dialect, and cs_fresh in both): an array is a local
 *     array of its thread, T vN[size], each node an element loop;
 *   - the C dialect's block code (rollout and step kernels): each kernel is
 *     a list of loops (plan_loops), a lane loop for scalars or a nest over a
 *     shape's elements with the lane loop innermost, so that every element
 *     vectorizes across environments; elementwise ops of one shape fuse into
 *     one nest, a reduction accumulates in its operand's nest, and a value
 *     read by another loop lives in the block (B->m<id>[elem][CS_BLOCK]).
 *     In the rollout, an array state changed in a few elements (a scatter of
 *     one element, a select on a lane's condition) is updated in its own
 *     rows where its old value is dead (plan_in_place), a nest of whole
 *     reductions keeps its accumulators in registers (emit_chunked_nest),
 *     and states that stay finite are checked in a block's first step only.
 * A kernel without arrays is one lane loop, as before arrays existed.
 *
 * Generated C, for a rollout with fusion full:
 *
 *   cs_kernel_rollout(L): for each block of CS_BLOCK lanes:
 *       load carried state into B->c (B->ci: i32 and bool slots); for t in steps (U per iteration):
 *           step: [RNG words] [kernel 0's f64 library calls or f32 modulos: a pass]
 *                 kernel 0 loop { loads, ops, next state, return, done }
 *                 (with arrays: kernel 0's loops and nests, the last a lane
 *                 loop for the return and done, then the array states' commits)
 *                 restart pass over the lanes that finished, if any (rare, scalar)
 *       store the state back
 *   (blocks of 1 to 4 lanes: cs_rollout_steps_short, the same step with 4
 *   lanes as a constant and the time loop inside)
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"

#define CS_BLOCK_LANES 256
#define CS_PAD_LANES CS_LANES_PAD   /* a vector of f32 at 32 bytes */
#define CS_SHORT_LANES 4  /* a vector of f32 at 16 bytes: blocks of 1 to 4 lanes */
#define CS_SHORT_AHEAD 2  /* a short block's blocks of Philox words drawn at once */
static_assert(CS_BLOCK_LANES % CS_PAD_LANES == 0, "a padded block fits the block");
static_assert(CS_BLOCK_LANES % 8 == 0, "cs_rng_lanes's whole groups of 8 lanes fit the block");
static_assert(CS_SHORT_LANES * CS_SHORT_AHEAD <= CS_PAD_LANES, "a short block's words fit the smallest block");
/* A block's lanes shrink (powers of two down to CS_BLOCK_LANES_MIN) so
 * that its bytes stay under this: a 10x10x4 state is 1.6 KB a lane before
 * its temporaries, and 256 such lanes would spill L2. The least is 64:
 * cs_list_lanes reads a block's rows of flags 64 at a time. */
#define CS_BLOCK_BYTES_MAX (512u * 1024u)
#define CS_BLOCK_LANES_MIN 64

/* Where leaves live: C rollout blocks (B->c), a CUDA thread's registers,
 * global buffers (C and CUDA steps, CUDA multi-kernel rollouts), a fresh
 * start (one lane's, cs_fresh, or a C rollout block's listed lanes at once,
 * cs_rollout_restarts: SCOPE_RESTARTS reads its words by list position j). */
typedef enum { SCOPE_ROLLOUT, SCOPE_THREAD, SCOPE_STEP, SCOPE_FRESH, SCOPE_RESTARTS } scope_kind;

#define CS_NO_LOOP UINT32_MAX
#define CS_NO_SLOT UINT32_MAX
#define CS_COPY_LOOP (UINT32_MAX - 1)   /* a loop_shape: a stack's or concat's copies, one nest per operand */

typedef struct {
    const cs_program *p;
    const cs_graph *g;
    cs_dialect dialect;
    cs_text *out;
    bool f32;
    const char *real;
    scope_kind scope;
    uint32_t *stamp;        /* [count]: the scope stamp at which a node became available */
    uint32_t now;           /* current scope stamp */
    const cs_partition *part;
    unsigned kernel;        /* the kernel being emitted */
    bool *materialized;     /* [count] stored to B->m<id> by its kernel */
    bool *any_materialized; /* [count] over all entries: declared in the block struct */
    bool *any_called;       /* [count] C: computed in a pass of its own, kept in B->x<id> */
    bool in_call_pass;      /* emitting a kernel's pass of library calls and modulos */
    bool near_variant;      /* ...its first loop: f32 modulos by their _near function, or f64
                               sin and cos by theirs (near64_pass) */
    bool near64_pass;       /* ...f64 near functions with a per-lane redo (emit_call_pass) */
    unsigned near64_kernels; /* 1 + the last kernel with such a pass: the block declares far[] */
    bool leaf_near_variant; /* a kernel loop's near copy: f32 sin, cos of leaves by their _near */
    uint32_t *scratch_off;  /* [count] CUDA: byte offset per lane of a materialized value */
    uint32_t scratch_bytes; /* CUDA: scratch bytes per lane */
    const char *L;          /* "L->" (C) or "L." (CUDA: the lanes are passed by value) */
    bool padded;            /* C rollout: blocks run padded, and those of 1 to CS_SHORT lanes
                               have a variant of their own (short_) */
    bool pads_params;       /* ...its kernels read per-environment parameters, which the pad
                               lanes of the batch's last block read past its end */
    bool rollout;           /* emitting the C rollout's step (not the step API's) */
    bool ahead;             /* ... whose short blocks draw words ahead: read at col_ */
    /* typed slots: each carried slot's index among the slots of its class,
     * real (B->c, cs_fresh's out) or integer, i32 and bool (B->ci, outi) */
    unsigned *slot_index;   /* [n_carried] */
    unsigned *var_of;       /* [n_carried] the state variable holding the slot */
    unsigned n_real_slots, n_int_slots;
    /* arrays */
    const cs_shape *nest;   /* the element loop being emitted (j0_.., e_), or NULL */
    bool blocked;           /* the C dialect's block code: kernels as planned loops */
    uint32_t *loop_of;      /* [count] block code: the loop of its kernel computing a node */
    uint32_t *loop_shape;   /* [count] block code: each loop's shape (CS_SCALAR: a lane loop) */
    unsigned n_loops;       /* ...of the kernel being emitted */
    unsigned loop;          /* ...the loop being emitted */
    bool *arg_best;         /* [count] any entry: an argmax/argmin kept in the block (B->mb<id>) */
    /* array states updated in place (the C rollout, plan_in_place) */
    uint32_t *alias;        /* [count] the carried slot whose block rows hold the value, or CS_NO_SLOT */
    cs_node *in_place;      /* [count] a node stored into its array operand's rows: the scatter it
                               stores (itself, or a select's masked one), or itself (a select), or 0 */
    bool *absorbed;         /* [count] a scatter stored by the select that masks it: no loop */
    cs_node *rows_of;       /* [count] an in-place node's array operand, whose rows it takes over */
    cs_node *loop_node;     /* [count + 1] the in-place node a loop is for alone, or 0 */
    bool chunk;             /* block code: a nest's lanes in chunks, its reductions in acc<id>_ */
    bool check_arrays;      /* block code: B->nf, the non-finite flag of array states */
    bool check_once;        /* ...rollout: checked only in a block's first step (B->nfc, finite_arrays) */
    unsigned block_lanes;   /* C: CS_BLOCK */
    cs_text *loop_fns;      /* block code: the functions of the planned loops (emit_planned_loops) */
    bool slot_tables;       /* array or integer states: slots copied by loops over cs_slot_real/_int */
    bool in_loop_fn;        /* ...emitting one: the step's names (wi<k>) are not in scope */
    bool element_loops;     /* a nest was written: the C source opens with CS_ELEMENT_LOOPS_MARK */
    bool gather_rows;       /* block code: elem's index is a gather's, read from the rows as one
                               flat array (block_row) */
    char err[256];
} emitter;

static const char *c_type(cs_type t)
{
    switch (t) {
    case CS_BOOL: case CS_I32: return "int";
    case CS_U32: return "unsigned int";
    case CS_F32: return "float";
    default: return "double";
    }
}

/* A record's element: a float for a real, an int for the rest (lanes.h). */
static bool record_is_real(const cs_program *p, unsigned r) { return cs_type_is_real(p->records[r].type); }
static const char *record_type(const cs_program *p, unsigned r) { return record_is_real(p, r) ? "float" : "int"; }
static const char *record_cast(const cs_program *p, unsigned r) { return record_is_real(p, r) ? "(float)" : "(int)"; }

static void out(emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(emitter *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cs_text_vprintf(e->out, fmt, ap);
    va_end(ap);
}

static const cs_node_data *node(const emitter *e, cs_node n) { return cs_graph_node(e->g, n); }

static bool is_const(const emitter *e, cs_node n) { return node(e, n)->op == CS_OP_CONST; }

static const cs_shape *shape(const emitter *e, cs_node n) { return cs_node_shape(e->g, n); }

static bool is_array(const emitter *e, cs_node n) { return node(e, n)->shape != CS_SCALAR; }

static bool is_draw(cs_op op) { return op == CS_OP_UNIFORM || op == CS_OP_RANDBITS; }

/* A stack of scalars on axis 0: the paper's packed state, a small array of
 * the lane's own (const T vN[n] = {...}) in every dialect, as before arrays. */
static bool scalar_stack(const emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    if (d->op != CS_OP_STACK || d->imm.i != 0)
        return false;
    for (unsigned k = 0; k < d->n_in; k++)
        if (is_array(e, cs_graph_input(e->g, n, k)))
            return false;
    return true;
}

/* Leaves whose elements are computed where they are read: a constant
 * table (a static array of the source) and an index (IOTA). */
static bool read_in_place(const emitter *e, cs_node n)
{
    cs_op op = (cs_op)node(e, n)->op;
    return op == CS_OP_TABLE || op == CS_OP_IOTA;
}

/* An exact literal: hex floats read back to the same bits in C and CUDA.
 * An f32 constant is judged as the float it becomes (1e39 is infinite). */
static void literal(emitter *e, cs_type t, double v)
{
    if (t == CS_F32)
        v = (double)(float)v;
    if (t == CS_BOOL || t == CS_I32) {
        out(e, "%d", (int)v);
    } else if (t == CS_U32) {
        out(e, "%uu", (unsigned)v);
    } else if (isnan(v)) {
        out(e, t == CS_F32 ? "(0.0f/0.0f)" : "(0.0/0.0)");
    } else if (isinf(v)) {
        out(e, v < 0 ? (t == CS_F32 ? "(-1.0f/0.0f)" : "(-1.0/0.0)") : (t == CS_F32 ? "(1.0f/0.0f)" : "(1.0/0.0)"));
    } else {
        out(e, "(%a%s)", v, t == CS_F32 ? "f" : "");
    }
}

static void elem(emitter *e, cs_node n, const char *idx);
static void bcast_index(const emitter *e, const cs_shape *from, char *buf, size_t size);

/* How an operand is referred to once available: a scalar by its name; an
 * array inside an element loop by its element at the loop's element (its
 * broadcast source there). */
static void ref(emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    if (d->op == CS_OP_CONST) {
        literal(e, (cs_type)d->type, d->imm.f);
    } else if (d->shape != CS_SCALAR && e->nest) {
        char idx[160];
        bcast_index(e, shape(e, n), idx, sizeof idx);
        elem(e, n, idx);
    } else if (read_in_place(e, n)) {
        elem(e, n, "0");
    } else {
        out(e, "v%u", n);
    }
}

/* "<lvalue> = <cast><value>;": every root's final store. */
static void store(emitter *e, cs_node value, const char *cast, const char *lhs_fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void store(emitter *e, cs_node value, const char *cast, const char *lhs_fmt, ...)
{
    va_list ap;
    va_start(ap, lhs_fmt);
    cs_text_vprintf(e->out, lhs_fmt, ap);
    va_end(ap);
    out(e, " = %s", cast);
    ref(e, value);
    out(e, ";\n");
}

/* An observation (f32) or a reward where it leaves the kernel: one NaN
 * whatever made it (mathf.h's cs_canon_nanf, cs_canon_nan; the interpreter
 * calls them too). CANON_OBS and CANON_REWARD open the call that an
 * element's store closes with ")". */
#define CANON_OBS "cs_canon_nanf((float)"
#define CANON_REWARD "cs_canon_nan((double)"
static void store_out(emitter *e, cs_node value, bool obs, const char *lhs_fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void store_out(emitter *e, cs_node value, bool obs, const char *lhs_fmt, ...)
{
    va_list ap;
    va_start(ap, lhs_fmt);
    cs_text_vprintf(e->out, lhs_fmt, ap);
    va_end(ap);
    out(e, " = %s", obs ? CANON_OBS : CANON_REWARD);
    ref(e, value);
    out(e, ");\n");
}

/* ---- typed slots (lanes.h: a carried slot's buffer is float or double,
 * int, or unsigned char for a bool) ---- */

static bool slot_is_real(const emitter *e, unsigned slot) { return cs_type_is_real(e->p->carried[slot].type); }

static const char *slot_buffer_type(const emitter *e, unsigned slot)
{
    cs_type t = e->p->carried[slot].type;
    return cs_type_is_real(t) ? e->real : t == CS_BOOL ? "unsigned char" : "int";
}

/* The cast a value takes on its way into a slot's buffer. */
static const char *slot_store_cast(const emitter *e, unsigned slot)
{
    return e->p->carried[slot].type == CS_BOOL ? "(unsigned char)" : "";
}

/* Element `row` (an expression) of the block's rows `rows` (B->c, B->m<id>)
 * at a gather's or scatter's index, for lane i: one flat array, ((T
 * *)rows)[row * CS_BLOCK + i]. GCC 12 vectorizes that as a gather or a
 * scatter (AVX-512), not rows[row][i], whose offset is not one index times
 * a scale. */
static void block_row(emitter *e, const char *type, const char *rows, const char *row)
{
    out(e, "((%s *)%s)[(%s) * CS_BLOCK + i]", type, rows, row);
}

/* The block's row of slot `slot` (+ off, an index expression, when not
 * NULL): B->c[k][i] for a real, B->ci[k][i] for an integer. */
static void block_slot(emitter *e, unsigned slot, const char *off)
{
    const char *row = slot_is_real(e, slot) ? "c" : "ci";
    if (off && e->gather_rows) {
        char rows[8], at[600];
        snprintf(rows, sizeof rows, "B->%s", row);
        snprintf(at, sizeof at, "%u + (%s)", e->slot_index[slot], off);
        block_row(e, slot_is_real(e, slot) ? e->real : "int", rows, at);
    } else if (off)
        out(e, "B->%s[%u + (%s)][i]", row, e->slot_index[slot], off);
    else
        out(e, "B->%s[%u][i]", row, e->slot_index[slot]);
}

/* A CUDA rollout thread's register for a slot: c<slot>, or element k of
 * the local array c<first slot> of an array state. */
static void thread_slot(emitter *e, unsigned slot, const char *off)
{
    const cs_state_var *v = &e->p->vars[e->var_of[slot]];
    if (v->shape == CS_SCALAR)
        out(e, "c%u", slot);
    else if (off)
        out(e, "c%u[%u + (%s)]", v->slot, slot - v->slot, off);
    else
        out(e, "c%u[%u]", v->slot, slot - v->slot);
}

/* A slot's global buffer, element `lane`: ((T *)L->carried[k])[lane]. */
static void global_slot(emitter *e, unsigned slot, const char *off, bool constant)
{
    if (off)
        out(e, "((%s%s *)%scarried[%u + (%s)])[lane]", constant ? "const " : "", slot_buffer_type(e, slot), e->L, slot,
            off);
    else
        out(e, "((%s%s *)%scarried[%u])[lane]", constant ? "const " : "", slot_buffer_type(e, slot), e->L, slot);
}

/* ---- elements of arrays ---- */

/* Row-major flat index of per-axis index expressions over shape s. */
static void flat_index(const cs_shape *s, const char *const ax[CS_RANK_MAX], char *buf, size_t size)
{
    if (s->rank == 0)
        snprintf(buf, size, "0");
    else if (s->rank == 1)
        snprintf(buf, size, "%s", ax[0]);
    else if (s->rank == 2)
        snprintf(buf, size, "(%s) * %u + (%s)", ax[0], s->dim[1], ax[1]);
    else
        snprintf(buf, size, "((%s) * %u + (%s)) * %u + (%s)", ax[0], s->dim[1], ax[1], s->dim[2], ax[2]);
}

static const char *const loop_var[CS_RANK_MAX] = {"j0_", "j1_", "j2_"};

/* Inside an element loop over e->nest: the element of an operand of shape
 * `from` that NumPy's broadcasting puts at the loop's element. */
static void bcast_index(const emitter *e, const cs_shape *from, char *buf, size_t size)
{
    const cs_shape *to = e->nest;
    if (!to || from->rank == 0) {
        snprintf(buf, size, "0");
        return;
    }
    bool same = from->rank == to->rank;
    for (unsigned k = 0; same && k < from->rank; k++)
        same = from->dim[k] == to->dim[k];
    if (same) {
        snprintf(buf, size, "e_");
        return;
    }
    const char *ax[CS_RANK_MAX] = {"0", "0", "0"};
    for (unsigned a = 0; a < from->rank; a++)
        ax[a] = from->dim[a] == 1 ? "0" : loop_var[a + to->rank - from->rank];
    flat_index(from, ax, buf, size);
}

/* An element loop over shape s: j0_.. per axis, e_ the flat element. */
static void nest_open(emitter *e, const cs_shape *s, const char *ind)
{
    /* block code: GCC would unroll a nest of small dims completely, a
     * copy of the lane loop per element (24 for a 2x3x4 array), for
     * nothing but compile time: the lane loop is the work */
    for (unsigned k = 0; k < s->rank; k++)
        out(e, "%s%sfor (int %s = 0; %s < %u; %s++)\n", e->blocked ? "#pragma GCC unroll 1\n" : "", ind, loop_var[k],
            loop_var[k], s->dim[k], loop_var[k]);
    char flat[160];
    flat_index(s, loop_var, flat, sizeof flat);
    out(e, "%s{\n%s    const int e_ = %s; (void)e_;\n", ind, ind, flat);
    e->nest = s;
    e->element_loops = true;
}

static void nest_close(emitter *e, const char *ind)
{
    out(e, "%s}\n", ind);
    e->nest = NULL;
}

/* The memory a value crossing kernels (or, in block code, loops) lives in:
 * the C block struct, or the CUDA scratch buffer ([value][lane], each value
 * 8-byte aligned per lane). component: an element of an array, or -1. */
static void mat(emitter *e, cs_node n, int component)
{
    if (e->dialect == CS_DIALECT_C) {
        if (component >= 0)
            out(e, "B->m%u[%d][i]", n, component);
        else
            out(e, "B->m%u[i]", n);
        return;
    }
    const cs_node_data *d = node(e, n);
    unsigned size = d->type == CS_F64 ? 8 : 4;
    out(e, "((%s *)(scratch + %uull * (unsigned long long)L.stride))[lane]", c_type((cs_type)d->type),
        e->scratch_off[n] + (component >= 0 ? (unsigned)component * size : 0));
}

/* The same at an element given by an index expression. */
static void mat_at(emitter *e, cs_node n, const char *idx)
{
    if (e->dialect == CS_DIALECT_C && e->gather_rows) {
        char rows[24];
        snprintf(rows, sizeof rows, "B->m%u", n);
        block_row(e, c_type((cs_type)node(e, n)->type), rows, idx);
        return;
    }
    if (e->dialect == CS_DIALECT_C) {
        out(e, "B->m%u[%s][i]", n, idx);
        return;
    }
    const cs_node_data *d = node(e, n);
    unsigned size = d->type == CS_F64 ? 8 : 4;
    out(e, "((%s *)(scratch + (%uull + (unsigned long long)(%s) * %uu) * (unsigned long long)L.stride))[lane]",
        c_type((cs_type)d->type), e->scratch_off[n], idx, size);
}

static bool in_this_kernel(const emitter *e, cs_node n)
{
    return e->part && e->part->kernel[n] == e->kernel;
}

/* Computed in the loop being emitted (block code), or in this kernel. */
static bool in_this_loop(const emitter *e, cs_node n)
{
    return in_this_kernel(e, n) && (!e->blocked || e->loop_of[n] == e->loop);
}

/* Block code: computed in a nest, where its name is the nest's element. */
static bool nest_element(const emitter *e, cs_node n)
{
    return e->blocked && e->loop_of[n] != CS_NO_LOOP && e->loop_shape[e->loop_of[n]] != CS_SCALAR;
}

/* Rollout block code: a value that lives in a state's rows (plan_in_place). */
static bool aliased(const emitter *e, cs_node n)
{
    return e->blocked && e->scope == SCOPE_ROLLOUT && e->alias[n] != CS_NO_SLOT;
}

/* Parameter slot d->imm.i (+ off, an index expression, when not NULL: an
 * array's element) of the current lane; a shared parameter's element 0,
 * one value broadcast to every lane. */
static void param_load(emitter *e, const cs_node_data *d, const char *off)
{
    const char *buffers = e->scope == SCOPE_FRESH ? "" : e->scope == SCOPE_RESTARTS ? "L->" : e->L;
    const char *at = e->p->param_shared[d->imm.i] ? "0" : "lane";
    out(e, "((const %s *)%sparams[%d", e->real, buffers, (int)d->imm.i);
    if (off)
        out(e, " + (%s)", off);
    out(e, "])[%s]", at);
}

/* Element `idx` (an index expression) of array n, for the current lane. */
static void elem(emitter *e, cs_node n, const char *idx)
{
    const cs_node_data *d = node(e, n);
    const cs_shape *s = shape(e, n);
    switch ((cs_op)d->op) {
    case CS_OP_CONST:
        literal(e, (cs_type)d->type, d->imm.f);
        return;
    case CS_OP_TABLE:
        out(e, "cs_tab%u[%s]", n, idx);
        return;
    case CS_OP_IOTA: {
        unsigned axis = (unsigned)d->imm.i, stride = 1;
        for (unsigned k = axis + 1; k < s->rank; k++)
            stride *= s->dim[k];
        if (e->nest && e->nest == s && !strcmp(idx, "e_"))
            out(e, "%s", loop_var[axis]);
        else
            out(e, "(((%s) / %u) %% %u)", idx, stride, s->dim[axis]);
        return;
    }
    case CS_OP_CARRIED: {
        unsigned slot = (unsigned)d->imm.i;
        if (d->shape == CS_SCALAR) {
            ref(e, n);
        } else if (e->scope == SCOPE_ROLLOUT) {
            block_slot(e, slot, idx);
        } else if (e->scope == SCOPE_THREAD) {
            thread_slot(e, slot, idx);
        } else if (e->scope == SCOPE_STEP) {
            global_slot(e, slot, idx, true);
        } else {
            snprintf(e->err, sizeof e->err, "the reset reads the state '%s'", e->p->carried[slot].name);
        }
        return;
    }
    case CS_OP_PARAM:   /* an array's elements are read where they are used */
        if (d->shape != CS_SCALAR) {
            param_load(e, d, idx);
            return;
        }
        break;
    default:
        break;
    }
    if (aliased(e, n))
        block_slot(e, e->alias[n], idx);   /* updated in place in its state's rows */
    else if (d->shape == CS_SCALAR)
        ref(e, n);
    else if (e->stamp[n] == e->now && nest_element(e, n))
        out(e, "v%u", n);   /* the caller reads the nest's own element */
    else if (e->stamp[n] == e->now)
        out(e, "v%u[%s]", n, idx);
    else
        mat_at(e, n, idx);
}

static void emit_bad_check(emitter *e, const cs_node *next);

static void emit_node(emitter *e, cs_node n);

/* The program's f64 op computed by jit/mathd.h's function (the fast math
 * mode), not glibc's. */
static bool fast_f64_fn(const emitter *e, cs_op op) { return e->p->fast_f64 && cs_op_table[op].fast_f64; }

/* In the first loop of its kernel: where a pass of its own may compute it
 * ahead of the kernel's loops (block code with arrays has several loops). */
static bool in_first_loop(const emitter *e, cs_node n)
{
    return !e->blocked || (node(e, n)->shape == CS_SCALAR && e->loop_of[n] == 0);
}

/* A C f64 library call (glibc's sin, pow, ...: what makes f64 Gymnasium's
 * bits) of this kernel. One such scalar call in a kernel's loop keeps the
 * whole loop scalar, so the calls get a pass over the block of their own,
 * and the loop reads their results back (B->x<id>) and vectorizes. */
static bool library_call(const emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    return e->dialect == CS_DIALECT_C && d->type == CS_F64 && cs_op_table[d->op].libm_f64 &&
           !fast_f64_fn(e, (cs_op)d->op) && in_this_kernel(e, n) && in_first_loop(e, n);
}

/* A C f32 op with a fast near variant (fmod, %: ten exact reduction steps,
 * of which the near range needs one) of this kernel. It goes to the same
 * pass, whose loop computes it near and notes far lanes; if there is one,
 * the pass is redone with the op's exact function (emit_call_pass). */
static bool near_call(const emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    return e->dialect == CS_DIALECT_C && d->type == CS_F32 && cs_op_table[d->op].near_f32 == CS_NEAR_PASS &&
           in_this_kernel(e, n) && in_first_loop(e, n);
}

/* A C f32 op of this kernel with a fast near variant for a leaf operand
 * (sin, cos), whose operand is one: a load (state, segment step, parameter,
 * input) or a value of an earlier kernel. emit_kernel_loops gives the
 * kernel a copy of its loop with the _near functions, taken at a step where
 * every lane's operand is near (checked by a loop of loads alone). */
static bool leaf_near(const emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    if (e->dialect != CS_DIALECT_C || d->type != CS_F32 || cs_op_table[d->op].near_f32 != CS_NEAR_LEAF ||
        !in_this_kernel(e, n) || d->shape != CS_SCALAR)
        return false;
    cs_node x = cs_graph_input(e->g, n, 0);
    cs_op op = (cs_op)node(e, x)->op;
    bool load = op == CS_OP_CARRIED || op == CS_OP_SEGSTEP || op == CS_OP_PARAM || op == CS_OP_INPUT;
    return load || (!in_this_kernel(e, x) && e->materialized[x]);
}

/* A C f64 library call with a vectorizable near function (sin, cos: glibc's
 * bits wherever it does not flag the lane far) of this kernel. */
static bool near64_call(const emitter *e, cs_node n)
{
    return library_call(e, n) && cs_op_table[node(e, n)->op].near_f64;
}

/* Computed in the kernel's pass of its own, read back in its loop. */
static bool own_pass(const emitter *e, cs_node n) { return library_call(e, n) || near_call(e, n); }

/* Blocks of four Philox words one step may touch: a step's words are
 * [t*D, t*D + D); with D in {1, 2, 4} they never straddle two blocks. */
static unsigned rng_blocks(unsigned D) { return D == 0 ? 0 : (4 % D == 0) ? 1 : (D + 2) / 4 + 1; }

/* Make n available in the current scope: a leaf is loaded, a value from
 * another kernel (or, in block code, another loop) is read back from
 * memory, a node of this kernel was already emitted (id order). An array
 * stays where it is: its elements are read where they are used (elem). */
static void need(emitter *e, cs_node n)
{
    if (is_const(e, n) || e->stamp[n] == e->now || read_in_place(e, n) || aliased(e, n))
        return;
    const cs_node_data *d = node(e, n);
    const char *T = c_type((cs_type)d->type);
    bool computed = d->n_in > 0 || is_draw((cs_op)d->op);
    bool fresh = e->scope == SCOPE_FRESH || e->scope == SCOPE_RESTARTS;
    if (!fresh && !in_this_loop(e, n) && computed && e->materialized[n]) {
        if (d->shape != CS_SCALAR && (e->nest || !scalar_stack(e, n)))
            return;
        if (d->op == CS_OP_STACK) {
            out(e, "        const %s v%u[%u] = {", T, n, d->n_in);
            for (unsigned k = 0; k < d->n_in; k++) {
                out(e, "%s", k ? ", " : "");
                mat(e, n, (int)k);
            }
            out(e, "};\n");
        } else {
            out(e, "        const %s v%u = ", T, n);
            mat(e, n, -1);
            out(e, ";\n");
        }
        e->stamp[n] = e->now;
        return;
    }
    if (computed) {
        emit_node(e, n);   /* only reached for nodes computed in place (fresh scope) */
        return;
    }
    if (d->shape != CS_SCALAR && ((d->op == CS_OP_CARRIED && !fresh) || d->op == CS_OP_PARAM))
        return;   /* an array state or of parameters: elem reads it where it lives */
    const char *ind = e->scope == SCOPE_FRESH ? "    " : "        ";
    switch ((cs_op)d->op) {
    case CS_OP_CARRIED: {
        unsigned slot = (unsigned)d->imm.i;
        if (fresh) {
            snprintf(e->err, sizeof e->err, "the reset reads the state '%s'", e->p->carried[slot].name);
            break;
        }
        out(e, "%sconst %s v%u = ", ind, T, n);
        if (e->scope == SCOPE_ROLLOUT)
            block_slot(e, slot, NULL);
        else if (e->scope == SCOPE_THREAD)
            thread_slot(e, slot, NULL);
        else
            global_slot(e, slot, NULL, true);
        out(e, ";\n");
        break;
    }
    case CS_OP_SEGSTEP:
        if (e->scope == SCOPE_ROLLOUT)
            out(e, "%sconst int v%u = B->ss[i];\n", ind, n);
        else if (e->scope == SCOPE_THREAD)
            out(e, "%sconst int v%u = ss;\n", ind, n);
        else if (e->scope == SCOPE_STEP)
            out(e, "%sconst int v%u = %ssegstep[lane];\n", ind, n, e->L);
        else
            out(e, "%sconst int v%u = 0;\n", ind, n);
        break;
    case CS_OP_PARAM:
        out(e, "%sconst %s v%u = ", ind, T, n);
        param_load(e, d, NULL);
        out(e, ";\n");
        break;
    case CS_OP_INPUT:
        if (e->scope != SCOPE_STEP)
            snprintf(e->err, sizeof e->err, "input %d read outside a step", (int)d->imm.i);
        else if (e->p->inputs[d->imm.i].type == CS_I32)
            out(e, "%sconst int v%u = ((const int *)%sinputs[%d])[lane];\n", ind, n, e->L, (int)d->imm.i);
        else
            out(e, "%sconst %s v%u = (%s)((const float *)%sinputs[%d])[lane];\n", ind, T, n, T, e->L, (int)d->imm.i);
        break;
    default:
        snprintf(e->err, sizeof e->err, "cannot load %s", cs_op_table[d->op].name);
        break;
    }
    e->stamp[n] = e->now;
}

/* "cond ? x : y", cond being `l` alone (cmp NULL) or `l cmp r`. The C
 * dialect selects reals through a bit mask as wide as the value
 * (cs_select[f]): a `?:` lets GCC 12 branch, then merge the comparisons
 * behind the branches into selects of booleans it cannot vectorize. Bits
 * are picked, not computed, so NaN and -0.0 come out as from `?:`. */
static void select_of(emitter *e, cs_type t, cs_node l, const char *cmp, cs_node r, cs_node x, cs_node y)
{
    bool masked = e->dialect == CS_DIALECT_C && (t == CS_F32 || t == CS_F64);
    out(e, masked ? (t == CS_F32 ? "cs_selectf(" : "cs_select(") : "(");
    ref(e, l);
    if (cmp) {
        out(e, " %s ", cmp);
        ref(e, r);
    }
    out(e, masked ? ", " : " ? ");
    ref(e, x);
    out(e, masked ? ", " : " : ");
    ref(e, y);
    out(e, ")");
}

/* CAST (jit/ops.def): to a bool, != 0; a real to an integer by mathi.h's
 * cs_f2i (trunc, NaN 0, saturating), where C's conversion is undefined. */
static void emit_cast(emitter *e, cs_type t, cs_node a)
{
    cs_type from = (cs_type)node(e, a)->type;
    if (t == CS_BOOL) {
        out(e, "(");
        ref(e, a);
        out(e, " != 0)");
    } else if ((t == CS_I32 || t == CS_U32) && cs_type_is_real(from)) {
        out(e, t == CS_U32 ? "((unsigned int)%s(" : "(%s(", from == CS_F32 ? "cs_f2if" : "cs_f2i");
        ref(e, a);
        out(e, "))");
    } else {
        out(e, "((%s)", c_type(t));
        ref(e, a);
        out(e, ")");
    }
}

static void emit_expr(emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    cs_node a = d->n_in > 0 ? cs_graph_input(e->g, n, 0) : 0;
    cs_node b = d->n_in > 1 ? cs_graph_input(e->g, n, 1) : 0;
    cs_node c = d->n_in > 2 ? cs_graph_input(e->g, n, 2) : 0;
    bool f = d->type == CS_F32;
    bool i32 = d->type == CS_I32, integer = i32 || d->type == CS_U32;
    switch ((cs_op)d->op) {
    case CS_OP_NEG:
        if (integer) {   /* wrapping: through unsigned */
            out(e, i32 ? "(int)(0u - (unsigned int)" : "(0u - ");
            ref(e, a);
            out(e, ")");
            return;
        }
        out(e, "(-"); ref(e, a); out(e, ")"); return;
    case CS_OP_ADD: case CS_OP_SUB: case CS_OP_MUL:
        if (i32) {
            out(e, "(int)((unsigned int)");
            ref(e, a);
            out(e, " %s (unsigned int)", cs_op_table[d->op].infix);
            ref(e, b);
            out(e, ")");
            return;
        }
        break;
    case CS_OP_ABS:
        if (d->type == CS_U32) {   /* |x| of an unsigned is x */
            ref(e, a);
            return;
        }
        break;
    case CS_OP_CLIP:
        if (integer) {   /* NumPy's clip, min(max(x, lo), hi), as op_eval */
            out(e, "(");
            ref(e, c); out(e, " < ("); ref(e, b); out(e, " > "); ref(e, a); out(e, " ? "); ref(e, b);
            out(e, " : "); ref(e, a); out(e, ") ? "); ref(e, c); out(e, " : ("); ref(e, b); out(e, " > ");
            ref(e, a); out(e, " ? "); ref(e, b); out(e, " : "); ref(e, a); out(e, "))");
            return;
        }
        break;
    case CS_OP_NOT: out(e, "(!"); ref(e, a); out(e, ")"); return;
    case CS_OP_ROUND_F32:
        if (f) { ref(e, a); } else { out(e, "((double)(float)"); ref(e, a); out(e, ")"); }
        return;
    case CS_OP_CAST: emit_cast(e, (cs_type)d->type, a); return;
    case CS_OP_MIN: select_of(e, d->type, b, "<", a, b, a); return;
    case CS_OP_MAX: select_of(e, d->type, b, ">", a, b, a); return;
    case CS_OP_SELECT: select_of(e, d->type, a, NULL, 0, b, c); return;
    case CS_OP_INDEX: {
        char idx[32];
        snprintf(idx, sizeof idx, "%d", (int)d->imm.i);
        elem(e, a, idx);
        return;
    }
    default: break;
    }
    const cs_op_info *info = &cs_op_table[d->op];
    if (info->infix) {
        out(e, "(");
        ref(e, a);
        out(e, " %s ", info->infix);
        ref(e, b);
        out(e, ")");
        return;
    }
    /* the function of jit/ops.def, the same in both dialects (mathf.h,
     * mathd.h in the fast math mode, mathi.h for integers) */
    const char *fn = integer ? info->fn_int
                     : f     ? info->fn_f32
                     : fast_f64_fn(e, (cs_op)d->op) ? info->fast_f64 : info->fn_f64;
    if (!fn) {
        snprintf(e->err, sizeof e->err, "no emit rule for %s of %s", cs_op_table[d->op].name,
                 cs_type_name((cs_type)d->type));
        return;
    }
    /* f64 sin, cos: by the near function in a near64 pass's vector loop, by
     * glibc's own call in a scalar pass (lanes mostly or known far) */
    bool near64 = e->near_variant && near64_call(e, n), libm = !e->near_variant && near64_call(e, n);
    bool use_near = (e->near_variant && near_call(e, n)) || (e->leaf_near_variant && leaf_near(e, n)) || near64;
    out(e, use_near ? "%s_near(" : libm ? "%s_libm(" : "%s(", fn);
    ref(e, a);
    if (b) { out(e, ", "); ref(e, b); }
    if (c) { out(e, ", "); ref(e, c); }
    out(e, near64 ? ", &far_lane_)" : ")");
}

/* The words a draw reads: row of the C block's B->rw for the step
 * stream's draw number k (an expression); the restart stream's rw_[k]. */
static void draw_word(emitter *e, const cs_node_data *d, const char *k)
{
    unsigned nb = rng_blocks(e->p->n_step_draws);
    if (CS_UNIFORM_STREAM(d->imm.i) == CS_STREAM_RESTART)
        out(e, "rw_[%s]%s", k, e->scope == SCOPE_RESTARTS ? "[j]" : "");
    else if (e->dialect == CS_DIALECT_C && nb > 1)   /* a window of nb blocks (emit_kernels) */
        out(e, "B->rw[(int)(4 * (((w0 + (%s)) >> 2) %% %uu) + ((w0 + (%s)) & 3))][i%s]", k, nb, k, e->ahead ? " + col_" : "");
    else if (e->dialect == CS_DIALECT_C)
        out(e, "B->rw[(int)(w0 + (%s) - 4 * blk)][i%s]", k, e->ahead ? " + col_" : "");
    else
        out(e, "sw_[(int)(w0 + (%s) - 4 * blk)]", k);
}

/* An index read at run time, by the JAX rule (jit/ops.def): negative from
 * the end once, then clamped into [0, n) (gather) or flagged (scatter). */
static void emit_gather_base(emitter *e, cs_node n, const char *ind)
{
    const cs_node_data *d = node(e, n);
    bool scatter = d->op == CS_OP_SCATTER;
    unsigned first = scatter ? 2 : 1, k = d->n_in - first;
    const cs_shape *as = shape(e, cs_graph_input(e->g, n, 0));
    for (unsigned j = 0; j < k; j++)
        need(e, cs_graph_input(e->g, n, first + j));
    out(e, "%sint g%u_ = 0, in%u_ = 1; (void)in%u_;\n", ind, n, n, n);
    for (unsigned j = 0; j < k; j++) {
        unsigned dim = as->dim[j];
        out(e, "%s{ int x_ = ", ind);
        ref(e, cs_graph_input(e->g, n, first + j));
        out(e, "; x_ = x_ < 0 ? x_ + %u : x_; ", dim);
        if (scatter)
            out(e, "in%u_ &= x_ >= 0 && x_ < %u; x_ = x_ < 0 || x_ >= %u ? 0 : x_; ", n, dim, dim);
        else
            out(e, "x_ = x_ < 0 ? 0 : x_ >= %u ? %u : x_; ", dim, dim - 1);
        out(e, "g%u_ = g%u_ * %u + x_; }\n", n, n, dim);
    }
}

/* The value of the current element of a shape op or a draw (e->nest's e_,
 * or the node's one value when it is a scalar). */
static void emit_element(emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    const cs_shape *s = shape(e, n);
    cs_node a = d->n_in ? cs_graph_input(e->g, n, 0) : 0;
    const cs_shape *as = a ? shape(e, a) : NULL;
    char idx[600];
    switch ((cs_op)d->op) {
    case CS_OP_UNIFORM: case CS_OP_RANDBITS: {
        snprintf(idx, sizeof idx, d->shape == CS_SCALAR ? "%uu" : "%uu + e_", CS_UNIFORM_DRAW(d->imm.i));
        if (d->op == CS_OP_UNIFORM)
            out(e, "%s(", e->f32 ? "cs_u01_f32" : "cs_u01_f64");
        draw_word(e, d, idx);
        out(e, d->op == CS_OP_UNIFORM ? ")" : "");
        return;
    }
    case CS_OP_INDEX:   /* an array's sub-array (a scalar: emit_expr) */
        snprintf(idx, sizeof idx, "%lld + e_", (long long)d->imm.i * s->size);
        elem(e, a, idx);
        return;
    case CS_OP_GATHER:
        if (d->shape == CS_SCALAR)
            snprintf(idx, sizeof idx, "g%u_", n);
        else
            snprintf(idx, sizeof idx, "g%u_ * %u + e_", n, s->size);
        e->gather_rows = e->blocked;
        elem(e, a, idx);
        e->gather_rows = false;
        return;
    case CS_OP_SCATTER: {
        /* a with the sub-array at the indices replaced: a select per element */
        unsigned k = d->n_in - 2;
        cs_node v = cs_graph_input(e->g, n, 1);
        const char *lead[CS_RANK_MAX] = {loop_var[0], loop_var[1], loop_var[2]};
        cs_shape head = {k, {1, 1, 1}, 1};
        for (unsigned j = 0; j < k; j++)
            head.dim[j] = as->dim[j];
        char at[160];
        flat_index(&head, lead, at, sizeof at);
        out(e, "(in%u_ && (%s) == g%u_ ? ", n, at, n);
        if (is_array(e, v)) {
            /* v broadcast to the sub-array: its axes align with the trailing ones */
            const cs_shape *vs = shape(e, v);
            const char *ax[CS_RANK_MAX] = {"0", "0", "0"};
            for (unsigned j = 0; j < vs->rank; j++)
                ax[j] = vs->dim[j] == 1 ? "0" : loop_var[j + s->rank - vs->rank];
            flat_index(vs, ax, idx, sizeof idx);
            elem(e, v, idx);
        } else {
            ref(e, v);
        }
        out(e, " : ");
        elem(e, a, "e_");
        out(e, ")");
        return;
    }
    case CS_OP_SLICE: {
        char ax[CS_RANK_MAX][48];
        const char *axp[CS_RANK_MAX] = {ax[0], ax[1], ax[2]};
        for (unsigned k = 0; k < s->rank; k++)
            snprintf(ax[k], sizeof ax[k], "%s + %u", loop_var[k], CS_SLICE_START(d->imm.i, k));
        flat_index(as, axp, idx, sizeof idx);
        elem(e, a, idx);
        return;
    }
    case CS_OP_RESHAPE:
        elem(e, a, "e_");
        return;
    case CS_OP_BROADCAST:
        ref(e, a);
        return;
    case CS_OP_SHIFT: case CS_OP_ROLL: {
        unsigned axis = CS_MOVE_AXIS(d->imm.i), len = s->dim[axis];
        long long amount = CS_MOVE_AMOUNT(d->imm.i);
        char ax[CS_RANK_MAX][160];
        const char *axp[CS_RANK_MAX] = {ax[0], ax[1], ax[2]};
        for (unsigned k = 0; k < s->rank; k++)
            snprintf(ax[k], sizeof ax[k], "%s", loop_var[k]);
        if (d->op == CS_OP_ROLL) {
            long long r = ((-amount) % (long long)len + len) % len;
            snprintf(ax[axis], sizeof ax[axis], "(%s + %lld) %% %u", loop_var[axis], r, len);
            flat_index(s, axp, idx, sizeof idx);
            elem(e, a, idx);
            return;
        }
        /* shift: j - s inside the axis, else the fill (the index clamped so
         * that no lane reads outside the array) */
        char cond[120];
        snprintf(cond, sizeof cond, "(%s - (%lld) >= 0 && %s - (%lld) < %u)", loop_var[axis], amount, loop_var[axis],
                 amount, len);
        snprintf(ax[axis], sizeof ax[axis], "%s ? %s - (%lld) : 0", cond, loop_var[axis], amount);
        flat_index(s, axp, idx, sizeof idx);
        out(e, "(%s ? ", cond);
        elem(e, a, idx);
        out(e, " : ");
        ref(e, cs_graph_input(e->g, n, 1));
        out(e, ")");
        return;
    }
    default:
        snprintf(e->err, sizeof e->err, "no element rule for %s", cs_op_table[d->op].name);
        return;
    }
}

/* The value of node n (of its current element, for an array in a nest). */
static void emit_value(emitter *e, cs_node n)
{
    if (cs_op_table[node(e, n)->op].kind == CS_KIND_MAP)
        emit_expr(e, n);
    else
        emit_element(e, n);
}

/* In a scalar pass of library calls: the cos of n's operand where n is a
 * sin, or the sin where n is a cos, if also called there; else 0. */
static cs_node sincos_partner(const emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    if (!e->in_call_pass || e->near_variant || (d->op != CS_OP_SIN && d->op != CS_OP_COS) || !library_call(e, n))
        return 0;
    cs_op other = d->op == CS_OP_SIN ? CS_OP_COS : CS_OP_SIN;
    cs_node x = cs_graph_input(e->g, n, 0);
    uint32_t count = cs_graph_count(e->g);
    for (cs_node m = 1; m < count; m++)
        if (node(e, m)->op == other && cs_graph_input(e->g, m, 0) == x && library_call(e, m))
            return m;
    return 0;
}

/* sin and cos of one operand in a scalar pass: one sincos call for the
 * pair, emitted at the first of the two. */
static void emit_sincos(emitter *e, cs_node n, cs_node partner)
{
    if (e->stamp[n] == e->now)
        return;   /* the partner, emitted first, computed it */
    bool is_sin = node(e, n)->op == CS_OP_SIN;
    cs_node x = cs_graph_input(e->g, n, 0);
    need(e, x);
    out(e, "        double v%u, v%u;\n        cs_sincos(", n, partner);
    ref(e, x);
    out(e, ", &v%u, &v%u);\n", is_sin ? n : partner, is_sin ? partner : n);
    e->stamp[n] = e->stamp[partner] = e->now;
}

/* A reduction's start (first) or step over element x of its operand at
 * position `at` (jit/op_eval.c's cs_reduce_start and cs_reduce_step): acc
 * and, for argmax/argmin, best are lvalues. */
static void emit_reduce_step(emitter *e, cs_node n, const char *acc, const char *best, const char *x, const char *at,
                             const char *first)
{
    const cs_node_data *d = node(e, n);
    cs_type t = (cs_type)node(e, cs_graph_input(e->g, n, 0))->type;
    bool masked = e->dialect == CS_DIALECT_C && cs_type_is_real(t);
    const char *sel = t == CS_F32 ? "cs_selectf" : "cs_select";
    const char *ind = e->blocked ? "        " : e->scope == SCOPE_FRESH ? "        " : "            ";
    switch ((cs_op)d->op) {
    case CS_OP_SUM:
        if (t == CS_I32)
            out(e, "%s%s = %s ? %s : (int)((unsigned int)%s + (unsigned int)%s);\n", ind, acc, first, x, acc, x);
        else
            out(e, "%s%s = %s ? %s : %s + %s;\n", ind, acc, first, x, acc, x);
        return;
    case CS_OP_RMIN: case CS_OP_RMAX: {
        const char *cmp = d->op == CS_OP_RMIN ? "<" : ">";
        if (masked)
            out(e, "%s%s = %s ? %s : %s(%s %s %s, %s, %s);\n", ind, acc, first, x, sel, x, cmp, acc, x, acc);
        else
            out(e, "%s%s = %s ? %s : (%s %s %s ? %s : %s);\n", ind, acc, first, x, x, cmp, acc, x, acc);
        return;
    }
    case CS_OP_ANY:
        out(e, "%s%s = %s ? %s != 0 : (%s | (%s != 0));\n", ind, acc, first, x, acc, x);
        return;
    case CS_OP_ALL:
        out(e, "%s%s = %s ? %s != 0 : (%s & (%s != 0));\n", ind, acc, first, x, acc, x);
        return;
    case CS_OP_NONZERO:
        out(e, "%s%s = (%s ? 0 : %s) + (%s != 0);\n", ind, acc, first, acc, x);
        return;
    case CS_OP_ARGMAX: case CS_OP_ARGMIN: {
        const char *cmp = d->op == CS_OP_ARGMAX ? ">" : "<";
        out(e, "%s{ const int take_ = %s || %s %s %s;\n", ind, first, x, cmp, best);
        if (masked)
            out(e, "%s  %s = %s(take_, %s, %s);\n", ind, best, sel, x, best);
        else
            out(e, "%s  %s = take_ ? %s : %s;\n", ind, best, x, best);
        out(e, "%s  %s = take_ ? (%s) : %s; }\n", ind, acc, at, acc);
        return;
    }
    default:
        snprintf(e->err, sizeof e->err, "no reduction rule for %s", cs_op_table[d->op].name);
        return;
    }
}

/* A reduction over the element loop of its operand (e->nest: the
 * operand's shape): acc and best hold the result at the element the loop's
 * element reduces into. */
static void emit_reduce_into(emitter *e, cs_node n, const char *acc_name, const char *best_name, bool block)
{
    const cs_node_data *d = node(e, n);
    cs_node a = cs_graph_input(e->g, n, 0);
    const cs_shape *as = shape(e, a);
    char oidx[160], acc[220], best[220], x[220], at[64], first[64];
    if (d->imm.i == CS_ALL_AXES) {
        snprintf(oidx, sizeof oidx, "0");
        snprintf(at, sizeof at, "e_");
        snprintf(first, sizeof first, "e_ == 0");
    } else {
        unsigned axis = (unsigned)d->imm.i;
        const char *ax[CS_RANK_MAX] = {"0", "0", "0"};
        for (unsigned k = 0, j = 0; k < as->rank; k++)
            if (k != axis)
                ax[j++] = loop_var[k];
        flat_index(shape(e, n), ax, oidx, sizeof oidx);
        snprintf(at, sizeof at, "%s", loop_var[axis]);
        snprintf(first, sizeof first, "%s == 0", loop_var[axis]);
    }
    if (block && e->chunk) {   /* emit_chunked_nest: a scalar, not an argmax */
        snprintf(acc, sizeof acc, "acc%u_[j_]", n);
        snprintf(best, sizeof best, "0");
    } else if (block) {
        if (d->shape == CS_SCALAR) {
            snprintf(acc, sizeof acc, "B->%s%u[i]", acc_name, n);
            snprintf(best, sizeof best, "B->%s%u[i]", best_name, n);
        } else {
            snprintf(acc, sizeof acc, "B->%s%u[%s][i]", acc_name, n, oidx);
            snprintf(best, sizeof best, "B->%s%u[%s][i]", best_name, n, oidx);
        }
    } else if (d->shape == CS_SCALAR) {
        snprintf(acc, sizeof acc, "%s%u", acc_name, n);
        snprintf(best, sizeof best, "%s%u_", best_name, n);
    } else {
        snprintf(acc, sizeof acc, "%s%u[%s]", acc_name, n, oidx);
        snprintf(best, sizeof best, "%s%u_[%s]", best_name, n, oidx);
    }
    /* the operand's element, once */
    cs_text *saved = e->out, tmp = {0};
    e->out = &tmp;
    elem(e, a, "e_");
    e->out = saved;
    snprintf(x, sizeof x, "%s", tmp.data ? tmp.data : "0");
    if (tmp.len >= sizeof x)
        snprintf(e->err, sizeof e->err, "an element expression too long");
    cs_text_free(&tmp);
    const char *ind = block ? "        " : e->scope == SCOPE_FRESH ? "        " : "            ";
    out(e, "%s{ const %s x_ = %s;\n", ind, c_type((cs_type)node(e, a)->type), x);
    emit_reduce_step(e, n, acc, best, "x_", at, first);
    out(e, "%s}\n", ind);
}

/* A stack's or concat's destination of operand k's element (the nest over
 * the operand's shape, j0_..): the stacked axis is k, a concatenated one is
 * offset by `off`, the operands before k's extent on it. */
static void copy_destination(const emitter *e, cs_node n, unsigned k, unsigned off, char *buf, size_t size)
{
    const cs_node_data *d = node(e, n);
    const cs_shape *s = shape(e, n);
    unsigned axis = (unsigned)d->imm.i;
    char ax[CS_RANK_MAX][48];
    const char *axp[CS_RANK_MAX] = {ax[0], ax[1], ax[2]};
    for (unsigned j = 0, src = 0; j < s->rank; j++) {
        if (d->op == CS_OP_STACK && j == axis)
            snprintf(ax[j], sizeof ax[j], "%u", k);
        else if (j == axis)
            snprintf(ax[j], sizeof ax[j], "%s + %u", loop_var[src++], off);
        else
            snprintf(ax[j], sizeof ax[j], "%s", loop_var[src++]);
    }
    flat_index(s, axp, buf, size);
}

/* Per lane (CUDA, cs_fresh): an array node as a local array of the thread,
 * filled by an element loop (a stack or concat: one loop per operand; a
 * reduction: a loop over its operand). */
static void emit_lane_array(emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    const cs_shape *s = shape(e, n);
    const char *ind = e->scope == SCOPE_FRESH ? "    " : "        ";
    const char *T = c_type((cs_type)d->type);
    for (unsigned k = 0; k < d->n_in; k++)
        need(e, cs_graph_input(e->g, n, k));
    if (d->shape == CS_SCALAR)
        out(e, "%s%s v%u;\n", ind, T, n);
    else
        out(e, "%s%s v%u[%u];\n", ind, T, n, s->size);
    if (cs_op_table[d->op].kind == CS_KIND_REDUCE) {
        cs_node a = cs_graph_input(e->g, n, 0);
        if ((d->op == CS_OP_ARGMAX || d->op == CS_OP_ARGMIN) && d->shape == CS_SCALAR)
            out(e, "%s%s b%u_;\n", ind, c_type((cs_type)node(e, a)->type), n);
        else if (d->op == CS_OP_ARGMAX || d->op == CS_OP_ARGMIN)
            out(e, "%s%s b%u_[%u];\n", ind, c_type((cs_type)node(e, a)->type), n, s->size);
        nest_open(e, shape(e, a), ind);
        emit_reduce_into(e, n, "v", "b", false);
        nest_close(e, ind);
    } else if (d->op == CS_OP_STACK || d->op == CS_OP_CONCAT) {
        unsigned axis = (unsigned)d->imm.i, off = 0;
        for (unsigned k = 0; k < d->n_in; k++) {
            cs_node o = cs_graph_input(e->g, n, k);
            const cs_shape *os = shape(e, o);
            char to[200];
            copy_destination(e, n, k, off, to, sizeof to);
            nest_open(e, os, ind);   /* operands of a stack not of scalars, or of a concat: arrays */
            out(e, "%s    v%u[%s] = ", ind, n, to);
            elem(e, o, "e_");
            out(e, ";\n");
            nest_close(e, ind);
            off += d->op == CS_OP_CONCAT ? os->dim[axis] : 1;
        }
    } else {
        nest_open(e, s, ind);
        if (d->op == CS_OP_GATHER || d->op == CS_OP_SCATTER)
            emit_gather_base(e, n, "            ");
        out(e, "%s    v%u[e_] = ", ind, n);
        emit_value(e, n);
        out(e, ";\n");
        nest_close(e, ind);
    }
    e->stamp[n] = e->now;
    if (e->scope != SCOPE_FRESH && e->scope != SCOPE_RESTARTS && e->materialized[n]) {
        if (d->shape == CS_SCALAR) {
            out(e, "%s", ind);
            mat(e, n, -1);
            out(e, " = v%u;\n", n);
        } else {
            out(e, "%sfor (int e_ = 0; e_ < %u; e_++)\n%s    ", ind, s->size, ind);
            mat_at(e, n, "e_");
            out(e, " = v%u[e_];\n", n);
        }
    }
}

/* Block code: an array node's element in its nest (the lane loop's body),
 * and its store when another loop reads it. A reduction accumulates into
 * the block (B->m<id>). */
static void emit_nest_node(emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    for (unsigned k = 0; k < d->n_in; k++)
        need(e, cs_graph_input(e->g, n, k));
    if (cs_op_table[d->op].kind == CS_KIND_REDUCE) {   /* complete after the loop: read from the block */
        emit_reduce_into(e, n, "m", "mb", true);
        return;
    }
    if (d->op == CS_OP_GATHER || d->op == CS_OP_SCATTER)
        emit_gather_base(e, n, "        ");
    out(e, "        const %s v%u = ", c_type((cs_type)d->type), n);
    emit_value(e, n);
    out(e, ";\n");
    e->stamp[n] = e->now;
    if (e->materialized[n]) {
        out(e, "        ");
        mat_at(e, n, "e_");
        out(e, " = v%u;\n", n);
    }
}

static void emit_node(emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    if (read_in_place(e, n))
        return;
    if (e->blocked && e->loop_of[n] != CS_NO_LOOP && e->loop_shape[e->loop_of[n]] != CS_SCALAR) {
        emit_nest_node(e, n);
        return;
    }
    bool lane_array = (d->shape != CS_SCALAR && !scalar_stack(e, n)) || cs_op_table[d->op].kind == CS_KIND_REDUCE;
    if (lane_array && !e->blocked) {
        emit_lane_array(e, n);
        return;
    }
    if (lane_array && cs_op_table[d->op].kind == CS_KIND_REDUCE && !is_array(e, cs_graph_input(e->g, n, 0))) {
        /* a reduction of a scalar, in a lane loop: its one element */
        cs_node a = cs_graph_input(e->g, n, 0);
        need(e, a);
        out(e, "        const %s v%u = ", c_type((cs_type)d->type), n);
        if (d->op == CS_OP_ANY || d->op == CS_OP_ALL || d->op == CS_OP_NONZERO) {
            out(e, "(");
            ref(e, a);
            out(e, " != 0)");
        } else if (d->op == CS_OP_ARGMAX || d->op == CS_OP_ARGMIN) {
            out(e, "0");
        } else {
            ref(e, a);
        }
        out(e, ";\n");
        e->stamp[n] = e->now;
        if (e->materialized[n]) {
            out(e, "        ");
            mat(e, n, -1);
            out(e, " = v%u;\n", n);
        }
        return;
    }
    if (lane_array) {
        snprintf(e->err, sizeof e->err, "%s n%u outside a nest", cs_op_table[d->op].name, (unsigned)n);
        return;
    }
    cs_node partner = sincos_partner(e, n);
    if (partner) {
        emit_sincos(e, n, partner);
        return;
    }
    const char *ind = e->scope == SCOPE_FRESH ? "    " : "        ";
    const char *T = c_type((cs_type)d->type);
    bool fresh = e->scope == SCOPE_FRESH || e->scope == SCOPE_RESTARTS;
    bool called = !e->in_call_pass && !fresh && own_pass(e, n);
    for (unsigned k = 0; k < d->n_in && !called; k++)
        need(e, cs_graph_input(e->g, n, k));
    if (called) {
        out(e, "%sconst %s v%u = B->x%u[i];\n", ind, T, n, n);
    } else if (d->op == CS_OP_UNIFORM && CS_UNIFORM_STREAM(d->imm.i) == CS_STREAM_STEP &&
               e->dialect == CS_DIALECT_CUDA) {
        /* A select chain, not sw_[wi]: a runtime index would put the
         * words in local memory instead of registers. */
        unsigned k = CS_UNIFORM_DRAW(d->imm.i);
        unsigned words = 4 * rng_blocks(e->p->n_step_draws);
        out(e, "%sconst %s v%u = %s(", ind, T, n, e->f32 ? "cs_u01_f32" : "cs_u01_f64");
        for (unsigned w = 0; w + 1 < words; w++)
            out(e, "wi%u == %u ? sw_[%u] : ", k, w, w);
        out(e, "sw_[%u]);\n", words - 1);
    } else if (d->op == CS_OP_UNIFORM && !e->in_loop_fn) {
        unsigned k = CS_UNIFORM_DRAW(d->imm.i);
        const char *conv = e->f32 ? "cs_u01_f32" : "cs_u01_f64";
        if (CS_UNIFORM_STREAM(d->imm.i) == CS_STREAM_RESTART)
            out(e, "%sconst %s v%u = %s(rw_[%u]%s);\n", ind, T, n, conv, k, e->scope == SCOPE_RESTARTS ? "[j]" : "");
        else
            out(e, "%sconst %s v%u = %s(B->rw[wi%u][i%s]);\n", ind, T, n, conv, k, e->ahead ? " + col_" : "");
    } else if (d->op == CS_OP_STACK) {
        out(e, "%sconst %s v%u[%u] = {", ind, T, n, d->n_in);
        for (unsigned k = 0; k < d->n_in; k++) {
            if (k)
                out(e, ", ");
            ref(e, cs_graph_input(e->g, n, k));
        }
        out(e, "};\n");
    } else if (cs_op_table[d->op].kind == CS_KIND_MAP || d->op == CS_OP_INDEX) {
        out(e, "%sconst %s v%u = ", ind, T, n);
        emit_expr(e, n);
        out(e, ";\n");
        if (e->near_variant && near_call(e, n)) {
            out(e, "%sfar_ |= %s_far(", ind, cs_op_table[d->op].fn_f32);
            ref(e, cs_graph_input(e->g, n, 0));
            out(e, ", ");
            ref(e, cs_graph_input(e->g, n, 1));
            out(e, ");\n");
        }
    } else {
        /* a scalar of a shape op (a gather) or a draw (randbits) */
        if (d->op == CS_OP_GATHER)
            emit_gather_base(e, n, ind);
        out(e, "%sconst %s v%u = ", ind, T, n);
        emit_element(e, n);
        out(e, ";\n");
    }
    e->stamp[n] = e->now;
    if (!fresh && e->materialized[n] && !e->in_call_pass) {
        if (d->op == CS_OP_STACK)
            for (unsigned k = 0; k < d->n_in; k++) {
                out(e, "%s", ind);
                mat(e, n, (int)k);
                out(e, " = v%u[%u];\n", n, k);
            }
        else {
            out(e, "%s", ind);
            mat(e, n, -1);
            out(e, " = v%u;\n", n);
        }
    }
}

/* Which computed values cross kernels: computed in kernel a, used in b != a,
 * or a root computed before the last kernel (the last one stores the roots). */
static void mark_materialized(emitter *e, const cs_partition *part, const cs_node *roots, unsigned n_roots)
{
    uint32_t count = cs_graph_count(e->g);
    memset(e->materialized, 0, count * sizeof *e->materialized);
    for (cs_node n = 1; n < count; n++) {
        if (part->kernel[n] == CS_NO_KERNEL)
            continue;
        const cs_node_data *d = node(e, n);
        for (unsigned k = 0; k < d->n_in; k++) {
            cs_node o = cs_graph_input(e->g, n, k);
            if (part->kernel[o] != CS_NO_KERNEL && part->kernel[o] != part->kernel[n] && !read_in_place(e, o))
                e->materialized[o] = true;
        }
    }
    for (unsigned r = 0; r < n_roots; r++)
        if (part->kernel[roots[r]] != CS_NO_KERNEL && part->kernel[roots[r]] != part->n_kernels - 1 &&
            !read_in_place(e, roots[r]))
            e->materialized[roots[r]] = true;
    for (cs_node n = 1; n < count; n++)
        e->any_materialized[n] |= e->materialized[n];
}

typedef struct {
    const cs_node *roots;
    unsigned n_roots;
    bool rollout;
} entry;

/* ---- the C dialect's block code: a kernel's loops ---- */

/* The loop a node is computed in: a reduction in its operand's nest, a
 * stack of arrays or a concat in copies of its own, a scalar (a stack of
 * scalars too) in a lane loop, any other array in the nest of its shape. */
static uint32_t loop_domain(const emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    if (cs_op_table[d->op].kind == CS_KIND_REDUCE)
        return node(e, cs_graph_input(e->g, n, 0))->shape;
    if (scalar_stack(e, n))
        return CS_SCALAR;
    if (d->op == CS_OP_STACK || d->op == CS_OP_CONCAT)
        return CS_COPY_LOOP;
    return d->shape;
}

/* Whether n, in the same loop as its operand o (operand k), may read o
 * where it is computed: between scalars always; in a nest, where n reads
 * o's element at its own (an elementwise op, a reduction, a scatter's
 * array) and o's value at that element is complete (not a reduction). */
static bool reads_in_loop(const emitter *e, cs_node o, cs_node n, unsigned k)
{
    uint32_t dom = loop_domain(e, n);
    if (dom != loop_domain(e, o) || dom == CS_COPY_LOOP)
        return false;
    if (dom == CS_SCALAR)
        return true;
    const cs_node_data *d = node(e, n);
    if (cs_op_table[node(e, o)->op].kind == CS_KIND_REDUCE)
        return false;
    switch (cs_op_table[d->op].kind) {
    case CS_KIND_MAP:
    case CS_KIND_REDUCE:
        return true;
    default:
        return d->op == CS_OP_SCATTER && k == 0;
    }
}

/* The entry's root for state variable v. */
static cs_node var_root(const emitter *e, const entry *en, unsigned v)
{
    return en->rollout ? e->p->roll_next[v] : e->p->next[v];
}

/* A root that is the unchanged state of its own variable: nothing to store. */
static bool root_is_own_state(const emitter *e, unsigned v, cs_node r)
{
    const cs_node_data *d = node(e, r);
    return d->op == CS_OP_CARRIED && (unsigned)d->imm.i == e->p->vars[v].slot && d->shape == e->p->vars[v].shape;
}

/* A root already in its variable's rows (an in-place chain's end, or the
 * unchanged state): nothing to commit. */
static bool root_in_own_rows(const emitter *e, unsigned v, cs_node r)
{
    return root_is_own_state(e, v, r) || (aliased(e, r) && e->alias[r] == e->p->vars[v].slot);
}

/* A root that is another variable's state (a = b): read before that
 * variable's commit overwrites it. */
static bool root_is_other_state(const emitter *e, unsigned v, cs_node r)
{
    return node(e, r)->op == CS_OP_CARRIED && !root_is_own_state(e, v, r);
}

/* The roots an entry stores: array ones are committed after the last loop,
 * from memory. */
static void plan_roots(emitter *e, const entry *en, unsigned k)
{
    unsigned last = e->n_loops - 1;
    for (unsigned r = 0; r < en->n_roots; r++) {
        cs_node n = en->roots[r];
        const cs_node_data *d = node(e, n);
        if (e->part->kernel[n] != k || read_in_place(e, n) || (d->n_in == 0 && !is_draw((cs_op)d->op)))
            continue;
        if (e->loop_of[n] != last || d->shape != CS_SCALAR)
            e->materialized[n] = true;
    }
    /* an array state whose next value is another's state: kept in the
     * block before the commits (emit_array_commits) */
    for (unsigned v = 0; v < e->p->n_vars; v++) {
        cs_node r = var_root(e, en, v);
        if (e->p->vars[v].shape != CS_SCALAR && root_is_other_state(e, v, r))
            e->any_materialized[r] = true;
    }
}

/* ---- array states updated in place (the C rollout) ----
 * A grid game's step changes a few elements of a big array state: a brick
 * struck (a scatter of one element, masked by a select), a wall respawned
 * (a select on a lane's condition). Where nothing reads the old value
 * after, each is stored into the state's own rows of the block, in a loop
 * of its own: a store per lane for a scatter, for a select a nest that a
 * block skips where no lane picks the other array. A chain of them that
 * ends at the state's next value leaves nothing to commit. */

/* How many of the entry's roots are n. */
static unsigned root_count(const entry *en, cs_node n)
{
    unsigned c = 0;
    for (unsigned r = 0; r < en->n_roots; r++)
        c += en->roots[r] == n;
    return c;
}

/* The entry's computed nodes reading a: how many, and the last in *one. */
static unsigned readers(const emitter *e, cs_node a, cs_node *one)
{
    uint32_t count = cs_graph_count(e->g);
    unsigned c = 0;
    for (cs_node n = 1; n < count; n++) {
        if (e->part->kernel[n] == CS_NO_KERNEL)
            continue;
        const cs_node_data *d = node(e, n);
        for (unsigned k = 0; k < d->n_in; k++)
            if (cs_graph_input(e->g, n, k) == a) {
                c++;
                *one = n;
                break;
            }
    }
    return c;
}

/* A select on a lane's condition between cur and another value of its shape. */
static bool lane_select(const emitter *e, cs_node n, cs_node cur)
{
    const cs_node_data *d = node(e, n);
    if (d->op != CS_OP_SELECT || d->shape != node(e, cur)->shape || is_array(e, cs_graph_input(e->g, n, 0)))
        return false;
    return (cs_graph_input(e->g, n, 1) == cur) != (cs_graph_input(e->g, n, 2) == cur);
}

/* The node that may take over cur's rows, its scatter (itself, or the one
 * it masks: select(c, scatter(cur, v, i..), cur)) in *sc: a scatter of one
 * scalar element into cur, or a lane's select between cur and another
 * array. 0 if none. */
static cs_node in_place_reader(const emitter *e, cs_node cur, cs_node *sc)
{
    uint32_t count = cs_graph_count(e->g);
    for (cs_node n = 1; n < count; n++) {
        const cs_node_data *d = node(e, n);
        if (e->part->kernel[n] == CS_NO_KERNEL || d->shape != node(e, cur)->shape)
            continue;
        if (d->op == CS_OP_SCATTER && cs_graph_input(e->g, n, 0) == cur && (unsigned)d->n_in == shape(e, cur)->rank + 2 &&
            !is_array(e, cs_graph_input(e->g, n, 1))) {
            cs_node m = 0;
            *sc = n;
            if (readers(e, n, &m) == 1 && lane_select(e, m, cur) && cs_graph_input(e->g, m, 1) == n)
                return m;
            return n;
        }
        if (lane_select(e, n, cur)) {
            *sc = n;
            return n;
        }
    }
    return 0;
}

/* The rollout's chains of in-place nodes, one per array state read by a
 * single node (fusion full: one kernel). Each node is the only reader of
 * the one before it that comes after it (in_place_conflict checks it
 * once the loops are planned); only the last may be a root, the state's
 * own next value. */
static void plan_in_place(emitter *e, const entry *en)
{
    const cs_program *p = e->p;
    uint32_t count = cs_graph_count(e->g);
    for (cs_node n = 0; n < count; n++) {
        e->alias[n] = CS_NO_SLOT;
        e->in_place[n] = e->rows_of[n] = 0;
        e->absorbed[n] = false;
    }
    if (e->dialect != CS_DIALECT_C || !en->rollout || e->part->n_kernels != 1)
        return;
    for (unsigned v = 0; v < p->n_vars; v++) {
        const cs_state_var *sv = &p->vars[v];
        if (sv->shape == CS_SCALAR)
            continue;
        cs_node c = 0;
        bool other = false;   /* a read of its slots by another node (a scalarized element) */
        for (cs_node n = 1; n < count; n++) {
            const cs_node_data *d = node(e, n);
            if (d->op != CS_OP_CARRIED || (unsigned)d->imm.i < sv->slot || (unsigned)d->imm.i >= sv->slot + sv->size)
                continue;
            if (!c && (unsigned)d->imm.i == sv->slot && d->shape == sv->shape)
                c = n;
            else
                other = true;
        }
        if (!c || other || root_count(en, c))
            continue;
        for (cs_node cur = c;;) {
            cs_node sc = 0, n = in_place_reader(e, cur, &sc);
            if (!n || (sc != n && root_count(en, sc)))
                break;
            unsigned roots = root_count(en, n);
            if (roots && (roots > 1 || n != p->roll_next[v]))
                break;
            e->in_place[n] = sc;
            e->rows_of[n] = cur;
            e->alias[n] = sv->slot;
            e->absorbed[sc] = sc != n;
            if (roots)
                break;
            cur = n;
        }
    }
}

/* The first in-place node with a reader of its operand in its loop or
 * after (its loop is of its own: a reader of the old value must come in
 * an earlier loop), or 0. */
static cs_node in_place_conflict(const emitter *e)
{
    uint32_t count = cs_graph_count(e->g);
    for (cs_node n = 1; n < count; n++) {
        if (!e->in_place[n])
            continue;
        for (cs_node u = 1; u < count; u++) {
            if (u == n || u == e->in_place[n] || e->part->kernel[u] == CS_NO_KERNEL)
                continue;
            const cs_node_data *d = node(e, u);
            for (unsigned k = 0; k < d->n_in; k++)
                if (cs_graph_input(e->g, u, k) == e->rows_of[n] &&
                    (e->loop_of[u] == CS_NO_LOOP || e->loop_of[u] >= e->loop_of[n]))
                    return n;
        }
    }
    return 0;
}

/* n and the rest of its chain computed in the usual way. */
static void drop_in_place(emitter *e, cs_node n)
{
    uint32_t count = cs_graph_count(e->g), slot = e->alias[n];
    for (cs_node m = n; m < count; m++)
        if (e->in_place[m] && e->alias[m] == slot) {
            e->absorbed[e->in_place[m]] = false;
            e->in_place[m] = e->rows_of[m] = 0;
            e->alias[m] = CS_NO_SLOT;
        }
}

/* The block values of a later loop's operands (or an accumulation's) of
 * node m, whose loop is `at`'s. */
static void mark_operands(emitter *e, cs_node m, cs_node at, unsigned k)
{
    const cs_node_data *d = node(e, m);
    for (unsigned j = 0; j < d->n_in; j++) {
        cs_node o = cs_graph_input(e->g, m, j);
        if (e->part->kernel[o] == k && e->loop_of[o] != CS_NO_LOOP &&
            (e->loop_of[o] != e->loop_of[at] || !reads_in_loop(e, o, at, j)))
            e->materialized[o] = true;
    }
}

/* Kernel k's nodes in loops, in id order: each joins the first loop of
 * its kind at or after the loops of its operands (after them, where it
 * cannot read them there); a value read by a later loop is kept in the
 * block (materialized). The last kernel ends with a lane loop, where the
 * roots are stored. */
static void plan_loops(emitter *e, const entry *en, unsigned k)
{
    uint32_t count = cs_graph_count(e->g);
    const cs_partition *part = e->part;
    e->n_loops = 0;
    for (cs_node n = 1; n < count; n++) {
        if (part->kernel[n] != k)
            continue;
        e->loop_of[n] = CS_NO_LOOP;
        if (read_in_place(e, n) || e->absorbed[n])
            continue;
        const cs_node_data *d = node(e, n);
        uint32_t dom = loop_domain(e, n), earliest = 0;
        if (e->in_place[n] && node(e, e->in_place[n])->op == CS_OP_SCATTER)
            dom = CS_SCALAR;   /* a store per lane */
        for (unsigned j = 0; j < d->n_in; j++) {
            cs_node o = cs_graph_input(e->g, n, j);
            if (part->kernel[o] != k || e->loop_of[o] == CS_NO_LOOP)
                continue;
            uint32_t at = e->loop_of[o] + (reads_in_loop(e, o, n, j) ? 0 : 1);
            if (at > earliest)
                earliest = at;
        }
        uint32_t l = earliest;
        if (dom == CS_COPY_LOOP || e->in_place[n])
            l = e->n_loops;   /* a loop of its own */
        else
            while (l < e->n_loops && (e->loop_shape[l] != dom || e->loop_node[l]))
                l++;
        if (l >= e->n_loops) {
            l = e->n_loops;
            e->loop_node[l] = e->in_place[n] ? n : 0;
            e->loop_shape[e->n_loops++] = dom;
        }
        e->loop_of[n] = l;
    }
    if (e->n_loops == 0 ||
        (k == part->n_kernels - 1 && (e->loop_shape[e->n_loops - 1] != CS_SCALAR || e->loop_node[e->n_loops - 1]))) {
        e->loop_node[e->n_loops] = 0;
        e->loop_shape[e->n_loops++] = CS_SCALAR;
    }
    /* an array root of the last lane loop (a stack of scalars) would be
     * stored there, after the checks that read it: the roots' loop comes after */
    bool array_root_last = false;
    for (unsigned r = 0; k == part->n_kernels - 1 && r < en->n_roots; r++)
        array_root_last |= part->kernel[en->roots[r]] == k && is_array(e, en->roots[r]) &&
                           e->loop_of[en->roots[r]] == e->n_loops - 1;
    if (array_root_last) {
        e->loop_node[e->n_loops] = 0;
        e->loop_shape[e->n_loops++] = CS_SCALAR;
    }
    /* what a later loop reads, and what a loop accumulates or copies into */
    for (cs_node n = 1; n < count; n++) {
        if (part->kernel[n] != k || e->loop_of[n] == CS_NO_LOOP)
            continue;
        const cs_node_data *d = node(e, n);
        uint32_t dom = loop_domain(e, n);
        if (dom == CS_COPY_LOOP || (cs_op_table[d->op].kind == CS_KIND_REDUCE && dom != CS_SCALAR))
            e->materialized[n] = true;
        mark_operands(e, n, n, k);
        if (e->in_place[n] && e->in_place[n] != n)   /* the scatter it stores: its value and indices */
            mark_operands(e, e->in_place[n], n, k);
    }
    if (k == part->n_kernels - 1)
        plan_roots(e, en, k);
    for (cs_node n = 1; n < count; n++)
        if (e->alias[n] != CS_NO_SLOT)
            e->materialized[n] = false;   /* in its state's rows */
    for (cs_node n = 1; n < count; n++)
        if (part->kernel[n] == k && e->materialized[n]) {
            e->any_materialized[n] = true;
            const cs_node_data *d = node(e, n);
            if (d->op == CS_OP_ARGMAX || d->op == CS_OP_ARGMIN)
                e->arg_best[n] = true;
        }
}

/* Kernel k's loops, with the rollout's in-place chains (plan_in_place):
 * planned again without a chain's rest from a node whose operand is read
 * in its loop or after. */
static void plan_kernel(emitter *e, const entry *en, unsigned k)
{
    uint32_t count = cs_graph_count(e->g);
    if (k == 0)
        plan_in_place(e, en);
    bool *saved = malloc(2 * (size_t)count * sizeof *saved);
    if (!saved) {
        snprintf(e->err, sizeof e->err, "out of memory");
        return;
    }
    memcpy(saved, e->materialized, count * sizeof *saved);
    memcpy(saved + count, e->any_materialized, count * sizeof *saved);
    for (;;) {
        plan_loops(e, en, k);
        cs_node n = in_place_conflict(e);
        if (!n)
            break;
        drop_in_place(e, n);
        memcpy(e->materialized, saved, count * sizeof *saved);
        memcpy(e->any_materialized, saved + count, count * sizeof *saved);
    }
    free(saved);
}

/* Whether every observation is a box scalar: stored one line each. */
static bool scalar_obs_only(const cs_program *p)
{
    for (unsigned k = 0; k < p->n_obs_items; k++)
        if (p->obs_items[k].shape != CS_SCALAR || p->obs_items[k].space != CS_OBS_BOX)
            return false;
    return true;
}

/* Whether an info value is an array (stored by its own loops). */
static bool array_info(const cs_program *p)
{
    for (unsigned k = 0; k < p->n_info_items; k++)
        if (p->info_items[k].shape != CS_SCALAR)
            return true;
    return false;
}

/* Whether a state variable keeps its value through an auto-reset. */
static bool any_kept(const cs_program *p)
{
    for (unsigned v = 0; v < p->n_vars; v++)
        if (p->vars[v].kept)
            return true;
    return false;
}

static bool any_array_state(const cs_program *p, bool real_only)
{
    for (unsigned v = 0; v < p->n_vars; v++)
        if (p->vars[v].shape != CS_SCALAR && (!real_only || cs_type_is_real(p->vars[v].type)))
            return true;
    return false;
}

/* Whether a lane's next state has no NaN or infinity, as bad_ (0: fine).
 * Array states: their elements are checked by loops first (block code:
 * into B->nf, emit_array_checks; per lane: here). */
static void emit_bad_check(emitter *e, const cs_node *next)
{
    const cs_program *p = e->p;
    bool arrays = any_array_state(p, true);
    out(e, "        %sint bad_ = !(1", arrays && !e->blocked ? "" : "const ");
    for (unsigned v = 0; v < p->n_vars; v++) {
        if (p->vars[v].shape != CS_SCALAR || !cs_type_is_real(p->vars[v].type))
            continue;
        out(e, " & (");
        ref(e, next[v]);
        out(e, " - ");
        ref(e, next[v]);
        out(e, " == 0)");
    }
    out(e, ")%s;\n", !arrays || !e->blocked ? "" : e->check_once && e->rollout ? " | (nfc_ & B->nf[i])" : " | B->nf[i]");
    if (!arrays || e->blocked)
        return;
    for (unsigned v = 0; v < p->n_vars; v++) {
        const cs_state_var *sv = &p->vars[v];
        if (sv->shape == CS_SCALAR || !cs_type_is_real(sv->type))
            continue;
        nest_open(e, cs_shape_of(e->g, sv->shape), "        ");
        out(e, "            bad_ |= !(");
        elem(e, next[v], "e_");
        out(e, " - ");
        elem(e, next[v], "e_");
        out(e, " == 0);\n");
        nest_close(e, "        ");
    }
}

/* Block code: a loop over the lanes (inside a nest or not); ivdep in the
 * step entry's last kernel (emit_kernel_loops says why). */
static void lane_loop_open(emitter *e, const char *ivdep)
{
    out(e, "%s    for (int i = 0; i < nv; i++) {\n        const long long lane = b0 + i; (void)lane;\n", ivdep);
}

/* Whether shape `shape` comes first among those of the states before v
 * (block code groups the states' loops by shape). */
static bool first_of_shape(const cs_program *p, unsigned v, bool real_only)
{
    for (unsigned w = 0; w < v; w++)
        if (p->vars[w].shape == p->vars[v].shape && (!real_only || cs_type_is_real(p->vars[w].type)))
            return false;
    return true;
}

/* Whether node n is finite wherever the state it reads is: ops that pick,
 * move or bound values (select, scatter, min, ...) of finite operands, the
 * finite constants and tables, integers, and the draws. Arithmetic can
 * overflow, a parameter may be anything: not finite. */
static bool finite_given_state(const emitter *e, cs_node n, const bool *finite)
{
    const cs_node_data *d = node(e, n);
    if (!cs_type_is_real((cs_type)d->type))
        return true;
    switch ((cs_op)d->op) {
    case CS_OP_CONST:
        return isfinite(d->imm.f);
    case CS_OP_TABLE: {
        const double *pool = cs_graph_table(e->g);
        for (unsigned k = 0; k < shape(e, n)->size; k++)
            if (!isfinite(pool[d->imm.i + k]))
                return false;
        return true;
    }
    case CS_OP_CARRIED: case CS_OP_UNIFORM:
        return true;
    case CS_OP_CAST: {
        cs_type from = (cs_type)node(e, cs_graph_input(e->g, n, 0))->type;
        if (cs_type_is_real(from) && !(from == CS_F32 && d->type == CS_F64))
            return false;   /* an f64 may overflow an f32 */
        break;
    }
    case CS_OP_NEG: case CS_OP_ABS: case CS_OP_FLOOR: case CS_OP_MIN: case CS_OP_MAX: case CS_OP_CLIP:
    case CS_OP_SELECT: case CS_OP_INDEX: case CS_OP_STACK: case CS_OP_CONCAT: case CS_OP_GATHER:
    case CS_OP_SCATTER: case CS_OP_SLICE: case CS_OP_RESHAPE: case CS_OP_BROADCAST: case CS_OP_SHIFT:
    case CS_OP_ROLL: case CS_OP_RMIN: case CS_OP_RMAX:
        break;
    default:
        return false;
    }
    for (unsigned k = 0; k < d->n_in; k++)
        if (!finite[cs_graph_input(e->g, n, k)])
            return false;
    return true;
}

/* Whether every real array state's next value (the rollout's) and fresh
 * value are finite wherever the state is: then a block's array states stay
 * finite once its first step has checked them (a lane found not finite
 * restarts from its fresh state), and only that step checks them. */
static bool finite_arrays(const emitter *e)
{
    const cs_program *p = e->p;
    uint32_t count = cs_graph_count(e->g);
    bool *finite = calloc(count, sizeof *finite);
    if (!finite)
        return false;
    for (cs_node n = 1; n < count; n++)
        finite[n] = finite_given_state(e, n, finite);
    bool all = true;
    for (unsigned v = 0; v < p->n_vars; v++)
        if (p->vars[v].shape != CS_SCALAR && cs_type_is_real(p->vars[v].type))
            all &= finite[p->roll_next[v]] && finite[p->restart[v]];
    free(finite);
    return all;
}

/* Block code, before the last kernel's lane loop: whether an element of
 * each real array state is not finite, into B->nf; a nest per shape. In a
 * rollout whose array states stay finite (finite_arrays), in a block's
 * first step only (nfc_). */
static void emit_array_checks(emitter *e, const entry *en, const char *ivdep)
{
    const cs_program *p = e->p;
    bool first = true;
    if (en->rollout)
        e->check_once = finite_arrays(e);
    if (en->rollout && e->check_once)
        out(e, "    const int nfc_ = B->nfc;   /* the block's first step since its state was loaded */\n"
               "    B->nfc = 0;\n    if (nfc_) {\n");
    for (unsigned v = 0; v < p->n_vars; v++) {
        const cs_state_var *sv = &p->vars[v];
        if (sv->shape == CS_SCALAR || !cs_type_is_real(sv->type) || !first_of_shape(p, v, true))
            continue;
        e->now++;
        nest_open(e, cs_shape_of(e->g, sv->shape), "    ");
        lane_loop_open(e, ivdep);
        out(e, "        int nf_ = %s;\n", first ? "e_ == 0 ? 0 : B->nf[i]" : "B->nf[i]");
        for (unsigned w = v; w < p->n_vars; w++) {
            if (p->vars[w].shape != sv->shape || !cs_type_is_real(p->vars[w].type))
                continue;
            cs_node r = var_root(e, en, w);
            out(e, "        { const %s x_ = ", e->real);
            elem(e, r, "e_");
            out(e, "; nf_ |= !(x_ - x_ == 0); }\n");
        }
        out(e, "        B->nf[i] = nf_;\n    }\n");
        nest_close(e, "    ");
        first = false;
    }
    if (en->rollout && e->check_once)
        out(e, "    }\n");
    e->check_arrays = true;
}

/* The roots' final stores, in the last kernel's (last) lane loop. */
/* Strict mode: a lane's first index out of range into its word
 * (cs_lanes.index_fault), where the program has the roots
 * (cs_program_add_index_faults); without them, nothing. */
static void emit_index_fault(emitter *e, const cs_node *fault)
{
    if (!fault[0])
        return;
    need(e, fault[0]);
    need(e, fault[1]);
    const char *L = e->L;
    out(e, "        if ((");
    ref(e, fault[0]);
    out(e, ") != 0 && %sindex_fault && lane < %send && %sindex_fault[lane] == 0)\n"
           "            %sindex_fault[lane] = (long long)((unsigned long long)(unsigned)(", L, L, L, L);
    ref(e, fault[0]);
    out(e, ") << 32 | (unsigned)(");
    ref(e, fault[1]);
    out(e, "));\n");
}

static void emit_final(emitter *e, const entry *en)
{
    const cs_program *p = e->p;
    for (unsigned r = 0; r < en->n_roots; r++)
        if (!is_array(e, en->roots[r]))
            need(e, en->roots[r]);
    if (en->rollout) {
        emit_bad_check(e, p->roll_next);
        for (unsigned v = 0; v < p->n_vars; v++)
            if (p->vars[v].shape == CS_SCALAR)
                store(e, p->roll_next[v], "", "        B->%s[%u][i]", slot_is_real(e, p->vars[v].slot) ? "c" : "ci",
                      e->slot_index[p->vars[v].slot]);
        out(e, "        B->ss[i] += 1;\n        B->ret[i] += (double)");
        ref(e, p->roll_reward);
        out(e, ";\n        B->done[i] = ((((");
        ref(e, p->roll_terminated);
        out(e, ") | (");
        ref(e, p->roll_truncated);
        out(e, ")) & !bad_) | (bad_ << 1));\n        B->end[i] = (");
        ref(e, p->roll_terminated);
        out(e, ") | (");
        ref(e, p->roll_truncated);
        out(e, ");\n        ended_ |= (unsigned)B->end[i] << (i & 31);\n        bad_any_ |= bad_;\n");
        for (unsigned r = 0; r < p->n_records; r++)
            store(e, p->record[r], record_cast(p, r), "        B->rec%u[i]", r);
        emit_index_fault(e, p->roll_index_fault);
        return;
    }
    /* A step stores its results where the caller reads them, no copy after */
    for (unsigned v = 0; v < p->n_vars; v++) {
        unsigned slot = p->vars[v].slot;
        if (p->vars[v].shape == CS_SCALAR)
            store(e, p->next[v], slot_store_cast(e, slot), "        ((%s *)L->carried[%u])[lane]",
                  slot_buffer_type(e, slot), slot);
    }
    for (unsigned k = 0; k < p->n_obs_items; k++) {
        const cs_obs_item *it = &p->obs_items[k];
        if (it->shape != CS_SCALAR)
            continue;
        if (it->space == CS_OBS_DISCRETE)
            store(e, it->next, "(long long)", "        L->obs_int[%uull * L->stride + lane]", it->offset);
        else
            store_out(e, it->next, true, "        L->obs[%uull * L->stride + lane]", it->offset);
    }
    for (unsigned k = 0; k < p->n_info_items; k++) {
        const cs_info_item *it = &p->info_items[k];
        if (it->shape == CS_SCALAR)
            store(e, it->step, "(double)", "        if (L->info) L->info[%uull * L->stride + lane]", it->offset);
    }
    store_out(e, p->reward, false, "        L->reward[lane]");
    store(e, p->terminated, "", "        B->term[i]");
    store(e, p->truncated, "", "        B->trunc[i]");
    emit_bad_check(e, p->next);
    out(e, "        B->done[i] = bad_;\n");
    emit_index_fault(e, p->index_fault);
}

/* Block code, after the last kernel's lane loop: the array roots stored,
 * observations first (they may read a state's old value), then a copy of
 * each root that is another state, then the states; a nest per shape. */
static void emit_array_commits(emitter *e, const entry *en, const char *ivdep)
{
    const cs_program *p = e->p;
    for (unsigned k = 0; k < p->n_info_items && !en->rollout; k++) {
        const cs_info_item *it = &p->info_items[k];
        if (it->shape == CS_SCALAR)
            continue;
        e->now++;
        out(e, "    if (L->info)\n");
        nest_open(e, cs_shape_of(e->g, it->shape), "    ");
        lane_loop_open(e, ivdep);
        out(e, "        L->info[(%uull + e_) * L->stride + lane] = (double)", it->offset);
        elem(e, it->step, "e_");
        out(e, ";\n    }\n");
        nest_close(e, "    ");
    }
    for (unsigned k = 0; k < p->n_obs_items && !en->rollout; k++) {
        const cs_obs_item *it = &p->obs_items[k];
        bool first = it->shape != CS_SCALAR;
        for (unsigned j = 0; j < k && first; j++)
            first = p->obs_items[j].shape != it->shape;
        if (!first)
            continue;
        e->now++;
        nest_open(e, cs_shape_of(e->g, it->shape), "    ");
        lane_loop_open(e, ivdep);
        for (unsigned j = k; j < p->n_obs_items; j++) {
            const cs_obs_item *jt = &p->obs_items[j];
            if (jt->shape != it->shape)
                continue;
            if (jt->space == CS_OBS_DISCRETE)
                out(e, "        L->obs_int[(%uull + e_) * L->stride + lane] = (long long)", jt->offset);
            else
                out(e, "        L->obs[(%uull + e_) * L->stride + lane] = " CANON_OBS, jt->offset);
            elem(e, jt->next, "e_");
            out(e, jt->space == CS_OBS_DISCRETE ? ";\n" : ");\n");
        }
        out(e, "    }\n");
        nest_close(e, "    ");
    }
    for (int pass = 0; pass < 2; pass++)
        for (unsigned v = 0; v < p->n_vars; v++) {
            const cs_state_var *sv = &p->vars[v];
            if (sv->shape == CS_SCALAR || !first_of_shape(p, v, false))
                continue;
            bool any = false;
            for (unsigned w = v; w < p->n_vars; w++) {
                cs_node r = var_root(e, en, w);
                any |= p->vars[w].shape == sv->shape && !root_in_own_rows(e, w, r) &&
                       (pass == 1 || root_is_other_state(e, w, r));
            }
            if (!any)
                continue;
            e->now++;
            nest_open(e, cs_shape_of(e->g, sv->shape), "    ");
            lane_loop_open(e, ivdep);
            for (unsigned w = v; w < p->n_vars; w++) {
                const cs_state_var *sw = &p->vars[w];
                cs_node r = var_root(e, en, w);
                if (sw->shape != sv->shape || root_in_own_rows(e, w, r))
                    continue;
                if (pass == 0) {   /* another state's old value, kept before the commits */
                    if (!root_is_other_state(e, w, r))
                        continue;
                    out(e, "        ");
                    mat_at(e, r, "e_");
                    out(e, " = ");
                    elem(e, r, "e_");
                    out(e, ";\n");
                    continue;
                }
                out(e, "        ");
                if (en->rollout)
                    block_slot(e, sw->slot, "e_");
                else
                    out(e, "((%s *)L->carried[%u + e_])[lane]", slot_buffer_type(e, sw->slot), sw->slot);
                out(e, " = %s", en->rollout ? "" : slot_store_cast(e, sw->slot));
                if (root_is_other_state(e, w, r))
                    mat_at(e, r, "e_");
                else
                    elem(e, r, "e_");
                out(e, ";\n");
            }
            out(e, "    }\n");
            nest_close(e, "    ");
        }
}

/* One kernel's loop body (without the loop header). */
static void emit_kernel_body(emitter *e, const entry *en, unsigned k)
{
    e->now++;
    e->kernel = k;
    out(e, "        const long long lane = b0 + i; (void)lane;\n");
    uint32_t count = cs_graph_count(e->g);
    for (cs_node n = 1; n < count; n++)
        if (e->part->kernel[n] == k && e->loop_of[n] == e->loop)
            emit_node(e, n);
    if (k == e->part->n_kernels - 1 && e->loop == e->n_loops - 1)
        emit_final(e, en);
}


/* The largest kernel given a near copy of its loop (CartPole's has about 60 values). */
enum { CS_LEAF_NEAR_MAX_NODES = 200 };

/* Block code: a stack's or concat's copies, one nest per operand, into the
 * block (B->m<id>). */
static void emit_copies(emitter *e, cs_node n, const char *ivdep)
{
    const cs_node_data *d = node(e, n);
    unsigned axis = (unsigned)d->imm.i, off = 0;
    for (unsigned k = 0; k < d->n_in; k++) {
        cs_node o = cs_graph_input(e->g, n, k);
        const cs_shape *os = shape(e, o);
        char to[200];
        copy_destination(e, n, k, off, to, sizeof to);
        e->now++;
        if (os->rank) {
            nest_open(e, os, "    ");
        } else {
            out(e, "    {\n");
            e->nest = os;
        }
        lane_loop_open(e, ivdep);
        need(e, o);
        out(e, "        ");
        mat_at(e, n, to);
        out(e, " = ");
        elem(e, o, "e_");
        out(e, ";\n    }\n");
        nest_close(e, "    ");
        off += d->op == CS_OP_CONCAT ? os->dim[axis] : 1;
    }
}

/* Block code: an in-place node's loop (plan_in_place). A scatter: its one
 * element stored per lane where the index is in range (JAX's rule) and the
 * select masking it, if any, holds. A select: its other operand's elements
 * stored where the lane's condition picks it, in a nest that the block
 * skips where no lane does (a wall's respawn is rare). */
static void emit_in_place(emitter *e, cs_node n)
{
    cs_node sc = e->in_place[n], cond = cs_graph_input(e->g, n, 0);
    e->now++;
    if (node(e, sc)->op == CS_OP_SCATTER) {
        cs_node value = cs_graph_input(e->g, sc, 1);
        char at[32];
        snprintf(at, sizeof at, "g%u_", sc);
        lane_loop_open(e, "#pragma GCC ivdep\n");   /* gathers_in_loop says why */
        need(e, value);
        if (sc != n)
            need(e, cond);
        emit_gather_base(e, sc, "        ");
        /* a select (emit_in_place's nest says why): out of range, the
         * element g = 0 takes its own value */
        bool real = slot_is_real(e, e->alias[n]);
        e->gather_rows = true;
        out(e, "        ");
        block_slot(e, e->alias[n], at);
        out(e, " = %s(in%u_", real ? (e->f32 ? "cs_selectf" : "cs_select") : "", sc);
        if (sc != n) {
            out(e, " && ");
            ref(e, cond);
        }
        out(e, real ? ", " : " ? ");
        ref(e, value);
        out(e, real ? ", " : " : ");
        block_slot(e, e->alias[n], at);
        e->gather_rows = false;
        out(e, ");\n    }\n");
        return;
    }
    bool picks_second = cs_graph_input(e->g, n, 1) == e->rows_of[n];
    cs_node other = cs_graph_input(e->g, n, picks_second ? 2 : 1);
    const char *when = picks_second ? "!" : "";
    out(e, "    int any_ = 0;\n");
    lane_loop_open(e, "");
    need(e, cond);
    out(e, "        any_ |= %s", when);
    ref(e, cond);
    out(e, ";\n    }\n    if (!any_)\n        return 0;\n");
    e->now++;
    nest_open(e, shape(e, n), "    ");
    lane_loop_open(e, "");
    need(e, cond);
    need(e, other);
    /* a select, not a store under a branch: that one left an f64 state's
     * old value where a lane respawned (tests/test_grid_state.c, GCC 12.2,
     * AVX-512), the select gives the interpreter's bits */
    bool real = slot_is_real(e, e->alias[n]);
    out(e, "        ");
    block_slot(e, e->alias[n], "e_");
    out(e, " = %s(%s", real ? (e->f32 ? "cs_selectf" : "cs_select") : "", when);
    ref(e, cond);
    out(e, real ? ", " : " ? ");
    ref(e, other);
    out(e, real ? ", " : " : ");
    block_slot(e, e->alias[n], "e_");
    out(e, ");\n    }\n");
    nest_close(e, "    ");
}

/* Lanes of a chunk (emit_chunked_nest): a vector of 16 f32 or i32. */
enum { CS_CHUNK = 16 };

/* Whether the rollout's loop l of kernel k is a nest whose only results are
 * reductions of every element to a scalar (a count, a sum, any, ...). */
static bool chunkable(const emitter *e, const entry *en, unsigned k, unsigned l)
{
    uint32_t count = cs_graph_count(e->g);
    bool any = false;
    if (!en->rollout || e->loop_shape[l] == CS_SCALAR || e->loop_shape[l] == CS_COPY_LOOP || e->loop_node[l])
        return false;
    for (cs_node n = 1; n < count; n++) {
        if (e->part->kernel[n] != k || e->loop_of[n] != l)
            continue;
        const cs_node_data *d = node(e, n);
        if (cs_op_table[d->op].kind == CS_KIND_REDUCE) {
            if (d->imm.i != CS_ALL_AXES || d->shape != CS_SCALAR || d->op == CS_OP_ARGMAX || d->op == CS_OP_ARGMIN)
                return false;
            any = true;
        } else if (e->materialized[n]) {
            return false;
        }
    }
    return any;
}

/* Block code: a chunkable nest as CS_CHUNK lanes at a time, the lane loop
 * inside the element loops and the reductions' accumulators in registers
 * (acc<id>_) until the chunk's last element: the nest over all the lanes
 * loads and stores each accumulator once per element (Breakout's count of
 * its 100 bricks: a third of its step). Blocks of other sizes: the nest. */
static void emit_chunked_nest(emitter *e, const entry *en, unsigned k, const cs_shape *s)
{
    uint32_t count = cs_graph_count(e->g);
    out(e, "    if (nv %% %u == 0) {\n    for (int i0_ = 0; i0_ < nv; i0_ += %u) {\n", CS_CHUNK, CS_CHUNK);
    for (cs_node n = 1; n < count; n++)
        if (e->part->kernel[n] == k && e->loop_of[n] == e->loop && cs_op_table[node(e, n)->op].kind == CS_KIND_REDUCE)
            out(e, "    %s acc%u_[%u];\n", c_type((cs_type)node(e, n)->type), n, CS_CHUNK);
    nest_open(e, s, "    ");
    /* not unrolled: 16 copies of the body would be straight-line code,
     * which only the SLP vectorizer (off, backend_cpu.c) would vectorize */
    out(e, "#pragma GCC unroll 1\n    for (int j_ = 0; j_ < %u; j_++) {\n        const int i = i0_ + j_;\n", CS_CHUNK);
    e->chunk = true;
    emit_kernel_body(e, en, k);
    e->chunk = false;
    out(e, "    }\n");
    nest_close(e, "    ");
    out(e, "    for (int j_ = 0; j_ < %u; j_++) {\n", CS_CHUNK);
    for (cs_node n = 1; n < count; n++)
        if (e->part->kernel[n] == k && e->loop_of[n] == e->loop && cs_op_table[node(e, n)->op].kind == CS_KIND_REDUCE)
            out(e, "        B->m%u[i0_ + j_] = acc%u_[j_];\n", n, n);
    out(e, "    }\n    }\n    } else {\n");
    nest_open(e, s, "    ");
    out(e, "    for (int i = 0; i < nv; i++) {\n");
    emit_kernel_body(e, en, k);
    out(e, "    }\n");
    nest_close(e, "    ");
    out(e, "    }\n");
}

/* Whether the loop being emitted of kernel k gathers (a lane's element at
 * a run-time index). Its function, for GCC 12 to vectorize it:
 *   - `#pragma GCC ivdep` on the lane loop: GCC cannot tell where a gather
 *     reads, and would not vectorize it beside the block's stores; every
 *     access of a lane loop is its own lane's (lanes never mix), so no
 *     iteration depends on another;
 *   - no jump threading (optimize("no-thread-jumps"), the function alone:
 *     the backend's other flags stay): threading Breakout's selects into
 *     paths made its gather a conditional load and left selects of booleans
 *     (c ? 0 : b), which GCC does not vectorize. For the whole source it
 *     cost SpaceInvaders-MinAtar 5%, whose scalar code gains from it. */
static bool gathers_in_loop(const emitter *e, unsigned k)
{
    uint32_t count = cs_graph_count(e->g);
    cs_node in_place = e->loop_node[e->loop];
    if (in_place && node(e, e->in_place[in_place])->op == CS_OP_SCATTER)
        return true;   /* a store per lane at its index (emit_in_place) */
    for (cs_node n = 1; n < count; n++)
        if (e->part->kernel[n] == k && e->loop_of[n] == e->loop && node(e, n)->op == CS_OP_GATHER)
            return true;
    return false;
}

/* Block code: kernel k as its planned loops, in order (more than one lane
 * loop: the kernel has arrays); the last kernel's array states are checked
 * before its lane loop and committed after it. Each loop is a function of
 * its own (into e->loop_fns, called from the step): in one function the
 * loops of a big kernel cost GCC's alias analysis minutes (every store of
 * the block against every other). The last loop's function returns the
 * rollout's ended_ and bad_any_. */
static void emit_planned_loops(emitter *e, const entry *en, unsigned k)
{
    uint32_t count = cs_graph_count(e->g);
    bool last = k == e->part->n_kernels - 1;
    const char *ivdep = !en->rollout && last ? "#pragma GCC ivdep\n" : "";
    unsigned D = e->p->n_step_draws;
    cs_text *step = e->out;
    out(e, "    {\n");
    for (e->loop = 0; e->loop < e->n_loops; e->loop++) {
        uint32_t dom = e->loop_shape[e->loop];
        bool final = last && e->loop == e->n_loops - 1;
        char name[48];
        snprintf(name, sizeof name, "cs_%s_k%u_loop%u", en->rollout ? "roll" : "step", k, e->loop);
        bool gathers = gathers_in_loop(e, k);
        if (final && en->rollout)
            out(e, "    { const unsigned long long r_ = %s(B, L, nv, b0, t, %s); ended_ = (unsigned)r_; bad_any_ = (int)(r_ >> 32); }\n",
                name, e->ahead ? "col_" : "0");
        else
            out(e, "    %s(B, L, nv, b0, t, %s);\n", name, e->ahead ? "col_" : "0");
        e->out = e->loop_fns;
        e->in_loop_fn = true;
        out(e, "static __attribute__((noinline%s)) unsigned long long %s(cs_block *restrict B, const cs_lanes *restrict L, int nv, long long b0, long long t, int col_)\n{\n"
               "    (void)L; (void)b0; (void)t; (void)col_;\n", gathers ? ", optimize(\"no-thread-jumps\")" : "", name);
        if (D)
            out(e, "    const unsigned long long w0 = (unsigned long long)t * %uu, blk = w0 >> 2; (void)w0; (void)blk;\n", D);
        if (final && en->rollout)
            out(e, "    unsigned ended_ = 0;\n    int bad_any_ = 0;\n");
        if (final && any_array_state(e->p, true))
            emit_array_checks(e, en, ivdep);
        if (dom == CS_COPY_LOOP) {
            for (cs_node n = 1; n < count; n++)
                if (e->part->kernel[n] == k && e->loop_of[n] == e->loop)
                    emit_copies(e, n, ivdep);
        } else if (e->loop_node[e->loop]) {
            emit_in_place(e, e->loop_node[e->loop]);
        } else if (!final && chunkable(e, en, k, e->loop)) {
            emit_chunked_nest(e, en, k, cs_shape_of(e->g, dom));
        } else {
            if (dom != CS_SCALAR)
                nest_open(e, cs_shape_of(e->g, dom), "    ");
            out(e, "%s    for (int i = 0; i < nv; i++) {\n", gathers ? "#pragma GCC ivdep\n" : ivdep);
            emit_kernel_body(e, en, k);
            out(e, "    }\n");
            if (dom != CS_SCALAR)
                nest_close(e, "    ");
        }
        if (final)
            emit_array_commits(e, en, ivdep);
        out(e, final && en->rollout ? "    return ended_ | (unsigned long long)(unsigned)bad_any_ << 32;\n}\n\n"
                                    : "    return 0;\n}\n\n");
        e->in_loop_fn = false;
        e->out = step;
    }
    e->loop = e->n_loops - 1;
    out(e, "    }\n");
}

/* Kernel k's loop over the lanes: the body once, or, where its f32 sin
 * and cos read leaves (leaf_near), a loop of those loads that notes
 * whether every lane is near, then the body with the _near functions if
 * so, else with the exact ones. */
static void emit_kernel_loops(emitter *e, const entry *en, unsigned k)
{
    uint32_t count = cs_graph_count(e->g);
    e->kernel = k;
    e->loop = 0;
    bool last = k == e->part->n_kernels - 1;
    if (e->n_loops > 1 || e->loop_shape[0] != CS_SCALAR || (last && any_array_state(e->p, false)) ||
        (last && !en->rollout && (!scalar_obs_only(e->p) || array_info(e->p)))) {
        emit_planned_loops(e, en, k);
        return;
    }
    /* Not for a long loop: two copies of Acrobot's RK4 step (some 350
     * values) left GCC 12 vectorizing neither, 11x slower. */
    bool any = false;
    unsigned size = 0;
    for (cs_node n = 1; n < count; n++) {
        any |= leaf_near(e, n);
        size += e->part->kernel[n] == k;
    }
    any &= size <= CS_LEAF_NEAR_MAX_NODES;
    /* The step's last kernel loads a lane's state and stores its next state in
     * place, the same element in the same iteration: GCC cannot see that the
     * buffers do not overlap, and would not vectorize without this */
    const char *ivdep = !en->rollout && k == e->part->n_kernels - 1 ? "#pragma GCC ivdep\n" : "";
    if (!any) {
        out(e, "%s    for (int i = 0; i < nv; i++) {\n", ivdep);
        emit_kernel_body(e, en, k);
        out(e, "    }\n");
        return;
    }
    out(e, "    {\n    int near_ = 1;   /* every lane's sin and cos operands within their near range */\n"
           "    for (int i = 0; i < nv; i++) {\n"
           "        const long long lane = b0 + i; (void)lane;\n");
    e->now++;
    for (cs_node n = 1; n < count; n++)
        if (leaf_near(e, n)) {
            cs_node x = cs_graph_input(e->g, n, 0);
            need(e, x);
            out(e, "        near_ &= !%s_far(v%u);\n", cs_op_table[node(e, n)->op].fn_f32, x);
        }
    out(e, "    }\n    if (near_) {\n%s    for (int i = 0; i < nv; i++) {\n", ivdep);
    e->leaf_near_variant = true;
    emit_kernel_body(e, en, k);
    e->leaf_near_variant = false;
    out(e, "    }\n    } else {\n%s    for (int i = 0; i < nv; i++) {\n", ivdep);
    emit_kernel_body(e, en, k);
    out(e, "    }\n    }\n    }\n");
}

/* One loop of kernel k's pass over the lanes of the block: the cone, then
 * the pass's results to B->x<id>. In a near64 pass, the near loop notes
 * each lane's far flag (B->far, and far_ for the block), and the exact
 * loop computes only the lanes listed in B->far_at[0, nf_) (every lane
 * where the near loop did not run). */
static void emit_call_loop(emitter *e, const bool *cone)
{
    uint32_t count = cs_graph_count(e->g);
    if (e->near64_pass && !e->near_variant)
        out(e, "    for (int j_ = 0; j_ < nf_; j_++) {\n        const int i = try_near_ ? B->far_at[j_] : j_;\n");
    else
        out(e, "    for (int i = 0; i < n; i++) {\n");
    e->now++;
    if (e->near64_pass && e->near_variant)
        out(e, "        long long far_lane_ = 0;\n");
    out(e, "        const long long lane = b0 + i; (void)lane;\n");
    for (cs_node n = 1; n < count; n++)
        if (cone[n] && e->part->kernel[n] == e->kernel)
            emit_node(e, n);
    for (cs_node n = 1; n < count; n++)
        if (cone[n] && own_pass(e, n)) {
            out(e, "        B->x%u[i] = v%u;\n", n, n);
            e->any_called[n] = true;
        }
    if (e->near64_pass && e->near_variant)
        out(e, "        B->far[i] = far_lane_;\n        far_ |= far_lane_;\n");
    out(e, "    }\n");
}

/* Kernel k's pass when each of its library calls is an f64 sin or cos:
 * a vector loop by the near functions, noting far lanes, then glibc for
 * those lanes only, listed first (cs_list_lanes64: a branch per lane
 * mispredicts at every other far lane). Where most lanes are far (an angle
 * of any size, as MountainCar's cos(3 x)), the vector loop only adds
 * to glibc's calls: a rollout's block then calls glibc for every lane, and
 * tries the near loop again every 64 steps. */
static void emit_near64_pass(emitter *e, unsigned k, const bool *cone, bool rollout)
{
    if (rollout)
        out(e, "    const int try_near_ = !B->mostly_far[%u] || (t & 63) == 0;\n", k);
    else
        out(e, "    const int try_near_ = 1;\n");
    out(e, "    long long far_ = !try_near_;\n    if (try_near_)\n");
    e->near_variant = true;
    emit_call_loop(e, cone);
    e->near_variant = false;
    out(e, "    if (far_) {   /* lanes whose near sin or cos may not be glibc's: those by glibc */\n"
           "    int nf_ = try_near_ ? 0 : n;\n"
           "    if (try_near_)\n"
           "        nf_ = cs_list_lanes64(B->far, n, B->far_at);\n");
    emit_call_loop(e, cone);
    if (rollout)
        out(e, "    if (try_near_) B->mostly_far[%u] = 4 * nf_ > 3 * n;\n    } else B->mostly_far[%u] = 0;\n", k, k);
    else
        out(e, "    }\n");
    if (k + 1 > e->near64_kernels)
        e->near64_kernels = k + 1;
}

/* Kernel k's library calls and near ops (own_pass) and what they need from
 * the kernel, computed in a loop of their own into B->x<id>: scalar for
 * library calls; with near ops, a vector loop by their _near functions that
 * ORs their _far guards, and only if some lane was far, the loop again with
 * the exact functions, so that every lane has the exact function's bits.
 * Where every library call of the kernel has an f64 near function (sin,
 * cos: CartPole's), emit_near64_pass's. */
static void emit_call_pass(emitter *e, unsigned k, bool rollout)
{
    uint32_t count = cs_graph_count(e->g);
    bool *cone = calloc(count, sizeof *cone);
    if (!cone) {
        snprintf(e->err, sizeof e->err, "out of memory");
        return;
    }
    e->kernel = k;
    e->loop = 0;
    bool any = false, near = false, all_near64 = true;
    for (cs_node n = count - 1; n > 0; n--) {
        bool own = own_pass(e, n);
        if (e->part->kernel[n] != k || !(cone[n] |= own))
            continue;
        any = true;
        near |= near_call(e, n);
        all_near64 &= !own || near64_call(e, n);
        for (unsigned j = 0; j < node(e, n)->n_in; j++)
            cone[cs_graph_input(e->g, n, j)] = true;
    }
    if (any) {
        out(e, "    /* kernel %u's %s: a pass of their own, so that its loop vectorizes */\n", k,
            near ? "modulos" : all_near64 ? "sin and cos" : "library calls");
        if (rollout)
            out(e, "    if (only < 0 || only == %u)\n", k);
        out(e, "    {\n");
        e->in_call_pass = true;
        e->near64_pass = all_near64;
        if (all_near64) {
            emit_near64_pass(e, k, cone, rollout);
        } else {
            if (near) {
                out(e, "    int far_ = 0;\n");
                e->near_variant = true;
                emit_call_loop(e, cone);
                e->near_variant = false;
                out(e, "    if (far_)   /* some lane's quotient is past the near range (rare): every lane exactly */\n");
            }
            emit_call_loop(e, cone);
        }
        e->in_call_pass = e->near64_pass = false;
        out(e, "    }\n");
    }
    free(cone);
}

/* Draw numbers whose word a scalar draw of the step reads by name (wi<k>):
 * every one of a step with few draws, else those read (arrays of draws
 * index the words by element). */
enum { CS_NAMED_WORDS_MAX = 64 };

static bool word_named(const emitter *e, unsigned k)
{
    if (e->p->n_step_draws <= CS_NAMED_WORDS_MAX)
        return true;
    uint32_t count = cs_graph_count(e->g);
    for (cs_node n = 1; n < count; n++) {
        const cs_node_data *d = node(e, n);
        if (is_draw((cs_op)d->op) && d->shape == CS_SCALAR && CS_UNIFORM_STREAM(d->imm.i) == CS_STREAM_STEP &&
            CS_UNIFORM_DRAW(d->imm.i) == k)
            return true;
    }
    return false;
}

/* The step's RNG words, then each kernel as one loop over the block. The
 * refill is its own loop so that the kernels' loops stay branch-free. */
static void emit_kernels(emitter *e, const entry *en)
{
    const cs_partition *part = e->part;
    unsigned D = e->p->n_step_draws, nb = rng_blocks(D);
    bool draws = false;
    uint32_t count = cs_graph_count(e->g);
    for (cs_node n = 1; n < count; n++)
        draws |= part->kernel[n] != CS_NO_KERNEL && is_draw((cs_op)node(e, n)->op);
    e->ahead = draws && e->rollout && e->padded && nb == 1;
    if (draws) {
        out(e, "    const unsigned long long w0 = (unsigned long long)t * %uu, blk = w0 >> 2;\n", D);
        if (e->ahead)
            /* A short block draws the words of CS_SHORT_AHEAD Philox blocks at
             * once, one vector as wide as the wide blocks' (words [w][j], the
             * lane j % CS_SHORT, the block j / CS_SHORT): its refill costs a
             * vector per 4 lanes otherwise, as much as the step's arithmetic. */
            out(e, "    int col_ = 0;   /* where this step's words are in B->rw's rows */\n"
                   "    if (short_) {\n"
                   "        const unsigned long long grp_ = blk / %du;\n"
                   "        col_ = (int)(blk %% %du) * CS_SHORT;\n"
                   "        if (grp_ != B->rng_block) {\n"
                   "            B->rng_block = grp_;\n"
                   "            cs_rng_lanes(L->seed, (unsigned int)(L->key0 + b0), 0, %d * CS_SHORT, grp_ * %du, CS_SHORT, 0u, &B->rw[0][0], CS_BLOCK);\n"
                   "        }\n"
                   "    } else\n",
                CS_SHORT_AHEAD, CS_SHORT_AHEAD, CS_SHORT_AHEAD, CS_SHORT_AHEAD);
        if (nb == 1) {
            out(e, "    if (blk != B->rng_block) {   /* every %u steps: words for the next ones */\n"
                   "        B->rng_block = blk;\n"
                   "        cs_rng_lanes(L->seed, (unsigned int)(L->key0 + b0), 0, nv, blk, CS_BLOCK, 0u, &B->rw[0][0], CS_BLOCK);\n"
                   "    }\n", 4 / D);
            for (unsigned k = 0; k < D; k++)
                if (word_named(e, k))
                    out(e, "    const int wi%u = (int)(w0 + %uu - 4 * blk);\n", k, k);
        } else {
            /* A step's words straddle blocks: B->rw keeps a window of the
             * last nb blocks, block b in rows 4 (b % nb), and each block is
             * drawn once, at the first step that reads it (B->rng_block:
             * the next block not drawn yet), not nb blocks every step. */
            out(e, "    {\n"
                   "        const unsigned long long last_ = (w0 + %uu) >> 2;\n"
                   "        unsigned long long b_ = B->rng_block;\n"
                   "        if (b_ < blk || b_ > last_ + 1)\n"
                   "            b_ = blk;   /* a new block of lanes, or another time */\n"
                   "        for (; b_ <= last_; b_++)\n"
                   "            cs_rng_lanes(L->seed, (unsigned int)(L->key0 + b0), 0, nv, b_, CS_BLOCK, 0u, &B->rw[4 * (b_ %% %uu)][0], CS_BLOCK);\n"
                   "        B->rng_block = last_ + 1;\n"
                   "    }\n", D - 1, nb);
            for (unsigned k = 0; k < D; k++)
                if (word_named(e, k))
                    out(e, "    const int wi%u = (int)(4 * (((w0 + %uu) >> 2) %% %uu) + ((w0 + %uu) & 3));\n", k, k, nb, k);
        }
        if (!en->rollout) {   /* B->rng_block was reset: the words are this step's, to be overwritten */
            out(e, "    if (L->step_words)   /* replayed words (lanes.h): this step's draws are the caller's */\n"
                   "        for (unsigned int k_ = 0; k_ < %uu; k_++)\n"
                   "            for (int i = 0; i < nv; i++)\n"
                   "                B->rw[", D);
            if (nb > 1)
                out(e, "(int)(4 * (((w0 + k_) >> 2) %% %uu) + ((w0 + k_) & 3))", nb);
            else
                out(e, "(int)(w0 + k_ - 4 * blk)");
            out(e, "][i] = L->step_words[(long long)k_ * L->stride + b0 + i];\n");
        }
    }
    for (unsigned k = 0; k < part->n_kernels; k++) {
        plan_kernel(e, en, k);
        emit_call_pass(e, k, en->rollout);
        if (part->reason[k][0])
            out(e, "    /* kernel %u: %s */\n", k, part->reason[k]);
        else
            out(e, "    /* kernel %u */\n", k);
        if (en->rollout && k == part->n_kernels - 1)
            out(e, "    unsigned ended_ = 0;   /* some lane's episode ended (a pad lane's too); bit i: lane i's, in a short block */\n"
                   "    int bad_any_ = 0;   /* some lane's state is not finite */\n");
        if (en->rollout)
            out(e, "    if (only < 0 || only == %u)\n", k);
        emit_kernel_loops(e, en, k);
    }
}

/* A state variable's fresh value stored to cs_fresh's out or outi (a line
 * for a scalar, a loop for an array). */
static void emit_fresh_var(emitter *e, unsigned v)
{
    const cs_state_var *sv = &e->p->vars[v];
    const char *to = slot_is_real(e, sv->slot) ? "out" : "outi";
    unsigned at = e->slot_index[sv->slot];
    if (sv->shape == CS_SCALAR) {
        store(e, e->p->restart[v], "", "    %s[%u]", to, at);
        return;
    }
    out(e, "    for (int e_ = 0; e_ < %u; e_++)\n        %s[%u + e_] = ", sv->size, to, at);
    elem(e, e->p->restart[v], "e_");
    out(e, ";\n");
}

/* A fresh observation (box or discrete) or info value to its row of `to`;
 * a box observation through CANON_OBS. */
static void emit_fresh_row(emitter *e, cs_node value, uint32_t shape, unsigned offset, unsigned size, const char *to,
                           const char *cast, bool box_obs)
{
    if (shape == CS_SCALAR) {
        if (box_obs)
            store_out(e, value, true, "        %s[%u]", to, offset);
        else
            store(e, value, cast, "        %s[%u]", to, offset);
        return;
    }
    out(e, "        for (int e_ = 0; e_ < %u; e_++)\n            %s[%u + e_] = %s", size, to, offset,
        box_obs ? CANON_OBS : cast);
    elem(e, value, "e_");
    out(e, box_obs ? ");\n" : ";\n");
}

static void emit_fresh_obs(emitter *e, bool discrete)
{
    const cs_program *p = e->p;
    for (unsigned k = 0; k < p->n_obs_items; k++) {
        const cs_obs_item *it = &p->obs_items[k];
        if ((it->space == CS_OBS_DISCRETE) == discrete)
            emit_fresh_row(e, it->restart, it->shape, it->offset, it->size, discrete ? "obsi" : "obs",
                           discrete ? "(long long)" : "(float)", !discrete);
    }
}

static bool any_param_restart(const cs_program *p)
{
    for (unsigned k = 0; k < p->n_params; k++)
        if (p->param_restart[k])
            return true;
    return false;
}

/* The parameters a restart redraws, stored to <params>[k][lane]: what the
 * fresh state then reads. */
static void emit_param_restarts(emitter *e, const char *ind, const char *params)
{
    const cs_program *p = e->p;
    e->now++;
    for (unsigned k = 0; k < p->n_params; k++) {
        if (!p->param_restart[k])
            continue;
        cs_node r = p->param_restart[k];
        if (node(e, r)->n_in || is_draw((cs_op)node(e, r)->op))
            need(e, r);
        store(e, r, "", "%s((%s *)%s[%u])[lane]", ind, e->real, params, k);
    }
}

/* The nodes a fresh start computes (live[n] = 1, [count], the caller frees
 * it): the state's fresh values (without the kept ones where auto: an
 * episode's end keeps them), with obs its observation and info values,
 * with params the parameters it redraws. NULL when out of memory. */
static unsigned char *fresh_cone(emitter *e, bool obs, bool params, bool auto_)
{
    const cs_program *p = e->p;
    uint32_t count = cs_graph_count(e->g);
    unsigned char *live = calloc(count, 1);
    if (!live) {
        snprintf(e->err, sizeof e->err, "out of memory");
        return NULL;
    }
    for (unsigned v = 0; v < p->n_vars; v++)
        if (!(auto_ && p->vars[v].kept))
            live[p->restart[v]] = 1;
    for (unsigned k = 0; obs && k < p->n_obs_items; k++)
        live[p->obs_items[k].restart] = 1;
    for (unsigned k = 0; obs && k < p->n_info_items; k++)
        live[p->info_items[k].restart] = 1;
    for (unsigned k = 0; params && k < p->n_params; k++)
        if (p->param_restart[k])
            live[p->param_restart[k]] = 1;
    for (cs_node n = count - 1; n > 0; n--)
        if (live[n])
            for (unsigned k = 0; k < node(e, n)->n_in; k++)
                live[cs_graph_input(e->g, n, k)] = 1;
    live[0] = 0;
    return live;
}

/* Every node the fresh state (and with obs, its observation and info
 * values) needs, in id order. */
static void emit_fresh_nodes(emitter *e, bool obs)
{
    e->now++;
    unsigned char *live = fresh_cone(e, obs, false, false);
    uint32_t count = cs_graph_count(e->g);
    for (cs_node n = 1; live && n < count; n++)
        if (live[n] && !is_const(e, n))
            need(e, n);
    free(live);
}

/* Which of the restart stream's blocks of four words (used[b], b < nrb =
 * (n_restart_draws + 3) / 4) the nodes of live read, and how many: a draw
 * that folding left unread needs no Philox call (DeepSea's 64 draws of an
 * action map it uses only with sample_action_map: 16 calls a restart). */
static unsigned restart_blocks_used(const emitter *e, const unsigned char *live, bool *used, unsigned nrb)
{
    uint32_t count = cs_graph_count(e->g);
    unsigned n_used = 0;
    for (unsigned b = 0; b < nrb; b++)
        used[b] = false;
    for (cs_node n = 1; n < count; n++) {
        const cs_node_data *d = node(e, n);
        if (!live[n] || !is_draw((cs_op)d->op) || CS_UNIFORM_STREAM(d->imm.i) != CS_STREAM_RESTART)
            continue;
        unsigned first = CS_UNIFORM_DRAW(d->imm.i), size = shape(e, n)->size;
        for (unsigned b = first / 4; b <= (first + size - 1) / 4 && b < nrb; b++)
            if (!used[b]) {
                used[b] = true;
                n_used++;
            }
    }
    return n_used;
}

/* `call` (a statement of block k) for the used restart blocks: one loop
 * over each run of them. */
static void emit_restart_blocks(emitter *e, const bool *used, unsigned nrb, const char *ind, const char *call)
{
    for (unsigned b = 0; b < nrb; b++) {
        if (!used[b])
            continue;
        unsigned end = b;
        while (end < nrb && used[end])
            end++;
        if (b == 0)
            out(e, "%sfor (unsigned int k = 0; k < %uu; k++)\n", ind, end);
        else
            out(e, "%sfor (unsigned int k = %uu; k < %uu; k++)\n", ind, b, end);
        out(e, "%s    %s\n", ind, call);
        b = end;
    }
}

/* cs_fresh: a lane's fresh start at time tau (params, state, observation,
 * info), from Philox's words or, when words is not NULL, the caller's
 * ([draw][stride], lanes.h's restart_words). The state goes to out (real
 * slots) and outi (i32 and bool slots), each indexed by slot_index. */
static void emit_fresh(emitter *e)
{
    const cs_program *p = e->p;
    unsigned nrb = (p->n_restart_draws + 3) / 4;
    e->scope = SCOPE_FRESH;
    e->part = NULL;
    e->blocked = false;
    /* not inlined where it is long (array states): its callers are rare paths */
    out(e, "%s void cs_fresh(unsigned long long seed, unsigned int key, void *const *params, long long lane, long long tau, const unsigned int *words, long long stride, %s *out, int *outi, float *obs, long long *obsi, double *info)\n{\n",
        e->dialect == CS_DIALECT_CUDA ? "CS_DEVICE" : e->slot_tables ? "static __attribute__((noinline))" : "static", e->real);
    bool *used = calloc(nrb + 1, sizeof *used);
    unsigned char *live = fresh_cone(e, true, true, false);
    if (!used || !live) {
        snprintf(e->err, sizeof e->err, "out of memory");
    } else if (restart_blocks_used(e, live, used, nrb)) {
        out(e, "    unsigned int rw_[%u];\n", 4 * nrb);
        out(e, "    if (words)   /* replayed (lanes.h) */\n"
               "        for (unsigned int j = 0; j < %uu; j++)\n"
               "            rw_[j] = words[(long long)j * stride + lane];\n"
               "    else {\n",
            p->n_restart_draws);
        emit_restart_blocks(e, used, nrb, "        ",
                            "cs_rng_block(seed, key, (unsigned long long)tau, (1u << 16) | k, rw_ + 4 * k);");
        out(e, "    }\n");
    }
    free(used);
    free(live);
    out(e, "    (void)seed; (void)key; (void)params; (void)tau; (void)obs; (void)words; (void)stride; (void)outi; (void)obsi; (void)info;\n");
    if (any_param_restart(p)) {
        out(e, "    {\n");
        emit_param_restarts(e, "    ", "params");
        out(e, "    }\n");
    }
    /* The state first; the observation and info values only where the
     * caller wants them (a rollout's restarts pass NULL): their nodes are
     * computed again inside that block, shadowing the state's, so that an
     * observation of 400 channels costs nothing there (Breakout-MinAtar's
     * restarts spent 16% of its rollout building one). */
    emit_fresh_nodes(e, false);
    for (unsigned v = 0; v < p->n_vars; v++)
        emit_fresh_var(e, v);
    out(e, "    if (obs || obsi || info) {\n");
    emit_fresh_nodes(e, true);
    out(e, "    if (obs) {\n");
    emit_fresh_obs(e, false);
    out(e, "    }\n");
    if (p->n_obs_int) {
        out(e, "    if (obsi) {\n");
        emit_fresh_obs(e, true);
        out(e, "    }\n");
    }
    if (p->n_info) {
        out(e, "    if (info) {\n");
        for (unsigned k = 0; k < p->n_info_items; k++) {
            const cs_info_item *it = &p->info_items[k];
            emit_fresh_row(e, it->restart, it->shape, it->offset, it->size, "info", "(double)", false);
        }
        out(e, "    }\n");
    }
    out(e, "    }\n}\n\n");
}

/* Nodes whose value is the same for every lane at a restart (alike[n],
 * [count]; the caller frees it): neither a draw nor a per-environment
 * parameter in their cone (a fresh start reads no state). NULL when out of
 * memory. */
static bool *alike_nodes(emitter *e)
{
    const cs_program *p = e->p;
    uint32_t count = cs_graph_count(e->g);
    bool *alike = calloc(count, sizeof *alike);
    if (!alike) {
        snprintf(e->err, sizeof e->err, "out of memory");
        return NULL;
    }
    for (cs_node n = 1; n < count; n++) {
        const cs_node_data *d = node(e, n);
        cs_op op = (cs_op)d->op;
        bool same = !is_draw(op) && op != CS_OP_CARRIED && op != CS_OP_INPUT &&
                    !(op == CS_OP_PARAM && !p->param_shared[d->imm.i]);
        for (unsigned k = 0; same && k < d->n_in; k++)
            same = alike[cs_graph_input(e->g, n, k)];
        alike[n] = same;
    }
    return alike;
}

/* cs_rollout_restarts' stores of the array states that every lane starts
 * alike (a table, a constant) to the block's rows: dense, where every lane
 * restarts (episodes of one length end together), whole rows a vector at a
 * time; else listed lane i's elements, in the loop over the list. */
static void emit_alike_rows(emitter *e, const bool *alike, bool dense)
{
    const cs_program *p = e->p;
    for (unsigned v = 0; v < p->n_vars; v++) {
        const cs_state_var *sv = &p->vars[v];
        const char *to = slot_is_real(e, sv->slot) ? "c" : "ci";
        if (sv->kept || sv->shape == CS_SCALAR || !alike[p->restart[v]])
            continue;
        if (dense) {
            out(e, "        for (int e_ = 0; e_ < %u; e_++) {\n            const %s x_ = ", sv->size,
                slot_is_real(e, sv->slot) ? e->real : "int");
            elem(e, p->restart[v], "e_");
            out(e, ";\n            for (int i = 0; i < n; i++)\n                B->%s[%u + e_][i] = x_;\n        }\n", to,
                e->slot_index[sv->slot]);
        } else {
            out(e, "            for (int e_ = 0; e_ < %u; e_++)\n                B->%s[%u + e_][i] = ", sv->size, to,
                e->slot_index[sv->slot]);
            elem(e, p->restart[v], "e_");
            out(e, ";\n");
        }
    }
}

/* cs_rollout_restarts: the lanes of a wide block whose episode ended at
 * this step, restarted together, as a step is computed: their list
 * (cs_list_lanes of B->end: a loop per set bit of a word of flags was 40%
 * of this function), the restart words they read (cs_rng_lanes), the
 * values every lane shares computed once, one loop over the list for the
 * others (scalars into rows of the list, struct of arrays: f_ for reals,
 * fi_ for i32 and bools; an array's elements straight to the lane's rows),
 * and the stores to the lanes' rows. A kept state keeps its value.
 * One lane at a time (cs_rollout_restart, cs_fresh), a restart cost about
 * 80 cycles, a third of random-policy CartPole's time. A block of up to 32
 * lanes keeps that: a vector or few whose steps are a chain of latencies,
 * which a list and a group of 8 draws lengthen more than a call per lane
 * (7 CartPoles went 0.74x as fast through the list, 16 0.95x). */
static void emit_rollout_restarts(emitter *e)
{
    const cs_program *p = e->p;
    uint32_t count = cs_graph_count(e->g);
    unsigned nrb = (p->n_restart_draws + 3) / 4, n_real = 0, n_int = 0;
    /* the nodes of the fresh state, and with the redrawn parameters (which
     * emit_param_restarts computes) those that read words */
    unsigned char *live = fresh_cone(e, false, false, true), *drawn = fresh_cone(e, false, true, true);
    bool *used = calloc(nrb + 1, sizeof *used), *alike = alike_nodes(e);
    unsigned *row = calloc(p->n_carried + 1, sizeof *row);   /* a slot's row of f_ or fi_ */
    if (!live || !drawn || !used || !alike || !row) {
        snprintf(e->err, sizeof e->err, "out of memory");
        goto done;
    }
    bool alike_arrays = false, lane_arrays = false;   /* array states that restart alike; ...that differ between lanes */
    for (unsigned v = 0; v < p->n_vars; v++) {
        const cs_state_var *sv = &p->vars[v];
        if (sv->kept)
            continue;
        alike_arrays |= sv->shape != CS_SCALAR && alike[p->restart[v]];
        lane_arrays |= sv->shape != CS_SCALAR && !alike[p->restart[v]];
        if (sv->shape == CS_SCALAR && !alike[p->restart[v]])
            row[sv->slot] = slot_is_real(e, sv->slot) ? n_real++ : n_int++;
    }
    e->scope = SCOPE_RESTARTS;
    e->part = NULL;
    e->blocked = false;
    out(e, "static __attribute__((noinline)) void cs_rollout_restarts(cs_block *restrict B, const cs_lanes *restrict L, int n, long long b0, long long tau)\n{\n"
           "    int at[CS_BLOCK + 8];   /* the lanes that restart, nr of them */\n"
           "    const int nr = cs_list_lanes(B->end, n, at);\n"
           "    for (int j = nr; j < (nr + 7) / 8 * 8; j++)\n"
           "        at[j] = 0;   /* cs_rng_lanes reads whole groups of 8 */\n");
    if (restart_blocks_used(e, drawn, used, nrb)) {
        out(e, "    unsigned int rw_[%u][CS_BLOCK];\n", 4 * nrb);
        emit_restart_blocks(e, used, nrb, "    ",
                            "cs_rng_lanes(L->seed, (unsigned int)(L->key0 + b0), at, nr, (unsigned long long)tau, CS_BLOCK, (1u << 16) | k, &rw_[4 * k][0], CS_BLOCK);");
    }
    if (any_param_restart(p)) {
        out(e, "    for (int j = 0; j < nr; j++) {\n        const long long lane = b0 + at[j];\n");
        emit_param_restarts(e, "        ", "L->params");
        out(e, "    }\n");
    }
    /* what every lane shares, in this scope, then the loop over the list
     * (the same stamp: the loop reads the shared values by name) */
    e->now++;
    for (cs_node n = 1; n < count; n++)
        if (live[n] && alike[n] && !is_const(e, n))
            need(e, n);
    if (n_real)
        out(e, "    %s f_[%u][CS_BLOCK];\n", e->real, n_real);
    if (n_int)
        out(e, "    int fi_[%u][CS_BLOCK];\n", n_int);
    if (n_real || n_int || lane_arrays) {
        out(e, "    for (int j = 0; j < nr; j++) {\n"
               "        const long long lane = b0 + at[j]; (void)lane;\n");
        for (cs_node n = 1; n < count; n++)
            if (live[n] && !alike[n] && !is_const(e, n))
                need(e, n);
        for (unsigned v = 0; v < p->n_vars; v++) {
            const cs_state_var *sv = &p->vars[v];
            const char *rows = slot_is_real(e, sv->slot) ? "f_" : "fi_";
            if (sv->kept || alike[p->restart[v]])
                continue;
            if (sv->shape == CS_SCALAR) {
                store(e, p->restart[v], "", "        %s[%u][j]", rows, row[sv->slot]);
                continue;
            }
            /* an array's elements straight to the lane's rows: through rows
             * of their own, the two sets of strided rows cost Blackjack's
             * restarts 1.1x their time (its rows a 1 KB stride apart share
             * a few sets of L1) */
            out(e, "        for (int e_ = 0; e_ < %u; e_++)\n            B->%s[%u + e_][at[j]] = ", sv->size,
                slot_is_real(e, sv->slot) ? "c" : "ci", e->slot_index[sv->slot]);
            elem(e, p->restart[v], "e_");
            out(e, ";\n");
        }
        out(e, "    }\n");
    }
    out(e, "    for (int j = 0; j < nr; j++) {\n"
           "        const int i = at[j];\n"
           "        const long long lane = b0 + i;\n"
           "        if (B->done[i] & 2) { L->nonfinite[lane] += 1; }\n"
           "        else { L->segments[lane] += 1; L->return_sum[lane] += B->ret[i]; }\n"
           "        B->ret[i] = 0;\n");
    for (unsigned v = 0; v < p->n_vars; v++) {
        const cs_state_var *sv = &p->vars[v];
        const char *to = slot_is_real(e, sv->slot) ? "c" : "ci", *rows = slot_is_real(e, sv->slot) ? "f_" : "fi_";
        if (sv->kept || sv->shape != CS_SCALAR)
            continue;
        if (alike[p->restart[v]])
            store(e, p->restart[v], "", "        B->%s[%u][i]", to, e->slot_index[sv->slot]);
        else
            out(e, "        B->%s[%u][i] = %s[%u][j];\n", to, e->slot_index[sv->slot], rows, row[sv->slot]);
    }
    if (alike_arrays) {
        out(e, "        if (nr < n) {\n");
        emit_alike_rows(e, alike, false);
        out(e, "        }\n");
    }
    out(e, "        B->ss[i] = 0;\n    }\n");
    if (alike_arrays) {
        out(e, "    if (nr == n) {\n");
        emit_alike_rows(e, alike, true);
        out(e, "    }\n");
    }
    out(e, "}\n\n");
done:
    free(live);
    free(drawn);
    free(used);
    free(alike);
    free(row);
}

/* `name`(flags, n, at): the lanes i < n whose flag (of `type`) is set,
 * listed in at[] in order, and their count. The flags are gathered 64 to a
 * word by vector loops (rows of CS_BLOCK flags: a multiple of 64), and a
 * word's first 8 set bits listed without a branch, so at[] must hold n + 8
 * entries: a loop per set bit mispredicted its exit at every word, and a
 * branch-free loop over the lanes is a chain through the count. */
static void emit_list_lanes(emitter *e, const char *name, const char *type)
{
    out(e, "static inline int %s(const %s *restrict flags, int n, int *restrict at)\n{\n"
           "    int count = 0;\n"
           "    for (int w = 0; w < n; w += 64) {\n"
           "        unsigned lo = 0, hi = 0;\n"
           "        for (int j = 0; j < 32; j++)\n"
           "            lo |= (unsigned)(flags[w + j] != 0) << j;\n"
           "        for (int j = 0; j < 32; j++)\n"
           "            hi |= (unsigned)(flags[w + 32 + j] != 0) << j;\n"
           "        unsigned long long m = lo | (unsigned long long)hi << 32;\n"
           "        if (n - w < 64)\n"
           "            m &= (1ull << (n - w)) - 1ull;\n"
           "        const int c = __builtin_popcountll(m);\n"
           "        for (int k = 0; k < 8; k++) {   /* past c: stores that the next word overwrites */\n"
           "            at[count + k] = w + __builtin_ctzll(m | 1ull << 63);\n"
           "            m &= m - 1ull;\n"
           "        }\n"
           "        count += c < 8 ? c : 8;\n"
           "        for (; m; m &= m - 1ull)\n"
           "            at[count++] = w + __builtin_ctzll(m);\n"
           "    }\n"
           "    return count;\n}\n\n",
        name, type);
}

/* The constant tables (TABLE nodes), static arrays of the source; with
 * slot_tables, each class's slots (real, then integer with its bools). */
static void emit_tables(emitter *e)
{
    uint32_t count = cs_graph_count(e->g);
    const char *space = e->dialect == CS_DIALECT_CUDA ? "__device__ " : "";
    if (e->slot_tables) {
        const char *names[3] = {"cs_slot_real", "cs_slot_int", "cs_slot_bool"};
        unsigned sizes[3] = {e->n_real_slots, e->n_int_slots, e->n_int_slots};
        for (int t = 0; t < 3; t++) {
            if (!sizes[t])
                continue;
            out(e, "static %sconst int %s[%u] = {", space, names[t], sizes[t]);
            for (unsigned k = 0, j = 0; k < e->p->n_carried; k++)
                if (slot_is_real(e, k) == (t == 0)) {
                    out(e, j ? (j % 16 ? ", " : ",\n    ") : "");
                    out(e, "%u", t == 2 ? (unsigned)(e->p->carried[k].type == CS_BOOL) : k);
                    j++;
                }
            out(e, "};\n");
        }
    }
    const double *pool = cs_graph_table(e->g);
    for (cs_node n = 1; n < count; n++) {
        const cs_node_data *d = node(e, n);
        if (d->op != CS_OP_TABLE)
            continue;
        unsigned size = shape(e, n)->size;
        out(e, "static %sconst %s cs_tab%u[%u] = {", space, c_type((cs_type)d->type), n, size);
        for (unsigned k = 0; k < size; k++) {
            out(e, k ? (k % 8 ? ", " : ",\n    ") : "");
            literal(e, (cs_type)d->type, pool[d->imm.i + k]);
        }
        out(e, "};\n");
    }
}

static void emit_prelude(emitter *e, const cs_schedule *s)
{
    const cs_program *p = e->p;
    out(e, "/* cartsim kernel: %s (%s), %s, fusion %s, unroll %d, %s dialect */\n", p->name, p->title,
        e->f32 ? "f32" : p->fast_f64 ? "f64 fast math" : "f64", cs_fusion_name(s->fusion), s->unroll,
        e->dialect == CS_DIALECT_C ? "C" : "CUDA");
    if (e->dialect == CS_DIALECT_CUDA) {
        /* NVRTC needs no include; a host shim may define these first (tests/cuda_shim.h). */
        out(e, "#ifndef CS_GLOBAL\n#define CS_GLOBAL extern \"C\" __global__\n#endif\n"
               "#ifndef CS_DEVICE\n#define CS_DEVICE __device__ __forceinline__\n#endif\n"
               "#ifndef CS_EXPORT\n#define CS_EXPORT extern \"C\" __device__\n#endif\n");
        cs_text_append(e->out, cs_prelude_text, strlen(cs_prelude_text));
        out(e, "\nCS_DEVICE double cs_clip(double x, double lo, double hi) { double m = lo > x ? lo : x; return hi < m ? hi : m; }\n"
               "CS_DEVICE float cs_clipf(float x, float lo, float hi) { float m = lo > x ? lo : x; return hi < m ? hi : m; }\n\n");
        emit_tables(e);
        return;
    }
    out(e, "#include <math.h>\n#include <stdlib.h>\n");
    cs_text_append(e->out, cs_prelude_text, strlen(cs_prelude_text));
    out(e, "\n#define CS_BLOCK %u\n#define CS_PAD %d\n#define CS_SHORT %d\n", e->block_lanes, CS_PAD_LANES, CS_SHORT_LANES);
    /* Selects as masks of the value's width: GCC 12 vectorizes them, where
     * `c ? a : b` of reals becomes a branch or a mixed-width select. */
    out(e, "typedef union { float f; unsigned int u; } cs_bits32;\n"
           "typedef union { double f; unsigned long long u; } cs_bits64;\n"
           "static inline float cs_selectf(int c, float a, float b) { cs_bits32 x = {a}, y = {b}; unsigned int m = 0u - (unsigned int)c; x.u = (x.u & m) | (y.u & ~m); return x.f; }\n"
           "static inline double cs_select(int c, double a, double b) { cs_bits64 x = {a}, y = {b}; unsigned long long m = 0ull - (unsigned long long)c; x.u = (x.u & m) | (y.u & ~m); return x.f; }\n"
           "static inline double cs_clip(double x, double lo, double hi) { double m = cs_select(lo > x, lo, x); return cs_select(hi < m, hi, m); }\n"
           "static inline float cs_clipf(float x, float lo, float hi) { float m = cs_selectf(lo > x, lo, x); return cs_selectf(hi < m, hi, m); }\n\n");
    emit_list_lanes(e, "cs_list_lanes", "int");
    emit_list_lanes(e, "cs_list_lanes64", "long long");
    emit_tables(e);
}

/* Bytes of element type t in the block (bools are ints there). */
static unsigned block_elem_bytes(cs_type t) { return t == CS_F64 ? 8 : 4; }

/* The block's bytes per lane (its [CS_BLOCK] members), and so its lanes:
 * 256, halved while the block passes CS_BLOCK_BYTES_MAX. */
static unsigned choose_block_lanes(const emitter *e)
{
    const cs_program *p = e->p;
    uint32_t count = cs_graph_count(e->g);
    unsigned rs = e->f32 ? 4 : 8, nb = rng_blocks(p->n_step_draws);
    unsigned long long bytes = (unsigned long long)(e->n_real_slots ? e->n_real_slots : 1) * rs +
                               4ull * e->n_int_slots + 8 + 4 + 12 + 1 + 4 + 4ull * (nb ? 4 * nb : 1) + 4;
    for (cs_node n = 1; n < count; n++) {
        const cs_node_data *d = node(e, n);
        unsigned size = shape(e, n)->size;
        if (e->any_materialized[n])
            bytes += (unsigned long long)size * block_elem_bytes((cs_type)d->type);
        if (e->arg_best[n])
            bytes += (unsigned long long)size * block_elem_bytes((cs_type)node(e, cs_graph_input(e->g, n, 0))->type);
        if (e->any_called[n])
            bytes += block_elem_bytes((cs_type)d->type);
    }
    if (e->near64_kernels)
        bytes += 12;
    /* Programs without arrays keep their 256 lanes: under fusion none an
     * Acrobot's block holds some 400 values a lane, as it always did. */
    bool arrays = false;
    for (cs_node n = 1; n < count && !arrays; n++)
        arrays = is_array(e, n) && !scalar_stack(e, n);
    unsigned lanes = CS_BLOCK_LANES;
    while (arrays && lanes > CS_BLOCK_LANES_MIN && bytes * lanes > CS_BLOCK_BYTES_MAX)
        lanes /= 2;
    return lanes;
}

static void emit_block_struct(emitter *e)
{
    const cs_program *p = e->p;
    uint32_t count = cs_graph_count(e->g);
    const char *R = e->real;
    out(e, "typedef struct {\n");
    out(e, "    %s c[%u][CS_BLOCK];      /* carried state (rollout) */\n", R, e->n_real_slots ? e->n_real_slots : 1);
    if (e->n_int_slots)
        out(e, "    int ci[%u][CS_BLOCK];      /* carried i32 and bool state (rollout) */\n", e->n_int_slots);
    out(e, "    double ret[CS_BLOCK];\n");
    out(e, "    int ss[CS_BLOCK];\n");
    /* int, as wide as an f32: a byte array here would make GCC's vector
     * loop 32 lanes long (a vector of bytes), too long for short blocks. */
    out(e, "    int done[CS_BLOCK], term[CS_BLOCK], trunc[CS_BLOCK];\n");
    out(e, "    unsigned char ev[CS_BLOCK];   /* step: the lanes with an event (emit_c_step) */\n");
    out(e, "    int end[CS_BLOCK];   /* rollout: terminated or truncated, known before done */\n");
    unsigned nb = rng_blocks(p->n_step_draws);
    out(e, "    unsigned int rw[%u][CS_BLOCK];     /* Philox words of the current step */\n", nb ? 4 * nb : 1);
    out(e, "    unsigned long long rng_block;\n");
    for (unsigned r = 0; r < p->n_records; r++)
        out(e, "    %s rec%u[CS_BLOCK];   /* record '%s' of this step, copied out after it */\n", record_type(p, r), r,
            p->records[r].name);
    for (cs_node n = 1; n < count; n++) {
        if (!e->any_materialized[n])
            continue;
        const cs_node_data *d = node(e, n);
        if (d->shape != CS_SCALAR)
            out(e, "    %s m%u[%u][CS_BLOCK];\n", c_type((cs_type)d->type), n, shape(e, n)->size);
        else
            out(e, "    %s m%u[CS_BLOCK];\n", c_type((cs_type)d->type), n);
        if (e->arg_best[n]) {
            const char *T = c_type((cs_type)node(e, cs_graph_input(e->g, n, 0))->type);
            if (d->shape != CS_SCALAR)
                out(e, "    %s mb%u[%u][CS_BLOCK];   /* its best value */\n", T, n, shape(e, n)->size);
            else
                out(e, "    %s mb%u[CS_BLOCK];   /* its best value */\n", T, n);
        }
    }
    if (e->check_arrays)
        out(e, "    int nf[CS_BLOCK];   /* an element of an array state is not finite */\n");
    if (e->check_once)
        out(e, "    int nfc;   /* rollout: the next step is the first since the state was loaded (emit_array_checks) */\n");
    if (e->near64_kernels)
        out(e, "    long long far[CS_BLOCK];   /* a pass's lanes whose near sin/cos may not be glibc's */\n"
               "    int far_at[CS_BLOCK + 8];  /* ...their indices (cs_list_lanes64) */\n"
               "    int mostly_far[%u];        /* per kernel: this block's last near loop found most lanes far */\n",
            e->near64_kernels);
    for (cs_node n = 1; n < count; n++)
        if (e->any_called[n])
            out(e, "    %s x%u[CS_BLOCK];   /* a result of a pass of its own */\n",
                c_type((cs_type)node(e, n)->type), n);
    out(e, "} cs_block;\n\n");
}

/* Slots of variable v, between a block (B->c/B->ci) and the global
 * buffers at lane b0 + i: a line for a scalar, a loop for an array. */
static void emit_block_copy(emitter *e, unsigned v, bool load, const char *ind)
{
    const cs_state_var *sv = &e->p->vars[v];
    const char *row = slot_is_real(e, sv->slot) ? "c" : "ci", *T = slot_buffer_type(e, sv->slot);
    unsigned at = e->slot_index[sv->slot];
    if (sv->shape == CS_SCALAR) {
        if (load)
            out(e, "%sB->%s[%u][i] = ((const %s *)L->carried[%u])[b0 + i];\n", ind, row, at, T, sv->slot);
        else
            out(e, "%s((%s *)L->carried[%u])[b0 + i] = %sB->%s[%u][i];\n", ind, T, sv->slot,
                slot_store_cast(e, sv->slot), row, at);
        return;
    }
    out(e, "%sfor (int e_ = 0; e_ < %u; e_++)\n", ind, sv->size);
    if (load)
        out(e, "%s    B->%s[%u + e_][i] = ((const %s *)L->carried[%u + e_])[b0 + i];\n", ind, row, at, T, sv->slot);
    else
        out(e, "%s    ((%s *)L->carried[%u + e_])[b0 + i] = %sB->%s[%u + e_][i];\n", ind, T, sv->slot,
            slot_store_cast(e, sv->slot), row, at);
}

static void emit_c_rollout(emitter *e, const cs_schedule *s, const entry *en, const cs_text *step_fn)
{
    const cs_program *p = e->p;
    out(e, "static __attribute__((noinline)) void cs_rollout_restart(cs_block *B, const cs_lanes *L, int i, long long lane, long long tau)\n{\n"
           "    %s fresh[%u];\n",
        e->real, e->n_real_slots ? e->n_real_slots : 1);
    if (e->n_int_slots)
        out(e, "    int freshi[%u];\n", e->n_int_slots);
    out(e, "    if (B->done[i] & 2) { L->nonfinite[lane] += 1; }\n"
           "    else { L->segments[lane] += 1; L->return_sum[lane] += B->ret[i]; }\n"
           "    B->ret[i] = 0;\n"
           "    cs_fresh(L->seed, (unsigned int)(L->key0 + lane), L->params, lane, tau, 0, 0, fresh, %s, 0, 0, 0);\n",
        e->n_int_slots ? "freshi" : "0");
    if (e->slot_tables && any_kept(p)) {   /* a kept state keeps its value (an auto-reset) */
        for (unsigned v = 0; v < p->n_vars; v++) {
            const cs_state_var *sv = &p->vars[v];
            const char *row = slot_is_real(e, sv->slot) ? "c" : "ci", *from = slot_is_real(e, sv->slot) ? "fresh" : "freshi";
            if (!sv->kept)
                out(e, "    for (int e_ = 0; e_ < %u; e_++)\n        B->%s[%u + e_][i] = %s[%u + e_];\n", sv->size, row,
                    e->slot_index[sv->slot], from, e->slot_index[sv->slot]);
        }
    } else if (e->slot_tables) {   /* the block's rows are cs_fresh's, class by class */
        if (e->n_real_slots)
            out(e, "    for (int k_ = 0; k_ < %u; k_++)\n        B->c[k_][i] = fresh[k_];\n", e->n_real_slots);
        if (e->n_int_slots)
            out(e, "    for (int k_ = 0; k_ < %u; k_++)\n        B->ci[k_][i] = freshi[k_];\n", e->n_int_slots);
    }
    for (unsigned v = 0; v < p->n_vars && !e->slot_tables; v++) {
        const cs_state_var *sv = &p->vars[v];
        unsigned at = e->slot_index[sv->slot];
        if (!sv->kept)
            out(e, "    B->c[%u][i] = fresh[%u];\n", at, at);
    }
    out(e, "    B->ss[i] = 0;\n}\n\n");
    emit_rollout_restarts(e);
    cs_text_append(e->out, step_fn->data ? step_fn->data : "", step_fn->len);
    /* A launch (L->launch > 0) runs one kernel of one step over every block
     * kept in L->blocks, where the values that cross kernels wait for the
     * next launch; otherwise one block struct serves every block in turn.
     * cs_kernel_block_bytes: the blocks of 256 lanes (the runtime's unit),
     * however many lanes a block has. */
    bool whole = e->block_lanes == CS_BLOCK_LANES;
    out(e, "unsigned long long cs_kernel_block_bytes(void) { return %s; }\n\n"
           "void cs_kernel_rollout(const cs_lanes *L)\n{\n"
           "    const int only = L->launch - 1;\n"
           "    cs_block *B = only < 0 ? (cs_block *)aligned_alloc(64, %s) : (cs_block *)L->blocks;\n"
           "    if (!B) return;\n"
           "    if (only < 0) { unsigned char *z_ = (unsigned char *)B; for (size_t k = 0; k < sizeof *B; k++) z_[k] = 0; }   /* the pad lanes start defined */\n"
           "    for (long long b0 = L->begin; b0 < L->end; b0 += CS_BLOCK) {\n"
           "        const int n = (int)(L->end - b0 < CS_BLOCK ? L->end - b0 : CS_BLOCK);\n"
           "        if (only >= 0) B = (cs_block *)((char *)L->blocks + (b0 - L->begin) / CS_BLOCK * %s);\n"
           "        for (int i = 0; i < n; i++) {\n",
        whole ? "(sizeof(cs_block) + 63) / 64 * 64" : "256ull / CS_BLOCK * ((sizeof(cs_block) + 63) / 64 * 64)",
        whole ? "cs_kernel_block_bytes()" : "(sizeof(cs_block) + 63) / 64 * 64",
        whole ? "cs_kernel_block_bytes()" : "((sizeof(cs_block) + 63) / 64 * 64)");
    for (unsigned v = 0; v < p->n_vars; v++)
        emit_block_copy(e, v, true, "            ");
    out(e, "            B->ss[i] = L->segstep[b0 + i];\n"
           "            B->ret[i] = L->seg_return[b0 + i];\n"
           "        }\n");
    if (e->check_once)
        out(e, "        B->nfc = 1;   /* a state from outside: the first step checks its arrays */\n");
    /* The pad lanes' per-environment parameters past the batch's end: the
     * last lane's (lanes.h's CS_LANES_PAD); a shared one is element 0 for
     * every lane, and a call ending inside the batch must not write over
     * the next lanes' own. */
    if (e->pads_params) {
        out(e, "        if (b0 + n == L->stride)   /* the pad lanes' parameters past the batch (CS_LANES_PAD) */\n"
               "            for (int i = n; i %% CS_PAD; i++) {\n");
        /* a loop per run of them: a policy's weights are thousands */
        for (unsigned k = 0, end; k < p->n_params; k = end) {
            for (end = k + 1; end < p->n_params && p->param_shared[end] == p->param_shared[k]; end++)
                ;
            if (!p->param_shared[k])
                out(e, "                for (int k_ = %u; k_ < %u; k_++)\n"
                       "                    ((%s *)L->params[k_])[b0 + i] = ((const %s *)L->params[k_])[b0 + n - 1];\n",
                    k, end, e->real, e->real);
        }
        out(e, "            }\n");
    }
    out(e, "        B->rng_block = ~0ull;\n"
           "        long long s = 0;\n");
    if (e->padded)
        out(e, "        if (n <= CS_SHORT) {\n"
               "            cs_rollout_steps_short(B, L, n, b0, L->t, L->steps, only);\n"
               "            s = L->steps;\n"
               "        }\n");
    out(e, "        for (; s + %d <= L->steps; s += %d) {\n", s->unroll, s->unroll);
    for (int u = 0; u < s->unroll; u++)
        out(e, "            cs_rollout_step(B, L, n, b0, L->t + s + %d, only);\n", u);
    out(e, "        }\n"
           "        for (; s < L->steps; s++)\n"
           "            cs_rollout_step(B, L, n, b0, L->t + s, only);\n"
           "        for (int i = 0; i < n; i++) {\n");
    for (unsigned v = 0; v < p->n_vars; v++)
        emit_block_copy(e, v, false, "            ");
    out(e, "            L->segstep[b0 + i] = B->ss[i];\n"
           "            L->seg_return[b0 + i] = B->ret[i];\n"
           "        }\n    }\n    if (only < 0) free(B);\n}\n\n");
    (void)en;
}

/* Which state variables a restart gives their fresh value: all (a reset),
 * all but the kept ones (an auto-reset, as an episode ends), or as the
 * restart entry's caller says (lanes.h's CS_RESTART_*). */
typedef enum { RESET_ALL, RESET_AUTO, RESET_BY_MODE } reset_kind;

/* One variable's fresh value (f_ or fi_) to its global buffer. */
static void emit_fresh_var_store(emitter *e, const char *ind, unsigned v, bool locals)
{
    const cs_state_var *sv = &e->p->vars[v];
    const char *from = slot_is_real(e, sv->slot) ? "f_" : "fi_", *cast = slot_store_cast(e, sv->slot);
    unsigned at = e->slot_index[sv->slot];
    if (sv->shape != CS_SCALAR)
        out(e, "%s    for (int e_ = 0; e_ < %u; e_++)\n%s        ((%s *)%scarried[%u + e_])[lane] = %s%s[%u + e_];\n", ind,
            sv->size, ind, slot_buffer_type(e, sv->slot), e->L, sv->slot, cast, from, at);
    else if (locals)
        out(e, "%s    c%u_[lane] = %s%s[%u];\n", ind, sv->slot, cast, from, at);
    else
        out(e, "%s    ((%s *)%scarried[%u])[lane] = %s%s[%u];\n", ind, slot_buffer_type(e, sv->slot), e->L, sv->slot, cast,
            from, at);
}

/* A lane's fresh start at time `tau`, stored to the global buffers: through
 * L's pointers, or with `locals` through the restrict copies that
 * cs_kernel_step writes every buffer through (c0_, obs_, segstep_; array
 * states through L). replay: the caller's restart words, if any. */
static void emit_fresh_store(emitter *e, const char *ind, const char *tau, bool obs, bool locals, bool replay,
                             reset_kind reset)
{
    const cs_program *p = e->p;
    const char *L = e->L;
    bool info = obs && p->n_info;
    out(e, "%s{\n%s    %s f_[%u]; float fo_[%u];\n", ind, ind, e->real, e->n_real_slots ? e->n_real_slots : 1,
        p->n_obs ? p->n_obs : 1);
    if (e->n_int_slots)
        out(e, "%s    int fi_[%u];\n", ind, e->n_int_slots);
    if (p->n_obs_int)
        out(e, "%s    long long foi_[%u];\n", ind, p->n_obs_int);
    if (info)
        out(e, "%s    double fin_[%u];\n", ind, p->n_info);
    out(e, "%s    cs_fresh(%sseed, (unsigned int)(%skey0 + lane), %sparams, lane, %s, %s, %sstride, f_, %s, fo_, %s, %s);\n",
        ind, L, L, L, tau, replay ? (e->dialect == CS_DIALECT_C ? "L->restart_words" : "L.restart_words") : "0", L,
        e->n_int_slots ? "fi_" : "0", p->n_obs_int ? "foi_" : "0", info ? "fin_" : "0");
    if (e->slot_tables && !any_kept(p)) {
        if (e->n_real_slots)
            out(e, "%s    for (int k_ = 0; k_ < %u; k_++)\n%s        ((%s *)%scarried[cs_slot_real[k_]])[lane] = f_[k_];\n", ind,
                e->n_real_slots, ind, e->real, L);
        if (e->n_int_slots)
            out(e, "%s    for (int k_ = 0; k_ < %u; k_++)\n"
                   "%s        if (cs_slot_bool[k_]) ((unsigned char *)%scarried[cs_slot_int[k_]])[lane] = (unsigned char)fi_[k_];\n"
                   "%s        else ((int *)%scarried[cs_slot_int[k_]])[lane] = fi_[k_];\n",
                ind, e->n_int_slots, ind, L, ind, L);
    } else {
        for (unsigned v = 0; v < p->n_vars; v++) {
            if (!p->vars[v].kept || reset == RESET_ALL) {
                emit_fresh_var_store(e, ind, v, locals && !e->slot_tables);
            } else if (reset == RESET_BY_MODE) {
                out(e, "%s    if (%smode != CS_RESTART_AUTO)   /* a kept state: reset by a reset, not by an episode's end */\n", ind, L);
                emit_fresh_var_store(e, ind, v, locals && !e->slot_tables);
            }
        }
    }
    if (obs && scalar_obs_only(p)) {
        for (unsigned k = 0; k < p->n_obs; k++) {
            if (locals)
                out(e, "%s    obs_[%u * S + lane] = fo_[%u];\n", ind, k, k);
            else
                out(e, "%s    %sobs[%uull * %sstride + lane] = fo_[%u];\n", ind, L, k, L, k);
        }
    } else if (obs) {
        if (p->n_obs)
            out(e, "%s    for (int k_ = 0; k_ < %u; k_++)\n%s        %s[k_ * %s + lane] = fo_[k_];\n", ind, p->n_obs, ind,
                locals ? "obs_" : e->dialect == CS_DIALECT_C ? "L->obs" : "L.obs", locals ? "S" : e->dialect == CS_DIALECT_C ? "L->stride" : "L.stride");
        if (p->n_obs_int)
            out(e, "%s    for (int k_ = 0; k_ < %u; k_++)\n%s        %sobs_int[k_ * %sstride + lane] = foi_[k_];\n", ind,
                p->n_obs_int, ind, L, L);
    }
    if (info)
        out(e, "%s    if (%sinfo)\n%s        for (int k_ = 0; k_ < %u; k_++)\n%s            %sinfo[k_ * %sstride + lane] = fin_[k_];\n",
            ind, L, ind, p->n_info, ind, L, L);
    if (locals)
        out(e, "%s    segstep_[lane] = 0;\n%s}\n", ind, ind);
    else
        out(e, "%s    %ssegstep[lane] = 0;\n%s}\n", ind, L, ind);
}

/* The step entry: the kernels store every lane's next state, observation
 * and reward in place (emit_final), then branch-free loops that vectorize
 * (the buffers are restrict locals) count the episode steps and set the
 * flags, and a scalar pass visits only the few lanes with an event, found
 * through B->ev: a next-step restart of a lane that ended the step before
 * (it overwrites what the kernels wrote), a state gone NaN or infinite, a
 * same-step end. Written one lane at a time with a branch each, the
 * write-back cost more than the kernels (4096 CartPoles). */
static void emit_c_step(emitter *e, const cs_text *step_fn)
{
    const cs_program *p = e->p;
    cs_text_append(e->out, step_fn->data ? step_fn->data : "", step_fn->len);
    out(e, "void cs_kernel_step(const cs_lanes *L)\n{\n"
           "    cs_block *B = (cs_block *)aligned_alloc(64, (sizeof(cs_block) + 63) / 64 * 64);\n"
           "    if (!B) return;\n"
           "    const long long S = L->stride, t = L->t;\n"
           "    const int next = L->mode == CS_MODE_NEXT_STEP, same = L->mode == CS_MODE_SAME_STEP;\n"
           "    for (long long b0 = L->begin; b0 < L->end; b0 += CS_BLOCK) {\n"
           "        const int n = (int)(L->end - b0 < CS_BLOCK ? L->end - b0 : CS_BLOCK);\n"
           "        B->rng_block = ~0ull;\n"
           "        cs_step_kernels(B, L, n, b0, t);\n"
           "        {   /* a block of its own, in which every buffer is written through these alone */\n");
    for (unsigned v = 0; v < p->n_vars; v++) {
        unsigned k = p->vars[v].slot;
        const char *T = slot_buffer_type(e, k);
        if (!e->slot_tables)
            out(e, "        %s *restrict c%u_ = (%s *)L->carried[%u];\n", T, k, T, k);
    }
    out(e, "        float *restrict obs_ = L->obs;\n"
           "        int *restrict segstep_ = L->segstep;\n"
           "        double *restrict reward_ = L->reward;\n"
           "        unsigned char *restrict term_ = L->terminated, *restrict trunc_ = L->truncated, *restrict pending_ = L->pending;\n"
           "        const int *restrict kterm_ = B->term, *restrict ktrunc_ = B->trunc, *restrict kbad_ = B->done;\n"
           "        unsigned char *restrict ev_ = B->ev;\n"
           "        /* counters, then flags: loops of one width each, which GCC vectorizes */\n"
           "        for (int i = 0; i < n; i++)\n"
           "            segstep_[b0 + i] += 1;\n"
           "        /* ev: 1 restarts now (next-step), 2 bad state, 4 ended with a same-step restart */\n"
           "        for (int i = 0; i < n; i++) {\n"
           "            const long long lane = b0 + i;\n"
           "            const int bad_ = kbad_[i];\n"
           "            const int term = kterm_[i] | bad_, trunc = ktrunc_[i], ended = term | trunc;\n"
           "            term_[lane] = (unsigned char)term;\n"
           "            trunc_[lane] = (unsigned char)trunc;\n"
           "            int restart = 0;\n"
           "            if (next) {\n"
           "                restart = pending_[lane];\n"
           "                pending_[lane] = (unsigned char)ended;\n"
           "            }\n"
           "            ev_[i] = (unsigned char)(restart | (bad_ << 1) | ((same & ended) << 2));\n"
           "        }\n"
           "        for (int i = 0; i < n; i++) {\n"
           "            const int ev = ev_[i];\n"
           "            if (!ev) continue;\n"
           "            const long long lane = b0 + i;\n"
           "            if (ev & 1) {\n");
    emit_fresh_store(e, "                ", "t", true, true, true, RESET_AUTO);
    out(e, "                pending_[lane] = 0; reward_[lane] = 0;\n"
           "                term_[lane] = 0; trunc_[lane] = 0;\n"
           "                continue;\n"
           "            }\n"
           "            if ((ev & 2) && L->nonfinite) L->nonfinite[lane] += 1;\n"
           "            if (ev & 4) {\n");
    if (scalar_obs_only(p)) {
        for (unsigned k = 0; k < p->n_obs; k++)
            out(e, "                L->final_obs[%u * S + lane] = obs_[%u * S + lane];\n", k, k);
    } else {
        if (p->n_obs)
            out(e, "                for (int k_ = 0; k_ < %u; k_++)\n"
                   "                    L->final_obs[k_ * S + lane] = obs_[k_ * S + lane];\n", p->n_obs);
        if (p->n_obs_int)
            out(e, "                for (int k_ = 0; k_ < %u; k_++)\n"
                   "                    L->final_obs_int[k_ * S + lane] = L->obs_int[k_ * S + lane];\n", p->n_obs_int);
    }
    if (p->n_info)
        out(e, "                if (L->info)\n"
               "                    for (int k_ = 0; k_ < %u; k_++)\n"
               "                        L->final_info[k_ * S + lane] = L->info[k_ * S + lane];\n", p->n_info);
    emit_fresh_store(e, "                ", "t + 1", true, true, true, RESET_AUTO);
    out(e, "            }\n"
           "        }\n        }\n    }\n    free(B);\n}\n\n");
}

static void emit_c_restart(emitter *e)
{
    out(e, "void cs_kernel_restart(const cs_lanes *L)\n{\n"
           "    for (long long lane = L->begin; lane < L->end; lane++) {\n");
    emit_fresh_store(e, "        ", "L->t", true, false, true, RESET_BY_MODE);
    out(e, "        if (L->pending) L->pending[lane] = 0;\n"
           "        if (L->seg_return) L->seg_return[lane] = 0;\n"
           "    }\n}\n");
}

/* A per-environment parameter's load (a shared one is read at element 0,
 * whatever the lane). */
static bool lane_param(const emitter *e, cs_node n)
{
    return n && node(e, n)->op == CS_OP_PARAM && !e->p->param_shared[node(e, n)->imm.i];
}

/* Does the entry load a per-environment parameter? A parameter is loaded in
 * place (the partition puts it in no kernel): where a kernel's node or a
 * root reads it. */
static bool reads_params(const emitter *e, const entry *en, const cs_partition *part)
{
    uint32_t count = cs_graph_count(e->g);
    for (cs_node n = 1; n < count; n++) {
        if (part->kernel[n] == CS_NO_KERNEL)
            continue;
        const cs_node_data *d = node(e, n);
        for (unsigned k = 0; k < d->n_in; k++)
            if (lane_param(e, cs_graph_input(e->g, n, k)))
                return true;
    }
    for (unsigned r = 0; r < en->n_roots; r++)
        if (lane_param(e, en->roots[r]))
            return true;
    return false;
}

/* The function that runs one step's kernels over a block, into its own text
 * (the block struct must be declared first, and it depends on every entry). */
static int emit_step_function(emitter *e, const cs_schedule *s, const entry *en, const cs_partition *part,
                              cs_text *fn)
{
    cs_text *saved = e->out, body = {0}, loops = {0};
    e->out = &body;
    e->loop_fns = &loops;   /* defined before the step function */
    e->part = part;
    e->scope = en->rollout ? SCOPE_ROLLOUT : SCOPE_STEP;
    e->blocked = true;
    /* Not inlined: on a cpu the lane loop dominates, and U inlined copies of
     * a multi-versioned vector loop cost seconds of compile time for nothing
     * (measured: the same speed at unroll 1, 4 and 10). */
    /* `only`: a launch's one kernel, or -1 for the whole step */
    e->rollout = en->rollout;
    if (en->rollout)
        out(e, "static inline __attribute__((always_inline)) void cs_rollout_lanes(cs_block *restrict B, const cs_lanes *restrict L, int n, long long b0, long long t, int only, int short_)\n{\n");
    else
        out(e, "static void cs_step_kernels(cs_block *restrict B, const cs_lanes *restrict L, int n, long long b0, long long t)\n{\n");
    out(e, "    (void)t;\n");
    /* Short blocks run padded to a multiple of CS_PAD lanes: GCC enters its
     * vector loop only from 8 (or, by its cost model, 32) lanes, and runs
     * anything shorter scalar (16 environments went 8x slower per lane than
     * 32). The pad lanes live in the block (CS_BLOCK is a multiple of
     * CS_PAD), compute what they compute, and are never restarted nor
     * stored; the per-environment parameters they read (L->params[k][lane])
     * are copies of the last lane's, in the room past the batch that
     * cs_lanes promises (CS_LANES_PAD), written by cs_kernel_rollout. */
    if (en->rollout) {
        e->padded = true;
        e->pads_params = reads_params(e, en, part);
    }
    if (en->rollout && e->padded)
        out(e, "    const int nv = short_ ? CS_SHORT : (n + CS_PAD - 1) / CS_PAD * CS_PAD;\n");
    else
        out(e, "    const int nv = n;\n");
    if (en->rollout)
        out(e, "    (void)short_;\n");
    emit_kernels(e, en);
    /* The restarts, of the lanes whose episode ended, if any (ended_: none
     * at most steps where episodes end together, as Pendulum's), then of
     * the lanes whose state is not finite. Two branches, not one on either:
     * end waits only for the termination's inputs, done for the whole next
     * state (is it finite?), and a restart branch that waits for the whole
     * state is mispredicted after the step is done, when the next step's
     * work it ran ahead into is thrown away. Where ended_ is hard to
     * predict (a few lanes: 4 CartPoles end an episode every ~5 steps),
     * resolving it early made the step 11% faster. The ended lanes of a
     * block past 32 lanes restart together (cs_rollout_restarts), a smaller
     * block's (by ended_'s bits, exact there) and the rare non-finite ones
     * one by one. With integer or array states (slot_tables) a lane's
     * restart through cs_fresh costs more, and the list wins from blocks of
     * 8 lanes (Catch-bsuite, Blackjack-v1, DeepSea-bsuite at 8 lanes:
     * 1.03x, 1.22x, 1.48x; at 32: 1.18x, 1.24x, 1.17x; at 1 lane 0.58x to
     * 0.92x): only a short block restarts lane by lane. */
    int one_by_one = e->slot_tables ? CS_SHORT_LANES : 32;
    /* The records, out of the block (where the pad lanes wrote theirs too)
     * into the caller's rows, before a restart changes the state. */
    if (en->rollout && e->p->n_records) {
        out(e, "    if (L->record && (only < 0 || only == %u)) {\n"
               "        const long long row_ = (t - L->record_t0) * L->stride + b0;\n", part->n_kernels - 1);
        for (unsigned r = 0; r < e->p->n_records; r++)
            out(e, "        for (int i = 0; i < n; i++) ((%s *)L->record[%u])[row_ + i] = B->rec%u[i];\n",
                record_type(e->p, r), r, r);
        out(e, "    }\n");
    }
    if (en->rollout)
        out(e, "    /* restarts: the lanes whose episode ended, then the lanes with a non-finite state */\n"
               "    if (only < 0 || only == %u) {\n"
               "        if (n <= %d)   /* a lane at a time (ended_'s bits are the lanes'): a list and a group of 8 draws cost more */\n"
               "            for (unsigned m_ = ended_ & (n < 32 ? (1u << n) - 1u : ~0u); m_; m_ &= m_ - 1u) {\n"
               "                const int i = __builtin_ctz(m_);\n"
               "                cs_rollout_restart(B, L, i, b0 + i, t + 1);\n"
               "            }\n"
               "        else if (ended_)\n"
               "            cs_rollout_restarts(B, L, n, b0, t + 1);\n"
               "        if (__builtin_expect(bad_any_, 0))\n"
               "            for (int i = 0; i < n; i++)\n"
               "                if (!B->end[i] && B->done[i])\n"
               "                    cs_rollout_restart(B, L, i, b0 + i, t + 1);\n"
               "    }\n",
            part->n_kernels - 1, one_by_one);
    out(e, "}\n\n");
    /* Blocks of 1 to CS_SHORT lanes run a variant of their own: CS_SHORT
     * lanes, a constant, so that GCC makes the loop one vector of 16 bytes
     * without a remainder (not a 32-byte vector half of it padding), with
     * the time loop inside (no call per step). */
    if (en->rollout) {
        out(e, "static __attribute__((noinline)) void cs_rollout_step(cs_block *restrict B, const cs_lanes *restrict L, int n, long long b0, long long t, int only)\n"
               "{\n    cs_rollout_lanes(B, L, n, b0, t, only, 0);\n}\n\n");
        if (e->padded)
            out(e, "static __attribute__((noinline)) void cs_rollout_steps_short(cs_block *restrict B, const cs_lanes *restrict L, int n, long long b0, long long t, long long steps, int only)\n"
                   "{\n    for (long long s = 0; s < steps; s++)\n        cs_rollout_lanes(B, L, n, b0, t + s, only, 1);\n}\n\n");
    }
    e->out = saved;
    e->blocked = false;
    cs_text_append(fn, loops.data ? loops.data : "", loops.len);
    cs_text_append(fn, body.data ? body.data : "", body.len);
    fn->failed |= loops.failed || body.failed;
    cs_text_free(&loops);
    cs_text_free(&body);
    return e->err[0] ? -1 : 0;
}


/* ---- the CUDA dialect's skeleton: a thread per lane (grid-stride) ---- */

#define CS_LANE_LOOP "    for (long long lane = L.begin + (long long)blockIdx.x * blockDim.x + threadIdx.x; lane < L.end;\n" \
                     "         lane += (long long)gridDim.x * blockDim.x) {\n"

/* The step stream's words for global step t into sw_ (registers). With
 * `cached`, the block is kept across the steps of a persistent loop; with
 * `replay`, the caller's words replace them when given (the step entry). */
static void emit_cuda_draws(emitter *e, bool cached, bool replay)
{
    unsigned D = e->p->n_step_draws, nb = rng_blocks(D);
    if (!D)
        return;
    out(e, "        const unsigned long long w0 = (unsigned long long)t * %uu, blk = w0 >> 2;\n", D);
    if (cached && nb == 1)
        out(e, "        if (blk != sblk) {\n            sblk = blk;\n");
    else
        out(e, "        {\n");
    if (D <= CS_NAMED_WORDS_MAX)
        for (unsigned j = 0; j < nb; j++)
            out(e, "            cs_rng_block(L.seed, (unsigned int)(L.key0 + lane), blk + %uu, 0u, sw_ + %u);\n", j, 4 * j);
    else
        out(e, "            for (unsigned int j = 0; j < %uu; j++)\n"
               "                cs_rng_block(L.seed, (unsigned int)(L.key0 + lane), blk + j, 0u, sw_ + 4 * j);\n", nb);
    out(e, "        }\n");
    if (replay)
        out(e, "        if (L.step_words)   /* replayed words (lanes.h) */\n"
               "            for (unsigned int k_ = 0; k_ < %uu; k_++)\n"
               "                sw_[(int)(w0 + k_ - 4 * blk)] = L.step_words[(long long)k_ * L.stride + lane];\n", D);
    for (unsigned k = 0; k < D; k++)
        if (word_named(e, k))
            out(e, "        const int wi%u = (int)(w0 + %uu - 4 * blk);\n", k, k);
}

static bool kernel_draws(const emitter *e, unsigned k)
{
    uint32_t count = cs_graph_count(e->g);
    for (cs_node n = 1; n < count; n++)
        if (e->part->kernel[n] == k && is_draw((cs_op)node(e, n)->op))
            return true;
    return false;
}

static void emit_kernel_nodes(emitter *e, unsigned k)
{
    uint32_t count = cs_graph_count(e->g);
    for (cs_node n = 1; n < count; n++)
        if (e->part->kernel[n] == k)
            emit_node(e, n);
}

/* Per lane: the scalar states' next values, to the thread's registers
 * (c<slot>) or the global buffers. */
static void emit_lane_scalar_commits(emitter *e, const cs_node *next, bool to_registers)
{
    const cs_program *p = e->p;
    for (unsigned v = 0; v < p->n_vars; v++) {
        unsigned slot = p->vars[v].slot;
        if (p->vars[v].shape != CS_SCALAR)
            continue;
        if (to_registers)
            store(e, next[v], "", "        c%u", slot);
        else
            store(e, next[v], slot_store_cast(e, slot), "        ((%s *)L.carried[%u])[lane]", slot_buffer_type(e, slot),
                  slot);
    }
}

/* Per lane, after the scalars: the array states' next values, first a copy
 * of each that is another state's (a = b), then every one. */
static void emit_lane_array_commits(emitter *e, const cs_node *next, bool to_registers)
{
    const cs_program *p = e->p;
    for (unsigned v = 0; v < p->n_vars; v++) {
        const cs_state_var *sv = &p->vars[v];
        if (sv->shape == CS_SCALAR || !root_is_other_state(e, v, next[v]))
            continue;
        out(e, "        %s r%u_[%u];\n        for (int e_ = 0; e_ < %u; e_++)\n            r%u_[e_] = ",
            c_type(sv->type), v, sv->size, sv->size, v);
        elem(e, next[v], "e_");
        out(e, ";\n");
    }
    for (unsigned v = 0; v < p->n_vars; v++) {
        const cs_state_var *sv = &p->vars[v];
        if (sv->shape == CS_SCALAR || root_is_own_state(e, v, next[v]))
            continue;
        out(e, "        for (int e_ = 0; e_ < %u; e_++)\n            ", sv->size);
        if (to_registers)
            out(e, "c%u[e_] = ", sv->slot);
        else
            out(e, "((%s *)L.carried[%u + e_])[lane] = %s", slot_buffer_type(e, sv->slot), sv->slot,
                slot_store_cast(e, sv->slot));
        if (root_is_other_state(e, v, next[v]))
            out(e, "r%u_[e_]", v);
        else
            elem(e, next[v], "e_");
        out(e, ";\n");
    }
}

/* A CUDA rollout step's records, straight to the caller's rows. */
static void emit_cuda_records(emitter *e, const char *t)
{
    const cs_program *p = e->p;
    if (!p->n_records)
        return;
    out(e, "        if (L.record) {\n            const long long row_ = (%s - L.record_t0) * L.stride + lane;\n", t);
    for (unsigned r = 0; r < p->n_records; r++)
        store(e, p->record[r], record_cast(p, r), "            ((%s *)L.record[%u])[row_]", record_type(p, r), r);
    out(e, "        }\n");
}

/* Persistent (and unrolled) rollout: one kernel, the state in registers
 * (an array state: a local array of the thread). */
static void emit_cuda_rollout_fused(emitter *e, const cs_schedule *s)
{
    const cs_program *p = e->p;
    unsigned nb = rng_blocks(p->n_step_draws);
    e->scope = SCOPE_THREAD;
    out(e, "CS_GLOBAL void cs_kernel_rollout(cs_lanes L)\n{\n" CS_LANE_LOOP);
    for (unsigned v = 0; v < p->n_vars; v++) {
        const cs_state_var *sv = &p->vars[v];
        const char *T = c_type(sv->type), *BT = slot_buffer_type(e, sv->slot);
        if (sv->shape == CS_SCALAR)
            out(e, "    %s c%u = ((const %s *)L.carried[%u])[lane];\n", T, sv->slot, BT, sv->slot);
        else
            out(e, "    %s c%u[%u];\n    for (int e_ = 0; e_ < %u; e_++)\n        c%u[e_] = ((const %s *)L.carried[%u + e_])[lane];\n",
                T, sv->slot, sv->size, sv->size, sv->slot, BT, sv->slot);
    }
    out(e, "    int ss = L.segstep[lane];\n    double ret = L.seg_return[lane], rsum = 0;\n"
           "    long long segs = 0, nonfin = 0;\n");
    if (nb)
        out(e, "    unsigned int sw_[%u];\n    unsigned long long sblk = ~0ull;\n", 4 * nb);
    out(e, "#pragma unroll %d\n    for (long long s = 0; s < L.steps; s++) {\n        const long long t = L.t + s;\n",
        s->unroll);
    e->now++;
    e->kernel = 0;
    emit_cuda_draws(e, true, false);
    emit_kernel_nodes(e, 0);
    cs_node roots[3] = {p->roll_reward, p->roll_terminated, p->roll_truncated};
    for (unsigned v = 0; v < p->n_vars; v++)
        need(e, p->roll_next[v]);
    for (unsigned k = 0; k < 3; k++)
        need(e, roots[k]);
    for (unsigned r = 0; r < p->n_records; r++)
        need(e, p->record[r]);
    emit_bad_check(e, p->roll_next);
    emit_cuda_records(e, "t");
    emit_index_fault(e, p->roll_index_fault);
    emit_lane_scalar_commits(e, p->roll_next, true);
    emit_lane_array_commits(e, p->roll_next, true);
    out(e, "        ss += 1;\n        ret += (double)");
    ref(e, p->roll_reward);
    out(e, ";\n        if (bad_ | ");
    ref(e, p->roll_terminated);
    out(e, " | ");
    ref(e, p->roll_truncated);
    out(e, ") {\n            if (bad_) nonfin += 1; else { segs += 1; rsum += ret; }\n            ret = 0;\n"
           "            %s f_[%u];\n", e->real, e->n_real_slots ? e->n_real_slots : 1);
    if (e->n_int_slots)
        out(e, "            int fi_[%u];\n", e->n_int_slots);
    out(e, "            cs_fresh(L.seed, (unsigned int)(L.key0 + lane), L.params, lane, t + 1, 0, 0, f_, %s, 0, 0, 0);\n",
        e->n_int_slots ? "fi_" : "0");
    for (unsigned v = 0; v < p->n_vars; v++) {
        const cs_state_var *sv = &p->vars[v];
        const char *from = slot_is_real(e, sv->slot) ? "f_" : "fi_";
        unsigned at = e->slot_index[sv->slot];
        if (sv->kept)
            continue;   /* an episode's end: a kept state keeps its value */
        if (sv->shape == CS_SCALAR)
            out(e, "            c%u = %s[%u];\n", sv->slot, from, at);
        else
            out(e, "            for (int e_ = 0; e_ < %u; e_++)\n                c%u[e_] = %s[%u + e_];\n", sv->size, sv->slot,
                from, at);
    }
    out(e, "            ss = 0;\n        }\n    }\n");
    for (unsigned v = 0; v < p->n_vars; v++) {
        const cs_state_var *sv = &p->vars[v];
        const char *BT = slot_buffer_type(e, sv->slot), *cast = slot_store_cast(e, sv->slot);
        if (sv->shape == CS_SCALAR)
            out(e, "    ((%s *)L.carried[%u])[lane] = %sc%u;\n", BT, sv->slot, cast, sv->slot);
        else
            out(e, "    for (int e_ = 0; e_ < %u; e_++)\n        ((%s *)L.carried[%u + e_])[lane] = %sc%u[e_];\n", sv->size,
                BT, sv->slot, cast, sv->slot);
    }
    out(e, "    L.segstep[lane] = ss;\n    L.seg_return[lane] = ret;\n"
           "    L.segments[lane] += segs;\n    L.return_sum[lane] += rsum;\n    L.nonfinite[lane] += nonfin;\n"
           "    }\n}\n\n");
}

/* rules / none: one kernel per partition, one step per launch, values
 * crossing kernels in the scratch buffer; the last kernel commits. */
static void emit_cuda_rollout_split(emitter *e)
{
    const cs_program *p = e->p;
    unsigned nb = rng_blocks(p->n_step_draws);
    e->scope = SCOPE_STEP;
    for (unsigned k = 0; k < e->part->n_kernels; k++) {
        if (e->part->reason[k][0])
            out(e, "/* kernel %u: %s */\n", k, e->part->reason[k]);
        out(e, "CS_GLOBAL void cs_rollout_k%u(cs_lanes L, char *scratch)\n{\n    const long long t = L.t;\n"
               "    (void)scratch; (void)t;\n" CS_LANE_LOOP, k);
        e->now++;
        e->kernel = k;
        if (kernel_draws(e, k)) {
            out(e, "        unsigned int sw_[%u];\n", 4 * nb);
            emit_cuda_draws(e, false, false);
        }
        emit_kernel_nodes(e, k);
        if (k == e->part->n_kernels - 1) {
            cs_node roots[3] = {p->roll_reward, p->roll_terminated, p->roll_truncated};
            for (unsigned v = 0; v < p->n_vars; v++)
                need(e, p->roll_next[v]);
            for (unsigned c = 0; c < 3; c++)
                need(e, roots[c]);
            for (unsigned r = 0; r < p->n_records; r++)
                need(e, p->record[r]);
            emit_bad_check(e, p->roll_next);
            emit_cuda_records(e, "t");
            emit_index_fault(e, p->roll_index_fault);
            emit_lane_scalar_commits(e, p->roll_next, false);
            emit_lane_array_commits(e, p->roll_next, false);
            out(e, "        L.segstep[lane] += 1;\n        L.seg_return[lane] += (double)");
            ref(e, p->roll_reward);
            out(e, ";\n        if (bad_ | ");
            ref(e, p->roll_terminated);
            out(e, " | ");
            ref(e, p->roll_truncated);
            out(e, ") {\n            if (bad_) L.nonfinite[lane] += 1;\n"
                   "            else { L.segments[lane] += 1; L.return_sum[lane] += L.seg_return[lane]; }\n"
                   "            L.seg_return[lane] = 0;\n");
            emit_fresh_store(e, "            ", "t + 1", false, false, false, RESET_AUTO);
            out(e, "        }\n");
        }
        out(e, "    }\n}\n\n");
    }
}

/* The observations of the state after a step, and the info values, per lane. */
static void emit_lane_obs(emitter *e)
{
    const cs_program *p = e->p;
    if (p->n_info)
        out(e, "        if (L.info) {\n");
    for (unsigned k = 0; k < p->n_info_items; k++) {
        const cs_info_item *it = &p->info_items[k];
        if (it->shape == CS_SCALAR) {
            store(e, it->step, "(double)", "            L.info[%uull * L.stride + lane]", it->offset);
            continue;
        }
        out(e, "            for (int e_ = 0; e_ < %u; e_++)\n                L.info[(%uull + e_) * L.stride + lane] = (double)",
            it->size, it->offset);
        elem(e, it->step, "e_");
        out(e, ";\n");
    }
    if (p->n_info)
        out(e, "        }\n");
    for (unsigned k = 0; k < p->n_obs_items; k++) {
        const cs_obs_item *it = &p->obs_items[k];
        bool discrete = it->space == CS_OBS_DISCRETE;
        const char *to = discrete ? "L.obs_int" : "L.obs", *cast = discrete ? "(long long)" : "(float)";
        if (it->shape == CS_SCALAR && discrete) {
            store(e, it->next, cast, "        %s[%uull * L.stride + lane]", to, it->offset);
            continue;
        }
        if (it->shape == CS_SCALAR) {
            store_out(e, it->next, true, "        %s[%uull * L.stride + lane]", to, it->offset);
            continue;
        }
        out(e, "        for (int e_ = 0; e_ < %u; e_++)\n            %s[(%uull + e_) * L.stride + lane] = %s", it->size, to,
            it->offset, discrete ? cast : CANON_OBS);
        elem(e, it->next, "e_");
        out(e, discrete ? ";\n" : ");\n");
    }
}

/* One step with the caller's inputs: always one fused kernel. */
static void emit_cuda_step(emitter *e)
{
    const cs_program *p = e->p;
    unsigned nb = rng_blocks(p->n_step_draws);
    e->scope = SCOPE_STEP;
    out(e, "CS_GLOBAL void cs_kernel_step(cs_lanes L)\n{\n    const long long t = L.t;\n    (void)t;\n" CS_LANE_LOOP);
    out(e, "        if (L.mode == CS_MODE_NEXT_STEP && L.pending[lane]) {\n");
    emit_fresh_store(e, "            ", "t", true, false, true, RESET_AUTO);
    out(e, "            L.pending[lane] = 0; L.reward[lane] = 0; L.terminated[lane] = 0; L.truncated[lane] = 0;\n"
           "            continue;\n        }\n");
    e->now++;
    e->kernel = 0;
    if (kernel_draws(e, 0)) {
        out(e, "        unsigned int sw_[%u];\n", 4 * nb);
        emit_cuda_draws(e, false, true);
    }
    emit_kernel_nodes(e, 0);
    for (unsigned v = 0; v < p->n_vars; v++)
        need(e, p->next[v]);
    for (unsigned k = 0; k < p->n_obs_items; k++)
        need(e, p->obs_items[k].next);
    for (unsigned k = 0; k < p->n_info_items; k++)
        need(e, p->info_items[k].step);
    cs_node roots[3] = {p->reward, p->terminated, p->truncated};
    for (unsigned k = 0; k < 3; k++)
        need(e, roots[k]);
    emit_bad_check(e, p->next);
    emit_index_fault(e, p->index_fault);
    /* the observations first: they may read a state's old value */
    bool arrays = any_array_state(p, false);
    if (arrays)
        emit_lane_obs(e);
    emit_lane_scalar_commits(e, p->next, false);
    emit_lane_array_commits(e, p->next, false);
    if (!arrays)
        emit_lane_obs(e);
    out(e, "        const int term = (");
    ref(e, p->terminated);
    out(e, ") | bad_, trunc = ");
    ref(e, p->truncated);
    out(e, ";\n");
    store_out(e, p->reward, false, "        L.reward[lane]");
    out(e, "        L.terminated[lane] = (unsigned char)term;\n        L.truncated[lane] = (unsigned char)trunc;\n"
           "        L.segstep[lane] += 1;\n        if (bad_ && L.nonfinite) L.nonfinite[lane] += 1;\n"
           "        if (term | trunc) {\n            if (L.mode == CS_MODE_SAME_STEP) {\n");
    if (scalar_obs_only(p)) {
        for (unsigned k = 0; k < p->n_obs; k++)
            out(e, "                L.final_obs[%uull * L.stride + lane] = L.obs[%uull * L.stride + lane];\n", k, k);
    } else {
        if (p->n_obs)
            out(e, "                for (int k_ = 0; k_ < %u; k_++)\n"
                   "                    L.final_obs[k_ * L.stride + lane] = L.obs[k_ * L.stride + lane];\n", p->n_obs);
        if (p->n_obs_int)
            out(e, "                for (int k_ = 0; k_ < %u; k_++)\n"
                   "                    L.final_obs_int[k_ * L.stride + lane] = L.obs_int[k_ * L.stride + lane];\n",
                p->n_obs_int);
    }
    if (p->n_info)
        out(e, "                if (L.info)\n"
               "                    for (int k_ = 0; k_ < %u; k_++)\n"
               "                        L.final_info[k_ * L.stride + lane] = L.info[k_ * L.stride + lane];\n", p->n_info);
    emit_fresh_store(e, "                ", "t + 1", true, false, true, RESET_AUTO);
    out(e, "            } else if (L.mode == CS_MODE_NEXT_STEP) {\n                L.pending[lane] = 1;\n            }\n"
           "        }\n    }\n}\n\n");
}

static void emit_cuda_restart(emitter *e)
{
    out(e, "CS_GLOBAL void cs_kernel_restart(cs_lanes L)\n{\n" CS_LANE_LOOP);
    emit_fresh_store(e, "        ", "L.t", true, false, true, RESET_BY_MODE);
    out(e, "        if (L.pending) L.pending[lane] = 0;\n        if (L.seg_return) L.seg_return[lane] = 0;\n    }\n}\n\n");
}

/* Scratch offsets (bytes per lane, 8-aligned) of the values crossing kernels. */
static void layout_scratch(emitter *e)
{
    uint32_t count = cs_graph_count(e->g), off = 0;
    for (cs_node n = 1; n < count; n++) {
        if (!e->materialized[n])
            continue;
        const cs_node_data *d = node(e, n);
        unsigned size = (d->type == CS_F64 ? 8u : 4u) * shape(e, n)->size;
        e->scratch_off[n] = off;
        off += (size + 7) & ~7u;
    }
    e->scratch_bytes = off;
}

static int emit_cuda(emitter *e, const cs_plan *plan, const cs_schedule *s)
{
    emit_prelude(e, s);
    emit_fresh(e);
    mark_materialized(e, &plan->roll, plan->roll_roots, plan->n_roll);
    layout_scratch(e);
    out(e, "CS_EXPORT const unsigned int cs_scratch_bytes_per_lane = %uu;\n", e->scratch_bytes);
    out(e, "CS_EXPORT const unsigned int cs_kernels_per_step = %uu;\n\n", plan->roll.n_kernels);
    e->part = &plan->roll;
    if (s->fusion == CS_FUSION_FULL)
        emit_cuda_rollout_fused(e, s);
    else
        emit_cuda_rollout_split(e);
    /* The step kernel is always fused: cs_env_step is one launch. */
    e->part = &plan->step_fused;
    memset(e->materialized, 0, cs_graph_count(e->g) * sizeof *e->materialized);
    emit_cuda_step(e);
    emit_cuda_restart(e);
    return e->err[0] ? -1 : 0;
}

/* Each slot's index among the slots of its class (real, or i32 and bool),
 * and its variable. */
static int index_slots(emitter *e)
{
    const cs_program *p = e->p;
    e->slot_index = calloc(p->n_carried + 1, sizeof *e->slot_index);
    e->var_of = calloc(p->n_carried + 1, sizeof *e->var_of);
    if (!e->slot_index || !e->var_of)
        return -1;
    for (unsigned v = 0; v < p->n_vars; v++)
        for (unsigned k = 0; k < p->vars[v].size; k++) {
            unsigned slot = p->vars[v].slot + k;
            e->var_of[slot] = v;
            e->slot_index[slot] = slot_is_real(e, slot) ? e->n_real_slots++ : e->n_int_slots++;
        }
    return 0;
}

static void emitter_free(emitter *e)
{
    free(e->stamp);
    free(e->materialized);
    free(e->any_materialized);
    free(e->any_called);
    free(e->scratch_off);
    free(e->slot_index);
    free(e->var_of);
    free(e->loop_of);
    free(e->loop_shape);
    free(e->arg_best);
    free(e->alias);
    free(e->in_place);
    free(e->absorbed);
    free(e->rows_of);
    free(e->loop_node);
}

/* What the emitter cannot lower: a program the driver should never hand it. */
static bool refuse(const cs_program *p, char *err, size_t err_size)
{
    for (unsigned k = 0; k < p->n_inputs; k++)
        if (!p->policy[k] || !p->roll_next) {
            snprintf(err, err_size, "the program has no in-kernel policy");
            return true;
        }
    for (unsigned v = 0; v < p->n_vars; v++)
        if (p->vars[v].type != p->real && p->vars[v].type != CS_I32 && p->vars[v].type != CS_BOOL) {
            snprintf(err, err_size, "emit: state '%s' is of type %s", p->vars[v].name, cs_type_name(p->vars[v].type));
            return true;
        }
    return false;
}

int cs_emit(const cs_program *p, const cs_plan *plan, const cs_schedule *s, cs_dialect d, cs_text *text, char *err,
            size_t err_size)
{
    if (s->unroll < 1) {
        snprintf(err, err_size, "unroll must be at least 1");
        return -1;
    }
    if (refuse(p, err, err_size))
        return -1;
    emitter e = {.p = p, .g = p->graph, .dialect = d, .out = text, .f32 = p->real == CS_F32};
    e.real = e.f32 ? "float" : "double";
    e.L = d == CS_DIALECT_C ? "L->" : "L.";
    e.block_lanes = CS_BLOCK_LANES;
    uint32_t count = cs_graph_count(p->graph);
    e.stamp = calloc(count, sizeof *e.stamp);
    e.materialized = calloc(count, sizeof *e.materialized);
    e.any_materialized = calloc(count, sizeof *e.any_materialized);
    e.any_called = calloc(count, sizeof *e.any_called);
    e.scratch_off = calloc(count, sizeof *e.scratch_off);
    e.loop_of = malloc(count * sizeof *e.loop_of);
    e.loop_shape = malloc((count + 1) * sizeof *e.loop_shape);
    e.arg_best = calloc(count, sizeof *e.arg_best);
    e.alias = malloc(count * sizeof *e.alias);
    e.in_place = calloc(count, sizeof *e.in_place);
    e.absorbed = calloc(count, sizeof *e.absorbed);
    e.rows_of = calloc(count, sizeof *e.rows_of);
    e.loop_node = calloc(count + 1, sizeof *e.loop_node);
    bool ok = e.stamp && e.materialized && e.any_materialized && e.any_called && e.scratch_off && e.loop_of &&
              e.loop_shape && e.arg_best && e.alias && e.in_place && e.absorbed && e.rows_of && e.loop_node &&
              index_slots(&e) == 0;
    if (ok)
        for (cs_node n = 0; n < count; n++) {
            e.loop_of[n] = CS_NO_LOOP;
            e.alias[n] = CS_NO_SLOT;
        }
    for (unsigned v = 0; v < p->n_vars; v++)
        e.slot_tables |= p->vars[v].shape != CS_SCALAR || p->vars[v].type != p->real;
    if (d == CS_DIALECT_CUDA) {
        int rc = ok ? emit_cuda(&e, plan, s) : -1;
        if (rc)
            snprintf(err, err_size, "emit (cuda): %s", e.err[0] ? e.err : "out of memory");
        else if (text->failed)
            rc = -1, snprintf(err, err_size, "out of memory");
        emitter_free(&e);
        return rc;
    }
    cs_text roll_fn = {0}, step_fn = {0};
    int rc = -1;
    if (!ok) {
        snprintf(err, err_size, "out of memory");
        goto done;
    }
    entry roll = {plan->roll_roots, plan->n_roll, true};
    entry step = {plan->step_roots, plan->n_step, false};
    mark_materialized(&e, &plan->roll, roll.roots, roll.n_roots);
    if (emit_step_function(&e, s, &roll, &plan->roll, &roll_fn))
        goto fail;
    mark_materialized(&e, &plan->step, step.roots, step.n_roots);
    if (emit_step_function(&e, s, &step, &plan->step, &step_fn))
        goto fail;

    e.block_lanes = choose_block_lanes(&e);
    if (e.element_loops)
        out(&e, "%s", CS_ELEMENT_LOOPS_MARK);
    emit_prelude(&e, s);
    emit_block_struct(&e);
    emit_fresh(&e);
    if (e.err[0])
        goto fail;
    /* Two halves that the cpu backend compiles at once, each in a process
     * of its own (CS_ONLY_ROLLOUT, CS_ONLY_STEP): about as long each, and a
     * half of the compile's time (jit/backend_cpu.c). The whole text
     * compiles too. */
    out(&e, "#ifndef CS_ONLY_STEP\n");
    emit_c_rollout(&e, s, &roll, &roll_fn);
    emit_c_restart(&e);
    out(&e, "#endif\n#ifndef CS_ONLY_ROLLOUT\n");
    emit_c_step(&e, &step_fn);
    out(&e, "#endif\n");
    if (text->failed || roll_fn.failed || step_fn.failed) {
        snprintf(err, err_size, "out of memory");
        goto done;
    }
    rc = 0;
    goto done;
fail:
    snprintf(err, err_size, "emit: %s", e.err);
done:
    cs_text_free(&roll_fn);
    cs_text_free(&step_fn);
    emitter_free(&e);
    return rc;
}
