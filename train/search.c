/* What evolution strategies and the cross-entropy method share: the
 * population's bookkeeping, the ranking of scores, and ask/tell dispatch. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

int cs_search_init(cs_search *s, const cs_train_config *tc, unsigned dim, int64_t pop, const double *start)
{
    memset(s, 0, sizeof *s);
    s->algo = tc->algo;
    s->dim = dim;
    s->pop = pop;
    s->seed = tc->seed;
    s->sigma = tc->sigma;
    s->learning_rate = tc->learning_rate > 0 ? tc->learning_rate : 0.1;   /* 0: ES's own */
    s->weight_decay = tc->weight_decay;
    s->elite_fraction = tc->elite_fraction;
    s->extra_std = tc->extra_std;
    s->extra_decay = tc->generations;
    size_t d = dim ? dim : 1, n = (size_t)pop;
    s->mean = malloc(d * sizeof *s->mean);
    s->noise = malloc(d * n * sizeof *s->noise);
    s->fitness_rank = malloc(n * sizeof *s->fitness_rank);
    s->order = malloc(n * sizeof *s->order);
    s->adam_m = calloc(d, sizeof *s->adam_m);
    s->adam_v = calloc(d, sizeof *s->adam_v);
    s->std = malloc(d * sizeof *s->std);
    if (!s->mean || !s->noise || !s->fitness_rank || !s->order || !s->adam_m || !s->adam_v || !s->std) {
        cs_search_free(s);
        return -1;
    }
    for (unsigned k = 0; k < dim; k++) {
        s->mean[k] = start[k];
        s->std[k] = tc->init_std;
    }
    return 0;
}

void cs_search_free(cs_search *s)
{
    free(s->mean);
    free(s->noise);
    free(s->fitness_rank);
    free(s->order);
    free(s->adam_m);
    free(s->adam_v);
    free(s->std);
    memset(s, 0, sizeof *s);
}

void cs_search_ask(cs_search *s, double *w)
{
    if (s->algo == CS_ALGO_CEM)
        cs_cem_ask(s, w);
    else
        cs_es_ask(s, w);
}

void cs_search_tell(cs_search *s, const double *fitness)
{
    if (s->algo == CS_ALGO_CEM)
        cs_cem_tell(s, fitness);
    else
        cs_es_tell(s, fitness);
    s->generation++;
}

typedef struct {
    double f;
    int64_t i;
} scored;

/* Best first; NaN after every number; equal scores by index: a total order,
 * so the ranking never depends on qsort's algorithm. */
static int by_score(const void *a, const void *b)
{
    const scored *x = a, *y = b;
    bool xn = isnan(x->f), yn = isnan(y->f);
    if (xn != yn)
        return xn ? 1 : -1;
    if (!xn && x->f != y->f)
        return x->f > y->f ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

void cs_rank_order(const double *fitness, int64_t n, int64_t *order)
{
    scored *tmp = malloc((size_t)n * sizeof *tmp);
    if (!tmp) {   /* no memory for the sort: keep the population's order */
        for (int64_t i = 0; i < n; i++)
            order[i] = i;
        return;
    }
    for (int64_t i = 0; i < n; i++)
        tmp[i] = (scored){fitness[i], i};
    qsort(tmp, (size_t)n, sizeof *tmp, by_score);
    for (int64_t i = 0; i < n; i++)
        order[i] = tmp[i].i;
    free(tmp);
}
