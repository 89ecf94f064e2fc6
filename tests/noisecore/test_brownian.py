import math

import numpy as np
import pytest

from noisecore.boundaries import LinearBoundary, MixtureBoundary
from noisecore.brownian import BrownianMechanism
from tests.noisecore.checks import assert_follows

BOUND = LinearBoundary.calibrated(0.3, delta=1e-6)


def test_release_by_epsilon_and_history():
    mech = BrownianMechanism([1.0, -2.0, 0.5], sensitivity=1.0, boundary=BOUND, rng=11)
    first = mech.release(epsilon=0.2)
    second = mech.release(epsilon=0.5)
    assert first.shape == (3,)
    np.testing.assert_allclose(mech.times, [BOUND.calibrated_time(0.2), BOUND.calibrated_time(0.5)])
    np.testing.assert_allclose(mech.epsilons, [0.2, 0.5], rtol=1e-12)
    assert mech.ex_post_epsilon == pytest.approx(0.5)
    np.testing.assert_array_equal(mech.releases[1], second)
    # the last noise is what the realized loss uses
    neighbor = mech.value + np.array([1.0, 0.0, 0.0])
    expected = (0.5 - mech.noise[0]) / mech.times[-1]
    assert mech.realized_privacy_loss(neighbor) == pytest.approx(expected)
    worst = mech.worst_neighbor_loss()
    unit = mech.noise / np.linalg.norm(mech.noise)
    assert worst == pytest.approx(mech.realized_privacy_loss(mech.value - unit))


def test_same_seed_same_everything():
    def run():
        mech = BrownianMechanism(0.0, sensitivity=1.0, boundary=BOUND, rng=42)
        out = [mech.release(100.0), mech.path(np.linspace(0, 150, 11)), mech.release(30.0)]
        return np.concatenate([np.ravel(v) for v in out])

    np.testing.assert_array_equal(run(), run())


def test_release_lies_on_revealed_path():
    mech = BrownianMechanism([0.0, 0.0], sensitivity=1.0, boundary=BOUND, rng=3)
    mech.release(50.0)
    times = np.linspace(0.0, 50.0, 101)
    path = mech.path(times)
    np.testing.assert_array_equal(path[0], [0.0, 0.0])
    np.testing.assert_allclose(path[-1], mech.noise)
    released = mech.release(times[40])
    np.testing.assert_allclose(released, path[40])
    np.testing.assert_allclose(mech.path(times), path)


@pytest.mark.sweep
def test_bridge_and_path_covariance_is_min():
    times = [4.0, 2.5, 1.0, 0.3]
    extra = np.array([6.0, 3.0, 0.5, 0.2])
    rows = []
    for seed in range(6000):
        mech = BrownianMechanism(0.0, sensitivity=1.0, boundary=BOUND, rng=seed)
        values = [mech.release(t)[0] for t in times]
        rows.append(values + list(mech.path(extra)[:, 0]))
    samples = np.array(rows)
    all_t = np.array(times + list(extra))
    cov = np.cov(samples.T)
    target = np.minimum.outer(all_t, all_t)
    # standard error of a sample covariance is about sqrt((s t + min^2) / n)
    se = np.sqrt((np.outer(all_t, all_t) + target**2) / len(rows))
    assert np.all(np.abs(cov - target) < 4.5 * se)
    assert np.abs(samples.mean(axis=0)).max() < 4.5 * np.sqrt(all_t.max() / len(rows))


@pytest.mark.sweep
def test_bridge_conditional_law():
    # B(T') | B(T) ~ N((T'/T) B(T), T'(T - T')/T)
    T, Tp = 9.0, 4.0
    first, second = [], []
    for seed in range(5000):
        mech = BrownianMechanism(0.0, sensitivity=1.0, boundary=BOUND, rng=seed)
        first.append(mech.release(T)[0])
        second.append(mech.release(Tp)[0])
    first, second = np.array(first), np.array(second)
    resid = (second - Tp / T * first) / math.sqrt(Tp * (T - Tp) / T)
    assert_follows(resid, "norm", what="bridge residuals")
    assert abs(np.corrcoef(resid, first)[0, 1]) < 0.05


@pytest.mark.sweep
def test_realized_loss_distribution():
    """Theorem 3.4: for a shift of norm D at time T the loss is N(D^2/(2T), D^2/T)."""
    D, T = 1.3, 2.0
    shift = np.array([0.5, -1.2, 0.0]) * D / np.linalg.norm([0.5, -1.2, 0.0])
    losses = []
    for seed in range(4000):
        mech = BrownianMechanism(
            [1.0, 2.0, 3.0], sensitivity=D, boundary=MixtureBoundary(1e-6, 1.0, sensitivity=D), rng=seed
        )
        mech.release(T)
        losses.append(mech.realized_privacy_loss(mech.value - shift))
    assert_follows(losses, "norm", args=(D * D / (2 * T), D / math.sqrt(T)), what="realized losses")


def test_bad_brownian_input():
    with pytest.raises(TypeError, match="boundary"):
        BrownianMechanism(0.0, sensitivity=1.0, boundary=0.3)
    with pytest.raises(ValueError, match="sensitivity"):
        BrownianMechanism(0.0, sensitivity=0.0, boundary=BOUND)
    with pytest.raises(ValueError, match="value"):
        BrownianMechanism(np.zeros((2, 2)), sensitivity=1.0, boundary=BOUND)
    mech = BrownianMechanism([0.0, 1.0], sensitivity=1.0, boundary=BOUND, rng=0)
    with pytest.raises(ValueError, match="nothing has been released"):
        _ = mech.ex_post_epsilon
    with pytest.raises(TypeError, match="exactly one"):
        mech.release()
    with pytest.raises(ValueError, match="time must be > 0"):
        mech.release(-1.0)
    mech.release(10.0)
    with pytest.raises(ValueError, match="time must be < the previous"):
        mech.release(10.0)
    with pytest.raises(ValueError, match="epsilon must be >"):
        mech.release(epsilon=0.1)
    with pytest.raises(ValueError, match="neighbor must have the shape of value"):
        mech.realized_privacy_loss([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="times must be >= 0"):
        mech.path([-1.0])


@pytest.fixture
def tiny_chunks(monkeypatch):
    """Chunks of a few points, so splicing, merging and splitting all happen on small paths."""
    from noisecore.brownian import _LatentPath

    monkeypatch.setattr(_LatentPath, "CHUNK", 4)
    monkeypatch.setattr(_LatentPath, "SPLICE", 3)


def test_chunked_store_stays_sorted_and_consistent(tiny_chunks):
    rng = np.random.default_rng(5)
    mech = BrownianMechanism([0.0, 0.0], sensitivity=1.0, boundary=BOUND, rng=8)
    seen = {}
    last = 100.0
    for step in range(60):
        if step % 3 == 0:
            last = last * rng.uniform(0.5, 0.99)
            out = mech.release(last)[None, :] - mech.value
            times = np.array([last])
        else:
            size = int(rng.integers(1, 30))
            times = rng.uniform(0, 150, size)
            if step % 4 == 0:  # repeats and points already known
                times = np.concatenate([times, times[:3], list(seen)[:5]])
            out = mech.path(times)
        for t, v in zip(times, out, strict=True):
            if t in seen:
                np.testing.assert_array_equal(v, seen[t])
            seen[t] = v
        assert np.all(np.diff(mech._path.times) > 0)
        assert all(c.size <= 2 * 4 for c in mech._path._t)
    assert set(mech._path.times) == set(seen) - {0.0}
    everything = np.array(sorted(seen))
    np.testing.assert_array_equal(mech.path(everything), np.array([seen[t] for t in everything]))


@pytest.mark.sweep
def test_joint_law_through_every_store_operation(tiny_chunks):
    """Splice (a block in one gap), merge (points in many gaps), a small block before the first
    chunk, a point past the end: all sampled values together have covariance min(s, t), and the
    two coordinates are independent."""
    ops = [4.0, np.linspace(0.5, 3.5, 7), np.array([0.2, 1.25, 2.75, 5.0, 6.5]), 0.75, np.array([0.05, 0.1])]
    all_t = np.concatenate([np.atleast_1d(o) for o in ops])
    n = 3000
    rows = np.empty((n, all_t.size, 2))
    for seed in range(n):
        mech = BrownianMechanism([0.0, 0.0], sensitivity=1.0, boundary=BOUND, rng=seed)
        parts = [mech.release(o)[None, :] if np.ndim(o) == 0 else mech.path(o) for o in ops]
        rows[seed] = np.concatenate(parts)
    target = np.minimum.outer(all_t, all_t)
    se = np.sqrt((np.outer(all_t, all_t) + target**2) / n)
    for j in range(2):
        cov = np.cov(rows[:, :, j].T)
        assert np.all(np.abs(cov - target) < 4.5 * se)
    cross = (rows[:, :, 0].T @ rows[:, :, 1]) / n
    assert np.all(np.abs(cross) < 4.5 * np.sqrt(np.outer(all_t, all_t) / n))


def test_big_single_gap_path_has_bridge_increments():
    """A 20,000-point path after a release (the splice path): the increments, standardised by
    the exact bridge law given the release, are i.i.d. N(0, 1)."""
    T = 2.0
    mech = BrownianMechanism(0.0, sensitivity=1.0, boundary=BOUND, rng=17)
    end = mech.release(T)[0]
    times = np.linspace(0, T, 20_002)[1:-1]
    path = mech.path(times)[:, 0]
    # B(t_i) given B(t_{i-1}) and B(T): mean b + (t_i - t)/(T - t) (B(T) - b), var (t_i - t)(T - t_i)/(T - t)
    prev_t, prev_b = np.r_[0.0, times[:-1]], np.r_[0.0, path[:-1]]
    mean = prev_b + (times - prev_t) / (T - prev_t) * (end - prev_b)
    sd = np.sqrt((times - prev_t) * (T - times) / (T - prev_t))
    z = (path - mean) / sd
    assert_follows(z, "norm", what="standardised bridge increments")
    assert abs(np.corrcoef(z[1:], z[:-1])[0, 1]) < 4.5 / math.sqrt(z.size)
