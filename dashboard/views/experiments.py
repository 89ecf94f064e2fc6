"""Paper A's experiments, live: BM against Laplace noise reduction on a task and data set of your choice."""

from __future__ import annotations

import functools
import io

import numpy as np
import panel as pn
from bokeh.models import Band, ColumnDataSource, FixedTicker, Span, Whisker

from noisecore.experiments import combine_chunks

from ..claims import experiments_headline, stopping_table
from ..describe import Series
from ..escape import plain
from ..explorer import (
    RULE_LABELS,
    ExperimentSpec,
    available_sources,
    chunk_calls,
    inspect_table,
    level_grid,
    prepare,
)
from ..export import csv_document
from ..models import ExperimentSettings
from ..palette import PALETTE
from ..panes import CONTROL_TEXT_CSS
from ..uploads import upload_problem
from ..widgets import CheckedInput
from .base import TABLE_SCROLL, BaseView, finite, fmt, new_figure, stack, text

RULE_COLORS = {"bm": PALETTE["bm"], "lnr": PALETTE["lnr"], "doubling": PALETTE["doubling"]}


def log_ticks() -> FixedTicker:
    """Labels at 1, 2 and 5 of every decade, minor ticks at each multiple (a new model per figure:
    Bokeh models belong to one document)."""
    decades = 10.0 ** np.arange(-3, 4)
    return FixedTicker(
        ticks=sorted(float(m * d) for d in decades for m in (1, 2, 5)),
        minor_ticks=sorted(float(m * d) for d in decades for m in range(1, 10)),
    )


class ExperimentsView(BaseView):
    title = "Paper A's experiments: BM against Laplace noise reduction"
    explanation = (
        "Each trial releases a private model at every privacy level of the grid twice: with the Brownian mechanism "
        "(BM, Gaussian noise rewound through a linear boundary tuned for epsilon = 0.3, so its ex-post epsilon holds "
        "with probability 1 - delta) and with Laplace noise reduction (LNR, pure epsilon). The upper plot averages "
        "the loss over the trials with 95% bands. The lower plot stops each trial at the first level whose loss meets "
        "the target, checked on public hold-out data (free), with AboveThreshold or with ReducedAboveThreshold "
        "(RAT) on the private data, and shows what each stop costs; the doubling baseline releases fresh Laplace "
        "models at doubling epsilon and pays for all of them."
    )
    formula = (
        r"$$\varepsilon_{\text{BM}} = \psi(T_N)\ \text{(w.p. } 1-\delta),\qquad "
        r"\varepsilon_{\text{RAT}} = 2\,\varepsilon_N,\qquad \varepsilon_{\text{AT}} = \varepsilon_N + 0.5$$"
    )
    notice = (
        "Where the BM curve lies below LNR's, BM buys the same loss for less privacy; the stopping plot shows the "
        "same thing trial by trial. RAT pays exactly twice the level where it stops, AboveThreshold that level plus "
        "a fixed 0.5. Upload your own table (a header row, numeric cells) to try the trade-off on your data."
    )
    filename = "experiment_tradeoff.csv"

    def __init__(self, settings, config: ExperimentSettings | None = None, **params):
        super().__init__(settings, **params)
        self.config = config if config is not None else ExperimentSettings()
        self.result = None
        self._upload = None  # (bytes, filename) of the last file that passed inspection
        sources = available_sources()
        self.source_select = pn.widgets.Select(
            label="Data",
            options={v: k for k, v in sources.items()},
            value="synthetic",
            width=260,
            stylesheets=[CONTROL_TEXT_CSS],
        )
        self.task_select = pn.widgets.RadioButtonGroup.from_param(self.config.param.task)
        self.file_input = pn.widgets.FileInput(accept=".csv,.txt", multiple=False, width=260)
        self.column_select = pn.widgets.Select(
            label="Target column", options=[], width=200, disabled=True, stylesheets=[CONTROL_TEXT_CSS]
        )
        self.trials_select = pn.widgets.Select.from_param(
            self.config.param.trials, label="Trials", width=110, stylesheets=[CONTROL_TEXT_CSS]
        )
        self.levels_slider = pn.widgets.RangeSlider.from_param(
            self.config.param.levels, label="Privacy levels epsilon", step=0.01, width=260
        )
        self.count_slider = pn.widgets.IntSlider.from_param(
            self.config.param.count, label="Number of levels", width=200
        )
        self.target_input = CheckedInput(
            self.config, "target", label="Target loss (empty: from public data)", width=200, step=0.001
        )
        self.run_button = pn.widgets.Button(label="Run", variant="solid", color="primary", width=100)
        self.cancel_button = pn.widgets.Button(label="Cancel", variant="outline", width=100, disabled=True)
        self.progress = pn.indicators.Progress(value=0, max=1, visible=False, sizing_mode="stretch_width", height=14)
        self.status = text("")
        self.table = text("", stylesheets=[TABLE_SCROLL])
        self.stop_download = pn.widgets.FileDownload(
            callback=lambda: io.StringIO(self.csv_preamble() + NEVER_HALTED + self._stopping_csv().read()),
            filename="experiment_stopping.csv",
            label="Download stopping CSV",
            variant="outline",
            width=200,
        )

        self.src_curve = {
            m: ColumnDataSource({"x": [], "y": [], "lo": [], "hi": []}, name=f"experiment-{m}") for m in ("bm", "lnr")
        }
        self.fig_trade = new_figure(
            "mean loss by privacy level",
            x_axis_type="log",
            x_axis_label="privacy level epsilon\n(bands: 95% confidence)",  # lines a phone shows whole
            y_axis_label="regularized loss",
        )
        for mech, label in (("bm", "Brownian mechanism"), ("lnr", "Laplace noise reduction")):
            src = self.src_curve[mech]
            self.fig_trade.add_layout(
                Band(
                    base="x",
                    lower="lo",
                    upper="hi",
                    source=src,
                    fill_color=RULE_COLORS[mech],
                    fill_alpha=0.25,
                    line_color=RULE_COLORS[mech],  # edges at full colour: the fill alone is under 3:1
                    line_alpha=1.0,
                    line_dash="dotted",
                )
            )
            self.fig_trade.line("x", "y", source=src, color=RULE_COLORS[mech], line_width=2, legend_label=label)
        self.src_optimum = ColumnDataSource({"x": [], "y": []})
        self.fig_trade.line(
            "x",
            "y",
            source=self.src_optimum,
            color=PALETTE["truth"],
            line_dash="dashed",
            legend_label="non-private optimum",
        )
        self.target_span = Span(
            location=0, dimension="width", line_color=PALETTE["target"], line_dash="dotted", line_width=2, visible=False
        )
        self.fig_trade.add_layout(self.target_span)

        labels = list(RULE_LABELS.values())
        self.fig_stop = new_figure(
            "ex-post epsilon paid at the stop",
            y_range=labels[::-1],
            x_axis_type="log",
            x_axis_label="ex-post epsilon (box: middle half\nof the trials; whiskers: 5-95%)",
            height=420,
            name="experiment-stop",
        )
        self.src_box = ColumnDataSource(
            {"y": [], "q05": [], "q25": [], "q50": [], "q75": [], "q95": [], "color": []}, name="experiment-box"
        )
        self.fig_stop.add_layout(
            Whisker(base="y", lower="q05", upper="q95", source=self.src_box, dimension="width", line_color="color")
        )
        # annotations do not widen the axis: an unseen segment over each whisker does
        self.fig_stop.segment(x0="q05", x1="q95", y0="y", y1="y", source=self.src_box, line_alpha=0)
        self.fig_stop.hbar(
            y="y", left="q25", right="q75", height=0.5, source=self.src_box, color="color", fill_alpha=0.5
        )
        self.fig_stop.scatter("q50", "y", source=self.src_box, size=9, color=PALETTE["truth"])
        for fig in (self.fig_trade, self.fig_stop):  # Bokeh labels only decades on spans of a decade or two
            fig.xaxis.ticker = log_ticks()
        self.finish_figures(self.fig_trade, self.fig_stop)

        self._started_settings = self._shown_settings = None
        self._shown_status = ""
        self._run_pending = False  # a run's status line is on screen until it ends
        self._result_before_run = None  # the result on the page when Run was last pressed
        self.config.param.watch(self._on_run_settings, list(self.RUN_SETTINGS))
        self.settings.param.watch(self._on_run_settings, list(self.SHARED_RUN_SETTINGS))
        # an empty file or one the browser kept back changes only the name or the type
        self.file_input.param.watch(self._on_upload, ["value", "filename", "mime_type"])
        self.source_select.param.watch(self._on_source, "value")
        self.config.param.watch(self._on_config_source, "source")
        self._on_config_source()
        self.column_select.param.watch(self._on_column, "value")
        self.run_button.on_click(lambda _event: self.schedule(self.start))
        self.cancel_button.on_click(lambda _event: self.stop())
        # dimmed while a new run computes; the figures go on the page with the first run's data (Bokeh
        # warns about the ranges of a plot without data, even a hidden one)
        self.plots = stack(self.table, css_classes=["noiselab-experiment-plots"])
        if self.config.unrun:  # a link from a page whose settings were never run: its plots cannot be shown
            self.status.object = (
                "These settings came from a link; the page it was copied from had not run them. **Press Run** to "
                "see them (about 2-20 s)."
            )
        else:
            self.schedule(self.start)

    def rejected_text(self, exc) -> str:
        return f"This cannot be run: {plain(exc, limit=600)}. Your settings and the last result are kept."

    # --- inputs --------------------------------------------------------------------------------
    def _on_source(self, event):
        self.config.source = event.new
        if event.new in ("kddcup", "twitter"):
            self.config.task = "logistic" if event.new == "kddcup" else "ridge"

    def _on_config_source(self, *_events):
        """The data chosen elsewhere (a link): the box shows it, if this server has it."""
        if self.config.source in self.source_select.options.values() and self.source_select.value != self.config.source:
            self.source_select.value = self.config.source

    def _on_column(self, event):
        self.config.target_column = event.new or None

    def _on_upload(self, *_events):
        """A new file replaces the last one at once (Run never uses an older file), and is inspected
        away from the loop; a refused one is named."""
        content, filename = self.file_input.value, self.file_input.filename
        if content is None and filename is None:
            return  # cleared
        self._upload = None
        self.column_select.options, self.column_select.disabled = [], True
        problem = upload_problem(content, filename, self.file_input.mime_type)
        if problem is not None:
            self.cancel("inspect")
            self._show_alert(f"{problem} Your other settings are unchanged.")
            # the status named the earlier file as if it were still in use
            shown = f" The plots show the last run ({self._shown_status})" if self._shown_status else ""
            self.status.object = "No file in use: the one chosen was refused (see the message above)." + shown
            return
        filename = filename or "upload.csv"
        call = functools.partial(inspect_table, bytes(content), filename=filename)
        self.offload("inspect", call, functools.partial(self.accept_upload, bytes(content), filename), busy=self.status)

    def accept_upload(self, content: bytes, filename: str, columns):
        """A file that passed inspection: offer its columns as targets and switch the data to it."""
        self._upload = (content, filename)
        self.column_select.options = list(columns)
        self.column_select.value = columns[-1]
        self.column_select.disabled = False
        self.config.target_column = columns[-1]
        self.source_select.value = "upload"
        self.status.object = (
            f"**{plain(filename, limit=80)}**: {len(columns)} columns. Choose the target column and the task, "
            "then press Run."
        )

    def spec(self) -> ExperimentSpec:
        c = self.config
        content, filename = self._upload if (c.source == "upload" and self._upload) else (None, "upload.csv")
        return ExperimentSpec(
            task=c.task,
            source=c.source,
            content=content,
            filename=filename,
            target_column=c.target_column,
            seed=self.settings.seed,
        )

    RUN_SETTINGS = ("task", "source", "trials", "levels", "count", "target")
    SHARED_RUN_SETTINGS = ("delta", "seed")  # the sidebar's, used by a run

    def _run_settings(self):
        return tuple(getattr(self.config, name) for name in self.RUN_SETTINGS) + tuple(
            getattr(self.settings, name) for name in self.SHARED_RUN_SETTINGS
        )

    def _setting_value(self, name: str):
        return getattr(self.settings if name in self.SHARED_RUN_SETTINGS else self.config, name)

    def _update_unrun(self):
        """Whether the settings are those of the run on screen (or under way): a link carries the answer."""
        running = self.running("prepare") or self.running("experiment")
        reference = self._started_settings if running else self._shown_settings
        self.config.unrun = reference is None or self._run_settings() != reference

    def _on_run_settings(self, *_events):
        """The plots keep the last run until Run is pressed: say so as soon as a setting differs."""
        self._update_unrun()
        shown = self._shown_settings
        if shown is None or self.running("prepare") or self.running("experiment"):
            return
        if self._run_settings() == shown:
            self.status.object = self._shown_status
            return
        changed = ", ".join(
            setting_words(name, self._setting_value(name))
            for name, before in zip(self.RUN_SETTINGS + self.SHARED_RUN_SETTINGS, shown, strict=True)
            if self._setting_value(name) != before
        )
        self.status.object = (
            f"**Changed: {changed}. Press Run** to see it; the plots and the table below still show the last run "
            f"({self._shown_status})"
        )

    # --- running -------------------------------------------------------------------------------
    def start(self):
        """Prepare the task (fit, default target) off the loop, then run the chunks of trials."""
        self._started_settings = self._run_settings()
        self.config.unrun = False
        self._result_before_run = self.result
        spec = self.spec()
        levels = level_grid(*self.config.levels, count=self.config.count)
        self.run_button.disabled = True
        self.cancel_button.disabled = False
        self.status.object = "Preparing the data and the non-private optimum..." + self._stale_note()
        self.plots.styles = {"opacity": "0.45"} if self.result is not None else {}
        self._run_pending = True
        self.offload(
            "prepare", functools.partial(prepare, spec), functools.partial(self._run_chunks, spec, levels), busy=None
        )
        if not self.running("prepare"):  # ran at once (no server)
            self._idle()

    def _run_chunks(self, spec, levels, prepared):
        target = self.config.target if self.config.target is not None else prepared.suggested_target
        trials, delta = self.config.trials, self.settings.delta
        calls = chunk_calls(prepared.task, levels=levels, trials=trials, rng=spec.seed, target=target, delta=delta)
        self.status.object = f"Running {trials} trials on {plain(prepared.description)}..." + self._stale_note()
        self.offload_each(
            "experiment", calls, functools.partial(self.show, prepared, levels, target, delta), progress=self.progress
        )

    def stop(self):
        """Cancel: the running computation's result will not be shown; the last result stays."""
        cancelled = self.cancel("prepare") | self.cancel("experiment")
        if cancelled:
            self._run_pending = False
            # said only while true: a result that reached the page first keeps its own status line (a CI
            # run showed "Cancelled; the previous result is kept." over the new run's plots)
            if self.result is self._result_before_run:
                shown = f" The plots show: {self._shown_status}" if self._shown_status else ""
                self.status.object = "Cancelled; the previous result is kept." + shown
        self._idle()

    def _stale_note(self) -> str:
        return " The dimmed plots below still show the last run." if self.result is not None else ""

    def _idle(self):
        # stated, not emptied: an empty styles dict left the browser's inline opacity of 0.45 in place
        self.plots.styles = {"opacity": "1"}
        self._update_unrun()  # a cancelled or failed run leaves the plots on the run before
        self.run_button.disabled = False
        self.cancel_button.disabled = True

    def guarded(self, func, *args):
        ok = super().guarded(func, *args)
        if not ok and self._run_pending:  # a refused run: its "Preparing..." line must not stay
            self._run_pending = False
            self.status.object = "Not run: see the message above. " + (
                f"The plots show the last run ({self._shown_status})" if self._shown_status else ""
            )
        if not ok or not (self.running("prepare") or self.running("experiment")):
            self._idle()
        return ok

    def show(self, prepared, levels, target, delta, chunks):
        result = combine_chunks(prepared.task, epsilons=np.asarray(levels), chunks=chunks, delta=delta, target=target)
        trade = result.tradeoff
        with pn.io.hold():
            self.result = result
            for mech in ("bm", "lnr"):
                x, y, lo, hi = finite(
                    trade.epsilons,
                    getattr(trade, f"{mech}_mean"),
                    getattr(trade, f"{mech}_low"),
                    getattr(trade, f"{mech}_high"),
                )
                self.src_curve[mech].data = {"x": x, "y": y, "lo": lo, "hi": hi}
            self.src_optimum.data = {"x": [trade.epsilons[0], trade.epsilons[-1]], "y": [trade.optimal_loss] * 2}
            self.fig_trade.yaxis.axis_label = "regularized loss" if prepared.task.lam > 0 else "loss"
            self.target_span.location = target
            self.target_span.visible = True
            self.src_box.data = box_data(result.stopping)
            lowest = self.config.param.levels.bounds[0]
            self.show_claim(experiments_headline(result, delta=delta, lowest_allowed=lowest))
            self.table.object = stopping_table(result).text
            if len(self.plots.objects) == 1:  # the table alone: the figures join it with their first data
                self.plots.objects = [self.plot(self.fig_trade), self.plot(self.fig_stop), self.table]
            self.status.object = (
                f"{plain(prepared.description)}. {trade.trials} trials, {len(levels)} levels from "
                f"{fmt(levels[0], 3)} to {fmt(levels[-1], 3)}, target loss {fmt(target, 4)}, "
                f"delta {fmt(delta, 2)}, seed {self.settings.seed}."
            )
            self._shown_settings, self._shown_status = self._started_settings, self.status.object
            self._run_pending = False
        self._idle()

    # --- export --------------------------------------------------------------------------------
    def csv_rows(self):
        if self.result is None:
            return ["epsilon"], []
        header, rows = self.result.tradeoff.rows()
        return header, [[float(v) for v in row] for row in rows]

    def plotted_series(self, fig):
        """The box plot as a table: each stopping rule's quantiles of the ex-post epsilon paid."""
        if fig is not self.fig_stop:
            return super().plotted_series(fig)
        data = self.src_box.data
        if not len(data["y"]):
            return []
        quantiles = {"5%": "q05", "25%": "q25", "median": "q50", "75%": "q75", "95%": "q95"}
        columns = {"stopping rule": list(data["y"]), **{h: list(data[c]) for h, c in quantiles.items()}}
        return [
            Series(
                names=["ex-post epsilon paid at the stop"],
                columns=columns,
                x_headers=list(quantiles),
                y_headers=["stopping rule"],
                unit="rules",
            )
        ]

    def csv_settings(self) -> dict:
        c = self.config
        own = {n: getattr(c, n) for n in ("task", "source", "target_column", "trials", "levels", "count", "target")}
        if c.source == "upload" and self._upload is not None:
            own["file"] = self._upload[1][:80]  # as named; the export neutralises it
        return {**super().csv_settings(), **own}

    def _stopping_csv(self):
        """Each trial's stop per mechanism and rule; an empty cell where a trial never halted on the grid
        (the comment line says so)."""
        if self.result is None:
            return io.StringIO("")
        header, rows = self.result.stopping.rows()
        rows = [[int(row[0]), *(float(v) for v in row[1:])] for row in rows]
        return io.StringIO(csv_document([], header, rows))

    def build_layout(self):
        inputs = pn.FlexBox(
            pn.Column(self.task_select, self.source_select, self.file_input, self.column_select),
            pn.Column(self.trials_select, self.levels_slider, self.count_slider, self.target_input),
            sizing_mode="stretch_width",
        )
        # wraps on a phone (a Row would widen the whole page)
        buttons = pn.FlexBox(
            self.run_button, self.cancel_button, self.download, self.stop_download, sizing_mode="stretch_width"
        )
        return stack(
            self.header,
            self.alert,
            inputs,
            buttons,
            self.progress,
            self.status,
            self.plots,
            self.about,
        )


NEVER_HALTED = "# an empty cell: the trial never halted on this grid\n"


def setting_words(name: str, value) -> str:
    """A run setting as the status line says it: "target loss from the public data", never "target None"."""
    if name == "target":
        return "target loss from the public data" if value is None else f"target loss {value:g}"
    if name == "levels":
        return f"levels {value[0]:g} to {value[1]:g}"
    if name == "source":
        return f"data {value}"
    return f"{name} {value}"


def box_data(stopping) -> dict:
    """Quantiles of each rule's ex-post epsilon (trials that stopped); rules that never stop are left out."""
    data = {"y": [], "q05": [], "q25": [], "q50": [], "q75": [], "q95": [], "color": []}
    for key, label in RULE_LABELS.items():
        values = stopping.ex_post[key]
        values = values[np.isfinite(values)]
        if values.size == 0:
            continue
        q = np.percentile(values, [5, 25, 50, 75, 95])
        data["y"].append(label)
        for name, value in zip(("q05", "q25", "q50", "q75", "q95"), q, strict=True):
            data[name].append(float(value))
        data["color"].append(RULE_COLORS[key[0]])
    return data
