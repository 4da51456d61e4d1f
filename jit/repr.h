/* jit/repr.c: numbers as text, in the one spelling every floor echoes them
 * with (the compiler's messages, sim/num.h's users, the program). */
#ifndef CS_REPR_H
#define CS_REPR_H

#include <stddef.h>

/* The shortest decimal that reads back as x, spelled as Python's repr(float):
 * "1.0", "0.0001", "1e-05", "1.5e+16", "nan", "-inf". Returns the length. */
#define CS_REPR_MAX 32
size_t cs_num_repr(double x, char out[CS_REPR_MAX]);

/* For messages: the same digits without Python's ".0" on a whole number
 * ("2", "0.6", "1e-05", "inf"), returning buf, so that
 * printf("%s", cs_shortest(x, (char[CS_REPR_MAX]){0})) reads in place. */
const char *cs_shortest(double x, char buf[CS_REPR_MAX]);

#endif
