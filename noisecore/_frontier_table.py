"""Reading the frontier table (``noisecore/data/frontier.csv``); ``noisecore.frontier`` computes it.

Kept apart from the generator, which needs ``Arete.calibrated``: the calibration reads the table for
warm starts, so it imports this module only.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable
from importlib import resources
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from ._validation import file_path

COLUMNS = [
    "epsilon",
    "laplace_abs",
    "laplace_var",
    "staircase_abs",
    "staircase_var",
    "lemma3_abs",
    "lemma3_var",
    "arete_abs",
    "arete_abs_alpha",
    "arete_abs_theta",
    "arete_abs_lam",
    "arete_abs_certified",
    "arete_var",
    "arete_var_alpha",
    "arete_var_theta",
    "arete_var_lam",
    "arete_var_certified",
    "arete_over_laplace_abs",
    "arete_over_staircase_abs",
    "arete_over_laplace_var",
    "arete_over_staircase_var",
]

Table: TypeAlias = dict[str, npt.NDArray[np.float64]]


def read(path: str | os.PathLike[str]) -> Table:
    """Read a frontier table written by ``write``.

    Parameters
    ----------
    path : str or path-like
        The CSV file.

    Returns
    -------
    dict of str to numpy.ndarray
        One float array per column of ``COLUMNS`` (NaN for empty cells).

    Raises
    ------
    TypeError
        If ``path`` is not a str or path-like.
    OSError
        If the file cannot be opened.
    KeyError, ValueError
        If a column is missing or a cell is not a number.
    """
    with open(file_path("path", path), newline="") as handle:
        return _parse(handle)


def _parse(handle: Iterable[str]) -> Table:
    """Columns of ``COLUMNS`` from CSV lines."""
    rows = list(csv.DictReader(handle))
    return {k: np.array([float(r[k]) if r[k] != "" else math.nan for r in rows]) for k in COLUMNS}


def load() -> Table:
    """The frontier table shipped with the package (package data).

    Returns
    -------
    dict of str to numpy.ndarray
        One float array per column of ``COLUMNS``, rows in increasing epsilon.

    Raises
    ------
    OSError
        If the package data is missing.
    KeyError, ValueError
        If the file is malformed.
    """
    text = resources.files("noisecore").joinpath("data", "frontier.csv").read_text()
    return _parse(io.StringIO(text))
