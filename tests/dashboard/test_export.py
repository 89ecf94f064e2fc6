"""Exports: written with the csv module, safe in a spreadsheet (OWASP's CSV injection advice), and
carrying every setting and every figure of the headline, so a view can be re-created from its file."""

from __future__ import annotations

import csv
import io
import math

import pytest

from dashboard.app import NoiseLab
from dashboard.export import FORMULA_STARTS, comment, csv_document, neutralise, settings_line
from dashboard.models import DEFAULTS

PAYLOADS = ['=HYPERLINK("http://x","y")', "+1+2", "-2+3", "@SUM(A1)", "\tx=1", "\rx=1", "=cmd|' /C calc'!A0"]


def cells(text: str) -> list[list[str]]:
    """Every cell as a spreadsheet splits the file: comment lines too, at their commas."""
    return list(csv.reader(io.StringIO(text)))


def is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def dangerous(rows) -> list[str]:
    """Cells a spreadsheet would run as a formula, leading spaces aside (a number such as -2 is a number)."""
    return [
        value for row in rows for value in row if value.lstrip(" ").startswith(FORMULA_STARTS) and not is_number(value)
    ]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_outside_text_never_starts_a_cell_with_a_formula(payload):
    text = csv_document(
        ["settings: " + settings_line({"file": payload + ".csv", "target_column": payload}), f"note, {payload}"],
        ["epsilon", payload],
        [[1.5, payload], [-2.0, None], [float("inf"), f"a,{payload}"]],
    )
    rows = cells(text)
    assert dangerous(rows) == [], text
    assert ["-2", ""] == rows[-2]  # the lab's own numbers stay numbers (a negative one too)
    assert rows[2] == ["epsilon", neutralise(payload)] and neutralise(payload).startswith("'")
    assert all(len(line) == 1 or not line[0].startswith('"#') for line in text.splitlines())  # comments unquoted


def test_comments_and_cells_stay_on_their_lines():
    assert comment("a\nb\rc") == "# a b c"
    assert neutralise("x\ny") == "x y"
    assert len(csv_document(["one\ntwo"], ["h"], [["p\nq"]]).splitlines()) == 3


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_crafted_file_name_and_column_are_neutralised_in_the_experiments_export(payload):
    """An uploaded file named, and a column headed, by a payload: the experiments export's cells never start
    with a formula character."""
    lab = NoiseLab()
    view = lab.experiments
    name = payload.replace("\t", "").replace("\r", "") or "x"
    view.accept_upload(b"a,b\n1,2\n", f"{name}.csv", ["a", payload])
    text = view.csv_preamble() + view.csv_text()
    assert dangerous(cells(text)) == [], text
    assert "settings:" in text and "target_column=" in text


@pytest.fixture(scope="module")
def lab():
    lab = NoiseLab()
    lab.settings.param.update(epsilon=2.5, delta=1e-5, seed=7, stop_rule="confidence")
    yield lab
    lab.end_session()


def parse_settings(text: str) -> dict:
    line = next(line for line in text.splitlines() if line.startswith("# settings: "))
    out = {}
    for pair in line[len("# settings: ") :].split(" "):
        name, _, value = pair.partition("=")
        default = DEFAULTS.get(name)
        if isinstance(default, bool) or default is None:
            continue
        out[name] = type(default)(float(value)) if isinstance(default, int | float) else value
    return out


@pytest.mark.sweep
@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_a_view_is_re_created_from_its_export(lab, index):
    """Each export states every setting used and the headline with its figures; a fresh lab given the
    file's settings shows the same headline (the experiments tab's run is checked by its own tests)."""
    view = lab.views[index]
    lab.tabs.active = index
    view.set_active(True, now=True)
    text = view.csv_preamble() + view.csv_text()
    settings = parse_settings(text)
    assert set(settings) >= {"epsilon", "delta", "rho", "target", "sensitivity", "seed", "stop_rule", "example"}
    headline = next(line for line in text.splitlines() if line.startswith("# headline: "))
    figures = next(line for line in text.splitlines() if line.startswith("# headline figures: "))
    for pair in figures[len("# headline figures: ") :].split(" "):
        name, _, value = pair.partition("=")
        shown = view.claim.figures[name]
        assert float(value) == pytest.approx(float(shown), rel=1e-11) or (
            math.isinf(float(value)) and math.isinf(shown)
        )
    again = NoiseLab()
    again.settings.param.update(**settings)
    other = again.views[index]
    again.tabs.active = index
    other.set_active(True, now=True)
    assert f"# headline: {other.claim.text.lstrip('# ')}".replace("*", "") == headline.replace("*", "")
    again.end_session()
