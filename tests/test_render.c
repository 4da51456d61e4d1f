/* render/: pictures of known states checked pixel by pixel (CartPole as
 * Gymnasium draws it; Pendulum, MountainCar and Acrobot through the draw
 * blocks of their .env files), tiled batches, the scripted viewer (pause, step, select, drive, screenshot,
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

/* Gymnasium draws with y up, then flips: its row y is our row 399 - y.
 * pygame's polygons include their edges: the cart spans rows 85..115 before
 * the flip (284..314 after), columns 300 + 125 x - 25 .. 300 + 125 x + 25;
 * the axle is the disc of radius 5 around pixel (int(cart_x), 107), our row
 * 292; the track is row 299; the pole, 10 px wide, covers columns 295..305. */
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
    /* the cart: 51 x 31, edges included */
    assert_pixel(img, 600, 275, 310, BLACK);
    assert_pixel(img, 600, 325, 310, BLACK);
    assert_pixel(img, 600, 274, 310, WHITE);
    assert_pixel(img, 600, 326, 310, WHITE);
    assert_pixel(img, 600, 280, 284, BLACK);
    assert_pixel(img, 600, 280, 314, BLACK);
    assert_pixel(img, 600, 280, 283, WHITE);
    assert_pixel(img, 600, 280, 315, WHITE);
    /* the axle, radius 5 */
    assert_pixel(img, 600, 300, 292, AXLE);
    assert_pixel(img, 600, 295, 292, AXLE);
    assert_pixel(img, 600, 305, 292, AXLE);
    assert_pixel(img, 600, 300, 287, AXLE);
    assert_pixel(img, 600, 300, 297, AXLE);
    /* the pole: columns 295..305, up to 125 px above the axle minus half its width */
    assert_pixel(img, 600, 295, 200, POLE);
    assert_pixel(img, 600, 305, 200, POLE);
    assert_pixel(img, 600, 294, 200, WHITE);
    assert_pixel(img, 600, 306, 200, WHITE);
    assert_pixel(img, 600, 300, 172, POLE);
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

/* The black run of row 310 (the cart's lower half) is 51 pixels around
 * column 300 + 125 x. */
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
        cr_assert_eq(last - first + 1, 51, "x = %g: cart %d..%d", xs[k], first, last);
        cr_assert_float_eq((first + last) / 2.0, 300 + 125 * xs[k], 1e-9, "x = %g: cart %d..%d", xs[k], first, last);
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
        assert_pixel(img, w, ox + cx + 25, oy + 310, BLACK);
        assert_pixel(img, w, ox + cx - 26, oy + 310, WHITE);
        assert_pixel(img, w, ox + cx + 26, oy + 310, WHITE);
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

/* ---- every environment draws itself: draw blocks ---- */

static int count_colour(const uint8_t *img, int w, int h, rgb c)
{
    int n = 0;
    for (int i = 0; i < w * h; i++)
        n += img[3 * i] == c.r && img[3 * i + 1] == c.g && img[3 * i + 2] == c.b;
    return n;
}

/* An environment from source text (written to a file, as a user's would
 * be), n of them, on the interpreter in f64, reset. */
static cs_env *open_text(const char *text, int64_t n, const char *const *params, int n_params)
{
    char path[] = "/tmp/cartsim-render-XXXXXX.env";
    int fd = mkstemps(path, 4);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    cs_config cfg;
    cs_config_init(&cfg);
    cfg.env = path;
    cfg.num_envs = n;
    cfg.backend = CS_BACKEND_INTERP;
    cfg.dtype = CS_DTYPE_F64;
    for (int k = 0; k < n_params; k++)
        cfg.params[k] = params[k];
    cfg.n_params = n_params;
    cs_env *env;
    cs_status s = cs_env_open(&cfg, &env);
    unlink(path);
    cr_assert_eq(s, CS_OK, "%s", cs_env_error(env));
    cr_assert_eq(cs_env_reset(env, 1), CS_OK);
    return env;
}

static char *env_source(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/envs/%s.env", cli_test_root(), name);
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s: %s", path, strerror(errno));
    char *text = calloc(1, 1 << 16);
    cr_assert(text);
    size_t n = fread(text, 1, (1 << 16) - 1, f);
    fclose(f);
    text[n] = 0;
    return text;
}

/* A ball on a line, a user's own environment: its picture is its own. */
static const char *const BALL =
    "env ball \"Ball-v0\"\n"
    "state x\n"
    "action discrete 2\n"
    "observe x\n"
    "reset { x = 50 }\n"
    "step { x' = x + action; reward = 1; terminated = false }\n"
    "draw {\n"
    "    canvas(100, 80)\n"
    "    fps(25)\n"
    "    background(rgb(10, 20, 30))\n"
    "    red = rgb(200, 0, 0)\n"
    "    circle(x, 40, 5, red)\n"
    "    circle(stack(10, 90), 10, 2, rgb(0, 200, 0))   # two discs from one statement\n"
    "}\n";

Test(render, a_users_own_environment_draws_itself)
{
    cs_env *env = open_text(BALL, 1, NULL, 0);
    int w, h;
    uint8_t *img = frame(env, 0, 1, 1, &w, &h);
    cr_assert(w == 100 && h == 80, "%dx%d", w, h);
    const rgb bg = {10, 20, 30}, red = {200, 0, 0}, green = {0, 200, 0};
    assert_pixel(img, w, 0, 0, bg);
    /* the disc around pixel (50, 40), row 79 - 40 = 39 after the flip, radius 5 inclusive */
    assert_pixel(img, w, 50, 39, red);
    assert_pixel(img, w, 55, 39, red);
    assert_pixel(img, w, 45, 39, red);
    assert_pixel(img, w, 50, 34, red);
    assert_pixel(img, w, 56, 39, bg);
    assert_pixel(img, w, 54, 35, bg);   /* (4, 4) from the centre: 5.66 > 5.5 */
    assert_pixel(img, w, 10, 69, green);
    assert_pixel(img, w, 90, 69, green);
    assert_pixel(img, w, 50, 69, bg);
    cs_renderer *r;
    cr_assert_eq(cs_renderer_open(env, &r), CS_OK);
    cr_assert_eq(cs_renderer_fps(r), 25);
    cs_renderer_close(r);
    cr_assert_eq(cs_renderer_fps(NULL), 0);
    free(img);
    cs_env_close(env);
}

/* docs/dsl.md's example of a picture, as the page shows it, draws. */
Test(render, the_pictures_example_of_the_language_page_draws)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/docs/dsl.md", cli_test_root());
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s: %s", path, strerror(errno));
    char *page = calloc(1, 1 << 20);
    cr_assert(page);
    size_t n = fread(page, 1, (1 << 20) - 1, f);
    fclose(f);
    page[n] = 0;
    char *start = strstr(page, "```\nenv ball \"Ball-v0\"\n");
    cr_assert(start, "no ball example in docs/dsl.md");
    start += 4;
    char *end = strstr(start, "```");
    cr_assert(end);
    *end = 0;
    cs_env *env = open_text(start, 1, NULL, 0);
    free(page);
    const double falling[2] = {1.0, -2.0};
    cr_assert_eq(cs_env_set_state(env, falling, NULL), CS_OK);
    int w, h;
    uint8_t *img = frame(env, 0, 1, 1, &w, &h);
    cr_assert(w == 300 && h == 400, "%dx%d", w, h);
    /* 100 pixels a metre, the floor 50 up: the falling ball's centre at 50 + 120 */
    assert_pixel(img, w, 150, 399 - 170, ((rgb){200, 40, 40}));
    assert_pixel(img, w, 150, 399 - 20, ((rgb){90, 60, 30}));
    assert_pixel(img, w, 5, 5, ((rgb){235, 240, 255}));
    free(img);
    cs_env_close(env);
}

/* Without a draw block there is no picture, and the message says what to add. */
Test(render, an_environment_without_a_draw_block_is_unavailable)
{
    char *text = env_source("cartpole");
    char *draw = strstr(text, "\ndraw {");
    cr_assert(draw);
    draw[1] = 0;
    char *line = strstr(text, "env cartpole \"CartPole-v1\"");
    cr_assert(line);
    memcpy(line, "env mystery  \"Mystery-v0\" ", strlen("env cartpole \"CartPole-v1\""));
    cs_env *env = open_text(text, 1, NULL, 0);
    free(text);
    cs_renderer *r;
    cr_assert_eq(cs_renderer_open(env, &r), CS_ERR_UNAVAILABLE);
    cr_assert(strstr(cs_renderer_error(r), "environment 'mystery' has no picture: add a draw block") &&
              strstr(cs_renderer_error(r), "docs/dsl.md"), "%s", cs_renderer_error(r));
    cr_assert_eq(cs_render_rgb(r, 0, 1, 1, NULL, 0, NULL, NULL), CS_ERR_STATE);
    cr_assert_eq(cs_renderer_fps(r), 0);
    cs_renderer_close(r);
    cs_env_close(env);
}

/* The frame of one environment of `name` in `state`. */
static uint8_t *state_frame(const char *name, const double *state, int *w, int *h, const char *const *params,
                            int n_params)
{
    char *text = env_source(name);
    cs_env *env = open_text(text, 1, params, n_params);
    free(text);
    cr_assert_eq(cs_env_set_state(env, state, NULL), CS_OK, "%s", cs_env_error(env));
    uint8_t *img = frame(env, 0, 1, 1, w, h);
    cs_env_close(env);
    return img;
}

/* CartPole with --param length=1.0: the pole is drawn twice as long, as
 * Gymnasium draws it with env.length = 1.0. */
Test(render, an_overridden_parameter_shows)
{
    const double upright[4] = {0, 0, 0, 0};
    const char *const longer[] = {"length=1.0"};
    int w, h;
    uint8_t *normal = state_frame("cartpole", upright, &w, &h, NULL, 0);
    uint8_t *tall = state_frame("cartpole", upright, &w, &h, longer, 1);
    /* the axle at Gymnasium's row 107; the top corners 2 * length * 125 - 5 above it */
    int top_normal = 399 - (107 + 120), top_tall = 399 - (107 + 245);
    assert_pixel(normal, w, 300, top_normal, POLE);
    assert_pixel(normal, w, 300, top_normal - 1, WHITE);
    assert_pixel(normal, w, 300, top_tall, WHITE);
    assert_pixel(tall, w, 300, top_tall, POLE);
    assert_pixel(tall, w, 300, top_tall - 1, WHITE);
    free(normal);
    free(tall);
}

/* A parameter drawn per environment (--param length=LO:HI) is each one's own. */
Test(render, a_parameter_drawn_per_environment_shows_in_each_tile)
{
    char *text = env_source("cartpole");
    const char *const ranged[] = {"length=0.2:1.4"};
    cs_env *env = open_text(text, 6, ranged, 1);
    free(text);
    double state[24] = {0};
    cr_assert_eq(cs_env_set_state(env, state, NULL), CS_OK);
    int w, h;
    uint8_t *img = frame(env, 0, 6, 6, &w, &h);
    int tops[6], distinct = 0;
    for (int k = 0; k < 6; k++) {
        tops[k] = -1;
        for (int y = 0; y < 400 && tops[k] < 0; y++)
            if (same(pixel(img, w, k * 600 + 300, y), POLE))
                tops[k] = y;
        /* 2 * length * 125 - 5 above the axle, length in [0.2, 1.4] */
        cr_assert(tops[k] >= 399 - (107 + 345) && tops[k] <= 399 - (107 + 45), "tile %d: pole top %d", k, tops[k]);
        bool seen = false;
        for (int j = 0; j < k; j++)
            seen |= tops[j] == tops[k];
        distinct += !seen;
    }
    cr_assert_geq(distinct, 5, "pole tops %d %d %d %d %d %d", tops[0], tops[1], tops[2], tops[3], tops[4], tops[5]);
    free(img);
    cs_env_close(env);
}

Test(render, pendulum_mountain_car_and_acrobot_pictures)
{
    const rgb rod = {204, 77, 77}, grey = {128, 128, 128}, flag = {204, 204, 0}, link = {0, 204, 204};
    const rgb joint = {204, 204, 0};
    int w, h;
    /* Pendulum: theta 0 points up from the centre (250, 249); pi/2 to the left. */
    double up[2] = {0, 0}, left[2] = {M_PI / 2, 0};
    uint8_t *img = state_frame("pendulum", up, &w, &h, NULL, 0);
    cr_assert(w == 500 && h == 500);
    assert_pixel(img, 500, 250, 180, rod);
    assert_pixel(img, 500, 250, 320, WHITE);
    assert_pixel(img, 500, 250, 249, BLACK);
    free(img);
    img = state_frame("pendulum", left, &w, &h, NULL, 0);
    assert_pixel(img, 500, 180, 249, rod);
    assert_pixel(img, 500, 320, 249, WHITE);
    free(img);

    /* MountainCar at the valley's floor: the car above x = (pos + 1.2) * 333.3,
     * the yellow flag at the top right. */
    double valley[2] = {-0.5236, 0};
    img = state_frame("mountain_car", valley, &w, &h, NULL, 0);
    cr_assert(w == 600 && h == 400);
    int car_x = (int)((valley[0] + 1.2) * 600 / 1.8);
    double ground = 0.45 * sin(3 * valley[0]) + 0.55;
    assert_pixel(img, 600, car_x, 399 - (int)(10 + ground * 600 / 1.8 + 12), BLACK);
    assert_pixel(img, 600, 572, 22, flag);
    bool wheel = false;
    for (int y = 330; y < 400; y++)
        for (int x = car_x - 15; x <= car_x + 15; x++)
            wheel |= same(pixel(img, 600, x, y), grey);
    cr_assert(wheel, "no wheel below the car");
    /* the hill, a curve of 100 points: black at its lowest point, (pi/2 / 3 ... ) */
    assert_pixel(img, 600, (int)((-M_PI / 6 + 1.2) * 600 / 1.8), 399 - (int)(0.1 * 600 / 1.8), BLACK);
    free(img);
    img = state_frame("mountain_car_continuous", valley, &w, &h, NULL, 0);
    assert_pixel(img, 600, 555, 23, flag);   /* goal 0.45 */
    free(img);

    /* Acrobot hanging straight down: both links below the yellow pivot. */
    double hang[4] = {0, 0, 0, 0};
    img = state_frame("acrobot", hang, &w, &h, NULL, 0);
    cr_assert(w == 500 && h == 500);
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

/* FrozenLake draws its map with a grid coloured from its constant table
 * and the elf on its cell. */
Test(render, frozen_lake_draws_its_map_with_a_grid)
{
    char *text = env_source("frozen_lake");
    cs_env *env = open_text(text, 1, NULL, 0);
    free(text);
    const double state[2] = {6, 2};   /* s = 6: row 1, column 2 */
    cr_assert_eq(cs_env_set_state(env, state, NULL), CS_OK, "%s", cs_env_error(env));
    int w, h;
    uint8_t *img = frame(env, 0, 1, 1, &w, &h);
    cr_assert(w == 256 && h == 256, "%dx%d", w, h);
    const rgb ice = {190, 225, 245}, hole = {30, 50, 100}, goal = {250, 200, 40}, elf = {200, 60, 60};
    assert_pixel(img, w, 32, 32, ice);                 /* row 0, column 0: the start */
    assert_pixel(img, w, 64 + 32, 64 + 32, hole);      /* row 1, column 1 */
    assert_pixel(img, w, 0 + 5, 192 + 5, hole);        /* row 3, column 0 */
    assert_pixel(img, w, 192 + 32, 192 + 32, goal);    /* row 3, column 3 */
    assert_pixel(img, w, 128 + 32, 64 + 32, elf);      /* the elf on cell 6 */
    assert_pixel(img, w, 128 + 5, 64 + 5, ice);
    free(img);
    cs_env_close(env);
}

/* Acrobot's frame spans both links and 0.2 m more, Gymnasium's bound: a
 * longer link (--param link_length_1=2) is drawn whole, in its tile, and
 * no tile paints its neighbour. */
Test(render, a_longer_acrobot_stays_in_its_tile)
{
    char *text = env_source("acrobot");
    const char *const longer[] = {"link_length_1=2"};
    cs_env *env = open_text(text, 2, longer, 1);
    free(text);
    /* environment 0 stretched to the right (theta1 = pi/2), 1 hanging down */
    double state[8] = {M_PI / 2, 0, 0, 0, 0, 0, 0, 0};
    cr_assert_eq(cs_env_set_state(env, state, NULL), CS_OK);
    int w, h;
    uint8_t *img = frame(env, 0, 2, 2, &w, &h);
    cr_assert(w == 1000 && h == 500);
    const rgb link = {0, 204, 204};
    double scale = 500 / (2 * (2 + 1 + 0.2));
    int tip = (int)(250 + 3 * scale);   /* 3 m to the right of the pivot */
    assert_pixel(img, w, tip - 3, 249, link);
    assert_pixel(img, w, tip + 6, 249, WHITE);
    for (int y = 0; y < 500; y++)
        for (int x = 500; x < 520; x++)
            cr_assert(!same(pixel(img, w, x, y), link), "tile 1 painted at (%d, %d)", x, y);
    free(img);
    cs_env_close(env);
}

Test(render, spring_mass_draws_itself_with_text)
{
    double state[2] = {0.5, -0.25};
    int w, h;
    uint8_t *img = state_frame("spring_mass", state, &w, &h, NULL, 0);
    cr_assert(w == 600 && h == 240, "%dx%d", w, h);
    /* the mass, blue, 0.3 m wide around x = 0.5: pixels 120 * (0.5 + 2.5) -18 .. +18 */
    assert_pixel(img, w, 360, 240 - 72 - 18, ((rgb){60, 110, 200}));
    int inked = 0;
    for (int y = 0; y < 30; y++)
        for (int x = 0; x < 200; x++)
            inked += pixel(img, w, x, y).r < 128;
    cr_assert_gt(inked, 40, "the text at the top left");
    free(img);
    /* near an end of the track, the mass turns red */
    state[0] = 1.8;
    img = state_frame("spring_mass", state, &w, &h, NULL, 0);
    assert_pixel(img, w, (int)(120 * (1.8 + 2.5)), 240 - 72 - 18, ((rgb){204, 60, 60}));
    free(img);
}

/* Values that are not numbers, infinities, shapes far off the frame and
 * colours that are not colours: skipped or clipped, never a crash. */
Test(render, nonsense_values_are_skipped_or_clipped)
{
    static const char *const src =
        "env bad \"Bad-v0\"\n"
        "state x\n"
        "action discrete 2\n"
        "observe x\n"
        "reset { x = 0 }\n"
        "step { x' = x; reward = 0; terminated = false }\n"
        "draw {\n"
        "    canvas(80, 60)\n"
        "    inf = 1 / x\n"
        "    nan = inf - inf\n"
        "    rect(0, 0, 10, 10, rgb(200, 0, 0))\n"
        "    rect(nan, 0, 10, 10, rgb(0, 0, 200))\n"
        "    rect(0, 0, inf, 10, rgb(0, 0, 200))\n"
        "    rect(-1e300, -1e300, 1e300, 1e300, -1)\n"
        "    rect(-1e300, 20, 1e300, 30, 16777216)\n"
        "    polygon(40, 30, nan, rgb(0, 0, 200), 0, 0, 5, 0, 0, 5)\n"
        "    polygon(40, 30, 0, rgb(0, 200, 0), -1e300, -3, 1e300, -3, 0, 1e300)\n"
        "    circle(inf, 5, 3, rgb(0, 0, 200))\n"
        "    circle(5, 5, -3, rgb(0, 0, 200))\n"
        "    circle(5, 5, 1e300, rgb(0, 0, 200))\n"
        "    line(0, 50, 1e300, 50, rgb(1, 2, 3))\n"
        "    line(0, 55, nan, 55, rgb(0, 0, 200))\n"
        "    text(nan, 10, 12, rgb(0, 0, 200), \"a\")\n"
        "    text(10, 50, 1e9, rgb(0, 0, 200), \"a\", inf, nan)\n"
        "    text(10, 50, 12, nan, \"never\")\n"
        "}\n";
    cs_env *env = open_text(src, 1, NULL, 0);
    int w, h;
    uint8_t *img = frame(env, 0, 1, 1, &w, &h);
    cr_assert(w == 80 && h == 60);
    const rgb red = {200, 0, 0}, green = {0, 200, 0}, line = {1, 2, 3}, blue = {0, 0, 200};
    assert_pixel(img, w, 5, 54, red);          /* the one proper rect */
    assert_pixel(img, w, 40, 59 - 27, green);  /* a huge polygon, clipped to the frame */
    assert_pixel(img, w, 79, 59 - 50, line);   /* a line to 1e300, clipped */
    cr_assert_eq(count_colour(img, w, h, blue), 0, "shapes with NaN or infinite values are not drawn");
    cr_assert_gt(count_colour(img, w, h, WHITE), 100, "colours -1 and 2^24 are not colours: not drawn");
    free(img);
    cs_env_close(env);
}

/* A frame drawn smaller than its pixels (the viewer's tiles) keeps its
 * one-pixel lines whole and its shapes where they belong. */
Test(render, a_scaled_down_frame_keeps_its_lines)
{
    char *text = env_source("cartpole");
    cs_env *env = open_text(text, 1, NULL, 0);
    free(text);
    const double upright[4] = {0, 0, 0, 0};
    cr_assert_eq(cs_env_set_state(env, upright, NULL), CS_OK);
    render_picture *pic;
    char err[512];
    cr_assert_eq(render_picture_open(env, &pic, err, sizeof err), CS_OK, "%s", err);
    cr_assert_eq(render_picture_read(pic, err, sizeof err), CS_OK, "%s", err);
    enum { W = 180, H = 120 };   /* 0.3 of 600x400 */
    static uint8_t img[W * H * 3];
    render_canvas c;
    render_canvas_init(&c, img, W * 3, (render_rect){0, 0, W, H}, 0, 0, 0.3, 400);
    render_picture_draw_env(pic, &c, 0);
    int track = (int)floor((400 - 100.5) * 0.3);   /* frame row 100's centre */
    for (int x = 0; x < W; x++)
        cr_assert(same(pixel(img, W, x, track), BLACK), "the track has a hole at column %d", x);
    assert_pixel(img, W, 90, (int)((400 - 200) * 0.3), POLE);
    assert_pixel(img, W, 90, (int)((400 - 100) * 0.3) + 3, BLACK);   /* the cart */
    assert_pixel(img, W, 10, 10, WHITE);
    render_picture_free(pic);
    cs_env_close(env);
}

/* A grid colours a cell per element, row 0 on top; an element that is not a
 * colour leaves its cell alone. The parser takes grids once the language
 * has arrays: the item is built here as the parser will build it. */
Test(render, a_grid_colours_its_cells)
{
    static const char *const src = "env g \"G-v0\"\nstate x\naction discrete 2\nobserve x\n"
                                   "reset { x = 0 }\nstep { x' = x; reward = 0; terminated = false }\n"
                                   "draw { canvas(40, 30) }\n";
    char err[512];
    cs_program *p;
    cr_assert_eq(cs_parse(src, strlen(src), "g.env", CS_F64, NULL, 0, &p, err, sizeof err), 0, "%s", err);
    const double cells[6] = {0xff0000, 0x00ff00, 0x0000ff, -1, 0x010203, 0xffffff};
    cs_draw_item item = {.kind = CS_DRAW_GRID, .count = 1, .per_shape = 4 + 6, .rows = 2, .columns = 3};
    int first = cs_program_add_draw_roots(p, item.per_shape);
    cr_assert_geq(first, 0);
    item.first = (unsigned)first;
    const double xywh[4] = {5, 25, 10, 10};   /* the top left at (5, 25); cells 10 x 10 */
    for (unsigned k = 0; k < item.per_shape; k++)
        p->draw[first + k] = cs_const(p->graph, CS_F64, k < 4 ? xywh[k] : cells[k - 4]);
    cr_assert_geq(cs_program_add_draw_item(p, &item), 0);
    render_picture *pic;
    cr_assert_eq(render_picture_new(p, &pic, err, sizeof err), CS_OK, "%s", err);
    uint8_t img[40 * 30 * 3];
    render_canvas c;
    render_canvas_init(&c, img, 40 * 3, (render_rect){0, 0, 40, 30}, 0, 0, 1, 30);
    double x = 0;
    void *carried[1] = {&x};
    cs_lanes l = {.begin = 0, .end = 1, .stride = 1, .carried = carried};
    render_picture_draw(pic, &c, &l, 0);
    /* frame y 25 is device row 5: the first row of cells covers rows 5..14 */
    assert_pixel(img, 40, 5, 5, ((rgb){255, 0, 0}));
    assert_pixel(img, 40, 14, 14, ((rgb){255, 0, 0}));
    assert_pixel(img, 40, 15, 5, ((rgb){0, 255, 0}));
    assert_pixel(img, 40, 34, 14, ((rgb){0, 0, 255}));
    assert_pixel(img, 40, 5, 15, WHITE);                 /* -1: not drawn, the background shows */
    assert_pixel(img, 40, 15, 24, ((rgb){1, 2, 3}));
    assert_pixel(img, 40, 4, 5, WHITE);
    assert_pixel(img, 40, 35, 5, WHITE);
    assert_pixel(img, 40, 5, 25, WHITE);
    render_picture_free(pic);
    cs_program_free(p);
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

/* A path with an extension that is no format is refused, with the formats,
 * and nothing is written (it used to be a directory of PNGs named x.avi). */
Test(cli_render, an_unknown_format_is_refused_with_the_list)
{
    char *dir = temp_dir(), out[1200], png[1300];
    const char *const names[] = {"x.avi", "frames.png", "run.webm"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        snprintf(out, sizeof out, "%s/%s", dir, names[k]);
        cli_result r;
        run_cli((const char *[]){"render", "--backend", "interp", "--steps", "2", "--out", out, NULL}, &r);
        char want[64];
        snprintf(want, sizeof want, "unknown format '%s'", strrchr(names[k], '.'));
        bool listed = strstr(r.err, "FILE.gif") && strstr(r.err, "FILE.mp4") && strstr(r.err, "PNG frames");
        cr_assert(listed, "%s", r.err);
        assert_usage_error(&r, want);
        cr_assert(access(out, F_OK) != 0, "%s was written", out);
    }
    /* an existing directory with a dot in its name, or a name ending in '/', is a directory */
    snprintf(out, sizeof out, "%s/run.1/", dir);
    cli_result r;
    run_cli((const char *[]){"render", "--backend", "interp", "--steps", "1", "--out", out, NULL}, &r);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_result_free(&r);
    snprintf(png, sizeof png, "%s/000001.png", out);
    cr_assert(access(png, F_OK) == 0);
    remove_dir(dir);
}

/* An environment without a draw block: one line saying what to add (with
 * the environment's own first state in the example), exit status 2, and
 * no directory made. */
Test(cli_render, an_environment_without_a_picture_says_what_to_add)
{
    char *dir = temp_dir(), env[1200], out[1200];
    snprintf(env, sizeof env, "%s/ball.env", dir);
    snprintf(out, sizeof out, "%s/frames", dir);
    FILE *f = fopen(env, "w");
    cr_assert(f);
    fputs("env ball \"Ball-v0\"\nstate height\naction discrete 2\nobserve height\nreset { height = 0 }\n"
          "step { height' = height; reward = 1; terminated = false }\n", f);
    fclose(f);
    cli_result r;
    run_cli((const char *[]){"render", "--env", env, "--backend", "interp", "--out", out, NULL}, &r);
    assert_usage_error(&r, "environment 'ball' has no picture: add a draw block to its .env file");
    run_cli((const char *[]){"render", "--env", env, "--backend", "interp", "--out", out, NULL}, &r);
    cr_assert(strstr(r.err, "circle(height, 0, 0.2"), "%s", r.err);
    cli_result_free(&r);
    cr_assert(access(out, F_OK) != 0, "%s was made", out);
    remove_dir(dir);
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

/* `view --out DIR` makes DIR, as `render` does, so that a recording (a
 * directory inside it) can be made: it used to end in "cannot create
 * directory" in the status bar. */
Test(cli_view, out_is_made_and_a_recording_goes_into_it)
{
    NEEDS_SDL();
    char *dir = temp_dir(), out[1200];
    snprintf(out, sizeof out, "%s/not-yet", dir);
    setenv("SDL_VIDEODRIVER", "offscreen", 1);
    setenv("CARTSIM_VIEW_SCRIPT", "wait 2; key v; wait 4; key v; key q", 1);
    cli_result r;
    run_cli((const char *[]){"view", "--backend", "interp", "--envs", "2", "--out", out, NULL}, &r);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "recorded") && strstr(r.out, "not-yet/cartsim-rec-000"), "%s", r.out);
    cli_result_free(&r);
    char frame0[1300];
    snprintf(frame0, sizeof frame0, "%s/cartsim-rec-000/000000.png", out);
    cr_assert(access(frame0, F_OK) == 0, "%s", frame0);
    remove_dir(dir);
}

/* The help's second column starts past its widest key: "pgup pgdn" used to
 * run into its description. */
Test(view, help_keys_do_not_overlap_their_descriptions)
{
    render_font *font;
    char err[RENDER_ERROR_SIZE];
    cs_status s = render_font_open(NULL, &font, err, sizeof err);
    if (s == CS_ERR_UNAVAILABLE)
        skip_loudly("%s", err);
    cr_assert_eq(s, CS_OK, "%s", err);
    for (int size = 11; size <= 24; size++) {
        int tab = view_help_tab(font, size);
        const char *const keys[] = {"pgup pgdn", "left right", "q esc", "space"};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            cr_assert_geq(tab, render_text_width(font, keys[k], size) + size / 2, "size %d: '%s' reaches the tab",
                          size, keys[k]);
    }
    render_font_close(font);
}

/* Neighbouring tiles show their returns with the same decimals. */
Test(view, returns_of_a_page_share_their_decimals)
{
    const double pendulum[3] = {-1234.5678, -12.3456, -0.5}, cartpole[3] = {12, 40, 0}, odd[2] = {NAN, 3};
    cr_assert_eq(view_return_decimals(pendulum, 3), 2);
    cr_assert_eq(view_return_decimals(cartpole, 3), 0);
    cr_assert_eq(view_return_decimals(odd, 2), 0);
    cr_assert_eq(view_return_decimals(pendulum + 2, 1), 2);
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
