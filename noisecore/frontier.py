"""The error frontier of low-privacy noise: E|Z| and variance against epsilon (sensitivity 1).

For each epsilon: Laplace (closed form), Staircase with the gamma optimal for each criterion,
Arete from Lemma 3 (where its range eps >= 20 applies) and the calibrated Arete
(``Arete.calibrated``, certified). ``python -m noisecore.frontier [path]`` regenerates the
table shipped in ``noisecore/data/frontier.csv`` (about 3 s); ``load()`` reads it
(``noisecore._frontier_table``, which the calibration imports without this generator).
"""

from __future__ import annotations

import csv
import math
import numbers
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from ._frontier_table import COLUMNS, Table, load, read
from ._validation import file_path, in_interval
from .arete import Arete
from .distributions import Staircase

__all__ = [
    "COLUMNS",
    "DEFAULT_EPSILONS",
    "HEADLINE_EPSILONS",
    "SWITCH_EPSILONS",
    "Table",
    "compute",
    "frontier_row",
    "load",
    "main",
    "read",
    "write",
]

# the reader lives in _frontier_table (the calibration imports it); its public home is here
load.__module__ = read.__module__ = __name__

# where the least-E|Z| (and least-variance) Arete leaves the Laplace limit, found by bisection of
# Arete.calibrated to 1e-5: a row on each side, so a calibration between two rows never starts on the
# wrong side of the switch (between 3.27 and 3.71 it took 0.13-0.16 s to find the Laplace limit)
SWITCH_EPSILONS = (3.500606, 3.500633, 4.394019, 4.394054)
DEFAULT_EPSILONS = np.unique(np.concatenate([np.round(np.geomspace(0.5, 40, 36), 6), SWITCH_EPSILONS]))
HEADLINE_EPSILONS = (2.0, 6.0, 10.0, 20.0)
# The epsilons a row can be computed for: the shipped table spans [0.5, 40]; below 0.1 the rows are
# not needed, and above 50 Arete.calibrated no longer finds the least-E|Z| Arete (its range's top).
EPSILON_MIN, EPSILON_MAX = 0.1, 50.0
MAX_ROWS = 10_000  # rows ``compute`` makes at most (each takes up to a second)


def frontier_row(epsilon: float) -> dict[str, float]:
    """One row of the frontier table: every column of ``COLUMNS`` at ``epsilon``.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, in [0.1, 50] (``EPSILON_MIN``, ``EPSILON_MAX``; sensitivity 1).

    Returns
    -------
    dict of str to float
        Errors of Laplace, Staircase (gamma optimal per criterion), the Lemma 3 Arete (NaN outside
        its range), the calibrated Arete with its parameters and certified loss, and the ratios.

    Raises
    ------
    TypeError
        If ``epsilon`` is not a real number.
    ValueError
        If ``epsilon`` is not finite or lies outside [0.1, 50].

    References
    ----------
    Paper B [PS22] (Pagh & Stausholm), Lemma 3; [GV16] (Geng & Viswanath) for the Staircase.
    """
    epsilon = in_interval("epsilon", epsilon, EPSILON_MIN, EPSILON_MAX)
    row = {"epsilon": epsilon, "laplace_abs": 1 / epsilon, "laplace_var": 2 / epsilon**2}
    row["staircase_abs"] = Staircase(epsilon, gamma=Staircase.optimal_gamma(epsilon, criterion="abs")).mean_abs()
    row["staircase_var"] = Staircase(epsilon, gamma=Staircase.optimal_gamma(epsilon, criterion="var")).var()
    if Arete.lemma3_applies(epsilon):
        lemma = Arete.from_lemma3(epsilon)
        row["lemma3_abs"], row["lemma3_var"] = lemma.mean_abs(), lemma.var()
    else:
        row["lemma3_abs"] = row["lemma3_var"] = math.nan
    for objective in ("abs", "var"):
        best = Arete.calibrated(epsilon, objective=objective)
        row[f"arete_{objective}"] = best.mean_abs() if objective == "abs" else best.var()
        row[f"arete_{objective}_alpha"] = best.alpha
        row[f"arete_{objective}_theta"] = best.theta
        row[f"arete_{objective}_lam"] = best.lam
        row[f"arete_{objective}_certified"] = float(best.privacy_loss(1.0))
    for kind in ("abs", "var"):
        row[f"arete_over_laplace_{kind}"] = row[f"arete_{kind}"] / row[f"laplace_{kind}"]
        row[f"arete_over_staircase_{kind}"] = row[f"arete_{kind}"] / row[f"staircase_{kind}"]
    return row


def compute(
    epsilons: Iterable[float] = DEFAULT_EPSILONS, *, progress: Callable[[float], object] | None = None
) -> list[dict[str, float]]:
    """Frontier rows for ``epsilons`` and ``HEADLINE_EPSILONS``, sorted and without duplicates.

    Parameters
    ----------
    epsilons : iterable of float, optional
        Privacy parameters, each in [0.1, 50], at most 10,000 of them (default
        ``DEFAULT_EPSILONS``: 36 values from 0.5 to 40, log-spaced, and the four ``SWITCH_EPSILONS``).
    progress : callable, optional
        Called with the fraction done, in (0, 1], after each row.

    Returns
    -------
    list of dict
        One ``frontier_row`` per epsilon.

    Raises
    ------
    TypeError
        If ``epsilons`` is not an iterable of real numbers, or ``progress`` is not callable.
    ValueError
        If an epsilon is not finite or lies outside [0.1, 50], or there are more than 10,000.
    """
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be None or a callable, got {type(progress).__name__}")
    if isinstance(epsilons, str | bytes) or not isinstance(epsilons, Iterable):
        raise TypeError(f"epsilons must be an iterable of real numbers, got {type(epsilons).__name__}")
    values = []
    for count, e in enumerate(epsilons):
        if count >= MAX_ROWS:
            raise ValueError(f"epsilons must hold at most {MAX_ROWS} values")
        values.append(in_interval("epsilons", e, EPSILON_MIN, EPSILON_MAX))
    rows = []
    eps_list = sorted(set(values) | set(HEADLINE_EPSILONS))
    for i, eps in enumerate(eps_list):
        rows.append(frontier_row(eps))
        if progress is not None:
            progress((i + 1) / len(eps_list))
    return rows


def write(rows: Iterable[Mapping[str, float]], *, path: str | os.PathLike[str]) -> None:
    """Write rows as CSV with the header ``COLUMNS``, at full precision (NaN as an empty cell).

    Parameters
    ----------
    rows : iterable of mapping
        Rows as returned by ``compute``: keys among ``COLUMNS``, real numbers as values.
    path : str or path-like
        Output file (overwritten).

    Raises
    ------
    TypeError
        If ``rows`` is not an iterable of mappings with real values, or ``path`` is not a str or
        path-like.
    ValueError
        If a row has a key that is not in ``COLUMNS``.
    OSError
        If the file cannot be written.
    """
    path = file_path("path", path)
    if isinstance(rows, str | bytes | Mapping) or not isinstance(rows, Iterable):
        raise TypeError(f"rows must be an iterable of mappings (column -> number), got {type(rows).__name__}")
    lines = []
    for row in rows:
        if not isinstance(row, Mapping):
            raise TypeError(f"rows must hold mappings (column -> number), got a {type(row).__name__}")
        unknown = [k for k in row if k not in COLUMNS]
        if unknown:
            raise ValueError(f"rows must use the columns of COLUMNS only, got {unknown[:3]!r}")
        if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in row.values()):
            raise TypeError("rows must map columns to real numbers")
        # full precision: rounded parameters could lose the certificate (4.200761 lost 3e-11)
        lines.append({k: ("" if math.isnan(v) else f"{v:.17g}") for k, v in row.items()})
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """Regenerate the table: ``python -m noisecore.frontier [path]``.

    Parameters
    ----------
    argv : sequence of str, optional
        Command-line arguments (default ``sys.argv[1:]``); the first, if any, is the output path,
        else (no argument, as on a command line) ``noisecore/data/frontier.csv``.

    Raises
    ------
    TypeError
        If ``argv`` is not None or a list or tuple of str.
    """
    if argv is not None and (not isinstance(argv, list | tuple) or not all(isinstance(arg, str) for arg in argv)):
        raise TypeError(f"argv must be None or a list of str (command-line arguments), got {argv!r}")
    argv = sys.argv[1:] if argv is None else argv
    path = Path(argv[0]) if argv else Path(__file__).resolve().parent / "data" / "frontier.csv"

    def show(fraction: float) -> None:
        sys.stderr.write(f"\rfrontier: {100 * fraction:5.1f}%")
        sys.stderr.flush()

    rows = compute(progress=show)
    sys.stderr.write("\n")
    write(rows, path=path)
    print(f"wrote {path}")
    for row in rows:
        if row["epsilon"] in HEADLINE_EPSILONS:
            print(
                f"eps = {row['epsilon']:g}: Arete/Laplace E|Z| {row['arete_over_laplace_abs']:.4g}, "
                f"Arete/Staircase E|Z| {row['arete_over_staircase_abs']:.4g}, "
                f"Arete/Laplace Var {row['arete_over_laplace_var']:.4g}, "
                f"Arete/Staircase Var {row['arete_over_staircase_var']:.4g}"
            )


if __name__ == "__main__":
    main()
