/* Input files: regular files only, opened without blocking (regular_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jit.h"
#include "regular_file.h"
#include "status.h"

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
    int flags = fcntl(fd, F_GETFL);
    FILE *f = flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        *status = cs_say(why, why_size, errno == ENOMEM ? CS_ERR_NOMEM : CS_ERR_IO, "%s", strerror(errno));
        close(fd);
        return NULL;
    }
    return f;
}
