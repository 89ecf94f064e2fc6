"""The experiments explorer's story (UI-free): paper A's experiments on a chosen task and data set,
split into chunks of trials that run away from the event loop, and the words the view puts on them.

Data sets: the synthetic stand-ins for paper A's data; an uploaded CSV table with a chosen target
column; and the KDD Cup 99 / Twitter buzz files when the server has them (in the folder named by
``NOISELAB_DATA_DIR``).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dashboard.claims import RULE_COST, RULE_LABELS
from dashboard.compute import run_capped
from noisecore.experiments import (
    DEFAULT_TARGETS,
    chunk_plan,
    default_task,
    planned_chunk,
    public_target,
)
from noisecore.tasks import (
    LogisticRegressionTask,
    MeanEstimationTask,
    RidgeRegressionTask,
    Task,
    load_kddcup,
    load_twitter_buzz,
    read_table,
    split,
    table_task_data,
)

__all__ = [
    "DATA_FILES",
    "RULE_COST",
    "RULE_LABELS",
    "SOURCES",
    "ExperimentSpec",
    "Prepared",
    "available_sources",
    "chunk_calls",
    "inspect_table",
    "level_grid",
    "prepare",
]

SOURCES = {
    "synthetic": "synthetic, as in paper A",
    "upload": "uploaded CSV file",
    "kddcup": "KDD Cup 99 file (logistic)",
    "twitter": "Twitter buzz file (ridge)",
}
DATA_FILES = {"kddcup": "kddcup.data_10_percent", "twitter": "Twitter.data"}
FILE_TASK = {"kddcup": "logistic", "twitter": "ridge"}
DATA_ROWS = 10_000  # rows to train on (paper A's n); as many again are the public hold-out set
LAM = 0.05


def data_dir() -> Path | None:
    folder = os.environ.get("NOISELAB_DATA_DIR")
    return Path(folder) if folder else None


def available_sources(folder: Path | None = None) -> dict[str, str]:
    """The data sources on offer: synthetic and upload always, the paper's files when present."""
    folder = data_dir() if folder is None else folder
    out = {k: SOURCES[k] for k in ("synthetic", "upload")}
    if folder is not None:
        out.update({k: SOURCES[k] for k, name in DATA_FILES.items() if (folder / name).is_file()})
    return out


@dataclass(frozen=True, slots=True)
class ExperimentSpec:
    """What to run on: plain, hashable values (so the compute pool can answer repeats from its store)."""

    task: str = "logistic"
    source: str = "synthetic"
    content: bytes | None = None  # the uploaded file
    filename: str = "upload.csv"
    target_column: str | None = None
    seed: int = 0


@dataclass(frozen=True, slots=True)
class Prepared:
    """A task ready to run and the target loss the default rule gives for it."""

    task: Task
    suggested_target: float
    description: str


def inspect_table(content: bytes, *, filename: str = "upload.csv") -> tuple[str, ...]:
    """The column names of an uploaded CSV table, after checking every cell (errors name the line)."""
    names, _ = read_table(content, source=filename)
    return tuple(names)


def _task(name, train, hold):
    (X, y), (hX, hy) = train, hold
    if name == "logistic":
        return LogisticRegressionTask(X, y, lam=LAM, holdout=(hX, hy))
    if name == "ridge":
        return RidgeRegressionTask(X, y, lam=LAM, holdout=(hX, hy))
    return MeanEstimationTask(X, lam=0.0, holdout=hX)


def prepare(spec: ExperimentSpec, *, folder: Path | None = None) -> Prepared:
    """Build the task for ``spec`` (fit the non-private optimum) and its default target loss, from the
    public hold-out rows only (``noisecore.experiments.public_target``)."""
    if spec.task not in DEFAULT_TARGETS:
        raise ValueError(f'task must be "logistic", "ridge" or "mean", got {spec.task!r}')
    if spec.source == "synthetic":
        task = default_task(spec.task, n=DATA_ROWS, rng=0)
        return Prepared(
            task,
            DEFAULT_TARGETS[spec.task],
            f"synthetic data shaped like paper A's: {task.n:,} training rows, {task.d} features",
        )
    if spec.source == "upload":
        if spec.content is None:
            raise ValueError("upload a CSV file first (a header row, then numeric rows)")
        names, values = read_table(spec.content, source=spec.filename)
        train, hold = table_task_data(
            names, values, task=spec.task, target=spec.target_column, max_rows=2 * DATA_ROWS, rng=spec.seed
        )
        where = f"{spec.filename}"
        if spec.task != "mean":
            where += f", predicting {spec.target_column!r}"
        if spec.task == "ridge":
            where += " (scaled by its largest |value| in the file, a step that is not private)"
    elif spec.source in DATA_FILES:
        folder = data_dir() if folder is None else folder
        if folder is None or not (folder / DATA_FILES[spec.source]).is_file():
            raise ValueError(f"the {SOURCES[spec.source]} is not on this server")
        if spec.task != FILE_TASK[spec.source]:
            raise ValueError(f"the {SOURCES[spec.source]} is for the {FILE_TASK[spec.source]} task")
        loader = load_kddcup if spec.source == "kddcup" else load_twitter_buzz
        X, y = loader(folder / DATA_FILES[spec.source])
        order = np.random.default_rng(spec.seed).permutation(len(y))[: 2 * DATA_ROWS]
        train, hold = split(X[order], y[order], n_train=len(order) // 2)
        where = SOURCES[spec.source]
    else:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}, got {spec.source!r}")
    task = _task(spec.task, train, hold)
    target = public_target(task, rng=spec.seed)
    return Prepared(task, target, f"{where}: {task.n:,} training rows, {task.d} features, as many public hold-out rows")


def level_grid(low: float, high: float, *, count: int) -> tuple[float, ...]:
    """Log-spaced privacy levels, as a tuple (hashable) rounded to 6 significant digits."""
    if not 0 < low < high:
        raise ValueError(f"the privacy levels need 0 < lowest < highest, got {low:g} and {high:g}")
    return tuple(float(f"{e:.6g}") for e in np.geomspace(low, high, count))


def chunk_calls(task: Task, *, levels, trials: int, rng: int, target: float, delta: float = 1e-6):
    """The experiment as independent calls (one per chunk of trials, each from its own child seed of the
    integer seed ``rng``)."""
    count = len(chunk_plan(trials, rng=rng))
    return [
        functools.partial(
            run_capped,
            planned_chunk,
            task,
            epsilons=tuple(levels),
            trials=trials,
            rng=rng,
            index=index,
            target=target,
            delta=delta,
        )
        for index in range(count)
    ]
