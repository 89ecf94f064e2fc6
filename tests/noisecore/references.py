"""Stored mpmath references: the expensive oracle values of :mod:`tests.noisecore.oracles`, computed once
by ``make_references.py`` and read from ``data/references.json`` by the tests (the ``reference`` fixture).

Every stored value comes from an oracle (mpmath), never from noisecore. Three modes:

- default: read the stored value (a missing one fails, naming the script to run);
- ``--recompute-oracles``: compute the value with mpmath and fail unless the stored one agrees;
- ``--write-oracles`` (used by ``make_references.py``): compute every value and rewrite the file.
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

    def __init__(self, mode: str = "stored", path: Path = DATA) -> None:
        self.mode, self.path = mode, path
        self.stored: dict[str, float | list[float]] = {}
        if path.exists():
            self.stored = json.loads(path.read_text())["values"]
        self.written: dict[str, float | list[float]] = {}

    def __call__(self, oracle: str, *args: object, **kwargs: object) -> float | list[float]:
        name = key(oracle, *args, **kwargs)
        if self.mode == "stored":
            if name not in self.stored:
                raise LookupError(f"no stored reference {name}: run python tests/noisecore/make_references.py")
            return self.stored[name]
        fresh = _plain(getattr(oracles, oracle)(*args, **kwargs))
        if self.mode == "write":
            self.written[name] = fresh
        elif name not in self.stored or not _agree(self.stored[name], fresh):
            raise AssertionError(f"stored {name} = {self.stored.get(name)!r}, mpmath now gives {fresh!r}")
        return fresh

    def write(self) -> None:
        """Rewrite the file with the values computed in this run (``--write-oracles``)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        document = {
            "about": "mpmath references of tests/noisecore/oracles.py, written by tests/noisecore/make_references.py; "
            "never computed by noisecore. Keys: oracle(arguments at 15 digits, keywords).",
            "mpmath": mp.__version__,
            "values": dict(sorted(self.written.items())),
        }
        self.path.write_text(json.dumps(document, indent=1) + "\n")
