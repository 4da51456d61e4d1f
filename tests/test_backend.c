/* The backends agree: a CartPole built with the builder API (the state packed
 * into a stack, the paper's way, so that `rules` has boundaries to keep) runs
 * through the interpreter and through generated C under every fusion mode
 * and unroll factor; in f64 the results are identical to the bit. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agents.h"
#include "cli_test.h"
#include "jit.h"

static cs_node K(cs_program *p, double v) { return cs_const(p->graph, p->real, v); }
static cs_node bin(cs_program *p, cs_op op, cs_node a, cs_node b) { return cs_binary(p->graph, op, a, b); }

/* CartPole-v1 in Gymnasium's operation order, written through the builder. */
static cs_program *cartpole(cs_type real)
{
    cs_program *p = cs_program_new(real);
    cs_graph *g = p->graph;
    snprintf(p->name, sizeof p->name, "cartpole_built");
    snprintf(p->title, sizeof p->title, "CartPole-v1");
    p->max_steps = 500;
    const char *names[4] = {"x", "x_dot", "theta", "theta_dot"};
    cs_node s[4];
    for (int k = 0; k < 4; k++) {
        cs_program_add_state(p, names[k], real, CS_SCALAR);
        s[k] = cs_leaf(g, CS_OP_CARRIED, real, k);
    }
    p->action_kind = CS_ACTION_DISCRETE;
    p->n_actions = 2;
    cs_program_add_input(p, "action", CS_I32, 0, 1);
    cs_node packed = cs_stack(g, 4, s);
    cs_node x = cs_index(g, packed, 0), xd = cs_index(g, packed, 1);
    cs_node th = cs_index(g, packed, 2), thd = cs_index(g, packed, 3);
    cs_node action = cs_cast(g, real, cs_leaf(g, CS_OP_INPUT, CS_I32, 0));
    cs_node force = cs_ternary(g, CS_OP_SELECT, bin(p, CS_OP_EQ, action, K(p, 1)), K(p, 10), K(p, -10));
    cs_node cost = cs_unary(g, CS_OP_COS, th), sint = cs_unary(g, CS_OP_SIN, th);
    cs_node total = bin(p, CS_OP_ADD, K(p, 0.1), K(p, 1.0));
    cs_node pml = bin(p, CS_OP_MUL, K(p, 0.1), K(p, 0.5));
    cs_node temp = bin(p, CS_OP_DIV,
                       bin(p, CS_OP_ADD, force, bin(p, CS_OP_MUL, bin(p, CS_OP_MUL, pml, bin(p, CS_OP_MUL, thd, thd)), sint)),
                       total);
    cs_node thacc = bin(p, CS_OP_DIV, bin(p, CS_OP_SUB, bin(p, CS_OP_MUL, K(p, 9.8), sint), bin(p, CS_OP_MUL, cost, temp)),
                        bin(p, CS_OP_MUL, K(p, 0.5),
                            bin(p, CS_OP_SUB, bin(p, CS_OP_DIV, K(p, 4.0), K(p, 3.0)),
                                bin(p, CS_OP_DIV, bin(p, CS_OP_MUL, K(p, 0.1), bin(p, CS_OP_MUL, cost, cost)), total))));
    cs_node xacc = bin(p, CS_OP_SUB, temp, bin(p, CS_OP_DIV, bin(p, CS_OP_MUL, bin(p, CS_OP_MUL, pml, thacc), cost), total));
    cs_node tau = K(p, 0.02);
    cs_node nx[4] = {bin(p, CS_OP_ADD, x, bin(p, CS_OP_MUL, tau, xd)), bin(p, CS_OP_ADD, xd, bin(p, CS_OP_MUL, tau, xacc)),
                     bin(p, CS_OP_ADD, th, bin(p, CS_OP_MUL, tau, thd)), bin(p, CS_OP_ADD, thd, bin(p, CS_OP_MUL, tau, thacc))};
    cs_node thr = K(p, 12 * 2 * M_PI / 360);
    cs_node term = bin(p, CS_OP_OR,
                       bin(p, CS_OP_OR, bin(p, CS_OP_LT, nx[0], K(p, -2.4)), bin(p, CS_OP_GT, nx[0], K(p, 2.4))),
                       bin(p, CS_OP_OR, bin(p, CS_OP_LT, nx[2], cs_unary(g, CS_OP_NEG, thr)), bin(p, CS_OP_GT, nx[2], thr)));
    for (int k = 0; k < 4; k++) {
        p->next[k] = nx[k];
        cs_node u = cs_leaf(g, CS_OP_UNIFORM, real, CS_UNIFORM_ID(CS_STREAM_RESTART, k));
        p->restart[k] = bin(p, CS_OP_ADD, K(p, -0.05), bin(p, CS_OP_MUL, bin(p, CS_OP_SUB, K(p, 0.05), K(p, -0.05)), u));
        cs_program_add_obs(p, NULL, s[k], CS_OBS_BOX, -INFINITY, INFINITY, 0);
    }
    p->reward = K(p, 1.0);
    p->terminated = term;
    char err[256];
    cr_assert_eq(cs_program_finish(p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cs_policy_random(p), 0);
    cr_assert_eq(cs_program_bind_policy(p), 0);
    return p;
}

typedef struct {
    int64_t n;
    void *carried[4];
    int *segstep;
    double *seg_return, *return_sum;
    long long *segments, *nonfinite;
    float *obs;
    cs_lanes l;
} lanes_buf;

static void lanes_init(lanes_buf *b, int64_t n, size_t real_size)
{
    memset(b, 0, sizeof *b);
    b->n = n;
    for (int k = 0; k < 4; k++)
        b->carried[k] = calloc(n, real_size);
    b->segstep = calloc(n, sizeof(int));
    b->seg_return = calloc(n, sizeof(double));
    b->return_sum = calloc(n, sizeof(double));
    b->segments = calloc(n, sizeof(long long));
    b->nonfinite = calloc(n, sizeof(long long));
    b->obs = calloc(4 * n, sizeof(float));
    b->l = (cs_lanes){.begin = 0, .end = n, .seed = 1234, .stride = n, .carried = b->carried,
                      .segstep = b->segstep, .obs = b->obs, .seg_return = b->seg_return,
                      .segments = b->segments, .return_sum = b->return_sum, .nonfinite = b->nonfinite};
}

static void lanes_free(lanes_buf *b)
{
    for (int k = 0; k < 4; k++)
        free(b->carried[k]);
    free(b->segstep);
    free(b->seg_return);
    free(b->return_sum);
    free(b->segments);
    free(b->nonfinite);
    free(b->obs);
}

static void rollout_interp(const cs_program *p, lanes_buf *b, long long steps)
{
    b->l.t = 0;
    cs_interp_restart(p, &b->l);
    b->l.steps = steps;
    cs_interp_rollout(p, &b->l);
}

/* p's C dialect under `fusion` and `unroll`, planned as the driver plans
 * it; *kernels, when asked: the kernels one step runs. */
static cs_text emit_c(const cs_program *p, cs_fusion fusion, int unroll, unsigned *kernels)
{
    cs_schedule s = {fusion, unroll, 0, 0};
    cs_text src = {0};
    char err[1024];
    cs_plan plan;
    cr_assert_eq(cs_plan_build(p, fusion, &plan), 0);
    cr_assert_eq(cs_emit(p, &plan, &s, CS_DIALECT_C, &src, err, sizeof err), 0, "%s", err);
    if (kernels)
        *kernels = plan.roll.n_kernels;
    cs_plan_free(&plan);
    return src;
}

/* ...compiled without the cache (every compile fresh) */
static void compile_c(const cs_program *p, cs_fusion fusion, int unroll, cs_cpu_kernel *k, unsigned *kernels)
{
    cs_text src = emit_c(p, fusion, unroll, kernels);
    char err[1024];
    cs_cache cache = {.dir = ""};
    cr_assert_eq(cs_cpu_compile(src.data, NULL, 0, NULL, &cache, k, err, sizeof err), 0, "%s", err);
    cs_text_free(&src);
}

static void rollout_cpu(const cs_program *p, cs_fusion fusion, int unroll, lanes_buf *b, long long steps)
{
    cs_cpu_kernel k;
    compile_c(p, fusion, unroll, &k, NULL);
    b->l.t = 0;
    k.restart(&b->l);
    b->l.steps = steps;
    k.rollout(&b->l);
    cs_cpu_unload(&k);
}

static void assert_same(const lanes_buf *a, const lanes_buf *b, size_t real_size, const char *what)
{
    for (int k = 0; k < 4; k++)
        cr_assert_eq(memcmp(a->carried[k], b->carried[k], a->n * real_size), 0, "%s: state %d differs", what, k);
    cr_assert_eq(memcmp(a->segstep, b->segstep, a->n * sizeof(int)), 0, "%s: episode steps differ", what);
    cr_assert_eq(memcmp(a->segments, b->segments, a->n * sizeof(long long)), 0, "%s: episodes differ", what);
    cr_assert_eq(memcmp(a->return_sum, b->return_sum, a->n * sizeof(double)), 0, "%s: returns differ", what);
}

Test(backend, cpu_equals_interp_bit_for_bit_in_f64)
{
    cs_program *p = cartpole(CS_F64);
    lanes_buf ref;
    lanes_init(&ref, 300, sizeof(double));   /* more than one block, not a multiple */
    rollout_interp(p, &ref, 257);
    long long episodes = 0;
    for (int i = 0; i < 300; i++)
        episodes += ref.segments[i];
    cr_assert_gt(episodes, 300, "random CartPole episodes last ~22 steps");
    const cs_fusion fusions[] = {CS_FUSION_FULL, CS_FUSION_RULES, CS_FUSION_NONE};
    const int unrolls[] = {1, 10, 64};
    for (int a = 0; a < 3; a++)
        for (int u = 0; u < 3; u++) {
            if (fusions[a] == CS_FUSION_NONE && unrolls[u] == 64)
                continue;   /* hundreds of loops x 64: slow to compile, nothing new */
            lanes_buf got;
            lanes_init(&got, 300, sizeof(double));
            rollout_cpu(p, fusions[a], unrolls[u], &got, 257);
            char what[64];
            snprintf(what, sizeof what, "%s unroll %d", cs_fusion_name(fusions[a]), unrolls[u]);
            assert_same(&ref, &got, sizeof(double), what);
            lanes_free(&got);
        }
    lanes_free(&ref);
    cs_program_free(p);
}

/* f64 CartPole's sin and cos in the C dialect: a vector loop of the near
 * functions, glibc (one sincos) for the far lanes only (jit/emit.c,
 * emit_near64_pass), in the rollout and the step entry; not a scalar pass
 * calling glibc for every lane, which costs half of an f64 step. */
Test(backend, f64_sin_cos_by_near_functions_and_glibc_for_far_lanes)
{
    cs_program *p = cartpole(CS_F64);
    cs_text src = emit_c(p, CS_FUSION_FULL, 10, NULL);
    const char *want[] = {"= cs_sin_near(v", "= cs_cos_near(v", "cs_sincos(v", "nf_ = cs_list_lanes64(B->far, n, B->far_at);"};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        int times = 0;
        for (const char *at = strstr(src.data, want[k]); at; at = strstr(at + 1, want[k]))
            times++;
        cr_assert_eq(times, 2, "'%s' %d times, not once in the rollout and once in the step", want[k], times);
    }
    cs_text_free(&src);
    cs_program_free(p);
}

Test(backend, cpu_close_to_interp_in_f32)
{
    cs_program *p = cartpole(CS_F32);
    lanes_buf ref, got;
    lanes_init(&ref, 64, sizeof(float));
    lanes_init(&got, 64, sizeof(float));
    rollout_interp(p, &ref, 20);
    rollout_cpu(p, CS_FUSION_FULL, 4, &got, 20);
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 64; i++) {
            float a = ((float *)ref.carried[k])[i], b = ((float *)got.carried[k])[i];
            cr_assert(fabsf(a - b) <= 1e-5f * fmaxf(1.0f, fabsf(a)), "state %d lane %d: %g vs %g", k, i, a, b);
        }
    lanes_free(&ref);
    lanes_free(&got);
    cs_program_free(p);
}

/* The C dialect selects reals through bit masks (so that GCC vectorizes
 * them): min, max, clip and select must still pick exactly what the
 * interpreter picks for -0.0, +0.0, NaN and infinities, operand order
 * included. One step from every triple of special values; each result is
 * encoded as a finite number (NaN and the sign of a zero apart) so that the
 * step's non-finite check does not restart the lane. */
static cs_node finite_code(cs_program *p, cs_node r)
{
    cs_graph *g = p->graph;
    cs_node zero_code = cs_ternary(g, CS_OP_SELECT, bin(p, CS_OP_LT, bin(p, CS_OP_DIV, K(p, 1), r), K(p, 0)), K(p, -500), K(p, 500));
    cs_node finite = cs_ternary(g, CS_OP_SELECT, bin(p, CS_OP_EQ, r, K(p, 0)), zero_code,
                                cs_ternary(g, CS_OP_SELECT, bin(p, CS_OP_GT, cs_unary(g, CS_OP_ABS, r), K(p, 1e30)),
                                           bin(p, CS_OP_MUL, K(p, 700), cs_ternary(g, CS_OP_SELECT, bin(p, CS_OP_LT, r, K(p, 0)), K(p, -1), K(p, 1))), r));
    return cs_ternary(g, CS_OP_SELECT, bin(p, CS_OP_NE, r, r), K(p, 1000), finite);
}

static cs_program *selects(cs_type real)
{
    cs_program *p = cs_program_new(real);
    cs_graph *g = p->graph;
    snprintf(p->name, sizeof p->name, "selects");
    p->max_steps = 100;
    const char *names[4] = {"x", "y", "z", "w"};
    cs_node s[4];
    for (int k = 0; k < 4; k++) {
        cs_program_add_state(p, names[k], real, CS_SCALAR);
        s[k] = cs_leaf(g, CS_OP_CARRIED, real, k);
    }
    p->action_kind = CS_ACTION_DISCRETE;
    p->n_actions = 2;
    cs_program_add_input(p, "action", CS_I32, 0, 1);
    cs_node r[4] = {bin(p, CS_OP_MIN, s[0], s[1]), bin(p, CS_OP_MAX, s[0], s[1]),
                    cs_ternary(g, CS_OP_CLIP, s[0], s[1], s[2]),
                    cs_ternary(g, CS_OP_SELECT, bin(p, CS_OP_GE, s[0], s[2]), s[1], s[2])};
    for (int k = 0; k < 4; k++) {
        p->next[k] = finite_code(p, r[k]);
        p->restart[k] = K(p, 0);
        cs_program_add_obs(p, NULL, s[k], CS_OBS_BOX, -INFINITY, INFINITY, 0);
    }
    p->reward = K(p, 0);
    p->terminated = cs_const(g, CS_BOOL, 0);
    char err[256];
    cr_assert_eq(cs_program_finish(p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cs_policy_random(p), 0);
    cr_assert_eq(cs_program_bind_policy(p), 0);
    return p;
}

static void fill_special_triples(lanes_buf *b, cs_type real)
{
    const double v[6] = {-0.0, 0.0, NAN, 1.0, -1.0, INFINITY};
    for (int i = 0; i < 216; i++)
        for (int k = 0; k < 4; k++) {
            double x = v[k == 3 ? 0 : (i / (k == 0 ? 1 : k == 1 ? 6 : 36)) % 6];
            if (real == CS_F32)
                ((float *)b->carried[k])[i] = (float)x;
            else
                ((double *)b->carried[k])[i] = x;
        }
    b->l.t = 0;
    b->l.steps = 1;
}

Test(backend, cpu_selects_pick_what_the_interpreter_picks)
{
    const cs_type reals[2] = {CS_F32, CS_F64};
    for (int t = 0; t < 2; t++) {
        size_t size = reals[t] == CS_F32 ? sizeof(float) : sizeof(double);
        cs_program *p = selects(reals[t]);
        lanes_buf ref, got;
        lanes_init(&ref, 216, size);
        lanes_init(&got, 216, size);
        fill_special_triples(&ref, reals[t]);
        fill_special_triples(&got, reals[t]);
        cs_interp_rollout(p, &ref.l);
        cs_cpu_kernel k;
        compile_c(p, CS_FUSION_FULL, 1, &k, NULL);
        k.rollout(&got.l);
        cs_cpu_unload(&k);
        /* lane 1: x = +0.0, y = -0.0: min and max keep x, as NumPy's np.minimum does not */
        double min01 = reals[t] == CS_F32 ? ((float *)ref.carried[0])[1] : ((double *)ref.carried[0])[1];
        cr_assert_eq(min01, 500, "min(+0.0, -0.0) is %g in the interpreter", min01);
        assert_same(&ref, &got, size, reals[t] == CS_F32 ? "f32" : "f64");
        lanes_free(&ref);
        lanes_free(&got);
        cs_program_free(p);
    }
}

/* f32 fmod and % in the C dialect: a vector pass by cs_fmodf_near, redone
 * exactly (cs_fmodf) for a block where some lane's quotient is past the
 * near range (jit/emit.c, emit_call_pass). Block 0 (lanes 0-255) holds only
 * near dividends, of every magnitude and both signs; block 1 adds far ones
 * among near ones, and the near/far boundaries. Two steps, by constant and
 * by state divisors (the last: fmod then a floored % by a negative one),
 * must give the interpreter's bits. */
/* An f32 program of four states observed as they are (restarting at 0),
 * a random discrete action that nothing reads, no reward and no end: the
 * caller sets next[0..3] between the two halves. */
static cs_program *four_states(const char *name, const char *const names[4], cs_node s[4])
{
    cs_program *p = cs_program_new(CS_F32);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->max_steps = 100;
    for (int k = 0; k < 4; k++) {
        cs_program_add_state(p, names[k], CS_F32, CS_SCALAR);
        s[k] = cs_leaf(p->graph, CS_OP_CARRIED, CS_F32, k);
        p->restart[k] = K(p, 0);
        cs_program_add_obs(p, NULL, s[k], CS_OBS_BOX, -INFINITY, INFINITY, 0);
    }
    p->action_kind = CS_ACTION_DISCRETE;
    p->n_actions = 2;
    cs_program_add_input(p, "action", CS_I32, 0, 1);
    return p;
}

static cs_program *four_states_finish(cs_program *p)
{
    p->reward = K(p, 0);
    p->terminated = cs_const(p->graph, CS_BOOL, 0);
    char err[256];
    cr_assert_eq(cs_program_finish(p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cs_policy_random(p), 0);
    cr_assert_eq(cs_program_bind_policy(p), 0);
    return p;
}

static cs_program *modulos(void)
{
    static const char *const names[4] = {"x", "r0", "r1", "r2"};
    cs_node s[4];
    cs_program *p = four_states("modulos", names, s);
    p->next[0] = s[0];
    p->next[1] = bin(p, CS_OP_MOD, s[0], K(p, (float)(2 * M_PI)));
    p->next[2] = bin(p, CS_OP_FMOD, s[0], K(p, 0.1f));
    p->next[3] = bin(p, CS_OP_MOD, bin(p, CS_OP_FMOD, s[0], bin(p, CS_OP_ADD, s[1], K(p, 0.5))),
                     bin(p, CS_OP_SUB, s[2], K(p, 3)));
    return four_states_finish(p);
}

static void fill_dividends(lanes_buf *b)
{
    float *x = b->carried[0];
    /* near for every op: |x| < 0.1f 2^29 (fmod by 0.1 has the smallest range) */
    for (int i = 0; i < 256; i++)
        x[i] = (i & 1 ? -1.0f : 1.0f) * ldexpf(1.0f + (float)i / 256, i / 5 - 27);
    x[0] = 0.0f;
    x[1] = -0.0f;
    x[2] = 0x1p-149f;
    x[3] = nextafterf(0.1f * 0x1p29f, 0);
    x[4] = 6.28318548f;
    for (int i = 256; i < 300; i++)
        x[i] = (float)(i - 278) * 0.37f;
    const float far[] = {0.1f * 0x1p29f, -6.28318548f * 0x1p29f, nextafterf(6.28318548f * 0x1p29f, 0), 1e10f,
                         -3.4e38f, 0x1p100f};
    for (size_t k = 0; k < sizeof far / sizeof far[0]; k++)
        x[260 + 5 * k] = far[k];
    b->l.t = 0;
    b->l.steps = 2;
}

/* n lanes of the f32 program p from fill's state, rolled out by the
 * interpreter into *ref and by the C dialect under `unroll`: the same
 * bits. */
static void expect_cpu_as_interp(const cs_program *p, int64_t n, void (*fill)(lanes_buf *), int unroll,
                                 lanes_buf *ref, const char *what)
{
    lanes_buf got;
    lanes_init(ref, n, sizeof(float));
    lanes_init(&got, n, sizeof(float));
    fill(ref);
    fill(&got);
    cs_interp_rollout(p, &ref->l);
    cs_cpu_kernel k;
    compile_c(p, CS_FUSION_FULL, unroll, &k, NULL);
    k.rollout(&got.l);
    cs_cpu_unload(&k);
    assert_same(ref, &got, sizeof(float), what);
    lanes_free(&got);
}

Test(backend, cpu_modulos_exact_near_and_far_as_the_interpreter)
{
    cs_program *p = modulos();
    const int unrolls[] = {1, 4};
    for (int u = 0; u < 2; u++) {
        lanes_buf ref;
        expect_cpu_as_interp(p, 300, fill_dividends, unrolls[u], &ref, unrolls[u] == 1 ? "unroll 1" : "unroll 4");
        /* the far lanes were reduced: a remainder below its divisor */
        cr_assert_lt(fabsf(((float *)ref.carried[1])[275]), 6.3f);
        lanes_free(&ref);
    }
    cs_program_free(p);
}

/* f32 sin and cos of a leaf in the C dialect: a kernel loop with
 * cs_sinf_near and cs_cosf_near, taken at a step where every lane's angle
 * is within 0.75, and the exact loop otherwise (jit/emit.c, trig_near).
 * Block 0 (lanes 0-255) starts all near and turns far from the fifth step;
 * block 1 mixes far angles among near ones; the three-lane batch runs the
 * short variant. sin of an expression (2x) is never near. Every step must
 * give the interpreter's bits. */
static cs_program *angles(void)
{
    static const char *const names[4] = {"x", "s", "c", "y"};
    cs_node v[4];
    cs_program *p = four_states("angles", names, v);
    cs_graph *g = p->graph;
    p->next[0] = bin(p, CS_OP_ADD, v[0], K(p, 0.125));
    p->next[1] = cs_unary(g, CS_OP_SIN, v[0]);
    p->next[2] = cs_unary(g, CS_OP_COS, v[0]);
    p->next[3] = cs_unary(g, CS_OP_SIN, bin(p, CS_OP_ADD, v[0], v[0]));
    return four_states_finish(p);
}

static void fill_angles(lanes_buf *b)
{
    float *x = b->carried[0];
    for (int64_t i = 0; i < b->n; i++)
        x[i] = -0.7f + (float)(i % 256) / 256;   /* block 0: [-0.7, 0.3], near for four steps */
    const float far[] = {0.75f, 0.7500001f, -0.76f, 2.5f, -3.0f, 100.0f, 1e6f, -0.0f, 0x1p-149f};
    for (size_t k = 0; k < sizeof far / sizeof far[0] && 260 + 4 * k < (size_t)b->n; k++)
        x[260 + 4 * k] = far[k];
    b->l.t = 0;
    b->l.steps = 8;
}

Test(backend, cpu_sin_cos_of_leaves_near_and_far_as_the_interpreter)
{
    cs_program *p = angles();
    cs_text src = emit_c(p, CS_FUSION_FULL, 1, NULL);
    cr_assert(strstr(src.data, "if (near_)") && strstr(src.data, "= cs_sinf_near(") &&
                  strstr(src.data, "= cs_cosf_near("),
              "no near copy");
    cs_text_free(&src);
    const int64_t sizes[] = {300, 3};
    for (int z = 0; z < 2; z++) {
        lanes_buf ref;
        expect_cpu_as_interp(p, sizes[z], fill_angles, 1, &ref, z ? "3 lanes" : "300 lanes");
        lanes_free(&ref);
    }
    cs_program_free(p);
}

/* --no-persistent with rules or none on the cpu: a launch runs one kernel of
 * one step (cs_lanes.launch), the values crossing kernels kept in the
 * caller's blocks. Launch by launch, the rollout equals the interpreter's to
 * the bit, and a launch before the last one moves no state. */
Test(backend, cpu_launches_one_kernel_per_call)
{
    cs_program *p = cartpole(CS_F64);
    lanes_buf ref, got;
    lanes_init(&ref, 300, sizeof(double));
    lanes_init(&got, 300, sizeof(double));
    rollout_interp(p, &ref, 40);
    cs_cpu_kernel k;
    unsigned kernels;
    compile_c(p, CS_FUSION_RULES, 1, &k, &kernels);
    cr_assert_gt(kernels, 1, "rules keeps the stack a boundary");
    void *blocks = calloc(2, k.block_bytes);   /* 300 lanes: two blocks */
    got.l.t = 0;
    k.restart(&got.l);
    double x0 = ((double *)got.carried[0])[7];
    for (long long t = 0; t < 40; t++)
        for (unsigned j = 0; j < kernels; j++) {
            cs_lanes one = got.l;
            one.t = t;
            one.steps = 1;
            one.launch = (int)j + 1;
            one.blocks = blocks;
            k.rollout(&one);
            if (t == 0 && j + 1 < kernels)
                cr_assert_eq(((double *)got.carried[0])[7], x0, "kernel %u of %u moved the state", j, kernels);
        }
    cr_assert_neq(((double *)got.carried[0])[7], x0, "the last kernel moves the state");
    assert_same(&ref, &got, sizeof(double), "rules, a launch per kernel");
    free(blocks);
    cs_cpu_unload(&k);
    lanes_free(&ref);
    lanes_free(&got);
    cs_program_free(p);
}

/* A walk of one state x by a per-environment step k, both drawn at each
 * restart (k a parameter redrawn, as `--param k=LO:HI` does), ended by
 * |x| > 0.8 at random steps and truncated at the ninth: most lanes of a
 * block restart together there, more than 8 of every 64. */
static cs_program *walk(void)
{
    cs_program *p = cs_program_new(CS_F64);
    cs_graph *g = p->graph;
    snprintf(p->name, sizeof p->name, "walk");
    p->max_steps = 9;
    cs_program_add_state(p, "x", CS_F64, CS_SCALAR);
    cs_program_add_param(p, "k", CS_F64);
    cs_node x = cs_leaf(g, CS_OP_CARRIED, CS_F64, 0), k = cs_leaf(g, CS_OP_PARAM, CS_F64, 0);
    p->action_kind = CS_ACTION_DISCRETE;
    p->n_actions = 2;
    cs_program_add_input(p, "action", CS_I32, 0, 1);
    cs_node a = cs_cast(g, CS_F64, cs_leaf(g, CS_OP_INPUT, CS_I32, 0));
    cs_node nx = bin(p, CS_OP_ADD, x, bin(p, CS_OP_MUL, k, bin(p, CS_OP_SUB, a, K(p, 0.5))));
    p->next[0] = nx;
    p->restart[0] = bin(p, CS_OP_MUL, K(p, 0.1), cs_leaf(g, CS_OP_UNIFORM, CS_F64, CS_UNIFORM_ID(CS_STREAM_RESTART, 0)));
    p->param_restart[0] = bin(p, CS_OP_ADD, K(p, 0.25), cs_leaf(g, CS_OP_UNIFORM, CS_F64, CS_UNIFORM_ID(CS_STREAM_RESTART, 1)));
    cs_program_add_obs(p, NULL, x, CS_OBS_BOX, -INFINITY, INFINITY, 0);
    p->reward = k;
    p->terminated = bin(p, CS_OP_OR, bin(p, CS_OP_GT, nx, K(p, 0.8)), bin(p, CS_OP_LT, nx, K(p, -0.8)));
    char err[256];
    cr_assert_eq(cs_program_finish(p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cs_policy_random(p), 0);
    cr_assert_eq(cs_program_bind_policy(p), 0);
    return p;
}

/* The lanes of a wide block whose episode ends restart together, as a
 * step is computed (jit/emit.c, cs_rollout_restarts: one list, one vector
 * loop of fresh states), not one call of cs_fresh per lane; a rollout that
 * reads a per-environment parameter runs padded as any other (its pad
 * lanes read copies of the last lane's parameters past the batch); at every
 * batch size (short blocks of 1 to 4 lanes, which restart lane by lane,
 * padded ones, several blocks) the states, parameters, episodes and returns
 * are the interpreter's bits. */
Test(backend, cpu_restarts_a_blocks_ended_lanes_together_as_the_interpreter)
{
    cs_program *p = walk();
    cs_text src = emit_c(p, CS_FUSION_FULL, 1, NULL);
    cr_assert(strstr(src.data, "cs_rollout_restarts(B, L, n, b0, t + 1);"),
              "the rollout does not restart a wide block's ended lanes together");
    cr_assert(strstr(src.data, "const int nv = short_ ? CS_SHORT : (n + CS_PAD - 1) / CS_PAD * CS_PAD;"),
              "a rollout that reads a parameter is not padded: 1 to 7 lanes run scalar");
    cr_assert(strstr(src.data, "for (int k_ = 0; k_ < 1; k_++)") &&
                  strstr(src.data, "((double *)L->params[k_])[b0 + i] = ((const double *)L->params[k_])[b0 + n - 1];"),
              "the pad lanes' parameters are not the last lane's");
    cs_text_free(&src);
    const int64_t sizes[] = {1, 3, 4, 5, 8, 65, 300};
    const int unrolls[] = {1, 4};
    for (int u = 0; u < 2; u++) {
        cs_cpu_kernel kernel;
        compile_c(p, CS_FUSION_FULL, unrolls[u], &kernel, NULL);
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            int64_t n = sizes[z];
            lanes_buf ref, got;
            lanes_init(&ref, n, sizeof(double));
            lanes_init(&got, n, sizeof(double));
            /* the parameters with room for the pad lanes (jit/lanes.h) */
            size_t room = (size_t)n + CS_LANES_PAD;
            double *k_ref = calloc(room, sizeof(double)), *k_got = calloc(room, sizeof(double));
            void *params_ref[1] = {k_ref}, *params_got[1] = {k_got};
            ref.l.params = params_ref;
            got.l.params = params_got;
            rollout_interp(p, &ref, 60);
            kernel.restart(&got.l);
            got.l.steps = 60;
            kernel.rollout(&got.l);
            char what[64];
            snprintf(what, sizeof what, "%lld lanes, unroll %d", (long long)n, unrolls[u]);
            assert_same(&ref, &got, sizeof(double), what);
            cr_assert_eq(memcmp(k_ref, k_got, (size_t)n * sizeof(double)), 0, "%s: parameters differ", what);
            long long episodes = 0;
            for (int64_t i = 0; i < n; i++)
                episodes += ref.segments[i];
            cr_assert_geq(episodes, 6 * n, "%s: %lld episodes", what, episodes);
            free(k_ref);
            free(k_got);
            lanes_free(&ref);
            lanes_free(&got);
        }
        cs_cpu_unload(&kernel);
    }
    cs_program_free(p);
}

/* A rollout's pad lanes write their parameters only past the batch's end,
 * within the CS_LANES_PAD lanes that lanes.h promises there, whatever the
 * call's first lane: calls on slices of a batch of 20 walks (as a strict
 * rerun makes them), one ending inside it (whose pad lanes read the next
 * lanes' parameters and must leave them), one of 1 lane at the end from an
 * odd first lane (a short block whose pad lanes reach 7 past the end), give
 * the interpreter's bits in every lane and parameter, and the lanes past
 * the promised room keep what they held. */
Test(backend, pad_lanes_write_parameters_only_past_the_batch)
{
    cs_program *p = walk();
    cs_text src = emit_c(p, CS_FUSION_FULL, 1, NULL);
    cr_assert(strstr(src.data, "if (b0 + n == L->stride)"), "the pad lanes' parameters are not written past the batch");
    cs_text_free(&src);
    cs_cpu_kernel kernel;
    compile_c(p, CS_FUSION_FULL, 1, &kernel, NULL);
    enum { S = 20, GUARD = 8 };
    const long long slices[][2] = {{0, 13}, {13, 19}, {19, 20}, {3, 20}};
    lanes_buf ref, got;
    lanes_init(&ref, S, sizeof(double));
    lanes_init(&got, S, sizeof(double));
    double k_ref[S + CS_LANES_PAD + GUARD], k_got[S + CS_LANES_PAD + GUARD];
    for (int i = 0; i < S + CS_LANES_PAD + GUARD; i++)
        k_ref[i] = k_got[i] = -1234.5;
    void *params_ref[1] = {k_ref}, *params_got[1] = {k_got};
    ref.l.params = params_ref;
    got.l.params = params_got;
    ref.l.t = got.l.t = 0;
    cs_interp_restart(p, &ref.l);
    kernel.restart(&got.l);
    for (int c = 0; c < 4; c++) {
        ref.l.begin = got.l.begin = slices[c][0];
        ref.l.end = got.l.end = slices[c][1];
        ref.l.t = got.l.t = 100 * c;
        ref.l.steps = got.l.steps = 30;
        cs_interp_rollout(p, &ref.l);
        kernel.rollout(&got.l);
        char what[64];
        snprintf(what, sizeof what, "lanes [%lld, %lld) of %d", slices[c][0], slices[c][1], S);
        assert_same(&ref, &got, sizeof(double), what);
        cr_assert_eq(memcmp(k_ref, k_got, S * sizeof(double)), 0, "%s: parameters differ", what);
        for (int i = S + CS_LANES_PAD; i < S + CS_LANES_PAD + GUARD; i++)
            cr_assert_eq(k_got[i], -1234.5, "%s: lane %d, past the pad lanes' room, was written", what, i);
    }
    cs_cpu_unload(&kernel);
    lanes_free(&ref);
    lanes_free(&got);
    cs_program_free(p);
}

/* A random walk driven by a box action of `dims` components: a random
 * policy draws `dims` words a step, which straddle Philox blocks unless
 * dims divides 4. */
static cs_program *drift(unsigned dims)
{
    cs_program *p = cs_program_new(CS_F64);
    cs_graph *g = p->graph;
    snprintf(p->name, sizeof p->name, "drift%u", dims);
    p->max_steps = 50;
    cs_program_add_state(p, "x", CS_F64, CS_SCALAR);
    cs_node x = cs_leaf(g, CS_OP_CARRIED, CS_F64, 0), nx = x;
    p->action_kind = CS_ACTION_BOX;
    for (unsigned k = 0; k < dims; k++) {
        char name[32];
        snprintf(name, sizeof name, "action%u", k);
        cs_program_add_input(p, name, CS_F64, -1, 1);
        cs_node a = cs_leaf(g, CS_OP_INPUT, CS_F64, k);
        nx = bin(p, CS_OP_ADD, nx, bin(p, CS_OP_MUL, K(p, ldexp(1, -(int)k)), a));
    }
    p->next[0] = nx;
    p->restart[0] = K(p, 0);
    cs_program_add_obs(p, NULL, x, CS_OBS_BOX, -INFINITY, INFINITY, 0);
    p->reward = nx;
    p->terminated = bin(p, CS_OP_GT, nx, K(p, 3.0));
    char err[256];
    cr_assert_eq(cs_program_finish(p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cs_policy_random(p), 0);
    cr_assert_eq(cs_program_bind_policy(p), 0);
    return p;
}

/* D draws a step that straddle Philox blocks (D = 3, 5, 6): the C dialect
 * keeps a window of blocks and draws each once, at the first step that
 * reads it, whatever the unroll and however the call splits the steps:
 * the interpreter's bits. D = 1, 2 and 4 read one block a step. */
Test(backend, cpu_draws_straddling_blocks_as_the_interpreter)
{
    const unsigned dims[] = {1, 2, 3, 4, 5, 6};
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
        cs_program *p = drift(dims[d]);
        cr_assert_eq(p->n_step_draws, dims[d]);
        const int unrolls[] = {1, 4};
        for (int u = 0; u < 2; u++) {
            cs_cpu_kernel kernel;
            compile_c(p, CS_FUSION_FULL, unrolls[u], &kernel, NULL);
            lanes_buf ref, got;
            lanes_init(&ref, 300, sizeof(double));
            lanes_init(&got, 300, sizeof(double));
            rollout_interp(p, &ref, 97);
            kernel.restart(&got.l);
            const long long calls[] = {1, 13, 40, 43};   /* 97 steps in four calls */
            for (int c = 0; c < 4; c++) {
                got.l.steps = calls[c];
                kernel.rollout(&got.l);
                got.l.t += calls[c];
            }
            char what[64];
            snprintf(what, sizeof what, "%u draws a step, unroll %d", dims[d], unrolls[u]);
            assert_same(&ref, &got, sizeof(double), what);
            lanes_free(&ref);
            lanes_free(&got);
            cs_cpu_unload(&kernel);
        }
        cs_program_free(p);
    }
}

/* The cpu backend compiles a kernel's two halves (the rollout's entries,
 * the step's: CS_ONLY_ROLLOUT, CS_ONLY_STEP) by two compilers at once, then
 * links them: a wrapper around cc logs when each run starts and ends (each
 * half waits 0.3 s first, so that both have started before either ends). */
Test(backend, cpu_compiles_the_kernels_halves_at_once_then_links_them)
{
    char dir[] = "/tmp/cartsim-halves-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char wrapper[64], log[64];
    snprintf(wrapper, sizeof wrapper, "%s/cc", dir);
    snprintf(log, sizeof log, "%s/runs.log", dir);
    FILE *f = fopen(wrapper, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\nwhat=link\nfor a in \"$@\"; do case $a in -DCS_ONLY_*) what=$a;; esac; done\n"
               "echo \"start $what\" >> '%s'\n[ $what = link ] || sleep 0.3\ncc \"$@\"; rc=$?\n"
               "echo \"end $what\" >> '%s'\nexit $rc\n", log, log);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(chmod(wrapper, 0700), 0);
    cs_program *p = cartpole(CS_F32);
    cs_text src = emit_c(p, CS_FUSION_FULL, 1, NULL);
    cs_cache cache = {.dir = ""};
    cs_cpu_kernel k;
    char err[1024];
    cr_assert_eq(cs_cpu_compile(src.data, wrapper, 0, NULL, &cache, &k, err, sizeof err), 0, "%s", err);
    cr_assert(k.rollout && k.step && k.restart, "the linked object has every entry");
    cs_cpu_unload(&k);
    cs_text_free(&src);
    cs_program_free(p);
    char lines[6][64] = {{0}};
    f = fopen(log, "r");
    cr_assert_not_null(f);
    int n = 0;
    while (n < 6 && fgets(lines[n], sizeof lines[n], f))
        lines[n][strcspn(lines[n], "\n")] = 0, n++;
    fclose(f);
    cr_assert_eq(n, 6, "%d runs logged, not two halves and a link", n);
    cr_assert(!strncmp(lines[0], "start -DCS_ONLY_", 16) && !strncmp(lines[1], "start -DCS_ONLY_", 16) &&
                  strcmp(lines[0], lines[1]),
              "the halves did not both start first: '%s', '%s'", lines[0], lines[1]);
    cr_assert(!strncmp(lines[2], "end -DCS_ONLY_", 14) && !strncmp(lines[3], "end -DCS_ONLY_", 14),
              "'%s', '%s'", lines[2], lines[3]);
    cr_assert_str_eq(lines[4], "start link");
    cr_assert_str_eq(lines[5], "end link");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* The optimization levels (cs_cpu_compile_opt): SPEED passes -O3, COMPILE
 * (a training rollout's kernel) -O1, the cache keeps them apart, and both
 * compute the same bits, f64 CartPole over 500 steps of restarts. */
Test(backend, cpu_optimization_levels_give_the_same_bits)
{
    char dir[] = "/tmp/cartsim-opt-XXXXXX", wrapper[128], log[128];
    cli_test_scratch(dir);
    cli_test_level_logging_cc(dir, wrapper, log);
    cs_program *p = cartpole(CS_F64);
    cs_text src = emit_c(p, CS_FUSION_FULL, 1, NULL);
    const cs_cpu_opt levels[2] = {CS_CPU_OPT_SPEED, CS_CPU_OPT_COMPILE};
    lanes_buf got[2];
    for (int l = 0; l < 2; l++) {
        cs_cache cache = {.dir = ""};
        cs_cpu_kernel k;
        char err[1024];
        cr_assert_eq(cs_cpu_compile_opt(src.data, wrapper, levels[l], 0, NULL, &cache, &k, err, sizeof err), 0, "%s",
                     err);
        lanes_init(&got[l], 300, sizeof(double));
        got[l].l.t = 0;
        k.restart(&got[l].l);
        got[l].l.steps = 500;
        k.rollout(&got[l].l);
        cs_cpu_unload(&k);
    }
    assert_same(&got[0], &got[1], sizeof(double), "-O3 against -O1");
    lanes_free(&got[0]);
    lanes_free(&got[1]);
    cs_text_free(&src);
    cs_program_free(p);
    char text[256];
    cli_test_read_text(log, text, sizeof text);
    cr_assert_str_eq(text, "-O3\n-O3\n-O1\n-O1\n", "each half at its level (the link passes none): %s", text);
    cli_test_remove_tree(dir);
}

/* A shared parameter (cs_program.param_shared): every lane reads element 0
 * of its buffer, whatever its own element holds, in the interpreter and in
 * the C dialect; and the rollout stays padded (blocks of 1 to 4 lanes get
 * their vector variant), since no lane reads an element of its own. The
 * other elements hold NaN: a lane that read its own would go non-finite
 * and restart at 0. */
static cs_program *shared_drift(void)
{
    static const char *const names[4] = {"x", "y", "z", "w"};
    cs_node s[4];
    cs_program *p = four_states("drift", names, s);
    int rate = cs_program_add_shared_param(p, "rate", CS_F32);
    cr_assert_geq(rate, 0);
    cs_node r = cs_leaf(p->graph, CS_OP_PARAM, CS_F32, rate);
    p->next[0] = bin(p, CS_OP_ADD, s[0], r);
    p->next[1] = bin(p, CS_OP_ADD, s[1], bin(p, CS_OP_MUL, r, r));
    p->next[2] = s[2];
    p->next[3] = s[3];
    return four_states_finish(p);
}

static float drift_rate[300];

static void fill_drift(lanes_buf *b)
{
    static void *params[1] = {drift_rate};
    for (int64_t i = 0; i < b->n; i++)
        drift_rate[i] = i ? NAN : 0.25f;
    b->l.params = params;
    b->l.t = 0;
    b->l.steps = 3;
}

Test(backend, a_shared_parameter_is_element_0_for_every_lane)
{
    cs_program *p = shared_drift();
    cs_text src = emit_c(p, CS_FUSION_FULL, 1, NULL);
    cr_assert(strstr(src.data, "params[0])[0]"), "the shared parameter is not read at element 0");
    cr_assert(strstr(src.data, "cs_rollout_steps_short"), "a rollout reading only shared parameters is padded");
    cr_assert(!strstr(src.data, "if (b0 + n == L->stride)"), "a shared parameter's pad lanes are written");
    cs_text_free(&src);
    const int64_t sizes[] = {300, 3};
    for (int z = 0; z < 2; z++) {
        lanes_buf ref;
        expect_cpu_as_interp(p, sizes[z], fill_drift, 1, &ref, z ? "3 lanes" : "300 lanes");
        for (int64_t i = 0; i < sizes[z]; i++) {
            cr_assert_eq(((float *)ref.carried[0])[i], 0.75f, "lane %lld", (long long)i);
            cr_assert_eq(((float *)ref.carried[1])[i], 0.1875f, "lane %lld", (long long)i);
        }
        lanes_free(&ref);
    }
    cs_program_free(p);
}

/* Records (cs_program.record): what a rollout writes at every step into the
 * caller's rows, [step][lane]. CartPole records a state read in place (x),
 * the policy's action (an int), a constant (the reward), the termination
 * and the next state's angle (over the action: bound to the policy). The C
 * dialect, under every fusion mode and unroll, for 300 lanes and for 3 (a
 * padded short block), and launch by launch, writes what the interpreter
 * writes, to the bit; the rows past the rollout's stay untouched. */
enum { REC_X, REC_ACTION, REC_REWARD, REC_TERMINATED, REC_THETA_NEXT, N_REC };

static cs_program *recording_cartpole(void)
{
    cs_program *p = cartpole(CS_F64);
    cs_graph *g = p->graph;
    cr_assert_eq(cs_program_add_record(p, "x", cs_leaf(g, CS_OP_CARRIED, CS_F64, 0)), REC_X);
    cr_assert_eq(cs_program_add_record(p, "action", cs_leaf(g, CS_OP_INPUT, CS_I32, 0)), REC_ACTION);
    cr_assert_eq(cs_program_add_record(p, "reward", p->reward), REC_REWARD);
    cr_assert_eq(cs_program_add_record(p, "terminated", p->terminated), REC_TERMINATED);
    cr_assert_eq(cs_program_add_record(p, "theta_next", p->next[2]), REC_THETA_NEXT);
    cr_assert_eq(cs_program_bind_policy(p), 0);
    return p;
}

typedef struct {
    void *rows[N_REC];
    void *ptrs[N_REC];
    size_t size;          /* elements per record, a row more than the steps */
} records_buf;

static void records_init(records_buf *r, lanes_buf *b, long long steps)
{
    r->size = (size_t)((steps + 1) * b->n);
    for (int k = 0; k < N_REC; k++) {
        r->rows[k] = malloc(r->size * 4);
        memset(r->rows[k], 0x7f, r->size * 4);   /* a pattern no record takes */
        r->ptrs[k] = r->rows[k];
    }
    b->l.record = r->ptrs;
    b->l.record_t0 = 0;
}

static void records_free(records_buf *r)
{
    for (int k = 0; k < N_REC; k++)
        free(r->rows[k]);
}

static void records_same(const records_buf *a, const records_buf *b, const char *what)
{
    for (int k = 0; k < N_REC; k++)
        cr_assert_eq(memcmp(a->rows[k], b->rows[k], a->size * 4), 0, "%s: record %d differs", what, k);
}

Test(backend, records_are_the_interpreters_in_every_schedule)
{
    cs_program *p = recording_cartpole();
    const int64_t sizes[] = {300, 3};
    const long long steps = 40;
    for (int z = 0; z < 2; z++) {
        int64_t n = sizes[z];
        lanes_buf ref;
        records_buf rref;
        lanes_init(&ref, n, sizeof(double));
        records_init(&rref, &ref, steps);
        rollout_interp(p, &ref, steps);
        /* the interpreter's own rows are what CartPole does */
        const int *action = rref.rows[REC_ACTION];
        const float *reward = rref.rows[REC_REWARD], *x = rref.rows[REC_X];
        const int *term = rref.rows[REC_TERMINATED];
        long long ends = 0;
        for (long long i = 0; i < steps * n; i++) {
            cr_assert(action[i] == 0 || action[i] == 1);
            cr_assert_eq(reward[i], 1.0f);
            cr_assert_leq(fabsf(x[i]), 2.4f);
            ends += term[i];
        }
        long long episodes = 0;
        for (int64_t i = 0; i < n; i++)
            episodes += ref.segments[i];
        cr_assert_eq(ends, episodes, "a termination recorded per episode finished (no truncation in 40 steps)");
        const unsigned char *tail = (const unsigned char *)rref.rows[REC_X] + (size_t)(steps * n) * 4;
        for (int64_t i = 0; i < 4 * n; i++)
            cr_assert_eq(tail[i], 0x7f, "a row past the rollout's was written");

        const cs_fusion fusions[] = {CS_FUSION_FULL, CS_FUSION_RULES, CS_FUSION_NONE};
        const int unrolls[] = {1, 7};
        for (int a = 0; a < 3; a++)
            for (int u = 0; u < 2; u++) {
                lanes_buf got;
                records_buf rgot;
                lanes_init(&got, n, sizeof(double));
                records_init(&rgot, &got, steps);
                rollout_cpu(p, fusions[a], unrolls[u], &got, steps);
                char what[64];
                snprintf(what, sizeof what, "%lld lanes, %s unroll %d", (long long)n, cs_fusion_name(fusions[a]),
                         unrolls[u]);
                assert_same(&ref, &got, sizeof(double), what);
                records_same(&rref, &rgot, what);
                records_free(&rgot);
                lanes_free(&got);
            }
        records_free(&rref);
        lanes_free(&ref);
    }
    cs_program_free(p);
}

/* Records of a rollout split in calls (launches of `unroll` steps, as the
 * runtime makes them) go to the rows of their global steps: row t - t0. */
Test(backend, records_of_a_split_rollout_land_in_their_rows)
{
    cs_program *p = recording_cartpole();
    lanes_buf ref, got;
    records_buf rref, rgot;
    lanes_init(&ref, 300, sizeof(double));
    lanes_init(&got, 300, sizeof(double));
    records_init(&rref, &ref, 30);
    records_init(&rgot, &got, 30);
    rollout_interp(p, &ref, 30);
    cs_cpu_kernel k;
    compile_c(p, CS_FUSION_FULL, 1, &k, NULL);
    got.l.t = 0;
    k.restart(&got.l);
    for (long long t = 0; t < 30; t += 10) {
        cs_lanes part = got.l;
        part.t = t;
        part.steps = 10;
        k.rollout(&part);
    }
    cs_cpu_unload(&k);
    assert_same(&ref, &got, sizeof(double), "three calls");
    records_same(&rref, &rgot, "three calls");
    records_free(&rref);
    records_free(&rgot);
    lanes_free(&ref);
    lanes_free(&got);
    cs_program_free(p);
}
