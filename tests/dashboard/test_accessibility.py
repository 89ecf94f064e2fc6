"""Plots for every student: drawn colours at WCAG 1.4.11's 3:1 against the plot, each figure described
in words that follow the sliders, and its plotted data as a table."""

import html
import re

import numpy as np
import pytest
from bokeh.models import Band, ColumnDataSource, GlyphRenderer, Span, Whisker
from bokeh.plotting import figure

from dashboard.app import NoiseLab
from dashboard.claims import fmt
from dashboard.describe import describe_figure, figure_table_html
from dashboard.palette import PALETTE


def _channel(value):
    value = value / 255
    return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4


def contrast_on_white(hex_colour: str, alpha: float = 1.0) -> float:
    """WCAG 2.1's contrast ratio of a colour drawn with ``alpha`` over white."""
    rgb = [int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)]
    blended = [alpha * c + (1 - alpha) * 255 for c in rgb]
    lum = sum(w * _channel(c) for w, c in zip((0.2126, 0.7152, 0.0722), blended, strict=True))
    return 1.05 / (lum + 0.05)


def test_contrast_formula_against_known_pairs():
    """WCAG's own anchors: black on white 21:1, #767676 the lightest grey at 4.5:1, white 1:1."""
    assert contrast_on_white("#000000") == pytest.approx(21.0)
    assert contrast_on_white("#767676") == pytest.approx(4.54, abs=0.01)
    assert contrast_on_white("#FFFFFF") == pytest.approx(1.0)
    assert contrast_on_white("#000000", alpha=0.0) == pytest.approx(1.0)


@pytest.mark.parametrize("role", sorted(PALETTE))
def test_every_palette_colour_meets_three_to_one(role):
    assert contrast_on_white(PALETTE[role]) >= 3.0, role


@pytest.fixture(scope="module")
def lab():
    lab = NoiseLab()
    for index in range(len(lab.VIEW_CLASSES)):
        lab.tabs.active = index
    lab.experiments.run_button.clicks += 1
    return lab


def _colours(model, kind, source):
    """(hex colour, alpha) pairs a glyph or annotation draws for ``kind`` (line or fill)."""
    colour = getattr(model, f"{kind}_color", None)
    alpha = getattr(model, f"{kind}_alpha", 1.0)
    alpha = alpha if isinstance(alpha, int | float) else 1.0
    if isinstance(colour, str) and colour.startswith("#"):
        return [(colour, alpha)]
    field = colour.get("field") if isinstance(colour, dict) else getattr(colour, "field", None)
    if field and source is not None:
        return [(c, alpha) for c in source.data.get(field, [])]
    return []


def drawn_parts(fig):
    """Every glyph and annotation of a figure with its line and fill colours."""
    for renderer in fig.renderers:
        if isinstance(renderer, GlyphRenderer) and renderer.data_source.data:
            yield renderer.glyph, renderer.data_source
    for annotation in fig.center:
        if isinstance(annotation, Span | Band | Whisker):
            yield annotation, getattr(annotation, "source", None)


def test_every_drawn_colour_meets_three_to_one(lab):
    """WCAG 1.4.11: every plotted line, marker and bar is at least 3:1 against the white plot, its alpha
    blended in; a part drawn both ways passes on its outline or its fill. Parts drawn invisible (alpha 0:
    an unseen segment that widens an axis) do not count."""
    checked = 0
    for view in lab.views:
        for fig in view.figures:
            assert fig.background_fill_color in ("#ffffff", "white"), fig.title.text
            for part, source in drawn_parts(fig):
                shown = [
                    contrast_on_white(c, a)
                    for kind in ("line", "fill")
                    for c, a in _colours(part, kind, source)
                    if a > 0
                ]
                if not shown:
                    continue
                checked += 1
                assert max(shown) >= 3.0, (view.title, fig.title.text, type(part).__name__, shown)
    assert checked >= 60


def test_every_figure_is_placed_with_its_description_and_table_toggle(lab):
    for view in lab.views:
        for fig in view.figures:
            if fig.id not in view._plot_parts:  # the d = 2 plane is built on first use
                continue
            placed = view._plot_parts[fig.id]
            assert list(placed.block)[1].object is fig
            assert fig.title.text in html.unescape(placed.description.object)
            assert placed.toggle.label == f"Data table: {fig.title.text}"
            assert placed.table is None  # built when first opened
            assert len(placed.block) == 3


def _words(view, fig) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", view._plot_parts[fig.id].description.object))


@pytest.mark.parametrize("epsilon", [0.05, 1.0, 20.0])
def test_the_rewind_descriptions_state_the_plotted_numbers_and_follow_the_slider(epsilon):
    """The privacy plot's description names the ex-post epsilon's range from the scenario itself and the
    headline on screen, at the defaults and both ends of the epsilon slider."""
    lab = NoiseLab()
    lab.settings.epsilon = epsilon
    view = lab.rewind
    sc = view.scenario
    words = _words(view, view.fig_privacy)
    psi = np.asarray(sc.frame_epsilon, dtype=float)
    assert f"{len(psi)} points, values {fmt(psi.min(), 3)} to {fmt(psi.max(), 3)}" in words
    assert "Headline: " + re.sub(r"[*#]", "", view.claim.text).strip()[:40] in words
    walk = _words(view, view.fig_line)
    assert f"release times: {len(sc.frame_times)} points" in walk
    errors = np.asarray(sc.frame_error, dtype=float)
    assert f"values {fmt(errors.min(), 3)} to {fmt(errors.max(), 3)}" in _words(view, view.fig_error)


def test_the_walk_description_follows_the_release_the_browser_shows():
    """The browser draws releases itself (Play, steps) and tells the server only the slider's release;
    the walk plot's description read the server's copy of the dot, so after Play it named release 1's
    value and after Reset release 57's. It names the slider's release, word for word as after the
    server's own redraw of that release."""
    lab = NoiseLab()
    view = lab.rewind
    sc = view.scenario
    for k in (30, 0, 119):
        view.frame.value = k  # as the browser sends it: the server's dot is not redrawn
        heard = _words(view, view.fig_line)
        assert f"current release: 1 point, values {fmt(float(sc.frame_values[k][0]), 3)}" in heard, heard
        view.show_frame(k)  # the server's own redraw of release k
        assert view.src_now.data["t"] == [sc.frame_times[k]]
        assert _words(view, view.fig_line) == heard
    view.show_frame(5)
    lab.settings.epsilon = 2.0  # a new scenario keeps the release and describes it
    assert f"values {fmt(float(view.scenario.frame_values[5][0]), 3)}" in _words(view, view.fig_line)


def test_a_description_changes_when_a_slider_moves():
    lab = NoiseLab()
    before = _words(lab.rewind, lab.rewind.fig_privacy)
    lab.settings.epsilon = 4.0
    after = _words(lab.rewind, lab.rewind.fig_privacy)
    assert before != after
    top = float(np.max(lab.rewind.scenario.frame_epsilon))
    assert f"to {fmt(top, 3)}" in after


def test_the_table_toggle_shows_the_plotted_data(lab):
    """Shown on demand: one row per plotted point, the numbers to 6 significant digits, read from the
    view's own data (the densities the noise view computed)."""
    view = lab.noise
    placed = view._plot_parts[view.fig_density.id]
    toggle = placed.toggle
    toggle.value = True
    table = placed.table
    assert table.visible and list(placed.block)[-1] is table
    comparison = view.comparison
    rows = re.findall(r"<tr>(.*?)</tr>", table.object)
    assert len(rows) == 1 + len(comparison.x)  # the header row, then one per point
    cells = re.findall(r"<td>([^<]*)</td>", rows[1])
    expected = [comparison.x[0], *(comparison.densities[name][0] for name in ("Laplace", "Staircase", "Arete"))]
    assert [float(c) for c in cells] == pytest.approx(expected, rel=1e-5)
    assert 'tabindex="0"' in table.object and 'role="region"' in table.object
    assert "<caption>densities: Laplace, Staircase, Arete (1201 rows)</caption>" in table.object
    toggle.value = False
    assert not table.visible
    toggle.value = True  # opened again: the same pane, shown
    assert placed.table is table and table.visible and len(placed.block) == 4
    toggle.value = False


def test_the_rat_histograms_are_tabled_as_bars(lab):
    view = lab.rat
    words = _words(view, view.fig_hist)
    study = view.study
    assert "bars" in words
    toggle = view._plot_parts[view.fig_hist.id].toggle
    toggle.value = True
    table = view._plot_parts[view.fig_hist.id].table
    counts = [float(v) for v in re.findall(r"<td>([^<]*)</td></tr>", table.object)]
    assert sum(counts) == pytest.approx(3 * len(study.stop_rounds["RAT"]), rel=0.01)  # every run, per rule
    toggle.value = False


def test_the_experiments_box_plot_is_tabled_by_rule(lab):
    view = lab.experiments
    toggle = view._plot_parts[view.fig_stop.id].toggle
    toggle.value = True
    table = view._plot_parts[view.fig_stop.id].table
    assert '<th scope="col">stopping rule</th>' in table.object
    assert '<th scope="col">median</th>' in table.object
    assert "categories" in _words(view, view.fig_stop)
    toggle.value = False


def test_outside_text_in_a_figure_is_escaped():
    """A legend label or title from outside (an uploaded column's name) is text in both forms."""
    fig = figure(title="<b>title</b>", x_axis_label="x <i>", y_axis_label="y")
    source = ColumnDataSource({"x": [1.0, 2.0], "y": [3.0, 4.0]})
    fig.line("x", "y", source=source, legend_label="<script>alert(1)</script>")
    words = describe_figure(fig, "headline")
    assert "<script>alert(1)</script>: 2 points, values 3 to 4" in words
    table = figure_table_html(fig)
    assert "<script>" not in table and "&lt;script&gt;" in table
    assert "<b>" not in table


def test_an_empty_figure_says_so():
    fig = figure(title="empty")
    fig.line("x", "y", source=ColumnDataSource({"x": [], "y": []}))
    assert describe_figure(fig) == "Plot: empty. No data drawn yet."
    assert figure_table_html(fig) == "<p>empty: no data drawn yet.</p>"


def test_hidden_series_are_named_hidden():
    fig = figure(title="two")
    source = ColumnDataSource({"x": [1.0], "a": [2.0], "b": [5.0]})
    fig.scatter("x", "a", source=source, legend_label="a")
    shown = fig.scatter("x", "b", source=ColumnDataSource({"x": [1.0], "b": [5.0]}), legend_label="b")
    shown.visible = False
    words = describe_figure(fig)
    assert "a: 1 point, values 2" in words and "b (hidden): 1 point, values 5" in words


def test_the_save_button_carries_the_description_on_screen(lab):
    """The PNG's Description chunk is the words a screen reader hears for the plot, kept current."""
    from dashboard.views.base import save_tools

    for view in lab.views:
        for fig in view.figures:
            if fig.id in view._plot_parts:
                (tool,) = save_tools(fig)
                assert tool.callback.args["description"] == _words(view, fig)
                assert tool.callback.args["title"] == fig.title.text
                assert tool.icon == "save"
