"""The guided tour, presets and glossary: UI-free content, so tests can check every step.

A step names its tab, the settings it applies on top of the defaults, the release shown in the
rewind, and what to look at. Step k has its own link, ``?tour=k``, for a slide to point to. Each
sentence below restates a claim that ``tests/dashboard/test_scenarios.py`` checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .tabs import REGISTRY, tab_index

__all__ = ["GLOSSARY", "PRESETS", "TABS", "TERM_ALIASES", "TOUR", "TourStep"]

TABS = tuple(tab.label for tab in REGISTRY)  # the labels, in tab order


@dataclass(frozen=True, slots=True)
class TourStep:
    title: str
    text: str
    look_at: str
    tab: int  # index of the tab shown: tab_index(name)
    settings: dict = field(default_factory=dict)
    frame: int | None = None  # the rewind's release to show (0-based), or None to leave it


TOUR = (
    TourStep(
        "One noisy release",
        "The query: how many more people than last year have a condition (the true answer f(x) is 0, and "
        "private). The mechanism first releases f(x) + B(T) with a large noise variance T, at epsilon/10. The "
        "large orange dot is that release; the dashed line is the true value f(x) = 0. The noise level T is "
        "public, the error is not.",
        "the orange dot, far from the dashed line, and the readout's error in people.",
        tab_index("rewind"),
        {},
        frame=0,
    ),
    TourStep(
        "Rewinding towards less noise",
        "Press \u25b6 Play towards less noise and watch from the first release: it pauses at the stop. "
        "Each new release is drawn from a Brownian "
        "bridge, so all of them lie on one walk that ends at f(x). The expected error shrinks with every "
        "release, though a single path may wander. By default the analyst stops at the first release whose "
        "interval leaves out a public cut-off: the stop reads the releases, so the whole sequence costs "
        "psi(T_N) of the last release, a little more than one release fixed in advance would cost.",
        "the headline: psi(T_N) against one release at T_N fixed in advance and the same releases as "
        "independent Gaussian releases, composed exactly.",
        tab_index("rewind"),
        {},
        frame=0,
    ),
    TourStep(
        "Why a boundary",
        "The realized privacy loss is a random walk in disguise. A privacy boundary psi stays above it at every "
        "release time at once, except with probability delta: here delta = 0.05, so at most 5% of loss paths "
        "may ever cross. The bound covers both directions at once, so the upper side alone is crossed by about "
        "delta/2 of the paths (fewer on the window shown). Holding at all times costs more variance than a "
        "single release with the same guarantee.",
        "the grey loss paths under the blue boundary, and the headline's price of time-uniformity.",
        tab_index("boundaries"),
        {"delta": 0.05},
    ),
    TourStep(
        "Stopping with a private check",
        "To stop when the model is accurate on the private data, the check itself must be private. "
        "ReducedAboveThreshold pays twice the level where it halts; AboveThreshold that level plus a fixed 0.5. "
        "A private check is noisy, so some halts come too early: they are marked and counted, and the headline "
        "says how often each rule's halts meet the target.",
        "the headline (median ex-post epsilon of RAT and AboveThreshold) and the error-at-halt histogram.",
        tab_index("rat"),
        {},
    ),
    TourStep(
        "The low-privacy regime",
        "At a large epsilon Laplace noise wastes accuracy: its error falls only like 1/epsilon. The Staircase and "
        "the Arete fall exponentially. Below epsilon ~ 3.5 the calibration search finds no Arete with a smaller "
        "E|Z| than Laplace's; at epsilon = 10 the Arete calibrated there has about a fifth of Laplace's error.",
        "the headline ratios and the log-scale densities.",
        tab_index("noise"),
        {"epsilon": 10.0},
    ),
    TourStep(
        "Splitting noise among users",
        "The Staircase can only be added by one trusted party. The Arete, like Laplace, is infinitely divisible: "
        "each of n users adds one share and the shares sum to the Arete. If some users drop out, the noise shrinks "
        "and the privacy loss grows: the dropout curves below show by how much.",
        "the table's last column (the size of one user's share) and the dropout curves.",
        tab_index("noise"),
        {"epsilon": 6.0, "users": 20},
    ),
)

# name -> (index of the tab shown, settings on top of the defaults); names short enough to show whole in
# the sidebar's box in large type (a test measures them), what each shows in PRESET_NOTES
PRESETS = {
    "Defaults: a count of people": (tab_index("rewind"), {}),
    "Rewind in the plane (d = 2)": (tab_index("rewind"), {"dim": 2}),
    "Stop fixed in advance": (tab_index("rewind"), {"stop_rule": "confidence"}),
    "Abstract f(x), no units": (tab_index("rewind"), {"example": "abstract"}),
    "Counter-example: peeking": (tab_index("rewind"), {"stop_rule": "peek", "seed": 2}),
    "Private check on the error": (tab_index("rewind"), {"stop_rule": "rat"}),
    "Crossings at delta = 0.05": (tab_index("boundaries"), {"delta": 0.05}),
    "Low privacy: epsilon = 10": (tab_index("noise"), {"epsilon": 10.0}),
    "Paper B's eps = 6 Arete": (
        tab_index("noise"),
        {"epsilon": 6.0, "arete_source": "local-search"},
    ),
    "RAT at a low epsilon": (tab_index("rat"), {"epsilon": 0.3}),
}
PRESET_NOTES = {
    "Defaults: a count of people": "the defaults: the rewind of a count (how many more people than last year "
    "have a condition; one person moves it by one)",
    "Rewind in the plane (d = 2)": "the same rewind with a two-dimensional f(x)",
    "Stop fixed in advance": "a stop chosen before anything is released needs no rewind: one release's price",
    "Abstract f(x), no units": "the rewind of an abstract f(x) = 0, as in the paper, instead of the count of people",
    "Counter-example: peeking": "the analyst stops by peeking at the private error: psi(T_N) does not hold; "
    "at seed 2 a neighbour's data would stop 23 releases later on the same releases",
    "Private check on the error": "RAT checks the error on private data and pays about 2 psi(T_N)",
    "Crossings at delta = 0.05": "a large delta, so some simulated paths cross the boundaries",
    "Low privacy: epsilon = 10": "Laplace, Staircase and Arete noise at epsilon = 10",
    "Paper B's eps = 6 Arete": "the Arete of paper B's local search at epsilon = 6",
    "RAT at a low epsilon": "RAT at epsilon = 0.3: more false halts",
}

GLOSSARY = {
    "epsilon": "The privacy level: whatever is released, anyone's odds about one person (say, whether they are "
    "in the data) change by at most a factor e^epsilon (epsilon 1: 2.7x; epsilon 0.1: 1.1x). Smaller is more "
    "private and noisier.",
    "delta": "The probability with which a guarantee may fail (1e-06: one time in a million). Here a privacy "
    "boundary bounds the privacy loss at every release time at once, except with probability delta.",
    "sensitivity": "How far one person's data can move f(x) (D). Noise is scaled to it.",
    "privacy loss": "log of the ratio of an output's probability under your data and under a neighbour's. "
    "Its realized value depends on the noise drawn.",
    "psi (privacy boundary)": "A curve psi(t) that stays above the privacy loss of the Brownian mechanism at "
    "every noise variance t at once, with probability 1 - delta (paper A, Definition 3.5; Theorem 3.6 gives "
    "the mixture and linear boundaries).",
    "rho": "Parameter of the mixture boundary psi_M, in units of the sensitivity squared: psi_M is tightest near "
    "noise variance t = 2 ln(1/delta) rho.",
    "ex post": "A privacy guarantee fixed after seeing the outputs: stopping at release N costs psi(T_N), paid "
    "only for the last release, if the decision to stop reads only the releases or public data. A stop fixed "
    "before anything is released costs less: one Gaussian release at T_N.",
    "exact composition": "Several releases of the same data cost more than one: their privacy losses add. For "
    "independent Gaussian releases at variances T_m the sum is again Gaussian (mu^2 = sum D^2/T_m), so its "
    "epsilon is exact: mu^2/2 + mu z with z = z_{1-delta}, the upper delta quantile of the normal, with the "
    "same probabilistic guarantee. One of the rewind's baselines; "
    "adding up the epsilons (a plain sum) charges far more and is not the fair comparison.",
    "BM (Brownian mechanism)": "Releases f(x) + B(T) at decreasing noise variances T along one Brownian path, "
    "and pays only for the last release (paper A).",
    "LNR (Laplace noise reduction)": "The same idea with Laplace noise: a Markov chain of Laplace releases "
    "(Koufogiannis et al.), each less noisy; it also pays only for the last release.",
    "hold-out": "Public rows kept apart from the private training rows. A check on them reads no private data, "
    "so it costs no privacy (as good as the public data are).",
    "pDP (probabilistic DP)": "The privacy loss exceeds epsilon with probability at most delta. Stronger than "
    "(epsilon, delta)-DP, so it needs more noise; a boundary gives this kind of guarantee.",
    "RAT / AboveThreshold": "Private checks that stop once a utility crosses a threshold. AboveThreshold pays a "
    "fixed epsilon; ReducedAboveThreshold pays twice the level where it halts.",
    "false halt": "A private check halted although the true error was still above the target (its noise "
    "crossed the threshold).",
    "E|Z|": "The expected absolute error a noise adds: the mean of |Z|.",
    "Staircase": "The noise with the least E|Z| for a given epsilon; it cannot be split into shares.",
    "Arete": "Gamma - Gamma + Laplace noise (paper B): infinitely divisible, so n users can each add one share.",
    "worst-case epsilon": "The supremum over all outputs of the log density ratio at the sensitivity. Exact for "
    "Laplace and Staircase; for the Arete a numerical supremum of the exact density, found by "
    "a multi-scale grid, local refinement and the tail limit, and tested against "
    "high-precision oracles.",
    "keys (presenter mode)": "Space plays or pauses the rewind; Left and Right step one release; Home and End "
    "go to the first and the last release; 1 to 5 open the tabs; P turns presenter mode on or off. Keys do "
    "nothing while you type in a box.",
    "seed": "The random seed: the same seed reproduces every draw, so a link reproduces a demo exactly.",
    "f(x)": "The true answer of the query on the private data x. In the running example: how many more people "
    "than last year have a condition (0 here: unchanged), which one person changes by at most one.",
    "noise variance T": "How much noise a release carries: its error is typically about sqrt(T), in the "
    "query's units (T = 3600 people\u00b2: about 60 people). T_N is the last release's.",
    "time-uniform": "Holding at every release time at once, however the analyst decides when to stop, rather "
    "than at one time fixed in advance.",
    "mixture and linear boundaries": "The two privacy boundaries of paper A (Theorem 3.6): psi_M, a mixture "
    "tuned by rho, and a straight line tuned for one epsilon.",
    "Gaussian release": "f(x) plus normal (Gaussian) noise of a fixed variance: one release, its price fixed "
    "before anything is seen.",
    "Laplace": "The classic noise for epsilon-DP: a two-sided exponential of scale sensitivity/epsilon. Its "
    "error falls only like 1/epsilon.",
    "paper A": "Whitehouse, Wu, Ramdas, Rogers, Brownian Noise Reduction (NeurIPS 2022): the Brownian "
    "mechanism, privacy boundaries and ReducedAboveThreshold. Corollary 3.7 prices a stop that reads the "
    "releases at psi(T_N); Corollary 5.2 prices RAT at 2 psi(T_N).",
    "paper B": "Pagh and Stausholm, Infinitely Divisible Noise in the Low Privacy Regime (ALT 2022): the "
    "Arete noise. Its Lemma 3 proves the Arete's privacy for large epsilon.",
    "eps_N": "The privacy level of the last release made before the stop: what noise reduction pays.",
    "target": "The error the analyst wants to get below: in the rewind a distance in the query's units, in "
    "the RAT tab and the experiments a model's error rate or loss.",
}

# how each glossary term is written where it appears (app text is matched against these, longest first)
TERM_ALIASES = {
    "epsilon": ("epsilon", "\u03b5"),
    "delta": ("delta",),
    "sensitivity": ("sensitivity",),
    "privacy loss": ("privacy loss", "loss paths"),
    "psi (privacy boundary)": ("psi(T_N)", "psi(T_last)", "psi(T)", "psi(T_n)", "2 psi(T_N)", "privacy boundary"),
    "rho": ("rho",),
    "ex post": ("ex-post", "ex post"),
    "exact composition": ("composed exactly",),
    "BM (Brownian mechanism)": ("BM", "Brownian mechanism"),
    "LNR (Laplace noise reduction)": ("LNR",),
    "hold-out": ("hold-out",),
    "pDP (probabilistic DP)": ("pDP", "probabilistic guarantee"),
    "RAT / AboveThreshold": ("ReducedAboveThreshold", "AboveThreshold", "RAT"),
    "false halt": ("false halt", "false halts"),
    "E|Z|": ("E|Z|",),
    "Staircase": ("Staircase",),
    "Arete": ("Arete",),
    "worst-case epsilon": ("worst-case epsilon",),
    "seed": ("seed",),
    "noise variance T": ("noise variance", "T_N", "noise level"),
    "time-uniform": ("time-uniform", "time-uniformity"),
    "mixture and linear boundaries": ("psi_M", "mixture boundary", "linear boundary"),
    "Gaussian release": ("Gaussian release", "Gaussian releases"),
    "Laplace": ("Laplace",),
    "paper A": ("paper A", "Corollary 3.7", "Corollary 5.2", "Theorem 3.6", "Definition 3.5"),
    "paper B": ("paper B", "Lemma 3"),
    "eps_N": ("eps_N", "epsilon_n"),
    "target": ("target error", "target loss"),
    "f(x)": ("f(x)",),
}
