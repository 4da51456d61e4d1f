/* Writing a file: the one way every writer of cartsim does it (policy files,
 * frames and videos, the kernel cache's entries, kernel sources).
 *
 * A destination that exists must be a regular file: anything else (a device,
 * FIFO, socket, directory or symbolic link) is refused, since renaming over
 * it would replace it (as root, /dev/null) and writing into it could block
 * or write elsewhere. The bytes go to a temporary created exclusively
 * (O_CREAT | O_EXCL, which never follows a link) under a fresh random name in
 * the destination's directory, ".NAME.XXXXXXXXXXXX.tmp", and are renamed over
 * the destination only once written and closed without error: a reader sees
 * the old file or the whole new one, and a failure leaves the old one and no
 * temporary. Everything after the directory is opened is relative to its
 * descriptor, so a directory renamed meanwhile changes nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jit.h"

#define TEMP_NAME_KEEP 200   /* of the destination's name in the temporary's: NAME_MAX is 255 */

static cs_status say(char *err, size_t err_size, cs_status st, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static cs_status say(char *err, size_t err_size, cs_status st, const char *fmt, ...)
{
    if (err && err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_size, fmt, ap);
        va_end(ap);
    }
    return st;
}

const char *cs_file_kind(unsigned mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    if (S_ISLNK(mode))
        return "a symbolic link";
    return "not a regular file";
}

/* What the user named wrongly is bad input; the rest is the system's. */
static cs_status status_of(int e)
{
    return e == ENOENT ? CS_ERR_NOT_FOUND
           : e == EACCES || e == EPERM || e == ELOOP || e == ENOTDIR || e == EISDIR || e == ENAMETOOLONG || e == EROFS
               ? CS_ERR_ARGUMENT
           : e == ENOMEM ? CS_ERR_NOMEM
                         : CS_ERR_IO;
}

static cs_status refuse_errno(const char *path, int e, char *err, size_t err_size)
{
    return say(err, err_size, status_of(e), "cannot write %s: %s", path,
                  e == ELOOP ? "too many levels of symbolic links" : strerror(e));
}

/* The destination `name` in dir: absent, or a regular file (its mode in
 * *mode, else 0). */
static cs_status check_at(int dir, const char *name, const char *path, unsigned *mode, char *err, size_t err_size)
{
    *mode = 0;
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? CS_OK : refuse_errno(path, errno, err, err_size);
    if (!S_ISREG(st.st_mode)) {
        const char *kind = cs_file_kind(st.st_mode);
        return say(err, err_size, CS_ERR_ARGUMENT, "cannot write %s: it is %s%s, which cartsim does not replace",
                      path, kind, strcmp(kind, "not a regular file") ? ", not a regular file" : "");
    }
    *mode = st.st_mode & 07777;
    return CS_OK;
}

/* Splits path into its directory (opened into *dir) and last component. */
static cs_status open_parent(const char *path, int *dir, char *name, size_t name_size, char *err, size_t err_size)
{
    *dir = -1;
    size_t n = strlen(path);
    if (n == 0)
        return say(err, err_size, CS_ERR_ARGUMENT, "no file name to write");
    if (n >= 4096)
        return refuse_errno(path, ENAMETOOLONG, err, err_size);
    if (path[n - 1] == '/')
        return say(err, err_size, CS_ERR_ARGUMENT, "cannot write %s: it names a directory, not a file", path);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return say(err, err_size, CS_ERR_ARGUMENT, "cannot write %s: it names a directory, not a file", path);
    if (strlen(base) >= name_size)
        return refuse_errno(path, ENAMETOOLONG, err, err_size);
    snprintf(name, name_size, "%s", base);
    char parent[4096];
    if (!slash)
        snprintf(parent, sizeof parent, ".");
    else if (slash == path)
        snprintf(parent, sizeof parent, "/");
    else
        snprintf(parent, sizeof parent, "%.*s", (int)(slash - path), path);
    *dir = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (*dir < 0)
        return refuse_errno(path, errno, err, err_size);
    return CS_OK;
}

cs_status cs_output_check(const char *path, char *err, size_t err_size)
{
    if (err && err_size)
        err[0] = 0;
    if (!path)
        return say(err, err_size, CS_ERR_ARGUMENT, "no file name to write");
    int dir;
    char name[256];
    cs_status st = open_parent(path, &dir, name, sizeof name, err, err_size);
    unsigned mode;
    if (st == CS_OK)
        st = check_at(dir, name, path, &mode, err, err_size);
    /* A temporary must be creatable beside it (as root too: a read-only file system). */
    if (st == CS_OK && faccessat(dir, ".", W_OK | X_OK, AT_EACCESS) != 0)
        st = refuse_errno(path, errno, err, err_size);
    if (dir >= 0)
        close(dir);
    return st;
}

static void random_suffix(char out[13])
{
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    unsigned char bytes[12];
    if (getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != (ssize_t)sizeof bytes) {
        /* Early boot: unique enough with O_EXCL retrying. */
        cs_hash128 h = {(uint64_t)getpid(), (uint64_t)(uintptr_t)out};
        double now = cs_now_ms();
        h = cs_hash_bytes(&now, sizeof now, h);
        memcpy(bytes, &h, sizeof bytes);
    }
    for (int i = 0; i < 12; i++)
        out[i] = digits[bytes[i] % 36];
    out[12] = 0;
}

cs_status cs_output_begin_at(cs_output *o, int dir, const char *name, const char *path, unsigned mode, char *err,
                             size_t err_size)
{
    if (err && err_size)
        err[0] = 0;
    o->fd = -1;
    o->dir = -1;
    o->stream = NULL;
    o->error = 0;
    if (snprintf(o->name, sizeof o->name, "%s", name) >= (int)sizeof o->name)
        return refuse_errno(path, ENAMETOOLONG, err, err_size);
    snprintf(o->path, sizeof o->path, "%s", path);
    unsigned existing;
    cs_status st = check_at(dir, name, path, &existing, err, err_size);
    if (st != CS_OK)
        return st;
    if ((o->dir = fcntl(dir, F_DUPFD_CLOEXEC, 0)) < 0)
        return refuse_errno(path, errno, err, err_size);
    for (int attempt = 0; attempt < 100; attempt++) {
        char suffix[13];
        random_suffix(suffix);
        snprintf(o->temp, sizeof o->temp, ".%.*s.%s.tmp", TEMP_NAME_KEEP, name, suffix);
        o->fd = openat(o->dir, o->temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (o->fd >= 0 || errno != EEXIST)
            break;
    }
    if (o->fd < 0) {
        st = refuse_errno(path, errno, err, err_size);
        close(o->dir);
        o->dir = -1;
        return st;
    }
    /* A file replaced keeps its permissions. */
    if (existing)
        fchmod(o->fd, existing);
    return CS_OK;
}

cs_status cs_output_begin(cs_output *o, const char *path, unsigned mode, char *err, size_t err_size)
{
    o->fd = o->dir = -1;
    o->stream = NULL;
    o->error = 0;
    if (!path) {
        o->path[0] = 0;
        return say(err, err_size, CS_ERR_ARGUMENT, "no file name to write");
    }
    int dir;
    char name[256];
    cs_status st = open_parent(path, &dir, name, sizeof name, err, err_size);
    if (st == CS_OK)
        st = cs_output_begin_at(o, dir, name, path, mode, err, err_size);
    if (dir >= 0)
        close(dir);
    return st;
}

FILE *cs_output_stream(cs_output *o)
{
    if (!o->stream && o->fd >= 0 && (o->stream = fdopen(o->fd, "wb")) == NULL)
        return NULL;
    return o->stream;
}

cs_status cs_output_write(cs_output *o, const void *data, size_t n)
{
    const char *p = data;
    while (n > 0) {
        ssize_t w = write(o->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            o->error = errno;
            return CS_ERR_IO;
        }
        p += w;
        n -= (size_t)w;
    }
    return CS_OK;
}

/* Closes the temporary; its errno, or 0 (some file systems report a full
 * disk only at close). */
static int close_temp(cs_output *o)
{
    int e = o->error;
    if (o->stream) {
        if (ferror(o->stream) && !e)
            e = errno ? errno : EIO;
        if (fclose(o->stream) != 0 && !e)
            e = errno;
    } else if (o->fd >= 0 && close(o->fd) != 0 && errno != EINTR && !e) {
        e = errno;
    }
    o->stream = NULL;
    o->fd = -1;
    return e;
}

void cs_output_abort(cs_output *o)
{
    if (o->dir < 0)
        return;
    close_temp(o);
    unlinkat(o->dir, o->temp, 0);
    close(o->dir);
    o->dir = -1;
}

cs_status cs_output_commit(cs_output *o, char *err, size_t err_size)
{
    if (err && err_size)
        err[0] = 0;
    if (o->dir < 0)
        return say(err, err_size, CS_ERR_STATE, "cannot write %s: nothing begun", o->path);
    int e = close_temp(o);
    unsigned mode;
    cs_status st = e != 0 ? say(err, err_size, status_of(e), "cannot write %s: %s", o->path, strerror(e))
                          : check_at(o->dir, o->name, o->path, &mode, err, err_size);   /* again: it may have changed */
    if (st == CS_OK && renameat(o->dir, o->temp, o->dir, o->name) != 0)
        st = refuse_errno(o->path, errno, err, err_size);
    if (st != CS_OK)
        unlinkat(o->dir, o->temp, 0);
    close(o->dir);
    o->dir = -1;
    return st;
}
