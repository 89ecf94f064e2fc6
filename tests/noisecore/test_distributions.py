import itertools
import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from noisecore import Arete, Gaussian, Laplace, Staircase
from noisecore.dropout import ShareSum
from tests.noisecore import checks, oracles

Q = np.array([1e-9, 1e-4, 0.01, 0.3, 0.5, 0.8, 0.999, 1 - 1e-7])


def _staircase_points(dist, steps=4):
    """Mid-points of the Staircase's steps (its density jumps at k D and (k + gamma) D)."""
    k = np.arange(steps)
    pos = np.concatenate([(k + dist.gamma / 2), (k + (1 + dist.gamma) / 2)]) * dist.sensitivity
    return np.concatenate([-pos, pos])


CASES = [
    (Laplace(0.8), [-3.0, -0.4, 0.3, 1.7, 12.0, 25.0]),
    (Laplace.calibrated(6.0, sensitivity=2.0), [-1.0, 0.05, 0.7, 5.0]),
    (Gaussian(2.0), [-5.0, -0.4, 0.0, 0.3, 1.7, 9.0]),
    (Gaussian.calibrated(1.0, delta=1e-6), [-10.0, -1.0, 0.2, 4.0, 20.0]),
    (Staircase(2.0, sensitivity=1.5), None),
    (Staircase(0.5, gamma=0.7), None),
    (Staircase(8.0), None),
]


@pytest.mark.parametrize(("dist", "x"), CASES, ids=lambda v: repr(v) if not isinstance(v, list) else "")
def test_shared_distribution_checks(dist, x):
    x = _staircase_points(dist) if x is None else np.asarray(x)
    checks.assert_consistent(dist, x[x != 0], Q, step=1e-5 * dist.std(), ppf_rtol=1e-9)
    checks.assert_samples_follow_cdf(dist, 5000, seed=20261130)


def _integrate_piecewise(func, edges):
    pieces = itertools.pairwise(edges)
    return sum(integrate.quad(func, lo, hi, limit=200, epsabs=0, epsrel=1e-13)[0] for lo, hi in pieces)


# --- Laplace -------------------------------------------------------------------
def test_laplace_closed_forms():
    dist = Laplace.calibrated(2.0, sensitivity=3.0)
    assert dist.scale == 1.5
    assert dist.mean_abs() == pytest.approx(1.5)
    for eps in (0.1, 1.0, 7.0):
        assert Laplace.calibrated(eps).mean_abs() == pytest.approx(1 / eps, rel=1e-15)
    assert dist.privacy_loss(3.0) == pytest.approx(2.0)
    x = np.array([-3.0, -0.2, 0.0, 1.0, 40.0])
    np.testing.assert_allclose(dist.pdf(x), stats.laplace(scale=1.5).pdf(x), rtol=1e-14)
    np.testing.assert_allclose(dist.sf(x), stats.laplace(scale=1.5).sf(x), rtol=1e-14)
    np.testing.assert_allclose(dist.cdf(dist.ppf([0.01, 0.5, 0.9])), [0.01, 0.5, 0.9], rtol=1e-14)


def test_laplace_samples(rng):
    dist = Laplace(0.8)
    x = checks.assert_samples_follow_cdf(dist, 5000, seed=rng)
    assert np.var(x) == pytest.approx(dist.var(), rel=0.08)


# --- Gaussian ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("eps", "delta", "sens"), [(0.5, 1e-5, 1.0), (1.0, 1e-6, 2.0), (8.0, 1e-3, 1.0), (20.0, 1e-9, 1.0)]
)
def test_analytic_gaussian_calibration(eps, delta, sens):
    dist = Gaussian.calibrated(eps, delta=delta, sensitivity=sens)
    achieved = float(oracles.gaussian_delta(eps, dist.sigma, sens))
    assert achieved == pytest.approx(delta, rel=1e-8)
    assert dist.delta(eps, sensitivity=sens) == pytest.approx(delta, rel=1e-9)
    # a slightly smaller sigma violates the target
    assert Gaussian(dist.sigma * 0.999).delta(eps, sensitivity=sens) > delta


def test_classic_gaussian():
    dist = Gaussian.calibrated(0.5, delta=1e-5, method="classic")
    assert dist.sigma == pytest.approx(math.sqrt(2 * math.log(1.25e5)) / 0.5)
    assert dist.sigma > Gaussian.calibrated(0.5, delta=1e-5).sigma
    with pytest.raises(ValueError, match="epsilon"):
        Gaussian.calibrated(1.0, delta=1e-5, method="classic")


def test_gaussian_basics(rng):
    dist = Gaussian(2.0)
    assert np.isinf(dist.privacy_loss(0.1))
    assert dist.privacy_loss(0.0) == 0.0
    assert dist.mean_abs() == pytest.approx(2 * math.sqrt(2 / math.pi))
    checks.assert_samples_follow_cdf(dist, 4000, seed=rng)
    np.testing.assert_allclose(dist.logpdf([0.0, 3.0]), stats.norm(scale=2).logpdf([0.0, 3.0]), rtol=1e-14)


# --- Staircase -------------------------------------------------------------------
@pytest.mark.parametrize(("eps", "expected"), [(1.0, 0.959517), (6.0, 0.0499108), (8.0, 0.0183218)])
def test_staircase_reference_mean_abs(eps, expected):
    dist = Staircase(eps)
    assert dist.gamma == pytest.approx(1 / (1 + math.exp(eps / 2)))
    assert dist.mean_abs() == pytest.approx(expected, rel=5e-6)
    assert dist.mean_abs() == pytest.approx(math.exp(eps / 2) / (math.exp(eps) - 1), rel=1e-12)


@pytest.mark.parametrize(("eps", "sens", "gamma"), [(1.0, 1.0, None), (3.0, 2.0, 0.3), (0.2, 0.5, 0.7)])
@pytest.mark.oracle
def test_staircase_moments_by_quadrature(eps, sens, gamma):
    dist = Staircase(eps, sensitivity=sens, gamma=gamma)
    g = dist.gamma
    edges = sorted({0.0, *[(k + o) * sens for k in range(int(60 / eps) + 40) for o in (0.0, g)]})
    mass = 2 * _integrate_piecewise(dist.pdf, edges)
    first = 2 * _integrate_piecewise(lambda x: x * dist.pdf(x), edges)
    second = 2 * _integrate_piecewise(lambda x: x * x * dist.pdf(x), edges)
    assert mass == pytest.approx(1.0, abs=1e-10)
    assert dist.mean_abs() == pytest.approx(first, rel=1e-9)
    assert dist.var() == pytest.approx(second, rel=1e-9)
    x = np.array([0.1, 0.6, 1.3, 2.9, 5.5]) * sens
    cdf_numeric = [0.5 + _integrate_piecewise(dist.pdf, [e for e in edges if e < v] + [v]) for v in x]
    np.testing.assert_allclose(dist.cdf(x), cdf_numeric, rtol=1e-10)
    np.testing.assert_allclose(dist.sf(x), 1 - np.array(cdf_numeric), rtol=1e-8)


def test_staircase_variance_optimal_gamma():
    for eps in (0.5, 2.0, 6.0):
        res = optimize.minimize_scalar(
            lambda g, e=eps: Staircase(e, gamma=g).var(),
            bounds=(1e-6, 1 - 1e-6),
            method="bounded",
            options={"xatol": 1e-10},
        )
        assert Staircase.optimal_gamma(eps, criterion="var") == pytest.approx(res.x, abs=1e-6)
        res_abs = optimize.minimize_scalar(
            lambda g, e=eps: Staircase(e, gamma=g).mean_abs(),
            bounds=(1e-6, 1 - 1e-6),
            method="bounded",
            options={"xatol": 1e-10},
        )
        assert Staircase.optimal_gamma(eps, criterion="abs") == pytest.approx(res_abs.x, abs=1e-6)
    with pytest.raises(ValueError, match="criterion"):
        Staircase.optimal_gamma(1.0, criterion="median")


def test_staircase_ppf_and_samples(rng):
    dist = Staircase(2.0, sensitivity=1.5)
    checks.assert_cdf_ppf_round_trip(dist, [1e-9, 0.01, 0.2, 0.5, 0.7, 0.99], rtol=1e-10)
    x = checks.assert_samples_follow_cdf(dist, 6000, seed=rng)
    assert np.mean(np.abs(x)) == pytest.approx(dist.mean_abs(), rel=0.05)


def test_staircase_privacy_loss_is_step_function():
    dist = Staircase(3.0, sensitivity=2.0)
    d = np.array([0.0, 0.5, 2.0, 2.0001, 3.9, 4.0, 5.0])
    np.testing.assert_allclose(dist.privacy_loss(d), 3.0 * np.ceil(d / 2.0))
    # brute force on a grid for a few distances
    t = np.linspace(-10, 10, 200001)
    for dist_ in (0.7, 2.0, 3.3):
        brute = np.max(np.abs(dist.logpdf(t) - dist.logpdf(t + dist_)))
        assert brute == pytest.approx(dist.privacy_loss(dist_))


@pytest.mark.parametrize("eps", [1e-8, 1e-4, 0.01, 0.1, 1.0, 10.0, 100.0])
def test_staircase_variance_gamma_matches_mpmath(eps):
    assert Staircase.optimal_gamma(eps, criterion="var") == pytest.approx(
        oracles.staircase_variance_gamma(eps), rel=1e-12
    )


def test_staircase_variance_gamma_limits():
    assert Staircase.optimal_gamma(1e-100, criterion="var") == pytest.approx(0.5, rel=1e-15)
    assert 0 < Staircase.optimal_gamma(200.0, criterion="var") < 1e-28


@pytest.mark.parametrize(
    "dist",
    [Laplace(1.5), Gaussian(2.0), Staircase(1.0, gamma=0.3), Arete(0.1, 0.5, 0.05), ShareSum(0.1, 0.5, 1.0, 0.05)],
    ids=lambda d: type(d).__name__,
)
def test_repr_rebuilds_the_distribution(dist):
    """repr shows every parameter: evaluating it gives the same law (same repr, same density)."""
    namespace = {"Laplace": Laplace, "Gaussian": Gaussian, "Staircase": Staircase, "Arete": Arete, "ShareSum": ShareSum}
    again = eval(repr(dist), namespace)  # our own repr, in a fixed namespace
    assert type(again) is type(dist) and repr(again) == repr(dist)
    x = np.array([0.1, 0.7, 2.0])
    np.testing.assert_array_equal(again.pdf(x), dist.pdf(x))
