"""The shared task interface."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from .._base import Immutable
from .._validation import MAX_ELEMENTS, finite_result, positive, real_array, real_scalar

FloatArray: TypeAlias = npt.NDArray[np.float64]

# Regularisation strengths: n * lam, 1 / (n * lam) and the sensitivities 2 / (n lam) stay finite
# normal floats for any n up to MAX_ELEMENTS rows.
LAM_MIN, LAM_MAX = 1e-12, 1e12


def _check_lam(lam: object, *, allow_zero: bool = False) -> float:
    """``lam`` as a float in [LAM_MIN, LAM_MAX] (or 0 when ``allow_zero``), else an error naming lam.

    Parameters
    ----------
    lam : float
        Regularisation strength.
    allow_zero : bool, optional
        Accept 0 too (default False).

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``lam`` is not a real number.
    ValueError
        If ``lam`` is not finite or lies outside [1e-12, 1e12] (0 allowed when ``allow_zero``).
    """
    value = real_scalar("lam", lam)
    if allow_zero and value == 0:
        return 0.0
    if not LAM_MIN <= value <= LAM_MAX:
        low = "0 or in " if allow_zero else "in "
        raise ValueError(f"lam must be {low}[{LAM_MIN:g}, {LAM_MAX:g}], got {value:g}")
    return value


def _check_flag(name: str, value: object) -> bool:
    """``value`` as a bool (a Python or numpy bool only), else a TypeError naming ``name``.

    Parameters
    ----------
    name : str
        Parameter name used in error messages.
    value : object
        A bool.

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        If ``value`` is not a bool.
    """
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__}")
    return bool(value)


def _check_clip(clip: object) -> float | None:
    """None, or ``clip`` as a finite float > 0 (an error naming clip otherwise).

    Parameters
    ----------
    clip : float or None
        Cap on each example's loss.

    Returns
    -------
    float or None

    Raises
    ------
    TypeError
        If ``clip`` is not None or a real number.
    ValueError
        If ``clip`` is not finite or is <= 0.
    """
    return None if clip is None else positive("clip", clip)


def _check_holdout_pair(holdout: object, d: int) -> tuple[FloatArray, FloatArray] | None:
    """None, or a hold-out pair (X, y) checked as by `check_data`, with ``d`` columns.

    Parameters
    ----------
    holdout : tuple of array_like or None
        Hold-out data (X, y).
    d : int
        Number of columns the training data have.

    Returns
    -------
    tuple of numpy.ndarray or None

    Raises
    ------
    TypeError
        If ``holdout`` is not None or a pair, or an entry is not a real array.
    ValueError
        If an entry is not finite or the shapes are wrong.
    """
    if holdout is None:
        return None
    if not isinstance(holdout, tuple | list) or len(holdout) != 2:
        raise TypeError(f"holdout must be None or a pair (X, y) of arrays, got {type(holdout).__name__}")
    X, y = check_data(holdout[0], holdout[1], name="holdout X")
    if X.shape[1] != d:
        raise ValueError(f"holdout X must have {d} columns like X, got shape {X.shape}")
    return X, y


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
    y = real_array("holdout y" if name.startswith("holdout") else "y", y)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-d array (rows = examples), got shape {X.shape}")
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must be 1-d with one entry per row of {name}: got {y.shape} for {X.shape}")
    return X, y


class Task(Immutable):
    """A private statistical task released by perturbing a vector of dimension ``noise_dim``.

    Subclasses set ``noise_dim``, ``l2_sensitivity``, ``l1_sensitivity`` and ``optimum``
    and implement ``release`` (noise -> parameter) and ``_loss`` (parameters -> loss on a
    data set). ``loss_bound`` caps the per-example loss used in private accuracy checks,
    so the mean clipped loss has sensitivity ``loss_bound / n`` (replace-one neighbours).
    Immutable: the sensitivities and the optimum follow from ``lam`` and the data when the object is
    built, so setting an attribute afterwards raises (build a new task instead).

    Parameters
    ----------
    lam : float
        Regularisation strength, in [1e-12, 1e12] (so the sensitivities stay finite).

    Raises
    ------
    TypeError
        If ``lam`` is not a real number.
    ValueError
        If ``lam`` is not finite or lies outside [1e-12, 1e12].

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
        self.lam = _check_lam(lam)

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
        TypeError
            If ``noise`` is not a real array.
        ValueError
            If ``noise`` has a non-finite entry or its last dimension is not ``noise_dim``.
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
        TypeError
            If ``params`` is not a real array or ``holdout`` is not a bool.
        ValueError
            If ``params`` has a non-finite entry or last dimension other than d, if the loss
            overflows, or if ``holdout`` is set and the task has no hold-out data.
        """
        arr = self._params(params)
        holdout = _check_flag("holdout", holdout)
        return self._checked_loss(arr, holdout=holdout, clip=None)

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

        Raises
        ------
        TypeError
            If ``params`` is not a real array.
        ValueError
            If ``params`` has a non-finite entry or last dimension other than d, or the loss overflows.
        """
        arr = self._params(params)
        return self._checked_loss(arr, holdout=False, clip=self.loss_bound)

    def batch_loss(self, params: npt.ArrayLike, *, holdout: bool = False, clip: float | None = None) -> FloatArray:
        """Loss of many parameter vectors at once (tasks may trade the last digits for speed).

        Parameters
        ----------
        params : array_like
            Parameter vectors, shape (..., d).
        holdout : bool, optional
            Use the hold-out data instead of the training data (default False).
        clip : float, optional
            Cap on each example's loss, finite and > 0 (default None: no cap).

        Returns
        -------
        numpy.ndarray
            The loss, shape (...).

        Raises
        ------
        TypeError
            If ``params`` is not a real array, ``holdout`` is not a bool or ``clip`` is not a number.
        ValueError
            If ``params`` has a non-finite entry or last dimension other than d, ``clip`` is not
            finite and > 0, the loss overflows, or ``holdout`` is set and the task has no hold-out data.
        """
        arr = self._params(params)
        holdout, clip = _check_flag("holdout", holdout), _check_clip(clip)
        return self._checked_loss(arr, holdout=holdout, clip=clip)

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
        """``noise`` as a finite float array, checked to have last dimension ``noise_dim``."""
        return _stack("noise", noise, self.noise_dim)

    def _params(self, params: npt.ArrayLike) -> FloatArray:
        """``params`` as a finite float array, checked to have last dimension ``d``."""
        return _stack("params", params, self.d)

    def _checked_loss(self, params: FloatArray, *, holdout: bool, clip: float | None) -> FloatArray:
        """``_loss`` of validated arguments, or an error naming params if it overflowed."""
        with np.errstate(over="ignore", invalid="ignore"):
            loss = self._loss(params, holdout=holdout, clip=clip)
        return self._finite_loss(loss)

    @staticmethod
    def _finite_loss(loss: FloatArray) -> FloatArray:
        """``loss``, or an error naming params if it overflowed."""
        return finite_result("params", loss, "the loss")

    def _checked_release(self, noise: npt.ArrayLike, release: Callable[[FloatArray], FloatArray]) -> FloatArray:
        """``release`` of the validated ``noise``, or an error naming noise if it overflowed."""
        arr = self._noise(noise)
        try:
            with np.errstate(all="ignore"):
                params = release(arr)
        except np.linalg.LinAlgError as exc:
            raise ValueError(f"noise is too large here: the released parameter cannot be computed ({exc})") from None
        return finite_result("noise", params, "the released parameter")


def _stack(name: str, value: object, dim: int) -> FloatArray:
    """``value`` as a finite float array of shape (..., dim) with at most MAX_ELEMENTS entries."""
    arr = real_array(name, value)
    if arr.ndim == 0 or arr.shape[-1] != dim:
        raise ValueError(f"{name} must have last dimension {dim}, got shape {arr.shape}")
    if arr.size > MAX_ELEMENTS:
        raise ValueError(f"{name} must have at most {MAX_ELEMENTS:g} entries, got shape {arr.shape}")
    return arr
