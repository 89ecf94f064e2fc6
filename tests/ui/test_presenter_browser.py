"""The live demo never surprises the presenter: one frame everywhere, legends keep their symbols,
large type from a link, presenter mode and keys (issue 22)."""

import re

import pytest

from tests.ui.conftest import show_tab, wait_for_app

pytestmark = pytest.mark.ui

WAIT = 60_000

# the release each part of the rewind shows: the dot (by its noise variance), the slider, the
# readout's "Release k of N" and the series markers (spans at release k)
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
  for (const m of doc.all_models) {
    if (m.type === 'Slider' && m.title === 'release') { slider = m.value + 1; }
  }
  return {dot, slider, spans};
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
    press(page, "forward")
    page.wait_for_function(f"() => ({FRAME_STATE_JS})().slider === {paused['slider'] + 1}", timeout=WAIT)
    assert_one_frame(frame_state(page))
    press(page, "back")
    press(page, "back")
    page.wait_for_function(f"() => ({FRAME_STATE_JS})().slider === {paused['slider'] - 1}", timeout=WAIT)
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
    page.screenshot(path="/tmp/pres/legend.png")
    assert page.problems == []
