"""AboveThreshold and ReducedAboveThreshold (paper A, Algorithm 1 (RAT), Theorem 5.1, Proposition C.1)."""

import math

import numpy as np
import pytest

from noisecore.threshold import (
    AboveThreshold,
    ReducedAboveThreshold,
    rat_utility_margin,
    simulate_above_threshold_stopping,
    simulate_rat_stopping,
)
from tests.noisecore.checks import assert_follows, assert_same_stopping_law
from tests.noisecore.oracles import rat_by_the_paper


def test_above_threshold_fixed_cost():
    at = AboveThreshold(0.0, sensitivity=1.0, epsilon=0.5, rng=1)
    halted = [at.check(u) for u in (-30.0, -30.0, 30.0)]
    assert halted == [False, False, True]
    assert at.stopping_round == 3
    assert at.privacy_cost == 0.5
    with pytest.raises(ValueError, match="already halted"):
        at.check(1.0)


def test_rat_rounds_and_ex_post():
    rat = ReducedAboveThreshold(0.0, sensitivity=1.0, epsilon_max=20.0, rng=2)
    assert not rat.check(-1e3, epsilon=0.1)
    assert not rat.check(-1e3, epsilon=0.3)
    assert rat.check(1e3, epsilon=1.0)
    assert [r.epsilon for r in rat.rounds] == [0.1, 0.3, 1.0]
    assert rat.ex_post_epsilon() == 1.0
    assert rat.ex_post_epsilon(mechanism_loss=1.0) == 2.0  # Corollary 5.2: 2 psi(T_N)
    rat2 = ReducedAboveThreshold(0.0, sensitivity=1.0, epsilon_max=2.0, rng=2)
    rat2.check(-1e3, epsilon=1.0)
    with pytest.raises(ValueError, match="must not decrease"):
        rat2.check(0.0, epsilon=0.5)
    with pytest.raises(ValueError, match="epsilon_max"):
        rat2.check(0.0, epsilon=3.0)


def test_rat_stopping_probabilities_satisfy_the_privacy_bound():
    """Theorem 5.1 with fixed candidates: P_x(N = n) <= e^(eps_n) P_x'(N = n) for neighbours."""
    eps = np.linspace(0.3, 2.0, 8)
    u = np.linspace(-4.0, 1.0, 8)
    runs = 200_000
    counts = {}
    for name, util in (("x", u), ("x'", u - 1.0)):
        stops = simulate_rat_stopping(
            util, epsilons=eps, threshold=0.0, sensitivity=1.0, epsilon_max=10.0, runs=runs, rng=9
        )
        counts[name] = np.array([(stops == n).sum() for n in range(1, eps.size + 1)])
    px, py = counts["x"] / runs, counts["x'"] / runs
    se = np.sqrt(px / runs) + np.exp(eps) * np.sqrt(py / runs)
    assert np.all(px <= np.exp(eps) * py + 4 * se)
    assert np.all(py <= np.exp(eps) * px + 4 * se)
    assert np.max(px / py) > 1.04  # distinguishable neighbours (about 10 standard errors): the check has power


def _sequential_stops(make_check, utilities, epsilons=None, runs=4000):
    """Stopping rounds (0 = never) of ``runs`` sequential runs of the core's classes."""
    stops = []
    for seed in range(runs):
        check = make_check(seed)
        stop = 0
        for n, ui in enumerate(utilities, start=1):
            if check.check(ui) if epsilons is None else check.check(ui, epsilon=epsilons[n - 1]):
                stop = n
                break
        stops.append(stop)
    return np.array(stops)


def _assert_same_stopping_law(sim, seq):
    for n in range(5):
        p_sim, p_seq = np.mean(sim == n), np.mean(seq == n)
        assert p_seq == pytest.approx(p_sim, abs=4.5 * math.sqrt(p_sim * (1 - p_sim) / seq.size) + 1e-3)


def test_rat_simulation_matches_the_sequential_class():
    eps = [0.5, 0.5, 1.0, 2.0]
    u = [-3.0, -1.0, 0.0, 0.5]
    sim = simulate_rat_stopping(u, epsilons=eps, threshold=0.0, sensitivity=1.0, epsilon_max=4.0, runs=20000, rng=1)
    seq = _sequential_stops(lambda seed: ReducedAboveThreshold(0.0, sensitivity=1.0, epsilon_max=4.0, rng=seed), u, eps)
    _assert_same_stopping_law(sim, seq)


def test_above_threshold_simulation_matches_the_sequential_class():
    u = np.array([-3.0, -1.0, 0.0, 0.5])
    sim = simulate_above_threshold_stopping(u, threshold=0.0, sensitivity=1.0, epsilon=1.0, runs=20000, rng=2)
    seq = _sequential_stops(lambda seed: AboveThreshold(0.0, sensitivity=1.0, epsilon=1.0, rng=seed), u)
    _assert_same_stopping_law(sim, seq)


def test_stopping_simulations_take_one_row_per_run():
    u = np.tile([-3.0, -1.0, 0.0, 0.5], (50, 1))
    u[:, 0] = 100.0  # far above the threshold: every run halts in round 1
    rounds = simulate_rat_stopping(
        u, epsilons=[0.5, 0.5, 1.0, 2.0], threshold=0.0, sensitivity=1.0, epsilon_max=2.0, rng=0
    )
    assert rounds.shape == (50,) and np.all(rounds == 1)
    assert np.all(simulate_above_threshold_stopping(u, threshold=0.0, sensitivity=1.0, epsilon=1.0, rng=0) == 1)
    with pytest.raises(ValueError, match="runs"):
        simulate_above_threshold_stopping([0.0, 1.0], threshold=0.0, sensitivity=1.0, epsilon=1.0)
    with pytest.raises(ValueError, match="runs"):
        simulate_above_threshold_stopping(u, threshold=0.0, sensitivity=1.0, epsilon=1.0, runs=7)
    with pytest.raises(ValueError, match="same number of rounds"):
        simulate_rat_stopping(u, epsilons=[0.5, 1.0], threshold=0.0, sensitivity=1.0, epsilon_max=2.0)


def test_the_paper_rat_loop_has_laplace_threshold_noise():
    """The test's own Laplace process (eq. lap_proc) has the marginals Z_t ~ Lap(t) the paper states."""
    rng = np.random.default_rng(5)
    eps = [0.5, 1.0, 4.0]
    zetas = np.array(
        [rat_by_the_paper([-1e9] * 3, eps, tau=0.0, sensitivity=1.0, epsilon_max=8.0, rng=rng)[1] for _ in range(3000)]
    )
    for k, e in enumerate(eps):
        assert_follows(zetas[:, k], "laplace", args=(0, 2 / e), what=f"Z at 2D/{e}")


def test_rat_stopping_law_matches_the_algorithm_written_from_the_paper():
    """simulate_rat_stopping (vectorised, Koufogiannis chain) against a per-run loop of Algorithm 1 (RAT)."""
    eps = [0.5, 0.7, 1.0, 2.0]
    u = [-3.0, -1.0, 0.0, 0.5]
    code = simulate_rat_stopping(u, epsilons=eps, threshold=0.0, sensitivity=1.0, epsilon_max=4.0, runs=20000, rng=1)
    rng = np.random.default_rng(2)
    paper = [rat_by_the_paper(u, eps, tau=0.0, sensitivity=1.0, epsilon_max=4.0, rng=rng)[0] for _ in range(4000)]
    assert_same_stopping_law(code, paper, len(eps))


@pytest.mark.parametrize("gamma", [0.05, 0.3])
def test_rat_utility_margin_holds_with_probability_one_minus_gamma(gamma):
    """Proposition C.1 by Monte Carlo: with probability >= 1 - gamma, u_N >= tau - eta_N.

    Every round but the last has utility just below tau - eta_n (a halt there violates the
    guarantee); the last is far above tau, so runs that survive halt there. The fraction of runs
    keeping the guarantee must be >= 1 - gamma up to 3 standard errors; with a margin ten times
    smaller the same fraction falls below 1 - gamma (the check has power).
    """
    eps = np.array([0.5, 1.0, 1.5, 2.0, 3.0])
    runs = 100_000
    tau = 2.0
    eta = rat_utility_margin(eps, sensitivity=1.0, gamma=gamma)  # weights 6 / (pi^2 n^2)
    se = math.sqrt(gamma * (1 - gamma) / runs)
    fractions = []
    for shrink in (1.0, 0.1):
        u = tau - 1.05 * shrink * eta
        u[-1] = tau + 1e3
        stops = simulate_rat_stopping(
            u, epsilons=eps, threshold=tau, sensitivity=1.0, epsilon_max=eps[-1], runs=runs, rng=17
        )
        kept = np.where(stops > 0, u[np.maximum(stops, 1) - 1] >= tau - shrink * eta[np.maximum(stops, 1) - 1], True)
        fractions.append(kept.mean())
    assert fractions[0] >= 1 - gamma - 3 * se, f"observed {fractions[0]:.5f} < 1 - gamma = {1 - gamma}"
    assert fractions[1] < 1 - gamma - 3 * se, f"margin / 10 still kept by {fractions[1]:.5f}"


def test_rat_utility_margin_refuses_bad_input():
    with pytest.raises(ValueError, match="gamma"):
        rat_utility_margin([1.0], sensitivity=1.0, gamma=1.5)
    with pytest.raises(ValueError, match="weights"):
        rat_utility_margin([1.0, 2.0], sensitivity=1.0, gamma=0.1, weights=[0.9, 0.9])
