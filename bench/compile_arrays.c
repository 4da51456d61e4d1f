/* How long a program with a 10x10x4 state takes to compile cold, and how
 * big its generated C is (issue 26: under 1 s at unroll 10, the size
 * bounded by the program's nodes, not by its arrays' elements nor the
 * unroll). The program is MinAtar's Breakout in outline, built with the IR
 * builder: a 10x10x4 grid of bools (paddle, ball, trail, bricks), the ball
 * and paddle as i32 scalars; the bricks read and cleared at the ball's
 * position (a gather, a scatter), the channels rebuilt from index arrays,
 * refilled from a table when empty.
 *
 *   make bench-arrays            (prints one line per size and unroll)
 *
 * Each compile is cold (an empty cache), timed from the program to a
 * loaded kernel (cs_emit + the C compiler + dlopen); then the cpu backend
 * and the interpreter run the same rollout, whose checksums must agree. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agents.h"
#include "jit.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void must(int ok, const char *what, const cs_graph *g)
{
    if (!ok) {
        fprintf(stderr, "compile_arrays: %s failed: %s\n", what, g ? cs_graph_error(g) : "");
        exit(1);
    }
}

/* Breakout on an n x n grid. */
static cs_program *breakout(unsigned n)
{
    cs_program *p = cs_program_new(CS_F32);
    cs_graph *g = p->graph;
    snprintf(p->name, sizeof p->name, "breakout_%u", n);
    snprintf(p->title, sizeof p->title, "Breakout-MinAtar-like");
    p->max_steps = 1000;
    unsigned d3[3] = {n, n, 4}, d2[2] = {n, n};
    uint32_t s3 = cs_shape_id(g, 3, d3), s2 = cs_shape_id(g, 2, d2);
    const char *names[6] = {"grid", "ball_x", "ball_y", "dx", "dy", "pos"};
    cs_node st[6];
    for (int k = 0; k < 6; k++) {
        int v = cs_program_add_state(p, names[k], k ? CS_I32 : CS_BOOL, k ? CS_SCALAR : s3);
        must(v >= 0, "a state", g);
        st[k] = cs_leaf_shaped(g, CS_OP_CARRIED, k ? CS_I32 : CS_BOOL, k ? CS_SCALAR : s3, p->vars[v].slot);
    }
    p->action_kind = CS_ACTION_DISCRETE;
    p->n_actions = 3;
    cs_program_add_input(p, "action", CS_I32, 0, 2);
    cs_node I[16];
    for (int k = 0; k < 16; k++)
        I[k] = cs_const(g, CS_I32, k - 1);   /* I[k + 1] is k */
    cs_node last = cs_const(g, CS_I32, n - 1), nn = cs_const(g, CS_I32, n);
    cs_node iy = cs_leaf_shaped(g, CS_OP_IOTA, CS_I32, s2, 0), ix = cs_leaf_shaped(g, CS_OP_IOTA, CS_I32, s2, 1);
    /* the bricks: channel 3 of the grid */
    unsigned start[3] = {0, 0, 3}, extent[3] = {n, n, 1};
    cs_node bricks = cs_reshape(g, cs_slice(g, st[0], start, extent), s2);
    /* the paddle moves; the ball moves, bouncing off the walls */
    cs_node action = cs_leaf(g, CS_OP_INPUT, CS_I32, 0);
    cs_node pos = cs_ternary(g, CS_OP_CLIP, cs_binary(g, CS_OP_ADD, st[5], cs_binary(g, CS_OP_SUB, action, I[2])), I[1], last);
    cs_node nx = cs_binary(g, CS_OP_ADD, st[1], st[3]);
    cs_node bounce_x = cs_binary(g, CS_OP_OR, cs_binary(g, CS_OP_LT, nx, I[1]), cs_binary(g, CS_OP_GT, nx, last));
    cs_node dx = cs_ternary(g, CS_OP_SELECT, bounce_x, cs_unary(g, CS_OP_NEG, st[3]), st[3]);
    nx = cs_ternary(g, CS_OP_CLIP, nx, I[1], last);
    cs_node ny = cs_ternary(g, CS_OP_CLIP, cs_binary(g, CS_OP_ADD, st[2], st[4]), I[1], last);
    /* a brick where the ball goes: cleared, the ball turns back */
    cs_node at[2] = {ny, nx};
    cs_node hit = cs_gather(g, bricks, 2, at);
    cs_node cleared = cs_scatter(g, bricks, cs_const(g, CS_BOOL, 0), 2, at);
    cs_node top = cs_binary(g, CS_OP_LT, ny, I[1]);
    cs_node at_bottom = cs_binary(g, CS_OP_EQ, ny, last);
    cs_node caught = cs_binary(g, CS_OP_AND, at_bottom, cs_binary(g, CS_OP_EQ, nx, pos));
    cs_node turn = cs_binary(g, CS_OP_OR, cs_binary(g, CS_OP_OR, hit, caught), cs_binary(g, CS_OP_LE, ny, I[1]));
    cs_node dy = cs_ternary(g, CS_OP_SELECT, turn, cs_unary(g, CS_OP_NEG, st[4]), st[4]);
    (void)top;
    /* no brick left: a new wall, rows 1 to 3 */
    double wall[400];
    for (unsigned k = 0; k < n * n; k++)
        wall[k] = k / n >= 1 && k / n <= 3;
    cs_node fresh_wall = cs_table(g, CS_BOOL, s2, wall);
    cs_node any_left = cs_reduce(g, CS_OP_ANY, cleared, CS_ALL_AXES);
    cs_node new_bricks = cs_ternary(g, CS_OP_SELECT, any_left, cleared, fresh_wall);
    /* the channels from the positions */
    cs_node paddle = cs_binary(g, CS_OP_AND, cs_binary(g, CS_OP_EQ, iy, last), cs_binary(g, CS_OP_EQ, ix, pos));
    cs_node ball = cs_binary(g, CS_OP_AND, cs_binary(g, CS_OP_EQ, iy, ny), cs_binary(g, CS_OP_EQ, ix, nx));
    cs_node trail = cs_binary(g, CS_OP_AND, cs_binary(g, CS_OP_EQ, iy, st[2]), cs_binary(g, CS_OP_EQ, ix, st[1]));
    cs_node channels[4] = {paddle, ball, trail, new_bricks};
    p->next[0] = cs_stack_axis(g, 4, channels, 2);
    p->next[1] = nx;
    p->next[2] = ny;
    p->next[3] = dx;
    p->next[4] = dy;
    p->next[5] = pos;
    p->reward = cs_cast(g, CS_F32, hit);
    p->terminated = cs_binary(g, CS_OP_AND, at_bottom, cs_unary(g, CS_OP_NOT, caught));
    /* a fresh game: the ball somewhere on row 3, going down left or right */
    cs_node x0 = cs_binary(g, CS_OP_BOUNDED, cs_leaf(g, CS_OP_RANDBITS, CS_U32, CS_UNIFORM_ID(CS_STREAM_RESTART, 0)), nn);
    cs_node right = cs_binary(g, CS_OP_LT, cs_leaf(g, CS_OP_UNIFORM, CS_F32, CS_UNIFORM_ID(CS_STREAM_RESTART, 1)),
                              cs_const(g, CS_F32, 0.5));
    cs_node start_channels[4] = {cs_binary(g, CS_OP_AND, cs_binary(g, CS_OP_EQ, iy, last), cs_binary(g, CS_OP_EQ, ix, I[5])),
                                 cs_binary(g, CS_OP_AND, cs_binary(g, CS_OP_EQ, iy, I[4]), cs_binary(g, CS_OP_EQ, ix, x0)),
                                 cs_broadcast(g, cs_const(g, CS_BOOL, 0), s2), fresh_wall};
    p->restart[0] = cs_stack_axis(g, 4, start_channels, 2);
    p->restart[1] = x0;
    p->restart[2] = I[4];
    p->restart[3] = cs_ternary(g, CS_OP_SELECT, right, I[2], I[0]);
    p->restart[4] = I[2];
    p->restart[5] = I[5];
    cs_program_add_obs(p, "grid", st[0], CS_OBS_BOX, 0, 1, 0);
    char err[256];
    must(cs_program_finish(p, err, sizeof err) == 0, err, g);
    must(cs_policy_random(p) == 0 && cs_program_bind_policy(p) == 0, "the random policy", g);
    return p;
}

static unsigned long long checksum(const cs_program *p, const cs_lanes *l)
{
    unsigned long long h = CS_FNV1A_START;
    for (unsigned k = 0; k < p->n_carried; k++)
        h = cs_fnv1a(h, l->carried[k], (size_t)l->stride * (p->carried[k].type == CS_BOOL ? 1 : 4));
    h = cs_fnv1a(h, l->segments, (size_t)l->stride * sizeof(long long));
    return h;
}

/* One rollout of `steps` on n lanes: its checksum and env-steps per second. */
static unsigned long long rollout(const cs_program *p, void (*restart)(const cs_lanes *), void (*run)(const cs_lanes *),
                                  long long lanes, long long steps, double *rate)
{
    void **carried = calloc(p->n_carried, sizeof *carried);
    for (unsigned k = 0; k < p->n_carried; k++)
        carried[k] = calloc((size_t)lanes, 4);
    int *segstep = calloc((size_t)lanes, sizeof(int));
    double *seg_return = calloc((size_t)lanes, sizeof(double)), *return_sum = calloc((size_t)lanes, sizeof(double));
    long long *segments = calloc((size_t)lanes, sizeof(long long)), *nonfinite = calloc((size_t)lanes, sizeof(long long));
    float *obs = calloc((size_t)lanes * p->n_obs, sizeof(float));
    cs_lanes l = {.begin = 0, .end = lanes, .seed = 7, .stride = lanes, .carried = carried, .segstep = segstep,
                  .obs = obs, .seg_return = seg_return, .segments = segments, .return_sum = return_sum,
                  .nonfinite = nonfinite};
    restart(&l);
    l.steps = steps;
    double t0 = now_ms();
    run(&l);
    *rate = (double)lanes * steps / ((now_ms() - t0) / 1e3);
    unsigned long long h = checksum(p, &l);
    for (unsigned k = 0; k < p->n_carried; k++)
        free(carried[k]);
    free(carried);
    free(segstep);
    free(seg_return);
    free(return_sum);
    free(segments);
    free(nonfinite);
    free(obs);
    return h;
}

static const cs_program *interp_program;
static void interp_restart(const cs_lanes *l) { cs_interp_restart(interp_program, l); }
static void interp_rollout(const cs_lanes *l) { cs_interp_rollout(interp_program, l); }

int main(void)
{
    const unsigned sizes[] = {10, 20};
    const int unrolls[] = {1, 10};
    printf("%-12s %6s %10s %8s %12s %14s %10s\n", "grid", "unroll", "C bytes", "lines", "compile ms", "env-steps/s", "checksum");
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        cs_program *p = breakout(sizes[z]);
        char err[4096];
        if (cs_optimize(p, CS_FUSION_FULL, NULL, err, sizeof err)) {
            fprintf(stderr, "compile_arrays: %s\n", err);
            return 1;
        }
        interp_program = p;
        double irate;
        unsigned long long want = rollout(p, interp_restart, interp_rollout, 64, 200, &irate);
        for (size_t u = 0; u < sizeof unrolls / sizeof unrolls[0]; u++) {
            double t0 = now_ms();
            cs_schedule s = {CS_FUSION_FULL, unrolls[u], 0, 0};
            cs_plan plan;
            cs_text src = {0};
            if (cs_plan_build(p, CS_FUSION_FULL, &plan) || cs_emit(p, &plan, &s, CS_DIALECT_C, &src, err, sizeof err)) {
                fprintf(stderr, "compile_arrays: emit: %s\n", err);
                return 1;
            }
            cs_plan_free(&plan);
            cs_cache cache = {.dir = ""};   /* cold: no cache */
            cs_cpu_kernel k;
            if (cs_cpu_compile(src.data, NULL, 0, NULL, &cache, &k, err, sizeof err)) {
                fprintf(stderr, "compile_arrays: %s\n", err);
                return 1;
            }
            double ms = now_ms() - t0;
            unsigned lines = 0;
            for (size_t c = 0; c < src.len; c++)
                lines += src.data[c] == '\n';
            double rate;
            unsigned long long got = rollout(p, k.restart, k.rollout, 64, 200, &rate);
            if (got != want) {
                fprintf(stderr, "compile_arrays: the cpu backend's rollout differs from the interpreter's\n");
                return 1;
            }
            rollout(p, k.restart, k.rollout, 4096, 1000, &rate);
            char name[16];
            snprintf(name, sizeof name, "%ux%ux4", sizes[z], sizes[z]);
            printf("%-12s %6d %10zu %8u %12.0f %14.3g %10llx\n", name, unrolls[u], src.len, lines, ms, rate, got);
            cs_cpu_unload(&k);
            cs_text_free(&src);
        }
        cs_program_free(p);
    }
    return 0;
}
