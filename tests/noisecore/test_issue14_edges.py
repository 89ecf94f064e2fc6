"""Issue 14, item 5 (far tails at O(1) cost, accurate): ShareSum's survival and E|Z|, the generic
quantile search, and the variance-optimal Staircase gamma, each against an independent reference
(mpmath, closed forms); costs are checked by counting evaluations, never by timing."""

import math

import numpy as np
import pytest

from noisecore import Arete, Laplace, Staircase
from noisecore.dropout import ShareSum, arete_dropout, laplace_dropout

EPS6 = (0.07559007048913552, 0.6295929433519876, 0.05453349704921005)
SHARE_SETS = [(EPS6[0] * 0.8, EPS6[1], 0.8, EPS6[2]), (0.3, 1.0, 0.5, 0.2), (0.0, 1.0, 0.7, 0.3)]


def gil_pelaez_sf(x, a, theta, b, lam, dps=30):
    """Independent oracle: P(Z > x) = 1/2 - (1/pi) int_0^inf phi(s) sin(s x) / s ds."""
    import mpmath as mp

    with mp.workdps(dps):
        a, theta, b, lam, x = (mp.mpf(v) for v in (a, theta, b, lam, x))

        def phi(s):
            return (1 + theta**2 * s**2) ** (-a) * (1 + lam**2 * s**2) ** (-b)

        return float(mp.mpf(1) / 2 - mp.quadosc(lambda s: phi(s) * mp.sin(s * x) / s, [0, mp.inf], omega=x) / mp.pi)


def cf_mean_abs(a, theta, b, lam, dps=30):
    """Independent oracle: E|Z| = (2/pi) int_0^inf (1 - phi(s)) / s^2 ds at high precision."""
    import mpmath as mp

    with mp.workdps(dps):
        a, theta, b, lam = (mp.mpf(v) for v in (a, theta, b, lam))

        def integrand(s):
            return (1 - (1 + theta**2 * s**2) ** (-a) * (1 + lam**2 * s**2) ** (-b)) / s**2

        return float(2 / mp.pi * mp.quad(integrand, [0, 1 / theta, 1 / lam, mp.inf]))


@pytest.mark.parametrize("params", SHARE_SETS)
def test_share_sum_sf_matches_gil_pelaez(params):
    dist = ShareSum(*params)
    # below x ~ 0.01 the oscillatory mpmath oracle itself loses digits, so the body and tail are checked
    for x in (0.05, 1.0, 3.0):
        assert dist.sf(x) == pytest.approx(gil_pelaez_sf(x, *params), rel=1e-9, abs=0), x
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
def test_share_sum_mean_abs_matches_mpmath(params):
    assert ShareSum(*params).mean_abs() == pytest.approx(cf_mean_abs(*params), rel=1e-11)


def test_share_sum_mean_abs_closed_forms():
    assert laplace_dropout(0.4, fraction=1.0).mean_abs() == pytest.approx(Laplace(0.4).mean_abs(), rel=1e-13)
    full = arete_dropout(Arete(*EPS6), fraction=1.0)
    assert full.mean_abs() == pytest.approx(Arete(*EPS6).mean_abs(), rel=1e-10)
    # GG(s, scale) with s tiny: E|Z| = 2 s scale (1 + O(s))
    assert ShareSum(1e-12, 1.0, 0.0, 1.0).mean_abs() == pytest.approx(2e-12, rel=1e-9)


class _CountingArete(Arete):
    calls: list[int] = []  # noqa: RUF012 - one shared counter, reset by each test

    def _sf(self, x):
        _CountingArete.calls.append(np.size(x))
        return super()._sf(x)


QS = np.array([1e-300, 1e-100, 1e-10, 0.3, 0.5, 1 - 1e-10])


def test_generic_ppf_round_trips_and_call_count():
    arete = _CountingArete(*EPS6)
    _CountingArete.calls = []
    x = np.asarray(arete.ppf(QS))
    assert len(_CountingArete.calls) <= 15  # bisection took ~280 sf calls at 1e-300
    assert x[4] == 0 and np.all(np.diff(x) > 0)
    upper = QS > 0.5
    back = np.where(upper, arete.sf(x), arete.cdf(x))
    np.testing.assert_allclose(back, np.where(upper, 1 - QS, QS), rtol=1e-9)
    for q in (1e-300, 1e-100, 1e-10, 0.3):  # scalar calls, each a handful of sf calls
        _CountingArete.calls = []
        assert arete.cdf(arete.ppf(q)) == pytest.approx(q, rel=1e-9)
        assert len(_CountingArete.calls) <= 12


def test_generic_ppf_far_tail_against_exponential_limit():
    # Arete tails are e^(-x / theta) x^(alpha - 1) up to a constant: the quantiles at 1e-300 and 1e-100
    # differ by theta log(1e200) to leading order (the power factor shifts it by O(theta log log))
    arete = Arete(*EPS6)
    x1, x2 = float(arete.ppf(1e-300)), float(arete.ppf(1e-100))
    assert (x2 - x1) / (EPS6[1] * math.log(1e200)) == pytest.approx(1.0, rel=0.01)


def test_share_sum_ppf_round_trip():
    dist = ShareSum(*SHARE_SETS[0])
    for q in (1e-100, 1e-10, 0.3):
        assert dist.cdf(dist.ppf(q)) == pytest.approx(q, rel=1e-9)


def _gv_var_gamma(eps):
    """[GV16] variance-optimal gamma, the printed formula evaluated in mpmath at ample precision."""
    import mpmath as mp

    with mp.workdps(120):
        b = mp.exp(-mp.mpf(eps))
        return float(-b / (1 - b) + mp.cbrt(b - 2 * b**2 + 2 * b**4 - b**5) / (mp.cbrt(2) * (1 - b) ** 2))


@pytest.mark.parametrize("eps", [1e-8, 1e-4, 0.01, 0.1, 1.0, 10.0, 100.0])
def test_staircase_variance_gamma_matches_mpmath(eps):
    assert Staircase.optimal_gamma(eps, criterion="var") == pytest.approx(_gv_var_gamma(eps), rel=1e-12)


def test_staircase_variance_gamma_limits():
    assert Staircase.optimal_gamma(1e-100, criterion="var") == pytest.approx(0.5, rel=1e-15)
    assert 0 < Staircase.optimal_gamma(200.0, criterion="var") < 1e-28
