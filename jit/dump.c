/* Dumps: how a user sees the compiler (`cartsim dump --after PASS`).
 *
 * The formats are stable and line-oriented, for grep and for the tests:
 *
 *   program cartpole "CartPole-v1": real f64, 42 live nodes of 57
 *   n1 = carried x : f64
 *   n2 = const 0.02 : f64
 *   n7 = uniform step 0 : f64
 *   n9 = stack n1 n3 n5 n6 : f64[4]
 *   n10 = index n9 2 : f64
 *   n12 = mul n2 n10 : f64
 *   roots:
 *     x' = n12
 *     reset x = n31
 *     rollout x' = n40
 *
 * Only live nodes (reachable from a root) are listed, in id order, which is
 * a topological order. A partition lists each kernel's nodes, the reason a
 * kernel could not fuse with the one before, the values that go through
 * memory between kernels, and "kernels per step: N".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"

/* What the roots reach; operands have smaller ids, so one downward sweep
 * marks it all without recursion. NULL when memory ran out. */
static bool *live_nodes(const cs_program *p, uint32_t *n_live)
{
    const cs_graph *g = p->graph;
    uint32_t count = cs_graph_count(g);
    bool *live = calloc(count, sizeof *live);
    if (!live)
        return NULL;
    cs_program_mark_live(p, live);
    *n_live = 0;
    for (cs_node n = 1; n < count; n++)
        *n_live += live[n];
    return live;
}

static const char *slot_name(const cs_slot *slots, unsigned n, int64_t k)
{
    return k >= 0 && k < (int64_t)n ? slots[k].name : "?";
}

static void const_text(cs_text *t, const cs_node_data *d)
{
    double v = d->imm.f;
    if (d->type == CS_BOOL)
        cs_text_printf(t, "%s", v != 0 ? "true" : "false");
    else if (!cs_type_is_real((cs_type)d->type) && v > -9e15 && v < 9e15)
        cs_text_printf(t, "%" PRId64, (int64_t)v);
    else
        cs_text_real(t, v);
}

/* What follows the op's name (and operands): " x" for a carried value,
 * " 0.02" for a constant, " step 0" for a draw, " 2" for an index. */
static void op_detail(cs_text *t, const cs_program *p, const cs_node_data *d)
{
    int64_t k = d->imm.i;
    switch ((cs_op)d->op) {
    case CS_OP_CONST:
        cs_text_printf(t, " ");
        const_text(t, d);
        break;
    case CS_OP_CARRIED: {
        const char *name = slot_name(p->carried, p->n_carried, k);
        for (unsigned v = 0; v < p->n_vars; v++)
            if (p->vars[v].slot == (unsigned)k && p->vars[v].shape == d->shape)
                name = p->vars[v].name;
        cs_text_printf(t, " %s", name);
        break;
    }
    case CS_OP_INPUT: cs_text_printf(t, " %s", slot_name(p->inputs, p->n_inputs, k)); break;
    case CS_OP_PARAM: {   /* an array: its first and last slots */
        unsigned size = cs_shape_of(p->graph, d->shape)->size;
        cs_text_printf(t, " %s", slot_name(p->params, p->n_params, k));
        if (size > 1)
            cs_text_printf(t, "..%s", slot_name(p->params, p->n_params, k + size - 1));
        cs_text_printf(t, "%s", k >= 0 && (uint64_t)k < p->n_params && p->param_shared[k] ? " (shared)" : "");
        break;
    }
    case CS_OP_UNIFORM: case CS_OP_RANDBITS:
        cs_text_printf(t, " %s %u", CS_UNIFORM_STREAM(k) == CS_STREAM_RESTART ? "restart" : "step",
                       CS_UNIFORM_DRAW(k));
        break;
    case CS_OP_INDEX: cs_text_printf(t, " %" PRId64, k); break;
    case CS_OP_TABLE: cs_text_printf(t, " @%" PRId64, k); break;
    case CS_OP_IOTA: cs_text_printf(t, " axis %" PRId64, k); break;
    case CS_OP_STACK: case CS_OP_CONCAT:
        if (k)
            cs_text_printf(t, " axis %" PRId64, k);
        break;
    case CS_OP_SLICE:
        cs_text_printf(t, " from %u,%u,%u", CS_SLICE_START(k, 0), CS_SLICE_START(k, 1), CS_SLICE_START(k, 2));
        break;
    case CS_OP_SHIFT: case CS_OP_ROLL:
        cs_text_printf(t, " axis %u by %d", CS_MOVE_AXIS(k), (int)CS_MOVE_AMOUNT(k));
        break;
    default:
        if (cs_op_table[d->op].kind == CS_KIND_REDUCE && k != CS_ALL_AXES)
            cs_text_printf(t, " axis %" PRId64, k);
        break;
    }
}

/* "f64", or "bool[10,10]" for an array. */
static void type_text(cs_text *t, const cs_graph *g, const cs_node_data *d)
{
    cs_text_printf(t, "%s", cs_type_name((cs_type)d->type));
    const cs_shape *s = cs_shape_of(g, d->shape);
    for (unsigned k = 0; k < s->rank; k++)
        cs_text_printf(t, "%s%u%s", k ? "," : "[", s->dim[k], k + 1 == s->rank ? "]" : "");
}

/* The program's roots with the names the dumps print. */
typedef struct {
    char name[CS_NAME_MAX + 32];
    cs_node node;
} named_root;

static named_root *named_roots(const cs_program *p, unsigned *n_out)
{
    size_t max = 3 * (size_t)p->n_vars + 3 * (size_t)p->n_obs_items + p->n_inputs + p->n_params + p->n_draw + 6 + 4;
    unsigned n = 0;
    named_root *r = calloc(max, sizeof *r);
    if (!r)
        return NULL;
#define ROOT(node_, ...)                                                      \
    do {                                                                      \
        if (node_) {                                                          \
            snprintf(r[n].name, sizeof r[n].name, __VA_ARGS__);               \
            r[n++].node = (node_);                                            \
        }                                                                     \
    } while (0)
    for (unsigned k = 0; k < p->n_vars; k++)
        ROOT(p->next[k], "%s'", p->vars[k].name);
    for (unsigned k = 0; k < p->n_vars; k++)
        ROOT(p->restart[k], "reset %s", p->vars[k].name);
    for (unsigned k = 0; k < p->n_obs_items; k++)
        ROOT(p->obs_items[k].node, "obs[%u]", k);
    for (unsigned k = 0; k < p->n_obs_items; k++)
        ROOT(p->obs_items[k].next, "obs_next[%u]", k);
    for (unsigned k = 0; k < p->n_obs_items; k++)
        ROOT(p->obs_items[k].restart, "obs_restart[%u]", k);
    ROOT(p->reward, "reward");
    ROOT(p->terminated, "terminated");
    ROOT(p->truncated, "truncated");
    for (unsigned k = 0; k < p->n_inputs; k++)
        ROOT(p->policy[k], "policy[%u]", k);
    for (unsigned k = 0; k < p->n_params; k++)
        ROOT(p->param_restart[k], "param %s (restart)", p->params[k].name);
    /* the step with the policy spliced in (cs_program_bind_policy) */
    for (unsigned k = 0; k < p->n_vars && p->roll_next; k++)
        ROOT(p->roll_next[k], "rollout %s'", p->vars[k].name);
    ROOT(p->roll_reward, "rollout reward");
    ROOT(p->roll_terminated, "rollout terminated");
    ROOT(p->roll_truncated, "rollout truncated");
    /* strict mode's index check (cs_program_add_index_faults) */
    ROOT(p->index_fault[0], "index fault site");
    ROOT(p->index_fault[1], "index fault value");
    ROOT(p->roll_index_fault[0], "rollout index fault site");
    ROOT(p->roll_index_fault[1], "rollout index fault value");
    /* the picture (the draw block), evaluated by render/ */
    for (unsigned k = 0; k < p->n_draw; k++)
        ROOT(p->draw[k], "draw[%u]", k);
#undef ROOT
    *n_out = n;
    return r;
}

/* A dot string literal's body: quotes and backslashes escaped. */
static void dot_escaped(cs_text *t, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\')
            cs_text_append(t, "\\", 1);
        cs_text_append(t, &s[i], 1);
    }
}

static const char *dot_shape(cs_op op)
{
    switch (op) {
    case CS_OP_UNIFORM: return "diamond";
    case CS_OP_STACK: return "box3d";
    default: return cs_op_table[op].leaf ? "box" : "ellipse";
    }
}

int cs_dump_graph(const cs_program *p, bool dot, cs_text *out)
{
    const cs_graph *g = p->graph;
    uint32_t count = cs_graph_count(g), n_live = 0;
    unsigned n_roots = 0;
    bool *live = live_nodes(p, &n_live);
    named_root *roots = live ? named_roots(p, &n_roots) : NULL;
    cs_text detail = {0};   /* a label's tail, escaped for dot */
    if (!roots) {
        free(live);
        return -1;
    }
    if (dot) {
        cs_text_printf(out, "// program %s \"%s\": real %s, %u live nodes of %u\ndigraph \"", p->name,
                       p->title, cs_type_name(p->real), (unsigned)n_live, (unsigned)count - 1);
        dot_escaped(out, p->name, strlen(p->name));
        cs_text_printf(out, "\" {\n  node [fontname=\"monospace\"];\n");
    } else {
        cs_text_printf(out, "program %s \"%s\": real %s, %u live nodes of %u\n", p->name, p->title,
                       cs_type_name(p->real), (unsigned)n_live, (unsigned)count - 1);
    }
    for (cs_node n = 1; n < count; n++) {
        if (!live[n])
            continue;
        const cs_node_data *d = cs_graph_node(g, n);
        if (dot) {
            cs_text_printf(out, "  n%u [label=\"n%u %s", (unsigned)n, (unsigned)n, cs_op_table[d->op].name);
            detail.len = 0;
            op_detail(&detail, p, d);
            if (detail.len)
                dot_escaped(out, detail.data, detail.len);
            cs_text_printf(out, " : ");
            type_text(out, p->graph, d);
            cs_text_printf(out, "\", shape=%s];\n", dot_shape((cs_op)d->op));
            for (unsigned k = 0; k < d->n_in; k++)
                cs_text_printf(out, "  n%u -> n%u;\n", (unsigned)cs_graph_input(g, n, k), (unsigned)n);
        } else {
            cs_text_printf(out, "n%u = %s", (unsigned)n, cs_op_table[d->op].name);
            for (unsigned k = 0; k < d->n_in; k++)
                cs_text_printf(out, " n%u", (unsigned)cs_graph_input(g, n, k));
            op_detail(out, p, d);
            cs_text_printf(out, " : ");
            type_text(out, p->graph, d);
            cs_text_printf(out, "\n");
        }
    }
    if (dot) {
        for (unsigned r = 0; r < n_roots; r++) {
            cs_text_printf(out, "  root%u [label=\"", r);
            dot_escaped(out, roots[r].name, strlen(roots[r].name));
            cs_text_printf(out, "\", shape=doubleoctagon];\n  n%u -> root%u;\n", (unsigned)roots[r].node, r);
        }
        cs_text_printf(out, "}\n");
    } else {
        cs_text_printf(out, "roots:\n");
        for (unsigned r = 0; r < n_roots; r++)
            cs_text_printf(out, "  %s = n%u\n", roots[r].name, (unsigned)roots[r].node);
    }
    bool failed = detail.failed || out->failed;
    cs_text_free(&detail);
    free(roots);
    free(live);
    return failed ? -1 : 0;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Values computed in one kernel and read in another, as (value << 32 | reading
 * kernel), sorted and unique. */
static uint64_t *crossings(const cs_graph *g, const cs_partition *part, size_t *n_out)
{
    uint32_t count = cs_graph_count(g);
    size_t n = 0, cap = 0;
    for (cs_node u = 1; u < count; u++)
        if (part->kernel[u] != CS_NO_KERNEL)
            cap += cs_graph_node(g, u)->n_in;
    uint64_t *pairs = malloc((cap ? cap : 1) * sizeof *pairs);
    if (!pairs)
        return NULL;
    for (cs_node u = 1; u < count; u++) {
        if (part->kernel[u] == CS_NO_KERNEL)
            continue;
        for (unsigned k = 0; k < cs_graph_node(g, u)->n_in; k++) {
            cs_node v = cs_graph_input(g, u, k);
            if (part->kernel[v] != CS_NO_KERNEL && part->kernel[v] != part->kernel[u])
                pairs[n++] = (uint64_t)v << 32 | part->kernel[u];
        }
    }
    qsort(pairs, n, sizeof *pairs, compare_u64);
    size_t unique = 0;
    for (size_t i = 0; i < n; i++)
        if (!unique || pairs[i] != pairs[unique - 1])
            pairs[unique++] = pairs[i];
    *n_out = unique;
    return pairs;
}

int cs_dump_partition(const cs_program *p, const cs_partition *part, cs_text *out)
{
    const cs_graph *g = p->graph;
    uint32_t count = cs_graph_count(g), nk = part->n_kernels;
    /* Counting sort of the computed nodes by kernel, id order kept. */
    uint32_t *start = calloc((size_t)nk + 1, sizeof *start);
    cs_node *order = malloc(count * sizeof *order);
    size_t n_pairs = 0;
    uint64_t *pairs = start && order ? crossings(g, part, &n_pairs) : NULL;
    if (!pairs) {
        free(start);
        free(order);
        return -1;
    }
    for (cs_node n = 1; n < count; n++)
        if (part->kernel[n] < nk)
            start[part->kernel[n] + 1]++;
    for (uint32_t k = 0; k < nk; k++)
        start[k + 1] += start[k];
    for (cs_node n = 1; n < count; n++)
        if (part->kernel[n] < nk)
            order[start[part->kernel[n]]++] = n;
    for (uint32_t k = nk; k > 0; k--)   /* start[k] ran to the end of kernel k */
        start[k] = start[k - 1];
    start[0] = 0;

    cs_text_printf(out, "program %s: partition %s, %u kernels\n", p->name, cs_fusion_name(part->fusion), nk);
    for (uint32_t k = 0; k < nk; k++) {
        cs_text_printf(out, "kernel %u: %u ops:", k, start[k + 1] - start[k]);
        for (uint32_t i = start[k]; i < start[k + 1]; i++)
            cs_text_printf(out, " n%u", (unsigned)order[i]);
        cs_text_printf(out, "\n");
        if (k > 0 && part->reason[k][0])
            cs_text_printf(out, "  reason: %s\n", part->reason[k]);
    }
    size_t values = 0;
    for (size_t i = 0; i < n_pairs; i++) {
        cs_node v = (cs_node)(pairs[i] >> 32);
        if (i == 0 || (cs_node)(pairs[i - 1] >> 32) != v) {
            const cs_node_data *d = cs_graph_node(g, v);
            cs_text_printf(out, "materialized n%u (%s : ", (unsigned)v, cs_op_table[d->op].name);
            type_text(out, p->graph, d);
            cs_text_printf(out, "): kernel %u ->", part->kernel[v]);
            values++;
        }
        cs_text_printf(out, " %u", (unsigned)(pairs[i] & 0xffffffffu));
        if (i + 1 == n_pairs || (cs_node)(pairs[i + 1] >> 32) != v)
            cs_text_printf(out, "\n");
    }
    cs_text_printf(out, "materialized values: %zu\n", values);
    cs_text_printf(out, "kernels per step: %u\n", nk);
    free(pairs);
    free(start);
    free(order);
    return out->failed ? -1 : 0;
}
