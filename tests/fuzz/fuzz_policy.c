/* libFuzzer target: the policy file reader, cs_policy_load (make fuzz).
 *
 * The reader takes a path, so each input is written to one file of this
 * process first (in $TMPDIR, removed at exit). A file that loads is saved
 * again and read back: the same names and the same weights, bit for bit. */
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cartsim.h"

static char path[4096], again[4200];

static void remove_files(void)
{
    unlink(path);
    unlink(again);
}

static bool write_input(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/cartsim-fuzz-policy-%ld.pol", tmp && *tmp ? tmp : "/tmp", (long)getpid());
        snprintf(again, sizeof again, "%s.again", path);
        atexit(remove_files);
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return false;
    bool ok = size == 0 || write(fd, data, size) == (ssize_t)size;
    return close(fd) == 0 && ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!write_input(data, size))
        return 0;
    cs_policy_file f;
    char err[512];
    if (cs_policy_load(path, &f, err, sizeof err) != CS_OK) {
        if (!memchr(err, 0, sizeof err) || f.weights)
            abort();   /* a message, and nothing left to free */
        return 0;
    }
    for (unsigned k = 0; k < f.n_weights; k++)
        if (!isfinite(f.weights[k]))
            abort();
    if (cs_policy_save(again, f.env, f.policy, f.n_weights, f.weights, err, sizeof err) != CS_OK)
        abort();
    cs_policy_file g;
    if (cs_policy_load(again, &g, err, sizeof err) != CS_OK || strcmp(f.env, g.env) || strcmp(f.policy, g.policy) ||
        f.n_weights != g.n_weights || (f.n_weights && memcmp(f.weights, g.weights, f.n_weights * sizeof *f.weights)))
        abort();
    cs_policy_file_free(&f);
    cs_policy_file_free(&g);
    return 0;
}
