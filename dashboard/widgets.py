"""Controls bound two-way to the Settings model."""

from __future__ import annotations

import math

import panel as pn
from bokeh.models import CustomJSTickFormatter

from .models import Settings


class LogSlider(pn.viewable.Viewer):
    """A slider over log10 of a positive parameter showing readable values; the model follows
    while dragging and ``committed`` fires on release."""

    def __init__(self, settings: Settings, name: str, label: str, digits: int = 2, **params):
        super().__init__(**params)
        self._settings, self._name = settings, name
        low, high = settings.param[name].bounds
        formatter = CustomJSTickFormatter(code=f"return Number(Math.pow(10, tick).toPrecision({digits})).toString()")
        self.slider = pn.widgets.FloatSlider(label=label, start=math.log10(low), end=math.log10(high), step=0.01,
                                             value=math.log10(getattr(settings, name)), format=formatter,
                                             sizing_mode="stretch_width")
        self.slider.param.watch(self._on_drag, "value")
        self.slider.param.watch(self._on_release, "value_throttled")
        settings.param.watch(self._on_model, name)
        self._tip = pn.widgets.TooltipIcon(value=settings.param[name].doc, margin=(22, 0, 0, 0))

    def _on_drag(self, event):
        value = 10 ** event.new
        if not math.isclose(value, getattr(self._settings, self._name), rel_tol=1e-9):
            setattr(self._settings, self._name, value)

    def _on_release(self, event):
        self._on_drag(event)
        self._settings.param.trigger("committed")

    def _on_model(self, event):
        position = math.log10(event.new)
        if not math.isclose(position, self.slider.value, abs_tol=1e-9):
            self.slider.value = position

    def __panel__(self):
        return pn.Row(self.slider, self._tip, sizing_mode="stretch_width")


def controls(settings: Settings) -> pn.Column:
    """The global controls for the sidebar."""
    sliders = [
        LogSlider(settings, "epsilon", "epsilon"),
        LogSlider(settings, "delta", "delta"),
        LogSlider(settings, "rho", "rho"),
        LogSlider(settings, "target", "target error"),
        LogSlider(settings, "sensitivity", "sensitivity"),
    ]
    dim = pn.widgets.RadioButtonGroup.from_param(settings.param.dim, label="dimension d",
                                                 options={"d = 1": 1, "d = 2": 2})
    seed = pn.widgets.IntInput.from_param(settings.param.seed, label="seed", description=settings.param.seed.doc)
    reset = pn.widgets.Button(label="Reset", description="Restore the default settings")
    reset.on_click(lambda _event: settings.reset())
    return pn.Column(*sliders, pn.pane.Markdown("dimension **d** of f(x)", margin=(5, 10, 0, 10)), dim, seed, reset,
                     sizing_mode="stretch_width")
