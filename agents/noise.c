/* Normal numbers and derived seeds from Philox4x32-10, keyed by the seed:
 * counter-based, so any number depends only on its coordinates. */
#include <math.h>

#include "agents.h"
#include "philox.h"

static void philox(uint64_t seed, uint32_t c0, uint64_t row, uint32_t stream, unsigned int out[4])
{
    const unsigned int key[2] = {(unsigned int)seed, (unsigned int)(seed >> 32)};
    const unsigned int ctr[4] = {c0, (unsigned int)row, (unsigned int)(row >> 32), stream};
    cs_philox4x32_10(ctr, key, out);
}

/* Box-Muller on 32-bit uniforms: u1 in (0, 1] keeps the log finite. One
 * Philox call gives two pairs, four numbers. */
void cs_gaussian(uint64_t seed, unsigned stream, uint64_t row, double *out, unsigned n)
{
    const double two_pi = 6.283185307179586476925286766559;
    for (unsigned k = 0; k < n; k += 4) {
        unsigned int w[4];
        philox(seed, k / 4, row, stream, w);
        for (unsigned j = 0; j < 4 && k + j < n; j += 2) {
            double u1 = ((double)w[j] + 1.0) * (1.0 / 4294967296.0);
            double u2 = (double)w[j + 1] * (1.0 / 4294967296.0);
            double r = sqrt(-2.0 * log(u1));
            out[k + j] = r * cos(two_pi * u2);
            if (k + j + 1 < n)
                out[k + j + 1] = r * sin(two_pi * u2);
        }
    }
}

uint64_t cs_seed_mix(uint64_t seed, unsigned stream, uint64_t index)
{
    unsigned int w[4];
    philox(seed, 0x5eed5eedu, index, (uint32_t)stream << 16, w);
    return (uint64_t)w[0] | (uint64_t)w[1] << 32;
}
