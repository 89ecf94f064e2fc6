"""Edges of the public core API (not Arete, experiments or tasks): a seeded sweep of nasty inputs.

Every call either returns finite values (or a documented +-inf, listed per entry point), with no
NaN anywhere, or raises ValueError/TypeError whose message names a parameter that was given a
nasty value. Any other exception fails. Inputs are scalars or tiny arrays, so each call is cheap.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noisecore import Arete
from noisecore.boundaries import LinearBoundary, MixtureBoundary, gaussian_pdp_variance, gaussian_variance
from noisecore.brownian import BrownianMechanism, brownian_privacy_loss
from noisecore.distributions import Gaussian, Laplace, Staircase
from noisecore.dropout import (
    ShareSum,
    arete_dropout,
    dropout_curves,
    dropout_fractions,
    dropout_point,
    dropout_table,
    laplace_dropout,
)
from noisecore.laplace_reduction import LaplaceNoiseReduction, LaplaceProcess, koufogiannis_chain
from noisecore.skellam import SkellamNoiseReduction
from noisecore.threshold import (
    AboveThreshold,
    ReducedAboveThreshold,
    rat_utility_margin,
    simulate_above_threshold_stopping,
    simulate_rat_stopping,
)

NASTY = [
    math.nan,
    math.inf,
    -math.inf,
    0.0,
    -0.0,
    -1.0,
    -1e300,
    1e300,
    1e-300,
    5e-324,
    -5e-324,
    1e308,
    True,
    False,
    "1.0",
    None,
    1 + 2j,
    ["a", "b"],
    np.array([]),
    np.ones((2, 2)),
    np.array([1.0, math.nan]),
    [0.5, math.inf],
    0,
    1,
    -3,
    10**12,
    0.5,
    2.0,
    1e-3,
    0.999,
    40.0,
    800.0,
    np.float64(0.25),
    np.int64(2),
]
BOUND = LinearBoundary.calibrated(0.5, delta=1e-6)
ARETE = Arete(0.05, 0.3, 1.0)
SWEEP = settings(
    derandomize=True,
    deadline=None,
    max_examples=40,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _problems(value, allow: str, where="result") -> list[str]:
    """NaN anywhere, or an infinity whose sign is not in ``allow`` ("+", "-", "+-" or "")."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _problems(v, allow, f"{where}[{k!r}]")]
    if isinstance(value, (tuple, list)):
        return [p for i, v in enumerate(value) for p in _problems(v, allow, f"{where}[{i}]")]
    if isinstance(value, (numbers.Number, np.ndarray, np.generic)) and not isinstance(value, (bool, np.bool_)):
        arr = np.asarray(value)
        if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.complexfloating)):
            return []
        out = []
        if np.isnan(arr).any():
            out.append(f"NaN in {where}")
        if "+" not in allow and np.isposinf(np.real(arr)).any():
            out.append(f"+inf in {where}")
        if "-" not in allow and np.isneginf(np.real(arr)).any():
            out.append(f"-inf in {where}")
        return out
    return []


def outcome(call, nasty_names, allow=""):
    """Run ``call``: 'ok', or 'named' (a clean error naming a nasty parameter); else fail."""
    try:
        result = call()
    except (ValueError, TypeError) as exc:
        message = str(exc)
        assert any(name in message for name in nasty_names), (
            f"{type(exc).__name__} does not name any of {nasty_names}: {message!r}"
        )
        return "named"
    problems = _problems(result, allow)
    assert not problems, f"{problems} (nasty: {nasty_names})"
    return "ok"


# --- entry points ------------------------------------------------------------------------------
# (label, function, valid keyword arguments, allowed infinities)
FUNCTIONS = [
    ("Laplace", Laplace, {"scale": 1.0}, ""),
    ("Laplace.calibrated", Laplace.calibrated, {"epsilon": 1.0, "sensitivity": 1.0}, ""),
    ("Gaussian", Gaussian, {"sigma": 1.0}, ""),
    ("Gaussian.calibrated", Gaussian.calibrated, {"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0}, ""),
    (
        "Gaussian.calibrated classic",
        Gaussian.calibrated,
        {"epsilon": 0.5, "delta": 1e-5, "sensitivity": 1.0, "method": "classic"},
        "",
    ),
    ("Staircase", Staircase, {"epsilon": 1.0, "sensitivity": 1.0, "gamma": None}, ""),
    ("Staircase.optimal_gamma", Staircase.optimal_gamma, {"epsilon": 1.0, "criterion": "abs"}, ""),
    ("MixtureBoundary", MixtureBoundary, {"delta": 1e-6, "rho": 1.0, "sensitivity": 1.0}, ""),
    ("LinearBoundary", LinearBoundary, {"delta": 1e-6, "a": 0.1, "sensitivity": 1.0}, ""),
    (
        "LinearBoundary.calibrated",
        LinearBoundary.calibrated,
        {"epsilon": 0.5, "delta": 1e-6, "sensitivity": 1.0},
        "",
    ),
    ("gaussian_variance", gaussian_variance, {"epsilon": 0.5, "delta": 1e-6, "sensitivity": 1.0}, ""),
    ("gaussian_pdp_variance", gaussian_pdp_variance, {"epsilon": 0.5, "delta": 1e-6, "sensitivity": 1.0}, ""),
    (
        "BrownianMechanism",
        lambda **kw: BrownianMechanism(kw.pop("value"), **kw),
        {"value": [1.0, 2.0], "sensitivity": 1.0, "boundary": BOUND, "rng": 1},
        "",
    ),
    ("brownian_privacy_loss", brownian_privacy_loss, {"shift": [1.0, 0.0], "noise": [0.3, -0.2], "time": 2.0}, ""),
    ("LaplaceProcess", lambda **kw: LaplaceProcess(kw.pop("eta"), **kw), {"eta": 0.5, "dim": 2, "rng": 1}, ""),
    (
        "koufogiannis_chain",
        lambda **kw: koufogiannis_chain(kw.pop("times"), **kw),
        {"times": [0.5, 1.0, 2.0], "dim": 1, "size": 3, "rng": 1},
        "",
    ),
    (
        "LaplaceNoiseReduction",
        lambda **kw: LaplaceNoiseReduction(kw.pop("value"), **kw),
        {"value": [1.0, 2.0], "sensitivity": 1.0, "epsilon_max": 2.0, "rng": 1},
        "",
    ),
    (
        "SkellamNoiseReduction",
        lambda **kw: SkellamNoiseReduction(kw.pop("value"), **kw),
        {"value": [1.0, 2.0], "rate": 1.0, "rng": 1},
        "",
    ),
    (
        "AboveThreshold",
        lambda **kw: AboveThreshold(kw.pop("threshold"), **kw),
        {"threshold": 1.0, "sensitivity": 1.0, "epsilon": 1.0, "rng": 1},
        "",
    ),
    (
        "ReducedAboveThreshold",
        lambda **kw: ReducedAboveThreshold(kw.pop("threshold"), **kw),
        {"threshold": 1.0, "sensitivity": 1.0, "epsilon_max": 2.0, "rng": 1},
        "",
    ),
    (
        "rat_utility_margin",
        rat_utility_margin,
        {"epsilons": [0.5, 1.0], "sensitivity": 1.0, "gamma": 0.1, "weights": None},
        "",
    ),
    (
        "simulate_rat_stopping",
        lambda **kw: simulate_rat_stopping(
            kw.pop("utilities"), epsilons=kw.pop("epsilons"), threshold=kw.pop("threshold"), **kw
        ),
        {
            "utilities": [0.1, 0.5],
            "epsilons": [0.5, 1.0],
            "threshold": 0.4,
            "sensitivity": 1.0,
            "epsilon_max": 1.0,
            "runs": 3,
            "rng": 1,
        },
        "",
    ),
    (
        "simulate_above_threshold_stopping",
        lambda **kw: simulate_above_threshold_stopping(kw.pop("utilities"), threshold=kw.pop("threshold"), **kw),
        {"utilities": [0.1, 0.5], "threshold": 0.4, "sensitivity": 1.0, "epsilon": 1.0, "runs": 3, "rng": 1},
        "",
    ),
    ("ShareSum", ShareSum, {"a": 0.5, "theta": 0.3, "b": 0.8, "lam": 1.0}, ""),
    ("laplace_dropout", laplace_dropout, {"scale": 1.0, "fraction": 0.5}, ""),
    ("arete_dropout", arete_dropout, {"arete": ARETE, "fraction": 0.5}, ""),
    ("dropout_fractions", dropout_fractions, {"n": 10, "fractions_present": [1.0, 0.5]}, ""),
    ("dropout_table", dropout_table, {"present": [1.0, 0.5], "points": [[1, 2, 3, 4], [5, 6, 7, 8]]}, ""),
]
SLOW_FUNCTIONS = [
    (
        "MixtureBoundary.calibrated",
        MixtureBoundary.calibrated,
        {"epsilon": 0.5, "delta": 1e-6, "sensitivity": 1.0},
        "",
    ),
    (
        "dropout_point",
        dropout_point,
        {"alpha": 0.05, "theta": 0.3, "lam": 1.0, "fraction": 0.5, "sensitivity": 1.0, "epsilon_full": None},
        "+",
    ),
    (
        "dropout_curves",
        dropout_curves,
        {"arete": ARETE, "n": 4, "fractions_present": [1.0, 0.5], "sensitivity": 1.0},
        "+",
    ),
]

NOISE_METHODS = [
    ("logpdf", {"x": 0.5}, "-"),
    ("pdf", {"x": 0.5}, ""),
    ("sf", {"x": 0.5}, ""),
    ("cdf", {"x": 0.5}, ""),
    ("ppf", {"q": 0.3}, "+-"),
    ("sample", {"size": 3, "rng": 1}, ""),
    ("std", {}, ""),
    ("var", {}, ""),
    ("mean_abs", {}, ""),
    ("mse", {}, ""),
    ("privacy_loss", {"distance": 1.0}, ""),
]
BOUNDARY_METHODS = [
    ("epsilon", {"t": 2.0}, ""),
    ("__call__", {"t": 2.0}, ""),
    ("calibrated_time", {"epsilon": 0.8}, ""),
    ("floor", {}, ""),
]


def _released(mech, *args):
    mech.release(*args)
    return mech


# (label, factory of valid keyword arguments, the object's methods, allowed infinities per method)
OBJECTS = [
    ("Laplace", Laplace, {"scale": 1.0}, NOISE_METHODS),
    (
        "Gaussian",
        Gaussian,
        {"sigma": 1.0},
        [
            *NOISE_METHODS[:-1],
            ("privacy_loss", {"distance": 1.0}, "+"),
            ("delta", {"epsilon": 1.0, "sensitivity": 1.0}, ""),
        ],
    ),
    ("Staircase", Staircase, {"epsilon": 1.0, "sensitivity": 1.0, "gamma": 0.3}, NOISE_METHODS),
    ("MixtureBoundary", MixtureBoundary, {"delta": 1e-6, "rho": 1.0, "sensitivity": 1.0}, BOUNDARY_METHODS),
    ("LinearBoundary", LinearBoundary, {"delta": 1e-6, "a": 0.1, "sensitivity": 1.0}, BOUNDARY_METHODS),
    (
        "BrownianMechanism",
        lambda **kw: _released(BrownianMechanism(kw.pop("value"), boundary=BOUND, **kw), 50.0),
        {"value": [1.0, 2.0], "sensitivity": 1.0, "rng": 1},
        [
            ("release", {"time": 3.0}, ""),
            ("release", {"epsilon": 0.9}, ""),
            ("path", {"times": [1.0, 60.0]}, ""),
            ("realized_privacy_loss", {"neighbor": [1.5, 2.0]}, ""),
            ("worst_neighbor_loss", {}, ""),
        ],
    ),
    (
        "LaplaceProcess",
        lambda **kw: LaplaceProcess(kw.pop("eta"), **kw),
        {"eta": 0.5, "dim": 2, "rng": 1},
        [("values", {"times": [0.5, 3.0]}, "")],
    ),
    (
        "LaplaceNoiseReduction",
        lambda **kw: _released(LaplaceNoiseReduction(kw.pop("value"), epsilon_max=4.0, **kw), 0.5),
        {"value": [1.0, 2.0], "sensitivity": 1.0, "rng": 1},
        [("release", {"epsilon": 1.0}, "")],
    ),
    (
        "SkellamNoiseReduction",
        lambda **kw: _released(SkellamNoiseReduction(kw.pop("value"), **kw), 50.0),
        {"value": [1.0, 2.0], "rate": 1.0, "rng": 1},
        [("release", {"time": 3.0}, "")],
    ),
    (
        "AboveThreshold",
        lambda **kw: AboveThreshold(kw.pop("threshold"), **kw),
        {"threshold": 1e9, "sensitivity": 1.0, "epsilon": 1.0, "rng": 1},
        [("check", {"utility": 0.5}, "")],
    ),
    (
        "ReducedAboveThreshold",
        lambda **kw: ReducedAboveThreshold(kw.pop("threshold"), **kw),
        {"threshold": 1e9, "sensitivity": 1.0, "epsilon_max": 2.0, "rng": 1},
        [("check", {"utility": 0.5, "epsilon": 1.0}, "")],
    ),
]


def _perturbed(data, params):
    names = data.draw(st.lists(st.sampled_from(sorted(params)), min_size=1, max_size=2, unique=True), label="nasty")
    kwargs = dict(params)
    for name in names:
        kwargs[name] = data.draw(st.sampled_from(NASTY), label=name)
    return names, kwargs


def _call(func, kwargs):
    return lambda: func(**kwargs)


@pytest.mark.parametrize(("label", "func", "params", "allow"), FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
@SWEEP
@given(data=st.data())
def test_functions_at_the_edges(label, func, params, allow, data):
    names, kwargs = _perturbed(data, params)
    outcome(_call(func, kwargs), names, allow)


@pytest.mark.sweep
@pytest.mark.parametrize(("label", "func", "params", "allow"), SLOW_FUNCTIONS, ids=[f[0] for f in SLOW_FUNCTIONS])
@settings(SWEEP, max_examples=15)
@given(data=st.data())
def test_slow_functions_at_the_edges(label, func, params, allow, data):
    names, kwargs = _perturbed(data, params)
    outcome(_call(func, kwargs), names, allow)


# below a total shape of 1/2 the density (and so the privacy loss) is infinite at 0
SHARE_SUM = (
    "ShareSum",
    ShareSum,
    {"a": 0.5, "theta": 0.3, "b": 0.8, "lam": 1.0},
    [
        ("logpdf", {"x": 0.5}, "+-"),
        ("pdf", {"x": 0.5}, "+"),
        *NOISE_METHODS[2:-1],
        ("privacy_loss", {"distance": 1.0}, "+"),
        ("characteristic_function", {"s": 1.0}, ""),
    ],
)
METHOD_CASES = [(label, factory, params, method) for label, factory, params, methods in OBJECTS for method in methods]
SLOW_METHOD_CASES = [(SHARE_SUM[0], SHARE_SUM[1], SHARE_SUM[2], method) for method in SHARE_SUM[3]]


@pytest.mark.parametrize(
    ("label", "factory", "params", "method"),
    METHOD_CASES,
    ids=[f"{c[0]}.{c[3][0]}-{'-'.join(c[3][1])}" for c in METHOD_CASES],
)
@SWEEP
@given(data=st.data())
def test_methods_at_the_edges(label, factory, params, method, data):
    """The object is built from valid or nasty parameters (a nasty one may be rejected, cleanly),
    then the method is called with nasty arguments."""
    _method_case(factory, params, method, data)


@pytest.mark.sweep
@pytest.mark.parametrize(
    ("label", "factory", "params", "method"), SLOW_METHOD_CASES, ids=[f"{c[0]}.{c[3][0]}" for c in SLOW_METHOD_CASES]
)
@settings(SWEEP, max_examples=12)
@given(data=st.data())
def test_share_sum_methods_at_the_edges(label, factory, params, method, data):
    """As above for the dropout share sums, whose tails are quadratures (a fraction of a second a call)."""
    _method_case(factory, params, method, data)


def _method_case(factory, params, method, data):
    name, args, allow = method
    kwargs = dict(params)
    nasty_params = data.draw(st.lists(st.sampled_from(sorted(params)), max_size=1), label="nasty parameters")
    for p in nasty_params:
        kwargs[p] = data.draw(st.sampled_from(NASTY), label=p)
    try:
        obj = factory(**kwargs)
    except (ValueError, TypeError) as exc:
        assert any(p in str(exc) for p in nasty_params), f"{type(exc).__name__}: {exc}"
        return
    if args:
        names, call_kwargs = _perturbed(data, args)
    else:
        names, call_kwargs = [], {}
    bound = getattr(obj, name)
    outcome(_call(bound, call_kwargs), names + nasty_params, allow)
