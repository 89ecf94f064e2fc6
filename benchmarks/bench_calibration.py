"""Arete calibration: time per certified calibration and for the whole frontier table.

Run: python benchmarks/bench_calibration.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from noisecore import Arete, Laplace, Staircase
from noisecore import frontier as fr


def main():
    print("epsilon  objective  seconds   E|Z| or Var   / Laplace   / Staircase   certified eps")
    times = []
    for eps in (0.5, 1, 2, 4, 6, 7, 8, 10, 15, 20, 30, 40):
        for objective in ("abs", "var"):
            start = time.perf_counter()
            dist = Arete.calibrated(eps, objective=objective)
            elapsed = time.perf_counter() - start
            times.append(elapsed)
            value = dist.mean_abs() if objective == "abs" else dist.var()
            lap = Laplace.for_epsilon(eps)
            stair = Staircase(eps, gamma=Staircase.optimal_gamma(eps, objective))
            ref_l = lap.mean_abs() if objective == "abs" else lap.var()
            ref_s = stair.mean_abs() if objective == "abs" else stair.var()
            print(f"{eps:7g}  {objective:>9}  {elapsed:7.2f}   {value:11.4e}   {value / ref_l:9.4g}   "
                  f"{value / ref_s:9.4g}   {float(dist.privacy_loss(1.0)):.7f}")
    print(f"per calibration: median {np.median(times):.2f} s, max {np.max(times):.2f} s over {len(times)} calls")
    start = time.perf_counter()
    rows = fr.compute()
    print(f"whole frontier ({len(rows)} epsilons x 2 objectives): {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
