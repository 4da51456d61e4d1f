/* The random policy: what Gymnasium's action_space.sample() does, from Philox.
 * Discrete(n): min(floor(u * n), n - 1); Box(low, high): low + (high - low) * u. */
#include "agents.h"

int cs_policy_random(cs_program *p)
{
    cs_graph *g = p->graph;
    unsigned first = p->n_step_draws;   /* the environment's own draws come first */
    for (unsigned k = 0; k < p->n_inputs; k++) {
        cs_node u = cs_leaf(g, CS_OP_UNIFORM, p->real, CS_UNIFORM_ID(CS_STREAM_STEP, first + k));
        if (p->action_kind == CS_ACTION_DISCRETE) {
            cs_node n = cs_const(g, p->real, (double)p->n_actions);
            cs_node a = cs_unary(g, CS_OP_FLOOR, cs_binary(g, CS_OP_MUL, u, n));
            a = cs_binary(g, CS_OP_MIN, a, cs_const(g, p->real, (double)p->n_actions - 1));
            p->policy[k] = cs_cast(g, p->inputs[k].type, a);
        } else {
            cs_node lo = cs_const(g, p->real, p->input_low[k]);
            cs_node hi = cs_const(g, p->real, p->input_high[k]);
            p->policy[k] = cs_binary(g, CS_OP_ADD, lo, cs_binary(g, CS_OP_MUL, cs_binary(g, CS_OP_SUB, hi, lo), u));
        }
        if (!p->policy[k])
            return -1;
    }
    return 0;
}
