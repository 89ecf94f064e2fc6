"""Argument checks shared by the public API: plain messages naming the parameter."""

from __future__ import annotations

import numbers

import numpy as np


def real_scalar(name: str, value) -> float:
    """Return ``value`` as a finite float, else raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        if isinstance(value, np.ndarray) and value.ndim == 0 and np.isrealobj(value):
            value = value.item()
        else:
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def positive(name: str, value) -> float:
    value = real_scalar(name, value)
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


def in_open_interval(name: str, value, low: float, high: float) -> float:
    value = real_scalar(name, value)
    if not low < value < high:
        raise ValueError(f"{name} must be in ({low:g}, {high:g}), got {value}")
    return value


def in_interval(name: str, value, low: float, high: float) -> float:
    value = real_scalar(name, value)
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{low:g}, {high:g}], got {value}")
    return value


def positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


def real_array(name: str, value, *, allow_inf: bool = False) -> np.ndarray:
    """Return ``value`` as a float array; NaN (and inf unless allowed) is rejected."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be a real number or array, got {type(value).__name__}")
    try:
        arr = np.asarray(value)
    except Exception as exc:  # pragma: no cover - numpy raises many kinds
        raise TypeError(f"{name} must be a real number or array") from exc
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must be a real number or array, got dtype {arr.dtype}")
    arr = arr.astype(float)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN")
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name} must be finite")
    return arr


def nonnegative_array(name: str, value) -> np.ndarray:
    arr = real_array(name, value)
    if (arr < 0).any():
        raise ValueError(f"{name} must be >= 0")
    return arr


def vector_value(name: str, value) -> np.ndarray:
    """A scalar or 1-d vector of finite reals, returned as a fresh 1-d float array."""
    arr = real_array(name, value)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a scalar or a 1-d vector, got shape {arr.shape}")
    return np.atleast_1d(arr).copy()


# Scales (noise scales, sensitivities, times, rates) live in [SCALE_MIN, SCALE_MAX], so their squares,
# reciprocals and products of a few of them stay finite normal floats.
SCALE_MIN, SCALE_MAX = 1e-100, 1e100
MAX_ELEMENTS = 10**8  # the largest array a single call will allocate


def scale(name: str, value) -> float:
    """A positive scale-like parameter in [SCALE_MIN, SCALE_MAX]."""
    value = positive(name, value)
    if not SCALE_MIN <= value <= SCALE_MAX:
        raise ValueError(f"{name} must be in [{SCALE_MIN:g}, {SCALE_MAX:g}], got {value:g}")
    return value


def derived_scale(what: str, value: float, **given) -> float:
    """Check a scale computed from the arguments ``given``; an error names them all."""
    if not (np.isfinite(value) and SCALE_MIN <= value <= SCALE_MAX):
        args = ", ".join(f"{k}={v:g}" for k, v in given.items())
        raise ValueError(
            f"{args} give {what} = {value:g}, outside [{SCALE_MIN:g}, {SCALE_MAX:g}]; "
            f"move {' or '.join(given)} towards 1"
        )
    return float(value)


def bounded_int(name: str, value, low: int = 1, high: int = MAX_ELEMENTS) -> int:
    """An integer (not a bool) in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high:g}], got {value}")
    return int(value)


def sample_size(name: str, value, per_item: int = 1):
    """None, a count >= 0 or a tuple of them, with at most MAX_ELEMENTS values in all."""
    if value is None:
        return None
    dims = value if isinstance(value, (tuple, list)) else (value,)
    dims = tuple(bounded_int(name, d, 0, MAX_ELEMENTS) for d in dims)
    if int(np.prod(dims, dtype=float)) * per_item > MAX_ELEMENTS:
        raise ValueError(f"{name} asks for more than {MAX_ELEMENTS:g} values, got {value}")
    return dims if isinstance(value, (tuple, list)) else dims[0]


def generator(rng) -> np.random.Generator:
    """np.random.default_rng(rng), with an error that names rng."""
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"rng must be None, an integer seed >= 0, a SeedSequence or a numpy Generator, got {rng!r}"
        ) from exc


def finite_result(name: str, value, what: str):
    """Raise naming ``name`` if a computed result overflowed (or is NaN)."""
    arr = np.asarray(value)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} is too large or too small here: {what} is beyond the float range")
    return value
