/* The cpu backend's step loop vectorizes where a program reads an array at
 * run-time indices (issue 26: Breakout-MinAtar against its hand-written
 * loop, bench/ref_breakout.c). Breakout's rollout step, compiled by the
 * backend with its own flags, has its lane loops with a run-time index,
 * the step's gather brick_map[new_y, new_x] and the struck brick's store
 * into the map's rows, vectorized whole by GCC, not left scalar beside
 * vectorized pieces. That needs the rows read and written as one flat
 * array, `#pragma GCC ivdep` on the loop and no jump threading in its
 * function (jit/emit.c, gathers_in_loop): without any of them the test
 * fails. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agents.h"
#include "cli_test.h"
#include "jit.h"
#include "lanes_any.h"

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s (set CARTSIM_ROOT)", path);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    cr_assert_geq(n, 0);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    cr_assert_not_null(s);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

/* Breakout-MinAtar's C (f32, fusion full, unroll 1), as the runtime builds it. */
static char *breakout_source(void)
{
    const char *r = getenv("CARTSIM_ROOT");
    char path[600];
    snprintf(path, sizeof path, "%s/envs/breakout.env", r && *r ? r : ".");
    char *text = read_all(path), err[1024];
    cs_program *p = NULL;
    cr_assert_eq(cs_parse(text, strlen(text), path, CS_F32, NULL, 0, &p, err, sizeof err), 0, "%s", err);
    free(text);
    cr_assert_eq(cs_policy_random(p), 0);
    cr_assert_eq(cs_program_bind_policy(p), 0);
    cr_assert_eq(cs_optimize(p, CS_FUSION_FULL, NULL, err, sizeof err), 0, "%s", err);
    cs_text src;
    cr_assert_eq(lanes_emit(p, CS_FUSION_FULL, 1, CS_DIALECT_C, &src, err, sizeof err, NULL), 0, "%s", err);
    cs_program_free(p);
    return src.data;
}

/* The lines (from 1) of the rollout's lane loops that hold a gather's or a
 * scatter's index (`int g<id>_`): for each, the last `for (int i = 0; ...`
 * before it. Returns how many (at most max). */
static int indexed_loop_lines(const char *src, int *lines, int max)
{
    const char *rollout = strstr(src, "#ifndef CS_ONLY_STEP"), *step = strstr(src, "#ifndef CS_ONLY_ROLLOUT");
    cr_assert(rollout && step && rollout < step);
    static const char loop_text[] = "for (int i = 0; i < nv; i++)", index_text[] = "\n        int g";
    int n = 0, line = 1, loop = 0;
    for (const char *c = src; c < step; c++) {
        if (*c == '\n')
            line++;
        if (c < rollout)
            continue;
        if (!strncmp(c, loop_text, strlen(loop_text)))
            loop = line;
        if (!strncmp(c, index_text, strlen(index_text)) && loop && (n == 0 || lines[n - 1] != loop)) {
            cr_assert_lt(n, max);
            lines[n++] = loop;
        }
    }
    return n;
}

/* A compiler that runs cc with the backend's flags and notes, for the
 * rollout's half, what the vectorizer did (-fopt-info-vec-all). */
static void vectorizer_logging_cc(const char *dir, char wrapper[128], char log[128])
{
    snprintf(wrapper, 128, "%s/cc", dir);
    snprintf(log, 128, "%s/vec.log", dir);
    char script[512];
    int n = snprintf(script, sizeof script,
                     "#!/bin/sh\nfor a in \"$@\"; do case $a in -DCS_ONLY_ROLLOUT) "
                     "exec cc \"$@\" -fopt-info-vec-all='%s';; esac; done\nexec cc \"$@\"\n",
                     log);
    cli_test_write_file(wrapper, script, (size_t)n);
    cr_assert_eq(chmod(wrapper, 0700), 0);
}

Test(vectorize, breakouts_lane_loops_with_a_gather_or_a_scatter_are_vectorized_whole)
{
    char dir[] = "/tmp/cartsim-vec-XXXXXX", wrapper[128], log[128];
    cli_test_scratch(dir);
    vectorizer_logging_cc(dir, wrapper, log);
    char *src = breakout_source();
    int lines[8], n = indexed_loop_lines(src, lines, 8);
    cr_assert_eq(n, 2, "%d lane loops with an index, not the step's gather and the struck brick's store", n);
    cs_cache cache = {.dir = ""};
    cs_cpu_kernel k;
    char err[1024];
    cr_assert_eq(cs_cpu_compile(src, wrapper, 0, NULL, &cache, &k, err, sizeof err), 0, "%s", err);
    cs_cpu_unload(&k);
    free(src);
    char *notes = read_all(log);
    for (int j = 0; j < n; j++) {
        char at[32];
        snprintf(at, sizeof at, ":%d:", lines[j]);
        bool vectorized = false, missed = false;
        char *copy = strdup(notes), *save = NULL;
        for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
            if (!strstr(l, at))
                continue;
            vectorized |= strstr(l, "optimized: loop vectorized") != NULL;
            missed |= strstr(l, "missed: couldn't vectorize loop") != NULL;
        }
        free(copy);
        cr_expect(vectorized, "the lane loop at line %d is not vectorized", lines[j]);
        cr_expect(!missed, "the lane loop at line %d is vectorized only in part (GCC split it)", lines[j]);
    }
    free(notes);
    cli_test_remove_tree(dir);
}
