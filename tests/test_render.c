/* render/: pictures of known states checked pixel by pixel (CartPole as
 * Gymnasium draws it; Pendulum, MountainCar and Acrobot through their rules),
 * tiled batches, the scripted viewer (pause, step, select, drive, screenshot,
 * record, quit), `cartsim render` writing PNGs and feeding ffmpeg, and bad
 * input. Everything runs without a display: SDL's offscreen driver for the
 * window, its software renderer for frames. Tests that need SDL2 skip, loudly,
 * when it was not compiled in. */
#include <criterion/criterion.h>
#include <dirent.h>

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

#include "cartsim.h"
#include "render/render.h"
#include "view/view.h"
#include "cli_test.h"

#define skip_loudly(...)                                                                                      \
    do {                                                                                                      \
        char msg_[1024];                                                                                      \
        snprintf(msg_, sizeof msg_, __VA_ARGS__);                                                             \
        fprintf(stderr, "\n*** SKIPPED %s: %s ***\n", __func__, msg_);                                        \
        cr_skip_test("%s", msg_);                                                                             \
    } while (0)

#ifdef CS_HAVE_SDL2
#define NEEDS_SDL() (void)0
#else
#define NEEDS_SDL() skip_loudly("SDL2 was not compiled in (install libsdl2-dev and rebuild)")
#endif

typedef struct {
    uint8_t r, g, b;
} rgb;

static const rgb WHITE = {255, 255, 255}, BLACK = {0, 0, 0}, POLE = {202, 152, 101}, AXLE = {129, 132, 203};

static rgb pixel(const uint8_t *img, int w, int x, int y)
{
    const uint8_t *p = img + ((size_t)y * w + x) * 3;
    return (rgb){p[0], p[1], p[2]};
}

static bool same(rgb a, rgb b) { return a.r == b.r && a.g == b.g && a.b == b.b; }

#define assert_pixel(img, w, x, y, want)                                                                      \
    do {                                                                                                      \
        rgb got_ = pixel(img, w, x, y);                                                                       \
        cr_assert(same(got_, want), "pixel (%d, %d) is (%d, %d, %d), not (%d, %d, %d)", (int)(x), (int)(y),  \
                  got_.r, got_.g, got_.b, (want).r, (want).g, (want).b);                                      \
    } while (0)

static cs_env *open_cartpole(int64_t n)
{
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = "cartpole";
    cfg.num_envs = n;
    cfg.backend = CS_BACKEND_INTERP;
    cfg.dtype = CS_DTYPE_F64;
    cs_env *env;
    cs_status s = cs_env_open(&cfg, &env);
    cr_assert_eq(s, CS_OK, "open: %s", cs_env_error(env));
    cr_assert_eq(cs_env_reset(env, 1), CS_OK);
    return env;
}

/* Sets environment i to (x, 0, theta, 0). */
static void set_poses(cs_env *env, int64_t n, const double *x, const double *theta)
{
    double *state = calloc((size_t)n * 4, sizeof *state);
    cr_assert(state);
    for (int64_t i = 0; i < n; i++) {
        state[0 * n + i] = x[i];
        state[2 * n + i] = theta[i];
    }
    cr_assert_eq(cs_env_set_state(env, state, NULL), CS_OK, "%s", cs_env_error(env));
    free(state);
}

/* A frame of environments [first, first + count). */
static uint8_t *frame(cs_env *env, int64_t first, int count, int columns, int *w, int *h)
{
    cs_renderer *r;
    cs_status s = cs_renderer_open(env, &r);
    cr_assert_eq(s, CS_OK, "renderer: %s", cs_renderer_error(r));
    cr_assert_eq(cs_render_rgb(r, first, count, columns, NULL, 0, w, h), CS_OK, "%s", cs_renderer_error(r));
    size_t size = (size_t)*w * *h * 3;
    uint8_t *img = malloc(size);
    cr_assert(img);
    memset(img, 7, size);
    cr_assert_eq(cs_render_rgb(r, first, count, columns, img, size, w, h), CS_OK, "%s", cs_renderer_error(r));
    cs_renderer_close(r);
    return img;
}

static uint8_t *cartpole_frame(double x, double theta)
{
    cs_env *env = open_cartpole(1);
    set_poses(env, 1, &x, &theta);
    int w, h;
    uint8_t *img = frame(env, 0, 1, 1, &w, &h);
    cr_assert_eq(w, 600);
    cr_assert_eq(h, 400);
    cs_env_close(env);
    return img;
}

/* ---- CartPole, pixel by pixel ---- */

/* Gymnasium draws with y up, then flips: its row y is our row 399 - y. The
 * cart spans rows 85..114 before the flip (285..314 after), columns
 * 300 + 125 x - 25 .. 300 + 125 x + 24; the axle is the disc of radius 5
 * around pixel (int(cart_x), 107), our row 292; the track is row 299. */
Test(render, cartpole_upright_at_the_centre)
{
    uint8_t *img = cartpole_frame(0, 0);
    assert_pixel(img, 600, 0, 0, WHITE);
    assert_pixel(img, 600, 599, 399, WHITE);
    assert_pixel(img, 600, 100, 100, WHITE);
    /* the track line, one pixel high, across the whole frame */
    for (int x = 0; x < 600; x += 37)
        assert_pixel(img, 600, x, 299, BLACK);
    assert_pixel(img, 600, 100, 298, WHITE);
    assert_pixel(img, 600, 100, 300, WHITE);
    /* the cart: 50 x 30 */
    assert_pixel(img, 600, 275, 310, BLACK);
    assert_pixel(img, 600, 324, 310, BLACK);
    assert_pixel(img, 600, 274, 310, WHITE);
    assert_pixel(img, 600, 325, 310, WHITE);
    assert_pixel(img, 600, 280, 285, BLACK);
    assert_pixel(img, 600, 280, 314, BLACK);
    assert_pixel(img, 600, 280, 284, WHITE);
    assert_pixel(img, 600, 280, 315, WHITE);
    /* the axle, radius 5 */
    assert_pixel(img, 600, 300, 292, AXLE);
    assert_pixel(img, 600, 295, 292, AXLE);
    assert_pixel(img, 600, 305, 292, AXLE);
    assert_pixel(img, 600, 300, 287, AXLE);
    assert_pixel(img, 600, 300, 297, AXLE);
    /* the pole: 10 wide (columns 295..304), 125 px above the axle minus half its width */
    assert_pixel(img, 600, 295, 200, POLE);
    assert_pixel(img, 600, 304, 200, POLE);
    assert_pixel(img, 600, 294, 200, WHITE);
    assert_pixel(img, 600, 305, 200, WHITE);
    assert_pixel(img, 600, 300, 173, POLE);
    assert_pixel(img, 600, 300, 171, WHITE);
    /* nothing but Gymnasium's four colours */
    for (int y = 0; y < 400; y++)
        for (int x = 0; x < 600; x++) {
            rgb p = pixel(img, 600, x, y);
            cr_assert(same(p, WHITE) || same(p, BLACK) || same(p, POLE) || same(p, AXLE),
                      "pixel (%d, %d) is (%d, %d, %d)", x, y, p.r, p.g, p.b);
        }
    free(img);
}

/* The black run of row 310 (the cart's lower half) is centred on 300 + 125 x. */
Test(render, cart_centre_is_300_plus_125_x)
{
    const double xs[] = {-2.0, -0.8, 0.4, 1.0, 1.6};
    for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++) {
        uint8_t *img = cartpole_frame(xs[k], 0);
        int first = -1, last = -1;
        for (int x = 0; x < 600; x++)
            if (same(pixel(img, 600, x, 310), BLACK)) {
                if (first < 0)
                    first = x;
                last = x;
            }
        cr_assert_eq(last - first + 1, 50, "x = %g: cart %d..%d", xs[k], first, last);
        cr_assert_float_eq((first + last + 1) / 2.0, 300 + 125 * xs[k], 1e-9, "x = %g: cart %d..%d", xs[k],
                           first, last);
        free(img);
    }
}

/* Points along the pole's axis, from the axle at angle theta (positive leans
 * right), are pole-coloured; their mirror images are not. */
Test(render, pole_follows_the_angle)
{
    const double thetas[] = {-0.2, 0.1, 0.35, 1.2};
    for (size_t k = 0; k < sizeof thetas / sizeof thetas[0]; k++) {
        double th = thetas[k], cart_x = 300 + 125 * 0.5;
        uint8_t *img = cartpole_frame(0.5, th);
        for (int d = 15; d <= 115; d += 5) {
            double gx = cart_x + d * sin(th), gy = 107.5 + d * cos(th);   /* Gymnasium's coordinates */
            int col = (int)floor(gx), row = 399 - (int)floor(gy);
            assert_pixel(img, 600, col, row, POLE);
            if (d >= 30) {
                int mirror = (int)floor(cart_x - d * sin(th));
                assert_pixel(img, 600, mirror, row, WHITE);
            }
        }
        /* the tip: 120 px from the axle, not 130 */
        double tx = cart_x + 127 * sin(th), ty = 107.5 + 127 * cos(th);
        assert_pixel(img, 600, (int)floor(tx), 399 - (int)floor(ty), WHITE);
        free(img);
    }
}

Test(render, a_cart_off_the_frame_leaves_the_background)
{
    uint8_t *img = cartpole_frame(4.0, 0.1);
    for (int x = 0; x < 600; x += 10)
        assert_pixel(img, 600, x, 310, WHITE);
    assert_pixel(img, 600, 599, 299, BLACK);
    free(img);
    img = cartpole_frame(1e300, -1e300);   /* nonsense (finite: set_state refuses NaN) draws what it can */
    assert_pixel(img, 600, 10, 10, WHITE);
    free(img);
}

/* ---- batches ---- */

Test(render, tiled_batch)
{
    const double xs[5] = {-1.6, -0.8, 0, 0.8, 1.6}, thetas[5] = {0};
    cs_env *env = open_cartpole(5);
    set_poses(env, 5, xs, thetas);
    int w, h;
    uint8_t *img = frame(env, 0, 5, 3, &w, &h);
    cr_assert_eq(w, 1800);
    cr_assert_eq(h, 800);
    for (int k = 0; k < 5; k++) {
        int ox = k % 3 * 600, oy = k / 3 * 400, cx = (int)(300 + 125 * xs[k]);
        assert_pixel(img, w, ox + cx - 25, oy + 310, BLACK);
        assert_pixel(img, w, ox + cx + 24, oy + 310, BLACK);
        assert_pixel(img, w, ox + cx - 26, oy + 310, WHITE);
        assert_pixel(img, w, ox + cx + 25, oy + 310, WHITE);
        assert_pixel(img, w, ox + 5, oy + 5, WHITE);
    }
    /* the sixth tile is past the batch: black */
    for (int y = 400; y < 800; y += 50)
        for (int x = 1200; x < 1800; x += 50)
            assert_pixel(img, w, x, y, BLACK);
    free(img);

    /* columns 0: the smallest square; one environment alone */
    img = frame(env, 0, 5, 0, &w, &h);
    cr_assert(w == 1800 && h == 800);
    free(img);
    img = frame(env, 4, 1, 0, &w, &h);
    cr_assert(w == 600 && h == 400);
    assert_pixel(img, w, 300 + 200 - 25, 310, BLACK);
    assert_pixel(img, w, 300 - 25, 310, WHITE);
    free(img);
    img = frame(env, 1, 4, 1, &w, &h);
    cr_assert(w == 600 && h == 1600, "%dx%d", w, h);
    free(img);
    cs_env_close(env);
}

Test(render, bad_requests_are_refused_with_a_message)
{
    cs_env *env = open_cartpole(4);
    cs_renderer *r;
    cr_assert_eq(cs_renderer_open(env, &r), CS_OK);
    int w = -1, h = -1;
    uint8_t small[16];
    cr_assert_eq(cs_render_rgb(r, 3, 2, 1, NULL, 0, &w, &h), CS_ERR_ARGUMENT);
    cr_assert(strstr(cs_renderer_error(r), "batch of 4"), "%s", cs_renderer_error(r));
    cr_assert_eq(cs_render_rgb(r, -1, 1, 1, NULL, 0, &w, &h), CS_ERR_ARGUMENT);
    cr_assert_eq(cs_render_rgb(r, 0, 0, 1, NULL, 0, &w, &h), CS_ERR_ARGUMENT);
    cr_assert_eq(cs_render_rgb(r, 0, 1, -2, NULL, 0, &w, &h), CS_ERR_ARGUMENT);
    cr_assert_eq(cs_render_rgb(r, 0, 1, 1, small, sizeof small, &w, &h), CS_ERR_ARGUMENT);
    cr_assert(strstr(cs_renderer_error(r), "needs 720000"), "%s", cs_renderer_error(r));
    cr_assert_eq(cs_render_rgb(r, 0, 4, 1, NULL, 0, &w, &h), CS_OK);
    cr_assert(w == 600 && h == 1600);
    cr_assert_eq(cs_render_rgb(NULL, 0, 1, 1, NULL, 0, &w, &h), CS_ERR_ARGUMENT);
    cs_renderer_close(r);
    cs_renderer_close(NULL);
    cs_env_close(env);
}

/* A made-up environment (CartPole's source under another name) has no picture. */
Test(render, an_environment_without_a_picture_is_unavailable)
{
    char src[4096], path[] = "/tmp/cartsim-render-XXXXXX.env";
    snprintf(src, sizeof src, "%s/envs/cartpole.env", cli_test_root());
    FILE *f = fopen(src, "r");
    cr_assert(f, "%s: %s", src, strerror(errno));
    char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *line = strstr(text, "env cartpole \"CartPole-v1\"");
    cr_assert(line);
    const char *renamed = "env mystery  \"Mystery-v0\" ";
    memcpy(line, renamed, strlen("env cartpole \"CartPole-v1\""));
    int fd = mkstemps(path, 4);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, n), (ssize_t)n);
    close(fd);

    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = path;
    cfg.backend = CS_BACKEND_INTERP;
    cs_env *env;
    cs_status s = cs_env_open(&cfg, &env);
    unlink(path);
    cr_assert_eq(s, CS_OK, "%s", cs_env_error(env));
    cs_renderer *r;
    s = cs_renderer_open(env, &r);
    cr_assert_eq(s, CS_ERR_UNAVAILABLE);
    cr_assert(strstr(cs_renderer_error(r), "no drawing rule for environment 'mystery'"), "%s",
              cs_renderer_error(r));
    cr_assert_eq(cs_render_rgb(r, 0, 1, 1, NULL, 0, NULL, NULL), CS_ERR_STATE);
    cs_renderer_close(r);
    cs_env_close(env);
}

/* ---- the other environments' rules, drawn straight onto a surface ---- */

static uint8_t *rule_frame(const char *title, unsigned state_dim, const double *state)
{
    cs_env_info info;
    memset(&info, 0, sizeof info);
    info.name = "";
    info.title = title;
    info.state_dim = state_dim;
    const render_rule *rule = render_find_rule(&info);
    cr_assert(rule, "no rule for %s", title);
    uint8_t *img = malloc((size_t)rule->width * rule->height * 3);
    cr_assert(img);
    render_canvas c;
    render_canvas_init(&c, img, rule->width * 3, (render_rect){0, 0, rule->width, rule->height}, 0, 0, 1,
                       rule->height);
    rule->draw(&c, state);
    return img;
}

Test(render, pendulum_mountain_car_and_acrobot_pictures)
{
    const rgb rod = {204, 77, 77}, grey = {128, 128, 128}, flag = {204, 204, 0}, link = {0, 204, 204};
    const rgb joint = {204, 204, 0};
    /* Pendulum: theta 0 points up from the centre (250, 249); pi/2 to the left. */
    double up[2] = {0, 0}, left[2] = {M_PI / 2, 0};
    uint8_t *img = rule_frame("Pendulum-v1", 2, up);
    assert_pixel(img, 500, 250, 180, rod);
    assert_pixel(img, 500, 250, 320, WHITE);
    assert_pixel(img, 500, 250, 249, BLACK);
    free(img);
    img = rule_frame("Pendulum-v1", 2, left);
    assert_pixel(img, 500, 180, 249, rod);
    assert_pixel(img, 500, 320, 249, WHITE);
    free(img);

    /* MountainCar at the valley's floor: the car above x = (pos + 1.2) * 333.3,
     * the yellow flag at the top right. */
    double valley[2] = {-0.5236, 0};
    img = rule_frame("MountainCar-v0", 2, valley);
    int car_x = (int)((valley[0] + 1.2) * 600 / 1.8);
    double ground = 0.45 * sin(3 * valley[0]) + 0.55;
    assert_pixel(img, 600, car_x, 399 - (int)(10 + ground * 600 / 1.8 + 12), BLACK);
    assert_pixel(img, 600, 572, 22, flag);
    bool wheel = false;
    for (int y = 330; y < 400; y++)
        for (int x = car_x - 15; x <= car_x + 15; x++)
            wheel |= same(pixel(img, 600, x, y), grey);
    cr_assert(wheel, "no wheel below the car");
    free(img);
    img = rule_frame("MountainCarContinuous-v0", 2, valley);
    assert_pixel(img, 600, 555, 23, flag);   /* goal 0.45 */
    free(img);

    /* Acrobot hanging straight down: both links below the yellow pivot. */
    double hang[4] = {0, 0, 0, 0};
    img = rule_frame("Acrobot-v1", 4, hang);
    assert_pixel(img, 500, 250, 249, joint);
    assert_pixel(img, 500, 250, 300, link);
    assert_pixel(img, 500, 250, 420, link);
    assert_pixel(img, 500, 250, 200, WHITE);
    int black_rows = 0;
    for (int y = 0; y < 500; y++)
        black_rows += same(pixel(img, 500, 100, y), BLACK);
    cr_assert_eq(black_rows, 1, "the goal line is one pixel high");
    free(img);
}

/* ---- the viewer, driven by a script ---- */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static char *temp_dir(void)
{
    char *dir = strdup("/tmp/cartsim-render-XXXXXX");
    cr_assert(dir && mkdtemp(dir));
    return dir;
}

static void remove_dir(char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

static uint8_t *load_png(const char *path, int *w, int *h)
{
    int comp;
    uint8_t *img = stbi_load(path, w, h, &comp, 3);
    cr_assert(img, "%s does not decode: %s", path, stbi_failure_reason());
    return img;
}

static int count_colour(const uint8_t *img, int w, int h, rgb c)
{
    int n = 0;
    for (int i = 0; i < w * h; i++)
        n += img[3 * i] == c.r && img[3 * i + 1] == c.g && img[3 * i + 2] == c.b;
    return n;
}

static cs_status view(const char *script, const char *policy, const char *out_dir, int64_t n,
                      view_report *rep, char *err, size_t err_size)
{
    setenv("SDL_VIDEODRIVER", "offscreen", 1);
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = "cartpole";
    cfg.num_envs = n;
    cfg.backend = CS_BACKEND_INTERP;
    if (strcmp(policy, "human") != 0)
        cfg.policy = policy;
    view_options opt = {.policy = policy, .seed = 3, .out_dir = out_dir, .script = script, .width = 900, .height = 600};
    return view_run(&cfg, &opt, rep, err, err_size);
}

Test(view, scripted_run_pauses_steps_selects_drives_and_screenshots)
{
    NEEDS_SDL();
    char *dir = temp_dir(), err[RENDER_ERROR_SIZE] = "";
    view_report rep;
    const char *script = "wait 10; key space; key right; key right; click 4; key left; key left; key right;"
                         "key h; key s; key h; key plus; key minus; key r; key R; key v; wait 3; key v; key q";
    cs_status s = view(script, "human", dir, 6, &rep, err, sizeof err);
    cr_assert_eq(s, CS_OK, "%s", err);
    cr_assert_eq(rep.selected, 4);
    cr_assert_eq(rep.screenshots, 1);
    cr_assert_str_empty(rep.warning);
    cr_assert(rep.steps >= 5, "%lld steps", (long long)rep.steps);
    cr_assert_eq(rep.env_steps, rep.steps * 6);
    cr_assert_geq(rep.recorded_frames, 3);

    int w, h;
    uint8_t *img = load_png(rep.last_screenshot, &w, &h);
    cr_assert(w == 900 && h == 600, "%dx%d", w, h);
    cr_assert_gt(count_colour(img, w, h, WHITE), 20000, "tile backgrounds");
    cr_assert_gt(count_colour(img, w, h, POLE), 200, "poles");
    cr_assert_gt(count_colour(img, w, h, AXLE), 20, "axles");
    cr_assert_gt(count_colour(img, w, h, (rgb){30, 110, 230}), 100, "the selected tile's frame");
    free(img);

    char frame0[2048];
    snprintf(frame0, sizeof frame0, "%s/000000.png", rep.last_recording);
    img = load_png(frame0, &w, &h);
    cr_assert(w == 900 && h == 600);
    free(img);
    remove_dir(dir);
}

/* Paused from the first frame, each right arrow is exactly one step. */
Test(view, paused_right_arrow_is_one_step)
{
    NEEDS_SDL();
    char *dir = temp_dir(), err[RENDER_ERROR_SIZE] = "";
    view_report rep;
    cs_status s = view("key space; key right; key right; key right; wait 30; key left", "heuristic", dir, 3, &rep,
                       err, sizeof err);
    cr_assert_eq(s, CS_OK, "%s", err);
    cr_assert_eq(rep.steps, 3, "left does not step unless the policy is human");
    cr_assert_eq(rep.frames, 5 + 30);
    remove_dir(dir);
}

Test(view, the_same_script_takes_the_same_steps)
{
    NEEDS_SDL();
    char *dir = temp_dir(), err[RENDER_ERROR_SIZE] = "";
    view_report a, b;
    const char *script = "wait 50; key plus; key plus; wait 20; key space; key right";
    cr_assert_eq(view(script, "random", dir, 4, &a, err, sizeof err), CS_OK, "%s", err);
    cr_assert_eq(view(script, "random", dir, 4, &b, err, sizeof err), CS_OK, "%s", err);
    cr_assert_eq(a.steps, b.steps);
    cr_assert_eq(a.episodes, b.episodes);
    /* 1x for 51 frames at 50 steps/s over 60 frames/s, then 4x: about 42 + 67 + 1 */
    cr_assert(a.steps > 90 && a.steps < 130, "%lld steps", (long long)a.steps);
    remove_dir(dir);
}

Test(view, many_environments_are_paged)
{
    NEEDS_SDL();
    char *dir = temp_dir(), err[RENDER_ERROR_SIZE] = "";
    view_report rep;
    cs_status s = view("key pagedown; key pagedown; click 0; key s", "random", dir, 200, &rep, err, sizeof err);
    cr_assert_eq(s, CS_OK, "%s", err);
    /* 900x576 of tiles at least 150 wide: 6 x 5 on a page, page 3 starts at 60 */
    cr_assert_eq(rep.selected, 60);
    cr_assert_eq(rep.screenshots, 1);
    remove_dir(dir);
}

Test(view, bad_scripts_and_policies_are_refused)
{
    NEEDS_SDL();
    char err[RENDER_ERROR_SIZE] = "";
    view_report rep;
    cr_assert_eq(view("key nosuchkey", "random", "/tmp", 1, &rep, err, sizeof err), CS_ERR_ARGUMENT);
    cr_assert(strstr(err, "unknown key"), "%s", err);
    cr_assert_eq(view("jump 3", "random", "/tmp", 1, &rep, err, sizeof err), CS_ERR_ARGUMENT);
    cr_assert_eq(view("wait x", "random", "/tmp", 1, &rep, err, sizeof err), CS_ERR_ARGUMENT);
    cr_assert_neq(view("wait 1", "sometimes", "/tmp", 1, &rep, err, sizeof err), CS_OK);
    cr_assert(strstr(err, "sometimes"), "%s", err);
}

Test(view, no_display_is_explained)
{
    unsetenv("SDL_VIDEODRIVER");
    unsetenv("DISPLAY");
    unsetenv("WAYLAND_DISPLAY");
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.backend = CS_BACKEND_INTERP;
    view_options opt = {.policy = "random"};
    view_report rep;
    char err[RENDER_ERROR_SIZE] = "";
    cr_assert_eq(view_run(&cfg, &opt, &rep, err, sizeof err), CS_ERR_UNAVAILABLE);
#ifdef CS_HAVE_SDL2
    cr_assert(strstr(err, "SDL_VIDEODRIVER=offscreen") && strstr(err, "cartsim render"), "%s", err);
#else
    cr_assert(strstr(err, "libsdl2-dev"), "%s", err);
#endif
}

/* ---- the command line ---- */

static void run_cli(const char *const *args, cli_result *r)
{
    cli_test_run(args, 120, r);
    cr_assert(!r->timed_out, "timed out");
}

/* One line on stderr, nothing on stdout, exit status 2. */
static void assert_usage_error(cli_result *r, const char *needle)
{
    char msg[2048];
    snprintf(msg, sizeof msg, "status %d, stdout '%s', stderr '%s'", r->status, r->out, r->err);
    bool ok = r->status == 2 && r->out_len == 0 && r->err_len > 0 && strchr(r->err, '\n') == r->err + r->err_len - 1 &&
              strncmp(r->err, "cartsim: ", 9) == 0 && (!needle || strstr(r->err, needle));
    cli_result_free(r);
    cr_assert(ok, "%s (wanted '%s')", msg, needle ? needle : "");
}

Test(cli_render, writes_decodable_png_frames)
{
    char *dir = temp_dir(), out[1024];
    snprintf(out, sizeof out, "%s/frames", dir);
    cli_result r;
    run_cli((const char *[]){"render", "--env", "cartpole", "--backend", "interp", "--steps", "4", "--seed", "9",
                             "--policy", "heuristic", "--out", out, NULL},
            &r);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "wrote 5 frames of 600x400"), "%s", r.out);
    cli_result_free(&r);
    for (int i = 0; i <= 5; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%06d.png", out, i);
        if (i == 5) {
            cr_assert(access(path, F_OK) != 0, "one frame too many");
            break;
        }
        int w, h;
        uint8_t *img = load_png(path, &w, &h);
        cr_assert(w == 600 && h == 400);
        cr_assert_gt(count_colour(img, w, h, POLE), 500);
        free(img);
    }

    /* a batch is one tiled image a frame */
    run_cli((const char *[]){"render", "--backend", "interp", "--envs", "3", "--steps", "1", "--out", out, NULL}, &r);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "wrote 2 frames of 1200x800"), "%s", r.out);
    cli_result_free(&r);
    remove_dir(dir);
}

Test(cli_render, bad_input_is_one_line_and_status_2)
{
    cli_result r;
    run_cli((const char *[]){"render", "--steps", "3", NULL}, &r);
    assert_usage_error(&r, "--out");
    run_cli((const char *[]){"render", "--out", "/dev/null/frames", NULL}, &r);
    assert_usage_error(&r, "/dev/null/frames");
    run_cli((const char *[]){"render", "--out", "/tmp/x", "--envs", "0", NULL}, &r);
    assert_usage_error(&r, "--envs");
    run_cli((const char *[]){"render", "--out", "/tmp/x", "--policy", "bogus", NULL}, &r);
    assert_usage_error(&r, "policy 'bogus'");
    run_cli((const char *[]){"render", "--out", "/tmp/x", "--policy", "human", NULL}, &r);
    assert_usage_error(&r, "cartsim view");
    run_cli((const char *[]){"view", "--policy", "bogus", NULL}, &r);
    assert_usage_error(&r, "no such policy");
    run_cli((const char *[]){"view", "--envs", "0", NULL}, &r);
    assert_usage_error(&r, "--envs");
    run_cli((const char *[]){"view", "--out", "x.mp4", NULL}, &r);
    assert_usage_error(&r, "directory");
}

Test(cli_render, video_without_ffmpeg_says_how_to_get_it)
{
    setenv("PATH", "/nonexistent", 1);
    cli_result r;
    run_cli((const char *[]){"render", "--out", "/tmp/cartsim-test.mp4", NULL}, &r);
    assert_usage_error(&r, "ffmpeg");
}

/* A stand-in ffmpeg that keeps what it reads: the frames arrive as raw RGB. */
Test(cli_render, video_goes_through_ffmpeg)
{
    char *dir = temp_dir(), fake[1024], video[1024], path[1200];
    snprintf(fake, sizeof fake, "%s/ffmpeg", dir);
    FILE *f = fopen(fake, "w");
    cr_assert(f);
    fprintf(f, "#!/bin/sh\nfor last; do :; done\nout=\"${last#file:}\"\necho \"$@\" > \"$0.args\"\ncat > \"$out\"\n");
    fclose(f);
    chmod(fake, 0755);
    snprintf(path, sizeof path, "%s:/usr/bin:/bin", dir);
    setenv("PATH", path, 1);
    snprintf(video, sizeof video, "%s/run.gif", dir);
    cli_result r;
    run_cli((const char *[]){"render", "--backend", "interp", "--steps", "6", "--out", video, NULL}, &r);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cli_result_free(&r);
    struct stat st;
    cr_assert_eq(stat(video, &st), 0);
    cr_assert_eq(st.st_size, 7 * 600 * 400 * 3);
    snprintf(path, sizeof path, "%s.args", fake);
    f = fopen(path, "r");
    cr_assert(f);
    char args[1024] = "";
    cr_assert(fgets(args, sizeof args, f));
    fclose(f);
    cr_assert(strstr(args, "-s 600x400") && strstr(args, "-r 50") && strstr(args, "paletteuse") &&
                  strstr(args, "-f gif file:"),
              "%s", args);
    /* ffmpeg wrote a temporary of the sink's, renamed over the video once done: none is left */
    cr_assert_eq(unlink(path), 0);
    DIR *d = opendir(dir);
    cr_assert(d);
    for (struct dirent *e; (e = readdir(d));)
        cr_expect(!strstr(e->d_name, ".tmp"), "%s left in %s", e->d_name, dir);
    closedir(d);

    /* an ffmpeg that fails: its last words become the message */
    f = fopen(fake, "w");
    cr_assert(f);
    fprintf(f, "#!/bin/sh\necho 'Unknown encoder: pretend' >&2\nexit 1\n");
    fclose(f);
    run_cli((const char *[]){"render", "--backend", "interp", "--steps", "200", "--out", video, NULL}, &r);
    bool ok = r.status == 1 && strstr(r.err, "Unknown encoder: pretend") && r.out_len == 0;
    /* the video of the run before is still there, whole */
    ok &= stat(video, &st) == 0 && st.st_size == 7 * 600 * 400 * 3;
    char msg[1024];
    snprintf(msg, sizeof msg, "status %d, stderr %s", r.status, r.err);
    cli_result_free(&r);
    cr_assert(ok, "%s", msg);
    remove_dir(dir);
}

Test(cli_view, no_display_is_status_2)
{
    unsetenv("SDL_VIDEODRIVER");
    unsetenv("DISPLAY");
    unsetenv("WAYLAND_DISPLAY");
    cli_result r;
    run_cli((const char *[]){"view", "--backend", "interp", NULL}, &r);
#ifdef CS_HAVE_SDL2
    assert_usage_error(&r, "SDL_VIDEODRIVER=offscreen");
#else
    assert_usage_error(&r, "libsdl2-dev");
#endif
}

Test(cli_view, scripted_with_offscreen_driver)
{
    NEEDS_SDL();
    char *dir = temp_dir();
    setenv("SDL_VIDEODRIVER", "offscreen", 1);
    setenv("CARTSIM_VIEW_SCRIPT", "wait 5; key s; key q", 1);
    cli_result r;
    run_cli((const char *[]){"view", "--backend", "interp", "--envs", "4", "--out", dir, NULL}, &r);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "screenshots 1, the last"), "%s", r.out);
    cli_result_free(&r);
    char path[1200];
    snprintf(path, sizeof path, "%s/cartsim-shot-000.png", dir);
    int w, h;
    uint8_t *img = load_png(path, &w, &h);
    cr_assert(w == 1200 && h == 800);
    free(img);
    remove_dir(dir);
}

/* Every environment with a picture renders through the command line, with
 * its heuristic; those whose .env file is not in envs/ yet are passed over. */
Test(cli_render, every_classic_environment)
{
    static const struct {
        const char *env;
        int w, h;
        rgb colour;             /* a colour of its picture */
    } envs[] = {
        {"cartpole", 600, 400, {202, 152, 101}},
        {"pendulum", 500, 500, {204, 77, 77}},
        {"mountain_car", 600, 400, {204, 204, 0}},
        {"mountain_car_continuous", 600, 400, {204, 204, 0}},
        {"acrobot", 500, 500, {0, 204, 204}},
    };
    char *dir = temp_dir();
    for (size_t k = 0; k < sizeof envs / sizeof envs[0]; k++) {
        char src[1024], out[1200], png[1300];
        snprintf(src, sizeof src, "%s/envs/%s.env", cli_test_root(), envs[k].env);
        if (access(src, F_OK) != 0) {
            fprintf(stderr, "\n*** %s: no %s yet, not rendered ***\n", __func__, src);
            continue;
        }
        snprintf(out, sizeof out, "%s/%s", dir, envs[k].env);
        cli_result r;
        run_cli((const char *[]){"render", "--env", envs[k].env, "--backend", "interp", "--steps", "2", "--policy",
                                 "heuristic", "--out", out, NULL},
                &r);
        cr_assert_eq(r.status, 0, "%s: %s", envs[k].env, r.err);
        cli_result_free(&r);
        snprintf(png, sizeof png, "%s/000002.png", out);
        int w, h;
        uint8_t *img = load_png(png, &w, &h);
        cr_assert(w == envs[k].w && h == envs[k].h, "%s: %dx%d", envs[k].env, w, h);
        cr_assert_gt(count_colour(img, w, h, envs[k].colour), 50, "%s", envs[k].env);
        cr_assert_gt(count_colour(img, w, h, WHITE), w * h / 2, "%s", envs[k].env);
        free(img);
    }
    remove_dir(dir);
}

/* ---- text in a real font ---- */

Test(render, text_has_lower_case)
{
    render_font *font;
    char err[RENDER_ERROR_SIZE];
    cs_status s = render_font_open(NULL, &font, err, sizeof err);
    if (s == CS_ERR_UNAVAILABLE)
        skip_loudly("%s", err);
    cr_assert_eq(s, CS_OK, "%s", err);
    /* The old bitmap font drew 'r' as 'R': a real one does not. */
    cr_assert_neq(render_glyph_width(font, 'r', 15), render_glyph_width(font, 'R', 15));
    cr_assert_lt(render_text_width(font, "render", 15), render_text_width(font, "RENDER", 15));
    int lower = 0, upper = 0;
    for (int k = 0; k < 2; k++) {
        uint8_t img[40 * 20 * 3];
        memset(img, 255, sizeof img);
        render_canvas c;
        render_canvas_init(&c, img, 40 * 3, (render_rect){0, 0, 40, 20}, 0, 0, 1, 20);
        render_text(&c, font, 2, 2, 15, k ? "R" : "r", (render_colour){0, 0, 0, 255});
        int inked = 0;
        for (size_t i = 0; i < sizeof img; i += 3)
            inked += img[i] < 128;
        *(k ? &upper : &lower) = inked;
    }
    cr_assert(lower > 0 && upper > lower, "r inks %d pixels, R %d", lower, upper);
    render_font_close(font);
}

Test(render, a_missing_font_names_its_package)
{
    render_font *font = (render_font *)1;
    char err[RENDER_ERROR_SIZE];
    cr_assert_eq(render_font_open("/nonexistent/font.ttf", &font, err, sizeof err), CS_ERR_UNAVAILABLE);
    cr_assert_null(font);
    cr_assert(strstr(err, "/nonexistent/font.ttf") && strstr(err, RENDER_FONT_PACKAGE), "%s", err);
    render_text(NULL, NULL, 0, 0, 15, "nothing is drawn without a font", (render_colour){0, 0, 0, 255});
}

/* ---- policies: what `run` plays, the viewer and `render` play ---- */

/* A linear CartPole policy that pushes toward the lean: unit 1 scores
 * theta + 0.5 theta_dot, unit 0 scores 0. */
static void write_cartpole_policy(const char *path)
{
    const double w[10] = {0, 0, 0, 0, 0, 0, 0, 1, 0.5, 0};
    char err[512];
    cr_assert_eq(cs_policy_save(path, "cartpole", "linear", 10, w, err, sizeof err), CS_OK, "%s", err);
}

/* The frame of the state `run` reaches after `steps` steps of one rollout. */
static uint8_t *run_frame(const char *policy_path, int64_t steps, uint64_t seed)
{
    cs_policy_file pf;
    char err[512];
    cr_assert_eq(cs_policy_load(policy_path, &pf, err, sizeof err), CS_OK, "%s", err);
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = "cartpole";
    cfg.backend = CS_BACKEND_INTERP;
    cfg.dtype = CS_DTYPE_F64;
    cfg.policy = pf.policy;
    cs_env *env;
    cr_assert_eq(cs_env_open(&cfg, &env), CS_OK, "%s", cs_env_error(env));
    cr_assert_eq(cs_env_set_weights(env, pf.weights), CS_OK, "%s", cs_env_error(env));
    cr_assert_eq(cs_env_reset(env, seed), CS_OK);
    cs_rollout_stats st;
    cr_assert_eq(cs_env_rollout(env, steps, &st), CS_OK, "%s", cs_env_error(env));
    int w, h;
    uint8_t *img = frame(env, 0, 1, 1, &w, &h);
    cs_env_close(env);
    cs_policy_file_free(&pf);
    return img;
}

Test(cli_render, a_policy_file_plays_the_states_run_steps_through)
{
    char *dir = temp_dir(), pol[1024], out[1024];
    snprintf(pol, sizeof pol, "%s/lean.pol", dir);
    snprintf(out, sizeof out, "%s/frames", dir);
    write_cartpole_policy(pol);
    cli_result r;
    run_cli((const char *[]){"render", "--backend", "interp", "--dtype", "f64", "--steps", "60", "--seed", "5",
                             "--policy", pol, "--out", out, NULL},
            &r);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cli_result_free(&r);
    const int64_t at[] = {1, 17, 60};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
        char png[1200];
        snprintf(png, sizeof png, "%s/%06lld.png", out, (long long)at[k]);
        int w, h;
        uint8_t *got = load_png(png, &w, &h), *want = run_frame(pol, at[k], 5);
        cr_assert(w == 600 && h == 400);
        cr_assert(memcmp(got, want, (size_t)w * h * 3) == 0, "frame %lld differs from run's state",
                  (long long)at[k]);
        free(got);
        free(want);
    }
    remove_dir(dir);
}

/* With the same seed, a policy file and the env's declared policy give
 * different films: the file is really played. */
Test(cli_render, a_policy_file_is_not_the_random_policy)
{
    char *dir = temp_dir(), pol[1024], a[1024], b[1024];
    snprintf(pol, sizeof pol, "%s/lean.pol", dir);
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    write_cartpole_policy(pol);
    cli_result r;
    run_cli((const char *[]){"render", "--backend", "interp", "--steps", "40", "--policy", pol, "--out", a, NULL}, &r);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cli_result_free(&r);
    run_cli((const char *[]){"render", "--backend", "interp", "--steps", "40", "--out", b, NULL}, &r);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cli_result_free(&r);
    char pa[1200], pb[1200];
    snprintf(pa, sizeof pa, "%s/000040.png", a);
    snprintf(pb, sizeof pb, "%s/000040.png", b);
    int w, h;
    uint8_t *ia = load_png(pa, &w, &h), *ib = load_png(pb, &w, &h);
    cr_assert(memcmp(ia, ib, (size_t)w * h * 3) != 0);
    free(ia);
    free(ib);
    remove_dir(dir);
}

Test(cli_view, plays_a_policy_file_and_a_config_naming_one)
{
    NEEDS_SDL();
    char *dir = temp_dir(), pol[1024], ini[1024];
    snprintf(pol, sizeof pol, "%s/lean.pol", dir);
    snprintf(ini, sizeof ini, "%s/watch.ini", dir);
    write_cartpole_policy(pol);
    FILE *f = fopen(ini, "w");
    cr_assert(f);
    fprintf(f, "[env]\nname = cartpole\n[agent]\npolicy = %s\n", pol);
    fclose(f);
    setenv("SDL_VIDEODRIVER", "offscreen", 1);
    setenv("CARTSIM_VIEW_SCRIPT", "wait 40; key q", 1);
    cli_result r;
    run_cli((const char *[]){"view", "--backend", "interp", "--envs", "4", "--policy", pol, "--out", dir, NULL}, &r);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "env-steps"), "%s", r.out);
    cli_result_free(&r);
    run_cli((const char *[]){"view", "--backend", "interp", "--config", ini, "--out", dir, NULL}, &r);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cli_result_free(&r);
    run_cli((const char *[]){"render", "--backend", "interp", "--config", ini, "--steps", "3", "--out", dir, NULL}, &r);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cli_result_free(&r);
    /* A policy for another environment is refused in one line. */
    run_cli((const char *[]){"view", "--backend", "interp", "--env", "acrobot", "--policy", pol, NULL}, &r);
    assert_usage_error(&r, "is a policy for cartpole");
    run_cli((const char *[]){"render", "--backend", "interp", "--env", "acrobot", "--policy", pol, "--out", dir, NULL},
            &r);
    assert_usage_error(&r, "is a policy for cartpole");
    remove_dir(dir);
}

/* The window is the program's: the library does not load SDL2. */
Test(render, the_shared_library_does_not_link_sdl2)
{
    const char *bin = getenv("CARTSIM_BIN");
    cr_assert(bin, "CARTSIM_BIN is not set (run through make check)");
    char lib[1024], cmd[1200];
    snprintf(lib, sizeof lib, "%s", bin);
    char *slash = strrchr(lib, '/');
    cr_assert(slash && (size_t)(slash - lib) + sizeof "/libcartsim.so" <= sizeof lib);
    strcpy(slash, "/libcartsim.so");
    if (access(lib, F_OK) != 0)
        skip_loudly("%.900s was not built", lib);
    snprintf(cmd, sizeof cmd, "ldd '%.1100s' 2>&1", lib);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    char line[1024], all[16384] = "";
    while (fgets(line, sizeof line, p))
        strncat(all, line, sizeof all - strlen(all) - 1);
    cr_assert_eq(pclose(p), 0, "%s", all);
    cr_assert(strstr(all, "libc.so") && !strstr(all, "SDL"), "%s", all);
}

/* Holding an arrow overrides the compiled policy on the selected
 * environment only: pushed left all the time, its pole falls, while the
 * heuristic keeps the others up. */
Test(view, arrows_override_the_policy_on_the_selected_environment)
{
    NEEDS_SDL();
    char *dir = temp_dir(), err[RENDER_ERROR_SIZE] = "";
    view_report held, free_run;
    cr_assert_eq(view("click 2; down left; wait 90; up left", "heuristic", dir, 4, &held, err, sizeof err), CS_OK,
                 "%s", err);
    cr_assert_eq(view("click 2; wait 91", "heuristic", dir, 4, &free_run, err, sizeof err), CS_OK, "%s", err);
    cr_assert(held.steps >= 60 && free_run.steps >= 60, "%lld and %lld steps", (long long)held.steps,
              (long long)free_run.steps);
    cr_assert_eq(free_run.episodes, 0, "the heuristic balances");
    cr_assert_geq(held.episodes, 1, "the driven pole never fell");
    cr_assert_eq(held.selected, 2);
    remove_dir(dir);
}
