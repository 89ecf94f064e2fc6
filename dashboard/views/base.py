"""What every view shares: a headline, the how-it-works card, a plain error banner, CSV export,
figure defaults (legends outside the data, fonts that follow the large-type setting), and a
loading state while an update computes."""

from __future__ import annotations

import functools
import html
import io
import logging
import re
from importlib import resources

import numpy as np
import panel as pn
from bokeh.models import CustomAction, GlyphRenderer
from bokeh.plotting import figure

from noisecore import __version__

from ..claims import fmt
from ..compute import ComputePool
from ..describe import describe_figure, figure_series, figure_table_html
from ..escape import plain
from ..export import csv_document, settings_line, slug
from ..jobs import Jobs
from ..models import Settings
from ..palette import PALETTE
from ..panes import Text, TextAlert
from ..png import png_save_tool, set_png_text
from ..wording import TERM_CSS, mark_terms, plain_meaning

__all__ = ["PALETTE", "TABLE_SCROLL", "BaseView", "finite", "flex_row", "fmt", "new_figure"]

log = logging.getLogger(__name__)

# four tools: the toolbar shows four and folds the rest into a menu (where save was hidden); save is
# noiselab's own (dashboard.png: the PNG carries the plot's title and description)
TOOLS = "pan,box_zoom,reset"
TABLE_SCROLL = "table { display: block; overflow-x: auto; max-width: 100%; }"  # wide tables scroll on a phone
FONT_PREFIX = "Noiselab"
FONT_SIZES = {False: ("11pt", "9pt", "10pt", "9pt"), True: ("16pt", "13pt", "14pt", "13pt")}


@functools.cache
def katex_stylesheet() -> str:
    """KaTeX's own style sheet, from the copy Panel ships, for the LaTeX pane's shadow root (Panel 1.9
    links only a one-line katex.css there, so formulas fell back to the page font). Its @font-face rules
    are dropped and its families renamed (KaTeX_Main -> NoiselabKaTeX_Main): the app declares those faces
    at document level, where the browser honours them, from KaTeX's font files shipped as package data,
    and no text ever asks for the faces of Panel's document-level copy (whose font files are not there)."""
    bundled = resources.files("panel").joinpath("dist", "bundled", "katex")
    for folder in sorted(bundled.iterdir(), key=lambda f: f.name, reverse=True):
        sheet = folder.joinpath("dist", "katex.min.css")
        if sheet.is_file():
            return re.sub(r"@font-face\{[^}]*\}", "", sheet.read_text()).replace("KaTeX_", FONT_PREFIX + "KaTeX_")
    return ""


# a plot's description: read by a screen reader, not shown (the usual visually-hidden pattern)
DESCRIPTION_CSS = (
    ".noiselab-description { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0;"
    " overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; border: 0; }"
)
# a plot's data table: scrolls within a focusable region (WCAG 2.1.1), numbers right-aligned
DATA_TABLE_CSS = (
    ".noiselab-data { max-height: 420px; overflow: auto; max-width: 100%; }"
    " .noiselab-data:focus { outline: 2px solid #0072B2; }"
    " table { border-collapse: collapse; margin: 0 0 8px 0; font-size: 0.9em; }"
    " caption { caption-side: top; text-align: left; font-weight: 600; padding: 4px 0; }"
    " th, td { border: 1px solid #767676; padding: 2px 6px; text-align: right; }"
    " th { background: #f2f2f2; position: sticky; top: 0; }"
)


def new_figure(title, **kwargs):
    kwargs.setdefault("height", 400)  # the legend sits below the plot, inside this height
    kwargs.setdefault("sizing_mode", "stretch_width")
    kwargs.setdefault("min_width", 120)
    fig = figure(title=title, tools=TOOLS, toolbar_location="above", **kwargs)
    pan, zoom, reset = fig.tools
    fig.tools = [pan, zoom, png_save_tool(fig), reset]
    fig.toolbar.logo = None
    return fig


# a view's title, 1.6x the text (which large type enlarges through --bokeh-font-size)
TITLE_STYLE = (
    "h3 { font-size: calc(1.6 * var(--bokeh-font-size, 12px)); font-weight: 600; line-height: 1.2;"
    " margin: 0.3em 0 0.1em; }"
)


def text(markdown="", **kwargs) -> pn.pane.Markdown:
    """A Markdown pane the full width of its column (every caption, readout and table). Its text is never
    typeset as maths (formulas have their own LaTeX panes): text from outside (an address, a file name)
    shown in it could otherwise carry a maths ``href`` to ``javascript:`` as a live link."""
    # tables wrap instead of scrolling sideways (a scrolling region must take the keyboard: WCAG 2.1.1)
    sheets = [
        "table { display: table; overflow: visible; max-width: 100%; } th, td { overflow-wrap: anywhere; }",
        TERM_CSS,  # glossary terms marked in the text explain themselves
    ]
    kwargs["stylesheets"] = [*kwargs.get("stylesheets", []), *sheets]
    return Text(markdown, sizing_mode="stretch_width", **kwargs)


def stack(*items, **kwargs) -> pn.Column:
    """Items one under the other, the full width."""
    return pn.Column(*items, sizing_mode="stretch_width", **kwargs)


def reveal(holder: pn.Column, *items) -> None:
    """Put plots on the page with their first data: a plot sent empty makes Bokeh warn in the
    console that it cannot set its ranges (and shows empty axes meanwhile)."""
    if not holder.objects:
        holder.objects = list(items)


def flex_row(*items):
    """Plots one under the other, each the full width, so a phone never scrolls sideways. (Side by side
    with wrapping needs Panel's FlexBox, which broke Bokeh's layout of figures in tabs shown after the
    page loaded, in Panel 1.9; a Row overflows a phone.)"""
    return stack(*items)


def place_legend(fig):
    """Move the legend below the plot, where it covers no data; clicking an entry hides its curve."""
    if not fig.legend:
        return
    legend = fig.legend[0]
    fig.center = [r for r in fig.center if r is not legend]
    legend.location = "top_left"
    legend.click_policy = "hide"
    legend.spacing = 0
    legend.padding = 4
    legend.border_line_alpha = 0
    fig.add_layout(legend, "below")


def set_font_sizes(fig, large: bool):
    title, axis, label, legend = FONT_SIZES[bool(large)]
    fig.title.text_font_size = title
    for axis_model in (*fig.xaxis, *fig.yaxis):
        axis_model.major_label_text_font_size = axis
        axis_model.axis_label_text_font_size = label
    for legend_model in fig.legend:
        legend_model.label_text_font_size = legend


def save_tools(fig) -> list:
    """The figure's save buttons (``dashboard.png``)."""
    return [t for t in fig.toolbar.tools if isinstance(t, CustomAction) and "filename" in t.callback.args]


def drop_unused_glyphs(fig):
    """No figure selects points or mutes curves (legends hide them): the copies of each glyph Bokeh
    makes for those states are left to the browser's defaults, two models fewer per curve."""
    for renderer in fig.renderers:
        if isinstance(renderer, GlyphRenderer):
            renderer.nonselection_glyph = "auto"
            renderer.muted_glyph = "auto"


def finite(*arrays):
    """Drop positions where any array is not finite (plots never receive NaN or inf)."""
    keep = np.ones(len(arrays[0]), dtype=bool)
    for arr in arrays:
        keep &= np.isfinite(arr)
    return [np.asarray(a)[keep] for a in arrays]


def visible_text(markdown: str) -> str:
    """A headline as read: its Markdown heading marks and emphasis dropped."""
    return re.sub(r"^#+\s*|[*]", "", markdown).strip()


class PlacedPlot:
    """A figure's parts on the page: its description, its table toggle, the column holding them (and the
    figure), and the table pane once first opened."""

    __slots__ = ("block", "description", "table", "toggle")

    def __init__(self, description, toggle, block):
        self.description, self.toggle, self.block = description, toggle, block
        self.table = None


class BaseView(pn.viewable.Viewer):
    """Title and headline, the how-it-works card (explanation, key formula, what to notice), a plain
    error banner, CSV export. Subclasses build figures, then call ``finish_figures``."""

    title = ""
    explanation = ""
    formula = ""
    notice = ""
    filename = "view.csv"

    def __init__(self, settings: Settings, active: bool = True, pool: ComputePool | None = None, **params):
        super().__init__(**params)
        self.settings = settings
        self.pool = pool
        self._failures = 0
        self.active = active
        self._pending = {}
        self.jobs = Jobs(
            pool=lambda: self.pool,
            guarded=self.guarded,
            is_active=lambda: self.active,
            defer=self._defer,
            on_end=self._end_busy,
        )
        self.figures = []
        self._plot_parts: dict[str, PlacedPlot] = {}
        self._depth = 0
        self.alert = TextAlert("", alert_type="warning", visible=False, sizing_mode="stretch_width")
        self.headline = text(
            "",
            margin=(0, 10),
            # em: grows with Large type; the weight stated, as Panel's own sheet gave 700 on load, 500 after an update
            stylesheets=["h5 { font-size: 1.3em; font-weight: 700; margin: 2px 0 6px 0; }", TERM_CSS],
            css_classes=["noiselab-headline"],
        )
        # the headline's privacy figures in plain words (hidden in expert wording)
        self.plain = text(
            "",
            margin=(0, 10),
            stylesheets=[TERM_CSS, "p { margin: 0 0 4px 0; }"],
            css_classes=["noiselab-plain"],
        )
        self._claim = None
        self.download = pn.widgets.FileDownload(
            callback=self._csv_file, filename=self.filename, label="Download CSV", variant="outline", width=160
        )
        # one explicit size: Panel styled the first tab's title at 14 px and later tabs' at 28 px
        self.title_pane = text(f"### {self.title}", margin=(0, 10), stylesheets=[TITLE_STYLE])
        # a long formula scrolls sideways on a phone (KaTeX's display block is what overflows)
        scroll = (
            ":host { max-width: 100%; } .katex-display { overflow-x: auto; overflow-y: hidden; padding: 2px 0; }"
            " @media (max-width: 500px) { .katex { font-size: 1em; } }"
        )
        self.formula_pane = (
            pn.pane.LaTeX(self.formula, sizing_mode="stretch_width", stylesheets=[katex_stylesheet(), scroll])
            if self.formula
            else None
        )
        self.about = pn.Card(
            text(self.explanation),
            self.formula_pane,
            text(f"**What to notice:** {self.notice}"),
            title="How it works",
            collapsed=False,
            sizing_mode="stretch_width",
        )
        self.header = stack(self.title_pane, self.headline, self.plain)
        settings.param.watch(lambda *_e: self._show_plain(), "expert")
        settings.param.watch(self._on_large_type, "large_type")
        # presenter mode: the tab names the view, and the details give way to the plot
        self.details = [self.title_pane]
        settings.param.watch(lambda *_e: self._on_present(), "present")
        settings.param.watch(lambda *_e: self._show_plain(), "present")

    # --- words --------------------------------------------------------------------------------
    def show_claim(self, claim) -> None:
        """Put a headline on screen: its terms marked (each explains itself), its privacy figures read in
        plain words on the line below (unless expert wording is chosen)."""
        self._claim = claim
        self.headline.object = mark_terms(claim.text)
        self._show_plain()
        self._name_exports()

    def _name_exports(self):
        """Each figure's saved PNG is named for its view, its title and the settings it shows
        (``noiselab-brownian-rewind-privacy-per-release-eps1-delta1e-06-seed0.png``)."""
        s = self.settings
        settings = f"eps{s.epsilon:.3g}-delta{s.delta:.2g}-seed{s.seed}"
        for fig in self.figures:
            title = fig.title.text if fig.title is not None else ""
            name = "-".join(part for part in ("noiselab", slug(self.title), slug(title), settings) if part)
            for tool in save_tools(fig):
                set_png_text(tool, filename=name)

    @property
    def claim(self):
        """The headline's claim on screen (None before the first)."""
        return self._claim

    def _show_plain(self):
        words = plain_meaning(self._claim, brief=self.settings.present) if self._claim is not None else ""
        self.plain.object = mark_terms(words)
        self.plain.visible = bool(words) and not self.settings.expert

    # --- figures ------------------------------------------------------------------------------
    def finish_figures(self, *figures):
        """Legends below the data and fonts sized for the current screen."""
        self.figures = []
        for fig in figures:
            self.finish_figure(fig)

    def finish_figure(self, fig):
        """One figure's legend, fonts and glyphs (for a figure built after the others)."""
        place_legend(fig)
        set_font_sizes(fig, self.settings.large_type)
        drop_unused_glyphs(fig)
        self.figures.append(fig)

    def plot(self, fig) -> pn.Column:
        """A figure as placed on the page: before it, its description for a screen reader (kept current
        by every update); after it, a toggle that shows its plotted data as a table (built when opened)."""
        placed = self._plot_parts.get(fig.id)
        if placed is None:
            description = pn.pane.HTML("", margin=0, sizing_mode="stretch_width", stylesheets=[DESCRIPTION_CSS])
            title = fig.title.text if fig.title is not None else "this plot"
            label = f"Data table: {title}"
            toggle = pn.widgets.Toggle(
                label=label, variant="outline", width=min(360, 7 * len(label) + 40), margin=(0, 10)
            )
            placed = self._plot_parts[fig.id] = PlacedPlot(description, toggle, stack(description, fig, toggle))
            # the table pane joins the page when first opened; the refresh ending the update fills it
            toggle.param.watch(lambda event, fig=fig: self.guarded(self._hide_table, fig), "value")
            if not self._depth:  # inside an update, the refresh that ends it describes the figure
                self._describe(fig)
        return placed.block

    def plotted_series(self, fig):
        """A figure's data as described and tabled (a view may state it its own way)."""
        return figure_series(fig)

    def _describe(self, fig):
        description = self._plot_parts[fig.id].description
        headline = visible_text(self._claim.text) if self._claim is not None else ""
        words = describe_figure(fig, headline, self.plotted_series(fig))
        text = f'<p class="noiselab-description">{html.escape(words)}</p>'
        if description.object != text:
            description.object = text
        for tool in save_tools(fig):
            set_png_text(tool, description=words)

    def _hide_table(self, fig):
        """A toggle pressed: hide a closed table here (the refresh ending the update fills an open one)."""
        placed = self._plot_parts[fig.id]
        if placed.table is not None and not placed.toggle.value:
            placed.table.visible = False

    def _show_table(self, fig):
        placed = self._plot_parts[fig.id]
        if placed.toggle.value:
            title = html.escape(fig.title.text if fig.title is not None else "plot", quote=True)
            markup = (
                f'<div class="noiselab-data" tabindex="0" role="region" aria-label="Data table: {title}">'
                f"{figure_table_html(fig, self.plotted_series(fig))}</div>"
            )
            if placed.table is None:
                placed.table = pn.pane.HTML(markup, sizing_mode="stretch_width", stylesheets=[DATA_TABLE_CSS])
                placed.block.append(placed.table)
            elif placed.table.object != markup:
                placed.table.object = markup
        if placed.table is not None:
            placed.table.visible = placed.toggle.value

    def refresh_descriptions(self):
        """Bring every placed figure's description (and its table, if shown) up to date."""
        for fig in self.figures:
            placed = self._plot_parts.get(fig.id)
            if placed is not None:
                self._describe(fig)
                if placed.toggle.value:
                    self._show_table(fig)

    def _on_present(self):
        for item in self.details:
            item.visible = not self.settings.present

    def _on_large_type(self, event):
        with pn.io.hold():  # also when Panel runs the change without the document lock
            for fig in self.figures:
                set_font_sizes(fig, event.new)

    # --- updates ------------------------------------------------------------------------------
    def follow(self, names, update):
        """Run ``update`` now and again whenever any of the settings ``names`` changes (while the view
        is hidden, once when it is next shown)."""
        self.settings.param.watch(lambda *_events: self.schedule(update), list(names))
        self.schedule(update)

    def schedule(self, func):
        """Run an update now if the view is on screen, else when it next becomes active."""
        if self.active:
            self.guarded(func)
        else:
            self._pending[func.__name__] = func

    def _defer(self, key, func):
        self._pending[key] = func

    def set_active(self, active: bool, now: bool = False):
        """Views in hidden tabs defer their updates; when shown they compute behind a loading state
        (``now``: at once, e.g. while the page is built, before anything is sent)."""
        self.active = active
        if active and self._pending:
            pending, self._pending = list(self._pending.values()), {}
            if now:
                with pn.io.hold():
                    for func in pending:
                        self.guarded(func)
            else:
                self.run_with_loading(pending)

    def run_with_loading(self, funcs):
        """Show the loading state, then compute on the next tick so the browser sees the spinner first."""
        doc = pn.state.curdoc
        if doc is None or doc.session_context is None:
            with pn.io.hold():
                for func in funcs:
                    self.guarded(func)
            return
        self.layout.loading = True

        def compute():
            try:
                with pn.io.hold():
                    for func in funcs:
                        self.guarded(func)
            finally:
                self.layout.loading = False

        doc.add_next_tick_callback(compute)

    def offload(self, name, call, apply, busy=None):
        """Compute ``call()`` (a ``functools.partial`` of a module-level function) away from the event
        loop in a served session, then ``apply(result)`` on the loop; see :meth:`offload_each`."""
        return self.offload_each(name, [call], lambda results: apply(results[0]), busy=busy)

    def offload_each(self, name, calls, apply, busy=None, progress=None):
        """Compute every call away from the event loop in a served session (on the server's
        :class:`~dashboard.compute.ComputePool`, so repeat requests are answered from its store, or
        on a worker thread), then ``apply(results)`` on the loop under the document lock.

        A later request with the same name supersedes an earlier one and :meth:`cancel` drops one;
        ``busy`` shows a spinner and ``progress`` (a Progress bar) counts finished calls meanwhile.
        Without a server (tests, notebooks) everything runs at once. (The machinery: ``dashboard.jobs``.)"""
        return self.jobs.submit(name, calls, apply, busy=busy, progress=progress)

    def cancel(self, name):
        """Stop waiting for a computation: its result, when it comes, is not shown; parts not started
        are cancelled unless another session waits for them."""
        return self.jobs.cancel(name)

    def cancel_all(self):
        """Cancel every computation this view waits for (its session has ended)."""
        for name in self.jobs.names():
            self.cancel(name)

    def running(self, name) -> bool:
        return self.jobs.running(name)

    def _end_busy(self, name):
        """End a computation's spinner and progress bar (subclasses add their own controls)."""
        self.jobs.end_busy(name)

    def guarded(self, func, *args):
        """Run an update; on failure show a plain message and keep the last good plots. (A success hides
        the message unless an update nested inside this one failed.)"""
        failures = self._failures
        self._depth += 1
        try:
            # held: Panel runs some events without the document lock, and a figure's property set
            # directly then fails; a hold sends the changes as Panel's own (one message per update)
            with pn.io.hold():
                func(*args)
                if self._depth == 1:  # once per outermost update: the plots in words follow the plots
                    self.refresh_descriptions()
        except (ValueError, TypeError) as exc:  # validation messages name the parameter and its range
            log.info("%s: setting rejected: %s", self.title, exc)
            self._failures += 1
            self._show_alert(self.rejected_text(exc))
            return False
        except Exception:
            log.exception("%s update failed", self.title)
            self._failures += 1
            self._show_alert(
                "Something went wrong computing this view at these settings. The previous result is "
                "kept; try another setting or press Reset."
            )
            return False
        finally:
            self._depth -= 1
        if self._failures == failures:
            self.alert.visible = False
        return True

    def rejected_text(self, exc) -> str:
        # the message may quote outside text (a file's cell, an address value): shown, never rendered
        return f"This setting cannot be shown: {plain(exc, limit=600)}. The previous result is kept."

    def _show_alert(self, text):
        self.alert.object = text
        self.alert.visible = True

    # --- layout -------------------------------------------------------------------------------
    def build_layout(self) -> pn.Column:
        raise NotImplementedError

    @property
    def layout(self) -> pn.Column:
        """Built once; updates change the models inside it, never the layout."""
        if getattr(self, "_layout", None) is None:
            self._layout = self.build_layout()
        return self._layout

    def __panel__(self):
        return self.layout

    # --- export -------------------------------------------------------------------------------
    def csv_rows(self):
        """(header, rows) of the view's data; subclasses override."""
        return [], []

    def csv_text(self) -> str:
        """The view's data as CSV (``csv`` module; outside text neutralised: dashboard.export)."""
        header, rows = self.csv_rows()
        return csv_document([], header, rows)

    def csv_settings(self) -> dict:
        """The settings the export was made with (the presentation ones left out)."""
        skip = {"large_type", "present", "tour", "committed", "name", "expert"}
        return {n: getattr(self.settings, n) for n in self.settings.param if n not in skip}

    def csv_comments(self) -> list:
        """What opens every exported file, as comment lines: the app's version and the view, the settings,
        the headline on screen and each figure it states (by name; inf where a rule never halted or no
        bound holds)."""
        comments: list = [f"noiselab {__version__}: {self.title}", "settings: " + settings_line(self.csv_settings())]
        if self._claim is not None:
            comments.append("headline: " + visible_text(self._claim.text))
            figures = {n: v for n, v in self._claim.figures.items() if isinstance(v, int | float)}
            comments.append("headline figures: " + settings_line({n: float(v) for n, v in figures.items()}))
        return comments

    def csv_preamble(self) -> str:
        """The comment lines opening every exported file (``csv_comments``)."""
        return csv_document(self.csv_comments(), [], [])

    def _csv_file(self):
        return io.StringIO(self.csv_preamble() + self.csv_text())
