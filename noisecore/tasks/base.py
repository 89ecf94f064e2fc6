"""The shared task interface."""

from __future__ import annotations

import numpy as np

from .._validation import positive, real_array


def check_data(X, y, *, name="X"):
    """Validate a design matrix and targets: 2-d, non-empty, finite, matching lengths."""
    X = real_array(name, X)
    y = real_array("y", y)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-d array (rows = examples), got shape {X.shape}")
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must be 1-d with one entry per row of {name}: got {y.shape} for {X.shape}")
    return X, y


class Task:
    """A private statistical task released by perturbing a vector of dimension ``noise_dim``.

    Subclasses set ``noise_dim``, ``l2_sensitivity``, ``l1_sensitivity`` and ``optimum``
    and implement ``release`` (noise -> parameter) and ``_loss`` (parameters -> loss on a
    data set). ``loss_bound`` caps the per-example loss used in private accuracy checks,
    so the mean clipped loss has sensitivity ``loss_bound / n`` (replace-one neighbours).
    """

    name = "task"
    noise_dim: int
    l2_sensitivity: float
    l1_sensitivity: float
    optimum: np.ndarray
    loss_bound = 5.0

    def __init__(self, lam):
        self.lam = positive("lam", lam)

    def release(self, noise) -> np.ndarray:
        raise NotImplementedError

    def loss(self, params, *, holdout=False) -> np.ndarray:
        """Regularized loss of parameters (shape (..., d)) on the training or hold-out data."""
        params = np.asarray(params, dtype=float)
        return self._loss(params, holdout=holdout, clip=None)

    def clipped_loss(self, params) -> np.ndarray:
        """Training loss with each example's loss capped at ``loss_bound`` (for private checks)."""
        return self._loss(np.asarray(params, dtype=float), holdout=False, clip=self.loss_bound)

    def batch_loss(self, params, *, holdout=False, clip=None) -> np.ndarray:
        """Loss of many parameter vectors at once (tasks may trade the last digits for speed)."""
        return self._loss(np.asarray(params, dtype=float), holdout=holdout, clip=clip)

    @property
    def utility_sensitivity(self) -> float:
        return self.loss_bound / self.n

    def _loss(self, params, *, holdout, clip):
        raise NotImplementedError

    @property
    def optimal_loss(self) -> float:
        return float(self.loss(self.optimum))

    def _noise(self, noise) -> np.ndarray:
        arr = np.asarray(noise, dtype=float)
        if arr.shape[-1] != self.noise_dim:
            raise ValueError(f"noise must have last dimension {self.noise_dim}, got shape {arr.shape}")
        return arr
