/* The tiered compile (cs_config.tier): a kernel whose optimized build is
 * missing from the cache is first built quickly (-Og, backend_cpu.c's QUICK
 * level, cached under a key of its own), and its optimized build (SPEED,
 * stored in the cache) goes on here, in a thread of the handle's own, while
 * the quick one runs:
 *
 *   cs_compile: quick build (or its cache entry) ──▶ runs ...... swap ──▶ optimized runs
 *                   └─▶ thread: optimized build ──────────────▶ done ─┘
 *
 * Caching the quick kernel too keeps a run shorter than the optimized build
 * (which closing the handle stops) from compiling again every time: the
 * next run starts from the quick entry, and the first run that lasts long
 * enough stores the optimized one, which every later run uses at once.
 *
 * The levels change no bit (neither contracts nor reassociates), so the
 * swap may come between any two calls. It comes only there and only on the
 * calling thread (cs_kernel_tier_up, from each call of sim/env.c): no entry
 * point is swapped under a running call. The thread builds with an
 * interrupt flag of its own, raised by cs_cpu_background_stop: the
 * compiler's processes are ended and reaped by the build's own supervision
 * (supervise.c), within its 20 ms poll. A failed optimized build leaves the
 * quick kernel running and says so in the kernel's notice.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"

struct cs_cpu_background {
    pthread_t thread;
    char *source, *cc;
    cs_cpu_opt opt;
    double timeout_s;
    cs_cache *cache;
    volatile sig_atomic_t stop;   /* raised once by the owner's thread, polled by the build */
    atomic_bool done;             /* the build is over: rc, kernel and err are the owner's */
    int rc;
    cs_cpu_kernel kernel;
    char err[1024];
    bool launched, joinable;      /* the thread was started (or failed to), and is there to join */
    double not_before_ms;         /* deferred: started by the first take from then on */
    double started_ms;            /* cs_now_ms */
};

/* A quick kernel that came from the cache starts its optimized build only
 * this long after (at a call into the kernel): a handle closed sooner, a
 * short script's or a test's, spends nothing on compilers it would stop. */
#define DEFER_MS 100.0

static void *build(void *arg)
{
    cs_cpu_background *b = arg;
    b->rc = cs_cpu_compile_opt(b->source, b->cc, b->opt, b->timeout_s, &b->stop, b->cache, &b->kernel, b->err,
                               sizeof b->err);
    atomic_store_explicit(&b->done, true, memory_order_release);
    return NULL;
}

static void free_background(cs_cpu_background *b)
{
    free(b->source);
    free(b->cc);
    free(b);
}

/* The thread, started now; on failure the build is over, failed. */
static void launch(cs_cpu_background *b)
{
    b->launched = true;
    b->started_ms = cs_now_ms();
    /* Every signal blocked in the thread: the program's handlers run on its
     * own threads, and a signal meant to interrupt its calls interrupts them. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&b->thread, NULL, build, b);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    b->joinable = e == 0;
    if (e) {
        b->rc = CS_CPU_FAIL;
        snprintf(b->err, sizeof b->err, "cannot start a thread: %s", strerror(e));
        atomic_store(&b->done, true);
    }
}

int cs_cpu_background_start(const char *source, const char *cc, cs_cpu_opt opt, double timeout_s, cs_cache *cache,
                            bool defer, cs_cpu_background **out, char *err, size_t err_size)
{
    *out = NULL;
    cs_cpu_background *b = calloc(1, sizeof *b);
    if (!b || !(b->source = strdup(source)) || (cc && !(b->cc = strdup(cc)))) {
        if (b)
            free_background(b);
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    b->opt = opt;
    b->timeout_s = timeout_s;
    b->cache = cache;
    atomic_init(&b->done, false);
    b->not_before_ms = cs_now_ms() + (defer ? DEFER_MS : 0);
    if (!defer) {
        launch(b);
        if (!b->joinable) {
            snprintf(err, err_size, "%s", b->err);
            free_background(b);
            return -1;
        }
    }
    *out = b;
    return 0;
}

int cs_cpu_background_take(cs_cpu_background **bp, bool wait, cs_cpu_kernel *out, char *err, size_t err_size)
{
    cs_cpu_background *b = *bp;
    if (!b->launched && (wait || cs_now_ms() >= b->not_before_ms))
        launch(b);
    if (!wait && !atomic_load_explicit(&b->done, memory_order_acquire))
        return 0;
    if (b->joinable)
        pthread_join(b->thread, NULL);
    int rc = b->rc ? -1 : 1;
    if (rc == 1)
        *out = b->kernel;
    else
        snprintf(err, err_size, "%s", b->err);
    free_background(b);
    *bp = NULL;
    return rc;
}

void cs_cpu_background_stop(cs_cpu_background *b)
{
    if (!b)
        return;
    b->stop = 1;
    if (b->joinable)
        pthread_join(b->thread, NULL);
    if (b->launched && b->rc == 0)
        cs_cpu_unload(&b->kernel);
    free_background(b);
}

/* The optimized build takes about this many times the quick one (gcc 12,
 * the classic environments at unroll 10: 2.3 to 8, bench/RESULTS.md
 * section 11), and at least BUILD_MIN_MS: a quick kernel from the cache
 * took a millisecond, which says nothing of the build. */
#define BUILD_OVER_QUICK 4.0
#define BUILD_MIN_MS 1000.0

bool cs_kernel_tier_worth_waiting(const cs_kernel *k, double quick_ms_left)
{
    if (!k->optimizing || quick_ms_left <= 0)
        return false;
    double ran = k->optimizing->launched ? cs_now_ms() - k->optimizing->started_ms : 0;
    double expected = BUILD_OVER_QUICK * k->compile_ms;
    double build_left = (expected > BUILD_MIN_MS ? expected : BUILD_MIN_MS) - ran;
    if (build_left < ran / 4)   /* past the estimate: a quarter of its time again, say */
        build_left = ran / 4;
    return quick_ms_left > build_left;
}

static void swap(cs_kernel *k, bool wait)
{
    if (!k->optimizing)
        return;
    cs_cpu_kernel fast;
    char why[1024];
    int rc = cs_cpu_background_take(&k->optimizing, wait, &fast, why, sizeof why);
    if (rc == 0)
        return;
    if (rc == 1 && fast.block_bytes != k->cpu.block_bytes) {   /* one source: never expected */
        cs_cpu_unload(&fast);
        snprintf(why, sizeof why, "its blocks of lanes differ from the quick kernel's");
        rc = -1;
    }
    if (rc == 1) {
        cs_cpu_unload(&k->cpu);
        k->cpu = fast;
        return;
    }
    char rest[sizeof k->notice];
    snprintf(rest, sizeof rest, "%s", k->notice);
    snprintf(k->notice, sizeof k->notice, "the optimized build failed (%.300s): running the quick kernel%s%.150s",
             why, rest[0] ? "; " : "", rest);
}

void cs_kernel_tier_up(cs_kernel *k) { swap(k, false); }
void cs_kernel_tier_wait(cs_kernel *k) { swap(k, true); }
