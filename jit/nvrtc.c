/* The cuda backend's compiling half: generated CUDA C -> NVRTC -> a cubin
 * for an architecture (cached on disk like the cpu objects), or PTX for a
 * device newer than NVRTC, which the driver compiles (cuda_driver.c). It
 * needs no GPU and no driver: `cartsim dump --format cubin` runs here alone.
 *
 * libnvrtc is opened with dlopen (cuda_lib.c), so one binary builds without
 * the CUDA headers; its function table lives in the cs_nvrtc handle, not in
 * a process-wide table.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_api.h"
#include "jit.h"

struct cs_nvrtc {
    cs_nvrtc_api api;
    int major, minor;
    char path[PATH_MAX];     /* the library opened, for messages */
};

static const char *const nvrtc_names[] = {
    "nvrtcVersion",      "nvrtcGetErrorString", "nvrtcCreateProgram", "nvrtcCompileProgram",
    "nvrtcGetProgramLogSize", "nvrtcGetProgramLog", "nvrtcGetCUBINSize", "nvrtcGetCUBIN",
    "nvrtcDestroyProgram", "nvrtcGetPTXSize", "nvrtcGetPTX", "nvrtcGetNumSupportedArchs", "nvrtcGetSupportedArchs",
};
#define NVRTC_REQUIRED 11
_Static_assert(sizeof nvrtc_names / sizeof nvrtc_names[0] == (sizeof(cs_nvrtc_api) - sizeof(void *)) / sizeof(void (*)(void)),
               "nvrtc_names: one name per slot of cs_nvrtc_api");

int cs_nvrtc_open(cs_nvrtc **out, char *err, size_t err_size)
{
    *out = NULL;
    cs_nvrtc *nv = calloc(1, sizeof *nv);
    if (!nv) {
        cs_cuda_say(err, err_size, "out of memory");
        return CS_CUDA_FAIL;
    }
    const char *forced = getenv("CARTSIM_NVRTC");
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"};
    const char *dirs[3] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
    if (forced && *forced) {
        nv->api.lib = cs_cuda_open_lib(forced);
        if (!nv->api.lib) {
            const char *why = dlerror();
            cs_cuda_say(err, err_size, "NVRTC not found ($CARTSIM_NVRTC=%s: %s)", forced, why ? why : "cannot open");
            free(nv);
            return CS_CUDA_NO_NVRTC;
        }
        snprintf(nv->path, sizeof nv->path, "%s", forced);
    } else {
        for (size_t k = 0; k < sizeof names / sizeof names[0] && !nv->api.lib; k++)
            if ((nv->api.lib = cs_cuda_open_lib(names[k])))
                snprintf(nv->path, sizeof nv->path, "%s", names[k]);
        for (size_t d = 0; d < 3 && !nv->api.lib; d++) {
            if (!dirs[d] || !*dirs[d])
                continue;
            for (size_t k = 0; k < sizeof names / sizeof names[0] && !nv->api.lib; k++) {
                char path[PATH_MAX];
                snprintf(path, sizeof path, "%s/lib64/%s", dirs[d], names[k]);
                if ((nv->api.lib = cs_cuda_open_lib(path)))
                    snprintf(nv->path, sizeof nv->path, "%s", path);
            }
        }
        if (!nv->api.lib) {
            cs_cuda_say(err, err_size, "NVRTC not found (no libnvrtc.so.13, .so.12, .so.11.2 or .so on the library path "
                               "or in $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64)");
            free(nv);
            return CS_CUDA_NO_NVRTC;
        }
    }
    if (cs_cuda_resolve_table(nv->api.lib, (char *)&nv->api + sizeof(void *), nvrtc_names,
                              sizeof nvrtc_names / sizeof nvrtc_names[0], NVRTC_REQUIRED, nv->path, err, err_size)) {
        dlclose(nv->api.lib);
        free(nv);
        return CS_CUDA_FAIL;
    }
    cs_nvrtc_result rc = nv->api.Version(&nv->major, &nv->minor);
    if (rc != CS_NVRTC_SUCCESS) {
        cs_cuda_say(err, err_size, "nvrtcVersion failed: %s", nv->api.GetErrorString(rc));
        dlclose(nv->api.lib);
        free(nv);
        return CS_CUDA_FAIL;
    }
    *out = nv;
    return 0;
}

void cs_nvrtc_close(cs_nvrtc *nv)
{
    if (!nv)
        return;
    if (nv->api.lib)
        dlclose(nv->api.lib);
    free(nv);
}

void cs_nvrtc_version(const cs_nvrtc *nv, int *major, int *minor)
{
    *major = nv->major;
    *minor = nv->minor;
}

/* ---- compiling ---- */

int cs_cuda_parse_arch(const char *text)
{
    if (!text)
        return -1;
    if (!strncmp(text, "sm_", 3) || !strncmp(text, "SM_", 3))
        text += 3;
    int major = 0, minor = 0, n = 0;
    if (sscanf(text, "%d.%d%n", &major, &minor, &n) == 2 && text[n] == 0)
        return major >= 1 && major <= 99 && minor >= 0 && minor <= 9 ? 10 * major + minor : -1;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || errno || v < 10 || v > 999)
        return -1;
    if (*end && strcmp(end, "a") && strcmp(end, "f"))
        return -1;
    return (int)v;
}

static cs_hash128 hash_str(cs_hash128 h, const char *s) { return cs_hash_bytes(s, strlen(s) + 1, h); }

/* Reads a cache entry from the descriptor its lookup verified (closed here). */
static int read_entry(int fd, cs_cubin *out)
{
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int rc = -1;
    long size;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
        out->data = malloc((size_t)size);
        /* PTX is stored with its NUL, which the driver needs: an entry without it is no use */
        if (out->data && fread(out->data, 1, (size_t)size, f) == (size_t)size &&
            (!out->ptx || out->data[size - 1] == 0)) {
            out->size = (size_t)size;
            rc = 0;
        } else {
            free(out->data);
            out->data = NULL;
        }
    }
    fclose(f);
    return rc;
}

/* Installs bytes in the cache through a file in a build directory inside it
 * (one left by a killed process goes at the cache's next open). */
static void store(cs_cache *cache, const char *key, const char *suffix, const void *data, size_t size)
{
    cs_build_dir build;
    if (cs_cache_build_dir(cache, &build) != 0)
        return;
    char path[sizeof build.path + 16], entry[PATH_MAX];
    snprintf(path, sizeof path, "%s/object", build.path);
    cs_output o;
    char why[512];
    if (cs_output_begin_at(&o, build.fd, "object", path, 0600, why, sizeof why) == CS_OK) {
        if (cs_output_write(&o, data, size) == CS_OK && cs_output_commit(&o, why, sizeof why) == CS_OK)
            cs_cache_store(cache, key, suffix, path, entry, sizeof entry);   /* failure: warning set, run uncached */
        cs_output_abort(&o);
    }
    cs_build_dir_remove(&build);
}

/* A cubin's spill figure, kept beside it in the cache: the number (-1:
 * ptxas did not say), or -2 when the entry is missing or damaged (then the
 * cubin is built again). */
static int read_spill(cs_cache *cache, const char *key)
{
    int fd = cs_cache_open_entry(cache, key, ".spill");
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return -2;
    }
    char text[32] = {0};
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    char *end = text;
    long v = n > 0 ? strtol(text, &end, 10) : -1;
    return n > 0 && end != text && *end == '\n' && v >= -1 && v <= INT_MAX ? (int)v : -2;
}

/* NVRTC's log (malloc'ed, NUL-terminated), or NULL. */
static char *program_log(cs_nvrtc *nv, cs_nvrtc_program prog)
{
    size_t log_size = 0;
    char *log = NULL;
    if (nv->api.GetProgramLogSize(prog, &log_size) == CS_NVRTC_SUCCESS && log_size > 0 &&
        (log = malloc(log_size + 1))) {
        if (nv->api.GetProgramLog(prog, log) != CS_NVRTC_SUCCESS)
            log[0] = 0;
        log[log_size] = 0;
    }
    return log;
}

/* The first lines of NVRTC's log, flattened for a one-line message. */
static void log_message(const char *log, char *out, size_t size)
{
    size_t n = 0;
    for (const char *c = log; *c && n + 1 < size; c++)
        out[n++] = *c == '\n' ? ' ' : *c;
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = 0;
}

/* What to ask NVRTC for: a cubin for sm_<arch> when it knows that
 * architecture (or cannot say which it knows: before 11.2); otherwise, when
 * allowed, PTX for the newest compute_B <= arch that it knows. */
static int pick_target(cs_nvrtc *nv, int arch, bool allow_ptx, cs_cubin *out, char *err, size_t err_size)
{
    out->arch = arch;
    out->ptx = false;
    if (!nv->api.GetNumSupportedArchs || !nv->api.GetSupportedArchs)
        return 0;
    int n = 0, archs[128];
    if (nv->api.GetNumSupportedArchs(&n) != CS_NVRTC_SUCCESS || n < 1 || n > 128 ||
        nv->api.GetSupportedArchs(archs) != CS_NVRTC_SUCCESS)
        return 0;   /* no list: NVRTC itself will refuse what it cannot do */
    int lo = archs[0], hi = archs[0], below = 0;
    for (int k = 0; k < n; k++) {
        if (archs[k] == arch)
            return 0;
        lo = archs[k] < lo ? archs[k] : lo;
        hi = archs[k] > hi ? archs[k] : hi;
        if (archs[k] < arch && archs[k] > below)
            below = archs[k];
    }
    if (!allow_ptx || !below) {
        cs_cuda_say(err, err_size, "NVRTC %d.%d cannot compile for sm_%d (it supports sm_%d to sm_%d)", nv->major,
            nv->minor, arch, lo, hi);
        return CS_CUDA_ARCH;
    }
    out->arch = below;
    out->ptx = true;
    return 0;
}

static int compile(cs_nvrtc *nv, const char *source, int arch, bool fmad, bool allow_ptx, cs_cache *cache,
                   cs_cubin *out, char *err, size_t err_size)
{
    double start = cs_now_ms();
    memset(out, 0, sizeof *out);
    if (arch < 10 || arch > 999) {
        cs_cuda_say(err, err_size, "not a CUDA architecture: %d", arch);
        return CS_CUDA_FAIL;
    }
    int picked = pick_target(nv, arch, allow_ptx, out, err, err_size);
    if (picked)
        return picked;
    const char *what = out->ptx ? "compute" : "sm";   /* a virtual architecture makes PTX only */
    char arch_opt[64], version[32];
    snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=%s_%d", what, out->arch);
    snprintf(version, sizeof version, "nvrtc %d.%d", nv->major, nv->minor);
    /* For a cubin, ptxas reports each kernel's spills in the log: the only
     * place they are told apart from a stack frame (ptxas_log.c). */
    const char *options[] = {arch_opt, "--std=c++17", fmad ? "--fmad=true" : "--fmad=false",
                             "--ptxas-options=--verbose"};
    const int n_options = out->ptx ? 3 : 4;
    out->spill_bytes = -1;
    const char *suffix = out->ptx ? ".ptx" : ".cubin";

    cs_hash128 h = {0x63756461u, CS_LANES_ABI};   /* "cuda" */
    h = hash_str(h, version);
    for (int k = 0; k < n_options; k++)
        h = hash_str(h, options[k]);
    h = hash_str(h, source);
    char key[33];
    cs_hash_hex(h, key);
    if (cache && cache->dir[0] && (out->ptx || (out->spill_bytes = read_spill(cache, key)) >= -1) &&
        read_entry(cs_cache_open_entry(cache, key, suffix), out) == 0) {
        out->cache_hit = true;
        out->compile_ms = cs_now_ms() - start;
        return 0;
    }
    out->spill_bytes = -1;

    cs_nvrtc_program prog = NULL;
    cs_nvrtc_result rc = nv->api.CreateProgram(&prog, source, "cartsim_kernel.cu", 0, NULL, NULL);
    if (rc != CS_NVRTC_SUCCESS) {
        cs_cuda_say(err, err_size, "nvrtcCreateProgram failed: %s", nv->api.GetErrorString(rc));
        return CS_CUDA_FAIL;
    }
    int result = CS_CUDA_FAIL;
    rc = nv->api.CompileProgram(prog, n_options, options);
    if (rc != CS_NVRTC_SUCCESS) {
        char *log = program_log(nv, prog);
        char flat[2048];
        log_message(log ? log : "", flat, sizeof flat);
        cs_cuda_say(err, err_size, "NVRTC failed to compile the generated kernel for %s_%d (%s): %s", what, out->arch,
            nv->api.GetErrorString(rc), flat[0] ? flat : "(no log)");
        free(log);
        goto done;
    }
    size_t size = 0;
    if (out->ptx) {
        if ((rc = nv->api.GetPTXSize(prog, &size)) != CS_NVRTC_SUCCESS || size <= 1) {
            cs_cuda_say(err, err_size, "nvrtcGetPTXSize failed: %s",
                rc != CS_NVRTC_SUCCESS ? nv->api.GetErrorString(rc) : "no PTX");
            goto done;
        }
        /* One byte more, so that the text ends with a NUL whatever NVRTC counted. */
        if (!(out->data = malloc(size + 1))) {
            cs_cuda_say(err, err_size, "out of memory for %zu bytes of PTX", size);
            goto done;
        }
        if ((rc = nv->api.GetPTX(prog, (char *)out->data)) != CS_NVRTC_SUCCESS) {
            cs_cuda_say(err, err_size, "nvrtcGetPTX failed: %s", nv->api.GetErrorString(rc));
            free(out->data);
            out->data = NULL;
            goto done;
        }
        out->data[size] = 0;
        size = strlen((const char *)out->data) + 1;
    } else {
        if ((rc = nv->api.GetCUBINSize(prog, &size)) != CS_NVRTC_SUCCESS || size == 0) {
            cs_cuda_say(err, err_size, "nvrtcGetCUBINSize failed: %s",
                rc != CS_NVRTC_SUCCESS ? nv->api.GetErrorString(rc) : "an empty cubin");
            goto done;
        }
        if (!(out->data = malloc(size))) {
            cs_cuda_say(err, err_size, "out of memory for a %zu-byte cubin", size);
            goto done;
        }
        if ((rc = nv->api.GetCUBIN(prog, (char *)out->data)) != CS_NVRTC_SUCCESS) {
            cs_cuda_say(err, err_size, "nvrtcGetCUBIN failed: %s", nv->api.GetErrorString(rc));
            free(out->data);
            out->data = NULL;
            goto done;
        }
    }
    out->size = size;
    if (!out->ptx) {
        /* The rollout kernels are what the unroll grows: fused, or a partition's. */
        char *log = program_log(nv, prog);
        long fused = cs_ptxas_spill_bytes(log, "cs_kernel_rollout"), parts = cs_ptxas_spill_bytes(log, "cs_rollout_k");
        free(log);
        long most = fused > parts ? fused : parts;
        out->spill_bytes = most < 0 ? -1 : most > INT_MAX ? INT_MAX : (int)most;   /* not reported: unknown */
    }
    if (cache && cache->dir[0]) {
        char where[80];
        snprintf(where, sizeof where, "cuda %s", arch_opt + strlen("--gpu-architecture="));
        cs_cache_describe(cache, source, where);
        if (!out->ptx) {
            char text[32];
            int n = snprintf(text, sizeof text, "%d\n", out->spill_bytes);
            store(cache, key, ".spill", text, (size_t)n);
        }
        store(cache, key, suffix, out->data, out->size);   /* the cubin last: a hit finds both */
    }
    result = 0;
done:
    nv->api.DestroyProgram(&prog);
    out->compile_ms = cs_now_ms() - start;
    return result;
}

int cs_cuda_compile(cs_nvrtc *nv, const char *source, int arch, bool fmad, cs_cache *cache, cs_cubin *out,
                    char *err, size_t err_size)
{
    return compile(nv, source, arch, fmad, false, cache, out, err, err_size);
}

int cs_cuda_compile_or_ptx(cs_nvrtc *nv, const char *source, int arch, bool fmad, cs_cache *cache, cs_cubin *out,
                           char *err, size_t err_size)
{
    return compile(nv, source, arch, fmad, true, cache, out, err, err_size);
}

void cs_cubin_free(cs_cubin *bin)
{
    free(bin->data);
    memset(bin, 0, sizeof *bin);
}
