/* Evolution strategies as OpenAI ran them (Salimans, Ho, Chen, Sidor,
 * Sutskever 2017, "Evolution Strategies as a Scalable Alternative to
 * Reinforcement Learning"): antithetic pairs mean +- sigma * eps, scores
 * replaced by centred ranks in [-0.5, 0.5], the gradient estimate
 * sum_j (r+_j - r-_j) eps_j / pop, and Adam on the mean with L2 decay. */
#include <math.h>

#include "train.h"

#define ADAM_BETA1 0.9
#define ADAM_BETA2 0.999
#define ADAM_EPSILON 1e-8

void cs_es_ask(cs_search *s, double *w)
{
    int64_t pop = s->pop, half = pop / 2;
    for (int64_t j = 0; j < half; j++) {
        double *eps = s->noise + (size_t)j * s->dim;
        cs_gaussian(s->seed, CS_NOISE_ES, (uint64_t)s->generation << 32 | (uint64_t)j, eps, s->dim);
        for (unsigned k = 0; k < s->dim; k++) {
            w[k * pop + 2 * j] = s->mean[k] + s->sigma * eps[k];
            w[k * pop + 2 * j + 1] = s->mean[k] - s->sigma * eps[k];
        }
    }
}

void cs_es_tell(cs_search *s, const double *fitness)
{
    int64_t pop = s->pop, half = pop / 2;
    double *rank = s->fitness_rank;
    cs_rank_order(fitness, pop, s->order);
    for (int64_t r = 0; r < pop; r++)
        rank[s->order[r]] = (double)(pop - 1 - r) / (double)(pop - 1) - 0.5;
    double t = (double)(s->generation + 1);
    double step = s->learning_rate * sqrt(1 - pow(ADAM_BETA2, t)) / (1 - pow(ADAM_BETA1, t));
    for (unsigned k = 0; k < s->dim; k++) {
        double g = 0;
        for (int64_t j = 0; j < half; j++)
            g += (rank[2 * j] - rank[2 * j + 1]) * s->noise[(size_t)j * s->dim + k];
        /* Adam minimizes: the loss gradient is -g, plus the decay's pull. */
        double loss = -g / (double)pop + s->weight_decay * s->mean[k];
        s->adam_m[k] = ADAM_BETA1 * s->adam_m[k] + (1 - ADAM_BETA1) * loss;
        s->adam_v[k] = ADAM_BETA2 * s->adam_v[k] + (1 - ADAM_BETA2) * loss * loss;
        s->mean[k] -= step * s->adam_m[k] / (sqrt(s->adam_v[k]) + ADAM_EPSILON);
    }
}
