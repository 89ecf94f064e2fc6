"""Mean estimation: a fast task for live demos."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from .._validation import real_array
from .base import FloatArray, Task, _check_lam

_CHUNK = 64  # parameter vectors per block when clipping example by example


class MeanEstimationTask(Task):
    """Release the mean of rows in the unit ball; loss mean((1/2)||x_i - beta||^2) + lam/2 ||beta||^2.

    The optimum is the mean shrunk by 1/(1 + lam); l2 sensitivity 2/(n (1 + lam)), l1 sqrt(d) times.

    Parameters
    ----------
    X : array_like
        Rows x_i, shape (n, d) with n, d >= 1, each of l2 norm <= 1.
    lam : float, optional
        Regularisation strength, 0 or in [1e-12, 1e12] (default 0).
    holdout : array_like, optional
        Hold-out rows for ``loss(..., holdout=True)``, shape (m, d) with m >= 1.

    Raises
    ------
    TypeError
        If ``X`` or ``holdout`` is not a real array, or ``lam`` is not a real number.
    ValueError
        If ``X`` or ``holdout`` has the wrong shape or a non-finite entry, ``X`` has a row of
        norm > 1, or ``lam`` is neither 0 nor in [1e-12, 1e12].
    """

    name = "mean"
    loss_bound = 2.0  # (1/2) ||x - beta||^2 <= 2 when both lie in the unit ball

    def __init__(self, X: npt.ArrayLike, *, lam: float = 0.0, holdout: npt.ArrayLike | None = None) -> None:
        self.lam = _check_lam(lam, allow_zero=True)
        X = real_array("X", X)
        if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
            raise ValueError(f"X must be a non-empty 2-d array, got shape {X.shape}")
        if (np.linalg.norm(X, axis=1) > 1 + 1e-9).any():
            raise ValueError("rows of X must have l2 norm <= 1")
        self.X = X
        self.n, self.d = X.shape
        self.noise_dim = self.d
        self.holdout = None if holdout is None else real_array("holdout", holdout)
        if self.holdout is not None and (
            self.holdout.ndim != 2 or self.holdout.shape[0] == 0 or self.holdout.shape[1] != self.d
        ):
            raise ValueError(
                f"holdout must be a non-empty 2-d array with {self.d} columns, got shape {self.holdout.shape}"
            )
        self.optimum = X.mean(axis=0) / (1 + self.lam)
        self.l2_sensitivity = 2 / (self.n * (1 + self.lam))
        self.l1_sensitivity = math.sqrt(self.d) * self.l2_sensitivity
        self._moments = (X.mean(axis=0), float(np.mean(np.sum(X * X, axis=1))))

    def release(self, noise: npt.ArrayLike) -> FloatArray:
        """The optimum plus noise."""
        return self._checked_release(noise, lambda arr: self.optimum + arr)

    def _data(self, holdout: bool) -> FloatArray:
        """The training rows, or the hold-out rows (an error if there are none)."""
        if not holdout:
            return self.X
        if self.holdout is None:
            raise ValueError("this task has no hold-out data")
        return self.holdout

    def _loss(self, params: FloatArray, *, holdout: bool, clip: float | None) -> FloatArray:
        """Loss of parameters (shape (..., d)); with ``clip``, each example's loss is capped first."""
        X = self._data(holdout)
        sq = np.sum(params * params, axis=-1)
        if clip is not None:
            # each example's loss is capped (not the mean), so the mean has sensitivity clip / n
            flat = params.reshape(-1, self.d)
            out = np.empty(flat.shape[0])
            for start in range(0, flat.shape[0], _CHUNK):
                block = flat[start : start + _CHUNK]
                per_example = 0.5 * np.sum((block[:, None, :] - X[None, :, :]) ** 2, axis=-1)
                out[start : start + _CHUNK] = np.minimum(per_example, clip).mean(axis=1)
            return out.reshape(params.shape[:-1]) + self.lam / 2 * sq
        if holdout:
            mean, second = X.mean(axis=0), float(np.mean(np.sum(X**2, axis=1)))
        else:
            mean, second = self._moments
        return 0.5 * (second - 2 * params @ mean + sq) + self.lam / 2 * sq
