"""Distributed noise when only some users contribute their share (paper B, Appendix A).

n users each add one i.i.d. share. If only m take part (fraction q = m/n), the total noise of
Arete(alpha, theta, lam) shares is Z = GG(alpha q, theta) + GG(q, lam), with GG(s, scale) the
difference of two Gamma(s, scale) (characteristic function (1 + theta^2 s^2)^(-alpha q)
(1 + lam^2 s^2)^(-q)); the Laplace part is no longer Laplace. Laplace(lam) shares give
GG(q, lam) alone. Below a total shape of 1/2 the density is infinite at 0 and no epsilon holds.

Density. Z = U1 - U2 with U_i = Gamma(a, theta) + Gamma(b, lam) i.i.d., whose density is closed
form, f_U(u) = u^(c-1) e^(-u/lam) 1F1(a; c; -(1/theta - 1/lam) u) / (Gamma(c) theta^a lam^b),
c = a + b (written with a negative argument of 1F1, swapping the roles if needed). Then
f_Z(t) = int_0^inf f_U(u) f_U(u + t) du for t >= 0: the only singularity, u^(c-1) at u = 0, is
taken by Gauss-Jacobi on an innermost piece; beyond it, geometric pieces with Gauss-Legendre.
A single Gamma-difference (one shape zero) uses its Bessel-K closed form.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from scipy import fft, special

from ._arete_quadrature import _chebyshev_log, _gauss_jacobi_unit, _gauss_legendre
from ._base import FloatArray, FloatOrArray, NoiseDistribution, Size, _output
from ._validation import bounded_int, in_interval, positive, real_array, real_scalar
from ._validation import scale as scale_param

if TYPE_CHECKING:
    from .arete import Arete

__all__ = [
    "ShareSum",
    "arete_dropout",
    "dropout_curves",
    "dropout_fractions",
    "dropout_point",
    "dropout_table",
    "laplace_dropout",
]

_NODES = 12
MIN_SHAPE, MAX_SHAPE = 1e-12, 4.0  # shapes of the Gamma parts (the quadrature reaches 40 mu)
MIN_SCALE_RATIO = 1e-16  # min(theta, lam) / max(theta, lam), as for the Arete
REACH = 1e6  # |x| / mu beyond which the density is not evaluated (the tail is below 1e-400000 there)
MIN_DISTANCE, MAX_DISTANCE = 0.01, 1e4  # distance / mu for the privacy loss (its grid has ~10 mu / distance points)
MIN_FRACTION = 1e-6  # fractions present and Arete alphas, so that alpha * fraction >= MIN_SHAPE


def _arete_parameters(arete: Arete) -> tuple[float, float, float]:
    """(alpha, theta, lam) of an Arete-like object, or a TypeError naming ``arete``."""
    try:
        return real_scalar("arete.alpha", arete.alpha), arete.theta, arete.lam
    except AttributeError:
        raise TypeError(f"arete must be an Arete (with alpha, theta and lam), got {type(arete).__name__}") from None


def _log_gamma_sum_density(u: FloatArray, a: float, theta: float, b: float, lam: float) -> FloatArray:
    """log f_U(u) for U = Gamma(a, theta) + Gamma(b, lam), u > 0 (a, b > 0)."""
    c = a + b
    r1, r2 = 1 / theta, 1 / lam
    if r1 >= r2:
        shape, slow, gap = a, r2, r1 - r2
    else:
        shape, slow, gap = b, r1, r2 - r1
    log_norm = special.gammaln(c) + a * math.log(theta) + b * math.log(lam)
    return (c - 1) * np.log(u) - slow * u + _log_hyp1f1_negative(shape, c, gap * u) - log_norm


# Batches of log 1F1(a; c; -z) take z in [1e-6, 1e6] from a per-(a, c) table: Chebyshev interpolants
# in s = log z on panels of width 1/2, each checked against scipy between its nodes when built (a
# table that misses 1e-12, scipy's own accuracy near z = 2, is not used); below 1e-6 two terms of the
# series are exact to ~z^3.
_HYP_S0, _HYP_WIDTH, _HYP_PANELS, _HYP_DEGREE = math.log(1e-6), 0.5, 56, 16
_HYP_MIN_BATCH = 512
_HYP_TABLES: dict[tuple[float, float], FloatArray | None] = {}


def _hyp1f1_table(a: float, c: float) -> FloatArray | None:
    """Chebyshev coefficients (degree, panel) of log 1F1(a; c; -e^s), cached per (a, c); None if the
    interpolant misses scipy's values by more than 1e-12 between the nodes."""
    key = (a, c)
    if key not in _HYP_TABLES:
        m = _HYP_DEGREE
        nodes = np.cos(np.pi * (np.arange(m) + 0.5) / m)
        s = _HYP_S0 + _HYP_WIDTH * (np.arange(_HYP_PANELS)[:, None] + 0.5 + 0.5 * nodes)
        coef = fft.dct(_log_hyp1f1_direct(a, c, np.exp(s)), type=2, axis=1) / m
        coef[:, 0] /= 2
        coef = np.ascontiguousarray(coef.T)
        check = (_HYP_S0 + _HYP_WIDTH * (np.arange(_HYP_PANELS)[:, None] + np.array([0.07, 0.31, 0.5, 0.77]))).ravel()
        exact = _log_hyp1f1_direct(a, c, np.exp(check))
        error = np.abs(_chebyshev_log(coef, check, _HYP_S0, _HYP_WIDTH) - exact)
        if len(_HYP_TABLES) >= 32:
            _HYP_TABLES.pop(next(iter(_HYP_TABLES)))
        _HYP_TABLES[key] = coef if bool(np.all(error <= 1e-12 * np.maximum(1.0, np.abs(exact)))) else None
    return _HYP_TABLES[key]


def _log_hyp1f1_negative(a: float, c: float, z: npt.ArrayLike) -> FloatArray:
    """log 1F1(a; c; -z) for z >= 0, 0 < a < c: from the (a, c) table for large batches, else direct."""
    z = np.asarray(z, dtype=float)
    table = _hyp1f1_table(a, c) if z.size >= _HYP_MIN_BATCH else None
    if table is None:
        return _log_hyp1f1_direct(a, c, z)
    flat = z.ravel()
    out = np.empty(flat.shape)
    small = flat < 1e-6
    inside = ~small & (flat <= 1e6)
    out[inside] = _chebyshev_log(table, np.log(flat[inside]), _HYP_S0, _HYP_WIDTH)
    zs = flat[small]
    out[small] = np.log1p(-a / c * zs + a * (a + 1) / (2 * c * (c + 1)) * zs * zs)
    large = ~small & ~inside
    if large.any():
        out[large] = _log_hyp1f1_direct(a, c, flat[large])
    return out.reshape(z.shape)


def _log_hyp1f1_direct(a: float, c: float, z: npt.ArrayLike) -> FloatArray:
    """log 1F1(a; c; -z) for z >= 0, 0 < a < c, by scipy. Where its value underflows (z large), the
    asymptotic series Gamma(c)/Gamma(c-a) z^-a sum_s (a)_s (a-c+1)_s / s! z^-s (DLMF 13.7.2)."""
    z = np.asarray(z, dtype=float)
    value = special.hyp1f1(a, c, -z)
    ok = (value > 0) & np.isfinite(value)
    out = np.empty(z.shape)
    out[ok] = np.log(value[ok])
    if not ok.all():
        zb = z[~ok]
        term, total = np.ones(zb.shape), np.ones(zb.shape)
        for k in range(4):
            term = term * (a + k) * (a - c + 1 + k) / ((k + 1) * zb)
            total = total + term
        out[~ok] = special.gammaln(c) - special.gammaln(c - a) - a * np.log(zb) + np.log(total)
    return out


def _log_gg_density(x: FloatArray, s: float, scale: float) -> FloatArray:
    """log density of Gamma(s, scale) - Gamma(s, scale) at |x| > 0 (Bessel-K form)."""
    nu = s - 0.5
    z = np.abs(x) / scale
    with np.errstate(over="ignore"):
        log_k = np.log(special.kve(nu, z))
    tiny = ~np.isfinite(log_k)
    if tiny.any():  # K_nu(z) overflows only for z -> 0: its leading term there
        zt = z[tiny]
        log_k[tiny] = (
            special.gammaln(abs(nu)) - math.log(2.0) + abs(nu) * np.log(2 / zt)
            if nu != 0
            else np.log(-np.log(zt / 2) - np.euler_gamma)
        )
    return (
        nu * np.log(z) + log_k - z - math.log(scale) - 0.5 * math.log(math.pi) - special.gammaln(s) - nu * math.log(2.0)
    )


def _mesh_reach(c: float, mu: float) -> tuple[float, float]:
    """Largest piece and end of the u mesh for a total shape c. The integrands (f_U(u) f_U(u + t),
    f_U(u) P(U > u + t)) decay like u^(2c - 2) e^(-2u/mu): pieces of 2 mu keep 12-point Gauss-Legendre
    at full precision, and beyond (20 + 3 (c - 1)^+) mu less than 1e-17 of the integral is left."""
    return 2 * mu, (20 + 3 * max(c - 1, 0.0)) * mu


@lru_cache(maxsize=32)
def _u_mesh(c: float, inner: float, cap: float, end: float) -> tuple[FloatArray, FloatArray]:
    """Nodes and weights in u: [0, inner] Gauss-Jacobi (weight u^(c-1), folded into the weights
    as u^(c-1) * w / u^(c-1) = w), then pieces [x, 2x] capped at ``cap`` up to ``end``."""
    y, w = _gauss_jacobi_unit(_NODES, c)
    nodes = [inner * y]
    weights = [w * inner * y ** (1 - c)]  # inner^c w / (inner y)^(c-1): the integrand is given in full
    edge_list = [inner]
    while edge_list[-1] < end:
        edge_list.append(min(edge_list[-1] + min(edge_list[-1], cap), end))
    edges = np.array(edge_list)
    gy, gw = _gauss_legendre(_NODES)
    lo, hi = edges[:-1], edges[1:]
    nodes.append((lo[:, None] + (hi - lo)[:, None] * gy).ravel())
    weights.append(((hi - lo)[:, None] * gw).ravel())
    return np.concatenate(nodes), np.concatenate(weights)


class ShareSum(NoiseDistribution):
    """Z = GG(a, theta) + GG(b, lam): the total of the shares that arrived (see module docstring).

    Parameters
    ----------
    a : float
        Shape of the Gamma differences of scale ``theta``: 0 or in [1e-12, 4].
    theta : float
        Their scale, in [1e-100, 1e100].
    b : float
        Shape of the Gamma differences of scale ``lam``: 0 or in [1e-12, 4]; a + b >= 1e-12.
    lam : float
        Their scale, in [1e-100, 1e100]; theta / lam in [1e-16, 1e16] when both shapes are > 0.

    Raises
    ------
    TypeError
        If a parameter is not a real number.
    ValueError
        If a parameter is not finite or lies outside the ranges above.

    References
    ----------
    Paper B [PS22] (Pagh & Stausholm), Lemma 10 (the shares) and Appendix A (distributed noise).
    """

    def __init__(self, a: float, theta: float, b: float, lam: float) -> None:
        self.a = real_scalar("a", a)
        self.b = real_scalar("b", b)
        if self.a < 0 or self.b < 0 or self.a + self.b <= 0:
            raise ValueError(f"shapes a and b must be >= 0 with a + b > 0, got a = {self.a:g}, b = {self.b:g}")
        if max(self.a, self.b) > MAX_SHAPE or 0 < min(self.a, self.b) < MIN_SHAPE or self.a + self.b < MIN_SHAPE:
            raise ValueError(
                f"shapes a and b must be 0 or in [{MIN_SHAPE:g}, {MAX_SHAPE:g}], got a = {self.a:g}, b = {self.b:g}"
            )
        self.theta = scale_param("theta", theta)
        self.lam = scale_param("lam", lam)
        if self.a > 0 and self.b > 0 and min(self.theta, self.lam) < MIN_SCALE_RATIO * max(self.theta, self.lam):
            raise ValueError(
                f"theta / lam must be in [{MIN_SCALE_RATIO:g}, {1 / MIN_SCALE_RATIO:g}], "
                f"got theta = {self.theta:g}, lam = {self.lam:g}"
            )
        self.mu = max(self.theta if self.a > 0 else 0.0, self.lam if self.b > 0 else 0.0)

    @property
    def total_shape(self) -> float:
        """a + b."""
        return self.a + self.b

    @property
    def bounded(self) -> bool:
        """Whether the density is finite at 0 (total shape above 1/2)."""
        return self.total_shape > 0.5

    def _check_reach(self, x: FloatArray) -> None:
        far = np.isfinite(x) & (np.abs(x) > REACH * self.mu)
        if far.any():
            raise ValueError(
                f"x must be within +-{REACH:g} mu = +-{REACH * self.mu:g} (or +-inf), where "
                f"mu = max(theta, lam) = {self.mu:g}, got {np.abs(x[far]).max():g}"
            )

    def _logpdf(self, x: FloatArray) -> FloatArray:
        self._check_reach(np.asarray(x, dtype=float))
        flat = np.abs(np.asarray(x, dtype=float)).ravel()
        out = np.full(flat.shape, -np.inf)
        finite = np.isfinite(flat)
        if finite.any():
            out[finite] = self._log_density(flat[finite])
        return out.reshape(np.shape(x))

    def _single(self) -> tuple[float, float] | None:
        return (self.b, self.lam) if self.a == 0 else (self.a, self.theta) if self.b == 0 else None

    def _log_density(self, t: FloatArray) -> FloatArray:
        single = self._single()
        out = np.empty(t.shape)
        zero = t == 0
        if single is not None:
            s, scale = single
            pos = ~zero
            out[pos] = _log_gg_density(t[pos], s, scale)
            if zero.any():
                out[zero] = (
                    np.inf
                    if s <= 0.5
                    else (special.gammaln(s - 0.5) - special.gammaln(s) - 0.5 * math.log(4 * math.pi) - math.log(scale))
                )
            return out
        a, theta, b, lam = self.a, self.theta, self.b, self.lam
        c = a + b
        small = min(theta, lam)
        inner = 1e-14 * small
        cap, end = _mesh_reach(c, self.mu)
        if zero.any():
            if c <= 0.5:
                out[zero] = np.inf
            else:  # f(0) = int f_U(u)^2 du, singular like u^(2c - 2)
                u, w = _u_mesh(2 * c - 1, inner, cap, end)
                out[zero] = math.log(np.sum(w * np.exp(2 * _log_gamma_sum_density(u, a, theta, b, lam))))
        # f_U(u + t) is analytic for |u| < t: the Gauss-Jacobi piece may reach t/4, so points are
        # grouped by octave of t / small and each group grades its mesh only down to that
        positive_t = ~zero
        octave = np.full(t.shape, 0)
        with np.errstate(divide="ignore"):
            octave[positive_t] = np.clip(np.floor(np.log2(t[positive_t] / small)), -200, 0)
        for k in np.unique(octave[positive_t]):
            sel = positive_t & (octave == k)
            first = max(2.0**k * small / 4, min(t[sel].min() / 4, inner))
            out[sel] = self._correlate(t[sel], *_u_mesh(c, first, cap, end))
        return out

    def _correlate(self, ts: FloatArray, u: FloatArray, w: FloatArray) -> FloatArray:
        a, theta, b, lam, mu = self.a, self.theta, self.b, self.lam, self.mu
        log_fu = _log_gamma_sum_density(u, a, theta, b, lam)
        out = np.empty(ts.size)
        for start in range(0, ts.size, 256):
            block = ts[start : start + 256]
            shifted = u[None, :] + block[:, None]
            # scaled by e^{(u + t)/mu} so nothing underflows; the shift comes back below
            log_g = _log_gamma_sum_density(shifted, a, theta, b, lam) + shifted / mu
            total = np.sum(w * np.exp(log_fu + log_g - u / mu), axis=1)
            out[start : start + 256] = np.log(total) - block / mu
        return out

    def _sf(self, x: FloatArray) -> FloatArray:
        """P(Z > x) = int_0^inf f_U(u) P(U > u + x) du for x > 0 (Z = U1 - U2): one quadrature on the
        density's u mesh, with the survival of U from its closed form (one Gamma) or by summing the
        mass of U between consecutive points from the far end."""
        x = np.asarray(x, dtype=float)
        self._check_reach(x)
        mag = np.abs(x).ravel()
        out = np.empty(mag.shape)
        for i, v in enumerate(mag):
            out[i] = (0.0 if v else 0.5) if (not np.isfinite(v) or v == 0) else self._sf_one(float(v))
        upper = out.reshape(np.shape(x))
        return np.where(x >= 0, upper, 1.0 - upper)

    def _log_fu(self, u: FloatArray) -> FloatArray:
        """log f_U(u) for u > 0, U = Gamma(a, theta) + Gamma(b, lam) (one Gamma if a shape is 0)."""
        single = self._single()
        if single is None:
            return _log_gamma_sum_density(u, self.a, self.theta, self.b, self.lam)
        s, scale = single
        return (s - 1) * np.log(u) - u / scale - special.gammaln(s) - s * math.log(scale)

    def _sf_one(self, v: float) -> float:
        single = self._single()
        small = min(self.theta, self.lam) if single is None else single[1]
        c = self.total_shape
        cap, end = _mesh_reach(c, self.mu)
        # as for the density at t = v: the Gauss-Jacobi piece stays within v/4, where P(U > u + v) is analytic
        k = min(max(math.floor(math.log2(v / small)), -200), 0)
        u, w = _u_mesh(c, max(2.0**k * small / 4, min(v / 4, 1e-14 * small)), cap, end)
        y = u + v
        if single is not None:
            s, scale = single
            surv = special.gammaincc(s, y / scale)
        else:
            # mass of U on [y_j, y_j+1] (Gauss-Legendre on each gap: f_U is smooth on the scale y there)
            # and beyond the last point (pieces of width mu up to 40 mu further)
            gy, gw = _gauss_legendre(_NODES)
            far = y[-1] + self.mu * np.arange(41.0)
            edges = np.concatenate([y, far[1:]])
            lo, hi = edges[:-1], edges[1:]
            nodes = (lo[:, None] + (hi - lo)[:, None] * gy).ravel()
            mass = np.sum(np.exp(self._log_fu(nodes)).reshape(lo.size, -1) * gw, axis=1) * (hi - lo)
            surv = np.cumsum(mass[::-1])[::-1][: y.size]
        return float(np.sum(w * np.exp(self._log_fu(u)) * surv))

    def _sample(self, size: Size, rng: np.random.Generator) -> FloatOrArray:
        out = np.zeros(() if size is None else size)
        if self.a > 0:
            out = out + rng.gamma(self.a, self.theta, size) - rng.gamma(self.a, self.theta, size)
        if self.b > 0:
            out = out + rng.gamma(self.b, self.lam, size) - rng.gamma(self.b, self.lam, size)
        return float(out) if size is None else out

    def var(self) -> float:
        """Var Z = 2 a theta^2 + 2 b lam^2.

        Returns
        -------
        float
        """
        return 2 * self.a * self.theta**2 + 2 * self.b * self.lam**2

    def mean_abs(self) -> float:
        """E|Z| = (2/pi) int_0^inf (1 - phi(s)) / s^2 ds from the characteristic function phi (real,
        smooth and positive: no oscillation), by Gauss-Legendre on unit pieces of log s, with the
        ends in closed form: (1 - phi(s)) / s^2 -> var / 2 as s -> 0, phi(s) ~ K s^(-2 (a + b)) as s -> inf.

        Returns
        -------
        float
        """
        a, theta, b, lam = self.a, self.theta, self.b, self.lam
        c = a + b
        small = min(theta if a > 0 else math.inf, lam if b > 0 else math.inf)
        lo, hi = math.log(1e-6 / self.mu), math.log(1e8 / small)  # errors ~1e-18 and ~1e-16 relative

        def one_minus_phi(s: FloatArray) -> FloatArray:
            return -np.expm1(-a * np.log1p((theta * s) ** 2) - b * np.log1p((lam * s) ** 2))

        y, w = _gauss_legendre(_NODES)
        edges = np.linspace(lo, hi, max(2, math.ceil(hi - lo) + 1))
        left, right = edges[:-1], edges[1:]
        logs = (left[:, None] + (right - left)[:, None] * y).ravel()
        s = np.exp(logs)
        body = float(np.sum(one_minus_phi(s) / s * (w * (right - left)[:, None]).ravel()))
        s_lo, s_hi = math.exp(lo), math.exp(hi)
        head = 0.5 * self.var() * s_lo  # int_0^s_lo, the integrand is var/2 + O(s^2)
        tail = (float(one_minus_phi(np.array(s_hi))) + 2 * c) / ((1 + 2 * c) * s_hi)  # 1/s_hi - int phi/s^2
        return 2 / math.pi * (head + body + tail)

    def characteristic_function(self, s: npt.ArrayLike) -> FloatOrArray:
        """E[e^{isZ}] = (1 + theta^2 s^2)^(-a) (1 + lam^2 s^2)^(-b) (real: Z is symmetric).

        Parameters
        ----------
        s : array_like
            Points; +-inf allowed, NaN not.

        Returns
        -------
        float or numpy.ndarray
            A float for a scalar ``s``, else an array of its shape.

        Raises
        ------
        TypeError, ValueError
            If ``s`` is not real or contains NaN.
        """
        arr = real_array("s", s, allow_inf=True)
        with np.errstate(over="ignore"):  # large |s|: the value underflows to 0
            return _output((1 + (self.theta * arr) ** 2) ** (-self.a) * (1 + (self.lam * arr) ** 2) ** (-self.b), arr)

    def _isf_upper(self, q: FloatArray) -> FloatArray:
        """x >= 0 with sf(x) = q: one full sf at a start point, then Newton steps (on sf against
        log x in the body, on log sf against x in the tail) whose sf updates integrate the density
        over the step only, on pieces no longer than mu and no wider than a factor 2."""
        q = np.asarray(q, dtype=float)
        out = np.full(q.shape, np.inf)
        for i, target in np.ndenumerate(q):
            if target <= 0:
                continue
            out[i] = 0.0 if target >= 0.5 else self._isf_one(float(target))
        return out

    def _mass_between(self, x0: float, x1: float) -> float:
        """int_x0^x1 f (signed), by Gauss-Legendre on geometric-then-linear pieces."""
        lo_x, hi_x = min(x0, x1), max(x0, x1)
        edge_list = [lo_x]
        while edge_list[-1] < hi_x:
            edge_list.append(min(hi_x, edge_list[-1] + min(max(edge_list[-1], lo_x), self.mu)))
        edges = np.array(edge_list)
        y, w = _gauss_legendre(_NODES)
        lo, hi = edges[:-1], edges[1:]
        nodes = (lo[:, None] + (hi - lo)[:, None] * y).ravel()
        dens = np.exp(self._log_density(nodes)).reshape(lo.size, -1)
        mass = float(np.sum(dens * w * (hi - lo)[:, None]))
        return mass if x1 >= x0 else -mass

    def _isf_one(self, target: float) -> float:
        log2q = math.log(2 * target)
        body = target > 1e-3
        # start: a normal-like guess in the body, the exponential tail e^(-x/mu) beyond
        x = self.std() * math.sqrt(-2 * log2q) / 2 if body else -self.mu * log2q
        sf = float(self._sf(np.array([x]))[0])
        for _ in range(200):
            dens = float(np.exp(self._log_density(np.array([x]))[0]))
            if dens <= 0 or sf <= 0:
                raise ValueError(f"q = {target:g} is out of reach: that far in the tail the density underflows")
            if body:  # d sf / d log x = -x f(x)
                new = x * math.exp(min(max((sf - target) / (x * dens), -3.0), 3.0))
            else:
                new = max(x + sf / dens * (math.log(sf) - math.log(target)), x / 4)
            sf -= self._mass_between(x, new)
            if sf <= 0 or sf >= 0.5:  # beyond the resolution of the updates: a full sf again
                sf = float(self._sf(np.array([new]))[0])
                if sf <= 0:
                    raise ValueError(f"q = {target:g} is out of reach: the search left the range of the tail")
            done = abs(new - x) <= 1e-13 * new
            x = new
            if done or abs(math.log(sf / target)) < 1e-13:
                break
        else:
            raise ValueError(f"q = {target:g}: the quantile search did not converge for this noise")
        if not self.bounded and abs(float(self._sf(np.array([x]))[0]) / target - 1) > 1e-6:
            # an infinite density at 0 can put the quantile below any float the quadrature resolves
            raise ValueError(
                f"q = {target:g} is out of reach: for a total shape a + b = {self.total_shape:g} "
                "that quantile lies too close to 0"
            )
        return x

    def _privacy_loss(self, d: FloatArray) -> FloatArray:
        from .arete import _argsup_for

        bad = (d > MAX_DISTANCE * self.mu) | ((d > 0) & (d < MIN_DISTANCE * self.mu))
        if bad.any():
            raise ValueError(
                f"distance must be 0 or in [{MIN_DISTANCE:g}, {MAX_DISTANCE:g}] mu = "
                f"[{MIN_DISTANCE * self.mu:g}, {MAX_DISTANCE * self.mu:g}], where mu = max(theta, lam), "
                f"got {d[bad].flat[0]:g}"
            )
        out = np.empty(d.shape)
        for i, v in np.ndenumerate(d):
            out[i] = (
                math.inf
                if (v > 0 and not self.bounded)
                else _argsup_for(self._log_density, float(v), min(self.theta, self.lam), self.mu, self.mu)[0]
            )
        return out

    def _scale_hint(self) -> float:
        return self.mu

    def _repr_args(self) -> str:
        return f"a={self.a!r}, theta={self.theta!r}, b={self.b!r}, lam={self.lam!r}"


def arete_dropout(arete: Arete, *, fraction: float) -> ShareSum:
    """Total noise when a ``fraction`` in (0, 1] of the users add their Arete share.

    Parameters
    ----------
    arete : Arete
        The full noise (any object with ``alpha``, ``theta`` and ``lam``).
    fraction : float
        Fraction of the users present, in [1e-6, 1].

    Returns
    -------
    ShareSum
        GG(alpha fraction, theta) + GG(fraction, lam).

    Raises
    ------
    TypeError
        If ``arete`` lacks ``alpha``, ``theta`` or ``lam``, or a number is not real.
    ValueError
        If ``fraction`` or the resulting shapes are out of range.

    References
    ----------
    Paper B [PS22] (Pagh & Stausholm), Lemma 10 (the shares) and Appendix A (distributed noise).
    """
    alpha, theta, lam = _arete_parameters(arete)
    q = _fraction(fraction)
    return ShareSum(alpha * q, theta, q, lam)


def _fraction(fraction: object) -> float:
    q = in_interval("fraction", fraction, 0.0, 1.0)
    if q < MIN_FRACTION:
        raise ValueError(
            f"fraction must be in [{MIN_FRACTION:g}, 1]: with (almost) no shares there is no noise, got {q:g}"
        )
    return q


def laplace_dropout(scale: float, *, fraction: float) -> ShareSum:
    """Total noise when a ``fraction`` of the users add their share of Laplace(scale).

    Parameters
    ----------
    scale : float
        Scale of the full Laplace noise, in [1e-100, 1e100].
    fraction : float
        Fraction of the users present, in [1e-6, 1].

    Returns
    -------
    ShareSum
        GG(fraction, scale).

    Raises
    ------
    TypeError
        If an argument is not a real number.
    ValueError
        If an argument is not finite or out of range.
    """
    q = _fraction(fraction)
    scale = scale_param("scale", scale)
    return ShareSum(0.0, scale, q, scale)


def dropout_fractions(n: int, *, fractions_present: npt.ArrayLike) -> FloatArray:
    """Fractions of ``n`` users present, rounded to whole users, repeats dropped, largest first.

    Parameters
    ----------
    n : int
        Number of users, in [1, 1e9].
    fractions_present : array_like
        Non-empty 1-d array of fractions in (0, 1].

    Returns
    -------
    numpy.ndarray
        Distinct multiples of 1/n (at least 1/n), decreasing.

    Raises
    ------
    TypeError
        If ``n`` is not an integer or ``fractions_present`` is not real.
    ValueError
        If ``n`` is out of range, or ``fractions_present`` is empty, not 1-d, not finite or
        outside (0, 1].
    """
    n = bounded_int("n", n, 1, 10**9)
    fractions = real_array("fractions_present", fractions_present)
    if fractions.ndim != 1 or fractions.size == 0 or not np.all((fractions > 0) & (fractions <= 1)):
        raise ValueError("fractions_present must be a non-empty 1-D array of fractions in (0, 1]")
    return np.unique(np.clip(np.round(fractions * n), 1, n))[::-1] / n


def dropout_point(
    alpha: float,
    theta: float,
    lam: float,
    *,
    fraction: float,
    sensitivity: float = 1.0,
    epsilon_full: float | None = None,
) -> tuple[float, float, float, float]:
    """(Arete epsilon, Arete E|Z|, Laplace epsilon, Laplace E|Z|) when a ``fraction`` of the users add
    their share of Arete(alpha, theta, lam), against shares of the Laplace noise with the same full
    epsilon (``epsilon_full``, computed when not given). ``alpha = 0`` is the Laplace limit: the Arete
    shares are then Laplace shares of scale ``lam``. Plain numbers in and out, so a call can run on any
    worker.

    Parameters
    ----------
    alpha : float
        0, or in [1e-6, 4].
    theta, lam : float
        Scales, in [1e-100, 1e100].
    fraction : float
        Fraction of the users present, in [1e-6, 1].
    sensitivity : float, optional
        In [0.01, 1e4] times max(theta, lam) (max(theta, lam) is lam when alpha = 0; default 1).
    epsilon_full : float, optional
        The full noise's certified epsilon at ``sensitivity``, in [0.01, 1e4]; computed when None.

    Returns
    -------
    tuple of float
        (Arete epsilon, Arete E|Z|, Laplace epsilon, Laplace E|Z|); an epsilon is inf where the
        total shape is at most 1/2.

    Raises
    ------
    TypeError
        If an argument is not a real number.
    ValueError
        If an argument is not finite or out of range.
    """
    alpha = real_scalar("alpha", alpha)
    if not (alpha == 0 or MIN_FRACTION <= alpha <= MAX_SHAPE):
        raise ValueError(f"alpha must be 0 or in [{MIN_FRACTION:g}, {MAX_SHAPE:g}], got {alpha}")
    theta, lam = scale_param("theta", theta), scale_param("lam", lam)
    q = _fraction(fraction)
    sensitivity = scale_param("sensitivity", sensitivity)
    mu = max(theta if alpha > 0 else 0.0, lam)
    if not MIN_DISTANCE * mu <= sensitivity <= MAX_DISTANCE * mu:
        raise ValueError(
            f"sensitivity must be in [{MIN_DISTANCE:g}, {MAX_DISTANCE:g}] times max(theta, lam) = "
            f"{mu:g}, got {sensitivity:g}"
        )
    full = ShareSum(alpha, theta, 1.0, lam)
    eps_full = float(full.privacy_loss(sensitivity)) if epsilon_full is None else positive("epsilon_full", epsilon_full)
    if not MIN_DISTANCE <= eps_full <= MAX_DISTANCE:  # the Laplace shares' scale is sensitivity / eps_full
        raise ValueError(f"epsilon_full must be in [{MIN_DISTANCE:g}, {MAX_DISTANCE:g}], got {eps_full:g}")
    arete = ShareSum(alpha * q, theta, q, lam)
    laplace = laplace_dropout(sensitivity / eps_full, fraction=q)
    return (
        float(arete.privacy_loss(sensitivity)),
        arete.mean_abs(),
        float(laplace.privacy_loss(sensitivity)),
        laplace.mean_abs(),
    )


def dropout_curves(
    arete: Arete, *, n: int, fractions_present: npt.ArrayLike, sensitivity: float = 1.0
) -> dict[str, FloatArray]:
    """Certified epsilon and E|Z| against the fraction of users present (rounded to whole users,
    repeats dropped), for the Arete's shares and for Laplace shares of the same full epsilon.

    Parameters
    ----------
    arete : Arete
        The full noise (``alpha``, ``theta``, ``lam`` and ``privacy_loss`` are used).
    n : int
        Number of users, in [1, 1e9].
    fractions_present : array_like
        Non-empty 1-d array of fractions in (0, 1].
    sensitivity : float, optional
        In [1e-100, 1e100] (default 1); see :func:`dropout_point` for its range relative to the scales.

    Returns
    -------
    dict of str to numpy.ndarray
        As :func:`dropout_table`.

    Raises
    ------
    TypeError
        If ``arete`` lacks ``alpha``, ``theta`` or ``lam``, or an argument has the wrong type.
    ValueError
        If an argument is out of range (see :func:`dropout_fractions` and :func:`dropout_point`).
    """
    alpha, theta, lam = _arete_parameters(arete)
    present = dropout_fractions(n, fractions_present=fractions_present)
    sensitivity = scale_param("sensitivity", sensitivity)
    eps_full = float(arete.privacy_loss(sensitivity))
    points = [
        dropout_point(alpha, theta, lam, fraction=q, sensitivity=sensitivity, epsilon_full=eps_full) for q in present
    ]
    return dropout_table(present, points=points)


def dropout_table(present: npt.ArrayLike, *, points: npt.ArrayLike) -> dict[str, FloatArray]:
    """The columns of :func:`dropout_curves` from its fractions and one :func:`dropout_point` each
    (epsilons may be inf: no epsilon holds below a total shape of 1/2).

    Parameters
    ----------
    present : array_like
        1-d array of fractions in (0, 1].
    points : array_like
        One :func:`dropout_point` result per fraction, shape (len(present), 4).

    Returns
    -------
    dict of str to numpy.ndarray
        Columns "fraction", "arete_epsilon", "arete_mean_abs", "laplace_epsilon" and
        "laplace_mean_abs".

    Raises
    ------
    TypeError
        If ``present`` or ``points`` is not real.
    ValueError
        If ``present`` is not 1-d or outside (0, 1], ``points`` has the wrong shape, contains NaN,
        a negative value or an infinite E|Z|.
    """
    present = np.atleast_1d(real_array("present", present))
    if present.ndim != 1 or not np.all((present > 0) & (present <= 1)):
        raise ValueError("present must be a 1-d array of fractions in (0, 1]")
    columns = np.atleast_2d(real_array("points", points, allow_inf=True))
    if columns.shape != (present.size, 4):
        raise ValueError(
            f"points must have one row of 4 values per fraction in present, shape ({present.size}, 4), "
            f"got {columns.shape}"
        )
    if (columns[:, [1, 3]] == np.inf).any() or (columns < 0).any():
        raise ValueError("points must hold epsilons >= 0 (inf allowed) and finite E|Z| >= 0")
    return {
        "fraction": present,
        "arete_epsilon": columns[:, 0],
        "arete_mean_abs": columns[:, 1],
        "laplace_epsilon": columns[:, 2],
        "laplace_mean_abs": columns[:, 3],
    }
