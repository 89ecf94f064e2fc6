"""Independent readers of the plain-words line: used by the claims sweep and the wording tests.

Each parses what a stakeholder reads (the factor, the epsilon, "one time in N") back into numbers and
compares them with the figures the claim glosses, computed here from math.exp and 1/delta, never from
dashboard.wording's own helpers.
"""

from __future__ import annotations

import math
import re

from dashboard.wording import plain_meaning

PART = re.compile(
    r"(?:(?P<factor>[\d,.]+)-fold|about 10\^(?P<power>\d+)-fold|no limit)(?: for (?P<label>.+?))? "
    r"\(epsilon (?P<shown>[^)]+)\)"
)
NAMES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
ONE_IN = re.compile(r"all but one time in (?P<count>a|[\d,]+)(?: (?P<name>thousand|million|billion|trillion))?")
PERCENT = re.compile(r"(?P<percent>[\d.]+)% of the time")


def times_in(text: str) -> float:
    """The N of the first "one time in N" in ``text`` (a, 20, 3,300, 2 million)."""
    match = ONE_IN.search(text)
    assert match, text
    count = 1.0 if match["count"] == "a" else float(match["count"].replace(",", ""))
    return count * NAMES.get(match["name"] or "", 1.0)


def check_factor(factor: str | None, power: str | None, epsilon: float) -> None:
    if power is not None:
        assert int(power) == math.floor(epsilon / math.log(10)), (power, epsilon)
        return
    shown = float(factor.replace(",", ""))
    exact = math.exp(epsilon)
    # three significant digits below 10, two above
    assert abs(shown - exact) <= (0.0051 * exact if exact < 10 else 0.051 * exact), (factor, epsilon)


def check_plain(claim, *, brief: bool = False) -> None:
    """The plain line of ``claim``: one part per glossed epsilon, in order, each naming its figure (to 3
    significant digits) and reading it as the odds factor e^epsilon; the delta as "one time in 1/delta"."""
    text = plain_meaning(claim, brief=brief)
    epsilons = [(name, label) for name, label in claim.glosses if name != "delta"]
    if not epsilons:
        assert text == "", text
        return
    parts = list(PART.finditer(text))
    expected = epsilons[:1] if brief else epsilons
    assert len(parts) == len(expected), (text, expected)
    for part, (name, label) in zip(parts, expected, strict=True):
        value = float(claim.figures[name])
        if not brief:
            assert part["label"] == label, (part["label"], label)
        if not math.isfinite(value):
            assert part["shown"] == "infinite" and text[part.start() :].startswith("no limit"), text
            continue
        assert float(part["shown"]) == float(f"{value:.3g}"), (part["shown"], value)
        check_factor(part["factor"], part["power"], value)
    if any(name == "delta" for name, _ in claim.glosses):
        delta = float(claim.figures["delta"])
        if delta >= 0.1:
            shown = float(PERCENT.search(text)["percent"])
            assert abs(shown - 100 * (1 - delta)) <= 0.051 * 100 * (1 - delta), (text, delta)
        else:
            assert abs(times_in(text) * delta - 1) <= 0.051, (text, delta)
        if not brief:
            assert f"(delta {delta:.2g})" in text, text
