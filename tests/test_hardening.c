/* Hardening (docs/hardening.md): a kernel cache that cannot be poisoned, seen
 * through the library; numeric faults caught per environment; batches and
 * counters beyond what fits refused up front; Ctrl-C during a long run.
 *
 * Each test works in a fresh directory from mkdtemp (its cache, its TMPDIR)
 * and removes it. No test here sets .timeout: Criterion 2.4.1's runner leaks
 * a watchdog entry (48 bytes, LeakSanitizer fails `make asan`) when a test
 * with a timeout outlasts others that have one.
 *
 * Environment: CARTSIM_ROOT (the repository), CARTSIM_BIN (the program), as
 * for tests/test_cli.c. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cartsim.h"
#include "cli_test.h"

extern char **environ;

static char root[256];

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/cartsim-hardening-XXXXXX");
    cli_test_scratch(root);
}

static void teardown(void)
{
    if (root[0])
        cli_test_remove_tree(root);
    root[0] = 0;
}

TestSuite(hardening, .init = setup, .fini = teardown);

static void in_root(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", root, name);
}

static void fixture_env(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/tests/envs/%s", cli_test_root(), name);
}

/* Files in dir, without . and .. */
static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* ---- the kernel cache, through cs_env_open --------------------------- */

typedef struct {
    bool hit;
    char notice[512];
    uint64_t checksum;
} run_result;

/* Opens cartpole on the cpu backend with the cache in `cache`, runs 200
 * steps from seed 5: what came from the cache, what was said, what it computed. */
static run_result run_cached(const char *cache)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.num_envs = 16;
    cfg.backend = CS_BACKEND_CPU;
    cfg.dtype = CS_DTYPE_F64;
    cfg.cache_dir = cache;
    cs_env *env = NULL;
    cs_status s = cs_env_open(&cfg, &env);
    cr_assert_eq(s, CS_OK, "open: %s", cs_env_error(env));
    cs_env_info info;
    cr_assert_eq(cs_env_get_info(env, &info), CS_OK);
    run_result r = {.hit = info.cache_hit};
    snprintf(r.notice, sizeof r.notice, "%s", info.notice);
    cs_rollout_stats st;
    cr_assert_eq(cs_env_reset(env, 5), CS_OK);
    cr_assert_eq(cs_env_rollout(env, 200, &st), CS_OK, "%s", cs_env_error(env));
    r.checksum = st.checksum;
    cs_env_close(env);
    return r;
}

/* The one .so entry of a cache directory. */
static void find_entry(const char *cache, char *entry, size_t size)
{
    DIR *d = opendir(cache);
    cr_assert_not_null(d);
    struct dirent *e;
    entry[0] = 0;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 3 && strcmp(e->d_name + n - 3, ".so") == 0) {
            cr_assert_eq(entry[0], 0, "one entry only");
            snprintf(entry, size, "%s/%s", cache, e->d_name);
        }
    }
    closedir(d);
    cr_assert_neq(entry[0], 0, "no entry in %s", cache);
}

/* An executable script (a stand-in compiler) from a printf format. */
static void write_script(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void write_script(const char *path, const char *fmt, ...)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(chmod(path, 0700), 0);
}

static void flip_byte(const char *path, long at)
{
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f);
    cr_assert_eq(fseek(f, at, SEEK_SET), 0);
    int c = fgetc(f);
    cr_assert_neq(c, EOF);
    cr_assert_eq(fseek(f, at, SEEK_SET), 0);
    fputc(c ^ 0x5a, f);
    cr_assert_eq(fclose(f), 0);
}

/* Ways an entry on disk can go bad; each must be caught, rebuilt, and run. */
enum {
    TRUNCATE, TRUNCATE_EMPTY, FLIP_HEADER, FLIP_CODE, GARBAGE_META, NO_META, FOREIGN_OBJECT, SYMLINK, DIRECTORY,
    FAULT_COUNT
};
static const char *const fault_names[FAULT_COUNT] = {
    "truncated", "emptied", "ELF header flipped", "code byte flipped", "metadata garbage", "metadata missing",
    "another valid object in its place", "a symlink to another object", "a directory in its place"};

static void apply_fault(int fault, const char *entry)
{
    char meta[4200], other[600];
    snprintf(meta, sizeof meta, "%s.meta", entry);
    struct stat st;
    cr_assert_eq(stat(entry, &st), 0);
    switch (fault) {
    case TRUNCATE:
        cr_assert_eq(truncate(entry, st.st_size / 2), 0);
        break;
    case TRUNCATE_EMPTY:
        cr_assert_eq(truncate(entry, 0), 0);
        break;
    case FLIP_HEADER:
        flip_byte(entry, 4);
        break;
    case FLIP_CODE:
        flip_byte(entry, (long)st.st_size / 2);
        break;
    case GARBAGE_META:
        cli_test_write_file(meta, "cartsim-cache 1\nentry x\n", 24);
        break;
    case NO_META:
        cr_assert_eq(unlink(meta), 0);
        break;
    case FOREIGN_OBJECT:
    case SYMLINK: {
        /* A shared object that would load fine, but is not this kernel. */
        snprintf(other, sizeof other, "%s/other.so", root);
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "printf 'int cs_kernel_step;\\n' | cc -shared -fPIC -x c -o %s - 2>/dev/null", other);
        cr_assert_eq(system(cmd), 0);
        cr_assert_eq(unlink(entry), 0);
        if (fault == SYMLINK) {
            cr_assert_eq(symlink(other, entry), 0);
        } else {
            snprintf(cmd, sizeof cmd, "cp %s %s", other, entry);
            cr_assert_eq(system(cmd), 0);
        }
        break;
    }
    case DIRECTORY:
        cr_assert_eq(unlink(entry), 0);
        cr_assert_eq(mkdir(entry, 0700), 0);
        break;
    }
}

Test(hardening, every_corrupt_cache_entry_is_rebuilt_never_loaded)
{
    char cache[512];
    in_root(cache, sizeof cache, "cache");
    run_result first = run_cached(cache);
    cr_assert_not(first.hit, "a fresh cache misses");
    cr_assert_str_eq(first.notice, "");
    run_result again = run_cached(cache);
    cr_assert(again.hit, "the second open hits");
    cr_assert_eq(again.checksum, first.checksum);

    for (int fault = 0; fault < FAULT_COUNT; fault++) {
        char entry[4096];
        find_entry(cache, entry, sizeof entry);
        apply_fault(fault, entry);
        run_result r = run_cached(cache);
        cr_assert_not(r.hit, "%s: loaded from the cache", fault_names[fault]);
        cr_assert_eq(r.checksum, first.checksum, "%s: the rebuilt kernel computes something else", fault_names[fault]);
        if (fault == DIRECTORY) {
            /* Cannot be removed (not ours to delete recursively): the run
             * goes on uncached, and says so. */
            cr_assert(strstr(r.notice, "uncached") || strstr(r.notice, "corrupt"), "%s: notice '%s'",
                      fault_names[fault], r.notice);
            char cmd[4200];
            snprintf(cmd, sizeof cmd, "rm -rf %s", entry);
            cr_assert_eq(system(cmd), 0);
            r = run_cached(cache);
        } else {
            cr_assert(strstr(r.notice, "corrupt"), "%s: notice '%s'", fault_names[fault], r.notice);
        }
        run_result after = run_cached(cache);
        cr_assert(after.hit, "%s: the rebuilt entry is cached", fault_names[fault]);
        cr_assert_eq(after.checksum, first.checksum);
        cr_assert_str_eq(after.notice, "");
    }
    cr_assert_eq(count_files(cache), 2, "one entry and its metadata at the end");
    if (getenv("CARTSIM_REPORT"))
        fprintf(stderr, "cache faults: %d kinds tried through the library, all rebuilt\n", FAULT_COUNT);
}

/* A kernel already loaded by a live handle (the common Python loop: an
 * array of the last environment still alive when the next one is made) is a
 * cache hit for every further handle, never compiled again (issue 32, 8):
 * the probe took every descriptor of the loaded file for another object,
 * gave up after 64, and recompiled, rewriting the entry. */
Test(hardening, further_handles_of_a_loaded_kernel_are_cache_hits)
{
    enum { HANDLES = 70 };
    char cache[512], entry[4096];
    in_root(cache, sizeof cache, "cache");
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.num_envs = 8;
    cfg.threads = 1;
    cfg.backend = CS_BACKEND_CPU;
    cfg.cache_dir = cache;
    static cs_env *envs[HANDLES];
    cs_env_info info;
    ino_t inode = 0;
    double first_ms = 0, worst_ms = 0;
    for (int k = 0; k < HANDLES; k++) {
        cr_assert_eq(cs_env_open(&cfg, &envs[k]), CS_OK, "%s", cs_env_error(envs[k]));
        cr_assert_eq(cs_env_get_info(envs[k], &info), CS_OK);
        if (k == 0) {
            find_entry(cache, entry, sizeof entry);
            struct stat st;
            cr_assert_eq(stat(entry, &st), 0);
            inode = st.st_ino;
            first_ms = info.compile_ms;
            continue;
        }
        cr_expect(info.cache_hit, "handle %d compiled again (%.0f ms; the first took %.0f ms)", k, info.compile_ms,
                  first_ms);
        worst_ms = info.compile_ms > worst_ms ? info.compile_ms : worst_ms;
        if (!info.cache_hit)
            break;
    }
    struct stat st;
    cr_assert_eq(stat(entry, &st), 0);
    cr_expect_eq(st.st_ino, inode, "the cache entry was written again");
    /* every handle runs its own copy of the same kernel */
    cs_rollout_stats a, b;
    cr_assert_eq(cs_env_reset(envs[0], 1), CS_OK);
    cr_assert_eq(cs_env_rollout(envs[0], 50, &a), CS_OK);
    cr_assert_eq(cs_env_reset(envs[HANDLES - 1], 1), CS_OK);
    cr_assert_eq(cs_env_rollout(envs[HANDLES - 1], 50, &b), CS_OK);
    cr_expect_eq(a.checksum, b.checksum);
    /* another kernel, whose entry's descriptor may well reuse the number the
     * loaded one was loaded through: it must run itself, not that one */
    cs_env *other;
    cfg.dtype = CS_DTYPE_F64;
    cr_assert_eq(cs_env_open(&cfg, &other), CS_OK, "%s", cs_env_error(other));
    cr_assert_eq(cs_env_reset(other, 1), CS_OK);
    cr_assert_eq(cs_env_rollout(other, 50, &b), CS_OK);
    cs_env_close(other);
    cfg.backend = CS_BACKEND_INTERP;
    cr_assert_eq(cs_env_open(&cfg, &other), CS_OK, "%s", cs_env_error(other));
    cr_assert_eq(cs_env_reset(other, 1), CS_OK);
    cr_assert_eq(cs_env_rollout(other, 50, &a), CS_OK);
    cs_env_close(other);
    cr_expect_eq(b.checksum, a.checksum, "the f64 kernel ran another one");
    for (int k = 0; k < HANDLES; k++)
        cs_env_close(envs[k]);
    if (getenv("CARTSIM_REPORT"))
        fprintf(stderr, "open of a loaded kernel: first %.1f ms, further ones at most %.1f ms\n", first_ms, worst_ms);
}

/* A store that fails (a read-only directory; one that vanished) runs the
 * kernel from its build directory: no cache, a notice, the same results. */
Test(hardening, an_unwritable_cache_degrades_to_no_cache_with_a_notice)
{
    char cache[512], reference[512];
    in_root(cache, sizeof cache, "cache");
    in_root(reference, sizeof reference, "reference");
    uint64_t want = run_cached(reference).checksum;
    cr_assert_eq(mkdir(cache, 0700), 0);
    if (geteuid() != 0) {
        cr_assert_eq(chmod(cache, 0500), 0);
        run_result r = run_cached(cache);
        chmod(cache, 0700);
        cr_expect_not(r.hit);
        cr_expect(strstr(r.notice, "uncached"), "read-only: notice '%s'", r.notice);
        cr_expect_eq(r.checksum, want);
        cr_expect_eq(count_files(cache), 0);
    }
}

/* The cache directory swapped for a file while the compiler runs (a wrapper
 * does it, after the first of the compiler's runs: a kernel's two halves
 * and their link): the store goes on in the directory that was checked
 * (opened once, entries relative to it), never through the name. */
Test(hardening, a_cache_directory_swapped_mid_compile_changes_nothing)
{
    char cache[512], moved[512], reference[512];
    in_root(cache, sizeof cache, "cache");
    in_root(moved, sizeof moved, "cache.moved");
    in_root(reference, sizeof reference, "reference");
    uint64_t want = run_cached(reference).checksum;
    cr_assert_eq(mkdir(cache, 0700), 0);
    char wrapper[512];
    in_root(wrapper, sizeof wrapper, "cc-then-swap-cache");
    /* swapped once, by whichever of the compiler's three runs (two halves, a link) finds it first */
    write_script(wrapper, "#!/bin/sh\ncc \"$@\" || exit 1\nif [ -d '%s' ]; then mv '%s' '%s' && touch '%s'; fi\nexit 0\n", cache,
                 cache, moved, cache);
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.num_envs = 16;
    cfg.backend = CS_BACKEND_CPU;
    cfg.dtype = CS_DTYPE_F64;
    cfg.cache_dir = cache;
    cfg.cc = wrapper;
    cs_env *env = NULL;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_OK, "%s", cs_env_error(env));
    cs_env_info info;
    cr_assert_eq(cs_env_get_info(env, &info), CS_OK);
    cr_expect_not(info.cache_hit);
    cs_rollout_stats st;
    cr_assert_eq(cs_env_reset(env, 5), CS_OK);
    cr_assert_eq(cs_env_rollout(env, 200, &st), CS_OK);
    cr_expect_eq(st.checksum, want);
    cs_env_close(env);
    struct stat sb;
    cr_expect(stat(cache, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0, "the wrapper ran; the file is untouched");
    cr_expect_eq(count_files(moved), 2, "the entry and its metadata went to the directory that was checked");
}

/* ---- numeric faults ---------------------------------------------------- */

/* tests/envs/blowup.env doubles its state from [1, 2): infinite on step 128
 * in f32 and 1024 in f64, so each environment restarts every 128 (1024) steps. */
static cs_rollout_stats blowup(cs_backend b, cs_dtype d, int64_t n, int64_t steps, int64_t chunk)
{
    char path[4096];
    fixture_env(path, sizeof path, "blowup.env");
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = path;
    cfg.num_envs = n;
    cfg.backend = b;
    cfg.dtype = d;
    char cache[512];
    in_root(cache, sizeof cache, "cache");
    cfg.cache_dir = cache;
    cs_env *env = NULL;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_OK, "%s", cs_env_error(env));
    cr_assert_eq(cs_env_reset(env, 11), CS_OK);
    cs_rollout_stats total = {0}, s;
    for (int64_t done = 0; done < steps; done += chunk) {
        cr_assert_eq(cs_env_rollout(env, chunk < steps - done ? chunk : steps - done, &s), CS_OK);
        total.nonfinite += s.nonfinite;
        total.episodes += s.episodes;
        total.steps += s.steps;
    }
    double state[64];
    cr_assert_eq(cs_env_get_state(env, state), CS_OK);
    for (int64_t i = 0; i < n; i++)
        cr_assert(isfinite(state[i]), "environment %lld holds %g after the rollout", (long long)i, state[i]);
    total.checksum = s.checksum;
    cs_env_close(env);
    return total;
}

Test(hardening, an_infinite_state_restarts_its_environment_and_is_counted)
{
    const cs_backend backends[] = {CS_BACKEND_INTERP, CS_BACKEND_CPU};
    for (int b = 0; b < 2; b++) {
        cs_rollout_stats f32 = blowup(backends[b], CS_DTYPE_F32, 37, 1000, 1000);
        cr_expect_eq(f32.nonfinite, 37 * (1000 / 128), "%s f32: %lld", cs_backend_name(backends[b]),
                     (long long)f32.nonfinite);
        cr_expect_eq(f32.episodes, 0, "a restart for a fault is no finished episode");
        cs_rollout_stats chunked = blowup(backends[b], CS_DTYPE_F32, 37, 1000, 77);
        cr_expect_eq(chunked.nonfinite, f32.nonfinite, "chunks count the same");
        cr_expect_eq(chunked.checksum, f32.checksum);
        cs_rollout_stats f64 = blowup(backends[b], CS_DTYPE_F64, 5, 3000, 3000);
        cr_expect_eq(f64.nonfinite, 5 * (3000 / 1024), "%s f64: %lld", cs_backend_name(backends[b]),
                     (long long)f64.nonfinite);
    }
}

/* Stepped by hand: the step that overflows ends the episode (terminated),
 * and the next one starts afresh (next-step auto-reset). */
Test(hardening, the_step_api_terminates_an_environment_gone_infinite)
{
    char path[4096];
    fixture_env(path, sizeof path, "blowup.env");
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = path;
    cfg.num_envs = 3;
    cfg.backend = CS_BACKEND_INTERP;
    cs_env *env = NULL;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_OK, "%s", cs_env_error(env));
    cr_assert_eq(cs_env_reset(env, 1), CS_OK);
    int32_t a[3] = {0, 1, 0};
    for (int t = 1; t <= 130; t++) {
        cr_assert_eq(cs_env_step(env, a), CS_OK);
        const uint8_t *term = cs_env_terminated(env);
        const float *obs = cs_env_obs(env);
        for (int i = 0; i < 3; i++) {
            cr_assert_eq(term[i], t == 128, "step %d, environment %d", t, i);
            cr_assert(t == 128 || isfinite(obs[i]), "step %d: obs %g of a running episode", t, obs[i]);
            cr_assert(obs[i] >= 1 || t == 128, "step %d: obs %g", t, obs[i]);
        }
    }
    cs_env_close(env);
}

/* Starts the program with args (NULL-terminated) after it, stdin from
 * /dev/null, stdout and stderr to the files out and err; in a process
 * group of its own where asked. Returns its pid. */
static pid_t spawn_cli(const char *const *args, const char *out, const char *err, bool own_group)
{
    int nargs = 0;
    while (args[nargs])
        nargs++;
    char **argv = calloc((size_t)nargs + 2, sizeof *argv);
    cr_assert_not_null(argv);
    argv[0] = (char *)cli_test_bin();
    for (int i = 0; i < nargs; i++)
        argv[i + 1] = (char *)args[i];
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    if (own_group) {
        posix_spawnattr_setpgroup(&at, 0);
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    }
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    free(argv);
    cr_assert_eq(rc, 0, "cannot start %s: %s", cli_test_bin(), strerror(rc));
    return pid;
}

/* An exit status, or 128 + the signal that killed it. */
static int exit_status(int ws)
{
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static void run_cli(const char *const *args, const char *tmpdir, const char *out, const char *err, int *status)
{
    if (tmpdir)
        setenv("TMPDIR", tmpdir, 1);
    pid_t pid = spawn_cli(args, out, err, false);
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        cr_assert_eq(errno, EINTR);
    *status = exit_status(ws);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    char *buf = calloc(1, 1 << 20);
    cr_assert_not_null(buf);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* A command-line test's files in the test's root: the command's stdout and
 * stderr, and the kernel cache it uses (XDG_CACHE_HOME, set here). */
typedef struct {
    char out[512], err[512], cache[512];
} cli_files;

static void cli_files_init(cli_files *f)
{
    in_root(f->out, sizeof f->out, "out");
    in_root(f->err, sizeof f->err, "err");
    in_root(f->cache, sizeof f->cache, "cache");
    setenv("XDG_CACHE_HOME", f->cache, 1);
}

/* Runs the command: its exit status, its stdout and stderr read (to free). */
static int run_and_read(const char *const *args, const cli_files *f, char **out, char **err)
{
    int status;
    run_cli(args, NULL, f->out, f->err, &status);
    *out = slurp(f->out);
    *err = slurp(f->err);
    return status;
}

/* The integer value of a top-level JSON key, or LLONG_MIN. */
static long long json_int(const char *json, const char *key)
{
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(json, pat);
    return p ? strtoll(p + strlen(pat), NULL, 10) : -0x7fffffffffffffffLL - 1;
}

Test(hardening, the_cli_reports_nonfinite_restarts)
{
    char path[4096];
    cli_files f;
    fixture_env(path, sizeof path, "blowup.env");
    cli_files_init(&f);
    static const char *const backends[] = {"interp", "cpu"};
    for (int b = 0; b < 2; b++) {
        const char *args[] = {"run", "--env", path, "--envs", "10", "--steps", "1000", "--backend", backends[b],
                              "--json", NULL};
        char *json, *msg;
        cr_expect_eq(run_and_read(args, &f, &json, &msg), 0, "%s", msg);
        cr_expect_eq(json_int(json, "nonfinite"), 10 * (1000 / 128), "%s", json);
        free(json);
        free(msg);
    }
    /* CartPole with a pole of length 0 divides by zero on every step: every
     * step restarts every environment, and no episode ever finishes. */
    const char *args[] = {"run", "--envs", "8", "--steps", "50", "--param", "length=0", "--backend", "interp",
                          "--json", NULL};
    char *json, *msg;
    cr_expect_eq(run_and_read(args, &f, &json, &msg), 0, "%s", msg);
    cr_expect_eq(json_int(json, "nonfinite"), 8 * 50, "%s", json);
    cr_expect_eq(json_int(json, "episodes"), 0, "%s", json);
    cr_expect(strstr(json, "\"mean_return\": null"), "no episode, no mean: %s", json);
    free(json);
    free(msg);
}

/* ---- strict mode -------------------------------------------------------- */

/* "environment E: ... in step T since the reset (strict mode)": E and T. */
static void parse_fault(const char *msg, long long *env, long long *step)
{
    const char *e = strstr(msg, "environment "), *t = strstr(msg, " in step ");
    cr_assert(e && t && strstr(msg, "strict mode"), "message: %s", msg);
    *env = strtoll(e + strlen("environment "), NULL, 10);
    *step = strtoll(t + strlen(" in step "), NULL, 10);
}

static cs_env *open_fixture(const char *name, int64_t n, cs_backend b, bool strict, const char *param)
{
    char path[4096], cache[512];
    fixture_env(path, sizeof path, name);
    in_root(cache, sizeof cache, "cache");
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = path;
    cfg.num_envs = n;
    cfg.backend = b;
    cfg.cache_dir = cache;
    cfg.strict = strict;
    if (param) {
        cfg.params[0] = param;
        cfg.n_params = 1;
    }
    cs_env *env = NULL;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_OK, "%s", cs_env_error(env));
    return env;
}

/* Each environment doubles at its own rate (growth drawn per environment),
 * so they overflow at different steps: strict mode must name the first one,
 * the same whether rolled out in chunks or stepped one step at a time, and
 * finish the rollout it stopped: the same state as without strict mode. */
Test(hardening, strict_mode_names_the_first_environment_and_step)
{
    const cs_backend backends[] = {CS_BACKEND_INTERP, CS_BACKEND_CPU};
    for (int b = 0; b < 2; b++) {
        cs_env *stepped = open_fixture("blowup.env", 64, backends[b], true, "growth=1.5:3");
        cr_assert_eq(cs_env_reset(stepped, 21), CS_OK);
        int32_t a[64] = {0};
        cs_status s = CS_OK;
        for (int t = 0; t < 1000 && s == CS_OK; t++)
            s = cs_env_step(stepped, a);
        cr_assert_eq(s, CS_ERR_NUMERIC, "%s", cs_env_error(stepped));
        long long env_a, step_a;
        parse_fault(cs_env_error(stepped), &env_a, &step_a);
        cs_env_close(stepped);

        cs_env *strict = open_fixture("blowup.env", 64, backends[b], true, "growth=1.5:3");
        cs_env *plain = open_fixture("blowup.env", 64, backends[b], false, "growth=1.5:3");
        cr_assert_eq(cs_env_reset(strict, 21), CS_OK);
        cr_assert_eq(cs_env_reset(plain, 21), CS_OK);
        cs_rollout_stats ss, ps;
        int64_t done = 0;
        for (s = CS_OK; s == CS_OK && done < 1000; done += 30) {
            s = cs_env_rollout(strict, 30, &ss);
            cr_assert_eq(cs_env_rollout(plain, 30, &ps), CS_OK);
        }
        cr_assert_eq(s, CS_ERR_NUMERIC, "%s: %s", cs_backend_name(backends[b]), cs_env_error(strict));
        long long env_b, step_b;
        parse_fault(cs_env_error(strict), &env_b, &step_b);
        cr_expect_eq(env_b, env_a, "%s: rollout names %lld, steps name %lld", cs_backend_name(backends[b]), env_b,
                     env_a);
        cr_expect_eq(step_b, step_a, "%s: rollout says step %lld, steps say %lld", cs_backend_name(backends[b]),
                     step_b, step_a);
        cr_expect(step_b > done - 30 && step_b <= done, "step %lld is in the chunk that failed", step_b);
        cr_expect_gt(ss.nonfinite, 0, "the stats of the whole call");
        cr_expect_eq(ss.nonfinite, ps.nonfinite);
        cr_expect_eq(ss.checksum, ps.checksum, "the state of the whole call");
        cs_env_close(strict);
        cs_env_close(plain);
    }
}

Test(hardening, strict_mode_catches_a_nan_reward_the_state_does_not_show)
{
    cs_env *env = open_fixture("nan_reward.env", 3, CS_BACKEND_INTERP, true, NULL);
    cr_assert_eq(cs_env_reset(env, 0), CS_OK);
    cr_assert_eq(cs_env_rollout(env, 50, NULL), CS_OK, "%s", cs_env_error(env));
    cr_assert_eq(cs_env_rollout(env, 50, NULL), CS_ERR_NUMERIC);
    cr_expect(strstr(cs_env_error(env), "environment 0: its reward is not finite in step 51"), "%s",
              cs_env_error(env));
    cs_env_close(env);
    env = open_fixture("nan_reward.env", 3, CS_BACKEND_CPU, true, NULL);
    cr_assert_eq(cs_env_reset(env, 0), CS_OK);
    int32_t a[3] = {0, 0, 0};
    for (int t = 1; t <= 50; t++)
        cr_assert_eq(cs_env_step(env, a), CS_OK, "step %d: %s", t, cs_env_error(env));
    cr_assert_eq(cs_env_step(env, a), CS_ERR_NUMERIC);
    cr_expect(strstr(cs_env_error(env), "environment 0: its reward is not finite in step 51"), "%s",
              cs_env_error(env));
    cs_env_close(env);
}

/* tests/envs/index_fault.env stepped with action 1 in environment 3 and 0
 * elsewhere until a step fails; the message. */
static void index_fault_steps(cs_backend b, const char *param, char *msg, size_t size)
{
    cs_env *env = open_fixture("index_fault.env", 6, b, true, param);
    cr_assert_eq(cs_env_reset(env, 4), CS_OK);
    int32_t a[6] = {0, 0, 0, 1, 0, 0};
    cs_status s = CS_OK;
    int t = 0;
    while (t < 20 && (s = cs_env_step(env, a)) == CS_OK)
        t++;
    cr_assert_eq(s, CS_ERR_NUMERIC, "%s: %s", cs_backend_name(b), cs_env_error(env));
    snprintf(msg, size, "%s", cs_env_error(env));
    cs_env_close(env);
}

/* A run-time index out of range, which a gather clamps and a set() drops:
 * strict mode names the environment, the index, its range, where it is in
 * the source and the step, the first in source order when two fault at
 * once; the same on every backend, stepped or rolled out. */
Test(hardening, strict_mode_names_an_index_out_of_range)
{
    const cs_backend backends[] = {CS_BACKEND_INTERP, CS_BACKEND_CPU};
    char path[4096], want[4600], msg[4600], oracle[4600];
    fixture_env(path, sizeof path, "index_fault.env");
    for (int b = 0; b < 2; b++) {
        const char *name = cs_backend_name(backends[b]);
        index_fault_steps(backends[b], NULL, msg, sizeof msg);
        snprintf(want, sizeof want, "environment 3: index 10 out of range [0, 10) at %s:27:25 in step 5 since the "
                 "reset (strict mode)", path);
        cr_expect_str_eq(msg, want, "%s: the set()", name);
        index_fault_steps(backends[b], "shift=0", msg, sizeof msg);
        snprintf(want, sizeof want, "environment 3: index 10 out of range [0, 10) at %s:26:22 in step 6 since the "
                 "reset (strict mode)", path);
        cr_expect_str_eq(msg, want, "%s: the gather, first in the source", name);
        index_fault_steps(backends[b], "shift=-12", msg, sizeof msg);
        snprintf(want, sizeof want, "environment 0: index -12 out of range [0, 10) at %s:27:25 in step 1 since the "
                 "reset (strict mode)", path);
        cr_expect_str_eq(msg, want, "%s: below -10, past counting from the end", name);

        /* a rollout names the first faulty step and its lowest environment,
         * and leaves the state the plain run leaves */
        cs_env *strict = open_fixture("index_fault.env", 40, backends[b], true, NULL);
        cs_env *plain = open_fixture("index_fault.env", 40, backends[b], false, NULL);
        cr_assert_eq(cs_env_reset(strict, 9), CS_OK);
        cr_assert_eq(cs_env_reset(plain, 9), CS_OK);
        cs_rollout_stats ss, ps;
        cr_assert_eq(cs_env_rollout(strict, 3, &ss), CS_OK, "%s: no fault in 3 steps: %s", name,
                     cs_env_error(strict));
        cr_assert_eq(cs_env_rollout(plain, 3, &ps), CS_OK);
        cr_expect_eq(ss.checksum, ps.checksum, "%s: strict computes what the plain run does", name);
        cr_assert_eq(cs_env_rollout(strict, 10, &ss), CS_ERR_NUMERIC, "%s", name);
        cr_assert_eq(cs_env_rollout(plain, 10, &ps), CS_OK, "%s: not strict, clamped and dropped: %s", name,
                     cs_env_error(plain));
        cr_expect_eq(ss.checksum, ps.checksum, "%s: the state of the whole call", name);
        long long env, step;
        parse_fault(cs_env_error(strict), &env, &step);
        cr_expect(step >= 5 && step <= 9, "%s: pos + 2 reaches 10 in step 5 at the soonest, 9 at the latest: %s",
                  name, cs_env_error(strict));
        snprintf(want, sizeof want, "out of range [0, 10) at %s:27:25 in step", path);
        cr_expect(strstr(cs_env_error(strict), want), "%s", cs_env_error(strict));
        /* the interpreter is the oracle: the cpu names the same fault */
        if (b == 0)
            snprintf(oracle, sizeof oracle, "%s", cs_env_error(strict));
        else
            cr_expect_str_eq(cs_env_error(strict), oracle, "cpu and interp name the same fault");
        cs_env_close(strict);
        cs_env_close(plain);
    }
}

Test(hardening, strict_index_faults_on_the_command_line)
{
    char path[4096];
    cli_files f;
    fixture_env(path, sizeof path, "index_fault.env");
    cli_files_init(&f);
    const char *args[] = {"run", "--env", path, "--envs", "5", "--steps", "20", "--strict", "--json",
                          "--param", "shift=-12", NULL};
    char *o, *msg;
    cr_expect_eq(run_and_read(args, &f, &o, &msg), 1, "%s", msg);
    char want[4600];
    snprintf(want, sizeof want, "cartsim: environment 0: index -12 out of range [0, 10) at %s:27:25 in step 1 since "
             "the reset (strict mode)\n", path);
    cr_expect_str_eq(msg, want);
    cr_expect_str_eq(o, "", "nothing on stdout");
    free(o);
    free(msg);
    /* without --strict the same run clamps and drops, and succeeds */
    const char *plain[] = {"run", "--env", path, "--envs", "5", "--steps", "20", "--json", "--param", "shift=-12",
                           NULL};
    cr_expect_eq(run_and_read(plain, &f, &o, &msg), 0, "%s", msg);
    cr_expect(strstr(o, "\"checksum\""), "%s", o);
    free(o);
    free(msg);
}

Test(hardening, strict_on_the_command_line)
{
    char path[4096];
    cli_files f;
    fixture_env(path, sizeof path, "blowup.env");
    cli_files_init(&f);
    const char *args[] = {"run", "--env", path, "--envs", "5", "--steps", "1000", "--strict", "--json", NULL};
    char *o, *msg;
    cr_expect_eq(run_and_read(args, &f, &o, &msg), 1, "%s", msg);
    cr_expect(strstr(msg, "cartsim: environment 0: its state became NaN or infinite in step 128 since the reset"),
              "%s", msg);
    cr_expect_str_eq(o, "", "nothing on stdout");
    free(o);
    free(msg);
}

/* ---- resource limits --------------------------------------------------- */

/* An environment with `n` state variables, written to the test's directory. */
static void wide_env(char *path, size_t size, int n)
{
    in_root(path, size, "wide.env");
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "env wide \"Wide-v0\"\nmax_steps 10\nstate ");
    for (int k = 0; k < n; k++)
        fprintf(f, "%ss%d", k ? ", " : "", k);
    fprintf(f, "\naction discrete 2\nobserve ");
    for (int k = 0; k < n; k++)
        fprintf(f, "%ss%d", k ? ", " : "", k);
    fprintf(f, "\nreset {\n");
    for (int k = 0; k < n; k++)
        fprintf(f, "    s%d = uniform(0, 1)\n", k);
    fprintf(f, "}\nstep {\n");
    for (int k = 0; k < n; k++)
        fprintf(f, "    s%d' = s%d + 1\n", k, k);
    fprintf(f, "    reward = 1.0\n    terminated = false\n}\n");
    cr_assert_eq(fclose(f), 0);
}

Test(hardening, a_batch_beyond_memory_is_refused_before_allocation)
{
    char path[512];
    wide_env(path, sizeof path, 64);
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = path;
    cfg.num_envs = INT32_MAX;
    cfg.backend = CS_BACKEND_INTERP;
    cfg.dtype = CS_DTYPE_F64;
    cs_env *env = NULL;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_ERR_LIMIT, "%s", cs_env_error(env));
    cr_assert(strstr(cs_env_error(env), "bytes"), "names the bytes: %s", cs_env_error(env));
    cs_env_close(env);

    cli_files f;
    cli_files_init(&f);
    const char *args[] = {"run", "--env", path, "--envs", "2147483647", "--dtype", "f64", "--backend", "interp",
                          NULL};
    char *o, *msg;
    cr_expect_eq(run_and_read(args, &f, &o, &msg), 2, "%s", msg);
    cr_expect(strstr(msg, "bytes") && strstr(msg, "2147483647"), "%s", msg);
    cr_expect_str_eq(o, "", "nothing on stdout");
    free(o);
    free(msg);
}

Test(hardening, counts_beyond_64_bits_are_refused)
{
    cli_files f;
    cli_files_init(&f);
    const char *args[] = {"run", "--envs", "4", "--steps", "9223372036854775807", "--backend", "interp", NULL};
    char *o, *msg;
    cr_expect_eq(run_and_read(args, &f, &o, &msg), 2, "%s", msg);
    cr_expect(strstr(msg, "2^63"), "%s", msg);
    free(o);
    free(msg);

    cs_config cfg;
    cs_config_init(&cfg);
    cfg.num_envs = 3;
    cfg.backend = CS_BACKEND_INTERP;
    cs_env *env = NULL;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_OK);
    cr_assert_eq(cs_env_reset(env, 0), CS_OK);
    cr_expect_eq(cs_env_rollout(env, INT64_MAX / 3 + 1, NULL), CS_ERR_LIMIT);
    cr_expect_eq(cs_env_rollout(env, 10, NULL), CS_OK);
    cs_env_close(env);
}

/* Episode steps are counted in 32 bits: an environment without max_steps
 * (nothing truncates its episodes) is refused steps that could go past. */
Test(hardening, an_episode_step_counter_cannot_overflow)
{
    char path[512];
    in_root(path, sizeof path, "endless.env");
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("env endless \"Endless-v0\"\nstate x\naction discrete 2\nobserve x\nreset {\n    x = 0.0\n}\n"
          "step {\n    x' = x\n    reward = 1.0\n    terminated = false\n}\n", f);
    cr_assert_eq(fclose(f), 0);
    const cs_backend backends[] = {CS_BACKEND_INTERP, CS_BACKEND_CPU};
    for (int b = 0; b < 2; b++) {
        cs_config cfg;
        cs_config_init(&cfg);
        cfg.env = path;
        cfg.num_envs = 3;
        cfg.backend = backends[b];
        char cache[512];
        in_root(cache, sizeof cache, "cache");
        cfg.cache_dir = cache;
        cs_env *env = NULL;
        cr_assert_eq(cs_env_open(&cfg, &env), CS_OK, "%s", cs_env_error(env));
        cr_assert_eq(cs_env_reset(env, 0), CS_OK);
        double state[3] = {0, 0, 0};
        int32_t steps[3] = {0, INT32_MAX - 10, 5};
        cr_assert_eq(cs_env_set_state(env, state, steps), CS_OK);
        cr_expect_eq(cs_env_rollout(env, 11, NULL), CS_ERR_LIMIT);
        cr_expect(strstr(cs_env_error(env), "max_steps"), "%s", cs_env_error(env));
        cr_expect_eq(cs_env_rollout(env, 9, NULL), CS_OK, "%s", cs_env_error(env));
        int32_t a[3] = {0, 0, 0};
        cr_expect_eq(cs_env_step(env, a), CS_OK, "%s", cs_env_error(env));
        cr_expect_eq(cs_env_step(env, a), CS_ERR_LIMIT, "the counter is at INT32_MAX");
        cr_expect_eq(cs_env_reset(env, 1), CS_OK);
        cr_expect_eq(cs_env_step(env, a), CS_OK, "a reset starts the counters again");
        cs_env_close(env);
    }
}

/* ---- interrupts --------------------------------------------------------- */

/* Starts a long run with stderr to `err` (progress lines) in its own process
 * group; returns its pid. */
static pid_t start_long_run(const char *tmpdir, const char *out, const char *err, const char *extra)
{
    const char *args[] = {"run", "--envs", "1024", "--steps", "2000000000", "--backend", "cpu", "--threads", "1",
                          "--json", "--progress", extra, NULL};
    setenv("TMPDIR", tmpdir, 1);
    return spawn_cli(args, out, err, true);
}

/* Ctrl-C kills the compiler's own children too, and one whose parent died
 * first would be reparented to the nearest subreaper: Criterion's runner,
 * which does not expect it. The test's process takes that role and reaps
 * them all (until it has no child left). */
static void adopt_orphans(void)
{
    cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
}

static void reap_orphans(void)
{
    for (int k = 0; k < 1000; k++) {
        pid_t got = waitpid(-1, NULL, WNOHANG);
        if (got < 0 && errno == ECHILD)
            return;
        if (got <= 0)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
}

static int wait_status(pid_t pid, double timeout_s)
{
    for (double waited = 0; waited < timeout_s; waited += 0.01) {
        int ws;
        pid_t got = waitpid(pid, &ws, WNOHANG);
        if (got == pid)
            return exit_status(ws);
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    kill(-pid, SIGKILL);
    waitpid(pid, NULL, 0);
    cr_assert_fail("the run did not stop within %g s of the interrupt", timeout_s);
    return -1;
}

static int lines_in(const char *path)
{
    char *text = slurp(path);
    int n = 0;
    for (char *p = text; *p; p++)
        n += *p == '\n';
    free(text);
    return n;
}

Test(hardening, ctrl_c_stops_at_the_next_chunk_with_the_partial_summary)
{
    char tmp[512], out[512], err[512], cache[512];
    in_root(tmp, sizeof tmp, "tmp");
    in_root(out, sizeof out, "out");
    in_root(err, sizeof err, "err");
    in_root(cache, sizeof cache, "cache");
    cr_assert_eq(mkdir(tmp, 0700), 0);
    setenv("XDG_CACHE_HOME", cache, 1);
    adopt_orphans();
    pid_t pid = start_long_run(tmp, out, err, NULL);
    /* The progress bar prints a line per chunk: wait for two chunks done. */
    for (int k = 0; k < 6000 && lines_in(err) < 3; k++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    cr_assert_geq(lines_in(err), 3, "the run never got going");
    cr_assert_eq(kill(pid, SIGINT), 0);
    int status = wait_status(pid, 10);
    char *json = slurp(out), *msg = slurp(err);
    cr_expect_eq(status, 130, "exit status %d: %s", status, msg);
    long long steps = json_int(json, "steps");
    cr_expect(steps > 0 && steps < 2000000000LL, "steps done: %lld\n%s", steps, json);
    cr_expect_eq(json_int(json, "env_steps"), steps * 1024, "%s", json);
    cr_expect(strstr(json, "\"interrupted\": true"), "%s", json);
    cr_expect(strstr(msg, "interrupted after"), "%s", msg);
    reap_orphans();
    cr_expect_eq(count_files(tmp), 0, "temporary files left in TMPDIR");
    free(json);
    free(msg);
}

/* Ctrl-C reaches the whole foreground group, the compiler included: the run
 * stops while compiling, and the build directory goes with it. */
Test(hardening, ctrl_c_while_compiling_leaves_no_temporary_files)
{
    char tmp[512], out[512], err[512];
    in_root(tmp, sizeof tmp, "tmp");
    in_root(out, sizeof out, "out");
    in_root(err, sizeof err, "err");
    cr_assert_eq(mkdir(tmp, 0700), 0);
    adopt_orphans();
    for (int delay_ms = 100; delay_ms <= 300; delay_ms += 100) {
        pid_t pid = start_long_run(tmp, out, err, "--no-cache");
        nanosleep(&(struct timespec){0, delay_ms * 1000000L}, NULL);
        cr_assert_eq(kill(-pid, SIGINT), 0);
        int status = wait_status(pid, 10);
        char *msg = slurp(err);
        cr_expect_eq(status, 130, "after %d ms: exit status %d: %s", delay_ms, status, msg);
        cr_expect(strstr(msg, "interrupted"), "%s", msg);
        free(msg);
        reap_orphans();
        cr_expect_eq(count_files(tmp), 0, "after %d ms: temporary files left in TMPDIR", delay_ms);
    }
}

/* ---- inputs that are not regular files (issue 16, 1) -------------------- */

/* Runs the program with stdout and stderr to files in root; kills it after
 * `limit_s` (a hang is a failure, not a stuck suite). */
static int run_cli_bounded(const char *const *args, double limit_s, char **err_text)
{
    char out[512], err[512];
    in_root(out, sizeof out, "bounded.out");
    in_root(err, sizeof err, "bounded.err");
    pid_t pid = spawn_cli(args, out, err, false);
    int status = -1;
    for (double waited = 0; waited < limit_s; waited += 0.01) {
        int ws;
        if (waitpid(pid, &ws, WNOHANG) == pid) {
            status = exit_status(ws);
            break;
        }
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    if (status < 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    *err_text = slurp(err);
    return status;
}

Test(hardening, every_file_reader_refuses_what_is_not_a_regular_file)
{
    char fifo[512], loop_a[512], loop_b[512], dir[512];
    in_root(fifo, sizeof fifo, "input.fifo");
    in_root(loop_a, sizeof loop_a, "loop_a");
    in_root(loop_b, sizeof loop_b, "loop_b");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(symlink(loop_b, loop_a), 0);
    cr_assert_eq(symlink(loop_a, loop_b), 0);
    snprintf(dir, sizeof dir, "%s", root);
    const char *bad[] = {fifo, loop_a, dir};
    for (int k = 0; k < 3; k++) {
        const char *path = bad[k];
        const char *const cases[][8] = {
            {"run", "--env", path, "--steps", "1", NULL},
            {"run", "--config", path, "--steps", "1", NULL},
            {"run", "--policy", path, "--steps", "1", NULL},
            {"replay", "--env", "cartpole", path, NULL},
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            char *msg;
            int status = run_cli_bounded(cases[c], 20, &msg);
            cr_expect_eq(status, 2, "cartsim %s %s %s: exit %d (-1: still waiting after 20 s): %s", cases[c][0],
                         cases[c][1], path, status, msg);
            cr_expect(strchr(msg, '\n') == strrchr(msg, '\n') && strstr(msg, "cartsim: "), "one line: %s", msg);
            free(msg);
        }
    }
}

/* The size limit of a source is 16 MiB: a file of exactly that is read (it
 * was refused as "larger than 16 MiB"), one byte more is not (issue 32, 15). */
Test(hardening, a_source_of_exactly_the_size_limit_is_read)
{
    static const char program[] = "env big \"Big-v0\"\nmax_steps 10\nstate x\naction discrete 2\nobserve x\n"
                                  "reset {\n    x = 0\n}\nstep {\n    x' = x + 1\n    reward = 1\n    terminated = false\n}\n#";
    const size_t limit = (size_t)16 << 20;
    char path[512];
    in_root(path, sizeof path, "big.env");
    for (int extra = 0; extra < 2; extra++) {
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs(program, f);
        for (size_t n = strlen(program); n < limit - 1 + (size_t)extra; n++)
            fputc('x', f);
        fputc('\n', f);
        cr_assert_eq(fclose(f), 0);
        cs_config cfg;
        cs_config_init(&cfg);
        cfg.env = path;
        cfg.backend = CS_BACKEND_INTERP;
        cs_env *env = NULL;
        cs_status st = cs_env_open(&cfg, &env);
        if (extra == 0)
            cr_expect_eq(st, CS_OK, "exactly 16 MiB: %s", cs_env_error(env));
        else
            cr_expect(st == CS_ERR_PARSE && strstr(cs_env_error(env), "larger than 16 MiB"), "16 MiB + 1: %s",
                      cs_env_error(env));
        cs_env_close(env);
    }
}

/* Terminal escape sequences in a data file reach a message escaped, never
 * raw (issue 32, 14): the policy, INI and CSV readers' messages go through
 * one escaping function. ESC, a C1 control (U+009B, CSI) and a bad UTF-8
 * byte are written \xNN; valid UTF-8 text stays as it is. */
static void expect_escaped(const char *msg, const char *what)
{
    bool raw = false;
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
        raw |= *p == 0x1b || *p == 0x07 || (p[0] == 0xc2 && p[1] == 0x9b) || *p == 0xff;
    cr_expect_not(raw, "%s: a raw control byte in the message", what);
    cr_expect(strstr(msg, "\\x1b"), "%s: '%s'", what, msg);
}

Test(hardening, escape_sequences_from_data_files_are_echoed_escaped)
{
    static const char evil[] = "\x1b]0;owned\x07\xc2\x9b" "2J\xff caf\xc3\xa9";
    char path[512], text[1024], err[1024];
    /* a policy file: a weight that is not a number */
    in_root(path, sizeof path, "evil.pol");
    snprintf(text, sizeof text, "cartsim-policy 1\nenv cartpole\npolicy linear\nweights 2\n%s\n0\nchecksum 0\n", evil);
    cli_test_write_file(path, text, strlen(text));
    cs_policy_file pf;
    cr_expect_eq(cs_policy_load(path, &pf, err, sizeof err), CS_ERR_PARSE);
    expect_escaped(err, "policy");
    /* an INI file: an unknown key */
    in_root(path, sizeof path, "evil.ini");
    snprintf(text, sizeof text, "[run]\n%s = 1\n", evil);
    cli_test_write_file(path, text, strlen(text));
    cs_config cfg;
    cs_config_init(&cfg);
    cs_config_file *file = NULL;
    cr_expect_neq(cs_config_load(&cfg, path, &file, err, sizeof err), CS_OK);
    expect_escaped(err, "INI");
    cr_expect(strstr(err, "caf\xc3\xa9"), "UTF-8 text is kept: %s", err);
    cs_config_file_free(file);
    /* a trajectory CSV: a golden file's header, then an episode that is no number */
    char golden[600], header[1024] = "";
    snprintf(golden, sizeof golden, "%s/cartpole.csv", getenv("CARTSIM_GOLDEN") ? getenv("CARTSIM_GOLDEN")
                                                                               : "../shared/golden");
    FILE *g = fopen(golden, "r");
    cr_assert_not_null(g, "%s", golden);
    cr_assert_not_null(fgets(header, sizeof header, g));
    fclose(g);
    int n = snprintf(text, sizeof text, "%s%s", header, evil);
    for (const char *c = header; *c; c++)
        if (*c == ',')
            n += snprintf(text + n, sizeof text - (size_t)n, ",0");
    snprintf(text + n, sizeof text - (size_t)n, "\n");
    in_root(path, sizeof path, "evil.csv");
    cli_test_write_file(path, text, strlen(text));
    const char *const args[] = {"replay", "--env", "cartpole", path, NULL};
    char *msg;
    int status = run_cli_bounded(args, 30, &msg);
    cr_expect_eq(status, 2, "%s", msg);
    expect_escaped(msg, "CSV");
    free(msg);
}

/* Files of the kernel's /proc are "regular" files that are not files: a
 * read of /proc/kmsg blocks (and takes the kernel's messages away from
 * their reader), /proc/self/mem fails at the first read (exit 1). They are
 * refused before any read (issue 32, 10). */
Test(hardening, files_of_the_kernel_are_refused_before_any_read)
{
    const char *const cases[][8] = {
        {"run", "--env", "/proc/kmsg", "--steps", "1", NULL},
        {"run", "--env", "/proc/self/mem", "--steps", "1", NULL},
        {"run", "--config", "/proc/self/status", "--steps", "1", NULL},
        {"run", "--policy", "/proc/self/environ", "--steps", "1", NULL},
        {"replay", "--env", "cartpole", "/proc/self/stat", NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *msg;
        int status = run_cli_bounded(cases[c], 20, &msg);
        cr_expect_eq(status, 2, "cartsim %s %s %s: exit %d (-1: still reading after 20 s): %s", cases[c][0],
                     cases[c][1], cases[c][2], status, msg);
        cr_expect(strchr(msg, '\n') == strrchr(msg, '\n') && strstr(msg, "cartsim: "), "one line: %s", msg);
        free(msg);
    }
}

Test(hardening, a_file_the_user_cannot_read_is_bad_input)
{
    if (geteuid() == 0)
        cr_skip_test("root reads every file");
    char path[512];
    in_root(path, sizeof path, "secret.env");
    cli_test_write_file(path, "env x\n", 6);
    cr_assert_eq(chmod(path, 0), 0);
    const char *const args[] = {"run", "--env", path, "--steps", "1", NULL};
    char *msg;
    int status = run_cli_bounded(args, 20, &msg);
    cr_expect_eq(status, 2, "exit %d: %s", status, msg);
    free(msg);
}

/* ---- the C compiler's time limit (issue 16, 4) ---------------------------- */

/* Dead, or a zombie nobody reaps yet: either way no longer running. */
static bool process_gone(long pid)
{
    char path[64], text[256] = "";
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return true;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    const char *close_paren = strrchr(text, ')');
    return close_paren && (close_paren[2] == 'Z' || close_paren[2] == 'X');
}

Test(hardening, a_compiler_past_its_time_limit_is_killed_with_its_group_and_reported)
{
    char cc[512], sleeper[512], cache[512];
    in_root(cc, sizeof cc, "slow-cc");
    in_root(sleeper, sizeof sleeper, "sleeper.pid");
    in_root(cache, sizeof cache, "cache");
    /* The compiler's own child (as cc1 is gcc's) must go too. */
    write_script(cc, "#!/bin/sh\nsleep 60 &\necho $! > '%s'\nwait\n", sleeper);
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.num_envs = 4;
    cfg.backend = CS_BACKEND_AUTO;   /* a time limit is no reason to fall back to the interpreter */
    cfg.cache_dir = cache;
    cfg.cc = cc;
    cfg.cc_timeout_s = 0.5;
    cs_env *env = NULL;
    cs_status s = cs_env_open(&cfg, &env);
    cr_expect_eq(s, CS_ERR_TIMEOUT, "%s: %s", cs_status_string(s), cs_env_error(env));
    cr_expect(strstr(cs_env_error(env), "time limit of 0.5 s"), "%s", cs_env_error(env));
    cs_env_close(env);
    char *pid_text = slurp(sleeper);
    long pid = strtol(pid_text, NULL, 10);
    free(pid_text);
    cr_assert_gt(pid, 0);
    bool gone = false;
    for (int k = 0; k < 200 && !(gone = process_gone(pid)); k++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    if (!gone)
        kill((pid_t)pid, SIGKILL);
    cr_expect(gone, "the compiler's child %ld still runs", pid);
    cr_expect_eq(count_files(cache), 0, "no build directory left in the cache");
}

/* A compiler whose child leaves its process group (setsid) and one that
 * hangs: the time limit ends them too, and so does the program's death by
 * SIGKILL, which only the compiler's driver used to feel (issue 32, 9). */
static void write_compiler(const char *cc, const char *pids)
{
    /* its pid, a child in the group, a grandchild out of it: all sleep */
    write_script(cc, "#!/bin/sh\necho $$ > '%s'\nsleep 60 &\necho $! >> '%s'\nsetsid sleep 60 &\necho $! >> '%s'\nwait\n",
            pids, pids, pids);
}

/* The pids the compiler wrote once all three are there (NULL: it never did). */
static bool read_pids(const char *path, long pids[3])
{
    for (int k = 0; k < 3000; k++) {
        FILE *f = fopen(path, "r");
        int got = f ? fscanf(f, "%ld %ld %ld", &pids[0], &pids[1], &pids[2]) : 0;
        if (f)
            fclose(f);
        if (got == 3)
            return true;
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    return false;
}

static void expect_all_gone(const long pids[3], const char *when)
{
    static const char *const names[3] = {"the compiler", "its child", "its grandchild out of its group"};
    for (int k = 0; k < 3; k++) {
        bool gone = false;
        for (int w = 0; w < 500 && !(gone = process_gone(pids[k])); w++)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
        if (!gone)
            kill((pid_t)pids[k], SIGKILL);
        cr_expect(gone, "%s: %s (%ld) still runs", when, names[k], pids[k]);
    }
}

Test(hardening, every_process_of_the_compiler_ends_with_the_time_limit_or_the_program)
{
    char cc[512], pids_path[512], cache[512];
    in_root(cc, sizeof cc, "slow-cc");
    in_root(pids_path, sizeof pids_path, "pids");
    in_root(cache, sizeof cache, "cache");
    write_compiler(cc, pids_path);
    adopt_orphans();
    /* the time limit */
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.num_envs = 4;
    cfg.backend = CS_BACKEND_CPU;
    cfg.cache_dir = cache;
    cfg.cc = cc;
    cfg.cc_timeout_s = 1;
    cs_env *env = NULL;
    cr_expect_eq(cs_env_open(&cfg, &env), CS_ERR_TIMEOUT, "%s", cs_env_error(env));
    cs_env_close(env);
    long pids[3];
    cr_assert(read_pids(pids_path, pids), "the compiler never started");
    expect_all_gone(pids, "after the time limit");
    reap_orphans();
    /* the program killed outright while compiling */
    unlink(pids_path);
    setenv("CC", cc, 1);
    const char *const argv[] = {cli_test_bin(), "run", "--backend", "cpu", "--no-cache", "--steps", "1", NULL};
    pid_t pid;
    cr_assert_eq(posix_spawn(&pid, argv[0], NULL, NULL, (char *const *)argv, environ), 0);
    unsetenv("CC");
    cr_assert(read_pids(pids_path, pids), "the compiler never started");
    cr_assert_eq(kill(pid, SIGKILL), 0);
    waitpid(pid, NULL, 0);
    expect_all_gone(pids, "after SIGKILL of cartsim");
    reap_orphans();
}

Test(hardening, the_cli_reports_a_compiler_timeout_as_a_failure_with_one_line)
{
    char cc[512];
    in_root(cc, sizeof cc, "slow-cc");
    write_script(cc, "#!/bin/sh\nexec sleep 60\n");
    setenv("CC", cc, 1);
    const char *const args[] = {"run", "--no-cache", "--cc-timeout", "0.5", "--steps", "1", NULL};
    char *msg;
    int status = run_cli_bounded(args, 30, &msg);
    unsetenv("CC");
    cr_expect_eq(status, 1, "exit %d: %s", status, msg);
    cr_expect(strstr(msg, "time limit") && !strstr(msg, "interpreter"), "%s", msg);
    free(msg);
}

/* ---- cartsim cache (issue 18, 9) -------------------------------------------- */

static char *run_cache_command(const char *action, int *status)
{
    const char *const args[] = {"cache", action, NULL};
    char *msg;
    *status = run_cli_bounded(args, 30, &msg);
    free(msg);
    char out[512];
    in_root(out, sizeof out, "bounded.out");
    return slurp(out);
}

Test(hardening, the_cache_command_lists_sizes_and_clears)
{
    char xdg[512], saved[512] = "";
    const char *was = getenv("XDG_CACHE_HOME");
    if (was)
        snprintf(saved, sizeof saved, "%s", was);
    in_root(xdg, sizeof xdg, "xdg");
    setenv("XDG_CACHE_HOME", xdg, 1);
    const char *const fill[] = {"run", "--backend", "cpu", "--envs", "2", "--steps", "1", NULL};
    char *msg;
    int status = run_cli_bounded(fill, 60, &msg);
    cr_assert_eq(status, 0, "%s", msg);
    free(msg);
    char *out = run_cache_command("list", &status);
    cr_expect_eq(status, 0);
    cr_expect(strstr(out, ".so)\n") && strstr(out, ": 1 kernel, "), "%s", out);   /* "... cpu (KEY.so)" */
    free(out);
    out = run_cache_command("size", &status);
    cr_expect_eq(status, 0);
    cr_expect(!strstr(out, ".so)\n") && strstr(out, ": 1 kernel, "), "%s", out);
    free(out);
    out = run_cache_command("clear", &status);
    cr_expect_eq(status, 0);
    cr_expect(strstr(out, "removed 1 kernel\n"), "one kernel, not its two files: %s", out);
    free(out);
    out = run_cache_command("list", &status);
    cr_expect(strstr(out, ": 0 kernels, "), "%s", out);
    free(out);
    out = run_cache_command("bogus", &status);
    cr_expect_eq(status, 2);
    free(out);
    if (was)
        setenv("XDG_CACHE_HOME", saved, 1);   /* make check's, not the user's */
    else
        unsetenv("XDG_CACHE_HOME");
}

/* ---- a refused render leaves no files (issue 16, 10) ----------------------- */

Test(hardening, a_refused_render_creates_no_output_directory)
{
    char out[512];
    in_root(out, sizeof out, "frames");
    const char *const cases[][10] = {
        {"render", "--env", "no_such_env", "--out", out, "--steps", "1", NULL},
        {"render", "--env", "cartpole", "--param", "no_such_param=1", "--out", out, "--steps", "1", NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *msg;
        int status = run_cli_bounded(cases[c], 60, &msg);
        cr_expect_eq(status, 2, "case %zu: exit %d: %s", c, status, msg);
        struct stat st;
        cr_expect_neq(stat(out, &st), 0, "case %zu: %s was created by a refused command", c, out);
        free(msg);
        rmdir(out);
    }
}

/* ---- where kernels are built (issue 32, 7 and 15) ------------------------ */

/* Two kernels built without the cache in one process, the first still
 * loaded: each runs itself. The second was loaded by its build path, the
 * same /proc/PID/fd/N/kernel.so name as the first's when the descriptor
 * number came round again, and glibc handed back the first kernel. */
Test(hardening, two_uncached_kernels_in_one_process_each_run_themselves)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.num_envs = 16;
    cfg.threads = 1;
    cfg.no_cache = true;
    cfg.backend = CS_BACKEND_CPU;
    cs_env *first, *second, *reference;
    cr_assert_eq(cs_env_open(&cfg, &first), CS_OK, "%s", cs_env_error(first));
    cfg.dtype = CS_DTYPE_F64;
    cr_assert_eq(cs_env_open(&cfg, &second), CS_OK, "%s", cs_env_error(second));
    cfg.backend = CS_BACKEND_INTERP;
    cr_assert_eq(cs_env_open(&cfg, &reference), CS_OK, "%s", cs_env_error(reference));
    cs_rollout_stats a, b;
    cr_assert_eq(cs_env_reset(second, 1), CS_OK);
    cr_assert_eq(cs_env_rollout(second, 50, &a), CS_OK);
    cr_assert_eq(cs_env_reset(reference, 1), CS_OK);
    cr_assert_eq(cs_env_rollout(reference, 50, &b), CS_OK);
    cr_expect_eq(a.checksum, b.checksum, "the f64 kernel ran the f32 one");
    cs_env_close(first);
    cs_env_close(second);
    cs_env_close(reference);
}

/* A compiler that exits 0 with garbage for an object: the open fails, and
 * nothing is stored (it was stored first, then failed to load). */
Test(hardening, an_object_that_does_not_load_is_never_cached)
{
    char cc[512], cache[512];
    in_root(cc, sizeof cc, "liar-cc");
    in_root(cache, sizeof cache, "cache");
    write_script(cc, "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && echo garbage > \"$2\"; shift; done\nexit 0\n");
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.num_envs = 4;
    cfg.backend = CS_BACKEND_CPU;
    cfg.cache_dir = cache;
    cfg.cc = cc;
    cs_env *env = NULL;
    cs_status s = cs_env_open(&cfg, &env);
    cr_expect_neq(s, CS_OK);
    cr_expect(strstr(cs_env_error(env), "load"), "%s", cs_env_error(env));
    cs_env_close(env);
    cr_expect_eq(count_files(cache), 0, "the object that did not load was stored");
}

/* A mount namespace of the test's own with a tmpfs of `size` bytes at
 * `dir`; false (the test skips, loudly) where mounting is not allowed. */
static bool tmpfs_at(const char *dir, size_t size)
{
    if (geteuid() != 0 || unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return false;
    char opts[64];
    snprintf(opts, sizeof opts, "size=%zu,mode=0700", size);
    cr_assert_eq(mkdir(dir, 0700), 0);
    return mount("tmpfs", dir, "tmpfs", 0, opts) == 0;
}

/* Fills the file system of dir up with one file. */
static void fill(const char *dir)
{
    char filler[600];
    snprintf(filler, sizeof filler, "%s/filler", dir);
    int fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert_geq(fd, 0);
    static char block[4096];
    while (write(fd, block, sizeof block) > 0)
        ;
    close(fd);
}

/* The cache's file system full (the build directory lives in the cache):
 * the kernel is built in $TMPDIR and runs uncached, with a notice; it
 * failed to write its source, and `auto` fell back to the interpreter. */
Test(hardening, a_full_cache_file_system_builds_elsewhere_and_runs_uncached)
{
    char fs[512], cache[600], tmp[512];
    in_root(fs, sizeof fs, "fs");
    in_root(tmp, sizeof tmp, "tmp");
    snprintf(cache, sizeof cache, "%s/cache", fs);
    cr_assert_eq(mkdir(tmp, 0700), 0);
    if (!tmpfs_at(fs, 256 << 10)) {
        fprintf(stderr, "hardening: SKIPPED a_full_cache_file_system_builds_elsewhere_and_runs_uncached: "
                        "mounting a tmpfs needs root\n");
        cr_skip_test("cannot mount a tmpfs here");
    }
    cr_assert_eq(mkdir(cache, 0700), 0);
    fill(fs);
    setenv("TMPDIR", tmp, 1);
    uint64_t want = 0;
    for (int b = 0; b < 2; b++) {
        cs_config cfg;
        cs_config_init(&cfg);
        cfg.num_envs = 16;
        cfg.threads = 1;
        cfg.backend = b ? CS_BACKEND_AUTO : CS_BACKEND_CPU;
        cfg.cache_dir = cache;
        cs_env *env = NULL;
        cs_status s = cs_env_open(&cfg, &env);
        cr_assert_eq(s, CS_OK, "%s", cs_env_error(env));
        cs_env_info info;
        cr_assert_eq(cs_env_get_info(env, &info), CS_OK);
        cr_expect_eq(info.backend, CS_BACKEND_CPU, "%s: ran on %s (%s)", b ? "auto" : "cpu",
                     cs_backend_name(info.backend), info.notice);
        cr_expect(strstr(info.notice, "no room to build in the kernel cache") && strstr(info.notice, "uncached"),
                  "notice '%s'", info.notice);
        cs_rollout_stats st;
        cr_assert_eq(cs_env_reset(env, 2), CS_OK);
        cr_assert_eq(cs_env_rollout(env, 100, &st), CS_OK);
        if (b)
            cr_expect_eq(st.checksum, want);
        want = st.checksum;
        cs_env_close(env);
    }
    cr_expect_eq(count_files(tmp), 0, "the build directory was left in TMPDIR");
    unsetenv("TMPDIR");
}

/* The compiler itself out of room (no cache, $TMPDIR full once the source
 * is written): the message says so, not "(no output)". */
Test(hardening, a_compiler_out_of_room_says_so)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.num_envs = 4;
    cfg.backend = CS_BACKEND_CPU;
    cfg.no_cache = true;
    char *source = NULL, why[256];
    cr_assert_eq(cs_dump(&cfg, NULL, "c", &source, why, sizeof why), CS_OK, "%s", why);
    size_t room = (strlen(source) + 4095) / 4096 * 4096 + 8192;   /* the source and a little */
    free(source);
    char fs[512];
    in_root(fs, sizeof fs, "fs");
    if (!tmpfs_at(fs, room)) {
        fprintf(stderr, "hardening: SKIPPED a_compiler_out_of_room_says_so: mounting a tmpfs needs root\n");
        cr_skip_test("cannot mount a tmpfs here");
    }
    setenv("TMPDIR", fs, 1);
    cs_env *env = NULL;
    cs_status s = cs_env_open(&cfg, &env);
    cr_expect_neq(s, CS_OK);
    cr_expect(strstr(cs_env_error(env), "is full"), "%s", cs_env_error(env));
    cr_expect_null(strstr(cs_env_error(env), "(no output)"), "%s", cs_env_error(env));
    cs_env_close(env);
    unsetenv("TMPDIR");
}

/* `cartsim cache clear` where nothing can be removed (a read-only file
 * system): exit 1 and why, not "removed 0 files" and 0 (issue 32, 15). */
Test(hardening, cache_clear_says_what_it_could_not_remove)
{
    char fs[512], saved[512] = "";
    in_root(fs, sizeof fs, "fs");
    if (!tmpfs_at(fs, 4 << 20)) {
        fprintf(stderr, "hardening: SKIPPED cache_clear_says_what_it_could_not_remove: mounting a tmpfs needs root\n");
        cr_skip_test("cannot mount a tmpfs here");
    }
    const char *was = getenv("XDG_CACHE_HOME");
    if (was)
        snprintf(saved, sizeof saved, "%s", was);
    setenv("XDG_CACHE_HOME", fs, 1);
    const char *const args[] = {"run", "--backend", "cpu", "--envs", "2", "--steps", "1", NULL};
    char *msg;
    int status = run_cli_bounded(args, 60, &msg);
    cr_assert_eq(status, 0, "%s", msg);
    free(msg);
    cr_assert_eq(mount(NULL, fs, NULL, MS_REMOUNT | MS_RDONLY, NULL), 0, "%s", strerror(errno));
    const char *const clear[] = {"cache", "clear", NULL};
    status = run_cli_bounded(clear, 30, &msg);
    cr_expect_eq(status, 1, "exit %d: %s", status, msg);
    cr_expect(strstr(msg, "cannot remove") && strstr(msg, "Read-only file system"), "%s", msg);
    free(msg);
    char dir[600];
    snprintf(dir, sizeof dir, "%s/cartsim", fs);
    cr_expect_eq(count_files(dir), 2, "the entries are still there");
    if (was)
        setenv("XDG_CACHE_HOME", saved, 1);
    else
        unsetenv("XDG_CACHE_HOME");
}

/* Without a cache the build goes to $TMPDIR; what a killed run left there
 * goes at the next compile (issue 16, 9). */
Test(hardening, a_killed_runs_build_directory_in_tmpdir_is_swept_by_the_next)
{
    char tmp[512], orphan[700], file[800], live[700];
    in_root(tmp, sizeof tmp, "tmp");
    cr_assert_eq(mkdir(tmp, 0700), 0);
    pid_t dead = fork();
    cr_assert_geq(dead, 0);
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    snprintf(orphan, sizeof orphan, "%s/cartsim-build-%ld-0badf00d", tmp, (long)dead);
    snprintf(live, sizeof live, "%s/cartsim-build-%ld-00c0ffee", tmp, (long)getpid());
    cr_assert_eq(mkdir(orphan, 0700), 0);
    cr_assert_eq(mkdir(live, 0700), 0);
    snprintf(file, sizeof file, "%s/kernel.c", orphan);
    cli_test_write_file(file, "int x;", 6);
    setenv("TMPDIR", tmp, 1);
    const char *const args[] = {"run", "--no-cache", "--backend", "cpu", "--envs", "2", "--steps", "1", NULL};
    char *msg;
    int status = run_cli_bounded(args, 60, &msg);
    unsetenv("TMPDIR");
    cr_expect_eq(status, 0, "%s", msg);
    free(msg);
    struct stat st;
    cr_expect_neq(stat(orphan, &st), 0, "the build directory of a process that is gone stays");
    cr_expect_eq(stat(live, &st), 0, "a live process's build directory was removed");
    rmdir(live);
}

/* A compile under a 1 ms timer signal (a profiler's, a watchdog's): with the
 * program's interrupt flag given, only the flag stops it; without one, the
 * signal interrupting the wait does (as Ctrl-C does for a Python caller). */
static void on_tick(int sig) { (void)sig; }

static cs_status open_under_a_timer(const volatile sig_atomic_t *interrupt, char *err, size_t err_size)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_tick;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    cr_assert_eq(sigaction(SIGALRM, &sa, &old), 0);
    struct itimerval tick = {{0, 1000}, {0, 1000}}, off = {{0, 0}, {0, 0}};
    cr_assert_eq(setitimer(ITIMER_REAL, &tick, NULL), 0);
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.num_envs = 4;
    cfg.backend = CS_BACKEND_CPU;
    cfg.no_cache = true;   /* a compile every time */
    cfg.interrupt = interrupt;
    cs_env *env = NULL;
    cs_status s = cs_env_open(&cfg, &env);
    setitimer(ITIMER_REAL, &off, NULL);
    sigaction(SIGALRM, &old, NULL);
    snprintf(err, err_size, "%s", cs_env_error(env));
    cs_env_close(env);
    return s;
}

Test(hardening, a_timer_signal_stops_a_compile_only_without_an_interrupt_flag)
{
    static volatile sig_atomic_t never = 0;
    char err[512];
    cs_status s = open_under_a_timer(&never, err, sizeof err);
    cr_expect_eq(s, CS_OK, "with a flag: %s: %s", cs_status_string(s), err);
    s = open_under_a_timer(NULL, err, sizeof err);
    cr_expect_eq(s, CS_ERR_INTERRUPTED, "without one: %s: %s", cs_status_string(s), err);
    cr_expect(strstr(err, "interrupted while compiling"), "%s", err);
}

/* An interrupt during the compile is an interrupt, whatever the backend asked:
 * never "the C compiler failed ... running the interpreter" (issue 16, 9). */
Test(hardening, an_interrupted_compile_is_reported_as_such_not_as_a_fallback)
{
    static volatile sig_atomic_t interrupted = 1;   /* as if Ctrl-C came while compiling */
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.num_envs = 4;
    cfg.backend = CS_BACKEND_AUTO;
    cfg.no_cache = true;
    cfg.interrupt = &interrupted;
    cs_env *env = NULL;
    cs_status s = cs_env_open(&cfg, &env);
    cr_expect_eq(s, CS_ERR_INTERRUPTED, "%s: %s", cs_status_string(s), cs_env_error(env));
    cr_expect(strstr(cs_env_error(env), "interrupted while compiling"), "%s", cs_env_error(env));
    cs_env_close(env);
}

/* ---- a file size limit (issue 32, 6) ------------------------------------ */

/* Runs the program under `ulimit -f` (bytes), SIGXFSZ at its default action
 * as a shell leaves it, stdout to `out`; the exit status (128 + N for a
 * signal) and stderr in *err_text. */
static int run_cli_size_limited(const char *const *args, rlim_t bytes, const char *out, char **err_text)
{
    int err[2];   /* a pipe: the limit must not cut the message itself */
    cr_assert_eq(pipe(err), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_DFL);
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        struct rlimit lim = {bytes, bytes};
        if (o < 0 || dup2(o, 1) < 0 || dup2(err[1], 2) < 0 || setrlimit(RLIMIT_FSIZE, &lim) != 0)
            _exit(125);
        close(err[0]);
        int nargs = 0;
        while (args[nargs])
            nargs++;
        char *argv[32];
        argv[0] = (char *)cli_test_bin();
        for (int i = 0; i < nargs && i < 30; i++)
            argv[i + 1] = (char *)args[i];
        argv[nargs + 1] = NULL;
        execv(argv[0], argv);
        _exit(126);
    }
    close(err[1]);
    int status = wait_status(pid, 120);
    char *text = calloc(1, 65536);
    cr_assert_not_null(text);
    size_t len = 0;
    for (ssize_t n; len < 65535 && (n = read(err[0], text + len, 65535 - len)) > 0;)
        len += (size_t)n;
    close(err[0]);
    *err_text = text;
    return status;
}

/* Past the limit, a write fails with EFBIG instead of killing the program
 * with SIGXFSZ (which left partial files and no word): one line, exit 1,
 * and nothing half-written left. */
Test(hardening, a_file_size_limit_is_a_one_line_error_not_a_silent_death)
{
    char out[512], policy[512], frames[512], tmp[512], cache[512], null_out[512];
    in_root(out, sizeof out, "stdout.csv");
    in_root(policy, sizeof policy, "p.pol");
    in_root(frames, sizeof frames, "frames");
    in_root(tmp, sizeof tmp, "tmp");
    in_root(cache, sizeof cache, "cache");
    in_root(null_out, sizeof null_out, "ignored.out");
    cr_assert_eq(mkdir(tmp, 0700), 0);
    setenv("TMPDIR", tmp, 1);
    char golden[600];
    snprintf(golden, sizeof golden, "%s/cartpole.csv", getenv("CARTSIM_GOLDEN") ? getenv("CARTSIM_GOLDEN")
                                                                                 : "../shared/golden");
    const struct {
        const char *what;
        const char *args[16];
        rlim_t bytes;
        const char *stdout_to;
    } cases[] = {
        {"a policy", {"train", "--backend", "interp", "--pop", "8", "--generations", "1", "--out", policy, NULL},
         64, null_out},
        {"frames", {"render", "--backend", "interp", "--steps", "2", "--out", frames, NULL}, 512, null_out},
        {"the kernel source", {"run", "--backend", "cpu", "--steps", "1", NULL}, 1024,
         null_out},
        {"a replay", {"replay", "--env", "cartpole", "--backend", "interp", golden, NULL}, 4096, out},
    };
    setenv("XDG_CACHE_HOME", cache, 1);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *msg;
        int status = run_cli_size_limited(cases[k].args, cases[k].bytes, cases[k].stdout_to, &msg);
        cr_expect_eq(status, 1, "%s: exit %d (153: killed by SIGXFSZ): %s", cases[k].what, status, msg);
        cr_expect(strstr(msg, "File too large") && strncmp(msg, "cartsim: ", 9) == 0 &&
                      strchr(msg, '\n') == msg + strlen(msg) - 1,
                  "%s: one line saying why: '%s'", cases[k].what, msg);
        free(msg);
    }
    struct stat st;
    cr_expect_neq(stat(policy, &st), 0, "a partial policy file was left");
    cr_expect_eq(count_files(frames), 0, "a partial frame was left in %s", frames);
    cr_expect_eq(count_files(tmp), 0, "a build directory was left in TMPDIR");
    unsetenv("TMPDIR");
}
