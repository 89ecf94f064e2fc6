"""Controls bound two-way to the Settings model: sliders, presets, glossary, the guided tour."""

from __future__ import annotations

import html
import math

import panel as pn
import param
from bokeh.models import CustomJSTickFormatter

from .models import DEFAULTS, Settings
from .panes import CONTROL_TEXT_CSS, Text
from .tour import GLOSSARY, PRESET_NOTES, PRESETS, TOUR

# the Bokeh Toggle holds its state in `active` (`value` is Panel's name; read in the browser it was
# undefined, so the class flipped instead of following the toggle)
LARGE_TYPE_JS = "document.body.classList.toggle('noiselab-large', Boolean(toggle.active));"
# 10**tick as Python's f"{value:.DIGITSg}" spells it (1e-06, 0.05, 2.5e+03), the captions' format
GENERAL_FORMAT_JS = """
const value = Number(Math.pow(10, tick).toPrecision(DIGITS));
const [mantissa, power] = value.toExponential(DIGITS - 1).split('e');
const exponent = Number(power);
if (exponent < -4 || exponent >= DIGITS) {
  const short = mantissa.includes('.') ? mantissa.replace(/0+$/, '').replace(/[.]$/, '') : mantissa;
  const size = Math.abs(exponent);
  return short + 'e' + (exponent < 0 ? '-' : '+') + (size < 10 ? '0' : '') + size;
}
return value.toString();
"""


INVALID_COLOR = "#b3261e"
INVALID_INPUT_CSS = f":host(.noiselab-invalid) input {{ border: 2px solid {INVALID_COLOR}; }}"


class LogSlider(pn.viewable.Viewer):
    """A slider over log10 of a positive parameter showing readable values; the model follows
    while dragging and ``committed`` fires on release. Positions are clamped to the parameter's
    bounds, so both ends of the track are reachable (10**log10(0.05) is 0.04999...). The label shows
    ``digits`` significant digits in Python's general format, as the captions print the same
    parameter (three for epsilon, two for delta), so the two never disagree."""

    def __init__(self, settings: Settings, name: str, label: str, digits: int = 3, **params):
        super().__init__(**params)
        self._settings, self._name = settings, name
        self._low, self._high = settings.param[name].bounds
        self._digits = digits
        self._label = label
        self._following = False
        formatter = CustomJSTickFormatter(code=GENERAL_FORMAT_JS.replace("DIGITS", str(digits)))
        self.slider = pn.widgets.FloatSlider(
            label=label,
            start=math.log10(self._low),
            end=math.log10(self._high),
            step=0.01,
            value=math.log10(getattr(settings, name)),
            format=formatter,
            sizing_mode="stretch_width",
            # the page's keyboard script reads these: an arrow moves one shown step, Page Up/Down a decade
            css_classes=["noiselab-log", f"noiselab-digits-{digits}"],
        )
        self.slider.param.watch(self._on_drag, "value")
        self.slider.param.watch(self._on_release, "value_throttled")
        settings.param.watch(self._on_model, name)
        self._tip = pn.widgets.TooltipIcon(value=settings.param[name].doc, margin=(22, 0, 0, 0))

    def value_at(self, position: float) -> float:
        """The parameter value at a slider position, clamped to the parameter's bounds and rounded to
        the digits the label shows (a link then says eps=50, not 49.99999999999999)."""
        value = float(f"{10.0**position:.{self._digits}g}")
        return min(max(value, self._low), self._high)

    def _on_drag(self, event):
        if self._following:
            return
        value = self.value_at(event.new)
        if not math.isclose(value, getattr(self._settings, self._name), rel_tol=1e-9):
            setattr(self._settings, self._name, value)

    def _on_release(self, event):
        if self._following:
            return  # the slider follows the model: no one let go of it
        self._on_drag(event)
        self._settings.param.trigger("committed")

    def _on_model(self, event):
        if self.value_at(self.slider.value) != event.new:  # a value the slider's position already gives stays
            self._following = True  # the model's own value stays exact (the slider only shows it)
            try:
                self.slider.value = math.log10(event.new)
            finally:
                self._following = False

    @property
    def setting(self) -> str:
        """The name of the setting this slider moves."""
        return self._name

    def show_in_use(self, used: bool) -> None:
        """Say on the label whether the open tab uses this setting."""
        self.slider.label = self.label if used else f"{self.label} {UNUSED}"

    @property
    def label(self) -> str:
        return self._label

    def __panel__(self):
        return pn.Row(self.slider, self._tip, sizing_mode="stretch_width")


UNUSED = "(unused here)"
# what a preset sets (the display preferences and the tour are the room's, not the scenario's)
PRESET_SETTINGS = tuple(name for name in DEFAULTS if name not in ("large_type", "present", "expert", "tour"))


def allowed_range(parameter: param.Parameter) -> str:
    """A bounded number parameter's allowed values in words: "between 0.0001 and 1", "above 0"."""
    low, high = parameter.bounds or (None, None)
    low_in, high_in = getattr(parameter, "inclusive_bounds", (True, True))
    spell = lambda v: f"{v:,}" if isinstance(v, int) else f"{v:g}"  # noqa: E731
    if low is not None and high is not None:
        excluded = [spell(v) for v, included in ((low, low_in), (high, high_in)) if not included]
        return f"between {spell(low)} and {spell(high)}" + (f" ({' and '.join(excluded)} excluded)" if excluded else "")
    if low is not None:
        return f"{'at least' if low_in else 'above'} {spell(low)}"
    if high is not None:
        return f"{'at most' if high_in else 'below'} {spell(high)}"
    return "any number"


class CheckedInput(pn.viewable.Viewer):
    """A number box bound two-way to a bounded parameter of ``owner``. A value outside the allowed
    range is not used: the box is outlined and a line under it gives the range and the value still in
    use, until a valid value is typed or the parameter changes (Reset, a preset, a link). A box bound
    with ``from_param`` kept such a value on screen and the server silently ignored it."""

    def __init__(self, owner: param.Parameterized, name: str, *, label: str, width: int = 120, **input_params):
        super().__init__()
        self._owner, self._name = owner, name
        self._parameter = owner.param[name]
        kind = pn.widgets.IntInput if isinstance(self._parameter, param.Integer) else pn.widgets.FloatInput
        # no start/end on the box: the browser sends what was typed, so it can be flagged here
        self.input = kind(
            label=label,
            value=getattr(owner, name),
            width=width,
            stylesheets=[INVALID_INPUT_CSS, CONTROL_TEXT_CSS],
            **input_params,
        )
        self.flag = pn.pane.HTML(
            "",
            visible=False,
            width=width,
            margin=(0, 10),
            styles={"color": INVALID_COLOR},
            css_classes=["noiselab-input-flag"],
        )
        self.input.param.watch(self._on_typed, "value")
        owner.param.watch(self._on_owner, name)

    @property
    def invalid(self) -> bool:
        """Whether the box holds a value that is not used."""
        return self.flag.visible

    def _on_typed(self, event):
        try:
            setattr(self._owner, self._name, event.new)  # an emptied box sends None
        except ValueError:
            in_use = getattr(self._owner, self._name)
            shown = "an empty box" if in_use is None else f"{in_use:g}"
            self.flag.object = html.escape(
                f"{self.input.label} must be {allowed_range(self._parameter)}; still using {shown}"
            )
            self.flag.visible = True
            self.input.css_classes = ["noiselab-invalid"]
        else:
            self._clear()

    def _on_owner(self, event):
        self._clear()
        if self.input.value != event.new:
            self.input.value = event.new

    def _clear(self):
        if self.flag.visible:
            self.flag.visible = False
            self.input.css_classes = []

    def __panel__(self):
        return pn.Column(self.input, self.flag, margin=0, width=self.input.width + 20)


def glossary() -> pn.pane.HTML:
    """Each term a native <details> element: opens by click, tap or keyboard (Tab, then Enter)."""
    items = "".join(
        f"<details><summary>{html.escape(term)}</summary><p>{html.escape(text)}</p></details>"
        for term, text in GLOSSARY.items()
    )
    return pn.pane.HTML(
        f'<div class="noiselab-glossary">{items}</div>',
        sizing_mode="stretch_width",
        stylesheets=[
            "details { margin: 2px 0; } summary { cursor: pointer; font-weight: 600; } p { margin: 2px 0 6px 12px; }"
        ],
    )


class InUse:
    """The sidebar's settings by name, each able to say whether the open tab uses it."""

    def __init__(self):
        self.labels: dict[str, object] = {}

    def show(self, used: frozenset) -> None:
        for name, target in self.labels.items():
            if isinstance(target, LogSlider):
                target.show_in_use(name in used)
            else:  # a widget or a text pane with a fixed label
                pane, label = target
                text = label if name in used else f"{label} {UNUSED}"
                if isinstance(pane, pn.pane.Markdown):
                    pane.object = text
                else:
                    pane.label = text


def controls(settings: Settings, show_tab=None, on_reset=None, in_use: InUse | None = None) -> pn.Column:
    """The global controls for the sidebar; ``show_tab(index)`` opens a preset's tab, ``on_reset()`` puts
    the page's own state (the rewind's release, the experiments settings) back after Reset; ``in_use`` is
    filled with the controls that say whether the open tab uses them."""
    sliders = [
        LogSlider(settings, "epsilon", "epsilon"),
        LogSlider(settings, "delta", "delta", digits=2),
        LogSlider(settings, "rho", "rho"),
        LogSlider(settings, "target", "rewind target error"),
        LogSlider(settings, "sensitivity", "sensitivity"),
    ]
    dim = pn.widgets.RadioButtonGroup.from_param(
        settings.param.dim, label="dimension d", options={"d = 1": 1, "d = 2": 2}
    )
    seed = CheckedInput(settings, "seed", label="seed", width=160, description=settings.param.seed.doc)
    dim_label = Text("dimension **d** of f(x)", margin=(5, 10, 0, 10))
    if in_use is not None:
        in_use.labels.update({slider.setting: slider for slider in sliders})
        in_use.labels.update(
            {
                "dim": (dim_label, "dimension **d** of f(x)"),
                "seed": (seed.input, "seed"),
            }
        )
    reset = pn.widgets.Button(label="Reset", description="Restore the default settings")
    preset = pn.widgets.Select(
        label="Presets",
        stylesheets=[CONTROL_TEXT_CSS],
        options=["Choose a scenario...", *PRESETS],
        description="Scenarios people ask about: each sets the sliders from the defaults and opens its tab. "
        + " ".join(f"**{name}**: {note}." for name, note in PRESET_NOTES.items()),
    )

    def apply_preset(event):
        if event.new in PRESETS:  # the choice stays shown; choose another to switch
            tab, values = PRESETS[event.new]
            settings.apply(values)
            if show_tab is not None:
                show_tab(tab)

    preset.param.watch(apply_preset, "value")

    def clear_stale_preset(*_events):
        """The box names a preset only while the settings are the preset's: once one differs, it says
        "Choose a scenario..." again (it kept naming an old preset after the sliders moved)."""
        if preset.value not in PRESETS:
            return
        wanted = {**DEFAULTS, **PRESETS[preset.value][1]}
        if any(getattr(settings, name) != wanted[name] for name in PRESET_SETTINGS):
            preset.value = preset.options[0]

    settings.param.watch(clear_stale_preset, list(PRESET_SETTINGS))

    def reset_all(_event):
        with pn.io.hold():
            settings.reset()
            if on_reset is not None:
                on_reset()
            preset.value = preset.options[0]  # the defaults are no scenario: the box says so again

    reset.on_click(reset_all)
    large = pn.widgets.Toggle.from_param(settings.param.large_type, label="Large type (projector)")
    large.jscallback(value=LARGE_TYPE_JS, args={"toggle": large})
    return pn.Column(
        preset,
        *sliders,
        dim_label,
        dim,
        seed,
        pn.FlexBox(reset, large, flex_wrap="wrap"),
        pn.Card(glossary(), title="Glossary", collapsed=True, sizing_mode="stretch_width"),
        sizing_mode="stretch_width",
    )


class TourPanel(pn.viewable.Viewer):
    """Next / Back through the guided tour; each step sets the sliders and the tab, and has a link."""

    def __init__(self, settings: Settings, on_step, **params):
        super().__init__(**params)
        self.settings = settings
        self._on_step = on_step
        self.start = pn.widgets.Button(
            label="Start the guided tour",
            variant="outline",
            color="primary",
            description="Six short steps for a lecture or a demo",
        )
        self.start.on_click(lambda _e: self._go(1))
        # the steps' text and buttons are built when the tour first starts (most pages never take it)
        self.body = pn.Column(self.start, sizing_mode="stretch_width", css_classes=["noiselab-tour"])
        # in presenter mode the tour shrinks to one line at the top, beside the page's own buttons, so the
        # open tab's plot stays on a projector's first screen (the full text returns with P)
        self.bar = pn.Row(
            visible=False,
            align="center",
            css_classes=["noiselab-tour-bar"],
            # left in the top row, whose buttons sit on the right; the buttons go under the title on a phone
            styles={"margin-right": "auto", "flex-wrap": "wrap", "align-items": "center"},
        )
        self.text = self.buttons = None
        settings.param.watch(self._on_tour, "tour")
        settings.param.watch(self._layout, "present")
        self._on_tour()

    def _build(self):
        # a step's link in code type: dark on light grey (Panel's code colour failed WCAG's 4.5:1 contrast)
        self.text = Text(
            "",
            sizing_mode="stretch_width",
            margin=(0, 10),
            stylesheets=["code { color: #1f2328; background: #eef1f4; }"],
        )
        self.back = pn.widgets.Button(label="\u25c0 Back", variant="outline", width=100)
        self.next = pn.widgets.Button(label="Next \u25b6", color="primary", width=100)
        self.close = pn.widgets.Button(label="End tour", variant="outline", width=100)
        self.back.on_click(lambda _e: self._go(self.settings.tour - 1))
        self.next.on_click(lambda _e: self._go(self.settings.tour + 1))
        self.close.on_click(lambda _e: self._go(0))
        self.buttons = pn.Row(self.back, self.next, self.close)
        self.bar_text = Text("", margin=(0, 6, 0, 10))
        self.bar_back = pn.widgets.Button(label="\u25c0 Back", variant="outline", width=80, margin=(4, 3))
        self.bar_next = pn.widgets.Button(label="Next \u25b6", color="primary", width=80, margin=(4, 3))
        self.bar_close = pn.widgets.Button(label="End tour", variant="outline", width=90, margin=(4, 3))
        for button, step in ((self.bar_back, -1), (self.bar_next, 1)):
            button.on_click(lambda _e, step=step: self._go(self.settings.tour + step))
        self.bar_close.on_click(lambda _e: self._go(0))
        self.bar.objects = [self.bar_text, self.bar_back, self.bar_next, self.bar_close]
        self.body.objects = [self.start, self.text, self.buttons]

    def _go(self, step):
        self.settings.tour = max(0, min(len(TOUR), step))

    def _layout(self, *_events):
        """The full panel, the one-line bar (presenter mode) or the start button, as the mode says."""
        touring, present = self.settings.tour > 0, self.settings.present
        self.start.visible = not touring and not present
        if self.text is not None:
            self.buttons.visible = self.text.visible = touring and not present
        self.bar.visible = touring and present

    def _on_tour(self, *_events):
        k = self.settings.tour
        if k > 0 and self.text is None:
            self._build()
        self._layout()
        if k > 0:
            step = TOUR[k - 1]
            self.back.disabled = self.bar_back.disabled = k == 1
            self.next.disabled = self.bar_next.disabled = k == len(TOUR)
            self.text.object = (
                f"**Tour, step {k} of {len(TOUR)}: {step.title}.** {step.text}  \n"
                f"**Look at:** {step.look_at} (Link to this step: `?tour={k}`)"
            )
            self.bar_text.object = f"**Tour {k}/{len(TOUR)}:** {step.title}"
            self._on_step(step)

    def __panel__(self):
        return self.body


__all__ = ["InUse", "LogSlider", "TourPanel", "controls", "glossary"]
