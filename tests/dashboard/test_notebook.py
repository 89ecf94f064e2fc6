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


def test_the_docs_map_the_notebook_steps_to_the_app_tour():
    """docs/teaching.md said the notebook's steps match the app's tour; they did not (five against six,
    issue 43). Its table names every notebook heading and every tour step, in the notebook's order."""
    import re
    from pathlib import Path

    from dashboard.tour import TOUR as APP_TOUR

    nb = nbformat.read(TOUR, as_version=4)
    headings = [
        c.source.splitlines()[0].removeprefix("## Step ")
        for c in nb.cells
        if c.cell_type == "markdown" and c.source.startswith("## Step")
    ]
    docs = (Path(__file__).resolve().parents[2] / "docs" / "teaching.md").read_text()
    section = docs.split("## The same tour in Jupyter", 1)[1]
    rows = [line.split("|")[1:3] for line in section.splitlines() if re.match(r"\| \d\. ", line)]
    assert [row[0].strip() for row in rows] == headings
    named = " ".join(row[1] for row in rows)
    for k, step in enumerate(APP_TOUR, start=1):
        assert f"{k}. {step.title}" in named, step.title


def cdn_style_sheets(text: str) -> list[str]:
    """Addresses of style sheets a Bokeh document or message links off the machine (Panel's CDN or its
    local path, which a notebook cannot serve). Panel 1.10's models also name their JavaScript on the CDN
    as a fallback the page loads only when missing (KaTeX, inlined here): not style sheets, not counted."""
    return re.findall(
        r"ImportedStyleSheet.{0,80}?url.{0,12}?((?:https://cdn\.holoviz\.org|static/extensions)[^\"\\]*)", text
    )


def test_a_live_view_s_updates_link_no_style_sheet_off_the_machine(monkeypatch):
    """In JupyterLab, moving a live view's slider made its Markdown panes send their style sheets again as
    links to Panel's CDN (12 requests, 28 with every live view; issue 43): with ``inline_style_sheets()``
    the messages a live update sends carry ``data:`` sheets at most, and no address off the machine."""
    import asyncio

    import panel as pn
    import panel.io.notebook as panel_notebook
    from panel.io.state import state

    from dashboard.models import Settings
    from dashboard.notebook import inline_style_sheets
    from dashboard.views import RewindView

    monkeypatch.setattr(pn.config, "inline", True)
    monkeypatch.setattr(pn.extension, "_loaded", True)  # as after pn.extension(inline=True) in the tour
    monkeypatch.setattr(pn.viewable.Viewable, "_preprocessing_hooks", list(pn.viewable.Viewable._preprocessing_hooks))
    inline_style_sheets()
    settings = Settings(seed=0)
    live = pn.panel(RewindView(settings))
    first, _ = live._repr_mimebundle_()
    assert cdn_style_sheets(str(first)) == []
    ref = next(ref for ref, view in state._views.items() if view[0] is live)
    comm = state._views[ref][3]
    sent = []
    monkeypatch.setattr(comm, "_comm", True)  # as if the browser had opened it
    monkeypatch.setattr(panel_notebook, "send", lambda _comm, msg: sent.append(msg.content_json))
    loop = asyncio.new_event_loop()
    try:
        for epsilon in (3.0, 5.0):
            settings.epsilon = epsilon
            settings.param.trigger("committed")
            loop.run_until_complete(asyncio.sleep(0.5))
    finally:
        loop.close()
    assert sent, "the update sent nothing: the check would pass vacuously"
    assert [sheet for message in sent for sheet in cdn_style_sheets(message)] == []
    state._views.pop(ref, None)


def test_the_tour_composes_its_figures_in_one_column():
    """A tour cell laid three figures side by side, 2,728 px wide (issue 43): composed cells use one column."""
    cells = [c.source for c in nbformat.read(TOUR, as_version=4).cells if c.cell_type == "code"]
    composed = [line for source in cells for line in source.splitlines() if "_plot(" in line and ") + " in line]
    assert composed and all(".cols(1)" in line for line in composed), composed
