"""What a link, a file or a websocket message brings is shown as text and never runs; an upload of any
size ends in a result or a message, and the session keeps answering."""

import base64
import signal
import subprocess
import sys
import urllib.parse

import pytest
from playwright.sync_api import expect

from dashboard.uploads import MAX_UPLOAD_BYTES
from tests.conftest import free_port
from tests.ui.conftest import _WALK, wait_for_app

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


# --- maths and Markdown from outside (issue 44) --------------------------------------------------

# each would become a live javascript: link if typeset (MathJax's \href) or rendered as Markdown
TEX_PAYLOADS = [
    r"\(\href{javascript:window.__xss=11}{Click to continue}\)",
    r"$$\href{javascript:window.__xss=12}{open}$$",
    r"\[\href{javascript:window.__xss=13}{open}\]",
    r"$\href{javascript:window.__xss=14}{open}$",
    r"\(\url{javascript:window.__xss=15}\)",
    "[x](javascript:window.__xss=16)",
    "<javascript:window.__xss=17>",
]

# every link on the page, through Panel's shadow roots
LINKS_AND_MATHS_JS = (
    "() => {"
    + _WALK
    + """
  return {links: all.filter((e) => e.tagName === 'A').map((e) => e.getAttribute('href') || '')};
}"""
)


# a click on a link that would leave the page (http, a path, a query, an anchor) is held back, so the
# page stays to be checked; any other link (javascript:, data:) is clicked through
_KEEP_PAGE = """
  if (!window.__keepPage) {
    window.__keepPage = true;
    window.addEventListener('click', (event) => {
      const link = event.composedPath().find((node) => node.tagName === 'A');
      const href = link ? (link.getAttribute('href') || '').trim() : '';
      if (link && /^(https?:|mailto:|[/?#.]|[^:]*$)/i.test(href)) event.preventDefault();
    }, true);
  }
"""


def click_every_link(page):
    """Click each link of the page (in its shadow root too) that is not the page's own navigation; none
    may run script. Returns the hrefs found."""
    found = page.evaluate(LINKS_AND_MATHS_JS)
    assert not [h for h in found["links"] if h.strip().lower().startswith(("javascript", "data", "vbscript"))]
    page.evaluate("() => {" + _KEEP_PAGE + _WALK + " all.filter((e) => e.tagName === 'A').forEach((e) => e.click()); }")
    no_script_ran(page)
    return found


def formulas_only(page):
    """Typeset maths appears only inside the app's own formula panes (LaTeX panes)."""
    count = page.evaluate(
        "() => {" + _WALK + " return all.filter((e) => e.tagName.toLowerCase().startsWith('mjx-')).length; }"
    )
    assert count == 0


@pytest.mark.parametrize("payload", TEX_PAYLOADS)
def test_maths_and_markdown_links_in_an_address_are_shown_as_text(watched_page, server_url, payload):
    """A link could plant a script: the notice escaped HTML, then typeset ``\\href{javascript:...}``."""
    page = watched_page
    page.goto(server_url + "?" + urllib.parse.urlencode({payload: "1", "seed": payload}))
    wait_for_app(page)
    notice = page.get_by_text("Ignored from the page address", exact=False).first
    notice.wait_for(timeout=30_000)
    text = notice.inner_text()
    assert payload[:40] in text  # shown as the characters it holds
    click_every_link(page)
    formulas_only(page)
    slider_answers(page)
    assert page.problems == []


def test_maths_and_markdown_links_in_file_names_headers_and_cells_are_shown_as_text(watched_page, server_url, tmp_path):
    page = watched_page
    open_experiments(page, server_url)
    rows = "\n".join(f"{(i % 7) / 7:.3f},{i % 2}" for i in range(100))
    for k, payload in enumerate(TEX_PAYLOADS):
        name = payload.replace("/", "_") + ".csv"  # a file name holds no slash
        path = tmp_path / f"{k}" / name
        path.parent.mkdir()
        path.write_text(f"x1,label\n{rows}\n")
        page.locator("input[type=file]").set_input_files(str(path))
        expect(page.get_by_text(name[:30], exact=False).first).to_be_visible(timeout=60_000)
        click_every_link(page)
    header = tmp_path / "header.csv"
    header.write_text(f"{TEX_PAYLOADS[0].replace(',', ' ')},label\n{rows}\n")
    page.locator("input[type=file]").set_input_files(str(header))
    expect(page.get_by_text("header.csv", exact=False).first).to_be_visible(timeout=60_000)
    cell = tmp_path / "cell.csv"
    cell.write_text(f"x1,label\n{TEX_PAYLOADS[1]},1\n{rows}\n")
    page.locator("input[type=file]").set_input_files(str(cell))
    expect(page.get_by_text("is not a number", exact=False).first).to_be_visible(timeout=60_000)
    click_every_link(page)
    formulas_only(page)
    slider_answers(page)
    assert page.problems == []


# --- the server keeps serving (issue 44) ---------------------------------------------------------


def test_the_stop_request_from_another_sites_page_leaves_the_lab_answering(watched_page, server_url, tmp_path):
    """``<img src=".../components/venv.__main__/a/b/c">`` on any site stopped the server."""
    import http.server
    import threading

    page = watched_page
    (tmp_path / "index.html").write_text(
        f'<html><body><img id="a" src="{server_url}components/venv.__main__/a/b/c">'
        f'<img id="b" src="{server_url}components/antigravity/a/b/c"></body></html>'
    )

    (tmp_path / "favicon.ico").write_bytes(b"")  # that page's own icon request is answered

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, *args):
            pass

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=other.serve_forever, daemon=True)
    thread.start()
    try:
        page.goto(f"http://localhost:{other.server_address[1]}/index.html")
        page.wait_for_function("() => ['a', 'b'].every((id) => document.getElementById(id).complete)")
    finally:
        other.shutdown()
        other.server_close()
    page.problems.clear()  # the two images' 404s are that page's problem, not the lab's
    page.goto(server_url)
    wait_for_app(page)
    slider_answers(page)
    assert page.problems == []
    assert "usage: venv" not in server_url.log_tail(20_000)


def test_crafted_widget_values_are_refused_with_one_log_line_each(watched_page, server_url):
    """Values no widget accepts, set from script as a crafted client would, wrote full tracebacks
    (885 for about 2,200 values); each is now one line, and the session answers."""
    page = watched_page
    page.goto(server_url)
    wait_for_app(page)
    before = server_url.log_tail(10**7).count("refused a value a browser sent")
    sent = page.evaluate(
        """() => { let sent = 0;
      for (const m of Bokeh.documents[0].all_models) {
        const kind = m.type || m.constructor.__name__;
        if (!/Slider|Select/.test(kind) || !m.properties || !('value' in m.properties)) continue;
        for (const bad of ['abc', [1, 2, 3], {a: 1}]) {
          try { m.setv({value: bad}); sent += 1; } catch (e) { /* refused in the browser */ }
        }
      }
      return sent; }"""
    )
    assert sent >= 6
    page.reload()
    wait_for_app(page)
    slider_answers(page)
    for _ in range(100):  # the old page's messages were sent before the reload: polled, not waited for
        log = server_url.log_tail(10**7)
        lines = log.count("refused a value a browser sent") - before
        if lines:
            break
        page.wait_for_timeout(100)
    assert 1 <= lines <= sent and "Traceback" not in log
    page.problems.clear()  # the browser logs its own view of the refused values


@pytest.fixture
def own_server(tmp_path):
    """A server of this test's own (it is stopped under an open page)."""
    from tests.ui.conftest import _stop, _wait_http

    port = free_port()
    log = open(tmp_path / "serve.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dashboard.serve", "--port", str(port)], stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        _wait_http(url, proc)
        yield url, proc
    finally:
        _stop(proc)
        log.close()


def test_a_lost_connection_is_shown_with_a_reload(watched_page, own_server):
    """A page whose server died kept moving its sliders over stale plots, with no sign of it."""
    page = watched_page
    url, proc = own_server
    page.goto(url)
    wait_for_app(page)
    assert page.locator("#noiselab-connection-lost").count() == 0
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    banner = page.locator("#noiselab-connection-lost")
    expect(banner).to_be_visible(timeout=10_000)
    expect(banner).to_have_attribute("role", "alert")
    assert "connection to the lab's server was lost" in banner.inner_text()
    expect(banner.get_by_role("button", name="Reload the page")).to_be_focused()
    page.problems.clear()  # the browser reports the closed websocket
