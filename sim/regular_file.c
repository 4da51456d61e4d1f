/* Input files: regular files only, opened without blocking (regular_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "jit.h"
#include "regular_file.h"
#include "status.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0          /* linux/magic.h */
#endif
#ifndef SYSFS_MAGIC
#define SYSFS_MAGIC 0x62656572
#endif
#define READ_NOW_MAX ((size_t)64 << 20)   /* past every reader's own bound */

/* A file whose size says nothing (0), read at once while fd is still
 * O_NONBLOCK into an anonymous file returned in its place: a read that
 * would wait is bad input, not a hang. fd is closed. */
static FILE *read_now(int fd, cs_status *status, char *why, size_t why_size)
{
    int mem = memfd_create("cartsim-input", MFD_CLOEXEC);
    char *buf = malloc(65536);
    size_t total = 0;
    *status = mem < 0 || !buf ? cs_say(why, why_size, CS_ERR_NOMEM, "%s", strerror(mem < 0 ? errno : ENOMEM)) : CS_OK;
    while (*status == CS_OK) {
        ssize_t n = read(fd, buf, 65536);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            *status = cs_say(why, why_size, CS_ERR_ARGUMENT, "a file whose read would wait, not a regular file");
        else if (n < 0)
            *status = cs_say(why, why_size, CS_ERR_ARGUMENT, "%s", strerror(errno));
        else if (n == 0)
            break;
        else if ((total += (size_t)n) > READ_NOW_MAX)
            *status = cs_say(why, why_size, CS_ERR_ARGUMENT, "larger than %zu MiB", READ_NOW_MAX >> 20);
        else if (write(mem, buf, (size_t)n) != n)
            *status = cs_say(why, why_size, CS_ERR_IO, "%s", strerror(errno));
    }
    free(buf);
    close(fd);
    FILE *f = *status == CS_OK && lseek(mem, 0, SEEK_SET) == 0 ? fdopen(mem, "rb") : NULL;
    if (!f) {
        if (*status == CS_OK)
            *status = cs_say(why, why_size, CS_ERR_IO, "%s", strerror(errno));
        if (mem >= 0)
            close(mem);
    }
    return f;
}

FILE *cs_fopen_regular(const char *path, cs_status *status, char *why, size_t why_size)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        /* What the user named wrongly is bad input; the rest is the system's. */
        *status = e == ENOENT ? CS_ERR_NOT_FOUND
                  : e == EACCES || e == EPERM || e == ELOOP || e == ENOTDIR || e == EISDIR ||
                            e == ENAMETOOLONG || e == ENXIO
                      ? CS_ERR_ARGUMENT
                      : CS_ERR_IO;
        struct stat st;
        if (e == ENXIO && stat(path, &st) == 0 && S_ISSOCK(st.st_mode))   /* what a socket answers */
            cs_say(why, why_size, *status, "a socket, not a regular file");
        else
            cs_say(why, why_size, *status, "%s", e == ELOOP ? "too many levels of symbolic links" : strerror(e));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        *status = cs_say(why, why_size, CS_ERR_IO, "%s", strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        const char *kind = cs_file_kind(st.st_mode);
        *status = cs_say(why, why_size, CS_ERR_ARGUMENT, "%s%s", kind,
                         strcmp(kind, "not a regular file") ? ", not a regular file" : "");
        close(fd);
        return NULL;
    }
    /* /proc's and /sys's files say "regular" but are the kernel's: a read of
     * /proc/kmsg blocks and takes messages from their reader, /proc/PID/mem
     * fails; none is an input. */
    struct statfs fs;
    if (fstatfs(fd, &fs) == 0 && (fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC)) {
        *status = cs_say(why, why_size, CS_ERR_ARGUMENT, "a file of the kernel's %s, not a regular file",
                         fs.f_type == PROC_SUPER_MAGIC ? "/proc" : "/sys");
        close(fd);
        return NULL;
    }
    if (st.st_size == 0)   /* empty, or a device-like file elsewhere (FUSE): read it without waiting */
        return read_now(fd, status, why, why_size);
    int flags = fcntl(fd, F_GETFL);
    FILE *f = flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        *status = cs_say(why, why_size, errno == ENOMEM ? CS_ERR_NOMEM : CS_ERR_IO, "%s", strerror(errno));
        close(fd);
        return NULL;
    }
    return f;
}
