/* `cartsim dump`: the compiler's view of an environment (cs_dump). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_dump_defaults(cli_args *a)
{
    a->cfg.env = "cartpole";
    a->format = "text";
}

int cli_dump(cli_args *a)
{
    cli_policy pol;   /* a policy file's architecture, its weights unused */
    int prc = cli_policy_prepare(a, &pol);
    if (prc)
        return prc;
    char *text = NULL, error[1024];
    if (!strcmp(a->format, "cubin")) {
        /* The compiled CUDA kernel, as NVRTC writes it: binary, no newline. */
        void *cubin = NULL;
        size_t size = 0;
        cs_status st = cs_dump_cubin(&a->cfg, a->arch, &cubin, &size, error, sizeof error);
        cli_policy_free(&pol);
        int rc = st != CS_OK ? cli_lib_error(st, error) : cli_stdout_write(cubin, size) ? CLI_EXIT_OK : CLI_EXIT_FAIL;
        free(cubin);
        return rc;
    }
    if (a->arch) {
        cli_policy_free(&pol);
        return cli_error(CLI_EXIT_USAGE, "--arch goes with --format cubin");
    }
    cs_status st = cs_dump(&a->cfg, a->after, a->format, &text, error, sizeof error);
    cli_policy_free(&pol);
    int rc;
    if (st != CS_OK) {
        rc = cli_lib_error(st, error);
    } else if (!text) {
        rc = cli_error(CLI_EXIT_FAIL, "the library returned no text");
    } else {
        size_t len = strlen(text);
        bool ok = cli_stdout_write(text, len);
        /* Text output ends with a newline, like any text file. */
        if (ok && len > 0 && text[len - 1] != '\n')
            ok = cli_stdout_write("\n", 1);
        rc = ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    }
    free(text);
    return rc;
}
