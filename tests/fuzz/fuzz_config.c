/* libFuzzer target: the configuration file loader, cs_config_load (make fuzz).
 *
 * The loader reads a path, so each input is written to one file of this
 * process first (in $TMPDIR, removed at exit). Whatever loads is then read
 * back entry by entry, and the environment it names parsed with its
 * overrides: every string the loaded cs_config points to must be alive and
 * NUL-terminated. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cartsim.h"

static char path[4096];

static void remove_file(void)
{
    if (path[0])
        unlink(path);
}

static bool write_input(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/cartsim-fuzz-config-%ld.ini", tmp && *tmp ? tmp : "/tmp", (long)getpid());
        atexit(remove_file);
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return false;
    bool ok = size == 0 || write(fd, data, size) == (ssize_t)size;
    return close(fd) == 0 && ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!write_input(data, size))
        return 0;
    cs_config cfg;
    cs_config_init(&cfg);
    cs_config_file *file = NULL;
    char err[512];
    if (cs_config_load(&cfg, path, &file, err, sizeof err) != CS_OK) {
        if (!memchr(err, 0, sizeof err) || file)
            abort();   /* the message is a string; a failure hands back no file */
        return 0;
    }
    size_t total = 0;
    for (size_t i = 0; i < cs_config_file_count(file); i++) {
        const cs_config_entry *e = cs_config_file_entry(file, i);
        total += strlen(e->section) + strlen(e->key) + strlen(e->value);
        if (cs_config_file_get(file, e->section, e->key) == NULL)
            abort();   /* every entry can be found by its name */
    }
    if (cs_config_file_entry(file, cs_config_file_count(file)) != NULL)
        abort();
    total += strlen(cfg.env);
    for (int k = 0; k < cfg.n_params; k++)
        total += strlen(cfg.params[k]);
    /* A configuration that loaded is one the library can parse, overrides
     * and all; only for the built-in environments: a path could name
     * /dev/zero, and reading files is not what this target is about. */
    size_t n = strlen(cfg.env);
    if (!strchr(cfg.env, '/') && !(n >= 4 && strcmp(cfg.env + n - 4, ".env") == 0)) {
        char *text = NULL, error[1024];
        cs_dump(&cfg, "parse", "text", &text, error, sizeof error);
        free(text);
    }
    cs_config_file_free(file);
    return total == (size_t)-1;
}
