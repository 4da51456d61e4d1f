/* One result whatever computes an op: constant folding, the interpreter and
 * the generated C agree bit for bit, through the public API (the per-op
 * grid, with the CUDA dialect built as host C, is in test_cuda.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cartsim.h"

/* An environment from source text, written to a temporary file. */
static cs_env *open_source_math(const char *src, int64_t n, cs_backend b, cs_dtype d, cs_math m, char path[64])
{
    snprintf(path, 64, "/tmp/cartsim-ops-XXXXXX.env");
    int fd = mkstemps(path, 4);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, src, strlen(src)), (ssize_t)strlen(src));
    close(fd);
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = path;
    cfg.num_envs = n;
    cfg.backend = b;
    cfg.dtype = d;
    cfg.math = m;
    cs_env *env;
    cs_status s = cs_env_open(&cfg, &env);
    cr_assert_eq(s, CS_OK, "open: %s", cs_env_error(env));
    return env;
}

static cs_env *open_source(const char *src, int64_t n, cs_backend b, cs_dtype d, char path[64])
{
    return open_source_math(src, n, b, d, CS_MATH_EXACT, path);
}

static void close_source(cs_env *env, const char *path)
{
    cs_env_close(env);
    unlink(path);
}

static const cs_backend backends[] = {CS_BACKEND_CPU, CS_BACKEND_INTERP};
static const cs_dtype dtypes[] = {CS_DTYPE_F32, CS_DTYPE_F64};

/* sin(p) of a param is folded; sin(a) of a state holding p is computed at
 * run time: the same function, so the difference is 0. (In f32 glibc's
 * sinf, which folding once used, is one ulp off cs_sinf at this p, and
 * tanhf at 0x1.000004p-2.) The same in f64's fast math mode. */
Test(ops, folding_a_param_equals_computing_the_state)
{
    const char *src = "env same \"Same-v0\"\n"
                      "param p = 0.500001490116119384765625\n"
                      "param q = 0.2500000596046447753906250\n"
                      "state a, b\naction discrete 2\nobserve a\n"
                      "reset {\n    a = p\n    b = q\n}\n"
                      "step {\n    a' = a\n    b' = b\n"
                      "    reward = abs(sin(p) - sin(a)) + abs(tanh(q) - tanh(b)) + abs(cos(p) - cos(a))\n"
                      "    terminated = false\n}\n";
    for (int b = 0; b < 2; b++)
        for (int d = 0; d < 3; d++) {
            char path[64];
            cs_env *env = open_source_math(src, 4, backends[b], dtypes[d % 2], d == 2 ? CS_MATH_FAST : CS_MATH_EXACT,
                                           path);
            int32_t actions[4] = {0, 1, 0, 1};
            cr_assert_eq(cs_env_reset(env, 1), CS_OK);
            cr_assert_eq(cs_env_step(env, actions), CS_OK, "%s", cs_env_error(env));
            const double *r = cs_env_rewards(env);
            for (int i = 0; i < 4; i++)
                cr_assert(r[i] == 0, "backend %d dtype %d%s: reward %.9g, not 0", b, d % 2, d == 2 ? " fast" : "", r[i]);
            close_source(env, path);
        }
}

/* The rewards of every lane, bits, on one backend. */
static void rewards_of(const char *src, cs_backend b, cs_dtype d, double out[4])
{
    char path[64];
    cs_env *env = open_source(src, 4, b, d, path);
    int32_t actions[4] = {0, 1, 0, 1};
    cr_assert_eq(cs_env_reset(env, 1), CS_OK);
    cr_assert_eq(cs_env_step(env, actions), CS_OK, "%s", cs_env_error(env));
    memcpy(out, cs_env_rewards(env), 4 * sizeof(double));
    close_source(env, path);
}

/* GCC folds atan2f(1.6f, -1.0f) in the kernel with its own correctly
 * rounded arithmetic unless it is kept from it; the interpreter calls glibc's
 * atan2f, one ulp off there. */
Test(ops, libm_calls_of_constants_are_not_folded_by_the_c_compiler)
{
    const char *src = "env at \"Atan-v0\"\nstate s\naction discrete 2\nobserve s\n"
                      "reset {\n    s = 0\n}\n"
                      "step {\n    s' = s\n"
                      "    reward = atan2(1.6, action == 1 ? -1.0 : 1.0) + pow(1.3, action == 1 ? 2.0 : 3.5)\n"
                      "    terminated = false\n}\n";
    for (int d = 0; d < 2; d++) {
        double cpu[4], interp[4];
        rewards_of(src, CS_BACKEND_CPU, dtypes[d], cpu);
        rewards_of(src, CS_BACKEND_INTERP, dtypes[d], interp);
        for (int i = 0; i < 4; i++)
            cr_assert_eq(memcmp(&cpu[i], &interp[i], sizeof(double)), 0, "dtype %d lane %d: cpu %a, interp %a", d, i,
                         cpu[i], interp[i]);
    }
}

/* A NaN's sign differs between GCC's folded 0/0 (+NaN) and x86 arithmetic
 * (-NaN); the checksum hashes NaNs as one canonical NaN, so both backends
 * give one checksum. */
Test(ops, nan_results_give_one_checksum_on_every_backend)
{
    const char *src = "env nan \"NaN-v0\"\nstate s0\naction discrete 2\nobserve s0\n"
                      "reset {\n    s0 = uniform(0, 1)\n}\n"
                      "step {\n    s0' = s0\n"
                      "    reward = action == 1 ? -sqrt(s0 - 5) : 0 / 0\n"
                      "    terminated = false\n}\n";
    for (int d = 0; d < 2; d++) {
        uint64_t sums[2];
        for (int b = 0; b < 2; b++) {
            char path[64];
            cs_env *env = open_source(src, 64, backends[b], dtypes[d], path);
            cs_rollout_stats st;
            cr_assert_eq(cs_env_reset(env, 3), CS_OK);
            cr_assert_eq(cs_env_rollout(env, 20, &st), CS_OK, "%s", cs_env_error(env));
            sums[b] = st.checksum;
            close_source(env, path);
        }
        cr_assert_eq(sums[0], sums[1], "dtype %d: cpu %016llx, interp %016llx", d, (unsigned long long)sums[0],
                     (unsigned long long)sums[1]);
    }
}

/* f64 sin and cos in the exact mode's C dialect: a vector loop of the near
 * functions, glibc's call for the lanes they flag far (jit/emit.c). Lanes of
 * every kind in one block (near, tiny, power-of-two results, past the near
 * domain) through the step API: glibc's bits, on the cpu as in the
 * interpreter; then rollouts of long, padded and short blocks (300 and 3
 * environments), where angles wander in and out of the near domain: the
 * cpu's checksum is the interpreter's. */
Test(ops, f64_sin_and_cos_are_glibcs_in_near_and_far_lanes)
{
    const char *src = "env wave \"Wave-v0\"\nmax_steps 30\nstate a, b, c\naction discrete 2\nobserve a, b, c\n"
                      "reset {\n    a = uniform(-0.6, 0.6)\n    b = 0\n    c = uniform(-0.3, 0.3)\n}\n"
                      "step {\n    a' = a + 0.1 * sin(3 * a) - 0.05 * c\n    b' = cos(a)\n"
                      "    c' = sin(c) + 0.01 * (action - 0.5)\n    reward = 0\n    terminated = false\n}\n";
    const double args[] = {0.0, -0.0, 1e-300, 0x1p-27, 0x1.fffffffffffffp-27, 0x1p-26, 0.1, -0.2, 0.25,
                           nextafter(0.25, 1), -0.3, 1.5, -3.0, 1e5, asin(0x1p-10), 0x1.921fb54442d18p+0};
    enum { N = 37, STATE = 3 };
    for (int b = 0; b < 2; b++) {
        char path[64];
        cs_env *env = open_source(src, N, backends[b], CS_DTYPE_F64, path);
        cr_assert_eq(cs_env_reset(env, 5), CS_OK);
        double state[STATE * N];
        for (int i = 0; i < N; i++) {
            double x = i < (int)(sizeof args / sizeof args[0]) ? args[i] : -0.27 + 0.015 * i;
            state[i] = state[N + i] = x;
            state[2 * N + i] = -x;
        }
        cr_assert_eq(cs_env_set_state(env, state, NULL), CS_OK, "%s", cs_env_error(env));
        int32_t actions[N] = {0};
        cr_assert_eq(cs_env_step(env, actions), CS_OK, "%s", cs_env_error(env));
        double next[STATE * N];
        cr_assert_eq(cs_env_get_state(env, next), CS_OK);
        for (int i = 0; i < N; i++) {
            double x = state[i], a = x + 0.1 * sin(3 * x) - 0.05 * -x, c = sin(-x) + 0.01 * (0 - 0.5);
            cr_assert(next[i] == a && next[N + i] == cos(x) && next[2 * N + i] == c,
                      "backend %d, lane %d, x = %a: %a %a %a, want %a %a %a", b, i, x, next[i], next[N + i],
                      next[2 * N + i], a, cos(x), c);
        }
        close_source(env, path);
    }
    const int64_t sizes[] = {300, 3};
    for (int k = 0; k < 2; k++) {
        uint64_t sums[2];
        for (int b = 0; b < 2; b++) {
            char path[64];
            cs_env *env = open_source(src, sizes[k], backends[b], CS_DTYPE_F64, path);
            cs_rollout_stats st;
            cr_assert_eq(cs_env_reset(env, 9), CS_OK);
            cr_assert_eq(cs_env_rollout(env, 200, &st), CS_OK, "%s", cs_env_error(env));
            sums[b] = st.checksum;
            close_source(env, path);
        }
        cr_assert_eq(sums[0], sums[1], "%lld envs: cpu %016llx, interp %016llx", (long long)sizes[k],
                     (unsigned long long)sums[0], (unsigned long long)sums[1]);
    }
}

/* a = 1 + e and b = 1 - e, in f32 and f64, with e = 2^-13 and 2^-27: a * b - 1
 * rounds to 0 unfused, fma(a, b, -1) is exactly -e^2. */
static const char *const fma_params[2] = {"param p = 1.0001220703125\nparam q = 0.9998779296875\n",
                                          "param p = 1.000000007450580596923828125\n"
                                          "param q = 0.999999992549419403076171875\n"};
static const double fma_want[2] = {-0x1p-26, -0x1p-54};

/* fma(a, b, c) rounds once: with a = 1 + e, b = 1 - e, a * b = 1 - e^2
 * rounds to 1, so a * b - 1 is 0 while fma(a, b, -1) is -e^2 exactly. The
 * run (the reward), the folded constant (fma of the params) and the
 * unfused expression each as written, in f32 (e = 2^-13) and f64 (e =
 * 2^-27), on the cpu and the interpreter: the cpu's -ffp-contract=off
 * must leave a * b - 1 unfused, or `unfused` would be -e^2 too. */
Test(ops, fma_rounds_once_and_nothing_else_is_fused)
{
    for (int d = 0; d < 2; d++) {
        char src[1024];
        snprintf(src, sizeof src,
                 "env fused \"Fused-v0\"\n%s"
                 "state a, b, unfused, folded\naction discrete 2\nobserve unfused, folded\n"
                 "reset {\n    a = p\n    b = q\n    unfused = 1.0\n    folded = 1.0\n}\n"
                 "step {\n    a' = a\n    b' = b\n    unfused' = a * b - 1.0\n    folded' = fma(p, q, -1.0)\n"
                 "    reward = fma(a, b, -1.0)\n    terminated = false\n}\n",
                 fma_params[d]);
        for (int b = 0; b < 2; b++) {
            char path[64];
            cs_env *env = open_source(src, 4, backends[b], dtypes[d], path);
            int32_t actions[4] = {0, 1, 0, 1};
            cr_assert_eq(cs_env_reset(env, 1), CS_OK);
            cr_assert_eq(cs_env_step(env, actions), CS_OK, "%s", cs_env_error(env));
            const double *r = cs_env_rewards(env);
            const float *o = cs_env_obs(env);
            for (int i = 0; i < 4; i++) {
                cr_expect_eq(r[i], fma_want[d], "%s %s: fma(a, b, -1) = %a", cs_backend_name(backends[b]),
                             d ? "f64" : "f32", r[i]);
                cr_expect_eq(o[i], 0.0f, "%s %s: a * b - 1 = %a, contracted", cs_backend_name(backends[b]),
                             d ? "f64" : "f32", (double)o[i]);
                cr_expect_eq((double)o[4 + i], fma_want[d], "%s %s: folded fma %a", cs_backend_name(backends[b]),
                             d ? "f64" : "f32", (double)o[4 + i]);
            }
            close_source(env, path);
        }
    }
}

/* The same where the step loops over array elements, which the cpu backend
 * compiles at other optimization flags (jit/backend_cpu.c, opt_level): 20
 * elements (not scalarized), each a * b - 1 with a = 1 + e, b = 1 - e,
 * must stay 0, not -e^2, and fma of them -e^2. */
Test(ops, element_loops_are_not_fused_either)
{
    for (int d = 0; d < 2; d++) {
        char src[1024];
        snprintf(src, sizeof src,
                 "env fused \"Fused-v0\"\n%s"
                 "state a: real[20], b: real[20], unfused: real[20], fused: real[20]\n"
                 "action discrete 2\nobserve unfused, fused\n"
                 "reset {\n    a = full(p, 20)\n    b = full(q, 20)\n    unfused = 1.0\n    fused = 1.0\n}\n"
                 "step {\n    a' = a\n    b' = b\n    unfused' = a * b - 1.0\n    fused' = fma(a, b, -1.0)\n"
                 "    reward = 0.0\n    terminated = false\n}\n",
                 fma_params[d]);
        for (int b = 0; b < 2; b++) {
            char path[64];
            cs_env *env = open_source(src, 3, backends[b], dtypes[d], path);
            int32_t actions[3] = {0, 1, 0};
            cr_assert_eq(cs_env_reset(env, 1), CS_OK);
            cr_assert_eq(cs_env_step(env, actions), CS_OK, "%s", cs_env_error(env));
            const float *o = cs_env_obs(env);
            for (int k = 0; k < 20 * 3; k++) {
                cr_expect_eq(o[k], 0.0f, "%s %s: a * b - 1 = %a, contracted", cs_backend_name(backends[b]),
                             d ? "f64" : "f32", (double)o[k]);
                cr_expect_eq((double)o[20 * 3 + k], fma_want[d], "%s %s: fma %a", cs_backend_name(backends[b]),
                             d ? "f64" : "f32", (double)o[20 * 3 + k]);
            }
            close_source(env, path);
        }
    }
}
