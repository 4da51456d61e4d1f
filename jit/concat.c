/* Concat elimination: index(stack(a0, .., an), k) is ak (a stack on axis 0).
 *
 * The seed paper's biggest single win (3.41x): a state packed into a vector
 * and unpacked again makes XLA materialize the concatenate when it has
 * several users. Forwarding every index to the stacked operand leaves the
 * stack without users; dce then removes it, and no fusion mode sees it.
 */
#include <stdlib.h>

#include "jit.h"

static cs_node forward_index(void *ctx, cs_graph *g, const cs_node_data *d, const cs_node *in)
{
    const cs_node_data *s = cs_graph_node(g, in[0]);
    if (d->op == CS_OP_INDEX && s->op == CS_OP_STACK && s->imm.i == 0)   /* stacked on the axis indexed */
        return cs_graph_input(g, in[0], (unsigned)d->imm.i);
    return 0;
}

/* In id order the stack is rebuilt before its indexes read it. */
int cs_pass_concat(cs_program *p) { return cs_program_rewrite(p, forward_index, NULL); }
