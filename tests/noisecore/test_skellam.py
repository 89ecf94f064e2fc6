import numpy as np
import pytest
from scipy import stats

from noisecore.skellam import SkellamNoiseReduction


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
