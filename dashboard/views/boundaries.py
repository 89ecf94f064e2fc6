"""Privacy boundaries: psi_M and psi_L against time, their inverses, and simulated losses."""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Span

from ..palette import PALETTE
from ..scenarios import (
    boundaries_headline,
    boundaries_readout,
    boundary_curves,
    crossing_readout,
    crossing_study,
    mixture_boundary,
)
from ..wording import mark_terms
from .base import BaseView, finite, flex_row, new_figure, stack, text

SHOWN_PATHS = 25


class BoundaryView(BaseView):
    title = "Privacy boundaries"
    explanation = (
        "The realized privacy loss of the Brownian mechanism is a Brownian motion in disguise. A delta-privacy "
        "boundary psi(t) stays above it at all times at once, with probability 1 - delta: releasing at time t "
        "costs psi(t) ex post, whenever the analyst decides to stop."
    )
    formula = (
        r"$$\psi_M(t) = \frac{\Delta^2}{2t} + \frac{\Delta}{t}\sqrt{2(t+\rho)\log\!\Big(\frac{1}{\delta}"
        r"\sqrt{\tfrac{t+\rho}{\rho}}\Big)},\qquad \psi_L(t) = \frac{\Delta}{t}\Big(\frac{\Delta}{2} + b\Big)"
        r" + \Delta a,\ 2ab = \log\tfrac{1}{\delta}$$"
    )
    notice = (
        "the linear boundary tuned at epsilon needs the least variance right there (no rho does better) but cannot "
        "go below its floor; the mixture boundary reaches every level, and rho sets where it is tightest (near "
        "t = 2 ln(1/delta) rho D^2). Compare like with like: a boundary gives a probabilistic guarantee, so "
        "its fair one-shot rival is the Gaussian release with the same probabilistic guarantee (solid black). "
        "The Balle-Wang Gaussian (dashed grey) meets plain (epsilon, delta)-DP, a weaker requirement; the readout "
        "splits the two gaps."
    )
    filename = "privacy_boundaries.csv"

    def __init__(self, settings, **params):
        super().__init__(settings, **params)
        self.curves = None
        self.study = None
        self.src_psi = ColumnDataSource({"t": [], "mixture": [], "linear": []}, name="boundary-psi")
        self.src_inv = ColumnDataSource({"eps": [], "mixture": [], "gaussian": [], "pdp": []})
        self.src_inv_lin = ColumnDataSource({"eps": [], "linear": []})
        self.src_marks = ColumnDataSource({"t": [], "eps": [], "name": []})
        self.src_paths = ColumnDataSource({"xs": [], "ys": []})
        self.src_bound = ColumnDataSource({"t": [], "psi": []})

        self.fig_psi = new_figure(
            "boundaries against time",
            x_axis_type="log",
            y_axis_type="log",
            x_axis_label="noise variance t",
            y_axis_label="ex-post epsilon psi(t)",
        )
        self.fig_psi.line(
            "t",
            "mixture",
            source=self.src_psi,
            color=PALETTE["mixture"],
            line_width=2,
            legend_label="mixture psi_M (rho)",
        )
        self.fig_psi.line(
            "t",
            "linear",
            source=self.src_psi,
            color=PALETTE["linear"],
            line_width=2,
            legend_label="linear psi_L (tuned)",
        )
        self.fig_psi.scatter(
            "t", "eps", source=self.src_marks, size=10, color=PALETTE["pdp"], legend_label="T(epsilon)"
        )
        self.eps_span = Span(
            location=settings.epsilon, dimension="width", line_dash="dashed", line_color=PALETTE["gaussian"]
        )
        self.fig_psi.add_layout(self.eps_span)

        self.fig_inv = new_figure(
            "variance for each epsilon",
            x_axis_type="log",
            y_axis_type="log",
            x_axis_label="target epsilon",
            y_axis_label="noise variance",
        )
        self.fig_inv.line(
            "eps", "mixture", source=self.src_inv, color=PALETTE["mixture"], line_width=2, legend_label="mixture"
        )
        self.fig_inv.line(
            "eps", "linear", source=self.src_inv_lin, color=PALETTE["linear"], line_width=2, legend_label="linear"
        )
        self.fig_inv.line(
            "eps", "pdp", source=self.src_inv, color=PALETTE["pdp"], line_width=2, legend_label="one Gaussian, pDP"
        )
        self.fig_inv.line(
            "eps",
            "gaussian",
            source=self.src_inv,
            color=PALETTE["gaussian"],
            line_width=2,
            line_dash="dashed",
            legend_label="one Gaussian, DP",
        )
        self.inv_span = Span(
            location=settings.epsilon, dimension="height", line_dash="dashed", line_color=PALETTE["gaussian"]
        )
        self.fig_inv.add_layout(self.inv_span)

        self.fig_paths = new_figure(
            "simulated losses and psi_M",
            x_axis_type="log",
            x_axis_label="noise variance t",
            y_axis_label="privacy loss",
        )
        self.fig_paths.multi_line(
            "xs", "ys", source=self.src_paths, color=PALETTE["loss"], line_alpha=0.75, legend_label="realized losses"
        )
        self.fig_paths.line(
            "t", "psi", source=self.src_bound, color=PALETTE["mixture"], line_width=3, legend_label="psi_M"
        )
        self.finish_figures(self.fig_psi, self.fig_inv, self.fig_paths)
        self.readout = text("")
        self.study_readout = text("")

        self.follow(["epsilon", "delta", "rho", "sensitivity"], self.update_curves)
        self.follow(["committed"], self.update_study)

    def update_curves(self):
        s = self.settings
        c = boundary_curves(epsilon=s.epsilon, delta=s.delta, rho=s.rho, sensitivity=s.sensitivity)
        with pn.io.hold():
            self.curves = c
            self.src_psi.data = {"t": c.t, "mixture": c.mixture, "linear": c.linear}
            self.src_inv.data = {
                "eps": c.epsilons,
                "mixture": c.mixture_time,
                "gaussian": c.gaussian_time,
                "pdp": c.pdp_time,
            }
            eps_lin, lin = finite(c.epsilons, c.linear_time)
            self.src_inv_lin.data = {"eps": eps_lin, "linear": lin}
            marks = c.time_at_epsilon
            self.src_marks.data = {
                "t": [marks["mixture"], marks["linear"]],
                "eps": [s.epsilon, s.epsilon],
                "name": ["mixture", "linear"],
            }
            self.eps_span.location = s.epsilon
            self.inv_span.location = s.epsilon
            self.readout.object = mark_terms(boundaries_readout(c, epsilon=s.epsilon, delta=s.delta, rho=s.rho).text)
            self.show_claim(boundaries_headline(c, epsilon=s.epsilon))

    def update_study(self):
        s = self.settings
        boundary = mixture_boundary(delta=s.delta, rho=s.rho, sensitivity=s.sensitivity)
        t_star = float(boundary.calibrated_time(s.epsilon))
        t = np.geomspace(t_star / 30, t_star * 30, 300)
        study = crossing_study(boundary, t=t, paths=2000, shown=SHOWN_PATHS, rng=s.seed)
        top = float(study.boundary[0]) * 1.2
        with pn.io.hold():
            self.study = study
            clipped = [np.clip(row, -top, top) for row in study.losses]
            self.src_paths.data = {"xs": [t] * len(study.losses), "ys": clipped}
            self.src_bound.data = {"t": t, "psi": study.boundary}
            self.study_readout.object = mark_terms(crossing_readout(study, delta=s.delta).text)

    def csv_rows(self):
        c = self.curves
        header = [
            "t",
            "psi_mixture",
            "psi_linear",
            "epsilon",
            "variance_mixture",
            "variance_linear",
            "variance_gaussian_dp",
            "variance_gaussian_pdp",
        ]
        rows = [
            [
                float(c.t[i]),
                float(c.mixture[i]),
                float(c.linear[i]),
                float(c.epsilons[i]),
                float(c.mixture_time[i]),
                None if not np.isfinite(c.linear_time[i]) else float(c.linear_time[i]),
                float(c.gaussian_time[i]),
                float(c.pdp_time[i]),
            ]
            for i in range(len(c.t))
        ]
        return header, rows

    def build_layout(self):
        return stack(
            self.header,
            self.alert,
            self.download,
            flex_row(self.plot(self.fig_psi), self.plot(self.fig_inv)),
            self.readout,
            self.plot(self.fig_paths),
            self.study_readout,
            self.about,
        )
