import math

import mpmath
import numpy as np
import pytest

from noisecore import Arete, Laplace
from noisecore.dropout import ShareSum, arete_dropout, dropout_curves, laplace_dropout
from tests.conftest import LOCAL_SEARCH_SETS
from tests.noisecore import checks

EPS6 = LOCAL_SEARCH_SETS[6][0]


def fourier_pdf(reference, t, a, theta, b, lam):
    """The share sum's density by Fourier inversion (oracles.share_sum_pdf at 40 digits), stored."""
    return reference("share_sum_pdf", t, a, theta, b, lam, dps=40)


# A few (a, theta, b, lam): paper B's eps = 6 set with 80% of the shares, a mixed one, one where the
# Laplace part dominates, and a single Gamma difference (a = 0, Bessel-K closed form).
SHARE_SUMS = [(0.0756 * 0.8, 0.63, 0.8, 0.0545), (0.3, 1.0, 0.5, 0.2), (0.05, 0.5, 0.9, 1.5), (0.0, 1.0, 0.7, 0.3)]


@pytest.mark.parametrize("params", SHARE_SUMS, ids=str)
def test_shared_distribution_checks(params):
    dist = ShareSum(*params)
    x = np.array([-6.0, -0.8, 0.02, 0.3, 2.5]) * dist.mu
    checks.assert_consistent(dist, x, [1e-6, 0.01, 0.3, 0.8, 0.999], step=1e-5 * dist.mu, ppf_rtol=1e-8)
    # the cdf costs 5-40 ms a point: the KS statistic at 19 sample quantiles (conservative) ...
    samples = dist.sample(4000, rng=20261130)
    checks.assert_follows_at(samples, dist, np.quantile(samples, np.linspace(0.05, 0.95, 19)))


@pytest.mark.sweep
@pytest.mark.parametrize("params", SHARE_SUMS, ids=str)
def test_samples_follow_cdf(params):
    # ... and the full KS test here
    checks.assert_samples_follow_cdf(ShareSum(*params), 2000, seed=20261130)


@pytest.mark.parametrize("params", SHARE_SUMS)
def test_share_sum_density_matches_fourier(params, reference):
    dist = ShareSum(*params)
    for t in (0.0, 0.01, 0.3, 1.0, 3.0, 12.0):
        assert dist.pdf(t) == pytest.approx(fourier_pdf(reference, t, *params), rel=1e-9, abs=0), t


def test_full_participation_is_the_arete():
    arete = Arete(*EPS6)
    full = arete_dropout(arete, fraction=1.0)
    x = np.array([0.0, 0.05, 0.4, 2.0, 6.0])
    np.testing.assert_allclose(full.pdf(x), arete.pdf(x), rtol=1e-12)
    assert full.privacy_loss(1.0) == pytest.approx(arete.privacy_loss(1.0), rel=1e-9)
    assert full.mean_abs() == pytest.approx(arete.mean_abs(), rel=1e-9)


def test_laplace_shares_closed_form(reference):
    lap = Laplace(0.4)
    np.testing.assert_allclose(
        laplace_dropout(0.4, fraction=1.0).pdf([0.0, 0.3, 2.0]), lap.pdf([0.0, 0.3, 2.0]), rtol=1e-12
    )
    half = laplace_dropout(0.4, fraction=0.75)  # GG(0.75, 0.4): Bessel-K closed form, checked against mpmath
    for t in (0.0, 0.2, 1.0):
        assert half.pdf(t) == pytest.approx(fourier_pdf(reference, t, 0.0, 1.0, 0.75, 0.4), rel=1e-9)


@pytest.mark.sweep
def test_privacy_loss_against_dense_grid_and_singular_regime():
    dist = arete_dropout(Arete(*EPS6), fraction=0.8)
    brute, _ = checks.grid_privacy_loss(dist, 1.0)  # the search against its own logpdf
    loss = dist.privacy_loss(1.0)
    assert loss >= brute * (1 - 1e-9)
    assert loss == pytest.approx(max(brute, 1 / dist.mu), rel=1e-7)
    # total shape below 1/2: the density is infinite at 0, no epsilon holds
    few = arete_dropout(Arete(*EPS6), fraction=0.4)
    assert not few.bounded and np.isinf(few.privacy_loss(1.0))
    assert np.isinf(laplace_dropout(1.0, fraction=0.3).privacy_loss(1.0))


def test_dropout_matches_monte_carlo_sums_of_shares(rng):
    arete = Arete(0.3, 0.6, 0.2)
    n, m = 20, 14
    shares = arete.sample_shares(n, size=40000, rng=rng)[:, :m].sum(axis=1)
    dist = arete_dropout(arete, fraction=m / n)
    assert np.mean(np.abs(shares)) == pytest.approx(dist.mean_abs(), rel=0.02)
    assert np.var(shares) == pytest.approx(dist.var(), rel=0.04)
    for r in (0.1, 0.5, 1.5):
        inside = np.mean(np.abs(shares) < r)
        assert inside == pytest.approx(1 - 2 * dist.sf(r), abs=4 * math.sqrt(inside * (1 - inside) / shares.size))


@pytest.mark.sweep
def test_dropout_curves_shape_and_monotone():
    curves = dropout_curves(Arete(*EPS6), n=10, fractions_present=[1.0, 0.9, 0.8, 0.7])
    eps = curves["arete_epsilon"]
    assert eps[0] == pytest.approx(Arete(*EPS6).privacy_loss(1.0), rel=1e-9)
    assert np.all(np.diff(eps) > 0)  # fewer shares, less noise, more privacy loss
    assert np.all(np.diff(curves["arete_mean_abs"]) < 0)
    assert curves["laplace_epsilon"][0] == pytest.approx(eps[0], rel=1e-6)


def test_bad_dropout_input():
    with pytest.raises(ValueError, match="fraction"):
        arete_dropout(Arete(*EPS6), fraction=0.0)
    with pytest.raises(ValueError, match="fraction"):
        laplace_dropout(1.0, fraction=1.5)
    with pytest.raises(ValueError, match="shapes"):
        ShareSum(0.0, 1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="theta"):
        ShareSum(0.2, -1.0, 0.5, 1.0)


def test_oracle_module_is_independent(reference):
    # the real-space oracle of the foundation tests agrees with the share-sum engine too
    dist = arete_dropout(Arete(0.3, 0.5, 0.2), fraction=1.0)
    assert dist.pdf(0.7) == pytest.approx(reference("arete_pdf_direct", 0.7, 0.3, 0.5, 0.2), rel=1e-9)


# ShareSum's survival function, E|Z| and quantiles against independent references (issue 14: far tails at
# O(1) cost); costs are checked by counting evaluations, never by timing
SHARE_SETS = [(EPS6[0] * 0.8, EPS6[1], 0.8, EPS6[2]), (0.3, 1.0, 0.5, 0.2), (0.0, 1.0, 0.7, 0.3)]


@pytest.mark.parametrize("params", SHARE_SETS)
def test_share_sum_sf_matches_gil_pelaez(params, reference):
    dist = ShareSum(*params)
    # below x ~ 0.01 the oscillatory mpmath oracle itself loses digits, so the body and tail are checked
    for x in (0.05, 1.0, 3.0):
        assert dist.sf(x) == pytest.approx(reference("share_sum_sf", x, *params), rel=1e-9, abs=0), x
        assert dist.cdf(-x) == pytest.approx(dist.sf(x), rel=1e-14)


def test_share_sum_sf_is_one_quadrature():
    """sf no longer integrates the density (each point of which is itself a quadrature over u)."""
    points = []

    class Counting(ShareSum):
        def _log_density(self, t):
            points.append(np.size(t))
            return super()._log_density(t)

    dist = Counting(*SHARE_SETS[0])
    dist.sf(np.array([0.05, 1.0, 30.0]))
    assert points == []


@pytest.mark.parametrize("params", [*SHARE_SETS, (4.0, 1.0, 4.0, 0.5), (0.2, 1e-3, 3.0, 1.0)])
def test_share_sum_mean_abs_matches_mpmath(params, reference):
    assert ShareSum(*params).mean_abs() == pytest.approx(reference("share_sum_mean_abs", *params), rel=1e-11)


def test_share_sum_mean_abs_closed_forms():
    assert laplace_dropout(0.4, fraction=1.0).mean_abs() == pytest.approx(Laplace(0.4).mean_abs(), rel=1e-13)
    full = arete_dropout(Arete(*EPS6), fraction=1.0)
    assert full.mean_abs() == pytest.approx(Arete(*EPS6).mean_abs(), rel=1e-10)
    # GG(s, scale) with s tiny: E|Z| = 2 s scale (1 + O(s))
    assert ShareSum(1e-12, 1.0, 0.0, 1.0).mean_abs() == pytest.approx(2e-12, rel=1e-9)


def test_share_sum_ppf_round_trip():
    dist = ShareSum(*SHARE_SETS[0])
    for q in (1e-100, 1e-10, 0.3):
        assert dist.cdf(dist.ppf(q)) == pytest.approx(q, rel=1e-9)


@pytest.mark.parametrize(("a", "c"), [(0.05, 1.05), (0.5, 0.6), (1.0, 3.0), (2.5, 4.0), (1e-6, 0.3)])
def test_hyp1f1_table_matches_scipy_and_mpmath(a, c):
    """The batch path of log 1F1(a; c; -z) (Chebyshev table on [1e-6, 1e6], two series terms below)
    against scipy's direct values on 4,096 points from 1e-12 to 1e6, to 1e-12 max(1, |value|) (scipy's
    own accuracy near z = 2; the density takes exp of it, so this is its relative error), and against
    mpmath at 30 digits at points in the series and the table."""
    from noisecore.dropout import tables as dropout

    z = np.geomspace(1e-12, 1e6, 4096)
    batch = dropout._log_hyp1f1_negative(a, c, z)
    assert dropout._HYP_TABLES[(a, c)] is not None  # the table passed its own check and is used
    direct = dropout._log_hyp1f1_direct(a, c, z)
    assert np.all(np.abs(batch - direct) <= 1e-12 * np.maximum(1.0, np.abs(direct)))
    mpmath.mp.dps = 30
    for v in (1e-12, 3e-7, 9e-7, 0.5, 2.3, 47.0, 1e5):
        exact = float(mpmath.log(mpmath.hyp1f1(a, c, -mpmath.mpf(v))))
        value = float(dropout._log_hyp1f1_negative(a, c, np.full(1024, v))[0])
        assert abs(value - exact) <= 1e-12 * max(1.0, abs(exact)), v
