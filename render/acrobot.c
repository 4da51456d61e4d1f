/* Acrobot-v1 as Gymnasium draws it (acrobot.py, render()): a 500x500 frame
 * spanning -2.2..2.2 m, a black line at the goal height (1 m above the
 * pivot), two cyan links 1 m long and 0.2 m wide hanging from the centre,
 * and a yellow joint at the base of each. theta1 = 0 hangs straight down;
 * theta2 is relative to the first link. */
#include <math.h>

#include "render.h"

#define DIM 500
#define LINK_LENGTH 1.0
#define BOUND (2 * LINK_LENGTH + 0.2)
#define SCALE (DIM / (BOUND * 2))
#define OFFSET (DIM / 2.0)

static void draw(render_canvas *c, const double *state)
{
    const render_colour white = {255, 255, 255, 255}, black = {0, 0, 0, 255};
    const render_colour link = {0, 204, 204, 255}, joint = {204, 204, 0, 255};
    render_fill(c, white);
    render_line(c, -2.2 * SCALE + OFFSET + 0.5, 1 * SCALE + OFFSET + 0.5, 2.2 * SCALE + OFFSET + 0.5,
                1 * SCALE + OFFSET + 0.5, black);
    /* Each link's base and direction; the second hangs from the first's end. */
    double base[2][2] = {{0, 0}, {LINK_LENGTH * sin(state[0]) * SCALE, -LINK_LENGTH * cos(state[0]) * SCALE}};
    double angle[2] = {state[0] - M_PI / 2, state[0] + state[1] - M_PI / 2};
    for (int i = 0; i < 2; i++) {
        double x = base[i][0] + OFFSET, y = base[i][1] + OFFSET, len = LINK_LENGTH * SCALE, half = 0.1 * SCALE;
        double co = cos(angle[i]), si = sin(angle[i]);
        const double corners[8] = {0, -half, 0, half, len, half, len, -half};
        double pts[8];
        for (int k = 0; k < 4; k++) {
            double u = corners[2 * k], v = corners[2 * k + 1];
            pts[2 * k] = u * co - v * si + x;
            pts[2 * k + 1] = u * si + v * co + y;
        }
        render_polygon(c, pts, 4, link);
        render_pixel_disc(c, x, y, (int)(0.1 * SCALE), joint);
    }
}


const render_rule render_rule_acrobot = {
    .name = "acrobot",
    .title = "Acrobot-v1",
    .state_dim = 4,
    .width = DIM,
    .height = DIM,
    .fps = 15,
    .draw = draw,
};
