"""Distributions and boundaries cannot be changed after construction, so nothing derived goes stale
(before: ``Staircase(2.0)`` with ``.epsilon = 4`` reported E|Z| 0.358 instead of 0.177)."""

import copy
import pickle

import numpy as np
import pytest

from noisecore import Arete, Gaussian, Laplace, Staircase
from noisecore.boundaries import LinearBoundary, MixtureBoundary
from noisecore.dropout import ShareSum
from noisecore.experiments import default_task, stopping_experiment

OBJECTS = [
    (lambda: Laplace(1.0), "scale"),
    (lambda: Gaussian(2.0), "sigma"),
    (lambda: Staircase(2.0), "epsilon"),
    (lambda: Arete(0.1, 0.5, 0.1), "alpha"),
    (lambda: ShareSum(0.1, 0.5, 0.5, 0.1), "a"),
    (lambda: MixtureBoundary(1e-6, 1.0), "rho"),
    (lambda: LinearBoundary.calibrated(0.3, delta=1e-6), "a"),
]


@pytest.mark.parametrize(("make", "attr"), OBJECTS)
def test_parameters_cannot_be_changed(make, attr):
    obj = make()
    before = getattr(obj, attr)
    with pytest.raises(AttributeError, match="immutable"):
        setattr(obj, attr, 4.0)
    with pytest.raises(AttributeError, match="immutable"):
        obj.anything_new = 1
    with pytest.raises(AttributeError, match="immutable"):
        delattr(obj, attr)
    assert getattr(obj, attr) == before


@pytest.mark.parametrize(("make", "attr"), OBJECTS)
def test_copies_and_pickles_stay_equal_and_frozen(make, attr):
    obj = make()
    for twin in (copy.deepcopy(obj), pickle.loads(pickle.dumps(obj))):
        assert getattr(twin, attr) == getattr(obj, attr)
        with pytest.raises(AttributeError, match="immutable"):
            setattr(twin, attr, 4.0)


def test_stopping_result_is_complete_at_construction():
    task = default_task("mean", n=200, rng=1)
    result = stopping_experiment(task, target=0.25, epsilons=np.geomspace(0.2, 3.0, 8), trials=20, rng=2)
    assert {("bm", "RAT"), ("lnr", "AboveThreshold"), ("doubling", "holdout")} <= set(result.ex_post)
    assert set(result.ex_post) == set(result.stop_index)
    with pytest.raises(AttributeError):
        result.ex_post = {}
