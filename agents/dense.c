/* Linear and MLP policies: dense layers over the observation, as array
 * nodes the step kernel computes in loops (jit/emit.c), so that a policy's
 * code does not grow with its weights. A layer's weights and biases are one
 * PARAM array [units, inputs + 1], each row a unit's weights then its bias:
 * the order of the parameter buffers and of policy files. Each
 * environment of a batch reads its own policy from the parameter buffers,
 * or the batch one set (shared). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "agents.h"

_Static_assert(CS_AGENT_LAYER_MAX <= CS_ARRAY_MAX, "a layer's weights are one array");

unsigned cs_dense_outputs(const cs_program *p)
{
    return p->action_kind == CS_ACTION_DISCRETE ? p->n_actions : p->n_inputs;
}

unsigned cs_dense_count(const cs_agent *a, unsigned n_in, unsigned n_out)
{
    unsigned count = 0, in = n_in;
    for (unsigned l = 0; l < a->n_hidden; l++) {
        count += (in + 1) * a->hidden[l];
        in = a->hidden[l];
    }
    return count + (in + 1) * n_out;
}

unsigned cs_dense_too_wide(const cs_agent *a, unsigned n_in, unsigned n_out, uint64_t *weights)
{
    uint64_t in = n_in;
    for (unsigned l = 0; l <= a->n_hidden; l++) {
        unsigned units = l == a->n_hidden ? n_out : a->hidden[l];
        *weights = units * (in + 1);
        if (*weights > CS_AGENT_LAYER_MAX)
            return l + 1;
        in = units;
    }
    return 0;
}

typedef struct {
    cs_program *p;
    bool shared;        /* one value for the whole batch (param_shared) */
    unsigned next;      /* weights made so far */
    bool failed;
} builder;

/* count new parameter slots w<next>.., as one PARAM array of `shape`. */
static cs_node weights(builder *b, uint32_t shape, unsigned count)
{
    int first = -1;
    for (unsigned k = 0; k < count && !b->failed; k++) {
        char name[CS_NAME_MAX];
        snprintf(name, sizeof name, "w%u", b->next++);
        int slot = b->shared ? cs_program_add_shared_param(b->p, name, b->p->real)
                             : cs_program_add_param(b->p, name, b->p->real);
        b->failed |= slot < 0;
        first = k ? first : slot;
    }
    cs_node w = b->failed || !shape ? 0 : cs_leaf_shaped(b->p->graph, CS_OP_PARAM, b->p->real, shape, first);
    b->failed |= !w;
    return w;
}

/* [x, 1] of a vector x, or of n scalars x[] when `vector` is 0. */
static cs_node with_one(builder *b, cs_node vector, const cs_node *x, unsigned n)
{
    cs_graph *g = b->p->graph;
    cs_node one = cs_const(g, b->p->real, 1);
    if (!vector) {
        cs_node *items = malloc((n + 1) * sizeof *items);
        if (!items)
            return 0;
        for (unsigned k = 0; k < n; k++)
            items[k] = x[k];
        items[n] = one;
        cs_node r = cs_stack(g, n + 1, items);
        free(items);
        return r;
    }
    unsigned dim = 1;
    cs_node parts[2] = {vector, cs_broadcast(g, one, cs_shape_id(g, 1, &dim))};
    return cs_concat(g, 2, parts, 0);
}

/* The observation as the vector [obs0, .., obs(n-1), 1] of reals: its box
 * items in order, an array item flattened. */
static cs_node observation_with_one(builder *b)
{
    cs_program *p = b->p;
    cs_graph *g = p->graph;
    cs_node *x = calloc(p->n_obs + 1, sizeof *x);
    if (!x)
        return 0;
    bool arrays = false;
    for (unsigned j = 0; j < p->n_obs_items; j++)
        arrays |= p->obs_items[j].space == CS_OBS_BOX && p->obs_items[j].shape != CS_SCALAR;
    cs_node r = 0;
    if (!arrays) {   /* scalars, as the environments of classic control observe */
        bool ok = true;
        for (unsigned k = 0; k < p->n_obs && ok; k++)
            ok = (x[k] = cs_program_obs_element(p, k)) != 0;
        r = ok ? with_one(b, 0, x, p->n_obs) : 0;
        free(x);
        return r;
    }
    /* the pieces: each array item flattened, each scalar item alone */
    unsigned n = 0;
    for (unsigned j = 0; j < p->n_obs_items; j++) {
        const cs_obs_item *it = &p->obs_items[j];
        if (it->space != CS_OBS_BOX)
            continue;
        cs_node v = it->node;
        if (cs_graph_node(g, v)->type != p->real)
            v = cs_cast(g, p->real, v);
        if (cs_shape_of(g, it->shape)->rank != 1)
            v = cs_reshape(g, v, cs_shape_id(g, 1, &it->size));
        if (!v)
            break;
        x[n++] = v;
    }
    cs_node flat = n == 1 ? x[0] : cs_concat(g, n, x, 0);
    free(x);
    return flat ? with_one(b, flat, NULL, 0) : 0;
}

/* z = sum(W * x, axis 1) of a layer's [units, inputs + 1] weights W over
 * x = [inputs, 1]: unit j's ((w_j0 * x_0 + w_j1 * x_1) + ...) + b_j * 1,
 * the bias times 1 being the bias exactly (IEEE, -0.0 included), so the
 * sum is a dense layer's chain bit for bit. */
static cs_node layer(builder *b, cs_node x, unsigned n_in, unsigned units)
{
    cs_graph *g = b->p->graph;
    unsigned dims[2] = {units, n_in + 1};
    cs_node w = weights(b, cs_shape_id(g, 2, dims), units * (n_in + 1));
    return w ? cs_reduce(g, CS_OP_SUM, cs_binary(g, CS_OP_MUL, w, x), 1) : 0;
}

int cs_dense_layers(cs_program *p, const cs_agent *a, unsigned n_out, bool shared, cs_node *z)
{
    cs_graph *g = p->graph;
    builder b = {p, shared, 0, false};
    cs_node x = observation_with_one(&b);
    unsigned n_in = p->n_obs;
    for (unsigned l = 0; l < a->n_hidden && x; l++) {
        cs_node h = layer(&b, x, n_in, a->hidden[l]);
        x = h ? with_one(&b, cs_unary(g, CS_OP_TANH, h), NULL, 0) : 0;
        n_in = a->hidden[l];
    }
    cs_node out = x ? layer(&b, x, n_in, n_out) : 0;
    for (unsigned k = 0; k < n_out && out; k++)
        b.failed |= !(z[k] = cs_index(g, out, k));
    return !out || b.failed || cs_graph_error(g)[0] ? -1 : (int)b.next;
}

/* The box policy's action component k for the output z: low + (high -
 * low) * (tanh(z) + 1) / 2. */
cs_node cs_dense_box_action(cs_program *p, unsigned k, cs_node z)
{
    cs_graph *g = p->graph;
    cs_node one = cs_const(g, p->real, 1), half = cs_const(g, p->real, 0.5);
    cs_node lo = cs_const(g, p->real, p->input_low[k]);
    cs_node span = cs_binary(g, CS_OP_SUB, cs_const(g, p->real, p->input_high[k]), lo);
    cs_node unit = cs_binary(g, CS_OP_MUL, cs_binary(g, CS_OP_ADD, cs_unary(g, CS_OP_TANH, z), one), half);
    return cs_binary(g, CS_OP_ADD, lo, cs_binary(g, CS_OP_MUL, span, unit));
}

cs_node cs_dense_argmax(cs_program *p, const cs_node *z, unsigned n)
{
    /* a later output wins only when strictly greater */
    cs_graph *g = p->graph;
    cs_node best = z[0], index = cs_const(g, CS_I32, 0);
    for (unsigned k = 1; k < n; k++) {
        cs_node gt = cs_binary(g, CS_OP_GT, z[k], best);
        index = cs_ternary(g, CS_OP_SELECT, gt, cs_const(g, CS_I32, k), index);
        best = cs_ternary(g, CS_OP_SELECT, gt, z[k], best);
    }
    return index;
}

int cs_policy_dense(cs_program *p, const cs_agent *a, unsigned *first_weight)
{
    unsigned n_out = cs_dense_outputs(p);
    cs_node *z = calloc(n_out ? n_out : 1, sizeof *z);
    if (!z)
        return -1;
    *first_weight = p->n_params;
    int n = cs_dense_layers(p, a, n_out, false, z);
    bool failed = n < 0;
    if (!failed && p->action_kind == CS_ACTION_DISCRETE) {
        p->policy[0] = cs_dense_argmax(p, z, n_out);
        failed |= !p->policy[0];
    } else if (!failed) {
        for (unsigned k = 0; k < n_out; k++) {
            p->policy[k] = cs_dense_box_action(p, k, z[k]);
            failed |= !p->policy[k];
        }
    }
    free(z);
    return failed || cs_graph_error(p->graph)[0] ? -1 : n;
}

void cs_dense_init(const cs_agent *a, unsigned n_in, unsigned n_out, uint64_t seed, double *w)
{
    unsigned count = cs_dense_count(a, n_in, n_out);
    if (a->n_hidden == 0) {
        for (unsigned k = 0; k < count; k++)
            w[k] = 0;
        return;
    }
    cs_gaussian(seed, CS_NOISE_INIT, 0, w, count);
    unsigned at = 0, in = n_in;
    for (unsigned l = 0; l <= a->n_hidden; l++) {
        bool last = l == a->n_hidden;
        unsigned units = last ? n_out : a->hidden[l];
        double scale = (last ? 0.1 : 1.0) / sqrt((double)in);
        for (unsigned j = 0; j < units; j++) {
            for (unsigned i = 0; i < in; i++)
                w[at++] *= scale;
            w[at++] = 0;
        }
        in = units;
    }
}
