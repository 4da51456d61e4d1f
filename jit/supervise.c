/* A command (the C compiler) run under a supervisor process that ends the
 * whole tree of processes it makes, whatever becomes of the program.
 *
 *   program ──pipe──▶ supervisor (a subreaper, a process group of its own)
 *                        └─▶ command (a process group of its own) ─▶ its children ...
 *
 * The supervisor waits for the command, or for a byte or end of file on the
 * pipe: a stop from the program, or the program's death (its end of the pipe
 * closes even on SIGKILL, where a parent-death signal reached only the
 * command, not the children of a compiler that hangs). Then it ends the tree:
 * SIGTERM to the command's group (gcc's driver then removes its temporary
 * files), SIGKILL a second later, and SIGKILL to every process left below
 * it: as a subreaper it becomes the parent of each orphan, so a grandchild
 * that left the group (setsid) is found among its children once its parent
 * is gone. It exits as the command did, with its exit status or by its
 * signal. After a fork in a program with threads only async-signal-safe
 * calls are allowed: the supervisor makes only system calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jit.h"

#define STOP_GRACE_MS 1000   /* between SIGTERM and SIGKILL */
#define STOPPED_EXIT 125     /* the supervisor's status after a stop (the program ignores it) */

static void nap_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

/* "/proc/self/task/<pid>/children" without stdio (not async-signal-safe). */
static void children_path(char out[64])
{
    static const char head[] = "/proc/self/task/", tail[] = "/children";
    char digits[24];
    int n = 0;
    for (long pid = (long)getpid(); pid > 0 || n == 0; pid /= 10)
        digits[n++] = (char)('0' + pid % 10);
    size_t at = 0;
    memcpy(out, head, sizeof head - 1);
    at = sizeof head - 1;
    while (n > 0)
        out[at++] = digits[--n];
    memcpy(out + at, tail, sizeof tail);
}

/* SIGKILL to every child, as many rounds as it takes: each killed child's
 * own children become this subreaper's. */
static void kill_descendants(void)
{
    char path[64];
    children_path(path);
    for (int round = 0; round < 200; round++) {
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return;   /* no /proc: the command's group was all there was to end */
        char buf[4096];
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            return;
        long pid = 0;
        for (ssize_t k = 0; k <= n; k++) {
            if (k < n && buf[k] >= '0' && buf[k] <= '9') {
                pid = pid * 10 + (buf[k] - '0');
            } else if (pid > 0) {
                kill((pid_t)pid, SIGKILL);
                pid = 0;
            }
        }
        nap_ms(10);
    }
}

/* The supervisor's life; never returns. */
static void supervise(int stop_fd, const char *path, char *const argv[], char *const envp[], const char *err_path)
{
    /* Nothing of the program's stays open here: another supervisor holding
     * this one's pipe would keep its end of file from coming. */
    if (stop_fd > 3)
        close_range(3, (unsigned)stop_fd - 1, 0);
    close_range((unsigned)stop_fd + 1, ~0u, 0);
    setpgid(0, 0);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    pid_t command = fork();
    if (command == 0) {
        setpgid(0, 0);
        /* If the supervisor itself is killed, the command goes with it. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(stop_fd);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);   /* not the program's thread's mask */
        int out = open("/dev/null", O_WRONLY | O_CLOEXEC);
        int errfd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (out < 0 || errfd < 0 || dup2(out, 1) < 0 || dup2(errfd, 2) < 0)
            _exit(127);
        execve(path, argv, envp);
        _exit(127);
    }
    if (command < 0)
        _exit(127);
    setpgid(command, command);   /* also here: the kill below must not race the child's own call */
    int status = 0;
    bool done = false;
    for (;;) {
        pid_t got = waitpid(command, &status, WNOHANG);
        if (got == command) {
            done = true;
            break;
        }
        struct pollfd p = {.fd = stop_fd, .events = POLLIN};
        if (poll(&p, 1, 20) > 0)
            break;   /* a stop, or the program is gone */
    }
    if (!done) {
        kill(-command, SIGTERM);
        for (int waited = 0; waited < STOP_GRACE_MS && waitpid(command, &status, WNOHANG) != command; waited += 10)
            nap_ms(10);
    }
    kill(-command, SIGKILL);   /* what is left of its group ... */
    kill_descendants();         /* ... and what left the group */
    if (!done)
        _exit(STOPPED_EXIT);
    if (WIFSIGNALED(status)) {
        signal(WTERMSIG(status), SIG_DFL);
        kill(getpid(), WTERMSIG(status));
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

int cs_supervised_start(cs_supervised *s, const char *path, char *const argv[], char *const envp[],
                        const char *err_path, char *err, size_t err_size)
{
    int fds[2];
    s->pid = -1;
    s->stop_fd = -1;
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(err, err_size, "cannot run '%s': %s", path, strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[1]);
        supervise(fds[0], path, argv, envp, err_path);
    }
    int e = errno;
    close(fds[0]);
    if (pid < 0) {
        close(fds[1]);
        snprintf(err, err_size, "cannot run '%s': %s", path, strerror(e));
        return -1;
    }
    setpgid(pid, pid);
    s->pid = pid;
    s->stop_fd = fds[1];
    return 0;
}

int cs_supervised_poll(cs_supervised *s, int *status)
{
    pid_t got = waitpid(s->pid, status, WNOHANG);
    if (got == s->pid) {
        close(s->stop_fd);
        s->stop_fd = -1;
        s->pid = -1;
        return 1;
    }
    return got == 0 || errno == EINTR ? 0 : -1;
}

void cs_supervised_stop(cs_supervised *s)
{
    if (s->pid <= 0)
        return;
    close(s->stop_fd);   /* end of file: stop */
    s->stop_fd = -1;
    while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    s->pid = -1;
}
