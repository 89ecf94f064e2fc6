"""A quiet console: a walk over every tab, tour step and preset logs no Bokeh warning. (Plots were sent
to the browser before their data, and Bokeh warned at each layout that it could not set their ranges:
109 warnings in one walk before plots went on the page with their first data.)"""

import pytest

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
    for label in [*TABS[1:], TABS[0]]:
        show_tab(page, label)
        settle(page)
    for number in range(1, len(TOUR) + 1):
        page.goto(f"{server_url}?tour={number}", timeout=120_000)
        wait_for_app(page)
        settle(page)
    page.goto(server_url, timeout=120_000)
    wait_for_app(page)
    for name in PRESETS:
        page.locator("select").filter(has_text="Choose a scenario...").select_option(label=name)
        settle(page)
    assert not warnings, f"{len(warnings)} console warnings, e.g. {warnings[:5]}"
    assert not page.problems, page.problems
