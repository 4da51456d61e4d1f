/* Gymnasium's trajectories (../shared/golden) replayed through `cartsim
 * replay`: f64 per step byte for byte, f64 open loop within 1e-9, f32 per
 * step within 1e-5. Adding an environment is adding a row to `cases`.
 * Acrobot is chaotic, but its f64 steps are bit-exact, so its open loop
 * is too and stays in. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_test.h"

typedef enum { ACTION_DISCRETE, ACTION_BOX } action_type;

typedef struct {
    const char *column;         /* an ns_ column */
    double value;               /* the flag's threshold, checked as +-value */
} threshold;

typedef struct {
    const char *label;
    const char *env;            /* --env: a name, or "@ROOT@/envs/NAME.env" */
    const char *file;           /* in CARTSIM_GOLDEN */
    const char *params[4];      /* --param values */
    action_type action;
    const char *reward_column;  /* golden column the reward must equal (NULL: reward) */
    const char *flags[4];       /* further flags, e.g. {"--fusion", "rules"} */
    threshold thresholds[4];    /* f32 may flip terminated within 1e-5 of these */
    double f32_abs;             /* f32: absolute floor of the ns_/obs_ comparison (0: 1e-6) */
} golden_case;

#define CARTPOLE_THRESHOLDS {{"ns_x", 2.4}, {"ns_theta", 0.20943951023931953}}

static const golden_case cases[] = {
    {"cartpole", "cartpole", "cartpole.csv", {0}, ACTION_DISCRETE, NULL, {0}, CARTPOLE_THRESHOLDS, 0},
    {"cartpole semi-implicit", "cartpole", "cartpole_semi_implicit.csv", {"semi_implicit=1"}, ACTION_DISCRETE,
     NULL, {0}, CARTPOLE_THRESHOLDS, 0},
    {"cartpole sutton-barto reward", "cartpole", "cartpole.csv", {"sutton_barto_reward=1"}, ACTION_DISCRETE,
     "reward_sutton_barto", {0}, CARTPOLE_THRESHOLDS, 0},
    {"cartpole_concat.env by path", "@ROOT@/envs/cartpole_concat.env", "cartpole.csv", {0}, ACTION_DISCRETE, NULL,
     {0}, CARTPOLE_THRESHOLDS, 0},
    {"cartpole --fusion rules", "cartpole", "cartpole.csv", {0}, ACTION_DISCRETE, NULL, {"--fusion", "rules"},
     CARTPOLE_THRESHOLDS, 0},
    {"cartpole --fusion none", "cartpole", "cartpole.csv", {0}, ACTION_DISCRETE, NULL, {"--fusion", "none"},
     CARTPOLE_THRESHOLDS, 0},
    {"cartpole_concat.env --fusion rules", "@ROOT@/envs/cartpole_concat.env", "cartpole.csv", {0},
     ACTION_DISCRETE, NULL, {"--fusion", "rules"}, CARTPOLE_THRESHOLDS, 0},
    {"cartpole --backend interp", "cartpole", "cartpole.csv", {0}, ACTION_DISCRETE, NULL, {"--backend", "interp"},
     CARTPOLE_THRESHOLDS, 0},
    /* theta is unwrapped (up to 72 rad in the file): in float32 it is only
     * good to 4e-6 there, and so are its cos and sin (5.5e-6 seen) */
    {"pendulum", "pendulum", "pendulum.csv", {0}, ACTION_BOX, NULL, {0}, {{0}}, 1e-5},
    {"mountain_car", "mountain_car", "mountain_car.csv", {0}, ACTION_DISCRETE, NULL, {0},
     {{"ns_position", 0.5}, {"ns_velocity", 0}}, 0},
    {"mountain_car_continuous", "mountain_car_continuous", "mountain_car_continuous.csv", {0}, ACTION_BOX, NULL, {0},
     {{"ns_position", 0.45}, {"ns_velocity", 0}}, 0},
    /* a wrapped angle keeps the absolute error of the unwrapped one: from
     * |dtheta2| = 9 pi an angle moves ~6 rad in one step (1.15e-5 seen on
     * an angle wrapped to 0.049, episode 13 t 0). Termination is a height,
     * not a state column: no flag flipped in float32. */
    {"acrobot", "acrobot", "acrobot.csv", {0}, ACTION_DISCRETE, NULL, {0}, {{0}}, 2e-5},
    {"acrobot nips", "acrobot", "acrobot_nips.csv", {"book_or_nips=1"}, ACTION_DISCRETE, NULL, {0}, {{0}}, 2e-5},
    {"acrobot --fusion rules", "acrobot", "acrobot.csv", {0}, ACTION_DISCRETE, NULL, {"--fusion", "rules"}, {{0}},
     2e-5},
    {"pendulum --backend interp", "pendulum", "pendulum.csv", {0}, ACTION_BOX, NULL, {"--backend", "interp"}, {{0}},
     1e-5},
    {"mountain_car_continuous --backend interp", "mountain_car_continuous", "mountain_car_continuous.csv", {0},
     ACTION_BOX, NULL, {"--backend", "interp"}, {{"ns_position", 0.45}, {"ns_velocity", 0}}, 0},
};

#define N_CASES (sizeof cases / sizeof cases[0])

/* ---- a CSV table, cut in place ---- */

typedef struct {
    char *text;
    char **names;
    int ncols;
    char **cells;               /* [nrows][ncols] */
    size_t nrows;
} csv;

static void csv_free(csv *c)
{
    free(c->text);
    free(c->names);
    free(c->cells);
    memset(c, 0, sizeof *c);
}

static int split_line(char *line, char **out, int max)
{
    int n = 0;
    for (char *p = line;;) {
        if (n < max)
            out[n] = p;
        n++;
        char *comma = strchr(p, ',');
        if (!comma)
            break;
        *comma = 0;
        p = comma + 1;
    }
    return n;
}

/* Takes ownership of text. */
static void csv_parse(char *text, csv *c, const char *what)
{
    memset(c, 0, sizeof *c);
    c->text = text;
    char *save = NULL;
    char *line = strtok_r(text, "\n", &save);
    cr_assert(line, "%s: empty", what);
    c->ncols = 1;
    for (char *p = line; *p; p++)
        c->ncols += *p == ',';
    c->names = calloc((size_t)c->ncols, sizeof *c->names);
    cr_assert(c->names);
    split_line(line, c->names, c->ncols);
    size_t cap = 0;
    while ((line = strtok_r(NULL, "\n", &save))) {
        if (c->nrows == cap) {
            cap = cap ? cap * 2 : 1024;
            c->cells = realloc(c->cells, cap * (size_t)c->ncols * sizeof *c->cells);
            cr_assert(c->cells);
        }
        int n = split_line(line, c->cells + c->nrows * (size_t)c->ncols, c->ncols);
        cr_assert_eq(n, c->ncols, "%s: row %zu has %d fields, header %d", what, c->nrows + 2, n, c->ncols);
        c->nrows++;
    }
}

static int csv_col(const csv *c, const char *name)
{
    for (int i = 0; i < c->ncols; i++)
        if (strcmp(c->names[i], name) == 0)
            return i;
    return -1;
}

static const char *csv_cell(const csv *c, size_t row, int col)
{
    return c->cells[row * (size_t)c->ncols + (size_t)col];
}

static double csv_num(const csv *c, size_t row, int col)
{
    return strtod(csv_cell(c, row, col), NULL);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s (set CARTSIM_GOLDEN)", path);
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    cr_assert(buf);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
            cr_assert(buf);
        }
    }
    fclose(f);
    buf[len] = 0;
    return buf;
}

static void load_golden(const golden_case *gc, csv *c)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", cli_test_golden(), gc->file);
    csv_parse(read_all(path), c, path);
}

/* ---- running replay ---- */

static char *env_arg(const golden_case *gc)
{
    const char *at = strstr(gc->env, "@ROOT@");
    char *out;
    if (!at)
        return strdup(gc->env);
    size_t len = strlen(cli_test_root()) + strlen(gc->env);
    out = malloc(len + 1);
    cr_assert(out);
    snprintf(out, len + 1, "%.*s%s%s", (int)(at - gc->env), gc->env, cli_test_root(), at + 6);
    return out;
}

/* Replays gc's file (math: --math's value, NULL for the default); the
 * output parsed into *out. */
static void replay(const golden_case *gc, const char *dtype, const char *math, bool open_loop, csv *out)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", cli_test_golden(), gc->file);
    char *env = env_arg(gc);
    const char *args[32];
    int n = 0;
    args[n++] = "replay";
    args[n++] = "--env";
    args[n++] = env;
    args[n++] = "--dtype";
    args[n++] = dtype;
    if (math) {
        args[n++] = "--math";
        args[n++] = math;
    }
    for (int i = 0; i < 4 && gc->params[i]; i++) {
        args[n++] = "--param";
        args[n++] = gc->params[i];
    }
    for (int i = 0; i < 4 && gc->flags[i]; i++)
        args[n++] = gc->flags[i];
    if (open_loop)
        args[n++] = "--open-loop";
    args[n++] = path;
    args[n] = NULL;
    cli_result r;
    cli_test_run(args, 600, &r);
    free(env);
    if (r.timed_out || r.status != 0 || r.out_len == 0) {
        /* Free before failing: a failed assertion leaves the test at once. */
        char msg[2048];
        snprintf(msg, sizeof msg, "%s: replay %s (status %d): %s", gc->label,
                 r.timed_out ? "timed out" : "failed", r.status, r.err);
        cli_result_free(&r);
        cr_assert_fail("%s", msg);
    }
    csv_parse(r.out, out, gc->label);
    r.out = NULL;
    cli_result_free(&r);
}

/* The golden columns the replay reproduces: episode .. truncated, with
 * the reward taken from gc->reward_column when set. */
static void expected_columns(const golden_case *gc, const csv *golden, int *cols, int *ncols)
{
    int last = csv_col(golden, "truncated");
    cr_assert(last >= 0, "%s: no truncated column", gc->file);
    int reward = csv_col(golden, "reward");
    int reward_from = gc->reward_column ? csv_col(golden, gc->reward_column) : reward;
    cr_assert(reward_from >= 0, "%s: no column %s", gc->file, gc->reward_column);
    for (int i = 0; i <= last; i++)
        cols[i] = i == reward ? reward_from : i;
    *ncols = last + 1;
}

static void check_layout(const golden_case *gc, const csv *golden, const csv *got, const int *cols, int ncols)
{
    cr_assert_eq(got->ncols, ncols, "%s: %d columns, want %d", gc->label, got->ncols, ncols);
    for (int i = 0; i < ncols; i++)
        cr_assert_str_eq(got->names[i], golden->names[i], "%s: column %d is %s, want %s", gc->label, i,
                         got->names[i], golden->names[i]);
    cr_assert_eq(got->nrows, golden->nrows, "%s: %zu rows, want %zu", gc->label, got->nrows, golden->nrows);
    (void)cols;
}

static bool starts_with(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static bool close_to(double got, double want, double rel, double abs_floor)
{
    if (isnan(want))
        return isnan(got);
    double tol = fabs(want) * rel;
    return fabs(got - want) <= (tol > abs_floor ? tol : abs_floor);
}

ParameterizedTestParameters(golden, f64_per_step)
{
    static int idx[N_CASES];
    for (size_t i = 0; i < N_CASES; i++)
        idx[i] = (int)i;
    return cr_make_param_array(int, idx, N_CASES);
}

/* Every field equal to Gymnasium's text, byte for byte. */
ParameterizedTest(int *i, golden, f64_per_step, .timeout = 900)
{
    const golden_case *gc = &cases[*i];
    csv golden, got;
    load_golden(gc, &golden);
    replay(gc, "f64", NULL, false, &got);
    int cols[256], ncols;
    expected_columns(gc, &golden, cols, &ncols);
    check_layout(gc, &golden, &got, cols, ncols);
    int mismatches = 0;
    for (size_t r = 0; r < golden.nrows && mismatches < 10; r++)
        for (int k = 0; k < ncols; k++) {
            const char *want = csv_cell(&golden, r, cols[k]), *have = csv_cell(&got, r, k);
            if (strcmp(want, have) != 0) {
                cr_expect_fail("%s: line %zu (episode %s, t %s), %s: got %s, want %s", gc->label, r + 2,
                               csv_cell(&golden, r, 0), csv_cell(&golden, r, 1), golden.names[cols[k]], have,
                               want);
                mismatches++;
            }
        }
    csv_free(&golden);
    csv_free(&got);
}

ParameterizedTestParameters(golden, f64_open_loop)
{
    static int idx[N_CASES];
    for (size_t i = 0; i < N_CASES; i++)
        idx[i] = (int)i;
    return cr_make_param_array(int, idx, N_CASES);
}

/* Each episode on cartsim's own states: same ends, same flags, states and
 * rewards within 1e-9 relative (1e-12 absolute floor). */
ParameterizedTest(int *i, golden, f64_open_loop, .timeout = 900)
{
    const golden_case *gc = &cases[*i];
    csv golden, got;
    load_golden(gc, &golden);
    replay(gc, "f64", NULL, true, &got);
    int cols[256], ncols;
    expected_columns(gc, &golden, cols, &ncols);
    check_layout(gc, &golden, &got, cols, ncols);
    int mismatches = 0;
    for (size_t r = 0; r < golden.nrows && mismatches < 10; r++)
        for (int k = 0; k < ncols; k++) {
            const char *name = golden.names[k];
            const char *want = csv_cell(&golden, r, cols[k]), *have = csv_cell(&got, r, k);
            bool ok;
            if (starts_with(name, "s_") || starts_with(name, "ns_") || strcmp(name, "reward") == 0)
                ok = close_to(strtod(have, NULL), strtod(want, NULL), 1e-9, 1e-12);
            else if (starts_with(name, "obs_"))   /* float32 of a state within 1e-9: one float ulp */
                ok = close_to(strtod(have, NULL), strtod(want, NULL), 2.5e-7, 1e-12);
            else
                ok = strcmp(want, have) == 0;     /* episode, t, actions, flags */
            if (!ok) {
                cr_expect_fail("%s open loop: line %zu (episode %s, t %s), %s: got %s, want %s", gc->label, r + 2,
                               csv_cell(&golden, r, 0), csv_cell(&golden, r, 1), name, have, want);
                mismatches++;
            }
        }
    csv_free(&golden);
    csv_free(&got);
}

ParameterizedTestParameters(golden, f32_per_step)
{
    static int idx[N_CASES];
    for (size_t i = 0; i < N_CASES; i++)
        idx[i] = (int)i;
    return cr_make_param_array(int, idx, N_CASES);
}

/* A row where an ns_ value sits within 1e-5 of a threshold may flip its
 * terminated flag (and with it the reward) in float32. */
static bool near_threshold(const golden_case *gc, const csv *golden, const csv *got, size_t r)
{
    for (int t = 0; t < 4 && gc->thresholds[t].column; t++) {
        int col = csv_col(golden, gc->thresholds[t].column);
        cr_assert(col >= 0, "%s: no column %s", gc->label, gc->thresholds[t].column);
        double v1 = csv_num(golden, r, col), v2 = csv_num(got, r, col), th = gc->thresholds[t].value;
        if (fabs(fabs(v1) - th) <= 1e-5 || fabs(fabs(v2) - th) <= 1e-5)
            return true;
    }
    return false;
}

/* ns_ and obs_ within 1e-5 relative (1e-6 absolute floor, or the case's
 * f32_abs), flags equal except on a threshold: float32 arithmetic, and f64
 * with the fast math mode's functions (jit/mathd.h). */
static void per_step_within_f32_tolerances(const golden_case *gc, const char *dtype, const char *math)
{
    csv golden, got;
    load_golden(gc, &golden);
    replay(gc, dtype, math, false, &got);
    int cols[256], ncols;
    expected_columns(gc, &golden, cols, &ncols);
    check_layout(gc, &golden, &got, cols, ncols);
    int term = csv_col(&golden, "terminated");
    int mismatches = 0, excused = 0;
    for (size_t r = 0; r < golden.nrows && mismatches < 10; r++) {
        bool flipped = strcmp(csv_cell(&golden, r, term), csv_cell(&got, r, term)) != 0;
        bool excuse = flipped && near_threshold(gc, &golden, &got, r);
        excused += excuse;
        for (int k = 0; k < ncols; k++) {
            const char *name = golden.names[k];
            const char *want = csv_cell(&golden, r, cols[k]), *have = csv_cell(&got, r, k);
            bool ok;
            if (starts_with(name, "ns_") || starts_with(name, "obs_"))
                ok = close_to(strtod(have, NULL), strtod(want, NULL), 1e-5, gc->f32_abs > 0 ? gc->f32_abs : 1e-6);
            else if (strcmp(name, "reward") == 0)
                ok = excuse || close_to(strtod(have, NULL), strtod(want, NULL), 1e-5, 1e-6);
            else if (strcmp(name, "terminated") == 0)
                ok = excuse || !flipped;
            else
                ok = strcmp(want, have) == 0;   /* episode, t, actions, s_ (the input), truncated */
            if (!ok) {
                cr_expect_fail("%s %s%s: line %zu (episode %s, t %s), %s: got %s, want %s", gc->label, dtype,
                               math ? " fast math" : "", r + 2,
                               csv_cell(&golden, r, 0), csv_cell(&golden, r, 1), name, have, want);
                mismatches++;
            }
        }
    }
    /* A flip is allowed, not required; only a handful of rows may have one. */
    cr_expect(excused <= 4, "%s %s: %d flag flips near thresholds", gc->label, dtype, excused);
    csv_free(&golden);
    csv_free(&got);
}

ParameterizedTest(int *i, golden, f32_per_step, .timeout = 900) { per_step_within_f32_tolerances(&cases[*i], "f32", NULL); }

ParameterizedTestParameters(golden, f64_fast_math_per_step)
{
    static int idx[N_CASES];
    for (size_t i = 0; i < N_CASES; i++)
        idx[i] = (int)i;
    return cr_make_param_array(int, idx, N_CASES);
}

ParameterizedTest(int *i, golden, f64_fast_math_per_step, .timeout = 900)
{
    per_step_within_f32_tolerances(&cases[*i], "f64", "fast");
}
