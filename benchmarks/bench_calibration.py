"""Arete calibration: seconds per certified ``Arete.calibrated`` over a grid of epsilon.

Prints median, p90 and worst over 30 epsilons in [0.5, 40] (off the frontier table's own grid)
for each objective (wall-clock, and CPU time, which other load on a shared machine disturbs
less), with each result's certified loss (must be <= epsilon) and its error
relative to Laplace. ``--cold`` also times the search without the frontier-table warm start
(where supported); ``--frontier`` times regenerating the whole table. The script only uses
the public API, so it runs unchanged on older checkouts (for before/after figures).

``--range`` times the whole accepted range instead: 200 log-spaced epsilons in [1e-3, 50] (issue 42's
grid), each call's CPU time beside its floor measured in the same run, interleaved: one certificate
(``privacy_loss(1)``) of the result, the least work any calibration must do to vouch for its answer.

Run: python benchmarks/bench_calibration.py [--cold] [--frontier] [--range]
"""

from __future__ import annotations

import inspect
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from noisecore import Arete
from noisecore import _arete_calibration as cal
from noisecore import frontier as fr

EPSILONS = np.round(np.geomspace(0.5, 40, 30) * 1.013, 4)  # off the table's grid
EPSILONS[-1] = 38.0  # the slowest case reported in issue 14
EPSILONS = np.clip(EPSILONS, 0.5, 40)


def run(label, calibrate):
    print(f"{label}:")
    print(
        "  objective  median s   p90 s   worst s (eps)    max(certified - eps)   value / Laplace (min..max)"
        "   CPU s: median  p90  worst"
    )
    for objective in ("abs", "var"):
        times, cpu, excess, rel = [], [], [], []
        for eps in EPSILONS:
            start, start_cpu = time.perf_counter(), time.process_time()
            dist = calibrate(float(eps), objective)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            excess.append(float(dist.privacy_loss(1.0)) - eps)
            value = dist.mean_abs() if objective == "abs" else dist.var()
            rel.append(value / (1 / eps if objective == "abs" else 2 / eps**2))
        times = np.array(times)
        worst = int(np.argmax(times))
        print(
            f"  {objective:>9}  {np.median(times):8.3f}  {np.percentile(times, 90):6.3f}  {times[worst]:7.3f} "
            f"({EPSILONS[worst]:g})   {max(excess):+.2e}              {min(rel):.4g}..{max(rel):.4g}"
            f"   {np.median(cpu):6.3f} {np.percentile(cpu, 90):6.3f} {max(cpu):6.3f}"
        )


def whole_range(count=200, low=1e-3, high=50.0):
    """CPU time of Arete.calibrated over ``count`` log-spaced epsilons, each beside its floor (one
    certificate of the result), the two alternating."""
    cpu, floor, laplace = [], [], 0
    epsilons = np.geomspace(low, high, count)
    for eps in epsilons:
        start = time.process_time()
        dist = Arete.calibrated(float(eps))
        cpu.append(time.process_time() - start)
        start = time.process_time()
        dist.privacy_loss(1.0)
        floor.append(time.process_time() - start)
        laplace += dist.alpha <= 1e-11
    cpu, floor = np.array(cpu), np.array(floor)
    worst = int(np.argmax(cpu))
    slow = epsilons[cpu > 0.1]
    print(f"{count} epsilons in [{low:g}, {high:g}] ({laplace} of them the Laplace limit), CPU s per call:")
    print(
        f"  median {np.median(cpu):.4f}  p90 {np.percentile(cpu, 90):.4f}"
        f"  worst {cpu[worst]:.3f} (eps {epsilons[worst]:.4g})"
        f"   floor (one certificate): median {np.median(floor):.4f}  ratio median {np.median(cpu / floor):.1f}x"
    )
    print(f"  over 0.1 s: {len(slow)} ({', '.join(f'{e:.3g}' for e in slow) or 'none'})")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    if "--range" in argv:
        whole_range()
        return
    print(f"{len(EPSILONS)} epsilons in [{EPSILONS.min():g}, {EPSILONS.max():g}] (wall-clock; CPU time at the right)")
    run("Arete.calibrated", lambda eps, obj: Arete.calibrated(eps, objective=obj))
    if "--cold" in argv and "warm" in inspect.signature(cal.calibrate).parameters:
        from noisecore._arete_quadrature import AreteKernel
        from noisecore.arete import _argsup_log_ratio

        def cold(eps, obj):
            params = cal.calibrate(eps, obj, lambda a, t, la: _argsup_log_ratio(AreteKernel(a, t, la), 1.0), warm=False)
            return Arete(*params)

        run("without the frontier-table warm start", cold)
    if "--frontier" in argv:
        start = time.perf_counter()
        rows = fr.compute()
        print(f"whole frontier ({len(rows)} epsilons x 2 objectives): {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
