"""Brownian rewind and boundary inversion against plain baselines measured in the same run.

- a 10,000-point rewound path (release at T, then the path at 10,000 times in (0, T],
  exactly conditioned on the release) vs a plain forward random walk on the same times;
- 10,000 inversions of the mixture boundary (vectorised safeguarded Newton) vs
  scipy.optimize.brentq called per target.

Run: python benchmarks/bench_brownian.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from scipy import optimize

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from noisecore import BrownianMechanism, LinearBoundary, MixtureBoundary


def median_time(func, repeats=9):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main():
    bound = LinearBoundary.optimized_for(0.3, 1e-6)
    T = float(bound.time_for(0.3))
    times = np.linspace(0, T, 10_001)[1:]

    def rewind(dim):
        mech = BrownianMechanism(np.zeros(dim), sensitivity=1.0, boundary=bound, rng=1)
        mech.release(T)
        return mech.path(times)

    def forward_walk(dim):
        rng = np.random.default_rng(1)
        steps = rng.standard_normal((times.size, dim)) * np.sqrt(np.diff(np.r_[0.0, times]))[:, None]
        return np.cumsum(steps, axis=0)

    for dim in (1, 2):
        t_rewind = median_time(lambda d=dim: rewind(d))
        t_walk = median_time(lambda d=dim: forward_walk(d))
        print(f"10,000-point rewound path, d={dim}: {t_rewind * 1e3:7.2f} ms; forward random walk "
              f"{t_walk * 1e3:7.2f} ms; ratio {t_rewind / t_walk:5.1f}x")

    mix = MixtureBoundary.optimized_for(0.3, 1e-6)
    targets = np.geomspace(0.01, 10, 10_000)
    t_vec = median_time(lambda: mix.time_for(targets), repeats=5)

    def one_by_one():
        out = np.empty(targets.size)
        for i, eps in enumerate(targets):
            out[i] = np.exp(optimize.brentq(lambda u, e=eps: mix.epsilon(np.exp(u)) - e, -30.0, 60.0, xtol=1e-14))
        return out

    start = time.perf_counter()
    reference = one_by_one()
    t_brent = time.perf_counter() - start
    agree = np.max(np.abs(mix.time_for(targets) / reference - 1))
    print(f"10,000 mixture-boundary inversions: vectorised {t_vec * 1e3:7.2f} ms; brentq loop "
          f"{t_brent * 1e3:8.1f} ms; speed-up {t_brent / t_vec:6.1f}x; max rel. difference {agree:.1e}")
    lin = LinearBoundary.optimized_for(0.3, 1e-6)
    t_lin = median_time(lambda: lin.time_for(targets + 0.2))
    print(f"10,000 linear-boundary inversions (closed form): {t_lin * 1e3:7.3f} ms")


if __name__ == "__main__":
    main()
