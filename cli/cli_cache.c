/* cartsim cache [list|size|clear]: what the kernel cache holds, and emptying it. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "jit.h"

static void print_mib(cli_buf *b, unsigned long long bytes)
{
    cli_buf_printf(b, "%.1f MiB", (double)bytes / 1048576.0);
}

static void summary(cli_buf *b, const cs_cache *c, size_t count, unsigned long long total)
{
    cli_buf_printf(b, "%s: %zu kernel%s, ", c->dir, count, count == 1 ? "" : "s");
    print_mib(b, total);
    cli_buf_str(b, " of ");
    print_mib(b, (unsigned long long)c->max_bytes);
    cli_buf_str(b, " (least recently used kernels go beyond that; $CARTSIM_CACHE_MAX_MB)\n");
}

int cli_cache(cli_args *a)
{
    const char *action = a->n_positional ? a->positional[0] : "list";
    bool list = strcmp(action, "list") == 0, size = strcmp(action, "size") == 0, clear = strcmp(action, "clear") == 0;
    if (!list && !size && !clear)
        return cli_error(CLI_EXIT_USAGE, "cache: '%s' is not list, size or clear", action);
    cs_cache c;
    cs_cache_open(&c, a->cfg.cache_dir);
    if (!c.dir[0] || c.warning[0]) {
        int rc = cli_error(CLI_EXIT_FAIL, "no kernel cache to %s: %s", action, c.warning[0] ? c.warning : "none");
        cs_cache_close(&c);
        return rc;
    }
    if (a->cfg.cache_max_mb > 0)
        c.max_bytes = a->cfg.cache_max_mb * 1048576LL;
    cli_buf b = {0};
    int rc = CLI_EXIT_OK;
    if (clear) {
        long leftovers;
        long removed = cs_cache_clear(&c, &leftovers);
        if (removed < 0)
            rc = cli_error(CLI_EXIT_FAIL, "cannot clear %s%s%s", c.dir, c.warning[0] ? ": " : "", c.warning);
        else if (leftovers)
            cli_buf_printf(&b, "%s: removed %ld kernel%s and %ld leftover%s of interrupted builds\n", c.dir, removed,
                           removed == 1 ? "" : "s", leftovers, leftovers == 1 ? "" : "s");
        else
            cli_buf_printf(&b, "%s: removed %ld kernel%s\n", c.dir, removed, removed == 1 ? "" : "s");
    } else {
        cs_cache_item *items;
        size_t count;
        unsigned long long total;
        if (cs_cache_list(&c, &items, &count, &total) != 0) {
            rc = cli_error(CLI_EXIT_FAIL, "cannot list %s", c.dir);
        } else {
            if (list && count)
                cli_buf_printf(&b, "%-19s  %9s  %s\n", "last use", "size", "kernel (file)");
            for (size_t k = 0; list && k < count; k++) {
                char when[32] = "?";
                time_t t = (time_t)items[k].last_use;
                struct tm tm;
                if (localtime_r(&t, &tm))
                    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
                cli_buf_printf(&b, "%-19s  %5.1f KiB  %s (%s)\n", when, (double)items[k].bytes / 1024.0,
                               items[k].what[0] ? items[k].what : "written before cartsim described kernels",
                               items[k].name);
            }
            summary(&b, &c, count, total);
            free(items);
        }
    }
    cs_cache_close(&c);
    if (rc == CLI_EXIT_OK)
        rc = cli_buf_print(&b);
    cli_buf_free(&b);
    return rc;
}
