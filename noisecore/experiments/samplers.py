"""Path samplers of the two mechanisms: Brownian motion and the Laplace process at decreasing times."""

from __future__ import annotations

import numpy as np

from .._base import FloatArray
from .._validation import (
    MAX_ELEMENTS,
    bounded_int,
    generator,
    real_array,
)
from ..laplace_reduction import koufogiannis_chain
from .plan import MAX_LEVELS


def _times(name: str, times_desc: object, *, strict: bool) -> FloatArray:
    """Decreasing times (strictly, and all > 0, when ``strict``; else >= 0), as a 1-d float array."""
    times = real_array(name, times_desc)
    low = "> 0" if strict else ">= 0"
    steps = np.diff(times) if times.ndim == 1 else np.zeros(0)
    bad_order = (steps >= 0) if strict else (steps > 0)
    if times.ndim != 1 or times.size == 0 or times.size > MAX_LEVELS or bad_order.any():
        raise ValueError(
            f"{name} must be a non-empty 1-d array of at most {MAX_LEVELS} {'strictly ' if strict else ''}"
            f"decreasing times {low}, got shape {times.shape}"
        )
    if (times <= 0).any() if strict else (times < 0).any():
        raise ValueError(f"{name} must hold times {low}")
    return times


def _noise_size(times: FloatArray, dim: object, trials: object) -> tuple[int, int]:
    d = bounded_int("dim", dim, 1, MAX_ELEMENTS)
    count = bounded_int("trials", trials, 1, MAX_ELEMENTS)
    if count * times.size * d > MAX_ELEMENTS:
        raise ValueError(
            f"trials x len(times_desc) x dim must be at most {MAX_ELEMENTS:g}, got {count} x {times.size} x {d}"
        )
    return d, count


def bm_noise(times_desc: FloatArray, *, dim: int, trials: int, rng: np.random.Generator) -> FloatArray:
    """B at the given decreasing times for many independent paths: shape (trials, K, dim).

    Parameters
    ----------
    times_desc : array_like
        K non-increasing times >= 0 (1 <= K <= 10,000).
    dim : int
        Dimension of the Brownian motion, >= 1.
    trials : int
        Number of independent paths, >= 1; trials * K * dim at most 1e8.
    rng : numpy.random.Generator
        Source of randomness (or a seed, as for `numpy.random.default_rng`).

    Returns
    -------
    numpy.ndarray
        Shape (trials, K, dim).

    Raises
    ------
    TypeError
        If ``times_desc`` is not a real array, ``dim`` or ``trials`` is not an integer, or
        ``rng`` is not a seed or Generator.
    ValueError
        If ``times_desc`` is not a non-empty 1-d array of finite, non-increasing times >= 0, or
        ``dim`` or ``trials`` is < 1 or their product with K is above 1e8.
    """
    times = _times("times_desc", times_desc, strict=False)
    dim, trials = _noise_size(times, dim, trials)
    rng = generator(rng)
    asc = times[::-1]
    steps = rng.standard_normal((trials, asc.size, dim)) * np.sqrt(np.diff(np.r_[0.0, asc]))[None, :, None]
    return np.cumsum(steps, axis=1)[:, ::-1]


def lnr_noise(times_desc: FloatArray, *, dim: int, trials: int, rng: np.random.Generator) -> FloatArray:
    """The Laplace process at decreasing times, one independent chain per coordinate.

    Parameters
    ----------
    times_desc : array_like
        K positive, strictly decreasing times (1 <= K <= 10,000).
    dim : int
        Number of coordinates, >= 1.
    trials : int
        Number of independent processes, >= 1; trials * K * dim at most 1e8.
    rng : numpy.random.Generator
        Source of randomness (or a seed, as for `numpy.random.default_rng`).

    Returns
    -------
    numpy.ndarray
        Shape (trials, K, dim).

    Raises
    ------
    TypeError
        If ``times_desc`` is not a real array, ``dim`` or ``trials`` is not an integer, or
        ``rng`` is not a seed or Generator.
    ValueError
        If ``times_desc`` is not a non-empty 1-d array of finite, strictly decreasing times > 0
        (within the Laplace process's range), or ``dim`` or ``trials`` is < 1 or their product
        with K is above 1e8.

    References
    ----------
    [KHP17] (Koufogiannis, Han & Pappas); Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Section 4.
    """
    times = _times("times_desc", times_desc, strict=True)
    dim, trials = _noise_size(times, dim, trials)
    try:
        chain = koufogiannis_chain(times[::-1], dim=dim, size=trials, rng=generator(rng))
    except ValueError as exc:
        raise ValueError(f"times_desc: {exc}") from None
    return chain[:, ::-1]
