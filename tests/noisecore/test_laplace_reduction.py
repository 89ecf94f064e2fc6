import math

import numpy as np
import pytest
from scipy import stats

from noisecore.laplace_reduction import LaplaceNoiseReduction, LaplaceProcess, koufogiannis_chain
from tests.noisecore.checks import assert_follows

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
        assert_follows(values[:, j], "laplace", args=(0, t), what=f"Z({t})")


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
    assert_follows(samples, "laplace", args=(0, 0.5), what="LNR release at eps = 2 minus f(x)")
