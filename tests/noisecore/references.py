"""Stored mpmath references: the expensive oracle values of :mod:`tests.noisecore.oracles`, computed once
by ``make_references.py`` and read from ``data/references.json`` by the tests (the ``reference`` fixture).

Every stored value comes from an oracle (mpmath), never from noisecore. Three modes:

- default: read the stored value (one not stored yet is computed with mpmath, as before, and the
  terminal summary of a run without pytest-xdist names it: run the script to store it);
- ``--recompute-oracles``: compute the value with mpmath and fail unless the stored one agrees;
- ``--write-oracles`` (used by ``make_references.py``): compute every value and write it to a part file
  per process, which the script joins into the stored file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import mpmath as mp

from . import oracles

DATA = Path(__file__).parent / "data" / "references.json"
AGREE = 1e-12  # relative: a stored double against the same oracle recomputed (mpmath at 25-40 digits)


def _arg(value: object) -> str:
    """One argument as key text: numbers at 15 digits (the key survives a last-bit change of an input
    the code computes, such as a calibrated parameter), sequences element by element."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_arg(v) for v in value) + "]"
    return format(float(value), ".15g")


def key(oracle: str, *args: object, **kwargs: object) -> str:
    """The stored key of ``oracles.<oracle>(*args, **kwargs)``."""
    parts = [_arg(a) for a in args] + [f"{k}={_arg(v)}" for k, v in sorted(kwargs.items())]
    return f"{oracle}({', '.join(parts)})"


def _plain(value: object) -> float | list[float]:
    """An oracle's result (mpf, float or a tuple of them) as JSON numbers."""
    if isinstance(value, tuple | list):
        return [float(v) for v in value]
    return float(value)  # type: ignore[arg-type]


def _agree(stored: float | list[float], fresh: float | list[float]) -> bool:
    pairs = zip(stored, fresh, strict=True) if isinstance(stored, list) else [(stored, fresh)]
    return all(math.isclose(s, f, rel_tol=AGREE, abs_tol=0.0) for s, f in pairs)


class References:
    """The ``reference`` fixture: ``reference("arete_pdf", t, alpha, theta, lam, dps=40)`` is the stored
    value of ``oracles.arete_pdf(t, alpha, theta, lam, dps=40)`` as a float (a list for a tuple)."""

    def __init__(self, mode: str = "stored", path: Path = DATA, part: Path | None = None) -> None:
        self.mode, self.path, self.part = mode, path, part or path.with_name(f"{path.stem}.main.part.json")
        self.stored: dict[str, float | list[float]] = {}
        if path.exists():
            self.stored = read(path)
        self.written: dict[str, float | list[float]] = {}
        self.live: list[str] = []

    def __call__(self, oracle: str, *args: object, **kwargs: object) -> float | list[float]:
        name = key(oracle, *args, **kwargs)
        if self.mode == "stored":
            if name in self.stored:
                return self.stored[name]
            self.live.append(name)  # not stored yet: computed with mpmath as before, and named in the summary
            return _plain(getattr(oracles, oracle)(*args, **kwargs))
        fresh = _plain(getattr(oracles, oracle)(*args, **kwargs))
        if self.mode == "write":
            self.written[name] = fresh
            write(self.written, self.part)  # at once: a stopped run keeps what it computed
        elif name not in self.stored or not _agree(self.stored[name], fresh):
            raise AssertionError(f"stored {name} = {self.stored.get(name)!r}, mpmath now gives {fresh!r}")
        return fresh


def write(values: dict[str, float | list[float]], path: Path = DATA) -> None:
    """Write references as the stored file's JSON document."""
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "about": "mpmath references of tests/noisecore/oracles.py, written by tests/noisecore/make_references.py; "
        "never computed by noisecore. Keys: oracle(arguments at 15 digits, keywords).",
        "mpmath": mp.__version__,
        "values": dict(sorted(values.items())),
    }
    path.write_text(json.dumps(document, indent=1) + "\n")


def read(path: Path = DATA) -> dict[str, float | list[float]]:
    return json.loads(path.read_text())["values"]
