"""The ShareSum distribution: the total noise of the shares present, GG(a, theta) + GG(b, lam)."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from scipy import special

from .._arete_quadrature import _gauss_jacobi_unit, _gauss_legendre
from .._base import FloatArray, FloatOrArray, NoiseDistribution, Size, _output
from .._validation import real_array, real_scalar
from .._validation import scale as scale_param
from ..arete import _argsup_for
from .tables import _log_hyp1f1_negative

_NODES = 12
MIN_SHAPE, MAX_SHAPE = 1e-12, 4.0  # shapes of the Gamma parts (the quadrature reaches 40 mu)
MIN_SCALE_RATIO = 1e-16  # min(theta, lam) / max(theta, lam), as for the Arete
REACH = 1e6  # |x| / mu beyond which the density is not evaluated (the tail is below 1e-400000 there)
MIN_DISTANCE, MAX_DISTANCE = 0.01, 1e4  # distance / mu for the privacy loss (its grid has ~10 mu / distance points)


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
