"""The floor for page-open cost: a minimal Panel app served the way the lab is (a BootstrapTemplate, a
sidebar of 6 sliders, one Bokeh figure with a line, ``pn.serve`` of a per-session function).

``--inventory`` serves instead a page of the lab's first-screen inventory, built with Panel's and Bokeh's
defaults and no logic: as many Panel objects of each kind as the lab's first screen renders (90: 10 buttons,
6 toggles, 6 sliders, 5 tooltip icons, 19 text panes, 2 selects, 2 radio groups, 2 cards, 5 tabs, rows and
columns) and three figures with the lab's renderers (5, 3 and 3 lines, legends below, four tools). It is
what showing that much with Panel costs, whatever the app does: the floor for the lab's content.
``--one-pass`` attaches the page the way the lab attaches its own (one recomputation of Bokeh's model graph).

``--lab-settings`` serves it the way ``dashboard.serve`` serves the lab: Bokeh's document validation and
error diagnostics off, the lab's Bokeh shortcuts (``take_shortcuts``) and garbage-collector tuning
(run it with ``PYTHONMALLOC=malloc`` for the lab's allocator too): the floor "served the same way".

Run: python benchmarks/floor_app.py --port 5007 [--num-procs N] [--lab-settings] [--inventory] [--one-pass]
    [--reuse-sessions]
"""

from __future__ import annotations

import argparse
import functools

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure


def create_floor():
    """One session's page: six sliders that redraw one line."""
    x = np.linspace(0, 10, 200)
    source = ColumnDataSource({"x": x, "y": np.sin(x)}, name="floor-line")
    fig = figure(title="floor", height=400, sizing_mode="stretch_width")
    fig.line("x", "y", source=source)
    sliders = [pn.widgets.FloatSlider(label=f"p{k}", start=0.1, end=5, value=1.0) for k in range(6)]

    def redraw(_event):
        amplitude = np.prod([s.value for s in sliders])
        source.data = {"x": x, "y": amplitude * np.sin(sliders[0].value * x)}

    for slider in sliders:
        slider.param.watch(redraw, "value")
    return pn.template.BootstrapTemplate(title="floor", sidebar=sliders, main=[pn.pane.Bokeh(fig)])


def create_inventory():
    """One session's page with the lab's first-screen inventory of Panel objects and figures."""
    x = np.linspace(0, 10, 120)

    sources = []

    def plot(title, lines, y_log):
        fig = figure(
            title=title,
            height=400,
            sizing_mode="stretch_width",
            tools="pan,box_zoom,save,reset",
            toolbar_location="above",
            y_axis_type="log" if y_log else "linear",
        )
        for k in range(lines):
            source = ColumnDataSource({"x": x, "y": np.exp(np.sin(x + k))}, name="floor-line" if not sources else None)
            sources.append(source)
            fig.line("x", "y", source=source, legend_label=f"series {k}")
        fig.add_layout(fig.legend[0], "below")
        return pn.Column(pn.pane.HTML("description"), pn.pane.Bokeh(fig), pn.widgets.Toggle(label="table"))

    sliders = [pn.widgets.FloatSlider(label=f"p{k}", start=0.1, end=5, value=1.0) for k in range(5)]
    sidebar = [
        pn.widgets.Select(label="preset", options=["a", "b"]),
        *(pn.Row(s, pn.widgets.TooltipIcon(value="help")) for s in sliders),
        pn.pane.HTML("dimension"),
        pn.widgets.RadioButtonGroup(options=["1", "2"]),
        pn.Column(pn.widgets.IntInput(label="seed", value=1), pn.pane.Markdown("seed")),
        pn.FlexBox(pn.widgets.Button(label="Reset"), pn.widgets.Toggle(label="Large type")),
        pn.Card(pn.pane.Markdown("glossary"), title="Glossary", collapsed=True),
    ]
    buttons = [pn.widgets.Button(label=f"b{k}", description="help") for k in range(8)]
    first = pn.Column(
        pn.pane.Markdown("### title"),
        pn.FlexBox(pn.pane.Markdown("question"), pn.pane.Markdown("example")),
        pn.pane.Alert("alert"),
        pn.widgets.Select(label="stop rule", options=["a", "b"]),
        pn.widgets.RadioButtonGroup(options=["1", "2"]),
        pn.FlexBox(*buttons, pn.widgets.FileDownload(filename="a.csv", callback=lambda: None)),
        pn.widgets.IntSlider(label="release", start=1, end=120),
        pn.pane.Markdown("readout"),
        pn.pane.LaTeX("$x$"),
        plot("walk", 5, True),
        pn.Column(plot("privacy", 3, True), plot("error", 3, False)),
        pn.Card(pn.pane.Markdown("notes"), pn.pane.Markdown("more"), title="Notes", collapsed=True),
        pn.pane.Alert("plain"),
        pn.pane.Markdown("claim"),
        *(pn.Column(pn.pane.Markdown(f"readout {k}")) for k in range(3)),
    )
    tabs = pn.Tabs(("one", pn.Column(pn.Column(first))), *((f"tab {k}", pn.Column()) for k in range(4)))
    top = pn.FlexBox(*(pn.widgets.Toggle(label=f"t{k}") for k in range(2)), pn.widgets.Button(label="share"))

    def redraw(_event):  # as the floor's: the sliders redraw a line
        amplitude = np.prod([s.value for s in sliders])
        sources[0].data = {"x": x, "y": np.exp(amplitude * np.sin(sliders[0].value * x))}

    for slider in sliders:
        slider.param.watch(redraw, "value")
    return pn.template.BootstrapTemplate(title="floor", sidebar=sidebar, main=[pn.Column(top), pn.Column(tabs)])


def attached_in_one_pass(factory):
    """``factory`` with its page attached the way the lab attaches its own (``dashboard.app``'s one pass:
    Bokeh's model graph recomputed once rather than after each root and link)."""

    def build():
        from dashboard.app import _server_doc_in_one_pass

        template = factory()
        template.server_doc = functools.partial(_server_doc_in_one_pass, template, template.server_doc)
        return template

    return build


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=5007)
    parser.add_argument("--num-procs", type=int, default=1)
    parser.add_argument("--inventory", action="store_true", help="the lab's first-screen inventory (see above)")
    parser.add_argument(
        "--reuse-sessions",
        action="store_true",
        help="Panel's reuse_sessions: a page's HTML from one cached session per address (identical links)",
    )
    parser.add_argument(
        "--one-pass", action="store_true", help="attach the page in one pass, as the lab does (dashboard.app)"
    )
    parser.add_argument("--lab-settings", action="store_true", help="the lab's server settings (see above)")
    args = parser.parse_args(argv)
    if args.lab_settings:
        from bokeh.settings import settings as bokeh_settings

        from dashboard.serve import tune_garbage_collection
        from dashboard.shortcuts import take_shortcuts

        bokeh_settings.perform_document_validation.set_value(False)
        bokeh_settings.perform_error_diagnostics.set_value(False)
        take_shortcuts()
        tune_garbage_collection()
    if args.reuse_sessions:
        pn.config.reuse_sessions = True
    factory = create_inventory if args.inventory else create_floor
    if args.one_pass:
        factory = attached_in_one_pass(factory)
    pn.serve(
        {"/": factory},
        port=args.port,
        address="127.0.0.1",
        websocket_origin=[f"127.0.0.1:{args.port}", f"localhost:{args.port}"],
        show=False,
        num_procs=args.num_procs,
    )


if __name__ == "__main__":
    main()
