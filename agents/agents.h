/* Agents: policies declared as graph fragments that the compiler fuses into
 * the step kernel (each sets program->policy[k] for every input k), their
 * weights' starting values and the noise they come from. This floor sits
 * below sim/ (env.c builds a fragment into every kernel); the trainers that
 * drive whole-population rollouts live a floor above sim/, in train/.
 *
 * Policies read the observation of the state before the step (p->obs, over
 * CARRIED leaves). A policy's weights are PARAM leaves, one per weight, so
 * every environment of a batch runs its own policy in the same launch.
 */
#ifndef CS_AGENTS_H
#define CS_AGENTS_H

#include "cartsim.h"
#include "program.h"

/* random.c: uniform over the action space, from the step stream's draws
 * (numbered after any the environment itself uses). 0, or -1. */
int cs_policy_random(cs_program *p);

/* policy.c: what a cs_config.policy string names. */
typedef enum { CS_AGENT_RANDOM, CS_AGENT_DENSE, CS_AGENT_NAMED } cs_agent_kind;

#define CS_AGENT_HIDDEN_MAX 2      /* hidden layers */
#define CS_AGENT_WIDTH_MAX 256     /* units per hidden layer */
#define CS_AGENT_TEXT_MAX 64

typedef struct {
    cs_agent_kind kind;
    unsigned n_hidden;                      /* DENSE: 0 is the linear policy */
    unsigned hidden[CS_AGENT_HIDDEN_MAX];
    char name[CS_NAME_MAX];                 /* NAMED: a policy the .env declares */
} cs_agent;

/* "random", "linear", "mlp:H", "mlp:HxH" or a declared policy's name
 * (NULL or "" is "random"). 0, or -1 with the reason in err. */
int cs_agent_parse(const char *text, cs_agent *out, char *err, size_t err_size);
/* The canonical spelling ("mlp:32x32"), at most CS_AGENT_TEXT_MAX bytes. */
void cs_agent_format(const cs_agent *a, char out[CS_AGENT_TEXT_MAX]);
/* Sets p->policy[] for the agent `text` names; a dense policy's weights are
 * new PARAM slots [*first_weight, *first_weight + *n_weights). */
cs_status cs_agent_build(cs_program *p, const char *text, unsigned *first_weight, unsigned *n_weights,
                         char *err, size_t err_size);

/* dense.c: a linear policy or an MLP of tanh layers over the observation.
 * Weights, layer after layer: for each unit, its weights over the layer's
 * inputs in order, then its bias (docs/policy_format.md). Outputs: one per
 * action (discrete: the argmax, the lowest index on ties) or per component
 * (box: low + (high - low) * (tanh(z) + 1) / 2). */
unsigned cs_dense_outputs(const cs_program *p);
unsigned cs_dense_count(const cs_agent *a, unsigned n_in, unsigned n_out);
int cs_policy_dense(cs_program *p, const cs_agent *a, unsigned *first_weight);
/* Starting weights: each layer's N(0, 1/fan_in) (the output layer's scaled
 * by 0.1), biases 0; a linear policy starts at 0. */
void cs_dense_init(const cs_agent *a, unsigned n_in, unsigned n_out, uint64_t seed, double *w);

/* noise.c: standard normal numbers from Philox4x32-10, keyed by the seed;
 * out[k] depends only on (seed, stream, row, k). */
enum { CS_NOISE_ES = 1, CS_NOISE_CEM = 2, CS_NOISE_INIT = 3, CS_NOISE_RESET = 4, CS_NOISE_EVAL = 5 };
void cs_gaussian(uint64_t seed, unsigned stream, uint64_t row, double *out, unsigned n);
/* A 64-bit seed derived from (seed, stream, index): resets of generation g. */
uint64_t cs_seed_mix(uint64_t seed, unsigned stream, uint64_t index);

#endif
