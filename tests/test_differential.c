/* Random-program differential test (issue 16, 7): random valid .env programs
 * (tests/random_env.h: every operator and builtin over states, params and
 * the action) run on the cpu backend and the interpreter from the same seed;
 * their rollouts must agree to the bit (checksum, episodes, non-finite
 * restarts, the mean return) in f32 and f64. The CUDA dialect is compared with the cpu
 * through the host shim in tests/test_cuda.c (cuda_host). A fixed set of
 * seeds here; `make fuzz` runs tests/fuzz/fuzz_differential.c on any. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cartsim.h"
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
