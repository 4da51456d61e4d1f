/* libFuzzer target: the configuration file loader, cs_config_load (make fuzz).
 *
 * The loader reads a path, so each input is written to one file of this
 * process first (fuzz_input.h). Whatever loads is then read
 * back entry by entry, and the environment it names parsed with its
 * overrides: every string the loaded cs_config points to must be alive and
 * NUL-terminated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cartsim.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fuzz_write_input("config", "ini", data, size))
        return 0;
    cs_config cfg;
    cs_config_init(&cfg);
    cs_config_file *file = NULL;
    char err[512];
    if (cs_config_load(&cfg, fuzz_input_path, &file, err, sizeof err) != CS_OK) {
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
