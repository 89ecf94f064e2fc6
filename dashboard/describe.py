"""Figures in words and tables, read from what a Bokeh figure draws: a screen reader's description of
each plot (its axes, each series' extent, the view's headline) and the plotted data as an HTML table.

Both read the figure's own data sources, so they say what is drawn, whatever view drew it.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np
from bokeh.models import GlyphRenderer, HBar, MultiLine, Quad, VBar

from .claims import fmt

__all__ = ["Series", "describe_figure", "figure_series", "figure_table_html"]

# glyph properties that place data (colours, sizes and alphas are left out)
X_FIELDS = ("x", "xs", "x0", "x1", "left", "right")
Y_FIELDS = ("y", "ys", "y0", "y1", "top", "bottom")
DIGITS = 6  # significant digits in a table cell


@dataclass
class Series:
    """One group of drawn data: the renderers sharing a source and its horizontal columns."""

    names: list = field(default_factory=list)  # legend labels (or glyph kinds) of the renderers
    columns: dict = field(default_factory=dict)  # header -> values, in order
    x_headers: list = field(default_factory=list)
    y_headers: list = field(default_factory=list)
    paths: bool = False  # a multi-line: each row one path
    hidden: bool = False
    unit: str = "points"  # what a row is: points, bars, paths


def _label(text) -> str:
    """An axis label on one line (a phone's labels break over two)."""
    return " ".join(str(text or "").split())


def _field(glyph, name):
    if name not in glyph.properties():  # a class-level set: no read of a default
        return None
    spec = getattr(glyph, name, None)
    if isinstance(spec, str):
        return spec
    if isinstance(spec, dict) and "field" in spec:
        return spec["field"]
    return getattr(spec, "field", None) if spec is not None and not isinstance(spec, int | float) else None


def _legend_labels(fig) -> dict:
    labels = {}
    for legend in fig.legend:
        for item in legend.items:
            label = item.label
            text = label.get("value") if isinstance(label, dict) else getattr(label, "value", label)
            for renderer in item.renderers:
                labels.setdefault(renderer.id, str(text))
    return labels


def figure_series(fig, drawn: dict | None = None) -> list[Series]:
    """The figure's drawn data, grouped by source: renderers on one source that share their horizontal
    columns make one series with a column for each renderer's vertical values. Empty sources are left out.
    ``drawn`` maps a source's id to the data the page draws in its place (drawn there by the browser)."""
    drawn = drawn or {}
    labels = _legend_labels(fig)
    x_name = _label(fig.xaxis[0].axis_label) if fig.xaxis else "x"
    y_name = _label(fig.yaxis[0].axis_label) if fig.yaxis else "y"
    groups: dict = {}
    for renderer in fig.renderers:
        if not isinstance(renderer, GlyphRenderer):
            continue
        glyph, data = renderer.glyph, drawn.get(renderer.data_source.id, renderer.data_source.data)
        xs = [f for f in (_field(glyph, n) for n in X_FIELDS) if f in data]
        ys = [f for f in (_field(glyph, n) for n in Y_FIELDS) if f in data]
        if not xs or not ys or not len(data[xs[0]]):
            continue
        key = (renderer.data_source.id, tuple(xs))
        series = groups.get(key)
        name = labels.get(renderer.id, "")
        if series is None:
            paths = isinstance(glyph, MultiLine)
            unit = "paths" if paths else "bars" if isinstance(glyph, Quad | VBar | HBar) else "points"
            series = groups[key] = Series(paths=paths, hidden=not renderer.visible, unit=unit)
            for i, column in enumerate(dict.fromkeys(xs)):
                header = x_name if len(xs) == 1 else f"{x_name} ({('from', 'to')[i] if i < 2 else column})"
                series.columns[header] = data[column]
                series.x_headers.append(header)
        else:
            series.hidden = series.hidden and not renderer.visible
        series.names.append(name or type(glyph).__name__.lower())
        for column in dict.fromkeys(ys):
            header = name if (name and len(ys) == 1) else (y_name if len(ys) == 1 else f"{y_name} ({column})")
            if header in series.columns:
                continue
            series.columns[header] = data[column]
            series.y_headers.append(header)
    return list(groups.values())


def _finite(values) -> np.ndarray:
    try:
        flat = np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in values]) if len(values) else []
    except (TypeError, ValueError):
        return np.array([])
    arr = np.asarray(flat, dtype=float)
    return arr[np.isfinite(arr)]


def _extent(values) -> str:
    if values and len(values[0]) and isinstance(values[0][0], str):  # categories
        names = list(dict.fromkeys(str(v) for column in values for v in column))
        return "categories " + ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    arr = _finite(values)
    if not arr.size:
        return "no finite values"
    low, high = float(arr.min()), float(arr.max())
    return fmt(low, 3) if low == high else f"{fmt(low, 3)} to {fmt(high, 3)}"


def describe_figure(fig, headline: str = "", series: list[Series] | None = None) -> str:
    """A plot in words: its title, what each axis shows over which values (and if logarithmic), each
    series with its number of points and the extent of its values, then the view's headline. ``series``:
    the figure's data as a view states it (default: ``figure_series``)."""
    title = fig.title.text if fig.title is not None else "plot"
    series = figure_series(fig) if series is None else series
    parts = [f"Plot: {title}."]
    if not series:
        parts.append("No data drawn yet.")
    else:
        x_values = [v for s in series for h in s.x_headers for v in ([s.columns[h]] if not s.paths else s.columns[h])]
        y_values = [v for s in series for h in s.y_headers for v in ([s.columns[h]] if not s.paths else s.columns[h])]
        for axis, name, values, scale in (
            ("Horizontal", fig.xaxis[0].axis_label, x_values, fig.x_scale),
            ("Vertical", fig.yaxis[0].axis_label, y_values, fig.y_scale),
        ):
            log = type(scale).__name__ == "LogScale" and "log" not in str(name)
            parts.append(
                f"{axis} axis: {_label(name) or 'categories'}, {_extent(values)}{' (log scale)' if log else ''}."
            )
        drawn = []
        for s in series:
            count = len(next(iter(s.columns.values())))
            unit = s.unit[:-1] if count == 1 else s.unit
            for header in s.y_headers:
                values = s.columns[header] if s.paths else [s.columns[header]]
                hidden = " (hidden)" if s.hidden else ""
                drawn.append(f"{header}{hidden}: {count} {unit}, values {_extent(values)}")
        parts.append("Shows " + "; ".join(drawn) + ".")
    if headline:
        parts.append(f"Headline: {headline}")
    return " ".join(parts)


def _cell(value) -> str:
    if isinstance(value, list | tuple | np.ndarray):
        return _extent([value])
    try:
        number = float(value)
    except (TypeError, ValueError):
        return html.escape(str(value))
    return "" if not np.isfinite(number) else html.escape(f"{number:.{DIGITS}g}")


def figure_table_html(fig, series: list[Series] | None = None) -> str:
    """The figure's plotted data as HTML tables, one per series (a multi-line: one row per path, with
    each path's extent), each with a caption and column headers; every text escaped."""
    title = fig.title.text if fig.title is not None else "plot"
    tables = []
    for s in figure_series(fig) if series is None else series:
        headers = list(s.columns)
        columns = [s.columns[h] for h in headers]
        rows = len(columns[0])
        caption = f"{title}: {', '.join(dict.fromkeys(s.names))}"
        caption += f" ({rows} paths, each with the range of its values)" if s.paths else f" ({rows} rows)"
        head = "".join(f'<th scope="col">{html.escape(h)}</th>' for h in (["path", *headers] if s.paths else headers))
        body = "".join(
            "<tr>"
            + (f"<td>{i + 1}</td>" if s.paths else "")
            + "".join(f"<td>{_cell(c[i])}</td>" for c in columns)
            + "</tr>"
            for i in range(rows)
        )
        tables.append(
            f"<table><caption>{html.escape(caption)}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        )
    return "".join(tables) or f"<p>{html.escape(title)}: no data drawn yet.</p>"
