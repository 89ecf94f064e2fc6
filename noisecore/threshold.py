"""AboveThreshold and ReducedAboveThreshold (paper A [WWRR22], Algorithm 1, Theorem 5.1, Proposition C.1)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._base import FloatArray
from ._validation import (
    MAX_ELEMENTS,
    SeedLike,
    bounded_int,
    derived_scale,
    finite_result,
    generator,
    in_open_interval,
    positive,
    real_array,
    real_scalar,
)
from ._validation import scale as scale_param
from .laplace_reduction import LaplaceProcess, koufogiannis_chain

__all__ = [
    "AboveThreshold",
    "ReducedAboveThreshold",
    "ThresholdRound",
    "rat_utility_margin",
    "simulate_above_threshold_stopping",
    "simulate_rat_stopping",
]


@dataclass(frozen=True, slots=True)
class ThresholdRound:
    """One checked round of AboveThreshold or ReducedAboveThreshold.

    Attributes
    ----------
    epsilon : float
        The round's privacy level.
    noisy_utility : float
        The utility plus its query noise.
    noisy_threshold : float
        The threshold plus its threshold noise.
    above : bool
        Whether ``noisy_utility >= noisy_threshold`` (the mechanism halts).
    """

    epsilon: float
    noisy_utility: float
    noisy_threshold: float
    above: bool

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", positive("epsilon", self.epsilon))
        object.__setattr__(self, "noisy_utility", real_scalar("noisy_utility", self.noisy_utility))
        object.__setattr__(self, "noisy_threshold", real_scalar("noisy_threshold", self.noisy_threshold))
        if not isinstance(self.above, bool | np.bool_):
            raise TypeError(f"above must be True or False, got {type(self.above).__name__}")
        object.__setattr__(self, "above", bool(self.above))


class _ThresholdBase:
    """Shared state of the threshold checks: the threshold, the sensitivity and the rounds so far."""

    def __init__(self, threshold: float, *, sensitivity: float) -> None:
        self.threshold = real_scalar("threshold", threshold)
        self.sensitivity = scale_param("sensitivity", sensitivity)
        self._rounds: list[ThresholdRound] = []

    @property
    def rounds(self) -> tuple[ThresholdRound, ...]:
        """All checked rounds, oldest first."""
        return tuple(self._rounds)

    @property
    def halted(self) -> bool:
        """True once a round came out above the threshold; no further check is allowed."""
        return bool(self._rounds) and self._rounds[-1].above

    @property
    def stopping_round(self) -> int | None:
        """1-based round at which it halted, or None."""
        return len(self._rounds) if self.halted else None

    def _guard(self) -> None:
        if self.halted:
            raise ValueError("already halted: start a new instance for further checks")


class AboveThreshold(_ThresholdBase):
    """Classic AboveThreshold with a fixed epsilon: threshold noise Lap(2D/eps) drawn once,
    query noise Lap(4D/eps) per round; costs epsilon however many rounds run.

    Parameters
    ----------
    threshold : float
        The threshold tau, finite.
    sensitivity : float
        D, the sensitivity of the utilities checked, in [1e-100, 1e100].
    epsilon : float
        The privacy level, > 0, with 4 D / epsilon in [1e-100, 1e100].
    rng : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator, optional
        Seed or Generator.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is not finite or out of range.

    References
    ----------
    [DNRRV09] (Dwork, Naor, Reingold, Rothblum & Vadhan), the sparse vector technique; Paper A
    [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Algorithm 1 with a constant privacy level.
    """

    def __init__(self, threshold: float, *, sensitivity: float, epsilon: float, rng: SeedLike = None) -> None:
        super().__init__(threshold, sensitivity=sensitivity)
        self.epsilon = positive("epsilon", epsilon)
        derived_scale(
            "4 sensitivity / epsilon",
            4 * self.sensitivity / self.epsilon,
            sensitivity=self.sensitivity,
            epsilon=self.epsilon,
        )
        self._rng = generator(rng)
        self._threshold_noise = self._rng.laplace(0.0, 2 * self.sensitivity / self.epsilon)

    def check(self, utility: float) -> bool:
        """Check one utility against the threshold; True means above (and halts).

        Parameters
        ----------
        utility : float
            u(candidate, x), finite.

        Returns
        -------
        bool
            Whether the noisy utility reached the noisy threshold.

        Raises
        ------
        TypeError
            If ``utility`` is not a real number.
        ValueError
            If ``utility`` is not finite, or the mechanism has already halted.
        """
        self._guard()
        utility = real_scalar("utility", utility)
        noisy = utility + self._rng.laplace(0.0, 4 * self.sensitivity / self.epsilon)
        noisy_threshold = self.threshold + self._threshold_noise
        above = bool(noisy >= noisy_threshold)
        self._rounds.append(ThresholdRound(self.epsilon, noisy, noisy_threshold, above))
        return above

    @property
    def privacy_cost(self) -> float:
        """``epsilon``, whatever the number of rounds."""
        return self.epsilon


class ReducedAboveThreshold(_ThresholdBase):
    """ReducedAboveThreshold: round n uses eps_n (non-decreasing, <= epsilon_max); the threshold
    noise is the Laplace process at time 2D/eps_n (eta = 2D/epsilon_max), the query noise
    Lap(4D/eps_n). Halting at round N costs eps_N plus the privacy loss of whatever produced
    the checked candidates (Theorem 5.1); with the Brownian mechanism and eps_n = psi(T_n) that
    is 2 psi(T_N) (Corollary 5.2).

    Parameters
    ----------
    threshold : float
        The threshold tau, finite.
    sensitivity : float
        D, the sensitivity of the utilities checked, in [1e-100, 1e100].
    epsilon_max : float
        Largest privacy level of any round, > 0, with 2 D / epsilon_max in [1e-100, 1e100].
    rng : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator, optional
        Seed or Generator.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is not finite or out of range.

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Algorithm 1, Theorem 5.1 and Corollary 5.2.
    """

    def __init__(self, threshold: float, *, sensitivity: float, epsilon_max: float, rng: SeedLike = None) -> None:
        super().__init__(threshold, sensitivity=sensitivity)
        self.epsilon_max = positive("epsilon_max", epsilon_max)
        eta = derived_scale(
            "eta = 2 sensitivity / epsilon_max",
            2 * self.sensitivity / self.epsilon_max,
            sensitivity=self.sensitivity,
            epsilon_max=self.epsilon_max,
        )
        self._rng = generator(rng)
        self._process = LaplaceProcess(eta, dim=1, rng=self._rng)

    def check(self, utility: float, *, epsilon: float) -> bool:
        """Check one utility at privacy level ``epsilon``; True means above (and halts).

        Parameters
        ----------
        utility : float
            u(candidate_n, x), finite.
        epsilon : float
            This round's level eps_n: > 0, at most ``epsilon_max``, not below the previous
            round's, with 2 D / epsilon in [1e-100, 1e100].

        Returns
        -------
        bool
            Whether the noisy utility reached the noisy threshold.

        Raises
        ------
        TypeError
            If an argument is not a real number.
        ValueError
            If an argument is out of range, ``epsilon`` decreases, or the mechanism has
            already halted.
        """
        self._guard()
        utility = real_scalar("utility", utility)
        epsilon = positive("epsilon", epsilon)
        if epsilon > self.epsilon_max:
            raise ValueError(f"epsilon must be <= epsilon_max = {self.epsilon_max:g}, got {epsilon:g}")
        if self._rounds and epsilon < self._rounds[-1].epsilon:
            raise ValueError(f"epsilon must not decrease: previous {self._rounds[-1].epsilon:g}, got {epsilon:g}")
        time = derived_scale(
            "time = 2 sensitivity / epsilon",
            2 * self.sensitivity / epsilon,
            epsilon=epsilon,
            sensitivity=self.sensitivity,
        )
        zeta = float(self._process.values([time])[0, 0])
        noisy = utility + self._rng.laplace(0.0, 4 * self.sensitivity / epsilon)
        noisy_threshold = self.threshold + zeta
        above = bool(noisy >= noisy_threshold)
        self._rounds.append(ThresholdRound(epsilon, noisy, noisy_threshold, above))
        return above

    def ex_post_epsilon(self, mechanism_loss: float = 0.0) -> float:
        """mechanism_loss + eps_N for the last round N.

        Parameters
        ----------
        mechanism_loss : float, optional
            Privacy loss (>= 0) of whatever produced the checked candidates (default 0).

        Returns
        -------
        float

        Raises
        ------
        TypeError
            If ``mechanism_loss`` is not a real number.
        ValueError
            If no round has been checked yet, or ``mechanism_loss`` is negative or not finite.

        References
        ----------
        Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Theorem 5.1.
        """
        if not self._rounds:
            raise ValueError("no round has been checked yet")
        return _positive_or_zero("mechanism_loss", mechanism_loss) + self._rounds[-1].epsilon


def _positive_or_zero(name: str, value: object) -> float:
    value = real_scalar(name, value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def rat_utility_margin(
    epsilons: npt.ArrayLike, *, sensitivity: float, gamma: float, weights: npt.ArrayLike | None = None
) -> FloatArray:
    """eta_n = 4D/eps_n (log(2/gamma) - log p_n): with probability >= 1 - gamma
    the halting round N has utility >= threshold - eta_N. Weights p_n default to 6/(pi^2 n^2).

    Parameters
    ----------
    epsilons : array_like
        The levels eps_n, a non-empty 1-d array of values > 0.
    sensitivity : float
        D, in [1e-100, 1e100].
    gamma : float
        Failure probability, in (0, 1).
    weights : array_like, optional
        p_n, one per round, positive, summing to at most 1 (default 6/(pi^2 n^2)).

    Returns
    -------
    numpy.ndarray
        eta_n, one per round.

    Raises
    ------
    TypeError
        If an argument is not real.
    ValueError
        If an argument is out of range or the shapes differ, or a margin is beyond the float range.

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Proposition C.1.
    """
    eps = np.atleast_1d(real_array("epsilons", epsilons))
    if eps.ndim != 1 or eps.size == 0 or (eps <= 0).any():
        raise ValueError("epsilons must be a non-empty 1-d array of values > 0")
    D = scale_param("sensitivity", sensitivity)
    gamma = in_open_interval("gamma", gamma, 0.0, 1.0)
    n = np.arange(1, eps.size + 1)
    p = 6 / (math.pi**2 * n**2) if weights is None else np.atleast_1d(real_array("weights", weights))
    if p.shape != eps.shape or (p <= 0).any() or p.sum() > 1 + 1e-12:
        raise ValueError("weights must be positive, one per round, summing to at most 1")
    with np.errstate(over="ignore"):
        margin = 4 * D / eps * (math.log(2) - math.log(gamma) - np.log(p))
    return finite_result("epsilons", margin, "the margin 4 sensitivity / epsilons (...)")


def _utilities(utilities: npt.ArrayLike, runs: int | None, width: int | None = None) -> FloatArray:
    """Utilities as a (runs, rounds) array, checked; a 1-d input is repeated ``runs`` times."""
    u = real_array("utilities", utilities)
    if u.ndim not in (1, 2) or u.shape[-1] == 0 or u.size == 0:
        raise ValueError(f"utilities must be 1-d (rounds) or 2-d (runs, rounds), non-empty, got shape {u.shape}")
    if u.ndim == 1:
        if runs is None:
            raise ValueError("runs is required when utilities is 1-d (the same utilities for every run)")
        runs = bounded_int("runs", runs, 1, MAX_ELEMENTS)
        if runs * u.size > MAX_ELEMENTS:
            raise ValueError(f"runs * rounds must be <= {MAX_ELEMENTS:g}, got runs = {runs}")
        u = np.broadcast_to(u, (runs, u.size))
    elif runs is not None and bounded_int("runs", runs, 1, MAX_ELEMENTS) != u.shape[0]:
        raise ValueError(f"runs = {runs} does not match utilities with {u.shape[0]} rows")
    if width is not None and u.shape[1] != width:
        raise ValueError("utilities and epsilons must have the same number of rounds")
    return u


def _first_round(above: npt.NDArray[np.bool_]) -> npt.NDArray[np.intp]:
    """1-based index of the first True per row, 0 if none."""
    first = np.argmax(above, axis=1) + 1
    return np.where(above.any(axis=1), first, 0)


def simulate_rat_stopping(
    utilities: npt.ArrayLike,
    *,
    epsilons: npt.ArrayLike,
    threshold: float,
    sensitivity: float,
    epsilon_max: float,
    runs: int | None = None,
    rng: SeedLike = None,
) -> npt.NDArray[np.intp]:
    """Stopping rounds (1-based; 0 = never) of many independent RAT runs.

    ``utilities`` holds u(candidate_n, x) for round n: 1-d (the same for every run, give
    ``runs``) or 2-d (runs, rounds), e.g. one row per independent Brownian path. Vectorised:
    the threshold noise on the grid of times 2D/eps_n uses the Koufogiannis chain, which has
    the Laplace process's joint law on any grid; the query noise is Lap(4D/eps_n).

    Parameters
    ----------
    utilities : array_like
        Shape (rounds,) or (runs, rounds), finite.
    epsilons : array_like
        eps_n, one per round: positive, non-decreasing, at most ``epsilon_max``.
    threshold : float
        The threshold tau.
    sensitivity : float
        D, in [1e-100, 1e100].
    epsilon_max : float
        The largest allowed level, > 0.
    runs : int, optional
        Number of runs; required for 1-d ``utilities``, and must match the rows of 2-d ones.
    rng : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator, optional
        Seed or Generator.

    Returns
    -------
    numpy.ndarray
        Integer stopping round per run, shape (runs,).

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is out of range, or the shapes do not match.

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Algorithm 1; [KHP17] (Koufogiannis, Han &
    Pappas) for the chain.
    """
    rng = generator(rng)
    eps = np.atleast_1d(real_array("epsilons", epsilons))
    if eps.ndim != 1 or eps.size == 0 or (np.diff(eps) < 0).any() or (eps <= 0).any():
        raise ValueError("epsilons must be a non-empty 1-d array of positive, non-decreasing values")
    eps_max = positive("epsilon_max", epsilon_max)
    if eps.max() > eps_max:
        raise ValueError(f"epsilons must be <= epsilon_max = {eps_max:g}")
    u = _utilities(utilities, runs, eps.size)
    threshold = real_scalar("threshold", threshold)
    D = scale_param("sensitivity", sensitivity)
    derived_scale("2 sensitivity / epsilon_max", 2 * D / eps_max, sensitivity=D, epsilon_max=eps_max)
    derived_scale("2 sensitivity / epsilons", 2 * D / eps.min(), sensitivity=D, epsilons=eps.min())
    times = 2 * D / eps  # non-increasing
    grid = np.unique(np.concatenate([[2 * D / eps_max], times]))
    chain = koufogiannis_chain(grid, dim=1, size=u.shape[0], rng=rng)[..., 0]
    zeta = chain[:, np.searchsorted(grid, times)]
    xi = rng.laplace(0.0, 1.0, u.shape) * (4 * D / eps)
    return _first_round(u + xi >= threshold + zeta)


def simulate_above_threshold_stopping(
    utilities: npt.ArrayLike,
    *,
    threshold: float,
    sensitivity: float,
    epsilon: float,
    runs: int | None = None,
    rng: SeedLike = None,
) -> npt.NDArray[np.intp]:
    """Stopping rounds (1-based; 0 = never) of many independent AboveThreshold runs: one
    threshold noise Lap(2D/eps) per run, query noise Lap(4D/eps) per round; each run costs
    ``epsilon`` however many rounds it checks.

    Parameters
    ----------
    utilities : array_like
        Shape (rounds,) or (runs, rounds), finite.
    threshold : float
        The threshold tau.
    sensitivity : float
        D, in [1e-100, 1e100].
    epsilon : float
        The privacy level, > 0.
    runs : int, optional
        Number of runs; required for 1-d ``utilities``, and must match the rows of 2-d ones.
    rng : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator, optional
        Seed or Generator.

    Returns
    -------
    numpy.ndarray
        Integer stopping round per run, shape (runs,).

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is out of range, or the shapes do not match.

    References
    ----------
    [DNRRV09] (Dwork, Naor, Reingold, Rothblum & Vadhan).
    """
    rng = generator(rng)
    u = _utilities(utilities, runs)
    threshold = real_scalar("threshold", threshold)
    D = scale_param("sensitivity", sensitivity)
    eps = positive("epsilon", epsilon)
    derived_scale("4 sensitivity / epsilon", 4 * D / eps, sensitivity=D, epsilon=eps)
    noisy_threshold = threshold + rng.laplace(0.0, 2 * D / eps, (u.shape[0], 1))
    return _first_round(u + rng.laplace(0.0, 4 * D / eps, u.shape) >= noisy_threshold)
