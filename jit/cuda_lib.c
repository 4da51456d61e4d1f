/* Opening the CUDA driver and NVRTC with dlopen, for both halves of the
 * cuda backend (nvrtc.c compiles, cuda_driver.c loads and launches). Both
 * are opened RTLD_NODELETE: the driver and NVRTC start threads of their own,
 * so their code must never be unmapped under them. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cuda_api.h"

void cs_cuda_say(char *err, size_t err_size, const char *fmt, ...)
{
    if (!err || !err_size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
}

void *cs_cuda_open_lib(const char *name)
{
    dlerror();
    return dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
}

/* Resolves every name into the table, in order; the first missing one is
 * reported. `optional` names may be missing (left NULL). */
static int resolve(void *lib, void **slots, const char *const *names, size_t n, size_t optional_from,
                   const char *what, char *err, size_t err_size)
{
    for (size_t k = 0; k < n; k++) {
        slots[k] = dlsym(lib, names[k]);
        if (!slots[k] && k < optional_from) {
            cs_cuda_say(err, err_size, "%s lacks %s: too old or not the real library", what, names[k]);
            return -1;
        }
    }
    return 0;
}

/* Fills a table of function pointers (the slots after its `lib`) from dlsym. */
int cs_cuda_resolve_table(void *lib, void *table_after_lib, const char *const *names, size_t n, size_t optional_from,
                          const char *what, char *err, size_t err_size)
{
    void *slots[64];
    if (resolve(lib, slots, names, n, optional_from, what, err, err_size))
        return -1;
    /* The table is a run of function pointers, each the size of a void *
     * (POSIX guarantees dlsym's results convert). */
    _Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function and data pointers differ in size");
    memcpy(table_after_lib, slots, n * sizeof(void *));
    return 0;
}
