import math

import numpy as np
import pytest

from noisecore import Arete, Laplace, Staircase
from noisecore import frontier as fr
from tests.conftest import LOCAL_SEARCH_SETS
from tests.noisecore import checks


@pytest.mark.parametrize("target", sorted(LOCAL_SEARCH_SETS))
def test_calibrated_beats_the_local_search_sets(target):
    _, _, published_mean_abs = LOCAL_SEARCH_SETS[target]
    dist = Arete.calibrated(target)
    assert dist.mean_abs() <= published_mean_abs
    # certified by the supremum and by a dense grid of its own logpdf (not the calibration's search)
    assert dist.privacy_loss(1.0) <= target
    brute, _ = checks.grid_privacy_loss(dist, 1.0)
    assert brute <= target


@pytest.mark.parametrize("eps", [20.0, 25.0, 30.0])
def test_calibrated_no_worse_than_lemma3(eps):
    best = Arete.calibrated(eps)
    lemma = Arete.from_lemma3(eps)
    assert best.privacy_loss(1.0) <= eps
    assert best.mean_abs() <= lemma.mean_abs()
    assert Arete.calibrated(eps, objective="var").var() <= lemma.var()


@pytest.mark.parametrize("eps", [0.5, 1.0])
def test_small_epsilon_approaches_laplace(eps):
    best = Arete.calibrated(eps)
    assert best.privacy_loss(1.0) <= eps
    assert best.mean_abs() == pytest.approx(Laplace.calibrated(eps).mean_abs(), rel=1e-4)


def test_calibration_scales_with_sensitivity():
    unit = Arete.calibrated(6.0)
    scaled = Arete.calibrated(6.0, sensitivity=2.5)
    assert scaled.theta == pytest.approx(2.5 * unit.theta)
    assert scaled.lam == pytest.approx(2.5 * unit.lam)
    assert scaled.privacy_loss(2.5) <= 6.0


def test_variance_objective_and_bad_input():
    best = Arete.calibrated(8.0, objective="var")
    assert best.privacy_loss(1.0) <= 8.0
    assert best.var() <= Arete.calibrated(8.0).var()
    with pytest.raises(ValueError, match="objective"):
        Arete.calibrated(6.0, objective="median")
    with pytest.raises(ValueError, match="epsilon"):
        Arete.calibrated(0.0)
    with pytest.raises(TypeError, match="sensitivity"):
        Arete.calibrated(6.0, sensitivity="1")


def test_frontier_table_is_consistent():
    table = fr.load()
    eps = table["epsilon"]
    assert eps.min() <= 0.5 and eps.max() >= 40 and np.all(np.diff(eps) > 0)
    for column in ("laplace_abs", "staircase_abs", "arete_abs", "laplace_var", "staircase_var", "arete_var"):
        assert np.all(np.diff(table[column]) < 0), column  # errors fall as epsilon grows
    assert np.all(table["arete_abs_certified"] <= eps)
    assert np.all(table["arete_var_certified"] <= eps)
    # a feasible Laplace limit exists, and the Staircase is optimal among all noise
    assert np.all(table["arete_abs"] <= table["laplace_abs"] * (1 + 1e-5))
    assert np.all(table["arete_abs"] >= table["staircase_abs"])
    assert np.all(table["arete_var"] >= table["staircase_var"] * (1 - 1e-9))
    applies = np.isfinite(table["lemma3_abs"])
    assert applies.any() and np.all(table["arete_abs"][applies] <= table["lemma3_abs"][applies])
    np.testing.assert_allclose(table["laplace_abs"], 1 / eps)
    np.testing.assert_allclose(table["staircase_abs"], [Staircase(e).mean_abs() for e in eps], rtol=1e-9)


@pytest.mark.parametrize("eps", [2.0, 10.0])
def test_frontier_table_matches_a_fresh_computation(eps):
    table = fr.load()
    i = int(np.argmin(np.abs(table["epsilon"] - eps)))
    assert table["epsilon"][i] == eps
    row = fr.frontier_row(eps)
    for column in ("arete_abs", "arete_var", "staircase_var", "laplace_var"):
        assert row[column] == pytest.approx(table[column][i], rel=1e-6), column
    assert math.isnan(row["lemma3_abs"]) == math.isnan(table["lemma3_abs"][i])


@pytest.mark.parametrize(("eps", "objective"), [(4.5, "abs"), (16.3654, "abs"), (9.1, "var")])
@pytest.mark.sweep
def test_table_warm_start_changes_speed_not_result(eps, objective):
    """The frontier-table warm start reaches the optimum the fixed starts reach, and certifies."""
    from noisecore import _arete_calibration as cal
    from noisecore._arete_quadrature import AreteKernel
    from noisecore.arete import _argsup_log_ratio

    def argsup(a, t, la):
        return _argsup_log_ratio(AreteKernel(a, t, la), 1.0)

    warm = cal.calibrate(eps, objective, argsup, warm=True)
    cold = cal.calibrate(eps, objective, argsup, warm=False)
    value = cal.mean_abs if objective == "abs" else cal.variance
    assert value(*warm) == pytest.approx(value(*cold), rel=1e-7)
    dist = Arete(*warm)
    assert dist.privacy_loss(1.0) <= eps
    brute, _ = checks.grid_privacy_loss(dist, 1.0)
    assert brute <= eps


def test_calibrated_at_the_top_of_the_range():
    dist = Arete.calibrated(38.0)
    assert dist.privacy_loss(1.0) <= 38.0
    # the supremum sits at the density's peak: check a fine grid there directly (a dense grid
    # over [-0.5, 6] at lam ~ 1e-8 would need millions of quadrature pieces)
    t = np.concatenate([np.linspace(-1e-6, 1e-6, 401), np.linspace(-0.5, 3, 351)])
    lp = dist.logpdf(np.concatenate([t, t + 1]))
    assert np.max(lp[: t.size] - lp[t.size :]) <= 38.0
    assert dist.mean_abs() <= Arete.from_lemma3(38.0).mean_abs()


@pytest.mark.sweep
@pytest.mark.parametrize("eps", [1e-3, 3e-3, 0.01, 0.05, 0.1, 0.3, 0.45])
def test_below_the_table_the_quick_answer_is_the_cold_searchs(eps):
    """Below the frontier table (0.5), whose lowest rows are the Laplace limit, the calibration answers
    with the Laplace limit at once; the full cold search (all its starts, no table) finds the same
    E|Z| there, and both are within 1e-6 of Laplace(1/eps)'s."""
    from noisecore import _arete_calibration as cal
    from noisecore.arete import AreteKernel, _argsup_log_ratio

    def argsup(alpha, theta, lam):
        return _argsup_log_ratio(AreteKernel(alpha, theta, lam), 1.0)

    quick = cal.calibrate(eps, "abs", argsup)
    cold = cal.calibrate(eps, "abs", argsup, warm=False)
    assert cal.mean_abs(*quick) == pytest.approx(cal.mean_abs(*cold), rel=1e-9)
    assert cal.mean_abs(*quick) == pytest.approx(1 / eps, rel=1e-6)
    assert argsup(*quick)[0] <= eps


@pytest.mark.parametrize("eps", [45.0, 50.0])
def test_at_the_top_of_the_range_the_optimum_is_inside_the_search_bounds(eps):
    """At 45 and 50 the least-E|Z| Arete's alpha (about exp(-0.2 - eps / 2)) is above the search's bound
    1e-12, and a scan of alpha at the same certified loss (lam solved for each; an independent 1-d search
    by bisection on the exact loss) finds no smaller E|Z| (the tolerance, 1e-3, is the scan's spacing)."""
    from noisecore.arete import AreteKernel, _argsup_log_ratio

    best = Arete.calibrated(eps)
    assert best.alpha > 1e-12 * 10
    assert best.privacy_loss(1.0) <= eps

    def loss(alpha, theta, lam):
        return _argsup_log_ratio(AreteKernel(alpha, theta, lam), 1.0)[0]

    def lam_for(alpha, theta):  # the least lam with loss <= eps (the loss falls as lam grows)
        lo, hi = math.log(1e-14), math.log(10.0)
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if loss(alpha, theta, math.exp(mid)) <= eps else (mid, hi)
        return math.exp(hi)

    scanned = []
    for alpha in best.alpha * np.geomspace(0.25, 4, 9):
        lam = lam_for(alpha, best.theta)
        scanned.append(Arete(alpha, best.theta, lam).mean_abs())
    assert best.mean_abs() <= min(scanned) * (1 + 1e-3)


def test_above_the_range_the_calibration_names_it():
    with pytest.raises(ValueError, match=r"epsilon must be in \[1e-05, 50\]"):
        Arete.calibrated(59.9)


def test_the_switch_rows_bracket_where_the_arete_leaves_the_laplace_limit():
    """The table's four switch rows: below each pair the answer is the Laplace limit, above it an Arete
    (for E|Z| near 3.5006, for the variance near 4.3940), in the shipped table and computed afresh."""
    table = fr.load()
    rows = {float(e): i for i, e in enumerate(table["epsilon"])}
    for objective, (below, above) in (("abs", fr.SWITCH_EPSILONS[:2]), ("var", fr.SWITCH_EPSILONS[2:])):
        column = table[f"arete_{objective}_alpha"]
        assert column[rows[below]] <= 1e-11 < column[rows[above]], objective
        assert Arete.calibrated(below, objective=objective).alpha <= 1e-11
        assert Arete.calibrated(above, objective=objective).alpha > 1e-3
