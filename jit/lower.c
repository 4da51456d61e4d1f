/* Lowering for the .env parser (jit/parse.c): a statement's syntax tree ->
 * graph nodes through the builder, type-checked, with vectors split into
 * components, functions inlined (their bodies lowered again at each call:
 * hash-consing shares what the calls have in common), and compile-time
 * values computed by cs_op_eval, the evaluator every op is computed with.
 * Recursion is bounded by LOWER_MAX and the work by work_max. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "parse_tree.h"

/* ---- compile-time values --------------------------------------------- */

static bool cfail(parser *P, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static bool cfail(parser *P, size_t pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(P->cerr, sizeof P->cerr, fmt, ap);
    va_end(ap);
    P->cerr_pos = pos;
    return false;
}

/* A compile-time number, in double: literals, pi, params, consts,
 * arithmetic and the math builtins. false with P->cerr when not one. */
bool cs_lower_ceval(parser *P, const expr *e, double *out)
{
    double a[3];
    switch (e->kind) {
    case E_NUM:
        *out = e->num;
        return true;
    case E_PARAM:
        if (e->sym->ranged)
            return cfail(P, e->pos, "'%s' has a range override (a per-lane value) and no compile-time value",
                         e->sym->name);
        *out = e->sym->value;
        return true;
    case E_CONST:
        if (!e->sym->has_value)
            return cfail(P, e->pos, "const '%s' has no compile-time value (%s)", e->sym->name, e->sym->why_not);
        *out = e->sym->value;
        return true;
    case E_NEG:
        if (!cs_lower_ceval(P, e->kid[0], a))
            return false;
        *out = -a[0];
        return true;
    case E_CHAIN:
        if (!cs_lower_ceval(P, e->kid[0], out))
            return false;
        for (unsigned k = 1; k < e->n; k++) {
            if (!cs_lower_ceval(P, e->kid[k], a))
                return false;
            if (e->ops[k - 1] == CS_OP_AND || e->ops[k - 1] == CS_OP_OR)
                return cfail(P, e->op_pos[k - 1], "'and'/'or' give a bool, not a compile-time number");
            *out = cs_op_eval(e->ops[k - 1], CS_F64, false, *out, a[0], 0);
        }
        return true;
    case E_BUILTIN: {
        cs_op op = (cs_op)e->op;
        if (op == CS_OP_UNIFORM || op == CS_OP_STACK)
            break;
        for (unsigned k = 0; k < e->n; k++)
            if (!cs_lower_ceval(P, e->kid[k], &a[k]))
                return false;
        /* in double, by the evaluator every op is computed with */
        *out = cs_op_eval(op, CS_F64, false, a[0], e->n > 1 ? a[1] : 0, e->n > 2 ? a[2] : 0);
        return true;
    }
    default:
        break;
    }
    return cfail(P, e->start, "not a compile-time number (only numbers, pi, params, consts, "
                            "+ - * / %% and math functions can be used here)");
}

/* A compile-time number or an error at the offending place. */
double cs_lower_constant(parser *P, const expr *e, const char *what)
{
    double v;
    if (!cs_lower_ceval(P, e, &v))
        cs_parse_fail_at(P, P->cerr_pos, "%s must be a compile-time number: %s", what, P->cerr);
    return v;
}

double cs_lower_constant_int(parser *P, const expr *e, const char *what, double lo, double hi)
{
    double v = cs_lower_constant(P, e, what);
    if (!(v >= lo && v <= hi && v == floor(v)))
        cs_parse_fail_at(P, e->start, "%s must be an integer from %.0f to %.0f, got %.17g", what, lo, hi, v);
    return v;
}

/* ---- lowering -------------------------------------------------------- */

val cs_lower_scalar(cs_node n, cs_type t) { return (val){n, 0, t}; }

const char *cs_lower_type_text(val v, char buf[32])
{
    if (v.n)
        snprintf(buf, 32, "a vector of %u", v.n);
    else
        snprintf(buf, 32, "%s", v.type == CS_BOOL ? "bool" : v.type == CS_I32 ? "int" : "real");
    return buf;
}

static void spend(parser *P, size_t n, size_t pos)
{
    P->work += n;
    if (P->work > P->work_max)
        cs_parse_fail_at(P, pos, "the program is too large (over %zu operations after inlining functions "
                        "and expanding vectors)", P->work_max);
}

cs_node cs_lower_to_real(parser *P, cs_node n, cs_type t, size_t pos)
{
    return t == CS_I32 ? cs_parse_built(P, cs_cast(P->g, P->real, n), pos) : n;
}

cs_node cs_lower_component(parser *P, val v, unsigned k, size_t pos)
{
    return cs_parse_built(P, cs_index(P->g, v.node, k), pos);
}

enum { CLASS_ARITH, CLASS_CMP, CLASS_LOGIC, CLASS_SELECT };

static int op_class(cs_op op)
{
    switch (op) {
    case CS_OP_LT: case CS_OP_LE: case CS_OP_GT: case CS_OP_GE: case CS_OP_EQ: case CS_OP_NE:
        return CLASS_CMP;
    case CS_OP_AND: case CS_OP_OR: case CS_OP_NOT:
        return CLASS_LOGIC;
    case CS_OP_SELECT:
        return CLASS_SELECT;
    default:
        return CLASS_ARITH;   /* + - * / % neg and the math builtins */
    }
}

static cs_node scalar_op(parser *P, cs_op op, unsigned na, const cs_node *in, size_t pos)
{
    cs_node r = na == 1 ? cs_unary(P->g, op, in[0])
              : na == 2 ? cs_binary(P->g, op, in[0], in[1])
                        : cs_ternary(P->g, op, in[0], in[1], in[2]);
    return cs_parse_built(P, r, pos);
}

/* One operator or builtin over scalars, or per component over vectors (a
 * scalar operand is broadcast): checks types, promotes int to real. */
static SMALL_FRAME val apply(parser *P, cs_op op, unsigned na, const val *a, size_t pos, const char *what);

static val apply(parser *P, cs_op op, unsigned na, const val *a, size_t pos, const char *what)
{
    char t1[32], t2[32];
    int cls = op_class(op);
    unsigned n = 0;
    for (unsigned i = 0; i < na; i++) {
        if (!a[i].n)
            continue;
        if (cls == CLASS_LOGIC)
            cs_parse_fail_at(P, pos, "%s needs bool operands, got %s", what, cs_lower_type_text(a[i], t1));
        if (cls == CLASS_SELECT && i == 0)
            cs_parse_fail_at(P, pos, "the condition of '?:' must be a bool, got %s", cs_lower_type_text(a[i], t1));
        if (n && a[i].n != n)
            cs_parse_fail_at(P, pos, "%s on vectors of different lengths (%u and %u)", what, n, a[i].n);
        n = a[i].n;
    }
    cs_type rt = P->real;
    bool promote = true;
    switch (cls) {
    case CLASS_LOGIC:
        for (unsigned i = 0; i < na; i++)
            if (a[i].type != CS_BOOL)
                cs_parse_fail_at(P, pos, "%s needs bool operands, got %s", what, cs_lower_type_text(a[i], t1));
        rt = CS_BOOL;
        promote = false;
        break;
    case CLASS_CMP:
        rt = CS_BOOL;
        if (a[0].type == CS_BOOL && a[1].type == CS_BOOL && (op == CS_OP_EQ || op == CS_OP_NE)) {
            promote = false;
            break;
        }
        for (unsigned i = 0; i < na; i++)
            if (a[i].type == CS_BOOL)
                cs_parse_fail_at(P, pos, "%s needs numbers, got bool", what);
        break;
    case CLASS_SELECT:
        if (a[0].type != CS_BOOL)
            cs_parse_fail_at(P, pos, "the condition of '?:' must be a bool, got %s", cs_lower_type_text(a[0], t1));
        if ((a[1].type == CS_BOOL) != (a[2].type == CS_BOOL))
            cs_parse_fail_at(P, pos, "the two branches of '?:' have different types: %s and %s",
                    cs_lower_type_text(a[1], t1), cs_lower_type_text(a[2], t2));
        if (a[1].type == CS_BOOL) {
            rt = CS_BOOL;
            promote = false;
        }
        break;
    default:
        for (unsigned i = 0; i < na; i++)
            if (a[i].type == CS_BOOL)
                cs_parse_fail_at(P, pos, "%s needs numbers, got bool", what);
        break;
    }
    unsigned first = cls == CLASS_SELECT;   /* the condition is never promoted */
    cs_node in[3];
    if (!n) {
        for (unsigned i = 0; i < na; i++)
            in[i] = promote && i >= first ? cs_lower_to_real(P, a[i].node, a[i].type, pos) : a[i].node;
        return cs_lower_scalar(scalar_op(P, op, na, in, pos), rt);
    }
    spend(P, n, pos);
    cs_node *items = cs_parse_alloc(P, &P->temp, n * sizeof *items);
    for (unsigned k = 0; k < n; k++) {
        for (unsigned i = 0; i < na; i++) {
            in[i] = a[i].n ? cs_lower_component(P, a[i], k, pos) : a[i].node;
            if (promote && i >= first)
                in[i] = cs_lower_to_real(P, in[i], a[i].type, pos);
        }
        items[k] = scalar_op(P, op, na, in, pos);
    }
    return (val){cs_parse_built(P, cs_stack(P->g, n, items), pos), n, rt};
}

static const char *op_text(cs_op op)
{
    switch (op) {
    case CS_OP_ADD: return "'+'";
    case CS_OP_SUB: return "'-'";
    case CS_OP_MUL: return "'*'";
    case CS_OP_DIV: return "'/'";
    case CS_OP_MOD: return "'%'";
    case CS_OP_AND: return "'and'";
    case CS_OP_OR: return "'or'";
    case CS_OP_LT: return "'<'";
    case CS_OP_LE: return "'<='";
    case CS_OP_GT: return "'>'";
    case CS_OP_GE: return "'>='";
    case CS_OP_EQ: return "'=='";
    case CS_OP_NE: return "'!='";
    default: return "this operator";
    }
}

static SMALL_FRAME val lower_stack(parser *P, const expr *e, val *frame)
{
    char t[32];
    val *items = cs_parse_alloc(P, &P->temp, e->n * sizeof *items);
    cs_node *nodes = cs_parse_alloc(P, &P->temp, e->n * sizeof *nodes);
    bool bools = false;
    for (unsigned k = 0; k < e->n; k++) {
        items[k] = cs_lower(P, e->kid[k], frame);
        if (items[k].n)
            cs_parse_fail_at(P, e->kid[k]->start, "stack() items must be scalars, got %s", cs_lower_type_text(items[k], t));
        if (k == 0)
            bools = items[k].type == CS_BOOL;
        else if (bools != (items[k].type == CS_BOOL))
            cs_parse_fail_at(P, e->kid[k]->start, "stack() items must be all numbers or all bools");
        nodes[k] = cs_lower_to_real(P, items[k].node, items[k].type, e->pos);
    }
    return (val){cs_parse_built(P, cs_stack(P->g, e->n, nodes), e->pos), e->n, bools ? CS_BOOL : P->real};
}

/* uniform(lo, hi) = lo + (hi - lo) * u, numpy's Generator.uniform. */
static SMALL_FRAME val lower_uniform(parser *P, const expr *e, val *frame)
{
    char t[32];
    cs_node in[2];
    for (unsigned k = 0; k < 2; k++) {
        val v = cs_lower(P, e->kid[k], frame);
        if (v.n || v.type == CS_BOOL)
            cs_parse_fail_at(P, e->kid[k]->start, "uniform() needs scalar numbers, got %s", cs_lower_type_text(v, t));
        in[k] = cs_lower_to_real(P, v.node, v.type, e->pos);
    }
    int stream = P->ctx == CTX_RESET ? CS_STREAM_RESTART : CS_STREAM_STEP;
    cs_graph *g = P->g;
    cs_node u = cs_parse_built(P, cs_leaf(g, CS_OP_UNIFORM, P->real, CS_UNIFORM_ID(stream, e->index)), e->pos);
    cs_node span = cs_parse_built(P, cs_binary(g, CS_OP_SUB, in[1], in[0]), e->pos);
    cs_node scaled = cs_parse_built(P, cs_binary(g, CS_OP_MUL, span, u), e->pos);
    return cs_lower_scalar(cs_parse_built(P, cs_binary(g, CS_OP_ADD, in[0], scaled), e->pos), P->real);
}

val cs_lower_unpack_component(parser *P, val v, unsigned k, size_t pos)
{
    return cs_lower_scalar(cs_lower_component(P, v, k, pos), v.type);
}

void cs_lower_check_unpack(parser *P, val v, unsigned n, size_t pos)
{
    char t[32];
    if (v.n != n)
        cs_parse_fail_at(P, pos, "cannot unpack %s into %u names", cs_lower_type_text(v, t), n);
}

/* Inlines a function: arguments bound to its first slots, then the body. */
static SMALL_FRAME val lower_call(parser *P, const expr *e, val *frame)
{
    const fn_def *f = e->sym->fn;
    val *slots = cs_parse_alloc(P, &P->temp, (f->n_slots ? f->n_slots : 1) * sizeof *slots);
    for (unsigned k = 0; k < f->n_params; k++)
        slots[k] = cs_lower(P, e->kid[k], frame);
    for (const stmt *s = f->body; s; s = s->next) {
        val v = cs_lower(P, s->value, slots);
        if (s->n_targets == 1) {
            slots[s->slots[0]] = v;
            continue;
        }
        cs_lower_check_unpack(P, v, s->n_targets, s->pos);
        for (unsigned k = 0; k < s->n_targets; k++)
            slots[s->slots[k]] = cs_lower_unpack_component(P, v, k, s->pos);
    }
    return cs_lower(P, f->result, slots);
}

static SMALL_FRAME val lower_unary(parser *P, const expr *e, val *frame, cs_op op, const char *what)
{
    val a = cs_lower(P, e->kid[0], frame);
    return apply(P, op, 1, &a, e->pos, what);
}

static SMALL_FRAME val lower_chain(parser *P, const expr *e, val *frame)
{
    val pair[2];
    pair[0] = cs_lower(P, e->kid[0], frame);
    for (unsigned k = 1; k < e->n; k++) {
        pair[1] = cs_lower(P, e->kid[k], frame);
        pair[0] = apply(P, e->ops[k - 1], 2, pair, e->op_pos[k - 1], op_text(e->ops[k - 1]));
    }
    return pair[0];
}

/* Comparisons, ?: and the builtins that apply() handles: all operands first. */
static SMALL_FRAME val lower_operands(parser *P, const expr *e, val *frame, cs_op op, const char *what)
{
    val a[3];
    for (unsigned k = 0; k < e->n; k++)
        a[k] = cs_lower(P, e->kid[k], frame);
    return apply(P, op, e->n, a, e->pos, what);
}

static SMALL_FRAME val lower_index(parser *P, const expr *e, val *frame)
{
    char t[32];
    val v = cs_lower(P, e->kid[0], frame);
    if (!v.n)
        cs_parse_fail_at(P, e->pos, "cannot index %s", cs_lower_type_text(v, t));
    if (e->index >= v.n)
        cs_parse_fail_at(P, e->pos, "index %u is out of range for a vector of %u", e->index, v.n);
    return cs_lower_unpack_component(P, v, e->index, e->pos);
}

static val lower_node(parser *P, const expr *e, val *frame)
{
    cs_program *p = P->p;
    cs_graph *g = P->g;
    switch (e->kind) {
    case E_NUM:
        return cs_lower_scalar(cs_parse_built(P, cs_const(g, P->real, e->num), e->pos), P->real);
    case E_BOOL:
        return cs_lower_scalar(cs_parse_built(P, cs_const(g, CS_BOOL, e->num), e->pos), CS_BOOL);
    case E_PARAM: case E_CONST: case E_LOCAL:
        return e->sym->v;
    case E_SLOT:
        return frame[e->index];
    case E_STATE:
        if (P->ctx == CTX_RESET) {
            if (!p->restart[e->index])
                cs_parse_fail_at(P, e->pos, "state '%s' is read before it is assigned in reset", e->sym->name);
            return cs_lower_scalar(p->restart[e->index], P->real);
        }
        return cs_lower_scalar(cs_parse_built(P, cs_leaf(g, CS_OP_CARRIED, P->real, p->vars[e->index].slot), e->pos),
                               P->real);
    case E_NEXT:
        if (!p->next[e->index])
            cs_parse_fail_at(P, e->pos, "%s' is read before it is assigned", e->sym->name);
        return cs_lower_scalar(p->next[e->index], P->real);
    case E_ACTION:
        return P->action_val;
    case E_OUTPUT:
        if (!(e->index ? p->terminated : p->reward))
            cs_parse_fail_at(P, e->pos, "'%s' is read before it is assigned", e->index ? "terminated" : "reward");
        return e->index ? cs_lower_scalar(p->terminated, CS_BOOL) : cs_lower_scalar(p->reward, P->real);
    case E_NEG:
        return lower_unary(P, e, frame, CS_OP_NEG, "unary '-'");
    case E_NOT:
        return lower_unary(P, e, frame, CS_OP_NOT, "'not'");
    case E_CHAIN:
        return lower_chain(P, e, frame);
    case E_CMP:
        return lower_operands(P, e, frame, e->op, op_text(e->op));
    case E_COND:
        return lower_operands(P, e, frame, CS_OP_SELECT, "'?:'");
    case E_BUILTIN:
        switch ((cs_op)e->op) {
        case CS_OP_STACK: return lower_stack(P, e, frame);
        case CS_OP_UNIFORM: return lower_uniform(P, e, frame);
        default: return lower_operands(P, e, frame, (cs_op)e->op, cs_op_table[e->op].dsl_quoted);
        }
    case E_CALL:
        return lower_call(P, e, frame);
    case E_INDEX:
        return lower_index(P, e, frame);
    }
    cs_parse_fail_at(P, e->pos, "internal error: unknown expression");
}

val cs_lower(parser *P, const expr *e, val *frame)
{
    if (++P->lower_depth > LOWER_MAX)
        cs_parse_fail_at(P, e->pos, "expression nested too deeply (counting inlined functions)");
    spend(P, 1, e->pos);
    val v = lower_node(P, e, frame);
    P->lower_depth--;
    return v;
}

/* A value that must be one real number (state values, reward, observations). */
cs_node cs_lower_real_value(parser *P, val v, size_t pos, const char *what)
{
    char t[32];
    if (v.n || v.type == CS_BOOL)
        cs_parse_fail_at(P, pos, "%s must be a real number, got %s", what, cs_lower_type_text(v, t));
    return cs_lower_to_real(P, v.node, v.type, pos);
}
