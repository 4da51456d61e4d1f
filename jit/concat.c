/* Concat elimination: index(stack(a0, .., an), k) is ak.
 *
 * The seed paper's biggest single win (3.41x): a state packed into a vector
 * and unpacked again makes XLA materialize the concatenate when it has
 * several users. Forwarding every index to the stacked operand leaves the
 * stack without users; dce then removes it, and no fusion policy sees it.
 */
#include <stdlib.h>

#include "jit.h"

int cs_pass_concat(cs_program *p)
{
    cs_graph *g = p->graph;
    uint32_t count = cs_graph_count(g);
    bool *live = calloc(count, sizeof *live);
    cs_node *memo = calloc(count, sizeof *memo);
    cs_node *in = NULL;
    int forwarded = 0, result = -1;
    if (!live || !memo)
        goto done;
    unsigned widest = cs_program_mark_live(p, live);
    in = malloc((widest ? widest : 1) * sizeof *in);
    if (!in)
        goto done;
    /* In id order the stack is rebuilt before its indexes read it. */
    for (cs_node n = 1; n < count; n++) {
        if (!live[n])
            continue;
        cs_node_data d = *cs_graph_node(g, n);   /* copy: cs_make may move the table */
        bool same = true;
        for (unsigned k = 0; k < d.n_in; k++) {
            in[k] = memo[cs_graph_input(g, n, k)];
            same &= in[k] == cs_graph_input(g, n, k);
        }
        if (d.op == CS_OP_INDEX && cs_graph_node(g, in[0])->op == CS_OP_STACK) {
            memo[n] = cs_graph_input(g, in[0], (unsigned)d.imm.i);
            forwarded++;
        } else {
            memo[n] = same ? n : cs_make(g, (cs_op)d.op, (cs_type)d.type, d.n_in, in, d.imm);
        }
        if (!memo[n])
            goto done;
    }
    cs_program_remap_roots(p, memo);
    result = forwarded;
done:
    free(in);
    free(memo);
    free(live);
    return result;
}
