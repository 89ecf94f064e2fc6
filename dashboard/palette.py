"""One colour-blind-safe palette for every view, each colour at least 3:1 against the white plot.

Five colours are Okabe & Ito's ("Color Universal Design", 2008); their orange (2.25:1), sky blue (2.31:1)
and grey (2.85:1) failed WCAG 1.4.11's 3:1 for graphical objects, so their roles moved to a dark grey
(5.74:1) and a brown (8.24:1), chosen to stay apart from the other five under simulated colour-vision
deficiency. Colours are named by role, so a curve keeps its colour across views (Laplace is always
vermillion). ``tests/dashboard/test_presentation.py`` checks that curves drawn together stay apart under
simulated deuteranopia, protanopia and tritanopia, and that every drawn colour meets 3:1.
"""

from __future__ import annotations

BLACK = "#000000"
BLUISH_GREEN = "#009E73"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
REDDISH_PURPLE = "#CC79A7"
GREY = "#666666"  # darker than Okabe-Ito's #999999 (2.85:1)
BROWN = "#7F3C00"  # where Okabe-Ito's orange (2.25:1) was
HEADER = "#1f3b57"  # the page header's background (white text on it)

PALETTE = {
    # noise distributions
    "Laplace": VERMILLION,
    "Staircase": BLUE,
    "Arete": BLUISH_GREEN,
    "Lemma 3": REDDISH_PURPLE,
    # boundaries and their one-shot rivals
    "mixture": BLUE,
    "linear": BROWN,
    "gaussian": GREY,
    "pdp": BLACK,
    "loss": GREY,
    # stopping rules
    "hold-out": BLUISH_GREEN,
    "AboveThreshold": VERMILLION,
    "RAT": BLUE,
    "threshold": BROWN,
    # the rewind
    "walk": GREY,
    "release": BLUE,
    "current": VERMILLION,
    "stop": BLUISH_GREEN,
    "truth": BLACK,
    "psi": BLUE,
    "composition": GREY,
    "neighbour": BROWN,
    "error": VERMILLION,
    "expected": BLACK,
    "bound": REDDISH_PURPLE,
    "target": BLUISH_GREEN,
    "cutoff": REDDISH_PURPLE,
    "false halt": VERMILLION,
    # paper A's experiments
    "bm": BLUE,
    "lnr": VERMILLION,
    "doubling": GREY,
}

# colours that share a plot: each group must stay distinguishable
GROUPS = {
    "noise": ("Laplace", "Staircase", "Arete", "Lemma 3"),
    "boundaries": ("mixture", "linear", "gaussian", "pdp"),
    "rules": ("hold-out", "AboveThreshold", "RAT"),
    "rat run": ("RAT", "threshold", "stop", "false halt", "truth"),
    "rewind walk": ("walk", "release", "current", "stop", "truth", "cutoff", "neighbour"),
    "rewind privacy": ("psi", "composition", "neighbour", "current"),
    "rewind error": ("error", "expected", "bound", "target"),
    "experiment curves": ("bm", "lnr", "truth", "target"),
    "experiment boxes": ("bm", "lnr", "doubling", "truth"),
}
