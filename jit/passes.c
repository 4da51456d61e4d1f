/* The passes, in pipeline order, by the names `--after PASS` accepts. */
#include "jit.h"

const cs_pass_info cs_pass_table[] = {
    {"fold", cs_pass_fold, "IEEE-safe constant folding and exact identities (x*1, select on a constant)"},
    {"scalarize", cs_pass_scalarize, "small arrays (at most 16 elements) become scalar nodes, one per element"},
    {"concat", cs_pass_concat, "concat elimination: index(stack(..), k) reads the k-th operand"},
    {"dce", cs_pass_dce, "dead code elimination: rebuild the graph with what the roots reach"},
    {0},
};
