/* Trainers: population searches over a policy's weights (ES, CEM), driven
 * by whole-population rollouts through the public API (cs_train,
 * cs_evaluate). This floor sits above sim/: sim/ and agents/ include nothing
 * from here.
 */
#ifndef CS_TRAIN_H
#define CS_TRAIN_H

#include "agents.h"
#include "cartsim.h"

/* es.c, cem.c: population searches over `dim` weights, as ask and tell. */
typedef struct {
    cs_algo algo;
    unsigned dim;
    int64_t pop;
    uint64_t seed;
    int64_t generation;          /* generations told so far */
    double *mean;                /* [dim] the current policy */
    double *noise;               /* [pop][dim] this generation's (ES: [pop / 2]) */
    double *fitness_rank;        /* [pop] scratch */
    int64_t *order;              /* [pop] scratch */
    /* ES: OpenAI's (Salimans et al. 2017) with Adam on the mean */
    double sigma, learning_rate, weight_decay;
    double *adam_m, *adam_v;
    /* CEM */
    double *std;                 /* [dim] */
    double elite_fraction, extra_std;
    int64_t extra_decay;         /* generations over which the extra noise fades */
} cs_search;

int cs_search_init(cs_search *s, const cs_train_config *tc, unsigned dim, int64_t pop, const double *start);
void cs_search_free(cs_search *s);
/* The population's weights for this generation: w[k * pop + i]. */
void cs_search_ask(cs_search *s, double *w);
/* fitness[i] of member i (NaN ranks last); updates the mean. */
void cs_search_tell(cs_search *s, const double *fitness);

void cs_es_ask(cs_search *s, double *w);
void cs_es_tell(cs_search *s, const double *fitness);
void cs_cem_ask(cs_search *s, double *w);
void cs_cem_tell(cs_search *s, const double *fitness);
/* Indices of fitness sorted from best to worst (NaN last, ties by index). */
void cs_rank_order(const double *fitness, int64_t n, int64_t *order);

#endif
