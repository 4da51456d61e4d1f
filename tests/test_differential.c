/* Random-program differential test (issue 16, 7): random valid .env programs
 * (tests/random_env.h: every operator and builtin over states, params and
 * the action) run on the cpu backend and the interpreter from the same seed;
 * their rollouts must agree to the bit (checksum, episodes, non-finite
 * restarts, the mean return) in f32 and f64. The CUDA dialect is compared with the cpu
 * through the host shim in tests/test_cuda.c (cuda_host). Random array
 * programs (random_env_graph: arrays, integers, every op of jit/ops.def)
 * run on the interpreter, the cpu backend under each fusion mode and the
 * CUDA dialect through the shim: restarts, rollouts and steps equal to the
 * bit. A fixed set of seeds here; `make fuzz` runs
 * tests/fuzz/fuzz_differential.c on any. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cartsim.h"
#include "lanes_any.h"
#include "random_env.h"

#define PROGRAMS 20
#define ENVS 64
#define STEPS 120

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/cartsim-differential-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/random.env", dir);
    unlink(path);
    rmdir(dir);
}

TestSuite(differential, .init = setup, .fini = teardown);

static cs_rollout_stats run(const char *path, cs_backend backend, cs_dtype dtype, const char *program)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = path;
    cfg.num_envs = ENVS;
    cfg.backend = backend;
    cfg.dtype = dtype;
    cfg.threads = 1;
    cfg.no_cache = true;   /* a few dozen throwaway kernels: not the cache's business */
    cs_env *env = NULL;
    cs_status s = cs_env_open(&cfg, &env);
    cr_assert_eq(s, CS_OK, "%s on %s: %s\n%s", cs_status_string(s), cs_backend_name(backend), cs_env_error(env),
                 program);
    cs_rollout_stats st;
    cr_assert_eq(cs_env_reset(env, 42), CS_OK);
    cr_assert_eq(cs_env_rollout(env, STEPS, &st), CS_OK, "%s", cs_env_error(env));
    cs_env_close(env);
    return st;
}

static void agree(cs_dtype dtype)
{
    static char program[1 << 16];
    char path[128];
    snprintf(path, sizeof path, "%s/random.env", dir);
    int differ = 0;
    for (uint64_t seed = 1; seed <= PROGRAMS; seed++) {
        size_t len = random_env_program(seed, program, sizeof program);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(program, 1, len, f), len);
        cr_assert_eq(fclose(f), 0);
        cs_rollout_stats cpu = run(path, CS_BACKEND_CPU, dtype, program);
        cs_rollout_stats interp = run(path, CS_BACKEND_INTERP, dtype, program);
        char why[256];
        if (random_env_rollouts_differ(&cpu, &interp, why, sizeof why)) {
            differ++;
            cr_expect_fail("seed %llu, %s: %s\n%s", (unsigned long long)seed, dtype == CS_DTYPE_F64 ? "f64" : "f32",
                           why, program);
        }
    }
    cr_expect_eq(differ, 0, "%d of %d programs differ", differ, PROGRAMS);
}

Test(differential, random_programs_agree_on_cpu_and_interpreter_in_f32) { agree(CS_DTYPE_F32); }

Test(differential, random_programs_agree_on_cpu_and_interpreter_in_f64) { agree(CS_DTYPE_F64); }

/* The generator itself: a pure function of the seed, and seeds differ. */
Test(differential, the_generator_is_deterministic_and_varied)
{
    static char a[1 << 16], b[1 << 16];
    random_env_program(7, a, sizeof a);
    random_env_program(7, b, sizeof b);
    cr_assert_str_eq(a, b);
    random_env_program(8, b, sizeof b);
    cr_assert_str_neq(a, b);
    /* Across the fixed set, every operator and builtin shows up. */
    static const char *const ops[] = {"sin(", "cos(", "tan(", "exp(", "log(", "sqrt(", "tanh(", "floor(", "abs(",
                                      "f32(", "atan2(", "pow(", "fmod(", "min(", "max(", "clip(", " + ", " - ",
                                      " * ", " / ", " % ", "(-", " < ", " <= ", " > ", " >= ", " == ", " != ",
                                      " and ", " or ", "(not ", " ? ", "discrete", "box("};
    static char all[PROGRAMS << 16];
    size_t len = 0;
    for (uint64_t seed = 1; seed <= PROGRAMS; seed++)
        len += random_env_program(seed, all + len, sizeof all - len);
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        cr_expect(strstr(all, ops[k]), "no '%s' in the fixed set of programs", ops[k]);
}

/* ---- random array programs ---- */

#define GRAPHS 10
#define GRAPH_LANES 70

static void graph_fill(lanes_any *b, uint64_t seed)
{
    const cs_program *p = b->p;
    uint64_t s = seed;
    for (unsigned k = 0; k < p->n_inputs; k++)
        for (long long i = 0; i < b->n; i++) {
            uint64_t r = splitmix_next(&s);
            if (p->inputs[k].type == CS_I32)
                ((int *)b->inputs[k])[i] = (int)(r % 3);
            else
                ((float *)b->inputs[k])[i] = (float)((double)(r % 2001) / 1000.0 - 1.0);
        }
    for (unsigned k = 0; k < p->n_params; k++)
        for (long long i = 0; i < b->n; i++) {
            double v = (double)(splitmix_next(&s) % 100) / 25.0 - 2.0;
            if (p->real == CS_F32)
                ((float *)b->params[k])[i] = (float)v;
            else
                ((double *)b->params[k])[i] = v;
        }
}

/* p on `got` against the interpreter: a restart, a rollout, then steps in
 * each auto-reset mode; 0 when equal, else 1 with why. */
static int graph_differs(const cs_program *p, runner *ref, runner *got, char *why, size_t size)
{
    lanes_any a, b;
    lanes_any_init(&a, p, GRAPH_LANES, 42);
    lanes_any_init(&b, p, GRAPH_LANES, 42);
    graph_fill(&a, 7);
    lanes_any_copy(&b, &a);
    int differ = 0;
    runner_restart(ref, p, &a.l);
    runner_restart(got, p, &b.l);
    if (lanes_any_differ(&a, &b, true, why, size)) {
        differ = 1;
        goto done;
    }
    a.l.steps = b.l.steps = STEPS;
    runner_rollout(ref, p, &a.l);
    runner_rollout(got, p, &b.l);
    if (lanes_any_differ(&a, &b, false, why, size)) {
        differ = 1;
        goto done;
    }
    const int modes[] = {CS_MODE_NEXT_STEP, CS_MODE_SAME_STEP, CS_MODE_NO_RESTART};
    for (long long t = 0; t < 12; t++) {
        graph_fill(&a, 100 + (uint64_t)t);
        graph_fill(&b, 100 + (uint64_t)t);
        a.l.t = b.l.t = STEPS + t;
        a.l.mode = b.l.mode = modes[t % 3];
        runner_step(ref, p, &a.l);
        runner_step(got, p, &b.l);
        if (lanes_any_differ(&a, &b, true, why, size)) {
            char step[64];
            snprintf(step, sizeof step, " (step %lld, mode %d)", t, modes[t % 3]);
            strncat(why, step, size - strlen(why) - 1);
            differ = 1;
            goto done;
        }
    }
done:
    lanes_any_free(&a);
    lanes_any_free(&b);
    return differ;
}

static void graphs_agree(cs_type real)
{
    const char *r = getenv("CARTSIM_ROOT");
    char shim[600];
    snprintf(shim, sizeof shim, "%s/tests/cuda_shim.h", r && *r ? r : ".");
    struct {
        run_backend backend;
        cs_fusion fusion;
        int unroll;
        bool launches;
    } runs[] = {
        {RUN_CPU, CS_FUSION_FULL, 4, false}, {RUN_CPU, CS_FUSION_RULES, 1, true}, {RUN_SHIM, CS_FUSION_FULL, 2, false},
    };
    int differ = 0, episodes = 0;
    for (uint64_t seed = 1; seed <= GRAPHS; seed++) {
        char why[600], err[4096];
        cs_program *p = random_env_graph(seed, real, why, sizeof why);
        cr_assert(p, "the generator failed: %s", why);
        cr_assert_eq(cs_optimize(p, CS_FUSION_FULL, NULL, err, sizeof err), 0, "%s", err);
        runner ref;
        cr_assert_eq(runner_open(&ref, p, RUN_INTERP, CS_FUSION_FULL, 1, shim, err, sizeof err), 0);
        for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
            runner got;
            /* a run can only differ: the program is fixed, its kernels must build */
            cr_assert_eq(runner_open(&got, p, runs[k].backend, runs[k].fusion, runs[k].unroll, shim, err, sizeof err), 0,
                         "seed %llu (%s): %s", (unsigned long long)seed, cs_type_name(real), err);
            got.launches = runs[k].launches;
            if (graph_differs(p, &ref, &got, why, sizeof why)) {
                differ++;
                cr_expect_fail("seed %llu (%s), %s under %s: %s", (unsigned long long)seed, cs_type_name(real),
                               runner_name(&got), cs_fusion_name(runs[k].fusion), why);
            }
            runner_close(&got);
        }
        lanes_any probe;   /* the rollout ends episodes: the generator's terminations are not dead */
        lanes_any_init(&probe, p, GRAPH_LANES, 42);
        probe.l.steps = STEPS;
        cs_interp_restart(p, &probe.l);
        cs_interp_rollout(p, &probe.l);
        for (long long i = 0; i < GRAPH_LANES; i++)
            episodes += (int)probe.segments[i];
        lanes_any_free(&probe);
        cs_program_free(p);
    }
    cr_expect_eq(differ, 0, "%d runs of %d programs differ", differ, GRAPHS);
    cr_expect_gt(episodes, GRAPHS * GRAPH_LANES, "the random programs end few episodes (%d)", episodes);
}

Test(differential, random_array_programs_agree_everywhere_in_f64, .timeout = 900) { graphs_agree(CS_F64); }

Test(differential, random_array_programs_agree_everywhere_in_f32, .timeout = 900) { graphs_agree(CS_F32); }

/* The array generator: a pure function of its seed, and across the fixed
 * set every op of jit/ops.def appears. */
Test(differential, the_array_generator_is_deterministic_and_covers_every_op)
{
    bool seen[CS_OP_COUNT] = {false};
    char why[600];
    for (uint64_t seed = 1; seed <= 200; seed++) {
        cs_program *p = random_env_graph(seed, CS_F64, why, sizeof why), *q = random_env_graph(seed, CS_F64, why, sizeof why);
        cr_assert(p && q, "%s", why);
        uint32_t count = cs_graph_count(p->graph);
        cr_assert_eq(count, cs_graph_count(q->graph), "seed %llu: not deterministic", (unsigned long long)seed);
        for (cs_node n = 1; n < count; n++) {
            const cs_node_data *d = cs_graph_node(p->graph, n), *e = cs_graph_node(q->graph, n);
            cr_assert(d->op == e->op && d->shape == e->shape && d->imm.i == e->imm.i, "seed %llu: not deterministic",
                      (unsigned long long)seed);
            seen[d->op] = true;
        }
        cs_program_free(p);
        cs_program_free(q);
    }
    for (int op = 0; op < CS_OP_COUNT; op++)
        cr_expect(seen[op], "no '%s' in 200 random array programs", cs_op_table[op].name);
}
