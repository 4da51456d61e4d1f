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
    g->count = 1;   /* id 0 is "no node" */
    return g;
}

void cs_graph_free(cs_graph *g)
{
    if (!g)
        return;
    free(g->nodes);
    free(g->operands);
    free(g->table);
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

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t node_hash(cs_op op, cs_type t, unsigned n_in, const cs_node *in, cs_imm imm)
{
    uint64_t h = mix((uint64_t)op << 8 | t, (uint64_t)imm.i);
    for (unsigned k = 0; k < n_in; k++)
        h = mix(h, in[k]);
    return h ^ (h >> 29);
}

static bool node_equal(const cs_graph *g, const cs_node_data *d, cs_op op, cs_type t, unsigned n_in,
                       const cs_node *in, cs_imm imm)
{
    if (d->op != op || d->type != t || d->n_in != n_in || d->imm.i != imm.i)
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
        uint64_t h = node_hash((cs_op)d->op, (cs_type)d->type, d->n_in, &g->operands[d->in], d->imm);
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

/* Arity and operand types, per op class. Returns an error text or NULL. */
static const char *check(const cs_graph *g, cs_op op, cs_type t, unsigned n_in, const cs_node *in)
{
    const cs_op_info *info = &cs_op_table[op];
    if (info->arity >= 0 && (unsigned)info->arity != n_in)
        return "wrong operand count";
    if (n_in > UINT16_MAX)   /* cs_node_data.n_in is 16 bits: never truncate it */
        return "too many operands";
    for (unsigned k = 0; k < n_in; k++)
        if (!in[k] || in[k] >= g->count)
            return "operand is not a node";
    if (op == CS_OP_STACK) {
        if (n_in == 0)
            return "empty stack";
        for (unsigned k = 0; k < n_in; k++)
            if (g->nodes[in[k]].op == CS_OP_STACK || g->nodes[in[k]].type != t)
                return "stack operands must be scalars of one type";
        return NULL;
    }
    if (op == CS_OP_INDEX)
        return g->nodes[in[0]].op == CS_OP_STACK ? NULL : "index of a value that is not a stack";
    for (unsigned k = 0; k < n_in; k++)
        if (g->nodes[in[k]].op == CS_OP_STACK)
            return "a stacked vector used as a scalar";
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
    case CS_OP_NEG: case CS_OP_ABS: case CS_OP_ADD: case CS_OP_SUB: case CS_OP_MUL: case CS_OP_DIV:
    case CS_OP_MIN: case CS_OP_MAX: case CS_OP_CLIP:
        for (unsigned k = 0; k < n_in; k++)
            if (g->nodes[in[k]].type != t || t == CS_BOOL)
                return "arithmetic on mismatched or bool operands";
        return NULL;
    default:   /* the libm set: reals only */
        for (unsigned k = 0; k < n_in; k++)
            if (g->nodes[in[k]].type != t || !cs_type_is_real(t))
                return "math function needs reals of one type";
        return NULL;
    }
}

cs_node cs_make(cs_graph *g, cs_op op, cs_type t, unsigned n_in, const cs_node *in, cs_imm imm)
{
    if ((unsigned)op >= CS_OP_COUNT || (unsigned)t >= CS_TYPE_COUNT) {
        set_error(g, "bad op or type%s%s", "", "");
        return 0;
    }
    const char *why = check(g, op, t, n_in, in);
    if (why) {
        set_error(g, "%s: %s", cs_op_table[op].name, why);
        return 0;
    }
    uint64_t h = node_hash(op, t, n_in, in, imm);
    uint32_t i = (uint32_t)h & (g->table_cap - 1);
    for (uint32_t id; (id = g->table[i]) != 0; i = (i + 1) & (g->table_cap - 1))
        if (node_equal(g, &g->nodes[id], op, t, n_in, in, imm))
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

cs_node cs_const(cs_graph *g, cs_type t, double value)
{
    cs_imm imm;
    /* -0.0 and 0.0 are different constants; all NaNs are one. */
    imm.f = isnan(value) ? NAN : value;
    return cs_make(g, CS_OP_CONST, t, 0, NULL, imm);
}

cs_node cs_leaf(cs_graph *g, cs_op op, cs_type t, int64_t index)
{
    if (op == CS_OP_CONST || !cs_op_table[op].leaf) {
        set_error(g, "%s is not an indexed leaf%s", cs_op_table[op].name, "");
        return 0;
    }
    cs_imm imm = {.i = index};
    return cs_make(g, op, t, 0, NULL, imm);
}

static cs_type result_type(const cs_graph *g, cs_op op, cs_node a)
{
    switch (op) {
    case CS_OP_LT: case CS_OP_LE: case CS_OP_GT: case CS_OP_GE: case CS_OP_EQ: case CS_OP_NE:
    case CS_OP_AND: case CS_OP_OR: case CS_OP_NOT:
        return CS_BOOL;
    default:
        return a && a < g->count ? (cs_type)g->nodes[a].type : CS_F64;
    }
}

cs_node cs_unary(cs_graph *g, cs_op op, cs_node a)
{
    cs_imm imm = {.i = 0};
    return cs_make(g, op, result_type(g, op, a), 1, &a, imm);
}

cs_node cs_binary(cs_graph *g, cs_op op, cs_node a, cs_node b)
{
    cs_node in[2] = {a, b};
    cs_imm imm = {.i = 0};
    return cs_make(g, op, result_type(g, op, a), 2, in, imm);
}

cs_node cs_ternary(cs_graph *g, cs_op op, cs_node a, cs_node b, cs_node c)
{
    cs_node in[3] = {a, b, c};
    cs_imm imm = {.i = 0};
    return cs_make(g, op, result_type(g, op, op == CS_OP_SELECT ? b : a), 3, in, imm);
}

cs_node cs_cast(cs_graph *g, cs_type t, cs_node a)
{
    if (a && a < g->count && g->nodes[a].type == t)
        return a;
    cs_imm imm = {.i = 0};
    return cs_make(g, CS_OP_CAST, t, 1, &a, imm);
}

cs_node cs_stack(cs_graph *g, unsigned n, const cs_node *items)
{
    cs_imm imm = {.i = 0};
    cs_type t = n && items[0] && items[0] < g->count ? (cs_type)g->nodes[items[0]].type : CS_F64;
    return cs_make(g, CS_OP_STACK, t, n, items, imm);
}

cs_node cs_index(cs_graph *g, cs_node vector, unsigned k)
{
    if (!vector || vector >= g->count || g->nodes[vector].op != CS_OP_STACK || k >= g->nodes[vector].n_in) {
        set_error(g, "index: %s%s", "not a stack or out of range", "");
        return 0;
    }
    cs_imm imm = {.i = k};
    return cs_make(g, CS_OP_INDEX, (cs_type)g->nodes[vector].type, 1, &vector, imm);
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
        memo[n] = same ? n : cs_make(g, (cs_op)d.op, (cs_type)d.type, d.n_in, in, d.imm);
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
