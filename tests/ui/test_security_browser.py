"""What a link, a file or a websocket message brings is shown as text and never runs; an upload of any
size ends in a result or a message, and the session keeps answering."""

import base64
import urllib.parse

import pytest
from playwright.sync_api import expect

from dashboard.uploads import MAX_UPLOAD_BYTES
from tests.ui.conftest import wait_for_app

pytestmark = pytest.mark.ui

PAYLOAD = '<img src=x onerror="window.__xss=1">'
SVG = '<svg onload="window.__xss=1"></svg>'


@pytest.fixture
def watched_page(watched_page):
    """The shared page, patient with a loaded machine (two cores shared with other work)."""
    watched_page.set_default_navigation_timeout(180_000)
    watched_page.set_default_timeout(120_000)
    return watched_page


def no_script_ran(page):
    assert page.evaluate("() => window.__xss") is None


def open_experiments(page, server_url):
    page.goto(server_url)
    wait_for_app(page)
    page.get_by_text("Experiments", exact=True).first.click()
    page.wait_for_function(
        "() => { const m = Bokeh.documents[0].get_model_by_name('experiment-bm'); return m && m.data.x.length > 0; }",
        timeout=120_000,
    )


def slider_answers(page):
    """The epsilon slider moves and the server answers: it rewrites the page address."""
    before = page.evaluate("() => new URLSearchParams(window.location.search).get('eps')")
    handle = page.locator(".noUi-handle").first
    handle.focus()
    handle.press("ArrowRight")
    page.wait_for_function(
        "(before) => new URLSearchParams(window.location.search).get('eps') !== before", arg=before, timeout=60_000
    )


@pytest.mark.parametrize(
    "query",
    [
        {"a`" + PAYLOAD: "1"},  # the audit's link: a backtick in the key closed the code span
        {"stop": PAYLOAD, "eps": "2"},
        {PAYLOAD: SVG, "seed": "x" + SVG},
        {"eps": "true", "seed": "9" * 5000, "rho": "[" * 3000, "d": "[[1]]"},
    ],
)
def test_links_with_script_in_keys_and_values_run_nothing(watched_page, server_url, query):
    page = watched_page
    page.goto(server_url + "?" + urllib.parse.urlencode(query))
    wait_for_app(page)
    notice = page.get_by_text("Ignored from the page address", exact=False).first
    notice.wait_for(timeout=30_000)
    text = notice.inner_text()
    for key in query:
        if key != "eps" or query[key] == "true":
            assert key[:40] in text
    no_script_ran(page)
    assert page.locator("img[src=x], svg[onload]").count() == 0
    slider_answers(page)  # the values named were ignored, not applied: the session works
    assert page.problems == []


def test_files_with_script_in_name_header_and_cells_run_nothing(watched_page, server_url, tmp_path):
    page = watched_page
    open_experiments(page, server_url)
    rows = "\n".join(f"{(i % 7) / 7:.3f},{i % 2}" for i in range(100))
    cases = [
        (PAYLOAD + ".csv", f"x1,label\n{rows}\n", PAYLOAD + ".csv"),  # the file name
        ("header.csv", f"{PAYLOAD},label\n{rows}\n", "header.csv"),  # a column name
        ("cell.csv", f"x1,label\n1,{PAYLOAD}\n{rows}\n", f"'{PAYLOAD[:30]}' is not a number"),  # a cell
    ]
    for name, content, shown in cases:
        path = tmp_path / name
        path.write_text(content)
        page.locator("input[type=file]").set_input_files(str(path))
        expect(page.get_by_text(shown, exact=False).first).to_be_visible(timeout=60_000)
        no_script_ran(page)
    # the header's column is offered as a target, as text
    page.locator("input[type=file]").set_input_files(str(tmp_path / "header.csv"))
    expect(page.get_by_text("header.csv", exact=False).first).to_be_visible(timeout=60_000)
    assert PAYLOAD in page.locator("select").filter(has_text="label").first.inner_text()
    # a websocket message written by hand (the file input's model set from script, as a crafted
    # client would): its name and column reach the status as text
    content = base64.b64encode(f"{SVG},label\n{rows}\n".encode()).decode()
    page.evaluate(
        """([content, name]) => {
          const input = Bokeh.documents[0].all_models.values().find((m) => m.type === 'FileInput' ||
            (m.constructor && m.constructor.__name__ === 'FileInput'));
          input.setv({value: content, filename: name, mime_type: 'text/csv'});
        }""",
        [content, SVG],
    )
    expect(page.get_by_text(SVG + ": 2 columns", exact=False).first).to_be_visible(timeout=60_000)
    no_script_ran(page)
    assert page.locator("img[src=x], svg[onload]").count() == 0
    slider_answers(page)
    assert page.problems == []


def numeric_csv(path, size):
    """A valid table within 33 bytes under ``size`` (a header, then rows of two numbers and a 0/1 label)."""
    header, rows = b"x1,x2,label\n", b"0.1234,-0.5678,1\n0.4321,0.8765,0\n"
    path.write_bytes(header + rows * max(1, (size - len(header)) // len(rows)))
    return path.stat().st_size


@pytest.mark.parametrize(
    ("size", "accepted"),
    [
        (1_000, True),
        (13_000_000, True),
        (MAX_UPLOAD_BYTES - 1_000, True),
        (MAX_UPLOAD_BYTES + 1_000, False),
        (30_000_000, False),
    ],
)
def test_uploads_of_any_size_end_in_a_result_or_a_message(watched_page, server_url, tmp_path, size, accepted):
    """Files of 16 MB or more once closed the websocket silently (one base64 message over Bokeh's
    limit): the page looked normal and nothing answered."""
    page = watched_page
    open_experiments(page, server_url)
    path = tmp_path / "table.csv"
    written = numeric_csv(path, size)
    assert written <= MAX_UPLOAD_BYTES if accepted else written > MAX_UPLOAD_BYTES
    page.locator("input[type=file]").set_input_files(str(path))
    if accepted:
        expect(page.get_by_text("table.csv: 3 columns. Choose the target column").first).to_be_visible(timeout=180_000)
    else:
        expect(page.get_by_text("files up to 15.0 MB are accepted. It was not sent.").first).to_be_visible(
            timeout=60_000
        )
    slider_answers(page)  # the session lives
    assert page.problems == []
