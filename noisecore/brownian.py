"""The Brownian mechanism: release f(x) + B(T) at decreasing times T (paper A [WWRR22], Section 3).

Rewinding from time T to T' < T draws B(T') from the Brownian bridge between 0 (at time 0)
and B(T): N((T'/T) B(T), T'(T - T')/T I). More generally the mechanism keeps every point
of the latent path it has drawn (releases and points revealed by ``path``) and samples any
new time from the exact conditional law given its neighbours, so the drawn path and all
releases are one Brownian motion, reproducible from the seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._base import FloatArray, FloatOrArray
from ._validation import SeedLike, finite_result, generator, positive, real_array, vector_value
from ._validation import scale as scale_param
from .boundaries import PrivacyBoundary

__all__ = ["BrownianMechanism", "BrownianRelease", "brownian_privacy_loss"]


@dataclass(frozen=True, slots=True)
class BrownianRelease:
    """One release: its time (noise variance), the released value and psi(time).

    Attributes
    ----------
    time : float
        The release time T, the variance of each noise coordinate.
    value : numpy.ndarray
        The released value f(x) + B(T), shape (d,).
    epsilon : float
        psi(T), the boundary's ex-post epsilon at T.
    """

    time: float
    value: FloatArray
    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "time", positive("time", self.time))
        value = real_array("value", self.value)
        if value.ndim != 1 or value.size == 0:
            raise ValueError(f"value must be a non-empty 1-d array (one entry per coordinate), got shape {value.shape}")
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "epsilon", positive("epsilon", self.epsilon))


class _LatentPath:
    """Points of one d-dimensional Brownian motion B (B(0) = 0), sampled lazily and exactly.

    The known points are kept sorted in chunks (disjoint, increasing runs of times), so adding a
    point copies one chunk rather than the whole path; a large block of new points in one gap is
    spliced in as chunks of its own without a copy.
    """

    CHUNK = 1 << 15  # chunks are split beyond twice this length
    SPLICE = 1 << 10  # blocks at least this long are stored as they are

    def __init__(self, dim: int, rng: np.random.Generator) -> None:
        self.dim = dim
        self.rng = rng
        self._t: list[FloatArray] = []  # sorted chunks of times, chunk i entirely below chunk i + 1
        self._v: list[FloatArray] = []  # the values, shape (len, dim) per chunk
        self._first: FloatArray = np.empty(0)  # first time of each chunk

    @property
    def times(self) -> FloatArray:
        """All known times, increasing."""
        return np.concatenate(self._t) if self._t else np.empty(0)

    @property
    def values(self) -> FloatArray:
        """B at ``times``, shape (len(times), dim)."""
        return np.concatenate(self._v) if self._v else np.empty((0, self.dim))

    def sample(self, times: npt.ArrayLike) -> FloatArray:
        """B at positive ``times`` (any order, repeats allowed), consistent with all earlier points."""
        times = np.asarray(times, dtype=float).ravel()
        if times.size and np.all(times[1:] > times[:-1]):
            return self._sample_sorted(times)
        query, inverse = np.unique(times, return_inverse=True)
        return self._sample_sorted(query)[inverse.ravel()]

    def _sample_sorted(self, q: FloatArray) -> FloatArray:
        """B at strictly increasing positive times ``q``."""
        dim, n_chunks = self.dim, len(self._t)
        zero = np.zeros(dim)
        out: FloatArray | None = None
        is_new = np.ones(q.size, dtype=bool)
        # q[bounds[i]:bounds[i + 1]] falls in chunk i (segment -1 lies before the first chunk)
        bounds = np.concatenate(([0], np.searchsorted(q, self._first), [q.size]))
        # (chunk, start, stop in q, gap positions of the new points or None)
        segments: list[tuple[int, int, int, npt.NDArray[np.intp] | None]] = []
        g_start: list[npt.ArrayLike] = []
        g_lt: list[npt.ArrayLike] = []
        g_lv: list[npt.ArrayLike] = []
        g_rt: list[npt.ArrayLike] = []
        g_rv: list[npt.ArrayLike] = []
        pos: npt.NDArray[np.intp] | None
        n_new = 0
        for seg in np.flatnonzero(bounds[1:] > bounds[:-1]):
            chunk, a, b = int(seg) - 1, int(bounds[seg]), int(bounds[seg + 1])
            s = q[a:b]
            if chunk < 0:  # one gap: (0, first known point) or unbounded
                gaps, pos = np.zeros(1, dtype=np.intp), None
                g_lt.append([0.0])
                g_lv.append(zero[None, :])
                g_rt.append([self._t[0][0]] if n_chunks else [np.inf])
                g_rv.append(self._v[0][:1] if n_chunks else zero[None, :])
                g_start.append([n_new])
                count = b - a
            else:
                E, V = self._t[chunk], self._v[chunk]
                pos = np.searchsorted(E, s)
                hit = E[np.minimum(pos, E.size - 1)] == s
                if hit.any():
                    if out is None:
                        out = np.empty((q.size, dim))
                    out[a:b][hit] = V[pos[hit]]
                    is_new[a:b] = ~hit
                    pos = pos[~hit]
                count = pos.size
                if count == 0:
                    continue
                first = np.concatenate(([True], pos[1:] != pos[:-1]))
                gaps = pos[first]
                g_start.append(n_new + np.flatnonzero(first))
                g_lt.append(E[gaps - 1])
                g_lv.append(V[gaps - 1])
                inside = gaps < E.size
                rt = np.where(inside, E[np.minimum(gaps, E.size - 1)], np.inf)
                rv = V[np.minimum(gaps, E.size - 1)].copy()
                if chunk + 1 < n_chunks:
                    rt[~inside] = self._t[chunk + 1][0]
                    rv[~inside] = self._v[chunk + 1][0]
                else:
                    rv[~inside] = 0.0
                g_rt.append(rt)
                g_rv.append(rv)
            segments.append((chunk, n_new, n_new + count, pos))
            n_new += count
        if n_new == 0:
            # every point was known already (out is set), or q is empty
            return out if out is not None else np.empty((0, dim))
        new_q = q if n_new == q.size else q[is_new]
        values = self._bridge(
            new_q,
            np.concatenate(g_start).astype(np.intp),
            np.concatenate(g_lt),
            np.concatenate(g_lv),
            np.concatenate(g_rt),
            np.concatenate(g_rv),
        )
        for chunk, a, b, pos in reversed(segments):  # right to left, so chunk indices stay valid
            self._insert(chunk, new_q[a:b], values[a:b], pos)
        self._first = np.array([t[0] for t in self._t])
        if out is None:
            return values.copy()
        out[is_new] = values
        return out

    def _bridge(
        self,
        q: FloatArray,
        start: npt.NDArray[np.intp],
        lt: FloatArray,
        lv: FloatArray,
        rt: FloatArray,
        rv: FloatArray,
    ) -> FloatArray:
        """Exact joint sample at sorted new times ``q`` grouped by gap: group g starts at row
        start[g] and lies between the known points (lt[g], lv[g]) and (rt[g], rv[g]) (rt = inf:
        nothing known to the right). A free walk from the left point, then the bridge correction
        towards the right point with one extra increment to rt."""
        k, G = q.size, start.size
        last = np.append(start[1:], k) - 1
        if G == 1:  # broadcast the group's quantities instead of repeating them per row

            def per_row(x: FloatArray) -> FloatArray | np.float64:
                return x[0]
        else:
            group = np.repeat(np.arange(G), last - start + 1)

            def per_row(x: FloatArray) -> FloatArray | np.float64:
                return x[group]

        dt = np.empty(k)
        np.subtract(q[1:], q[:-1], out=dt[1:])
        dt[start] = q[start] - lt
        np.sqrt(dt, out=dt)
        walk = self.rng.standard_normal((k, self.dim))
        walk *= dt[:, None]
        del dt
        np.cumsum(walk, axis=0, out=walk)
        carry = np.zeros((G, self.dim))
        carry[1:] = walk[start[1:] - 1]  # the walk restarts at each group's left point
        bounded = np.isfinite(rt)
        extra = self.rng.standard_normal((G, self.dim)) * np.sqrt(np.where(bounded, rt - q[last], 0.0))[:, None]
        # the bridge correction is linear in time within a gap: slope = (target - free end) / span
        miss = np.where(bounded[:, None], rv - lv - (walk[last] - carry + extra), 0.0)
        slope = miss / np.where(bounded, rt - lt, np.inf)[:, None]
        offset = lv - carry
        rel = q - per_row(lt)  # time since the gap's left point
        if self.dim == 1:
            rel *= per_row(slope[:, 0])
            rel += per_row(offset[:, 0])
            walk[:, 0] += rel
        else:
            walk += rel[:, None] * per_row(slope)
            walk += per_row(offset)
        return walk

    def _insert(self, chunk: int, t: FloatArray, v: FloatArray, pos: npt.NDArray[np.intp] | None) -> None:
        """Put sorted new points (t, v) into chunk ``chunk`` before positions ``pos`` (chunk -1:
        before the first chunk). A block of at least SPLICE points in one gap becomes chunks of
        its own (views, no copy); otherwise the chunk is rebuilt, and split if it grew too long."""
        if chunk < 0:
            if t.size >= self.SPLICE or not self._t:
                self._t[:0], self._v[:0] = self._pieces(t, v)
                return
            chunk, pos = 0, np.zeros(t.size, dtype=np.intp)
        elif pos is None:
            raise RuntimeError("gap positions are required for points inside a chunk")
        E, V = self._t[chunk], self._v[chunk]
        if pos[0] == pos[-1]:
            p = int(pos[0])
            if t.size >= self.SPLICE:
                pt, pv = self._pieces(t, v)
                self._t[chunk : chunk + 1] = [E[:p], *pt] + ([E[p:]] if p < E.size else [])
                self._v[chunk : chunk + 1] = [V[:p], *pv] + ([V[p:]] if p < E.size else [])
                return
            merged_t = np.concatenate([E[:p], t, E[p:]])
            merged_v = np.concatenate([V[:p], v, V[p:]])
        else:
            at = pos + np.arange(t.size)  # rows of the new points in the merged chunk
            old = np.ones(E.size + t.size, dtype=bool)
            old[at] = False
            merged_t = np.empty(old.size)
            merged_v = np.empty((old.size, self.dim))
            merged_t[at], merged_v[at] = t, v
            merged_t[old], merged_v[old] = E, V
        if merged_t.size > 2 * self.CHUNK:
            self._t[chunk : chunk + 1], self._v[chunk : chunk + 1] = self._pieces(merged_t, merged_v)
        else:
            self._t[chunk], self._v[chunk] = merged_t, merged_v

    def _pieces(self, t: FloatArray, v: FloatArray) -> tuple[list[FloatArray], list[FloatArray]]:
        """Cut (t, v) into consecutive chunks of at most CHUNK points (views, no copy)."""
        cuts = range(0, t.size, self.CHUNK)
        return [t[i : i + self.CHUNK] for i in cuts], [v[i : i + self.CHUNK] for i in cuts]


def brownian_privacy_loss(shift: npt.ArrayLike, *, noise: npt.ArrayLike, time: float) -> FloatOrArray:
    """Realized privacy loss ||D||^2/(2T) + <D, B(T)>/T of releasing f(x) + B(T).

    A loss beyond the float range is an error naming ``shift``.

    Parameters
    ----------
    shift : array_like
        D = f(x) - f(x'), shape (d,) or (k, d) (a scalar counts as d = 1).
    noise : array_like
        B(T), a scalar or shape (d,).
    time : float
        T, in [1e-100, 1e100].

    Returns
    -------
    float or numpy.ndarray
        The loss: a scalar for ``shift`` of shape (d,), shape (k,) for shape (k, d).

    Raises
    ------
    TypeError
        If an argument is not real.
    ValueError
        If an entry is not finite, ``time`` is out of range, the shapes do not match, or the
        loss is beyond the float range.

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Theorem 3.4.
    """
    shift = np.atleast_1d(real_array("shift", shift))
    noise = np.atleast_1d(real_array("noise", noise))
    time = scale_param("time", time)
    if noise.ndim != 1 or noise.size == 0:
        raise ValueError(f"noise must be a scalar or a non-empty 1-d vector, got shape {noise.shape}")
    if shift.ndim > 2 or shift.shape[-1] != noise.size:
        raise ValueError(
            f"shift must have shape ({noise.size},) or (k, {noise.size}) to match noise, got {shift.shape}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        loss = (np.sum(shift * shift, axis=-1) / 2 + np.sum(shift * noise, axis=-1)) / time
    return finite_result("shift", loss, "the privacy loss")


class BrownianMechanism:
    """Releases value + B(T) at strictly decreasing times T; pays psi(T_last) ex post.

    Parameters
    ----------
    value : array_like
        f(x), a scalar or a non-empty 1-d vector of dimension d, finite.
    sensitivity : float
        l2 sensitivity of f (used for the worst-neighbour loss; the boundary carries its own),
        in [1e-100, 1e100].
    boundary : PrivacyBoundary
        A delta-privacy boundary, fixed before the first release.
    rng : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator, optional
        Seed or Generator for the latent Brownian path.

    Raises
    ------
    TypeError
        If ``value`` or ``sensitivity`` is not real, ``boundary`` is not a PrivacyBoundary, or
        ``rng`` is not a seed.
    ValueError
        If ``value`` is empty, not finite or more than 1-d, or ``sensitivity`` is out of range.

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Section 3: Theorem 3.4 (privacy loss),
    Theorem 3.6 and Corollary 3.7 (ex-post privacy from a privacy boundary).
    """

    def __init__(
        self, value: npt.ArrayLike, *, sensitivity: float, boundary: PrivacyBoundary, rng: SeedLike = None
    ) -> None:
        self.value = vector_value("value", value)
        if self.value.size == 0:
            raise ValueError("value must have at least one coordinate")
        self.sensitivity = scale_param("sensitivity", sensitivity)
        if not isinstance(boundary, PrivacyBoundary):
            raise TypeError(f"boundary must be a PrivacyBoundary, got {type(boundary).__name__}")
        self.boundary = boundary
        self._path = _LatentPath(self.value.size, generator(rng))
        self._history: list[BrownianRelease] = []

    @property
    def dim(self) -> int:
        """d, the number of coordinates of ``value``."""
        return self.value.size

    def release(self, time: float | None = None, *, epsilon: float | None = None) -> FloatArray:
        """Release value + B(time); or give ``epsilon`` and release at boundary.calibrated_time(epsilon).

        Times lie in [1e-100, 1e100] and decrease strictly from release to release.

        Parameters
        ----------
        time : float, optional
            The release time T (noise variance per coordinate).
        epsilon : float, optional
            Target ex-post epsilon (> 0) instead of ``time``; give exactly one of the two.

        Returns
        -------
        numpy.ndarray
            value + B(T), shape (d,) (a copy).

        Raises
        ------
        TypeError
            If neither or both of ``time`` and ``epsilon`` are given, or one is not a real number.
        ValueError
            If the time is out of range or not below the previous release time (for ``epsilon``:
            not above the previous release's epsilon), or ``epsilon`` is not > 0.
        """
        if (time is None) == (epsilon is None):
            raise TypeError("give exactly one of time or epsilon")
        if epsilon is not None:
            time = float(self.boundary.calibrated_time(positive("epsilon", epsilon)))
        time = scale_param("time", time)
        if self._history and time >= self._history[-1].time:
            previous = self._history[-1]
            if epsilon is not None:
                raise ValueError(
                    f"epsilon must be > the previous release's {previous.epsilon:g} (its time "
                    f"{time:g} is not below the previous time {previous.time:g}), got {epsilon:g}"
                )
            raise ValueError(f"time must be < the previous release time {previous.time:g}, got {time:g}")
        noise = self._path.sample(np.array([time]))[0]
        released = self.value + noise
        self._history.append(BrownianRelease(time, released, float(self.boundary.epsilon(time))))
        return released.copy()

    # --- history ------------------------------------------------------------------
    @property
    def history(self) -> tuple[BrownianRelease, ...]:
        """All releases so far, oldest first."""
        return tuple(self._history)

    @property
    def times(self) -> FloatArray:
        """Release times so far, shape (n,), decreasing."""
        return np.array([r.time for r in self._history])

    @property
    def releases(self) -> FloatArray:
        """Released values so far, shape (n, d)."""
        return np.array([r.value for r in self._history]).reshape(-1, self.dim)

    @property
    def epsilons(self) -> FloatArray:
        """psi(T) of each release so far, shape (n,)."""
        return np.array([r.epsilon for r in self._history])

    def _last(self) -> BrownianRelease:
        if not self._history:
            raise ValueError("nothing has been released yet")
        return self._history[-1]

    @property
    def ex_post_epsilon(self) -> float:
        """psi(T_last): the ex-post epsilon (with the boundary's delta) of everything released.

        Raises
        ------
        ValueError
            If nothing has been released yet.

        References
        ----------
        Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Corollary 3.7.
        """
        return self._last().epsilon

    @property
    def noise(self) -> FloatArray:
        """B(T_last), the noise in the last release, shape (d,).

        Raises
        ------
        ValueError
            If nothing has been released yet.
        """
        return self._last().value - self.value

    def realized_privacy_loss(self, neighbor: npt.ArrayLike) -> FloatOrArray:
        """Exact privacy loss of everything released against neighbouring value(s) f(x').

        Parameters
        ----------
        neighbor : array_like
            f(x'), shape (d,) or (k, d).

        Returns
        -------
        float or numpy.ndarray
            The loss at the last release time (see `brownian_privacy_loss`): a float, or shape
            (k,) for k neighbours.

        Raises
        ------
        TypeError
            If ``neighbor`` is not a real array.
        ValueError
            If nothing has been released yet, ``neighbor`` is not finite or has the wrong
            shape, or it is so far from ``value`` that the loss overflows.

        References
        ----------
        Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Theorem 3.4.
        """
        arr = real_array("neighbor", neighbor)
        arr = np.atleast_1d(arr)
        if arr.shape[-1] != self.dim or arr.ndim > 2:
            raise ValueError(
                f"neighbor must have the shape of value, ({self.dim},), or (k, {self.dim}), got {arr.shape}"
            )
        last = self._last()
        with np.errstate(over="ignore", invalid="ignore"):
            shift = self.value - arr
        finite_result("neighbor", shift, "value - neighbor")
        try:
            out = brownian_privacy_loss(shift, noise=last.value - self.value, time=last.time)
        except ValueError as exc:
            raise ValueError(f"neighbor is too far from value: {exc}") from None
        return float(out) if np.ndim(out) == 0 else out

    def worst_neighbor_loss(self) -> float:
        """Largest realized loss over all f(x') within the sensitivity: D^2/(2T) + D ||B(T)|| / T.

        Returns
        -------
        float
            The bound at the last release time T, with D = ``sensitivity``.

        Raises
        ------
        ValueError
            If nothing has been released yet.
        """
        last = self._last()
        D = self.sensitivity
        return D * D / (2 * last.time) + D * float(np.linalg.norm(last.value - self.value)) / last.time

    def path(self, times: npt.ArrayLike) -> FloatArray:
        """Noise B(t) at ``times`` (finite, >= 0), shape (len(times), d), consistent with all releases.

        The points become part of the latent path: later releases at these times return them.

        Parameters
        ----------
        times : array_like
            1-d array of times >= 0, in any order (B(0) = 0).

        Returns
        -------
        numpy.ndarray
            B at ``times``, shape (len(times), d).

        Raises
        ------
        TypeError
            If ``times`` is not a real array.
        ValueError
            If ``times`` is not 1-d, not finite or has a negative entry.
        """
        arr = real_array("times", times)
        if arr.ndim != 1:
            raise ValueError(f"times must be a 1-d array, got shape {arr.shape}")
        if (arr < 0).any():
            raise ValueError("times must be >= 0")
        if arr.size and arr.min() > 0:
            return self._path.sample(arr)
        out = np.zeros((arr.size, self.dim))
        positive_t = arr > 0
        if positive_t.any():
            out[positive_t] = self._path.sample(arr[positive_t])
        return out

    def __repr__(self) -> str:
        return f"BrownianMechanism(dim={self.dim}, releases={len(self._history)}, boundary={self.boundary!r})"
