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
from noisecore.tasks import Task
from tests.noisecore.checks import assert_same_stopping_law
from tests.noisecore.oracles import rat_by_the_paper


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


@pytest.mark.sweep
def test_bands_cover_the_mean_loss_of_an_independent_run(task):
    """The 95% band of one run covers the mean of a larger independent run at most levels."""
    eps = default_epsilons(8)
    small = run_experiment(task, epsilons=eps, trials=200, rng=1).tradeoff
    large = run_experiment(task, epsilons=eps, trials=2000, rng=2).tradeoff
    inside = (small.bm_low <= large.bm_mean) & (large.bm_mean <= small.bm_high)
    assert inside.mean() >= 0.75  # 8 levels, each covered with probability about 0.95 (sampling error too)


class ScheduleTask(Task):
    """A task whose loss at the k-th of K levels is ``schedules[K][k]`` whatever the noise (hold-out
    and clipped training losses apart), so every stopping round is known in advance."""

    name = "schedule"
    noise_dim = d = 1
    l1_sensitivity = l2_sensitivity = 1.0
    optimum = np.zeros(1)
    optimal_loss = 0.0
    loss_bound = 100.0

    def __init__(self, train, holdout, *, n):
        super().__init__(1.0)
        self.schedules = {False: train, True: holdout}
        self.n = n

    def release(self, noise):
        return self._noise(noise)

    def _loss(self, params, *, holdout, clip):
        schedule = np.asarray(self.schedules[holdout][params.shape[-2]], dtype=float)
        loss = np.broadcast_to(schedule, params.shape[:-1])
        return loss if clip is None else np.minimum(loss, clip)


# Four levels; the doubling baseline's levels are 0.2 * 2^j for j = 0..ceil(log2(3.2 / 0.2)) = 4.
LEVELS = np.array([0.2, 0.5, 1.25, 3.2])
DOUBLING = 0.2 * 2.0 ** np.arange(5)  # 0.2, 0.4, 0.8, 1.6, 3.2
TRAIN = {4: [5.0, 0.9, 0.8, 0.3], 5: [9.0] * 5}  # clipped training loss: AboveThreshold and RAT
HOLDOUT = {4: [5.0, 2.0, 0.8, 0.3], 5: [5.0, 2.5, 1.25, 0.625, 0.3125]}  # hold-out loss: hold-out rules


def test_stopping_costs_on_a_case_computed_by_hand():
    """Paper A's cost of each rule on a case whose stopping rounds are known (target loss 1):
    hold-out: eps at the first level whose hold-out loss meets the target (level 3, 1.25);
    AboveThreshold: eps_N + eps_AT with N the first level whose training loss meets it (level 2: 0.5 + 0.5);
    RAT: 2 eps_N (Corollary 5.2; level 2: 1.0); doubling: the sum of the levels paid up to the first
    meeting it (0.2 + 0.4 + 0.8 + 1.6 = 3.0). The utility sensitivity loss_bound / n = 1e-7 makes
    the threshold noise (scale <= 4e-7 / 0.2) far smaller than the gaps of 0.1 around the target."""
    task = ScheduleTask(TRAIN, HOLDOUT, n=10**9)
    stop = run_experiment(task, epsilons=LEVELS, target=1.0, trials=30, rng=0, at_epsilon=0.5).stopping
    expected = {"holdout": (2, 1.25), "AboveThreshold": (1, 1.0), "RAT": (1, 1.0)}
    for mech in ("bm", "lnr"):
        for rule, (index, cost) in expected.items():
            np.testing.assert_array_equal(stop.stop_index[(mech, rule)], index)
            np.testing.assert_allclose(stop.ex_post[(mech, rule)], cost, rtol=1e-15)
    np.testing.assert_array_equal(stop.stop_index[("doubling", "holdout")], 3)
    np.testing.assert_allclose(stop.ex_post[("doubling", "holdout")], 3.0, rtol=1e-15)
    # a target the training loss never meets: AboveThreshold and RAT never stop (NaN), hold-out does
    never = ScheduleTask({4: [5.0] * 4, 5: [9.0] * 5}, HOLDOUT, n=10**9)
    stop = run_experiment(never, epsilons=LEVELS, target=1.0, trials=5, rng=0).stopping
    for mech in ("bm", "lnr"):
        assert np.isnan(stop.ex_post[(mech, "RAT")]).all() and np.isnan(stop.ex_post[(mech, "AboveThreshold")]).all()
        np.testing.assert_array_equal(stop.stop_index[(mech, "RAT")], -1)
        np.testing.assert_allclose(stop.ex_post[(mech, "holdout")], 1.25)


def test_rat_stopping_rounds_follow_the_algorithm_written_from_the_paper():
    """With a utility sensitivity of 0.25 the RAT stop is random: its law over trials (stop_index + 1)
    is that of a per-run loop of Algorithm 1 (RAT) (oracles.rat_by_the_paper) on utilities -loss, threshold
    -target, sensitivity loss_bound / n, eps_max the top level, and each stopped trial pays 2 eps_N."""
    task = ScheduleTask({4: [3.0, 1.6, 1.2, 0.6], 5: [9.0] * 5}, HOLDOUT, n=400)
    stop = run_experiment(task, epsilons=LEVELS, target=1.0, trials=2000, rng=4).stopping
    rng = np.random.default_rng(5)
    sens = task.utility_sensitivity
    paper = [
        rat_by_the_paper([-3.0, -1.6, -1.2, -0.6], LEVELS, tau=-1.0, sensitivity=sens, epsilon_max=3.2, rng=rng)[0]
        for _ in range(3000)
    ]
    for mech in ("bm", "lnr"):
        idx = stop.stop_index[(mech, "RAT")]
        table = assert_same_stopping_law(idx + 1, paper, LEVELS.size)
        assert (table[0] > 50).sum() >= 3  # several rounds are likely: the law is not degenerate
        done = idx >= 0
        np.testing.assert_allclose(stop.ex_post[(mech, "RAT")][done], 2 * LEVELS[idx[done]], rtol=1e-15)
        assert np.isnan(stop.ex_post[(mech, "RAT")][~done]).all()


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


def test_halted_is_not_met_a_recount_of_which_halts_meet_the_target():
    """The audit's item 3: "trials that reach the target" counted halts. A private check halts on noise too;
    ``within`` marks the trials whose checked loss (without noise) is within the target at the halt. On a
    schedule known by hand (training loss 3.0, 1.6, 1.2, 0.6 against target 1; a noisy check, sensitivity
    0.25) a halt meets the target exactly when it is at the fourth level; the hold-out rule halts at the
    third level, whose hold-out loss 0.8 meets it; a run that never halts never meets it."""
    task = ScheduleTask({4: [3.0, 1.6, 1.2, 0.6], 5: [9.0] * 5}, HOLDOUT, n=400)
    stop = run_experiment(task, epsilons=LEVELS, target=1.0, trials=2000, rng=4).stopping
    fractions = stop.within_fraction()
    for mech in ("bm", "lnr"):
        for rule in ("AboveThreshold", "RAT"):
            idx = stop.stop_index[(mech, rule)]
            np.testing.assert_array_equal(stop.within[(mech, rule)], idx == 3)
            halted = np.mean(idx >= 0)
            assert fractions[(mech, rule)] == pytest.approx(np.mean(idx == 3))
            assert 0.05 < fractions[(mech, rule)] < halted  # some halts miss: halted is not met
        np.testing.assert_array_equal(stop.within[(mech, "holdout")], True)
    np.testing.assert_array_equal(stop.within[("doubling", "holdout")], stop.stop_index[("doubling", "holdout")] >= 0)
