/* The compile driver: every stage once, in order, straight-line as QBE's
 * main.c writes it:
 *
 *   parse -> bind the policy fragment -> fold, scalarize, concat (full only), dce
 *         -> partition (once, for the emitter and the dump) -> emit -> backend
 *
 * The request says where to stop (`cartsim dump` stops after a pass, after
 * the partition, after emitting, or after NVRTC with a cubin); a failure is a
 * typed cs_compile_error, never a message to be matched. The backend stage
 * picks the backend auto asks for (cuda where usable, else the cpu, else the
 * interpreter), saying why in the kernel's notice. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jit.h"

static bool stop(const char *after, const char *pass) { return after && strcmp(after, pass) == 0; }

int cs_optimize(cs_program *p, cs_fusion fusion, const char *after, char *err, size_t err_size)
{
    if (after && strcmp(after, "parse") != 0) {
        bool known = false;
        for (const cs_pass_info *pass = cs_pass_table; pass->name; pass++)
            known |= strcmp(pass->name, after) == 0;
        if (!known) {
            snprintf(err, err_size, "unknown pass '%s' (passes: parse, fold, scalarize, concat, dce)", after);
            return -1;
        }
    }
    if (stop(after, "parse"))
        return 0;
    if (cs_pass_fold(p) < 0)
        goto oom;
    if (stop(after, "fold"))
        return 0;
    if (cs_pass_scalarize(p) < 0)
        goto oom;
    if (stop(after, "scalarize"))
        return 0;
    if (fusion == CS_FUSION_FULL && cs_pass_concat(p) < 0)
        goto oom;
    if (stop(after, "concat"))
        return 0;
    if (cs_pass_dce(p) < 0)
        goto oom;
    return 0;
oom:
    snprintf(err, err_size, "out of memory while optimizing");
    return -2;
}

/* ---- the backend stage ---- */

static cs_compile_error fail(cs_compile_error kind, char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static cs_compile_error fail(cs_compile_error kind, char *err, size_t err_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
    return kind;
}

static cs_compile_error emit(const cs_kernel *k, const cs_compile_request *rq, int unroll, int arch,
                             cs_dialect d, cs_text *out, char *err, size_t err_size)
{
    cs_schedule sched = {rq->fusion, unroll, rq->block, arch};
    if (cs_emit(k->prog, &k->plan, &sched, d, out, err, err_size))
        return CS_COMPILE_EMIT;
    if (out->failed || !out->data)
        return fail(CS_COMPILE_NOMEM, err, err_size, "out of memory");
    return CS_COMPILE_OK;
}

static cs_compile_error compile_cpu(cs_kernel *k, const cs_compile_request *rq, char *err, size_t err_size)
{
    cs_text src = {0};
    cs_compile_error e = emit(k, rq, rq->unroll, 0, CS_DIALECT_C, &src, err, err_size);
    if (e == CS_COMPILE_OK) {
        /* a kernel that records (PPO's rollout) runs a few hundred steps per
         * iteration: its compile, not its speed, is what a run waits for */
        cs_cpu_opt opt = k->prog->n_records ? CS_CPU_OPT_COMPILE : CS_CPU_OPT_SPEED;
        int rc = 1;
        if (rq->tier && opt == CS_CPU_OPT_SPEED) {   /* tier.c */
            rc = cs_cpu_load_cached(src.data, rq->cc, opt, &k->cache, &k->cpu, err, err_size);
            if (rc == 1)
                opt = CS_CPU_OPT_QUICK;
        }
        if (rc == 1)
            rc = cs_cpu_compile_opt(src.data, rq->cc, opt, rq->cc_timeout_s, rq->interrupt, &k->cache, &k->cpu, err,
                                    err_size);
        if (rc == 0 && k->cache.warning[0])   /* read before a build in the background uses the cache */
            snprintf(k->notice, sizeof k->notice, "%s", k->cache.warning);
        /* No thread to be had: the quick kernel runs on, as the notice says. */
        char why[256];
        if (rc == 0 && opt == CS_CPU_OPT_QUICK &&
            cs_cpu_background_start(src.data, rq->cc, CS_CPU_OPT_SPEED, rq->cc_timeout_s, &k->cache,
                                    k->cpu.cache_hit, &k->optimizing, why, sizeof why))
            snprintf(k->notice, sizeof k->notice, "no optimized build (%s): running the quick kernel", why);
        e = rc == CS_CPU_NO_CC            ? CS_COMPILE_NO_CC
          : rc == CS_CPU_TIMEOUT          ? CS_COMPILE_CC_TIMEOUT
          : rc == CS_CPU_INTERRUPTED      ? CS_COMPILE_INTERRUPTED
          : rc                            ? CS_COMPILE_CC
                                          : CS_COMPILE_OK;
    }
    cs_text_free(&src);
    if (e != CS_COMPILE_OK)
        return e;
    k->compile_ms = k->cpu.compile_ms;
    k->cache_hit = k->cpu.cache_hit;
    return CS_COMPILE_OK;
}

static cs_compile_error cuda_open_error(int rc)
{
    return rc == CS_CUDA_NO_DRIVER     ? CS_COMPILE_NO_DRIVER
         : rc == CS_CUDA_NOT_INSTALLED ? CS_COMPILE_NOT_INSTALLED
         : rc == CS_CUDA_NO_DEVICE ? CS_COMPILE_NO_DEVICE
         : rc == CS_CUDA_NO_NVRTC  ? CS_COMPILE_NO_NVRTC
                                   : CS_COMPILE_DEVICE_OPEN;
}

/* Opens the device, compiles with NVRTC for its architecture and loads. A
 * kernel that spills is rebuilt at half the unroll, down to 1, and the notice
 * says so. A device newer than NVRTC runs PTX that the driver compiles: the
 * notice says that too. */
static cs_compile_error compile_cuda(cs_kernel *k, const cs_compile_request *rq, char *err, size_t err_size)
{
    int rc = cs_cuda_open(&k->cuda, rq->device, err, err_size);
    if (rc)
        return cuda_open_error(rc);
    const cs_cuda_device *dev = cs_cuda_device_info(k->cuda);
    int unroll = rq->unroll, first_spill = 0, ptx_arch = 0;
    k->compile_ms = 0;
    k->cache_hit = true;
    for (;;) {
        cs_text src = {0};
        cs_compile_error e = emit(k, rq, unroll, dev->arch, CS_DIALECT_CUDA, &src, err, err_size);
        if (e != CS_COMPILE_OK) {
            cs_text_free(&src);
            return e;
        }
        cs_cubin bin;
        rc = cs_cuda_compile_or_ptx(cs_cuda_nvrtc(k->cuda), src.data, dev->arch, CS_CUDA_FMAD, &k->cache, &bin, err,
                                    err_size);
        cs_text_free(&src);
        k->compile_ms += bin.compile_ms;
        if (rc)   /* CS_CUDA_ARCH too: NVRTC cannot build for this device */
            return CS_COMPILE_NVRTC;
        k->cache_hit &= bin.cache_hit;
        ptx_arch = bin.ptx ? bin.arch : 0;
        k->spill_bytes = bin.spill_bytes;
        cs_cuda_schedule cs = {rq->fusion, unroll, rq->persistent, rq->block};
        rc = cs_cuda_load(k->cuda, &bin, &cs, &k->cuda_kernel, err, err_size);
        cs_cubin_free(&bin);
        if (rc)
            return rc == CS_CUDA_LIMIT ? CS_COMPILE_LIMIT : CS_COMPILE_DEVICE;
        /* ptxas's spill stores, not the driver's local memory, which counts
         * the stack frame CUDA's sinf/cosf keep for huge arguments. PTX (the
         * driver compiles it) reports none: left as it is. */
        if (k->spill_bytes > 0 && unroll > 1) {
            if (!first_spill)
                first_spill = k->spill_bytes;
            unroll /= 2;
            continue;
        }
        break;
    }
    if (first_spill)
        snprintf(k->notice, sizeof k->notice,
                 "the unroll-%d kernel spills %d bytes per thread: unroll lowered to %d (%d bytes)", rq->unroll,
                 first_spill, unroll, k->spill_bytes);
    else if (k->cache.warning[0])
        snprintf(k->notice, sizeof k->notice, "%s", k->cache.warning);
    if (ptx_arch) {
        char rest[sizeof k->notice];
        snprintf(rest, sizeof rest, "%s", k->notice);
        int major, minor;
        cs_nvrtc_version(cs_cuda_nvrtc(k->cuda), &major, &minor);
        snprintf(k->notice, sizeof k->notice,
                 "NVRTC %d.%d does not know sm_%d: PTX for compute_%d, compiled by the driver%s%.300s", major, minor,
                 dev->arch, ptx_arch, rest[0] ? "; " : "", rest);
    }
    k->unroll = unroll;
    if (k->cuda_kernel.kernels_per_step != k->kernels_per_step)
        return fail(CS_COMPILE_EMIT, err, err_size, "the CUDA kernel runs a step in %u kernels, the partition has %u",
                    k->cuda_kernel.kernels_per_step, k->kernels_per_step);
    return CS_COMPILE_OK;
}

/* A cubin for sm_<arch> (0: the device's own) through NVRTC alone: no GPU
 * needed when the architecture is named. Never PTX: a cubin was asked for. */
static cs_compile_error compile_cubin(cs_kernel *k, const cs_compile_request *rq, char *err, size_t err_size)
{
    int arch = rq->arch, rc;
    if (!arch) {
        cs_cuda *c;
        char why[512];
        if (cs_cuda_open(&c, rq->device, why, sizeof why))
            return fail(CS_COMPILE_ARGUMENT, err, err_size,
                        "name the architecture (--arch sm_XY): no device to ask (%s)", why);
        arch = cs_cuda_device_info(c)->arch;
        cs_cuda_close(c);
    }
    cs_nvrtc *nv;
    if ((rc = cs_nvrtc_open(&nv, err, err_size)))
        return cuda_open_error(rc);
    cs_text src = {0};
    cs_compile_error e = emit(k, rq, rq->unroll, arch, CS_DIALECT_CUDA, &src, err, err_size);
    if (e == CS_COMPILE_OK && (rc = cs_cuda_compile(nv, src.data, arch, CS_CUDA_FMAD, NULL, &k->cubin, err, err_size)))
        e = rc == CS_CUDA_ARCH ? CS_COMPILE_UNKNOWN_ARCH : CS_COMPILE_NVRTC;
    cs_text_free(&src);
    cs_nvrtc_close(nv);
    return e;
}

/* auto: cuda where a device is usable, else the cpu, else the interpreter,
 * the notice saying why in one line. */
static cs_compile_error pick_backend(cs_kernel *k, const cs_compile_request *rq, char *err, size_t err_size)
{
    cs_backend b = rq->backend;
    if (b == CS_BACKEND_CUDA)
        return compile_cuda(k, rq, err, err_size);
    if (b == CS_BACKEND_CPU)
        return compile_cpu(k, rq, err, err_size);
    if (b == CS_BACKEND_AUTO) {
        cs_compile_error e = compile_cuda(k, rq, err, err_size);
        if (e == CS_COMPILE_OK) {
            k->backend = CS_BACKEND_CUDA;
            return e;
        }
        cs_cuda_close(k->cuda);
        k->cuda = NULL;
        memset(&k->cuda_kernel, 0, sizeof k->cuda_kernel);
        k->unroll = rq->unroll;
        k->spill_bytes = 0;
        /* Said only where a GPU was to be expected: a machine without an
         * NVIDIA driver runs the cpu as asked, not as a fallback. */
        if (e == CS_COMPILE_NOT_INSTALLED)
            k->notice[0] = 0;
        else if (e == CS_COMPILE_NO_DEVICE)
            snprintf(k->notice, sizeof k->notice, "no CUDA device: running on the cpu");
        else if (e == CS_COMPILE_NO_DRIVER || e == CS_COMPILE_NO_NVRTC || e == CS_COMPILE_DEVICE_OPEN)
            snprintf(k->notice, sizeof k->notice, "no CUDA device (%.400s): running on the cpu", err);
        else
            snprintf(k->notice, sizeof k->notice, "the cuda backend failed (%.400s): running on the cpu", err);
        cs_compile_error c = compile_cpu(k, rq, err, err_size);
        if (c == CS_COMPILE_OK) {
            k->backend = CS_BACKEND_CPU;
            return CS_COMPILE_OK;
        }
        /* A compiler that hung or was interrupted is reported as what it
         * was, not hidden behind a 100x slower interpreter. */
        if (c == CS_COMPILE_CC_TIMEOUT || c == CS_COMPILE_INTERRUPTED)
            return c;
        snprintf(k->notice, sizeof k->notice, "cpu backend unavailable (%.400s): running the interpreter", err);
    }
    k->backend = CS_BACKEND_INTERP;
    return CS_COMPILE_OK;
}

/* ---- the driver ---- */

static cs_compile_error run(const cs_compile_request *rq, cs_kernel *k, char *err, size_t err_size)
{
    double start = cs_now_ms();
    k->backend = rq->backend;
    k->unroll = rq->unroll;

    cs_param_override ov[CS_MAX_PARAM_OVERRIDES];
    if (rq->n_params > CS_MAX_PARAM_OVERRIDES)
        return fail(CS_COMPILE_ARGUMENT, err, err_size, "at most %d parameter overrides", CS_MAX_PARAM_OVERRIDES);
    for (unsigned i = 0; i < rq->n_params; i++) {
        char msg[256];
        if (!rq->params[i])
            return fail(CS_COMPILE_ARGUMENT, err, err_size, "--param (null): missing");
        if (cs_parse_override(rq->params[i], &ov[i], msg, sizeof msg))
            return fail(CS_COMPILE_ARGUMENT, err, err_size, "--param %s: %s", rq->params[i], msg);
    }
    int rc = cs_parse(rq->source, rq->len, rq->filename, rq->real, ov, rq->n_params, &k->prog, err, err_size);
    if (rc)   /* -2: the overrides, not the source, are at fault */
        return rc == -2 ? CS_COMPILE_ARGUMENT : CS_COMPILE_SYNTAX;
    k->prog->fast_f64 = rq->fast_f64;   /* before folding: constants are computed in the mode */
    if (rq->strict && cs_program_add_index_faults(k->prog, rq->filename))
        return fail(CS_COMPILE_NOMEM, err, err_size, "out of memory building the strict mode's index check");

    if (rq->bind_policy) {
        char msg[1024];
        cs_status s = rq->bind_policy(k->prog, rq->policy_ctx, msg, sizeof msg);
        if (s != CS_OK)
            return fail(s == CS_ERR_NOMEM ? CS_COMPILE_NOMEM : CS_COMPILE_POLICY, err, err_size, "%s", msg);
    }
    if (cs_program_bind_policy(k->prog))
        return fail(CS_COMPILE_NOMEM, err, err_size, "out of memory building the policy");

    rc = cs_optimize(k->prog, rq->fusion, rq->after, err, err_size);
    if (rc)
        return rc == -1 ? CS_COMPILE_UNKNOWN_PASS : CS_COMPILE_NOMEM;
    if (rq->stop == CS_STAGE_PASSES)
        return CS_COMPILE_OK;

    if (cs_plan_build(k->prog, rq->fusion, &k->plan))
        return fail(CS_COMPILE_NOMEM, err, err_size, "out of memory partitioning");
    k->kernels_per_step = k->plan.roll.n_kernels;
    if (rq->stop == CS_STAGE_PARTITION)
        return CS_COMPILE_OK;

    if (rq->stop == CS_STAGE_EMIT)
        return emit(k, rq, rq->unroll, rq->arch, rq->dialect, &k->source, err, err_size);

    if (rq->cubin)
        return compile_cubin(k, rq, err, err_size);
    if (!rq->no_cache && rq->backend != CS_BACKEND_INTERP) {
        cs_cache_open(&k->cache, rq->cache_dir);
        if (rq->cache_max_mb > 0)
            k->cache.max_bytes = rq->cache_max_mb * 1048576LL;
    }
    cs_compile_error e = pick_backend(k, rq, err, err_size);
    if (e == CS_COMPILE_OK && k->backend == CS_BACKEND_INTERP)
        k->compile_ms = cs_now_ms() - start;
    return e;
}

cs_compile_error cs_compile(const cs_compile_request *rq, cs_kernel *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    if (err_size)
        err[0] = 0;
    cs_compile_error e = run(rq, out, err, err_size);
    if (e != CS_COMPILE_OK)
        cs_kernel_free(out);
    return e;
}

void cs_kernel_free(cs_kernel *k)
{
    cs_cpu_background_stop(k->optimizing);   /* before the cache it uses */
    cs_cpu_unload(&k->cpu);
    cs_cuda_close(k->cuda);
    cs_cache_close(&k->cache);
    cs_cubin_free(&k->cubin);
    cs_text_free(&k->source);
    cs_plan_free(&k->plan);
    cs_program_free(k->prog);
    memset(k, 0, sizeof *k);
}

cs_status cs_compile_status(cs_compile_error e)
{
    static const cs_status status[CS_COMPILE_ERROR_COUNT] = {
        [CS_COMPILE_OK] = CS_OK,
        [CS_COMPILE_ARGUMENT] = CS_ERR_ARGUMENT,
        [CS_COMPILE_SYNTAX] = CS_ERR_PARSE,
        [CS_COMPILE_POLICY] = CS_ERR_ARGUMENT,
        [CS_COMPILE_UNKNOWN_PASS] = CS_ERR_ARGUMENT,
        [CS_COMPILE_EMIT] = CS_ERR_COMPILE,
        [CS_COMPILE_NO_CC] = CS_ERR_UNAVAILABLE,
        [CS_COMPILE_CC] = CS_ERR_COMPILE,
        [CS_COMPILE_CC_TIMEOUT] = CS_ERR_TIMEOUT,
        [CS_COMPILE_INTERRUPTED] = CS_ERR_INTERRUPTED,
        [CS_COMPILE_NO_DRIVER] = CS_ERR_UNAVAILABLE,
        [CS_COMPILE_NOT_INSTALLED] = CS_ERR_UNAVAILABLE,
        [CS_COMPILE_NO_DEVICE] = CS_ERR_UNAVAILABLE,
        [CS_COMPILE_NO_NVRTC] = CS_ERR_UNAVAILABLE,
        [CS_COMPILE_DEVICE_OPEN] = CS_ERR_UNAVAILABLE,
        [CS_COMPILE_NVRTC] = CS_ERR_COMPILE,
        [CS_COMPILE_UNKNOWN_ARCH] = CS_ERR_ARGUMENT,
        [CS_COMPILE_DEVICE] = CS_ERR_UNAVAILABLE,
        [CS_COMPILE_LIMIT] = CS_ERR_LIMIT,
        [CS_COMPILE_NOMEM] = CS_ERR_NOMEM,
    };
    return (unsigned)e < CS_COMPILE_ERROR_COUNT ? status[e] : CS_ERR_ARGUMENT;
}
