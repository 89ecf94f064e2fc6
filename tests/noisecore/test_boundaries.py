import math

import numpy as np
import pytest

from noisecore import Gaussian
from noisecore.boundaries import LinearBoundary, MixtureBoundary, gaussian_variance


def test_linear_boundary_formula_and_inverse():
    bound = LinearBoundary(1e-6, 0.2, sensitivity=2.0)
    b = math.log(1e6) / 0.4
    assert bound.b == pytest.approx(b)
    t = np.array([1.0, 10.0, 1e4])
    np.testing.assert_allclose(bound.epsilon(t), 2.0 / t * (1.0 + b) + 0.4)
    eps = np.array([0.5, 1.0, 7.0])
    np.testing.assert_allclose(bound.epsilon(bound.calibrated_time(eps)), eps, rtol=1e-14)
    with pytest.raises(ValueError, match=r"epsilon must be > 0\.4"):
        bound.calibrated_time(0.4)


def test_mixture_boundary_formula_and_inverse():
    bound = MixtureBoundary(1e-6, 3.0, sensitivity=1.5)
    t = 7.0
    expected = 1.5**2 / (2 * t) + 1.5 / t * math.sqrt(2 * (t + 3) * math.log(1e6 * math.sqrt((t + 3) / 3)))
    assert bound.epsilon(t) == pytest.approx(expected, rel=1e-14)
    eps = np.geomspace(1e-3, 50, 500)
    times = bound.calibrated_time(eps)
    np.testing.assert_allclose(bound.epsilon(times), eps, rtol=1e-12)
    # least such t: slightly earlier times are above the target
    assert np.all(bound.epsilon(times * (1 - 1e-9)) > eps)


def test_mixture_boundary_large_delta_least_time():
    bound = MixtureBoundary(0.9, 0.5)
    t = bound.calibrated_time(2.0)
    assert bound.epsilon(t) <= 2.0 + 1e-9
    grid = np.geomspace(1e-6, t, 20000)[:-1]
    assert np.all(bound.epsilon(grid) > 2.0 - 1e-9)


def test_linear_optimized_beats_grid():
    best = LinearBoundary.calibrated(0.3, delta=1e-6)
    grid = np.linspace(1e-4, 0.3 - 1e-4, 200001)
    grid_times = [LinearBoundary(1e-6, a).calibrated_time(0.3) for a in grid[::1000]]
    fine = np.array(
        [LinearBoundary(1e-6, a).calibrated_time(0.3) for a in grid[np.argmin(grid_times) * 1000 - 1000 :][:2001]]
    )
    assert best.calibrated_time(0.3) <= fine.min() * (1 + 1e-12)
    assert best.calibrated_time(0.3) == pytest.approx(310.3357281861, rel=1e-9)


@pytest.mark.parametrize(("eps", "delta", "sens"), [(0.3, 1e-6, 1.0), (2.0, 1e-3, 0.5), (0.05, 1e-9, 3.0)])
def test_mixture_optimized_beats_grid(eps, delta, sens):
    best = MixtureBoundary.calibrated(eps, delta=delta, sensitivity=sens)
    rhos = np.geomspace(1e-6, 1e8, 400) * sens**2 / eps**2
    grid = min(MixtureBoundary(delta, r, sensitivity=sens).calibrated_time(eps) for r in rhos)
    assert best.calibrated_time(eps) <= grid * (1 + 1e-9)


def test_price_of_time_uniformity():
    # a single Gaussian release needs less variance than any time-uniform boundary
    var = gaussian_variance(0.3, delta=1e-6)
    assert var == pytest.approx(Gaussian.calibrated(0.3, delta=1e-6).sigma ** 2)
    assert var < LinearBoundary.calibrated(0.3, delta=1e-6).calibrated_time(0.3)
    assert var < MixtureBoundary.calibrated(0.3, delta=1e-6).calibrated_time(0.3)


@pytest.mark.parametrize(
    "bound", [LinearBoundary.calibrated(1.0, delta=0.05), MixtureBoundary.calibrated(1.0, delta=0.05)]
)
def test_boundary_crossing_frequency_at_most_delta(bound):
    """Monte Carlo: realized losses D^2/(2t) + (D/t) W_t of many paths on a fine log grid."""
    rng = np.random.default_rng(5)
    paths = 4000
    t = np.geomspace(1e-3, 1e5, 1500)
    dt = np.diff(np.r_[0.0, t])
    crossed = np.zeros(paths, dtype=bool)
    w = np.zeros(paths)
    psi = bound.epsilon(t)
    for k in range(t.size):
        w += rng.standard_normal(paths) * math.sqrt(dt[k])
        crossed |= 0.5 / t[k] + w / t[k] > psi[k]
    freq = crossed.mean()
    se = math.sqrt(0.05 * 0.95 / paths)
    assert freq <= 0.05 + 3 * se
    if isinstance(bound, LinearBoundary):
        # the line a t + b is crossed with probability exactly e^(-2ab) = delta in continuous time
        assert freq >= 0.05 - 6 * se


@pytest.mark.parametrize(
    "make",
    [
        lambda: LinearBoundary(0.0, 1.0),
        lambda: LinearBoundary(1.0, 1.0),
        lambda: LinearBoundary(1e-6, 0.0),
        lambda: LinearBoundary(1e-6, 1.0, sensitivity=-1),
        lambda: MixtureBoundary(1e-6, -1.0),
        lambda: MixtureBoundary(2.0, 1.0),
        lambda: MixtureBoundary.calibrated(0.0, delta=1e-6),
        lambda: LinearBoundary(1e-6, 1.0).epsilon(0.0),
        lambda: LinearBoundary(1e-6, 1.0).epsilon([1.0, -2.0]),
    ],
)
def test_bad_boundary_input(make):
    with pytest.raises(ValueError, match=r"delta|rho|a must|sensitivity|epsilon|t must"):
        make()


def test_pdp_gaussian_validates_and_exceeds_the_dp_gaussian():
    from noisecore import gaussian_pdp_variance

    with pytest.raises(ValueError, match="delta"):
        gaussian_pdp_variance(1.0, delta=0.0)
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_pdp_variance(-1.0, delta=1e-6)
    for eps in (0.1, 1.0, 10.0):
        assert gaussian_pdp_variance(eps, delta=1e-6, sensitivity=3.0) == pytest.approx(
            9 * gaussian_pdp_variance(eps, delta=1e-6), rel=1e-12
        )
        assert gaussian_pdp_variance(eps, delta=1e-6) > gaussian_variance(eps, delta=1e-6)


@pytest.mark.parametrize(
    ("epsilon", "sensitivity"), [(1e-300, 1.0), (5e-324, 1.0), (1e300, 1.0), (1.0, 1e-50), (1.0, 1e50)]
)
def test_mixture_calibration_names_an_epsilon_sensitivity_ratio_out_of_range(epsilon, sensitivity):
    """Found by benchmarks/fuzz_edges.py: these took 1.2-3 s and then named rho, which nobody passed."""
    with pytest.raises(ValueError, match="epsilon / sensitivity"):
        MixtureBoundary.calibrated(epsilon, delta=1e-6, sensitivity=sensitivity)


@pytest.mark.parametrize("ratio", [1e-40, 1e40])
def test_mixture_calibration_works_at_both_ends_of_the_ratio_range(ratio):
    boundary = MixtureBoundary.calibrated(ratio, delta=1e-6)
    t = boundary.calibrated_time(ratio)
    assert float(boundary(t)) == pytest.approx(ratio, rel=1e-9)
