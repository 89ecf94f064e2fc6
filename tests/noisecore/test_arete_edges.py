"""The Arete at the edges of its parameter range and of the real line.

A seeded hypothesis sweep feeds every public entry point of ``Arete`` and ``AreteShare``
hostile values: every call either returns values without NaN or raises ValueError/TypeError
whose message names the offending parameter. Accuracy at formerly wrong points is checked
against independent mpmath oracles; far-tail cost is checked by counting mesh pieces.
"""

import math
import tracemalloc

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noisecore import Arete
from noisecore.arete import ALPHA_RANGE, EVALUATION_CHUNK, MIN_SCALE_RATIO, SCALE_RANGE, AreteShare
from tests.conftest import LOCAL_SEARCH_SETS
from tests.noisecore import oracles

EPS6 = LOCAL_SEARCH_SETS[6][0]
SWEEP = settings(
    derandomize=True,
    deadline=None,
    max_examples=60,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

NASTY_SCALARS = [
    math.nan,
    math.inf,
    -math.inf,
    0.0,
    -0.0,
    -1.0,
    1e-300,
    1e300,
    -1e300,
    5e-324,
    -5e-324,
    1e-16,
    1e16,
    2.5,
    "1",
    None,
    1 + 2j,
    True,
    b"x",
    object(),
]
NASTY_ARRAYS = [
    [],
    np.empty((0, 3)),
    [[0.5, -2.0], [3.0, 1e6]],
    np.array([1.0, math.nan]),
    np.array([[math.inf, -math.inf]]),
    np.array([1 + 1j]),
    ["a", "b"],
    np.zeros((2, 2), dtype=bool),
]
nasty = st.sampled_from(NASTY_SCALARS + NASTY_ARRAYS) | st.floats(allow_nan=True, allow_infinity=True)
log_scale = st.floats(min_value=-12, max_value=12).map(lambda v: 10.0**v)
valid_params = st.tuples(st.floats(min_value=-200, max_value=0).map(lambda v: 10.0**v), log_scale, log_scale).filter(
    lambda p: min(p[1], p[2]) >= MIN_SCALE_RATIO * max(p[1], p[2])
)


def _call(func, names):
    """Call; an exception must be ValueError/TypeError naming one of ``names``. Returns the
    result or None when refused."""
    try:
        return func()
    except (ValueError, TypeError) as exc:
        message = str(exc)
        assert any(name in message for name in names), (names, message)
        return None


def _no_nan(value):
    arr = np.asarray(value, dtype=float)
    assert not np.isnan(arr).any(), value


@SWEEP
@given(alpha=nasty | st.floats(0, 2), theta=nasty | log_scale, lam=nasty | log_scale)
def test_constructor_accepts_or_refuses_by_name(alpha, theta, lam):
    dist = _call(lambda: Arete(alpha, theta, lam), ("alpha", "theta", "lam"))
    share = _call(lambda: AreteShare(alpha, theta, lam, 3), ("alpha", "theta", "lam"))
    if dist is None:
        assert share is None
        return
    assert share is not None
    mu = max(dist.theta, dist.lam)  # privacy_loss takes distances down to 1e-6 mu
    for value in (dist.var(), dist.mean_abs(), dist.pdf(0.5), dist.sf(0.5), dist.privacy_loss(mu)):
        _no_nan(value)


@SWEEP
@given(params=valid_params, x=nasty)
@pytest.mark.sweep
def test_density_functions_on_nasty_x(params, x):
    dist = Arete(*params)
    for method in (dist.pdf, dist.logpdf, dist.sf, dist.cdf):
        out = _call(lambda m=method: m(x), ("x",))
        if out is not None:
            _no_nan(out)
            assert np.shape(out) == np.shape(x)
    q = _call(lambda: dist.ppf(x), ("q",))
    if q is not None:
        _no_nan(q)


@SWEEP
@given(params=valid_params, s=nasty)
def test_characteristic_functions_on_nasty_s(params, s):
    dist = Arete(*params)
    share = dist.shares(4)
    for func in (dist.characteristic_function, share.characteristic_function):
        out = _call(lambda f=func: f(s), ("s",))
        if out is not None:
            _no_nan(out)
            assert np.all((np.asarray(out) >= 0) & (np.asarray(out) <= 1))


@SWEEP
@given(params=valid_params, d=nasty)
@pytest.mark.sweep
def test_privacy_loss_on_nasty_distance(params, d):
    dist = Arete(*params)
    out = _call(lambda: dist.privacy_loss(d), ("distance",))
    if out is not None:
        _no_nan(out)
        assert np.all(np.asarray(out) >= 0)


SIZES = [None, 0, 3, (2, 2), -1, 2.5, "3", (2, -1), (2.0, 1), 1 + 1j, [1, "a"]]


@SWEEP
@given(
    size=st.sampled_from(SIZES),
    n=st.sampled_from([1, 3, 0, -2, 2.5, "2", None, True]),
    rng=st.sampled_from([None, 7, np.random.default_rng(1), "seed", -3, 2.5]),
)
def test_sampling_entry_points(size, n, rng):
    dist = Arete(*EPS6)
    for func in (
        lambda: dist.sample(size, rng=rng),
        lambda: dist.sample_shares(n, size=size, rng=rng),
        lambda: AreteShare(*EPS6, n).sample(size, rng=rng),
    ):
        out = _call(func, ("size", "n", "rng", "seed"))
        if out is not None:
            _no_nan(out)


@SWEEP
@given(eps=nasty | st.floats(0, 400), sens=nasty | log_scale)
def test_lemma3_entry_points(eps, sens):
    applies = _call(lambda: Arete.lemma3_applies(eps, sensitivity=sens), ("epsilon", "sensitivity"))
    dist = _call(lambda: Arete.from_lemma3(eps, sensitivity=sens), ("epsilon", "sensitivity"))
    if dist is not None:
        assert applies is not None
        # the distance it is calibrated for; refused (by name) below 1e-6 max(theta, lam), as at eps = 1e-16
        loss = _call(lambda: dist.privacy_loss(sens), ("distance",))
        if loss is not None:
            _no_nan(loss)
        _no_nan(dist.logpdf([0.0, 1.0, 1e6]))


@pytest.mark.parametrize("bad", [math.nan, -1.0, 0.0, "6", None, 1j])
def test_calibrated_refuses_by_name(bad):
    for call, name in (
        (lambda: Arete.calibrated(bad), "epsilon"),
        (lambda: Arete.calibrated(6.0, sensitivity=bad), "sensitivity"),
        (lambda: Arete.calibrated(6.0, objective=bad), "objective"),
    ):
        with pytest.raises((ValueError, TypeError), match=name):
            call()


@pytest.mark.parametrize("bad", [5e-324, 1e-300, 1e-6, 1001.0, 1e300, 1e308, np.array([1.0, 2.0])])
def test_calibrated_epsilon_outside_its_range_is_named(bad):
    """Found by benchmarks/fuzz_edges.py: 5e-324 raised ZeroDivisionError, 1e300 a RuntimeError, 1e-300
    an error naming lam; arrays gave numpy's "truth value" message."""
    with pytest.raises((ValueError, TypeError), match="epsilon"):
        Arete.calibrated(bad)
    with pytest.raises(TypeError, match="objective"):
        Arete.calibrated(6.0, objective=np.array(["abs"]))


@pytest.mark.parametrize("sensitivity", [1e300, 1e-300, 5e-324, 1e308])
def test_calibrated_names_a_sensitivity_that_scales_out_of_range(sensitivity):
    with pytest.raises(ValueError, match="sensitivity"):
        Arete.calibrated(6.0, sensitivity=sensitivity)


@pytest.mark.sweep
@pytest.mark.parametrize("epsilon", [1e-5, 50.0])
def test_calibrated_certifies_at_both_ends_of_its_range(epsilon):
    dist = Arete.calibrated(epsilon)
    assert dist.privacy_loss(1.0) <= epsilon
    laplace_error = 1.0 / epsilon  # E|Z| of Laplace(1/epsilon): the Arete never does worse
    assert dist.mean_abs() <= laplace_error * (1 + 1e-6)


@pytest.mark.parametrize("d", [5e-324, -5e-324, 1e-300, 1e-8, 1e301, 1e308])
def test_privacy_loss_refuses_distances_outside_the_certified_range(d):
    """Below 1e-6 max(theta, lam) log f(t) - log f(t + d) is lost to rounding: at 1e-20 the search
    returned the tail limit d / mu, a tenth of the true loss (an underestimate); 5e-324 and 1e308
    raised numpy errors naming nothing (and 1e308 overflows the search grid)."""
    with pytest.raises(ValueError, match="distance"):
        Arete(*EPS6).privacy_loss(d)


def test_privacy_loss_at_the_smallest_certified_distance():
    """At d = 1e-6 mu the loss is d times sup |(log f)'| to ~1e-9: it agrees with d = 1e-4 mu scaled
    (the limit has converged there to 3e-8) and stays below d / lam, the Laplace factor's bound."""
    dist = Arete(*EPS6)
    mu = max(dist.theta, dist.lam)
    small, larger = 1e-6 * mu, 1e-4 * mu
    slope_small = dist.privacy_loss(small) / small
    slope_larger = dist.privacy_loss(larger) / larger
    assert slope_small == pytest.approx(slope_larger, rel=1e-7)
    assert slope_small <= 1 / dist.lam


def test_sample_shares_names_n_when_too_many_values():
    with pytest.raises(ValueError, match="n and size"):
        Arete(*EPS6).sample_shares(10**12)
    with pytest.raises(ValueError, match="n and size"):
        Arete(*EPS6).sample_shares(10**4, size=10**4)


@settings(derandomize=True, deadline=None, max_examples=40, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=valid_params, t=st.floats(min_value=-3, max_value=14).map(lambda v: 10.0**v))
def test_values_sane_across_the_domain(params, t):
    """Over the whole accepted domain: densities finite and ordered, sf + cdf = 1, loss finite."""
    dist = Arete(*params)
    mu = max(params[1], params[2])
    x = np.array([0.0, t * mu, -t * mu])
    lp = dist.logpdf(x)
    assert np.all(np.isfinite(lp)) and lp[1] == lp[2] and lp[0] >= lp[1]
    sf, cdf = dist.sf(x), dist.cdf(x)
    assert np.all((sf >= 0) & (sf <= 1))
    np.testing.assert_allclose(sf + cdf, 1.0, atol=1e-12)
    loss = dist.privacy_loss(mu)
    assert np.isfinite(loss) and loss >= 1.0 * (1 - 1e-9)  # at least the tail limit d / mu


def test_documented_range_is_enforced():
    lo, hi = ALPHA_RANGE
    Arete(lo, 1.0, 1.0)
    Arete(hi, 1.0, 1.0)
    with pytest.raises(ValueError, match=r"alpha must be in \[1e-200, 1\]"):
        Arete(1.5, 1.0, 1.0)
    with pytest.raises(ValueError, match="alpha"):
        Arete(5e-324, 1.0, 1.0)
    with pytest.raises(ValueError, match="theta"):
        Arete(0.5, SCALE_RANGE[1] * 10, SCALE_RANGE[1])
    with pytest.raises(ValueError, match="lam"):
        Arete(0.5, SCALE_RANGE[0], SCALE_RANGE[0] / 10)
    with pytest.raises(ValueError, match="theta / lam"):
        Arete(0.0756, 0.63, 1e-17)
    with pytest.raises(ValueError, match="epsilon"):
        Arete.from_lemma3(200.0)
    with pytest.raises(TypeError, match="n"):
        AreteShare(0.5, 1.0, 1.0, 2.5)


@pytest.mark.parametrize("t", [1e3, 1e6, 1e9, 1e12])
def test_far_tail_mesh_is_bounded(t):
    """The cost of a far point is O(log t): count quadrature pieces rather than time them."""
    kernel = Arete(*EPS6)._kernel
    pieces = len(kernel._mesh(np.array([t]))[0])
    assert pieces < 400, pieces
    assert len(kernel._mesh(np.array([0.5, t]))[0]) < 600


def test_far_tail_values_cost_o1_memory():
    dist = Arete(*EPS6)
    assert dist.pdf(1e7) == 0.0 and dist.sf(1e7) == 0.0 and dist.cdf(-1e7) == 0.0 and dist.cdf(1e7) == 1.0
    assert dist.pdf(1e300) == 0.0 and dist.logpdf(np.inf) == -np.inf
    assert np.isfinite(dist.logpdf(1e300)) and dist.logpdf(1e300) < -1e299
    assert np.isfinite(dist.privacy_loss(1e5)) and np.isfinite(dist.privacy_loss(1e300))


@pytest.mark.parametrize("t", [1e3, 1e6, 1e9])
def test_far_tail_logpdf_against_mpmath(t):
    ref = oracles.arete_far_tail_pdf(t, *EPS6)
    assert Arete(*EPS6).logpdf(t) == pytest.approx(float(mp.log(ref)), rel=1e-13)


@pytest.mark.sweep
@pytest.mark.parametrize(
    ("params", "t"),
    [
        ((0.0756, 0.63, 1e-16), 0.3),
        ((0.0756, 0.63, 1e-16), 3.0),
        ((0.0756, 1e-9, 0.63), 0.3),
        ((0.0756, 1e-9, 0.63), 3.0),
        ((math.exp(-40), 4 / 160, math.exp(-40)), 0.3),
    ],
)
def test_formerly_wrong_points_against_fourier_oracle(params, t):
    dist = Arete(*params)
    ref = float(oracles.arete_pdf(t, *params, dps=30))
    assert dist.pdf(t) == pytest.approx(ref, rel=1e-10)
    assert np.isfinite(dist.privacy_loss(1.0))


def test_lemma3_at_large_epsilon():
    dist = Arete.from_lemma3(160.0)
    assert dist.lam / dist.theta > MIN_SCALE_RATIO
    loss = dist.privacy_loss(1.0)
    assert np.isfinite(loss) and loss <= 160.0
    # far beyond the Laplace scale the Gamma - Gamma tail rules: log f(t) - log f(t+1) -> 1/theta
    expected = 1 / dist.theta + (1 - dist.alpha) * math.log(4 / 3)  # f_X(t) ~ t^(alpha - 1) e^(-t/theta)
    assert dist.logpdf(3.0) - dist.logpdf(4.0) == pytest.approx(expected, rel=1e-4)


def test_small_lam_matches_gamma_difference_density():
    """lam = 1e-16 theta: the density away from 0 is the Gamma - Gamma density (scipy Bessel K)."""
    from scipy import special

    alpha, theta = 0.0756, 0.63
    dist = Arete(alpha, theta, 1e-16)
    x = np.array([1e-3, 0.3, 3.0, 30.0])
    nu = alpha - 0.5
    z = x / theta
    ref = z**nu * special.kv(nu, z) / (theta * math.sqrt(math.pi) * special.gamma(alpha) * 2**nu)
    np.testing.assert_allclose(dist.pdf(x), ref, rtol=1e-12)


def test_large_arrays_are_evaluated_in_bounded_memory():
    """Past EVALUATION_CHUNK points the density and sf are evaluated in sorted runs: peak memory
    per point is a few arrays (was about 350 bytes a point for the one mesh through every point),
    and the values agree with mpmath and with each point evaluated alone."""
    dist = Arete(0.05, 0.3, 1.0)
    x = np.random.default_rng(0).normal(0, 3, 3 * EVALUATION_CHUNK + 17)
    tracemalloc.start()
    try:
        pdf = dist.pdf(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 80 * x.size + 400 * EVALUATION_CHUNK, peak / x.size  # a few arrays, and one run's mesh
    sf = dist.sf(x)
    picks = np.random.default_rng(1).choice(x.size, 4, replace=False)
    for i in picks:
        assert pdf[i] == pytest.approx(dist.pdf(x[i]), rel=1e-13)
        assert sf[i] == pytest.approx(dist.sf(x[i]), rel=1e-13)
    t = abs(x[picks[0]])
    assert dist.pdf(np.r_[x, t])[-1] == pytest.approx(float(oracles.arete_pdf(t, 0.05, 0.3, 1.0)), rel=2e-13)
