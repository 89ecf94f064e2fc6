"""log 1F1(a; c; -z) for the ShareSum density: scipy's values and cached Chebyshev tables for batches."""

from __future__ import annotations

import math
import threading

import numpy as np
import numpy.typing as npt
from scipy import fft, special

from .._arete_quadrature import _chebyshev_log
from .._base import FloatArray

# Batches of log 1F1(a; c; -z) take z in [1e-6, 1e6] from a per-(a, c) table: Chebyshev interpolants
# in s = log z on panels of width 1/2, each checked against scipy between its nodes when built (a
# table that misses 1e-12, scipy's own accuracy near z = 2, is not used); below 1e-6 two terms of the
# series are exact to ~z^3.
_HYP_S0, _HYP_WIDTH, _HYP_PANELS, _HYP_DEGREE = math.log(1e-6), 0.5, 56, 16
_HYP_MIN_BATCH = 512
# The process-wide cache (worker threads share it): every read and write holds _HYP_LOCK, so a table
# evicted by one thread is never looked up by another between its check and its read.
_HYP_MAX_TABLES = 32
_HYP_TABLES: dict[tuple[float, float], FloatArray | None] = {}
_HYP_LOCK = threading.Lock()


def _hyp1f1_table(a: float, c: float) -> FloatArray | None:
    """Chebyshev coefficients (degree, panel) of log 1F1(a; c; -e^s), cached per (a, c); None if the
    interpolant misses scipy's values by more than 1e-12 between the nodes."""
    key = (a, c)
    with _HYP_LOCK:
        if key in _HYP_TABLES:
            return _HYP_TABLES[key]
    # built outside the lock: two threads may build the same table, with the same result
    m = _HYP_DEGREE
    nodes = np.cos(np.pi * (np.arange(m) + 0.5) / m)
    s = _HYP_S0 + _HYP_WIDTH * (np.arange(_HYP_PANELS)[:, None] + 0.5 + 0.5 * nodes)
    coef = fft.dct(_log_hyp1f1_direct(a, c, np.exp(s)), type=2, axis=1) / m
    coef[:, 0] /= 2
    coef = np.ascontiguousarray(coef.T)
    check = (_HYP_S0 + _HYP_WIDTH * (np.arange(_HYP_PANELS)[:, None] + np.array([0.07, 0.31, 0.5, 0.77]))).ravel()
    exact = _log_hyp1f1_direct(a, c, np.exp(check))
    error = np.abs(_chebyshev_log(coef, check, _HYP_S0, _HYP_WIDTH) - exact)
    table = coef if bool(np.all(error <= 1e-12 * np.maximum(1.0, np.abs(exact)))) else None
    if table is not None:
        table.flags.writeable = False  # shared by every thread that reads it
    with _HYP_LOCK:
        if key not in _HYP_TABLES and len(_HYP_TABLES) >= _HYP_MAX_TABLES:
            _HYP_TABLES.pop(next(iter(_HYP_TABLES)))
        _HYP_TABLES[key] = table
    return table


def _log_hyp1f1_negative(a: float, c: float, z: npt.ArrayLike) -> FloatArray:
    """log 1F1(a; c; -z) for z >= 0, 0 < a < c: from the (a, c) table for large batches, else direct."""
    z = np.asarray(z, dtype=float)
    table = _hyp1f1_table(a, c) if z.size >= _HYP_MIN_BATCH else None
    if table is None:
        return _log_hyp1f1_direct(a, c, z)
    flat = z.ravel()
    out = np.empty(flat.shape)
    small = flat < 1e-6
    inside = ~small & (flat <= 1e6)
    out[inside] = _chebyshev_log(table, np.log(flat[inside]), _HYP_S0, _HYP_WIDTH)
    zs = flat[small]
    out[small] = np.log1p(-a / c * zs + a * (a + 1) / (2 * c * (c + 1)) * zs * zs)
    large = ~small & ~inside
    if large.any():
        out[large] = _log_hyp1f1_direct(a, c, flat[large])
    return out.reshape(z.shape)


def _log_hyp1f1_direct(a: float, c: float, z: npt.ArrayLike) -> FloatArray:
    """log 1F1(a; c; -z) for z >= 0, 0 < a < c, by scipy. Where its value underflows (z large), the
    asymptotic series Gamma(c)/Gamma(c-a) z^-a sum_s (a)_s (a-c+1)_s / s! z^-s (DLMF 13.7.2)."""
    z = np.asarray(z, dtype=float)
    value = special.hyp1f1(a, c, -z)
    ok = (value > 0) & np.isfinite(value)
    out = np.empty(z.shape)
    out[ok] = np.log(value[ok])
    if not ok.all():
        zb = z[~ok]
        term, total = np.ones(zb.shape), np.ones(zb.shape)
        for k in range(4):
            term = term * (a + k) * (a - c + 1 + k) / ((k + 1) * zb)
            total = total + term
        out[~ok] = special.gammaln(c) - special.gammaln(c - a) - a * np.log(zb) + np.log(total)
    return out
