"""CSV exports written with the ``csv`` module, safe to open in a spreadsheet (UI-free).

Every cell is quoted where it must be (a comma, a quote, a line break), and text that came from outside
(a file name, a column name) never starts a cell with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return: such a cell is prefixed with a single quote, as OWASP's "CSV injection" page advises, so a
spreadsheet shows it as text instead of running it as a formula. Numbers are written by the lab itself
(general format, 10 significant digits) and are left as numbers.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Sequence

__all__ = ["FORMULA_STARTS", "csv_document", "neutralise", "settings_line", "slug"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise(text: str) -> str:
    """``text`` that a spreadsheet will not read as a formula: a leading ``'`` where it begins with one of
    ``FORMULA_STARTS``; line breaks inside it become spaces (one cell stays on one line)."""
    text = str(text)
    if text.startswith(FORMULA_STARTS):
        text = "'" + text
    return text.replace("\r", " ").replace("\n", " ")


def cell(value) -> str:
    """A number in general format (10 significant digits; empty when missing or not finite), an integer as
    is, text neutralised."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.10g}" if math.isfinite(value) else ""
    return neutralise(value)


def _setting(value) -> str:
    if isinstance(value, float):
        return f"{value:.12g}"
    if isinstance(value, tuple | list):  # a range: no comma, so the line stays one cell
        return "..".join(_setting(v) for v in value)
    return neutralise(str(value))


def comment(text: str) -> str:
    """``# text`` on one line, unquoted (so readers that skip ``#`` lines skip it), each piece a spreadsheet
    would split off at a comma neutralised."""
    first, *rest = text.replace("\r", " ").replace("\n", " ").split(",")
    pieces = [first]
    for piece in rest:
        bare = piece.lstrip(" ")
        pieces.append(piece[: len(piece) - len(bare)] + neutralise(bare) if bare else piece)
    return "# " + ",".join(pieces)


def settings_line(settings: dict) -> str:
    """``name=value`` pairs separated by spaces (floats to 12 digits, ranges as ``low..high``, outside text
    neutralised)."""
    return " ".join(f"{name}={_setting(value)}" for name, value in settings.items())


def csv_document(comments: Iterable[str | Sequence], header: Sequence[str], rows: Iterable[Sequence]) -> str:
    """Comment lines, then the header and the rows, via ``csv``. A comment is a text (one cell, ``# `` and
    the text) or a row whose first cell gets the ``# `` (a small table inside the comments)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for line in comments:
        if isinstance(line, str):
            out.write(comment(line) + "\n")
        else:
            first, *rest = line
            writer.writerow(["# " + neutralise(first), *(cell(value) for value in rest)])
    if header:
        writer.writerow([cell(name) for name in header])
    for row in rows:
        writer.writerow([cell(value) for value in row])
    return out.getvalue()


def slug(text: str) -> str:
    """Lower-case words joined by hyphens: a file name's part."""
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))
