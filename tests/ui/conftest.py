"""Tier 3: the served app in Debian's headless Chromium, driven by Playwright."""

import shutil
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.conftest import free_port


def _wait_http(url, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=30) as resp:  # a busy machine builds a page slowly
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"server at {url} did not answer within {timeout} s")


@pytest.fixture(scope="session")
def server_url(tmp_path_factory):
    """Serve the app with the README's command on a free port; stop it afterwards."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("server") / "serve.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dashboard.serve", "--port", str(port)], stdout=log, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}/"
    try:
        _wait_http(url)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
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
    """A page that records console errors and failed requests."""
    problems = []
    page.on("console", lambda msg: problems.append(f"console: {msg.text}") if msg.type == "error" else None)
    page.on("requestfailed", lambda req: problems.append(f"failed: {req.url}"))
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.problems = problems
    return page


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


def show_tab(page, label):
    """Open a tab; tabs render when first shown, so wait for its data to arrive."""
    page.get_by_text(label, exact=True).first.click()
    if label in TAB_MODELS:
        name, column = TAB_MODELS[label]
        check = f"const m = Bokeh.documents[0].get_model_by_name('{name}'); return m && m.data.{column}.length > 0;"
        page.wait_for_function(f"() => {{ {check} }}", timeout=120_000)
    else:
        page.wait_for_timeout(500)
