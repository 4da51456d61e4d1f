/* Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as
 * easy as 1, 2, 3", SC'11), the generator behind every random draw.
 *
 * Pasted verbatim in front of every generated source (C by gcc, CUDA by
 * NVRTC) and included by the runtime, so it includes nothing and compiles as
 * C11 and as CUDA C++. The 32x32->64 products are plain unsigned long long
 * multiplies, which NVRTC turns into mul.wide.u32; the C dialect's loops over
 * lanes call cs_philox4x32_10_x8 below where the cpu has AVX-512F.
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

/* Eight counters at once, for the C dialect's loops over lanes where the
 * compiler has AVX-512F (rng.h's cs_rng_lanes). A loop over lanes calling
 * the function above, GCC 12 vectorizes 16 lanes at a time, each product
 * widened to 64 bits, multiplied by vpmullq (a full 64x64 multiply: three
 * uops on Intel's cores) and shuffled back: it has no generic way to ask for
 * the 32x32->64 product that vpmuludq gives, hence its builtin on GCC's
 * vector extensions. Each 32-bit value rides in the low half of a 64-bit
 * slot, the high half garbage: vpmuludq reads only low halves, and the
 * caller keeps only them. A round is two vpmuludq, two shifts and two
 * three-way xors per 8 lanes; a block's refill runs about 1.9x faster on
 * the development machine's Zen 4. k0 is per lane, k1 the same for all. */
#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__) && defined(__GNUC__) && defined(__AVX512F__)
#define CS_PHILOX_X8 1
typedef unsigned long long cs_philox_x8 __attribute__((vector_size(64)));
typedef int cs_philox_i32x16 __attribute__((vector_size(64)));
typedef long long cs_philox_i64x8 __attribute__((vector_size(64)));

static inline cs_philox_x8 cs_philox_mul_x8(cs_philox_x8 a, unsigned int m)
{
    const cs_philox_x8 b = {m, m, m, m, m, m, m, m};
    return (cs_philox_x8)__builtin_ia32_pmuludq512_mask((cs_philox_i32x16)a, (cs_philox_i32x16)b,
                                                        (cs_philox_i64x8){0}, (unsigned char)0xff);
}

static inline void cs_philox4x32_10_x8(cs_philox_x8 c[4], cs_philox_x8 k0, unsigned int k1)
{
    cs_philox_x8 c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
    for (int round = 0; round < 10; round++) {
        cs_philox_x8 p0 = cs_philox_mul_x8(c0, CS_PHILOX_M0);
        cs_philox_x8 p1 = cs_philox_mul_x8(c2, CS_PHILOX_M1);
        c0 = (p1 >> 32) ^ c1 ^ k0;
        c1 = p1;
        c2 = (p0 >> 32) ^ c3 ^ k1;
        c3 = p0;
        k0 += CS_PHILOX_W0;
        k1 += CS_PHILOX_W1;
    }
    c[0] = c0;
    c[1] = c1;
    c[2] = c2;
    c[3] = c3;
}
#endif

#endif
