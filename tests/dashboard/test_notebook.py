"""The tour notebook executes headlessly, every view renders inline, and no output links off the page."""

import re

import nbformat
import pytest

from tests.conftest import TOUR


def external_links(nb) -> list[str]:
    """Scripts and style sheets an output loads from another host (icons are not fetched)."""
    found = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            for mime in ("text/html", "application/javascript"):
                text = out.get("data", {}).get(mime, "")
                found += re.findall(r'<(?:script|link)(?![^>]*icon)[^>]+(?:src|href)="(https?://[^"]+)', text)
                found += re.findall(r'"url":\s*"(https?://[^"]+)', text)  # Bokeh style sheet models
    return found


@pytest.mark.notebook
def test_tour_notebook_executes(executed_tour):
    nb = executed_tour
    outputs = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])]
    assert not [out for out in outputs if out.output_type == "error"]
    rendered = [
        out
        for out in outputs
        if out.output_type in ("display_data", "execute_result")
        and "application/vnd.holoviews_exec.v0+json" in out.get("data", {})
    ]
    assert len(rendered) >= 12  # 7 HoloViews figures, 5 live Panel views
    text = "".join(out.get("text", "") for out in outputs if out.output_type == "stream")
    assert "worst-case epsilon 5.99966" in text
    assert external_links(nb) == []


def test_every_step_is_a_lecture_step():
    nb = nbformat.read(TOUR, as_version=4)
    steps = [c.source for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("## Step")]
    assert len(steps) == 5
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert text.count("**Question.**") == 5 and text.count("**What to notice.**") == 5
    assert text.count("**Exercise.**") == 5 and text.count("<details><summary><b>Answer</b></summary>") == 5
    setup = nb.cells[1].source
    assert 'hv.extension("bokeh", inline=True' in setup and 'pn.extension("katex", inline=True)' in setup
