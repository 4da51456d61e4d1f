/* view/: the SDL2 window of `cartsim view`, the program's own room. It sits
 * on the library (cartsim.h) and render/ (pictures, canvas, font, PNG
 * and frame sinks), and is linked only into the cartsim program (and the
 * tests), so that libcartsim.so needs no SDL2. Without SDL2 at build time it
 * still compiles, and view_run answers CS_ERR_UNAVAILABLE saying how to get
 * it. */
#ifndef CS_VIEW_H
#define CS_VIEW_H

#include "render/render.h"

#define VIEW_NO_SDL_MESSAGE                                                                                  \
    "this build has no SDL2: install its headers (Debian: sudo apt-get install libsdl2-dev) and rebuild (make)"

typedef struct {
    /* What plays: "human" (the arrow keys drive the selected environment,
     * the others take the neutral action, through cs_env_step); anything
     * else is the name shown for cfg->policy, which the environment
     * compiles into its step and the viewer runs one step at a time
     * (cs_env_rollout), as `cartsim run` does. NULL: "random". */
    const char *policy;
    /* Called once the environment is open, before its first reset: sets what
     * cs_config cannot carry (a policy file's weights). NULL: nothing. */
    cs_status (*prepare)(cs_env *env, void *ctx, char *err, size_t err_size);
    void *prepare_ctx;
    const char *font;           /* a TrueType file; NULL: RENDER_FONT_PATH */
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
} view_options;

typedef struct {
    int64_t frames;             /* drawn */
    int64_t steps;              /* steps of the batch */
    int64_t env_steps;
    int64_t episodes;           /* finished */
    int64_t selected;           /* the selected environment at the end */
    int64_t screenshots;
    char last_screenshot[1024];
    int64_t recorded_frames;
    char last_recording[1024];  /* its directory */
    char warning[RENDER_ERROR_SIZE];   /* the last screenshot or recording that failed, or "" */
} view_report;

/* The help overlay's second column: its offset past the widest key, at a
 * text size (the keys' widths in `font`). */
int view_help_tab(render_font *font, int size);
/* The decimals every tile of a page shows its return with: 0 when each of
 * the n returns is a whole number, else 2. */
int view_return_decimals(const double *returns, int64_t n);

/* Opens `cfg` (with same-step auto-reset: a tile always shows a live
 * episode), opens a window and runs until q/Esc/close (or the script's
 * end). CS_ERR_UNAVAILABLE when there is no display, no SDL2 or no font. */
cs_status view_run(const cs_config *cfg, const view_options *opt, view_report *report, char *err, size_t err_size);

#endif
