/* A generator of random valid .env programs for differential testing
 * (issue 16, 7): elementwise expressions over states, params and the action
 * with every operator and builtin of the language. Header-only, so that the
 * Criterion suite (tests/test_differential.c) and the libFuzzer target
 * (tests/fuzz/fuzz_differential.c) share it without a library of their own.
 *
 * A program is a pure function of its seed. Values are kept mostly finite
 * (clip around the state updates); what still overflows restarts its
 * environment, which every backend must do alike. */
#ifndef CS_RANDOM_ENV_H
#define CS_RANDOM_ENV_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cartsim.h"
#include "splitmix.h"

typedef struct {
    uint64_t s;
    char *out;
    size_t len, cap;
    int n_states, n_params;
    int discrete;   /* the action: discrete 3 (an int), else box(-1, 1) */
} random_env;

static uint64_t random_env_next(random_env *g)
{
    return splitmix_next(&g->s);
}

static int random_env_below(random_env *g, int n) { return (int)(random_env_next(g) % (uint64_t)n); }

static void random_env_put(random_env *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void random_env_put(random_env *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(g->out + g->len, g->cap - g->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        g->len = g->len + (size_t)n < g->cap ? g->len + (size_t)n : g->cap - 1;
}

/* A literal written the way a person would: a few digits, sometimes negative. */
static void random_env_number(random_env *g)
{
    static const char *const numbers[] = {"0.5", "1.0", "2.0", "-1.5", "0.25", "3.0", "0.1", "-0.75", "1.25", "7.0",
                                          "0.001", "100.0", "-2.0", "0.0"};
    random_env_put(g, "%s", numbers[random_env_below(g, sizeof numbers / sizeof numbers[0])]);
}

static void random_env_real(random_env *g, int depth);

static void random_env_leaf(random_env *g)
{
    switch (random_env_below(g, 5)) {
    case 0:
    case 1:
        random_env_put(g, "s%d", random_env_below(g, g->n_states));
        break;
    case 2:
        random_env_put(g, "p%d", random_env_below(g, g->n_params));
        break;
    case 3:
        random_env_put(g, "action");
        break;
    default:
        random_env_number(g);
        break;
    }
}

/* A bool: every comparison, and, or, not, ==/!= between bools. */
static void random_env_bool(random_env *g, int depth)
{
    static const char *const cmp[] = {"<", "<=", ">", ">=", "==", "!="};
    int pick = depth <= 0 ? 0 : random_env_below(g, 6);
    if (pick <= 2) {
        random_env_put(g, "(");
        random_env_real(g, depth - 1);
        random_env_put(g, " %s ", cmp[random_env_below(g, 6)]);
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
    } else if (pick == 3) {
        random_env_put(g, "(not ");
        random_env_bool(g, depth - 1);
        random_env_put(g, ")");
    } else {
        static const char *const logic[] = {"and", "or", "==", "!="};
        random_env_put(g, "(");
        random_env_bool(g, depth - 1);
        random_env_put(g, " %s ", logic[random_env_below(g, 4)]);
        random_env_bool(g, depth - 1);
        random_env_put(g, ")");
    }
}

/* A real: every arithmetic operator and math builtin. */
static void random_env_real(random_env *g, int depth)
{
    static const char *const unary[] = {"sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "floor", "abs", "f32"};
    static const char *const binary_fn[] = {"atan2", "pow", "fmod", "min", "max"};
    static const char *const binary_op[] = {"+", "-", "*", "/", "%"};
    if (depth <= 0 || random_env_below(g, 8) == 0) {
        random_env_leaf(g);
        return;
    }
    switch (random_env_below(g, 7)) {
    case 0:
        random_env_put(g, "%s(", unary[random_env_below(g, sizeof unary / sizeof unary[0])]);
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
        break;
    case 1:
        random_env_put(g, "%s(", binary_fn[random_env_below(g, sizeof binary_fn / sizeof binary_fn[0])]);
        random_env_real(g, depth - 1);
        random_env_put(g, ", ");
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
        break;
    case 2:
    case 3:
        random_env_put(g, "(");
        random_env_real(g, depth - 1);
        random_env_put(g, " %s ", binary_op[random_env_below(g, sizeof binary_op / sizeof binary_op[0])]);
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
        break;
    case 4:
        random_env_put(g, "(-");
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
        break;
    case 5:
        random_env_put(g, "clip(");
        random_env_real(g, depth - 1);
        random_env_put(g, ", ");
        random_env_number(g);
        random_env_put(g, ", ");
        random_env_number(g);
        random_env_put(g, ")");
        break;
    default:
        random_env_put(g, "(");
        random_env_bool(g, depth - 1);
        random_env_put(g, " ? ");
        random_env_real(g, depth - 1);
        random_env_put(g, " : ");
        random_env_real(g, depth - 1);
        random_env_put(g, ")");
        break;
    }
}

/* Writes the program of `seed` into out (NUL-terminated); its length. */
static size_t random_env_program(uint64_t seed, char *out, size_t cap)
{
    random_env g = {.s = seed, .out = out, .cap = cap};
    out[0] = '\0';
    g.n_states = 1 + random_env_below(&g, 4);
    g.n_params = 1 + random_env_below(&g, 3);
    g.discrete = random_env_below(&g, 2);
    int depth = 2 + random_env_below(&g, 3);
    random_env_put(&g, "env random_%llu \"Random-v0\"\nmax_steps %d\n", (unsigned long long)(seed % 1000000),
                   10 + random_env_below(&g, 40));
    for (int k = 0; k < g.n_params; k++) {
        random_env_put(&g, "param p%d = ", k);
        random_env_number(&g);
        random_env_put(&g, "\n");
    }
    random_env_put(&g, "state");
    for (int k = 0; k < g.n_states; k++)
        random_env_put(&g, "%s s%d", k ? "," : "", k);
    random_env_put(&g, "\naction %s\nobserve", g.discrete ? "discrete 3" : "box(-1, 1)");
    for (int k = 0; k < g.n_states; k++)
        random_env_put(&g, "%s s%d", k ? "," : "", k);
    random_env_put(&g, "\nreset {\n");
    for (int k = 0; k < g.n_states; k++)
        random_env_put(&g, "    s%d = uniform(-1, 1)\n", k);
    random_env_put(&g, "}\nstep {\n");
    /* Bounded updates: the interesting arithmetic happens inside. */
    for (int k = 0; k < g.n_states; k++) {
        random_env_put(&g, "    s%d' = clip(", k);
        random_env_real(&g, depth);
        random_env_put(&g, ", -10, 10)\n");
    }
    /* Rare enough that episodes run for a while. */
    random_env_put(&g, "    terminated = abs(s%d') > 9.0 and ", random_env_below(&g, g.n_states));
    random_env_bool(&g, 2);
    random_env_put(&g, "\n    reward = ");
    random_env_real(&g, depth);
    random_env_put(&g, "\n}\n");
    return g.len;
}

/* Whether the cpu backend's and the interpreter's rollouts of one program
 * differ, for the two differential harnesses: in the checksum, the
 * episodes, the non-finite restarts or the mean return, two NaNs agreeing
 * (a NaN's sign and payload depend on which operand an instruction passes
 * on, which C leaves open). If they differ, what each gave, into why. */
static inline bool random_env_rollouts_differ(const cs_rollout_stats *cpu, const cs_rollout_stats *interp, char *why,
                                              size_t size)
{
    bool both_nan = cpu->mean_return != cpu->mean_return && interp->mean_return != interp->mean_return;
    if (cpu->checksum == interp->checksum && cpu->episodes == interp->episodes &&
        cpu->nonfinite == interp->nonfinite &&
        (both_nan || memcmp(&cpu->mean_return, &interp->mean_return, sizeof(double)) == 0))
        return false;
    snprintf(why, size,
             "cpu %016llx (%lld episodes, %lld non-finite, mean return %a), interpreter %016llx (%lld, %lld, %a)",
             (unsigned long long)cpu->checksum, (long long)cpu->episodes, (long long)cpu->nonfinite, cpu->mean_return,
             (unsigned long long)interp->checksum, (long long)interp->episodes, (long long)interp->nonfinite,
             interp->mean_return);
    return true;
}

#endif
