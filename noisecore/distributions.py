"""Laplace, Gaussian and Staircase noise with closed-form densities and privacy loss."""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from ._base import NoiseDistribution, _output, check_sensitivity
from ._validation import in_open_interval, positive, real_array

__all__ = ["Gaussian", "Laplace", "Staircase"]


class Laplace(NoiseDistribution):
    """Laplace noise with density exp(-|x|/scale) / (2 scale).

    E|Z| = scale, Var Z = 2 scale^2, and the privacy loss at distance d is d/scale.
    """

    def __init__(self, scale):
        self.scale = positive("scale", scale)

    @classmethod
    def for_epsilon(cls, epsilon, sensitivity=1.0) -> Laplace:
        """The epsilon-DP Laplace mechanism: scale = sensitivity / epsilon."""
        epsilon = positive("epsilon", epsilon)
        return cls(check_sensitivity(sensitivity) / epsilon)

    def _logpdf(self, x):
        return -np.abs(x) / self.scale - math.log(2 * self.scale)

    def _sf(self, x):
        half = 0.5 * np.exp(-np.abs(x) / self.scale)
        return np.where(x >= 0, half, 1.0 - half)

    def _isf_upper(self, q):
        with np.errstate(divide="ignore"):
            return -self.scale * np.log(2 * q)

    def _sample(self, size, rng):
        return rng.laplace(0.0, self.scale, size)

    def mean_abs(self) -> float:
        return self.scale

    def var(self) -> float:
        return 2 * self.scale**2

    def _privacy_loss(self, d):
        return d / self.scale

    def _repr_args(self):
        return f"scale={self.scale!r}"


class Gaussian(NoiseDistribution):
    """Gaussian noise N(0, sigma^2).

    Its worst-case (pure) privacy loss is infinite for any distance > 0; the exact
    (epsilon, delta) trade-off is :meth:`delta` (Balle & Wang 2018, Theorem 8).
    """

    def __init__(self, sigma):
        self.sigma = positive("sigma", sigma)

    @staticmethod
    def _delta(epsilon, sigma, sensitivity):
        """delta(eps) = Phi(D/2s - eps s/D) - e^eps Phi(-D/2s - eps s/D), cancellation-free."""
        ratio = sensitivity / sigma
        u1 = ratio / 2 - epsilon / ratio
        u2 = -ratio / 2 - epsilon / ratio
        log_first = special.log_ndtr(u1)
        log_second = epsilon + special.log_ndtr(u2)
        return np.exp(log_first) * -np.expm1(log_second - log_first)

    def delta(self, epsilon, sensitivity=1.0):
        """Exact privacy profile: the least delta for which this noise is (epsilon, delta)-DP."""
        eps = real_array("epsilon", epsilon)
        if (eps < 0).any():
            raise ValueError("epsilon must be >= 0")
        sens = check_sensitivity(sensitivity)
        return _output(np.clip(self._delta(eps, self.sigma, sens), 0.0, 1.0), eps)

    @classmethod
    def analytic(cls, epsilon, delta, sensitivity=1.0) -> Gaussian:
        """Analytic Gaussian mechanism: the least sigma giving (epsilon, delta)-DP (any epsilon > 0)."""
        epsilon = positive("epsilon", epsilon)
        delta = in_open_interval("delta", delta, 0.0, 1.0)
        sens = check_sensitivity(sensitivity)

        def excess(log_sigma):
            return math.log(cls._delta(epsilon, math.exp(log_sigma), sens) + 1e-300) - math.log(delta)

        lo = math.log(sens) - 10.0
        hi = math.log(sens) + 10.0
        while excess(lo) < 0:
            lo -= 10.0
        while excess(hi) > 0:
            hi += 10.0
        log_sigma = optimize.brentq(excess, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps)
        return cls(math.exp(log_sigma))

    @classmethod
    def classic(cls, epsilon, delta, sensitivity=1.0) -> Gaussian:
        """Classic calibration sigma = sqrt(2 ln(1.25/delta)) sensitivity / epsilon (epsilon < 1 only)."""
        epsilon = positive("epsilon", epsilon)
        if epsilon >= 1:
            raise ValueError(
                f"epsilon must be in (0, 1) for the classic Gaussian calibration, got {epsilon}; "
                "use Gaussian.analytic for larger epsilon"
            )
        delta = in_open_interval("delta", delta, 0.0, 1.0)
        sens = check_sensitivity(sensitivity)
        return cls(math.sqrt(2 * math.log(1.25 / delta)) * sens / epsilon)

    def _logpdf(self, x):
        return -0.5 * (x / self.sigma) ** 2 - math.log(self.sigma) - 0.5 * math.log(2 * math.pi)

    def _sf(self, x):
        return special.ndtr(-x / self.sigma)

    def _isf_upper(self, q):
        return -self.sigma * special.ndtri(q)

    def _sample(self, size, rng):
        return rng.normal(0.0, self.sigma, size)

    def mean_abs(self) -> float:
        return self.sigma * math.sqrt(2 / math.pi)

    def var(self) -> float:
        return self.sigma**2

    def _privacy_loss(self, d):
        return np.where(d > 0, np.inf, 0.0)

    def _repr_args(self):
        return f"sigma={self.sigma!r}"


class Staircase(NoiseDistribution):
    """Staircase noise (Geng & Viswanath), the optimal pure-DP noise for one real query.

    With b = exp(-epsilon) the density is a on [0, gamma D), a b on [gamma D, D), and the
    pattern repeats scaled by b^k on [k D, (k+1) D), symmetric about 0, where
    a = (1 - b) / (2 D (gamma + (1 - gamma) b)) and D is the sensitivity.
    """

    def __init__(self, epsilon, sensitivity=1.0, gamma=None):
        self.epsilon = positive("epsilon", epsilon)
        self.sensitivity = check_sensitivity(sensitivity)
        if gamma is None:
            gamma = self.optimal_gamma(self.epsilon, "abs")
        self.gamma = in_open_interval("gamma", gamma, 0.0, 1.0)
        b = math.exp(-self.epsilon)
        self._b = b
        self._a = -math.expm1(-self.epsilon) / (2 * self.sensitivity * (self.gamma + (1 - self.gamma) * b))

    @staticmethod
    def optimal_gamma(epsilon, criterion="abs") -> float:
        """gamma minimising E|Z| ("abs": 1/(1+e^(eps/2))) or the variance ("var")."""
        epsilon = positive("epsilon", epsilon)
        if criterion == "abs":
            return 1.0 / (1.0 + math.exp(epsilon / 2))
        if criterion == "var":
            b = math.exp(-epsilon)
            one_minus_b = -math.expm1(-epsilon)
            root = (b - 2 * b**2 + 2 * b**4 - b**5) ** (1 / 3)
            return -b / one_minus_b + root / (2 ** (1 / 3) * one_minus_b**2)
        raise ValueError(f'criterion must be "abs" or "var", got {criterion!r}')

    def _steps(self, x):
        """Number of e^-eps steps below the peak at |x|: floor(|x|/D + 1 - gamma)."""
        return np.floor(np.abs(x) / self.sensitivity + 1 - self.gamma)

    def _logpdf(self, x):
        with np.errstate(invalid="ignore"):
            out = math.log(self._a) - self.epsilon * self._steps(x)
        return np.where(np.isinf(x), -np.inf, out)

    def _sf_upper(self, x):
        """P(Z > x) for x >= 0 as a sum of positive terms."""
        D, g, a, b = self.sensitivity, self.gamma, self._a, self._b
        with np.errstate(invalid="ignore", over="ignore"):
            k = np.floor(x / D)
            r = x - k * D
            inner = a * np.maximum(g * D - r, 0.0) + a * b * (D - np.maximum(r, g * D)) + b / 2
            out = np.exp(-self.epsilon * k) * inner
        return np.where(np.isinf(x), 0.0, out)

    def _sf(self, x):
        upper = self._sf_upper(np.abs(x))
        return np.where(x >= 0, upper, 1.0 - upper)

    def _isf_upper(self, q):
        D, g, a, b, eps = self.sensitivity, self.gamma, self._a, self._b, self.epsilon
        with np.errstate(divide="ignore", invalid="ignore"):
            k = np.floor(np.log(2 * q) / -eps)
            k = np.where(np.isfinite(k), np.maximum(k, 0.0), 0.0)
            scaled = q * np.exp(eps * k)
            scaled = np.clip(scaled, b / 2, 0.5)
            s_mid = a * b * (1 - g) * D + b / 2
            r = np.where(scaled >= s_mid, g * D - (scaled - s_mid) / a, D - (scaled - b / 2) / (a * b))
            out = k * D + np.clip(r, 0.0, D)
        return np.where(q > 0, out, np.inf)

    def _sample(self, size, rng):
        b, g, D = self._b, self.gamma, self.sensitivity
        sign = rng.choice(np.array([-1.0, 1.0]), size=size)
        period = rng.geometric(1 - b, size=size) - 1.0
        in_second = rng.random(size) >= g / (g + (1 - g) * b)
        u = rng.random(size)
        offset = np.where(in_second, g + (1 - g) * u, g * u)
        return sign * (period + offset) * D

    def mean_abs(self) -> float:
        D, g, a, b = self.sensitivity, self.gamma, self._a, self._b
        one_minus_b = -math.expm1(-self.epsilon)
        s0 = 1 / one_minus_b
        s1 = b / one_minus_b**2
        return 2 * a * D**2 * ((g + b * (1 - g)) * s1 + (g**2 + b * (1 - g**2)) * s0 / 2)

    def var(self) -> float:
        D, g, a, b = self.sensitivity, self.gamma, self._a, self._b
        one_minus_b = -math.expm1(-self.epsilon)
        s0 = 1 / one_minus_b
        s1 = b / one_minus_b**2
        s2 = b * (1 + b) / one_minus_b**3
        inner = 3 * (g + b * (1 - g)) * s2 + 3 * (g**2 + b * (1 - g**2)) * s1 + (g**3 + b * (1 - g**3)) * s0
        return 2 * a * D**3 / 3 * inner

    def _privacy_loss(self, d):
        return self.epsilon * np.ceil(d / self.sensitivity)

    def _scale_hint(self):
        return self.sensitivity

    def _repr_args(self):
        return f"epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r}, gamma={self.gamma!r}"
