/* The tiered compile (jit/tier.c, cs_config.tier): a kernel missing from the
 * cache runs a quick -Og build at once and the optimized one is swapped in
 * between two calls once built; the results are the same bits throughout.
 *
 * Each test runs in a fresh directory (the kernel cache, TMPDIR) with a C
 * compiler of its own: a script that logs every -O flag and holds an
 * optimized (-O2, -O3) compile until the file `go` exists (or fails it when
 * `fail` exists), so that which kernel runs when is the test's choice, not
 * the machine's speed.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cartsim.h"
#include "cli_test.h"
#include "jit.h"

static char root[256], cache_dir[300], cc[300];

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/cartsim-tier-XXXXXX");
    cli_test_scratch_tmpdir(root);
    snprintf(cache_dir, sizeof cache_dir, "%s/cache", root);
    snprintf(cc, sizeof cc, "%s/cc", root);
    char script[2048];
    int n = snprintf(script, sizeof script,
                     "#!/bin/sh\n"
                     "case \" $* \" in *' -O3 '*|*' -O2 '*) echo $$ >> '%s/optimized.pids';; esac\n"
                     "for a; do case $a in -O*) echo \"$a\" >> '%s/levels.log';; esac; done\n"
                     "case \" $* \" in *' -O3 '*|*' -O2 '*)\n"
                     "  while [ ! -e '%s/go' ] && [ ! -e '%s/fail' ]; do sleep 0.02; done\n"
                     "  [ -e '%s/fail' ] && { echo 'held back by the test' >&2; exit 1; };;\n"
                     "esac\n"
                     "exec cc \"$@\"\n",
                     root, root, root, root, root);
    cli_test_write_file(cc, script, (size_t)n);
    cr_assert_eq(chmod(cc, 0700), 0);
}

static void teardown(void)
{
    if (root[0])
        cli_test_remove_tree(root);
    root[0] = 0;
}

TestSuite(tier, .init = setup, .fini = teardown, .timeout = 600);

static const char *in_root(const char *name)
{
    static char path[320];
    snprintf(path, sizeof path, "%s/%s", root, name);
    return path;
}

static void touch(const char *name) { cli_test_write_file(in_root(name), "", 0); }

static void open_env(const char *name, bool tier, cs_env **env)
{
    cs_config c;
    cs_config_init(&c);
    c.env = name;
    c.num_envs = 300;   /* more than one block of 256 lanes */
    c.unroll = 10;
    c.threads = 1;
    c.backend = CS_BACKEND_CPU;
    c.cache_dir = cache_dir;
    c.cc = cc;
    c.tier = tier;
    cr_assert_eq(cs_env_open(&c, env), CS_OK, "%s: %s", name, cs_env_error(*env));
}

static cs_env_info info_of(cs_env *env)
{
    cs_env_info i;
    cr_assert_eq(cs_env_get_info(env, &i), CS_OK, "%s", cs_env_error(env));
    return i;
}

static uint64_t roll(cs_env *env, int64_t steps)
{
    cs_rollout_stats st;
    cr_assert_eq(cs_env_rollout(env, steps, &st), CS_OK, "%s", cs_env_error(env));
    return st.checksum;
}

/* One-step rollouts (a call into the kernel may swap; cs_env_get_info does
 * not) until the optimized kernel runs or its build failed, at most
 * max_steps of them; *steps counts them. */
static cs_env_info wait_optimized(cs_env *env, int64_t max_steps, int64_t *steps)
{
    cs_env_info i = info_of(env);
    for (*steps = 0; i.optimizing && *steps < max_steps; ++*steps) {
        nanosleep(&(struct timespec){0, 100000000}, NULL);
        roll(env, 1);
        i = info_of(env);
    }
    cr_assert(!i.optimizing, "the optimized build is still running after %lld polls", (long long)*steps);
    return i;
}

static size_t cache_entries(void)
{
    cs_cache c;
    cs_cache_open(&c, cache_dir);
    cs_cache_item *items = NULL;
    size_t n = 0;
    unsigned long long total;
    cr_assert_eq(cs_cache_list(&c, &items, &n, &total), 0);
    free(items);
    cs_cache_close(&c);
    return n;
}

static int count_lines(const char *name, const char *line)
{
    char buf[4096];
    FILE *f = fopen(in_root(name), "r");
    int n = 0;
    while (f && fgets(buf, sizeof buf, f))
        n += strncmp(buf, line, strlen(line)) == 0 && buf[strlen(line)] == '\n';
    if (f)
        fclose(f);
    return n;
}

/* The quick kernel alone, then a rollout split across the swap, then the
 * optimized kernel from the cache: one checksum. The quick kernel is cached
 * under a key of its own (a second tiered open starts from it and still
 * builds the optimized one); the optimized one, once cached, is used at
 * once. */
static void same_bits(const char *name)
{
    enum { STEPS = 300 };   /* short: a longer quick rollout would wait for the build the test holds */
    cs_env *quick, *split, *cached;
    open_env(name, true, &quick);
    cs_env_info i = info_of(quick);
    cr_assert(i.optimizing && !i.cache_hit, "%s: no quick kernel", name);
    cr_assert_eq(cs_env_reset(quick, 7), CS_OK);
    uint64_t quick_sum = roll(quick, STEPS);
    cr_assert(info_of(quick).optimizing);
    cr_assert_eq(cache_entries(), 1, "%s: the quick kernel's entry", name);

    open_env(name, true, &split);
    i = info_of(split);
    cr_assert(i.optimizing && i.cache_hit, "%s: the second tiered open should start from the quick entry", name);
    cr_assert_eq(cs_env_reset(split, 7), CS_OK);
    roll(split, STEPS / 3);
    cr_assert(info_of(split).optimizing);
    touch("go");
    int64_t polled;
    i = wait_optimized(split, STEPS - STEPS / 3, &polled);
    cr_assert_str_empty(i.notice, "%s: %s", name, i.notice);
    uint64_t split_sum = roll(split, STEPS - STEPS / 3 - polled);
    cr_assert_eq(split_sum, quick_sum, "%s: split across the swap %016llx, quick %016llx", name,
                 (unsigned long long)split_sum, (unsigned long long)quick_sum);
    cr_assert_eq(cache_entries(), 2, "%s: the quick and the optimized kernel, keyed apart", name);

    open_env(name, true, &cached);
    i = info_of(cached);
    cr_assert(i.cache_hit && !i.optimizing, "%s: the cached optimized kernel was not used at once", name);
    cr_assert_eq(cs_env_reset(cached, 7), CS_OK);
    uint64_t cached_sum = roll(cached, STEPS);
    cr_assert_eq(cached_sum, quick_sum, "%s: optimized %016llx, quick %016llx", name, (unsigned long long)cached_sum,
                 (unsigned long long)quick_sum);
    cs_env_close(quick);   /* its optimized build was over: nothing to stop */
    cs_env_close(split);
    cs_env_close(cached);
    cr_assert_eq(count_lines("levels.log", "-Og"), 2, "%s: one quick build of two halves", name);
}

Test(tier, cartpole_same_bits) { same_bits("cartpole"); }
Test(tier, acrobot_same_bits) { same_bits("acrobot"); }
Test(tier, pendulum_same_bits) { same_bits("pendulum"); }
Test(tier, mountain_car_same_bits) { same_bits("mountain_car"); }
Test(tier, mountain_car_continuous_same_bits) { same_bits("mountain_car_continuous"); }
Test(tier, breakout_arrays_same_bits) { same_bits("breakout"); }

/* One long rollout call during which the optimized build is over ends on
 * the optimized kernel (it runs in pieces while the build goes on), with the
 * checksum of an untiered rollout. */
Test(tier, a_long_call_swaps_within_itself)
{
    enum { STEPS = 400000 };   /* about 2 s on the optimized kernel, 20x that on the quick one */
    cs_env *env, *off;
    open_env("cartpole", true, &env);
    cr_assert_eq(cs_env_reset(env, 5), CS_OK);
    touch("go");
    cr_assert(info_of(env).optimizing);
    uint64_t sum = roll(env, STEPS);
    cr_assert_not(info_of(env).optimizing, "the rollout ended on the quick kernel");
    open_env("cartpole", false, &off);
    cr_assert(info_of(off).cache_hit);
    cr_assert_eq(cs_env_reset(off, 5), CS_OK);
    cr_assert_eq(roll(off, STEPS), sum);
    cs_env_close(off);
    cs_env_close(env);
}

static void *go_later(void *ms)
{
    nanosleep(&(struct timespec){0, *(long *)ms * 1000000L}, NULL);
    touch("go");
    return NULL;
}

static double since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return 1e3 * (double)(t1.tv_sec - t0->tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0->tv_nsec);
}

/* A long call waits for the optimized kernel (held here until `go`, 600 ms
 * in): that wait is reported as compile time (cs_env_info.compile_ms), not
 * as the rollout's run_ms, so a cold run's throughput is its kernels'. */
Test(tier, a_rollouts_wait_for_the_build_counts_as_compile_time)
{
    cs_env *env;
    open_env("cartpole", true, &env);
    cr_assert_eq(cs_env_reset(env, 5), CS_OK);
    double quick = info_of(env).compile_ms;
    long delay_ms = 600;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, go_later, &delay_ms), 0);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cs_rollout_stats st;
    cr_assert_eq(cs_env_rollout(env, 400000, &st), CS_OK, "%s", cs_env_error(env));
    double wall = since(&t0);
    pthread_join(th, NULL);
    cs_env_info after = info_of(env);
    cr_assert_not(after.optimizing, "the rollout ended on the quick kernel");
    double waited = after.compile_ms - quick;
    cr_assert_geq(waited, 300, "the rollout waited %.0f ms of its %.0f (the build was held 600 ms)", waited, wall);
    cr_assert_leq(st.run_ms + waited, wall + 1, "run %.0f ms + wait %.0f ms > the call's %.0f ms", st.run_ms, waited,
                  wall);
    cr_assert_geq(st.run_ms + waited, wall * 0.9, "run %.0f ms + wait %.0f ms, the call %.0f ms", st.run_ms, waited,
                  wall);
    cs_env_close(env);
}

/* Closing mid-build returns at once: the compiler is ended and reaped, and
 * nothing is left (ASan's leak check, `make asan`). */
Test(tier, close_mid_build_stops_the_compiler)
{
    cs_env *env;
    open_env("acrobot", true, &env);
    cr_assert_eq(cs_env_reset(env, 1), CS_OK);
    roll(env, 10);
    /* the optimized halves are held, waiting for `go` */
    for (int k = 0; k < 3000 && count_lines("levels.log", "-O3") < 2; k++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    cr_assert_eq(count_lines("levels.log", "-O3"), 2);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cs_env_close(env);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    cr_assert_lt(s, 5.0, "closing took %.2f s", s);
    FILE *f = fopen(in_root("optimized.pids"), "r");
    cr_assert_not_null(f);
    int pid, n = 0;
    while (fscanf(f, "%d", &pid) == 1) {
        errno = 0;
        cr_assert(kill(pid, 0) == -1 && errno == ESRCH, "compiler %d outlived its handle", pid);
        n++;
    }
    fclose(f);
    cr_assert_eq(n, 2);
    cr_assert_eq(cache_entries(), 1, "the quick kernel alone");
}

/* A handle that starts from a cached quick kernel and is closed at once (a
 * test's, a short script's) starts no compiler: its build is deferred. */
Test(tier, a_short_handle_of_a_cached_quick_kernel_starts_no_compiler)
{
    cs_env *env;
    open_env("cartpole", true, &env);   /* the quick kernel built and cached */
    for (int k = 0; k < 3000 && count_lines("levels.log", "-O3") < 2; k++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    cs_env_close(env);
    cr_assert_eq(count_lines("levels.log", "-O3"), 2);
    open_env("cartpole", true, &env);
    cs_env_info i = info_of(env);
    cr_assert(i.cache_hit && i.optimizing);
    cr_assert_eq(cs_env_reset(env, 1), CS_OK);
    roll(env, 10);
    cs_env_close(env);
    cr_assert_eq(count_lines("levels.log", "-O3"), 2, "a compiler was started for a handle closed at once");
    cr_assert_eq(count_lines("levels.log", "-Og"), 2);
}

/* A failed optimized build leaves the quick kernel running, and says so. */
Test(tier, failed_optimized_build_keeps_the_quick_kernel)
{
    cs_env *env, *off;
    open_env("cartpole", true, &env);
    cr_assert_eq(cs_env_reset(env, 3), CS_OK);
    uint64_t before = roll(env, 50);
    touch("fail");
    int64_t polled;
    cs_env_info i = wait_optimized(env, 12000, &polled);
    cr_assert(strstr(i.notice, "the optimized build failed") && strstr(i.notice, "held back by the test"), "%s",
              i.notice);
    roll(env, 50);
    cr_assert_eq(cache_entries(), 1, "the quick kernel alone");
    cr_assert_eq(unlink(in_root("fail")), 0);
    touch("go");
    open_env("cartpole", false, &off);
    cr_assert_eq(cs_env_reset(off, 3), CS_OK);
    cr_assert_eq(roll(off, 50), before);
    cs_env_close(off);
    cs_env_close(env);
}

/* tier false is the compile as it was: the optimized kernel built before
 * cs_env_open returns, and cached; no quick build. */
Test(tier, off_builds_the_optimized_kernel_first)
{
    touch("go");
    cs_env *env;
    open_env("cartpole", false, &env);
    cs_env_info i = info_of(env);
    cr_assert(!i.optimizing && !i.cache_hit);
    cr_assert_eq(count_lines("levels.log", "-O3"), 2);
    cr_assert_eq(count_lines("levels.log", "-Og"), 0);
    cr_assert_eq(cache_entries(), 1);
    cs_env_close(env);
}

/* The setting is one row of the table: a flag, a file key, the default on. */
Test(tier, setting_defaults_on_and_turns_off)
{
    cs_config c;
    cs_config_init(&c);
    cr_assert(c.tier);
    char err[256];
    cr_assert_eq(cs_config_set(&c, "tier", "false", err, sizeof err), CS_OK, "%s", err);
    cr_assert(!c.tier);
}
