/* What a newcomer reads from the command: names it suggests, numbers it
 * echoes as they were written, settings it says have no effect, help that
 * matches what runs, the cache as people think of it, and Ctrl-C during a
 * compile in every subcommand. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
