"""The Arete distribution: Gamma - Gamma + Laplace noise (Pagh & Stausholm).

Infinitely divisible, continuous, symmetric and unimodal, with error decreasing
exponentially in epsilon in the low-privacy regime.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._arete_quadrature import AreteKernel
from ._base import NoiseDistribution, check_sensitivity
from ._validation import positive, positive_int

__all__ = ["Arete", "AreteShare"]


@dataclass(frozen=True, slots=True)
class AreteShare:
    """One of n i.i.d. shares whose sum is Arete(alpha, theta, lam) (paper B, Lemma 10).

    A share is G1 - G2 + E1 - E2 with G_i ~ Gamma(alpha/n, theta), E_i ~ Gamma(1/n, lam).
    """

    alpha: float
    theta: float
    lam: float
    n: int

    def sample(self, size=None, *, rng=None):
        rng = np.random.default_rng(rng)
        g = self.alpha / self.n
        e = 1.0 / self.n
        return (
            rng.gamma(g, self.theta, size) - rng.gamma(g, self.theta, size)
            + rng.gamma(e, self.lam, size) - rng.gamma(e, self.lam, size)
        )

    def characteristic_function(self, s):
        s = np.asarray(s, dtype=float)
        return (1 + (self.theta * s) ** 2) ** (-self.alpha / self.n) * (1 + (self.lam * s) ** 2) ** (-1.0 / self.n)


class Arete(NoiseDistribution):
    """Arete(alpha, theta, lam): X1 - X2 + Y with X_i ~ Gamma(shape alpha, scale theta), Y ~ Laplace(lam).

    Characteristic function (1 + theta^2 s^2)^(-alpha) / (1 + lam^2 s^2). The density has
    no elementary closed form; ``pdf``/``logpdf``/``sf`` are computed to about 1e-12
    relative accuracy by exact quadrature of the Bessel-K form of the Gamma - Gamma part
    against the Laplace kernel (see ``noisecore._arete_quadrature``).
    """

    def __init__(self, alpha, theta, lam):
        self.alpha = positive("alpha", alpha)
        self.theta = positive("theta", theta)
        self.lam = positive("lam", lam)
        self._kernel = AreteKernel(self.alpha, self.theta, self.lam)

    @classmethod
    def from_lemma3(cls, epsilon, sensitivity=1.0) -> Arete:
        """Paper B, Lemma 3: alpha = e^(-eps/4), theta = 4 sensitivity/eps, lam = e^(-eps/4).

        The lemma proves epsilon-DP for sensitivity >= 2/e and eps >= 20 + 4 ln(sensitivity);
        outside that range the parameters are still returned (check ``privacy_loss``).
        The guarantee is loose: the certified epsilon is well below the nominal one.
        """
        epsilon = positive("epsilon", epsilon)
        sensitivity = check_sensitivity(sensitivity)
        alpha = math.exp(-epsilon / 4)
        return cls(alpha, 4 * sensitivity / epsilon, alpha)

    @classmethod
    def calibrated(cls, epsilon, sensitivity=1.0, objective="abs") -> Arete:
        """The Arete minimising E|Z| ("abs") or the variance ("var") subject to the certified
        ``privacy_loss(sensitivity) <= epsilon`` (see ``noisecore._arete_calibration``).

        Deterministic. For small epsilon the optimum approaches Laplace(sensitivity/epsilon)
        (alpha -> 0); it need not beat Laplace there.
        """
        from ._arete_calibration import calibrate

        epsilon = positive("epsilon", epsilon)
        sensitivity = check_sensitivity(sensitivity)
        if objective not in ("abs", "var"):
            raise ValueError(f'objective must be "abs" or "var", got {objective!r}')

        def argsup(alpha, theta, lam):
            return _argsup_log_ratio(AreteKernel(alpha, theta, lam), 1.0)

        alpha, theta, lam = calibrate(epsilon, objective, argsup)
        return cls(alpha, theta * sensitivity, lam * sensitivity)

    @staticmethod
    def lemma3_applies(epsilon, sensitivity=1.0) -> bool:
        """Whether (epsilon, sensitivity) lies in Lemma 3's stated range."""
        epsilon = positive("epsilon", epsilon)
        sensitivity = check_sensitivity(sensitivity)
        return sensitivity >= 2 / math.e and epsilon >= 20 + 4 * math.log(sensitivity)

    # --- density ---------------------------------------------------------------
    def _logpdf(self, x):
        flat = np.abs(x).ravel()
        out = np.full(flat.shape, -np.inf)
        finite = np.isfinite(flat)
        if finite.any():
            out[finite] = self._kernel.evaluate(flat[finite])[0]
        return out.reshape(np.shape(x))

    def _sf(self, x):
        flat = np.asarray(x, dtype=float).ravel()
        mag = np.abs(flat)
        upper = np.zeros(flat.shape)
        finite = np.isfinite(mag)
        if finite.any():
            upper[finite] = self._kernel.evaluate(mag[finite], want_sf=True)[1]
        out = np.where(flat >= 0, upper, 1.0 - upper)
        return out.reshape(np.shape(x))

    def _sample(self, size, rng):
        return (
            rng.gamma(self.alpha, self.theta, size)
            - rng.gamma(self.alpha, self.theta, size)
            + rng.laplace(0.0, self.lam, size)
        )

    def characteristic_function(self, s):
        s = np.asarray(s, dtype=float)
        return (1 + (self.theta * s) ** 2) ** (-self.alpha) / (1 + (self.lam * s) ** 2)

    # --- moments -----------------------------------------------------------------
    def mean_abs(self) -> float:
        """E|Z| = E|X1 - X2| + 2 lam int_0^inf f_X(x) e^{-x/lam} dx (see ``AreteKernel.mean_abs``)."""
        return self._kernel.mean_abs()

    def var(self) -> float:
        return 2 * self.alpha * self.theta**2 + 2 * self.lam**2

    # --- privacy ---------------------------------------------------------------
    def _privacy_loss(self, d):
        flat = d.ravel()
        out = np.array([_sup_log_ratio(self._kernel, float(v)) for v in flat])
        return out.reshape(d.shape)

    def _scale_hint(self):
        return max(self.theta, self.lam)

    # --- distributed noise ------------------------------------------------------
    def shares(self, n) -> AreteShare:
        """The share distribution for n parties (paper B, Lemma 10)."""
        return AreteShare(self.alpha, self.theta, self.lam, positive_int("n", n))

    def sample_shares(self, n, size=None, *, rng=None):
        """Samples of n shares, shape ``size + (n,)``; each row sums to an Arete draw."""
        share = self.shares(n)
        shape = (n,) if size is None else (*np.atleast_1d(size).tolist(), n)
        return share.sample(shape, rng=rng)

    def _repr_args(self):
        return f"alpha={self.alpha!r}, theta={self.theta!r}, lam={self.lam!r}"


def _sup_log_ratio(kernel: AreteKernel, d: float) -> float:
    """sup_t log f(t) - log f(t + d) over all real t (d >= 0)."""
    return _argsup_log_ratio(kernel, d)[0]


def _argsup_log_ratio(kernel: AreteKernel, d: float) -> tuple[float, float]:
    """(supremum, a t attaining it or inf for the tail limit) of log f(t) - log f(t + d)."""
    return _argsup_for(lambda x: kernel.evaluate(x)[0], d, kernel.lam, kernel.theta, kernel.mu)


def _argsup_for(logpdf, d: float, scale_a: float, scale_b: float, mu: float) -> tuple[float, float]:
    """sup_t log f(t) - log f(t + d) for a symmetric density decreasing in |t| (``logpdf`` takes
    |t| >= 0), with characteristic scales ``scale_a``, ``scale_b`` and tail scale ``mu``.

    t >= -d/2 suffices. A grid covering the scales and d is refined around its best points;
    the limit d/mu of the tails is included, as the supremum may not be attained.
    """
    if d == 0:
        return 0.0, 0.0
    reach = 2 * d + 10 * mu
    grids = [
        np.linspace(-d / 2, reach, 1201),
        np.linspace(max(-d / 2, -80 * scale_a), 80 * scale_a, 321),
        np.linspace(max(-d / 2, -8 * scale_b), 8 * scale_b, 321),
        reach + mu * np.geomspace(0.01, 150, 200),
        [0.0],  # the density peaks, often in a cusp, at 0
    ]
    t = np.unique(np.concatenate(grids))

    def ratio(ts):
        lp = logpdf(np.abs(np.concatenate([ts, ts + d])))
        return lp[: len(ts)] - lp[len(ts):]

    values = ratio(t)
    best_i = int(np.argmax(values))
    best, best_t = float(values[best_i]), float(t[best_i])
    order = np.argsort(values)[::-1]
    peaks = [i for i in order[:50] if 0 < i < len(t) - 1 and values[i] >= values[i - 1] and values[i] >= values[i + 1]]
    for i in peaks[:3]:
        lo, hi = t[i - 1], t[i + 1]
        for _ in range(6):
            local = np.linspace(lo, hi, 33)
            vals = ratio(local)
            j = int(np.argmax(vals))
            if vals[j] > best:
                best, best_t = float(vals[j]), float(local[j])
            step = local[1] - local[0]
            lo, hi = max(local[j] - step, -d / 2), local[j] + step
    if d / mu > best:
        return d / mu, math.inf
    return best, best_t
