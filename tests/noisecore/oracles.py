"""Independent oracles (mpmath; paper A's algorithms written from the paper), never the code under test.

Every oracle a test module needs lives here, so no test module imports from another one.
"""

import itertools
import math

import mpmath as mp


def arete_pdf(t, alpha, theta, lam, dps=30):
    """Fourier inversion of phi(s) = (1 + theta^2 s^2)^(-alpha) / (1 + lam^2 s^2) (:func:`share_sum_pdf`, b = 1)."""
    return share_sum_pdf(t, alpha, theta, 1, lam, dps)


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


def share_sum_pdf(t, a, theta, b, lam, dps=40):
    """Fourier inversion of (1 + theta^2 s^2)^(-a) (1 + lam^2 s^2)^(-b): the density of the sum of
    the shares present (paper B, Appendix A); b = 1 is the Arete, a = 0 a single Gamma difference."""
    with mp.workdps(dps):
        a, theta, b, lam, t = (mp.mpf(v) for v in (a, theta, b, lam, abs(t)))

        def phi(s):
            return (1 + theta**2 * s**2) ** (-a) * (1 + lam**2 * s**2) ** (-b)

        if t == 0:
            return mp.quad(phi, [0, 1 / theta, 1 / lam, mp.inf]) / mp.pi
        return mp.quadosc(lambda s: phi(s) * mp.cos(s * t), [0, mp.inf], omega=t) / mp.pi


def arete_far_tail_pdf(t, alpha, theta, lam, reach=40, dps=30):
    """mpmath: int f_X(t + s) e^{-|s|/lam} / (2 lam) ds over |s| <= reach lam, far from 0 (the
    rest is below e^-reach (1 - lam/theta) of it), with f_X the Bessel-K Gamma - Gamma density."""
    with mp.workdps(dps):
        a, th, la, t = (mp.mpf(v) for v in (alpha, theta, lam, t))
        nu = a - mp.mpf(1) / 2
        const = 1 / (th * mp.sqrt(mp.pi) * mp.gamma(a) * 2**nu)

        def integrand(s):
            z = (t + s) / th
            return const * z**nu * mp.besselk(nu, z) * mp.exp(-abs(s) / la) / (2 * la)

        return mp.quad(integrand, [k * la for k in range(-reach, reach + 1)])


def gaussian_delta(eps, sigma, sens):
    """delta(eps) of the Gaussian mechanism from its privacy-loss law:
    E[(1 - e^(eps - L))_+], L ~ N(eta, 2 eta), eta = sens^2 / (2 sigma^2)."""
    eta = mp.mpf(sens) ** 2 / (2 * mp.mpf(sigma) ** 2)
    sd = mp.sqrt(2 * eta)

    def integrand(x):
        return (1 - mp.exp(eps - x)) * mp.npdf(x, eta, sd)

    return mp.quad(integrand, [eps, eta + 40 * sd if eta + 40 * sd > eps else eps + 40 * sd, mp.inf])


def arete_privacy_loss(alpha, theta, lam, d, grid, dps=15, tol=1e-4):
    """sup_t |log f(t) - log f(t + d)| with f the Fourier-inversion density :func:`arete_pdf`.

    f is even, so the sup is that of g(t) = log f(t) - log f(t + d) over t >= -d/2. g is
    evaluated on ``grid`` (t >= -d/2, and t = 0 or far enough from 0 for the oscillatory
    quadrature: |t|, |t + d| >= 0.01 max(theta, lam)); around an interior best point a golden-section
    search in mpmath refines it to ``tol`` in t (the value to ~ g'' tol^2). A best point at t = 0 (the
    density's cusp) is returned as it is. Returns (sup, argmax) as mpf; the tail limit
    d / max(theta, lam) (paper B: the tails decay like e^(-|t| / max(theta, lam))) is the caller's to add.
    """
    cache = {}

    def f(t):
        if t not in cache:
            cache[t] = arete_pdf(t, alpha, theta, lam, dps)
        return cache[t]

    with mp.workdps(dps):

        def g(t):
            return mp.log(f(t)) - mp.log(f(t + d))

        grid = sorted(mp.mpf(t) for t in grid)
        values = [g(t) for t in grid]
        best = max(range(len(grid)), key=lambda i: values[i])
        if best in (0, len(grid) - 1) or grid[best] == 0:
            return values[best], grid[best]
        lo, hi = grid[best - 1], grid[best + 1]
        ratio = (mp.sqrt(5) - 1) / 2
        x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        g1, g2 = g(x1), g(x2)
        while hi - lo > tol:
            if g1 >= g2:
                hi, x2, g2 = x2, x1, g1
                x1 = hi - ratio * (hi - lo)
                g1 = g(x1)
            else:
                lo, x1, g1 = x1, x2, g2
                x2 = lo + ratio * (hi - lo)
                g2 = g(x2)
        return max((values[best], grid[best]), (g1, x1), (g2, x2))


def rat_by_the_paper(utilities, epsilons, *, tau, sensitivity, epsilon_max, rng):
    """One run of paper A's Algorithm 1 (RAT) written from the paper, independently of noisecore.

    The threshold noise is the continuous-time Laplace process of eq. lap_proc,
    Z_t = sum_{n=0}^{P_t} Lap(T_n) with T_0 = eta = 2D/eps_max and T_1 < T_2 < ... the jumps of a
    Poisson process of intensity 2/t on [eta, inf) (cumulative intensity 2 log(t/eta), so
    T_n = eta exp(Gamma_n / 2) with Gamma_n a sum of n standard exponentials); round n reads
    zeta_n = Z at 2D/eps_n and draws xi_n ~ Lap(4D/eps_n). Returns the 1-based halting round (0: none)
    and the zeta_n read.
    """
    D = sensitivity
    eta = 2 * D / epsilon_max
    last = 2 * D / min(epsilons)
    times = [eta]
    while True:
        nxt = times[-1] * math.exp(rng.exponential() / 2)
        if nxt > last:
            break
        times.append(nxt)
    parts = [rng.laplace(0.0, t) for t in times]
    zetas = []
    for n, (u, eps) in enumerate(zip(utilities, epsilons, strict=True), start=1):
        zeta = sum(z for t, z in zip(times, parts, strict=True) if t <= 2 * D / eps)
        zetas.append(zeta)
        if u + rng.laplace(0.0, 4 * D / eps) >= tau + zeta:
            return n, zetas
    return 0, zetas


def share_sum_sf(x, a, theta, b, lam, dps=30):
    """P(Z > x) of GG(a, theta) + GG(b, lam) by Gil-Pelaez: 1/2 - (1/pi) int_0^inf phi(s) sin(s x) / s ds
    (loses digits itself below x ~ 0.01)."""
    with mp.workdps(dps):
        a, theta, b, lam, x = (mp.mpf(v) for v in (a, theta, b, lam, x))

        def phi(s):
            return (1 + theta**2 * s**2) ** (-a) * (1 + lam**2 * s**2) ** (-b)

        return float(mp.mpf(1) / 2 - mp.quadosc(lambda s: phi(s) * mp.sin(s * x) / s, [0, mp.inf], omega=x) / mp.pi)


def share_sum_mean_abs(a, theta, b, lam, dps=30):
    """E|Z| of GG(a, theta) + GG(b, lam) = (2/pi) int_0^inf (1 - phi(s)) / s^2 ds."""
    with mp.workdps(dps):
        a, theta, b, lam = (mp.mpf(v) for v in (a, theta, b, lam))

        def integrand(s):
            return (1 - (1 + theta**2 * s**2) ** (-a) * (1 + lam**2 * s**2) ** (-b)) / s**2

        return float(2 / mp.pi * mp.quad(integrand, [0, 1 / theta, 1 / lam, mp.inf]))


def staircase_variance_gamma(eps):
    """[GV16] variance-optimal gamma, the printed formula evaluated at 120 digits."""
    with mp.workdps(120):
        b = mp.exp(-mp.mpf(eps))
        return float(-b / (1 - b) + mp.cbrt(b - 2 * b**2 + 2 * b**4 - b**5) / (mp.cbrt(2) * (1 - b) ** 2))
