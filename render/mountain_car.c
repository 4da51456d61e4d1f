/* MountainCar-v0 and MountainCarContinuous-v0 as Gymnasium draws them
 * (mountain_car.py and continuous_mountain_car.py, render()): a 600x400
 * frame spanning positions -1.2..0.6, the hill y = 0.45 sin(3x) + 0.55 as a
 * line, a black 40x20 car tilted by cos(3x) radians (Gymnasium's own choice)
 * with two grey wheels, and a yellow flag at the goal (0.5, or 0.45 for
 * the continuous one). */
#include <math.h>

#include "render.h"

#define WIDTH 600
#define HEIGHT 400
#define MIN_POSITION -1.2
#define MAX_POSITION 0.6
#define SCALE (WIDTH / (MAX_POSITION - MIN_POSITION))
#define CAR_WIDTH 40.0
#define CAR_HEIGHT 20.0
#define CLEARANCE 10.0

static double hill(double x)
{
    return sin(3 * x) * 0.45 + 0.55;
}

static void draw_with_goal(render_canvas *c, const double *state, double goal)
{
    const render_colour white = {255, 255, 255, 255}, black = {0, 0, 0, 255};
    const render_colour wheel = {128, 128, 128, 255}, flag = {204, 204, 0, 255};
    double pos = state[0];
    render_fill(c, white);

    /* The hill: 100 points, pixel centres joined. */
    double px = 0, py = 0;
    for (int i = 0; i < 100; i++) {
        double x = MIN_POSITION + (MAX_POSITION - MIN_POSITION) * i / 99;
        double qx = (x - MIN_POSITION) * SCALE + 0.5, qy = hill(x) * SCALE + 0.5;
        if (i > 0)
            render_line(c, px, py, qx, qy, black);
        px = qx;
        py = qy;
    }

    double a = cos(3 * pos), co = cos(a), si = sin(a);
    double base_x = (pos - MIN_POSITION) * SCALE, base_y = CLEARANCE + hill(pos) * SCALE;
    const double corners[8] = {-CAR_WIDTH / 2, 0, -CAR_WIDTH / 2, CAR_HEIGHT, CAR_WIDTH / 2, CAR_HEIGHT,
                               CAR_WIDTH / 2,  0};
    double pts[8];
    for (int k = 0; k < 4; k++) {
        double u = corners[2 * k], v = corners[2 * k + 1];
        pts[2 * k] = u * co - v * si + base_x;
        pts[2 * k + 1] = u * si + v * co + base_y;
    }
    render_polygon(c, pts, 4, black);
    for (int side = -1; side <= 1; side += 2) {
        double u = side * CAR_WIDTH / 4;
        render_pixel_disc(c, u * co + base_x, u * si + base_y, (int)(CAR_HEIGHT / 2.5), wheel);
    }

    int flag_x = (int)((goal - MIN_POSITION) * SCALE), flag_y1 = (int)(hill(goal) * SCALE), flag_y2 = flag_y1 + 50;
    render_line(c, flag_x + 0.5, flag_y1 + 0.5, flag_x + 0.5, flag_y2 + 0.5, black);
    const double triangle[6] = {flag_x, flag_y2, flag_x, flag_y2 - 10, flag_x + 25, flag_y2 - 5};
    render_polygon(c, triangle, 3, flag);
}

static void draw_discrete(render_canvas *c, const double *state)
{
    draw_with_goal(c, state, 0.5);
}

static void draw_continuous(render_canvas *c, const double *state)
{
    draw_with_goal(c, state, 0.45);
}



const render_rule render_rule_mountain_car = {
    .name = "mountain_car",
    .title = "MountainCar-v0",
    .state_dim = 2,
    .width = WIDTH,
    .height = HEIGHT,
    .fps = 30,
    .draw = draw_discrete,
};

const render_rule render_rule_mountain_car_continuous = {
    .name = "mountain_car_continuous",
    .title = "MountainCarContinuous-v0",
    .state_dim = 2,
    .width = WIDTH,
    .height = HEIGHT,
    .fps = 30,
    .draw = draw_continuous,
};
