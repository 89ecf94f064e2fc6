"""Result records of the experiments and the join of chunk results into bands and a stopping table."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .._base import FloatArray
from .._validation import (
    in_interval,
    in_open_interval,
)
from ..tasks import (
    Task,
)
from .plan import EPSILON_MAX, EPSILON_MIN, BoolArray, IndexArray, RuleKey, _check_levels, _check_target, _check_task


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
    within : dict
        (mechanism, rule) -> per trial, whether it halted with the loss the rule checks within the
        target, judged without the check's noise (the hold-out loss for the hold-out rules, the clipped
        training loss for AboveThreshold and RAT). A private check can halt on noise: halted is not met.
    """

    task: str
    target: float
    epsilons: FloatArray
    ex_post: dict[RuleKey, FloatArray]
    stop_index: dict[RuleKey, IndexArray]
    within: dict[RuleKey, BoolArray]

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

    def within_fraction(self) -> dict[RuleKey, float]:
        """(mechanism, rule) -> the fraction of trials that halted within the target (see ``within``).

        Returns
        -------
        dict
            (mechanism, rule) -> fraction, floats in [0, 1].
        """
        return {key: float(np.mean(self.within[key])) for key in self.ex_post}


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
    within : dict
        (mechanism, rule) -> per trial, halted with the checked loss within the target (see
        `StoppingResult`); empty without a target.
    """

    train_bm: FloatArray
    train_lnr: FloatArray
    ex_post: dict[RuleKey, FloatArray]
    stop_index: dict[RuleKey, IndexArray]
    best_check_loss: float
    within: dict[RuleKey, BoolArray] = field(default_factory=dict)


STOPPING_RULES = (
    ("bm", "holdout"),
    ("bm", "AboveThreshold"),
    ("bm", "RAT"),
    ("lnr", "holdout"),
    ("lnr", "AboveThreshold"),
    ("lnr", "RAT"),
    ("doubling", "holdout"),
)


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
            key not in chunk.ex_post or key not in chunk.stop_index or key not in chunk.within for key in STOPPING_RULES
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
        within = {key: np.concatenate([c.within[key] for c in chunks]) for key in STOPPING_RULES}
        stopping = StoppingResult(task.name, float(target), eps, ex_post, stop_index, within)
    return ExperimentResult(tradeoff, stopping)
