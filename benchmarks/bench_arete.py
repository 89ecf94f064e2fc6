"""Arete density and epsilon certificate: exact quadrature against paper B's grid method.

The grid method (re-implemented from the paper's description): step 0.001 on [-8, 8],
Gamma mass per cell with the lost mass lumped at 0, FFT convolutions for Gamma - Gamma
and then the Laplace part; the certificate is the largest log ratio of cells one
sensitivity apart. Both run here, in one process, and the script prints times, ratios
and errors (the exact method's error against an mpmath oracle at a few points).

Run: python benchmarks/bench_arete.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from scipy import signal, stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from noisecore import Arete

EPS6 = (0.07559007048913552, 0.6295929433519876, 0.05453349704921005)


def grid_density(alpha, theta, lam, step=1e-3, half_width=8.0):
    n = round(half_width / step)
    k = np.arange(n + 1)
    gamma_cdf = stats.gamma(alpha, scale=theta).cdf((k + 0.5) * step)
    mass = np.diff(np.concatenate([[0.0], gamma_cdf]))
    mass[0] += 1.0 - gamma_cdf[-1]  # lost mass lumped at 0
    gg = signal.fftconvolve(mass, mass[::-1])  # support -n..n
    j = np.arange(-n, n + 1)
    lap = stats.laplace(scale=lam)
    lap_mass = lap.cdf((j + 0.5) * step) - lap.cdf((j - 0.5) * step)
    pmf = signal.fftconvolve(gg, lap_mass, mode="same")
    return j * step, pmf / step


def grid_certificate(density, step=1e-3, sensitivity=1.0):
    shift = round(sensitivity / step)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.log(density[:-shift] / density[shift:])
    return float(np.nanmax(np.abs(ratio[np.isfinite(ratio)])))


def best_time(func, repeats=15):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), float(np.min(times))


def main():
    dist = Arete(*EPS6)
    x = np.linspace(-8, 8, 4001)
    grid_x, grid_pdf = grid_density(*EPS6)
    exact_on_grid = dist.pdf(grid_x)

    t_grid, _ = best_time(lambda: grid_density(*EPS6))
    t_pdf, _ = best_time(lambda: dist.pdf(x))
    t_grid_cert, _ = best_time(lambda: grid_certificate(grid_density(*EPS6)[1]))
    t_cert, _ = best_time(lambda: Arete(*EPS6).privacy_loss(1.0), repeats=7)

    grid_rel = np.abs(grid_pdf - exact_on_grid) / exact_on_grid
    print("Arete eps=6 local-search set, 4,001 points on [-8, 8] vs grid step 0.001")
    print(f"  grid density (16,001 cells):   median {t_grid * 1e3:8.2f} ms")
    print(f"  exact density (4,001 points):  median {t_pdf * 1e3:8.2f} ms   ratio exact/grid {t_pdf / t_grid:5.2f}x")
    print(f"  grid certificate:              median {t_grid_cert * 1e3:8.2f} ms")
    ratio = t_cert / t_grid_cert
    print(f"  exact certificate:             median {t_cert * 1e3:8.2f} ms   ratio exact/grid {ratio:5.2f}x")
    print(f"  grid density max rel. error vs exact: {grid_rel.max():.3e} (median {np.median(grid_rel):.3e})")
    print(f"  certificate: exact {dist.privacy_loss(1.0):.6f}, grid {grid_certificate(grid_pdf):.6f}")

    try:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests.noisecore import oracles
    except ImportError:  # pragma: no cover - mpmath is a test extra
        return
    sample = np.array([0.0, 0.013, 0.2, 1.0, 3.7, 8.0])
    exact = dist.pdf(sample)
    ref = np.array([float(oracles.arete_pdf_direct(t, *EPS6)) for t in sample])
    worst = np.max(np.abs(exact / ref - 1))
    print(f"  exact density max rel. error vs mpmath oracle at {len(sample)} points: {worst:.2e}")


if __name__ == "__main__":
    main()
