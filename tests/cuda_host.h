/* The CUDA dialect as host C (tests/cuda_shim.h): a source built by cc
 * into a shared object, and "launches" that run every thread of a grid in
 * turn. Header-only, shared by tests/test_cuda.c (its tests and its fake
 * driver) and tests/test_arrays.c. */
#ifndef CS_CUDA_HOST_H
#define CS_CUDA_HOST_H

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lanes.h"

extern char **environ;

typedef struct {
    void *handle;
    char dir[512];
} host_module;

typedef struct {
    unsigned int x, y, z;
} host_dim3;

static int spawn_wait(char *const argv[], const char *log)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static void file_head(const char *path, char *out, size_t size)
{
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t n = fread(out, 1, size - 1, f);
    out[n] = 0;
    fclose(f);
}

/* The source, with the shim in front, through cc into a shared object. The
 * flags are the cpu backend's where they change a result: no contraction,
 * and no SLP vectorization (GCC 12's dropped a (double)(float) rounding in
 * Acrobot's reset, as in the cpu backend's 0093f58, once cs_fresh became a
 * clone of its own instead of inlined). */
static int host_build(const char *source, const char *shim, host_module *m, char *err, size_t err_size)
{
    memset(m, 0, sizeof *m);
    const char *tmp = getenv("TMPDIR");
    snprintf(m->dir, sizeof m->dir, "%s/cartsim-shim-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(m->dir)) {
        snprintf(err, err_size, "mkdtemp: %s", strerror(errno));
        return -1;
    }
    char src[600], obj[600], log[600], inc[600];
    snprintf(src, sizeof src, "%s/kernel.cu.c", m->dir);
    snprintf(obj, sizeof obj, "%s/kernel.so", m->dir);
    snprintf(log, sizeof log, "%s/cc.log", m->dir);
    snprintf(inc, sizeof inc, "%s", shim);
    FILE *f = fopen(src, "w");
    if (!f || fputs(source, f) < 0 || fclose(f) != 0) {
        snprintf(err, err_size, "writing %s failed", src);
        return -1;
    }
    const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
    char *argv[] = {(char *)cc, "-std=c11", "-O2", "-ffp-contract=off", "-fno-math-errno", "-fno-tree-slp-vectorize",
                    "-fPIC", "-shared", "-w", "-include", inc, "-o", obj, src, "-lm", NULL};
    if (spawn_wait(argv, log)) {
        char head[1500];
        file_head(log, head, sizeof head);
        snprintf(err, err_size, "the shim build failed: %s", head);
        return -1;
    }
    m->handle = dlopen(obj, RTLD_NOW | RTLD_LOCAL);
    if (!m->handle) {
        snprintf(err, err_size, "dlopen: %s", dlerror());
        return -1;
    }
    return 0;
}

static void host_unload(host_module *m)
{
    if (m->handle)
        dlclose(m->handle);
    static const char *const files[] = {"kernel.cu.c", "kernel.so", "cc.log"};
    char path[700];
    for (int k = 0; k < 3 && m->dir[0]; k++) {
        snprintf(path, sizeof path, "%s/%s", m->dir, files[k]);
        unlink(path);
    }
    if (m->dir[0])
        rmdir(m->dir);
    memset(m, 0, sizeof *m);
}

typedef void (*kernel_lanes)(cs_lanes);
typedef void (*kernel_scratch)(cs_lanes, char *);

/* The module's launch coordinates, set for a grid; NULL when it has none. */
static host_dim3 *host_grid(const host_module *m, unsigned grid, unsigned block, host_dim3 **thread)
{
    host_dim3 *bi = dlsym(m->handle, "blockIdx"), *ti = dlsym(m->handle, "threadIdx");
    host_dim3 *bd = dlsym(m->handle, "blockDim"), *gd = dlsym(m->handle, "gridDim");
    if (!bi || !ti || !bd || !gd)
        return NULL;
    *gd = (host_dim3){grid, 1, 1};
    *bd = (host_dim3){block, 1, 1};
    *bi = *ti = (host_dim3){0, 0, 0};
    *thread = ti;
    return bi;
}

/* One "launch": every thread of the grid in turn. */
static int host_launch(const host_module *m, void *fn, bool with_scratch, unsigned grid, unsigned block,
                       const cs_lanes *l, char *scratch)
{
    host_dim3 *ti, *bi = host_grid(m, grid, block, &ti);
    if (!bi || !fn)
        return -1;
    for (unsigned b = 0; b < grid; b++)
        for (unsigned t = 0; t < block; t++) {
            bi->x = b;
            ti->x = t;
            if (with_scratch)
                ((kernel_scratch)fn)(*l, scratch);
            else
                ((kernel_lanes)fn)(*l);
        }
    return 0;
}

#endif
