"""Dropout noise of Arete and Laplace shares: the ShareSum for a fraction present, its points and curves."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .._base import FloatArray
from .._validation import bounded_int, in_interval, positive, real_array, real_scalar
from .._validation import scale as scale_param
from ..arete import Arete
from .sharesum import MAX_DISTANCE, MAX_SHAPE, MIN_DISTANCE, ShareSum

MIN_FRACTION = 1e-6  # fractions present and Arete alphas, so that alpha * fraction >= MIN_SHAPE


def _arete_parameters(arete: Arete) -> tuple[float, float, float]:
    """(alpha, theta, lam) of an Arete-like object, or a TypeError naming ``arete``."""
    try:
        return real_scalar("arete.alpha", arete.alpha), arete.theta, arete.lam
    except AttributeError:
        raise TypeError(f"arete must be an Arete (with alpha, theta and lam), got {type(arete).__name__}") from None


def arete_dropout(arete: Arete, *, fraction: float) -> ShareSum:
    """Total noise when a ``fraction`` in (0, 1] of the users add their Arete share.

    Parameters
    ----------
    arete : Arete
        The full noise (any object with ``alpha``, ``theta`` and ``lam``).
    fraction : float
        Fraction of the users present, in [1e-6, 1].

    Returns
    -------
    ShareSum
        GG(alpha fraction, theta) + GG(fraction, lam).

    Raises
    ------
    TypeError
        If ``arete`` lacks ``alpha``, ``theta`` or ``lam``, or a number is not real.
    ValueError
        If ``fraction`` or the resulting shapes are out of range.

    References
    ----------
    Paper B [PS22] (Pagh & Stausholm), Lemma 10 (the shares) and Appendix A (distributed noise).
    """
    alpha, theta, lam = _arete_parameters(arete)
    q = _fraction(fraction)
    return ShareSum(alpha * q, theta, q, lam)


def _fraction(fraction: object) -> float:
    q = in_interval("fraction", fraction, 0.0, 1.0)
    if q < MIN_FRACTION:
        raise ValueError(
            f"fraction must be in [{MIN_FRACTION:g}, 1]: with (almost) no shares there is no noise, got {q:g}"
        )
    return q


def laplace_dropout(scale: float, *, fraction: float) -> ShareSum:
    """Total noise when a ``fraction`` of the users add their share of Laplace(scale).

    Parameters
    ----------
    scale : float
        Scale of the full Laplace noise, in [1e-100, 1e100].
    fraction : float
        Fraction of the users present, in [1e-6, 1].

    Returns
    -------
    ShareSum
        GG(fraction, scale).

    Raises
    ------
    TypeError
        If an argument is not a real number.
    ValueError
        If an argument is not finite or out of range.
    """
    q = _fraction(fraction)
    scale = scale_param("scale", scale)
    return ShareSum(0.0, scale, q, scale)


def dropout_fractions(n: int, *, fractions_present: npt.ArrayLike) -> FloatArray:
    """Fractions of ``n`` users present, rounded to whole users, repeats dropped, largest first.

    Parameters
    ----------
    n : int
        Number of users, in [1, 1e9].
    fractions_present : array_like
        Non-empty 1-d array of fractions in (0, 1].

    Returns
    -------
    numpy.ndarray
        Distinct multiples of 1/n (at least 1/n), decreasing.

    Raises
    ------
    TypeError
        If ``n`` is not an integer or ``fractions_present`` is not real.
    ValueError
        If ``n`` is out of range, or ``fractions_present`` is empty, not 1-d, not finite or
        outside (0, 1].
    """
    n = bounded_int("n", n, 1, 10**9)
    fractions = real_array("fractions_present", fractions_present)
    if fractions.ndim != 1 or fractions.size == 0 or not np.all((fractions > 0) & (fractions <= 1)):
        raise ValueError("fractions_present must be a non-empty 1-D array of fractions in (0, 1]")
    return np.unique(np.clip(np.round(fractions * n), 1, n))[::-1] / n


def dropout_point(
    alpha: float,
    theta: float,
    lam: float,
    *,
    fraction: float,
    sensitivity: float = 1.0,
    epsilon_full: float | None = None,
) -> tuple[float, float, float, float]:
    """(Arete epsilon, Arete E|Z|, Laplace epsilon, Laplace E|Z|) when a ``fraction`` of the users add
    their share of Arete(alpha, theta, lam), against shares of the Laplace noise with the same full
    epsilon (``epsilon_full``, computed when not given). ``alpha = 0`` is the Laplace limit: the Arete
    shares are then Laplace shares of scale ``lam``. Plain numbers in and out, so a call can run on any
    worker.

    Parameters
    ----------
    alpha : float
        0, or in [1e-6, 4].
    theta, lam : float
        Scales, in [1e-100, 1e100].
    fraction : float
        Fraction of the users present, in [1e-6, 1].
    sensitivity : float, optional
        In [0.01, 1e4] times max(theta, lam) (max(theta, lam) is lam when alpha = 0; default 1).
    epsilon_full : float, optional
        The full noise's certified epsilon at ``sensitivity``, in [0.01, 1e4]; computed when None.

    Returns
    -------
    tuple of float
        (Arete epsilon, Arete E|Z|, Laplace epsilon, Laplace E|Z|); an epsilon is inf where the
        total shape is at most 1/2.

    Raises
    ------
    TypeError
        If an argument is not a real number.
    ValueError
        If an argument is not finite or out of range.
    """
    alpha = real_scalar("alpha", alpha)
    if not (alpha == 0 or MIN_FRACTION <= alpha <= MAX_SHAPE):
        raise ValueError(f"alpha must be 0 or in [{MIN_FRACTION:g}, {MAX_SHAPE:g}], got {alpha}")
    theta, lam = scale_param("theta", theta), scale_param("lam", lam)
    q = _fraction(fraction)
    sensitivity = scale_param("sensitivity", sensitivity)
    mu = max(theta if alpha > 0 else 0.0, lam)
    if not MIN_DISTANCE * mu <= sensitivity <= MAX_DISTANCE * mu:
        raise ValueError(
            f"sensitivity must be in [{MIN_DISTANCE:g}, {MAX_DISTANCE:g}] times max(theta, lam) = "
            f"{mu:g}, got {sensitivity:g}"
        )
    full = ShareSum(alpha, theta, 1.0, lam)
    eps_full = float(full.privacy_loss(sensitivity)) if epsilon_full is None else positive("epsilon_full", epsilon_full)
    if not MIN_DISTANCE <= eps_full <= MAX_DISTANCE:  # the Laplace shares' scale is sensitivity / eps_full
        raise ValueError(f"epsilon_full must be in [{MIN_DISTANCE:g}, {MAX_DISTANCE:g}], got {eps_full:g}")
    arete = ShareSum(alpha * q, theta, q, lam)
    laplace = laplace_dropout(sensitivity / eps_full, fraction=q)
    return (
        float(arete.privacy_loss(sensitivity)),
        arete.mean_abs(),
        float(laplace.privacy_loss(sensitivity)),
        laplace.mean_abs(),
    )


def dropout_curves(
    arete: Arete, *, n: int, fractions_present: npt.ArrayLike, sensitivity: float = 1.0
) -> dict[str, FloatArray]:
    """Certified epsilon and E|Z| against the fraction of users present (rounded to whole users,
    repeats dropped), for the Arete's shares and for Laplace shares of the same full epsilon.

    Parameters
    ----------
    arete : Arete
        The full noise (``alpha``, ``theta``, ``lam`` and ``privacy_loss`` are used).
    n : int
        Number of users, in [1, 1e9].
    fractions_present : array_like
        Non-empty 1-d array of fractions in (0, 1].
    sensitivity : float, optional
        In [1e-100, 1e100] (default 1); see :func:`dropout_point` for its range relative to the scales.

    Returns
    -------
    dict of str to numpy.ndarray
        As :func:`dropout_table`.

    Raises
    ------
    TypeError
        If ``arete`` lacks ``alpha``, ``theta`` or ``lam``, or an argument has the wrong type.
    ValueError
        If an argument is out of range (see :func:`dropout_fractions` and :func:`dropout_point`).
    """
    alpha, theta, lam = _arete_parameters(arete)
    present = dropout_fractions(n, fractions_present=fractions_present)
    sensitivity = scale_param("sensitivity", sensitivity)
    eps_full = float(arete.privacy_loss(sensitivity))
    points = [
        dropout_point(alpha, theta, lam, fraction=q, sensitivity=sensitivity, epsilon_full=eps_full) for q in present
    ]
    return dropout_table(present, points=points)


def dropout_table(present: npt.ArrayLike, *, points: npt.ArrayLike) -> dict[str, FloatArray]:
    """The columns of :func:`dropout_curves` from its fractions and one :func:`dropout_point` each
    (epsilons may be inf: no epsilon holds below a total shape of 1/2).

    Parameters
    ----------
    present : array_like
        1-d array of fractions in (0, 1].
    points : array_like
        One :func:`dropout_point` result per fraction, shape (len(present), 4).

    Returns
    -------
    dict of str to numpy.ndarray
        Columns "fraction", "arete_epsilon", "arete_mean_abs", "laplace_epsilon" and
        "laplace_mean_abs".

    Raises
    ------
    TypeError
        If ``present`` or ``points`` is not real.
    ValueError
        If ``present`` is not 1-d or outside (0, 1], ``points`` has the wrong shape, contains NaN,
        a negative value or an infinite E|Z|.
    """
    present = np.atleast_1d(real_array("present", present))
    if present.ndim != 1 or not np.all((present > 0) & (present <= 1)):
        raise ValueError("present must be a 1-d array of fractions in (0, 1]")
    columns = np.atleast_2d(real_array("points", points, allow_inf=True))
    if columns.shape != (present.size, 4):
        raise ValueError(
            f"points must have one row of 4 values per fraction in present, shape ({present.size}, 4), "
            f"got {columns.shape}"
        )
    if (columns[:, [1, 3]] == np.inf).any() or (columns < 0).any():
        raise ValueError("points must hold epsilons >= 0 (inf allowed) and finite E|Z| >= 0")
    return {
        "fraction": present,
        "arete_epsilon": columns[:, 0],
        "arete_mean_abs": columns[:, 1],
        "laplace_epsilon": columns[:, 2],
        "laplace_mean_abs": columns[:, 3],
    }
