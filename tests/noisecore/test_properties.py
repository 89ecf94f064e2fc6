"""Property-based sweeps over valid parameters: finite values, unit mass."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import special

from noisecore import Arete, Gaussian, Laplace, Staircase

log_uniform = st.floats(min_value=-3, max_value=1).map(lambda v: 10.0**v)


def _mass(dist, scale_small, scale_big):
    """2 int_0^inf pdf by Gauss-Legendre on geometric pieces (independent of the code's mesh)."""
    y, w = special.roots_legendre(30)
    edges = np.geomspace(1e-15 * scale_small, 120 * scale_big, 400)
    edges = np.concatenate([[0.0], edges])
    a, b = edges[:-1], edges[1:]
    x = (a[:, None] + b[:, None]) / 2 + (b - a)[:, None] / 2 * y
    vals = dist.pdf(x.ravel()).reshape(x.shape)
    assert np.all(np.isfinite(vals))
    assert np.all(vals >= 0)
    return 2 * float(np.sum(vals * w * ((b - a) / 2)[:, None]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(alpha=st.floats(min_value=-4, max_value=0).map(lambda v: 10.0**v), theta=log_uniform, lam=log_uniform)
def test_arete_finite_and_unit_mass(alpha, theta, lam):
    dist = Arete(alpha, theta, lam)
    assert abs(_mass(dist, min(theta, lam), max(theta, lam)) - 1) < 1e-8
    x = np.array([0.0, lam, theta, 30 * max(theta, lam)])
    for values in (dist.logpdf(x), dist.sf(x), dist.cdf(-x)):
        assert np.all(np.isfinite(values))
    loss = dist.privacy_loss(1.0)
    assert np.isfinite(loss) and loss > 0
    assert np.isfinite(dist.mean_abs()) and dist.mean_abs() > 0


@settings(max_examples=40, deadline=None)
@given(eps=st.floats(min_value=0.01, max_value=40), sens=log_uniform)
def test_staircase_and_laplace_unit_mass(eps, sens):
    for dist in (Staircase(eps, sensitivity=sens), Laplace.calibrated(eps, sensitivity=sens)):
        g = dist.gamma if isinstance(dist, Staircase) else 0.5
        # piecewise-constant density: integrate exactly on its own steps
        k = np.arange(0, int(80 / eps) + 60)
        edges = np.unique(np.concatenate([k * sens, (k + g) * sens]))
        if isinstance(dist, Staircase):
            mids = (edges[:-1] + edges[1:]) / 2
            mass = 2 * np.sum(dist.pdf(mids) * np.diff(edges))
        else:
            mass = _mass(dist, dist.scale, dist.scale)
        assert abs(mass - 1) < 1e-8
        assert np.all(np.isfinite(dist.logpdf(edges[:50])))


@settings(max_examples=40, deadline=None)
@given(eps=st.floats(min_value=0.01, max_value=50), delta=st.floats(min_value=1e-12, max_value=0.5))
def test_analytic_gaussian_always_calibrates(eps, delta):
    dist = Gaussian.calibrated(eps, delta=delta)
    assert np.isfinite(dist.sigma) and dist.sigma > 0
    assert abs(dist.delta(eps) - delta) <= 1e-8 * delta
