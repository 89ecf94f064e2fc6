"""Data: deterministic synthetic sets shaped like paper A's, and loaders for the real files."""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from .._base import FloatArray
from .._validation import MAX_ELEMENTS, SeedLike, bounded_int, file_path, generator, positive, real_array, value_text

#: A file's content (bytes or text) or a path to read.
FileData: TypeAlias = bytes | bytearray | memoryview | str | Path
#: ``(X, y)``: a design matrix and its targets.
Dataset: TypeAlias = tuple[FloatArray, FloatArray]


def normalize_rows(X: npt.ArrayLike) -> FloatArray:
    """Scale each row to unit l2 norm (a per-row map, so sensitivities stay valid); zero rows stay 0.

    Parameters
    ----------
    X : array_like
        Shape (n, d), finite.

    Returns
    -------
    numpy.ndarray
        A new float array of the same shape.

    Raises
    ------
    TypeError
        If ``X`` is not a real array.
    ValueError
        If ``X`` is not 2-d or has a non-finite entry.
    """
    X = real_array("X", X)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-d array (rows = examples), got shape {X.shape}")
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return np.divide(X, norms, out=np.zeros_like(X), where=norms > 0)


def synthetic_classification(n: int = 10_000, *, d: int = 38, rng: SeedLike = None) -> Dataset:
    """Two noisy clusters around +m and -m (KDD-99-like: classes well separated by direction),
    5% of labels flipped, rows normalised. Shaped like paper A's logistic task; returns (X, y).

    Parameters
    ----------
    n : int, optional
        Rows, >= 1 (default 10,000).
    d : int, optional
        Features, >= 1 (default 38); n * d at most 1e8.
    rng : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator, optional
        Seed or Generator.

    Returns
    -------
    X : numpy.ndarray
        Shape (n, d), rows of unit l2 norm.
    y : numpy.ndarray
        Labels in {-1, +1}, shape (n,).

    Raises
    ------
    TypeError
        If ``n`` or ``d`` is not an integer, or ``rng`` is not a seed.
    ValueError
        If ``n`` or ``d`` is < 1, or n * d is above 1e8.

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Section 6.
    """
    n, d = _shape(n, d)
    rng = generator(rng)
    direction = rng.normal(size=d)
    direction /= np.linalg.norm(direction)
    offset = 0.3 * rng.normal(size=d) / np.sqrt(d)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = normalize_rows(y[:, None] * direction + 0.15 * rng.normal(size=(n, d)) + offset)
    y = np.where(rng.random(n) < 0.05, -y, y)
    return X, y


def synthetic_regression(n: int = 10_000, *, d: int = 77, rng: SeedLike = None) -> Dataset:
    """Targets in [-1, 1] from a noisy linear model, rows normalised.

    Shaped like the Twitter-buzz task of paper A (n = 10,000, d = 77); returns (X, y).

    Parameters
    ----------
    n : int, optional
        Rows, >= 1 (default 10,000).
    d : int, optional
        Features, >= 1 (default 77); n * d at most 1e8.
    rng : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator, optional
        Seed or Generator.

    Returns
    -------
    X : numpy.ndarray
        Shape (n, d), rows of unit l2 norm.
    y : numpy.ndarray
        Targets in [-1, 1], shape (n,).

    Raises
    ------
    TypeError
        If ``n`` or ``d`` is not an integer, or ``rng`` is not a seed.
    ValueError
        If ``n`` or ``d`` is < 1, or n * d is above 1e8.

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Section 6.
    """
    n, d = _shape(n, d)
    rng = generator(rng)
    X = normalize_rows(np.abs(rng.normal(size=(n, d))) ** 1.5)
    beta = rng.normal(size=d) / np.sqrt(d)
    y = np.clip(X @ beta * 2.0 + rng.normal(scale=0.1, size=n), -1.0, 1.0)
    return X, y


def _shape(n: object, d: object) -> tuple[int, int]:
    """(n, d) checked: integers >= 1 with n * d <= MAX_ELEMENTS."""
    rows, cols = bounded_int("n", n), bounded_int("d", d)
    if rows * cols > MAX_ELEMENTS:
        raise ValueError(f"n * d must be at most {MAX_ELEMENTS:g}, got n={rows}, d={cols}")
    return rows, cols


def split(X: FloatArray, y: FloatArray, *, n_train: int) -> tuple[Dataset, Dataset]:
    """First ``n_train`` rows for training, the rest as a public hold-out set.

    Parameters
    ----------
    X : numpy.ndarray
        Design matrix, one row per example, finite.
    y : numpy.ndarray
        Targets, one per row, finite.
    n_train : int
        Training rows, from 1 to len(y) - 1.

    Returns
    -------
    (X_train, y_train), (X_hold, y_hold) : tuple of numpy.ndarray
        Views of the inputs (of ``numpy.asarray`` of them).

    Raises
    ------
    TypeError
        If ``X`` or ``y`` is not a real array, or ``n_train`` is not an integer.
    ValueError
        If ``X`` or ``y`` has a non-finite entry, ``X`` is not at least 1-d, ``y`` is not 1-d
        with one entry per row of ``X``, or ``n_train`` is < 1 or >= len(y).
    """
    real_array("X", X)
    real_array("y", y)
    X, y = np.asarray(X), np.asarray(y)
    if X.ndim == 0:
        raise ValueError(f"X must have one row per example, got shape {X.shape}")
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must be 1-d with one entry per row of X: got {y.shape} for {X.shape}")
    n_train = bounded_int("n_train", n_train)
    if n_train >= len(y):
        raise ValueError(f"n_train must be < the number of rows {len(y)}, got {n_train}")
    return (X[:n_train], y[:n_train]), (X[n_train:], y[n_train:])


# KDD Cup 1999 labels: the 22 attack types of the training data, the 17 more of the test data, normal
KDD_ATTACKS = frozenset(
    """back buffer_overflow ftp_write guess_passwd imap ipsweep land loadmodule multihop neptune
nmap perl phf pod portsweep rootkit satan smurf spy teardrop warezclient warezmaster apache2 httptunnel mailbomb mscan
named processtable ps saint sendmail snmpgetattack snmpguess sqlattack udpstorm worm xlock xsnoop xterm""".split()
)
MIN_ROWS = 40  # rows an uploaded table needs: at least 20 to train on and 20 public hold-out rows
MAX_ROWS = 20_000  # larger tables are subsampled (with the rng) to this many rows
MAX_FEATURES = {"logistic": 500, "ridge": 80, "mean": 500}  # ridge releases d^2 + d numbers per trial


def _text(data: FileData, source: str) -> str:
    """Decode a file's bytes (or read a path) as UTF-8, with a plain message when it is not text."""
    if isinstance(data, Path):
        try:
            data = data.read_bytes()
        except OSError as exc:
            raise ValueError(f"{source}: cannot be read ({exc.strerror or exc})") from None
    if isinstance(data, str):
        return data
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"data must be bytes, str or a path, got {type(data).__name__}")
    try:
        return bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{source}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
            "save it as a UTF-8 CSV file"
        ) from None


def _number(cell: str, where: str) -> float:
    text = cell.strip()
    if not text:
        raise ValueError(f"{where}: empty cell (missing value)")
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{where}: {text[:30]!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{where}: {text[:30]!r} is not a finite number (NaN and infinity are not allowed)")
    return value


def read_table(data: FileData, *, source: str = "the file") -> tuple[list[str], FloatArray]:
    """A CSV table with a header row and numeric cells: (column names, values of shape (rows, columns)).

    Refuses, with a message naming the line and column: text that is not UTF-8, an empty file, line
    ends made of a carriage return alone (old Mac files), columns separated by semicolons or tabs (named,
    with how to save the file with commas), a missing or duplicated header, more than
    ``MAX_COLUMNS`` columns, cells longer than ``MAX_CELL`` characters, rows with a different number
    of fields, and cells that are empty, not numbers, NaN or infinite. Blank lines are skipped.
    Time and memory grow linearly with the file's size (numpy's CSV reader; a file it refuses is
    read again row by row only to name the first problem).

    Parameters
    ----------
    data : bytes, bytearray, memoryview, str or pathlib.Path
        The file's content (bytes are decoded as UTF-8), or a path to read.
    source : str, optional
        Name of the file in error messages (default "the file").

    Returns
    -------
    names : list of str
        The column names.
    values : numpy.ndarray
        Shape (rows, columns).

    Raises
    ------
    TypeError
        If ``data`` is of another type, or ``source`` is not a str.
    ValueError
        If the file cannot be read or is not a valid table, as above.
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be a str (the file's name in messages), got {type(source).__name__}")
    text = _text(data, source)
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        raise ValueError(
            f"{source} ends its lines with a carriage return alone (an old Mac format); save it with "
            "Unix (LF) or Windows (CRLF) line ends"
        )
    header_line, names, body_start = _header(text, source)
    body = text[body_start:]
    if not body.replace(",", "").strip():
        raise ValueError(f"{source} has a header but no data rows")
    # lines of spaces and commas only are blank rows (skipped), which numpy would not skip
    values = _values(_BLANK_ROWS.sub("", body), names, header_line, source)
    if values.shape[0] == 0:
        raise ValueError(f"{source} has a header but no data rows")
    return names, values


MAX_COLUMNS = 1_000  # columns an uploaded table may have (the tasks take at most 501)
MAX_CELL = 131_072  # characters in one cell (the csv module's field limit)
_BLANK_ROWS = re.compile(r"^[ \t,]+(?=\r?$)", re.MULTILINE)


def _header(text: str, source: str) -> tuple[int, list[str], int]:
    """The first non-blank line: (its line number, the column names, where the data start)."""
    line_no, start = 0, 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        line_no += 1
        line = text[start:end]
        if line.replace(",", "").strip():
            break
        start = end
    else:
        raise ValueError(f"{source} is empty: expected a header row and data rows")
    if len(line) > MAX_COLUMNS * (MAX_CELL + 1):
        raise ValueError(f"{source}, line {line_no}: the header is {len(line):,} characters long")
    if line.count(",") >= MAX_COLUMNS * 4:  # quoted commas aside, far too many columns: refused unread
        raise ValueError(f"{source}, line {line_no}: the header has over {MAX_COLUMNS:,} columns")
    if "," not in line:
        for separator, words in ((";", "semicolons (;)"), ("\t", "tabs")):
            if separator in line:
                raise ValueError(
                    f"{source}, line {line_no}: the columns are separated by {words}, not commas; save the file "
                    "as CSV with commas (a spreadsheet: Save as, CSV UTF-8, comma-separated; decimals with a "
                    "point: 1.5, not 1,5)"
                )
    try:
        header = next(csv.reader([line]))
    except csv.Error as exc:
        raise ValueError(f"{source}, line {line_no}: {_csv_problem(exc)}") from None
    if len(header) > MAX_COLUMNS:
        raise ValueError(f"{source}, line {line_no}: the header has {len(header):,} columns; at most {MAX_COLUMNS:,}")
    names = [h.strip() for h in header]
    if any(not name for name in names):
        raise ValueError(f"{source}, line {line_no}: the header has an empty column name")
    if all(_is_finite_number(name) for name in names):
        raise ValueError(f"{source}, line {line_no}: the first row holds numbers; add a header row naming the columns")
    counts: dict[str, int] = {}
    for name in names:  # one pass: a wide header costs its length, not its length squared
        counts[name] = counts.get(name, 0) + 1
    duplicates = sorted(name for name, count in counts.items() if count > 1)
    if duplicates:
        shown = ", ".join(name[:40] for name in duplicates[:10]) + (", ..." if len(duplicates) > 10 else "")
        raise ValueError(f"{source}: duplicated column names: {shown}")
    return line_no, names, end


def _is_finite_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _csv_problem(exc: csv.Error) -> str:
    if "field larger than field limit" in str(exc):
        return f"a cell longer than {MAX_CELL:,} characters"
    return f"not a CSV row ({exc})"


_CHUNK = 1 << 20  # characters numpy reads at a time
_DATA_LINE = re.compile(r"^[^\S\n]*\S", re.MULTILINE)  # a line with a character other than white space


def _data_lines(text: str) -> int:
    """How many lines of ``text`` hold more than white space: the most rows it can give."""
    return sum(1 for _ in _DATA_LINE.finditer(text))


def _values(body: str, names: list[str], header_line: int, source: str) -> FloatArray:
    """The data rows, read by numpy a chunk of whole lines at a time; a chunk numpy refuses (or with
    NaN) is read again row by row, which names the first problem."""
    values = np.empty((_data_lines(body), len(names)))  # blank lines take no room (a file of them asked for GiBs)
    count, start, line = 0, 0, header_line
    while start < len(body):
        end = body.find("\n", start + _CHUNK)
        end = len(body) if end < 0 else end + 1
        chunk = body[start:end]
        if chunk.strip():
            try:
                part = np.loadtxt(io.StringIO(chunk), delimiter=",", ndmin=2, comments=None, quotechar='"')
            except ValueError:
                part = None
            if part is None or part.shape[1] != len(names) or not np.isfinite(part).all():
                part = _checked_rows(chunk, names, line, source)
            values[count : count + len(part)] = part
            count += len(part)
        line += chunk.count("\n")
        start = end
    return values[:count]


def _checked_rows(body: str, names: list[str], header_line: int, source: str) -> FloatArray:
    """Rows read one by one (text numpy refused): the values, or a ValueError naming the first bad
    line (counted from ``header_line``) and column."""
    values = np.empty((_data_lines(body), len(names)))
    count = 0
    reader = csv.reader(io.StringIO(body))
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise ValueError(f"{source}, line {header_line + reader.line_num}: {_csv_problem(exc)}") from None
        if not any(c.strip() for c in row):
            continue
        line = header_line + reader.line_num
        if len(row) != len(names):
            raise ValueError(f"{source}, line {line}: {len(row)} fields, but the header has {len(names)}")
        try:
            parsed = np.array(row, dtype=float)
        except ValueError:
            parsed = None
        if parsed is None or not np.isfinite(parsed).all():
            cells = [_number(cell, f"{source}, line {line}, column {names[j][:40]!r}") for j, cell in enumerate(row)]
            parsed = np.array(cells, dtype=float)
        values[count] = parsed
        count += 1
    return values[:count].copy()


def table_task_data(
    names: Iterable[str],
    values: npt.ArrayLike,
    *,
    task: str,
    target: str | None = None,
    max_rows: int = MAX_ROWS,
    rng: SeedLike = None,
) -> tuple[tuple[FloatArray, FloatArray | None], tuple[FloatArray, FloatArray | None]]:
    """Training and hold-out data for ``task`` from a numeric table (see :func:`read_table`).

    ``target`` names the column to predict (logistic: exactly two distinct values, the larger
    one becomes +1; ridge: any numbers, scaled into [-1, 1] by the largest |value| in the file, a
    non-private step the app states); the mean task uses every column but ``target`` (which may be
    None). Features are scaled to unit l2 norm per row (logistic, ridge) or into the unit ball by
    the largest row norm (mean). Rows are shuffled with ``rng``; tables above ``max_rows`` are
    subsampled; half the rows train, half are the public hold-out set.
    Returns ``((X, y), (X_hold, y_hold))``; ``y`` is None for the mean task.

    Parameters
    ----------
    names : iterable of str
        Column names, one per column of ``values``.
    values : array_like
        Shape (rows, columns), finite.
    task : {"logistic", "ridge", "mean"}
        The task the data are for.
    target : str, optional
        The column to predict (required for logistic and ridge; default None).
    max_rows : int, optional
        Rows kept at most, from 40 to 1e8 (default 20,000).
    rng : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator, optional
        Seed or Generator for the shuffle.

    Returns
    -------
    (X, y), (X_hold, y_hold) : tuple
        Training and hold-out features (numpy.ndarray) and targets (numpy.ndarray, or None for
        the mean task).

    Raises
    ------
    TypeError
        If ``names`` is not an iterable of str, ``values`` is not a real array, ``target`` is
        not None or a str, ``max_rows`` is not an integer or ``rng`` is not a seed.
    ValueError
        If ``task`` is unknown; ``max_rows`` is outside [40, 1e8]; the shapes do not match or a
        value is not finite; ``target`` is
        missing or not a column; there is no feature column, or more than the task allows
        (logistic 500, ridge 80, mean 500); there are fewer than 40 rows; or, for the logistic
        task, the target does not hold exactly two classes, or a class misses one half.
    """
    if not isinstance(task, str) or task not in MAX_FEATURES:
        raise ValueError(f'task must be "logistic", "ridge" or "mean", got {value_text(task)}')
    if isinstance(names, str | bytes) or not isinstance(names, Iterable):
        raise TypeError(f"names must be an iterable of str (column names), got {type(names).__name__}")
    names = list(names)
    if not all(isinstance(name, str) for name in names):
        raise TypeError("names must be an iterable of str (column names)")
    if target is not None and not isinstance(target, str):
        raise TypeError(f"target must be None or a column name (str), got {type(target).__name__}")
    max_rows = bounded_int("max_rows", max_rows, MIN_ROWS, MAX_ELEMENTS)
    rng = generator(rng)
    values = real_array("values", values)
    if values.ndim != 2 or values.shape[1] != len(names):
        raise ValueError(f"values must have one column per name: got shape {values.shape} for {len(names)} names")
    if target is None and task != "mean":
        raise ValueError(f"choose the target column to predict (one of: {', '.join(names)})")
    if target is not None and target not in names:
        raise ValueError(f"target column {target!r} is not in the table; its columns are: {', '.join(names)}")
    features = [j for j, name in enumerate(names) if name != target]
    if not features:
        raise ValueError("the table needs at least one feature column besides the target")
    if len(features) > MAX_FEATURES[task]:
        raise ValueError(f"the {task} task takes at most {MAX_FEATURES[task]} feature columns, got {len(features)}")
    rows = values.shape[0]
    if rows < MIN_ROWS:
        raise ValueError(
            f"too few rows to train on: {rows}; the experiments need at least {MIN_ROWS} "
            f"({MIN_ROWS // 2} to train, {MIN_ROWS // 2} public hold-out)"
        )
    order = rng.permutation(rows)[:max_rows]
    X = values[order][:, features]
    y = None if target is None else values[order, names.index(target)]
    half = X.shape[0] // 2
    if task == "mean":
        largest = np.linalg.norm(X, axis=1).max()
        X = X / largest if largest > 0 else X
    elif y is None:  # excluded above: the logistic and ridge tasks require a target
        raise ValueError(f"the {task} task needs a target column")
    elif task == "logistic":
        labels = np.unique(y)
        if labels.size != 2:
            shown = ", ".join(f"{v:g}" for v in labels[:5]) + (", ..." if labels.size > 5 else "")
            raise ValueError(
                f"target column {target!r} must hold exactly two classes for the logistic task; it "
                f"has {labels.size} distinct values ({shown})"
            )
        y = np.where(y == labels[1], 1.0, -1.0)
        X = normalize_rows(X)
        if np.unique(y[:half]).size < 2 or np.unique(y[half:]).size < 2:
            raise ValueError(
                f"target column {target!r}: one class is too rare to appear in both the training and the hold-out half"
            )
    else:
        scale = np.abs(y).max()
        y = y / scale if scale > 0 else y
        X = normalize_rows(X)
    train_y, hold_y = (None, None) if y is None else (y[:half], y[half:])
    return (X[:half], train_y), (X[half:], hold_y)


def _lines(path: str | Path, source: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, comma-separated fields) of each non-blank line of a text file."""
    text = _text(Path(path), source)
    for line_no, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield line_no, line.strip().split(",")


def load_kddcup(path: str | Path, *, max_rows: int | None = None) -> Dataset:
    """KDD Cup 1999 (``kddcup.data_10_percent`` format): duration plus the 37 numeric columns
    (fields 0 and 4-40) as features, label +1 for the known attack types and -1 for ``normal.``;
    rows normalised. An unknown label, a non-numeric or non-finite feature is refused with its line.

    Parameters
    ----------
    path : str or path-like
        The data file (UTF-8 text, 42 comma-separated fields per line).
    max_rows : int, optional
        Read at most this many rows, from 1 to 1e8 (default None: all).

    Returns
    -------
    X : numpy.ndarray
        Shape (rows, 38), rows of unit l2 norm.
    y : numpy.ndarray
        Labels in {-1, +1}, shape (rows,).

    Raises
    ------
    TypeError
        If ``path`` is not a str or path-like, or ``max_rows`` is not an integer.
    ValueError
        If the file cannot be read, is not UTF-8, has no data rows, or a line is refused as
        above; or ``max_rows`` is outside [1, 1e8].

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Section 6 (the logistic regression data).
    """
    path = Path(file_path("path", path))
    limit = None if max_rows is None else bounded_int("max_rows", max_rows, 1, MAX_ELEMENTS)
    rows: list[list[float]] = []
    labels: list[float] = []
    for line_no, fields in _lines(path, str(path)):
        where = f"{path}, line {line_no}"
        if len(fields) != 42:
            raise ValueError(f"{where}: expected 42 comma-separated fields, got {len(fields)}")
        rows.append(
            [
                _number(v, f"{where}, field {j}")
                for j, v in zip([0, *range(4, 41)], [fields[0], *fields[4:41]], strict=True)
            ]
        )
        label = fields[41].strip().rstrip(".")
        if label == "normal":
            labels.append(-1.0)
        elif label in KDD_ATTACKS:
            labels.append(1.0)
        else:
            raise ValueError(
                f"{where}: unknown label {fields[41].strip()!r} (expected normal. or a KDD Cup 99 attack "
                "type such as smurf.)"
            )
        if limit is not None and len(rows) >= limit:
            break
    if not rows:
        raise ValueError(f"{path}: no data rows")
    return normalize_rows(np.array(rows)), np.array(labels)


def load_twitter_buzz(path: str | Path, *, max_rows: int | None = None, max_popularity: float | None = None) -> Dataset:
    """UCI Buzz in social media, Twitter file: 77 features and the popularity target per row.

    Features are rows normalised; the target is log(1 + popularity) scaled into [-1, 1] by
    log(1 + ``max_popularity``), by default the largest popularity in the file (a non-private
    step: give a public bound for a truly private run). Non-numeric, non-finite or negative
    values are refused with their line.

    Parameters
    ----------
    path : str or path-like
        The data file (UTF-8 text, 78 comma-separated values per line; field 77 is the popularity).
    max_rows : int, optional
        Read at most this many rows, from 1 to 1e8 (default None: all).
    max_popularity : float, optional
        Public bound on the popularity, > 0 (default None: the largest in the file).

    Returns
    -------
    X : numpy.ndarray
        Shape (rows, 77), rows of unit l2 norm.
    y : numpy.ndarray
        The scaled target, shape (rows,).

    Raises
    ------
    TypeError
        If ``path`` is not a str or path-like, or ``max_rows`` or ``max_popularity`` has the
        wrong type.
    ValueError
        If the file cannot be read, is not UTF-8, has no data rows, or a value is refused as
        above; if ``max_rows`` is outside [1, 1e8]; or if ``max_popularity`` is not > 0 or is below a
        popularity in the file.

    References
    ----------
    Paper A [WWRR22] (Whitehouse, Wu, Ramdas & Rogers), Section 6 (the ridge regression data).
    """
    path = Path(file_path("path", path))
    limit = None if max_rows is None else bounded_int("max_rows", max_rows, 1, MAX_ELEMENTS)
    bound_given = None if max_popularity is None else positive("max_popularity", max_popularity)
    data: list[list[float]] = []
    for line_no, fields in _lines(path, str(path)):
        where = f"{path}, line {line_no}"
        if len(fields) != 78:
            raise ValueError(f"{where}: expected 78 comma-separated values, got {len(fields)}")
        data.append([_number(v, f"{where}, field {j}") for j, v in enumerate(fields)])
        if data[-1][77] < 0:
            raise ValueError(f"{where}: popularity (field 77) must be >= 0, got {data[-1][77]:g}")
        if limit is not None and len(data) >= limit:
            break
    if not data:
        raise ValueError(f"{path}: no data rows")
    arr = np.array(data)
    target = np.log1p(arr[:, 77])
    bound = target.max() if bound_given is None else math.log1p(bound_given)
    if (target > bound).any():
        raise ValueError(f"max_popularity {max_popularity:g} is below a popularity in the file")
    return normalize_rows(arr[:, :77]), target / bound if bound > 0 else target
