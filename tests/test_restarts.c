/* Restarts in the C rollout of programs with integer, bool and array states
 * (the suite's environments, whose episodes are short): the lanes of a block
 * past 4 lanes whose episode ended restart together (jit/emit.c's
 * cs_rollout_restarts: one list, the words they read, the values every lane
 * shares once, the others in a loop over the list), not one call of
 * cs_fresh per lane; a restart draws no Philox block that nothing reads.
 * With many restarts the cpu backend's rollouts, whole or in slices, at
 * unroll 1 and 3, equal the interpreter's to the bit, and the library's
 * checksums agree across backends, unroll and threads. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents.h"
#include "cartsim.h"
#include "cli_test.h"
#include "jit.h"
#include "lanes_any.h"

/* Every suite environment, each with some of integer, bool, array, kept
 * and info states, restart draws and shared fresh values. */
static const char *const suite[] = {
    "catch",      "deep_sea",        "memory_chain", "umbrella_chain", "discounting_chain", "bernoulli_bandit",
    "gaussian_bandit", "four_rooms", "meta_maze",    "breakout",       "frozen_lake_8x8",   "taxi",
    "blackjack",  "cliff_walking",
};
#define N_SUITE (sizeof suite / sizeof suite[0])

/* envs/<name>.env, parsed, with the random policy, optimized for fusion full. */
static cs_program *load(const char *name, cs_type real)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/envs/%s.env", cli_test_root(), name);
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof text, f);
    fclose(f);
    cr_assert(len > 0 && len < sizeof text, "%s: %zu bytes", path, len);
    cs_program *p = NULL;
    char err[1024];
    cr_assert_eq(cs_parse(text, len, path, real, NULL, 0, &p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cs_policy_random(p), 0);
    cr_assert_eq(cs_program_bind_policy(p), 0);
    cr_assert_eq(cs_optimize(p, CS_FUSION_FULL, NULL, err, sizeof err), 0, "%s", err);
    return p;
}

/* The C source of p's kernels, full fusion, unroll 1 (malloc'ed). */
static char *source(const cs_program *p)
{
    cs_text src;
    char err[1024];
    cr_assert_eq(lanes_emit(p, CS_FUSION_FULL, 1, CS_DIALECT_C, &src, err, sizeof err, NULL), 0, "%s", err);
    char *text = strdup(src.data);
    cs_text_free(&src);
    return text;
}

/* The text of the generated function `name` (from its definition to the
 * next one's), malloc'ed. */
static char *function_text(const char *src, const char *name)
{
    char head[128];
    snprintf(head, sizeof head, " %s(", name);
    const char *from = strstr(src, head);
    cr_assert(from, "no %s in the source", name);
    const char *to = strstr(from, "\n}\n");
    cr_assert(to);
    return strndup(from, (size_t)(to - from));
}

Test(restarts, a_blocks_ended_lanes_restart_together_in_every_suite_program)
{
    for (size_t k = 0; k < N_SUITE; k++) {
        cs_program *p = load(suite[k], CS_F32);
        char *src = source(p);
        cr_expect(strstr(src, "cs_rollout_restarts(B, L, n, b0, t + 1);"),
                  "%s: a wide block's ended lanes restart one by one", suite[k]);
        cr_expect(!strstr(src, "if (B->end[i])\n                    cs_rollout_restart("),
                  "%s: a loop over the block calls cs_rollout_restart per ended lane", suite[k]);
        cr_expect(strstr(src, "        if (n <= 4)   /* a lane at a time"),
                  "%s: blocks of 5 to 32 lanes restart one by one, where the list is faster", suite[k]);
        free(src);
        cs_program_free(p);
    }
}

/* DeepSea's reset draws a map of 64 bernoullis that it reads only with
 * sample_action_map (false by default, folded away): neither a restart of
 * the block nor cs_fresh computes their 16 Philox blocks. Its map is the
 * same for every lane: computed once, not per lane. */
Test(restarts, a_restart_draws_only_the_words_it_reads)
{
    cs_program *p = load("deep_sea", CS_F32);
    char *src = source(p), *together = function_text(src, "cs_rollout_restarts"), *fresh = function_text(src, "cs_fresh");
    cr_expect(!strstr(together, "cs_rng_lanes(L->seed"), "the block's restarts draw words:\n%s", together);
    cr_expect(!strstr(fresh, "cs_rng_block(seed"), "cs_fresh draws words:\n%s", fresh);
    cr_expect(!strstr(together, "for (int j = 0; j < nr; j++) {\n        const long long lane"),
              "no value of DeepSea's restart differs between lanes, yet a loop computes them per lane:\n%s", together);
    free(together);
    free(fresh);
    free(src);
    cs_program_free(p);
}

enum { LANES = 300, CALLS = 3, STEPS = 70 };

/* Where the unroll-3 run splits the lanes into calls, as threads split a
 * batch: blocks of every kind (a wide one, 5 to 32 lanes, a short one of 1
 * to 4), each restarting its own way. */
static const long long cuts[] = {0, 131, 280, 297, LANES};

/* From a reset, CALLS rollouts of STEPS steps on the interpreter and on the
 * cpu backend (unroll 1 over all lanes; unroll 3 in slices at cuts): the
 * same state, episode counts and returns to the bit after each. */
static void agrees_with_the_interpreter(const char *name, cs_type real)
{
    cs_program *p = load(name, real);
    char err[4096], why[512];
    runner ref, whole, split;
    cr_assert_eq(runner_open(&ref, p, RUN_INTERP, CS_FUSION_FULL, 1, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(runner_open(&whole, p, RUN_CPU, CS_FUSION_FULL, 1, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(runner_open(&split, p, RUN_CPU, CS_FUSION_FULL, 3, NULL, err, sizeof err), 0, "%s", err);
    lanes_any a, b, c;
    lanes_any_init(&a, p, LANES, 1234);
    lanes_any_init(&b, p, LANES, 1234);
    lanes_any_init(&c, p, LANES, 1234);
    runner_restart(&ref, p, &a.l);
    runner_restart(&ref, p, &b.l);
    runner_restart(&ref, p, &c.l);
    for (int call = 0; call < CALLS; call++) {
        a.l.t = b.l.t = c.l.t = (long long)STEPS * call;
        a.l.steps = b.l.steps = c.l.steps = STEPS;
        runner_rollout(&ref, p, &a.l);
        runner_rollout(&whole, p, &b.l);
        for (size_t k = 0; k + 1 < sizeof cuts / sizeof cuts[0]; k++) {
            cs_lanes slice = c.l;
            slice.begin = cuts[k];
            slice.end = cuts[k + 1];
            runner_rollout(&split, p, &slice);
        }
        cr_assert(!lanes_any_differ(&a, &b, false, why, sizeof why), "%s, %s, unroll 1, rollout %d: %s", name,
                  cs_type_name(real), call, why);
        cr_assert(!lanes_any_differ(&a, &c, false, why, sizeof why), "%s, %s, unroll 3 in slices, rollout %d: %s",
                  name, cs_type_name(real), call, why);
    }
    long long episodes = 0;
    for (int i = 0; i < LANES; i++)
        episodes += a.segments[i];
    cr_assert_gt(episodes, 0, "%s: no episode ended, so nothing restarted", name);
    lanes_any_free(&a);
    lanes_any_free(&b);
    lanes_any_free(&c);
    runner_close(&ref);
    runner_close(&whole);
    runner_close(&split);
    cs_program_free(p);
}

Test(restarts, suite_rollouts_with_many_restarts_equal_the_interpreter, .timeout = 900)
{
    for (size_t k = 0; k < N_SUITE; k++)
        agrees_with_the_interpreter(suite[k], CS_F32);
    agrees_with_the_interpreter("breakout", CS_F64);
    agrees_with_the_interpreter("bernoulli_bandit", CS_F64);
    agrees_with_the_interpreter("deep_sea", CS_F64);
}

/* The library's rollout checksum of 300 environments after 150 steps from
 * seed 7 (many restarts), and the episodes that ended. env may carry one
 * parameter override after a space ("four_rooms fail_prob=0.1:0.5": drawn
 * per environment at each restart). */
static uint64_t checksum(const char *env, cs_backend backend, int unroll, int threads, int64_t *episodes)
{
    char name[64];
    snprintf(name, sizeof name, "%s", env);
    char *param = strchr(name, ' ');
    cs_config cfg;
    cs_config_init(&cfg);
    if (param) {
        *param++ = 0;
        cfg.params[cfg.n_params++] = param;
    }
    cfg.env = name;
    cfg.num_envs = LANES;
    cfg.backend = backend;
    cfg.unroll = unroll;
    cfg.threads = threads;
    cs_env *e = NULL;
    cs_status st = cs_env_open(&cfg, &e);
    cr_assert_eq(st, CS_OK, "open %s: %s", env, e ? cs_env_error(e) : "out of memory");
    cr_assert_eq(cs_env_reset(e, 7), CS_OK, "%s", cs_env_error(e));
    cs_rollout_stats stats;
    cr_assert_eq(cs_env_rollout(e, 150, &stats), CS_OK, "%s", cs_env_error(e));
    cs_env_close(e);
    *episodes = stats.episodes;
    return stats.checksum;
}

Test(restarts, checksums_agree_across_backends_unroll_and_threads, .timeout = 600)
{
    static const char *const envs[] = {"catch", "deep_sea", "blackjack", "breakout", "memory_chain",
                                       "four_rooms fail_prob=0.1:0.5"};
    for (size_t k = 0; k < sizeof envs / sizeof envs[0]; k++) {
        int64_t episodes, other;
        uint64_t want = checksum(envs[k], CS_BACKEND_INTERP, 1, 1, &episodes);
        cr_assert_gt(episodes, 0, "%s: no episode ended", envs[k]);
        struct { int unroll, threads; } runs[] = {{1, 1}, {10, 1}, {10, 2}, {1, 2}};
        for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
            uint64_t got = checksum(envs[k], CS_BACKEND_CPU, runs[r].unroll, runs[r].threads, &other);
            cr_expect_eq(got, want, "%s, unroll %d, %d threads: checksum %016llx, the interpreter's %016llx", envs[k],
                         runs[r].unroll, runs[r].threads, (unsigned long long)got, (unsigned long long)want);
            cr_expect_eq(other, episodes, "%s: episodes differ", envs[k]);
        }
    }
}
