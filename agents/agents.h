/* Agents: policies declared as graph fragments that the compiler fuses into
 * the step kernel (each sets program->policy[k] for every input k), their
 * weights' starting values and the noise they come from. This floor sits
 * below sim/ (env.c builds a fragment into every kernel); the trainers that
 * drive whole-population rollouts live a floor above sim/, in train/.
 *
 * Policies read the observation of the state before the step (p->obs, over
 * CARRIED leaves). A dense policy's weights are PARAM arrays, a layer each,
 * over one parameter slot per weight, so every environment of a batch runs
 * its own policy in the same launch.
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
#define CS_AGENT_WIDTH_MAX 256     /* units per hidden layer; outputs */
/* Weights (with the biases) per layer: one PARAM array [units, inputs + 1]
 * (dense.c), within CS_ARRAY_MAX elements and each axis under 65536. So a
 * linear policy reads up to 32766 observations for 2 actions, mlp:64 up
 * to 1022 (Breakout-MinAtar's 400: mlp:163 at most). */
#define CS_AGENT_LAYER_MAX 65535u
#define CS_AGENT_TEXT_MAX 64

typedef struct {
    cs_agent_kind kind;
    unsigned n_hidden;                      /* DENSE: 0 is the linear policy */
    unsigned hidden[CS_AGENT_HIDDEN_MAX];
    bool actor_critic;                      /* DENSE: "ppo:" in front, actor_critic.c's */
    char name[CS_NAME_MAX];                 /* NAMED: a policy the .env declares */
} cs_agent;

/* "random", "linear", "mlp:H", "mlp:HxH", "ppo:" and one of the last three,
 * or a declared policy's name (NULL or "" is "random"). 0, or -1 with the
 * reason in err. */
int cs_agent_parse(const char *text, cs_agent *out, char *err, size_t err_size);
/* The canonical spelling ("mlp:32x32", "ppo:mlp:64"), at most
 * CS_AGENT_TEXT_MAX bytes; actor_only: without "ppo:", the architecture of
 * the actor alone (what a policy file holds). */
void cs_agent_format(const cs_agent *a, char out[CS_AGENT_TEXT_MAX]);
void cs_agent_format_actor(const cs_agent *a, char out[CS_AGENT_TEXT_MAX]);

/* What cs_agent_build made: the policy's weights are the PARAM slots
 * [first_weight, first_weight + n_weights), shared by the whole batch
 * (param_shared) or one set per lane. */
typedef struct {
    unsigned first_weight, n_weights;
    bool shared;
} cs_agent_weights;

/* Sets p->policy[] (and, for an actor-critic, p->record[]) for the agent
 * `text` names. */
cs_status cs_agent_build(cs_program *p, const char *text, cs_agent_weights *w, char *err, size_t err_size);

/* dense.c: a linear policy or an MLP of tanh layers over the observation.
 * Weights, layer after layer: for each unit, its weights over the layer's
 * inputs in order, then its bias (docs/policy_format.md). Outputs: one per
 * action (discrete: the argmax, the lowest index on ties) or per component
 * (box: low + (high - low) * (tanh(z) + 1) / 2). */
unsigned cs_dense_outputs(const cs_program *p);
unsigned cs_dense_count(const cs_agent *a, unsigned n_in, unsigned n_out);
int cs_policy_dense(cs_program *p, const cs_agent *a, unsigned *first_weight);
/* 0 when every layer of a over n_in observations and n_out outputs fits
 * CS_AGENT_LAYER_MAX, else the first that does not (1 for the first) with
 * its weight count in *weights. */
unsigned cs_dense_too_wide(const cs_agent *a, unsigned n_in, unsigned n_out, uint64_t *weights);
/* The network's n_out outputs z[] before any squashing, over p->obs, its
 * weights new PARAM slots (shared: param_shared) in the file order; their
 * count, or -1. */
int cs_dense_layers(cs_program *p, const cs_agent *a, unsigned n_out, bool shared, cs_node *z);
/* The discrete action of outputs z[0, n): the lowest index of the largest. */
cs_node cs_dense_argmax(cs_program *p, const cs_node *z, unsigned n);
/* Box component k of output z: low + (high - low) * (tanh(z) + 1) / 2. */
cs_node cs_dense_box_action(cs_program *p, unsigned k, cs_node z);

/* actor_critic.c: the policy PPO's rollouts run ("ppo:mlp:64"): an actor
 * and a critic, dense networks of the same architecture over the
 * observation, whose weights the whole batch shares (one set, broadcast),
 * in this order: the actor's (a dense policy's, docs/policy_format.md),
 * the critic's (one output: the value), for a box space one log standard
 * deviation per component (state-independent, as CleanRL's), then one
 * switch, "greedy": 0 samples actions, 1 takes the dense policy's (the
 * argmax; the mean). Sampling, from the step stream after the
 * environment's own draws: discrete, the inverse CDF of softmax(z) at one
 * uniform; box, mean + std * a normal (Box-Muller on two uniforms per
 * component) around the dense policy's mean, clipped to the space for the
 * environment. Every step records, in this order: obs0.. (the
 * observation), action0.. (box: before the clip), logprob (the action's),
 * value, reward, terminated, truncated and final_obs0.. (the observation
 * after the step, before any restart: a truncated episode's bootstrap). */
int cs_policy_actor_critic(cs_program *p, const cs_agent *a, unsigned *first_weight);
/* How many weights, for n_in observations and n_out actor outputs (box:
 * the components, whose log-stds it counts). */
unsigned cs_actor_critic_count(const cs_agent *a, unsigned n_in, unsigned n_out, bool box);
/* Starting weights: each layer's N(0, 1/fan_in) (the output layer's scaled
 * by 0.1), biases 0; a linear policy starts at 0. */
void cs_dense_init(const cs_agent *a, unsigned n_in, unsigned n_out, uint64_t seed, double *w);

/* noise.c: standard normal numbers from Philox4x32-10, keyed by the seed;
 * out[k] depends only on (seed, stream, row, k). */
enum { CS_NOISE_ES = 1, CS_NOISE_CEM = 2, CS_NOISE_INIT = 3, CS_NOISE_RESET = 4, CS_NOISE_EVAL = 5, CS_NOISE_PPO = 6 };
void cs_gaussian(uint64_t seed, unsigned stream, uint64_t row, double *out, unsigned n);
/* A 64-bit seed derived from (seed, stream, index): resets of generation g. */
uint64_t cs_seed_mix(uint64_t seed, unsigned stream, uint64_t index);

#endif
