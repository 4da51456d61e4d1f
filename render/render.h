/* render/: what environments look like. Drawing rules per environment (no
 * physics: states come from cs_env_get_state), headless RGB frames, frame
 * sinks (PNG files, ffmpeg) and the SDL2 viewer.
 *
 * render/ uses sim's public API (cartsim.h), and sim's cs_say (status.h) for
 * messages into callers' buffers. Everything is drawn through
 * SDL_Renderer, so one drawing rule draws a window tile (view.c) and a
 * software surface (frames.c) alike. SDL2 is optional at build time: without
 * CS_HAVE_SDL2 everything here still compiles, and the entry points that need
 * SDL (cs_renderer_open, render_view_run) answer CS_ERR_UNAVAILABLE.
 *
 *   canvas.c     world-to-pixel transform; filled polygons, discs, lines, rectangles
 *   font.c       a 5x7 bitmap font for the viewer's text
 *   rules.c      the table of drawing rules, keyed by cs_env_info.name
 *   cartpole.c   one file per environment: its picture and its heuristic
 *   pendulum.c, mountain_car.c (both variants), acrobot.c
 *   frames.c     cs_renderer (cartsim.h): RGB frames of one environment or a tiled batch
 *   png.c        PNG files through stb_image_write
 *   sink.c       frame sinks: numbered PNGs in a directory, or GIF/MP4 through ffmpeg
 *   policy.c     actions for the viewer and `cartsim render`: random, heuristic, human
 *   view.c       the window: tiles, status bar, keys, scripted events
 *
 * Errors follow the library's rule: a status, and a message in the caller's
 * buffer or on a handle; nothing here prints or exits.
 */
#ifndef CS_RENDER_H
#define CS_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cartsim.h"
#include "status.h"

#define RENDER_ERROR_SIZE 512


/* How to get SDL2, for every "unavailable" message. */
#define RENDER_NO_SDL_MESSAGE                                                                    \
    "this build has no SDL2: install its headers (Debian: sudo apt-get install "                 \
    "libsdl2-dev) and rebuild (make)"

/* ---- canvas.c ---- */

typedef struct {
    uint8_t r, g, b, a;
} render_colour;

typedef struct {
    int x, y, w, h;
} render_rect;

#define RENDER_BATCH 512

struct SDL_Renderer;

/* A target for drawing rules. Rules draw in their frame's pixel coordinates
 * as Gymnasium does before its final flip: x to the right, y UP from the
 * bottom edge, frame_h high. A pixel of the device covers [X, X+1) x [Y, Y+1)
 * and is painted when its centre lies inside a shape, so that at scale 1
 * Gymnasium's pixel row r (before the flip) is device row frame_h - 1 - r.
 * Same-coloured spans are batched into one SDL_RenderFillRects call. */
typedef struct render_canvas {
    struct SDL_Renderer *sdl;   /* NULL: nothing is drawn (no SDL2) */
    double ox, oy;              /* device position of the frame's top-left corner */
    double scale;               /* device pixels per frame pixel */
    double frame_h;             /* the frame's height in its own pixels */
    render_rect clip;           /* device pixels that may be painted */
    render_colour colour;       /* of the batch */
    int n;
    render_rect batch[RENDER_BATCH];
} render_canvas;

void render_canvas_init(render_canvas *c, struct SDL_Renderer *sdl, render_rect clip, double ox, double oy,
                        double scale, double frame_h);
void render_canvas_flush(render_canvas *c);

/* In device pixels, clipped. */
void render_device_rect(render_canvas *c, render_rect r, render_colour col);
/* The whole clip rectangle. */
void render_fill(render_canvas *c, render_colour col);
/* In frame coordinates: a polygon (even-odd rule; pts[2k], pts[2k+1] = x, y). */
void render_polygon(render_canvas *c, const double *pts, int n, render_colour col);
/* A disc of radius r around (x, y). */
void render_disc(render_canvas *c, double x, double y, double r, render_colour col);
/* pygame's gfxdraw.filled_circle(int(px), int(py), radius): the pixels within
 * radius of that pixel. */
void render_pixel_disc(render_canvas *c, double px, double py, int radius, render_colour col);
/* A segment one frame pixel wide (never thinner than one device pixel), as
 * pygame's draw.line / gfxdraw.hline through pixel centres. */
void render_line(render_canvas *c, double x0, double y0, double x1, double y1, render_colour col);

/* ---- font.c ---- */

#define RENDER_GLYPH_W 5
#define RENDER_GLYPH_H 7
#define RENDER_GLYPH_ADVANCE 6   /* glyph and one column of space */

/* Draws text at device (x, y), each font pixel px x px device pixels.
 * Lower case is drawn as upper case; unknown characters as '?'. */
void render_text(render_canvas *c, int x, int y, int px, const char *text, render_colour col);
int render_text_width(const char *text, int px);

/* ---- rules.c and one file per environment ---- */

/* One environment's picture, following Gymnasium's render(). */
typedef struct render_rule {
    const char *name;           /* cs_env_info.name ("cartpole") */
    const char *title;          /* Gymnasium's id ("CartPole-v1"); also matched, for variants */
    unsigned state_dim;         /* the state it expects, in Gymnasium's order */
    int width, height;          /* Gymnasium's screen size in pixels */
    int fps;                    /* Gymnasium's render_fps: the viewer's 1x speed */
    void (*draw)(render_canvas *c, const double *state);
    /* The "heuristic" policy: a simple controller for one environment.
     * Writes action[0] (the index, discrete) or action[0..action_dim). */
    void (*heuristic)(const double *state, double *action);
} render_rule;

extern const render_rule render_rule_cartpole;
extern const render_rule render_rule_pendulum;
extern const render_rule render_rule_mountain_car, render_rule_mountain_car_continuous;
extern const render_rule render_rule_acrobot;

/* The rule for an environment: by name, else by title (variants such as
 * cartpole_concat), with a matching state size; NULL when there is none. */
const render_rule *render_find_rule(const cs_env_info *info);
/* "cartpole, ..." for messages. */
void render_rule_names(char *out, size_t size);

/* ---- png.c ---- */

/* Writes an RGB image (rows top to bottom, 3 bytes a pixel) as a PNG file. */
cs_status render_png_write(const char *path, const uint8_t *rgb, int width, int height, char *err,
                           size_t err_size);

/* ---- sink.c ---- */

typedef struct render_sink render_sink;

/* True when `path` names a video (ends in .gif or .mp4): ffmpeg writes it. */
bool render_sink_is_video(const char *path);
/* Checks before any work starts: a video needs ffmpeg on PATH; a directory
 * must exist or be creatable, and be writable. CS_ERR_UNAVAILABLE (no
 * ffmpeg) or CS_ERR_IO with the reason. */
cs_status render_sink_check(const char *path, char *err, size_t err_size);
/* Frames of width x height at fps: numbered PNGs (000000.png, ...) in a
 * directory, created when missing, or a video through ffmpeg reading raw RGB
 * on its stdin. On failure *out may still be a sink holding the message. */
cs_status render_sink_open(const char *path, int width, int height, int fps, render_sink **out);
cs_status render_sink_write(render_sink *s, const uint8_t *rgb);
/* Ends the output (waits for ffmpeg) and frees the sink; the status says
 * whether everything got written. err may be NULL. */
cs_status render_sink_close(render_sink *s, char *err, size_t err_size);
const char *render_sink_error(const render_sink *s);
int64_t render_sink_frames(const render_sink *s);

/* ---- policy.c ---- */

typedef enum { RENDER_POLICY_RANDOM, RENDER_POLICY_HEURISTIC, RENDER_POLICY_HUMAN } render_policy_kind;

typedef struct render_policy render_policy;

/* Resolves a --policy value: "random" (uniform over the action space, from a
 * generator seeded with `seed`), "heuristic" (the drawing rule's controller)
 * or "human" (the viewer's arrow keys). Anything else names a policy file;
 * those arrive with the agents' policy files (agents/NAME.pol), and this is
 * where they plug in: until then CS_ERR_UNAVAILABLE. */
cs_status render_policy_check(const char *spec, char *err, size_t err_size);
cs_status render_policy_open(const char *spec, cs_env *env, uint64_t seed, render_policy **out, char *err,
                             size_t err_size);
render_policy_kind render_policy_kind_of(const render_policy *p);
/* The actions of every environment for one step, in cs_env_step's layout,
 * from the state ([state_dim][num_envs] doubles; random ignores it). Human:
 * environment `selected` pushes in direction `drive` (-1 left, +1 right,
 * 0 none); the others, and `selected` with no key held, take the neutral
 * action (the no-op where the space has one; for two actions, alternating). */
const void *render_policy_act(render_policy *p, const double *state, int64_t selected, int drive);
void render_policy_close(render_policy *p);

/* ---- view.c ---- */

typedef struct {
    const char *policy;         /* --policy; NULL: "random" */
    uint64_t seed;
    const char *out_dir;        /* screenshots and recordings; NULL: "." */
    /* Scripted events instead of a person (tests): commands separated by
     * ';' or newlines, run in order, one frame apart unless noted:
     *   wait N          let N frames pass
     *   key NAME        press and release (space, right, left, plus, minus,
     *                   r, R, s, v, h, q, escape, pageup, pagedown)
     *   down NAME, up NAME   hold and release a key
     *   click TILE      left click on the centre of tile TILE of the page
     *   clickxy X Y     left click at window pixel (X, Y)
     * Scripted runs use a fixed 1/60 s per frame and never sleep, so they
     * are reproducible; the script ends with an implicit quit. */
    const char *script;
    int width, height;          /* the window; 0: 1200 x 800 */
} render_view_options;

typedef struct {
    int64_t frames;             /* drawn */
    int64_t steps;              /* cs_env_step calls */
    int64_t env_steps;
    int64_t episodes;           /* finished */
    int64_t selected;           /* the selected environment at the end */
    int64_t screenshots;
    char last_screenshot[1024];
    int64_t recorded_frames;
    char last_recording[1024];  /* its directory */
    char warning[RENDER_ERROR_SIZE];   /* the last screenshot or recording that failed, or "" */
} render_view_report;

/* Opens `cfg` (with same-step auto-reset: a tile always shows a live
 * episode), opens a window and runs until q/Esc/close (or the script's
 * end). CS_ERR_UNAVAILABLE when there is no display or no SDL2. */
cs_status render_view_run(const cs_config *cfg, const render_view_options *opt, render_view_report *report,
                          char *err, size_t err_size);

#endif
