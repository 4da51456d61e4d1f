/* The one clock the library times itself with (compile and run times). */
#include <time.h>

#include "jit.h"

double cs_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
