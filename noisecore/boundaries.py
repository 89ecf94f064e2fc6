"""Time-uniform privacy boundaries for the Brownian mechanism (paper A, Theorem 3.6).

A delta-privacy boundary psi bounds the realized privacy loss of the Brownian mechanism at
every release time simultaneously, with probability at least 1 - delta. Releasing at time t
therefore costs psi(t) ex post; ``calibrated_time(epsilon)`` is the least time (noise variance)
whose boundary value is at most epsilon. The boundary must be fixed before the first
release: re-optimising it along the way voids the time-uniform guarantee.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from scipy import optimize, special

from ._base import FloatArray, FloatOrArray, Immutable, _output
from ._validation import SCALE_MAX, SCALE_MIN, derived_scale, in_open_interval, positive, positive_array, real_array
from ._validation import scale as scale_param
from .distributions import Gaussian

__all__ = [
    "LinearBoundary",
    "MixtureBoundary",
    "PrivacyBoundary",
    "gaussian_composition_epsilon",
    "gaussian_pdp_variance",
    "gaussian_variance",
]


def _positive_times(name: str, value: object) -> FloatArray:
    """Times in [1e-100, 1e100], or inf (the limit as t grows)."""
    arr = real_array(name, value, allow_inf=True)
    if (arr <= 0).any():
        raise ValueError(f"{name} must be > 0")
    if ((arr < SCALE_MIN) | ((arr > SCALE_MAX) & ~np.isinf(arr))).any():
        raise ValueError(f"{name} must be in [{SCALE_MIN:g}, {SCALE_MAX:g}] or inf")
    return arr


class PrivacyBoundary(Immutable):
    """Common interface: ``epsilon(t)`` (vectorised) and its inverse ``calibrated_time``. Immutable.

    Subclasses implement ``_psi`` and ``_time_for`` (and ``floor`` where psi has a positive limit).

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Definition 3.5 and Theorem 3.6.
    """

    delta: float
    sensitivity: float
    _floor_note = ""

    def epsilon(self, t: npt.ArrayLike) -> FloatOrArray:
        """Boundary value psi(t): the ex-post epsilon of releasing at time (variance) t.

        Parameters
        ----------
        t : array_like
            Times in [1e-100, 1e100], or inf (the limit as t grows).

        Returns
        -------
        float or numpy.ndarray
            psi(t).

        Raises
        ------
        TypeError
            If ``t`` is not real.
        ValueError
            If ``t`` contains NaN or a time <= 0 or outside [1e-100, 1e100] (other than inf).
        """
        arr = _positive_times("t", t)
        return _output(self._psi(arr), arr)

    def __call__(self, t: npt.ArrayLike) -> FloatOrArray:
        return self.epsilon(t)

    def floor(self) -> float:
        """inf_t psi(t): targets at or below it are unreachable.

        Returns
        -------
        float
        """
        return 0.0

    def _psi(self, t: FloatArray) -> FloatArray:
        """psi at validated times t > 0 (inf allowed)."""
        raise NotImplementedError

    def _time_for(self, eps: FloatArray) -> FloatArray:
        """The least t with psi(t) <= eps, at validated eps above the floor."""
        raise NotImplementedError

    def calibrated_time(self, epsilon: npt.ArrayLike) -> FloatOrArray:
        """Least t with psi(t) <= epsilon (vectorised; psi decreases in t). Times lie in
        [1e-100, 1e100]: an epsilon whose time falls outside is an error naming it.

        Parameters
        ----------
        epsilon : array_like
            Target ex-post epsilons, finite and above ``floor()``.

        Returns
        -------
        float or numpy.ndarray
            The least time (noise variance) t with psi(t) <= epsilon.

        Raises
        ------
        TypeError
            If ``epsilon`` is not real.
        ValueError
            If ``epsilon`` is not finite or is at or below ``floor()``, or its time falls outside
            [1e-100, 1e100].
        """
        eps = real_array("epsilon", epsilon)
        if (eps <= self.floor()).any():
            raise ValueError(
                f"epsilon must be > {self.floor():g} (this boundary's limit as t -> infinity{self._floor_note}), "
                f"got {eps.min():g}"
            )
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            out = np.asarray(self._time_for(eps), dtype=float)
        bad = ~((out >= SCALE_MIN) & (out <= SCALE_MAX))
        if bad.any():
            raise ValueError(
                f"epsilon = {eps[bad].flat[0]:g} needs a time outside [{SCALE_MIN:g}, {SCALE_MAX:g}] "
                f"on this boundary (psi(1e100) = {float(self._psi(np.array(SCALE_MAX))):g}, "
                f"psi(1e-100) = {float(self._psi(np.array(SCALE_MIN))):g})"
            )
        return _output(out, eps)


MIXTURE_RATIO = (1e-40, 1e40)  # epsilon / sensitivity that MixtureBoundary.calibrated accepts


class MixtureBoundary(PrivacyBoundary):
    """psi_M(t) = D^2/(2t) + (D/t) sqrt(2 (t + rho) log(sqrt((t + rho)/rho) / delta)).

    D is the l2 sensitivity. For delta < e^(-1/2) psi_M decreases strictly from +inf to 0.

    Parameters
    ----------
    delta : float
        Failure probability, in (0, 1).
    rho : float
        Mixture parameter, in [1e-100, 1e100].
    sensitivity : float, optional
        The l2 sensitivity D, in [1e-100, 1e100] (default 1).

    Raises
    ------
    TypeError
        If an argument is not a real number.
    ValueError
        If an argument is not finite or out of range.

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Theorem 3.6 (mixture boundary);
    [HRMS21] (Howard, Ramdas, McAuliffe & Sekhon) for the mixture bound.
    """

    def __init__(self, delta: float, rho: float, *, sensitivity: float = 1.0) -> None:
        self.delta = in_open_interval("delta", delta, 0.0, 1.0)
        self.rho = scale_param("rho", rho)
        self.sensitivity = scale_param("sensitivity", sensitivity)

    def _psi(self, t: FloatArray) -> FloatArray:
        D, rho = self.sensitivity, self.rho
        with np.errstate(over="ignore", invalid="ignore"):
            log_term = -math.log(self.delta) + 0.5 * np.log1p(t / rho)
            out = D * D / (2 * t) + D / t * np.sqrt(2 * (t + rho) * log_term)
        return np.where(np.isinf(t), 0.0, out)

    def _time_for(self, eps: FloatArray) -> FloatArray:
        """Bracketed Newton in u = log t on log psi(e^u) = log eps (psi is smooth, decreasing)."""
        D, rho, L0 = self.sensitivity, self.rho, -math.log(self.delta)
        if self.delta >= math.exp(-0.5):
            return np.array([_least_time_scan(self._psi, e) for e in eps.ravel()]).reshape(eps.shape)
        target = np.log(eps)
        # bracket: psi(t) >= D^2/(2t) and psi(t) <= D^2/(2t) + D sqrt(2 (1 + rho/t) (L0 + t/(2 rho)) / t)
        lo = np.log(np.full(eps.shape, D * D / 2) / eps) - 1.0
        hi = np.log(np.maximum(4 * D * D / eps**2 * (L0 + 1) * 64, D * D / eps) + 16 * rho) + 1.0
        hi = np.maximum(hi, lo + 1)
        while True:
            bad = np.log(self._psi(np.exp(hi))) > target
            if not bad.any():
                break
            hi = np.where(bad, hi + 2.0, hi)
        u = 0.5 * (lo + hi)
        for _ in range(200):
            t = np.exp(u)
            psi = self._psi(t)
            g = np.log(psi) - target
            lo = np.where(g > 0, u, lo)
            hi = np.where(g > 0, hi, u)
            # d psi / dt by the chain rule, then Newton on log psi against u
            log_term = L0 + 0.5 * np.log1p(t / rho)
            root = np.sqrt(2 * (t + rho) * log_term)
            droot = (2 * log_term + 1.0) / (2 * root)
            dpsi = -D * D / (2 * t * t) - D * root / (t * t) + D * droot / t
            step = g / (dpsi * t / psi)
            new = u - step
            new = np.where((new <= lo) | (new >= hi) | ~np.isfinite(new), 0.5 * (lo + hi), new)
            if np.all(np.abs(new - u) <= 1e-15 * np.maximum(1.0, np.abs(u))):
                u = new
                break
            u = new
        return np.exp(u)

    @classmethod
    def calibrated(cls, epsilon: float, *, delta: float, sensitivity: float = 1.0) -> MixtureBoundary:
        """The rho minimising ``calibrated_time(epsilon)`` (bounded search over log rho).

        Parameters
        ----------
        epsilon : float
            Target ex-post epsilon, > 0.
        delta : float
            Failure probability, in (0, 1).
        sensitivity : float, optional
            The l2 sensitivity, in [1e-100, 1e100] (default 1).

        Returns
        -------
        MixtureBoundary

        Raises
        ------
        TypeError
            If an argument is not a real number.
        ValueError
            If an argument is out of range, epsilon / sensitivity lies outside [1e-40, 1e40], no rho
            in range gives a finite time for ``epsilon``, or the best rho falls outside [1e-100, 1e100].
        """
        epsilon = positive("epsilon", epsilon)
        delta = in_open_interval("delta", delta, 0.0, 1.0)
        D = scale_param("sensitivity", sensitivity)
        if not MIXTURE_RATIO[0] <= epsilon / D <= MIXTURE_RATIO[1]:
            raise ValueError(
                f"epsilon / sensitivity must be in [{MIXTURE_RATIO[0]:g}, {MIXTURE_RATIO[1]:g}] (so that the best "
                f"rho, near (sensitivity / epsilon)^2, lies in [1e-100, 1e100]), got epsilon = {epsilon:g}, "
                f"sensitivity = {D:g}"
            )
        given = {"epsilon": epsilon, "delta": delta, "sensitivity": D}
        scale = 2 * (math.log(D) - math.log(epsilon))
        # rho near D^2 / eps^2 (the time scale), kept inside the allowed range
        centre = min(max(scale, math.log(SCALE_MIN) + 25), math.log(SCALE_MAX) - 25)

        def cost(log_rho: float) -> float:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                t = cls(delta, math.exp(log_rho), sensitivity=D)._time_for(np.array([epsilon]))[0]
            return float(np.log(t)) if np.isfinite(t) and t > 0 else math.inf

        grid = centre + np.linspace(-25, 25, 101)
        values = [cost(v) for v in grid]
        i = int(np.argmin(values))
        if not np.isfinite(values[i]):
            derived_scale("the time for epsilon", math.inf, **given)
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
        res = optimize.minimize_scalar(cost, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
        best = res.x if res.fun <= values[i] else grid[i]
        return cls(delta, derived_scale("rho", math.exp(best), **given), sensitivity=D)

    def __repr__(self) -> str:
        return f"MixtureBoundary(delta={self.delta!r}, rho={self.rho!r}, sensitivity={self.sensitivity!r})"


class LinearBoundary(PrivacyBoundary):
    """psi_L(t) = (D/t)(D/2 + b) + D a with b = log(1/delta) / (2a); D is the l2 sensitivity.

    Decreases from +inf to the floor D a; the inverse is closed form.

    Parameters
    ----------
    delta : float
        Failure probability, in (0, 1).
    a : float
        Slope, in [1e-100, 1e100].
    sensitivity : float, optional
        The l2 sensitivity D, in [1e-100, 1e100] (default 1).

    Raises
    ------
    TypeError
        If an argument is not a real number.
    ValueError
        If an argument is not finite or out of range.

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Theorem 3.6 (linear boundary);
    [HRMS20] (Howard, Ramdas, McAuliffe & Sekhon) for the line-crossing bound.
    """

    def __init__(self, delta: float, a: float, *, sensitivity: float = 1.0) -> None:
        self.delta = in_open_interval("delta", delta, 0.0, 1.0)
        self.a = scale_param("a", a)
        self.sensitivity = scale_param("sensitivity", sensitivity)
        self.b = -math.log(self.delta) / (2 * self.a)

    _floor_note = " = sensitivity * a"

    def floor(self) -> float:
        """inf_t psi(t) = sensitivity * a: targets at or below it are unreachable.

        Returns
        -------
        float
        """
        return self.sensitivity * self.a

    def _psi(self, t: FloatArray) -> FloatArray:
        D = self.sensitivity
        with np.errstate(divide="ignore"):
            return D / t * (D / 2 + self.b) + D * self.a

    def _time_for(self, eps: FloatArray) -> FloatArray:
        D = self.sensitivity
        return D * (D / 2 + self.b) / (eps - D * self.a)

    @classmethod
    def calibrated(cls, epsilon: float, *, delta: float, sensitivity: float = 1.0) -> LinearBoundary:
        """The a minimising ``calibrated_time(epsilon)``: a = (sqrt(4c^2 + 2 c eps) - 2c) / D, c = log(1/delta)/2.

        (Setting the derivative of D (D/2 + c/a) / (eps - D a) to zero gives D^2 a^2 / 2 + 2 c D a - c eps = 0.)

        Parameters
        ----------
        epsilon : float
            Target ex-post epsilon, > 0.
        delta : float
            Failure probability, in (0, 1).
        sensitivity : float, optional
            The l2 sensitivity, in [1e-100, 1e100] (default 1).

        Returns
        -------
        LinearBoundary

        Raises
        ------
        TypeError
            If an argument is not a real number.
        ValueError
            If an argument is out of range or ``a`` falls outside [1e-100, 1e100].
        """
        epsilon = positive("epsilon", epsilon)
        delta = in_open_interval("delta", delta, 0.0, 1.0)
        D = scale_param("sensitivity", sensitivity)
        c = -math.log(delta) / 2
        # the same root without cancellation or overflow: eps / (D (sqrt(1 + eps / 2c) + 1))
        a = epsilon / (math.sqrt(1 + epsilon / (2 * c)) + 1) / D
        return cls(delta, derived_scale("a", a, epsilon=epsilon, delta=delta, sensitivity=D), sensitivity=D)

    def __repr__(self) -> str:
        return f"LinearBoundary(delta={self.delta!r}, a={self.a!r}, sensitivity={self.sensitivity!r})"


def _least_time_scan(psi: Callable[[FloatArray], FloatArray], eps: float, lo: float = 1e-12, hi: float = 1e12) -> float:
    """Least t with psi(t) <= eps by a log-grid scan and bisection (for non-monotone psi)."""
    grid = np.geomspace(lo, hi, 4001)
    ok = np.nonzero(psi(grid) <= eps)[0]
    if ok.size == 0:
        raise ValueError(f"no time in [{lo:g}, {hi:g}] reaches epsilon {eps:g}")
    i = ok[0]
    if i == 0:
        return float(grid[0])
    left, right = grid[i - 1], grid[i]
    for _ in range(200):
        mid = math.sqrt(left * right)
        if psi(np.array([mid]))[0] <= eps:
            right = mid
        else:
            left = mid
    return float(right)


def gaussian_variance(epsilon: npt.ArrayLike, *, delta: float, sensitivity: float = 1.0) -> FloatOrArray:
    """Variance a single Gaussian release needs for (epsilon, delta)-DP (exact, Balle & Wang).

    Compare with ``boundary.calibrated_time(epsilon)``: the extra variance is the price of a
    guarantee that holds uniformly over all release times.

    Parameters
    ----------
    epsilon : array_like
        Privacy parameters, each > 0 (an array is solved for all at once).
    delta : float
        In (0, 1).
    sensitivity : float, optional
        The l2 sensitivity, in [1e-100, 1e100] (default 1).

    Returns
    -------
    float or numpy.ndarray
        sigma^2 of ``Gaussian.calibrated(eps, delta=delta, sensitivity=sensitivity)`` for each eps.

    Raises
    ------
    TypeError
        If an argument is not a real number.
    ValueError
        If an argument is out of range or sigma falls outside [1e-100, 1e100].

    References
    ----------
    [BW18] (Balle & Wang).
    """
    eps = positive_array("epsilon", epsilon)
    delta = in_open_interval("delta", delta, 0.0, 1.0)
    sigma = Gaussian._analytic_sigmas(eps, delta, scale_param("sensitivity", sensitivity))
    return _output(sigma * sigma, eps)


def gaussian_pdp_variance(epsilon: npt.ArrayLike, *, delta: float, sensitivity: float = 1.0) -> FloatOrArray:
    """Variance a single Gaussian release needs for (epsilon, delta)-*probabilistic* DP.

    The loss of one release at variance T is D^2/(2T) + (D/T) W_T with W_T ~ N(0, T)
    (paper A, Theorem 3.4), so P(loss > epsilon) = delta exactly when
    D^2/(2T) + D z / sqrt(T) = epsilon, z = Phi^{-1}(1 - delta). With u = D / sqrt(T):
    u = sqrt(z^2 + 2 epsilon) - z. This is the like-for-like comparison for a privacy
    boundary (which is a probabilistic guarantee); ``gaussian_variance`` meets plain
    (epsilon, delta)-DP, a weaker requirement, so it needs less variance.

    Parameters
    ----------
    epsilon : array_like
        Privacy parameters, each > 0.
    delta : float
        In (0, 1).
    sensitivity : float, optional
        The l2 sensitivity D, in [1e-100, 1e100] (default 1).

    Returns
    -------
    float or numpy.ndarray
        T = (D / u)^2.

    Raises
    ------
    TypeError
        If an argument is not a real number.
    ValueError
        If an argument is out of range or the standard deviation D / u falls outside
        [1e-100, 1e100].

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Theorem 3.4.
    """
    eps = positive_array("epsilon", epsilon)
    delta = in_open_interval("delta", delta, 0.0, 1.0)
    D = scale_param("sensitivity", sensitivity)
    z = -float(special.ndtri(delta))
    root = np.hypot(z, np.sqrt(2 * eps))  # sqrt(z^2 + 2 eps) without overflow
    u = eps / ((root + z) / 2) if z > 0 else root - z  # = root - z, without cancellation
    with np.errstate(divide="ignore"):
        sd = np.where(u > 0, D / u, math.inf)
    bad = np.flatnonzero(~((sd >= SCALE_MIN) & (sd <= SCALE_MAX)))
    if bad.size:
        k = bad[0]
        derived_scale(
            "the standard deviation", float(sd.flat[k]), epsilon=float(eps.flat[k]), delta=delta, sensitivity=D
        )
    return _output(sd * sd, eps)


def gaussian_pdp_epsilon(variance: npt.ArrayLike, *, delta: float, sensitivity: float = 1.0) -> FloatOrArray:
    """Epsilon of one Gaussian release at each variance, as (epsilon, delta)-*probabilistic* DP.

    The inverse of ``gaussian_pdp_variance``: one release at variance T has privacy loss
    N(D^2/(2T), D^2/T) against a neighbour at distance D (paper A, Theorem 3.4), so it exceeds
    epsilon = D^2/(2T) + D z / sqrt(T), z = Phi^{-1}(1 - delta), with probability delta (clipped at
    0 where delta > 1/2). This is what a release costs when the moment of stopping is fixed before
    anything is released: the earlier, noisier releases of a Brownian rewind are then a
    post-processing of the last one (paper A, the Markov property of Brownian motion).

    Parameters
    ----------
    variance : array_like
        Noise variances T, each in [1e-100, 1e100].
    delta : float
        In (0, 1).
    sensitivity : float, optional
        The l2 sensitivity D, in [1e-100, 1e100] (default 1).

    Returns
    -------
    float or numpy.ndarray
        Epsilon (>= 0), one per variance.

    Raises
    ------
    TypeError
        If an argument is not a real number.
    ValueError
        If an argument is out of range.

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Theorem 3.4.
    """
    times = _positive_times("variance", variance)
    if np.isinf(times).any():
        raise ValueError("variance must be finite")
    delta = in_open_interval("delta", delta, 0.0, 1.0)
    D = scale_param("sensitivity", sensitivity)
    mu = D / np.sqrt(times)
    z = -float(special.ndtri(delta))
    eps = np.maximum(mu * mu / 2 + mu * z, 0.0)
    if not np.isfinite(eps).all():
        raise ValueError("variance and sensitivity give an epsilon that overflows; use larger variances")
    return _output(eps, times)


def gaussian_composition_epsilon(
    variances: npt.ArrayLike,
    *,
    delta: float,
    sensitivity: float = 1.0,
    guarantee: str = "pdp",
    cumulative: bool = False,
) -> FloatOrArray:
    """Epsilon of independent Gaussian releases at the given variances, composed exactly.

    Each release at variance T_m has privacy loss N(D^2/(2 T_m), D^2/T_m) against a neighbour
    at distance D, and independent losses add: the composition is one Gaussian mechanism with
    mu^2 = sum_m D^2 / T_m. Its probabilistic-DP epsilon at delta is mu^2/2 + mu z with
    z = Phi^{-1}(1 - delta) (the like-for-like rival of a privacy boundary); its
    (epsilon, delta)-DP epsilon solves Balle & Wang's exact profile at that mu.

    Parameters
    ----------
    variances : array_like
        Noise variances T_m of the releases, in [1e-100, 1e100]; at least one.
    delta : float
        In (0, 1).
    sensitivity : float, optional
        The l2 sensitivity D, in [1e-100, 1e100] (default 1).
    guarantee : {"pdp", "dp"}, optional
        Probabilistic DP (default) or (epsilon, delta)-DP.
    cumulative : bool, optional
        If True, return the epsilon of the first n releases for every n (default False: all).

    Returns
    -------
    float or numpy.ndarray
        The epsilon (>= 0) of the composition, or one per prefix if ``cumulative``.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is out of range or ``guarantee`` is unknown.

    References
    ----------
    [BW18] (Balle & Wang), Theorem 8; paper A [WWRR22], Theorem 3.4 (the loss of one release).
    """
    times = _positive_times("variances", variances)
    if times.ndim != 1 or times.size == 0 or np.isinf(times).any():
        raise ValueError("variances must be a non-empty 1-d array of finite variances")
    delta = in_open_interval("delta", delta, 0.0, 1.0)
    D = scale_param("sensitivity", sensitivity)
    if not isinstance(guarantee, str) or guarantee not in ("pdp", "dp"):
        raise ValueError(f'guarantee must be "pdp" or "dp", got {guarantee!r}')
    if not isinstance(cumulative, bool):
        raise TypeError(f"cumulative must be a bool, got {type(cumulative).__name__}")
    # mu^2 = D^2 sum 1/T, summed in units of D^2 / T so no term overflows
    mu2 = np.cumsum((D / np.sqrt(times)) ** 2) if cumulative else np.array([np.sum((D / np.sqrt(times)) ** 2)])
    mu = np.sqrt(mu2)
    z = -float(special.ndtri(delta))
    pdp = np.maximum(mu2 / 2 + mu * z, 0.0)
    if not np.isfinite(pdp).all():
        raise ValueError("variances and sensitivity give a composed epsilon that overflows; use larger variances")
    if guarantee == "pdp":
        out = pdp
    else:
        out = np.array([_gaussian_dp_epsilon(float(m), float(p), delta) for m, p in zip(mu, pdp, strict=True)])
    return out if cumulative else float(out[0])


def _gaussian_dp_epsilon(mu: float, upper: float, delta: float) -> float:
    """Least epsilon >= 0 with delta_mu(epsilon) <= delta (the pDP epsilon ``upper`` is one such)."""
    log_delta = math.log(delta)

    def excess(eps: float) -> float:
        return max(float(Gaussian._log_delta(eps, 1.0 / mu, 1.0)), -5000.0) - log_delta

    if excess(0.0) <= 0:
        return 0.0
    hi = max(upper, 1e-300)
    while excess(hi) > 0:  # pDP implies DP, so this loop ends at once; kept for rounding
        hi *= 2
    return float(optimize.brentq(excess, 0.0, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps))
