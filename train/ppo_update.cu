/* PPO's update on a GPU: train/ppo.c's minibatch_grad and adam_step as a
 * sequence of small kernels, each thread computing one value that no
 * other thread of its launch reads or writes. So the host shim
 * (tests/cuda_shim.h: threads one after another) is a valid schedule, and
 * every sum runs in one fixed order (a sum over rows in train/mlp.c's
 * CS_MLP_ROWS_ALIGN partial sums, a sum over parameters or rows one after
 * another in one thread): no atomics, the same bits run to run.
 *
 * The arithmetic is the cpu's, operation for operation (the expressions
 * below are train/ppo.c's and train/mlp.c's, written in the same order,
 * and NVRTC runs with --fmad=false): through the shim, where exp, log and
 * tanh are glibc's, the update is the cpu's bit for bit; on a GPU only
 * CUDA's double exp, log and tanh may differ in their last bits. The dense
 * layers' tanh is mathf.h's cs_tanhf on both (the prelude comes first).
 *
 * Per minibatch: gather, forward (each layer of each network), advantages,
 * loss_rows, zero_grad, for each network from the top layer down
 * weight_grad and (above the first layer) input_delta, sums, adam, check. */
#ifndef CS_GLOBAL
#define CS_GLOBAL extern "C" __global__
#endif
#ifndef CS_DEVICE
#define CS_DEVICE __device__ __forceinline__
#endif

#define PPO_THREAD ((long long)blockIdx.x * blockDim.x + threadIdx.x)

/* finite, without the library's isfinite (not every NVRTC declares it) */
CS_DEVICE int ppo_finite(double x) { return x - x == 0.0; }

/* PyTorch's gradient of max(a, b) and of clamp, as train/ppo.c's */
CS_DEVICE double ppo_max_share(double a, double b) { return a > b ? 1.0 : a < b ? 0.0 : 0.5; }
CS_DEVICE double ppo_in_range(double x, double lo, double hi) { return x >= lo && x <= hi ? 1.0 : 0.0; }

/* The minibatch's observations into both networks' inputs, pad rows 0.
 * Threads: n_obs x R. */
CS_GLOBAL void cs_ppo_gather(const ppo_update_args *A)
{
    long long k = PPO_THREAD, R = A->R, m = A->cursor->m;
    if (k >= (long long)A->n_obs * R)
        return;
    long long j = k / R, r = k % R;
    float x = r < m ? A->obs[j * A->B + A->perm[A->cursor->first + r]] : 0;
    A->net[0].act[0][k] = x;
    A->net[1].act[0][k] = x;
}

/* One layer of one network: y = ((w0 x0 + w1 x1) + ...) + b, tanh when
 * hidden (train/mlp.c's forward). Threads: outputs x R. */
CS_GLOBAL void cs_ppo_forward(const ppo_update_args *A)
{
    const ppo_update_net *n = &A->net[A->which];
    unsigned l = (unsigned)A->layer, n_in = n->width[l], n_out = n->width[l + 1];
    long long k = PPO_THREAD, R = A->R;
    if (k >= (long long)n_out * R)
        return;
    long long o = k / R, r = k % R;
    const float *w = A->params + n->offset[l] + o * (n_in + 1);
    const float *x = n->act[l];
    float y = w[0] * x[r];
    for (unsigned i = 1; i < n_in; i++)
        y = y + w[i] * x[(long long)i * R + r];
    y = y + w[n_in];
    if (l + 1 < n->n_layers)
        y = cs_tanhf(y);
    n->act[l + 1][k] = y;
}

/* The minibatch's advantages, normalized over it (torch.std: n - 1), in
 * row order. One thread. */
CS_GLOBAL void cs_ppo_advantages(const ppo_update_args *A)
{
    if (PPO_THREAD != 0)
        return;
    long long m = A->cursor->m;
    const int *idx = A->perm + A->cursor->first;
    double mean = 0, var = 0;
    for (long long r = 0; r < m; r++)
        mean += A->adv[idx[r]];
    mean /= (double)m;
    for (long long r = 0; r < m; r++)
        var += (A->adv[idx[r]] - mean) * (A->adv[idx[r]] - mean);
    double sd = m > 1 ? sqrt(var / (double)(m - 1)) : 0;
    for (long long r = 0; r < m; r++)
        A->mb_adv[r] = A->norm_adv ? (float)((A->adv[idx[r]] - mean) / (sd + 1e-8)) : A->adv[idx[r]];
}

/* Each row's losses and output deltas (train/ppo.c's minibatch_grad, one
 * row): the actor's into net[0].delta[0] [n_act][R], the critic's into
 * net[1].delta[0] [1][R], each row's shares of the losses and of the
 * log-stds' gradient into row_loss and row_log_std; pad rows 0. Threads: R. */
CS_GLOBAL void cs_ppo_loss_rows(const ppo_update_args *A)
{
    long long r = PPO_THREAD, R = A->R, B = A->B, m = A->cursor->m;
    if (r >= R)
        return;
    unsigned n_act = A->n_act;
    float *dz = A->net[0].delta[0], *dv = A->net[1].delta[0];
    if (r >= m) {
        for (unsigned a = 0; a < n_act; a++) {
            dz[a * R + r] = 0;
            A->row_log_std[a * R + r] = 0;
        }
        dv[r] = 0;
        for (int q = 0; q < 4; q++)
            A->row_loss[q * R + r] = 0;
        return;
    }
    long long s = A->perm[A->cursor->first + r];
    const float *z = A->net[0].act[A->net[0].n_layers], *v = A->net[1].act[A->net[1].n_layers];
    double inv_m = 1.0 / (double)m, lo = 1 - A->clip, hi = 1 + A->clip;
    double newlogp = 0, entropy = 0, lse = 0;
    if (!A->box) {
        double zmax = z[r];
        for (unsigned a = 1; a < n_act; a++)
            zmax = z[a * R + r] > zmax ? z[a * R + r] : zmax;
        double sum = 0;
        for (unsigned a = 0; a < n_act; a++)
            sum += exp(z[a * R + r] - zmax);
        lse = zmax + log(sum);
        for (unsigned a = 0; a < n_act; a++) {
            double logp = z[a * R + r] - lse, prob = exp(logp);
            entropy -= prob * logp;
        }
        newlogp = z[(long long)A->act_i[s] * R + r] - lse;
    } else {
        for (unsigned a = 0; a < n_act; a++) {
            double ls = A->params[A->log_std + a], sd_a = exp(ls);
            double mu = A->low[a] + (A->high[a] - A->low[a]) * (tanh(z[a * R + r]) + 1) / 2;
            double eps = (A->act[a * B + s] - mu) / sd_a;
            newlogp += -0.5 * eps * eps - ls - PPO_LOG_SQRT_2PI;
            entropy += 0.5 + PPO_LOG_SQRT_2PI + ls;
        }
    }
    double logratio = newlogp - A->logp[s], ratio = exp(logratio);
    double adv = A->mb_adv[r];
    double l1 = -adv * ratio, l2 = -adv * (ratio < lo ? lo : ratio > hi ? hi : ratio);
    A->row_loss[0 * R + r] = (l1 > l2 ? l1 : l2) * inv_m;
    A->row_loss[2 * R + r] = entropy * inv_m;
    A->row_loss[3 * R + r] = ((ratio - 1) - logratio) * inv_m;
    double share = ppo_max_share(l1, l2);
    double g = inv_m * (-adv) * (share + (1 - share) * ppo_in_range(ratio, lo, hi)) * ratio;
    if (!A->box) {
        double H = entropy;
        for (unsigned a = 0; a < n_act; a++) {
            double logp = z[a * R + r] - lse, prob = exp(logp);
            double d = g * ((a == (unsigned)A->act_i[s]) - prob) + A->ent * inv_m * prob * (logp + H);
            dz[a * R + r] = (float)d;
        }
    } else {
        for (unsigned a = 0; a < n_act; a++) {
            double ls = A->params[A->log_std + a], sd_a = exp(ls);
            double mu = A->low[a] + (A->high[a] - A->low[a]) * (tanh(z[a * R + r]) + 1) / 2;
            double eps = (A->act[a * B + s] - mu) / sd_a;
            double th = tanh(z[a * R + r]);
            double dmu = (A->high[a] - A->low[a]) / 2 * (1 - th * th);
            dz[a * R + r] = (float)(g * eps / sd_a * dmu);
            A->row_log_std[a * R + r] = g * (eps * eps - 1) - A->ent * inv_m;
        }
    }

    double nv = v[r], R_s = A->ret[s], old = A->value[s];
    double un = (nv - R_s) * (nv - R_s), d;
    if (A->clip_vloss) {
        double dvl = nv - old, cl = dvl < -A->clip ? -A->clip : dvl > A->clip ? A->clip : dvl;
        double vc = old + cl, c = (vc - R_s) * (vc - R_s);
        A->row_loss[1 * R + r] = 0.5 * (un > c ? un : c) * inv_m;
        double sh = ppo_max_share(un, c);
        d = sh * 2 * (nv - R_s) + (1 - sh) * 2 * (vc - R_s) * ppo_in_range(dvl, -A->clip, A->clip);
    } else {
        A->row_loss[1 * R + r] = 0.5 * un * inv_m;
        d = 2 * (nv - R_s);
    }
    dv[r] = (float)(A->vf * 0.5 * inv_m * d);
}

CS_GLOBAL void cs_ppo_zero_grad(const ppo_update_args *A)
{
    long long k = PPO_THREAD;
    if (k < A->n_params)
        A->grad[k] = 0;
}

/* The deltas of layer l's outputs are in delta[(n_layers - 1 - l) % 2]. */
CS_DEVICE float *ppo_layer_delta(const ppo_update_net *n, unsigned l) { return n->delta[(n->n_layers - 1 - l) % 2]; }

/* One weight (or bias) of layer `layer`: the sum over the rows of its
 * output's delta times its input, in train/mlp.c's row_sum order (PPO_ROW_PARTS
 * running partial sums, added in a fixed tree). Threads: outputs x (inputs + 1). */
CS_GLOBAL void cs_ppo_weight_grad(const ppo_update_args *A)
{
    const ppo_update_net *n = &A->net[A->which];
    unsigned l = (unsigned)A->layer, n_in = n->width[l], n_out = n->width[l + 1];
    long long k = PPO_THREAD, R = A->R;
    if (k >= (long long)n_out * (n_in + 1))
        return;
    long long o = k / (n_in + 1), i = k % (n_in + 1);
    const float *d = ppo_layer_delta(n, l) + o * R, *x = i < n_in ? n->act[l] + i * R : 0;
    float part[PPO_ROW_PARTS];
    for (int q = 0; q < PPO_ROW_PARTS; q++)
        part[q] = 0;
    for (long long r = 0; r < R; r += PPO_ROW_PARTS)
        for (int q = 0; q < PPO_ROW_PARTS; q++)
            part[q] = part[q] + (x ? d[r + q] * x[r + q] : d[r + q]);
    for (int w = PPO_ROW_PARTS / 2; w; w /= 2)
        for (int q = 0; q < w; q++)
            part[q] = part[q] + part[q + w];
    float *g = A->grad + n->offset[l] + k;
    *g = *g + part[0];
}

/* Layer `layer`'s deltas down to its input, then through the tanh below
 * (1 - h^2). Threads: inputs x R. */
CS_GLOBAL void cs_ppo_input_delta(const ppo_update_args *A)
{
    const ppo_update_net *n = &A->net[A->which];
    unsigned l = (unsigned)A->layer, n_in = n->width[l], n_out = n->width[l + 1];
    long long k = PPO_THREAD, R = A->R;
    if (l == 0 || k >= (long long)n_in * R)
        return;
    long long i = k / R, r = k % R;
    const float *dz = ppo_layer_delta(n, l), *w = A->params + n->offset[l];
    float di = w[i] * dz[r];
    for (unsigned o = 1; o < n_out; o++)
        di = di + w[o * (n_in + 1) + i] * dz[o * R + r];
    float h = n->act[l][k];
    ppo_layer_delta(n, l - 1)[k] = di * (1.0f - h * h);
}

/* The losses and the log-stds' gradient, summed over the rows in order,
 * then the gradient's global norm and its clipping factor. One thread. */
CS_GLOBAL void cs_ppo_sums(const ppo_update_args *A)
{
    if (PPO_THREAD != 0)
        return;
    long long m = A->cursor->m, R = A->R;
    ppo_update_result *out = A->result;
    double sum[4] = {0, 0, 0, 0};
    for (int q = 0; q < 4; q++)
        for (long long r = 0; r < m; r++)
            sum[q] += A->row_loss[q * R + r];
    out->policy_loss = sum[0];
    out->value_loss = sum[1];
    out->entropy = sum[2];
    out->approx_kl = sum[3];
    for (unsigned a = 0; A->box && a < A->n_act; a++) {
        double dls = 0;
        for (long long r = 0; r < m; r++)
            dls += A->row_log_std[a * R + r];
        A->grad[A->log_std + a] += (float)dls;
    }
    double norm = 0;
    for (unsigned k = 0; k < A->n_params; k++)
        norm += (double)A->grad[k] * A->grad[k];
    norm = sqrt(norm);
    out->norm = norm;
    out->stepped = ppo_finite(norm);
    out->scale = norm > A->max_norm ? (float)(A->max_norm / (norm + 1e-6)) : 1.0f;
}

/* One Adam step of one parameter (train/ppo.c's adam_step), when the
 * norm was finite. Threads: n_params. */
CS_GLOBAL void cs_ppo_adam(const ppo_update_args *A)
{
    long long k = PPO_THREAD;
    if (k >= A->n_params || !A->result->stepped)
        return;
    float step = A->cursor->step, c2f = A->cursor->c2;
    float g = A->grad[k] * A->result->scale;
    A->m[k] = PPO_ADAM_BETA1 * A->m[k] + (1 - PPO_ADAM_BETA1) * g;
    A->v[k] = PPO_ADAM_BETA2 * A->v[k] + (1 - PPO_ADAM_BETA2) * g * g;
    A->params[k] -= step * A->m[k] / (sqrtf(A->v[k]) / c2f + PPO_ADAM_EPSILON);
}

/* Whether every parameter is finite after the step. One thread. */
CS_GLOBAL void cs_ppo_check(const ppo_update_args *A)
{
    if (PPO_THREAD != 0)
        return;
    int ok = 1;
    for (unsigned k = 0; k < A->n_params; k++)
        ok &= ppo_finite(A->params[k]);
    A->result->params_finite = ok;
}
