"""What the views say: every headline and readout as a UI-free function of a story record.

Each function returns a :class:`Claim`: the Markdown text a view places, the figures it states
(by name) and the comparisons its words make, as ``(left, op, right)`` over those figures
(op one of ``"<"``, ``">"``, ``"<="``, ``">="``). ``tests/dashboard/test_claims.py`` checks every
comparison against the numbers and recomputes the figures independently over random settings.

Privacy statements follow paper A's hypotheses and price a stop by what it reads: a stop fixed before
anything is released costs one Gaussian release at T_N (the earlier releases are a post-processing of
the last); a stop that reads the releases or public data costs psi(T_N) (Corollary 3.7); a stop that
reads private data goes through ReducedAboveThreshold and costs 2 psi(T_N) (Corollary 5.2). Every stop is
shown beside every honest alternative at the same delta (one release at T_N, psi(T_N), the same releases
as independent Gaussian releases composed exactly), and noises are compared at the same epsilon.

numpy and noisecore only (no Panel, no Bokeh, no scenarios import: the story records are passed in).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

import numpy as np

from noisecore import Arete  # the Lemma 3 hypothesis check lives in the core
from noisecore.dropout import MIN_FRACTION

from .wording import all_but, odds_text, with_unit

__all__ = [
    "FRAME_READOUT",
    "RULE_COST",
    "RULE_LABELS",
    "Claim",
    "boundaries_headline",
    "boundaries_readout",
    "crossing_readout",
    "dropout_note",
    "dropout_unavailable",
    "experiments_headline",
    "fmt",
    "noise_headline",
    "noise_table",
    "percent",
    "rat_headline",
    "rat_run_readout",
    "rat_table",
    "rewind_frame_readout",
    "rewind_headline",
    "rewind_stop_readout",
    "stopping_table",
]

OPS = {"<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge}


def fmt(value, digits=4):
    """A number in Python's general format with ``digits`` significant digits ("n/a" if not finite)."""
    if value is None or not np.isfinite(value):
        return "n/a"
    return f"{value:.{digits}g}"


def smaller_than(value, laplace) -> str:
    """How much smaller ``value`` is than Laplace's: a ratio from 1.1x, else a percentage (at epsilon 0.3 the
    ratio 1.004 read "1x smaller")."""
    ratio = laplace / value
    if ratio >= 1.1:
        return f"{fmt(ratio, 3)}x smaller than Laplace's"
    saving = 100 * (1 - value / laplace)
    if saving < 0.05:
        return "the same as Laplace's to three digits"
    return f"{fmt(saving, 2)}% smaller than Laplace's"


def percent(fraction):
    """A fraction as a percentage, one format everywhere (one decimal): ``percent(0.9033)`` is "90.3%",
    ``percent(0.89)`` "89.0%"."""
    return "n/a" if fraction is None or not np.isfinite(fraction) else f"{100 * fraction:.1f}%"


@dataclass(frozen=True, slots=True)
class Claim:
    """A sentence the app shows, with the figures it names and the comparisons its words make."""

    text: str
    figures: dict = field(default_factory=dict)
    comparisons: tuple = ()  # (left figure, op, right figure): what the words assert
    # (figure, what it prices): the epsilons (and "delta") that dashboard.wording.plain_meaning reads aloud
    glosses: tuple = ()

    def holds(self) -> bool:
        """True when every comparison the words make holds for the figures named."""
        return all(OPS[op](self.figures[a], self.figures[b]) for a, op, b in self.comparisons)


def _versus(cheap_name, cheap, dear_name, dear):
    """("below" or "not below", the comparison those words make)."""
    if cheap < dear:
        return "below", ((cheap_name, "<", dear_name),)
    return "not below", ((cheap_name, ">=", dear_name),)


# --- Brownian rewind ------------------------------------------------------------------------
def _more(name, value, base_name, base):
    """ "(Nx more)" for a figure above its base, with the comparison those words make."""
    return f"({fmt(value / base, 3)}x more)", ((name, ">", base_name),)


def _composition_words(sc, k, cost_name, cost):
    """The exact composition of the same releases against a cost: the words and their comparison."""
    comp = float(sc.frame_composition[k])
    if comp > cost:
        words, comparisons = _more("composition", comp, cost_name, cost)
        return f"{fmt(comp, 3)} {words}", comparisons
    return f"{fmt(comp, 3)}, not more (few releases)", (("composition", "<=", cost_name),)


def rewind_headline(sc) -> Claim:
    """The rewind's headline: what the stop costs, priced by what the rule reads, against every honest
    alternative at the same delta: one Gaussian release at T_N (what a stop fixed in advance costs), the
    time-uniform price psi(T_N), and the same releases as independent Gaussian releases composed exactly."""
    k = sc.stop_frame
    u = lambda value: with_unit(fmt(value, 3), sc.unit)  # noqa: E731
    figures = {"target": sc.target, "last_epsilon": float(sc.frame_epsilon[-1]), "delta": sc.delta}
    if k < 0:
        if sc.stop_rule == "decide":
            figures.update(cost=float(sc.stop_epsilon), cutoff=sc.cutoff)
            return Claim(
                f"##### No release's interval leaves out the cut-off {u(sc.cutoff)} by epsilon = "
                f"{fmt(sc.frame_epsilon[-1], 3)}, so the analyst never decides; all {len(sc.frame_times)} releases "
                f"cost psi(T_last) = {fmt(sc.stop_epsilon, 3)}. Raise epsilon or the target (the cut-off sits "
                f"{fmt((sc.cutoff - float(sc.value[0])) / sc.target, 2)} target errors from f(x)).",
                figures,
                glosses=(("cost", f"all {len(sc.frame_times)} releases"), ("delta", "")),
            )
        return Claim(
            f"##### No release reaches the target error {u(sc.target)} by epsilon = "
            f"{fmt(sc.frame_epsilon[-1], 3)}: raise epsilon or the target.",
            figures,
            glosses=(("last_epsilon", "the last release's level"),),
        )
    cost, psi, single = float(sc.stop_epsilon), float(sc.frame_epsilon[k]), float(sc.frame_single[k])
    comp = float(sc.frame_composition[k])
    figures.update(releases=k + 1, cost=cost, psi=psi, single=single, composition=comp, error=float(sc.frame_error[k]))
    composed = (("composition", f"the {k + 1} releases composed exactly"),) if k > 0 else ()
    if sc.stop_rule == "decide":
        released = float(sc.frame_values[k, 0])
        right = (released < sc.cutoff) == (float(sc.value[0]) < sc.cutoff)
        figures.update(cutoff=sc.cutoff, released=released, truth=float(sc.value[0]), ratio=psi / single)
        side = "<" if sc.stop_decision == "below" else ">"
        price_cmp = (("psi", ">", "single"),)
        comp_cmp: tuple = ()
        if k == 0:
            tail = "the first release decides: nothing to rewind."
        else:
            comp_words, comp_cmp = _composition_words(sc, k, "cost", cost)
            tail = f"the {k + 1} releases composed exactly cost {comp_words}."
        verdict = "the right answer" if right else "the wrong answer, a risk the intervals allow"
        return Claim(
            f"##### Release {k + 1} is the first whose interval leaves out the public cut-off {u(sc.cutoff)}: "
            f"f(x) is {sc.stop_decision} it ({verdict}). Reading the releases costs psi(T_N) = {fmt(cost, 3)}, "
            f"{fmt(psi / single, 3)}x one release fixed in advance ({fmt(single, 3)}); " + tail,
            figures,
            (("cost", "<=", "psi"), ("cost", ">=", "psi"), ("released", side, "cutoff"), *price_cmp, *comp_cmp),
            glosses=(
                ("cost", f"stopping at release {k + 1} after reading the releases"),
                ("single", "one release fixed in advance"),
                *composed,
                ("delta", ""),
            ),
        )
    if sc.stop_rule == "confidence":
        price_words, price_cmp = _more("psi", psi, "single", single)
        comp_cmp = ()
        if k == 0:
            tail = "Nothing to rewind: lower epsilon or the target to see releases before it."
        else:
            comp_words, comp_cmp = _more("composition", comp, "single", single)
            tail = f"The {k + 1} releases composed exactly: {fmt(comp, 3)} {comp_words}."
        return Claim(
            f"##### Release {k + 1} is fixed in advance (its noise level alone puts the error within the target "
            f"{u(sc.target)} with {fmt(100 * sc.confidence, 3)}% probability), so it needs no rewind: "
            f"releases 1 to {k + 1} cost one Gaussian release, {fmt(cost, 3)}. A time-uniform boundary would "
            f"charge psi(T_N) = {fmt(psi, 3)} {price_words}. " + tail,
            figures,
            (("cost", "<=", "single"), ("cost", ">=", "single"), *price_cmp, *comp_cmp),
            glosses=(
                ("cost", f"release {k + 1}, fixed in advance"),
                ("psi", "a time-uniform boundary"),
                *composed,
                ("delta", ""),
            ),
        )
    if sc.stop_rule == "rat":
        false_halt = sc.frame_error[k] > sc.target
        halt = (
            f" (a false halt: the true error {u(sc.frame_error[k])} is above the target {u(sc.target)})"
            if false_halt
            else ""
        )
        words, comparisons = _versus("cost", cost, "composition", comp)
        return Claim(
            f"##### The private check halts at release {k + 1}{halt} and pays 2 psi(T_N) = {fmt(cost, 3)} for "
            f"reading the private error: {words} the {fmt(comp, 3)} of the {k + 1} releases composed exactly; "
            f"fixed in advance, release {k + 1} alone would cost {fmt(single, 3)}.",
            figures,
            comparisons
            + (("single", "<", "cost"),)
            + ((("error", ">", "target"),) if false_halt else (("error", "<=", "target"),)),
            glosses=(
                ("cost", "the private check's stop"),
                *composed,
                ("single", f"release {k + 1} fixed in advance"),
                ("delta", ""),
            ),
        )
    return Claim(
        f"##### Peeking at the private error stops at release {k + 1}, but then no privacy guarantee holds: "
        "the stop itself depends on f(x).",
        figures,
        (("error", "<=", "target"),),
        glosses=(("cost", "peeking"),),
    )


def rewind_stop_readout(sc) -> Claim:
    """What the stop costs, in words that follow paper A's hypotheses."""
    u = lambda value: with_unit(fmt(value, 3), sc.unit)  # noqa: E731
    k, target, delta = sc.stop_frame, u(sc.target), fmt(sc.delta, 2)
    figures = {"target": sc.target}
    if k >= 0:
        figures.update(
            error=float(sc.frame_error[k]),
            cost=float(sc.stop_epsilon),
            psi=float(sc.frame_epsilon[k]),
            single=float(sc.frame_single[k]),
            composition=float(sc.frame_composition[k]),
            composition_dp=float(sc.stop_composition_dp),
            psi_sum=float(sc.frame_psi_sum[k]),
        )
        baselines = (
            f"the same releases composed exactly as independent Gaussian releases cost "
            f"{fmt(sc.frame_composition[k], 3)} ({fmt(sc.stop_composition_dp, 3)} as plain (epsilon, delta)-DP, a "
            f"weaker guarantee); the plain sum of the psi values, {fmt(sc.frame_psi_sum[k], 3)}."
        )
    if sc.stop_rule == "decide":
        if k < 0:
            return Claim(
                f"No release's interval leaves out the public cut-off {u(sc.cutoff)}: the analyst releases "
                f"all {len(sc.frame_times)} and pays psi(T_last) = {fmt(sc.stop_epsilon, 3)} (delta {delta}).",
                figures,
            )
        released, half = float(sc.frame_values[k, 0]), float(sc.frame_interval[k])
        figures.update(released=released, interval=half, cutoff=sc.cutoff)
        return Claim(
            f"**Stop at release {k + 1}**: its interval {fmt(released, 3)} ± {u(half)} lies wholly "
            f"{sc.stop_decision} the public cut-off {u(sc.cutoff)}. All {len(sc.frame_times)} intervals hold "
            "at once with probability 90%, so looking at every release keeps the risk of a wrong decision at most "
            f"10%. The rule reads the releases, never the private data: **ex-post epsilon psi(T_N) = "
            f"{fmt(sc.stop_epsilon, 3)}** (delta {delta}; paper A, Corollary 3.7). Besides, " + baselines,
            figures,
            ((("released", "<", "cutoff"),) if sc.stop_decision == "below" else (("released", ">", "cutoff"),)),
        )
    if sc.stop_rule == "confidence":
        if k < 0:
            return Claim(
                f"The noise never gets small enough for the target error {target} by the last release: raise "
                f"epsilon or the target.",
                figures,
            )
        met = sc.frame_error[k] <= sc.target
        return Claim(
            f"**Stop at release {k + 1}**: its noise level alone (public) says the error is at most {target} with "
            f"probability at least {percent(sc.confidence)}; this path's error {u(sc.frame_error[k])} is "
            f"{'within' if met else '**not** within'} the target. It reads only the noise schedule, so the "
            f"earlier releases are a post-processing of this one: **one Gaussian release, ex-post epsilon "
            f"{fmt(sc.stop_epsilon, 3)}** (delta {delta}); psi(T_N) = {fmt(sc.frame_epsilon[k], 3)} is not "
            "needed. Besides, " + baselines,
            figures,
            (("error", "<=" if met else ">", "target"), ("cost", "<", "psi")),
        )
    if sc.stop_rule == "rat":
        if k < 0:
            return Claim(
                f"ReducedAboveThreshold never halted: everything released costs 2 psi(T_last) = "
                f"{fmt(sc.stop_epsilon, 3)} (delta {delta}).",
                figures,
            )
        met = sc.frame_error[k] <= sc.target
        verdict = (
            f"within the target {target}"
            if met
            else f"**not** within the target {target}: a false halt, the check is noisy"
        )
        # ReducedAboveThreshold's query noise at this release: Laplace of scale 4D / epsilon_n
        scale = 4 * float(sc.sensitivity) / float(sc.frame_epsilon[k])
        figures["check_scale"] = scale
        return Claim(
            f"**ReducedAboveThreshold halts at release {k + 1}** after checking the private error, which is "
            f"{u(sc.frame_error[k])}: {verdict}. A check on private data is paid for: "
            f"**ex-post epsilon 2 psi(T_N) = {fmt(sc.stop_epsilon, 3)}** (delta {delta}; paper A, Corollary 5.2). "
            f"The check adds Laplace noise of scale 4D/epsilon_n = {u(scale)} against a target of {target}, "
            "so a halt can miss the target; the RAT tab checks a utility averaged over many records, with less "
            "noise per record.",
            figures,
            (("error", "<=" if met else ">", "target"),),
        )
    if k < 0:
        return Claim(f"Counter-example (peeking at the private error): no release comes within {target}.", figures)
    m = sc.neighbour_stop_frame
    figures["neighbour_stop"] = m + 1
    figures["stop"] = k + 1
    shift = with_unit(fmt(sc.sensitivity, 3), sc.unit)
    if m < 0:
        neighbour = (
            f"With a neighbour's data (f(x) {shift} higher) the same releases never come within {target}: the "
            "stop itself tells the two apart"
        )
        comparison: tuple = ()
    elif m != k:
        neighbour = (
            f"With a neighbour's data (f(x) {shift} higher) the same releases would stop at release {m + 1} "
            "(the hollow star), not here: the stop itself tells the two apart"
        )
        comparison = (("neighbour_stop", "<" if m < k else ">", "stop"),)
    else:
        neighbour = (
            f"Here a neighbour's data (f(x) {shift} higher) happens to stop at the same release, but the rule "
            "still reads f(x), and at other seeds the two stops differ"
        )
        comparison = (("neighbour_stop", ">=", "stop"), ("neighbour_stop", "<=", "stop"))
    return Claim(
        f"**Counter-example**: stopping at release {k + 1} because its *private* error "
        f"{u(sc.frame_error[k])} is within {target} reads f(x). {neighbour}, so **no ex-post guarantee "
        f"holds** (psi(T_N) = {fmt(sc.frame_epsilon[k], 3)} would be a false claim). Use the private check "
        "(RAT) instead.",
        figures,
        (("error", "<=", "target"), *comparison),
    )


# one release's readout: the browser fills the same template while it plays (dashboard.views.rewind)
FRAME_READOUT = (
    "<b>Release {release} of {count}</b>: noise variance T = {T}, ex-post epsilon psi(T) = {epsilon} "
    "(odds moved at most {odds}-fold; independent releases composed exactly: {composition}), error = {error} "
    "(expected {expected})."
)
FRAME_DIGITS = {"T": 4, "epsilon": 3, "composition": 3, "error": 3, "expected": 3}  # significant digits
FRAME_UNITS = {"T": 2, "error": 1, "expected": 1}  # the power of f(x)'s unit each figure carries


def frame_figures(sc) -> dict:
    """Every release's figures that the readout names, by FRAME_READOUT field."""
    return {
        "T": sc.frame_times,
        "epsilon": sc.frame_epsilon,
        "odds": sc.frame_epsilon,
        "composition": sc.frame_composition,
        "error": sc.frame_error,
        "expected": sc.frame_expected_error,
    }


def frame_text(sc, name: str, value: float) -> str:
    """One figure of the release readout as shown: its digits, then its unit (the odds: e^epsilon in words)."""
    if name == "odds":
        return odds_text(float(value))
    unit = {0: "", 1: sc.unit, 2: f"{sc.unit}\u00b2" if sc.unit else ""}[FRAME_UNITS.get(name, 0)]
    return with_unit(fmt(float(value), FRAME_DIGITS[name]), unit)


def rewind_frame_readout(sc, k: int) -> Claim:
    """One release's readout: its noise variance, its ex-post epsilon psi(T), the exact composition of the
    releases so far, its error and the expected error at that variance. Names no comparison."""
    count = len(sc.frame_times)
    if isinstance(k, bool) or not (isinstance(k, int | np.integer) and 0 <= k < count):
        raise ValueError(f"k must be a release index from 0 to {count - 1}, got {k!r}")
    figures = {name: float(values[k]) for name, values in frame_figures(sc).items()}
    shown = {name: frame_text(sc, name, value) for name, value in figures.items()}
    return Claim(FRAME_READOUT.format(release=k + 1, count=count, **shown), {"release": k + 1, **figures})


# --- boundaries -----------------------------------------------------------------------------
def boundaries_headline(c, *, epsilon) -> Claim:
    """The price of time-uniformity at epsilon, against the one-shot Gaussian with the same guarantee."""
    g = c.gaps
    return Claim(
        f"##### At epsilon = {fmt(epsilon, 3)}, stopping whenever you like costs "
        f"x{fmt(g['linear_over_pdp'], 3)} the noise variance of a single release with the same guarantee "
        f"(linear boundary; mixture x{fmt(g['mixture_over_pdp'], 3)}).",
        {
            "linear_over_pdp": g["linear_over_pdp"],
            "mixture_over_pdp": g["mixture_over_pdp"],
            "one": 1.0,
            "epsilon": epsilon,
        },
        (("linear_over_pdp", ">=", "one"), ("mixture_over_pdp", ">=", "one")),
        glosses=(("epsilon", "one release at this epsilon"),),
    )


def boundaries_readout(c, *, epsilon, delta, rho) -> Claim:
    """The variances at epsilon and the two gaps, reported separately."""
    m, g = c.time_at_epsilon, c.gaps
    return Claim(
        f"At epsilon = {fmt(epsilon, 3)}, delta = {fmt(delta, 2)}, one Gaussian release needs variance "
        f"**{fmt(m['gaussian'])}** for (epsilon, delta)-DP and **{fmt(m['pdp'])}** for the probabilistic "
        f"guarantee a boundary gives (x{fmt(g['pdp_over_dp'], 3)}: the price of pDP over DP). Holding at every "
        f"release time at once, the linear boundary tuned here needs **{fmt(m['linear'])}** "
        f"(x{fmt(g['linear_over_pdp'], 3)} over the one-shot pDP Gaussian: the price of time-uniformity; floor "
        f"{fmt(c.linear_floor, 3)}) and the mixture boundary (rho = {fmt(rho, 3)}) **{fmt(m['mixture'])}** "
        f"(x{fmt(g['mixture_over_pdp'], 3)}).",
        {**m, **g},
        (("pdp", ">=", "gaussian"),),
    )


def crossing_readout(study, *, delta) -> Claim:
    """How many simulated loss paths cross the mixture boundary, against the theorem's bound."""
    crossed = round(study.frequency * study.paths)
    figures = {"frequency": study.frequency, "delta": delta}
    advice = (
        " Raise delta (try 0.05) to see crossings."
        if delta < 0.01
        else " psi_M bounds the loss in both directions at once, so one direction alone is crossed by about "
        "delta/2 of the paths, and fewer on a finite window."
    )
    return Claim(
        f"{crossed} of {study.paths} simulated loss paths (each against one fixed neighbour) cross psi_M on this "
        f"window (frequency {fmt(study.frequency, 3)}); the theorem: at most delta = {fmt(delta, 2)} over all "
        f"times.{advice}",
        figures,
    )


# --- low-privacy noise ------------------------------------------------------------------------
def noise_headline(c) -> Claim:
    """Noises compared at the same epsilon only; where none is comparable, say why."""
    m = c.mean_abs
    eps = fmt(c.epsilon, 3)
    figures = {
        "epsilon": c.epsilon,
        "laplace": m["Laplace"],
        "staircase": m["Staircase"],
        "arete": m["Arete"],
        "arete_epsilon": c.certified["Arete"],
    }
    stair_vs_lap = (
        f"the central-only Staircase reaches {fmt(m['Staircase'], 3)} in the same units "
        f"({smaller_than(m['Staircase'], m['Laplace'])})"
    )
    if c.placeholder:
        return Claim(
            f"##### At epsilon = {eps} Laplace's E|Z| is {fmt(m['Laplace'], 3)} (in f(x)'s units) and "
            f"{stair_vs_lap}. The Arete "
            f"calibrated at this epsilon is being computed; the Arete curve drawn meanwhile is a {c.arete_note}.",
            figures,
            (("staircase", "<=", "laplace"),),
            glosses=(("epsilon", "every noise here"),),
        )
    if c.laplace_limit:
        return Claim(
            f"##### At epsilon = {eps} the calibration search found no Arete with a smaller E|Z| than Laplace's "
            f"{fmt(m['Laplace'], 3)} (in f(x)'s units), so the family's Laplace limit is shown; {stair_vs_lap}. "
            "The Arete's "
            "advantage appears at larger epsilon (try 10).",
            figures,
            (("staircase", "<=", "laplace"), ("arete", ">=", "laplace")),
            glosses=(("epsilon", "every noise here"),),
        )
    r = c.ratios
    ratio = fmt(r["abs_vs_laplace"], 3)
    certified = c.certified["Arete"]
    if certified > c.epsilon * (1 + 1e-9):  # a fixed set for a larger epsilon: not comparable
        return Claim(
            f"##### The Arete shown ({c.arete_note}) is not epsilon = {eps} private: its worst-case epsilon is "
            f"{fmt(certified, 3)}. Its E|Z| of {ratio}x Laplace's is bought with that extra privacy loss; choose "
            f"the calibrated Arete to compare at the same epsilon.",
            figures,
            (("arete_epsilon", ">", "epsilon"),),
            glosses=(("epsilon", "asked"), ("arete_epsilon", "the Arete shown")),
        )
    if c.source != "calibrated" and certified < c.epsilon * 0.99:
        return Claim(
            f"##### The Arete shown ({c.arete_note}) is more private than asked: worst-case epsilon "
            f"{fmt(certified, 3)} against {eps}, so its E|Z| of {ratio}x Laplace's compares unequal privacy; "
            f"choose the calibrated Arete to compare at the same epsilon.",
            figures,
            (("arete_epsilon", "<", "epsilon"),),
            glosses=(("epsilon", "asked"), ("arete_epsilon", "the Arete shown")),
        )
    figures.update(ratio_laplace=r["abs_vs_laplace"], ratio_staircase=r["abs_vs_staircase"])
    return Claim(
        f"##### At epsilon = {eps} the Arete ({c.arete_note}) has expected error E|Z| {ratio}x Laplace's "
        f"and {fmt(r['abs_vs_staircase'], 3)}x the Staircase's, and unlike the Staircase it can be split among "
        f"users.",
        figures,
        (("arete_epsilon", "<=", "epsilon"),),
        glosses=(("epsilon", "every noise here"),),
    )


def dropout_note(curves, *, users: int, laplace_limit: bool) -> Claim:
    """What the dropout curves show: the Arete shares' worst-case epsilon with all users present and at the
    fewest present with a finite epsilon, beside Laplace shares of the same epsilon there (an infinite
    epsilon: the density is infinite at 0, and no epsilon holds)."""
    fraction = np.asarray(curves["fraction"], dtype=float)
    arete, laplace = (np.asarray(curves[k], dtype=float) for k in ("arete_epsilon", "laplace_epsilon"))
    if fraction.size == 0 or arete.shape != fraction.shape or laplace.shape != fraction.shape:
        raise ValueError("curves must hold one fraction, arete_epsilon and laplace_epsilon per point, at least one")
    if np.isnan(arete).any() or np.isnan(laplace).any():
        raise ValueError("curves must not hold NaN epsilons (inf marks a density infinite at 0)")
    bounded = np.isfinite(arete)
    if not bounded.any():
        return Claim(
            f"With n = {users} users, at every fraction present shown ({fmt(100 * fraction.max(), 3)}% down to "
            f"{fmt(100 * fraction.min(), 3)}%) the Arete shares' density is infinite at 0: no epsilon holds.",
            {"users": users},
        )
    last = int(np.flatnonzero(bounded)[-1])
    figures = {
        "users": users,
        "first": float(arete[0]),
        "last": float(arete[last]),
        "present": float(fraction[last]),
        "laplace": float(laplace[last]),
    }
    where = f"{fmt(100 * figures['present'], 3)}% present"
    if figures["last"] > figures["first"]:
        trend = f"grows from {fmt(figures['first'], 4)} (all present) to {fmt(figures['last'], 4)} at {where}"
        comparisons = (("last", ">", "first"),)
    else:
        trend = f"is {fmt(figures['first'], 4)} with all present and {fmt(figures['last'], 4)} at {where}"
        comparisons = (("last", "<=", "first"),)
    text = (
        f"With n = {users} users, the Arete's worst-case epsilon {trend}; Laplace shares of the same epsilon "
        f"reach {fmt(figures['laplace'], 4)} there."
    )
    if not bounded.all():
        text += " Fewer users than that leave a density infinite at 0: no epsilon holds."
    if laplace_limit:
        text += " Here the Arete is its Laplace limit, so the two curves coincide (Laplace dashed)."
    return Claim(text, figures, comparisons)


def dropout_unavailable(c) -> Claim | None:
    """Why the dropout curves cannot be computed for the Arete shown, or None when they can: the share
    computation needs a Gamma shape alpha of at least ``MIN_FRACTION`` (the calibrated Arete's falls
    below it above epsilon of about 27.2)."""
    alpha = c.arete.alpha if isinstance(c.arete, Arete) else 0.0
    if not (0.0 < alpha < MIN_FRACTION):  # 0: Laplace shares; NaN cannot come from an Arete
        return None
    return Claim(
        f"Dropout curves are not available for this Arete: its Gamma shape alpha = {fmt(alpha, 3)} is below the "
        f"{MIN_FRACTION:g} the share computation handles (at this epsilon the Arete is almost a Laplace "
        "distribution). Lower epsilon below about 27.",
        {"alpha": alpha, "minimum": MIN_FRACTION},
        (("alpha", "<", "minimum"),),
    )


def noise_table(c) -> Claim:
    """E|Z|, variance, worst-case epsilon and one user's share of each noise, with the Arete's source."""
    a = c.arete
    rows = []
    for name in ("Laplace", "Staircase", "Arete"):
        share = c.share_std[name]
        share_text = f"{fmt(share, 3)}" if share is not None else "cannot be split (central only)"
        flag = ""
        if name == "Arete" and c.certified[name] > c.epsilon * (1 + 1e-9):
            flag = " (above the slider's epsilon: not epsilon-DP here)"
        rows.append(
            f"| {name} | {fmt(c.mean_abs[name])} | {fmt(c.variance[name])} | "
            f"{fmt(c.certified[name], 6)}{flag} | {share_text} |"
        )
    params = (
        "Laplace scale " + fmt(a.scale)
        if c.laplace_limit
        else f"alpha = {fmt(a.alpha)}, theta = {fmt(a.theta)}, lam = {fmt(a.lam)}"
    )
    text = (
        f"At epsilon = {fmt(c.epsilon, 3)}, sensitivity {fmt(c.sensitivity, 3)}:\n\n"
        f"| noise | E\\|Z\\| | variance | worst-case epsilon | std of one share, n = {c.users} |\n"
        "|---|---|---|---|---|\n"
        + "\n".join(rows)
        + f"\n\nArete: {c.arete_note}; {params}. Worst-case epsilon: exact for Laplace and Staircase; for the "
        "Arete a numerical supremum over all outputs (how it is verified: see What to notice)."
    )
    figures = {"epsilon": c.epsilon, "arete_epsilon": c.certified["Arete"]}
    if c.source == "lemma3" and not c.laplace_limit and not Arete.lemma3_applies(c.epsilon, sensitivity=c.sensitivity):
        figures["share_of_nominal"] = c.certified["Arete"] / c.epsilon
        text += (
            f" Lemma 3 is proved only for sensitivity >= 2/e and epsilon >= 20 + 4 ln(sensitivity): here its "
            f"worst-case epsilon is {fmt(c.certified['Arete'], 4)}, {percent(c.certified['Arete'] / c.epsilon)} of "
            f"the nominal {fmt(c.epsilon, 3)}."
        )
    return Claim(text, figures)


# --- ReducedAboveThreshold ------------------------------------------------------------------------
def _cost_rules(at_epsilon):
    return {"hold-out": "psi(T_N)", "AboveThreshold": f"psi(T_N) + {fmt(at_epsilon, 3)}", "RAT": "2 psi(T_N)"}


def rat_headline(study) -> Claim:
    """Median costs of RAT and AboveThreshold over the study, and how often their halts meet the target."""
    summary = study.summary()
    rat, at = summary["RAT"], summary["AboveThreshold"]
    runs = len(study.stop_rounds["RAT"])
    figures = {
        "rat_median": rat[0],
        "at_median": at[0],
        "rat_within": rat[2],
        "at_within": at[2],
        "first_round_met": study.first_round_met,
    }
    comparisons: tuple[tuple[str, str, str], ...]
    if rat[0] < at[0]:
        cheaper, comparisons = "less than", (("rat_median", "<", "at_median"),)
    elif rat[0] > at[0]:
        cheaper, comparisons = "more than", (("rat_median", ">", "at_median"),)
    else:
        cheaper, comparisons = "the same as", ()
    return Claim(
        f"##### Over {runs:,} runs RAT's median ex-post epsilon is {fmt(rat[0], 3)}, {cheaper} AboveThreshold's "
        f"{fmt(at[0], 3)}; {percent(rat[2])} of RAT's halts meet the target error {percent(study.target)} "
        f"(AboveThreshold: {percent(at[2])}; {percent(study.first_round_met)} of runs meet it already at the "
        "first, noisiest round).",
        figures,
        comparisons,
        glosses=(("rat_median", "RAT's median stop"), ("at_median", "AboveThreshold's median stop")),
    )


def rat_run_readout(run, *, delta, at_epsilon) -> Claim:
    """One run, round by round: where RAT halts, whether the halt is false, what it costs."""
    target = percent(run.target)
    k = run.stop_round
    if not k:
        return Claim(
            f"RAT does not halt within {run.epsilons.size} rounds (up to epsilon = {fmt(run.epsilons[-1], 3)}): "
            f"everything released costs 2 psi(T_last) = {fmt(run.rat_ex_post, 3)}.",
            {"cost": run.rat_ex_post},
        )
    figures = {"error": float(run.error[k - 1]), "target": run.target, "cost": run.rat_ex_post, "at": run.at_cost}
    verdict = (
        f"a **false halt**: the true error {percent(run.error[k - 1])} is above the target {target}"
        if run.false_halt
        else f"the true error {percent(run.error[k - 1])} is within the target {target}"
    )
    return Claim(
        f"RAT halts at round **{k}** (epsilon_{k} = {fmt(run.epsilons[k - 1], 3)}): {verdict}. Ex-post epsilon "
        f"**{fmt(run.rat_ex_post, 3)}** = 2 psi(T_N) with delta {fmt(delta, 2)}. AboveThreshold halting at the "
        f"same round would pay psi(T_N) + {fmt(at_epsilon, 3)} = {fmt(run.at_cost, 3)}.",
        figures,
        (("error", ">" if run.false_halt else "<=", "target"),),
    )


def rat_table(study) -> Claim:
    """The study's table: cost rule, median cost, halts, halts within the target, error at the halt."""
    costs = _cost_rules(study.at_epsilon)
    lines = []
    summary = study.summary()
    for rule in study.stop_rounds:
        median, stopped, within, error = summary[rule]
        lines.append(
            f"| {rule} | {costs[rule]} | {fmt(median, 3)} | {percent(stopped)} | {percent(within)} | {percent(error)} |"
        )
    return Claim(
        "| stopping rule | pays | median ex-post epsilon | runs that halt | halts within the target | "
        "median true error at the halt |\n|---|---|---|---|---|---|\n"
        + "\n".join(lines)
        + f"\n\nTarget error {percent(study.target)}: the error of a model fitted on the public hold-out records "
        f"({percent(study.reference_error)}) plus {fmt(100 * (study.target - study.reference_error), 3)} points, "
        f"fixed before any release ({percent(study.first_round_met)} of runs meet it at the first round). A halt "
        "within the target is one whose true error on the private records meets it.",
        {"first_round_met": study.first_round_met},
    )


# --- experiments ------------------------------------------------------------------------------------
RULE_LABELS = {
    ("bm", "holdout"): "BM / hold-out",
    ("bm", "AboveThreshold"): "BM / AboveThreshold",
    ("bm", "RAT"): "BM / RAT",
    ("lnr", "holdout"): "LNR / hold-out",
    ("lnr", "AboveThreshold"): "LNR / AboveThreshold",
    ("lnr", "RAT"): "LNR / RAT",
    ("doubling", "holdout"): "doubling / hold-out",
}
RULE_COST = {
    ("bm", "holdout"): "eps_N",
    ("bm", "AboveThreshold"): "eps_N + {at}",
    ("bm", "RAT"): "2 eps_N",
    ("lnr", "holdout"): "eps_N",
    ("lnr", "AboveThreshold"): "eps_N + {at}",
    ("lnr", "RAT"): "2 eps_N",
    ("doubling", "holdout"): "the sum of its releases",
}


def experiments_headline(result, *, delta: float, lowest_allowed: float | None = None) -> Claim:
    """The comparison in one sentence or two, with the measured medians. ``lowest_allowed`` is the lowest
    level the app's grid can start at (advice to start lower is given only above it)."""
    stop = result.stopping
    median = {key: value[0] for key, value in stop.summary().items()}
    within = stop.within_fraction()
    bm, lnr = median[("bm", "holdout")], median[("lnr", "holdout")]
    rat, at = median[("bm", "RAT")], median[("bm", "AboveThreshold")]
    figures = {
        "bm": bm,
        "lnr": lnr,
        "rat": rat,
        "at": at,
        "rat_within": within[("bm", "RAT")],
        "at_within": within[("bm", "AboveThreshold")],
    }
    comparisons = []
    if np.isfinite(bm) and np.isfinite(lnr):
        ratio = lnr / bm
        if ratio > 1:
            verdict = f"{fmt(ratio, 2)}x lower for BM"
            comparisons.append(("bm", "<", "lnr"))
        elif ratio < 1:
            verdict = f"{fmt(1 / ratio, 2)}x lower for LNR"
            comparisons.append(("lnr", "<", "bm"))
        else:
            verdict = "the same for both"
    else:
        verdict = "one of them never reaches it on this grid"
    if np.isfinite(rat) and np.isfinite(at):
        if rat < at:
            cheaper = "less than"
            comparisons.append(("rat", "<", "at"))
        elif rat > at:
            cheaper = "more than"
            comparisons.append(("rat", ">", "at"))
        else:
            cheaper = "the same as"
    else:
        cheaper = "against"
    lowest = float(stop.epsilons[0])
    at_start = [name for name, value in (("BM", bm), ("LNR", lnr)) if value <= lowest * (1 + 1e-9)]
    note = ""
    if at_start:
        verb = "meet" if len(at_start) > 1 else "meets"
        can_lower = lowest_allowed is None or lowest > lowest_allowed * (1 + 1e-9)
        advice = "start it lower" if can_lower else "lower the target loss, since the grid cannot start lower"
        note = (
            f" {' and '.join(at_start)} already {verb} the target at the grid's lowest level {fmt(lowest, 3)}, so "
            f"this comparison depends on where the grid starts: {advice}."
        )
    rat_within, at_within = within[("bm", "RAT")], within[("bm", "AboveThreshold")]
    if rat_within == 0 or at_within == 0:
        comparisons = [c for c in comparisons if "rat" not in c and "at" not in c]
        never = " and ".join(name for name, f in (("RAT", rat_within), ("AboveThreshold", at_within)) if f == 0)
        private = (
            f"Checked privately, no halt of {never} met the target (judged by the training loss the check "
            "reads, without its noise): the private data cannot reach it here, so their costs are not compared; "
            "raise the target loss."
        )
        comparisons.append(("rat_within" if rat_within == 0 else "at_within", "<=", "zero"))
        figures["zero"] = 0.0
    else:
        private = (
            f"Checked privately, BM with RAT pays a median {fmt(rat, 3)}, {cheaper} AboveThreshold's "
            f"{fmt(at, 3)}; a private check halts on noise too: {percent(rat_within)} of RAT's and "
            f"{percent(at_within)} of AboveThreshold's trials halted within the target."
        )
    return Claim(
        f"##### Checked on public hold-out data, BM reaches the target loss {fmt(stop.target, 4)} at a median "
        f"ex-post epsilon {fmt(bm, 3)} (holds {all_but(delta)}, delta {fmt(delta, 2)}), LNR at {fmt(lnr, 3)}: "
        f"{verdict}.{note} {private}",
        {**figures, "delta": delta},
        tuple(comparisons),
        glosses=(
            ("bm", "BM's median stop, checked on public data"),
            ("lnr", "LNR's median stop"),
            ("rat", "BM with RAT's median stop"),
            ("at", "BM with AboveThreshold's median stop"),
            ("delta", ""),
        ),
    )


def stopping_table(result, *, at_epsilon: float = 0.5) -> Claim:
    """Median ex-post epsilon, the share of trials that halted, and the share that halted within the target
    (a private check can halt on its noise: halted is not met), per mechanism and rule."""
    rows = []
    within = result.stopping.within_fraction()
    for key, (median, stopped) in result.stopping.summary().items():
        rows.append(
            f"| {RULE_LABELS[key]} | {RULE_COST[key].format(at=at_epsilon)} | {fmt(median, 3)} | {percent(stopped)} "
            f"| {percent(within[key])} |"
        )
    return Claim(
        "| mechanism / check | pays | median ex-post epsilon | trials that halted | halted within the target |\n"
        "|---|---|---|---|---|\n"
        + "\n".join(rows)
        + f"\n\neps_N is the level of the last release. Over {result.tradeoff.trials} trials; a trial that never "
        "halts on this grid is counted as not stopping, and left out of the median. Within the target: the loss "
        "the rule checks, without the check's noise, is at most the target at the halt (the hold-out loss for "
        "the hold-out rules, so all their halts are; the training loss for AboveThreshold and RAT, whose noisy "
        "checks can halt early).",
    )
