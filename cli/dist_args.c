/* What every rank of an MPI launch must be given alike, checked before
 * anything else (cli_dist_same_args).
 *
 * mpirun can start ranks with different arguments (`mpirun -n 1 cartsim
 * train --pop 8 : -n 1 cartsim train --pop 16`); ranks that disagree on what
 * they compute exchange arrays of different sizes (a heap overflow in
 * MPI_Allgatherv), wait for each other at different collectives (a hang), or
 * report a meaningless result. So before their first exchange, the ranks
 * compare a digest of everything that decides what they compute: the
 * command, every option of the program (cli_options.def) and every setting
 * of the library's table (sim/config.c), a file's contents where an option
 * names a file (--env PATH.env, --policy FILE). What is new in either table
 * is compared by itself. Only the settings below may differ: they say how a
 * rank computes, never what (DESIGN.md: the same results whatever the
 * threads, device, block or cache). A mismatch ends every rank with exit
 * status 2 and one line naming the first setting that differs and its values
 * on the ranks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jit.h"
#include "regular_file.h"

static const char *const per_rank[] = {"device", "threads", "block", "cc_timeout", "cache_max_mb", "no_cache"};

static bool may_differ(int id)
{
    if (id == OPT_CONFIG)   /* its path; what it sets is compared setting by setting */
        return true;
    const cs_setting_info *in = cli_setting(id);
    for (size_t k = 0; in && k < sizeof per_rank / sizeof per_rank[0]; k++)
        if (strcmp(in->name, per_rank[k]) == 0)
            return true;
    return false;
}

/* The value of option or setting `id` as --print-config spells it (a list's
 * items joined), "" when a is NULL (no command was parsed). */
static void value_of(const cli_args *a, int id, char *out, size_t size)
{
    out[0] = 0;
    if (!a)
        return;
    const cs_setting_info *in = cli_setting(id);
    if (in && in->kind == CS_SETTING_LIST)
        cs_config_get(&a->cfg, in->name, out, size);
    else
        cli_option_value(a, id, out, size);
}

/* Whether `id`'s value names a file whose contents count, not its name. */
static bool names_a_file(int id, const char *value)
{
    const cs_setting_info *in = cli_setting(id);
    size_t n = strlen(value);
    if (in && in->kind == CS_SETTING_TEXT)   /* the environment: cs_env_source_load's rule */
        return strchr(value, '/') || (n > 4 && strcmp(value + n - 4, ".env") == 0);
    return id == OPT_POLICY && (strchr(value, '/') || strchr(value, '.'));   /* cli_policy.c's rule */
}

/* FNV-1a of a file's bytes; 0 when it cannot be read (the command reports
 * that on every rank later). */
static uint64_t contents_digest(const char *path)
{
    cs_status st;
    char why[256];
    FILE *f = cs_fopen_regular(path, &st, why, sizeof why);
    if (!f)
        return 0;
    uint64_t h = CS_FNV1A_START;
    char buf[65536];
    for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;)
        h = cs_fnv1a(h, buf, n);
    bool bad = ferror(f);
    fclose(f);
    return bad ? 0 : h;
}

static uint64_t digest_of(const cli_args *a, int id, char *shown, size_t size)
{
    char value[2048];
    value_of(a, id, value, sizeof value);
    uint64_t h = cs_fnv1a(CS_FNV1A_START, value, strlen(value) + 1);
    snprintf(shown, size, "'%s'", value);
    if (a && names_a_file(id, value)) {
        uint64_t c = contents_digest(value);
        h = c;
        snprintf(shown, size, "'%s' (contents %016llx)", value, (unsigned long long)c);
    }
    return h;
}

int cli_dist_same_args(const cli_args *a, const char *command, int status)
{
    if (cli_dist_ranks() <= 1)
        return status;
    int n = 1 + OPT_COUNT + cli_setting_count();
    uint64_t *digest = calloc((size_t)n, sizeof *digest);
    if (!digest)
        return cli_error(CLI_EXIT_FAIL, "out of memory");
    char shown[512];
    digest[0] = cs_fnv1a(CS_FNV1A_START, command, strlen(command) + 1);
    for (int id = 0; id + 1 < n; id++)
        digest[id + 1] = may_differ(id) ? 0 : digest_of(a, id, shown, sizeof shown);
    int slot = -1;
    status = cli_dist_compare(status, digest, n, &slot);
    free(digest);
    if (status != 0 || slot < 0)
        return status;
    /* Every rank knows the slot: each says its value, the lowest rank tells. */
    if (slot == 0)
        snprintf(shown, sizeof shown, "'%s'", command);
    else
        digest_of(a, slot - 1, shown, sizeof shown);
    char what[64];
    snprintf(what, sizeof what, slot == 0 ? "the command" : "--%s", slot == 0 ? "" : cli_option_name(slot - 1));
    char values[1024], allowed[256] = "";
    cli_dist_gather_text(shown, values, sizeof values);
    size_t count = sizeof per_rank / sizeof per_rank[0];
    for (size_t k = 0; k < count; k++)
        snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s%s", k == 0 ? "" : k + 1 < count ? ", " : " and ",
                 per_rank[k]);
    return cli_error(CLI_EXIT_USAGE,
                     "the ranks were started with different settings: %s is %s (mpirun must give every rank the same "
                     "arguments; only %s may differ)",
                     what, values, allowed);
}
