"""Edge audit of the public core API: every public callable, one nasty argument at a time.

Enumerates the public functions and classes of ``noisecore``'s public modules (names without a
leading underscore whose ``__module__`` is the module, or a submodule for the ``noisecore.tasks``
package), the constructors, and each public method and property of a valid instance. Every
callable has a hand-written baseline of valid arguments (``FUNCTIONS``, ``CONSTRUCTORS``,
``METHODS`` below); each parameter in turn is replaced by each value of ``NASTY`` (NaN, +-inf, 0,
-0.0, negatives, 1e300, denormals, wrong types, empty and 2-d arrays, arrays holding NaN or inf,
huge ints up to 10**5000, past the float range and past Python's 4,300-digit str limit, and
ordinary values) while the others stay valid. Each call is classified as

- clean error: ValueError/TypeError whose message names the parameter given the nasty value;
- error not naming the parameter: ValueError/TypeError whose message does not;
- other exception: any other exception type (MemoryError included: see the memory cap below);
- timeout: no answer within ``TIMEOUT`` seconds (SIGALRM);
- accepted invalid: returned although the value is unambiguously invalid for a parameter that
  takes numbers (NaN or an array holding NaN, a str or a list of str where no str is taken, None
  where None is not taken, a complex number), or a NaN stored as given in a returned record;
- silent NaN/inf: the result (numbers, arrays, tuples, lists, dicts, dataclass fields and a
  returned object's public attributes, a few levels deep) holds NaN, or +-inf while no input was
  infinite, where the baseline call's result did not;
- inf from inf input: +-inf in the result only where an input was infinite;
- documented NaN/inf: NaN/inf only where the valid baseline call has them too, or where a
  docstring promises them (``DOCUMENTED``: ppf at q = 0 or 1, a log density that underflows...);
- correct result: anything else that returned.

Calls with a scalar nasty value over ``SLOW`` seconds are also listed as slow (an extra flag).
Plain result records (dataclasses without validation) are counted, and shown apart as well.
Calls run with fds 0-2 on /dev/null (an integer "path" opens a descriptor) in a temporary
working directory, under an address-space cap so a huge size fails with MemoryError instead of
exhausting the machine. Everything is seeded; only durations vary from run to run.

Run: python benchmarks/fuzz_edges.py [--verbose]   (a few minutes; --verbose adds progress lines and
the list of documented NaN/inf results)
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import math
import numbers
import os
import re
import resource
import shutil
import signal
import sys
import tempfile
import time
import warnings
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import noisecore
from noisecore import experiments as ex
from noisecore import frontier as fr
from noisecore import tasks as tk
from noisecore.arete import Arete
from noisecore.boundaries import LinearBoundary

MODULES = [
    "noisecore",
    "noisecore.distributions",
    "noisecore.arete",
    "noisecore.boundaries",
    "noisecore.brownian",
    "noisecore.laplace_reduction",
    "noisecore.skellam",
    "noisecore.threshold",
    "noisecore.dropout",
    "noisecore.frontier",
    "noisecore.experiments",
    "noisecore.tasks",
]
TIMEOUT = 20  # seconds per call
SLOW = 1.0  # seconds: a scalar-input call above this is listed as slow
MEMORY_HEADROOM = 6 * 2**30  # bytes of address space allowed beyond what the imports use

# (label, factory): a fresh value per call, so a callee that mutates an array cannot leak it
NASTY = [
    ("nan", lambda: math.nan),
    ("inf", lambda: math.inf),
    ("-inf", lambda: -math.inf),
    ("0.0", lambda: 0.0),
    ("-0.0", lambda: -0.0),
    ("-1.0", lambda: -1.0),
    ("-3", lambda: -3),
    ("1e300", lambda: 1e300),
    ("-1e300", lambda: -1e300),
    ("1e-300", lambda: 1e-300),
    ("5e-324", lambda: 5e-324),
    ("-5e-324", lambda: -5e-324),
    ("1e308", lambda: 1e308),
    ("'1.0'", lambda: "1.0"),
    ("None", lambda: None),
    ("(1+2j)", lambda: 1 + 2j),
    ("['a', 'b']", lambda: ["a", "b"]),
    ("True", lambda: True),
    ("False", lambda: False),
    ("array([])", lambda: np.array([])),
    ("ones((2, 2))", lambda: np.ones((2, 2))),
    ("array([1.0, nan])", lambda: np.array([1.0, math.nan])),
    ("array([1.0, inf])", lambda: np.array([1.0, math.inf])),
    ("10**12", lambda: 10**12),
    ("2**64", lambda: 2**64),
    ("-2**64", lambda: -(2**64)),
    ("2**1024", lambda: 2**1024),
    ("10**400", lambda: 10**400),
    ("-10**400", lambda: -(10**400)),
    ("10**5000", lambda: 10**5000),
    ("0", lambda: 0),
    ("1", lambda: 1),
    ("0.5", lambda: 0.5),
    ("2.0", lambda: 2.0),
]
INFINITE_INPUTS = {"inf", "-inf", "array([1.0, inf])"}
ARRAY_INPUTS = {"['a', 'b']", "array([])", "ones((2, 2))", "array([1.0, nan])", "array([1.0, inf])"}

# --- shared valid objects (all seeded) -------------------------------------------------------------
TMP = Path(tempfile.mkdtemp(prefix="fuzz_edges_"))
BOUND = LinearBoundary.calibrated(0.5, delta=1e-6)
ARETE = Arete(0.05, 0.3, 1.0)
EPS2 = [0.5, 1.0]  # experiment levels, above the tuned boundary's floor (0.149)
TARGET = 200.0  # a loss every tiny run reaches (30 rows: the noise is large)
X_CLS, Y_CLS = tk.synthetic_classification(40, d=3, rng=0)
X_REG, Y_REG = tk.synthetic_regression(40, d=3, rng=0)
X_MEAN = tk.normalize_rows(np.random.default_rng(0).normal(0.3, 0.3, size=(40, 3))) * 0.9
TASK = ex.default_task("logistic", n=30, rng=0)
CHUNK = ex.experiment_chunk(TASK, epsilons=EPS2, count=2, rng=0, target=TARGET)
RESULT = ex.run_experiment(TASK, epsilons=EPS2, target=TARGET, trials=2, rng=0)
FRONTIER_ROWS = [fr.frontier_row(2.0)]
TABLE_COLUMNS = ["a", "b", "c"]
TABLE_VALUES = np.column_stack(
    [np.random.default_rng(0).normal(size=(40, 2)), np.tile([0.0, 1.0], 20)]
)  # a 40-row table, last column two classes


def _write_fixtures():
    """Small valid data files in the temporary directory (the loaders read paths)."""
    rng = np.random.default_rng(0)
    kdd = []
    for i in range(3):
        fields = [f"{v:.3f}" for v in rng.uniform(0, 5, 42)]
        fields[1:4] = ["tcp", "http", "SF"]
        fields[41] = "normal." if i % 2 else "smurf."
        kdd.append(",".join(fields))
    (TMP / "kdd.csv").write_text("\n".join(kdd) + "\n")
    buzz = [",".join(f"{v:.3f}" for v in rng.uniform(0, 5, 78)) for _ in range(3)]
    (TMP / "buzz.csv").write_text("\n".join(buzz) + "\n")
    fr.write(FRONTIER_ROWS, path=TMP / "frontier.csv")


_write_fixtures()


def _released(obj, *args, **kwargs):
    obj.release(*args, **kwargs)
    return obj


def _checked(obj):
    obj.check(0.5, epsilon=1.0)
    return obj


def _record(obj):
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


# --- the baselines --------------------------------------------------------------------------------
# Each entry: a list of variants; a variant is a dict of valid arguments by parameter name, with an
# optional "_fuzz" list limiting the parameters fuzzed (default: every parameter of the signature).
# Parameters not in a variant keep their defaults while another one is fuzzed.
FUNCTIONS = {
    "noisecore.boundaries.gaussian_variance": [{"epsilon": 0.5, "delta": 1e-6, "sensitivity": 1.0}],
    "noisecore.boundaries.gaussian_pdp_variance": [{"epsilon": 0.5, "delta": 1e-6, "sensitivity": 1.0}],
    "noisecore.brownian.brownian_privacy_loss": [{"shift": [1.0, 0.0], "noise": [0.3, -0.2], "time": 2.0}],
    "noisecore.laplace_reduction.koufogiannis_chain": [{"times": [0.5, 1.0, 2.0], "dim": 1, "size": 3, "rng": 0}],
    "noisecore.threshold.rat_utility_margin": [
        {"epsilons": [0.5, 1.0], "sensitivity": 1.0, "gamma": 0.1, "weights": None}
    ],
    "noisecore.threshold.simulate_rat_stopping": [
        {
            "utilities": [0.1, 0.5],
            "epsilons": [0.5, 1.0],
            "threshold": 0.4,
            "sensitivity": 1.0,
            "epsilon_max": 1.0,
            "runs": 3,
            "rng": 0,
        }
    ],
    "noisecore.threshold.simulate_above_threshold_stopping": [
        {"utilities": [0.1, 0.5], "threshold": 0.4, "sensitivity": 1.0, "epsilon": 1.0, "runs": 3, "rng": 0}
    ],
    "noisecore.dropout.arete_dropout": [{"arete": ARETE, "fraction": 0.5}],
    "noisecore.dropout.laplace_dropout": [{"scale": 1.0, "fraction": 0.5}],
    "noisecore.dropout.dropout_fractions": [{"n": 10, "fractions_present": [1.0, 0.5]}],
    "noisecore.dropout.dropout_point": [
        {"alpha": 0.05, "theta": 0.3, "lam": 1.0, "fraction": 0.5, "sensitivity": 1.0, "epsilon_full": None}
    ],
    "noisecore.dropout.dropout_curves": [{"arete": ARETE, "n": 4, "fractions_present": [1.0, 0.5], "sensitivity": 1.0}],
    "noisecore.dropout.dropout_table": [{"present": [1.0, 0.5], "points": [[1, 2, 3, 4], [5, 6, 7, 8]]}],
    "noisecore.frontier.frontier_row": [{"epsilon": 2.0}],
    "noisecore.frontier.compute": [{"epsilons": [2.0], "progress": None}],
    "noisecore.frontier.write": [{"rows": FRONTIER_ROWS, "path": "out.csv"}],
    "noisecore.frontier.read": [{"path": "frontier.csv"}],
    "noisecore.frontier.load": [{}],
    "noisecore.experiments.default_task": [{"name": "logistic", "n": 30, "lam": 0.05, "rng": 0}],
    "noisecore.experiments.default_epsilons": [{"count": 5, "low": 0.16, "high": 5.0}],
    "noisecore.experiments.pilot_target": [{"task": TASK, "trials": 2, "rng": 0, "tuned_epsilon": 0.3}],
    "noisecore.experiments.bm_noise": [
        {"times_desc": np.array([2.0, 1.0]), "dim": 2, "trials": 3, "rng": np.random.default_rng(0)}
    ],
    "noisecore.experiments.lnr_noise": [
        {"times_desc": np.array([2.0, 1.0]), "dim": 2, "trials": 3, "rng": np.random.default_rng(0)}
    ],
    "noisecore.experiments.first_true": [{"mask": np.array([[False, True], [False, False]])}],
    "noisecore.experiments.root_seed": [{"rng": 0}],
    "noisecore.experiments.chunk_plan": [{"trials": 10, "rng": 0, "chunk_trials": 4}],
    "noisecore.experiments.experiment_chunk": [
        {
            "task": TASK,
            "epsilons": EPS2,
            "count": 2,
            "rng": 0,
            "delta": 1e-6,
            "tuned_epsilon": 0.3,
            "target": TARGET,
            "at_epsilon": 0.5,
        }
    ],
    "noisecore.experiments.combine_chunks": [
        {"task": TASK, "epsilons": EPS2, "chunks": [CHUNK], "delta": 1e-6, "tuned_epsilon": 0.3, "target": TARGET}
    ],
    "noisecore.experiments.run_experiment": [
        {
            "task": TASK,
            "epsilons": EPS2,
            "target": TARGET,
            "trials": 2,
            "delta": 1e-6,
            "tuned_epsilon": 0.3,
            "at_epsilon": 0.5,
            "rng": 0,
            "mapper": None,
            "progress": None,
            "chunk_trials": 25,
        }
    ],
    "noisecore.experiments.tradeoff_experiment": [
        {
            "task": TASK,
            "epsilons": EPS2,
            "trials": 2,
            "delta": 1e-6,
            "tuned_epsilon": 0.3,
            "rng": 0,
            "mapper": None,
            "progress": None,
        }
    ],
    "noisecore.experiments.stopping_experiment": [
        {
            "task": TASK,
            "target": TARGET,
            "epsilons": EPS2,
            "trials": 2,
            "delta": 1e-6,
            "tuned_epsilon": 0.3,
            "at_epsilon": 0.5,
            "rng": 0,
            "mapper": None,
            "progress": None,
        }
    ],
    "noisecore.experiments.planned_chunk": [{"task": TASK, "epsilons": EPS2, "trials": 2, "rng": 0, "index": 0}],
    "noisecore.tasks.data.normalize_rows": [{"X": [[3.0, 4.0], [0.0, 0.0]]}],
    "noisecore.tasks.data.synthetic_classification": [{"n": 20, "d": 3, "rng": 0}],
    "noisecore.tasks.data.synthetic_regression": [{"n": 20, "d": 3, "rng": 0}],
    "noisecore.tasks.data.split": [{"X": X_CLS, "y": Y_CLS, "n_train": 20}],
    "noisecore.tasks.data.read_table": [{"data": b"a,b\n1,2\n3,4\n", "source": "the file"}],
    "noisecore.tasks.data.table_task_data": [
        {
            "names": TABLE_COLUMNS,
            "values": TABLE_VALUES,
            "task": "logistic",
            "target": "c",
            "max_rows": 100,
            "rng": 0,
        }
    ],
    "noisecore.tasks.data.load_kddcup": [{"path": "kdd.csv", "max_rows": None}],
    "noisecore.tasks.data.load_twitter_buzz": [{"path": "buzz.csv", "max_rows": None, "max_popularity": None}],
}
SKIPPED = {
    "noisecore.frontier.main": (
        "not called: it regenerates and overwrites the shipped noisecore/data/frontier.csv whenever argv "
        "is empty or falsy (None, [], False, an empty array), and takes seconds per call"
    ),
}

# Constructors: valid arguments; "instance" builds the object whose methods are fuzzed (a fresh
# one per call for mutable classes) when it differs from the constructor baseline.
NOISE_METHODS = {
    "logpdf": [{"x": 0.5}],
    "pdf": [{"x": 0.5}],
    "sf": [{"x": 0.5}],
    "cdf": [{"x": 0.5}],
    "ppf": [{"q": 0.3}],
    "sample": [{"size": 3, "rng": 0}],
    "privacy_loss": [{"distance": 1.0}],
}
BOUNDARY_METHODS = {"epsilon": [{"t": 2.0}], "__call__": [{"t": 2.0}], "calibrated_time": [{"epsilon": 0.8}]}
TASK_METHODS = {  # "{d}" stands for the task's parameter dimension, "{k}" for its noise dimension
    "release": [{"noise": "zeros k"}],
    "loss": [{"params": "zeros d", "holdout": False}],
    "clipped_loss": [{"params": "zeros d"}],
    "batch_loss": [{"params": "zeros d", "holdout": False, "clip": None}],
}
CONSTRUCTORS = {
    "Laplace": {"args": {"scale": 1.0}},
    "Gaussian": {"args": {"sigma": 1.0}},
    "Staircase": {"args": {"epsilon": 1.0, "sensitivity": 1.0, "gamma": 0.3}},
    "Arete": {"args": {"alpha": 0.05, "theta": 0.3, "lam": 1.0}},
    "AreteShare": {"args": {"alpha": 0.05, "theta": 0.3, "lam": 1.0, "n": 3}},
    "PrivacyBoundary": {"args": {}, "abstract": True},
    "MixtureBoundary": {"args": {"delta": 1e-6, "rho": 1.0, "sensitivity": 1.0}},
    "LinearBoundary": {"args": {"delta": 1e-6, "a": 0.1, "sensitivity": 1.0}},
    "BrownianRelease": {"args": {"time": 1.0, "value": np.array([1.0, 2.0]), "epsilon": 0.5}},
    "BrownianMechanism": {
        "args": {"value": [1.0, 2.0], "sensitivity": 1.0, "boundary": BOUND, "rng": 0},
        "instance": lambda cls: _released(cls([1.0, 2.0], sensitivity=1.0, boundary=BOUND, rng=0), 50.0),
        "mutable": True,
    },
    "LaplaceProcess": {"args": {"eta": 0.5, "dim": 2, "rng": 0}, "mutable": True},
    "LaplaceRelease": {"args": {"epsilon": 1.0, "time": 1.0, "value": np.array([1.0, 2.0])}},
    "LaplaceNoiseReduction": {
        "args": {"value": [1.0, 2.0], "sensitivity": 1.0, "epsilon_max": 2.0, "rng": 0},
        "instance": lambda cls: _released(cls([1.0, 2.0], sensitivity=1.0, epsilon_max=4.0, rng=0), 0.5),
        "mutable": True,
    },
    "SkellamNoiseReduction": {
        "args": {"value": [1.0, 2.0], "rate": 1.0, "rng": 0},
        "instance": lambda cls: _released(cls([1.0, 2.0], rate=1.0, rng=0), 50.0),
        "mutable": True,
    },
    "ThresholdRound": {"args": {"epsilon": 1.0, "noisy_utility": 0.5, "noisy_threshold": 1.0, "above": False}},
    "AboveThreshold": {
        "args": {"threshold": 1.0, "sensitivity": 1.0, "epsilon": 1.0, "rng": 0},
        "instance": lambda cls: cls(1e9, sensitivity=1.0, epsilon=1.0, rng=0),
        "mutable": True,
    },
    "ReducedAboveThreshold": {
        "args": {"threshold": 1.0, "sensitivity": 1.0, "epsilon_max": 2.0, "rng": 0},
        "instance": lambda cls: _checked(cls(1e9, sensitivity=1.0, epsilon_max=2.0, rng=0)),  # a round for ex_post
        "mutable": True,
    },
    "ShareSum": {"args": {"a": 0.5, "theta": 0.3, "b": 0.8, "lam": 1.0}},
    "TradeoffResult": {"args": _record(RESULT.tradeoff)},
    "StoppingResult": {"args": _record(RESULT.stopping)},
    "ExperimentResult": {"args": _record(RESULT)},
    "ChunkResult": {"args": _record(CHUNK)},
    "Task": {"args": {"lam": 0.05}, "abstract": True},
    "LogisticRegressionTask": {
        "args": {"X": X_CLS[:20], "y": Y_CLS[:20], "lam": 0.05, "holdout": (X_CLS[20:], Y_CLS[20:])},
        "mutable": True,
    },
    "RidgeRegressionTask": {
        "args": {"X": X_REG[:20], "y": Y_REG[:20], "lam": 0.05, "holdout": (X_REG[20:], Y_REG[20:])},
        "mutable": True,
    },
    "MeanEstimationTask": {"args": {"X": X_MEAN[:20], "lam": 0.0, "holdout": X_MEAN[20:]}, "mutable": True},
}
METHODS = {
    "Laplace": {**NOISE_METHODS, "calibrated": [{"epsilon": 1.0, "sensitivity": 1.0}]},
    "Gaussian": {
        **NOISE_METHODS,
        "delta": [{"epsilon": 1.0, "sensitivity": 1.0}],
        "calibrated": [{"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0, "method": "analytic"}],
    },
    "Staircase": {**NOISE_METHODS, "optimal_gamma": [{"epsilon": 1.0, "criterion": "abs"}]},
    "Arete": {
        **NOISE_METHODS,
        "calibrated": [{"epsilon": 6.0, "sensitivity": 1.0, "objective": "abs"}],
        "from_lemma3": [{"epsilon": 25.0, "sensitivity": 1.0}],
        "lemma3_applies": [{"epsilon": 25.0, "sensitivity": 1.0}],
        "characteristic_function": [{"s": 1.0}],
        "shares": [{"n": 3}],
        "sample_shares": [{"n": 3, "size": 2, "rng": 0}],
    },
    "AreteShare": {"sample": [{"size": 3, "rng": 0}], "characteristic_function": [{"s": 1.0}]},
    "MixtureBoundary": {**BOUNDARY_METHODS, "calibrated": [{"epsilon": 0.5, "delta": 1e-6, "sensitivity": 1.0}]},
    "LinearBoundary": {**BOUNDARY_METHODS, "calibrated": [{"epsilon": 0.5, "delta": 1e-6, "sensitivity": 1.0}]},
    "BrownianMechanism": {
        # time and epsilon are alternatives: each is fuzzed with the other left out
        "release": [{"time": 3.0, "_fuzz": ["time"]}, {"epsilon": 0.9, "_fuzz": ["epsilon"]}],
        "path": [{"times": [1.0, 60.0]}],
        "realized_privacy_loss": [{"neighbor": [1.5, 2.0]}],
    },
    "LaplaceProcess": {"values": [{"times": [0.5, 3.0]}]},
    "LaplaceNoiseReduction": {"release": [{"epsilon": 1.0}]},
    "SkellamNoiseReduction": {"release": [{"time": 3.0}]},
    "AboveThreshold": {"check": [{"utility": 0.5}]},
    "ReducedAboveThreshold": {
        "check": [{"utility": 0.5, "epsilon": 1.0}],
        "ex_post_epsilon": [{"mechanism_loss": 0.0}],
    },
    "ShareSum": {**NOISE_METHODS, "characteristic_function": [{"s": 1.0}]},
    "LogisticRegressionTask": TASK_METHODS,
    "RidgeRegressionTask": TASK_METHODS,
    "MeanEstimationTask": TASK_METHODS,
}


# --- running one call -----------------------------------------------------------------------------
class CallTimeout(BaseException):
    """Raised by SIGALRM (a BaseException, so a callee's ``except Exception`` cannot swallow it)."""


def _on_alarm(signum, frame):
    raise CallTimeout


SAVED_FDS = {fd: os.dup(fd) for fd in (0, 1, 2)}
DEVNULL = os.open(os.devnull, os.O_RDWR)


@contextlib.contextmanager
def _guarded():
    """fds 0-2 on /dev/null (restored even if the callee closed them) and a SIGALRM timeout."""
    sys.stdout.flush()
    sys.stderr.flush()
    for fd in SAVED_FDS:
        os.dup2(DEVNULL, fd)
    signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        for fd, saved in SAVED_FDS.items():
            os.dup2(saved, fd)


def _fresh(value):
    """A copy of a baseline value, so that a callee mutating it cannot affect later calls."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    return value


def _split_args(sig, kwargs):
    """Positional-or-keyword parameters positionally (in order, while none is skipped), the rest by keyword."""
    args, kw, positional = [], {}, True
    for name, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if name not in kwargs:
            positional = False
            continue
        if positional and param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            args.append(kwargs[name])
        else:
            positional = False
            kw[name] = kwargs[name]
    return args, kw


def _walk(value, where="result", depth=0, attributes=True):
    """(where, "NaN" | "+inf" | "-inf") for every non-finite float found in ``value``."""
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None:
        return []
    if isinstance(value, (numbers.Number, np.ndarray, np.generic)):
        arr = np.asarray(value)
        if arr.dtype.kind not in "fc":
            return []
        found = []
        if np.isnan(arr).any():
            found.append((where, "NaN"))
        if np.isposinf(arr.real).any():
            found.append((where, "+inf"))
        if np.isneginf(arr.real).any():
            found.append((where, "-inf"))
        return found
    if depth >= 3:
        return []
    if isinstance(value, dict):
        items = [(f"{where}[{k!r}]", v) for k, v in value.items()]
    elif isinstance(value, (tuple, list)):
        items = [(f"{where}[{i}]", v) for i, v in enumerate(value[:200])]
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = [(f"{where}.{f.name}", getattr(value, f.name)) for f in dataclasses.fields(value)]
    elif attributes and type(value).__module__.startswith("noisecore"):
        names = set(getattr(value, "__dict__", {}))
        for klass in type(value).__mro__:
            names.update(s for s in getattr(klass, "__slots__", ()) if isinstance(s, str))
        items = [(f"{where}.{n}", getattr(value, n, None)) for n in sorted(names) if not n.startswith("_")]
        return [p for w, v in items for p in _walk(v, w, depth + 1, attributes=False)]
    else:
        return []
    return [p for w, v in items for p in _walk(v, w, depth + 1, attributes)]


def _names(message, name):
    """Does ``message`` name the parameter? Whole words; a one-letter name (``a``, ``n``, ``x``...)
    must look like a parameter (followed by must/is/=/a bracket...), not like the article "a"."""
    if len(name) > 1:
        return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message) is not None
    pattern = rf"(^|[\s(`'\",])({re.escape(name)})(\s+(must|is|has|of|=|<|>|gives)\b|\s*[=<>:)`'\",\[])"
    return re.search(pattern, message) is not None


NUMERIC = re.compile(r"\b(float|int|ArrayLike|FloatArray|NDArray|Size|SeedLike|integer)\b")


def _invalid_reason(label, value, param):
    """Why ``value`` is unambiguously invalid for ``param`` (None if it might be valid). Only
    parameters that take numbers (by their annotation) are judged: a bool flag, a str or an object
    parameter is not."""
    ann = "" if param.annotation is inspect.Parameter.empty else str(param.annotation)
    if not NUMERIC.search(ann):
        return None
    takes_none = "None" in ann or "SeedLike" in ann or param.default is None
    takes_str = bool(re.search(r"\bstr\b", re.sub(r"(Mapping|dict)\[str", "", ann))) or "FileData" in ann
    if label == "nan":
        return "NaN"
    if label == "array([1.0, nan])":
        return "array holding NaN"
    if value is None and not takes_none:
        return "None"
    if label == "'1.0'" and not takes_str:
        return "str"
    if label == "['a', 'b']" and not takes_str:
        return "list of str"
    if isinstance(value, complex) and "complex" not in ann:
        return "complex"
    return None


@dataclasses.dataclass
class Outcome:
    module: str
    call: str
    category: str
    detail: str
    seconds: float
    scalar: bool
    record: bool
    helper: bool
    baseline_seconds: float = 0.0


def _classify_exception(exc, name):
    if isinstance(exc, CallTimeout):
        return "timeout", f"no answer within {TIMEOUT} s"
    text = f"{type(exc).__name__}: {str(exc)[:300]}"
    if isinstance(exc, (ValueError, TypeError)):
        return ("clean error" if _names(str(exc), name) else "error not naming the parameter"), text
    return "other exception", text


def _call(get_target, sig, kwargs):
    """(result or None, exception or None, seconds); the target is built outside the timer."""
    target = get_target()
    args, kw = _split_args(sig, kwargs)
    seconds = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with _guarded():
                start = time.perf_counter()
                try:
                    result = target(*args, **kw)
                finally:
                    seconds = time.perf_counter() - start
            return result, None, seconds
        except (Exception, CallTimeout) as exc:  # MemoryError included
            return None, exc, seconds


class Audit:
    def __init__(self):
        self.outcomes: list[Outcome] = []
        self.baseline_failures: list[str] = []
        self.baseline_calls = 0
        self.skipped: list[tuple[str, str]] = []

    def fuzz(self, module, label, get_target, sig, variants, record=False, helper=False):
        """Baseline call per variant, then one call per (parameter, nasty value)."""
        params = {
            n: p for n, p in sig.parameters.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and n != "self"
        }
        for variant in variants:
            base = {k: v for k, v in variant.items() if k != "_fuzz"}
            fuzzed = variant.get("_fuzz", list(params))
            self.baseline_calls += 1
            result, exc, base_seconds = _call(get_target, sig, {k: _fresh(v) for k, v in base.items()})
            if exc is not None:
                self.baseline_failures.append(f"{label}({_fmt(base)}) -> {type(exc).__name__}: {exc}")
                continue
            base_problems = set(_walk(result))
            for name in fuzzed:
                for value_label, make in NASTY:
                    value = make()
                    kwargs = {k: _fresh(v) for k, v in base.items()}
                    kwargs[name] = value
                    call = f"{label}({name}={value_label})"
                    result, exc, seconds = _call(get_target, sig, kwargs)
                    if exc is not None:
                        category, detail = _classify_exception(exc, name)
                    else:
                        category, detail = self._classify_result(
                            label, result, base_problems, value_label, value, params[name]
                        )
                    scalar = value_label not in ARRAY_INPUTS
                    self.outcomes.append(
                        Outcome(module, call, category, detail, seconds, scalar, record, helper, base_seconds)
                    )

    @staticmethod
    def _classify_result(label, result, base_problems, value_label, value, param):
        name = param.name
        shown = _short(result)
        problems = _walk(result)
        new = [p for p in problems if p not in base_problems and not _documented(label, value_label, p)]
        reason = _invalid_reason(value_label, value, param)
        if reason is not None:
            extra = f"; result has {_fmt_problems(problems)}" if problems else ""
            return "accepted invalid", f"{reason} accepted, returned {shown}{extra}"
        if not problems:
            return "correct result", shown
        echoed = [p for p in new if re.match(rf"result\.{name}($|[.\[])", p[0])]
        if new and len(echoed) == len(new) and value_label in ("nan", "array([1.0, nan])"):
            return "accepted invalid", f"NaN stored as given (field {name}): {shown}"
        if not new:
            return "documented NaN/inf", f"{_fmt_problems(problems)} (documented, or in the baseline too): {shown}"
        if all(kind != "NaN" for _, kind in new) and value_label in INFINITE_INPUTS:
            return "inf from inf input", f"{_fmt_problems(new)}: {shown}"
        return "silent NaN/inf", f"{_fmt_problems(new)}: {shown}"


# NaN/inf that the docstrings promise: (callable, nasty values or None for any, where, kinds, the promise)
DOCUMENTED = [
    (r"\w+\.ppf", {"0.0", "-0.0", "0", "False"}, r"result", {"-inf"}, "ppf: -inf at q = 0"),
    (r"\w+\.ppf", {"1", "True", "ones((2, 2))"}, r"result", {"+inf"}, "ppf: +inf at q = 1"),
    (r"\w+\.logpdf", None, r"result", {"-inf"}, "logpdf: -inf where the density underflows"),
    (r"dropout_point", None, r"result\[[02]\]", {"+inf"}, "an epsilon is inf where the total shape is <= 1/2"),
    (r"\w+", None, r".*\.ex_post\[", {"NaN"}, "ex_post: NaN where the target was never met"),
    (r"\w+", {"None"}, r".*best_check_loss", {"+inf"}, "best_check_loss: inf without a target"),
]


def _documented(label, value_label, problem):
    where, kind = problem
    return any(
        re.fullmatch(func, label)
        and (values is None or value_label in values)
        and re.match(at, where)
        and kind in kinds
        for func, values, at, kinds, _ in DOCUMENTED
    )


def _fmt(kwargs):
    return ", ".join(f"{k}={_short(v, 40)}" for k, v in kwargs.items())


def _fmt_problems(problems):
    return ", ".join(f"{kind} in {where}" for where, kind in problems[:4]) + (" ..." if len(problems) > 4 else "")


def _short(value, width=90):
    with np.printoptions(threshold=6, edgeitems=2, precision=4):
        try:
            text = repr(value)
        except ValueError:  # an int past Python's 4,300-digit str limit, perhaps inside a record
            text = f"<{type(value).__name__}: repr too long>"
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


# --- enumeration ----------------------------------------------------------------------------------
def _public(module_name):
    """Public functions and classes defined in the module (for the tasks package: its submodules)."""
    module = importlib.import_module(module_name)
    found = []
    for name, obj in vars(module).items():
        if name.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        home = getattr(obj, "__module__", "")
        if home == module_name or (module_name == "noisecore.tasks" and home.startswith("noisecore.tasks.")):
            found.append((name, obj))
    return found


def _members(cls):
    """(name, kind) of the public methods and properties, inherited ones included (not object's)."""
    members = []
    for name in sorted(dir(cls)):
        if name.startswith("_") and name != "__call__":
            continue
        owner = next((k for k in cls.__mro__ if name in k.__dict__), object)
        if owner is object:
            continue
        raw = owner.__dict__[name]
        if isinstance(raw, property):
            members.append((name, "property"))
        elif isinstance(raw, (classmethod, staticmethod)):
            members.append((name, "class"))
        elif inspect.isfunction(raw):
            members.append((name, "method"))
    return members


def _construct(cls, kwargs):
    args, kw = _split_args(inspect.signature(cls), kwargs)
    return cls(*args, **kw)


def _resolve(table, obj):
    """Replace the placeholders "zeros d" / "zeros k" by zero vectors of the task's dimensions."""
    sizes = {"zeros d": getattr(obj, "d", 0), "zeros k": getattr(obj, "noise_dim", 0)}
    return {
        name: [
            {k: np.zeros(sizes[v]) if isinstance(v, str) and v in sizes else v for k, v in var.items()} for var in vs
        ]
        for name, vs in table.items()
    }


def _class_entries(audit, module_short, cls):
    cname = cls.__name__
    spec = CONSTRUCTORS.get(cname)
    if spec is None:
        audit.skipped.append((cname, "no baseline in the table"))
        return
    record = dataclasses.is_dataclass(cls) and not hasattr(cls, "__post_init__")
    helper = cname not in getattr(sys.modules[cls.__module__], "__all__", [cname])
    audit.fuzz(module_short, cname, lambda: cls, inspect.signature(cls), [spec["args"]], record, helper)
    if spec.get("abstract"):
        audit.skipped.append(
            (f"{cname} methods", "abstract base (NotImplementedError by design); fuzzed through its subclasses")
        )
        return
    make = spec.get("instance") or (lambda c: _construct(c, spec["args"]))
    if spec.get("mutable"):
        get_obj = lambda: make(cls)  # noqa: E731
    else:
        shared = make(cls)
        get_obj = lambda: shared  # noqa: E731
    table = _resolve(METHODS.get(cname, {}), get_obj())
    for name, kind in _members(cls):
        label = f"{cname}.{name}" if name != "__call__" else f"{cname}()"
        if kind == "property":
            audit.baseline_calls += 1
            try:
                with _guarded():
                    getattr(get_obj(), name)
            except (Exception, CallTimeout) as exc:
                audit.baseline_failures.append(f"{label} (property) -> {type(exc).__name__}: {exc}")
            continue
        if kind == "class":
            get_target = lambda name=name: getattr(cls, name)  # noqa: E731
        else:
            get_target = lambda name=name: getattr(get_obj(), name)  # noqa: E731
        sig = inspect.signature(getattr(cls, name) if kind == "class" else getattr(get_obj(), name))
        variants = table.get(name)
        if variants is None:
            required = [n for n, p in sig.parameters.items() if p.default is inspect.Parameter.empty]
            if required:
                audit.skipped.append((label, f"no baseline in the table for required {required}"))
                continue
            variants = [{}]
        audit.fuzz(module_short, label, get_target, sig, variants, record, helper)
    extra = set(table) - {n for n, _ in _members(cls)}
    for name in sorted(extra):
        audit.skipped.append((f"{cname}.{name}", "in the table but not a public member (stale table entry)"))


def main():
    verbose = "--verbose" in sys.argv[1:]
    started = time.perf_counter()
    home = os.getcwd()
    os.chdir(TMP)
    signal.signal(signal.SIGALRM, _on_alarm)
    used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = used + MEMORY_HEADROOM
    if hard == resource.RLIM_INFINITY or cap < hard:
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    audit = Audit()
    for module_name in MODULES:
        short = module_name.removeprefix("noisecore.")
        for name, obj in _public(module_name):
            qualified = f"{obj.__module__}.{name}"
            if inspect.isclass(obj):
                _class_entries(audit, short, obj)
            elif qualified in SKIPPED:
                audit.skipped.append((name, SKIPPED[qualified]))
            elif qualified in FUNCTIONS:
                helper = name not in getattr(sys.modules[obj.__module__], "__all__", [name])
                audit.fuzz(
                    short, name, lambda obj=obj: obj, inspect.signature(obj), FUNCTIONS[qualified], False, helper
                )
            else:
                audit.skipped.append((name, "no baseline in the table"))
        if verbose:
            print(f"  {module_name}: {len(audit.outcomes)} calls so far, {time.perf_counter() - started:.0f} s")
    os.chdir(home)
    shutil.rmtree(TMP, ignore_errors=True)
    report(audit, time.perf_counter() - started, verbose)


CATEGORIES = [
    "clean error",
    "correct result",
    "documented NaN/inf",
    "inf from inf input",
    "error not naming the parameter",
    "other exception",
    "timeout",
    "silent NaN/inf",
    "accepted invalid",
]
BAD = ["error not naming the parameter", "other exception", "timeout", "silent NaN/inf", "accepted invalid"]


def report(audit, elapsed, verbose=False):
    outs = audit.outcomes
    slow = [o for o in outs if o.scalar and o.seconds > SLOW and o.category != "timeout"]
    columns = [
        ("all", outs),
        ("excl. records", [o for o in outs if not o.record]),
        ("excl. records, helpers", [o for o in outs if not (o.record or o.helper)]),
    ]
    callables = {o.call.split("(")[0] for o in outs}
    print(
        f"noisecore {noisecore.__version__}: {len(outs)} fuzzed calls of {len(callables)} callables "
        f"({len(NASTY)} nasty values per parameter), {audit.baseline_calls} baseline calls"
    )
    print(f"{'category':32s}" + "".join(f"{name:>24s}" for name, _ in columns))
    for cat in CATEGORIES:
        print(f"{cat:32s}" + "".join(f"{sum(o.category == cat for o in group):24d}" for _, group in columns))
    print(f"{'slow (scalar input, > 1 s)':32s}" + "".join(f"{sum(o in slow for o in g):24d}" for _, g in columns))
    print(f"{'total':32s}" + "".join(f"{len(group):24d}" for _, group in columns))
    print(f"records (plain dataclasses, no validation): {sorted({o.call.split('(')[0] for o in outs if o.record})}")
    print(
        "helpers (public names missing from their module's __all__): "
        f"{sorted({o.call.split('(')[0] for o in outs if o.helper})}"
    )
    print(f"baseline calls with valid arguments: {audit.baseline_calls}, failed: {len(audit.baseline_failures)}")
    for line in audit.baseline_failures:
        print(f"  BASELINE FAILED: {line}")

    print("\nper module:")
    short = {
        "clean error": "clean",
        "correct result": "ok",
        "documented NaN/inf": "doc-nan",
        "inf from inf input": "inf<-inf",
        "error not naming the parameter": "unnamed",
        "other exception": "other",
        "timeout": "timeout",
        "silent NaN/inf": "silent",
        "accepted invalid": "accepted",
    }
    print(f"  {'module':20s} {'calls':>6s} " + " ".join(f"{short[c]:>8s}" for c in CATEGORIES) + f" {'slow':>6s}")
    by_module = defaultdict(list)
    for o in outs:
        by_module[o.module].append(o)
    for module, group in by_module.items():
        counts = Counter(o.category for o in group)
        n_slow = sum(1 for o in slow if o.module == module)
        print(f"  {module:20s} {len(group):6d} " + " ".join(f"{counts[c]:8d}" for c in CATEGORIES) + f" {n_slow:6d}")

    print("\nskipped entry points:" if audit.skipped else "\nskipped entry points: none")
    for name, why in audit.skipped:
        print(f"  {name}: {why}")

    listed = BAD + ["inf from inf input"] + (["documented NaN/inf"] if verbose else [])
    for cat in listed:
        group = [o for o in outs if o.category == cat]
        print(f"\n== {cat}: {len(group)}")
        for o in group:
            tag = (" [record]" if o.record else "") + (" [helper]" if o.helper else "")
            print(f"  {o.call} -> {o.detail}{tag}")
    print(f"\n== slow (scalar input, over {SLOW:g} s): {len(slow)}")
    for o in sorted(slow, key=lambda o: -o.seconds):
        also = ", baseline also slow" if o.baseline_seconds > SLOW else ""
        print(
            f"  {o.call} -> {o.seconds:.2f} s (baseline {o.baseline_seconds:.2f} s{also}), "
            f"{o.category}: {o.detail[:100]}"
        )
    print(f"\nelapsed: {elapsed:.1f} s")


if __name__ == "__main__":
    main()
