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
 *
 * A lookup recomputes that record from the entry's bytes and accepts the entry
 * only when the two are byte-for-byte equal; otherwise the pair is removed and
 * the lookup misses, so the caller rebuilds.
 *
 * Writing. A store copies the object to a unique temporary name (O_EXCL), then
 * writes the metadata the same way, and only then, holding an exclusive flock
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
 *
 * Privacy. The directory must belong to the effective user and be writable by
 * no one else: cartsim loads and runs what it finds there. Otherwise a private
 * directory from mkdtemp is used for this run, marked by a file inside it so
 * that cs_cache_close knows to remove it (cs_cache has no other field to say so).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jit.h"

#define META_TAG "cartsim-cache 1"
#define META_MAX 256
#define SUFFIX_MAX 32
#define ENTRY_NAME_MAX (32 + SUFFIX_MAX + 1)
#define NAME_MAX_LEN 160              /* room for any file name we make inside the directory */
#define HASH_BLOCK (64 * 1024)
#define STALE_TEMP_SECONDS 3600
#define TEMP_DIR_PREFIX "cartsim-"
#define TEMP_DIR_MARKER ".cartsim-private-temporary"

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
                     cs_hash128 sum)
{
    char hex[33];
    cs_hash_hex(sum, hex);
    return snprintf(out, size, META_TAG "\nentry %s\nsize %llu\nsum %s\n", name, bytes, hex);
}

/* A flock on the directory itself (no lock file to litter it); -1 when the
 * file system will not lock, and then callers go on without. */
static int lock_dir(const char *dir, int how)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    while (flock(fd, how) != 0) {
        if (errno != EINTR) {
            close(fd);
            return -1;
        }
    }
    return fd;
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

/* Why `dir` may not hold code that cartsim runs, or NULL when it may. */
static const char *refusal(const char *dir, int *err)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        *err = errno;
        return "cannot be opened";
    }
    if (!S_ISDIR(st.st_mode))
        return "is not a directory";
    if (st.st_uid != geteuid())
        return "is owned by another user";
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return "is writable by others";
    return NULL;
}

/* Temporary files of stores that were killed halfway. */
static void sweep_stale_temps(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (e->d_name[0] != '.' || n < 5 || strcmp(e->d_name + n - 4, ".tmp") != 0)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
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
        char marker[sizeof tmpl + sizeof TEMP_DIR_MARKER];
        int fd = -1;
        if (join(marker, sizeof marker, tmpl, TEMP_DIR_MARKER))
            fd = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            rmdir(tmpl);
            continue;
        }
        close(fd);
        memcpy(c->dir, tmpl, (size_t)n + 1);
        set_warning(c, "%s; using a private temporary cache %s", reason, c->dir);
        return;
    }
    c->dir[0] = '\0';
    set_warning(c, "%s; running without a cache", reason);
}

void cs_cache_open(cs_cache *c, const char *dir)
{
    c->dir[0] = '\0';
    c->warning[0] = '\0';
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
        else if (home && home[0] == '/')
            n = snprintf(want, sizeof want, "%s/.cache/cartsim", home);
        else {
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
    int err = 0;
    const char *why = refusal(want, &err);
    if (why) {
        snprintf(reason, sizeof reason, "cache directory %s %s%s%s", want, why, err ? ": " : "",
                 err ? strerror(err) : "");
        use_private_temp(c, reason);
        return;
    }
    memcpy(c->dir, want, (size_t)n + 1);
    sweep_stale_temps(c->dir);
}

/* ---- entries ---------------------------------------------------------- */

/* Names of an entry and its metadata; false when the request is malformed. */
static bool entry_paths(cs_cache *c, const char *key, const char *suffix, char *name,
                        char *entry, char *meta, size_t size)
{
    if (!valid_key(key) || !valid_suffix(suffix)) {
        set_warning(c, "invalid cache key or suffix (want 32 hex digits and a suffix without '/')");
        return false;
    }
    snprintf(name, ENTRY_NAME_MAX, "%s%s", key, suffix);
    char meta_name[NAME_MAX_LEN];
    snprintf(meta_name, sizeof meta_name, "%s.meta", name);
    return join(entry, size, c->dir, name) && join(meta, size, c->dir, meta_name);
}

enum { ENTRY_ABSENT, ENTRY_VALID, ENTRY_BAD, ENTRY_UNREADABLE };

static int check_entry(const char *entry, const char *meta, const char *name)
{
    char have[META_MAX + 1];
    int mfd = open(meta, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (mfd < 0 && errno != ENOENT && errno != ELOOP)
        return ENTRY_UNREADABLE;
    ssize_t have_len = -1;
    if (mfd >= 0) {
        have_len = read_full(mfd, have, sizeof have);
        close(mfd);
        if (have_len < 0)
            return ENTRY_UNREADABLE;
    }

    int efd = open(entry, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (efd < 0) {
        if (errno != ENOENT && errno != ELOOP)
            return ENTRY_UNREADABLE;
        /* Metadata without its entry is debris; nothing at all is a plain miss. */
        return mfd >= 0 || errno == ELOOP ? ENTRY_BAD : ENTRY_ABSENT;
    }
    struct stat st;
    bool plausible = mfd >= 0 && have_len <= META_MAX && fstat(efd, &st) == 0 &&
                     S_ISREG(st.st_mode) &&
                     (size_t)have_len > sizeof META_TAG &&
                     memcmp(have, META_TAG "\n", sizeof META_TAG) == 0;
    if (!plausible) {
        close(efd);
        return ENTRY_BAD;
    }
    unsigned long long bytes;
    cs_hash128 sum;
    int rc = hash_stream(efd, -1, &bytes, &sum);
    close(efd);
    if (rc != 0)
        return ENTRY_UNREADABLE;
    char want[META_MAX + 1];
    int want_len = meta_text(want, sizeof want, name, bytes, sum);
    if (want_len != have_len || memcmp(want, have, (size_t)want_len) != 0)
        return ENTRY_BAD;
    return ENTRY_VALID;
}

int cs_cache_lookup(cs_cache *c, const char *key, const char *suffix, char *path, size_t path_size)
{
    char name[ENTRY_NAME_MAX], entry[sizeof c->dir], meta[sizeof c->dir];
    if (!c->dir[0] || !entry_paths(c, key, suffix, name, entry, meta, sizeof entry))
        return 0;
    if (path && strlen(entry) >= path_size) {
        set_warning(c, "cache path buffer too small for %s", entry);
        return 0;
    }
    int lock = lock_dir(c->dir, LOCK_SH);
    int state = check_entry(entry, meta, name);
    if (state == ENTRY_BAD && lock >= 0) {
        unlink(entry);
        unlink(meta);
        set_warning(c, "removed corrupt cache entry %s", entry);
    }
    unlock_dir(lock);
    if (state != ENTRY_VALID)
        return 0;
    if (path)
        memcpy(path, entry, strlen(entry) + 1);
    return 1;
}

/* A fresh file beside the entry; the pid and a counter keep concurrent
 * writers apart, O_EXCL makes sure. */
static int create_temp(const char *dir, const char *name, mode_t mode, char *out, size_t size)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        char temp_name[NAME_MAX_LEN];
        snprintf(temp_name, sizeof temp_name, ".%s.%ld.%d.tmp", name, (long)getpid(), attempt);
        if (!join(out, size, dir, temp_name)) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0) {
            if (fchmod(fd, mode) == 0)   /* exact bits, whatever the umask */
                return fd;
            int err = errno;
            close(fd);
            unlink(out);
            errno = err;
            return -1;
        }
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

/* Closes a temporary file once written (rc: how the writing went); on any
 * failure removes it and returns -1 with the errno of the first failure.
 * close() counts: some file systems report a full disk only there. */
static int finish_temp(int fd, int rc, const char *temp)
{
    int err = errno;
    if (close(fd) != 0 && errno != EINTR && rc == 0) {
        rc = -1;
        err = errno;
    }
    if (rc != 0) {
        unlink(temp);
        errno = err;
    }
    return rc;
}

static int store_failed(cs_cache *c, const char *what, int err)
{
    set_warning(c, "%s cache directory %s: %s; using the built file uncached", what, c->dir,
                strerror(err));
    return -1;
}

int cs_cache_store(cs_cache *c, const char *key, const char *suffix, const char *built,
                   char *path, size_t path_size)
{
    char name[ENTRY_NAME_MAX], entry[sizeof c->dir], meta[sizeof c->dir];
    char temp_entry[sizeof c->dir], temp_meta[sizeof c->dir];
    if (path && path_size)
        path[0] = '\0';
    if (!c->dir[0]) {
        if (!c->warning[0])
            set_warning(c, "running without a cache");
        return -1;
    }
    if (!entry_paths(c, key, suffix, name, entry, meta, sizeof entry))
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
    int out = create_temp(c->dir, name, mode, temp_entry, sizeof temp_entry);
    if (out < 0) {
        int err = errno;
        close(in);
        return store_failed(c, "cannot create a file in", err);
    }
    unsigned long long bytes;
    cs_hash128 sum;
    int rc = hash_stream(in, out, &bytes, &sum);
    int err = errno;
    close(in);
    errno = err;
    if (finish_temp(out, rc, temp_entry) != 0)
        return store_failed(c, "cannot write to", errno);

    /* Its metadata. */
    char text[META_MAX];
    int text_len = meta_text(text, sizeof text, name, bytes, sum);
    char meta_name[NAME_MAX_LEN];
    snprintf(meta_name, sizeof meta_name, "%s.meta", name);
    out = create_temp(c->dir, meta_name, 0600, temp_meta, sizeof temp_meta);
    if (out < 0) {
        err = errno;
        unlink(temp_entry);
        return store_failed(c, "cannot create a file in", err);
    }
    rc = write_full(out, text, (size_t)text_len);
    if (finish_temp(out, rc, temp_meta) != 0) {
        err = errno;
        unlink(temp_entry);
        return store_failed(c, "cannot write to", err);
    }

    /* Entry first, metadata last, as one step for readers (see the top). */
    int lock = lock_dir(c->dir, LOCK_EX);
    if (rename(temp_entry, entry) != 0) {
        err = errno;
        unlock_dir(lock);
        unlink(temp_entry);
        unlink(temp_meta);
        return store_failed(c, "cannot install an entry in", err);
    }
    if (rename(temp_meta, meta) != 0) {
        err = errno;
        unlink(entry);   /* never leave it paired with an older metadata file */
        unlink(meta);
        unlock_dir(lock);
        unlink(temp_meta);
        return store_failed(c, "cannot install an entry in", err);
    }
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
    int dfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return;
    if (!is_private_temp(c->dir, dfd)) {
        close(dfd);   /* the user's cache stays */
        return;
    }
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return;
    }
    /* Only flat files live here; a second pass catches what readdir skipped
     * while entries were being unlinked under it. */
    for (int pass = 0; pass < 2; pass++) {
        rewinddir(d);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                unlinkat(dirfd(d), e->d_name, 0);
        }
    }
    closedir(d);
    if (rmdir(c->dir) == 0)
        c->dir[0] = '\0';
}
