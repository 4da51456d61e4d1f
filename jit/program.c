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
    free(p->vars);
    free(p->next);
    free(p->restart);
    free(p->roll_next);
    free(p->obs_items);
    free(p->info_items);
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
    for (unsigned k = 0; k < p->n_draw_items; k++)
        free(p->draw_items[k].text);
    free(p->draw_items);
    free(p->draw);
    free(p->index_sites);
    free(p->source_name);
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

/* A slot's name, cut to fit (an element of a long-named array). */
static void set_slot(cs_slot *s, const char *name, cs_type t)
{
    size_t n = strlen(name);
    if (n >= sizeof s->name)
        n = sizeof s->name - 1;
    memcpy(s->name, name, n);
    s->name[n] = 0;
    s->type = t;
}

int cs_program_add_state(cs_program *p, const char *name, cs_type t, uint32_t shape)
{
    const cs_shape *s = cs_shape_of(p->graph, shape);
    if (p->n_carried + (uint64_t)s->size > INT32_MAX)
        return -1;
    void **vars[] = {(void **)&p->vars, (void **)&p->next, (void **)&p->restart, (void **)&p->roll_next};
    const size_t var_sizes[] = {sizeof *p->vars, sizeof *p->next, sizeof *p->restart, sizeof *p->roll_next};
    if (!grow(p->n_vars, vars, var_sizes, 4))
        return -1;
    /* the slots, one grow at a time (capacities double at powers of two) */
    for (unsigned e = 0; e < s->size; e++) {
        void **slots[] = {(void **)&p->carried};
        const size_t slot_sizes[] = {sizeof *p->carried};
        if (!grow(p->n_carried + e, slots, slot_sizes, 1))
            return -1;
        cs_slot *slot = &p->carried[p->n_carried + e];
        if (!s->rank) {
            set_slot(slot, name, t);
            continue;
        }
        unsigned at[CS_RANK_MAX];
        cs_shape_unflatten(s, e, at);
        char text[CS_NAME_MAX + 40];
        int len = snprintf(text, sizeof text, "%s[%u", name, at[0]);
        for (unsigned k = 1; k < s->rank; k++)
            len += snprintf(text + len, sizeof text - (size_t)len, ",%u", at[k]);
        snprintf(text + len, sizeof text - (size_t)len, "]");
        set_slot(slot, text, t);
    }
    cs_state_var *v = &p->vars[p->n_vars];
    snprintf(v->name, sizeof v->name, "%s", name);
    v->type = t;
    v->shape = shape;
    v->slot = p->n_carried;
    v->size = s->size;
    p->n_carried += s->size;
    return (int)p->n_vars++;
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

int cs_program_add_obs(cs_program *p, const char *name, cs_node over_carried, cs_obs_space space, double low,
                       double high, int64_t n)
{
    void **arrays[] = {(void **)&p->obs_items};
    const size_t sizes[] = {sizeof *p->obs_items};
    const cs_node_data *d = cs_graph_node(p->graph, over_carried);
    unsigned size = cs_node_shape(p->graph, over_carried)->size;
    unsigned *used = space == CS_OBS_DISCRETE ? &p->n_obs_int : &p->n_obs;
    if (!d || *used + (uint64_t)size > INT32_MAX || !grow(p->n_obs_items, arrays, sizes, 1))
        return -1;
    cs_obs_item *it = &p->obs_items[p->n_obs_items];
    snprintf(it->name, sizeof it->name, "%s", name ? name : "");
    it->node = over_carried;
    it->shape = d->shape;
    it->space = space;
    it->low = low;
    it->high = high;
    it->n = n;
    it->offset = *used;
    it->size = size;
    *used += size;
    return (int)p->n_obs_items++;
}

int cs_program_add_info(cs_program *p, const char *name, cs_type t, uint32_t shape)
{
    void **arrays[] = {(void **)&p->info_items};
    const size_t sizes[] = {sizeof *p->info_items};
    unsigned size = cs_shape_of(p->graph, shape)->size;
    if (p->n_info + (uint64_t)size > INT32_MAX || !grow(p->n_info_items, arrays, sizes, 1))
        return -1;
    cs_info_item *it = &p->info_items[p->n_info_items];
    snprintf(it->name, sizeof it->name, "%s", name);
    it->type = t;
    it->shape = shape;
    it->offset = p->n_info;
    it->size = size;
    p->n_info += size;
    return (int)p->n_info_items++;
}

/* Element k of the float observation, of the state before the step (node)
 * or after it (next). */
static cs_node obs_element(cs_program *p, unsigned k, bool next)
{
    for (unsigned j = 0; j < p->n_obs_items; j++) {
        const cs_obs_item *it = &p->obs_items[j];
        if (it->space != CS_OBS_BOX || k < it->offset || k >= it->offset + it->size)
            continue;
        cs_node n = next ? it->next : it->node;
        const cs_shape *s = cs_shape_of(p->graph, it->shape);
        unsigned at[CS_RANK_MAX];
        cs_shape_unflatten(s, k - it->offset, at);
        for (unsigned a = 0; a < s->rank && n; a++)
            n = cs_index(p->graph, n, at[a]);
        cs_type t = n ? (cs_type)cs_graph_node(p->graph, n)->type : p->real;
        return n && t != p->real ? cs_cast(p->graph, p->real, n) : n;
    }
    return 0;
}

cs_node cs_program_obs_element(cs_program *p, unsigned k) { return obs_element(p, k, false); }
cs_node cs_program_obs_next_element(cs_program *p, unsigned k) { return obs_element(p, k, true); }

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

int cs_program_add_index_site(cs_program *p, cs_node index, unsigned dim, const char *where)
{
    for (unsigned k = 0; k < p->n_index_sites; k++)
        if (p->index_sites[k].index == index && p->index_sites[k].dim == dim)
            return 0;   /* the same index of the same axis (a row-by-row gather's): one site */
    void **arrays[] = {(void **)&p->index_sites};
    const size_t sizes[] = {sizeof *p->index_sites};
    if (!grow(p->n_index_sites, arrays, sizes, 1))
        return -1;
    cs_index_site *s = &p->index_sites[p->n_index_sites++];
    s->index = index;
    s->dim = dim;
    snprintf(s->where, sizeof s->where, "%s", where);
    return 0;
}

/* An index i of an axis of length n is out of range when the JAX rule
 * (jit/ops.def: i + n when i < 0, once) leaves it outside [0, n): where a
 * gather clamps it and a scatter drops its update. The roots name the
 * first site in source order whose index is. */
int cs_program_add_index_faults(cs_program *p, const char *source_name)
{
    free(p->source_name);
    if (!(p->source_name = strdup(source_name ? source_name : "")))
        return -1;
    if (!p->n_index_sites)
        return 0;   /* nothing to check: the kernels are the plain ones */
    cs_graph *g = p->graph;
    cs_node site = cs_const(g, CS_I32, 0), value = site;
    for (unsigned k = p->n_index_sites; k-- > 0;) {
        const cs_index_site *s = &p->index_sites[k];
        cs_node low = cs_binary(g, CS_OP_LT, s->index, cs_const(g, CS_I32, -(double)s->dim));
        cs_node high = cs_binary(g, CS_OP_GE, s->index, cs_const(g, CS_I32, (double)s->dim));
        cs_node bad = cs_binary(g, CS_OP_OR, low, high);
        site = cs_ternary(g, CS_OP_SELECT, bad, cs_const(g, CS_I32, k + 1.0), site);
        value = cs_ternary(g, CS_OP_SELECT, bad, s->index, value);
    }
    if (!site || !value)
        return -1;
    p->index_fault[0] = site;
    p->index_fault[1] = value;
    return 0;
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

/* The smallest power of two that holds n, 0 for 0: an array's capacity,
 * implicit as grow's. */
static size_t capacity_for(size_t n)
{
    size_t c = n ? 1 : 0;
    while (c < n)
        c *= 2;
    return c;
}

int cs_program_add_draw_roots(cs_program *p, unsigned n)
{
    if (n > INT32_MAX - p->n_draw)
        return -1;
    size_t need = (size_t)p->n_draw + n, cap = capacity_for(p->n_draw);
    if (need > cap) {
        cs_node *draw = realloc(p->draw, capacity_for(need) * sizeof *draw);
        if (!draw)
            return -1;
        p->draw = draw;
    }
    if (n)
        memset(p->draw + p->n_draw, 0, n * sizeof *p->draw);
    unsigned first = p->n_draw;
    p->n_draw += n;
    return (int)first;
}

int cs_program_add_draw_item(cs_program *p, const cs_draw_item *item)
{
    void **arrays[] = {(void **)&p->draw_items};
    const size_t sizes[] = {sizeof *p->draw_items};
    if (!grow(p->n_draw_items, arrays, sizes, 1))
        return -1;
    p->draw_items[p->n_draw_items] = *item;
    return (int)p->n_draw_items++;
}

const cs_named_policy *cs_program_find_named(const cs_program *p, const char *name)
{
    for (unsigned k = 0; k < p->n_named; k++)
        if (strcmp(p->named[k].name, name) == 0)
            return &p->named[k];
    return NULL;
}

/* The variable whose CARRIED leaf this is (a leaf reads a whole variable). */
static const cs_node *var_root(const cs_program *p, const cs_node *roots, const cs_node_data *leaf)
{
    for (unsigned v = 0; v < p->n_vars; v++)
        if (p->vars[v].slot == (unsigned)leaf->imm.i && p->vars[v].shape == leaf->shape)
            return &roots[v];
    return NULL;
}

/* Leaf maps for observations: a state's CARRIED -> its next, or fresh, value. */
static cs_node map_to_next(void *ctx, const cs_node_data *leaf)
{
    const cs_program *p = ctx;
    const cs_node *r = leaf->op == CS_OP_CARRIED ? var_root(p, p->next, leaf) : NULL;
    return r ? *r : 0;
}

static cs_node map_to_restart(void *ctx, const cs_node_data *leaf)
{
    const cs_program *p = ctx;
    const cs_node *r = leaf->op == CS_OP_CARRIED ? var_root(p, p->restart, leaf) : NULL;
    return r ? *r : 0;
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
    if (p->n_vars)
        memcpy(p->roll_next, p->next, p->n_vars * sizeof *p->next);
    p->roll_reward = p->reward;
    p->roll_terminated = p->terminated;
    p->roll_truncated = p->truncated;
    cs_node single[3] = {p->roll_reward, p->roll_terminated, p->roll_truncated};
    memcpy(p->roll_index_fault, p->index_fault, sizeof p->index_fault);
    if (cs_substitute(p->graph, p->roll_next, p->n_vars, map_to_policy, p) ||
        cs_substitute(p->graph, single, 3, map_to_policy, p) ||
        (p->index_fault[0] && cs_substitute(p->graph, p->roll_index_fault, 2, map_to_policy, p)) ||
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
        if (d->op != CS_OP_UNIFORM && d->op != CS_OP_RANDBITS)
            continue;
        unsigned *count = CS_UNIFORM_STREAM(d->imm.i) == CS_STREAM_STEP ? &p->n_step_draws : &p->n_restart_draws;
        unsigned last = CS_UNIFORM_DRAW(d->imm.i) + cs_shape_of(p->graph, d->shape)->size;
        if (last > *count)
            *count = last;
    }
}

/* Whether an observation reads a kept variable's CARRIED leaf. */
static bool observes_kept(const cs_program *p)
{
    const cs_graph *g = p->graph;
    uint32_t count = cs_graph_count(g);
    bool any = false;
    for (unsigned v = 0; v < p->n_vars; v++)
        any |= p->vars[v].kept;
    if (!any || !p->n_obs_items)
        return false;
    unsigned char *live = calloc(count, 1);
    if (!live)
        return true;   /* refused: cannot tell */
    for (unsigned k = 0; k < p->n_obs_items; k++)
        live[p->obs_items[k].node] = 1;
    bool reads = false;
    for (cs_node n = count - 1; n > 0 && !reads; n--) {
        if (!live[n])
            continue;
        const cs_node_data *d = cs_graph_node(g, n);
        for (unsigned k = 0; k < d->n_in; k++)
            live[cs_graph_input(g, n, k)] = 1;
        if (d->op == CS_OP_CARRIED)
            for (unsigned v = 0; v < p->n_vars; v++)
                reads |= p->vars[v].kept && (unsigned)d->imm.i >= p->vars[v].slot &&
                         (unsigned)d->imm.i < p->vars[v].slot + p->vars[v].size;
    }
    free(live);
    return reads;
}

int cs_program_finish(cs_program *p, char *err, size_t err_size)
{
    cs_graph *g = p->graph;
    for (unsigned k = 0; k < p->n_vars; k++) {
        if (!p->next[k] || !p->restart[k]) {
            snprintf(err, err_size, "state '%s' has no %s value", p->vars[k].name,
                     !p->next[k] ? "next (name')" : "reset");
            return !p->next[k] ? CS_FINISH_STEP : CS_FINISH_RESET;
        }
        for (int r = 0; r < 2; r++) {
            const cs_node_data *d = cs_graph_node(g, r ? p->restart[k] : p->next[k]);
            if (!d || d->type != p->vars[k].type || d->shape != p->vars[k].shape) {
                snprintf(err, err_size, "the %s value of state '%s' is not of its type and shape",
                         r ? "reset" : "next", p->vars[k].name);
                return r ? CS_FINISH_RESET : CS_FINISH_STEP;
            }
        }
    }
    if (!p->reward || !p->terminated) {
        snprintf(err, err_size, "the step defines no %s", !p->reward ? "reward" : "terminated");
        return CS_FINISH_STEP;
    }
    for (unsigned k = 0; k < p->n_info_items; k++) {
        const cs_info_item *it = &p->info_items[k];
        for (int r = 0; r < 2; r++) {
            const cs_node_data *d = cs_graph_node(g, r ? it->restart : it->step);
            if (!d || d->type != it->type || d->shape != it->shape) {
                snprintf(err, err_size, "info '%s' has no %s value of its type and shape", it->name,
                         r ? "reset" : "step");
                return r ? CS_FINISH_RESET : CS_FINISH_STEP;
            }
        }
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
    if (observes_kept(p)) {
        snprintf(err, err_size, "an observation reads a kept state (its value after an auto-reset is the old "
                 "episode's): observe it through a variable that is reset");
        return CS_FINISH_PROGRAM;
    }
    bool failed = false;
    for (unsigned k = 0; k < p->n_obs_items && !failed; k++) {
        cs_obs_item *it = &p->obs_items[k];
        it->next = it->restart = it->node;
        failed = cs_substitute(g, &it->next, 1, map_to_next, p) || cs_substitute(g, &it->restart, 1, map_to_restart, p);
    }
    if (failed || cs_graph_error(g)[0]) {
        snprintf(err, err_size, "building the program: %s", cs_graph_error(g)[0] ? cs_graph_error(g) : "out of memory");
        return CS_FINISH_PROGRAM;
    }
    count_draws(p);
    return 0;
}

unsigned cs_program_step_root_max(const cs_program *p)
{
    return p->n_inputs + p->n_vars + p->n_obs_items + p->n_info_items + p->n_records + 3 + 2;
}

unsigned cs_program_step_roots(const cs_program *p, bool with_policy, cs_node *roots)
{
    unsigned n = 0;
    if (with_policy) {
        for (unsigned k = 0; k < p->n_vars; k++)
            roots[n++] = p->roll_next[k];
        roots[n++] = p->roll_reward;
        roots[n++] = p->roll_terminated;
        roots[n++] = p->roll_truncated;
        for (unsigned k = 0; k < p->n_records; k++)
            roots[n++] = p->record[k];
        for (unsigned k = 0; k < 2 && p->roll_index_fault[0]; k++)
            roots[n++] = p->roll_index_fault[k];
        return n;
    }
    for (unsigned k = 0; k < p->n_vars; k++)
        roots[n++] = p->next[k];
    for (unsigned k = 0; k < p->n_obs_items; k++)
        roots[n++] = p->obs_items[k].next;
    for (unsigned k = 0; k < p->n_info_items; k++)
        roots[n++] = p->info_items[k].step;
    roots[n++] = p->reward;
    roots[n++] = p->terminated;
    roots[n++] = p->truncated;
    for (unsigned k = 0; k < 2 && p->index_fault[0]; k++)
        roots[n++] = p->index_fault[k];
    return n;
}

void cs_program_visit_roots(cs_program *p, void (*visit)(void *ctx, cs_node *root), void *ctx)
{
    cs_node *arrays[] = {p->next, p->restart, p->roll_next};
    for (unsigned a = 0; a < 3; a++)
        for (unsigned k = 0; k < p->n_vars && arrays[a]; k++)
            if (arrays[a][k])
                visit(ctx, &arrays[a][k]);
    for (unsigned k = 0; k < p->n_obs_items; k++) {
        cs_obs_item *it = &p->obs_items[k];
        cs_node *items[] = {&it->node, &it->next, &it->restart};
        for (unsigned a = 0; a < 3; a++)
            if (*items[a])
                visit(ctx, items[a]);
    }
    for (unsigned k = 0; k < p->n_info_items; k++) {
        cs_info_item *it = &p->info_items[k];
        if (it->step)
            visit(ctx, &it->step);
        if (it->restart)
            visit(ctx, &it->restart);
    }
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
    for (unsigned k = 0; k < p->n_draw; k++)
        if (p->draw[k])
            visit(ctx, &p->draw[k]);
    cs_node *single[] = {&p->reward, &p->terminated, &p->truncated,
                         &p->roll_reward, &p->roll_terminated, &p->roll_truncated,
                         &p->index_fault[0], &p->index_fault[1], &p->roll_index_fault[0], &p->roll_index_fault[1]};
    for (unsigned k = 0; k < sizeof single / sizeof *single; k++)
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
        } else if (!(memo[n] = same ? n : cs_make(g, (cs_op)d.op, (cs_type)d.type, d.shape, d.n_in, in, d.imm))) {
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
