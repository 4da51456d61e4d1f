/* 128-bit content hashes for cache keys and entry checksums; 64-bit FNV-1a.
 *
 * Not cryptographic: the cache directory is private to its user (cache.c), so
 * the hash only has to make accidental collisions and corruption unlikely.
 * Two 64-bit lanes consume every 8-byte word with different multipliers and
 * rotations, so they stay independent until the finalizer mixes them into each
 * other. The result depends only on the bytes, their count and the seed, never
 * on the host's byte order or alignment; passing one hash as the seed of the
 * next chains them: h = cs_hash_bytes(b, n, h).
 */
#include <string.h>

#include "jit.h"

/* Odd constants with well-spread bits: fractional digits of pi, e, sqrt(2),
 * sqrt(3) and the golden ratio. */
#define LANE_A_START 0x243f6a8885a308d3ULL
#define LANE_B_START 0xb7e151628aed2a6bULL
#define MUL_A1 0x9e3779b97f4a7c15ULL
#define MUL_A2 0x6a09e667f3bcc909ULL
#define MUL_B1 0xbb67ae8584caa73bULL
#define MUL_B2 0xd1b54a32d192ed03ULL

static uint64_t rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

/* A full-avalanche 64-bit mixer (xor-shift / multiply, the parameters of
 * David Stafford's "Mix13"): every input bit flips each output bit with
 * probability close to 1/2. */
static uint64_t avalanche(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* Little-endian by construction, so hashes (and cache keys) agree across hosts. */
static uint64_t load_le64(const unsigned char *p, size_t n)
{
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++)
        w |= (uint64_t)p[i] << (8 * i);
    return w;
}

cs_hash128 cs_hash_bytes(const void *data, size_t n, cs_hash128 seed)
{
    const unsigned char *p = data;
    uint64_t a = seed.lo ^ LANE_A_START;
    uint64_t b = seed.hi ^ LANE_B_START;
    size_t left = n;

    while (left > 0) {
        size_t take = left < 8 ? left : 8;
        uint64_t w = load_le64(p, take);
        a = rotl64(a ^ (w * MUL_A1), 29) * MUL_A2;
        b = rotl64(b + (rotl64(w, 32) * MUL_B1), 37) * MUL_B2;
        p += take;
        left -= take;
    }
    /* The zero padding of the last word is told apart by the length. */
    a ^= (uint64_t)n;
    b ^= rotl64((uint64_t)n, 32) ^ MUL_A1;
    a += b;
    b += a;
    a = avalanche(a);
    b = avalanche(b ^ MUL_B1);
    a += b;
    b += a;
    return (cs_hash128){.lo = a, .hi = b};
}

void cs_hash_hex(cs_hash128 h, char out[33])
{
    static const char digits[] = "0123456789abcdef";
    /* hi first: the string reads as one 128-bit number. */
    for (int i = 0; i < 16; i++) {
        out[i] = digits[(h.hi >> (60 - 4 * i)) & 15];
        out[16 + i] = digits[(h.lo >> (60 - 4 * i)) & 15];
    }
    out[32] = '\0';
}

uint64_t cs_fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}
