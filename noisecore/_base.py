"""Shared interface of the symmetric noise distributions."""

from __future__ import annotations

import functools
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from ._validation import SeedLike, generator, positive, real_array, sample_size

FloatArray: TypeAlias = npt.NDArray[np.float64]
#: A float for scalar (0-d) input, an array of the input's shape otherwise.
FloatOrArray: TypeAlias = float | FloatArray
#: A validated ``size`` argument: None, a count or a shape.
Size: TypeAlias = int | tuple[int, ...] | None


def _far_tail() -> np.errstate:
    """Far-tail arithmetic may overflow to +-inf on purpose (a log density of -inf, a survival of 0)."""
    return np.errstate(over="ignore", under="ignore")


def _output(arr: FloatArray, like: npt.NDArray[Any]) -> FloatOrArray:
    """Return a Python-style scalar for 0-d input, an array otherwise (as scipy does)."""
    return arr[()] if like.ndim == 0 else arr


class Immutable:
    """Attributes are set while ``__init__`` runs and never after, so nothing derived from them (a
    calibrated scale, a quadrature kernel) can go stale: to change a parameter, build a new object.

    Each subclass's ``__init__`` is wrapped so that the object is frozen when the most derived
    ``__init__`` returns.

    Raises
    ------
    AttributeError
        On setting or deleting an attribute of a frozen object.
    """

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None:
            return

        @functools.wraps(init)
        def init_then_freeze(self: Immutable, *args: Any, **kw: Any) -> None:
            init(self, *args, **kw)
            # the most derived __init__ freezes, after any super().__init__ calls have returned
            owner = next(c for c in type(self).__mro__ if "__init__" in c.__dict__)
            if owner is cls:
                object.__setattr__(self, "_frozen", True)

        # setattr: mypy rejects assigning to a method, which is the point here
        setattr(cls, "__init__", init_then_freeze)  # noqa: B010

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_frozen", False):
            raise AttributeError(
                f"{type(self).__name__} objects are immutable: cannot set {name!r} "
                f"(build a new {type(self).__name__} instead)"
            )
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if getattr(self, "_frozen", False):
            raise AttributeError(f"{type(self).__name__} objects are immutable: cannot delete {name!r}")
        object.__delattr__(self, name)


class NoiseDistribution(Immutable):
    """A distribution symmetric about 0 used as additive privacy noise.

    Subclasses implement ``_logpdf``, ``_sf`` (for x >= 0 or any x), ``_sample``,
    ``mean_abs``, ``var`` and ``_privacy_loss``; this class validates arguments and
    derives the rest from symmetry.

    The vectorised methods return a float for scalar (0-d) input and an array of the
    input's shape otherwise, as scipy does.
    """

    def logpdf(self, x: npt.ArrayLike) -> FloatOrArray:
        """Log density at ``x`` (vectorised).

        Parameters
        ----------
        x : array_like
            Points; +-inf allowed, NaN not.

        Returns
        -------
        float or numpy.ndarray
            log f(x); -inf where the density underflows or at +-inf.

        Raises
        ------
        TypeError, ValueError
            If ``x`` is not real or contains NaN.
        """
        arr = real_array("x", x, allow_inf=True)
        with _far_tail():
            return _output(self._logpdf(arr), arr)

    def pdf(self, x: npt.ArrayLike) -> FloatOrArray:
        """Density at ``x`` (vectorised).

        Parameters
        ----------
        x : array_like
            Points; +-inf allowed, NaN not.

        Returns
        -------
        float or numpy.ndarray
            f(x) = exp(logpdf(x)).

        Raises
        ------
        TypeError, ValueError
            If ``x`` is not real or contains NaN.
        """
        arr = real_array("x", x, allow_inf=True)
        with _far_tail():
            return _output(np.exp(self._logpdf(arr)), arr)

    def sf(self, x: npt.ArrayLike) -> FloatOrArray:
        """Survival function P(Z > x), computed directly (accurate in the upper tail).

        Parameters
        ----------
        x : array_like
            Points; +-inf allowed, NaN not.

        Returns
        -------
        float or numpy.ndarray
            P(Z > x).

        Raises
        ------
        TypeError, ValueError
            If ``x`` is not real or contains NaN.
        """
        arr = real_array("x", x, allow_inf=True)
        with _far_tail():
            return _output(self._sf(arr), arr)

    def cdf(self, x: npt.ArrayLike) -> FloatOrArray:
        """Cumulative distribution P(Z <= x) = sf(-x) by symmetry.

        Parameters
        ----------
        x : array_like
            Points; +-inf allowed, NaN not.

        Returns
        -------
        float or numpy.ndarray
            P(Z <= x).

        Raises
        ------
        TypeError, ValueError
            If ``x`` is not real or contains NaN.
        """
        arr = real_array("x", x, allow_inf=True)
        with _far_tail():
            return _output(self._sf(-arr), arr)

    def ppf(self, q: npt.ArrayLike) -> FloatOrArray:
        """Quantile function: the x with cdf(x) = q, for q in [0, 1].

        Parameters
        ----------
        q : array_like
            Probabilities in [0, 1].

        Returns
        -------
        float or numpy.ndarray
            The quantiles; -inf at q = 0, +inf at q = 1, 0 at q = 1/2.

        Raises
        ------
        TypeError
            If ``q`` is not real.
        ValueError
            If ``q`` is not finite or lies outside [0, 1].
        """
        arr = real_array("q", q)
        if ((arr < 0) | (arr > 1)).any():
            raise ValueError("q must be in [0, 1]")
        upper = np.where(arr >= 0.5, 1.0 - arr, arr)
        mag = self._isf_upper(upper)
        out = np.where(arr >= 0.5, mag, -mag)
        out = np.where(arr == 0.5, 0.0, out)
        return _output(out, arr)

    def _isf_upper(self, q: FloatArray) -> FloatArray:
        """x >= 0 with sf(x) = q for q in [0, 1/2]: safeguarded Newton on log sf(x) - log q, whose
        derivative is -f(x) / sf(x) (one sf and one log density call per round, all q together).

        A bracket [lo, hi] with sf(lo) > q >= sf(hi) is kept (lo = 0, hi = +inf at first); a Newton
        step that leaves it is replaced by expanding (x 8 while hi is infinite) or by bisecting
        (geometrically while hi / lo > 4). Tails near exponential (e^(-x/mu) x^k) take a handful of
        rounds even at q = 1e-300; any tail still converges, by bisection at worst.
        """
        q = np.asarray(q, dtype=float)
        out = np.where(q >= 0.5, 0.0, np.inf)  # sf(0) = 1/2 by symmetry
        active = (q > 0) & (q < 0.5)
        if not active.any():
            return out
        log_q = np.log(q[active])
        hint = self._scale_hint()
        x = np.full(log_q.shape, hint)
        lo, hi = np.zeros_like(x), np.full_like(x, np.inf)
        todo = np.arange(x.size)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for round_ in range(400):
                xs = x[todo]
                log_sf = np.log(self._sf(xs))
                gap = log_sf - log_q[todo]
                below = gap > 0  # sf(x) > q: the quantile is further out
                lo[todo] = np.where(below, xs, lo[todo])
                hi[todo] = np.where(below, hi[todo], xs)
                low, high = lo[todo], hi[todo]
                done = (np.abs(gap) <= 1e-14) | (np.isfinite(high) & (high - low <= 4e-16 * high))
                newton = xs + gap * np.exp(log_sf - self._logpdf(xs))
                inside = np.isfinite(newton) & (newton > low) & (newton < high) & (round_ % 8 != 7)
                split = np.where((low > 0) & (high > 4 * low), np.sqrt(low * high), 0.5 * (low + high))
                fallback = np.where(np.isinf(high), 8 * np.maximum(xs, hint), split)
                x[todo] = np.where(done, xs, np.where(inside, newton, fallback))
                todo = todo[~done]
                if not todo.size:
                    break
            else:
                raise ValueError("q: the quantile search did not converge for this noise")
        out[active] = x
        return out

    def _scale_hint(self) -> float:
        """A typical magnitude of the noise, where the quantile search starts."""
        return float(np.sqrt(self.var()))

    def sample(self, size: int | tuple[int, ...] | list[int] | None = None, *, rng: SeedLike = None) -> FloatOrArray:
        """Draw samples with a numpy Generator (``rng`` is a seed or Generator); ``size`` is None, a
        count or a shape, at most 1e8 values.

        Parameters
        ----------
        size : None, int or tuple of int, optional
            None for one float, a count or a shape for an array.
        rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
            Seed or Generator.

        Returns
        -------
        float or numpy.ndarray

        Raises
        ------
        TypeError
            If ``size`` or ``rng`` has the wrong type.
        ValueError
            If ``size`` has a negative count or asks for more than 1e8 values.
        """
        checked = sample_size("size", size)
        return self._sample(checked, generator(rng))

    def std(self) -> float:
        """Standard deviation sqrt(var()).

        Returns
        -------
        float
        """
        return float(np.sqrt(self.var()))

    def privacy_loss(self, distance: npt.ArrayLike) -> FloatOrArray:
        """Worst-case privacy loss sup_t |log f(t) - log f(t + distance)| (vectorised).

        ``privacy_loss(sensitivity)`` is the pure-DP epsilon of adding this noise to a
        query of that sensitivity. +inf only where the loss is genuinely infinite (Gaussian noise);
        a finite loss beyond the float range is an error naming ``distance``.

        Parameters
        ----------
        distance : array_like
            Shifts |x - x'| (the sign is ignored); finite.

        Returns
        -------
        float or numpy.ndarray
            The loss at each distance.

        Raises
        ------
        TypeError
            If ``distance`` is not real.
        ValueError
            If ``distance`` is not finite, lies outside a range the distribution states (the Arete:
            0 or [1e-6 max(theta, lam), 1e300]; ShareSum: 0 or [0.01, 1e4] mu), or a finite loss overflows.
        """
        arr = real_array("distance", distance)
        arr = np.abs(arr)
        with _far_tail():
            out: FloatArray = np.asarray(self._privacy_loss(arr), dtype=float)
        if self._finite_loss and np.isinf(out).any():
            raise ValueError(
                f"distance is too large for this noise: the privacy loss at {arr.max():g} is beyond the float range"
            )
        return _output(out, arr)

    def mse(self) -> float:
        """Mean squared error of the noise, E[Z^2] = var() (the mean is 0).

        Returns
        -------
        float
        """
        return self.var()

    _finite_loss = False  # True where every finite distance has a finite loss

    # --- the subclass interface -------------------------------------------------
    def mean_abs(self) -> float:
        """Mean absolute error E|Z|.

        Returns
        -------
        float
        """
        raise NotImplementedError

    def var(self) -> float:
        """Variance E[Z^2].

        Returns
        -------
        float
        """
        raise NotImplementedError

    def _logpdf(self, x: FloatArray) -> FloatArray:
        """log f at validated points (any sign, +-inf included)."""
        raise NotImplementedError

    def _sf(self, x: FloatArray) -> FloatArray:
        """P(Z > x) at validated points."""
        raise NotImplementedError

    def _sample(self, size: Size, rng: np.random.Generator) -> FloatOrArray:
        """Samples of a validated size from ``rng``."""
        raise NotImplementedError

    def _privacy_loss(self, d: FloatArray) -> FloatArray:
        """The privacy loss at validated distances d >= 0."""
        raise NotImplementedError

    def _repr_args(self) -> str:  # pragma: no cover - cosmetic
        """The constructor arguments shown by ``repr``."""
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()})"


def check_sensitivity(sensitivity: float) -> float:
    """Validate a query sensitivity."""
    return positive("sensitivity", sensitivity)
