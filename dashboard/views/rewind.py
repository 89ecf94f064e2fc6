"""Brownian rewind: the released point walks back along one Brownian path towards f(x)."""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Span

from noisecore.demos import rewind_scenario

from .base import BaseView, finite, fmt, new_figure

FRAMES = 120


class RewindView(BaseView):
    title = "Brownian rewind"
    explanation = (
        "The Brownian mechanism releases f(x) + B(T) at decreasing noise variances T. Rewinding from T to T' "
        "draws from a Brownian bridge, so every release lies on one random walk that ends at f(x) at T = 0; "
        "only the last release is paid for (ex post)."
    )
    formula = r"$$B(T') \mid B(T) \sim \mathcal{N}\!\left(\tfrac{T'}{T} B(T),\ \tfrac{T'(T-T')}{T}\right),\qquad " \
              r"\varepsilon_{\text{ex post}} = \psi(T_N)$$"
    notice = (
        "press Play: the release slides back along the walk and the error shrinks while the ex-post epsilon "
        "grows. The analyst stops at the first release within the target error and pays psi at that time only."
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
        self.src_series = ColumnDataSource({"n": [], "epsilon": [], "loss": [], "error": []})
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
                              legend_label="boundary psi(T_n): ex-post epsilon")
        self.fig_privacy.line("n", "loss", source=self.src_series, color="#ff7f0e", line_width=2,
                              legend_label="realized loss, worst neighbour")
        self.fig_privacy.legend.location = "top_left"
        self.fig_error = new_figure("error of each release", x_axis_label="release n",
                                    y_axis_label="||release - f(x)||", height=240)
        self.fig_error.line("n", "error", source=self.src_series, color="#d62728", line_width=2)
        self.target_line = Span(location=settings.target, dimension="width", line_color="#2ca02c", line_dash="dashed")
        self.fig_error.add_layout(self.target_line)
        self.now_spans = [Span(location=0, dimension="height", line_color="#d62728", line_alpha=0.6)
                          for _ in range(2)]
        self.fig_privacy.add_layout(self.now_spans[0])
        self.fig_error.add_layout(self.now_spans[1])
        self.readout = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.pane_line = pn.pane.Bokeh(self.fig_line, sizing_mode="stretch_width")
        self.pane_plane = pn.pane.Bokeh(self.fig_plane, sizing_mode="stretch_width", visible=False)

        self.player.param.watch(self._on_frame, "value")
        settings.param.watch(self._on_settings, ["epsilon", "delta", "rho", "target", "sensitivity", "dim", "seed"])
        self.schedule(self.recompute)

    def _on_settings(self, *_events):
        self.schedule(self.recompute)

    def recompute(self):
        s = self.settings
        scenario = rewind_scenario(s.epsilon, s.delta, s.rho, target=s.target, sensitivity=s.sensitivity, dim=s.dim,
                                   frames=FRAMES, seed=s.seed)
        values = scenario.frame_values
        path = scenario.path
        with pn.io.hold():
            self.scenario = scenario
            ycol = path[:, 1] if s.dim == 2 else np.zeros(len(path))
            self.src_path.data = {"t": scenario.path_times, "x": path[:, 0], "y": ycol}
            fy = values[:, 1] if s.dim == 2 else np.zeros(len(values))
            self.src_frames.data = {"t": scenario.frame_times, "x": values[:, 0], "y": fy,
                                    "n": np.arange(1, FRAMES + 1)}
            n, eps, loss, err = finite(np.arange(1.0, FRAMES + 1), scenario.frame_epsilon, scenario.frame_loss,
                                       scenario.frame_error)
            self.src_series.data = {"n": n, "epsilon": eps, "loss": np.maximum(loss, 1e-300), "error": err}
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
            stop = sc.stop_frame
            stop_text = (f"Target error {fmt(self.settings.target, 3)} first met at release {stop + 1}: "
                         f"**ex-post epsilon {fmt(sc.frame_epsilon[stop], 3)}** (delta {fmt(self.settings.delta, 2)})."
                         if stop >= 0 else
                         f"Target error {fmt(self.settings.target, 3)} is not met by epsilon = "
                         f"{fmt(self.settings.epsilon, 3)}: raise epsilon or the target.")
            self.readout.object = (
                f"**Release {k + 1} of {FRAMES}**: noise variance T = {fmt(sc.frame_times[k])}, "
                f"ex-post epsilon psi(T) = {fmt(sc.frame_epsilon[k], 3)}, error = {fmt(sc.frame_error[k], 3)}, "
                f"realized loss against the worst neighbour = {fmt(sc.frame_loss[k], 3)}.  \n{stop_text}"
            )

    def csv_rows(self):
        sc = self.scenario
        header = ["release", "time", "ex_post_epsilon", "error", "worst_neighbour_loss"]
        header += [f"value_{i + 1}" for i in range(sc.frame_values.shape[1])]
        rows = [[k + 1, float(sc.frame_times[k]), float(sc.frame_epsilon[k]), float(sc.frame_error[k]),
                 float(sc.frame_loss[k]), *map(float, sc.frame_values[k])] for k in range(len(sc.frame_times))]
        return header, rows

    def __panel__(self):
        return pn.Column(
            self.header, self.alert,
            pn.Row(self.player, self.download),
            pn.Row(pn.Column(self.pane_line, self.pane_plane, sizing_mode="stretch_width"),
                   pn.Column(self.fig_privacy, self.fig_error, sizing_mode="stretch_width"),
                   sizing_mode="stretch_width"),
            self.readout,
            sizing_mode="stretch_width",
        )
