/* The language's integers, arrays, tables, loops and draws (issue 26):
 * the example environments of tests/envs/ run on the interpreter for
 * hundreds of steps against independent implementations written here in
 * C, with the random words replayed (cs_lanes.step_words and
 * restart_words) so both sides see the same draws; then each construct's
 * values, one step at a time. Its errors are in tests/test_lang_errors.c,
 * docs/dsl.md's examples in tests/test_dsl_examples.c. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit.h"
#include "splitmix.h"

#define CS_INLINE static inline
#include "mathi.h"
#include "philox.h"
#include "rng.h"

/* ---- lanes over a parsed program, run by the interpreter ------------- */

typedef struct {
    cs_program *p;
    unsigned n;                  /* lanes */
    void **carried;              /* [n_carried] arrays of each slot's type */
    int *action;                 /* a discrete action per lane */
    int *segstep;
    float *obs;
    long long *obs_int;
    double *reward;
    unsigned char *terminated, *truncated;
    unsigned *step_words, *restart_words;
    uint64_t random;             /* splitmix state of the replayed words */
    long long t;
} run;

static char *root_file(const char *rel)
{
    const char *root = getenv("CARTSIM_ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root ? root : ".", rel);
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static cs_program *parse_text(const char *src, cs_type real)
{
    cs_program *p = NULL;
    char err[512];
    int rc = cs_parse(src, strlen(src), "t.env", real, NULL, 0, &p, err, sizeof err);
    cr_assert_eq(rc, 0, "expected to parse, got: %s", err);
    return p;
}

static size_t slot_size(cs_type t) { return t == CS_F64 ? 8 : t == CS_BOOL ? 1 : 4; }

static run *run_open(const char *src, cs_type real, unsigned n, uint64_t seed)
{
    run *r = calloc(1, sizeof *r);
    r->p = parse_text(src, real);
    r->n = n;
    r->random = seed;
    const cs_program *p = r->p;
    r->carried = calloc(p->n_carried + 1, sizeof *r->carried);
    for (unsigned k = 0; k < p->n_carried; k++)
        r->carried[k] = calloc(n, slot_size(p->carried[k].type));
    r->action = calloc(n, sizeof *r->action);
    r->segstep = calloc(n, sizeof *r->segstep);
    r->obs = calloc((size_t)(p->n_obs + 1) * n, sizeof *r->obs);
    r->obs_int = calloc((size_t)(p->n_obs_int + 1) * n, sizeof *r->obs_int);
    r->reward = calloc(n, sizeof *r->reward);
    r->terminated = calloc(n, 1);
    r->truncated = calloc(n, 1);
    r->step_words = calloc((size_t)(p->n_step_draws + 1) * n, sizeof *r->step_words);
    r->restart_words = calloc((size_t)(p->n_restart_draws + 1) * n, sizeof *r->restart_words);
    return r;
}

static void run_free(run *r)
{
    for (unsigned k = 0; k < r->p->n_carried; k++)
        free(r->carried[k]);
    free(r->carried);
    free(r->action);
    free(r->segstep);
    free(r->obs);
    free(r->obs_int);
    free(r->reward);
    free(r->terminated);
    free(r->truncated);
    free(r->step_words);
    free(r->restart_words);
    cs_program_free(r->p);
    free(r);
}

static cs_lanes lanes(run *r, unsigned begin, unsigned end)
{
    void *inputs[1] = {r->action};
    (void)inputs;
    cs_lanes l = {.begin = begin, .end = end, .t = r->t, .seed = 99, .stride = r->n, .carried = r->carried,
                  .segstep = r->segstep, .obs = r->obs, .obs_int = r->obs_int, .reward = r->reward,
                  .terminated = r->terminated, .truncated = r->truncated, .mode = CS_MODE_NO_RESTART,
                  .step_words = r->step_words, .restart_words = r->restart_words};
    return l;
}

/* A fresh start for lanes [begin, end), with new replayed restart words. */
static void run_restart(run *r, unsigned begin, unsigned end)
{
    for (unsigned k = 0; k < r->p->n_restart_draws; k++)
        for (unsigned i = begin; i < end; i++)
            r->restart_words[k * r->n + i] = (unsigned)splitmix_next(&r->random);
    cs_lanes l = lanes(r, begin, end);
    cs_interp_restart(r->p, &l);
}

/* One step of every lane with the actions in r->action and new words. */
static void run_step(run *r)
{
    for (unsigned k = 0; k < r->p->n_step_draws * r->n; k++)
        r->step_words[k] = (unsigned)splitmix_next(&r->random);
    void *inputs[1] = {r->action};
    cs_lanes l = lanes(r, 0, r->n);
    l.inputs = inputs;
    cs_interp_step(r->p, &l);
    r->t++;
}

static int var_index(const run *r, const char *name)
{
    for (unsigned v = 0; v < r->p->n_vars; v++)
        if (!strcmp(r->p->vars[v].name, name))
            return (int)v;
    cr_assert_fail("no state '%s'", name);
    return -1;
}

/* Element e of state `name` in lane i, as a double. */
static double get(const run *r, const char *name, unsigned i, unsigned e)
{
    const cs_state_var *v = &r->p->vars[var_index(r, name)];
    cr_assert_lt(e, v->size);
    const void *a = r->carried[v->slot + e];
    switch (v->type) {
    case CS_F64: return ((const double *)a)[i];
    case CS_F32: return ((const float *)a)[i];
    case CS_I32: return ((const int *)a)[i];
    default: return ((const unsigned char *)a)[i];
    }
}

static unsigned step_word(const run *r, unsigned draw, unsigned lane) { return r->step_words[draw * r->n + lane]; }
static unsigned restart_word(const run *r, unsigned draw, unsigned lane)
{
    return r->restart_words[draw * r->n + lane];
}

/* ---- FrozenLake ------------------------------------------------------ */

static const int frozen_map[4][4] = {{0, 0, 0, 0}, {0, 1, 0, 1}, {0, 0, 0, 1}, {1, 0, 0, 2}};

Test(examples, frozen_lake_against_gymnasiums_rules)
{
    char *src = root_file("tests/envs/frozen_lake.env");
    enum { N = 32, STEPS = 400 };
    run *r = run_open(src, CS_F64, N, 1);
    cr_assert_eq(r->p->n_step_draws, 1);
    cr_assert_eq(r->p->n_obs_int, 1);
    cr_assert_eq(r->p->obs_items[0].space, CS_OBS_DISCRETE);
    cr_assert_eq(r->p->obs_items[0].n, 16);
    run_restart(r, 0, N);
    int row[N] = {0}, col[N] = {0}, steps[N] = {0};
    uint64_t pick = 7;
    unsigned goals = 0, holes = 0;
    for (int t = 0; t < STEPS; t++) {
        for (unsigned i = 0; i < N; i++)
            r->action[i] = (int)(splitmix_next(&pick) % 4);
        run_step(r);
        for (unsigned i = 0; i < N; i++) {
            /* gymnasium's categorical_sample over [1/3, 1/3, 1/3] with the same uniform */
            double u = cs_u01_f64(step_word(r, 0, i)), p = 1.0 / 3.0, c0 = p, c1 = c0 + p;
            int turn = c0 > u ? 0 : c1 > u ? 1 : 2;
            int a = (r->action[i] + turn + 3) % 4;
            int dr = a == 1 ? 1 : a == 3 ? -1 : 0, dc = a == 2 ? 1 : a == 0 ? -1 : 0;
            row[i] = row[i] + dr < 0 ? 0 : row[i] + dr > 3 ? 3 : row[i] + dr;
            col[i] = col[i] + dc < 0 ? 0 : col[i] + dc > 3 ? 3 : col[i] + dc;
            int cell = frozen_map[row[i]][col[i]];
            steps[i]++;
            cr_assert_eq(get(r, "row", i, 0), row[i], "lane %u step %d", i, t);
            cr_assert_eq(get(r, "col", i, 0), col[i], "lane %u step %d", i, t);
            cr_assert_eq(r->obs_int[i], row[i] * 4 + col[i]);
            cr_assert_eq(r->terminated[i], cell != 0);
            cr_assert_eq(r->truncated[i], steps[i] >= 100);
            cr_assert(r->reward[i] == (cell == 2 ? 1.0 : 0.0));
            if (cell || steps[i] >= 100) {
                goals += cell == 2;
                holes += cell == 1;
                run_restart(r, i, i + 1);
                row[i] = col[i] = steps[i] = 0;
                r->segstep[i] = 0;
                cr_assert_eq(get(r, "row", i, 0), 0);
                cr_assert_eq(r->obs_int[i], 0, "the restart writes the observation");
            }
        }
    }
    cr_assert_gt(holes, 100, "%u holes", holes);
    cr_assert_gt(goals, 0, "no goal reached in %d steps of %d lanes", STEPS, N);
    run_free(r);
    free(src);
}

/* ---- Catch ----------------------------------------------------------- */

Test(examples, catch_board_built_with_arrays)
{
    char *src = root_file("tests/envs/catch.env");
    enum { N = 16, STEPS = 300, ROWS = 10, COLS = 5 };
    run *r = run_open(src, CS_F32, N, 2);
    cr_assert_eq(r->p->n_obs, ROWS * COLS);
    cr_assert_eq(r->p->n_restart_draws, 1);
    cr_assert_eq(r->p->n_step_draws, 0);
    run_restart(r, 0, N);
    int br[N], bc[N], pad[N];
    for (unsigned i = 0; i < N; i++) {
        br[i] = 0;
        bc[i] = cs_bounded(restart_word(r, 0, i), COLS);
        pad[i] = 2;
        cr_assert_eq(get(r, "ball_col", i, 0), bc[i]);
    }
    uint64_t pick = 3;
    int catches = 0, misses = 0;
    for (int t = 0; t < STEPS; t++) {
        for (unsigned i = 0; i < N; i++)
            r->action[i] = (int)(splitmix_next(&pick) % 3);
        run_step(r);
        for (unsigned i = 0; i < N; i++) {
            int p = pad[i] + r->action[i] - 1;
            pad[i] = p < 0 ? 0 : p > COLS - 1 ? COLS - 1 : p;
            br[i]++;
            bool end = br[i] == ROWS - 1;
            double reward = end ? (bc[i] == pad[i] ? 1.0 : -1.0) : 0.0;
            cr_assert_eq(get(r, "paddle", i, 0), pad[i]);
            cr_assert_eq(r->terminated[i], end);
            cr_assert(r->reward[i] == reward);
            for (int y = 0; y < ROWS; y++)
                for (int x = 0; x < COLS; x++) {
                    float want = (y == br[i] && x == bc[i]) || (y == ROWS - 1 && x == pad[i]) ? 1.0f : 0.0f;
                    cr_assert(r->obs[(y * COLS + x) * N + i] == want, "lane %u step %d cell %d,%d", i, t, y, x);
                }
            if (end) {
                catches += reward > 0;
                misses += reward < 0;
                run_restart(r, i, i + 1);
                br[i] = 0;
                bc[i] = cs_bounded(restart_word(r, 0, i), COLS);
                pad[i] = 2;
            }
        }
    }
    cr_assert(catches > 0 && misses > 0, "%d catches, %d misses", catches, misses);
    run_free(r);
    free(src);
}

/* ---- the chain: a fold over links ------------------------------------ */

static void chain_tip(const double *theta, double *x, double *y)
{
    double a = 0.0;
    *x = 0.0;
    *y = 0.0;
    for (int i = 0; i < 8; i++) {
        a = a + theta[i];
        *x = *x + cos(a);
        *y = *y + sin(a);
    }
}

Test(examples, chain_folds_over_its_links)
{
    char *src = root_file("tests/envs/chain.env");
    enum { N = 8, STEPS = 300 };
    run *r = run_open(src, CS_F64, N, 5);
    cr_assert_eq(r->p->n_restart_draws, 8, "uniform(shape=[8]): eight draws");
    cr_assert_eq(r->p->n_obs, 10);
    run_restart(r, 0, N);
    double theta[N][8];
    for (unsigned i = 0; i < N; i++)
        for (unsigned k = 0; k < 8; k++) {
            /* element k of the array draw is restart draw k: lo + (hi - lo) * u */
            theta[i][k] = -0.1 + (0.1 - -0.1) * cs_u01_f64(restart_word(r, k, i));
            cr_assert(get(r, "theta", i, k) == theta[i][k]);
        }
    uint64_t pick = 11;
    for (int t = 0; t < STEPS; t++) {
        for (unsigned i = 0; i < N; i++)
            r->action[i] = (int)(splitmix_next(&pick) % 16);
        run_step(r);
        for (unsigned i = 0; i < N; i++) {
            int joint = r->action[i] / 2;
            theta[i][joint] = theta[i][joint] + (r->action[i] % 2 == 0 ? -0.1 : 0.1);
            double x, y;
            chain_tip(theta[i], &x, &y);
            double d = sqrt(pow(x - 3.0, 2.0) + pow(y - 4.0, 2.0));
            for (unsigned k = 0; k < 8; k++)
                cr_assert(get(r, "theta", i, k) == theta[i][k], "lane %u step %d joint %u", i, t, k);
            cr_assert(r->reward[i] == -d, "lane %u step %d: %.17g, want %.17g", i, t, r->reward[i], -d);
            cr_assert_eq(r->terminated[i], d < 0.25);
            cr_assert(r->obs[8 * N + i] == (float)x && r->obs[9 * N + i] == (float)y);
            if (r->terminated[i] || r->truncated[i]) {
                run_restart(r, i, i + 1);
                r->segstep[i] = 0;
                for (unsigned k = 0; k < 8; k++)
                    theta[i][k] = get(r, "theta", i, k);
            }
        }
    }
    run_free(r);
    free(src);
}

/* ---- bricks: a scatter removes a brick ------------------------------- */

Test(examples, bricks_are_removed_by_a_scatter)
{
    char *src = root_file("tests/envs/bricks.env");
    enum { N = 16, STEPS = 500 };
    run *r = run_open(src, CS_F32, N, 9);
    cr_assert_eq(r->p->n_restart_draws, 101, "100 bernoulli draws, then randint");
    run_restart(r, 0, N);
    bool bricks[N][10][10];
    int row[N], col[N], dr[N], dc[N];
    for (unsigned i = 0; i < N; i++) {
        for (unsigned e = 0; e < 100; e++) {
            /* bernoulli(0.3) = u < 0.3, in f32 */
            bricks[i][e / 10][e % 10] = cs_u01_f32(restart_word(r, e, i)) < 0.3f;
            cr_assert_eq(get(r, "bricks", i, e), bricks[i][e / 10][e % 10]);
        }
        row[i] = 9;
        col[i] = cs_bounded(restart_word(r, 100, i), 10);
        dr[i] = -1;
        dc[i] = 1;
    }
    uint64_t pick = 13;
    unsigned hits = 0;
    for (int t = 0; t < STEPS; t++) {
        for (unsigned i = 0; i < N; i++)
            r->action[i] = (int)(splitmix_next(&pick) % 3);
        run_step(r);
        for (unsigned i = 0; i < N; i++) {
            int want = r->action[i] == 0 ? -1 : r->action[i] == 2 ? 1 : dc[i];
            int c1 = col[i] + want, dc1 = c1 < 0 || c1 > 9 ? -want : want;
            int r1 = row[i] + dr[i], dr1 = r1 < 0 || r1 > 9 ? -dr[i] : dr[i];
            int nr = row[i] + dr1, nc = col[i] + dc1;
            nr = nr < 0 ? 0 : nr > 9 ? 9 : nr;
            nc = nc < 0 ? 0 : nc > 9 ? 9 : nc;
            bool hit = bricks[i][nr][nc];
            bricks[i][nr][nc] = false;
            if (!hit) {
                row[i] = nr;
                col[i] = nc;
            }
            dr[i] = hit ? -dr1 : dr1;
            dc[i] = dc1;
            hits += hit;
            bool any = false;
            for (unsigned e = 0; e < 100; e++) {
                any |= bricks[i][e / 10][e % 10];
                cr_assert_eq(get(r, "bricks", i, e), bricks[i][e / 10][e % 10], "lane %u step %d brick %u", i, t, e);
            }
            cr_assert_eq(get(r, "row", i, 0), row[i]);
            cr_assert_eq(get(r, "col", i, 0), col[i]);
            cr_assert_eq(get(r, "dr", i, 0), dr[i]);
            cr_assert(r->reward[i] == (hit ? 1.0 : 0.0));
            cr_assert_eq(r->terminated[i], !any);
            cr_assert(r->obs[(100 + 1) * N + i] == (float)col[i], "a bool array and ints observed as reals");
        }
    }
    cr_assert_gt(hits, 50, "%u bricks hit", hits);
    run_free(r);
    free(src);
}

/* ---- visit: count() ends the episode --------------------------------- */

Test(examples, visit_ends_when_count_reaches_every_cell)
{
    char *src = root_file("tests/envs/visit.env");
    enum { N = 16, STEPS = 400 };
    run *r = run_open(src, CS_F64, N, 17);
    cr_assert_eq(r->p->n_obs, 8);
    cr_assert_eq(r->p->n_obs_int, 1);
    run_restart(r, 0, N);
    bool seen[N][8];
    int pos[N], steps[N];
    for (unsigned i = 0; i < N; i++) {
        pos[i] = cs_bounded(restart_word(r, 0, i), 8);
        steps[i] = 0;
        for (int k = 0; k < 8; k++)
            seen[i][k] = k == pos[i];
    }
    uint64_t pick = 19;
    unsigned episodes = 0;
    for (int t = 0; t < STEPS; t++) {
        for (unsigned i = 0; i < N; i++)
            r->action[i] = (int)(splitmix_next(&pick) % 2);
        run_step(r);
        for (unsigned i = 0; i < N; i++) {
            int p = pos[i] + 2 * r->action[i] - 1;
            pos[i] = p < 0 ? 0 : p > 7 ? 7 : p;
            double reward = seen[i][pos[i]] ? 0.0 : 1.0;
            seen[i][pos[i]] = true;
            int count = 0;
            for (int k = 0; k < 8; k++) {
                count += seen[i][k];
                cr_assert_eq(get(r, "seen", i, (unsigned)k), seen[i][k]);
                cr_assert(r->obs[k * N + i] == (float)seen[i][k]);
            }
            steps[i]++;
            cr_assert_eq(r->obs_int[i], pos[i]);
            cr_assert(r->reward[i] == reward);
            cr_assert_eq(r->terminated[i], count == 8);
            if (count == 8 || steps[i] >= 100) {
                episodes += count == 8;
                run_restart(r, i, i + 1);
                r->segstep[i] = 0;
                pos[i] = cs_bounded(restart_word(r, 0, i), 8);
                steps[i] = 0;
                for (int k = 0; k < 8; k++)
                    seen[i][k] = k == pos[i];
            }
        }
    }
    cr_assert_gt(episodes, 10, "%u episodes visited every cell", episodes);
    run_free(r);
    free(src);
}
