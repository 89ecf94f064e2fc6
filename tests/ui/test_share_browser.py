"""Share: the QR code a room scans opens the same view.

The code is read back from a screenshot of the page by ZXing (``zxing-cpp``, an independent decoder: the
code is made by ``segno``); the decoded address is opened in a new page, which shows the same headline,
tab and release. The terms in a headline explain themselves on focus (a tap on a phone).
"""

import io
import re

import numpy as np
import pytest
import zxingcpp
from PIL import Image

from tests.ui.conftest import ARTIFACTS, show_tab, wait_for_app

pytestmark = pytest.mark.ui

WAIT = 60_000


def deep_headline(page, contains: str) -> str:
    """The open tab's headline text (Playwright's CSS locators reach into the panes' shadow roots)."""
    headline = page.locator("h5", has_text=contains).locator("visible=true").first
    headline.wait_for(timeout=WAIT)
    return headline.text_content().strip()


def decode(png: bytes) -> str:
    image = np.asarray(Image.open(io.BytesIO(png)).convert("L"))
    results = zxingcpp.read_barcodes(image)
    assert len(results) == 1, f"{len(results)} codes found"
    return results[0].text


@pytest.mark.parametrize(
    ("query", "tab", "needle"),
    [("?eps=2&seed=3&release=40", None, "Release"), ("?eps=10", "Low-privacy noise", "has expected error")],
)
def test_the_qr_code_opens_the_same_view(watched_page, server_url, query, tab, needle):
    page = watched_page
    page.set_viewport_size({"width": 1024, "height": 768})
    page.goto(server_url + query)
    wait_for_app(page)
    if tab:
        show_tab(page, tab)
    headline = deep_headline(page, needle)
    page.get_by_role("button", name=re.compile(r"^Share")).click()  # "Share" in presenter mode
    code = page.locator(".noiselab-qr svg").first
    code.wait_for(timeout=WAIT)
    page.wait_for_timeout(300)
    png = code.screenshot()
    (ARTIFACTS / "share-qr.png").write_bytes(png)
    address = decode(png)
    assert address == page.evaluate("() => location.href"), address
    shown = page.locator(".noiselab-share input").first.input_value()
    assert shown == address
    # the code is as large as the screen allows: 70% of a projector's height, and wholly on it
    box = code.bounding_box()
    assert 0.65 * 768 <= box["height"] <= 0.75 * 768 and box["width"] == pytest.approx(box["height"], abs=2), box
    other = page.context.new_page()
    other.set_viewport_size({"width": 1024, "height": 768})
    other.goto(address)
    wait_for_app(other)
    assert deep_headline(other, needle) == headline
    assert other.evaluate("() => location.href") == address
    other.close()
    assert page.problems == []


def test_the_qr_code_follows_the_view_while_it_is_shown_and_in_presenter_mode(watched_page, server_url):
    page = watched_page
    page.set_viewport_size({"width": 1024, "height": 768})
    page.goto(server_url + "?present=1")
    wait_for_app(page)
    page.get_by_role("button", name=re.compile(r"^Share")).click()  # "Share" in presenter mode
    code = page.locator(".noiselab-qr svg").first
    code.wait_for(timeout=WAIT)
    first = decode(code.screenshot())
    assert "present=1" in first
    page.get_by_role("button", name="\u2605 To the stop").click()  # presenter mode's short label: jump to the stop
    page.wait_for_function("() => location.search.includes('release=57')", timeout=WAIT)
    page.wait_for_function(
        "(before) => document.querySelector('body') && location.href !== before", arg=first, timeout=WAIT
    )
    page.wait_for_timeout(800)
    assert decode(code.screenshot()) == page.evaluate("() => location.href")
    page.get_by_role("button", name="Close").click()
    assert page.problems == []


def test_a_term_explains_itself_on_focus(watched_page, server_url):
    """Keyboard focus (a tap on a phone) on a marked term shows its explanation below it."""
    page = watched_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(server_url)
    wait_for_app(page)
    deep_headline(page, "whose interval leaves out")
    term = page.locator(".noiselab-headline .noiselab-term").first
    term.focus()
    content = term.evaluate("(el) => getComputedStyle(el, '::after').content")
    assert "privacy boundary" in content or "f(x)" in content, content
    assert term.get_attribute("title") == term.get_attribute("data-gloss")
    assert page.problems == []
