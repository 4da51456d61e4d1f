/* Register spills from ptxas's verbose report (NVRTC's program log when it
 * compiles with --ptxas-options=--verbose).
 *
 * Why not the driver: CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES counts every byte
 * of thread-local memory, and CUDA's own sinf/cosf keep a 28-byte table for
 * their slow path (arguments beyond ~1e5), so nearly every kernel of ours has
 * a stack frame without spilling a single register. Only ptxas tells the two
 * apart:
 *
 *   ptxas info    : Function properties for cs_kernel_rollout
 *   ptxas         .     32 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 */
#include <stdlib.h>
#include <string.h>

#include "jit.h"

static const char *line_end(const char *p)
{
    const char *nl = strchr(p, '\n');
    return nl ? nl : p + strlen(p);
}

/* The number just before `unit` in [p, end), or -1. */
static long number_before(const char *p, const char *end, const char *unit)
{
    size_t n = strlen(unit);
    for (const char *u = p; u + n <= end; u++) {
        if (memcmp(u, unit, n) != 0)
            continue;
        const char *d = u;
        while (d > p && d[-1] == ' ')
            d--;
        const char *digits = d;
        while (digits > p && digits[-1] >= '0' && digits[-1] <= '9')
            digits--;
        if (digits == d)
            return -1;
        return strtol(digits, NULL, 10);
    }
    return -1;
}

long cs_ptxas_spill_bytes(const char *log, const char *prefix)
{
    if (!log || !prefix)
        return -1;
    static const char header[] = "Function properties for ";
    long most = -1;
    for (const char *p = log; *p;) {
        const char *end = line_end(p);
        const char *h = strstr(p, header);
        if (h && h < end) {
            const char *name = h + sizeof header - 1;
            size_t n = strlen(prefix);
            bool ours = (size_t)(end - name) >= n && memcmp(name, prefix, n) == 0;
            const char *next = *end ? end + 1 : end;
            const char *next_end = line_end(next);
            long stores = number_before(next, next_end, " bytes spill stores");
            if (ours && stores >= 0)
                most = stores > most ? stores : most;
            p = next;
            continue;
        }
        p = *end ? end + 1 : end;
    }
    return most;
}
