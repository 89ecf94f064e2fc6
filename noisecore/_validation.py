"""Argument checks shared by the public API: plain messages naming the parameter."""

from __future__ import annotations

import math
import numbers
import os
from typing import SupportsFloat, TypeAlias, TypeVar

import numpy as np
import numpy.typing as npt

_T = TypeVar("_T")

#: What ``generator`` (and so every ``rng=`` argument) accepts.
SeedLike: TypeAlias = int | np.random.SeedSequence | np.random.BitGenerator | np.random.Generator | None

FLOAT_RANGE = "a finite real number (|x| <= 1.8e308)"  # what a float can hold


def value_text(value: object) -> str:
    """``value`` for an error message; a huge integer by its size (Python refuses to print one of
    over 4,300 digits, and a 400-digit one helps nobody)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        number = int(value)
        if abs(number) >= 10**20:
            digits = int(abs(number).bit_length() * math.log10(2)) + 1
            return f"{'a negative' if number < 0 else 'an'} integer of about {digits} digits"
        return str(number)
    try:
        return repr(value)
    except ValueError:  # a container holding a huge integer
        return f"a {type(value).__name__}"


def real_scalar(name: str, value: object, *, allowed: str = FLOAT_RANGE) -> float:
    """Return ``value`` as a finite float, else raise naming ``name``."""
    number: SupportsFloat
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        number = value
    elif isinstance(value, np.ndarray) and value.ndim == 0 and np.isrealobj(value):
        number = value.item()
    else:
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    try:
        result = float(number)
    except OverflowError:  # an int past 1.8e308
        raise ValueError(f"{name} must be {allowed}, got {value_text(value)}") from None
    if not np.isfinite(result):
        raise ValueError(f"{name} must be finite, got {result}")
    return result


def positive(name: str, value: object, *, allowed: str = "> 0") -> float:
    """Return ``value`` as a finite float > 0, else raise naming ``name``."""
    result = real_scalar(name, value, allowed=allowed)
    if result <= 0:
        raise ValueError(f"{name} must be > 0, got {result}")
    return result


def in_open_interval(name: str, value: object, low: float, high: float) -> float:
    """Return ``value`` as a float in the open interval (``low``, ``high``), else raise naming ``name``."""
    result = real_scalar(name, value, allowed=f"in ({low:g}, {high:g})")
    if not low < result < high:
        raise ValueError(f"{name} must be in ({low:g}, {high:g}), got {result}")
    return result


def in_interval(name: str, value: object, low: float, high: float) -> float:
    """Return ``value`` as a float in the closed interval [``low``, ``high``], else raise naming ``name``."""
    result = real_scalar(name, value, allowed=f"in [{low:g}, {high:g}]")
    if not low <= result <= high:
        raise ValueError(f"{name} must be in [{low:g}, {high:g}], got {result}")
    return result


def positive_int(name: str, value: object) -> int:
    """Return ``value`` as an int >= 1, else raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value_text(value)}")
    return int(value)


def real_array(name: str, value: object, *, allow_inf: bool = False) -> npt.NDArray[np.float64]:
    """Return ``value`` as a float array; NaN (and inf unless allowed) is rejected."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be a real number or array, got {type(value).__name__}")
    try:
        raw = np.asarray(value)
    except Exception as exc:  # pragma: no cover - numpy raises many kinds
        raise TypeError(f"{name} must be a real number or array") from exc
    if raw.dtype == object and raw.size and all(_plain_int(v) for v in raw.flat):
        # Python ints past int64: as floats if they fit, else refused by range
        try:
            return raw.astype(float)
        except OverflowError:
            raise ValueError(f"{name} must hold finite real numbers (|x| <= 1.8e308), got a huge integer") from None
    if raw.dtype == bool or not (np.issubdtype(raw.dtype, np.integer) or np.issubdtype(raw.dtype, np.floating)):
        raise TypeError(f"{name} must be a real number or array, got dtype {raw.dtype}")
    arr: npt.NDArray[np.float64] = raw.astype(float)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN")
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name} must be finite")
    return arr


def _plain_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def nonnegative_array(name: str, value: object) -> npt.NDArray[np.float64]:
    """Return ``value`` as a finite float array with no negative entry, else raise naming ``name``."""
    arr = real_array(name, value)
    if (arr < 0).any():
        raise ValueError(f"{name} must be >= 0")
    return arr


def positive_array(name: str, value: object) -> npt.NDArray[np.float64]:
    """Return ``value`` as a finite float array of entries > 0, else raise naming ``name`` and the first
    entry that is not."""
    arr = real_array(name, value)
    if (arr <= 0).any():
        raise ValueError(f"{name} must be > 0, got {arr[arr <= 0].flat[0]:g}")
    return arr


def vector_value(name: str, value: object) -> npt.NDArray[np.float64]:
    """A scalar or 1-d vector of finite reals, returned as a fresh 1-d float array."""
    arr = real_array(name, value)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a scalar or a 1-d vector, got shape {arr.shape}")
    return np.atleast_1d(arr).copy()


# Scales (noise scales, sensitivities, times, rates) live in [SCALE_MIN, SCALE_MAX], so their squares,
# reciprocals and products of a few of them stay finite normal floats.
SCALE_MIN, SCALE_MAX = 1e-100, 1e100
MAX_ELEMENTS = 10**8  # the largest array a single call will allocate


def scale(name: str, value: object) -> float:
    """A positive scale-like parameter in [SCALE_MIN, SCALE_MAX]."""
    result = positive(name, value, allowed=f"in [{SCALE_MIN:g}, {SCALE_MAX:g}]")
    if not SCALE_MIN <= result <= SCALE_MAX:
        raise ValueError(f"{name} must be in [{SCALE_MIN:g}, {SCALE_MAX:g}], got {result:g}")
    return result


def derived_scale(what: str, value: float, **given: float) -> float:
    """Check a scale computed from the arguments ``given``; an error names them all."""
    if not (np.isfinite(value) and SCALE_MIN <= value <= SCALE_MAX):
        args = ", ".join(f"{k}={v:g}" for k, v in given.items())
        raise ValueError(
            f"{args} give {what} = {value:g}, outside [{SCALE_MIN:g}, {SCALE_MAX:g}]; "
            f"move {' or '.join(given)} towards 1"
        )
    return float(value)


def bounded_int(name: str, value: object, low: int = 1, high: int = MAX_ELEMENTS) -> int:
    """An integer (not a bool) in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    number = int(value)
    if not low <= number <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high:g}], got {value_text(value)}")
    return number


def sample_size(name: str, value: object, per_item: int = 1) -> int | tuple[int, ...] | None:
    """None, a count >= 0 or a tuple of them, with at most MAX_ELEMENTS values in all."""
    if value is None:
        return None
    raw = value if isinstance(value, (tuple, list)) else (value,)
    dims = tuple(bounded_int(name, d, 0, MAX_ELEMENTS) for d in raw)
    if int(np.prod(dims, dtype=float)) * per_item > MAX_ELEMENTS:
        raise ValueError(f"{name} asks for more than {MAX_ELEMENTS:g} values, got {value_text(value)}")
    return dims if isinstance(value, (tuple, list)) else dims[0]


def file_path(name: str, value: object) -> str | os.PathLike[str]:
    """A file path: a str or a path-like object, else a TypeError naming ``name``."""
    if isinstance(value, str | os.PathLike):
        return value
    raise TypeError(f"{name} must be a str or a path-like object, got {type(value).__name__}")


def generator(rng: SeedLike) -> np.random.Generator:
    """np.random.default_rng(rng), with an error that names rng."""
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"rng must be None, an integer seed >= 0, a SeedSequence or a numpy Generator, got {rng!r}"
        ) from exc


def finite_result(name: str, value: _T, what: str) -> _T:
    """Raise naming ``name`` if a computed result overflowed (or is NaN)."""
    arr = np.asarray(value)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} is too large or too small here: {what} is beyond the float range")
    return value
