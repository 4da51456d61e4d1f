/* Strict number parsing (sim/num.c) and Python-repr printing (jit/repr.c): the library's,
 * so that configuration files (sim/config.c) and the program's flags are
 * checked by the same code. Internal: not part of cartsim.h. */
#ifndef CS_NUM_H
#define CS_NUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "repr.h"

typedef enum { CS_NUM_OK, CS_NUM_SYNTAX, CS_NUM_RANGE } cs_num_result;

/* Plain decimal digits (a leading '-' for i64) within [lo, hi]. */
cs_num_result cs_num_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);
cs_num_result cs_num_u64(const char *s, uint64_t *out);
/* A whole field as a double (strtod syntax, nothing left over, no spaces). */
bool cs_num_real(const char *s, double *out);

#endif
