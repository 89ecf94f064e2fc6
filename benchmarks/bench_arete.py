"""Arete density and epsilon certificate: exact quadrature against a fair grid baseline.

The baseline is paper B's grid method (step h on [-8, 8], Gamma mass per cell with the
lost mass lumped at 0, convolutions of the discretisations, certificate = largest log
ratio of cells one sensitivity apart) written as efficiently as numpy allows: cell masses
from ``scipy.special.gammainc`` and closed-form Laplace cell masses, and both convolutions
done by one real FFT of the smallest alias-free length. Every ratio printed is against it,
measured in the same run: the two alternate call by call and the ratio is the median of the
per-pair ratios of CPU (process) time, which the machine's other load disturbs far less than
wall-clock time (printed in brackets). Both methods' accuracy is measured against an mpmath
convolution oracle (``tests/noisecore/oracles.py``) at fixed points.

Run: python benchmarks/bench_arete.py [--quick]   (--quick skips the mpmath oracle)
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy import fft, special

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from noisecore import Arete
from noisecore.arete import _argsup_log_ratio

PAPER_SETS = {
    6: (0.07559007048913552, 0.6295929433519876, 0.05453349704921005),
    7: (0.03438865645893487, 0.7753538691868341, 0.03916449536622209),
    8: (0.01922231819807612, 0.8312962061581013, 0.02547890283133737),
}
LEMMA3_EPS = (20.0, 25.0, 30.0, 35.0)
SAMPLE = np.array([0.0, 0.05, 0.2, 1.0, 3.7, 6.0])  # on every grid below


def fair_grid_density(alpha, theta, lam, step=1e-3, half_width=8.0):
    """Paper B's grid density on j * step, |j| <= n: one rfft of length >= 3n + 1."""
    n = round(half_width / step)
    cdf = special.gammainc(alpha, (np.arange(n + 1) + 0.5) * (step / theta))
    mass = np.diff(cdf, prepend=0.0)
    mass[0] += 1.0 - cdf[-1]  # lost mass lumped at 0
    size = fft.next_fast_len(3 * n + 1, real=True)  # gg and Laplace span [-2n, 2n]: no alias in [-n, n]
    gamma_hat = fft.rfft(mass, size)
    j = np.arange(n + 1)
    tail = np.exp(-(j + 0.5) * (step / lam))
    lap = np.zeros(size)
    lap[: n + 1] = 0.5 * (np.exp(-(j - 0.5) * (step / lam)) - tail)
    lap[0] = 1.0 - tail[0]
    lap[size - n :] = lap[n:0:-1]
    pmf = fft.irfft(np.abs(gamma_hat) ** 2 * fft.rfft(lap), size)
    values = np.concatenate([pmf[size - n :], pmf[: n + 1]])
    return np.arange(-n, n + 1) * step, values / step


def grid_certificate(density, step=1e-3, sensitivity=1.0):
    shift = round(sensitivity / step)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.abs(np.log(density[:-shift] / density[shift:]))
    ratio = ratio[~np.isnan(ratio)]
    return float(ratio.max()) if ratio.size else math.nan


def timed(func, repeats):
    """Median CPU time of ``func`` (process time: on a shared machine it counts our own work only)."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        func()
        times.append(time.process_time() - start)
    return float(np.median(times))


def paired(func, baseline, repeats):
    """(median CPU s of func, median CPU s of baseline, median of the per-pair ratios, median wall ratio):
    the two alternate, so a change in the machine's load hits both alike."""
    cpu, base, wall = [], [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        baseline()
        w1, c1 = time.perf_counter(), time.process_time()
        func()
        w2, c2 = time.perf_counter(), time.process_time()
        base.append(c1 - c0)
        cpu.append(c2 - c1)
        wall.append((w2 - w1) / (w1 - w0))
    ratio = np.array(cpu) / np.array(base)
    return float(np.median(cpu)), float(np.median(base)), float(np.median(ratio)), float(np.median(wall))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    oracles = None
    if "--quick" not in argv:
        try:
            from tests.noisecore import oracles
        except ImportError:  # pragma: no cover - mpmath is a test extra
            oracles = None
    eps6 = PAPER_SETS[6]
    ref = None
    if oracles is not None:
        ref = np.array([float(oracles.arete_pdf_direct(t, *eps6)) for t in SAMPLE])

    def err(values):
        return "n/a" if ref is None else f"{np.max(np.abs(values / ref - 1)):.1e}"

    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print("Density, eps=6 paper set: CPU time (median) and max rel. error vs mpmath at x =", SAMPLE.tolist())
    grid_times = {}
    for step in (1e-2, 5e-3, 2e-3, 1e-3, 5e-4):
        grid_times[step] = timed(lambda s=step: fair_grid_density(*eps6, step=s), 15)
        xs, dens = fair_grid_density(*eps6, step=step)
        at = dens[np.rint((SAMPLE + 8.0) / step).astype(int)]
        print(f"  fair grid step {step:g} ({len(xs):6d} cells): {grid_times[step] * 1e3:8.2f} ms   error {err(at)}")
    dist = Arete(*eps6)

    def grid():
        return fair_grid_density(*eps6, step=1e-3)

    print("  (ratios: median over alternating pairs with the grid at step 0.001, CPU time; wall-clock in brackets)")
    for n in (1001, 4001, 16001, 64001):
        x = np.linspace(-8, 8, n)
        t_pdf, _, ratio, wall = paired(lambda x=x: dist.pdf(x), grid, 21 if n < 20000 else 7)
        print(
            f"  exact {n:6d} points:              {t_pdf * 1e3:8.2f} ms   error {err(dist.pdf(SAMPLE))}"
            f"   ratio to grid step 0.001 {ratio:5.2f}x ({wall:.2f}x)"
        )
    t_fresh, _, ratio, wall = paired(lambda: Arete(*eps6).pdf(np.linspace(-8, 8, 4001)), grid, 21)
    print(f"  exact 4001 points, new object each call: {t_fresh * 1e3:8.2f} ms   ratio {ratio:5.2f}x ({wall:.2f}x)")
    t_one = timed(lambda: Arete(*eps6).pdf(0.7), 50)
    print(f"  exact single point, new object each call: {t_one * 1e3:8.3f} ms")

    print("Certificate privacy_loss(1) (new object each call), against the fair grid (step 0.001):")
    print("  set           grid ms   exact ms   ratio (wall)     grid eps     exact eps     exact - mpmath at arg-sup")
    sets = [(f"paper {k}", v) for k, v in PAPER_SETS.items()]
    sets += [(f"lemma3 {e:g}", (math.exp(-e / 4), 4 / e, math.exp(-e / 4))) for e in LEMMA3_EPS]
    for name, params in sets:
        t_exact, t_grid, ratio, wall = paired(
            lambda p=params: Arete(*p).privacy_loss(1.0),
            lambda p=params: grid_certificate(fair_grid_density(*p)[1]),
            15,
        )
        grid_eps = grid_certificate(fair_grid_density(*params)[1])
        exact_eps = float(Arete(*params).privacy_loss(1.0))
        check = "n/a"
        if oracles is not None and name.startswith("paper"):
            probe = Arete(*params)
            loss, t_star = _argsup_log_ratio(probe._kernel, 1.0 / probe._unit)
            t_star *= probe._unit  # the kernel works in units of max(theta, lam)
            if math.isfinite(t_star):
                at = math.log(oracles.arete_pdf_direct(t_star, *params) / oracles.arete_pdf_direct(t_star + 1, *params))
                check = f"{loss - at:+.1e} (t* = {t_star:.3g})"
        if name.startswith("paper"):  # a new alpha each call: no cached Bessel table to reuse
            fresh = iter(range(1, 10**6))
            _, _, ratio_new, _ = paired(
                lambda p=params, f=fresh: Arete(p[0] * (1 + 1e-13 * next(f)), p[1], p[2]).privacy_loss(1.0),
                lambda p=params: grid_certificate(fair_grid_density(*p)[1]),
                15,
            )
            name = f"{name} ({ratio_new:.2f}x new alpha)"
        print(
            f"  {name:11s} {t_grid * 1e3:8.2f}  {t_exact * 1e3:8.2f}  {ratio:6.2f}x ({wall:5.2f}x)"
            f"   {grid_eps:9.6f}   {exact_eps:.12f}   {check}"
        )


if __name__ == "__main__":
    main()
