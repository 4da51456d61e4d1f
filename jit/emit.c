/* The emitter: one program + its plan + schedule -> source text, in a C or
 * CUDA dialect. The plan (which nodes share a kernel) is the driver's, built
 * once in jit/compile.c: the emitter reads it and never partitions.
 *
 * Shared by both dialects: naming, literals, the expression of every op,
 * loads of leaves, values materialized between kernels, and the RNG words.
 * What differs is the skeleton around the kernels: the C dialect walks blocks
 * of lanes that stay in L1 for the whole rollout (time loop inside the block
 * loop), each kernel being one vectorizable loop over the block; the CUDA
 * dialect gives each thread its lanes, grid-stride, one __global__ per kernel.
 *
 * Ops come from jit/ops.def: an infix operator or the function that computes
 * the op (jit/mathf.h, pasted into both dialects' prelude), the very
 * function the interpreter and constant folding call (jit/op_eval.c), so the
 * cpu backend, the CUDA dialect built as host C and the interpreter agree
 * bit for bit in f32 and f64 (tests/test_cuda.c's per-op test).
 *
 * Generated C, for a rollout with fusion full:
 *
 *   cs_kernel_rollout(L): for each block of CS_BLOCK lanes:
 *       load carried state into B->c; for t in steps (U per iteration):
 *           step: [RNG words] [kernel 0's f64 library calls or f32 modulos: a pass]
 *                 kernel 0 loop { loads, ops, next state, return, done }
 *                 restart pass over the lanes that finished, if any (rare, scalar)
 *       store the state back
 *   (blocks of 1 to 4 lanes: cs_rollout_steps_short, the same step with 4
 *   lanes as a constant and the time loop inside)
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"

#define CS_BLOCK_LANES 256
#define CS_PAD_LANES 8    /* a vector of f32 at 32 bytes */
#define CS_SHORT_LANES 4  /* a vector of f32 at 16 bytes: blocks of 1 to 4 lanes */
#define CS_SHORT_AHEAD 2  /* a short block's blocks of Philox words drawn at once */
static_assert(CS_BLOCK_LANES % CS_PAD_LANES == 0, "a padded block fits the block");
static_assert(CS_SHORT_LANES * CS_SHORT_AHEAD <= CS_BLOCK_LANES, "a short block's words fit the block");

/* Where leaves live: C rollout blocks (B->c), a CUDA thread's registers,
 * global buffers (C and CUDA steps, CUDA multi-kernel rollouts), a fresh start. */
typedef enum { SCOPE_ROLLOUT, SCOPE_THREAD, SCOPE_STEP, SCOPE_FRESH } scope_kind;

typedef struct {
    const cs_program *p;
    const cs_graph *g;
    cs_dialect dialect;
    cs_text *out;
    bool f32;
    const char *real;
    scope_kind scope;
    uint32_t *stamp;        /* [count]: the scope stamp at which a node became available */
    uint32_t now;           /* current scope stamp */
    const cs_partition *part;
    unsigned kernel;        /* the kernel being emitted */
    bool *materialized;     /* [count] stored to B->m<id> by its kernel */
    bool *any_materialized; /* [count] over all entries: declared in the block struct */
    bool *any_called;       /* [count] C: computed in a pass of its own, kept in B->x<id> */
    bool in_call_pass;      /* emitting a kernel's pass of library calls and modulos */
    bool near_variant;      /* ...its first loop: f32 modulos by their _near function, or f64
                               sin and cos by theirs (near64_pass) */
    bool near64_pass;       /* ...f64 near functions with a per-lane redo (emit_call_pass) */
    unsigned near64_kernels; /* 1 + the last kernel with such a pass: the block declares far[] */
    bool leaf_near_variant; /* a kernel loop's near copy: f32 sin, cos of leaves by their _near */
    uint32_t *scratch_off;  /* [count] CUDA: byte offset per lane of a materialized value */
    uint32_t scratch_bytes; /* CUDA: scratch bytes per lane */
    const char *L;          /* "L->" (C) or "L." (CUDA: the lanes are passed by value) */
    bool padded;            /* C rollout: blocks run padded, and those of 1 to CS_SHORT lanes
                               have a variant of their own (short_) */
    bool rollout;           /* emitting the C rollout's step (not the step API's) */
    bool ahead;             /* ... whose short blocks draw words ahead: read at col_ */
    char err[256];
} emitter;

static const char *c_type(cs_type t)
{
    switch (t) {
    case CS_BOOL: case CS_I32: return "int";
    case CS_U32: return "unsigned int";
    case CS_F32: return "float";
    default: return "double";
    }
}

static void out(emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(emitter *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cs_text_vprintf(e->out, fmt, ap);
    va_end(ap);
}

static const cs_node_data *node(const emitter *e, cs_node n) { return cs_graph_node(e->g, n); }

static bool is_const(const emitter *e, cs_node n) { return node(e, n)->op == CS_OP_CONST; }

/* An exact literal: hex floats read back to the same bits in C and CUDA.
 * An f32 constant is judged as the float it becomes (1e39 is infinite). */
static void literal(emitter *e, cs_type t, double v)
{
    if (t == CS_F32)
        v = (double)(float)v;
    if (t == CS_BOOL || t == CS_I32) {
        out(e, "%d", (int)v);
    } else if (t == CS_U32) {
        out(e, "%uu", (unsigned)v);
    } else if (isnan(v)) {
        out(e, t == CS_F32 ? "(0.0f/0.0f)" : "(0.0/0.0)");
    } else if (isinf(v)) {
        out(e, v < 0 ? (t == CS_F32 ? "(-1.0f/0.0f)" : "(-1.0/0.0)") : (t == CS_F32 ? "(1.0f/0.0f)" : "(1.0/0.0)"));
    } else {
        out(e, "(%a%s)", v, t == CS_F32 ? "f" : "");
    }
}

/* How an operand is referred to once available. */
static void ref(emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    if (d->op == CS_OP_CONST)
        literal(e, (cs_type)d->type, d->imm.f);
    else
        out(e, "v%u", n);
}

/* "<lvalue> = <cast><value>;": every root's final store. */
static void store(emitter *e, cs_node value, const char *cast, const char *lhs_fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void store(emitter *e, cs_node value, const char *cast, const char *lhs_fmt, ...)
{
    va_list ap;
    va_start(ap, lhs_fmt);
    cs_text_vprintf(e->out, lhs_fmt, ap);
    va_end(ap);
    out(e, " = %s", cast);
    ref(e, value);
    out(e, ";\n");
}

/* An observation (f32) or a reward where it leaves the kernel: one NaN
 * whatever made it (mathf.h's cs_canon_nanf, cs_canon_nan; the interpreter
 * calls them too). */
static void store_out(emitter *e, cs_node value, bool obs, const char *lhs_fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void store_out(emitter *e, cs_node value, bool obs, const char *lhs_fmt, ...)
{
    va_list ap;
    va_start(ap, lhs_fmt);
    cs_text_vprintf(e->out, lhs_fmt, ap);
    va_end(ap);
    out(e, obs ? " = cs_canon_nanf((float)" : " = cs_canon_nan((double)");
    ref(e, value);
    out(e, ");\n");
}

static void emit_bad_check(emitter *e, const cs_node *next);

static bool in_this_kernel(const emitter *e, cs_node n)
{
    return e->part && e->part->kernel[n] == e->kernel;
}

static void emit_node(emitter *e, cs_node n);

/* The program's f64 op computed by jit/mathd.h's function (the fast math
 * mode), not glibc's. */
static bool fast_f64_fn(const emitter *e, cs_op op) { return e->p->fast_f64 && cs_op_table[op].fast_f64; }

/* A C f64 library call (glibc's sin, pow, ...: what makes f64 Gymnasium's
 * bits) of this kernel. One such scalar call in a kernel's loop keeps the
 * whole loop scalar, so the calls get a pass over the block of their own,
 * and the loop reads their results back (B->x<id>) and vectorizes. */
static bool library_call(const emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    return e->dialect == CS_DIALECT_C && d->type == CS_F64 && cs_op_table[d->op].libm_f64 &&
           !fast_f64_fn(e, (cs_op)d->op) && in_this_kernel(e, n);
}

/* A C f32 op with a fast near variant (fmod, %: ten exact reduction steps,
 * of which the near range needs one) of this kernel. It goes to the same
 * pass, whose loop computes it near and notes far lanes; if there is one,
 * the pass is redone with the op's exact function (emit_call_pass). */
static bool near_call(const emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    return e->dialect == CS_DIALECT_C && d->type == CS_F32 && cs_op_table[d->op].near_f32 == CS_NEAR_PASS &&
           in_this_kernel(e, n);
}

/* A C f32 op of this kernel with a fast near variant for a leaf operand
 * (sin, cos), whose operand is one: a load (state, segment step, parameter,
 * input) or a value of an earlier kernel. emit_kernel_loops gives the
 * kernel a copy of its loop with the _near functions, taken at a step where
 * every lane's operand is near (checked by a loop of loads alone). */
static bool leaf_near(const emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    if (e->dialect != CS_DIALECT_C || d->type != CS_F32 || cs_op_table[d->op].near_f32 != CS_NEAR_LEAF ||
        !in_this_kernel(e, n))
        return false;
    cs_node x = cs_graph_input(e->g, n, 0);
    cs_op op = (cs_op)node(e, x)->op;
    bool load = op == CS_OP_CARRIED || op == CS_OP_SEGSTEP || op == CS_OP_PARAM || op == CS_OP_INPUT;
    return load || (!in_this_kernel(e, x) && e->materialized[x]);
}

/* A C f64 library call with a vectorizable near function (sin, cos: glibc's
 * bits wherever it does not flag the lane far) of this kernel. */
static bool near64_call(const emitter *e, cs_node n)
{
    return library_call(e, n) && cs_op_table[node(e, n)->op].near_f64;
}

/* Computed in the kernel's pass of its own, read back in its loop. */
static bool own_pass(const emitter *e, cs_node n) { return library_call(e, n) || near_call(e, n); }

/* Blocks of four Philox words one step may touch: a step's words are
 * [t*D, t*D + D); with D in {1, 2, 4} they never straddle two blocks. */
static unsigned rng_blocks(unsigned D) { return D == 0 ? 0 : (4 % D == 0) ? 1 : (D + 2) / 4 + 1; }

/* The memory a value crossing kernels lives in: the C block struct, or the
 * CUDA scratch buffer ([value][lane], each value 8-byte aligned per lane). */
static void mat(emitter *e, cs_node n, int component)
{
    if (e->dialect == CS_DIALECT_C) {
        if (component >= 0)
            out(e, "B->m%u[%d][i]", n, component);
        else
            out(e, "B->m%u[i]", n);
        return;
    }
    const cs_node_data *d = node(e, n);
    unsigned size = d->type == CS_F64 ? 8 : 4;
    out(e, "((%s *)(scratch + %uull * (unsigned long long)L.stride))[lane]", c_type((cs_type)d->type),
        e->scratch_off[n] + (component >= 0 ? (unsigned)component * size : 0));
}

/* Make n available in the current scope: a leaf is loaded, a value from
 * another kernel is read back from memory, a node of this kernel was already
 * emitted (id order). */
static void need(emitter *e, cs_node n)
{
    if (is_const(e, n) || e->stamp[n] == e->now)
        return;
    const cs_node_data *d = node(e, n);
    const char *T = c_type((cs_type)d->type);
    if (e->scope != SCOPE_FRESH && !in_this_kernel(e, n) && (d->n_in > 0 || d->op == CS_OP_UNIFORM) &&
        e->materialized[n]) {
        if (d->op == CS_OP_STACK) {
            out(e, "        const %s v%u[%u] = {", T, n, d->n_in);
            for (unsigned k = 0; k < d->n_in; k++) {
                out(e, "%s", k ? ", " : "");
                mat(e, n, (int)k);
            }
            out(e, "};\n");
        } else {
            out(e, "        const %s v%u = ", T, n);
            mat(e, n, -1);
            out(e, ";\n");
        }
        e->stamp[n] = e->now;
        return;
    }
    if (d->n_in > 0 || d->op == CS_OP_UNIFORM) {
        emit_node(e, n);   /* only reached for nodes computed in place (fresh scope) */
        return;
    }
    const char *ind = e->scope == SCOPE_FRESH ? "    " : "        ";
    switch ((cs_op)d->op) {
    case CS_OP_CARRIED:
        if (e->scope == SCOPE_ROLLOUT)
            out(e, "%sconst %s v%u = B->c[%d][i];\n", ind, T, n, (int)d->imm.i);
        else if (e->scope == SCOPE_THREAD)
            out(e, "%sconst %s v%u = c%d;\n", ind, T, n, (int)d->imm.i);
        else if (e->scope == SCOPE_STEP)
            out(e, "%sconst %s v%u = ((const %s *)%scarried[%d])[lane];\n", ind, T, n, T, e->L, (int)d->imm.i);
        else
            snprintf(e->err, sizeof e->err, "the reset reads the state '%s'", e->p->carried[d->imm.i].name);
        break;
    case CS_OP_SEGSTEP:
        if (e->scope == SCOPE_ROLLOUT)
            out(e, "%sconst int v%u = B->ss[i];\n", ind, n);
        else if (e->scope == SCOPE_THREAD)
            out(e, "%sconst int v%u = ss;\n", ind, n);
        else if (e->scope == SCOPE_STEP)
            out(e, "%sconst int v%u = %ssegstep[lane];\n", ind, n, e->L);
        else
            out(e, "%sconst int v%u = 0;\n", ind, n);
        break;
    case CS_OP_PARAM:
        if (e->scope == SCOPE_FRESH)
            out(e, "%sconst %s v%u = ((const %s *)params[%d])[lane];\n", ind, T, n, e->real, (int)d->imm.i);
        else
            out(e, "%sconst %s v%u = ((const %s *)%sparams[%d])[lane];\n", ind, T, n, e->real, e->L, (int)d->imm.i);
        break;
    case CS_OP_INPUT:
        if (e->scope != SCOPE_STEP)
            snprintf(e->err, sizeof e->err, "input %d read outside a step", (int)d->imm.i);
        else if (e->p->inputs[d->imm.i].type == CS_I32)
            out(e, "%sconst int v%u = ((const int *)%sinputs[%d])[lane];\n", ind, n, e->L, (int)d->imm.i);
        else
            out(e, "%sconst %s v%u = (%s)((const float *)%sinputs[%d])[lane];\n", ind, T, n, T, e->L, (int)d->imm.i);
        break;
    default:
        snprintf(e->err, sizeof e->err, "cannot load %s", cs_op_table[d->op].name);
        break;
    }
    e->stamp[n] = e->now;
}

/* "cond ? x : y", cond being `l` alone (cmp NULL) or `l cmp r`. The C
 * dialect selects reals through a bit mask as wide as the value
 * (cs_select[f]): a `?:` lets GCC 12 branch, then merge the comparisons
 * behind the branches into selects of booleans it cannot vectorize. Bits
 * are picked, not computed, so NaN and -0.0 come out as from `?:`. */
static void select_of(emitter *e, cs_type t, cs_node l, const char *cmp, cs_node r, cs_node x, cs_node y)
{
    bool masked = e->dialect == CS_DIALECT_C && (t == CS_F32 || t == CS_F64);
    out(e, masked ? (t == CS_F32 ? "cs_selectf(" : "cs_select(") : "(");
    ref(e, l);
    if (cmp) {
        out(e, " %s ", cmp);
        ref(e, r);
    }
    out(e, masked ? ", " : " ? ");
    ref(e, x);
    out(e, masked ? ", " : " : ");
    ref(e, y);
    out(e, ")");
}

static void emit_expr(emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    cs_node a = d->n_in > 0 ? cs_graph_input(e->g, n, 0) : 0;
    cs_node b = d->n_in > 1 ? cs_graph_input(e->g, n, 1) : 0;
    cs_node c = d->n_in > 2 ? cs_graph_input(e->g, n, 2) : 0;
    bool f = d->type == CS_F32;
    switch ((cs_op)d->op) {
    case CS_OP_NEG: out(e, "(-"); ref(e, a); out(e, ")"); return;
    case CS_OP_NOT: out(e, "(!"); ref(e, a); out(e, ")"); return;
    case CS_OP_ROUND_F32:
        if (f) { ref(e, a); } else { out(e, "((double)(float)"); ref(e, a); out(e, ")"); }
        return;
    case CS_OP_CAST: out(e, "((%s)", c_type((cs_type)d->type)); ref(e, a); out(e, ")"); return;
    case CS_OP_MIN: select_of(e, d->type, b, "<", a, b, a); return;
    case CS_OP_MAX: select_of(e, d->type, b, ">", a, b, a); return;
    case CS_OP_SELECT: select_of(e, d->type, a, NULL, 0, b, c); return;
    case CS_OP_INDEX: out(e, "v%u[%d]", a, (int)d->imm.i); return;
    default: break;
    }
    const cs_op_info *info = &cs_op_table[d->op];
    if (info->infix) {
        out(e, "(");
        ref(e, a);
        out(e, " %s ", info->infix);
        ref(e, b);
        out(e, ")");
        return;
    }
    /* the function of jit/ops.def, the same in both dialects (mathf.h,
     * mathd.h in the fast math mode) */
    const char *fn = f ? info->fn_f32 : fast_f64_fn(e, (cs_op)d->op) ? info->fast_f64 : info->fn_f64;
    if (!fn) {
        snprintf(e->err, sizeof e->err, "no emit rule for %s", cs_op_table[d->op].name);
        return;
    }
    /* f64 sin, cos: by the near function in a near64 pass's vector loop, by
     * glibc's own call in a scalar pass (lanes mostly or known far) */
    bool near64 = e->near_variant && near64_call(e, n), libm = !e->near_variant && near64_call(e, n);
    bool use_near = (e->near_variant && near_call(e, n)) || (e->leaf_near_variant && leaf_near(e, n)) || near64;
    out(e, use_near ? "%s_near(" : libm ? "%s_libm(" : "%s(", fn);
    ref(e, a);
    if (b) { out(e, ", "); ref(e, b); }
    if (c) { out(e, ", "); ref(e, c); }
    out(e, near64 ? ", &far_lane_)" : ")");
}

/* In a scalar pass of library calls: the cos of n's operand where n is a
 * sin, or the sin where n is a cos, if also called there; else 0. */
static cs_node sincos_partner(const emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    if (!e->in_call_pass || e->near_variant || (d->op != CS_OP_SIN && d->op != CS_OP_COS) || !library_call(e, n))
        return 0;
    cs_op other = d->op == CS_OP_SIN ? CS_OP_COS : CS_OP_SIN;
    cs_node x = cs_graph_input(e->g, n, 0);
    uint32_t count = cs_graph_count(e->g);
    for (cs_node m = 1; m < count; m++)
        if (node(e, m)->op == other && cs_graph_input(e->g, m, 0) == x && library_call(e, m))
            return m;
    return 0;
}

/* sin and cos of one operand in a scalar pass: one sincos call for the
 * pair, emitted at the first of the two. */
static void emit_sincos(emitter *e, cs_node n, cs_node partner)
{
    if (e->stamp[n] == e->now)
        return;   /* the partner, emitted first, computed it */
    bool is_sin = node(e, n)->op == CS_OP_SIN;
    cs_node x = cs_graph_input(e->g, n, 0);
    need(e, x);
    out(e, "        double v%u, v%u;\n        cs_sincos(", n, partner);
    ref(e, x);
    out(e, ", &v%u, &v%u);\n", is_sin ? n : partner, is_sin ? partner : n);
    e->stamp[n] = e->stamp[partner] = e->now;
}

static void emit_node(emitter *e, cs_node n)
{
    const cs_node_data *d = node(e, n);
    cs_node partner = sincos_partner(e, n);
    if (partner) {
        emit_sincos(e, n, partner);
        return;
    }
    const char *ind = e->scope == SCOPE_FRESH ? "    " : "        ";
    const char *T = c_type((cs_type)d->type);
    bool called = !e->in_call_pass && e->scope != SCOPE_FRESH && own_pass(e, n);
    for (unsigned k = 0; k < d->n_in && !called; k++)
        need(e, cs_graph_input(e->g, n, k));
    if (called) {
        out(e, "%sconst %s v%u = B->x%u[i];\n", ind, T, n, n);
    } else if (d->op == CS_OP_UNIFORM) {
        unsigned k = CS_UNIFORM_DRAW(d->imm.i);
        const char *conv = e->f32 ? "cs_u01_f32" : "cs_u01_f64";
        if (CS_UNIFORM_STREAM(d->imm.i) == CS_STREAM_RESTART)
            out(e, "%sconst %s v%u = %s(rw_[%u]);\n", ind, T, n, conv, k);
        else if (e->dialect == CS_DIALECT_C)
            out(e, "%sconst %s v%u = %s(B->rw[wi%u][i%s]);\n", ind, T, n, conv, k, e->ahead ? " + col_" : "");
        else {
            /* A select chain, not sw_[wi]: a runtime index would put the
             * words in local memory instead of registers. */
            unsigned words = 4 * rng_blocks(e->p->n_step_draws);
            out(e, "%sconst %s v%u = %s(", ind, T, n, conv);
            for (unsigned w = 0; w + 1 < words; w++)
                out(e, "wi%u == %u ? sw_[%u] : ", k, w, w);
            out(e, "sw_[%u]);\n", words - 1);
        }
    } else if (d->op == CS_OP_STACK) {
        out(e, "%sconst %s v%u[%u] = {", ind, T, n, d->n_in);
        for (unsigned k = 0; k < d->n_in; k++) {
            if (k)
                out(e, ", ");
            ref(e, cs_graph_input(e->g, n, k));
        }
        out(e, "};\n");
    } else {
        out(e, "%sconst %s v%u = ", ind, T, n);
        emit_expr(e, n);
        out(e, ";\n");
        if (e->near_variant && near_call(e, n)) {
            out(e, "%sfar_ |= %s_far(", ind, cs_op_table[d->op].fn_f32);
            ref(e, cs_graph_input(e->g, n, 0));
            out(e, ", ");
            ref(e, cs_graph_input(e->g, n, 1));
            out(e, ");\n");
        }
    }
    e->stamp[n] = e->now;
    if (e->scope != SCOPE_FRESH && e->materialized[n] && !e->in_call_pass) {
        if (d->op == CS_OP_STACK)
            for (unsigned k = 0; k < d->n_in; k++) {
                out(e, "%s", ind);
                mat(e, n, (int)k);
                out(e, " = v%u[%u];\n", n, k);
            }
        else {
            out(e, "%s", ind);
            mat(e, n, -1);
            out(e, " = v%u;\n", n);
        }
    }
}

/* Which computed values cross kernels: computed in kernel a, used in b != a,
 * or a root computed before the last kernel (the last one stores the roots). */
static void mark_materialized(emitter *e, const cs_partition *part, const cs_node *roots, unsigned n_roots)
{
    uint32_t count = cs_graph_count(e->g);
    memset(e->materialized, 0, count * sizeof *e->materialized);
    for (cs_node n = 1; n < count; n++) {
        if (part->kernel[n] == CS_NO_KERNEL)
            continue;
        const cs_node_data *d = node(e, n);
        for (unsigned k = 0; k < d->n_in; k++) {
            cs_node o = cs_graph_input(e->g, n, k);
            if (part->kernel[o] != CS_NO_KERNEL && part->kernel[o] != part->kernel[n])
                e->materialized[o] = true;
        }
    }
    for (unsigned r = 0; r < n_roots; r++)
        if (part->kernel[roots[r]] != CS_NO_KERNEL && part->kernel[roots[r]] != part->n_kernels - 1)
            e->materialized[roots[r]] = true;
    for (cs_node n = 1; n < count; n++)
        e->any_materialized[n] |= e->materialized[n];
}

typedef struct {
    const cs_node *roots;
    unsigned n_roots;
    bool rollout;
} entry;

/* The roots' final stores, in the last kernel. */
static void emit_final(emitter *e, const entry *en)
{
    const cs_program *p = e->p;
    for (unsigned r = 0; r < en->n_roots; r++)
        need(e, en->roots[r]);
    if (en->rollout) {
        emit_bad_check(e, p->roll_next);
        for (unsigned k = 0; k < p->n_carried; k++)
            store(e, p->roll_next[k], "", "        B->c[%u][i]", k);
        out(e, "        B->ss[i] += 1;\n        B->ret[i] += (double)");
        ref(e, p->roll_reward);
        out(e, ";\n        B->done[i] = ((((");
        ref(e, p->roll_terminated);
        out(e, ") | (");
        ref(e, p->roll_truncated);
        out(e, ")) & !bad_) | (bad_ << 1));\n        B->end[i] = (");
        ref(e, p->roll_terminated);
        out(e, ") | (");
        ref(e, p->roll_truncated);
        out(e, ");\n        ended_ |= (unsigned)B->end[i] << (i & 31);\n        bad_any_ |= bad_;\n");
        return;
    }
    /* A step stores its results where the caller reads them, no copy after */
    for (unsigned k = 0; k < p->n_carried; k++)
        store(e, p->next[k], "", "        ((%s *)L->carried[%u])[lane]", e->real, k);
    for (unsigned k = 0; k < p->n_obs; k++)
        store_out(e, p->obs_next[k], true, "        L->obs[%uull * L->stride + lane]", k);
    store_out(e, p->reward, false, "        L->reward[lane]");
    store(e, p->terminated, "", "        B->term[i]");
    store(e, p->truncated, "", "        B->trunc[i]");
    emit_bad_check(e, p->next);
    out(e, "        B->done[i] = bad_;\n");
}

/* One kernel's loop body (without the loop header). */
static void emit_kernel_body(emitter *e, const entry *en, unsigned k)
{
    e->now++;
    e->kernel = k;
    out(e, "        const long long lane = b0 + i; (void)lane;\n");
    uint32_t count = cs_graph_count(e->g);
    for (cs_node n = 1; n < count; n++)
        if (e->part->kernel[n] == k)
            emit_node(e, n);
    if (k == e->part->n_kernels - 1)
        emit_final(e, en);
}


/* The largest kernel given a near copy of its loop (CartPole's has about 60 values). */
enum { CS_LEAF_NEAR_MAX_NODES = 200 };

/* Kernel k's loop over the lanes: the body once, or, where its f32 sin
 * and cos read leaves (leaf_near), a loop of those loads that notes
 * whether every lane is near, then the body with the _near functions if
 * so, else with the exact ones. */
static void emit_kernel_loops(emitter *e, const entry *en, unsigned k)
{
    uint32_t count = cs_graph_count(e->g);
    e->kernel = k;
    /* Not for a long loop: two copies of Acrobot's RK4 step (some 350
     * values) left GCC 12 vectorizing neither, 11x slower. */
    bool any = false;
    unsigned size = 0;
    for (cs_node n = 1; n < count; n++) {
        any |= leaf_near(e, n);
        size += e->part->kernel[n] == k;
    }
    any &= size <= CS_LEAF_NEAR_MAX_NODES;
    /* The step's last kernel loads a lane's state and stores its next state in
     * place, the same element in the same iteration: GCC cannot see that the
     * buffers do not overlap, and would not vectorize without this */
    const char *ivdep = !en->rollout && k == e->part->n_kernels - 1 ? "#pragma GCC ivdep\n" : "";
    if (!any) {
        out(e, "%s    for (int i = 0; i < nv; i++) {\n", ivdep);
        emit_kernel_body(e, en, k);
        out(e, "    }\n");
        return;
    }
    out(e, "    {\n    int near_ = 1;   /* every lane's sin and cos operands within their near range */\n"
           "    for (int i = 0; i < nv; i++) {\n"
           "        const long long lane = b0 + i; (void)lane;\n");
    e->now++;
    for (cs_node n = 1; n < count; n++)
        if (leaf_near(e, n)) {
            cs_node x = cs_graph_input(e->g, n, 0);
            need(e, x);
            out(e, "        near_ &= !%s_far(v%u);\n", cs_op_table[node(e, n)->op].fn_f32, x);
        }
    out(e, "    }\n    if (near_) {\n%s    for (int i = 0; i < nv; i++) {\n", ivdep);
    e->leaf_near_variant = true;
    emit_kernel_body(e, en, k);
    e->leaf_near_variant = false;
    out(e, "    }\n    } else {\n%s    for (int i = 0; i < nv; i++) {\n", ivdep);
    emit_kernel_body(e, en, k);
    out(e, "    }\n    }\n    }\n");
}

/* One loop of kernel k's pass over the lanes of the block: the cone, then
 * the pass's results to B->x<id>. In a near64 pass, the near loop notes
 * each lane's far flag (B->far, and far_ for the block), and the exact
 * loop computes only the lanes listed in B->far_at[0, nf_) (every lane
 * where the near loop did not run). */
static void emit_call_loop(emitter *e, const bool *cone)
{
    uint32_t count = cs_graph_count(e->g);
    if (e->near64_pass && !e->near_variant)
        out(e, "    for (int j_ = 0; j_ < nf_; j_++) {\n        const int i = try_near_ ? B->far_at[j_] : j_;\n");
    else
        out(e, "    for (int i = 0; i < n; i++) {\n");
    e->now++;
    if (e->near64_pass && e->near_variant)
        out(e, "        long long far_lane_ = 0;\n");
    out(e, "        const long long lane = b0 + i; (void)lane;\n");
    for (cs_node n = 1; n < count; n++)
        if (cone[n] && e->part->kernel[n] == e->kernel)
            emit_node(e, n);
    for (cs_node n = 1; n < count; n++)
        if (cone[n] && own_pass(e, n)) {
            out(e, "        B->x%u[i] = v%u;\n", n, n);
            e->any_called[n] = true;
        }
    if (e->near64_pass && e->near_variant)
        out(e, "        B->far[i] = far_lane_;\n        far_ |= far_lane_;\n");
    out(e, "    }\n");
}

/* Kernel k's pass when each of its library calls is an f64 sin or cos:
 * a vector loop by the near functions, noting far lanes, then glibc for
 * those lanes only, listed first without a branch (a branch per lane
 * mispredicts at every other far lane). Where most lanes are far (an angle
 * of any size, as MountainCar's cos(3 x)), the vector loop only adds
 * to glibc's calls: a rollout's block then calls glibc for every lane, and
 * tries the near loop again every 64 steps. */
static void emit_near64_pass(emitter *e, unsigned k, const bool *cone, bool rollout)
{
    if (rollout)
        out(e, "    const int try_near_ = !B->mostly_far[%u] || (t & 63) == 0;\n", k);
    else
        out(e, "    const int try_near_ = 1;\n");
    out(e, "    long long far_ = !try_near_;\n    if (try_near_)\n");
    e->near_variant = true;
    emit_call_loop(e, cone);
    e->near_variant = false;
    out(e, "    if (far_) {   /* lanes whose near sin or cos may not be glibc's: those by glibc */\n"
           "    int nf_ = try_near_ ? 0 : n;\n"
           "    if (try_near_)\n"
           "        for (int i = 0; i < n; i++) { B->far_at[nf_] = i; nf_ += (int)B->far[i]; }\n");
    emit_call_loop(e, cone);
    if (rollout)
        out(e, "    if (try_near_) B->mostly_far[%u] = 4 * nf_ > 3 * n;\n    } else B->mostly_far[%u] = 0;\n", k, k);
    else
        out(e, "    }\n");
    if (k + 1 > e->near64_kernels)
        e->near64_kernels = k + 1;
}

/* Kernel k's library calls and near ops (own_pass) and what they need from
 * the kernel, computed in a loop of their own into B->x<id>: scalar for
 * library calls; with near ops, a vector loop by their _near functions that
 * ORs their _far guards, and only if some lane was far, the loop again with
 * the exact functions, so that every lane has the exact function's bits.
 * Where every library call of the kernel has an f64 near function (sin,
 * cos: CartPole's), emit_near64_pass's. */
static void emit_call_pass(emitter *e, unsigned k, bool rollout)
{
    uint32_t count = cs_graph_count(e->g);
    bool *cone = calloc(count, sizeof *cone);
    if (!cone) {
        snprintf(e->err, sizeof e->err, "out of memory");
        return;
    }
    e->kernel = k;
    bool any = false, near = false, all_near64 = true;
    for (cs_node n = count - 1; n > 0; n--) {
        bool own = own_pass(e, n);
        if (e->part->kernel[n] != k || !(cone[n] |= own))
            continue;
        any = true;
        near |= near_call(e, n);
        all_near64 &= !own || near64_call(e, n);
        for (unsigned j = 0; j < node(e, n)->n_in; j++)
            cone[cs_graph_input(e->g, n, j)] = true;
    }
    if (any) {
        out(e, "    /* kernel %u's %s: a pass of their own, so that its loop vectorizes */\n", k,
            near ? "modulos" : all_near64 ? "sin and cos" : "library calls");
        if (rollout)
            out(e, "    if (only < 0 || only == %u)\n", k);
        out(e, "    {\n");
        e->in_call_pass = true;
        e->near64_pass = all_near64;
        if (all_near64) {
            emit_near64_pass(e, k, cone, rollout);
        } else {
            if (near) {
                out(e, "    int far_ = 0;\n");
                e->near_variant = true;
                emit_call_loop(e, cone);
                e->near_variant = false;
                out(e, "    if (far_)   /* some lane's quotient is past the near range (rare): every lane exactly */\n");
            }
            emit_call_loop(e, cone);
        }
        e->in_call_pass = e->near64_pass = false;
        out(e, "    }\n");
    }
    free(cone);
}

/* The step's RNG words, then each kernel as one loop over the block. The
 * refill is its own loop so that the kernels' loops stay branch-free. */
static void emit_kernels(emitter *e, const entry *en)
{
    const cs_partition *part = e->part;
    unsigned D = e->p->n_step_draws, nb = rng_blocks(D);
    bool draws = false;
    uint32_t count = cs_graph_count(e->g);
    for (cs_node n = 1; n < count; n++)
        draws |= part->kernel[n] != CS_NO_KERNEL && node(e, n)->op == CS_OP_UNIFORM;
    e->ahead = draws && e->rollout && e->padded && nb == 1;
    if (draws) {
        out(e, "    const unsigned long long w0 = (unsigned long long)t * %uu, blk = w0 >> 2;\n", D);
        if (e->ahead)
            /* A short block draws the words of CS_SHORT_AHEAD Philox blocks at
             * once, one vector as wide as the wide blocks' (words [w][j], the
             * lane j % CS_SHORT, the block j / CS_SHORT): its refill costs a
             * vector per 4 lanes otherwise, as much as the step's arithmetic. */
            out(e, "    int col_ = 0;   /* where this step's words are in B->rw's rows */\n"
                   "    if (short_) {\n"
                   "        const unsigned long long grp_ = blk / %du;\n"
                   "        col_ = (int)(blk %% %du) * CS_SHORT;\n"
                   "        if (grp_ != B->rng_block) {\n"
                   "            B->rng_block = grp_;\n"
                   "            for (int j = 0; j < %d * CS_SHORT; j++) {\n"
                   "                unsigned int o_[4];\n"
                   "                cs_rng_block(L->seed, (unsigned int)(L->key0 + b0 + j %% CS_SHORT), grp_ * %du + (unsigned int)(j / CS_SHORT), 0u, o_);\n"
                   "                B->rw[0][j] = o_[0]; B->rw[1][j] = o_[1]; B->rw[2][j] = o_[2]; B->rw[3][j] = o_[3];\n"
                   "            }\n"
                   "        }\n"
                   "    } else\n",
                CS_SHORT_AHEAD, CS_SHORT_AHEAD, CS_SHORT_AHEAD, CS_SHORT_AHEAD);
        if (nb == 1)
            out(e, "    if (blk != B->rng_block) {   /* every %u steps: words for the next ones */\n"
                   "        B->rng_block = blk;\n", 4 / D);
        else
            out(e, "    {\n");
        out(e, "        for (int i = 0; i < nv; i++) {\n"
               "            unsigned int o_[4];\n");
        for (unsigned j = 0; j < nb; j++)
            out(e, "            cs_rng_block(L->seed, (unsigned int)(L->key0 + b0 + i), blk + %uu, 0u, o_);\n"
                   "            B->rw[%u][i] = o_[0]; B->rw[%u][i] = o_[1]; B->rw[%u][i] = o_[2]; B->rw[%u][i] = o_[3];\n",
                j, 4 * j, 4 * j + 1, 4 * j + 2, 4 * j + 3);
        out(e, "        }\n    }\n");
        for (unsigned k = 0; k < D; k++)
            out(e, "    const int wi%u = (int)(w0 + %uu - 4 * blk);\n", k, k);
    }
    for (unsigned k = 0; k < part->n_kernels; k++) {
        emit_call_pass(e, k, en->rollout);
        if (part->reason[k][0])
            out(e, "    /* kernel %u: %s */\n", k, part->reason[k]);
        else
            out(e, "    /* kernel %u */\n", k);
        if (en->rollout && k == part->n_kernels - 1)
            out(e, "    unsigned ended_ = 0;   /* some lane's episode ended (a pad lane's too); bit i: lane i's, in a short block */\n"
                   "    int bad_any_ = 0;   /* some lane's state is not finite */\n");
        if (en->rollout)
            out(e, "    if (only < 0 || only == %u)\n", k);
        emit_kernel_loops(e, en, k);
    }
}

/* cs_fresh: a lane's fresh start at time tau (params, state, observation). */
static void emit_fresh(emitter *e)
{
    const cs_program *p = e->p;
    unsigned nrb = (p->n_restart_draws + 3) / 4;
    e->scope = SCOPE_FRESH;
    e->part = NULL;
    out(e, "%s void cs_fresh(unsigned long long seed, unsigned int key, void *const *params, long long lane, long long tau, %s *out, float *obs)\n{\n",
        e->dialect == CS_DIALECT_C ? "static" : "CS_DEVICE", e->real);
    if (nrb) {
        out(e, "    unsigned int rw_[%u];\n", 4 * nrb);
        out(e, "    for (unsigned int j = 0; j < %uu; j++)\n"
               "        cs_rng_block(seed, key, (unsigned long long)tau, (1u << 16) | j, rw_ + 4 * j);\n",
            nrb);
    }
    out(e, "    (void)seed; (void)key; (void)params; (void)tau; (void)obs;\n");
    bool any_param = false;
    for (unsigned k = 0; k < p->n_params; k++)
        any_param |= p->param_restart[k] != 0;
    if (any_param) {
        e->now++;
        out(e, "    {\n");
        for (unsigned k = 0; k < p->n_params; k++) {
            if (!p->param_restart[k])
                continue;
            cs_node r = p->param_restart[k];
            if (node(e, r)->n_in || node(e, r)->op == CS_OP_UNIFORM)
                need(e, r);
            store(e, r, "", "    ((%s *)params[%u])[lane]", e->real, k);
        }
        out(e, "    }\n");
    }
    e->now++;
    /* Every node the fresh state needs, in id order. */
    uint32_t count = cs_graph_count(e->g);
    unsigned char *live = calloc(count, 1);
    if (!live) {
        snprintf(e->err, sizeof e->err, "out of memory");
        return;
    }
    for (unsigned k = 0; k < p->n_carried; k++)
        live[p->restart[k]] = 1;
    for (unsigned k = 0; k < p->n_obs; k++)
        live[p->obs_restart[k]] = 1;
    for (cs_node n = count - 1; n > 0; n--)
        if (live[n])
            for (unsigned k = 0; k < node(e, n)->n_in; k++)
                live[cs_graph_input(e->g, n, k)] = 1;
    for (cs_node n = 1; n < count; n++)
        if (live[n] && !is_const(e, n))
            need(e, n);
    free(live);
    for (unsigned k = 0; k < p->n_carried; k++)
        store(e, p->restart[k], "", "    out[%u]", k);
    out(e, "    if (obs) {\n");
    for (unsigned k = 0; k < p->n_obs; k++)
        store_out(e, p->obs_restart[k], true, "        obs[%u]", k);
    out(e, "    }\n}\n\n");
}

static void emit_prelude(emitter *e, const cs_schedule *s)
{
    const cs_program *p = e->p;
    out(e, "/* cartsim kernel: %s (%s), %s, fusion %s, unroll %d, %s dialect */\n", p->name, p->title,
        e->f32 ? "f32" : p->fast_f64 ? "f64 fast math" : "f64", cs_fusion_name(s->fusion), s->unroll,
        e->dialect == CS_DIALECT_C ? "C" : "CUDA");
    if (e->dialect == CS_DIALECT_CUDA) {
        /* NVRTC needs no include; a host shim may define these first (tests/cuda_shim.h). */
        out(e, "#ifndef CS_GLOBAL\n#define CS_GLOBAL extern \"C\" __global__\n#endif\n"
               "#ifndef CS_DEVICE\n#define CS_DEVICE __device__ __forceinline__\n#endif\n"
               "#ifndef CS_EXPORT\n#define CS_EXPORT extern \"C\" __device__\n#endif\n");
        cs_text_append(e->out, cs_prelude_text, strlen(cs_prelude_text));
        out(e, "\nCS_DEVICE double cs_clip(double x, double lo, double hi) { double m = lo > x ? lo : x; return hi < m ? hi : m; }\n"
               "CS_DEVICE float cs_clipf(float x, float lo, float hi) { float m = lo > x ? lo : x; return hi < m ? hi : m; }\n\n");
        return;
    }
    out(e, "#include <math.h>\n#include <stdlib.h>\n");
    cs_text_append(e->out, cs_prelude_text, strlen(cs_prelude_text));
    out(e, "\n#define CS_BLOCK %d\n#define CS_PAD %d\n#define CS_SHORT %d\n", CS_BLOCK_LANES, CS_PAD_LANES, CS_SHORT_LANES);
    /* Selects as masks of the value's width: GCC 12 vectorizes them, where
     * `c ? a : b` of reals becomes a branch or a mixed-width select. */
    out(e, "typedef union { float f; unsigned int u; } cs_bits32;\n"
           "typedef union { double f; unsigned long long u; } cs_bits64;\n"
           "static inline float cs_selectf(int c, float a, float b) { cs_bits32 x = {a}, y = {b}; unsigned int m = 0u - (unsigned int)c; x.u = (x.u & m) | (y.u & ~m); return x.f; }\n"
           "static inline double cs_select(int c, double a, double b) { cs_bits64 x = {a}, y = {b}; unsigned long long m = 0ull - (unsigned long long)c; x.u = (x.u & m) | (y.u & ~m); return x.f; }\n"
           "static inline double cs_clip(double x, double lo, double hi) { double m = cs_select(lo > x, lo, x); return cs_select(hi < m, hi, m); }\n"
           "static inline float cs_clipf(float x, float lo, float hi) { float m = cs_selectf(lo > x, lo, x); return cs_selectf(hi < m, hi, m); }\n\n");
}

static void emit_block_struct(emitter *e)
{
    const cs_program *p = e->p;
    uint32_t count = cs_graph_count(e->g);
    const char *R = e->real;
    out(e, "typedef struct {\n");
    out(e, "    %s c[%u][CS_BLOCK];      /* carried state (rollout) */\n", R, p->n_carried ? p->n_carried : 1);
    out(e, "    double ret[CS_BLOCK];\n");
    out(e, "    int ss[CS_BLOCK];\n");
    /* int, as wide as an f32: a byte array here would make GCC's vector
     * loop 32 lanes long (a vector of bytes), too long for short blocks. */
    out(e, "    int done[CS_BLOCK], term[CS_BLOCK], trunc[CS_BLOCK];\n");
    out(e, "    unsigned char ev[CS_BLOCK];   /* step: the lanes with an event (emit_c_step) */\n");
    out(e, "    int end[CS_BLOCK];   /* rollout: terminated or truncated, known before done */\n");
    unsigned nb = rng_blocks(p->n_step_draws);
    out(e, "    unsigned int rw[%u][CS_BLOCK];     /* Philox words of the current step */\n", nb ? 4 * nb : 1);
    out(e, "    unsigned long long rng_block;\n");
    for (cs_node n = 1; n < count; n++) {
        if (!e->any_materialized[n])
            continue;
        const cs_node_data *d = node(e, n);
        if (d->op == CS_OP_STACK)
            out(e, "    %s m%u[%u][CS_BLOCK];\n", c_type((cs_type)d->type), n, d->n_in);
        else
            out(e, "    %s m%u[CS_BLOCK];\n", c_type((cs_type)d->type), n);
    }
    if (e->near64_kernels)
        out(e, "    long long far[CS_BLOCK];   /* a pass's lanes whose near sin/cos may not be glibc's */\n"
               "    int far_at[CS_BLOCK];      /* ...their indices */\n"
               "    int mostly_far[%u];        /* per kernel: this block's last near loop found most lanes far */\n",
            e->near64_kernels);
    for (cs_node n = 1; n < count; n++)
        if (e->any_called[n])
            out(e, "    %s x%u[CS_BLOCK];   /* a result of a pass of its own */\n",
                c_type((cs_type)node(e, n)->type), n);
    out(e, "} cs_block;\n\n");
}

static void emit_c_rollout(emitter *e, const cs_schedule *s, const entry *en, const cs_text *step_fn)
{
    const cs_program *p = e->p;
    out(e, "static __attribute__((noinline)) void cs_rollout_restart(cs_block *B, const cs_lanes *L, int i, long long lane, long long tau)\n{\n"
           "    %s fresh[%u];\n"
           "    if (B->done[i] & 2) { L->nonfinite[lane] += 1; }\n"
           "    else { L->segments[lane] += 1; L->return_sum[lane] += B->ret[i]; }\n"
           "    B->ret[i] = 0;\n"
           "    cs_fresh(L->seed, (unsigned int)(L->key0 + lane), L->params, lane, tau, fresh, 0);\n",
        e->real, p->n_carried ? p->n_carried : 1);
    for (unsigned k = 0; k < p->n_carried; k++)
        out(e, "    B->c[%u][i] = fresh[%u];\n", k, k);
    out(e, "    B->ss[i] = 0;\n}\n\n");
    cs_text_append(e->out, step_fn->data ? step_fn->data : "", step_fn->len);
    /* A launch (L->launch > 0) runs one kernel of one step over every block
     * kept in L->blocks, where the values that cross kernels wait for the
     * next launch; otherwise one block struct serves every block in turn. */
    out(e, "unsigned long long cs_kernel_block_bytes(void) { return (sizeof(cs_block) + 63) / 64 * 64; }\n\n"
           "void cs_kernel_rollout(const cs_lanes *L)\n{\n"
           "    const int only = L->launch - 1;\n"
           "    cs_block *B = only < 0 ? (cs_block *)aligned_alloc(64, cs_kernel_block_bytes()) : (cs_block *)L->blocks;\n"
           "    if (!B) return;\n"
           "    if (only < 0) { unsigned char *z_ = (unsigned char *)B; for (size_t k = 0; k < sizeof *B; k++) z_[k] = 0; }   /* the pad lanes start defined */\n"
           "    for (long long b0 = L->begin; b0 < L->end; b0 += CS_BLOCK) {\n"
           "        const int n = (int)(L->end - b0 < CS_BLOCK ? L->end - b0 : CS_BLOCK);\n"
           "        if (only >= 0) B = (cs_block *)((char *)L->blocks + (b0 - L->begin) / CS_BLOCK * cs_kernel_block_bytes());\n"
           "        for (int i = 0; i < n; i++) {\n");
    for (unsigned k = 0; k < p->n_carried; k++)
        out(e, "            B->c[%u][i] = ((const %s *)L->carried[%u])[b0 + i];\n", k, e->real, k);
    out(e, "            B->ss[i] = L->segstep[b0 + i];\n"
           "            B->ret[i] = L->seg_return[b0 + i];\n"
           "        }\n"
           "        B->rng_block = ~0ull;\n"
           "        long long s = 0;\n");
    if (e->padded)
        out(e, "        if (n <= CS_SHORT) {\n"
               "            cs_rollout_steps_short(B, L, n, b0, L->t, L->steps, only);\n"
               "            s = L->steps;\n"
               "        }\n");
    out(e, "        for (; s + %d <= L->steps; s += %d) {\n", s->unroll, s->unroll);
    for (int u = 0; u < s->unroll; u++)
        out(e, "            cs_rollout_step(B, L, n, b0, L->t + s + %d, only);\n", u);
    out(e, "        }\n"
           "        for (; s < L->steps; s++)\n"
           "            cs_rollout_step(B, L, n, b0, L->t + s, only);\n"
           "        for (int i = 0; i < n; i++) {\n");
    for (unsigned k = 0; k < p->n_carried; k++)
        out(e, "            ((%s *)L->carried[%u])[b0 + i] = B->c[%u][i];\n", e->real, k, k);
    out(e, "            L->segstep[b0 + i] = B->ss[i];\n"
           "            L->seg_return[b0 + i] = B->ret[i];\n"
           "        }\n    }\n    if (only < 0) free(B);\n}\n\n");
    (void)en;
}

/* A lane's fresh start at time `tau`, stored to the global buffers: through
 * L's pointers, or with `locals` through the restrict copies that
 * cs_kernel_step writes every buffer through (c0_, obs_, segstep_). */
static void emit_fresh_store(emitter *e, const char *ind, const char *tau, bool obs, bool locals)
{
    const cs_program *p = e->p;
    const char *L = e->L;
    out(e, "%s{\n%s    %s f_[%u]; float fo_[%u];\n%s    cs_fresh(%sseed, (unsigned int)(%skey0 + lane), %sparams, lane, %s, f_, fo_);\n", ind, ind,
        e->real, p->n_carried ? p->n_carried : 1, p->n_obs ? p->n_obs : 1, ind, L, L, L, tau);
    for (unsigned k = 0; k < p->n_carried; k++) {
        if (locals)
            out(e, "%s    c%u_[lane] = f_[%u];\n", ind, k, k);
        else
            out(e, "%s    ((%s *)%scarried[%u])[lane] = f_[%u];\n", ind, e->real, L, k, k);
    }
    if (obs)
        for (unsigned k = 0; k < p->n_obs; k++) {
            if (locals)
                out(e, "%s    obs_[%u * S + lane] = fo_[%u];\n", ind, k, k);
            else
                out(e, "%s    %sobs[%uull * %sstride + lane] = fo_[%u];\n", ind, L, k, L, k);
        }
    if (locals)
        out(e, "%s    segstep_[lane] = 0;\n%s}\n", ind, ind);
    else
        out(e, "%s    %ssegstep[lane] = 0;\n%s}\n", ind, L, ind);
}

/* The step entry: the kernels store every lane's next state, observation
 * and reward in place (emit_final), then branch-free loops that vectorize
 * (the buffers are restrict locals) count the episode steps and set the
 * flags, and a scalar pass visits only the few lanes with an event, found
 * through B->ev: a next-step restart of a lane that ended the step before
 * (it overwrites what the kernels wrote), a state gone NaN or infinite, a
 * same-step end. Written one lane at a time with a branch each, the
 * write-back cost more than the kernels (4096 CartPoles). */
static void emit_c_step(emitter *e, const cs_text *step_fn)
{
    const cs_program *p = e->p;
    const char *R = e->real;
    cs_text_append(e->out, step_fn->data ? step_fn->data : "", step_fn->len);
    out(e, "void cs_kernel_step(const cs_lanes *L)\n{\n"
           "    cs_block *B = (cs_block *)aligned_alloc(64, (sizeof(cs_block) + 63) / 64 * 64);\n"
           "    if (!B) return;\n"
           "    const long long S = L->stride, t = L->t;\n"
           "    const int next = L->mode == CS_MODE_NEXT_STEP, same = L->mode == CS_MODE_SAME_STEP;\n"
           "    for (long long b0 = L->begin; b0 < L->end; b0 += CS_BLOCK) {\n"
           "        const int n = (int)(L->end - b0 < CS_BLOCK ? L->end - b0 : CS_BLOCK);\n"
           "        B->rng_block = ~0ull;\n"
           "        cs_step_kernels(B, L, n, b0, t);\n"
           "        {   /* a block of its own, in which every buffer is written through these alone */\n");
    for (unsigned k = 0; k < p->n_carried; k++)
        out(e, "        %s *restrict c%u_ = (%s *)L->carried[%u];\n", R, k, R, k);
    out(e, "        float *restrict obs_ = L->obs;\n"
           "        int *restrict segstep_ = L->segstep;\n"
           "        double *restrict reward_ = L->reward;\n"
           "        unsigned char *restrict term_ = L->terminated, *restrict trunc_ = L->truncated, *restrict pending_ = L->pending;\n"
           "        const int *restrict kterm_ = B->term, *restrict ktrunc_ = B->trunc, *restrict kbad_ = B->done;\n"
           "        unsigned char *restrict ev_ = B->ev;\n"
           "        /* counters, then flags: loops of one width each, which GCC vectorizes */\n"
           "        for (int i = 0; i < n; i++)\n"
           "            segstep_[b0 + i] += 1;\n"
           "        /* ev: 1 restarts now (next-step), 2 bad state, 4 ended with a same-step restart */\n"
           "        for (int i = 0; i < n; i++) {\n"
           "            const long long lane = b0 + i;\n"
           "            const int bad_ = kbad_[i];\n"
           "            const int term = kterm_[i] | bad_, trunc = ktrunc_[i], ended = term | trunc;\n"
           "            term_[lane] = (unsigned char)term;\n"
           "            trunc_[lane] = (unsigned char)trunc;\n"
           "            int restart = 0;\n"
           "            if (next) {\n"
           "                restart = pending_[lane];\n"
           "                pending_[lane] = (unsigned char)ended;\n"
           "            }\n"
           "            ev_[i] = (unsigned char)(restart | (bad_ << 1) | ((same & ended) << 2));\n"
           "        }\n"
           "        for (int i = 0; i < n; i++) {\n"
           "            const int ev = ev_[i];\n"
           "            if (!ev) continue;\n"
           "            const long long lane = b0 + i;\n"
           "            if (ev & 1) {\n");
    emit_fresh_store(e, "                ", "t", true, true);
    out(e, "                pending_[lane] = 0; reward_[lane] = 0;\n"
           "                term_[lane] = 0; trunc_[lane] = 0;\n"
           "                continue;\n"
           "            }\n"
           "            if ((ev & 2) && L->nonfinite) L->nonfinite[lane] += 1;\n"
           "            if (ev & 4) {\n");
    for (unsigned k = 0; k < p->n_obs; k++)
        out(e, "                L->final_obs[%u * S + lane] = obs_[%u * S + lane];\n", k, k);
    emit_fresh_store(e, "                ", "t + 1", true, true);
    out(e, "            }\n"
           "        }\n        }\n    }\n    free(B);\n}\n\n");
}

static void emit_c_restart(emitter *e)
{
    out(e, "void cs_kernel_restart(const cs_lanes *L)\n{\n"
           "    for (long long lane = L->begin; lane < L->end; lane++) {\n");
    emit_fresh_store(e, "        ", "L->t", true, false);
    out(e, "        if (L->pending) L->pending[lane] = 0;\n"
           "        if (L->seg_return) L->seg_return[lane] = 0;\n"
           "    }\n}\n");
}

/* Does any kernel of the partition load a per-environment parameter? */
static bool reads_params(const emitter *e, const cs_partition *part)
{
    uint32_t count = cs_graph_count(e->g);
    for (cs_node n = 1; n < count; n++)
        if (part->kernel[n] != CS_NO_KERNEL && node(e, n)->op == CS_OP_PARAM)
            return true;
    return false;
}

/* The function that runs one step's kernels over a block, into its own text
 * (the block struct must be declared first, and it depends on every entry). */
static int emit_step_function(emitter *e, const cs_schedule *s, const entry *en, const cs_partition *part,
                              cs_text *fn)
{
    cs_text *saved = e->out;
    e->out = fn;
    e->part = part;
    e->scope = en->rollout ? SCOPE_ROLLOUT : SCOPE_STEP;
    /* Not inlined: on a cpu the lane loop dominates, and U inlined copies of
     * a multi-versioned vector loop cost seconds of compile time for nothing
     * (measured: the same speed at unroll 1, 4 and 10). */
    /* `only`: a launch's one kernel, or -1 for the whole step */
    e->rollout = en->rollout;
    if (en->rollout)
        out(e, "static inline __attribute__((always_inline)) void cs_rollout_lanes(cs_block *restrict B, const cs_lanes *restrict L, int n, long long b0, long long t, int only, int short_)\n{\n");
    else
        out(e, "static void cs_step_kernels(cs_block *restrict B, const cs_lanes *restrict L, int n, long long b0, long long t)\n{\n");
    out(e, "    (void)t;\n");
    /* Short blocks run padded to a multiple of CS_PAD lanes: GCC enters its
     * vector loop only from 8 (or, by its cost model, 32) lanes, and runs
     * anything shorter scalar (16 environments went 8x slower per lane than
     * 32). The pad lanes live in the block (CS_BLOCK is a multiple of
     * CS_PAD), compute what they compute, and are never restarted nor
     * stored; they read no caller's buffer, so a rollout that reads
     * per-environment parameters (L->params[k][lane]) is not padded. */
    if (en->rollout)
        e->padded = !reads_params(e, part);
    if (en->rollout && e->padded)
        out(e, "    const int nv = short_ ? CS_SHORT : (n + CS_PAD - 1) / CS_PAD * CS_PAD;\n");
    else
        out(e, "    const int nv = n;\n");
    if (en->rollout)
        out(e, "    (void)short_;\n");
    emit_kernels(e, en);
    /* The restarts, of the lanes whose episode ended, if any (ended_: none
     * at most steps where episodes end together, as Pendulum's), then of
     * the lanes whose state is not finite. Two branches, not one on either:
     * end waits only for the termination's inputs, done for the whole next
     * state (is it finite?), and a restart branch that waits for the whole
     * state is mispredicted after the step is done, when the next step's
     * work it ran ahead into is thrown away. Where ended_ is hard to
     * predict (a few lanes: 4 CartPoles end an episode every ~5 steps),
     * resolving it early made the step 11% faster. A short block visits
     * only its ended lanes, by the bits of ended_: a branch per lane would
     * be mispredicted where one ends. */
    if (en->rollout)
        out(e, "    /* restarts: the lanes whose episode ended, then the lanes with a non-finite state */\n"
               "    if (only < 0 || only == %u) {\n"
               "        if (short_)\n"
               "            for (unsigned m_ = ended_ & ((1u << n) - 1u); m_; m_ &= m_ - 1u) {\n"
               "                const int i = __builtin_ctz(m_);\n"
               "                cs_rollout_restart(B, L, i, b0 + i, t + 1);\n"
               "            }\n"
               "        else if (ended_)\n"
               "            for (int i = 0; i < n; i++)\n"
               "                if (B->end[i])\n"
               "                    cs_rollout_restart(B, L, i, b0 + i, t + 1);\n"
               "        if (__builtin_expect(bad_any_, 0))\n"
               "            for (int i = 0; i < n; i++)\n"
               "                if (!B->end[i] && B->done[i])\n"
               "                    cs_rollout_restart(B, L, i, b0 + i, t + 1);\n"
               "    }\n",
            part->n_kernels - 1);
    out(e, "}\n\n");
    /* Blocks of 1 to CS_SHORT lanes run a variant of their own: CS_SHORT
     * lanes, a constant, so that GCC makes the loop one vector of 16 bytes
     * without a remainder (not a 32-byte vector half of it padding), with
     * the time loop inside (no call per step). */
    if (en->rollout) {
        out(e, "static __attribute__((noinline)) void cs_rollout_step(cs_block *restrict B, const cs_lanes *restrict L, int n, long long b0, long long t, int only)\n"
               "{\n    cs_rollout_lanes(B, L, n, b0, t, only, 0);\n}\n\n");
        if (e->padded)
            out(e, "static __attribute__((noinline)) void cs_rollout_steps_short(cs_block *restrict B, const cs_lanes *restrict L, int n, long long b0, long long t, long long steps, int only)\n"
                   "{\n    for (long long s = 0; s < steps; s++)\n        cs_rollout_lanes(B, L, n, b0, t + s, only, 1);\n}\n\n");
    }
    e->out = saved;
    return e->err[0] ? -1 : 0;
}


/* ---- the CUDA dialect's skeleton: a thread per lane (grid-stride) ---- */

#define CS_LANE_LOOP "    for (long long lane = L.begin + (long long)blockIdx.x * blockDim.x + threadIdx.x; lane < L.end;\n" \
                     "         lane += (long long)gridDim.x * blockDim.x) {\n"

/* The step stream's words for global step t into sw_ (registers). With
 * `cached`, the block is kept across the steps of a persistent loop. */
static void emit_cuda_draws(emitter *e, bool cached)
{
    unsigned D = e->p->n_step_draws, nb = rng_blocks(D);
    if (!D)
        return;
    out(e, "        const unsigned long long w0 = (unsigned long long)t * %uu, blk = w0 >> 2;\n", D);
    if (cached && nb == 1)
        out(e, "        if (blk != sblk) {\n            sblk = blk;\n");
    else
        out(e, "        {\n");
    for (unsigned j = 0; j < nb; j++)
        out(e, "            cs_rng_block(L.seed, (unsigned int)(L.key0 + lane), blk + %uu, 0u, sw_ + %u);\n", j, 4 * j);
    out(e, "        }\n");
    for (unsigned k = 0; k < D; k++)
        out(e, "        const int wi%u = (int)(w0 + %uu - 4 * blk);\n", k, k);
}

static bool kernel_draws(const emitter *e, unsigned k)
{
    uint32_t count = cs_graph_count(e->g);
    for (cs_node n = 1; n < count; n++)
        if (e->part->kernel[n] == k && node(e, n)->op == CS_OP_UNIFORM)
            return true;
    return false;
}

static void emit_kernel_nodes(emitter *e, unsigned k)
{
    uint32_t count = cs_graph_count(e->g);
    for (cs_node n = 1; n < count; n++)
        if (e->part->kernel[n] == k)
            emit_node(e, n);
}

static void emit_bad_check(emitter *e, const cs_node *next)
{
    out(e, "        const int bad_ = !(1");
    for (unsigned k = 0; k < e->p->n_carried; k++) {
        out(e, " & (");
        ref(e, next[k]);
        out(e, " - ");
        ref(e, next[k]);
        out(e, " == 0)");
    }
    out(e, ");\n");
}


/* Persistent (and unrolled) rollout: one kernel, the state in registers. */
static void emit_cuda_rollout_fused(emitter *e, const cs_schedule *s)
{
    const cs_program *p = e->p;
    const char *R = e->real;
    unsigned nb = rng_blocks(p->n_step_draws);
    e->scope = SCOPE_THREAD;
    out(e, "CS_GLOBAL void cs_kernel_rollout(cs_lanes L)\n{\n" CS_LANE_LOOP);
    for (unsigned k = 0; k < p->n_carried; k++)
        out(e, "    %s c%u = ((const %s *)L.carried[%u])[lane];\n", R, k, R, k);
    out(e, "    int ss = L.segstep[lane];\n    double ret = L.seg_return[lane], rsum = 0;\n"
           "    long long segs = 0, nonfin = 0;\n");
    if (nb)
        out(e, "    unsigned int sw_[%u];\n    unsigned long long sblk = ~0ull;\n", 4 * nb);
    out(e, "#pragma unroll %d\n    for (long long s = 0; s < L.steps; s++) {\n        const long long t = L.t + s;\n",
        s->unroll);
    e->now++;
    e->kernel = 0;
    emit_cuda_draws(e, true);
    emit_kernel_nodes(e, 0);
    cs_node roots[3] = {p->roll_reward, p->roll_terminated, p->roll_truncated};
    for (unsigned k = 0; k < p->n_carried; k++)
        need(e, p->roll_next[k]);
    for (unsigned k = 0; k < 3; k++)
        need(e, roots[k]);
    emit_bad_check(e, p->roll_next);
    for (unsigned k = 0; k < p->n_carried; k++)
        store(e, p->roll_next[k], "", "        c%u", k);
    out(e, "        ss += 1;\n        ret += (double)");
    ref(e, p->roll_reward);
    out(e, ";\n        if (bad_ | ");
    ref(e, p->roll_terminated);
    out(e, " | ");
    ref(e, p->roll_truncated);
    out(e, ") {\n            if (bad_) nonfin += 1; else { segs += 1; rsum += ret; }\n            ret = 0;\n"
           "            %s f_[%u];\n            cs_fresh(L.seed, (unsigned int)(L.key0 + lane), L.params, lane, t + 1, f_, 0);\n", R,
        p->n_carried ? p->n_carried : 1);
    for (unsigned k = 0; k < p->n_carried; k++)
        out(e, "            c%u = f_[%u];\n", k, k);
    out(e, "            ss = 0;\n        }\n    }\n");
    for (unsigned k = 0; k < p->n_carried; k++)
        out(e, "    ((%s *)L.carried[%u])[lane] = c%u;\n", R, k, k);
    out(e, "    L.segstep[lane] = ss;\n    L.seg_return[lane] = ret;\n"
           "    L.segments[lane] += segs;\n    L.return_sum[lane] += rsum;\n    L.nonfinite[lane] += nonfin;\n"
           "    }\n}\n\n");
}

/* rules / none: one kernel per partition, one step per launch, values
 * crossing kernels in the scratch buffer; the last kernel commits. */
static void emit_cuda_rollout_split(emitter *e)
{
    const cs_program *p = e->p;
    unsigned nb = rng_blocks(p->n_step_draws);
    e->scope = SCOPE_STEP;
    for (unsigned k = 0; k < e->part->n_kernels; k++) {
        if (e->part->reason[k][0])
            out(e, "/* kernel %u: %s */\n", k, e->part->reason[k]);
        out(e, "CS_GLOBAL void cs_rollout_k%u(cs_lanes L, char *scratch)\n{\n    const long long t = L.t;\n"
               "    (void)scratch; (void)t;\n" CS_LANE_LOOP, k);
        e->now++;
        e->kernel = k;
        if (kernel_draws(e, k)) {
            out(e, "        unsigned int sw_[%u];\n", 4 * nb);
            emit_cuda_draws(e, false);
        }
        emit_kernel_nodes(e, k);
        if (k == e->part->n_kernels - 1) {
            cs_node roots[3] = {p->roll_reward, p->roll_terminated, p->roll_truncated};
            for (unsigned c = 0; c < p->n_carried; c++)
                need(e, p->roll_next[c]);
            for (unsigned c = 0; c < 3; c++)
                need(e, roots[c]);
            emit_bad_check(e, p->roll_next);
            for (unsigned c = 0; c < p->n_carried; c++)
                store(e, p->roll_next[c], "", "        ((%s *)L.carried[%u])[lane]", e->real, c);
            out(e, "        L.segstep[lane] += 1;\n        L.seg_return[lane] += (double)");
            ref(e, p->roll_reward);
            out(e, ";\n        if (bad_ | ");
            ref(e, p->roll_terminated);
            out(e, " | ");
            ref(e, p->roll_truncated);
            out(e, ") {\n            if (bad_) L.nonfinite[lane] += 1;\n"
                   "            else { L.segments[lane] += 1; L.return_sum[lane] += L.seg_return[lane]; }\n"
                   "            L.seg_return[lane] = 0;\n");
            emit_fresh_store(e, "            ", "t + 1", false, false);
            out(e, "        }\n");
        }
        out(e, "    }\n}\n\n");
    }
}

/* One step with the caller's inputs: always one fused kernel. */
static void emit_cuda_step(emitter *e)
{
    const cs_program *p = e->p;
    unsigned nb = rng_blocks(p->n_step_draws);
    e->scope = SCOPE_STEP;
    out(e, "CS_GLOBAL void cs_kernel_step(cs_lanes L)\n{\n    const long long t = L.t;\n    (void)t;\n" CS_LANE_LOOP);
    out(e, "        if (L.mode == CS_MODE_NEXT_STEP && L.pending[lane]) {\n");
    emit_fresh_store(e, "            ", "t", true, false);
    out(e, "            L.pending[lane] = 0; L.reward[lane] = 0; L.terminated[lane] = 0; L.truncated[lane] = 0;\n"
           "            continue;\n        }\n");
    e->now++;
    e->kernel = 0;
    if (kernel_draws(e, 0)) {
        out(e, "        unsigned int sw_[%u];\n", 4 * nb);
        emit_cuda_draws(e, false);
    }
    emit_kernel_nodes(e, 0);
    for (unsigned k = 0; k < p->n_carried; k++)
        need(e, p->next[k]);
    for (unsigned k = 0; k < p->n_obs; k++)
        need(e, p->obs_next[k]);
    cs_node roots[3] = {p->reward, p->terminated, p->truncated};
    for (unsigned k = 0; k < 3; k++)
        need(e, roots[k]);
    emit_bad_check(e, p->next);
    for (unsigned k = 0; k < p->n_carried; k++)
        store(e, p->next[k], "", "        ((%s *)L.carried[%u])[lane]", e->real, k);
    for (unsigned k = 0; k < p->n_obs; k++)
        store_out(e, p->obs_next[k], true, "        L.obs[%uull * L.stride + lane]", k);
    out(e, "        const int term = (");
    ref(e, p->terminated);
    out(e, ") | bad_, trunc = ");
    ref(e, p->truncated);
    out(e, ";\n");
    store_out(e, p->reward, false, "        L.reward[lane]");
    out(e, "        L.terminated[lane] = (unsigned char)term;\n        L.truncated[lane] = (unsigned char)trunc;\n"
           "        L.segstep[lane] += 1;\n        if (bad_ && L.nonfinite) L.nonfinite[lane] += 1;\n"
           "        if (term | trunc) {\n            if (L.mode == CS_MODE_SAME_STEP) {\n");
    for (unsigned k = 0; k < p->n_obs; k++)
        out(e, "                L.final_obs[%uull * L.stride + lane] = L.obs[%uull * L.stride + lane];\n", k, k);
    emit_fresh_store(e, "                ", "t + 1", true, false);
    out(e, "            } else if (L.mode == CS_MODE_NEXT_STEP) {\n                L.pending[lane] = 1;\n            }\n"
           "        }\n    }\n}\n\n");
}

static void emit_cuda_restart(emitter *e)
{
    out(e, "CS_GLOBAL void cs_kernel_restart(cs_lanes L)\n{\n" CS_LANE_LOOP);
    emit_fresh_store(e, "        ", "L.t", true, false);
    out(e, "        if (L.pending) L.pending[lane] = 0;\n        if (L.seg_return) L.seg_return[lane] = 0;\n    }\n}\n\n");
}

/* Scratch offsets (bytes per lane, 8-aligned) of the values crossing kernels. */
static void layout_scratch(emitter *e)
{
    uint32_t count = cs_graph_count(e->g), off = 0;
    for (cs_node n = 1; n < count; n++) {
        if (!e->materialized[n])
            continue;
        const cs_node_data *d = node(e, n);
        unsigned size = (d->type == CS_F64 ? 8u : 4u) * (d->op == CS_OP_STACK ? d->n_in : 1u);
        e->scratch_off[n] = off;
        off += (size + 7) & ~7u;
    }
    e->scratch_bytes = off;
}

static int emit_cuda(emitter *e, const cs_plan *plan, const cs_schedule *s)
{
    emit_prelude(e, s);
    emit_fresh(e);
    mark_materialized(e, &plan->roll, plan->roll_roots, plan->n_roll);
    layout_scratch(e);
    out(e, "CS_EXPORT const unsigned int cs_scratch_bytes_per_lane = %uu;\n", e->scratch_bytes);
    out(e, "CS_EXPORT const unsigned int cs_kernels_per_step = %uu;\n\n", plan->roll.n_kernels);
    e->part = &plan->roll;
    if (s->fusion == CS_FUSION_FULL)
        emit_cuda_rollout_fused(e, s);
    else
        emit_cuda_rollout_split(e);
    /* The step kernel is always fused: cs_env_step is one launch. */
    e->part = &plan->step_fused;
    memset(e->materialized, 0, cs_graph_count(e->g) * sizeof *e->materialized);
    emit_cuda_step(e);
    emit_cuda_restart(e);
    return e->err[0] ? -1 : 0;
}

int cs_emit(const cs_program *p, const cs_plan *plan, const cs_schedule *s, cs_dialect d, cs_text *text, char *err,
            size_t err_size)
{
    if (s->unroll < 1) {
        snprintf(err, err_size, "unroll must be at least 1");
        return -1;
    }
    for (unsigned k = 0; k < p->n_inputs; k++)
        if (!p->policy[k] || !p->roll_next) {
            snprintf(err, err_size, "the program has no in-kernel policy");
            return -1;
        }
    emitter e = {.p = p, .g = p->graph, .dialect = d, .out = text, .f32 = p->real == CS_F32};
    e.real = e.f32 ? "float" : "double";
    e.L = d == CS_DIALECT_C ? "L->" : "L.";
    uint32_t count = cs_graph_count(p->graph);
    e.stamp = calloc(count, sizeof *e.stamp);
    e.materialized = calloc(count, sizeof *e.materialized);
    e.any_materialized = calloc(count, sizeof *e.any_materialized);
    e.any_called = calloc(count, sizeof *e.any_called);
    e.scratch_off = calloc(count, sizeof *e.scratch_off);
    if (d == CS_DIALECT_CUDA) {
        int rc = e.stamp && e.materialized && e.any_materialized && e.scratch_off ? emit_cuda(&e, plan, s) : -1;
        if (rc)
            snprintf(err, err_size, "emit (cuda): %s", e.err[0] ? e.err : "out of memory");
        else if (text->failed)
            rc = -1, snprintf(err, err_size, "out of memory");
        free(e.stamp);
        free(e.materialized);
        free(e.any_materialized);
        free(e.any_called);
        free(e.scratch_off);
        return rc;
    }
    cs_text roll_fn = {0}, step_fn = {0};
    int rc = -1;
    if (!e.stamp || !e.materialized || !e.any_materialized || !e.any_called || !e.scratch_off) {
        snprintf(err, err_size, "out of memory");
        goto done;
    }
    entry roll = {plan->roll_roots, plan->n_roll, true};
    entry step = {plan->step_roots, plan->n_step, false};
    mark_materialized(&e, &plan->roll, roll.roots, roll.n_roots);
    if (emit_step_function(&e, s, &roll, &plan->roll, &roll_fn))
        goto fail;
    mark_materialized(&e, &plan->step, step.roots, step.n_roots);
    if (emit_step_function(&e, s, &step, &plan->step, &step_fn))
        goto fail;

    emit_prelude(&e, s);
    emit_block_struct(&e);
    emit_fresh(&e);
    if (e.err[0])
        goto fail;
    emit_c_rollout(&e, s, &roll, &roll_fn);
    emit_c_step(&e, &step_fn);
    emit_c_restart(&e);
    if (text->failed || roll_fn.failed || step_fn.failed) {
        snprintf(err, err_size, "out of memory");
        goto done;
    }
    rc = 0;
    goto done;
fail:
    snprintf(err, err_size, "emit: %s", e.err);
done:
    cs_text_free(&roll_fn);
    cs_text_free(&step_fn);
    free(e.stamp);
    free(e.materialized);
    free(e.any_materialized);
    free(e.any_called);
    free(e.scratch_off);
    return rc;
}
