/* The graph: node table, operand pool and the hash-consing table.
 *
 * Everything a graph allocates hangs off it and is freed with it. Nodes are
 * only appended, so creation order is a topological order and an id stays
 * valid for the graph's lifetime.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

struct cs_graph {
    cs_node_data *nodes;
    uint32_t count, cap;
    cs_node *operands;
    uint32_t n_operands, cap_operands;
    uint32_t *table;        /* open addressing, 0 = empty; capacity a power of two */
    uint32_t table_cap;
    cs_shape *shapes;       /* [0] is the scalar's */
    uint32_t n_shapes, cap_shapes;
    double *pool;           /* the TABLE nodes' values */
    uint32_t n_pool, cap_pool;
    char error[256];
};

static void set_error(cs_graph *g, const char *fmt, const char *a, const char *b)
{
    if (!g->error[0])
        snprintf(g->error, sizeof g->error, fmt, a, b);
}

cs_graph *cs_graph_new(void)
{
    cs_graph *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->cap = 256;
    g->nodes = calloc(g->cap, sizeof *g->nodes);
    g->table_cap = 512;
    g->table = calloc(g->table_cap, sizeof *g->table);
    g->cap_operands = 512;
    g->operands = malloc(g->cap_operands * sizeof *g->operands);
    if (!g->nodes || !g->table || !g->operands) {
        cs_graph_free(g);
        return NULL;
    }
    g->cap_shapes = 16;
    g->shapes = calloc(g->cap_shapes, sizeof *g->shapes);
    if (!g->shapes) {
        cs_graph_free(g);
        return NULL;
    }
    g->shapes[0] = (cs_shape){0, {1, 1, 1}, 1};
    g->n_shapes = 1;
    g->count = 1;   /* id 0 is "no node" */
    return g;
}

cs_graph *cs_graph_new_like(const cs_graph *old)
{
    cs_graph *g = cs_graph_new();
    if (!g)
        return NULL;
    cs_shape *shapes = realloc(g->shapes, old->cap_shapes * sizeof *shapes);
    double *pool = old->n_pool ? malloc(old->n_pool * sizeof *pool) : NULL;
    if (!shapes || (old->n_pool && !pool)) {
        if (shapes)
            g->shapes = shapes;
        free(pool);
        cs_graph_free(g);
        return NULL;
    }
    memcpy(shapes, old->shapes, old->n_shapes * sizeof *shapes);
    g->shapes = shapes;
    g->n_shapes = old->n_shapes;
    g->cap_shapes = old->cap_shapes;
    if (pool)
        memcpy(pool, old->pool, old->n_pool * sizeof *pool);
    g->pool = pool;
    g->n_pool = g->cap_pool = old->n_pool;
    return g;
}

void cs_graph_free(cs_graph *g)
{
    if (!g)
        return;
    free(g->nodes);
    free(g->operands);
    free(g->table);
    free(g->shapes);
    free(g->pool);
    free(g);
}

const char *cs_graph_error(const cs_graph *g) { return g ? g->error : "no graph"; }
uint32_t cs_graph_count(const cs_graph *g) { return g->count; }

const cs_node_data *cs_graph_node(const cs_graph *g, cs_node n)
{
    return n && n < g->count ? &g->nodes[n] : NULL;
}

cs_node cs_graph_input(const cs_graph *g, cs_node n, unsigned k)
{
    const cs_node_data *d = cs_graph_node(g, n);
    return d && k < d->n_in ? g->operands[d->in + k] : 0;
}

/* ---- shapes ---- */

uint32_t cs_shape_id(cs_graph *g, unsigned rank, const unsigned *dims)
{
    if (rank == 0)
        return CS_SCALAR;
    cs_shape s = {rank, {1, 1, 1}, 1};
    uint64_t size = 1;
    for (unsigned k = 0; k < rank && k < CS_RANK_MAX; k++) {
        s.dim[k] = dims[k];
        size *= dims[k];
    }
    if (rank > CS_RANK_MAX) {
        set_error(g, "an array has at most 3 axes%s%s", "", "");
        return 0;
    }
    for (unsigned k = 0; k < rank; k++)
        if (dims[k] == 0 || dims[k] > 65535) {
            set_error(g, "an array axis must be from 1 to 65535 long%s%s", "", "");
            return 0;
        }
    if (size > CS_ARRAY_MAX) {
        set_error(g, "an array has at most 65536 elements%s%s", "", "");
        return 0;
    }
    s.size = (unsigned)size;
    for (uint32_t id = 1; id < g->n_shapes; id++)
        if (!memcmp(&g->shapes[id], &s, sizeof s))
            return id;
    if (g->n_shapes == g->cap_shapes) {
        cs_shape *more = realloc(g->shapes, 2 * (size_t)g->cap_shapes * sizeof *more);
        if (!more) {
            set_error(g, "out of memory%s%s", "", "");
            return 0;
        }
        g->shapes = more;
        g->cap_shapes *= 2;
    }
    g->shapes[g->n_shapes] = s;
    return g->n_shapes++;
}

const cs_shape *cs_shape_of(const cs_graph *g, uint32_t shape)
{
    return &g->shapes[shape < g->n_shapes ? shape : 0];
}

const cs_shape *cs_node_shape(const cs_graph *g, cs_node n)
{
    const cs_node_data *d = cs_graph_node(g, n);
    return cs_shape_of(g, d ? d->shape : CS_SCALAR);
}

bool cs_shape_broadcast(const cs_shape *a, const cs_shape *b, cs_shape *out)
{
    unsigned rank = a->rank > b->rank ? a->rank : b->rank;
    cs_shape r = {rank, {1, 1, 1}, 1};
    for (unsigned k = 0; k < rank; k++) {
        /* axis k of the result, counted from the last */
        unsigned da = k < a->rank ? a->dim[a->rank - 1 - k] : 1, db = k < b->rank ? b->dim[b->rank - 1 - k] : 1;
        if (da != db && da != 1 && db != 1)
            return false;
        r.dim[rank - 1 - k] = da == 1 ? db : da;
    }
    for (unsigned k = 0; k < rank; k++)
        r.size *= r.dim[k];
    *out = r;
    return true;
}

void cs_shape_unflatten(const cs_shape *s, unsigned e, unsigned idx[CS_RANK_MAX])
{
    for (unsigned k = CS_RANK_MAX; k-- > 0;) {
        if (k >= s->rank) {
            idx[k] = 0;
            continue;
        }
        idx[k] = e % s->dim[k];
        e /= s->dim[k];
    }
}

unsigned cs_shape_flatten(const cs_shape *s, const unsigned idx[CS_RANK_MAX])
{
    unsigned e = 0;
    for (unsigned k = 0; k < s->rank; k++)
        e = e * s->dim[k] + idx[k];
    return e;
}

unsigned cs_shape_source(const cs_shape *from, const cs_shape *to, unsigned e)
{
    if (from->size == 1)
        return 0;
    if (from->rank == to->rank && from->size == to->size)
        return e;
    unsigned at[CS_RANK_MAX], src[CS_RANK_MAX] = {0, 0, 0};
    cs_shape_unflatten(to, e, at);
    for (unsigned k = 0; k < from->rank; k++) {
        unsigned axis = to->rank - from->rank + k;
        src[k] = from->dim[k] == 1 ? 0 : at[axis];
    }
    return cs_shape_flatten(from, src);
}

/* ---- the constant pool ---- */

int64_t cs_graph_add_table(cs_graph *g, const double *values, unsigned n)
{
    for (uint32_t at = 0; n && at + n <= g->n_pool; at++)
        if (!memcmp(&g->pool[at], values, n * sizeof *values))
            return at;
    if (g->n_pool + (uint64_t)n > UINT32_MAX / 2) {
        set_error(g, "constant tables too large%s%s", "", "");
        return -1;
    }
    if (g->n_pool + n > g->cap_pool) {
        uint32_t cap = g->cap_pool ? g->cap_pool : 64;
        while (g->n_pool + n > cap)
            cap *= 2;
        double *more = realloc(g->pool, (size_t)cap * sizeof *more);
        if (!more) {
            set_error(g, "out of memory%s%s", "", "");
            return -1;
        }
        g->pool = more;
        g->cap_pool = cap;
    }
    memcpy(&g->pool[g->n_pool], values, n * sizeof *values);
    g->n_pool += n;
    return g->n_pool - n;
}

const double *cs_graph_table(const cs_graph *g) { return g->pool; }
uint32_t cs_graph_table_size(const cs_graph *g) { return g->n_pool; }

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t node_hash(cs_op op, cs_type t, uint32_t shape, unsigned n_in, const cs_node *in, cs_imm imm)
{
    uint64_t h = mix((uint64_t)shape << 16 | (uint64_t)op << 8 | t, (uint64_t)imm.i);
    for (unsigned k = 0; k < n_in; k++)
        h = mix(h, in[k]);
    return h ^ (h >> 29);
}

static bool node_equal(const cs_graph *g, const cs_node_data *d, cs_op op, cs_type t, uint32_t shape, unsigned n_in,
                       const cs_node *in, cs_imm imm)
{
    if (d->op != op || d->type != t || d->shape != shape || d->n_in != n_in || d->imm.i != imm.i)
        return false;
    return n_in == 0 || memcmp(&g->operands[d->in], in, n_in * sizeof *in) == 0;
}

static bool grow_table(cs_graph *g)
{
    uint32_t cap = g->table_cap * 2;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t)
        return false;
    for (uint32_t id = 1; id < g->count; id++) {
        const cs_node_data *d = &g->nodes[id];
        uint64_t h = node_hash((cs_op)d->op, (cs_type)d->type, d->shape, d->n_in, &g->operands[d->in], d->imm);
        uint32_t i = (uint32_t)h & (cap - 1);
        while (t[i])
            i = (i + 1) & (cap - 1);
        t[i] = id;
    }
    free(g->table);
    g->table = t;
    g->table_cap = cap;
    return true;
}

static bool numeric(cs_type t) { return t != CS_BOOL; }

static const cs_shape *shape_in(const cs_graph *g, cs_node n) { return cs_shape_of(g, g->nodes[n].shape); }

static bool same_shape(const cs_shape *a, const cs_shape *b)
{
    return a->rank == b->rank && !memcmp(a->dim, b->dim, sizeof a->dim);
}

/* Leaves: the shape and index each may have. */
static const char *check_leaf(const cs_graph *g, cs_op op, cs_type t, const cs_shape *s, cs_imm imm)
{
    switch (op) {
    case CS_OP_PARAM:   /* an array of parameters: element e is slot imm.i + e */
        return imm.i >= 0 && imm.i + s->size <= UINT32_MAX ? NULL : "parameter slots out of range";
    case CS_OP_CONST: case CS_OP_INPUT: case CS_OP_SEGSTEP:
        if (s->rank)
            return "must be a scalar";
        return op == CS_OP_SEGSTEP && t != CS_I32 ? "segstep is an i32" : NULL;
    case CS_OP_UNIFORM:
        return cs_type_is_real(t) ? NULL : "uniform draws are reals";
    case CS_OP_RANDBITS:
        return t == CS_U32 ? NULL : "random bits are u32";
    case CS_OP_IOTA:
        return t == CS_I32 && imm.i >= 0 && imm.i < (int64_t)s->rank ? NULL : "iota needs an i32 array and one of its axes";
    case CS_OP_TABLE:
        return imm.i >= 0 && imm.i + s->size <= g->n_pool ? NULL : "table outside the constant pool";
    default:
        return NULL;
    }
}

/* An elementwise op's operands: each broadcasts to the node's shape, and
 * together they give it. */
static const char *check_map_shapes(const cs_graph *g, const cs_shape *s, unsigned n_in, const cs_node *in)
{
    cs_shape all = {0, {1, 1, 1}, 1};
    for (unsigned k = 0; k < n_in; k++)
        if (!cs_shape_broadcast(&all, shape_in(g, in[k]), &all))
            return "operand shapes do not broadcast";
    return same_shape(&all, s) ? NULL : "the node's shape is not its operands' broadcast";
}

static const char *check_map(const cs_graph *g, cs_op op, cs_type t, unsigned n_in, const cs_node *in)
{
    cs_type a = n_in ? (cs_type)g->nodes[in[0]].type : t;
    cs_type b = n_in > 1 ? (cs_type)g->nodes[in[1]].type : a;
    switch (op) {
    case CS_OP_NOT:
        return a == CS_BOOL && t == CS_BOOL ? NULL : "'not' needs a bool";
    case CS_OP_AND: case CS_OP_OR:
        return a == CS_BOOL && b == CS_BOOL && t == CS_BOOL ? NULL : "'and'/'or' need bools";
    case CS_OP_LT: case CS_OP_LE: case CS_OP_GT: case CS_OP_GE: case CS_OP_EQ: case CS_OP_NE:
        return a == b && t == CS_BOOL ? NULL : "comparison of different types";
    case CS_OP_SELECT:
        return a == CS_BOOL && g->nodes[in[1]].type == t && g->nodes[in[2]].type == t
                   ? NULL : "select needs (bool, x, x)";
    case CS_OP_CAST:
        return NULL;
    case CS_OP_ROUND_F32:
        return cs_type_is_real(a) && a == t ? NULL : "round_f32 needs a real";
    case CS_OP_IDIV:
        return a == CS_I32 && b == CS_I32 && t == CS_I32 ? NULL : "integer division needs i32 operands";
    case CS_OP_BOUNDED:
        return a == CS_U32 && b == CS_I32 && t == CS_I32 ? NULL : "bounded needs (u32 bits, i32 n)";
    case CS_OP_MOD:
        return a == t && b == t && (t == CS_I32 || cs_type_is_real(t)) ? NULL : "'%' needs two i32 or two reals";
    case CS_OP_NEG: case CS_OP_ABS: case CS_OP_ADD: case CS_OP_SUB: case CS_OP_MUL:
    case CS_OP_MIN: case CS_OP_MAX: case CS_OP_CLIP:
        for (unsigned k = 0; k < n_in; k++)
            if (g->nodes[in[k]].type != t || !numeric(t))
                return "arithmetic on mismatched or bool operands";
        return NULL;
    default:   /* DIV and the libm set: reals only */
        for (unsigned k = 0; k < n_in; k++)
            if (g->nodes[in[k]].type != t || !cs_type_is_real(t))
                return "needs reals of one type";
        return NULL;
    }
}

/* s with axis `axis` removed (a reduction's result). */
static cs_shape drop_axis(const cs_shape *s, unsigned axis)
{
    cs_shape r = {0, {1, 1, 1}, 1};
    for (unsigned k = 0; k < s->rank; k++)
        if (k != axis) {
            r.dim[r.rank++] = s->dim[k];
            r.size *= s->dim[k];
        }
    return r;
}

/* s without its first `n` axes (what n indices leave). */
static cs_shape drop_leading(const cs_shape *s, unsigned n)
{
    cs_shape r = {0, {1, 1, 1}, 1};
    for (unsigned k = n; k < s->rank; k++) {
        r.dim[r.rank++] = s->dim[k];
        r.size *= s->dim[k];
    }
    return r;
}

static bool scalar_i32(const cs_graph *g, cs_node n)
{
    return g->nodes[n].type == CS_I32 && g->nodes[n].shape == CS_SCALAR;
}

static const char *check_shape_op(const cs_graph *g, cs_op op, cs_type t, const cs_shape *s, unsigned n_in,
                                  const cs_node *in, cs_imm imm)
{
    const cs_shape *a = shape_in(g, in[0]);
    cs_type at = (cs_type)g->nodes[in[0]].type;
    switch (op) {
    case CS_OP_STACK: case CS_OP_CONCAT: {
        if (n_in == 0)
            return "nothing to join";
        unsigned axis = (unsigned)imm.i, total = 0;
        if (imm.i < 0 || axis > a->rank - (op == CS_OP_CONCAT) || (op == CS_OP_CONCAT && a->rank == 0))
            return "axis out of range";
        for (unsigned k = 0; k < n_in; k++) {
            const cs_shape *b = shape_in(g, in[k]);
            if (g->nodes[in[k]].type != t)
                return "items of different types";
            bool fits = b->rank == a->rank;
            for (unsigned j = 0; fits && j < a->rank; j++)
                fits = b->dim[j] == a->dim[j] || (op == CS_OP_CONCAT && j == axis);
            if (!fits)
                return "items of different shapes";
            total += op == CS_OP_CONCAT ? b->dim[axis] : 1;
        }
        cs_shape want = {0, {1, 1, 1}, 1};
        for (unsigned j = 0, k = 0; j < a->rank + (op == CS_OP_STACK); j++) {
            unsigned d = j == axis ? total : a->dim[k];
            if (j != axis || op == CS_OP_CONCAT)
                k++;
            want.dim[want.rank++] = d;
        }
        return same_shape(&want, s) ? NULL : "wrong result shape";
    }
    case CS_OP_INDEX: {
        if (a->rank == 0 || imm.i < 0 || imm.i >= a->dim[0])
            return "index out of range (or of a scalar)";
        cs_shape want = drop_leading(a, 1);
        return at == t && same_shape(&want, s) ? NULL : "wrong result type or shape";
    }
    case CS_OP_GATHER: {
        unsigned k = n_in - 1;
        if (n_in < 2 || k > a->rank)
            return "gather needs an array and 1 to rank indices";
        for (unsigned j = 1; j < n_in; j++)
            if (!scalar_i32(g, in[j]))
                return "indices must be i32 scalars";
        cs_shape want = drop_leading(a, k);
        return at == t && same_shape(&want, s) ? NULL : "wrong result type or shape";
    }
    case CS_OP_SCATTER: {
        if (n_in < 3 || n_in - 2 > a->rank)
            return "scatter needs an array, a value and 1 to rank indices";
        for (unsigned j = 2; j < n_in; j++)
            if (!scalar_i32(g, in[j]))
                return "indices must be i32 scalars";
        cs_shape sub = drop_leading(a, n_in - 2), both;
        if (g->nodes[in[1]].type != t || at != t)
            return "the value and the array must have the node's type";
        if (!cs_shape_broadcast(shape_in(g, in[1]), &sub, &both) || !same_shape(&both, &sub))
            return "the value does not broadcast to the sub-array";
        return same_shape(a, s) ? NULL : "wrong result shape";
    }
    case CS_OP_SLICE:
        if (s->rank != a->rank || at != t)
            return "a slice keeps the rank and the type";
        for (unsigned k = 0; k < a->rank; k++)
            if ((uint64_t)CS_SLICE_START(imm.i, k) + s->dim[k] > a->dim[k])
                return "slice out of range";
        return NULL;
    case CS_OP_RESHAPE:
        return a->size == s->size && at == t ? NULL : "reshape keeps the size and the type";
    case CS_OP_BROADCAST: {
        cs_shape both;
        return at == t && cs_shape_broadcast(a, s, &both) && same_shape(&both, s) ? NULL : "does not broadcast";
    }
    case CS_OP_SHIFT: case CS_OP_ROLL:
        if (!same_shape(a, s) || at != t || CS_MOVE_AXIS(imm.i) >= a->rank)
            return "shift/roll keeps the shape, along one of its axes";
        if (op == CS_OP_SHIFT && (g->nodes[in[1]].type != t || g->nodes[in[1]].shape != CS_SCALAR))
            return "the fill must be a scalar of the array's type";
        return NULL;
    default:
        return "not a shape op";
    }
}

static const char *check_reduce(const cs_graph *g, cs_op op, cs_type t, const cs_shape *s, const cs_node *in,
                                cs_imm imm)
{
    const cs_shape *a = shape_in(g, in[0]);
    cs_type at = (cs_type)g->nodes[in[0]].type;
    if (imm.i != CS_ALL_AXES && (imm.i < 0 || imm.i >= (int64_t)a->rank))
        return "axis out of range";
    cs_shape want = imm.i == CS_ALL_AXES ? (cs_shape){0, {1, 1, 1}, 1} : drop_axis(a, (unsigned)imm.i);
    if (!same_shape(&want, s))
        return "wrong result shape";
    switch (op) {
    case CS_OP_SUM: case CS_OP_RMIN: case CS_OP_RMAX:
        return numeric(at) && t == at ? NULL : "needs numbers, and keeps their type";
    case CS_OP_ANY: case CS_OP_ALL:
        return at == CS_BOOL && t == CS_BOOL ? NULL : "needs bools";
    case CS_OP_ARGMAX: case CS_OP_ARGMIN:
        return numeric(at) && t == CS_I32 ? NULL : "needs numbers, gives an i32";
    default:   /* NONZERO */
        return t == CS_I32 ? NULL : "gives an i32";
    }
}

/* Arity, operand types and shapes, per op kind. Returns an error text or NULL. */
static const char *check(const cs_graph *g, cs_op op, cs_type t, uint32_t shape, unsigned n_in, const cs_node *in,
                         cs_imm imm)
{
    const cs_op_info *info = &cs_op_table[op];
    if (info->arity >= 0 && (unsigned)info->arity != n_in)
        return "wrong operand count";
    if (n_in > UINT16_MAX)   /* cs_node_data.n_in is 16 bits: never truncate it */
        return "too many operands";
    if (shape >= g->n_shapes)
        return "no such shape";
    for (unsigned k = 0; k < n_in; k++)
        if (!in[k] || in[k] >= g->count)
            return "operand is not a node";
    const cs_shape *s = cs_shape_of(g, shape);
    switch (info->kind) {
    case CS_KIND_LEAF:
        return check_leaf(g, op, t, s, imm);
    case CS_KIND_SHAPE:
        return check_shape_op(g, op, t, s, n_in, in, imm);
    case CS_KIND_REDUCE:
        return check_reduce(g, op, t, s, in, imm);
    case CS_KIND_MAP: {
        const char *why = check_map_shapes(g, s, n_in, in);
        return why ? why : check_map(g, op, t, n_in, in);
    }
    }
    return "unknown op kind";
}

cs_node cs_make(cs_graph *g, cs_op op, cs_type t, uint32_t shape, unsigned n_in, const cs_node *in, cs_imm imm)
{
    if ((unsigned)op >= CS_OP_COUNT || (unsigned)t >= CS_TYPE_COUNT) {
        set_error(g, "bad op or type%s%s", "", "");
        return 0;
    }
    const char *why = check(g, op, t, shape, n_in, in, imm);
    if (why) {
        set_error(g, "%s: %s", cs_op_table[op].name, why);
        return 0;
    }
    uint64_t h = node_hash(op, t, shape, n_in, in, imm);
    uint32_t i = (uint32_t)h & (g->table_cap - 1);
    for (uint32_t id; (id = g->table[i]) != 0; i = (i + 1) & (g->table_cap - 1))
        if (node_equal(g, &g->nodes[id], op, t, shape, n_in, in, imm))
            return id;

    if (g->count >= UINT32_MAX / 2 || g->n_operands + n_in >= UINT32_MAX / 2) {
        set_error(g, "graph too large%s%s", "", "");
        return 0;
    }
    if (g->count == g->cap) {
        cs_node_data *nodes = realloc(g->nodes, 2 * (size_t)g->cap * sizeof *nodes);
        if (!nodes)
            goto oom;
        g->nodes = nodes;
        g->cap *= 2;
    }
    if (g->n_operands + n_in > g->cap_operands) {
        uint32_t cap = g->cap_operands;
        while (g->n_operands + n_in > cap)
            cap *= 2;
        cs_node *ops = realloc(g->operands, (size_t)cap * sizeof *ops);
        if (!ops)
            goto oom;
        g->operands = ops;
        g->cap_operands = cap;
    }
    cs_node id = g->count++;
    cs_node_data *d = &g->nodes[id];
    d->op = (uint8_t)op;
    d->type = (uint8_t)t;
    d->n_in = (uint16_t)n_in;
    d->in = g->n_operands;
    d->shape = shape;
    d->imm = imm;
    if (n_in)
        memcpy(&g->operands[g->n_operands], in, n_in * sizeof *in);
    g->n_operands += n_in;
    g->table[i] = id;
    if (2 * g->count > g->table_cap && !grow_table(g))
        goto oom;
    return id;
oom:
    set_error(g, "out of memory%s%s", "", "");
    return 0;
}

static bool valid(const cs_graph *g, cs_node n) { return n && n < g->count; }

/* The id of shape s (already checked), or 0 with the error set. */
static uint32_t shape_id_of(cs_graph *g, const cs_shape *s) { return cs_shape_id(g, s->rank, s->dim); }

cs_node cs_const(cs_graph *g, cs_type t, double value)
{
    cs_imm imm;
    /* -0.0 and 0.0 are different constants; all NaNs are one. */
    imm.f = isnan(value) ? NAN : value;
    return cs_make(g, CS_OP_CONST, t, CS_SCALAR, 0, NULL, imm);
}

cs_node cs_leaf_shaped(cs_graph *g, cs_op op, cs_type t, uint32_t shape, int64_t index)
{
    if (op == CS_OP_CONST || op == CS_OP_TABLE || !cs_op_table[op].leaf) {
        set_error(g, "%s is not an indexed leaf%s", cs_op_table[op].name, "");
        return 0;
    }
    cs_imm imm = {.i = index};
    return cs_make(g, op, t, shape, 0, NULL, imm);
}

cs_node cs_leaf(cs_graph *g, cs_op op, cs_type t, int64_t index)
{
    return cs_leaf_shaped(g, op, t, CS_SCALAR, index);
}

cs_node cs_table(cs_graph *g, cs_type t, uint32_t shape, const double *values)
{
    if (shape >= g->n_shapes) {
        set_error(g, "table: %s%s", "no such shape", "");
        return 0;
    }
    int64_t at = cs_graph_add_table(g, values, cs_shape_of(g, shape)->size);
    if (at < 0)
        return 0;
    cs_imm imm = {.i = at};
    return cs_make(g, CS_OP_TABLE, t, shape, 0, NULL, imm);
}

static cs_type result_type(const cs_graph *g, cs_op op, cs_node a)
{
    switch (op) {
    case CS_OP_LT: case CS_OP_LE: case CS_OP_GT: case CS_OP_GE: case CS_OP_EQ: case CS_OP_NE:
    case CS_OP_AND: case CS_OP_OR: case CS_OP_NOT:
        return CS_BOOL;
    case CS_OP_BOUNDED:
        return CS_I32;
    default:
        return valid(g, a) ? (cs_type)g->nodes[a].type : CS_F64;
    }
}

/* The broadcast shape of an elementwise op's operands. */
static cs_node map_op(cs_graph *g, cs_op op, cs_type t, unsigned n_in, const cs_node *in)
{
    cs_shape all = {0, {1, 1, 1}, 1};
    for (unsigned k = 0; k < n_in; k++) {
        if (!valid(g, in[k])) {
            set_error(g, "%s: operand is not a node%s", cs_op_table[op].name, "");
            return 0;
        }
        if (!cs_shape_broadcast(&all, shape_in(g, in[k]), &all)) {
            set_error(g, "%s: operand shapes do not broadcast%s", cs_op_table[op].name, "");
            return 0;
        }
    }
    uint32_t shape = shape_id_of(g, &all);
    if (all.rank && !shape)
        return 0;
    cs_imm imm = {.i = 0};
    return cs_make(g, op, t, shape, n_in, in, imm);
}

cs_node cs_unary(cs_graph *g, cs_op op, cs_node a)
{
    return map_op(g, op, result_type(g, op, a), 1, &a);
}

cs_node cs_binary(cs_graph *g, cs_op op, cs_node a, cs_node b)
{
    cs_node in[2] = {a, b};
    return map_op(g, op, result_type(g, op, a), 2, in);
}

cs_node cs_ternary(cs_graph *g, cs_op op, cs_node a, cs_node b, cs_node c)
{
    cs_node in[3] = {a, b, c};
    return map_op(g, op, result_type(g, op, op == CS_OP_SELECT ? b : a), 3, in);
}

cs_node cs_cast(cs_graph *g, cs_type t, cs_node a)
{
    if (valid(g, a) && g->nodes[a].type == t)
        return a;
    return map_op(g, CS_OP_CAST, t, 1, &a);
}

cs_node cs_stack_axis(cs_graph *g, unsigned n, const cs_node *items, unsigned axis)
{
    if (!n || !valid(g, items[0])) {
        set_error(g, "stack: %s%s", "no items", "");
        return 0;
    }
    const cs_shape *a = shape_in(g, items[0]);
    if (axis > a->rank || n > 65535) {
        set_error(g, "stack: %s%s", "axis out of range or too many items", "");
        return 0;
    }
    unsigned dims[CS_RANK_MAX + 1];
    for (unsigned j = 0, k = 0; j <= a->rank; j++)
        dims[j] = j == axis ? n : a->dim[k++];
    if (a->rank + 1 > CS_RANK_MAX) {
        set_error(g, "stack: %s%s", "an array has at most 3 axes", "");
        return 0;
    }
    uint32_t shape = cs_shape_id(g, a->rank + 1, dims);
    if (!shape)
        return 0;
    cs_imm imm = {.i = axis};
    return cs_make(g, CS_OP_STACK, (cs_type)g->nodes[items[0]].type, shape, n, items, imm);
}

cs_node cs_stack(cs_graph *g, unsigned n, const cs_node *items) { return cs_stack_axis(g, n, items, 0); }

cs_node cs_index(cs_graph *g, cs_node array, unsigned k)
{
    if (!valid(g, array) || shape_in(g, array)->rank == 0 || k >= shape_in(g, array)->dim[0]) {
        set_error(g, "index: %s%s", "not an array or out of range", "");
        return 0;
    }
    cs_shape r = drop_leading(shape_in(g, array), 1);
    uint32_t shape = shape_id_of(g, &r);
    cs_imm imm = {.i = k};
    return cs_make(g, CS_OP_INDEX, (cs_type)g->nodes[array].type, shape, 1, &array, imm);
}

/* Operands (first, rest...) in one array for cs_make. */
static cs_node make_with(cs_graph *g, cs_op op, cs_type t, uint32_t shape, unsigned n_first, const cs_node *first,
                         unsigned n_rest, const cs_node *rest, int64_t imm_i)
{
    cs_node in[2 + CS_RANK_MAX];
    if (n_first + n_rest > sizeof in / sizeof in[0]) {
        set_error(g, "%s: too many indices%s", cs_op_table[op].name, "");
        return 0;
    }
    memcpy(in, first, n_first * sizeof *in);
    if (n_rest)
        memcpy(in + n_first, rest, n_rest * sizeof *in);
    cs_imm imm = {.i = imm_i};
    return cs_make(g, op, t, shape, n_first + n_rest, in, imm);
}

cs_node cs_gather(cs_graph *g, cs_node a, unsigned n, const cs_node *idx)
{
    if (!valid(g, a) || n == 0 || n > shape_in(g, a)->rank) {
        set_error(g, "gather: %s%s", "not an array, or too many indices", "");
        return 0;
    }
    cs_shape r = drop_leading(shape_in(g, a), n);
    uint32_t shape = shape_id_of(g, &r);
    return make_with(g, CS_OP_GATHER, (cs_type)g->nodes[a].type, shape, 1, &a, n, idx, 0);
}

cs_node cs_scatter(cs_graph *g, cs_node a, cs_node v, unsigned n, const cs_node *idx)
{
    if (!valid(g, a)) {
        set_error(g, "scatter: %s%s", "not an array", "");
        return 0;
    }
    cs_node first[2] = {a, v};
    return make_with(g, CS_OP_SCATTER, (cs_type)g->nodes[a].type, g->nodes[a].shape, 2, first, n, idx, 0);
}

cs_node cs_slice(cs_graph *g, cs_node a, const unsigned *start, const unsigned *extent)
{
    if (!valid(g, a) || shape_in(g, a)->rank == 0) {
        set_error(g, "slice: %s%s", "not an array", "");
        return 0;
    }
    const cs_shape *s = shape_in(g, a);
    unsigned st[CS_RANK_MAX] = {0, 0, 0};
    for (unsigned k = 0; k < s->rank; k++)
        if ((st[k] = start[k]) > 65535) {
            set_error(g, "slice: %s%s", "out of range", "");
            return 0;
        }
    uint32_t shape = cs_shape_id(g, s->rank, extent);
    if (!shape)
        return 0;
    cs_imm imm = {.i = CS_SLICE_IMM(st[0], st[1], st[2])};
    return cs_make(g, CS_OP_SLICE, (cs_type)g->nodes[a].type, shape, 1, &a, imm);
}

static cs_node one_operand(cs_graph *g, cs_op op, cs_node a, uint32_t shape, int64_t imm_i)
{
    if (!valid(g, a)) {
        set_error(g, "%s: operand is not a node%s", cs_op_table[op].name, "");
        return 0;
    }
    cs_imm imm = {.i = imm_i};
    return cs_make(g, op, (cs_type)g->nodes[a].type, shape, 1, &a, imm);
}

cs_node cs_reshape(cs_graph *g, cs_node a, uint32_t shape) { return one_operand(g, CS_OP_RESHAPE, a, shape, 0); }
cs_node cs_broadcast(cs_graph *g, cs_node a, uint32_t shape) { return one_operand(g, CS_OP_BROADCAST, a, shape, 0); }

cs_node cs_roll(cs_graph *g, cs_node a, unsigned axis, int amount)
{
    return one_operand(g, CS_OP_ROLL, a, valid(g, a) ? g->nodes[a].shape : 0, CS_MOVE_IMM(axis, amount));
}

cs_node cs_shift(cs_graph *g, cs_node a, cs_node fill, unsigned axis, int amount)
{
    if (!valid(g, a)) {
        set_error(g, "shift: %s%s", "operand is not a node", "");
        return 0;
    }
    cs_node in[2] = {a, fill};
    cs_imm imm = {.i = CS_MOVE_IMM(axis, amount)};
    return cs_make(g, CS_OP_SHIFT, (cs_type)g->nodes[a].type, g->nodes[a].shape, 2, in, imm);
}

cs_node cs_concat(cs_graph *g, unsigned n, const cs_node *items, unsigned axis)
{
    if (!n || !valid(g, items[0]) || axis >= shape_in(g, items[0])->rank) {
        set_error(g, "concat: %s%s", "no items, or axis out of range", "");
        return 0;
    }
    cs_shape r = *shape_in(g, items[0]);
    unsigned total = 0;
    for (unsigned k = 0; k < n; k++) {
        if (!valid(g, items[k])) {
            set_error(g, "concat: %s%s", "operand is not a node", "");
            return 0;
        }
        const cs_shape *b = shape_in(g, items[k]);
        total += axis < b->rank ? b->dim[axis] : 0;
    }
    r.dim[axis] = total;
    uint32_t shape = cs_shape_id(g, r.rank, r.dim);
    if (!shape)
        return 0;
    cs_imm imm = {.i = axis};
    return cs_make(g, CS_OP_CONCAT, (cs_type)g->nodes[items[0]].type, shape, n, items, imm);
}

cs_node cs_reduce(cs_graph *g, cs_op op, cs_node a, int axis)
{
    if (!valid(g, a) || cs_op_table[op].kind != CS_KIND_REDUCE) {
        set_error(g, "reduce: %s%s", "not a reduction of a node", "");
        return 0;
    }
    const cs_shape *s = shape_in(g, a);
    if (axis != CS_ALL_AXES && (axis < 0 || (unsigned)axis >= s->rank)) {
        set_error(g, "%s: axis out of range%s", cs_op_table[op].name, "");
        return 0;
    }
    cs_shape r = axis == CS_ALL_AXES ? (cs_shape){0, {1, 1, 1}, 1} : drop_axis(s, (unsigned)axis);
    uint32_t shape = shape_id_of(g, &r);
    cs_type at = (cs_type)g->nodes[a].type;
    cs_type t = op == CS_OP_ARGMAX || op == CS_OP_ARGMIN || op == CS_OP_NONZERO ? CS_I32 : at;
    cs_imm imm = {.i = axis};
    return cs_make(g, op, t, shape, 1, &a, imm);
}

int cs_substitute(cs_graph *g, cs_node *roots, unsigned n_roots, cs_leaf_map map, void *ctx)
{
    cs_node last = 0;
    for (unsigned r = 0; r < n_roots; r++)
        if (roots[r] >= g->count)
            return -1;
        else if (roots[r] > last)
            last = roots[r];
    cs_node *memo = calloc((size_t)last + 1, sizeof *memo);
    if (!memo)
        return -1;
    /* Ids are a topological order: one pass, no recursion, whatever the depth. */
    for (cs_node n = 1; n <= last; n++) {
        cs_node_data d = g->nodes[n];   /* copy: the table may move */
        if (d.n_in == 0) {
            cs_node m = map(ctx, &d);
            memo[n] = m ? m : n;
            continue;
        }
        cs_node small[8], *in = d.n_in <= 8 ? small : malloc(d.n_in * sizeof *in);
        if (!in)
            goto fail;
        bool same = true;
        for (unsigned k = 0; k < d.n_in; k++) {
            in[k] = memo[g->operands[d.in + k]];
            same &= in[k] == g->operands[d.in + k];
        }
        memo[n] = same ? n : cs_make(g, (cs_op)d.op, (cs_type)d.type, d.shape, d.n_in, in, d.imm);
        if (in != small)
            free(in);
        if (!memo[n])
            goto fail;
    }
    for (unsigned r = 0; r < n_roots; r++)
        roots[r] = roots[r] ? memo[roots[r]] : 0;
    free(memo);
    return 0;
fail:
    free(memo);
    return -1;
}
