/* The pass pipeline, straight-line as QBE writes it. Which passes run
 * depends on the fusion policy: `rules` and `none` keep the concatenate, as
 * XLA and eager frameworks do; `full` eliminates it. */
#include <stdio.h>
#include <string.h>

#include "jit.h"

static bool stop(const char *after, const char *pass) { return after && strcmp(after, pass) == 0; }

int cs_optimize(cs_program *p, cs_policy fusion, const char *after, char *err, size_t err_size)
{
    if (after && strcmp(after, "parse") != 0) {
        bool known = false;
        for (const cs_pass_info *pass = cs_pass_table; pass->name; pass++)
            known |= strcmp(pass->name, after) == 0;
        if (!known) {
            snprintf(err, err_size, "unknown pass '%s' (passes: parse, fold, concat, dce)", after);
            return -1;
        }
    }
    if (stop(after, "parse"))
        return 0;
    if (cs_pass_fold(p) < 0)
        goto oom;
    if (stop(after, "fold"))
        return 0;
    if (fusion == CS_POLICY_FULL && cs_pass_concat(p) < 0)
        goto oom;
    if (stop(after, "concat"))
        return 0;
    if (cs_pass_dce(p) < 0)
        goto oom;
    return 0;
oom:
    snprintf(err, err_size, "out of memory while optimizing");
    return -1;
}
