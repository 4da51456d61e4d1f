"""Coefficients of cs_tanhf (jit/mathf.h): e^r - 1 = r + r^2 Q(r) on
|r| <= ln(2)/2, Q a Chebyshev fit of (e^r - 1 - r) / r^2 (near-minimax in
absolute error, which bounds the relative error of e^r - 1 by |r| times it).
Prints, per degree of Q, the coefficients rounded to double (lowest first)
and the measured relative error of r + r^2 Q(r) with those doubles.
Needs mpmath."""
import mpmath as mp

mp.mp.dps = 50
# k = round(y / ln 2) is computed in double, so |r| may pass ln(2)/2 a little.
R = mp.log(2) / 2 * (1 + mp.mpf(2) ** -20)


def g(r):
    if abs(r) < mp.mpf(10) ** -20:
        return mp.mpf(1) / 2 + r / 6
    return (mp.expm1(r) - r) / r**2


for deg in (5, 6, 7):
    poly, _ = mp.chebyfit(g, [-R, R], deg + 1, error=True)
    coeffs = [float(c) for c in poly[::-1]]
    worst = mp.mpf(0)
    n = 4000
    for i in range(n + 1):
        r = -R + 2 * R * i / n
        if r == 0:
            continue
        q = mp.mpf(0)
        for c in reversed(coeffs):
            q = q * r + mp.mpf(c)
        worst = max(worst, abs((r + r * r * q) / mp.expm1(r) - 1))
    print(f"degree {deg}: relative error {float(worst):.3g} (2^{float(mp.log(worst, 2)):.1f})")
    print("  " + ", ".join(repr(c) for c in coeffs))
