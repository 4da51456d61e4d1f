/* The cuda backend, tested on any machine (CI has no GPU):
 *
 *  nvrtc   NVRTC compiles a hand-written kernel and every environment's kernel
 *          under every fusion mode, unroll, dtype, for sm_80 and sm_90; the
 *          cubin cache hits, misses and refuses failures like the cpu's.
 *  host    The CUDA dialect compiled as host C (tests/cuda_shim.h), launched
 *          by loops over blockIdx/threadIdx, reproduces the cpu backend bit
 *          for bit, f32 and f64, and so does every op over special values.
 *  fake    The whole runtime (sim/env.c -> jit/cuda_driver.c -> driver API)
 *          against a fake libcuda.so.1 + libnvrtc built from this very file
 *          with -DCS_FAKE_CUDA: its "cubin" is the source, its launches run
 *          the shim build, its device memory is host memory with every copy
 *          bounds-checked. Everything but the real launch is exercised:
 *          buffers, lazy copies, launch counts, block sizes, spills, limits,
 *          messages, context push/pop balance.
 *  device  On a real GPU (skipped, loudly, when none is usable): GPU vs cpu
 *          within tolerance; bit-identical across block sizes and unroll.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lanes.h"

extern char **environ;

#include "cuda_host.h"

#ifdef CS_FAKE_CUDA
/* ======================================================================
 * The fake libcuda.so.1 + libnvrtc (built by the tests into a .so).
 * Knobs, read when called: FAKE_CUDA_DEVICES=0 (no device), FAKE_CUDA_FREE
 * (free bytes), FAKE_CUDA_SPILL_ABOVE=U (kernels of unroll > U report 96
 * local bytes), FAKE_CUDA_BLOCK (the occupancy API's block), FAKE_NVRTC_FAIL,
 * FAKE_CUDA_ARCH (the device's compute capability, 90 by default; the fake
 * NVRTC knows sm_75 to sm_90), FAKE_CUDA_PTX_FAIL (the driver's PTX JIT fails).
 * ====================================================================== */
#include "cuda_api.h"

#ifndef FAKE_SHIM
#error "FAKE_SHIM must name tests/cuda_shim.h"
#endif

#define FAKE_MAGIC "CARTSIM-FAKE-CUBIN\n"
#define FAKE_PTX_MAGIC "CARTSIM-FAKE-PTX compute_"   /* then the arch and a newline */
static const int fake_nvrtc_archs[] = {75, 80, 86, 89, 90};

enum { C_LAUNCHES, C_DTOH, C_DTOH_BYTES, C_HTOD, C_HTOD_BYTES, C_LIVE, C_NO_CONTEXT, C_DEPTH, C_BAD, C_COUNT };
static long long counters[C_COUNT];

typedef struct {
    char *p;
    size_t n;
} fake_alloc;
static fake_alloc *allocs;
static size_t n_allocs;

void fake_cuda_counters(long long out[C_COUNT]);
void fake_cuda_counters(long long out[C_COUNT])
{
    counters[C_LIVE] = (long long)n_allocs;
    memcpy(out, counters, sizeof counters);
}

static long knob(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : dflt;
}

/* [p, p + n) inside one allocation */
static bool inside_const(const void *p, size_t n);

static bool inside(const void *p, size_t n)
{
    for (size_t k = 0; k < n_allocs; k++)
        if ((const char *)p >= allocs[k].p && (const char *)p + n <= allocs[k].p + allocs[k].n)
            return true;
    return inside_const(p, n);
}

static cs_cu_result need_ctx(void)
{
    if (counters[C_DEPTH] > 0)
        return CS_CUDA_SUCCESS;
    counters[C_NO_CONTEXT]++;
    return 201;   /* CUDA_ERROR_INVALID_CONTEXT */
}

cs_cu_result cuInit(unsigned int flags)
{
    return knob("FAKE_CUDA_DEVICES", 1) > 0 ? CS_CUDA_SUCCESS : CS_CUDA_ERROR_NO_DEVICE;
}
cs_cu_result cuDriverGetVersion(int *v) { *v = 13000; return 0; }

static const char *err_name(cs_cu_result rc)
{
    switch (rc) {
    case 0: return "CUDA_SUCCESS";
    case 1: return "CUDA_ERROR_INVALID_VALUE";
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 201: return "CUDA_ERROR_INVALID_CONTEXT";
    case 209: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case 218: return "CUDA_ERROR_INVALID_PTX";
    case 500: return "CUDA_ERROR_NOT_FOUND";
    case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    default: return "CUDA_ERROR_UNKNOWN";
    }
}
cs_cu_result cuGetErrorName(cs_cu_result rc, const char **s) { *s = err_name(rc); return 0; }
cs_cu_result cuGetErrorString(cs_cu_result rc, const char **s)
{
    *s = rc == 2     ? "out of memory (fake)"
         : rc == 218 ? "a PTX JIT compilation failed (fake)"
         : rc == 500 ? "named symbol not found (fake)"
                     : "fake driver error";
    return 0;
}
cs_cu_result cuDeviceGetCount(int *n) { *n = (int)knob("FAKE_CUDA_DEVICES", 1); return 0; }
cs_cu_result cuDeviceGet(cs_cu_device *d, int ordinal)
{
    *d = ordinal;
    return ordinal >= 0 && ordinal < knob("FAKE_CUDA_DEVICES", 1) ? 0 : 101;
}
cs_cu_result cuDeviceGetName(char *name, int len, cs_cu_device d)
{
    snprintf(name, (size_t)len, "cartsim fake GPU");
    return 0;
}
cs_cu_result cuDeviceGetAttribute(int *v, int attr, cs_cu_device d)
{
    switch (attr) {
    case CS_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 4; return 0;
    case CS_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = (int)knob("FAKE_CUDA_ARCH", 90) / 10; return 0;
    case CS_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = (int)knob("FAKE_CUDA_ARCH", 90) % 10; return 0;
    default: return 1;
    }
}
cs_cu_result cuDeviceTotalMem_v2(size_t *b, cs_cu_device d) { *b = (size_t)1 << 30; return 0; }
static int fake_ctx;
cs_cu_result cuDevicePrimaryCtxRetain(cs_cu_context *c, cs_cu_device d) { *c = (cs_cu_context)&fake_ctx; return 0; }
cs_cu_result cuDevicePrimaryCtxRelease_v2(cs_cu_device d) { return 0; }
cs_cu_result cuCtxPushCurrent_v2(cs_cu_context c)
{
    if (c != (cs_cu_context)&fake_ctx)
        return 201;
    counters[C_DEPTH]++;
    return 0;
}
cs_cu_result cuCtxPopCurrent_v2(cs_cu_context *c)
{
    if (counters[C_DEPTH] <= 0)
        return 201;
    counters[C_DEPTH]--;
    if (c)
        *c = (cs_cu_context)&fake_ctx;
    return 0;
}
cs_cu_result cuCtxSynchronize(void) { return need_ctx(); }

typedef struct fake_module fake_module;

typedef struct {
    char name[64];
    void *fn;
    bool scratch;
    bool pointer_arg;        /* not the environment's: one pointer (cs_cuda_launch_ptr) */
    fake_module *mod;
} fake_fn;

struct fake_module {
    host_module hm;
    int unroll;              /* from the source's first line */
    fake_fn fns[4096];
    int n_fns;
    fake_alloc consts[8];    /* exported constants handed out as "device" memory */
    int n_consts;
    fake_module *next;
};
static fake_module *modules;

/* [p, p + n) inside an exported constant of a loaded module */
static bool inside_const(const void *p, size_t n)
{
    for (fake_module *m = modules; m; m = m->next)
        for (int k = 0; k < m->n_consts; k++)
            if ((const char *)p >= m->consts[k].p && (const char *)p + n <= m->consts[k].p + m->consts[k].n)
                return true;
    return false;
}

cs_cu_result cuModuleLoadData(cs_cu_module *mod, const void *image)
{
    if (need_ctx())
        return 201;
    const char *text = image;
    if (!strncmp(text, FAKE_PTX_MAGIC, strlen(FAKE_PTX_MAGIC))) {
        /* PTX: the driver compiles it for the device, never for an older one than its target */
        if (knob("FAKE_CUDA_PTX_FAIL", 0))
            return 218;   /* CUDA_ERROR_INVALID_PTX */
        if (atoi(text + strlen(FAKE_PTX_MAGIC)) > knob("FAKE_CUDA_ARCH", 90))
            return 209;   /* CUDA_ERROR_NO_BINARY_FOR_GPU */
        text = strchr(text, '\n') + 1;
    } else if (strncmp(text, FAKE_MAGIC, strlen(FAKE_MAGIC))) {
        return 200;   /* CUDA_ERROR_INVALID_IMAGE */
    } else {
        text += strlen(FAKE_MAGIC);
    }
    fake_module *m = calloc(1, sizeof *m);
    if (!m)
        return 2;
    char err[2048];
    if (host_build(text, FAKE_SHIM, &m->hm, err, sizeof err)) {
        fprintf(stderr, "fake cuModuleLoadData: %s\n", err);
        host_unload(&m->hm);
        free(m);
        return 218;   /* CUDA_ERROR_INVALID_PTX */
    }
    const char *u = strstr(text, ", unroll ");
    m->unroll = u ? atoi(u + 9) : 1;
    m->next = modules;
    modules = m;
    *mod = (cs_cu_module)m;
    return 0;
}
cs_cu_result cuModuleUnload(cs_cu_module mod)
{
    if (need_ctx())
        return 201;
    fake_module *m = (fake_module *)mod;
    for (fake_module **at = &modules; *at; at = &(*at)->next)
        if (*at == m) {
            *at = m->next;
            break;
        }
    host_unload(&m->hm);
    free(m);
    return 0;
}
cs_cu_result cuModuleGetFunction(cs_cu_function *fn, cs_cu_module mod, const char *name)
{
    if (need_ctx())
        return 201;
    fake_module *m = (fake_module *)mod;
    void *f = dlsym(m->hm.handle, name);
    if (!f || m->n_fns >= 4096)
        return CS_CUDA_ERROR_NOT_FOUND;
    fake_fn *k = &m->fns[m->n_fns++];
    snprintf(k->name, sizeof k->name, "%s", name);
    k->fn = f;
    k->scratch = !strncmp(name, "cs_rollout_k", 12);
    k->pointer_arg = strncmp(name, "cs_kernel_", 10) && strncmp(name, "cs_rollout_k", 12);
    k->mod = m;
    *fn = (cs_cu_function)k;
    return 0;
}
cs_cu_result cuModuleGetGlobal_v2(cs_cu_deviceptr *p, size_t *bytes, cs_cu_module mod, const char *name)
{
    if (need_ctx())
        return 201;
    fake_module *m = (fake_module *)mod;
    void *v = dlsym(m->hm.handle, name);
    if (!v || m->n_consts >= 8)
        return CS_CUDA_ERROR_NOT_FOUND;
    m->consts[m->n_consts++] = (fake_alloc){v, 4};
    *p = (cs_cu_deviceptr)(uintptr_t)v;
    *bytes = 4;
    return 0;
}
cs_cu_result cuFuncGetAttribute(int *v, int attr, cs_cu_function fn)
{
    if (need_ctx())
        return 201;
    const fake_fn *k = (const fake_fn *)fn;
    switch (attr) {
    case CS_CU_FUNC_ATTRIBUTE_NUM_REGS: *v = 40; return 0;
    case CS_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; return 0;
    /* as on a GPU: CUDA's sinf keeps a stack frame whether or not registers spill */
    case CS_CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *v = 32 + (k->mod->unroll > knob("FAKE_CUDA_SPILL_ABOVE", 1L << 20) ? 96 : 0); return 0;
    default: return 1;
    }
}
cs_cu_result cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, cs_cu_function fn, cs_cu_b2d_size f,
                                              size_t smem, int limit)
{
    if (need_ctx())
        return 201;
    *min_grid = 16;
    *block = (int)knob("FAKE_CUDA_BLOCK", 256);
    return 0;
}
cs_cu_result cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    if (need_ctx())
        return 201;
    *free_bytes = (size_t)knob("FAKE_CUDA_FREE", 1L << 30);
    *total = (size_t)1 << 30;
    return 0;
}
cs_cu_result cuMemAlloc_v2(cs_cu_deviceptr *p, size_t n)
{
    if (need_ctx())
        return 201;
    if (n == 0)
        return 1;
    fake_alloc *grown = realloc(allocs, (n_allocs + 1) * sizeof *allocs);
    char *mem = malloc(n);
    if (!grown || !mem) {
        free(mem);
        if (grown)
            allocs = grown;
        return 2;
    }
    memset(mem, 0xA5, n);   /* garbage, as a device's fresh memory */
    allocs = grown;
    allocs[n_allocs++] = (fake_alloc){mem, n};
    *p = (cs_cu_deviceptr)(uintptr_t)mem;
    return 0;
}
cs_cu_result cuMemFree_v2(cs_cu_deviceptr p)
{
    if (need_ctx())
        return 201;
    for (size_t k = 0; k < n_allocs; k++)
        if (allocs[k].p == (char *)(uintptr_t)p && allocs[k].n) {
            free(allocs[k].p);
            allocs[k] = allocs[--n_allocs];
            return 0;
        }
    counters[C_BAD]++;
    return 1;
}
cs_cu_result cuMemcpyHtoD_v2(cs_cu_deviceptr dst, const void *src, size_t n)
{
    if (need_ctx())
        return 201;
    if (!inside((void *)(uintptr_t)dst, n)) {
        counters[C_BAD]++;
        return 1;
    }
    memcpy((void *)(uintptr_t)dst, src, n);
    counters[C_HTOD]++;
    counters[C_HTOD_BYTES] += (long long)n;
    return 0;
}
cs_cu_result cuMemcpyDtoH_v2(void *dst, cs_cu_deviceptr src, size_t n)
{
    if (need_ctx())
        return 201;
    if (!inside((void *)(uintptr_t)src, n)) {
        counters[C_BAD]++;
        return 1;
    }
    memcpy(dst, (void *)(uintptr_t)src, n);
    counters[C_DTOH]++;
    counters[C_DTOH_BYTES] += (long long)n;
    return 0;
}
cs_cu_result cuMemsetD8_v2(cs_cu_deviceptr dst, unsigned char v, size_t n)
{
    if (need_ctx())
        return 201;
    if (!inside((void *)(uintptr_t)dst, n)) {
        counters[C_BAD]++;
        return 1;
    }
    memset((void *)(uintptr_t)dst, v, n);
    return 0;
}

/* A kernel of the generic launches: its argument must point into device memory. */
static cs_cu_result launch_pointer(const fake_fn *k, unsigned gx, unsigned bx, void **params)
{
    const void *arg = (const void *)(uintptr_t) * (cs_cu_deviceptr *)params[0];
    if (!inside(arg, 1)) {
        counters[C_BAD]++;
        return 700;   /* CUDA_ERROR_ILLEGAL_ADDRESS */
    }
    host_dim3 *ti, *bi = host_grid(&k->mod->hm, gx, bx, &ti);
    if (!bi)
        return 1;
    for (unsigned b = 0; b < gx; b++)
        for (unsigned t = 0; t < bx; t++) {
            bi->x = b;
            ti->x = t;
            ((void (*)(const void *))k->fn)(arg);
        }
    counters[C_LAUNCHES]++;
    return 0;
}

/* Every buffer of the lanes must be fake device memory. */
static bool device_lanes_ok(const cs_lanes *l)
{
    const void *single[] = {l->segstep, l->obs, l->final_obs, l->reward, l->terminated, l->truncated, l->pending,
                            l->seg_return, l->segments, l->return_sum, l->nonfinite};
    for (size_t k = 0; k < sizeof single / sizeof single[0]; k++)
        if (!inside(single[k], 1))
            return false;
    /* absent (0) where the program has none, else the device's */
    const void *optional[] = {l->obs_int, l->final_obs_int, l->info, l->final_info, l->step_words, l->restart_words};
    for (size_t k = 0; k < sizeof optional / sizeof optional[0]; k++)
        if (optional[k] && !inside(optional[k], 1))
            return false;
    void **tables[] = {l->carried, l->params, l->inputs};
    for (int t = 0; t < 3; t++)
        if (!inside(tables[t], sizeof(void *)))
            return false;
    /* a recording policy's rows: a device array of device addresses */
    return !l->record || (inside(l->record, sizeof(void *)) && inside(l->record[0], 4));
}

cs_cu_result cuLaunchKernel(cs_cu_function fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                            unsigned bz, unsigned smem, cs_cu_stream stream, void **params, void **extra)
{
    if (need_ctx())
        return 201;
    const fake_fn *k = (const fake_fn *)fn;
    if (gx == 0 || bx == 0 || bx > 1024 || gy != 1 || gz != 1 || by != 1 || bz != 1 || !params || extra)
        return 1;
    if (k->pointer_arg)
        return launch_pointer(k, gx, bx, params);
    const cs_lanes *l = params[0];
    if (!device_lanes_ok(l)) {
        counters[C_BAD]++;
        return 700;
    }
    char *scratch = k->scratch ? (char *)(uintptr_t) * (cs_cu_deviceptr *)params[1] : NULL;
    int rc = host_launch(&k->mod->hm, k->fn, k->scratch, gx, bx, l, scratch);
    counters[C_LAUNCHES]++;
    return rc ? 1 : 0;
}

/* ---- fake NVRTC: the "cubin" is the source behind a magic line ---- */

typedef struct {
    char *src;
    int arch;          /* from --gpu-architecture */
    bool virtual_arch; /* compute_XY: PTX only */
    bool verbose;      /* --ptxas-options=--verbose */
    int result;
    char log[512];
} fake_prog;

cs_nvrtc_result nvrtcVersion(int *major, int *minor) { *major = 99; *minor = 0; return 0; }
const char *nvrtcGetErrorString(cs_nvrtc_result rc) { return rc ? "NVRTC_ERROR_COMPILATION (fake)" : "NVRTC_SUCCESS"; }
cs_nvrtc_result nvrtcCreateProgram(cs_nvrtc_program *p, const char *src, const char *name, int nh,
                                   const char *const *h, const char *const *hn)
{
    fake_prog *fp = calloc(1, sizeof *fp);
    if (!fp || !(fp->src = strdup(src))) {
        free(fp);
        return 1;
    }
    *p = (cs_nvrtc_program)fp;
    return 0;
}
cs_nvrtc_result nvrtcCompileProgram(cs_nvrtc_program p, int n, const char *const *opts)
{
    fake_prog *fp = (fake_prog *)p;
    for (int k = 0; k < n; k++) {
        const char *o = opts[k], *a = "--gpu-architecture=";
        if (strncmp(o, a, strlen(a)))
            continue;
        o += strlen(a);
        fp->virtual_arch = !strncmp(o, "compute_", 8);
        if (!fp->virtual_arch && strncmp(o, "sm_", 3))
            return 5;   /* NVRTC_ERROR_INVALID_OPTION */
        fp->arch = atoi(o + (fp->virtual_arch ? 8 : 3));
    }
    bool known = false;
    for (size_t k = 0; k < n; k++)
        fp->verbose |= !strcmp(opts[k], "--ptxas-options=--verbose");
    for (size_t k = 0; k < sizeof fake_nvrtc_archs / sizeof fake_nvrtc_archs[0]; k++)
        known |= fake_nvrtc_archs[k] == fp->arch;
    if (!known)
        return 5;
    fp->result = knob("FAKE_NVRTC_FAIL", 0) ? 6 : 0;
    if (fp->result)
        snprintf(fp->log, sizeof fp->log, "fake.cu(1): error: fake");
    else if (fp->verbose && !fp->virtual_arch) {
        /* ptxas's report: a stack frame always (CUDA's sinf), spills above the knob's unroll */
        const char *u = strstr(fp->src, ", unroll ");
        int unroll = u ? atoi(u + 9) : 1;
        snprintf(fp->log, sizeof fp->log,
                 "ptxas info    : Function properties for cs_kernel_restart\n"
                 "ptxas         .     32 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                 "ptxas info    : Function properties for cs_kernel_rollout\n"
                 "ptxas         .     32 bytes stack frame, %d bytes spill stores, %d bytes spill loads\n",
                 unroll > knob("FAKE_CUDA_SPILL_ABOVE", 1L << 20) ? 96 : 0,
                 unroll > knob("FAKE_CUDA_SPILL_ABOVE", 1L << 20) ? 96 : 0);
    }
    return fp->result;
}
cs_nvrtc_result nvrtcGetProgramLogSize(cs_nvrtc_program p, size_t *n)
{
    *n = strlen(((fake_prog *)p)->log) + 1;
    return 0;
}
cs_nvrtc_result nvrtcGetProgramLog(cs_nvrtc_program p, char *log)
{
    strcpy(log, ((fake_prog *)p)->log);
    return 0;
}
cs_nvrtc_result nvrtcGetCUBINSize(cs_nvrtc_program p, size_t *n)
{
    if (((fake_prog *)p)->virtual_arch)
        return 3;   /* NVRTC_ERROR_INVALID_INPUT: no cubin for compute_XY */
    *n = strlen(FAKE_MAGIC) + strlen(((fake_prog *)p)->src) + 1;
    return 0;
}
cs_nvrtc_result nvrtcGetCUBIN(cs_nvrtc_program p, char *out)
{
    if (((fake_prog *)p)->virtual_arch)
        return 3;
    strcpy(out, FAKE_MAGIC);
    strcat(out, ((fake_prog *)p)->src);
    return 0;
}
/* The fake PTX: its magic line names the target, then the source; the size counts the NUL. */
cs_nvrtc_result nvrtcGetPTXSize(cs_nvrtc_program p, size_t *n)
{
    *n = strlen(FAKE_PTX_MAGIC) + 4 + strlen(((fake_prog *)p)->src) + 1;
    return 0;
}
cs_nvrtc_result nvrtcGetPTX(cs_nvrtc_program p, char *out)
{
    const fake_prog *fp = (const fake_prog *)p;
    sprintf(out, "%s%3d\n%s", FAKE_PTX_MAGIC, fp->arch, fp->src);
    return 0;
}
cs_nvrtc_result nvrtcGetNumSupportedArchs(int *n)
{
    *n = (int)(sizeof fake_nvrtc_archs / sizeof fake_nvrtc_archs[0]);
    return 0;
}
cs_nvrtc_result nvrtcGetSupportedArchs(int *archs)
{
    memcpy(archs, fake_nvrtc_archs, sizeof fake_nvrtc_archs);
    return 0;
}
cs_nvrtc_result nvrtcDestroyProgram(cs_nvrtc_program *p)
{
    fake_prog *fp = (fake_prog *)*p;
    if (fp)
        free(fp->src);
    free(fp);
    *p = NULL;
    return 0;
}

#else
/* ======================================================================
 * The tests.
 * ====================================================================== */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <pthread.h>

#include "agents.h"
#include "cartsim.h"
#include "cuda_api.h"
#include "jit.h"
#include "lanes_any.h"
#include "random_env.h"
#include "train.h"

#ifdef CS_HAVE_CUDA_HEADERS
#include <cuda.h>
#include <nvrtc.h>
/* cuda_api.h's values are the real headers' */
_Static_assert(CS_CUDA_SUCCESS == CUDA_SUCCESS, "CUDA_SUCCESS");
_Static_assert(CS_CUDA_ERROR_OUT_OF_MEMORY == CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY");
_Static_assert(CS_CUDA_ERROR_STUB_LIBRARY == CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY");
_Static_assert(CS_CUDA_ERROR_NO_DEVICE == CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE");
_Static_assert(CS_CUDA_ERROR_NOT_FOUND == CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND");
_Static_assert(CS_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count");
_Static_assert(CS_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "cc");
_Static_assert(CS_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "cc");
_Static_assert(CS_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads");
_Static_assert(CS_CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES == CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "local bytes");
_Static_assert(CS_CU_FUNC_ATTRIBUTE_NUM_REGS == CU_FUNC_ATTRIBUTE_NUM_REGS, "registers");
_Static_assert(CS_NVRTC_SUCCESS == NVRTC_SUCCESS, "NVRTC_SUCCESS");
_Static_assert(sizeof(cs_cu_deviceptr) == sizeof(CUdeviceptr), "CUdeviceptr");
_Static_assert(sizeof(cs_cu_device) == sizeof(CUdevice), "CUdevice");
#define HAVE_HEADERS 1
#else
#define HAVE_HEADERS 0
#endif

static const char *root(void)
{
    const char *r = getenv("CARTSIM_ROOT");
    return r && *r ? r : ".";
}

static void shim_path(char *out, size_t size) { snprintf(out, size, "%s/tests/cuda_shim.h", root()); }

/* A skip that shows in the log whatever Criterion's verbosity. */
#define skip_loudly(...)                                                                  \
    do {                                                                                  \
        char msg_[2048];                                                                   \
        snprintf(msg_, sizeof msg_, __VA_ARGS__);                                         \
        fprintf(stderr, "\n*** SKIPPED %s: %s ***\n", __func__, msg_);                    \
        cr_skip_test("%s", msg_);                                                         \
    } while (0)

/* Until the emitter speaks the CUDA dialect (jit/emit.c), the tests that
 * need it say so instead of failing. */
#define dialect_or_skip()                                                                 \
    do {                                                                                  \
        cs_config c_;                                                                     \
        cs_config_init(&c_);                                                              \
        char *t_ = NULL, e_[1024];                                                        \
        if (cs_dump(&c_, NULL, "cuda", &t_, e_, sizeof e_) != CS_OK &&                    \
            strstr(e_, "not part of this build"))                                         \
            skip_loudly("the emitter has no CUDA dialect yet");                           \
        free(t_);                                                                         \
    } while (0)

static cs_nvrtc *nvrtc_or_skip(void)
{
    char err[600];
    cs_nvrtc *nv;
    if (cs_nvrtc_open(&nv, err, sizeof err))
        skip_loudly("NVRTC is missing: %s", err);
    return nv;
}

/* The environments under test: every .env file in envs/. */
static int compare_names(const void *a, const void *b) { return strcmp(a, b); }

static int list_envs(char names[][700], int max)
{
    char dir[400];
    snprintf(dir, sizeof dir, "%s/envs", root());
    DIR *d = opendir(dir);
    cr_assert(d, "cannot list %s", dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        size_t len = strlen(e->d_name);
        if (len > 4 && !strcmp(e->d_name + len - 4, ".env"))
            snprintf(names[n++], 700, "%s/%.290s", dir, e->d_name);
    }
    closedir(d);
    cr_assert_gt(n, 0, "no environments in %s", dir);
    qsort(names, (size_t)n, sizeof names[0], compare_names);
    return n;
}

/* The environments every schedule, fusion and unroll is tried on: the
 * classic ones and one of each kind the suite adds (a table, a loop, kept
 * states, a map). The suite's others run one or two schedules only, which
 * keeps `make test` within its time (NVRTC spends minutes on one MinAtar
 * game at fusion none): each is also compared with the interpreter through
 * every golden step in Python, on the cpu backend. */
static bool every_schedule(const char *path)
{
    static const char *const names[] = {"cartpole", "cartpole_concat", "pendulum", "mountain_car",
                                        "mountain_car_continuous", "acrobot", "spring_mass", "frozen_lake",
                                        "blackjack", "deep_sea", "four_rooms"};
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t len = strlen(base) > 4 ? strlen(base) - 4 : 0;   /* without .env */
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strlen(names[k]) == len && !strncmp(base, names[k], len))
            return true;
    return false;
}

static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert(s && fread(s, 1, (size_t)n, f) == (size_t)n);
    s[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return s;
}

/* The program a runtime builds: parse, random policy, passes. */
static cs_program *load_program(const char *path, cs_type real, cs_fusion pol)
{
    size_t len;
    char *src = read_text(path, &len);
    cs_program *p = NULL;
    char err[1024];
    cr_assert_eq(cs_parse(src, len, path, real, NULL, 0, &p, err, sizeof err), 0, "%s", err);
    free(src);
    cr_assert_eq(cs_policy_random(p), 0);
    cr_assert_eq(cs_program_bind_policy(p), 0);
    cr_assert_eq(cs_optimize(p, pol, NULL, err, sizeof err), 0, "%s", err);
    return p;
}

static char *emit(const cs_program *p, cs_fusion pol, int unroll, cs_dialect d)
{
    cs_schedule s = {pol, unroll, 0, 90};
    cs_text t = {0};
    char err[1024];
    cs_plan plan;
    cr_assert_eq(cs_plan_build(p, pol, &plan), 0);
    cr_assert_eq(cs_emit(p, &plan, &s, d, &t, err, sizeof err), 0, "emit (%s dialect, %s, unroll %d): %s",
                 d == CS_DIALECT_C ? "C" : "CUDA", cs_fusion_name(pol), unroll, err);
    cs_plan_free(&plan);
    cr_assert(!t.failed && t.data);
    return t.data;
}

/* ---- nvrtc ---- */

static const char hand_kernel[] =
    "#ifndef CS_GLOBAL\n#define CS_GLOBAL extern \"C\" __global__\n#endif\n"
    "#ifndef CS_EXPORT\n#define CS_EXPORT extern \"C\" __device__\n#endif\n"
    "typedef struct { long long begin, end; double *x; } lanes;\n"
    "CS_EXPORT const unsigned int cs_kernels_per_step = 1u;\n"
    "CS_GLOBAL void cs_kernel_rollout(lanes L)\n{\n"
    "    for (long long i = L.begin + (long long)blockIdx.x * blockDim.x + threadIdx.x; i < L.end;\n"
    "         i += (long long)gridDim.x * blockDim.x)\n"
    "        L.x[i] = sin(L.x[i]) * 2.0 + 1.0;\n}\n";

static bool has_bytes(const cs_cubin *b, const char *s)
{
    return memmem(b->data, b->size, s, strlen(s)) != NULL;
}

static int count_files(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name), sl = strlen(suffix);
        n += len > sl && !strcmp(e->d_name + len - sl, suffix);
    }
    closedir(d);
    return n;
}

/* Spills come from ptxas's report: a stack frame is not a spill. */
Test(cuda_nvrtc, reads_spills_from_the_ptxas_log)
{
    const char *log = "ptxas info    : 32 bytes gmem\n"
                      "ptxas info    : Compiling entry function 'cs_kernel_step' for 'sm_90'\n"
                      "ptxas info    : Function properties for cs_kernel_step\n"
                      "ptxas         .     32 bytes stack frame, 12 bytes spill stores, 12 bytes spill loads\n"
                      "ptxas info    : Function properties for cs_kernel_rollout\n"
                      "ptxas         .     32 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                      "ptxas info    : Used 64 registers, used 0 barriers, 32 bytes cumulative stack size\n"
                      "ptxas info    : Function properties for cs_rollout_k0\n"
                      "ptxas         .     0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
                      "ptxas info    : Function properties for cs_rollout_k1\n"
                      "ptxas         .     0 bytes stack frame, 144 bytes spill stores, 96 bytes spill loads";
    cr_assert_eq(cs_ptxas_spill_bytes(log, "cs_kernel_rollout"), 0);
    cr_assert_eq(cs_ptxas_spill_bytes(log, "cs_kernel_step"), 12);
    cr_assert_eq(cs_ptxas_spill_bytes(log, "cs_rollout_k"), 144, "the most of the partition's kernels");
    cr_assert_eq(cs_ptxas_spill_bytes(log, "cs_kernel_restart"), -1, "not in the log");
    cr_assert_eq(cs_ptxas_spill_bytes("", "cs_kernel_rollout"), -1);
    cr_assert_eq(cs_ptxas_spill_bytes("Function properties for cs_kernel_rollout", "cs_kernel_rollout"), -1,
                 "a truncated log");
    cr_assert_eq(cs_ptxas_spill_bytes(NULL, "x"), -1);
}

/* The generated rollout kernels keep a stack frame (CUDA's sinf/cosf slow
 * path) but spill nothing at unroll 10: NVRTC's report says so, and the
 * runtime would otherwise lower every unroll to 1. */
Test(cuda_nvrtc, generated_kernels_report_no_spills_at_unroll_10, .timeout = 600)
{
    cs_nvrtc *nv = nvrtc_or_skip();
    const char *envs[] = {"cartpole", "acrobot"};
    for (int e = 0; e < 2; e++)
        for (int d = 0; d < 2; d++) {
            char path[700];
            snprintf(path, sizeof path, "%s/envs/%s.env", root(), envs[e]);
            cs_program *p = load_program(path, d ? CS_F64 : CS_F32, CS_FUSION_FULL);
            char *src = emit(p, CS_FUSION_FULL, 10, CS_DIALECT_CUDA);
            cs_cubin bin;
            char err[4096];
            cr_assert_eq(cs_cuda_compile(nv, src, 90, CS_CUDA_FMAD, NULL, &bin, err, sizeof err), 0, "%s", err);
            cr_assert_eq(bin.spill_bytes, 0, "%s %s: %d bytes of spills", envs[e], d ? "f64" : "f32",
                         bin.spill_bytes);
            cs_cubin_free(&bin);
            free(src);
            cs_program_free(p);
        }
    cs_nvrtc_close(nv);
}

Test(cuda_nvrtc, parses_architectures)
{
    cr_assert_eq(cs_cuda_parse_arch("sm_90"), 90);
    cr_assert_eq(cs_cuda_parse_arch("sm_80"), 80);
    cr_assert_eq(cs_cuda_parse_arch("86"), 86);
    cr_assert_eq(cs_cuda_parse_arch("9.0"), 90);
    cr_assert_eq(cs_cuda_parse_arch("sm_90a"), 90);
    cr_assert_eq(cs_cuda_parse_arch("sm_120"), 120);
    cr_assert_eq(cs_cuda_parse_arch("sm_"), -1);
    cr_assert_eq(cs_cuda_parse_arch("compute_90"), -1);
    cr_assert_eq(cs_cuda_parse_arch("sm_9x"), -1);
    cr_assert_eq(cs_cuda_parse_arch(""), -1);
    cr_assert_eq(cs_cuda_parse_arch(NULL), -1);
}

Test(cuda_nvrtc, compiles_a_hand_written_kernel_and_caches_it)
{
    cs_nvrtc *nv = nvrtc_or_skip();
    int major, minor;
    cs_nvrtc_version(nv, &major, &minor);
    cr_assert_geq(major, 11, "NVRTC %d.%d", major, minor);
    char dir[] = "/tmp/cartsim-cubin-cache-XXXXXX";
    cr_assert(mkdtemp(dir));
    cs_cache cache;
    cs_cache_open(&cache, dir);
    cr_assert_str_eq(cache.warning, "");
    char err[4096];
    const int archs[] = {80, 90};
    for (int a = 0; a < 2; a++) {
        cs_cubin bin, again;
        cr_assert_eq(cs_cuda_compile(nv, hand_kernel, archs[a], false, &cache, &bin, err, sizeof err), 0, "%s", err);
        cr_assert_not(bin.cache_hit);
        cr_assert_gt(bin.size, 64);
        cr_assert_eq(memcmp(bin.data, "\177ELF", 4), 0, "a cubin is an ELF file");
        cr_assert(has_bytes(&bin, "cs_kernel_rollout"), "the entry point is in the cubin");
        cr_assert(has_bytes(&bin, "cs_kernels_per_step"), "the exported constant is in the cubin");
        cr_assert_eq(cs_cuda_compile(nv, hand_kernel, archs[a], false, &cache, &again, err, sizeof err), 0, "%s",
                     err);
        cr_assert(again.cache_hit, "the second compile for sm_%d hits the cache", archs[a]);
        cr_assert_eq(again.size, bin.size);
        cr_assert_eq(memcmp(again.data, bin.data, bin.size), 0);
        cs_cubin_free(&again);
        /* fmad is part of the key */
        cr_assert_eq(cs_cuda_compile(nv, hand_kernel, archs[a], true, &cache, &again, err, sizeof err), 0, "%s",
                     err);
        cr_assert_not(again.cache_hit);
        cs_cubin_free(&again);
        cs_cubin_free(&bin);
    }
    cr_assert_eq(count_files(dir, ".cubin"), 4);

    /* A failed compile says what NVRTC said, and is not cached. */
    cs_cubin bad;
    const char *broken = "extern \"C\" __global__ void k(int *p) { *p = undeclared_name; }\n";
    cr_assert_neq(cs_cuda_compile(nv, broken, 90, true, &cache, &bad, err, sizeof err), 0);
    cr_assert(strstr(err, "NVRTC failed"), "%s", err);
    cr_assert(strstr(err, "undeclared_name"), "NVRTC's log is in the message: %s", err);
    cr_assert_null(bad.data);
    cr_assert_eq(count_files(dir, ".cubin"), 4, "a failed compile is never cached");

    /* A corrupt entry is rebuilt. */
    DIR *d = opendir(dir);
    struct dirent *e;
    char victim[600] = "";
    while ((e = readdir(d)))
        if (strlen(e->d_name) > 6 && !strcmp(e->d_name + strlen(e->d_name) - 6, ".cubin"))
            snprintf(victim, sizeof victim, "%s/%s", dir, e->d_name);
    closedir(d);
    FILE *f = fopen(victim, "r+b");
    cr_assert(f);
    fseek(f, 100, SEEK_SET);
    fputc('X', f);
    fclose(f);
    int hits = 0;
    for (int a = 0; a < 2; a++)
        for (int fm = 0; fm < 2; fm++) {
            cs_cubin bin;
            cr_assert_eq(cs_cuda_compile(nv, hand_kernel, archs[a], fm, &cache, &bin, err, sizeof err), 0, "%s", err);
            hits += bin.cache_hit;
            cs_cubin_free(&bin);
        }
    cr_assert_eq(hits, 3, "the corrupt entry was rebuilt, the others hit");

    cr_assert_neq(cs_cuda_compile(nv, hand_kernel, 5, false, &cache, &bad, err, sizeof err), 0);
    cr_assert(strstr(err, "sm_5") || strstr(err, "architecture"), "%s", err);
    cs_cache_close(&cache);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    cs_nvrtc_close(nv);
}

/* A device newer than NVRTC: PTX for the newest virtual architecture NVRTC
 * knows, NUL-terminated, cached apart from the cubins; never where a cubin
 * was asked for, never for a device older than NVRTC's oldest. */
Test(cuda_nvrtc, falls_back_to_ptx_for_an_arch_newer_than_nvrtc)
{
    cs_nvrtc *nv = nvrtc_or_skip();
    char dir[] = "/tmp/cartsim-ptx-cache-XXXXXX";
    cr_assert(mkdtemp(dir));
    cs_cache cache;
    cs_cache_open(&cache, dir);
    cr_assert_str_eq(cache.warning, "");
    char err[4096];
    cs_cubin bin, again;

    /* Without the fallback: refused, and the message names NVRTC's range. */
    cr_assert_eq(cs_cuda_compile(nv, hand_kernel, 999, false, &cache, &bin, err, sizeof err), CS_CUDA_ARCH);
    cr_assert_null(bin.data);
    int oldest = 0, newest = 0, major, minor;
    cs_nvrtc_version(nv, &major, &minor);
    char want[128];
    snprintf(want, sizeof want, "NVRTC %d.%d cannot compile for sm_999 (it supports sm_", major, minor);
    cr_assert(strstr(err, want), "%s", err);
    const char *range = strstr(err, "(it supports");
    cr_assert(range && sscanf(range, "(it supports sm_%d to sm_%d)", &oldest, &newest) == 2, "%s", err);
    cr_assert(oldest >= 10 && newest >= oldest && newest + 10 <= 999, "sm_%d to sm_%d", oldest, newest);
    cr_assert_eq(count_files(dir, ".ptx") + count_files(dir, ".cubin"), 0);

    /* With it: PTX text for compute_<newest>. */
    const int beyond = newest + 10;
    cr_assert_eq(cs_cuda_compile_or_ptx(nv, hand_kernel, beyond, false, &cache, &bin, err, sizeof err), 0, "%s",
                 err);
    cr_assert(bin.ptx);
    cr_assert_eq(bin.arch, newest);
    cr_assert_not(bin.cache_hit);
    cr_assert_gt(bin.size, 64);
    cr_assert_eq(bin.data[bin.size - 1], 0, "the PTX ends with its NUL, counted in size");
    cr_assert_eq(strlen((const char *)bin.data) + 1, bin.size, "one NUL, at the end");
    const char *text = (const char *)bin.data;
    cr_assert(strstr(text, ".version "), "%.300s", text);
    char target[32];
    snprintf(target, sizeof target, ".target sm_%d", newest);
    const char *t = strstr(text, target);
    cr_assert(t && (t[strlen(target)] < '0' || t[strlen(target)] > '9'), "%s missing: %.300s", target, text);
    cr_assert(strstr(text, "cs_kernel_rollout"), "the entry point is in the PTX");
    cr_assert_eq(count_files(dir, ".ptx"), 1);
    cr_assert_eq(count_files(dir, ".cubin"), 0);

    /* The same PTX serves any newer device: a cache hit, the same bytes. */
    const int devices[] = {beyond, 999};
    for (int d = 0; d < 2; d++) {
        cr_assert_eq(cs_cuda_compile_or_ptx(nv, hand_kernel, devices[d], false, &cache, &again, err, sizeof err), 0,
                     "%s", err);
        cr_assert(again.cache_hit, "sm_%d: PTX from the cache", devices[d]);
        cr_assert(again.ptx);
        cr_assert_eq(again.arch, newest);
        cr_assert_eq(again.size, bin.size);
        cr_assert_eq(memcmp(again.data, bin.data, bin.size), 0);
        cs_cubin_free(&again);
    }

    /* The cubin for the newest arch is another entry, and a cubin. */
    cr_assert_eq(cs_cuda_compile_or_ptx(nv, hand_kernel, newest, false, &cache, &again, err, sizeof err), 0, "%s",
                 err);
    cr_assert_not(again.ptx);
    cr_assert_not(again.cache_hit, "the cubin is not the PTX entry");
    cr_assert_eq(again.arch, newest);
    cr_assert_eq(memcmp(again.data, "\177ELF", 4), 0);
    cs_cubin_free(&again);
    cr_assert_eq(count_files(dir, ".ptx"), 1);
    cr_assert_eq(count_files(dir, ".cubin"), 1);

    /* A device older than NVRTC's oldest cannot run PTX for a newer one. */
    cr_assert_eq(cs_cuda_compile_or_ptx(nv, hand_kernel, oldest - 5, false, &cache, &again, err, sizeof err),
                 CS_CUDA_ARCH);
    snprintf(want, sizeof want, "cannot compile for sm_%d (it supports sm_%d to sm_%d)", oldest - 5, oldest, newest);
    cr_assert(strstr(err, want), "%s", err);
    cr_assert_null(again.data);
    cr_assert_eq(count_files(dir, ".ptx") + count_files(dir, ".cubin"), 2, "nothing cached for a refused arch");

    /* A damaged PTX entry (here: its NUL cut off) is rebuilt, not handed on. */
    DIR *dd = opendir(dir);
    struct dirent *e;
    char victim[600] = "";
    while ((e = readdir(dd)))
        if (strlen(e->d_name) > 4 && !strcmp(e->d_name + strlen(e->d_name) - 4, ".ptx"))
            snprintf(victim, sizeof victim, "%s/%s", dir, e->d_name);
    closedir(dd);
    cr_assert(truncate(victim, (off_t)bin.size - 1) == 0);
    cr_assert_eq(cs_cuda_compile_or_ptx(nv, hand_kernel, beyond, false, &cache, &again, err, sizeof err), 0, "%s",
                 err);
    cr_assert_not(again.cache_hit);
    cr_assert_eq(again.size, bin.size);
    cr_assert_eq(memcmp(again.data, bin.data, bin.size), 0);
    cs_cubin_free(&again);
    cs_cubin_free(&bin);

    cs_cache_close(&cache);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    cs_nvrtc_close(nv);
}

/* Issue 3, test 1: every environment's kernel, every policy and schedule,
 * both dtypes, sm_80 and sm_90. Sources that differ only in their title line
 * (rules and none ignore the unroll) are compiled once; the compiles run on
 * every core, through the kernel cache the runtime uses ($XDG_CACHE_HOME/
 * cartsim: an entry there is this very source compiled by this very NVRTC
 * with these options; CARTSIM_TEST_CUDA_FRESH=1 compiles everything anew).
 * Every failure is reported, with NVRTC's log. */
typedef struct {
    char what[800];
    char *source;            /* owned by the first job of a source */
    const char *body;        /* source after its title line */
    int arch;
    bool duplicate;
    int rc;
    bool cache_hit;
    char *err;
    bool has_symbols;
    const char *entry;       /* cs_kernel_rollout or cs_rollout_k0 */
} compile_job;

typedef struct {
    compile_job *jobs;
    int n, next;
    pthread_mutex_t lock;
    cs_nvrtc *nv;
    bool fresh;
} compile_pool;

static void *compile_worker(void *arg)
{
    compile_pool *pool = arg;
    cs_cache cache = {.dir = ""};
    if (!pool->fresh)
        cs_cache_open(&cache, NULL);
    for (;;) {
        pthread_mutex_lock(&pool->lock);
        int k = pool->next++;
        pthread_mutex_unlock(&pool->lock);
        if (k >= pool->n)
            break;
        compile_job *j = &pool->jobs[k];
        if (j->duplicate)
            continue;
        cs_cubin bin;
        char err[8192] = "";
        /* with jit/compile.c's fused multiply-add setting, as the program compiles them */
        j->rc = cs_cuda_compile(pool->nv, j->source, j->arch, CS_CUDA_FMAD, &cache, &bin, err, sizeof err);
        j->cache_hit = bin.cache_hit;
        j->err = strdup(err);
        j->has_symbols = j->rc == 0 && has_bytes(&bin, "cs_kernel_restart") && has_bytes(&bin, "cs_kernel_step") &&
                         has_bytes(&bin, "cs_scratch_bytes_per_lane") && has_bytes(&bin, "cs_kernels_per_step") &&
                         has_bytes(&bin, j->entry);
        cs_cubin_free(&bin);
    }
    cs_cache_close(&cache);
    return NULL;
}

Test(cuda_nvrtc, compiles_every_environment_policy_schedule_and_arch)
{
    dialect_or_skip();
    cs_nvrtc *nv = nvrtc_or_skip();
    char envs[64][700];
    int n_envs = list_envs(envs, 64);
    const cs_fusion fusions[] = {CS_FUSION_NONE, CS_FUSION_RULES, CS_FUSION_FULL};   /* costliest first */
    const int unrolls[] = {10, 1};
    const cs_dtype dtypes[] = {CS_DTYPE_F64, CS_DTYPE_F32};
    const int archs[] = {80, 90};
    /* strict mode's kernels (run-time index checks) once each: f32, full, unroll 1, sm_90 */
    compile_job *jobs = calloc((size_t)n_envs * (3 * 2 * 2 * 2 + 1), sizeof *jobs);
    int n = 0, dumped = 0, strict_differs = 0;
    for (int d = 0; d < 2; d++)
        for (int f = 0; f < 3; f++)
            for (int e = 0; e < n_envs; e++)
                for (int u = 0; u < 2; u++)
                    for (int strict = 0; strict < 2; strict++) {
                        bool plain = fusions[f] == CS_FUSION_FULL && unrolls[u] == 1 && dtypes[d] == CS_DTYPE_F32;
                        bool every = every_schedule(envs[e]) && !strict;   /* else f32, full, unroll 1, sm_90 only */
                        if (!every && !plain)
                            continue;
                        cs_config cfg;
                        cs_config_init(&cfg);
                        cfg.env = envs[e];
                        cfg.fusion = fusions[f];
                        cfg.unroll = unrolls[u];
                        cfg.dtype = dtypes[d];
                        cfg.strict = strict;
                        char *text = NULL, error[1024];
                        cs_status s = cs_dump(&cfg, NULL, "cuda", &text, error, sizeof error);
                        cr_assert_eq(s, CS_OK, "%s %s unroll %d%s: %s", envs[e], cs_fusion_name(fusions[f]), unrolls[u],
                                     strict ? " strict" : "", error);
                        dumped++;
                        const char *body = strchr(text, '\n') ? strchr(text, '\n') + 1 : text;
                        for (int a = every ? 0 : 1; a < 2; a++) {
                            compile_job *j = &jobs[n++];
                            snprintf(j->what, sizeof j->what, "%.600s, fusion %s, unroll %d, %s, sm_%d%s", envs[e],
                                     cs_fusion_name(fusions[f]), unrolls[u], d ? "f32" : "f64", archs[a],
                                     strict ? ", strict" : "");
                            j->source = a == 0 || !every ? text : jobs[n - 2].source;
                            j->body = body;
                            j->arch = archs[a];
                            j->entry = fusions[f] == CS_FUSION_FULL ? "cs_kernel_rollout" : "cs_rollout_k0";
                            for (int o = 0; o < n - 1 && !j->duplicate; o++)
                                j->duplicate = jobs[o].arch == j->arch && !strcmp(jobs[o].body, j->body);
                            strict_differs += strict && !j->duplicate;
                        }
                    }
    const char *fresh = getenv("CARTSIM_TEST_CUDA_FRESH");
    compile_pool pool = {jobs, n, 0, PTHREAD_MUTEX_INITIALIZER, nv, fresh && !strcmp(fresh, "1")};
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cores < 1 ? 1 : cores > 8 ? 8 : (int)cores;
    pthread_t tid[8];
    for (int t = 0; t < threads; t++)
        cr_assert_eq(pthread_create(&tid[t], NULL, compile_worker, &pool), 0);
    for (int t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    int compiled = 0, cached = 0, failed = 0, duplicates = 0;
    for (int k = 0; k < n; k++) {
        compile_job *j = &jobs[k];
        if (j->duplicate) {
            duplicates++;
            continue;
        }
        cr_expect_eq(j->rc, 0, "%s: %s", j->what, j->err);
        if (j->rc == 0)
            cr_expect(j->has_symbols, "%s: entry points or exported constants missing from the cubin", j->what);
        failed += j->rc != 0 || !j->has_symbols;
        compiled += j->rc == 0 && !j->cache_hit;
        cached += j->rc == 0 && j->cache_hit;
        free(j->err);
    }
    for (int k = 0; k < n; k++)   /* an sm_90 job shares its sm_80 twin's source */
        if (k == 0 || jobs[k].source != jobs[k - 1].source)
            free(jobs[k].source);
    free(jobs);
    fprintf(stderr, "cuda_nvrtc: %d sources, %d kernels for sm_80 and sm_90: %d compiled, %d from the cache, "
                    "%d the same source again, %d failed (%d threads); %d strict kernels differ from their plain ones\n",
            dumped, n, compiled, cached, duplicates, failed, threads, strict_differs);
    cr_assert_eq(failed, 0, "%d of %d compiles failed", failed, n - duplicates);
    /* the environments with run-time indices (Taxi, Breakout, the grids, ...) check them in strict mode */
    cr_assert_geq(strict_differs, 10, "only %d strict kernels differ from their plain ones", strict_differs);
    cs_nvrtc_close(nv);
}

/* The actor-critic policy (shared weights, records, sampling) in the CUDA
 * dialect: NVRTC compiles it for every fusion mode and both dtypes. */
Test(cuda_nvrtc, compiles_the_actor_critic_policy)
{
    dialect_or_skip();
    cs_nvrtc *nv = nvrtc_or_skip();
    const char *const envs[] = {"cartpole", "pendulum"};
    const cs_fusion fusions[] = {CS_FUSION_FULL, CS_FUSION_RULES};
    for (int e = 0; e < 2; e++)
        for (int f = 0; f < 2; f++)
            for (int d = 0; d < 2; d++) {
                cs_config cfg;
                cs_config_init(&cfg);
                cfg.env = envs[e];
                cfg.policy = "ppo:mlp:4";
                cfg.fusion = fusions[f];
                cfg.dtype = d ? CS_DTYPE_F64 : CS_DTYPE_F32;
                char *text = NULL, error[8192];
                cr_assert_eq(cs_dump(&cfg, NULL, "cuda", &text, error, sizeof error), CS_OK, "%s", error);
                /* slot 0 read at element 0: alone, or the first of a layer's array */
                cr_assert(strstr(text, "L.record[") && (strstr(text, "L.params[0])[0]") || strstr(text, "L.params[0 + (")),
                          "%s: no records or shared weights", envs[e]);
                cr_assert(!strstr(text, "L.params[0])[lane]") && !strstr(text, "L.params[0 + (e_)])[lane]"),
                          "%s: shared weights read per lane", envs[e]);
                cs_cache cache = {.dir = ""};
                cs_cubin bin;
                cr_assert_eq(cs_cuda_compile(nv, text, 90, CS_CUDA_FMAD, &cache, &bin, error, sizeof error), 0, "%s %s %s: %s",
                             envs[e], cs_fusion_name(fusions[f]), d ? "f64" : "f32", error);
                cs_cubin_free(&bin);
                free(text);
            }
    cs_nvrtc_close(nv);
}

Test(cuda_nvrtc, cubin_dump_needs_no_gpu)
{
    dialect_or_skip();
    cs_nvrtc *nv = nvrtc_or_skip();
    cs_nvrtc_close(nv);
    cs_config cfg;
    cs_config_init(&cfg);
    void *cubin = NULL;
    size_t size = 0;
    char error[1024];
    cr_assert_eq(cs_dump_cubin(&cfg, "sm_90", &cubin, &size, error, sizeof error), CS_OK, "%s", error);
    cr_assert_gt(size, 64);
    cr_assert_eq(memcmp(cubin, "\177ELF", 4), 0);
    free(cubin);
    cr_assert_eq(cs_dump_cubin(&cfg, "sm_nine", &cubin, &size, error, sizeof error), CS_ERR_ARGUMENT);
    cr_assert(strstr(error, "sm_nine"), "%s", error);
    char *text = NULL;
    cr_assert_eq(cs_dump(&cfg, NULL, "cubin", &text, error, sizeof error), CS_ERR_ARGUMENT);
}

/* ---- host: the CUDA dialect as host C, against the cpu backend ---- */

typedef struct {
    long long n;
    unsigned nc, np, no, ni;
    size_t rs;
    void **carried, **params, **inputs;
    int *segstep;
    const cs_program *p;
    float *obs, *final_obs;
    long long *obs_int, *final_obs_int;
    double *info, *final_info;
    double *reward, *seg_return, *return_sum;
    unsigned char *terminated, *truncated, *pending;
    long long *segments, *nonfinite;
    cs_lanes l;
} bufs;

static void bufs_init(bufs *b, const cs_program *p, long long n, unsigned long long seed)
{
    memset(b, 0, sizeof *b);
    b->n = n;
    b->p = p;
    b->nc = p->n_carried;
    b->np = p->n_params;
    b->no = p->n_obs;
    b->ni = p->n_inputs;
    b->rs = p->real == CS_F32 ? sizeof(float) : sizeof(double);
    b->carried = calloc(b->nc + 1, sizeof(void *));
    b->params = calloc(b->np + 1, sizeof(void *));
    b->inputs = calloc(b->ni + 1, sizeof(void *));
    for (unsigned k = 0; k < b->nc; k++)
        b->carried[k] = calloc((size_t)n, lanes_slot_size(p, k));
    for (unsigned k = 0; k < b->np; k++)   /* with the C rollout's pad lanes' room (lanes.h) */
        b->params[k] = calloc((size_t)n + CS_LANES_PAD, b->rs);
    for (unsigned k = 0; k < b->ni; k++)
        b->inputs[k] = calloc((size_t)n, 4);
    size_t no = b->no ? b->no : 1;
    b->segstep = calloc((size_t)n, sizeof(int));
    b->obs = calloc((size_t)n * no, sizeof(float));
    b->final_obs = calloc((size_t)n * no, sizeof(float));
    size_t noi = p->n_obs_int ? p->n_obs_int : 1, nin = p->n_info ? p->n_info : 1;
    b->obs_int = calloc((size_t)n * noi, sizeof(long long));
    b->final_obs_int = calloc((size_t)n * noi, sizeof(long long));
    b->info = calloc((size_t)n * nin, sizeof(double));
    b->final_info = calloc((size_t)n * nin, sizeof(double));
    b->reward = calloc((size_t)n, sizeof(double));
    b->seg_return = calloc((size_t)n, sizeof(double));
    b->return_sum = calloc((size_t)n, sizeof(double));
    b->terminated = calloc((size_t)n, 1);
    b->truncated = calloc((size_t)n, 1);
    b->pending = calloc((size_t)n, 1);
    b->segments = calloc((size_t)n, sizeof(long long));
    b->nonfinite = calloc((size_t)n, sizeof(long long));
    b->l = (cs_lanes){.begin = 0, .end = n, .seed = seed, .stride = n, .carried = b->carried, .params = b->params,
                      .segstep = b->segstep, .inputs = b->inputs, .obs = b->obs, .final_obs = b->final_obs,
                      .obs_int = b->obs_int, .final_obs_int = b->final_obs_int, .info = b->info,
                      .final_info = b->final_info, .reward = b->reward, .terminated = b->terminated, .truncated = b->truncated,
                      .pending = b->pending, .seg_return = b->seg_return, .segments = b->segments,
                      .return_sum = b->return_sum, .nonfinite = b->nonfinite};
}

static void bufs_free(bufs *b)
{
    for (unsigned k = 0; k < b->nc; k++)
        free(b->carried[k]);
    for (unsigned k = 0; k < b->np; k++)
        free(b->params[k]);
    for (unsigned k = 0; k < b->ni; k++)
        free(b->inputs[k]);
    free(b->carried);
    free(b->params);
    free(b->inputs);
    free(b->segstep);
    free(b->obs);
    free(b->final_obs);
    free(b->obs_int);
    free(b->final_obs_int);
    free(b->info);
    free(b->final_info);
    free(b->reward);
    free(b->seg_return);
    free(b->return_sum);
    free(b->terminated);
    free(b->truncated);
    free(b->pending);
    free(b->segments);
    free(b->nonfinite);
}

/* f64: every bit; f32: within tol relative (and the counters exactly). */
static void bufs_compare(const bufs *a, const bufs *b, double tol, const char *what)
{
    for (unsigned k = 0; k < a->nc; k++) {
        size_t z = lanes_slot_size(a->p, k);
        if (tol == 0 || z != a->rs) {   /* ints and bools exactly, always */
            cr_assert_eq(memcmp(a->carried[k], b->carried[k], (size_t)a->n * z), 0, "%s: state %u differs", what, k);
            continue;
        }
        for (long long i = 0; i < a->n; i++) {
            double x = a->rs == 4 ? ((float *)a->carried[k])[i] : ((double *)a->carried[k])[i];
            double y = b->rs == 4 ? ((float *)b->carried[k])[i] : ((double *)b->carried[k])[i];
            cr_assert(fabs(x - y) <= tol * fmax(1.0, fabs(x)), "%s: state %u lane %lld: %.9g vs %.9g", what, k, i, x,
                      y);
        }
    }
    for (unsigned k = 0; k < a->np; k++)
        for (long long i = 0; i < a->n && tol == 0; i++)
            cr_assert_eq(memcmp(a->params[k], b->params[k], (size_t)a->n * a->rs), 0, "%s: param %u differs", what, k);
    cr_assert_eq(memcmp(a->obs_int, b->obs_int, (size_t)a->n * a->p->n_obs_int * sizeof(long long)), 0,
                 "%s: discrete observations differ", what);
    cr_assert_eq(memcmp(a->segstep, b->segstep, (size_t)a->n * sizeof(int)), 0, "%s: episode steps differ", what);
    cr_assert_eq(memcmp(a->segments, b->segments, (size_t)a->n * sizeof(long long)), 0, "%s: episodes differ", what);
    cr_assert_eq(memcmp(a->nonfinite, b->nonfinite, (size_t)a->n * sizeof(long long)), 0, "%s: nonfinite differ",
                 what);
    for (long long i = 0; i < a->n; i++) {
        double x = a->return_sum[i], y = b->return_sum[i], r = a->seg_return[i], s = b->seg_return[i];
        if (tol == 0) {
            cr_assert_eq(memcmp(&x, &y, sizeof x), 0, "%s: return sum of lane %lld: %.17g vs %.17g", what, i, x, y);
            cr_assert_eq(memcmp(&r, &s, sizeof r), 0, "%s: running return of lane %lld: %.17g vs %.17g", what, i, r,
                         s);
        } else {
            cr_assert(fabs(x - y) <= 1e-4 * fmax(1.0, fabs(x)), "%s: return sum of lane %lld: %g vs %g", what, i, x,
                      y);
            cr_assert(fabs(r - s) <= 1e-4 * fmax(1.0, fabs(r)), "%s: running return of lane %lld: %g vs %g", what, i,
                      r, s);
        }
    }
}

static void cpu_rollout(const cs_program *p, bufs *b, long long steps)
{
    char *src = emit(p, CS_FUSION_FULL, 1, CS_DIALECT_C);
    cs_cache cache = {.dir = ""};
    cs_cpu_kernel k;
    char err[1024];
    cr_assert_eq(cs_cpu_compile(src, NULL, 0, NULL, &cache, &k, err, sizeof err), 0, "%s", err);
    free(src);
    b->l.t = 0;
    k.restart(&b->l);
    b->l.steps = steps;
    k.rollout(&b->l);
    cs_cpu_unload(&k);
}

typedef enum { RUN_PERSISTENT, RUN_CHUNKED, RUN_PER_STEP } run_kind;

/* The CUDA dialect's rollout through the shim, launched as the runtime
 * launches it: once (persistent), in chunks of `unroll` steps, or every
 * kernel of every step (rules/none) with the scratch between them. */
static void shim_rollout(const cs_program *p, cs_fusion pol, int unroll, run_kind kind, bufs *b, long long steps,
                         unsigned grid, unsigned block)
{
    char *src = emit(p, pol, unroll, CS_DIALECT_CUDA);
    char shim[600], err[2048];
    shim_path(shim, sizeof shim);
    host_module m;
    cr_assert_eq(host_build(src, shim, &m, err, sizeof err), 0, "%s (%s unroll %d)", err, cs_fusion_name(pol),
                 unroll);
    free(src);
    const unsigned *kps = dlsym(m.handle, "cs_kernels_per_step");
    const unsigned *spl = dlsym(m.handle, "cs_scratch_bytes_per_lane");
    cr_assert(kps && spl, "the exported constants are missing");
    cs_plan plan;
    cr_assert_eq(cs_plan_build(p, pol, &plan), 0);
    cr_assert_eq(*kps, plan.roll.n_kernels, "cs_kernels_per_step %u, the partition has %u", *kps,
                 plan.roll.n_kernels);
    cs_plan_free(&plan);
    b->l.t = 0;
    cr_assert_eq(host_launch(&m, dlsym(m.handle, "cs_kernel_restart"), false, grid, block, &b->l, NULL), 0);
    if (kind == RUN_PER_STEP) {
        char *scratch = calloc((size_t)*spl * (size_t)b->n + 1, 1);
        void *fns[4096];
        cr_assert_leq(*kps, 4096);
        for (unsigned k = 0; k < *kps; k++) {
            char name[32];
            snprintf(name, sizeof name, "cs_rollout_k%u", k);
            cr_assert(fns[k] = dlsym(m.handle, name), "%s missing", name);
        }
        for (long long s = 0; s < steps; s++) {
            cs_lanes l = b->l;
            l.t = s;
            l.steps = 1;
            for (unsigned k = 0; k < *kps; k++)
                host_launch(&m, fns[k], true, grid, block, &l, scratch);
        }
        free(scratch);
    } else {
        void *fn = dlsym(m.handle, "cs_kernel_rollout");
        cr_assert(fn, "cs_kernel_rollout missing");
        long long chunk = kind == RUN_PERSISTENT ? steps : unroll;
        for (long long s = 0; s < steps; s += chunk) {
            cs_lanes l = b->l;
            l.t = s;
            l.steps = steps - s < chunk ? steps - s : chunk;
            host_launch(&m, fn, false, grid, block, &l, NULL);
        }
    }
    host_unload(&m);
}

static void host_matches_cpu(cs_type real, double tol, long long steps)
{
    dialect_or_skip();
    char envs[64][700];
    int n_envs = list_envs(envs, 64);
    struct {
        cs_fusion pol;
        int unroll;
        run_kind kind;
        const char *what;
    } runs[] = {
        {CS_FUSION_FULL, 1, RUN_PERSISTENT, "full, persistent"},
        {CS_FUSION_FULL, 10, RUN_PERSISTENT, "full, unroll 10, persistent"},
        {CS_FUSION_FULL, 10, RUN_CHUNKED, "full, unroll 10, 10 steps per launch"},
        {CS_FUSION_FULL, 1, RUN_CHUNKED, "full, one step per launch"},
        {CS_FUSION_RULES, 1, RUN_PER_STEP, "rules"},
        {CS_FUSION_NONE, 1, RUN_PER_STEP, "none"},
    };
    const long long n = 300;   /* not a multiple of any block */
    for (int e = 0; e < n_envs; e++) {
        cs_program *ref_prog = load_program(envs[e], real, CS_FUSION_FULL);
        bufs ref;
        bufs_init(&ref, ref_prog, n, 1234);
        cpu_rollout(ref_prog, &ref, steps);
        long long episodes = 0;
        for (long long i = 0; i < n; i++)
            episodes += ref.segments[i];
        for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
            if (!every_schedule(envs[e]) && r != 1 && r != 4)   /* unroll 10 persistent, and rules */
                continue;
            cs_program *p = runs[r].pol == CS_FUSION_FULL ? ref_prog : load_program(envs[e], real, runs[r].pol);
            bufs got;
            bufs_init(&got, p, n, 1234);
            /* 3 blocks of 32 threads: every thread walks several lanes */
            shim_rollout(p, runs[r].pol, runs[r].unroll, runs[r].kind, &got, steps, 3, 32);
            char what[1000];
            snprintf(what, sizeof what, "%.700s (%s), %s", envs[e], real == CS_F32 ? "f32" : "f64", runs[r].what);
            bufs_compare(&ref, &got, tol, what);
            bufs_free(&got);
            if (p != ref_prog)
                cs_program_free(p);
        }
        fprintf(stderr, "cuda_host: %s %s matches the cpu backend (%lld episodes in %lld steps)\n", envs[e],
                real == CS_F32 ? "f32" : "f64", episodes, steps);
        bufs_free(&ref);
        cs_program_free(ref_prog);
    }
}

Test(cuda_host, f64_rollouts_equal_the_cpu_backend_bit_for_bit)
{
    host_matches_cpu(CS_F64, 0, 257);
}

/* f32 too: both dialects call mathf.h's functions (not CUDA's sinf). */
Test(cuda_host, f32_rollouts_equal_the_cpu_backend_bit_for_bit)
{
    host_matches_cpu(CS_F32, 0, 60);
}

/* The step entry, both auto-reset conventions, against the cpu's step. */
/* Records and shared parameters (jit/program.h) in the CUDA dialect: a
 * CartPole that records an observation, its action, the reward, the next
 * state's angle and a value of a shared parameter writes, through the shim,
 * the rows and state the cpu backend writes, in every launch schedule. The
 * shared parameter's other elements hold NaN: only element 0 may be read. */
enum { SREC_OBS, SREC_ACTION, SREC_REWARD, SREC_ANGLE, SREC_SCALED, N_SREC };

static cs_program *recording_program(cs_type real, cs_fusion pol)
{
    char path[700];
    snprintf(path, sizeof path, "%s/envs/cartpole.env", root());
    size_t len;
    char *src = read_text(path, &len);
    cs_program *p = NULL;
    char err[1024];
    cr_assert_eq(cs_parse(src, len, path, real, NULL, 0, &p, err, sizeof err), 0, "%s", err);
    free(src);
    cs_graph *g = p->graph;
    int scale = cs_program_add_shared_param(p, "scale", real);
    cr_assert_geq(scale, 0);
    cs_node scaled = cs_binary(g, CS_OP_MUL, p->obs_items[1].node, cs_leaf(g, CS_OP_PARAM, real, scale));
    cr_assert_eq(cs_program_add_record(p, "obs0", p->obs_items[0].node), SREC_OBS);
    cr_assert_eq(cs_program_add_record(p, "action", cs_leaf(g, CS_OP_INPUT, CS_I32, 0)), SREC_ACTION);
    cr_assert_eq(cs_program_add_record(p, "reward", p->reward), SREC_REWARD);
    cr_assert_eq(cs_program_add_record(p, "angle", p->obs_items[2].next), SREC_ANGLE);
    cr_assert_eq(cs_program_add_record(p, "scaled", scaled), SREC_SCALED);
    cr_assert_eq(cs_policy_random(p), 0);
    cr_assert_eq(cs_program_bind_policy(p), 0);
    cr_assert_eq(cs_optimize(p, pol, NULL, err, sizeof err), 0, "%s", err);
    return p;
}

typedef struct {
    void *rows[N_SREC];
    size_t size;
} srecords;

static void srecords_init(srecords *r, bufs *b, long long steps)
{
    r->size = (size_t)(steps * b->n);
    for (int k = 0; k < N_SREC; k++)
        r->rows[k] = calloc(r->size, 4);
    b->l.record = r->rows;
    b->l.record_t0 = 0;
    for (long long i = 0; i < b->n; i++) {   /* the shared scale is 0.5 at element 0 */
        double v = i ? NAN : 0.5;
        if (b->rs == 4)
            ((float *)b->params[0])[i] = (float)v;
        else
            ((double *)b->params[0])[i] = v;
    }
}

static void srecords_free(srecords *r)
{
    for (int k = 0; k < N_SREC; k++)
        free(r->rows[k]);
}

Test(cuda_host, records_and_shared_parameters_as_the_cpu_backend)
{
    dialect_or_skip();
    const cs_type reals[] = {CS_F64, CS_F32};
    const long long n = 300, steps = 45;
    for (int t = 0; t < 2; t++) {
        cs_program *ref_prog = recording_program(reals[t], CS_FUSION_FULL);
        bufs ref;
        srecords rref;
        bufs_init(&ref, ref_prog, n, 77);
        srecords_init(&rref, &ref, steps);
        cpu_rollout(ref_prog, &ref, steps);
        const float *scaled = rref.rows[SREC_SCALED];
        for (long long i = 0; i < steps * n; i++)
            cr_assert(!isnan(scaled[i]), "row %lld read a lane's own element of the shared parameter", i);
        struct {
            cs_fusion pol;
            int unroll;
            run_kind kind;
        } runs[] = {{CS_FUSION_FULL, 1, RUN_PERSISTENT}, {CS_FUSION_FULL, 4, RUN_CHUNKED},
                    {CS_FUSION_RULES, 1, RUN_PER_STEP}, {CS_FUSION_NONE, 1, RUN_PER_STEP}};
        for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
            cs_program *p = r == 0 ? ref_prog : recording_program(reals[t], runs[r].pol);
            bufs got;
            srecords rgot;
            bufs_init(&got, p, n, 77);
            srecords_init(&rgot, &got, steps);
            shim_rollout(p, runs[r].pol, runs[r].unroll, runs[r].kind, &got, steps, 3, 32);
            char what[128];
            snprintf(what, sizeof what, "%s, %s unroll %d", reals[t] == CS_F32 ? "f32" : "f64",
                     cs_fusion_name(runs[r].pol), runs[r].unroll);
            bufs_compare(&ref, &got, 0, what);
            for (int k = 0; k < N_SREC; k++)
                cr_assert_eq(memcmp(rref.rows[k], rgot.rows[k], rref.size * 4), 0, "%s: record %d differs", what, k);
            srecords_free(&rgot);
            bufs_free(&got);
            if (p != ref_prog)
                cs_program_free(p);
        }
        srecords_free(&rref);
        bufs_free(&ref);
        cs_program_free(ref_prog);
    }
}

Test(cuda_host, f64_steps_equal_the_cpu_backend)
{
    dialect_or_skip();
    char envs[64][700];
    int n_envs = list_envs(envs, 64);
    const int modes[] = {CS_MODE_NEXT_STEP, CS_MODE_SAME_STEP, CS_MODE_NO_RESTART};
    for (int e = 0; e < n_envs; e++) {
        cs_program *p = load_program(envs[e], CS_F64, CS_FUSION_FULL);
        char *csrc = emit(p, CS_FUSION_FULL, 1, CS_DIALECT_C), *cuda = emit(p, CS_FUSION_FULL, 1, CS_DIALECT_CUDA);
        cs_cache cache = {.dir = ""};
        cs_cpu_kernel k;
        host_module m;
        char err[2048], shim[600];
        shim_path(shim, sizeof shim);
        cr_assert_eq(cs_cpu_compile(csrc, NULL, 0, NULL, &cache, &k, err, sizeof err), 0, "%s", err);
        cr_assert_eq(host_build(cuda, shim, &m, err, sizeof err), 0, "%s", err);
        void *restart = dlsym(m.handle, "cs_kernel_restart"), *step = dlsym(m.handle, "cs_kernel_step");
        cr_assert(restart && step);
        for (int md = 0; md < 3; md++) {
            bufs a, b;
            bufs_init(&a, p, 77, 99);
            bufs_init(&b, p, 77, 99);
            k.restart(&a.l);
            host_launch(&m, restart, false, 2, 16, &b.l, NULL);
            for (long long t = 0; t < 120; t++) {
                for (unsigned c = 0; c < p->n_inputs; c++)
                    for (long long i = 0; i < 77; i++) {
                        unsigned h = (unsigned)(i * 2654435761u + (unsigned long long)t * 40503u + c);
                        if (p->inputs[c].type == CS_I32)
                            ((int *)a.inputs[c])[i] = ((int *)b.inputs[c])[i] = (int)(h % p->n_actions);
                        else
                            ((float *)a.inputs[c])[i] = ((float *)b.inputs[c])[i] =
                                (float)(p->input_low[c] + (p->input_high[c] - p->input_low[c]) * (h % 1000) / 999.0);
                    }
                a.l.t = b.l.t = t;
                a.l.mode = b.l.mode = modes[md];
                k.step(&a.l);
                host_launch(&m, step, false, 2, 16, &b.l, NULL);
                size_t no = (size_t)(p->n_obs ? p->n_obs : 1) * 77;
                cr_assert_eq(memcmp(a.obs, b.obs, no * sizeof(float)), 0, "%s mode %d step %lld: obs differ", envs[e],
                             modes[md], t);
                cr_assert_eq(memcmp(a.reward, b.reward, 77 * sizeof(double)), 0, "%s step %lld: rewards differ",
                             envs[e], t);
                cr_assert_eq(memcmp(a.terminated, b.terminated, 77), 0, "%s step %lld: terminated differ", envs[e], t);
                cr_assert_eq(memcmp(a.truncated, b.truncated, 77), 0, "%s step %lld: truncated differ", envs[e], t);
                cr_assert_eq(memcmp(a.pending, b.pending, 77), 0, "%s step %lld: pending differ", envs[e], t);
                if (modes[md] == CS_MODE_SAME_STEP)
                    cr_assert_eq(memcmp(a.final_obs, b.final_obs, no * sizeof(float)), 0,
                                 "%s step %lld: final obs differ", envs[e], t);
            }
            a.l.steps = b.l.steps = 0;
            bufs_compare(&a, &b, 0, envs[e]);
            bufs_free(&a);
            bufs_free(&b);
        }
        host_unload(&m);
        cs_cpu_unload(&k);
        free(csrc);
        free(cuda);
        cs_program_free(p);
    }
}

/* ---- fake: the runtime against the fake driver ---- */

static char fake_lib[700], fake_dir[600];

/* The fake stays loaded to the end of the test's process: its files go then. */
static void remove_fake(void)
{
    unlink(fake_lib);
    rmdir(fake_dir);
}

enum { C_LAUNCHES, C_DTOH, C_DTOH_BYTES, C_HTOD, C_HTOD_BYTES, C_LIVE, C_NO_CONTEXT, C_DEPTH, C_BAD, C_COUNT };

/* Builds this file as the fake libcuda/libnvrtc and points the library at it. */
static void use_fake_driver(void)
{
    dialect_or_skip();
    const char *tmp = getenv("TMPDIR");
    char dir[600];
    snprintf(dir, sizeof dir, "%s/cartsim-fakecuda-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    cr_assert(mkdtemp(dir));
    char src[700], inc[700], shim_def[800], log[700];
    snprintf(src, sizeof src, "%s/tests/test_cuda.c", root());
    snprintf(inc, sizeof inc, "-I%s/jit", root());
    char shim[600];
    shim_path(shim, sizeof shim);
    snprintf(shim_def, sizeof shim_def, "-DFAKE_SHIM=\"%s\"", shim);
    snprintf(fake_lib, sizeof fake_lib, "%s/libfakecuda.so", dir);
    snprintf(log, sizeof log, "%s/cc.log", dir);
    const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
    char *argv[] = {(char *)cc, "-std=c11", "-D_GNU_SOURCE", "-O1", "-g", "-fPIC", "-shared", "-Wall", "-Wextra",
                    "-Wno-unused-parameter", "-DCS_FAKE_CUDA", shim_def, inc, "-o", fake_lib, src, "-ldl", "-lm",
                    NULL};
    if (spawn_wait(argv, log)) {
        char head[3000];
        file_head(log, head, sizeof head);
        cr_assert_fail("building the fake driver failed: %s", head);
    }
    unlink(log);
    snprintf(fake_dir, sizeof fake_dir, "%s", dir);
    atexit(remove_fake);
    setenv("CARTSIM_CUDA_DRIVER", fake_lib, 1);
    setenv("CARTSIM_NVRTC", fake_lib, 1);
}

static void fake_counters(long long out[C_COUNT])
{
    void *h = dlopen(fake_lib, RTLD_NOW | RTLD_NOLOAD);
    cr_assert(h, "the fake driver is not loaded");
    void (*get)(long long *) = (void (*)(long long *))dlsym(h, "fake_cuda_counters");
    cr_assert(get);
    get(out);
    dlclose(h);
}

static cs_env *open_cfg(const cs_config *cfg)
{
    cs_env *env;
    cs_status s = cs_env_open(cfg, &env);
    cr_assert_eq(s, CS_OK, "open (%s): %s", cs_backend_name(cfg->backend), cs_env_error(env));
    return env;
}

static void base_cfg(cs_config *cfg, const char *env, cs_backend b, cs_fusion f, int unroll, int64_t n)
{
    cs_config_init(cfg);
    cfg->env = env;
    cfg->backend = b;
    cfg->fusion = f;
    cfg->unroll = unroll;
    cfg->num_envs = n;
    cfg->dtype = CS_DTYPE_F64;
    cfg->no_cache = true;
}

static void check_clean(void)
{
    long long c[C_COUNT];
    fake_counters(c);
    cr_assert_eq(c[C_NO_CONTEXT], 0, "%lld driver calls without a current context", c[C_NO_CONTEXT]);
    cr_assert_eq(c[C_DEPTH], 0, "context pushes and pops unbalanced (%lld)", c[C_DEPTH]);
    cr_assert_eq(c[C_BAD], 0, "%lld copies or launches outside device memory", c[C_BAD]);
}

Test(cuda_fake, rollouts_equal_the_cpu_backend_with_the_launches_counted)
{
    use_fake_driver();
    char envs[64][700];
    int n_envs = list_envs(envs, 64);
    for (int e = 0; e < n_envs; e++) {
        cs_config cfg;
        base_cfg(&cfg, envs[e], CS_BACKEND_CPU, CS_FUSION_FULL, 1, 500);
        cs_env *cpu = open_cfg(&cfg);
        cs_rollout_stats ref;
        cr_assert_eq(cs_env_reset(cpu, 11), CS_OK);
        cr_assert_eq(cs_env_rollout(cpu, 95, &ref), CS_OK);
        cs_env_close(cpu);
        struct {
            cs_fusion f;
            int unroll;
            bool persistent;
            long long launches;
        } runs[] = {
            {CS_FUSION_FULL, 1, true, 1},
            {CS_FUSION_FULL, 10, true, 1},
            {CS_FUSION_FULL, 10, false, 10},   /* ceil(95 / 10) */
            {CS_FUSION_FULL, 1, false, 95},
            {CS_FUSION_RULES, 1, true, -1},    /* steps x kernels per step */
            {CS_FUSION_NONE, 1, true, -1},
            {CS_FUSION_RULES, 10, false, -1},  /* persistent or not: every kernel, every step */
        };
        for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
            if (!every_schedule(envs[e]) && r != 2)   /* chunked launches */
                continue;
            base_cfg(&cfg, envs[e], CS_BACKEND_CUDA, runs[r].f, runs[r].unroll, 500);
            cfg.persistent = runs[r].persistent;
            cs_env *gpu = open_cfg(&cfg);
            cs_env_info info;
            cr_assert_eq(cs_env_get_info(gpu, &info), CS_OK);
            cr_assert_eq(info.backend, CS_BACKEND_CUDA);
            cr_assert_str_eq(info.device, "cartsim fake GPU");
            cr_assert_eq(info.sm_count, 4);
            cr_assert_eq(info.arch, 90);
            cr_assert_eq(info.block, 256);
            cr_assert_eq(info.registers, 40);
            cr_assert_eq(info.spill_bytes, 0);
            cr_assert_eq(info.persistent, runs[r].f == CS_FUSION_FULL && runs[r].persistent);
            long long before[C_COUNT], after[C_COUNT];
            cs_rollout_stats got;
            cr_assert_eq(cs_env_reset(gpu, 11), CS_OK, "%s", cs_env_error(gpu));
            fake_counters(before);
            cr_assert_eq(cs_env_rollout(gpu, 95, &got), CS_OK, "%s", cs_env_error(gpu));
            fake_counters(after);
            long long expect = runs[r].launches < 0 ? 95LL * info.kernels_per_step : runs[r].launches;
            cr_assert_eq(got.launches, expect, "%s %s unroll %d: %lld launches, expected %lld", envs[e],
                         cs_fusion_name(runs[r].f), runs[r].unroll, (long long)got.launches, expect);
            /* The interpreter counts the same launches (calls of its rollout
             * entry under fusion full); the cpu's are in test_api.c. */
            cfg.backend = CS_BACKEND_INTERP;
            cs_env *twin = open_cfg(&cfg);
            cs_rollout_stats mine;
            cr_assert_eq(cs_env_reset(twin, 11), CS_OK);
            cr_assert_eq(cs_env_rollout(twin, 95, &mine), CS_OK);
            cr_assert_eq(mine.launches, expect, "%s %s unroll %d, interp: %lld launches, expected %lld", envs[e],
                         cs_fusion_name(runs[r].f), runs[r].unroll, (long long)mine.launches, expect);
            cr_assert_eq(mine.checksum, ref.checksum);
            cs_env_close(twin);
            cr_assert_eq(after[C_LAUNCHES] - before[C_LAUNCHES], expect, "the driver saw %lld launches",
                         after[C_LAUNCHES] - before[C_LAUNCHES]);
            cr_assert_eq(got.checksum, ref.checksum, "%s %s unroll %d: checksum %016llx, cpu %016llx", envs[e],
                         cs_fusion_name(runs[r].f), runs[r].unroll, (unsigned long long)got.checksum,
                         (unsigned long long)ref.checksum);
            cr_assert_eq(got.episodes, ref.episodes);
            cr_assert_eq(got.nonfinite, ref.nonfinite);
            cr_assert(got.mean_return == ref.mean_return || (isnan(got.mean_return) && isnan(ref.mean_return)));
            /* a second rollout continues where the first stopped */
            cs_rollout_stats more;
            cr_assert_eq(cs_env_rollout(gpu, 7, &more), CS_OK, "%s", cs_env_error(gpu));
            cs_env_close(gpu);
            check_clean();
        }
    }
    long long c[C_COUNT];
    fake_counters(c);
    cr_assert_eq(c[C_LIVE], 0, "%lld device allocations leaked", c[C_LIVE]);
}

Test(cuda_fake, block_size_and_chunking_never_change_a_result)
{
    use_fake_driver();
    unsigned long long first = 0;
    const int blocks[] = {64, 128, 256, 1, 1000};
    for (int b = 0; b < 5; b++)
        for (int persistent = 0; persistent < 2; persistent++) {
            cs_config cfg;
            base_cfg(&cfg, "cartpole", CS_BACKEND_CUDA, CS_FUSION_FULL, 4, 333);
            cfg.block = blocks[b];
            cfg.persistent = persistent;
            cs_env *env = open_cfg(&cfg);
            cs_env_info info;
            cs_env_get_info(env, &info);
            cr_assert_eq(info.block, blocks[b]);
            cs_rollout_stats s;
            cs_env_reset(env, 5);
            cr_assert_eq(cs_env_rollout(env, 30, &s), CS_OK, "%s", cs_env_error(env));
            cr_assert_eq(cs_env_rollout(env, 31, &s), CS_OK, "%s", cs_env_error(env));
            if (!first)
                first = s.checksum;
            cr_assert_eq(s.checksum, first, "block %d, persistent %d", blocks[b], persistent);
            cs_env_close(env);
        }
    cs_config cfg;
    base_cfg(&cfg, "cartpole", CS_BACKEND_CUDA, CS_FUSION_FULL, 1, 8);
    cfg.block = 1025;
    cs_env *env;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_ERR_ARGUMENT);
    cs_env_close(env);
    check_clean();
}

/* The step API: the same observations, rewards and flags as the cpu, and
 * only what the caller reads comes back from the device, once. */
Test(cuda_fake, steps_equal_the_cpu_and_copy_back_lazily)
{
    use_fake_driver();
    const cs_autoreset modes[] = {CS_AUTORESET_NEXT_STEP, CS_AUTORESET_SAME_STEP, CS_AUTORESET_DISABLED};
    const int64_t n = 40;
    for (int md = 0; md < 3; md++) {
        cs_config cfg;
        base_cfg(&cfg, "cartpole", CS_BACKEND_CPU, CS_FUSION_FULL, 1, n);
        cfg.autoreset = modes[md];
        cs_env *cpu = open_cfg(&cfg);
        cfg.backend = CS_BACKEND_CUDA;
        cs_env *gpu = open_cfg(&cfg);
        cs_env_info info;
        cs_env_get_info(gpu, &info);
        int64_t obs_n = (int64_t)info.obs_dim * n;
        cr_assert_eq(cs_env_reset(cpu, 3), CS_OK);
        cr_assert_eq(cs_env_reset(gpu, 3), CS_OK, "%s", cs_env_error(gpu));
        cr_assert_eq(memcmp(cs_env_obs(cpu), cs_env_obs(gpu), (size_t)obs_n * sizeof(float)), 0, "reset obs");
        int32_t actions[40];
        for (int t = 0; t < 150; t++) {
            for (int i = 0; i < n; i++)
                actions[i] = (int32_t)((i * 7 + t * 3 + (t >> 2)) & 1);
            cr_assert_eq(cs_env_step(cpu, actions), CS_OK);
            long long c0[C_COUNT], c1[C_COUNT], c2[C_COUNT], c3[C_COUNT];
            fake_counters(c0);
            cr_assert_eq(cs_env_step(gpu, actions), CS_OK, "%s", cs_env_error(gpu));
            fake_counters(c1);
            cr_assert_eq(c1[C_DTOH] - c0[C_DTOH], 0, "a step copies nothing back by itself");
            cr_assert_eq(c1[C_HTOD_BYTES] - c0[C_HTOD_BYTES], n * 4, "a step sends the actions only");
            const double *r = cs_env_rewards(gpu);
            fake_counters(c2);
            cr_assert_eq(c2[C_DTOH] - c1[C_DTOH], 1, "rewards: one copy");
            cr_assert_eq(c2[C_DTOH_BYTES] - c1[C_DTOH_BYTES], n * 8);
            cr_assert_eq(cs_env_rewards(gpu), r);
            fake_counters(c3);
            cr_assert_eq(c3[C_DTOH] - c2[C_DTOH], 0, "rewards asked twice: copied once");
            cr_assert_eq(memcmp(cs_env_rewards(cpu), r, n * sizeof(double)), 0, "step %d: rewards", t);
            cr_assert_eq(memcmp(cs_env_obs(cpu), cs_env_obs(gpu), (size_t)obs_n * sizeof(float)), 0, "step %d: obs",
                         t);
            cr_assert_eq(memcmp(cs_env_terminated(cpu), cs_env_terminated(gpu), n), 0, "step %d: terminated", t);
            cr_assert_eq(memcmp(cs_env_truncated(cpu), cs_env_truncated(gpu), n), 0, "step %d: truncated", t);
            if (modes[md] == CS_AUTORESET_SAME_STEP)
                cr_assert_eq(memcmp(cs_env_final_obs(cpu), cs_env_final_obs(gpu), (size_t)obs_n * sizeof(float)), 0,
                             "step %d: final obs", t);
        }
        double sa[4 * 40], sb[4 * 40];
        cr_assert_eq(cs_env_get_state(cpu, sa), CS_OK);
        cr_assert_eq(cs_env_get_state(gpu, sb), CS_OK, "%s", cs_env_error(gpu));
        cr_assert_eq(memcmp(sa, sb, sizeof sa), 0, "state after the steps");
        /* set_state reaches the device; a rollout continues from the steps */
        for (int i = 0; i < 4 * n; i++)
            sa[i] = 0.01 * (i % 7) - 0.03;
        int32_t steps_in[40] = {0};
        steps_in[3] = 499;
        cr_assert_eq(cs_env_set_state(cpu, sa, steps_in), CS_OK);
        cr_assert_eq(cs_env_set_state(gpu, sa, steps_in), CS_OK, "%s", cs_env_error(gpu));
        cs_rollout_stats a, b;
        cr_assert_eq(cs_env_rollout(cpu, 50, &a), CS_OK);
        cr_assert_eq(cs_env_rollout(gpu, 50, &b), CS_OK, "%s", cs_env_error(gpu));
        cr_assert_eq(a.checksum, b.checksum, "rollout after set_state (mode %d)", md);
        cr_assert_eq(a.episodes, b.episodes);
        cs_env_close(cpu);
        cs_env_close(gpu);
        check_clean();
    }
    /* next-step mode leaves lanes pending: a rollout restarts them first */
    cs_config cfg;
    base_cfg(&cfg, "cartpole", CS_BACKEND_CPU, CS_FUSION_FULL, 1, n);
    cs_env *cpu = open_cfg(&cfg);
    cfg.backend = CS_BACKEND_CUDA;
    cs_env *gpu = open_cfg(&cfg);
    cs_env_reset(cpu, 8);
    cs_env_reset(gpu, 8);
    int32_t ones[40];
    for (int i = 0; i < n; i++)
        ones[i] = 1;
    for (int t = 0; t < 30; t++) {
        cs_env_step(cpu, ones);
        cr_assert_eq(cs_env_step(gpu, ones), CS_OK);
    }
    cs_rollout_stats a, b;
    cs_env_rollout(cpu, 20, &a);
    cr_assert_eq(cs_env_rollout(gpu, 20, &b), CS_OK, "%s", cs_env_error(gpu));
    cr_assert_eq(a.checksum, b.checksum, "pending restarts before a rollout");
    cs_env_close(cpu);
    cs_env_close(gpu);
    check_clean();
}

/* The device runtime's kernel side for arrays and integers
 * (jit/cuda_driver.c): carried slots of their own types (double, int,
 * unsigned char) each in its place, the discrete observations' int64
 * buffers, and the replayed words of a restart and a step, uploaded when
 * given. A random array program with integer states and discrete
 * observations, through the fake driver, equals the interpreter. */
Test(cuda_fake, typed_slots_discrete_observations_and_replayed_words)
{
    use_fake_driver();
    char err[4096];
    cs_program *p = NULL;
    for (uint64_t seed = 1; seed < 200 && !p; seed++) {
        p = random_env_graph(seed, CS_F64, err, sizeof err);
        cr_assert(p, "%s", err);
        bool ints = false;
        for (unsigned k = 0; k < p->n_carried; k++)
            ints |= p->carried[k].type != CS_F64;
        if (!ints || !p->n_obs_int || !p->n_step_draws || !p->n_restart_draws) {
            cs_program_free(p);
            p = NULL;
        }
    }
    cr_assert(p, "no random program with integer states, discrete observations and draws");
    cr_assert_eq(cs_optimize(p, CS_FUSION_FULL, NULL, err, sizeof err), 0, "%s", err);
    cs_cuda *c = NULL;
    cr_assert_eq(cs_cuda_open(&c, 0, err, sizeof err), 0, "%s", err);
    cs_text src;
    cr_assert_eq(lanes_emit(p, CS_FUSION_FULL, 1, CS_DIALECT_CUDA, &src, err, sizeof err, NULL), 0, "%s", err);
    cs_cubin bin;
    cr_assert_eq(cs_cuda_compile(cs_cuda_nvrtc(c), src.data, 90, false, NULL, &bin, err, sizeof err), 0, "%s", err);
    cs_text_free(&src);
    cs_cuda_schedule sched = {CS_FUSION_FULL, 1, true, 32};
    cs_cuda_kernel_info info;
    cr_assert_eq(cs_cuda_load(c, &bin, &sched, &info, err, sizeof err), 0, "%s", err);
    cs_cubin_free(&bin);
    enum { N = 77 };
    size_t *bytes = malloc(p->n_carried * sizeof *bytes);
    for (unsigned k = 0; k < p->n_carried; k++)
        bytes[k] = lanes_slot_size(p, k);
    cs_lanes_layout lay = {.n = N, .n_carried = p->n_carried, .n_params = p->n_params, .n_obs = p->n_obs,
                           .n_inputs = p->n_inputs, .real_size = 8, .slot_size = bytes, .n_obs_int = p->n_obs_int,
                           .n_info = p->n_info, .n_step_draws = p->n_step_draws, .n_restart_draws = p->n_restart_draws};
    cr_assert_eq(cs_cuda_alloc(c, &lay, err, sizeof err), 0, "%s", err);
    free(bytes);   /* the driver keeps a copy */
    lanes_any ref, got;
    lanes_any_init(&ref, p, N, 9);
    lanes_any_init(&got, p, N, 9);
    uint64_t r = 3;
    for (long long w = 0; w < N * (long long)p->n_step_draws; w++)
        ref.step_words[w] = got.step_words[w] = (unsigned int)splitmix_next(&r);
    for (long long w = 0; w < N * (long long)p->n_restart_draws; w++)
        ref.restart_words[w] = got.restart_words[w] = (unsigned int)splitmix_next(&r);
    for (unsigned k = 0; k < p->n_inputs; k++)
        for (long long i = 0; i < N; i++)
            ((int *)ref.inputs[k])[i] = ((int *)got.inputs[k])[i] = p->inputs[k].type == CS_I32 ? (int)(i % 3) : 0;
    unsigned written = CS_BUF_ALL & ~CS_BUF_BIT(CS_BUF_INPUTS);   /* the observations carry the discrete ones */
    char why[600];
    /* a restart from the caller's words */
    ref.l.restart_words = ref.restart_words;
    got.l.restart_words = got.restart_words;
    cs_interp_restart(p, &ref.l);
    cr_assert_eq(cs_cuda_restart(c, &got.l, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cs_cuda_fetch(c, written, &got.l, err, sizeof err), 0, "%s", err);
    cr_assert(!lanes_any_differ(&ref, &got, true, why, sizeof why), "restart: %s", why);
    /* steps with the caller's words, restarting the next step (from them too) */
    for (long long t = 0; t < 30; t++) {
        ref.l.t = got.l.t = t;
        ref.l.mode = got.l.mode = CS_MODE_NEXT_STEP;
        ref.l.step_words = ref.step_words;
        got.l.step_words = got.step_words;
        cs_interp_step(p, &ref.l);
        cr_assert_eq(cs_cuda_step(c, &got.l, false, err, sizeof err), 0, "%s", err);
        cr_assert_eq(cs_cuda_fetch(c, written, &got.l, err, sizeof err), 0, "%s", err);
        cr_assert(!lanes_any_differ(&ref, &got, true, why, sizeof why), "step %lld: %s", t, why);
    }
    /* and a rollout (Philox's words) */
    ref.l.step_words = got.l.step_words = NULL;
    ref.l.restart_words = got.l.restart_words = NULL;
    ref.l.t = got.l.t = 30;
    ref.l.steps = got.l.steps = 40;
    cs_interp_rollout(p, &ref.l);
    cr_assert_eq(cs_cuda_rollout(c, &got.l, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cs_cuda_fetch(c, written, &got.l, err, sizeof err), 0, "%s", err);
    cr_assert(!lanes_any_differ(&ref, &got, false, why, sizeof why), "rollout: %s", why);
    lanes_any_free(&ref);
    lanes_any_free(&got);
    cs_cuda_close(c);
    cs_program_free(p);
    check_clean();
}

Test(cuda_fake, device_memory_is_checked_before_allocating)
{
    use_fake_driver();
    setenv("FAKE_CUDA_FREE", "100000", 1);
    cs_config cfg;
    base_cfg(&cfg, "cartpole", CS_BACKEND_CUDA, CS_FUSION_FULL, 1, 100000);
    cs_env *env;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_ERR_LIMIT, "%s", cs_env_error(env));
    cr_assert(strstr(cs_env_error(env), "device memory"), "%s", cs_env_error(env));
    cr_assert(strstr(cs_env_error(env), "cartsim fake GPU"), "%s", cs_env_error(env));
    cs_env_close(env);
    cfg.num_envs = 100;
    env = open_cfg(&cfg);
    cs_env_close(env);
    long long c[C_COUNT];
    fake_counters(c);
    cr_assert_eq(c[C_LIVE], 0);
    check_clean();
}

Test(cuda_fake, a_spilling_kernel_is_rebuilt_at_a_lower_unroll)
{
    use_fake_driver();
    /* A stack frame (every real kernel calling sinf has one) is not a spill. */
    cs_config cfg;
    base_cfg(&cfg, "cartpole", CS_BACKEND_CUDA, CS_FUSION_FULL, 10, 64);
    cs_env *env = open_cfg(&cfg);
    cs_env_info info;
    cs_env_get_info(env, &info);
    cr_assert_eq(info.unroll, 10);
    cr_assert_eq(info.spill_bytes, 0);
    cr_assert_eq(info.local_bytes, 32);
    cr_assert(!info.notice || !strstr(info.notice, "spill"), "%s", info.notice);
    cs_env_close(env);
    setenv("FAKE_CUDA_SPILL_ABOVE", "2", 1);   /* unroll 10 and 5 spill, 2 does not */
    env = open_cfg(&cfg);
    cs_env_get_info(env, &info);
    cr_assert_eq(info.unroll, 2);
    cr_assert_eq(info.spill_bytes, 0);
    cr_assert_eq(info.local_bytes, 32);
    cr_assert_str_eq(info.notice, "the unroll-10 kernel spills 96 bytes per thread: unroll lowered to 2 (0 bytes)");
    cs_env_close(env);
    setenv("FAKE_CUDA_SPILL_ABOVE", "0", 1);   /* spills even at unroll 1 */
    env = open_cfg(&cfg);
    cs_env_get_info(env, &info);
    cr_assert_eq(info.unroll, 1);
    cr_assert_eq(info.spill_bytes, 96);
    cr_assert(strstr(info.notice, "unroll lowered to 1 (96 bytes)"), "%s", info.notice);
    cs_rollout_stats s;
    cs_env_reset(env, 1);
    cr_assert_eq(cs_env_rollout(env, 10, &s), CS_OK, "%s", cs_env_error(env));
    cs_env_close(env);

    /* The spill figure is cached beside the cubin; without it the cubin is built again. */
    setenv("FAKE_CUDA_SPILL_ABOVE", "2", 1);
    const char *tmp = getenv("TMPDIR");
    char dir[600];
    snprintf(dir, sizeof dir, "%s/cartsim-spill-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    cr_assert(mkdtemp(dir));
    cfg.no_cache = false;
    cfg.cache_dir = dir;
    for (int round = 0; round < 3; round++) {
        if (round == 2) {   /* the figures lost: every kernel is compiled again */
            char cmd[700];
            snprintf(cmd, sizeof cmd, "rm -f '%s'/*.spill", dir);
            cr_assert_eq(system(cmd), 0);
        }
        env = open_cfg(&cfg);
        cs_env_get_info(env, &info);
        cr_assert_eq(info.cache_hit, round == 1, "round %d", round);
        cr_assert_eq(info.unroll, 2, "round %d", round);
        cr_assert_str_eq(info.notice, "the unroll-10 kernel spills 96 bytes per thread: unroll lowered to 2 (0 bytes)");
        cs_env_close(env);
        cr_assert_eq(count_files(dir, ".spill"), 3, "unroll 10, 5 and 2: a figure each");
    }
    unsetenv("FAKE_CUDA_SPILL_ABOVE");
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    check_clean();
}

/* PPO's weights after `steps` env-steps of 4 environments x 32 steps an
 * iteration, from a rollout on `backend`. */
static double *ppo_weights(cs_backend backend, int64_t steps, unsigned *n)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = "cartpole";
    cfg.backend = backend;
    cfg.threads = 1;
    cfg.no_cache = true;
    cs_train_config tc;
    cs_train_config_init(&tc);
    tc.algo = CS_ALGO_PPO;
    tc.policy = "mlp:8";
    tc.seed = 4;
    tc.num_envs = 4;
    tc.num_steps = 32;
    tc.total_timesteps = steps;
    tc.target = 1e9;   /* never solved: every iteration runs */
    tc.eval_episodes = 2;
    cs_train_result r;
    char err[1024];
    cr_assert_eq(cs_train(&cfg, &tc, &r, err, sizeof err), CS_OK, "%s: %s", cs_backend_name(backend), err);
    cr_assert_eq(r.backend, backend);
    *n = r.n_weights;
    return r.weights;
}

/* A recording policy on the device: the kernel writes each rollout's
 * records to device rows, copied to the host's after it, so PPO trains on
 * cuda the cpu backend's weights bit for bit (the shim computes the cpu's
 * f32 bits). `auto` keeps such a policy on the cpu. */
Test(cuda_fake, a_recording_policy_records_on_the_device_as_on_the_cpu, .timeout = 600)
{
    use_fake_driver();
    unsigned n_cpu, n_cuda;
    double *cpu = ppo_weights(CS_BACKEND_CPU, 384, &n_cpu);
    double *cuda = ppo_weights(CS_BACKEND_CUDA, 384, &n_cuda);
    cr_assert_eq(n_cpu, n_cuda);
    cr_assert_eq(memcmp(cpu, cuda, n_cpu * sizeof *cpu), 0, "PPO on cuda trained other weights than on the cpu");
    free(cpu);
    free(cuda);

    cs_config cfg;
    base_cfg(&cfg, "cartpole", CS_BACKEND_AUTO, CS_FUSION_FULL, 1, 16);
    cfg.policy = "ppo:mlp:4";
    cs_env *env = open_cfg(&cfg);
    cs_env_info info;
    cs_env_get_info(env, &info);
    cr_assert_eq(info.backend, CS_BACKEND_CPU);
    cr_assert_str_eq(info.notice, "");
    cs_env_close(env);
    check_clean();
}

Test(cuda_fake, no_device_falls_back_to_the_cpu_with_a_notice)
{
    use_fake_driver();
    setenv("FAKE_CUDA_DEVICES", "0", 1);
    cs_config cfg;
    base_cfg(&cfg, "cartpole", CS_BACKEND_CUDA, CS_FUSION_FULL, 1, 16);
    cs_env *env;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_ERR_UNAVAILABLE);
    cr_assert_str_eq(cs_env_error(env), "no CUDA device");
    cs_env_close(env);
    cfg.backend = CS_BACKEND_AUTO;
    env = open_cfg(&cfg);
    cs_env_info info;
    cs_env_get_info(env, &info);
    cr_assert_eq(info.backend, CS_BACKEND_CPU);
    cr_assert_str_eq(info.notice, "no CUDA device: running on the cpu");
    cr_assert_null(info.device);
    cs_env_close(env);

    setenv("CARTSIM_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
    env = open_cfg(&cfg);
    cs_env_get_info(env, &info);
    cr_assert_eq(info.backend, CS_BACKEND_CPU);
    cr_assert(strstr(info.notice, "no CUDA device (no CUDA driver ($CARTSIM_CUDA_DRIVER=/nonexistent/libcuda.so.1"),
              "%s", info.notice);
    cr_assert(strstr(info.notice, "): running on the cpu"), "%s", info.notice);
    cs_env_close(env);

    /* a device, but no NVRTC */
    unsetenv("FAKE_CUDA_DEVICES");
    setenv("CARTSIM_CUDA_DRIVER", fake_lib, 1);
    setenv("CARTSIM_NVRTC", "/nonexistent/libnvrtc.so", 1);
    cfg.backend = CS_BACKEND_CUDA;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_ERR_UNAVAILABLE);
    cr_assert(strstr(cs_env_error(env), "NVRTC not found"), "%s", cs_env_error(env));
    cs_env_close(env);

    /* NVRTC refuses the kernel: a compile error with its log; AUTO says so */
    setenv("CARTSIM_NVRTC", fake_lib, 1);
    setenv("FAKE_NVRTC_FAIL", "1", 1);
    cr_assert_eq(cs_env_open(&cfg, &env), CS_ERR_COMPILE);
    cr_assert(strstr(cs_env_error(env), "fake.cu(1): error: fake"), "%s", cs_env_error(env));
    cs_env_close(env);
    cfg.backend = CS_BACKEND_AUTO;
    env = open_cfg(&cfg);
    cs_env_get_info(env, &info);
    cr_assert_eq(info.backend, CS_BACKEND_CPU);
    cr_assert(strstr(info.notice, "the cuda backend failed ("), "%s", info.notice);
    cs_env_close(env);
    check_clean();
}

/* A device newer than (the fake) NVRTC, which knows sm_75 to sm_90: the
 * runtime hands the driver PTX for compute_90, runs as on the cpu, caches the
 * PTX, and says so; dump still wants a cubin and refuses. */
Test(cuda_fake, a_device_newer_than_nvrtc_runs_ptx)
{
    use_fake_driver();
    setenv("FAKE_CUDA_ARCH", "120", 1);
    const char *tmp = getenv("TMPDIR");
    char dir[600];
    snprintf(dir, sizeof dir, "%s/cartsim-ptx-env-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    cr_assert(mkdtemp(dir));
    const cs_fusion fusions[] = {CS_FUSION_FULL, CS_FUSION_RULES};
    for (int f = 0; f < 2; f++) {
        cs_config cfg;
        base_cfg(&cfg, "cartpole", CS_BACKEND_CPU, fusions[f], 4, 300);
        cs_env *cpu = open_cfg(&cfg);
        cs_rollout_stats ref;
        cr_assert_eq(cs_env_reset(cpu, 13), CS_OK);
        cr_assert_eq(cs_env_rollout(cpu, 60, &ref), CS_OK);
        cs_env_close(cpu);
        cfg.backend = CS_BACKEND_CUDA;
        cfg.no_cache = false;
        cfg.cache_dir = dir;
        for (int round = 0; round < 2; round++) {
            cs_env *gpu = open_cfg(&cfg);
            cs_env_info info;
            cr_assert_eq(cs_env_get_info(gpu, &info), CS_OK);
            cr_assert_eq(info.backend, CS_BACKEND_CUDA);
            cr_assert_eq(info.arch, 120);
            cr_assert_str_eq(info.notice, "NVRTC 99.0 does not know sm_120: PTX for compute_90, compiled by the driver");
            cr_assert_eq(info.cache_hit, round == 1, "%s round %d", cs_fusion_name(fusions[f]), round);
            cs_rollout_stats got;
            cr_assert_eq(cs_env_reset(gpu, 13), CS_OK, "%s", cs_env_error(gpu));
            cr_assert_eq(cs_env_rollout(gpu, 60, &got), CS_OK, "%s", cs_env_error(gpu));
            cr_assert_eq(got.checksum, ref.checksum, "%s round %d: checksum %016llx, cpu %016llx",
                         cs_fusion_name(fusions[f]), round, (unsigned long long)got.checksum,
                         (unsigned long long)ref.checksum);
            cr_assert_eq(got.episodes, ref.episodes);
            cs_env_close(gpu);
            check_clean();
        }
        cr_assert_eq(count_files(dir, ".ptx"), f + 1, "one PTX entry per kernel");
        cr_assert_eq(count_files(dir, ".cubin"), 0);
    }

    /* PTX has no ptxas report (the driver compiles it): spills are unknown,
     * and the unroll is left as asked, whatever the local memory. */
    setenv("FAKE_CUDA_SPILL_ABOVE", "2", 1);
    cs_config cfg;
    base_cfg(&cfg, "cartpole", CS_BACKEND_CUDA, CS_FUSION_FULL, 10, 16);
    cs_env *env = open_cfg(&cfg);
    cs_env_info spilled;
    cs_env_get_info(env, &spilled);
    cr_assert_str_eq(spilled.notice, "NVRTC 99.0 does not know sm_120: PTX for compute_90, compiled by the driver");
    cr_assert_eq(spilled.spill_bytes, -1);
    cr_assert_eq(spilled.unroll, 10);
    cr_assert_eq(spilled.local_bytes, 128);
    cs_env_close(env);
    unsetenv("FAKE_CUDA_SPILL_ABOVE");

    /* The driver's compiler fails: the message says it was PTX. */
    setenv("FAKE_CUDA_PTX_FAIL", "1", 1);
    base_cfg(&cfg, "cartpole", CS_BACKEND_CUDA, CS_FUSION_FULL, 1, 16);
    cr_assert_neq(cs_env_open(&cfg, &env), CS_OK);
    cr_assert(strstr(cs_env_error(env), "the driver compiling the PTX for compute_90 on cartsim fake GPU (sm_120)") &&
                  strstr(cs_env_error(env), "CUDA_ERROR_INVALID_PTX"),
              "%s", cs_env_error(env));
    cs_env_close(env);
    unsetenv("FAKE_CUDA_PTX_FAIL");
    check_clean();

    /* A cubin for this device is still refused: dump never writes PTX. */
    void *cubin = NULL;
    size_t size = 0;
    char error[1024];
    cr_assert_eq(cs_dump_cubin(&cfg, NULL, &cubin, &size, error, sizeof error), CS_ERR_ARGUMENT);
    cr_assert_null(cubin);
    cr_assert(strstr(error, "NVRTC 99.0 cannot compile for sm_120 (it supports sm_75 to sm_90)"), "%s", error);

    /* Older than NVRTC's oldest: no PTX can run there. */
    setenv("FAKE_CUDA_ARCH", "70", 1);
    cr_assert_eq(cs_env_open(&cfg, &env), CS_ERR_COMPILE);
    cr_assert(strstr(cs_env_error(env), "cannot compile for sm_70 (it supports sm_75 to sm_90)"), "%s",
              cs_env_error(env));
    cs_env_close(env);

    /* A device NVRTC knows gets its cubin and no notice. */
    setenv("FAKE_CUDA_ARCH", "86", 1);
    env = open_cfg(&cfg);
    cs_env_info info;
    cs_env_get_info(env, &info);
    cr_assert_str_eq(info.notice, "");
    cs_env_close(env);
    check_clean();
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(cuda_fake, the_stub_library_is_not_a_driver)
{
    const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
    if (access(stub, R_OK))
        skip_loudly("no CUDA toolkit stub at %s", stub);
    setenv("CARTSIM_CUDA_DRIVER", stub, 1);
    char why[600];
    cr_assert_eq(cs_cuda_probe(why, sizeof why), 0);
    cr_assert(strstr(why, "stub"), "%s", why);
}

/* The command line: the JSON summary names the device, and dump writes cubins. */
static char *run_cli(const char *args, int *status)
{
    const char *bin = getenv("CARTSIM_BIN");
    if (!bin || !*bin)
        skip_loudly("CARTSIM_BIN is not set (make test sets it)");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", bin, args);
    FILE *f = popen(cmd, "r");
    cr_assert(f);
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    size_t got;
    while ((got = fread(out + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap)
            out = realloc(out, cap *= 2);
    }
    out[len] = 0;
    int st = pclose(f);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

Test(cuda_fake, the_json_summary_names_the_device)
{
    use_fake_driver();
    int status;
    char *out = run_cli("--backend cuda --envs 100 --steps 20 --unroll 4 --json --no-cache", &status);
    cr_assert_eq(status, 0, "%s", out);
    const char *want[] = {"\"backend\": \"cuda\"", "\"device\": \"cartsim fake GPU\"", "\"sm_count\": 4",
                          "\"arch\": 90", "\"block\": 256", "\"registers\": 40", "\"spill_bytes\": 0",
                          "\"persistent\": true", "\"launches\": 1,"};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
        cr_expect(strstr(out, want[k]), "%s missing from:\n%s", want[k], out);
    free(out);
    out = run_cli("--backend cuda --envs 100 --steps 20 --unroll 4 --json --no-cache --no-persistent", &status);
    cr_assert_eq(status, 0, "%s", out);
    cr_expect(strstr(out, "\"launches\": 5,") && strstr(out, "\"persistent\": false"), "%s", out);
    free(out);
    setenv("FAKE_CUDA_DEVICES", "0", 1);
    out = run_cli("--backend cuda --envs 8 --steps 1", &status);
    cr_assert_eq(status, 2, "--backend cuda without a device exits 2: %s", out);
    cr_assert(strstr(out, "no CUDA device"), "%s", out);
    free(out);
}

Test(cuda_nvrtc, cli_dump_writes_a_cubin)
{
    dialect_or_skip();
    cs_nvrtc *nv = nvrtc_or_skip();
    cs_nvrtc_close(nv);
    int status;
    char *out = run_cli("dump --env cartpole --format cubin --arch sm_80", &status);
    cr_assert_eq(status, 0, "%.300s", out);
    cr_assert_eq(memcmp(out, "\177ELF", 4), 0, "stdout is the cubin");
    free(out);
    out = run_cli("dump --env cartpole --format cuda --arch sm_80", &status);
    cr_assert_eq(status, 2, "%s", out);
    free(out);
    out = run_cli("dump --env cartpole --format cubin --arch sm_8", &status);
    cr_assert_eq(status, 2, "%s", out);
    cr_assert(strstr(out, "sm_8"), "%s", out);
    free(out);
    /* newer than NVRTC: one line and exit 2, never PTX in place of the cubin */
    out = run_cli("dump --env cartpole --format cubin --arch sm_999", &status);
    cr_assert_eq(status, 2, "%s", out);
    cr_assert(!strncmp(out, "cartsim: NVRTC ", 15) && strstr(out, "cannot compile for sm_999"), "%s", out);
    cr_assert(strchr(out, '\n') == out + strlen(out) - 1, "one line: %s", out);
    free(out);
}

/* Strict mode on the device (docs/hardening.md): the snapshot, the reruns of
 * the faulty lanes and the lazy copies around them name the same first
 * environment and step as the cpu, and leave the same state. */
Test(cuda_fake, strict_mode_names_the_same_fault_as_the_cpu)
{
    use_fake_driver();
    char path[700];
    snprintf(path, sizeof path, "%s/tests/envs/blowup.env", root());
    char msg[2][1024];
    uint64_t sums[2];
    const cs_backend backends[2] = {CS_BACKEND_CPU, CS_BACKEND_CUDA};
    for (int b = 0; b < 2; b++) {
        cs_config cfg;
        base_cfg(&cfg, path, backends[b], CS_FUSION_FULL, 1, 300);
        cfg.params[0] = "growth=1.5:3";
        cfg.n_params = 1;
        cfg.strict = true;
        cs_env *env = open_cfg(&cfg);
        cr_assert_eq(cs_env_reset(env, 21), CS_OK);
        cs_rollout_stats st;
        cr_assert_eq(cs_env_rollout(env, 2000, &st), CS_ERR_NUMERIC, "%s", cs_env_error(env));
        snprintf(msg[b], sizeof msg[b], "%s", cs_env_error(env));
        sums[b] = st.checksum;
        cs_env_close(env);
    }
    cr_assert_str_eq(msg[1], msg[0]);
    cr_assert_eq(sums[1], sums[0], "the state after the whole call");
    check_clean();
}

/* Strict mode's index check in the CUDA dialect (tests/envs/index_fault.env):
 * the kernels' per-lane fault words, stepped and rolled out, name the same
 * environment, index, place and step as the cpu's. */
Test(cuda_fake, strict_index_faults_name_the_same_fault_as_the_cpu)
{
    use_fake_driver();
    char path[700];
    snprintf(path, sizeof path, "%s/tests/envs/index_fault.env", root());
    char msg[2][2][1024];
    const cs_backend backends[2] = {CS_BACKEND_CPU, CS_BACKEND_CUDA};
    for (int b = 0; b < 2; b++) {
        cs_config cfg;
        base_cfg(&cfg, path, backends[b], CS_FUSION_FULL, 1, 40);
        cfg.strict = true;
        cs_env *env = open_cfg(&cfg);
        cr_assert_eq(cs_env_reset(env, 9), CS_OK);
        cr_assert_eq(cs_env_rollout(env, 30, NULL), CS_ERR_NUMERIC, "%s", cs_env_error(env));
        snprintf(msg[b][0], sizeof msg[b][0], "%s", cs_env_error(env));
        cr_assert_eq(cs_env_reset(env, 9), CS_OK);
        int32_t a[40] = {0};
        a[7] = 1;
        cs_status s = CS_OK;
        for (int t = 0; t < 20 && s == CS_OK; t++)
            s = cs_env_step(env, a);
        cr_assert_eq(s, CS_ERR_NUMERIC, "%s", cs_env_error(env));
        snprintf(msg[b][1], sizeof msg[b][1], "%s", cs_env_error(env));
        cs_env_close(env);
    }
    cr_assert_str_eq(msg[1][0], msg[0][0]);
    cr_assert_str_eq(msg[1][1], msg[0][1]);
    char want[1024];
    snprintf(want, sizeof want, "environment 7: index 10 out of range [0, 10) at %s:27:25 in step 5 since the reset "
             "(strict mode)", path);
    cr_assert_str_eq(msg[1][1], want);
    check_clean();
}

/* A CUDA caller's view: the device buffers are the batch, in place, and a
 * step with actions written there equals a cpu step with the same actions,
 * copying nothing either way. (The fake's device memory is host memory, so
 * the test reads it directly.) */
/* cs_config.device picks the GPU, modulo the devices there are: under
 * mpirun each rank of a node asks for its index there. */
Test(cuda_fake, device_ordinal_wraps_over_the_devices)
{
    use_fake_driver();
    setenv("FAKE_CUDA_DEVICES", "3", 1);
    const int asked[] = {0, 2, 4, 7}, got[] = {0, 2, 1, 1};
    for (int k = 0; k < 4; k++) {
        cs_config cfg;
        base_cfg(&cfg, "cartpole", CS_BACKEND_CUDA, CS_FUSION_FULL, 1, 8);
        cfg.device = asked[k];
        cs_env *gpu = open_cfg(&cfg);
        cr_assert_eq(cs_env_reset(gpu, 1), CS_OK, "%s", cs_env_error(gpu));
        cs_device_buffers d;
        cr_assert_eq(cs_env_device_buffers(gpu, &d), CS_OK, "%s", cs_env_error(gpu));
        cr_expect_eq(d.device, got[k], "device %d of 3 opened ordinal %d", asked[k], d.device);
        cs_env_close(gpu);
    }
    unsetenv("FAKE_CUDA_DEVICES");
}

Test(cuda_fake, device_buffers_are_the_batch_in_place)
{
    use_fake_driver();
    const char *names[] = {"cartpole", "mountain_car_continuous"};
    const int64_t n = 37;
    for (int e = 0; e < 2; e++) {
        cs_config cfg;
        base_cfg(&cfg, names[e], CS_BACKEND_CPU, CS_FUSION_FULL, 1, n);
        cs_env *cpu = open_cfg(&cfg);
        cfg.backend = CS_BACKEND_CUDA;
        cs_env *gpu = open_cfg(&cfg);
        cs_env_info info;
        cs_env_get_info(gpu, &info);
        size_t obs_n = (size_t)info.obs_dim * n, state_n = (size_t)info.state_dim * n;
        cr_assert_eq(cs_env_reset(cpu, 5), CS_OK);
        cr_assert_eq(cs_env_reset(gpu, 5), CS_OK, "%s", cs_env_error(gpu));
        cs_device_buffers d;
        cr_assert_eq(cs_env_device_buffers(gpu, &d), CS_OK, "%s", cs_env_error(gpu));
        cr_assert(d.context && d.obs && d.rewards && d.terminated && d.truncated && d.state && d.episode_steps &&
                  d.actions && d.final_obs);
        const float *dobs = (const float *)(uintptr_t)d.obs;
        const double *dstate = (const double *)(uintptr_t)d.state;   /* f64 batch */
        cr_assert_eq(memcmp(dobs, cs_env_obs(cpu), obs_n * sizeof(float)), 0, "%s: reset obs in place", names[e]);
        double *want = malloc(state_n * sizeof *want);
        for (int t = 0; t < 80; t++) {
            int32_t ai[37];
            float af[37];
            for (int i = 0; i < n; i++) {
                ai[i] = (int32_t)((i * 5 + t * 3 + (t >> 3)) & 1);
                af[i] = (float)(((i * 7 + t) % 9) - 4) * 0.3f;   /* beyond [-1, 1] too: clipped */
            }
            const void *host_actions = e == 0 ? (const void *)ai : (const void *)af;
            cr_assert_eq(cs_env_step(cpu, host_actions), CS_OK);
            long long c0[C_COUNT], c1[C_COUNT];
            if (t % 10 == 9) {   /* now and then a host step: the two kinds mix */
                cr_assert_eq(cs_env_step(gpu, host_actions), CS_OK, "%s", cs_env_error(gpu));
            } else {
                memcpy((void *)(uintptr_t)d.actions, host_actions, (size_t)n * 4);
                fake_counters(c0);
                cr_assert_eq(cs_env_step_device(gpu), CS_OK, "%s", cs_env_error(gpu));
                fake_counters(c1);
                cr_assert_eq(c1[C_HTOD] - c0[C_HTOD], 0, "a device step sends nothing");
                cr_assert_eq(c1[C_DTOH] - c0[C_DTOH], 0, "a device step copies nothing back");
                cr_assert_eq(c1[C_LAUNCHES] - c0[C_LAUNCHES], 1, "one launch");
            }
            cr_assert_eq(memcmp(dobs, cs_env_obs(cpu), obs_n * sizeof(float)), 0, "%s step %d: obs", names[e], t);
            cr_assert_eq(memcmp((const void *)(uintptr_t)d.rewards, cs_env_rewards(cpu), (size_t)n * sizeof(double)),
                         0, "%s step %d: rewards", names[e], t);
            cr_assert_eq(memcmp((const void *)(uintptr_t)d.terminated, cs_env_terminated(cpu), (size_t)n), 0);
            cr_assert_eq(memcmp((const void *)(uintptr_t)d.truncated, cs_env_truncated(cpu), (size_t)n), 0);
            cs_env_get_state(cpu, want);
            cr_assert_eq(memcmp(dstate, want, state_n * sizeof(double)), 0, "%s step %d: state", names[e], t);
            /* the host copies follow the device when read */
            cr_assert_eq(memcmp(cs_env_obs(gpu), dobs, obs_n * sizeof(float)), 0);
        }
        const int32_t *steps = (const int32_t *)(uintptr_t)d.episode_steps;
        for (int i = 0; i < n; i++)
            cr_assert(steps[i] >= 0 && steps[i] <= 80, "episode steps of %d: %d", i, steps[i]);
        cs_rollout_stats a, b;
        cr_assert_eq(cs_env_rollout(cpu, 60, &a), CS_OK);
        cr_assert_eq(cs_env_rollout(gpu, 60, &b), CS_OK, "%s", cs_env_error(gpu));
        cr_assert_eq(a.checksum, b.checksum, "%s: a rollout after device steps", names[e]);
        free(want);
        cs_env_close(cpu);
        cs_env_close(gpu);
        check_clean();
    }
}

/* Off cuda there are no device buffers; strict mode checks the caller's
 * device actions as it checks host ones; order is kept. */
Test(cuda_fake, device_buffers_refuse_what_they_cannot_do)
{
    use_fake_driver();
    cs_config cfg;
    base_cfg(&cfg, "cartpole", CS_BACKEND_CPU, CS_FUSION_FULL, 1, 8);
    cs_env *cpu = open_cfg(&cfg);
    cs_device_buffers d;
    memset(&d, 0xff, sizeof d);
    cr_assert_eq(cs_env_device_buffers(cpu, &d), CS_ERR_UNAVAILABLE);
    cr_assert(strstr(cs_env_error(cpu), "only on the cuda backend"), "%s", cs_env_error(cpu));
    cr_assert_eq(d.obs, 0, "out is cleared on failure");
    cs_env_reset(cpu, 1);
    cr_assert_eq(cs_env_step_device(cpu), CS_ERR_UNAVAILABLE);
    cr_assert_eq(cs_env_device_buffers(cpu, NULL), CS_ERR_ARGUMENT);
    cr_assert_eq(cs_env_device_buffers(NULL, &d), CS_ERR_ARGUMENT);
    cr_assert_eq(cs_env_step_device(NULL), CS_ERR_ARGUMENT);
    cs_env_close(cpu);

    const char *names[] = {"cartpole", "pendulum"};
    for (int e = 0; e < 2; e++) {
        base_cfg(&cfg, names[e], CS_BACKEND_CUDA, CS_FUSION_FULL, 1, 8);
        cfg.strict = true;
        cs_env *gpu = open_cfg(&cfg);
        cr_assert_eq(cs_env_device_buffers(gpu, &d), CS_OK, "%s", cs_env_error(gpu));
        cr_assert_eq(cs_env_step_device(gpu), CS_ERR_STATE, "before reset");
        cr_assert_eq(cs_env_reset(gpu, 2), CS_OK);
        if (e == 0) {
            int32_t *a = (int32_t *)(uintptr_t)d.actions;
            for (int i = 0; i < 8; i++)
                a[i] = i & 1;
            cr_assert_eq(cs_env_step_device(gpu), CS_OK, "%s", cs_env_error(gpu));
            a[3] = 7;
            cr_assert_eq(cs_env_step_device(gpu), CS_ERR_ARGUMENT);
            cr_assert(strstr(cs_env_error(gpu), "action 7 of environment 3 is not in [0, 2)"), "%s",
                      cs_env_error(gpu));
        } else {
            float *a = (float *)(uintptr_t)d.actions;
            for (int i = 0; i < 8; i++)
                a[i] = 0.5f;
            cr_assert_eq(cs_env_step_device(gpu), CS_OK, "%s", cs_env_error(gpu));
            a[5] = NAN;
            cr_assert_eq(cs_env_step_device(gpu), CS_ERR_ARGUMENT);
            cr_assert(strstr(cs_env_error(gpu), "action 0 of environment 5 is not finite"), "%s", cs_env_error(gpu));
        }
        /* a refused step ran nothing: every episode is still one step old */
        const int32_t *steps = (const int32_t *)(uintptr_t)d.episode_steps;
        for (int i = 0; i < 8; i++)
            cr_assert_eq(steps[i], 1, "%s: environment %d has taken %d steps", names[e], i, steps[i]);
        cs_env_close(gpu);
        check_clean();
    }
}

/* ---- device: a real GPU ---- */

#define device_or_skip()                                                                  \
    do {                                                                                  \
        unsetenv("CARTSIM_CUDA_DRIVER");                                                  \
        unsetenv("CARTSIM_NVRTC");                                                        \
        char why_[600];                                                                   \
        if (!cs_cuda_probe(why_, sizeof why_))                                            \
            skip_loudly("no CUDA device: %s", why_);                                      \
        dialect_or_skip();                                                                \
    } while (0)

static cs_env *device_env(cs_dtype d, cs_fusion f, int unroll, int block, int64_t n)
{
    cs_config cfg;
    base_cfg(&cfg, "cartpole", CS_BACKEND_CUDA, f, unroll, n);
    cfg.dtype = d;
    cfg.block = block;
    return open_cfg(&cfg);
}

/* GPU vs cpu: states after a few steps agree within tolerance (a lane whose
 * episode ended differently may differ: at most 1% of them). */
Test(cuda_device, gpu_matches_the_cpu_within_tolerance)
{
    device_or_skip();
    const cs_dtype dtypes[] = {CS_DTYPE_F64, CS_DTYPE_F32};
    const cs_fusion fusions[] = {CS_FUSION_FULL, CS_FUSION_RULES, CS_FUSION_NONE};
    const int64_t n = 4096;
    double *a = malloc(4 * n * sizeof *a), *b = malloc(4 * n * sizeof *b);
    for (int d = 0; d < 2; d++)
        for (int f = 0; f < 3; f++) {
            cs_config cfg;
            base_cfg(&cfg, "cartpole", CS_BACKEND_CPU, fusions[f], 1, n);
            cfg.dtype = dtypes[d];
            cs_env *cpu = open_cfg(&cfg);
            cs_env *gpu = device_env(dtypes[d], fusions[f], 1, 0, n);
            cs_env_reset(cpu, 21);
            cr_assert_eq(cs_env_reset(gpu, 21), CS_OK, "%s", cs_env_error(gpu));
            cs_rollout_stats sa, sb;
            cs_env_rollout(cpu, 40, &sa);
            cr_assert_eq(cs_env_rollout(gpu, 40, &sb), CS_OK, "%s", cs_env_error(gpu));
            cs_env_get_state(cpu, a);
            cr_assert_eq(cs_env_get_state(gpu, b), CS_OK);
            double tol = dtypes[d] == CS_DTYPE_F64 ? 1e-9 : 1e-4;
            int64_t off = 0;
            for (int64_t i = 0; i < n; i++) {
                bool same = true;
                for (int k = 0; k < 4; k++)
                    same &= fabs(a[k * n + i] - b[k * n + i]) <= tol * fmax(1.0, fabs(a[k * n + i]));
                off += !same;
            }
            cr_assert_leq(off, n / 100, "%s %s: %lld of %lld lanes differ", dtypes[d] == CS_DTYPE_F64 ? "f64" : "f32",
                          cs_fusion_name(fusions[f]), (long long)off, (long long)n);
            cr_assert_leq(llabs((long long)(sa.episodes - sb.episodes)), sa.episodes / 50 + 1);
            cs_env_close(cpu);
            cs_env_close(gpu);
        }
    free(a);
    free(b);
}

/* On the GPU every block size and unroll gives the same bits. */
Test(cuda_device, bit_identical_across_block_sizes_and_unroll)
{
    device_or_skip();
    const int blocks[] = {64, 128, 256};
    const int unrolls[] = {1, 10};
    for (int d = 0; d < 2; d++) {
        unsigned long long first = 0;
        for (int b = 0; b < 3; b++)
            for (int u = 0; u < 2; u++)
                for (int persistent = 0; persistent < 2; persistent++) {
                    cs_config cfg;
                    base_cfg(&cfg, "cartpole", CS_BACKEND_CUDA, CS_FUSION_FULL, unrolls[u], 10000);
                    cfg.dtype = d ? CS_DTYPE_F64 : CS_DTYPE_F32;
                    cfg.block = blocks[b];
                    cfg.persistent = persistent;
                    cs_env *env = open_cfg(&cfg);
                    cs_rollout_stats s;
                    cs_env_reset(env, 4);
                    cr_assert_eq(cs_env_rollout(env, 1000, &s), CS_OK, "%s", cs_env_error(env));
                    if (!first)
                        first = s.checksum;
                    cr_assert_eq(s.checksum, first, "block %d unroll %d persistent %d", blocks[b], unrolls[u],
                                 persistent);
                    cs_env_close(env);
                }
    }
}

Test(cuda_device, step_api_matches_the_cpu)
{
    device_or_skip();
    const int64_t n = 1000;
    cs_config cfg;
    base_cfg(&cfg, "cartpole", CS_BACKEND_CPU, CS_FUSION_FULL, 1, n);
    cs_env *cpu = open_cfg(&cfg);
    cs_env *gpu = device_env(CS_DTYPE_F64, CS_FUSION_FULL, 1, 0, n);
    cs_env_reset(cpu, 2);
    cs_env_reset(gpu, 2);
    int32_t *act = malloc(n * sizeof *act);
    int64_t off = 0;
    for (int t = 0; t < 20; t++) {
        for (int64_t i = 0; i < n; i++)
            act[i] = (int32_t)((i + t) & 1);
        cs_env_step(cpu, act);
        cr_assert_eq(cs_env_step(gpu, act), CS_OK, "%s", cs_env_error(gpu));
        const float *a = cs_env_obs(cpu), *b = cs_env_obs(gpu);
        cr_assert(b, "%s", cs_env_error(gpu));
        for (int64_t i = 0; i < 4 * n; i++)
            off += fabsf(a[i] - b[i]) > 1e-5f * fmaxf(1.0f, fabsf(a[i]));
    }
    cr_assert_leq(off, 4 * n * 20 / 100);
    free(act);
    cs_env_close(cpu);
    cs_env_close(gpu);
}

/* Every built-in environment, arrays, ints and tables included, gives the
 * cpu backend's rollout checksum on the GPU in f32 and in f64's fast math:
 * both dialects call the prelude's own math functions, and the generated
 * code asks for IEEE division and square root, no contraction and no
 * flush-to-zero. f64's exact math is glibc's on the cpu and CUDA's libdevice
 * on the GPU, so there it is only printed (gpu_matches_the_cpu_within_tolerance
 * bounds it). Each environment's result is printed, so a log shows all; one
 * test per mode, so that Criterion's jobs run the three at once. */
static void every_builtin_environment(const char *label, cs_dtype dtype, cs_math math, bool must_match)
{
    device_or_skip();
    char title[128], failed[4096] = "";
    size_t nfailed = 0;
    const char *name;
    for (size_t e = 0; (name = cs_builtin_env_at(e, title, sizeof title)); e++) {
        unsigned long long sum[2] = {0, 0};
        long long episodes[2] = {0, 0};
        for (int b = 0; b < 2; b++) {
            cs_config cfg;
            base_cfg(&cfg, name, b ? CS_BACKEND_CUDA : CS_BACKEND_CPU, CS_FUSION_FULL, 10, 4096);
            cfg.dtype = dtype;
            cfg.math = math;
            cs_env *env = open_cfg(&cfg);
            cs_rollout_stats s;
            cr_assert_eq(cs_env_reset(env, 11), CS_OK, "%s: %s", name, cs_env_error(env));
            cr_assert_eq(cs_env_rollout(env, 300, &s), CS_OK, "%s %s: %s", name, b ? "cuda" : "cpu",
                         cs_env_error(env));
            sum[b] = s.checksum;
            episodes[b] = (long long)s.episodes;
            cs_env_close(env);
        }
        bool same = sum[0] == sum[1];
        fprintf(stderr, "device: %-24s %-9s cpu %016llx cuda %016llx episodes %lld/%lld %s\n", name, label, sum[0],
                sum[1], episodes[0], episodes[1], same ? "same" : "DIFFERENT");
        if (!same && must_match && strlen(failed) + strlen(name) + 2 < sizeof failed) {
            nfailed++;
            strcat(failed, " ");
            strcat(failed, name);
        }
    }
    cr_assert_eq(nfailed, 0, "%s: %zu rollouts differ from the cpu backend's:%s", label, nfailed, failed);
}

Test(cuda_device, every_builtin_environment_in_f32, .timeout = 1200)
{
    every_builtin_environment("f32", CS_DTYPE_F32, CS_MATH_EXACT, true);
}

Test(cuda_device, every_builtin_environment_in_f64_fast_math, .timeout = 1200)
{
    every_builtin_environment("f64 fast", CS_DTYPE_F64, CS_MATH_FAST, true);
}

Test(cuda_device, every_builtin_environment_in_f64_exact_math_printed, .timeout = 1200)
{
    every_builtin_environment("f64 exact", CS_DTYPE_F64, CS_MATH_EXACT, false);
}

/* A CUDA caller's loop through the driver: actions copied to the device
 * buffer, cs_env_step_device, observations read from the device buffer. */
/* PPO with its rollouts on the GPU (the records come back from device rows)
 * trains the cpu's weights bit for bit: f32 without contraction is the same
 * arithmetic on both (every_builtin_environment_in_f32). */
Test(cuda_device, ppo_trains_on_the_gpu_as_on_the_cpu, .timeout = 600)
{
    device_or_skip();
    unsigned n_cpu, n_gpu;
    double t0 = cs_now_ms();
    double *cpu = ppo_weights(CS_BACKEND_CPU, 3840, &n_cpu);
    double t1 = cs_now_ms();
    double *gpu = ppo_weights(CS_BACKEND_CUDA, 3840, &n_gpu);
    double t2 = cs_now_ms();
    cr_assert_eq(n_cpu, n_gpu);
    unsigned off = 0;
    double worst = 0;
    for (unsigned k = 0; k < n_cpu; k++) {
        off += cpu[k] != gpu[k];
        worst = fmax(worst, fabs(cpu[k] - gpu[k]));
    }
    fprintf(stderr, "device: ppo 30 iterations: cpu %.0f ms, cuda %.0f ms (compiles included); %u of %u weights differ, "
            "by at most %g\n", t1 - t0, t2 - t1, off, n_cpu, worst);
    cr_assert_eq(off, 0, "%u of %u weights differ, by at most %g", off, n_cpu, worst);
    free(cpu);
    free(gpu);
}

Test(cuda_device, device_buffers_serve_a_cuda_caller)
{
    device_or_skip();
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    cr_assert(lib, "libcuda.so.1: %s", dlerror());
    cs_cu_result (*push)(cs_cu_context) = (cs_cu_result (*)(cs_cu_context))dlsym(lib, "cuCtxPushCurrent_v2");
    cs_cu_result (*pop)(cs_cu_context *) = (cs_cu_result (*)(cs_cu_context *))dlsym(lib, "cuCtxPopCurrent_v2");
    cs_cu_result (*htod)(cs_cu_deviceptr, const void *, size_t) =
        (cs_cu_result (*)(cs_cu_deviceptr, const void *, size_t))dlsym(lib, "cuMemcpyHtoD_v2");
    cs_cu_result (*dtoh)(void *, cs_cu_deviceptr, size_t) =
        (cs_cu_result (*)(void *, cs_cu_deviceptr, size_t))dlsym(lib, "cuMemcpyDtoH_v2");
    cr_assert(push && pop && htod && dtoh);
    const int64_t n = 1000;
    cs_config cfg;
    base_cfg(&cfg, "cartpole", CS_BACKEND_CPU, CS_FUSION_FULL, 1, n);
    cs_env *cpu = open_cfg(&cfg);
    cs_env *gpu = device_env(CS_DTYPE_F64, CS_FUSION_FULL, 1, 0, n);
    cs_env_reset(cpu, 2);
    cs_env_reset(gpu, 2);
    cs_device_buffers d;
    cr_assert_eq(cs_env_device_buffers(gpu, &d), CS_OK, "%s", cs_env_error(gpu));
    int32_t *act = malloc(n * sizeof *act);
    float *obs = malloc(4 * n * sizeof *obs);
    int64_t off = 0;
    for (int t = 0; t < 20; t++) {
        for (int64_t i = 0; i < n; i++)
            act[i] = (int32_t)((i + t) & 1);
        cs_env_step(cpu, act);
        cs_cu_context popped;
        cr_assert_eq(push((cs_cu_context)d.context), 0);
        cr_assert_eq(htod(d.actions, act, n * sizeof *act), 0);
        cr_assert_eq(pop(&popped), 0);
        cr_assert_eq(cs_env_step_device(gpu), CS_OK, "%s", cs_env_error(gpu));
        cr_assert_eq(push((cs_cu_context)d.context), 0);
        cr_assert_eq(dtoh(obs, d.obs, 4 * n * sizeof *obs), 0);
        cr_assert_eq(pop(&popped), 0);
        const float *a = cs_env_obs(cpu);
        for (int64_t i = 0; i < 4 * n; i++)
            off += fabsf(a[i] - obs[i]) > 1e-5f * fmaxf(1.0f, fabsf(a[i]));
        cr_assert_eq(memcmp(cs_env_obs(gpu), obs, 4 * n * sizeof *obs), 0, "the host copy is the device's");
    }
    cr_assert_leq(off, 4 * n * 20 / 100);
    free(act);
    free(obs);
    cs_env_close(cpu);
    cs_env_close(gpu);
    dlclose(lib);
}

/* ---- PPO's update on the device (train/ppo_cuda.c, train/ppo_update.cu) ---- */

/* One update on a fixed batch, the cpu's and the device's (cs_ppo_update_rows,
 * as tests/test_ppo.c drives it against PyTorch): the losses, the gradient
 * before clipping and the parameters after one Adam step. 100 rows (pad rows
 * in the last block of 16), the entropy's gradient and clipping in play.
 * tol 0 asks for every bit (the shim, whose exp, log and tanh are glibc's as
 * the cpu's); otherwise tol is the losses' relative error, and the gradient
 * may differ by tol times its largest entry. */
static void update_matches_the_cpu(const char *arch, bool box, double tol)
{
    const unsigned n_obs = box ? 3 : 4, n_act = box ? 1 : 2;
    const int64_t rows = 100;
    const double low[1] = {-2}, high[1] = {2};
    cs_agent a;
    char why[256];
    cr_assert_eq(cs_agent_parse(arch, &a, why, sizeof why), 0);
    cs_mlp actor, critic;
    unsigned n_params = cs_ppo_shape(&a, box, n_obs, n_act, &actor, &critic);
    float *params[2], *grad[2];
    uint64_t rng = 29;
    for (int k = 0; k < 2; k++) {
        params[k] = malloc(n_params * sizeof(float));
        grad[k] = malloc(n_params * sizeof(float));
    }
    for (unsigned k = 0; k < n_params; k++)
        params[0][k] = params[1][k] = (float)splitmix_uniform(&rng, -0.5, 0.5);
    float obs[4 * 100], act[100], logp[100], value[100], adv[100], ret[100];
    int32_t act_i[100];
    for (int64_t k = 0; k < n_obs * rows; k++)
        obs[k] = (float)splitmix_uniform(&rng, -1, 1);
    for (int64_t r = 0; r < rows; r++) {
        act_i[r] = (int32_t)(splitmix_next(&rng) % n_act);
        act[r] = (float)splitmix_uniform(&rng, low[0], high[0]);
        logp[r] = (float)splitmix_uniform(&rng, -1.5, -0.5);   /* ratios around e^0.3 .. e^-0.7: some clipped */
        value[r] = (float)splitmix_uniform(&rng, -0.5, 0.5);
        adv[r] = (float)splitmix_uniform(&rng, -1, 1);
        ret[r] = value[r] + (float)splitmix_uniform(&rng, -0.3, 0.3);   /* some value steps clipped */
    }
    cs_train_config tc;
    cs_train_config_init(&tc);
    tc.algo = CS_ALGO_PPO;
    tc.learning_rate = 1e-3;
    tc.ent_coef = 0.05;
    tc.max_grad_norm = 0.2;
    double losses[2][4];
    for (int k = 0; k < 2; k++) {
        tc.update = k ? CS_UPDATE_CUDA : CS_UPDATE_CPU;
        cs_status st = cs_ppo_update_rows(&tc, arch, box, n_obs, n_act, low, high, rows, obs,
                                          box ? (const void *)act : (const void *)act_i, logp, value, adv, ret,
                                          params[k], losses[k], grad[k]);
        cr_assert_eq(st, CS_OK, "%s %s, update %s: %s", arch, box ? "box" : "discrete", k ? "cuda" : "cpu",
                     cs_status_string(st));
    }
    const char *what = box ? "box" : "discrete";
    for (int q = 0; q < 4; q++)
        cr_assert(tol ? fabs(losses[1][q] - losses[0][q]) <= tol * fabs(losses[0][q]) : losses[1][q] == losses[0][q],
                  "%s %s: loss %d: cuda %.17g, cpu %.17g", arch, what, q, losses[1][q], losses[0][q]);
    double gmax = 0, lr = tc.learning_rate;
    for (unsigned k = 0; k < n_params; k++)
        gmax = fabs(grad[0][k]) > gmax ? fabs(grad[0][k]) : gmax;
    cr_assert(gmax > 0);
    for (unsigned k = 0; k < n_params; k++) {
        if (!tol) {
            cr_assert(!memcmp(&grad[1][k], &grad[0][k], sizeof(float)) &&
                          !memcmp(&params[1][k], &params[0][k], sizeof(float)),
                      "%s %s: parameter %u: gradient cuda %.9g cpu %.9g, after the step cuda %.9g cpu %.9g", arch,
                      what, k, grad[1][k], grad[0][k], params[1][k], params[0][k]);
            continue;
        }
        /* Adam's first step moves a weight by about lr g / (|g| + 1e-5):
         * a gradient within tol * gmax (gmax <= 1 here) moves it within a
         * tenth of lr */
        cr_assert(fabs(grad[1][k] - grad[0][k]) <= tol * gmax, "%s %s: gradient %u: cuda %.9g, cpu %.9g", arch, what, k,
                  grad[1][k], grad[0][k]);
        cr_assert(fabs(params[1][k] - params[0][k]) <= 0.1 * lr, "%s %s: parameter %u: cuda %.9g, cpu %.9g", arch,
                  what, k, params[1][k], params[0][k]);
    }
    for (int k = 0; k < 2; k++) {
        free(params[k]);
        free(grad[k]);
    }
}

/* The update's kernels are CUDA for NVRTC as they are C for the shim: they
 * compile for sm_80 and sm_90 with --fmad=false (NVRTC 13.0 here: ptxas
 * reported no stack frame and no spills for any of them). */
Test(cuda_nvrtc, compiles_the_ppo_update_kernels)
{
    cs_nvrtc *nv = nvrtc_or_skip();
    char *source = cs_ppo_update_kernels();
    cr_assert(source);
    static const int archs[] = {80, 90};
    for (size_t k = 0; k < sizeof archs / sizeof archs[0]; k++) {
        cs_cubin bin;
        char err[4096];
        cr_assert_eq(cs_cuda_compile(nv, source, archs[k], CS_CUDA_FMAD, NULL, &bin, err, sizeof err), 0,
                     "sm_%d: %s", archs[k], err);
        cr_assert(bin.size > 0 && !bin.ptx);
        cs_cubin_free(&bin);
    }
    free(source);
    cs_nvrtc_close(nv);
}

/* Through the shim the update is the cpu's, bit for bit: the same
 * operations in the same order, and the same libm. */
Test(cuda_fake, ppo_update_is_the_cpus_bit_for_bit)
{
    use_fake_driver();
    static const char *const archs[] = {"mlp:16", "mlp:8x8", "linear"};
    for (size_t k = 0; k < sizeof archs / sizeof archs[0]; k++) {
        update_matches_the_cpu(archs[k], false, 0);   /* CartPole's shape */
        update_matches_the_cpu(archs[k], true, 0);    /* Pendulum's */
    }
    check_clean();
}

/* `--update cuda` trains CartPole as the cpu does: the same iterations, the
 * same policy file, byte for byte, solved in the same budget; and so with
 * the rollout on the device too (two device handles in one process: the
 * environment's and the update's). */
Test(cuda_fake, ppo_trains_cartpole_with_the_update_on_the_device, .timeout = 600)
{
    use_fake_driver();
    char dir[] = "/tmp/cartsim-ppo-cuda-XXXXXX";
    cr_assert(mkdtemp(dir));
    static const char *const runs[3][2] = {{"cpu", "cpu"}, {"cpu", "cuda"}, {"cuda", "cuda"}};   /* backend, update */
    char *json[3], pol[3][700], *bytes[3], args[2400];
    long steps[3];
    size_t n[3];
    for (int k = 0; k < 3; k++) {
        snprintf(pol[k], sizeof pol[k], "%s/%s-%s.pol", dir, runs[k][0], runs[k][1]);
        snprintf(args, sizeof args,
                 "train --env cartpole --algo ppo --seed 1 --backend %s --update %s --out '%s' --json", runs[k][0],
                 runs[k][1], pol[k]);
        int status;
        json[k] = run_cli(args, &status);
        cr_assert_eq(status, 0, "%s", json[k]);
        const char *result = strstr(json[k], "\"type\": \"result\"");
        cr_assert(result && strstr(result, "\"solved\": true"), "%s", json[k]);
        const char *at = strstr(result, "\"env_steps\": ");
        cr_assert(at);
        steps[k] = atol(at + 13);
        bytes[k] = read_text(pol[k], &n[k]);
        cr_assert(bytes[k]);
    }
    for (int k = 1; k < 3; k++) {
        cr_assert_eq(steps[k], steps[0], "backend %s, update %s: %ld env-steps, the cpu %ld", runs[k][0], runs[k][1],
                     steps[k], steps[0]);
        cr_assert(n[k] == n[0] && !memcmp(bytes[k], bytes[0], n[0]),
                  "backend %s, update %s: another policy than the cpu's", runs[k][0], runs[k][1]);
    }
    for (int k = 0; k < 3; k++) {
        free(json[k]);
        free(bytes[k]);
        unlink(pol[k]);
    }
    rmdir(dir);
}

/* PPO on CartPole with the rollout on the cpu. */
static void ppo_cartpole(cs_config *cfg, cs_train_config *tc, const char *policy)
{
    cs_config_init(cfg);
    cfg->env = "cartpole";
    cfg->backend = CS_BACKEND_CPU;
    cs_train_config_init(tc);
    tc->algo = CS_ALGO_PPO;
    tc->policy = policy;
}

/* The update's cubin goes to the kernel cache with the environment's: a
 * second training finds it there (NVRTC, made to fail, is not asked); with
 * the cache off, NVRTC's failure is a compile error with its log. */
Test(cuda_fake, ppo_update_kernels_come_from_the_kernel_cache, .timeout = 300)
{
    use_fake_driver();
    char dir[] = "/tmp/cartsim-ppo-cache-XXXXXX";
    cr_assert(mkdtemp(dir));
    cs_config cfg;
    cs_train_config tc;
    ppo_cartpole(&cfg, &tc, "mlp:8");
    cfg.cache_dir = dir;
    tc.total_timesteps = 1024;
    tc.target = 1e9;
    tc.update = CS_UPDATE_CUDA;
    cs_train_result r;
    char err[2048];
    cr_assert_eq(cs_train(&cfg, &tc, &r, err, sizeof err), CS_OK, "%s", err);
    free(r.weights);
    cr_assert_eq(count_files(dir, ".cubin"), 1);
    setenv("FAKE_NVRTC_FAIL", "1", 1);
    cr_assert_eq(cs_train(&cfg, &tc, &r, err, sizeof err), CS_OK, "%s", err);
    free(r.weights);
    cfg.no_cache = true;
    cr_assert_eq(cs_train(&cfg, &tc, &r, err, sizeof err), CS_ERR_COMPILE);
    cr_assert(strstr(err, "the update on cuda: ") && strstr(err, "fake.cu(1): error: fake"), "%s", err);
    unsetenv("FAKE_NVRTC_FAIL");
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    check_clean();
}

/* A loss gone NaN on the device stops training as on the cpu: the same
 * iteration named, the policy before it kept (the same weights). */
Test(cuda_fake, ppo_update_gone_nan_stops_as_on_the_cpu, .timeout = 300)
{
    use_fake_driver();
    cs_config cfg;
    cs_train_config tc;
    ppo_cartpole(&cfg, &tc, "mlp:8");
    tc.learning_rate = 1e30;
    tc.max_grad_norm = 1e30;
    cs_train_result r[2];
    char err[2][1024];
    for (int k = 0; k < 2; k++) {
        tc.update = k ? CS_UPDATE_CUDA : CS_UPDATE_CPU;
        cr_assert_eq(cs_train(&cfg, &tc, &r[k], err[k], sizeof err[k]), CS_ERR_NUMERIC, "%s", err[k]);
        cr_assert_not_null(r[k].weights);
    }
    cr_assert_str_eq(err[1], err[0]);
    cr_assert_eq(r[1].n_weights, r[0].n_weights);
    cr_assert(!memcmp(r[1].weights, r[0].weights, r[0].n_weights * sizeof *r[0].weights));
    for (unsigned k = 0; k < r[1].n_weights; k++)
        cr_assert(isfinite(r[1].weights[k]));
    free(r[0].weights);
    free(r[1].weights);
    check_clean();
}

/* The project's convention for an explicit cuda (a backend's too): no
 * device is an error that says why, exit 2, not a silent cpu run. A value
 * that is no choice is the table's one-line error. */
Test(cuda_fake, update_cuda_without_a_device_is_refused)
{
    use_fake_driver();
    int bad;
    char *msg = run_cli("train --env cartpole --algo ppo --update gpu --out /tmp/never.pol", &bad);
    cr_assert_eq(bad, 2, "%s", msg);
    cr_assert_str_eq(msg, "cartsim: --update: 'gpu' is not one of cpu, cuda\n");
    free(msg);
    setenv("FAKE_CUDA_DEVICES", "0", 1);
    int status;
    char *out = run_cli("train --env cartpole --algo ppo --update cuda --total-timesteps 2048 --out /tmp/never.pol",
                        &status);
    cr_assert_eq(status, 2, "%s", out);
    cr_assert(strstr(out, "the update on cuda: no CUDA device"), "%s", out);
    cr_assert(access("/tmp/never.pol", F_OK) != 0, "a policy was written");
    free(out);
    unsetenv("FAKE_CUDA_DEVICES");
}

/* On a GPU: one update against the cpu's within tolerance (CUDA's double
 * exp, log and tanh may differ from glibc's in the last bits, through the
 * loss's deltas rounded to float: 1e-5 of the gradient's largest entry),
 * and the same seed trains the same weights, bit for bit, run to run. */
Test(cuda_device, ppo_update_matches_the_cpu_and_repeats_bit_for_bit, .timeout = 600)
{
    device_or_skip();
    update_matches_the_cpu("mlp:64", false, 1e-5);
    update_matches_the_cpu("mlp:64", true, 1e-5);
    update_matches_the_cpu("mlp:8x8", false, 1e-5);
    cs_config cfg;
    cs_train_config tc;
    ppo_cartpole(&cfg, &tc, "mlp:64");
    tc.seed = 3;
    tc.total_timesteps = 20480;
    tc.update = CS_UPDATE_CUDA;
    cs_train_result r[2];
    char err[1024];
    for (int k = 0; k < 2; k++) {
        memset(&r[k], 0, sizeof r[k]);
        cr_assert_eq(cs_train(&cfg, &tc, &r[k], err, sizeof err), CS_OK, "%s", err);
    }
    cr_assert_eq(r[0].n_weights, r[1].n_weights);
    cr_assert(!memcmp(r[0].weights, r[1].weights, r[0].n_weights * sizeof *r[0].weights),
              "two runs of the same seed trained different weights on the GPU");
    for (int k = 0; k < 2; k++)
        free(r[k].weights);
}

/* ---- every op: folded, interpreted, generated C, CUDA dialect as host C ---- */

/* One row per op of the DSL: the expression of a state over a, b, c, and
 * how the builder writes it for the folding check. */
typedef struct {
    const char *expr;
    cs_op op, inner;    /* inner: a comparison under SELECT/AND/OR/NOT, else CS_OP_COUNT */
    int arity;
} op_row;

static const op_row op_rows[] = {
    {"-a", CS_OP_NEG, CS_OP_COUNT, 1},          {"abs(a)", CS_OP_ABS, CS_OP_COUNT, 1},
    {"sqrt(a)", CS_OP_SQRT, CS_OP_COUNT, 1},    {"exp(a)", CS_OP_EXP, CS_OP_COUNT, 1},
    {"log(a)", CS_OP_LOG, CS_OP_COUNT, 1},      {"sin(a)", CS_OP_SIN, CS_OP_COUNT, 1},
    {"cos(a)", CS_OP_COS, CS_OP_COUNT, 1},      {"tan(a)", CS_OP_TAN, CS_OP_COUNT, 1},
    {"tanh(a)", CS_OP_TANH, CS_OP_COUNT, 1},    {"floor(a)", CS_OP_FLOOR, CS_OP_COUNT, 1},
    {"f32(a)", CS_OP_ROUND_F32, CS_OP_COUNT, 1},
    {"a + b", CS_OP_ADD, CS_OP_COUNT, 2},       {"a - b", CS_OP_SUB, CS_OP_COUNT, 2},
    {"a * b", CS_OP_MUL, CS_OP_COUNT, 2},       {"a / b", CS_OP_DIV, CS_OP_COUNT, 2},
    {"pow(a, b)", CS_OP_POW, CS_OP_COUNT, 2},   {"atan2(a, b)", CS_OP_ATAN2, CS_OP_COUNT, 2},
    {"fmod(a, b)", CS_OP_FMOD, CS_OP_COUNT, 2}, {"a % b", CS_OP_MOD, CS_OP_COUNT, 2},
    {"min(a, b)", CS_OP_MIN, CS_OP_COUNT, 2},   {"max(a, b)", CS_OP_MAX, CS_OP_COUNT, 2},
    {"clip(a, b, c)", CS_OP_CLIP, CS_OP_COUNT, 3}, {"fma(a, b, c)", CS_OP_FMA, CS_OP_COUNT, 3},
    {"a < b ? 1 : 0", CS_OP_SELECT, CS_OP_LT, 2},  {"a <= b ? 1 : 0", CS_OP_SELECT, CS_OP_LE, 2},
    {"a > b ? 1 : 0", CS_OP_SELECT, CS_OP_GT, 2},  {"a >= b ? 1 : 0", CS_OP_SELECT, CS_OP_GE, 2},
    {"a == b ? 1 : 0", CS_OP_SELECT, CS_OP_EQ, 2}, {"a != b ? 1 : 0", CS_OP_SELECT, CS_OP_NE, 2},
    {"a < b and b < c ? 1 : 0", CS_OP_AND, CS_OP_LT, 3}, {"a < b or b < c ? 1 : 0", CS_OP_OR, CS_OP_LT, 3},
    {"not (a < b) ? 1 : 0", CS_OP_NOT, CS_OP_LT, 2},
    {"a < b ? b : c", CS_OP_SELECT, CS_OP_COUNT, 3},
};
enum { N_OP_ROWS = sizeof op_rows / sizeof op_rows[0] };

/* Ordinary and special values: +-0, subnormals of both types, +-inf, NaN,
 * huge arguments (sin's reduction, exp's overflow), exact and halfway cases. */
static const double op_values[] = {
    0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.0, 3.0, 7.25, 0.1, -0.3, 100.5, 1e-40, -1e-42, 5e-324, 1e10, -1e30,
    3.4e38, 1e300, 0x1.000032p-1, 1e5 + 0.5, 0x1p100, INFINITY, -INFINITY, NAN,
};
enum { N_OP_VALUES = sizeof op_values / sizeof op_values[0] };

/* Bits of a result, every NaN as one (its sign is the maker's, not the op's). */
static uint64_t canonical_bits(const void *buf, long long i, bool f32)
{
    if (f32) {
        float v = ((const float *)buf)[i];
        uint32_t u;
        memcpy(&u, &v, 4);
        return isnan(v) ? 0x7fc00000u : u;
    }
    double v = ((const double *)buf)[i];
    uint64_t u;
    memcpy(&u, &v, 8);
    return isnan(v) ? 0x7ff8000000000000ull : u;
}

static double lane_value(long long i, int which)
{
    long long j = i / N_OP_VALUES, k = i % N_OP_VALUES;
    return op_values[which == 0 ? j : which == 1 ? k : (j * 7 + k * 3) % N_OP_VALUES];
}

/* The rows of one lane built from constants and folded (in the fast math
 * mode with fast_f64); each root that folds to a constant must equal the
 * run's bits. */
static void check_folding(cs_type real, bool fast_f64, const bufs *run, long long lane)
{
    cs_program *p = cs_program_new(real);
    cr_assert(p);
    p->fast_f64 = fast_f64;
    cs_graph *g = p->graph;
    cr_assert_eq(cs_program_add_input(p, "action", CS_I32, 0, 1), 0);
    cs_node v[3];
    for (int w = 0; w < 3; w++)
        v[w] = cs_const(g, real, real == CS_F32 ? (double)(float)lane_value(lane, w) : lane_value(lane, w));
    cs_node one = cs_const(g, real, 1), zero = cs_const(g, real, 0);
    for (int r = 0; r < N_OP_ROWS; r++) {
        const op_row *o = &op_rows[r];
        cs_node e;
        if (o->inner != CS_OP_COUNT) {
            cs_node cmp = cs_binary(g, o->inner, v[0], v[1]);
            if (o->op == CS_OP_AND || o->op == CS_OP_OR)
                cmp = cs_binary(g, o->op, cmp, cs_binary(g, o->inner, v[1], v[2]));
            else if (o->op == CS_OP_NOT)
                cmp = cs_unary(g, CS_OP_NOT, cmp);
            e = cs_ternary(g, CS_OP_SELECT, cmp, one, zero);
        } else if (o->op == CS_OP_SELECT) {
            e = cs_ternary(g, CS_OP_SELECT, cs_binary(g, CS_OP_LT, v[0], v[1]), v[1], v[2]);
        } else if (o->arity == 1) {
            e = cs_unary(g, o->op, v[0]);
        } else if (o->arity == 2) {
            e = cs_binary(g, o->op, v[0], v[1]);
        } else {
            e = cs_ternary(g, o->op, v[0], v[1], v[2]);
        }
        cr_assert(e, "%s: %s", o->expr, cs_graph_error(g));
        char name[16];
        snprintf(name, sizeof name, "r%d", r);
        cr_assert_eq(cs_program_add_state(p, name, real, CS_SCALAR), r);
        p->next[r] = e;
        p->restart[r] = zero;
    }
    cr_assert_eq(cs_program_add_obs(p, NULL, zero, CS_OBS_BOX, -INFINITY, INFINITY, 0), 0);
    p->reward = zero;
    p->terminated = cs_const(g, CS_BOOL, 0);
    char err[200];
    cr_assert_eq(cs_program_finish(p, err, sizeof err), 0, "%s", err);
    cr_assert_geq(cs_pass_fold(p), 0);
    for (int r = 0; r < N_OP_ROWS; r++) {
        const cs_node_data *d = cs_graph_node(g, p->next[r]);
        if (d->op != CS_OP_CONST)
            continue;   /* left for run time by the IEEE safety rules */
        double c = real == CS_F32 ? (double)(float)d->imm.f : d->imm.f;
        float cf = (float)c;
        const void *cp = real == CS_F32 ? (const void *)&cf : (const void *)&c;
        cr_assert_eq(canonical_bits(cp, 0, real == CS_F32), canonical_bits(run->carried[3 + r], lane, real == CS_F32),
                     "%s%s %s with a = %a, b = %a, c = %a: folded %a, run %a", cs_type_name(real),
                     fast_f64 ? " fast" : "", op_rows[r].expr,
                     lane_value(lane, 0), lane_value(lane, 1), lane_value(lane, 2), c,
                     real == CS_F32 ? (double)((float *)run->carried[3 + r])[lane] : ((double *)run->carried[3 + r])[lane]);
    }
    cs_program_free(p);
}

/* Every op over every pair (and a third value) of op_values, one lane each:
 * the interpreter, the generated C (cpu backend), the CUDA dialect built as
 * host C and constant folding give the same bits, NaNs compared as one; in
 * f32, f64 and f64's fast math mode (jit/mathd.h). */
Test(cuda_host, every_op_bit_for_bit_folded_interpreted_c_and_cuda_dialect)
{
    dialect_or_skip();
    static char src[8192];
    int n = snprintf(src, sizeof src, "env ops \"Ops-v0\"\nstate a, b, c");
    for (int r = 0; r < N_OP_ROWS; r++)
        n += snprintf(src + n, sizeof src - (size_t)n, ", r%d", r);
    n += snprintf(src + n, sizeof src - (size_t)n, "\naction discrete 2\nobserve a\nreset {\n    a = 0\n    b = 0\n    c = 0\n");
    for (int r = 0; r < N_OP_ROWS; r++)
        n += snprintf(src + n, sizeof src - (size_t)n, "    r%d = 0\n", r);
    n += snprintf(src + n, sizeof src - (size_t)n, "}\nstep {\n    a' = a\n    b' = b\n    c' = c\n");
    for (int r = 0; r < N_OP_ROWS; r++)
        n += snprintf(src + n, sizeof src - (size_t)n, "    r%d' = %s\n", r, op_rows[r].expr);
    n += snprintf(src + n, sizeof src - (size_t)n, "    reward = 0\n    terminated = false\n}\n");
    cr_assert_lt((size_t)n, sizeof src);

    const long long lanes = (long long)N_OP_VALUES * N_OP_VALUES;
    const cs_type reals[] = {CS_F32, CS_F64, CS_F64};
    const bool fast[] = {false, false, true};
    for (int t = 0; t < 3; t++) {
        bool f32 = reals[t] == CS_F32;
        cs_program *p = NULL;
        char err[2048], shim[600];
        cr_assert_eq(cs_parse(src, strlen(src), "ops.env", reals[t], NULL, 0, &p, err, sizeof err), 0, "%s", err);
        p->fast_f64 = fast[t];
        cr_assert_eq(cs_policy_random(p), 0);
        cr_assert_eq(cs_program_bind_policy(p), 0);
        cr_assert_eq(cs_optimize(p, CS_FUSION_FULL, NULL, err, sizeof err), 0, "%s", err);
        char *csrc = emit(p, CS_FUSION_FULL, 1, CS_DIALECT_C), *cuda = emit(p, CS_FUSION_FULL, 1, CS_DIALECT_CUDA);
        cs_cache cache = {.dir = ""};
        cs_cpu_kernel k;
        host_module m;
        shim_path(shim, sizeof shim);
        cr_assert_eq(cs_cpu_compile(csrc, NULL, 0, NULL, &cache, &k, err, sizeof err), 0, "%s", err);
        cr_assert_eq(host_build(cuda, shim, &m, err, sizeof err), 0, "%s", err);
        void *step = dlsym(m.handle, "cs_kernel_step");
        cr_assert(step);
        bufs run[3];   /* interpreter, cpu, CUDA dialect */
        for (int b = 0; b < 3; b++) {
            bufs_init(&run[b], p, lanes, 5);
            for (long long i = 0; i < lanes; i++)
                for (int w = 0; w < 3; w++) {
                    if (f32)
                        ((float *)run[b].carried[w])[i] = (float)lane_value(i, w);
                    else
                        ((double *)run[b].carried[w])[i] = lane_value(i, w);
                }
            run[b].l.mode = CS_MODE_NO_RESTART;
        }
        cs_interp_step(p, &run[0].l);
        k.step(&run[1].l);
        host_launch(&m, step, false, 4, 256, &run[2].l, NULL);
        for (int r = 0; r < N_OP_ROWS; r++)
            for (long long i = 0; i < lanes; i++) {
                uint64_t want = canonical_bits(run[0].carried[3 + r], i, f32);
                for (int b = 1; b < 3; b++)
                    cr_assert_eq(canonical_bits(run[b].carried[3 + r], i, f32), want,
                                 "%s%s %s with a = %a, b = %a, c = %a: %s gives %llx, the interpreter %llx",
                                 cs_type_name(reals[t]), fast[t] ? " fast" : "", op_rows[r].expr, lane_value(i, 0), lane_value(i, 1),
                                 lane_value(i, 2), b == 1 ? "the cpu backend" : "the CUDA dialect",
                                 (unsigned long long)canonical_bits(run[b].carried[3 + r], i, f32),
                                 (unsigned long long)want);
            }
        for (long long i = 0; i < lanes; i++)
            check_folding(reals[t], fast[t], &run[0], i);
        for (int b = 0; b < 3; b++)
            bufs_free(&run[b]);
        host_unload(&m);
        cs_cpu_unload(&k);
        free(csrc);
        free(cuda);
        cs_program_free(p);
    }
}


/* Random programs (tests/random_env.h, issue 16 part 7): the CUDA dialect
 * through the host shim against the cpu backend, persistent rollouts from
 * the same seed. States equal to the bit in f64 (within 1e-5 in f32, as
 * above); a NaN equals a NaN, whatever its sign bit. */
static void random_programs_match(cs_type real, double tol)
{
    dialect_or_skip();
    char dir[] = "/tmp/cartsim-random-cuda-XXXXXX", path[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/random.env", dir);
    static char program[1 << 16];
    for (uint64_t seed = 1; seed <= 6; seed++) {
        size_t len = random_env_program(seed, program, sizeof program);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(program, 1, len, f), len);
        cr_assert_eq(fclose(f), 0);
        cs_program *p = load_program(path, real, CS_FUSION_FULL);
        bufs ref, got;
        bufs_init(&ref, p, 100, 1234);
        bufs_init(&got, p, 100, 1234);
        cpu_rollout(p, &ref, 60);
        shim_rollout(p, CS_FUSION_FULL, 1, RUN_PERSISTENT, &got, 60, 3, 32);
        for (unsigned k = 0; k < ref.nc; k++)
            for (long long i = 0; i < ref.n; i++) {
                double x = ref.rs == 4 ? ((float *)ref.carried[k])[i] : ((double *)ref.carried[k])[i];
                double y = got.rs == 4 ? ((float *)got.carried[k])[i] : ((double *)got.carried[k])[i];
                bool same = (isnan(x) && isnan(y)) || x == y || fabs(x - y) <= tol * fmax(1.0, fabs(x));
                cr_assert(same, "seed %llu (%s): state %u lane %lld: cpu %.17g, CUDA dialect %.17g\n%s",
                          (unsigned long long)seed, real == CS_F32 ? "f32" : "f64", k, i, x, y, program);
            }
        bufs_free(&ref);
        bufs_free(&got);
        cs_program_free(p);
    }
    unlink(path);
    rmdir(dir);
}

Test(cuda_host, random_programs_match_the_cpu_backend_in_f64) { random_programs_match(CS_F64, 0); }

Test(cuda_host, random_programs_match_the_cpu_backend_in_f32) { random_programs_match(CS_F32, 1e-5); }

#endif
