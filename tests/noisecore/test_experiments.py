"""Paper A's experiments in chunks: one child seed per chunk, so the split over workers never changes a number."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from noisecore.experiments import (
    STOPPING_RULES,
    chunk_plan,
    combine_chunks,
    default_epsilons,
    default_task,
    planned_chunk,
    run_experiment,
)


@pytest.fixture(scope="module")
def task():
    return default_task("logistic", n=800, rng=0)


def assert_same(a, b, rtol=1e-9):
    np.testing.assert_allclose(a.tradeoff.bm_mean, b.tradeoff.bm_mean, rtol=rtol)
    np.testing.assert_allclose(a.tradeoff.lnr_high, b.tradeoff.lnr_high, rtol=rtol)
    for key in STOPPING_RULES:
        np.testing.assert_array_equal(a.stopping.ex_post[key], b.stopping.ex_post[key])


def test_chunk_plan_covers_the_trials_with_distinct_seeds():
    plan = chunk_plan(103, rng=7, chunk_trials=25)
    assert [count for count, _ in plan] == [25, 25, 25, 25, 3]
    states = {tuple(np.random.default_rng(seed).integers(0, 2**32, 4)) for _, seed in plan}
    assert len(states) == 5
    again = chunk_plan(103, rng=7, chunk_trials=25)
    pairs = zip(plan, again, strict=True)
    assert all(a.spawn_key == b.spawn_key and a.entropy == b.entropy for (_, a), (_, b) in pairs)


def test_results_do_not_depend_on_how_chunks_are_run(task):
    eps = default_epsilons(6)
    serial = run_experiment(task, epsilons=eps, target=0.5, trials=60, rng=11)
    with ThreadPoolExecutor(3) as pool:
        threaded = run_experiment(task, epsilons=eps, target=0.5, trials=60, rng=11, mapper=pool.map)
    by_hand = combine_chunks(
        task,
        epsilons=eps,
        chunks=[planned_chunk(task, epsilons=eps, trials=60, rng=11, index=i, target=0.5) for i in range(3)],
        target=0.5,
    )
    assert_same(serial, threaded)
    assert_same(serial, by_hand, rtol=0)
    other = run_experiment(task, epsilons=eps, target=0.5, trials=60, rng=12)
    assert not np.allclose(other.tradeoff.bm_mean, serial.tradeoff.bm_mean)


def test_progress_reaches_one_in_chunk_steps(task):
    seen = []
    run_experiment(task, epsilons=default_epsilons(4), trials=60, rng=0, progress=seen.append)
    assert seen == pytest.approx([25 / 60, 50 / 60, 1.0])


@pytest.mark.slow
def test_bands_cover_the_mean_loss_of_an_independent_run(task):
    """The 95% band of one run covers the mean of a larger independent run at most levels."""
    eps = default_epsilons(8)
    small = run_experiment(task, epsilons=eps, trials=200, rng=1).tradeoff
    large = run_experiment(task, epsilons=eps, trials=2000, rng=2).tradeoff
    inside = (small.bm_low <= large.bm_mean) & (large.bm_mean <= small.bm_high)
    assert inside.mean() >= 0.75  # 8 levels, each covered with probability about 0.95 (sampling error too)


def test_stopping_costs_follow_the_rules_on_the_grid(task):
    eps = default_epsilons(10)
    stop = run_experiment(task, epsilons=eps, target=0.5, trials=50, rng=3).stopping
    for mech in ("bm", "lnr"):
        idx = stop.stop_index[(mech, "RAT")]
        paid = stop.ex_post[(mech, "RAT")]
        assert np.array_equal(np.isnan(paid), idx < 0)
        np.testing.assert_allclose(paid[idx >= 0], 2 * eps[idx[idx >= 0]])
    doubling = stop.ex_post[("doubling", "holdout")]
    levels = eps[0] * 2.0 ** np.arange(10)
    reached = doubling[np.isfinite(doubling)]
    assert np.isin(np.round(reached, 12), np.round(np.cumsum(levels), 12)).all()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda t: run_experiment(t, epsilons=[0.2, 0.5], trials=0), "trials"),
        (lambda t: run_experiment(t, epsilons=[0.2, 0.5], trials=5, rng=-1), "rng"),
        (lambda t: run_experiment(t, epsilons=[0.2, 0.5], trials=5, rng="seed"), "rng"),
        (lambda t: run_experiment(t, epsilons=[0.2, 0.5], trials=5, target=-1.0), "target"),
        (lambda t: run_experiment("logistic", epsilons=[0.2, 0.5], trials=5), "task"),
        (lambda t: planned_chunk(t, epsilons=[0.2, 0.5], trials=10, rng=0, index=3), "index"),
        (lambda t: combine_chunks(t, epsilons=[0.2, 0.5], chunks=[]), "chunks"),
        (lambda t: run_experiment(t, epsilons=[0.2, 0.5], trials=5, target=1e-6), "unreachable"),
    ],
)
def test_bad_experiment_arguments_are_named(task, call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call(task)
