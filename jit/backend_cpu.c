/* The cpu backend: generated C -> the system C compiler -> a shared object,
 * cached on disk by a hash of everything that can change the object, and
 * loaded with dlopen.
 *
 * Flags: -O3 -march=native for speed; -ffp-contract=off so that no FMA
 * changes a rounding (f64 results must match the interpreter and Gymnasium to
 * the last bit); -fno-math-errno so sqrt stays an instruction (it changes no
 * result); -mprefer-vector-width=512 where the CPU has AVX-512 (GCC 12
 * prefers 256-bit vectors; 512 made Acrobot, MountainCar and Pendulum about
 * 1.3x faster on this project's Xeon, the same bits: lanes never mix; a no-op
 * without AVX-512). Never -ffast-math.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <math.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jit.h"
#include "repr.h"

extern char **environ;

static const char *const cc_flags[] = {"-O3", "-march=native", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math", "-fno-tree-slp-vectorize",
                                       "-fvect-cost-model=unlimited", "-mprefer-vector-width=512",
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

/* Below this many free bytes a build directory's file system counts as full:
 * a kernel's object and the compiler's temporaries take more. */
#define FULL_BELOW_BYTES (1ull << 20)

/* The free bytes of the file system holding the directory open as fd; -1
 * when it cannot be told. */
static long long free_bytes(int fd)
{
    struct statvfs v;
    return fstatvfs(fd, &v) == 0 ? (long long)v.f_bavail * (long long)v.f_frsize : -1;
}

/* The compiler's complaint as the message; when it said nothing (it could
 * not even write its log) and the build directory's file system is full,
 * that is the reason, and *no_space is set. */
static void compiler_message(const char *log_path, int dir_fd, char *err, size_t err_size, bool *no_space)
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
    long long left = free_bytes(dir_fd);
    *no_space = left >= 0 && (unsigned long long)left < FULL_BELOW_BYTES;
    if (!buf[0] && *no_space)
        snprintf(err, err_size, "the C compiler failed on the generated kernel, saying nothing: the file system of "
                 "its build directory is full (%lld bytes free)", left);
    else
        snprintf(err, err_size, "the C compiler failed on the generated kernel: %.480s", buf[0] ? buf : "(no output)");
}

/* The program's environment with TMPDIR set to the build directory, so that
 * the compiler's own temporary files go where they are cleaned up. */
static char **compiler_environment(const char *tmpdir)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = malloc((n + 2) * sizeof *env);
    size_t len = strlen(tmpdir) + sizeof "TMPDIR=";
    char *var = malloc(len);
    if (!env || !var) {
        free(env);
        free(var);
        return NULL;
    }
    snprintf(var, len, "TMPDIR=%s", tmpdir);
    size_t m = 0;
    env[m++] = var;
    for (size_t k = 0; k < n; k++)
        if (strncmp(environ[k], "TMPDIR=", 7) != 0)
            env[m++] = environ[k];
    env[m] = NULL;
    return env;
}

/* Runs the compiler under a supervisor (supervise.c), so that a time limit,
 * an interrupt or the program's death ends all of it, cc1, as and ld and
 * anything they started. The terminal's Ctrl-C does not reach it (a process
 * group of its own): *interrupt set (by the program's handler) stops it;
 * without that flag (a Python caller, whose handler runs only once the call
 * returns), a handled signal interrupting this thread's wait does:
 * CS_CPU_INTERRUPTED. With the flag, other signals (a timer's) leave the
 * compile be. Past timeout_s: CS_CPU_TIMEOUT. */
static int run_compiler(const char *cc, const cs_build_dir *b, const char *src, const char *obj, const char *log,
                        double timeout_s, const volatile sig_atomic_t *interrupt, char *err, size_t err_size,
                        bool *no_space)
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
    char **env = compiler_environment(b->path);
    if (!env) {
        snprintf(err, err_size, "cannot run the C compiler '%s': %s", cc, strerror(ENOMEM));
        return -1;
    }
    cs_supervised sv;
    int started = cs_supervised_start(&sv, cc, (char *const *)argv, env, log, err, err_size);
    free(env[0]);
    free(env);
    if (started != 0)
        return -1;
    /* Polled, not a blocking wait: a library may not take SIGCHLD or the
     * signal mask from its program. The naps grow to 20 ms. */
    double deadline = timeout_s > 0 ? cs_now_ms() + 1000.0 * timeout_s : INFINITY;
    long nap_us = 200;
    int status;
    for (;;) {
        int got = cs_supervised_poll(&sv, &status);
        if (got == 1)
            break;
        if (got < 0) {
            snprintf(err, err_size, "waiting for the C compiler: %s", strerror(errno));
            cs_supervised_stop(&sv);
            return -1;
        }
        if (interrupt && *interrupt) {
            cs_supervised_stop(&sv);
            snprintf(err, err_size, "interrupted while compiling");
            return CS_CPU_INTERRUPTED;
        }
        if (cs_now_ms() > deadline) {
            cs_supervised_stop(&sv);
            snprintf(err, err_size, "the C compiler ran longer than its time limit of %s s: stopped (cc_timeout)",
                     cs_shortest(timeout_s, (char[CS_REPR_MAX]){0}));
            return CS_CPU_TIMEOUT;
        }
        if (nanosleep(&(struct timespec){0, nap_us * 1000}, NULL) != 0 && errno == EINTR && !interrupt) {
            cs_supervised_stop(&sv);
            snprintf(err, err_size, "interrupted while compiling");
            return CS_CPU_INTERRUPTED;
        }
        nap_us = nap_us < 20000 ? nap_us * 2 : 20000;
    }
    if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM)) {
        snprintf(err, err_size, "interrupted while compiling (the C compiler got signal %d)", WTERMSIG(status));
        return CS_CPU_INTERRUPTED;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        compiler_message(log, b->fd, err, err_size, no_space);
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

/* The device and inode of the file a loaded object was mapped from: the
 * line of /proc/self/maps whose range holds its dynamic section. */
static bool loaded_file_id(void *handle, dev_t *dev, ino_t *ino)
{
    struct link_map *lm = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
        return false;
    uintptr_t at = (uintptr_t)lm->l_ld;
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return false;
    char line[4352];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long long lo, hi, inode;
        unsigned major, minor;
        if (sscanf(line, "%llx-%llx %*s %*x %x:%x %llu", &lo, &hi, &major, &minor, &inode) == 5 && lo <= at &&
            at < hi) {
            *dev = makedev(major, minor);
            *ino = (ino_t)inode;
            found = true;
        }
    }
    fclose(f);
    return found;
}

/* glibc's dlopen returns an object already loaded under the same name
 * without opening the file, so "/proc/self/fd/N" would give back the kernel
 * an open handle loaded through an earlier descriptor N, whatever N is now.
 * Under another name it returns an object already loaded from the same file
 * (the same device and inode), which is this kernel: then that name is fine,
 * and a second handle of the same kernel shares it. Checked against the
 * maps rather than trusted from the name: a name glibc once matched by file
 * stays an alias of that object after N is reused for another file.
 * Duplicates fd until its name is free or names this very file; *spare
 * then holds the duplicates to close after the load (at most one per
 * kernel loaded from another file). */
static int unloaded_fd_name(int fd, char path[PATH_MAX], int spare[], int max_spare, int *n_spare)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -1;
    for (*n_spare = 0;; ) {
        snprintf(path, PATH_MAX, "/proc/self/fd/%d", fd);
        void *loaded = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
        if (!loaded)
            return fd;
        dev_t dev;
        ino_t ino;
        bool same = loaded_file_id(loaded, &dev, &ino) && dev == st.st_dev && ino == st.st_ino;
        dlclose(loaded);
        if (same)
            return fd;
        if (*n_spare == max_spare || (fd = dup(fd)) < 0)
            return -1;
        spare[(*n_spare)++] = fd;
    }
}

/* Loads the object open as fd (closed here) through its name in
 * /proc/self/fd, so that nothing swapped in under its path after it was
 * opened is loaded; where /proc is missing, through `path`. */
static int load_fd(int fd, const char *path, cs_cpu_kernel *k, char *err, size_t err_size)
{
    char name[PATH_MAX];
    int spare[64], n_spare = 0;
    int rc;
    snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
    if (access(name, R_OK) == 0) {
        rc = unloaded_fd_name(fd, name, spare, 64, &n_spare) >= 0 ? load(name, k, err, err_size) : -1;
        if (rc != 0 && !err[0])
            snprintf(err, err_size, "cannot load the compiled kernel: too many kernels loaded under its name");
    } else {
        rc = path ? load(path, k, err, err_size) : -1;
    }
    while (n_spare > 0)
        close(spare[--n_spare]);
    close(fd);
    return rc;
}

/* A cache entry, through the descriptor its lookup verified. */
static int load_cached(cs_cache *cache, const char *key, cs_cpu_kernel *k, char *err, size_t err_size)
{
    int fd = cs_cache_open_entry(cache, key, ".so");
    if (fd < 0)
        return -1;
    char path[PATH_MAX];
    bool named = cache->dir[0] && snprintf(path, sizeof path, "%s/%s.so", cache->dir, key) < (int)sizeof path;
    return load_fd(fd, named ? path : NULL, k, err, err_size);
}

/* A build directory in $TMPDIR (else /tmp), after removing those of runs
 * that were killed there. */
static int temporary_build_dir(cs_build_dir *b, char *err, size_t err_size)
{
    const char *tmp = getenv("TMPDIR");
    tmp = tmp && *tmp ? tmp : "/tmp";
    int parent = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (parent >= 0)
        cs_build_dir_sweep(parent, "cartsim-build-");   /* those of killed runs */
    int made = parent < 0 ? -1 : cs_build_dir_make(b, parent, tmp, "cartsim-build-");
    int e = errno;
    if (parent >= 0)
        close(parent);
    if (made != 0)
        snprintf(err, err_size, "cannot make a build directory in %s: %s", tmp, strerror(e));
    return made;
}

/* One build in b: the source written, the compiler run, the object loaded
 * (a compiler that says it succeeded but wrote no loadable object fails
 * here, before anything is stored). *no_space: it failed for want of room
 * in b, and another directory may do. */
static int build_in(const cs_build_dir *b, const char *source, const char *cc_path, double timeout_s,
                    const volatile sig_atomic_t *interrupt, cs_cpu_kernel *out, char *err, size_t err_size,
                    bool *no_space)
{
    static const char *const files[] = {"kernel.c", "kernel.so", "cc.log"};
    char src[sizeof b->path + 16], obj[sizeof b->path + 16], log[sizeof b->path + 16];
    snprintf(src, sizeof src, "%s/%s", b->path, files[0]);
    snprintf(obj, sizeof obj, "%s/%s", b->path, files[1]);
    snprintf(log, sizeof log, "%s/%s", b->path, files[2]);
    *no_space = false;
    cs_output o;
    char why[512] = "";
    if (cs_output_begin_at(&o, b->fd, files[0], src, 0600, why, sizeof why) != CS_OK ||
        cs_output_write(&o, source, strlen(source)) != CS_OK || cs_output_commit(&o, why, sizeof why) != CS_OK) {
        if (!why[0])
            snprintf(why, sizeof why, "%s", strerror(o.error));
        cs_output_abort(&o);
        snprintf(err, err_size, "cannot write the kernel source: %s", why);
        *no_space = true;
        return -1;
    }
    int rc = run_compiler(cc_path, b, src, obj, log, timeout_s, interrupt, err, err_size, no_space);
    if (rc != 0)
        return rc;
    int fd = openat(b->fd, files[1], O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, err_size, "the C compiler wrote no kernel: %s", strerror(errno));
        return -1;
    }
    err[0] = 0;
    return load_fd(fd, obj, out, err, err_size);
}

int cs_cpu_compile(const char *source, const char *cc, double timeout_s, const volatile sig_atomic_t *interrupt,
                   cs_cache *cache, cs_cpu_kernel *out, char *err, size_t err_size)
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

    if (cache->dir[0] && load_cached(cache, key, out, err, err_size) == 0) {
        out->cache_hit = true;
        out->compile_ms = cs_now_ms() - start;
        return 0;
    }

    /* Inside the cache, where the next run removes it if this one is killed;
     * without a cache, or when the cache's file system is full, in $TMPDIR. */
    cs_build_dir build;
    bool in_cache = cs_cache_build_dir(cache, &build) == 0;
    if (!in_cache && temporary_build_dir(&build, err, err_size) != 0)
        return -1;
    bool no_space, elsewhere = false;
    char said[512] = "";
    int rc = build_in(&build, source, cc_path, timeout_s, interrupt, out, err, err_size, &no_space);
    if (rc == CS_CPU_FAIL && in_cache && no_space) {
        snprintf(said, sizeof said, "%s", err);
        cs_build_dir_remove(&build);
        if (temporary_build_dir(&build, err, err_size) != 0)
            return -1;
        elsewhere = true;
        rc = build_in(&build, source, cc_path, timeout_s, interrupt, out, err, err_size, &no_space);
    }
    /* Only what loaded is stored; a failed store runs what was built, uncached. */
    char path[PATH_MAX], obj[sizeof build.path + 16];
    snprintf(obj, sizeof obj, "%s/kernel.so", build.path);
    cs_cache_describe(cache, source, "cpu");
    bool stored = rc == 0 && cache->dir[0] && cs_cache_store(cache, key, ".so", obj, path, sizeof path) == 0;
    if (rc == 0 && elsewhere)
        snprintf(cache->warning, sizeof cache->warning,
                 "no room to build in the kernel cache %.200s (%.200s): built in a temporary directory%s", cache->dir,
                 said, stored ? "" : ", running uncached");
    cs_build_dir_remove(&build);
    out->compile_ms = cs_now_ms() - start;
    return rc;
}

void cs_cpu_unload(cs_cpu_kernel *k)
{
    if (k->handle)
        dlclose(k->handle);
    memset(k, 0, sizeof *k);
}
