"""What every view shares: header text, error banner, CSV export, figure defaults."""

from __future__ import annotations

import io
import logging

import numpy as np
import panel as pn
from bokeh.plotting import figure

from ..models import Settings

log = logging.getLogger(__name__)

PALETTE = {"Laplace": "#d62728", "Staircase": "#2ca02c", "Arete": "#1f77b4", "mixture": "#1f77b4",
           "linear": "#ff7f0e", "gaussian": "#7f7f7f", "rat": "#1f77b4", "at": "#d62728", "hold-out": "#2ca02c"}
TOOLS = "pan,wheel_zoom,box_zoom,reset,save"


def new_figure(title, **kwargs):
    kwargs.setdefault("height", 320)
    kwargs.setdefault("sizing_mode", "stretch_width")
    fig = figure(title=title, tools=TOOLS, toolbar_location="above", **kwargs)
    fig.toolbar.logo = None
    return fig


def finite(*arrays):
    """Drop positions where any array is not finite (plots never receive NaN or inf)."""
    keep = np.ones(len(arrays[0]), dtype=bool)
    for arr in arrays:
        keep &= np.isfinite(arr)
    return [np.asarray(a)[keep] for a in arrays]


def fmt(value, digits=4):
    if value is None or not np.isfinite(value):
        return "n/a"
    return f"{value:.{digits}g}"


class BaseView(pn.viewable.Viewer):
    """Header (two-line explanation, key formula, what to notice), error banner, CSV export."""

    title = ""
    explanation = ""
    formula = ""
    notice = ""
    filename = "view.csv"

    def __init__(self, settings: Settings, active: bool = True, **params):
        super().__init__(**params)
        self.settings = settings
        self.active = active
        self._pending = {}
        self.alert = pn.pane.Alert("", alert_type="warning", visible=False, sizing_mode="stretch_width")
        self.download = pn.widgets.FileDownload(callback=self._csv_file, filename=self.filename, label="Download CSV",
                                                variant="outline", width=160)
        self.header = pn.Column(
            pn.pane.Markdown(f"### {self.title}\n{self.explanation}", sizing_mode="stretch_width"),
            pn.pane.LaTeX(self.formula, sizing_mode="stretch_width") if self.formula else None,
            pn.pane.Markdown(f"**What to notice:** {self.notice}", sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
        )

    def schedule(self, func):
        """Run an update now if the view is on screen, else when it next becomes active."""
        if self.active:
            self.guarded(func)
        else:
            self._pending[func.__name__] = func

    def set_active(self, active: bool):
        """Views in hidden tabs defer their updates (the browser then redraws only what is seen)."""
        self.active = active
        if active and self._pending:
            pending, self._pending = list(self._pending.values()), {}
            with pn.io.hold():
                for func in pending:
                    self.guarded(func)

    def guarded(self, func, *args):
        """Run an update; on failure show a plain message and keep the last good plots."""
        try:
            func(*args)
        except Exception as exc:
            log.warning("%s update failed: %s", self.title, exc)
            self.alert.object = f"This setting cannot be shown: {exc}"
            self.alert.visible = True
            return False
        self.alert.visible = False
        return True

    def csv_rows(self):
        """(header, rows) of the view's data; subclasses override."""
        return [], []

    def csv_text(self) -> str:
        header, rows = self.csv_rows()
        out = io.StringIO()
        out.write(",".join(header) + "\n")
        for row in rows:
            cells = ("" if v is None else f"{v:.10g}" if isinstance(v, float) else str(v) for v in row)
            out.write(",".join(cells) + "\n")
        return out.getvalue()

    def _csv_file(self):
        return io.StringIO(self.csv_text())
