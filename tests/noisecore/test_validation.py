import math

import numpy as np
import pytest

from noisecore import Arete, Gaussian, Laplace, Staircase

BAD_POSITIVE = [0.0, -1.0, math.inf, math.nan]
BAD_TYPE = ["1.0", None, 1j, True, [1.0]]


@pytest.mark.parametrize("value", BAD_POSITIVE)
@pytest.mark.parametrize(
    ("factory", "name"),
    [
        (lambda v: Laplace(v), "scale"),
        (lambda v: Laplace.calibrated(v), "epsilon"),
        (lambda v: Laplace.calibrated(1.0, sensitivity=v), "sensitivity"),
        (lambda v: Gaussian(v), "sigma"),
        (lambda v: Gaussian.calibrated(v, delta=1e-5), "epsilon"),
        (lambda v: Staircase(v), "epsilon"),
        (lambda v: Staircase(1.0, sensitivity=v), "sensitivity"),
        (lambda v: Arete(v, 1.0, 1.0), "alpha"),
        (lambda v: Arete(0.5, v, 1.0), "theta"),
        (lambda v: Arete(0.5, 1.0, v), "lam"),
        (lambda v: Arete.from_lemma3(v), "epsilon"),
    ],
)
def test_non_positive_or_non_finite_rejected(factory, name, value):
    with pytest.raises(ValueError, match=name):
        factory(value)


@pytest.mark.parametrize("value", BAD_TYPE)
def test_wrong_types_rejected(value):
    for factory in (Laplace, Gaussian, Staircase, lambda v: Arete(v, 1.0, 1.0)):
        with pytest.raises(TypeError):
            factory(value)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, 2.0, math.nan])
def test_delta_outside_unit_interval(delta):
    with pytest.raises(ValueError, match="delta"):
        Gaussian.calibrated(1.0, delta=delta)
    with pytest.raises(ValueError, match="delta"):
        Gaussian.calibrated(0.5, delta=delta, method="classic")


@pytest.mark.parametrize("gamma", [0.0, 1.0, 1.5, -0.2])
def test_staircase_gamma_range(gamma):
    with pytest.raises(ValueError, match=r"gamma must be in \(0, 1\)"):
        Staircase(1.0, gamma=gamma)


def test_method_arguments_validated():
    dist = Laplace(1.0)
    with pytest.raises(ValueError, match="x"):
        dist.pdf([0.0, np.nan])
    with pytest.raises(TypeError, match="x"):
        dist.cdf("zero")
    with pytest.raises(ValueError, match="q"):
        dist.ppf(1.5)
    with pytest.raises(ValueError, match="distance"):
        dist.privacy_loss(np.inf)
    with pytest.raises(ValueError, match="n"):
        Arete(0.5, 1.0, 1.0).shares(0)
    with pytest.raises(TypeError, match="n"):
        Arete(0.5, 1.0, 1.0).shares(2.5)
    with pytest.raises(ValueError, match="epsilon"):
        Gaussian(1.0).delta(-1.0)


def test_scalar_in_scalar_out_and_infinities():
    dist = Arete(0.2, 0.5, 0.1)
    assert np.ndim(dist.pdf(0.3)) == 0
    assert dist.pdf(np.inf) == 0.0
    assert dist.cdf(-np.inf) == 0.0
    assert dist.sf(-np.inf) == 1.0
    assert dist.pdf(np.zeros((2, 3))).shape == (2, 3)
