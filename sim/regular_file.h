/* Opening a file the user named (--env, --config, --policy, a replay CSV) for
 * reading, refusing anything but a regular file before a read can block. */
#ifndef CS_REGULAR_FILE_H
#define CS_REGULAR_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "cartsim.h"

/* Opens `path` with O_NONBLOCK (so a FIFO cannot wedge the open), checks with
 * fstat that it is a regular file, then clears O_NONBLOCK and returns it as a
 * FILE for "rb". On failure NULL, *status set and `why` the reason without the
 * path ("No such file or directory", "a FIFO, not a regular file"):
 * CS_ERR_NOT_FOUND for a missing file, CS_ERR_ARGUMENT for a name that cannot
 * be an input (a directory, FIFO, device or socket, a symbolic link loop, a
 * file the user may not read), CS_ERR_IO or CS_ERR_NOMEM otherwise. */
FILE *cs_fopen_regular(const char *path, cs_status *status, char *why, size_t why_size);

#endif
