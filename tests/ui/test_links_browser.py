"""A link reproduces the demo (issue 22): set a state, open the page's address in a new page, and
every control, the open tab, the rewind's release and the headline are the same."""

import math
import urllib.parse

import pytest
from playwright.sync_api import expect

from tests.ui.conftest import ARTIFACTS, settle, show_tab, wait_for_app, wait_for_open_tab

pytestmark = pytest.mark.ui

WAIT = 60_000

# every control's value, keyed by its kind and label; the rewind's headline and readout
CONTROLS_JS = """
() => {
  const out = {};
  for (const m of Bokeh.documents[0].all_models) {
    const kind = m.type;
    if (['Slider', 'RangeSlider', 'Select', 'Spinner', 'NumericInput', 'Toggle'].includes(kind)
        || kind.endsWith('ButtonGroup') || kind.endsWith('.Tabs')) {
      const label = kind.endsWith('.Tabs') ? 'tabs' : (m.title ?? m.label ?? (m.labels || []).join('|'));
      const value = m.value ?? m.active;
      out[kind + ':' + label] = JSON.stringify(value);
    }
    if (typeof m.text === 'string') {
      // as shown: entities decoded, tags dropped (the server sends the readout escaped, the browser raw)
      const area = document.createElement('textarea');
      area.innerHTML = m.text;
      const shown = area.value.replace(/<[^>]*>/g, '').replace(/[*]/g, '').trim();
      if (/^Release \\d+ of/.test(shown)) { out.readout = shown; }
      // the rewind's headline (the experiments tab's shows the last run, which Run, not the link, starts)
      if ((m.css_classes || []).includes('noiselab-headline') && /release|rewind/i.test(shown)) {
        out.headline = shown;
      }
    }
  }
  return out;
}
"""

# what a page shows when a wait fails: the address, the open tab, the texts and the data sizes
PAGE_STATE_JS = """
() => {
  if (!window.Bokeh || !Bokeh.documents.length) return {address: location.href, bokeh: false};
  const out = {address: location.href, texts: [], sources: {}};
  for (const m of Bokeh.documents[0].all_models) {
    if (m.type.endsWith('.Tabs')) out.tab = m.active;
    if (typeof m.text === 'string' && m.text.length > 0) out.texts.push(m.text.slice(0, 160));
    if (m.type === 'ColumnDataSource' && m.name) out.sources[m.name] = Object.values(m.data)[0]?.length;
  }
  return out;
}
"""


def test_a_link_reproduces_the_demo(browser, server_url):
    first = browser.new_page(viewport={"width": 1440, "height": 900})
    first.goto(server_url)
    wait_for_app(first)
    assert urllib.parse.urlparse(first.url).query == ""  # the defaults give a bare address
    handle = first.locator(".noUi-handle").first  # epsilon
    handle.focus()
    handle.press("End")
    first.wait_for_function("() => location.search.includes('eps=50')", timeout=WAIT)
    first.get_by_text("private check (RAT)", exact=True).first.click()
    first.wait_for_function("() => location.search.includes('stop=rat')", timeout=WAIT)
    for _ in range(3):
        first.locator(".rewind-forward button").first.click()
    first.wait_for_function("() => location.search.includes('release=4')", timeout=WAIT)
    show_tab(first, "Experiments")
    first.get_by_text("mean", exact=True).first.click()
    # a setting changed since the last run: the link says so (notrun=1), until Run makes it the run shown
    first.wait_for_function(
        "() => ['task=mean', 'tab=4', 'notrun=1'].every(k => location.search.includes(k))", timeout=WAIT
    )
    first.get_by_role("button", name="Run", exact=True).click()
    first.wait_for_function("() => !location.search.includes('notrun')", timeout=120_000)
    expect(first.get_by_role("button", name="Run", exact=True)).to_be_enabled(timeout=120_000)  # the run ended
    query = urllib.parse.parse_qs(urllib.parse.urlparse(first.url).query)
    assert query["eps"] == ["50"]  # shortest exact form: not 49.99999999999999
    assert set(query) == {"eps", "stop", "release", "tab", "task"}, query  # defaults left out
    expected = first.evaluate(CONTROLS_JS)
    assert expected["readout"].startswith("Release 4 of 120") and "headline" in expected

    second = browser.new_page(viewport={"width": 1440, "height": 900})
    problems = []
    second.on("console", lambda msg: problems.append(msg.text) if msg.type in ("error", "warning") else None)
    second.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    second.goto(first.url)
    try:
        second.wait_for_function(
            "() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].get_model_by_name('experiment-bm')"
            " && Bokeh.documents[0].get_model_by_name('experiment-bm').data.x.length > 0",
            timeout=120_000,
        )
    except Exception:  # say what the page showed instead
        second.screenshot(path=str(ARTIFACTS / "link-second-page.png"))
        shown = second.evaluate(PAGE_STATE_JS)
        raise AssertionError(
            f"the linked page's experiments never arrived; it showed {shown}; console: {problems};"
            f" server log: {server_url.log_tail()}"
        ) from None
    second.wait_for_function(
        "() => Object.values(({CONTROLS_JS})()).some(v => v.includes('Release 4 of'))".replace(
            "{CONTROLS_JS}", CONTROLS_JS
        ),
        timeout=WAIT,
    )
    got = second.evaluate(CONTROLS_JS)
    assert {k: v for k, v in got.items() if expected.get(k) != v} == {}
    assert set(got) == set(expected)
    assert second.evaluate(CONTROLS_JS) == expected
    assert urllib.parse.parse_qs(urllib.parse.urlparse(second.url).query) == query
    # Reset gives a bare address again
    second.get_by_text("Reset", exact=True).first.click()
    second.wait_for_function("() => !location.search.includes('eps=')", timeout=WAIT)
    first.close()
    second.close()


@pytest.mark.parametrize("number", [3, 5])
def test_a_tour_link_keeps_its_steps_settings_on_every_control(browser, server_url, number):
    """The browser's first address (``?tour=5``) was read as a complete state: the keys it leaves out went
    back to the defaults, so the epsilon slider said 1 while the noise view drew epsilon 10 and its
    dropout button stayed disabled. A tour link's missing keys are its step's settings."""
    from dashboard.tour import TOUR

    step = TOUR[number - 1]
    page = browser.new_page()
    page.goto(f"{server_url}?tour={number}", timeout=120_000)
    page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0", timeout=WAIT)
    page.get_by_text(f"Tour, step {number} of", exact=False).first.wait_for(timeout=WAIT)
    page.wait_for_url(lambda url: f"tour={number}" in url and "tab=" in url, timeout=WAIT)
    query = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
    assert int(query["tab"][0]) == step.tab, page.url
    for name, value in step.settings.items():
        key = {"epsilon": "eps", "delta": "delta", "users": "users"}[name]
        assert float(query[key][0]) == value, (page.url, name)
    sliders = page.evaluate(
        "() => Object.fromEntries([...Bokeh.documents[0].all_models].filter(m => m.type === 'Slider')"
        ".map(m => [m.title, m.value]))"
    )
    for name, value in step.settings.items():
        if name in ("epsilon", "delta"):
            assert sliders[name] == pytest.approx(math.log10(value)), (name, sliders)
    page.close()


def _snapshot(page) -> dict:
    """What the page shows: every control's value, the open tab, the rewind's readout and headline."""
    page.wait_for_function(
        "() => Object.values(({CONTROLS_JS})()).some(v => /Release \\d+ of/.test(v))".replace(
            "{CONTROLS_JS}", CONTROLS_JS
        ),
        timeout=WAIT,
    )
    wait_for_open_tab(page)
    return page.evaluate(CONTROLS_JS)


def test_back_and_forward_show_the_view_their_address_names(browser, server_url):
    """Back and Forward changed the address but not the page (issue 43: after a tab, a slider and another
    tab, Back read ``?eps=...&tab=1`` over the RAT tab). A walk of 10 navigations: after each Back or
    Forward the page equals a fresh page opened at the address it shows."""
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(server_url)
    wait_for_app(page)
    addresses = [page.url]

    def act(do, expect_in_query, gone=None):
        do()
        page.wait_for_function(f"() => location.search.includes('{expect_in_query}')", timeout=WAIT)
        if gone:
            page.wait_for_function(f"() => !location.search.includes('{gone}')", timeout=WAIT)
        settle(page)  # what the page writes late is in the address before the next press
        addresses.append(page.url)

    act(lambda: show_tab(page, "Privacy boundaries"), "tab=1")
    handle = page.locator(".noUi-handle").first  # epsilon
    act(lambda: (handle.focus(), handle.press("End")), "eps=50")
    act(lambda: show_tab(page, "RAT stopping"), "tab=3")
    act(lambda: show_tab(page, "Low-privacy noise"), "tab=2")
    act(lambda: show_tab(page, "Brownian rewind"), "eps=50", gone="tab=")  # tab 0: no tab key
    act(lambda: page.locator(".rewind-forward button").first.click(), "release=2")
    fresh = browser.new_page(viewport={"width": 1440, "height": 900})
    walk = [
        ("back", 5),
        ("back", 4),
        ("back", 3),
        ("back", 2),
        ("back", 1),
        ("forward", 2),
        ("forward", 3),
        ("back", 2),
        ("forward", 3),
        ("forward", 4),
        ("forward", 5),
        ("forward", 6),
    ]
    assert len(walk) >= 10
    for move, index in walk:
        with page.expect_navigation(wait_until="load", timeout=WAIT):
            page.go_back() if move == "back" else page.go_forward()
        wait_for_app(page)
        assert page.url == addresses[index], (move, page.url, addresses[index])
        shown = _snapshot(page)
        fresh.goto(page.url)
        wait_for_app(fresh)
        assert shown == _snapshot(fresh), (move, page.url)
    fresh.close()
    page.close()
