"""Edges of the experiments, tasks and frontier APIs: a seeded sweep of nasty inputs.

Every call either returns finite values (NaN only where documented: the Lemma 3 columns of a
frontier row outside its range), or raises ValueError/TypeError whose message names a parameter
that was given a nasty value. Any other exception fails. Data and trial counts are tiny, so each
call is cheap; the frontier rows (a fraction of a second each) are marked slow.
"""

from __future__ import annotations

import math
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noisecore import frontier
from noisecore.experiments import (
    bm_noise,
    chunk_plan,
    combine_chunks,
    default_epsilons,
    default_task,
    experiment_chunk,
    first_true,
    lnr_noise,
    pilot_target,
    planned_chunk,
    root_seed,
    run_experiment,
    stopping_experiment,
    tradeoff_experiment,
)
from noisecore.tasks import (
    LogisticRegressionTask,
    MeanEstimationTask,
    RidgeRegressionTask,
    load_kddcup,
    load_twitter_buzz,
    normalize_rows,
    split,
    synthetic_classification,
    synthetic_regression,
    table_task_data,
)

from .test_edges import NASTY, SWEEP, _perturbed, outcome

TASK = default_task("logistic", n=20, rng=0)
EPS2 = [0.5, 1.0]
TARGET = 1.0
CHUNK = experiment_chunk(TASK, epsilons=EPS2, count=2, rng=0, target=1e4)
X_CLS, Y_CLS = synthetic_classification(12, d=3, rng=0)
X_REG, Y_REG = synthetic_regression(12, d=3, rng=0)
NAMES = ["a", "b", "label"]
VALUES = np.column_stack([np.arange(40.0), np.arange(40.0) ** 0.5, np.arange(40) % 2])
FRONTIER_ROW = {name: 1.0 for name in frontier.COLUMNS}
SHIPPED = Path(frontier.__file__).parent / "data" / "frontier.csv"  # read only


def _without_lemma3(rows):
    """Frontier rows without the Lemma 3 columns, documented NaN where Lemma 3 does not apply."""
    if isinstance(rows, dict):
        return {k: v for k, v in rows.items() if not k.startswith("lemma3")}
    return [_without_lemma3(row) for row in rows]


def _first(func, first):
    """``func`` called with the argument ``first`` positionally, the rest by keyword."""

    def call(**kwargs):
        return func(kwargs.pop(first), **kwargs)

    return call


def _result_values(result):
    """The numeric content of experiment results and tasks, for the NaN/inf check."""
    if hasattr(result, "tradeoff"):
        out = [result.tradeoff.bm_mean, result.tradeoff.lnr_mean, result.tradeoff.delta]
        return out + ([result.stopping.target] if result.stopping is not None else [])
    if hasattr(result, "bm_mean"):
        return [result.bm_mean, result.lnr_mean, result.delta, result.tuned_epsilon]
    if hasattr(result, "train_bm"):
        return [result.train_bm, result.train_lnr]
    if hasattr(result, "l2_sensitivity"):
        return [result.l2_sensitivity, result.l1_sensitivity, result.optimum, result.lam]
    if hasattr(result, "ex_post"):
        return [result.target]
    return result


def _read_or_missing(**kwargs):
    """The epsilon column, or "missing" when a path of the right type names no file (an OSError)."""
    try:
        return frontier.read(**kwargs)["epsilon"]
    except OSError:
        return "missing"


def _values(func):
    return lambda **kwargs: _result_values(func(**kwargs))


# (label, function taking keyword arguments, valid keyword arguments)
FUNCTIONS = [
    ("default_task", _values(_first(default_task, "name")), {"name": "mean", "n": 20, "lam": 0.05, "rng": 0}),
    ("default_epsilons", _first(default_epsilons, "count"), {"count": 5, "low": 0.16, "high": 5.0}),
    (
        "bm_noise",
        _first(bm_noise, "times_desc"),
        {"times_desc": np.array([2.0, 1.0]), "dim": 2, "trials": 3, "rng": np.random.default_rng(0)},
    ),
    (
        "lnr_noise",
        _first(lnr_noise, "times_desc"),
        {"times_desc": np.array([2.0, 1.0]), "dim": 2, "trials": 3, "rng": np.random.default_rng(0)},
    ),
    ("first_true", _first(first_true, "mask"), {"mask": np.array([[False, True], [False, False]])}),
    ("root_seed", lambda **kw: root_seed(**kw).entropy, {"rng": 0}),
    (
        "chunk_plan",
        lambda **kw: [c for c, _ in chunk_plan(kw.pop("trials"), **kw)],
        {"trials": 10, "rng": 0, "chunk_trials": 4},
    ),
    (
        "experiment_chunk",
        _values(_first(experiment_chunk, "task")),
        {
            "task": TASK,
            "epsilons": EPS2,
            "count": 2,
            "rng": 0,
            "delta": 1e-6,
            "tuned_epsilon": 0.3,
            "target": 1e4,
            "at_epsilon": 0.5,
        },
    ),
    (
        "combine_chunks",
        _values(_first(combine_chunks, "task")),
        {"task": TASK, "epsilons": EPS2, "chunks": [CHUNK], "delta": 1e-6, "tuned_epsilon": 0.3, "target": 1e4},
    ),
    (
        "run_experiment",
        _values(_first(run_experiment, "task")),
        {
            "task": TASK,
            "epsilons": EPS2,
            "target": 1e4,
            "trials": 2,
            "delta": 1e-6,
            "tuned_epsilon": 0.3,
            "at_epsilon": 0.5,
            "rng": 0,
            "mapper": None,
            "progress": None,
            "chunk_trials": 1,
        },
    ),
    (
        "tradeoff_experiment",
        _values(_first(tradeoff_experiment, "task")),
        {"task": TASK, "epsilons": EPS2, "trials": 2, "rng": 0, "mapper": map, "progress": lambda fraction: None},
    ),
    (
        "stopping_experiment",
        _values(_first(stopping_experiment, "task")),
        {"task": TASK, "target": 1e4, "epsilons": EPS2, "trials": 2, "at_epsilon": 0.5, "rng": 0},
    ),
    (
        "planned_chunk",
        _values(_first(planned_chunk, "task")),
        {"task": TASK, "epsilons": EPS2, "trials": 4, "rng": 0, "index": 0},
    ),
    ("pilot_target", _first(pilot_target, "task"), {"task": TASK, "trials": 2, "rng": 0, "tuned_epsilon": 0.3}),
    ("normalize_rows", _first(normalize_rows, "X"), {"X": X_CLS}),
    ("split", _first(split, "X"), {"X": X_CLS, "y": Y_CLS, "n_train": 5}),
    ("synthetic_classification", _first(synthetic_classification, "n"), {"n": 5, "d": 3, "rng": 0}),
    ("synthetic_regression", _first(synthetic_regression, "n"), {"n": 5, "d": 3, "rng": 0}),
    (
        "table_task_data",
        lambda **kw: table_task_data(kw.pop("names"), kw.pop("values"), **kw)[0][0],
        {"names": NAMES, "values": VALUES, "task": "logistic", "target": "label", "max_rows": 40, "rng": 0},
    ),
    (
        "LogisticRegressionTask",
        _values(lambda **kw: LogisticRegressionTask(kw.pop("X"), kw.pop("y"), **kw)),
        {"X": X_CLS, "y": Y_CLS, "lam": 0.05, "holdout": (X_CLS, Y_CLS)},
    ),
    (
        "RidgeRegressionTask",
        _values(lambda **kw: RidgeRegressionTask(kw.pop("X"), kw.pop("y"), **kw)),
        {"X": X_REG, "y": Y_REG, "lam": 0.05, "holdout": (X_REG, Y_REG)},
    ),
    (
        "MeanEstimationTask",
        _values(_first(MeanEstimationTask, "X")),
        {"X": X_CLS, "lam": 0.0, "holdout": X_CLS},
    ),
    ("frontier.read", lambda **kw: _read_or_missing(**kw), {"path": SHIPPED}),
]

TASKS = [
    ("logistic", LogisticRegressionTask(X_CLS, Y_CLS, lam=0.05, holdout=(X_CLS, Y_CLS))),
    ("ridge", RidgeRegressionTask(X_REG, Y_REG, lam=0.05, holdout=(X_REG, Y_REG))),
    ("mean", MeanEstimationTask(X_CLS, lam=0.0, holdout=X_CLS)),
]
METHODS = [
    ("loss", {"params": np.full(3, 0.1), "holdout": False}),
    ("clipped_loss", {"params": np.full((2, 3), 0.1)}),
    ("batch_loss", {"params": np.full((2, 3), 0.1), "holdout": True, "clip": 5.0}),
    ("release", {"noise": "noise"}),
]
METHOD_CASES = [(label, task, method) for label, task in TASKS for method in METHODS]


@pytest.mark.parametrize(("label", "func", "params"), FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
@SWEEP
@given(data=st.data())
def test_functions_at_the_edges(label, func, params, data):
    names, kwargs = _perturbed(data, params)
    outcome(lambda: func(**kwargs), names)


@pytest.mark.parametrize(("label", "task", "method"), METHOD_CASES, ids=[f"{c[0]}.{c[2][0]}" for c in METHOD_CASES])
@SWEEP
@given(data=st.data())
def test_task_methods_at_the_edges(label, task, method, data):
    name, params = method
    if params.get("noise") == "noise":
        params = {"noise": np.full(task.noise_dim, 0.01)}
    names, kwargs = _perturbed(data, params)
    outcome(lambda: getattr(task, name)(**kwargs), names)


@SWEEP
@given(data=st.data())
def test_frontier_write_at_the_edges(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("frontier") / "out.csv"
    names, kwargs = _perturbed(data, {"rows": [FRONTIER_ROW], "path": path})
    outcome(lambda: frontier.write(**kwargs), names)


@pytest.mark.parametrize("loader", [load_kddcup, load_twitter_buzz])
@SWEEP
@given(data=st.data())
def test_loaders_at_the_edges(tmp_path_factory, loader, data):
    """A nasty path or row limit is refused by name (the file itself does not exist)."""
    params = {"path": tmp_path_factory.getbasetemp() / "none.data", "max_rows": 3}
    names, kwargs = _perturbed(data, params)
    try:
        loader(kwargs.pop("path"), **kwargs)
    except (ValueError, TypeError) as exc:
        assert any(name in str(exc) for name in names) or "cannot be read" in str(exc), str(exc)


@pytest.mark.sweep
@settings(SWEEP, max_examples=25)
@given(epsilon=st.sampled_from(NASTY))
def test_frontier_row_at_the_edges(epsilon):
    outcome(lambda: _without_lemma3(frontier.frontier_row(epsilon)), ["epsilon"])


@pytest.mark.sweep
@settings(SWEEP, max_examples=25)
@given(data=st.data())
def test_frontier_compute_at_the_edges(data):
    names, kwargs = _perturbed(data, {"epsilons": [2.0], "progress": None})
    outcome(lambda: _without_lemma3(frontier.compute(**kwargs)), names)


# --- the bugs of the fuzz audit, one by one ---------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: run_experiment(TASK, epsilons=EPS2, trials=10**12),
        lambda: tradeoff_experiment(TASK, epsilons=EPS2, trials=10**12),
        lambda: stopping_experiment(TASK, target=1e4, epsilons=EPS2, trials=10**12),
        lambda: pilot_target(TASK, trials=10**12),
        lambda: chunk_plan(10**12),
        lambda: planned_chunk(TASK, epsilons=EPS2, trials=10**12, rng=0, index=0),
    ],
)
def test_huge_trials_fail_fast_naming_trials(call, monkeypatch):
    """Refused before any work: the task computes nothing and no plan is built (planning 10,000 trials
    already takes 120 kB; the refusal takes about 2 kB). Counted, never timed."""
    computed = []
    for name in ("release", "loss", "batch_loss", "clipped_loss"):
        method = getattr(type(TASK), name)
        monkeypatch.setattr(type(TASK), name, _counted(method, name, computed))
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"trials must be an integer in \[1, 1e\+06\]"):
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert computed == []
    assert peak < 100_000, peak


def _counted(method, name, calls):
    def counted(self, *args, **kwargs):
        calls.append(name)
        return method(self, *args, **kwargs)

    return counted


def test_huge_sizes_are_refused_by_name():
    with pytest.raises(ValueError, match="count"):
        experiment_chunk(TASK, epsilons=EPS2, count=10**12, rng=0)
    with pytest.raises(ValueError, match="count"):
        default_epsilons(10**12)
    with pytest.raises(ValueError, match="n must be"):
        default_task("logistic", n=10**12)
    with pytest.raises(ValueError, match="n must be"):
        synthetic_classification(10**12)
    with pytest.raises(ValueError, match="n \\* d"):
        synthetic_regression(10**6, d=10**6)
    with pytest.raises(ValueError, match="chunk_trials"):  # 38 noise values x 10,000 levels x 10^6 trials
        run_experiment(TASK, epsilons=np.geomspace(0.5, 5, 10_000), trials=10**6, chunk_trials=10**6)


@pytest.mark.parametrize("mapper", [1.0, "map", 3])
def test_mapper_and_progress_must_be_callable(mapper):
    for func in (run_experiment, tradeoff_experiment):
        with pytest.raises(TypeError, match="mapper must be None or a callable"):
            func(TASK, epsilons=EPS2, trials=2, mapper=mapper)
        with pytest.raises(TypeError, match="progress must be None or a callable"):
            func(TASK, epsilons=EPS2, trials=2, progress=mapper)
    with pytest.raises(TypeError, match="mapper"):
        stopping_experiment(TASK, target=1e4, epsilons=EPS2, trials=2, mapper=mapper)


def test_a_mapper_returning_other_things_is_named():
    with pytest.raises(TypeError, match="mapper must return"):
        run_experiment(TASK, epsilons=EPS2, trials=2, mapper=lambda f, chunks: [1.0 for _ in chunks])


@pytest.mark.parametrize("lam", [5e-324, 1e-300, 1e308, 1e13, math.inf, math.nan, -1.0])
def test_lam_out_of_range_is_refused(lam):
    for make in (
        lambda: LogisticRegressionTask(X_CLS, Y_CLS, lam=lam),
        lambda: RidgeRegressionTask(X_REG, Y_REG, lam=lam),
        lambda: MeanEstimationTask(X_CLS, lam=lam),
        lambda: default_task("logistic", n=20, lam=lam, rng=0),
    ):
        with pytest.raises(ValueError, match="lam must be"):
            make()


def test_lam_at_the_ends_of_its_range_gives_finite_tasks():
    for lam in (1e-12, 1e12):
        for task in (
            LogisticRegressionTask(X_CLS, Y_CLS, lam=lam),
            RidgeRegressionTask(X_REG, Y_REG, lam=lam),
            MeanEstimationTask(X_CLS, lam=lam),
        ):
            values = [task.l2_sensitivity, task.l1_sensitivity, task.optimal_loss, *task.optimum]
            assert np.isfinite(values).all(), (task.name, lam)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"low": -1.0}, "low"),
        ({"low": 0.0}, "low"),
        ({"low": math.nan}, "low"),
        ({"low": math.inf}, "low"),
        ({"low": 1 + 2j}, "low"),
        ({"high": -math.inf}, "high"),
        ({"high": math.nan}, "high"),
        ({"high": "5"}, "high"),
        ({"low": 3.0, "high": 2.0}, "low must be < high"),
    ],
)
def test_default_epsilons_refuses_bad_ends(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        default_epsilons(5, **kwargs)


def test_default_epsilons_unchanged_for_valid_ends():
    np.testing.assert_array_equal(default_epsilons(5), np.geomspace(0.16, 5.0, 5))
    np.testing.assert_array_equal(default_epsilons(1, low=2.0, high=2.0), [2.0])


@pytest.mark.parametrize("name", ["delta", "tuned_epsilon", "target"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -1.0, "1.0"])
def test_combine_chunks_checks_what_it_records(name, value):
    kwargs = {"delta": 1e-6, "tuned_epsilon": 0.3, "target": 1e4, name: value}
    with pytest.raises((ValueError, TypeError), match=name):
        combine_chunks(TASK, epsilons=EPS2, chunks=[CHUNK], **kwargs)


def test_combine_chunks_checks_task_and_chunks():
    with pytest.raises(TypeError, match="task"):
        combine_chunks(math.nan, epsilons=EPS2, chunks=[CHUNK])
    with pytest.raises(TypeError, match="chunks"):
        combine_chunks(TASK, epsilons=EPS2, chunks="1.0")
    with pytest.raises(TypeError, match="chunks"):
        combine_chunks(TASK, epsilons=EPS2, chunks=math.nan)
    with pytest.raises(ValueError, match="chunks must have one loss column per level"):
        combine_chunks(TASK, epsilons=[0.5, 1.0, 2.0], chunks=[CHUNK])
    plain = experiment_chunk(TASK, epsilons=EPS2, count=2, rng=0)
    with pytest.raises(ValueError, match="chunks lack the stopping rules"):
        combine_chunks(TASK, epsilons=EPS2, chunks=[plain], target=1e4)


def test_default_task_names_the_wrong_argument():
    with pytest.raises(TypeError, match="name must be"):
        default_task(math.nan)
    with pytest.raises(ValueError, match="name must be"):
        default_task("svm")
    with pytest.raises(ValueError, match="n must be"):
        default_task("mean", n=0)
    with pytest.raises(ValueError, match="lam must be"):
        default_task("mean", n=5, lam=math.nan)


def test_pilot_target_names_tuned_epsilon():
    for value in (math.nan, 0.0, 1e300):
        with pytest.raises(ValueError, match="tuned_epsilon"):
            pilot_target(TASK, trials=2, tuned_epsilon=value)


def test_levels_beyond_the_range_are_named():
    with pytest.raises(ValueError, match="epsilons must be at most 1000"):
        run_experiment(TASK, epsilons=1e300, trials=2)
    with pytest.raises(ValueError, match="tuned_epsilon must be in"):
        run_experiment(TASK, epsilons=EPS2, trials=2, tuned_epsilon=1e300)
    with pytest.raises(ValueError, match="at_epsilon must be in"):
        run_experiment(TASK, epsilons=EPS2, trials=2, at_epsilon=1e300, target=1e4)


def test_task_methods_validate_params_clip_holdout_noise():
    task = TASKS[0][1]
    with pytest.raises(ValueError, match="params must have last dimension 3"):
        task.loss(0.5)
    with pytest.raises(ValueError, match="params must not contain NaN"):
        task.batch_loss(np.array([0.1, math.nan, 0.2]))
    with pytest.raises(TypeError, match="holdout must be True or False"):
        task.loss(np.zeros(3), holdout=np.array([]))
    for clip in (math.nan, -math.inf, -1e300, 0.0):
        with pytest.raises(ValueError, match="clip"):
            task.batch_loss(np.zeros(3), clip=clip)
    with pytest.raises(TypeError, match="clip"):
        task.batch_loss(np.zeros(3), clip="1.0")
    with pytest.raises(ValueError, match="noise must have last dimension"):
        task.release(0.5)
    with pytest.raises(ValueError, match="noise must not contain NaN"):
        task.release(math.nan)
    with pytest.raises(TypeError, match="noise"):
        task.release(1 + 2j)
    with pytest.raises(ValueError, match="params is too large"):
        task.batch_loss(np.full(3, 1e300))
    with pytest.raises(TypeError, match="holdout"):
        LogisticRegressionTask(X_CLS, Y_CLS, holdout=math.nan)
    with pytest.raises(ValueError, match="holdout X must have 3 columns"):
        LogisticRegressionTask(X_CLS, Y_CLS, holdout=(X_CLS[:, :2], Y_CLS))


@pytest.mark.parametrize("size", [1e300, 1e307, -1.7e308])
def test_huge_noise_gives_finite_parameters_or_names_noise(size):
    for _, task in TASKS:
        noise = np.full(task.noise_dim, size)
        assert outcome(lambda t=task, v=noise: t.release(v), ["noise"]) in ("ok", "named")
        try:
            params = task.release(noise)
        except ValueError:
            continue
        assert outcome(lambda t=task, v=params: t.batch_loss(v), ["params"]) in ("ok", "named")


def test_paths_must_be_paths():
    for call in (
        lambda: load_kddcup(math.nan),
        lambda: load_twitter_buzz(None),
        lambda: frontier.read(3),
        lambda: frontier.write([FRONTIER_ROW], path=math.nan),
    ):
        with pytest.raises(TypeError, match="path must be a str or a path-like object"):
            call()


def test_frontier_checks_epsilon_rows_and_argv(tmp_path):
    with pytest.raises(ValueError, match=r"epsilon must be in \[0.1, 50\]"):
        frontier.frontier_row(0.0)
    with pytest.raises(TypeError, match="epsilon"):
        frontier.frontier_row("1.0")
    with pytest.raises(TypeError, match="epsilons"):
        frontier.compute(math.nan)
    with pytest.raises(ValueError, match="epsilons"):
        frontier.compute([2.0, -1.0])
    with pytest.raises(TypeError, match="progress"):
        frontier.compute([2.0], progress=1.0)
    with pytest.raises(TypeError, match="rows"):
        frontier.write("1.0", path=tmp_path / "x.csv")
    with pytest.raises(ValueError, match="rows must use the columns"):
        frontier.write([{"nope": 1.0}], path=tmp_path / "x.csv")
    assert not (tmp_path / "x.csv").exists()  # nothing is written before the rows are checked
    for argv in (False, np.array([]), "out.csv", [1]):
        with pytest.raises(TypeError, match="argv"):
            frontier.main(argv)


def test_frontier_write_then_read_round_trip(tmp_path):
    row = dict(FRONTIER_ROW, lemma3_abs=math.nan)
    frontier.write([row], path=tmp_path / "t.csv")
    table = frontier.read(tmp_path / "t.csv")
    assert math.isnan(table["lemma3_abs"][0]) and table["epsilon"][0] == 1.0


def test_data_helpers_validate():
    with pytest.raises(ValueError, match="X must be a 2-d array"):
        normalize_rows(0.5)
    with pytest.raises(ValueError, match="X must not contain NaN"):
        normalize_rows(math.nan)
    with pytest.raises(TypeError, match="X must be a real"):
        split("1.0", Y_CLS, n_train=1)
    with pytest.raises(ValueError, match="X must be finite"):
        split(np.array([1.0, math.inf]), np.ones(2), n_train=1)
    with pytest.raises(ValueError, match="y must be 1-d"):
        split(X_CLS, Y_CLS[:3], n_train=1)
    with pytest.raises(TypeError, match="names"):
        table_task_data(math.nan, VALUES, task="logistic", target="label")
    with pytest.raises(TypeError, match="values"):
        table_task_data(NAMES, VALUES + 1j, task="logistic", target="label")
    with pytest.raises(TypeError, match="target"):
        table_task_data(NAMES, VALUES, task="logistic", target=np.array([]))
    with pytest.raises(ValueError, match="max_rows"):
        table_task_data(NAMES, VALUES, task="logistic", target="label", max_rows=1)


def test_noise_helpers_validate():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="times_desc"):
        bm_noise(0.5, dim=1, trials=1, rng=rng)
    with pytest.raises(ValueError, match="times_desc"):
        lnr_noise(np.array([1.0, 2.0]), dim=1, trials=1, rng=rng)
    with pytest.raises(TypeError, match="dim"):
        bm_noise(np.array([2.0, 1.0]), dim=1.0, trials=1, rng=rng)
    with pytest.raises(ValueError, match="trials"):
        lnr_noise(np.array([2.0, 1.0]), dim=1, trials=10**12, rng=rng)
    with pytest.raises(TypeError, match="mask"):
        first_true(np.ones((2, 2)))
    with pytest.raises(ValueError, match="mask must be 2-d"):
        first_true(np.ones(2, dtype=bool))
    # a time 0 at the end of a Brownian grid is fine (the app's crossing study uses such grids)
    assert bm_noise(np.array([2.0, 1.0, 0.0]), dim=1, trials=2, rng=rng).shape == (2, 3, 1)
