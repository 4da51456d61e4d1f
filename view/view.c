/* The viewer: a resizable window with a grid of environments (paged when
 * they do not fit), a status bar, and keys to pause, step, speed up, reset,
 * select, drive, take screenshots and record. It steps the simulation
 * through the public API only: the environment's own compiled policy
 * (cs_env_rollout, one step at a time), or, for `human`, cs_env_step with
 * the arrow keys' action on the selected environment. Each tile is the
 * environment's own picture (its draw block, render/picture.c), drawn over
 * its current state through a scaled canvas into RGB memory that becomes
 * the window's texture; text is drawn in a TrueType font (render/font.c).
 *
 * One frame: scripted events (tests), the event queue, the steps owed at
 * the current speed, the drawing, then screenshot and recording from the
 * drawn pixels, then present. A script runs on a fixed 1/60 s clock without
 * sleeping, so the same script always takes the same steps.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef CS_HAVE_SDL2
#include <SDL.h>
#endif

#include "view/view.h"

/* The help overlay: each key and what it does, in two columns. */
static const char *const help[][2] = {
    {"space", "pause / run"},
    {"right", "one step (while paused)"},
    {"+ -", "faster / slower"},
    {"r  R", "reset selected / all"},
    {"click", "select an environment"},
    {"left right", "drive the selected one (hold)"},
    {"pgup pgdn", "previous / next page"},
    {"s", "screenshot (png)"},
    {"v", "start / stop recording (png frames)"},
    {"h", "this help"},
    {"q esc", "quit"},
};

enum { HELP_LINES = sizeof help / sizeof help[0] };

int view_help_tab(render_font *font, int size)
{
    int widest = 0;
    for (int i = 0; i < HELP_LINES; i++) {
        int w = render_text_width(font, help[i][0], size);
        widest = w > widest ? w : widest;
    }
    return widest + size;   /* a gap as wide as a line is high */
}

int view_return_decimals(const double *returns, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (isfinite(returns[i]) && returns[i] != floor(returns[i]))
            return 2;
    return 0;
}

#ifndef CS_HAVE_SDL2

cs_status view_run(const cs_config *cfg, const view_options *opt, view_report *report, char *err, size_t err_size)
{
    (void)cfg;
    (void)opt;
    if (report)
        memset(report, 0, sizeof *report);
    return cs_say(err, err_size, CS_ERR_UNAVAILABLE, "%s", VIEW_NO_SDL_MESSAGE);
}

#else

#define STATUS_BAR_H 24
#define MIN_TILE_W 150
#define MIN_SPEED_LOG2 (-3)
#define MAX_SPEED_LOG2 10
#define SCRIPT_DT (1.0 / 60)
#define MAX_STEPS_PER_FRAME 100000
#define STEP_TIME_PER_FRAME 0.025  /* seconds of stepping per frame, interactive */
#define FLASH_SECONDS 2.0
#define VIEW_MAX_STATE 64        /* one environment's state or action, on the stack */
#define TEXT_SMALL 11           /* line heights in pixels */
#define TEXT_LARGE 15

static const render_colour BACKDROP = {64, 64, 64, 255}, BAR = {32, 32, 32, 255}, BAR_TEXT = {220, 220, 220, 255};
static const render_colour LABEL = {70, 70, 70, 255}, SELECTED = {30, 110, 230, 255}, ALERT = {230, 70, 60, 255};
static const render_colour SHADE = {0, 0, 0, 200}, WHITE = {255, 255, 255, 255};

/* ---- scripts ---- */

typedef enum { CMD_WAIT, CMD_KEY, CMD_DOWN, CMD_UP, CMD_CLICK, CMD_CLICKXY } command_op;

typedef struct {
    command_op op;
    int key;                    /* index into keys[] */
    int a, b;
} command;

typedef struct {
    const char *name;
    SDL_Keycode code;
    Uint16 mod;
} key_name;

static const key_name keys[] = {
    {"space", SDLK_SPACE, 0},       {"right", SDLK_RIGHT, 0},    {"left", SDLK_LEFT, 0},
    {"plus", SDLK_PLUS, 0},         {"minus", SDLK_MINUS, 0},    {"r", SDLK_r, 0},
    {"R", SDLK_r, KMOD_LSHIFT},     {"s", SDLK_s, 0},            {"v", SDLK_v, 0},
    {"h", SDLK_h, 0},               {"q", SDLK_q, 0},            {"escape", SDLK_ESCAPE, 0},
    {"pageup", SDLK_PAGEUP, 0},     {"pagedown", SDLK_PAGEDOWN, 0},
};

typedef struct {
    command *cmds;
    int n, next;
    int64_t resume_frame;       /* a wait ends here */
} script;

static bool parse_int(const char **p, int lo, int hi, int *out)
{
    while (**p == ' ' || **p == '\t')
        (*p)++;
    char *end;
    errno = 0;
    long v = strtol(*p, &end, 10);
    if (end == *p || errno || v < lo || v > hi)
        return false;
    *p = end;
    *out = (int)v;
    return true;
}

/* One command in [s, end). */
static cs_status parse_command(const char *s, const char *end, command *c, char *err, size_t err_size)
{
    char text[128];
    size_t len = (size_t)(end - s);
    if (len >= sizeof text)
        return cs_say(err, err_size, CS_ERR_ARGUMENT, "script: command too long: '%.40s...'", s);
    memcpy(text, s, len);
    text[len] = 0;
    char word[16], arg[16];
    int n = sscanf(text, "%15s %15s", word, arg);
    const char *rest = text + strspn(text, " \t");
    rest += strcspn(rest, " \t");
    if (strcmp(word, "wait") == 0) {
        c->op = CMD_WAIT;
        if (!parse_int(&rest, 0, 1000000, &c->a))
            goto bad;
    } else if (strcmp(word, "key") == 0 || strcmp(word, "down") == 0 || strcmp(word, "up") == 0) {
        c->op = word[0] == 'k' ? CMD_KEY : word[0] == 'd' ? CMD_DOWN : CMD_UP;
        c->key = -1;
        for (int k = 0; n == 2 && k < (int)(sizeof keys / sizeof keys[0]); k++)
            if (strcmp(keys[k].name, arg) == 0)
                c->key = k;
        if (c->key < 0)
            return cs_say(err, err_size, CS_ERR_ARGUMENT, "script: unknown key in '%s'", text);
        rest = "";
    } else if (strcmp(word, "click") == 0) {
        c->op = CMD_CLICK;
        if (!parse_int(&rest, 0, 1 << 20, &c->a))
            goto bad;
    } else if (strcmp(word, "clickxy") == 0) {
        c->op = CMD_CLICKXY;
        if (!parse_int(&rest, 0, 1 << 20, &c->a) || !parse_int(&rest, 0, 1 << 20, &c->b))
            goto bad;
    } else {
        return cs_say(err, err_size, CS_ERR_ARGUMENT, "script: unknown command '%s'", text);
    }
    if (rest[strspn(rest, " \t")] == 0)
        return CS_OK;
bad:
    return cs_say(err, err_size, CS_ERR_ARGUMENT, "script: cannot read '%s'", text);
}

static cs_status parse_script(const char *text, script *sc, char *err, size_t err_size)
{
    memset(sc, 0, sizeof *sc);
    if (!text)
        return CS_OK;
    int max = 1;
    for (const char *p = text; *p; p++)
        max += *p == ';' || *p == '\n';
    sc->cmds = calloc((size_t)max, sizeof *sc->cmds);
    if (!sc->cmds)
        return cs_say(err, err_size, CS_ERR_NOMEM, "out of memory");
    const char *p = text;
    while (*p) {
        size_t len = strcspn(p, ";\n");
        const char *s = p, *end = p + len;
        while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
            s++;
        while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
            end--;
        if (end > s) {
            cs_status st = parse_command(s, end, &sc->cmds[sc->n], err, err_size);
            if (st != CS_OK)
                return st;
            sc->n++;
        }
        p += len + (p[len] ? 1 : 0);
    }
    return CS_OK;
}

/* ---- the viewer ---- */

typedef struct {
    int cols, rows, per_page, pages;
    double scale;               /* device pixels per frame pixel */
    int tile_w, tile_h, x0, y0;
    int out_w, out_h;
} layout;

typedef struct {
    const view_options *opt;
    view_report *report;
    char *err;
    size_t err_size;
    bool quit_sdl;              /* SDL was not running before: SDL_Quit at the end */

    SDL_Window *window;
    SDL_Renderer *sdl;
    SDL_Texture *texture;       /* the drawn pixels, shown */
    int tex_w, tex_h;
    bool scripted;
    render_font *font;

    cs_env *env;
    cs_env_info info;
    render_picture *picture;    /* the environment's draw block */
    int frame_w, frame_h, frame_rate;   /* its canvas and frame rate: a tile, 1x speed */
    bool human;                 /* host actions from the keys, instead of the compiled policy */
    void *actions;              /* human: int32_t[n] or float[action_dim][n] */
    cs_config cfg;              /* the batch's, same-step auto-reset */
    cs_env *twin;               /* one environment: the selected one's steps that a human drives */
    double *ret_offset;         /* [n]: shown return minus the rollouts' running return */
    int64_t calls;              /* human steps, for the alternating neutral action */
    int64_t n;
    double *state, *fresh;      /* [state_dim][n] */
    int32_t *ep_steps;
    double *ep_return;
    uint64_t resets;

    bool paused, help, quit;
    int speed_log2;
    int single_steps, single_drive;
    bool left_held, right_held;
    int64_t selected;
    int page;
    double owed;                /* steps owed at the current speed */

    const char *out_dir;
    bool shot_wanted;
    render_sink *rec;
    uint8_t *pixels;            /* the window's frame, RGB */
    size_t pixels_size;
    int pix_w, pix_h;
    int rec_w, rec_h;           /* the recording's frame size */
    char flash[256];
    double flash_until;

    double now;                 /* seconds, virtual when scripted */
    double meter_start;
    int64_t meter_frames, meter_env_steps;
    double fps, rate;
    script sc;
} viewer;

static cs_status fail(viewer *v, cs_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static cs_status fail(viewer *v, cs_status s, const char *fmt, ...)
{
    if (v->err && v->err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(v->err, v->err_size, fmt, ap);
        va_end(ap);
    }
    return s;
}

static void flash(viewer *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void flash(viewer *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->flash, sizeof v->flash, fmt, ap);
    va_end(ap);
    v->flash_until = v->now + FLASH_SECONDS;
}

/* A non-fatal problem: shown, and kept for the caller. */
static void warn(viewer *v, const char *message)
{
    flash(v, "%s", message);
    snprintf(v->report->warning, sizeof v->report->warning, "%s", message);
}

static layout compute_layout(const viewer *v)
{
    layout L;
    memset(&L, 0, sizeof L);
    SDL_GetRendererOutputSize(v->sdl, &L.out_w, &L.out_h);
    int area_w = L.out_w > 1 ? L.out_w : 1, area_h = L.out_h - STATUS_BAR_H > 1 ? L.out_h - STATUS_BAR_H : 1;
    double fw = v->frame_w, fh = v->frame_h;
    int max_cols = area_w / MIN_TILE_W > 1 ? area_w / MIN_TILE_W : 1;
    int max_rows = (int)(area_h / (MIN_TILE_W * fh / fw)) > 1 ? (int)(area_h / (MIN_TILE_W * fh / fw)) : 1;
    int64_t count = v->n < (int64_t)max_cols * max_rows ? v->n : (int64_t)max_cols * max_rows;
    L.per_page = (int)count;
    L.pages = (int)((v->n + count - 1) / count);
    L.scale = -1;
    for (int cols = 1; cols <= count; cols++) {
        int rows = (int)((count + cols - 1) / cols);
        double s = fmin(area_w / (cols * fw), area_h / (rows * fh));
        if (s > L.scale) {
            L.scale = s;
            L.cols = cols;
            L.rows = rows;
        }
    }
    L.tile_w = (int)(fw * L.scale) > 2 ? (int)(fw * L.scale) : 2;
    L.tile_h = (int)(fh * L.scale) > 2 ? (int)(fh * L.scale) : 2;
    L.x0 = (area_w - L.cols * L.tile_w) / 2;
    L.y0 = (area_h - L.rows * L.tile_h) / 2;
    return L;
}

static render_rect tile_rect(const layout *L, int k)
{
    return (render_rect){L->x0 + k % L->cols * L->tile_w, L->y0 + k / L->cols * L->tile_h, L->tile_w, L->tile_h};
}

/* ---- the simulation ---- */

/* A box component's bounds; infinite ones are taken as -1..1. */
static void bounds(const viewer *v, unsigned k, double *lo, double *hi)
{
    *lo = v->info.action_low && isfinite(v->info.action_low[k]) ? v->info.action_low[k] : -1;
    *hi = v->info.action_high && isfinite(v->info.action_high[k]) ? v->info.action_high[k] : 1;
}

/* The human's action for environment e of a batch of n, pushing in
 * direction d (-1 left, +1 right): the lowest or highest action (box: the
 * first component's bound); with no key held, the neutral action (the no-op
 * where the space has one; for two actions, alternating). */
static void put_human(const viewer *v, int d, void *actions, int64_t n, int64_t e)
{
    if (v->info.discrete) {
        int32_t last = (int32_t)v->info.n_actions - 1;
        ((int32_t *)actions)[e] = d < 0 ? 0 : d > 0 ? last : v->info.n_actions % 2 ? last / 2 : v->calls % 2 ? last : 0;
        return;
    }
    for (unsigned k = 0; k < v->info.action_dim; k++) {
        double lo, hi;
        bounds(v, k, &lo, &hi);
        double a = k == 0 && d < 0 ? lo : k == 0 && d > 0 ? hi : 0;
        ((float *)actions)[(int64_t)k * n + e] = (float)(a < lo ? lo : a > hi ? hi : a);
    }
}

/* `human`: the selected environment pushes in direction `drive`, the others
 * take the neutral action. */
static cs_status human_step(viewer *v, int drive)
{
    for (int64_t e = 0; e < v->n; e++)
        put_human(v, e == v->selected ? drive : 0, v->actions, v->n, e);
    v->calls++;
    cs_status s = cs_env_step(v->env, v->actions);
    if (s != CS_OK)
        return fail(v, s, "%s", cs_env_error(v->env));
    const double *reward = cs_env_rewards(v->env);
    const uint8_t *term = cs_env_terminated(v->env), *trunc = cs_env_truncated(v->env);
    for (int64_t e = 0; e < v->n; e++) {
        v->ep_steps[e]++;
        v->ep_return[e] += reward[e];
        if (term[e] || trunc[e]) {
            v->report->episodes++;
            v->ep_steps[e] = 0;
            v->ep_return[e] = 0;
        }
    }
    return CS_OK;
}

/* After a reset or a state put back, the rollouts' running returns no
 * longer match the episodes shown: remember by how much each is off. */
static cs_status sync_returns(viewer *v)
{
    if (v->human)
        return CS_OK;
    const double *running = cs_env_running_returns(v->env);
    if (!running)
        return fail(v, CS_ERR_STATE, "%s", cs_env_error(v->env));
    for (int64_t e = 0; e < v->n; e++)
        v->ret_offset[e] = v->ep_return[e] - running[e];
    return CS_OK;
}

/* The arrow keys override the compiled policy on the selected environment:
 * the batch has taken its policy step; the selected environment's step is
 * redone from `before` (its state, episode steps and return before the
 * step) on a one-environment twin with the human's action, and put back.
 * The twin keeps the batch's stream of random numbers untouched. */
static cs_status drive_selected(viewer *v, int drive, const double *before, int32_t steps_before,
                                double return_before, bool policy_ended)
{
    cs_status s;
    int64_t sel = v->selected;
    if (!v->twin) {
        cs_config c = v->cfg;
        c.num_envs = 1;
        c.policy = NULL;        /* stepped with the human's actions only */
        if ((s = cs_env_open(&c, &v->twin)) != CS_OK)
            return fail(v, s, "the selected environment's twin: %s", v->twin ? cs_env_error(v->twin) : "out of memory");
    }
    double one[VIEW_MAX_STATE];
    float action[VIEW_MAX_STATE];
    put_human(v, drive, action, 1, 0);
    if ((s = cs_env_set_state(v->twin, before, &steps_before)) != CS_OK || (s = cs_env_step(v->twin, action)) != CS_OK ||
        (s = cs_env_get_state(v->twin, one)) != CS_OK)
        return fail(v, s, "%s", cs_env_error(v->twin));
    const double *reward = cs_env_rewards(v->twin);
    const uint8_t *term = cs_env_terminated(v->twin), *trunc = cs_env_truncated(v->twin);
    if (!reward || !term || !trunc)
        return fail(v, CS_ERR_STATE, "%s", cs_env_error(v->twin));
    bool ended = term[0] || trunc[0];
    v->report->episodes += (ended ? 1 : 0) - (policy_ended ? 1 : 0);
    v->ep_steps[sel] = ended ? 0 : steps_before + 1;
    double want = ended ? 0 : return_before + reward[0];
    if ((s = cs_env_get_state(v->env, v->state)) != CS_OK)
        return fail(v, s, "%s", cs_env_error(v->env));
    for (unsigned d = 0; d < v->info.state_dim; d++)
        v->state[(int64_t)d * v->n + sel] = one[d];
    if ((s = cs_env_set_state(v->env, v->state, v->ep_steps)) != CS_OK)
        return fail(v, s, "%s", cs_env_error(v->env));
    v->ep_return[sel] = want;
    return sync_returns(v);
}

/* The compiled policy's step of every environment: a rollout of one step,
 * which is what `cartsim run` computes; `drive` overrides the selected one. */
static cs_status policy_step(viewer *v, int drive)
{
    cs_status s;
    int64_t sel = v->selected;
    double before[VIEW_MAX_STATE];
    int32_t steps_before = v->ep_steps[sel];
    double return_before = v->ep_return[sel];
    if (drive) {
        if ((s = cs_env_get_state(v->env, v->state)) != CS_OK)
            return fail(v, s, "%s", cs_env_error(v->env));
        for (unsigned d = 0; d < v->info.state_dim; d++)
            before[d] = v->state[(int64_t)d * v->n + sel];
    }
    cs_rollout_stats st;
    if ((s = cs_env_rollout(v->env, 1, &st)) != CS_OK)
        return fail(v, s, "%s", cs_env_error(v->env));
    const int64_t *ended = cs_env_episode_counts(v->env);
    const double *running = cs_env_running_returns(v->env);
    if (!ended || !running)
        return fail(v, CS_ERR_STATE, "%s", cs_env_error(v->env));
    /* Rollouts keep each running return; a reset or a human's step leaves
     * it off by what ret_offset holds until the episode ends. */
    for (int64_t e = 0; e < v->n; e++) {
        v->ep_steps[e] = ended[e] ? 0 : v->ep_steps[e] + 1;
        if (ended[e])
            v->ret_offset[e] = 0;
        v->ep_return[e] = running[e] + v->ret_offset[e];
    }
    v->report->episodes += st.episodes;
    return drive ? drive_selected(v, drive, before, steps_before, return_before, ended[sel] != 0) : CS_OK;
}

/* One step of every environment. */
static cs_status step_once(viewer *v, int drive)
{
    cs_status s = v->human ? human_step(v, drive) : policy_step(v, drive);
    if (s != CS_OK)
        return s;
    v->report->steps++;
    v->report->env_steps += v->n;
    v->meter_env_steps += v->n;
    return CS_OK;
}

static uint64_t reset_seed(viewer *v)
{
    return v->opt->seed + ++v->resets * UINT64_C(0x9e3779b97f4a7c15);
}

/* The public API resets every environment at once: reset them all, then
 * put back every state but the selected one's. */
static cs_status reset_selected(viewer *v)
{
    cs_status s;
    size_t bytes = (size_t)v->n * v->info.state_dim * sizeof *v->state;
    if ((s = cs_env_get_state(v->env, v->state)) != CS_OK || (s = cs_env_reset(v->env, reset_seed(v))) != CS_OK ||
        (s = cs_env_get_state(v->env, v->fresh)) != CS_OK)
        return fail(v, s, "%s", cs_env_error(v->env));
    for (unsigned d = 0; d < v->info.state_dim; d++)
        v->state[(int64_t)d * v->n + v->selected] = v->fresh[(int64_t)d * v->n + v->selected];
    memcpy(v->fresh, v->state, bytes);
    v->ep_steps[v->selected] = 0;
    v->ep_return[v->selected] = 0;
    if ((s = cs_env_set_state(v->env, v->fresh, v->ep_steps)) != CS_OK)
        return fail(v, s, "%s", cs_env_error(v->env));
    return sync_returns(v);
}

static cs_status reset_all(viewer *v)
{
    cs_status s = cs_env_reset(v->env, reset_seed(v));
    if (s != CS_OK)
        return fail(v, s, "%s", cs_env_error(v->env));
    memset(v->ep_steps, 0, (size_t)v->n * sizeof *v->ep_steps);
    memset(v->ep_return, 0, (size_t)v->n * sizeof *v->ep_return);
    return sync_returns(v);
}

/* ---- screenshots and recordings ---- */

/* The drawn frame, as RGB: the pixels the window shows. */
static bool read_pixels(viewer *v, int *w, int *h)
{
    *w = v->pix_w;
    *h = v->pix_h;
    return v->pixels != NULL;
}

/* The first of PREFIX-000SUFFIX, PREFIX-001SUFFIX, ... that does not exist. */
static bool free_name(const char *dir, const char *prefix, const char *suffix, char *out, size_t size)
{
    for (int i = 0; i < 100000; i++) {
        if (snprintf(out, size, "%s/%s-%03d%s", dir, prefix, i, suffix) >= (int)size)
            return false;
        if (access(out, F_OK) != 0 && errno == ENOENT)
            return true;
    }
    return false;
}

static void screenshot(viewer *v)
{
    int w, h;
    char name[1024], msg[RENDER_ERROR_SIZE];
    if (!read_pixels(v, &w, &h)) {
        snprintf(msg, sizeof msg, "screenshot: nothing drawn yet");
        warn(v, msg);
        return;
    }
    if (!free_name(v->out_dir, "cartsim-shot", ".png", name, sizeof name)) {
        snprintf(msg, sizeof msg, "screenshot: no free file name in %s", v->out_dir);
        warn(v, msg);
        return;
    }
    if (render_png_write(name, v->pixels, w, h, msg, sizeof msg) != CS_OK) {
        warn(v, msg);
        return;
    }
    v->report->screenshots++;
    snprintf(v->report->last_screenshot, sizeof v->report->last_screenshot, "%s", name);
    flash(v, "saved %s", name);
}

static void stop_recording(viewer *v)
{
    if (!v->rec)
        return;
    int64_t frames = render_sink_frames(v->rec);
    char msg[RENDER_ERROR_SIZE];
    if (render_sink_close(v->rec, msg, sizeof msg) != CS_OK)
        warn(v, msg);
    else
        flash(v, "recorded %lld frames into %s", (long long)frames, v->report->last_recording);
    v->report->recorded_frames += frames;
    v->rec = NULL;
}

static void start_recording(viewer *v)
{
    char dir[1024], msg[RENDER_ERROR_SIZE];
    int w, h;
    SDL_GetRendererOutputSize(v->sdl, &w, &h);
    if (!free_name(v->out_dir, "cartsim-rec", "", dir, sizeof dir)) {
        snprintf(msg, sizeof msg, "recording: no free directory name in %s", v->out_dir);
        warn(v, msg);
        return;
    }
    if (render_sink_open(dir, w, h, v->frame_rate, &v->rec) != CS_OK) {
        snprintf(msg, sizeof msg, "recording: %s", render_sink_error(v->rec));
        render_sink_close(v->rec, NULL, 0);
        v->rec = NULL;
        warn(v, msg);
        return;
    }
    v->rec_w = w;
    v->rec_h = h;
    snprintf(v->report->last_recording, sizeof v->report->last_recording, "%s", dir);
    flash(v, "recording into %s", dir);
}

static void record_frame(viewer *v)
{
    int w, h;
    char msg[RENDER_ERROR_SIZE];
    if (!read_pixels(v, &w, &h)) {
        snprintf(msg, sizeof msg, "recording: nothing drawn yet");
        stop_recording(v);
        warn(v, msg);
        return;
    }
    int64_t frames = render_sink_frames(v->rec);
    if (frames > 0 && (w != v->rec_w || h != v->rec_h)) {
        /* PNG frames of one recording share a size: a resize ends it. */
        stop_recording(v);
        flash(v, "recording stopped: the window was resized");
        return;
    }
    if (render_sink_write(v->rec, v->pixels) != CS_OK) {
        snprintf(msg, sizeof msg, "recording: %s", render_sink_error(v->rec));
        stop_recording(v);
        warn(v, msg);
    }
}

/* ---- drawing ---- */

static void speed_text(int log2, char *out, size_t size)
{
    if (log2 >= 0)
        snprintf(out, size, "%dx", 1 << log2);
    else
        snprintf(out, size, "1/%dx", 1 << -log2);
}

/* Tile e's label in one of three forms, from the longest. */
static void tile_label(const viewer *v, int64_t e, int form, int decimals, char *out, size_t size)
{
    if (form == 0)
        snprintf(out, size, "#%lld step %d return %.*f", (long long)e, v->ep_steps[e], decimals, v->ep_return[e]);
    else if (form == 1)
        snprintf(out, size, "#%lld %d %.*f", (long long)e, v->ep_steps[e], decimals, v->ep_return[e]);
    else
        snprintf(out, size, "#%lld", (long long)e);
}

/* One form and one number of decimals for the whole page, so that
 * neighbouring tiles read alike: the longest form every label fits. */
static void page_labels(const viewer *v, const layout *L, int64_t first, int count, int *form, int *decimals)
{
    *decimals = view_return_decimals(v->ep_return + first, count);
    int px = L->tile_w >= 400 ? 2 : 1, size = px > 1 ? TEXT_LARGE : TEXT_SMALL, room = L->tile_w - 1 - 8 * px;
    for (*form = 0; *form < 2; (*form)++) {
        bool fits = true;
        for (int k = 0; k < count && fits; k++) {
            char label[96];
            tile_label(v, first + k, *form, *decimals, label, sizeof label);
            fits = render_text_width(v->font, label, size) <= room;
        }
        if (fits)
            return;
    }
}

static void draw_tiles(viewer *v, const layout *L)
{
    render_canvas c;
    int64_t first = (int64_t)v->page * L->per_page;
    int count = (int)(v->n - first < L->per_page ? v->n - first : L->per_page), form, decimals;
    page_labels(v, L, first, count, &form, &decimals);
    for (int k = 0; k < L->per_page && first + k < v->n; k++) {
        int64_t e = first + k;
        render_rect t = tile_rect(L, k);
        /* One pixel of backdrop between tiles. */
        render_rect inner = {t.x, t.y, t.w - 1, t.h - 1};
        render_canvas_init(&c, v->pixels, v->pix_w * 3, inner, t.x, t.y, L->scale, v->frame_h);
        render_picture_draw_env(v->picture, &c, e);
        char label[96];
        int px = t.w >= 400 ? 2 : 1, size = px > 1 ? TEXT_LARGE : TEXT_SMALL;
        tile_label(v, e, form, decimals, label, sizeof label);
        render_text(&c, v->font, t.x + 4 * px, t.y + 2 * px, size, label, LABEL);
        if (e == v->selected) {
            int b = 3;
            render_device_rect(&c, (render_rect){inner.x, inner.y, inner.w, b}, SELECTED);
            render_device_rect(&c, (render_rect){inner.x, inner.y + inner.h - b, inner.w, b}, SELECTED);
            render_device_rect(&c, (render_rect){inner.x, inner.y, b, inner.h}, SELECTED);
            render_device_rect(&c, (render_rect){inner.x + inner.w - b, inner.y, b, inner.h}, SELECTED);
        }
    }
}

static void draw_status(viewer *v, const layout *L)
{
    render_canvas c;
    render_rect bar = {0, L->out_h - STATUS_BAR_H, L->out_w, STATUS_BAR_H};
    render_canvas_init(&c, v->pixels, v->pix_w * 3, bar, 0, 0, 1, 0);
    render_fill(&c, BAR);
    char speed[16], text[512], rec[32] = "";
    speed_text(v->speed_log2, speed, sizeof speed);
    snprintf(text, sizeof text, "%s  %lld envs  page %d/%d  %s  speed %s  fps %.0f  env-steps/s %.3g  episodes %lld",
             v->info.title ? v->info.title : "?", (long long)v->n, v->page + 1, L->pages,
             v->opt->policy ? v->opt->policy : "random", speed,
             v->fps, v->rate, (long long)v->report->episodes);
    if (v->rec)
        snprintf(rec, sizeof rec, "rec %lld", (long long)render_sink_frames(v->rec));
    const char *paused = v->paused ? "paused" : "";
    const char *note = v->flash[0] && v->now < v->flash_until ? v->flash : "h: help";
    /* Large letters when everything fits, else small ones. */
    int gap = 24, px = 2, size = TEXT_LARGE;
    for (; px > 1; px--) {
        int w = render_text_width(v->font, text, size) + render_text_width(v->font, paused, size) +
                render_text_width(v->font, rec, size) + render_text_width(v->font, note, size) + 3 * gap * px / 2 + 16;
        if (w <= L->out_w)
            break;
        size = TEXT_SMALL;
    }
    gap = gap * px / 2;
    int x = 8, y = bar.y + (STATUS_BAR_H - size - size / 4) / 2;
    render_text(&c, v->font, x, y, size, text, BAR_TEXT);
    x += render_text_width(v->font, text, size) + gap;
    if (*paused) {
        render_text(&c, v->font, x, y, size, paused, ALERT);
        x += render_text_width(v->font, paused, size) + gap;
    }
    if (*rec) {
        render_text(&c, v->font, x, y, size, rec, ALERT);
        x += render_text_width(v->font, rec, size) + gap;
    }
    render_text(&c, v->font, x, y, size, note, BAR_TEXT);
}

static void draw_help(viewer *v, const layout *L)
{
    int size = TEXT_LARGE + 3, line_h = size + 6, tab = view_help_tab(v->font, size), w = 0;
    for (int i = 0; i < HELP_LINES; i++) {
        int line_w = tab + render_text_width(v->font, help[i][1], size);
        w = line_w > w ? line_w : w;
    }
    w += 40;
    int h = HELP_LINES * line_h + 36;
    int x = (L->out_w - w) / 2, y = (L->out_h - STATUS_BAR_H - h) / 2;
    render_canvas c;
    render_canvas_init(&c, v->pixels, v->pix_w * 3, (render_rect){0, 0, v->pix_w, v->pix_h}, 0, 0, 1, 0);
    render_device_rect(&c, (render_rect){x, y, w, h}, SHADE);
    /* A proportional font: the keys and what they do in two columns, the
     * second past the widest key. */
    for (int i = 0; i < HELP_LINES; i++) {
        render_text(&c, v->font, x + 20, y + 18 + i * line_h, size, help[i][0], WHITE);
        render_text(&c, v->font, x + 20 + tab, y + 18 + i * line_h, size, help[i][1], WHITE);
    }
}

/* The frame into v->pixels, the size of the window's drawable area. */
static cs_status draw(viewer *v, const layout *L)
{
    size_t need = (size_t)L->out_w * (size_t)L->out_h * 3;
    if (need > v->pixels_size) {
        uint8_t *p = realloc(v->pixels, need);
        if (!p)
            return fail(v, CS_ERR_NOMEM, "out of memory for a %dx%d frame", L->out_w, L->out_h);
        v->pixels = p;
        v->pixels_size = need;
    }
    v->pix_w = L->out_w;
    v->pix_h = L->out_h;
    render_canvas c;
    render_canvas_init(&c, v->pixels, v->pix_w * 3, (render_rect){0, 0, v->pix_w, v->pix_h}, 0, 0, 1, 0);
    render_fill(&c, BACKDROP);
    draw_tiles(v, L);
    draw_status(v, L);
    if (v->help)
        draw_help(v, L);
    return CS_OK;
}

/* The drawn pixels into the window. */
static cs_status show(viewer *v)
{
    if (!v->texture || v->tex_w != v->pix_w || v->tex_h != v->pix_h) {
        if (v->texture)
            SDL_DestroyTexture(v->texture);
        v->texture = SDL_CreateTexture(v->sdl, SDL_PIXELFORMAT_RGB24, SDL_TEXTUREACCESS_STREAMING, v->pix_w, v->pix_h);
        if (!v->texture)
            return fail(v, CS_ERR_UNAVAILABLE, "cannot make a %dx%d texture: %s", v->pix_w, v->pix_h, SDL_GetError());
        v->tex_w = v->pix_w;
        v->tex_h = v->pix_h;
    }
    if (SDL_UpdateTexture(v->texture, NULL, v->pixels, v->pix_w * 3) != 0 ||
        SDL_RenderCopy(v->sdl, v->texture, NULL, NULL) != 0)
        return fail(v, CS_ERR_UNAVAILABLE, "cannot show the frame: %s", SDL_GetError());
    SDL_RenderPresent(v->sdl);
    return CS_OK;
}

/* ---- events ---- */

static cs_status on_key(viewer *v, const SDL_KeyboardEvent *k)
{
    bool human = v->human;
    bool shift = (k->keysym.mod & KMOD_SHIFT) != 0;
    switch (k->keysym.sym) {
    case SDLK_q:
    case SDLK_ESCAPE:
        v->quit = true;
        break;
    case SDLK_SPACE:
        if (!k->repeat) {
            v->paused = !v->paused;
            v->owed = 0;
        }
        break;
    case SDLK_RIGHT:
    case SDLK_LEFT: {
        int dir = k->keysym.sym == SDLK_RIGHT ? 1 : -1;
        if (dir > 0)
            v->right_held = true;
        else
            v->left_held = true;
        /* Paused, right is one step (the policy's, or the human's push). */
        if (v->paused && (dir > 0 || human)) {
            v->single_steps++;
            v->single_drive = human ? dir : 0;
        }
        break;
    }
    case SDLK_PLUS:
    case SDLK_EQUALS:
    case SDLK_KP_PLUS:
        if (v->speed_log2 < MAX_SPEED_LOG2)
            v->speed_log2++;
        break;
    case SDLK_MINUS:
    case SDLK_KP_MINUS:
        if (v->speed_log2 > MIN_SPEED_LOG2)
            v->speed_log2--;
        break;
    case SDLK_r:
        if (!k->repeat) {
            cs_status s = shift ? reset_all(v) : reset_selected(v);
            if (s != CS_OK)
                return s;
            flash(v, shift ? "reset all" : "reset #%lld", (long long)v->selected);
        }
        break;
    case SDLK_s:
        if (!k->repeat)
            v->shot_wanted = true;
        break;
    case SDLK_v:
        if (!k->repeat) {
            if (v->rec)
                stop_recording(v);
            else
                start_recording(v);
        }
        break;
    case SDLK_h:
        if (!k->repeat)
            v->help = !v->help;
        break;
    case SDLK_PAGEDOWN:
    case SDLK_RIGHTBRACKET: {
        layout L = compute_layout(v);
        if (v->page + 1 < L.pages)
            v->page++;
        break;
    }
    case SDLK_PAGEUP:
    case SDLK_LEFTBRACKET:
        if (v->page > 0)
            v->page--;
        break;
    default:
        break;
    }
    return CS_OK;
}

static void on_click(viewer *v, int wx, int wy)
{
    int win_w, win_h;
    SDL_GetWindowSize(v->window, &win_w, &win_h);
    layout L = compute_layout(v);
    /* Window coordinates to renderer pixels (they differ on high-DPI screens). */
    int x = win_w > 0 ? (int)((int64_t)wx * L.out_w / win_w) : wx;
    int y = win_h > 0 ? (int)((int64_t)wy * L.out_h / win_h) : wy;
    for (int k = 0; k < L.per_page; k++) {
        render_rect t = tile_rect(&L, k);
        int64_t e = (int64_t)v->page * L.per_page + k;
        if (e < v->n && x >= t.x && x < t.x + t.w && y >= t.y && y < t.y + t.h) {
            v->selected = e;
            return;
        }
    }
}

static void push_key(viewer *v, int key, bool down)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = down ? SDL_KEYDOWN : SDL_KEYUP;
    e.key.windowID = SDL_GetWindowID(v->window);
    e.key.state = down ? SDL_PRESSED : SDL_RELEASED;
    e.key.keysym.sym = keys[key].code;
    e.key.keysym.scancode = SDL_GetScancodeFromKey(keys[key].code);
    e.key.keysym.mod = keys[key].mod;
    SDL_PushEvent(&e);
}

static void push_click(viewer *v, int x, int y)
{
    for (int down = 1; down >= 0; down--) {
        SDL_Event e;
        memset(&e, 0, sizeof e);
        e.type = down ? SDL_MOUSEBUTTONDOWN : SDL_MOUSEBUTTONUP;
        e.button.windowID = SDL_GetWindowID(v->window);
        e.button.button = SDL_BUTTON_LEFT;
        e.button.state = down ? SDL_PRESSED : SDL_RELEASED;
        e.button.clicks = 1;
        e.button.x = x;
        e.button.y = y;
        SDL_PushEvent(&e);
    }
}

/* This frame's scripted events: the next command, unless a wait runs. */
static void feed_script(viewer *v)
{
    script *sc = &v->sc;
    int64_t frame = v->report->frames;
    if (frame < sc->resume_frame)
        return;
    if (sc->next >= sc->n) {
        SDL_Event e;
        memset(&e, 0, sizeof e);
        e.type = SDL_QUIT;
        SDL_PushEvent(&e);
        return;
    }
    const command *c = &sc->cmds[sc->next++];
    switch (c->op) {
    case CMD_WAIT:
        sc->resume_frame = frame + c->a;
        break;
    case CMD_KEY:
        push_key(v, c->key, true);
        push_key(v, c->key, false);
        break;
    case CMD_DOWN:
        push_key(v, c->key, true);
        break;
    case CMD_UP:
        push_key(v, c->key, false);
        break;
    case CMD_CLICK: {
        layout L = compute_layout(v);
        int win_w, win_h;
        SDL_GetWindowSize(v->window, &win_w, &win_h);
        render_rect t = tile_rect(&L, c->a < L.per_page ? c->a : L.per_page - 1);
        int x = t.x + t.w / 2, y = t.y + t.h / 2;
        push_click(v, L.out_w > 0 ? (int)((int64_t)x * win_w / L.out_w) : x,
                   L.out_h > 0 ? (int)((int64_t)y * win_h / L.out_h) : y);
        break;
    }
    case CMD_CLICKXY:
        push_click(v, c->a, c->b);
        break;
    }
}

static cs_status handle_events(viewer *v)
{
    SDL_Event e;
    while (SDL_PollEvent(&e)) {
        switch (e.type) {
        case SDL_QUIT:
            v->quit = true;
            break;
        case SDL_WINDOWEVENT:
            if (e.window.event == SDL_WINDOWEVENT_CLOSE)
                v->quit = true;
            break;
        case SDL_KEYDOWN: {
            cs_status s = on_key(v, &e.key);
            if (s != CS_OK)
                return s;
            break;
        }
        case SDL_KEYUP:
            if (e.key.keysym.sym == SDLK_RIGHT)
                v->right_held = false;
            if (e.key.keysym.sym == SDLK_LEFT)
                v->left_held = false;
            break;
        case SDL_MOUSEBUTTONDOWN:
            if (e.button.button == SDL_BUTTON_LEFT)
                on_click(v, e.button.x, e.button.y);
            break;
        default:
            break;
        }
    }
    return CS_OK;
}

/* ---- the loop ---- */

static double seconds(void)
{
    return (double)SDL_GetPerformanceCounter() / (double)SDL_GetPerformanceFrequency();
}

static cs_status advance(viewer *v, double dt)
{
    int steps, drive;
    if (v->paused) {
        steps = v->single_steps;
        drive = v->single_drive;
    } else {
        v->owed += dt * v->frame_rate * ldexp(1, v->speed_log2);
        steps = v->owed < MAX_STEPS_PER_FRAME ? (int)v->owed : MAX_STEPS_PER_FRAME;
        v->owed -= steps;
        if (v->owed > 1)
            v->owed = 1;    /* never owe more than a frame can pay */
        drive = (v->right_held ? 1 : 0) - (v->left_held ? 1 : 0);
    }
    v->single_steps = 0;
    double start = v->scripted ? 0 : seconds();
    for (int i = 0; i < steps; i++) {
        cs_status s = step_once(v, drive);
        if (s != CS_OK)
            return s;
        if (!v->scripted && seconds() - start > STEP_TIME_PER_FRAME)
            break;      /* faster than the machine steps: the speed tops out */
    }
    return CS_OK;
}

static void measure(viewer *v)
{
    v->meter_frames++;
    double span = v->now - v->meter_start;
    if (span >= 0.5) {
        v->fps = v->meter_frames / span;
        v->rate = v->meter_env_steps / span;
        v->meter_frames = v->meter_env_steps = 0;
        v->meter_start = v->now;
    }
}

static cs_status run_loop(viewer *v)
{
    double last = seconds();
    v->now = v->scripted ? 0 : last;
    v->meter_start = v->now;
    while (!v->quit) {
        double dt = SCRIPT_DT;
        if (!v->scripted) {
            double t = seconds();
            dt = fmin(t - last, 0.1);
            last = t;
            v->now = t;
        } else {
            v->now += dt;
            feed_script(v);
        }
        cs_status s = handle_events(v);
        if (s != CS_OK)
            return s;
        if (v->cfg.interrupt && *v->cfg.interrupt)   /* the program's Ctrl-C closes the window as q does */
            v->quit = true;
        if (v->quit)
            break;
        if ((s = advance(v, dt)) != CS_OK)
            return s;
        if ((s = render_picture_read(v->picture, v->err, v->err_size)) != CS_OK)
            return s;

        layout L = compute_layout(v);
        if (v->page >= L.pages)
            v->page = L.pages - 1;
        if (v->page < 0)
            v->page = 0;
        if ((s = draw(v, &L)) != CS_OK)
            return s;
        if (v->shot_wanted) {
            v->shot_wanted = false;
            screenshot(v);
        }
        if (v->rec)
            record_frame(v);
        if ((s = show(v)) != CS_OK)
            return s;
        v->report->frames++;
        measure(v);
        if (!v->scripted) {
            double spent = seconds() - v->now;
            if (spent < 1.0 / 60)
                SDL_Delay((Uint32)((1.0 / 60 - spent) * 1000));
        }
    }
    return CS_OK;
}

/* ---- setting up ---- */

static bool is_headless_driver(const char *name)
{
    return name && (strcmp(name, "offscreen") == 0 || strcmp(name, "dummy") == 0);
}

static cs_status no_display(viewer *v, const char *why)
{
    return fail(v, CS_ERR_UNAVAILABLE,
                "no display to open a window on (%s): run it on a desktop, set SDL_VIDEODRIVER=offscreen to run "
                "without one (tests), or write frames to files with `cartsim render`",
                why);
}

static cs_status start_video(viewer *v)
{
    const char *asked = SDL_getenv("SDL_VIDEODRIVER");
    bool chosen = asked && *asked;
#ifdef __linux__
    if (!chosen && !SDL_getenv("DISPLAY") && !SDL_getenv("WAYLAND_DISPLAY"))
        return no_display(v, "DISPLAY and WAYLAND_DISPLAY are not set");
#endif
    v->quit_sdl = SDL_WasInit(0) == 0;
    if (SDL_InitSubSystem(SDL_INIT_VIDEO) != 0) {
        char why[256];
        snprintf(why, sizeof why, "SDL: %s", SDL_GetError());
        return no_display(v, why);
    }
    const char *driver = SDL_GetCurrentVideoDriver();
    if (is_headless_driver(driver)) {
        if (!chosen)
            return no_display(v, "SDL found only its offscreen driver");
        /* No GPU path behind a window nobody sees (and no driver probing). */
        SDL_SetHintWithPriority(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0", SDL_HINT_DEFAULT);
    }
    return CS_OK;
}

static cs_status open_window(viewer *v)
{
    char title[256];
    snprintf(title, sizeof title, "cartsim: %s x %lld", v->info.title ? v->info.title : "?", (long long)v->n);
    int w = v->opt->width > 0 ? v->opt->width : 1200, h = v->opt->height > 0 ? v->opt->height : 800;
    v->window = SDL_CreateWindow(title, SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED, w, h, SDL_WINDOW_RESIZABLE);
    if (!v->window)
        return fail(v, CS_ERR_UNAVAILABLE, "cannot open a window: %s", SDL_GetError());
    SDL_SetWindowMinimumSize(v->window, 320, 200);
    if (!is_headless_driver(SDL_GetCurrentVideoDriver()))
        v->sdl = SDL_CreateRenderer(v->window, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC);
    if (!v->sdl)
        v->sdl = SDL_CreateRenderer(v->window, -1, SDL_RENDERER_SOFTWARE);
    if (!v->sdl)
        return fail(v, CS_ERR_UNAVAILABLE, "cannot draw into the window: %s", SDL_GetError());
    return CS_OK;
}

static cs_status open_simulation(viewer *v, const cs_config *cfg)
{
    v->cfg = *cfg;
    v->cfg.autoreset = CS_AUTORESET_SAME_STEP;
    cs_status s = cs_env_open(&v->cfg, &v->env);
    if (s != CS_OK)
        return fail(v, s, "%s", v->env ? cs_env_error(v->env) : "out of memory");
    if ((s = cs_env_get_info(v->env, &v->info)) != CS_OK)
        return fail(v, s, "%s", cs_env_error(v->env));
    v->n = v->info.num_envs;
    if ((s = render_picture_open(v->env, &v->picture, v->err, v->err_size)) != CS_OK)
        return s;
    render_picture_size(v->picture, &v->frame_w, &v->frame_h, &v->frame_rate);
    if (v->info.state_dim > VIEW_MAX_STATE || v->info.action_dim > VIEW_MAX_STATE)
        return fail(v, CS_ERR_LIMIT, "the viewer drives environments of at most %d state variables and actions",
                    VIEW_MAX_STATE);
    if (v->opt->prepare && (s = v->opt->prepare(v->env, v->opt->prepare_ctx, v->err, v->err_size)) != CS_OK)
        return s;
    if ((s = render_font_open(v->opt->font, &v->font, v->err, v->err_size)) != CS_OK)
        return s;
    size_t values = (size_t)v->n * v->info.state_dim;
    v->state = calloc(values, sizeof *v->state);
    v->fresh = calloc(values, sizeof *v->fresh);
    v->ep_steps = calloc((size_t)v->n, sizeof *v->ep_steps);
    v->ep_return = calloc((size_t)v->n, sizeof *v->ep_return);
    v->ret_offset = calloc((size_t)v->n, sizeof *v->ret_offset);
    size_t action_bytes = (size_t)v->n * (v->info.discrete ? sizeof(int32_t) : v->info.action_dim * sizeof(float));
    v->actions = calloc(action_bytes ? action_bytes : 1, 1);
    if (!v->state || !v->fresh || !v->ep_steps || !v->ep_return || !v->ret_offset || !v->actions)
        return fail(v, CS_ERR_NOMEM, "out of memory for %lld environments", (long long)v->n);
    if ((s = cs_env_reset(v->env, v->opt->seed)) != CS_OK)
        return fail(v, s, "%s", cs_env_error(v->env));
    return CS_OK;
}

static void teardown(viewer *v)
{
    stop_recording(v);
    if (v->texture)
        SDL_DestroyTexture(v->texture);
    if (v->sdl)
        SDL_DestroyRenderer(v->sdl);
    if (v->window)
        SDL_DestroyWindow(v->window);
    if (SDL_WasInit(SDL_INIT_VIDEO)) {
        SDL_QuitSubSystem(SDL_INIT_VIDEO);
        if (v->quit_sdl)
            SDL_Quit();
    }
    render_font_close(v->font);
    render_picture_free(v->picture);
    cs_env_close(v->twin);
    cs_env_close(v->env);
    free(v->ret_offset);
    free(v->actions);
    free(v->state);
    free(v->fresh);
    free(v->ep_steps);
    free(v->ep_return);
    free(v->pixels);
    free(v->sc.cmds);
}

cs_status view_run(const cs_config *cfg, const view_options *opt, view_report *report, char *err, size_t err_size)
{
    if (err && err_size)
        err[0] = 0;
    if (!cfg || !opt || !report)
        return cs_say(err, err_size, CS_ERR_ARGUMENT, "cfg, opt and report must not be NULL");
    memset(report, 0, sizeof *report);
    viewer v;
    memset(&v, 0, sizeof v);
    v.opt = opt;
    v.report = report;
    v.err = err;
    v.err_size = err_size;
    v.out_dir = opt->out_dir ? opt->out_dir : ".";
    v.scripted = opt->script != NULL;
    v.human = opt->policy && strcmp(opt->policy, "human") == 0;

    cs_status s = parse_script(opt->script, &v.sc, err, err_size);
    /* The configuration's mistakes before the display's. */
    if (s == CS_OK)
        s = open_simulation(&v, cfg);
    if (s == CS_OK)
        s = start_video(&v);
    if (s == CS_OK)
        s = open_window(&v);
    /* Where screenshots and recordings go, made now as `render` makes its
     * own: a recording's directory is made inside it. */
    if (s == CS_OK)
        s = render_make_dir(v.out_dir, err, err_size);
    if (s == CS_OK)
        s = run_loop(&v);
    report->selected = v.selected;
    teardown(&v);
    return s;
}

#endif
