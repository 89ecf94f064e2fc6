"""State shared across threads or derived at construction: the log 1F1 tables and the tasks."""

import copy
import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from noisecore.dropout import tables
from noisecore.experiments import default_task
from noisecore.tasks import LogisticRegressionTask, MeanEstimationTask, RidgeRegressionTask

TASKS = [
    lambda: default_task("logistic", n=50, rng=0),
    lambda: default_task("ridge", n=50, rng=0),
    lambda: default_task("mean", n=50, rng=0),
]


def test_hyp1f1_tables_from_many_threads_match_one_thread():
    """More (a, c) pairs than the cache holds, from 8 threads at once: every batch is answered (no
    table evicted between a thread's look-up and its read) with the values one thread computes."""
    z = np.geomspace(1e-3, 1e3, tables._HYP_MIN_BATCH)
    pairs = [(0.05 + 0.01 * k, 1.3 + 0.01 * k) for k in range(2 * tables._HYP_MAX_TABLES)]
    serial = [tables._log_hyp1f1_negative(a, c, z) for a, c in pairs]
    with ThreadPoolExecutor(max_workers=8) as pool:
        threaded = list(pool.map(lambda pair: tables._log_hyp1f1_negative(*pair, z), pairs * 3))
    for k, values in enumerate(threaded):
        np.testing.assert_array_equal(values, serial[k % len(pairs)])
    assert len(tables._HYP_TABLES) <= tables._HYP_MAX_TABLES


def test_a_cached_table_is_read_only():
    tables._log_hyp1f1_negative(0.3, 1.7, np.geomspace(1e-3, 1e3, tables._HYP_MIN_BATCH))
    table = tables._HYP_TABLES[(0.3, 1.7)]
    assert table is not None
    with pytest.raises(ValueError, match="read-only"):
        table[0, 0] = 0.0


@pytest.mark.parametrize("make", TASKS)
def test_a_task_cannot_be_changed_after_construction(make):
    task = make()
    sensitivity = task.l2_sensitivity
    for name, value in (("lam", 1.0), ("n", 3), ("optimum", np.zeros(task.d)), ("new", 1)):
        with pytest.raises(AttributeError, match="immutable"):
            setattr(task, name, value)
    with pytest.raises(AttributeError, match="immutable"):
        del task.lam
    assert task.l2_sensitivity == sensitivity


@pytest.mark.parametrize("make", TASKS)
def test_task_copies_and_pickles_are_equal_and_frozen(make):
    task = make()
    for twin in (copy.deepcopy(task), pickle.loads(pickle.dumps(task))):
        assert type(twin) is type(task) and twin.lam == task.lam
        np.testing.assert_array_equal(twin.optimum, task.optimum)
        assert twin.optimal_loss == task.optimal_loss
        with pytest.raises(AttributeError, match="immutable"):
            twin.lam = 2.0


def test_a_new_lam_means_a_new_task():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    y = np.where(rng.random(40) < 0.5, -1.0, 1.0)
    for cls, args in ((LogisticRegressionTask, (X, y)), (RidgeRegressionTask, (X, y / 2))):
        low, high = cls(*args, lam=0.05), cls(*args, lam=0.5)
        assert high.l2_sensitivity <= low.l2_sensitivity
    assert MeanEstimationTask(X, lam=1.0).l2_sensitivity < MeanEstimationTask(X, lam=0.0).l2_sensitivity
