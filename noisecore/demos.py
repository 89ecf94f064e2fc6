"""Scenario builders for the interactive lab: all the mathematics the dashboard views draw.

Each function returns a small frozen dataclass of numpy arrays, deterministic for a seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import in_open_interval, positive, positive_int
from .arete import Arete
from .boundaries import LinearBoundary, MixtureBoundary, PrivacyBoundary, gaussian_variance
from .brownian import BrownianMechanism
from .distributions import Laplace, Staircase
from .experiments import bm_noise
from .laplace_reduction import koufogiannis_chain

__all__ = [
    "LOCAL_SEARCH_SETS",
    "BoundaryCurves",
    "CrossingStudy",
    "NoiseComparison",
    "RatRun",
    "RatStudy",
    "RewindScenario",
    "arete_for",
    "boundary_curves",
    "crossing_study",
    "loss_profile",
    "noise_comparison",
    "rat_run",
    "rat_study",
    "rewind_scenario",
    "tabulated_calibration",
]

# Paper B, Figure 4: the authors' local-search sets (alpha, theta, lam) for sensitivity 1.
LOCAL_SEARCH_SETS = {
    6: (0.07559007048913552, 0.6295929433519876, 0.05453349704921005),
    7: (0.03438865645893487, 0.7753538691868341, 0.03916449536622209),
    8: (0.01922231819807612, 0.8312962061581013, 0.02547890283133737),
}


# --- Brownian rewind ----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RewindScenario:
    """A rewind: frames at decreasing times along one Brownian path, with per-frame readouts."""

    value: np.ndarray  # f(x), shape (d,)
    path_times: np.ndarray  # increasing, from 0 to the first frame's time
    path: np.ndarray  # f(x) + B(t) at path_times, shape (len, d)
    frame_times: np.ndarray  # decreasing
    frame_values: np.ndarray  # f(x) + B(t) at frame times, shape (F, d)
    frame_epsilon: np.ndarray  # psi(t): ex-post epsilon if stopping at this frame
    frame_error: np.ndarray  # ||release - f(x)||
    frame_loss: np.ndarray  # realized privacy loss against the worst neighbour
    stop_frame: int  # first frame with error <= target (-1 if none)


def rewind_scenario(epsilon, delta, rho, *, target, sensitivity=1.0, dim=1, frames=120, path_points=600,
                    seed=0) -> RewindScenario:
    """Release at epsilon levels from epsilon/10 up to epsilon (mixture boundary with ``rho``),
    one frame per level; the path is the latent walk out to the noisiest release."""
    epsilon = positive("epsilon", epsilon)
    target = positive("target", target)
    dim = positive_int("dim", dim)
    frames = positive_int("frames", frames)
    boundary = MixtureBoundary(delta, rho, sensitivity)
    levels = np.geomspace(epsilon / 10, epsilon, frames)
    times = np.asarray(boundary.time_for(levels))
    value = np.zeros(dim)
    mech = BrownianMechanism(value, sensitivity=sensitivity, boundary=boundary, rng=seed)
    mech.release(times[0])
    path_times = np.unique(np.concatenate([[0.0], np.linspace(0.0, times[0], path_points), times]))
    path = value + mech.path(path_times)
    frame_values = value + mech.path(times)
    noise = frame_values - value
    error = np.linalg.norm(noise, axis=1)
    loss = sensitivity**2 / (2 * times) + sensitivity * error / times
    hits = np.nonzero(error <= target)[0]
    return RewindScenario(value, path_times, path, times, frame_values, boundary.epsilon(times), error, loss,
                          int(hits[0]) if hits.size else -1)


# --- boundaries ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class BoundaryCurves:
    t: np.ndarray
    mixture: np.ndarray
    linear: np.ndarray
    epsilons: np.ndarray
    mixture_time: np.ndarray
    linear_time: np.ndarray
    gaussian_time: np.ndarray
    time_at_epsilon: dict
    linear_floor: float


def boundary_curves(epsilon, delta, rho, sensitivity=1.0, points=200) -> BoundaryCurves:
    """psi_M(rho) and psi_L (optimised at epsilon) against t, and their inverses against epsilon
    next to the variance a one-shot Gaussian needs."""
    epsilon = positive("epsilon", epsilon)
    mix = MixtureBoundary(delta, rho, sensitivity)
    lin = LinearBoundary.optimized_for(epsilon, delta, sensitivity)
    t_star = float(lin.time_for(epsilon))
    t = np.geomspace(t_star / 1e3, t_star * 1e3, points)
    eps_grid = np.geomspace(epsilon / 20, epsilon * 20, points)
    lin_ok = eps_grid > lin.floor()
    lin_time = np.full(eps_grid.shape, np.nan)
    lin_time[lin_ok] = lin.time_for(eps_grid[lin_ok])
    gauss = np.array([gaussian_variance(e, delta, sensitivity) for e in eps_grid[:: max(1, points // 40)]])
    gauss_full = np.interp(np.log(eps_grid), np.log(eps_grid[:: max(1, points // 40)]), np.log(gauss))
    return BoundaryCurves(
        t, mix.epsilon(t), lin.epsilon(t), eps_grid, np.asarray(mix.time_for(eps_grid)), lin_time, np.exp(gauss_full),
        {"mixture": float(mix.time_for(epsilon)), "linear": t_star,
         "gaussian": gaussian_variance(epsilon, delta, sensitivity)},
        lin.floor(),
    )


@dataclass(frozen=True, slots=True)
class CrossingStudy:
    t: np.ndarray
    losses: np.ndarray  # realized losses of a few shown paths, shape (shown, len(t))
    boundary: np.ndarray
    frequency: float  # fraction of all simulated paths crossing the boundary
    paths: int


def crossing_study(boundary: PrivacyBoundary, t, *, paths=2000, shown=25, seed=0) -> CrossingStudy:
    """Simulate realized privacy losses D^2/(2t) + (D/t) W_t on the grid ``t`` (increasing)."""
    if not isinstance(boundary, PrivacyBoundary):
        raise TypeError("boundary must be a PrivacyBoundary")
    t = np.asarray(t, dtype=float)
    rng = np.random.default_rng(seed)
    D = boundary.sensitivity
    w = bm_noise(t[::-1], 1, positive_int("paths", paths), rng)[:, ::-1, 0]
    losses = D * D / (2 * t) + D * w / t
    psi = boundary.epsilon(t)
    crossed = (losses > psi).any(axis=1)
    return CrossingStudy(t, losses[:shown], psi, float(crossed.mean()), paths)


# --- low-privacy noise ----------------------------------------------------------------------
def tabulated_calibration(epsilon, sensitivity, table) -> tuple[Arete, float, float]:
    """The calibrated Arete of the frontier table at the largest tabulated eps' <= epsilon, scaled
    to the sensitivity, with eps' and its stored certificate (<= eps' <= epsilon): epsilon-DP at
    once. Below the table's range it calibrates exactly."""
    eps = table["epsilon"]
    below = np.nonzero(eps <= epsilon * (1 + 1e-12))[0]
    if below.size == 0:  # below the table the optimum is the Laplace limit (alpha -> 0)
        limit = Arete(1e-12, sensitivity, sensitivity / epsilon * (1 + 1e-9))
        return limit, float(epsilon), float(limit.privacy_loss(sensitivity))
    i = below[-1]
    arete = Arete(table["arete_abs_alpha"][i], table["arete_abs_theta"][i] * sensitivity,
                  table["arete_abs_lam"][i] * sensitivity)
    return arete, float(eps[i]), float(table["arete_abs_certified"][i])


def arete_for(epsilon, sensitivity=1.0, source="lemma3", alpha=None, theta=None, lam=None, table=None) -> Arete:
    """The Arete to show: calibrated (from the frontier ``table``), Lemma 3's, the nearest
    local-search set (scaled by the sensitivity), or manual."""
    if source == "calibrated":
        if table is None:
            return Arete.calibrated(epsilon, sensitivity)
        return tabulated_calibration(epsilon, sensitivity, table)[0]
    if source == "lemma3":
        return Arete.from_lemma3(epsilon, sensitivity)
    if source == "local-search":
        key = min(LOCAL_SEARCH_SETS, key=lambda k: abs(k - epsilon))
        a, th, la = LOCAL_SEARCH_SETS[key]
        return Arete(a, th * sensitivity, la * sensitivity)
    if source == "manual":
        return Arete(alpha, theta, lam)
    raise ValueError(f'source must be "calibrated", "lemma3", "local-search" or "manual", got {source!r}')


@dataclass(frozen=True, slots=True)
class NoiseComparison:
    x: np.ndarray
    densities: dict  # name -> density on x
    mean_abs: dict
    variance: dict
    certified: dict  # name -> privacy_loss(sensitivity)
    arete: Arete


def noise_comparison(epsilon, sensitivity=1.0, source="lemma3", alpha=None, theta=None, lam=None,
                     points=1201, table=None, arete=None, arete_certified=None) -> NoiseComparison:
    lap = Laplace.for_epsilon(epsilon, sensitivity)
    stair = Staircase(epsilon, sensitivity)
    if arete is None:
        arete = arete_for(epsilon, sensitivity, source, alpha, theta, lam, table)
    half = max(6 * sensitivity / epsilon, 3 * sensitivity, 5 * stair.std())
    x = np.linspace(-half, half, points)
    dists = {"Laplace": lap, "Staircase": stair, "Arete": arete}
    return NoiseComparison(
        x,
        {k: d.pdf(x) for k, d in dists.items()},
        {k: d.mean_abs() for k, d in dists.items()},
        {k: d.var() for k, d in dists.items()},
        {k: float(d.privacy_loss(sensitivity)) if k != "Arete" or arete_certified is None else arete_certified
         for k, d in dists.items()},
        arete,
    )


def loss_profile(dist, distances) -> np.ndarray:
    """Worst-case privacy loss against output distance (paper B, Figure 3), for plotting.

    Laplace and Staircase are exact. For the Arete the supremum over t is taken on one shared
    grid (spacing max(distances)/800, through t = 0 where the density peaks) plus the tail
    limit d / max(theta, lam): a lower bound within about 1e-4 relative of the certified
    ``privacy_loss``, at the cost of a single density evaluation.
    """
    d = np.asarray(distances, dtype=float)
    if not isinstance(dist, Arete):
        return np.asarray(dist.privacy_loss(d), dtype=float)
    top = float(d.max())
    if top == 0:
        return np.zeros_like(d)
    h = top / 800
    mu = max(dist.theta, dist.lam)
    reach = top + 10 * mu
    t = np.arange(-np.ceil(top / 2 / h), np.ceil((reach + top) / h) + 1) * h
    lp = dist.logpdf(t)
    out = np.zeros_like(d)
    for i, dist_i in enumerate(d):
        k = round(dist_i / h)
        if k == 0:
            continue
        start = np.searchsorted(t, -dist_i / 2 - h / 2)
        ratio = lp[start:len(t) - k] - lp[start + k:]
        out[i] = max(float(ratio.max()), dist_i / mu)
    return out


# --- ReducedAboveThreshold ------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RatRun:
    epsilons: np.ndarray
    utility: np.ndarray  # true utility -error per round
    noisy_utility: np.ndarray
    noisy_threshold: np.ndarray
    stop_round: int  # 1-based, 0 if never
    rat_ex_post: float  # 2 eps_N (cor:aug_bm)
    at_cost: float  # eps_N + eps_AT for AboveThreshold on the same releases


def _rat_inputs(scenario: RewindScenario, rounds: int):
    idx = np.unique(np.linspace(0, len(scenario.frame_times) - 1, rounds).round().astype(int))
    return idx, scenario.frame_epsilon[idx], -scenario.frame_error[idx]


def rat_run(scenario: RewindScenario, *, target, sensitivity=1.0, rounds=20, at_epsilon=0.5, seed=0) -> RatRun:
    """One RAT run checking the rewind's releases: utility -||release - f(x)|| (sensitivity D)."""
    _, eps, utility = _rat_inputs(scenario, rounds)
    rng = np.random.default_rng(seed)
    eps_max = float(eps[-1])
    grid = np.unique(np.r_[2 * sensitivity / eps, 2 * sensitivity / eps_max])
    zeta = koufogiannis_chain(grid, 1, rng=rng)[:, 0][np.searchsorted(grid, 2 * sensitivity / eps)]
    noisy = utility + rng.laplace(0.0, 1.0, eps.size) * 4 * sensitivity / eps
    threshold = -target + zeta
    above = np.nonzero(noisy >= threshold)[0]
    stop = int(above[0]) + 1 if above.size else 0
    last = eps[stop - 1] if stop else eps[-1]
    return RatRun(eps, utility, noisy, threshold, stop, 2 * float(last), float(last) + at_epsilon)


@dataclass(frozen=True, slots=True)
class RatStudy:
    epsilons: np.ndarray
    stop_rounds: dict  # rule -> stopping round per run (0 = never)
    ex_post: dict  # rule -> ex-post epsilon per run (NaN = never)


def rat_study(epsilon, delta, rho, *, target, sensitivity=1.0, dim=1, rounds=20, runs=2000, at_epsilon=0.5,
              seed=0) -> RatStudy:
    """Many independent rewinds: stopping rounds and ex-post epsilon for hold-out (a public
    check of the error), AboveThreshold at ``at_epsilon`` and RAT."""
    epsilon = positive("epsilon", epsilon)
    in_open_interval("delta", delta, 0.0, 1.0)
    boundary = MixtureBoundary(delta, rho, sensitivity)
    eps = np.geomspace(epsilon / 10, epsilon, positive_int("rounds", rounds))
    times = np.asarray(boundary.time_for(eps))
    rng = np.random.default_rng(seed)
    noise = bm_noise(times, positive_int("dim", dim), positive_int("runs", runs), rng)
    utility = -np.linalg.norm(noise, axis=2)
    S = sensitivity
    rules = {"hold-out": utility >= -target}
    at_thr = rng.laplace(0.0, 2 * S / at_epsilon, (runs, 1))
    rules["AboveThreshold"] = utility + rng.laplace(0.0, 4 * S / at_epsilon, utility.shape) >= -target + at_thr
    grid = np.unique(np.r_[2 * S / eps, 2 * S / eps[-1]])
    zeta = koufogiannis_chain(grid, 1, size=runs, rng=rng)[..., 0][:, np.searchsorted(grid, 2 * S / eps)]
    rules["RAT"] = utility + rng.laplace(0.0, 1.0, utility.shape) * (4 * S / eps) >= -target + zeta
    cost = {"hold-out": (1.0, 0.0), "AboveThreshold": (1.0, at_epsilon), "RAT": (2.0, 0.0)}
    stops, ex_post = {}, {}
    for rule, mask in rules.items():
        first = np.argmax(mask, axis=1)
        hit = mask.any(axis=1)
        stops[rule] = np.where(hit, first + 1, 0)
        factor, extra = cost[rule]
        ex_post[rule] = np.where(hit, factor * eps[first] + extra, np.nan)
    return RatStudy(eps, stops, ex_post)

