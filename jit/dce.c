/* Dead code elimination: rebuild the graph with what the roots reach.
 *
 * The graph is append-only, so every rewrite leaves the nodes it replaced
 * behind; copying the live ones, in id order, into a fresh graph drops them
 * and keeps ids dense (the emitters and partitions size tables by the count).
 * cs_make hash-conses the copies, so sharing survives; shape ids and table
 * offsets stay valid (the new graph starts with the old one's shapes and
 * tables, which a program's variables refer to). A UNIFORM keeps its
 * draw number: draws are part of the RNG contract, so the program's draw
 * counts do not shrink even when a draw dies.
 */
#include <stdlib.h>

#include "jit.h"

int cs_pass_dce(cs_program *p)
{
    cs_graph *old = p->graph;
    uint32_t count = cs_graph_count(old);
    bool *live = calloc(count, sizeof *live);
    cs_node *memo = calloc(count, sizeof *memo);
    cs_node *in = NULL;
    cs_graph *g = cs_graph_new_like(old);
    int result = -1;
    if (!live || !memo || !g)
        goto done;
    unsigned widest = cs_program_mark_live(p, live);
    in = malloc((widest ? widest : 1) * sizeof *in);
    if (!in)
        goto done;
    for (cs_node n = 1; n < count; n++) {
        if (!live[n])
            continue;
        const cs_node_data *d = cs_graph_node(old, n);
        for (unsigned k = 0; k < d->n_in; k++)
            in[k] = memo[cs_graph_input(old, n, k)];
        if (!(memo[n] = cs_make(g, (cs_op)d->op, (cs_type)d->type, d->shape, d->n_in, in, d->imm)))
            goto done;
    }
    cs_program_remap_roots(p, memo);
    result = (int)(count - cs_graph_count(g));
    p->graph = g;
    g = old;   /* freed below */
done:
    cs_graph_free(g);
    free(in);
    free(memo);
    free(live);
    return result;
}
