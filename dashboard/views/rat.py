"""ReducedAboveThreshold: checking accuracy on the private data, round by round and over many runs."""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Span

from noisecore.demos import rat_run, rat_study, rewind_scenario

from .base import PALETTE, BaseView, fmt, new_figure

ROUNDS = 20
RUNS = 2000
RULES = ("hold-out", "AboveThreshold", "RAT")
AT_EPSILON = 0.5


class RatView(BaseView):
    title = "ReducedAboveThreshold stopping events"
    explanation = (
        "To stop when a release is accurate on the private data itself, the check must be private too. "
        "AboveThreshold pays a fixed epsilon for it; ReducedAboveThreshold removes threshold noise along with "
        "the mechanism's noise, and halting at round N costs only epsilon_N on top of the release."
    )
    formula = (r"$$\text{halt at } n \iff u_n + \xi_n \ge \tau + \zeta_n,\quad \xi_n \sim \mathrm{Lap}"
               r"\big(\tfrac{4\Delta}{\varepsilon_n}\big),\ \zeta_n = Z_{2\Delta/\varepsilon_n},\qquad "
               r"\varepsilon_{\text{ex post}} = 2\,\psi(T_N)$$")
    notice = (
        "RAT's ex-post epsilon tracks the round where it halts, while AboveThreshold adds its fixed "
        f"epsilon = {AT_EPSILON} to every run; the hold-out check (public data) is the free lower bound."
    )
    filename = "rat_stopping.csv"

    def __init__(self, settings, **params):
        super().__init__(settings, **params)
        self.run = None
        self.study = None
        self.src_rounds = ColumnDataSource({"n": [], "utility": [], "noisy": [], "threshold": [], "eps": []})
        self.src_stop = ColumnDataSource({"n": [], "noisy": []})
        self.src_hist = {r: ColumnDataSource({"left": [], "right": [], "top": []}) for r in RULES}
        self.src_eps = {r: ColumnDataSource({"left": [], "right": [], "top": []}) for r in RULES}
        self.fig_rounds = new_figure("one run: noisy utility against the noisy threshold", x_axis_label="round n",
                                     y_axis_label="utility = -error")
        self.fig_rounds.line("n", "utility", source=self.src_rounds, color="#999999", line_dash="dashed",
                             legend_label="true utility")
        self.fig_rounds.scatter("n", "noisy", source=self.src_rounds, size=7, color=PALETTE["rat"],
                                legend_label="noisy utility")
        self.fig_rounds.step("n", "threshold", source=self.src_rounds, color="#ff7f0e", line_width=2, mode="center",
                             legend_label="noisy threshold")
        self.fig_rounds.scatter("n", "noisy", source=self.src_stop, marker="star", size=18, color="#2ca02c",
                                legend_label="halt")
        self.fig_rounds.legend.location = "bottom_right"
        self.fig_hist = new_figure(f"stopping round over {RUNS} runs", x_axis_label="round", y_axis_label="runs")
        self.fig_eps = new_figure(f"ex-post epsilon over {RUNS} runs", x_axis_label="ex-post epsilon",
                                  y_axis_label="runs")
        colors = {"hold-out": PALETTE["hold-out"], "AboveThreshold": PALETTE["at"], "RAT": PALETTE["rat"]}
        for rule in RULES:
            self.fig_hist.quad(source=self.src_hist[rule], left="left", right="right", top="top", bottom=0,
                               color=colors[rule], alpha=0.35, legend_label=rule)
            self.fig_eps.quad(source=self.src_eps[rule], left="left", right="right", top="top", bottom=0,
                              color=colors[rule], alpha=0.35, legend_label=rule)
        self.readout = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.study_readout = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.round_span = Span(location=0, dimension="height", line_color="#2ca02c", line_alpha=0.5)
        self.fig_rounds.add_layout(self.round_span)
        settings.param.watch(self._on_run, ["epsilon", "delta", "rho", "target", "sensitivity", "dim", "seed"])
        settings.param.watch(self._on_study, ["committed"])
        self.schedule(self.update_run)
        self.schedule(self.update_study)

    def _on_run(self, *_events):
        self.schedule(self.update_run)

    def _on_study(self, *_events):
        self.schedule(self.update_study)

    def update_run(self):
        s = self.settings
        scenario = rewind_scenario(s.epsilon, s.delta, s.rho, target=s.target, sensitivity=s.sensitivity, dim=s.dim,
                                   frames=120, seed=s.seed)
        run = rat_run(scenario, target=s.target, sensitivity=s.sensitivity, rounds=ROUNDS, at_epsilon=AT_EPSILON,
                      seed=s.seed + 1)
        n = np.arange(1, run.epsilons.size + 1)
        with pn.io.hold():
            self.run = run
            self.src_rounds.data = {"n": n, "utility": run.utility, "noisy": run.noisy_utility,
                                    "threshold": run.noisy_threshold, "eps": run.epsilons}
            k = run.stop_round
            self.src_stop.data = {"n": [k], "noisy": [run.noisy_utility[k - 1]]} if k else {"n": [], "noisy": []}
            self.round_span.location = k if k else 0
            self.round_span.visible = bool(k)
            if k:
                self.readout.object = (
                    f"RAT halts at round **{k}** (epsilon_{k} = {fmt(run.epsilons[k - 1], 3)}): ex-post epsilon "
                    f"**{fmt(run.rat_ex_post, 3)}** = 2 psi(T_N) with delta {fmt(s.delta, 2)}. AboveThreshold on the "
                    f"same releases would pay epsilon_N + {AT_EPSILON} = {fmt(run.at_cost, 3)} when halting there."
                )
            else:
                self.readout.object = (f"RAT does not halt within {ROUNDS} rounds (up to epsilon = "
                                       f"{fmt(s.epsilon, 3)}): raise epsilon or the target error.")

    def update_study(self):
        s = self.settings
        study = rat_study(s.epsilon, s.delta, s.rho, target=s.target, sensitivity=s.sensitivity, dim=s.dim,
                          rounds=ROUNDS, runs=RUNS, at_epsilon=AT_EPSILON, seed=s.seed + 2)
        edges = np.arange(0.5, ROUNDS + 1.5)
        finite_all = np.concatenate([v[np.isfinite(v)] for v in study.ex_post.values()])
        eps_edges = np.linspace(0, finite_all.max() * 1.02, 41) if finite_all.size else np.linspace(0, 1, 41)
        lines = []
        with pn.io.hold():
            self.study = study
            for rule in RULES:
                rounds = study.stop_rounds[rule]
                counts, _ = np.histogram(rounds[rounds > 0], bins=edges)
                self.src_hist[rule].data = {"left": edges[:-1], "right": edges[1:], "top": counts}
                values = study.ex_post[rule]
                values = values[np.isfinite(values)]
                counts, _ = np.histogram(values, bins=eps_edges)
                self.src_eps[rule].data = {"left": eps_edges[:-1], "right": eps_edges[1:], "top": counts}
                median = fmt(float(np.median(values)), 3) if values.size else "n/a"
                lines.append(f"| {rule} | {median} | {fmt(100 * values.size / RUNS, 3)}% |")
            self.study_readout.object = ("| stopping rule | median ex-post epsilon | runs that stop |\n|---|---|---|\n"
                                         + "\n".join(lines))

    def csv_rows(self):
        run = self.run
        header = ["round", "epsilon", "utility", "noisy_utility", "noisy_threshold", "halt"]
        rows = [[i + 1, float(run.epsilons[i]), float(run.utility[i]), float(run.noisy_utility[i]),
                 float(run.noisy_threshold[i]), int(run.stop_round == i + 1)] for i in range(run.epsilons.size)]
        return header, rows

    def __panel__(self):
        return pn.Column(
            self.header, self.alert, self.download,
            self.fig_rounds, self.readout,
            pn.Row(self.fig_hist, self.fig_eps, sizing_mode="stretch_width"),
            self.study_readout,
            sizing_mode="stretch_width",
        )
