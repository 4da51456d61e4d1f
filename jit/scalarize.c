/* Scalarize: small arrays become their elements.
 *
 * An array of at most CS_SCALARIZE_MAX elements is computed as that many
 * scalar nodes, which the emitter writes into the one loop over the lanes
 * like any scalar (Acrobot's RK4 on 5-vectors, a few links): no loop over
 * the elements, nothing through memory, and every element vectorized
 * across the lanes as the step's other scalars are. Bigger arrays, and
 * constant tables of more than 8 elements (a gather from one is a load),
 * stay single nodes, lowered to loops by the emitter.
 *
 * Each op is rewritten by its semantics (jit/ops.def), element by element,
 * with the same ops in the same order as the interpreter computes them: a
 * sum is the chain ((e0 + e1) + e2) ..., a gather a chain of selects on the
 * clamped index, a scatter one select per element. Leaves split into the
 * leaves of their elements (a state's slots, consecutive draws, a table's
 * constants). A scalarized node that something else still reads as an
 * array (a root, a big array op) is rebuilt as nested stacks of its
 * elements, which the concat pass and dce then see through.
 */
#include <stdlib.h>
#include <string.h>

#include "jit.h"

#define CS_SCALARIZE_TABLE_MAX 8

typedef struct {
    cs_program *p;
    cs_graph *g;
    cs_node **elems;        /* [node] its elements when it was scalarized, else NULL */
    uint32_t cap;
    bool failed;
} scalarizer;

static cs_node *elems_of(scalarizer *s, cs_node n) { return n < s->cap ? s->elems[n] : NULL; }

static bool remember(scalarizer *s, cs_node n, cs_node *e)
{
    if (n >= s->cap) {
        uint32_t cap = s->cap ? s->cap : 256;
        while (cap <= n)
            cap *= 2;
        cs_node **more = realloc(s->elems, cap * sizeof *more);
        if (!more)
            return false;
        memset(more + s->cap, 0, (cap - s->cap) * sizeof *more);
        s->elems = more;
        s->cap = cap;
    }
    free(s->elems[n]);
    s->elems[n] = e;
    return true;
}

static const cs_shape *shape(const scalarizer *s, cs_node n) { return cs_node_shape(s->g, n); }
static cs_type type_of(const scalarizer *s, cs_node n) { return (cs_type)cs_graph_node(s->g, n)->type; }

static cs_node check(scalarizer *s, cs_node n)
{
    s->failed |= n == 0;
    return n;
}

/* Element e (row-major) of array node a, as a scalar node: its element when
 * scalarized, else indexes down to it. */
static cs_node element(scalarizer *s, cs_node a, unsigned e)
{
    cs_node *el = elems_of(s, a);
    if (el)
        return el[e];
    const cs_shape *sh = shape(s, a);
    if (!sh->rank)
        return a;
    unsigned idx[CS_RANK_MAX];
    cs_shape_unflatten(sh, e, idx);
    cs_node n = a;
    for (unsigned k = 0; k < sh->rank && n; k++)
        n = cs_index(s->g, n, idx[k]);
    return check(s, n);
}

/* Nested stacks of elements el in shape sh (a scalar: el[0]). */
static cs_node materialize(scalarizer *s, const cs_node *el, const cs_shape *sh, unsigned axis, unsigned first)
{
    if (axis == sh->rank)
        return el[first];
    unsigned inner = 1;
    for (unsigned k = axis + 1; k < sh->rank; k++)
        inner *= sh->dim[k];
    cs_node rows[CS_SCALARIZE_MAX];
    for (unsigned i = 0; i < sh->dim[axis]; i++)
        rows[i] = materialize(s, el, sh, axis + 1, first + i * inner);
    for (unsigned i = 0; i < sh->dim[axis]; i++)
        if (!rows[i])
            return 0;
    return check(s, cs_stack(s->g, sh->dim[axis], rows));
}

static cs_node constant(scalarizer *s, cs_type t, double v) { return check(s, cs_const(s->g, t, v)); }

/* i clamped into [0, n) by the JAX rule (negative counts from the end). */
static cs_node jax_clamped(scalarizer *s, cs_node i, unsigned n)
{
    cs_graph *g = s->g;
    cs_node zero = constant(s, CS_I32, 0), len = constant(s, CS_I32, n);
    cs_node neg = check(s, cs_binary(g, CS_OP_LT, i, zero));
    cs_node wrapped = check(s, cs_ternary(g, CS_OP_SELECT, neg, check(s, cs_binary(g, CS_OP_ADD, i, len)), i));
    return check(s, cs_ternary(g, CS_OP_CLIP, wrapped, zero, constant(s, CS_I32, n - 1)));
}

/* The elements of a map node: its op over the operands' elements. */
static bool map_elements(scalarizer *s, const cs_node_data *d, const cs_node *in, const cs_shape *sh, cs_node *out)
{
    for (unsigned e = 0; e < sh->size; e++) {
        cs_node o[3] = {0, 0, 0};
        for (unsigned k = 0; k < d->n_in && k < 3; k++)
            o[k] = element(s, in[k], cs_shape_source(shape(s, in[k]), sh, e));
        cs_imm imm = d->imm;
        out[e] = check(s, cs_make(s->g, (cs_op)d->op, (cs_type)d->type, CS_SCALAR, d->n_in, o, imm));
    }
    return !s->failed;
}

/* The flat index the leading indices pick (each clamped for a gather), and
 * for a scatter whether every index is in range. */
static cs_node flat_index(scalarizer *s, const cs_shape *as, const cs_node *idx, unsigned k, bool gather,
                          cs_node *inside)
{
    cs_graph *g = s->g;
    cs_node flat = constant(s, CS_I32, 0), ok = constant(s, CS_BOOL, 1);
    for (unsigned j = 0; j < k; j++) {
        unsigned n = as->dim[j];
        cs_node i;
        if (gather) {
            i = jax_clamped(s, idx[j], n);
        } else {
            cs_node zero = constant(s, CS_I32, 0), len = constant(s, CS_I32, n);
            cs_node neg = check(s, cs_binary(g, CS_OP_LT, idx[j], zero));
            i = check(s, cs_ternary(g, CS_OP_SELECT, neg, check(s, cs_binary(g, CS_OP_ADD, idx[j], len)), idx[j]));
            cs_node lo = check(s, cs_binary(g, CS_OP_GE, i, zero)), hi = check(s, cs_binary(g, CS_OP_LT, i, len));
            ok = check(s, cs_binary(g, CS_OP_AND, ok, check(s, cs_binary(g, CS_OP_AND, lo, hi))));
        }
        flat = check(s, cs_binary(g, CS_OP_ADD, check(s, cs_binary(g, CS_OP_MUL, flat, constant(s, CS_I32, n))), i));
    }
    if (inside)
        *inside = ok;
    return flat;
}

static bool shape_elements(scalarizer *s, const cs_node_data *d, const cs_node *in, const cs_shape *sh, cs_node *out)
{
    cs_graph *g = s->g;
    const cs_shape *as = shape(s, in[0]);
    unsigned idx[CS_RANK_MAX];
    switch ((cs_op)d->op) {
    case CS_OP_STACK: {
        unsigned axis = (unsigned)d->imm.i;
        for (unsigned e = 0; e < sh->size; e++) {
            cs_shape_unflatten(sh, e, idx);
            unsigned src[CS_RANK_MAX] = {0, 0, 0};
            for (unsigned k = 0, j = 0; k < sh->rank; k++)
                if (k != axis)
                    src[j++] = idx[k];
            cs_node o = in[idx[axis]];
            out[e] = element(s, o, cs_shape_flatten(shape(s, o), src));
        }
        return !s->failed;
    }
    case CS_OP_CONCAT: {
        unsigned axis = (unsigned)d->imm.i;
        for (unsigned e = 0; e < sh->size; e++) {
            cs_shape_unflatten(sh, e, idx);
            for (unsigned k = 0; k < d->n_in; k++) {
                const cs_shape *os = shape(s, in[k]);
                if (idx[axis] >= os->dim[axis]) {
                    idx[axis] -= os->dim[axis];
                    continue;
                }
                out[e] = element(s, in[k], cs_shape_flatten(os, idx));
                break;
            }
        }
        return !s->failed;
    }
    case CS_OP_INDEX:
        for (unsigned e = 0; e < sh->size; e++)
            out[e] = element(s, in[0], (unsigned)d->imm.i * sh->size + e);
        return !s->failed;
    case CS_OP_SLICE:
        for (unsigned e = 0; e < sh->size; e++) {
            cs_shape_unflatten(sh, e, idx);
            for (unsigned k = 0; k < sh->rank; k++)
                idx[k] += CS_SLICE_START(d->imm.i, k);
            out[e] = element(s, in[0], cs_shape_flatten(as, idx));
        }
        return !s->failed;
    case CS_OP_RESHAPE:
        for (unsigned e = 0; e < sh->size; e++)
            out[e] = element(s, in[0], e);
        return !s->failed;
    case CS_OP_BROADCAST:
        for (unsigned e = 0; e < sh->size; e++)
            out[e] = element(s, in[0], cs_shape_source(as, sh, e));
        return !s->failed;
    case CS_OP_SHIFT: case CS_OP_ROLL: {
        unsigned axis = CS_MOVE_AXIS(d->imm.i), len = sh->dim[axis];
        long long amount = CS_MOVE_AMOUNT(d->imm.i);
        for (unsigned e = 0; e < sh->size; e++) {
            cs_shape_unflatten(sh, e, idx);
            long long j = (long long)idx[axis] - amount;
            if (d->op == CS_OP_ROLL)
                j = ((j % len) + len) % len;
            if (j < 0 || j >= len) {
                out[e] = in[1];   /* SHIFT's fill */
                continue;
            }
            idx[axis] = (unsigned)j;
            out[e] = element(s, in[0], cs_shape_flatten(sh, idx));
        }
        return !s->failed;
    }
    case CS_OP_GATHER: {
        /* each result element: a select chain over the positions the indices may pick */
        unsigned k = d->n_in - 1, positions = as->size / sh->size;
        cs_node flat = flat_index(s, as, in + 1, k, true, NULL);
        for (unsigned e = 0; e < sh->size; e++) {
            cs_node v = element(s, in[0], (positions - 1) * sh->size + e);
            for (unsigned q = positions - 1; q-- > 0;) {
                cs_node is = check(s, cs_binary(g, CS_OP_EQ, flat, constant(s, CS_I32, q)));
                v = check(s, cs_ternary(g, CS_OP_SELECT, is, element(s, in[0], q * sh->size + e), v));
            }
            out[e] = v;
        }
        return !s->failed;
    }
    case CS_OP_SCATTER: {
        unsigned k = d->n_in - 2, inner = 1;
        for (unsigned j = k; j < as->rank; j++)
            inner *= as->dim[j];
        cs_node inside;
        cs_node flat = flat_index(s, as, in + 2, k, false, &inside);
        cs_shape sub = {as->rank - k, {1, 1, 1}, inner};
        for (unsigned j = k; j < as->rank; j++)
            sub.dim[j - k] = as->dim[j];
        for (unsigned e = 0; e < sh->size; e++) {
            cs_node is = check(s, cs_binary(g, CS_OP_EQ, flat, constant(s, CS_I32, e / inner)));
            is = check(s, cs_binary(g, CS_OP_AND, is, inside));
            cs_node v = element(s, in[1], cs_shape_source(shape(s, in[1]), &sub, e % inner));
            out[e] = check(s, cs_ternary(g, CS_OP_SELECT, is, v, element(s, in[0], e)));
        }
        return !s->failed;
    }
    default:
        return false;
    }
}

/* A reduction over n elements of a (flat positions at[0 .. n)), as the
 * interpreter steps it (cs_reduce_start, cs_reduce_step). */
static cs_node reduce_chain(scalarizer *s, cs_op op, cs_node a, const unsigned *at, unsigned n)
{
    cs_graph *g = s->g;
    cs_node x0 = element(s, a, at[0]);
    cs_type t = type_of(s, a);
    switch (op) {
    case CS_OP_ARGMAX: case CS_OP_ARGMIN: {
        cs_node best = x0, index = constant(s, CS_I32, 0);
        for (unsigned i = 1; i < n; i++) {
            cs_node x = element(s, a, at[i]);
            cs_node wins = check(s, cs_binary(g, op == CS_OP_ARGMAX ? CS_OP_GT : CS_OP_LT, x, best));
            index = check(s, cs_ternary(g, CS_OP_SELECT, wins, constant(s, CS_I32, i), index));
            best = check(s, cs_ternary(g, CS_OP_SELECT, wins, x, best));
        }
        return index;
    }
    case CS_OP_NONZERO: {
        cs_node zero = constant(s, t, 0), acc = 0;
        for (unsigned i = 0; i < n; i++) {
            cs_node nz = check(s, cs_binary(g, CS_OP_NE, element(s, a, at[i]), zero));
            nz = check(s, cs_cast(g, CS_I32, nz));
            acc = acc ? check(s, cs_binary(g, CS_OP_ADD, acc, nz)) : nz;
        }
        return acc;
    }
    default: {
        cs_op step = op == CS_OP_SUM ? CS_OP_ADD : op == CS_OP_RMIN ? CS_OP_MIN : op == CS_OP_RMAX ? CS_OP_MAX
                   : op == CS_OP_ANY ? CS_OP_OR : CS_OP_AND;
        cs_node acc = x0;
        for (unsigned i = 1; i < n; i++)
            acc = check(s, cs_binary(g, step, acc, element(s, a, at[i])));
        return acc;
    }
    }
}

static bool reduce_elements(scalarizer *s, const cs_node_data *d, const cs_node *in, const cs_shape *sh, cs_node *out)
{
    const cs_shape *as = shape(s, in[0]);
    unsigned *pos = NULL;
    cs_op op = (cs_op)d->op;
    if (d->imm.i == CS_ALL_AXES) {
        if (!(pos = malloc(as->size * sizeof *pos)))
            return false;
        for (unsigned e = 0; e < as->size; e++)
            pos[e] = e;
        out[0] = reduce_chain(s, op, in[0], pos, as->size);
        free(pos);
        return !s->failed;
    }
    unsigned axis = (unsigned)d->imm.i, len = as->dim[axis], idx[CS_RANK_MAX], src[CS_RANK_MAX];
    if (!(pos = malloc(len * sizeof *pos)))
        return false;
    for (unsigned e = 0; e < sh->size; e++) {
        cs_shape_unflatten(sh, e, idx);
        for (unsigned k = 0, j = 0; k < as->rank; k++)
            src[k] = k == axis ? 0 : idx[j++];
        for (unsigned i = 0; i < len; i++) {
            src[axis] = i;
            pos[i] = cs_shape_flatten(as, src);
        }
        out[e] = reduce_chain(s, op, in[0], pos, len);
    }
    free(pos);
    return !s->failed;
}

static bool leaf_elements(scalarizer *s, const cs_node_data *d, const cs_shape *sh, cs_node *out)
{
    cs_graph *g = s->g;
    cs_type t = (cs_type)d->type;
    for (unsigned e = 0; e < sh->size; e++) {
        switch ((cs_op)d->op) {
        case CS_OP_CARRIED: case CS_OP_PARAM: case CS_OP_UNIFORM: case CS_OP_RANDBITS:
            /* a state's or parameter's slot; the draw numbered e after the first */
            out[e] = check(s, cs_leaf(g, (cs_op)d->op, t, d->imm.i + e));
            break;
        case CS_OP_TABLE:
            out[e] = constant(s, t, cs_graph_table(g)[d->imm.i + e]);
            break;
        case CS_OP_IOTA: {
            unsigned idx[CS_RANK_MAX];
            cs_shape_unflatten(sh, e, idx);
            out[e] = constant(s, CS_I32, idx[d->imm.i]);
            break;
        }
        default:
            return false;
        }
    }
    return !s->failed;
}

/* Whether an operand reaches this node as elements. */
static bool any_scalarized(scalarizer *s, const cs_node_data *d, const cs_node *in)
{
    for (unsigned k = 0; k < d->n_in; k++)
        if (elems_of(s, in[k]))
            return true;
    return false;
}

/* Whether every array operand does: a gather, scatter or reduction of a big
 * array stays one node (its elements would be a chain over all of it). */
static bool all_scalarized(scalarizer *s, const cs_node_data *d, const cs_node *in)
{
    for (unsigned k = 0; k < d->n_in; k++)
        if (shape(s, in[k])->rank && !elems_of(s, in[k]))
            return false;
    return true;
}

static cs_node scalarize_node(void *ctx, cs_graph *g, const cs_node_data *d, const cs_node *in)
{
    scalarizer *s = ctx;
    s->g = g;
    const cs_shape *sh = cs_shape_of(g, d->shape);
    cs_op_kind kind = cs_op_table[d->op].kind;
    /* A constant table of more than CS_SCALARIZE_TABLE_MAX elements stays
     * whole: a gather from it is one load per lane, where its elements made
     * a chain of selects on the index that GCC would not vectorize
     * (FrozenLake-v1's 16-cell map ran at 0.14x a hand-written loop that
     * way, 0.8x as a table); a shorter one's selects beat the load
     * (DiscountingChain's 5 rewards ran 2.4x slower as a table). */
    if (d->op == CS_OP_TABLE && cs_shape_of(g, d->shape)->size > CS_SCALARIZE_TABLE_MAX)
        return 0;
    bool small = sh->rank > 0 && sh->size <= CS_SCALARIZE_MAX;
    /* A scalar computed from small arrays: a read of an element, a gather, a
     * reduction. */
    bool whole_operands = d->op == CS_OP_GATHER || d->op == CS_OP_SCATTER || kind == CS_KIND_REDUCE;
    if (whole_operands && !all_scalarized(s, d, in))
        return 0;
    if (!sh->rank && any_scalarized(s, d, in) && (kind == CS_KIND_SHAPE || kind == CS_KIND_REDUCE)) {
        cs_node r = 0;
        if (d->op == CS_OP_INDEX)
            r = element(s, in[0], (unsigned)d->imm.i);
        else if (kind == CS_KIND_REDUCE)
            reduce_elements(s, d, in, sh, &r);
        else if (d->op == CS_OP_GATHER)
            shape_elements(s, d, in, sh, &r);
        return s->failed ? CS_REWRITE_FAILED : r;
    }
    if (!small)
        return 0;   /* rebuilt on its operands: a scalarized operand reaches it as nested stacks */
    cs_node *el = calloc(sh->size, sizeof *el);
    if (!el)
        return CS_REWRITE_FAILED;
    bool ok = kind == CS_KIND_LEAF     ? leaf_elements(s, d, sh, el)
            : kind == CS_KIND_MAP      ? map_elements(s, d, in, sh, el)
            : kind == CS_KIND_SHAPE    ? shape_elements(s, d, in, sh, el)
                                       : reduce_elements(s, d, in, sh, el);
    if (!ok) {
        free(el);
        return s->failed ? CS_REWRITE_FAILED : 0;
    }
    cs_node whole = materialize(s, el, sh, 0, 0);
    if (!whole || !remember(s, whole, el)) {
        free(el);
        return CS_REWRITE_FAILED;
    }
    return whole;
}

int cs_pass_scalarize(cs_program *p)
{
    scalarizer s = {.p = p, .g = p->graph};
    int r = cs_program_rewrite(p, scalarize_node, &s);
    for (uint32_t k = 0; k < s.cap; k++)
        free(s.elems[k]);
    free(s.elems);
    /* its element-wise ops on constants (a table's) fold */
    if (r > 0 && cs_pass_fold(p) < 0)
        return -1;
    return r;
}
