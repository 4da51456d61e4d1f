/* Configuration files: the library's loader (cs_config_load, cs_config_set)
 * and `cartsim --config FILE` / `--print-config`: a flag wins over the file,
 * the file over the default, and --print-config says which; every error
 * class, from the corpus tests/corpus/ini_bad/ (each file's first line is
 * "; expect: LINE: MESSAGE"; a second line "; library: accepts" marks what
 * only the program or the environment can refuse); and every file in
 * configs/ loading and running a short job. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cartsim.h"
#include "cli_test.h"

/* ---- helpers ---- */

typedef struct {
    char dir[64];
    char path[8][128];
    int n;
} tmp_files;

static void tmp_open(tmp_files *t)
{
    memset(t, 0, sizeof *t);
    strcpy(t->dir, "/tmp/cartsim-config-XXXXXX");
    cr_assert(mkdtemp(t->dir), "mkdtemp: %s", strerror(errno));
}

/* Writes NAME in the folder; returns its path. */
static const char *tmp_write(tmp_files *t, const char *name, const char *text)
{
    cr_assert(t->n < 8);
    char *p = t->path[t->n++];
    char tmp[sizeof t->path[0]];
    snprintf(tmp, sizeof tmp, "%s/%s", t->dir, name);
    memcpy(p, tmp, sizeof tmp);
    FILE *f = fopen(p, "w");
    cr_assert(f, "cannot write %s", p);
    fputs(text, f);
    fclose(f);
    return p;
}

static void tmp_close(tmp_files *t)
{
    for (int i = 0; i < t->n; i++)
        unlink(t->path[i]);
    rmdir(t->dir);
}

/* Runs and requires exit status 0; the result is the caller's to free. */
static void run_ok(const char *const *args, cli_result *r)
{
    cli_test_run(args, 300, r);
    if (r->timed_out || r->status != 0) {
        char msg[2048];
        snprintf(msg, sizeof msg, "cartsim %s %s ...: status %d%s, stderr: %s", args[0], args[1] ? args[1] : "",
                 r->status, r->timed_out ? " (timed out)" : "", r->err);
        cli_result_free(r);
        cr_assert_fail("%s", msg);
    }
}

/* The line of --print-config's output for KEY: "KEY = VALUE ; ORIGIN". */
static bool printed(const char *out, const char *key, char *value, size_t vsize, char *origin, size_t osize)
{
    size_t klen = strlen(key);
    for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, key, klen) != 0 || strncmp(p + klen, " = ", 3) != 0)
            continue;
        const char *v = p + klen + 3, *semi = strstr(v, " ; "), *nl = strchr(v, '\n');
        if (!semi || !nl || semi > nl)
            return false;
        const char *vend = semi;
        while (vend > v && vend[-1] == ' ')
            vend--;
        snprintf(value, vsize, "%.*s", (int)(vend - v), v);
        snprintf(origin, osize, "%.*s", (int)(nl - semi - 3), semi + 3);
        return true;
    }
    return false;
}

static void expect_printed(const char *out, const char *key, const char *value, const char *origin)
{
    char v[256], o[256];
    cr_assert(printed(out, key, v, sizeof v, o, sizeof o), "no '%s = ...' line in:\n%s", key, out);
    cr_expect_str_eq(v, value, "%s = %s, want %s", key, v, value);
    cr_expect_str_eq(o, origin, "%s: origin %s, want %s", key, o, origin);
}

/* ---- the library ---- */

Test(config_lib, set_checks_like_the_flags)
{
    cs_config cfg;
    cs_config_init(&cfg);
    char err[256];
    cr_expect_eq(cs_config_set(&cfg, "envs", "64", err, sizeof err), CS_OK);
    cr_expect_eq(cfg.num_envs, 64);
    cr_expect_eq(cs_config_set(&cfg, "unroll", "10", err, sizeof err), CS_OK);
    cr_expect_eq(cfg.unroll, 10);
    cr_expect_eq(cs_config_set(&cfg, "threads", "0", err, sizeof err), CS_OK);
    cr_expect_eq(cs_config_set(&cfg, "block", "256", err, sizeof err), CS_OK);
    cr_expect_eq(cfg.block, 256);
    cr_expect_eq(cs_config_set(&cfg, "backend", "interp", err, sizeof err), CS_OK);
    cr_expect_eq(cfg.backend, CS_BACKEND_INTERP);
    cr_expect_eq(cs_config_set(&cfg, "fusion", "rules", err, sizeof err), CS_OK);
    cr_expect_eq(cfg.fusion, CS_FUSION_RULES);
    cr_expect_eq(cs_config_set(&cfg, "dtype", "f64", err, sizeof err), CS_OK);
    cr_expect_eq(cfg.dtype, CS_DTYPE_F64);
    cr_expect_eq(cs_config_set(&cfg, "autoreset", "same_step", err, sizeof err), CS_OK);
    cr_expect_eq(cfg.autoreset, CS_AUTORESET_SAME_STEP);
    cr_expect_eq(cs_config_set(&cfg, "env", "pendulum", err, sizeof err), CS_OK);
    cr_expect_str_eq(cfg.env, "pendulum");
    cr_expect_eq(cs_config_set(&cfg, "strict", "true", err, sizeof err), CS_OK);
    cr_expect(cfg.strict);
    cr_expect(cfg.persistent, "persistent by default");
    cr_expect_eq(cs_config_set(&cfg, "persistent", "false", err, sizeof err), CS_OK);
    cr_expect(!cfg.persistent);
    cr_expect(cfg.strict, "persistent is not strict");
    cr_expect_eq(cs_config_set(&cfg, "persistent", "true", err, sizeof err), CS_OK);
    cr_expect(cfg.persistent);
    cr_expect_eq(cs_config_set(&cfg, "param", "length=0.4:0.6", err, sizeof err), CS_OK);
    cr_expect_eq(cfg.n_params, 1);

    /* Refused, with cfg left as it was. */
    cs_config before = cfg;
    static const char *const bad[][3] = {
        {"envs", "abc", "'abc' is not an integer"},
        {"envs", "0", "'0' is out of range (1 to 2147483647)"},
        {"envs", "1e3", "not an integer"},
        {"unroll", "-1", "out of range"},
        {"unroll", "1025", "out of range (1 to 1024)"},
        {"threads", "-1", "out of range"},
        {"block", "2048", "out of range"},
        {"backend", "gpu", "'gpu' is not one of auto, cpu, cuda, interp"},
        {"fusion", "FULL", "not one of"},
        {"dtype", "f16", "not one of f32, f64"},
        {"autoreset", "disabled", "not one of next_step, same_step"},
        {"strict", "1", "'1' is not one of false, true"},
        {"persistent", "no", "'no' is not one of false, true"},
        {"persistent", "", "'' is not one of false, true"},
        {"env", "", "not an environment name"},
        {"param", "length", "expected NAME=VALUE"},
        {"param", "length=abc", "not a number"},
        {"param", "length=2:1", "above the high end"},
        {"bogus", "1", "no setting named 'bogus'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cs_status st = cs_config_set(&cfg, bad[i][0], bad[i][1], err, sizeof err);
        cr_expect_neq(st, CS_OK, "%s = %s accepted", bad[i][0], bad[i][1]);
        cr_expect(strstr(err, bad[i][2]) != NULL, "%s = %s: message '%s', want '%s'", bad[i][0], bad[i][1], err,
                  bad[i][2]);
        cr_expect(memcmp(&cfg, &before, sizeof cfg) == 0, "%s = %s changed the config", bad[i][0], bad[i][1]);
    }
    cr_expect_eq(cs_config_set(&cfg, "bogus", "1", err, sizeof err), CS_ERR_NOT_FOUND);
    cr_expect_eq(cs_config_set(NULL, "envs", "1", err, sizeof err), CS_ERR_ARGUMENT);
    cr_expect_eq(cs_config_set(&cfg, "envs", "1", NULL, 0), CS_OK);   /* no message buffer: fine */
    for (int i = cfg.n_params; i < CS_MAX_PARAM_OVERRIDES; i++)
        cr_assert_eq(cs_config_set(&cfg, "param", "length=0.5", err, sizeof err), CS_OK);
    cr_expect_eq(cs_config_set(&cfg, "param", "length=0.5", err, sizeof err), CS_ERR_LIMIT);
}

Test(config_lib, load_applies_and_keeps_the_rest)
{
    tmp_files t;
    tmp_open(&t);
    tmp_write(&t, "mine.env", "");   /* only its name matters here */
    const char *path = tmp_write(&t,
        "a.ini",
        "; a comment\n"
        "# another\n"
        "\n"
        "[run]\n"
        "envs = 16            ; inline comment\n"
        "steps = 7\n"
        "unroll: 4\n"
        "backend = interp\n"
        "fusion = none\n"
        "dtype = f64\n"
        "threads = 1\n"
        "block = 32\n"
        "seed = 99\n"
        "[env]\n"
        "path = mine.env\n"
        "autoreset = same_step\n"
        "[params]\n"
        "length = 0.4:0.6\n"
        "masspole = 0.2\n"
        "[train]\n"
        "whatever = the program's\n");
    cs_config cfg;
    cs_config_init(&cfg);
    cs_config_file *f = NULL;
    char err[512] = "";
    cr_assert_eq(cs_config_load(&cfg, path, &f, err, sizeof err), CS_OK, "%s", err);
    cr_assert(f);
    cr_expect_eq(cfg.num_envs, 16);
    cr_expect_eq(cfg.unroll, 4);
    cr_expect_eq(cfg.backend, CS_BACKEND_INTERP);
    cr_expect_eq(cfg.fusion, CS_FUSION_NONE);
    cr_expect_eq(cfg.dtype, CS_DTYPE_F64);
    cr_expect_eq(cfg.threads, 1);
    cr_expect_eq(cfg.block, 32);
    cr_expect_eq(cfg.autoreset, CS_AUTORESET_SAME_STEP);
    char want_env[256];
    snprintf(want_env, sizeof want_env, "%s/mine.env", t.dir);   /* relative to the file's folder */
    cr_expect_str_eq(cfg.env, want_env);
    cr_assert_eq(cfg.n_params, 2);
    cr_expect_str_eq(cfg.params[0], "length=0.4:0.6");
    cr_expect_str_eq(cfg.params[1], "masspole=0.2");

    cr_expect_eq(cs_config_file_count(f), 14u);
    const cs_config_entry *e = cs_config_file_get(f, "run", "steps");
    cr_assert(e);
    cr_expect_str_eq(e->value, "7");
    cr_expect_eq(e->line, 6);
    cr_expect(!e->applied, "steps is the program's");
    e = cs_config_file_get(f, "run", "envs");
    cr_assert(e);
    cr_expect_str_eq(e->value, "16");
    cr_expect(e->applied);
    e = cs_config_file_get(f, "train", "whatever");
    cr_assert(e);
    cr_expect_str_eq(e->value, "the program's");
    cr_expect(!e->applied);
    cr_expect_null(cs_config_file_get(f, "run", "nope"));
    e = cs_config_file_entry(f, 0);
    cr_assert(e);
    cr_expect_str_eq(e->section, "run");
    cr_expect_str_eq(e->key, "envs");
    cr_expect_eq(e->line, 5);
    cr_expect_null(cs_config_file_entry(f, 14));

    /* The strings outlive the file on disk: they belong to f. */
    tmp_close(&t);
    cr_expect_str_eq(cfg.params[1], "masspole=0.2");
    cr_expect_str_eq(cfg.env, want_env);
    cs_config_file_free(f);
    cs_config_file_free(NULL);
}

Test(config_lib, load_runs_an_environment)
{
    char path[512];
    snprintf(path, sizeof path, "%s/configs/domain_randomization.ini", cli_test_root());
    cs_config cfg;
    cs_config_init(&cfg);
    cs_config_file *f = NULL;
    char err[512] = "";
    cr_assert_eq(cs_config_load(&cfg, path, &f, err, sizeof err), CS_OK, "%s", err);
    cfg.num_envs = 8;
    cfg.backend = CS_BACKEND_INTERP;
    cs_env *env = NULL;
    cs_status st = cs_env_open(&cfg, &env);
    cr_assert_eq(st, CS_OK, "%s", env ? cs_env_error(env) : "out of memory");
    cs_rollout_stats stats;
    cr_expect_eq(cs_env_reset(env, 1), CS_OK);
    cr_expect_eq(cs_env_rollout(env, 50, &stats), CS_OK);
    cs_env_close(env);
    cs_config_file_free(f);
}

Test(config_lib, load_errors)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cs_config_file *f = (cs_config_file *)&cfg;   /* set to NULL on failure */
    char err[512];
    cr_expect_eq(cs_config_load(&cfg, "/nonexistent/cartsim.ini", &f, err, sizeof err), CS_ERR_NOT_FOUND);
    cr_expect_null(f);
    cr_expect(strstr(err, "/nonexistent/cartsim.ini: cannot open") == err, "%s", err);
    cr_expect_eq(cs_config_load(&cfg, "/tmp", &f, err, sizeof err), CS_ERR_ARGUMENT, "a directory is bad input: %s", err);
    cr_expect_eq(cs_config_load(NULL, "/tmp", &f, err, sizeof err), CS_ERR_ARGUMENT);
    cr_expect_eq(cs_config_load(&cfg, "/tmp", NULL, err, sizeof err), CS_ERR_ARGUMENT);
}

/* [run] persistent: a boolean the loader applies, checked at its line. */
Test(config_lib, persistent_key)
{
    tmp_files t;
    tmp_open(&t);
    static const struct {
        const char *text;
        bool persistent;
    } good[] = {
        {"[run]\npersistent = false\n", false},
        {"[run]\nunroll = 10\npersistent = true   ; one launch\n", true},
        {"[run]\npersistent: false\n", false},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const char *path = tmp_write(&t, i == 0 ? "a.ini" : i == 1 ? "b.ini" : "c.ini", good[i].text);
        cs_config cfg;
        cs_config_init(&cfg);
        cfg.persistent = !good[i].persistent;
        cs_config_file *f = NULL;
        char err[512] = "";
        cr_assert_eq(cs_config_load(&cfg, path, &f, err, sizeof err), CS_OK, "%s: %s", good[i].text, err);
        cr_expect_eq(cfg.persistent, good[i].persistent, "%s", good[i].text);
        const cs_config_entry *e = cs_config_file_get(f, "run", "persistent");
        cr_assert(e);
        cr_expect(e->applied, "persistent is the library's, not the program's");
        cs_config_file_free(f);
    }
    static const char *const bad[] = {"yes", "0", "True", "false false"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[32], text[128], want[600];
        snprintf(name, sizeof name, "bad%zu.ini", i);
        snprintf(text, sizeof text, "[run]\nenvs = 4\npersistent = %s\n", bad[i]);
        const char *path = tmp_write(&t, name, text);
        cs_config cfg;
        cs_config_init(&cfg);
        cs_config_file *f = NULL;
        char err[512] = "";
        cr_expect_eq(cs_config_load(&cfg, path, &f, err, sizeof err), CS_ERR_ARGUMENT, "persistent = %s", bad[i]);
        cr_expect_null(f);
        snprintf(want, sizeof want, "%s:3: persistent: '%s' is not one of false, true", path, bad[i]);
        cr_expect_str_eq(err, want);
    }
    tmp_close(&t);
}

/* ---- the corpus of bad files ---- */

typedef struct {
    char path[1024];
    int line;
    char message[512];
    bool library_accepts;
} bad_file;

static int read_corpus(bad_file **out)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/tests/corpus/ini_bad", cli_test_root());
    DIR *d = opendir(dir);
    cr_assert(d, "cannot open %s (set CARTSIM_ROOT)", dir);
    bad_file *files = NULL;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".ini") != 0)
            continue;
        files = realloc(files, (size_t)(n + 1) * sizeof *files);
        cr_assert(files);
        bad_file *b = &files[n++];
        memset(b, 0, sizeof *b);
        snprintf(b->path, sizeof b->path, "%s/%s", dir, de->d_name);
        FILE *f = fopen(b->path, "rb");
        cr_assert(f, "cannot read %s", b->path);
        char first[600] = "", second[600] = "";
        cr_assert(fgets(first, sizeof first, f), "%s is empty", b->path);
        if (!fgets(second, sizeof second, f))
            second[0] = 0;
        fclose(f);
        first[strcspn(first, "\r\n")] = 0;
        int used = 0;
        cr_assert(sscanf(first, "; expect: %d: %n", &b->line, &used) == 1 && used > 0,
                  "%s: the first line is not '; expect: LINE: MESSAGE'", b->path);
        snprintf(b->message, sizeof b->message, "%s", first + used);
        b->library_accepts = strncmp(second, "; library: accepts", 18) == 0;
    }
    closedir(d);
    *out = files;
    return n;
}

/* Every bad file fails `cartsim` with exit status 2, one line
 * "cartsim: FILE:LINE: ..." holding the expected message, nothing on
 * stdout: under run with flags over it, and under --print-config. */
Test(config_cli, bad_files_corpus, .timeout = 600)
{
    bad_file *files;
    int n = read_corpus(&files);
    cr_expect(n >= 40, "only %d files in tests/corpus/ini_bad", n);
    for (int i = 0; i < n; i++) {
        const bad_file *b = &files[i];
        char want[1200];
        snprintf(want, sizeof want, "cartsim: %.1000s:%d: ", b->path, b->line);
        const char *variants[][8] = {
            {"run", "--config", b->path, "--steps", "1", "--envs", "1", NULL},
            {"dump", "--print-config", "--config", b->path, NULL},
        };
        for (int v = 0; v < 2; v++) {
            cli_result r;
            cli_test_run(variants[v], 300, &r);
            const char *nl = strchr(r.err, '\n');
            cr_expect_eq(r.status, 2, "%s (%s): status %d, want 2; stderr: %s", b->path, variants[v][0], r.status,
                         r.err);
            cr_expect_eq(r.out_len, 0u, "%s: wrote to stdout: %.200s", b->path, r.out);
            cr_expect(nl && nl[1] == 0, "%s: stderr is not one line: [%s]", b->path, r.err);
            cr_expect(strncmp(r.err, want, strlen(want)) == 0, "%s: stderr [%s] does not start with [%s]", b->path,
                      r.err, want);
            cr_expect(strstr(r.err, b->message) != NULL, "%s: stderr [%s] lacks [%s]", b->path, r.err, b->message);
            cli_result_free(&r);
        }
    }
    free(files);
}

/* The library refuses the same files at the same lines, except what only
 * the program (its own keys) or the environment (names) can refuse. */
Test(config_lib, bad_files_corpus)
{
    bad_file *files;
    int n = read_corpus(&files);
    for (int i = 0; i < n; i++) {
        const bad_file *b = &files[i];
        cs_config cfg;
        cs_config_init(&cfg);
        cs_config_file *f = NULL;
        char err[1024] = "";
        cs_status st = cs_config_load(&cfg, b->path, &f, err, sizeof err);
        if (b->library_accepts) {
            cr_expect_eq(st, CS_OK, "%s: %s", b->path, err);
            cs_config_file_free(f);
            continue;
        }
        char want[1200];
        snprintf(want, sizeof want, "%s:%d: ", b->path, b->line);
        cr_expect_neq(st, CS_OK, "%s: accepted", b->path);
        cr_expect_null(f);
        cr_expect(strncmp(err, want, strlen(want)) == 0 && strstr(err, b->message),
                  "%s: message [%s], want [%s...%s]", b->path, err, want, b->message);
    }
    free(files);
}

Test(config_cli, unreadable_files)
{
    static const char *const cases[][2] = {
        {"/nonexistent/cartsim.ini", "/nonexistent/cartsim.ini: cannot open: "},
        {"/tmp", "/tmp: cannot open: a directory, not a regular file"},
    };
    for (size_t i = 0; i < 2; i++) {
        const char *args[] = {"--config", cases[i][0], "--steps", "1", NULL};
        cli_result r;
        cli_test_run(args, 300, &r);
        char want[256];
        snprintf(want, sizeof want, "cartsim: %s", cases[i][1]);
        cr_expect_eq(r.status, 2, "%s: status %d", cases[i][0], r.status);
        cr_expect(strncmp(r.err, want, strlen(want)) == 0, "stderr [%s], want [%s...]", r.err, want);
        cr_expect_eq(r.out_len, 0u);
        cli_result_free(&r);
    }
    static const char *const flags[][6] = {
        {"--config", NULL},
        {"--config=", "--steps", "1", NULL},
        {"--config", "a.ini", "--config", "b.ini", NULL},
        {"--print-config=yes", NULL},
    };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        cli_result r;
        cli_test_run(flags[i], 300, &r);
        cr_expect_eq(r.status, 2, "%s ...: status %d, stderr %s", flags[i][0], r.status, r.err);
        cli_result_free(&r);
    }
}

/* ---- precedence and --print-config ---- */

Test(config_cli, flag_over_file_over_default)
{
    tmp_files t;
    tmp_open(&t);
    const char *path = tmp_write(&t, "p.ini",
                                 "[run]\n"        /* 1 */
                                 "envs = 16\n"    /* 2 */
                                 "steps = 7\n"    /* 3 */
                                 "seed = 3\n"     /* 4 */
                                 "dtype = f64\n"  /* 5 */
                                 "[params]\n"     /* 6 */
                                 "length = 0.3\n" /* 7 */
                                 "masspole = 0.2\n");
    const char *args[] = {"run", "--config", path, "--envs", "32", "--param", "length=0.4", "--print-config", NULL};
    cli_result r;
    run_ok(args, &r);
    char at[256];
    expect_printed(r.out, "envs", "32", "flag");
    snprintf(at, sizeof at, "%s:3", path);
    expect_printed(r.out, "steps", "7", at);
    snprintf(at, sizeof at, "%s:4", path);
    expect_printed(r.out, "seed", "3", at);
    snprintf(at, sizeof at, "%s:5", path);
    expect_printed(r.out, "dtype", "f64", at);
    expect_printed(r.out, "unroll", "1", "default");
    expect_printed(r.out, "fusion", "full", "default");
    expect_printed(r.out, "name", "cartpole", "default");
    /* --param length replaces the file's length; the file's masspole stays. */
    expect_printed(r.out, "length", "0.4", "flag");
    snprintf(at, sizeof at, "%s:8", path);
    expect_printed(r.out, "masspole", "0.2", at);
    cr_expect(strstr(r.out, "length = 0.3") == NULL, "the file's length is still there:\n%s", r.out);
    cli_result_free(&r);

    /* The run itself uses the same values. */
    const char *run[] = {"run", "--config", path, "--envs", "32", "--json", NULL};
    run_ok(run, &r);
    cr_expect(strstr(r.out, "\"num_envs\": 32,") && strstr(r.out, "\"steps\": 7,") && strstr(r.out, "\"seed\": 3,") &&
                  strstr(r.out, "\"dtype\": \"f64\""),
              "%s", r.out);
    cli_result_free(&r);

    /* Without --config: defaults and flags only. */
    const char *plain[] = {"run", "--steps", "5", "--print-config", NULL};
    run_ok(plain, &r);
    expect_printed(r.out, "steps", "5", "flag");
    expect_printed(r.out, "envs", "2048", "default");
    cli_result_free(&r);
    tmp_close(&t);
}

/* persistent: default true, a file's line, or one of the two flags, which
 * win over the file; --print-config names the origin; the run obeys. */
Test(config_cli, persistent_from_file_and_flags)
{
    tmp_files t;
    tmp_open(&t);
    const char *path = tmp_write(&t, "pers.ini",
                                 "[run]\n"               /* 1 */
                                 "unroll = 10\n"         /* 2 */
                                 "persistent = false\n"  /* 3 */
                                 "backend = cpu\n");     /* 4 */
    char at[256];
    snprintf(at, sizeof at, "%s:3", path);
    cli_result r;
    const char *dflt[] = {"run", "--print-config", NULL};
    run_ok(dflt, &r);
    expect_printed(r.out, "persistent", "true", "default");
    cli_result_free(&r);
    const char *file[] = {"run", "--config", path, "--print-config", NULL};
    run_ok(file, &r);
    expect_printed(r.out, "persistent", "false", at);
    cli_result_free(&r);
    const char *on[] = {"run", "--config", path, "--persistent", "--print-config", NULL};
    run_ok(on, &r);
    expect_printed(r.out, "persistent", "true", "flag");
    cli_result_free(&r);
    const char *off[] = {"train", "--no-persistent", "--print-config", NULL};
    run_ok(off, &r);
    expect_printed(r.out, "persistent", "false", "flag");
    cli_result_free(&r);

    /* The file's false: a launch per 10 steps; the flag's true: one. */
    const char *run[] = {"--config", path, "--envs", "8", "--steps", "95", "--json", NULL};
    run_ok(run, &r);
    cr_expect(strstr(r.out, "\"persistent\": false,") && strstr(r.out, "\"launches\": 10,"), "%s", r.out);
    cli_result_free(&r);
    const char *run_on[] = {"--config", path, "--persistent", "--envs", "8", "--steps", "95", "--json", NULL};
    run_ok(run_on, &r);
    cr_expect(strstr(r.out, "\"persistent\": true,") && strstr(r.out, "\"launches\": 1,"), "%s", r.out);
    cli_result_free(&r);

    /* dump launches nothing: the key is listed as not used. */
    const char *dump[] = {"dump", "--config", path, "--print-config", NULL};
    run_ok(dump, &r);
    cr_expect(strstr(r.out, "; [run] persistent = false (line 3)") != NULL, "%s", r.out);
    cli_result_free(&r);
    tmp_close(&t);
}

/* The trainers' booleans that default to true (anneal_lr, norm_adv,
 * clip_vloss) turn off from a file's false, as their --no- flags do, and
 * training obeys: a constant learning rate. A file's false used to be
 * skipped, leaving them on. */
Test(config_cli, train_switches_from_file_turn_off, .timeout = 300)
{
    tmp_files t;
    tmp_open(&t);
    const char *path = tmp_write(&t, "off.ini",
                                 "[train]\n"               /* 1 */
                                 "algo = ppo\n"            /* 2 */
                                 "anneal_lr = false\n"     /* 3 */
                                 "norm_adv = false\n"      /* 4 */
                                 "clip_vloss = false\n"    /* 5 */
                                 "num_envs = 4\n"          /* 6 */
                                 "num_steps = 64\n"        /* 7 */
                                 "total_timesteps = 768\n" /* 8 */
                                 "[agent]\n"
                                 "agent = mlp:8\n");
    char at[3][300];
    for (int k = 0; k < 3; k++)
        snprintf(at[k], sizeof at[k], "%s:%d", path, 3 + k);
    cli_result r;
    const char *print[] = {"train", "--config", path, "--print-config", NULL};
    run_ok(print, &r);
    expect_printed(r.out, "anneal_lr", "false", at[0]);
    expect_printed(r.out, "norm_adv", "false", at[1]);
    expect_printed(r.out, "clip_vloss", "false", at[2]);
    cli_result_free(&r);
    /* the flag still wins over the file */
    const char *on[] = {"train", "--config", path, "--anneal-lr", "--print-config", NULL};
    run_ok(on, &r);
    expect_printed(r.out, "anneal_lr", "true", "flag");
    cli_result_free(&r);

    const char *job[] = {"train", "--config", path, "--env", "cartpole", "--episodes", "2", "--json", NULL};
    run_ok(job, &r);
    cr_expect(strstr(r.out, "\"anneal_lr\": false") && strstr(r.out, "\"norm_adv\": false") &&
                  strstr(r.out, "\"clip_vloss\": false"),
              "%s", r.out);
    int iterations = 0;
    for (const char *p = strstr(r.out, "\"learning_rate\": "); p; p = strstr(p + 1, "\"learning_rate\": ")) {
        if (strstr(p, "\"type\": \"result\"") == NULL)
            break;   /* the result's own train object */
        cr_expect(strncmp(p, "\"learning_rate\": 0.00025}", 25) == 0, "a constant rate: %.40s", p);
        iterations++;
    }
    cr_expect_eq(iterations, 3, "%s", r.out);
    cli_result_free(&r);
    tmp_close(&t);
}

/* A file and the same flags run the same experiment (the file's [env]
 * autoreset, which run's fused rollout has no use for, changes nothing). */
Test(config_cli, file_equals_flags)
{
    tmp_files t;
    tmp_open(&t);
    const char *path = tmp_write(&t, "same.ini",
                                 "[run]\nenvs = 24\nsteps = 40\nseed = 5\ndtype = f64\nunroll = 3\n"
                                 "[env]\nname = cartpole\nautoreset = same_step\n"
                                 "[params]\nlength = 0.4:0.6\n");
    const char *a[] = {"--config", path, "--json", NULL};
    const char *b[] = {"--envs", "24", "--steps", "40", "--seed", "5", "--dtype", "f64", "--unroll", "3",
                       "--param", "length=0.4:0.6", "--json", NULL};
    cli_result ra, rb;
    run_ok(a, &ra);
    run_ok(b, &rb);
    const char *ca = strstr(ra.out, "\"checksum\""), *cb = strstr(rb.out, "\"checksum\"");
    cr_assert(ca && cb);
    cr_expect(strncmp(ca, cb, 32) == 0, "file: %.32s, flags: %.32s", ca, cb);
    cli_result_free(&ra);
    cli_result_free(&rb);
    tmp_close(&t);
}

/* --print-config's output is itself a configuration file that gives the
 * same settings back. */
Test(config_cli, print_config_round_trips)
{
    char src[512];
    snprintf(src, sizeof src, "%s/configs/domain_randomization.ini", cli_test_root());
    const char *args[] = {"--config", src, "--unroll", "5", "--print-config", NULL};
    cli_result r1;
    run_ok(args, &r1);
    tmp_files t;
    tmp_open(&t);
    const char *copy = tmp_write(&t, "printed.ini", r1.out);
    const char *again[] = {"--config", copy, "--print-config", NULL};
    cli_result r2;
    run_ok(again, &r2);
    static const char *const keys[] = {"envs", "steps", "unroll", "backend", "fusion", "dtype", "threads",
                                       "seed", "block", "name", "masscart", "length", "gravity"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char v1[256], v2[256], o[256];
        cr_expect(printed(r1.out, keys[i], v1, sizeof v1, o, sizeof o), "%s missing", keys[i]);
        cr_expect(printed(r2.out, keys[i], v2, sizeof v2, o, sizeof o), "%s missing after the round trip", keys[i]);
        cr_expect_str_eq(v1, v2, "%s: %s, then %s", keys[i], v1, v2);
        cr_expect(strncmp(o, copy, strlen(copy)) == 0, "%s: origin %s, not the printed file", keys[i], o);
    }
    cli_result_free(&r1);
    cli_result_free(&r2);
    tmp_close(&t);
}

/* Every subcommand takes --config and --print-config; what the file holds
 * that the subcommand does not use is listed, not dropped in silence. */
Test(config_cli, every_subcommand)
{
    char src[512];
    snprintf(src, sizeof src, "%s/configs/cartpole.ini", cli_test_root());
    static const char *const commands[] = {"run", "replay", "dump", "view", "render", "train", "eval"};
    const char *help[] = {"help", NULL, NULL};
    cli_result h;
    run_ok(help, &h);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "  %s ", commands[i]);
        if (!strstr(h.out, name))
            continue;   /* not built yet */
        const char *args[] = {commands[i], "--config", src, "--print-config", NULL};
        cli_result r;
        run_ok(args, &r);
        cr_expect(strstr(r.out, "; cartsim ") == r.out, "%s: %s", commands[i], r.out);
        char at[600];
        snprintf(at, sizeof at, "%s:", src);
        cr_expect(strstr(r.out, at) != NULL, "%s --print-config shows nothing from the file:\n%s", commands[i],
                  r.out);
        cli_result_free(&r);
        const char *hargs[] = {commands[i], "--help", NULL};
        run_ok(hargs, &r);
        cr_expect(strstr(r.out, "--config FILE") && strstr(r.out, "--print-config"), "%s --help:\n%s", commands[i],
                  r.out);
        cli_result_free(&r);
    }
    cli_result_free(&h);

    const char *dump[] = {"dump", "--config", src, "--print-config", NULL};
    cli_result r;
    run_ok(dump, &r);
    cr_expect(strstr(r.out, "not used by 'cartsim dump'") && strstr(r.out, "; [run] steps = 10000"), "%s", r.out);
    cli_result_free(&r);
}

/* ---- configs/ ---- */

static bool has_command(const char *name)
{
    const char *args[] = {name, "--help", NULL};
    cli_result r;
    cli_test_run(args, 60, &r);
    bool ok = r.status == 0;
    cli_result_free(&r);
    return ok;
}

/* Every shipped file loads, prints and runs a short job (sizes cut down
 * from the command line: the flags win). */
Test(config_cli, shipped_configs_run, .timeout = 900)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/configs", cli_test_root());
    DIR *d = opendir(dir);
    cr_assert(d, "cannot open %s", dir);
    bool train = has_command("train");
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".ini") != 0)
            continue;
        n++;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        const char *print[] = {"--config", path, "--print-config", NULL};
        cli_result r;
        run_ok(print, &r);
        cli_result_free(&r);
        cs_config cfg;
        cs_config_init(&cfg);
        cs_config_file *f = NULL;
        char err[1024] = "";
        cr_expect_eq(cs_config_load(&cfg, path, &f, err, sizeof err), CS_OK, "%s", err);
        bool trains = cs_config_file_get(f, "train", "generations") != NULL;
        const cs_config_entry *algo = cs_config_file_get(f, "train", "algo");
        bool ppo = algo && strcmp(algo->value, "ppo") == 0;
        trains |= ppo;
        cs_config_file_free(f);
        if (trains && train) {
            /* Trains briefly, then scores what it saved. */
            tmp_files t;
            tmp_open(&t);
            char pol[256];
            snprintf(pol, sizeof pol, "%s/p.pol", t.dir);
            const char *job[] = {"train", "--config", path, "--generations", "1", "--pop", "8", "--episodes", "2",
                                 "--out", pol, NULL};
            /* 8192: configs/ppo_breakout.ini's one iteration (64 x 128) */
            const char *ppo_job[] = {"train", "--config", path, "--total-timesteps", "8192", "--episodes", "2", "--out",
                                     pol, NULL};
            run_ok(ppo ? ppo_job : job, &r);
            cli_result_free(&r);
            const char *eval[] = {"eval", "--config", path, "--policy", pol, "--episodes", "2", NULL};
            run_ok(eval, &r);
            unlink(pol);
            tmp_close(&t);
        } else {
            const char *job[] = {"run", "--config", path, "--steps", "10", "--envs", "8", "--json", NULL};
            run_ok(job, &r);
            cr_expect(strstr(r.out, "\"steps\": 10,") != NULL, "%s: %s", path, r.out);
        }
        cli_result_free(&r);
    }
    closedir(d);
    cr_expect(n >= 4, "only %d files in configs/", n);

    /* One per environment. */
    DIR *e = opendir(strcat(strcpy(dir, cli_test_root()), "/envs"));
    cr_assert(e);
    while ((de = readdir(e))) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".env") != 0)
            continue;
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/configs/%.*s.ini", cli_test_root(), (int)(len - 4), de->d_name);
        cr_expect(stat(path, &st) == 0, "envs/%s has no %s: add one (one configuration per environment)",
                  de->d_name, path);
    }
    closedir(e);
}

/* --out means the trained policy to train and the frames to render: each
 * reads its own section's key, and lists the other as not used. */
Test(config_cli, out_per_subcommand)
{
    if (!has_command("train") || !has_command("render"))
        return;
    tmp_files t;
    tmp_open(&t);
    const char *path = tmp_write(&t, "out.ini",
                                 "[train]\n"              /* 1 */
                                 "out = p.pol\n"          /* 2 */
                                 "[view]\n"               /* 3 */
                                 "out = frames\n");       /* 4 */
    char at[256];
    cli_result r;
    const char *train[] = {"train", "--config", path, "--print-config", NULL};
    run_ok(train, &r);
    snprintf(at, sizeof at, "%s:2", path);
    expect_printed(r.out, "out", "p.pol", at);
    cr_expect(strstr(r.out, "; [view] out = frames (line 4)") != NULL, "%s", r.out);
    cli_result_free(&r);
    const char *render[] = {"render", "--config", path, "--print-config", NULL};
    run_ok(render, &r);
    snprintf(at, sizeof at, "%s:4", path);
    expect_printed(r.out, "out", "frames", at);
    cr_expect(strstr(r.out, "; [train] out = p.pol (line 2)") != NULL, "%s", r.out);
    cli_result_free(&r);
    const char *flag[] = {"render", "--config", path, "--out", "elsewhere", "--print-config", NULL};
    run_ok(flag, &r);
    expect_printed(r.out, "out", "elsewhere", "flag");
    cli_result_free(&r);
    tmp_close(&t);
}
