/* The cartsim command line, run as a program: exit statuses, output formats,
 * results that must not depend on the schedule, and the bad-input corpus
 * (tests/corpus/cli_bad.txt). Also unit tests of the library's number
 * parsing and printing (sim/num.c), which flags and INI files share.
 *
 * Environment: CARTSIM_BIN (the program), CARTSIM_ROOT (the repository),
 * CARTSIM_GOLDEN (../shared/golden). The process helpers are shared with
 * tests/test_golden.c (same test binary). */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../cli/buf.c"   /* the program's output buffer: not in the library */
#include "num.h"
#include "cli_test.h"

extern char **environ;

/* ---- running the program (also used by test_golden.c) ---- */

const char *cli_test_bin(void)
{
    const char *s = getenv("CARTSIM_BIN");
    return s && *s ? s : "build/cartsim";
}

const char *cli_test_root(void)
{
    const char *s = getenv("CARTSIM_ROOT");
    return s && *s ? s : ".";
}

const char *cli_test_golden(void)
{
    const char *s = getenv("CARTSIM_GOLDEN");
    return s && *s ? s : "../shared/golden";
}

void cli_result_free(cli_result *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

/* ---- scratch directories and files, and make (also used by test_hardening.c,
 * test_output_files.c, test_cache.c, test_api.c, test_library.c) ---- */

void cli_test_scratch(char *dir_template)
{
    cr_assert_not_null(mkdtemp(dir_template), "mkdtemp %s: %s", dir_template, strerror(errno));
}

void cli_test_scratch_tmpdir(char *dir_template)
{
    cli_test_scratch(dir_template);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s/tmp", dir_template);
    cr_assert_eq(mkdir(tmp, 0700), 0, "mkdir %s: %s", tmp, strerror(errno));
    setenv("TMPDIR", tmp, 1);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

void cli_test_remove_tree(const char *dir)
{
    nftw(dir, remove_one, 16, FTW_PHYS | FTW_DEPTH);
}

void cli_test_write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    cr_assert_eq(fwrite(data, 1, n, f), n, "%s: %s", path, strerror(errno));
    cr_assert_eq(fclose(f), 0, "%s: %s", path, strerror(errno));
}

void cli_test_read_text(const char *path, char *out, size_t size)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    size_t n = fread(out, 1, size - 1, f);
    out[n] = 0;
    fclose(f);
}

void cli_test_level_logging_cc(const char *dir, char wrapper[128], char log[128])
{
    snprintf(wrapper, 128, "%s/cc", dir);
    snprintf(log, 128, "%s/levels.log", dir);
    char script[512];
    int n = snprintf(script, sizeof script,
                     "#!/bin/sh\nfor a in \"$@\"; do case $a in -O*) echo $a >> '%s';; esac; done\nexec cc \"$@\"\n",
                     log);
    cli_test_write_file(wrapper, script, (size_t)n);
    cr_assert_eq(chmod(wrapper, 0700), 0, "%s: %s", wrapper, strerror(errno));
}

void cli_test_make(const char *build, const char *args, char *out, size_t size)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C '%s' BUILD='%s' %s 2>&1",
             cli_test_root(), build, args);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f, "%s", cmd);
    size_t n = fread(out, 1, size - 1, f);
    out[n] = 0;
    cr_assert_eq(pclose(f), 0, "%s printed:\n%s", cmd, out);
}

static void append(char **buf, size_t *len, const char *data, size_t n)
{
    char *p = realloc(*buf, *len + n + 1);
    if (!p)
        abort();
    memcpy(p + *len, data, n);
    *len += n;
    p[*len] = 0;
    *buf = p;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs CARTSIM_BIN with args (NULL-terminated), stdin from /dev/null,
 * collecting stdout and stderr; killed after timeout_s. */
void cli_test_run(const char *const *args, double timeout_s, cli_result *r)
{
    memset(r, 0, sizeof *r);
    r->status = -1;
    r->out = calloc(1, 1);
    r->err = calloc(1, 1);
    int nargs = 0;
    while (args[nargs])
        nargs++;
    char **argv = calloc((size_t)nargs + 2, sizeof *argv);
    cr_assert(argv && r->out && r->err);
    argv[0] = (char *)cli_test_bin();
    for (int i = 0; i < nargs; i++)
        argv[i + 1] = (char *)args[i];

    int out[2], err[2];
    cr_assert(pipe2(out, O_CLOEXEC) == 0 && pipe2(err, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(err[1]);
    free(argv);
    cr_assert(rc == 0, "cannot start %s: %s", cli_test_bin(), strerror(rc));

    struct pollfd fds[2] = {{.fd = out[0], .events = POLLIN}, {.fd = err[0], .events = POLLIN}};
    double deadline = mono_s() + timeout_s;
    int open_fds = 2;
    while (open_fds > 0) {
        double left = deadline - mono_s();
        if (left <= 0) {
            r->timed_out = true;
            kill(pid, SIGKILL);
            break;
        }
        int n = poll(fds, 2, (int)(left * 1000) + 1);
        if (n < 0 && errno == EINTR)
            continue;
        cr_assert(n >= 0);
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buf[65536];
            ssize_t got = read(fds[i].fd, buf, sizeof buf);
            if (got > 0) {
                if (i == 0)
                    append(&r->out, &r->out_len, buf, (size_t)got);
                else
                    append(&r->err, &r->err_len, buf, (size_t)got);
            } else if (got == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0)
            close(fds[i].fd);
    int ws;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

/* Runs and requires exit status 0 and an empty stderr. */
static void run_ok(const char *const *args, cli_result *r)
{
    cli_test_run(args, 300, r);
    if (r->timed_out || r->status != 0) {
        /* Free before failing: a failed assertion leaves the test at once. */
        char msg[2048];
        snprintf(msg, sizeof msg, "cartsim %s ...: %s, stderr: %s", args[0] ? args[0] : "",
                 r->timed_out ? "timed out" : "exit status not 0", r->err);
        int status = r->status;
        cli_result_free(r);
        cr_assert_fail("%s (status %d)", msg, status);
    }
}

/* ---- a loose JSON reader: enough to find top-level scalar values ---- */

static bool json_get(const char *json, const char *key, char *out, size_t size)
{
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *p = strstr(json, pat);
    if (!p)
        return false;
    p += strlen(pat);
    while (*p == ' ' || *p == '\n' || *p == '\t')
        p++;
    if (*p++ != ':')
        return false;
    while (*p == ' ' || *p == '\n' || *p == '\t')
        p++;
    size_t n = 0;
    if (*p == '"') {
        for (p++; *p && *p != '"' && n + 1 < size; p++) {
            if (*p == '\\' && p[1])
                p++;
            out[n++] = *p;
        }
        if (*p != '"')
            return false;
    } else {
        while (*p && *p != ',' && *p != '\n' && *p != '}' && n + 1 < size)
            out[n++] = *p++;
        while (n > 0 && out[n - 1] == ' ')
            n--;
    }
    out[n] = 0;
    return true;
}

static bool is_hex16(const char *s)
{
    if (strlen(s) != 16)
        return false;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return false;
    return true;
}

/* The checksum of a --json run; fails the test when it has none. */
static void run_checksum(const char *const *args, char out[17])
{
    cli_result r;
    run_ok(args, &r);
    char value[64];
    cr_assert(json_get(r.out, "checksum", value, sizeof value), "no checksum in: %s", r.out);
    cr_assert(is_hex16(value), "checksum '%s' is not 16 hex digits", value);
    memcpy(out, value, 17);
    cli_result_free(&r);
}

/* ---- number parsing and printing (sim/num.c) ---- */

Test(num, repr_matches_python)
{
    /* Expected strings are Python 3's repr(float(x)). */
    static const struct {
        double x;
        const char *repr;
    } cases[] = {
        {0.0, "0.0"},
        {-0.0, "-0.0"},
        {1.0, "1.0"},
        {-1.0, "-1.0"},
        {0.1, "0.1"},
        {100.0, "100.0"},
        {0.0001, "0.0001"},
        {1e-05, "1e-05"},
        {5.5e-07, "5.5e-07"},
        {1e16, "1e+16"},
        {1234567890123456.0, "1234567890123456.0"},
        {9999999999999998.0, "9999999999999998.0"},
        {1.5e300, "1.5e+300"},
        {5e-324, "5e-324"},
        {2.2250738585072014e-308, "2.2250738585072014e-308"},
        {1.7976931348623157e308, "1.7976931348623157e+308"},
        {0.011259492856995089, "0.011259492856995089"},
        {-0.2430904475651311, "-0.2430904475651311"},
        {0.20943951023931953, "0.20943951023931953"},
        {(double)0.1f, "0.10000000149011612"},
        {(double)3.348524808883667f, "3.348524808883667"},
        {123456.789, "123456.789"},
        {1.0 / 3.0, "0.3333333333333333"},
        {2.0 / 3.0, "0.6666666666666666"},
        {1e22, "1e+22"},
        {4.35, "4.35"},
        {INFINITY, "inf"},
        {-INFINITY, "-inf"},
        {NAN, "nan"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[CS_REPR_MAX];
        size_t n = cs_num_repr(cases[i].x, buf);
        cr_expect_str_eq(buf, cases[i].repr, "repr(%.17g): got %s, want %s", cases[i].x, buf, cases[i].repr);
        cr_expect_eq(n, strlen(buf));
    }
}

Test(num, repr_round_trips)
{
    /* Random bit patterns: the text reads back to the same bits and no
     * shorter %.*g text would (shortest). */
    uint64_t s = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < 200000; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        double x;
        memcpy(&x, &s, sizeof x);
        if (x != x)
            continue;
        char buf[CS_REPR_MAX];
        cs_num_repr(x, buf);
        double back = strtod(buf, NULL);
        cr_assert(memcmp(&back, &x, sizeof x) == 0, "%s does not read back as %a", buf, x);
        /* Significant digits: drop the sign, the exponent, the dot and
         * leading/trailing zeros (a shortest string never ends in 0). */
        char mant[CS_REPR_MAX];
        size_t m = 0;
        for (const char *p = buf; *p && *p != 'e'; p++)
            if (*p >= '0' && *p <= '9')
                mant[m++] = *p;
        mant[m] = 0;
        size_t lead = strspn(mant, "0");
        while (m > lead && mant[m - 1] == '0')
            m--;
        int sig = (int)(m - lead);
        if (sig > 1) {
            char shorter[48];
            snprintf(shorter, sizeof shorter, "%.*e", sig - 2, x);
            double s2 = strtod(shorter, NULL);
            cr_assert(memcmp(&s2, &x, sizeof x) != 0, "%s is not the shortest: %s reads back too", buf, shorter);
        }
    }
}

Test(num, integers)
{
    int64_t v = 0;
    cr_expect_eq(cs_num_i64("2048", 1, INT32_MAX, &v), CS_NUM_OK);
    cr_expect_eq(v, 2048);
    cr_expect_eq(cs_num_i64("2147483647", 1, INT32_MAX, &v), CS_NUM_OK);
    cr_expect_eq(cs_num_i64("2147483648", 1, INT32_MAX, &v), CS_NUM_RANGE);
    cr_expect_eq(cs_num_i64("0", 1, 10, &v), CS_NUM_RANGE);
    cr_expect_eq(cs_num_i64("-3", 1, 10, &v), CS_NUM_RANGE);
    cr_expect_eq(cs_num_i64("-3", -5, 10, &v), CS_NUM_OK);
    cr_expect_eq(v, -3);
    cr_expect_eq(cs_num_i64("9223372036854775807", 0, INT64_MAX, &v), CS_NUM_OK);
    cr_expect_eq(v, INT64_MAX);
    cr_expect_eq(cs_num_i64("9223372036854775808", 0, INT64_MAX, &v), CS_NUM_RANGE);
    cr_expect_eq(cs_num_i64("-9223372036854775808", INT64_MIN, 0, &v), CS_NUM_OK);
    cr_expect_eq(v, INT64_MIN);
    cr_expect_eq(cs_num_i64("99999999999999999999", 0, INT64_MAX, &v), CS_NUM_RANGE);
    cr_expect_eq(cs_num_i64("1e12", 0, INT64_MAX, &v), CS_NUM_SYNTAX);
    cr_expect_eq(cs_num_i64("10x", 0, INT64_MAX, &v), CS_NUM_SYNTAX);
    cr_expect_eq(cs_num_i64("", 0, INT64_MAX, &v), CS_NUM_SYNTAX);
    cr_expect_eq(cs_num_i64("-", 0, INT64_MAX, &v), CS_NUM_SYNTAX);
    cr_expect_eq(cs_num_i64(" 5", 0, INT64_MAX, &v), CS_NUM_SYNTAX);
    cr_expect_eq(cs_num_i64("+5", 0, INT64_MAX, &v), CS_NUM_SYNTAX);
    cr_expect_eq(cs_num_i64("abc", 0, INT64_MAX, &v), CS_NUM_SYNTAX);
    uint64_t u = 0;
    cr_expect_eq(cs_num_u64("18446744073709551615", &u), CS_NUM_OK);
    cr_expect_eq(u, UINT64_MAX);
    cr_expect_eq(cs_num_u64("18446744073709551616", &u), CS_NUM_RANGE);
    cr_expect_eq(cs_num_u64("-1", &u), CS_NUM_RANGE);
}

Test(num, reals)
{
    double d = 0;
    cr_expect(cs_num_real("0.011259492856995089", &d));
    cr_expect_eq(d, 0.011259492856995089);
    cr_expect(cs_num_real("-1e-05", &d));
    cr_expect_eq(d, -1e-05);
    cr_expect(cs_num_real("1", &d));
    cr_expect(!cs_num_real("", &d));
    cr_expect(!cs_num_real(" 1", &d));
    cr_expect(!cs_num_real("1 ", &d));
    cr_expect(!cs_num_real("1.0x", &d));
    cr_expect(!cs_num_real("abc", &d));
}

Test(cli_buf, buffer_and_json_strings)
{
    cli_buf b = {0};
    cli_buf_json_string(&b, "a\"b\\c\nd\x01");
    cli_buf_str(&b, " ");
    cli_buf_json_string(&b, NULL);
    cli_buf_printf(&b, " %d", 42);
    cli_buf_str(&b, " ");
    cli_buf_repr(&b, 1e-05);
    cr_assert(!b.failed);
    cr_expect_str_eq(b.data, "\"a\\\"b\\\\c\\nd\\u0001\" null 42 1e-05");
    /* Growth past the first block. */
    for (int i = 0; i < 10000; i++)
        cli_buf_str(&b, "0123456789");
    cr_expect_eq(b.len, strlen(b.data));
    cli_buf_free(&b);
}

/* ---- the program ---- */

Test(cli, version)
{
    const char *args[] = {"--version", NULL};
    cli_result r;
    run_ok(args, &r);
    cr_expect_str_eq(r.out, "cartsim " CS_VERSION_STRING "\n");
    cli_result_free(&r);
}

Test(cli, help)
{
    static const char *const cases[][3] = {
        {"--help", NULL, NULL}, {"-h", NULL, NULL},         {"run", "--help", NULL},
        {"replay", "--help", NULL}, {"dump", "--help", NULL}, {"help", "replay", NULL},
        {"help", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_result r;
        run_ok(cases[i], &r);
        cr_expect(strstr(r.out, "usage: cartsim") != NULL, "%s %s: no usage line in: %s", cases[i][0],
                  cases[i][1] ? cases[i][1] : "", r.out);
        cr_expect_eq(r.err_len, 0u);
        cli_result_free(&r);
    }
    /* The overview lists every subcommand. */
    const char *args[] = {"--help", NULL};
    cli_result r;
    run_ok(args, &r);
    cr_expect(strstr(r.out, "replay") && strstr(r.out, "dump") && strstr(r.out, "--envs"));
    cli_result_free(&r);
}

Test(cli, run_text)
{
    const char *args[] = {"--envs", "64", "--steps", "100", NULL};
    cli_result r;
    run_ok(args, &r);
    static const char *const fields[] = {"cartpole", "CartPole-v1", "backend", "fusion", "dtype", "unroll",
                                         "threads", "kernels per step", "launches", "compile", "run",
                                         "env-steps/s", "episodes", "checksum"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        cr_expect(strstr(r.out, fields[i]) != NULL, "'%s' missing from:\n%s", fields[i], r.out);
    const char *cs = strstr(r.out, "checksum");
    cr_assert(cs);
    cs += strlen("checksum");
    while (*cs == ' ')
        cs++;
    char hex[17] = {0};
    memcpy(hex, cs, 16);
    cr_expect(is_hex16(hex) && (cs[16] == '\n'), "checksum line: %s", cs);
    cli_result_free(&r);
}

Test(cli, run_json)
{
    const char *args[] = {"--envs", "64", "--steps", "100", "--json", NULL};
    cli_result r;
    run_ok(args, &r);
    static const char *const keys[] = {"env",         "backend",   "fusion",     "dtype",     "math",
                                       "num_envs",    "steps",     "unroll",     "threads",
                                       "compile_ms",  "cache_hit", "run_ms",     "env_steps_per_sec",
                                       "kernels_per_step", "launches", "episodes", "mean_return",
                                       "checksum",    "nonfinite", "notice"};
    char v[256];
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_expect(json_get(r.out, keys[i], v, sizeof v), "key '%s' missing from:\n%s", keys[i], r.out);
    /* One object: starts with '{', ends with "}\n", nothing else. */
    cr_expect(r.out[0] == '{' && r.out_len >= 2 && strcmp(r.out + r.out_len - 2, "}\n") == 0);
    cr_assert(json_get(r.out, "env", v, sizeof v));
    cr_expect_str_eq(v, "cartpole");
    cr_assert(json_get(r.out, "math", v, sizeof v));
    cr_expect_str_eq(v, "exact");
    cr_assert(json_get(r.out, "num_envs", v, sizeof v));
    cr_expect_str_eq(v, "64");
    cr_assert(json_get(r.out, "steps", v, sizeof v));
    cr_expect_str_eq(v, "100");
    cr_assert(json_get(r.out, "env_steps_per_sec", v, sizeof v));
    cr_expect(strtod(v, NULL) > 0, "env_steps_per_sec %s", v);
    cr_assert(json_get(r.out, "kernels_per_step", v, sizeof v));
    cr_expect(strtol(v, NULL, 10) >= 1, "kernels_per_step %s", v);
    cr_assert(json_get(r.out, "launches", v, sizeof v));
    cr_expect(strtol(v, NULL, 10) >= 1, "launches %s", v);
    cr_assert(json_get(r.out, "cache_hit", v, sizeof v));
    cr_expect(strcmp(v, "true") == 0 || strcmp(v, "false") == 0, "cache_hit %s", v);
    cr_assert(json_get(r.out, "mean_return", v, sizeof v));
    cr_expect(strcmp(v, "null") == 0 || strtod(v, NULL) > 0, "mean_return %s", v);
    cr_assert(json_get(r.out, "checksum", v, sizeof v));
    cr_expect(is_hex16(v), "checksum %s", v);
    cr_expect_eq(r.err_len, 0u, "stderr: %s", r.err);
    cli_result_free(&r);
}

Test(cli, seed_decides_checksum)
{
    char a[17], b[17], c[17];
    const char *s0[] = {"--envs", "64", "--steps", "100", "--json", "--seed", "7", NULL};
    const char *s1[] = {"--envs", "64", "--steps", "100", "--json", "--seed", "8", NULL};
    run_checksum(s0, a);
    run_checksum(s0, b);
    run_checksum(s1, c);
    cr_expect_str_eq(a, b, "same seed, different checksums");
    cr_expect_str_neq(a, c, "seeds 7 and 8 gave the same checksum");
}

/* Every schedule computes the same trajectories (DESIGN.md): in f64 the
 * checksum is the same across unroll, threads, fusion mode and backend. */
Test(cli, checksum_independent_of_schedule, .timeout = 900)
{
    static const char *const variants[][2] = {
        {"--unroll", "10"}, {"--unroll", "64"},   {"--threads", "1"},      {"--threads", "2"},
        {"--fusion", "none"}, {"--fusion", "rules"}, {"--fusion", "full"}, {"--backend", "cpu"},
        {"--backend", "interp"},
    };
    char base[17];
    const char *args0[] = {"--envs", "64", "--steps", "100", "--dtype", "f64", "--json", "--unroll", "1", NULL};
    run_checksum(args0, base);
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        const char *args[] = {"--envs", "64", "--steps", "100", "--dtype", "f64", "--json",
                              variants[i][0], variants[i][1], NULL};
        char got[17];
        run_checksum(args, got);
        cr_expect_str_eq(got, base, "%s %s: checksum %s, --unroll 1 gave %s", variants[i][0], variants[i][1], got,
                         base);
    }
}

/* The progress bar splits the rollout into chunks; results stay the same. */
Test(cli, progress_chunks_keep_results)
{
    char plain[17], chunked[17];
    const char *a[] = {"--envs", "64", "--steps", "105", "--dtype", "f64", "--json", NULL};
    const char *b[] = {"--envs", "64", "--steps", "105", "--dtype", "f64", "--json", "--progress", NULL};
    run_checksum(a, plain);
    run_checksum(b, chunked);
    cr_expect_str_eq(plain, chunked, "chunked rollout changed the checksum");

    cli_result r1, r2;
    run_ok(a, &r1);
    run_ok(b, &r2);
    char e1[64], e2[64];
    cr_assert(json_get(r1.out, "episodes", e1, sizeof e1) && json_get(r2.out, "episodes", e2, sizeof e2));
    cr_expect_str_eq(e1, e2, "episodes differ: %s vs %s", e1, e2);
    cr_expect(strstr(r2.err, "100%") != NULL, "no progress bar on stderr: %s", r2.err);
    cli_result_free(&r1);
    cli_result_free(&r2);
}

/* No chunk is shorter than 64 steps (cli_run.c, MIN_CHUNK_STEPS), though
 * the progress bar asks for twenty: a call's fixed cost (the batch's state
 * streamed from memory and back, a first draw per lane) is a few steps',
 * and at millions of environments, where a step outlasts the 250 ms a
 * chunk aims at, chunks of one step ran 13x slower than one call. Off a
 * terminal the bar writes a line per chunk: 0%, then 64, 128, 192, 200. */
Test(cli, a_chunk_is_at_least_64_steps)
{
    const char *a[] = {"--envs", "64", "--steps", "200", "--progress", NULL};
    cli_result r;
    run_ok(a, &r);
    int lines = 0;
    for (const char *c = r.err; (c = strchr(c, '%')); c++)
        lines++;
    cr_expect_eq(lines, 5, "%d progress lines, not 5: %s", lines, r.err);
    cli_result_free(&r);
}

/* --no-persistent: fusion full launches once per --unroll steps instead of
 * once, on the cpu too, and computes the same states. */
Test(cli, no_persistent_launches_per_unroll)
{
    static const char *const modes[] = {NULL, "--persistent", "--no-persistent"};
    static const char *const launches[] = {"1", "1", "10"};   /* ceil(95 / 10) */
    char sums[3][17];
    for (int m = 0; m < 3; m++) {
        const char *args[] = {"--backend", "cpu", "--envs", "64", "--steps", "95", "--unroll", "10",
                              "--dtype", "f64", "--threads", "2", "--json", modes[m], NULL};
        cli_result r;
        run_ok(args, &r);
        char v[64];
        cr_assert(json_get(r.out, "launches", v, sizeof v), "%s", r.out);
        cr_expect_str_eq(v, launches[m], "%s: launches %s, want %s", modes[m] ? modes[m] : "(default)", v,
                         launches[m]);
        cr_assert(json_get(r.out, "persistent", v, sizeof v), "%s", r.out);
        cr_expect_str_eq(v, m == 2 ? "false" : "true", "%s: persistent %s", modes[m] ? modes[m] : "(default)", v);
        cr_assert(json_get(r.out, "checksum", v, sizeof v) && is_hex16(v), "%s", r.out);
        memcpy(sums[m], v, 17);
        cli_result_free(&r);
    }
    cr_expect_str_eq(sums[2], sums[0], "--no-persistent changed the checksum");
    cr_expect_str_eq(sums[1], sums[0]);

    /* The summary says so. */
    const char *text[] = {"--backend", "cpu", "--envs", "8", "--steps", "95", "--unroll", "10", "--no-persistent",
                          NULL};
    cli_result r;
    run_ok(text, &r);
    cr_expect(strstr(r.out, "launches          10 (not persistent: one per 10 steps)\n"), "%s", r.out);
    cli_result_free(&r);
    const char *persistent[] = {"--backend", "cpu", "--envs", "8", "--steps", "95", NULL};
    run_ok(persistent, &r);
    cr_expect(strstr(r.out, "launches          1 (persistent: one per rollout call)\n"), "%s", r.out);
    cli_result_free(&r);

    /* Rules launch every kernel every step whatever the switch says. */
    const char *rules[] = {"--backend", "cpu", "--envs", "8", "--steps", "95", "--fusion", "rules",
                           "--no-persistent", "--json", NULL};
    run_ok(rules, &r);
    char k[32], n[32], p[32];
    cr_assert(json_get(r.out, "kernels_per_step", k, sizeof k) && json_get(r.out, "launches", n, sizeof n) &&
              json_get(r.out, "persistent", p, sizeof p));
    cr_expect_eq(strtol(n, NULL, 10), 95 * strtol(k, NULL, 10), "rules: %s launches, %s kernels per step", n, k);
    cr_expect_str_eq(p, "false", "rules is never persistent");
    cli_result_free(&r);
}

Test(cli, dump_every_pass_and_format)
{
    static const char *const passes[] = {"parse", "fold", "concat", "dce"};
    static const char *const formats[] = {"text", "dot", "c"};
    for (size_t p = 0; p < 4; p++)
        for (size_t f = 0; f < 3; f++) {
            const char *args[] = {"dump", "--after", passes[p], "--format", formats[f], NULL};
            cli_result r;
            cli_test_run(args, 300, &r);
            cr_expect_eq(r.status, 0, "dump --after %s --format %s: status %d, stderr %s", passes[p], formats[f],
                         r.status, r.err);
            cr_expect(r.out_len > 0, "dump --after %s --format %s printed nothing", passes[p], formats[f]);
            if (strcmp(formats[f], "dot") == 0)
                cr_expect(strstr(r.out, "digraph") != NULL, "dot output without 'digraph'");
            cli_result_free(&r);
        }
    const char *args[] = {"dump", NULL};
    cli_result r;
    run_ok(args, &r);
    cr_expect(r.out_len > 0);
    cli_result_free(&r);
}

/* f32 sin and cos of a state variable get a near copy of their kernel's
 * loop (jit/emit.c, emit_kernel_loops), but not in a long kernel: two
 * copies of Acrobot's RK4 step left GCC vectorizing neither (11x slower). */
Test(cli, near_copies_of_short_kernels_only)
{
    static const char *const envs[] = {"cartpole", "pendulum", "acrobot"};
    static const int copies[] = {1, 1, 0};
    for (size_t k = 0; k < 3; k++) {
        const char *args[] = {"dump", "--env", envs[k], "--format", "c", NULL};
        cli_result r;
        run_ok(args, &r);
        cr_expect_eq(strstr(r.out, "if (near_)") != NULL, copies[k], "%s: near copy %s", envs[k],
                     copies[k] ? "missing" : "in a long kernel");
        cli_result_free(&r);
    }
}

/* ---- the bad-input corpus ---- */

static void write_fixture(const char *dir, const char *name, const char *text, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cli_test_write_file(path, text, len);
}

#define HEADER                                                                                                  \
    "episode,t,action,s_x,s_x_dot,s_theta,s_theta_dot,ns_x,ns_x_dot,ns_theta,ns_theta_dot,obs_x,obs_x_dot,"     \
    "obs_theta,obs_theta_dot,reward,terminated,truncated\n"
#define ROW(ep, t, a) ep "," t "," a ",0.01,0.02,0.03,0.04,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,1.0,0,0\n"

/* Files the corpus names as @TMP@/NAME: each is wrong in one way only
 * (ok.csv is right, to show that the others fail for their own reason). */
static const struct {
    const char *name, *text;
} fixtures[] = {
    {"ok.csv", HEADER ROW("0", "0", "1") ROW("0", "1", "0") ROW("3", "0", "0")},
    {"empty.csv", ""},
    {"header_only.csv", HEADER},
    {"wrong_header.csv", "foo,bar\n1,2\n"},
    {"no_obs.csv", "episode,t,action,s_x,s_x_dot,s_theta,s_theta_dot,ns_x,ns_x_dot,ns_theta,ns_theta_dot,"
                   "reward,terminated,truncated\n0,0,0,1,2,3,4,1,2,3,4,1.0,0,0\n"},
    {"ns_mismatch.csv", "episode,t,action,s_x,s_x_dot,s_theta,s_theta_dot,ns_x,ns_x_dot,ns_theta,ns_omega,obs_x,"
                        "obs_x_dot,obs_theta,obs_theta_dot,reward,terminated,truncated\n" ROW("0", "0", "0")},
    {"short_row.csv", HEADER "0,0,0,0.01,0.02,0.03,0.04,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,1.0,0\n"},
    {"long_row.csv", HEADER "0,0,0,0.01,0.02,0.03,0.04,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,1.0,0,0,0\n"},
    {"blank_line.csv", HEADER ROW("0", "0", "0") "\n" ROW("0", "1", "0")},
    {"non_numeric.csv", HEADER "0,0,0,0.01,abc,0.03,0.04,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,1.0,0,0\n"},
    {"empty_field.csv", HEADER "0,0,0,0.01,,0.03,0.04,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,1.0,0,0\n"},
    {"action7.csv", HEADER ROW("0", "0", "7")},
    {"action_neg.csv", HEADER ROW("0", "0", "-1")},
    {"action_frac.csv", HEADER ROW("0", "0", "0.5")},
    {"flag2.csv", HEADER "0,0,0,0.01,0.02,0.03,0.04,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,1.0,2,0\n"},
    {"t_gap.csv", HEADER ROW("0", "0", "0") ROW("0", "2", "0")},
    {"t_start.csv", HEADER ROW("0", "1", "0")},
    {"t_repeat.csv", HEADER ROW("0", "0", "0") ROW("0", "0", "0")},
    {"t_negative.csv", HEADER ROW("0", "-1", "0")},
    {"episode_back.csv", HEADER ROW("1", "0", "0") ROW("0", "0", "0")},
    {"episode_text.csv", HEADER ROW("x", "0", "0")},
    {"bad.env", "env broken \"Broken\"\nstate x\nstep {\n    x' = x + * 2\n}\n"},
};

static char *make_fixture_dir(void)
{
    char *dir = strdup("/tmp/cartsim-cli-XXXXXX");
    cr_assert_not_null(dir);
    cli_test_scratch(dir);
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++)
        write_fixture(dir, fixtures[i].name, fixtures[i].text, strlen(fixtures[i].text));
    write_fixture(dir, "nul.csv", HEADER "0,0\0,0\n", sizeof HEADER + 6);
    return dir;
}

static void remove_fixture_dir(char *dir)
{
    cli_test_remove_tree(dir);
    free(dir);
}

/* @TMP@ and @GOLDEN@ replaced in one argument. */
static char *expand(const char *arg, const char *tmp)
{
    static const char *const keys[] = {"@TMP@", "@GOLDEN@", "@ROOT@"};
    const char *values[] = {tmp, cli_test_golden(), cli_test_root()};
    char *out = strdup(arg);
    cr_assert(out);
    for (int k = 0; k < 3; k++) {
        char *at;
        while ((at = strstr(out, keys[k]))) {
            size_t pre = (size_t)(at - out), klen = strlen(keys[k]), vlen = strlen(values[k]);
            char *n = malloc(strlen(out) - klen + vlen + 1);
            cr_assert(n);
            memcpy(n, out, pre);
            memcpy(n + pre, values[k], vlen);
            strcpy(n + pre + vlen, at + klen);
            free(out);
            out = n;
        }
    }
    return out;
}

Test(cli, fixture_ok_replays)
{
    char *dir = make_fixture_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/ok.csv", dir);
    const char *args[] = {"replay", "--env", "cartpole", path, NULL};
    cli_result r;
    cli_test_run(args, 300, &r);
    cr_expect_eq(r.status, 0, "replay of a valid file: status %d, stderr %s", r.status, r.err);
    cr_expect(strncmp(r.out, HEADER, strlen(HEADER)) == 0, "output: %s", r.out);
    cli_result_free(&r);
    remove_fixture_dir(dir);
}

Test(cli, bad_input_corpus, .timeout = 900)
{
    char corpus[512];
    snprintf(corpus, sizeof corpus, "%s/tests/corpus/cli_bad.txt", cli_test_root());
    FILE *f = fopen(corpus, "r");
    cr_assert(f, "cannot open %s (set CARTSIM_ROOT)", corpus);
    char *dir = make_fixture_dir();

    /* Lines marked @nocuda expect --backend cuda to be unavailable. */
    const char *probe[] = {"--backend", "cuda", "--envs", "1", "--steps", "1", "--json", NULL};
    cli_result pr;
    cli_test_run(probe, 300, &pr);
    bool have_cuda = pr.status == 0;
    cli_result_free(&pr);

    char line[1024];
    int lineno = 0, checked = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *args[64];
        int n = 0;
        bool nocuda = false;
        for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
            if (strcmp(tok, "@nocuda") == 0 && n == 0) {
                nocuda = true;
                continue;
            }
            cr_assert(n < 63, "%s:%d: too many arguments", corpus, lineno);
            args[n++] = expand(tok, dir);
        }
        args[n] = NULL;
        if (n == 0 || (nocuda && have_cuda)) {
            for (int i = 0; i < n; i++)
                free(args[i]);
            continue;
        }
        cli_result r;
        cli_test_run((const char *const *)args, 300, &r);
        char shown[1024] = "";
        for (int i = 0; i < n; i++) {
            strncat(shown, " ", sizeof shown - strlen(shown) - 1);
            strncat(shown, args[i], sizeof shown - strlen(shown) - 1);
        }
        cr_expect(!r.timed_out, "line %d:%s: timed out", lineno, shown);
        cr_expect_eq(r.status, 2, "line %d:%s: exit status %d, want 2 (stderr: %s)", lineno, shown, r.status, r.err);
        cr_expect_eq(r.out_len, 0u, "line %d:%s: wrote to stdout: %.200s", lineno, shown, r.out);
        const char *nl = strchr(r.err, '\n');
        cr_expect(strncmp(r.err, "cartsim: ", 9) == 0 && nl && nl[1] == 0 && r.err_len > 10,
                  "line %d:%s: stderr is not one line 'cartsim: ...': [%s]", lineno, shown, r.err);
        cli_result_free(&r);
        for (int i = 0; i < n; i++)
            free(args[i]);
        checked++;
    }
    fclose(f);
    remove_fixture_dir(dir);
    cr_expect(checked >= 40, "only %d corpus lines checked", checked);
}
