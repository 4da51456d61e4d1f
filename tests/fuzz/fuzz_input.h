/* What the targets whose code under test reads a path (fuzz_config.c,
 * fuzz_policy.c) share: each input is written to one file of this process,
 * $TMPDIR/cartsim-fuzz-NAME-PID.EXT, removed at exit. */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_input_path[4096];

static void fuzz_remove_input(void)
{
    unlink(fuzz_input_path);
}

/* The input as the file's whole content; false where it cannot be written. */
static bool fuzz_write_input(const char *name, const char *ext, const uint8_t *data, size_t size)
{
    if (!fuzz_input_path[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fuzz_input_path, sizeof fuzz_input_path, "%s/cartsim-fuzz-%s-%ld.%s", tmp && *tmp ? tmp : "/tmp",
                 name, (long)getpid(), ext);
        atexit(fuzz_remove_input);
    }
    int fd = open(fuzz_input_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return false;
    bool ok = size == 0 || write(fd, data, size) == (ssize_t)size;
    return close(fd) == 0 && ok;
}

#endif
