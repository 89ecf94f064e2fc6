"""Data: deterministic synthetic sets shaped like paper A's, and loaders for the real files."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._validation import positive_int


def normalize_rows(X) -> np.ndarray:
    """Scale each row to unit l2 norm (a per-row map, so sensitivities stay valid); zero rows stay 0."""
    X = np.asarray(X, dtype=float)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return np.divide(X, norms, out=np.zeros_like(X), where=norms > 0)


def synthetic_classification(n=10_000, d=38, *, seed=0):
    """Two noisy clusters around +m and -m (KDD-99-like: classes well separated by direction),
    5% of labels flipped, rows normalised. Shaped like paper A's logistic task; returns (X, y)."""
    n, d = positive_int("n", n), positive_int("d", d)
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=d)
    direction /= np.linalg.norm(direction)
    offset = 0.3 * rng.normal(size=d) / np.sqrt(d)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = normalize_rows(y[:, None] * direction + 0.15 * rng.normal(size=(n, d)) + offset)
    y = np.where(rng.random(n) < 0.05, -y, y)
    return X, y


def synthetic_regression(n=10_000, d=77, *, seed=1):
    """Targets in [-1, 1] from a noisy linear model, rows normalised.

    Shaped like the Twitter-buzz task of paper A (n = 10,000, d = 77); returns (X, y).
    """
    n, d = positive_int("n", n), positive_int("d", d)
    rng = np.random.default_rng(seed)
    X = normalize_rows(np.abs(rng.normal(size=(n, d))) ** 1.5)
    beta = rng.normal(size=d) / np.sqrt(d)
    y = np.clip(X @ beta * 2.0 + rng.normal(scale=0.1, size=n), -1.0, 1.0)
    return X, y


def split(X, y, n_train):
    """First ``n_train`` rows for training, the rest as a public hold-out set."""
    n_train = positive_int("n_train", n_train)
    if n_train >= len(y):
        raise ValueError(f"n_train must be < the number of rows {len(y)}, got {n_train}")
    return (X[:n_train], y[:n_train]), (X[n_train:], y[n_train:])


def load_kddcup(path, *, max_rows=None):
    """KDD Cup 1999 (``kddcup.data_10_percent`` format): duration plus the 37 numeric columns
    (fields 0 and 4-40) as features, label +1 for attacks and -1 for ``normal.``; rows normalised."""
    rows, labels = [], []
    for line_no, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.strip().split(",")
        if len(fields) != 42:
            raise ValueError(f"{path}:{line_no}: expected 42 comma-separated fields, got {len(fields)}")
        try:
            rows.append([float(fields[0]), *(float(v) for v in fields[4:41])])
        except ValueError as exc:
            raise ValueError(f"{path}:{line_no}: non-numeric feature ({exc})") from None
        labels.append(-1.0 if fields[41].strip().rstrip(".") == "normal" else 1.0)
        if max_rows is not None and len(rows) >= max_rows:
            break
    if not rows:
        raise ValueError(f"{path}: no data rows")
    return normalize_rows(np.array(rows)), np.array(labels)


def load_twitter_buzz(path, *, max_rows=None):
    """UCI Buzz in social media, Twitter file: 77 features and the popularity target per row.

    Features are rows normalised; the target is log(1 + popularity) scaled into [-1, 1]
    by its maximum over the file (a public, data-independent bound should replace it for a
    truly private run)."""
    data = []
    for line_no, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.strip().split(",")
        if len(fields) != 78:
            raise ValueError(f"{path}:{line_no}: expected 78 comma-separated values, got {len(fields)}")
        try:
            data.append([float(v) for v in fields])
        except ValueError as exc:
            raise ValueError(f"{path}:{line_no}: non-numeric value ({exc})") from None
        if max_rows is not None and len(data) >= max_rows:
            break
    if not data:
        raise ValueError(f"{path}: no data rows")
    arr = np.array(data)
    if (arr[:, 77] < 0).any():
        raise ValueError(f"{path}: popularity must be >= 0")
    target = np.log1p(arr[:, 77])
    scale = target.max() if target.max() > 0 else 1.0
    return normalize_rows(arr[:, :77]), target / scale
