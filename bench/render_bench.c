/* How fast pictures are drawn (bench/render_bench.sh runs it, bench/RESULTS.md
 * "Pictures" has its figures). It uses the public API and the program's
 * viewer (view/view.h) only, so the same file builds against any tree, the
 * one before draw blocks included, and the two can be timed side by side.
 *
 *   render_bench frames ENV N COUNT      COUNT frames of N environments tiled
 *                                        (cs_render_rgb), a one-step rollout
 *                                        between frames: drawing alone
 *   render_bench view ENV N COUNT W H    the viewer's whole loop, scripted
 *                                        (SDL's offscreen driver), COUNT
 *                                        frames of N tiles in a W x H window
 *
 * Each prints one line: what it ran, its frames per second of wall time,
 * and per second of CPU time (the rate one core of its own would give on a
 * machine busy with other work). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cartsim.h"
#include "view/view.h"

static double clock_seconds(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double seconds(void) { return clock_seconds(CLOCK_MONOTONIC); }
static double cpu_seconds(void) { return clock_seconds(CLOCK_PROCESS_CPUTIME_ID); }

static int fail(const char *what, const char *message)
{
    fprintf(stderr, "render_bench: %s: %s\n", what, message);
    return 1;
}

static int frames(const char *env_name, int n, int count)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = env_name;
    cfg.num_envs = n;
    cfg.threads = 1;
    cs_env *env;
    if (cs_env_open(&cfg, &env) != CS_OK || cs_env_reset(env, 1) != CS_OK)
        return fail("open", cs_env_error(env));
    cs_renderer *r;
    int w, h;
    if (cs_renderer_open(env, &r) != CS_OK || cs_render_rgb(r, 0, n, 0, NULL, 0, &w, &h) != CS_OK)
        return fail("renderer", cs_renderer_error(r));
    size_t size = (size_t)w * h * 3;
    unsigned char *rgb = malloc(size);
    if (!rgb)
        return fail("frames", "out of memory");
    double drawing = 0, cpu = 0;
    for (int k = 0; k < count; k++) {
        if (cs_env_rollout(env, 1, NULL) != CS_OK)
            return fail("rollout", cs_env_error(env));
        double t = seconds(), c = cpu_seconds();
        if (cs_render_rgb(r, 0, n, 0, rgb, size, &w, &h) != CS_OK)
            return fail("render", cs_renderer_error(r));
        drawing += seconds() - t;
        cpu += cpu_seconds() - c;
    }
    printf("frames %s x %d (%dx%d): %.1f frames/s, %.1f per CPU second (drawing alone)\n", env_name, n, w, h,
           count / drawing, count / cpu);
    free(rgb);
    cs_renderer_close(r);
    cs_env_close(env);
    return 0;
}

static int view(const char *env_name, int n, int count, int width, int height)
{
    setenv("SDL_VIDEODRIVER", "offscreen", 1);
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = env_name;
    cfg.num_envs = n;
    cfg.threads = 1;
    char script[64], err[512] = "";
    snprintf(script, sizeof script, "wait %d", count);
    view_options opt = {.policy = "random", .seed = 1, .script = script, .width = width, .height = height,
                        .out_dir = "/tmp"};
    view_report rep;
    double start = seconds(), cpu = cpu_seconds();
    cs_status s = view_run(&cfg, &opt, &rep, err, sizeof err);
    double total = seconds() - start;
    cpu = cpu_seconds() - cpu;
    if (s != CS_OK)
        return fail("view", err);
    printf("view %s x %d (%dx%d window): %.1f frames/s, %.1f per CPU second (%lld frames, %lld steps; opening "
           "and compiling included)\n", env_name, n, width, height, rep.frames / total, rep.frames / cpu,
           (long long)rep.frames, (long long)rep.steps);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "frames"))
        return frames(argv[2], atoi(argv[3]), atoi(argv[4]));
    if (argc == 7 && !strcmp(argv[1], "view"))
        return view(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]));
    fprintf(stderr, "usage: render_bench frames ENV N COUNT | view ENV N COUNT WIDTH HEIGHT\n");
    return 2;
}
