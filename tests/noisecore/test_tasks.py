import math

import numpy as np
import pytest
from scipy import optimize

from noisecore.experiments import (
    DEFAULT_TARGETS,
    bm_noise,
    default_epsilons,
    default_task,
    lnr_noise,
    pilot_target,
    public_target,
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
    synthetic_classification,
    synthetic_regression,
)
from tests.noisecore.checks import assert_follows


def _neighbour(X, y, rng):
    """Replace one random row by a fresh unit-norm row (and label)."""
    X2, y2 = X.copy(), y.copy()
    i = rng.integers(len(y))
    row = rng.normal(size=X.shape[1])
    X2[i] = row / np.linalg.norm(row) * rng.uniform(0.5, 1.0)
    y2[i] = rng.choice(np.unique(y)) if set(np.unique(y)) <= {-1.0, 1.0} else rng.uniform(-1, 1)
    return X2, y2


@pytest.mark.sweep
def test_logistic_sensitivity_on_neighbours():
    X, y = synthetic_classification(300, d=6, rng=3)
    task = LogisticRegressionTask(X, y, lam=0.1)
    rng = np.random.default_rng(0)
    shifts = []
    for _ in range(25):
        X2, y2 = _neighbour(X, y, rng)
        other = LogisticRegressionTask(X2, y2, lam=0.1)
        shifts.append(np.linalg.norm(task.optimum - other.optimum))
    assert max(shifts) <= task.l2_sensitivity
    assert max(shifts) > 0.05 * task.l2_sensitivity  # neighbours do move the optimum
    assert task.l1_sensitivity == pytest.approx(math.sqrt(6) * task.l2_sensitivity)


def test_logistic_optimum_is_stationary():
    X, y = synthetic_classification(500, d=5, rng=1)
    task = LogisticRegressionTask(X, y, lam=0.05)
    grad = optimize.approx_fprime(task.optimum, lambda b: float(task.loss(b)), 1e-7)
    assert np.linalg.norm(grad) < 1e-6


def test_ridge_statistics_sensitivity():
    X, y = synthetic_regression(200, d=7, rng=2)
    task = RidgeRegressionTask(X, y, lam=0.05)
    rng = np.random.default_rng(1)
    for _ in range(25):
        X2, y2 = _neighbour(X, y, rng)
        gram = X.T @ X - X2.T @ X2
        cross = X.T @ y - X2.T @ y2
        assert np.linalg.norm(gram) <= 2 and np.linalg.norm(cross) <= 2
        assert np.abs(gram).sum() <= 2 * 7 and np.abs(cross).sum() <= 2 * math.sqrt(7)
    assert task.l2_sensitivity == pytest.approx(math.sqrt(8))
    assert task.l1_sensitivity == pytest.approx(14 + 2 * math.sqrt(7))
    # no noise: the released parameter is the optimum, the solution of (X^T X + n lam I) b = X^T y
    np.testing.assert_allclose(task.release(np.zeros(task.noise_dim)), task.optimum, rtol=1e-10)
    grad = optimize.approx_fprime(task.optimum, lambda b: float(task.loss(b)), 1e-7)
    assert np.linalg.norm(grad) < 1e-6


def test_mean_task():
    rng = np.random.default_rng(0)
    X = normalize_rows(rng.normal(size=(400, 3))) * 0.9
    task = MeanEstimationTask(X, lam=0.0, holdout=X[:10])
    np.testing.assert_allclose(task.optimum, X.mean(axis=0))
    beta = np.array([0.1, -0.2, 0.3])
    direct = np.mean(0.5 * np.sum((X - beta) ** 2, axis=1))
    assert task.loss(beta) == pytest.approx(direct)
    X2 = X.copy()
    X2[5] = -X2[5] / np.linalg.norm(X2[5])
    assert np.linalg.norm(X.mean(0) - X2.mean(0)) <= task.l2_sensitivity


def test_mean_task_clips_each_example():
    """The private check's loss caps every example at loss_bound (not the mean), so replacing one row
    moves it by at most loss_bound / n even for parameters far outside the unit ball."""
    rng = np.random.default_rng(1)
    X = normalize_rows(rng.normal(size=(300, 3))) * rng.uniform(0, 1, (300, 1))
    task = MeanEstimationTask(X, lam=0.0)
    params = rng.normal(0, 2.0, (40, 3))
    loop = np.array([np.mean([min(0.5 * np.sum((x - b) ** 2), task.loss_bound) for x in X]) for b in params])
    np.testing.assert_allclose(task.clipped_loss(params), loop, rtol=1e-12)
    X2 = X.copy()
    X2[7] = -X2[7]
    moved = np.abs(MeanEstimationTask(X2, lam=0.0).clipped_loss(params) - task.clipped_loss(params))
    assert moved.max() <= task.utility_sensitivity + 1e-15


def test_released_noise_has_the_stated_law():
    task = default_task("mean", n=500, rng=0)
    noise = np.random.default_rng(0).normal(size=(5, task.noise_dim))
    np.testing.assert_allclose(task.release(noise) - task.optimum, noise)
    times = np.array([9.0, 4.0, 1.0])
    b = bm_noise(times, dim=2, trials=40000, rng=np.random.default_rng(1))
    cov = np.cov(b[:, :, 0].T)
    np.testing.assert_allclose(cov, np.minimum.outer(times, times), atol=0.25)
    lap = lnr_noise(times, dim=2, trials=20000, rng=np.random.default_rng(2))
    for k, t in enumerate(times):
        assert_follows(lap[:, k, 1], "laplace", args=(0, t), what=f"LNR noise at time {t}")


def test_fast_loss_matches_exact():
    task = default_task("logistic", n=2000, rng=0)
    params = task.optimum + np.random.default_rng(0).normal(size=(700, task.d)) * 0.2
    np.testing.assert_allclose(task.batch_loss(params), task.loss(params), rtol=1e-6)
    np.testing.assert_allclose(task.batch_loss(params, holdout=True), task.loss(params, holdout=True), rtol=1e-6)
    clipped = task.batch_loss(params * 30, clip=task.loss_bound)
    np.testing.assert_allclose(clipped, task.clipped_loss(params * 30), rtol=1e-6)


def test_experiments_reproducible_from_seed():
    task = default_task("logistic", n=1000, rng=0)
    eps = default_epsilons(6)
    first = tradeoff_experiment(task, epsilons=eps, trials=30, rng=5)
    second = tradeoff_experiment(task, epsilons=eps, trials=30, rng=5)
    np.testing.assert_array_equal(first.bm_mean, second.bm_mean)
    np.testing.assert_array_equal(first.lnr_high, second.lnr_high)
    s1 = stopping_experiment(task, target=0.45, epsilons=eps, trials=30, rng=2)
    s2 = stopping_experiment(task, target=0.45, epsilons=eps, trials=30, rng=2)
    for key in s1.ex_post:
        np.testing.assert_array_equal(s1.ex_post[key], s2.ex_post[key])
    progress = []
    tradeoff_experiment(task, epsilons=eps, trials=10, rng=1, progress=progress.append)
    assert progress[-1] == pytest.approx(1.0)


@pytest.mark.parametrize("name", ["logistic", "ridge", "mean"])
@pytest.mark.sweep
def test_default_targets_follow_the_documented_rule(name):
    """The default targets come from public data only: public_target reads the hold-out rows alone, so
    the same target results when every private training row is replaced."""
    task = default_task(name, rng=0)
    assert public_target(task, rng=0) == pytest.approx(DEFAULT_TARGETS[name], rel=1e-12)
    scrambled = type(task)(
        *((np.zeros_like(task.X),) if name == "mean" else (np.zeros_like(task.X), np.ones_like(task.y))),
        lam=task.lam,
        holdout=task.holdout,
    )
    assert public_target(scrambled, rng=0) == public_target(task, rng=0)
    assert pilot_target(task, rng=0) != public_target(task, rng=0)  # the private-data rule differs


def test_kdd_loader(tmp_path):
    lines = []
    rng = np.random.default_rng(0)
    for i in range(6):
        numbers = [f"{v:.3f}" for v in rng.uniform(0, 5, 37)]
        label = "normal." if i % 2 else "smurf."
        lines.append(",".join([str(i), "tcp", "http", "SF", *numbers, label]))
    path = tmp_path / "kdd.txt"
    path.write_text("\n".join(lines) + "\n")
    X, y = load_kddcup(path)
    assert X.shape == (6, 38)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    np.testing.assert_array_equal(y, [1, -1, 1, -1, 1, -1])
    raw = np.array([float(v) for v in lines[2].split(",")[4:41]])
    np.testing.assert_allclose(X[2, 1:] / X[2, 0], raw / 2.0)
    (tmp_path / "bad.txt").write_text("1,2,3\n")
    with pytest.raises(ValueError, match="42 comma-separated"):
        load_kddcup(tmp_path / "bad.txt")


def test_twitter_loader(tmp_path):
    rng = np.random.default_rng(1)
    rows = rng.uniform(0, 10, (5, 78))
    path = tmp_path / "twitter.data"
    path.write_text("\n".join(",".join(f"{v:.4f}" for v in r) for r in rows))
    X, y = load_twitter_buzz(path)
    assert X.shape == (5, 77)
    target = np.log1p(np.round(rows[:, 77], 4))
    np.testing.assert_allclose(y, target / target.max())
    (tmp_path / "empty.data").write_text("\n")
    with pytest.raises(ValueError, match="no data rows"):
        load_twitter_buzz(tmp_path / "empty.data")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: LogisticRegressionTask(np.empty((0, 3)), np.empty(0)), "non-empty"),
        (lambda: LogisticRegressionTask(np.ones((4, 2)) / 2, np.ones(3)), "one entry per row"),
        (lambda: LogisticRegressionTask(np.full((2, 2), np.nan), np.ones(2)), "NaN"),
        (lambda: LogisticRegressionTask(np.ones((2, 2)) / 2, np.array([1.0, 0.0])), "-1 and \\+1"),
        (lambda: LogisticRegressionTask(np.ones((2, 2)) / 2, np.ones(2), lam=0.0), "lam"),
        (lambda: LogisticRegressionTask(np.ones((2, 2)), np.ones(2)), "norm <= 1"),
        (lambda: RidgeRegressionTask(np.ones((2, 2)) / 2, np.array([2.0, 0.0])), "\\[-1, 1\\]"),
        (lambda: RidgeRegressionTask(np.ones(3), np.ones(3)), "2-d"),
        (lambda: default_task("svm", rng=0), "name must be"),
    ],
)
def test_bad_task_input(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_experiment_input():
    task = default_task("mean", n=300, rng=0)
    with pytest.raises(ValueError, match="unreachable"):
        stopping_experiment(task, target=1e-6, epsilons=default_epsilons(5), trials=10, rng=0)
    with pytest.raises(ValueError, match="floor"):
        tradeoff_experiment(task, epsilons=[0.1, 0.2], trials=5)
    with pytest.raises(ValueError, match="strictly increasing"):
        tradeoff_experiment(task, epsilons=[0.5, 0.3], trials=5)
    with pytest.raises(ValueError, match="noise must have"):
        task.release(np.zeros(task.noise_dim + 1))
