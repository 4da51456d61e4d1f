/* Fusion modes: which nodes of an entry share a kernel.
 *
 *   full   the whole entry in one kernel (cartsim's own choice)
 *   rules  XLA-like conservative fusion, the seed paper's baseline: the RNG is
 *          an opaque custom call and a concatenate with several users is
 *          materialized, so their readers start a later kernel
 *   none   one kernel per op, intermediates in memory (PyTorch eager)
 *
 * Leaves loaded in place (constants, carried values, inputs, parameters, the
 * step counter) belong to no kernel: every kernel that reads one loads it.
 * A UNIFORM is computed: it is the random number generator.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"

static bool loaded_in_place(cs_op op)
{
    return op == CS_OP_CONST || op == CS_OP_CARRIED || op == CS_OP_INPUT || op == CS_OP_PARAM ||
           op == CS_OP_SEGSTEP;
}

/* Under rules, a value its readers must load from memory. */
static bool is_boundary(const cs_graph *g, const uint32_t *users, cs_node n)
{
    const cs_node_data *d = cs_graph_node(g, n);
    return d->op == CS_OP_UNIFORM || (d->op == CS_OP_STACK && users[n] > 1);
}

static void explain_boundary(const cs_graph *g, const uint32_t *users, cs_node o, char *why, size_t size)
{
    const cs_node_data *d = cs_graph_node(g, o);
    if (d->op == CS_OP_UNIFORM)
        snprintf(why, size, "reads uniform %sdraw %u (n%u) from memory: rules keep the RNG an opaque kernel",
                 CS_UNIFORM_STREAM(d->imm.i) == CS_STREAM_RESTART ? "restart " : "",
                 CS_UNIFORM_DRAW(d->imm.i), (unsigned)o);
    else
        snprintf(why, size,
                 "reads stack n%u (%u users) from memory: rules do not fuse a concatenate with several users",
                 (unsigned)o, (unsigned)users[o]);
}

/* Kernel level of each computed node: one past a boundary operand's, else
 * the highest of its operands'. cause[level] is the boundary operand that
 * first opened that level. Returns the highest level. */
static uint32_t rules_levels(const cs_graph *g, const uint32_t *users, uint32_t *kernel, cs_node *cause)
{
    uint32_t count = cs_graph_count(g), top = 0;
    for (cs_node n = 1; n < count; n++) {
        if (kernel[n] == CS_NO_KERNEL)
            continue;
        const cs_node_data *d = cs_graph_node(g, n);
        uint32_t level = 0;
        cs_node opener = 0;
        for (unsigned k = 0; k < d->n_in; k++) {
            cs_node o = cs_graph_input(g, n, k);
            if (kernel[o] == CS_NO_KERNEL)
                continue;
            bool boundary = is_boundary(g, users, o);
            uint32_t l = kernel[o] + (boundary ? 1 : 0);
            if (l > level || (l == level && !opener && boundary)) {
                level = l;
                opener = boundary ? o : 0;
            }
        }
        kernel[n] = level;
        if (level > top)
            top = level;
        if (level && !cause[level])
            cause[level] = opener;
    }
    return top;
}

/* Renumbers the rules levels in use densely, 0.. in order, and names the
 * boundary that opened each kernel. */
static int rules_kernels(const cs_graph *g, const uint32_t *users, cs_partition *out, uint32_t computed)
{
    uint32_t count = cs_graph_count(g);
    cs_node *cause = calloc((size_t)computed + 1, sizeof *cause);   /* a level needs a computed node */
    uint32_t *dense = NULL;
    int result = -1;
    if (!cause)
        goto done;
    uint32_t top = rules_levels(g, users, out->kernel, cause);
    dense = malloc(((size_t)top + 1) * sizeof *dense);
    if (!dense)
        goto done;
    for (uint32_t l = 0; l <= top; l++)
        dense[l] = l == 0 ? 0 : CS_NO_KERNEL;
    for (cs_node n = 1; n < count; n++)
        if (out->kernel[n] != CS_NO_KERNEL)
            dense[out->kernel[n]] = 0;
    for (uint32_t l = 0; l <= top; l++)
        if (dense[l] != CS_NO_KERNEL)
            dense[l] = out->n_kernels++;
    for (cs_node n = 1; n < count; n++)
        if (out->kernel[n] != CS_NO_KERNEL)
            out->kernel[n] = dense[out->kernel[n]];
    out->reason = calloc(out->n_kernels, sizeof *out->reason);
    if (!out->reason)
        goto done;
    for (uint32_t l = 1; l <= top; l++)
        if (cause[l] && dense[l] != CS_NO_KERNEL)
            explain_boundary(g, users, cause[l], out->reason[dense[l]], sizeof out->reason[0]);
    result = 0;
done:
    free(dense);
    free(cause);
    return result;
}

int cs_partition_build(const cs_graph *g, const cs_node *roots, unsigned n_roots, cs_fusion fusion,
                       cs_partition *out)
{
    memset(out, 0, sizeof *out);
    out->fusion = fusion;
    if ((unsigned)fusion > CS_FUSION_NONE)
        return -1;
    uint32_t count = cs_graph_count(g);
    uint32_t *users = calloc(count, sizeof *users);
    out->kernel = malloc(count * sizeof *out->kernel);
    if (!users || !out->kernel)
        goto fail;

    /* The entry's set (kernel 0 for now, CS_NO_KERNEL outside it) and how
     * many of its nodes use each value. Operands have smaller ids: one
     * downward sweep reaches everything, at any depth, without recursion. */
    for (cs_node n = 0; n < count; n++)
        out->kernel[n] = CS_NO_KERNEL;
    for (unsigned r = 0; r < n_roots; r++)
        if (roots[r] && roots[r] < count)
            out->kernel[roots[r]] = 0;
    for (cs_node n = count - 1; n > 0; n--) {
        if (out->kernel[n] == CS_NO_KERNEL)
            continue;
        const cs_node_data *d = cs_graph_node(g, n);
        for (unsigned k = 0; k < d->n_in; k++) {
            cs_node o = cs_graph_input(g, n, k);
            out->kernel[o] = 0;
            users[o]++;
        }
    }
    uint32_t computed = 0;
    for (cs_node n = 1; n < count; n++) {
        if (out->kernel[n] == CS_NO_KERNEL)
            continue;
        if (loaded_in_place((cs_op)cs_graph_node(g, n)->op))
            out->kernel[n] = CS_NO_KERNEL;
        else
            computed++;
    }

    /* Every fusion mode has a kernel 0, if only to write the entry's outputs. */
    switch (fusion) {
    case CS_FUSION_RULES:
        if (rules_kernels(g, users, out, computed))
            goto fail;
        break;
    case CS_FUSION_NONE:
        for (cs_node n = 1; n < count; n++)
            if (out->kernel[n] != CS_NO_KERNEL)
                out->kernel[n] = out->n_kernels++;
        /* fall through */
    case CS_FUSION_FULL:
        if (!out->n_kernels)
            out->n_kernels = 1;
        out->reason = calloc(out->n_kernels, sizeof *out->reason);
        if (!out->reason)
            goto fail;
        for (uint32_t k = 1; k < out->n_kernels; k++)
            snprintf(out->reason[k], sizeof out->reason[k], "fusion none: one kernel per op");
        break;
    case CS_FUSION_COUNT:   /* refused above */
        goto fail;
    }
    free(users);
    return 0;
fail:
    free(users);
    cs_partition_free(out);
    return -1;
}

void cs_partition_free(cs_partition *part)
{
    free(part->kernel);
    free(part->reason);
    part->kernel = NULL;
    part->reason = NULL;
    part->n_kernels = 0;
}

int cs_plan_build(const cs_program *p, cs_fusion fusion, cs_plan *out)
{
    memset(out, 0, sizeof *out);
    unsigned max = cs_program_step_root_max(p);
    out->roll_roots = malloc(max * sizeof *out->roll_roots);
    out->step_roots = malloc(max * sizeof *out->step_roots);
    if (!out->roll_roots || !out->step_roots)
        goto oom;
    out->n_roll = cs_program_step_roots(p, true, out->roll_roots);
    out->n_step = cs_program_step_roots(p, false, out->step_roots);
    if (cs_partition_build(p->graph, out->roll_roots, out->n_roll, fusion, &out->roll) ||
        cs_partition_build(p->graph, out->step_roots, out->n_step, fusion, &out->step) ||
        cs_partition_build(p->graph, out->step_roots, out->n_step, CS_FUSION_FULL, &out->step_fused))
        goto oom;
    return 0;
oom:
    cs_plan_free(out);
    return -1;
}

void cs_plan_free(cs_plan *plan)
{
    cs_partition_free(&plan->roll);
    cs_partition_free(&plan->step);
    cs_partition_free(&plan->step_fused);
    free(plan->roll_roots);
    free(plan->step_roots);
    memset(plan, 0, sizeof *plan);
}
