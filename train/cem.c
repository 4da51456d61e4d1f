/* The cross-entropy method: sample around the mean with a per-weight
 * spread, keep the elite fraction, refit mean and spread to it, and add
 * extra noise that fades linearly over the run so the spread does not
 * collapse early (Szita and Lorincz 2006, "Learning Tetris Using the Noisy
 * Cross-Entropy Method"). */
#include <math.h>

#include "train.h"

void cs_cem_ask(cs_search *s, double *w)
{
    int64_t pop = s->pop;
    for (int64_t i = 0; i < pop; i++) {
        double *eps = s->noise + (size_t)i * s->dim;
        cs_gaussian(s->seed, CS_NOISE_CEM, (uint64_t)s->generation << 32 | (uint64_t)i, eps, s->dim);
        for (unsigned k = 0; k < s->dim; k++)
            w[k * pop + i] = s->mean[k] + s->std[k] * eps[k];
    }
}

void cs_cem_tell(cs_search *s, const double *fitness)
{
    int64_t pop = s->pop;
    cs_rank_order(fitness, pop, s->order);
    int64_t elite = (int64_t)llround(s->elite_fraction * (double)pop);
    elite = elite < 1 ? 1 : elite > pop ? pop : elite;
    double fade = s->extra_decay > 0 ? 1 - (double)s->generation / (double)s->extra_decay : 0;
    double extra = s->extra_std * (fade > 0 ? fade : 0);
    for (unsigned k = 0; k < s->dim; k++) {
        double sum = 0, sq = 0;
        for (int64_t r = 0; r < elite; r++)
            sum += s->mean[k] + s->std[k] * s->noise[(size_t)s->order[r] * s->dim + k];
        double mu = sum / (double)elite;
        for (int64_t r = 0; r < elite; r++) {
            double d = s->mean[k] + s->std[k] * s->noise[(size_t)s->order[r] * s->dim + k] - mu;
            sq += d * d;
        }
        s->mean[k] = mu;
        s->std[k] = sqrt(sq / (double)elite + extra * extra);
    }
}
