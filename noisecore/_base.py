"""Shared interface of the symmetric noise distributions."""

from __future__ import annotations

import functools

import numpy as np

from ._validation import generator, positive, real_array, sample_size


def _far_tail():
    """Far-tail arithmetic may overflow to +-inf on purpose (a log density of -inf, a survival of 0)."""
    return np.errstate(over="ignore", under="ignore")


def _output(arr: np.ndarray, like: np.ndarray):
    """Return a Python-style scalar for 0-d input, an array otherwise (as scipy does)."""
    return arr[()] if like.ndim == 0 else arr


class Immutable:
    """Attributes are set while ``__init__`` runs and never after, so nothing derived from them (a
    calibrated scale, a quadrature kernel) can go stale: to change a parameter, build a new object."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None:
            return

        @functools.wraps(init)
        def init_then_freeze(self, *args, **kw):
            init(self, *args, **kw)
            # the most derived __init__ freezes, after any super().__init__ calls have returned
            owner = next(c for c in type(self).__mro__ if "__init__" in c.__dict__)
            if owner is cls:
                object.__setattr__(self, "_frozen", True)

        cls.__init__ = init_then_freeze

    def __setattr__(self, name, value):
        if getattr(self, "_frozen", False):
            raise AttributeError(
                f"{type(self).__name__} objects are immutable: cannot set {name!r} "
                f"(build a new {type(self).__name__} instead)"
            )
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if getattr(self, "_frozen", False):
            raise AttributeError(f"{type(self).__name__} objects are immutable: cannot delete {name!r}")
        object.__delattr__(self, name)


class NoiseDistribution(Immutable):
    """A distribution symmetric about 0 used as additive privacy noise.

    Subclasses implement ``_logpdf``, ``_sf`` (for x >= 0 or any x), ``_sample``,
    ``mean_abs``, ``var`` and ``_privacy_loss``; this class validates arguments and
    derives the rest from symmetry.
    """

    def logpdf(self, x):
        """Log density at ``x`` (vectorised)."""
        arr = real_array("x", x, allow_inf=True)
        with _far_tail():
            return _output(self._logpdf(arr), arr)

    def pdf(self, x):
        """Density at ``x`` (vectorised)."""
        arr = real_array("x", x, allow_inf=True)
        with _far_tail():
            return _output(np.exp(self._logpdf(arr)), arr)

    def sf(self, x):
        """Survival function P(Z > x), computed directly (accurate in the upper tail)."""
        arr = real_array("x", x, allow_inf=True)
        with _far_tail():
            return _output(self._sf(arr), arr)

    def cdf(self, x):
        """Cumulative distribution P(Z <= x) = sf(-x) by symmetry."""
        arr = real_array("x", x, allow_inf=True)
        with _far_tail():
            return _output(self._sf(-arr), arr)

    def ppf(self, q):
        """Quantile function: the x with cdf(x) = q, for q in [0, 1]."""
        arr = real_array("q", q)
        if ((arr < 0) | (arr > 1)).any():
            raise ValueError("q must be in [0, 1]")
        upper = np.where(arr >= 0.5, 1.0 - arr, arr)
        mag = self._isf_upper(upper)
        out = np.where(arr >= 0.5, mag, -mag)
        out = np.where(arr == 0.5, 0.0, out)
        return _output(out, arr)

    def _isf_upper(self, q: np.ndarray) -> np.ndarray:
        """x >= 0 with sf(x) = q for q in [0, 1/2]; generic bisection on the sf."""
        q = np.asarray(q, dtype=float)
        out = np.full(q.shape, np.inf)
        active = q > 0
        if not active.any():
            return out
        qa = q[active]
        hi = np.full(qa.shape, self._scale_hint())
        for _ in range(200):
            too_small = self._sf(hi) > qa
            if not too_small.any():
                break
            hi = np.where(too_small, 2 * hi, hi)
        lo = np.zeros_like(hi)
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            above = self._sf(mid) > qa
            lo = np.where(above, mid, lo)
            hi = np.where(above, hi, mid)
        out[active] = 0.5 * (lo + hi)
        return out

    def _scale_hint(self) -> float:
        return float(np.sqrt(self.var()))

    def sample(self, size=None, *, rng=None):
        """Draw samples with a numpy Generator (``rng`` is a seed or Generator); ``size`` is None, a
        count or a shape, at most 1e8 values."""
        size = sample_size("size", size)
        rng = generator(rng)
        return self._sample(size, rng)

    def std(self) -> float:
        return float(np.sqrt(self.var()))

    def privacy_loss(self, distance):
        """Worst-case privacy loss sup_t |log f(t) - log f(t + distance)| (vectorised).

        ``privacy_loss(sensitivity)`` is the pure-DP epsilon of adding this noise to a
        query of that sensitivity. +inf only where the loss is genuinely infinite (Gaussian noise);
        a finite loss beyond the float range is an error naming ``distance``.
        """
        arr = real_array("distance", distance)
        arr = np.abs(arr)
        with _far_tail():
            out = np.asarray(self._privacy_loss(arr), dtype=float)
        if self._finite_loss and np.isinf(out).any():
            raise ValueError(
                f"distance is too large for this noise: the privacy loss at {arr.max():g} is beyond the float range"
            )
        return _output(out, arr)

    def mse(self) -> float:
        return self.var()

    _finite_loss = False  # True where every finite distance has a finite loss

    def _repr_args(self) -> str:  # pragma: no cover - cosmetic
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()})"


def check_sensitivity(sensitivity) -> float:
    return positive("sensitivity", sensitivity)
