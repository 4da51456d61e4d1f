/* docs/dsl.md's examples: every block of the page that opens with
 * ```env is a complete environment. Each parses in f32 and f64, runs a
 * rollout on the interpreter, and on every other backend: where that
 * backend compiles it, with the interpreter's checksum and episodes;
 * where it cannot yet (the cpu emitter refusing arrays and integer state
 * until it lowers them, no GPU here), only with that refusal. And every
 * construct of the language appears in some example. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cartsim.h"
#include "jit.h"

typedef struct {
    char *text;
    size_t len;
    unsigned line;
} example;

static char *read_doc(void)
{
    const char *root = getenv("CARTSIM_ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/docs/dsl.md", root ? root : ".");
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert(s && fread(s, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    s[n] = 0;
    return s;
}

/* The ```env blocks of the page, in order. */
static unsigned find_examples(char *doc, example *out, unsigned max)
{
    unsigned n = 0, line = 1;
    for (char *s = doc; *s && n < max; s++) {
        if (*s == '\n')
            line++;
        if ((s != doc && s[-1] != '\n') || strncmp(s, "```env\n", 7))
            continue;
        char *body = s + 7, *end = strstr(body, "\n```\n");
        cr_assert(end, "docs/dsl.md:%u: an example without its closing ```", line);
        out[n++] = (example){body, (size_t)(end + 1 - body), line};
        for (char *c = s; c < end; c++)
            line += *c == '\n';
        s = end;
    }
    return n;
}

static uint64_t rollout(const char *path, cs_backend backend, cs_dtype dtype, int64_t *episodes, cs_status *st,
                        char *why, size_t why_size)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = path;
    cfg.num_envs = 13;
    cfg.backend = backend;
    cfg.dtype = dtype;
    cs_env *e = NULL;
    *st = cs_env_open(&cfg, &e);
    if (*st != CS_OK) {
        snprintf(why, why_size, "%s", e ? cs_env_error(e) : "out of memory");
        cs_env_close(e);
        return 0;
    }
    cs_rollout_stats stats;
    cr_assert_eq(cs_env_reset(e, 7), CS_OK, "%s", cs_env_error(e));
    cr_assert_eq(cs_env_rollout(e, 150, &stats), CS_OK, "%s", cs_env_error(e));
    *episodes = stats.episodes;
    cs_env_close(e);
    return stats.checksum;
}

Test(dsl_examples, every_example_runs_alike_on_every_backend, .timeout = 1200)
{
    char *doc = read_doc();
    example ex[32];
    unsigned n = find_examples(doc, ex, 32);
    cr_assert_geq(n, 8, "only %u examples in docs/dsl.md", n);
    char dir[] = "/tmp/cartsim-dsl-XXXXXX";
    cr_assert(mkdtemp(dir));
    unsigned compiled = 0, refused = 0;
    for (unsigned k = 0; k < n; k++) {
        char err[512];
        for (int r = 0; r < 2; r++) {
            cs_program *p = NULL;
            int rc = cs_parse(ex[k].text, ex[k].len, "dsl.md", r ? CS_F32 : CS_F64, NULL, 0, &p, err, sizeof err);
            cr_assert_eq(rc, 0, "docs/dsl.md:%u: the example does not parse: %s", ex[k].line, err);
            cs_program_free(p);
        }
        char path[256];
        snprintf(path, sizeof path, "%s/example%u.env", dir, k);
        FILE *f = fopen(path, "w");
        cr_assert(f && fwrite(ex[k].text, 1, ex[k].len, f) == ex[k].len);
        fclose(f);
        const cs_dtype dtypes[] = {CS_DTYPE_F32, CS_DTYPE_F64};
        for (int d = 0; d < 2; d++) {
            int64_t episodes = 0, other_episodes = 0;
            cs_status st;
            uint64_t sum = rollout(path, CS_BACKEND_INTERP, dtypes[d], &episodes, &st, err, sizeof err);
            cr_assert_eq(st, CS_OK, "docs/dsl.md:%u on the interpreter: %s", ex[k].line, err);
            const cs_backend others[] = {CS_BACKEND_CPU, CS_BACKEND_CUDA};
            for (int b = 0; b < 2; b++) {
                uint64_t other = rollout(path, others[b], dtypes[d], &other_episodes, &st, err, sizeof err);
                if (st != CS_OK) {
                    /* no GPU: the cpu and CUDA dialects lower every example (jit/emit.c) */
                    bool expected = others[b] == CS_BACKEND_CUDA && st == CS_ERR_UNAVAILABLE;
                    cr_expect(expected, "docs/dsl.md:%u on %s: %s", ex[k].line, cs_backend_name(others[b]), err);
                    refused += others[b] == CS_BACKEND_CPU;
                    continue;
                }
                compiled += others[b] == CS_BACKEND_CPU;
                cr_expect_eq(other, sum, "docs/dsl.md:%u: %s checksum %016llx, the interpreter's %016llx", ex[k].line,
                             cs_backend_name(others[b]), (unsigned long long)other, (unsigned long long)sum);
                cr_expect_eq(other_episodes, episodes, "docs/dsl.md:%u on %s: episodes differ", ex[k].line,
                             cs_backend_name(others[b]));
            }
        }
        unlink(path);
    }
    rmdir(dir);
    cr_log_info("docs/dsl.md: %u examples; the cpu backend ran %u (dtype, example) pairs and refused %u", n,
                compiled, refused);
    cr_assert_eq(compiled, 2 * n, "every example compiles on the cpu in both dtypes (refused %u)", refused);
    free(doc);
}

/* Every construct of the language, as it is written, in some example. */
Test(dsl_examples, every_construct_has_an_example)
{
    char *doc = read_doc();
    example ex[32];
    unsigned n = find_examples(doc, ex, 32);
    static const char *const constructs[] = {
        ": int", ": bool", "bool[", "real[", "param sides: int", "param bust_ends: bool", "const map = [[",
        "in discrete(", "in box(", " // ", " % ", "int(", "real(", "bool(",
        "[1:4, 1:5]", "[-1, k]", "moves[action]", "walls[want[0], want[1]]", "set(", "for ", "range(1, 3)",
        "total = total +", "zeros(", "ones(", "full(", "arange(", "reshape(", "stack(", "concat(", "where(",
        "roll(", "shift(", "fill=", "axis=", "sum(", "any(", "all(", "count(", "argmax(", "argmin(", "min(grid)",
        "max(grid, axis=0)", "uniform(", "shape=[", "randint(", "bernoulli(", "categorical(weights)",
        "categorical(0.25", "normal()", "normal(0.0, 1.0", "policy ", "fn ",
    };
    for (size_t c = 0; c < sizeof constructs / sizeof constructs[0]; c++) {
        bool found = false;
        for (unsigned k = 0; k < n && !found; k++) {
            char save = ex[k].text[ex[k].len];
            ex[k].text[ex[k].len] = 0;
            found = strstr(ex[k].text, constructs[c]) != NULL;
            ex[k].text[ex[k].len] = save;
        }
        cr_expect(found, "no example of docs/dsl.md writes '%s'", constructs[c]);
    }
    free(doc);
}

/* GCC 12.2 at -O3 with AVX-512 built tests/envs/broadcast_wall.env's wall,
 * rows of bricks from broadcast comparisons, with 8 bricks too many; the cpu
 * backend's -fno-tree-fre keeps it the interpreter's (fails without it on
 * an AVX-512 machine). */
Test(dsl_examples, a_wall_built_by_broadcasting_is_the_interpreters_on_the_cpu)
{
    const char *root = getenv("CARTSIM_ROOT");
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/tests/envs/broadcast_wall.env", root ? root : ".");
    const cs_dtype dtypes[] = {CS_DTYPE_F32, CS_DTYPE_F64};
    for (int d = 0; d < 2; d++) {
        int64_t episodes, cpu_episodes;
        cs_status st;
        uint64_t interp = rollout(path, CS_BACKEND_INTERP, dtypes[d], &episodes, &st, err, sizeof err);
        cr_assert_eq(st, CS_OK, "%s", err);
        uint64_t cpu = rollout(path, CS_BACKEND_CPU, dtypes[d], &cpu_episodes, &st, err, sizeof err);
        cr_assert_eq(st, CS_OK, "%s", err);
        cr_assert_eq(cpu, interp, "the cpu's checksum %016llx, the interpreter's %016llx", (unsigned long long)cpu,
                     (unsigned long long)interp);
        cr_assert_eq(cpu_episodes, episodes);
    }
}
