/* The reference evaluator: walks the graph for one lane at a time.
 *
 * It is the oracle of the tests, so it is written for obviousness: leaves
 * and the RNG words of rng.h here, every op through cs_op_eval
 * (jit/op_eval.c), which calls the functions of jit/mathf.h that the
 * generated code calls. The cpu backend must match it bit for bit.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"

#define CS_INLINE static inline
#include "mathf.h"
#include "philox.h"
#include "rng.h"

typedef struct {
    const cs_program *p;
    const cs_lanes *l;
    double *val;            /* one value per node (reals, ints and bools all fit) */
    cs_node *order;         /* live nodes of the entry being evaluated */
    unsigned n_order;
    long long lane, t;      /* t: global step (step stream) or tau (restart stream) */
    unsigned int words[4];
    long long words_block;  /* which Philox block `words` holds, -1: none */
    int words_stream;
} interp;

static double f32r(double x) { return (double)(float)x; }

static unsigned int draw_word(interp *in, int stream, unsigned k)
{
    long long block;
    unsigned word;
    if (stream == CS_STREAM_STEP) {
        unsigned long long w = (unsigned long long)in->t * in->p->n_step_draws + k;
        block = (long long)(w >> 2);
        word = (unsigned)(w & 3);
    } else {
        block = (long long)(k >> 2);
        word = k & 3;
    }
    if (in->words_block != block || in->words_stream != stream) {
        if (stream == CS_STREAM_STEP)
            cs_rng_block(in->l->seed, (unsigned)(in->l->key0 + (unsigned long long)in->lane), (unsigned long long)block, 0u, in->words);
        else
            cs_rng_block(in->l->seed, (unsigned)(in->l->key0 + (unsigned long long)in->lane), (unsigned long long)in->t,
                         (1u << 16) | (unsigned)block, in->words);
        in->words_block = block;
        in->words_stream = stream;
    }
    return in->words[word];
}

static double load_leaf(interp *in, const cs_node_data *d)
{
    const cs_program *p = in->p;
    const cs_lanes *l = in->l;
    bool f32 = p->real == CS_F32;
    switch ((cs_op)d->op) {
    case CS_OP_CONST:   /* an f32 literal is a float in the emitted code (and to fold.c) */
        return d->type == CS_F32 ? f32r(d->imm.f) : d->imm.f;
    case CS_OP_CARRIED: {
        void *a = l->carried[d->imm.i];
        return p->carried[d->imm.i].type == CS_F32 ? ((float *)a)[in->lane] : ((double *)a)[in->lane];
    }
    case CS_OP_PARAM: {
        void *a = l->params[d->imm.i];
        return f32 ? ((float *)a)[in->lane] : ((double *)a)[in->lane];
    }
    case CS_OP_INPUT:
        if (p->inputs[d->imm.i].type == CS_I32)
            return ((const int *)l->inputs[d->imm.i])[in->lane];
        return f32r(((const float *)l->inputs[d->imm.i])[in->lane]);
    case CS_OP_SEGSTEP:
        return l->segstep[in->lane];
    case CS_OP_UNIFORM: {
        unsigned int w = draw_word(in, CS_UNIFORM_STREAM(d->imm.i), CS_UNIFORM_DRAW(d->imm.i));
        return f32 ? cs_u01_f32(w) : cs_u01_f64(w);
    }
    default:
        return 0;
    }
}

static double eval_node(interp *in, cs_node n)
{
    const cs_graph *g = in->p->graph;
    const cs_node_data *d = cs_graph_node(g, n);
    if (d->n_in == 0)
        return load_leaf(in, d);
    switch ((cs_op)d->op) {
    case CS_OP_STACK: return 0;   /* read through INDEX */
    case CS_OP_INDEX: return in->val[cs_graph_input(g, cs_graph_input(g, n, 0), (unsigned)d->imm.i)];
    default: break;
    }
    double v[3] = {0, 0, 0};
    for (unsigned k = 0; k < d->n_in && k < 3; k++)
        v[k] = in->val[cs_graph_input(g, n, k)];
    double r = cs_op_eval((cs_op)d->op, (cs_type)d->type, in->p->fast_f64, v[0], v[1], v[2]);
    /* Integers are kept exact (the emitted C would wrap): converted here. */
    if (d->type == CS_I32 || d->type == CS_U32)
        return cs_op_eval(CS_OP_CAST, (cs_type)d->type, false, r, 0, 0);
    return r;
}

/* The live nodes of a set of roots, in id order. */
static int plan(interp *in, const cs_node *roots, unsigned n_roots)
{
    const cs_graph *g = in->p->graph;
    uint32_t count = cs_graph_count(g);
    unsigned char *live = calloc(count, 1);
    if (!live)
        return -1;
    for (unsigned r = 0; r < n_roots; r++)
        if (roots[r])
            live[roots[r]] = 1;
    for (cs_node n = count - 1; n > 0; n--)
        if (live[n])
            for (unsigned k = 0; k < cs_graph_node(g, n)->n_in; k++)
                live[cs_graph_input(g, n, k)] = 1;
    in->n_order = 0;
    for (cs_node n = 1; n < count; n++)
        if (live[n])
            in->order[in->n_order++] = n;
    free(live);
    return 0;
}

static void run_plan(interp *in)
{
    in->words_block = -1;
    for (unsigned k = 0; k < in->n_order; k++)
        in->val[in->order[k]] = eval_node(in, in->order[k]);
}

static void store_real(const cs_program *p, void *array, unsigned k, long long lane, double v)
{
    if (p->carried[k].type == CS_F32)
        ((float *)array)[lane] = (float)v;
    else
        ((double *)array)[lane] = v;
}

typedef struct {
    interp step, restart, params;
} interp_set;

static int setup(interp_set *s, const cs_program *p, const cs_lanes *l, bool with_policy)
{
    memset(s, 0, sizeof *s);
    uint32_t count = cs_graph_count(p->graph);
    double *val = calloc(count, sizeof *val);
    cs_node *orders = malloc(3 * (size_t)count * sizeof *orders);
    unsigned max = cs_program_step_root_max(p) + p->n_carried + 2 * p->n_obs + p->n_params;
    cs_node *roots = malloc(max * sizeof *roots);
    if (!val || !orders || !roots)
        goto fail;
    interp *all[3] = {&s->step, &s->restart, &s->params};
    for (int k = 0; k < 3; k++) {
        all[k]->p = p;
        all[k]->l = l;
        all[k]->val = val;
        all[k]->order = orders + (size_t)k * count;
    }
    unsigned n = cs_program_step_roots(p, with_policy, roots);
    if (plan(&s->step, roots, n))
        goto fail;
    n = 0;
    for (unsigned k = 0; k < p->n_carried; k++)
        roots[n++] = p->restart[k];
    for (unsigned k = 0; k < p->n_obs; k++)
        roots[n++] = p->obs_restart[k];
    if (plan(&s->restart, roots, n) || plan(&s->params, p->param_restart, p->n_params))
        goto fail;
    free(roots);
    return 0;
fail:
    free(val);
    free(orders);
    free(roots);
    return -1;
}

static void teardown(interp_set *s)
{
    free(s->step.val);
    free(s->step.order);
}

/* A fresh start for one lane at time tau; writes params, state, segstep and,
 * when obs is not NULL, the observation. */
static void restart_lane(interp_set *s, long long lane, long long tau, float *obs)
{
    const cs_program *p = s->step.p;
    const cs_lanes *l = s->step.l;
    s->params.lane = s->restart.lane = lane;
    s->params.t = s->restart.t = tau;
    run_plan(&s->params);
    for (unsigned k = 0; k < p->n_params; k++)
        if (p->param_restart[k]) {
            double v = s->params.val[p->param_restart[k]];
            if (p->real == CS_F32)
                ((float *)l->params[k])[lane] = (float)v;
            else
                ((double *)l->params[k])[lane] = v;
        }
    run_plan(&s->restart);
    for (unsigned k = 0; k < p->n_carried; k++)
        store_real(p, l->carried[k], k, lane, s->restart.val[p->restart[k]]);
    l->segstep[lane] = 0;
    if (obs)
        for (unsigned k = 0; k < p->n_obs; k++)
            obs[k * l->stride + lane] = cs_canon_nanf((float)s->restart.val[p->obs_restart[k]]);
}

static bool next_is_finite(interp *in)
{
    for (unsigned k = 0; k < in->p->n_carried; k++)
        if (!isfinite(in->val[in->p->next[k]]))
            return false;
    return true;
}

static void commit_next(interp *in)
{
    const cs_program *p = in->p;
    for (unsigned k = 0; k < p->n_carried; k++)
        store_real(p, in->l->carried[k], k, in->lane, in->val[p->next[k]]);
    in->l->segstep[in->lane]++;
}

void cs_interp_restart(const cs_program *p, const cs_lanes *l)
{
    interp_set s;
    if (setup(&s, p, l, false))
        return;
    for (long long lane = l->begin; lane < l->end; lane++) {
        restart_lane(&s, lane, l->t, l->obs);
        if (l->pending)
            l->pending[lane] = 0;
        if (l->seg_return)
            l->seg_return[lane] = 0;
    }
    teardown(&s);
}

void cs_interp_step(const cs_program *p, const cs_lanes *l)
{
    interp_set s;
    if (setup(&s, p, l, false))
        return;
    long long stride = l->stride;
    for (long long lane = l->begin; lane < l->end; lane++) {
        if (l->mode == CS_MODE_NEXT_STEP && l->pending[lane]) {
            restart_lane(&s, lane, l->t, l->obs);
            l->pending[lane] = 0;
            l->reward[lane] = 0;
            l->terminated[lane] = l->truncated[lane] = 0;
            continue;
        }
        interp *in = &s.step;
        in->lane = lane;
        in->t = l->t;
        run_plan(in);
        bool finite = next_is_finite(in);
        bool term = in->val[p->terminated] != 0 || !finite;
        bool trunc = in->val[p->truncated] != 0;
        for (unsigned k = 0; k < p->n_obs; k++)
            l->obs[k * stride + lane] = cs_canon_nanf((float)in->val[p->obs_next[k]]);
        l->reward[lane] = cs_canon_nan(in->val[p->reward]);
        l->terminated[lane] = term;
        l->truncated[lane] = trunc;
        commit_next(in);
        if (!finite && l->nonfinite)
            l->nonfinite[lane]++;
        if (!(term || trunc))
            continue;
        if (l->mode == CS_MODE_SAME_STEP) {
            for (unsigned k = 0; k < p->n_obs; k++)
                l->final_obs[k * stride + lane] = l->obs[k * stride + lane];
            restart_lane(&s, lane, l->t + 1, l->obs);
        } else if (l->mode == CS_MODE_NEXT_STEP) {
            l->pending[lane] = 1;
        }
    }
    teardown(&s);
}

void cs_interp_rollout(const cs_program *p, const cs_lanes *l)
{
    interp_set s;
    if (setup(&s, p, l, true))
        return;
    interp *in = &s.step;
    for (long long lane = l->begin; lane < l->end; lane++) {
        for (long long step = 0; step < l->steps; step++) {
            in->lane = lane;
            in->t = l->t + step;
            run_plan(in);
            bool finite = true;
            for (unsigned k = 0; k < p->n_carried; k++)
                finite &= isfinite(in->val[p->roll_next[k]]) != 0;
            for (unsigned k = 0; k < p->n_carried; k++)
                store_real(p, l->carried[k], k, lane, in->val[p->roll_next[k]]);
            l->segstep[lane]++;
            l->seg_return[lane] += in->val[p->roll_reward];
            if (!finite) {
                l->nonfinite[lane]++;
                l->seg_return[lane] = 0;
                restart_lane(&s, lane, in->t + 1, NULL);
            } else if (in->val[p->roll_terminated] != 0 || in->val[p->roll_truncated] != 0) {
                l->segments[lane]++;
                l->return_sum[lane] += l->seg_return[lane];
                l->seg_return[lane] = 0;
                restart_lane(&s, lane, in->t + 1, NULL);
            }
        }
    }
    teardown(&s);
}
