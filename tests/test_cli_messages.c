/* What a newcomer reads from the command: names it suggests, numbers it
 * echoes as they were written, settings it says have no effect, help that
 * matches what runs, the cache as people think of it, and Ctrl-C during a
 * compile in every subcommand. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_test.h"

/* Runs and returns stderr's first line (stdout freed); the status in *status. */
static char *stderr_of(const char *const *args, int *status)
{
    cli_result r;
    cli_test_run(args, 120, &r);
    cr_assert(!r.timed_out, "timed out");
    *status = r.status;
    char *line = strdup(r.err);
    cli_result_free(&r);
    return line;
}

Test(cli_messages, an_unknown_environment_gets_the_nearest_name_and_the_gymnasium_ids)
{
    static const struct {
        const char *given, *suggested;
    } cases[] = {{"CartPole-v0", "'CartPole-v1'"}, {"cartpol", "'cartpole'"}, {"MountainCar-v1", "'MountainCar-v0'"},
                 {"mountaincar", "'mountain_car'"}, {"Pendulum-V1", "'Pendulum-v1'"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int status;
        char *err = stderr_of((const char *const[]){"--env", cases[k].given, "--steps", "1", NULL}, &status);
        cr_assert_eq(status, 2);
        char want[128];
        snprintf(want, sizeof want, "unknown environment '%s' (did you mean %s?); known: ", cases[k].given,
                 cases[k].suggested);
        cr_assert(strstr(err, want), "%s", err);
        cr_assert(strstr(err, "cartpole (CartPole-v1), cartpole_concat,") && strstr(err, "pendulum (Pendulum-v1)") &&
                      strstr(err, "spring_mass (SpringMass-v0)") && strstr(err, "or a path to a .env file"),
                  "%s", err);
        free(err);
    }
    int status;
    char *err = stderr_of((const char *const[]){"--env", "zzzzzz", "--steps", "1", NULL}, &status);
    cr_assert(strstr(err, "unknown environment 'zzzzzz'; known: acrobot (Acrobot-v1),"), "no guess when none is near: %s",
              err);
    free(err);
}

/* Every number a message echoes is the shortest decimal that reads back
 * exactly, as Python's repr: 0.6, never 0.59999999999999998. */
Test(cli_messages, numbers_are_echoed_as_the_shortest_decimal)
{
    int status;
    char *err = stderr_of((const char *const[]){"--param", "length=0.6:0.4", "--steps", "1", NULL}, &status);
    cr_assert_eq(status, 2);
    cr_assert(strstr(err, "override 'length=0.6:0.4': the low end 0.6 is above the high end 0.4\n"), "%s", err);
    free(err);

    char dir[] = "/tmp/cartsim-echo-XXXXXX", path[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/bounds.env", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("env bounds \"Bounds-v0\"\nmax_steps 10\nstate x\naction box(0.3, 0.1)\nobserve x\n"
          "reset { x = 0 }\nstep {\n    x' = x + action\n    reward = x'\n    terminated = x' > 1\n}\n", f);
    fclose(f);
    err = stderr_of((const char *const[]){"--env", path, "--steps", "1", NULL}, &status);
    cr_assert_eq(status, 2);
    cr_assert(strstr(err, "the action's bounds must be finite with low <= high, got 0.3 and 0.1\n"), "%s", err);
    free(err);
    remove(path);
    rmdir(dir);

    cli_result r;
    cli_test_run((const char *const[]){"--envs", "4", "--steps", "3", "--json", NULL}, 120, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *run_ms = strstr(r.out, "\"run_ms\": "), *ranks = strstr(r.out, "\"rank_run_ms\": [");
    cr_assert(run_ms && ranks);
    char a[40], b[40];
    cr_assert_eq(sscanf(run_ms + 10, "%39[^,\n]", a), 1);
    cr_assert_eq(sscanf(ranks + 16, "%39[^]]", b), 1);
    cr_assert_str_eq(a, b, "one rank's time is the run's, spelled alike");
    char shortest[40];
    snprintf(shortest, sizeof shortest, "%.17g", strtod(a, NULL));
    cr_assert(strlen(a) < strlen(shortest) || strtod(shortest, NULL) == strtod(a, NULL), "%s", a);
    for (int prec = 1; prec < 17; prec++) {   /* no shorter %g spelling reads back */
        char shorter[40];
        snprintf(shorter, sizeof shorter, "%.*g", prec, strtod(a, NULL));
        if (strtod(shorter, NULL) == strtod(a, NULL)) {
            cr_assert_leq(strlen(a) - (strchr(a, '.') != NULL), strlen(shorter) - (strchr(shorter, '.') != NULL),
                          "%s against %s", a, shorter);
            break;
        }
    }
    cli_result_free(&r);
}
