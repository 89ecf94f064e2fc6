"""The floor for page-open cost: a minimal Panel app served the way the lab is (a BootstrapTemplate, a
sidebar of 6 sliders, one Bokeh figure with a line, ``pn.serve`` of a per-session function).

``--lab-settings`` serves it the way ``dashboard.serve`` serves the lab: Bokeh's document validation and
error diagnostics off, the lab's Bokeh shortcuts (``take_shortcuts``) and garbage-collector tuning
(run it with ``PYTHONMALLOC=malloc`` for the lab's allocator too): the floor "served the same way".

Run: python benchmarks/floor_app.py --port 5007 [--num-procs N] [--lab-settings]
"""

from __future__ import annotations

import argparse

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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=5007)
    parser.add_argument("--num-procs", type=int, default=1)
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
    pn.serve(
        {"/": create_floor},
        port=args.port,
        address="127.0.0.1",
        websocket_origin=[f"127.0.0.1:{args.port}", f"localhost:{args.port}"],
        show=False,
        num_procs=args.num_procs,
    )


if __name__ == "__main__":
    main()
