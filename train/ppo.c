/* PPO (Schulman, Wolski, Dhariwal, Radford, Klimov 2017), as CleanRL's
 * ppo.py and ppo_continuous_action.py compute it, around fused rollouts.
 *
 *   iteration: weights -> the actor-critic in every environment (one shared
 *              set; with observation normalization, its statistics folded
 *              into the first layers) -> one rollout of num_steps steps,
 *              recorded in the kernel (agents/actor_critic.c) -> values of
 *              the last observations of truncated episodes and of the
 *              last step -> GAE -> update_epochs x num_minibatches Adam
 *              steps on the clipped losses -> progress; once the training
 *              episodes reach the target, the greedy actor is scored.
 *
 * The parameters are one vector in the kernel's order: the actor, the
 * critic, the box's log-stds (the kernel's last weight, the greedy switch,
 * is not trained). Everything here runs on one thread in float, in a fixed
 * order (train/mlp.c), so the weights depend on the seed alone. With
 * update = cuda the update's minibatches run on a GPU instead
 * (train/ppo_cuda.c), in the same order, computing the same values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"
#include "ppo_update.h"
#include "jit.h"
#include "status.h"

#define NORM_EPSILON 1e-8           /* gymnasium's running statistics */
#define NORM_CLIP 10.0              /* ...and their clip of normalized rewards */

void cs_ppo_gae(int64_t T, int64_t N, const float *reward, const float *value, const float *next_value,
                const int32_t *terminated, const int32_t *truncated, double gamma, double lambda, float *adv,
                float *ret)
{
    const float g = (float)gamma, gl = (float)(gamma * lambda);
    for (int64_t i = 0; i < N; i++) {
        float last = 0;
        for (int64_t t = T - 1; t >= 0; t--) {
            int64_t k = t * N + i;
            bool ended = terminated[k] || truncated[k];
            float next = terminated[k] ? 0.0f : ended || t == T - 1 ? next_value[k] : value[k + N];
            float delta = reward[k] + g * next - value[k];
            last = delta + gl * (ended ? 0.0f : 1.0f) * last;
            adv[k] = last;
            ret[k] = last + value[k];
        }
    }
}

/* Running mean and variance over batches (Chan et al.), as gymnasium's
 * RunningMeanStd: count starts at 1e-4. */
typedef struct {
    double mean, var, count;
} running_stat;

static void stat_update(running_stat *s, const float *x, int64_t n, int64_t stride)
{
    double m = 0, v = 0;
    for (int64_t k = 0; k < n; k++)
        m += x[k * stride];
    m /= (double)n;
    for (int64_t k = 0; k < n; k++)
        v += (x[k * stride] - m) * (x[k * stride] - m);
    v /= (double)n;
    double delta = m - s->mean, total = s->count + (double)n;
    s->mean += delta * (double)n / total;
    s->var = (s->var * s->count + v * (double)n + delta * delta * s->count * (double)n / total) / total;
    s->count = total;
}

typedef struct {
    /* settings, resolved for the action space */
    int64_t n_envs, n_steps, batch, minibatch, rows, epochs, iterations;
    double lr, gamma, lambda, clip, ent, vf, max_norm, target_kl;
    bool anneal, norm_adv, clip_vloss, norm_obs, norm_reward;
    /* the networks */
    bool box;
    unsigned n_obs, n_act;           /* actor outputs: actions (discrete) or components (box) */
    double *low, *high;              /* box */
    cs_mlp actor, critic;
    unsigned n_params, log_std;      /* log_std: the box's first log-std */
    float *params, *grad, *m, *v, *good;
    double *kernel_w;                /* n_params + the greedy switch */
    /* an iteration's steps, index t * N + i; obs [n_obs][batch] */
    float *obs, *fin, *act, *logp, *value, *next_value, *reward, *adv, *ret;
    int32_t *act_i, *term, *trunc;
    /* a minibatch, [unit][rows] */
    int64_t *perm;
    float **a_act, **c_act;          /* layer values of the actor and critic */
    float *delta, *scratch, *mb_adv;
    running_stat *obs_stat, ret_stat;
    double *ret_run;                 /* per environment: its discounted return so far */
    float *tmp_n;                    /* [N] */
    char policy[CS_AGENT_TEXT_MAX];  /* "ppo:ARCH" */
    cs_env *env, *eval_env;
    double *returns;                 /* eval_episodes */
    cs_ppo_device *gpu;              /* update = cuda: the update's device */
} ppo;

static void ppo_free(ppo *p)
{
    cs_env_close(p->env);
    cs_env_close(p->eval_env);
    cs_ppo_device_close(p->gpu);
    float **nets[2] = {p->a_act, p->c_act};
    for (int k = 0; k < 2; k++) {
        for (unsigned l = 0; nets[k] && l <= CS_AGENT_HIDDEN_MAX + 1; l++)
            free(nets[k][l]);
        free(nets[k]);
    }
    void *blocks[] = {p->low, p->high, p->params, p->grad, p->m, p->v, p->good, p->kernel_w, p->obs, p->fin,
                      p->act, p->logp, p->value, p->next_value, p->reward, p->adv, p->ret, p->act_i, p->term,
                      p->trunc, p->perm, p->delta, p->scratch, p->mb_adv, p->obs_stat, p->ret_run, p->tmp_n, p->returns};
    for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++)
        free(blocks[k]);
}

unsigned cs_ppo_shape(const cs_agent *a, bool box, unsigned n_obs, unsigned n_act, cs_mlp *actor, cs_mlp *critic)
{
    cs_mlp_shape(actor, a, n_obs, n_act, 0);
    cs_mlp_shape(critic, a, n_obs, 1, actor->count);
    return actor->count + critic->count + (box ? n_act : 0);
}

/* CleanRL's defaults for the action space where the setting says 0. */
static void resolve(ppo *p, const cs_train_config *tc)
{
    bool box = p->box;
    p->n_envs = tc->num_envs ? tc->num_envs : box ? 1 : 4;
    p->n_steps = tc->num_steps ? tc->num_steps : box ? 2048 : 128;
    int64_t total = tc->total_timesteps ? tc->total_timesteps : box ? 1000000 : 500000;
    int64_t mbs = tc->num_minibatches ? tc->num_minibatches : box ? 32 : 4;
    p->epochs = tc->update_epochs ? tc->update_epochs : box ? 10 : 4;
    p->batch = p->n_envs * p->n_steps;
    p->minibatch = p->batch / mbs;
    p->rows = (p->minibatch + CS_MLP_ROWS_ALIGN - 1) / CS_MLP_ROWS_ALIGN * CS_MLP_ROWS_ALIGN;
    p->iterations = total / p->batch;
    p->lr = tc->learning_rate > 0 ? tc->learning_rate : box ? 3e-4 : 2.5e-4;
    p->gamma = tc->gamma;
    p->lambda = tc->gae_lambda;
    p->clip = tc->clip_coef;
    p->ent = isnan(tc->ent_coef) ? (box ? 0.0 : 0.01) : tc->ent_coef;
    p->vf = tc->vf_coef;
    p->max_norm = tc->max_grad_norm;
    p->target_kl = tc->target_kl;
    p->anneal = tc->anneal_lr;
    p->norm_adv = tc->norm_adv;
    p->clip_vloss = tc->clip_vloss;
    p->norm_obs = tc->norm_obs == CS_SWITCH_AUTO ? box : tc->norm_obs == CS_SWITCH_ON;
    p->norm_reward = tc->norm_reward == CS_SWITCH_AUTO ? box : tc->norm_reward == CS_SWITCH_ON;
}

/* torch.nn.init.orthogonal_(W, gain) for W [rows][cols] (a layer's units
 * over its inputs, at stride cols + 1: the bias follows each row), bias 0:
 * the orthonormal factor of a Gaussian matrix (its tall orientation, by
 * modified Gram-Schmidt, which leaves R's diagonal positive as orthogonal_'s
 * sign fix does). */
static int orthogonal(float *w, unsigned rows, unsigned cols, double gain, uint64_t seed, uint64_t row)
{
    bool wide = rows < cols;
    unsigned m = wide ? cols : rows, n = wide ? rows : cols;   /* m x n, m >= n: columns orthonormalized */
    double *a = malloc((size_t)m * n * sizeof *a);
    if (!a)
        return -1;
    cs_gaussian(seed, CS_NOISE_INIT, row, a, m * n);   /* a[j * m + i]: column j */
    for (unsigned j = 0; j < n; j++) {
        double *cj = a + (size_t)j * m;
        for (unsigned k = 0; k < j; k++) {
            const double *ck = a + (size_t)k * m;
            double dot = 0;
            for (unsigned i = 0; i < m; i++)
                dot += ck[i] * cj[i];
            for (unsigned i = 0; i < m; i++)
                cj[i] -= dot * ck[i];
        }
        double norm = 0;
        for (unsigned i = 0; i < m; i++)
            norm += cj[i] * cj[i];
        norm = sqrt(norm);
        for (unsigned i = 0; i < m; i++)
            cj[i] = norm > 0 ? cj[i] / norm : 0;
    }
    for (unsigned r = 0; r < rows; r++) {
        for (unsigned c = 0; c < cols; c++)   /* Q [m][n]: tall, W = Q; wide, W = Q^T */
            w[(size_t)r * (cols + 1) + c] = (float)(gain * (wide ? a[(size_t)r * m + c] : a[(size_t)c * m + r]));
        w[(size_t)r * (cols + 1) + cols] = 0;
    }
    free(a);
    return 0;
}

/* CleanRL's layer_init: hidden layers gain sqrt(2), the actor's output
 * 0.01, the critic's 1; log-stds 0. */
static int init_params(ppo *p, uint64_t seed)
{
    const cs_mlp *nets[2] = {&p->actor, &p->critic};
    uint64_t row = 0;
    for (int k = 0; k < 2; k++) {
        const cs_mlp *m = nets[k];
        for (unsigned l = 0; l < m->n_layers; l++) {
            bool out = l + 1 == m->n_layers;
            double gain = !out ? sqrt(2.0) : k == 0 ? 0.01 : 1.0;
            if (orthogonal(p->params + m->offset[l], m->width[l + 1], m->width[l], gain, seed, row++))
                return -1;
        }
    }
    for (unsigned k = 0; p->box && k < p->n_act; k++)
        p->params[p->log_std + k] = 0;
    return 0;
}

/* The kernel's weights: the parameters (with the observations' running
 * statistics folded into both first layers: w' = w / sd, b' = b - sum w
 * mean / sd), then the greedy switch. */
static void kernel_weights(ppo *p, bool greedy)
{
    for (unsigned k = 0; k < p->n_params; k++)
        p->kernel_w[k] = p->params[k];
    const cs_mlp *nets[2] = {&p->actor, &p->critic};
    for (int k = 0; k < 2 && p->norm_obs; k++) {
        const cs_mlp *m = nets[k];
        unsigned n_in = m->width[0];
        for (unsigned o = 0; o < m->width[1]; o++) {
            double *w = p->kernel_w + m->offset[0] + (size_t)o * (n_in + 1);
            double shift = 0;
            for (unsigned i = 0; i < n_in; i++) {
                double sd = sqrt(p->obs_stat[i].var + NORM_EPSILON);
                shift += w[i] * p->obs_stat[i].mean / sd;
                w[i] /= sd;
            }
            w[n_in] -= shift;
        }
    }
    p->kernel_w[p->n_params] = greedy ? 1 : 0;
}

static cs_status env_error(cs_env *env, cs_status s, char *err, size_t size)
{
    return cs_say(err, size, s, "%s", env && cs_env_error(env)[0] ? cs_env_error(env) : cs_status_string(s));
}

static const void *record(cs_env *env, const char *name, int64_t steps)
{
    for (unsigned k = 0; k < cs_env_record_count(env); k++) {
        cs_record r;
        if (cs_env_record(env, k, &r) == CS_OK && strcmp(r.name, name) == 0 && r.steps == steps)
            return r.data;
    }
    return NULL;
}

/* The rollout's records into the batch: observations (normalized with the
 * statistics the rollout ran with, which then take this batch in), actions,
 * log-probabilities, values, rewards (scaled), the ends. */
static cs_status take_records(ppo *p, char *err, size_t size)
{
    int64_t T = p->n_steps, N = p->n_envs, B = p->batch;
    char name[32];
    for (unsigned k = 0; k < p->n_obs; k++) {
        snprintf(name, sizeof name, "obs%u", k);
        const float *o = record(p->env, name, T);
        snprintf(name, sizeof name, "final_obs%u", k);
        const float *f = record(p->env, name, T);
        if (!o || !f)
            return cs_say(err, size, CS_ERR_STATE, "the rollout recorded no %s", name);
        memcpy(p->obs + (size_t)k * B, o, (size_t)B * sizeof *o);
        memcpy(p->fin + (size_t)k * B, f, (size_t)B * sizeof *f);
    }
    const float *logp = record(p->env, "logprob", T), *value = record(p->env, "value", T);
    const float *reward = record(p->env, "reward", T);
    const int32_t *term = record(p->env, "terminated", T), *trunc = record(p->env, "truncated", T);
    if (!logp || !value || !reward || !term || !trunc)
        return cs_say(err, size, CS_ERR_STATE, "the rollout's records are incomplete");
    memcpy(p->logp, logp, (size_t)B * sizeof *logp);
    memcpy(p->value, value, (size_t)B * sizeof *value);
    memcpy(p->reward, reward, (size_t)B * sizeof *reward);
    memcpy(p->term, term, (size_t)B * sizeof *term);
    memcpy(p->trunc, trunc, (size_t)B * sizeof *trunc);
    for (unsigned k = 0; k < (p->box ? p->n_act : 1); k++) {
        snprintf(name, sizeof name, "action%u", k);
        const void *a = record(p->env, name, T);
        if (!a)
            return cs_say(err, size, CS_ERR_STATE, "the rollout recorded no %s", name);
        if (p->box)
            memcpy(p->act + (size_t)k * B, a, (size_t)B * sizeof(float));
        else
            memcpy(p->act_i, a, (size_t)B * sizeof(int32_t));
    }
    if (p->norm_obs) {
        for (unsigned k = 0; k < p->n_obs; k++) {
            float mean = (float)p->obs_stat[k].mean, sd = (float)sqrt(p->obs_stat[k].var + NORM_EPSILON);
            for (int64_t s = 0; s < B; s++) {
                p->obs[(size_t)k * B + s] = (p->obs[(size_t)k * B + s] - mean) / sd;
                p->fin[(size_t)k * B + s] = (p->fin[(size_t)k * B + s] - mean) / sd;
            }
        }
        for (unsigned k = 0; k < p->n_obs; k++)
            stat_update(&p->obs_stat[k], record(p->env, (snprintf(name, sizeof name, "obs%u", k), name), T), B, 1);
    }
    /* gymnasium's NormalizeReward: each step's discounted returns so far
     * update the statistics, whose spread then scales the step's rewards */
    if (p->norm_reward)
        for (int64_t t = 0; t < T; t++) {
            for (int64_t i = 0; i < N; i++) {
                p->ret_run[i] = p->ret_run[i] * p->gamma + p->reward[t * N + i];
                p->tmp_n[i] = (float)p->ret_run[i];
            }
            stat_update(&p->ret_stat, p->tmp_n, N, 1);
            double sd = sqrt(p->ret_stat.var + NORM_EPSILON);
            for (int64_t i = 0; i < N; i++) {
                int64_t k = t * N + i;
                double r = p->reward[k] / sd;
                p->reward[k] = (float)(r > NORM_CLIP ? NORM_CLIP : r < -NORM_CLIP ? -NORM_CLIP : r);
                if (p->term[k] || p->trunc[k])
                    p->ret_run[i] = 0;
            }
        }
    return CS_OK;
}

/* The critic's value of the last observation wherever GAE continues from
 * it: truncated episodes and the last step. */
static void bootstrap_values(ppo *p)
{
    int64_t T = p->n_steps, N = p->n_envs, B = p->batch, R = p->rows;
    int64_t *rows = p->perm;   /* scratch: the steps wanted, R at a time */
    int64_t n = 0;
    for (int64_t k = 0; k < B; k++) {
        p->next_value[k] = 0;
        if (p->trunc[k] || (k >= (T - 1) * N && !p->term[k]))
            rows[n++] = k;
    }
    for (int64_t at = 0; at < n; at += R) {
        int64_t m = n - at < R ? n - at : R;
        for (unsigned j = 0; j < p->n_obs; j++)
            for (int64_t r = 0; r < R; r++)
                p->c_act[0][(size_t)j * R + r] = r < m ? p->fin[(size_t)j * B + rows[at + r]] : 0;
        cs_mlp_forward(&p->critic, p->params, p->c_act, (size_t)R);
        for (int64_t r = 0; r < m; r++)
            p->next_value[rows[at + r]] = p->c_act[p->critic.n_layers][r];
    }
}

/* splitmix64: the minibatches' shuffle, from the seed */
static uint64_t next_u64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void shuffle(int64_t *perm, int64_t n, uint64_t seed)
{
    uint64_t x = seed;
    for (int64_t k = 0; k < n; k++)
        perm[k] = k;
    for (int64_t k = n - 1; k > 0; k--) {
        int64_t j = (int64_t)(next_u64(&x) % (uint64_t)(k + 1));
        int64_t t = perm[k];
        perm[k] = perm[j];
        perm[j] = t;
    }
}

typedef struct {
    double policy_loss, value_loss, entropy, approx_kl;
} losses;

/* PyTorch's gradient of max(a, b) (elementwise): to the larger, split in
 * half on a tie; of clamp(x, lo, hi): 1 inside [lo, hi], else 0. */
static double max_share(double a, double b) { return a > b ? 1.0 : a < b ? 0.0 : 0.5; }
static double in_range(double x, double lo, double hi) { return x >= lo && x <= hi ? 1.0 : 0.0; }

/* One minibatch: the losses and their gradient (into p->grad, zeroed
 * first). Rows r < m hold the steps idx[0..m); the rest are padding. */
static void minibatch_grad(ppo *p, const int64_t *idx, int64_t m, losses *out)
{
    int64_t B = p->batch, R = p->rows;
    unsigned A = p->n_act, La = p->actor.n_layers, Lc = p->critic.n_layers;
    memset(p->grad, 0, p->n_params * sizeof *p->grad);
    for (unsigned j = 0; j < p->n_obs; j++)
        for (int64_t r = 0; r < R; r++) {
            float x = r < m ? p->obs[(size_t)j * B + idx[r]] : 0;
            p->a_act[0][(size_t)j * R + r] = x;
            p->c_act[0][(size_t)j * R + r] = x;
        }
    cs_mlp_forward(&p->actor, p->params, p->a_act, (size_t)R);
    cs_mlp_forward(&p->critic, p->params, p->c_act, (size_t)R);
    const float *z = p->a_act[La], *v = p->c_act[Lc];

    /* advantages, normalized over the minibatch (torch.std: n - 1) */
    double mean = 0, var = 0;
    for (int64_t r = 0; r < m; r++)
        mean += p->adv[idx[r]];
    mean /= (double)m;
    for (int64_t r = 0; r < m; r++)
        var += (p->adv[idx[r]] - mean) * (p->adv[idx[r]] - mean);
    double sd = m > 1 ? sqrt(var / (double)(m - 1)) : 0;
    for (int64_t r = 0; r < m; r++)
        p->mb_adv[r] = p->norm_adv ? (float)((p->adv[idx[r]] - mean) / (sd + 1e-8)) : p->adv[idx[r]];

    double pg = 0, vl = 0, ent = 0, kl = 0, inv_m = 1.0 / (double)m;
    double lo = 1 - p->clip, hi = 1 + p->clip;
    float *dz = p->delta;   /* [A][R], then the critic's [1][R] after the actor's backward */
    memset(dz, 0, (size_t)A * (size_t)R * sizeof *dz);
    double *dlog_std = NULL;
    double dls[CS_AGENT_WIDTH_MAX] = {0};
    if (p->box)
        dlog_std = dls;
    for (int64_t r = 0; r < m; r++) {
        int64_t s = idx[r];
        double newlogp, entropy;
        double prob[CS_AGENT_WIDTH_MAX], logp[CS_AGENT_WIDTH_MAX], eps[CS_AGENT_WIDTH_MAX];
        if (!p->box) {
            double zmax = z[r];
            for (unsigned a = 1; a < A; a++)
                zmax = z[(size_t)a * R + r] > zmax ? z[(size_t)a * R + r] : zmax;
            double sum = 0;
            for (unsigned a = 0; a < A; a++)
                sum += exp(z[(size_t)a * R + r] - zmax);
            double lse = zmax + log(sum);
            entropy = 0;
            for (unsigned a = 0; a < A; a++) {
                logp[a] = z[(size_t)a * R + r] - lse;
                prob[a] = exp(logp[a]);
                entropy -= prob[a] * logp[a];
            }
            newlogp = logp[p->act_i[s]];
        } else {
            newlogp = 0;
            entropy = 0;
            for (unsigned a = 0; a < A; a++) {
                double ls = p->params[p->log_std + a], sd_a = exp(ls);
                double mu = p->low[a] + (p->high[a] - p->low[a]) * (tanh(z[(size_t)a * R + r]) + 1) / 2;
                eps[a] = (p->act[(size_t)a * B + s] - mu) / sd_a;
                newlogp += -0.5 * eps[a] * eps[a] - ls - PPO_LOG_SQRT_2PI;
                entropy += 0.5 + PPO_LOG_SQRT_2PI + ls;
            }
        }
        double logratio = newlogp - p->logp[s], ratio = exp(logratio);
        double adv = p->mb_adv[r];
        double l1 = -adv * ratio, l2 = -adv * (ratio < lo ? lo : ratio > hi ? hi : ratio);
        pg += (l1 > l2 ? l1 : l2) * inv_m;
        ent += entropy * inv_m;
        kl += ((ratio - 1) - logratio) * inv_m;
        /* d loss / d newlogp */
        double share = max_share(l1, l2);
        double g = inv_m * (-adv) * (share + (1 - share) * in_range(ratio, lo, hi)) * ratio;
        if (!p->box) {
            double H = entropy;
            for (unsigned a = 0; a < A; a++) {
                double d = g * ((a == (unsigned)p->act_i[s]) - prob[a]) + p->ent * inv_m * prob[a] * (logp[a] + H);
                dz[(size_t)a * R + r] = (float)d;
            }
        } else {
            for (unsigned a = 0; a < A; a++) {
                double ls = p->params[p->log_std + a], sd_a = exp(ls);
                double th = tanh(z[(size_t)a * R + r]);
                double dmu = (p->high[a] - p->low[a]) / 2 * (1 - th * th);
                dz[(size_t)a * R + r] = (float)(g * eps[a] / sd_a * dmu);
                dlog_std[a] += g * (eps[a] * eps[a] - 1) - p->ent * inv_m;
            }
        }
    }
    cs_mlp_backward(&p->actor, p->params, p->a_act, p->delta, p->scratch, (size_t)R, p->grad);
    for (unsigned a = 0; p->box && a < A; a++)
        p->grad[p->log_std + a] += (float)dlog_std[a];

    memset(p->delta, 0, (size_t)R * sizeof *p->delta);
    for (int64_t r = 0; r < m; r++) {
        int64_t s = idx[r];
        double nv = v[r], R_s = p->ret[s], old = p->value[s];
        double un = (nv - R_s) * (nv - R_s), d;
        if (p->clip_vloss) {
            double dv = nv - old, cl = dv < -p->clip ? -p->clip : dv > p->clip ? p->clip : dv;
            double vc = old + cl, c = (vc - R_s) * (vc - R_s);
            vl += 0.5 * (un > c ? un : c) * inv_m;
            double share = max_share(un, c);
            d = share * 2 * (nv - R_s) + (1 - share) * 2 * (vc - R_s) * in_range(dv, -p->clip, p->clip);
        } else {
            vl += 0.5 * un * inv_m;
            d = 2 * (nv - R_s);
        }
        p->delta[r] = (float)(p->vf * 0.5 * inv_m * d);
    }
    cs_mlp_backward(&p->critic, p->params, p->c_act, p->delta, p->scratch, (size_t)R, p->grad);
    out->policy_loss = pg;
    out->value_loss = vl;
    out->entropy = ent;
    out->approx_kl = kl;
}

/* Adam's bias corrections at step t: its step lr / (1 - beta1^t) and
 * sqrt(1 - beta2^t), in float (the cpu's and the device's). */
static void adam_factors(double lr, int64_t t, float *step, float *c2f)
{
    double c1 = 1 - pow(PPO_ADAM_BETA1, (double)t), c2 = sqrt(1 - pow(PPO_ADAM_BETA2, (double)t));
    *step = (float)(lr / c1);
    *c2f = (float)c2;
}

/* Clips the gradient's global norm, then one Adam step (PyTorch's: the
 * bias corrections folded into the step and the denominator). false when
 * the gradient is not finite (nothing changed then). */
static bool adam_step(ppo *p, double lr, int64_t t)
{
    double norm = 0;
    for (unsigned k = 0; k < p->n_params; k++)
        norm += (double)p->grad[k] * p->grad[k];
    norm = sqrt(norm);
    if (!isfinite(norm))
        return false;
    float scale = norm > p->max_norm ? (float)(p->max_norm / (norm + 1e-6)) : 1.0f;
    float step, c2f;
    adam_factors(lr, t, &step, &c2f);
    for (unsigned k = 0; k < p->n_params; k++) {
        float g = p->grad[k] * scale;
        p->m[k] = PPO_ADAM_BETA1 * p->m[k] + (1 - PPO_ADAM_BETA1) * g;
        p->v[k] = PPO_ADAM_BETA2 * p->v[k] + (1 - PPO_ADAM_BETA2) * g * g;
        p->params[k] -= step * p->m[k] / (sqrtf(p->v[k]) / c2f + PPO_ADAM_EPSILON);
    }
    return true;
}

static bool finite_params(const ppo *p)
{
    for (unsigned k = 0; k < p->n_params; k++)
        if (!isfinite(p->params[k]))
            return false;
    return true;
}

/* update = cuda: the device for the update (cfg's, and its kernel cache;
 * NULL: device 0, uncached), the parameters uploaded. */
static cs_status open_device(ppo *p, const cs_config *cfg, char *err, size_t size)
{
    cs_ppo_device_shape sh = {
        .batch = p->batch, .rows = p->rows, .n_obs = p->n_obs, .n_act = p->n_act, .n_params = p->n_params,
        .log_std = p->log_std, .box = p->box, .norm_adv = p->norm_adv, .clip_vloss = p->clip_vloss,
        .clip = p->clip, .ent = p->ent, .vf = p->vf, .max_norm = p->max_norm, .actor = &p->actor,
        .critic = &p->critic, .low = p->low, .high = p->high,
    };
    return cs_ppo_device_open(&p->gpu, &sh, cfg, p->params, err, size);
}

/* One minibatch, perm[at .. at + m), with Adam's step t: on the cpu or the
 * device. *finite false: the losses, the gradient or the parameters are
 * no longer finite. */
static cs_status minibatch_step(ppo *p, int64_t at, int64_t m, double lr, int64_t t, losses *l, bool *finite)
{
    if (!p->gpu) {
        minibatch_grad(p, p->perm + at, m, l);
        *finite = isfinite(l->policy_loss) && isfinite(l->value_loss) && adam_step(p, lr, t) && finite_params(p);
        return CS_OK;
    }
    float step, c2f;
    adam_factors(lr, t, &step, &c2f);
    cs_ppo_device_result r;
    cs_status s = cs_ppo_device_minibatch(p->gpu, at, m, step, c2f, &r);
    if (s != CS_OK)
        return s;
    *l = (losses){r.policy_loss, r.value_loss, r.entropy, r.approx_kl};
    *finite = isfinite(l->policy_loss) && isfinite(l->value_loss) && r.stepped && r.params_finite;
    return CS_OK;
}

/* The iteration's update: update_epochs passes of num_minibatches Adam
 * steps, each epoch's shuffle from the seed. On the device the batch goes
 * up once and the parameters come down once, at the end. */
static cs_status update_iteration(ppo *p, uint64_t seed, int64_t it, double lr, int64_t *adam_t, losses *l,
                                  bool *finite)
{
    cs_status s = CS_OK;
    *finite = true;
    if (p->gpu && (s = cs_ppo_device_batch(p->gpu, p->obs, p->box ? (const void *)p->act : (const void *)p->act_i,
                                           p->logp, p->value, p->adv, p->ret)) != CS_OK)
        return s;
    for (int64_t e = 0; e < p->epochs && *finite; e++) {
        shuffle(p->perm, p->batch, cs_seed_mix(seed, CS_NOISE_PPO, (uint64_t)(it * p->epochs + e)));
        if (p->gpu && (s = cs_ppo_device_epoch(p->gpu, p->perm)) != CS_OK)
            return s;
        for (int64_t at = 0; at + p->minibatch <= p->batch && *finite; at += p->minibatch)
            if ((s = minibatch_step(p, at, p->minibatch, lr, ++*adam_t, l, finite)) != CS_OK)
                return s;
        if (p->target_kl > 0 && l->approx_kl > p->target_kl)
            break;
    }
    return p->gpu && *finite ? cs_ppo_device_download(p->gpu, p->params, NULL) : CS_OK;
}

static int alloc_all(ppo *p, const cs_train_config *tc)
{
    size_t B = (size_t)p->batch, R = (size_t)p->rows, P = p->n_params;
    unsigned widest = cs_mlp_widest(&p->actor);
    p->params = calloc(P, sizeof *p->params);
    p->grad = calloc(P, sizeof *p->grad);
    p->m = calloc(P, sizeof *p->m);
    p->v = calloc(P, sizeof *p->v);
    p->good = calloc(P, sizeof *p->good);
    p->kernel_w = calloc(P + 1, sizeof *p->kernel_w);
    p->obs = malloc((size_t)p->n_obs * B * sizeof *p->obs);
    p->fin = malloc((size_t)p->n_obs * B * sizeof *p->fin);
    p->act = malloc((size_t)(p->box ? p->n_act : 1) * B * sizeof *p->act);
    p->act_i = malloc(B * sizeof *p->act_i);
    p->logp = malloc(B * sizeof *p->logp);
    p->value = malloc(B * sizeof *p->value);
    p->next_value = malloc(B * sizeof *p->next_value);
    p->reward = malloc(B * sizeof *p->reward);
    p->adv = malloc(B * sizeof *p->adv);
    p->ret = malloc(B * sizeof *p->ret);
    p->term = malloc(B * sizeof *p->term);
    p->trunc = malloc(B * sizeof *p->trunc);
    p->perm = malloc((B > R ? B : R) * sizeof *p->perm);
    p->delta = malloc((size_t)widest * R * sizeof *p->delta);
    p->scratch = malloc((size_t)widest * R * sizeof *p->scratch);
    p->mb_adv = malloc(R * sizeof *p->mb_adv);
    p->obs_stat = calloc(p->n_obs, sizeof *p->obs_stat);
    p->ret_run = calloc((size_t)p->n_envs, sizeof *p->ret_run);
    p->tmp_n = calloc((size_t)p->n_envs, sizeof *p->tmp_n);
    p->returns = malloc((size_t)tc->eval_episodes * sizeof *p->returns);
    p->a_act = calloc(CS_AGENT_HIDDEN_MAX + 2, sizeof *p->a_act);
    p->c_act = calloc(CS_AGENT_HIDDEN_MAX + 2, sizeof *p->c_act);
    if (!p->params || !p->grad || !p->m || !p->v || !p->good || !p->kernel_w || !p->obs || !p->fin || !p->act ||
        !p->act_i || !p->logp || !p->value || !p->next_value || !p->reward || !p->adv || !p->ret || !p->term ||
        !p->trunc || !p->perm || !p->delta || !p->scratch || !p->mb_adv || !p->obs_stat || !p->ret_run ||
        !p->tmp_n || !p->returns || !p->a_act || !p->c_act)
        return -1;
    const cs_mlp *nets[2] = {&p->actor, &p->critic};
    float **acts[2] = {p->a_act, p->c_act};
    for (int k = 0; k < 2; k++)
        for (unsigned l = 0; l <= nets[k]->n_layers; l++)
            if (!(acts[k][l] = malloc((size_t)nets[k]->width[l] * R * sizeof(float))))
                return -1;
    for (unsigned k = 0; k < p->n_obs; k++)
        p->obs_stat[k] = (running_stat){0, 1, 1e-4};
    p->ret_stat = (running_stat){0, 1, 1e-4};
    return 0;
}

/* The greedy actor on eval_episodes fresh episodes, in a batch of its own
 * (the training batch's episodes go on). */
static cs_status score_greedy(ppo *p, const cs_config *cfg, const cs_train_config *tc, uint64_t seed, double *score,
                              char *err, size_t size)
{
    cs_status s;
    if (!p->eval_env) {
        cs_config c = *cfg;
        c.num_envs = tc->eval_episodes < 1024 ? tc->eval_episodes : 1024;
        c.first_env = 0;
        c.policy = p->policy;
        if ((s = cs_env_open(&c, &p->eval_env)) != CS_OK)
            return env_error(p->eval_env, s, err, size);
    }
    kernel_weights(p, true);
    if ((s = cs_env_set_weights(p->eval_env, p->kernel_w)) != CS_OK ||
        (s = cs_evaluate(p->eval_env, NULL, tc->eval_episodes, seed, p->returns)) != CS_OK)
        return env_error(p->eval_env, s, err, size);
    *score = cs_mean_return(p->returns, tc->eval_episodes);
    return CS_OK;
}

static cs_status check_settings(const ppo *p, const cs_train_config *tc, char *err, size_t size)
{
    if (tc->split.ranks > 1)
        return cs_say(err, size, CS_ERR_ARGUMENT, "PPO trains in one process (its update is not split yet)");
    if (p->iterations < 1)
        return cs_say(err, size, CS_ERR_ARGUMENT,
                      "total_timesteps %lld is less than one iteration (num_envs %lld x num_steps %lld)",
                      (long long)(tc->total_timesteps), (long long)p->n_envs, (long long)p->n_steps);
    if (p->minibatch < 1)
        return cs_say(err, size, CS_ERR_ARGUMENT, "num_minibatches is more than the %lld steps of an iteration",
                      (long long)p->batch);
    if (p->batch > (INT64_C(1) << 28))
        return cs_say(err, size, CS_ERR_ARGUMENT, "num_envs x num_steps (%lld) is more than 2^28 steps an iteration",
                      (long long)p->batch);
    return CS_OK;
}

cs_status cs_ppo_train(const cs_config *cfg, const cs_train_config *tc, cs_train_result *out, double start_ms,
                       char *err, size_t size)
{
    ppo P, *p = &P;
    memset(p, 0, sizeof *p);
    cs_agent agent;
    char why[256];
    if (cs_agent_parse(tc->policy, &agent, why, sizeof why))
        return cs_say(err, size, CS_ERR_ARGUMENT, "%s", why);
    if (agent.kind != CS_AGENT_DENSE || agent.actor_critic)
        return cs_say(err, size, CS_ERR_ARGUMENT, "PPO trains linear, mlp:H or mlp:HxH, not '%s'",
                      tc->policy ? tc->policy : "random");
    char actor_text[CS_AGENT_TEXT_MAX];
    cs_agent_format_actor(&agent, actor_text);
    agent.actor_critic = true;
    cs_agent_format(&agent, p->policy);
    snprintf(out->policy, sizeof out->policy, "%s", actor_text);

    /* the environment's shape first: the defaults depend on its action space */
    cs_config c = *cfg;
    c.policy = p->policy;
    c.first_env = 0;
    c.num_envs = tc->num_envs ? tc->num_envs : 1;
    cs_status s = CS_OK;
    cs_env_info info;
    if ((s = cs_env_open(&c, &p->env)) != CS_OK || (s = cs_env_get_info(p->env, &info)) != CS_OK) {
        s = env_error(p->env, s, err, size);
        goto done;
    }
    double compile_ms = info.compile_ms;   /* the first open compiles; a second hits the cache */
    p->box = !info.discrete;
    resolve(p, tc);
    if ((s = check_settings(p, tc, err, size)) != CS_OK)
        goto done;
    if (c.num_envs != p->n_envs) {
        cs_env_close(p->env);
        c.num_envs = p->n_envs;
        if ((s = cs_env_open(&c, &p->env)) != CS_OK || (s = cs_env_get_info(p->env, &info)) != CS_OK) {
            s = env_error(p->env, s, err, size);
            goto done;
        }
        compile_ms += info.compile_ms;
    }
    if (info.max_steps <= 0) {
        s = cs_say(err, size, CS_ERR_ARGUMENT, "%s declares no max_steps: the greedy policy's episodes need not end",
                   info.name);
        goto done;
    }
    snprintf(out->env, sizeof out->env, "%s", info.name);
    out->compile_ms = compile_ms;
    out->backend = info.backend;
    snprintf(out->notice, sizeof out->notice, "%s", info.notice ? info.notice : "");
    out->target = isnan(tc->target) ? info.reward_threshold : tc->target;
    out->eval_return = NAN;

    p->n_obs = info.obs_dim;
    p->n_act = p->box ? info.action_dim : info.n_actions;
    p->n_params = cs_ppo_shape(&agent, p->box, p->n_obs, p->n_act, &p->actor, &p->critic);
    p->log_std = p->actor.count + p->critic.count;
    if (p->n_params + 1 != cs_env_num_weights(p->env)) {
        s = cs_say(err, size, CS_ERR_STATE, "the actor-critic has %u weights, the trainer counts %u",
                   cs_env_num_weights(p->env), p->n_params + 1);
        goto done;
    }
    if (alloc_all(p, tc) ||
        (p->box && (!(p->low = malloc(p->n_act * sizeof *p->low)) || !(p->high = malloc(p->n_act * sizeof *p->high)))) ||
        init_params(p, tc->seed)) {
        s = cs_say(err, size, CS_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (unsigned k = 0; p->box && k < p->n_act; k++) {
        p->low[k] = info.action_low[k];
        p->high[k] = info.action_high[k];
    }
    if (tc->update == CS_UPDATE_CUDA && (s = open_device(p, cfg, err, size)) != CS_OK)
        goto done;
    if ((s = cs_env_reset(p->env, cs_seed_mix(tc->seed, CS_NOISE_RESET, 0))) != CS_OK) {
        s = env_error(p->env, s, err, size);
        goto done;
    }

    bool evaluated = false;
    int64_t adam_t = 0;
    for (int64_t it = 0; it < p->iterations && !out->solved; it++) {
        double t0 = cs_now_ms();
        kernel_weights(p, false);
        cs_rollout_stats st;
        if ((s = cs_env_set_weights(p->env, p->kernel_w)) != CS_OK ||
            (s = cs_env_rollout(p->env, p->n_steps, &st)) != CS_OK) {
            s = env_error(p->env, s, err, size);
            goto done;
        }
        if ((s = take_records(p, err, size)) != CS_OK)
            goto done;
        bootstrap_values(p);
        cs_ppo_gae(p->n_steps, p->n_envs, p->reward, p->value, p->next_value, p->term, p->trunc, p->gamma, p->lambda,
                   p->adv, p->ret);

        double lr = p->anneal ? (1.0 - (double)it / (double)p->iterations) * p->lr : p->lr;
        memcpy(p->good, p->params, p->n_params * sizeof *p->params);
        losses l = {NAN, NAN, NAN, NAN};
        bool finite;
        if ((s = update_iteration(p, tc->seed, it, lr, &adam_t, &l, &finite)) != CS_OK)
            goto done;
        out->env_steps += st.env_steps;
        out->generations = it + 1;
        if (!finite) {
            memcpy(p->params, p->good, p->n_params * sizeof *p->params);
            s = cs_say(err, size, CS_ERR_NUMERIC,
                       "the PPO loss or its gradient is not finite at iteration %lld: training stopped, the policy "
                       "of iteration %lld kept (a smaller learning_rate or max_grad_norm may help)",
                       (long long)it + 1, (long long)it);
            goto done;
        }
        cs_train_progress pr = {0};
        pr.generation = it + 1;
        pr.mean_return = st.mean_return;
        pr.best_return = NAN;
        pr.eval_return = NAN;
        pr.env_steps = out->env_steps;
        double ms = cs_now_ms() - t0;
        pr.env_steps_per_sec = ms > 0 ? (double)st.env_steps / (ms / 1e3) : NAN;
        pr.policy_loss = l.policy_loss;
        pr.value_loss = l.value_loss;
        pr.entropy = l.entropy;
        pr.approx_kl = l.approx_kl;
        pr.learning_rate = lr;
        if (!isnan(out->target) && st.episodes > 0 && st.mean_return >= out->target) {
            if ((s = score_greedy(p, cfg, tc, cs_seed_mix(tc->seed, CS_NOISE_EVAL, (uint64_t)it), &pr.eval_return,
                                  err, size)) != CS_OK)
                goto done;
            out->eval_return = pr.eval_return;
            out->solved = pr.eval_return >= out->target;
            evaluated = it + 1 == p->iterations || out->solved;
        }
        pr.elapsed_ms = cs_now_ms() - start_ms;
        if (tc->progress)
            tc->progress(tc->user, &pr);
    }
    if (!evaluated && (s = score_greedy(p, cfg, tc, cs_seed_mix(tc->seed, CS_NOISE_EVAL, (uint64_t)p->iterations),
                                        &out->eval_return, err, size)) != CS_OK)
        goto done;
    out->solved = !isnan(out->target) && out->eval_return >= out->target;
done:
    if (s == CS_OK || s == CS_ERR_NUMERIC) {
        /* the actor, observations folded in: a dense policy on raw observations */
        kernel_weights(p, true);
        out->n_weights = p->actor.count;
        if (p->kernel_w && (out->weights = malloc((p->actor.count ? p->actor.count : 1) * sizeof *out->weights)))
            memcpy(out->weights, p->kernel_w, p->actor.count * sizeof *out->weights);
        else if (s == CS_OK)
            s = cs_say(err, size, CS_ERR_NOMEM, "out of memory");
    }
    ppo_free(p);
    return s;
}

/* One update of the networks `arch` describes on the given rows, all in
 * one minibatch taken in order: the losses (policy, value, entropy,
 * approximate KL), the gradient before clipping, and the parameters after
 * one Adam step (clipping included) at learning_rate. The reference test
 * (tests/test_ppo.c, tests/ppo_reference.py) compares them with PyTorch's.
 * obs [n_obs][rows]; actions int32 [rows] (discrete) or float [n_act][rows].
 * tc->update picks the cpu or the device (tests/test_cuda.c compares them). */
cs_status cs_ppo_update_rows(const cs_train_config *tc, const char *arch, bool box, unsigned n_obs, unsigned n_act,
                             const double *low, const double *high, int64_t rows, const float *obs,
                             const void *actions, const float *logprob, const float *value, const float *adv,
                             const float *ret, float *params, double losses_out[4], float *grad_out)
{
    ppo P, *p = &P;
    memset(p, 0, sizeof *p);
    cs_agent agent;
    char why[256];
    if (cs_agent_parse(arch, &agent, why, sizeof why) || agent.kind != CS_AGENT_DENSE || rows < 2)
        return CS_ERR_ARGUMENT;
    p->box = box;
    resolve(p, tc);
    p->n_envs = 1;
    p->n_steps = p->batch = p->minibatch = rows;
    p->rows = (rows + CS_MLP_ROWS_ALIGN - 1) / CS_MLP_ROWS_ALIGN * CS_MLP_ROWS_ALIGN;
    p->n_obs = n_obs;
    p->n_act = n_act;
    p->n_params = cs_ppo_shape(&agent, box, n_obs, n_act, &p->actor, &p->critic);
    p->log_std = p->actor.count + p->critic.count;
    cs_train_config t = *tc;
    t.eval_episodes = 1;
    cs_status s = CS_OK;
    if (alloc_all(p, &t) || (box && (!(p->low = malloc(n_act * sizeof *p->low)) ||
                                     !(p->high = malloc(n_act * sizeof *p->high))))) {
        s = CS_ERR_NOMEM;
        goto done;
    }
    for (unsigned k = 0; box && k < n_act; k++) {
        p->low[k] = low[k];
        p->high[k] = high[k];
    }
    memcpy(p->params, params, p->n_params * sizeof *params);
    memcpy(p->obs, obs, (size_t)n_obs * (size_t)rows * sizeof *obs);
    if (box)
        memcpy(p->act, actions, (size_t)n_act * (size_t)rows * sizeof(float));
    else
        memcpy(p->act_i, actions, (size_t)rows * sizeof(int32_t));
    memcpy(p->logp, logprob, (size_t)rows * sizeof *logprob);
    memcpy(p->value, value, (size_t)rows * sizeof *value);
    memcpy(p->adv, adv, (size_t)rows * sizeof *adv);
    memcpy(p->ret, ret, (size_t)rows * sizeof *ret);
    for (int64_t r = 0; r < rows; r++)
        p->perm[r] = r;
    losses l;
    if (tc->update == CS_UPDATE_CUDA) {
        /* the same on the device: the minibatch through update_iteration's calls */
        char err[1024];
        cs_ppo_device_result r;
        float step, c2f;
        adam_factors(p->lr, 1, &step, &c2f);
        if ((s = open_device(p, NULL, err, sizeof err)) != CS_OK ||
            (s = cs_ppo_device_batch(p->gpu, p->obs, actions, p->logp, p->value, p->adv, p->ret)) != CS_OK ||
            (s = cs_ppo_device_epoch(p->gpu, p->perm)) != CS_OK ||
            (s = cs_ppo_device_minibatch(p->gpu, 0, rows, step, c2f, &r)) != CS_OK ||
            (s = cs_ppo_device_download(p->gpu, p->params, p->grad)) != CS_OK)
            goto done;
        l = (losses){r.policy_loss, r.value_loss, r.entropy, r.approx_kl};
        if (!r.stepped)
            s = CS_ERR_NUMERIC;
    } else {
        minibatch_grad(p, p->perm, rows, &l);
        if (!adam_step(p, p->lr, 1))
            s = CS_ERR_NUMERIC;
    }
    memcpy(grad_out, p->grad, p->n_params * sizeof *grad_out);
    losses_out[0] = l.policy_loss;
    losses_out[1] = l.value_loss;
    losses_out[2] = l.entropy;
    losses_out[3] = l.approx_kl;
    memcpy(params, p->params, p->n_params * sizeof *params);
done:
    ppo_free(p);
    return s;
}
