/* Library-internal: an environment's compiled program and its values on the
 * host, for the floors above sim/ that evaluate parts of the program
 * themselves (render/'s pictures, the program's draw block). */
#ifndef CS_ENV_LANES_H
#define CS_ENV_LANES_H

#include "cartsim.h"
#include "jit.h"

/* The program the batch runs; NULL for a handle that failed to open. */
const cs_program *cs_env_program(const cs_env *env);

/* Lanes over the batch's carried state and per-lane params, brought back
 * from the device first on cuda; valid until the next call on env. The
 * message of a failure goes on env (CS_ERR_STATE before a reset). */
cs_status cs_env_host_lanes(cs_env *env, cs_lanes *out);

#endif
