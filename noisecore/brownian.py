"""The Brownian mechanism: release f(x) + B(T) at decreasing times T (paper A, Section 3).

Rewinding from time T to T' < T draws B(T') from the Brownian bridge between 0 (at time 0)
and B(T): N((T'/T) B(T), T'(T - T')/T I). More generally the mechanism keeps every point
of the latent path it has drawn (releases and points revealed by ``path``) and samples any
new time from the exact conditional law given its neighbours, so the drawn path and all
releases are one Brownian motion, reproducible from the seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import positive, real_array, vector_value
from .boundaries import PrivacyBoundary

__all__ = ["BrownianMechanism", "BrownianRelease", "brownian_privacy_loss"]


@dataclass(frozen=True, slots=True)
class BrownianRelease:
    """One release: its time (noise variance), the released value and psi(time)."""

    time: float
    value: np.ndarray
    epsilon: float


class _LatentPath:
    """Points of one d-dimensional Brownian motion B (B(0) = 0), sampled lazily and exactly."""

    def __init__(self, dim: int, rng: np.random.Generator):
        self.dim = dim
        self.rng = rng
        self.times = np.empty(0)
        self.values = np.empty((0, dim))

    def sample(self, times: np.ndarray) -> np.ndarray:
        """B at ``times`` (any order, repeats allowed), consistent with all earlier points."""
        times = np.asarray(times, dtype=float)
        new = np.setdiff1d(np.unique(times), self.times)
        if new.size:
            self._add(new)
        idx = np.searchsorted(self.times, times)
        return self.values[idx]

    def _add(self, new: np.ndarray) -> None:
        """Sample sorted new times: bridges inside gaps between known points, a walk past the last."""
        known_t = np.concatenate([[0.0], self.times])
        known_v = np.vstack([np.zeros((1, self.dim)), self.values])
        gap = np.searchsorted(known_t, new) - 1  # index of the left known point
        left_t = known_t[gap]
        has_right = gap + 1 < len(known_t)
        right_t = np.where(has_right, known_t[np.minimum(gap + 1, len(known_t) - 1)], np.inf)
        # free Brownian increments from each gap's left point, cumulated within the gap
        prev_t = np.where(np.r_[True, gap[1:] != gap[:-1]], left_t, np.r_[0.0, new[:-1]])
        steps = self.rng.standard_normal((len(new), self.dim)) * np.sqrt(new - prev_t)[:, None]
        walk = _cumsum_by_group(steps, gap)
        # one extra free increment per bounded gap, to the right point, then bridge-correct
        groups, first = np.unique(gap, return_index=True)
        last = np.r_[first[1:], len(new)] - 1
        bounded = has_right[first]
        end_gap = np.zeros((len(groups), self.dim))
        if bounded.any():
            span = right_t[first[bounded]] - new[last[bounded]]
            extra = self.rng.standard_normal((int(bounded.sum()), self.dim)) * np.sqrt(span)[:, None]
            end_gap[bounded] = walk[last[bounded]] + extra
        group_of = np.searchsorted(groups, gap)
        base = known_v[gap]
        target = np.where(has_right[:, None], known_v[np.minimum(gap + 1, len(known_v) - 1)] - base, 0.0)
        frac = np.where(has_right, (new - left_t) / np.where(has_right, right_t - left_t, 1.0), 0.0)
        values = base + walk + frac[:, None] * (target - end_gap[group_of])
        order = np.argsort(np.concatenate([self.times, new]), kind="stable")
        self.times = np.concatenate([self.times, new])[order]
        self.values = np.vstack([self.values, values])[order]


def _cumsum_by_group(steps: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Cumulative sums restarting at each change of ``group`` (rows sorted by group)."""
    total = np.cumsum(steps, axis=0)
    starts = np.r_[True, group[1:] != group[:-1]]
    first = np.maximum.accumulate(np.where(starts, np.arange(len(group)), 0))
    return total - (total - steps)[first]


def brownian_privacy_loss(shift, noise, time):
    """Realized privacy loss ||D||^2/(2T) + <D, B(T)>/T of releasing f(x) + B(T) (thm:bm_ploss).

    ``shift`` is D = f(x) - f(x') (shape (d,) or (k, d)), ``noise`` is B(T).
    """
    shift = np.atleast_1d(np.asarray(shift, dtype=float))
    noise = np.atleast_1d(np.asarray(noise, dtype=float))
    return (np.sum(shift * shift, axis=-1) / 2 + np.sum(shift * noise, axis=-1)) / time


class BrownianMechanism:
    """Releases value + B(T) at strictly decreasing times T; pays psi(T_last) ex post.

    Parameters
    ----------
    value : array_like
        f(x), a scalar or a vector of any dimension d.
    sensitivity : float
        l2 sensitivity of f (used for the worst-neighbour loss; the boundary carries its own).
    boundary : PrivacyBoundary
        A delta-privacy boundary, fixed before the first release.
    rng : seed or numpy Generator
    """

    def __init__(self, value, *, sensitivity, boundary, rng=None):
        self.value = vector_value("value", value)
        self.sensitivity = positive("sensitivity", sensitivity)
        if not isinstance(boundary, PrivacyBoundary):
            raise TypeError(f"boundary must be a PrivacyBoundary, got {type(boundary).__name__}")
        self.boundary = boundary
        self._path = _LatentPath(self.value.size, np.random.default_rng(rng))
        self._history: list[BrownianRelease] = []

    @property
    def dim(self) -> int:
        return self.value.size

    def release(self, time=None, *, epsilon=None) -> np.ndarray:
        """Release value + B(time); or give ``epsilon`` and release at boundary.time_for(epsilon)."""
        if (time is None) == (epsilon is None):
            raise TypeError("give exactly one of time or epsilon")
        if epsilon is not None:
            time = float(self.boundary.time_for(positive("epsilon", epsilon)))
        time = positive("time", time)
        if self._history and time >= self._history[-1].time:
            previous = self._history[-1].time
            raise ValueError(f"time must be < the previous release time {previous:g}, got {time:g}")
        noise = self._path.sample(np.array([time]))[0]
        released = self.value + noise
        self._history.append(BrownianRelease(time, released, float(self.boundary.epsilon(time))))
        return released.copy()

    # --- history ------------------------------------------------------------------
    @property
    def history(self) -> tuple[BrownianRelease, ...]:
        return tuple(self._history)

    @property
    def times(self) -> np.ndarray:
        return np.array([r.time for r in self._history])

    @property
    def releases(self) -> np.ndarray:
        return np.array([r.value for r in self._history]).reshape(-1, self.dim)

    @property
    def epsilons(self) -> np.ndarray:
        return np.array([r.epsilon for r in self._history])

    def _last(self) -> BrownianRelease:
        if not self._history:
            raise ValueError("nothing has been released yet")
        return self._history[-1]

    @property
    def ex_post_epsilon(self) -> float:
        """psi(T_last): the ex-post epsilon (with the boundary's delta) of everything released."""
        return self._last().epsilon

    @property
    def noise(self) -> np.ndarray:
        """B(T_last), the noise in the last release."""
        return self._last().value - self.value

    def realized_privacy_loss(self, neighbor) -> np.ndarray | float:
        """Exact privacy loss against neighbouring value(s) f(x') (shape (d,) or (k, d))."""
        arr = real_array("neighbor", neighbor)
        arr = np.atleast_1d(arr)
        if arr.shape[-1] != self.dim or arr.ndim > 2:
            raise ValueError(f"neighbor must have shape ({self.dim},) or (k, {self.dim}), got {arr.shape}")
        last = self._last()
        out = brownian_privacy_loss(self.value - arr, last.value - self.value, last.time)
        return float(out) if np.ndim(out) == 0 else out

    def worst_neighbor_loss(self) -> float:
        """Largest realized loss over all f(x') within the sensitivity: D^2/(2T) + D ||B(T)|| / T."""
        last = self._last()
        D = self.sensitivity
        return D * D / (2 * last.time) + D * float(np.linalg.norm(last.value - self.value)) / last.time

    def path(self, times) -> np.ndarray:
        """Noise B(t) at ``times``, shape (len(times), d), consistent with all releases.

        The points become part of the latent path: later releases at these times return them.
        """
        arr = real_array("times", times)
        if arr.ndim != 1:
            raise ValueError("times must be a 1-d array")
        if (arr < 0).any():
            raise ValueError("times must be >= 0")
        out = np.zeros((arr.size, self.dim))
        positive_t = arr > 0
        if positive_t.any():
            out[positive_t] = self._path.sample(arr[positive_t])
        return out

    def __repr__(self):
        return f"BrownianMechanism(dim={self.dim}, releases={len(self._history)}, boundary={self.boundary!r})"

