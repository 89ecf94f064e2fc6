"""Brownian rewind and boundary inversion against plain baselines measured in the same run.

- a rewound path (release at T, then the path at n times in (0, T), exactly conditioned on the
  release): time and tracemalloc peak of ``BrownianMechanism.path`` vs a plain vectorised numpy
  Brownian bridge from 0 to the released noise (the same law), n = 10,000 and 1,000,000;
- a release after a 1,000,000-point path (the store keeps sorted chunks) vs the same store kept
  as one array and re-sorted after each new point (the old design);
- 10,000 inversions of the mixture boundary (vectorised safeguarded Newton) vs
  scipy.optimize.brentq called per target.

Run: python benchmarks/bench_brownian.py
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
from scipy import optimize

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from noisecore import BrownianMechanism, LinearBoundary, MixtureBoundary


def median_time(func, repeats=9, setup=None):
    """Median wall time of func(setup()) (setup runs outside the timer)."""
    times = []
    for _ in range(repeats):
        arg = setup() if setup else None
        start = time.perf_counter()
        func(arg) if setup else func()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def peak_memory(func, setup=None):
    arg = setup() if setup else None
    tracemalloc.start()
    func(arg) if setup else func()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def plain_bridge(times, T, end, rng):
    """Brownian bridge from B(0) = 0 to B(T) = end at sorted times in (0, T): a free walk, then
    the linear correction with one extra increment to T."""
    steps = rng.standard_normal((times.size, end.size)) * np.sqrt(np.diff(np.r_[0.0, times]))[:, None]
    walk = np.cumsum(steps, axis=0)
    at_T = walk[-1] + rng.standard_normal(end.size) * np.sqrt(T - times[-1])
    return walk + (times / T)[:, None] * (end - at_T)


def bench_paths(bound, T):
    for n in (10_000, 1_000_000):
        times = np.linspace(0, T, n + 1)[1:-1]
        for dim in (1, 2):

            def released(d=dim):
                mech = BrownianMechanism(np.zeros(d), sensitivity=1.0, boundary=bound, rng=1)
                mech.release(T)
                return mech

            end = released().noise

            def mech_path(mech, times=times):
                return mech.path(times)

            def plain(_=None, times=times, end=end):
                return plain_bridge(times, T, end, np.random.default_rng(1))

            repeats = 9 if n < 100_000 else 5
            t_mech = median_time(mech_path, repeats, setup=released)
            t_plain = median_time(plain, repeats)
            m_mech = peak_memory(mech_path, setup=released)
            m_plain = peak_memory(plain)
            print(
                f"{n:>9,}-point rewound path, d={dim}: {t_mech * 1e3:7.2f} ms, peak {m_mech / 1e6:6.1f} MB; "
                f"plain numpy bridge {t_plain * 1e3:7.2f} ms, {m_plain / 1e6:6.1f} MB; "
                f"ratio time {t_mech / t_plain:4.2f}x, memory {m_mech / m_plain:4.2f}x"
            )


class ResortStore:
    """The old store: one sorted array, concatenated and argsorted after each new point."""

    def __init__(self, times, values):
        self.times, self.values = times, values

    def add(self, t, rng):
        i = np.searchsorted(self.times, t)
        lt, lv = (self.times[i - 1], self.values[i - 1]) if i else (0.0, np.zeros(self.values.shape[1]))
        rt, rv = self.times[i], self.values[i]
        frac = (t - lt) / (rt - lt)
        value = lv + frac * (rv - lv) + np.sqrt(frac * (rt - t)) * rng.standard_normal(lv.shape)
        order = np.argsort(np.r_[self.times, t], kind="stable")
        self.times = np.r_[self.times, t][order]
        self.values = np.vstack([self.values, value])[order]
        return value


def bench_release(bound, T):
    n = 1_000_000
    times = np.linspace(0, T, n + 1)[1:-1]
    targets = T * np.linspace(0.95, 0.05, 40) + 1e-9 * np.pi  # decreasing, off the grid
    mech = BrownianMechanism(0.0, sensitivity=1.0, boundary=bound, rng=1)
    mech.release(T)
    mech.path(times)
    new = []
    for t in targets:
        start = time.perf_counter()
        mech.release(t)
        new.append(time.perf_counter() - start)
    store = ResortStore(np.r_[times, T], np.zeros((n, 1)))
    rng = np.random.default_rng(1)
    old = []
    for t in targets[:10]:
        start = time.perf_counter()
        store.add(t, rng)
        old.append(time.perf_counter() - start)
    new_ms, old_ms = np.array(new) * 1e3, np.array(old) * 1e3
    print(
        f"release after a 1,000,000-point path: median {np.median(new_ms):.3f} ms (max {new_ms.max():.3f}) "
        f"over {len(new)} releases; whole-array re-sort {np.median(old_ms):.2f} ms (max {old_ms.max():.2f}); "
        f"speed-up {np.median(old_ms) / np.median(new_ms):5.0f}x"
    )


def main():
    bound = LinearBoundary.calibrated(0.3, delta=1e-6)
    T = float(bound.calibrated_time(0.3))
    bench_paths(bound, T)
    bench_release(bound, T)

    mix = MixtureBoundary.calibrated(0.3, delta=1e-6)
    targets = np.geomspace(0.01, 10, 10_000)
    t_vec = median_time(lambda: mix.calibrated_time(targets), repeats=5)

    def one_by_one():
        out = np.empty(targets.size)
        for i, eps in enumerate(targets):
            out[i] = np.exp(optimize.brentq(lambda u, e=eps: mix.epsilon(np.exp(u)) - e, -30.0, 60.0, xtol=1e-14))
        return out

    start = time.perf_counter()
    reference = one_by_one()
    t_brent = time.perf_counter() - start
    agree = np.max(np.abs(mix.calibrated_time(targets) / reference - 1))
    print(
        f"10,000 mixture-boundary inversions: vectorised {t_vec * 1e3:7.2f} ms; brentq loop "
        f"{t_brent * 1e3:8.1f} ms; speed-up {t_brent / t_vec:6.1f}x; max rel. difference {agree:.1e}"
    )
    lin = LinearBoundary.calibrated(0.3, delta=1e-6)
    t_lin = median_time(lambda: lin.calibrated_time(targets + 0.2))
    print(f"10,000 linear-boundary inversions (closed form): {t_lin * 1e3:7.3f} ms")


if __name__ == "__main__":
    main()
