/* Honest settings: what --help says each subcommand's defaults are is what
 * it uses, flags that would change nothing are refused, and the small
 * promises of issue 18 (Gymnasium ids as environment names, the formats
 * dump lists, the compiler's absence said aloud, train's --pop, --out and
 * "not solved"). The program is run through tests/test_cli.c's runner. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cartsim.h"
#include "cli_test.h"

/* Runs the program; the result is the caller's to free. */
static void run(const char *const *args, cli_result *r)
{
    cli_test_run(args, 300, r);
    cr_assert(!r->timed_out, "cartsim %s: timed out", args[0]);
}

/* Exit status 2, one line on stderr holding `want`, nothing on stdout. */
static void expect_usage_error(const char *const *args, const char *want)
{
    cli_result r;
    run(args, &r);
    const char *nl = strchr(r.err, '\n');
    cr_expect_eq(r.status, 2, "cartsim %s %s: status %d, stderr %s", args[0], args[1] ? args[1] : "", r.status,
                 r.err);
    cr_expect(nl && nl[1] == 0, "stderr is not one line: [%s]", r.err);
    cr_expect_eq(r.out_len, 0u, "stdout: %s", r.out);
    cr_expect(strstr(r.err, want) != NULL, "stderr [%s] lacks [%s]", r.err, want);
    cli_result_free(&r);
}

/* ---- Gymnasium ids ---- */

Test(settings, gymnasium_ids_name_environments)
{
    static const char *const pairs[][2] = {
        {"CartPole-v1", "cartpole"},         {"Pendulum-v1", "pendulum"},
        {"MountainCar-v0", "mountain_car"},  {"MountainCarContinuous-v0", "mountain_car_continuous"},
        {"Acrobot-v1", "acrobot"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        cs_config cfg;
        cs_config_init(&cfg);
        cfg.env = pairs[i][0];
        cfg.backend = CS_BACKEND_INTERP;
        cs_env *env = NULL;
        cs_status st = cs_env_open(&cfg, &env);
        cr_expect_eq(st, CS_OK, "%s: %s", pairs[i][0], env ? cs_env_error(env) : "no handle");
        cs_env_info info;
        if (st == CS_OK && cs_env_get_info(env, &info) == CS_OK) {
            cr_expect_str_eq(info.name, pairs[i][1]);
            cr_expect_str_eq(info.title, pairs[i][0]);
        }
        cs_env_close(env);
    }
    /* An id no environment declares is still unknown. */
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = "CartPole-v0";
    cfg.backend = CS_BACKEND_INTERP;
    cs_env *env = NULL;
    cr_expect_eq(cs_env_open(&cfg, &env), CS_ERR_NOT_FOUND);
    cs_env_close(env);
}

/* ---- choices are listed ---- */

Test(settings, dump_lists_its_formats)
{
    const char *args[] = {"dump", "--format", "pdf", NULL};
    expect_usage_error(args, "--format: 'pdf' is not one of the choices: text, dot, c, cuda, cubin");
}

/* ---- no C compiler ---- */

/* The default backend falls back to the interpreter and says so on stderr
 * (exit 0, even under --json); --backend cpu refuses (exit 2). */
Test(settings, no_compiler_is_said_aloud)
{
    cr_assert_eq(setenv("CC", "/nonexistent", 1), 0);
    const char *quiet_json[] = {"--envs", "4", "--steps", "20", "--no-cache", "--json", NULL};
    const char *eval[] = {"eval", "--episodes", "2", "--no-cache", NULL};
    const char *const *jobs[] = {quiet_json, eval};
    for (size_t i = 0; i < 2; i++) {
        cli_result r;
        run(jobs[i], &r);
        cr_expect_eq(r.status, 0, "status %d, stderr %s", r.status, r.err);
        cr_expect(strstr(r.err, "cartsim: note: cpu backend unavailable (no C compiler") != NULL,
                  "%s: nothing said on stderr: [%s]", jobs[i][0], r.err);
        cr_expect(strstr(r.err, "running the interpreter") != NULL, "%s", r.err);
        cli_result_free(&r);
    }
    const char *cpu[] = {"--backend", "cpu", "--envs", "4", "--steps", "20", "--no-cache", NULL};
    expect_usage_error(cpu, "no C compiler: '/nonexistent' was not found");
}

/* ---- --autoreset and run ---- */

/* run's fused rollout restarts an ended episode within the step whatever the
 * convention: it refuses the flag, its help says so, and a file's key is
 * listed as not used. */
Test(settings, run_refuses_autoreset)
{
    const char *args[] = {"run", "--autoreset", "same_step", "--steps", "10", NULL};
    expect_usage_error(args, "--autoreset has no effect on 'cartsim run': its fused rollout restarts");
    const char *dflt[] = {"--autoreset", "next_step", NULL};
    expect_usage_error(dflt, "--autoreset has no effect on 'cartsim run'");

    cli_result r;
    const char *help[] = {"run", "--help", NULL};
    run(help, &r);
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "--autoreset is refused") != NULL, "%s", r.out);
    cli_result_free(&r);

    char path[] = "/tmp/cartsim-settings-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    const char ini[] = "[env]\nname = cartpole\nautoreset = same_step\n";
    cr_assert_eq(write(fd, ini, sizeof ini - 1), (ssize_t)(sizeof ini - 1));
    close(fd);
    const char *print[] = {"run", "--config", path, "--print-config", NULL};
    run(print, &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "; [env] autoreset = same_step (line 3)") != NULL, "%s", r.out);
    cli_result_free(&r);
    unlink(path);
}

/* ---- train: --pop, --out, "not solved" ---- */

Test(settings, train_refuses_an_odd_es_population)
{
    const char *odd[] = {"train", "--pop", "63", "--generations", "1", NULL};
    expect_usage_error(odd, "--pop: '63' is odd: evolution strategies score candidates in mirrored pairs");
}

/* A run that does not reach its target: exit 0, "solved": false in the
 * JSON object; without --out the text says the policy was discarded. */
Test(settings, train_not_solved_and_not_saved, .timeout = 300)
{
    const char *json[] = {"train", "--pop", "8", "--generations", "1", "--episodes", "2", "--target", "1e9",
                          "--json", NULL};
    cli_result r;
    run(json, &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(r.out[0] == '{' && strstr(r.out, "\"solved\": false,") && strstr(r.out, "\"saved\": null"), "%s",
              r.out);
    cr_expect(strstr(r.out, "gen ") == NULL, "progress lines in the JSON output: %s", r.out);
    cli_result_free(&r);
    const char *text[] = {"train", "--pop", "8", "--generations", "1", "--episodes", "2", "--target", "1e9", NULL};
    run(text, &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "not saved: the trained policy is discarded (--out FILE keeps it)\n"), "%s", r.out);
    cli_result_free(&r);
}

/* ---- --help's defaults ---- */

/* The flags that hold a value, and their file keys, as the program builds
 * them: the library's settings (cs_config_setting_at; --NAME with '-' for
 * '_'), then the program's own options (cli_options.def). */
typedef struct {
    char flag[64];
    const char *metavar, *section, *key;
} table_row;

static const table_row program_rows[] = {
#define OPTION(id, flag, metavar, section, key, note, help) {flag, metavar, section, key},
#define KEY(id, section, key, commands)
#define RANGE(id, lo, hi)
#define FOR(id, commands, metavar, help)
#include "../cli/cli_options.def"
#undef OPTION
#undef KEY
#undef RANGE
#undef FOR
};
#define N_PROGRAM_ROWS (sizeof program_rows / sizeof program_rows[0])

static void flag_of(const char *setting, char *flag, size_t size)
{
    snprintf(flag, size, "%s", setting);
    for (char *c = flag; *c; c++)
        *c = *c == '_' ? '-' : *c;
}

/* rows[cap]: returns how many */
static size_t all_rows(table_row *rows, size_t cap)
{
    size_t n = 0;
    cs_setting_info in;
    for (size_t i = 0; cs_config_setting_at(i, &in) == CS_OK && n < cap; i++, n++) {
        flag_of(in.name, rows[n].flag, sizeof rows[n].flag);
        rows[n].metavar = in.kind == CS_SETTING_BOOL ? NULL : in.metavar ? in.metavar : "CHOICE";
        rows[n].section = in.section;
        rows[n].key = in.key;
    }
    for (size_t i = 0; i < N_PROGRAM_ROWS && n < cap; i++, n++)
        rows[n] = program_rows[i];
    return n;
}

/* The default --help prints for --FLAG in `help`: "" when the flag is not
 * listed, "-" when it is listed with no "(default ...)". */
static void help_default(const char *help, const char *flag, char *out, size_t size)
{
    char start[64];
    snprintf(start, sizeof start, "\n  --%s ", flag);
    const char *p = strstr(help, start);
    out[0] = 0;
    if (!p)
        return;
    /* A long "--flag METAVAR" puts its help on the next line. */
    const char *end = strchr(p + 1, '\n');
    if (end && strncmp(end, "\n    ", 5) == 0)
        end = strchr(end + 1, '\n');
    const char *d = strstr(p, " (default ");
    if (!d || (end && d > end)) {
        snprintf(out, size, "-");
        return;
    }
    d += strlen(" (default ");
    size_t n = strcspn(d, " :)\n");
    snprintf(out, size, "%.*s", (int)n, d);
}

/* The value --print-config prints for KEY with origin "default"; "" when none. */
static void printed_default(const char *config, const char *key, char *out, size_t size)
{
    out[0] = 0;
    size_t klen = strlen(key);
    for (const char *p = config; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, key, klen) != 0 || strncmp(p + klen, " = ", 3) != 0)
            continue;
        const char *v = p + klen + 3;
        size_t n = strcspn(v, " ;\n");
        snprintf(out, size, "%.*s", (int)n, v);
        return;
    }
}

/* Every subcommand's --help shows, for every setting of the table it takes,
 * the default that subcommand starts from (its --print-config, which prints
 * the values it runs with), and run's and render's work uses them. */
Test(settings, help_shows_each_subcommands_real_defaults, .timeout = 300)
{
    static const char *const commands[] = {"run", "replay", "dump", "view", "render", "train", "eval"};
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++) {
        cli_result help, config;
        const char *h[] = {commands[c], "--help", NULL};
        const char *p[] = {commands[c], "--print-config", NULL};
        run(h, &help);
        run(p, &config);
        cr_assert_eq(help.status, 0, "%s --help: %s", commands[c], help.err);
        cr_assert_eq(config.status, 0, "%s --print-config: %s", commands[c], config.err);
        int compared = 0;
        table_row table[128];
        size_t n_rows = all_rows(table, 128);
        for (size_t i = 0; i < n_rows; i++) {
            if (!table[i].metavar || !table[i].key)
                continue;
            char shown[128], used[128];
            help_default(help.out, table[i].flag, shown, sizeof shown);
            if (!*shown)
                continue;   /* not this subcommand's */
            printed_default(config.out, table[i].key, used, sizeof used);
            if (!*used)
                continue;   /* no value: a note says what happens ("the env's threshold") */
            cr_expect_str_eq(shown, used, "cartsim %s --help says --%s defaults to %s; it uses %s", commands[c],
                             table[i].flag, shown, used);
            compared++;
        }
        cr_expect(compared >= 5, "%s: only %d defaults compared", commands[c], compared);
        cli_result_free(&help);
        cli_result_free(&config);
    }

    /* run: what its JSON reports it did. */
    cli_result help, r;
    const char *h[] = {"run", "--help", NULL};
    run(h, &help);
    char envs[64], steps[64], want[160];
    help_default(help.out, "envs", envs, sizeof envs);
    help_default(help.out, "steps", steps, sizeof steps);
    cli_result_free(&help);
    const char *job[] = {"run", "--json", NULL};
    run(job, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    snprintf(want, sizeof want, "\"num_envs\": %s,\n  \"steps\": %s,", envs, steps);
    cr_expect(strstr(r.out, want) != NULL, "run --help says %s x %s; it ran: %s", envs, steps, r.out);
    cli_result_free(&r);

    /* render: --steps + 1 frames. */
    const char *rh[] = {"render", "--help", NULL};
    run(rh, &help);
    help_default(help.out, "steps", steps, sizeof steps);
    cli_result_free(&help);
    char dir[] = "/tmp/cartsim-frames-XXXXXX";
    cr_assert(mkdtemp(dir));
    const char *frames[] = {"render", "--backend", "interp", "--out", dir, NULL};
    run(frames, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    long last = atol(steps);
    char path[256];
    snprintf(path, sizeof path, "%s/%06ld.png", dir, last);
    cr_expect_eq(access(path, F_OK), 0, "render --help says --steps %s, but %s is missing", steps, path);
    snprintf(path, sizeof path, "%s/%06ld.png", dir, last + 1);
    cr_expect_neq(access(path, F_OK), 0, "render wrote more than --steps %s + 1 frames", steps);
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    cr_expect_eq(system(rm), 0);
}

/* ---- the library's settings and limits ---- */

/* cartsim.h's CS_MAX_* are the limits cs_config_set and cs_env_open check. */
Test(settings, limits_are_the_exported_ones)
{
    static const struct {
        const char *name;
        long long lo, hi;
    } limits[] = {{"envs", 1, CS_MAX_ENVS}, {"unroll", 1, CS_MAX_UNROLL}, {"threads", 0, CS_MAX_THREADS},
                  {"block", 0, CS_MAX_BLOCK}};
    char v[32], err[256];
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        cs_config cfg;
        cs_config_init(&cfg);
        snprintf(v, sizeof v, "%lld", limits[i].hi);
        cr_expect_eq(cs_config_set(&cfg, limits[i].name, v, err, sizeof err), CS_OK, "%s = %s: %s", limits[i].name, v,
                     err);
        snprintf(v, sizeof v, "%lld", limits[i].hi + 1);
        cr_expect_eq(cs_config_set(&cfg, limits[i].name, v, err, sizeof err), CS_ERR_ARGUMENT, "%s = %s",
                     limits[i].name, v);
        snprintf(v, sizeof v, "%lld", limits[i].lo - 1);
        cr_expect_eq(cs_config_set(&cfg, limits[i].name, v, err, sizeof err), CS_ERR_ARGUMENT, "%s = %s",
                     limits[i].name, v);
    }
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.unroll = CS_MAX_UNROLL + 1;
    cfg.backend = CS_BACKEND_INTERP;
    cs_env *env = NULL;
    cr_expect_eq(cs_env_open(&cfg, &env), CS_ERR_ARGUMENT);
    cr_expect(env && strstr(cs_env_error(env), "unroll must be between 1 and 1024, not 1025"), "%s",
              env ? cs_env_error(env) : "no handle");
    cs_env_close(env);
}

/* cs_config_init's defaults are values cs_config_set gives back. */
Test(settings, library_defaults)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cr_expect_str_eq(cfg.env, "cartpole");
    cr_expect_eq(cfg.num_envs, 1);
    cr_expect_eq(cfg.unroll, 1);
    cr_expect_eq(cfg.threads, 0);
    cr_expect_eq(cfg.block, 0);
    cr_expect_eq(cfg.backend, CS_BACKEND_AUTO);
    cr_expect_eq(cfg.fusion, CS_FUSION_FULL);
    cr_expect_eq(cfg.dtype, CS_DTYPE_F32);
    cr_expect_eq(cfg.autoreset, CS_AUTORESET_NEXT_STEP);
    cr_expect(!cfg.strict);
    cr_expect(cfg.persistent);
    cr_expect_eq(cfg.n_params, 0);
    cr_expect(!cfg.policy && !cfg.cc && !cfg.cache_dir && !cfg.env_dir && !cfg.no_cache);
}

/* The table's introspection: every default is a value cs_config_get spells
 * and cs_config_set takes back; the limits are cartsim.h's CS_MAX_*. */
Test(settings, table_defaults_round_trip)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cs_setting_info in;
    size_t n = cs_config_setting_count();
    cr_assert(n >= 15, "%zu settings", n);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(cs_config_setting_at(i, &in), CS_OK);
        cr_expect(in.name && in.field && in.section && in.help && *in.help, "row %zu", i);
        char got[256], again[256], err[256];
        cr_assert_eq(cs_config_get(&cfg, in.name, got, sizeof got), CS_OK, "%s", in.name);
        if (in.default_value)
            cr_expect_str_eq(got, in.default_value, "%s: cs_config_init gives %s", in.name, got);
        if (in.kind == CS_SETTING_LIST)
            continue;
        cs_config copy = cfg;
        cr_expect_eq(cs_config_set(&copy, in.name, got, err, sizeof err), CS_OK, "%s = %s: %s", in.name, got, err);
        cs_config_get(&copy, in.name, again, sizeof again);
        cr_expect_str_eq(again, got, "%s", in.name);
    }
    cr_expect_eq(cs_config_setting_at(n, &in), CS_ERR_ARGUMENT);
    char buf[8];
    cr_expect_eq(cs_config_get(&cfg, "bogus", buf, sizeof buf), CS_ERR_NOT_FOUND);
    static const struct {
        const char *name;
        long long max;
    } limits[] = {{"envs", CS_MAX_ENVS}, {"unroll", CS_MAX_UNROLL}, {"threads", CS_MAX_THREADS},
                  {"block", CS_MAX_BLOCK}, {"device", CS_MAX_DEVICE}, {"cc_timeout", CS_MAX_CC_TIMEOUT_S},
                  {"cache_max_mb", CS_MAX_CACHE_MAX_MB}};
    for (size_t k = 0; k < sizeof limits / sizeof limits[0]; k++) {
        bool found = false;
        for (size_t i = 0; cs_config_setting_at(i, &in) == CS_OK; i++)
            if (!strcmp(in.name, limits[k].name)) {
                found = true;
                cr_expect_eq(in.max, limits[k].max, "%s", in.name);
            }
        cr_expect(found, "no setting %s", limits[k].name);
    }
}

/* Whether `text` holds "\n  --FLAG" followed by a space or the line's end:
 * FLAG's line in --help. */
static bool help_lists(const char *text, const char *flag)
{
    char pat[80];
    snprintf(pat, sizeof pat, "\n  --%s", flag);
    size_t n = strlen(pat);
    for (const char *p = strstr(text, pat); p; p = strstr(p + 1, pat))
        if (p[n] == ' ' || p[n] == '\n')
            return true;
    return false;
}

/* A row of the library's table is all the program needs: every setting is
 * a flag that some subcommand's --help lists (or that run refuses, saying
 * why), a key of a configuration file that --print-config shows where it
 * came from (or lists as not used), and a member of the JSON summary's
 * "config" object. Nothing of the setting is named here: a new row is
 * checked as it is added. */
Test(settings, every_setting_is_a_flag_a_file_key_a_help_line_and_a_json_member, .timeout = 300)
{
    static const char *const commands[] = {"run", "replay", "dump", "view", "render", "train", "eval"};
    char *helps[sizeof commands / sizeof commands[0]];
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++) {
        cli_result h;
        const char *args[] = {commands[c], "--help", NULL};
        run(args, &h);
        cr_assert_eq(h.status, 0, "%s --help: %s", commands[c], h.err);
        helps[c] = strdup(h.out);
        cli_result_free(&h);
    }
    cli_result json;
    const char *job[] = {"run", "--envs", "2", "--steps", "1", "--backend", "interp", "--json", NULL};
    run(job, &json);
    cr_assert_eq(json.status, 0, "%s", json.err);
    const char *config = strstr(json.out, "\n  \"config\": {\n");
    cr_assert(config, "no config object in %s", json.out);

    cs_config dflt;
    cs_config_init(&dflt);
    cs_setting_info in;
    for (size_t i = 0; cs_config_setting_at(i, &in) == CS_OK; i++) {
        char flag[64], member[96];
        flag_of(in.name, flag, sizeof flag);
        /* --help */
        bool listed = false;
        for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
            listed |= help_lists(helps[c], flag);
        if (!listed) {
            char arg[80];
            snprintf(arg, sizeof arg, "--%s", flag);
            const char *refused[] = {"run", arg, "x", NULL};
            expect_usage_error(refused, "has no effect on 'cartsim run'");
        }
        /* --json */
        snprintf(member, sizeof member, "\n    \"%s\": ", in.name);
        cr_expect(strstr(config, member) != NULL, "no \"%s\" in run --json's config: %s", in.name, config);
        /* a file's key */
        char value[256], ini[512], want[300], unused[300];
        cs_config_get(&dflt, in.name, value, sizeof value);
        if (in.kind == CS_SETTING_LIST) {
            snprintf(ini, sizeof ini, "[%s]\ngravity = 9.8\n", in.section);
            snprintf(want, sizeof want, "gravity = 9.8");
        } else {
            snprintf(ini, sizeof ini, "[%s]\n%s = %s\n", in.section, in.key, value);
            snprintf(want, sizeof want, "\n%s = %s ", in.key, value);
        }
        snprintf(unused, sizeof unused, "; [%s] %s = %s (line 2)", in.section, in.key ? in.key : "gravity",
                 in.key ? value : "9.8");
        char path[] = "/tmp/cartsim-setting-XXXXXX";
        int fd = mkstemp(path);
        cr_assert(fd >= 0);
        cr_assert_eq(write(fd, ini, strlen(ini)), (ssize_t)strlen(ini));
        close(fd);
        cli_result p;
        const char *print[] = {"run", "--config", path, "--print-config", NULL};
        run(print, &p);
        cr_expect_eq(p.status, 0, "%s: %s", ini, p.err);
        const char *line = strstr(p.out, want);
        char origin[64];
        snprintf(origin, sizeof origin, "; %s:2\n", path);
        cr_expect((line && strstr(line, origin) && strstr(line, origin) < strchr(line + 1, '\n') + 1) ||
                      strstr(p.out, unused),
                  "[%s] %s: neither set from the file nor listed as not used:\n%s", in.section,
                  in.key ? in.key : "*", p.out);
        cli_result_free(&p);
        unlink(path);
    }
    cli_result_free(&json);
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
        free(helps[c]);
}
