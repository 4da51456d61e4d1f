/* libcartsim.so as a C programmer ships it: it exports exactly the functions
 * the installed header declares, has a SONAME, and needs no SDL2.
 * Environment: CARTSIM_LIB (the shared library), CARTSIM_ROOT (the sources). */
#include <ctype.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cartsim.h"
#include "cli_test.h"

#define MAX_NAMES 512

typedef struct {
    char name[MAX_NAMES][64];
    int n;
} name_list;

static const char *library(void)
{
    const char *l = getenv("CARTSIM_LIB");
    if (!l)
        cr_skip_test("CARTSIM_LIB not set: run through make check");
    return l;
}

static const char *root(void)
{
    const char *r = getenv("CARTSIM_ROOT");
    return r ? r : ".";
}

static bool has(const name_list *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->name[i], name))
            return true;
    return false;
}

static void add(name_list *l, const char *name)
{
    cr_assert_lt(l->n, MAX_NAMES);
    if (!has(l, name))
        snprintf(l->name[l->n++], sizeof l->name[0], "%s", name);
}

/* The functions the installed header declares: every "cs_NAME (" of the
 * header with its comments stripped by the preprocessor, less the types of
 * function pointers. */
static void declared_functions(name_list *out)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cc -E -P -x c '%s/sim/cartsim.h'", root());
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        for (char *p = line; (p = strstr(p, "cs_")); p++) {
            if (p > line && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
                continue;
            size_t n = 0;
            while (isalnum((unsigned char)p[n]) || p[n] == '_')
                n++;
            const char *after = p + n;
            while (*after == ' ')
                after++;
            /* "cs_status (*exchange)(...)" is a function pointer's type, not a function */
            if (*after == '(' && after[1] != '*' && n < 64) {
                char name[64];
                memcpy(name, p, n);
                name[n] = 0;
                add(out, name);
            }
        }
    }
    cr_assert_eq(pclose(f), 0, "%s failed", cmd);
}

/* The symbols the shared library defines for others to link, less the three
 * the linker itself defines in every shared object. */
static void exported_symbols(name_list *out)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s'", library());
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char addr[64], type[8], name[256];
        if (sscanf(line, "%63s %7s %255s", addr, type, name) != 3)
            continue;
        if (!strcmp(name, "_edata") || !strcmp(name, "_end") || !strcmp(name, "__bss_start"))
            continue;
        add(out, name);
    }
    cr_assert_eq(pclose(f), 0, "%s failed", cmd);
}

static name_list declared, exported;

Test(library, exports_exactly_the_functions_of_the_header)
{
    declared_functions(&declared);
    exported_symbols(&exported);
    cr_assert_gt(declared.n, 30, "the header parsed to %d functions", declared.n);
    for (int i = 0; i < exported.n; i++)
        cr_expect(has(&declared, exported.name[i]), "libcartsim.so exports %s, which cartsim.h does not declare",
                  exported.name[i]);
    for (int i = 0; i < declared.n; i++)
        cr_expect(has(&exported, declared.name[i]), "cartsim.h declares %s, which libcartsim.so does not export",
                  declared.name[i]);
}

static bool command_output_has(const char *cmd, const char *needle)
{
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    bool found = false;
    char line[1024];
    while (fgets(line, sizeof line, f))
        found |= strstr(line, needle) != NULL;
    cr_assert_eq(pclose(f), 0, "%s failed", cmd);
    return found;
}

Test(library, has_a_soname_with_the_major_version)
{
    char cmd[4096], soname[64];
    snprintf(cmd, sizeof cmd, "readelf -d '%s'", library());
    snprintf(soname, sizeof soname, "[libcartsim.so.%d]", CS_VERSION_MAJOR);
    cr_assert(command_output_has(cmd, "(SONAME)"), "%s shows no SONAME", cmd);
    cr_assert(command_output_has(cmd, soname), "the SONAME is not %s", soname);
}

/* A headless cluster user loads no SDL2: the viewer is the program's. */
Test(library, does_not_need_sdl2)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "ldd '%s'", library());
    cr_assert(command_output_has(cmd, "libc.so"), "%s did not list the libraries", cmd);
    cr_assert(!command_output_has(cmd, "SDL2"), "libcartsim.so loads SDL2 (%s)", cmd);
}

/* Output of `make OBJ` in a build folder of its own, with these CFLAGS. */
static void make_object(const char *build, const char *cflags, char *out, size_t out_size)
{
    char args[4200];
    snprintf(args, sizeof args, "CFLAGS='%s' '%s/jit/clock.o'", cflags, build);
    cli_test_make(build, args, out, out_size);
}

/* Objects depend on the configuration they were compiled with: other flags
 * (or an optional library installed since) compile them again. */
Test(library, a_change_of_flags_rebuilds_objects, .timeout = 60)
{
    char build[] = "/tmp/cartsim-flags-XXXXXX", out[8192], cmd[256];
    cr_assert_not_null(mkdtemp(build));
    make_object(build, "-O1", out, sizeof out);
    cr_expect(strstr(out, "jit/clock.c"), "the first build compiles:\n%s", out);
    make_object(build, "-O1", out, sizeof out);
    cr_expect(!strstr(out, "jit/clock.c"), "the same flags compile nothing again:\n%s", out);
    make_object(build, "-O0", out, sizeof out);
    cr_expect(strstr(out, "jit/clock.c"), "other flags compile again:\n%s", out);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", build);
    cr_assert_eq(system(cmd), 0);
}
