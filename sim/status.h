/* Library-internal: how a part without a handle of its own reports a
 * failure (the handles copy the message into theirs). */
#ifndef CS_STATUS_H
#define CS_STATUS_H

#include <stddef.h>

#include "cartsim.h"

/* Formats a message into err (NULL or 0 bytes: none); returns s. */
cs_status cs_say(char *err, size_t err_size, cs_status s, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The names cs_backend_name and cs_fusion_name give, in enum order (the
 * settings table's choices). */
extern const char *const cs_backend_names[CS_BACKEND_COUNT];
extern const char *const cs_fusion_names[CS_FUSION_COUNT];

/* For the floors above sim/ whose public calls take a cs_env (cs_evaluate):
 * the message of a failure goes on the handle, as every handle call's;
 * returns s. */
cs_status cs_env_say(cs_env *env, cs_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
