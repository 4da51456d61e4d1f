/* libFuzzer target: the policy file reader, cs_policy_load (make fuzz).
 *
 * The reader takes a path, so each input is written to one file of this
 * process first (fuzz_input.h). A file that loads is saved
 * again and read back: the same names and the same weights, bit for bit. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cartsim.h"
#include "fuzz_input.h"

static char again[4200];   /* where a file that loads is saved again */

static void remove_again(void)
{
    unlink(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fuzz_write_input("policy", "pol", data, size))
        return 0;
    if (!again[0]) {
        snprintf(again, sizeof again, "%s.again", fuzz_input_path);
        atexit(remove_again);
    }
    cs_policy_file f;
    char err[512];
    if (cs_policy_load(fuzz_input_path, &f, err, sizeof err) != CS_OK) {
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
