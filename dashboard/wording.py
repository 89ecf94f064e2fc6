"""Plain words for the lab's figures and terms: the story layer's wording (UI-free, numpy only).

- :func:`odds_text` and :func:`one_in` read an epsilon as an odds ratio and a probability as "one time
  in N"; :func:`plain_meaning` turns a :class:`~dashboard.claims.Claim`'s glossed figures into one
  sentence a stakeholder reads at once.
- :data:`EXAMPLES` holds the running example the rewind and the boundaries speak about (a count of
  people, in people) and the abstract f(x).
- :func:`mark_terms` marks each glossary term in a text so that it explains itself on hover, focus or
  tap (the browser's side is a style sheet: ``TERM_CSS``).
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass

from .tour import GLOSSARY, TERM_ALIASES

__all__ = [
    "EXAMPLES",
    "TERM_CSS",
    "Example",
    "all_but",
    "example_line",
    "mark_terms",
    "odds_factor",
    "odds_text",
    "one_in",
    "plain_meaning",
    "with_unit",
]


@dataclass(frozen=True, slots=True)
class Example:
    """What f(x) stands for: the query in words, its unit, and the public question the rewind decides."""

    name: str
    query: str  # f(x) in words
    unit: str  # the unit of f(x), of its errors and cut-offs ("" for the abstract f(x))
    question: str  # the decision the rewind's default stop makes, "{cutoff}" filled in
    value_label: str  # the walk's vertical axis

    @property
    def squared(self) -> str:
        """The unit of a noise variance (the unit squared)."""
        return f"{self.unit}\u00b2" if self.unit else ""


EXAMPLES = {
    "count": Example(
        "count",
        "how many more people than last year have a condition? The true answer f(x) is 0 (unchanged), and "
        "it is private; one person changes it by at most {sensitivity}",
        "people",
        "has it risen by {cutoff} or more (the public cut-off)?",
        "released rise (people)",
    ),
    "abstract": Example(
        "abstract",
        "an abstract f(x) = 0 of sensitivity {sensitivity}, as in paper A",
        "",
        "is f(x) below the public cut-off {cutoff}?",
        "released value",
    ),
}


def example_line(example: Example, *, cutoff: float, sensitivity: float, question: bool = True) -> str:
    """The rewind's query (and, with ``question``, the public question its default stop decides) in one
    line, numbers with their units."""
    figure = lambda value: with_unit(f"{value:.3g}", example.unit)  # noqa: E731
    line = f"**The query**: {example.query.format(sensitivity=figure(sensitivity))}."
    if question:
        line += f" **The analyst asks**: {example.question.format(cutoff=figure(cutoff))}"
    return line


def with_unit(text: str, unit: str) -> str:
    """``text`` (a formatted number) followed by ``unit``, if any: "86.5 people"."""
    if not unit or text == "n/a":
        return text
    return "1 person" if unit == "people" and text == "1" else f"{text} {unit}"


def odds_factor(epsilon: float) -> float:
    """The most an epsilon-DP output can change anyone's odds about one person: e^epsilon."""
    return math.exp(epsilon) if epsilon < 700 else math.inf


def odds_text(epsilon: float) -> str:
    """e^epsilon as people read it: "1.34", "20", "1,100", "about 10^21"."""
    if epsilon is None or not math.isfinite(epsilon):
        return "unbounded"
    factor = odds_factor(epsilon)
    if factor < 10:
        return f"{factor:.3g}" if factor < 9.995 else "10"
    if factor < 1e6:
        return f"{float(f'{factor:.2g}'):,.0f}"
    return f"about 10^{int(epsilon / math.log(10))}"


_NAMES = ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"), (1e3, "thousand"))


def one_in(probability: float) -> str:
    """A small probability as "one time in N": 1e-06 is "one time in a million", 0.05 "one time in 20";
    from 0.1 up, a percentage ("30% of the time")."""
    if not (0 < probability < 1):
        raise ValueError(f"probability must be in (0, 1), got {probability!r}")
    if probability >= 0.1:
        return f"{100 * probability:.2g}% of the time"
    times = float(f"{1 / probability:.2g}")
    for size, name in _NAMES:
        count = times / size
        if count.is_integer() and (count == 1 or (size >= 1e6 and count < 1000)):
            return f"one time in {'a' if count == 1 else int(count)} {name}"
    return f"one time in {times:,.0f}"


def all_but(probability: float) -> str:
    """1 - probability in words: "all but one time in a million"."""
    if not (0 < probability < 1):
        raise ValueError(f"probability must be in (0, 1), got {probability!r}")
    if probability >= 0.1:
        return f"{100 * (1 - probability):.2g}% of the time"
    return "all but " + one_in(probability)


def plain_meaning(claim, *, brief: bool = False) -> str:
    """One sentence giving each glossed figure of ``claim`` its plain meaning: an epsilon as the most the
    odds about any one person can move, a delta as how often the guarantee may fail. Empty when the claim
    glosses nothing. Each figure's number is followed by the words that read it, in the order glossed.
    ``brief`` (presenter mode: the presenter says the rest) keeps the first epsilon and the delta."""
    parts: list[str] = []
    failure = ""
    for name, label in claim.glosses:
        if brief and parts and name != "delta":
            continue
        value = claim.figures[name]
        if name == "delta":
            failure = f", {all_but(value)}" if brief else f"; each holds {all_but(value)} (delta {value:.2g})"
            continue
        if not math.isfinite(value):
            parts.append(f"no limit for {label} (epsilon infinite)")
            continue
        # "-fold", not "x": the headlines' "Nx" compare epsilons, this line reads one epsilon as odds
        parts.append(f"{odds_text(value)}-fold" + ("" if brief else f" for {label}") + f" (epsilon {value:.3g})")
    if not parts:
        return ""
    if brief:
        return f"**In plain words**: anyone's odds about one person move at most {parts[0]}{failure}."
    return (
        "**In plain words**: what is released moves anyone's odds about one person (say, whether they are in the "
        "data) at most: " + "; ".join(parts) + failure + "."
    )


# --- terms that explain themselves --------------------------------------------------------------------
# the explanation is the term's title (a hover tooltip, and the description screen readers announce) and
# shows on keyboard focus or a tap (a tap focuses it) in a panel along the window's bottom edge, inside
# the screen wherever the term is: generated content, so the page's text stays the sentence itself
TERM_CSS = (
    ".noiselab-term { border-bottom: 1px dotted currentColor; cursor: help; }"
    ".noiselab-term:focus { outline: 2px solid #1a5fb4; outline-offset: 1px; }"
    ".noiselab-term:focus::after { content: attr(data-gloss); position: fixed; left: 8px; right: 8px; bottom: 8px; "
    "z-index: 1000; max-width: 40em; margin: 0 auto; background: #1f2328; color: #ffffff; font-size: 0.95rem; "
    "font-weight: 400; line-height: 1.4; padding: 8px 12px; border-radius: 6px; white-space: normal; }"
)

_SKIP = re.compile(r"`[^`]*`|<[^>]*>|\]\([^)]*\)")  # code, tags, link targets: never marked inside


def _pattern(alias: str) -> str:
    escaped = re.escape(alias)
    start = r"(?<![\w-])" if alias[0].isalnum() else ""
    end = r"(?![\w(])" if alias[-1].isalnum() else ""
    return start + escaped + end


# the longest alias first, so "psi(T_N)" is one term rather than "psi" and a stray "(T_N)"
_ALIASES = sorted(
    ((alias, term) for term, aliases in TERM_ALIASES.items() for alias in aliases), key=lambda p: -len(p[0])
)
_TERM_RE = re.compile("|".join(f"(?P<t{i}>{_pattern(a)})" for i, (a, _) in enumerate(_ALIASES)))


_TERM_OF = dict(_ALIASES)  # alias -> its glossary entry


def mark_terms(text: str) -> str:
    """``text`` (Markdown or HTML) with each glossary term's first appearance marked: a focusable span
    whose explanation shows on hover, focus and tap and is read by screen readers (its title). Code spans,
    tags and link targets are left alone; the text is otherwise unchanged."""
    seen: set[str] = set()
    out, last = [], 0
    protected = [m.span() for m in _SKIP.finditer(text)]

    def inside(pos: int) -> bool:
        return any(a <= pos < b for a, b in protected)

    for match in _TERM_RE.finditer(text):
        start, end = match.span()
        if inside(start):
            continue
        alias = match.group(0)
        term = _TERM_OF[alias]
        if term in seen:
            continue
        seen.add(term)
        gloss = html.escape(f"{term}: {GLOSSARY[term]}", quote=True)
        out.append(text[last:start])
        out.append(f'<span class="noiselab-term" tabindex="0" title="{gloss}" data-gloss="{gloss}">{alias}</span>')
        last = end
    out.append(text[last:])
    return "".join(out)
