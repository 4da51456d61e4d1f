/* The library's own view of cs_config's settings table (sim/config.c). */
#ifndef CS_CONFIG_H
#define CS_CONFIG_H

#include <stddef.h>

#include "cartsim.h"

/* The integer settings of cfg against their ranges (CS_MAX_*): CS_OK, or
 * CS_ERR_ARGUMENT with "FIELD must be between LO and HI, not V" in err. */
cs_status cs_config_check(const cs_config *cfg, char *err, size_t err_size);

#endif
