/* The floors of DESIGN.md, checked on the sources: every arrow points down.
 *
 *     cli/                      the program
 *     view/                     the program's SDL2 window
 *     train/   render/          trainers and pictures, above the runtime
 *     sim/                      the runtime (the public API)
 *     agents/                   policy fragments the runtime compiles into the step
 *     jit/                      the compiler
 *
 * A quoted include names a header of some room; a room may include its own
 * headers and those of the rooms below it (sim/'s cartsim.h is the public
 * contract, so agents/ may name its types: it sits beside sim/ in that sense). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROOMS 7
static const char *const room_names[ROOMS] = {"jit", "agents", "sim", "train", "render", "view", "cli"};

/* may_include[a][b]: a file of room a may include a header of room b. */
static const bool may_include[ROOMS][ROOMS] = {
    /*            jit    agents sim    train  render view   cli */
    /* jit    */ {true, false, false, false, false, false, false},
    /* agents */ {true, true, true, false, false, false, false},
    /* sim    */ {true, true, true, false, false, false, false},
    /* train  */ {true, true, true, true, false, false, false},
    /* render */ {true, true, true, true, true, false, false},
    /* view   */ {true, true, true, true, true, true, false},
    /* cli    */ {true, true, true, true, true, true, true},
};

static const char *root(void)
{
    const char *r = getenv("CARTSIM_ROOT");
    return r ? r : ".";
}

/* The room whose folder holds the header `name`, or -1 (a system header,
 * a generated one). */
static int room_of_header(const char *name)
{
    char path[1024];
    const char *slash = strchr(name, '/');
    if (slash)   /* "render/render.h": named from the top of the tree */
        for (int r = 0; r < ROOMS; r++)
            if (strlen(room_names[r]) == (size_t)(slash - name) && !strncmp(name, room_names[r], (size_t)(slash - name)))
                return r;
    for (int r = 0; r < ROOMS; r++) {
        snprintf(path, sizeof path, "%s/%s/%s", root(), room_names[r], name);
        FILE *f = fopen(path, "r");
        if (f) {
            fclose(f);
            return r;
        }
    }
    return -1;
}

/* Every quoted include of every .c and .h in room r that climbs a floor, as
 * "file: header" lines in out; returns how many. */
static int climbing_includes(int r, char *out, size_t out_size)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", root(), room_names[r]);
    int bad = 0;
    size_t used = 0;
    out[0] = 0;
    DIR *d = opendir(dir);
    if (!d && r == 5)
        return 0;   /* view/ is the one room a tree may lack (before the viewer left render/) */
    cr_assert(d, "cannot open %s (set CARTSIM_ROOT)", dir);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 3 || (strcmp(e->d_name + n - 2, ".c") && strcmp(e->d_name + n - 2, ".h")))
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        cr_assert(f, "cannot read %s", path);
        char line[1024];
        while (fgets(line, sizeof line, f)) {
            char header[256];
            if (sscanf(line, " # include \"%255[^\"]\"", header) != 1)
                continue;
            int to = room_of_header(header);
            if (to >= 0 && !may_include[r][to]) {
                bad++;
                used += (size_t)snprintf(out + used, used < out_size ? out_size - used : 0, "%s/%s: %s (%s/)\n",
                                         room_names[r], e->d_name, header, room_names[to]);
            }
        }
        fclose(f);
    }
    closedir(d);
    return bad;
}

Test(floors, no_include_climbs_a_floor)
{
    char report[8192];
    for (int r = 0; r < ROOMS; r++) {
        int bad = climbing_includes(r, report, sizeof report);
        cr_expect_eq(bad, 0, "includes that climb from %s/:\n%s", room_names[r], report);
    }
}

/* The check itself can fail: the headers it must catch are where it looks. */
Test(floors, the_check_knows_every_room_header)
{
    cr_assert_eq(room_of_header("jit.h"), 0);
    cr_assert_eq(room_of_header("agents.h"), 1);
    cr_assert_eq(room_of_header("cartsim.h"), 2);
    cr_assert_eq(room_of_header("train.h"), 3);
    cr_assert_eq(room_of_header("cli.h"), 6);
    cr_assert_eq(room_of_header("render/render.h"), 4);
    cr_assert_eq(room_of_header("stdio.h"), -1);
    cr_assert(!may_include[2][3] && !may_include[2][4] && !may_include[2][5] && !may_include[0][2]);
}
