/* Trainers: population searches over a policy's weights (ES, CEM), driven
 * by whole-population rollouts, and PPO, driven by recorded rollouts of the
 * actor-critic, all through the public API (cs_train, cs_evaluate). This
 * floor sits above sim/: sim/ and agents/ include nothing from here.
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

/* evaluate.c: the mean of eval_episodes' returns (cs_evaluate's), those
 * that are NaN left out; NaN when all are. */
double cs_mean_return(const double *returns, int64_t n);

/* settings.c: the table's defaults over tc (cs_train_config_init), and a
 * check of every field against its row (CS_ERR_ARGUMENT naming it). */
void cs_train_settings_defaults(cs_train_config *tc);
cs_status cs_train_settings_check(const cs_train_config *tc, char *err, size_t err_size);

/* mlp.c: dense networks over a batch on the host, feature-major: a layer's
 * values are [unit][row], rows a multiple of CS_MLP_ROWS_ALIGN (pad rows
 * compute what they compute; give them zero deltas). */
#define CS_MLP_ROWS_ALIGN 16

typedef struct {
    unsigned n_layers;                          /* the hidden layers and the output */
    unsigned width[CS_AGENT_HIDDEN_MAX + 2];    /* width[0] inputs ... width[n_layers] outputs */
    unsigned offset[CS_AGENT_HIDDEN_MAX + 1];   /* layer l's first parameter */
    unsigned count;                             /* parameters */
} cs_mlp;

/* The dense network of `a` (its hidden layers) from n_in inputs to n_out
 * linear outputs, its parameters from params[first] on. */
void cs_mlp_shape(cs_mlp *m, const cs_agent *a, unsigned n_in, unsigned n_out, unsigned first);
unsigned cs_mlp_widest(const cs_mlp *m);
/* act[l] for l = 0 .. n_layers: [width[l]][rows]; act[0] is the caller's
 * input, the rest are written (tanh after the hidden layers). */
void cs_mlp_forward(const cs_mlp *m, const float *params, float *const *act, size_t rows);
/* Given delta = dL/d(outputs) [n_out][rows] (overwritten) and the forward
 * pass's act[], adds dL/d(parameters) to grad (indexed as params);
 * scratch holds [widest][rows]. */
void cs_mlp_backward(const cs_mlp *m, const float *params, float *const *act, float *delta, float *scratch,
                     size_t rows, float *grad);

/* ppo_cuda.c: PPO's update on a GPU (update = cuda), minibatch by
 * minibatch as ppo.c's on the cpu, the parameters and Adam's moments kept
 * on the device. Messages go to the err given to open, for the handle's
 * life. */
/* The kernels' CUDA source (the kernels' prelude, for cs_tanhf, then
 * train/ppo_update.h and .cu), malloc'ed; NULL when out of memory. */
char *cs_ppo_update_kernels(void);
typedef struct cs_ppo_device cs_ppo_device;
typedef struct {
    int64_t batch, rows;               /* an iteration's steps; a minibatch's rows padded (CS_MLP_ROWS_ALIGN) */
    unsigned n_obs, n_act, n_params, log_std;
    bool box, norm_adv, clip_vloss;
    double clip, ent, vf, max_norm;
    const cs_mlp *actor, *critic;      /* kept by the caller while open */
    const double *low, *high;          /* box: the action space */
} cs_ppo_device_shape;
typedef struct {
    double policy_loss, value_loss, entropy, approx_kl;
    bool stepped;                      /* the gradient's norm was finite: Adam stepped */
    bool params_finite;                /* after the step */
} cs_ppo_device_result;
/* CS_ERR_UNAVAILABLE without a usable device (or NVRTC), CS_ERR_COMPILE,
 * CS_ERR_LIMIT without the memory. cfg: the device and the kernel cache
 * (NULL: device 0, no cache). params: the starting parameters. */
cs_status cs_ppo_device_open(cs_ppo_device **out, const cs_ppo_device_shape *shape, const cs_config *cfg,
                             const float *params, char *err, size_t err_size);
void cs_ppo_device_close(cs_ppo_device *d);   /* NULL is fine */
/* The iteration's batch (ppo.c's layout; actions int32 [batch] or float [n_act][batch]). */
cs_status cs_ppo_device_batch(cs_ppo_device *d, const float *obs, const void *actions, const float *logp,
                              const float *value, const float *adv, const float *ret);
/* The epoch's shuffle of the batch. */
cs_status cs_ppo_device_epoch(cs_ppo_device *d, const int64_t *perm);
/* One minibatch, perm[first .. first + m): losses, gradient, clipping, one
 * Adam step of step = lr / (1 - beta1^t), c2 = sqrt(1 - beta2^t). */
cs_status cs_ppo_device_minibatch(cs_ppo_device *d, int64_t first, int64_t m, float step, float c2,
                                  cs_ppo_device_result *out);
/* The parameters and the last minibatch's gradient (either NULL: not read). */
cs_status cs_ppo_device_download(cs_ppo_device *d, float *params, float *grad);

/* ppo.c */
/* PPO's networks for the dense agent `a`: the actor (n_act outputs), the
 * critic (1) after it; returns the parameters, the box's n_act log-stds
 * last. */
unsigned cs_ppo_shape(const cs_agent *a, bool box, unsigned n_obs, unsigned n_act, cs_mlp *actor, cs_mlp *critic);
cs_status cs_ppo_train(const cs_config *cfg, const cs_train_config *tc, cs_train_result *out, double start_ms,
                       char *err, size_t err_size);
/* One update on given rows (the PyTorch reference test's way in): see ppo.c. */
cs_status cs_ppo_update_rows(const cs_train_config *tc, const char *arch, bool box, unsigned n_obs, unsigned n_act,
                             const double *low, const double *high, int64_t rows, const float *obs,
                             const void *actions, const float *logprob, const float *value, const float *adv,
                             const float *ret, float *params, double losses_out[4], float *grad_out);
/* Generalized advantage estimation over T steps of N environments (index
 * t * N + i): an episode that ended at step t by termination continues
 * from 0, by truncation from next_value[t] (the value of its last
 * observation), as does every environment after the last step; otherwise
 * from value[t + N]. adv and ret (= adv + value) are written. */
void cs_ppo_gae(int64_t T, int64_t N, const float *reward, const float *value, const float *next_value,
                const int32_t *terminated, const int32_t *truncated, double gamma, double lambda, float *adv,
                float *ret);

#endif
