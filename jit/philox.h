/* Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as
 * easy as 1, 2, 3", SC'11), the generator behind every random draw.
 *
 * Pasted verbatim in front of every generated source (C by gcc, CUDA by
 * NVRTC) and included by the runtime, so it includes nothing and compiles as
 * C11 and as CUDA C++. The 32x32->64 products are plain unsigned long long
 * multiplies: gcc vectorizes a loop over lanes calling this (vpmuludq) and
 * NVRTC turns them into mul.wide.u32; an intrinsic or asm would block both.
 * Checked against Random123's known-answer vectors in tests/test_rng.c.
 */
#ifndef CS_PHILOX_H
#define CS_PHILOX_H

#ifndef CS_INLINE
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define CS_INLINE __device__ __forceinline__
#else
#define CS_INLINE static inline
#endif
#endif

/* The paper's multipliers and Weyl key increments for 4x32. */
#define CS_PHILOX_M0 0xD2511F53u
#define CS_PHILOX_M1 0xCD9E8D57u
#define CS_PHILOX_W0 0x9E3779B9u
#define CS_PHILOX_W1 0xBB67AE85u

CS_INLINE void cs_philox4x32_10(const unsigned int ctr[4], const unsigned int key[2], unsigned int out[4])
{
    unsigned int c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    unsigned int k0 = key[0], k1 = key[1];
    /* Fully unrolled by the compiler: a constant trip count, no data-dependent branches. */
    for (int round = 0; round < 10; round++) {
        unsigned long long p0 = (unsigned long long)CS_PHILOX_M0 * c0;
        unsigned long long p1 = (unsigned long long)CS_PHILOX_M1 * c2;
        unsigned int n0 = (unsigned int)(p1 >> 32) ^ c1 ^ k0;
        unsigned int n1 = (unsigned int)p1;
        unsigned int n2 = (unsigned int)(p0 >> 32) ^ c3 ^ k1;
        unsigned int n3 = (unsigned int)p0;
        c0 = n0;
        c1 = n1;
        c2 = n2;
        c3 = n3;
        /* The key schedule bumps between rounds; a bump after the last is unused. */
        k0 += CS_PHILOX_W0;
        k1 += CS_PHILOX_W1;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

#endif
