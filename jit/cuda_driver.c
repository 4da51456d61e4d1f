/* The cuda backend's running half: the driver API loads a module (a cubin
 * from nvrtc.c, or PTX the driver compiles), owns the device buffers and
 * launches the kernels.
 *
 * libcuda.so.1 is opened with dlopen (cuda_lib.c), so one binary builds
 * without the CUDA headers and runs with or without a GPU. The function
 * table lives in the cs_cuda handle, not in a process-wide table: the
 * library keeps no global state, each handle's lifetime says when its
 * libraries may go, and opening an already loaded library again is only a
 * lookup.
 *
 * Contexts: the device's primary context, retained per handle and pushed
 * around every use, so that several handles (and CUDA runtime code, which
 * uses the same context) share a device in one thread or many.
 *
 * Kernels (the emitter's CUDA dialect): every entry is
 * `extern "C" __global__ void NAME(cs_lanes L ...)` with L by value holding
 * device pointers; lanes are walked grid-stride, so any grid is correct and
 * results never depend on the block size.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_api.h"
#include "jit.h"

#define MAX_ROLLOUT_KERNELS 4096

typedef enum { FN_RESTART, FN_STEP, FN_ROLLOUT, FN_FIXED } fixed_fn;

typedef struct {
    cs_cu_function fn;
    int block;
    int registers, local_bytes;
} kernel_fn;

/* Device buffers that are no cs_buf of their own: the discrete
 * observations and info values travel with CS_BUF_OBS and CS_BUF_FINAL_OBS
 * (jit.h), the replayed words with the step or restart that gives them. */
typedef enum { EXTRA_OBS_INT, EXTRA_FINAL_OBS_INT, EXTRA_INFO, EXTRA_FINAL_INFO, EXTRA_STEP_WORDS,
               EXTRA_RESTART_WORDS, EXTRA_COUNT } extra_buf;

struct cs_cuda {
    cs_cu_api cu;
    cs_nvrtc *nv;
    cs_cu_device dev;
    int ordinal;                 /* dev's ordinal */
    cs_cu_context ctx;
    bool retained;
    cs_cuda_device info;

    cs_cu_module mod;
    cs_cuda_schedule sched;
    kernel_fn fixed[FN_FIXED];   /* restart, step, rollout (fusion full) */
    kernel_fn *parts;            /* rules/none: cs_rollout_k0 .. k{n_parts-1} */
    unsigned n_parts;
    unsigned scratch_per_lane;

    cs_lanes_layout lay;
    size_t *slot_size;           /* [n_carried] lay's, owned */
    bool allocated;
    cs_cu_deviceptr buf[CS_BUF_COUNT];
    cs_cu_deviceptr extra[EXTRA_COUNT];   /* what CS_BUF_OBS, _FINAL_OBS carry besides, and replayed words */
    cs_cu_deviceptr *carried, *params, *inputs;   /* each slot's [n] array, inside buf[CARRIED] etc. */
    cs_cu_deviceptr carried_ptrs, params_ptrs, inputs_ptrs;   /* device arrays of those pointers */
    cs_cu_deviceptr scratch;
    /* A recording policy's rows of one rollout call: [n_records][rec_rows][n]
     * 4-byte values, and the device array of the records' addresses. */
    cs_cu_deviceptr rec, rec_ptrs;
    long long rec_rows;
    unsigned dirty;
};

static const char *const cu_names[] = {
    "cuInit", "cuDriverGetVersion", "cuGetErrorName", "cuGetErrorString", "cuDeviceGetCount", "cuDeviceGet",
    "cuDeviceGetName", "cuDeviceGetAttribute", "cuDeviceTotalMem_v2", "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2", "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2", "cuCtxSynchronize",
    "cuModuleLoadData", "cuModuleUnload", "cuModuleGetFunction", "cuModuleGetGlobal_v2", "cuFuncGetAttribute",
    "cuOccupancyMaxPotentialBlockSize", "cuMemGetInfo_v2", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2", "cuMemsetD8_v2", "cuLaunchKernel",
};
_Static_assert(sizeof cu_names / sizeof cu_names[0] == (sizeof(cs_cu_api) - sizeof(void *)) / sizeof(void (*)(void)),
               "cu_names: one name per slot of cs_cu_api");

/* ---- the driver ---- */

/* "what: CUDA_ERROR_NAME: the driver's text" */
static int cu_fail(const cs_cuda *c, cs_cu_result rc, char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int cu_fail(const cs_cuda *c, cs_cu_result rc, char *err, size_t err_size, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *name = NULL, *text = NULL;
    if (c->cu.GetErrorName)
        c->cu.GetErrorName(rc, &name);
    if (c->cu.GetErrorString)
        c->cu.GetErrorString(rc, &text);
    cs_cuda_say(err, err_size, "%s: %s: %s", what, name ? name : "CUDA error", text ? text : "(no description)");
    if (rc == CS_CUDA_ERROR_OUT_OF_MEMORY)
        return CS_CUDA_LIMIT;
    return CS_CUDA_FAIL;
}

#define CU(call, ...)                                                   \
    do {                                                                \
        cs_cu_result rc_ = (call);                                      \
        if (rc_ != CS_CUDA_SUCCESS)                                     \
            return cu_fail(c, rc_, err, err_size, __VA_ARGS__);         \
    } while (0)

/* Inside a push/pop pair: a failure must still pop. */
#define CU_IN(call, ...)                                                \
    do {                                                                \
        cs_cu_result rc_ = (call);                                      \
        if (rc_ != CS_CUDA_SUCCESS) {                                   \
            result = cu_fail(c, rc_, err, err_size, __VA_ARGS__);       \
            goto out;                                                   \
        }                                                               \
    } while (0)

static int enter(cs_cuda *c, char *err, size_t err_size)
{
    CU(c->cu.CtxPushCurrent(c->ctx), "making the CUDA context current");
    return 0;
}

static void leave(cs_cuda *c)
{
    cs_cu_context popped;
    c->cu.CtxPopCurrent(&popped);
}

static int open_driver(cs_cuda *c, int device, char *err, size_t err_size)
{
    const char *forced = getenv("CARTSIM_CUDA_DRIVER");
    const char *name = forced && *forced ? forced : "libcuda.so.1";
    c->cu.lib = cs_cuda_open_lib(name);
    if (!c->cu.lib) {
        if (forced && *forced) {
            const char *why = dlerror();
            cs_cuda_say(err, err_size, "no CUDA driver ($CARTSIM_CUDA_DRIVER=%s: %s)", forced, why ? why : "cannot open");
        } else {
            cs_cuda_say(err, err_size, "no CUDA driver (libcuda.so.1 not found)");
            return CS_CUDA_NOT_INSTALLED;
        }
        return CS_CUDA_NO_DRIVER;
    }
    char what[PATH_MAX + 32];
    snprintf(what, sizeof what, "the CUDA driver %s", name);
    if (cs_cuda_resolve_table(c->cu.lib, (char *)&c->cu + sizeof(void *), cu_names,
                              sizeof cu_names / sizeof cu_names[0], sizeof cu_names / sizeof cu_names[0], what, err,
                              err_size))
        return CS_CUDA_FAIL;
    cs_cu_result rc = c->cu.Init(0);
    if (rc == CS_CUDA_ERROR_NO_DEVICE) {
        cs_cuda_say(err, err_size, "no CUDA device");
        return CS_CUDA_NO_DEVICE;
    }
    if (rc == CS_CUDA_ERROR_STUB_LIBRARY) {
        cs_cuda_say(err, err_size, "no CUDA driver (%s is the toolkit's stub, not a driver)", name);
        return CS_CUDA_NO_DRIVER;
    }
    if (rc != CS_CUDA_SUCCESS)
        return cu_fail(c, rc, err, err_size, "the CUDA driver failed to start (cuInit)");
    int count = 0;
    CU(c->cu.DeviceGetCount(&count), "counting CUDA devices");
    if (count < 1) {
        cs_cuda_say(err, err_size, "no CUDA device");
        return CS_CUDA_NO_DEVICE;
    }
    c->ordinal = device % count;
    CU(c->cu.DeviceGet(&c->dev, c->ordinal), "opening CUDA device %d", c->ordinal);
    CU(c->cu.DeviceGetName(c->info.name, (int)sizeof c->info.name - 1, c->dev), "naming CUDA device %d", c->ordinal);
    int major = 0, minor = 0;
    CU(c->cu.DeviceGetAttribute(&major, CS_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, c->dev),
       "reading the compute capability");
    CU(c->cu.DeviceGetAttribute(&minor, CS_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, c->dev),
       "reading the compute capability");
    CU(c->cu.DeviceGetAttribute(&c->info.sm_count, CS_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, c->dev),
       "reading the multiprocessor count");
    CU(c->cu.DeviceTotalMem(&c->info.total_bytes, c->dev), "reading the device memory size");
    c->info.arch = 10 * major + minor;
    CU(c->cu.DevicePrimaryCtxRetain(&c->ctx, c->dev), "creating the CUDA context of %s", c->info.name);
    c->retained = true;
    return 0;
}

int cs_cuda_open(cs_cuda **out, int device, char *err, size_t err_size)
{
    *out = NULL;
    cs_cuda *c = calloc(1, sizeof *c);
    if (!c) {
        cs_cuda_say(err, err_size, "out of memory");
        return CS_CUDA_FAIL;
    }
    int rc = open_driver(c, device < 0 ? 0 : device, err, err_size);
    if (rc == 0)
        rc = cs_nvrtc_open(&c->nv, err, err_size);
    if (rc) {
        cs_cuda_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

static void free_buffers(cs_cuda *c)
{
    if (!c->allocated && !c->carried && !c->params && !c->inputs)
        return;
    for (int b = 0; b < CS_BUF_COUNT; b++)
        if (c->buf[b])
            c->cu.MemFree(c->buf[b]);
    for (int b = 0; b < EXTRA_COUNT; b++)
        if (c->extra[b])
            c->cu.MemFree(c->extra[b]);
    memset(c->extra, 0, sizeof c->extra);
    cs_cu_deviceptr more[] = {c->carried_ptrs, c->params_ptrs, c->inputs_ptrs, c->scratch, c->rec, c->rec_ptrs};
    for (size_t k = 0; k < sizeof more / sizeof more[0]; k++)
        if (more[k])
            c->cu.MemFree(more[k]);
    free(c->slot_size);
    c->slot_size = NULL;
    free(c->carried);
    free(c->params);
    free(c->inputs);
    memset(c->buf, 0, sizeof c->buf);
    c->carried = c->params = c->inputs = NULL;
    c->carried_ptrs = c->params_ptrs = c->inputs_ptrs = c->scratch = c->rec = c->rec_ptrs = 0;
    c->rec_rows = 0;
    c->allocated = false;
    c->dirty = 0;
}

void cs_cuda_close(cs_cuda *c)
{
    if (!c)
        return;
    if (c->retained) {
        char err[8];
        size_t err_size = sizeof err;
        if (enter(c, err, err_size) == 0) {
            free_buffers(c);
            cs_cuda_unload(c);
            leave(c);
        }
        c->cu.DevicePrimaryCtxRelease(c->dev);
    }
    free(c->parts);
    if (c->cu.lib)
        dlclose(c->cu.lib);
    cs_nvrtc_close(c->nv);
    free(c);
}

int cs_cuda_probe(char *why, size_t why_size)
{
    cs_cuda *c;
    if (cs_cuda_open(&c, 0, why, why_size))
        return 0;
    cs_cuda_close(c);
    if (why && why_size)
        why[0] = 0;
    return 1;
}

const cs_cuda_device *cs_cuda_device_info(const cs_cuda *c) { return &c->info; }
cs_nvrtc *cs_cuda_nvrtc(cs_cuda *c) { return c->nv; }

/* ---- modules ---- */

/* Unloads with the context current (the caller's). */
static void unload_current(cs_cuda *c)
{
    if (c->mod)
        c->cu.ModuleUnload(c->mod);
    c->mod = NULL;
    memset(c->fixed, 0, sizeof c->fixed);
    free(c->parts);
    c->parts = NULL;
    c->n_parts = 0;
}

void cs_cuda_unload(cs_cuda *c)
{
    if (!c || !c->mod)
        return;
    char err[8];
    size_t err_size = sizeof err;
    if (enter(c, err, err_size) == 0) {
        unload_current(c);
        leave(c);
    } else {
        c->mod = NULL;
        unload_current(c);
    }
}

static int read_u32(cs_cuda *c, const char *name, unsigned *value, char *err, size_t err_size)
{
    cs_cu_deviceptr ptr;
    size_t bytes = 0;
    cs_cu_result rc = c->cu.ModuleGetGlobal(&ptr, &bytes, c->mod, name);
    if (rc != CS_CUDA_SUCCESS)
        return cu_fail(c, rc, err, err_size, "the kernel module lacks its constant %s", name);
    if (bytes != sizeof *value) {
        cs_cuda_say(err, err_size, "the kernel module's %s has %zu bytes, not 4", name, bytes);
        return CS_CUDA_FAIL;
    }
    CU(c->cu.MemcpyDtoH(value, ptr, sizeof *value), "reading %s", name);
    return 0;
}

static int setup_fn(cs_cuda *c, kernel_fn *k, const char *name, int block, char *err, size_t err_size)
{
    CU(c->cu.ModuleGetFunction(&k->fn, c->mod, name), "the kernel module lacks %s", name);
    int max_threads = 0;
    CU(c->cu.FuncGetAttribute(&k->registers, CS_CU_FUNC_ATTRIBUTE_NUM_REGS, k->fn), "reading %s's registers", name);
    CU(c->cu.FuncGetAttribute(&k->local_bytes, CS_CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, k->fn),
       "reading %s's local memory", name);
    CU(c->cu.FuncGetAttribute(&max_threads, CS_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k->fn),
       "reading %s's block limit", name);
    if (block > 0) {
        if (block > max_threads) {
            cs_cuda_say(err, err_size, "block %d is more than %s can run with (%d threads: %d registers each)", block, name,
                max_threads, k->registers);
            return CS_CUDA_FAIL;
        }
        k->block = block;
    } else {
        int min_grid = 0;
        CU(c->cu.OccupancyMaxPotentialBlockSize(&min_grid, &k->block, k->fn, NULL, 0, 0),
           "choosing %s's block size", name);
        if (k->block < 1)
            k->block = max_threads > 0 && max_threads < 128 ? max_threads : 128;
    }
    return 0;
}

int cs_cuda_load(cs_cuda *c, const cs_cubin *bin, const cs_cuda_schedule *s, cs_cuda_kernel_info *info,
                 char *err, size_t err_size)
{
    memset(info, 0, sizeof *info);
    if (!bin->data || !bin->size) {
        cs_cuda_say(err, err_size, "no cubin to load");
        return CS_CUDA_FAIL;
    }
    if (bin->ptx && bin->data[bin->size - 1] != 0) {
        cs_cuda_say(err, err_size, "the PTX to load does not end with a NUL");   /* the driver reads PTX up to it */
        return CS_CUDA_FAIL;
    }
    if (s->unroll < 1 || s->block < 0 || s->block > 1024) {
        cs_cuda_say(err, err_size, "bad schedule: unroll %d, block %d", s->unroll, s->block);
        return CS_CUDA_FAIL;
    }
    if (c->allocated) {
        cs_cuda_say(err, err_size, "a module is loaded once, before the buffers are allocated");
        return CS_CUDA_FAIL;
    }
    int result = enter(c, err, err_size);
    if (result)
        return result;
    unload_current(c);
    c->sched = *s;
    if (bin->ptx)
        CU_IN(c->cu.ModuleLoadData(&c->mod, bin->data), "the driver compiling the PTX for compute_%d on %s (sm_%d)",
              bin->arch, c->info.name, c->info.arch);
    else
        CU_IN(c->cu.ModuleLoadData(&c->mod, bin->data), "loading the kernel module on %s", c->info.name);
    if ((result = read_u32(c, "cs_kernels_per_step", &info->kernels_per_step, err, err_size)) ||
        (result = read_u32(c, "cs_scratch_bytes_per_lane", &info->scratch_bytes_per_lane, err, err_size)))
        goto out;
    c->scratch_per_lane = info->scratch_bytes_per_lane;
    static const char *const fixed_names[FN_FIXED] = {"cs_kernel_restart", "cs_kernel_step", "cs_kernel_rollout"};
    for (int k = 0; k < FN_FIXED; k++) {
        if (k == FN_ROLLOUT && s->fusion != CS_FUSION_FULL)
            continue;
        if ((result = setup_fn(c, &c->fixed[k], fixed_names[k], s->block, err, err_size)))
            goto out;
    }
    if (s->fusion == CS_FUSION_FULL) {
        info->block = c->fixed[FN_ROLLOUT].block;
        info->registers = c->fixed[FN_ROLLOUT].registers;
        info->local_bytes = c->fixed[FN_ROLLOUT].local_bytes;
    } else {
        unsigned n = info->kernels_per_step;
        if (n < 1 || n > MAX_ROLLOUT_KERNELS) {
            cs_cuda_say(err, err_size, "the kernel module says a step takes %u kernels", n);
            result = CS_CUDA_FAIL;
            goto out;
        }
        if (!(c->parts = calloc(n, sizeof *c->parts))) {
            cs_cuda_say(err, err_size, "out of memory");
            result = CS_CUDA_FAIL;
            goto out;
        }
        c->n_parts = n;
        for (unsigned k = 0; k < n; k++) {
            char name[32];
            snprintf(name, sizeof name, "cs_rollout_k%u", k);
            if ((result = setup_fn(c, &c->parts[k], name, s->block, err, err_size)))
                goto out;
            if (c->parts[k].registers > info->registers)
                info->registers = c->parts[k].registers;
            if (c->parts[k].local_bytes > info->local_bytes)
                info->local_bytes = c->parts[k].local_bytes;
        }
        info->block = c->parts[0].block;
    }
    if (s->fusion == CS_FUSION_FULL && info->kernels_per_step != 1) {
        cs_cuda_say(err, err_size, "a fully fused module says a step takes %u kernels", info->kernels_per_step);
        result = CS_CUDA_FAIL;
        goto out;
    }
out:
    if (result)
        unload_current(c);
    leave(c);
    return result;
}

/* ---- buffers ---- */

/* Bytes of an element of carried slot k (the layout's, else the real's). */
static size_t slot_element(const cs_lanes_layout *lay, unsigned k)
{
    return lay->slot_size ? lay->slot_size[k] : lay->real_size;
}

/* Bytes of carried slot k's [n] array in the carried buffer, 8-aligned. */
static size_t slot_bytes(const cs_lanes_layout *lay, unsigned k)
{
    size_t bytes = (size_t)lay->n * slot_element(lay, k);
    return (bytes + 7) & ~(size_t)7;
}

static size_t extra_bytes(const cs_lanes_layout *lay, int b)
{
    size_t n = (size_t)lay->n;
    switch ((extra_buf)b) {
    case EXTRA_OBS_INT: case EXTRA_FINAL_OBS_INT: return n * lay->n_obs_int * sizeof(long long);
    case EXTRA_INFO: case EXTRA_FINAL_INFO: return n * lay->n_info * sizeof(double);
    case EXTRA_STEP_WORDS: return n * lay->n_step_draws * sizeof(unsigned int);
    case EXTRA_RESTART_WORDS: return n * lay->n_restart_draws * sizeof(unsigned int);
    default: return 0;
    }
}

static size_t buf_bytes(const cs_lanes_layout *lay, int b)
{
    size_t n = (size_t)lay->n, obs = lay->n_obs ? lay->n_obs : 1, carried = 0;
    switch ((cs_buf)b) {
    case CS_BUF_SEGSTEP: return n * sizeof(int);
    case CS_BUF_OBS: case CS_BUF_FINAL_OBS: return n * obs * sizeof(float);
    case CS_BUF_REWARD: case CS_BUF_SEG_RETURN: case CS_BUF_RETURN_SUM: return n * sizeof(double);
    case CS_BUF_TERMINATED: case CS_BUF_TRUNCATED: case CS_BUF_PENDING: return n;
    case CS_BUF_SEGMENTS: case CS_BUF_NONFINITE: case CS_BUF_INDEX_FAULT: return n * sizeof(long long);
    /* [slot][n] in one allocation, so that CUDA callers get one pointer */
    case CS_BUF_CARRIED:
        for (unsigned k = 0; k < lay->n_carried; k++)
            carried += slot_bytes(lay, k);
        return carried;
    case CS_BUF_PARAMS: return n * lay->n_params * lay->real_size;
    case CS_BUF_INPUTS: return n * lay->n_inputs * 4;
    default: return 0;
    }
}

long long cs_cuda_bytes_needed(const cs_cuda *c, const cs_lanes_layout *lay)
{
    long long total = 0;
    for (int b = 0; b < CS_BUF_COUNT; b++)
        total += (long long)buf_bytes(lay, b);
    for (int b = 0; b < EXTRA_COUNT; b++)
        total += (long long)extra_bytes(lay, b);
    total += (long long)(lay->n_carried + lay->n_params + lay->n_inputs + 3) * (long long)sizeof(cs_cu_deviceptr);
    if (c->sched.fusion != CS_FUSION_FULL)
        total += (long long)c->scratch_per_lane * lay->n;
    return total;
}

static int alloc_zero(cs_cuda *c, cs_cu_deviceptr *p, size_t bytes, char *err, size_t err_size)
{
    if (bytes == 0)
        bytes = 8;
    CU(c->cu.MemAlloc(p, bytes), "allocating %zu bytes on %s", bytes, c->info.name);
    CU(c->cu.MemsetD8(*p, 0, bytes), "clearing %zu bytes on %s", bytes, c->info.name);
    return 0;
}

static int alloc_current(cs_cuda *c, char *err, size_t err_size)
{
    const cs_lanes_layout *lay = &c->lay;
    size_t n = (size_t)lay->n;
    int rc;
    for (int b = 0; b < CS_BUF_COUNT; b++)
        if (buf_bytes(lay, b) && (rc = alloc_zero(c, &c->buf[b], buf_bytes(lay, b), err, err_size)))
            return rc;
    for (int b = 0; b < EXTRA_COUNT; b++)
        if (extra_bytes(lay, b) && (rc = alloc_zero(c, &c->extra[b], extra_bytes(lay, b), err, err_size)))
            return rc;
    c->carried = calloc(lay->n_carried + 1, sizeof *c->carried);
    c->params = calloc(lay->n_params + 1, sizeof *c->params);
    c->inputs = calloc(lay->n_inputs + 1, sizeof *c->inputs);
    if (!c->carried || !c->params || !c->inputs) {
        cs_cuda_say(err, err_size, "out of memory");
        return CS_CUDA_FAIL;
    }
    size_t at = 0;
    for (unsigned k = 0; k < lay->n_carried; at += slot_bytes(lay, k), k++)
        c->carried[k] = c->buf[CS_BUF_CARRIED] + at;
    for (unsigned k = 0; k < lay->n_params; k++)
        c->params[k] = c->buf[CS_BUF_PARAMS] + k * n * lay->real_size;
    for (unsigned k = 0; k < lay->n_inputs; k++)
        c->inputs[k] = c->buf[CS_BUF_INPUTS] + k * n * 4;
    struct {
        cs_cu_deviceptr *dst, *arr;
        unsigned count;
    } tables[] = {{&c->carried_ptrs, c->carried, lay->n_carried},
                  {&c->params_ptrs, c->params, lay->n_params},
                  {&c->inputs_ptrs, c->inputs, lay->n_inputs}};
    for (int t = 0; t < 3; t++) {
        size_t bytes = (tables[t].count + 1) * sizeof(cs_cu_deviceptr);
        if ((rc = alloc_zero(c, tables[t].dst, bytes, err, err_size)))
            return rc;
        CU(c->cu.MemcpyHtoD(*tables[t].dst, tables[t].arr, bytes), "copying buffer addresses to %s", c->info.name);
    }
    if (c->sched.fusion != CS_FUSION_FULL && c->scratch_per_lane &&
        (rc = alloc_zero(c, &c->scratch, (size_t)c->scratch_per_lane * n, err, err_size)))
        return rc;
    c->allocated = true;
    return 0;
}

int cs_cuda_alloc(cs_cuda *c, const cs_lanes_layout *lay, char *err, size_t err_size)
{
    if (!c->mod) {
        cs_cuda_say(err, err_size, "allocating before a kernel module is loaded");
        return CS_CUDA_FAIL;
    }
    if (lay->n < 1 || lay->real_size == 0) {
        cs_cuda_say(err, err_size, "bad buffer layout");
        return CS_CUDA_FAIL;
    }
    int result = enter(c, err, err_size);
    if (result)
        return result;
    free_buffers(c);
    c->lay = *lay;
    if (lay->slot_size) {   /* the caller's may go: a copy of our own */
        if (!(c->slot_size = malloc((lay->n_carried + 1) * sizeof *c->slot_size))) {
            cs_cuda_say(err, err_size, "out of memory");
            result = CS_CUDA_FAIL;
            goto out;
        }
        memcpy(c->slot_size, lay->slot_size, lay->n_carried * sizeof *c->slot_size);
        c->lay.slot_size = c->slot_size;
    }
    size_t free_bytes = 0, total_bytes = 0;
    long long need = cs_cuda_bytes_needed(c, lay);
    CU_IN(c->cu.MemGetInfo(&free_bytes, &total_bytes), "reading the free memory of %s", c->info.name);
    if (need > (long long)free_bytes) {
        cs_cuda_say(err, err_size, "%lld environments need %lld bytes of device memory, more than the %zu free on %s",
            lay->n, need, free_bytes, c->info.name);
        result = CS_CUDA_LIMIT;
        goto out;
    }
    if ((result = alloc_current(c, err, err_size)))
        free_buffers(c);
out:
    leave(c);
    return result;
}

/* The device address and host address of buffer b's slot k (k: 0 for the
 * single-array buffers), and its size. */
typedef struct {
    cs_cu_deviceptr dev;
    void *host;
    size_t bytes;
} region;

static unsigned regions(const cs_cuda *c, int b, const cs_lanes *host, region *out, unsigned max)
{
    const cs_lanes_layout *lay = &c->lay;
    size_t n = (size_t)lay->n;
    unsigned count = 0;
    switch ((cs_buf)b) {
    case CS_BUF_CARRIED:
        for (unsigned k = 0; k < lay->n_carried && count < max; k++)
            out[count++] = (region){c->carried[k], host->carried ? host->carried[k] : NULL, n * slot_element(lay, k)};
        return count;
    case CS_BUF_OBS: case CS_BUF_FINAL_OBS: {   /* the float rows, then the int64 rows, then the info rows */
        bool last = b == CS_BUF_FINAL_OBS;
        out[count++] = (region){c->buf[b], last ? host->final_obs : host->obs, buf_bytes(lay, b)};
        if (count < max)
            out[count++] = (region){c->extra[last ? EXTRA_FINAL_OBS_INT : EXTRA_OBS_INT],
                                    last ? host->final_obs_int : host->obs_int, extra_bytes(lay, EXTRA_OBS_INT)};
        if (count < max)
            out[count++] = (region){c->extra[last ? EXTRA_FINAL_INFO : EXTRA_INFO], last ? host->final_info : host->info,
                                    extra_bytes(lay, EXTRA_INFO)};
        return count;
    }
    case CS_BUF_PARAMS:
        for (unsigned k = 0; k < lay->n_params && count < max; k++)
            out[count++] = (region){c->params[k], host->params ? host->params[k] : NULL, n * lay->real_size};
        return count;
    case CS_BUF_INPUTS:
        for (unsigned k = 0; k < lay->n_inputs && count < max; k++)
            out[count++] = (region){c->inputs[k], host->inputs ? host->inputs[k] : NULL, n * 4};
        return count;
    default:
        break;
    }
    void *h = NULL;
    switch ((cs_buf)b) {
    case CS_BUF_SEGSTEP: h = host->segstep; break;
    case CS_BUF_REWARD: h = host->reward; break;
    case CS_BUF_TERMINATED: h = host->terminated; break;
    case CS_BUF_TRUNCATED: h = host->truncated; break;
    case CS_BUF_PENDING: h = host->pending; break;
    case CS_BUF_SEG_RETURN: h = host->seg_return; break;
    case CS_BUF_SEGMENTS: h = host->segments; break;
    case CS_BUF_RETURN_SUM: h = host->return_sum; break;
    case CS_BUF_NONFINITE: h = host->nonfinite; break;
    case CS_BUF_INDEX_FAULT: h = host->index_fault; break;
    default: break;
    }
    /* index faults are optional (lanes.h): a caller that keeps none copies none */
    out[0] = (region){c->buf[b], h, b == CS_BUF_INDEX_FAULT && !h ? 0 : buf_bytes(lay, b)};
    return 1;
}

static const char *const buf_names[CS_BUF_COUNT] = {
    "state", "parameters", "episode steps", "inputs", "observations", "final observations", "rewards",
    "terminated flags", "truncated flags", "pending restarts", "running returns", "episode counts",
    "return sums", "nonfinite counts", "index faults",
};

typedef enum { COPY_FETCH, COPY_READ, COPY_UPLOAD, COPY_ZERO } copy_kind;

static int copy(cs_cuda *c, copy_kind kind, unsigned mask, const cs_lanes *host, char *err, size_t err_size)
{
    if (!c->allocated) {
        cs_cuda_say(err, err_size, "the device buffers are not allocated");
        return CS_CUDA_FAIL;
    }
    if (kind == COPY_FETCH && !(mask & c->dirty))
        return 0;
    int result = enter(c, err, err_size);
    if (result)
        return result;
    unsigned max = c->lay.n_carried + c->lay.n_params + c->lay.n_inputs + 3;
    region *r = malloc(max * sizeof *r);
    if (!r) {
        cs_cuda_say(err, err_size, "out of memory");
        result = CS_CUDA_FAIL;
        goto out;
    }
    for (int b = 0; b < CS_BUF_COUNT; b++) {
        if (!(mask & CS_BUF_BIT(b)) || (kind == COPY_FETCH && !(c->dirty & CS_BUF_BIT(b))))
            continue;
        unsigned nr = regions(c, b, host, r, max);
        for (unsigned k = 0; k < nr; k++) {
            if (!r[k].bytes)
                continue;   /* a buffer the program has none of (discrete observations, words) */
            if (!r[k].host) {
                cs_cuda_say(err, err_size, "no host buffer for the %s", buf_names[b]);
                result = CS_CUDA_FAIL;
                goto out;
            }
            if (kind == COPY_FETCH || kind == COPY_READ)
                CU_IN(c->cu.MemcpyDtoH(r[k].host, r[k].dev, r[k].bytes), "copying the %s from %s", buf_names[b],
                      c->info.name);
            else if (kind == COPY_UPLOAD)
                CU_IN(c->cu.MemcpyHtoD(r[k].dev, r[k].host, r[k].bytes), "copying the %s to %s", buf_names[b],
                      c->info.name);
            else {
                CU_IN(c->cu.MemsetD8(r[k].dev, 0, r[k].bytes), "clearing the %s on %s", buf_names[b], c->info.name);
                memset(r[k].host, 0, r[k].bytes);
            }
        }
        c->dirty &= ~CS_BUF_BIT(b);
    }
out:
    free(r);
    leave(c);
    return result;
}

int cs_cuda_fetch(cs_cuda *c, unsigned mask, const cs_lanes *host, char *err, size_t err_size)
{
    return copy(c, COPY_FETCH, mask, host, err, err_size);
}

int cs_cuda_read(cs_cuda *c, unsigned mask, const cs_lanes *host, char *err, size_t err_size)
{
    return copy(c, COPY_READ, mask, host, err, err_size);
}

int cs_cuda_upload(cs_cuda *c, unsigned mask, const cs_lanes *host, char *err, size_t err_size)
{
    return copy(c, COPY_UPLOAD, mask, host, err, err_size);
}

int cs_cuda_zero(cs_cuda *c, unsigned mask, const cs_lanes *host, char *err, size_t err_size)
{
    return copy(c, COPY_ZERO, mask, host, err, err_size);
}

unsigned cs_cuda_dirty(const cs_cuda *c) { return c->dirty; }

int cs_cuda_buffers_of(const cs_cuda *c, cs_cuda_buffers *out)
{
    memset(out, 0, sizeof *out);
    if (!c->allocated)
        return CS_CUDA_FAIL;
    out->ordinal = c->ordinal;
    out->context = c->ctx;
    for (int b = 0; b < CS_BUF_COUNT; b++)
        out->buf[b] = c->buf[b];
    return 0;
}

/* ---- launching ---- */

/* The caller's lanes with the device buffers in place of the host ones. */
static cs_lanes device_lanes(const cs_cuda *c, const cs_lanes *l)
{
    cs_lanes d = *l;
    d.stride = c->lay.n;
    d.carried = (void **)(uintptr_t)c->carried_ptrs;
    d.params = (void **)(uintptr_t)c->params_ptrs;
    d.inputs = (void **)(uintptr_t)c->inputs_ptrs;
    d.segstep = (int *)(uintptr_t)c->buf[CS_BUF_SEGSTEP];
    d.obs = (float *)(uintptr_t)c->buf[CS_BUF_OBS];
    d.final_obs = (float *)(uintptr_t)c->buf[CS_BUF_FINAL_OBS];
    d.reward = (double *)(uintptr_t)c->buf[CS_BUF_REWARD];
    d.terminated = (unsigned char *)(uintptr_t)c->buf[CS_BUF_TERMINATED];
    d.truncated = (unsigned char *)(uintptr_t)c->buf[CS_BUF_TRUNCATED];
    d.pending = (unsigned char *)(uintptr_t)c->buf[CS_BUF_PENDING];
    d.seg_return = (double *)(uintptr_t)c->buf[CS_BUF_SEG_RETURN];
    d.segments = (long long *)(uintptr_t)c->buf[CS_BUF_SEGMENTS];
    d.return_sum = (double *)(uintptr_t)c->buf[CS_BUF_RETURN_SUM];
    d.nonfinite = (long long *)(uintptr_t)c->buf[CS_BUF_NONFINITE];
    d.index_fault = (long long *)(uintptr_t)c->buf[CS_BUF_INDEX_FAULT];
    d.obs_int = (long long *)(uintptr_t)c->extra[EXTRA_OBS_INT];
    d.final_obs_int = (long long *)(uintptr_t)c->extra[EXTRA_FINAL_OBS_INT];
    d.info = (double *)(uintptr_t)c->extra[EXTRA_INFO];
    d.final_info = (double *)(uintptr_t)c->extra[EXTRA_FINAL_INFO];
    d.step_words = d.restart_words = NULL;   /* replays: run_fixed's, once uploaded */
    d.record = NULL;                          /* records: cs_cuda_rollout's device rows */
    return d;
}

/* Arguments: the lanes, then the scratch pointer (read only by kernels that
 * take it: the driver copies as many parameters as the kernel declares). */
static int launch(cs_cuda *c, const kernel_fn *k, const char *name, cs_lanes *d, char *err, size_t err_size)
{
    long long lanes = d->end - d->begin;
    if (lanes <= 0)
        return 0;
    long long grid = (lanes + k->block - 1) / k->block;
    if (grid > INT_MAX)
        grid = INT_MAX;   /* grid-stride: fewer blocks are still correct */
    void *args[2] = {d, &c->scratch};
    CU(c->cu.LaunchKernel(k->fn, (unsigned)grid, 1, 1, (unsigned)k->block, 1, 1, 0, NULL, args, NULL),
       "launching %s (%lld blocks of %d threads)", name, grid, k->block);
    return 0;
}

static int check_lanes(const cs_cuda *c, const cs_lanes *l, char *err, size_t err_size)
{
    if (!c->mod || !c->allocated) {
        cs_cuda_say(err, err_size, "no kernel loaded or no device buffers");
        return CS_CUDA_FAIL;
    }
    if (l->begin < 0 || l->end > c->lay.n || l->begin > l->end) {
        cs_cuda_say(err, err_size, "lanes [%lld, %lld) outside the batch of %lld", l->begin, l->end, c->lay.n);
        return CS_CUDA_FAIL;
    }
    return 0;
}

/* Every buffer a kernel may write. */
#define WRITTEN (CS_BUF_ALL & ~CS_BUF_BIT(CS_BUF_INPUTS))

/* The words a step or restart replays (lanes.h), uploaded where l gives
 * them (rows of the batch's stride): the device's copies in d, else none. */
static int replay_words(cs_cuda *c, const cs_lanes *l, cs_lanes *d, char *err, size_t err_size)
{
    const unsigned int *host[2] = {l->step_words, l->restart_words};
    const extra_buf which[2] = {EXTRA_STEP_WORDS, EXTRA_RESTART_WORDS};
    const unsigned int **dev[2] = {&d->step_words, &d->restart_words};
    int result = enter(c, err, err_size);
    if (result)
        return result;
    for (int k = 0; k < 2; k++) {
        size_t bytes = extra_bytes(&c->lay, which[k]);
        if (!host[k] || !bytes)
            continue;
        CU_IN(c->cu.MemcpyHtoD(c->extra[which[k]], host[k], bytes), "copying replayed words to %s", c->info.name);
        *dev[k] = (const unsigned int *)(uintptr_t)c->extra[which[k]];
    }
out:
    leave(c);
    return result;
}

static int run_fixed(cs_cuda *c, fixed_fn which, const cs_lanes *l, char *err, size_t err_size)
{
    static const char *const names[FN_FIXED] = {"cs_kernel_restart", "cs_kernel_step", "cs_kernel_rollout"};
    int result = check_lanes(c, l, err, err_size);
    cs_lanes d = device_lanes(c, l);
    if (!result && which != FN_ROLLOUT)
        result = replay_words(c, l, &d, err, err_size);
    if (result || (result = enter(c, err, err_size)))
        return result;
    c->dirty |= WRITTEN;
    if ((result = launch(c, &c->fixed[which], names[which], &d, err, err_size)))
        goto out;
    CU_IN(c->cu.CtxSynchronize(), "running %s on %s", names[which], c->info.name);
out:
    leave(c);
    return result;
}

int cs_cuda_restart(cs_cuda *c, const cs_lanes *l, char *err, size_t err_size)
{
    return run_fixed(c, FN_RESTART, l, err, err_size);
}

int cs_cuda_step(cs_cuda *c, const cs_lanes *l, bool inputs_on_device, char *err, size_t err_size)
{
    int rc = 0;
    if (!inputs_on_device)
        rc = cs_cuda_upload(c, CS_BUF_BIT(CS_BUF_INPUTS), l, err, err_size);
    return rc ? rc : run_fixed(c, FN_STEP, l, err, err_size);
}

/* Device rows for `rows` steps of every record (the context entered), kept
 * between calls and grown as needed. */
static int record_rows(cs_cuda *c, long long rows, char *err, size_t err_size)
{
    if (rows <= c->rec_rows)
        return 0;
    const unsigned nr = c->lay.n_records;
    if ((size_t)rows > SIZE_MAX / 4 / (size_t)c->lay.n / nr) {
        cs_cuda_say(err, err_size, "recording %lld steps of %lld environments overflows a size", rows, c->lay.n);
        return CS_CUDA_LIMIT;
    }
    size_t per = (size_t)rows * (size_t)c->lay.n * 4, free_bytes = 0, total_bytes = 0;
    cs_cu_deviceptr old[2] = {c->rec, c->rec_ptrs};
    for (int k = 0; k < 2; k++)
        if (old[k])
            c->cu.MemFree(old[k]);
    c->rec = c->rec_ptrs = 0;
    c->rec_rows = 0;
    CU(c->cu.MemGetInfo(&free_bytes, &total_bytes), "reading the free memory of %s", c->info.name);
    if (per * nr > free_bytes) {
        cs_cuda_say(err, err_size, "recording %u values of %lld environments for %lld steps needs %zu bytes, more than "
                    "the %zu free on %s", nr, c->lay.n, rows, per * nr, free_bytes, c->info.name);
        return CS_CUDA_LIMIT;
    }
    cs_cu_deviceptr ptrs[nr];
    int rc = alloc_zero(c, &c->rec, per * nr, err, err_size);
    for (unsigned k = 0; k < nr; k++)
        ptrs[k] = c->rec + k * per;
    if (rc || (rc = alloc_zero(c, &c->rec_ptrs, sizeof ptrs, err, err_size)))
        return rc;
    CU(c->cu.MemcpyHtoD(c->rec_ptrs, ptrs, sizeof ptrs), "copying record addresses to %s", c->info.name);
    c->rec_rows = rows;
    return 0;
}

/* A rollout call's records, from the device rows (row 0: the call's first
 * step) to the caller's (row 0: l->record_t0). */
static int copy_records(cs_cuda *c, const cs_lanes *l, char *err, size_t err_size)
{
    size_t rows = (size_t)l->steps * (size_t)c->lay.n * 4, per = (size_t)c->rec_rows * (size_t)c->lay.n * 4;
    size_t at = (size_t)(l->t - l->record_t0) * (size_t)c->lay.n * 4;
    for (unsigned r = 0; r < c->lay.n_records; r++)
        CU(c->cu.MemcpyDtoH((char *)l->record[r] + at, c->rec + r * per, rows), "copying the records from %s",
           c->info.name);
    return 0;
}

int cs_cuda_rollout(cs_cuda *c, const cs_lanes *l, long long *launches, char *err, size_t err_size)
{
    int result = check_lanes(c, l, err, err_size);
    if (result)
        return result;
    if (l->steps <= 0 || l->end == l->begin)
        return 0;
    bool records = l->record && c->lay.n_records;
    if (records && (l->begin != 0 || l->end != c->lay.n || l->stride != c->lay.n || l->t < l->record_t0)) {
        cs_cuda_say(err, err_size, "records are kept for whole batches from their first step, not lanes [%lld, %lld)",
                    l->begin, l->end);
        return CS_CUDA_FAIL;
    }
    if ((result = enter(c, err, err_size)))
        return result;
    cs_lanes d = device_lanes(c, l);
    long long count = 0;
    if (records) {
        if ((result = record_rows(c, l->steps, err, err_size)))
            goto out;
        d.record = (void **)(uintptr_t)c->rec_ptrs;
        d.record_t0 = l->t;
    }
    c->dirty |= WRITTEN;
    if (c->sched.fusion == CS_FUSION_FULL) {
        long long chunk = c->sched.persistent ? l->steps : c->sched.unroll;
        for (long long s = 0; s < l->steps; s += chunk) {
            d.t = l->t + s;
            d.steps = l->steps - s < chunk ? l->steps - s : chunk;
            if ((result = launch(c, &c->fixed[FN_ROLLOUT], "cs_kernel_rollout", &d, err, err_size)))
                goto out;
            count++;
        }
    } else {
        d.steps = 1;
        for (long long s = 0; s < l->steps; s++) {
            d.t = l->t + s;
            for (unsigned k = 0; k < c->n_parts; k++) {
                char name[32];
                snprintf(name, sizeof name, "cs_rollout_k%u", k);
                if ((result = launch(c, &c->parts[k], name, &d, err, err_size)))
                    goto out;
                count++;
            }
        }
    }
    CU_IN(c->cu.CtxSynchronize(), "running the rollout on %s", c->info.name);
    if (records)
        result = copy_records(c, l, err, err_size);
out:
    if (launches)
        *launches += count;
    leave(c);
    return result;
}

/* ---- the generic half: modules, memory and launches for other kernels ---- */

int cs_cuda_module_load(cs_cuda *c, const cs_cubin *bin, cs_cuda_module *out, char *err, size_t err_size)
{
    *out = NULL;
    if (!bin->data || !bin->size || (bin->ptx && bin->data[bin->size - 1] != 0)) {
        cs_cuda_say(err, err_size, "no cubin or NUL-terminated PTX to load");
        return CS_CUDA_FAIL;
    }
    int result = enter(c, err, err_size);
    if (result)
        return result;
    cs_cu_module mod = NULL;
    CU_IN(c->cu.ModuleLoadData(&mod, bin->data), "loading a module on %s", c->info.name);
    *out = (cs_cuda_module)mod;
out:
    leave(c);
    return result;
}

void cs_cuda_module_unload(cs_cuda *c, cs_cuda_module m)
{
    char err[8];
    if (m && enter(c, err, sizeof err) == 0) {
        c->cu.ModuleUnload((cs_cu_module)m);
        leave(c);
    }
}

int cs_cuda_module_function(cs_cuda *c, cs_cuda_module m, const char *name, cs_cuda_function *out, char *err,
                            size_t err_size)
{
    int result = enter(c, err, err_size);
    if (result)
        return result;
    cs_cu_function fn = NULL;
    CU_IN(c->cu.ModuleGetFunction(&fn, (cs_cu_module)m, name), "the module lacks %s", name);
    *out = (cs_cuda_function)fn;
out:
    leave(c);
    return result;
}

int cs_cuda_mem_alloc(cs_cuda *c, size_t bytes, cs_cuda_ptr *out, char *err, size_t err_size)
{
    *out = 0;
    int result = enter(c, err, err_size);
    if (result)
        return result;
    cs_cu_deviceptr p = 0;
    CU_IN(c->cu.MemAlloc(&p, bytes ? bytes : 1), "allocating %zu bytes on %s", bytes, c->info.name);
    *out = p;
out:
    leave(c);
    return result;
}

void cs_cuda_mem_free(cs_cuda *c, cs_cuda_ptr p)
{
    char err[8];
    if (p && enter(c, err, sizeof err) == 0) {
        c->cu.MemFree(p);
        leave(c);
    }
}

static int mem_copy(cs_cuda *c, bool up, cs_cu_deviceptr dev, void *host, size_t bytes, char *err, size_t err_size)
{
    if (!bytes)
        return 0;
    int result = enter(c, err, err_size);
    if (result)
        return result;
    CU_IN(up ? c->cu.MemcpyHtoD(dev, host, bytes) : c->cu.MemcpyDtoH(host, dev, bytes), "copying %zu bytes %s %s",
          bytes, up ? "to" : "from", c->info.name);
out:
    leave(c);
    return result;
}

int cs_cuda_mem_upload(cs_cuda *c, cs_cuda_ptr dst, const void *src, size_t bytes, char *err, size_t err_size)
{
    return mem_copy(c, true, dst, (void *)(uintptr_t)src, bytes, err, err_size);
}

int cs_cuda_mem_download(cs_cuda *c, void *dst, cs_cuda_ptr src, size_t bytes, char *err, size_t err_size)
{
    return mem_copy(c, false, src, dst, bytes, err, err_size);
}

int cs_cuda_launch_ptr(cs_cuda *c, cs_cuda_function fn, const char *name, long long threads, cs_cuda_ptr arg,
                       char *err, size_t err_size)
{
    if (threads <= 0)
        return 0;
    long long grid = (threads + CS_CUDA_LAUNCH_BLOCK - 1) / CS_CUDA_LAUNCH_BLOCK;
    if (grid > INT_MAX) {
        cs_cuda_say(err, err_size, "%s: %lld threads are more than one launch runs", name, threads);
        return CS_CUDA_FAIL;
    }
    int result = enter(c, err, err_size);
    if (result)
        return result;
    void *args[1] = {&arg};
    CU_IN(c->cu.LaunchKernel((cs_cu_function)fn, (unsigned)grid, 1, 1, CS_CUDA_LAUNCH_BLOCK, 1, 1, 0, NULL, args, NULL),
          "launching %s (%lld blocks of %d threads)", name, grid, CS_CUDA_LAUNCH_BLOCK);
out:
    leave(c);
    return result;
}

int cs_cuda_synchronize(cs_cuda *c, const char *what, char *err, size_t err_size)
{
    int result = enter(c, err, err_size);
    if (result)
        return result;
    CU_IN(c->cu.CtxSynchronize(), "%s on %s", what, c->info.name);
out:
    leave(c);
    return result;
}
