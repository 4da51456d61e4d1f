/* What a newcomer reads from the command: names it suggests, numbers it
 * echoes as they were written, settings it says have no effect, help that
 * matches what runs, the cache as people think of it, and Ctrl-C during a
 * compile in every subcommand. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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

/* Settings that change nothing in what ran are said once, on stderr, and the
 * summary reports what ran: f32 has one set of math functions, and --block
 * shapes CUDA launches only. */
Test(cli_messages, math_fast_with_f32_and_block_off_the_gpu_are_said_once)
{
    cli_result r;
    cli_test_run((const char *const[]){"--math", "fast", "--block", "64", "--backend", "cpu", "--envs", "8",
                                       "--steps", "5", "--json", NULL},
                 120, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.err, "cartsim: note: --math fast has no effect with --dtype f32: f32 computes with cartsim's "
                            "own vectorized functions in either mode (it changes f64's)\n"
                            "cartsim: note: --block has no effect on the cpu backend: it sets the threads per "
                            "block of a CUDA launch\n");
    cr_assert(strstr(r.out, "\n  \"math\": \"exact\",\n"), "what ran: %s", r.out);
    cr_assert(strstr(r.out, "\n    \"math\": \"fast\",\n"), "the config as asked: %s", r.out);
    cli_result_free(&r);
    cli_test_run((const char *const[]){"--math", "fast", "--dtype", "f64", "--backend", "cpu", "--envs", "8",
                                       "--steps", "5", "--json", NULL},
                 120, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.err, "", "f64's fast math is real");
    cr_assert(strstr(r.out, "\n  \"math\": \"fast\",\n"), "%s", r.out);
    cli_result_free(&r);
}

/* On a machine without an NVIDIA driver the cpu is what was to be expected:
 * no "no CUDA device" notice on every run (a driver without a usable device
 * still gets one: tests/test_cuda.c). */
Test(cli_messages, no_cuda_notice_where_no_gpu_was_expected)
{
    cli_result r;
    cli_test_run((const char *const[]){"--backend", "cuda", "--envs", "8", "--steps", "5", NULL}, 120, &r);
    bool not_installed = strstr(r.err, "no CUDA driver (libcuda.so.1 not found)") != NULL;
    cli_result_free(&r);
    if (!not_installed)
        cr_skip_test("this machine has a CUDA driver: its notices are tests/test_cuda.c's");
    cli_test_run((const char *const[]){"--envs", "8", "--steps", "5", NULL}, 120, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(!strstr(r.out, "notice") && !strstr(r.out, "CUDA") && !*r.err, "%s%s", r.out, r.err);
    cli_result_free(&r);
    cli_test_run((const char *const[]){"--envs", "8", "--steps", "5", "--json", NULL}, 120, &r);
    cr_assert(strstr(r.out, "\"notice\": null"), "%s", r.out);
    cli_result_free(&r);
}

/* Help says what each subcommand does with a flag: --out is a policy file to
 * train, frames to render, a folder to view; eval runs without --policy. */
Test(cli_messages, help_says_each_subcommands_own_out_and_evals_optional_policy)
{
    static const struct {
        const char *command, *line;
    } cases[] = {
        {"train", "\n  --out FILE.pol                the policy file to write (without it the trained policy is discarded)\n"},
        {"render", "\n  --out DIR|FILE.gif|FILE.mp4   numbered PNGs in DIR, or a video through ffmpeg\n"},
        {"view", "\n  --out DIR                     where screenshots and recordings go\n"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cli_result r;
        cli_test_run((const char *const[]){cases[k].command, "--help", NULL}, 60, &r);
        cr_assert_eq(r.status, 0);
        cr_assert(strstr(r.out, cases[k].line), "%s --help:\n%s", cases[k].command, r.out);
        cli_result_free(&r);
    }
    cli_result r;
    cli_test_run((const char *const[]){"eval", "--help", NULL}, 60, &r);
    const char *usage = "usage: cartsim eval [--policy FILE|NAME] [flags]\n";
    cr_assert(!strncmp(r.out, usage, strlen(usage)), "%s", r.out);
    cr_assert(strstr(r.out, "Without --policy the actions are random"), "%s", r.out);
    cli_result_free(&r);
    cli_test_run((const char *const[]){"eval", "--episodes", "3", NULL}, 120, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "policy     random\n"), "%s", r.out);
    cli_result_free(&r);
}

/* `cache list` says what each kernel runs; `cache clear` counts kernels. */
Test(cli_messages, cache_list_describes_kernels_and_clear_counts_them)
{
    char home[] = "/tmp/cartsim-cache-list-XXXXXX";
    cr_assert_not_null(mkdtemp(home));
    setenv("XDG_CACHE_HOME", home, 1);   /* this test's process and the programs it runs */
    cli_result r;
    /* untiered: the optimized kernel; tiered, a run this short keeps the quick one */
    cli_test_run((const char *const[]){"--dtype", "f64", "--unroll", "4", "--envs", "8", "--steps", "4", "--no-tier",
                                       NULL},
                 120, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    cli_test_run((const char *const[]){"--env", "Pendulum-v1", "--envs", "8", "--steps", "4", NULL}, 120, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    cli_test_run((const char *const[]){"cache", "list", NULL}, 60, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "last use                  size  kernel (file)\n"), "%s", r.out);
    cr_assert(strstr(r.out, " KiB  cartpole (CartPole-v1), f64, fusion full, unroll 4, cpu ("), "%s", r.out);
    cr_assert(strstr(r.out, " KiB  pendulum (Pendulum-v1), f32, fusion full, unroll 1, cpu, quick -Og (tiered) ("),
              "%s", r.out);
    cr_assert(strstr(r.out, ": 2 kernels, "), "%s", r.out);
    cli_result_free(&r);
    cli_test_run((const char *const[]){"cache", "clear", NULL}, 60, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "/cartsim: removed 2 kernels\n"), "%s", r.out);
    cli_result_free(&r);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
    cr_assert_eq(system(cmd), 0);
}

/* ---- Ctrl-C during a compile, in every subcommand that compiles ---- */

/* Starts the program with stdout and stderr into files of dir and $CC a
 * compiler that only sleeps; returns its pid. */
static pid_t start_compiling(const char *dir, const char *const *args)
{
    char cc[600], out[600], err[600];
    snprintf(cc, sizeof cc, "%s/sleepy-cc", dir);
    FILE *f = fopen(cc, "w");
    cr_assert_not_null(f);
    fputs("#!/bin/sh\nsleep 60\n", f);
    fclose(f);
    chmod(cc, 0700);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    int nargs = 0;
    while (args[nargs])
        nargs++;
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        setenv("CC", cc, 1);
        setenv("SDL_VIDEODRIVER", "offscreen", 1);
        char cache[600];
        snprintf(cache, sizeof cache, "%s/cache", dir);
        setenv("XDG_CACHE_HOME", cache, 1);
        if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr) || !freopen("/dev/null", "r", stdin))
            _exit(127);
        char **argv = calloc((size_t)nargs + 2, sizeof *argv);
        argv[0] = (char *)cli_test_bin();
        for (int i = 0; i < nargs; i++)
            argv[i + 1] = (char *)args[i];
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* The exit status within limit_s (128 + N for signal N), or -1 after killing it. */
static int exit_status_within(pid_t pid, double limit_s)
{
    for (double waited = 0; waited < limit_s; waited += 0.01) {
        int ws;
        if (waitpid(pid, &ws, WNOHANG) == pid)
            return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

/* The file's text ("" while it does not exist yet). */
static char *read_text(const char *path)
{
    char *text = calloc(1, 1 << 20);
    cr_assert_not_null(text);
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(text, 1, (1 << 20) - 1, f);
        text[n] = 0;
        fclose(f);
    }
    return text;
}

/* Every subcommand that compiles stops at Ctrl-C while the compiler runs:
 * exit status 130 at once (not when the compiler would be done), one line
 * saying so, no build folder left in the cache; a second Ctrl-C is not needed. */
Test(cli_messages, ctrl_c_while_compiling_stops_every_subcommand, .timeout = 240)
{
    char dir[] = "/tmp/cartsim-ctrl-c-XXXXXX", path[700];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/episode.csv", dir);
    char golden[700];
    snprintf(golden, sizeof golden, "%s/cartpole.csv", cli_test_golden());
    const char *const runs[][12] = {
        {"--envs", "8", "--steps", "5", NULL},
        {"replay", "--env", "cartpole", golden, NULL},
        {"eval", "--episodes", "3", NULL},
        {"train", "--pop", "8", "--generations", "2", NULL},
        {"render", "--envs", "1", "--steps", "2", "--out", dir, NULL},
        {"view", "--envs", "1", NULL},
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        pid_t pid = start_compiling(dir, runs[k]);
        nanosleep(&(struct timespec){0, 700000000L}, NULL);   /* into the compile */
        cr_assert_eq(kill(pid, SIGINT), 0);
        int status = exit_status_within(pid, 10);
        snprintf(path, sizeof path, "%s/err", dir);
        char *err = read_text(path);
        const char *command = runs[k][0][0] == '-' ? "run" : runs[k][0];
        if (status == 2 && strstr(err, "no display"))   /* a viewer without SDL2 refuses before compiling */
            cr_log_warn("view: %s", err);
        else
            cr_expect(status == 130 && strstr(err, "interrupted while compiling"), "%s: exit status %d: %s", command,
                      status, err);
        free(err);
        char cmd[800];
        snprintf(cmd, sizeof cmd, "test -z \"$(find '%s/cache' -name '.build-*' 2>/dev/null)\"", dir);
        cr_expect_eq(system(cmd), 0, "%s: a build folder was left in the cache", command);
    }
    char cmd[800];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* train goes on between compiles: Ctrl-C stops it between generations. */
Test(cli_messages, ctrl_c_stops_training_between_generations, .timeout = 120)
{
    char dir[] = "/tmp/cartsim-ctrl-c-train-XXXXXX", path[700];
    cr_assert_not_null(mkdtemp(dir));
    char out[600];
    snprintf(out, sizeof out, "%s/out", dir);
    char cache[600];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        setenv("XDG_CACHE_HOME", cache, 1);
        if (!freopen(out, "w", stdout) || !freopen("/dev/null", "r", stdin))
            _exit(127);
        snprintf(path, sizeof path, "%s/err", dir);
        if (!freopen(path, "w", stderr))
            _exit(127);
        execl(cli_test_bin(), cli_test_bin(), "train", "--pop", "16", "--generations", "1000000", "--target", "1e9",
              (char *)NULL);
        _exit(127);
    }
    /* Its kernel in the cache: the compile is over, the generations run. */
    char cmd[800];
    snprintf(cmd, sizeof cmd, "test -n \"$(find '%s' -name '*.so.meta' 2>/dev/null)\"", cache);
    int waited = 0;
    while (system(cmd) != 0 && waited++ < 600)
        nanosleep(&(struct timespec){0, 100000000L}, NULL);
    nanosleep(&(struct timespec){0, 300000000L}, NULL);
    cr_assert_eq(kill(pid, SIGINT), 0);
    int status = exit_status_within(pid, 10);
    snprintf(path, sizeof path, "%s/err", dir);
    char *err = read_text(path);
    cr_expect_eq(status, 130, "exit status %d: %s", status, err);
    cr_expect(strstr(err, "cartsim: interrupted after ") && strstr(err, " of 1000000 generations\n"), "%s", err);
    free(err);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}
