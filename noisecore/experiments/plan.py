"""Planning an experiment: limits, privacy levels, argument checks and the chunk plan (one child seed per chunk)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from .._base import FloatArray
from .._validation import (
    MAX_ELEMENTS,
    SeedLike,
    bounded_int,
    in_interval,
    in_open_interval,
    positive,
    real_array,
)
from ..boundaries import LinearBoundary
from ..tasks import (
    Task,
)

# Targets for the synthetic data, from public data only: ``public_target`` (a twin task fitted on the
# hold-out rows, its optimum plus twice BM's mean excess loss at eps = 0.3 in a 200-trial pilot, seed 0,
# plus twice the sampling spread of an optimum estimated from halves of the hold-out rows, rounded up); a
# test keeps them in step. Paper A gives only its own values (0.41 and 0.025), not a rule.
DEFAULT_TARGETS = {"logistic": 0.3994, "ridge": 0.0463, "mean": 0.18538}
Progress: TypeAlias = Callable[[float], None]
#: One chunk of a plan: (number of trials, its child seed).
PlannedChunk: TypeAlias = tuple[int, np.random.SeedSequence]
RuleKey: TypeAlias = tuple[str, str]
IndexArray: TypeAlias = npt.NDArray[np.intp]
BoolArray: TypeAlias = npt.NDArray[np.bool_]
CHUNK_TRIALS = 25  # trials per chunk; each chunk has its own child seed
# Limits. The app runs at most 1,000 trials of at most 60 levels in [0.16, 20] on 10,000 rows
# (README, dashboard/explorer.py, benchmarks/bench_experiments.py); the limits leave 1000x room
# for trials, 100x for levels and rows, and keep every derived time, scale and array finite.
MAX_TRIALS = 10**6  # trials of one experiment (paper A: 1,000)
MAX_LEVELS = 10_000  # privacy levels of one experiment (paper A: 60)
MAX_ROWS = 500_000  # training rows of default_task (as many again are hold-out rows)
EPSILON_MIN, EPSILON_MAX = 1e-3, 1e3  # privacy levels, tuned_epsilon and at_epsilon


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
