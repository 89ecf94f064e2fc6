"""Laplace, Gaussian and Staircase noise with closed-form densities and privacy loss."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy import special

from ._base import FloatArray, FloatOrArray, NoiseDistribution, Size, _output
from ._validation import SCALE_MAX, SCALE_MIN, derived_scale, in_interval, in_open_interval, positive, real_array
from ._validation import scale as scale_param

STAIRCASE_EPSILON = (1e-100, 200.0)  # keeps e^-eps, (1 - e^-eps)^3 and the density normal floats

__all__ = ["Gaussian", "Laplace", "Staircase"]


class Laplace(NoiseDistribution):
    """Laplace noise with density exp(-|x|/scale) / (2 scale).

    E|Z| = scale, Var Z = 2 scale^2, and the privacy loss at distance d is d/scale. Scales (and
    sensitivities) lie in [1e-100, 1e100].

    Parameters
    ----------
    scale : float
        The scale b, in [1e-100, 1e100].

    Raises
    ------
    TypeError
        If ``scale`` is not a real number.
    ValueError
        If ``scale`` is not finite or lies outside [1e-100, 1e100].
    """

    _finite_loss = True

    def __init__(self, scale: float) -> None:
        self.scale = scale_param("scale", scale)

    @classmethod
    def calibrated(cls, epsilon: float, *, sensitivity: float = 1.0) -> Laplace:
        """The epsilon-DP Laplace mechanism: scale = sensitivity / epsilon.

        Parameters
        ----------
        epsilon : float
            Privacy parameter, > 0.
        sensitivity : float, optional
            The query's sensitivity, in [1e-100, 1e100] (default 1).

        Returns
        -------
        Laplace

        Raises
        ------
        TypeError
            If ``epsilon`` or ``sensitivity`` is not a real number.
        ValueError
            If ``epsilon`` is not finite or <= 0, ``sensitivity`` is out of range, or the scale
            falls outside [1e-100, 1e100].

        References
        ----------
        Paper B [PS22] (Pagh & Stausholm), Lemma 26 (the Laplace mechanism).
        """
        epsilon = positive("epsilon", epsilon)
        sensitivity = scale_param("sensitivity", sensitivity)
        return cls(derived_scale("scale", sensitivity / epsilon, epsilon=epsilon, sensitivity=sensitivity))

    def _logpdf(self, x: FloatArray) -> FloatArray:
        return -np.abs(x) / self.scale - math.log(2 * self.scale)

    def _sf(self, x: FloatArray) -> FloatArray:
        half = 0.5 * np.exp(-np.abs(x) / self.scale)
        return np.where(x >= 0, half, 1.0 - half)

    def _isf_upper(self, q: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore"):
            return -self.scale * np.log(2 * q)

    def _sample(self, size: Size, rng: np.random.Generator) -> FloatOrArray:
        return rng.laplace(0.0, self.scale, size)

    def mean_abs(self) -> float:
        """E|Z| = scale.

        Returns
        -------
        float
        """
        return self.scale

    def var(self) -> float:
        """Var Z = 2 scale^2.

        Returns
        -------
        float
        """
        return 2 * self.scale**2

    def _privacy_loss(self, d: FloatArray) -> FloatArray:
        return d / self.scale

    def _repr_args(self) -> str:
        return f"scale={self.scale!r}"


class Gaussian(NoiseDistribution):
    """Gaussian noise N(0, sigma^2).

    Its worst-case (pure) privacy loss is infinite for any distance > 0; the exact
    (epsilon, delta) trade-off is :meth:`delta` (Balle & Wang 2018, Theorem 8).

    Parameters
    ----------
    sigma : float
        The standard deviation, in [1e-100, 1e100].

    Raises
    ------
    TypeError
        If ``sigma`` is not a real number.
    ValueError
        If ``sigma`` is not finite or lies outside [1e-100, 1e100].

    References
    ----------
    [BW18] (Balle & Wang).
    """

    def __init__(self, sigma: float) -> None:
        self.sigma = scale_param("sigma", sigma)

    @staticmethod
    def _log_delta(epsilon: float | FloatArray, sigma: float | FloatArray, sensitivity: float) -> FloatArray:
        """log delta(eps), delta = Phi(D/2s - eps s/D) - e^eps Phi(-D/2s - eps s/D), cancellation-free."""
        ratio = sensitivity / sigma
        with np.errstate(over="ignore"):
            u1 = ratio / 2 - epsilon / ratio
            u2 = -ratio / 2 - epsilon / ratio
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            log_first = special.log_ndtr(u1)
            log_second = epsilon + special.log_ndtr(u2)
            out = log_first + np.log(np.maximum(-np.expm1(log_second - log_first), 0.0))
        return np.where(np.isneginf(log_first), -np.inf, out)

    def delta(self, epsilon: npt.ArrayLike, *, sensitivity: float = 1.0) -> FloatOrArray:
        """Exact privacy profile: the least delta for which this noise is (epsilon, delta)-DP.

        Parameters
        ----------
        epsilon : array_like
            Privacy parameters, finite and >= 0.
        sensitivity : float, optional
            The query's l2 sensitivity, in [1e-100, 1e100] (default 1).

        Returns
        -------
        float or numpy.ndarray
            delta(epsilon) = Phi(D/2s - eps s/D) - e^eps Phi(-D/2s - eps s/D) (s = sigma,
            D = sensitivity), clipped to [0, 1].

        Raises
        ------
        TypeError
            If ``epsilon`` or ``sensitivity`` is not real.
        ValueError
            If ``epsilon`` is not finite or is negative, or ``sensitivity`` is out of range.

        References
        ----------
        [BW18] (Balle & Wang).
        """
        eps = real_array("epsilon", epsilon)
        if (eps < 0).any():
            raise ValueError("epsilon must be >= 0")
        sens = scale_param("sensitivity", sensitivity)
        return _output(np.clip(np.exp(self._log_delta(eps, self.sigma, sens)), 0.0, 1.0), eps)

    @classmethod
    def calibrated(
        cls, epsilon: float, *, delta: float, sensitivity: float = 1.0, method: str = "analytic"
    ) -> Gaussian:
        """The Gaussian mechanism for (epsilon, delta)-DP.

        ``method="analytic"`` (Balle & Wang 2018): the least sigma, for any epsilon > 0.
        ``method="classic"``: sigma = sqrt(2 ln(1.25/delta)) sensitivity / epsilon, epsilon < 1 only.
        An error names the arguments if sigma falls outside [1e-100, 1e100].

        Parameters
        ----------
        epsilon : float
            Privacy parameter, > 0 (< 1 for ``method="classic"``).
        delta : float
            In (0, 1).
        sensitivity : float, optional
            The query's l2 sensitivity, in [1e-100, 1e100] (default 1).
        method : {"analytic", "classic"}, optional
            The calibration (default "analytic").

        Returns
        -------
        Gaussian

        Raises
        ------
        TypeError
            If ``method`` is not a string or a number argument is not a real number.
        ValueError
            If ``method`` is unknown, an argument is out of range, or sigma falls outside
            [1e-100, 1e100].

        References
        ----------
        [BW18] (Balle & Wang) for the analytic calibration.
        """
        if not isinstance(method, str):
            raise TypeError(f'method must be "analytic" or "classic", got {type(method).__name__}')
        if method == "classic":
            return cls._classic(epsilon, delta, sensitivity)
        if method != "analytic":
            raise ValueError(f'method must be "analytic" or "classic", got {method!r}')
        epsilon = positive("epsilon", epsilon)
        delta = in_open_interval("delta", delta, 0.0, 1.0)
        sens = scale_param("sensitivity", sensitivity)
        return cls(float(cls._analytic_sigmas(np.array(epsilon), delta, sens)))

    @classmethod
    def _analytic_sigmas(cls, epsilon: FloatArray, delta: float, sensitivity: float) -> FloatArray:
        """The least sigma with delta(eps) <= delta, for each (validated) eps at once [BW18].

        delta(eps) falls as sigma grows, so each log sigma is bracketed (steps of 10 out from
        log sensitivity) and bisected, all together, until the bracket is within 1e-14 + 4 ulp of
        log sigma (the tolerance of scipy's brentq). An error names the arguments if a sigma falls
        outside [1e-100, 1e100]."""
        log_delta, log_sens = math.log(delta), math.log(sensitivity)
        shape, eps = epsilon.shape, epsilon.ravel()

        def excess(log_sigma: FloatArray, index: npt.NDArray[np.intp]) -> FloatArray:
            # log delta is floored far below log(5e-324) so the comparison never sees -inf
            return np.maximum(cls._log_delta(eps[index], np.exp(log_sigma), sensitivity), -5000.0) - log_delta

        def out_of_range(k: int, sigma: float) -> None:
            derived_scale("sigma", sigma, epsilon=float(eps[k]), delta=delta, sensitivity=sensitivity)

        lo, hi = np.full(eps.shape, log_sens - 10.0), np.full(eps.shape, log_sens + 10.0)
        low = high = np.arange(eps.size)  # the entries not yet bracketed from below / above
        while (low := low[excess(lo[low], low) < 0]).size:
            lo[low] -= 10.0  # all of them still at the same (lowest) bound
            if lo[low[0]] < math.log(SCALE_MIN) - 10:
                out_of_range(int(low[0]), 0.0)
        while (high := high[excess(hi[high], high) > 0]).size:
            hi[high] += 10.0
            if hi[high[0]] > math.log(SCALE_MAX) + 10:
                out_of_range(int(high[0]), math.inf)
        tolerance = 1e-14 + 4 * np.finfo(float).eps * np.maximum(np.abs(lo), np.abs(hi))
        for _ in range(200):  # 20 / 2**200 is far below any tolerance: ends on the bracket test
            wide = np.flatnonzero(hi - lo > tolerance)
            if not wide.size:
                break
            mid = (lo[wide] + hi[wide]) / 2
            above = excess(mid, wide) > 0
            lo[wide[above]], hi[wide[~above]] = mid[above], mid[~above]
        sigma = np.exp((lo + hi) / 2)
        for k in np.flatnonzero(~((sigma >= SCALE_MIN) & (sigma <= SCALE_MAX))):
            out_of_range(int(k), float(sigma[k]))
        return sigma.reshape(shape)

    @classmethod
    def _classic(cls, epsilon: float, delta: float, sensitivity: float) -> Gaussian:
        """Classic calibration sigma = sqrt(2 ln(1.25/delta)) sensitivity / epsilon (epsilon < 1 only)."""
        epsilon = positive("epsilon", epsilon)
        if epsilon >= 1:
            raise ValueError(
                f"epsilon must be in (0, 1) for the classic Gaussian calibration, got {epsilon}; "
                "use method='analytic' for larger epsilon"
            )
        delta = in_open_interval("delta", delta, 0.0, 1.0)
        sens = scale_param("sensitivity", sensitivity)
        sigma = math.sqrt(2 * math.log(1.25 / delta)) * sens / epsilon
        return cls(derived_scale("sigma", sigma, epsilon=epsilon, delta=delta, sensitivity=sens))

    def _logpdf(self, x: FloatArray) -> FloatArray:
        return -0.5 * (x / self.sigma) ** 2 - math.log(self.sigma) - 0.5 * math.log(2 * math.pi)

    def _sf(self, x: FloatArray) -> FloatArray:
        return special.ndtr(-x / self.sigma)

    def _isf_upper(self, q: FloatArray) -> FloatArray:
        return -self.sigma * special.ndtri(q)

    def _sample(self, size: Size, rng: np.random.Generator) -> FloatOrArray:
        return rng.normal(0.0, self.sigma, size)

    def mean_abs(self) -> float:
        """E|Z| = sigma sqrt(2/pi).

        Returns
        -------
        float
        """
        return self.sigma * math.sqrt(2 / math.pi)

    def var(self) -> float:
        """Var Z = sigma^2.

        Returns
        -------
        float
        """
        return self.sigma**2

    def _privacy_loss(self, d: FloatArray) -> FloatArray:
        return np.where(d > 0, np.inf, 0.0)

    def _repr_args(self) -> str:
        return f"sigma={self.sigma!r}"


class Staircase(NoiseDistribution):
    """Staircase noise (Geng & Viswanath), the optimal pure-DP noise for one real query.

    With b = exp(-epsilon) the density is a on [0, gamma D), a b on [gamma D, D), and the
    pattern repeats scaled by b^k on [k D, (k+1) D), symmetric about 0, where
    a = (1 - b) / (2 D (gamma + (1 - gamma) b)) and D is the sensitivity. epsilon lies in
    [1e-100, 200], the sensitivity and sensitivity / epsilon in [1e-100, 1e100].

    Parameters
    ----------
    epsilon : float
        Privacy parameter, in [1e-100, 200].
    sensitivity : float, optional
        The query's sensitivity D, in [1e-100, 1e100] (default 1).
    gamma : float, optional
        Width of the first step as a fraction of D, in (0, 1); None (default) for
        ``optimal_gamma(epsilon, criterion="abs")``.

    Raises
    ------
    TypeError
        If an argument is not a real number.
    ValueError
        If an argument or sensitivity / epsilon is out of range.

    References
    ----------
    [GV16] (Geng & Viswanath); restated in Paper B [PS22] (Pagh & Stausholm), Lemma 27.
    """

    _finite_loss = True

    def __init__(self, epsilon: float, *, sensitivity: float = 1.0, gamma: float | None = None) -> None:
        self.epsilon = _staircase_epsilon(epsilon)
        self.sensitivity = scale_param("sensitivity", sensitivity)
        derived_scale(
            "sensitivity / epsilon", self.sensitivity / self.epsilon, epsilon=self.epsilon, sensitivity=self.sensitivity
        )
        if gamma is None:
            gamma = self.optimal_gamma(self.epsilon, criterion="abs")
        self.gamma = in_open_interval("gamma", gamma, 0.0, 1.0)
        b = math.exp(-self.epsilon)
        self._b = b
        self._a = -math.expm1(-self.epsilon) / (2 * self.sensitivity * (self.gamma + (1 - self.gamma) * b))

    @staticmethod
    def optimal_gamma(epsilon: float, *, criterion: str = "abs") -> float:
        """gamma minimising E|Z| ("abs": 1/(1+e^(eps/2))) or the variance ("var").

        Parameters
        ----------
        epsilon : float
            Privacy parameter, in [1e-100, 200].
        criterion : {"abs", "var"}, optional
            What to minimise (default "abs").

        Returns
        -------
        float

        Raises
        ------
        TypeError
            If ``criterion`` is not a string or ``epsilon`` is not a real number.
        ValueError
            If ``criterion`` is unknown or ``epsilon`` is out of range.

        References
        ----------
        [GV16] (Geng & Viswanath).
        """
        epsilon = _staircase_epsilon(epsilon)
        if not isinstance(criterion, str):
            raise TypeError(f'criterion must be "abs" or "var", got {type(criterion).__name__}')
        if criterion == "abs":
            return float(special.expit(-epsilon / 2))
        if criterion == "var":
            # [GV16]: gamma = -b/(1-b) + (b - 2b^2 + 2b^4 - b^5)^(1/3) / (2^(1/3) (1-b)^2), b = e^-eps.
            # The cubic is b (1-b)^3 (1+b), so gamma = ((b (1+b) / 2)^(1/3) - b) / (1-b)
            # = expm1(E) / expm1(eps) with E = eps/2 + log(cosh(eps/2)) / 3, free of cancellation
            # (cosh(x) = 1 + 2 sinh(x/2)^2)
            e = epsilon / 2 + math.log1p(2 * math.sinh(epsilon / 4) ** 2) / 3
            return math.expm1(e) / math.expm1(epsilon)
        raise ValueError(f'criterion must be "abs" or "var", got {criterion!r}')

    def _steps(self, x: FloatArray) -> FloatArray:
        """Number of e^-eps steps below the peak at |x|: floor(|x|/D + 1 - gamma)."""
        return np.floor(np.abs(x) / self.sensitivity + 1 - self.gamma)

    def _logpdf(self, x: FloatArray) -> FloatArray:
        with np.errstate(invalid="ignore"):
            out = math.log(self._a) - self.epsilon * self._steps(x)
        return np.where(np.isinf(x), -np.inf, out)

    def _sf_upper(self, x: FloatArray) -> FloatArray:
        """P(Z > x) for x >= 0 as a sum of positive terms."""
        D, g, a, b = self.sensitivity, self.gamma, self._a, self._b
        with np.errstate(invalid="ignore", over="ignore"):
            k = np.floor(x / D)
            r = np.clip(x - k * D, 0.0, D)  # k * D may round past x far out
            inner = a * np.maximum(g * D - r, 0.0) + a * b * (D - np.maximum(r, g * D)) + b / 2
            weight = np.exp(-self.epsilon * k)
            out = np.where(weight > 0, weight * inner, 0.0)
        return np.where(np.isinf(x), 0.0, out)

    def _sf(self, x: FloatArray) -> FloatArray:
        upper = self._sf_upper(np.abs(x))
        return np.where(x >= 0, upper, 1.0 - upper)

    def _isf_upper(self, q: FloatArray) -> FloatArray:
        D, g, a, b, eps = self.sensitivity, self.gamma, self._a, self._b, self.epsilon
        with np.errstate(divide="ignore", invalid="ignore"):
            k = np.floor(np.log(2 * q) / -eps)
            k = np.where(np.isfinite(k), np.maximum(k, 0.0), 0.0)
            scaled = np.exp(np.log(q) + eps * k)  # q e^(eps k) without overflow
            scaled = np.clip(scaled, b / 2, 0.5)
            s_mid = a * b * (1 - g) * D + b / 2
            r = np.where(scaled >= s_mid, g * D - (scaled - s_mid) / a, D - (scaled - b / 2) / (a * b))
            out = k * D + np.clip(r, 0.0, D)
        return np.where(q > 0, out, np.inf)

    def _sample(self, size: Size, rng: np.random.Generator) -> FloatOrArray:
        b, g, D = self._b, self.gamma, self.sensitivity
        sign = rng.choice(np.array([-1.0, 1.0]), size=size)
        period = rng.geometric(1 - b, size=size) - 1.0
        in_second = rng.random(size) >= g / (g + (1 - g) * b)
        u = rng.random(size)
        offset = np.where(in_second, g + (1 - g) * u, g * u)
        return sign * (period + offset) * D

    def _a_times_sums(self) -> tuple[float, float, float]:
        """a s0, a s1, a s2 for sensitivity 1, with s_k = sum_j j^k b^j (each formed without overflow)."""
        g, b = self.gamma, self._b
        one_minus_b = -math.expm1(-self.epsilon)
        c = 2 * (g + (1 - g) * b)  # a = (1 - b) / c
        return 1 / c, b / (c * one_minus_b), b * (1 + b) / (c * one_minus_b * one_minus_b)

    def mean_abs(self) -> float:
        """E|Z|, in closed form.

        Returns
        -------
        float
        """
        g, b = self.gamma, self._b
        as0, as1, _ = self._a_times_sums()
        return self.sensitivity * 2 * ((g + b * (1 - g)) * as1 + (g**2 + b * (1 - g**2)) * as0 / 2)

    def var(self) -> float:
        """Var Z, in closed form.

        Returns
        -------
        float
        """
        g, b = self.gamma, self._b
        as0, as1, as2 = self._a_times_sums()
        inner = 3 * (g + b * (1 - g)) * as2 + 3 * (g**2 + b * (1 - g**2)) * as1 + (g**3 + b * (1 - g**3)) * as0
        return self.sensitivity**2 * 2 / 3 * inner

    def _privacy_loss(self, d: FloatArray) -> FloatArray:
        return self.epsilon * np.ceil(d / self.sensitivity)

    def _scale_hint(self) -> float:
        return self.sensitivity

    def _repr_args(self) -> str:
        return f"epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r}, gamma={self.gamma!r}"


def _staircase_epsilon(epsilon: object) -> float:
    return in_interval("epsilon", positive("epsilon", epsilon), *STAIRCASE_EPSILON)
