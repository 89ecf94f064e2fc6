"""Independent high-precision oracles (mpmath), never the code under test."""

import itertools

import mpmath as mp


def arete_pdf(t, alpha, theta, lam, dps=30):
    """Fourier inversion of phi(s) = (1 + theta^2 s^2)^(-alpha) / (1 + lam^2 s^2)."""
    with mp.workdps(dps):
        a, th, la, t = (mp.mpf(v) for v in (alpha, theta, lam, abs(t)))

        def phi(s):
            return (1 + th**2 * s**2) ** (-a) / (1 + la**2 * s**2)

        if t == 0:
            return mp.quad(phi, [0, 1 / th, 1 / la, mp.inf]) / mp.pi
        return mp.quadosc(lambda s: phi(s) * mp.cos(s * t), [0, mp.inf], omega=t) / mp.pi


def arete_sf(t, alpha, theta, lam, dps=30):
    """P(Z > t) for t > 0 by Gil-Pelaez: 1/2 - (1/pi) int_0^inf phi(s) sin(s t) / s ds."""
    with mp.workdps(dps):
        a, th, la, t = (mp.mpf(v) for v in (alpha, theta, lam, t))

        def phi(s):
            return (1 + th**2 * s**2) ** (-a) / (1 + la**2 * s**2)

        integral = mp.quadosc(lambda s: phi(s) * mp.sin(s * t) / s, [0, mp.inf], omega=t)
        return mp.mpf(1) / 2 - integral / mp.pi


def arete_pdf_direct(t, alpha, theta, lam, dps=25):
    """Real-space convolution of the Bessel-K Gamma-Gamma density with the Laplace kernel.

    Near 0 the substitution x = r w^(1/(2 alpha)) absorbs the x^(2 alpha - 1) singularity
    exactly (mpmath's exponent range reaches the mass at x ~ 1e-10000 for tiny alpha).
    """
    with mp.workdps(dps):
        a, th, la, t = (mp.mpf(v) for v in (alpha, theta, lam, abs(t)))
        nu = a - mp.mpf(1) / 2
        const = 1 / (th * mp.sqrt(mp.pi) * mp.gamma(a) * 2**nu)

        def f_x(x):
            z = abs(x) / th
            return const * z**nu * mp.besselk(nu, z)

        def kernel(x):
            return mp.exp(-abs(t - x) / la) / (2 * la)

        r = min(th, la, t if t > 0 else la) / 2

        def near(w, sign):
            if w == 0:
                return mp.mpf(0)
            x = r * w ** (1 / (2 * a))
            return f_x(x) * x ** (1 - 2 * a) * kernel(sign * x)

        layer = 2 * a  # boundary layer of the substitution at w = 1
        cuts = [0, max(1 - 20 * layer, mp.mpf(1) / 2), max(1 - 2 * layer, mp.mpf(3) / 4), 1]
        inner = r ** (2 * a) / (2 * a) * (mp.quad(lambda w: near(w, 1), cuts) + mp.quad(lambda w: near(w, -1), cuts))

        def dense(lo, hi, step):
            """Breakpoints every ``step`` (at most 60) so each tanh-sinh piece sees one scale."""
            count = int(min(60, max(1, mp.ceil((hi - lo) / step))))
            return [lo + (hi - lo) * i / count for i in range(count + 1)]

        def graded(lo, hi):
            """Doubling breakpoints from lo, then steps of min(theta, lam) capped at 60 pieces."""
            points = [lo]
            while points[-1] < hi and points[-1] * 2 - lo < min(th, la) * 4:
                points.append(min(points[-1] * 2, hi))
            if points[-1] < hi:
                points += dense(points[-1], hi, min(th, la))[1:]
            return points

        def piecewise(func, points):
            total = mp.mpf(0)
            for lo, hi in itertools.pairwise(points):
                total += mp.quad(func, [lo, hi])
            return total

        wide = 10 * max(la, th)
        if t > r:
            left = max(r, t - 60 * la)
            right = [*graded(r, left)[:-1], *dense(left, t, la), *dense(t, t + 60 * la, la)[1:]]
        else:
            right = graded(r, r + 60 * la)
        right = [*right, right[-1] + wide, mp.inf]
        outer = piecewise(lambda x: f_x(x) * kernel(x), right)
        outer += piecewise(lambda x: f_x(x) * kernel(-x), [*graded(r, r + 60 * la), r + 60 * la + wide, mp.inf])
        return inner + outer
