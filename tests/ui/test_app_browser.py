import re
import time
import urllib.request

import pytest
from playwright.sync_api import expect

from tests.ui.conftest import ARTIFACTS, bokeh_value, settle, show_tab, wait_for_app

pytestmark = pytest.mark.ui


def move_epsilon(page, key, before):
    """Press an arrow key ten times on the epsilon slider; wait until the boundary curve changes."""
    handle = page.locator(".noUi-handle").first
    handle.focus()
    for _ in range(10):
        handle.press(key)
    page.wait_for_function(
        f"() => Number(Bokeh.documents[0].get_model_by_name('boundary-psi').data.linear[0]) !== {before}",
        timeout=10_000,
    )


def test_served_app_answers_http(server_url):
    with urllib.request.urlopen(server_url, timeout=30) as resp:
        body = resp.read().decode()
    assert resp.status == 200
    assert "noiselab" in body
    assert 'name="viewport" content="width=device-width, initial-scale=1"' in body


def test_page_renders_offline_without_errors(watched_page, server_url):
    watched_page.goto(server_url)
    wait_for_app(watched_page)
    settle(watched_page)
    watched_page.wait_for_load_state("networkidle")  # every request of the page has ended
    assert watched_page.problems == []


def test_the_spinner_image_is_fetched_with_the_page(watched_page, server_url):
    """Panel fetches its spinner image when a spinner first shows; on a busy server that request
    waited behind the work the spinner was meant to cover, so the first spinner stayed blank. The
    page fetches it on load (successfully: failed requests are problems), before any spinner."""
    page = watched_page
    with page.expect_request_finished(lambda req: "arc_spinner.svg" in req.url, timeout=60_000) as fetched:
        page.goto(server_url)
        wait_for_app(page)
    assert fetched.value.response().ok, "the spinner image was not fetched on load"
    assert page.problems == []


def test_dragging_epsilon_redraws_the_boundaries(watched_page, server_url):
    page = watched_page
    page.goto(server_url)
    wait_for_app(page)
    show_tab(page, "Privacy boundaries")
    before = bokeh_value(page, "boundary-psi", "linear", 0)
    move_epsilon(page, "ArrowRight", before)
    assert bokeh_value(page, "boundary-psi", "linear", 0) != before
    assert page.problems == []


def test_play_advances_frames(watched_page, server_url):
    page = watched_page
    page.goto(server_url)
    wait_for_app(page)
    start = bokeh_value(page, "rewind-now", "t")
    page.locator(".rewind-play button").first.click()
    page.wait_for_function(
        f"() => Number(Bokeh.documents[0].get_model_by_name('rewind-now').data.t[0]) < {start}", timeout=10_000
    )
    first = bokeh_value(page, "rewind-now", "t")
    page.wait_for_function(  # frames keep advancing towards smaller noise
        f"() => Number(Bokeh.documents[0].get_model_by_name('rewind-now').data.t[0]) < {first}", timeout=10_000
    )
    second = bokeh_value(page, "rewind-now", "t")
    assert second < first < start
    assert page.problems == []


def test_url_holds_the_settings(watched_page, server_url):
    page = watched_page
    link = server_url + "?eps=3&seed=4"
    page.goto(link)
    wait_for_app(page)
    show_tab(page, "Privacy boundaries")
    from_link = bokeh_value(page, "boundary-psi", "linear", 0)
    page.goto(link)
    wait_for_app(page)
    show_tab(page, "Privacy boundaries")
    assert bokeh_value(page, "boundary-psi", "linear", 0) == from_link  # the link reproduces the view
    show_tab(page, "Low-privacy noise")
    # views refreshed on release only follow too; the Arete calibrated at epsilon = 3 arrives from the pool
    page.get_by_text("At epsilon = 3 the calibration search found no Arete").first.wait_for(timeout=30_000)
    page.goto(server_url)
    wait_for_app(page)
    show_tab(page, "Privacy boundaries")
    assert bokeh_value(page, "boundary-psi", "linear", 0) != from_link  # and it did set epsilon
    assert page.problems == []


def test_sessions_are_independent_and_disconnect_is_harmless(browser, server_url):
    first = browser.new_page()
    second = browser.new_page()
    for page in (first, second):
        page.goto(server_url)
        wait_for_app(page)
        show_tab(page, "Privacy boundaries")
    base = bokeh_value(second, "boundary-psi", "linear", 0)
    move_epsilon(first, "ArrowLeft", base)
    assert bokeh_value(second, "boundary-psi", "linear", 0) == base
    show_tab(first, "Brownian rewind")
    start = bokeh_value(first, "rewind-now", "t")
    first.locator(".rewind-play button").first.click()
    first.wait_for_function(
        f"() => Number(Bokeh.documents[0].get_model_by_name('rewind-now').data.t[0]) < {start}", timeout=10_000
    )
    first.close()  # disconnect mid-animation
    with urllib.request.urlopen(server_url, timeout=30) as resp:
        assert resp.status == 200
    third = browser.new_page()
    third.goto(server_url)
    wait_for_app(third)
    third.close()
    second.close()


def test_play_draws_nearly_every_frame_in_the_browser(watched_page, server_url):
    """The rewind animates in the browser: Play pauses at the stop (release 57 at the defaults, the teacher's
    guide's "pause on the stop"), Play again runs on to the last release; sampled on every animation frame,
    >= 95% of the 120 releases are painted over the two (the server hears of every 10th only). The frame rate
    is printed, not asserted (machines here are noisy)."""
    page = watched_page
    page.goto(server_url)
    wait_for_app(page)
    page.evaluate("""() => {
        const now = Bokeh.documents[0].get_model_by_name('rewind-now');
        window.painted = new Set();
        const sample = () => { if (now.data.t.length) { window.painted.add(now.data.t[0]); }
                               requestAnimationFrame(sample); };
        sample();
    }""")
    started = time.monotonic()
    page.locator(".rewind-play button").first.click()
    at_stop = (
        "() => { const d = Bokeh.documents[0].get_model_by_name('rewind-now').data;"
        " const f = Bokeh.documents[0].get_model_by_name('rewind-frames').data;"
        " const s = Bokeh.documents[0].get_model_by_name('rewind-stop').data;"
        " return s.k.length === 1 && d.t[0] === f.t[s.k[0]]; }"
    )
    page.wait_for_function(at_stop, timeout=120_000)
    page.wait_for_timeout(500)
    assert page.evaluate(at_stop), "Play did not stay paused at the stop"
    assert page.evaluate("() => Bokeh.documents[0].get_model_by_name('rewind-stop').data.k[0]") == 56
    page.wait_for_function(  # the slider (and the server) have the stop's release
        "() => location.search.includes('release=57')", timeout=30_000
    )
    page.locator(".rewind-play button").first.click()
    page.wait_for_function(
        "() => { const d = Bokeh.documents[0].get_model_by_name('rewind-now').data;"
        " const f = Bokeh.documents[0].get_model_by_name('rewind-frames').data;"
        " return d.t[0] === f.t[f.t.length - 1]; }",
        timeout=120_000,
    )
    elapsed = time.monotonic() - started
    painted = page.evaluate("() => window.painted.size")
    stamps = page.evaluate("() => window.noiselabFrames.map(f => f[1])")
    fps = (len(stamps) - 1) / ((stamps[-1] - stamps[0]) / 1000)
    print(f"frames painted during Play: {painted} of 120, {fps:.1f} frames/s in the browser ({elapsed:.2f} s)")
    assert painted >= 0.95 * 120
    assert page.problems == []


def test_d2_shows_the_plane_without_an_error(watched_page, server_url):
    page = watched_page
    page.goto(server_url)
    wait_for_app(page)
    page.get_by_text("d = 2", exact=True).first.click()
    page.wait_for_function(
        "() => Bokeh.documents[0].get_model_by_name('rewind-path').data.y.some(v => v !== 0)", timeout=15_000
    )
    settle(page)
    assert page.locator(".alert:visible").count() == 0
    assert "List parameter" not in page.content()
    page.get_by_text("d = 1", exact=True).first.click()  # and back: this direction used to break the tab
    page.wait_for_function(
        "() => Bokeh.documents[0].get_model_by_name('rewind-path').data.y.every(v => v === 0)", timeout=15_000
    )
    settle(page)
    assert page.get_by_text("cannot be shown", exact=False).count() == 0
    assert page.get_by_text("Something went wrong", exact=False).count() == 0
    assert page.problems == []


def test_the_peek_counter_example_is_drawn_in_the_browser_when_first_chosen(watched_page, server_url):
    """The peek rule's counter-example joins the walk plot when first chosen (it is not sent with the page):
    in the browser its two renderers appear under the stop star and the current release, with their legend
    entries, and another rule hides the entries again."""
    page = watched_page
    page.goto(server_url)
    wait_for_app(page)
    labels_js = """() => {
      const fig = [...Bokeh.documents[0].all_models].find((m) => m.title && m.title.text === 'f(x) + B(t) against t');
      return fig.renderers.map((r) => (r.data_source && r.data_source.name) || (r.data_source && r.data_source.data.t
        ? 'n' + r.data_source.data.t.length : '?'));
    }"""
    legend_js = """() => {
      const fig = [...Bokeh.documents[0].all_models].find((m) => m.title && m.title.text === 'f(x) + B(t) against t');
      const legend = [...fig.center, ...fig.below, ...fig.above, ...fig.right].find((m) => m.type === 'Legend');
      return legend.items.filter((i) => i.visible).map((i) => i.label.value);
    }"""
    before = page.evaluate(labels_js)
    assert not any("neighbour" in label for label in page.evaluate(legend_js))
    page.get_by_text("peek (not private)", exact=True).first.click()
    page.wait_for_function(f"() => ({labels_js})().length === {len(before) + 2}", timeout=15_000)
    settle(page)
    legend = page.evaluate(legend_js)
    truth, stop = "neighbour's f(x) (one person more)", "neighbour's stop, same releases"
    assert legend.index(truth) < legend.index("stop") < legend.index(stop) < legend.index("current release"), legend
    assert "public cut-off" not in legend  # the peek rule draws no cut-off: no legend entry for one
    order = page.evaluate(labels_js)
    assert order.index("rewind-stop") < order.index("rewind-now") and order[-1] == "rewind-now", order
    page.get_by_text("Data table: f(x) + B(t) against t", exact=True).first.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "peek-counter-example.png"))
    page.get_by_text("decide from the releases", exact=True).first.click()
    page.wait_for_function(f'() => !({legend_js})().includes("{truth}")', timeout=15_000)
    assert page.problems == []


def test_formulas_render_with_katex_fonts(watched_page, server_url):
    page = watched_page
    page.goto(server_url)
    wait_for_app(page)
    page.locator(".bk-panel-models-katex-KaTeX").first.scroll_into_view_if_needed()
    page.wait_for_function(
        "() => Array.from(document.fonts).some(f => f.family.includes('KaTeX_Main') && f.status === 'loaded')",
        timeout=15_000,
    )
    assert page.problems == []  # no 404 for fonts either


def test_slider_ends_are_reachable(watched_page, server_url):
    """Home and End on the epsilon slider reach 0.05 and 50; the views follow (the server log is
    checked for tracebacks when the session's server stops)."""
    page = watched_page
    page.goto(server_url)
    wait_for_app(page)
    show_tab(page, "Privacy boundaries")
    handle = page.locator(".noUi-handle").first  # epsilon, the first slider of the sidebar
    before = bokeh_value(page, "boundary-psi", "linear", 0)
    handle.focus()
    handle.press("Home")
    page.get_by_text("At epsilon = 0.05,", exact=False).first.wait_for(timeout=20_000)
    handle.press("End")
    page.get_by_text("At epsilon = 50,", exact=False).first.wait_for(timeout=20_000)
    assert bokeh_value(page, "boundary-psi", "linear", 0) != before
    assert page.locator(".alert:visible").count() == 0
    assert page.problems == []


def test_delta_slider_spells_values_as_the_captions_do(watched_page, server_url):
    """The delta slider once read 0.000001 beside captions saying 1e-06: both use Python's general
    format with two digits, at the default and at both ends of the track."""
    page = watched_page
    page.goto(server_url)
    wait_for_app(page)
    show_tab(page, "Privacy boundaries")
    label = page.locator(".bk-slider-title", has_text="delta:").first
    expect(label).to_contain_text("delta: 1e-06")
    page.get_by_text("delta = 1e-06", exact=False).first.wait_for(timeout=20_000)
    handle = page.locator(".noUi-handle").nth(1)  # delta, the second slider of the sidebar
    handle.focus()
    handle.press("Home")
    expect(label).to_contain_text("delta: 1e-12")
    page.get_by_text("delta = 1e-12", exact=False).first.wait_for(timeout=20_000)
    handle.press("End")
    expect(label).to_contain_text("delta: 0.5")
    page.get_by_text("delta = 0.5", exact=False).first.wait_for(timeout=20_000)
    assert page.problems == []


BUTTON_BOXES_JS = """() => {
  const out = [];
  const walk = (root) => root.querySelectorAll('*').forEach((e) => {
    if (e.tagName === 'BUTTON' && e.getBoundingClientRect().width > 0) {
      const r = e.getBoundingClientRect();
      out.push([e.textContent.trim(), parseFloat(getComputedStyle(e).fontSize), r.left, r.top, r.right, r.bottom]);
    }
    if (e.shadowRoot) walk(e.shadowRoot);
  });
  walk(document);
  return out;
}"""


def _overlapping(boxes):
    return [
        (a[0], b[0])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a[2] < b[4] - 1 and b[2] < a[4] - 1 and a[3] < b[5] - 1 and b[3] < a[5] - 1
    ]


@pytest.mark.parametrize("size", [(1920, 1080), (390, 844)], ids=["projector", "phone"])
def test_large_type_enlarges_buttons_without_overlap(browser, server_url, size):
    """Large type once grew the text but not the buttons; with fixed widths the grown labels then
    ran into each other. Every button's text grows and no two buttons overlap."""
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    page.goto(server_url)
    wait_for_app(page)
    settle(page)
    before = {b[0]: b[1] for b in page.evaluate(BUTTON_BOXES_JS) if b[0]}
    page.evaluate("() => document.body.classList.add('noiselab-large')")
    settle(page)
    after = page.evaluate(BUTTON_BOXES_JS)
    shown = [b for b in after if b[0] in before]
    assert len(shown) >= 8 and all(b[1] > before[b[0]] for b in shown), (before, after)
    assert _overlapping([b for b in after if b[0]]) == []
    assert page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth") <= 1
    page.close()


WALK_RANGES_JS = """() => {
  const doc = Bokeh.documents[0];
  const now = doc.get_model_by_name('rewind-now');
  for (const m of doc.all_models) {
    if (m.renderers && m.x_range && m.renderers.some((r) => r.data_source === now)) {
      return [m.x_range.start, m.x_range.end, m.y_range.start, m.y_range.end];
    }
  }
  return null;
}"""


def test_rewind_axes_follow_the_data_after_a_tab_switch(watched_page, server_url):
    """Tabs were re-rendered on every switch; the old plot's data bounds stayed in the axis ranges, so
    after epsilon 0.05, a tab switch and Reset the walk sat flat in axes up to t = 3.6e6. The axes now
    return to their first extent."""
    page = watched_page
    page.goto(server_url)
    wait_for_app(page)
    settle(page)
    first = page.evaluate(WALK_RANGES_JS)
    handle = page.locator(".noUi-handle").first
    handle.focus()
    handle.press("Home")
    page.wait_for_function(f"() => ({WALK_RANGES_JS})()[1] > 10 * {first[1]}", timeout=20_000)
    show_tab(page, "Privacy boundaries")
    show_tab(page, "Brownian rewind")
    page.get_by_role("button", name="Reset").click()
    page.wait_for_function(f"() => ({WALK_RANGES_JS})()[1] < 2 * {first[1]}", timeout=20_000)
    after = page.evaluate(WALK_RANGES_JS)
    assert after == pytest.approx(first, rel=1e-6)
    assert page.problems == []


def test_hidden_tab_shows_a_loading_state_then_data(watched_page, server_url):
    page = watched_page
    page.goto(server_url)
    wait_for_app(page)
    started = time.monotonic()
    show_tab(page, "Privacy boundaries")
    print(f"first render of a hidden tab: {time.monotonic() - started:.2f} s")
    page.get_by_text("Large type (projector)", exact=True).click()
    page.wait_for_function("() => document.body.classList.contains('noiselab-large')", timeout=10_000)
    settle(page)
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1  # large type must not push the plots off the screen
    assert page.problems == []


def test_a_heavy_button_does_not_freeze_another_session(browser, server_url):
    """Heavy work runs off the event loop: while one session runs a long experiment (ridge on paper-sized
    data, 1,000 trials: many seconds), another session's slider redraws, and the experiment is still
    running when it has (computed on the loop, the run would have ended first, or the redraw timed
    out); the RAT study of the first session arrives too (it is computed the same way)."""
    first, second = browser.new_page(), browser.new_page()
    first.goto(server_url + "?eps=6&arete=local-search&users=20&seed=101")  # its own seed: see start_long_run
    wait_for_app(first)
    show_tab(first, "RAT stopping")
    first.get_by_text("RAT's median ex-post epsilon", exact=False).first.wait_for(timeout=30_000)
    show_tab(first, "Experiments")
    second.goto(server_url)
    wait_for_app(second)
    show_tab(second, "Privacy boundaries")
    before = bokeh_value(second, "boundary-psi", "linear", 0)
    start_long_run(first)
    move_epsilon(second, "ArrowRight", before)
    assert first.get_by_role("button", name="Cancel").is_visible()  # the run is still going, now
    first.get_by_role("button", name="Cancel").click()
    expect(first.get_by_text("Cancelled; the previous result is kept.")).to_be_visible(timeout=30_000)
    first.close()
    second.close()


def test_bad_address_values_are_named_and_the_rest_applied(watched_page, server_url):
    """?eps=6&seed=-5 once showed epsilon 1 on the slider and 6 elsewhere; markup in a value must be
    shown as text, never rendered."""
    page = watched_page
    page.goto(server_url + "?eps=6&seed=-5&stop=%3Cb%20id%3Dinjected%3Ex%3C/b%3E&foo=1")
    wait_for_app(page)
    notice = page.get_by_text("Ignored from the page address", exact=False).first
    notice.wait_for(timeout=20_000)
    text = notice.inner_text()
    assert "seed=-5" in text and "foo=1" in text and "<b id=injected>x</b>" in text
    assert page.locator("#injected").count() == 0
    epsilon_label = page.get_by_text("epsilon:", exact=False).first.inner_text()
    assert "6" in epsilon_label  # the good value reached the slider as well as the views
    assert page.problems == []


def test_closing_a_tab_mid_computation_leaves_the_server_healthy(browser, server_url):
    """A tab closed while its dropout curves compute leaves the server healthy (the session fixture
    checks the log for errors at the end), and the next session computes and shows its curves. (The
    dropout curves take about 0.3 s, too quick to press Cancel reliably: Cancel is exercised on the
    experiments tab's 1,000-trial ridge run below.) The curves follow the calibration without a button."""
    first = browser.new_page()
    first.goto(server_url + "?tour=5&users=41")
    first.get_by_text("At epsilon = 10 the Arete", exact=False).first.wait_for(timeout=60_000)  # curves start
    first.close()
    page = browser.new_page()
    page.goto(server_url + "?tour=5&users=43")
    expect(page.get_by_text("the Arete's worst-case epsilon grows", exact=False).first).to_be_visible(timeout=60_000)
    page.close()


def start_long_run(page):
    """On the experiments tab: run ridge on paper-sized synthetic data with 1,000 trials (many seconds);
    return once its progress bar shows. Each test that calls it opens its page with a seed of its own: the
    server's pool keeps finished chunks, so a run another test began could end before Cancel is pressed."""
    page.locator("select").filter(has_text="synthetic, as in paper A").select_option(label="synthetic, as in paper A")
    page.get_by_text("ridge", exact=True).click()
    page.locator("select").filter(has_text="1000").select_option(label="1000")
    page.get_by_role("button", name="Run").click()
    expect(page.locator(".bk-panel-models-widgets-Progress, progress").first).to_be_visible(timeout=30_000)
    expect(page.get_by_role("button", name="Cancel")).to_be_visible(timeout=30_000)


def plots_opacity(page) -> str:
    """The experiments plots' opacity as the browser draws them (after the server's last update arrived)."""
    plots = page.locator(".noiselab-experiment-plots").first
    plots.wait_for(state="attached", timeout=30_000)
    return plots.evaluate("(el) => getComputedStyle(el).opacity")


def experiment_curve_length(page):
    return page.evaluate("() => Bokeh.documents[0].get_model_by_name('experiment-bm').data.x.length")


def test_experiments_upload_a_csv_see_curves_and_cancel(watched_page, server_url, tmp_path):
    page = watched_page
    page.goto(server_url + "?seed=102")  # its own seed: see start_long_run
    wait_for_app(page)
    page.get_by_text("Experiments", exact=True).first.click()
    page.wait_for_function(
        "() => { const m = Bokeh.documents[0].get_model_by_name('experiment-bm');"
        " return m && m.data.x.length === 30; }",
        timeout=120_000,
    )  # the default run
    # the whiskers (annotations) used to run off the axis, which fitted the boxes only
    page.wait_for_function(
        "() => { const m = Bokeh.documents[0].get_model_by_name('experiment-box'); return m && m.data.y.length > 0; }",
        timeout=30_000,
    )
    extent = page.evaluate(
        "() => { const doc = Bokeh.documents[0]; const box = doc.get_model_by_name('experiment-box').data;"
        " const r = doc.get_model_by_name('experiment-stop').x_range;"
        " return [r.start, r.end, Math.min(...box.q05), Math.max(...box.q95)]; }"
    )
    assert extent[0] <= extent[2] and extent[3] <= extent[1], extent
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,label\n1,2,0\n3,oops,1\n")
    page.locator("input[type=file]").set_input_files(str(bad))
    expect(page.get_by_text("bad.csv, line 3, column 'b': 'oops' is not a number")).to_be_visible(timeout=30_000)

    rows = ["x1,x2,label"] + [
        f"{(i % 7) / 7:.3f},{((i * 3) % 11) / 11 - 0.5 + (i % 2):.3f},{i % 2}" for i in range(200)
    ]
    good = tmp_path / "two_classes.csv"
    good.write_text("\n".join(rows) + "\n")
    page.locator("input[type=file]").set_input_files(str(good))
    expect(page.get_by_text("Choose the target column and the task")).to_be_visible(timeout=30_000)
    default_first = bokeh_value(page, "experiment-bm", "y", 0)
    page.get_by_role("button", name="Run").click()
    # the finished run's status line: "Running 100 trials on two_classes.csv, predicting 'label'..." names
    # the file too, and a test that waited for that read the default run's plots as this run's (a
    # fresh-clone run then failed after Cancel, comparing with the wrong curve)
    finished = re.compile(r"two_classes\.csv, predicting 'label'.* 100 trials, 30 levels")
    expect(page.get_by_text(finished)).to_be_visible(timeout=120_000)
    assert experiment_curve_length(page) == 30
    boxes = page.evaluate("() => Bokeh.documents[0].get_model_by_name('experiment-box').data.y.length")
    assert boxes >= 6
    first = bokeh_value(page, "experiment-bm", "y", 0)
    assert first != default_first  # the plots show the uploaded file's run, with its status line
    # a second run dimmed the plots while it ran and left them dimmed (an inline opacity never cleared)
    assert plots_opacity(page) == "1"

    # a long run (ridge on paper-sized synthetic data, 1,000 trials) is cancelled: the last result stays
    start_long_run(page)
    page.get_by_role("button", name="Cancel").click()
    # a run that ended before the press is not "cancelled": the status then names the run shown. Either
    # way the status and the plots agree.
    cancelled, ended = "Cancelled; the previous result is kept.", "1000 trials, 30 levels"
    expect(page.get_by_text(cancelled).or_(page.get_by_text(ended, exact=False)).first).to_be_visible(timeout=10_000)
    expect(page.get_by_role("button", name="Run")).to_be_enabled()
    show_tab(page, "Privacy boundaries")  # a round trip to the server: what it sent before has arrived
    show_tab(page, "Experiments")
    assert plots_opacity(page) == "1"  # not dimmed after Cancel either
    if page.get_by_text(cancelled).count():
        assert bokeh_value(page, "experiment-bm", "y", 0) == first
    else:  # the run's result, under its own status line
        assert page.get_by_text(ended, exact=False).count() and bokeh_value(page, "experiment-bm", "y", 0) != first
    assert page.problems == []
