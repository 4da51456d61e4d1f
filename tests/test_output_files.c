/* Output files (issue 32, 1 and 2; docs/hardening.md, "Output files"): every
 * file cartsim writes goes through jit/output_file.c. A destination that is
 * not a regular file is refused and left as it is; the temporary is made
 * exclusively under a fresh name, so nothing already in the directory (a FIFO,
 * a symbolic link) is followed or waited on; a failed write leaves the old
 * file and no temporary; the program checks its destination before the long
 * work (train before the first generation, render before the first frame).
 *
 * Environment: CARTSIM_BIN (the program), as for tests/test_cli.c. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "cartsim.h"
#include "cli_test.h"
#include "jit.h"

static char root[256];

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/cartsim-outputs-XXXXXX");
    cli_test_scratch(root);
}

static void teardown(void)
{
    if (root[0])
        cli_test_remove_tree(root);
    root[0] = 0;
}

TestSuite(output_files, .init = setup, .fini = teardown);

static void in_root(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", root, name);
}

static void write_text(const char *path, const char *text)
{
    cli_test_write_file(path, text, strlen(text));
}

static char *slurp(const char *path)
{
    static char buf[4][65536];
    static int which;
    char *b = buf[which++ % 4];
    b[0] = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return b;
    size_t n = fread(b, 1, sizeof buf[0] - 1, f);
    b[n] = 0;
    fclose(f);
    return b;
}

/* The names in root, sorted, space-separated. */
static const char *listing(void)
{
    static char out[4096];
    struct dirent **names;
    int n = scandir(root, &names, NULL, alphasort);
    cr_assert_geq(n, 0);
    out[0] = 0;
    for (int k = 0; k < n; k++) {
        if (strcmp(names[k]->d_name, ".") && strcmp(names[k]->d_name, ".."))
            snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", out[0] ? " " : "", names[k]->d_name);
        free(names[k]);
    }
    free(names);
    return out;
}

static mode_t type_of(const char *path)
{
    struct stat st;
    cr_assert_eq(lstat(path, &st), 0, "%s is gone", path);
    return st.st_mode & S_IFMT;
}

static const double weights[10] = {0.5, -0.25, 1, 2, 3, 4, 5, 6, 7, 8};

/* A socket bound at path (a file of its own type). */
static int bind_socket(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    cr_assert_lt(strlen(path), sizeof a.sun_path);
    memcpy(a.sun_path, path, strlen(path) + 1);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0, "%s", strerror(errno));
    return fd;
}

Test(output_files, a_destination_that_is_not_a_regular_file_is_refused_and_kept, .timeout = 60)
{
    char fifo[512], dir[512], link[512], victim[512], sock[512], device[512], dangling[512];
    in_root(fifo, sizeof fifo, "fifo.pol");
    in_root(dir, sizeof dir, "dir.pol");
    in_root(link, sizeof link, "link.pol");
    in_root(victim, sizeof victim, "victim");
    in_root(sock, sizeof sock, "sock.pol");
    in_root(device, sizeof device, "null.pol");
    in_root(dangling, sizeof dangling, "dangling.pol");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(mkdir(dir, 0700), 0);
    write_text(victim, "precious\n");
    cr_assert_eq(symlink(victim, link), 0);
    cr_assert_eq(symlink("nowhere", dangling), 0);
    int s = bind_socket(sock);
    /* As root, a character device like /dev/null (never the real one). */
    bool have_device = mknod(device, S_IFCHR | 0600, makedev(1, 3)) == 0;
    const struct {
        const char *path, *kind;
        mode_t type;
    } cases[] = {
        {fifo, "a FIFO", S_IFIFO},          {dir, "a directory", S_IFDIR},   {link, "a symbolic link", S_IFLNK},
        {sock, "a socket", S_IFSOCK},       {dangling, "a symbolic link", S_IFLNK},
        {device, "a device", S_IFCHR},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        if (cases[k].type == S_IFCHR && !have_device)
            continue;
        char err[512];
        cs_status st = cs_policy_save(cases[k].path, "cartpole", "linear", 10, weights, err, sizeof err);
        cr_expect_eq(st, CS_ERR_ARGUMENT, "%s: %s", cases[k].path, cs_status_string(st));
        cr_expect(strstr(err, cases[k].kind) && strstr(err, cases[k].path), "%s", err);
        cr_expect_eq(type_of(cases[k].path), cases[k].type, "%s was replaced", cases[k].path);
        /* and the same answer before any work */
        cr_expect_eq(cs_output_check(cases[k].path, err, sizeof err), CS_ERR_ARGUMENT, "%s", cases[k].path);
    }
    cr_expect_str_eq(slurp(victim), "precious\n");
    close(s);
    /* nothing else appeared: no temporary was left */
    cr_expect_str_eq(listing(), have_device ? "dangling.pol dir.pol fifo.pol link.pol null.pol sock.pol victim"
                                            : "dangling.pol dir.pol fifo.pol link.pol sock.pol victim");
}

/* The old scheme wrote PATH.tmp: a FIFO there hung it forever, a symbolic
 * link there made it overwrite the link's target and leave PATH a link. */
Test(output_files, what_lies_in_the_directory_is_neither_followed_nor_waited_on, .timeout = 60)
{
    char path[512], tmp_fifo[512], other[512], tmp_link[512], victim[512];
    in_root(path, sizeof path, "a.pol");
    in_root(tmp_fifo, sizeof tmp_fifo, "a.pol.tmp");
    in_root(other, sizeof other, "b.pol");
    in_root(tmp_link, sizeof tmp_link, "b.pol.tmp");
    in_root(victim, sizeof victim, "victim");
    cr_assert_eq(mkfifo(tmp_fifo, 0600), 0);
    write_text(victim, "precious\n");
    cr_assert_eq(symlink(victim, tmp_link), 0);
    char err[512];
    cr_assert_eq(cs_policy_save(path, "cartpole", "linear", 10, weights, err, sizeof err), CS_OK, "%s", err);
    cr_assert_eq(cs_policy_save(other, "cartpole", "linear", 10, weights, err, sizeof err), CS_OK, "%s", err);
    cr_expect_eq(type_of(path), S_IFREG);
    cr_expect_eq(type_of(other), S_IFREG);
    cr_expect_eq(type_of(tmp_fifo), S_IFIFO);
    cr_expect_eq(type_of(tmp_link), S_IFLNK);
    cr_expect_str_eq(slurp(victim), "precious\n");
    cs_policy_file f;
    cr_assert_eq(cs_policy_load(other, &f, err, sizeof err), CS_OK, "%s", err);
    cr_expect_eq(f.n_weights, 10u);
    cs_policy_file_free(&f);
    cr_expect_str_eq(listing(), "a.pol a.pol.tmp b.pol b.pol.tmp victim");
}

/* A file replaced is replaced whole, keeping its permissions; a write that
 * fails (here the file size limit, as a full disk would) leaves the old file
 * as it was and no temporary. */
Test(output_files, a_failed_write_leaves_the_old_file_and_no_temporary)
{
    char path[512], err[512];
    in_root(path, sizeof path, "p.pol");
    write_text(path, "old\n");
    cr_assert_eq(chmod(path, 0640), 0);
    cr_assert_eq(cs_policy_save(path, "cartpole", "linear", 10, weights, err, sizeof err), CS_OK, "%s", err);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0640, "mode %o", st.st_mode & 0777);
    char *saved = strdup(slurp(path));
    cr_assert(strstr(saved, "cartsim-policy 1"), "%s", saved);

    double many[226] = {0};   /* mlp:32 for CartPole: about 500 bytes */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, small = {64, 64};
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    small.rlim_max = old.rlim_max;
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
    cs_status s = cs_policy_save(path, "cartpole", "mlp:32", 226, many, err, sizeof err);
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
    cr_expect_eq(s, CS_ERR_IO, "%s", cs_status_string(s));
    cr_expect(strstr(err, "File too large") && strstr(err, path), "%s", err);
    cr_expect_str_eq(slurp(path), saved, "the old file changed");
    cr_expect_str_eq(listing(), "p.pol");
    free(saved);
}

/* ---- the program checks before the work ---------------------------------- */

static void run(const char *const *args, cli_result *r)
{
    cli_test_run(args, 120, r);
    cr_assert(!r->timed_out, "cartsim %s %s timed out", args[0], args[1]);
}

static void assert_refused(cli_result *r, const char *what)
{
    char msg[2048];
    snprintf(msg, sizeof msg, "status %d, stdout '%s', stderr '%s'", r->status, r->out, r->err);
    bool one_line = strchr(r->err, '\n') == r->err + r->err_len - 1 && strncmp(r->err, "cartsim: ", 9) == 0;
    bool ok = r->status == 2 && one_line && strstr(r->err, what) && r->out_len == 0;
    cli_result_free(r);
    cr_assert(ok, "%s", msg);
}

/* The refusal comes before the first generation: nothing on stdout, and
 * quickly (a million generations would take hours). */
Test(output_files, train_checks_its_output_before_training, .timeout = 120)
{
    char fifo[512], missing[512], dir[512], ini[512], victim[512], link[512];
    in_root(fifo, sizeof fifo, "policy.fifo");
    in_root(missing, sizeof missing, "no/such/dir/p.pol");
    in_root(dir, sizeof dir, "adir");
    in_root(ini, sizeof ini, "train.ini");
    in_root(victim, sizeof victim, "victim");
    in_root(link, sizeof link, "link.pol");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(mkdir(dir, 0700), 0);
    write_text(victim, "precious\n");
    cr_assert_eq(symlink(victim, link), 0);
    const char *targets[][2] = {{fifo, "a FIFO"}, {missing, "No such file"}, {dir, "a directory"},
                                {link, "a symbolic link"}};
    cli_result r;
    for (int k = 0; k < 4; k++) {
        run((const char *[]){"train", "--generations", "1000000", "--backend", "interp", "--out", targets[k][0], NULL},
            &r);
        assert_refused(&r, targets[k][1]);
    }
    /* the same from a configuration file's [train] out */
    char text[1024];
    snprintf(text, sizeof text, "[train]\nout = %s\ngenerations = 1000000\n", fifo);
    write_text(ini, text);
    run((const char *[]){"train", "--backend", "interp", "--config", ini, NULL}, &r);
    assert_refused(&r, "a FIFO");
    cr_expect_eq(type_of(fifo), S_IFIFO);
    cr_expect_eq(type_of(link), S_IFLNK);
    cr_expect_str_eq(slurp(victim), "precious\n");
}

Test(output_files, render_checks_its_output_before_the_first_frame, .timeout = 120)
{
    char fifo[512], link[512], victim[512], frames[512], frame[600];
    in_root(fifo, sizeof fifo, "movie.gif");
    in_root(link, sizeof link, "movie.mp4");
    in_root(victim, sizeof victim, "victim");
    in_root(frames, sizeof frames, "frames");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    write_text(victim, "precious\n");
    cr_assert_eq(symlink(victim, link), 0);
    cli_result r;
    /* whether or not ffmpeg is installed */
    run((const char *[]){"render", "--steps", "1000000", "--backend", "interp", "--out", fifo, NULL}, &r);
    assert_refused(&r, "a FIFO");
    run((const char *[]){"render", "--steps", "1000000", "--backend", "interp", "--out", link, NULL}, &r);
    assert_refused(&r, "a symbolic link");
    /* a frame's name taken by a FIFO: refused at that frame, never waited on */
    cr_assert_eq(mkdir(frames, 0700), 0);
    snprintf(frame, sizeof frame, "%s/000002.png", frames);
    cr_assert_eq(mkfifo(frame, 0600), 0);
    run((const char *[]){"render", "--steps", "5", "--backend", "interp", "--out", frames, NULL}, &r);
    assert_refused(&r, "000002.png: it is a FIFO");
    cr_expect_eq(type_of(frame), S_IFIFO);
    cr_expect_str_eq(slurp(victim), "precious\n");
}
