/* The environments of envs/, compiled into the library by the Makefile so
 * that `--env NAME` works wherever the binary is. Ends with {0, 0}. */
#ifndef CS_BUILTIN_ENVS_H
#define CS_BUILTIN_ENVS_H

typedef struct {
    const char *name;
    const char *source;
} cs_builtin_env;

extern const cs_builtin_env cs_builtin_envs[];

#endif
