"""HoloViews views of the story records, for notebook users.

Each function takes one record (from ``dashboard.scenarios``, ``noisecore.experiments`` or the frontier
table) and returns an ``hv.Overlay`` or ``hv.Layout`` in the app's palette, with labelled axes and a hover
tool, so it composes with ``+`` and ``*``, restyles with ``.opts`` and saves with ``hv.save`` (or
``save_html`` here, which inlines every resource). ``plot(record)`` picks the function by the record's type.

The served views keep raw Bokeh (ARCHITECTURE.md, "Decisions"); nothing here is imported by the app.
In a notebook, load everything inline, so a saved notebook renders offline::

    import holoviews as hv
    import panel as pn
    from dashboard.notebook import inline_style_sheets

    hv.extension("bokeh", inline=True, logo=False)
    pn.extension("katex", inline=True)
    inline_style_sheets()
"""

from __future__ import annotations

import base64
import functools
import logging
import os
from pathlib import Path

import holoviews as hv
import holoviews.plotting.bokeh  # registers the Bokeh backend without notebook output
import numpy as np
import panel as pn
from bokeh.document import Document
from bokeh.models import ImportedStyleSheet, UIElement
from bokeh.resources import INLINE
from panel.io.model import add_to_doc
from panel.io.notebook import patch_inline_stylesheets
from panel.io.resources import CDN_DIST, JS_VERSION, LOCAL_DIST, set_resource_mode

from dashboard.claims import percent
from dashboard.describe import describe_figure
from dashboard.export import slug
from dashboard.palette import PALETTE
from dashboard.png import png_save_tool, set_png_text
from dashboard.scenarios import (
    RAT_RULES,
    BoundaryCurves,
    CrossingStudy,
    NoiseComparison,
    RatRun,
    RatStudy,
    RewindScenario,
    loss_profile,
)
from noisecore import Laplace, Staircase
from noisecore import frontier as frontier_table
from noisecore._validation import file_path
from noisecore.experiments import ExperimentResult, StoppingResult, TradeoffResult

log = logging.getLogger(__name__)

__all__ = [
    "boundary_plot",
    "crossing_plot",
    "experiment_plot",
    "frontier_plot",
    "inline_style_sheets",
    "loss_profile_plot",
    "noise_plot",
    "plot",
    "rat_run_plot",
    "rat_study_plot",
    "rewind_plot",
    "save_html",
    "stopping_plot",
    "tradeoff_plot",
]

WIDTH, HEIGHT = 440, 260  # the data frame; a legend sits beside it
NOISE_NAMES = ("Laplace", "Staircase", "Arete")
FRONTIER_CURVES = {  # table column -> legend label and palette role
    "laplace_abs": ("Laplace", "Laplace"),
    "staircase_abs": ("Staircase", "Staircase"),
    "lemma3_abs": ("Arete, Lemma 3", "Lemma 3"),
    "arete_abs": ("Arete, calibrated", "Arete"),
}


def _check(name: str, value: object, kind: type | tuple[type, ...]) -> None:
    if not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise TypeError(f"{name} must be a {names}, got {type(value).__name__}")


def _sized_by_frame(plot, _element) -> None:
    """HoloViews marks a figure sized by its frame as 'fixed' without a width, which Bokeh's validation
    reports (W-1005, three times per composed figure; holoviz/holoviews#6668): left unset, Bokeh sizes it
    from the frame all the same."""
    figure = plot.state
    if getattr(figure, "sizing_mode", None) == "fixed" and (figure.width is None or figure.height is None):
        figure.sizing_mode = None


FRAME = {"frame_width": WIDTH, "frame_height": HEIGHT, "hooks": [_sized_by_frame]}


def _style(element, role: str, **opts):
    """Colour by palette role, the common size and a hover tool (Bokeh backend)."""
    colour = {"line_color" if isinstance(element, hv.Area) else "color": PALETTE[role]}
    return element.opts(backend="bokeh", tools=["hover"], **FRAME, **colour, **opts)


def _curve(x, y, kdim, vdim, label: str, role: str, **opts) -> hv.Curve:
    curve = hv.Curve((np.asarray(x), np.asarray(y)), kdims=[kdim], vdims=[vdim], label=label)
    return _style(curve, role, **opts)


def _scatter(x, y, kdim, vdim, label: str, role: str, size=6, **opts) -> hv.Scatter:
    points = hv.Scatter((np.asarray(x), np.asarray(y)), kdims=[kdim], vdims=[vdim], label=label)
    return _style(points, role, size=size, **opts)


def _hline(y: float, role: str) -> hv.HLine:
    return hv.HLine(float(y)).opts(backend="bokeh", color=PALETTE[role], line_dash="dashed", line_width=1.5)


def _vline(x: float, role: str) -> hv.VLine:
    return hv.VLine(float(x)).opts(backend="bokeh", color=PALETTE[role], line_dash="dotted", line_width=1.5)


def _save_with_words(plot, _element) -> None:
    """The figure's save button writes a PNG carrying its title and its description in words (as the
    app's do: ``dashboard.png``). Run on the overlay, after every curve is drawn."""
    from bokeh.models import SaveTool

    fig = plot.state
    if not hasattr(fig, "toolbar"):
        return
    tool = png_save_tool(fig)
    title = fig.title.text if fig.title is not None else "plot"
    name = f"noiselab-{slug(title)}"
    set_png_text(tool, filename=name, description=describe_figure(fig))
    fig.tools = [t for t in fig.tools if not isinstance(t, SaveTool)] + [tool]


def _legend(overlay: hv.Overlay, title: str) -> hv.Overlay:
    return overlay.opts(backend="bokeh", title=title, legend_position="right", hooks=[_save_with_words])


# --- the rewind ------------------------------------------------------------------------------------------
def rewind_plot(scenario: RewindScenario) -> hv.Layout:
    """The rewind: the walk with its releases and stop, the privacy per release, the error per release.

    Parameters
    ----------
    scenario : RewindScenario
        From ``dashboard.scenarios.rewind_scenario``.

    Returns
    -------
    holoviews.Layout
        Three overlays: the walk (d = 1: value against noise variance; d >= 2: the first two coordinates),
        privacy per release (psi(T_n) and the record's composition column), error per release.
    """
    _check("scenario", scenario, RewindScenario)
    s = scenario
    n = np.arange(1, s.frame_times.size + 1)
    stop = s.stop_frame
    if s.value.size == 1:
        keep = s.path_times > 0  # a log axis
        walk = _curve(s.path_times[keep], s.path[keep, 0], "t", "value", "walk", "walk", logx=True)
        releases = _scatter(s.frame_times, s.frame_values[:, 0], "t", "value", "releases", "release", logx=True)
        parts = [walk, releases, _hline(s.value[0], "truth")]
        if stop >= 0:
            parts.append(_scatter([s.frame_times[stop]], [s.frame_values[stop, 0]], "t", "value", "stop", "stop", 12))
        walk_view = _legend(hv.Overlay(parts), "the walk: released value against noise variance t")
        walk_view = walk_view.redim.label(t="noise variance t", value="released value")
    else:
        walk = hv.Path([s.path[:, :2]], kdims=["coordinate 1", "coordinate 2"], label="walk")
        walk = walk.opts(backend="bokeh", color=PALETTE["walk"], **FRAME, tools=["hover"])
        releases = _scatter(
            s.frame_values[:, 0], s.frame_values[:, 1], "coordinate 1", "coordinate 2", "releases", "release"
        )
        truth = _scatter([s.value[0]], [s.value[1]], "coordinate 1", "coordinate 2", "f(x)", "truth", 10, marker="x")
        parts = [walk, releases, truth]
        if stop >= 0:
            parts.append(
                _scatter(
                    [s.frame_values[stop, 0]],
                    [s.frame_values[stop, 1]],
                    "coordinate 1",
                    "coordinate 2",
                    "stop",
                    "stop",
                    12,
                )
            )
        walk_view = _legend(hv.Overlay(parts), "the walk in the plane, closing in on f(x)")
    privacy = [
        _curve(n, s.frame_epsilon, "release", "epsilon", "psi(T_n)", "psi", logy=True),
        _curve(
            n, s.frame_composition, "release", "epsilon", "releases 1..n composed exactly", "composition", logy=True
        ),
    ]
    positive = s.frame_neighbour_loss > 0  # a log axis: the realized loss where it is positive
    privacy.append(
        _scatter(
            n[positive],
            s.frame_neighbour_loss[positive],
            "release",
            "epsilon",
            "loss vs one neighbour (> 0)",
            "neighbour",
            4,
            logy=True,
        )
    )
    error = [
        _curve(n, s.frame_error, "release", "error", "||release - f(x)||", "error"),
        _curve(n, s.frame_expected_error, "release", "error", "expected error", "expected"),
        _curve(n, s.frame_error_bound, "release", "error", f"{percent(s.confidence)} bound", "bound"),
        _hline(s.target, "target"),
    ]
    if stop >= 0:
        privacy.append(_vline(stop + 1, "stop"))
        error.append(_vline(stop + 1, "stop"))
    privacy_view = _legend(hv.Overlay(privacy), "privacy per release").redim.label(release="release n")
    error_view = _legend(hv.Overlay(error), "error of each release").redim.label(release="release n")
    return (walk_view + privacy_view + error_view).cols(1).opts(backend="bokeh", shared_axes=False)


# --- boundaries ------------------------------------------------------------------------------------------
def boundary_plot(curves: BoundaryCurves) -> hv.Layout:
    """psi_M and psi_L against noise variance, and the variance each epsilon needs next to one Gaussian
    release (plain DP and probabilistic DP).

    Parameters
    ----------
    curves : BoundaryCurves
        From ``dashboard.scenarios.boundary_curves``.

    Returns
    -------
    holoviews.Layout
        Two log-log overlays.
    """
    _check("curves", curves, BoundaryCurves)
    c = curves
    kw = {"logx": True, "logy": True}
    psi = hv.Overlay(
        [
            _curve(c.t, c.mixture, "t", "psi", "psi_M (mixture)", "mixture", **kw),
            _curve(c.t, c.linear, "t", "psi", "psi_L (linear)", "linear", **kw),
        ]
    )
    psi = _legend(psi, "boundaries: ex-post epsilon against time").redim.label(
        t="noise variance t", psi="ex-post epsilon psi(t)"
    )
    linear_ok = np.isfinite(c.linear_time)
    times = hv.Overlay(
        [
            _curve(c.epsilons, c.mixture_time, "epsilon", "variance", "psi_M", "mixture", **kw),
            _curve(c.epsilons[linear_ok], c.linear_time[linear_ok], "epsilon", "variance", "psi_L", "linear", **kw),
            _curve(c.epsilons, c.gaussian_time, "epsilon", "variance", "one Gaussian, DP", "gaussian", **kw),
            _curve(c.epsilons, c.pdp_time, "epsilon", "variance", "one Gaussian, pDP", "pdp", **kw),
        ]
    )
    times = _legend(times, "noise variance each target epsilon needs").redim.label(
        epsilon="target epsilon", variance="noise variance"
    )
    return (psi + times).cols(1).opts(backend="bokeh", shared_axes=False)


def crossing_plot(study: CrossingStudy) -> hv.Overlay:
    """A few realized losses against one fixed neighbour under the boundary they rarely cross.

    Parameters
    ----------
    study : CrossingStudy
        From ``dashboard.scenarios.crossing_study``.

    Returns
    -------
    holoviews.Overlay
        The shown paths (grey) and the boundary.
    """
    _check("study", study, CrossingStudy)
    paths = [
        _curve(study.t, row, "t", "loss", "realized loss" if i == 0 else "", "loss", logx=True, alpha=0.4)
        for i, row in enumerate(study.losses)
    ]
    paths.append(_curve(study.t, study.boundary, "t", "loss", "boundary", "mixture", logx=True, line_width=3))
    title = f"realized losses: {percent(study.frequency)} of {study.paths} paths cross on this window"
    return _legend(hv.Overlay(paths), title).redim.label(t="noise variance t", loss="privacy loss")


# --- low-privacy noise -----------------------------------------------------------------------------------
def noise_plot(comparison: NoiseComparison) -> hv.Layout:
    """Laplace, Staircase and the Arete at the same epsilon: densities, linear and log scale.

    Parameters
    ----------
    comparison : NoiseComparison
        From ``dashboard.scenarios.noise_comparison``.

    Returns
    -------
    holoviews.Layout
        Two overlays of the three densities.
    """
    _check("comparison", comparison, NoiseComparison)
    c = comparison
    views = []
    for log in (False, True):
        curves = []
        for name in NOISE_NAMES:
            y = np.asarray(c.densities[name], dtype=float)
            x = c.x
            if log:  # a log axis shows positive values only
                keep = y > 0
                x, y = x[keep], y[keep]
            # a dimension of its own, so composed layouts do not share the linear axis with it
            vdim = hv.Dimension("log_density", label="density (log scale)") if log else "density"
            curves.append(_curve(x, y, "z", vdim, name, name, logy=log))
        title = f"densities at epsilon = {c.epsilon:g}" + (", log scale" if log else "")
        views.append(_legend(hv.Overlay(curves), title).redim.label(z="noise z"))
    return (views[0] + views[1]).opts(backend="bokeh", shared_axes=False)


def loss_profile_plot(comparison: NoiseComparison, *, distances=None) -> hv.Overlay:
    """Worst-case privacy loss against output distance for the three noises (paper B, Fig. 3).

    Parameters
    ----------
    comparison : NoiseComparison
        From ``dashboard.scenarios.noise_comparison``; Laplace and Staircase are rebuilt at its epsilon and
        sensitivity, the Arete is the one it shows.
    distances : array_like, optional
        Output distances (default: 0 to 3 sensitivities, 121 points).

    Returns
    -------
    holoviews.Overlay
        One curve per noise (``scenarios.loss_profile``).
    """
    _check("comparison", comparison, NoiseComparison)
    c = comparison
    if distances is None:
        distances = np.linspace(0, 3 * c.sensitivity, 121)
    d = np.asarray(distances, dtype=float)
    if d.ndim != 1 or d.size == 0 or not np.isfinite(d).all() or (d < 0).any():
        raise ValueError("distances must be a non-empty 1-d array of finite values >= 0")
    dists = {
        "Laplace": Laplace.calibrated(c.epsilon, sensitivity=c.sensitivity),
        "Staircase": Staircase(c.epsilon, sensitivity=c.sensitivity),
        "Arete": c.arete,
    }
    curves = [
        _curve(d / c.sensitivity, loss_profile(dist, distances=d), "distance", "loss", name, name)
        for name, dist in dists.items()
    ]
    curves.append(_hline(c.epsilon, "pdp"))
    overlay = _legend(hv.Overlay(curves), f"worst-case loss against output distance (epsilon = {c.epsilon:g})")
    return overlay.redim.label(distance="output distance / sensitivity", loss="privacy loss")


def frontier_plot(table=None, *, variance=False) -> hv.Overlay:
    """The error frontier: E|Z| (or the variance) against epsilon for Laplace, Staircase and the Arete.

    Parameters
    ----------
    table : dict, optional
        A frontier table (``noisecore.frontier.load()``, the default, or ``read``/``compute``).
    variance : bool
        Plot the variance columns instead of E|Z|.

    Returns
    -------
    holoviews.Overlay
        Log-log curves; a column's NaN rows (outside its range) are left out.
    """
    if table is None:
        table = frontier_table.load()
    _check("table", table, dict)
    _check("variance", variance, bool)
    missing = [c for c in ("epsilon", *FRONTIER_CURVES) if c not in table]
    if missing:
        raise ValueError(f"table lacks the columns {missing}")
    vdim = "variance" if variance else "E|Z|"
    eps = np.asarray(table["epsilon"], dtype=float)
    curves = []
    for column, (label, role) in FRONTIER_CURVES.items():
        if variance:
            column = column.replace("_abs", "_var")
        y = np.asarray(table[column], dtype=float)
        keep = np.isfinite(y) & (y > 0)
        if keep.any():
            curves.append(_curve(eps[keep], y[keep], "epsilon", vdim, label, role, logx=True, logy=True))
    return _legend(hv.Overlay(curves), f"error frontier: {vdim} against epsilon (sensitivity 1)")


# --- RAT ---------------------------------------------------------------------------------------------------
def rat_run_plot(run: RatRun) -> hv.Overlay:
    """One RAT run round by round: true and noisy private accuracy, the noisy threshold, the halt.

    Parameters
    ----------
    run : RatRun
        From ``dashboard.scenarios.rat_run``.

    Returns
    -------
    holoviews.Overlay
        Curves per round, the target accuracy and the stopping round (a false halt is drawn as such).
    """
    _check("run", run, RatRun)
    n = np.arange(1, run.epsilons.size + 1)
    parts = [
        _curve(n, 1.0 - run.error, "round", "accuracy", "true accuracy", "truth"),
        _scatter(n, run.noisy_utility, "round", "accuracy", "noisy accuracy", "RAT"),
        _scatter(n, run.noisy_threshold, "round", "accuracy", "noisy threshold", "threshold", marker="triangle"),
        _hline(1.0 - run.target, "target"),
    ]
    if run.stop_round:
        parts.append(_vline(run.stop_round, "false halt" if run.false_halt else "stop"))
    halt = "never halts" if not run.stop_round else f"halts at round {run.stop_round}"
    title = f"one RAT run: {halt}" + (" (a false halt)" if run.false_halt else "")
    return _legend(hv.Overlay(parts), title).redim.label(round="round n", accuracy="private accuracy")


def rat_study_plot(study: RatStudy) -> hv.Layout:
    """Over many runs, per stopping rule: the stopping round and the ex-post epsilon (histograms) and the
    true error at the halt (boxes).

    Parameters
    ----------
    study : RatStudy
        From ``dashboard.scenarios.rat_study``.

    Returns
    -------
    holoviews.Layout
        Two overlays of step histograms and a box-whisker plot.
    """
    _check("study", study, RatStudy)
    rounds = np.arange(0.5, study.epsilons.size + 1.5)
    finite = np.concatenate([v[np.isfinite(v)] for v in study.ex_post.values()])
    top = float(finite.max()) if finite.size else 1.0
    eps_edges = np.linspace(0, top * 1.02, 41)
    stop_hists, cost_hists, rows = [], [], []
    for rule in RAT_RULES:
        stop = study.stop_rounds[rule]
        counts, _ = np.histogram(stop[stop > 0], bins=rounds)
        stop_hists.append(_hist(counts, rounds, "round", rule))
        cost = study.ex_post[rule]
        counts, _ = np.histogram(cost[np.isfinite(cost)], bins=eps_edges)
        cost_hists.append(_hist(counts, eps_edges, "ex-post epsilon", rule))
        err = study.error_at_stop[rule]
        rows += [(rule, float(e)) for e in err[np.isfinite(err)]]
    boxes = hv.BoxWhisker(rows, kdims=["rule"], vdims=["error at the halt"]).opts(
        backend="bokeh",
        **FRAME,
        tools=["hover"],
        box_fill_color="rule",
        cmap=[PALETTE[r] for r in RAT_RULES],
        title="true error rate on the private records at the halt",
    )
    boxes = boxes * _hline(study.target, "target")
    stops = _legend(hv.Overlay(stop_hists), "stopping round").redim.label(runs="runs")
    costs = _legend(hv.Overlay(cost_hists), "ex-post epsilon").redim.label(runs="runs")
    return (stops + costs + boxes).cols(1).opts(backend="bokeh", shared_axes=False)


def _hist(counts, edges, kdim: str, rule: str) -> hv.Histogram:
    hist = hv.Histogram((np.asarray(edges), np.asarray(counts)), kdims=[kdim], vdims=["runs"], label=rule)
    return hist.opts(
        backend="bokeh",
        fill_alpha=0.25,
        fill_color=PALETTE[rule],
        line_color=PALETTE[rule],
        line_width=2,
        **FRAME,
        tools=["hover"],
    )


# --- paper A's experiments ---------------------------------------------------------------------------------
def tradeoff_plot(result: TradeoffResult) -> hv.Overlay:
    """Mean training loss against epsilon for BM and LNR with their 95% bands and the optimum.

    Parameters
    ----------
    result : TradeoffResult
        From ``noisecore.experiments.tradeoff_experiment`` (or ``run_experiment(...).tradeoff``).

    Returns
    -------
    holoviews.Overlay
        Bands (``hv.Area``), mean curves and the non-private optimum.
    """
    _check("result", result, TradeoffResult)
    r = result
    parts = []
    for key, label in (("bm", "Brownian mechanism"), ("lnr", "Laplace noise reduction")):
        mean, low, high = (getattr(r, f"{key}_{part}") for part in ("mean", "low", "high"))
        band = hv.Area((r.epsilons, low, high), kdims=["epsilon"], vdims=["loss", "loss high"], label=f"{label}, 95%")
        parts.append(_style(band, key, fill_color=PALETTE[key], fill_alpha=0.2, logx=True))
        parts.append(_curve(r.epsilons, mean, "epsilon", "loss", label, key, logx=True))
    parts.append(_hline(r.optimal_loss, "truth"))
    title = f"{r.task}: mean loss over {r.trials} trials"
    return _legend(hv.Overlay(parts), title).redim.label(epsilon="privacy level epsilon", loss="regularized loss")


def stopping_plot(result: StoppingResult) -> hv.Overlay:
    """Ex-post epsilon per (mechanism, rule) over the trials that met the target, as boxes.

    Parameters
    ----------
    result : StoppingResult
        From ``noisecore.experiments.stopping_experiment`` (or ``run_experiment(...).stopping``).

    Returns
    -------
    holoviews.Overlay
        A box-whisker plot with one box per (mechanism, rule).
    """
    _check("result", result, StoppingResult)
    rows, colours = [], {}
    for (mech, rule), values in result.ex_post.items():
        key = f"{mech} {rule}"
        colours[key] = PALETTE[mech]
        rows += [(key, float(v)) for v in values[np.isfinite(values)]]
    boxes = hv.BoxWhisker(rows, kdims=["stopping rule"], vdims=["ex-post epsilon"])
    boxes = boxes.redim.values(**{"stopping rule": list(colours)}).opts(
        backend="bokeh",
        **FRAME,
        tools=["hover"],
        invert_axes=True,
        logy=True,
        box_fill_color="stopping rule",
        cmap=colours,
        title=f"{result.task}: ex-post epsilon paid at the halt (target loss {result.target:.4g})",
    )
    return hv.Overlay([boxes])


def experiment_plot(result: ExperimentResult) -> hv.Layout:
    """Both of paper A's experiments: the trade-off curves and, when there was a target, the boxes.

    Parameters
    ----------
    result : ExperimentResult
        From ``noisecore.experiments.run_experiment``.

    Returns
    -------
    holoviews.Layout
    """
    _check("result", result, ExperimentResult)
    layout = hv.Layout([tradeoff_plot(result.tradeoff)])
    if result.stopping is not None:
        layout = layout + stopping_plot(result.stopping)
    return layout.cols(1)


# --- offline output --------------------------------------------------------------------------------------
def _inline_sheets(viewable, root) -> None:
    if pn.config.inline:
        for model in root.select({"type": UIElement}):
            patch_inline_stylesheets(model)


@functools.lru_cache(maxsize=1)
def _panel_sheets_as_data() -> tuple[tuple[str, str], ...]:
    """(an address Panel gives one of its style sheets, a ``data:`` address with the same file)."""
    dist = Path(pn.__file__).parent / "dist"
    pairs = []
    for path in sorted([*dist.glob("css/*.css"), *dist.glob("bundled/theme/*.css")]):
        relative = path.relative_to(dist).as_posix()
        data = "data:text/css;base64," + base64.b64encode(path.read_bytes()).decode("ascii")
        for url in (CDN_DIST + relative, LOCAL_DIST + relative):  # Panel names them either way
            pairs.extend([(url, data), (f"{url}?v={JS_VERSION}", data)])
    return tuple(pairs)


def _document_of(root) -> Document | None:
    """The document ``root`` is rendered into: its own, or (on first render, before Panel adds it) the one
    whose style sheet cache holds the sheets ``root`` was given."""
    if root.document is not None:
        return root.document
    given = {id(sheet) for sheet in root.stylesheets if isinstance(sheet, ImportedStyleSheet)}
    for doc, cache in list(pn.state._stylesheets.items()):
        if any(id(sheet) in given for sheet in cache.values()):
            return doc
    return None


def _sheets_from_data_for_updates(viewable, root) -> None:
    """Give later updates of a live notebook output Panel's style sheets as ``data:`` addresses.

    Panel inlines the style sheets of a notebook output's first render, but an update of an HTML or
    Markdown pane sends the pane's sheets again, as links to Panel's CDN (a live view's slider moved
    once: 12 requests off the machine, each an error offline). Panel takes those sheets from a cache per
    document, by address; filled here with the same files as ``data:`` addresses, every later update
    and every model added later links nothing outside the page. Related upstream:
    holoviz/panel#8707 (fixed in #8708 for new models, not for pane updates)."""
    if not pn.config.inline:
        return
    doc = _document_of(root)
    if doc is None:
        return
    cache = pn.state._stylesheets.setdefault(doc, {})
    for url, data in _panel_sheets_as_data():
        sheet = cache.get(url)
        if sheet is None or getattr(sheet, "url", None) != data:
            cache[url] = ImportedStyleSheet(url=data)


def inline_style_sheets(live_updates: bool = True) -> None:
    """Keep a notebook's Panel and HoloViews output offline while ``pn.config.inline`` is set.

    ``pn.extension(inline=True)`` inlines the JavaScript and the style sheets of Panel objects, but
    HoloViews 1.23 renders its output through Panel without that step: each plot then links four style
    sheets on Panel's CDN, which a saved notebook cannot load offline. This adds Panel's own inlining step
    as a render hook, and with ``live_updates`` a second hook so that a live output's later updates link
    no style sheet off the machine either (each hook once; ``live_updates=False`` after ``True`` does not
    remove it).
    """
    if not isinstance(live_updates, bool):
        raise TypeError(f"live_updates must be True or False, got {live_updates!r}")
    hooks = pn.viewable.Viewable._preprocessing_hooks
    wanted = [_sheets_from_data_for_updates] if live_updates else []
    for hook in [*wanted, _inline_sheets]:  # the cache is filled while the first render's sheets are shared
        if hook not in hooks:
            hooks.append(hook)
            if hook is _sheets_from_data_for_updates:
                log.info("notebook: Panel's style sheets go to live updates as data: addresses (holoviz/panel#8707)")


# --- dispatch and export -----------------------------------------------------------------------------------
_PLOTS = {
    RewindScenario: rewind_plot,
    BoundaryCurves: boundary_plot,
    CrossingStudy: crossing_plot,
    NoiseComparison: noise_plot,
    RatRun: rat_run_plot,
    RatStudy: rat_study_plot,
    TradeoffResult: tradeoff_plot,
    StoppingResult: stopping_plot,
    ExperimentResult: experiment_plot,
}


def plot(record):
    """The HoloViews view of any story record (see the functions above); a dict is a frontier table.

    Parameters
    ----------
    record : object
        A record of ``dashboard.scenarios`` or ``noisecore.experiments``, or a frontier table.

    Returns
    -------
    holoviews.Overlay or holoviews.Layout
    """
    if isinstance(record, dict):
        return frontier_plot(record)
    for kind, fn in _PLOTS.items():
        if isinstance(record, kind):
            return fn(record)
    raise TypeError(f"record must be a story record ({', '.join(k.__name__ for k in _PLOTS)}) or a frontier table")


def save_html(obj, *, path, title="noiselab") -> str:
    """Save a HoloViews object as a standalone HTML file with BokehJS inline (it renders offline).

    Parameters
    ----------
    obj : holoviews.core.Dimensioned
        What to save (an element, overlay or layout).
    path : str or os.PathLike
        The file to write; ".html" is appended when missing.
    title : str
        The page title.

    Returns
    -------
    str
        The path written.
    """
    if not isinstance(obj, hv.core.Dimensioned):
        raise TypeError(f"obj must be a HoloViews object, got {type(obj).__name__}")
    path = os.fspath(file_path("path", path))
    _check("title", title, str)
    if not path.endswith(".html"):
        path += ".html"
    # hv.save leaves Panel's style sheets on its CDN: build the models, inline the sheets, then save
    doc = Document()
    with set_resource_mode("inline"):
        root = pn.pane.HoloViews(obj, backend="bokeh").get_root(doc)
    for model in root.select({"type": UIElement}):
        patch_inline_stylesheets(model)
    add_to_doc(root, doc, True)
    pn.io.save.save(doc, path, title=title, resources=INLINE)
    return path
