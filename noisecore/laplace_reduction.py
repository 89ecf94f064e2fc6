"""Laplace noise reduction ([KHP17] Koufogiannis et al.; [LNRWW17] Ligett et al.; paper A [WWRR22], Section 4).

The continuous-time Laplace process: for t >= eta, Z_t = sum_{n=0}^{P_t} Lap(T_n) where P is
an inhomogeneous Poisson process with intensity 2/t started at eta, T_0 = eta and T_n its
n-th jump. Z_t ~ Laplace(t) for every t, and on any grid it has the joint law of the
discrete Koufogiannis chain. Vectors use an independent process per coordinate, so every
Z_t has i.i.d. Laplace(t) coordinates (the l1 mechanism's noise).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._base import FloatArray, Size
from ._validation import (
    SCALE_MAX,
    SeedLike,
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

    Parameters
    ----------
    eta : float
        The start time, in [1e-100, 1e100]; Z_eta ~ Laplace(eta).
    dim : int, optional
        Number of independent coordinates, 1 to 10,000 (default 1).
    rng : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator, optional
        Seed or Generator.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If ``eta`` or ``dim`` is out of range.

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Section 4 and Theorem D.1 (Z_t ~ Laplace(t)).
    """

    def __init__(self, eta: float, *, dim: int = 1, rng: SeedLike = None) -> None:
        self.eta = scale_param("eta", eta)
        self.dim = bounded_int("dim", dim, 1, MAX_DIM)
        self._rng = generator(rng)
        self._horizon = self.eta
        self._start = self._rng.laplace(0.0, self.eta, self.dim)
        self._jump_times: list[FloatArray] = [np.empty(0) for _ in range(self.dim)]
        self._jump_sums: list[FloatArray] = [np.empty(0) for _ in range(self.dim)]

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

    def values(self, times: npt.ArrayLike) -> FloatArray:
        """Z at ``times`` (each in [eta, 1e100]), shape (len(times), dim).

        Parameters
        ----------
        times : array_like
            A scalar or a 1-d array of times, in any order.

        Returns
        -------
        numpy.ndarray
            Shape (len(times), dim), all on the same path as every earlier query.

        Raises
        ------
        TypeError
            If ``times`` is not a real array.
        ValueError
            If ``times`` is more than 1-d or has an entry outside [eta, 1e100].
        """
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


def koufogiannis_chain(times: npt.ArrayLike, *, dim: int = 1, size: Size = None, rng: SeedLike = None) -> FloatArray:
    """The discrete chain on increasing ``times``: zeta_0 = 0 and zeta_n = zeta_{n-1} with
    probability (t_{n-1}/t_n)^2, else zeta_{n-1} + Lap(t_n); returns shape (size..., K, dim).

    On any grid it has the joint law of the Laplace process (so zeta_n ~ Laplace(t_n)).

    Parameters
    ----------
    times : array_like
        t_1 < ... < t_K, a non-empty 1-d array in (0, 1e100].
    dim : int, optional
        Number of independent coordinates, 1 to 10,000 (default 1).
    size : int or tuple of ints, optional
        Shape of independent chains to draw (default None: one chain).
    rng : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator, optional
        Seed or Generator.

    Returns
    -------
    numpy.ndarray
        Shape ``(*size, K, dim)``.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If ``times`` is not strictly increasing in (0, 1e100], or ``dim`` or ``size`` is out of range.

    References
    ----------
    [KHP17] (Koufogiannis, Han & Pappas); Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Section 4.
    """
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
    """One release of `LaplaceNoiseReduction`.

    Attributes
    ----------
    epsilon : float
        The release's privacy level.
    time : float
        The noise scale D1 / epsilon.
    value : numpy.ndarray
        The released value, shape (d,).
    """

    epsilon: float
    time: float
    value: FloatArray


class LaplaceNoiseReduction:
    """Releases value + Z_{D1/eps} for increasing epsilon <= epsilon_max (l1 sensitivity D1).

    Ex post, stopping after the n-th release costs epsilon_n = D1 / T_n.

    Parameters
    ----------
    value : array_like
        f(x), a scalar or a 1-d vector of 1 to 10,000 finite reals.
    sensitivity : float
        D1, the l1 sensitivity of f, in [1e-100, 1e100].
    epsilon_max : float
        Largest privacy level of any release, > 0, with D1 / epsilon_max in [1e-100, 1e100].
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
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Definition 4.1 and Proposition 4.2;
    [LNRWW17] (Ligett et al.); [KHP17] (Koufogiannis, Han & Pappas).
    """

    def __init__(self, value: npt.ArrayLike, *, sensitivity: float, epsilon_max: float, rng: SeedLike = None) -> None:
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

    def release(self, epsilon: float) -> FloatArray:
        """Release value + Z_{D1/epsilon}.

        Parameters
        ----------
        epsilon : float
            The privacy level: > 0, at most ``epsilon_max``, above the previous release's.

        Returns
        -------
        numpy.ndarray
            The released value, shape (d,) (a copy).

        Raises
        ------
        TypeError
            If ``epsilon`` is not a real number.
        ValueError
            If ``epsilon`` is out of range or does not increase.
        """
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
        """All releases so far, oldest first."""
        return tuple(self._history)

    @property
    def ex_post_epsilon(self) -> float:
        """D1 / T_n for the last release n: its epsilon.

        Raises
        ------
        ValueError
            If nothing has been released yet.

        References
        ----------
        Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Proposition 4.2.
        """
        if not self._history:
            raise ValueError("nothing has been released yet")
        return self.sensitivity / self._history[-1].time
