"""The Arete distribution: Gamma - Gamma + Laplace noise (Pagh & Stausholm).

Infinitely divisible, continuous, symmetric and unimodal, with error decreasing
exponentially in epsilon in the low-privacy regime.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt

from ._arete_calibration import calibrate
from ._arete_quadrature import AreteKernel, Mesh
from ._base import FloatArray, FloatOrArray, NoiseDistribution, Size, _output, check_sensitivity
from ._validation import (
    MAX_ELEMENTS,
    SeedLike,
    bounded_int,
    generator,
    in_interval,
    positive,
    real_array,
    sample_size,
    value_text,
)

__all__ = ["Arete", "AreteShare"]

MAX_SHARES = 2**53  # share counts a float holds exactly: each share's Gamma shapes alpha / n and 1 / n
EVALUATION_CHUNK = 2**16  # points per quadrature mesh (about 23 MB at 350 bytes a point)


@dataclass(frozen=True, slots=True)
class AreteShare:
    """One of n i.i.d. shares whose sum is Arete(alpha, theta, lam) (paper B, Lemma 10).

    A share is G1 - G2 + E1 - E2 with G_i ~ Gamma(alpha/n, theta), E_i ~ Gamma(1/n, lam).
    The parameters are validated as for ``Arete`` (and ``n`` is an integer in [1, 2**53]).

    Parameters
    ----------
    alpha, theta, lam : float
        Parameters of the total Arete, as for ``Arete``.
    n : int
        Number of shares, 1 to 2**53 (``MAX_SHARES``).

    Raises
    ------
    TypeError
        If a parameter is not a real number or ``n`` is not an integer.
    ValueError
        If a parameter lies outside the Arete's verified range or ``n`` is outside [1, 2**53].

    References
    ----------
    Paper B [PS22] (Pagh & Stausholm), Lemma 10.
    """

    alpha: float
    theta: float
    lam: float
    n: int

    def __post_init__(self) -> None:
        alpha, theta, lam = _check_params(self.alpha, self.theta, self.lam)
        object.__setattr__(self, "alpha", alpha)
        object.__setattr__(self, "theta", theta)
        object.__setattr__(self, "lam", lam)
        object.__setattr__(self, "n", bounded_int("n", self.n, 1, MAX_SHARES))

    def sample(self, size: int | tuple[int, ...] | list[int] | None = None, *, rng: SeedLike = None) -> FloatOrArray:
        """Draw shares with a numpy Generator.

        Parameters
        ----------
        size : None, int or tuple of int, optional
            None for one float, a count or a shape for an array.
        rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
            Seed or Generator (passed to ``numpy.random.default_rng``).

        Returns
        -------
        float or numpy.ndarray

        Raises
        ------
        TypeError
            If a count in ``size`` is not an integer, or ``rng`` is not a valid seed (from numpy).
        ValueError
            If a count in ``size`` is negative, or ``rng`` is a negative seed (from numpy).
        """
        checked = sample_size("size", size, per_item=4)
        gen = generator(rng)
        g = self.alpha / self.n
        e = 1.0 / self.n
        return (
            gen.gamma(g, self.theta, checked)
            - gen.gamma(g, self.theta, checked)
            + gen.gamma(e, self.lam, checked)
            - gen.gamma(e, self.lam, checked)
        )

    def characteristic_function(self, s: npt.ArrayLike) -> FloatOrArray:
        """E[e^{isZ}] = (1 + theta^2 s^2)^(-alpha/n) (1 + lam^2 s^2)^(-1/n) of one share (real).

        Parameters
        ----------
        s : array_like
            Points; +-inf allowed, NaN not.

        Returns
        -------
        float or numpy.ndarray

        Raises
        ------
        TypeError, ValueError
            If ``s`` is not real or contains NaN.
        """
        arr = real_array("s", s, allow_inf=True)
        return _output(_log_cf_exp(arr, self.theta, self.lam, self.alpha / self.n, 1.0 / self.n), arr)


class Arete(NoiseDistribution):
    """Arete(alpha, theta, lam): X1 - X2 + Y with X_i ~ Gamma(shape alpha, scale theta), Y ~ Laplace(lam).

    Characteristic function (1 + theta^2 s^2)^(-alpha) / (1 + lam^2 s^2). The density has
    no elementary closed form; ``pdf``/``logpdf``/``sf`` are computed to about 1e-12
    relative accuracy by exact quadrature of the Bessel-K form of the Gamma - Gamma part
    against the Laplace kernel (see ``noisecore._arete_quadrature``).

    Parameters
    ----------
    alpha : float
        Gamma shape, in [1e-200, 1].
    theta : float
        Gamma scale, in [1e-100, 1e100].
    lam : float
        Laplace scale, in [1e-100, 1e100], with theta / lam in [1e-16, 1e16].

    Raises
    ------
    TypeError
        If a parameter is not a real number.
    ValueError
        If a parameter is not finite or <= 0, or lies outside the verified range above.

    References
    ----------
    Paper B [PS22] (Pagh & Stausholm), Definition 1; Lemma 2 (symmetric, decreasing in |t|).
    """

    def __init__(self, alpha: float, theta: float, lam: float) -> None:
        self.alpha, self.theta, self.lam = _check_params(alpha, theta, lam)
        # the kernel works in units of mu = max(theta, lam) (the density is scale-covariant)
        self._unit = max(self.theta, self.lam)
        self._kernel = AreteKernel(self.alpha, self.theta / self._unit, self.lam / self._unit)

    @classmethod
    def from_lemma3(cls, epsilon: float, *, sensitivity: float = 1.0) -> Arete:
        """Paper B, Lemma 3: alpha = e^(-eps/4), theta = 4 sensitivity/eps, lam = e^(-eps/4).

        The lemma proves epsilon-DP for sensitivity >= 2/e and eps >= 20 + 4 ln(sensitivity);
        outside that range the parameters are still returned (check ``privacy_loss``).
        The guarantee is loose: the worst-case loss ``privacy_loss(sensitivity)`` (a numerical
        supremum over t, checked against mpmath in the tests) is about 71-80% of the nominal
        epsilon over eps 20-40 and sensitivity 1-10.

        Parameters
        ----------
        epsilon : float
            Privacy parameter, > 0.
        sensitivity : float, optional
            The query's sensitivity, > 0 (default 1).

        Returns
        -------
        Arete

        Raises
        ------
        TypeError
            If ``epsilon`` or ``sensitivity`` is not a real number.
        ValueError
            If ``epsilon`` or ``sensitivity`` is not finite or <= 0, or the parameters lie outside
            the Arete's verified range.

        References
        ----------
        Paper B [PS22] (Pagh & Stausholm), Lemma 3 (parameters from its proof, Section 4.3).
        """
        epsilon = positive("epsilon", epsilon)
        sensitivity = check_sensitivity(sensitivity)
        alpha = math.exp(-epsilon / 4)
        try:
            return cls(alpha, 4 * sensitivity / epsilon, alpha)
        except ValueError as exc:
            raise ValueError(
                f"epsilon = {epsilon!r} (sensitivity {sensitivity!r}) gives Lemma 3 parameters "
                f"outside the Arete's verified range: {exc}"
            ) from None

    @classmethod
    def calibrated(cls, epsilon: float, *, sensitivity: float = 1.0, objective: str = "abs") -> Arete:
        """The Arete minimising E|Z| ("abs") or the variance ("var") subject to
        ``privacy_loss(sensitivity) <= epsilon`` (a numerical supremum over t: a grid search, local
        refinement and the tail limit, checked against mpmath in the tests) (see ``noisecore._arete_calibration``).

        Deterministic. For small epsilon the optimum approaches Laplace(sensitivity/epsilon)
        (alpha -> 0); it need not beat Laplace there.

        Parameters
        ----------
        epsilon : float
            Privacy parameter, in [1e-5, 50] (the paper's range is 0.5-40). Above about 54 the
            least-E|Z| Arete has alpha below the search's bound 1e-12 (its optimum moves as
            log alpha ~ -0.2 - epsilon / 2), so the range stops at 50.
        sensitivity : float, optional
            The query's sensitivity, > 0 (default 1), such that the scaled parameters stay in the
            Arete's verified range.
        objective : {"abs", "var"}, optional
            What to minimise (default "abs").

        Returns
        -------
        Arete

        Raises
        ------
        TypeError
            If ``epsilon`` or ``sensitivity`` is not a real number.
        ValueError
            If ``epsilon`` lies outside [1e-5, 50], ``sensitivity`` is not finite or <= 0,
            ``objective`` is unknown, or the scaled parameters lie outside the Arete's verified range.
        RuntimeError
            If no parameters could be found within epsilon (see ``noisecore._arete_calibration.calibrate``).

        References
        ----------
        Paper B [PS22] (Pagh & Stausholm): the Arete distribution. Its Lemma 3 gives parameters
        with a proven but loose guarantee; this search checks each result by its computed worst-case loss instead.
        """
        epsilon = in_interval("epsilon", epsilon, *CALIBRATION_EPSILONS)
        sensitivity = check_sensitivity(sensitivity)
        if not isinstance(objective, str):
            raise TypeError(f'objective must be "abs" or "var", got {type(objective).__name__}')
        if objective not in ("abs", "var"):
            raise ValueError(f'objective must be "abs" or "var", got {objective!r}')

        def argsup(alpha: float, theta: float, lam: float) -> tuple[float, float]:
            return _argsup_log_ratio(AreteKernel(alpha, theta, lam), 1.0)

        alpha, theta, lam = calibrate(epsilon, objective, argsup)
        try:
            return cls(alpha, theta * sensitivity, lam * sensitivity)
        except ValueError as exc:
            raise ValueError(
                f"sensitivity = {sensitivity:g} with epsilon = {epsilon:g} scales the calibrated Arete "
                f"out of its verified range: {exc}"
            ) from None

    @staticmethod
    def lemma3_applies(epsilon: float, *, sensitivity: float = 1.0) -> bool:
        """Whether (epsilon, sensitivity) lies in Lemma 3's stated range.

        Parameters
        ----------
        epsilon : float
            Privacy parameter, > 0.
        sensitivity : float, optional
            The query's sensitivity, > 0 (default 1).

        Returns
        -------
        bool
            sensitivity >= 2/e and epsilon >= 20 + 4 ln(sensitivity).

        Raises
        ------
        TypeError
            If ``epsilon`` or ``sensitivity`` is not a real number.
        ValueError
            If ``epsilon`` or ``sensitivity`` is not finite or <= 0.

        References
        ----------
        Paper B [PS22] (Pagh & Stausholm), Lemma 3.
        """
        epsilon = positive("epsilon", epsilon)
        sensitivity = check_sensitivity(sensitivity)
        return sensitivity >= 2 / math.e and epsilon >= 20 + 4 * math.log(sensitivity)

    # --- density ---------------------------------------------------------------
    def _logpdf(self, x: FloatArray) -> FloatArray:
        flat = np.abs(x).ravel() / self._unit
        out = np.full(flat.shape, -np.inf)
        finite = np.isfinite(flat)
        if finite.any():
            out[finite] = self._evaluate(flat[finite], want_sf=False) - math.log(self._unit)
        return out.reshape(np.shape(x))

    def _sf(self, x: FloatArray) -> FloatArray:
        flat = np.asarray(x, dtype=float).ravel()
        mag = np.abs(flat) / self._unit
        upper = np.zeros(flat.shape)
        finite = np.isfinite(mag)
        if finite.any():
            upper[finite] = self._evaluate(mag[finite], want_sf=True)
        out = np.where(flat >= 0, upper, 1.0 - upper)
        return out.reshape(np.shape(x))

    def _evaluate(self, t: FloatArray, *, want_sf: bool) -> FloatArray:
        """The kernel's log density (or sf) at finite t >= 0, in chunks of EVALUATION_CHUNK points.

        The mesh runs through every point and costs about 350 bytes a point, so a large array is
        evaluated in sorted runs: memory stays bounded and results agree with a single mesh to the
        quadrature's accuracy (about 1e-14 relative; arrays up to the chunk size are unchanged).
        """
        if t.size <= EVALUATION_CHUNK:
            return self._pick(self._kernel.evaluate(t, want_sf=want_sf), want_sf)
        order = np.argsort(t, kind="stable")
        out = np.empty(t.shape)
        for start in range(0, t.size, EVALUATION_CHUNK):
            run = order[start : start + EVALUATION_CHUNK]
            out[run] = self._pick(self._kernel.evaluate(t[run], want_sf=want_sf), want_sf)
        return out

    @staticmethod
    def _pick(evaluated: tuple[FloatArray, FloatArray | None, float], want_sf: bool) -> FloatArray:
        logpdf, sf, _ = evaluated
        if want_sf:
            assert sf is not None
            return sf
        return logpdf

    def _sample(self, size: Size, rng: np.random.Generator) -> FloatOrArray:
        return (
            rng.gamma(self.alpha, self.theta, size)
            - rng.gamma(self.alpha, self.theta, size)
            + rng.laplace(0.0, self.lam, size)
        )

    def characteristic_function(self, s: npt.ArrayLike) -> FloatOrArray:
        """E[e^{isZ}] = (1 + theta^2 s^2)^(-alpha) / (1 + lam^2 s^2) (real: Z is symmetric).

        Parameters
        ----------
        s : array_like
            Points; +-inf allowed, NaN not.

        Returns
        -------
        float or numpy.ndarray

        Raises
        ------
        TypeError, ValueError
            If ``s`` is not real or contains NaN.
        """
        arr = real_array("s", s, allow_inf=True)
        return _output(_log_cf_exp(arr, self.theta, self.lam, self.alpha, 1.0), arr)

    # --- moments -----------------------------------------------------------------
    def mean_abs(self) -> float:
        """E|Z| = E|X1 - X2| + 2 lam int_0^inf f_X(x) e^{-x/lam} dx (see ``AreteKernel.mean_abs``).

        Returns
        -------
        float
        """
        return self._unit * self._kernel.mean_abs()

    def var(self) -> float:
        """Var Z = 2 alpha theta^2 + 2 lam^2.

        Returns
        -------
        float
        """
        return 2 * self.alpha * self.theta**2 + 2 * self.lam**2

    # --- privacy ---------------------------------------------------------------
    def _privacy_loss(self, d: FloatArray) -> FloatArray:
        low = MIN_RELATIVE_DISTANCE * max(self.theta, self.lam)
        bad = (d > 0) & ((d < low) | (d > MAX_DISTANCE))
        if bad.any():
            # below, log f(t) - log f(t + d) is lost to rounding (relative error ~1e-16 mu / d)
            raise ValueError(
                f"distance must be 0 or in [{MIN_RELATIVE_DISTANCE:g} max(theta, lam), {MAX_DISTANCE:g}] = "
                f"[{low:g}, {MAX_DISTANCE:g}], got {d[bad].flat[0]:g}"
            )
        flat = d.ravel() / self._unit
        out = np.array([_sup_log_ratio(self._kernel, float(v)) if math.isfinite(v) else math.inf for v in flat])
        return out.reshape(d.shape)

    def _scale_hint(self) -> float:
        return max(self.theta, self.lam)

    # --- distributed noise ------------------------------------------------------
    def shares(self, n: int) -> AreteShare:
        """The share distribution for n parties (paper B, Lemma 10).

        Parameters
        ----------
        n : int
            Number of parties, 1 to 2**53 (``MAX_SHARES``).

        Returns
        -------
        AreteShare

        Raises
        ------
        TypeError
            If ``n`` is not an integer.
        ValueError
            If ``n`` is outside [1, 2**53].

        References
        ----------
        Paper B [PS22] (Pagh & Stausholm), Lemma 10.
        """
        return AreteShare(self.alpha, self.theta, self.lam, bounded_int("n", n, 1, MAX_SHARES))

    def sample_shares(
        self, n: int, *, size: int | tuple[int, ...] | list[int] | None = None, rng: SeedLike = None
    ) -> FloatArray:
        """Samples of n shares, shape ``size + (n,)``; each row sums to an Arete draw.

        Parameters
        ----------
        n : int
            Number of parties, 1 to 2**53 (``MAX_SHARES``).
        size : None, int or tuple of int, optional
            Number or shape of the Arete draws (default None: one draw, shape (n,)).
        rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
            Seed or Generator (passed to ``numpy.random.default_rng``).

        Returns
        -------
        numpy.ndarray
            Shape ``size + (n,)``.

        Raises
        ------
        TypeError
            If ``n`` or a count in ``size`` is not an integer.
        ValueError
            If ``n`` < 1, a count in ``size`` is negative, or n times the draws exceeds 2.5e7.

        References
        ----------
        Paper B [PS22] (Pagh & Stausholm), Lemma 10.
        """
        share = self.shares(n)
        checked = sample_size("size", size)
        draws = 1 if checked is None else int(np.prod(checked, dtype=float))
        if draws * 4 * share.n > MAX_ELEMENTS:  # ints: a huge n cannot overflow
            raise ValueError(
                f"n and size ask for more than {MAX_ELEMENTS:g} values (4 per share and draw), "
                f"got n = {value_text(n)}, size = {value_text(size)}"
            )
        shape = (share.n,) if checked is None else (*np.atleast_1d(checked).tolist(), share.n)
        return cast(FloatArray, share.sample(shape, rng=rng))

    def _repr_args(self) -> str:
        return f"alpha={self.alpha!r}, theta={self.theta!r}, lam={self.lam!r}"


# epsilons Arete.calibrated accepts (its tests reach both ends). Above about 54 the least-E|Z| Arete has
# alpha below 1e-12 (log alpha ~ -0.2 - epsilon / 2), the search's bound: the result would no longer be
# the least-E|Z| Arete, so the range stops at 50, the app's largest epsilon
CALIBRATION_EPSILONS = (1e-5, 50.0)
MIN_RELATIVE_DISTANCE = 1e-6  # least distance / max(theta, lam) for privacy_loss (relative error <~1e-9 there)
MAX_DISTANCE = 1e300  # the search grid reaches 2 distance + 160 max(theta, lam)

# The verified domain (accuracy checked against mpmath oracles in tests/noisecore):
ALPHA_RANGE = (1e-200, 1.0)
SCALE_RANGE = (1e-100, 1e100)  # theta and lam
MIN_SCALE_RATIO = 1e-16  # min(theta, lam) / max(theta, lam)


def _check_params(alpha: object, theta: object, lam: object) -> tuple[float, float, float]:
    """Validated (alpha, theta, lam), or ValueError naming the parameter and its allowed range."""
    alpha = positive("alpha", alpha, allowed=f"in [{ALPHA_RANGE[0]:g}, {ALPHA_RANGE[1]:g}]")
    theta = positive("theta", theta, allowed=f"in [{SCALE_RANGE[0]:g}, {SCALE_RANGE[1]:g}]")
    lam = positive("lam", lam, allowed=f"in [{SCALE_RANGE[0]:g}, {SCALE_RANGE[1]:g}]")
    lo, hi = ALPHA_RANGE
    if not lo <= alpha <= hi:
        raise ValueError(f"alpha must be in [{lo:g}, {hi:g}] (the Arete's verified range), got {alpha!r}")
    lo, hi = SCALE_RANGE
    for name, value in (("theta", theta), ("lam", lam)):
        if not lo <= value <= hi:
            raise ValueError(f"{name} must be in [{lo:g}, {hi:g}] (the Arete's verified range), got {value!r}")
    if min(theta, lam) < MIN_SCALE_RATIO * max(theta, lam):
        raise ValueError(
            f"theta / lam must be in [{MIN_SCALE_RATIO:g}, {1 / MIN_SCALE_RATIO:g}] "
            f"(the Arete's verified range), got theta={theta!r}, lam={lam!r}"
        )
    return alpha, theta, lam


def _log_cf_exp(s: FloatArray, theta: float, lam: float, a: float, b: float) -> FloatArray:
    """(1 + theta^2 s^2)^(-a) (1 + lam^2 s^2)^(-b), in logs so large |s| gives 0, not overflow."""
    m = np.abs(s)
    with np.errstate(over="ignore"):
        log = -a * _log1p_square(theta * m) - b * _log1p_square(lam * m)
    return np.exp(log)


def _log1p_square(z: FloatArray) -> FloatArray:
    """log(1 + z^2) without overflow for large z."""
    big = z > 1e150
    safe = np.where(big, 1.0, z)
    return np.where(big, 2 * np.log(np.where(big, z, 1.0)), np.log1p(safe * safe))


_REFINE_MIN, _REFINE_MAX = 3, 6  # refinement rounds of the certificate's arg-sup search
# points per bracket and round (65 before issue 42: the certificates of 47 parameter sets moved by at most
# 1.4e-14 relative with 33)
_REFINE_POINTS = 33
# points of the certificate's geometric grid on the tail [2d + 10 mu, 2d + 160 mu]: there the
# log ratio varies on the scale of t and runs monotonically to its limit d/mu (the paper
# sets, Lemma 3 eps 20-40), so 16 points, 1.8x apart, would bracket any interior maximum
_TAIL_POINTS = 16


def _sup_log_ratio(kernel: AreteKernel, d: float) -> float:
    """sup_t log f(t) - log f(t + d) over all real t (d >= 0)."""
    return _argsup_log_ratio(kernel, d)[0]


def _argsup_log_ratio(kernel: AreteKernel, d: float) -> tuple[float, float]:
    """(supremum, a t attaining it or inf for the tail limit) of log f(t) - log f(t + d)."""
    mesh: list[Mesh | None] = []

    def logpdf(x: FloatArray) -> FloatArray:
        """The first call (the search grid) keeps its mesh; the refinement rounds, whose points
        lie between grid points, are carried from its nearest edges where its pieces allow."""
        if not mesh:
            values, kept = kernel.logpdf_with_mesh(x)
            mesh.append(kept)
            return values
        if mesh[0] is not None:
            values_near = kernel.logpdf_near(x, mesh[0])
            if values_near is not None:
                return values_near
        return kernel.evaluate(x)[0]

    return _argsup_for(logpdf, d, kernel.lam, kernel.theta, kernel.mu)


def _argsup_for(
    logpdf: Callable[[FloatArray], FloatArray], d: float, scale_a: float, scale_b: float, mu: float
) -> tuple[float, float]:
    """sup_t log f(t) - log f(t + d) for a symmetric density decreasing in |t| (``logpdf`` takes
    |t| >= 0), with characteristic scales ``scale_a``, ``scale_b`` and tail scale ``mu``.

    t >= -d/2 suffices. Away from 0 and -d the ratio is smooth on the scale mu (and |t|), so a
    coarse grid covers [-d/2, 2d + 10 mu]; finer grids resolve each scale at 0, where the density
    peaks; the best local maxima are then refined together (one density call per round). The
    limit d/mu of the tails is included, as the supremum may not be attained.
    """
    if d == 0:
        return 0.0, 0.0
    reach = 2 * d + 10 * mu
    # spacing d / k, so that t + d is on the grid too (half the density evaluations); for
    # d below 1/120 of the span the plain grid already resolves it
    k = round(120 * d / (reach + d / 2))
    if k >= 1:
        step = d / k
        coarse = -d / 2 + step * np.arange(math.ceil((reach + d / 2) / step) + 1)
    else:
        coarse = np.linspace(-d / 2, reach, 121)
    grids: list[npt.ArrayLike] = [
        coarse,
        reach + mu * np.geomspace(0.01, 150, _TAIL_POINTS),
        [0.0],  # the density peaks, often in a cusp, at 0
    ]
    # near the cusp the ratio is r(0) + g t - c t^(1 + 2 alpha): its maximum may sit at a tiny
    # t > 0 (1e-7 for paper B's eps = 6 set), which a geometric grid brackets within a factor 1.8
    small = min(scale_a, scale_b, d / 2)
    grids.append(np.geomspace(1e-13 * small, 0.1 * small, 48))
    if scale_a < 0.2 * mu:
        grids.append(np.linspace(max(-d / 2, -80 * scale_a), 80 * scale_a, 161))
    if scale_b < 0.2 * mu:
        grids.append(np.linspace(max(-d / 2, -8 * scale_b), 8 * scale_b, 81))
    t = np.unique(np.concatenate(grids))

    def ratio(ts: FloatArray) -> FloatArray:
        lp = logpdf(np.abs(np.concatenate([ts, ts + d])))
        return lp[: len(ts)] - lp[len(ts) :]

    values = ratio(t)
    best_i = int(np.argmax(values))
    best, best_t = float(values[best_i]), float(t[best_i])
    order = np.argsort(values)[::-1]
    peaks = [i for i in order[:80] if 0 < i < len(t) - 1 and values[i] >= values[i - 1] and values[i] >= values[i + 1]]
    lo = np.array([t[i - 1] for i in peaks[:5]])
    hi = np.array([t[i + 1] for i in peaks[:5]])
    frac = np.linspace(0.0, 1.0, _REFINE_POINTS)  # each round shrinks the brackets 16-fold
    # three rounds leave a smooth peak's value within ~1e-12 of the maximum (spacing 3e-5 of
    # the first bracket); further rounds only while the last one still gained more than 1e-13
    for rounds in range(_REFINE_MAX if len(lo) else 0):
        before = best
        local = lo[:, None] + (hi - lo)[:, None] * frac
        vals = ratio(local.ravel()).reshape(local.shape)
        j = np.argmax(vals, axis=1)
        rows = np.arange(len(lo))
        top = int(np.argmax(vals[rows, j]))
        if vals[top, j[top]] > best:
            best, best_t = float(vals[top, j[top]]), float(local[top, j[top]])
        if rounds + 1 >= _REFINE_MIN and best - before <= 1e-13 * abs(best):
            break
        step = (hi - lo) / (len(frac) - 1)
        centre = local[rows, j]
        lo, hi = np.maximum(centre - step, -d / 2), centre + step
    if d / mu > best:
        return d / mu, math.inf
    return best, best_t
