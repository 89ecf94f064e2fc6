"""Paper-scale logistic trade-off experiment: vectorised vs a plain per-trial loop, in one run.

Both do the same work: 1,000 trials x 60 privacy levels x 2 mechanisms (Brownian mechanism
rewound through the levels; Laplace noise reduction), each released parameter's loss on
n = 10,000 rows (d = 38) with the same loss kernel. The loop uses the public mechanism
classes one release at a time.

Run: python benchmarks/bench_experiments.py [--loop-trials N]   (N < 1000 times part of the
loop and scales it linearly; the printout says so)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from noisecore import BrownianMechanism, LaplaceNoiseReduction, LinearBoundary
from noisecore.experiments import default_epsilons, default_task, tradeoff_experiment


def loop(task, eps, trials, seed=0):
    boundary = LinearBoundary.optimized_for(0.3, 1e-6, task.l2_sensitivity)
    rng = np.random.default_rng(seed)
    bm = np.empty((trials, eps.size))
    lnr = np.empty((trials, eps.size))
    for trial in range(trials):
        mech = BrownianMechanism(task.optimum, sensitivity=task.l2_sensitivity, boundary=boundary, rng=rng)
        red = LaplaceNoiseReduction(task.optimum, sensitivity=task.l1_sensitivity, epsilon_max=eps[-1], rng=rng)
        for k, e in enumerate(eps):
            bm[trial, k] = task.batch_loss(mech.release(epsilon=e))
            lnr[trial, k] = task.batch_loss(red.release(e))
    return bm.mean(axis=0), lnr.mean(axis=0)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--levels", type=int, default=60)
    parser.add_argument("--loop-trials", type=int, default=None)
    args = parser.parse_args(argv)
    task = default_task("logistic")
    eps = default_epsilons(args.levels)

    start = time.perf_counter()
    result = tradeoff_experiment(task, eps, trials=args.trials, rng=0)
    t_vec = time.perf_counter() - start

    loop_trials = args.loop_trials or args.trials
    start = time.perf_counter()
    bm_loop, lnr_loop = loop(task, eps, loop_trials)
    t_loop = (time.perf_counter() - start) * args.trials / loop_trials

    print(f"logistic trade-off: {args.trials} trials x {eps.size} levels x 2 mechanisms, n = {task.n}, d = {task.d}")
    print(f"  vectorised:        {t_vec:7.2f} s")
    scaled = "" if loop_trials == args.trials else f" (timed on {loop_trials} trials, scaled linearly)"
    print(f"  per-trial loop:    {t_loop:7.2f} s{scaled}")
    print(f"  speed-up:          {t_loop / t_vec:7.1f}x")
    if loop_trials == args.trials:
        gap_bm = np.max(np.abs(result.bm_mean - bm_loop))
        gap_lnr = np.max(np.abs(result.lnr_mean - lnr_loop))
        print(f"  mean curves agree (different random streams, same law): max |diff| BM {gap_bm:.2e}, "
              f"LNR {gap_lnr:.2e}; 95% band half-width {np.max(result.bm_high - result.bm_mean):.2e}")


if __name__ == "__main__":
    main()
