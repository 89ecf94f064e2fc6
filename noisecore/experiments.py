"""Paper A's experiments: privacy/loss trade-off curves and stopping rules, vectorised over trials.

Both mechanisms are simulated exactly on the grid of privacy levels:

- Brownian mechanism (BM): the noise at the times T_k = psi^{-1}(eps_k) of a linear boundary
  tuned for ``tuned_epsilon`` is one Brownian motion sampled at those times (the rewind's
  joint law), so its ex-post epsilon at level k is psi(T_k) = eps_k, with failure probability delta;
- Laplace noise reduction (LNR): the Laplace process at times D1/eps_k, i.e. the Koufogiannis
  chain, one independent chain per coordinate; its ex-post epsilon is eps_k.

Stopping rules: a public hold-out set, AboveThreshold with a fixed epsilon (cost eps_N + eps_AT),
ReducedAboveThreshold with the same schedule (cost 2 eps_N, Theorem 5.1 / Corollary 5.2), and the
doubling baseline noise reduction replaces (fresh Laplace releases at eps_0 2^j, paying the sum).
The experiments are those of paper A [WWRR22], Section 6.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from ._base import FloatArray
from ._validation import (
    MAX_ELEMENTS,
    SeedLike,
    bounded_int,
    generator,
    in_interval,
    in_open_interval,
    positive,
    real_array,
    value_text,
)
from .boundaries import LinearBoundary
from .laplace_reduction import koufogiannis_chain
from .tasks import (
    LogisticRegressionTask,
    MeanEstimationTask,
    RidgeRegressionTask,
    Task,
    split,
    synthetic_classification,
    synthetic_regression,
)
from .tasks.base import _check_lam
from .threshold import simulate_above_threshold_stopping, simulate_rat_stopping

__all__ = [
    "DEFAULT_TARGETS",
    "STOPPING_RULES",
    "ChunkResult",
    "ExperimentResult",
    "StoppingResult",
    "TradeoffResult",
    "chunk_plan",
    "combine_chunks",
    "default_epsilons",
    "default_task",
    "experiment_chunk",
    "pilot_target",
    "planned_chunk",
    "public_target",
    "run_experiment",
    "stopping_experiment",
    "tradeoff_experiment",
]

# Targets for the synthetic data, from public data only: ``public_target`` (a twin task fitted on the
# hold-out rows, its optimum plus twice BM's mean excess loss at eps = 0.3 in a 200-trial pilot, seed 0,
# rounded up); a test keeps them in step. Paper A gives only its own values (0.41 and 0.025), not a rule.
DEFAULT_TARGETS = {"logistic": 0.39434, "ridge": 0.0463, "mean": 0.1827415}

Progress: TypeAlias = Callable[[float], None]
#: One chunk of a plan: (number of trials, its child seed).
PlannedChunk: TypeAlias = tuple[int, np.random.SeedSequence]
#: ``mapper(func, chunks)``: like the built-in ``map``, returning the results in order.
Mapper: TypeAlias = Callable[
    [Callable[[PlannedChunk], "ChunkResult"], Iterable[PlannedChunk]],
    Iterable["ChunkResult"],
]
RuleKey: TypeAlias = tuple[str, str]
IndexArray: TypeAlias = npt.NDArray[np.intp]
CHUNK_TRIALS = 25  # trials per chunk; each chunk has its own child seed
# Limits. The app runs at most 1,000 trials of at most 60 levels in [0.16, 20] on 10,000 rows
# (README, dashboard/explorer.py, benchmarks/bench_experiments.py); the limits leave 1000x room
# for trials, 100x for levels and rows, and keep every derived time, scale and array finite.
MAX_TRIALS = 10**6  # trials of one experiment (paper A: 1,000)
MAX_LEVELS = 10_000  # privacy levels of one experiment (paper A: 60)
MAX_ROWS = 500_000  # training rows of default_task (as many again are hold-out rows)
EPSILON_MIN, EPSILON_MAX = 1e-3, 1e3  # privacy levels, tuned_epsilon and at_epsilon


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


def default_epsilons(count: int = 60, *, low: float = 0.16, high: float = 5.0) -> FloatArray:
    """Log-spaced privacy levels; the low end sits just above the tuned linear boundary's floor (0.149).

    Parameters
    ----------
    count : int, optional
        Number of levels, from 1 to 10,000 (default 60).
    low, high : float, optional
        The first and last level, in [1e-3, 1e3] with ``low`` < ``high`` (``low`` <= ``high``
        for one level; default 0.16 and 5).

    Returns
    -------
    numpy.ndarray
        ``count`` levels, geometrically spaced from ``low`` to ``high``.

    Raises
    ------
    TypeError
        If ``count`` is not an integer, or ``low`` or ``high`` is not a real number.
    ValueError
        If ``count`` is outside [1, 10,000], ``low`` or ``high`` is not finite or lies outside
        [1e-3, 1e3], or ``low`` is not below ``high``.
    """
    count = bounded_int("count", count, 1, MAX_LEVELS)
    low = in_interval("low", low, EPSILON_MIN, EPSILON_MAX)
    high = in_interval("high", high, EPSILON_MIN, EPSILON_MAX)
    if low > high or (low == high and count > 1):
        raise ValueError(f"low must be < high, got low={low:g}, high={high:g}")
    return np.geomspace(low, high, count)


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
    optimal loss plus twice BM's mean excess loss at ``tuned_epsilon`` on it (a pilot), the excess
    rounded up to two significant digits. No private training row is read, so choosing the
    target costs no privacy. (Twice: the private optimum differs from the public one by sampling
    noise, so a target of one excess can sit below what the private data can reach.)

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
    twin: Task
    if isinstance(task, MeanEstimationTask) and task.holdout is not None:
        twin = MeanEstimationTask(task.holdout, lam=task.lam)
    elif isinstance(task, LogisticRegressionTask | RidgeRegressionTask) and task.holdout is not None:
        twin = type(task)(*task.holdout, lam=task.lam)
    else:
        raise TypeError(f"task must be a logistic, ridge or mean task, got {type(task).__name__}")
    trials = bounded_int("trials", trials, 1, MAX_TRIALS)
    return _rounded_target(twin, 2 * _pilot_excess(twin, trials, rng, tuned_epsilon))


def _check_levels(epsilons: npt.ArrayLike) -> FloatArray:
    eps = np.atleast_1d(real_array("epsilons", epsilons))
    if eps.ndim != 1 or eps.size == 0 or (eps <= 0).any() or (np.diff(eps) <= 0).any():
        raise ValueError("epsilons must be a non-empty, strictly increasing 1-d array of positive numbers")
    if eps.size > MAX_LEVELS:
        raise ValueError(f"epsilons must hold at most {MAX_LEVELS} levels, got {eps.size}")
    if eps[-1] > EPSILON_MAX:
        raise ValueError(f"epsilons must be at most {EPSILON_MAX:g}, got {eps[-1]:g}")
    return eps


def _check_task(task: object) -> Task:
    if not isinstance(task, Task):
        raise TypeError(f"task must be a noisecore.tasks Task, got {type(task).__name__}")
    return task


def _check_callable(name: str, value: object) -> None:
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be None or a callable, got {type(value).__name__}")


def _check_target(target: object) -> float | None:
    return None if target is None else positive("target", target)


def _check_count(name: str, count: object, task: Task, levels: int) -> int:
    """A number of trials in [1, MAX_TRIALS] whose noise (count x levels x noise_dim) fits MAX_ELEMENTS."""
    value = bounded_int(name, count, 1, MAX_TRIALS)
    if value * levels * task.noise_dim > MAX_ELEMENTS:
        most = max(1, MAX_ELEMENTS // (levels * task.noise_dim))
        raise ValueError(
            f"{name} must be at most {most} here ({levels} levels x {task.noise_dim} noise values per trial "
            f"stay within {MAX_ELEMENTS:g} values), got {value}"
        )
    return value


def _times(name: str, times_desc: object, *, strict: bool) -> FloatArray:
    """Decreasing times (strictly, and all > 0, when ``strict``; else >= 0), as a 1-d float array."""
    times = real_array(name, times_desc)
    low = "> 0" if strict else ">= 0"
    steps = np.diff(times) if times.ndim == 1 else np.zeros(0)
    bad_order = (steps >= 0) if strict else (steps > 0)
    if times.ndim != 1 or times.size == 0 or times.size > MAX_LEVELS or bad_order.any():
        raise ValueError(
            f"{name} must be a non-empty 1-d array of at most {MAX_LEVELS} {'strictly ' if strict else ''}"
            f"decreasing times {low}, got shape {times.shape}"
        )
    if (times <= 0).any() if strict else (times < 0).any():
        raise ValueError(f"{name} must hold times {low}")
    return times


def _noise_size(times: FloatArray, dim: object, trials: object) -> tuple[int, int]:
    d = bounded_int("dim", dim, 1, MAX_ELEMENTS)
    count = bounded_int("trials", trials, 1, MAX_ELEMENTS)
    if count * times.size * d > MAX_ELEMENTS:
        raise ValueError(
            f"trials x len(times_desc) x dim must be at most {MAX_ELEMENTS:g}, got {count} x {times.size} x {d}"
        )
    return d, count


def bm_noise(times_desc: FloatArray, *, dim: int, trials: int, rng: np.random.Generator) -> FloatArray:
    """B at the given decreasing times for many independent paths: shape (trials, K, dim).

    Parameters
    ----------
    times_desc : array_like
        K non-increasing times >= 0 (1 <= K <= 10,000).
    dim : int
        Dimension of the Brownian motion, >= 1.
    trials : int
        Number of independent paths, >= 1; trials * K * dim at most 1e8.
    rng : numpy.random.Generator
        Source of randomness (or a seed, as for `numpy.random.default_rng`).

    Returns
    -------
    numpy.ndarray
        Shape (trials, K, dim).

    Raises
    ------
    TypeError
        If ``times_desc`` is not a real array, ``dim`` or ``trials`` is not an integer, or
        ``rng`` is not a seed or Generator.
    ValueError
        If ``times_desc`` is not a non-empty 1-d array of finite, non-increasing times >= 0, or
        ``dim`` or ``trials`` is < 1 or their product with K is above 1e8.
    """
    times = _times("times_desc", times_desc, strict=False)
    dim, trials = _noise_size(times, dim, trials)
    rng = generator(rng)
    asc = times[::-1]
    steps = rng.standard_normal((trials, asc.size, dim)) * np.sqrt(np.diff(np.r_[0.0, asc]))[None, :, None]
    return np.cumsum(steps, axis=1)[:, ::-1]


def lnr_noise(times_desc: FloatArray, *, dim: int, trials: int, rng: np.random.Generator) -> FloatArray:
    """The Laplace process at decreasing times, one independent chain per coordinate.

    Parameters
    ----------
    times_desc : array_like
        K positive, strictly decreasing times (1 <= K <= 10,000).
    dim : int
        Number of coordinates, >= 1.
    trials : int
        Number of independent processes, >= 1; trials * K * dim at most 1e8.
    rng : numpy.random.Generator
        Source of randomness (or a seed, as for `numpy.random.default_rng`).

    Returns
    -------
    numpy.ndarray
        Shape (trials, K, dim).

    Raises
    ------
    TypeError
        If ``times_desc`` is not a real array, ``dim`` or ``trials`` is not an integer, or
        ``rng`` is not a seed or Generator.
    ValueError
        If ``times_desc`` is not a non-empty 1-d array of finite, strictly decreasing times > 0
        (within the Laplace process's range), or ``dim`` or ``trials`` is < 1 or their product
        with K is above 1e8.

    References
    ----------
    [KHP17] (Koufogiannis, Han & Pappas); Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Section 4.
    """
    times = _times("times_desc", times_desc, strict=True)
    dim, trials = _noise_size(times, dim, trials)
    try:
        chain = koufogiannis_chain(times[::-1], dim=dim, size=trials, rng=generator(rng))
    except ValueError as exc:
        raise ValueError(f"times_desc: {exc}") from None
    return chain[:, ::-1]


def _band(values: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Mean over axis 0 and its pointwise 95% normal band (zero width for one row)."""
    mean = values.mean(axis=0)
    half = 1.96 * values.std(axis=0, ddof=1) / math.sqrt(values.shape[0]) if values.shape[0] > 1 else 0 * mean
    return mean, mean - half, mean + half


@dataclass(frozen=True, slots=True)
class TradeoffResult:
    """Mean training loss per privacy level for BM and LNR, with pointwise 95% confidence bands.

    Attributes
    ----------
    task : str
        The task's name.
    epsilons : numpy.ndarray
        The privacy levels, shape (K,).
    bm_mean, bm_low, bm_high : numpy.ndarray
        Brownian mechanism: mean loss and band, shape (K,) each.
    lnr_mean, lnr_low, lnr_high : numpy.ndarray
        Laplace noise reduction: mean loss and band, shape (K,) each.
    optimal_loss : float
        Training loss of the non-private optimum.
    trials : int
        Number of trials.
    delta : float
        The linear boundary's delta.
    tuned_epsilon : float
        The level the linear boundary is tuned for.
    """

    task: str
    epsilons: FloatArray
    bm_mean: FloatArray
    bm_low: FloatArray
    bm_high: FloatArray
    lnr_mean: FloatArray
    lnr_low: FloatArray
    lnr_high: FloatArray
    optimal_loss: float
    trials: int
    delta: float
    tuned_epsilon: float

    def rows(self) -> tuple[list[str], FloatArray]:
        """(header, rows): one row per level: epsilon, then the BM and LNR mean, low and high.

        Returns
        -------
        header : list of str
            The 7 column names.
        rows : numpy.ndarray
            Shape (K, 7).
        """
        header = ["epsilon", "bm_mean", "bm_low", "bm_high", "lnr_mean", "lnr_low", "lnr_high"]
        cols = [self.epsilons, self.bm_mean, self.bm_low, self.bm_high, self.lnr_mean, self.lnr_low, self.lnr_high]
        return header, np.column_stack(cols)


@dataclass(frozen=True, slots=True)
class StoppingResult:
    """Ex-post epsilon per trial for each (mechanism, rule); NaN where the target was never met.

    Attributes
    ----------
    task : str
        The task's name.
    target : float
        The target loss.
    epsilons : numpy.ndarray
        The privacy levels, shape (K,).
    ex_post : dict
        (mechanism, rule) -> ex-post epsilon per trial, NaN where the target was never met; the
        keys are `STOPPING_RULES`.
    stop_index : dict
        (mechanism, rule) -> 0-based index of the stopping level per trial, -1 if none.
    """

    task: str
    target: float
    epsilons: FloatArray
    ex_post: dict[RuleKey, FloatArray]
    stop_index: dict[RuleKey, IndexArray]

    def rows(self) -> tuple[list[str], FloatArray]:
        """(header, rows): one row per trial, one ex-post epsilon column per (mechanism, rule); NaN where
        the target was never met.

        Returns
        -------
        header : list of str
            "trial", then "<mechanism>_<rule>" per column.
        rows : numpy.ndarray
            Shape (trials, 1 + number of rules).
        """
        keys = list(self.ex_post)
        header = ["trial"] + [f"{mech}_{rule}" for mech, rule in keys]
        trials = len(self.ex_post[keys[0]])
        return header, np.column_stack([np.arange(trials)] + [self.ex_post[k] for k in keys])

    def summary(self) -> dict[RuleKey, tuple[float, float]]:
        """(mechanism, rule) -> (median ex-post epsilon over trials that stopped, fraction stopped).

        The median is NaN when no trial stopped.

        Returns
        -------
        dict
            (mechanism, rule) -> (median, fraction), floats.
        """
        table: dict[RuleKey, tuple[float, float]] = {}
        for key, values in self.ex_post.items():
            reached = np.isfinite(values)
            median = float(np.median(values[reached])) if reached.any() else math.nan
            table[key] = (median, float(reached.mean()))
        return table


@dataclass(frozen=True, slots=True)
class ExperimentResult:
    """Both of paper A's experiments from one set of trials: the trade-off curves and, when a
    target was given, the stopping rules' ex-post epsilons.

    Attributes
    ----------
    tradeoff : TradeoffResult
        The trade-off curves.
    stopping : StoppingResult or None
        The stopping table, None when no target was given.
    """

    tradeoff: TradeoffResult
    stopping: StoppingResult | None


@dataclass(frozen=True, slots=True)
class ChunkResult:
    """Per-trial outcomes of one chunk of trials (see :func:`experiment_chunk`).

    Attributes
    ----------
    train_bm, train_lnr : numpy.ndarray
        Training loss per (trial, level), shape (count, K), for BM and LNR.
    ex_post : dict
        (mechanism, rule) -> ex-post epsilon per trial (NaN: never stopped); empty without a target.
    stop_index : dict
        (mechanism, rule) -> 0-based stopping level per trial (-1: never); empty without a target.
    best_check_loss : float
        Smallest hold-out or clipped training loss seen by BM or LNR (inf without a target).
    """

    train_bm: FloatArray
    train_lnr: FloatArray
    ex_post: dict[RuleKey, FloatArray]
    stop_index: dict[RuleKey, IndexArray]
    best_check_loss: float


STOPPING_RULES = (
    ("bm", "holdout"),
    ("bm", "AboveThreshold"),
    ("bm", "RAT"),
    ("lnr", "holdout"),
    ("lnr", "AboveThreshold"),
    ("lnr", "RAT"),
    ("doubling", "holdout"),
)


def first_true(mask: npt.NDArray[np.bool_]) -> IndexArray:
    """Index of the first True per row, -1 if none.

    Parameters
    ----------
    mask : numpy.ndarray
        Boolean array, shape (rows, columns).

    Returns
    -------
    numpy.ndarray
        Integer index per row, shape (rows,).

    Raises
    ------
    TypeError
        If ``mask`` is not a boolean array.
    ValueError
        If ``mask`` is not 2-d.
    """
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
        raise TypeError(f"mask must be a boolean numpy array, got {type(mask).__name__}")
    if mask.ndim != 2:
        raise ValueError(f"mask must be 2-d (rows, columns), got shape {mask.shape}")
    idx = np.argmax(mask, axis=1)
    return np.where(mask.any(axis=1), idx, -1)


def root_seed(rng: SeedLike = None) -> np.random.SeedSequence:
    """The seed all chunks derive from: an integer seed is used as it is (so a stored seed reproduces
    a run); a Generator (or None) gives fresh entropy drawn from it.

    Parameters
    ----------
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        A SeedSequence is returned as it is.

    Returns
    -------
    numpy.random.SeedSequence

    Raises
    ------
    TypeError
        If ``rng`` is of another type (a BitGenerator included).
    ValueError
        If ``rng`` is a negative integer.
    """
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if isinstance(rng, int | np.integer) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng must be a non-negative integer seed, a SeedSequence or a Generator, got {rng}")
        return np.random.SeedSequence(int(rng))
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be None, an integer seed, a SeedSequence or a Generator, got {type(rng).__name__}")
    return np.random.SeedSequence(int(np.random.default_rng(rng).integers(2**63)))


def chunk_plan(trials: int, *, rng: SeedLike = None, chunk_trials: int = CHUNK_TRIALS) -> list[PlannedChunk]:
    """Split ``trials`` into chunks of ``chunk_trials`` (the last may be smaller), each with its own
    child seed. The plan depends on the trials and the seed only, never on how many workers run it,
    so any split over workers gives the same numbers.

    Parameters
    ----------
    trials : int
        Total number of trials, from 1 to 1e6 (``MAX_TRIALS``).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        The root seed (see `root_seed`).
    chunk_trials : int, optional
        Trials per chunk, from 1 to 1e6 (default 25).

    Returns
    -------
    list of (int, numpy.random.SeedSequence)
        (trials in the chunk, its child seed), in order.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If ``trials`` or ``chunk_trials`` is outside [1, 1e6], or ``rng`` is a negative integer.
    """
    trials = bounded_int("trials", trials, 1, MAX_TRIALS)
    chunk_trials = bounded_int("chunk_trials", chunk_trials, 1, MAX_TRIALS)
    root = root_seed(rng)
    plan: list[PlannedChunk] = []
    for index, start in enumerate(range(0, trials, chunk_trials)):
        child = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, index))
        plan.append((min(chunk_trials, trials - start), child))
    return plan


def _boundary(task: Task, tuned_epsilon: float, delta: float) -> LinearBoundary:
    return LinearBoundary.calibrated(tuned_epsilon, delta=delta, sensitivity=task.l2_sensitivity)


def _checked_setup(
    task: Task, epsilons: npt.ArrayLike | None, delta: float, tuned_epsilon: float
) -> tuple[FloatArray, float, LinearBoundary]:
    """Validate the common arguments: (levels, delta, the tuned linear boundary)."""
    _check_task(task)
    eps = _check_levels(default_epsilons() if epsilons is None else epsilons)
    delta = in_open_interval("delta", delta, 0.0, 1.0)
    tuned_epsilon = in_interval("tuned_epsilon", tuned_epsilon, EPSILON_MIN, EPSILON_MAX)
    try:
        boundary = _boundary(task, tuned_epsilon, delta)
    except ValueError as exc:
        raise ValueError(
            f"tuned_epsilon={tuned_epsilon:g} and delta={delta:g} give no linear boundary for this task "
            f"(l2 sensitivity {task.l2_sensitivity:g}): {exc}"
        ) from None
    if eps[0] <= boundary.floor():
        raise ValueError(
            f"epsilons must exceed the tuned boundary's floor {boundary.floor():.4g} "
            f"(the linear boundary tuned for tuned_epsilon={tuned_epsilon:g} never reaches lower levels)"
        )
    return eps, delta, boundary


def _release_times(task: Task, boundary: LinearBoundary, eps: FloatArray) -> dict[str, FloatArray]:
    """The release times of BM (on the tuned boundary) and LNR (D1 / eps) at the levels ``eps``."""
    try:
        bm = np.asarray(boundary.calibrated_time(eps), dtype=float)
    except ValueError as exc:
        raise ValueError(f"epsilons: a level has no release time on the tuned boundary: {exc}") from None
    lnr = task.l1_sensitivity / eps
    if not (np.isfinite(bm).all() and np.isfinite(lnr).all() and (bm > 0).all() and (lnr > 0).all()):
        raise ValueError("epsilons and the task's sensitivities give release times beyond the float range")
    return {"bm": bm, "lnr": lnr}


def experiment_chunk(
    task: Task,
    *,
    epsilons: npt.ArrayLike | None,
    count: int,
    rng: SeedLike,
    delta: float = 1e-6,
    tuned_epsilon: float = 0.3,
    target: float | None = None,
    at_epsilon: float = 0.5,
) -> ChunkResult:
    """One chunk of ``count`` trials, all randomness from ``rng`` (a seed, SeedSequence or Generator):
    the training loss of every (trial, level) for BM and LNR and, when ``target`` is given, each
    stopping rule's ex-post epsilon.

    Stopping rules: a public hold-out set (free); AboveThreshold at ``at_epsilon`` on the clipped
    training loss (cost eps_N + at_epsilon); ReducedAboveThreshold on the same levels (cost 2 eps_N);
    and the doubling baseline (fresh Laplace releases at eps_0 2^j checked on the hold-out set,
    paying the sum).

    Parameters
    ----------
    task : Task
        The task.
    epsilons : array_like or None
        Privacy levels: positive, strictly increasing, above the tuned boundary's floor
        (None: `default_epsilons`).
    count : int
        Number of trials, from 1 to 1e6, with count * len(epsilons) * task.noise_dim at most 1e8.
    rng : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator
        Seed or Generator.
    delta : float, optional
        The linear boundary's delta, in (0, 1) (default 1e-6).
    tuned_epsilon : float, optional
        The level the linear boundary is tuned for, in [1e-3, 1e3] (default 0.3).
    target : float, optional
        Target loss, > 0 (default None: no stopping rules).
    at_epsilon : float, optional
        AboveThreshold's fixed epsilon, in [1e-3, 1e3] (default 0.5).

    Returns
    -------
    ChunkResult

    Raises
    ------
    TypeError
        If ``task`` is not a Task, or another argument has the wrong type.
    ValueError
        If an argument is out of range, or the lowest level is at or below the boundary's floor.

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers): Corollary 3.7 (BM), Proposition 4.2 (LNR),
    Theorem 5.1 and Corollary 5.2 (RAT), Section 6 (the experiments); [LNRWW17] (Ligett et al.)
    for the doubling baseline.
    """
    eps, delta, boundary = _checked_setup(task, epsilons, delta, tuned_epsilon)
    count = _check_count("count", count, task, eps.size)
    rng = generator(rng)
    target = _check_target(target)
    at_epsilon = in_interval("at_epsilon", at_epsilon, EPSILON_MIN, EPSILON_MAX)
    stopping = target is not None
    times = _release_times(task, boundary, eps)
    train: dict[str, FloatArray] = {}
    hold: dict[str, FloatArray] = {}
    clipped: dict[str, FloatArray] = {}
    for mech, make in (("bm", bm_noise), ("lnr", lnr_noise)):
        params = task.release(make(times[mech], dim=task.noise_dim, trials=count, rng=rng))
        train[mech] = task.batch_loss(params)
        if stopping:
            hold[mech] = task.batch_loss(params, holdout=True)
            clipped[mech] = task.batch_loss(params, clip=task.loss_bound)
    ex_post: dict[RuleKey, FloatArray] = {}
    stop_index: dict[RuleKey, IndexArray] = {}
    best = math.inf
    if target is not None:
        best = min(hold["bm"].min(), hold["lnr"].min(), clipped["bm"].min(), clipped["lnr"].min())
        sens = task.utility_sensitivity
        for mech in ("bm", "lnr"):
            utility = -clipped[mech]
            rules = {
                "holdout": (first_true(hold[mech] <= target) + 1, 0.0, 1.0),
                "AboveThreshold": (
                    simulate_above_threshold_stopping(
                        utility, threshold=-target, sensitivity=sens, epsilon=at_epsilon, rng=rng
                    ),
                    at_epsilon,
                    1.0,
                ),
                "RAT": (
                    simulate_rat_stopping(
                        utility, epsilons=eps, threshold=-target, sensitivity=sens, epsilon_max=eps[-1], rng=rng
                    ),
                    0.0,
                    2.0,
                ),
            }
            for rule, (stop_round, extra, factor) in rules.items():
                idx = stop_round - 1
                ex_post[(mech, rule)] = np.where(idx >= 0, factor * eps[np.maximum(idx, 0)] + extra, np.nan)
                stop_index[(mech, rule)] = idx
        levels = eps[0] * 2.0 ** np.arange(int(np.ceil(np.log2(eps[-1] / eps[0]))) + 1)
        scale = (task.l1_sensitivity / levels)[None, :, None]
        noise = rng.laplace(0.0, 1.0, (count, levels.size, task.noise_dim)) * scale
        idx = first_true(task.batch_loss(task.release(noise), holdout=True) <= target)
        ex_post[("doubling", "holdout")] = np.where(idx >= 0, np.cumsum(levels)[np.maximum(idx, 0)], np.nan)
        stop_index[("doubling", "holdout")] = idx
    return ChunkResult(train["bm"], train["lnr"], ex_post, stop_index, float(best))


def combine_chunks(
    task: Task,
    *,
    epsilons: npt.ArrayLike,
    chunks: Iterable[ChunkResult],
    delta: float = 1e-6,
    tuned_epsilon: float = 0.3,
    target: float | None = None,
) -> ExperimentResult:
    """Join chunk results (in plan order) into the trade-off bands and the stopping table.

    Parameters
    ----------
    task : Task
        The task the chunks ran on.
    epsilons : array_like
        The privacy levels the chunks used.
    chunks : iterable of ChunkResult
        At least one chunk, in plan order, each with one loss column per level.
    delta : float, optional
        The linear boundary's delta, in (0, 1), recorded in the result (default 1e-6).
    tuned_epsilon : float, optional
        The level the boundary was tuned for, in [1e-3, 1e3], recorded in the result (default 0.3).
    target : float, optional
        The target loss the chunks used, > 0 (default None: no stopping table).

    Returns
    -------
    ExperimentResult

    Raises
    ------
    TypeError
        If ``task`` is not a Task, ``epsilons`` is not a real array, ``chunks`` is not an
        iterable of ChunkResult, or ``delta``, ``tuned_epsilon`` or ``target`` is not a real number.
    ValueError
        If ``epsilons`` is not positive and strictly increasing, ``chunks`` is empty or its
        losses do not have one column per level (or lack the stopping rules when ``target`` is
        given), ``delta``, ``tuned_epsilon`` or ``target`` is out of range, or ``target`` is
        below every loss the chunks saw.
    """
    _check_task(task)
    eps = _check_levels(epsilons)
    delta = in_open_interval("delta", delta, 0.0, 1.0)
    tuned_epsilon = in_interval("tuned_epsilon", tuned_epsilon, EPSILON_MIN, EPSILON_MAX)
    target = _check_target(target)
    if isinstance(chunks, str | bytes) or not isinstance(chunks, Iterable):
        raise TypeError(f"chunks must be an iterable of ChunkResult, got {type(chunks).__name__}")
    chunks = list(chunks)
    if not chunks:
        raise ValueError("chunks must hold at least one ChunkResult")
    for chunk in chunks:
        if not isinstance(chunk, ChunkResult):
            raise TypeError(f"chunks must hold ChunkResult objects only, got a {type(chunk).__name__}")
        for losses in (chunk.train_bm, chunk.train_lnr):
            if not isinstance(losses, np.ndarray) or losses.ndim != 2 or losses.shape[1] != eps.size:
                raise ValueError(f"chunks must have one loss column per level of epsilons ({eps.size} levels)")
        if target is not None and any(
            key not in chunk.ex_post or key not in chunk.stop_index for key in STOPPING_RULES
        ):
            raise ValueError("chunks lack the stopping rules: run them with the same target")
    bm = np.concatenate([c.train_bm for c in chunks])
    lnr = np.concatenate([c.train_lnr for c in chunks])
    bm_mean, bm_low, bm_high = _band(bm)
    lnr_mean, lnr_low, lnr_high = _band(lnr)
    tradeoff = TradeoffResult(
        task=task.name,
        epsilons=eps,
        bm_mean=bm_mean,
        bm_low=bm_low,
        bm_high=bm_high,
        lnr_mean=lnr_mean,
        lnr_low=lnr_low,
        lnr_high=lnr_high,
        optimal_loss=task.optimal_loss,
        trials=bm.shape[0],
        delta=delta,
        tuned_epsilon=tuned_epsilon,
    )
    stopping = None
    if target is not None:
        best = min(c.best_check_loss for c in chunks)
        if best > target:
            raise ValueError(
                f"target loss {target:g} is unreachable on this grid (best loss seen {best:.4g}); "
                f"choose a target above {best:.4g}"
            )
        ex_post = {key: np.concatenate([c.ex_post[key] for c in chunks]) for key in STOPPING_RULES}
        stop_index = {key: np.concatenate([c.stop_index[key] for c in chunks]) for key in STOPPING_RULES}
        stopping = StoppingResult(task.name, float(target), eps, ex_post, stop_index)
    return ExperimentResult(tradeoff, stopping)


def run_experiment(
    task: Task,
    *,
    epsilons: npt.ArrayLike | None = None,
    target: float | None = None,
    trials: int = 1000,
    delta: float = 1e-6,
    tuned_epsilon: float = 0.3,
    at_epsilon: float = 0.5,
    rng: SeedLike = None,
    mapper: Mapper | None = None,
    progress: Progress | None = None,
    chunk_trials: int = CHUNK_TRIALS,
) -> ExperimentResult:
    """Paper A's experiments on ``task``: BM against LNR loss at each privacy level (mean and 95%
    bands over ``trials``) and, with a ``target`` loss, the ex-post epsilon of each stopping rule.

    Trials run in chunks with one child seed each (:func:`chunk_plan`); ``mapper(func, chunks)``
    (default: the built-in ``map``; e.g. a process pool's ``map``) runs them and must return the
    results in order, so the numbers do not depend on the number of workers.

    Parameters
    ----------
    task : Task
        The task.
    epsilons : array_like, optional
        Privacy levels: positive, strictly increasing, above the tuned boundary's floor
        (default `default_epsilons`).
    target : float, optional
        Target loss, > 0 (default None: trade-off curves only).
    trials : int, optional
        Number of trials, from 1 to 1e6 (``MAX_TRIALS``; default 1000).
    delta : float, optional
        The linear boundary's delta, in (0, 1) (default 1e-6).
    tuned_epsilon : float, optional
        The level the linear boundary is tuned for, in [1e-3, 1e3] (default 0.3).
    at_epsilon : float, optional
        AboveThreshold's fixed epsilon, in [1e-3, 1e3] (default 0.5).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        The root seed (see `root_seed`).
    mapper : callable, optional
        ``mapper(func, chunks)`` returning the results in order (default: the built-in ``map``).
    progress : callable, optional
        Called with the fraction of trials done after each chunk.
    chunk_trials : int, optional
        Trials per chunk, from 1 to 1e6, with chunk_trials * len(epsilons) * task.noise_dim at
        most 1e8 (default 25).

    Returns
    -------
    ExperimentResult
        ``stopping`` is None when no ``target`` is given.

    Raises
    ------
    TypeError
        If an argument has the wrong type (``mapper`` and ``progress`` must be callable), or
        ``mapper`` does not return ChunkResult objects.
    ValueError
        If an argument is out of range, the lowest level is at or below the boundary's floor, or
        ``target`` is below every loss seen.

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Section 6.
    """
    eps, delta, boundary = _checked_setup(task, epsilons, delta, tuned_epsilon)
    target = _check_target(target)
    at_epsilon = in_interval("at_epsilon", at_epsilon, EPSILON_MIN, EPSILON_MAX)
    _check_callable("mapper", mapper)
    _check_callable("progress", progress)
    trials = bounded_int("trials", trials, 1, MAX_TRIALS)
    chunk_trials = bounded_int("chunk_trials", chunk_trials, 1, MAX_TRIALS)
    _check_count("chunk_trials", min(chunk_trials, trials), task, eps.size)
    _release_times(task, boundary, eps)
    plan = chunk_plan(trials, rng=rng, chunk_trials=chunk_trials)
    work = functools.partial(
        _run_planned, task, epsilons=eps, delta=delta, tuned_epsilon=tuned_epsilon, target=target, at_epsilon=at_epsilon
    )
    results: list[ChunkResult] = []
    done = 0
    for result in (mapper or map)(work, plan):
        if not isinstance(result, ChunkResult):
            raise TypeError(f"mapper must return the ChunkResult of each chunk, got a {type(result).__name__}")
        results.append(result)
        done += result.train_bm.shape[0]
        if progress is not None:
            progress(done / trials)
    return combine_chunks(task, epsilons=eps, chunks=results, delta=delta, tuned_epsilon=tuned_epsilon, target=target)


def _run_planned(task: Task, planned: PlannedChunk, *, epsilons: npt.ArrayLike, **options: Any) -> ChunkResult:
    """`experiment_chunk` for one (count, seed) of a plan."""
    count, seed = planned
    return experiment_chunk(task, epsilons=epsilons, count=count, rng=seed, **options)


def tradeoff_experiment(
    task: Task,
    *,
    epsilons: npt.ArrayLike | None = None,
    trials: int = 1000,
    delta: float = 1e-6,
    tuned_epsilon: float = 0.3,
    rng: SeedLike = None,
    mapper: Mapper | None = None,
    progress: Progress | None = None,
) -> TradeoffResult:
    """Mean loss against privacy level for BM and LNR with pointwise 95% confidence bands.

    Parameters
    ----------
    task : Task
        The task.
    epsilons, trials, delta, tuned_epsilon, rng, mapper, progress
        As for `run_experiment`.

    Returns
    -------
    TradeoffResult

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is out of range (see `run_experiment`).

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Section 6.
    """
    return run_experiment(
        task,
        epsilons=epsilons,
        trials=trials,
        delta=delta,
        tuned_epsilon=tuned_epsilon,
        rng=rng,
        mapper=mapper,
        progress=progress,
    ).tradeoff


def stopping_experiment(
    task: Task,
    *,
    target: float | None = None,
    epsilons: npt.ArrayLike | None = None,
    trials: int = 1000,
    delta: float = 1e-6,
    tuned_epsilon: float = 0.3,
    at_epsilon: float = 0.5,
    rng: SeedLike = None,
    mapper: Mapper | None = None,
    progress: Progress | None = None,
) -> StoppingResult:
    """Ex-post privacy of stopping at the first level whose loss meets ``target``.

    Parameters
    ----------
    task : Task
        The task.
    target : float, optional
        Target loss, > 0 (default: ``DEFAULT_TARGETS[task.name]``).
    epsilons, trials, delta, tuned_epsilon, at_epsilon, rng, mapper, progress
        As for `run_experiment`.

    Returns
    -------
    StoppingResult

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If no ``target`` is given and the task has no default target, or an argument is out of
        range (see `run_experiment`).

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers): Theorem 5.1 and Corollary 5.2 (RAT),
    Section 6 (the experiments).
    """
    _check_task(task)
    target = DEFAULT_TARGETS.get(task.name) if target is None else target
    if target is None:
        raise ValueError(
            f"task {task.name!r} has no default target loss (defaults exist for: {', '.join(DEFAULT_TARGETS)}); "
            "give target="
        )
    stopping = run_experiment(
        task,
        epsilons=epsilons,
        target=target,
        trials=trials,
        delta=delta,
        tuned_epsilon=tuned_epsilon,
        at_epsilon=at_epsilon,
        rng=rng,
        mapper=mapper,
        progress=progress,
    ).stopping
    if stopping is None:  # run_experiment fills it whenever a target is given
        raise RuntimeError("run_experiment returned no stopping table although a target was given")
    return stopping


def planned_chunk(
    task: Task,
    *,
    epsilons: npt.ArrayLike | None,
    trials: int,
    rng: SeedLike,
    index: int | np.integer[Any],
    **options: Any,
) -> ChunkResult:
    """Chunk ``index`` of :func:`chunk_plan` ``(trials, rng)``: what :func:`run_experiment` computes for
    it, as a call with plain arguments (for a pool that memoises by inputs, or a remote worker).

    Parameters
    ----------
    task : Task
        The task.
    epsilons : array_like or None
        Privacy levels, as for `run_experiment`.
    trials : int
        Total number of trials of the plan, from 1 to 1e6.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        The plan's root seed (see `root_seed`).
    index : int
        The chunk number, from 0 to len(plan) - 1.
    **options
        ``delta``, ``tuned_epsilon``, ``target`` and ``at_epsilon``, passed to `experiment_chunk`.

    Returns
    -------
    ChunkResult

    Raises
    ------
    TypeError
        If an argument has the wrong type, or ``options`` holds another name.
    ValueError
        If ``index`` is not a chunk number, or another argument is out of range.
    """
    unknown = sorted(set(options) - {"delta", "tuned_epsilon", "target", "at_epsilon"})
    if unknown:
        raise TypeError(f"planned_chunk takes delta, tuned_epsilon, target and at_epsilon as options, got {unknown}")
    plan = chunk_plan(trials, rng=rng)
    if isinstance(index, bool) or not isinstance(index, int | np.integer) or not 0 <= index < len(plan):
        raise ValueError(f"index must be a chunk number from 0 to {len(plan) - 1}, got {value_text(index)}")
    count, child = plan[int(index)]
    return experiment_chunk(task, epsilons=epsilons, count=count, rng=child, **options)
