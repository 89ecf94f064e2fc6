"""Tier 3: the served app in Debian's headless Chromium, driven by Playwright."""

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from dashboard.views import BoundaryView, ExperimentsView, NoiseView, RatView, RewindView
from tests.conftest import free_port

# screenshots the browser tests take (what a person would look at); the committed ones in assets/ are
# made on purpose, never by a test run
ARTIFACTS = Path(os.environ.get("NOISELAB_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts"))
ARTIFACTS.mkdir(parents=True, exist_ok=True)


def _wait_http(url, proc, timeout=120):
    """Wait until ``url`` answers 200; False if the server process ended first (its port was taken)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url, timeout=30) as resp:  # a busy machine builds a page slowly
                if resp.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.2)  # polling interval of a condition, not a wait for time to pass
    raise RuntimeError(f"server at {url} did not answer within {timeout} s")


def _stop(proc):
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class ServerURL(str):
    """The served app's address, with the path of the server's log (for a failing test's report)."""

    def __new__(cls, url, log_path):
        made = super().__new__(cls, url)
        made.log_path = log_path
        return made

    def log_tail(self, chars=3000) -> str:
        return self.log_path.read_text()[-chars:]


@pytest.fixture(scope="session")
def server_url(tmp_path_factory):
    """Serve the app with the README's command on a free port; stop it afterwards. Session-scoped, so
    each pytest-xdist worker runs its own server, on its own port (another process may take a free
    port between the check and the bind: the server then exits, and a fresh port is tried)."""
    folder = tmp_path_factory.mktemp("server")
    for attempt in range(3):
        port = free_port()
        log_path = folder / f"serve-{attempt}.log"
        with open(log_path, "w") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "dashboard.serve", "--port", str(port)], stdout=log, stderr=subprocess.STDOUT
            )
        url = f"http://127.0.0.1:{port}/"
        try:
            if _wait_http(url, proc):
                break
        except BaseException:
            _stop(proc)
            raise
    else:
        raise RuntimeError(f"the server exited at start three times:\n{log_path.read_text()[-3000:]}")
    try:
        yield ServerURL(url, log_path)
    finally:
        _stop(proc)
        text = log_path.read_text()
        assert "Traceback" not in text and "ERROR" not in text, f"server logged errors:\n{text[-3000:]}"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail("Debian's chromium is required for the browser tests (apt-get install chromium)")
    return {
        **browser_type_launch_args,
        "executable_path": chromium,
        "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
    }


@pytest.fixture
def watched_page(page):
    """A page that records console errors and failed requests (``problems``) and every console message
    (``console``, shown with the server's log in a failing test's report)."""
    problems, console = [], []

    def on_console(msg):
        console.append(f"{msg.type}: {msg.text}")
        if msg.type == "error":
            problems.append(f"console: {msg.text}")

    # a request the browser aborted because the page went to another address (page.goto, Back) after it
    # started is not a failure; any other failed request is
    navigations = {"count": 0}
    started = {}

    def on_request(req):
        if req.is_navigation_request() and req.frame == page.main_frame:
            navigations["count"] += 1
        started[req] = navigations["count"]

    def on_failed(req):
        left = started.pop(req, navigations["count"]) != navigations["count"]
        if not (left and req.failure == "net::ERR_ABORTED"):
            problems.append(f"failed: {req.url} ({req.failure})")

    page.on("console", on_console)
    page.on("request", on_request)
    page.on("requestfinished", lambda req: started.pop(req, None))
    page.on("requestfailed", on_failed)
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.problems, page.console = problems, console
    return page


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing browser test reports the page's console and the tail of the server's log."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    page, server = item.funcargs.get("watched_page"), item.funcargs.get("server_url")
    if page is not None:
        report.sections.append(("browser console", "\n".join(page.console[-80:]) or "(nothing)"))
        shot = ARTIFACTS / f"failed-{re.sub(r'[^A-Za-z0-9_.-]+', '_', item.name)[:120]}.png"
        try:
            page.screenshot(path=str(shot), timeout=10_000)
            report.sections.append(("screenshot", str(shot)))
        except Exception as exc:  # a closed or hung page: the report goes on without it
            report.sections.append(("screenshot", f"none ({str(exc)[:200]})"))
    if isinstance(server, ServerURL):
        report.sections.append(("server log", server.log_tail()))


def bokeh_value(page, name, column, index=0):
    return page.evaluate(
        "([name, column, index]) => { const doc = Bokeh.documents[0]; const m = doc.get_model_by_name(name);"
        " return Number(m.data[column][index]); }",
        [name, column, index],
    )


def wait_for_app(page):
    page.wait_for_function(
        "() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].get_model_by_name('rewind-now') "
        "&& Bokeh.documents[0].get_model_by_name('rewind-now').data.t.length > 0",
        timeout=30_000,
    )


TAB_MODELS = {
    "Privacy boundaries": ("boundary-psi", "t"),
    "Brownian rewind": ("rewind-now", "t"),
    "Experiments": ("experiment-bm", "x"),
}
VIEW_TITLES = {
    "Brownian rewind": RewindView.title,
    "Privacy boundaries": BoundaryView.title,
    "Low-privacy noise": NoiseView.title,
    "RAT stopping": RatView.title,
    "Experiments": ExperimentsView.title,
}

# Every element of the page, through Panel's shadow roots.
_WALK = """
  const all = [];
  const walk = (root) => root.querySelectorAll('*').forEach((e) => {
    all.push(e);
    if (e.shadowRoot) walk(e.shadowRoot);
  });
  walk(document);
"""

# the loading spinners on screen: hidden tabs keep their boxes (visibility: hidden), and a spinner left on
# one, whose result waits for its tab to be shown, is not on screen
_SPINNERS_ON_SCREEN = """
  const spinners = all.filter((e) => e.classList.contains('pn-loading') && e.getBoundingClientRect().width > 0
    && e.checkVisibility({checkVisibilityCSS: true}));
"""

# True once the page has settled: every Bokeh document has rendered its roots, the fonts have loaded, no
# loading spinner shows on screen, and the boxes of the canvases, buttons and titles are the same over 10 polls
# (animation frames) in a row. ``token`` restarts the count for each wait.
SETTLED_JS = (
    """(token) => {
  if (!(window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents.every((d) => d.is_idle))) return false;
  if (document.fonts.status !== 'loaded') return false;"""
    + _WALK
    + _SPINNERS_ON_SCREEN
    + """
  if (spinners.length) return false;
  const boxes = all.filter((e) => ['CANVAS', 'BUTTON', 'H3'].includes(e.tagName)).map((e) => {
    const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height].join(' ');
  });
  const snap = [document.documentElement.scrollWidth, document.documentElement.scrollHeight, ...boxes].join(';');
  const state = window.__settled;
  if (!state || state.token !== token || state.snap !== snap) {
    window.__settled = {token, snap, count: 0};
    return false;
  }
  state.count += 1;
  return state.count >= 10;
}"""
)


# what keeps a page from settling: the parts of SETTLED_JS's condition, each on its own
UNSETTLED_JS = (
    """() => {
  const report = {bokeh: Boolean(window.Bokeh && Bokeh.documents.length > 0),
                  busyDocuments: window.Bokeh ? Bokeh.documents.filter((d) => !d.is_idle).length : null,
                  fonts: document.fonts.status};"""
    + _WALK
    + _SPINNERS_ON_SCREEN
    + """
  report.spinners = spinners.map((e) =>
    `${e.tagName.toLowerCase()}.${[...e.classList].join('.')}: ${(e.textContent || '').trim().slice(0, 120)}`);
  report.stableFrames = window.__settled ? window.__settled.count : null;
  report.activeTab = [...all].filter((e) => e.classList.contains('bk-tab') && e.classList.contains('bk-active'))
    .map((e) => e.textContent.trim());
  return report;
}"""
)


def settle(page, timeout=60_000):
    """Wait until the page has settled (SETTLED_JS): a condition, never a fixed time. On a timeout the
    error names the part of the condition that was not met (a spinner left, a busy document, fonts)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(SETTLED_JS, arg=uuid.uuid4().hex, polling="raf", timeout=timeout)
    except PlaywrightTimeout:
        try:
            report = page.evaluate(UNSETTLED_JS)
        except Exception as exc:  # the page itself is gone or hung
            report = f"(the page did not answer: {exc})"
        raise AssertionError(f"the page did not settle within {timeout / 1000:g} s: {report}") from None


# a plot's table toggle that comes with the tab's first plots, for tabs whose plots wait for the pool
TAB_TOGGLES = {"Low-privacy noise": "Data table: densities"}


def wait_for_open_tab(page, timeout=120_000):
    """Wait for the open tab's title, its data and its first plots (tabs render when first shown, and
    the noise tab's plots come with the calibration), then for the page to settle."""
    from dashboard.tour import TABS

    index = page.evaluate(
        "() => [...Bokeh.documents[0].all_models].filter((m) => m.type.endsWith('.Tabs')).map((m) => m.active)[0] ?? 0"
    )
    label = list(TABS)[index]
    title = re.compile("^" + re.escape(VIEW_TITLES[label]) + "$")
    page.locator("h3").filter(has_text=title).first.wait_for(state="visible", timeout=timeout)
    if label in TAB_MODELS:
        name, column = TAB_MODELS[label]
        check = f"const m = Bokeh.documents[0].get_model_by_name('{name}'); return m && m.data.{column}.length > 0;"
        page.wait_for_function(f"() => {{ {check} }}", timeout=timeout)
    if label in TAB_TOGGLES:
        page.wait_for_function(
            "(label) => [...Bokeh.documents[0].all_models].some((m) => m.type === 'Toggle' && m.label === label)",
            arg=TAB_TOGGLES[label],
            timeout=timeout,
        )
    settle(page, timeout=timeout)


def show_tab(page, label):
    """Open a tab; tabs render when first shown, so wait for its title, its data (where a named source
    holds them) and the end of its loading spinner."""
    page.get_by_text(label, exact=True).first.click()
    title = re.compile("^" + re.escape(VIEW_TITLES[label]) + "$")
    page.locator("h3").filter(has_text=title).first.wait_for(state="visible", timeout=120_000)
    wait_for_open_tab(page)
