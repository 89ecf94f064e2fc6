"""The shared task interface."""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from .._validation import positive, real_array

FloatArray: TypeAlias = npt.NDArray[np.float64]


def check_data(X: npt.ArrayLike, y: npt.ArrayLike, *, name: str = "X") -> tuple[FloatArray, FloatArray]:
    """Validate a design matrix and targets: 2-d, non-empty, finite, matching lengths.

    Parameters
    ----------
    X : array_like
        Design matrix, shape (n, d) with n, d >= 1.
    y : array_like
        Targets, shape (n,).
    name : str, optional
        Name of ``X`` in error messages (default "X").

    Returns
    -------
    X, y : numpy.ndarray
        Float copies of the inputs.

    Raises
    ------
    TypeError
        If either input is not a real array.
    ValueError
        If an entry is not finite or the shapes are wrong.
    """
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

    Parameters
    ----------
    lam : float
        Regularisation strength, finite and > 0.

    Raises
    ------
    TypeError
        If ``lam`` is not a real number.
    ValueError
        If ``lam`` is not finite or is <= 0.

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Section 6.
    """

    name = "task"
    noise_dim: int
    l2_sensitivity: float
    l1_sensitivity: float
    optimum: FloatArray
    loss_bound = 5.0
    n: int  # training examples
    d: int  # parameter dimension

    def __init__(self, lam: float) -> None:
        self.lam = positive("lam", lam)

    def release(self, noise: npt.ArrayLike) -> FloatArray:
        """The released parameter for a noise vector (or a stack of them).

        Parameters
        ----------
        noise : array_like
            Shape (..., noise_dim).

        Returns
        -------
        numpy.ndarray
            Parameters, shape (..., d).

        Raises
        ------
        ValueError
            If the last dimension of ``noise`` is not ``noise_dim``.
        """
        raise NotImplementedError

    def loss(self, params: npt.ArrayLike, *, holdout: bool = False) -> FloatArray:
        """Regularized loss of parameters (shape (..., d)) on the training or hold-out data.

        Parameters
        ----------
        params : array_like
            Parameter vectors, shape (..., d).
        holdout : bool, optional
            Use the hold-out data instead of the training data (default False).

        Returns
        -------
        numpy.ndarray
            The loss, shape (...).

        Raises
        ------
        ValueError
            If ``holdout`` is set and the task has no hold-out data.
        """
        params = np.asarray(params, dtype=float)
        return self._loss(params, holdout=holdout, clip=None)

    def clipped_loss(self, params: npt.ArrayLike) -> FloatArray:
        """Training loss with each example's loss capped at ``loss_bound`` (for private checks).

        Parameters
        ----------
        params : array_like
            Parameter vectors, shape (..., d).

        Returns
        -------
        numpy.ndarray
            The loss, shape (...); its sensitivity is ``utility_sensitivity``.
        """
        return self._loss(np.asarray(params, dtype=float), holdout=False, clip=self.loss_bound)

    def batch_loss(self, params: npt.ArrayLike, *, holdout: bool = False, clip: float | None = None) -> FloatArray:
        """Loss of many parameter vectors at once (tasks may trade the last digits for speed).

        Parameters
        ----------
        params : array_like
            Parameter vectors, shape (..., d).
        holdout : bool, optional
            Use the hold-out data instead of the training data (default False).
        clip : float, optional
            Cap on each example's loss (default None: no cap).

        Returns
        -------
        numpy.ndarray
            The loss, shape (...).

        Raises
        ------
        ValueError
            If ``holdout`` is set and the task has no hold-out data.
        """
        return self._loss(np.asarray(params, dtype=float), holdout=holdout, clip=clip)

    @property
    def utility_sensitivity(self) -> float:
        """Sensitivity ``loss_bound / n`` of the mean clipped loss (replace-one neighbours)."""
        return self.loss_bound / self.n

    def _loss(self, params: FloatArray, *, holdout: bool, clip: float | None) -> FloatArray:
        """Loss of validated parameters (shape (..., d)), each example's loss capped at ``clip`` if given."""
        raise NotImplementedError

    @property
    def optimal_loss(self) -> float:
        """Training loss of the non-private ``optimum``."""
        return float(self.loss(self.optimum))

    def _noise(self, noise: npt.ArrayLike) -> FloatArray:
        """``noise`` as a float array, checked to have last dimension ``noise_dim``."""
        arr = np.asarray(noise, dtype=float)
        if arr.shape[-1] != self.noise_dim:
            raise ValueError(f"noise must have last dimension {self.noise_dim}, got shape {arr.shape}")
        return arr
