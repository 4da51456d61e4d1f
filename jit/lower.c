/* Lowering for the .env parser (jit/parse.c): a statement's syntax tree ->
 * graph nodes through the builder, type-checked (int, real, bool; scalars
 * and arrays), functions inlined (their bodies lowered again at each call:
 * hash-consing shares what the calls have in common), loops unrolled (the
 * body lowered once per iteration, its variable a compile-time int), and
 * compile-time values computed by cs_op_eval, the evaluator every op is
 * computed with. The builtins mapped by hand live in lower_builtins.c.
 * Recursion is bounded by LOWER_MAX and the work by work_max. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "parse_tree.h"
#include "repr.h"

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

/* An int op of two ints at compile time, as Python computes it, refusing
 * what 32 bits cannot hold (the run would wrap) and division by zero. */
static bool ceval_int(parser *P, cs_op op, double a, double b, size_t pos, double *out)
{
    if ((op == CS_OP_IDIV || op == CS_OP_MOD) && b == 0)
        return cfail(P, pos, "integer division by zero");
    double r = cs_op_eval(op, CS_I32, false, a, b, 0);
    double exact = op == CS_OP_ADD ? a + b : op == CS_OP_SUB ? a - b : op == CS_OP_MUL ? a * b
                 : op == CS_OP_NEG ? -a : op == CS_OP_ABS ? fabs(a)
                 : op == CS_OP_IDIV && a == INT32_MIN && b == -1 ? -a : r;
    if (exact != r)
        return cfail(P, pos, "integer overflow: %s does not fit in 32 bits (write a real)",
                     cs_shortest(exact, (char[CS_REPR_MAX]){0}));
    *out = r;
    return true;
}

static bool ceval(parser *P, const expr *e, double *out, bool *is_int);

/* Elementwise ops that keep ints ints; every other arithmetic gives a real. */
static bool int_op(cs_op op)
{
    switch (op) {
    case CS_OP_ADD: case CS_OP_SUB: case CS_OP_MUL: case CS_OP_NEG: case CS_OP_MOD: case CS_OP_IDIV:
    case CS_OP_MIN: case CS_OP_MAX: case CS_OP_CLIP: case CS_OP_ABS:
        return true;
    default:
        return false;
    }
}

static bool ceval_builtin(parser *P, const expr *e, double *out, bool *is_int)
{
    cs_op op = (cs_op)e->op;
    if (op == CS_OP_UNIFORM || op == CS_OP_STACK || e->n > 3)
        return cfail(P, e->start, "not a compile-time number (only numbers, pi, params, consts, "
                                  "+ - * / // %% and math functions can be used here)");
    double a[3] = {0, 0, 0};
    bool ints = int_op(op);
    for (unsigned k = 0; k < e->n; k++) {
        bool i;
        if (!ceval(P, e->kid[k], &a[k], &i))
            return false;
        ints &= i;
    }
    *is_int = ints;
    if (ints && op == CS_OP_ABS)
        return ceval_int(P, op, a[0], 0, e->pos, out);
    if (ints) {
        *out = cs_op_eval(op, CS_I32, false, a[0], a[1], a[2]);
        return true;
    }
    /* in double, by the evaluator every op is computed with */
    *out = cs_op_eval(op, CS_F64, false, a[0], a[1], a[2]);
    return true;
}

/* A compile-time number, in double, and whether it is an int: literals, pi,
 * params, consts, loop variables, arithmetic, the math builtins, int() and
 * real(). false with P->cerr when not one. */
static bool ceval(parser *P, const expr *e, double *out, bool *is_int)
{
    double a;
    bool ai;
    *is_int = false;
    switch (e->kind) {
    case E_NUM:
        *out = e->num;
        *is_int = e->integer;
        return true;
    case E_LOOP:
        *out = e->sym->value;
        *is_int = true;
        return true;
    case E_PARAM:
        if (e->sym->ranged)
            return cfail(P, e->pos, "'%s' has a range override (a per-lane value) and no compile-time value",
                         e->sym->name);
        if (!e->sym->has_value)
            return cfail(P, e->pos, "'%s' is a bool, not a number", e->sym->name);
        *out = e->sym->value;
        *is_int = e->sym->is_int;
        return true;
    case E_CONST:
        if (!e->sym->has_value)
            return cfail(P, e->pos, "const '%s' has no compile-time value (%s)", e->sym->name, e->sym->why_not);
        *out = e->sym->value;
        *is_int = e->sym->is_int;
        return true;
    case E_NEG:
        if (!ceval(P, e->kid[0], &a, &ai))
            return false;
        *is_int = ai;
        if (ai)
            return ceval_int(P, CS_OP_NEG, a, 0, e->pos, out);
        *out = -a;
        return true;
    case E_CHAIN:
        if (!ceval(P, e->kid[0], out, is_int))
            return false;
        for (unsigned k = 1; k < e->n; k++) {
            cs_op op = e->ops[k - 1];
            if (!ceval(P, e->kid[k], &a, &ai))
                return false;
            if (op == CS_OP_AND || op == CS_OP_OR)
                return cfail(P, e->op_pos[k - 1], "'and'/'or' give a bool, not a compile-time number");
            if (op == CS_OP_IDIV && !(*is_int && ai))
                return cfail(P, e->op_pos[k - 1], "'//' needs two ints (for reals write floor(a / b))");
            if (*is_int && ai && op != CS_OP_DIV) {
                if (!ceval_int(P, op, *out, a, e->op_pos[k - 1], out))
                    return false;
                continue;
            }
            *is_int = false;
            *out = cs_op_eval(op, CS_F64, false, *out, a, 0);
        }
        return true;
    case E_BUILTIN:
        return ceval_builtin(P, e, out, is_int);
    case E_FUNC: {
        const char *name = cs_builtin((int)e->index)->name;
        bool to_int = !strcmp(name, "int");
        if ((to_int || !strcmp(name, "real")) && e->n == 1) {
            if (!ceval(P, e->kid[0], &a, &ai))
                return false;
            *is_int = to_int;
            *out = to_int ? cs_op_eval_from(CS_OP_CAST, CS_I32, CS_F64, false, a, 0, 0) : a;
            return true;
        }
        break;
    }
    default:
        break;
    }
    return cfail(P, e->start, "not a compile-time number (only numbers, pi, params, consts, "
                            "+ - * / // %% and math functions can be used here)");
}

bool cs_lower_ceval_typed(parser *P, const expr *e, double *out, bool *is_int) { return ceval(P, e, out, is_int); }

bool cs_lower_ceval(parser *P, const expr *e, double *out)
{
    bool is_int;
    return ceval(P, e, out, &is_int);
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
        cs_parse_fail_at(P, e->start, "%s must be an integer from %.0f to %.0f, got %s", what, lo, hi,
                         cs_shortest(v, (char[CS_REPR_MAX]){0}));
    return v;
}

/* ---- values ---------------------------------------------------------- */

void cs_lower_spend(parser *P, size_t n, size_t pos)
{
    P->work += n;
    if (P->work > P->work_max)
        cs_parse_fail_at(P, pos, "the program is too large (over %zu operations after inlining functions, "
                        "unrolling loops and expanding vectors)", P->work_max);
}

val cs_lower_scalar(cs_node n, cs_type t) { return (val){n, 0, t, 0, {0, 0, 0}}; }

val cs_lower_value(parser *P, cs_node n)
{
    const cs_node_data *d = cs_graph_node(P->g, n);
    const cs_shape *s = cs_shape_of(P->g, d->shape);
    val v = {n, s->rank ? s->dim[0] : 0, (cs_type)d->type, s->rank, {0, 0, 0}};
    for (unsigned k = 0; k < s->rank; k++)
        v.dim[k] = s->dim[k];
    return v;
}

static const char *type_word(cs_type t) { return t == CS_BOOL ? "bool" : t == CS_I32 ? "int" : "real"; }

static void dims_text(char *buf, size_t size, cs_type t, unsigned rank, const unsigned *dim)
{
    int n = snprintf(buf, size, "%s", type_word(t));
    for (unsigned k = 0; k < rank && n > 0 && (size_t)n < size; k++)
        n += snprintf(buf + n, size - (size_t)n, "[%u]", dim[k]);
}

const char *cs_lower_type_text(val v, char buf[32])
{
    dims_text(buf, 32, v.type, v.rank, v.dim);
    return buf;
}

const char *cs_lower_type_shape_text(parser *P, cs_type t, uint32_t shape, char buf[48])
{
    const cs_shape *s = cs_shape_of(P->g, shape);
    dims_text(buf, 48, t, s->rank, s->dim);
    return buf;
}

const char *cs_lower_shape_text(parser *P, cs_node n, char buf[48])
{
    const cs_node_data *d = cs_graph_node(P->g, n);
    return cs_lower_type_shape_text(P, (cs_type)d->type, d->shape, buf);
}

/* A shape the front end allows: lengths from 1, at most
 * ARRAY_ELEMENTS_MAX elements. */
uint32_t cs_lower_shape(parser *P, unsigned rank, const unsigned *dims, size_t pos)
{
    if (rank > CS_RANK_MAX)
        cs_parse_fail_at(P, pos, "an array has at most %d axes", CS_RANK_MAX);
    uint64_t size = 1;
    for (unsigned k = 0; k < rank; k++) {
        if (dims[k] < 1)
            cs_parse_fail_at(P, pos, "an array's length must be at least 1");
        size *= dims[k];
    }
    if (size > ARRAY_ELEMENTS_MAX) {
        char t[48];
        dims_text(t, sizeof t, CS_F64, rank, dims);
        cs_parse_fail_at(P, pos, "an array has at most %d elements; %s has %llu", ARRAY_ELEMENTS_MAX,
                strchr(t, '['), (unsigned long long)size);
    }
    if (!rank)
        return CS_SCALAR;
    uint32_t id = cs_shape_id(P->g, rank, dims);
    if (!id)
        cs_parse_fail_at(P, pos, "cannot build the graph: %s", cs_graph_error(P->g));
    return id;
}

static bool is_const(parser *P, cs_node n, double *v)
{
    const cs_node_data *d = cs_graph_node(P->g, n);
    if (d->op != CS_OP_CONST)
        return false;
    *v = d->imm.f;
    return true;
}

static bool is_vector_stack(parser *P, cs_node n)
{
    const cs_node_data *d = cs_graph_node(P->g, n);
    return d->op == CS_OP_STACK && cs_shape_of(P->g, d->shape)->rank == 1;
}

/* v as type t: an int or bool becomes a real (0 or 1), a bool an int, an
 * int a bool (!= 0), a real an int (toward zero, cs_f2i) or a bool (!= 0).
 * A constant stays a constant; a vector built by stack converts per item,
 * so that old programs keep their scalar graphs. */
val cs_lower_convert(parser *P, val v, cs_type t, size_t pos)
{
    if (v.type == t)
        return v;
    cs_graph *g = P->g;
    double c;
    if (is_const(P, v.node, &c)) {
        double r = cs_type_is_real(t) ? c : t == CS_BOOL ? c != 0 : cs_op_eval_from(CS_OP_CAST, CS_I32, v.type, false, c, 0, 0);
        return cs_lower_scalar(cs_parse_built(P, cs_const(g, t, r), pos), t);
    }
    if (is_vector_stack(P, v.node)) {
        cs_node *items = cs_parse_alloc(P, &P->temp, v.n * sizeof *items);
        cs_lower_spend(P, v.n, pos);
        for (unsigned k = 0; k < v.n; k++)
            items[k] = cs_lower_convert(P, cs_lower_value(P, cs_graph_input(g, v.node, k)), t, pos).node;
        return cs_lower_value(P, cs_parse_built(P, cs_stack(g, v.n, items), pos));
    }
    if (t == CS_BOOL && cs_type_is_real(v.type)) {
        cs_node zero = cs_parse_built(P, cs_const(g, v.type, 0), pos);
        return cs_lower_value(P, cs_parse_built(P, cs_binary(g, CS_OP_NE, v.node, zero), pos));
    }
    return cs_lower_value(P, cs_parse_built(P, cs_cast(g, t, v.node), pos));
}

cs_node cs_lower_to_real(parser *P, cs_node n, cs_type t, size_t pos)
{
    return t == CS_I32 ? cs_lower_convert(P, cs_lower_value(P, n), P->real, pos).node : n;
}

cs_node cs_lower_component(parser *P, val v, unsigned k, size_t pos)
{
    return cs_parse_built(P, cs_index(P->g, v.node, k), pos);
}

val cs_lower_unpack_component(parser *P, val v, unsigned k, size_t pos)
{
    return cs_lower_value(P, cs_lower_component(P, v, k, pos));
}

void cs_lower_check_unpack(parser *P, val v, unsigned n, size_t pos)
{
    char t[32];
    if (v.n != n)
        cs_parse_fail_at(P, pos, "cannot unpack %s into %u names", cs_lower_type_text(v, t), n);
}

/* ---- operators and elementwise builtins ------------------------------ */

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
        return CLASS_ARITH;   /* + - * / // % neg and the math builtins */
    }
}

static cs_node scalar_op(parser *P, cs_op op, unsigned na, const cs_node *in, size_t pos)
{
    cs_node r = na == 1 ? cs_unary(P->g, op, in[0])
              : na == 2 ? cs_binary(P->g, op, in[0], in[1])
                        : cs_ternary(P->g, op, in[0], in[1], in[2]);
    return cs_parse_built(P, r, pos);
}

/* The type the operands of `op` are converted to, after the type checks:
 * Python's rules (an int op of ints stays an int; '/' and the math
 * functions give reals; comparisons of an int and a real compare reals). */
static cs_type operand_type(parser *P, cs_op op, unsigned na, const val *a, size_t pos, const char *what)
{
    char t1[32], t2[32];
    bool ints = true, reals = false;
    switch (op_class(op)) {
    case CLASS_LOGIC:
        for (unsigned i = 0; i < na; i++)
            if (a[i].type != CS_BOOL)
                cs_parse_fail_at(P, pos, "%s needs bool operands, got %s", what, cs_lower_type_text(a[i], t1));
        return CS_BOOL;
    case CLASS_CMP:
        if (a[0].type == CS_BOOL && a[1].type == CS_BOOL && (op == CS_OP_EQ || op == CS_OP_NE))
            return CS_BOOL;
        for (unsigned i = 0; i < na; i++)
            if (a[i].type == CS_BOOL)
                cs_parse_fail_at(P, pos, "%s needs numbers, got bool", what);
        return a[0].type == CS_I32 && a[1].type == CS_I32 ? CS_I32 : P->real;
    case CLASS_SELECT:
        if (a[0].type != CS_BOOL)
            cs_parse_fail_at(P, pos, "the condition of '?:' must be a bool, got %s", cs_lower_type_text(a[0], t1));
        if ((a[1].type == CS_BOOL) != (a[2].type == CS_BOOL))
            cs_parse_fail_at(P, pos, "the two branches of '?:' have different types: %s and %s",
                    cs_lower_type_text(a[1], t1), cs_lower_type_text(a[2], t2));
        return a[1].type == CS_BOOL ? CS_BOOL : a[1].type == CS_I32 && a[2].type == CS_I32 ? CS_I32 : P->real;
    default:
        for (unsigned i = 0; i < na; i++) {
            if (a[i].type == CS_BOOL)
                cs_parse_fail_at(P, pos, "%s needs numbers, got bool", what);
            ints &= a[i].type == CS_I32;
            reals |= a[i].type != CS_I32;
        }
        if (op == CS_OP_IDIV && reals)
            cs_parse_fail_at(P, pos, "'//' is integer division and needs two ints, got %s and %s (for reals "
                    "write floor(a / b))", cs_lower_type_text(a[0], t1), cs_lower_type_text(a[1], t2));
        return ints && int_op(op) ? CS_I32 : P->real;
    }
}

/* The broadcast of the operands' shapes (NumPy's), or an error naming them
 * (its size is the caller's to check). */
static cs_shape broadcast_shape(parser *P, unsigned na, const val *a, unsigned first, size_t pos, const char *what)
{
    cs_shape all = {0, {1, 1, 1}, 1};
    for (unsigned i = first; i < na; i++) {
        const cs_shape *s = cs_node_shape(P->g, a[i].node);
        cs_shape both;
        if (!cs_shape_broadcast(&all, s, &both)) {
            char t1[32], t2[32];
            unsigned j = first;
            while (j < i && !a[j].rank)
                j++;
            cs_parse_fail_at(P, pos, "%s on shapes %s and %s, which do not broadcast", what,
                    cs_lower_type_text(a[j], t1), cs_lower_type_text(a[i], t2));
        }
        all = both;
    }
    return all;
}

/* An int op whose operands are all int constants, folded in the front end
 * exactly as the fold pass would (cs_op_eval), but refusing a wrap: Python
 * would give a number that 32 bits cannot hold. */
static bool fold_ints(parser *P, cs_op op, unsigned na, const cs_node *in, size_t pos, cs_node *out)
{
    double v[3] = {0, 0, 0}, r;
    if (!int_op(op))
        return false;
    for (unsigned i = 0; i < na; i++)
        if (!is_const(P, in[i], &v[i]) || cs_graph_node(P->g, in[i])->type != CS_I32)
            return false;
    if (op == CS_OP_MIN || op == CS_OP_MAX || op == CS_OP_CLIP)
        r = cs_op_eval(op, CS_I32, false, v[0], v[1], v[2]);
    else if (!ceval_int(P, op, v[0], v[1], pos, &r))
        cs_parse_fail_at(P, pos, "%s in a constant expression", P->cerr);
    *out = cs_parse_built(P, cs_const(P->g, CS_I32, r), pos);
    return true;
}

/* One operator or builtin over scalars or arrays (NumPy's broadcasting):
 * checks types, converts operands (int to real where Python would). A
 * vector built by stack, the language's oldest array, is computed per
 * component, so programs written before arrays keep their scalar graphs. */
static SMALL_FRAME val apply(parser *P, cs_op op, unsigned na, const val *a, size_t pos, const char *what);

static val apply(parser *P, cs_op op, unsigned na, const val *a, size_t pos, const char *what)
{
    cs_type ot = operand_type(P, op, na, a, pos, what);
    unsigned first = op == CS_OP_SELECT;   /* the condition is never converted */
    cs_shape shape = broadcast_shape(P, na, a, 0, pos, what);
    cs_node in[3];
    bool per_component = shape.rank == 1;
    for (unsigned i = 0; i < na && per_component; i++)
        per_component = !a[i].rank || is_vector_stack(P, a[i].node);
    if (!per_component) {
        cs_lower_shape(P, shape.rank, shape.dim, pos);   /* a vector of scalars may be longer, as ever */
        for (unsigned i = 0; i < na; i++)
            in[i] = i >= first ? cs_lower_convert(P, a[i], ot, pos).node : a[i].node;
        cs_node r;
        if (!shape.rank && fold_ints(P, op, na, in, pos, &r))
            return cs_lower_value(P, r);
        return cs_lower_value(P, scalar_op(P, op, na, in, pos));
    }
    unsigned n = shape.dim[0];
    cs_lower_spend(P, n, pos);
    cs_node *items = cs_parse_alloc(P, &P->temp, n * sizeof *items);
    for (unsigned k = 0; k < n; k++) {
        for (unsigned i = 0; i < na; i++) {
            val x = a[i].rank ? cs_lower_unpack_component(P, a[i], a[i].n == 1 ? 0 : k, pos) : a[i];
            in[i] = i >= first ? cs_lower_convert(P, x, ot, pos).node : x.node;
        }
        if (!fold_ints(P, op, na, in, pos, &items[k]))
            items[k] = scalar_op(P, op, na, in, pos);
    }
    return cs_lower_value(P, cs_parse_built(P, cs_stack(P->g, n, items), pos));
}

val cs_lower_apply(parser *P, cs_op op, unsigned na, const val *a, size_t pos, const char *what)
{
    return apply(P, op, na, a, pos, what);
}

static const char *op_text(cs_op op)
{
    switch (op) {
    case CS_OP_ADD: return "'+'";
    case CS_OP_SUB: return "'-'";
    case CS_OP_MUL: return "'*'";
    case CS_OP_DIV: return "'/'";
    case CS_OP_IDIV: return "'//'";
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

/* ---- constant tables ------------------------------------------------- */

/* A constant array: shared with an equal one built before (a loop's body
 * builds its literals once per iteration), within the limits on tables. */
cs_node cs_lower_table(parser *P, cs_type t, uint32_t shape, const double *values, size_t pos)
{
    unsigned size = cs_shape_of(P->g, shape)->size;
    for (size_t k = 0; k < P->n_tables; k++) {
        cs_node n = P->tables[k].node;
        const cs_node_data *d = cs_graph_node(P->g, n);
        if (d->type == t && d->shape == shape &&
            !memcmp(cs_graph_table(P->g) + d->imm.i, values, size * sizeof *values))
            return n;
    }
    if (P->n_tables == TABLES_MAX)
        cs_parse_fail_at(P, pos, "too many constant tables (at most %d different ones)", TABLES_MAX);
    if (P->table_elements + size > TABLE_ELEMENTS_MAX)
        cs_parse_fail_at(P, pos, "the constant tables are too large (at most %d elements in all)",
                TABLE_ELEMENTS_MAX);
    P->tables = cs_parse_grow(P, P->tables, &P->cap_tables, P->n_tables + 1, sizeof *P->tables);
    cs_node n = cs_parse_built(P, cs_table(P->g, t, shape, values), pos);
    P->tables[P->n_tables++] = (table_entry){NULL, n};
    P->table_elements += size;
    return n;
}

/* A constant element's value: a constant, or the negation of one (-0.5). */
static bool constant_scalar(parser *P, cs_node n, double *v)
{
    if (is_const(P, n, v))
        return true;
    const cs_node_data *d = cs_graph_node(P->g, n);
    if (d->op == CS_OP_NEG && cs_type_is_real((cs_type)d->type) && is_const(P, cs_graph_input(P->g, n, 0), v)) {
        *v = -*v;
        return true;
    }
    return false;
}

/* [a, b, ...]: items of one shape, stacked on a new axis 0; a TABLE when
 * every element is a constant. Types as NumPy's: a real makes it real. */
static SMALL_FRAME val lower_array(parser *P, const expr *e, val *frame)
{
    char t1[32], t2[32];
    val *items = cs_parse_alloc(P, &P->temp, e->n * sizeof *items);
    bool bools = false, reals = false, constant = true;
    size_t tables_before = P->n_tables;
    cs_lower_spend(P, e->n, e->pos);
    for (unsigned k = 0; k < e->n; k++) {
        items[k] = cs_lower(P, e->kid[k], frame);
        const val *v = &items[k];
        if (k && (v->rank != items[0].rank || memcmp(v->dim, items[0].dim, sizeof v->dim)))
            cs_parse_fail_at(P, e->kid[k]->start, "the items of an array must have one shape, got %s and %s",
                    cs_lower_type_text(items[0], t1), cs_lower_type_text(*v, t2));
        if (k && (v->type == CS_BOOL) != bools)
            cs_parse_fail_at(P, e->kid[k]->start, "the items of an array must be all numbers or all bools");
        bools = v->type == CS_BOOL;
        reals |= cs_type_is_real(v->type);
        double c;
        constant &= v->rank ? cs_graph_node(P->g, v->node)->op == CS_OP_TABLE : constant_scalar(P, v->node, &c);
    }
    cs_type t = bools ? CS_BOOL : reals ? P->real : CS_I32;
    unsigned dims[CS_RANK_MAX + 1] = {e->n};
    memcpy(dims + 1, items[0].dim, items[0].rank * sizeof *dims);
    uint32_t shape = cs_lower_shape(P, items[0].rank + 1, dims, e->pos);
    if (constant) {
        unsigned inner = cs_node_shape(P->g, items[0].node)->size;
        double *values = cs_parse_alloc(P, &P->temp, (size_t)e->n * inner * sizeof *values);
        for (unsigned k = 0; k < e->n; k++) {
            const cs_node_data *d = cs_graph_node(P->g, items[k].node);
            if (items[k].rank)
                memcpy(values + (size_t)k * inner, cs_graph_table(P->g) + d->imm.i, inner * sizeof *values);
            else
                constant_scalar(P, items[k].node, &values[k]);
        }
        cs_node table = cs_lower_table(P, t, shape, values, e->pos);
        /* the rows of a nested literal were tables of their own on the way:
         * only the whole one counts towards the limits */
        size_t kept = tables_before;
        for (size_t k = tables_before; k < P->n_tables; k++)
            if (P->tables[k].node == table)
                P->tables[kept++] = P->tables[k];
            else
                P->table_elements -= cs_node_shape(P->g, P->tables[k].node)->size;
        P->n_tables = kept;
        return cs_lower_value(P, table);
    }
    cs_node *nodes = cs_parse_alloc(P, &P->temp, e->n * sizeof *nodes);
    for (unsigned k = 0; k < e->n; k++)
        nodes[k] = cs_lower_convert(P, items[k], t, e->kid[k]->start).node;
    return cs_lower_value(P, cs_parse_built(P, cs_stack(P->g, e->n, nodes), e->pos));
}

/* ---- indexing -------------------------------------------------------- */

bool cs_lower_static_int(parser *P, const expr *e, const char *what, long long *out)
{
    double v;
    if (!cs_lower_ceval(P, e, &v))
        return false;
    if (v != floor(v) || fabs(v) > 2147483647.0)
        cs_parse_fail_at(P, e->start, "%s must be an integer, got %s", what, cs_shortest(v, (char[CS_REPR_MAX]){0}));
    *out = (long long)v;
    return true;
}

long long cs_lower_need_int(parser *P, const expr *e, val *frame, const char *what)
{
    long long k;
    if (cs_lower_static_int(P, e, what, &k))
        return k;
    char cerr[sizeof P->cerr];
    size_t cerr_pos = P->cerr_pos;
    memcpy(cerr, P->cerr, sizeof cerr);
    val v = cs_lower(P, e, frame);
    double c;
    if (!v.rank && v.type == CS_I32 && is_const(P, v.node, &c))
        return (long long)c;
    cs_parse_fail_at(P, cerr_pos, "%s must be a compile-time integer: %s", what, cerr);
}

void cs_lower_note_index(parser *P, cs_node index, unsigned dim, size_t pos)
{
    char where[24];
    if (P->ctx == CTX_STEP && cs_program_add_index_site(P->p, index, dim, cs_parse_where(P, pos, where)))
        cs_parse_fail_at(P, pos, "out of memory");
}

/* One resolved subscript item. */
typedef struct {
    enum { AT_STATIC, AT_DYNAMIC, AT_SLICE } kind;
    long long k, hi;      /* STATIC: the index (from 0); SLICE: [k, hi) */
    cs_node node;         /* DYNAMIC: an i32 scalar */
} index_at;

/* a[k] at a compile-time k: a constant table's row is a table (a view of
 * the same pool), its element a constant. */
static cs_node index_static(parser *P, cs_node a, unsigned k, size_t pos)
{
    const cs_node_data *d = cs_graph_node(P->g, a);
    if (d->op != CS_OP_TABLE)
        return cs_parse_built(P, cs_index(P->g, a, k), pos);
    const cs_shape *s = cs_shape_of(P->g, d->shape);
    unsigned sub[CS_RANK_MAX] = {0, 0, 0};
    for (unsigned j = 1; j < s->rank; j++)
        sub[j - 1] = s->dim[j];
    uint32_t shape = s->rank > 1 ? cs_shape_id(P->g, s->rank - 1, sub) : CS_SCALAR;
    int64_t at = d->imm.i + (int64_t)k * cs_shape_of(P->g, shape)->size;
    cs_type t = (cs_type)d->type;
    if (!shape)
        return cs_parse_built(P, cs_const(P->g, t, cs_graph_table(P->g)[at]), pos);
    cs_imm imm = {.i = at};
    return cs_parse_built(P, cs_make(P->g, CS_OP_TABLE, t, shape, 0, NULL, imm), pos);
}

/* a[items]: leading compile-time indices pick sub-arrays (INDEX), runs of
 * run-time ones gather, slices of what remains slice (SLICE and a RESHAPE
 * for the axes an index removes); a slice before a run-time index is
 * taken row by row. */
static cs_node subscript(parser *P, cs_node a, const index_at *at, unsigned n, size_t pos)
{
    if (!n)
        return a;
    if (at[0].kind == AT_STATIC)
        return subscript(P, index_static(P, a, (unsigned)at[0].k, pos), at + 1, n - 1, pos);
    if (at[0].kind == AT_DYNAMIC) {
        unsigned run = 0;
        cs_node idx[CS_RANK_MAX];
        while (run < n && at[run].kind == AT_DYNAMIC) {
            idx[run] = at[run].node;
            run++;
        }
        return subscript(P, cs_parse_built(P, cs_gather(P->g, a, run, idx), pos), at + run, n - run, pos);
    }
    bool dynamic = false;
    for (unsigned j = 0; j < n; j++)
        dynamic |= at[j].kind == AT_DYNAMIC;
    const cs_shape *s = cs_node_shape(P->g, a);
    if (dynamic) {
        unsigned rows = (unsigned)(at[0].hi - at[0].k);
        cs_lower_spend(P, rows, pos);
        cs_node *items = cs_parse_alloc(P, &P->temp, rows * sizeof *items);
        for (unsigned r = 0; r < rows; r++)
            items[r] = subscript(P, index_static(P, a, (unsigned)at[0].k + r, pos), at + 1, n - 1, pos);
        return cs_parse_built(P, cs_stack(P->g, rows, items), pos);
    }
    unsigned start[CS_RANK_MAX] = {0, 0, 0}, extent[CS_RANK_MAX], kept[CS_RANK_MAX], rank = 0;
    bool whole = true;
    for (unsigned j = 0; j < s->rank; j++) {
        extent[j] = s->dim[j];
        if (j < n) {
            start[j] = (unsigned)at[j].k;
            extent[j] = at[j].kind == AT_SLICE ? (unsigned)(at[j].hi - at[j].k) : 1;
        }
        if (j >= n || at[j].kind == AT_SLICE)
            kept[rank++] = extent[j];
        whole &= start[j] == 0 && extent[j] == s->dim[j];
    }
    cs_node r = whole ? a : cs_parse_built(P, cs_slice(P->g, a, start, extent), pos);
    if (rank == s->rank)
        return r;
    return cs_parse_built(P, cs_reshape(P->g, r, cs_lower_shape(P, rank, kept, pos)), pos);
}

static SMALL_FRAME val lower_index(parser *P, const expr *e, val *frame)
{
    char t[32];
    val a = cs_lower(P, e->kid[0], frame);
    if (!a.rank)
        cs_parse_fail_at(P, e->pos, "cannot index %s", cs_lower_type_text(a, t));
    if (e->n_items > a.rank)
        cs_parse_fail_at(P, e->pos, "%u indices for %s, which has %u ax%s", e->n_items, cs_lower_type_text(a, t),
                a.rank, a.rank == 1 ? "is" : "es");
    index_at at[CS_RANK_MAX];
    for (unsigned j = 0; j < e->n_items; j++) {
        const index_item *it = &e->items[j];
        long long dim = a.dim[j], k;
        if (it->slice) {
            long long lo = it->lo ? cs_lower_need_int(P, it->lo, frame, "a slice's start") : 0;
            long long hi = it->hi ? cs_lower_need_int(P, it->hi, frame, "a slice's end") : dim;
            lo = lo < 0 ? (lo + dim < 0 ? 0 : lo + dim) : lo > dim ? dim : lo;   /* Python's clamping */
            hi = hi < 0 ? (hi + dim < 0 ? 0 : hi + dim) : hi > dim ? dim : hi;
            if (hi <= lo)
                cs_parse_fail_at(P, it->pos, "the slice is empty (axis %u has length %lld)", j, dim);
            at[j] = (index_at){AT_SLICE, lo, hi, 0};
            continue;
        }
        bool known = cs_lower_static_int(P, it->lo, "an index", &k);
        val i = {0};
        double c = 0;
        if (!known) {
            i = cs_lower(P, it->lo, frame);
            known = !i.rank && i.type == CS_I32 && is_const(P, i.node, &c);
            k = (long long)c;
        }
        if (known) {
            if (k < -dim || k >= dim)
                cs_parse_fail_at(P, it->lo->start, "index %lld is out of range for axis %u of %s", k, j,
                        cs_lower_type_text(a, t));
            at[j] = (index_at){AT_STATIC, k < 0 ? k + dim : k, 0, 0};
            continue;
        }
        if (i.rank || i.type != CS_I32)
            cs_parse_fail_at(P, it->lo->start, "an index must be an int (or a compile-time integer), got %s%s",
                    cs_lower_type_text(i, t), i.type == P->real && !i.rank ? "; convert it with int(...)" : "");
        cs_lower_note_index(P, i.node, (unsigned)dim, it->lo->start);
        at[j] = (index_at){AT_DYNAMIC, 0, 0, i.node};
    }
    return cs_lower_value(P, subscript(P, a.node, at, e->n_items, e->pos));
}

/* ---- functions, statements and loops --------------------------------- */

/* A policy's action, made a valid input: a discrete one is clipped to
 * 0..N-1 (a real is floored first, NaN giving 0; a bool is 0 or 1), a box
 * one clipped to its bounds. */
static void policy_action(parser *P, size_t pos, val v)
{
    cs_program *p = P->p;
    cs_graph *g = P->g;
    cs_node *action = p->named[P->policy].action;
    char ty[32];
    if (p->action_kind == CS_ACTION_DISCRETE) {
        if (v.rank)
            cs_parse_fail_at(P, pos, "the action must be a number, got %s", cs_lower_type_text(v, ty));
        if (v.type != P->real) {
            val i = cs_lower_convert(P, v, CS_I32, pos);
            cs_node lo = cs_parse_built(P, cs_const(g, CS_I32, 0), pos);
            cs_node hi = cs_parse_built(P, cs_const(g, CS_I32, p->n_actions - 1.0), pos);
            cs_node x = cs_parse_built(P, cs_binary(g, CS_OP_MAX, i.node, lo), pos);
            action[0] = cs_parse_built(P, cs_binary(g, CS_OP_MIN, x, hi), pos);
            return;
        }
        cs_node zero = cs_parse_built(P, cs_const(g, P->real, 0), pos);
        cs_node ge = cs_parse_built(P, cs_binary(g, CS_OP_GE, v.node, zero), pos);
        cs_node x = cs_parse_built(P, cs_unary(g, CS_OP_FLOOR, cs_parse_built(P, cs_ternary(g, CS_OP_SELECT, ge, v.node, zero), pos)), pos);
        x = cs_parse_built(P, cs_binary(g, CS_OP_MIN, x, cs_parse_built(P, cs_const(g, P->real, p->n_actions - 1.0), pos)), pos);
        action[0] = cs_parse_built(P, cs_cast(g, CS_I32, x), pos);
        return;
    }
    unsigned n = p->n_inputs;
    if (v.type == CS_BOOL || v.rank > 1 || (v.rank ? v.n != n : n != 1))
        cs_parse_fail_at(P, pos, "the action must be %s%u real number%s, got %s", n == 1 ? "" : "a vector of ", n,
                n == 1 ? "" : "s", cs_lower_type_text(v, ty));
    for (unsigned k = 0; k < n; k++) {
        cs_node x = cs_lower_to_real(P, v.rank ? cs_lower_component(P, v, k, pos) : v.node, v.type, pos);
        cs_node lo = cs_parse_built(P, cs_const(g, P->real, p->input_low[k]), pos);
        cs_node hi = cs_parse_built(P, cs_const(g, P->real, p->input_high[k]), pos);
        action[k] = cs_parse_built(P, cs_ternary(g, CS_OP_CLIP, x, lo, hi), pos);
    }
}

/* A value for state variable `var`: of its type (an int converts to a
 * real) and shape (a smaller value broadcasts). */
/* v as a value of type t and shape (a state's, an info value's): an int
 * converts to real, a shape broadcasts to it, anything else is an error. */
static cs_node typed_value(parser *P, val v, cs_type type, uint32_t shape, size_t pos, const char *what)
{
    char want[48], got[48];
    bool type_ok = v.type == type || (v.type == CS_I32 && type == P->real);
    const cs_shape *s = cs_shape_of(P->g, shape), *vs = cs_node_shape(P->g, v.node);
    cs_shape both;
    bool shape_ok = cs_shape_broadcast(vs, s, &both) && both.rank == s->rank &&
                    !memcmp(both.dim, s->dim, sizeof both.dim);
    if (!type_ok || !shape_ok) {
        if (!s->rank && type == P->real)
            cs_parse_fail_at(P, pos, "%s must be a real number, got %s", what, cs_lower_shape_text(P, v.node, got));
        cs_parse_fail_at(P, pos, "%s must be %s, got %s%s", what, cs_lower_type_shape_text(P, type, shape, want),
                cs_lower_shape_text(P, v.node, got),
                v.type == P->real && type == CS_I32 ? " (convert it with int(...))" : "");
    }
    cs_node n = cs_lower_convert(P, v, type, pos).node;
    if (cs_graph_node(P->g, n)->shape != shape)
        n = cs_parse_built(P, cs_broadcast(P->g, n, shape), pos);
    return n;
}

static cs_node state_value(parser *P, val v, unsigned var, size_t pos, const char *what)
{
    return typed_value(P, v, P->p->vars[var].type, P->p->vars[var].shape, pos, what);
}

static void assign(parser *P, const target *t, val v, val *frame)
{
    cs_program *p = P->p;
    char what[CS_NAME_MAX + 32], ty[32];
    switch (t->kind) {
    case T_LOCAL:
        t->sym->v = v;
        break;
    case T_SLOT:
        frame[t->sym->index] = v;
        break;
    case T_NEXT:
        snprintf(what, sizeof what, "the next value of '%s'", p->vars[t->state].name);
        p->next[t->state] = state_value(P, v, t->state, t->pos, what);
        break;
    case T_RESET:
        snprintf(what, sizeof what, "the reset value of '%s'", p->vars[t->state].name);
        p->restart[t->state] = state_value(P, v, t->state, t->pos, what);
        break;
    case T_REWARD:
        p->reward = cs_lower_real_value(P, v, t->pos, "'reward'");
        break;
    case T_TERMINATED:
        if (v.rank || v.type != CS_BOOL)
            cs_parse_fail_at(P, t->pos, "'terminated' must be a bool, got %s", cs_lower_type_text(v, ty));
        p->terminated = v.node;
        break;
    case T_ACTION:
        policy_action(P, t->pos, v);
        break;
    case T_INFO: {
        cs_info_item *it = &p->info_items[t->state];
        snprintf(what, sizeof what, "info '%s'", it->name);
        cs_node n = typed_value(P, v, it->type, it->shape, t->pos, what);
        if (P->ctx == CTX_STEP)
            it->step = n;
        else
            it->restart = n;
        break;
    }
    }
}

/* for var in range(lo, hi): the body once per iteration, var a
 * compile-time int; what an iteration allocates while lowering is freed
 * after it (its trees were allocated before). */
static void run_loop(parser *P, const bstmt *s, val *frame)
{
    long long lo = s->lo ? cs_lower_need_int(P, s->lo, frame, "the start of range()") : 0;
    long long hi = cs_lower_need_int(P, s->hi, frame, "the end of range()");
    if (++P->lower_depth > LOWER_MAX)
        cs_parse_fail_at(P, s->pos, "loops nested too deeply (counting inlined functions)");
    sym *var = s->var;
    for (long long i = lo; i < hi; i++) {
        cs_lower_spend(P, 1, s->pos);
        var->value = (double)i;
        var->has_value = var->is_int = true;
        arena_mark m = cs_parse_mark(&P->temp);
        cs_lower_statements(P, s->body, frame);
        cs_parse_release(&P->temp, m);
    }
    P->lower_depth--;
}

void cs_lower_statements(parser *P, const bstmt *s, val *frame)
{
    for (; s; s = s->next) {
        if (!s->n_targets) {
            run_loop(P, s, frame);
            continue;
        }
        val v = cs_lower(P, s->value, frame);
        if (s->n_targets == 1) {
            assign(P, &s->targets[0], v, frame);
            continue;
        }
        cs_lower_check_unpack(P, v, s->n_targets, s->pos);
        for (unsigned k = 0; k < s->n_targets; k++)
            assign(P, &s->targets[k], cs_lower_unpack_component(P, v, k, s->pos), frame);
    }
}

/* Inlines a function: arguments bound to its first slots, then the body. */
static SMALL_FRAME val lower_call(parser *P, const expr *e, val *frame)
{
    const fn_def *f = e->sym->fn;
    val *slots = cs_parse_alloc(P, &P->temp, (f->n_slots ? f->n_slots : 1) * sizeof *slots);
    for (unsigned k = 0; k < f->n_params; k++)
        slots[k] = cs_lower(P, e->kid[k], frame);
    cs_lower_statements(P, f->body, slots);
    return cs_lower(P, f->result, slots);
}

/* ---- expressions ----------------------------------------------------- */

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

static val lower_state(parser *P, const expr *e)
{
    cs_program *p = P->p;
    const cs_state_var *sv = &p->vars[e->index];
    if (P->ctx == CTX_RESET) {
        if (!p->restart[e->index])
            cs_parse_fail_at(P, e->pos, "state '%s' is read before it is assigned in reset", e->sym->name);
        return cs_lower_value(P, p->restart[e->index]);
    }
    return cs_lower_value(P, cs_parse_built(P, cs_leaf_shaped(P->g, CS_OP_CARRIED, sv->type, sv->shape, sv->slot),
                                            e->pos));
}

static val lower_node(parser *P, const expr *e, val *frame)
{
    cs_program *p = P->p;
    cs_graph *g = P->g;
    switch (e->kind) {
    case E_NUM:
        if (e->integer)
            return cs_lower_scalar(cs_parse_built(P, cs_const(g, CS_I32, e->num), e->pos), CS_I32);
        return cs_lower_scalar(cs_parse_built(P, cs_const(g, P->real, e->num), e->pos), P->real);
    case E_BOOL:
        return cs_lower_scalar(cs_parse_built(P, cs_const(g, CS_BOOL, e->num), e->pos), CS_BOOL);
    case E_PARAM: case E_CONST: case E_LOCAL:
        return e->sym->v;
    case E_LOOP:   /* made when read: an empty loop of a million turns makes no nodes */
        return cs_lower_scalar(cs_parse_built(P, cs_const(g, CS_I32, e->sym->value), e->pos), CS_I32);
    case E_SLOT:
        return frame[e->index];
    case E_STATE:
        return lower_state(P, e);
    case E_NEXT:
        if (!p->next[e->index])
            cs_parse_fail_at(P, e->pos, "%s' is read before it is assigned", e->sym->name);
        return cs_lower_value(P, p->next[e->index]);
    case E_ACTION:
        return P->action_val;
    case E_INFO: {
        const cs_info_item *it = &p->info_items[e->index];
        cs_node n = P->ctx == CTX_STEP ? it->step : it->restart;
        if (!n)
            cs_parse_fail_at(P, e->pos, "info '%s' is read before it is assigned", it->name);
        return cs_lower_value(P, n);
    }
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
        return lower_operands(P, e, frame, (cs_op)e->op, cs_op_table[e->op].dsl_quoted);
    case E_FUNC:
        return cs_builtin((int)e->index)->lower(P, e, frame);
    case E_CALL:
        return lower_call(P, e, frame);
    case E_INDEX:
        return lower_index(P, e, frame);
    case E_ARRAY:
        return lower_array(P, e, frame);
    }
    cs_parse_fail_at(P, e->pos, "internal error: unknown expression");
}

val cs_lower(parser *P, const expr *e, val *frame)
{
    if (++P->lower_depth > LOWER_MAX)
        cs_parse_fail_at(P, e->pos, "expression nested too deeply (counting inlined functions)");
    cs_lower_spend(P, 1, e->pos);
    val v = lower_node(P, e, frame);
    P->lower_depth--;
    return v;
}

/* A value that must be one real number (reward; the draw block's numbers):
 * an int converts. */
cs_node cs_lower_real_value(parser *P, val v, size_t pos, const char *what)
{
    char t[32];
    if (v.rank || v.type == CS_BOOL)
        cs_parse_fail_at(P, pos, "%s must be a real number, got %s", what, cs_lower_type_text(v, t));
    return cs_lower_to_real(P, v.node, v.type, pos);
}
