"""A saved tour notebook and a saved HoloViews figure render in Chromium with the network cut off."""

import warnings
from pathlib import Path
from urllib.parse import urlparse

import pytest
from nbconvert import HTMLExporter

from dashboard import notebook as nbk

pytestmark = pytest.mark.ui

# nbconvert's page itself links require.js and MathJax on a CDN; the tour uses neither, so the export
# points both at empty scripts (what is counted is what the notebook's outputs load)
NO_TEMPLATE_CDN = {"require_js_url": "data:text/javascript,", "mathjax_url": "data:text/javascript,"}

COUNT_CANVASES = """() => {
    let n = 0;
    const walk = (root) => root.querySelectorAll('*').forEach(e => {
        if (e.tagName === 'CANVAS') { n++; }
        if (e.shadowRoot) { walk(e.shadowRoot); }
    });
    walk(document);
    return n;
}"""


def open_offline(page, path: Path) -> list[str]:
    """Open a local file with every request off the machine refused; return those requests."""
    outside = []

    def route(request_route):
        url = urlparse(request_route.request.url)
        if url.scheme in ("file", "data", "blob") or url.hostname in ("127.0.0.1", "localhost"):
            request_route.continue_()
        else:
            outside.append(request_route.request.url)
            request_route.abort()

    page.route("**/*", route)
    page.goto(path.as_uri())
    return outside


@pytest.mark.notebook  # executes the tour first
def test_saved_tour_renders_offline(watched_page, tmp_path, executed_tour):
    nb = executed_tour
    with warnings.catch_warnings():
        # the extension cells display an empty bundle (their JavaScript is in other outputs)
        warnings.filterwarnings("ignore", r"Your element with mimetype\(s\) dict_keys\(\[\]\)", UserWarning)
        html, _ = HTMLExporter(template_name="lab", **NO_TEMPLATE_CDN).from_notebook_node(nb)
    path = tmp_path / "tour.html"
    path.write_text(html, encoding="utf-8")
    outside = open_offline(watched_page, path)
    # every figure of the tour: Bokeh draws each plot on a canvas
    watched_page.wait_for_function(f"() => ({COUNT_CANVASES})() >= 40", timeout=120_000)
    roots = watched_page.evaluate("() => Bokeh.documents.length")
    assert roots >= 12  # 7 HoloViews figures and 5 live views, each its own Bokeh document
    assert outside == []
    assert watched_page.problems == []


def test_saved_holoviews_figure_renders_offline(watched_page, tmp_path):
    layout = nbk.frontier_plot() + nbk.frontier_plot(variance=True)
    path = Path(nbk.save_html(layout, path=tmp_path / "frontier"))
    outside = open_offline(watched_page, path)
    watched_page.wait_for_function(f"() => ({COUNT_CANVASES})() >= 2", timeout=60_000)
    assert outside == []
    assert watched_page.problems == []
