"""UI-free state of the lab: typed, bounded, documented parameters (no Panel import)."""

from __future__ import annotations

import math
from typing import Any

import param

from .tour import TOUR

DEFAULTS: dict[str, Any] = {
    "epsilon": 1.0,
    "delta": 1e-6,
    "rho": 1.0,
    "target": 20.0,
    "sensitivity": 1.0,
    "dim": 1,
    "seed": 0,
    "stop_rule": "decide",
    "arete_source": "calibrated",
    "alpha": 0.0756,
    "theta": 0.63,
    "lam": 0.0545,
    "users": 100,
    "example": "count",
    "expert": False,
    "large_type": False,
    "present": False,
    "tour": 0,
}


class Settings(param.Parameterized):
    """The shared settings every view reads; one instance per browser session."""

    epsilon = param.Number(
        DEFAULTS["epsilon"],
        bounds=(0.05, 50.0),
        doc="Privacy level epsilon: the rewind releases from epsilon/10 up to epsilon; the noise "
        "view calibrates Laplace and Staircase to it.",
    )
    delta = param.Number(
        DEFAULTS["delta"], bounds=(1e-12, 0.5), doc="Failure probability delta of the time-uniform privacy boundary."
    )
    rho = param.Number(
        DEFAULTS["rho"],
        bounds=(1e-4, 1e4),
        doc="Mixture-boundary parameter rho, in units of sensitivity squared: psi_M is tightest near "
        "noise variance t = 2 ln(1/delta) rho (within a factor 1.4 for delta <= 0.05).",
    )
    target = param.Number(
        DEFAULTS["target"],
        bounds=(0.01, 100.0),
        doc="Target error ||release - f(x)|| of the rewind: the analyst wants to stop once a release is this close. "
        "(The RAT tab's target is a model's error rate, set from public data.)",
    )
    sensitivity = param.Number(
        DEFAULTS["sensitivity"], bounds=(0.1, 10.0), doc="Sensitivity of f: how far one person's data can move f(x)."
    )
    dim: param.Selector[int] = param.Selector(
        default=DEFAULTS["dim"], objects=[1, 2], doc="Dimension d of f(x): a line or the plane."
    )
    seed = param.Integer(
        DEFAULTS["seed"], bounds=(0, 2**31 - 1), doc="Random seed: the same seed reproduces every draw exactly."
    )
    stop_rule: param.Selector[str] = param.Selector(
        default=DEFAULTS["stop_rule"],
        objects=["decide", "confidence", "rat", "peek"],
        doc="How the rewind stops: 'decide' reads the releases (stops once a release's interval leaves "
        "out a public cut-off; pays psi(T_N)); 'confidence' is fixed before anything is released (the "
        "noise level alone; pays one Gaussian release at T_N); 'rat' checks the private error through "
        "ReducedAboveThreshold (pays 2 psi(T_N)); 'peek' looks at the private error directly: a "
        "counter-example with no privacy guarantee.",
    )
    arete_source: param.Selector[str] = param.Selector(
        default=DEFAULTS["arete_source"],
        objects=["calibrated", "lemma3", "local-search", "manual"],
        doc="Arete parameters: calibrated (least E|Z| with worst-case epsilon at most "
        "epsilon; never worse than Laplace), paper B's "
        "Lemma 3, the authors' local-search sets (nearest of eps = 6, 7, 8), or manual "
        "alpha/theta/lam.",
    )
    alpha = param.Number(DEFAULTS["alpha"], bounds=(1e-4, 1.0), doc="Arete Gamma shape alpha (manual).")
    theta = param.Number(DEFAULTS["theta"], bounds=(1e-3, 10.0), doc="Arete Gamma scale theta (manual).")
    lam = param.Number(DEFAULTS["lam"], bounds=(1e-3, 10.0), doc="Arete Laplace scale lambda (manual).")
    users = param.Integer(
        DEFAULTS["users"],
        bounds=(2, 100_000),
        doc="Number of users n who each add one share of the noise (distributed summation): sets "
        "the size of one share. The dropout curves depend only on the fraction present.",
    )
    example: param.Selector[str] = param.Selector(
        default=DEFAULTS["example"],
        objects=["count", "abstract"],
        doc="What f(x) stands for in the rewind: 'count', how many more people than last year have a condition "
        "(in people; one person moves it by at most one), or 'abstract', f(x) with no unit.",
    )
    expert = param.Boolean(
        DEFAULTS["expert"],
        doc="Expert wording: the papers' terms only, without the plain-words line under each headline.",
    )
    large_type = param.Boolean(DEFAULTS["large_type"], doc="Large type for a projector: bigger text and plot labels.")
    present = param.Boolean(
        DEFAULTS["present"],
        doc="Presenter mode: the sidebar hidden, large type, the open tab's plot and its controls on the first "
        "screen. Keys: Space play/pause, Left/Right step, Home/End first/last release, 1-5 tabs, P present.",
    )
    tour = param.Integer(
        DEFAULTS["tour"],
        bounds=(0, len(TOUR)),
        doc="Step of the guided tour on screen (0: no tour). Each step sets the sliders and tab.",
    )
    committed = param.Event(doc="Fired when a drag ends or a discrete setting changes: heavy views refresh.")

    @param.depends("present", watch=True)
    def _present_in_large_type(self):
        """Presenter mode uses large type (leaving it keeps the type as it is)."""
        if self.present:
            self.large_type = True

    @param.depends("dim", "seed", "stop_rule", "example", watch=True)
    def _commit_discrete(self):
        """Discrete settings have no drag: every change is final."""
        self.param.trigger("committed")

    # the room's display preferences, not the demo's state: Reset, presets and tour steps keep them
    DISPLAY = ("large_type", "present", "expert")

    def reset(self):
        """Back to the defaults (one batched update, then one commit); the display preferences stay."""
        self.param.update(**{**DEFAULTS, **{name: getattr(self, name) for name in self.DISPLAY}})
        self.param.trigger("committed")

    def apply(self, preset: dict):
        """The defaults overridden by ``preset`` (presentation settings are kept), then one commit."""
        keep = {"tour": self.tour, **{name: getattr(self, name) for name in self.DISPLAY}}
        self.param.update(**{**DEFAULTS, **keep, **preset})
        self.param.trigger("committed")

    def apply_values(self, values: dict) -> dict[str, str]:
        """Apply each value on its own (so one bad value never leaves the others half applied) and
        commit once; return ``{name: reason}`` for the values refused, unknown names included."""
        refused, tour = {}, None
        with param.parameterized.batch_call_watchers(self):
            for name, value in values.items():
                if name not in DEFAULTS:
                    refused[name] = "not a setting"
                elif not right_kind(self.param[name], value) or (isinstance(value, float) and not math.isfinite(value)):
                    refused[name] = f"must be {_allowed(self.param[name])}"
                elif name == "tour":
                    tour = value  # last: a tour step sets the sliders itself
                else:
                    try:
                        setattr(self, name, value)
                    except (ValueError, TypeError, OverflowError):
                        refused[name] = f"must be {_allowed(self.param[name])}"
        if len(refused) < len(values):
            self.param.trigger("committed")
        if tour is not None:
            try:
                self.tour = tour
            except (ValueError, TypeError):
                refused["tour"] = f"must be {_allowed(self.param.tour)}"
        return refused

    def as_query(self) -> dict:
        return {name: getattr(self, name) for name in DEFAULTS}


def right_kind(parameter, value) -> bool:
    """A value of the kind the setting holds: true/false only for a switch, a whole number where the
    setting counts (param takes 2.0 for 2 and True for a number, which the views then could not use),
    one number or word for the rest."""
    if isinstance(parameter, param.Boolean):
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if _counts(parameter):
        return isinstance(value, int)
    return isinstance(value, int | float | str)


def _counts(parameter) -> bool:
    """Whether a setting holds a whole number: an Integer, or a choice among whole numbers."""
    if isinstance(parameter, param.Integer):
        return True
    objects = list(getattr(parameter, "objects", None) or ()) if isinstance(parameter, param.Selector) else []
    return bool(objects) and all(isinstance(o, int) and not isinstance(o, bool) for o in objects)


def _allowed(parameter) -> str:
    """The allowed values of a parameter, in words."""
    if isinstance(parameter, param.Boolean):
        return "true or false"
    if isinstance(parameter, param.Selector):
        return "one of " + ", ".join(map(str, parameter.objects))
    low, high = parameter.bounds
    if isinstance(parameter, param.Integer):
        return f"a whole number from {low} to {high}"
    return f"a number from {low:g} to {high:g}"


class ExperimentSettings(param.Parameterized):
    """The experiments explorer's own settings (the shared delta and seed come from :class:`Settings`)."""

    task: param.Selector[str] = param.Selector(
        default="logistic",
        objects=["logistic", "ridge", "mean"],
        doc="Paper A's task: logistic regression (output perturbation), ridge regression "
        "(covariance perturbation) or a mean (fast).",
    )
    source: param.Selector[str] = param.Selector(
        default="synthetic",
        objects=["synthetic", "upload", "kddcup", "twitter"],
        doc="The data: synthetic sets shaped like paper A's, an uploaded CSV file, or the "
        "paper's files when the server has them.",
    )
    target_column = param.String(
        default=None, allow_None=True, doc="Column of the uploaded file to predict (not used by the mean task)."
    )
    trials: param.Selector[int] = param.Selector(
        default=100,
        objects=[100, 250, 500, 1000],
        doc="Independent trials (paper A used 1,000). At 100, each task answers in about 2-20 s on a busy "
        "two-core server (benchmarks/bench_experiments.py); 1,000 trials take about ten times as long.",
    )
    levels = param.Range(
        default=(0.16, 5.0),
        bounds=(0.16, 20.0),
        doc="Lowest and highest privacy level epsilon released (log-spaced). The lowest must "
        "exceed 0.149, the floor of the linear boundary tuned for epsilon = 0.3.",
    )
    count = param.Integer(
        default=30,
        bounds=(10, 60),
        doc="Number of privacy levels (paper A: 60); on coarser grids both mechanisms stop at the same few levels.",
    )
    target = param.Number(
        default=None,
        allow_None=True,
        bounds=(0.0, None),
        inclusive_bounds=(False, True),
        doc="Target loss for the stopping rules; empty: set from the public hold-out rows only (a model "
        "fitted on them, plus twice BM's mean excess loss at epsilon = 0.3 there, rounded up).",
    )
    unrun = param.Boolean(
        default=False,
        doc="These settings are not those of the run the plots show (kept by the experiments tab); a link "
        "carrying it opens the tab without running them, and says so.",
    )
