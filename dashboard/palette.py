"""One colour-blind-safe palette for every view (Okabe & Ito, "Color Universal Design", 2008).

Colours are named by role, so a curve keeps its colour across views (Laplace is always vermillion).
``tests/dashboard/test_palette.py`` checks that curves drawn together stay apart under simulated
deuteranopia, protanopia and tritanopia.
"""

from __future__ import annotations

BLACK = "#000000"
ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
BLUISH_GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
REDDISH_PURPLE = "#CC79A7"
GREY = "#999999"
HEADER = "#1f3b57"  # the page header's background (white text on it)

PALETTE = {
    # noise distributions
    "Laplace": VERMILLION,
    "Staircase": BLUE,
    "Arete": BLUISH_GREEN,
    "Lemma 3": REDDISH_PURPLE,
    # boundaries and their one-shot rivals
    "mixture": BLUE,
    "linear": ORANGE,
    "gaussian": GREY,
    "pdp": BLACK,
    "loss": GREY,
    # stopping rules
    "hold-out": BLUISH_GREEN,
    "AboveThreshold": VERMILLION,
    "RAT": BLUE,
    "threshold": ORANGE,
    # the rewind
    "walk": SKY_BLUE,
    "release": BLUE,
    "current": VERMILLION,
    "stop": BLUISH_GREEN,
    "truth": BLACK,
    "psi": BLUE,
    "composition": GREY,
    "neighbour": ORANGE,
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
    "rat run": ("RAT", "threshold", "stop", "false halt"),
    "rewind walk": ("walk", "current", "stop", "truth", "cutoff"),
    "rewind privacy": ("psi", "composition", "neighbour"),
    "rewind error": ("error", "expected", "bound", "target"),
    "experiment curves": ("bm", "lnr", "truth", "target"),
    "experiment boxes": ("bm", "lnr", "doubling", "truth"),
}
