/* Lane programs: slots, and the derived roots that every backend reads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"

cs_program *cs_program_new(cs_type real)
{
    cs_program *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->graph = cs_graph_new();
    if (!p->graph) {
        free(p);
        return NULL;
    }
    p->real = real;
    p->reward_threshold = NAN;
    return p;
}

void cs_program_free(cs_program *p)
{
    if (!p)
        return;
    cs_graph_free(p->graph);
    free(p->carried);
    free(p->next);
    free(p->restart);
    free(p->roll_next);
    free(p->obs);
    free(p->obs_next);
    free(p->obs_restart);
    free(p->inputs);
    free(p->input_low);
    free(p->input_high);
    free(p->policy);
    free(p->params);
    free(p->param_restart);
    free(p->param_shared);
    free(p->records);
    free(p->record);
    for (unsigned k = 0; k < p->n_named; k++)
        free(p->named[k].action);
    free(p->named);
    free(p);
}

/* Make room for element n in each array (element sizes in `sizes`),
 * zeroed. Capacities double, so they are implicit: an array holding n
 * elements has room for the next power of two. */
static bool grow(unsigned n, void **arrays[], const size_t sizes[], unsigned count)
{
    bool full = n == 0 || (n & (n - 1)) == 0;
    for (unsigned k = 0; k < count; k++) {
        if (full) {
            void *a = realloc(*arrays[k], (n ? 2 * (size_t)n : 1) * sizes[k]);
            if (!a)
                return false;
            *arrays[k] = a;
        }
        memset((char *)*arrays[k] + n * sizes[k], 0, sizes[k]);
    }
    return true;
}

static void set_slot(cs_slot *s, const char *name, cs_type t)
{
    snprintf(s->name, sizeof s->name, "%s", name);
    s->type = t;
}

int cs_program_add_carried(cs_program *p, const char *name, cs_type t)
{
    void **arrays[] = {(void **)&p->carried, (void **)&p->next, (void **)&p->restart,
                       (void **)&p->roll_next};
    const size_t sizes[] = {sizeof *p->carried, sizeof *p->next, sizeof *p->restart,
                            sizeof *p->roll_next};
    if (!grow(p->n_carried, arrays, sizes, 4))
        return -1;
    set_slot(&p->carried[p->n_carried], name, t);
    return (int)p->n_carried++;
}

int cs_program_add_input(cs_program *p, const char *name, cs_type t, double low, double high)
{
    void **arrays[] = {(void **)&p->inputs, (void **)&p->input_low, (void **)&p->input_high,
                       (void **)&p->policy};
    const size_t sizes[] = {sizeof *p->inputs, sizeof *p->input_low, sizeof *p->input_high,
                            sizeof *p->policy};
    if (!grow(p->n_inputs, arrays, sizes, 4))
        return -1;
    set_slot(&p->inputs[p->n_inputs], name, t);
    p->input_low[p->n_inputs] = low;
    p->input_high[p->n_inputs] = high;
    return (int)p->n_inputs++;
}

int cs_program_add_param(cs_program *p, const char *name, cs_type t)
{
    void **arrays[] = {(void **)&p->params, (void **)&p->param_restart, (void **)&p->param_shared};
    const size_t sizes[] = {sizeof *p->params, sizeof *p->param_restart, sizeof *p->param_shared};
    if (!grow(p->n_params, arrays, sizes, 3))
        return -1;
    set_slot(&p->params[p->n_params], name, t);
    return (int)p->n_params++;
}

int cs_program_add_shared_param(cs_program *p, const char *name, cs_type t)
{
    int k = cs_program_add_param(p, name, t);
    if (k >= 0)
        p->param_shared[k] = true;
    return k;
}

int cs_program_add_obs(cs_program *p, cs_node over_carried)
{
    void **arrays[] = {(void **)&p->obs, (void **)&p->obs_next, (void **)&p->obs_restart};
    const size_t sizes[] = {sizeof *p->obs, sizeof *p->obs_next, sizeof *p->obs_restart};
    if (!grow(p->n_obs, arrays, sizes, 3))
        return -1;
    p->obs[p->n_obs] = over_carried;
    return (int)p->n_obs++;
}

int cs_program_add_record(cs_program *p, const char *name, cs_node root)
{
    void **arrays[] = {(void **)&p->records, (void **)&p->record};
    const size_t sizes[] = {sizeof *p->records, sizeof *p->record};
    if (!root || !grow(p->n_records, arrays, sizes, 2))
        return -1;
    set_slot(&p->records[p->n_records], name, (cs_type)cs_graph_node(p->graph, root)->type);
    p->record[p->n_records] = root;
    return (int)p->n_records++;
}

int cs_program_add_named(cs_program *p, const char *name)
{
    cs_node *action = calloc(p->n_inputs ? p->n_inputs : 1, sizeof *action);
    cs_named_policy *named = action ? realloc(p->named, (p->n_named + 1) * sizeof *named) : NULL;
    if (!named) {
        free(action);
        return -1;
    }
    p->named = named;
    snprintf(named[p->n_named].name, sizeof named->name, "%s", name);
    named[p->n_named].action = action;
    return (int)p->n_named++;
}

const cs_named_policy *cs_program_find_named(const cs_program *p, const char *name)
{
    for (unsigned k = 0; k < p->n_named; k++)
        if (strcmp(p->named[k].name, name) == 0)
            return &p->named[k];
    return NULL;
}

/* Leaf maps for observations: CARRIED k -> the next, or the fresh, value. */
static cs_node map_to_next(void *ctx, const cs_node_data *leaf)
{
    const cs_program *p = ctx;
    return leaf->op == CS_OP_CARRIED ? p->next[leaf->imm.i] : 0;
}

static cs_node map_to_restart(void *ctx, const cs_node_data *leaf)
{
    const cs_program *p = ctx;
    return leaf->op == CS_OP_CARRIED ? p->restart[leaf->imm.i] : 0;
}

static cs_node map_to_policy(void *ctx, const cs_node_data *leaf)
{
    const cs_program *p = ctx;
    return leaf->op == CS_OP_INPUT ? p->policy[leaf->imm.i] : 0;
}

static void count_draws(cs_program *p);

int cs_program_bind_policy(cs_program *p)
{
    for (unsigned k = 0; k < p->n_inputs; k++)
        if (!p->policy[k])
            return -1;
    if (p->n_carried)
        memcpy(p->roll_next, p->next, p->n_carried * sizeof *p->next);
    p->roll_reward = p->reward;
    p->roll_terminated = p->terminated;
    p->roll_truncated = p->truncated;
    cs_node single[3] = {p->roll_reward, p->roll_terminated, p->roll_truncated};
    if (cs_substitute(p->graph, p->roll_next, p->n_carried, map_to_policy, p) ||
        cs_substitute(p->graph, single, 3, map_to_policy, p) ||
        cs_substitute(p->graph, p->record, p->n_records, map_to_policy, p))
        return -1;
    p->roll_reward = single[0];
    p->roll_terminated = single[1];
    p->roll_truncated = single[2];
    count_draws(p);
    return 0;
}

static void count_draws(cs_program *p)
{
    p->n_step_draws = p->n_restart_draws = 0;
    uint32_t n = cs_graph_count(p->graph);
    for (cs_node id = 1; id < n; id++) {
        const cs_node_data *d = cs_graph_node(p->graph, id);
        if (d->op != CS_OP_UNIFORM)
            continue;
        unsigned *count = CS_UNIFORM_STREAM(d->imm.i) == CS_STREAM_STEP ? &p->n_step_draws : &p->n_restart_draws;
        if (CS_UNIFORM_DRAW(d->imm.i) + 1 > *count)
            *count = CS_UNIFORM_DRAW(d->imm.i) + 1;
    }
}

int cs_program_finish(cs_program *p, char *err, size_t err_size)
{
    cs_graph *g = p->graph;
    for (unsigned k = 0; k < p->n_carried; k++) {
        if (!p->next[k] || !p->restart[k]) {
            snprintf(err, err_size, "state '%s' has no %s value", p->carried[k].name,
                     !p->next[k] ? "next (name')" : "reset");
            return !p->next[k] ? CS_FINISH_STEP : CS_FINISH_RESET;
        }
    }
    if (!p->reward || !p->terminated) {
        snprintf(err, err_size, "the step defines no %s", !p->reward ? "reward" : "terminated");
        return CS_FINISH_STEP;
    }
    if (p->n_inputs == 0) {
        snprintf(err, err_size, "no action declared");
        return CS_FINISH_PROGRAM;
    }
    if (p->max_steps > 0) {
        /* truncated = steps + 1 >= max_steps, Gymnasium's TimeLimit */
        cs_node steps = cs_leaf(g, CS_OP_SEGSTEP, CS_I32, 0);
        cs_node next = cs_binary(g, CS_OP_ADD, steps, cs_const(g, CS_I32, 1));
        p->truncated = cs_binary(g, CS_OP_GE, next, cs_const(g, CS_I32, (double)p->max_steps));
    } else {
        p->truncated = cs_const(g, CS_BOOL, 0);
    }
    if (p->n_obs) {   /* memcpy from NULL is undefined even for 0 bytes */
        memcpy(p->obs_next, p->obs, p->n_obs * sizeof *p->obs);
        memcpy(p->obs_restart, p->obs, p->n_obs * sizeof *p->obs);
    }
    if (cs_substitute(g, p->obs_next, p->n_obs, map_to_next, p) ||
        cs_substitute(g, p->obs_restart, p->n_obs, map_to_restart, p) || cs_graph_error(g)[0]) {
        snprintf(err, err_size, "building the program: %s", cs_graph_error(g)[0] ? cs_graph_error(g) : "out of memory");
        return CS_FINISH_PROGRAM;
    }
    count_draws(p);
    return 0;
}

unsigned cs_program_step_root_max(const cs_program *p)
{
    return p->n_inputs + p->n_carried + p->n_obs + p->n_records + 3;
}

unsigned cs_program_step_roots(const cs_program *p, bool with_policy, cs_node *roots)
{
    unsigned n = 0;
    if (with_policy) {
        for (unsigned k = 0; k < p->n_carried; k++)
            roots[n++] = p->roll_next[k];
        roots[n++] = p->roll_reward;
        roots[n++] = p->roll_terminated;
        roots[n++] = p->roll_truncated;
        for (unsigned k = 0; k < p->n_records; k++)
            roots[n++] = p->record[k];
        return n;
    }
    for (unsigned k = 0; k < p->n_carried; k++)
        roots[n++] = p->next[k];
    for (unsigned k = 0; k < p->n_obs; k++)
        roots[n++] = p->obs_next[k];
    roots[n++] = p->reward;
    roots[n++] = p->terminated;
    roots[n++] = p->truncated;
    return n;
}

void cs_program_visit_roots(cs_program *p, void (*visit)(void *ctx, cs_node *root), void *ctx)
{
    cs_node *arrays[] = {p->next, p->restart, p->roll_next, p->obs, p->obs_next, p->obs_restart};
    unsigned counts[] = {p->n_carried, p->n_carried, p->n_carried, p->n_obs, p->n_obs, p->n_obs};
    for (unsigned a = 0; a < 6; a++)
        for (unsigned k = 0; k < counts[a]; k++)
            if (arrays[a][k])
                visit(ctx, &arrays[a][k]);
    for (unsigned k = 0; k < p->n_inputs; k++)
        if (p->policy[k])
            visit(ctx, &p->policy[k]);
    for (unsigned k = 0; k < p->n_params; k++)
        if (p->param_restart[k])
            visit(ctx, &p->param_restart[k]);
    for (unsigned k = 0; k < p->n_records; k++)
        visit(ctx, &p->record[k]);
    for (unsigned j = 0; j < p->n_named; j++)
        for (unsigned k = 0; k < p->n_inputs; k++)
            if (p->named[j].action[k])
                visit(ctx, &p->named[j].action[k]);
    cs_node *single[] = {&p->reward, &p->terminated, &p->truncated,
                         &p->roll_reward, &p->roll_terminated, &p->roll_truncated};
    for (unsigned k = 0; k < 6; k++)
        if (*single[k])
            visit(ctx, single[k]);
}

static void mark_root(void *ctx, cs_node *root)
{
    bool *live = ctx;
    live[*root] = true;
}

unsigned cs_program_mark_live(const cs_program *p, bool *live)
{
    const cs_graph *g = p->graph;
    unsigned widest = 0;
    /* visit_roots hands out writable root pointers; mark_root only reads them. */
    cs_program_visit_roots((cs_program *)p, mark_root, live);
    for (cs_node n = cs_graph_count(g) - 1; n > 0; n--) {
        if (!live[n])
            continue;
        const cs_node_data *d = cs_graph_node(g, n);
        if (d->n_in > widest)
            widest = d->n_in;
        for (unsigned k = 0; k < d->n_in; k++)
            live[cs_graph_input(g, n, k)] = true;
    }
    return widest;
}

static void remap_root(void *ctx, cs_node *root)
{
    const cs_node *map = ctx;
    *root = map[*root];
}

void cs_program_remap_roots(cs_program *p, const cs_node *map)
{
    cs_program_visit_roots(p, remap_root, (void *)map);
}

int cs_program_rewrite(cs_program *p, cs_rewrite_rule rule, void *ctx)
{
    cs_graph *g = p->graph;
    uint32_t count = cs_graph_count(g);
    bool *live = calloc(count, sizeof *live);
    cs_node *memo = calloc(count, sizeof *memo);
    cs_node *in = NULL;
    int rewritten = 0, result = -1;
    if (!live || !memo)
        goto done;
    unsigned widest = cs_program_mark_live(p, live);
    in = malloc((widest ? widest : 1) * sizeof *in);
    if (!in)
        goto done;
    /* Ids are a topological order: operands are rewritten before their users. */
    for (cs_node n = 1; n < count; n++) {
        if (!live[n])
            continue;
        cs_node_data d = *cs_graph_node(g, n);   /* copy: cs_make may move the table */
        bool same = true;
        for (unsigned k = 0; k < d.n_in; k++) {
            in[k] = memo[cs_graph_input(g, n, k)];
            same &= in[k] == cs_graph_input(g, n, k);
        }
        cs_node to = rule(ctx, g, &d, in);
        if (to == CS_REWRITE_FAILED)
            goto done;
        if (to) {
            memo[n] = to;
            rewritten++;
        } else if (!(memo[n] = same ? n : cs_make(g, (cs_op)d.op, (cs_type)d.type, d.n_in, in, d.imm))) {
            goto done;
        }
    }
    cs_program_remap_roots(p, memo);
    result = rewritten;
done:
    free(in);
    free(memo);
    free(live);
    return result;
}
