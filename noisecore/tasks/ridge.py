"""Private ridge regression by covariance perturbation (Smith et al.; Ligett et al.)."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from .._validation import MAX_ELEMENTS
from .base import FloatArray, Task, _check_holdout_pair, check_data

_CHUNK = 2048


class RidgeRegressionTask(Task):
    """Loss mean((1/2)(x.beta - y)^2) + lam/2 ||beta||^2, unit-norm rows, |y| <= 1.

    Released: the d*d entries of X^T X and the d entries of X^T y, one noise vector of length
    d^2 + d. Each block has l2 sensitivity 2 (replace-one), so the whole vector has
    sqrt(8); l1 sensitivities 2d and 2 sqrt(d), together 2d + 2 sqrt(d). The parameter is
    recomputed from the noisy statistics (symmetrised, projected to positive semi-definite).

    Parameters
    ----------
    X : array_like
        Design matrix, shape (n, d), rows of l2 norm <= 1.
    y : array_like
        Targets in [-1, 1], shape (n,).
    lam : float, optional
        Regularisation strength, in [1e-12, 1e12] (default 0.05).
    holdout : tuple of array_like, optional
        Hold-out data (X, y) for ``loss(..., holdout=True)``, with as many columns as ``X``.

    Raises
    ------
    TypeError
        If an input is not a real array, ``holdout`` is not None or a pair, or ``lam`` is not a
        real number.
    ValueError
        If the shapes are wrong, an entry is not finite, |y| > 1, a row has norm > 1, ``X`` is
        too large to release (d^2 + d noise values above 1e8), or ``lam`` lies outside [1e-12, 1e12].

    References
    ----------
    [STU17] (Smith, Thakurta & Upadhyay), covariance perturbation; [LNRWW17] (Ligett et al.);
    Paper A [WWRR22], Section 6.
    """

    name = "ridge"

    def __init__(
        self,
        X: npt.ArrayLike,
        y: npt.ArrayLike,
        *,
        lam: float = 0.05,
        holdout: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
    ) -> None:
        super().__init__(lam)
        X, y = check_data(X, y)
        if (np.abs(y) > 1).any():
            raise ValueError("y must lie in [-1, 1]")
        if (np.linalg.norm(X, axis=1) > 1 + 1e-9).any():
            raise ValueError("rows of X must have l2 norm <= 1 (use normalize_rows)")
        self.X, self.y = X, y
        self.n, self.d = X.shape
        self.noise_dim = self.d * self.d + self.d
        if self.noise_dim > MAX_ELEMENTS:
            raise ValueError(f"X must have at most 9999 columns (d^2 + d noise values), got shape {X.shape}")
        self.holdout = _check_holdout_pair(holdout, self.d)
        self.gram = X.T @ X
        self.cross = X.T @ y
        self.yy = float(y @ y)
        self.l2_sensitivity = math.sqrt(8.0)
        self.l1_sensitivity = 2.0 * self.d + 2.0 * math.sqrt(self.d)
        ridge_gram = self.gram + self.n * self.lam * np.eye(self.d)
        self.optimum = np.linalg.solve(ridge_gram, self.cross)  # type: ignore[assignment]  # stubs widen dtype
        if self.holdout is not None:
            hX, hy = self.holdout
            self._holdout_stats: tuple[FloatArray, FloatArray, float, int] = (
                hX.T @ hX,
                hX.T @ hy,
                float(hy @ hy),
                hX.shape[0],
            )

    def release(self, noise: npt.ArrayLike) -> FloatArray:
        """Parameters solved from the noisy statistics: noise[..., :d*d] perturbs X^T X (row-major),
        noise[..., d*d:] perturbs X^T y."""
        return self._checked_release(noise, self._release)

    def _release(self, noise: FloatArray) -> FloatArray:
        """`release` of validated noise."""
        lead = noise.shape[:-1]
        flat = noise.reshape(-1, self.noise_dim)
        d = self.d
        out = np.empty((flat.shape[0], d))
        ridge = self.n * self.lam * np.eye(d)
        for start in range(0, flat.shape[0], _CHUNK):
            block = flat[start : start + _CHUNK]
            noisy = self.gram + block[:, : d * d].reshape(-1, d, d)
            noisy = (noisy + np.swapaxes(noisy, 1, 2)) / 2
            vals, vecs = np.linalg.eigh(noisy)
            vals = np.maximum(vals, 0.0) + self.n * self.lam
            rhs = self.cross + block[:, d * d :]
            proj = np.einsum("kji,kj->ki", vecs, rhs) / vals
            out[start : start + _CHUNK] = np.einsum("kij,kj->ki", vecs, proj)
        del ridge
        return out.reshape((*lead, d))

    def _loss(self, params: FloatArray, *, holdout: bool, clip: float | None) -> FloatArray:
        """Loss from the sufficient statistics; with ``clip``, example by example on the training data."""
        flat = params.reshape(-1, self.d)
        if clip is not None:
            out = np.empty(flat.shape[0])
            for start in range(0, flat.shape[0], _CHUNK):
                block = flat[start : start + _CHUNK]
                per_example = 0.5 * (self.X @ block.T - self.y[:, None]) ** 2
                out[start : start + _CHUNK] = np.minimum(per_example, clip).mean(axis=0)
            out += self.lam / 2 * np.sum(flat * flat, axis=1)
            return out.reshape(params.shape[:-1])
        if holdout:
            if self.holdout is None:
                raise ValueError("this task has no hold-out data")
            gram, cross, yy, n = self._holdout_stats
        else:
            gram, cross, yy, n = self.gram, self.cross, self.yy, self.n
        quad = np.einsum("ki,ij,kj->k", flat, gram, flat)
        out = 0.5 * (quad - 2 * flat @ cross + yy) / n + self.lam / 2 * np.sum(flat * flat, axis=1)
        return out.reshape(params.shape[:-1])
