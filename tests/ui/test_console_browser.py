"""A quiet console: a walk over every tab, tour step and preset logs no Bokeh warning; the walk also
checks that the tour steps through its tabs with Next and that a link opens a step. (Plots were sent
to the browser before their data, and Bokeh warned at each layout that it could not set their ranges:
109 warnings in one walk before plots went on the page with their first data.)"""

import pytest
from playwright.sync_api import expect

from dashboard.tour import PRESETS, TABS, TOUR
from tests.ui.conftest import settle, show_tab, wait_for_app

pytestmark = pytest.mark.ui


def test_a_walk_over_every_tab_tour_step_and_preset_logs_no_warning(watched_page, server_url):
    page = watched_page
    warnings = []
    page.on("console", lambda msg: warnings.append(f"{page.url}: {msg.text}") if msg.type == "warning" else None)
    page.goto(server_url, timeout=120_000)
    wait_for_app(page)
    settle(page)
    # the tour, step by step: Next is pressed before the step's tab has settled, as a hurried presenter
    # would; the server answers after building that tab (seconds each on a loaded machine), hence the
    # long waits. Then a link to step 5 (the noise tab).
    page.get_by_text("Start the guided tour", exact=True).click()
    for k, step in enumerate(TOUR, start=1):
        page.get_by_text(f"step {k} of {len(TOUR)}", exact=False).first.wait_for(timeout=60_000)
        expect(page.locator(".bk-tab.bk-active").first).to_have_text(TABS[step.tab], timeout=60_000)
        if k < len(TOUR):
            page.get_by_text("Next \u25b6", exact=True).filter(visible=True).first.click()
    settle(page, timeout=120_000)  # the last steps' tabs compute on a pool the warm-up may still fill
    page.goto(f"{server_url}?tour=5", timeout=120_000)
    page.get_by_text(f"step 5 of {len(TOUR)}", exact=False).first.wait_for(timeout=60_000)
    page.get_by_text("At epsilon = 10 the Arete", exact=False).first.wait_for(timeout=30_000)
    settle(page)
    page.goto(server_url, timeout=120_000)
    wait_for_app(page)
    for label in [*TABS[1:], TABS[0]]:
        show_tab(page, label)
        settle(page)
    for name in PRESETS:
        page.locator("select").filter(has_text="Choose a scenario...").select_option(label=name)
        settle(page)
    # addresses opened directly: the plane first (it logged three warnings) and a link to every tab
    for query in ["?d=2", "?d=2&stop=peek&seed=2", *(f"?tab={k}" for k in range(len(TABS)))]:
        page.goto(server_url + query, timeout=120_000)
        wait_for_app(page)
        settle(page, timeout=120_000)
    assert not warnings, f"{len(warnings)} console warnings, e.g. {warnings[:5]}"
    assert not page.problems, page.problems


def test_a_failed_request_is_a_problem_but_one_cut_short_by_leaving_the_page_is_not(watched_page, server_url):
    """The browser tests count every failed request as a problem, except one the browser aborted because the
    page went to another address after it started (a spinner image requested just before ``page.goto``)."""
    page = watched_page
    held, every_failure = [], []
    page.on("requestfailed", lambda req: every_failure.append((req.url, req.failure)))
    page.route("**/held-asset.svg", lambda route: held.append(route))  # never answered: pending until left
    page.route("**/refused-asset.svg", lambda route: route.abort("connectionrefused"))
    page.goto(server_url)
    wait_for_app(page)
    page.evaluate("() => { new Image().src = '/refused-asset.svg'; new Image().src = '/held-asset.svg'; }")
    deadline = 50
    while not held and deadline:
        page.wait_for_timeout(100)
        deadline -= 1
    assert held, "the held request never started"
    page.goto(f"{server_url}?tab=1")
    wait_for_app(page)
    refused = [p for p in page.problems if "refused-asset" in p]
    assert len(refused) == 1 and "ERR_CONNECTION_REFUSED" in refused[0], page.problems
    assert not [p for p in page.problems if "held-asset" in p], page.problems
    page.wait_for_timeout(200)
    assert any("held-asset" in url and failure == "net::ERR_ABORTED" for url, failure in every_failure), every_failure
