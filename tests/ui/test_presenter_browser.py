"""The live demo never surprises the presenter: one frame everywhere, legends keep their symbols,
large type from a link, presenter mode and keys (issue 22)."""

import re

import pytest

from tests.ui.conftest import ARTIFACTS, settle, show_tab, wait_for_app

pytestmark = pytest.mark.ui

WAIT = 60_000

# the release each part of the rewind shows: the dot (by its noise variance), the slider, the
# readout's "Release k of N" (its model's text; frame_state reads what the page shows) and the series
# markers (spans at release k)
FRAME_STATE_JS = """
() => {
  const doc = Bokeh.documents[0];
  const frames = doc.get_model_by_name('rewind-frames').data;
  const now = doc.get_model_by_name('rewind-now').data;
  const dot = frames.t.indexOf(now.t[0]) + 1;
  const spans = [];
  for (const m of doc.all_models) {
    if (m.name === 'rewind-marker') { spans.push(m.location); }
  }
  let slider = null;
  const readouts = [];
  for (const m of doc.all_models) {
    if (m.type === 'Slider' && m.title === 'release') { slider = m.value + 1; }
    const text = typeof m.text === 'string' && /Release (\\d+) of/.exec(m.text);
    if (text) { readouts.push(Number(text[1])); }
  }
  return {dot, slider, readouts, spans};
}
"""


def readout_release(page):
    text = page.locator("text=/Release \\d+ of 120/").first.inner_text(timeout=WAIT)
    return int(re.search(r"Release (\d+) of", text).group(1))


def frame_state(page):
    state = page.evaluate(FRAME_STATE_JS)
    state["readout"] = readout_release(page)
    return state


def assert_one_frame(state):
    assert len(set(state["spans"])) == 1, state
    assert state["dot"] == state["slider"] == state["readout"] == state["spans"][0], state


def press(page, action):
    page.locator(f".rewind-{action} button").first.click()


def test_the_browser_drawn_readout_keeps_its_markup(watched_page, server_url):
    """The browser draws each release's readout itself during Play and steps; it sent the text unescaped,
    which Panel's HTML model shows as plain text: after Play the bold "Release k of 120" and the glossary
    terms were gone. Before Play and after Pause and a step the readout has the same markup."""
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(server_url)
    wait_for_app(page)
    readout = page.locator("b", has_text=re.compile(r"^Release \d+ of 120$"))
    assert readout.first.inner_text(timeout=WAIT) == "Release 1 of 120"
    terms = readout.first.locator("xpath=..").locator(".noiselab-term")
    before = terms.count()
    assert before >= 3
    press(page, "play")
    page.wait_for_function(
        "() => { const f = window.noiselabFrames || []; return f.length && f[f.length - 1][0] >= 5; }",
        timeout=WAIT,
    )
    press(page, "pause")
    page.wait_for_function(f"() => {{ const s = ({FRAME_STATE_JS})(); return s.dot === s.slider; }}", timeout=WAIT)
    shown = frame_state(page)["dot"]
    assert shown > 1
    assert readout.first.inner_text(timeout=WAIT) == f"Release {shown} of 120"
    assert readout.first.locator("xpath=..").locator(".noiselab-term").count() == before
    press(page, "back")
    page.wait_for_function(f"() => ({FRAME_STATE_JS})().slider === {shown - 1}", timeout=WAIT)
    assert readout.first.inner_text(timeout=WAIT) == f"Release {shown - 1} of 120"
    assert "<b>" not in readout.first.locator("xpath=..").inner_text()


def test_pause_and_step_show_one_frame_everywhere(watched_page, server_url):
    """Pause after Rewind used to leave the dot at release 57 and the readout and slider at 51; a
    step then moved from the slider's release, not the dot's."""
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(server_url)
    wait_for_app(page)
    press(page, "play")
    page.wait_for_function(
        "() => { const f = window.noiselabFrames || []; return f.length && f[f.length - 1][0] >= 24; }",
        timeout=WAIT,
    )
    press(page, "pause")
    page.wait_for_function(f"() => {{ const s = ({FRAME_STATE_JS})(); return s.dot === s.slider; }}", timeout=WAIT)
    paused = frame_state(page)
    assert_one_frame(paused)
    # (a busy machine may reach the last release before Pause arrives: steps go back first)
    press(page, "back")
    page.wait_for_function(f"() => ({FRAME_STATE_JS})().slider === {paused['slider'] - 1}", timeout=WAIT)
    assert_one_frame(frame_state(page))
    press(page, "forward")
    page.wait_for_function(f"() => ({FRAME_STATE_JS})().slider === {paused['slider']}", timeout=WAIT)
    assert_one_frame(frame_state(page))
    press(page, "back")
    press(page, "back")
    page.wait_for_function(f"() => ({FRAME_STATE_JS})().slider === {paused['slider'] - 2}", timeout=WAIT)
    stepped = frame_state(page)
    assert_one_frame(stepped)
    # a tab switch and back keeps the frame
    show_tab(page, "Privacy boundaries")
    show_tab(page, "Brownian rewind")
    page.wait_for_function(f"() => ({FRAME_STATE_JS})().slider === {stepped['slider']}", timeout=WAIT)
    assert_one_frame(frame_state(page))
    # a settings change redraws the same release from the new frames
    page.get_by_text("d = 2", exact=True).first.click()
    page.wait_for_function(
        "() => Bokeh.documents[0].get_model_by_name('rewind-path').data.y.some(v => v !== 0)", timeout=WAIT
    )
    page.wait_for_function(
        f"() => {{ const s = ({FRAME_STATE_JS})(); return s.dot === {stepped['slider']}; }}", timeout=WAIT
    )
    assert_one_frame(frame_state(page))
    page.screenshot(path=str(ARTIFACTS / "legend-after-d2.png"))
    assert page.problems == []


LARGE = "() => document.body.classList.contains('noiselab-large')"
NOT_LARGE = "() => !document.body.classList.contains('noiselab-large')"


def test_large_type_from_a_link_follows_the_toggle_and_reset(watched_page, server_url):
    """?big=true enlarged the plots but not the text; the toggle then worked backwards, and Reset left
    the text large while the toggle said off. Reset now keeps large type (the room's display, issue 43):
    the text, the toggle and the address all say so."""
    page = watched_page
    page.set_viewport_size({"width": 1024, "height": 768})
    page.goto(server_url + "?big=true")
    wait_for_app(page)
    page.wait_for_function(LARGE, timeout=WAIT)
    page.screenshot(path=str(ARTIFACTS / "large-type-1024x768.png"))
    toggle = page.get_by_text("Large type (projector)").first
    toggle.click()
    page.wait_for_function(NOT_LARGE, timeout=WAIT)
    page.wait_for_function("() => !location.search.includes('big')", timeout=WAIT)
    toggle.click()
    page.wait_for_function(LARGE, timeout=WAIT)
    handle = page.locator(".noUi-handle").first  # epsilon: Reset has something to reset
    handle.focus()
    handle.press("End")
    page.wait_for_function("() => location.search.includes('eps=50')", timeout=WAIT)
    page.get_by_text("Reset", exact=True).first.click()
    page.wait_for_function("() => location.search === '?big=true'", timeout=WAIT)
    page.wait_for_function(LARGE, timeout=WAIT)
    toggle_on = page.evaluate(
        "() => [...Bokeh.documents[0].all_models].filter(m => m.type === 'Toggle' && m.label === "
        "'Large type (projector)').map(m => m.active)"
    )
    assert toggle_on == [True]
    assert page.problems == []


def in_view(page, locator):
    box = locator.bounding_box(timeout=WAIT)
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= page.viewport_size["height"]


def test_presenter_mode_puts_the_plot_and_its_controls_on_the_first_screen(watched_page, server_url):
    page = watched_page
    page.set_viewport_size({"width": 1024, "height": 768})
    page.goto(server_url + "?present=1")
    wait_for_app(page)
    page.wait_for_function(
        "() => ['noiselab-present', 'noiselab-large'].every(c => document.body.classList.contains(c))",
        timeout=WAIT,
    )
    page.wait_for_function(
        "() => !document.getElementById('sidebar') || document.getElementById('sidebar').offsetWidth === 0",
        timeout=WAIT,
    )
    play = page.locator(".rewind-play button").first
    assert in_view(page, play)
    figure = page.locator(".bk-Figure").first
    box = figure.bounding_box(timeout=WAIT)
    # the walk's plot area (the figure without its legend rows) is on the first screen, below the headline and
    # its plain-words line
    assert box["y"] < 420 and box["y"] + 0.75 * box["height"] <= 768, box
    page.screenshot(path=str(ARTIFACTS / "presenter-1024x768.png"))
    # P leaves presenter mode (the address follows), and P again comes back
    page.keyboard.press("p")
    page.wait_for_function("() => !document.body.classList.contains('noiselab-present')", timeout=WAIT)
    page.wait_for_function("() => !location.search.includes('present')", timeout=WAIT)
    page.keyboard.press("p")
    page.wait_for_function("() => location.search.includes('present=1')", timeout=WAIT)
    assert page.problems == []


@pytest.mark.parametrize("step", [2, 4])
def test_the_tour_in_presenter_mode_keeps_the_plot_on_a_projector_s_first_screen(watched_page, server_url, step):
    """``?tour=2&present=1`` at 1024x768 put the tour's paragraph above the plot and pushed its axis off
    screen (issue 43): in presenter mode the tour is one line in the top row, and its Next works."""
    page = watched_page
    page.set_viewport_size({"width": 1024, "height": 768})
    page.goto(server_url + f"?tour={step}&present=1")
    wait_for_app(page)
    page.wait_for_function("() => document.body.classList.contains('noiselab-present')", timeout=WAIT)
    bar = page.locator(".noiselab-tour-bar").first
    bar.wait_for(timeout=WAIT)
    assert in_view(page, bar) and bar.bounding_box()["y"] < 60  # beside Expert / Share / Present
    figure = page.locator(".bk-Figure:visible").first
    box = figure.bounding_box(timeout=WAIT)
    assert box["y"] < 480 and box["y"] + 0.75 * box["height"] <= 768, box
    page.screenshot(path=str(ARTIFACTS / f"presenter-tour{step}-1024x768.png"))
    bar.get_by_role("button", name="Next").click()
    page.wait_for_function(f"() => location.search.includes('tour={step + 1}')", timeout=WAIT)
    assert page.problems == []


def test_keys_step_play_and_open_tabs_but_never_while_typing(watched_page, server_url):
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(server_url)
    wait_for_app(page)
    page.locator("body").click(position={"x": 700, "y": 5})  # the page, not a box, has the keyboard
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => ({FRAME_STATE_JS})().slider === 3", timeout=WAIT)
    assert_one_frame(frame_state(page))
    page.keyboard.press("End")
    page.wait_for_function(f"() => ({FRAME_STATE_JS})().slider === 120", timeout=WAIT)
    page.keyboard.press("Home")
    page.wait_for_function(f"() => ({FRAME_STATE_JS})().slider === 1", timeout=WAIT)
    page.keyboard.press(" ")
    page.wait_for_function(f"() => ({FRAME_STATE_JS})().dot >= 15", timeout=WAIT)
    page.keyboard.press(" ")
    page.wait_for_function(f"() => {{ const s = ({FRAME_STATE_JS})(); return s.dot === s.slider; }}", timeout=WAIT)
    paused = frame_state(page)
    assert_one_frame(paused)
    assert 1 < paused["slider"] < 120  # paused midway
    page.keyboard.press("2")
    page.wait_for_function("() => location.search.includes('tab=1')", timeout=WAIT)
    # typing a 5 into the seed box changes the seed, not the tab
    seed = page.locator("input[type=text], input[inputmode]").filter(has_text="").first
    box = page.get_by_label("seed").first if page.get_by_label("seed").count() else seed
    box.click()
    box.press("End")
    box.type("5")
    box.press("Enter")
    page.wait_for_function("() => location.search.includes('seed=5')", timeout=WAIT)
    assert "tab=1" in page.url
    assert page.problems == []


# at every animation frame: the release of the dot, the slider, the readout and each series marker
SAMPLE_FRAMES_JS = """
() => {
  window.noiselabSamples = [];
  const tick = () => {
    const s = (FRAME_STATE_JS)();
    window.noiselabSamples.push([s.dot, s.slider, ...s.readouts, ...s.spans]);
    if (window.noiselabSamples.length < 20000) { requestAnimationFrame(tick); }
  };
  requestAnimationFrame(tick);
}
""".replace("FRAME_STATE_JS", FRAME_STATE_JS)


def test_while_playing_every_part_shows_the_same_release_and_history_grows_once(watched_page, server_url):
    """During Play the slider and the readout trailed the dot by up to 9 releases, every release sent
    its dot to the server, and every synced release added a browser history entry (Back then walked the
    address through the animation)."""
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(server_url)
    wait_for_app(page)
    sent = []
    page.on("websocket", lambda ws: ws.on("framesent", sent.append))
    history = page.evaluate("() => history.length")
    page.evaluate(SAMPLE_FRAMES_JS)
    press(page, "play")
    # Play pauses at the stop (release 57 at the defaults); Play again runs on to the last release
    page.wait_for_function(f"() => ({FRAME_STATE_JS})().slider === 57", timeout=WAIT)
    press(page, "play")
    # the sampler has seen the last release (it samples at the animation frame after each draw)
    page.wait_for_function("() => window.noiselabSamples.some((s) => s[0] === 120)", timeout=WAIT)
    samples = page.evaluate("() => window.noiselabSamples")
    assert len(samples) >= 20 and all(len(s) == 5 for s in samples), samples[:3]  # dot, slider, readout, 2 markers
    assert [s for s in samples if len(set(s)) > 1] == []
    page.wait_for_function(f"() => ({FRAME_STATE_JS})().slider === 120", timeout=WAIT)
    assert_one_frame(frame_state(page))
    assert page.evaluate("() => history.length") - history == 2  # the two clicks on Play: one entry each
    text = [m if isinstance(m, str) else m.decode(errors="replace") for m in sent]
    assert not any('"attr":"data"' in m or '"attr":"location"' in m for m in text)  # the dot stays in the browser
    page.wait_for_function("() => location.search.includes('release=120')", timeout=WAIT)
    assert page.problems == []


def test_play_takes_one_step_when_the_system_asks_for_reduced_motion(watched_page, server_url):
    """prefers-reduced-motion (issue 40): Play shows where it would pause (the stop) at once, without
    animating the releases in between."""
    page = watched_page
    page.emulate_media(reduced_motion="reduce")
    page.goto(server_url)
    wait_for_app(page)
    stop = page.evaluate("() => Bokeh.documents[0].get_model_by_name('rewind-stop').data.k[0]") + 1
    assert stop > 10  # an animation would pass through at least ten releases first
    # every release the dot shows from now on, sampled each animation frame in the page
    page.evaluate(
        f"""() => {{ window.noiselabSeen = []; const state = {FRAME_STATE_JS.strip()};
        const sample = () => {{ window.noiselabSeen.push(state().dot); requestAnimationFrame(sample); }};
        sample(); }}"""
    )
    press(page, "play")
    page.wait_for_function(f"() => ({FRAME_STATE_JS.strip()})().dot === {stop}", timeout=WAIT)
    assert_one_frame(frame_state(page))
    page.wait_for_timeout(500)  # had an animation gone on, it would show here
    seen = set(page.evaluate("() => window.noiselabSeen"))
    assert seen == {1, stop}, sorted(seen)  # the first release, then the stop: nothing in between
    assert page.problems == []


# the font size of every select and text or number box, through shadow roots
CONTROL_FONT_JS = """() => { const sizes = []; const walk = (r) => r.querySelectorAll('*').forEach((e) => {
  if (e.matches('select.bk-input, input.bk-input')) { sizes.push(parseFloat(getComputedStyle(e).fontSize)); }
  if (e.shadowRoot) { walk(e.shadowRoot); } }); walk(document); return sizes; }"""


@pytest.mark.parametrize("tab", [0, 2, 4])
def test_large_type_enlarges_the_select_and_number_boxes(watched_page, server_url, tab):
    """Large type enlarged the text but not the select and number boxes (the browser's own 13.3 px for form
    controls; issue 40): every box on the page grows with it, by the same 25% as the text."""
    page = watched_page
    sizes = {}
    for query in ("", "&big=true"):
        page.goto(f"{server_url}?tab={tab}{query}")
        wait_for_app(page)
        if query:
            page.wait_for_function(LARGE, timeout=WAIT)
        settle(page)
        sizes[query] = page.evaluate(CONTROL_FONT_JS)
    normal, large = sizes[""], sizes["&big=true"]
    assert len(normal) == len(large) >= 3, sizes  # the sidebar's preset and seed boxes, the tab's own
    assert all(big >= 1.2 * small for small, big in zip(normal, large, strict=True)), sizes  # page order
    assert page.problems == []


def test_a_request_for_more_contrast_enlarges_every_box_as_large_type_does(watched_page, server_url):
    """prefers-contrast: more (issue 40): the select and number boxes grow by the same 25% as with Large
    type, without the button."""
    page = watched_page
    sizes = {}
    for contrast in ("no-preference", "more"):
        page.emulate_media(contrast=contrast)
        page.goto(server_url)
        wait_for_app(page)
        settle(page)
        sizes[contrast] = page.evaluate(CONTROL_FONT_JS)
    normal, more = sizes["no-preference"], sizes["more"]
    assert len(normal) == len(more) >= 2, sizes
    assert all(big >= 1.2 * small for small, big in zip(normal, more, strict=True)), sizes
    assert page.problems == []
