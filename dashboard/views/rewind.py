"""Brownian rewind: the released point walks back along one Brownian path towards f(x).

All frames are sent to the browser once per scenario; the player's buttons and the frame display
run in the browser (``CustomJS``), so an animation costs the server nothing per frame and stays
smooth when the server is busy.
"""

from __future__ import annotations

import logging

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Span

from ..claims import FRAME_READOUT, frame_figures, frame_text
from ..describe import figure_series
from ..palette import PALETTE
from ..panes import CONTROL_TEXT_CSS
from ..scenarios import rewind_frame_readout, rewind_headline, rewind_scenario, rewind_stop_readout
from ..wording import EXAMPLES, TERM_CSS, example_line, mark_terms
from .base import BaseView, finite, flex_row, new_figure, stack, text

log = logging.getLogger(__name__)

FRAMES = 120
FRAME_INTERVAL_MS = 33  # about 30 frames per second
SYNC_EVERY = 10  # releases between updates of the slider (and the server) during Play

# the frame display, run in the browser. One source of truth: the release shown is kept on the window
# (per slider); the dot, the readout, the series markers and the slider all draw that release, at every
# frame. The browser draws them without telling the server ({sync: false}): the server needs only the
# slider's release, which it hears every SYNC releases during Play, at Pause and at the end, and it
# sends its own dot, markers and readout whenever it sets a release (RewindView.show_frame).
SHOW_JS = """
const key = 'noiselabTimer' + slider.id;
const shown = 'noiselabFrame' + slider.id;
const local = {sync: false};
// Panel's HTML model takes its text escaped, as the server sends it (raw markup shows as plain text)
const escaped = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
  .replace(/"/g, '&quot;').replace(/'/g, '&#x27;');
const show = (k) => {
  const d = frames.data;
  const count = d.t.length;
  if (count === 0) { return; }
  k = Math.max(0, Math.min(count - 1, Math.round(k)));
  window[shown] = k;
  now.setv({data: {t: [d.t[k]], x: [d.x[k]], y: [d.y[k]]}}, local);
  (window.noiselabFrames = window.noiselabFrames || []).push([k, performance.now()]);
  for (const span of spans) { span.setv({location: k + 1}, local); }
  readout.setv({text: escaped(`READOUT`)}, local);
};
const current = () => (window[shown] === undefined ? slider.value : window[shown]);
// the slider at release k; the server hears of it when tell is true (even if the browser shows k already)
const move = (k, tell) => {
  if (!tell) { slider.setv({value: k}, local); return; }
  if (slider.value === k) { slider.setv({value: NaN}, {silent: true}); }
  slider.value = k;
};
// stop playing; the slider (and the server) take the release on screen, which is returned
const stop = () => {
  window[key] = null;
  const k = current();
  show(k);
  move(k, true);
  return k;
};
"""
# the browser's readout: dashboard.claims' template, each figure as the server formatted it (a text column
# per figure in the frames' source: JavaScript's rounding of exact ties differs from Python's)
FRAME_COLUMNS = {
    "T": "t",
    "epsilon": "epsilon",
    "odds": "odds",
    "composition": "composition",
    "error": "error",
    "expected": "expected",
}


def readout_js() -> str:
    """FRAME_READOUT as a JavaScript template literal over release ``k`` of the ``count`` in ``d``, its terms
    marked as the server marks them (:func:`dashboard.wording.mark_terms`)."""
    for forbidden in ("`", "\\", "${"):
        if forbidden in FRAME_READOUT:
            raise ValueError(f"FRAME_READOUT must not contain {forbidden!r} (it becomes a JavaScript template)")
    out = FRAME_READOUT.replace("{release}", "${k + 1}").replace("{count}", "${count}")
    for name, column in FRAME_COLUMNS.items():
        out = out.replace("{" + name + "}", f"${{d.{column}_text[k]}}")
    out = mark_terms(out)
    for forbidden in ("`", "\\"):
        if forbidden in out:
            raise ValueError(f"the glossary must not contain {forbidden!r} (the readout becomes a JavaScript template)")
    return out


def frame_texts(sc) -> dict:
    """The text columns readout_js reads: each figure of every release, formatted as the server's readout."""
    figures = frame_figures(sc)
    return {
        f"{column}_text": [frame_text(sc, name, v) for v in figures[name]] for name, column in FRAME_COLUMNS.items()
    }


SHOW_JS = SHOW_JS.replace("READOUT", readout_js())
# the slider's own change (a drag, a step, the server): draw its release unless it is on screen already
SLIDER_JS = SHOW_JS + "if (slider.value !== window[shown]) { show(slider.value); }"

# the player's buttons: one animation per slider, its token kept on the window. Play steps inside
# requestAnimationFrame, at most one release per INTERVAL ms, and draws every release everywhere (a
# slow screen slows the animation rather than skip releases); the server hears of the slider every
# SYNC releases, at Pause and at the end.
PLAYER_JS = {
    "play": SHOW_JS
    + """
const last_frame = slider.end;
let k = current() >= last_frame ? slider.start : current();
// Play pauses at the stop (once: from the stop or after it, it plays on to the last release)
const stop_at = stops.data.k.length ? stops.data.k[0] : -1;
const pause_at = stop_at > k ? stop_at : last_frame;
const token = {};
window[key] = token;
if (window.matchMedia && window.matchMedia('(prefers-reduced-motion: reduce)').matches) {
  // motion reduced: one step to where Play would pause, no animation
  window[key] = null;
  show(pause_at);
  move(pause_at, true);
  return;
}
let last = performance.now();
show(k);
move(k, true);
const step = (now_ms) => {
  if (window[key] !== token) { return; }
  if (now_ms - last >= INTERVAL) {
    last = now_ms;
    const before = current();  // a drag of the slider while playing moves the play head
    k = Math.min(pause_at, before + 1);
    show(k);
    move(k, k >= pause_at || k % SYNC === 0);
    if (k >= pause_at) { window[key] = null; return; }
  }
  requestAnimationFrame(step);
};
requestAnimationFrame(step);
""",
    "pause": SHOW_JS + "stop();",
    "back": SHOW_JS + "move(Math.max(slider.start, stop() - 1), true);",
    "forward": SHOW_JS + "move(Math.min(slider.end, stop() + 1), true);",
    "first": SHOW_JS + "stop(); move(slider.start, true);",
    "last": SHOW_JS + "stop(); move(slider.end, true);",
    "jump": SHOW_JS + "stop(); if (stops.data.k.length) { move(stops.data.k[0], true); }",
}
# named by the direction of the noise: the releases go from the noisiest to the least noisy
PLAY_LABEL = "\u25b6 Play towards less noise"
# presenter mode's labels: the buttons on one row of a 1024-pixel projector in large type
SHORT_LABELS = {"play": "\u25b6 Play", "jump": "\u2605 To the stop", "last": "Least \u25b6\u25b6"}
BUTTONS = (
    ("first", "\u25c0\u25c0 Noisiest", "Back to the first, noisiest release"),
    ("back", "\u25c0 More noise", "One release back (more noise)"),
    ("play", PLAY_LABEL, "Play release by release towards less noise; pauses at the stop"),
    ("pause", "Pause", "Pause the rewind"),
    ("forward", "Less noise \u25b6", "One release forward (less noise)"),
    ("jump", "\u2605 Jump to the stop", "Show the release where the stop rule stops"),
    ("last", "Least noise \u25b6\u25b6", "Jump to the last, least noisy release"),
)


CUTOFF_LABELS = ("public cut-off", "public cut-off (coordinate 1)")  # on the line's figure, on the plane's


def _placed(items: list, item, before) -> list:
    """``items`` with ``item`` moved to just before ``before``."""
    rest = [x for x in items if x is not item]
    at = rest.index(before)
    return [*rest[:at], item, *rest[at:]]


class RewindView(BaseView):
    title = "Brownian rewind"
    explanation = (
        "The Brownian mechanism releases f(x) + B(T) at decreasing noise variances T. Rewinding from T to T' "
        "draws from a Brownian bridge, so every release lies on one random walk that ends at f(x) at T = 0. "
        "What a stop costs depends on what it reads. A stop fixed before anything is released costs one "
        "Gaussian release at the last noise level T_N: the earlier releases are a post-processing of it. A stop "
        "that reads the releases (or public data) costs psi(T_N) of the last release, with probability "
        "1 - delta (paper A, Corollary 3.7). A stop that reads the private data needs a private check (RAT)."
    )
    formula = (
        r"$$B(T') \mid B(T) \sim \mathcal{N}\!\left(\tfrac{T'}{T} B(T),\ \tfrac{T'(T-T')}{T}\right),\qquad "
        r"\varepsilon_{\text{ex post}} = \psi(T_N)\ \text{ vs. }\ \tfrac{\mu^2}{2} + \mu z_{1-\delta},\ "
        r"\mu^2 = \textstyle\sum_{n \le N} \Delta^2 / T_n$$"
    )
    notice = (
        "press Play towards less noise: the release slides back along the walk (Play pauses at the stop). The "
        "*expected* error (proportional to sqrt(T)) "
        "shrinks with every release, though one path may wander away for a while. By default the analyst asks "
        "whether f(x) is below a public cut-off (the dash-dot line) and stops at the first release whose "
        "interval leaves it out: the stop reads the releases, so it pays psi(T_N), and the headline shows what "
        "that costs against one release at the same noise level fixed in advance (the price of deciding as you "
        "go) and against the same releases as independent Gaussian releases composed exactly. 'fixed in "
        "advance' stops at a release chosen from the noise level alone: no rewind is needed and one release's "
        "price is charged. The 'peek' rule shows why reading the private error is not allowed."
    )
    filename = "brownian_rewind.csv"

    def __init__(self, settings, **params):
        super().__init__(settings, **params)
        self.scenario = None
        self.frame = pn.widgets.IntSlider(
            label="release",
            start=0,
            end=FRAMES - 1,
            value=0,
            sizing_mode="stretch_width",
            show_value=False,
            margin=(0, 10),
        )
        # the browser draws each release and tells the server the slider's: the plots in words follow it
        self.frame.param.watch(self._on_release_heard, "value")
        cols = {"t": [], "x": [], "y": [], "epsilon": [], "composition": [], "error": [], "expected": []}
        cols.update({f"{column}_text": [] for column in FRAME_COLUMNS.values()})
        self.src_frames = ColumnDataSource(cols, name="rewind-frames")
        self.src_path = ColumnDataSource({"t": [], "x": [], "y": []}, name="rewind-path")
        self.src_now = ColumnDataSource({"t": [], "x": [], "y": []}, name="rewind-now")
        self.src_stop = ColumnDataSource({"t": [], "x": [], "y": [], "k": []}, name="rewind-stop")
        # the peek counter-example: a neighbour's f(x) (one sensitivity higher) and where the same releases
        # would stop with its data
        self.src_neighbour = ColumnDataSource({"t": [], "x": [], "y": []})
        self.src_neighbour_truth = ColumnDataSource({"t": [], "x": [], "y": []})
        self.src_series = ColumnDataSource(
            {"n": [], "epsilon": [], "composition": [], "error": [], "expected": [], "bound": [], "target": []}
        )
        self.src_loss = ColumnDataSource({"n": [], "loss": []})
        self.src_target = ColumnDataSource({"x": [], "y": []})
        self.src_cutoff = ColumnDataSource({"t": [], "x": [], "y": []})  # the decision's public cut-off

        self.fig_line = new_figure(
            "f(x) + B(t) against t",
            x_axis_type="log",
            height=460,
            x_axis_label="noise variance t (log scale)",
            y_axis_label="released value",
        )
        self._neighbour_items = ("neighbour's f(x) (one person more)", "neighbour's stop, same releases")
        self._neighbour_drawn = False
        self.fig_line.line(
            "t", "x", source=self.src_path, color=PALETTE["walk"], line_width=1.5, legend_label="latent walk"
        )
        self.fig_line.scatter(
            "t", "x", source=self.src_frames, size=3, color=PALETTE["release"], legend_label="release times"
        )
        self.fig_line.add_layout(Span(location=0, dimension="width", line_color=PALETTE["truth"], line_dash="dashed"))
        self._draw_cutoff(self.fig_line, "t", "x", CUTOFF_LABELS[0])
        # the peek counter-example (a neighbour's f(x) and stop) is drawn when first chosen: _draw_neighbour
        self._stop_mark = self.fig_line.scatter(
            "t", "x", source=self.src_stop, marker="star", size=16, color=PALETTE["stop"], legend_label="stop"
        )
        self._now_mark = self.fig_line.scatter(
            "t",
            "x",
            source=self.src_now,
            size=12,
            color=PALETTE["current"],
            legend_label="current release",
        )  # not level="overlay": repainting that layer alone wiped the legend's symbols (Bokeh 3.9)

        self.fig_privacy = new_figure(
            "privacy per release", x_axis_label="release n", y_axis_label="epsilon", height=340, y_axis_type="log"
        )
        self.fig_privacy.line(
            "n",
            "epsilon",
            source=self.src_series,
            color=PALETTE["psi"],
            line_width=2,
            legend_label="psi(T_n): ex-post epsilon",
        )
        self.fig_privacy.line(
            "n",
            "composition",
            source=self.src_series,
            color=PALETTE["composition"],
            line_width=2,
            line_dash="dashed",
            legend_label="independent releases, composed exactly",
        )
        self.fig_privacy.scatter(
            "n",
            "loss",
            source=self.src_loss,
            color=PALETTE["neighbour"],
            size=4,
            legend_label="loss vs a fixed neighbour (> 0)",
        )
        self.fig_error = new_figure(
            "error of each release", x_axis_label="release n", y_axis_label="||release - f(x)||", height=340
        )
        self.fig_error.line(
            "n", "error", source=self.src_series, color=PALETTE["error"], line_width=2, legend_label="this path's error"
        )
        self.fig_error.line(
            "n",
            "expected",
            source=self.src_series,
            color=PALETTE["expected"],
            line_width=2,
            line_dash="dashed",
            legend_label="expected error",
        )
        self.fig_error.line(
            "n",
            "bound",
            source=self.src_series,
            color=PALETTE["bound"],
            line_width=2,
            line_dash="dotted",
            legend_label="90% bound (public)",
        )
        # a line, not a Span: the legend names it (a Span has no legend entry)
        self.fig_error.line(
            "n",
            "target",
            source=self.src_series,
            color=PALETTE["target"],
            line_width=2,
            line_dash="dashed",
            legend_label="target error (your setting)",
        )
        self.now_spans = [
            Span(location=1, dimension="height", line_color=PALETTE["current"], name="rewind-marker") for _ in range(2)
        ]
        self.fig_privacy.add_layout(self.now_spans[0])
        self.fig_error.add_layout(self.now_spans[1])
        self.finish_figures(self.fig_line, self.fig_privacy, self.fig_error)
        self._fig_plane = None  # the plane (d = 2) is built when first chosen
        self._plane_pane = None

        # the weight stated: "Release N of 120" lost its bold once the browser had redrawn the readout
        self.frame_readout = pn.pane.HTML(
            "", sizing_mode="stretch_width", margin=(0, 10), stylesheets=["b { font-weight: 700; }", TERM_CSS]
        )
        self.stop_readout = text("", stylesheets=[TERM_CSS])
        self.question = text("", margin=(0, 10), stylesheets=[TERM_CSS], css_classes=["noiselab-question"])
        self.example = pn.widgets.Select.from_param(
            settings.param.example,
            label="the query f(x)",
            stylesheets=[CONTROL_TEXT_CSS],
            options={"a count of people": "count", "abstract f(x), no unit": "abstract"},
            description=settings.param.example.doc,
            width=220,
        )
        self.stop_rule = pn.widgets.RadioButtonGroup.from_param(
            settings.param.stop_rule,
            description="What the stop reads sets its price: see the headline",
            options={
                "decide from the releases": "decide",
                "fixed in advance": "confidence",
                "private check (RAT)": "rat",
                "peek (not private)": "peek",
            },
            stylesheets=[".bk-btn-group { flex-wrap: wrap; }"],
        )
        # once built, both figures stay in the page; only the Bokeh figures' own visibility changes
        # (swapping a pane's figure, or hiding a Bokeh pane, breaks Panel 1.9's style sheets)
        self.walk_pane = stack(self.plot(self.fig_line))
        display = {
            "frames": self.src_frames,
            "now": self.src_now,
            "spans": self.now_spans,
            "readout": self.frame_readout,
            "slider": self.frame,
            "stops": self.src_stop,
        }
        self.frame.jscallback(value=SLIDER_JS, args=display)
        self.buttons = []
        for action, label, tip in BUTTONS:
            button = pn.widgets.Button(
                label=label,
                description=tip,
                variant="outline",
                min_width=112,
                margin=(2, 3),
                css_classes=[f"rewind-{action}"],
            )
            code = PLAYER_JS[action].replace("INTERVAL", str(FRAME_INTERVAL_MS)).replace("SYNC", str(SYNC_EVERY))
            button.js_on_click(args=display, code=code)
            self.buttons.append(button)
        self.jump_button = self.buttons[[action for action, *_ in BUTTONS].index("jump")]
        self.follow(
            ["epsilon", "delta", "rho", "target", "sensitivity", "dim", "seed", "stop_rule", "example"], self.recompute
        )
        self.details.extend([self.stop_readout, self.question, self.example, self.download])
        self._on_present()

    def _on_present(self):
        """Presenter mode: the details give way to the plot, and the player's labels are short enough for its
        buttons to stay on one row of a 1024-pixel projector (the tooltips keep the long names)."""
        super()._on_present()
        for button, (action, label, _tip) in zip(getattr(self, "buttons", ()), BUTTONS, strict=False):
            button.label = SHORT_LABELS.get(action, label) if self.settings.present else label

    def _draw_neighbour(self):
        """Draw the peek counter-example on the line's figure, in the place (under the stop, under the
        current release) and legend order it had when drawn with the figure: 20 models (Bokeh 3.9) that a
        page which never peeks does without."""
        fig = self.fig_line
        truth = fig.line(
            "t",
            "x",
            source=self.src_neighbour_truth,
            color=PALETTE["neighbour"],
            line_dash="dotted",
            line_width=2,
            legend_label=self._neighbour_items[0],
        )
        stop = self._draw_neighbour_stop(fig, "t", "x")
        fig.renderers = _placed(_placed(fig.renderers, truth, self._stop_mark), stop, self._now_mark)
        for legend in fig.legend:
            by_renderer = {item.renderers[0].id: item for item in legend.items if item.renderers}
            items = legend.items
            for mark, before in ((truth, self._stop_mark), (stop, self._now_mark)):
                if mark.id in by_renderer and before.id in by_renderer:
                    items = _placed(items, by_renderer[mark.id], by_renderer[before.id])
            legend.items = items
        self._neighbour_drawn = True

    def _draw_neighbour_stop(self, fig, x, y):
        return fig.scatter(
            x,
            y,
            source=self.src_neighbour,
            marker="star",
            size=18,
            fill_alpha=0,
            line_width=2,
            color=PALETTE["neighbour"],
            legend_label=self._neighbour_items[1],
        )

    @staticmethod
    def _show_legend_items(fig, labels, shown: bool):
        """Legend entries for what is drawn only under some rules (the peek counter-example, the decision's
        cut-off) only while it is drawn."""
        for legend in fig.legend:
            for item in legend.items:
                label = getattr(item.label, "value", None)
                if label in labels and item.visible != shown:
                    item.visible = shown

    def _draw_cutoff(self, fig, x, y, label):
        """The decision's public cut-off, drawn from ``src_cutoff`` (empty for the other stop rules)."""
        fig.line(
            x, y, source=self.src_cutoff, color=PALETTE["cutoff"], line_dash="dotdash", line_width=2, legend_label=label
        )

    @property
    def fig_plane(self):
        """The walk in the plane: built, and added under the line's figure, when first asked for (67
        models a page with d = 1 never shows)."""
        if self._fig_plane is None:
            fig = new_figure(
                "the walk in the plane",
                x_axis_label="coordinate 1",
                height=460,
                y_axis_label="coordinate 2",
                match_aspect=True,
            )
            fig.line("x", "y", source=self.src_path, color=PALETTE["walk"], line_width=1.5, legend_label="latent walk")
            fig.line(
                "x",
                "y",
                source=self.src_target,
                color=PALETTE["target"],
                line_dash="dotted",
                legend_label="target error",
            )
            fig.scatter(
                [0.0], [0.0], marker="cross", size=16, line_width=3, color=PALETTE["truth"], legend_label="f(x)"
            )
            self._draw_cutoff(fig, "x", "y", CUTOFF_LABELS[1])
            fig.scatter(
                "x",
                "y",
                source=self.src_neighbour_truth,
                marker="cross",
                size=16,
                line_width=3,
                color=PALETTE["neighbour"],
                legend_label=self._neighbour_items[0],
            )
            fig.scatter(
                "x", "y", source=self.src_stop, marker="star", size=16, color=PALETTE["stop"], legend_label="stop"
            )
            self._draw_neighbour_stop(fig, "x", "y")
            fig.scatter(
                "x",
                "y",
                source=self.src_now,
                size=12,
                color=PALETTE["current"],
                legend_label="current release",
            )
            self.finish_figure(fig)
            self._fig_plane = fig
            self._plane_pane = self.plot(fig)
        return self._fig_plane

    def recompute(self):
        s = self.settings
        sc = rewind_scenario(
            epsilon=s.epsilon,
            delta=s.delta,
            rho=s.rho,
            target=s.target,
            sensitivity=s.sensitivity,
            dim=s.dim,
            stop_rule=s.stop_rule,
            frames=FRAMES,
            unit=EXAMPLES[s.example].unit,
            rng=s.seed,
        )
        example = EXAMPLES[s.example]
        values, path = sc.frame_values, sc.path
        two = s.dim == 2
        with pn.io.hold():
            self.scenario = sc
            positive = sc.path_times > 0  # a log axis: f(x) itself sits at t = 0, drawn as the dashed line
            # the log axis's span stated: hidden (d = 2), the figure has no drawn data to range over, and
            # Bokeh warned three times per page that it could not set its ranges
            low, high = float(sc.path_times[positive].min()), float(sc.path_times.max())
            self.fig_line.x_range.start, self.fig_line.x_range.end = low / 1.5, high * 1.5
            shown = [float(path[:, 0].min()), float(path[:, 0].max()), 0.0]
            shown += [sc.cutoff] if sc.stop_rule == "decide" else []
            shown += [float(sc.value[0]) + sc.sensitivity] if sc.stop_rule == "peek" else []
            pad = 0.05 * (max(shown) - min(shown) or 1.0)
            self.fig_line.y_range.start, self.fig_line.y_range.end = min(shown) - pad, max(shown) + pad
            self.src_path.data = {
                "t": sc.path_times[positive],
                "x": path[positive, 0],
                "y": path[positive, 1] if two else np.zeros(int(positive.sum())),
            }
            fy = values[:, 1] if two else np.zeros(len(values))
            self.src_frames.data = {
                "t": sc.frame_times,
                "x": values[:, 0],
                "y": fy,
                "epsilon": sc.frame_epsilon,
                "composition": sc.frame_composition,
                "error": sc.frame_error,
                "expected": sc.frame_expected_error,
                **frame_texts(sc),
            }
            n, eps, comp, loss, err, expected, bound = finite(
                np.arange(1.0, FRAMES + 1),
                sc.frame_epsilon,
                sc.frame_composition,
                sc.frame_neighbour_loss,
                sc.frame_error,
                sc.frame_expected_error,
                sc.frame_error_bound,
            )
            self.src_series.data = {
                "n": n,
                "epsilon": eps,
                "composition": comp,
                "error": err,
                "expected": expected,
                "bound": bound,
                "target": np.full(len(n), s.target),
            }
            positive = loss > 0  # a log axis shows the positive losses (a negative loss favours privacy)
            self.src_loss.data = {"n": n[positive], "loss": loss[positive]}
            angle = np.linspace(0, 2 * np.pi, 121)
            self.src_target.data = {"x": s.target * np.cos(angle), "y": s.target * np.sin(angle)}
            if sc.stop_rule == "decide":
                reach = float(np.abs(path).max()) + sc.cutoff  # the cut-off spans the walk in the plane
                span_t = [float(sc.path_times[sc.path_times > 0].min()), float(sc.path_times.max())]
                self.src_cutoff.data = {"t": span_t, "x": [sc.cutoff, sc.cutoff], "y": [-reach, reach]}
            else:
                self.src_cutoff.data = {"t": [], "x": [], "y": []}
            k = sc.stop_frame
            self.src_stop.data = (
                {"t": [sc.frame_times[k]], "x": [values[k, 0]], "y": [fy[k]], "k": [k]}
                if k >= 0
                else {"t": [], "x": [], "y": [], "k": []}
            )
            self.jump_button.disabled = k < 0
            m = sc.neighbour_stop_frame
            peek = sc.stop_rule == "peek"
            self.src_neighbour.data = (
                {"t": [sc.frame_times[m]], "x": [values[m, 0]], "y": [fy[m]]}
                if peek and m >= 0
                else {"t": [], "x": [], "y": []}
            )
            shift = float(sc.value[0]) + sc.sensitivity
            self.src_neighbour_truth.data = (
                {"t": [float(sc.path_times[1]), float(sc.path_times[-1])], "x": [shift, shift], "y": [0.0, 0.0]}
                if peek
                else {"t": [], "x": [], "y": []}
            )
            unit = f", {example.squared}" if example.squared else ""
            self.fig_line.xaxis.axis_label = f"noise variance t ({'log scale' + unit})"
            self.fig_line.yaxis.axis_label = example.value_label
            self.fig_error.yaxis.axis_label = "distance from f(x)" + (f" ({example.unit})" if example.unit else "")

            self.fig_line.visible = not two
            self.plot(self.fig_line).visible = not two
            # the plane is on the page only while d = 2: hidden, its ranges (matched to the frame's aspect)
            # cannot be computed, and Bokeh warns at every update
            if two and self.fig_plane is not None and self._plane_pane not in self.walk_pane.objects:
                self.walk_pane.append(self._plane_pane)
            elif not two and self._fig_plane is not None and self._plane_pane in self.walk_pane.objects:
                self.walk_pane.remove(self._plane_pane)
            if peek and not self._neighbour_drawn:
                self._draw_neighbour()
            for fig in (self.fig_line, self._fig_plane):
                if fig is not None:
                    self._show_legend_items(fig, self._neighbour_items, peek)
                    self._show_legend_items(fig, CUTOFF_LABELS, sc.stop_rule == "decide")
            self.question.object = mark_terms(
                example_line(example, cutoff=sc.cutoff, sensitivity=sc.sensitivity, question=sc.stop_rule == "decide")
            )
            self.show_claim(rewind_headline(sc))
            self.stop_readout.object = mark_terms(rewind_stop_readout(sc).text)
            self.show_frame(self.frame.value)

    def _now_data(self, k) -> dict:
        """The current-release dot's data at release ``k``."""
        sc = self.scenario
        v = sc.frame_values[k]
        return {"t": [sc.frame_times[k]], "x": [v[0]], "y": [v[1] if v.size > 1 else 0.0]}

    def _release_shown(self) -> int:
        return int(np.clip(self.frame.value, 0, FRAMES - 1))

    def plotted_series(self, fig):
        """The current release as the slider has it: the browser draws releases itself (Play, steps) and
        the server's copy of the dot may be another release's."""
        if self.scenario is None:
            return super().plotted_series(fig)
        return figure_series(fig, {self.src_now.id: self._now_data(self._release_shown())})

    def _on_release_heard(self, _event):
        if self._depth == 0 and self.scenario is not None:  # inside an update, its end describes
            try:
                # held, as every update: Panel runs this event without the document lock, and the save
                # tool's text set directly then fails; a hold sends the changes as Panel's own
                with pn.io.hold():
                    self.refresh_descriptions()
            except Exception:  # the words stay as they were; the plots are unaffected
                log.exception("%s: describing the release failed", self.title)

    def show_frame(self, frame):
        """The server-side twin of SHOW_FRAME_JS: sets the frame for notebooks, tests and new scenarios."""
        sc = self.scenario
        if sc is None:
            return
        k = int(np.clip(frame, 0, FRAMES - 1))
        with pn.io.hold():
            if self.frame.value != k:
                self.frame.value = k
            # sent even when unchanged here: the browser draws releases without telling the server,
            # so the server's copy may be another release's (a held change is sent with its last value)
            self.src_now.data = {"t": [], "x": [], "y": []}
            self.src_now.data = self._now_data(k)
            for span in self.now_spans:
                span.location = None
                span.location = k + 1
            self.frame_readout.object = mark_terms(rewind_frame_readout(sc, k).text)
            # sent even when unchanged here: the browser may have drawn another release's text since
            self.frame_readout.param.trigger("object")

    def csv_rows(self):
        sc = self.scenario
        header = [
            "release",
            "time",
            "ex_post_epsilon",
            "composition_epsilon",
            "psi_sum",
            "error",
            "expected_error",
            "error_bound_90",
            "fixed_neighbour_loss",
        ]
        header += [f"value_{i + 1}" for i in range(sc.frame_values.shape[1])]
        rows = [
            [
                k + 1,
                float(sc.frame_times[k]),
                float(sc.frame_epsilon[k]),
                float(sc.frame_composition[k]),
                float(sc.frame_psi_sum[k]),
                float(sc.frame_error[k]),
                float(sc.frame_expected_error[k]),
                float(sc.frame_error_bound[k]),
                float(sc.frame_neighbour_loss[k]),
                *map(float, sc.frame_values[k]),
            ]
            for k in range(len(sc.frame_times))
        ]
        return header, rows

    def build_layout(self):
        controls = pn.FlexBox(*self.buttons, self.download, flex_wrap="wrap", sizing_mode="stretch_width")
        plots = flex_row(self.walk_pane, stack(self.plot(self.fig_privacy), self.plot(self.fig_error)))
        return stack(
            self.header,
            pn.FlexBox(self.question, self.example, flex_wrap="wrap", sizing_mode="stretch_width"),
            self.alert,
            self.stop_rule,
            controls,
            self.frame,
            self.frame_readout,
            plots,  # the walk before the stop's details: on a projector the plot is on the first screen
            self.stop_readout,
            self.about,
        )
