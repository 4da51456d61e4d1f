/* The few CUDA driver and NVRTC declarations the cuda backend uses, written
 * out here so that cartsim builds where cuda.h and nvrtc.h are absent: both
 * libraries are opened with dlopen at run time (jit/cuda_lib.c).
 *
 * Names carry a cs_ prefix so that a file may include this and cuda.h
 * together (tests/test_cuda.c does, to check every constant below against the
 * real headers when they are installed). The values are those of the CUDA
 * driver API, stable across releases; the symbol names are the versioned ones
 * that cuda.h's macros select (cuMemAlloc is cuMemAlloc_v2, ...).
 */
#ifndef CS_CUDA_API_H
#define CS_CUDA_API_H

#include <stddef.h>

typedef int cs_cu_result;                         /* CUresult */
typedef int cs_cu_device;                         /* CUdevice */
typedef struct cs_cu_ctx_st *cs_cu_context;       /* CUcontext */
typedef struct cs_cu_mod_st *cs_cu_module;        /* CUmodule */
typedef struct cs_cu_func_st *cs_cu_function;     /* CUfunction */
typedef struct cs_cu_stream_st *cs_cu_stream;     /* CUstream */
typedef unsigned long long cs_cu_deviceptr;       /* CUdeviceptr (64-bit) */
typedef size_t (*cs_cu_b2d_size)(int block);      /* CUoccupancyB2DSize */

/* CUresult */
#define CS_CUDA_SUCCESS 0
#define CS_CUDA_ERROR_OUT_OF_MEMORY 2
#define CS_CUDA_ERROR_STUB_LIBRARY 34
#define CS_CUDA_ERROR_NO_DEVICE 100
#define CS_CUDA_ERROR_NOT_FOUND 500

/* CUdevice_attribute */
#define CS_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CS_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CS_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76

/* CUfunction_attribute */
#define CS_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK 0
#define CS_CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES 3
#define CS_CU_FUNC_ATTRIBUTE_NUM_REGS 4

/* The driver functions, as resolved from libcuda.so.1. */
typedef struct {
    void *lib;
    cs_cu_result (*Init)(unsigned int flags);
    cs_cu_result (*DriverGetVersion)(int *version);
    cs_cu_result (*GetErrorName)(cs_cu_result rc, const char **name);
    cs_cu_result (*GetErrorString)(cs_cu_result rc, const char **text);
    cs_cu_result (*DeviceGetCount)(int *count);
    cs_cu_result (*DeviceGet)(cs_cu_device *dev, int ordinal);
    cs_cu_result (*DeviceGetName)(char *name, int len, cs_cu_device dev);
    cs_cu_result (*DeviceGetAttribute)(int *value, int attribute, cs_cu_device dev);
    cs_cu_result (*DeviceTotalMem)(size_t *bytes, cs_cu_device dev);                 /* _v2 */
    cs_cu_result (*DevicePrimaryCtxRetain)(cs_cu_context *ctx, cs_cu_device dev);
    cs_cu_result (*DevicePrimaryCtxRelease)(cs_cu_device dev);                       /* _v2 */
    cs_cu_result (*CtxPushCurrent)(cs_cu_context ctx);                               /* _v2 */
    cs_cu_result (*CtxPopCurrent)(cs_cu_context *ctx);                               /* _v2 */
    cs_cu_result (*CtxSynchronize)(void);
    cs_cu_result (*ModuleLoadData)(cs_cu_module *mod, const void *image);
    cs_cu_result (*ModuleUnload)(cs_cu_module mod);
    cs_cu_result (*ModuleGetFunction)(cs_cu_function *fn, cs_cu_module mod, const char *name);
    cs_cu_result (*ModuleGetGlobal)(cs_cu_deviceptr *ptr, size_t *bytes, cs_cu_module mod, const char *name); /* _v2 */
    cs_cu_result (*FuncGetAttribute)(int *value, int attribute, cs_cu_function fn);
    cs_cu_result (*OccupancyMaxPotentialBlockSize)(int *min_grid, int *block, cs_cu_function fn,
                                                   cs_cu_b2d_size smem_of_block, size_t smem, int block_limit);
    cs_cu_result (*MemGetInfo)(size_t *free_bytes, size_t *total_bytes);              /* _v2 */
    cs_cu_result (*MemAlloc)(cs_cu_deviceptr *ptr, size_t bytes);                     /* _v2 */
    cs_cu_result (*MemFree)(cs_cu_deviceptr ptr);                                     /* _v2 */
    cs_cu_result (*MemcpyHtoD)(cs_cu_deviceptr dst, const void *src, size_t bytes);   /* _v2 */
    cs_cu_result (*MemcpyDtoH)(void *dst, cs_cu_deviceptr src, size_t bytes);         /* _v2 */
    cs_cu_result (*MemsetD8)(cs_cu_deviceptr dst, unsigned char value, size_t n);     /* _v2 */
    cs_cu_result (*LaunchKernel)(cs_cu_function fn, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                                 unsigned int block_x, unsigned int block_y, unsigned int block_z,
                                 unsigned int shared_bytes, cs_cu_stream stream, void **params, void **extra);
} cs_cu_api;

typedef int cs_nvrtc_result;                      /* nvrtcResult */
typedef struct cs_nvrtc_prog_st *cs_nvrtc_program; /* nvrtcProgram */

#define CS_NVRTC_SUCCESS 0

/* The NVRTC functions, as resolved from libnvrtc. */
typedef struct {
    void *lib;
    cs_nvrtc_result (*Version)(int *major, int *minor);
    const char *(*GetErrorString)(cs_nvrtc_result rc);
    cs_nvrtc_result (*CreateProgram)(cs_nvrtc_program *prog, const char *src, const char *name, int n_headers,
                                     const char *const *headers, const char *const *include_names);
    cs_nvrtc_result (*CompileProgram)(cs_nvrtc_program prog, int n_options, const char *const *options);
    cs_nvrtc_result (*GetProgramLogSize)(cs_nvrtc_program prog, size_t *size);
    cs_nvrtc_result (*GetProgramLog)(cs_nvrtc_program prog, char *log);
    cs_nvrtc_result (*GetCUBINSize)(cs_nvrtc_program prog, size_t *size);
    cs_nvrtc_result (*GetCUBIN)(cs_nvrtc_program prog, char *cubin);
    cs_nvrtc_result (*DestroyProgram)(cs_nvrtc_program *prog);
    cs_nvrtc_result (*GetPTXSize)(cs_nvrtc_program prog, size_t *size);   /* size counts the trailing NUL */
    cs_nvrtc_result (*GetPTX)(cs_nvrtc_program prog, char *ptx);
    /* Optional (NVRTC 11.2 and later): which sm_XY it can compile for. */
    cs_nvrtc_result (*GetNumSupportedArchs)(int *n);
    cs_nvrtc_result (*GetSupportedArchs)(int *archs);
} cs_nvrtc_api;

/* cuda_lib.c: what both halves (nvrtc.c, cuda_driver.c) use to open their
 * library. */
void cs_cuda_say(char *err, size_t err_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* dlopen RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE; NULL with dlerror() set. */
void *cs_cuda_open_lib(const char *name);
/* Fills a table of function pointers (the slots after its `lib`) from
 * dlsym; names from optional_from on may be missing (left NULL). 0, or -1
 * naming the first missing one. */
int cs_cuda_resolve_table(void *lib, void *table_after_lib, const char *const *names, size_t n, size_t optional_from,
                          const char *what, char *err, size_t err_size);

#endif
