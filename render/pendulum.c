/* Pendulum-v1 as Gymnasium draws it (pendulum.py, render()): a 500x500
 * frame spanning -2.2..2.2 m, a red rod 1 m long and 0.2 m wide from the
 * centre, rounded at both ends, and a black axle; theta = 0 points up.
 * Gymnasium also overlays an arrow image scaled by the last torque; the
 * state does not hold the torque, so the arrow is left out. */
#include <math.h>

#include "render.h"

#define DIM 500
#define BOUND 2.2
#define SCALE (DIM / (BOUND * 2))
#define OFFSET (DIM / 2)

static void draw(render_canvas *c, const double *state)
{
    const render_colour white = {255, 255, 255, 255}, rod = {204, 77, 77, 255}, black = {0, 0, 0, 255};
    double length = 1 * SCALE, width = 0.2 * SCALE;
    double a = state[0] + M_PI / 2, co = cos(a), si = sin(a);
    render_fill(c, white);
    const double corners[8] = {0, -width / 2, 0, width / 2, length, width / 2, length, -width / 2};
    double pts[8];
    for (int k = 0; k < 4; k++) {
        double u = corners[2 * k], v = corners[2 * k + 1];
        pts[2 * k] = u * co - v * si + OFFSET;
        pts[2 * k + 1] = u * si + v * co + OFFSET;
    }
    render_polygon(c, pts, 4, rod);
    render_pixel_disc(c, OFFSET, OFFSET, (int)(width / 2), rod);
    render_pixel_disc(c, length * co + OFFSET, length * si + OFFSET, (int)(width / 2), rod);
    render_pixel_disc(c, OFFSET, OFFSET, (int)(0.05 * SCALE), black);
}


const render_rule render_rule_pendulum = {
    .name = "pendulum",
    .title = "Pendulum-v1",
    .state_dim = 2,
    .width = DIM,
    .height = DIM,
    .fps = 30,
    .draw = draw,
};
