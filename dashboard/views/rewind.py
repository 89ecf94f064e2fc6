"""Brownian rewind: the released point walks back along one Brownian path towards f(x)."""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Span

from ..scenarios import rewind_scenario
from .base import BaseView, finite, fmt, new_figure

FRAMES = 120


class RewindView(BaseView):
    title = "Brownian rewind"
    explanation = (
        "The Brownian mechanism releases f(x) + B(T) at decreasing noise variances T. Rewinding from T to T' "
        "draws from a Brownian bridge, so every release lies on one random walk that ends at f(x) at T = 0. "
        "If the decision to stop reads only the releases or public information, the whole sequence costs "
        "psi(T_N) of the last release, with probability 1 - delta (paper A, Corollary 3.4)."
    )
    formula = r"$$B(T') \mid B(T) \sim \mathcal{N}\!\left(\tfrac{T'}{T} B(T),\ \tfrac{T'(T-T')}{T}\right),\qquad " \
              r"\varepsilon_{\text{ex post}} = \psi(T_N) \ll \textstyle\sum_{n \le N} \psi(T_n)$$"
    notice = (
        "press Play: the release slides back along the walk. The *expected* error sqrt(d T) shrinks with every "
        "release, though one path may wander away for a while. The ex-post epsilon psi(T_n) grows slowly, far "
        "below what naive composition of the same releases would charge. The default stop reads only the public "
        "noise level, so its guarantee holds; the 'peek' rule shows why reading the private error is not allowed."
    )
    filename = "brownian_rewind.csv"

    def __init__(self, settings, **params):
        super().__init__(settings, **params)
        self.scenario = None
        self.player = pn.widgets.Player(start=0, end=FRAMES - 1, value=0, interval=30, loop_policy="once",
                                        show_loop_controls=False, show_value=False, width=420,
                                        visible_buttons=["first", "previous", "reverse", "pause", "play", "next",
                                                         "last"])
        self.src_path = ColumnDataSource({"t": [], "x": [], "y": []}, name="rewind-path")
        self.src_frames = ColumnDataSource({"t": [], "x": [], "y": [], "n": []})
        self.src_now = ColumnDataSource({"t": [], "x": [], "y": []}, name="rewind-now")
        self.src_stop = ColumnDataSource({"t": [], "x": [], "y": []})
        self.src_series = ColumnDataSource({"n": [], "epsilon": [], "composition": [], "error": [],
                                            "expected": [], "bound": []})
        self.src_loss = ColumnDataSource({"n": [], "loss": []})
        self.src_target = ColumnDataSource({"x": [], "y": []})

        self.fig_line = new_figure("f(x) + B(t) against the noise variance t", x_axis_label="noise variance t",
                                   y_axis_label="released value")
        self.fig_line.line("t", "x", source=self.src_path, color="#9ecae1", line_width=1.5, legend_label="latent walk")
        self.fig_line.scatter("t", "x", source=self.src_frames, size=3, color="#6baed6", legend_label="release times")
        self.fig_line.add_layout(Span(location=0, dimension="width", line_color="black", line_dash="dashed"))
        self.fig_line.scatter("t", "x", source=self.src_stop, marker="star", size=16, color="#2ca02c",
                              legend_label="stop")
        self.fig_line.scatter("t", "x", source=self.src_now, size=12, color="#d62728", legend_label="current release")
        self.fig_line.legend.location = "top_left"

        self.fig_plane = new_figure("the walk in the plane: releases close in on f(x)", x_axis_label="coordinate 1",
                                    y_axis_label="coordinate 2", match_aspect=True)
        self.fig_plane.line("x", "y", source=self.src_path, color="#9ecae1", line_width=1.5,
                            legend_label="latent walk")
        self.fig_plane.line("x", "y", source=self.src_target, color="#2ca02c", line_dash="dotted",
                            legend_label="target error")
        self.fig_plane.scatter([0.0], [0.0], marker="cross", size=16, line_width=3, color="black", legend_label="f(x)")
        self.fig_plane.scatter("x", "y", source=self.src_stop, marker="star", size=16, color="#2ca02c",
                               legend_label="stop")
        self.fig_plane.scatter("x", "y", source=self.src_now, size=12, color="#d62728", legend_label="current release")
        self.fig_plane.legend.location = "top_left"

        self.fig_privacy = new_figure("privacy per release", x_axis_label="release n", y_axis_label="epsilon",
                                      height=240, y_axis_type="log")
        self.fig_privacy.line("n", "epsilon", source=self.src_series, color="#1f77b4", line_width=2,
                              legend_label="psi(T_n): ex-post epsilon of stopping here")
        self.fig_privacy.line("n", "composition", source=self.src_series, color="#7f7f7f", line_width=2,
                              line_dash="dashed", legend_label="naive composition: sum of psi(T_m)")
        self.fig_privacy.scatter("n", "loss", source=self.src_loss, color="#ff7f0e", size=4,
                                 legend_label="realized loss vs one fixed neighbour, where > 0 (psi bounds it)")
        self.fig_privacy.legend.location = "top_left"
        self.fig_error = new_figure("error of each release", x_axis_label="release n",
                                    y_axis_label="||release - f(x)||", height=240)
        self.fig_error.line("n", "error", source=self.src_series, color="#d62728", line_width=2,
                            legend_label="this path's error (private)")
        self.fig_error.line("n", "expected", source=self.src_series, color="#7f7f7f", line_width=2,
                            line_dash="dashed", legend_label="expected error")
        self.fig_error.line("n", "bound", source=self.src_series, color="#9467bd", line_width=2,
                            line_dash="dotted", legend_label="90% error bound (public)")
        self.fig_error.legend.location = "top_right"
        self.target_line = Span(location=settings.target, dimension="width", line_color="#2ca02c", line_dash="dashed")
        self.fig_error.add_layout(self.target_line)
        self.now_spans = [Span(location=0, dimension="height", line_color="#d62728", line_alpha=0.6)
                          for _ in range(2)]
        self.fig_privacy.add_layout(self.now_spans[0])
        self.fig_error.add_layout(self.now_spans[1])
        self.readout = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.stop_rule = pn.widgets.RadioButtonGroup.from_param(
            settings.param.stop_rule, options={"stop on public info": "confidence", "private check (RAT)": "rat",
                                               "peek (not private)": "peek"})
        self.pane_line = pn.pane.Bokeh(self.fig_line, sizing_mode="stretch_width")
        self.pane_plane = pn.pane.Bokeh(self.fig_plane, sizing_mode="stretch_width", visible=False)

        self.player.param.watch(self._on_frame, "value")
        settings.param.watch(self._on_settings, ["epsilon", "delta", "rho", "target", "sensitivity", "dim", "seed",
                                                  "stop_rule"])
        self.schedule(self.recompute)

    def _on_settings(self, *_events):
        self.schedule(self.recompute)

    def recompute(self):
        s = self.settings
        scenario = rewind_scenario(epsilon=s.epsilon, delta=s.delta, rho=s.rho, target=s.target,
                                   sensitivity=s.sensitivity, dim=s.dim, stop_rule=s.stop_rule, frames=FRAMES,
                                   seed=s.seed)
        values = scenario.frame_values
        path = scenario.path
        with pn.io.hold():
            self.scenario = scenario
            ycol = path[:, 1] if s.dim == 2 else np.zeros(len(path))
            self.src_path.data = {"t": scenario.path_times, "x": path[:, 0], "y": ycol}
            fy = values[:, 1] if s.dim == 2 else np.zeros(len(values))
            self.src_frames.data = {"t": scenario.frame_times, "x": values[:, 0], "y": fy,
                                    "n": np.arange(1, FRAMES + 1)}
            n, eps, comp, loss, err, expected, bound = finite(
                np.arange(1.0, FRAMES + 1), scenario.frame_epsilon, scenario.frame_composition,
                scenario.frame_neighbour_loss, scenario.frame_error, scenario.frame_expected_error,
                scenario.frame_error_bound)
            self.src_series.data = {"n": n, "epsilon": eps, "composition": comp, "error": err, "expected": expected,
                                    "bound": bound}
            positive = loss > 0  # a log axis shows the positive losses (a negative loss favours privacy)
            self.src_loss.data = {"n": n[positive], "loss": loss[positive]}
            angle = np.linspace(0, 2 * np.pi, 121)
            self.src_target.data = {"x": s.target * np.cos(angle), "y": s.target * np.sin(angle)}
            self.target_line.location = s.target
            k = scenario.stop_frame
            self.src_stop.data = ({"t": [scenario.frame_times[k]], "x": [values[k, 0]], "y": [fy[k]]} if k >= 0
                                  else {"t": [], "x": [], "y": []})
            for pane, fig, shown in ((self.pane_line, self.fig_line, s.dim == 1),
                                     (self.pane_plane, self.fig_plane, s.dim == 2)):
                fig.visible = shown
                pane.visible = shown
            self._show_frame(self.player.value)

    def _on_frame(self, event):
        self.guarded(self._show_frame, event.new)

    def _show_frame(self, frame):
        sc = self.scenario
        if sc is None:
            return
        k = int(np.clip(frame, 0, FRAMES - 1))
        v = sc.frame_values[k]
        with pn.io.hold():
            self.src_now.data = {"t": [sc.frame_times[k]], "x": [v[0]], "y": [v[1] if v.size > 1 else 0.0]}
            for span in self.now_spans:
                span.location = k + 1
            self.readout.object = (
                f"**Release {k + 1} of {FRAMES}**: noise variance T = {fmt(sc.frame_times[k])}, "
                f"ex-post epsilon psi(T) = {fmt(sc.frame_epsilon[k], 3)} (naive composition: "
                f"{fmt(sc.frame_composition[k], 3)}), error = {fmt(sc.frame_error[k], 3)} (expected "
                f"{fmt(sc.frame_expected_error[k], 3)}).  \n{stop_text(sc)}"
            )

    def csv_rows(self):
        sc = self.scenario
        header = ["release", "time", "ex_post_epsilon", "composition_epsilon", "error", "expected_error",
                  "error_bound_90", "fixed_neighbour_loss"]
        header += [f"value_{i + 1}" for i in range(sc.frame_values.shape[1])]
        rows = [[k + 1, float(sc.frame_times[k]), float(sc.frame_epsilon[k]), float(sc.frame_composition[k]),
                 float(sc.frame_error[k]), float(sc.frame_expected_error[k]), float(sc.frame_error_bound[k]),
                 float(sc.frame_neighbour_loss[k]), *map(float, sc.frame_values[k])]
                for k in range(len(sc.frame_times))]
        return header, rows

    def __panel__(self):
        return pn.Column(
            self.header, self.alert,
            pn.Row(self.player, self.download), self.stop_rule,
            pn.Row(pn.Column(self.pane_line, self.pane_plane, sizing_mode="stretch_width"),
                   pn.Column(self.fig_privacy, self.fig_error, sizing_mode="stretch_width"),
                   sizing_mode="stretch_width"),
            self.readout,
            sizing_mode="stretch_width",
        )


def stop_text(sc) -> str:
    """What the stop costs, in words that follow paper A's hypotheses."""
    k, target, delta = sc.stop_frame, fmt(sc.target, 3), fmt(sc.delta, 2)
    if sc.stop_rule == "confidence":
        if k < 0:
            return (f"The noise never gets small enough for the target error {target} by the last release: raise "
                    f"epsilon or the target.")
        met = "within" if sc.frame_error[k] <= sc.target else "**not** within"
        return (f"**Stop at release {k + 1}**: its noise level alone (public) says the error is at most {target} with "
                f"probability {fmt(100 * sc.confidence, 3)}%; this path's error {fmt(sc.frame_error[k], 3)} is {met} "
                f"the target. The stop reads no private data, so all {k + 1} releases cost **ex-post epsilon "
                f"{fmt(sc.stop_epsilon, 3)}** = psi(T_N) (delta {delta}); naive composition would charge "
                f"{fmt(sc.frame_composition[k], 3)}.")
    if sc.stop_rule == "rat":
        if k < 0:
            return (f"ReducedAboveThreshold never halted: everything released costs 2 psi(T_last) = "
                    f"{fmt(sc.stop_epsilon, 3)} (delta {delta}).")
        met = "within" if sc.frame_error[k] <= sc.target else "**not** within (a false halt: the check is noisy)"
        return (f"**ReducedAboveThreshold halts at release {k + 1}** after checking the private error, which is "
                f"{fmt(sc.frame_error[k], 3)}: {met} the target {target}. A check on private data is paid for: "
                f"**ex-post epsilon 2 psi(T_N) = {fmt(sc.stop_epsilon, 3)}** (delta {delta}; paper A, Corollary 5.2). "
                "Here the check's noise (scale 4D/epsilon_n) is as large as the error it checks, so most halts miss "
                "the target; the RAT tab checks a utility averaged over many records, where the check is informative.")
    if k < 0:
        return f"Counter-example (peeking at the private error): no release comes within {target}."
    return (f"**Counter-example**: stopping at release {k + 1} because its *private* error "
            f"{fmt(sc.frame_error[k], 3)} is within {target} reads f(x). A neighbour's data would stop at another "
            f"release, so the stop itself leaks: **no ex-post guarantee holds** (psi(T_N) = "
            f"{fmt(sc.frame_epsilon[k], 3)} would be a false claim). Use the private check (RAT) instead.")

