"""ReducedAboveThreshold: checking accuracy on the private data, round by round and over many runs."""

from __future__ import annotations

import functools
import io

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Span

from ..export import csv_document
from ..palette import PALETTE
from ..scenarios import (
    RAT_DIM,
    RAT_ROWS,
    RAT_RULES,
    RAT_SPAN,
    rat_headline,
    rat_run,
    rat_run_readout,
    rat_study,
    rat_table,
)
from ..wording import mark_terms
from .base import TABLE_SCROLL, BaseView, flex_row, new_figure, reveal, stack, text

ROUNDS = 20
RUNS = 1000
AT_EPSILON = 0.5


class RatView(BaseView):
    title = "ReducedAboveThreshold stopping events"
    explanation = (
        f"A logistic regression on {RAT_ROWS} private records ({RAT_DIM} features; paper A's task at lecture scale) "
        f"is released by the Brownian mechanism at privacy levels from epsilon/{RAT_SPAN} up to epsilon. To stop "
        "once the model's error *on the private records* is below a target, the check itself must be private. Its "
        f"utility is the accuracy, an average over the records: sensitivity 1/{RAT_ROWS}, range [0, 1], so the "
        "check's noise is small next to the range, though not always next to the gap it must resolve: the "
        "headline says how often halts meet the target. AboveThreshold pays a fixed epsilon for it; "
        "ReducedAboveThreshold (RAT) removes threshold noise as the releases get more accurate and pays "
        "2 psi(T_N) in all (paper A, Corollary 5.2)."
    )
    formula = (
        r"$$\text{halt at } n \iff u_n + \xi_n \ge \tau + \zeta_n,\quad \xi_n \sim \mathrm{Lap}"
        r"\big(\tfrac{4\Delta}{\varepsilon_n}\big),\ \zeta_n = Z_{2\Delta/\varepsilon_n},\qquad "
        r"\varepsilon_{\text{ex post}} = 2\,\psi(T_N)$$"
    )
    notice = (
        "RAT pays twice the level where it halts, AboveThreshold that level plus a fixed "
        f"{AT_EPSILON}: RAT is cheaper whenever it halts below epsilon = {AT_EPSILON}. A private check is noisy, so "
        "some halts come while the true error is still above the target (false halts, marked and counted). The "
        "hold-out rule is an idealised check on public data (free, but only as good as the public data)."
    )
    filename = "rat_stopping.csv"

    def __init__(self, settings, **params):
        super().__init__(settings, **params)
        self.run = None
        self.study = None
        self.src_rounds = ColumnDataSource({"n": [], "accuracy": [], "noisy": [], "threshold": [], "eps": []})
        self.src_halt = ColumnDataSource({"n": [], "noisy": []})
        self.src_false = ColumnDataSource({"n": [], "noisy": []})
        self.src_hist = {r: ColumnDataSource({"left": [], "right": [], "top": []}) for r in RAT_RULES}
        self.src_eps = {r: ColumnDataSource({"left": [], "right": [], "top": []}) for r in RAT_RULES}
        self.src_err = {r: ColumnDataSource({"left": [], "right": [], "top": []}) for r in RAT_RULES}
        self.fig_rounds = new_figure("one run, round by round", x_axis_label="round n", y_axis_label="private accuracy")
        self.fig_rounds.line(
            "n",
            "accuracy",
            source=self.src_rounds,
            color=PALETTE["truth"],
            line_dash="dashed",
            legend_label="true accuracy",
        )
        self.fig_rounds.scatter(
            "n", "noisy", source=self.src_rounds, size=7, color=PALETTE["RAT"], legend_label="noisy accuracy"
        )
        self.fig_rounds.step(
            "n",
            "threshold",
            source=self.src_rounds,
            color=PALETTE["threshold"],
            line_width=2,
            mode="center",
            legend_label="noisy threshold",
        )
        self.halt_marker = self.fig_rounds.scatter(
            "n",
            "noisy",
            source=self.src_halt,
            marker="star",
            size=18,
            color=PALETTE["stop"],
            legend_label="halt within target",
        )
        self.false_marker = self.fig_rounds.scatter(
            "n",
            "noisy",
            source=self.src_false,
            marker="x",
            size=18,
            line_width=3,
            color=PALETTE["false halt"],
            legend_label="false halt",
        )
        self.target_line = Span(
            location=0, dimension="width", line_color=PALETTE["target"], line_dash="dotted", line_width=2
        )
        self.fig_rounds.add_layout(self.target_line)
        self.fig_hist = new_figure(f"stopping round over {RUNS} runs", x_axis_label="round", y_axis_label="runs")
        for fig in (self.fig_rounds, self.fig_hist):  # rounds are whole numbers
            fig.xaxis.ticker.min_interval = 1
        self.fig_eps = new_figure(
            f"ex-post epsilon over {RUNS} runs", x_axis_label="ex-post epsilon", y_axis_label="runs"
        )
        self.fig_err = new_figure(
            f"true error at the halt over {RUNS} runs",
            x_axis_label="error rate on the private records (%)",
            y_axis_label="runs",
        )
        self.err_target = Span(
            location=0, dimension="height", line_color=PALETTE["target"], line_dash="dotted", line_width=3
        )
        self.fig_err.add_layout(self.err_target)
        colors = {rule: PALETTE[rule] for rule in RAT_RULES}
        dashes = dict(zip(RAT_RULES, ("solid", "dashed", "dotted"), strict=False))
        for rule in RAT_RULES:
            for fig, sources in (
                (self.fig_err, self.src_err),
                (self.fig_hist, self.src_hist),
                (self.fig_eps, self.src_eps),
            ):
                fig.quad(
                    source=sources[rule],
                    left="left",
                    right="right",
                    top="top",
                    bottom=0,
                    # outlines, one dash per rule: three translucent fills blended into one colour on a projector
                    fill_alpha=0,
                    line_color=colors[rule],
                    line_width=2.5,
                    line_dash=dashes[rule],
                    legend_label=rule,
                )
        self.finish_figures(self.fig_rounds, self.fig_hist, self.fig_eps, self.fig_err)
        self.study_plots = stack()  # the study's plots go on the page with the first study (reveal)
        self.readout = text("")
        self.study_readout = text("", stylesheets=[TABLE_SCROLL])
        self.follow(["epsilon", "delta", "rho", "seed"], self.update_run)
        self.follow(["committed"], self.update_study)

    def update_run(self):
        s = self.settings
        run = rat_run(epsilon=s.epsilon, delta=s.delta, rho=s.rho, rounds=ROUNDS, at_epsilon=AT_EPSILON, rng=s.seed)
        n = np.arange(1, run.epsilons.size + 1)
        checked = np.isfinite(run.noisy_utility)
        with pn.io.hold():
            self.run = run
            self.src_rounds.data = {
                "n": n,
                "accuracy": 1 - run.error,
                "noisy": np.where(checked, run.noisy_utility, 0),
                "threshold": np.where(checked, run.noisy_threshold, 0),
                "eps": run.epsilons,
            }
            # rounds after the halt are never checked: draw only the checked ones
            self.src_rounds.data = {k: np.asarray(v)[checked] for k, v in self.src_rounds.data.items()}
            k = run.stop_round
            point = {"n": [k], "noisy": [run.noisy_utility[k - 1]]} if k else {"n": [], "noisy": []}
            empty = {"n": [], "noisy": []}
            self.src_halt.data = empty if run.false_halt else point
            self.src_false.data = point if run.false_halt else empty
            # the legend lists only the marker that is drawn
            shown = {self.halt_marker: bool(k) and not run.false_halt, self.false_marker: bool(k) and run.false_halt}
            for item in self.fig_rounds.legend[0].items:
                if item.renderers and item.renderers[0] in shown:
                    item.visible = shown[item.renderers[0]]
            self.target_line.location = 1 - run.target
            self.readout.object = mark_terms(rat_run_readout(run, delta=s.delta, at_epsilon=AT_EPSILON).text)

    def update_study(self):
        s = self.settings
        call = functools.partial(cached_study, epsilon=s.epsilon, delta=s.delta, rho=s.rho, rng=s.seed)
        if not self.study_readout.object:  # the first time: say what the spinner is for
            self.study_readout.object = f"*Simulating {RUNS:,} independent runs of each stopping rule...*"
        self.offload("study", call, self.show_study, busy=self.study_readout)

    def show_study(self, study):
        edges = np.arange(0.5, ROUNDS + 1.5)
        finite_all = np.concatenate([v[np.isfinite(v)] for v in study.ex_post.values()])
        eps_edges = np.linspace(0, finite_all.max() * 1.02, 41) if finite_all.size else np.linspace(0, 1, 41)
        errors = np.concatenate([100 * v[np.isfinite(v)] for v in study.error_at_stop.values()])
        top = max(float(errors.max()) if errors.size else 0.0, 100 * study.target) * 1.05
        err_edges = np.linspace(0, top, 41)
        with pn.io.hold():
            self.study = study
            self.err_target.location = 100 * study.target
            for rule in RAT_RULES:
                err = study.error_at_stop[rule]
                counts, _ = np.histogram(100 * err[np.isfinite(err)], bins=err_edges)
                self.src_err[rule].data = {"left": err_edges[:-1], "right": err_edges[1:], "top": counts}
                rounds = study.stop_rounds[rule]
                counts, _ = np.histogram(rounds[rounds > 0], bins=edges)
                self.src_hist[rule].data = {"left": edges[:-1], "right": edges[1:], "top": counts}
                values = study.ex_post[rule]
                counts, _ = np.histogram(values[np.isfinite(values)], bins=eps_edges)
                self.src_eps[rule].data = {"left": eps_edges[:-1], "right": eps_edges[1:], "top": counts}
            self.show_claim(rat_headline(study))
            self.study_readout.object = rat_table(study).text
            reveal(
                self.study_plots, flex_row(self.plot(self.fig_hist), self.plot(self.fig_eps)), self.plot(self.fig_err)
            )

    def csv_rows(self):
        run = self.run
        header = ["round", "epsilon", "true_error", "holdout_error", "noisy_accuracy", "noisy_threshold", "halt"]
        rows = [
            [
                i + 1,
                float(run.epsilons[i]),
                float(run.error[i]),
                float(run.holdout_error[i]),
                None if not np.isfinite(run.noisy_utility[i]) else float(run.noisy_utility[i]),
                None if not np.isfinite(run.noisy_threshold[i]) else float(run.noisy_threshold[i]),
                int(run.stop_round == i + 1),
            ]
            for i in range(run.epsilons.size)
        ]
        return header, rows

    def study_rows(self):
        """The study, one row per run: each rule's stopping round (0: never), ex-post epsilon and true
        error at the halt (empty: never)."""
        study = self.study
        if study is None:
            return ["run"], []
        header = ["run"]
        columns = []
        for rule in RAT_RULES:
            name = rule.lower().replace("-", "_")
            header += [f"{name}_stop_round", f"{name}_ex_post_epsilon", f"{name}_error_at_halt"]
            columns += [study.stop_rounds[rule], study.ex_post[rule], study.error_at_stop[rule]]
        rows = []
        for i in range(len(columns[0])):
            row = [i + 1]
            for j, col in enumerate(columns):
                v = col[i]
                row.append(int(v) if j % 3 == 0 else (None if not np.isfinite(v) else float(v)))
            rows.append(row)
        return header, rows

    def _study_csv(self):
        header, rows = self.study_rows()
        comments = self.csv_comments()
        if self.study is not None:
            comments.append(f"target error rate {self.study.target:.6g}")
            comments.append("an empty cell: the run never halted within its rounds (stop round 0)")
        return io.StringIO(csv_document(comments, header, rows))

    def build_layout(self):
        self.study_download = pn.widgets.FileDownload(
            callback=self._study_csv,
            filename=f"rat_study_{RUNS}_runs.csv",
            label=f"Download the {RUNS:,}-run study (CSV)",
            variant="outline",
            width=300,
        )
        return stack(
            self.header,
            self.alert,
            pn.FlexBox(self.download, self.study_download, flex_wrap="wrap", sizing_mode="stretch_width"),
            self.plot(self.fig_rounds),
            self.readout,
            self.study_plots,
            self.study_readout,
            self.about,
        )


@functools.lru_cache(maxsize=32)
def cached_study(*, epsilon, delta, rho, rng: int):
    """Deterministic for its inputs, so a class asking for the same settings computes it once."""
    return rat_study(epsilon=epsilon, delta=delta, rho=rho, rounds=ROUNDS, runs=RUNS, at_epsilon=AT_EPSILON, rng=rng)
