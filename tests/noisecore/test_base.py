"""The generic machinery of noisecore._base every distribution shares: the quantile search (ppf/isf)
for distributions without a closed-form inverse, checked by round trips and by counting sf calls."""

import math

import numpy as np
import pytest

from noisecore import Arete
from tests.conftest import LOCAL_SEARCH_SETS

EPS6 = LOCAL_SEARCH_SETS[6][0]


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
