/* Philox4x32-10 and the draw layout of jit/rng.h.
 *
 * The generator must be bit-for-bit the published one (Random123 is the
 * reference implementation), and every backend must pick the same words for
 * the same draw: these tests pin both down. */
#include <criterion/criterion.h>
#include <Random123/philox.h>

#include "philox.h"
#include "rng.h"

/* Random123's own answer, through its public API. */
static void reference_philox(const unsigned int ctr[4], const unsigned int key[2], unsigned int out[4])
{
    philox4x32_ctr_t c = {{ctr[0], ctr[1], ctr[2], ctr[3]}};
    philox4x32_key_t k = {{key[0], key[1]}};
    philox4x32_ctr_t r = philox4x32_R(10, c, k);
    for (int i = 0; i < 4; i++)
        out[i] = r.v[i];
}

/* splitmix64: only to spread the test inputs over all bits. */
static unsigned long long next_input(unsigned long long *state)
{
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Random123's kat_vectors for philox4x32 with 10 rounds: ctr[4], key[2], expected[4]. */
static const unsigned int known_answers[3][10] = {
    {0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
     0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
    {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
     0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
    {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
     0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
};

Test(philox, known_answer_vectors_match_random123_header)
{
    for (int v = 0; v < 3; v++) {
        const unsigned int *ctr = known_answers[v], *key = known_answers[v] + 4;
        const unsigned int *expected = known_answers[v] + 6;
        unsigned int ours[4], theirs[4];
        cs_philox4x32_10(ctr, key, ours);
        reference_philox(ctr, key, theirs);
        for (int i = 0; i < 4; i++) {
            cr_assert_eq(theirs[i], expected[i], "vector %d word %d: Random123 gives %08x, table %08x",
                         v, i, theirs[i], expected[i]);
            cr_assert_eq(ours[i], expected[i], "vector %d word %d: %08x, expected %08x", v, i, ours[i],
                         expected[i]);
        }
    }
}

Test(philox, equals_random123_on_random_inputs)
{
    unsigned long long state = 20240601;
    for (int n = 0; n < 10000; n++) {
        unsigned long long a = next_input(&state), b = next_input(&state), c = next_input(&state);
        unsigned int ctr[4] = {(unsigned int)a, (unsigned int)(a >> 32), (unsigned int)b,
                               (unsigned int)(b >> 32)};
        unsigned int key[2] = {(unsigned int)c, (unsigned int)(c >> 32)};
        unsigned int ours[4], theirs[4];
        cs_philox4x32_10(ctr, key, ours);
        reference_philox(ctr, key, theirs);
        for (int i = 0; i < 4; i++)
            cr_assert_eq(ours[i], theirs[i], "input %d word %d: %08x, Random123 %08x", n, i, ours[i],
                         theirs[i]);
    }
}

/* The counter and key layout that rng.h documents, spelled out independently. */
Test(rng, block_uses_documented_counter_and_key)
{
    unsigned long long seed = 0x0123456789abcdefull, block = 0xfedcba9876543210ull;
    unsigned int lane = 77, stream_sub = (1u << 16) | 3u;
    unsigned int ctr[4] = {(unsigned int)block, (unsigned int)(block >> 32), stream_sub,
                           (unsigned int)(seed >> 32)};
    unsigned int key[2] = {lane, (unsigned int)seed};
    unsigned int expected[4], got[4];
    reference_philox(ctr, key, expected);
    cs_rng_block(seed, lane, block, stream_sub, got);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(got[i], expected[i]);
}

Test(rng, step_word_is_word_of_packed_block)
{
    unsigned long long seeds[] = {0, 1, 0xdeadbeefcafef00dull};
    unsigned int draws[] = {1, 2, 3, 4, 5, 7};
    for (unsigned s = 0; s < sizeof seeds / sizeof seeds[0]; s++)
        for (unsigned d = 0; d < sizeof draws / sizeof draws[0]; d++)
            for (unsigned long long t = 0; t < 40; t++)
                for (unsigned int k = 0; k < draws[d]; k++) {
                    unsigned int lane = (unsigned int)(t * 7 + k);
                    unsigned long long w = t * draws[d] + k;
                    unsigned int out[4];
                    cs_rng_block(seeds[s], lane, w / 4, 0u, out);
                    cr_assert_eq(cs_rng_step_word(seeds[s], lane, t, draws[d], k), out[w % 4],
                                 "seed %llu D %u t %llu k %u", seeds[s], draws[d], t, k);
                }
}

/* One draw per step: steps 4m .. 4m+3 share one Philox call, in order. */
Test(rng, one_draw_per_step_uses_each_word_once)
{
    unsigned int out[4];
    for (unsigned long long m = 0; m < 5; m++) {
        cs_rng_block(42, 9, m, 0u, out);
        for (unsigned int i = 0; i < 4; i++)
            cr_assert_eq(cs_rng_step_word(42, 9, 4 * m + i, 1, 0), out[i]);
    }
}

/* A far step: the block number's high word must reach the counter. */
Test(rng, step_word_beyond_32_bit_blocks)
{
    unsigned long long t = (5ull << 34) + 6;
    unsigned int out[4];
    cs_rng_block(3, 1, t / 4, 0u, out);
    cr_assert_eq(cs_rng_step_word(3, 1, t, 1, 0), out[t % 4]);
    cr_assert_neq(cs_rng_step_word(3, 1, t, 1, 0), cs_rng_step_word(3, 1, t % (1ull << 34), 1, 0));
}

Test(rng, restart_word_is_word_of_restart_block)
{
    for (unsigned long long tau = 0; tau < 50; tau += 7)
        for (unsigned int k = 0; k < 11; k++) {
            unsigned int out[4];
            cs_rng_block(99, 5, tau, (1u << 16) | (k / 4), out);
            cr_assert_eq(cs_rng_restart_word(99, 5, tau, k), out[k % 4], "tau %llu k %u", tau, k);
        }
}

static int same_block(const unsigned int a[4], const unsigned int b[4])
{
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3];
}

/* Every input of the layout changes the bits: lanes, both halves of the
 * seed, the stream, the block. Whole blocks are compared, so a chance
 * collision (2^-128) cannot make this flaky. */
Test(rng, lanes_seeds_and_streams_differ)
{
    enum { N = 6 };
    unsigned long long seeds[N] = {0, 1, 2, 1ull << 32, 2ull << 32, 0xffffffffffffffffull};
    unsigned int blocks[N * N * 2][4];
    int n = 0;
    for (int s = 0; s < N; s++)
        for (unsigned int lane = 0; lane < N; lane++) {
            cs_rng_block(seeds[s], lane, 0, 0u, blocks[n++]);          /* step stream */
            cs_rng_block(seeds[s], lane, 0, 1u << 16, blocks[n++]);    /* restart stream */
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            cr_assert(!same_block(blocks[i], blocks[j]), "blocks %d and %d are equal", i, j);

    /* And through the word functions: neighbouring lanes, seeds, steps, streams. */
    unsigned int w = cs_rng_step_word(7, 3, 10, 1, 0);
    cr_assert_neq(w, cs_rng_step_word(7, 4, 10, 1, 0));
    cr_assert_neq(w, cs_rng_step_word(8, 3, 10, 1, 0));
    cr_assert_neq(w, cs_rng_step_word(7 + (1ull << 32), 3, 10, 1, 0));
    cr_assert_neq(w, cs_rng_step_word(7, 3, 11, 1, 0));
    cr_assert_neq(cs_rng_step_word(7, 3, 2, 1, 0), cs_rng_restart_word(7, 3, 0, 2));
    cr_assert_neq(cs_rng_restart_word(7, 3, 5, 0), cs_rng_restart_word(7, 3, 6, 0));
    cr_assert_neq(cs_rng_restart_word(7, 3, 5, 0), cs_rng_restart_word(7, 3, 5, 4));
}

Test(rng, uniforms_stay_in_unit_interval)
{
    cr_assert_eq(cs_u01_f32(0u), 0.0f);
    cr_assert_eq(cs_u01_f64(0u), 0.0);
    cr_assert_lt(cs_u01_f32(0xffffffffu), 1.0f);
    cr_assert_lt(cs_u01_f64(0xffffffffu), 1.0);
    cr_assert_eq(cs_u01_f32(0xffffffffu), 1.0f - 1.0f / 16777216.0f);
    cr_assert_eq(cs_u01_f64(0xffffffffu), 1.0 - 1.0 / 4294967296.0);
    /* Monotone at the top: no word rounds up to 1. */
    for (unsigned int w = 0xffffff00u; w != 0u; w++) {
        cr_assert_lt(cs_u01_f32(w), 1.0f);
        cr_assert_lt(cs_u01_f64(w), 1.0);
    }
}

#include "rng_lanes.h"

static void lanes_as_built(unsigned long long seed, unsigned int lane, const int *at, int n, unsigned long long block,
                           int per_block, unsigned int stream_sub, unsigned int *out, int stride)
{
    cs_rng_lanes(seed, lane, at, n, block, per_block, stream_sub, out, stride);
}

/* A block of lanes' words at once (the C dialect's refills and restarts),
 * by the path this build compiles: tests/test_rng_lanes.c checks the other. */
Test(rng, lanes_draw_each_lanes_block)
{
    check_rng_lanes(lanes_as_built);
}
