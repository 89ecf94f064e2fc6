"""AboveThreshold and ReducedAboveThreshold (paper A, alg:rat, thm:rat, prop:rat_utility)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validation import (
    MAX_ELEMENTS,
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
    epsilon: float
    noisy_utility: float
    noisy_threshold: float
    above: bool


class _ThresholdBase:
    def __init__(self, threshold, *, sensitivity):
        self.threshold = real_scalar("threshold", threshold)
        self.sensitivity = scale_param("sensitivity", sensitivity)
        self._rounds: list[ThresholdRound] = []

    @property
    def rounds(self) -> tuple[ThresholdRound, ...]:
        return tuple(self._rounds)

    @property
    def halted(self) -> bool:
        return bool(self._rounds) and self._rounds[-1].above

    @property
    def stopping_round(self) -> int | None:
        """1-based round at which it halted, or None."""
        return len(self._rounds) if self.halted else None

    def _guard(self):
        if self.halted:
            raise ValueError("already halted: start a new instance for further checks")


class AboveThreshold(_ThresholdBase):
    """Classic AboveThreshold with a fixed epsilon: threshold noise Lap(2D/eps) drawn once,
    query noise Lap(4D/eps) per round; costs epsilon however many rounds run."""

    def __init__(self, threshold, *, sensitivity, epsilon, rng=None):
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

    def check(self, utility) -> bool:
        self._guard()
        utility = real_scalar("utility", utility)
        noisy = utility + self._rng.laplace(0.0, 4 * self.sensitivity / self.epsilon)
        noisy_threshold = self.threshold + self._threshold_noise
        above = bool(noisy >= noisy_threshold)
        self._rounds.append(ThresholdRound(self.epsilon, noisy, noisy_threshold, above))
        return above

    @property
    def privacy_cost(self) -> float:
        return self.epsilon


class ReducedAboveThreshold(_ThresholdBase):
    """ReducedAboveThreshold: round n uses eps_n (non-decreasing, <= epsilon_max); the threshold
    noise is the Laplace process at time 2D/eps_n (eta = 2D/epsilon_max), the query noise
    Lap(4D/eps_n). Halting at round N costs eps_N plus the privacy loss of whatever produced
    the checked candidates (thm:rat); with the Brownian mechanism and eps_n = psi(T_n) that
    is 2 psi(T_N) (cor:aug_bm)."""

    def __init__(self, threshold, *, sensitivity, epsilon_max, rng=None):
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

    def check(self, utility, *, epsilon) -> bool:
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

    def ex_post_epsilon(self, mechanism_loss=0.0) -> float:
        """mechanism_loss + eps_N for the last round N (thm:rat)."""
        if not self._rounds:
            raise ValueError("no round has been checked yet")
        return _positive_or_zero("mechanism_loss", mechanism_loss) + self._rounds[-1].epsilon


def _positive_or_zero(name, value) -> float:
    value = real_scalar(name, value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def rat_utility_margin(epsilons, *, sensitivity, gamma, weights=None) -> np.ndarray:
    """eta_n = 4D/eps_n (log(2/gamma) - log p_n) of prop:rat_utility: with probability >= 1 - gamma
    the halting round N has utility >= threshold - eta_N. Weights p_n default to 6/(pi^2 n^2)."""
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


def _utilities(utilities, runs, width=None):
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


def _first_round(above: np.ndarray) -> np.ndarray:
    first = np.argmax(above, axis=1) + 1
    return np.where(above.any(axis=1), first, 0)


def simulate_rat_stopping(utilities, *, epsilons, threshold, sensitivity, epsilon_max, runs=None, rng=None):
    """Stopping rounds (1-based; 0 = never) of many independent RAT runs (alg:rat).

    ``utilities`` holds u(candidate_n, x) for round n: 1-d (the same for every run, give
    ``runs``) or 2-d (runs, rounds), e.g. one row per independent Brownian path. Vectorised:
    the threshold noise on the grid of times 2D/eps_n uses the Koufogiannis chain, which has
    the Laplace process's joint law on any grid; the query noise is Lap(4D/eps_n).
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


def simulate_above_threshold_stopping(utilities, *, threshold, sensitivity, epsilon, runs=None, rng=None):
    """Stopping rounds (1-based; 0 = never) of many independent AboveThreshold runs: one
    threshold noise Lap(2D/eps) per run, query noise Lap(4D/eps) per round; each run costs
    ``epsilon`` however many rounds it checks."""
    rng = generator(rng)
    u = _utilities(utilities, runs)
    threshold = real_scalar("threshold", threshold)
    D = scale_param("sensitivity", sensitivity)
    eps = positive("epsilon", epsilon)
    derived_scale("4 sensitivity / epsilon", 4 * D / eps, sensitivity=D, epsilon=eps)
    noisy_threshold = threshold + rng.laplace(0.0, 2 * D / eps, (u.shape[0], 1))
    return _first_round(u + rng.laplace(0.0, 4 * D / eps, u.shape) >= noisy_threshold)
