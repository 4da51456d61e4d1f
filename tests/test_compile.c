/* The compile driver (jit/compile.c): each failure comes back as its own
 * kind, and `dump` is the same driver stopped after a stage. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents.h"
#include "env_source.h"
#include "jit.h"

static const char spring[] =
    "env spring \"Spring-v0\"\n"
    "max_steps 200\n"
    "param k = 4.0\n"
    "param dt = 0.05\n"
    "state x, v\n"
    "action box(-1, 1)\n"
    "observe x, v\n"
    "reset {\n    x = uniform(-1, 1)\n    v = 0\n}\n"
    "step {\n"
    "    v' = v + dt * (-k * x + clip(action, -1, 1))\n"
    "    x' = x + dt * v'\n"
    "    terminated = abs(x') > 2\n"
    "    reward = -(x' * x') + 0 * (2 * 3)\n"
    "}\n";

static cs_status bind_random(cs_program *p, void *ctx, char *err, size_t err_size)
{
    (void)ctx;
    if (cs_policy_random(p)) {
        snprintf(err, err_size, "out of memory");
        return CS_ERR_NOMEM;
    }
    return CS_OK;
}

static cs_status bind_refused(cs_program *p, void *ctx, char *err, size_t err_size)
{
    (void)p;
    (void)ctx;
    snprintf(err, err_size, "no policy called 'nosuch'");
    return CS_ERR_ARGUMENT;
}

static cs_compile_request request(const char *source, cs_stage stop)
{
    return (cs_compile_request){.source = source, .len = strlen(source), .filename = "spring.env",
                                .real = CS_F64, .bind_policy = bind_random, .fusion = CS_FUSION_FULL,
                                .unroll = 1, .stop = stop, .backend = CS_BACKEND_INTERP, .no_cache = true};
}

static cs_compile_error compile(const cs_compile_request *rq, char *err, size_t err_size)
{
    cs_kernel k;
    cs_compile_error e = cs_compile(rq, &k, err, err_size);
    cs_kernel_free(&k);
    return e;
}

Test(compile, a_syntax_error_is_its_own_kind)
{
    char err[1024];
    cs_compile_request rq = request("env broken \"B-v0\"\nstate x\nstep {\n    x' = x +\n}\n", CS_STAGE_BACKEND);
    cr_assert_eq(compile(&rq, err, sizeof err), CS_COMPILE_SYNTAX, "%s", err);
    cr_assert(strstr(err, "spring.env:"), "the message names the file: %s", err);
    cr_assert_eq(cs_compile_status(CS_COMPILE_SYNTAX), CS_ERR_PARSE);
}

Test(compile, a_missing_c_compiler_is_its_own_kind)
{
    char err[1024];
    cs_compile_request rq = request(spring, CS_STAGE_BACKEND);
    rq.backend = CS_BACKEND_CPU;
    rq.cc = "/nonexistent/cc";
    cr_assert_eq(compile(&rq, err, sizeof err), CS_COMPILE_NO_CC, "%s", err);
    cr_assert_eq(cs_compile_status(CS_COMPILE_NO_CC), CS_ERR_UNAVAILABLE);
    /* A compiler that exists but fails is another kind. */
    rq.cc = "false";
    cr_assert_eq(compile(&rq, err, sizeof err), CS_COMPILE_CC, "%s", err);
    cr_assert_eq(cs_compile_status(CS_COMPILE_CC), CS_ERR_COMPILE);
}

Test(compile, auto_without_compiler_runs_the_interpreter_and_says_why)
{
    setenv("CARTSIM_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
    char err[1024];
    cs_compile_request rq = request(spring, CS_STAGE_BACKEND);
    rq.backend = CS_BACKEND_AUTO;
    rq.cc = "/nonexistent/cc";
    cs_kernel k;
    cr_assert_eq(cs_compile(&rq, &k, err, sizeof err), CS_COMPILE_OK, "%s", err);
    cr_assert_eq(k.backend, CS_BACKEND_INTERP);
    cr_assert(strstr(k.notice, "cpu backend unavailable (no C compiler"), "%s", k.notice);
    cs_kernel_free(&k);
}

Test(compile, no_cuda_driver_is_its_own_kind_and_auto_falls_back)
{
    setenv("CARTSIM_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
    char err[1024];
    cs_compile_request rq = request(spring, CS_STAGE_BACKEND);
    rq.backend = CS_BACKEND_CUDA;
    cr_assert_eq(compile(&rq, err, sizeof err), CS_COMPILE_NO_DRIVER, "%s", err);
    cr_assert_eq(cs_compile_status(CS_COMPILE_NO_DRIVER), CS_ERR_UNAVAILABLE);
    rq.backend = CS_BACKEND_AUTO;
    rq.cc = NULL;
    cs_kernel k;
    cr_assert_eq(cs_compile(&rq, &k, err, sizeof err), CS_COMPILE_OK, "%s", err);
    cr_assert_eq(k.backend, CS_BACKEND_CPU, "%s", k.notice);
    cr_assert(!strncmp(k.notice, "no CUDA device (no CUDA driver", 30), "%s", k.notice);
    cr_assert(k.cpu.rollout);
    cs_kernel_free(&k);
}

Test(compile, no_nvrtc_is_its_own_kind)
{
    setenv("CARTSIM_NVRTC", "/nonexistent/libnvrtc.so", 1);
    char err[1024];
    cs_compile_request rq = request(spring, CS_STAGE_BACKEND);
    rq.cubin = true;
    rq.arch = 90;
    cr_assert_eq(compile(&rq, err, sizeof err), CS_COMPILE_NO_NVRTC, "%s", err);
    cr_assert_eq(cs_compile_status(CS_COMPILE_NO_NVRTC), CS_ERR_UNAVAILABLE);
}

Test(compile, an_unknown_arch_is_its_own_kind)
{
    cs_nvrtc *nv;
    char err[1024];
    if (cs_nvrtc_open(&nv, err, sizeof err))
        cr_skip_test("no NVRTC here: %s", err);
    cs_nvrtc_close(nv);
    cs_compile_request rq = request(spring, CS_STAGE_BACKEND);
    rq.cubin = true;
    rq.arch = 10;   /* sm_10: older than any NVRTC knows */
    cr_assert_eq(compile(&rq, err, sizeof err), CS_COMPILE_UNKNOWN_ARCH, "%s", err);
    cr_assert_eq(cs_compile_status(CS_COMPILE_UNKNOWN_ARCH), CS_ERR_ARGUMENT);
}

Test(compile, an_unknown_pass_a_bad_override_and_a_refused_policy_are_kinds)
{
    char err[1024];
    cs_compile_request rq = request(spring, CS_STAGE_PASSES);
    rq.after = "inline";
    cr_assert_eq(compile(&rq, err, sizeof err), CS_COMPILE_UNKNOWN_PASS, "%s", err);
    rq.after = NULL;
    const char *params[] = {"k"};
    rq.params = params;
    rq.n_params = 1;
    cr_assert_eq(compile(&rq, err, sizeof err), CS_COMPILE_ARGUMENT, "%s", err);
    rq.n_params = 0;
    rq.bind_policy = bind_refused;
    cr_assert_eq(compile(&rq, err, sizeof err), CS_COMPILE_POLICY, "%s", err);
    cr_assert_str_eq(err, "no policy called 'nosuch'");
}

Test(compile, every_failure_kind_maps_to_a_failing_status)
{
    cr_assert_eq(cs_compile_status(CS_COMPILE_OK), CS_OK);
    for (int e = 1; e < CS_COMPILE_ERROR_COUNT; e++)
        cr_assert_neq(cs_compile_status((cs_compile_error)e), CS_OK, "kind %d", e);
}

static unsigned live_nodes(const cs_program *p)
{
    bool *live = calloc(cs_graph_count(p->graph), sizeof *live);
    cs_program_mark_live(p, live);
    unsigned n = 0;
    for (uint32_t i = 0; i < cs_graph_count(p->graph); i++)
        n += live[i];
    free(live);
    return n;
}

/* Each stop leaves what its stage made and nothing after it. */
Test(compile, the_driver_stops_after_each_stage)
{
    char err[1024];
    static const char *const passes[] = {"parse", "fold", "concat", "dce"};
    unsigned live[4];
    for (int i = 0; i < 4; i++) {
        cs_compile_request rq = request(spring, CS_STAGE_PASSES);
        rq.after = passes[i];
        cs_kernel k;
        cr_assert_eq(cs_compile(&rq, &k, err, sizeof err), CS_COMPILE_OK, "%s", err);
        cr_assert(k.prog && !k.plan.roll.kernel && !k.source.data && !k.cpu.rollout, "after %s", passes[i]);
        live[i] = live_nodes(k.prog);
        cs_kernel_free(&k);
    }
    cr_assert_lt(live[1], live[0], "folding 0 * (2 * 3) leaves fewer live nodes");

    cs_compile_request rq = request(spring, CS_STAGE_PARTITION);
    cs_kernel k;
    cr_assert_eq(cs_compile(&rq, &k, err, sizeof err), CS_COMPILE_OK, "%s", err);
    cr_assert(k.plan.roll.kernel && k.plan.step.kernel && k.plan.step_fused.kernel && !k.source.data);
    cr_assert_eq(k.kernels_per_step, 1, "fusion full: one kernel");
    cs_kernel_free(&k);

    rq = request(spring, CS_STAGE_EMIT);
    rq.dialect = CS_DIALECT_CUDA;
    cr_assert_eq(cs_compile(&rq, &k, err, sizeof err), CS_COMPILE_OK, "%s", err);
    cr_assert(k.source.data && strstr(k.source.data, "cs_kernel_rollout"), "the CUDA dialect");
    cr_assert(!k.cpu.rollout && !k.cuda);
    cs_kernel_free(&k);

    rq = request(spring, CS_STAGE_BACKEND);
    rq.fusion = CS_FUSION_NONE;
    cr_assert_eq(cs_compile(&rq, &k, err, sizeof err), CS_COMPILE_OK, "%s", err);
    cr_assert_eq(k.backend, CS_BACKEND_INTERP);
    cr_assert_gt(k.kernels_per_step, 1, "fusion none: a kernel per op");
    cs_kernel_free(&k);
}

static cs_status bind_agent(cs_program *p, void *ctx, char *err, size_t err_size)
{
    cs_agent_weights w;
    return cs_agent_build(p, ctx, &w, err, err_size);
}

/* cs_dump is the driver stopped after a pass and the partition: its text is
 * that program's graph and partition, whichever pass it names. */
Test(compile, cs_dump_is_the_driver_stopped_after_a_pass)
{
    static const char *const passes[] = {"parse", "fold", "concat", "dce"};
    char *texts[4];
    for (int i = 0; i < 4; i++) {
        cs_config cfg;
        cs_config_init(&cfg);
        cfg.env = "cartpole_concat";
        cfg.dtype = CS_DTYPE_F64;
        char error[1024];
        cr_assert_eq(cs_dump(&cfg, passes[i], "text", &texts[i], error, sizeof error), CS_OK, "%s", error);

        cs_env_source src;
        char err[1024];
        cr_assert_eq(cs_env_source_load("cartpole_concat", NULL, &src, err, sizeof err), CS_OK, "%s", err);
        cs_compile_request rq = {.source = src.text, .len = src.len, .filename = src.filename, .real = CS_F64,
                                 .bind_policy = bind_agent, .policy_ctx = "random", .fusion = CS_FUSION_FULL,
                                 .unroll = 1, .after = passes[i], .stop = CS_STAGE_PARTITION};
        cs_kernel k;
        cr_assert_eq(cs_compile(&rq, &k, err, sizeof err), CS_COMPILE_OK, "%s", err);
        cs_env_source_free(&src);
        cs_text t = {0};
        cs_dump_graph(k.prog, false, &t);
        cs_text_printf(&t, "\n# rollout step, fusion full\n");
        cs_dump_partition(k.prog, &k.plan.roll, &t);
        cr_assert_str_eq(texts[i], t.data, "after %s", passes[i]);
        cs_text_free(&t);
        cs_kernel_free(&k);
    }
    cr_assert_str_neq(texts[0], texts[3], "parse and dce leave different programs");
    cr_assert_str_neq(texts[1], texts[2], "concat forwards the stacked state under full");
    for (int i = 0; i < 4; i++)
        free(texts[i]);
}

/* cs_program_finish says which block lacks a value (the parser places its
 * error there), rather than the parser guessing from the message's words:
 * a state named reset_me without a next value is the step's fault. */
Test(compile, finish_says_which_block_is_at_fault)
{
    char err[256];
    for (int missing = 0; missing < 3; missing++) {
        cs_program *p = cs_program_new(CS_F64);
        cr_assert(p);
        cr_assert_eq(cs_program_add_state(p, "reset_me", CS_F64, CS_SCALAR), 0);
        if (missing != 2)
            cr_assert_eq(cs_program_add_input(p, "action", CS_I32, 0, 1), 0);
        cs_node x = cs_leaf(p->graph, CS_OP_CARRIED, CS_F64, 0);
        p->next[0] = missing == 0 ? 0 : x;
        p->restart[0] = missing == 1 ? 0 : cs_const(p->graph, CS_F64, 0);
        p->reward = cs_const(p->graph, CS_F64, 0);
        p->terminated = cs_const(p->graph, CS_BOOL, 0);
        int want[] = {CS_FINISH_STEP, CS_FINISH_RESET, CS_FINISH_PROGRAM};
        cr_assert_eq(cs_program_finish(p, err, sizeof err), want[missing], "case %d: %s", missing, err);
        cs_program_free(p);
    }
}

/* The documented maximum of step draws (docs/dsl.md: 65536 a stream) with
 * the random policy, whose draws come after the environment's: draw 65536
 * once overflowed the draw number's 16 bits into the stream's, became a
 * restart draw, and the C it made used an undeclared rw_ (issue 32, 11). */
Test(compile, the_random_policy_after_the_most_step_draws_draws_from_the_step_stream, .timeout = 120)
{
    enum { STATES = 16, DRAWS = 65536 };
    size_t cap = (size_t)DRAWS * 20 + 4096, len = 0;
    char *src = malloc(cap);
    cr_assert_not_null(src);
    len += (size_t)snprintf(src + len, cap - len, "env draws \"Draws-v0\"\nmax_steps 10\nstate s0");
    for (int k = 1; k < STATES; k++)
        len += (size_t)snprintf(src + len, cap - len, ", s%d", k);
    len += (size_t)snprintf(src + len, cap - len, "\naction discrete 2\nobserve s0\nreset {\n");
    for (int k = 0; k < STATES; k++)
        len += (size_t)snprintf(src + len, cap - len, "    s%d = 0\n", k);
    len += (size_t)snprintf(src + len, cap - len, "}\nstep {\n");
    for (int k = 0; k < STATES; k++) {
        len += (size_t)snprintf(src + len, cap - len, "    s%d' = uniform(0, 1)", k);
        for (int d = 1; d < DRAWS / STATES; d++)
            len += (size_t)snprintf(src + len, cap - len, " + uniform(0, 1)");
        len += (size_t)snprintf(src + len, cap - len, "\n");
    }
    len += (size_t)snprintf(src + len, cap - len, "    reward = 1\n    terminated = false\n}\n");
    cs_compile_request rq = request(src, CS_STAGE_EMIT);
    rq.real = CS_F32;
    rq.dialect = CS_DIALECT_C;
    cs_kernel k;
    char err[1024];
    cr_assert_eq(cs_compile(&rq, &k, err, sizeof err), CS_COMPILE_OK, "%s", err);
    cr_expect_eq(k.prog->n_step_draws, DRAWS + 1, "the policy's draw follows the environment's");
    cr_expect_eq(k.prog->n_restart_draws, 0, "the reset draws nothing");
    /* no restart words anywhere: cs_fresh declares none, no loop reads any */
    cr_expect_null(strstr(k.source.data, "rw_"), "%.200s", k.source.data ? strstr(k.source.data, "rw_") : "");
    cs_kernel_free(&k);
    free(src);
}

/* Strict mode's index check is a kernel variant of its own: a program with
 * run-time indices gets the fault word's store only when strict, in both
 * dialects, and one without any compiles to the same source either way. */
Test(compile, strict_index_checks_change_only_the_strict_kernels)
{
    static const char walk[] =
        "env walk \"Walk-v0\"\n"
        "const w = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]\n"
        "state pos: int\n"
        "action discrete 2\n"
        "observe pos in discrete(100)\n"
        "reset {\n    pos = 0\n}\n"
        "step {\n    reward = w[pos]\n    pos' = pos + action\n    terminated = false\n}\n";
    const char *sources[2] = {walk, spring};
    for (int d = 0; d < 2; d++)
        for (int src = 0; src < 2; src++) {
            char *text[2];
            for (int strict = 0; strict < 2; strict++) {
                cs_compile_request rq = request(sources[src], CS_STAGE_EMIT);
                rq.dialect = d ? CS_DIALECT_CUDA : CS_DIALECT_C;
                rq.strict = strict;
                cs_kernel k;
                char err[1024];
                cr_assert_eq(cs_compile(&rq, &k, err, sizeof err), CS_COMPILE_OK, "%s", err);
                text[strict] = strdup(k.source.data);
                cs_kernel_free(&k);
            }
            cr_expect_null(strstr(text[0], "index_fault["), "dialect %d: not strict, no fault word", d);
            if (src == 0)
                cr_expect_not_null(strstr(text[1], "index_fault[lane] = "), "dialect %d: strict stores it", d);
            else
                cr_expect_str_eq(text[1], text[0], "dialect %d: no run-time index, nothing to check", d);
            free(text[0]);
            free(text[1]);
        }
}

/* A step that loops over array elements opens its C with
 * CS_ELEMENT_LOOPS_MARK, which sets the cpu backend's optimization flags
 * (jit/backend_cpu.c); one whose arrays are all scalarized does not. */
Test(compile, element_loops_are_marked_for_the_cpu_backend)
{
    static const char wide[] =
        "env wide \"Wide-v0\"\n"
        "state x: real[20]\n"
        "action discrete 2\n"
        "observe x\n"
        "reset {\n    x = zeros(20)\n}\n"
        "step {\n    x' = x * 0.5 + 1.0\n    reward = sum(x')\n    terminated = false\n}\n";
    const char *sources[2] = {wide, spring};
    for (int src = 0; src < 2; src++) {
        cs_compile_request rq = request(sources[src], CS_STAGE_EMIT);
        rq.dialect = CS_DIALECT_C;
        cs_kernel k;
        char err[1024];
        cr_assert_eq(cs_compile(&rq, &k, err, sizeof err), CS_COMPILE_OK, "%s", err);
        bool marked = strncmp(k.source.data, CS_ELEMENT_LOOPS_MARK, strlen(CS_ELEMENT_LOOPS_MARK)) == 0;
        cr_expect_eq(marked, src == 0, "%s: %.60s", src ? "spring" : "wide", k.source.data);
        cs_kernel_free(&k);
    }
}
