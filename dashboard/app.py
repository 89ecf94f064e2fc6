"""The app factory: one fresh lab (settings, views, template) per browser session.

Serve with ``python -m dashboard.serve`` (see README) or ``panel serve dashboard/app.py``. Imports are
absolute and every static asset (logo, style sheet, KaTeX fonts) is inlined from package data, so
both ways work, from a checkout or from an installed wheel.
"""

from __future__ import annotations

import base64
import functools
from importlib import resources

import panel as pn
from bokeh.models import CustomJS

from dashboard.models import Settings
from dashboard.tour import TABS, TourStep
from dashboard.views import BoundaryView, NoiseView, RatView, RewindView
from dashboard.views.base import FONT_PREFIX
from dashboard.widgets import TourPanel, controls

TITLE = "noiselab: differential-privacy noise, exactly"
INTRO = (
    "Drag **epsilon**, **delta**, **rho** and the **target error**; curves follow while you drag, heavier "
    "simulations refresh when you let go. Every draw comes from the **seed**, and the page address holds the "
    "settings, so a link reproduces what you see. New here? Start the guided tour, pick a preset, or open the "
    "glossary in the sidebar."
)
URL_KEYS = {"epsilon": "eps", "delta": "delta", "rho": "rho", "target": "target", "sensitivity": "sens",
            "dim": "d", "seed": "seed", "stop_rule": "stop", "arete_source": "arete", "alpha": "alpha",
            "theta": "theta", "lam": "lam", "users": "users", "large_type": "big", "tour": "tour"}
KATEX_FACES = ("AMS-Regular", "Caligraphic-Regular", "Main-Bold", "Main-BoldItalic", "Main-Italic", "Main-Regular",
               "Math-BoldItalic", "Math-Italic", "Size1-Regular", "Size2-Regular", "Size3-Regular", "Size4-Regular")
VIEWPORT = "width=device-width, initial-scale=1"
# on load, phones start with the sidebar closed (it overlays the page when opened)
ON_LOAD_JS = """
if (window.innerWidth < 700) {
  const sidebar = document.getElementById('sidebar');
  if (sidebar) { sidebar.classList.remove('show'); }
}
"""


def _asset(*parts) -> resources.abc.Traversable:
    return resources.files("dashboard").joinpath("assets", *parts)


@functools.cache
def logo_uri() -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(_asset("logo.svg").read_bytes()).decode()


@functools.cache
def page_css() -> str:
    """The style sheet and KaTeX's font faces, declared at document level: faces declared only inside
    a shadow root (where Panel's LaTeX pane links KaTeX's CSS) are ignored by the browser."""
    faces = []
    for face in KATEX_FACES:
        family, style = face.split("-")
        data = base64.b64encode(_asset("katex", f"KaTeX_{family}-{style}.woff2").read_bytes()).decode()
        weight = "700" if "Bold" in style else "400"
        slant = "italic" if "Italic" in style else "normal"
        faces.append(f"@font-face{{font-family:{FONT_PREFIX}KaTeX_{family};font-style:{slant};font-weight:{weight};"
                     f"src:url(data:font/woff2;base64,{data}) format('woff2')}}")
    return "\n".join(faces) + "\n" + _asset("style.css").read_text()


class NoiseLab(pn.viewable.Viewer):
    """The whole lab without a template: what a notebook shows.

    Views of hidden tabs compute their data the first time their tab is shown, behind a loading state.
    """

    VIEW_CLASSES = (RewindView, BoundaryView, NoiseView, RatView)

    def __init__(self, settings: Settings | None = None, **params):
        super().__init__(**params)
        self.settings = settings or Settings()
        self._views = [None] * len(self.VIEW_CLASSES)
        self._slots = [pn.Column(sizing_mode="stretch_width", min_height=300) for _ in self.VIEW_CLASSES]
        self.controls = controls(self.settings, show_tab=self._show_tab)
        self.tabs = pn.Tabs(*zip(TABS, self._slots, strict=True), dynamic=True, sizing_mode="stretch_width",
                            stylesheets=[".bk-headers-wrapper { flex-wrap: wrap; }"])
        # every view is built now (building one inside a later callback broke Bokeh's layout of its
        # figures in Panel 1.9); views in hidden tabs still compute only when first shown
        for index in range(len(self.VIEW_CLASSES)):
            self._view(index)
        self._activate(0)
        self.tabs.param.watch(lambda event: self._activate(event.new), "active")
        self.tour = TourPanel(self.settings, self.show_step)
        self.intro = pn.pane.Markdown(INTRO, sizing_mode="stretch_width")

    def _view(self, index: int):
        if self._views[index] is None:
            view = self.VIEW_CLASSES[index](self.settings, active=False)
            self._views[index] = view
            self._slots[index].objects = [view]
        return self._views[index]

    def _activate(self, index):
        self._view(index)
        for i, view in enumerate(self._views):
            if view is not None:
                view.set_active(i == index)

    def _show_tab(self, index):
        self.tabs.active = index

    def show_step(self, step: TourStep):
        """Apply a tour step: its settings on top of the defaults, its tab, its rewind frame."""
        self.settings.apply(step.settings)
        self.tabs.active = step.tab
        if step.frame is not None:
            self.rewind.show_frame(step.frame)

    @property
    def rewind(self) -> RewindView:
        return self._view(0)

    @property
    def boundaries(self) -> BoundaryView:
        return self._view(1)

    @property
    def noise(self) -> NoiseView:
        return self._view(2)

    @property
    def rat(self) -> RatView:
        return self._view(3)

    @property
    def views(self):
        """All four views (building any not built yet)."""
        return [self._view(i) for i in range(len(self.VIEW_CLASSES))]

    def __panel__(self):
        return pn.Row(pn.Column(self.controls, width=300),
                      pn.Column(self.intro, self.tour, self.tabs, sizing_mode="stretch_width"),
                      sizing_mode="stretch_width")


def create_app(lab: NoiseLab | None = None) -> pn.template.BootstrapTemplate:
    """Build a fresh app: called once per browser session by the server."""
    lab = lab or NoiseLab()
    template = pn.template.BootstrapTemplate(
        title=TITLE,
        logo=logo_uri(),
        sidebar=[lab.controls],
        main=[lab.intro, lab.tour, lab.tabs],
        sidebar_width=320,
        header_background="#1f3b57",
        meta_viewport=VIEWPORT,
    )
    template.config.raw_css = [page_css()]
    if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
        pn.state.curdoc.js_on_event("document_ready", CustomJS(code=ON_LOAD_JS))
    if pn.state.location is not None:
        pn.state.location.sync(lab.settings, URL_KEYS)
        # settings from the address arrive without a slider release: refresh the heavy views once
        pn.state.onload(lambda: lab.settings.param.trigger("committed"))
    return template


if pn.state.served:
    pn.extension("katex", notifications=False)
    create_app().servable()
