"""ShareSum (dropout noise) scalar and vector calls: the current code against a baseline revision.

The baseline is ``noisecore/dropout.py`` of a git revision (default: the commit before the ShareSum
speed-up, 082c443), loaded as a module beside the current one, so both are timed in the same run on
the same load. Each figure is the median of ``--repeats`` calls, interleaved (baseline, current, ...)
so a burst of load hits both; the ratio is baseline / current. The largest relative difference of the
values is printed beside each row.

Parameter sets: the paper's eps = 6 Arete (the app's default) at the dropout view's fractions
present, through ``dropout_point``'s ShareSum(alpha q, theta, q, lam).

Run: python benchmarks/bench_sharesum.py [--repeats N] [--baseline REV] [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from noisecore import dropout as current  # noqa: E402

EPS6 = (0.07559007048913552, 0.6295929433519876, 0.05453349704921005)


def load_baseline(rev: str):
    source = subprocess.run(
        ["git", "show", f"{rev}:noisecore/dropout.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    source = source.replace("from ._", "from noisecore._").replace("from .arete", "from noisecore.arete")
    path = Path(tempfile.mkdtemp()) / "dropout_baseline.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("dropout_baseline", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline", default="082c443")
    parser.add_argument("--quick", action="store_true", help="fraction 0.8 only, no 4001-point pdf")
    args = parser.parse_args()
    base = load_baseline(args.baseline)
    print(f"load average: {os.getloadavg()}; {os.cpu_count()} cores; baseline {args.baseline}")
    fractions = (0.8,) if args.quick else (1.0, 0.8, 0.6)
    header = f"{'fraction':>8} {'call':<22} {'baseline ms':>12} {'current ms':>11} {'ratio':>7} {'max rel diff':>13}"
    print(header)
    for q in fractions:
        params = (EPS6[0] * q, EPS6[1], q, EPS6[2])
        dists = (base.ShareSum(*params), current.ShareSum(*params))
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
            values = [np.asarray(call(d), dtype=float) for d in dists]  # warm caches, compare values
            diff = float(np.max(np.abs(values[1] / values[0] - 1)))
            reps = 1 if "4001" in name else args.repeats
            tb, tc = [], []
            for _ in range(reps):
                tb.append(timed(call, dists[0]))
                tc.append(timed(call, dists[1]))
            b, c = float(np.median(tb)), float(np.median(tc))
            print(f"{q:>8g} {name:<22} {1e3 * b:>12.2f} {1e3 * c:>11.2f} {b / c:>7.1f} {diff:>13.1e}")
        point = {"alpha": EPS6[0], "theta": EPS6[1], "lam": EPS6[2], "fraction": q, "epsilon_full": 6.0}
        tb = timed(base.dropout_point, **point)
        tc = timed(current.dropout_point, **point)
        print(f"{q:>8g} {'dropout_point':<22} {1e3 * tb:>12.2f} {1e3 * tc:>11.2f} {tb / tc:>7.1f}")
    print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
