/* The policy PPO's rollouts run: an actor that samples and a critic that
 * values, both over the observation, with weights the batch shares, and
 * the records a PPO update needs (agents.h says what and in which order).
 * Sampling is from the step stream, after the environment's own draws, so
 * an action depends only on (seed, environment, step). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "agents.h"

unsigned cs_actor_critic_count(const cs_agent *a, unsigned n_in, unsigned n_out, bool box)
{
    return cs_dense_count(a, n_in, n_out) + cs_dense_count(a, n_in, 1) + (box ? n_out : 0) + 1;
}

typedef struct {
    cs_program *p;
    cs_graph *g;
    bool failed;
} frag;

static cs_node K(frag *f, double v) { return cs_const(f->g, f->p->real, v); }
static cs_node bin(frag *f, cs_op op, cs_node a, cs_node b) { return cs_binary(f->g, op, a, b); }
static cs_node un(frag *f, cs_op op, cs_node a) { return cs_unary(f->g, op, a); }

static cs_node shared(frag *f, const char *name)
{
    int slot = cs_program_add_shared_param(f->p, name, f->p->real);
    if (slot < 0) {
        f->failed = true;
        return 0;
    }
    return cs_leaf(f->g, CS_OP_PARAM, f->p->real, slot);
}

static cs_node draw(frag *f, unsigned k)
{
    return cs_leaf(f->g, CS_OP_UNIFORM, f->p->real, CS_UNIFORM_ID(CS_STREAM_STEP, k));
}

static void record(frag *f, const char *name, unsigned k, cs_node root)
{
    char text[CS_NAME_MAX];
    if (k == UINT32_MAX)
        snprintf(text, sizeof text, "%s", name);
    else
        snprintf(text, sizeof text, "%s%u", name, k);
    f->failed |= cs_program_add_record(f->p, text, root) < 0;
}

/* Categorical over softmax(z): the inverse CDF at one uniform u, the
 * action being how many of the running sums e_0 + ... + e_k (k < n - 1) of
 * e_k = exp(z_k - max z) are at most u * S, S the whole sum; its
 * log-probability z_a - max z - log S. Greedy: the argmax. */
static void categorical(frag *f, const cs_node *z, unsigned n, cs_node greedy, unsigned first_draw, cs_node *action,
                        cs_node *logprob)
{
    cs_graph *g = f->g;
    cs_node m = z[0];
    for (unsigned k = 1; k < n; k++)
        m = bin(f, CS_OP_MAX, m, z[k]);
    cs_node *sums = calloc(n, sizeof *sums);
    if (!sums) {
        f->failed = true;
        return;
    }
    for (unsigned k = 0; k < n; k++) {
        cs_node e = un(f, CS_OP_EXP, bin(f, CS_OP_SUB, z[k], m));
        sums[k] = k ? bin(f, CS_OP_ADD, sums[k - 1], e) : e;
    }
    cs_node total = sums[n - 1];
    cs_node at = bin(f, CS_OP_MUL, draw(f, first_draw), total);
    cs_node sampled = cs_const(g, CS_I32, 0);
    for (unsigned k = 0; k + 1 < n; k++)
        sampled = cs_ternary(g, CS_OP_SELECT, bin(f, CS_OP_LE, sums[k], at), cs_const(g, CS_I32, k + 1), sampled);
    free(sums);
    cs_node a = cs_ternary(g, CS_OP_SELECT, bin(f, CS_OP_NE, greedy, K(f, 0)), cs_dense_argmax(f->p, z, n), sampled);
    cs_node za = z[0];
    for (unsigned k = 1; k < n; k++)
        za = cs_ternary(g, CS_OP_SELECT, bin(f, CS_OP_EQ, a, cs_const(g, CS_I32, k)), z[k], za);
    *action = a;
    *logprob = bin(f, CS_OP_SUB, bin(f, CS_OP_SUB, za, m), un(f, CS_OP_LOG, total));
}

int cs_policy_actor_critic(cs_program *p, const cs_agent *a, unsigned *first_weight)
{
    frag f = {p, p->graph, false};
    bool box = p->action_kind == CS_ACTION_BOX;
    unsigned n_out = cs_dense_outputs(p);
    unsigned first_draw = p->n_step_draws;   /* the environment's own draws come first */
    cs_node *z = calloc(n_out, sizeof *z), *act = calloc(n_out, sizeof *act);
    cs_node value = 0;
    if (!z || !act) {
        free(z);
        free(act);
        return -1;
    }
    *first_weight = p->n_params;
    int n_actor = cs_dense_layers(p, a, n_out, true, z);
    int n_critic = n_actor < 0 ? -1 : cs_dense_layers(p, a, 1, true, &value);
    f.failed |= n_actor < 0 || n_critic < 0;
    cs_node logprob = 0;
    if (!f.failed && box) {
        cs_node *log_std = calloc(n_out, sizeof *log_std);
        f.failed |= !log_std;
        for (unsigned k = 0; k < n_out && !f.failed; k++) {
            char name[CS_NAME_MAX];
            snprintf(name, sizeof name, "log_std%u", k);
            log_std[k] = shared(&f, name);
        }
        cs_node greedy = f.failed ? 0 : shared(&f, "greedy");
        cs_node sampling = bin(&f, CS_OP_EQ, greedy, K(&f, 0));
        /* -0.5 log(2 pi) */
        cs_node log_norm = K(&f, -0.91893853320467274178);
        for (unsigned k = 0; k < n_out && !f.failed; k++) {
            cs_node u1 = draw(&f, first_draw + 2 * k), u2 = draw(&f, first_draw + 2 * k + 1);
            /* 1 - u1 in (0, 1]: the log stays finite */
            cs_node radius = un(&f, CS_OP_SQRT, bin(&f, CS_OP_MUL, K(&f, -2),
                                                  un(&f, CS_OP_LOG, bin(&f, CS_OP_SUB, K(&f, 1), u1))));
            cs_node normal = bin(&f, CS_OP_MUL, radius, un(&f, CS_OP_COS, bin(&f, CS_OP_MUL, K(&f, 6.283185307179586), u2)));
            cs_node eps = cs_ternary(f.g, CS_OP_SELECT, sampling, normal, K(&f, 0));
            cs_node mean = cs_dense_box_action(p, k, z[k]);
            act[k] = bin(&f, CS_OP_ADD, mean, bin(&f, CS_OP_MUL, un(&f, CS_OP_EXP, log_std[k]), eps));
            cs_node lp = bin(&f, CS_OP_ADD, bin(&f, CS_OP_SUB, bin(&f, CS_OP_MUL, K(&f, -0.5), bin(&f, CS_OP_MUL, eps, eps)),
                                                log_std[k]),
                             log_norm);
            logprob = k ? bin(&f, CS_OP_ADD, logprob, lp) : lp;
            p->policy[k] = cs_ternary(f.g, CS_OP_CLIP, act[k], K(&f, p->input_low[k]), K(&f, p->input_high[k]));
            f.failed |= !p->policy[k];
        }
        free(log_std);
    } else if (!f.failed) {
        cs_node greedy = shared(&f, "greedy");
        if (!f.failed)
            categorical(&f, z, n_out, greedy, first_draw, &act[0], &logprob);
        p->policy[0] = act[0];
        f.failed |= !p->policy[0];
    }
    for (unsigned k = 0; k < p->n_obs && !f.failed; k++)
        record(&f, "obs", k, cs_program_obs_element(p, k));
    for (unsigned k = 0; k < (box ? n_out : 1) && !f.failed; k++)
        record(&f, "action", k, act[k]);
    if (!f.failed) {
        record(&f, "logprob", UINT32_MAX, logprob);
        record(&f, "value", UINT32_MAX, value);
        record(&f, "reward", UINT32_MAX, p->reward);
        record(&f, "terminated", UINT32_MAX, p->terminated);
        record(&f, "truncated", UINT32_MAX, p->truncated);
    }
    for (unsigned k = 0; k < p->n_obs && !f.failed; k++)
        record(&f, "final_obs", k, cs_program_obs_next_element(p, k));
    free(z);
    free(act);
    if (f.failed || cs_graph_error(p->graph)[0])
        return -1;
    return (int)(p->n_params - *first_weight);
}
