/* Running the cartsim program from the tests, and the scratch directories
 * and files they work in (defined in tests/test_cli.c; every tests/test_*.c
 * builds into one binary). */
#ifndef CLI_TEST_H
#define CLI_TEST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    int status;                 /* exit status; -1 when killed or not started */
    bool timed_out;
    char *out, *err;            /* NUL-terminated */
    size_t out_len, err_len;
} cli_result;

const char *cli_test_bin(void);      /* $CARTSIM_BIN */
const char *cli_test_root(void);     /* $CARTSIM_ROOT: the checkout */
const char *cli_test_golden(void);   /* $CARTSIM_GOLDEN: ../shared/golden */
void cli_test_run(const char *const *args, double timeout_s, cli_result *r);
void cli_result_free(cli_result *r);

/* A fresh directory from a mkdtemp template ("/tmp/cartsim-x-XXXXXX", its
 * X's replaced in place); everything under a directory removed with it,
 * links removed, never followed; a file of n bytes. Each asserts. */
void cli_test_scratch(char *dir_template);
/* The same, with TMPDIR pointed at a tmp/ folder inside it (the compiler's
 * temporaries and any fallback cache land there). */
void cli_test_scratch_tmpdir(char *dir_template);
void cli_test_remove_tree(const char *dir);
void cli_test_write_file(const char *path, const void *data, size_t n);
/* A whole small file as text (at most size - 1 bytes). */
void cli_test_read_text(const char *path, char *out, size_t size);
/* In dir: `cc`, a C compiler that appends each -O flag it is given to
 * `levels.log`, then runs cc; their paths in wrapper and log. */
void cli_test_level_logging_cc(const char *dir, char wrapper[128], char log[128]);

/* `make ARGS` of the checkout into the build folder `build`, the calling
 * make's flags left out; its output (both streams) in out. Asserts that it
 * succeeds. */
void cli_test_make(const char *build, const char *args, char *out, size_t size);

#endif
