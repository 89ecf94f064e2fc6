"""Skellam noise reduction (paper A, Appendix E).

X_t = P1(t) - P2(t) for independent Poisson processes of rate ``rate``, so X_t ~
Skellam(rate t, rate t). Releases go backwards in time: given P(t) = k, P(t') for t' < t
is Binomial(k, t'/t) (binomial thinning), which keeps every release on one path.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._validation import SeedLike, generator, scale, vector_value

MAX_MEAN = 1e15  # rate * time: numpy's Poisson sampler stops near 9e18

__all__ = ["SkellamNoiseReduction"]


class SkellamNoiseReduction:
    """Releases value + X_T at strictly decreasing times T (integer-valued noise).

    Each coordinate gets independent noise X_T = P1(T) - P2(T) ~ Skellam(rate T, rate T), so later
    (smaller T) releases are less noisy; all releases lie on one sample path.

    Parameters
    ----------
    value : array_like
        The query answer f(x), a scalar or a non-empty 1-d vector of finite reals.
    rate : float, optional
        Rate of the Poisson processes, in [1e-100, 1e100] (default 1).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or Generator.

    Raises
    ------
    TypeError
        If ``value``, ``rate`` or ``rng`` has the wrong type.
    ValueError
        If ``value`` is empty, not finite or more than 1-d, or ``rate`` is out of range.

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), appendix on Skellam noise reduction;
    [AKL21] (Agarwal, Kairouz & Liu) for the Skellam mechanism.
    """

    def __init__(self, value: npt.ArrayLike, *, rate: float = 1.0, rng: SeedLike = None) -> None:
        self.value = vector_value("value", value)
        if self.value.size == 0:
            raise ValueError("value must have at least one coordinate")
        self.rate = scale("rate", rate)
        self._rng = generator(rng)
        self._time: float | None = None
        self._counts: npt.NDArray[np.int64] | None = None  # shape (2, d): P1(t), P2(t)
        self.times: list[float] = []

    def release(self, time: float) -> npt.NDArray[np.float64]:
        """value + X_time; times decrease strictly, rate * time is at most 1e15.

        Parameters
        ----------
        time : float
            The release time T, in [1e-100, 1e100] and below every earlier release time.

        Returns
        -------
        numpy.ndarray
            value + X_T, shape (d,).

        Raises
        ------
        TypeError
            If ``time`` is not a real number.
        ValueError
            If ``time`` is out of range, rate * time exceeds 1e15, or ``time`` is not below
            the previous release time.
        """
        time = scale("time", time)
        if self.rate * time > MAX_MEAN:
            raise ValueError(f"rate * time must be <= {MAX_MEAN:g}, got time {time:g} with rate {self.rate:g}")
        if self._time is None or self._counts is None:  # both are None until the first release
            counts = self._rng.poisson(self.rate * time, (2, self.value.size))
        elif time >= self._time:
            raise ValueError(f"time must be < the previous release time {self._time:g}, got {time:g}")
        else:
            counts = self._rng.binomial(self._counts, time / self._time)
        self._counts = counts
        self._time = time
        self.times.append(time)
        return self.value + (counts[0] - counts[1])
