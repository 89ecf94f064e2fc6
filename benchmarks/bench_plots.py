"""The experiments view's plots drawn two ways, measured in the same run: raw Bokeh models updated in
place (what the app does) against HoloViews elements fed through a Pipe (DynamicMap), both attached to
a Bokeh document so that model changes are recorded as they would be for a browser.

Per update: new trade-off curves with 95% bands for BM and LNR, the target line, and the stopping
rules' quantile boxes. Also the cost of building the plots once (every session pays it).

Run: python benchmarks/bench_plots.py   (needs holoviews, not a dependency of the app)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import holoviews as hv
import panel as pn
from bokeh.document import Document

from dashboard.models import Settings
from dashboard.views.experiments import ExperimentsView, box_data
from noisecore.experiments import default_task, run_experiment

hv.extension("bokeh", logo=False)


def results(count=6):
    task = default_task("mean", n=400, rng=0)
    return [
        run_experiment(task, epsilons=np.geomspace(0.16, 5, 30), target=0.19, trials=50, rng=seed)
        for seed in range(count)
    ]


def bokeh_side(runs):
    start = time.perf_counter()
    view = ExperimentsView(Settings(), active=False)
    doc = Document()
    view.layout.get_root(doc)
    build = time.perf_counter() - start
    times = []
    for result in runs:
        start = time.perf_counter()
        with pn.io.hold(doc):
            trade = result.tradeoff
            for mech in ("bm", "lnr"):
                view.src_curve[mech].data = {
                    "x": trade.epsilons,
                    "y": getattr(trade, f"{mech}_mean"),
                    "lo": getattr(trade, f"{mech}_low"),
                    "hi": getattr(trade, f"{mech}_high"),
                }
            view.target_span.location = result.stopping.target
            view.src_box.data = box_data(result.stopping)
        times.append(time.perf_counter() - start)
    return build, times


def holoviews_side(runs):
    start = time.perf_counter()
    curve_pipe = hv.streams.Pipe(data=results(1)[0])

    def trade_plot(data):
        trade = data.tradeoff
        layers = []
        for mech in ("bm", "lnr"):
            mean, low, high = (getattr(trade, f"{mech}_{k}") for k in ("mean", "low", "high"))
            layers.append(hv.Area((trade.epsilons, low, high), vdims=["lo", "hi"]).opts(alpha=0.25))
            layers.append(hv.Curve((trade.epsilons, mean), "epsilon", "loss", label=mech))
        layers.append(hv.HLine(data.stopping.target))
        return hv.Overlay(layers).opts(hv.opts.Curve(logx=True), hv.opts.Area(logx=True))

    def stop_plot(data):
        box = box_data(data.stopping)
        return hv.Segments((box["q05"], box["y"], box["q95"], box["y"])) * hv.Scatter((box["q50"], box["y"]))

    layout = pn.Column(
        pn.pane.HoloViews(hv.DynamicMap(trade_plot, streams=[curve_pipe])),
        pn.pane.HoloViews(hv.DynamicMap(stop_plot, streams=[curve_pipe])),
    )
    doc = Document()
    layout.get_root(doc)
    build = time.perf_counter() - start
    times = []
    for result in runs:
        start = time.perf_counter()
        with pn.io.hold(doc):
            curve_pipe.send(result)
        times.append(time.perf_counter() - start)
    return build, times


def main():
    runs = results()
    bokeh_build, bokeh_times = bokeh_side(runs)
    hv_build, hv_times = holoviews_side(runs)
    b, h = np.median(bokeh_times[1:]), np.median(hv_times[1:])
    print("experiments view plots: one update (new curves, bands, target, boxes), median of 5")
    print(
        f"  raw Bokeh, data sources updated in place: {1e3 * b:7.1f} ms   (build once: {1e3 * bokeh_build:6.0f} ms,"
        " whole view)"
    )
    print(
        f"  HoloViews, DynamicMap fed by a Pipe:       {1e3 * h:7.1f} ms   (build once: {1e3 * hv_build:6.0f} ms,"
        " two plots)"
    )
    print(f"  ratio HoloViews / Bokeh per update: {h / b:.1f}x")


if __name__ == "__main__":
    main()
