"""Running the experiments: one chunk of trials, a whole plan (through any mapper), and the two views of it."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from .._base import FloatArray
from .._validation import (
    SeedLike,
    bounded_int,
    generator,
    in_interval,
    value_text,
)
from ..tasks import (
    Task,
)
from ..threshold import simulate_above_threshold_stopping, simulate_rat_stopping
from .plan import (
    CHUNK_TRIALS,
    DEFAULT_TARGETS,
    EPSILON_MAX,
    EPSILON_MIN,
    MAX_TRIALS,
    BoolArray,
    IndexArray,
    PlannedChunk,
    Progress,
    RuleKey,
    _check_callable,
    _check_count,
    _check_target,
    _check_task,
    _checked_setup,
    _release_times,
    chunk_plan,
)
from .results import ChunkResult, ExperimentResult, StoppingResult, TradeoffResult, combine_chunks
from .samplers import bm_noise, lnr_noise

#: ``mapper(func, chunks)``: like the built-in ``map``, returning the results in order.
Mapper: TypeAlias = Callable[
    [Callable[[PlannedChunk], "ChunkResult"], Iterable[PlannedChunk]],
    Iterable["ChunkResult"],
]


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
    within: dict[RuleKey, BoolArray] = {}
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
                # halted within the target, judged by the loss the rule checks, without the check's noise:
                # the hold-out loss for the hold-out rule, the clipped training loss for the private checks
                checked = hold[mech] if rule == "holdout" else clipped[mech]
                at_stop = np.take_along_axis(checked, np.maximum(idx, 0)[:, None], axis=1)[:, 0]
                within[(mech, rule)] = (idx >= 0) & (at_stop <= target)
        levels = eps[0] * 2.0 ** np.arange(int(np.ceil(np.log2(eps[-1] / eps[0]))) + 1)
        scale = (task.l1_sensitivity / levels)[None, :, None]
        noise = rng.laplace(0.0, 1.0, (count, levels.size, task.noise_dim)) * scale
        idx = first_true(task.batch_loss(task.release(noise), holdout=True) <= target)
        ex_post[("doubling", "holdout")] = np.where(idx >= 0, np.cumsum(levels)[np.maximum(idx, 0)], np.nan)
        stop_index[("doubling", "holdout")] = idx
        within[("doubling", "holdout")] = idx >= 0  # it stops on the hold-out loss itself
    return ChunkResult(train["bm"], train["lnr"], ex_post, stop_index, float(best), within)


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
