/* Placed in front of a source of the emitter's CUDA dialect, this makes it
 * compile as host C11 (cc -std=c11 -shared -fPIC -include cuda_shim.h):
 * kernels become plain exported functions, device functions static inline,
 * exported constants plain const globals (found with dlsym), and the launch
 * coordinates file-scope variables that a host "launch" sets:
 *
 *     gridDim = {G, 1, 1}; blockDim = {B, 1, 1};
 *     for (blockIdx.x = 0; blockIdx.x < G; blockIdx.x++)
 *         for (threadIdx.x = 0; threadIdx.x < B; threadIdx.x++)
 *             kernel(lanes);
 *
 * Threads run one after another, which is a valid schedule for kernels whose
 * threads never talk to each other (cartsim's lanes are independent). The
 * CUDA path's semantics (grid-stride lanes, what each entry reads and writes,
 * scratch between kernels) are then checked on any machine, against the cpu
 * backend (tests/test_cuda.c).
 */
#ifndef CS_CUDA_SHIM_H
#define CS_CUDA_SHIM_H

#include <math.h>
#include <stddef.h>

#define CS_GLOBAL
#define CS_DEVICE static inline
#define CS_EXPORT

/* CUDA keywords a dialect source may still spell out. */
#define __global__
#define __device__
#define __host__
#define __forceinline__
#define __noinline__
#define __restrict__ restrict
#define __launch_bounds__(...)

/* pow through glibc, as the cpu backend calls it (its cs_pow): left alone,
 * the host compiler turns pow(x, 2.0) into x * x, which is not always glibc's
 * pow(x, 2.0) to the last bit. (NVRTC makes its own choice on the GPU: there
 * the CUDA libm decides, and only a tolerance applies.) */
static inline double cs_shim_pow(double a, double b)
{
    volatile double e = b;
    return pow(a, e);
}
static inline float cs_shim_powf(float a, float b)
{
    volatile float e = b;
    return powf(a, e);
}
#define pow cs_shim_pow
#define powf cs_shim_powf

typedef struct {
    unsigned int x, y, z;
} cs_shim_dim3;

/* Set by the launching host code; read by the kernels. Not static: the
 * launcher finds them in the shared object with dlsym. */
cs_shim_dim3 blockIdx, threadIdx, blockDim, gridDim;

#endif
