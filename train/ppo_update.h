/* What PPO's update kernels (train/ppo_update.cu) read: one struct per
 * launch, in device memory, its address the kernel's only argument. This
 * file is the host's declaration (train/ppo_cuda.c) and is pasted in front
 * of the kernels' source (the Makefile embeds both as one string), so it
 * compiles as C11 and as CUDA C++ and includes nothing.
 *
 * Shapes follow train/mlp.c: a layer's values are [unit][row], the rows of
 * a minibatch padded to R (a multiple of CS_MLP_ROWS_ALIGN); parameters in
 * the kernel's order (the actor, the critic, the box's log-stds). */
#ifndef CS_PPO_UPDATE_H
#define CS_PPO_UPDATE_H

#define PPO_LAYERS_MAX 3          /* CS_AGENT_HIDDEN_MAX hidden layers and the output */
#define PPO_ROW_PARTS 16          /* CS_MLP_ROWS_ALIGN: the partial sums of a sum over rows */
#define PPO_ACTIONS_MAX 256       /* CS_AGENT_WIDTH_MAX */

/* The update's constants, the cpu's and the GPU's */
#define PPO_ADAM_BETA1 0.9f
#define PPO_ADAM_BETA2 0.999f
#define PPO_ADAM_EPSILON 1e-5f        /* CleanRL's */
#define PPO_LOG_SQRT_2PI 0.91893853320467274178

typedef struct ppo_update_net {
    unsigned n_layers;
    unsigned width[PPO_LAYERS_MAX + 1];
    unsigned offset[PPO_LAYERS_MAX];
    float *act[PPO_LAYERS_MAX + 1];   /* [width[l]][R]; act[0] the gathered observations */
    float *delta[2];                  /* [widest][R] each: a layer's output deltas, then its input's */
} ppo_update_net;

/* Changed per minibatch (uploaded before its launches). */
typedef struct ppo_update_cursor {
    long long first;                  /* the minibatch: perm[first .. first + m) */
    long long m;
    float step, c2;                   /* Adam's lr / (1 - beta1^t) and sqrt(1 - beta2^t) */
} ppo_update_cursor;

/* What the host reads back after a minibatch. */
typedef struct ppo_update_result {
    double policy_loss, value_loss, entropy, approx_kl;
    double norm;                      /* the gradient's global norm */
    float scale;                      /* its clipping factor */
    int stepped;                      /* the norm was finite: Adam stepped */
    int params_finite;
} ppo_update_result;

typedef struct ppo_update_args {
    long long B, R;                   /* the batch's steps; a minibatch's padded rows */
    unsigned n_obs, n_act, n_params, log_std;
    int box, norm_adv, clip_vloss;
    double clip, ent, vf, max_norm;
    ppo_update_net net[2];            /* the actor, the critic */
    int which, layer;                 /* this launch's network and layer */
    /* the iteration's batch: obs [n_obs][B]; act [n_act][B] (box) or act_i [B] */
    const float *obs, *act, *logp, *value, *adv, *ret;
    const int *act_i, *perm;          /* perm: this epoch's shuffle of the batch */
    const double *low, *high;         /* box: [n_act] */
    float *params, *grad, *m, *v;     /* [n_params], kept on the device for the run */
    float *mb_adv;                    /* [R] */
    double *row_loss;                 /* [4][R]: each row's share of the four losses */
    double *row_log_std;              /* [n_act][R]: each row's share of d loss / d log-std */
    const ppo_update_cursor *cursor;
    ppo_update_result *result;
} ppo_update_args;

#endif
