/* CartPole-v1 as Gymnasium draws it (cartpole.py, render()): a 600x400
 * frame, 125 px per metre (the frame spans the track's -2.4..2.4 m), a black
 * 50x30 cart centred on the track line at height 100, a pole 10 px wide and
 * 2 * 0.5 m long on an axle a quarter of the cart's height above the cart's
 * centre, a blue axle, and the track line drawn last. Gymnasium draws with y
 * up and flips the image at the end; the canvas does the same.
 *
 * The pole length is the default parameter's: overridden parameters are not
 * visible through the public API. */
#include <math.h>

#include "render.h"

#define WIDTH 600
#define HEIGHT 400
#define X_THRESHOLD 2.4
#define HALF_POLE_LENGTH 0.5
#define SCALE (WIDTH / (2 * X_THRESHOLD))
#define POLE_WIDTH 10.0
#define CART_WIDTH 50.0
#define CART_HEIGHT 30.0
#define TRACK_Y 100.0

static void draw(render_canvas *c, const double *state)
{
    const render_colour white = {255, 255, 255, 255}, black = {0, 0, 0, 255};
    const render_colour pole_colour = {202, 152, 101, 255}, axle_colour = {129, 132, 203, 255};
    double cart_x = state[0] * SCALE + WIDTH / 2.0, theta = state[2];
    double axle_y = TRACK_Y + CART_HEIGHT / 4;

    render_fill(c, white);
    double l = cart_x - CART_WIDTH / 2, r = cart_x + CART_WIDTH / 2;
    double b = TRACK_Y - CART_HEIGHT / 2, t = TRACK_Y + CART_HEIGHT / 2;
    const double cart[8] = {l, b, l, t, r, t, r, b};
    render_polygon(c, cart, 4, black);

    /* The upright pole's corners around the axle, rotated by -theta: a
     * positive angle leans the pole to the right. */
    double len = SCALE * (2 * HALF_POLE_LENGTH);
    const double corners[8] = {-POLE_WIDTH / 2, -POLE_WIDTH / 2, -POLE_WIDTH / 2, len - POLE_WIDTH / 2,
                               POLE_WIDTH / 2,  len - POLE_WIDTH / 2, POLE_WIDTH / 2, -POLE_WIDTH / 2};
    double co = cos(theta), si = sin(theta), pole[8];
    for (int k = 0; k < 4; k++) {
        double u = corners[2 * k], v = corners[2 * k + 1];
        pole[2 * k] = cart_x + u * co + v * si;
        pole[2 * k + 1] = axle_y - u * si + v * co;
    }
    render_polygon(c, pole, 4, pole_colour);
    render_pixel_disc(c, cart_x, axle_y, (int)(POLE_WIDTH / 2), axle_colour);
    render_line(c, 0.5, TRACK_Y + 0.5, WIDTH + 0.5, TRACK_Y + 0.5, black);
}


const render_rule render_rule_cartpole = {
    .name = "cartpole",
    .title = "CartPole-v1",
    .state_dim = 4,
    .width = WIDTH,
    .height = HEIGHT,
    .fps = 50,
    .draw = draw,
};
