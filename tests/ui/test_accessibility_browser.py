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


# the element that has the keyboard, through shadow roots: "TAG name-or-text"
FOCUSED_JS = """() => {
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) { a = a.shadowRoot.activeElement; }
  if (!a) { return ''; }
  return a.tagName + ' ' + (a.getAttribute('aria-label') || a.textContent || '').trim().slice(0, 60);
}"""


def tab_to(page, wanted: str, back: bool = False, limit: int = 90) -> int:
    """Press Tab (Shift+Tab with ``back``) until the focused control's name contains ``wanted``; the
    number of presses. Fails naming the controls passed when it never gets there."""
    passed = []
    for presses in range(1, limit + 1):
        page.keyboard.press("Shift+Tab" if back else "Tab")
        focused = page.evaluate(FOCUSED_JS)
        if wanted in focused:
            return presses
        passed.append(focused)
    raise AssertionError(f"{wanted!r} not reached in {limit} presses; passed: {passed}")


def query(page) -> dict:
    return page.evaluate("() => Object.fromEntries(new URLSearchParams(location.search))")


def test_the_main_demo_runs_from_the_keyboard_alone(watched_page, server_url):
    """Issue 40's keyboard walk: tab to epsilon, Page Up (a decade: 1 to 10), Play, Pause, Jump to the
    stop, open another tab, Reset, with no mouse. The tab bar comes before the open tab's content (Bokeh
    put it after), and an arrow on a log slider moves one shown step."""
    page = watched_page
    page.goto(server_url)
    wait_for_app(page)
    settle(page)
    steps = {"epsilon": tab_to(page, "epsilon")}
    page.keyboard.press("PageUp")
    page.wait_for_function("() => new URLSearchParams(location.search).get('eps') === '10'", timeout=60_000)
    page.keyboard.press("ArrowLeft")  # one shown step: 9.77 (0.01 of a decade)
    page.wait_for_function("() => new URLSearchParams(location.search).get('eps') === '9.77'", timeout=60_000)
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => new URLSearchParams(location.search).get('eps') === '10'", timeout=60_000)
    settle(page)
    steps["the tab bar"] = tab_to(page, "Brownian rewind")
    steps["Play"] = tab_to(page, "Play towards less noise")
    page.keyboard.press("Enter")
    page.wait_for_function("() => Number(new URLSearchParams(location.search).get('release')) > 1", timeout=60_000)
    steps["Pause"] = tab_to(page, "Pause")
    page.keyboard.press("Enter")
    page.wait_for_timeout(1500)  # the last frame shown reaches the server and the address
    paused = query(page).get("release")
    page.wait_for_timeout(1500)
    assert query(page).get("release") == paused  # paused: the release stays
    steps["Jump to the stop"] = tab_to(page, "Jump to the stop")
    page.keyboard.press("Enter")
    stop = page.evaluate("() => Bokeh.documents[0].get_model_by_name('rewind-stop').data.k[0]")  # a frame index
    page.wait_for_function(
        "(k) => (new URLSearchParams(location.search).get('release') || '1') === String(k + 1)",
        arg=stop,
        timeout=60_000,
    )
    steps["Privacy boundaries (back)"] = tab_to(page, "Privacy boundaries", back=True)
    page.keyboard.press("Enter")
    page.wait_for_function("() => new URLSearchParams(location.search).get('tab') === '1'", timeout=60_000)
    page.keyboard.press("Home")  # the first tab
    page.wait_for_function("() => !location.search.includes('tab=')", timeout=60_000)
    page.keyboard.press("ArrowRight")  # the next one
    page.wait_for_function("() => new URLSearchParams(location.search).get('tab') === '1'", timeout=60_000)
    steps["Reset (back)"] = tab_to(page, "Reset", back=True)
    page.keyboard.press("Enter")
    page.wait_for_function("() => !location.search.includes('eps=')", timeout=60_000)
    assert query(page) == {"tab": "1"}  # Reset restores the demo; the open tab stays
    print("key presses to reach each control:", steps)
    assert page.problems == []


def png_text_chunks(data: bytes) -> dict:
    """A PNG's iTXt/tEXt chunks, each chunk's CRC checked (an independent reader: zlib's CRC-32)."""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    found, offset = {}, 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        if kind == b"iTXt":
            keyword, rest = body.split(b"\0", 1)
            text = rest[2:].split(b"\0", 2)[2]  # flag, method, language tag, translated keyword
            found[keyword.decode("latin-1")] = text.decode("utf-8")
        offset += 12 + length
        if kind == b"IEND":
            break
    return found


def test_a_saved_png_carries_the_plots_title_and_description(watched_page, server_url):
    """The save button of "privacy per release" downloads a PNG whose Title is the plot's title and whose
    Description is what a screen reader hears for the plot (read here from the page's own description)."""
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(server_url)
    wait_for_app(page)
    settle(page)
    descriptions = page.locator(".noiselab-description")
    words = [descriptions.nth(i).inner_text() for i in range(descriptions.count())]
    privacy = next(w for w in words if w.startswith("Plot: privacy per release."))
    assert "Headline: " in privacy
    buttons = page.locator('[title="Save as PNG (with the plot\'s title and description)"]')
    assert buttons.count() == 3  # one for each plot of the first tab
    with page.expect_download() as download:
        buttons.nth(1).click()
    path = download.value.path()
    chunks = png_text_chunks(path.read_bytes())
    assert download.value.suggested_filename.startswith("noiselab-brownian-rewind-privacy-per-release-eps1")
    assert chunks["Title"] == "privacy per release"
    assert chunks["Description"] == privacy
    assert chunks["Software"].startswith("noiselab ")


def test_a_plots_data_table_opens_from_the_keyboard_and_passes_axe(watched_page, server_url, axe):
    """The table toggle under a plot is a button (Enter opens it); the table is a focusable scrolling
    region with a caption and column headers, and the page stays free of serious violations."""
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(server_url)
    wait_for_app(page)
    settle(page)
    toggle = page.get_by_role("button", name="Data table: privacy per release")
    toggle.focus()
    page.keyboard.press("Enter")
    region = page.get_by_role("region", name="Data table: privacy per release")
    region.wait_for()
    caption = region.locator("caption").first
    assert caption.inner_text().startswith("privacy per release")
    assert caption.bounding_box()["y"] < region.locator("tbody tr").first.bounding_box()["y"]  # above its rows
    assert region.locator("th").first.inner_text() == "release n"
    assert region.locator("tbody tr").count() >= 100
    assert blocking_violations(axe, page) == []


def test_landmarks_and_the_level_one_heading(watched_page, server_url, axe):
    """axe-core's best-practice landmark rules (moderate, outside WCAG's AA set): the page has one main
    landmark, a level-one heading (its title), and every part of it inside a landmark."""
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(server_url)
    wait_for_app(page)
    settle(page, timeout=120_000)
    options = {"runOnly": {"type": "rule", "values": ["landmark-one-main", "page-has-heading-one", "region"]}}
    found = axe.run(page, options=options).response["violations"]
    assert [v["id"] for v in found] == []
    assert page.get_by_role("heading", level=1).inner_text().strip() == "noiselab: differential-privacy noise, exactly"
    assert page.get_by_role("main").count() == 1
    assert page.get_by_role("complementary", name="Settings").count() == 1
