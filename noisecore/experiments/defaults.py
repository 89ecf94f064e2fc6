"""The default task (synthetic stand-ins for paper A's data) and targets from a pilot."""

from __future__ import annotations

import math

import numpy as np

from .._validation import (
    SeedLike,
    bounded_int,
    generator,
    in_interval,
)
from ..tasks import (
    LogisticRegressionTask,
    MeanEstimationTask,
    RidgeRegressionTask,
    Task,
    split,
    synthetic_classification,
    synthetic_regression,
)
from ..tasks.base import _check_lam
from .plan import EPSILON_MAX, EPSILON_MIN, MAX_ROWS, MAX_TRIALS, _check_task
from .run import tradeoff_experiment


def default_task(name: str = "logistic", *, n: int = 10_000, lam: float = 0.05, rng: SeedLike = None) -> Task:
    """Synthetic stand-ins for paper A's data: n training rows and n public hold-out rows, drawn with
    ``rng`` (an integer seed gives the same data every time; the app uses seed 0).

    Parameters
    ----------
    name : {"logistic", "ridge", "mean"}, optional
        The task (default "logistic").
    n : int, optional
        Training rows, and as many hold-out rows, from 1 to 500,000 (default 10,000).
    lam : float, optional
        Regularisation strength of the logistic and ridge tasks, in [1e-12, 1e12] (default 0.05;
        the mean task uses 0).
    rng : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator, optional
        Seed or Generator for the data.

    Returns
    -------
    Task
        A `LogisticRegressionTask`, `RidgeRegressionTask` or `MeanEstimationTask` with hold-out data.

    Raises
    ------
    TypeError
        If ``name`` is not a str, or ``n``, ``lam`` or ``rng`` has the wrong type.
    ValueError
        If ``name`` is not one of the three tasks, or ``n`` or ``lam`` is out of range.

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Section 6.
    """
    if not isinstance(name, str):
        raise TypeError(f'name must be "logistic", "ridge" or "mean", got {type(name).__name__}')
    if name not in ("logistic", "ridge", "mean"):
        raise ValueError(f'name must be "logistic", "ridge" or "mean", got {name!r}')
    n = bounded_int("n", n, 1, MAX_ROWS)
    lam = _check_lam(lam)
    rng = generator(rng)
    if name == "logistic":
        (X, y), hold = split(*synthetic_classification(2 * n, rng=rng), n_train=n)
        return LogisticRegressionTask(X, y, lam=lam, holdout=hold)
    if name == "ridge":
        (X, y), hold = split(*synthetic_regression(2 * n, rng=rng), n_train=n)
        return RidgeRegressionTask(X, y, lam=lam, holdout=hold)
    X = rng.normal(0.3, 0.3, size=(2 * n, 5))  # "mean"
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    return MeanEstimationTask(X[:n], lam=0.0, holdout=X[n:])


def pilot_target(task: Task, *, trials: int = 200, rng: SeedLike = None, tuned_epsilon: float = 0.3) -> float:
    """A pilot target on the task's own training rows: optimum + BM's mean excess loss at
    ``tuned_epsilon``, the excess rounded up to two significant digits.

    It reads the (private) training rows, so its cost is outside any ex-post epsilon; the app's
    default is `public_target`, which reads only the public hold-out rows.

    Parameters
    ----------
    task : Task
        The task.
    trials : int, optional
        Pilot trials, from 1 to 1e6 (default 200).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or Generator, as for `run_experiment`.
    tuned_epsilon : float, optional
        The level the linear boundary is tuned for, and the level evaluated, in [1e-3, 1e3]
        (default 0.3).

    Returns
    -------
    float
        The target loss.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is out of range (see `run_experiment`), or the pilot's mean excess loss
        is not positive (too few trials).
    """
    _check_task(task)
    return _rounded_target(task, _pilot_excess(task, trials, rng, tuned_epsilon))


def _pilot_excess(task: Task, trials: int, rng: SeedLike, tuned_epsilon: float) -> float:
    """BM's mean excess loss at ``tuned_epsilon`` over a pilot of ``trials`` trials."""
    tuned_epsilon = in_interval("tuned_epsilon", tuned_epsilon, EPSILON_MIN, EPSILON_MAX)
    result = tradeoff_experiment(task, epsilons=[tuned_epsilon], trials=trials, tuned_epsilon=tuned_epsilon, rng=rng)
    excess = float(result.bm_mean[0]) - task.optimal_loss
    if not (math.isfinite(excess) and excess > 0):
        raise ValueError(f"trials={trials} give a mean excess loss of {excess:g} at tuned_epsilon; use more trials")
    return excess


def _rounded_target(task: Task, excess: float) -> float:
    """The optimal loss plus ``excess`` rounded up to two significant digits."""
    digits = 1 - math.floor(math.log10(excess))
    return round(task.optimal_loss + math.ceil(excess * 10**digits) / 10**digits, digits + 1)


def public_target(task: Task, *, trials: int = 200, rng: SeedLike = None, tuned_epsilon: float = 0.3) -> float:
    """The default target, from public data only: a twin task fitted on the hold-out rows.

    A twin of ``task`` is fitted on its public hold-out data alone; the target is that twin's
    optimal loss plus twice BM's mean excess loss at ``tuned_epsilon`` on it (a pilot) plus twice the
    sampling spread between two optima fitted on as many rows (estimated from halves of the hold-out
    rows), rounded up to two significant digits. No private training row is read, so choosing the
    target costs no privacy. (The private optimum differs from the public one by sampling noise: the
    margin keeps the target within what the private data can reach.)

    Parameters
    ----------
    task : Task
        A task with hold-out data.
    trials, rng, tuned_epsilon
        As for `pilot_target`.

    Returns
    -------
    float
        The target loss.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If ``task`` has no hold-out data, or as for `pilot_target`.
    """
    _check_task(task)
    if getattr(task, "holdout", None) is None:
        raise ValueError("task must have hold-out (public) data to set a target from public data")
    if isinstance(task, MeanEstimationTask) and task.holdout is not None:
        rows: tuple[np.ndarray, ...] = (np.asarray(task.holdout),)
    elif isinstance(task, LogisticRegressionTask | RidgeRegressionTask) and task.holdout is not None:
        rows = tuple(np.asarray(part) for part in task.holdout)
    else:
        raise TypeError(f"task must be a logistic, ridge or mean task, got {type(task).__name__}")
    trials = bounded_int("trials", trials, 1, MAX_TRIALS)
    twin = _twin(task, rows)
    excess = 2 * _pilot_excess(twin, trials, rng, tuned_epsilon)
    return _rounded_target(twin, excess + _sampling_margin(task, rows))


SPLITS = 8  # random halvings of the hold-out rows for the sampling margin


def _twin(task: Task, rows: tuple[np.ndarray, ...]) -> Task:
    """A task of the same kind and lam fitted on ``rows`` (public rows only)."""
    if isinstance(task, MeanEstimationTask):
        return MeanEstimationTask(rows[0], lam=task.lam)
    if isinstance(task, LogisticRegressionTask):
        return LogisticRegressionTask(rows[0], rows[1], lam=task.lam)
    return RidgeRegressionTask(rows[0], rows[1], lam=task.lam)


def _sampling_margin(task: Task, rows: tuple[np.ndarray, ...]) -> float:
    """Twice the standard deviation of the difference between the optimal loss on the hold-out rows and
    on as many other rows (the private training rows), estimated from the hold-out rows alone: over
    ``SPLITS`` fixed random halvings, E|L_A - L_B| = sqrt(2/pi) * 2 sigma / sqrt(n) for halves of n/2
    rows, while the hold-out and training optima differ by sqrt(2) sigma / sqrt(n) (one s.d.). Without it
    the mean task's default target sat below every loss the private data could reach."""
    n = len(rows[0])
    if n < 4:
        return 0.0
    order = np.random.default_rng(20261206)  # fixed: the target is a function of the public rows
    gaps = []
    for _ in range(SPLITS):
        half = order.permutation(n)
        a, b = half[: n // 2], half[n // 2 : 2 * (n // 2)]
        gaps.append(
            abs(
                _twin(task, tuple(r[a] for r in rows)).optimal_loss
                - _twin(task, tuple(r[b] for r in rows)).optimal_loss
            )
        )
    sd = float(np.mean(gaps)) / math.sqrt(2 / math.pi) / 2 * math.sqrt(2)
    return 2 * sd
