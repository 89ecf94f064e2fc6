import math

import numpy as np
import pytest
from scipy import stats

from noisecore.laplace_reduction import LaplaceNoiseReduction, LaplaceProcess, koufogiannis_chain
from noisecore.skellam import SkellamNoiseReduction
from noisecore.threshold import (
    AboveThreshold,
    ReducedAboveThreshold,
    rat_utility_margin,
    simulate_above_threshold_stopping,
    simulate_rat_stopping,
)

GRID = np.array([0.5, 1.0, 2.5, 4.0])


def _process_on_grid(runs, seed):
    rng = np.random.default_rng(seed)
    out = np.empty((runs, GRID.size))
    for i in range(runs):
        out[i] = LaplaceProcess(0.2, rng=rng).values(GRID[::-1])[::-1, 0]
    return out


def test_laplace_process_marginals():
    values = _process_on_grid(4000, 1)
    for j, t in enumerate(GRID):
        assert stats.kstest(values[:, j], "laplace", args=(0, t)).pvalue > 1e-3


def test_process_and_chain_have_the_same_joint_law():
    proc = _process_on_grid(6000, 2)
    chain = koufogiannis_chain(np.r_[0.2, GRID], dim=1, size=6000, rng=3)[:, 1:, 0]
    for j in range(1, GRID.size):
        # probability of no jump between consecutive grid times: (t_{j-1}/t_j)^2
        p = (GRID[j - 1] / GRID[j]) ** 2
        se = math.sqrt(p * (1 - p) / 6000)
        assert np.mean(proc[:, j] == proc[:, j - 1]) == pytest.approx(p, abs=4.5 * se)
        assert np.mean(chain[:, j] == chain[:, j - 1]) == pytest.approx(p, abs=4.5 * se)
    # increments and pairs compared as two samples
    for a, b in [(0, 3), (1, 2)]:
        assert stats.ks_2samp(proc[:, b] - proc[:, a], chain[:, b] - chain[:, a]).pvalue > 1e-3
        assert stats.ks_2samp(proc[:, a] * proc[:, b], chain[:, a] * chain[:, b]).pvalue > 1e-3


def test_lnr_release_and_ex_post():
    lnr = LaplaceNoiseReduction([1.0, 2.0], sensitivity=2.0, epsilon_max=10.0, rng=4)
    lnr.release(0.1)
    lnr.release(0.5)
    assert lnr.ex_post_epsilon == pytest.approx(0.5)
    assert [r.time for r in lnr.history] == pytest.approx([20.0, 4.0])
    with pytest.raises(ValueError, match="epsilon must increase"):
        lnr.release(0.5)
    with pytest.raises(ValueError, match="epsilon_max"):
        lnr.release(11.0)


def test_lnr_marginal_is_laplace_mechanism():
    samples = []
    for seed in range(3000):
        lnr = LaplaceNoiseReduction(5.0, sensitivity=1.0, epsilon_max=20.0, rng=seed)
        lnr.release(0.25)
        samples.append(lnr.release(2.0)[0] - 5.0)
    assert stats.kstest(samples, "laplace", args=(0, 0.5)).pvalue > 1e-3


def test_skellam_marginals_and_thinning():
    rate = 0.7
    first, second = [], []
    for seed in range(4000):
        mech = SkellamNoiseReduction([0.0], rate=rate, rng=seed)
        first.append(mech.release(10.0)[0])
        second.append(mech.release(3.0)[0])
    for values, t in ((first, 10.0), (second, 3.0)):
        values = np.asarray(values, dtype=int)
        support = np.arange(-25, 26)
        expected = stats.skellam.pmf(support, rate * t, rate * t) * len(values)
        observed = np.array([(values == k).sum() for k in support])
        keep = expected > 5
        chi2 = np.sum((observed[keep] - expected[keep]) ** 2 / expected[keep])
        assert stats.chi2.sf(chi2, keep.sum() - 1) > 1e-3
    # thinning keeps the path: Var(X_3) = 2 rate 3 and Cov(X_10, X_3) = 2 rate 3
    assert np.cov(first, second)[0, 1] == pytest.approx(2 * rate * 3.0, rel=0.12)
    with pytest.raises(ValueError, match="time must be <"):
        mech.release(3.0)


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
    assert rat.ex_post_epsilon(mechanism_loss=1.0) == 2.0  # cor:aug_bm: 2 psi(T_N)
    rat2 = ReducedAboveThreshold(0.0, sensitivity=1.0, epsilon_max=2.0, rng=2)
    rat2.check(-1e3, epsilon=1.0)
    with pytest.raises(ValueError, match="must not decrease"):
        rat2.check(0.0, epsilon=0.5)
    with pytest.raises(ValueError, match="epsilon_max"):
        rat2.check(0.0, epsilon=3.0)


def test_rat_stopping_probabilities_satisfy_the_privacy_bound():
    """thm:rat with fixed candidates: P_x(N = n) <= e^(eps_n) P_x'(N = n) for neighbours."""
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


def test_rat_utility_margin():
    eta = rat_utility_margin([1.0, 2.0], sensitivity=1.0, gamma=0.1, weights=[0.5, 0.5])
    np.testing.assert_allclose(eta, [4 * (math.log(20) + math.log(2)), 2 * (math.log(20) + math.log(2))])
    with pytest.raises(ValueError, match="gamma"):
        rat_utility_margin([1.0], sensitivity=1.0, gamma=1.5)
    with pytest.raises(ValueError, match="weights"):
        rat_utility_margin([1.0, 2.0], sensitivity=1.0, gamma=0.1, weights=[0.9, 0.9])


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
