/* Array states of grid games (issue 26's Breakout-MinAtar): the C
 * dialect's rollout checks a block's array states for NaN and infinity in
 * its first step only when their next and fresh values can only pick,
 * move or bound finite values (a select, a scatter of a finite constant, a
 * table). From lanes whose arrays hold NaN, infinities and ordinary values
 * (indices in and out of range, JAX's scatter rule), the cpu backend's
 * rollouts, several in a row from where the last stopped, equal the
 * interpreter's to the bit (non-finite restarts included), in f32 and f64,
 * persistent and a launch per kernel; and the generated C is the one meant. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents.h"
#include "jit.h"
#include "lanes_any.h"
#include "splitmix.h"

/* A ball on a 4x5 map of bricks: a struck brick is set to 0 (a masked
 * scatter), an empty map respawns (a select of a table), the episode ends
 * on the bottom row. */
static const char grid_program[] =
    "env grid \"Grid-v0\"\nmax_steps 40\n"
    "const wall = [[0.0, 0, 0, 0, 0], [1.0, 1, 1, 1, 1], [1.0, 1, 0, 1, 1], [0.0, 0, 0, 0, 0]]\n"
    "state y: int, x: int, map: real[4][5], struck: bool\n"
    "action discrete 3\n"
    "observe map != 0.0 in box(0, 1)\n"
    "reset {\n    y = 3\n    x = randint(5)\n    map = wall\n    struck = false\n}\n"
    "step {\n"
    "    nx = action == 0 ? x - 1 : action == 1 ? x + 1 : x\n"
    "    ny = y == 0 ? 3 : y - 1\n"
    "    hit = map[ny, nx] == 1.0\n"
    "    strike = hit and not struck\n"
    "    m = strike ? set(map, ny, nx, 0.0) : map\n"
    "    map' = count(m) == 0 ? wall : m\n"
    "    y' = ny\n    x' = nx\n    struck' = hit\n"
    "    reward = strike ? 1.0 : 0.0\n"
    "    terminated = ny == 3 and nx == 4\n"
    "}\n";

static const double map_values[] = {0.0, 1.0, 1.0, 0.0, -0.0, NAN, INFINITY, -INFINITY, 2.5, 1.0};
static const int index_values[] = {0, 1, 2, 3, 4, 5, -1, -4, -6, 7, INT_MIN, INT_MAX};

static cs_program *grid(cs_type real)
{
    cs_program *p = NULL;
    char err[1024];
    cr_assert_eq(cs_parse(grid_program, sizeof grid_program - 1, "grid.env", real, NULL, 0, &p, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(cs_policy_random(p), 0);
    cr_assert_eq(cs_program_bind_policy(p), 0);
    char why[256];
    cr_assert_eq(cs_optimize(p, CS_FUSION_FULL, NULL, why, sizeof why), 0, "%s", why);
    return p;
}

/* Ordinary lanes, and every seventh with a special value in its map
 * (every fifth with an index from anywhere). */
static void fill(lanes_any *b, uint64_t seed)
{
    size_t specials = sizeof map_values / sizeof map_values[0], indices = sizeof index_values / sizeof index_values[0];
    for (long long i = 0; i < b->n; i++) {
        b->segstep[i] = (int)(splitmix_next(&seed) % 30);
        for (unsigned k = 0; k < b->p->n_carried; k++) {   /* lane by lane: its slots */
            uint64_t r = splitmix_next(&seed);
            cs_type t = b->p->carried[k].type;
            lanes_set_slot(b, k, i, t == CS_I32  ? index_values[r % (i % 5 ? 5 : indices)]
                                    : t == CS_BOOL ? (double)(r & 1)
                                                   : map_values[r % (i % 7 ? 5 : specials)]);
        }
    }
}

enum { LANES = 300 };   /* blocks of the C dialect, the last one partial */

static void agree(cs_type real)
{
    cs_program *p = grid(real);
    const char *r = getenv("CARTSIM_ROOT");
    char shim[600], err[4096], why[512];
    snprintf(shim, sizeof shim, "%s/tests/cuda_shim.h", r && *r ? r : ".");
    runner ref;
    cr_assert_eq(runner_open(&ref, p, RUN_INTERP, CS_FUSION_FULL, 1, shim, err, sizeof err), 0, "%s", err);
    struct { cs_fusion fusion; int unroll; bool launches; } runs[] = {
        {CS_FUSION_FULL, 1, false}, {CS_FUSION_FULL, 3, false}, {CS_FUSION_NONE, 1, true}};
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        runner got;
        cr_assert_eq(runner_open(&got, p, RUN_CPU, runs[k].fusion, runs[k].unroll, shim, err, sizeof err), 0, "%s", err);
        got.launches = runs[k].launches;
        lanes_any a, b;
        lanes_any_init(&a, p, LANES, 11);
        lanes_any_init(&b, p, LANES, 11);
        fill(&a, 500 + k);
        lanes_any_copy(&b, &a);
        long long nonfinite = 0;
        for (int call = 0; call < 12; call++) {   /* each from the state the last left */
            a.l.t = b.l.t = 4 * call;
            a.l.steps = b.l.steps = 4;
            runner_rollout(&ref, p, &a.l);
            runner_rollout(&got, p, &b.l);
            cr_assert(!lanes_any_differ(&a, &b, false, why, sizeof why), "%s, %s, unroll %d%s, rollout %d: %s",
                      cs_type_name(real), cs_fusion_name(runs[k].fusion), runs[k].unroll,
                      runs[k].launches ? ", a launch per kernel" : "", call, why);
            for (long long i = 0; i < LANES; i++)
                nonfinite += a.nonfinite[i];
        }
        cr_assert_gt(nonfinite, 0, "no lane restarted for a non-finite state");
        lanes_any_free(&a);
        lanes_any_free(&b);
        runner_close(&got);
    }
    runner_close(&ref);
    cs_program_free(p);
}

Test(grid_state, rollouts_from_nan_and_infinite_maps_equal_the_interpreter_in_f32) { agree(CS_F32); }

Test(grid_state, rollouts_from_nan_and_infinite_maps_equal_the_interpreter_in_f64) { agree(CS_F64); }

/* The rollout's source, full fusion, unroll 1. */
static char *rollout_source(const cs_program *p)
{
    cs_text src;
    char err[1024];
    cr_assert_eq(lanes_emit(p, CS_FUSION_FULL, 1, CS_DIALECT_C, &src, err, sizeof err, NULL), 0, "%s", err);
    char *from = strstr(src.data, "#ifndef CS_ONLY_STEP"), *to = strstr(src.data, "#ifndef CS_ONLY_ROLLOUT");
    cr_assert(from && to && from < to);
    char *text = strndup(from, (size_t)(to - from));
    cs_text_free(&src);
    return text;
}

/* Strings the rollout's source of the grid program has (or has not). */
typedef struct {
    const char *text;
    bool present;
    const char *what;
} needle;

static void expect_rollout(const needle *nd, size_t n)
{
    cs_program *p = grid(CS_F32);
    char *text = rollout_source(p);
    for (size_t k = 0; k < n; k++)
        cr_expect((strstr(text, nd[k].text) != NULL) == nd[k].present, "%s:\n%s", nd[k].what, text);
    free(text);
    cs_program_free(p);
}

/* The map's next and fresh values are finite wherever it is: its check
 * runs in a block's first step only. */
Test(grid_state, a_finite_map_is_checked_in_the_first_step_only)
{
    static const needle nd[] = {{"if (nfc_) {", true, "the check is not guarded"},
                                {"B->nfc = 1;", true, "a block's load does not ask for the check"}};
    expect_rollout(nd, sizeof nd / sizeof nd[0]);
}

/* The struck brick is one store per lane into the map's own rows (block
 * row 0), the respawn a nest that a block skips where no lane respawns,
 * and the map's next value is in its rows: no copy after the step. */
Test(grid_state, a_struck_brick_is_one_store_and_the_map_is_updated_in_place)
{
    static const needle nd[] = {{"_)) * CS_BLOCK + i] = cs_selectf(in", true, "no store of the struck element"},
                                {"if (!any_)\n        return 0;", true, "the respawn is not skipped"},
                                {"B->c[0 + (e_)][i] = B->m", false, "the map is copied back"}};
    expect_rollout(nd, sizeof nd / sizeof nd[0]);
}

/* The count of the map's bricks (a reduction of every element to a scalar)
 * runs 16 lanes at a time with its accumulator in a register. */
Test(grid_state, a_count_over_the_map_keeps_its_accumulator_in_a_register)
{
    static const needle nd[] = {{"for (int i0_ = 0; i0_ < nv; i0_ += 16)", true, "the count is not chunked"},
                                {"_[j_] = (e_ == 0 ? 0 : acc", true, "no accumulator"}};
    expect_rollout(nd, sizeof nd / sizeof nd[0]);
}
