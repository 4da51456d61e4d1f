/* Finding an environment's .env source: a path, a name in a directory, or a
 * name compiled into the library. */
#ifndef CS_ENV_SOURCE_H
#define CS_ENV_SOURCE_H

#include <stddef.h>

#include "cartsim.h"

typedef struct {
    char *text;          /* owned when `owned` */
    size_t len;
    char filename[256];  /* as errors name it: the path, or "NAME.env" */
    int owned;
} cs_env_source;

/* `what` is a path (it contains '/' or ends in ".env") or a name, looked up
 * in `dir` (NULL: $CARTSIM_ENV_DIR), then among the built-in environments,
 * then as the Gymnasium id a built-in one declares ("CartPole-v1"). */
cs_status cs_env_source_load(const char *what, const char *dir, cs_env_source *out, char *err, size_t err_size);
void cs_env_source_free(cs_env_source *src);

#endif
