/* Linear and MLP policies: dense layers over the observation, as graph
 * nodes the step kernel computes. Every weight is a PARAM leaf of its own,
 * so each environment of a batch reads its own policy from the parameter
 * buffers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "agents.h"

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

typedef struct {
    cs_program *p;
    bool shared;        /* one value for the whole batch (param_shared) */
    unsigned next;      /* weights made so far */
    bool failed;
} builder;

static cs_node weight(builder *b)
{
    char name[CS_NAME_MAX];
    snprintf(name, sizeof name, "w%u", b->next++);
    int slot = b->shared ? cs_program_add_shared_param(b->p, name, b->p->real)
                         : cs_program_add_param(b->p, name, b->p->real);
    if (slot < 0) {
        b->failed = true;
        return 0;
    }
    return cs_leaf(b->p->graph, CS_OP_PARAM, b->p->real, slot);
}

/* y[j] = ((w_j0 * x_0 + w_j1 * x_1) + ...) + b_j, through tanh when hidden. */
static void layer(builder *b, const cs_node *x, unsigned n_in, cs_node *y, unsigned n_out, bool hidden)
{
    cs_graph *g = b->p->graph;
    for (unsigned j = 0; j < n_out && !b->failed; j++) {
        cs_node z = 0;
        for (unsigned i = 0; i < n_in; i++) {
            cs_node t = cs_binary(g, CS_OP_MUL, weight(b), x[i]);
            z = i ? cs_binary(g, CS_OP_ADD, z, t) : t;
        }
        z = cs_binary(g, CS_OP_ADD, z, weight(b));
        y[j] = hidden ? cs_unary(g, CS_OP_TANH, z) : z;
        b->failed |= !y[j];
    }
}

int cs_dense_layers(cs_program *p, const cs_agent *a, unsigned n_out, bool shared, cs_node *z)
{
    unsigned widest = n_out > p->n_obs ? n_out : p->n_obs;
    for (unsigned l = 0; l < a->n_hidden; l++)
        widest = a->hidden[l] > widest ? a->hidden[l] : widest;
    cs_node *x = calloc(widest, sizeof *x), *y = calloc(widest, sizeof *y);
    builder b = {p, shared, 0, !x || !y};
    unsigned n_in = p->n_obs;
    for (unsigned k = 0; k < n_in && !b.failed; k++)
        b.failed |= !(x[k] = cs_program_obs_element(p, k));
    for (unsigned l = 0; l < a->n_hidden && !b.failed; l++) {
        layer(&b, x, n_in, y, a->hidden[l], true);
        n_in = a->hidden[l];
        cs_node *t = x;
        x = y;
        y = t;
    }
    layer(&b, x, n_in, y, n_out, false);
    for (unsigned k = 0; k < n_out && !b.failed; k++)
        z[k] = y[k];
    free(x);
    free(y);
    return b.failed || cs_graph_error(p->graph)[0] ? -1 : (int)b.next;
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
