"""Exact evaluation of the Arete density and survival function.

Z = X + Y with X = X1 - X2 (X_i ~ Gamma(alpha, theta)) and Y ~ Laplace(lam). X has the
symmetric variance-gamma density

    f_X(x) = z^nu K_nu(z) / (theta sqrt(pi) Gamma(alpha) 2^nu),   z = |x|/theta, nu = alpha - 1/2,

which behaves like |x|^(2 alpha - 1) at 0. For t >= 0 the Laplace convolution splits into
three positive integrals over x >= 0,

    A(t) = int_0^t f_X(x) e^{-(t-x)/lam} dx,  B(t) = int_t^inf f_X(x) e^{-(x-t)/lam} dx,
    C(t) = int_t^inf f_X(x) dx,

with f_Z(t) = (e^{-t/lam} B(0) + A(t) + B(t)) / (2 lam) and
P(Z > t) = (e^{-t/lam} B(0) + A(t)) / 2 + C(t) - B(t) / 2. They are accumulated piece by
piece over a mesh through every requested point: A forwards, B and C backwards, each
piece integrated by Gauss-Legendre. The mesh is graded geometrically towards the
singularity at 0 (ratio 2) down to 1e-14 min(theta, lam), whose last piece uses
Gauss-Jacobi with weight x^(2 alpha - 1), and is no coarser than the kernels' length
scales near each requested point. All quantities are carried scaled by e^{t/mu},
mu = max(theta, lam), the slowest tail rate, so nothing overflows or underflows in range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from scipy import fft, special

FloatArray = npt.NDArray[np.float64]

_INNER = 1e-14  # innermost piece [0, _INNER * min(theta, lam)]
_ZONE = 64.0  # e-folds of a kernel kept at full resolution near each point
_TAIL = 60.0  # e-folds of the slowest tail integrated past the last point
_TIERS = ((0.3, 10), (0.08, 6), (1e-3, 4), (1e-7, 2), (0.0, 1))  # (difficulty above, Gauss-Legendre nodes)
# (the last two take the tiny pieces between points a few ulps apart, such as x and -x of a
# symmetric grid: 2 nodes err by ~2e-4 d^4 and 1 node by d^2 / 24 of a piece of difficulty d)
# kernel-zone segments in e-folds of the kernel: (start, end, piece length); ten nodes on 8
# e-folds err by ~5e-7, damped by e^-16 there
# (past 32 e-folds a piece's whole contribution is below e^-32 = 1.3e-14 of the point's value)
_ZONE_STEPS = ((0, 4, 1), (4, 8, 2), (8, 16, 4), (16, 32, 8), (32, _ZONE, 32))


@cache
def _gauss_legendre(n: int) -> tuple[FloatArray, FloatArray]:
    """Gauss-Legendre nodes and weights with n points on [0, 1]."""
    y, w = special.roots_legendre(n)
    return (y + 1) / 2, w / 2


@lru_cache(maxsize=64)
def _gauss_jacobi_unit(n: int, q: float) -> tuple[FloatArray, FloatArray]:
    """Nodes/weights on [0, 1] for weight x^(q - 1), q > 0 (passed as q to keep its digits).

    For small q scipy's first weight loses accuracy (2e-5 at q = 2e-12), so it is reset
    from the exact zeroth moment 1/q; the other weights are accurate.
    """
    x, w = special.roots_sh_jacobi(n, max(q, 1e-14), max(q, 1e-14))
    x, w = x.copy(), w.copy()
    if q < 1e-14:  # below this the other nodes and weights have reached their q -> 0 limits
        x[0] = q / 64
    w[0] = 1 / q - w[1:].sum()
    return x, w


# Batches of at least _TABLE_MIN points take e^z K_nu(z) from a per-nu table: Chebyshev
# interpolants of log(sqrt(z) e^z K_nu(z)) in s = log z on panels of width _TABLE_WIDTH,
# which lie in the strip |Im s| < pi/2 where K_nu has no zeros, so _TABLE_DEGREE nodes are
# exact to ~1e-16 (the table is as accurate as scipy's kve, ~1e-13 just below z = 2, which
# is a panel edge); outside [z_lo, 1e8] ``special.kve`` is called as before.
_TABLE_MIN = 4096
_TABLE_WIDTH = 0.5
_TABLE_DEGREE = 14
_TABLE_S0 = math.log(2.0) - 76 * _TABLE_WIDTH  # z from 6.4e-17
_TABLE_PANELS = 112  # to z = 1.1e8
_TABLE_Z_LO = math.exp(_TABLE_S0)
_TABLES: dict[float, FloatArray] = {}


def _kve_table(nu: float) -> FloatArray:
    """Chebyshev coefficients (degree, panel) of log(sqrt(z) kve(nu, z)) in s = log z, cached per nu."""
    coef = _TABLES.get(nu)
    if coef is None:
        m = _TABLE_DEGREE
        nodes = np.cos(np.pi * (np.arange(m) + 0.5) / m)
        s = _TABLE_S0 + _TABLE_WIDTH * (np.arange(_TABLE_PANELS)[:, None] + 0.5 + 0.5 * nodes)
        z = np.exp(s)
        coef = fft.dct(np.log(special.kve(nu, z) * np.sqrt(z)), type=2, axis=1) / m
        coef[:, 0] /= 2
        coef = np.ascontiguousarray(coef.T)
        if len(_TABLES) >= 16:
            _TABLES.pop(next(iter(_TABLES)))
        _TABLES[nu] = coef
    return coef


def _chebyshev_log(coef: FloatArray, s: FloatArray, s0: float = _TABLE_S0, width: float = _TABLE_WIDTH) -> FloatArray:
    """A panel table's interpolant at s (1-D, inside its range) by Clenshaw's recurrence: coef has
    shape (degree, panels), panel k spans [s0 + k width, s0 + (k + 1) width] (by default the
    log(sqrt(z) e^z K_nu(z)) table in s = log z)."""
    u = (s - s0) / width
    idx = np.minimum(u.astype(np.intp), coef.shape[1] - 1)
    x2 = 4 * (u - idx) - 2
    b1 = coef[-1].take(idx)
    b2 = np.zeros_like(u)
    for j in range(coef.shape[0] - 2, 0, -1):
        b1, b2 = x2 * b1 - b2 + coef[j].take(idx), b1
    return 0.5 * x2 * b1 - b2 + coef[0].take(idx)


def _use_table(nu: float, size: int) -> bool:
    """Whether a batch of ``size`` points takes e^z K_nu(z) from the table."""
    return size >= _TABLE_MIN or (nu in _TABLES and size >= 64)


def _in_table(z: FloatArray) -> npt.NDArray[np.bool_]:
    """Points inside the table's range of z."""
    return (z >= _TABLE_Z_LO) & (z <= 1e8)


def _kve(nu: float, z: FloatArray) -> FloatArray:
    """e^z K_nu(z); scipy returns NaN for z beyond ~1e10, where three terms of the
    asymptotic series sqrt(pi / 2z) (1 + (4nu^2 - 1)/(8z) + ...) are exact to double."""
    if _use_table(nu, z.size):
        flat = z.ravel()
        inside = _in_table(flat)
        out = np.empty(flat.shape)
        out[inside] = np.exp(_chebyshev_log(_kve_table(nu), np.log(flat[inside]))) / np.sqrt(flat[inside])
        rest = ~inside
        if rest.any():
            out[rest] = _kve_direct(nu, flat[rest])
        return out.reshape(z.shape)
    return _kve_direct(nu, z)


def _kve_direct(nu: float, z: FloatArray) -> FloatArray:
    """e^z K_nu(z) by scipy, with the asymptotic series beyond z = 1e8."""
    big = z > 1e8
    if not big.any():
        return special.kve(nu, z)
    out = special.kve(nu, np.where(big, 1.0, z))
    m = 4 * nu * nu
    zb = z[big]
    first = (m - 1) / (8 * zb)
    out[big] = np.sqrt(np.pi / 2 / zb) * (1 + first + first * (m - 9) / (16 * zb))
    return out


def _linear_recurrence(decay: FloatArray, inc: FloatArray) -> FloatArray:
    """y_k = exp(-decay_k) y_{k-1} + inc_k with y_{-1} = 0 along the last axis, by a parallel prefix scan.

    After the step with shift s, (a_k, b_k) maps y_{k-2s} to y_k. Every term is a product or
    sum of non-negative numbers, so no digits are lost to cancellation (decays summed as
    exponents would lose them: 1e15 e-folds for lam ~ 1e-16), and a carry that underflows is
    exactly negligible. log2(n) vectorised steps, no Python loop over pieces; rows of a 2-D
    input are independent recurrences done together.
    """
    with np.errstate(under="ignore"):
        a = np.exp(-decay)
        b = np.array(inc, dtype=float)
        shift = 1
        n = b.shape[-1]
        while shift < n:
            b[..., shift:] += a[..., shift:] * b[..., :-shift]
            a[..., shift:] = a[..., shift:] * a[..., :-shift]
            shift *= 2
    return b


class Mesh(NamedTuple):
    """Piece edges of a density accumulation and the scaled A, B at them (see the module docstring)."""

    edges: FloatArray
    at_a: FloatArray
    at_b: FloatArray


@dataclass(frozen=True, slots=True)
class AreteKernel:
    """Density, survival function and E|Z| of Arete(alpha, theta, lam) by exact quadrature.

    Z = X1 - X2 + Y with X_i ~ Gamma(alpha, theta) and Y ~ Laplace(lam); the method is
    described in the module docstring. Parameters are not validated here (``Arete`` does
    that and passes them in units of max(theta, lam)).

    Parameters
    ----------
    alpha : float
        Gamma shape, in (0, 1].
    theta : float
        Gamma scale, > 0.
    lam : float
        Laplace scale, > 0.

    References
    ----------
    Paper B [PS22] (Pagh & Stausholm): the Arete distribution.
    """

    alpha: float
    theta: float
    lam: float

    @property
    def mu(self) -> float:
        """max(theta, lam): the slowest tail rate is 1/mu; values are carried scaled by e^{t/mu}."""
        return max(self.theta, self.lam)

    @property
    def kappa_a(self) -> float:
        """Decay rate 1/lam - 1/mu of the scaled A-kernel (0 when lam = mu)."""
        return 1 / self.lam - 1 / self.mu

    @property
    def kappa_b(self) -> float:
        """Decay rate 1/lam + 1/mu of the scaled B-kernel."""
        return 1 / self.lam + 1 / self.mu

    @property
    def theta_eff(self) -> float:
        """Decay length of f_X(x) e^{x/mu}; infinite when mu = theta."""
        rate = 1 / self.theta - 1 / self.mu
        return 1 / rate if rate > 0 else math.inf

    def scaled_density(self, x: FloatArray) -> FloatArray:
        """f_X(x) e^{x/mu} for x > 0.

        Parameters
        ----------
        x : numpy.ndarray
            Points > 0.

        Returns
        -------
        numpy.ndarray
            The Gamma - Gamma density at ``x`` times e^{x/mu}.
        """
        nu = self.alpha - 0.5
        z = x / self.theta
        if not _use_table(nu, z.size):
            return _kve_direct(nu, z) * np.exp(self._log_prefactor(x))
        # from the table in logs: one log and one exp per point
        flat_x, flat_z = x.ravel(), z.ravel()
        inside = _in_table(flat_z)
        out = np.empty(flat_z.shape)
        s = np.log(flat_z[inside])
        rate = 1 / self.theta - 1 / self.mu
        log_kve = _chebyshev_log(_kve_table(nu), s) - 0.5 * s
        out[inside] = np.exp(log_kve + nu * s - self._log_constant() - flat_x[inside] * rate)
        rest = ~inside
        if rest.any():
            out[rest] = _kve_direct(nu, flat_z[rest]) * np.exp(self._log_prefactor(flat_x[rest]))
        return out.reshape(x.shape)

    def log_scaled_density(self, x: FloatArray) -> FloatArray:
        """log(f_X(x) e^{x/mu}) for x > 0, without underflow.

        Parameters
        ----------
        x : numpy.ndarray
            Points > 0.

        Returns
        -------
        numpy.ndarray
        """
        return np.log(_kve(self.alpha - 0.5, x / self.theta)) + self._log_prefactor(x)

    def _log_prefactor(self, x: FloatArray) -> FloatArray:
        """log of f_X(x) e^{x/mu} / (e^z K_nu(z)), z = x/theta."""
        nu = self.alpha - 0.5
        z = x / self.theta
        return nu * np.log(z) - self._log_constant() - x * (1 / self.theta - 1 / self.mu)

    def _log_constant(self) -> float:
        """log(theta sqrt(pi) Gamma(alpha) 2^nu), nu = alpha - 1/2."""
        nu = self.alpha - 0.5
        return float(math.log(self.theta) + 0.5 * math.log(math.pi) + special.gammaln(self.alpha) + nu * math.log(2.0))

    # --- mesh -----------------------------------------------------------------
    def _mesh(self, points: FloatArray, *, with_c: bool = True) -> tuple[FloatArray, float]:
        """Piece edges (starting 0, inner, ...) through every point, and inner; see module docstring.

        Without ``with_c`` the C kernel (scale mu) is not resolved: the density needs only A
        and B, whose kernels the zones at the points resolve."""
        inner = _INNER * min(self.theta, self.lam)
        top = float(points.max()) if points.size else 0.0
        end = top + _TAIL * self.mu
        key_parts = [np.array([inner, end]), points[points > inner]]
        far = math.inf
        if math.isfinite(self.theta_eff):
            far = 100 * self.theta_eff + 2 * self.theta
            if far < end:
                key_parts.append(np.array([far]))
        keys = np.unique(np.concatenate(key_parts))
        p, q = keys[:-1], keys[1:]
        base = min(self.mu, self.theta_eff)
        cap_a = min(base, 1 / self.kappa_a) if self.kappa_a > 0 else base
        zone_b = _ZONE / self.kappa_b
        zone_a = _ZONE / self.kappa_a if cap_a < base else 0.0
        long = (q - p) > zone_b + zone_a
        # the middle of a long interval: full resolution for the C kernel (scale mu) over
        # _TAIL mu, and for a slow A kernel (1/kappa_a > base) over its last _ZONE e-folds;
        # elsewhere the integrand is smooth on the scale of x, so geometric grading keeps
        # the cost O(log x) (f_X e^{x/mu} ~ x^(alpha - 1) when mu = theta)
        start, stop = p[long] + zone_b, q[long] - zone_a
        mid1 = np.minimum(stop, start + _TAIL * self.mu)
        slow_a = self.kappa_a > 0 and zone_a == 0
        mid2 = np.maximum(mid1, stop - (_ZONE / self.kappa_a if slow_a else 0.0))
        cap_slow = min(self.theta_eff, 1 / self.kappa_a) if slow_a else self.theta_eff
        seg_p = [start, mid1, mid2]
        seg_q = [mid1, mid2, stop]
        seg_cap = [
            np.full(long.sum(), base if with_c else self.theta_eff),
            np.full(long.sum(), self.theta_eff),
            np.full(long.sum(), cap_slow),
        ]
        # inside a kernel zone the pieces may grow with the e-folds already decayed:
        # a piece k e-folds away contributes e^-k, so its quadrature error may grow too.
        # The zones of every interval are clipped to it: a short interval (below both zones)
        # is graded from both ends (B from p, A towards q), so its pieces are no longer than
        # either zone allows there (the union of both gradings' edges is kept)
        unit_b = 1 / self.kappa_b
        for lo, hi, grow in _ZONE_STEPS:
            seg_p.append(p + lo * unit_b)
            seg_q.append(np.minimum(p + hi * unit_b, q))
            seg_cap.append(np.full(p.size, min(base, grow * unit_b)))
            if zone_a > 0:
                unit_a = 1 / self.kappa_a
                seg_p.append(np.maximum(q - hi * unit_a, p))
                seg_q.append(q - lo * unit_a)
                seg_cap.append(np.full(p.size, min(base, grow * unit_a)))
        sp, sq, sc = (np.concatenate(v) for v in (seg_p, seg_q, seg_cap))
        keep = sq > sp
        sp, sq, sc = sp[keep], sq[keep], sc[keep]
        sc = np.where(sp >= far, np.inf, sc)
        edges = np.concatenate([[0.0], keys, sp, sq, _subdivide(sp, sq, sc)])
        return np.unique(edges), inner

    # --- accumulation -----------------------------------------------------------
    def _accumulate(
        self, points: FloatArray, *, with_c: bool = True
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray | None]:
        """Edges of the mesh through ``points`` and the scaled A, B and (``with_c``) C at them."""
        edges, inner = self._mesh(points, with_c=with_c)
        a, b = edges[:-1], edges[1:]
        length = b - a
        n_pieces = len(a)
        int_a = np.zeros(n_pieces)
        int_b = np.zeros(n_pieces)
        int_c = np.zeros(n_pieces) if with_c else None
        ka, kb, kc = self.kappa_a, self.kappa_b, 1 / self.mu
        # innermost piece [0, inner]
        if self.alpha < 0.5:
            q = 2 * self.alpha
            y, w = _gauss_jacobi_unit(8, q)
            x = inner * y
            h = x ** (1 - q) * self.scaled_density(x)
            w = w * inner**q
        else:
            y, w = _gauss_legendre(10)
            x = inner * y
            h = self.scaled_density(x)
            w = w * inner
        int_a[0] = np.sum(w * h * np.exp(-(inner - x) * ka))
        int_b[0] = np.sum(w * h * np.exp(-x * kb))
        if int_c is not None:
            int_c[0] = np.sum(w * h * np.exp(-x * kc))
        # graded pieces
        rest = np.arange(1, n_pieces)
        difficulty = length[rest] / a[rest]
        rate = self.kappa_b + (1 / self.theta_eff if math.isfinite(self.theta_eff) else 0.0)
        difficulty = np.maximum(difficulty, length[rest] * rate)
        assigned = np.zeros(len(rest), dtype=bool)
        for threshold, n in _TIERS:
            sel = (~assigned) & (difficulty > threshold)
            assigned |= sel
            if not sel.any():
                continue
            idx = rest[sel]
            y, w = _gauss_legendre(n)
            # offsets from the piece ends are formed directly: x - a would lose digits
            # where lam is far below ulp(x) / 1e-12
            offset = length[idx, None] * y
            x = a[idx, None] + offset
            hw = self.scaled_density(x) * (length[idx, None] * w)
            int_a[idx] = np.sum(hw * np.exp(-(length[idx, None] - offset) * ka), axis=1)
            int_b[idx] = np.sum(hw * np.exp(-offset * kb), axis=1)
            if int_c is not None:
                int_c[idx] = np.sum(hw * np.exp(-offset * kc), axis=1)
        big_a = _linear_recurrence(length * ka, int_a)
        rates, incs = ([kb, kc], [int_b, int_c]) if int_c is not None else ([kb], [int_b])
        backward = _linear_recurrence(np.outer(rates, length[::-1]), np.vstack(incs)[:, ::-1])
        # values at edges: A at right ends (edge k+1), B, C at left ends (edge k)
        at_a = np.concatenate([[0.0], big_a])
        at_b = np.concatenate([backward[0, ::-1], [0.0]])
        at_c = np.concatenate([backward[1, ::-1], [0.0]]) if int_c is not None else None
        return edges, at_a, at_b, at_c

    def mean_abs(self, b0: float | None = None) -> float:
        """E|Z| = E|X1 - X2| + 2 lam int_0^inf f_X(x) e^{-x/lam} dx, with
        E|X1 - X2| = theta 4^(1 - alpha) Gamma(2 alpha) / Gamma(alpha)^2.

        Parameters
        ----------
        b0 : float, optional
            The integral B(0) when an ``evaluate`` call already returned it; computed otherwise.

        Returns
        -------
        float
        """
        a = self.alpha
        gg = self.theta * math.exp((1 - a) * math.log(4) + special.gammaln(2 * a) - 2 * special.gammaln(a))
        if b0 is None:
            b0 = self.evaluate(np.zeros(1))[2]
        return gg + 2 * self.lam * b0

    @property
    def asymptotic_from(self) -> float:
        """Points t >= this use the tail forms of ``_tail``: beyond it a Laplace kernel
        narrower than min(theta, lam) is below 1e-14 t (finer than the float spacing
        the mesh needs), or t > 1e13 mu, where pdf and sf underflow."""
        return min(1e13 * self.mu, 1e14 * min(self.theta, self.lam))

    def evaluate(self, t: FloatArray, *, want_sf: bool = False) -> tuple[FloatArray, FloatArray | None, float]:
        """(log f(t), sf(t) for t >= 0, B(0)) for an array of finite t >= 0.

        Parameters
        ----------
        t : numpy.ndarray
            Finite points >= 0 (points below 1e-14 min(theta, lam) are evaluated at 0).
        want_sf : bool, optional
            Also compute the survival function (default False).

        Returns
        -------
        logpdf : numpy.ndarray
            log f_Z(t).
        sf : numpy.ndarray or None
            P(Z > t), or None unless ``want_sf``.
        b0 : float
            The scaled integral B(0) (see the module docstring), which ``mean_abs`` accepts.
        """
        inner = _INNER * min(self.theta, self.lam)
        u = np.where(t < inner, 0.0, t)
        far = u >= self.asymptotic_from
        logpdf = np.empty(u.shape)
        sf = np.empty(u.shape) if want_sf else None
        if far.any():
            logpdf[far], tail_sf = self._tail(u[far], want_sf)
            if sf is not None:
                sf[far] = tail_sf
        v = u[~far]
        points = np.unique(np.concatenate([v, [0.0]]))
        edges, at_a, at_b, at_c = self._accumulate(points, with_c=want_sf)
        idx = np.searchsorted(edges, v)
        b0 = at_b[0]
        near = np.exp(-v * self.kappa_a) * b0
        dens_scaled = (near + at_a[idx] + at_b[idx]) / (2 * self.lam)
        logpdf[~far] = np.log(dens_scaled) - v / self.mu
        if sf is not None:
            assert at_c is not None
            sf_scaled = (near + at_a[idx]) / 2 + at_c[idx] - at_b[idx] / 2
            sf[~far] = np.exp(np.log(sf_scaled) - v / self.mu)
        return logpdf, sf, b0

    def logpdf_with_mesh(self, t: FloatArray) -> tuple[FloatArray, Mesh | None]:
        """log f(t) as ``evaluate`` gives it, and the accumulated mesh for ``logpdf_near``
        (None when some point took the tail forms).

        Parameters
        ----------
        t : numpy.ndarray
            Finite points >= 0.

        Returns
        -------
        logpdf : numpy.ndarray
        mesh : Mesh or None
        """
        inner = _INNER * min(self.theta, self.lam)
        u = np.where(t < inner, 0.0, t)
        if np.any(u >= self.asymptotic_from):
            return self.evaluate(t)[0], None
        edges, at_a, at_b, _ = self._accumulate(np.unique(np.concatenate([u, [0.0]])), with_c=False)
        idx = np.searchsorted(edges, u)
        near = np.exp(-u * self.kappa_a) * at_b[0]
        logpdf = np.log((near + at_a[idx] + at_b[idx]) / (2 * self.lam)) - u / self.mu
        return logpdf, Mesh(edges, at_a, at_b)

    def logpdf_near(self, t: FloatArray, mesh: Mesh) -> FloatArray | None:
        """log f(t) from a mesh of ``logpdf_with_mesh`` whose pieces resolve the kernels around t:
        A from the piece's left edge and B from its right edge, each carried across the part
        of the piece to t by ten-node Gauss-Legendre (a part of a piece is no harder than the
        piece). None when a point lies outside the mesh or the scales are too far apart for
        the offsets to keep their digits (then call ``evaluate``).

        Parameters
        ----------
        t : numpy.ndarray
            Finite points >= 0, 1-D.
        mesh : Mesh
            From ``logpdf_with_mesh`` on this kernel, through points next to each of ``t``.

        Returns
        -------
        numpy.ndarray or None
        """
        edges = mesh.edges
        inner = _INNER * min(self.theta, self.lam)
        u = np.where(t < inner, 0.0, t)
        if min(self.theta, self.lam) < 1e-6 * self.mu or not np.all(u < edges[-1]):
            return None
        k = np.searchsorted(edges, u, side="right") - 1
        left, right = edges[k], edges[k + 1]
        # only pieces the mesh resolved for a point at either end: kernels decay by at most
        # e^2 across them and they are graded (length <= left end) away from 0
        rate = self.kappa_b + (1 / self.theta_eff if math.isfinite(self.theta_eff) else 0.0)
        length = right - left
        if np.any((length * rate > 2) | ((length > left) & (left > 0))):
            return None
        on_edge = u == left
        part = ~on_edge
        y, w = _gauss_legendre(10)
        ka, kb = self.kappa_a, self.kappa_b
        big_a, big_b = mesh.at_a[k].copy(), mesh.at_b[k].copy()
        if part.any():
            kp, up = k[part], u[part]
            len1 = up - left[part]
            len2 = right[part] - up
            off1 = len1[:, None] * y
            off2 = len2[:, None] * y
            h = self.scaled_density(np.concatenate([left[part, None] + off1, up[:, None] + off2]))
            n = len(up)
            hw1 = h[:n] * (len1[:, None] * w)
            hw2 = h[n:] * (len2[:, None] * w)
            carried = np.sum(hw1 * np.exp(-(len1[:, None] - off1) * ka), axis=1)
            big_a[part] = mesh.at_a[kp] * np.exp(-len1 * ka) + carried
            big_b[part] = mesh.at_b[kp + 1] * np.exp(-len2 * kb) + np.sum(hw2 * np.exp(-off2 * kb), axis=1)
        near = np.exp(-u * ka) * mesh.at_b[0]
        return np.asarray(np.log((near + big_a + big_b) / (2 * self.lam)) - u / self.mu)

    def _tail(self, t: FloatArray, want_sf: bool) -> tuple[FloatArray, FloatArray | None]:
        """log f and sf for t >= ``asymptotic_from``.

        With r = min(theta, lam) / mu: for theta > lam, f_Z(t) = f_X(t) / (1 - r^2) and
        sf(t) = P(X > t) / (1 - r^2), to relative O(lam / t) < 1e-14 (Z's tilted shift by Y);
        for lam > theta, f_Z(t) = e^{-t/lam} (1 - r^2)^(-alpha) / (2 lam) (X's tail beyond
        100 theta_eff is below e^-100 of it). When r > 1 - 1e-6 only t > 1e13 mu lands here:
        then log f = -t/mu + alpha log(t/mu) - log(2 mu Gamma(alpha + 1) 2^alpha) + O(log 1/(1 - r)),
        a relative error below 1e-11, and sf underflows to 0.
        """
        a, mu = self.alpha, self.mu
        r = min(self.theta, self.lam) / mu
        sf = np.zeros(t.shape) if want_sf else None
        if r > 1 - 1e-6:
            logpdf = -t / mu + a * np.log(t / mu) - (math.log(2 * mu) + special.gammaln(a + 1) + a * math.log(2))
            return logpdf, sf
        shrink = math.log1p(-r * r)
        if self.theta > self.lam:
            logpdf = self.log_scaled_density(t) - t / mu - shrink
            if sf is not None:
                live = t < 1e13 * mu
                sf[live] = np.exp(np.log(self._scaled_tail_mass(t[live])) - t[live] / mu - shrink)
            return logpdf, sf
        logpdf = -t / self.lam - math.log(2 * self.lam) - a * shrink
        if want_sf:
            sf = 0.5 * np.exp(-t / self.lam - a * shrink)
        return logpdf, sf

    def _scaled_tail_mass(self, t: FloatArray) -> FloatArray:
        """P(X > t) e^{t/mu} (mu = theta) by Gauss-Legendre on [t, t + _TAIL theta], graded from t."""
        out = np.empty(t.shape)
        y, w = _gauss_legendre(10)
        for k, start in enumerate(t):
            inner = _subdivide(np.array([start]), np.array([start + _TAIL * self.theta]), np.array([self.theta]))
            edges = np.concatenate([[start], inner, [start + _TAIL * self.theta]])
            rel = edges - start
            length = np.diff(rel)
            offset = rel[:-1, None] + length[:, None] * y
            h = self.scaled_density(start + offset) * np.exp(-offset / self.mu)
            out[k] = np.sum(h * length[:, None] * w)
        return out


def _subdivide(p: FloatArray, q: FloatArray, cap: FloatArray) -> FloatArray:
    """Interior points splitting each [p, q] (p > 0) so every piece [x, x + L] has
    L <= x (geometric grading) and L <= cap."""
    limit = np.minimum(q, 2 * cap)
    with np.errstate(divide="ignore", invalid="ignore"):
        doublings = np.ceil(np.log2(limit / p) - 1e-12) - 1
    doublings = np.where(np.isfinite(doublings), np.maximum(doublings, 0), 0).astype(np.int64)
    starts = p * 2.0**doublings
    total_geo = int(doublings.sum())
    pieces = []
    if total_geo:
        owner = np.repeat(np.arange(len(p)), doublings)
        offset = np.arange(total_geo) - np.repeat(np.cumsum(doublings) - doublings, doublings)
        pieces.append(p[owner] * 2.0 ** (offset + 1))
    with np.errstate(invalid="ignore"):
        counts = np.ceil((q - starts) / cap * (1 - 1e-12))
    counts = np.where(np.isfinite(counts), np.maximum(counts, 1), 1).astype(np.int64)
    extra = counts - 1
    total_uni = int(extra.sum())
    if total_uni:
        owner = np.repeat(np.arange(len(p)), extra)
        k = np.arange(total_uni) - np.repeat(np.cumsum(extra) - extra, extra) + 1
        pieces.append(starts[owner] + (q[owner] - starts[owner]) * k / counts[owner])
    return np.concatenate(pieces) if pieces else np.empty(0)
