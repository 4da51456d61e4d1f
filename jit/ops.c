/* Static facts about ops (generated from jit/ops.def) and types. */
#include <assert.h>

#include "ir.h"

const cs_op_info cs_op_table[] = {
#define CS_OP(id, name, arity, kind, dsl, dsl_arity, infix, fn_f64, fn_f32, fn_int, libm_f64, fast_f64, near_f32, \
              near_f64)                                                                                         \
    {name, arity, kind, kind == CS_KIND_LEAF, dsl, "'" dsl "'", dsl_arity, infix, fn_f64, fn_f32, fn_int, libm_f64,  \
     fast_f64, near_f32, near_f64},
#include "ops.def"
#undef CS_OP
};
static_assert(sizeof cs_op_table / sizeof cs_op_table[0] == CS_OP_COUNT, "cs_op_table: one row per op");

static const char *const type_names[] = {"bool", "i32", "u32", "f32", "f64"};
static_assert(sizeof type_names / sizeof type_names[0] == CS_TYPE_COUNT, "type_names: one per type");

const char *cs_type_name(cs_type t) { return (unsigned)t < CS_TYPE_COUNT ? type_names[t] : "?"; }

bool cs_type_is_real(cs_type t) { return t == CS_F32 || t == CS_F64; }
