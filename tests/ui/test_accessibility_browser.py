"""WCAG 2.1 A and AA as axe-core checks them (the engine behind Lighthouse's accessibility score, bundled
by axe-playwright-python: no network): no serious or critical violation on any tab, after any tour step,
in presenter mode or with Large type, on a phone (390x844) and a desktop (1440x900)."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe

from dashboard.tour import TABS, TOUR
from tests.ui.conftest import settle, show_tab, wait_for_app

pytestmark = pytest.mark.ui

RULES = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}
BLOCKING = ("serious", "critical")
SIZES = {"phone": (390, 844), "desktop": (1440, 900)}


@pytest.fixture(scope="module")
def axe():
    return Axe()


@pytest.fixture
def watched_page(watched_page):
    watched_page.set_default_navigation_timeout(180_000)
    watched_page.set_default_timeout(120_000)
    return watched_page


def blocking_violations(axe, page) -> list[str]:
    """Serious and critical violations as "rule (impact): the first offending elements"."""
    settle(page, timeout=120_000)
    found = axe.run(page, options=RULES).response["violations"]
    return [
        f"{v['id']} ({v['impact']}): " + "; ".join(node["html"][:120] for node in v["nodes"][:3])
        for v in found
        if v["impact"] in BLOCKING
    ]


@pytest.mark.parametrize("size", list(SIZES))
def test_every_tab_has_no_serious_or_critical_violation(watched_page, server_url, axe, size):
    page = watched_page
    page.set_viewport_size(dict(zip(("width", "height"), SIZES[size], strict=True)))
    page.goto(server_url)
    wait_for_app(page)
    found = {}
    for label in TABS:
        if label != TABS[0]:
            show_tab(page, label)
        found[label] = blocking_violations(axe, page)
    assert found == {label: [] for label in TABS}, found
    assert page.problems == []


@pytest.mark.parametrize(
    "query",
    [f"?tour={k}" for k in range(1, len(TOUR) + 1)] + ["?present=1", "?big=true"],
)
def test_tour_steps_presenter_mode_and_large_type_have_no_serious_or_critical_violation(
    watched_page, server_url, axe, query
):
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(server_url + query)
    wait_for_app(page)
    assert blocking_violations(axe, page) == []
    assert page.problems == []


def test_slider_handles_are_named_and_read_their_shown_value(watched_page, server_url):
    """The sliders' handles had no name, and a log slider announced its log10 position ("0" for epsilon 1)."""
    page = watched_page
    page.goto(server_url)
    wait_for_app(page)
    settle(page)
    handle = page.get_by_role("slider", name="epsilon").first
    assert handle.get_attribute("aria-valuetext") == "epsilon 1"
    handle.focus()
    handle.press("ArrowRight")
    page.wait_for_function("() => new URLSearchParams(window.location.search).get('eps') !== null", timeout=60_000)
    shown = page.evaluate("() => new URLSearchParams(window.location.search).get('eps')")
    page.wait_for_function(
        "(eps) => { const all = []; const walk = (r) => r.querySelectorAll('*').forEach((e) => { all.push(e);"
        " if (e.shadowRoot) walk(e.shadowRoot); }); walk(document);"
        " return all.some((e) => e.getAttribute && e.getAttribute('aria-valuetext') === 'epsilon ' + eps); }",
        arg=shown,
        timeout=60_000,
    )
    assert page.problems == []
