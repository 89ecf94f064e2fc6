"""Laplace noise reduction (Koufogiannis et al.; Ligett et al.; paper A, Section sec:lnr).

The continuous-time Laplace process: for t >= eta, Z_t = sum_{n=0}^{P_t} Lap(T_n) where P is
an inhomogeneous Poisson process with intensity 2/t started at eta, T_0 = eta and T_n its
n-th jump. Z_t ~ Laplace(t) for every t, and on any grid it has the joint law of the
discrete Koufogiannis chain. Vectors use an independent process per coordinate, so every
Z_t has i.i.d. Laplace(t) coordinates (the l1 mechanism's noise).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import (
    SCALE_MAX,
    bounded_int,
    derived_scale,
    generator,
    positive,
    real_array,
    sample_size,
    vector_value,
)
from ._validation import scale as scale_param

MAX_DIM = 10_000  # coordinates are simulated one by one

__all__ = ["LaplaceNoiseReduction", "LaplaceProcess", "LaplaceRelease", "koufogiannis_chain"]


class LaplaceProcess:
    """The Laplace process Z_t (t >= eta) in ``dim`` independent coordinates, simulated lazily.

    Jumps are simulated forwards in time as far as the largest time queried so far; any
    query is then read off the same path, so all values are mutually consistent.
    """

    def __init__(self, eta, *, dim=1, rng=None):
        self.eta = scale_param("eta", eta)
        self.dim = bounded_int("dim", dim, 1, MAX_DIM)
        self._rng = generator(rng)
        self._horizon = self.eta
        self._start = self._rng.laplace(0.0, self.eta, self.dim)
        self._jump_times = [np.empty(0) for _ in range(self.dim)]
        self._jump_sums = [np.empty(0) for _ in range(self.dim)]

    def _extend(self, horizon: float) -> None:
        """Simulate jumps in (current horizon, horizon]: Poisson(2 log ratio) log-uniform times."""
        span = np.log(horizon / self._horizon)
        for j in range(self.dim):
            count = self._rng.poisson(2.0 * span)
            times = self._horizon * np.exp(np.sort(self._rng.uniform(0.0, span, count)))
            jumps = self._rng.laplace(0.0, times)
            last = self._jump_sums[j][-1] if self._jump_sums[j].size else 0.0
            self._jump_times[j] = np.concatenate([self._jump_times[j], times])
            self._jump_sums[j] = np.concatenate([self._jump_sums[j], last + np.cumsum(jumps)])
        self._horizon = horizon

    def values(self, times) -> np.ndarray:
        """Z at ``times`` (each in [eta, 1e100]), shape (len(times), dim)."""
        arr = np.atleast_1d(real_array("times", times))
        if arr.ndim != 1:
            raise ValueError(f"times must be a scalar or a 1-d array, got shape {arr.shape}")
        if (arr < self.eta).any() or (arr > SCALE_MAX).any():
            raise ValueError(f"times must be in [eta, {SCALE_MAX:g}] = [{self.eta:g}, {SCALE_MAX:g}]")
        if arr.size and arr.max() > self._horizon:
            self._extend(float(arr.max()))
        out = np.empty((arr.size, self.dim))
        for j in range(self.dim):
            count = np.searchsorted(self._jump_times[j], arr, side="right")
            sums = np.concatenate([[0.0], self._jump_sums[j]])
            out[:, j] = self._start[j] + sums[count]
        return out


def koufogiannis_chain(times, *, dim=1, size=None, rng=None) -> np.ndarray:
    """The discrete chain on increasing ``times``: zeta_0 = 0 and zeta_n = zeta_{n-1} with
    probability (t_{n-1}/t_n)^2, else zeta_{n-1} + Lap(t_n); returns shape (size..., K, dim)."""
    rng = generator(rng)
    t = np.atleast_1d(real_array("times", times))
    if t.ndim != 1 or t.size == 0 or (t <= 0).any() or (np.diff(t) <= 0).any() or t[-1] > SCALE_MAX:
        raise ValueError(f"times must be a strictly increasing non-empty 1-d array of numbers in (0, {SCALE_MAX:g}]")
    dim = bounded_int("dim", dim, 1, MAX_DIM)
    size = sample_size("size", size, per_item=t.size * dim)
    shape = () if size is None else tuple(np.atleast_1d(size))
    prev = np.r_[0.0, t[:-1]]
    keep = rng.random((*shape, t.size, dim)) < (prev / t)[:, None] ** 2
    jumps = rng.laplace(0.0, 1.0, (*shape, t.size, dim)) * t[:, None]
    increments = np.where(keep, 0.0, jumps)
    # the chain is the running sum of its (possibly zero) increments
    return np.cumsum(increments, axis=-2)


@dataclass(frozen=True, slots=True)
class LaplaceRelease:
    epsilon: float
    time: float
    value: np.ndarray


class LaplaceNoiseReduction:
    """Releases value + Z_{D1/eps} for increasing epsilon <= epsilon_max (l1 sensitivity D1).

    Ex post, stopping after the n-th release costs epsilon_n = D1 / T_n (prop:lnr).
    """

    def __init__(self, value, *, sensitivity, epsilon_max, rng=None):
        self.value = vector_value("value", value)
        if not 1 <= self.value.size <= MAX_DIM:
            raise ValueError(f"value must have 1 to {MAX_DIM} coordinates, got {self.value.size}")
        self.sensitivity = scale_param("sensitivity", sensitivity)
        self.epsilon_max = positive("epsilon_max", epsilon_max)
        eta = derived_scale(
            "eta", self.sensitivity / self.epsilon_max, sensitivity=self.sensitivity, epsilon_max=self.epsilon_max
        )
        self._process = LaplaceProcess(eta, dim=self.value.size, rng=generator(rng))
        self._history: list[LaplaceRelease] = []

    def release(self, epsilon) -> np.ndarray:
        epsilon = positive("epsilon", epsilon)
        if epsilon > self.epsilon_max:
            raise ValueError(f"epsilon must be <= epsilon_max = {self.epsilon_max:g}, got {epsilon:g}")
        if self._history and epsilon <= self._history[-1].epsilon:
            raise ValueError(f"epsilon must increase: previous {self._history[-1].epsilon:g}, got {epsilon:g}")
        time = derived_scale("time", self.sensitivity / epsilon, epsilon=epsilon, sensitivity=self.sensitivity)
        released = self.value + self._process.values([time])[0]
        self._history.append(LaplaceRelease(epsilon, time, released))
        return released.copy()

    @property
    def history(self) -> tuple[LaplaceRelease, ...]:
        return tuple(self._history)

    @property
    def ex_post_epsilon(self) -> float:
        if not self._history:
            raise ValueError("nothing has been released yet")
        return self.sensitivity / self._history[-1].time
