/* PPO's update on a GPU (`update = cuda`): the kernels of
 * train/ppo_update.cu, compiled by NVRTC (after the kernels' prelude, for
 * mathf.h's tanh; kept in the kernel cache as the environment's cubins) and
 * launched through the device
 * runtime's generic half (jit/cuda_driver.c). The parameters and Adam's
 * moments stay on the device for the whole run; each iteration uploads
 * its batch once and each epoch its shuffle (the cpu's), each minibatch a
 * small cursor, and reads back a small result (the losses, whether Adam
 * stepped): train/ppo.c downloads the parameters once per iteration, for
 * the next rollout. */
#include <stdlib.h>
#include <string.h>

#include "jit.h"
#include "ppo_update.h"
#include "status.h"
#include "train.h"

extern const char cs_ppo_update_source[];   /* train/ppo_update.h and .cu (generated) */

_Static_assert(PPO_LAYERS_MAX == CS_AGENT_HIDDEN_MAX + 1, "ppo_update.h: a network's layers");
_Static_assert(PPO_ROW_PARTS == CS_MLP_ROWS_ALIGN, "ppo_update.h: the partial sums over rows are train/mlp.c's");
_Static_assert(PPO_ACTIONS_MAX == CS_AGENT_WIDTH_MAX, "ppo_update.h: the outputs");

enum { K_GATHER, K_FORWARD, K_ADVANTAGES, K_LOSS_ROWS, K_ZERO_GRAD, K_WEIGHT_GRAD, K_INPUT_DELTA, K_SUMS, K_ADAM,
       K_CHECK, K_COUNT };
static const char *const kernel_names[K_COUNT] = {
    "cs_ppo_gather", "cs_ppo_forward", "cs_ppo_advantages", "cs_ppo_loss_rows", "cs_ppo_zero_grad",
    "cs_ppo_weight_grad", "cs_ppo_input_delta", "cs_ppo_sums", "cs_ppo_adam", "cs_ppo_check",
};

#define MAX_BUFFERS 48
/* the launches' arguments: the base, then one per network and layer */
#define N_ARGS (1 + 2 * PPO_LAYERS_MAX)

struct cs_ppo_device {
    cs_cuda *cuda;
    cs_cuda_module mod;
    cs_cuda_function fn[K_COUNT];
    cs_ppo_device_shape shape;
    ppo_update_args args;             /* the base, its pointers the device's */
    cs_cuda_ptr args_dev, cursor, result;
    cs_cuda_ptr buf[MAX_BUFFERS];
    int n_buf;
    int *perm32;                      /* [batch] host scratch */
    char *err;
    size_t err_size;
};

/* A driver or NVRTC failure as a status: "the update on cuda: why". */
static cs_status fail(const cs_ppo_device *d, int rc, const char *why)
{
    cs_status s = rc == CS_CUDA_LIMIT ? CS_ERR_LIMIT : CS_ERR_UNAVAILABLE;
    return cs_say(d->err, d->err_size, s, "the update on cuda: %s", why);
}

#define TRY(call)                                                             \
    do {                                                                      \
        char why_[1024];                                                      \
        int rc_ = (call);                                                     \
        if (rc_)                                                              \
            return fail(d, rc_, why_);                                        \
    } while (0)
#define WHY why_, sizeof why_

/* A device buffer, freed with the handle; *ptr also typed for the args. */
static cs_status alloc(cs_ppo_device *d, size_t bytes, cs_cuda_ptr *out)
{
    if (d->n_buf == MAX_BUFFERS)
        return cs_say(d->err, d->err_size, CS_ERR_STATE, "the update on cuda: too many buffers");
    TRY(cs_cuda_mem_alloc(d->cuda, bytes, out, WHY));
    d->buf[d->n_buf++] = *out;
    return CS_OK;
}

#define ALLOC(field, type, count)                                              \
    do {                                                                       \
        cs_cuda_ptr p_;                                                        \
        cs_status s_ = alloc(d, (size_t)(count) * sizeof(type), &p_);          \
        if (s_ != CS_OK)                                                       \
            return s_;                                                         \
        field = (type *)(uintptr_t)p_;                                         \
    } while (0)

static cs_status alloc_net(cs_ppo_device *d, ppo_update_net *n, const cs_mlp *m)
{
    size_t R = (size_t)d->shape.rows;
    n->n_layers = m->n_layers;
    for (unsigned l = 0; l <= m->n_layers; l++) {
        n->width[l] = m->width[l];
        ALLOC(n->act[l], float, n->width[l] * R);
    }
    for (unsigned l = 0; l < m->n_layers; l++)
        n->offset[l] = m->offset[l];
    for (int k = 0; k < 2; k++)
        ALLOC(n->delta[k], float, cs_mlp_widest(m) * R);
    return CS_OK;
}

static cs_status alloc_all(cs_ppo_device *d, const float *params)
{
    const cs_ppo_device_shape *s = &d->shape;
    ppo_update_args *a = &d->args;
    size_t B = (size_t)s->batch, R = (size_t)s->rows, P = s->n_params;
    a->B = s->batch;
    a->R = s->rows;
    a->n_obs = s->n_obs;
    a->n_act = s->n_act;
    a->n_params = s->n_params;
    a->log_std = s->log_std;
    a->box = s->box;
    a->norm_adv = s->norm_adv;
    a->clip_vloss = s->clip_vloss;
    a->clip = s->clip;
    a->ent = s->ent;
    a->vf = s->vf;
    a->max_norm = s->max_norm;
    cs_status st;
    if ((st = alloc_net(d, &a->net[0], s->actor)) != CS_OK || (st = alloc_net(d, &a->net[1], s->critic)) != CS_OK)
        return st;
    ALLOC(a->obs, const float, (size_t)s->n_obs * B);
    ALLOC(a->act, const float, s->box ? (size_t)s->n_act * B : 1);
    ALLOC(a->act_i, const int, s->box ? 1 : B);
    ALLOC(a->logp, const float, B);
    ALLOC(a->value, const float, B);
    ALLOC(a->adv, const float, B);
    ALLOC(a->ret, const float, B);
    ALLOC(a->perm, const int, B);
    ALLOC(a->low, const double, s->box ? s->n_act : 1);
    ALLOC(a->high, const double, s->box ? s->n_act : 1);
    ALLOC(a->params, float, P);
    ALLOC(a->grad, float, P);
    ALLOC(a->m, float, P);
    ALLOC(a->v, float, P);
    ALLOC(a->mb_adv, float, R);
    ALLOC(a->row_loss, double, 4 * R);
    ALLOC(a->row_log_std, double, (size_t)s->n_act * R);
    ALLOC(a->cursor, const ppo_update_cursor, 1);
    ALLOC(a->result, ppo_update_result, 1);
    d->cursor = (cs_cuda_ptr)(uintptr_t)a->cursor;
    d->result = (cs_cuda_ptr)(uintptr_t)a->result;
    if ((st = alloc(d, N_ARGS * sizeof(ppo_update_args), &d->args_dev)) != CS_OK)
        return st;

    /* the arguments of every launch, uploaded once */
    ppo_update_args all[N_ARGS];
    for (int k = 0; k < N_ARGS; k++) {
        all[k] = *a;
        all[k].which = k ? (k - 1) / PPO_LAYERS_MAX : 0;
        all[k].layer = k ? (k - 1) % PPO_LAYERS_MAX : 0;
    }
    TRY(cs_cuda_mem_upload(d->cuda, d->args_dev, all, sizeof all, WHY));
    float *zero = calloc(P ? P : 1, sizeof *zero);
    if (!zero)
        return cs_say(d->err, d->err_size, CS_ERR_NOMEM, "out of memory");
    int rc = 0;
    char why[1024];
    if (!(rc = cs_cuda_mem_upload(d->cuda, (cs_cuda_ptr)(uintptr_t)a->params, params, P * sizeof *params, why, sizeof why)))
        rc = cs_cuda_mem_upload(d->cuda, (cs_cuda_ptr)(uintptr_t)a->m, zero, P * sizeof *zero, why, sizeof why);
    if (!rc)
        rc = cs_cuda_mem_upload(d->cuda, (cs_cuda_ptr)(uintptr_t)a->v, zero, P * sizeof *zero, why, sizeof why);
    free(zero);
    if (rc)
        return fail(d, rc, why);
    if (s->box) {
        TRY(cs_cuda_mem_upload(d->cuda, (cs_cuda_ptr)(uintptr_t)a->low, s->low, s->n_act * sizeof *s->low, WHY));
        TRY(cs_cuda_mem_upload(d->cuda, (cs_cuda_ptr)(uintptr_t)a->high, s->high, s->n_act * sizeof *s->high, WHY));
    }
    return CS_OK;
}

char *cs_ppo_update_kernels(void)
{
    size_t a = strlen(cs_prelude_text), b = strlen(cs_ppo_update_source);
    char *source = malloc(a + b + 1);
    if (source) {
        memcpy(source, cs_prelude_text, a);
        memcpy(source + a, cs_ppo_update_source, b + 1);
    }
    return source;
}

/* The kernels through NVRTC for the device (from the kernel cache when the
 * environment's kernels use one: cfg's), loaded. */
static cs_status build(cs_ppo_device *d, const cs_config *cfg)
{
    char *source = cs_ppo_update_kernels();
    if (!source)
        return cs_say(d->err, d->err_size, CS_ERR_NOMEM, "out of memory");
    cs_cache cache;
    memset(&cache, 0, sizeof cache);
    bool cached = cfg && !cfg->no_cache;
    if (cached) {
        cs_cache_open(&cache, cfg->cache_dir);
        if (cfg->cache_max_mb > 0)
            cache.max_bytes = cfg->cache_max_mb * 1048576LL;
    }
    cs_cubin bin;
    char why[2048];
    int rc = cs_cuda_compile_or_ptx(cs_cuda_nvrtc(d->cuda), source, cs_cuda_device_info(d->cuda)->arch, CS_CUDA_FMAD,
                                    cached ? &cache : NULL, &bin, why, sizeof why);
    if (cached)
        cs_cache_close(&cache);
    free(source);
    if (rc)
        return cs_say(d->err, d->err_size, rc == CS_CUDA_ARCH ? CS_ERR_UNAVAILABLE : CS_ERR_COMPILE,
                      "the update on cuda: %s", why);
    rc = cs_cuda_module_load(d->cuda, &bin, &d->mod, why, sizeof why);
    cs_cubin_free(&bin);
    if (rc)
        return fail(d, rc, why);
    for (int k = 0; k < K_COUNT; k++)
        TRY(cs_cuda_module_function(d->cuda, d->mod, kernel_names[k], &d->fn[k], WHY));
    return CS_OK;
}

cs_status cs_ppo_device_open(cs_ppo_device **out, const cs_ppo_device_shape *shape, const cs_config *cfg,
                             const float *params, char *err, size_t err_size)
{
    *out = NULL;
    cs_ppo_device *d = calloc(1, sizeof *d);
    if (!d || !(d->perm32 = malloc((size_t)shape->batch * sizeof *d->perm32))) {
        free(d);
        return cs_say(err, err_size, CS_ERR_NOMEM, "out of memory");
    }
    d->shape = *shape;
    d->err = err;
    d->err_size = err_size;
    char why[1024];
    int rc = cs_cuda_open(&d->cuda, cfg ? cfg->device : 0, why, sizeof why);
    cs_status s = rc ? cs_say(err, err_size, CS_ERR_UNAVAILABLE, "the update on cuda: %s", why) : build(d, cfg);
    if (s == CS_OK)
        s = alloc_all(d, params);
    if (s != CS_OK) {
        cs_ppo_device_close(d);
        return s;
    }
    *out = d;
    return CS_OK;
}

void cs_ppo_device_close(cs_ppo_device *d)
{
    if (!d)
        return;
    for (int k = 0; k < d->n_buf; k++)
        cs_cuda_mem_free(d->cuda, d->buf[k]);
    if (d->cuda)
        cs_cuda_module_unload(d->cuda, d->mod);
    cs_cuda_close(d->cuda);
    free(d->perm32);
    free(d);
}

cs_status cs_ppo_device_batch(cs_ppo_device *d, const float *obs, const void *actions, const float *logp,
                              const float *value, const float *adv, const float *ret)
{
    const cs_ppo_device_shape *s = &d->shape;
    const ppo_update_args *a = &d->args;
    size_t B = (size_t)s->batch;
    struct {
        const void *dev, *host;
        size_t bytes;
    } parts[] = {
        {a->obs, obs, s->n_obs * B * sizeof(float)},
        {s->box ? (const void *)a->act : (const void *)a->act_i, actions, (s->box ? s->n_act : 1) * B * 4},
        {a->logp, logp, B * sizeof(float)},
        {a->value, value, B * sizeof(float)},
        {a->adv, adv, B * sizeof(float)},
        {a->ret, ret, B * sizeof(float)},
    };
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++)
        TRY(cs_cuda_mem_upload(d->cuda, (cs_cuda_ptr)(uintptr_t)parts[k].dev, parts[k].host, parts[k].bytes, WHY));
    return CS_OK;
}

cs_status cs_ppo_device_epoch(cs_ppo_device *d, const int64_t *perm)
{
    for (int64_t k = 0; k < d->shape.batch; k++)
        d->perm32[k] = (int)perm[k];   /* a batch is at most 2^28 steps */
    TRY(cs_cuda_mem_upload(d->cuda, (cs_cuda_ptr)(uintptr_t)d->args.perm, d->perm32,
                           (size_t)d->shape.batch * sizeof *d->perm32, WHY));
    return CS_OK;
}

static cs_status launch(cs_ppo_device *d, int kernel, int args, long long threads)
{
    cs_cuda_ptr arg = d->args_dev + (cs_cuda_ptr)args * sizeof(ppo_update_args);
    TRY(cs_cuda_launch_ptr(d->cuda, d->fn[kernel], kernel_names[kernel], threads, arg, WHY));
    return CS_OK;
}

#define LAUNCH(kernel, args, threads)                                          \
    do {                                                                       \
        cs_status s_ = launch(d, kernel, args, threads);                       \
        if (s_ != CS_OK)                                                       \
            return s_;                                                         \
    } while (0)

cs_status cs_ppo_device_minibatch(cs_ppo_device *d, int64_t first, int64_t m, float step, float c2,
                                  cs_ppo_device_result *out)
{
    const cs_ppo_device_shape *s = &d->shape;
    const cs_mlp *nets[2] = {s->actor, s->critic};
    long long R = s->rows;
    ppo_update_cursor cur = {first, m, step, c2};
    TRY(cs_cuda_mem_upload(d->cuda, d->cursor, &cur, sizeof cur, WHY));
    LAUNCH(K_GATHER, 0, (long long)s->n_obs * R);
    for (int w = 0; w < 2; w++)
        for (unsigned l = 0; l < nets[w]->n_layers; l++)
            LAUNCH(K_FORWARD, 1 + w * PPO_LAYERS_MAX + (int)l, (long long)nets[w]->width[l + 1] * R);
    LAUNCH(K_ADVANTAGES, 0, 1);
    LAUNCH(K_LOSS_ROWS, 0, R);
    LAUNCH(K_ZERO_GRAD, 0, s->n_params);
    for (int w = 0; w < 2; w++)
        for (unsigned l = nets[w]->n_layers; l-- > 0;) {
            int args = 1 + w * PPO_LAYERS_MAX + (int)l;
            LAUNCH(K_WEIGHT_GRAD, args, (long long)nets[w]->width[l + 1] * (nets[w]->width[l] + 1));
            if (l > 0)
                LAUNCH(K_INPUT_DELTA, args, (long long)nets[w]->width[l] * R);
        }
    LAUNCH(K_SUMS, 0, 1);
    LAUNCH(K_ADAM, 0, s->n_params);
    LAUNCH(K_CHECK, 0, 1);
    TRY(cs_cuda_synchronize(d->cuda, "running PPO's update", WHY));
    ppo_update_result r;
    TRY(cs_cuda_mem_download(d->cuda, &r, d->result, sizeof r, WHY));
    out->policy_loss = r.policy_loss;
    out->value_loss = r.value_loss;
    out->entropy = r.entropy;
    out->approx_kl = r.approx_kl;
    out->stepped = r.stepped != 0;
    out->params_finite = r.params_finite != 0;
    return CS_OK;
}

cs_status cs_ppo_device_download(cs_ppo_device *d, float *params, float *grad)
{
    size_t bytes = d->shape.n_params * sizeof(float);
    if (params)
        TRY(cs_cuda_mem_download(d->cuda, params, (cs_cuda_ptr)(uintptr_t)d->args.params, bytes, WHY));
    if (grad)
        TRY(cs_cuda_mem_download(d->cuda, grad, (cs_cuda_ptr)(uintptr_t)d->args.grad, bytes, WHY));
    return CS_OK;
}
