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
 * listed as not used; render (cs_env_step) still takes it. */
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
    const char *render_print[] = {"render", "--config", path, "--autoreset", "next_step", "--print-config", NULL};
    run(render_print, &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "autoreset = next_step") != NULL, "%s", r.out);
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
