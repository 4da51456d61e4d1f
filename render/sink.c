/* Where frames go: numbered PNG files in a directory, or a GIF/MP4 written
 * by ffmpeg, spawned with its stdin as a pipe of raw RGB frames and its
 * stderr kept in a temporary file so that its complaint becomes our one-line
 * message. SIGPIPE is blocked in the writing thread only while it writes, so
 * a dying ffmpeg is an error status, not the death of the process. Every
 * file is written as jit/output_file.c writes: ffmpeg writes the temporary
 * that the sink made (its descriptor 3, reopened as /proc/self/fd/3), renamed
 * over the video only once ffmpeg succeeded. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jit.h"
#include "render.h"

struct render_sink {
    char error[RENDER_ERROR_SIZE];
    cs_status status;           /* of the first failure, kept with error */
    char *path;
    int width, height;
    int64_t frames;
    bool video;
    pid_t pid;                  /* ffmpeg, or 0 */
    int fd;                     /* its stdin, or -1 */
    FILE *log;                  /* its stderr */
    cs_output video_file;       /* what ffmpeg writes, until it is done */
};

static cs_status fail(render_sink *s, cs_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static cs_status fail(render_sink *s, cs_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->error, sizeof s->error, fmt, ap);
    va_end(ap);
    s->status = st;
    return st;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcasecmp(s + n - k, suffix) == 0;
}

bool render_sink_is_video(const char *path)
{
    return path && (ends_with(path, ".gif") || ends_with(path, ".mp4"));
}

/* ffmpeg's path from $PATH, into out; false when it is not there. */
static bool find_ffmpeg(char *out, size_t size)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        int n = snprintf(out, size, "%.*s/ffmpeg", (int)len, len ? path : ".");
        if (n > 0 && (size_t)n < size && access(out, X_OK) == 0)
            return true;
        path += len + (end ? 1 : 0);
    }
    return false;
}

static cs_status no_ffmpeg(const char *path, char *err, size_t err_size)
{
    return cs_say(err, err_size, CS_ERR_UNAVAILABLE,
                        "writing %s needs ffmpeg, which is not on PATH (Debian: sudo apt-get install ffmpeg); "
                        "--out DIR writes PNG frames instead",
                        path);
}

/* The directory exists (made when missing) and can take files. */
static cs_status ensure_dir(const char *path, char *err, size_t err_size)
{
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return cs_say(err, err_size, CS_ERR_IO, "cannot create directory %s: %s", path, strerror(errno));
    struct stat st;
    if (stat(path, &st) != 0)
        return cs_say(err, err_size, CS_ERR_IO, "cannot use directory %s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return cs_say(err, err_size, CS_ERR_IO, "%s exists and is not a directory", path);
    if (access(path, W_OK | X_OK) != 0)
        return cs_say(err, err_size, CS_ERR_IO, "cannot write into directory %s: %s", path,
                            strerror(errno));
    return CS_OK;
}

/* A directory that could be made: an existing one we may write into, or a
 * new name in one. Nothing is created (a refused command leaves no files). */
static cs_status check_dir(const char *path, char *err, size_t err_size)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return cs_say(err, err_size, CS_ERR_IO, "%s exists and is not a directory", path);
        if (access(path, W_OK | X_OK) != 0)
            return cs_say(err, err_size, CS_ERR_IO, "cannot write into directory %s: %s", path, strerror(errno));
        return CS_OK;
    }
    if (errno != ENOENT)
        return cs_say(err, err_size, CS_ERR_IO, "cannot use directory %s: %s", path, strerror(errno));
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    while (n > 0 && path[n - 1] != '/')
        n--;
    char parent[4096];
    snprintf(parent, sizeof parent, "%.*s", n ? (int)n : 1, n ? path : ".");
    if (access(parent, W_OK | X_OK) != 0)
        return cs_say(err, err_size, CS_ERR_IO, "cannot create directory %s: %s", path, strerror(errno));
    return CS_OK;
}

/* The extension of the path's last name, or "" (a name that starts with a
 * dot has none, nor a path that ends in '/'). */
static const char *extension(const char *path)
{
    size_t n = strlen(path);
    if (n && path[n - 1] == '/')
        return "";
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    const char *dot = strrchr(name, '.');
    return dot && dot > name ? dot : "";
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A path that names neither a video nor a directory: `render --out x.avi`
 * must not write a directory called x.avi. */
static cs_status unknown_format(const char *path, char *err, size_t err_size)
{
    return cs_say(err, err_size, CS_ERR_ARGUMENT,
                  "%s: unknown format '%s' (formats: a directory of PNG frames, named without an extension or "
                  "ending in '/'; FILE.gif; FILE.mp4)", path, extension(path));
}

cs_status render_make_dir(const char *path, char *err, size_t err_size)
{
    return ensure_dir(path, err, err_size);
}

cs_status render_sink_check(const char *path, char *err, size_t err_size)
{
    if (!path || !*path)
        return cs_say(err, err_size, CS_ERR_ARGUMENT, "no output path");
    if (!render_sink_is_video(path) && extension(path)[0] && !is_dir(path))
        return unknown_format(path, err, err_size);
    if (!render_sink_is_video(path))
        return check_dir(path, err, err_size);
    cs_status st = cs_output_check(path, err, err_size);
    if (st != CS_OK)
        return st;
    char exe[4096];
    if (!find_ffmpeg(exe, sizeof exe))
        return no_ffmpeg(path, err, err_size);
    return CS_OK;
}

const char *render_sink_error(const render_sink *s)
{
    return s ? s->error : "no sink";
}

int64_t render_sink_frames(const render_sink *s)
{
    return s ? s->frames : 0;
}

extern char **environ;

/* How ffmpeg names the temporary the sink made: its own descriptor 3, or,
 * where /proc is missing, the temporary's path. */
static cs_status ffmpeg_output_name(render_sink *s, char *out, size_t size)
{
    if (access("/proc/self/fd", X_OK) == 0) {
        snprintf(out, size, "file:/proc/self/fd/3");
        return CS_OK;
    }
    const char *slash = strrchr(s->path, '/');
    int dir_len = slash ? (int)(slash - s->path) + 1 : 0;
    if (snprintf(out, size, "file:%.*s%s", dir_len, s->path, s->video_file.temp) >= (int)size)
        return fail(s, CS_ERR_ARGUMENT, "the output path is too long");
    return CS_OK;
}

static cs_status spawn_ffmpeg(render_sink *s, int fps)
{
    char exe[4096];
    if (!find_ffmpeg(exe, sizeof exe))
        return no_ffmpeg(s->path, s->error, sizeof s->error);
    cs_status st = cs_output_begin(&s->video_file, s->path, 0666, s->error, sizeof s->error);
    if (st != CS_OK)
        return s->status = st;
    char size[32], rate[16], out[4200];
    snprintf(size, sizeof size, "%dx%d", s->width, s->height);
    snprintf(rate, sizeof rate, "%d", fps);
    if ((st = ffmpeg_output_name(s, out, sizeof out)) != CS_OK)
        return st;
    bool gif = ends_with(s->path, ".gif");
    const char *argv[] = {
        "ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", size,
        "-r", rate, "-i", "pipe:0",
        gif ? "-filter_complex" : "-vf",
        gif ? "split[a][b];[a]palettegen[p];[b][p]paletteuse" : "pad=ceil(iw/2)*2:ceil(ih/2)*2",
        gif ? "-loop" : "-pix_fmt", gif ? "0" : "yuv420p",
        "-f", gif ? "gif" : "mp4",   /* the temporary's name says nothing of the format */
        out, NULL,
    };
    int fds[2];
    /* Above 3, so that the dup2 below clears its close-on-exec flag. */
    int video_fd = fcntl(s->video_file.fd, F_DUPFD_CLOEXEC, 4);
    s->log = tmpfile();
    if (video_fd < 0 || !s->log || pipe2(fds, O_CLOEXEC) != 0) {
        if (video_fd >= 0)
            close(video_fd);
        return fail(s, CS_ERR_IO, "cannot start ffmpeg: %s", strerror(errno));
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fileno(s->log), 2);
    posix_spawn_file_actions_adddup2(&fa, video_fd, 3);
    int rc = posix_spawn(&s->pid, exe, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[0]);
    close(video_fd);
    if (rc != 0) {
        s->pid = 0;
        close(fds[1]);
        return fail(s, CS_ERR_IO, "cannot start %s: %s", exe, strerror(rc));
    }
    s->fd = fds[1];
    return CS_OK;
}

cs_status render_sink_open(const char *path, int width, int height, int fps, render_sink **out)
{
    render_sink *s = calloc(1, sizeof *s);
    *out = s;
    if (!s)
        return CS_ERR_NOMEM;
    s->fd = -1;
    s->video_file.dir = -1;
    if (!path || !*path)
        return fail(s, CS_ERR_ARGUMENT, "no output path");
    if (width <= 0 || height <= 0 || fps <= 0)
        return fail(s, CS_ERR_ARGUMENT, "frames of %dx%d at %d fps", width, height, fps);
    s->path = strdup(path);
    if (!s->path)
        return fail(s, CS_ERR_NOMEM, "out of memory");
    s->width = width;
    s->height = height;
    s->video = render_sink_is_video(path);
    if (s->video)
        return spawn_ffmpeg(s, fps);
    if (extension(path)[0] && !is_dir(path))
        return unknown_format(path, s->error, sizeof s->error);
    return ensure_dir(path, s->error, sizeof s->error);
}

/* All of buf into fd, with SIGPIPE held back (and swallowed) meanwhile. */
static int write_all(int fd, const uint8_t *buf, size_t len)
{
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    int err = 0;
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            err = errno;
            break;
        }
        buf += n;
        len -= (size_t)n;
    }
    if (err == EPIPE) {
        const struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return err;
}

cs_status render_sink_write(render_sink *s, const uint8_t *rgb)
{
    if (!s || !rgb)
        return CS_ERR_ARGUMENT;
    if (s->error[0])
        return CS_ERR_STATE;
    if (!s->video) {
        char name[4096];
        if (snprintf(name, sizeof name, "%s/%06lld.png", s->path, (long long)s->frames) >= (int)sizeof name)
            return fail(s, CS_ERR_ARGUMENT, "the output path is too long");
        cs_status st = render_png_write(name, rgb, s->width, s->height, s->error, sizeof s->error);
        if (st == CS_OK)
            s->frames++;
        else
            s->status = st;
        return st;
    }
    if (s->fd < 0)
        return fail(s, CS_ERR_STATE, "ffmpeg is not running");
    int err = write_all(s->fd, rgb, (size_t)s->width * (size_t)s->height * 3);
    if (err)
        return fail(s, CS_ERR_IO, "writing to ffmpeg: %s", strerror(err));
    s->frames++;
    return CS_OK;
}

/* The last non-empty line ffmpeg wrote on its stderr. */
static void last_log_line(FILE *log, char *out, size_t size)
{
    out[0] = 0;
    if (!log || fseek(log, 0, SEEK_SET) != 0)
        return;
    char line[1024];
    while (fgets(line, sizeof line, log)) {
        size_t n = strlen(line);
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
            line[--n] = 0;
        if (n > 0)
            snprintf(out, size, "%s", line);
    }
}

cs_status render_sink_close(render_sink *s, char *err, size_t err_size)
{
    if (!s)
        return CS_OK;
    cs_status st = s->error[0] ? (s->status != CS_OK ? s->status : CS_ERR_IO) : CS_OK;
    if (s->fd >= 0)
        close(s->fd);
    if (s->pid > 0) {
        int ws = 0;
        while (waitpid(s->pid, &ws, 0) < 0 && errno == EINTR)
            ;
        if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
            char said[1024];
            last_log_line(s->log, said, sizeof said);
            char how[64];
            if (WIFEXITED(ws))
                snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(ws));
            else
                snprintf(how, sizeof how, "signal %d", WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
            fail(s, CS_ERR_IO, "ffmpeg failed writing %s (%s)%s%s", s->path, how, said[0] ? ": " : "", said);
            st = CS_ERR_IO;
        }
    }
    /* The video replaces what was there only once ffmpeg has written all of it. */
    if (s->video_file.dir >= 0) {
        if (st == CS_OK)
            st = cs_output_commit(&s->video_file, s->error, sizeof s->error);
        else
            cs_output_abort(&s->video_file);
    }
    if (st != CS_OK)
        cs_say(err, err_size, st, "%s", s->error);
    if (s->log)
        fclose(s->log);
    free(s->path);
    free(s);
    return st;
}
