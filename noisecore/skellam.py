"""Skellam noise reduction (paper A, appendix sec:Skellam).

X_t = P1(t) - P2(t) for independent Poisson processes of rate ``rate``, so X_t ~
Skellam(rate t, rate t). Releases go backwards in time: given P(t) = k, P(t') for t' < t
is Binomial(k, t'/t) (binomial thinning), which keeps every release on one path.
"""

from __future__ import annotations

import numpy as np

from ._validation import generator, scale, vector_value

MAX_MEAN = 1e15  # rate * time: numpy's Poisson sampler stops near 9e18

__all__ = ["SkellamNoiseReduction"]


class SkellamNoiseReduction:
    """Releases value + X_T at strictly decreasing times T (integer-valued noise)."""

    def __init__(self, value, *, rate=1.0, rng=None):
        self.value = vector_value("value", value)
        if self.value.size == 0:
            raise ValueError("value must have at least one coordinate")
        self.rate = scale("rate", rate)
        self._rng = generator(rng)
        self._time = None
        self._counts = None  # shape (2, d): P1(t), P2(t)
        self.times: list[float] = []

    def release(self, time) -> np.ndarray:
        """value + X_time; times decrease strictly, rate * time is at most 1e15."""
        time = scale("time", time)
        if self.rate * time > MAX_MEAN:
            raise ValueError(f"rate * time must be <= {MAX_MEAN:g}, got time {time:g} with rate {self.rate:g}")
        if self._time is None:
            self._counts = self._rng.poisson(self.rate * time, (2, self.value.size))
        elif time >= self._time:
            raise ValueError(f"time must be < the previous release time {self._time:g}, got {time:g}")
        else:
            self._counts = self._rng.binomial(self._counts, time / self._time)
        self._time = time
        self.times.append(time)
        return self.value + (self._counts[0] - self._counts[1])
