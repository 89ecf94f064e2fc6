"""Paper A's experiments: speed of the vectorised, chunked runs against baselines measured in the same run.

1. Logistic trade-off at paper scale (1,000 trials x 60 levels x 2 mechanisms, n = 10,000, d = 38):
   the vectorised run against a plain per-trial loop over the public mechanism classes, repeated
   (``--repeats``) because the ratio moves with the machine's load.
2. Ridge trade-off at paper scale (d = 77, so 120,000 eigendecompositions of 77 x 77 matrices):
   the same chunked code with BLAS's default threads in one process (the baseline: how it ran
   before), then with BLAS on one thread, then split over 2 worker processes (joblib), each with
   one BLAS thread. All three give the same numbers (one seed per chunk).
3. The explorer's quick setting for each task: 100 trials with 30 levels and the stopping rules,
   task preparation included (the trials tooltip quotes these).

Run: python benchmarks/bench_experiments.py [--repeats 3] [--loop-trials 100] [--skip-ridge]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dashboard.compute import process_mapper
from dashboard.explorer import ExperimentSpec, chunk_calls, level_grid, prepare
from noisecore import BrownianMechanism, LaplaceNoiseReduction, LinearBoundary
from noisecore.experiments import default_epsilons, default_task, run_experiment, tradeoff_experiment


def loop(task, eps, trials, seed=0):
    boundary = LinearBoundary.calibrated(0.3, delta=1e-6, sensitivity=task.l2_sensitivity)
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


def timed(func):
    start = time.perf_counter()
    out = func()
    return time.perf_counter() - start, out


def logistic(args):
    task = default_task("logistic", rng=0)
    eps = default_epsilons(60)
    print(
        f"1. logistic trade-off: {args.trials} trials x {eps.size} levels x 2 mechanisms, n = {task.n:,}, d = {task.d}"
    )
    ratios = []
    for repeat in range(args.repeats):
        t_vec, result = timed(lambda r=repeat: tradeoff_experiment(task, epsilons=eps, trials=args.trials, rng=r))
        t_loop, (bm, _) = timed(lambda r=repeat: loop(task, eps, args.loop_trials, seed=r))
        t_loop *= args.trials / args.loop_trials
        ratios.append(t_loop / t_vec)
        print(
            f"   run {repeat + 1}: vectorised {t_vec:6.2f} s, per-trial loop {t_loop:7.2f} s (timed on "
            f"{args.loop_trials} trials, scaled) -> {t_loop / t_vec:5.1f}x"
        )
        half = float(np.max(result.bm_high - result.bm_mean))
        gap = float(np.max(np.abs(bm - result.bm_mean)))
        print(
            f"          mean curves agree within the bands (same law, other draws): max |diff| {gap:.1e}, "
            f"{args.loop_trials}-trial loop band ~{half * np.sqrt(args.trials / args.loop_trials):.1e}"
        )
    print(f"   speed-up over {args.repeats} runs: {min(ratios):.1f}x - {max(ratios):.1f}x")


def ridge(args):
    task = default_task("ridge", rng=0)
    eps = default_epsilons(60)
    print(
        f"2. ridge trade-off: {args.trials} trials x {eps.size} levels x 2 mechanisms, d = {task.d} "
        f"({args.trials * eps.size * 2:,} eigendecompositions of {task.d} x {task.d})"
    )
    t_base, base = timed(lambda: run_experiment(task, epsilons=eps, trials=args.trials, rng=0))
    print(f"   baseline (BLAS default threads, 1 process): {t_base:6.1f} s")
    t_one, one = timed(lambda: run_experiment(task, epsilons=eps, trials=args.trials, rng=0, mapper=process_mapper(1)))
    print(f"   BLAS on one thread, 1 process:              {t_one:6.1f} s   ({t_base / t_one:4.2f}x)")
    t_two, two = timed(lambda: run_experiment(task, epsilons=eps, trials=args.trials, rng=0, mapper=process_mapper(2)))
    print(f"   BLAS on one thread, 2 worker processes:     {t_two:6.1f} s   ({t_base / t_two:4.2f}x)")
    gap = max(np.max(np.abs(r.tradeoff.bm_mean - base.tradeoff.bm_mean) / base.tradeoff.bm_mean) for r in (one, two))
    print(f"   same numbers: largest relative difference of the mean curves {gap:.1e} (BLAS rounding)")


def quick():
    """The explorer's default run for each task (the trials tooltip quotes these)."""
    levels = level_grid(0.16, 5.0, count=30)
    for task in ("logistic", "mean", "ridge"):
        times = []
        for seed in range(3):

            def run(seed=seed, task=task):  # what the app runs: its chunk calls, here one after another
                prepared = prepare(ExperimentSpec(task=task, seed=seed))
                target = prepared.suggested_target
                calls = chunk_calls(prepared.task, levels=levels, trials=100, rng=seed, target=target)
                return [call() for call in calls]

            times.append(timed(run)[0])
        print(
            f"3. explorer quick setting ({task}, 100 trials, 30 levels, stopping rules, preparation included, "
            f"one thread): {min(times):.2f} - {max(times):.2f} s over 3 seeds"
        )


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--loop-trials", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-ridge", action="store_true")
    args = parser.parse_args(argv)
    logistic(args)
    if not args.skip_ridge:
        ridge(args)
    quick()


if __name__ == "__main__":
    main()
