/* The cpu backend: generated C -> the system C compiler (its two halves at
 * once, then a link) -> a shared object, cached on disk by a hash of
 * everything that can change the object, and loaded with dlopen.
 *
 * Flags: -O3 -march=native for speed (for source that opens with
 * CS_ELEMENT_LOOPS_MARK, -O2 and the loop passes -O3 adds but -fpeel-loops:
 * as fast, in half the compile; -Og for a training rollout's kernel; see
 * opt_level); -ffp-contract=off so that
 * no FMA changes a rounding (f64 results must match the interpreter and Gymnasium to
 * the last bit); -fno-math-errno so sqrt stays an instruction (it changes no
 * result); -mprefer-vector-width=512 where the CPU has AVX-512 (GCC 12
 * prefers 256-bit vectors; 512 made Acrobot, MountainCar and Pendulum about
 * 1.3x faster on this project's Xeon, the same bits: lanes never mix; a no-op
 * without AVX-512). Never -ffast-math. -fno-tree-slp-vectorize and
 * -fno-tree-fre work around two GCC 12.2 miscompiles of generated code: SLP
 * dropped a (double)(float) rounding (0093f58), and FRE with AVX-512 gave a
 * wall of bricks built by broadcasting comparisons 8 bricks too many
 * (tests/envs/broadcast_wall.env).
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

/* The optimization level comes first (opt_level), then these. */
static const char *const cc_flags[] = {"-march=native", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math", "-fno-tree-slp-vectorize", "-fno-tree-fre",
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

/* The kernel's two halves (jit/emit.c): the rollout's entries (and the
 * restart, the block size) and the step's, each compiled to an object by a
 * compiler of its own at the same time, then linked into one shared object.
 * A half takes about as long as the other (CartPole 0.33 and 0.26 s of CPU,
 * Acrobot 0.76 and 0.79, against 0.55 and 1.46 for the whole source at
 * once), so two cores finish a cold compile in about half the time; the
 * link adds one start of the linker. */
enum { HALVES = 2 };
static const char *const half_define[HALVES] = {"-DCS_ONLY_ROLLOUT", "-DCS_ONLY_STEP"};

/* Runs `count` compilers at once (job j: `cc args[j]...`, stderr to log[j]),
 * each under a supervisor of its own (supervise.c), so that a time limit, an
 * interrupt or the program's death ends all of them, cc1, as and ld and
 * anything they started. The terminal's Ctrl-C does not reach them (process
 * groups of their own): *interrupt set (by the program's handler) stops
 * them; without that flag (a Python caller, whose handler runs only once the
 * call returns), a handled signal interrupting this thread's wait does:
 * CS_CPU_INTERRUPTED. With the flag, other signals (a timer's) leave the
 * compile be. Past the deadline (ms, cs_now_ms): CS_CPU_TIMEOUT. A job that
 * fails stops the others; *no_space as compiler_message says. */
static int run_compilers(const char *cc, const cs_build_dir *b, const char *const *const args[],
                         const char *const log[], int count, double deadline, double timeout_s,
                         const volatile sig_atomic_t *interrupt, char *err, size_t err_size, bool *no_space)
{
    char **env = compiler_environment(b->path);
    if (!env) {
        snprintf(err, err_size, "cannot run the C compiler '%s': %s", cc, strerror(ENOMEM));
        return -1;
    }
    cs_supervised sv[HALVES];
    int started = 0, rc = 0;
    for (; started < count && rc == 0; started++) {
        const char *argv[40];
        int n = 0;
        argv[n++] = cc;
        for (const char *const *a = args[started]; *a && n < 39; a++)
            argv[n++] = *a;
        argv[n] = NULL;
        if (cs_supervised_start(&sv[started], cc, (char *const *)argv, env, log[started], err, err_size) != 0)
            rc = -1;
    }
    free(env[0]);
    free(env);
    int running = started;
    /* Polled, not a blocking wait: a library may not take SIGCHLD or the
     * signal mask from its program. The naps grow to 20 ms. */
    long nap_us = 200;
    while (running > 0 && rc == 0) {
        for (int j = 0; j < started && rc == 0; j++) {
            if (sv[j].pid <= 0)
                continue;
            int status;
            int got = cs_supervised_poll(&sv[j], &status);
            if (got == 0)
                continue;
            if (got < 0) {
                snprintf(err, err_size, "waiting for the C compiler: %s", strerror(errno));
                rc = -1;
                break;
            }
            running--;
            if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM)) {
                snprintf(err, err_size, "interrupted while compiling (the C compiler got signal %d)", WTERMSIG(status));
                rc = CS_CPU_INTERRUPTED;
            } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                compiler_message(log[j], b->fd, err, err_size, no_space);
                rc = -1;
            }
        }
        if (rc || running == 0)
            break;
        if (interrupt && *interrupt) {
            snprintf(err, err_size, "interrupted while compiling");
            rc = CS_CPU_INTERRUPTED;
        } else if (cs_now_ms() > deadline) {
            snprintf(err, err_size, "the C compiler ran longer than its time limit of %s s: stopped (cc_timeout)",
                     cs_shortest(timeout_s, (char[CS_REPR_MAX]){0}));
            rc = CS_CPU_TIMEOUT;
        } else if (nanosleep(&(struct timespec){0, nap_us * 1000}, NULL) != 0 && errno == EINTR && !interrupt) {
            snprintf(err, err_size, "interrupted while compiling");
            rc = CS_CPU_INTERRUPTED;
        }
        nap_us = nap_us < 20000 ? nap_us * 2 : 20000;
    }
    for (int j = 0; j < started; j++)
        cs_supervised_stop(&sv[j]);   /* those still running; nothing for those done */
    return rc;
}

/* The optimization level of a source: -O3, or for one whose step loops
 * over array elements (CS_ELEMENT_LOOPS_MARK) -O2 with every loop pass
 * -O3 adds but -fpeel-loops (and without -O3's bigger inlining and
 * peeling limits). GCC 12 at -O3 took 1.54 CPU s on Breakout-MinAtar's
 * kernel, 0.73 at -O2, 0.87 so; -O2 alone ran Freeway-MinAtar at 0.83x
 * and Asterix at 0.90x of -O3, these flags as fast (1.00x, 1.00x, Breakout
 * 1.05x); the same bits everywhere. CartPole runs 0.95x at either: the
 * other programs keep -O3 (bench/RESULTS.md, section 12). */
static const char *const top_level[] = {"-O3", NULL};
static const char *const loop_level[] = {"-O2", "-fgcse-after-reload", "-fipa-cp-clone", "-floop-interchange",
                                         "-floop-unroll-and-jam", "-fpredictive-commoning", "-fsplit-loops",
                                         "-fsplit-paths", "-ftree-loop-distribution", "-ftree-partial-pre",
                                         "-funswitch-loops", "-fversion-loops-for-strides", NULL};
enum { LEVEL_FLAGS_MAX = sizeof loop_level / sizeof loop_level[0] - 1 };

/* A kernel compiled to run a few hundred steps a call (a training rollout):
 * -O3's compile is most of such a run. Since the policy's dense layers are
 * loops over their weights (agents/dense.c), -O1 keeps their running sums in
 * registers where -Og keeps them in memory: PPO on CartPole, one idle core,
 * an empty cache per seed, seeds 1-10, time to solve with the compile: -O1
 * 0.51-0.94 s (median 0.77; compile 0.35 s) against -Og 0.46-1.11 s (median
 * 0.84; compile 0.26 s). With scalar layers before that, -O3 took about 4 s
 * of CPU and -O0 ran 2.7 s. The bits are the same at every level: none
 * reassociates or contracts (-ffp-contract=off, no -ffast-math). */
static const char *const compile_level[] = {"-O1", NULL};

/* A tiered compile's first kernel (jit/tier.c): the level that reaches a
 * usable kernel first. GCC 12, the halves of CartPole's and Acrobot's
 * unroll-10 kernels pinned to one core (load 3.5): -Og 278+202 and 440+273
 * ms, -O0 332+438 and 729+200 (no inlining: far more code to emit), -O1
 * 489+297 and 915+555, -O3 1153+648 and 2301+2538. The bits are the same
 * (see above); cached under a key of its own (the level is hashed). */
static const char *const quick_level[] = {"-Og", NULL};

static const char *const *opt_level(const char *source, cs_cpu_opt opt)
{
    if (opt == CS_CPU_OPT_COMPILE)
        return compile_level;
    if (opt == CS_CPU_OPT_QUICK)
        return quick_level;
    return strncmp(source, CS_ELEMENT_LOOPS_MARK, strlen(CS_ELEMENT_LOOPS_MARK)) == 0 ? loop_level : top_level;
}

/* source (written at src) -> the halves' objects, at once -> obj, linked;
 * everything in b. */
static int build_kernel(const char *cc, const cs_build_dir *b, const char *src, const char *obj, double timeout_s,
                        const char *const *level, const volatile sig_atomic_t *interrupt, char *err, size_t err_size,
                        bool *no_space)
{
    enum { FLAGS = sizeof cc_flags / sizeof cc_flags[0] };
    char half_obj[HALVES][PATH_MAX], half_log[HALVES][PATH_MAX], link_log[PATH_MAX];
    const char *half_args[HALVES][LEVEL_FLAGS_MAX + FLAGS + 8], *log[HALVES];
    const char *const *args[HALVES];
    for (int h = 0; h < HALVES; h++) {
        snprintf(half_obj[h], sizeof half_obj[h], "%.4000s/half%d.o", b->path, h);
        snprintf(half_log[h], sizeof half_log[h], "%.4000s/cc%d.log", b->path, h);
        int n = 0;
        for (const char *const *l = level; *l; l++)
            half_args[h][n++] = *l;
        for (size_t k = 0; k < FLAGS; k++)
            half_args[h][n++] = cc_flags[k];
        half_args[h][n++] = half_define[h];
        half_args[h][n++] = "-c";
        half_args[h][n++] = "-o";
        half_args[h][n++] = half_obj[h];
        half_args[h][n++] = src;
        half_args[h][n] = NULL;
        args[h] = half_args[h];
        log[h] = half_log[h];
    }
    double deadline = timeout_s > 0 ? cs_now_ms() + 1000.0 * timeout_s : INFINITY;
    int rc = run_compilers(cc, b, args, log, HALVES, deadline, timeout_s, interrupt, err, err_size, no_space);
    if (rc)
        return rc;
    snprintf(link_log, sizeof link_log, "%.4000s/link.log", b->path);
    const char *link_args[] = {"-shared", "-o", obj, half_obj[0], half_obj[1], "-lm", NULL};
    const char *const *link[1] = {link_args};
    const char *link_logs[1] = {link_log};
    return run_compilers(cc, b, link, link_logs, 1, deadline, timeout_s, interrupt, err, err_size, no_space);
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
static int build_in(const cs_build_dir *b, const char *source, const char *cc_path, cs_cpu_opt opt, double timeout_s,
                    const volatile sig_atomic_t *interrupt, cs_cpu_kernel *out, char *err, size_t err_size,
                    bool *no_space)
{
    static const char *const files[] = {"kernel.c", "kernel.so"};
    char src[sizeof b->path + 16], obj[sizeof b->path + 16];
    snprintf(src, sizeof src, "%s/%s", b->path, files[0]);
    snprintf(obj, sizeof obj, "%s/%s", b->path, files[1]);
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
    int rc = build_kernel(cc_path, b, src, obj, timeout_s, opt_level(source, opt), interrupt, err, err_size, no_space);
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
    return cs_cpu_compile_opt(source, cc, CS_CPU_OPT_SPEED, timeout_s, interrupt, cache, out, err, err_size);
}

/* The compiler's path (cc, else $CC, else "cc", found on PATH) and the
 * cache key of source built at opt by it: everything that can change the
 * object. */
static int kernel_key(const char *source, const char *cc, cs_cpu_opt opt, char cc_path[PATH_MAX], char key[33],
                      char *err, size_t err_size)
{
    if (!cc || !*cc)
        cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
    struct stat st;
    if (!find_program(cc, cc_path, PATH_MAX) || stat(cc_path, &st) != 0) {
        snprintf(err, err_size, "no C compiler: '%s' was not found on PATH", cc);
        return CS_CPU_NO_CC;
    }
    cs_hash128 h = {0x63617274u, CS_LANES_ABI};
    char ident[PATH_MAX + 64];
    snprintf(ident, sizeof ident, "%s %lld %lld", cc_path, (long long)st.st_size, (long long)st.st_mtime);
    h = hash_str(h, ident);
    for (const char *const *l = opt_level(source, opt); *l; l++)
        h = hash_str(h, *l);
    for (size_t k = 0; k < sizeof cc_flags / sizeof cc_flags[0]; k++)
        h = hash_str(h, cc_flags[k]);
    for (int half = 0; half < HALVES; half++)
        h = hash_str(h, half_define[half]);
    h = hash_cpu(h);
    h = hash_str(h, source);
    cs_hash_hex(h, key);
    return 0;
}

/* 0 and the cached kernel of source at opt; 1 when there is none, with
 * cc_path and key for the build; CS_CPU_NO_CC. */
static int look_up(const char *source, const char *cc, cs_cpu_opt opt, cs_cache *cache, cs_cpu_kernel *out,
                   char cc_path[PATH_MAX], char key[33], char *err, size_t err_size)
{
    double start = cs_now_ms();
    memset(out, 0, sizeof *out);
    int rc = kernel_key(source, cc, opt, cc_path, key, err, err_size);
    if (rc)
        return rc;
    if (!cache->dir[0] || load_cached(cache, key, out, err, err_size) != 0) {
        err[0] = 0;
        return 1;
    }
    out->cache_hit = true;
    out->compile_ms = cs_now_ms() - start;
    return 0;
}

int cs_cpu_load_cached(const char *source, const char *cc, cs_cpu_opt opt, cs_cache *cache, cs_cpu_kernel *out,
                       char *err, size_t err_size)
{
    char cc_path[PATH_MAX], key[33];
    return look_up(source, cc, opt, cache, out, cc_path, key, err, err_size);
}

int cs_cpu_compile_opt(const char *source, const char *cc, cs_cpu_opt opt, double timeout_s,
                       const volatile sig_atomic_t *interrupt, cs_cache *cache, cs_cpu_kernel *out, char *err,
                       size_t err_size)
{
    double start = cs_now_ms();
    char cc_path[PATH_MAX], key[33];
    int rc = look_up(source, cc, opt, cache, out, cc_path, key, err, err_size);
    if (rc <= 0)
        return rc;

    /* Inside the cache, where the next run removes it if this one is killed;
     * without a cache, or when the cache's file system is full, in $TMPDIR. */
    cs_build_dir build;
    bool in_cache = cs_cache_build_dir(cache, &build) == 0;
    if (!in_cache && temporary_build_dir(&build, err, err_size) != 0)
        return -1;
    bool no_space, elsewhere = false;
    char said[512] = "";
    rc = build_in(&build, source, cc_path, opt, timeout_s, interrupt, out, err, err_size, &no_space);
    if (rc == CS_CPU_FAIL && in_cache && no_space) {
        snprintf(said, sizeof said, "%s", err);
        cs_build_dir_remove(&build);
        if (temporary_build_dir(&build, err, err_size) != 0)
            return -1;
        elsewhere = true;
        rc = build_in(&build, source, cc_path, opt, timeout_s, interrupt, out, err, err_size, &no_space);
    }
    /* Only what loaded is stored; a failed store runs what was built, uncached. */
    char path[PATH_MAX], obj[sizeof build.path + 16];
    snprintf(obj, sizeof obj, "%s/kernel.so", build.path);
    cs_cache_describe(cache, source, opt == CS_CPU_OPT_QUICK ? "cpu, quick -Og (tiered)" : "cpu");
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
