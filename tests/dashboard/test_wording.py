"""Plain words: epsilon as odds, delta as "one time in N", every term explained where it appears, every
number with its unit, in every headline at the defaults and at every tour step.

The readers in ``wording_checks`` parse the words back into numbers and compare them with math.exp and
1/delta; the claims sweep (``test_claims.py``) runs the same check on every headline at 320 random
settings.
"""

from __future__ import annotations

import html
import math
import re

import numpy as np
import pytest

from dashboard.claims import Claim
from dashboard.scenarios import rewind_scenario, rewind_stop_readout
from dashboard.tour import GLOSSARY, PRESET_NOTES, PRESETS, TERM_ALIASES, TOUR
from dashboard.wording import EXAMPLES, all_but, example_line, mark_terms, odds_text, one_in, plain_meaning, with_unit
from tests.dashboard.wording_checks import check_factor, check_plain, times_in

GREEK = re.compile("[\u0370-\u03ff]")


@pytest.mark.parametrize(
    ("probability", "words"),
    [
        (1e-6, "one time in a million"),
        (0.05, "one time in 20"),
        (2e-6, "one time in 500,000"),
        (1e-12, "one time in a trillion"),
        (3e-4, "one time in 3,300"),
        (1e-3, "one time in a thousand"),
        (5e-9, "one time in 200 million"),
        (0.3, "30% of the time"),
    ],
)
def test_a_probability_reads_as_one_time_in_n(probability, words):
    assert one_in(probability) == words


def test_one_time_in_n_over_the_delta_slider():
    """2 significant digits of 1/delta over 400 log-spaced deltas of the slider's range [1e-12, 0.1)."""
    for delta in np.geomspace(1e-12, 0.0999, 400):
        assert abs(times_in(all_but(delta)) * delta - 1) <= 0.051, delta


@pytest.mark.parametrize("epsilon", [*np.geomspace(0.001, 50, 200), 0.0, 100.0, 700.0, 1000.0])
def test_epsilon_reads_as_an_odds_factor(epsilon):
    """The factor is e^epsilon (three digits below 10, two above; 10^k past a million)."""
    words = odds_text(float(epsilon))
    match = re.fullmatch(r"about 10\^(\d+)|([\d,.]+)", words)
    assert match, words
    check_factor(match[2], match[1], float(epsilon))


def test_odds_of_an_unbounded_epsilon_and_bad_probabilities():
    assert odds_text(math.inf) == "unbounded"
    for bad in (0.0, 1.0, -0.1, 2.0, math.nan):
        for words in (one_in, all_but):
            with pytest.raises(ValueError, match="probability must be in"):
                words(bad)


def test_a_unit_follows_its_number():
    assert with_unit("86.5", "people") == "86.5 people"
    assert with_unit("1", "people") == "1 person"
    assert with_unit("n/a", "people") == "n/a"
    assert with_unit("3", "") == "3"


def test_plain_line_of_a_claim_in_full_and_brief():
    claim = Claim(
        "x", {"cost": 0.296, "single": 0.242, "delta": 1e-6}, glosses=(("cost", "this stop"), ("single", "fixed"))
    )
    text = plain_meaning(claim)
    assert "1.34-fold for this stop (epsilon 0.296)" in text and "1.27-fold for fixed (epsilon 0.242)" in text
    assert "one time in a million" not in text  # delta not glossed here
    check_plain(claim)
    with_delta = Claim("x", claim.figures, glosses=(*claim.glosses, ("delta", "")))
    assert "each holds all but one time in a million (delta 1e-06)" in plain_meaning(with_delta)
    brief = plain_meaning(with_delta, brief=True)
    assert (
        brief
        == "**In plain words**: anyone's odds about one person move at most 1.34-fold (epsilon 0.296), all but one "
        "time in a million."
    )
    check_plain(with_delta, brief=True)
    assert plain_meaning(Claim("x", {}, glosses=())) == ""
    peek = Claim("x", {"cost": math.inf}, glosses=(("cost", "peeking"),))
    assert "no limit for peeking (epsilon infinite)" in plain_meaning(peek)
    check_plain(peek)


# --- terms -----------------------------------------------------------------------------------------------
TERM_SPAN = re.compile(r'<span class="noiselab-term" tabindex="0" title="([^"]*)" data-gloss="\1">([^<]*)</span>')


def visible(markup: str) -> str:
    """What the page shows as text (tags dropped, entities read)."""
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def marked_terms(markup: str) -> dict[str, str]:
    """{glossary term: the alias marked} for each term span of ``markup``."""
    out = {}
    for title, alias in TERM_SPAN.findall(markup):
        term = html.unescape(title).split(": ", 1)[0]
        out[term] = alias
    return out


def alias_pattern(alias: str) -> str:
    start = r"(?<![\w-])" if alias[0].isalnum() else ""
    end = r"(?![\w(])" if alias[-1].isalnum() else ""
    return start + re.escape(alias) + end


def unexplained_terms(markup: str) -> list[str]:
    """Glossary terms whose aliases appear in the visible text but that are not marked anywhere in it (the
    marked terms' own words left out: "T_N" inside a marked "psi(T_N)" is explained there)."""
    text, marked = visible(TERM_SPAN.sub(" ", markup)), marked_terms(markup)
    return [
        term
        for term, aliases in TERM_ALIASES.items()
        if term not in marked and any(re.search(alias_pattern(a), text) for a in aliases)
    ]


def test_every_alias_names_a_glossary_term_and_every_gloss_is_plain_text():
    assert set(TERM_ALIASES) <= set(GLOSSARY)
    for term, aliases in TERM_ALIASES.items():
        assert aliases and all(a.strip() == a and a for a in aliases), term
        for alias in aliases:
            assert term in marked_terms(mark_terms(f"see {alias} here")), (term, alias)
    for text in GLOSSARY.values():
        assert "`" not in text and "\\" not in text  # the rewind's readout template is a JavaScript literal


def test_marking_keeps_the_text_and_marks_each_term_once():
    source = "Reading the releases costs psi(T_N) = 0.3; psi(T_N) again, epsilon and delta, RAT. `epsilon` stays."
    marked = mark_terms(source)
    assert visible(marked) == source
    assert marked.count('class="noiselab-term"') == 4  # psi, epsilon, delta, RAT: once each
    assert "`epsilon`" in marked  # never inside code
    # never inside a tag's attributes or a link's target
    assert mark_terms('<a title="epsilon">x</a>') == '<a title="epsilon">x</a>'
    assert mark_terms("[see](http://host/epsilon)") == "[see](http://host/epsilon)"


# --- the first screens and the tour ------------------------------------------------------------------------
UNITS_AFTER = ("people", "person", "%", "x", "releases", "runs", "trials", "target errors", "in the same units")
UNITS_BEFORE = ("release ", "Release ", "round ", "x", "epsilon = ", "epsilon ", "delta ", "try ", "target loss ")
NUMBER = re.compile(r"(?<![\w.^])\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")


def numbers_without_units(headline: str, claim) -> list[str]:
    """Each number of the headline that has no unit beside it and is not a privacy figure the plain line
    reads aloud (an epsilon or a delta the claim glosses)."""
    values = (claim.figures[name] for name, _label in claim.glosses)
    glossed = {float(f"{v:.3g}") for v in values if math.isfinite(v)}
    missing = []
    for match in NUMBER.finditer(headline):
        after = headline[match.end() :].lstrip(" ")
        before = headline[: match.start()]
        if after.startswith(UNITS_AFTER) or after.startswith("(in f(x)'s units)") or before.endswith(UNITS_BEFORE):
            continue
        value = float(match[0].replace(",", ""))
        if float(f"{value:.3g}") in glossed and before.rstrip().endswith(
            ("=", "(", "'s", "at", "cost", "median", "is")
        ):
            continue
        missing.append(f"{match[0]!r} in ...{headline[max(0, match.start() - 40) : match.end() + 20]}...")
    return missing


@pytest.fixture(scope="module")
def lab():
    from dashboard.app import NoiseLab

    lab = NoiseLab()
    yield lab
    lab.end_session()


def shown_headline(lab, index: int):
    view = lab.views[index]
    lab.tabs.active = index
    view.set_active(True, now=True)
    return view


def check_first_screen(view, where: str):
    headline, plain = view.headline.object, view.plain.object
    assert view.plain.visible, where
    claim = view._claim
    assert unexplained_terms(headline) == [], (where, visible(headline))
    assert unexplained_terms(plain) == [], (where, visible(plain))
    assert not GREEK.search(visible(headline + plain)), where
    assert numbers_without_units(visible(headline), claim) == [], where
    check_plain(claim)


@pytest.mark.sweep
def test_every_headline_at_the_defaults_explains_its_terms_and_units(lab):
    """Each tab's first screen at the shared defaults: every glossary term in the headline and its plain
    line is marked (it explains itself), no Greek letter, every number has a unit or is a privacy figure
    the plain line reads as odds; the noise tab offers the epsilon where its story shows."""
    for index in range(len(lab.views)):
        view = shown_headline(lab, index)
        check_first_screen(view, f"tab {index} at the defaults")
    assert lab.noise.try_larger.visible and "epsilon = 10" in lab.noise.try_larger.label
    lab.noise.try_larger.clicks += 1
    lab.noise.set_active(True, now=True)
    assert lab.settings.epsilon == 10.0 and not lab.noise.try_larger.visible
    assert "has expected error" in visible(lab.noise.headline.object)


@pytest.mark.sweep
@pytest.mark.parametrize("step", range(1, len(TOUR) + 1))
def test_every_tour_step_explains_its_terms_and_units(lab, step):
    lab.settings.tour = step
    view = shown_headline(lab, TOUR[step - 1].tab)
    check_first_screen(view, f"tour step {step}")
    lab.settings.tour = 0


def test_expert_wording_hides_the_plain_line_and_presenter_mode_shortens_it(lab):
    view = shown_headline(lab, 0)
    full = view.plain.object
    lab.settings.expert = True
    assert not view.plain.visible
    lab.settings.expert = False
    assert view.plain.visible and view.plain.object == full
    lab.settings.present = True
    try:
        assert "In plain words" in view.plain.object and len(view.plain.object) < len(full)
    finally:
        lab.settings.present = False
        lab.settings.large_type = False


def test_the_sidebar_says_which_controls_the_open_tab_uses(lab):
    labels = lambda: {slider.slider.label for slider in lab.in_use.labels.values() if hasattr(slider, "slider")}  # noqa: E731
    lab.tabs.active = 2  # the noise tab: epsilon and sensitivity only
    assert "rho (unused here)" in labels() and "epsilon" in labels() and "sensitivity" in labels()
    lab.tabs.active = 0
    assert not any("not used" in label for label in labels())


# --- the running example and the counter-example ---------------------------------------------------------------
def test_the_running_example_speaks_in_people():
    sc = rewind_scenario(epsilon=1.0, delta=1e-6, rho=1.0, target=20.0, unit="people", rng=0)
    line = example_line(EXAMPLES["count"], cutoff=sc.cutoff, sensitivity=sc.sensitivity)
    assert "at most 1 person" in line and "risen by 60 people or more" in line
    readout = rewind_stop_readout(sc).text
    assert "± 65.9 people" in readout and "cut-off 60 people" in readout
    abstract = rewind_scenario(epsilon=1.0, delta=1e-6, rho=1.0, target=20.0, rng=0)
    assert "people" not in rewind_stop_readout(abstract).text
    with pytest.raises(TypeError, match="unit must be a short text"):
        rewind_scenario(epsilon=1.0, delta=1e-6, rho=1.0, target=20.0, unit=3, rng=0)


def first_within(values, centre, target):
    hits = np.flatnonzero(np.linalg.norm(values - centre, axis=1) <= target)
    return int(hits[0]) if hits.size else -1


def test_the_peek_presets_neighbour_stops_elsewhere():
    """The preset's note: at seed 2 the same releases, read with a neighbour's f(x) one person higher, stop
    23 releases later (release 71, not 48). Recomputed from the releases here. Over 300 seeds at the
    defaults the two stops differ at a fraction printed (about 15%: the counter-example is a possibility,
    not the rule); the readout says which case it shows."""
    _tab, values = PRESETS["Counter-example: peeking"]
    assert values == {"stop_rule": "peek", "seed": 2}
    sc = rewind_scenario(epsilon=1.0, delta=1e-6, rho=1.0, target=20.0, stop_rule="peek", unit="people", rng=2)
    shift = np.zeros(sc.frame_values.shape[1])
    shift[0] = 1.0
    mine, theirs = first_within(sc.frame_values, 0.0, 20.0), first_within(sc.frame_values, shift, 20.0)
    assert (mine, theirs) == (sc.stop_frame, sc.neighbour_stop_frame) == (47, 70)
    assert "23 releases later" in PRESET_NOTES["Counter-example: peeking"]
    assert "would stop at release 71" in rewind_stop_readout(sc).text
    differ = 0
    for seed in range(300):
        other = rewind_scenario(epsilon=1.0, delta=1e-6, rho=1.0, target=20.0, stop_rule="peek", frames=120, rng=seed)
        expected = first_within(other.frame_values, np.array([1.0]), 20.0)
        assert other.neighbour_stop_frame == expected
        text = rewind_stop_readout(other).text
        if other.stop_frame >= 0:
            assert ("happens to stop at the same release" in text) == (expected == other.stop_frame)
        differ += expected != other.stop_frame
    print(f"the neighbour's stop differs at {differ} of 300 seeds")
    assert 0 < differ < 300


def test_share_makes_an_escaped_code_and_warns_about_this_computers_own_address():
    from dashboard.share import loopback_warning, qr_svg

    for own in ("http://127.0.0.1:5006/?eps=2", "http://localhost:5006/", "http://[::1]:5006/", "http://0.0.0.0:5006/"):
        assert "other devices cannot open it" in loopback_warning(own), own
    for shared in ("https://lab.example.edu/?eps=2", "http://192.168.1.20:5006/", "http://lab:5006/"):
        assert loopback_warning(shared) == "", shared
    svg = qr_svg("http://lab/?a=<b>&c=1")
    assert svg.startswith("<svg") and "<title>QR code of this view's address</title>" in svg
    assert "Scanning it opens http://lab/?a=&lt;b&gt;&amp;c=1" in svg and "<b>" not in svg
    for bad in ("", None, 3):
        with pytest.raises(TypeError, match="address must be a non-empty text"):
            qr_svg(bad)
