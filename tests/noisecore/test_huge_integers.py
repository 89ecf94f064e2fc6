"""Huge Python integers (past the float range, past Python's 4,300-digit str limit) are refused by
name like any other out-of-range value: never an OverflowError or an unnamed ValueError.

The fast sweep passes each huge integer to each parameter of the edge tables' entry points, one at a
time; the slow one runs the edge audit (benchmarks/fuzz_edges.py), which covers every public
callable of noisecore, with only these values.
"""

from __future__ import annotations

import importlib.util
import inspect
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from noisecore import Arete, Laplace

from . import test_edges, test_edges_experiments
from .test_edges import outcome

HUGE = [2**1024, 10**400, -(10**400), 10**5000]
ARETE_CASES = [
    (
        "Arete",
        lambda **kw: Arete(kw.pop("alpha"), kw.pop("theta"), kw.pop("lam")),
        {"alpha": 0.05, "theta": 0.3, "lam": 1.0},
    ),
    ("Arete.calibrated", Arete.calibrated, {"epsilon": 6.0, "sensitivity": 1.0}),
    ("Arete.from_lemma3", Arete.from_lemma3, {"epsilon": 25.0, "sensitivity": 1.0}),
    ("Arete.lemma3_applies", Arete.lemma3_applies, {"epsilon": 25.0, "sensitivity": 1.0}),
    ("Arete.shares", test_edges.ARETE.shares, {"n": 3}),
    ("Arete.sample_shares", test_edges.ARETE.sample_shares, {"n": 3, "size": 2, "rng": 0}),
    ("Arete.characteristic_function", test_edges.ARETE.characteristic_function, {"s": 1.0}),
]


def _method(factory, params, name):
    return lambda **kw: getattr(factory(**params), name)(**kw)


CASES = (
    [(label, func, params) for label, func, params, _ in test_edges.FUNCTIONS]
    + [(label, func, params) for label, func, params in test_edges_experiments.FUNCTIONS]
    + [(label, factory, params) for label, factory, params, _ in test_edges.OBJECTS]
    + [
        (f"{label}.{name}", _method(factory, params, name), args)
        for label, factory, params, methods in test_edges.OBJECTS
        for name, args, _ in methods
        if args
    ]
    + [
        (f"Arete.{name}", getattr(test_edges.ARETE, name), args)
        for name, args, _ in test_edges.NOISE_METHODS
        if args and name != "privacy_loss"  # a huge distance is refused before any quadrature
    ]
    + ARETE_CASES
)


@pytest.mark.parametrize(("label", "func", "params"), CASES, ids=[c[0] for c in CASES])
def test_huge_integers_are_refused_by_name(label, func, params):
    for name in params:
        for value in HUGE:
            outcome(lambda name=name, value=value: func(**{**params, name: value}), [name], allow="+-")


def test_arete_privacy_loss_refuses_a_huge_distance_by_name():
    for value in HUGE:
        with pytest.raises(ValueError, match="distance"):
            test_edges.ARETE.privacy_loss(value)


def test_messages_show_a_huge_integer_by_its_size():
    with pytest.raises(ValueError, match=r"scale must be in \[1e-100, 1e\+100\], got an integer of about 5001 digits"):
        Laplace(10**5000)
    with pytest.raises(ValueError, match=r"theta must be in .*got a negative integer of about 401 digits"):
        Arete(0.05, -(10**400), 1.0)
    with pytest.raises(ValueError, match=r"x must hold finite real numbers"):
        Laplace(1.0).pdf([1, 10**400])


def test_integers_past_int64_within_the_float_range_are_numbers():
    assert Laplace(1.0).pdf([0, 2**64]) == pytest.approx([0.5, 0.0])
    assert Laplace(2**64).scale == float(2**64)


def _fuzz_module():
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "fuzz_edges.py"
    spec = importlib.util.spec_from_file_location("fuzz_edges_for_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.sweep
def test_every_public_callable_refuses_huge_integers_by_name(monkeypatch, request):
    """The edge audit's enumeration (every public function, constructor, method and record of
    noisecore) with the huge integers alone: each call is a clean error or a normal result."""
    fuzz = _fuzz_module()
    request.addfinalizer(lambda: shutil.rmtree(fuzz.TMP, ignore_errors=True))
    monkeypatch.chdir(fuzz.TMP)
    monkeypatch.setattr(fuzz, "TIMEOUT", 0)  # no alarm: tests take no wall-clock limits
    monkeypatch.setattr(fuzz, "NASTY", [(f"huge{i}", lambda v=v: v) for i, v in enumerate(HUGE)])
    audit = fuzz.Audit()
    for module_name in fuzz.MODULES:
        short = module_name.removeprefix("noisecore.")
        for name, obj in fuzz._public(module_name):
            qualified = f"{obj.__module__}.{name}"
            if inspect.isclass(obj):
                fuzz._class_entries(audit, short, obj)
            elif qualified in fuzz.FUNCTIONS:
                audit.fuzz(short, name, lambda obj=obj: obj, inspect.signature(obj), fuzz.FUNCTIONS[qualified])
    assert not audit.baseline_failures
    callables = {o.call.split("(")[0] for o in audit.outcomes}
    assert len(callables) > 130 and len(audit.outcomes) > 1300
    bad = [f"{o.call}: {o.category}: {o.detail}" for o in audit.outcomes if o.category in fuzz.BAD]
    assert not bad, "\n".join(bad[:20])
    assert not any("OverflowError" in o.detail for o in audit.outcomes)
    assert np.mean([o.category == "clean error" for o in audit.outcomes]) > 0.8
