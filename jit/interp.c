/* The reference evaluator: walks the graph for one lane at a time.
 *
 * It is the oracle of the tests, so it is written for obviousness: leaves
 * and the RNG words of rng.h here, every elementwise op element by element
 * through cs_op_eval (jit/op_eval.c), which calls the functions of
 * jit/mathf.h and jit/mathi.h that the generated code calls, and every
 * reduction through cs_reduce_step, in element order. Shape ops move
 * elements by the rules of jit/ops.def. The cpu backend must match it bit
 * for bit.
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
    double *val;            /* every node's elements (reals, ints and bools all fit) */
    const size_t *at;       /* [count] where a node's elements start in val */
    cs_node *order;         /* live nodes of the entry being evaluated */
    unsigned n_order;
    long long lane, t;      /* t: global step (step stream) or tau (restart stream) */
    bool replay;            /* the call replays recorded words (step_words, restart_words) */
    unsigned int words[4];
    long long words_block;  /* which Philox block `words` holds, -1: none */
    int words_stream;
} interp;

static double f32r(double x) { return (double)(float)x; }

static unsigned int draw_word(interp *in, int stream, unsigned k)
{
    const cs_lanes *l = in->l;
    if (in->replay) {
        const unsigned int *w = stream == CS_STREAM_STEP ? l->step_words : l->restart_words;
        if (w)
            return w[(long long)k * l->stride + in->lane];
    }
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
            cs_rng_block(l->seed, (unsigned)(l->key0 + (unsigned long long)in->lane), (unsigned long long)block, 0u, in->words);
        else
            cs_rng_block(l->seed, (unsigned)(l->key0 + (unsigned long long)in->lane), (unsigned long long)in->t,
                         (1u << 16) | (unsigned)block, in->words);
        in->words_block = block;
        in->words_stream = stream;
    }
    return in->words[word];
}

/* Slot k of the carried state, as its type stores it. */
static double load_slot(const cs_program *p, const cs_lanes *l, unsigned k, long long lane)
{
    const void *a = l->carried[k];
    switch (p->carried[k].type) {
    case CS_F32: return ((const float *)a)[lane];
    case CS_F64: return ((const double *)a)[lane];
    case CS_I32: return ((const int *)a)[lane];
    default: return ((const unsigned char *)a)[lane];
    }
}

static void store_slot(const cs_program *p, const cs_lanes *l, unsigned k, long long lane, double v)
{
    void *a = l->carried[k];
    switch (p->carried[k].type) {
    case CS_F32: ((float *)a)[lane] = (float)v; break;
    case CS_F64: ((double *)a)[lane] = v; break;
    case CS_I32: ((int *)a)[lane] = (int)v; break;
    default: ((unsigned char *)a)[lane] = v != 0; break;
    }
}

static void load_leaf(interp *in, const cs_node_data *d, const cs_shape *s, double *out)
{
    const cs_program *p = in->p;
    const cs_lanes *l = in->l;
    bool f32 = p->real == CS_F32;
    for (unsigned e = 0; e < s->size; e++) {
        double v = 0;
        switch ((cs_op)d->op) {
        case CS_OP_CONST:   /* an f32 literal is a float in the emitted code (and to fold.c) */
            v = d->type == CS_F32 ? f32r(d->imm.f) : d->imm.f;
            break;
        case CS_OP_CARRIED:
            v = load_slot(p, l, (unsigned)d->imm.i + e, in->lane);
            break;
        case CS_OP_PARAM: {   /* an array's element e: slot imm.i + e */
            void *a = l->params[d->imm.i + e];
            long long at = p->param_shared[d->imm.i + e] ? 0 : in->lane;   /* one value for every lane */
            v = f32 ? ((float *)a)[at] : ((double *)a)[at];
            break;
        }
        case CS_OP_INPUT:
            if (p->inputs[d->imm.i].type == CS_I32)
                v = ((const int *)l->inputs[d->imm.i])[in->lane];
            else
                v = f32r(((const float *)l->inputs[d->imm.i])[in->lane]);
            break;
        case CS_OP_SEGSTEP:
            v = l->segstep[in->lane];
            break;
        case CS_OP_UNIFORM: case CS_OP_RANDBITS: {
            unsigned int w = draw_word(in, CS_UNIFORM_STREAM(d->imm.i), CS_UNIFORM_DRAW(d->imm.i) + e);
            v = d->op == CS_OP_RANDBITS ? w : d->type == CS_F32 ? cs_u01_f32(w) : cs_u01_f64(w);
            break;
        }
        case CS_OP_TABLE: {
            double x = cs_graph_table(p->graph)[d->imm.i + e];
            v = d->type == CS_F32 ? f32r(x) : x;
            break;
        }
        case CS_OP_IOTA: {
            unsigned idx[CS_RANK_MAX];
            cs_shape_unflatten(s, e, idx);
            v = idx[d->imm.i];
            break;
        }
        default:
            break;
        }
        out[e] = v;
    }
}

/* The JAX index rule: a negative index counts from the end, once. */
static long long jax_index(double i, unsigned dim) { return i < 0 ? (long long)i + dim : (long long)i; }

static void eval_shape_op(interp *in, cs_node n, const cs_node_data *d, const cs_shape *s, double *out)
{
    const cs_graph *g = in->p->graph;
    cs_node a = cs_graph_input(g, n, 0);
    const cs_shape *as = cs_node_shape(g, a);
    const double *av = &in->val[in->at[a]];
    unsigned idx[CS_RANK_MAX];
    switch ((cs_op)d->op) {
    case CS_OP_STACK: {
        unsigned axis = (unsigned)d->imm.i;
        for (unsigned e = 0; e < s->size; e++) {
            cs_shape_unflatten(s, e, idx);
            unsigned item = idx[axis], src[CS_RANK_MAX] = {0, 0, 0};
            for (unsigned k = 0, j = 0; k < s->rank; k++)
                if (k != axis)
                    src[j++] = idx[k];
            cs_node o = cs_graph_input(g, n, item);
            out[e] = in->val[in->at[o] + cs_shape_flatten(cs_node_shape(g, o), src)];
        }
        return;
    }
    case CS_OP_CONCAT: {
        unsigned axis = (unsigned)d->imm.i;
        for (unsigned e = 0; e < s->size; e++) {
            cs_shape_unflatten(s, e, idx);
            for (unsigned k = 0; k < d->n_in; k++) {
                cs_node o = cs_graph_input(g, n, k);
                const cs_shape *os = cs_node_shape(g, o);
                if (idx[axis] >= os->dim[axis]) {
                    idx[axis] -= os->dim[axis];
                    continue;
                }
                out[e] = in->val[in->at[o] + cs_shape_flatten(os, idx)];
                break;
            }
        }
        return;
    }
    case CS_OP_INDEX:
        for (unsigned e = 0; e < s->size; e++)
            out[e] = av[(size_t)d->imm.i * s->size + e];
        return;
    case CS_OP_GATHER: {
        unsigned k = d->n_in - 1;
        size_t base = 0;
        for (unsigned j = 0; j < k; j++) {
            long long i = jax_index(in->val[in->at[cs_graph_input(g, n, j + 1)]], as->dim[j]);
            i = i < 0 ? 0 : i >= as->dim[j] ? as->dim[j] - 1 : i;
            base = base * as->dim[j] + (size_t)i;
        }
        for (unsigned e = 0; e < s->size; e++)
            out[e] = av[base * s->size + e];
        return;
    }
    case CS_OP_SCATTER: {
        memcpy(out, av, s->size * sizeof *out);
        unsigned k = d->n_in - 2;
        size_t base = 0, inner = 1;
        bool inside = true;
        for (unsigned j = 0; j < k; j++) {
            long long i = jax_index(in->val[in->at[cs_graph_input(g, n, j + 2)]], as->dim[j]);
            inside &= i >= 0 && i < as->dim[j];
            base = base * as->dim[j] + (size_t)(inside ? i : 0);
        }
        for (unsigned j = k; j < as->rank; j++)
            inner *= as->dim[j];
        if (!inside)
            return;
        cs_node v = cs_graph_input(g, n, 1);
        const cs_shape *vs = cs_node_shape(g, v);
        unsigned sub_dims[CS_RANK_MAX];
        for (unsigned j = k; j < as->rank; j++)
            sub_dims[j - k] = as->dim[j];
        cs_shape sub = {as->rank - k, {1, 1, 1}, (unsigned)inner};
        for (unsigned j = 0; j < sub.rank; j++)
            sub.dim[j] = sub_dims[j];
        for (unsigned e = 0; e < inner; e++)
            out[base * inner + e] = in->val[in->at[v] + cs_shape_source(vs, &sub, e)];
        return;
    }
    case CS_OP_SLICE:
        for (unsigned e = 0; e < s->size; e++) {
            cs_shape_unflatten(s, e, idx);
            for (unsigned k = 0; k < s->rank; k++)
                idx[k] += CS_SLICE_START(d->imm.i, k);
            out[e] = av[cs_shape_flatten(as, idx)];
        }
        return;
    case CS_OP_RESHAPE:
        memcpy(out, av, s->size * sizeof *out);
        return;
    case CS_OP_BROADCAST:
        for (unsigned e = 0; e < s->size; e++)
            out[e] = av[cs_shape_source(as, s, e)];
        return;
    case CS_OP_SHIFT: case CS_OP_ROLL: {
        unsigned axis = CS_MOVE_AXIS(d->imm.i), len = s->dim[axis];
        long long amount = CS_MOVE_AMOUNT(d->imm.i);
        double fill = d->op == CS_OP_SHIFT ? in->val[in->at[cs_graph_input(g, n, 1)]] : 0;
        for (unsigned e = 0; e < s->size; e++) {
            cs_shape_unflatten(s, e, idx);
            long long j = (long long)idx[axis] - amount;
            if (d->op == CS_OP_ROLL)
                j = ((j % len) + len) % len;
            if (j < 0 || j >= len) {
                out[e] = fill;
                continue;
            }
            idx[axis] = (unsigned)j;
            out[e] = av[cs_shape_flatten(s, idx)];
        }
        return;
    }
    default:
        return;
    }
}

static void eval_reduce(interp *in, cs_node n, const cs_node_data *d, const cs_shape *s, double *out)
{
    const cs_graph *g = in->p->graph;
    cs_node a = cs_graph_input(g, n, 0);
    const cs_shape *as = cs_node_shape(g, a);
    const double *av = &in->val[in->at[a]];
    cs_op op = (cs_op)d->op;
    cs_type t = (cs_type)cs_graph_node(g, a)->type;
    if (d->imm.i == CS_ALL_AXES) {
        double acc, best = 0;
        cs_reduce_start(op, t, av[0], &acc, &best);
        for (unsigned e = 1; e < as->size; e++)
            cs_reduce_step(op, t, av[e], e, &acc, &best);
        out[0] = acc;
        return;
    }
    unsigned axis = (unsigned)d->imm.i, idx[CS_RANK_MAX], src[CS_RANK_MAX];
    for (unsigned e = 0; e < s->size; e++) {
        cs_shape_unflatten(s, e, idx);
        for (unsigned k = 0, j = 0; k < as->rank; k++)
            src[k] = k == axis ? 0 : idx[j++];
        double acc, best = 0;
        cs_reduce_start(op, t, av[cs_shape_flatten(as, src)], &acc, &best);
        for (unsigned i = 1; i < as->dim[axis]; i++) {
            src[axis] = i;
            cs_reduce_step(op, t, av[cs_shape_flatten(as, src)], i, &acc, &best);
        }
        out[e] = acc;
    }
}

static void eval_node(interp *in, cs_node n)
{
    const cs_graph *g = in->p->graph;
    const cs_node_data *d = cs_graph_node(g, n);
    const cs_shape *s = cs_shape_of(g, d->shape);
    double *out = &in->val[in->at[n]];
    switch (cs_op_table[d->op].kind) {
    case CS_KIND_LEAF:
        load_leaf(in, d, s, out);
        return;
    case CS_KIND_SHAPE:
        eval_shape_op(in, n, d, s, out);
        return;
    case CS_KIND_REDUCE:
        eval_reduce(in, n, d, s, out);
        return;
    case CS_KIND_MAP:
        break;
    }
    cs_node o[3] = {0, 0, 0};
    const cs_shape *os[3];
    for (unsigned k = 0; k < d->n_in && k < 3; k++) {
        o[k] = cs_graph_input(g, n, k);
        os[k] = cs_node_shape(g, o[k]);
    }
    cs_type from = (cs_type)cs_graph_node(g, o[0])->type;
    for (unsigned e = 0; e < s->size; e++) {
        double v[3] = {0, 0, 0};
        for (unsigned k = 0; k < d->n_in && k < 3; k++)
            v[k] = in->val[in->at[o[k]] + cs_shape_source(os[k], s, e)];
        out[e] = cs_op_eval_from((cs_op)d->op, (cs_type)d->type, from, in->p->fast_f64, v[0], v[1], v[2]);
    }
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
        eval_node(in, in->order[k]);
}

static const double *value(const interp *in, cs_node n) { return &in->val[in->at[n]]; }

typedef struct {
    interp step, restart, params;
} interp_set;

/* Where each node's elements start in one array of values, and how many
 * values there are in all (*total); NULL when memory ran out. */
static size_t *node_offsets(const cs_graph *g, size_t *total)
{
    uint32_t count = cs_graph_count(g);
    size_t *at = malloc(count * sizeof *at);
    *total = 0;
    if (!at)
        return NULL;
    for (cs_node n = 0; n < count; n++) {
        at[n] = *total;
        *total += n ? cs_node_shape(g, n)->size : 1;
    }
    return at;
}

static int setup(interp_set *s, const cs_program *p, const cs_lanes *l, bool with_policy)
{
    memset(s, 0, sizeof *s);
    uint32_t count = cs_graph_count(p->graph);
    size_t total;
    size_t *at = node_offsets(p->graph, &total);
    if (!at)
        return -1;
    double *val = calloc(total, sizeof *val);
    cs_node *orders = malloc(3 * (size_t)count * sizeof *orders);
    unsigned max = cs_program_step_root_max(p) + p->n_vars + 2 * p->n_obs_items + p->n_info_items + p->n_params;
    cs_node *roots = malloc(max * sizeof *roots);
    if (!val || !orders || !roots)
        goto fail;
    interp *all[3] = {&s->step, &s->restart, &s->params};
    for (int k = 0; k < 3; k++) {
        all[k]->p = p;
        all[k]->l = l;
        all[k]->val = val;
        all[k]->at = at;
        all[k]->order = orders + (size_t)k * count;
    }
    unsigned n = cs_program_step_roots(p, with_policy, roots);
    if (plan(&s->step, roots, n))
        goto fail;
    n = 0;
    for (unsigned k = 0; k < p->n_vars; k++)
        roots[n++] = p->restart[k];
    for (unsigned k = 0; k < p->n_obs_items; k++)
        roots[n++] = p->obs_items[k].restart;
    for (unsigned k = 0; k < p->n_info_items; k++)
        roots[n++] = p->info_items[k].restart;
    if (plan(&s->restart, roots, n) || plan(&s->params, p->param_restart, p->n_params))
        goto fail;
    free(roots);
    return 0;
fail:
    free(at);
    free(val);
    free(orders);
    free(roots);
    return -1;
}

static void teardown(interp_set *s)
{
    free((void *)s->step.at);
    free(s->step.val);
    free(s->step.order);
}

/* The observation items' values (next or restart nodes) into the buffers. */
static void write_obs(const interp *in, long long lane, bool restart, float *obs, long long *obs_int)
{
    const cs_program *p = in->p;
    long long stride = in->l->stride;
    for (unsigned k = 0; k < p->n_obs_items; k++) {
        const cs_obs_item *it = &p->obs_items[k];
        const double *v = value(in, restart ? it->restart : it->next);
        for (unsigned e = 0; e < it->size; e++) {
            long long at = (long long)(it->offset + e) * stride + lane;
            if (it->space == CS_OBS_DISCRETE) {
                if (obs_int)
                    obs_int[at] = (long long)v[e];
            } else if (obs) {
                obs[at] = cs_canon_nanf((float)v[e]);
            }
        }
    }
}

/* The info values (step or restart nodes) into l->info, when there is one. */
static void write_info(const interp *in, long long lane, bool restart)
{
    const cs_program *p = in->p;
    if (!in->l->info)
        return;
    for (unsigned k = 0; k < p->n_info_items; k++) {
        const cs_info_item *it = &p->info_items[k];
        const double *v = value(in, restart ? it->restart : it->step);
        for (unsigned e = 0; e < it->size; e++)
            in->l->info[(long long)(it->offset + e) * in->l->stride + lane] = v[e];
    }
}

/* A fresh start for one lane at time tau; writes params, state (but the
 * kept variables' at an auto-reset), segstep and, when obs is not NULL, the
 * observation and the info values. */
static void restart_lane(interp_set *s, long long lane, long long tau, bool replay, bool automatic, float *obs,
                         long long *obs_int)
{
    const cs_program *p = s->step.p;
    const cs_lanes *l = s->step.l;
    s->params.lane = s->restart.lane = lane;
    s->params.t = s->restart.t = tau;
    s->params.replay = s->restart.replay = replay;
    run_plan(&s->params);
    for (unsigned k = 0; k < p->n_params; k++)
        if (p->param_restart[k]) {
            double v = value(&s->params, p->param_restart[k])[0];
            if (p->real == CS_F32)
                ((float *)l->params[k])[lane] = (float)v;
            else
                ((double *)l->params[k])[lane] = v;
        }
    run_plan(&s->restart);
    for (unsigned v = 0; v < p->n_vars; v++)
        for (unsigned e = 0; e < p->vars[v].size && !(automatic && p->vars[v].kept); e++)
            store_slot(p, l, p->vars[v].slot + e, lane, value(&s->restart, p->restart[v])[e]);
    l->segstep[lane] = 0;
    write_obs(&s->restart, lane, true, obs, obs_int);   /* observations never read a kept variable */
    if (obs)
        write_info(&s->restart, lane, true);
}

/* Strict mode: the lane's first index out of range into its word
 * (cs_lanes.index_fault), as the emitted kernels store it. */
static void note_index_fault(const interp *in, const cs_node *fault)
{
    long long *word = in->l->index_fault;
    if (!fault[0] || !word || word[in->lane])
        return;
    int site = (int)value(in, fault[0])[0], at = (int)value(in, fault[1])[0];
    if (site)
        word[in->lane] = (long long)((unsigned long long)(unsigned)site << 32 | (unsigned)at);
}

/* Whether every real element of the next state is finite. */
static bool next_is_finite(const interp *in, const cs_node *next)
{
    const cs_program *p = in->p;
    for (unsigned v = 0; v < p->n_vars; v++)
        if (cs_type_is_real(p->vars[v].type))
            for (unsigned e = 0; e < p->vars[v].size; e++)
                if (!isfinite(value(in, next[v])[e]))
                    return false;
    return true;
}

static void commit_next(const interp *in, const cs_node *next)
{
    const cs_program *p = in->p;
    for (unsigned v = 0; v < p->n_vars; v++)
        for (unsigned e = 0; e < p->vars[v].size; e++)
            store_slot(p, in->l, p->vars[v].slot + e, in->lane, value(in, next[v])[e]);
    in->l->segstep[in->lane]++;
}

void cs_interp_restart(const cs_program *p, const cs_lanes *l)
{
    interp_set s;
    if (setup(&s, p, l, false))
        return;
    for (long long lane = l->begin; lane < l->end; lane++) {
        restart_lane(&s, lane, l->t, true, l->mode == CS_RESTART_AUTO, l->obs, l->obs_int);
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
            restart_lane(&s, lane, l->t, true, true, l->obs, l->obs_int);
            l->pending[lane] = 0;
            l->reward[lane] = 0;
            l->terminated[lane] = l->truncated[lane] = 0;
            continue;
        }
        interp *in = &s.step;
        in->lane = lane;
        in->t = l->t;
        in->replay = true;
        run_plan(in);
        note_index_fault(in, p->index_fault);
        bool finite = next_is_finite(in, p->next);
        bool term = value(in, p->terminated)[0] != 0 || !finite;
        bool trunc = value(in, p->truncated)[0] != 0;
        write_obs(in, lane, false, l->obs, l->obs_int);
        write_info(in, lane, false);
        l->reward[lane] = cs_canon_nan(value(in, p->reward)[0]);
        l->terminated[lane] = term;
        l->truncated[lane] = trunc;
        commit_next(in, p->next);
        if (!finite && l->nonfinite)
            l->nonfinite[lane]++;
        if (!(term || trunc))
            continue;
        if (l->mode == CS_MODE_SAME_STEP) {
            for (unsigned k = 0; k < p->n_obs; k++)
                l->final_obs[k * stride + lane] = l->obs[k * stride + lane];
            for (unsigned k = 0; k < p->n_obs_int; k++)
                l->final_obs_int[k * stride + lane] = l->obs_int[k * stride + lane];
            for (unsigned k = 0; l->info && k < p->n_info; k++)
                l->final_info[k * stride + lane] = l->info[k * stride + lane];
            /* the restart at t + 1 draws from Philox: the replayed words are this step's */
            restart_lane(&s, lane, l->t + 1, true, true, l->obs, l->obs_int);
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
            long long row = (in->t - l->record_t0) * l->stride + lane;
            for (unsigned r = 0; r < p->n_records && l->record; r++) {
                double v = value(in, p->record[r])[0];
                if (cs_type_is_real(p->records[r].type))
                    ((float *)l->record[r])[row] = (float)v;
                else
                    ((int *)l->record[r])[row] = (int)v;
            }
            note_index_fault(in, p->roll_index_fault);
            bool finite = next_is_finite(in, p->roll_next);
            commit_next(in, p->roll_next);
            l->seg_return[lane] += value(in, p->roll_reward)[0];
            if (!finite) {
                l->nonfinite[lane]++;
                l->seg_return[lane] = 0;
                restart_lane(&s, lane, in->t + 1, false, true, NULL, NULL);
            } else if (value(in, p->roll_terminated)[0] != 0 || value(in, p->roll_truncated)[0] != 0) {
                l->segments[lane]++;
                l->return_sum[lane] += l->seg_return[lane];
                l->seg_return[lane] = 0;
                restart_lane(&s, lane, in->t + 1, false, true, NULL, NULL);
            }
        }
    }
    teardown(&s);
}

/* ---- chosen roots, one lane at a time (render/'s pictures) ---- */

struct cs_interp_roots {
    interp in;
    cs_node *roots;
    unsigned n_roots;
};

void cs_interp_roots_free(cs_interp_roots *r)
{
    if (!r)
        return;
    free((size_t *)r->in.at);
    free(r->in.val);
    free(r->in.order);
    free(r->roots);
    free(r);
}

cs_interp_roots *cs_interp_roots_new(const cs_program *p, const cs_node *roots, unsigned n_roots)
{
    cs_interp_roots *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    size_t total;
    r->in.p = p;
    r->in.at = node_offsets(p->graph, &total);
    r->in.val = r->in.at ? calloc(total, sizeof *r->in.val) : NULL;
    r->in.order = malloc(cs_graph_count(p->graph) * sizeof *r->in.order);
    r->roots = malloc((n_roots ? n_roots : 1) * sizeof *r->roots);
    if (!r->in.val || !r->in.order || !r->roots || plan(&r->in, roots, n_roots)) {
        cs_interp_roots_free(r);
        return NULL;
    }
    if (n_roots)
        memcpy(r->roots, roots, n_roots * sizeof *roots);
    r->n_roots = n_roots;
    return r;
}

void cs_interp_roots_eval(cs_interp_roots *r, const cs_lanes *l, long long lane, double *out)
{
    interp *in = &r->in;
    in->l = l;
    in->lane = lane;
    in->t = l->t;
    run_plan(in);
    for (unsigned k = 0; k < r->n_roots; k++)
        out[k] = *value(in, r->roots[k]);   /* a root's (first) element; node 0's stays 0: a root left 0 reads 0 */
}
