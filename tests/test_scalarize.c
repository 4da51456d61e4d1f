/* The scalarize pass: small arrays become their elements without changing a
 * bit. A program with int, bool and real array states, tables, gathers,
 * scatters, every reduction, shifts, rolls, slices, stacks and array draws
 * runs on the interpreter as built and after the pass (then dce): the state
 * after a rollout, the returns and the episodes agree to the bit. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents.h"
#include "jit.h"

static cs_node K(cs_program *p, double v) { return cs_const(p->graph, p->real, v); }
static cs_node I(cs_program *p, double v) { return cs_const(p->graph, CS_I32, v); }
static cs_node bin(cs_program *p, cs_op op, cs_node a, cs_node b) { return cs_binary(p->graph, op, a, b); }
static cs_node sel(cs_program *p, cs_node c, cs_node a, cs_node b) { return cs_ternary(p->graph, CS_OP_SELECT, c, a, b); }

static uint32_t shape(cs_program *p, unsigned rank, unsigned d0, unsigned d1)
{
    unsigned dims[2] = {d0, d1};
    return cs_shape_id(p->graph, rank, dims);
}

/* Every op of the array language on small arrays; `big` makes the board
 * 5x5 (25 elements, past the pass's limit) so that it stays one node. */
static cs_program *demo(cs_type real, bool big)
{
    cs_program *p = cs_program_new(real);
    cs_graph *g = p->graph;
    unsigned side = big ? 5 : 3;
    snprintf(p->name, sizeof p->name, "arrays_demo");
    p->max_steps = 40;
    uint32_t board_shape = shape(p, 2, side, side), two = shape(p, 1, 2, 0), four = shape(p, 1, 4, 0);
    int pos = cs_program_add_state(p, "pos", CS_I32, CS_SCALAR);
    int board = cs_program_add_state(p, "board", CS_BOOL, board_shape);
    int vel = cs_program_add_state(p, "vel", real, two);
    int hist = cs_program_add_state(p, "hist", CS_I32, four);
    cr_assert(pos >= 0 && board >= 0 && vel >= 0 && hist >= 0);
    cs_node P = cs_leaf_shaped(g, CS_OP_CARRIED, CS_I32, CS_SCALAR, p->vars[pos].slot);
    cs_node B = cs_leaf_shaped(g, CS_OP_CARRIED, CS_BOOL, board_shape, p->vars[board].slot);
    cs_node V = cs_leaf_shaped(g, CS_OP_CARRIED, real, two, p->vars[vel].slot);
    cs_node H = cs_leaf_shaped(g, CS_OP_CARRIED, CS_I32, four, p->vars[hist].slot);
    p->action_kind = CS_ACTION_DISCRETE;
    p->n_actions = 4;
    cs_program_add_input(p, "action", CS_I32, 0, 3);
    cs_node a = cs_leaf(g, CS_OP_INPUT, CS_I32, 0);

    /* step: a table read at the action, an int walk with Python's % */
    double moves[4] = {1, -1, 3, -4};
    cs_node tab = cs_table(g, CS_I32, four, moves);
    cs_node d = cs_gather(g, tab, 1, &a);
    cs_node np = bin(p, CS_OP_MOD, bin(p, CS_OP_ADD, P, d), I(p, (double)side));
    /* flip the board at (pos, action % side), indices out of range on purpose sometimes */
    cs_node col = bin(p, CS_OP_SUB, bin(p, CS_OP_MOD, a, I(p, (double)side)), I(p, 1));
    cs_node at[2] = {np, col};
    cs_node cell = cs_gather(g, B, 2, at);
    cs_node nb = cs_scatter(g, B, cs_unary(g, CS_OP_NOT, cell), 2, at);
    cs_node row = cs_gather(g, nb, 1, &np);                             /* a row of the board */
    cs_node nb2 = cs_scatter(g, nb, cs_unary(g, CS_OP_NOT, row), 1, &col);  /* a whole row replaced */
    /* velocities: a roll, a half, two fresh uniform draws */
    cs_node u = cs_leaf_shaped(g, CS_OP_UNIFORM, real, two, CS_UNIFORM_ID(CS_STREAM_STEP, 0));
    cs_node nv = bin(p, CS_OP_ADD, bin(p, CS_OP_MUL, cs_roll(g, V, 0, 1), K(p, 0.5)), u);
    /* the history: shifted right by one, a random int in [0, 5) in front */
    cs_node bits = cs_leaf_shaped(g, CS_OP_RANDBITS, CS_U32, CS_SCALAR, CS_UNIFORM_ID(CS_STREAM_STEP, 2));
    cs_node r5 = bin(p, CS_OP_BOUNDED, bits, I(p, 5));
    cs_node shifted = cs_shift(g, H, r5, 0, 1);
    unsigned st[1] = {1}, ex[1] = {2};
    cs_node mid = cs_slice(g, shifted, st, ex);                     /* hist'[1:3] */
    unsigned st0[1] = {0};
    cs_node cat_items[2] = {mid, cs_slice(g, shifted, st0, ex)};
    cs_node nh = cs_concat(g, 2, cat_items, 0);                     /* [hist'[1:3], hist'[0:2]] */
    cs_node stacked_items[2] = {nv, cs_unary(g, CS_OP_NEG, nv)};
    cs_node st2 = cs_stack_axis(g, 2, stacked_items, 1);            /* 2x2 */
    cs_node flat = cs_reshape(g, st2, four);
    /* reward: every reduction */
    cs_node count = cs_reduce(g, CS_OP_NONZERO, nb2, CS_ALL_AXES);
    cs_node rowsum = cs_reduce(g, CS_OP_NONZERO, nb2, 1);           /* per row */
    cs_node reward = bin(p, CS_OP_ADD, cs_cast(g, real, count), cs_reduce(g, CS_OP_SUM, flat, CS_ALL_AXES));
    reward = bin(p, CS_OP_ADD, reward, cs_cast(g, real, cs_reduce(g, CS_OP_ARGMAX, rowsum, CS_ALL_AXES)));
    reward = bin(p, CS_OP_ADD, reward, cs_cast(g, real, cs_reduce(g, CS_OP_ARGMIN, nh, CS_ALL_AXES)));
    reward = bin(p, CS_OP_SUB, reward, cs_reduce(g, CS_OP_RMAX, nv, CS_ALL_AXES));
    reward = bin(p, CS_OP_ADD, reward, cs_cast(g, real, cs_reduce(g, CS_OP_RMIN, nh, CS_ALL_AXES)));
    cs_node full = cs_reduce(g, CS_OP_ALL, cs_reduce(g, CS_OP_ALL, nb2, 0), CS_ALL_AXES);
    cs_node big_hist = cs_reduce(g, CS_OP_ANY, bin(p, CS_OP_GT, nh, I(p, 3)), CS_ALL_AXES);
    p->next[pos] = np;
    p->next[board] = nb2;
    p->next[vel] = nv;
    p->next[hist] = nh;
    p->reward = reward;
    p->terminated = bin(p, CS_OP_AND, full, big_hist);

    /* reset: a random position, a board from iota and a table, draws */
    cs_node rb = cs_leaf_shaped(g, CS_OP_RANDBITS, CS_U32, CS_SCALAR, CS_UNIFORM_ID(CS_STREAM_RESTART, 0));
    p->restart[pos] = bin(p, CS_OP_BOUNDED, rb, I(p, (double)side));
    cs_node rows = cs_leaf_shaped(g, CS_OP_IOTA, CS_I32, board_shape, 0);
    cs_node cols = cs_leaf_shaped(g, CS_OP_IOTA, CS_I32, board_shape, 1);
    p->restart[board] = bin(p, CS_OP_EQ, bin(p, CS_OP_MOD, bin(p, CS_OP_ADD, rows, cols), I(p, 2)), I(p, 0));
    p->restart[vel] = cs_leaf_shaped(g, CS_OP_UNIFORM, real, two, CS_UNIFORM_ID(CS_STREAM_RESTART, 1));
    cs_node rbits = cs_leaf_shaped(g, CS_OP_RANDBITS, CS_U32, four, CS_UNIFORM_ID(CS_STREAM_RESTART, 3));
    p->restart[hist] = bin(p, CS_OP_BOUNDED, rbits, I(p, 4));
    cs_program_add_obs(p, "vel", V, CS_OBS_BOX, -INFINITY, INFINITY, 0);
    cs_program_add_obs(p, "pos", P, CS_OBS_DISCRETE, 0, 0, side);
    cs_program_add_obs(p, "board", B, CS_OBS_BOX, 0, 1, 0);
    cr_assert(!cs_graph_error(g)[0], "builder: %s", cs_graph_error(g));
    (void)sel;
    char err[256];
    cr_assert_eq(cs_program_finish(p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cs_policy_random(p), 0);
    cr_assert_eq(cs_program_bind_policy(p), 0);
    return p;
}

typedef struct {
    int64_t n;
    void **carried;
    size_t *size;
    unsigned n_carried;
    int *segstep;
    double *seg_return, *return_sum;
    long long *segments, *nonfinite;
    cs_lanes l;
} lanes_buf;

static void lanes_init(lanes_buf *b, const cs_program *p, int64_t n)
{
    memset(b, 0, sizeof *b);
    b->n = n;
    b->n_carried = p->n_carried;
    b->carried = calloc(p->n_carried, sizeof *b->carried);
    b->size = calloc(p->n_carried, sizeof *b->size);
    for (unsigned k = 0; k < p->n_carried; k++) {
        cs_type t = p->carried[k].type;
        b->size[k] = t == CS_BOOL ? 1 : t == CS_I32 || t == CS_F32 ? 4 : 8;
        b->carried[k] = calloc(n, b->size[k]);
    }
    b->segstep = calloc(n, sizeof(int));
    b->seg_return = calloc(n, sizeof(double));
    b->return_sum = calloc(n, sizeof(double));
    b->segments = calloc(n, sizeof(long long));
    b->nonfinite = calloc(n, sizeof(long long));
    b->l = (cs_lanes){.begin = 0, .end = n, .seed = 99, .stride = n, .carried = b->carried,
                      .segstep = b->segstep, .seg_return = b->seg_return, .segments = b->segments,
                      .return_sum = b->return_sum, .nonfinite = b->nonfinite};
}

static void lanes_free(lanes_buf *b)
{
    for (unsigned k = 0; k < b->n_carried; k++)
        free(b->carried[k]);
    free(b->carried);
    free(b->size);
    free(b->segstep);
    free(b->seg_return);
    free(b->return_sum);
    free(b->segments);
    free(b->nonfinite);
}

static void rollout(const cs_program *p, lanes_buf *b, long long steps)
{
    cs_interp_restart(p, &b->l);
    b->l.steps = steps;
    cs_interp_rollout(p, &b->l);
}

static unsigned count_arrays(const cs_program *p, bool stacks_too)
{
    unsigned n = 0;
    for (cs_node k = 1; k < cs_graph_count(p->graph); k++) {
        const cs_node_data *d = cs_graph_node(p->graph, k);
        n += d->shape != CS_SCALAR && (stacks_too || d->op != CS_OP_STACK) && d->op != CS_OP_TABLE;
    }
    return n;
}

static void same_rollouts(cs_type real, bool big)
{
    cs_program *a = demo(real, big), *b = demo(real, big);
    cr_assert_geq(cs_pass_scalarize(b), 0);
    cr_assert_geq(cs_pass_dce(b), 0);
    if (!big)
        cr_assert_eq(count_arrays(b, false), 0, "every array but the roots' stacks and the constant tables is gone");
    else
        cr_assert_gt(count_arrays(b, false), 0, "the 5x5 board stays an array");
    lanes_buf x, y;
    lanes_init(&x, a, 37);
    lanes_init(&y, b, 37);
    rollout(a, &x, 300);
    rollout(b, &y, 300);
    long long episodes = 0;
    for (int64_t i = 0; i < x.n; i++) {
        episodes += x.segments[i];
        cr_assert_eq(x.segments[i], y.segments[i], "lane %lld episodes", (long long)i);
        cr_assert(memcmp(&x.return_sum[i], &y.return_sum[i], sizeof(double)) == 0, "lane %lld return", (long long)i);
        cr_assert_eq(x.segstep[i], y.segstep[i]);
    }
    cr_assert_gt(episodes, 0, "episodes end (truncation at least)");
    for (unsigned k = 0; k < a->n_carried; k++)
        cr_assert(memcmp(x.carried[k], y.carried[k], (size_t)x.n * x.size[k]) == 0, "slot %s differs",
                  a->carried[k].name);
    lanes_free(&x);
    lanes_free(&y);
    cs_program_free(a);
    cs_program_free(b);
}

Test(scalarize, small_arrays_become_scalars_with_the_same_bits_f64) { same_rollouts(CS_F64, false); }
Test(scalarize, small_arrays_become_scalars_with_the_same_bits_f32) { same_rollouts(CS_F32, false); }
Test(scalarize, a_big_array_stays_one_node_with_the_same_bits) { same_rollouts(CS_F64, true); }

Test(scalarize, a_vector_program_keeps_its_scalar_graph)
{
    /* stack(a, b) + stack(c, d) on 2-vectors: two scalar adds, read through
     * index after the pass (the concat pass then forwards them) */
    cs_program *p = cs_program_new(CS_F64);
    cs_graph *g = p->graph;
    cr_assert_eq(cs_program_add_state(p, "x", CS_F64, CS_SCALAR), 0);
    cs_node x = cs_leaf(g, CS_OP_CARRIED, CS_F64, 0);
    cs_node v1[2] = {x, K(p, 2)}, v2[2] = {K(p, 3), x};
    cs_node sum = bin(p, CS_OP_ADD, cs_stack(g, 2, v1), cs_stack(g, 2, v2));
    p->reward = cs_index(g, sum, 1);
    cs_pass_scalarize(p);
    const cs_node_data *r = cs_graph_node(g, p->reward);
    cr_assert_eq(r->op, CS_OP_ADD);
    cr_assert_eq(r->shape, CS_SCALAR);
    cr_assert_eq(cs_graph_input(g, p->reward, 1), x);
    cs_program_free(p);
}
