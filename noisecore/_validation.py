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
