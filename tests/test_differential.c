/* Random-program differential test (issue 16, 7): random valid .env programs
 * (tests/random_env.h: every operator and builtin over states, params and
 * the action) run on the cpu backend and the interpreter from the same seed;
 * their rollouts must agree to the bit (checksum, episodes, non-finite
 * restarts, the mean return), and so must the observations and rewards of
 * the steps after, in f32 and f64. The CUDA dialect is compared with the cpu
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

static void run(const char *path, cs_backend backend, cs_dtype dtype, const char *program, random_env_result *r)
{
    char why[1024];
    cr_assert(random_env_run(path, backend, dtype, ENVS, 42, STEPS, NULL, r, why, sizeof why), "%s\n%s", why, program);
}

/* The program's text into the suite's random.env; its path in path. */
static void write_program(const char *text, size_t len, char path[128])
{
    snprintf(path, 128, "%s/random.env", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(text, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

static void agree(cs_dtype dtype)
{
    static char program[1 << 16];
    static random_env_result cpu, interp;
    char path[128];
    int differ = 0;
    for (uint64_t seed = 1; seed <= PROGRAMS; seed++) {
        size_t len = random_env_program(seed, program, sizeof program);
        write_program(program, len, path);
        run(path, CS_BACKEND_CPU, dtype, program, &cpu);
        run(path, CS_BACKEND_INTERP, dtype, program, &interp);
        char why[256];
        if (random_env_results_differ(&cpu, &interp, why, sizeof why)) {
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
                                      " and ", " or ", "(not ", " ? ", "discrete", "box(", "1e39", "-3.5e38",
                                      "box(-1e39, 1e39)", ") / (s", "uniform("};
    static char all[PROGRAMS << 16];
    size_t len = 0;
    for (uint64_t seed = 1; seed <= PROGRAMS; seed++)
        len += random_env_program(seed, all + len, sizeof all - len);
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        cr_expect(strstr(all, ops[k]), "no '%s' in the fixed set of programs", ops[k]);
}

/* ---- NaN where values leave the kernel (issue 32, 12) -------------------- */

/* Observations and rewards that are NaN in many ways (0/0 gives -nan on
 * x86, an operand's NaN passes on with its sign, folding and the evaluator
 * make theirs): what a user reads must be the same bits on every backend. */
static const char nan_program[] =
    "env nans \"Nans-v0\"\nmax_steps 7\nparam zero = 0\n"
    "state s, t\naction box(-1, 1)\n"
    "observe (s * 0) / (s * 0), s - s / 0 * 0, sqrt(-1 - abs(s)), log(-abs(t) - 1), -((s * 0) / (s * 0)), "
    "fmod(s, 0), zero / zero, s\n"
    "reset {\n    s = uniform(1, 2)\n    t = uniform(-1, 1)\n}\n"
    "step {\n    s' = s + action\n    t' = t * 0.5\n"
    "    reward = action > 0 ? (s * 0) / (t * 0) : -((t * 0) / (t * 0))\n    terminated = false\n}\n";

typedef struct {
    float obs[8 * ENVS], final_obs[8 * ENVS];
    double rewards[ENVS], returns[ENVS], mean_return;
} nan_result;

static void run_nans(const char *path, cs_backend backend, cs_dtype dtype, nan_result *r)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = path;
    cfg.num_envs = ENVS;
    cfg.backend = backend;
    cfg.dtype = dtype;
    cfg.threads = 1;
    cfg.no_cache = true;
    cfg.autoreset = CS_AUTORESET_SAME_STEP;
    cs_env *env = NULL;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_OK, "%s", cs_env_error(env));
    cr_assert_eq(cs_env_reset(env, 3), CS_OK);
    float actions[ENVS];
    for (int k = 0; k < 7; k++) {   /* the seventh step ends every episode: final_obs */
        for (int i = 0; i < ENVS; i++)
            actions[i] = (i + k) % 3 ? 0.5f : -0.5f;
        cr_assert_eq(cs_env_step(env, actions), CS_OK, "%s", cs_env_error(env));
    }
    memcpy(r->obs, cs_env_obs(env), sizeof r->obs);
    memcpy(r->final_obs, cs_env_final_obs(env), sizeof r->final_obs);
    memcpy(r->rewards, cs_env_rewards(env), sizeof r->rewards);
    cs_rollout_stats st;
    cr_assert_eq(cs_env_rollout(env, 20, &st), CS_OK, "%s", cs_env_error(env));
    memcpy(r->returns, cs_env_episode_returns(env), sizeof r->returns);
    r->mean_return = st.mean_return;
    cs_env_close(env);
}

/* The same NaNs as array observations: main's emitter stores an array item
 * in the block code's element loops and cs_fresh's, apart from scalars. */
static const char nan_array_program[] =
    "env nan_arrays \"NanArrays-v0\"\nmax_steps 7\n"
    "state a: real[3], t\naction box(-1, 1)\n"
    "observe (a * 0) / (a * 0), sqrt(-1 - abs(a)), t, (t * 0) / (t * 0)\n"
    "reset {\n    a = uniform(1, 2, shape=3)\n    t = uniform(-1, 1)\n}\n"
    "step {\n    a' = a + action\n    t' = t * 0.5\n"
    "    reward = (t * 0) / (t * 0)\n    terminated = false\n}\n";

static void nans_agree(const char *program, size_t len)
{
    char path[128];
    write_program(program, len, path);
    for (int d = 0; d < 2; d++) {
        cs_dtype dtype = d ? CS_DTYPE_F64 : CS_DTYPE_F32;
        static nan_result cpu, interp;
        run_nans(path, CS_BACKEND_CPU, dtype, &cpu);
        run_nans(path, CS_BACKEND_INTERP, dtype, &interp);
        const char *what = d ? "f64" : "f32";
        for (int k = 0; k < 8 * ENVS; k++) {
            uint32_t a, b;
            memcpy(&a, &cpu.obs[k], 4);
            memcpy(&b, &interp.obs[k], 4);
            cr_expect_eq(a, b, "%s: observation %d of environment %d: cpu %08x, interpreter %08x", what, k / ENVS,
                         k % ENVS, a, b);
            if (a != b)
                break;
        }
        cr_expect(memcmp(cpu.final_obs, interp.final_obs, sizeof cpu.final_obs) == 0, "%s: final observations",
                  what);
        cr_expect(memcmp(cpu.rewards, interp.rewards, sizeof cpu.rewards) == 0, "%s: rewards", what);
        cr_expect(memcmp(cpu.returns, interp.returns, sizeof cpu.returns) == 0, "%s: episode returns", what);
        cr_expect(memcmp(&cpu.mean_return, &interp.mean_return, sizeof(double)) == 0, "%s: mean return %a, %a", what,
                  cpu.mean_return, interp.mean_return);
        /* and the one NaN it is: quiet, sign bit clear */
        uint32_t bits;
        memcpy(&bits, &cpu.obs[0], 4);
        cr_expect_eq(bits, 0x7fc00000u, "%s: %08x", what, bits);
        uint64_t rbits;
        memcpy(&rbits, &cpu.rewards[0], 8);
        cr_expect_eq(rbits, 0x7ff8000000000000ull, "%s: %016llx", what, (unsigned long long)rbits);
    }
}

Test(differential, nan_observations_and_rewards_have_the_same_bits_on_every_backend)
{
    nans_agree(nan_program, sizeof nan_program - 1);
}

Test(differential, nan_array_observations_have_the_same_bits_on_every_backend)
{
    nans_agree(nan_array_program, sizeof nan_array_program - 1);
}

/* ---- constants past float's range (issue 32, 5) ------------------------- */

/* In f32 they are infinities: the C dialect printed them "(inff)", which did
 * not compile (and --backend auto fell back to the interpreter silently). */
static const char big_program[] =
    "env big \"Big-v0\"\nmax_steps 20\nparam big = 1e39\nparam small = -3.5e38\n"
    "state s\naction box(-1e39, 1e39)\nobserve s, big, small\n"
    "reset {\n    s = uniform(-1, 1)\n}\n"
    "step {\n    s' = clip(s + (action > 0 ? 0.1 : -0.1) + 1e-40 * 1e39, -5, 5)\n"
    "    reward = min(big, 1e39) > 1e38 ? 1 : 0\n    terminated = abs(s') > 4.5 or small < -1e39\n}\n";

Test(differential, constants_past_float_range_compile_and_agree)
{
    char path[128];
    write_program(big_program, sizeof big_program - 1, path);
    for (int d = 0; d < 2; d++) {
        cs_dtype dtype = d ? CS_DTYPE_F64 : CS_DTYPE_F32;
        static random_env_result cpu, interp;
        run(path, CS_BACKEND_CPU, dtype, big_program, &cpu);
        run(path, CS_BACKEND_INTERP, dtype, big_program, &interp);
        char why[256];
        cr_expect_not(random_env_results_differ(&cpu, &interp, why, sizeof why), "%s: %s", d ? "f64" : "f32", why);
    }
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
