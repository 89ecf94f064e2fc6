import math

import mpmath
import numpy as np
import pytest

from noisecore import Gaussian
from noisecore.boundaries import LinearBoundary, MixtureBoundary, gaussian_composition_epsilon, gaussian_variance
from tests.noisecore import oracles


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


@pytest.mark.parametrize(("delta", "sens"), [(1e-6, 1.0), (1e-10, 3.0), (0.2, 0.01)])
def test_gaussian_variance_solves_many_epsilons_at_once(delta, sens):
    """An array of epsilons is solved in one pass: every variance meets its delta (an mpmath
    quadrature of the privacy-loss law) and is the least that does (0.1% less breaks it), each
    element agrees with the same epsilon alone, and the input's shape is kept."""
    eps = np.geomspace(1e-3, 300.0, 60)
    var = gaussian_variance(eps, delta=delta, sensitivity=sens)
    assert isinstance(var, np.ndarray) and var.shape == eps.shape
    for e, v in zip(eps[::6], var[::6], strict=True):
        sigma = math.sqrt(v)
        assert float(oracles.gaussian_delta(e, sigma, sens)) == pytest.approx(delta, rel=1e-8)
        assert float(oracles.gaussian_delta(e, sigma * 0.999, sens)) > delta
    alone = [gaussian_variance(float(e), delta=delta, sensitivity=sens) for e in eps]
    np.testing.assert_allclose(var, alone, rtol=1e-12)
    assert gaussian_variance(eps.reshape(6, 10), delta=delta, sensitivity=sens).shape == (6, 10)
    assert isinstance(gaussian_variance(0.5, delta=delta, sensitivity=sens), float)


def test_gaussian_variances_name_bad_epsilons():
    for bad in ([0.5, 0.0], [0.5, -1.0]):
        with pytest.raises(ValueError, match="epsilon must be > 0"):
            gaussian_variance(bad, delta=1e-6)
    with pytest.raises(ValueError, match="epsilon must not contain NaN"):
        gaussian_variance([0.5, math.nan], delta=1e-6)
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        gaussian_variance(["0.5"], delta=1e-6)
    # a sigma out of range names the epsilon that needs it
    with pytest.raises(ValueError, match=r"epsilon=1e\+300, delta=1e-06, sensitivity=1 give sigma"):
        gaussian_variance([1.0, 1e300], delta=1e-6)


def test_pdp_gaussian_variance_for_many_epsilons_matches_mpmath():
    from noisecore import gaussian_pdp_variance

    eps = np.geomspace(1e-4, 1e4, 41)
    for delta, sens in ((1e-6, 1.0), (0.3, 2.5)):
        var = gaussian_pdp_variance(eps, delta=delta, sensitivity=sens)
        with mpmath.workdps(50):  # sqrt(z^2 + 2 eps) - z cancels: 50 digits keep it exact
            z = -mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(delta) - 1)  # Phi^-1(1 - delta)
            exact = [float((sens / (mpmath.sqrt(z * z + 2 * mpmath.mpf(e)) - z)) ** 2) for e in eps]
        np.testing.assert_allclose(var, exact, rtol=1e-12)
        assert var.shape == eps.shape
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        gaussian_pdp_variance([1.0, 0.0], delta=1e-6)
    with pytest.raises(ValueError, match=r"epsilon=1e-300.* give the standard deviation"):
        gaussian_pdp_variance([1.0, 1e-300], delta=1e-6)


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


# --- the exact composition of independent Gaussian releases --------------------------------------
COMPOSITION_CASES = [
    (np.geomspace(100.0, 1.0, 82), 1e-6, 1.0),  # a rewind-like schedule
    (np.array([3.0]), 1e-5, 1.0),  # one release
    (np.geomspace(5000.0, 20.0, 40), 1e-3, 2.0),
    (np.geomspace(50.0, 0.5, 120), 1e-9, 0.5),
]


@pytest.mark.oracle
@pytest.mark.parametrize(("times", "delta", "D"), COMPOSITION_CASES)
def test_gaussian_composition_matches_the_pld_accountant(times, delta, D):
    """(epsilon, delta)-DP of independent Gaussian releases composed exactly, against Google's
    dp-accounting PLD accountant (an independent implementation) to 1e-3 relative."""
    from dp_accounting import GaussianDpEvent
    from dp_accounting.pld import pld_privacy_accountant

    accountant = pld_privacy_accountant.PLDAccountant()
    for T in times:
        accountant.compose(GaussianDpEvent(math.sqrt(T) / D))
    ours = gaussian_composition_epsilon(times, delta=delta, sensitivity=D, guarantee="dp")
    assert ours == pytest.approx(accountant.get_epsilon(delta), rel=1e-3)


@pytest.mark.parametrize(("times", "delta", "D"), COMPOSITION_CASES)
def test_gaussian_composition_pdp_is_the_loss_quantile(times, delta, D):
    """pDP: the losses D^2/(2T) + (D/T) W_T of independent releases add to N(mu^2/2, mu^2), mu^2 =
    sum D^2/T; its 1 - delta quantile from mpmath's erfinv at 30 digits; the cumulative form gives
    every prefix; a Monte Carlo of the summed losses (200,000 draws) agrees with P(loss > eps)."""
    mpmath.mp.dps = 30
    mu2 = mpmath.fsum(mpmath.mpf(D) ** 2 / mpmath.mpf(float(t)) for t in times)
    z = mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * mpmath.mpf(delta))
    expected = float(max(mu2 / 2 + mpmath.sqrt(mu2) * z, 0))
    assert gaussian_composition_epsilon(times, delta=delta, sensitivity=D) == pytest.approx(expected, rel=1e-12)
    prefix = gaussian_composition_epsilon(times, delta=delta, sensitivity=D, cumulative=True)
    assert prefix[-1] == pytest.approx(expected, rel=1e-12) and np.all(np.diff(prefix) > 0)
    assert prefix[0] == pytest.approx(gaussian_composition_epsilon(times[:1], delta=delta, sensitivity=D))
    if delta >= 1e-4:  # a Monte Carlo can see the tail
        rng = np.random.default_rng(3)
        loss = np.zeros(200_000)
        for t in times:
            loss += D * D / (2 * t) + D / t * rng.normal(0.0, math.sqrt(t), loss.size)
        p = float(np.mean(loss > expected))
        assert abs(p - delta) <= 4 * math.sqrt(delta / loss.size)
    dp = gaussian_composition_epsilon(times, delta=delta, sensitivity=D, guarantee="dp")
    assert 0 < dp < expected  # pDP implies DP: the DP epsilon is smaller


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"variances": [], "delta": 1e-6}, "variances"),
        ({"variances": [1.0, -1.0], "delta": 1e-6}, "variances"),
        ({"variances": [[1.0]], "delta": 1e-6}, "variances"),
        ({"variances": [1.0], "delta": 0.0}, "delta"),
        ({"variances": [1.0], "delta": 1e-6, "guarantee": "rdp"}, "guarantee"),
        ({"variances": [1.0], "delta": 1e-6, "sensitivity": 0.0}, "sensitivity"),
    ],
)
def test_gaussian_composition_names_bad_arguments(kwargs, match):
    variances = kwargs.pop("variances")
    with pytest.raises(ValueError, match=match):
        gaussian_composition_epsilon(variances, **kwargs)
    with pytest.raises(TypeError, match="cumulative"):
        gaussian_composition_epsilon([1.0], delta=1e-6, cumulative=1)


@pytest.mark.parametrize("delta", [1e-12, 1e-6, 0.05, 0.4])
@pytest.mark.parametrize("sensitivity", [0.1, 1.0, 7.0])
def test_one_gaussian_release_epsilon_is_the_loss_quantile(delta, sensitivity):
    """gaussian_pdp_epsilon: the privacy loss N(D^2/(2T), D^2/T) of one release exceeds it with probability
    exactly delta (a 40-digit mpmath tail), and gaussian_pdp_variance inverts it."""
    from noisecore import gaussian_pdp_epsilon, gaussian_pdp_variance

    mpmath.mp.dps = 40
    times = np.geomspace(1e-3, 1e5, 17) * sensitivity**2
    eps = gaussian_pdp_epsilon(times, delta=delta, sensitivity=sensitivity)
    for T, e in zip(times, eps, strict=True):
        mean, sd = mpmath.mpf(sensitivity) ** 2 / (2 * T), mpmath.mpf(sensitivity) / mpmath.sqrt(T)
        tail = mpmath.erfc((mpmath.mpf(e) - mean) / (sd * mpmath.sqrt(2))) / 2
        assert float(tail) == pytest.approx(delta, rel=1e-9)
        assert gaussian_pdp_variance(float(e), delta=delta, sensitivity=sensitivity) == pytest.approx(T, rel=1e-9)
    assert np.all(np.diff(eps) < 0)  # more noise, less loss
    assert gaussian_pdp_epsilon(float(times[3]), delta=delta, sensitivity=sensitivity) == eps[3]


def test_one_gaussian_release_epsilon_is_clipped_at_zero_and_validates():
    from noisecore import gaussian_pdp_epsilon

    # delta above 1/2: z < 0, so a very noisy release's loss quantile is negative: epsilon 0
    assert gaussian_pdp_epsilon(1e6, delta=0.9) == 0.0
    with pytest.raises(ValueError, match="delta"):
        gaussian_pdp_epsilon(1.0, delta=1.0)
    with pytest.raises(ValueError, match="variance"):
        gaussian_pdp_epsilon([1.0, -1.0], delta=1e-6)
    with pytest.raises(ValueError, match="variance"):
        gaussian_pdp_epsilon(np.inf, delta=1e-6)
    with pytest.raises(TypeError, match="variance"):
        gaussian_pdp_epsilon("1", delta=1e-6)
    with pytest.raises(ValueError, match="sensitivity"):
        gaussian_pdp_epsilon(1.0, delta=1e-6, sensitivity=0.0)
