"""Calibrating the Arete to a target epsilon (an exchange method with exact certification).

Minimise E|Z| (or Var Z) over (log alpha, log theta, log lam) with SLSQP subject to
log f(t) - log f(t + 1) <= epsilon at a finite set of points t and to the tail limit
1/max(theta, lam) <= epsilon. The exact supremum over all t (``_argsup_log_ratio``) then
certifies the result; if it exceeds epsilon, its arg-sup joins the point set and the solve
repeats. A final secant search on lam (larger lam is more private here) guarantees the
certificate. The search starts from the shipped frontier table where it covers epsilon.
Sensitivity 1; other sensitivities scale theta and lam.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeAlias

import numpy as np
import numpy.typing as npt
from scipy import interpolate, optimize

from ._arete_quadrature import AreteKernel
from ._frontier_table import load

FloatArray: TypeAlias = npt.NDArray[np.float64]
#: (alpha, theta, lam) of an Arete for sensitivity 1.
Params: TypeAlias = tuple[float, float, float]
#: ``argsup(alpha, theta, lam) -> (loss, t)``: the exact privacy loss at distance 1 and a t attaining it
#: (inf for the tail limit).
Argsup: TypeAlias = Callable[[float, float, float], tuple[float, float]]

_BOUNDS = [(math.log(1e-12), 0.0), (math.log(1e-4), math.log(100.0)), (math.log(1e-12), math.log(100.0))]
_MARGIN = 1e-7  # relative slack kept below the target during the search
_FD_STEP = 1.4901161193847656e-08  # sqrt(machine epsilon), SLSQP's own default


def mean_abs(alpha: float, theta: float, lam: float) -> float:
    """E|Z| of Arete(alpha, theta, lam), by ``AreteKernel.mean_abs``."""
    return AreteKernel(alpha, theta, lam).mean_abs()


def variance(alpha: float, theta: float, lam: float) -> float:
    """Var Z = 2 alpha theta^2 + 2 lam^2 of Arete(alpha, theta, lam)."""
    return 2 * alpha * theta**2 + 2 * lam**2


def _ratios(params: Params, points: npt.ArrayLike) -> FloatArray:
    """log f(t) - log f(t + 1) at each point t."""
    kernel = AreteKernel(*params)
    pts = np.asarray(points, dtype=float)
    lp = kernel.evaluate(np.abs(np.concatenate([pts, pts + 1.0])))[0]
    return lp[: pts.size] - lp[pts.size :]


def _starts(epsilon: float) -> list[Params]:
    """Deterministic starting points, from the optima found over [0.5, 40]: the trend for
    epsilon >= 4 (log lam ~ 0.45 - eps/2, log alpha ~ -0.2 - eps/2, theta ~ 1 - 0.4 e^((6 - eps)/3)),
    the family that first beats Laplace near epsilon = 3.5, and a point near the Laplace limit."""
    trend = (math.exp(-0.2 - epsilon / 2), 1 - 0.4 * math.exp((6 - epsilon) / 3), math.exp(0.45 - epsilon / 2))
    mid = (min(0.8, 0.39 * math.exp(-0.85 * (epsilon - 4.2))), 0.38, 0.08)  # takes over from Laplace near 3.5
    laplace_like = (1e-3, 1.0, 1.05 / epsilon)
    if epsilon >= 6:
        return [trend]
    if epsilon >= 4:
        return [trend, mid]
    if epsilon >= 2.5:
        return [mid, laplace_like]
    return [laplace_like]


# the optima's active points for epsilon in about [3.5, 6] move within (0, 0.1]: the constraint
# there is the peak of the ratio over this window (a parabola through the best three points,
# smooth in the parameters), not one point at a time
_WINDOW = np.linspace(0.0, 0.12, 49)


def _window_peak(values: FloatArray) -> float:
    """Maximum of ``values``, refined by a parabola through the largest and its neighbours."""
    i = int(np.argmax(values))
    if i == 0 or i == values.size - 1:
        return float(values[i])
    left, mid, right = values[i - 1], values[i], values[i + 1]
    curve = left - 2 * mid + right
    return float(mid - (right - left) ** 2 / (8 * curve)) if curve < 0 else float(mid)


def _solve(epsilon: float, objective: str, start: npt.ArrayLike, points: Sequence[float]) -> FloatArray:
    """SLSQP over log parameters from ``start`` with the ratio constrained at ``points``; (alpha, theta, lam)."""
    target = epsilon * (1 - _MARGIN)
    window = _WINDOW if epsilon < 6.5 else _WINDOW[:0]
    pts = np.concatenate([window, np.asarray(points, dtype=float)])
    memo: dict[bytes, tuple[float, FloatArray]] = {}

    def both(x: FloatArray) -> tuple[float, FloatArray]:
        """(cost, constraints) from one density evaluation (E|Z| needs B(0), a by-product)."""
        key = x.tobytes()
        if key not in memo:
            a, th, la = np.exp(x)
            kernel = AreteKernel(a, th, la)
            lp, _, b0 = kernel.evaluate(np.abs(np.concatenate([pts, pts + 1.0])))
            value = kernel.mean_abs(b0) if objective == "abs" else variance(a, th, la)
            tail = target - 1.0 / max(th, la)
            ratios = lp[: pts.size] - lp[pts.size :]
            peak = [target - _window_peak(ratios[: window.size])] if window.size else []
            memo[key] = (math.log(value), np.concatenate([target - ratios[window.size :], peak, [tail]]))
        return memo[key]

    def jacobians(x: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Forward differences of cost and constraints sharing the same three evaluations."""
        f0, c0 = both(x)
        grad, jac = np.empty(3), np.empty((c0.size, 3))
        for i in range(3):
            step = np.zeros(3)
            step[i] = _FD_STEP * max(1.0, abs(x[i]))
            f1, c1 = both(x + step)
            grad[i] = (f1 - f0) / step[i]
            jac[:, i] = (c1 - c0) / step[i]
        return grad, jac

    x0 = np.clip(np.log(start), [b[0] for b in _BOUNDS], [b[1] for b in _BOUNDS])
    res = optimize.minimize(
        lambda x: both(x)[0],
        x0,
        jac=lambda x: jacobians(x)[0],
        method="SLSQP",
        bounds=_BOUNDS,
        constraints=[{"type": "ineq", "fun": lambda x: both(x)[1], "jac": lambda x: jacobians(x)[1]}],
        options={"maxiter": 30, "ftol": 1e-10},
    )
    return np.exp(res.x)


def _certify_by_lam(
    alpha: float, theta: float, lam: float, epsilon: float, argsup: Argsup, loss: float | None = None
) -> float | None:
    """Smallest lam' >= lam (to about 1e-9 of epsilon in the loss) whose exact loss is <= epsilon;
    None when the search ended far from feasible (more than 5% over), which the caller discards.

    The loss falls smoothly as lam grows: a secant on log(loss / epsilon) against log lam, aimed
    just below 0 and then kept bracketed (Illinois), usually needs two or three certificates.
    """
    if loss is None:
        loss = argsup(alpha, theta, lam)[0]
    if loss <= epsilon:
        return lam
    if loss > 1.05 * epsilon:
        return None
    aim = -5e-10  # land on the feasible side

    def g(log_lam: float) -> float:
        """log(loss / epsilon) - aim at lam = exp(log_lam)."""
        return math.log(argsup(alpha, theta, math.exp(log_lam))[0] / epsilon) - aim

    x0, g0 = math.log(lam), math.log(loss / epsilon) - aim
    x1 = x0 + 1.05 * g0  # the tail limit 1/lam has elasticity -1
    g1 = g(x1)
    for _ in range(8):  # extrapolate until bracketed
        if g1 <= 0:
            break
        step = (x1 - x0) * g1 / (g0 - g1) if g0 > g1 else (x1 - x0)
        x0, g0 = x1, g1
        x1, g1 = x1 + max(step, 1e-12) * 1.2, g(x1 + max(step, 1e-12) * 1.2)
    else:
        return None
    lo, g_lo, hi, g_hi = x0, g0, x1, g1  # g_lo > 0 >= g_hi
    side = 0
    for _ in range(30):
        if g_hi > -1e-9 or hi - lo < 1e-10:
            break
        x = hi - g_hi * (hi - lo) / (g_hi - g_lo)
        x = min(max(x, lo + 1e-3 * (hi - lo)), hi - 1e-3 * (hi - lo))
        gx = g(x)
        if gx > 0:
            lo, g_lo = x, gx
            if side == -1:
                g_hi /= 2
            side = -1
        else:
            hi, g_hi = x, gx
            if side == 1:
                g_lo /= 2
            side = 1
    return math.exp(hi)


def _table_starts(epsilon: float, objective: str) -> list[Params] | None:
    """Warm starts from the shipped frontier table: None outside its range (or without it),
    [] when both neighbouring rows are the Laplace limit, else the interpolated optimum
    (log-linear in epsilon) or, across the switch of families, the non-Laplace neighbour.

    Below the table, where its two lowest rows are the Laplace limit, also []: the Arete's advantage
    over Laplace grows with epsilon, and the cold search finds none below 3.37 (checked at 200
    epsilons in [1e-3, 0.5] by ``benchmarks/bench_calibration.py --below``, and at seven in
    ``tests/noisecore/test_calibration.py``); it took up to 1 s there to say so."""
    try:
        table = load()
    except (OSError, ValueError, KeyError):  # the table is an optional accelerator
        return None
    eps = table["epsilon"]
    cols = [table[f"arete_{objective}_{name}"] for name in ("alpha", "theta", "lam")]
    if not all(np.all(np.isfinite(c)) for c in cols):
        return None
    if epsilon < eps[0] and all(float(cols[0][k]) <= 1e-11 for k in (0, 1)):
        return []
    if not eps[0] <= epsilon <= eps[-1]:
        return None
    j = int(np.clip(np.searchsorted(eps, epsilon), 1, len(eps) - 1))
    left, right = ((float(cols[0][k]), float(cols[1][k]), float(cols[2][k])) for k in (j - 1, j))
    laplace = [row[0] <= 1e-11 for row in (left, right)]
    if all(laplace):
        return []
    if any(laplace):
        return [right if laplace[0] else left]
    # the optimum moves smoothly along the non-Laplace rows: a monotone cubic in log epsilon
    rows = cols[0] > 1e-11
    logs = np.log(np.vstack([c[rows] for c in cols]))
    curve = interpolate.PchipInterpolator(np.log(eps[rows]), logs, axis=1)
    alpha, theta, lam = (float(v) for v in np.exp(curve(math.log(epsilon))))
    return [(alpha, theta, lam)]


def calibrate(epsilon: float, objective: str, argsup: Argsup, *, warm: bool = True) -> Params:
    """(alpha, theta, lam) for sensitivity 1; ``argsup(alpha, theta, lam) -> (loss, t)``.

    With ``warm`` the search starts from the shipped frontier table where it covers epsilon
    (the result is certified all the same); otherwise from the fixed starts of ``_starts``.

    Parameters
    ----------
    epsilon : float
        Target privacy loss at distance 1, > 0 (not validated here).
    objective : {"abs", "var"}
        Minimise E|Z| ("abs") or the variance ("var").
    argsup : callable
        ``argsup(alpha, theta, lam) -> (loss, t)``: the exact supremum of log f(t) - log f(t + 1)
        over t and a t attaining it (inf for the tail limit); it certifies the result.
    warm : bool, optional
        Start from the shipped frontier table where it covers epsilon (default True).

    Returns
    -------
    tuple of float
        (alpha, theta, lam) with ``argsup(alpha, theta, lam)[0] <= epsilon``; the Laplace limit
        (alpha = 1e-12, theta = 1) when no start does better.

    Raises
    ------
    RuntimeError
        If not even the Laplace limit could be certified (not expected to happen).

    References
    ----------
    Paper B [PS22] (Pagh & Stausholm): the Arete distribution. Its Lemma 3 gives parameters
    with a proven but loose guarantee; this search certifies each result by the exact loss instead.
    """
    best: tuple[float, Params | None] = (math.inf, None)
    starts = _table_starts(epsilon, objective) if warm else None
    if starts is None:
        starts = _starts(epsilon)
    for start in starts:
        # the active points of the optima found lie at 0, in (0, 0.1] (epsilon 3.5 - 6) or near
        # 0.25 (Lemma 3 like); a small excess left by the discretisation goes to the lam search
        points = [0.0, 0.25, -0.5]
        # and where the start's own ratio peaks: near the optimum that is its active point (without it
        # the first solve could use all its iterations looking for it: 0.19 s at epsilon 3.677)
        t_start = argsup(*start)[1]
        if math.isfinite(t_start) and all(abs(t_start - p) > 1e-9 for p in points):
            points.append(t_start)
        params: Params | FloatArray = start
        for _ in range(6):
            params = _solve(epsilon, objective, params, points)
            loss, t_star = argsup(*params)
            if loss <= epsilon * (1 + 1e-6) or not math.isfinite(t_star) or any(abs(t_star - p) < 1e-9 for p in points):
                break
            points.append(t_star)
        alpha, theta, lam_found = params
        lam = _certify_by_lam(alpha, theta, lam_found, epsilon, argsup, loss=loss)
        if lam is None:
            continue
        value = mean_abs(alpha, theta, lam) if objective == "abs" else variance(alpha, theta, lam)
        if value < best[0]:
            best = (value, (float(alpha), float(theta), float(lam)))
    # the Laplace limit (alpha -> 0) is always feasible: the result is never worse than it. Its
    # error is about that of Laplace(1/epsilon); it is certified only when it may win.
    tiny = 1e-12
    laplace_value = 1 / epsilon if objective == "abs" else 2 / epsilon**2
    if best[1] is None or best[0] > laplace_value * (1 - 1e-6):
        lam0 = _certify_by_lam(tiny, 1.0, 1.0 / epsilon * (1 + 1e-9), epsilon, argsup)
        if lam0 is None:
            raise RuntimeError(f"the Laplace limit could not be certified at epsilon = {epsilon:g}")
        laplace_limit = (tiny, 1.0, lam0)
        value = mean_abs(*laplace_limit) if objective == "abs" else variance(*laplace_limit)
        if value < best[0]:
            best = (value, laplace_limit)
    if best[1] is None:
        raise RuntimeError(f"no parameters could be certified at epsilon = {epsilon:g}")
    return best[1]
