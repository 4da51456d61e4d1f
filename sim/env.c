/* Batches of environments: the public API of cartsim.h over a compiled lane
 * program. Buffers are struct-of-arrays indexed by environment; every entry
 * point runs over lane ranges split across threads, and because each lane's
 * results depend on nothing but its own index, the seed and the global step
 * count, the split never changes a result.
 */
#include <assert.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents.h"
#include "cartsim.h"
#include "config.h"
#include "env_lanes.h"
#include "env_source.h"
#include "jit.h"
#include "pool.h"
#include "status.h"

#define CS_INLINE static inline
#include "mathf.h"   /* cs_canon_nan: the one NaN of what a user reads */

struct cs_env {
    char error[1024];
    bool failed;
    cs_kernel k;                /* the compiled program: cs_compile's, with the cuda device and module */
    double tier_wait_ms;        /* rollouts' time waiting for a tiered compile's optimized kernel */
    cs_program *prog;           /* k.prog */
    cs_backend backend;         /* k.backend */
    cs_fusion fusion;
    cs_dtype dtype;
    cs_math math;
    cs_autoreset autoreset;
    int unroll, threads;        /* unroll: k.unroll */
    int64_t n;
    int64_t first_env;                  /* cs_config.first_env: the Philox key of lane 0 */
    bool persistent;            /* cfg.persistent: fusion full rolls out in one launch */
    void *launch_blocks;        /* cpu, rules or none, not persistent: the kept blocks (launch_kernels) */

    void **carried, **params, **inputs;
    size_t *slot_size;                  /* [n_carried] bytes of each carried slot's element */
    int *segstep;
    float *obs, *final_obs;
    long long *obs_int, *final_obs_int; /* discrete observations */
    double *info, *final_info;          /* the info values */
    const uint32_t *replay_step, *replay_restart;   /* cs_env_replay_draws, for the next call */
    float *box_actions;                 /* cs_env_step_box_f64's doubles as floats, allocated on first use */
    int32_t *narrowed_actions;              /* cs_env_step_discrete_i64's actions as int32, allocated on first use */
    double *reward, *seg_return, *return_sum;
    uint8_t *terminated, *truncated, *pending;
    long long *segments, *nonfinite;
    long long *index_fault;             /* strict mode: each lane's first index out of range (lanes.h) */
    const char **state_names;
    double *action_low, *action_high;

    uint64_t seed;
    int64_t t;                  /* global step count since the last reset */
    bool was_reset;
    bool strict;                /* cfg.strict: a state or reward gone NaN/inf is an error */

    const char *policy_text;            /* cfg.policy, while compiling */
    unsigned first_weight, n_weights;   /* the policy's weights: params [first, first + n) */
    bool shared_weights;                /* ...one set for the batch, at element 0 (param_shared) */
    double *lane_return;                /* cs_env_episode_returns, made when asked for */
    int64_t *lane_episodes;
    void *device_actions;               /* strict mode: a host copy of a CUDA caller's actions */
    void **records;                     /* [n_records] rows of the last rollout: [steps][n] 4-byte values */
    int64_t record_rows;                /* the last rollout's steps */
    int64_t record_capacity;            /* rows the buffers hold */
    cs_pool *pool;                      /* threads - 1 workers, started by the first split call */
    bool pool_failed;
    bool threads_auto;                  /* cfg.threads 0: as many as the work pays for */
};

static cs_status fail(cs_env *env, cs_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static cs_status fail(cs_env *env, cs_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(env->error, sizeof env->error, fmt, ap);
    va_end(ap);
    return s;
}


static int online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > CS_MAX_THREADS ? CS_MAX_THREADS : (int)n;
}

/* ---- running an entry over lane ranges ---- */

/* The kernel entries; a step's actions are on the host unless a CUDA caller
 * wrote them on the device. */
typedef enum { ENTRY_RESTART, ENTRY_STEP, ENTRY_ROLLOUT, ENTRY_STEP_DEVICE_INPUTS } entry;

typedef struct {
    cs_env *env;
    cs_lanes lanes;
    entry which;   /* host backends: restart, step or rollout */
} job;

static void run_job(job *j)
{
    cs_env *env = j->env;
    if (env->backend == CS_BACKEND_INTERP) {
        if (j->which == ENTRY_RESTART)
            cs_interp_restart(env->prog, &j->lanes);
        else if (j->which == ENTRY_STEP)
            cs_interp_step(env->prog, &j->lanes);
        else
            cs_interp_rollout(env->prog, &j->lanes);
        return;
    }
    cs_entry e = j->which == ENTRY_RESTART ? env->k.cpu.restart : j->which == ENTRY_STEP ? env->k.cpu.step
                                                                                  : env->k.cpu.rollout;
    e(&j->lanes);
}

static void run_job_item(void *item) { run_job(item); }

static cs_lanes lanes_template(cs_env *env)
{
    cs_lanes l = {0};
    l.begin = 0;
    l.end = env->n;
    l.t = env->t;
    l.seed = env->seed;
    l.key0 = (unsigned long long)env->first_env;
    l.stride = env->n;
    l.carried = env->carried;
    l.params = env->params;
    l.segstep = env->segstep;
    l.inputs = env->inputs;
    l.obs = env->obs;
    l.final_obs = env->final_obs;
    l.obs_int = env->obs_int;
    l.final_obs_int = env->final_obs_int;
    l.info = env->info;
    l.final_info = env->final_info;
    l.reward = env->reward;
    l.terminated = env->terminated;
    l.truncated = env->truncated;
    l.pending = env->pending;
    l.seg_return = env->seg_return;
    l.segments = env->segments;
    l.return_sum = env->return_sum;
    l.nonfinite = env->nonfinite;
    l.index_fault = env->index_fault;
    return l;
}

/* Env-steps a thread must have before it is woken: for every call when
 * cs_config.threads = 0, and for step and restart calls whatever the
 * threads. Waking a sleeping worker costs about 55 us on the development
 * VM (2 threads made a 2048-environment step call 2.5x slower than 1), and
 * spinning workers instead lose far more on a loaded machine (8x slower at
 * a load of 15 on 2 cores), so a call is split only when each part is worth
 * several wake-ups. Given threads still split every rollout. */
#define MIN_WORK_PER_THREAD 65536

/* Split [begin, end) into contiguous chunks of whole 256-lane blocks. A
 * tiered compile's optimized kernel replaces the quick one here once built
 * (jit/tier.c): on the calling thread, before a call into the kernel (never
 * between two kernels of one step), while no worker runs. */
static void run_entry(cs_env *env, const cs_lanes *tmpl, entry which)
{
    if (tmpl->launch <= 1)
        cs_kernel_tier_up(&env->k);
    int64_t lanes = tmpl->end - tmpl->begin;
    if (lanes <= 0)
        return;
    int64_t blocks = (lanes + 255) / 256;
    int threads = env->threads < 1 ? 1 : env->threads;
    if (threads > blocks)
        threads = (int)blocks;
    if (env->threads_auto || which != ENTRY_ROLLOUT) {
        int64_t steps = which == ENTRY_ROLLOUT && tmpl->steps > 1 ? tmpl->steps : 1;
        int64_t work = steps > INT64_MAX / lanes ? INT64_MAX : lanes * steps;
        if (threads > work / MIN_WORK_PER_THREAD)
            threads = work / MIN_WORK_PER_THREAD < 1 ? 1 : (int)(work / MIN_WORK_PER_THREAD);
    }
    if (threads <= 1) {
        job j = {env, *tmpl, which};
        run_job(&j);
        return;
    }
    job jobs[CS_MAX_THREADS];
    for (int k = 0; k < threads; k++) {
        jobs[k] = (job){env, *tmpl, which};
        jobs[k].lanes.begin = tmpl->begin + blocks * k / threads * 256;
        jobs[k].lanes.end = k + 1 == threads ? tmpl->end : tmpl->begin + blocks * (k + 1) / threads * 256;
        if (tmpl->blocks)   /* each part its own blocks of a launch's kept values */
            jobs[k].lanes.blocks = (char *)tmpl->blocks + blocks * k / threads * env->k.cpu.block_bytes;
    }
    /* The workers start with the first split call and live as long as the
     * handle; none to be had: the caller runs every part. */
    if (!env->pool && !env->pool_failed)
        env->pool_failed = !(env->pool = cs_pool_open(env->threads));
    cs_pool_run(env->pool, run_job_item, jobs, sizeof jobs[0], threads);
}

/* The entries on the backend in use: cuda runs them on the device (host
 * buffers then hold stale copies until fetched, see cuda_copy). */
static cs_status run_lanes(cs_env *env, const cs_lanes *l, entry which, long long *launches)
{
    if (env->backend != CS_BACKEND_CUDA) {
        run_entry(env, l, which);
        return CS_OK;
    }
    char msg[1024];
    int rc = which == ENTRY_RESTART ? cs_cuda_restart(env->k.cuda, l, msg, sizeof msg)
           : which == ENTRY_STEP ? cs_cuda_step(env->k.cuda, l, false, msg, sizeof msg)
           : which == ENTRY_STEP_DEVICE_INPUTS ? cs_cuda_step(env->k.cuda, l, true, msg, sizeof msg)
                                               : cs_cuda_rollout(env->k.cuda, l, launches, msg, sizeof msg);
    return rc ? fail(env, rc == CS_CUDA_LIMIT ? CS_ERR_LIMIT : CS_ERR_UNAVAILABLE, "%s", msg) : CS_OK;
}

/* Rules and none without persistence on the cpu: every kernel of every step
 * is its own call into the compiled code (a launch, as on a GPU), the values
 * that cross kernels kept in env->launch_blocks between calls. */
static cs_status launch_kernels(cs_env *env, const cs_lanes *l, long long *launches)
{
    if (!env->launch_blocks) {
        size_t blocks = (size_t)((env->n + 255) / 256);
        if (!(env->launch_blocks = calloc(blocks ? blocks : 1, (size_t)env->k.cpu.block_bytes)))
            return fail(env, CS_ERR_NOMEM, "out of memory for %zu blocks of lanes", blocks);
    }
    for (long long s = 0; s < l->steps; s++)
        for (unsigned k = 0; k < (unsigned)env->k.kernels_per_step; k++) {
            cs_lanes part = *l;
            part.t = l->t + s;
            part.steps = 1;
            part.launch = (int)k + 1;
            part.blocks = env->launch_blocks;
            run_entry(env, &part, ENTRY_ROLLOUT);
            if (launches)
                *launches += 1;
        }
    return CS_OK;
}

/* A piece of a tiered compile's quick kernel's rollout lasts about this
 * long at most: the optimized kernel takes over within it of being built. */
#define QUICK_PIECE_MS 20.0

/* One launch's rollout entry; while the optimized build of a tiered compile
 * runs, in pieces of growing length (from one unroll, doubled while a piece
 * takes under QUICK_PIECE_MS), so that a long rollout is swapped to the
 * optimized kernel (run_entry) a moment after it is built, not at the next
 * call. The quick kernel runs 10-20x slower and takes cores from the build:
 * once the rest would take it longer than the build has left, the rollout
 * waits for the build instead (jit/tier.c). The pieces are not launches of
 * the schedule (*launches counts those), and the random numbers count the
 * global step, so they change no result. */
static void run_in_pieces(cs_env *env, const cs_lanes *l)
{
    long long piece = env->unroll;
    for (long long s = 0; s < l->steps;) {
        cs_lanes part = *l;
        part.t = l->t + s;
        part.steps = env->k.optimizing && piece < l->steps - s ? piece : l->steps - s;
        double start = env->k.optimizing ? cs_now_ms() : 0;
        run_entry(env, &part, ENTRY_ROLLOUT);
        s += part.steps;
        if (!env->k.optimizing)
            continue;
        double took = cs_now_ms() - start;
        if (cs_kernel_tier_worth_waiting(&env->k, took / (double)part.steps * (double)(l->steps - s))) {
            double waited = cs_now_ms();
            cs_kernel_tier_wait(&env->k);
            env->tier_wait_ms += cs_now_ms() - waited;
        }
        else if (took < QUICK_PIECE_MS && piece < LLONG_MAX / 2)
            piece *= 2;
    }
}

/* A rollout of l->steps steps, launched as the schedule says and counted into
 * *launches: fusion full once (persistent) or once per `unroll` steps, where
 * the cpu and the interpreter call their rollout entry as often as cuda
 * launches its kernel (cs_cuda_rollout splits the same way); rules and none
 * launch each kernel every step: persistent, on the cpu, as loops inside one
 * call; not persistent, as a call each (launch_kernels).
 * The random numbers count the global step, so the split changes no result. */
static cs_status run_rollout(cs_env *env, const cs_lanes *l, long long *launches)
{
    if (env->backend == CS_BACKEND_CUDA)
        return run_lanes(env, l, ENTRY_ROLLOUT, launches);
    bool full = env->fusion == CS_FUSION_FULL;
    if (env->backend == CS_BACKEND_CPU && !full && !env->persistent)
        return launch_kernels(env, l, launches);
    long long chunk = full && !env->persistent ? env->unroll : l->steps;
    for (long long s = 0; s < l->steps; s += chunk) {
        cs_lanes part = *l;
        part.t = l->t + s;
        part.steps = l->steps - s < chunk ? l->steps - s : chunk;
        run_in_pieces(env, &part);
        if (launches)
            *launches += full ? 1 : part.steps * env->k.kernels_per_step;
    }
    return CS_OK;
}

typedef enum { CUDA_FETCH, CUDA_READ, CUDA_UPLOAD, CUDA_ZERO } cuda_copy_kind;

/* Host <-> device for the buffers of `mask` (CS_BUF_BIT); nothing off cuda.
 * Fetch copies only what a launch left newer on the device. */
static cs_status cuda_copy(cs_env *env, cuda_copy_kind kind, unsigned mask)
{
    if (env->backend != CS_BACKEND_CUDA)
        return CS_OK;
    cs_lanes host = lanes_template(env);
    char msg[1024];
    int rc = kind == CUDA_FETCH ? cs_cuda_fetch(env->k.cuda, mask, &host, msg, sizeof msg)
           : kind == CUDA_READ ? cs_cuda_read(env->k.cuda, mask, &host, msg, sizeof msg)
           : kind == CUDA_UPLOAD ? cs_cuda_upload(env->k.cuda, mask, &host, msg, sizeof msg)
                                 : cs_cuda_zero(env->k.cuda, mask, &host, msg, sizeof msg);
    return rc ? fail(env, rc == CS_CUDA_LIMIT ? CS_ERR_LIMIT : CS_ERR_UNAVAILABLE, "%s", msg) : CS_OK;
}

/* ---- opening ---- */

static size_t real_size(const cs_env *env) { return env->dtype == CS_DTYPE_F32 ? sizeof(float) : sizeof(double); }

/* A bound on the bytes a lane's buffers take (a slot counted as a real). */
static int64_t bytes_per_lane(const cs_program *p, size_t real)
{
    return (int64_t)((p->n_carried + p->n_params) * real + 2 * p->n_obs * sizeof(float) +
                     2 * p->n_obs_int * sizeof(long long) + sizeof(int) + 3 * sizeof(double) + 3 +
                     2 * sizeof(long long) + p->n_inputs * sizeof(double));
}

/* A carried slot's element: the real type, int or unsigned char (jit/lanes.h). */
static size_t type_size(const cs_env *env, cs_type t)
{
    return t == CS_I32 ? sizeof(int) : t == CS_BOOL ? 1 : real_size(env);
}

/* A number from a one-line file such as a cgroup's memory.max; -1 for
 * "max", a missing file or anything else. */
static int64_t read_bytes_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long long v = -1;
    if (fscanf(f, "%lld", &v) != 1)
        v = -1;
    fclose(f);
    return v;
}

/* The memory a batch can count on: the least of the machine's memory, what
 * the kernel can hand out now (MemAvailable and free swap) and what the
 * cgroup (v2, else v1) still allows. Buffers are written at the first reset,
 * so a batch beyond this would be killed by the OOM killer, not refused by
 * calloc. *what names the bound that decided. */
static int64_t memory_limit(const char **what)
{
    int64_t best = INT64_MAX;
    *what = "any bound";
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0 && (int64_t)pages <= INT64_MAX / page) {
        best = (int64_t)pages * page;
        *what = "this machine's memory";
    }
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        long long kb, avail = -1, swap = 0;
        while (fgets(line, sizeof line, f)) {
            if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
                avail = kb;
            else if (sscanf(line, "SwapFree: %lld kB", &kb) == 1)
                swap = kb;
        }
        fclose(f);
        if (avail >= 0 && avail + swap < best / 1024) {
            best = (avail + swap) * 1024;
            *what = "the memory available now";
        }
    }
    int64_t limit = read_bytes_file("/sys/fs/cgroup/memory.max");
    int64_t used = read_bytes_file("/sys/fs/cgroup/memory.current");
    if (limit < 0) {
        limit = read_bytes_file("/sys/fs/cgroup/memory/memory.limit_in_bytes");
        used = read_bytes_file("/sys/fs/cgroup/memory/memory.usage_in_bytes");
    }
    if (limit > 0 && used >= 0 && limit - used < best) {
        best = limit > used ? limit - used : 0;
        *what = "what this cgroup's memory limit leaves";
    }
    return best;
}

static cs_status allocate(cs_env *env)
{
    cs_program *p = env->prog;
    int64_t n = env->n;
    int64_t per_lane = bytes_per_lane(p, real_size(env));
    if (env->strict)   /* the copy a strict rollout keeps */
        per_lane += (int64_t)((p->n_carried + p->n_params) * real_size(env) + sizeof(int) + sizeof(double));
    int64_t need = per_lane * n;
    const char *what;
    int64_t have = memory_limit(&what);
    if (need > have)
        return fail(env, CS_ERR_LIMIT, "%lld environments need %lld bytes, more than %s (%lld bytes)",
                    (long long)n, (long long)need, what, (long long)have);
    size_t rs = real_size(env);
    env->carried = calloc(p->n_carried + 1, sizeof *env->carried);
    env->slot_size = calloc(p->n_carried + 1, sizeof *env->slot_size);
    env->params = calloc(p->n_params + 1, sizeof *env->params);
    env->inputs = calloc(p->n_inputs + 1, sizeof *env->inputs);
    env->state_names = calloc(p->n_carried + 1, sizeof *env->state_names);
    if (!env->carried || !env->slot_size || !env->params || !env->inputs || !env->state_names)
        return fail(env, CS_ERR_NOMEM, "out of memory");
    for (unsigned k = 0; k < p->n_carried; k++) {
        env->state_names[k] = p->carried[k].name;
        env->slot_size[k] = type_size(env, p->carried[k].type);
        if (!(env->carried[k] = calloc((size_t)n, env->slot_size[k])))
            return fail(env, CS_ERR_NOMEM, "out of memory for %lld environments", (long long)n);
    }
    /* with room for the C rollout's pad lanes past the last (jit/lanes.h) */
    size_t param_lanes = (size_t)n + CS_LANES_PAD;
    for (unsigned k = 0; k < p->n_params; k++)
        if (!(env->params[k] = calloc(param_lanes, rs)))
            return fail(env, CS_ERR_NOMEM, "out of memory for %lld environments", (long long)n);
    size_t un = (size_t)n;
    env->segstep = calloc(un, sizeof *env->segstep);
    env->obs = calloc(un * (p->n_obs ? p->n_obs : 1), sizeof *env->obs);
    env->final_obs = calloc(un * (p->n_obs ? p->n_obs : 1), sizeof *env->final_obs);
    env->obs_int = calloc(un * (p->n_obs_int ? p->n_obs_int : 1), sizeof *env->obs_int);
    env->final_obs_int = calloc(un * (p->n_obs_int ? p->n_obs_int : 1), sizeof *env->final_obs_int);
    env->info = calloc(un * (p->n_info ? p->n_info : 1), sizeof *env->info);
    env->final_info = calloc(un * (p->n_info ? p->n_info : 1), sizeof *env->final_info);
    env->reward = calloc(un, sizeof *env->reward);
    env->seg_return = calloc(un, sizeof *env->seg_return);
    env->return_sum = calloc(un, sizeof *env->return_sum);
    env->terminated = calloc(un, 1);
    env->truncated = calloc(un, 1);
    env->pending = calloc(un, 1);
    env->segments = calloc(un, sizeof *env->segments);
    env->nonfinite = calloc(un, sizeof *env->nonfinite);
    if (env->strict && !(env->index_fault = calloc(un, sizeof *env->index_fault)))
        return fail(env, CS_ERR_NOMEM, "out of memory for %lld environments", (long long)n);
    if (!env->segstep || !env->obs || !env->final_obs || !env->obs_int || !env->final_obs_int || !env->info ||
        !env->final_info ||
        !env->reward ||
        !env->seg_return || !env->return_sum ||
        !env->terminated || !env->truncated || !env->pending || !env->segments || !env->nonfinite)
        return fail(env, CS_ERR_NOMEM, "out of memory for %lld environments", (long long)n);
    return CS_OK;
}

static cs_status check_config(cs_env *env, const cs_config *cfg)
{
    if (!cfg->env || !*cfg->env)
        return fail(env, CS_ERR_ARGUMENT, "no environment named");
    char msg[256];
    if (cs_config_check(cfg, msg, sizeof msg) != CS_OK)
        return fail(env, CS_ERR_ARGUMENT, "%s", msg);
    if ((unsigned)cfg->backend >= CS_BACKEND_COUNT || (unsigned)cfg->fusion >= CS_FUSION_COUNT ||
        (cfg->dtype != CS_DTYPE_F32 && cfg->dtype != CS_DTYPE_F64) ||
        (cfg->math != CS_MATH_EXACT && cfg->math != CS_MATH_FAST) ||
        (cfg->autoreset != CS_AUTORESET_NEXT_STEP && cfg->autoreset != CS_AUTORESET_SAME_STEP &&
         cfg->autoreset != CS_AUTORESET_DISABLED))
        return fail(env, CS_ERR_ARGUMENT, "unknown backend, fusion, dtype, math or autoreset value");
    /* Random numbers are keyed by a 32-bit environment index. */
    if (cfg->first_env < 0 || cfg->first_env > (INT64_C(1) << 32) - cfg->num_envs)
        return fail(env, CS_ERR_ARGUMENT, "first_env + num_envs must be from 1 to 2^32, not %lld + %lld",
                    (long long)cfg->first_env, (long long)cfg->num_envs);
    if (cfg->n_params < 0 || cfg->n_params > CS_MAX_PARAM_OVERRIDES)
        return fail(env, CS_ERR_ARGUMENT, "at most %d parameter overrides", CS_MAX_PARAM_OVERRIDES);
    return CS_OK;
}

static cs_status bind_agent(cs_program *p, void *ctx, char *err, size_t err_size)
{
    cs_env *env = ctx;
    cs_agent_weights w;
    cs_status s = cs_agent_build(p, env->policy_text, &w, err, err_size);
    env->first_weight = w.first_weight;
    env->n_weights = w.n_weights;
    env->shared_weights = w.shared;
    return s;
}

/* Loads the .env source and runs the driver (jit/compile.c) on it up to
 * `stop`: what cs_env_open, cs_dump and cs_dump_cubin share. */
static cs_status compile(cs_env *env, const cs_config *cfg, cs_compile_request *rq, cs_kernel *out)
{
    cs_env_source src;
    char msg[1024];
    cs_status s = cs_env_source_load(cfg->env, cfg->env_dir, &src, msg, sizeof msg);
    if (s != CS_OK)
        return fail(env, s, "%s", msg);
    env->policy_text = cfg->policy;
    rq->source = src.text;
    rq->len = src.len;
    rq->filename = src.filename;
    rq->real = cfg->dtype == CS_DTYPE_F32 ? CS_F32 : CS_F64;
    rq->fast_f64 = cfg->math == CS_MATH_FAST && cfg->dtype == CS_DTYPE_F64;
    rq->strict = cfg->strict;
    rq->params = cfg->params;
    rq->n_params = (unsigned)cfg->n_params;
    rq->bind_policy = bind_agent;
    rq->policy_ctx = env;
    rq->fusion = cfg->fusion;
    rq->unroll = cfg->unroll;
    rq->block = cfg->block;
    rq->persistent = cfg->persistent;
    rq->backend = cfg->backend;
    /* A recording policy (the PPO trainer's) runs on the cpu unless cuda is
     * asked for: its batches are a few environments (docs/train.md). */
    cs_agent agent;
    char why[256];
    if (cfg->backend == CS_BACKEND_AUTO && cs_agent_parse(cfg->policy, &agent, why, sizeof why) == 0 &&
        agent.actor_critic)
        rq->backend = CS_BACKEND_CPU;
    rq->cc = cfg->cc;
    rq->device = cfg->device;
    rq->cc_timeout_s = cfg->cc_timeout_s > 0 ? cfg->cc_timeout_s : CS_CC_TIMEOUT_S_DEFAULT;
    rq->interrupt = cfg->interrupt;
    rq->cache_max_mb = cfg->cache_max_mb;
    rq->cache_dir = cfg->cache_dir;
    rq->no_cache = cfg->no_cache;
    rq->tier = cfg->tier;
    cs_compile_error e = cs_compile(rq, out, msg, sizeof msg);
    cs_env_source_free(&src);
    rq->source = rq->filename = NULL;   /* the kernel keeps nothing of the source */
    return e == CS_COMPILE_OK ? CS_OK : fail(env, cs_compile_status(e), "%s", msg);
}

cs_status cs_env_open(const cs_config *cfg, cs_env **out)
{
    if (!out)
        return CS_ERR_ARGUMENT;
    cs_env *env = *out = calloc(1, sizeof *env);
    if (!env)
        return CS_ERR_NOMEM;
    env->failed = true;
    if (!cfg)
        return fail(env, CS_ERR_ARGUMENT, "no configuration given");
    cs_status s = check_config(env, cfg);
    if (s != CS_OK)
        return s;
    env->n = cfg->num_envs;
    env->first_env = cfg->first_env;
    env->fusion = cfg->fusion;
    env->dtype = cfg->dtype;
    env->math = cfg->dtype == CS_DTYPE_F64 ? cfg->math : CS_MATH_EXACT;   /* f32: one kernel for both */
    env->unroll = cfg->unroll;
    env->autoreset = cfg->autoreset;
    env->strict = cfg->strict;
    env->persistent = cfg->persistent;
    env->threads = cfg->threads ? cfg->threads : online_cores();
    env->threads_auto = cfg->threads == 0;
    cs_compile_request rq = {.stop = CS_STAGE_BACKEND};
    if ((s = compile(env, cfg, &rq, &env->k)) != CS_OK)
        return s;
    env->prog = env->k.prog;
    env->backend = env->k.backend;
    env->unroll = env->k.unroll;
    if ((s = allocate(env)) != CS_OK)
        return s;
    if (env->backend == CS_BACKEND_CUDA) {
        cs_lanes_layout lay = {.n = env->n, .n_carried = env->prog->n_carried, .n_params = env->prog->n_params,
                               .n_obs = env->prog->n_obs, .n_inputs = env->prog->n_inputs, .real_size = real_size(env),
                               .slot_size = env->slot_size, .n_obs_int = env->prog->n_obs_int, .n_info = env->prog->n_info,
                               .n_step_draws = env->prog->n_step_draws, .n_restart_draws = env->prog->n_restart_draws,
                               .n_records = env->prog->n_records};
        char msg[1024];
        int rc = cs_cuda_alloc(env->k.cuda, &lay, msg, sizeof msg);
        if (rc)
            return fail(env, rc == CS_CUDA_LIMIT ? CS_ERR_LIMIT : CS_ERR_UNAVAILABLE, "%s", msg);
    }
    env->error[0] = 0;
    env->failed = false;
    return CS_OK;
}

void cs_env_close(cs_env *env)
{
    if (!env)
        return;
    cs_pool_close(env->pool);
    free(env->launch_blocks);
    if (env->prog) {
        for (unsigned k = 0; k < env->prog->n_carried; k++)
            free(env->carried ? env->carried[k] : NULL);
        for (unsigned k = 0; k < env->prog->n_params; k++)
            free(env->params ? env->params[k] : NULL);
    }
    free(env->carried);
    free(env->slot_size);
    free(env->params);
    free(env->inputs);
    free(env->state_names);
    free(env->segstep);
    free(env->obs);
    free(env->final_obs);
    free(env->obs_int);
    free(env->final_obs_int);
    free(env->info);
    free(env->final_info);
    free(env->reward);
    free(env->seg_return);
    free(env->return_sum);
    free(env->terminated);
    free(env->truncated);
    free(env->pending);
    free(env->segments);
    free(env->nonfinite);
    free(env->index_fault);
    free(env->lane_return);
    free(env->lane_episodes);
    free(env->device_actions);
    free(env->box_actions);
    free(env->narrowed_actions);
    for (unsigned k = 0; env->records && k < env->prog->n_records; k++)
        free(env->records[k]);
    free(env->records);
    cs_kernel_free(&env->k);
    free(env);
}

const char *cs_env_error(const cs_env *env) { return env ? env->error : "no environment handle"; }

cs_status cs_env_say(cs_env *env, cs_status s, const char *fmt, ...)
{
    if (!env)
        return s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(env->error, sizeof env->error, fmt, ap);
    va_end(ap);
    return s;
}

static cs_status usable(cs_env *env)
{
    if (!env)
        return CS_ERR_ARGUMENT;
    if (env->failed)
        return fail(env, CS_ERR_STATE, "this handle failed to open: close it");
    env->error[0] = 0;
    return CS_OK;
}

cs_status cs_env_get_info(cs_env *env, cs_env_info *info)
{
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    if (!info)
        return fail(env, CS_ERR_ARGUMENT, "info is NULL");
    const cs_program *p = env->prog;
    memset(info, 0, sizeof *info);
    info->name = p->name;
    info->title = p->title;
    info->num_envs = env->n;
    info->first_env = env->first_env;
    info->state_dim = p->n_carried;
    info->obs_dim = p->n_obs;
    info->discrete = p->action_kind == CS_ACTION_DISCRETE;
    info->n_actions = p->n_actions;
    info->action_dim = p->n_inputs;
    info->action_low = p->input_low;
    info->action_high = p->input_high;
    info->max_steps = p->max_steps;
    info->reward_threshold = p->reward_threshold;
    info->state_names = env->state_names;
    info->backend = env->backend;
    info->fusion = env->fusion;
    info->dtype = env->dtype;
    info->math = env->math;
    info->unroll = env->unroll;
    info->threads = env->threads;
    info->kernels_per_step = env->k.kernels_per_step;
    info->persistent = env->fusion == CS_FUSION_FULL && env->persistent;
    /* a rollout's wait for a tiered compile's optimized kernel is compile
     * time, not its run's */
    info->compile_ms = env->k.compile_ms + env->tier_wait_ms;
    info->cache_hit = env->k.cache_hit;
    info->notice = env->k.notice;
    info->shared_weights = env->shared_weights;
    info->n_records = p->n_records;
    info->optimizing = env->k.optimizing != NULL;
    if (env->backend == CS_BACKEND_CUDA) {
        const cs_cuda_device *dev = cs_cuda_device_info(env->k.cuda);
        info->device = dev->name;
        info->sm_count = dev->sm_count;
        info->arch = dev->arch;
        info->block = env->k.cuda_kernel.block;
        info->registers = env->k.cuda_kernel.registers;
        info->spill_bytes = env->k.spill_bytes;
        info->local_bytes = env->k.cuda_kernel.local_bytes;
    }
    info->n_state_vars = p->n_vars;
    info->n_obs_items = p->n_obs_items;
    info->obs_int_dim = p->n_obs_int;
    info->n_step_draws = p->n_step_draws;
    info->n_restart_draws = p->n_restart_draws;
    info->n_info_items = p->n_info_items;
    info->info_dim = p->n_info;
    return CS_OK;
}

static cs_value_type value_type(const cs_program *p, cs_type t)
{
    return t == CS_BOOL ? CS_VALUE_BOOL : t == CS_I32 || t == CS_U32 || t != p->real ? CS_VALUE_INT : CS_VALUE_REAL;
}

/* The items a handle describes one at a time (cs_env_info_item,
 * cs_env_state_info, cs_env_obs_info). */
typedef enum { ITEM_INFO, ITEM_STATE, ITEM_OBS } item_kind;

/* The checks each item query makes before it describes item k. */
static cs_status item_query(cs_env *env, const void *out, unsigned k, item_kind kind)
{
    static const char *const what[] = {[ITEM_INFO] = "info value", [ITEM_STATE] = "state variable",
                                       [ITEM_OBS] = "observation"};
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    const cs_program *p = env->prog;
    unsigned n = kind == ITEM_INFO ? p->n_info_items : kind == ITEM_STATE ? p->n_vars : p->n_obs_items;
    if (!out)
        return fail(env, CS_ERR_ARGUMENT, "out is NULL");
    if (k >= n)
        return fail(env, CS_ERR_ARGUMENT, "%s %u of %u", what[kind], k, n);
    return CS_OK;
}

/* An item's rank and dims; the dims past its rank are 1 (a scalar: rank 0, 1x1x1). */
static void describe_shape(const cs_program *p, uint32_t shape, unsigned *rank, unsigned dims[3])
{
    const cs_shape *sh = cs_shape_of(p->graph, shape);
    *rank = sh->rank;
    for (unsigned a = 0; a < 3; a++)
        dims[a] = a < sh->rank ? sh->dim[a] : 1;
}

cs_status cs_env_info_item(cs_env *env, unsigned k, cs_info_item_desc *out)
{
    cs_status s = item_query(env, out, k, ITEM_INFO);
    if (s != CS_OK)
        return s;
    const cs_program *p = env->prog;
    const cs_info_item *it = &p->info_items[k];
    memset(out, 0, sizeof *out);
    out->name = it->name;
    out->type = value_type(p, it->type);
    describe_shape(p, it->shape, &out->rank, out->dims);
    out->offset = it->offset;
    out->size = it->size;
    return CS_OK;
}

cs_status cs_env_state_info(cs_env *env, unsigned k, cs_state_info *out)
{
    cs_status s = item_query(env, out, k, ITEM_STATE);
    if (s != CS_OK)
        return s;
    const cs_program *p = env->prog;
    const cs_state_var *v = &p->vars[k];
    memset(out, 0, sizeof *out);
    out->name = v->name;
    out->type = value_type(p, v->type);
    describe_shape(p, v->shape, &out->rank, out->dims);
    out->first = v->slot;
    out->size = v->size;
    return CS_OK;
}

cs_status cs_env_obs_info(cs_env *env, unsigned k, cs_obs_info *out)
{
    cs_status s = item_query(env, out, k, ITEM_OBS);
    if (s != CS_OK)
        return s;
    const cs_program *p = env->prog;
    const cs_obs_item *it = &p->obs_items[k];
    memset(out, 0, sizeof *out);
    out->name = it->name;
    out->space = it->space == CS_OBS_DISCRETE ? CS_SPACE_DISCRETE : CS_SPACE_BOX;
    out->type = value_type(p, (cs_type)cs_graph_node(p->graph, it->node)->type);
    describe_shape(p, it->shape, &out->rank, out->dims);
    out->offset = it->offset;
    out->size = it->size;
    out->low = it->low;
    out->high = it->high;
    out->n = it->n;
    return CS_OK;
}

cs_status cs_env_replay_draws(cs_env *env, const uint32_t *step_words, const uint32_t *restart_words)
{
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    if (env->backend == CS_BACKEND_CUDA && (step_words || restart_words))
        return fail(env, CS_ERR_UNAVAILABLE, "replaying draws runs on the host backends (cpu, interp)");
    env->replay_step = step_words;
    env->replay_restart = restart_words;
    return CS_OK;
}

/* The replayed words for this call (cs_env_replay_draws), then forgotten. */
static void take_replay(cs_env *env, cs_lanes *l)
{
    l->step_words = env->replay_step;
    l->restart_words = env->replay_restart;
    env->replay_step = env->replay_restart = NULL;
}

cs_status cs_env_reset(cs_env *env, uint64_t seed)
{
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    env->seed = seed;
    env->t = 0;
    cs_lanes l = lanes_template(env);
    take_replay(env, &l);
    if ((s = run_lanes(env, &l, ENTRY_RESTART, NULL)) != CS_OK)
        return s;
    memset(env->reward, 0, (size_t)env->n * sizeof *env->reward);
    memset(env->terminated, 0, (size_t)env->n);
    memset(env->truncated, 0, (size_t)env->n);
    if ((s = cuda_copy(env, CUDA_ZERO, CS_BUF_BIT(CS_BUF_REWARD) | CS_BUF_BIT(CS_BUF_TERMINATED) |
                                           CS_BUF_BIT(CS_BUF_TRUNCATED))) != CS_OK)
        return s;
    env->was_reset = true;
    return CS_OK;
}

static int mode_of(cs_autoreset a)
{
    return a == CS_AUTORESET_SAME_STEP ? CS_MODE_SAME_STEP : a == CS_AUTORESET_NEXT_STEP ? CS_MODE_NEXT_STEP
                                                                                       : CS_MODE_NO_RESTART;
}

/* The episode step counters are 32-bit: an environment without max_steps
 * must not count past INT32_MAX in one episode. Refuses `steps` more steps
 * that could take some episode there. */
static cs_status episode_steps_fit(cs_env *env, int64_t steps)
{
    if (env->prog->max_steps > 0)
        return CS_OK;   /* truncation restarts episodes first (max_steps <= INT32_MAX) */
    cs_status s = cuda_copy(env, CUDA_FETCH, CS_BUF_BIT(CS_BUF_SEGSTEP));
    if (s != CS_OK)
        return s;
    int longest = 0;
    for (int64_t i = 0; i < env->n; i++)
        if (env->segstep[i] > longest)
            longest = env->segstep[i];
    if (steps > INT32_MAX - (int64_t)longest)
        return fail(env, CS_ERR_LIMIT,
                    "%lld more steps could take an episode past %d steps, the most its counter holds (the "
                    "environment has no max_steps; its longest running episode has %d)",
                    (long long)steps, INT32_MAX, longest);
    return CS_OK;
}

/* ---- strict mode: the first environment whose state or reward is not finite ---- */

/* Lane i's index out of range (its index_fault word, not 0), as the
 * message says it: "index 12 out of range [0, 10) at envs/x.env:14:9". */
static const char *index_fault_text(const cs_env *env, int64_t i, char *buf, size_t size)
{
    const cs_program *p = env->prog;
    unsigned long long word = (unsigned long long)env->index_fault[i];
    unsigned site = (unsigned)(word >> 32) - 1;
    if (site >= p->n_index_sites)
        return "an index is out of range";
    snprintf(buf, size, "index %d out of range [0, %u) at %s:%s", (int)(unsigned)(word & 0xffffffffu),
             p->index_sites[site].dim, p->source_name ? p->source_name : "", p->index_sites[site].where);
    return buf;
}

/* After one step: a restart for a NaN/inf state (the nonfinite counters,
 * zeroed before it), an index out of range (the index fault words, zeroed
 * too), a reward or an observation that is not finite. */
static cs_status strict_step_check(cs_env *env)
{
    cs_status s = cuda_copy(env, CUDA_FETCH, CS_BUF_BIT(CS_BUF_NONFINITE) | CS_BUF_BIT(CS_BUF_REWARD) |
                                                 CS_BUF_BIT(CS_BUF_OBS) | CS_BUF_BIT(CS_BUF_FINAL_OBS) |
                                                 CS_BUF_BIT(CS_BUF_INDEX_FAULT));
    if (s != CS_OK)
        return s;
    const cs_program *p = env->prog;
    size_t n = (size_t)env->n;
    char buf[CS_NAME_MAX + 4200];
    for (size_t i = 0; i < n; i++) {
        const char *what = env->index_fault[i] ? index_fault_text(env, (int64_t)i, buf, sizeof buf)
                         : env->nonfinite[i] ? "its state became NaN or infinite"
                         : !isfinite(env->reward[i]) ? "its reward is not finite" : NULL;
        for (unsigned k = 0; !what && k < p->n_obs; k++)
            if (!isfinite(env->obs[k * n + i]) || (env->autoreset == CS_AUTORESET_SAME_STEP && env->terminated[i] &&
                                                   !isfinite(env->final_obs[k * n + i])))
                what = "its observation is not finite";
        if (what)
            return fail(env, CS_ERR_NUMERIC, "environment %zu: %s in step %lld since the reset (strict mode)", i,
                        what, (long long)env->t);
    }
    return CS_OK;
}

/* What a rollout changes in lanes it may have to run again: the state, the
 * per-lane parameters (redrawn at restarts), the episode steps and returns. */
typedef struct {
    void **carried, **params;
    int *segstep;
    double *seg_return;
} lane_snapshot;

static void snapshot_free(const cs_env *env, lane_snapshot *snap)
{
    for (unsigned k = 0; snap->carried && k < env->prog->n_carried; k++)
        free(snap->carried[k]);
    for (unsigned k = 0; snap->params && k < env->prog->n_params; k++)
        free(snap->params[k]);
    free(snap->carried);
    free(snap->params);
    free(snap->segstep);
    free(snap->seg_return);
    memset(snap, 0, sizeof *snap);
}

#define LANE_BUFFERS (CS_BUF_BIT(CS_BUF_CARRIED) | CS_BUF_BIT(CS_BUF_PARAMS) | CS_BUF_BIT(CS_BUF_SEGSTEP) | \
                      CS_BUF_BIT(CS_BUF_SEG_RETURN))
#define COUNTER_BUFFERS (CS_BUF_BIT(CS_BUF_SEGMENTS) | CS_BUF_BIT(CS_BUF_RETURN_SUM) | CS_BUF_BIT(CS_BUF_NONFINITE) | \
                         CS_BUF_BIT(CS_BUF_INDEX_FAULT))

static cs_status snapshot_take(cs_env *env, lane_snapshot *snap)
{
    const cs_program *p = env->prog;
    size_t n = (size_t)env->n, rs = real_size(env);
    memset(snap, 0, sizeof *snap);
    cs_status s = cuda_copy(env, CUDA_FETCH, LANE_BUFFERS);
    if (s != CS_OK)
        return s;
    snap->carried = calloc(p->n_carried + 1, sizeof *snap->carried);
    snap->params = calloc(p->n_params + 1, sizeof *snap->params);
    snap->segstep = malloc(n * sizeof *snap->segstep);
    snap->seg_return = malloc(n * sizeof *snap->seg_return);
    bool ok = snap->carried && snap->params && snap->segstep && snap->seg_return;
    for (unsigned k = 0; ok && k < p->n_carried; k++)
        if ((ok = (snap->carried[k] = malloc(n * env->slot_size[k])) != NULL))
            memcpy(snap->carried[k], env->carried[k], n * env->slot_size[k]);
    for (unsigned k = 0; ok && k < p->n_params; k++)
        if ((ok = (snap->params[k] = malloc(n * rs)) != NULL))
            memcpy(snap->params[k], env->params[k], n * rs);
    if (!ok) {
        snapshot_free(env, snap);
        return fail(env, CS_ERR_NOMEM, "out of memory for the strict mode's copy of %lld environments",
                    (long long)env->n);
    }
    memcpy(snap->segstep, env->segstep, n * sizeof *snap->segstep);
    memcpy(snap->seg_return, env->seg_return, n * sizeof *snap->seg_return);
    return CS_OK;
}

/* Lanes [a, b) back as the snapshot holds them, their counters zeroed. */
static cs_status snapshot_restore(cs_env *env, const lane_snapshot *snap, int64_t a, int64_t b)
{
    const cs_program *p = env->prog;
    size_t rs = real_size(env), from = (size_t)a, len = (size_t)(b - a);
    for (unsigned k = 0; k < p->n_carried; k++) {
        size_t ss = env->slot_size[k];
        memcpy((char *)env->carried[k] + from * ss, (char *)snap->carried[k] + from * ss, len * ss);
    }
    for (unsigned k = 0; k < p->n_params; k++)
        memcpy((char *)env->params[k] + from * rs, (char *)snap->params[k] + from * rs, len * rs);
    memcpy(env->segstep + from, snap->segstep + from, len * sizeof *env->segstep);
    memcpy(env->seg_return + from, snap->seg_return + from, len * sizeof *env->seg_return);
    memset(env->segments + from, 0, len * sizeof *env->segments);
    memset(env->return_sum + from, 0, len * sizeof *env->return_sum);
    memset(env->nonfinite + from, 0, len * sizeof *env->nonfinite);
    memset(env->index_fault + from, 0, len * sizeof *env->index_fault);
    return cuda_copy(env, CUDA_UPLOAD, LANE_BUFFERS | COUNTER_BUFFERS);
}

/* A lane's fault so far: 3 an index out of range, 1 a NaN/inf state (a
 * forced restart), 2 a reward that is not finite (it reaches the running
 * or the summed return). */
static int lane_fault(const cs_env *env, int64_t i)
{
    return env->index_fault[i] ? 3 : env->nonfinite[i] ? 1
         : !isfinite(env->seg_return[i]) || !isfinite(env->return_sum[i]) ? 2 : 0;
}

/* `steps` steps of lanes [a, b) from the snapshot, starting at global step t0. */
static cs_status rerun(cs_env *env, const lane_snapshot *snap, int64_t a, int64_t b, int64_t t0, int64_t steps)
{
    cs_status s = snapshot_restore(env, snap, a, b);
    if (s != CS_OK || steps == 0)
        return s;
    cs_lanes l = lanes_template(env);
    l.begin = a;
    l.end = b;
    l.t = t0;
    l.steps = steps;
    if ((s = run_rollout(env, &l, NULL)) != CS_OK)
        return s;
    return cuda_copy(env, CUDA_FETCH, LANE_BUFFERS | COUNTER_BUFFERS);
}

/* After a rollout of `steps` from global step t0: when some lane faulted,
 * finds the first step at which one did (bisecting over reruns of the
 * faulty lanes from the snapshot: a fault, once there, stays counted), runs
 * those lanes to the end again so that the batch is as the rollout left it,
 * and fails naming the lowest faulty lane of that step. */
static cs_status strict_rollout_check(cs_env *env, const lane_snapshot *snap, int64_t t0, int64_t steps)
{
    cs_status s = cuda_copy(env, CUDA_FETCH, LANE_BUFFERS | COUNTER_BUFFERS);
    if (s != CS_OK)
        return s;
    int64_t a = -1, b = -1;
    for (int64_t i = 0; i < env->n; i++)
        if (lane_fault(env, i)) {
            if (a < 0)
                a = i;
            b = i + 1;
        }
    if (a < 0)
        return CS_OK;
    int64_t good = 0, bad = steps;   /* no fault after `good` steps; one after `bad` */
    while (bad - good > 1) {
        int64_t mid = good + (bad - good) / 2;
        if ((s = rerun(env, snap, a, b, t0, mid)) != CS_OK)
            return s;
        bool any = false;
        for (int64_t i = a; i < b && !any; i++)
            any = lane_fault(env, i) != 0;
        if (any)
            bad = mid;
        else
            good = mid;
    }
    if ((s = rerun(env, snap, a, b, t0, bad)) != CS_OK)
        return s;
    int64_t first = a;
    while (first < b && !lane_fault(env, first))
        first++;
    int kind = first < b ? lane_fault(env, first) : 1;
    if ((s = rerun(env, snap, a, b, t0, steps)) != CS_OK)
        return s;
    char buf[CS_NAME_MAX + 4200];
    return fail(env, CS_ERR_NUMERIC, "environment %lld: %s in step %lld since the reset (strict mode)",
                (long long)first, kind == 3 ? index_fault_text(env, first, buf, sizeof buf)
                                  : kind == 1 ? "its state became NaN or infinite" : "its reward is not finite",
                (long long)(t0 + bad));
}

/* Whether any of a[0, n) is out of range: OR-reductions over chunks of a
 * fixed length, which GCC vectorizes at -O2 (its very cheap cost model
 * wants a trip count that is a multiple of the vector length); a loop that
 * returns at the first bad action stays scalar, a tenth of a 4096-CartPole
 * step. */
#define ACTION_CHUNK 64

static bool any_discrete_out_of_range(const int32_t *a, int64_t n, uint32_t n_actions)
{
    uint32_t bad = 0;
    int64_t i = 0;
    for (; i + ACTION_CHUNK <= n; i += ACTION_CHUNK)
        for (int j = 0; j < ACTION_CHUNK; j++)
            bad |= (uint32_t)a[i + j] >= n_actions;
    for (; i < n; i++)
        bad |= (uint32_t)a[i] >= n_actions;
    return bad != 0;
}

static bool any_not_finite(const float *a, int64_t n)
{
    int bad = 0;
    int64_t i = 0;
    for (; i + ACTION_CHUNK <= n; i += ACTION_CHUNK)
        for (int j = 0; j < ACTION_CHUNK; j++)
            bad |= !(fabsf(a[i + j]) <= FLT_MAX);
    for (; i < n; i++)
        bad |= !(fabsf(a[i]) <= FLT_MAX);
    return bad != 0;
}

/* Refuses what no environment can take: a discrete action outside
 * [0, n_actions) or a box action that is not finite, naming the first. */
static cs_status check_actions(cs_env *env, const void *actions)
{
    const cs_program *p = env->prog;
    if (p->action_kind == CS_ACTION_DISCRETE) {
        const int32_t *a = actions;
        if (!any_discrete_out_of_range(a, env->n, p->n_actions))
            return CS_OK;
        for (int64_t i = 0; i < env->n; i++)
            if (a[i] < 0 || (uint32_t)a[i] >= p->n_actions)
                return fail(env, CS_ERR_ARGUMENT, "action %d of environment %lld is not in [0, %u)", a[i],
                            (long long)i, p->n_actions);
    } else {
        const float *a = actions;
        if (!any_not_finite(a, env->n * (int64_t)p->n_inputs))
            return CS_OK;
        for (int64_t i = 0; i < env->n * (int64_t)p->n_inputs; i++)
            if (!isfinite(a[i]))
                return fail(env, CS_ERR_ARGUMENT, "action %lld of environment %lld is not finite",
                            (long long)(i / env->n), (long long)(i % env->n));
    }
    return CS_OK;
}

/* What both kinds of step need before the actions are looked at. */
static cs_status step_ready(cs_env *env)
{
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    if (!env->was_reset)
        return fail(env, CS_ERR_STATE, "step before reset");
    if (env->t == INT64_MAX)
        return fail(env, CS_ERR_LIMIT, "the step counter would overflow");
    return episode_steps_fit(env, 1);
}

/* Points the inputs at `actions`, [slot][n] like the device's. */
static void set_inputs(cs_env *env, const void *actions)
{
    for (unsigned k = 0; k < env->prog->n_inputs; k++)
        env->inputs[k] = (void *)((const char *)actions + (size_t)k * (size_t)env->n * 4);
}

/* One step once the actions are in place (on the device: a CUDA caller's). */
static cs_status step_lanes(cs_env *env, bool actions_on_device)
{
    cs_status s;
    if (env->strict) {
        memset(env->nonfinite, 0, (size_t)env->n * sizeof *env->nonfinite);
        memset(env->index_fault, 0, (size_t)env->n * sizeof *env->index_fault);
        if ((s = cuda_copy(env, CUDA_ZERO, CS_BUF_BIT(CS_BUF_NONFINITE) | CS_BUF_BIT(CS_BUF_INDEX_FAULT))) != CS_OK)
            return s;
    }
    cs_lanes l = lanes_template(env);
    take_replay(env, &l);
    l.mode = mode_of(env->autoreset);
    if ((s = run_lanes(env, &l, actions_on_device ? ENTRY_STEP_DEVICE_INPUTS : ENTRY_STEP, NULL)) != CS_OK)
        return s;
    env->t++;
    return env->strict ? strict_step_check(env) : CS_OK;
}

cs_status cs_env_step(cs_env *env, const void *actions)
{
    cs_status s = step_ready(env);
    if (s != CS_OK)
        return s;
    if (!actions)
        return fail(env, CS_ERR_ARGUMENT, "actions is NULL");
    if ((s = check_actions(env, actions)) != CS_OK)
        return s;
    set_inputs(env, actions);
    return step_lanes(env, false);
}

/* The typed steps: the element type is checked against the action space
 * before any element is read. */
static cs_status action_kind_is(cs_env *env, bool discrete, const char *function)
{
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    const cs_program *p = env->prog;
    if ((p->action_kind == CS_ACTION_DISCRETE) == discrete)
        return CS_OK;
    if (p->action_kind == CS_ACTION_DISCRETE)
        return fail(env, CS_ERR_ARGUMENT, "%s: this environment's actions are discrete (int32_t[num_envs] in [0, %u)): "
                    "use cs_env_step_discrete", function, p->n_actions);
    return fail(env, CS_ERR_ARGUMENT, "%s: this environment's actions are a box (float[%u][num_envs]): use "
                "cs_env_step_box or cs_env_step_box_f64", function, p->n_inputs);
}

cs_status cs_env_step_discrete(cs_env *env, const int32_t *actions)
{
    cs_status s = action_kind_is(env, true, "cs_env_step_discrete");
    return s != CS_OK ? s : cs_env_step(env, actions);
}

/* int64 actions (NumPy's and PyTorch's integers) narrowed in one vectorized
 * pass into the batch's own int32 buffer, which cs_env_step then checks: a
 * caller converting them first reads and writes the batch twice more. A value
 * whose bits above the 31st are not all zero is out of range whatever its low
 * half says (2^32 is not 0); SSE2 has no 64-bit compare, so the pass collects
 * those bits and leaves the range to the int32 check. */
cs_status cs_env_step_discrete_i64(cs_env *env, const int64_t *actions)
{
    cs_status s = action_kind_is(env, true, "cs_env_step_discrete_i64");
    if (s == CS_OK)
        s = step_ready(env);
    if (s != CS_OK)
        return s;
    if (!actions)
        return fail(env, CS_ERR_ARGUMENT, "actions is NULL");
    if (!env->narrowed_actions &&
        !(env->narrowed_actions = malloc((size_t)(env->n ? env->n : 1) * sizeof *env->narrowed_actions)))
        return fail(env, CS_ERR_NOMEM, "out of memory for the actions");
    int32_t *narrow = env->narrowed_actions;
    uint64_t high = 0;
    int64_t i = 0, n = env->n;
    for (; i + ACTION_CHUNK <= n; i += ACTION_CHUNK)   /* a fixed trip count: -O2 vectorizes it */
        for (int j = 0; j < ACTION_CHUNK; j++) {
            high |= (uint64_t)actions[i + j] >> 31;
            narrow[i + j] = (int32_t)actions[i + j];
        }
    for (; i < n; i++) {
        high |= (uint64_t)actions[i] >> 31;
        narrow[i] = (int32_t)actions[i];
    }
    for (i = 0; high && i < n; i++)
        if ((uint64_t)actions[i] >= env->prog->n_actions)
            return fail(env, CS_ERR_ARGUMENT, "action %lld of environment %lld is not in [0, %u)",
                        (long long)actions[i], (long long)i, env->prog->n_actions);
    return cs_env_step(env, narrow);
}

cs_status cs_env_step_box(cs_env *env, const float *actions)
{
    cs_status s = action_kind_is(env, false, "cs_env_step_box");
    return s != CS_OK ? s : cs_env_step(env, actions);
}

cs_status cs_env_step_box_f64(cs_env *env, const double *actions)
{
    cs_status s = action_kind_is(env, false, "cs_env_step_box_f64");
    if (s != CS_OK)
        return s;
    if (!actions)
        return fail(env, CS_ERR_ARGUMENT, "actions is NULL");
    size_t count = (size_t)env->n * env->prog->n_inputs;
    if (!env->box_actions && !(env->box_actions = malloc((count ? count : 1) * sizeof *env->box_actions)))
        return fail(env, CS_ERR_NOMEM, "out of memory for the actions");
    for (size_t k = 0; k < count; k++)
        env->box_actions[k] = (float)actions[k];   /* a double beyond float's range becomes inf: refused */
    return cs_env_step(env, env->box_actions);
}

static cs_status host_batch(cs_env *env)
{
    return fail(env, CS_ERR_UNAVAILABLE, "the batch lives on the host on the %s backend: device buffers exist only "
                "on the cuda backend", cs_backend_name(env->backend));
}

cs_status cs_env_device_buffers(cs_env *env, cs_device_buffers *out)
{
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    if (!out)
        return fail(env, CS_ERR_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof *out);
    if (env->backend != CS_BACKEND_CUDA)
        return host_batch(env);
    cs_cuda_buffers b;
    if (cs_cuda_buffers_of(env->k.cuda, &b))
        return fail(env, CS_ERR_STATE, "the device buffers are not allocated");
    out->device = b.ordinal;
    out->context = b.context;
    out->obs = b.buf[CS_BUF_OBS];
    out->final_obs = b.buf[CS_BUF_FINAL_OBS];
    out->rewards = b.buf[CS_BUF_REWARD];
    out->terminated = b.buf[CS_BUF_TERMINATED];
    out->truncated = b.buf[CS_BUF_TRUNCATED];
    out->state = b.buf[CS_BUF_CARRIED];
    out->episode_steps = b.buf[CS_BUF_SEGSTEP];
    out->actions = b.buf[CS_BUF_INPUTS];
    return CS_OK;
}

cs_status cs_env_step_device(cs_env *env)
{
    cs_status s = step_ready(env);
    if (s != CS_OK)
        return s;
    if (env->backend != CS_BACKEND_CUDA)
        return host_batch(env);
    if (env->strict) {
        /* Strict mode pays a copy to check the caller's actions first. */
        size_t bytes = (size_t)env->n * env->prog->n_inputs * 4;
        if (!env->device_actions && !(env->device_actions = malloc(bytes ? bytes : 1)))
            return fail(env, CS_ERR_NOMEM, "out of memory for a copy of the actions");
        set_inputs(env, env->device_actions);
        if ((s = cuda_copy(env, CUDA_READ, CS_BUF_BIT(CS_BUF_INPUTS))) != CS_OK ||
            (s = check_actions(env, env->device_actions)) != CS_OK)
            return s;
    }
    return step_lanes(env, true);
}

/* On cuda each buffer comes back from the device when it is asked for, and
 * only if a launch changed it since; NULL (with the message) if that fails. */
static const void *host_buffer(cs_env *env, cs_buf b, const void *p)
{
    if (!env || env->failed)
        return NULL;
    return cuda_copy(env, CUDA_FETCH, CS_BUF_BIT(b)) == CS_OK ? p : NULL;
}

const float *cs_env_obs(cs_env *env) { return host_buffer(env, CS_BUF_OBS, env ? env->obs : NULL); }
const float *cs_env_final_obs(cs_env *env) { return host_buffer(env, CS_BUF_FINAL_OBS, env ? env->final_obs : NULL); }

static const int64_t *int_obs(cs_env *env, bool final)
{
    if (!env || env->failed)
        return NULL;
    if (!env->prog->n_obs_int) {
        fail(env, CS_ERR_ARGUMENT, "%s has no discrete observations", env->prog->name);
        return NULL;
    }
    /* on cuda the discrete observations travel with the box ones */
    const long long *b = host_buffer(env, final ? CS_BUF_FINAL_OBS : CS_BUF_OBS, final ? env->final_obs_int : env->obs_int);
    return (const int64_t *)b;
}

const int64_t *cs_env_obs_int(cs_env *env) { return int_obs(env, false); }

static const double *info_values(cs_env *env, bool final)
{
    if (!env || env->failed)
        return NULL;
    if (!env->prog->n_info) {
        fail(env, CS_ERR_ARGUMENT, "%s declares no info values", env->prog->name);
        return NULL;
    }
    /* on cuda the info values travel with the observations */
    return host_buffer(env, final ? CS_BUF_FINAL_OBS : CS_BUF_OBS, final ? env->final_info : env->info);
}

const double *cs_env_info_values(cs_env *env) { return info_values(env, false); }
const double *cs_env_final_info_values(cs_env *env) { return info_values(env, true); }
const int64_t *cs_env_final_obs_int(cs_env *env) { return int_obs(env, true); }
const double *cs_env_rewards(cs_env *env) { return host_buffer(env, CS_BUF_REWARD, env ? env->reward : NULL); }
const uint8_t *cs_env_terminated(cs_env *env) { return host_buffer(env, CS_BUF_TERMINATED, env ? env->terminated : NULL); }
const uint8_t *cs_env_truncated(cs_env *env) { return host_buffer(env, CS_BUF_TRUNCATED, env ? env->truncated : NULL); }

cs_status cs_env_step_one(cs_env *env, const void *action, float *obs, double *reward, uint8_t *terminated,
                          uint8_t *truncated)
{
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    if (env->n != 1)
        return fail(env, CS_ERR_ARGUMENT, "cs_env_step_one steps a batch of one environment, not %lld",
                    (long long)env->n);
    if (!obs || !reward || !terminated || !truncated)
        return fail(env, CS_ERR_ARGUMENT, "an output of cs_env_step_one is NULL");
    if ((s = cs_env_step(env, action)) != CS_OK ||
        (s = cuda_copy(env, CUDA_FETCH, CS_BUF_BIT(CS_BUF_OBS) | CS_BUF_BIT(CS_BUF_REWARD) |
                                            CS_BUF_BIT(CS_BUF_TERMINATED) | CS_BUF_BIT(CS_BUF_TRUNCATED))) != CS_OK)
        return s;
    for (unsigned k = 0; k < env->prog->n_obs; k++)
        obs[k] = env->obs[k];   /* [k][0]: one environment */
    *reward = env->reward[0];
    *terminated = env->terminated[0];
    *truncated = env->truncated[0];
    return CS_OK;
}

/* Observations a row per environment: the transpose of the batch's own
 * [obs_dim][num_envs], made only when asked (the kernels keep theirs). */
static cs_status obs_rows(cs_env *env, cs_buf b, float *out, size_t out_count)
{
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    unsigned d = env->prog->n_obs;
    size_t n = (size_t)env->n;
    if (!out)
        return fail(env, CS_ERR_ARGUMENT, "out is NULL");
    if (out_count < n * d)
        return fail(env, CS_ERR_ARGUMENT, "out holds %zu floats, fewer than num_envs x obs_dim = %zu", out_count, n * d);
    if ((s = cuda_copy(env, CUDA_FETCH, CS_BUF_BIT(b))) != CS_OK)
        return s;
    const float *obs = b == CS_BUF_OBS ? env->obs : env->final_obs;
    for (size_t i = 0; i < n; i++)
        for (unsigned k = 0; k < d; k++)
            out[i * d + k] = obs[k * n + i];
    return CS_OK;
}

cs_status cs_env_obs_rows(cs_env *env, float *out, size_t out_count)
{
    return obs_rows(env, CS_BUF_OBS, out, out_count);
}

cs_status cs_env_final_obs_rows(cs_env *env, float *out, size_t out_count)
{
    return obs_rows(env, CS_BUF_FINAL_OBS, out, out_count);
}

/* Slot k of environment i, exactly, as a double. */
static double slot_value(const cs_env *env, unsigned k, int64_t i)
{
    switch (env->prog->carried[k].type) {
    case CS_I32: return ((const int *)env->carried[k])[i];
    case CS_BOOL: return ((const unsigned char *)env->carried[k])[i];
    case CS_F32: return ((const float *)env->carried[k])[i];
    default: return ((const double *)env->carried[k])[i];
    }
}

/* Why v cannot be slot k's value ("" when it can). */
static const char *slot_refuses(const cs_env *env, unsigned k, double v)
{
    switch (env->prog->carried[k].type) {
    case CS_I32: return v == floor(v) && v >= INT32_MIN && v <= INT32_MAX ? "" : "not an int32";
    case CS_BOOL: return v == 0 || v == 1 ? "" : "not a bool (0 or 1)";
    case CS_F32: return isfinite((double)(float)v) ? "" : "not a finite float";
    default: return isfinite(v) ? "" : "not a finite double";
    }
}

static void set_slot_value(cs_env *env, unsigned k, int64_t i, double v)
{
    switch (env->prog->carried[k].type) {
    case CS_I32: ((int *)env->carried[k])[i] = (int)v; break;
    case CS_BOOL: ((unsigned char *)env->carried[k])[i] = v != 0; break;
    case CS_F32: ((float *)env->carried[k])[i] = (float)v; break;
    default: ((double *)env->carried[k])[i] = v; break;
    }
}

cs_status cs_env_get_state(cs_env *env, double *out)
{
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    if (!out)
        return fail(env, CS_ERR_ARGUMENT, "out is NULL");
    if (!env->was_reset)
        return fail(env, CS_ERR_STATE, "state read before reset");
    if ((s = cuda_copy(env, CUDA_FETCH, CS_BUF_BIT(CS_BUF_CARRIED))) != CS_OK)
        return s;
    for (unsigned k = 0; k < env->prog->n_carried; k++)
        for (int64_t i = 0; i < env->n; i++)
            out[k * env->n + i] = slot_value(env, k, i);
    return CS_OK;
}

const cs_program *cs_env_program(const cs_env *env) { return env && !env->failed ? env->prog : NULL; }

cs_status cs_env_host_lanes(cs_env *env, cs_lanes *out)
{
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    if (!env->was_reset)
        return fail(env, CS_ERR_STATE, "state read before reset");
    if ((s = cuda_copy(env, CUDA_FETCH, CS_BUF_BIT(CS_BUF_CARRIED) | CS_BUF_BIT(CS_BUF_PARAMS))) != CS_OK)
        return s;
    *out = lanes_template(env);
    return CS_OK;
}

cs_status cs_env_set_state(cs_env *env, const double *state, const int32_t *episode_steps)
{
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    if (!state)
        return fail(env, CS_ERR_ARGUMENT, "state is NULL");
    for (int64_t i = 0; i < env->n; i++)
        if (episode_steps && episode_steps[i] < 0)
            return fail(env, CS_ERR_ARGUMENT, "episode step %d of environment %lld is negative",
                        episode_steps[i], (long long)i);
    /* A NaN state would only be restarted at the next step: refused here,
     * as are an int that is not one and a bool that is not 0 or 1. */
    for (unsigned k = 0; k < env->prog->n_carried; k++)
        for (int64_t i = 0; i < env->n; i++) {
            double v = state[k * env->n + i];
            const char *why = slot_refuses(env, k, v);
            if (*why)
                return fail(env, CS_ERR_ARGUMENT, "%s of environment %lld is %.17g: %s", env->prog->carried[k].name,
                            (long long)i, v, why);
        }
    for (unsigned k = 0; k < env->prog->n_carried; k++)
        for (int64_t i = 0; i < env->n; i++)
            set_slot_value(env, k, i, state[k * env->n + i]);
    for (int64_t i = 0; i < env->n; i++) {
        env->segstep[i] = episode_steps ? episode_steps[i] : 0;
        env->pending[i] = 0;
    }
    if ((s = cuda_copy(env, CUDA_UPLOAD, CS_BUF_BIT(CS_BUF_CARRIED) | CS_BUF_BIT(CS_BUF_SEGSTEP) |
                                             CS_BUF_BIT(CS_BUF_PENDING))) != CS_OK)
        return s;
    env->was_reset = true;
    return CS_OK;
}

/* The environment's own per-lane parameters: every param but the policy's
 * weights, which the policy appends (params [first_weight, n_params)). */
static unsigned env_params(const cs_env *env) { return env->prog->n_params - env->n_weights; }

/* Why dst cannot take src's batch (into why), or false when it can: the
 * same environment (its state, observation, action and parameter slots),
 * batch (num_envs, first_env) and dtype. */
static bool not_siblings(const cs_env *dst, const cs_env *src, char *why, size_t size)
{
    const cs_program *a = dst->prog, *b = src->prog;
    if (strcmp(a->name, b->name) || a->n_carried != b->n_carried || a->n_obs != b->n_obs || a->n_obs_int != b->n_obs_int ||
        a->n_inputs != b->n_inputs || a->action_kind != b->action_kind || env_params(dst) != env_params(src))
        return snprintf(why, size, "a batch of %s cannot take the state of a batch of %s", a->name, b->name), true;
    for (unsigned k = 0; k < a->n_carried; k++)
        if (strcmp(a->carried[k].name, b->carried[k].name) ||
            (a->carried[k].type != b->carried[k].type &&   /* reals differ by dtype, said below */
             !(cs_type_is_real(a->carried[k].type) && cs_type_is_real(b->carried[k].type))))
            return snprintf(why, size, "state %u is %s here and %s there", k, a->carried[k].name,
                            b->carried[k].name), true;
    for (unsigned k = 0; k < env_params(dst); k++)
        if (strcmp(a->params[k].name, b->params[k].name))
            return snprintf(why, size, "parameter %u is %s here and %s there", k, a->params[k].name,
                            b->params[k].name), true;
    if (dst->n != src->n || dst->first_env != src->first_env)
        return snprintf(why, size, "environments [%lld, %lld) cannot take the state of environments [%lld, %lld)",
                        (long long)dst->first_env, (long long)(dst->first_env + dst->n), (long long)src->first_env,
                        (long long)(src->first_env + src->n)), true;
    if (dst->dtype != src->dtype)
        return snprintf(why, size, "an %s batch cannot take the state of an %s batch",
                        dst->dtype == CS_DTYPE_F32 ? "f32" : "f64", src->dtype == CS_DTYPE_F32 ? "f32" : "f64"), true;
    return false;
}

/* What cs_env_copy_state copies: everything a step or a rollout reads or
 * leaves for the caller, but the policy's weights and a rollout's counters. */
#define COPIED_BUFFERS (CS_BUF_BIT(CS_BUF_CARRIED) | CS_BUF_BIT(CS_BUF_PARAMS) | CS_BUF_BIT(CS_BUF_SEGSTEP) | \
                        CS_BUF_BIT(CS_BUF_OBS) | CS_BUF_BIT(CS_BUF_FINAL_OBS) | CS_BUF_BIT(CS_BUF_REWARD) | \
                        CS_BUF_BIT(CS_BUF_TERMINATED) | CS_BUF_BIT(CS_BUF_TRUNCATED) | CS_BUF_BIT(CS_BUF_PENDING) | \
                        CS_BUF_BIT(CS_BUF_SEG_RETURN))

cs_status cs_env_copy_state(cs_env *dst, cs_env *src)
{
    cs_status s = usable(dst);
    if (s != CS_OK)
        return s;
    if (!src)
        return fail(dst, CS_ERR_ARGUMENT, "src is NULL");
    if (src == dst)
        return CS_OK;
    if (src->failed)
        return fail(dst, CS_ERR_STATE, "the batch to copy from failed to open");
    if (!src->was_reset)
        return fail(dst, CS_ERR_STATE, "the batch to copy from was never reset: it has no state yet");
    char why[512];
    if (not_siblings(dst, src, why, sizeof why))
        return fail(dst, CS_ERR_ARGUMENT, "%s", why);
    /* dst's params are fetched too: its weights stay as they are */
    if ((s = cuda_copy(src, CUDA_FETCH, COPIED_BUFFERS)) != CS_OK)
        return fail(dst, s, "src: %s", src->error);
    if ((s = cuda_copy(dst, CUDA_FETCH, CS_BUF_BIT(CS_BUF_PARAMS))) != CS_OK)
        return s;
    const cs_program *p = dst->prog;
    size_t n = (size_t)dst->n, rs = real_size(dst), obs = n * p->n_obs * sizeof *dst->obs;
    size_t obs_int = n * p->n_obs_int * sizeof *dst->obs_int;
    for (unsigned k = 0; k < p->n_carried; k++)
        memcpy(dst->carried[k], src->carried[k], n * dst->slot_size[k]);
    for (unsigned k = 0; k < env_params(dst); k++)
        memcpy(dst->params[k], src->params[k], n * rs);
    memcpy(dst->segstep, src->segstep, n * sizeof *dst->segstep);
    memcpy(dst->obs, src->obs, obs);
    memcpy(dst->final_obs, src->final_obs, obs);
    memcpy(dst->obs_int, src->obs_int, obs_int);
    memcpy(dst->final_obs_int, src->final_obs_int, obs_int);
    memcpy(dst->reward, src->reward, n * sizeof *dst->reward);
    memcpy(dst->terminated, src->terminated, n);
    memcpy(dst->truncated, src->truncated, n);
    memcpy(dst->pending, src->pending, n);
    memcpy(dst->seg_return, src->seg_return, n * sizeof *dst->seg_return);
    if ((s = cuda_copy(dst, CUDA_UPLOAD, COPIED_BUFFERS)) != CS_OK)
        return s;
    dst->seed = src->seed;
    dst->t = src->t;
    dst->was_reset = true;
    return CS_OK;
}

/* FNV-1a over the reals of a buffer, every NaN hashed as the one canonical
 * quiet NaN: a NaN's sign and payload depend on who made it (GCC's folded
 * 0/0 is +NaN, x86 arithmetic gives -NaN), not on what was computed. Byte for
 * byte the same hash as the raw buffer when it holds no NaN. */
static uint64_t hash_reals(uint64_t h, const void *data, size_t n, bool single)
{
    for (size_t i = 0; i < n; i++) {
        if (single) {
            float v = ((const float *)data)[i];
            uint32_t bits = isnan(v) ? UINT32_C(0x7fc00000) : 0;
            h = isnan(v) ? cs_fnv1a(h, &bits, sizeof bits) : cs_fnv1a(h, &v, sizeof v);
        } else {
            double v = ((const double *)data)[i];
            uint64_t bits = isnan(v) ? UINT64_C(0x7ff8000000000000) : 0;
            h = isnan(v) ? cs_fnv1a(h, &bits, sizeof bits) : cs_fnv1a(h, &v, sizeof v);
        }
    }
    return h;
}

/* FNV-1a over what a rollout leaves behind and carries into the next call:
 * the state's bits, the episode step counters and the running returns. Equal
 * runs, however they are chunked, threaded or unrolled, or whichever backend
 * ran them, give equal checksums. */
static_assert(CS_CHECKSUM_START == CS_FNV1A_START, "the public checksum's start is FNV-1a's");

static uint64_t checksum_part(const cs_env *env, unsigned part, uint64_t h)
{
    size_t n = (size_t)env->n;
    unsigned nc = env->prog->n_carried;
    if (part < nc && cs_type_is_real(env->prog->carried[part].type))
        return hash_reals(h, env->carried[part], n, env->dtype == CS_DTYPE_F32);
    if (part < nc)   /* an int or bool slot: its bytes */
        return cs_fnv1a(h, env->carried[part], n * env->slot_size[part]);
    if (part == nc)
        return cs_fnv1a(h, env->segstep, n * sizeof *env->segstep);
    return hash_reals(h, env->seg_return, n, false);
}

static uint64_t checksum(const cs_env *env)
{
    uint64_t h = CS_FNV1A_START;
    for (unsigned part = 0; part < env->prog->n_carried + 2; part++)
        h = checksum_part(env, part, h);
    return h;
}

unsigned cs_env_checksum_parts(cs_env *env)
{
    return usable(env) == CS_OK ? env->prog->n_carried + 2 : 0;
}

cs_status cs_env_checksum_part(cs_env *env, unsigned part, uint64_t *h)
{
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    if (!h || part >= env->prog->n_carried + 2)
        return fail(env, CS_ERR_ARGUMENT, "checksum part %u of %u", part, env->prog->n_carried + 2);
    if (!env->was_reset)
        return fail(env, CS_ERR_STATE, "checksum before reset");
    if ((s = cuda_copy(env, CUDA_FETCH, CS_BUF_BIT(CS_BUF_CARRIED) | CS_BUF_BIT(CS_BUF_SEGSTEP) |
                                            CS_BUF_BIT(CS_BUF_SEG_RETURN))) != CS_OK)
        return s;
    *h = checksum_part(env, part, *h);
    return CS_OK;
}

/* A recording policy's buffers, grown to `steps` rows of every environment,
 * handed to the rollout's lanes (rows from the rollout's first step). */
static cs_status record_rows(cs_env *env, int64_t steps, cs_lanes *l)
{
    const cs_program *p = env->prog;
    env->record_rows = 0;
    if (!p->n_records)
        return CS_OK;
    if (steps > env->record_capacity) {
        const char *what;
        int64_t have = memory_limit(&what);
        if (steps > have / 4 / env->n / p->n_records)
            return fail(env, CS_ERR_LIMIT, "recording %u values of %lld environments for %lld steps needs more than %s",
                        p->n_records, (long long)env->n, (long long)steps, what);
        if (!env->records && !(env->records = calloc(p->n_records, sizeof *env->records)))
            return fail(env, CS_ERR_NOMEM, "out of memory");
        for (unsigned k = 0; k < p->n_records; k++) {
            void *rows = realloc(env->records[k], (size_t)steps * (size_t)env->n * 4);
            if (!rows)
                return fail(env, CS_ERR_NOMEM, "out of memory for %lld steps of records", (long long)steps);
            env->records[k] = rows;
        }
        env->record_capacity = steps;
    }
    l->record = env->records;
    l->record_t0 = env->t;
    env->record_rows = steps;
    return CS_OK;
}

static cs_status rollout(cs_env *env, int64_t steps, cs_rollout_stats *out, bool hash)
{
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    if (!env->was_reset)
        return fail(env, CS_ERR_STATE, "rollout before reset");
    if (steps < 0)
        return fail(env, CS_ERR_ARGUMENT, "steps must not be negative");
    if (steps > 0 && env->n > INT64_MAX / steps)
        return fail(env, CS_ERR_LIMIT, "%lld environments x %lld steps overflows a 64-bit count",
                    (long long)env->n, (long long)steps);
    if (env->t > INT64_MAX - steps)
        return fail(env, CS_ERR_LIMIT, "the step counter would overflow");
    if ((s = episode_steps_fit(env, steps)) != CS_OK)
        return s;
    /* Lanes waiting for a next-step restart get it now, at the current time
     * (one call per run of consecutive lanes). */
    if ((s = cuda_copy(env, CUDA_FETCH, CS_BUF_BIT(CS_BUF_PENDING))) != CS_OK)
        return s;
    for (int64_t i = 0; i < env->n; i++)
        if (env->pending[i]) {
            cs_lanes l = lanes_template(env);
            l.mode = CS_RESTART_AUTO;   /* a pending auto-reset: kept variables keep their values */
            l.begin = i;
            while (i + 1 < env->n && env->pending[i + 1])
                i++;
            l.end = i + 1;
            if ((s = run_lanes(env, &l, ENTRY_RESTART, NULL)) != CS_OK)
                return s;
        }
    memset(env->segments, 0, (size_t)env->n * sizeof *env->segments);
    memset(env->return_sum, 0, (size_t)env->n * sizeof *env->return_sum);
    memset(env->nonfinite, 0, (size_t)env->n * sizeof *env->nonfinite);
    if (env->strict)
        memset(env->index_fault, 0, (size_t)env->n * sizeof *env->index_fault);
    if ((s = cuda_copy(env, CUDA_ZERO, CS_BUF_BIT(CS_BUF_SEGMENTS) | CS_BUF_BIT(CS_BUF_RETURN_SUM) |
                                           CS_BUF_BIT(CS_BUF_NONFINITE) | CS_BUF_BIT(CS_BUF_INDEX_FAULT))) != CS_OK)
        return s;
    lane_snapshot snap = {0};
    if (env->strict && steps > 0 && (s = snapshot_take(env, &snap)) != CS_OK)
        return s;
    cs_lanes l = lanes_template(env);
    l.steps = steps;
    if ((s = record_rows(env, steps, &l)) != CS_OK) {
        snapshot_free(env, &snap);
        return s;
    }
    long long launches = 0;
    double start = cs_now_ms(), waited = env->tier_wait_ms;
    if (steps > 0 && (s = run_rollout(env, &l, &launches)) != CS_OK) {
        snapshot_free(env, &snap);
        return s;
    }
    double run_ms = cs_now_ms() - start - (env->tier_wait_ms - waited);
    cs_status numeric = CS_OK;
    if (env->strict && steps > 0) {
        numeric = strict_rollout_check(env, &snap, env->t, steps);
        snapshot_free(env, &snap);
        if (numeric != CS_OK && numeric != CS_ERR_NUMERIC)
            return numeric;
    }
    env->t += steps;
    if (out && (s = cuda_copy(env, CUDA_FETCH,
                              CS_BUF_BIT(CS_BUF_SEGMENTS) | CS_BUF_BIT(CS_BUF_NONFINITE) |
                                  CS_BUF_BIT(CS_BUF_RETURN_SUM) | CS_BUF_BIT(CS_BUF_CARRIED) |
                                  CS_BUF_BIT(CS_BUF_SEGSTEP) | CS_BUF_BIT(CS_BUF_SEG_RETURN))) != CS_OK)
        return s;
    if (out) {
        memset(out, 0, sizeof *out);
        double sum = 0;
        for (int64_t i = 0; i < env->n; i++) {
            out->episodes += env->segments[i];
            out->nonfinite += env->nonfinite[i];
            sum += env->return_sum[i];
        }
        out->steps = steps;
        out->env_steps = steps * env->n;
        out->mean_return = out->episodes ? cs_canon_nan(sum / (double)out->episodes) : NAN;
        out->run_ms = run_ms;
        out->launches = launches;
        out->checksum = hash ? checksum(env) : 0;
    }
    return numeric;
}

cs_status cs_env_rollout(cs_env *env, int64_t steps, cs_rollout_stats *out) { return rollout(env, steps, out, true); }
cs_status cs_env_rollout_part(cs_env *env, int64_t steps, cs_rollout_stats *out) { return rollout(env, steps, out, false); }

/* ---- the compiler's view, for `cartsim dump` ---- */

cs_status cs_dump(const cs_config *cfg, const char *after, const char *format, char **text, char *err,
                  size_t err_size)
{
    cs_say(err, err_size, CS_OK, "%s", "");
    if (!text)
        return cs_say(err, err_size, CS_ERR_ARGUMENT, "text is NULL");
    *text = NULL;
    cs_env scratch;
    memset(&scratch, 0, sizeof scratch);
    cs_status s = cfg ? check_config(&scratch, cfg) : fail(&scratch, CS_ERR_ARGUMENT, "no configuration given");
    const char *fmt = format ? format : "text";
    if (s == CS_OK && !strcmp(fmt, "cubin"))
        s = fail(&scratch, CS_ERR_ARGUMENT, "a cubin is binary: cs_dump_cubin writes it");
    else if (s == CS_OK && strcmp(fmt, "text") && strcmp(fmt, "dot") && strcmp(fmt, "c") && strcmp(fmt, "cuda"))
        s = fail(&scratch, CS_ERR_ARGUMENT, "unknown dump format '%s' (text, dot, c, cuda)", fmt);
    /* The driver stopped after the passes (dot), the partition (text) or
     * the emitter (c, cuda). */
    bool graph = !strcmp(fmt, "text") || !strcmp(fmt, "dot");
    cs_compile_request rq = {.after = after, .stop = !strcmp(fmt, "dot") ? CS_STAGE_PASSES
                                                   : graph             ? CS_STAGE_PARTITION
                                                                       : CS_STAGE_EMIT,
                             .dialect = !strcmp(fmt, "c") ? CS_DIALECT_C : CS_DIALECT_CUDA};
    cs_kernel k = {0};
    if (s == CS_OK)
        s = compile(&scratch, cfg, &rq, &k);
    cs_text t = {0};
    if (s == CS_OK && graph) {
        cs_dump_graph(k.prog, fmt[0] == 'd', &t);
        if (rq.stop == CS_STAGE_PARTITION) {
            cs_text_printf(&t, "\n# rollout step, fusion %s\n", cs_fusion_name(rq.fusion));
            cs_dump_partition(k.prog, &k.plan.roll, &t);
        }
    } else if (s == CS_OK) {
        t = k.source;
        k.source = (cs_text){0};
    }
    if (s == CS_OK && (t.failed || !t.data))
        s = fail(&scratch, CS_ERR_NOMEM, "out of memory");
    cs_kernel_free(&k);
    if (s == CS_OK) {
        *text = t.data;
        return CS_OK;
    }
    cs_text_free(&t);
    return cs_say(err, err_size, s, "%s", scratch.error[0] ? scratch.error : cs_status_string(s));
}

/* The cubin NVRTC makes of the CUDA dialect: no GPU needed, only NVRTC. With
 * no architecture given, the device's own (when there is one). */
cs_status cs_dump_cubin(const cs_config *cfg, const char *arch, void **cubin, size_t *size, char *err,
                        size_t err_size)
{
    cs_say(err, err_size, CS_OK, "%s", "");
    if (!cubin || !size)
        return cs_say(err, err_size, CS_ERR_ARGUMENT, "%s is NULL", cubin ? "size" : "cubin");
    *cubin = NULL;
    *size = 0;
    cs_env scratch;
    memset(&scratch, 0, sizeof scratch);
    cs_status s = cfg ? check_config(&scratch, cfg) : fail(&scratch, CS_ERR_ARGUMENT, "no configuration given");
    cs_compile_request rq = {.stop = CS_STAGE_BACKEND, .cubin = true};
    if (s == CS_OK && arch && (rq.arch = cs_cuda_parse_arch(arch)) < 0)
        s = fail(&scratch, CS_ERR_ARGUMENT, "'%s' is not a CUDA architecture (sm_XY, e.g. sm_90)", arch);
    cs_kernel k = {0};
    if (s == CS_OK)
        s = compile(&scratch, cfg, &rq, &k);
    if (s == CS_OK) {
        *cubin = k.cubin.data;
        *size = k.cubin.size;
        k.cubin.data = NULL;
    }
    cs_kernel_free(&k);
    if (s == CS_OK)
        return CS_OK;
    return cs_say(err, err_size, s, "%s", scratch.error[0] ? scratch.error : cs_status_string(s));
}

/* ---- policy weights and per-environment results (agents/) ---- */

unsigned cs_env_num_weights(cs_env *env) { return env && !env->failed ? env->n_weights : 0; }

cs_status cs_env_set_weights(cs_env *env, const double *w)
{
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    if (!w && env->n_weights)
        return fail(env, CS_ERR_ARGUMENT, "weights is NULL");
    size_t n = env->shared_weights ? 1 : (size_t)env->n;   /* shared: one set, at element 0 */
    for (size_t k = 0; k < env->n_weights * n; k++)
        if (!isfinite(w[k]))
            return fail(env, CS_ERR_ARGUMENT, "weight %zu of environment %zu is not finite", k / n, k % n);
    /* Fetched first: the other params may have been redrawn on the device. */
    if ((s = cuda_copy(env, CUDA_FETCH, CS_BUF_BIT(CS_BUF_PARAMS))) != CS_OK)
        return s;
    for (unsigned k = 0; k < env->n_weights; k++) {
        void *buf = env->params[env->first_weight + k];
        for (size_t i = 0; i < n; i++) {
            if (env->dtype == CS_DTYPE_F32)
                ((float *)buf)[i] = (float)w[k * n + i];
            else
                ((double *)buf)[i] = w[k * n + i];
        }
    }
    return cuda_copy(env, CUDA_UPLOAD, CS_BUF_BIT(CS_BUF_PARAMS));
}

cs_status cs_env_get_weights(cs_env *env, double *out)
{
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    if (!out && env->n_weights)
        return fail(env, CS_ERR_ARGUMENT, "out is NULL");
    if ((s = cuda_copy(env, CUDA_FETCH, CS_BUF_BIT(CS_BUF_PARAMS))) != CS_OK)
        return s;
    size_t n = env->shared_weights ? 1 : (size_t)env->n;
    for (unsigned k = 0; k < env->n_weights; k++) {
        const void *buf = env->params[env->first_weight + k];
        for (size_t i = 0; i < n; i++)
            out[k * n + i] = env->dtype == CS_DTYPE_F32 ? ((const float *)buf)[i] : ((const double *)buf)[i];
    }
    return CS_OK;
}

/* The rollout zeroes segments and return_sum first: they hold its results. */
static cs_status lane_results(cs_env *env)
{
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    size_t n = (size_t)env->n;
    if (!env->lane_return && !(env->lane_return = malloc(n * sizeof *env->lane_return)))
        return fail(env, CS_ERR_NOMEM, "out of memory");
    if (!env->lane_episodes && !(env->lane_episodes = malloc(n * sizeof *env->lane_episodes)))
        return fail(env, CS_ERR_NOMEM, "out of memory");
    if ((s = cuda_copy(env, CUDA_FETCH, CS_BUF_BIT(CS_BUF_SEGMENTS) | CS_BUF_BIT(CS_BUF_RETURN_SUM))) != CS_OK)
        return s;
    for (size_t i = 0; i < n; i++) {
        env->lane_episodes[i] = env->segments[i];
        env->lane_return[i] = env->segments[i] ? cs_canon_nan(env->return_sum[i] / (double)env->segments[i]) : NAN;
    }
    return CS_OK;
}

const double *cs_env_episode_returns(cs_env *env) { return lane_results(env) == CS_OK ? env->lane_return : NULL; }
const int64_t *cs_env_episode_counts(cs_env *env) { return lane_results(env) == CS_OK ? env->lane_episodes : NULL; }
const double *cs_env_running_returns(cs_env *env)
{
    return host_buffer(env, CS_BUF_SEG_RETURN, env ? env->seg_return : NULL);
}

/* ---- records of recording policies ---- */

unsigned cs_env_record_count(cs_env *env) { return env && !env->failed ? env->prog->n_records : 0; }

cs_status cs_env_record(cs_env *env, unsigned k, cs_record *out)
{
    cs_status s = usable(env);
    if (s != CS_OK)
        return s;
    if (!out)
        return fail(env, CS_ERR_ARGUMENT, "out is NULL");
    const cs_program *p = env->prog;
    if (k >= p->n_records)
        return fail(env, CS_ERR_ARGUMENT, "no record %u: this batch's policy records %u values", k, p->n_records);
    out->name = p->records[k].name;
    out->integer = !cs_type_is_real(p->records[k].type);
    out->steps = env->record_rows;
    out->data = env->record_rows ? env->records[k] : NULL;
    return CS_OK;
}
