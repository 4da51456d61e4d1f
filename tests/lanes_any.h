/* Lanes of any program (typed slots, box and discrete observations, the
 * replay words) and the three ways to run its entry points: the
 * interpreter (jit/interp.c, the reference), the cpu backend (the C
 * dialect), and the CUDA dialect built as host C through tests/cuda_shim.h.
 * Header-only, for the Criterion tests of arrays and integers
 * (tests/test_arrays.c, tests/test_differential.c) and the differential
 * fuzz target; it reports failures by returning them, so that both can use
 * it. */
#ifndef CS_LANES_ANY_H
#define CS_LANES_ANY_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_host.h"
#include "jit.h"

typedef struct {
    const cs_program *p;
    long long n;
    void **carried, **params, **inputs;
    int *segstep;
    float *obs, *final_obs;
    long long *obs_int, *final_obs_int;
    double *info, *final_info;
    double *reward, *seg_return, *return_sum;
    unsigned char *terminated, *truncated, *pending;
    long long *segments, *nonfinite;
    unsigned int *step_words, *restart_words;   /* allocated; given to l only when replaying */
    cs_lanes l;
} lanes_any;

/* Bytes of an element of slot k's buffer (lanes.h). */
static inline size_t lanes_slot_size(const cs_program *p, unsigned k)
{
    cs_type t = p->carried[k].type;
    return t == CS_F64 ? 8 : t == CS_BOOL ? 1 : 4;
}

static inline void lanes_any_init(lanes_any *b, const cs_program *p, long long n, unsigned long long seed)
{
    memset(b, 0, sizeof *b);
    b->p = p;
    b->n = n;
    size_t N = (size_t)n, rs = p->real == CS_F32 ? 4 : 8;
    b->carried = calloc(p->n_carried + 1, sizeof(void *));
    b->params = calloc(p->n_params + 1, sizeof(void *));
    b->inputs = calloc(p->n_inputs + 1, sizeof(void *));
    for (unsigned k = 0; k < p->n_carried; k++)
        b->carried[k] = calloc(N, lanes_slot_size(p, k));
    for (unsigned k = 0; k < p->n_params; k++)   /* with the C rollout's pad lanes' room (lanes.h) */
        b->params[k] = calloc(N + CS_LANES_PAD, rs);
    for (unsigned k = 0; k < p->n_inputs; k++)
        b->inputs[k] = calloc(N, 4);
    size_t no = p->n_obs ? p->n_obs : 1, ni = p->n_obs_int ? p->n_obs_int : 1;
    b->segstep = calloc(N, sizeof(int));
    b->obs = calloc(N * no, sizeof(float));
    b->final_obs = calloc(N * no, sizeof(float));
    b->obs_int = calloc(N * ni, sizeof(long long));
    b->final_obs_int = calloc(N * ni, sizeof(long long));
    b->info = calloc(N * (p->n_info ? p->n_info : 1), sizeof(double));
    b->final_info = calloc(N * (p->n_info ? p->n_info : 1), sizeof(double));
    b->reward = calloc(N, sizeof(double));
    b->seg_return = calloc(N, sizeof(double));
    b->return_sum = calloc(N, sizeof(double));
    b->terminated = calloc(N, 1);
    b->truncated = calloc(N, 1);
    b->pending = calloc(N, 1);
    b->segments = calloc(N, sizeof(long long));
    b->nonfinite = calloc(N, sizeof(long long));
    b->step_words = calloc(N * (p->n_step_draws + 1), sizeof(unsigned int));
    b->restart_words = calloc(N * (p->n_restart_draws + 1), sizeof(unsigned int));
    b->l = (cs_lanes){.begin = 0, .end = n, .seed = seed, .stride = n, .carried = b->carried, .params = b->params,
                      .segstep = b->segstep, .inputs = b->inputs, .obs = b->obs, .final_obs = b->final_obs,
                      .obs_int = b->obs_int, .final_obs_int = b->final_obs_int, .info = b->info,
                      .final_info = b->final_info, .reward = b->reward,
                      .terminated = b->terminated, .truncated = b->truncated, .pending = b->pending,
                      .seg_return = b->seg_return, .segments = b->segments, .return_sum = b->return_sum,
                      .nonfinite = b->nonfinite};
}

static inline void lanes_any_free(lanes_any *b)
{
    for (unsigned k = 0; b->p && k < b->p->n_carried; k++)
        free(b->carried[k]);
    for (unsigned k = 0; b->p && k < b->p->n_params; k++)
        free(b->params[k]);
    for (unsigned k = 0; b->p && k < b->p->n_inputs; k++)
        free(b->inputs[k]);
    void *all[] = {b->carried, b->params, b->inputs, b->segstep, b->obs, b->final_obs, b->obs_int, b->final_obs_int,
                   b->info, b->final_info,
                   b->reward, b->seg_return, b->return_sum, b->terminated, b->truncated, b->pending, b->segments,
                   b->nonfinite, b->step_words, b->restart_words};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        free(all[k]);
    memset(b, 0, sizeof *b);
}

/* Slot k of lane i set to v in the slot's type (a bool: v != 0). */
static inline void lanes_set_slot(lanes_any *b, unsigned k, long long i, double v)
{
    switch (b->p->carried[k].type) {
    case CS_F32: ((float *)b->carried[k])[i] = (float)v; break;
    case CS_F64: ((double *)b->carried[k])[i] = v; break;
    case CS_I32: ((int *)b->carried[k])[i] = (int)v; break;
    default: ((unsigned char *)b->carried[k])[i] = (unsigned char)(v != 0); break;
    }
}

/* Copies a's buffers into b (the same program and lanes). */
static inline void lanes_any_copy(lanes_any *b, const lanes_any *a)
{
    const cs_program *p = a->p;
    size_t N = (size_t)a->n, rs = p->real == CS_F32 ? 4 : 8;
    size_t no = p->n_obs ? p->n_obs : 1, ni = p->n_obs_int ? p->n_obs_int : 1;
    for (unsigned k = 0; k < p->n_carried; k++)
        memcpy(b->carried[k], a->carried[k], N * lanes_slot_size(p, k));
    for (unsigned k = 0; k < p->n_params; k++)
        memcpy(b->params[k], a->params[k], N * rs);
    for (unsigned k = 0; k < p->n_inputs; k++)
        memcpy(b->inputs[k], a->inputs[k], N * 4);
    memcpy(b->segstep, a->segstep, N * sizeof(int));
    memcpy(b->obs, a->obs, N * no * sizeof(float));
    memcpy(b->obs_int, a->obs_int, N * ni * sizeof(long long));
    memcpy(b->pending, a->pending, N);
    memcpy(b->seg_return, a->seg_return, N * sizeof(double));
    memcpy(b->step_words, a->step_words, N * (p->n_step_draws + 1) * sizeof(unsigned int));
    memcpy(b->restart_words, a->restart_words, N * (p->n_restart_draws + 1) * sizeof(unsigned int));
}

/* Bits of a value, every NaN as one (its sign and payload are the
 * instruction's choice, which C leaves open). */
static inline uint64_t lanes_bits(const void *buf, size_t i, size_t size, bool real)
{
    if (size == 8) {
        double v;
        memcpy(&v, (const char *)buf + i * 8, 8);
        uint64_t u;
        memcpy(&u, &v, 8);
        return real && isnan(v) ? 0x7ff8000000000000ull : u;
    }
    if (size == 4) {
        uint32_t u;
        memcpy(&u, (const char *)buf + i * 4, 4);
        float v;
        memcpy(&v, &u, 4);
        return real && isnan(v) ? 0x7fc00000u : u;
    }
    return ((const unsigned char *)buf)[i];
}

/* The first difference between two runs, into why; false when none. */
static inline bool lanes_any_differ(const lanes_any *a, const lanes_any *b, bool with_obs, char *why, size_t size)
{
    const cs_program *p = a->p;
    size_t N = (size_t)a->n, rs = p->real == CS_F32 ? 4 : 8;
    for (unsigned k = 0; k < p->n_carried; k++) {
        size_t z = lanes_slot_size(p, k);
        bool real = cs_type_is_real(p->carried[k].type);
        for (size_t i = 0; i < N; i++)
            if (lanes_bits(a->carried[k], i, z, real) != lanes_bits(b->carried[k], i, z, real)) {
                double x = z == 8 ? ((double *)a->carried[k])[i] : z == 4 ? (real ? ((float *)a->carried[k])[i] : ((int *)a->carried[k])[i]) : ((unsigned char *)a->carried[k])[i];
                double y = z == 8 ? ((double *)b->carried[k])[i] : z == 4 ? (real ? ((float *)b->carried[k])[i] : ((int *)b->carried[k])[i]) : ((unsigned char *)b->carried[k])[i];
                snprintf(why, size, "state slot %u '%s' lane %zu: %.17g vs %.17g", k, p->carried[k].name, i, x, y);
                return true;
            }
    }
    for (unsigned k = 0; k < p->n_params; k++)
        for (size_t i = 0; i < N; i++)
            if (lanes_bits(a->params[k], i, rs, true) != lanes_bits(b->params[k], i, rs, true)) {
                snprintf(why, size, "param %u lane %zu", k, i);
                return true;
            }
    struct {
        const char *name;
        const void *x, *y;
        size_t count, size;
        bool real;
    } bufs[] = {
        {"episode steps", a->segstep, b->segstep, N, 4, false},
        {"episodes", a->segments, b->segments, N, 8, false},
        {"non-finite restarts", a->nonfinite, b->nonfinite, N, 8, false},
        {"return sums", a->return_sum, b->return_sum, N, 8, true},
        {"running returns", a->seg_return, b->seg_return, N, 8, true},
        {"rewards", a->reward, b->reward, N, 8, true},
        {"terminated", a->terminated, b->terminated, N, 1, false},
        {"truncated", a->truncated, b->truncated, N, 1, false},
        {"pending", a->pending, b->pending, N, 1, false},
        {"observations", a->obs, b->obs, with_obs ? N * p->n_obs : 0, 4, true},
        {"final observations", a->final_obs, b->final_obs, with_obs ? N * p->n_obs : 0, 4, true},
        {"discrete observations", a->obs_int, b->obs_int, with_obs ? N * p->n_obs_int : 0, 8, false},
        {"final discrete observations", a->final_obs_int, b->final_obs_int, with_obs ? N * p->n_obs_int : 0, 8, false},
        {"info values", a->info, b->info, with_obs ? N * p->n_info : 0, 8, true},
        {"final info values", a->final_info, b->final_info, with_obs ? N * p->n_info : 0, 8, true},
    };
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        for (size_t i = 0; i < bufs[k].count; i++)
            if (lanes_bits(bufs[k].x, i, bufs[k].size, bufs[k].real) !=
                lanes_bits(bufs[k].y, i, bufs[k].size, bufs[k].real)) {
                snprintf(why, size, "%s differ at %zu (row %zu, lane %zu)", bufs[k].name, i, i / N, i % N);
                return true;
            }
    return false;
}

/* ---- running a program ---- */

typedef enum { RUN_INTERP, RUN_CPU, RUN_SHIM } run_backend;

typedef struct {
    run_backend backend;
    cs_fusion fusion;
    int unroll;
    bool launches;          /* cpu, rules or none: a launch per kernel (cs_lanes.launch), values kept in blocks */
    cs_cpu_kernel cpu;
    host_module shim;
    unsigned kernels, scratch_per_lane;
    void **split;           /* the shim's cs_rollout_k<k> under rules/none */
} runner;

/* p's source in a dialect under a schedule: 0, or -1 with the message. */
static inline int lanes_emit(const cs_program *p, cs_fusion fusion, int unroll, cs_dialect d, cs_text *out, char *err,
                             size_t err_size, unsigned *kernels)
{
    cs_schedule s = {fusion, unroll, 0, 90};
    cs_plan plan;
    memset(out, 0, sizeof *out);
    if (cs_plan_build(p, fusion, &plan)) {
        snprintf(err, err_size, "planning failed");
        return -1;
    }
    int rc = cs_emit(p, &plan, &s, d, out, err, err_size);
    if (kernels)
        *kernels = plan.roll.n_kernels;
    cs_plan_free(&plan);
    return rc;
}

/* Builds a runner: 0, or -1 with the message. */
static inline int runner_open(runner *r, const cs_program *p, run_backend backend, cs_fusion fusion, int unroll,
                              const char *shim_header, char *err, size_t err_size)
{
    memset(r, 0, sizeof *r);
    r->backend = backend;
    r->fusion = fusion;
    r->unroll = unroll;
    if (backend == RUN_INTERP)
        return 0;
    cs_text src;
    if (lanes_emit(p, fusion, unroll, backend == RUN_CPU ? CS_DIALECT_C : CS_DIALECT_CUDA, &src, err, err_size,
                   &r->kernels))
        return -1;
    int rc;
    if (backend == RUN_CPU) {
        cs_cache cache = {.dir = ""};
        rc = cs_cpu_compile(src.data, NULL, 0, NULL, &cache, &r->cpu, err, err_size);
    } else {
        rc = host_build(src.data, shim_header, &r->shim, err, err_size);
        const unsigned *kps = rc ? NULL : dlsym(r->shim.handle, "cs_kernels_per_step");
        const unsigned *spl = rc ? NULL : dlsym(r->shim.handle, "cs_scratch_bytes_per_lane");
        if (!rc && (!kps || !spl || !*kps)) {
            snprintf(err, err_size, "the CUDA module's constants are missing or odd");
            rc = -1;
        }
        if (!rc) {
            r->kernels = *kps;
            r->scratch_per_lane = *spl;
            r->split = calloc(r->kernels, sizeof *r->split);
            for (unsigned k = 0; k < r->kernels && fusion != CS_FUSION_FULL; k++) {
                char name[32];
                snprintf(name, sizeof name, "cs_rollout_k%u", k);
                if (!(r->split[k] = dlsym(r->shim.handle, name))) {
                    snprintf(err, err_size, "%s missing", name);
                    rc = -1;
                }
            }
        }
    }
    cs_text_free(&src);
    return rc;
}

static inline void runner_close(runner *r)
{
    if (r->backend == RUN_CPU && r->cpu.handle)
        cs_cpu_unload(&r->cpu);
    if (r->backend == RUN_SHIM)
        host_unload(&r->shim);
    free(r->split);
    memset(r, 0, sizeof *r);
}

/* The shim's grid: 3 blocks of 32 threads, each walking several lanes. */
enum { LANES_GRID = 3, LANES_BLOCK = 32 };

static inline void runner_restart(runner *r, const cs_program *p, const cs_lanes *l)
{
    if (r->backend == RUN_INTERP)
        cs_interp_restart(p, l);
    else if (r->backend == RUN_CPU)
        r->cpu.restart(l);
    else
        host_launch(&r->shim, dlsym(r->shim.handle, "cs_kernel_restart"), false, LANES_GRID, LANES_BLOCK, l, NULL);
}

static inline void runner_step(runner *r, const cs_program *p, const cs_lanes *l)
{
    if (r->backend == RUN_INTERP)
        cs_interp_step(p, l);
    else if (r->backend == RUN_CPU)
        r->cpu.step(l);
    else
        host_launch(&r->shim, dlsym(r->shim.handle, "cs_kernel_step"), false, LANES_GRID, LANES_BLOCK, l, NULL);
}

/* A rollout of l->steps steps: the shim as the runtime launches it
 * (persistent under full, every kernel of every step otherwise). */
static inline void runner_rollout(runner *r, const cs_program *p, const cs_lanes *l)
{
    if (r->backend == RUN_INTERP) {
        cs_interp_rollout(p, l);
        return;
    }
    if (r->backend == RUN_CPU && !r->launches) {
        r->cpu.rollout(l);
        return;
    }
    if (r->backend == RUN_CPU) {   /* blocks of 256 lanes, the runtime's unit (cs_kernel_block_bytes) */
        void *blocks = calloc((size_t)(l->end - l->begin + 255) / 256, (size_t)r->cpu.block_bytes);
        for (long long s = 0; s < l->steps; s++)
            for (unsigned k = 0; k < r->kernels; k++) {
                cs_lanes one = *l;
                one.t = l->t + s;
                one.steps = 1;
                one.launch = (int)k + 1;
                one.blocks = blocks;
                r->cpu.rollout(&one);
            }
        free(blocks);
        return;
    }
    if (r->fusion == CS_FUSION_FULL) {
        host_launch(&r->shim, dlsym(r->shim.handle, "cs_kernel_rollout"), false, LANES_GRID, LANES_BLOCK, l, NULL);
        return;
    }
    char *scratch = calloc((size_t)r->scratch_per_lane * (size_t)l->stride + 8, 1);
    for (long long s = 0; s < l->steps; s++) {
        cs_lanes one = *l;
        one.t = l->t + s;
        one.steps = 1;
        for (unsigned k = 0; k < r->kernels; k++)
            host_launch(&r->shim, r->split[k], true, LANES_GRID, LANES_BLOCK, &one, scratch);
    }
    free(scratch);
}

static inline const char *runner_name(const runner *r)
{
    return r->backend == RUN_INTERP ? "the interpreter" : r->backend == RUN_CPU ? "the cpu backend" : "the CUDA dialect";
}

#endif
