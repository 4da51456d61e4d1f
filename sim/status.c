/* Names of statuses, backends and policies; the version; messages. */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>

#include "status.h"

static const char *const status_names[] = {
    "ok", "bad argument", "parse error", "not found", "compile error", "unavailable",
    "non-finite state", "limit exceeded", "i/o error", "out of memory", "wrong state",
    "timed out", "interrupted",
};
static_assert(sizeof status_names / sizeof status_names[0] == CS_STATUS_COUNT, "one name per status");

const char *const cs_backend_names[] = {"auto", "cpu", "cuda", "interp"};
static_assert(sizeof cs_backend_names / sizeof cs_backend_names[0] == CS_BACKEND_COUNT, "one name per backend");

const char *const cs_fusion_names[] = {"full", "rules", "none"};
static_assert(sizeof cs_fusion_names / sizeof cs_fusion_names[0] == CS_FUSION_COUNT, "one name per fusion mode");

const char *cs_version(void) { return CS_VERSION_STRING; }

const char *cs_status_string(cs_status s)
{
    return (unsigned)s < CS_STATUS_COUNT ? status_names[s] : "unknown status";
}

const char *cs_backend_name(cs_backend b) { return (unsigned)b < CS_BACKEND_COUNT ? cs_backend_names[b] : "?"; }
const char *cs_fusion_name(cs_fusion f) { return (unsigned)f < CS_FUSION_COUNT ? cs_fusion_names[f] : "?"; }

cs_status cs_say(char *err, size_t err_size, cs_status s, const char *fmt, ...)
{
    if (!err || err_size == 0)
        return s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
    return s;
}
