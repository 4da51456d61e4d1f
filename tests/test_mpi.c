/* `mpirun -n K build/cartsim ...`: the program split over K processes gives
 * what one process gives (the checksum, trained weights, evaluations), for
 * even and uneven splits; bad input is reported once with exit status 2; a
 * lost rank ends the job instead of hanging it. Skipped, loudly, where
 * mpirun is missing (`make test` installs Open MPI). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cartsim.h"
#include "cli_test.h"

typedef struct {
    int status;
    char out[16384];
    char err[16384];
} mpi_result;

static bool have_mpirun(void)
{
    return system("command -v mpirun >/dev/null 2>&1") == 0;
}

/* Runs `[mpirun -n K] cartsim ARGS` through the shell with a time limit;
 * k = 0 runs the program alone. */
static void run_k(int k, const char *args, mpi_result *r)
{
    char errfile[] = "/tmp/cartsim-mpi-test-XXXXXX";
    int fd = mkstemp(errfile);
    cr_assert(fd >= 0);
    close(fd);
    char launcher[256] = "";
    /* Under `make asan`, Open MPI's plugins (dlclosed at exit) leave
     * allocations LeakSanitizer cannot attribute: leaks are checked by the
     * single-process runs, not under mpirun. */
    if (k > 0)
        snprintf(launcher, sizeof launcher, "env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "
                 "mpirun --quiet --oversubscribe %s -n %d ", geteuid() == 0 ? "--allow-run-as-root" : "", k);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "timeout -s KILL 120 %s%s %s 2>%s", launcher, cli_test_bin(), args, errfile);
    FILE *p = popen(cmd, "r");
    cr_assert(p, "cannot run %s", cmd);
    size_t n = fread(r->out, 1, sizeof r->out - 1, p);
    r->out[n] = 0;
    int st = pclose(p);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    FILE *e = fopen(errfile, "r");
    n = e ? fread(r->err, 1, sizeof r->err - 1, e) : 0;
    r->err[n] = 0;
    if (e)
        fclose(e);
    unlink(errfile);
}

static const char *json_value(const char *json, const char *key, char *out, size_t size)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(json, pat);
    cr_assert(p, "no %s in %s", key, json);
    p += strlen(pat);
    size_t n = strcspn(p, ",\n");
    snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), p);
    return out;
}

#define NEED_MPIRUN()                                                                                              \
    do {                                                                                                           \
        if (!have_mpirun()) {                                                                                      \
            fprintf(stderr, "mpi: SKIPPED: no mpirun (sudo apt-get install openmpi-bin libopenmpi-dev)\n");       \
            cr_skip_test("no mpirun");                                                                             \
        }                                                                                                          \
    } while (0)

Test(mpi, run_checksum_is_the_single_process_one, .timeout = 300)
{
    NEED_MPIRUN();
    const char *args = "--envs 1001 --steps 2000 --dtype f64 --json";   /* 1001 = 501 + 500 = 334 + 334 + 333 */
    mpi_result one, k;
    char c1[64], ck[64], e1[64], ek[64], n[64];
    run_k(0, args, &one);
    cr_assert_eq(one.status, 0, "%s", one.err);
    for (int ranks = 2; ranks <= 3; ranks++) {
        run_k(ranks, args, &k);
        cr_assert_eq(k.status, 0, "%d ranks: %s", ranks, k.err);
        cr_expect_str_eq(json_value(k.out, "checksum", ck, sizeof ck), json_value(one.out, "checksum", c1, sizeof c1),
                         "%d ranks", ranks);
        cr_expect_str_eq(json_value(k.out, "episodes", ek, sizeof ek), json_value(one.out, "episodes", e1, sizeof e1));
        cr_expect_str_eq(json_value(k.out, "num_envs", n, sizeof n), "1001");
        char r[16];
        snprintf(r, sizeof r, "%d", ranks);
        cr_expect_str_eq(json_value(k.out, "ranks", n, sizeof n), r);
    }
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s", path);
    static char buf[3][65536];
    static int which;
    char *b = buf[which++ % 3];
    size_t n = fread(b, 1, sizeof buf[0] - 1, f);
    b[n] = 0;
    fclose(f);
    return b;
}

Test(mpi, es_trains_the_same_policy_for_1_2_3_ranks, .timeout = 300)
{
    NEED_MPIRUN();
    char args[1024], dir[] = "/tmp/cartsim-mpi-train-XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[3][128];
    for (int ranks = 1; ranks <= 3; ranks++) {
        snprintf(path[ranks - 1], sizeof path[0], "%s/k%d.pol", dir, ranks);
        snprintf(args, sizeof args, "train --algo es --pop 32 --generations 4 --target 1e9 --seed 9 --out %s",
                 path[ranks - 1]);
        mpi_result r;
        run_k(ranks == 1 ? 0 : ranks, args, &r);
        cr_assert_eq(r.status, 0, "%d ranks: %s", ranks, r.err);
        if (ranks > 1)
            cr_expect(strstr(r.out, "bytes gathered"), "%s", r.out);
    }
    const char *p1 = read_file(path[0]);
    cr_expect_str_eq(read_file(path[1]), p1, "2 ranks trained another policy");
    cr_expect_str_eq(read_file(path[2]), p1, "3 ranks trained another policy");
    for (int i = 0; i < 3; i++)
        unlink(path[i]);
    rmdir(dir);
}

Test(mpi, eval_splits_its_episodes, .timeout = 300)
{
    NEED_MPIRUN();
    mpi_result one, three;
    char a[64], b[64];
    run_k(0, "eval --episodes 50 --seed 4 --json", &one);
    run_k(3, "eval --episodes 50 --seed 4 --json", &three);
    cr_assert_eq(one.status, 0, "%s", one.err);
    cr_assert_eq(three.status, 0, "%s", three.err);
    cr_expect_str_eq(json_value(three.out, "mean_return", a, sizeof a), json_value(one.out, "mean_return", b, sizeof b));
    cr_expect_str_eq(json_value(three.out, "std_return", a, sizeof a), json_value(one.out, "std_return", b, sizeof b));
}

static int count_lines(const char *s, const char *prefix)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, prefix)); p++)
        n += p == s || p[-1] == '\n';
    return n;
}

Test(mpi, bad_input_on_every_rank_is_said_once, .timeout = 300)
{
    NEED_MPIRUN();
    const char *bad[] = {"--envs -3", "--env nosuch", "--envs 2 --steps 5", "dump", "train --pop 1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mpi_result r;
        run_k(3, bad[i], &r);
        cr_expect_eq(r.status, 2, "%s: status %d, %s", bad[i], r.status, r.err);
        cr_expect_eq(count_lines(r.err, "cartsim: "), 1, "%s said %d times: %s", bad[i],
                     count_lines(r.err, "cartsim: "), r.err);
        cr_expect_eq(r.out[0], 0, "%s printed: %s", bad[i], r.out);
    }
}

Test(mpi, a_lost_rank_ends_the_job, .timeout = 300)
{
    NEED_MPIRUN();
    /* Rank 1 dies at once; rank 0 alone would run for hours. */
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "timeout -k 10 100 mpirun --quiet --oversubscribe %s -n 2 sh -c "
             "'[ \"$OMPI_COMM_WORLD_RANK\" = 1 ] && kill -9 $$; exec %s --envs 1000 --steps 1000000000' "
             ">/dev/null 2>&1",
             geteuid() == 0 ? "--allow-run-as-root" : "", cli_test_bin());
    int st = system(cmd);
    cr_assert(WIFEXITED(st), "the job did not end by itself");
    cr_expect_neq(WEXITSTATUS(st), 0);
    cr_expect_neq(WEXITSTATUS(st), 124, "the job hung until the time limit stopped it");
}

/* ---- ranks started with different arguments (issue 32, 3) ---------------- */

/* `mpirun -n 1 cartsim A : -n 1 cartsim B`: two ranks given different
 * arguments, with the same time limit as run_k (a hang is a failure). */
static void run_two(const char *a, const char *b, mpi_result *r)
{
    char args[4096];
    snprintf(args, sizeof args, "%s : -n 1 %s %s", a, cli_test_bin(), b);
    run_k(1, args, r);
}

/* Each of these once crashed (a heap overflow in MPI_Allgatherv), hung, or
 * exited 0 with a meaningless result. Now: exit 2, one line, naming the
 * setting and each rank's value, and nothing on stdout. */
Test(mpi, ranks_given_different_arguments_stop_with_one_line, .timeout = 600)
{
    NEED_MPIRUN();
    char dir[] = "/tmp/cartsim-mpi-args-XXXXXX", pol[2][320];
    cr_assert(mkdtemp(dir));
    /* two policy files of one name in two directories, different weights */
    for (int k = 0; k < 2; k++) {
        char sub[300];
        snprintf(sub, sizeof sub, "%s/%d", dir, k);
        cr_assert_eq(mkdir(sub, 0700), 0);
        snprintf(pol[k], sizeof pol[k], "%s/p.pol", sub);
        double w[10] = {k ? 0.5 : -0.5, 1, 2, 3, 4, 5, 6, 7, 8, 9};
        char err[256];
        cr_assert_eq(cs_policy_save(pol[k], "cartpole", "linear", 10, w, err, sizeof err), CS_OK, "%s", err);
    }
    const struct {
        const char *a, *b, *named;
    } cases[] = {
        {"train --pop 8 --generations 2", "train --pop 16 --generations 2", "--pop is '8' on rank 0; '16' on rank 1"},
        {"eval --episodes 10", "eval --episodes 20", "--episodes"},
        {"train --env cartpole --generations 2", "train --env pendulum --generations 2", "--env"},
        {"train --generations 2", "train --generations 3", "--generations"},
        {"--help", "", "--help"},
        {"train --print-config", "train", "--print-config"},
        {"--steps 10", "--steps 20", "--steps"},
        {"--envs 10 --steps 10", "--envs 20 --steps 10", "--envs"},
        {"--seed 1 --steps 10", "--seed 2 --steps 10", "--seed"},
        {"--dtype f64 --steps 10", "--steps 10", "--dtype"},
        {"--backend interp --steps 10", "--backend cpu --steps 10", "--backend"},
        {"train --agent mlp --generations 2", "train --generations 2", "--agent"},
        {"run --steps 10", "eval --episodes 10", "the command is 'run' on rank 0; 'eval' on rank 1"},
        {"--param length=0.6 --steps 10", "--steps 10", "--param"},
        {"--steps 10 --policy", "--steps 10 --policy", "--policy"},   /* the files follow: same name, other weights */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char a[1024], b[1024];
        bool files = strstr(cases[k].named, "--policy") != NULL;
        snprintf(a, sizeof a, "%s%s%s", cases[k].a, files ? " " : "", files ? pol[0] : "");
        snprintf(b, sizeof b, "%s%s%s", cases[k].b, files ? " " : "", files ? pol[1] : "");
        mpi_result r;
        run_two(a, b, &r);
        cr_expect_eq(r.status, 2, "'%s' against '%s': status %d (-1: killed after 120 s), %s", a, b, r.status, r.err);
        cr_expect_eq(count_lines(r.err, "cartsim: "), 1, "'%s' against '%s': %s", a, b, r.err);
        cr_expect(strstr(r.err, "the ranks were started with different settings") && strstr(r.err, cases[k].named),
                  "'%s' against '%s': %s", a, b, r.err);
        cr_expect_eq(r.out[0], 0, "'%s' against '%s' printed: %s", a, b, r.out);
    }
    /* what may differ: threads (how, never what), and a file's name when
     * its contents are the same */
    char copy[800];
    snprintf(copy, sizeof copy, "cp %s %s/copy.pol", pol[0], dir);
    cr_assert_eq(system(copy), 0);
    char a[1024], b[1024];
    snprintf(a, sizeof a, "--steps 10 --envs 8 --threads 1 --policy %s --json", pol[0]);
    snprintf(b, sizeof b, "--steps 10 --envs 8 --threads 2 --policy %s/copy.pol --json", dir);
    mpi_result r;
    run_two(a, b, &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    snprintf(copy, sizeof copy, "rm -rf %s", dir);
    cr_assert_eq(system(copy), 0);
}

/* Ranks on one node share its cores: each defaults to its share of them
 * (at least one), not to all of them; --threads still decides. */
Test(mpi, ranks_on_a_node_default_to_their_share_of_its_cores, .timeout = 300)
{
    NEED_MPIRUN();
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    mpi_result r;
    char threads[64], want[32];
    for (int ranks = 2; ranks <= 3; ranks++) {
        run_k(ranks, "--envs 64 --steps 10 --json", &r);
        cr_assert_eq(r.status, 0, "%d ranks: %s", ranks, r.err);
        snprintf(want, sizeof want, "%ld", cores / ranks > 1 ? cores / ranks : 1);
        cr_expect_str_eq(json_value(r.out, "threads", threads, sizeof threads), want, "%d ranks on %ld cores", ranks,
                         cores);
    }
    run_k(2, "--envs 64 --steps 10 --threads 3 --json", &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(json_value(r.out, "threads", threads, sizeof threads), "3");
}
