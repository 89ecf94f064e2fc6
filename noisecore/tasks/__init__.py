"""Statistical tasks for the noise-reduction experiments (paper A, Section 6).

Each task holds its data, the non-private optimum, the l1/l2 sensitivities of the released
vector, and maps a noise vector (or a stack of them) to the released parameter and its loss.
"""

from .base import Task
from .data import (
    load_kddcup,
    load_twitter_buzz,
    normalize_rows,
    read_table,
    split,
    synthetic_classification,
    synthetic_regression,
    table_task_data,
)
from .logistic import LogisticRegressionTask
from .mean import MeanEstimationTask
from .ridge import RidgeRegressionTask

__all__ = [
    "LogisticRegressionTask",
    "MeanEstimationTask",
    "RidgeRegressionTask",
    "Task",
    "load_kddcup",
    "load_twitter_buzz",
    "normalize_rows",
    "read_table",
    "split",
    "synthetic_classification",
    "synthetic_regression",
    "table_task_data",
]
