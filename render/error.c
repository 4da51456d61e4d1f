/* Messages into the caller's buffer: render/ keeps no state of its own. */
#include <stdarg.h>
#include <stdio.h>

#include "render.h"

cs_status render_error(char *err, size_t err_size, cs_status s, const char *fmt, ...)
{
    if (!err || err_size == 0)
        return s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
    return s;
}
