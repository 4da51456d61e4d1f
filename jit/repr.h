/* jit/repr.c: numbers as text, in the one spelling every floor echoes them
 * with (the compiler's messages, sim/num.h's users, the program). */
#ifndef CS_REPR_H
#define CS_REPR_H

#include <stddef.h>

/* The shortest decimal that reads back as x, spelled as Python's repr(float):
 * "1.0", "0.0001", "1e-05", "1.5e+16", "nan", "-inf". Returns the length. */
#define CS_REPR_MAX 32
size_t cs_num_repr(double x, char out[CS_REPR_MAX]);

/* The same into a caller's buffer of any size (a message's argument):
 * returns buf, so that printf("%s", cs_repr_str(x, buf)) reads in place. */
const char *cs_repr_str(double x, char buf[CS_REPR_MAX]);

#endif
