/* Which random bits a draw uses. Pasted verbatim (after philox.h) in front of
 * every generated source and included by the interpreter, so every backend
 * draws the same bits; it includes nothing.
 *
 * Philox4x32-10 with key = {lane, seed low 32 bits} and
 * counter = {block low, block high, stream << 16 | sub, seed high 32 bits}.
 *
 * Step stream (a policy's draws): draw k of global step t is word
 * w = t * draws_per_step + k of the lane's sequence; Philox call w / 4 gives
 * words w - w % 4 .. +3. Four words per call, so a step that needs one draw
 * calls Philox only every fourth step, and the words a step uses depend on t
 * alone: results do not change with unrolling, threads or backend.
 *
 * Restart stream: the fresh state that a lane has at global time tau (0 for the
 * first reset, t + 1 after an episode ends at step t) uses draws k of block
 * {tau, RESTART << 16 | k / 4}, word k % 4.
 */
#ifndef CS_RNG_H
#define CS_RNG_H

CS_INLINE void cs_rng_block(unsigned long long seed, unsigned int lane, unsigned long long block,
                            unsigned int stream_sub, unsigned int out[4])
{
    unsigned int ctr[4], key[2];
    ctr[0] = (unsigned int)block;
    ctr[1] = (unsigned int)(block >> 32);
    ctr[2] = stream_sub;
    ctr[3] = (unsigned int)(seed >> 32);
    key[0] = lane;
    key[1] = (unsigned int)seed;
    cs_philox4x32_10(ctr, key, out);
}

/* cs_rng_block for the lanes j < n of a block of lanes, into rows of words:
 * out[k * stride + j] is word k of lane j, whose key is lane + at[j] (at
 * NULL: lane + j % per_block) and whose block is block + j / per_block.
 * With AVX-512F (philox.h's CS_PHILOX_X8) eight lanes at a time, and the
 * columns up to the next multiple of 8 are written too (with some lane's
 * words): the rows must hold them, and at[] must be readable there. The C
 * dialect's (a CUDA thread draws its own lane's block). */
CS_INLINE void cs_rng_lanes(unsigned long long seed, unsigned int lane, const int *at, int n, unsigned long long block,
                            int per_block, unsigned int stream_sub, unsigned int *out, int stride)
{
#ifdef CS_PHILOX_X8
    typedef unsigned int u32x8 __attribute__((vector_size(32), aligned(4)));
    const cs_philox_x8 iota = {0, 1, 2, 3, 4, 5, 6, 7};
    for (int g = 0; g < n; g += 8) {
        cs_philox_x8 key, blk, c[4];
        if (!at && per_block % 8 == 0) {   /* eight keys in a row, one block */
            key = (cs_philox_x8){0} + (unsigned long long)(lane + (unsigned int)(g % per_block)) + iota;
            blk = (cs_philox_x8){0} + (block + (unsigned long long)(g / per_block));
        } else {
            for (int l = 0; l < 8; l++) {
                int j = g + l;
                key[l] = lane + (unsigned int)(at ? at[j] : j % per_block);
                blk[l] = block + (unsigned long long)(j / per_block);
            }
        }
        c[0] = blk & 0xffffffffull;
        c[1] = blk >> 32;
        c[2] = (cs_philox_x8){0} + stream_sub;
        c[3] = (cs_philox_x8){0} + (seed >> 32);
        cs_philox4x32_10_x8(c, key, (unsigned int)seed);
        for (int k = 0; k < 4; k++)
            *(u32x8 *)(out + k * stride + g) = __builtin_convertvector(c[k], u32x8);
    }
#else
    for (int j = 0; j < n; j++) {
        unsigned int w[4];
        cs_rng_block(seed, lane + (unsigned int)(at ? at[j] : j % per_block), block + (unsigned long long)(j / per_block),
                     stream_sub, w);
        for (int k = 0; k < 4; k++)
            out[k * stride + j] = w[k];
    }
#endif
}

/* Uniform [0, 1): exact conversions, no rounding up to 1. */
CS_INLINE double cs_u01_f64(unsigned int w) { return (double)w * (1.0 / 4294967296.0); }
CS_INLINE float cs_u01_f32(unsigned int w) { return (float)(w >> 8) * (1.0f / 16777216.0f); }

/* The word for step-stream draw k at global step t (one Philox call; the
 * emitter caches blocks instead of calling this per draw). */
CS_INLINE unsigned int cs_rng_step_word(unsigned long long seed, unsigned int lane, unsigned long long t,
                                        unsigned int draws_per_step, unsigned int k)
{
    unsigned long long w = t * draws_per_step + k;
    unsigned int out[4];
    cs_rng_block(seed, lane, w >> 2, 0u, out);
    return out[w & 3];
}

CS_INLINE unsigned int cs_rng_restart_word(unsigned long long seed, unsigned int lane, unsigned long long tau,
                                           unsigned int k)
{
    unsigned int out[4];
    cs_rng_block(seed, lane, tau, (1u << 16) | (k >> 2), out);
    return out[k & 3];
}

#endif
