/* The on-disk kernel cache: private, atomic, verified (DESIGN.md, "Backends").
 *
 * Layout: one flat directory. Entry `<key><suffix>` holds the compiled object
 * exactly as the compiler wrote it (so dlopen and cuModuleLoad read it as is);
 * `<key><suffix>.meta` beside it is a short text record:
 *
 *     cartsim-cache 1              format tag: anything else is foreign
 *     entry <key><suffix>          which entry it describes
 *     size <bytes>
 *     sum <32 hex digits>          cs_hash_bytes over the entry, chained per 64 KiB
 *     what <text>                  optional: what it is, for people (cartsim cache list)
 *
 * A lookup recomputes that record from the entry's bytes (the "what" line
 * taken as it is) and accepts the entry only when the two are byte-for-byte equal; otherwise the pair is removed and
 * the lookup misses, so the caller rebuilds.
 *
 * Writing. A store copies the object to a unique temporary name (O_EXCL,
 * jit/output_file.c's way, as every file cartsim writes), then writes the
 * metadata the same way, and only then, holding an exclusive flock
 * on the directory, renames the entry into place and the metadata last. rename
 * is atomic, so no reader ever opens a half-written file. The metadata is the
 * commit record: by the time it is visible, the bytes it describes are already
 * in place, and a writer that dies between the renames leaves an entry without
 * (or with stale) metadata, which readers reject and remove. (The other order
 * would publish a record whose entry is still missing or old.) The lock closes
 * the remaining window: two writers of one key whose objects differ (builds
 * need not be bit-identical) could otherwise interleave their renames and pair
 * one's entry with the other's metadata.
 * Lookups hold a shared lock, so they see either no pair or a whole one, and a
 * pair they find bad cannot be a store in progress: removing it is safe. Where
 * flock is unavailable (some network file systems) the cache still works; a
 * lookup then never removes anything, since a mismatch may be a store in
 * progress, and the verification still keeps it from accepting a bad pair.
 * A verified entry may still be replaced before the caller opens its path, but
 * only by another whole object stored under the same key.
 *
 * Temporary names start with '.' and end with ".tmp"; opening the cache
 * removes those older than an hour (left by a process that was killed).
 * Build directories (.build-<pid>-XXXXXX, cs_cache_build_dir) are removed at
 * the next open once their process is gone.
 *
 * Waits are bounded: the lock is tried for lock_wait_ms (default
 * CS_CACHE_LOCK_WAIT_S, $CARTSIM_CACHE_LOCK_WAIT_S), then the run goes on
 * without the cache with a warning naming the holder (a process stopped with
 * Ctrl-Z must not stall every job sharing the cache). Entries are opened
 * O_NONBLOCK and must be regular files owned by the user, writable by no one
 * else and without another name (hard link): a FIFO, another user's file, a
 * file others may write in place of an entry is removed and rebuilt, never
 * waited on.
 *
 * Size. Each lookup hit stamps the metadata's mtime: its last use. After a
 * store, while the exclusive lock is held, the least recently used pairs are
 * removed until the cache is within max_bytes (CS_CACHE_MAX_MB_DEFAULT,
 * $CARTSIM_CACHE_MAX_MB, cs_config.cache_max_mb); pairs used in the last
 * EVICT_GRACE_SECONDS stay whatever the size. Lookups hold the shared lock
 * while they verify, so nothing is removed under them, and the backends load
 * from the descriptor a lookup verified: an entry unlinked afterwards stays
 * readable to them.
 *
 * Privacy. The directory and every ancestor are checked as OpenSSH's
 * StrictModes does: each owned by root or the effective user, none writable by
 * group or others unless sticky (the last one: the user's own, writable by no
 * one else), walked component by component with O_NOFOLLOW from "/", so the
 * descriptor that results is the directory checked; every entry is then
 * opened relative to it (openat), and swapping a directory afterwards changes
 * nothing. Otherwise a private directory from mkdtemp is used for this run,
 * marked by a file inside it so that cs_cache_close knows to remove it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jit.h"

#define META_TAG "cartsim-cache 1"
#define META_MAX 256
#define SUFFIX_MAX 32
#define ENTRY_NAME_MAX CS_CACHE_NAME_MAX
_Static_assert(ENTRY_NAME_MAX == 32 + SUFFIX_MAX + 1, "an entry name is a key, its suffix and a NUL");
#define NAME_MAX_LEN 160              /* room for any file name we make inside the directory */
#define HASH_BLOCK (64 * 1024)
#define STALE_TEMP_SECONDS 3600
#define TEMP_DIR_PREFIX "cartsim-"
#define TEMP_DIR_MARKER ".cartsim-private-temporary"
#define BUILD_DIR_PREFIX ".build-"
#define EVICT_GRACE_SECONDS 60
#define LOCK_TIMED_OUT (-2)

static void set_warning(cs_cache *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_warning(cs_cache *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->warning, sizeof c->warning, fmt, ap);
    va_end(ap);
}

/* Keys are file names: nothing but hex digits may reach the path. */
static bool valid_key(const char *key)
{
    if (!key)
        return false;
    for (int i = 0; i < 32; i++) {
        char ch = key[i];
        bool hex = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
        if (!hex)
            return false;
    }
    return key[32] == '\0';
}

/* A suffix must not leave the directory nor name another entry's metadata. */
static bool valid_suffix(const char *suffix)
{
    if (!suffix || strchr(suffix, '/'))
        return false;
    size_t n = strlen(suffix);
    return n <= SUFFIX_MAX && !(n >= 5 && strcmp(suffix + n - 5, ".meta") == 0);
}

static bool join(char *out, size_t size, const char *dir, const char *name)
{
    int n = snprintf(out, size, "%s/%s", dir, name);
    return n >= 0 && (size_t)n < size;
}

static ssize_t read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

static int write_full(int fd, const void *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, (const char *)buf + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        done += (size_t)w;
    }
    return 0;
}

/* Hashes `in` to its end in fixed blocks (so the checksum does not depend on
 * how read() splits the file), copying it to `out` when out >= 0. */
static int hash_stream(int in, int out, unsigned long long *size, cs_hash128 *sum)
{
    unsigned char *buf = malloc(HASH_BLOCK);
    if (!buf) {
        errno = ENOMEM;
        return -1;
    }
    cs_hash128 h = {0, 0};
    unsigned long long total = 0;
    int rc = 0;
    for (;;) {
        ssize_t n = read_full(in, buf, HASH_BLOCK);
        if (n < 0 || (n > 0 && out >= 0 && write_full(out, buf, (size_t)n) != 0)) {
            rc = -1;
            break;
        }
        if (n == 0)
            break;
        h = cs_hash_bytes(buf, (size_t)n, h);
        total += (unsigned long long)n;
        if (n < HASH_BLOCK)
            break;
    }
    free(buf);
    *size = total;
    *sum = h;
    return rc;
}

static int meta_text(char *out, size_t size, const char *name, unsigned long long bytes,
                     cs_hash128 sum, const char *what)
{
    char hex[33];
    cs_hash_hex(sum, hex);
    return snprintf(out, size, META_TAG "\nentry %s\nsize %llu\nsum %s\n%s%s%s", name, bytes, hex,
                    *what ? "what " : "", what, *what ? "\n" : "");
}

/* A record's "what" line (its last, when it has one) into what[CS_CACHE_WHAT_MAX]. */
static void meta_what(const char *meta, size_t len, char *what)
{
    what[0] = '\0';
    for (size_t i = 0; i + 5 < len; i++)
        if ((i == 0 || meta[i - 1] == '\n') && memcmp(meta + i, "what ", 5) == 0) {
            size_t n = 0;
            for (i += 5; i < len && meta[i] != '\n' && n + 1 < CS_CACHE_WHAT_MAX; i++)
                what[n++] = meta[i];
            what[n] = '\0';
            return;
        }
}

void cs_cache_describe(cs_cache *c, const char *source, const char *backend)
{
    static const char head[] = "/* cartsim kernel: ";
    c->what[0] = '\0';
    if (!source || strncmp(source, head, sizeof head - 1) != 0)
        return;
    const char *s = source + sizeof head - 1, *end = strchr(s, '\n');
    const char *dialect = strstr(s, ", C dialect */");
    if (!dialect || (end && dialect > end))
        dialect = strstr(s, ", CUDA dialect */");
    if (!dialect || (end && dialect > end))
        return;
    size_t n = 0;
    for (; s < dialect && n + 1 < sizeof c->what; s++)   /* a title is the .env's: printable ASCII only */
        c->what[n++] = *s >= 0x20 && *s < 0x7f ? *s : '?';
    snprintf(c->what + n, sizeof c->what - n, ", %s", backend);
}

static void disable(cs_cache *c)
{
    if (c->dir[0] && c->dfd >= 0)
        close(c->dfd);
    c->dfd = -1;
    c->dir[0] = '\0';
}

/* ---- locking ---------------------------------------------------------- */

/* "pid N (name)" of a process holding a flock on the directory open as fd,
 * from /proc/locks; "" when it cannot be told. */
static void lock_holder(int fd, char *out, size_t size)
{
    out[0] = '\0';
    struct stat st;
    FILE *f = fstat(fd, &st) == 0 ? fopen("/proc/locks", "re") : NULL;
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        /* "1: FLOCK  ADVISORY  WRITE 1234 00:2e:5678 0 EOF"; "->" marks a waiter */
        char kind[16];
        long pid;
        unsigned long long inode;
        if (strstr(line, "->") ||
            sscanf(line, "%*d: %15s %*s %*s %ld %*x:%*x:%llu", kind, &pid, &inode) != 3 ||
            strcmp(kind, "FLOCK") != 0 || inode != (unsigned long long)st.st_ino || pid == (long)getpid())
            continue;
        char comm_path[64], comm[64] = "";
        snprintf(comm_path, sizeof comm_path, "/proc/%ld/comm", pid);
        FILE *cf = fopen(comm_path, "re");
        if (cf) {
            if (fgets(comm, sizeof comm, cf))
                comm[strcspn(comm, "\n")] = '\0';
            fclose(cf);
        }
        snprintf(out, size, comm[0] ? "pid %ld (%s)" : "pid %ld", pid, comm);
        break;
    }
    fclose(f);
}

/* A flock on the directory itself (no lock file to litter it), on a
 * descriptor of its own so that two handles in one process exclude each
 * other too. -1 when the file system will not lock (callers go on without);
 * LOCK_TIMED_OUT, with the warning set, when another process held it for
 * longer than lock_wait_ms. */
static int lock_dir(cs_cache *c, int how)
{
    int fd = openat(c->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    double deadline = cs_now_ms() + c->lock_wait_ms;
    long nap_us = 1000;
    for (;;) {
        if (flock(fd, how | LOCK_NB) == 0)
            return fd;
        if (errno == EINTR)
            continue;
        if (errno != EWOULDBLOCK || cs_now_ms() >= deadline)
            break;
        nanosleep(&(struct timespec){0, nap_us * 1000}, NULL);
        nap_us = nap_us < 50000 ? nap_us * 2 : 50000;
    }
    if (errno != EWOULDBLOCK) {
        close(fd);
        return -1;
    }
    char holder[128];
    lock_holder(fd, holder, sizeof holder);
    close(fd);
    set_warning(c, "the kernel cache %s has been locked%s%s for %g s: running without the cache", c->dir,
                holder[0] ? " by " : "", holder, c->lock_wait_ms / 1000.0);
    return LOCK_TIMED_OUT;
}

static void unlock_dir(int fd)
{
    if (fd >= 0)
        close(fd);   /* releases the flock */
}

/* ---- opening ---------------------------------------------------------- */

/* mkdir -p, new directories 0700 (the XDG base directory rule). */
static int make_dirs(const char *path)
{
    char buf[sizeof ((cs_cache *)0)->dir];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, n + 1);
    while (n > 1 && buf[n - 1] == '/')
        buf[--n] = '\0';
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/' || p[-1] == '/')
            continue;
        *p = '\0';
        struct stat st;
        if (stat(buf, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                errno = ENOTDIR;
                return -1;
            }
        } else if (mkdir(buf, 0700) != 0 && errno != EEXIST) {
            return -1;
        }
        *p = '/';
    }
    if (mkdir(buf, 0700) == 0)
        return chmod(buf, 0700);   /* whatever the umask took away */
    return errno == EEXIST ? 0 : -1;
}

/* Why the directory open as fd may not hold (last) or lead to (an ancestor)
 * code that cartsim runs, or NULL (OpenSSH's StrictModes rule). */
static const char *unsafe_dir(int fd, bool last)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return "cannot be examined";
    if (!S_ISDIR(st.st_mode))
        return "is not a directory";
    if (last ? st.st_uid != geteuid() : st.st_uid != 0 && st.st_uid != geteuid())
        return "is owned by another user";
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && (last || !(st.st_mode & S_ISVTX)))
        return "is writable by others";
    return NULL;
}

/* Opens the directory `path` by walking its real path from "/" one component
 * at a time (O_NOFOLLOW), checking each; the descriptor, or -1 with the
 * reason in `reason` (naming the ancestor at fault). */
static int open_verified(const char *path, char *reason, size_t reason_size)
{
    char *real = realpath(path, NULL);
    if (!real) {
        snprintf(reason, reason_size, "cache directory %s cannot be opened: %s", path, strerror(errno));
        return -1;
    }
    int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const char *why = fd < 0 ? "cannot be opened" : unsafe_dir(fd, real[1] == '\0');
    char *at = real;   /* the path checked so far ends before at */
    while (!why && *at) {
        while (*at == '/')
            at++;
        if (!*at)
            break;
        char *end = strchr(at, '/');
        char save = end ? *end : '\0';
        if (end)
            *end = '\0';
        int next = openat(fd, at, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (end)
            *end = save;
        close(fd);
        fd = next;
        at = end ? end : at + strlen(at);
        why = fd < 0 ? "cannot be opened" : unsafe_dir(fd, *at == '\0' || strspn(at, "/") == strlen(at));
    }
    if (why) {
        size_t checked = (size_t)(at - real);
        if (checked == 0)
            checked = 1;
        if (*at == '\0')
            snprintf(reason, reason_size, "cache directory %s %s", path, why);
        else
            snprintf(reason, reason_size, "cache directory %s: its ancestor %.*s %s", path, (int)checked, real, why);
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    free(real);
    return fd;
}

/* A directory stream of name under dfd (opened with O_DIRECTORY, O_CLOEXEC
 * and `flags`); NULL, with no descriptor left open, where it cannot be. */
static DIR *open_dir_at(int dfd, const char *name, int flags)
{
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | flags);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0)
        close(fd);
    return d;
}

/* Empties and removes a build directory (only flat files live there). */
static void remove_build_dir(int dfd, const char *name)
{
    DIR *d = open_dir_at(dfd, name, O_NOFOLLOW);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
    unlinkat(dfd, name, AT_REMOVEDIR);
}

/* The process a build directory (prefix<pid>-...) belongs to has exited. */
static bool build_dir_orphaned(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(name, prefix, n) != 0)
        return false;
    char *end;
    long pid = strtol(name + n, &end, 10);
    return end[0] == '-' && pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

void cs_build_dir_sweep(int parent, const char *prefix)
{
    DIR *d = open_dir_at(parent, ".", 0);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (build_dir_orphaned(e->d_name, prefix) && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISDIR(st.st_mode) && st.st_uid == geteuid())
            remove_build_dir(dirfd(d), e->d_name);
    }
    closedir(d);
}

/* Temporary files of stores that were killed halfway, and build directories
 * of processes that are gone. */
static void sweep_leftovers(int dfd)
{
    DIR *d = open_dir_at(dfd, ".", 0);
    if (!d)
        return;
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        struct stat st;
        if (e->d_name[0] != '.' || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && build_dir_orphaned(e->d_name, BUILD_DIR_PREFIX))
            remove_build_dir(dirfd(d), e->d_name);
        else if (S_ISREG(st.st_mode) && n >= 5 && strcmp(e->d_name + n - 4, ".tmp") == 0 &&
                 st.st_mtime < now - STALE_TEMP_SECONDS)
            unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

static void use_private_temp(cs_cache *c, const char *reason)
{
    const char *bases[2] = {getenv("TMPDIR"), "/tmp"};
    for (int i = 0; i < 2; i++) {
        const char *base = bases[i];
        if (!base || base[0] != '/' || (i == 1 && bases[0] && strcmp(bases[0], base) == 0))
            continue;
        char tmpl[sizeof c->dir];
        int n = snprintf(tmpl, sizeof tmpl, "%s/" TEMP_DIR_PREFIX "XXXXXX", base);
        if (n < 0 || (size_t)n + 1 + NAME_MAX_LEN >= sizeof tmpl || !mkdtemp(tmpl))
            continue;
        int dfd = open(tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int fd = dfd < 0 ? -1 : openat(dfd, TEMP_DIR_MARKER, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            if (dfd >= 0)
                close(dfd);
            rmdir(tmpl);
            continue;
        }
        close(fd);
        memcpy(c->dir, tmpl, (size_t)n + 1);
        c->dfd = dfd;
        set_warning(c, "%s; using a private temporary cache %s", reason, c->dir);
        return;
    }
    c->dir[0] = '\0';
    set_warning(c, "%s; running without a cache", reason);
}

/* A number from the environment variable `name` in [lo, hi]: `fallback`
 * when it is unset or empty; said in the warning when it is not a number in
 * range (then the fallback, or hi for one above it: a wait stays bounded). */
static double env_number(cs_cache *c, const char *name, double fallback, double lo, double hi)
{
    const char *text = getenv(name);
    if (!text || !*text)
        return fallback;
    char *end;
    double v = strtod(text, &end);
    bool number = *end == '\0' && v == v;
    if (number && v >= lo && v <= hi)
        return v;
    set_warning(c, "$%s='%.40s' is not a number from %g to %g: %s %g", name, text, lo, hi,
                number && v > hi ? "taking" : "taking the default,", number && v > hi ? hi : fallback);
    return number && v > hi ? hi : fallback;
}

void cs_cache_open(cs_cache *c, const char *dir)
{
    c->dir[0] = '\0';
    c->warning[0] = '\0';
    c->what[0] = '\0';
    c->dfd = -1;
    c->lock_wait_ms = 1000.0 * env_number(c, "CARTSIM_CACHE_LOCK_WAIT_S", CS_CACHE_LOCK_WAIT_S, 0,
                                          CS_CACHE_LOCK_WAIT_MAX_S);
    c->max_bytes = (long long)(env_number(c, "CARTSIM_CACHE_MAX_MB", CS_CACHE_MAX_MB_DEFAULT, 1, CS_MAX_CACHE_MAX_MB) *
                               1048576.0);
    char want[sizeof c->dir];
    char reason[sizeof c->dir + 256];   /* set_warning truncates it to fit */
    int n;

    if (dir && dir[0] == '\0')
        return;   /* the caller asked for no cache */
    if (dir) {
        n = snprintf(want, sizeof want, "%s", dir);
    } else {
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        if (xdg && xdg[0] == '/')   /* relative values are invalid by the XDG spec */
            n = snprintf(want, sizeof want, "%s/cartsim", xdg);
        else if (home && home[0] == '/') {
            /* below the home, not the home itself: HOME=/nonexistent must not
             * make /nonexistent (as root it could) */
            struct stat st;
            if (stat(home, &st) != 0 || !S_ISDIR(st.st_mode)) {
                snprintf(reason, sizeof reason, "HOME (%s) is not a directory", home);
                use_private_temp(c, reason);
                return;
            }
            n = snprintf(want, sizeof want, "%s/.cache/cartsim", home);
        } else {
            use_private_temp(c, "neither XDG_CACHE_HOME nor HOME names a directory");
            return;
        }
    }
    /* Room for the longest file name we create, so paths built later fit. */
    if (n < 0 || (size_t)n + 1 + NAME_MAX_LEN >= sizeof want) {
        use_private_temp(c, "the cache directory's name is too long");
        return;
    }
    if (make_dirs(want) != 0) {
        snprintf(reason, sizeof reason, "cannot create cache directory %s: %s", want, strerror(errno));
        use_private_temp(c, reason);
        return;
    }
    int dfd = open_verified(want, reason, sizeof reason);
    if (dfd < 0) {
        use_private_temp(c, reason);
        return;
    }
    memcpy(c->dir, want, (size_t)n + 1);
    c->dfd = dfd;
    sweep_leftovers(c->dfd);
}

int cs_build_dir_make(cs_build_dir *b, int parent, const char *parent_path, const char *prefix)
{
    memset(b, 0, sizeof *b);
    b->fd = b->parent = -1;
    for (int attempt = 0; attempt < 100; attempt++) {
        cs_hash128 h = {(uint64_t)getpid(), (uint64_t)attempt};
        double now = cs_now_ms();
        h = cs_hash_bytes(&now, sizeof now, h);
        char hex[33];
        cs_hash_hex(h, hex);
        snprintf(b->name, sizeof b->name, "%s%ld-%.8s", prefix, (long)getpid(), hex);
        if (mkdirat(parent, b->name, 0700) == 0)
            break;
        if (errno != EEXIST)
            return -1;
        b->name[0] = '\0';
    }
    if (!b->name[0]) {
        errno = EEXIST;
        return -1;
    }
    b->fd = openat(parent, b->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    b->parent = b->fd < 0 ? -1 : fcntl(parent, F_DUPFD_CLOEXEC, 0);
    if (b->parent < 0) {
        int err = errno;
        if (b->fd >= 0)
            close(b->fd);
        unlinkat(parent, b->name, AT_REMOVEDIR);
        b->fd = -1;
        errno = err;
        return -1;
    }
    /* Paths through the descriptor, valid for the compiler's processes too
     * while this one lives, whatever is renamed meanwhile. */
    snprintf(b->path, sizeof b->path, "/proc/%ld/fd/%d", (long)getpid(), b->fd);
    struct stat st;
    if (stat(b->path, &st) != 0 &&   /* no /proc: by name */
        snprintf(b->path, sizeof b->path, "%s/%s", parent_path, b->name) >= (int)sizeof b->path) {
        cs_build_dir_remove(b);
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

void cs_build_dir_remove(cs_build_dir *b)
{
    if (b->fd < 0)
        return;
    remove_build_dir(b->parent, b->name);
    close(b->fd);
    close(b->parent);
    b->fd = b->parent = -1;
}

int cs_cache_build_dir(cs_cache *c, cs_build_dir *b)
{
    if (!c->dir[0]) {
        b->fd = b->parent = -1;
        return -1;
    }
    return cs_build_dir_make(b, c->dfd, c->dir, BUILD_DIR_PREFIX);
}

/* ---- entries ---------------------------------------------------------- */

/* Names of an entry and its metadata; false when the request is malformed. */
static bool entry_names(cs_cache *c, const char *key, const char *suffix, char *name, char *meta_name)
{
    if (!valid_key(key) || !valid_suffix(suffix)) {
        set_warning(c, "invalid cache key or suffix (want 32 hex digits and a suffix without '/')");
        return false;
    }
    snprintf(name, ENTRY_NAME_MAX, "%s%s", key, suffix);
    snprintf(meta_name, NAME_MAX_LEN, "%s.meta", name);
    return true;
}

enum { ENTRY_ABSENT, ENTRY_VALID, ENTRY_BAD, ENTRY_UNREADABLE };

/* Opens one file of the cache without blocking (a FIFO must not wedge us):
 * ENTRY_VALID and *fd for a regular file of the user's, ENTRY_BAD for
 * anything else in its place. */
static int open_member(int dfd, const char *name, int *fd)
{
    *fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (*fd < 0)
        return errno == ENOENT ? ENTRY_ABSENT : errno == ELOOP || errno == ENXIO ? ENTRY_BAD : ENTRY_UNREADABLE;
    /* Nobody else may change it: the user's own, writable by no one else,
     * and under no other name (a hard link elsewhere could be kept and
     * written through). */
    struct stat st;
    int state = fstat(*fd, &st) != 0 ? ENTRY_UNREADABLE
                : !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
                        st.st_nlink != 1
                    ? ENTRY_BAD
                    : ENTRY_VALID;
    if (state != ENTRY_VALID) {
        close(*fd);
        *fd = -1;
    }
    return state;
}

/* ENTRY_VALID with *efd open on the entry (at its start) when the pair
 * verifies; the metadata's mtime is stamped as the entry's last use. */
static int check_entry(int dfd, const char *name, const char *meta_name, int *efd)
{
    char have[META_MAX + 1];
    int mfd;
    int mstate = open_member(dfd, meta_name, &mfd);
    if (mstate == ENTRY_UNREADABLE)
        return ENTRY_UNREADABLE;
    ssize_t have_len = -1;
    if (mfd >= 0) {
        have_len = read_full(mfd, have, sizeof have);
        if (have_len < 0) {
            close(mfd);
            return ENTRY_UNREADABLE;
        }
    }
    int estate = open_member(dfd, name, efd);
    if (estate != ENTRY_VALID) {
        if (mfd >= 0)
            close(mfd);
        if (estate == ENTRY_UNREADABLE)
            return ENTRY_UNREADABLE;
        /* Metadata without its entry is debris; nothing at all is a plain miss. */
        return estate == ENTRY_ABSENT && mstate == ENTRY_ABSENT ? ENTRY_ABSENT : ENTRY_BAD;
    }
    bool plausible = mfd >= 0 && have_len <= META_MAX && (size_t)have_len > sizeof META_TAG &&
                     memcmp(have, META_TAG "\n", sizeof META_TAG) == 0;
    unsigned long long bytes;
    cs_hash128 sum;
    int state = !plausible ? ENTRY_BAD : hash_stream(*efd, -1, &bytes, &sum) != 0 ? ENTRY_UNREADABLE : ENTRY_VALID;
    if (state == ENTRY_VALID) {
        char want[META_MAX + 1], what[CS_CACHE_WHAT_MAX];
        meta_what(have, (size_t)have_len, what);
        int want_len = meta_text(want, sizeof want, name, bytes, sum, what);
        if (want_len != have_len || memcmp(want, have, (size_t)want_len) != 0)
            state = ENTRY_BAD;
        else if (lseek(*efd, 0, SEEK_SET) != 0)
            state = ENTRY_UNREADABLE;
        else
            futimens(mfd, NULL);   /* its last use, for eviction */
    }
    if (mfd >= 0)
        close(mfd);
    if (state != ENTRY_VALID) {
        close(*efd);
        *efd = -1;
    }
    return state;
}

int cs_cache_open_entry(cs_cache *c, const char *key, const char *suffix)
{
    char name[ENTRY_NAME_MAX], meta_name[NAME_MAX_LEN];
    if (!c->dir[0] || !entry_names(c, key, suffix, name, meta_name))
        return -1;
    int lock = lock_dir(c, LOCK_SH);
    if (lock == LOCK_TIMED_OUT) {
        disable(c);
        return -1;
    }
    int efd = -1;
    int state = check_entry(c->dfd, name, meta_name, &efd);
    if (state == ENTRY_BAD && lock >= 0) {
        unlinkat(c->dfd, name, 0);
        unlinkat(c->dfd, meta_name, 0);
        set_warning(c, "removed corrupt cache entry %s/%s", c->dir, name);
    }
    unlock_dir(lock);
    return state == ENTRY_VALID ? efd : -1;
}

int cs_cache_lookup(cs_cache *c, const char *key, const char *suffix, char *path, size_t path_size)
{
    char name[ENTRY_NAME_MAX], meta_name[NAME_MAX_LEN], entry[sizeof c->dir];
    if (!c->dir[0] || !entry_names(c, key, suffix, name, meta_name) || !join(entry, sizeof entry, c->dir, name))
        return 0;
    if (path && strlen(entry) >= path_size) {
        set_warning(c, "cache path buffer too small for %s", entry);
        return 0;
    }
    int fd = cs_cache_open_entry(c, key, suffix);
    if (fd < 0)
        return 0;
    close(fd);
    if (path)
        memcpy(path, entry, strlen(entry) + 1);
    return 1;
}

static int store_failed(cs_cache *c, const char *what, int err)
{
    set_warning(c, "%s cache directory %s: %s; using the built file uncached", what, c->dir,
                strerror(err));
    return -1;
}

/* A failed store whose reason the writer said (jit/output_file.c). */
static int store_refused(cs_cache *c, const char *why)
{
    set_warning(c, "%s; using the built file uncached", why);
    return -1;
}

/* A temporary for `name` beside it with exactly these permission bits,
 * whatever the umask: jit/output_file.c's, O_EXCL under a fresh name. */
static int begin_member(cs_cache *c, cs_output *o, const char *name, mode_t mode)
{
    char path[sizeof c->dir + NAME_MAX_LEN], why[512];
    snprintf(path, sizeof path, "%s/%s", c->dir, name);
    if (cs_output_begin_at(o, c->dfd, name, path, mode, why, sizeof why) != CS_OK)
        return store_refused(c, why);
    if (fchmod(o->fd, mode) != 0) {
        int err = errno;
        cs_output_abort(o);
        return store_failed(c, "cannot create a file in", err);
    }
    return 0;
}

static int by_last_use(const void *a, const void *b)
{
    const cs_cache_item *x = a, *y = b;
    return x->last_use < y->last_use ? -1 : x->last_use > y->last_use ? 1 : strcmp(x->name, y->name);
}

int cs_cache_list(cs_cache *c, cs_cache_item **items, size_t *count, unsigned long long *total)
{
    *items = NULL;
    *count = 0;
    *total = 0;
    if (!c->dir[0])
        return -1;
    DIR *d = open_dir_at(c->dfd, ".", 0);
    if (!d)
        return -1;
    size_t cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        *total += (unsigned long long)st.st_size;
        size_t n = strlen(e->d_name);
        if (e->d_name[0] == '.' || n < 6 || n - 5 >= ENTRY_NAME_MAX || strcmp(e->d_name + n - 5, ".meta") != 0)
            continue;
        if (*count == cap) {
            cap = cap ? 2 * cap : 64;
            cs_cache_item *more = realloc(*items, cap * sizeof **items);
            if (!more) {
                rc = -1;
                break;
            }
            *items = more;
        }
        cs_cache_item *it = &(*items)[(*count)++];
        memcpy(it->name, e->d_name, n - 5);
        it->name[n - 5] = '\0';
        it->last_use = st.st_mtime;
        it->what[0] = '\0';
        char meta[META_MAX + 1];
        int mfd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        ssize_t got = mfd >= 0 ? read_full(mfd, meta, META_MAX) : -1;
        if (got > 0)
            meta_what(meta, (size_t)got, it->what);
        if (mfd >= 0)
            close(mfd);
        struct stat est;
        it->bytes = (unsigned long long)st.st_size +
                    (fstatat(dirfd(d), it->name, &est, AT_SYMLINK_NOFOLLOW) == 0 ? (unsigned long long)est.st_size : 0);
    }
    closedir(d);
    if (rc != 0) {
        free(*items);
        *items = NULL;
        *count = 0;
        return -1;
    }
    if (*count)
        qsort(*items, *count, sizeof **items, by_last_use);
    return 0;
}

/* With the exclusive lock held: the least recently used pairs go until the
 * cache fits max_bytes; `keep` (just stored) and pairs used within the grace
 * period stay. */
static void evict(cs_cache *c, const char *keep)
{
    cs_cache_item *items;
    size_t count;
    unsigned long long total;
    if (c->max_bytes <= 0 || cs_cache_list(c, &items, &count, &total) != 0)
        return;
    time_t recent = time(NULL) - EVICT_GRACE_SECONDS;
    for (size_t k = 0; k < count && total > (unsigned long long)c->max_bytes; k++) {
        if (strcmp(items[k].name, keep) == 0 || items[k].last_use > recent)
            continue;
        char meta_name[NAME_MAX_LEN];
        snprintf(meta_name, sizeof meta_name, "%s.meta", items[k].name);
        unlinkat(c->dfd, meta_name, 0);   /* the commit record first: a half-removed pair is a plain miss */
        unlinkat(c->dfd, items[k].name, 0);
        total -= items[k].bytes < total ? items[k].bytes : total;
    }
    free(items);
}

long cs_cache_clear(cs_cache *c, long *leftovers)
{
    if (leftovers)
        *leftovers = 0;
    if (!c->dir[0])
        return -1;
    int lock = lock_dir(c, LOCK_EX);
    if (lock == LOCK_TIMED_OUT)
        return -1;
    DIR *d = open_dir_at(c->dfd, ".", 0);
    long removed = 0, others = 0, files = 0, kept = 0;
    int first_err = 0;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            size_t n = strlen(e->d_name);
            struct stat st;
            if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
                continue;
            bool entry = e->d_name[0] != '.' && !S_ISDIR(st.st_mode);
            bool temp = e->d_name[0] == '.' && n >= 5 && strcmp(e->d_name + n - 4, ".tmp") == 0 &&
                        st.st_mtime < time(NULL) - STALE_TEMP_SECONDS;
            bool record = entry && n > 5 && strcmp(e->d_name + n - 5, ".meta") == 0;
            if (entry || temp) {
                files++;
                if (unlinkat(dirfd(d), e->d_name, 0) == 0) {
                    if (record)
                        removed++;   /* an entry and its record: one */
                    else if (!entry)
                        others++;    /* a stale temporary file */
                } else {
                    kept++;
                    first_err = first_err ? first_err : errno;
                }
            } else if (S_ISDIR(st.st_mode) && build_dir_orphaned(e->d_name, BUILD_DIR_PREFIX)) {
                remove_build_dir(dirfd(d), e->d_name);
                others++;
            }
        }
        closedir(d);
    }
    unlock_dir(lock);
    if (leftovers)
        *leftovers = others;
    if (kept) {
        set_warning(c, "cannot remove %ld of its %ld files: %s", kept, files, strerror(first_err));
        return -1;
    }
    return d ? removed : -1;
}

int cs_cache_store(cs_cache *c, const char *key, const char *suffix, const char *built,
                   char *path, size_t path_size)
{
    char name[ENTRY_NAME_MAX], meta_name[NAME_MAX_LEN], entry[sizeof c->dir];
    if (path && path_size)
        path[0] = '\0';
    if (!c->dir[0]) {
        if (!c->warning[0])
            set_warning(c, "running without a cache");
        return -1;
    }
    if (!entry_names(c, key, suffix, name, meta_name) || !join(entry, sizeof entry, c->dir, name))
        return -1;
    if (path && strlen(entry) >= path_size) {
        set_warning(c, "cache path buffer too small for %s", entry);
        return -1;
    }

    int in = open(built, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (in < 0 || fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
        set_warning(c, "cannot read %s: %s", built, in < 0 ? strerror(errno) : "not a regular file");
        if (in >= 0)
            close(in);
        return -1;
    }

    /* The object, hashed on the way. */
    mode_t mode = strcmp(suffix, ".so") == 0 ? 0700 : 0600;
    cs_output entry_out, meta_out;
    if (begin_member(c, &entry_out, name, mode) != 0) {
        close(in);
        return -1;
    }
    unsigned long long bytes;
    cs_hash128 sum;
    int rc = hash_stream(in, entry_out.fd, &bytes, &sum);
    int err = errno;
    close(in);
    if (rc != 0) {
        cs_output_abort(&entry_out);
        return store_failed(c, "cannot write to", err);
    }

    /* Its metadata. */
    char text[META_MAX];
    int text_len = meta_text(text, sizeof text, name, bytes, sum, c->what);
    if (begin_member(c, &meta_out, meta_name, 0600) != 0) {
        cs_output_abort(&entry_out);
        return -1;
    }
    if (cs_output_write(&meta_out, text, (size_t)text_len) != CS_OK) {
        err = meta_out.error;
        cs_output_abort(&meta_out);
        cs_output_abort(&entry_out);
        return store_failed(c, "cannot write to", err);
    }

    /* Entry first, metadata last, as one step for readers (see the top). */
    int lock = lock_dir(c, LOCK_EX);
    if (lock == LOCK_TIMED_OUT) {
        cs_output_abort(&entry_out);
        cs_output_abort(&meta_out);
        disable(c);
        return -1;
    }
    char why[512];
    if (cs_output_commit(&entry_out, why, sizeof why) != CS_OK) {
        unlock_dir(lock);
        cs_output_abort(&meta_out);
        return store_refused(c, why);
    }
    if (cs_output_commit(&meta_out, why, sizeof why) != CS_OK) {
        unlinkat(c->dfd, name, 0);   /* never leave it paired with an older metadata file */
        unlinkat(c->dfd, meta_name, 0);
        unlock_dir(lock);
        return store_refused(c, why);
    }
    if (lock >= 0)
        evict(c, name);   /* only under the lock: never under a lookup's feet */
    unlock_dir(lock);
    if (path)
        memcpy(path, entry, strlen(entry) + 1);
    return 0;
}

/* ---- closing ---------------------------------------------------------- */

static bool is_private_temp(const char *dir, int dfd)
{
    const char *base = strrchr(dir, '/');
    base = base ? base + 1 : dir;
    struct stat st;
    return strncmp(base, TEMP_DIR_PREFIX, sizeof TEMP_DIR_PREFIX - 1) == 0 &&
           fstatat(dfd, TEMP_DIR_MARKER, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
           st.st_uid == geteuid();
}

void cs_cache_close(cs_cache *c)
{
    if (!c->dir[0])
        return;
    int dfd = c->dfd;
    c->dfd = -1;
    if (dfd < 0 || !is_private_temp(c->dir, dfd)) {
        if (dfd >= 0)
            close(dfd);   /* the user's cache stays */
        return;
    }
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return;
    }
    /* Flat files and build directories live here; a second pass catches
     * what readdir skipped while entries were being unlinked under it. */
    for (int pass = 0; pass < 2; pass++) {
        rewinddir(d);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            if (unlinkat(dirfd(d), e->d_name, 0) != 0 && (errno == EISDIR || errno == EPERM))
                remove_build_dir(dirfd(d), e->d_name);
        }
    }
    closedir(d);
    if (rmdir(c->dir) == 0)
        c->dir[0] = '\0';
}
