/* The bound behind envs/acrobot.env's wrap: one Acrobot RK4 step, from any
 * state the environment can reach, moves neither angle outside [-13 pi,
 * 13 pi] before it is wrapped. So Gymnasium's `while x > pi: x -= 2 pi`
 * loop runs at most six times (and `while x < -pi` likewise), and the .env
 * file's wrap, the loop unrolled eight times, is the loop itself.
 *
 * Not part of the suite (the book dynamics take about half a minute):
 *
 *     cc -O2 tests/acrobot_wrap_bound.c -lm -o /tmp/wrap_bound && /tmp/wrap_bound
 *
 * Method: interval arithmetic over the whole reachable box, theta1, theta2
 * in [-pi, pi] (the state after wrapping, or a reset in [-0.1, 0.1]),
 * |dtheta1| <= 4 pi, |dtheta2| <= 9 pi (the velocity bounds), torque in
 * [-1, 1], through the same formulas as the .env file (Gymnasium's _dsdt
 * with its constants, and rk4). Every interval operation widens its result
 * outward by a relative 1e-12, far more than the rounding of the double
 * operations it encloses, and sin/cos take their extremes inside the
 * interval into account, so each box's result encloses every value the real
 * computation can take there. Boxes whose enclosure is not within the bound
 * are split in half along their widest side (relative to the box), until
 * every piece is proven. The largest value a search over the box finds is
 * 29.7 (about 9.5 pi, book dynamics), so the bound has room to spare; an
 * f32 compile rounds far less than that room. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef struct {
    double lo, hi;
} interval;

static interval widen(double lo, double hi)
{
    double e = 1e-12 * (fabs(lo) + fabs(hi)) + 1e-300;
    return (interval){lo - e, hi + e};
}

static interval num(double v) { return (interval){v, v}; }
static interval add(interval a, interval b) { return widen(a.lo + b.lo, a.hi + b.hi); }
static interval sub(interval a, interval b) { return widen(a.lo - b.hi, a.hi - b.lo); }
static interval neg(interval a) { return (interval){-a.hi, -a.lo}; }

static interval mul(interval a, interval b)
{
    double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
    double lo = p[0], hi = p[0];
    for (int k = 1; k < 4; k++) {
        lo = fmin(lo, p[k]);
        hi = fmax(hi, p[k]);
    }
    return widen(lo, hi);
}

static interval divide(interval a, interval b)
{
    if (!(b.lo > 0 || b.hi < 0)) {
        fprintf(stderr, "a divisor's interval contains 0\n");
        exit(2);
    }
    return mul(a, widen(1 / b.hi, 1 / b.lo));
}

static interval square(interval a)   /* pow(x, 2) */
{
    if (a.lo >= 0)
        return widen(a.lo * a.lo, a.hi * a.hi);
    if (a.hi <= 0)
        return widen(a.hi * a.hi, a.lo * a.lo);
    return widen(0, fmax(a.lo * a.lo, a.hi * a.hi));
}

/* sin (phase 0) or cos (phase 1) over an interval. */
static interval trig(interval x, int is_cos)
{
    if (x.hi - x.lo >= 2 * M_PI)
        return (interval){-1, 1};
    double a = is_cos ? cos(x.lo) : sin(x.lo), b = is_cos ? cos(x.hi) : sin(x.hi);
    double lo = fmin(a, b), hi = fmax(a, b);
    double first = is_cos ? 0 : M_PI / 2;   /* extremes at first + k pi */
    for (double k = floor((x.lo - first) / M_PI) - 1; k <= ceil((x.hi - first) / M_PI) + 1; k++) {
        double t = first + k * M_PI;
        if (t >= x.lo - 1e-9 && t <= x.hi + 1e-9) {
            double v = is_cos ? cos(t) : sin(t);
            lo = fmin(lo, v);
            hi = fmax(hi, v);
        }
    }
    return (interval){fmax(lo - 1e-12, -1), fmin(hi + 1e-12, 1)};
}

static int nips;

/* Gymnasium's _dsdt with m1 = m2 = l1 = I1 = I2 = 1, lc1 = lc2 = 0.5, g = 9.8. */
static void dsdt(const interval *s, interval *out)
{
    interval t1 = s[0], t2 = s[1], d1 = s[2], d2 = s[3], a = s[4];
    interval c2 = trig(t2, 1), s2 = trig(t2, 0);
    interval D1 = add(add(add(num(0.25), add(num(1.25), c2)), num(1)), num(1));
    interval D2 = add(add(num(0.25), mul(num(0.5), c2)), num(1));
    interval phi2 = mul(num(4.9), trig(sub(add(t1, t2), num(M_PI / 2)), 1));
    interval phi1 = add(add(sub(mul(mul(num(-0.5), square(d2)), s2), mul(mul(d2, d1), s2)),
                            mul(num(14.700000000000001), trig(sub(t1, num(M_PI / 2)), 1))),
                        phi2);
    interval num2 = add(a, mul(divide(D2, D1), phi1));
    if (!nips)
        num2 = sub(num2, mul(mul(num(0.5), square(d1)), s2));
    num2 = sub(num2, phi2);
    interval dd2 = divide(num2, sub(num(1.25), divide(square(D2), D1)));
    interval dd1 = divide(neg(add(mul(D2, dd2), phi1)), D1);
    out[0] = d1;
    out[1] = d2;
    out[2] = dd1;
    out[3] = dd2;
    out[4] = num(0);
}

/* One classical RK4 step of dt = 0.2. */
static void rk4(const interval *y0, interval *ns)
{
    interval k1[5], k2[5], k3[5], k4[5], y[5];
    dsdt(y0, k1);
    for (int i = 0; i < 5; i++)
        y[i] = add(y0[i], mul(num(0.1), k1[i]));
    dsdt(y, k2);
    for (int i = 0; i < 5; i++)
        y[i] = add(y0[i], mul(num(0.1), k2[i]));
    dsdt(y, k3);
    for (int i = 0; i < 5; i++)
        y[i] = add(y0[i], mul(num(0.2), k3[i]));
    dsdt(y, k4);
    for (int i = 0; i < 5; i++)
        ns[i] = add(y0[i], mul(num(0.2 / 6.0), add(add(add(k1[i], mul(num(2), k2[i])), mul(num(2), k3[i])), k4[i])));
}

static double limit;
static long boxes;
static const double scale[4] = {M_PI, M_PI, 4 * M_PI, 9 * M_PI};

static int prove(interval *box, int depth)
{
    boxes++;
    interval ns[5];
    rk4(box, ns);
    double m = fmax(fmax(fabs(ns[0].lo), fabs(ns[0].hi)), fmax(fabs(ns[1].lo), fabs(ns[1].hi)));
    if (m <= limit)
        return 1;
    if (depth > 60)
        return 0;
    int k = 0;
    double widest = -1;
    for (int i = 0; i < 4; i++) {
        double r = (box[i].hi - box[i].lo) / scale[i];
        if (r > widest) {
            widest = r;
            k = i;
        }
    }
    interval whole = box[k];
    double mid = 0.5 * (whole.lo + whole.hi);
    box[k].hi = mid;
    int ok = prove(box, depth + 1);
    box[k] = whole;
    box[k].lo = mid;
    ok = ok && prove(box, depth + 1);
    box[k] = whole;
    return ok;
}

int main(void)
{
    limit = 13 * M_PI;
    int all = 1;
    for (nips = 0; nips < 2; nips++) {
        interval box[5] = {{-M_PI, M_PI}, {-M_PI, M_PI}, {-4 * M_PI, 4 * M_PI}, {-9 * M_PI, 9 * M_PI}, {-1, 1}};
        boxes = 0;
        int ok = prove(box, 0);
        printf("%s dynamics: |theta1'|, |theta2'| <= 13 pi before wrapping: %s (%ld boxes)\n", nips ? "nips" : "book",
               ok ? "proven" : "NOT proven", boxes);
        all &= ok;
    }
    return all ? 0 : 1;
}
