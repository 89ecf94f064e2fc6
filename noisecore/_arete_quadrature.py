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

import numpy as np
from scipy import special

_INNER = 1e-14  # innermost piece [0, _INNER * min(theta, lam)]
_ZONE = 64.0  # e-folds of a kernel kept at full resolution near each point
_TAIL = 60.0  # e-folds of the slowest tail integrated past the last point
_TIERS = ((0.3, 10), (0.08, 6), (0.0, 4))  # (difficulty above, Gauss-Legendre nodes)
# kernel-zone segments in e-folds of the kernel: (start, end, piece length); ten nodes on 8
# e-folds err by ~5e-7, damped by e^-16 there
_ZONE_STEPS = ((0, 4, 1), (4, 8, 2), (8, 16, 4), (16, _ZONE, 8))


@cache
def _gauss_legendre(n: int):
    y, w = special.roots_legendre(n)
    return (y + 1) / 2, w / 2


@lru_cache(maxsize=64)
def _gauss_jacobi_unit(n: int, q: float):
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


def _linear_recurrence(decay: np.ndarray, inc: np.ndarray) -> np.ndarray:
    """y_k = exp(-decay_k) y_{k-1} + inc_k with y_{-1} = 0, in blocks safe from overflow."""
    out = np.empty_like(inc)
    cum = np.cumsum(decay)
    n = len(inc)
    start = 0
    prev = 0.0
    prev_cum = 0.0
    while start < n:
        stop = int(np.searchsorted(cum, cum[start] + 300.0, side="right"))
        stop = max(stop, start + 1)
        ref = cum[start]
        seg = cum[start:stop]
        partial = np.cumsum(inc[start:stop] * np.exp(seg - ref))
        out[start:stop] = np.exp(-(seg - prev_cum)) * prev + np.exp(-(seg - ref)) * partial
        prev = out[stop - 1]
        prev_cum = cum[stop - 1]
        start = stop
    return out


@dataclass(frozen=True, slots=True)
class AreteKernel:
    alpha: float
    theta: float
    lam: float

    @property
    def mu(self) -> float:
        return max(self.theta, self.lam)

    @property
    def kappa_a(self) -> float:
        return 1 / self.lam - 1 / self.mu

    @property
    def kappa_b(self) -> float:
        return 1 / self.lam + 1 / self.mu

    @property
    def theta_eff(self) -> float:
        """Decay length of f_X(x) e^{x/mu}; infinite when mu = theta."""
        rate = 1 / self.theta - 1 / self.mu
        return 1 / rate if rate > 0 else math.inf

    def scaled_density(self, x: np.ndarray) -> np.ndarray:
        """f_X(x) e^{x/mu} for x > 0."""
        nu = self.alpha - 0.5
        z = x / self.theta
        log_pref = (
            nu * np.log(z)
            - math.log(self.theta)
            - 0.5 * math.log(math.pi)
            - special.gammaln(self.alpha)
            - nu * math.log(2.0)
        )
        return special.kve(nu, z) * np.exp(log_pref - x * (1 / self.theta - 1 / self.mu))

    # --- mesh -----------------------------------------------------------------
    def _mesh(self, points: np.ndarray) -> np.ndarray:
        """Piece edges (starting 0, inner, ...) through every point, see module docstring."""
        inner = _INNER * min(self.theta, self.lam)
        top = float(points.max()) if points.size else 0.0
        end = top + _TAIL * self.mu
        keys = [np.array([inner, end]), points[points > inner]]
        far = math.inf
        if math.isfinite(self.theta_eff):
            far = 100 * self.theta_eff + 2 * self.theta
            if far < end:
                keys.append(np.array([far]))
        keys = np.unique(np.concatenate(keys))
        p, q = keys[:-1], keys[1:]
        base = min(self.mu, self.theta_eff)
        cap_b = min(base, 1 / self.kappa_b)
        cap_a = min(base, 1 / self.kappa_a) if self.kappa_a > 0 else base
        zone_b = _ZONE / self.kappa_b
        zone_a = _ZONE / self.kappa_a if cap_a < base else 0.0
        long = (q - p) > zone_b + zone_a
        seg_p = [p[~long], p[long] + zone_b]
        seg_q = [q[~long], q[long] - zone_a]
        seg_cap = [np.full((~long).sum(), cap_b), np.full(long.sum(), base)]
        # inside a kernel zone the pieces may grow with the e-folds already decayed:
        # a piece k e-folds away contributes e^-k, so its quadrature error may grow too
        for lo, hi, grow in _ZONE_STEPS:
            unit_b = 1 / self.kappa_b
            seg_p.append(p[long] + lo * unit_b)
            seg_q.append(p[long] + hi * unit_b)
            seg_cap.append(np.full(long.sum(), min(base, grow * unit_b)))
            if zone_a > 0:
                unit_a = 1 / self.kappa_a
                seg_p.append(q[long] - hi * unit_a)
                seg_q.append(q[long] - lo * unit_a)
                seg_cap.append(np.full(long.sum(), min(base, grow * unit_a)))
        sp, sq, sc = (np.concatenate(v) for v in (seg_p, seg_q, seg_cap))
        keep = sq > sp
        sp, sq, sc = sp[keep], sq[keep], sc[keep]
        sc = np.where(sp >= far, np.inf, sc)
        edges = np.concatenate([[0.0], keys, _subdivide(sp, sq, sc)])
        return np.unique(edges), inner

    # --- accumulation -----------------------------------------------------------
    def _accumulate(self, points: np.ndarray):
        """Scaled A, B, C at the edges of the mesh through ``points``, and the edges."""
        edges, inner = self._mesh(points)
        a, b = edges[:-1], edges[1:]
        length = b - a
        n_pieces = len(a)
        int_a = np.zeros(n_pieces)
        int_b = np.zeros(n_pieces)
        int_c = np.zeros(n_pieces)
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
            x = a[idx, None] + length[idx, None] * y
            hw = self.scaled_density(x) * (length[idx, None] * w)
            int_a[idx] = np.sum(hw * np.exp(-(b[idx, None] - x) * ka), axis=1)
            int_b[idx] = np.sum(hw * np.exp(-(x - a[idx, None]) * kb), axis=1)
            int_c[idx] = np.sum(hw * np.exp(-(x - a[idx, None]) * kc), axis=1)
        big_a = _linear_recurrence(length * ka, int_a)
        big_b = _linear_recurrence((length * kb)[::-1], int_b[::-1])[::-1]
        big_c = _linear_recurrence((length * kc)[::-1], int_c[::-1])[::-1]
        # values at edges: A at right ends (edge k+1), B, C at left ends (edge k)
        at_a = np.concatenate([[0.0], big_a])
        at_b = np.concatenate([big_b, [0.0]])
        at_c = np.concatenate([big_c, [0.0]])
        return edges, at_a, at_b, at_c

    def mean_abs(self) -> float:
        """E|Z| = E|X1 - X2| + 2 lam int_0^inf f_X(x) e^{-x/lam} dx, with
        E|X1 - X2| = theta 4^(1 - alpha) Gamma(2 alpha) / Gamma(alpha)^2."""
        a = self.alpha
        gg = self.theta * math.exp((1 - a) * math.log(4) + special.gammaln(2 * a) - 2 * special.gammaln(a))
        return gg + 2 * self.lam * self.evaluate(np.zeros(1))[2]

    def evaluate(self, t: np.ndarray, *, want_sf: bool = False):
        """(log f(t), sf(t) for t >= 0) for an array of finite t >= 0."""
        inner = _INNER * min(self.theta, self.lam)
        u = np.where(t < inner, 0.0, t)
        points = np.unique(u)
        edges, at_a, at_b, at_c = self._accumulate(points)
        idx = np.searchsorted(edges, u)
        b0 = at_b[0]
        near = np.exp(-u * self.kappa_a) * b0
        dens_scaled = (near + at_a[idx] + at_b[idx]) / (2 * self.lam)
        logpdf = np.log(dens_scaled) - u / self.mu
        if not want_sf:
            return logpdf, None, b0
        sf_scaled = (near + at_a[idx]) / 2 + at_c[idx] - at_b[idx] / 2
        sf = np.exp(np.log(sf_scaled) - u / self.mu)
        return logpdf, sf, b0


def _subdivide(p: np.ndarray, q: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """Interior points splitting each [p, q] (p > 0) so every piece [x, x + L] has
    L <= x (geometric grading) and L <= cap."""
    limit = np.minimum(q, 2 * cap)
    with np.errstate(divide="ignore", invalid="ignore"):
        doublings = np.ceil(np.log2(limit / p) - 1e-12) - 1
    doublings = np.where(np.isfinite(doublings), np.maximum(doublings, 0), 0).astype(np.int64)
    starts = p * 2.0 ** doublings
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
