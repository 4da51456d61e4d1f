/* The cpu backend: generated C -> the system C compiler -> a shared object,
 * cached on disk by a hash of everything that can change the object, and
 * loaded with dlopen.
 *
 * Flags: -O3 -march=native for speed; -ffp-contract=off so that no FMA
 * changes a rounding (f64 results must match the interpreter and Gymnasium to
 * the last bit); -fno-math-errno so sqrt stays an instruction (it changes no
 * result). Never -ffast-math.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jit.h"

extern char **environ;

static const char *const cc_flags[] = {"-O3", "-march=native", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math", "-fno-tree-slp-vectorize",
                                       "-fvect-cost-model=unlimited",
                                       "-fPIC", "-shared", "-std=c11", "-w"};

/* The compiler's path as found on PATH, so its identity (path, size, mtime)
 * can enter the cache key without running it. */
static bool find_program(const char *name, char *path, size_t size)
{
    if (strchr(name, '/')) {
        snprintf(path, size, "%s", name);
        return access(path, X_OK) == 0;
    }
    const char *env = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s", env ? env : "/usr/local/bin:/usr/bin:/bin");
    for (char *save = NULL, *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        if (snprintf(path, size, "%s/%s", *dir ? dir : ".", name) >= (int)size)
            continue;
        if (access(path, X_OK) == 0)
            return true;
    }
    return false;
}

static cs_hash128 hash_str(cs_hash128 h, const char *s) { return cs_hash_bytes(s, strlen(s) + 1, h); }

/* The host CPU model: -march=native makes the object specific to it. */
static cs_hash128 hash_cpu(cs_hash128 h)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return h;
    char line[1024];
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) || !strncmp(line, "flags", 5)) {
            h = hash_str(h, line);
            if (line[0] == 'f')
                break;
        }
    fclose(f);
    return h;
}

static void compiler_message(const char *log_path, char *err, size_t err_size)
{
    char buf[600] = "";
    FILE *f = fopen(log_path, "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        fclose(f);
    }
    for (char *c = buf; *c; c++)
        if (*c == '\n')
            *c = ' ';
    snprintf(err, err_size, "the C compiler failed on the generated kernel: %.480s", buf[0] ? buf : "(no output)");
}

static int run_compiler(const char *cc, const char *src, const char *obj, const char *log, char *err, size_t err_size)
{
    const char *argv[32];
    int n = 0;
    argv[n++] = cc;
    for (size_t k = 0; k < sizeof cc_flags / sizeof cc_flags[0]; k++)
        argv[n++] = cc_flags[k];
    argv[n++] = "-o";
    argv[n++] = obj;
    argv[n++] = src;
    argv[n++] = "-lm";
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int rc = posix_spawnp(&pid, cc, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        snprintf(err, err_size, "cannot run the C compiler '%s': %s", cc, strerror(rc));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(err, err_size, "waiting for the C compiler: %s", strerror(errno));
            return -1;
        }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        compiler_message(log, err, err_size);
        return -1;
    }
    return 0;
}

static int load(const char *path, cs_cpu_kernel *k, char *err, size_t err_size)
{
    k->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!k->handle) {
        snprintf(err, err_size, "cannot load the compiled kernel: %s", dlerror());
        return -1;
    }
    k->restart = (cs_entry)dlsym(k->handle, "cs_kernel_restart");
    k->step = (cs_entry)dlsym(k->handle, "cs_kernel_step");
    k->rollout = (cs_entry)dlsym(k->handle, "cs_kernel_rollout");
    unsigned long long (*block_bytes)(void) = (unsigned long long (*)(void))dlsym(k->handle, "cs_kernel_block_bytes");
    k->block_bytes = block_bytes ? block_bytes() : 0;
    if (!k->restart || !k->step || !k->rollout || !k->block_bytes) {
        snprintf(err, err_size, "the compiled kernel lacks its entry points");
        dlclose(k->handle);
        k->handle = NULL;
        return -1;
    }
    return 0;
}

static void remove_dir(const char *dir, const char *const *files, int n)
{
    char path[PATH_MAX + 32];
    for (int k = 0; k < n; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        unlink(path);
    }
    rmdir(dir);
}

int cs_cpu_compile(const char *source, const char *cc, cs_cache *cache, cs_cpu_kernel *out, char *err, size_t err_size)
{
    double start = cs_now_ms();
    memset(out, 0, sizeof *out);
    if (!cc || !*cc)
        cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
    char cc_path[PATH_MAX];
    struct stat st;
    if (!find_program(cc, cc_path, sizeof cc_path) || stat(cc_path, &st) != 0) {
        snprintf(err, err_size, "no C compiler: '%s' was not found on PATH", cc);
        return CS_CPU_NO_CC;
    }

    cs_hash128 h = {0x63617274u, CS_LANES_ABI};
    char ident[PATH_MAX + 64];
    snprintf(ident, sizeof ident, "%s %lld %lld", cc_path, (long long)st.st_size, (long long)st.st_mtime);
    h = hash_str(h, ident);
    for (size_t k = 0; k < sizeof cc_flags / sizeof cc_flags[0]; k++)
        h = hash_str(h, cc_flags[k]);
    h = hash_cpu(h);
    h = hash_str(h, source);
    char key[33];
    cs_hash_hex(h, key);

    char path[PATH_MAX];
    if (cache->dir[0] && cs_cache_lookup(cache, key, ".so", path, sizeof path) == 1 &&
        load(path, out, err, err_size) == 0) {
        out->cache_hit = true;
        out->compile_ms = cs_now_ms() - start;
        return 0;
    }

    const char *tmp = getenv("TMPDIR");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/cartsim-build-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        snprintf(err, err_size, "cannot make a build directory in %s: %s", tmp && *tmp ? tmp : "/tmp", strerror(errno));
        return -1;
    }
    static const char *const files[] = {"kernel.c", "kernel.so", "cc.log"};
    char src[PATH_MAX + 32], obj[PATH_MAX + 32], log[PATH_MAX + 32];
    snprintf(src, sizeof src, "%s/%s", dir, files[0]);
    snprintf(obj, sizeof obj, "%s/%s", dir, files[1]);
    snprintf(log, sizeof log, "%s/%s", dir, files[2]);
    FILE *f = fopen(src, "w");
    int rc = -1;
    if (!f || fputs(source, f) < 0 || fclose(f) != 0) {
        if (f)
            fclose(f);
        snprintf(err, err_size, "cannot write the kernel source: %s", strerror(errno));
        goto done;
    }
    if (run_compiler(cc_path, src, obj, log, err, err_size))
        goto done;
    /* A failed compile is never cached; a failed store runs from the build. */
    const char *from = obj;
    if (cache->dir[0] && cs_cache_store(cache, key, ".so", obj, path, sizeof path) == 0)
        from = path;
    rc = load(from, out, err, err_size);
done:
    remove_dir(dir, files, 3);
    out->compile_ms = cs_now_ms() - start;
    return rc;
}

void cs_cpu_unload(cs_cpu_kernel *k)
{
    if (k->handle)
        dlclose(k->handle);
    memset(k, 0, sizeof *k);
}
