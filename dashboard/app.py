"""The app factory: one fresh lab (settings, views, template) per browser session.

Serve with ``python -m dashboard.serve`` (see README) or ``panel serve dashboard/app.py``.
"""

from __future__ import annotations

from pathlib import Path

import panel as pn

from .models import Settings
from .views import BoundaryView, NoiseView, RatView, RewindView
from .widgets import controls

ASSETS = Path(__file__).resolve().parents[1] / "assets"
TITLE = "noiselab: differential-privacy noise, exactly"
INTRO = (
    "Drag **epsilon**, **delta**, **rho** and the **target error**; curves follow while you drag, heavier "
    "simulations refresh when you let go. Every draw comes from the **seed**, and the page address holds the "
    "settings, so a link reproduces what you see."
)
URL_KEYS = {"epsilon": "eps", "delta": "delta", "rho": "rho", "target": "target", "sensitivity": "sens",
            "dim": "d", "seed": "seed", "stop_rule": "stop", "arete_source": "arete", "alpha": "alpha",
            "theta": "theta", "lam": "lam", "users": "users"}


class NoiseLab(pn.viewable.Viewer):
    """The whole lab without a template: what a notebook shows."""

    def __init__(self, settings: Settings | None = None, **params):
        super().__init__(**params)
        self.settings = settings or Settings()
        # only the first tab computes now; the others when first shown
        self.rewind = RewindView(self.settings)
        self.boundaries = BoundaryView(self.settings, active=False)
        self.noise = NoiseView(self.settings, active=False)
        self.rat = RatView(self.settings, active=False)
        self.controls = controls(self.settings)
        self.tabs = pn.Tabs(
            ("Brownian rewind", self.rewind),
            ("Privacy boundaries", self.boundaries),
            ("Low-privacy noise", self.noise),
            ("RAT stopping", self.rat),
            dynamic=True, sizing_mode="stretch_width",
        )
        self._activate(0)
        self.tabs.param.watch(lambda event: self._activate(event.new), "active")

    def _activate(self, index):
        for i, view in enumerate(self.views):
            view.set_active(i == index)

    @property
    def views(self):
        return [self.rewind, self.boundaries, self.noise, self.rat]

    def __panel__(self):
        return pn.Row(pn.Column(self.controls, width=300), pn.Column(pn.pane.Markdown(INTRO), self.tabs,
                                                                     sizing_mode="stretch_width"),
                      sizing_mode="stretch_width")


def create_app() -> pn.template.BootstrapTemplate:
    """Build a fresh app: called once per browser session by the server."""
    lab = NoiseLab()
    template = pn.template.BootstrapTemplate(
        title=TITLE,
        logo="assets/logo.svg",
        favicon="assets/logo.svg",
        sidebar=[lab.controls],
        main=[pn.pane.Markdown(INTRO, sizing_mode="stretch_width"), lab.tabs],
        sidebar_width=320,
        header_background="#1f3b57",
    )
    template.config.css_files = ["assets/style.css"]
    if pn.state.location is not None:
        pn.state.location.sync(lab.settings, URL_KEYS)
        # settings from the address arrive without a slider release: refresh the heavy views once
        pn.state.onload(lambda: lab.settings.param.trigger("committed"))
    template.lab = lab  # handle for tests and benchmarks
    return template


if pn.state.served:
    pn.extension("katex", notifications=False)
    create_app().servable()
