"""ShareSum (dropout noise) scalar and vector calls: the current code against a baseline measured in
the same run.

Two baselines, both in this checkout (no git history needed):

- ``quadrature`` (default): the textbook computation written out below: the density of
  Z = U1 - U2 as one adaptive ``scipy.integrate.quad`` of f_U(u) f_U(u + |t|) with scipy's 1F1, the
  survival function and E|Z| as quadratures of that density, the privacy loss as the largest
  log-density ratio on a grid (a lower bound: its difference, about 1e-2, is the grid's). Its values
  are an independent check of the current ones.
- ``no-tables``: the current code with the cached log 1F1 tables switched off (scipy's 1F1 for
  every batch): what the tables save.

Each figure is the median of ``--repeats`` calls, interleaved (baseline, current, ...) so a burst of
load hits both; the ratio is baseline / current. The largest relative difference of the values is
printed beside each row. Parameter sets: the paper's eps = 6 Arete (the app's default) at the dropout
view's fractions present, through ``dropout_point``'s ShareSum(alpha q, theta, q, lam).

``--curves`` times what the app draws instead: one whole dropout curve (the noise view's six fractions
present, n = 100) for the calibrated Arete at epsilon 6, 10, 20 and 27 (the largest whose Arete the share
computation takes), CPU seconds per curve, beside its floor measured in the same run, interleaved: the
same curve for the Laplace limit (Laplace shares, closed forms), the least any dropout curve can cost.

Run: python benchmarks/bench_sharesum.py [--repeats N] [--baseline quadrature|no-tables] [--quick] [--curves]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy import integrate, special

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from noisecore import dropout as current  # noqa: E402
from noisecore.dropout import tables  # noqa: E402

EPS6 = (0.07559007048913552, 0.6295929433519876, 0.05453349704921005)


class QuadratureShareSum:
    """GG(a, theta) + GG(b, lam) (a, b > 0) by direct quadrature: the baseline."""

    def __init__(self, a, theta, b, lam):
        self.a, self.theta, self.b, self.lam = a, theta, b, lam
        self.mu = max(theta, lam)

    def _log_fu(self, u):
        """log density of U = Gamma(a, theta) + Gamma(b, lam) at u > 0 (1F1 with a negative argument)."""
        a, theta, b, lam = self.a, self.theta, self.b, self.lam
        c = a + b
        if 1 / theta >= 1 / lam:
            shape, slow, gap = a, 1 / lam, 1 / theta - 1 / lam
        else:
            shape, slow, gap = b, 1 / theta, 1 / lam - 1 / theta
        norm = special.gammaln(c) + a * math.log(theta) + b * math.log(lam)
        return (c - 1) * math.log(u) - slow * u + math.log(special.hyp1f1(shape, c, -gap * u)) - norm

    def _pdf_one(self, t):
        t = abs(t)
        reach = 60 * self.mu

        def integrand(u):
            return math.exp(self._log_fu(u) + self._log_fu(u + t)) if u > 0 else 0.0

        pieces = [0.0, min(self.mu, reach), reach]
        return sum(integrate.quad(integrand, lo, hi, limit=200)[0] for lo, hi in itertools.pairwise(pieces))

    def pdf(self, x):
        return np.vectorize(self._pdf_one, otypes=[float])(x)

    def sf(self, x):
        return integrate.quad(self._pdf_one, x, x + 60 * self.mu, limit=200)[0]

    def mean_abs(self):
        return 2 * integrate.quad(lambda t: t * self._pdf_one(t), 0, 60 * self.mu, limit=200)[0]

    def privacy_loss(self, d):
        t = np.linspace(-d / 2 - 5 * self.mu, 5 * self.mu, 201)
        return float(np.max(np.abs(np.log(self.pdf(t)) - np.log(self.pdf(t + d)))))


@contextlib.contextmanager
def tables_off():
    """The current code with scipy's 1F1 for every batch (the tables' batch size set out of reach)."""
    saved = tables._HYP_MIN_BATCH
    tables._HYP_MIN_BATCH = math.inf
    try:
        yield
    finally:
        tables._HYP_MIN_BATCH = saved


def baseline(params, dist, *, quadrature):
    """``run(call)``: the call on the baseline for these parameters."""
    if quadrature:
        reference = QuadratureShareSum(*params)
        return lambda call: call(reference)

    def run(call):
        with tables_off():
            return call(dist)

    return run


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def curve_cpu(alpha, theta, lam, present, eps_full):
    """CPU seconds for one dropout curve: one ``dropout_point`` per fraction present."""
    start = time.process_time()
    for q in present:
        current.dropout_point(alpha, theta, lam, fraction=float(q), epsilon_full=eps_full)
    return time.process_time() - start


def curves(repeats):
    from noisecore import Arete

    present = current.dropout_fractions(100, fractions_present=[1.0, 0.95, 0.9, 0.8, 0.7, 0.6])
    print(f"one dropout curve ({len(present)} fractions present), CPU s: median of {repeats}, interleaved")
    print(f"{'epsilon':>8} {'Arete alpha':>12} {'curve s':>9} {'Laplace-limit floor s':>22} {'ratio':>7}")
    for eps in (6.0, 10.0, 20.0, 27.0):
        arete = Arete.calibrated(eps)
        eps_full = float(arete.privacy_loss(1.0))
        curve_cpu(arete.alpha, arete.theta, arete.lam, present, eps_full)  # warm the tables once
        exact, floor = [], []
        for _ in range(repeats):
            floor.append(curve_cpu(0.0, 1 / eps, 1 / eps, present, eps))
            exact.append(curve_cpu(arete.alpha, arete.theta, arete.lam, present, eps_full))
        c, f = float(np.median(exact)), float(np.median(floor))
        print(f"{eps:>8g} {arete.alpha:>12.3g} {c:>9.3f} {f:>22.4f} {c / f:>7.0f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline", choices=("quadrature", "no-tables"), default="quadrature")
    parser.add_argument("--quick", action="store_true", help="fraction 0.8 only, no 4001-point pdf")
    parser.add_argument("--curves", action="store_true", help="whole dropout curves against the Laplace limit")
    args = parser.parse_args()
    if args.curves:
        print(f"load average: {os.getloadavg()}; {os.cpu_count()} cores")
        curves(args.repeats)
        return
    quadrature = args.baseline == "quadrature"
    print(f"load average: {os.getloadavg()}; {os.cpu_count()} cores; baseline {args.baseline}")
    fractions = (0.8,) if args.quick else (1.0, 0.8, 0.6)
    header = f"{'fraction':>8} {'call':<22} {'baseline ms':>12} {'current ms':>11} {'ratio':>7} {'max rel diff':>13}"
    print(header)
    for q in fractions:
        params = (EPS6[0] * q, EPS6[1], q, EPS6[2])
        dist = current.ShareSum(*params)
        base_runner = baseline(params, dist, quadrature=quadrature)
        calls = {
            "pdf(1 point)": lambda d: d.pdf(0.3),
            "pdf(101 points)": lambda d: d.pdf(np.linspace(-5, 5, 101)),
            "pdf(4001 points)": lambda d: d.pdf(np.linspace(-8, 8, 4001)),
            "sf(1.0)": lambda d: d.sf(1.0),
            "sf(0.05)": lambda d: d.sf(0.05),
            "privacy_loss(1.0)": lambda d: d.privacy_loss(1.0),
            "mean_abs()": lambda d: d.mean_abs(),
        }
        if args.quick:
            del calls["pdf(4001 points)"]
        for name, call in calls.items():
            # the first calls warm the caches (the current code's tables; the baseline's with no-tables)
            values = [np.asarray(base_runner(call), dtype=float), np.asarray(call(dist), dtype=float)]
            diff = float(np.max(np.abs(values[1] / values[0] - 1)))
            slow = "4001" in name or (quadrature and name in ("privacy_loss(1.0)", "mean_abs()", "pdf(101 points)"))
            reps = 1 if slow else args.repeats
            tb, tc = [], []
            for _ in range(reps):
                tb.append(timed(base_runner, call))
                tc.append(timed(call, dist))
            b, c = float(np.median(tb)), float(np.median(tc))
            print(f"{q:>8g} {name:<22} {1e3 * b:>12.2f} {1e3 * c:>11.2f} {b / c:>7.1f} {diff:>13.1e}")
        point = {"alpha": EPS6[0], "theta": EPS6[1], "lam": EPS6[2], "fraction": q, "epsilon_full": 6.0}
        tc = timed(current.dropout_point, **point)
        if quadrature:
            print(f"{q:>8g} {'dropout_point':<22} {'-':>12} {1e3 * tc:>11.2f}")
        else:
            tables._HYP_TABLES.clear()  # both from cold tables
            with tables_off():
                tb = timed(current.dropout_point, **point)
            print(f"{q:>8g} {'dropout_point':<22} {1e3 * tb:>12.2f} {1e3 * tc:>11.2f} {tb / tc:>7.1f}")
    print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
