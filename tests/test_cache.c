/* The kernel cache and the content hash (jit/cache.c, jit/hash.c).
 *
 * Each cache test runs in a fresh directory from mkdtemp that it removes, with
 * TMPDIR pointed inside it so that fallback caches land there too.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_test.h"
#include "jit.h"

/* Criterion runs every test in its own process: this is per test. */
static char root[256];

static int make_writable(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (flag == FTW_D && !S_ISLNK(st->st_mode))
        chmod(path, 0700);
    return 0;
}

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/cartsim-test-XXXXXX");
    cli_test_scratch_tmpdir(root);
}

static void teardown(void)
{
    if (!root[0])
        return;
    nftw(root, make_writable, 16, FTW_PHYS);
    cli_test_remove_tree(root);
    root[0] = '\0';
}

TestSuite(cache, .init = setup, .fini = teardown);

static void in_root(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", root, name);
}

/* The whole file in a malloc'ed buffer (NULL when it cannot be read). */
static unsigned char *read_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    *n = len;
    return buf;
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Files in dir (without . and ..); *temps counts leftover temporaries. */
static int count_files(const char *dir, int *temps)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot list %s", dir);
    int n = 0;
    *temps = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        n++;
        if (strstr(e->d_name, ".tmp"))
            ++*temps;
    }
    closedir(d);
    return n;
}

/* A built object of `n` bytes whose content depends on `salt`. */
static unsigned char *make_built(const char *path, size_t n, unsigned salt)
{
    unsigned char *data = malloc(n);
    for (size_t i = 0; i < n; i++)
        data[i] = (unsigned char)((i * 131u + salt * 7u + (i >> 9)) ^ salt);
    cli_test_write_file(path, data, n);
    return data;
}

static void key_of(const char *text, char key[33])
{
    cs_hash_hex(cs_hash_bytes(text, strlen(text), (cs_hash128){0, 0}), key);
}

/* A cache in <root>/cache holding one stored entry: the fixture of the
 * corruption tests. */
typedef struct {
    cs_cache c;
    char key[33];
    char entry[4096], meta[4200];
    size_t size;
    unsigned char *data;
} stored;

static void store_one(stored *s, const char *suffix, size_t size)
{
    char dir[512], built[512];
    in_root(dir, sizeof dir, "cache");
    in_root(built, sizeof built, "built.bin");
    cs_cache_open(&s->c, dir);
    cr_assert_str_eq(s->c.dir, dir);
    cr_assert_str_eq(s->c.warning, "");
    key_of("cartpole step kernel", s->key);
    s->size = size;
    s->data = make_built(built, size, 1);
    cr_assert_eq(cs_cache_store(&s->c, s->key, suffix, built, s->entry, sizeof s->entry), 0,
                 "store failed: %s", s->c.warning);
    snprintf(s->meta, sizeof s->meta, "%s.meta", s->entry);
}

static void assert_gone(const stored *s)
{
    cr_assert_not(exists(s->entry), "entry should have been removed");
    cr_assert_not(exists(s->meta), "metadata should have been removed");
    cr_assert(strstr(s->c.warning, "corrupt"), "warning: %s", s->c.warning);
}

/* ---- hits and misses ---------------------------------------------------- */

Test(cache, store_then_lookup_returns_identical_bytes)
{
    stored s;
    store_one(&s, ".so", 200000);   /* several 64 KiB hash blocks */
    char want[4200];
    snprintf(want, sizeof want, "%s/%s.so", s.c.dir, s.key);
    cr_assert_str_eq(s.entry, want);

    char path[4096] = "";
    cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", path, sizeof path), 1, "%s", s.c.warning);
    cr_assert_str_eq(path, want);
    size_t n;
    unsigned char *got = read_bytes(path, &n);
    cr_assert_not_null(got);
    cr_assert_eq(n, s.size);
    cr_assert_eq(memcmp(got, s.data, n), 0);

    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0700, "a .so entry is 0700");
    cr_assert_eq(stat(s.meta, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600);
    int temps;
    cr_assert_eq(count_files(s.c.dir, &temps), 2, "the entry and its metadata, nothing else");
    cr_assert_eq(temps, 0);
    cr_assert_str_eq(s.c.warning, "");
    free(got);
    free(s.data);
    cs_cache_close(&s.c);
    cr_assert(exists(want), "closing keeps a persistent cache");
}

Test(cache, other_suffixes_are_private_files_and_separate_entries)
{
    stored s;
    store_one(&s, ".cubin", 1000);
    struct stat st;
    cr_assert_eq(stat(s.entry, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600);
    cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".cubin", NULL, 0), 1);
    cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", NULL, 0), 0, "same key, other suffix");
    free(s.data);
}

Test(cache, empty_entry_round_trips)
{
    stored s;
    store_one(&s, ".so", 0);
    char path[4096];
    cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", path, sizeof path), 1, "%s", s.c.warning);
    free(s.data);
}

Test(cache, unknown_key_misses)
{
    stored s;
    store_one(&s, ".so", 100);
    char other[33], path[4096] = "untouched";
    key_of("another kernel", other);
    cr_assert_eq(cs_cache_lookup(&s.c, other, ".so", path, sizeof path), 0);
    cr_assert_str_eq(path, "untouched");
    cr_assert_str_eq(s.c.warning, "", "a plain miss is no news");
    cr_assert(exists(s.entry), "other entries are left alone");
    free(s.data);
}

Test(cache, restore_replaces_an_entry)
{
    stored s;
    store_one(&s, ".so", 5000);
    char built[512], path[4096];
    in_root(built, sizeof built, "rebuilt.bin");
    unsigned char *data = make_built(built, 3000, 2);
    cr_assert_eq(cs_cache_store(&s.c, s.key, ".so", built, path, sizeof path), 0);
    cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", path, sizeof path), 1);
    size_t n;
    unsigned char *got = read_bytes(path, &n);
    cr_assert_eq(n, 3000);
    cr_assert_eq(memcmp(got, data, n), 0);
    int temps;
    cr_assert_eq(count_files(s.c.dir, &temps), 2);
    free(got);
    free(data);
    free(s.data);
}

/* ---- corruption --------------------------------------------------------- */

Test(cache, truncated_entry_is_removed_and_misses)
{
    stored s;
    store_one(&s, ".so", 70000);
    cr_assert_eq(truncate(s.entry, 69999), 0);
    cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", NULL, 0), 0);
    assert_gone(&s);
    free(s.data);
}

Test(cache, flipped_byte_is_removed_and_misses)
{
    stored s;
    store_one(&s, ".so", 70000);
    s.data[65600] ^= 0x10;   /* in the second hash block */
    cli_test_write_file(s.entry, s.data, s.size);
    cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", NULL, 0), 0);
    assert_gone(&s);
    free(s.data);
}

Test(cache, missing_metadata_is_removed_and_misses)
{
    stored s;
    store_one(&s, ".so", 1000);
    cr_assert_eq(unlink(s.meta), 0);
    cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", NULL, 0), 0);
    assert_gone(&s);
    free(s.data);
}

Test(cache, metadata_without_entry_is_removed_and_misses)
{
    stored s;
    store_one(&s, ".so", 1000);
    cr_assert_eq(unlink(s.entry), 0);
    cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", NULL, 0), 0);
    assert_gone(&s);
    free(s.data);
}

Test(cache, garbage_metadata_is_removed_and_misses)
{
    stored s;
    store_one(&s, ".so", 1000);
    cli_test_write_file(s.meta, "\x7f" "ELF garbage\n", 13);
    cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", NULL, 0), 0);
    assert_gone(&s);
    free(s.data);
}

Test(cache, foreign_metadata_tag_is_removed_and_misses)
{
    stored s;
    store_one(&s, ".so", 1000);
    size_t n;
    char *text = (char *)read_bytes(s.meta, &n);
    cr_assert(n > 15 && memcmp(text, "cartsim-cache 1", 15) == 0);
    text[14] = '9';   /* a format this version does not know */
    cli_test_write_file(s.meta, text, n);
    cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", NULL, 0), 0);
    assert_gone(&s);
    free(text);
    free(s.data);
}

Test(cache, oversized_metadata_is_removed_and_misses)
{
    stored s;
    store_one(&s, ".so", 1000);
    size_t n;
    unsigned char *text = read_bytes(s.meta, &n);
    unsigned char big[4096];
    memset(big, '\n', sizeof big);
    memcpy(big, text, n);   /* a valid record, then padding */
    cli_test_write_file(s.meta, big, sizeof big);
    cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", NULL, 0), 0);
    assert_gone(&s);
    free(text);
    free(s.data);
}

Test(cache, metadata_of_another_entry_is_rejected)
{
    stored s;
    store_one(&s, ".so", 1000);
    char built[512], other[33], other_entry[4096], other_meta[4200];
    in_root(built, sizeof built, "built.bin");
    key_of("another kernel", other);
    cr_assert_eq(cs_cache_store(&s.c, other, ".so", built, other_entry, sizeof other_entry), 0);
    snprintf(other_meta, sizeof other_meta, "%s.meta", other_entry);
    /* Same bytes, so size and checksum agree: only the name tells. */
    cr_assert_eq(rename(other_meta, s.meta), 0);
    cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", NULL, 0), 0);
    assert_gone(&s);
    free(s.data);
}

Test(cache, a_removed_entry_can_be_stored_again)
{
    stored s;
    store_one(&s, ".so", 1000);
    cr_assert_eq(truncate(s.entry, 10), 0);
    cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", NULL, 0), 0);
    char built[512], path[4096];
    in_root(built, sizeof built, "built.bin");
    cr_assert_eq(cs_cache_store(&s.c, s.key, ".so", built, path, sizeof path), 0);
    cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", path, sizeof path), 1);
    free(s.data);
}

/* ---- keys --------------------------------------------------------------- */

Test(cache, bad_keys_and_suffixes_are_rejected)
{
    char dir[512], built[512], path[4096];
    in_root(dir, sizeof dir, "cache");
    in_root(built, sizeof built, "built.bin");
    free(make_built(built, 100, 1));
    cs_cache c;
    cs_cache_open(&c, dir);
    const char *bad_keys[] = {
        "",
        "0123456789abcdef0123456789abcde",     /* 31 */
        "0123456789abcdef0123456789abcdef0",   /* 33 */
        "0123456789abcdef0123456789abcdeg",
        "../../../../../../../../../etc/x",
        "0123456789abcdef/123456789abcdef",
        "0123456789abcdef 123456789abcdef",
        NULL,
    };
    for (size_t i = 0; i < sizeof bad_keys / sizeof *bad_keys; i++) {
        c.warning[0] = '\0';
        cr_assert_eq(cs_cache_store(&c, bad_keys[i], ".so", built, path, sizeof path), -1,
                     "key %s", bad_keys[i] ? bad_keys[i] : "(null)");
        cr_assert_neq(c.warning[0], '\0');
        cr_assert_eq(cs_cache_lookup(&c, bad_keys[i], ".so", path, sizeof path), 0);
    }
    char key[33];
    key_of("k", key);
    const char *bad_suffixes[] = {"/x", ".so/", "/../../etc", ".so.meta",
                                  ".a-suffix-that-is-much-too-long-to-be-one", NULL};
    for (size_t i = 0; i < sizeof bad_suffixes / sizeof *bad_suffixes; i++) {
        cr_assert_eq(cs_cache_store(&c, key, bad_suffixes[i], built, path, sizeof path), -1);
        cr_assert_eq(cs_cache_lookup(&c, key, bad_suffixes[i], path, sizeof path), 0);
    }
    int temps;
    cr_assert_eq(count_files(dir, &temps), 0, "nothing was written");
    cr_assert_eq(count_files(root, &temps), 3, "nothing escaped the cache: cache, tmp, built");
}

Test(cache, a_path_buffer_too_small_is_refused)
{
    stored s;
    store_one(&s, ".so", 100);
    char built[512], small[8];
    in_root(built, sizeof built, "built.bin");
    cr_assert_eq(cs_cache_store(&s.c, s.key, ".so", built, small, sizeof small), -1);
    cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", small, sizeof small), 0);
    cr_assert(exists(s.entry), "the entry itself is fine");
    free(s.data);
}

/* ---- the directory ------------------------------------------------------ */

Test(cache, open_creates_missing_directories_private)
{
    char dir[512];
    in_root(dir, sizeof dir, "a/b/cache/");
    cs_cache c;
    cs_cache_open(&c, dir);
    cr_assert_str_eq(c.warning, "");
    cr_assert_str_eq(c.dir, dir);
    struct stat st;
    cr_assert_eq(stat(dir, &st), 0);
    cr_assert(S_ISDIR(st.st_mode));
    cr_assert_eq(st.st_mode & 0777, 0700);
    cs_cache_close(&c);
    cr_assert(exists(dir));
}

Test(cache, default_directory_follows_xdg_then_home)
{
    char xdg[512], home[512], want[600];
    cs_cache c;

    in_root(xdg, sizeof xdg, "xdg");
    setenv("XDG_CACHE_HOME", xdg, 1);
    cs_cache_open(&c, NULL);
    snprintf(want, sizeof want, "%s/cartsim", xdg);
    cr_assert_str_eq(c.dir, want);
    cr_assert_str_eq(c.warning, "");
    cr_assert(exists(want));

    in_root(home, sizeof home, "home");
    cr_assert_eq(mkdir(home, 0700), 0);
    setenv("XDG_CACHE_HOME", "relative/cache", 1);   /* invalid by the spec: ignored */
    setenv("HOME", home, 1);
    cs_cache_open(&c, NULL);
    snprintf(want, sizeof want, "%s/.cache/cartsim", home);
    cr_assert_str_eq(c.dir, want);
    cr_assert(exists(want));
    cr_assert_not(exists("relative"));

    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    cs_cache_open(&c, NULL);
    cr_assert(strstr(c.warning, "private temporary"), "%s", c.warning);
    cr_assert_neq(c.dir[0], '\0');
    cs_cache_close(&c);

    /* a home that does not exist is not made (as root, HOME=/nonexistent
     * made /nonexistent/.cache/cartsim): below an existing one, .cache is */
    char missing[600];
    in_root(missing, sizeof missing, "nonexistent");
    setenv("HOME", missing, 1);
    cs_cache_open(&c, NULL);
    cr_assert(strstr(c.warning, "HOME") && strstr(c.warning, "private temporary"), "%s", c.warning);
    cr_assert_not(exists(missing), "%s was created", missing);
    cs_cache_close(&c);
    unsetenv("HOME");
}

/* $CARTSIM_CACHE_LOCK_WAIT_S and $CARTSIM_CACHE_MAX_MB: a bad value is said
 * (the warning), not taken silently for the default; a wait has a bound. */
Test(cache, bad_environment_values_are_refused_and_waits_capped)
{
    char dir[512];
    in_root(dir, sizeof dir, "cache");
    const struct {
        const char *value;
        double want_ms;
        bool warned;
    } waits[] = {
        {"abc", 10000, true}, {"-1", 10000, true}, {"nan", 10000, true}, {"", 10000, false},
        {"inf", 3600000, true}, {"1e308", 3600000, true}, {"0", 0, false}, {"2.5", 2500, false},
    };
    for (size_t k = 0; k < sizeof waits / sizeof waits[0]; k++) {
        setenv("CARTSIM_CACHE_LOCK_WAIT_S", waits[k].value, 1);
        cs_cache c;
        cs_cache_open(&c, dir);
        cr_expect_eq(c.lock_wait_ms, waits[k].want_ms, "'%s': %g ms", waits[k].value, c.lock_wait_ms);
        if (waits[k].warned)
            cr_expect(strstr(c.warning, "CARTSIM_CACHE_LOCK_WAIT_S"), "'%s': warning '%s'", waits[k].value, c.warning);
        else
            cr_expect_str_eq(c.warning, "", "'%s'", waits[k].value);
        cs_cache_close(&c);
    }
    unsetenv("CARTSIM_CACHE_LOCK_WAIT_S");
    setenv("CARTSIM_CACHE_MAX_MB", "lots", 1);
    cs_cache c;
    cs_cache_open(&c, dir);
    cr_expect_eq(c.max_bytes, (long long)CS_CACHE_MAX_MB_DEFAULT << 20);
    cr_expect(strstr(c.warning, "CARTSIM_CACHE_MAX_MB"), "%s", c.warning);
    cs_cache_close(&c);
    unsetenv("CARTSIM_CACHE_MAX_MB");
}

/* An entry others may write (mode 0666) or that has another name (a hard
 * link, which someone else can keep and change) is not trusted: rebuilt. */
Test(cache, entries_writable_by_others_or_hard_linked_are_rebuilt)
{
    for (int which = 0; which < 3; which++) {
        stored s;
        store_one(&s, ".so", 1000);
        char other_name[512];
        in_root(other_name, sizeof other_name, "elsewhere.so");
        if (which == 0)
            cr_assert_eq(chmod(s.entry, 0666), 0);
        else if (which == 1)
            cr_assert_eq(chmod(s.meta, 0622), 0);
        else
            cr_assert_eq(link(s.entry, other_name), 0);
        cr_expect_eq(cs_cache_lookup(&s.c, s.key, ".so", NULL, 0), 0, "case %d was trusted", which);
        assert_gone(&s);
        free(s.data);
        cs_cache_close(&s.c);
        teardown();
        setup();
    }
}

Test(cache, an_empty_name_means_no_cache)
{
    char built[512], path[4096];
    in_root(built, sizeof built, "built.bin");
    free(make_built(built, 100, 1));
    char key[33];
    key_of("k", key);
    cs_cache c;
    cs_cache_open(&c, "");
    cr_assert_str_eq(c.dir, "");
    cr_assert_eq(cs_cache_lookup(&c, key, ".so", path, sizeof path), 0);
    cr_assert_eq(cs_cache_store(&c, key, ".so", built, path, sizeof path), -1);
    cr_assert_neq(c.warning[0], '\0');
    cs_cache_close(&c);
}

/* A refused directory: the warning names it, a private temporary cache under
 * $TMPDIR takes over, works, and goes away on close. */
static void assert_refused(const char *dir, const char *why)
{
    cs_cache c;
    cs_cache_open(&c, dir);
    cr_assert(strstr(c.warning, dir) && strstr(c.warning, why), "warning: %s", c.warning);
    cr_assert(strstr(c.warning, "using a private temporary cache"), "warning: %s", c.warning);
    char tmp[512];
    in_root(tmp, sizeof tmp, "tmp/");
    cr_assert_eq(strncmp(c.dir, tmp, strlen(tmp)), 0, "%s is not under $TMPDIR", c.dir);
    struct stat st;
    cr_assert_eq(stat(c.dir, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0700);
    cr_assert_eq(st.st_uid, geteuid());

    char built[512], key[33], path[4096], used[4096];
    in_root(built, sizeof built, "built.bin");
    free(make_built(built, 1000, 3));
    key_of("k", key);
    cr_assert_eq(cs_cache_store(&c, key, ".so", built, path, sizeof path), 0, "%s", c.warning);
    cr_assert_eq(cs_cache_lookup(&c, key, ".so", path, sizeof path), 1);
    int temps;
    if (strncmp(dir, root, strlen(root)) == 0 && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        cr_assert_eq(count_files(dir, &temps), 0, "nothing written to the refused directory");

    snprintf(used, sizeof used, "%s", c.dir);
    cs_cache_close(&c);
    cr_assert_not(exists(used), "close removes the private temporary cache");
    cr_assert_str_eq(c.dir, "");
}

Test(cache, a_world_writable_directory_is_refused)
{
    char dir[512];
    in_root(dir, sizeof dir, "shared");
    cr_assert_eq(mkdir(dir, 0700), 0);
    cr_assert_eq(chmod(dir, 0777), 0);
    assert_refused(dir, "writable by others");
}

Test(cache, a_group_writable_directory_is_refused)
{
    char dir[512];
    in_root(dir, sizeof dir, "team");
    cr_assert_eq(mkdir(dir, 0700), 0);
    cr_assert_eq(chmod(dir, 0770), 0);
    assert_refused(dir, "writable by others");
}

Test(cache, a_directory_of_another_user_is_refused)
{
    char dir[512];
    if (geteuid() == 0) {
        in_root(dir, sizeof dir, "theirs");
        cr_assert_eq(mkdir(dir, 0700), 0);
        cr_assert_eq(chown(dir, 65534, 65534), 0);
    } else {
        snprintf(dir, sizeof dir, "/");   /* root's */
    }
    assert_refused(dir, "owned by another user");
}

Test(cache, a_path_through_a_regular_file_falls_back)
{
    char file[512], dir[600];
    in_root(file, sizeof file, "plain");
    cli_test_write_file(file, "x", 1);
    snprintf(dir, sizeof dir, "%s/cache", file);
    assert_refused(dir, "cannot create");
}

Test(cache, an_unusable_tmpdir_falls_back_to_slash_tmp)
{
    char dir[512], file[512], tmp[600];
    in_root(dir, sizeof dir, "shared");
    cr_assert_eq(mkdir(dir, 0777), 0);
    cr_assert_eq(chmod(dir, 0777), 0);
    in_root(file, sizeof file, "plain");
    cli_test_write_file(file, "x", 1);
    snprintf(tmp, sizeof tmp, "%s/tmp", file);
    setenv("TMPDIR", tmp, 1);
    cs_cache c;
    cs_cache_open(&c, dir);
    cr_assert_eq(strncmp(c.dir, "/tmp/cartsim-", 13), 0, "%s", c.dir);
    cr_assert(strstr(c.warning, "writable by others"), "%s", c.warning);
    char used[4096];
    snprintf(used, sizeof used, "%s", c.dir);
    cs_cache_close(&c);
    cr_assert_not(exists(used));
}

Test(cache, stale_temporaries_are_swept_on_open)
{
    char dir[512], old[600], fresh[600];
    in_root(dir, sizeof dir, "cache");
    cs_cache c;
    cs_cache_open(&c, dir);
    snprintf(old, sizeof old, "%s/.0123.so.99.0.tmp", dir);
    snprintf(fresh, sizeof fresh, "%s/.4567.so.99.0.tmp", dir);
    cli_test_write_file(old, "x", 1);
    cli_test_write_file(fresh, "x", 1);
    struct timespec times[2] = {{.tv_sec = time(NULL) - 7200}, {.tv_sec = time(NULL) - 7200}};
    cr_assert_eq(utimensat(AT_FDCWD, old, times, 0), 0);
    cs_cache_open(&c, dir);
    cr_assert_not(exists(old), "a store killed two hours ago is debris");
    cr_assert(exists(fresh), "a store in progress is not");
}

/* ---- the directory chain (issue 16, 11) ---------------------------------- */

Test(cache, an_ancestor_writable_by_others_is_refused)
{
    char parent[512], dir[600];
    in_root(parent, sizeof parent, "open-to-all");
    cr_assert_eq(mkdir(parent, 0700), 0);
    cr_assert_eq(chmod(parent, 0777), 0);
    snprintf(dir, sizeof dir, "%s/cartsim", parent);
    cr_assert_eq(mkdir(dir, 0700), 0);
    cs_cache c;
    cs_cache_open(&c, dir);
    cr_assert(strstr(c.warning, "ancestor") && strstr(c.warning, parent) && strstr(c.warning, "writable by others"),
              "%s", c.warning);
    cr_assert_neq(strcmp(c.dir, dir), 0, "the directory under it is not used");
    cs_cache_close(&c);

    /* Sticky, as /tmp: others cannot replace what is ours there. */
    cr_assert_eq(chmod(parent, 01777), 0);
    cs_cache_open(&c, dir);
    cr_assert_str_eq(c.warning, "");
    cr_assert_str_eq(c.dir, dir);
    cs_cache_close(&c);
}

Test(cache, an_ancestor_of_another_user_is_refused)
{
    if (geteuid() != 0) {
        teardown();
        cr_skip_test("only root can give a directory away");
    }
    char parent[512], dir[600];
    in_root(parent, sizeof parent, "theirs");
    cr_assert_eq(mkdir(parent, 0755), 0);
    snprintf(dir, sizeof dir, "%s/cartsim", parent);
    cr_assert_eq(mkdir(dir, 0700), 0);
    cr_assert_eq(chown(parent, 12345, 12345), 0);
    cs_cache c;
    cs_cache_open(&c, dir);
    cr_assert(strstr(c.warning, "ancestor") && strstr(c.warning, "owned by another user"), "%s", c.warning);
    cs_cache_close(&c);
}

/* ---- entries that are not files (issue 16, 2) ---------------------------- */

Test(cache, a_fifo_in_place_of_an_entry_or_its_metadata_is_rebuilt_not_waited_on)
{
    for (int which = 0; which < 2; which++) {
        stored s;
        store_one(&s, ".so", 1000);
        const char *victim = which ? s.meta : s.entry;
        cr_assert_eq(unlink(victim), 0);
        cr_assert_eq(mkfifo(victim, 0600), 0);
        /* A blocking open would wait here for a writer that never comes. */
        cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", NULL, 0), 0);
        assert_gone(&s);
        char built[512], path[4096];
        in_root(built, sizeof built, "built.bin");
        cr_assert_eq(cs_cache_store(&s.c, s.key, ".so", built, path, sizeof path), 0, "%s", s.c.warning);
        cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", NULL, 0), 1, "rebuilt");
        free(s.data);
        cs_cache_close(&s.c);
        teardown();
        setup();
    }
}

/* A store writes as every output is written (jit/output_file.c): what is
 * not a regular file at the entry's name (a FIFO made between the lookup and
 * the store, say) is left as it is and the run goes on uncached; a temporary
 * name taken by a FIFO or a link is never opened. */
Test(cache, a_store_neither_replaces_nor_follows_what_is_not_a_regular_file)
{
    char dir[512], built[512], name[4200], victim[512];
    in_root(dir, sizeof dir, "cache");
    in_root(built, sizeof built, "built.bin");
    in_root(victim, sizeof victim, "victim");
    free(make_built(built, 1000, 1));
    cli_test_write_file(victim, "precious", 8);
    cs_cache c;
    cs_cache_open(&c, dir);
    char key[33], path[4096];
    key_of("fifo", key);
    snprintf(name, sizeof name, "%s/%s.so", dir, key);
    cr_assert_eq(mkfifo(name, 0600), 0);
    cr_assert_eq(cs_cache_store(&c, key, ".so", built, path, sizeof path), -1);
    cr_expect(strstr(c.warning, "a FIFO") && strstr(c.warning, "using the built file uncached"), "%s", c.warning);
    struct stat st;
    cr_assert_eq(lstat(name, &st), 0);
    cr_expect(S_ISFIFO(st.st_mode), "the FIFO was replaced");
    /* links where the old scheme's temporaries would be: not followed */
    key_of("link", key);
    for (int k = 0; k < 100; k++) {
        snprintf(name, sizeof name, "%s/.%s.so.%d.%d.tmp", dir, key, (int)getpid(), k);
        cr_assert_eq(symlink(victim, name), 0);
    }
    cr_assert_eq(cs_cache_store(&c, key, ".so", built, path, sizeof path), 0, "%s", c.warning);
    cr_expect_eq(cs_cache_lookup(&c, key, ".so", NULL, 0), 1);
    size_t n;
    unsigned char *v = read_bytes(victim, &n);
    cr_expect(n == 8 && memcmp(v, "precious", 8) == 0, "the link's target was written");
    free(v);
    cs_cache_close(&c);
}

Test(cache, an_entry_owned_by_another_user_is_rebuilt)
{
    if (geteuid() != 0) {
        teardown();
        cr_skip_test("only root can give a file away");
    }
    stored s;
    store_one(&s, ".so", 1000);
    cr_assert_eq(chown(s.entry, 12345, 12345), 0);
    cr_assert_eq(cs_cache_lookup(&s.c, s.key, ".so", NULL, 0), 0);
    assert_gone(&s);
    free(s.data);
}

/* ---- the lock is waited on for a bounded time (issue 16, 3) -------------- */

Test(cache, a_stopped_lock_holder_costs_a_bounded_wait_and_is_named)
{
    char dir[512], built[512];
    in_root(dir, sizeof dir, "cache");
    in_root(built, sizeof built, "built.bin");
    free(make_built(built, 1000, 1));
    cs_cache c;
    cs_cache_open(&c, dir);
    cr_assert_str_eq(c.warning, "");
    c.lock_wait_ms = 300;
    pid_t holder = fork();
    cr_assert_geq(holder, 0);
    if (holder == 0) {   /* takes the lock, then is stopped as by Ctrl-Z */
        int fd = open(dir, O_RDONLY | O_DIRECTORY);
        if (fd < 0 || flock(fd, LOCK_EX) != 0)
            _exit(1);
        raise(SIGSTOP);
        _exit(0);
    }
    int ws;
    cr_assert_eq(waitpid(holder, &ws, WUNTRACED), holder);
    cr_assert(WIFSTOPPED(ws), "the holder did not stop");
    char key[33], path[4096];
    key_of("k", key);
    int rc = cs_cache_store(&c, key, ".so", built, path, sizeof path);
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    cr_assert_eq(rc, -1, "stored while another process held the lock");
    char pid_text[32];
    snprintf(pid_text, sizeof pid_text, "pid %ld", (long)holder);
    cr_assert(strstr(c.warning, "locked") && strstr(c.warning, pid_text) && strstr(c.warning, "without the cache"),
              "%s", c.warning);
    cr_assert_str_eq(c.dir, "", "the rest of the run goes without the cache");
    cr_assert_eq(cs_cache_lookup(&c, key, ".so", NULL, 0), 0);
    int temps;
    cr_assert_eq(count_files(dir, &temps), 0, "nothing left behind");
}

/* ---- build directories (issue 16, 9) ------------------------------------- */

Test(cache, build_directories_of_dead_processes_are_swept_on_open)
{
    char dir[512];
    in_root(dir, sizeof dir, "cache");
    cs_cache c;
    cs_cache_open(&c, dir);
    pid_t dead = fork();
    cr_assert_geq(dead, 0);
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    char orphan[700], mine[700], file[800];
    snprintf(orphan, sizeof orphan, "%s/.build-%ld-0badf00d", dir, (long)dead);
    snprintf(mine, sizeof mine, "%s/.build-%ld-00c0ffee", dir, (long)getpid());
    cr_assert_eq(mkdir(orphan, 0700), 0);
    cr_assert_eq(mkdir(mine, 0700), 0);
    snprintf(file, sizeof file, "%s/kernel.c", orphan);
    cli_test_write_file(file, "int x;", 6);
    cs_cache_close(&c);
    cs_cache_open(&c, dir);
    cr_assert_not(exists(orphan), "the build of a process that is gone");
    cr_assert(exists(mine), "a build in progress stays");
    cs_cache_close(&c);
    rmdir(mine);
}

Test(cache, a_build_directory_is_inside_the_cache_and_removed_whole)
{
    char dir[512];
    in_root(dir, sizeof dir, "cache");
    cs_cache c;
    cs_cache_open(&c, dir);
    cs_build_dir b;
    cr_assert_eq(cs_cache_build_dir(&c, &b), 0);
    char file[4300];
    snprintf(file, sizeof file, "%s/ccXYZ.s", b.path);
    cli_test_write_file(file, "x", 1);
    char inside[700];
    snprintf(inside, sizeof inside, "%s/%s/ccXYZ.s", dir, b.name);
    cr_assert(exists(inside), "%s", inside);
    cs_build_dir_remove(&b);
    int temps;
    cr_assert_eq(count_files(dir, &temps), 0);
    cs_cache_close(&c);
}

/* ---- eviction (issue 18, 9) ------------------------------------------------ */

static void age(const char *dir, const char *key, const char *suffix, long seconds_ago)
{
    char meta[700];
    snprintf(meta, sizeof meta, "%s/%s%s.meta", dir, key, suffix);
    struct timespec t[2] = {{.tv_sec = time(NULL) - seconds_ago}, {.tv_sec = time(NULL) - seconds_ago}};
    cr_assert_eq(utimensat(AT_FDCWD, meta, t, 0), 0, "%s", meta);
}

Test(cache, stores_evict_the_least_recently_used_down_to_the_bound)
{
    char dir[512], built[512], path[4096];
    in_root(dir, sizeof dir, "cache");
    in_root(built, sizeof built, "built.bin");
    free(make_built(built, 100000, 1));
    cs_cache c;
    cs_cache_open(&c, dir);
    c.max_bytes = 0;   /* no bound while filling */
    char keys[4][33];
    for (int k = 0; k < 4; k++) {
        char text[24];
        snprintf(text, sizeof text, "kernel %d", k);
        key_of(text, keys[k]);
        cr_assert_eq(cs_cache_store(&c, keys[k], ".so", built, path, sizeof path), 0, "%s", c.warning);
    }
    /* Used an hour, two, three and four hours ago; then key 3 (the oldest) is used now. */
    for (int k = 0; k < 4; k++)
        age(dir, keys[k], ".so", 3600L * (k + 1));
    cr_assert_eq(cs_cache_lookup(&c, keys[3], ".so", NULL, 0), 1);
    /* Room for three pairs: one more store evicts two, the least recently used. */
    c.max_bytes = 3 * 100200;
    char fresh[33];
    key_of("kernel new", fresh);
    cr_assert_eq(cs_cache_store(&c, fresh, ".so", built, path, sizeof path), 0, "%s", c.warning);
    cr_assert_eq(cs_cache_lookup(&c, fresh, ".so", NULL, 0), 1, "the new entry stays");
    cr_assert_eq(cs_cache_lookup(&c, keys[3], ".so", NULL, 0), 1, "used just now: stays");
    cr_assert_eq(cs_cache_lookup(&c, keys[0], ".so", NULL, 0), 1, "the most recent of the rest stays");
    cr_assert_eq(cs_cache_lookup(&c, keys[2], ".so", NULL, 0), 0, "evicted");
    cr_assert_eq(cs_cache_lookup(&c, keys[1], ".so", NULL, 0), 0, "evicted");
    cs_cache_item *items;
    size_t n;
    unsigned long long total;
    cr_assert_eq(cs_cache_list(&c, &items, &n, &total), 0);
    cr_assert_eq(n, 3);
    cr_assert_leq(total, (unsigned long long)c.max_bytes);
    free(items);
    cs_cache_close(&c);
}

Test(cache, entries_used_in_the_last_minute_are_never_evicted)
{
    char dir[512], built[512], path[4096];
    in_root(dir, sizeof dir, "cache");
    in_root(built, sizeof built, "built.bin");
    free(make_built(built, 100000, 1));
    cs_cache c;
    cs_cache_open(&c, dir);
    c.max_bytes = 1;   /* nothing fits */
    char a[33], b[33];
    key_of("a", a);
    key_of("b", b);
    cr_assert_eq(cs_cache_store(&c, a, ".so", built, path, sizeof path), 0);
    cr_assert_eq(cs_cache_store(&c, b, ".so", built, path, sizeof path), 0);
    cr_assert_eq(cs_cache_lookup(&c, a, ".so", NULL, 0), 1, "another process may be loading it");
    cs_cache_close(&c);
}

Test(cache, an_evicted_entry_stays_readable_through_an_open_descriptor)
{
    stored s;
    store_one(&s, ".so", 5000);
    int fd = cs_cache_open_entry(&s.c, s.key, ".so");
    cr_assert_geq(fd, 0);
    cr_assert_gt(cs_cache_clear(&s.c, NULL), 0);
    cr_assert_not(exists(s.entry));
    unsigned char buf[5000];
    cr_assert_eq(read(fd, buf, sizeof buf), 5000);
    cr_assert_eq(memcmp(buf, s.data, 5000), 0);
    close(fd);
    free(s.data);
}

/* ---- degraded stores ---------------------------------------------------- */

static void assert_store_degrades(cs_cache *c, const char *dir, const char *built)
{
    char key[33], path[4096] = "untouched";
    key_of("k", key);
    c->warning[0] = '\0';
    cr_assert_eq(cs_cache_store(c, key, ".so", built, path, sizeof path), -1);
    cr_assert(strstr(c->warning, "using the built file"), "warning: %s", c->warning);
    cr_assert_str_eq(path, "");
    cr_assert_eq(cs_cache_lookup(c, key, ".so", path, sizeof path), 0);
    int temps;
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
        cr_assert_eq(count_files(dir, &temps), 0, "no entry, no temporary left behind");
    }
}

Test(cache, a_read_only_directory_degrades)
{
    if (geteuid() == 0) {
        teardown();   /* a skipped test gets no .fini */
        cr_skip_test("root ignores permission bits (a_vanished_directory_degrades covers this)");
    }
    char dir[512], built[512];
    in_root(dir, sizeof dir, "cache");
    in_root(built, sizeof built, "built.bin");
    free(make_built(built, 1000, 1));
    cs_cache c;
    cs_cache_open(&c, dir);
    cr_assert_eq(chmod(dir, 0500), 0);
    assert_store_degrades(&c, dir, built);
    chmod(dir, 0700);
}

Test(cache, a_vanished_directory_degrades)
{
    char dir[512], built[512];
    in_root(dir, sizeof dir, "cache");
    in_root(built, sizeof built, "built.bin");
    free(make_built(built, 1000, 1));
    cs_cache c;
    cs_cache_open(&c, dir);
    cr_assert_str_eq(c.dir, dir);
    /* Replaced by a regular file under the running program. */
    cr_assert_eq(rmdir(dir), 0);
    cli_test_write_file(dir, "x", 1);
    assert_store_degrades(&c, dir, built);
}

Test(cache, a_full_disk_degrades)
{
    char dir[512], built[512];
    in_root(dir, sizeof dir, "cache");
    in_root(built, sizeof built, "built.bin");
    free(make_built(built, 100000, 1));
    cs_cache c;
    cs_cache_open(&c, dir);
    /* A file size limit fails writes with EFBIG, as ENOSPC would. */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {.rlim_cur = 4096, .rlim_max = RLIM_INFINITY};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    assert_store_degrades(&c, dir, built);
    cr_assert(strstr(c.warning, strerror(EFBIG)), "warning: %s", c.warning);
}

Test(cache, a_missing_built_file_is_not_stored)
{
    char dir[512], built[512], key[33], path[4096];
    in_root(dir, sizeof dir, "cache");
    in_root(built, sizeof built, "no-such-file");
    key_of("k", key);
    cs_cache c;
    cs_cache_open(&c, dir);
    cr_assert_eq(cs_cache_store(&c, key, ".so", built, path, sizeof path), -1);
    cr_assert(strstr(c.warning, "no-such-file"), "%s", c.warning);
    int temps;
    cr_assert_eq(count_files(dir, &temps), 0);
}

/* ---- concurrency -------------------------------------------------------- */

/* Forks `n` children that wait on one pipe, so they start together, and each
 * run body(i); returns how many exited with status 0. */
static int run_together(int n, int (*body)(int i, const char *dir), const char *dir)
{
    int gate[2];
    cr_assert_eq(pipe(gate), 0);
    pid_t pids[16];
    for (int i = 0; i < n; i++) {
        pids[i] = fork();
        cr_assert_neq(pids[i], -1);
        if (pids[i] == 0) {
            close(gate[1]);
            char b;
            while (read(gate[0], &b, 1) < 0 && errno == EINTR) {
            }
            _exit(body(i, dir));
        }
    }
    close(gate[0]);
    close(gate[1]);   /* opens the gate: every read returns 0 */
    int ok = 0;
    for (int i = 0; i < n; i++) {
        int status;
        cr_assert_eq(waitpid(pids[i], &status, 0), pids[i]);
        ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    return ok;
}

static int store_same_key(int i, const char *dir)
{
    (void)i;
    char built[512], key[33], path[4096], want[4200];
    in_root(built, sizeof built, "built.bin");
    key_of("the same kernel", key);
    cs_cache c;
    cs_cache_open(&c, dir);
    if (strcmp(c.dir, dir) != 0)
        return 2;
    snprintf(want, sizeof want, "%s/%s.so", dir, key);
    return cs_cache_store(&c, key, ".so", built, path, sizeof path) == 0 && strcmp(path, want) == 0
               ? 0
               : 1;
}

Test(cache, eight_concurrent_stores_of_one_key_all_succeed)
{
    char dir[512], built[512], key[33], path[4096];
    in_root(dir, sizeof dir, "cache");
    in_root(built, sizeof built, "built.bin");
    unsigned char *data = make_built(built, 150000, 5);
    key_of("the same kernel", key);
    cs_cache c;
    cs_cache_open(&c, dir);
    for (int round = 0; round < 10; round++) {
        cr_assert_eq(run_together(8, store_same_key, dir), 8, "round %d", round);
        int temps;
        cr_assert_eq(count_files(dir, &temps), 2, "exactly one entry and its metadata");
        cr_assert_eq(temps, 0);
    }
    cr_assert_eq(cs_cache_lookup(&c, key, ".so", path, sizeof path), 1, "%s", c.warning);
    size_t n;
    unsigned char *got = read_bytes(path, &n);
    cr_assert_eq(n, 150000);
    cr_assert_eq(memcmp(got, data, n), 0);
    free(got);
    free(data);
}

/* Builds need not be bit-identical: writers of one key with different
 * objects, and readers meanwhile. A reader must never accept a mismatched
 * pair nor take a store in progress for corruption. */
#define WRITERS 4

static int store_or_look(int i, const char *dir)
{
    char key[33], path[4096];
    key_of("racy kernel", key);
    cs_cache c;
    cs_cache_open(&c, dir);
    if (i < WRITERS) {
        char built[512], name[32];
        snprintf(name, sizeof name, "built%d.bin", i);
        in_root(built, sizeof built, name);
        for (int k = 0; k < 40; k++) {
            if (cs_cache_store(&c, key, ".so", built, path, sizeof path) != 0)
                return 1;
        }
        return 0;
    }
    for (int k = 0; k < 200; k++) {
        if (!cs_cache_lookup(&c, key, ".so", path, sizeof path)) {
            if (c.warning[0])
                return 3;   /* removed something a writer had just installed */
            continue;
        }
        size_t n;
        unsigned char *got = read_bytes(path, &n);
        if (!got)
            return 4;
        bool some_writer = n >= 1000 && n < 1000 + WRITERS && got[0] == (unsigned char)(n - 1000);
        free(got);
        if (!some_writer)
            return 5;
    }
    return 0;
}

Test(cache, readers_never_see_a_store_in_progress)
{
    char dir[512], path[4096], key[33];
    in_root(dir, sizeof dir, "cache");
    for (int w = 0; w < WRITERS; w++) {
        /* Writer w's object: 1000 + w bytes of the value w. */
        char built[512], name[32];
        unsigned char data[1000 + WRITERS];
        memset(data, w, sizeof data);
        snprintf(name, sizeof name, "built%d.bin", w);
        in_root(built, sizeof built, name);
        cli_test_write_file(built, data, 1000 + (size_t)w);
    }
    cs_cache c;
    cs_cache_open(&c, dir);
    cr_assert_eq(run_together(8, store_or_look, dir), 8);
    int temps;
    cr_assert_eq(count_files(dir, &temps), 2);
    cr_assert_eq(temps, 0);
    key_of("racy kernel", key);
    cr_assert_eq(cs_cache_lookup(&c, key, ".so", path, sizeof path), 1);
}

/* ---- the hash ----------------------------------------------------------- */

static cs_hash128 hash_of(const void *p, size_t n)
{
    return cs_hash_bytes(p, n, (cs_hash128){0, 0});
}

static bool same(cs_hash128 a, cs_hash128 b)
{
    return a.lo == b.lo && a.hi == b.hi;
}

Test(hash, same_input_same_output)
{
    const char *s = "def step(x): return x + 1";
    cr_assert(same(hash_of(s, strlen(s)), hash_of(s, strlen(s))));
    /* Alignment does not matter, only the bytes. */
    char shifted[64];
    memcpy(shifted + 1, s, strlen(s));
    cr_assert(same(hash_of(s, strlen(s)), hash_of(shifted + 1, strlen(s))));
}

Test(hash, known_different_inputs_differ)
{
    static const struct {
        const char *bytes;
        size_t n;
    } inputs[] = {
        {"", 0}, {"\0", 1}, {"\0\0", 2}, {"\0\0\0\0\0\0\0\0", 8}, {"\0\0\0\0\0\0\0\0\0", 9},
        {"a", 1}, {"b", 1}, {"ab", 2}, {"ba", 2}, {"abc", 3}, {"abcdefgh", 8}, {"abcdefghi", 9},
        {"abcdefgh\0", 9}, {"cartpole", 8}, {"cartpolf", 8}, {"-O2", 3}, {"-O3", 3},
    };
    size_t n = sizeof inputs / sizeof *inputs;
    cs_hash128 h[sizeof inputs / sizeof *inputs];
    for (size_t i = 0; i < n; i++)
        h[i] = hash_of(inputs[i].bytes, inputs[i].n);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++) {
            cr_assert(h[i].lo != h[j].lo && h[i].hi != h[j].hi, "inputs %zu and %zu", i, j);
        }
    }
}

Test(hash, every_single_bit_flip_changes_both_lanes)
{
    unsigned char buf[64];
    for (int i = 0; i < 64; i++)
        buf[i] = (unsigned char)(i * 37);
    cs_hash128 base = hash_of(buf, sizeof buf);
    for (int bit = 0; bit < 64 * 8; bit++) {
        buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        cs_hash128 h = hash_of(buf, sizeof buf);
        buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        cr_assert(h.lo != base.lo && h.hi != base.hi, "bit %d", bit);
        /* A good mix flips about half of the 128 bits. */
        int flipped = __builtin_popcountll(h.lo ^ base.lo) + __builtin_popcountll(h.hi ^ base.hi);
        cr_assert(flipped > 32 && flipped < 96, "bit %d flipped %d output bits", bit, flipped);
    }
}

Test(hash, the_seed_chains)
{
    cs_hash128 a = hash_of("abc", 3);
    cr_assert_not(same(cs_hash_bytes("abc", 3, (cs_hash128){1, 0}), a));
    cr_assert_not(same(cs_hash_bytes("abc", 3, (cs_hash128){0, 1}), a));
    /* Chained fields are not concatenation: ("ab","c") and ("a","bc") differ. */
    cs_hash128 ab_c = cs_hash_bytes("c", 1, hash_of("ab", 2));
    cs_hash128 a_bc = cs_hash_bytes("bc", 2, hash_of("a", 1));
    cr_assert_not(same(ab_c, a_bc));
    cr_assert(same(ab_c, cs_hash_bytes("c", 1, hash_of("ab", 2))));
}

Test(hash, pinned_value)
{
    /* Changing the function invalidates every cache (harmless, but do it on
     * purpose): update this value then. */
    char hex[33];
    cs_hash_hex(hash_of("", 0), hex);
    cr_assert_str_eq(hex, "806fa890ed4c1a0d9cbc10bca2db81ff");
}

Test(hash, hex_is_32_lowercase_digits_high_lane_first)
{
    char hex[34];
    memset(hex, 'x', sizeof hex);
    cs_hash_hex((cs_hash128){.lo = 0x0123456789abcdefULL, .hi = 0xfedcba9876543210ULL}, hex);
    cr_assert_str_eq(hex, "fedcba98765432100123456789abcdef");
    cr_assert_eq(hex[33], 'x', "writes exactly 33 bytes");

    cs_hash_hex(hash_of("cartsim", 7), hex);
    cr_assert_eq(strlen(hex), 32);
    for (int i = 0; i < 32; i++)
        cr_assert(strchr("0123456789abcdef", hex[i]) && hex[i], "digit %d: %c", i, hex[i]);
}

/* An entry's record may say what it holds (cs_cache_describe, from the
 * kernel's first line): it still verifies, cs_cache_list reads it back, a
 * record without it (written before) verifies too, and clearing counts each
 * entry once, not its two files. */
Test(cache, records_say_what_an_entry_holds_and_clear_counts_entries)
{
    char dir[512], built[512], path[4096];
    in_root(dir, sizeof dir, "cache");
    in_root(built, sizeof built, "built.bin");
    free(make_built(built, 3000, 1));
    cs_cache c;
    cs_cache_open(&c, dir);
    char described[33], plain[33];
    key_of("described", described);
    key_of("plain", plain);
    cs_cache_describe(&c, "/* cartsim kernel: cartpole (CartPole-v1), f64, fusion full, unroll 4, C dialect */\nint x;\n",
                      "cpu");
    cr_assert_str_eq(c.what, "cartpole (CartPole-v1), f64, fusion full, unroll 4, cpu");
    cr_assert_eq(cs_cache_store(&c, described, ".so", built, path, sizeof path), 0, "%s", c.warning);
    cs_cache_describe(&c, "int x;\n", "cpu");   /* not a kernel's source: nothing to say */
    cr_assert_str_eq(c.what, "");
    cr_assert_eq(cs_cache_store(&c, plain, ".so", built, path, sizeof path), 0, "%s", c.warning);
    cr_assert_eq(cs_cache_lookup(&c, described, ".so", NULL, 0), 1, "a described entry verifies");
    cr_assert_eq(cs_cache_lookup(&c, plain, ".so", NULL, 0), 1, "a record without a description verifies");
    cs_cache_item *items;
    size_t n;
    unsigned long long total;
    cr_assert_eq(cs_cache_list(&c, &items, &n, &total), 0);
    cr_assert_eq(n, 2);
    for (size_t k = 0; k < n; k++)
        cr_assert_str_eq(items[k].what, strncmp(items[k].name, described, 32) == 0
                                            ? "cartpole (CartPole-v1), f64, fusion full, unroll 4, cpu"
                                            : "");
    free(items);
    long leftovers = -1;
    cr_assert_eq(cs_cache_clear(&c, &leftovers), 2, "two entries, four files");
    cr_assert_eq(leftovers, 0);
    cs_cache_close(&c);
}
