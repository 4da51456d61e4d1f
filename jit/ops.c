/* Static facts about ops and types. ORDER OP: rows follow the cs_op enum. */
#include <assert.h>

#include "ir.h"

const cs_op_info cs_op_table[] = {
    {"const", 0, true},     {"carried", 0, true}, {"input", 0, true},   {"param", 0, true},
    {"uniform", 0, true},   {"segstep", 0, true},
    {"neg", 1, false},      {"not", 1, false},    {"abs", 1, false},    {"sqrt", 1, false},
    {"exp", 1, false},      {"log", 1, false},    {"sin", 1, false},    {"cos", 1, false},
    {"tan", 1, false},      {"tanh", 1, false},   {"floor", 1, false},  {"round_f32", 1, false},
    {"cast", 1, false},
    {"add", 2, false},      {"sub", 2, false},    {"mul", 2, false},    {"div", 2, false},
    {"pow", 2, false},      {"atan2", 2, false},  {"fmod", 2, false},   {"mod", 2, false},
    {"min", 2, false},      {"max", 2, false},
    {"lt", 2, false},       {"le", 2, false},     {"gt", 2, false},     {"ge", 2, false},
    {"eq", 2, false},       {"ne", 2, false},     {"and", 2, false},    {"or", 2, false},
    {"select", 3, false},   {"clip", 3, false},
    {"stack", -1, false},   {"index", 1, false},
};
static_assert(sizeof cs_op_table / sizeof cs_op_table[0] == CS_OP_COUNT, "cs_op_table: one row per op");

static const char *const type_names[] = {"bool", "i32", "u32", "f32", "f64"};
static_assert(sizeof type_names / sizeof type_names[0] == CS_TYPE_COUNT, "type_names: one per type");

const char *cs_type_name(cs_type t) { return (unsigned)t < CS_TYPE_COUNT ? type_names[t] : "?"; }

bool cs_type_is_real(cs_type t) { return t == CS_F32 || t == CS_F64; }
