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
