"""Paper A's experiments: privacy/loss trade-off curves and stopping rules, vectorised over trials.

Both mechanisms are simulated exactly on the grid of privacy levels:
- Brownian mechanism (BM): the noise at the times T_k = psi^{-1}(eps_k) of a linear boundary
  tuned for ``tuned_epsilon`` is one Brownian motion sampled at those times (the rewind's
  joint law), so its ex-post epsilon at level k is psi(T_k) = eps_k, with failure probability delta;
- Laplace noise reduction (LNR): the Laplace process at times D1/eps_k, i.e. the Koufogiannis
  chain, one independent chain per coordinate; its ex-post epsilon is eps_k.
Stopping rules: a public hold-out set, AboveThreshold with a fixed epsilon (cost eps_N + eps_AT),
ReducedAboveThreshold with the same schedule (cost 2 eps_N, thm:rat / cor:aug_bm), and the
doubling baseline noise reduction replaces (fresh Laplace releases at eps_0 2^j, paying the sum).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ._validation import in_open_interval, positive, positive_int, real_array
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
from .threshold import simulate_above_threshold_stopping, simulate_rat_stopping

__all__ = [
    "DEFAULT_TARGETS",
    "StoppingResult",
    "TradeoffResult",
    "default_epsilons",
    "default_task",
    "pilot_target",
    "stopping_experiment",
    "tradeoff_experiment",
]

# Targets for the synthetic data, chosen as paper A appears to have chosen 0.41 and 0.025: a
# loss reached near the level eps = 0.3 the boundary is tuned for. The rule: the optimum plus
# the excess of BM's mean loss at eps = 0.3 in a 200-trial pilot (seed 0), the excess rounded
# up to two significant digits (``pilot_target`` recomputes it; a test keeps them in step).
DEFAULT_TARGETS = {"logistic": 0.39381, "ridge": 0.0314, "mean": 0.1828028}

Progress = Callable[[float], None]


def default_task(name: str = "logistic", *, n: int = 10_000, lam: float = 0.05, seed: int = 0) -> Task:
    """Synthetic stand-ins for paper A's data: n training rows and n public hold-out rows."""
    n = positive_int("n", n)
    if name == "logistic":
        (X, y), hold = split(*synthetic_classification(2 * n, seed=seed), n)
        return LogisticRegressionTask(X, y, lam=lam, holdout=hold)
    if name == "ridge":
        (X, y), hold = split(*synthetic_regression(2 * n, seed=seed + 1), n)
        return RidgeRegressionTask(X, y, lam=lam, holdout=hold)
    if name == "mean":
        rng = np.random.default_rng(seed)
        X = rng.normal(0.3, 0.3, size=(2 * n, 5))
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
        return MeanEstimationTask(X[:n], lam=0.0, holdout=X[n:])
    raise ValueError(f'task must be "logistic", "ridge" or "mean", got {name!r}')


def default_epsilons(count: int = 60, low: float = 0.16, high: float = 5.0) -> np.ndarray:
    """Log-spaced privacy levels; the low end sits just above the tuned linear boundary's floor (0.149)."""
    return np.geomspace(low, high, positive_int("count", count))


def pilot_target(task: Task, *, trials=200, seed=0, tuned_epsilon=0.3) -> float:
    """The default-target rule: optimum + BM's mean excess loss at ``tuned_epsilon``, rounded up."""
    result = tradeoff_experiment(task, [tuned_epsilon], trials=trials, tuned_epsilon=tuned_epsilon, rng=seed)
    excess = float(result.bm_mean[0]) - task.optimal_loss
    digits = 1 - math.floor(math.log10(excess))
    return round(task.optimal_loss + math.ceil(excess * 10**digits) / 10**digits, digits + 1)


def _check_levels(epsilons) -> np.ndarray:
    eps = np.atleast_1d(real_array("epsilons", epsilons))
    if eps.ndim != 1 or eps.size == 0 or (eps <= 0).any() or (np.diff(eps) <= 0).any():
        raise ValueError("epsilons must be a non-empty, strictly increasing 1-d array of positive numbers")
    return eps


def _chunks(trials: int, per_trial: int, budget: int = 20_000_000):
    size = max(1, min(trials, budget // max(per_trial, 1)))
    return [(start, min(start + size, trials)) for start in range(0, trials, size)]


def bm_noise(times_desc: np.ndarray, dim: int, trials: int, rng: np.random.Generator) -> np.ndarray:
    """B at the given decreasing times for many independent paths: shape (trials, K, dim)."""
    asc = times_desc[::-1]
    steps = rng.standard_normal((trials, asc.size, dim)) * np.sqrt(np.diff(np.r_[0.0, asc]))[None, :, None]
    return np.cumsum(steps, axis=1)[:, ::-1]


def lnr_noise(times_desc: np.ndarray, dim: int, trials: int, rng: np.random.Generator) -> np.ndarray:
    """The Laplace process at decreasing times, one independent chain per coordinate."""
    return koufogiannis_chain(times_desc[::-1], dim, size=trials, rng=rng)[:, ::-1]


def _band(values: np.ndarray):
    mean = values.mean(axis=0)
    half = 1.96 * values.std(axis=0, ddof=1) / math.sqrt(values.shape[0]) if values.shape[0] > 1 else 0 * mean
    return mean, mean - half, mean + half


@dataclass(frozen=True, slots=True)
class TradeoffResult:
    task: str
    epsilons: np.ndarray
    bm_mean: np.ndarray
    bm_low: np.ndarray
    bm_high: np.ndarray
    lnr_mean: np.ndarray
    lnr_low: np.ndarray
    lnr_high: np.ndarray
    optimal_loss: float
    trials: int
    delta: float
    tuned_epsilon: float

    def rows(self):
        header = ["epsilon", "bm_mean", "bm_low", "bm_high", "lnr_mean", "lnr_low", "lnr_high"]
        cols = [self.epsilons, self.bm_mean, self.bm_low, self.bm_high, self.lnr_mean, self.lnr_low, self.lnr_high]
        return header, np.column_stack(cols)


def _boundary(task: Task, tuned_epsilon: float, delta: float) -> LinearBoundary:
    return LinearBoundary.optimized_for(tuned_epsilon, delta, task.l2_sensitivity)


def losses_on_grid(task: Task, epsilons, *, trials=1000, delta=1e-6, tuned_epsilon=0.3, rng=None,
                   progress: Progress | None = None, holdout=False, clipped=False):
    """Loss of every (trial, level) for BM and LNR: two arrays of shape (trials, K) per data set."""
    rng = np.random.default_rng(rng)
    eps = _check_levels(epsilons)
    trials = positive_int("trials", trials)
    delta = in_open_interval("delta", delta, 0.0, 1.0)
    boundary = _boundary(task, positive("tuned_epsilon", tuned_epsilon), delta)
    if eps[0] <= boundary.floor():
        raise ValueError(f"epsilons must exceed the tuned boundary's floor {boundary.floor():.4g}")
    bm_times = np.asarray(boundary.time_for(eps))
    lnr_times = task.l1_sensitivity / eps
    sets = [("train", False, None)]
    if holdout:
        sets.append(("holdout", True, None))
    if clipped:
        sets.append(("clipped", False, task.loss_bound))
    out = {name: {"bm": np.empty((trials, eps.size)), "lnr": np.empty((trials, eps.size))} for name, _, _ in sets}
    chunks = _chunks(trials, eps.size * task.noise_dim)
    done = 0
    for start, stop in chunks:
        count = stop - start
        for mech, make, times in (("bm", bm_noise, bm_times), ("lnr", lnr_noise, lnr_times)):
            params = task.release(make(times, task.noise_dim, count, rng))
            for name, use_holdout, clip in sets:
                out[name][mech][start:stop] = task.batch_loss(params, holdout=use_holdout, clip=clip)
            done += count
            if progress is not None:
                progress(done / (2 * trials))
    return eps, boundary, out


def tradeoff_experiment(task: Task, epsilons=None, *, trials=1000, delta=1e-6, tuned_epsilon=0.3, rng=None,
                        progress: Progress | None = None) -> TradeoffResult:
    """Mean loss against privacy level for BM and LNR with pointwise 95% confidence bands."""
    eps = default_epsilons() if epsilons is None else epsilons
    eps, _, losses = losses_on_grid(task, eps, trials=trials, delta=delta, tuned_epsilon=tuned_epsilon, rng=rng,
                                    progress=progress)
    bm = _band(losses["train"]["bm"])
    lnr = _band(losses["train"]["lnr"])
    return TradeoffResult(task.name, eps, *bm, *lnr, task.optimal_loss, trials, delta, tuned_epsilon)


@dataclass(frozen=True, slots=True)
class StoppingResult:
    """Ex-post epsilon per trial for each (mechanism, rule); NaN where the target was never met."""

    task: str
    target: float
    epsilons: np.ndarray
    ex_post: dict = field(default_factory=dict)  # filled before construction, never after
    stop_index: dict = field(default_factory=dict)

    def summary(self):
        """(mechanism, rule) -> (median ex-post epsilon over trials that stopped, fraction stopped)."""
        table = {}
        for key, values in self.ex_post.items():
            reached = np.isfinite(values)
            median = float(np.median(values[reached])) if reached.any() else math.nan
            table[key] = (median, float(reached.mean()))
        return table


def first_true(mask: np.ndarray) -> np.ndarray:
    """Index of the first True per row, -1 if none."""
    idx = np.argmax(mask, axis=1)
    return np.where(mask.any(axis=1), idx, -1)


def stopping_experiment(task: Task, target=None, epsilons=None, *, trials=1000, delta=1e-6, tuned_epsilon=0.3,
                        at_epsilon=0.5, rng=None, progress: Progress | None = None) -> StoppingResult:
    """Ex-post privacy of stopping at the first level whose loss meets ``target``."""
    rng = np.random.default_rng(rng)
    target = DEFAULT_TARGETS.get(task.name) if target is None else target
    target = positive("target", target)
    eps = _check_levels(default_epsilons() if epsilons is None else epsilons)
    at_epsilon = positive("at_epsilon", at_epsilon)
    eps, _, losses = losses_on_grid(task, eps, trials=trials, delta=delta, tuned_epsilon=tuned_epsilon, rng=rng,
                                    progress=progress, holdout=True, clipped=True)
    best = min(losses["holdout"]["bm"].min(), losses["holdout"]["lnr"].min(), losses["clipped"]["bm"].min())
    if best > target:
        raise ValueError(f"target loss {target:g} is unreachable on this grid (best loss seen {best:.4g})")
    sens = task.utility_sensitivity
    ex_post, stop_index = {}, {}
    for mech in ("bm", "lnr"):
        rules = {}
        rules["holdout"] = (first_true(losses["holdout"][mech] <= target) + 1, 0.0, 1.0)
        utility = -losses["clipped"][mech]
        at_stop = simulate_above_threshold_stopping(utility, -target, sensitivity=sens, epsilon=at_epsilon, rng=rng)
        rules["AboveThreshold"] = (at_stop, at_epsilon, 1.0)
        rat_stop = simulate_rat_stopping(utility, eps, -target, sensitivity=sens, epsilon_max=eps[-1], rng=rng)
        rules["RAT"] = (rat_stop, 0.0, 2.0)
        for rule, (stop_round, extra, factor) in rules.items():
            idx = stop_round - 1
            cost = np.where(idx >= 0, factor * eps[np.maximum(idx, 0)] + extra, np.nan)
            ex_post[(mech, rule)] = cost
            stop_index[(mech, rule)] = idx
    # baseline: independent Laplace releases at eps_0 2^j (checked on the hold-out set), paying the sum
    levels = eps[0] * 2.0 ** np.arange(int(np.ceil(np.log2(eps[-1] / eps[0]))) + 1)
    noise = rng.laplace(0.0, 1.0, (trials, levels.size, task.noise_dim)) * (task.l1_sensitivity / levels)[None, :, None]
    hold = task.batch_loss(task.release(noise), holdout=True)
    idx = first_true(hold <= target)
    paid = np.cumsum(levels)
    ex_post[("doubling", "holdout")] = np.where(idx >= 0, paid[np.maximum(idx, 0)], np.nan)
    stop_index[("doubling", "holdout")] = idx
    return StoppingResult(task.name, target, eps, ex_post, stop_index)
