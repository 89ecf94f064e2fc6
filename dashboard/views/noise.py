"""Noise in the low-privacy regime: Laplace, Staircase and Arete at the chosen epsilon."""

from __future__ import annotations

import functools

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Span

from noisecore import Arete, Laplace, Staircase
from noisecore import frontier as frontier_table
from noisecore.dropout import dropout_fractions, dropout_point, dropout_table

from ..jobs import when_shown
from ..palette import PALETTE
from ..panes import CONTROL_TEXT_CSS
from ..scenarios import (
    LOCAL_SEARCH_SETS,
    dropout_note,
    dropout_unavailable,
    loss_profile,
    noise_comparison,
    noise_headline,
    noise_table,
)
from ..widgets import CheckedInput
from ..wording import mark_terms
from .base import TABLE_SCROLL, BaseView, finite, flex_row, new_figure, reveal, stack, text

NAMES = ("Laplace", "Staircase", "Arete")
DISTANCES = np.linspace(0.0, 4.0, 17)
PRESENT = np.array([1.0, 0.95, 0.9, 0.8, 0.7, 0.6])
DROPOUT_INTRO = (
    "Each of n users adds one share; if only some arrive, the noise shrinks and the privacy loss grows. "
    "The curves depend only on the fraction present, not on n. "
    "Below a total Gamma shape of 1/2 the density is infinite at 0 and no epsilon holds (not drawn). "
    "The curves for the current Arete, and for Laplace shares of the same epsilon, follow once the Arete "
    "is calibrated."
)
PROGRESS_DELAY_MS = 500  # dropout curves still computing after this show a progress bar and Cancel
PLACEHOLDER_DELAY_MS = 600  # how long the view waits for the calibrated Arete before drawing a placeholder


STORY_EPSILON = 10.0  # where the tour and the button show the low-privacy regime


class NoiseView(BaseView):
    title = "Noise in the low-privacy regime"
    explanation = (
        "For a large epsilon, Laplace noise wastes accuracy: its error falls only like 1/epsilon. The Staircase "
        "is optimal, but it can only be added by one trusted party (central only): it cannot be split into "
        "shares. The Arete (Gamma - Gamma + Laplace) is infinitely divisible, so n users can each add one share "
        "(distributed summation), and above epsilon ~ 3.5 its error falls exponentially too."
    )
    formula = (
        r"$$Z = X_1 - X_2 + Y,\quad X_i \sim \Gamma(\alpha, \theta),\ Y \sim \mathrm{Laplace}(\lambda),\qquad"
        r"\varepsilon = \sup_t \big|\log f(t) - \log f(t + \Delta)\big|$$"
    )
    notice = (
        "the headline ratios, then the log axis: the Staircase steps, the Arete's smooth ridge. The Arete's "
        "worst-case epsilon is a numerical supremum over all t of the exact density's log ratio (multi-scale grid, "
        "local refinement and the tail limit; tested against high-precision oracles). Beyond the sensitivity the "
        "Staircase's loss jumps while the Arete's grows smoothly."
    )
    filename = "noise_comparison.csv"

    def __init__(self, settings, **params):
        super().__init__(settings, **params)
        self.comparison = None
        self.src_density = ColumnDataSource({"x": [], **{n: [] for n in NAMES}})
        self.src_log = {n: ColumnDataSource({"x": [], "y": []}) for n in NAMES}
        self.src_profile = {n: ColumnDataSource({"d": [], "loss": []}) for n in NAMES}
        self.src_error = {
            n: ColumnDataSource({"eps": [], "err": []}) for n in ("Laplace", "Staircase", "Arete", "Lemma 3")
        }
        self.table_data = frontier_table.load()
        self.exact = None  # an exact calibration for the current (epsilon, sensitivity), on request
        self.src_local = ColumnDataSource({"eps": [], "err": []})

        self.fig_density = new_figure("densities", x_axis_label="noise z", y_axis_label="density")
        self.fig_log = new_figure(
            "densities, log scale", x_axis_label="noise z", y_axis_label="density", y_axis_type="log"
        )
        for name in NAMES:
            self.fig_density.line(
                "x", name, source=self.src_density, color=PALETTE[name], line_width=2, legend_label=name
            )
            self.fig_log.line("x", "y", source=self.src_log[name], color=PALETTE[name], line_width=2, legend_label=name)
        self.fig_profile = new_figure(
            "worst-case loss vs distance",
            x_axis_label="output distance / sensitivity\n(paper B, Fig. 3)",
            y_axis_label="privacy loss",
        )
        for name in NAMES:
            self.fig_profile.line(
                "d", "loss", source=self.src_profile[name], color=PALETTE[name], line_width=2, legend_label=name
            )
        self.fig_error = new_figure(
            "the error frontier: E|Z|",
            x_axis_type="log",
            y_axis_type="log",
            x_axis_label="epsilon",
            y_axis_label="E|Z|",
        )
        labels = {
            "Laplace": "Laplace",
            "Staircase": "Staircase",
            "Arete": "Arete, calibrated",
            "Lemma 3": "Arete, Lemma 3",
        }
        for name, label in labels.items():
            self.fig_error.line(
                "eps",
                "err",
                source=self.src_error[name],
                color=PALETTE[name],
                line_width=2,
                line_dash="dashed" if name == "Lemma 3" else "solid",
                legend_label=label,
            )
        self.fig_error.scatter(
            "eps",
            "err",
            source=self.src_local,
            size=9,
            color=PALETTE["Arete"],
            marker="diamond",
            legend_label="Arete, local-search sets",
        )
        self.err_span = Span(
            location=settings.epsilon, dimension="height", line_dash="dashed", line_color=PALETTE["gaussian"]
        )
        self.fig_error.add_layout(self.err_span)
        self.table = text("", stylesheets=[TABLE_SCROLL])
        self.src_drop = {n: ColumnDataSource({"present": [], "epsilon": [], "error": []}) for n in ("Arete", "Laplace")}
        self.fig_drop_eps = new_figure(
            "dropouts: epsilon", x_axis_label="fraction of users present", y_axis_label="worst-case epsilon", height=330
        )
        self.fig_drop_err = new_figure(
            "dropouts: E|Z|", x_axis_label="fraction of users present", y_axis_label="E|Z|", height=330
        )
        for name in ("Arete", "Laplace"):
            for fig, column in ((self.fig_drop_eps, "epsilon"), (self.fig_drop_err, "error")):
                fig.line(
                    "present",
                    column,
                    source=self.src_drop[name],
                    color=PALETTE[name],
                    line_width=2,
                    line_dash="dashed" if name == "Laplace" else "solid",  # seen on the Arete's where they coincide
                    legend_label=f"{name} shares",
                )
                fig.scatter("present", column, source=self.src_drop[name], color=PALETTE[name], size=6)
        self.finish_figures(
            self.fig_density, self.fig_log, self.fig_profile, self.fig_error, self.fig_drop_eps, self.fig_drop_err
        )
        # the plots go on the page with their first data (reveal): the densities wait for the calibration
        self.density_plots, self.profile_plots, self.dropout_plots = stack(), stack(), stack()
        self.users = CheckedInput(settings, "users", label="users n", width=120, description=settings.param.users.doc)
        self.dropout_progress = pn.indicators.Progress(
            value=0, max=len(PRESENT), width=220, visible=False, bar_color="info"
        )
        self.cancel_buttons = {}
        for name in ("dropouts",):
            button = pn.widgets.Button(
                label="Cancel", width=90, visible=False, description="Stop waiting for this computation"
            )
            button.on_click(functools.partial(self._on_cancel, name))
            self.cancel_buttons[name] = button
        self.dropout_note = text(DROPOUT_INTRO)

        self.source = pn.widgets.Select.from_param(
            settings.param.arete_source,
            label="Arete parameters",
            description=settings.param.arete_source.doc,
            stylesheets=[CONTROL_TEXT_CSS],
            width=200,
        )
        self.arete_inputs = {
            n: CheckedInput(settings, n, label=n, width=110, step=0.01, description=settings.param[n].doc)
            for n in ("alpha", "theta", "lam")
        }
        self.manual = pn.Row(
            *self.arete_inputs.values(),
            visible=settings.arete_source == "manual",
        )
        settings.param.watch(
            self._on_change, ["epsilon", "sensitivity", "arete_source", "alpha", "theta", "lam", "users", "committed"]
        )
        # at a small epsilon the Arete is Laplace: the tab's story is one click away
        self.try_larger = pn.widgets.Button(
            label=f"Show epsilon = {STORY_EPSILON:g}, where the Arete wins",
            color="primary",
            visible=False,
            description="The Arete's advantage over Laplace appears above epsilon of about 3.5",
        )
        self.try_larger.on_click(self._show_story_epsilon)
        self._last_key = None
        self._dropout_key = None  # the settings the dropout curves shown (or being computed) are for
        self.schedule(self.update)
        self.follow(["sensitivity"], self.update_error_curves)

    def _show_story_epsilon(self, _event=None):
        """The button's epsilon, as a released slider sets it (the heavy refresh follows the commit)."""
        self.settings.epsilon = STORY_EPSILON
        self.settings.param.trigger("committed")

    def _key(self):
        s = self.settings
        return (s.epsilon, s.sensitivity, s.arete_source, s.alpha, s.theta, s.lam, s.users)

    def _on_change(self, *events):
        self.manual.visible = self.settings.arete_source == "manual"
        # the density and certificate take ~30 ms: follow a drag only at its end
        if {e.name for e in events} <= {"epsilon", "sensitivity"}:
            self.err_span.location = self.settings.epsilon
            return
        if self._key() != self._last_key:
            self.schedule(self.update)

    def _exact(self):
        s = self.settings
        if s.arete_source == "calibrated" and self.exact is not None and self.exact[0] == (s.epsilon, s.sensitivity):
            return self.exact[1]
        return None

    def calibrate(self):
        """Calibrate the Arete at exactly this epsilon on the pool (0.03-0.4 s; cached), then redraw."""
        key = (self.settings.epsilon, self.settings.sensitivity)

        def show(arete):
            self.exact = (key, arete)
            if (self.settings.epsilon, self.settings.sensitivity) == key:
                self.update()

        self.offload("calibrate", functools.partial(cached_calibration, *key), show)

    def _on_cancel(self, name, _event):
        self.cancel(name)

    def _end_busy(self, name):
        super()._end_busy(name)
        if name in self.cancel_buttons:
            self.cancel_buttons[name].visible = False

    def update(self):
        """Draw the comparison at the slider's epsilon. The calibrated Arete comes from the pool: wait up to
        PLACEHOLDER_DELAY_MS for it (most calibrations take 0.03-0.4 s, and a repeat is instant), then draw
        the frontier table's row as a labelled placeholder until it arrives."""
        s = self.settings
        exact = self._exact()
        if s.arete_source != "calibrated" or exact is not None:
            self.draw(comparison_for(s, self.table_data, arete=exact))
            return
        key = self._key()
        self.calibrate()  # without a server this returns with the calibration drawn
        doc = pn.state.curdoc
        if self._exact() is not None or doc is None or doc.session_context is None:
            return

        def placeholder():
            if self._exact() is None and self._key() == key:
                self.schedule(self.draw_placeholder)

        # drawn once the page is shown: a change made before is lost (see dashboard.jobs.when_shown)
        doc.add_timeout_callback(lambda: when_shown(doc, lambda: self.guarded(placeholder)), PLACEHOLDER_DELAY_MS)

    def draw_placeholder(self):
        if self._exact() is None:
            self.draw(comparison_for(self.settings, self.table_data))

    def draw(self, c):
        s = self.settings
        profile = {
            "Laplace": loss_profile(
                Laplace.calibrated(s.epsilon, sensitivity=s.sensitivity), distances=DISTANCES * s.sensitivity
            ),
            "Staircase": loss_profile(
                Staircase(s.epsilon, sensitivity=s.sensitivity), distances=DISTANCES * s.sensitivity
            ),
            "Arete": loss_profile(c.arete, distances=DISTANCES * s.sensitivity),
        }
        with pn.io.hold():
            self.comparison = c
            self._last_key = self._key()
            self.src_density.data = {"x": c.x, **c.densities}
            for name in NAMES:
                x, y = finite(c.x, np.where(c.densities[name] > 0, c.densities[name], np.nan))
                self.src_log[name].data = {"x": x, "y": y}
                self.src_profile[name].data = {"d": DISTANCES, "loss": profile[name]}
            self.err_span.location = s.epsilon
            self.show_claim(noise_headline(c))
            self.try_larger.visible = bool(c.laplace_limit) and not c.placeholder
            self.table.object = noise_table(c).text
            unavailable = dropout_unavailable(c)
            stale = self._dropout_key is not None and self._dropout_key != self._last_key
            if stale:  # curves (shown or coming) of other settings: gone, with their note
                self.cancel("dropouts")
                self._dropout_key = None
                self.dropout_plots.objects = []  # off the page: a plot without data makes Bokeh warn
                for src in self.src_drop.values():
                    src.data = {"present": [], "epsilon": [], "error": []}
            if unavailable is not None:
                self.dropout_note.object = mark_terms(unavailable.text)
            elif self._dropout_key is None:  # no curves for these settings: the introduction, then the curves
                self.dropout_note.object = DROPOUT_INTRO
                if not c.placeholder:
                    self.update_dropouts()
            reveal(self.density_plots, flex_row(self.plot(self.fig_density), self.plot(self.fig_log)))
            reveal(self.profile_plots, flex_row(self.plot(self.fig_profile), self.plot(self.fig_error)))

    def update_error_curves(self):
        s = self.settings
        t = self.table_data
        eps = t["epsilon"]
        series = {
            "Laplace": t["laplace_abs"],
            "Staircase": t["staircase_abs"],
            "Arete": t["arete_abs"],
            "Lemma 3": t["lemma3_abs"],
        }
        with pn.io.hold():
            for name, values in series.items():
                x, y = finite(eps, values * s.sensitivity)
                self.src_error[name].data = {"eps": x, "err": y}
            local = [
                (k, Arete(a, th * s.sensitivity, la * s.sensitivity).mean_abs())
                for k, (a, th, la) in LOCAL_SEARCH_SETS.items()
            ]
            self.src_local.data = {"eps": [k for k, _ in local], "err": [v for _, v in local]}

    def update_dropouts(self):
        present, calls = dropout_calls(self.settings, self.comparison)
        key = self._dropout_key = self._key()
        self.offload_each(
            "dropouts",
            calls,
            lambda points: self.show_dropouts(dropout_table(present, points=points), key=key),
            progress=self.dropout_progress,
        )
        # a progress bar and Cancel only for curves that take longer (most take 0.1-0.6 s of the pool)
        self.dropout_progress.visible = False
        doc = pn.state.curdoc
        if self.running("dropouts") and doc is not None and doc.session_context is not None:
            doc.add_timeout_callback(lambda: self.guarded(self._show_dropout_progress, key), PROGRESS_DELAY_MS)

    def _show_dropout_progress(self, key):
        if self.running("dropouts") and self._dropout_key == key:
            self.dropout_progress.visible = True
            self.cancel_buttons["dropouts"].visible = True

    def show_dropouts(self, curves, key=None):
        """Draw dropout curves computed for the settings ``key`` (dropped if the settings changed since)."""
        if key is not None and key != self._key():
            return
        s = self.settings
        with pn.io.hold():
            for name, key in (("Arete", "arete"), ("Laplace", "laplace")):
                present, eps, err = finite(curves["fraction"], curves[f"{key}_epsilon"], curves[f"{key}_mean_abs"])
                self.src_drop[name].data = {"present": present, "epsilon": eps, "error": err}
            reveal(self.dropout_plots, flex_row(self.plot(self.fig_drop_eps), self.plot(self.fig_drop_err)))
            self.dropout_note.object = mark_terms(
                dropout_note(curves, users=s.users, laplace_limit=self.comparison.laplace_limit).text
            )

    def csv_comments(self) -> list:
        """The settings and headline, then the E|Z| / variance table and the dropout curves (when computed)
        as comment blocks, each a small CSV after its '# ' prefix, above the densities."""
        out = super().csv_comments()
        c = self.comparison
        if c is not None:
            out.append(("table: noise", "mean_abs", "variance", "worst_case_epsilon", "share_std"))
            for name in ("Laplace", "Staircase", "Arete"):
                cells = (c.mean_abs[name], c.variance[name], c.certified[name], c.share_std[name])
                out.append((name, *(None if v is None else float(v) for v in cells)))
        drop = {n: src.data for n, src in self.src_drop.items()}
        if len(drop["Arete"]["present"]):
            out.append(("dropout curves: noise", "fraction_present", "worst_case_epsilon", "mean_abs"))
            for name, data in drop.items():
                for row in zip(data["present"], data["epsilon"], data["error"], strict=True):
                    out.append((name, *(float(v) for v in row)))
        return out

    def csv_rows(self):
        c = self.comparison
        header = ["z", *(f"density_{n.lower()}" for n in NAMES)]
        rows = [[float(c.x[i]), *(float(c.densities[n][i]) for n in NAMES)] for i in range(len(c.x))]
        return header, rows

    def build_layout(self):
        return stack(
            self.header,
            self.try_larger,
            self.alert,
            pn.FlexBox(
                self.source,
                self.manual,
                self.download,
                flex_wrap="wrap",
                sizing_mode="stretch_width",
            ),
            self.density_plots,
            self.table,
            self.profile_plots,
            pn.FlexBox(
                self.users,
                self.dropout_progress,
                self.cancel_buttons["dropouts"],
                flex_wrap="wrap",
                sizing_mode="stretch_width",
            ),
            self.dropout_note,
            self.dropout_plots,
            self.about,
        )


def comparison_for(settings, table, arete=None):
    """The noise comparison the view shows for these settings."""
    s = settings
    return noise_comparison(
        epsilon=s.epsilon,
        sensitivity=s.sensitivity,
        source=s.arete_source,
        alpha=s.alpha,
        theta=s.theta,
        lam=s.lam,
        table=table,
        arete=arete,
        users=s.users,
    )


def dropout_calls(settings, comparison):
    """The fractions present and one picklable call per point of the dropout curves: plain numbers, so
    the server's pool can share them between sessions and send them to any worker."""
    arete = comparison.arete
    if isinstance(arete, Arete):
        alpha, theta, lam = arete.alpha, arete.theta, arete.lam
    else:  # the Laplace limit: the shares are Laplace shares
        alpha, theta, lam = 0.0, arete.scale, arete.scale
    present = dropout_fractions(settings.users, fractions_present=PRESENT)
    calls = [
        functools.partial(
            dropout_point,
            alpha,
            theta,
            lam,
            fraction=float(q),
            sensitivity=settings.sensitivity,
            epsilon_full=float(comparison.certified["Arete"]),
        )
        for q in present
    ]
    return present, calls


@functools.lru_cache(maxsize=32)
def cached_calibration(epsilon, sensitivity):
    """Deterministic for its inputs: a class asking for the same calibration computes it once."""
    return Arete.calibrated(epsilon, sensitivity=sensitivity)
