"""Presentation: palette, slider ends, tour, presets, glossary, plain error messages, packaging."""

import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import panel as pn
import pytest

from dashboard.app import NoiseLab, logo_uri, page_css
from dashboard.escape import plain
from dashboard.models import DEFAULTS, Settings
from dashboard.palette import GROUPS, PALETTE
from dashboard.tour import GLOSSARY, PRESETS, TABS, TOUR
from dashboard.widgets import LogSlider, TourPanel
from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]

# Machado, Oliveira & Fernandes (2009), severity 1.0, applied in linear RGB
CVD = {
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}


def _linear(hex_colour):
    rgb = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def _lab(linear_rgb):
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear_rgb
    xyz = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


@pytest.mark.parametrize("vision", ["normal", *CVD])
def test_colours_drawn_together_stay_apart(vision):
    """Every pair of colours that share a plot differs by Delta E (CIE76) >= 15 under each simulated
    colour-vision deficiency (the old palette's Laplace/Staircase pair fell to about 6)."""
    for group, names in GROUPS.items():
        labs = []
        for name in names:
            rgb = _linear(PALETTE[name])
            if vision != "normal":
                rgb = np.clip(np.array(CVD[vision]) @ rgb, 0, 1)
            labs.append(_lab(rgb))
        for i in range(len(labs)):
            for j in range(i + 1, len(labs)):
                gap = float(np.linalg.norm(labs[i] - labs[j]))
                assert gap >= 15, (vision, group, names[i], names[j], gap)


def test_views_use_the_palette_only():
    """No literal colours in the views: every colour comes from dashboard/palette.py."""
    for path in (ROOT / "dashboard" / "views").glob("*.py"):
        assert not re.findall(r"['\"]#[0-9a-fA-F]{6}['\"]", path.read_text()), path.name


@pytest.mark.parametrize("name", ["epsilon", "delta", "rho", "target", "sensitivity"])
def test_every_slider_reaches_both_ends(name):
    """Both ends of the track map inside the parameter's bounds (10**log10(0.05) is 0.04999...), and
    dragging there sets the model: the left end of epsilon used to be rejected silently."""
    settings = Settings()
    slider = LogSlider(settings, name, name)
    low, high = settings.param[name].bounds
    for position, bound in ((slider.slider.start, low), (slider.slider.end, high)):
        assert slider.value_at(position) == pytest.approx(bound, rel=1e-12)
        assert low <= slider.value_at(position) <= high
        slider.slider.value = position
        assert getattr(settings, name) == pytest.approx(bound, rel=1e-12)


def test_views_show_plain_messages_not_exception_text():
    lab = NoiseLab()
    view = lab.rewind

    def broken():
        raise RuntimeError("List parameter 'Bokeh.stylesheets' items must be instances of str")

    assert not view.guarded(broken)
    assert view.alert.visible and "stylesheets" not in view.alert.object and "Reset" in view.alert.object
    assert not view.guarded(lambda: (_ for _ in ()).throw(ValueError("epsilon must be > 0, got -1")))
    assert plain("epsilon must be > 0, got -1") in view.alert.object  # kept, shown as text
    assert view.guarded(lambda: None) and not view.alert.visible


@pytest.mark.sweep
def test_tour_steps_set_tab_and_settings():
    """Each step applies its settings on top of the defaults, opens its tab, and Next/Back move through
    all of them; the step number is a setting, so ?tour=k links to it."""
    lab = NoiseLab()
    panel = lab.tour
    assert isinstance(panel, TourPanel) and panel.start.visible
    panel.start.clicks += 1
    for k, step in enumerate(TOUR, start=1):
        assert lab.settings.tour == k
        assert lab.tabs.active == step.tab and TABS[step.tab]
        for name, value in {**{n: DEFAULTS[n] for n in ("epsilon", "delta", "users")}, **step.settings}.items():
            assert getattr(lab.settings, name) == value
        if step.frame is not None:
            assert lab.rewind.frame.value == step.frame
        assert f"step {k} of {len(TOUR)}" in panel.text.object and f"?tour={k}" in panel.text.object
        assert panel.next.disabled == (k == len(TOUR))
        panel.next.clicks += 1
    panel.back.clicks += 1
    assert lab.settings.tour == len(TOUR) - 1
    panel.close.clicks += 1
    assert lab.settings.tour == 0 and panel.start.visible
    fresh = NoiseLab(Settings(tour=5))  # as from the link ?tour=5
    assert fresh.tabs.active == TOUR[4].tab and fresh.settings.epsilon == TOUR[4].settings["epsilon"]


def test_in_presenter_mode_the_tour_is_one_line_that_keeps_the_room_s_settings():
    """With the tour at 1024x768 in presenter mode the plot went off screen (issue 43): the tour becomes
    a one-line bar with its own Back / Next / End; turning presenter mode on or off never re-applies the
    step (a slider moved during the step stays where it is)."""
    lab = NoiseLab(Settings(tour=2, present=True))
    panel = lab.tour
    assert panel.bar.visible and not panel.text.visible and not panel.buttons.visible
    assert panel.bar_text.object == f"**Tour 2/{len(TOUR)}:** {TOUR[1].title}"
    assert lab.expert_toggle.label == "Expert" and lab.share.button.label == "Share"
    panel.bar_next.clicks += 1
    assert lab.settings.tour == 3 and lab.tabs.active == TOUR[2].tab and "Tour 3/" in panel.bar_text.object
    lab.settings.epsilon = 7.0  # the presenter moves a slider during the step
    lab.settings.present = False
    assert panel.text.visible and panel.buttons.visible and not panel.bar.visible
    assert lab.settings.epsilon == 7.0 and lab.settings.tour == 3
    assert lab.expert_toggle.label == "Expert wording" and lab.share.button.label == "Share (QR code)"
    lab.settings.present = True
    panel.bar_back.clicks += 1
    assert lab.settings.tour == 2 and not panel.bar_back.disabled
    panel.bar_back.clicks += 1
    assert lab.settings.tour == 1 and panel.bar_back.disabled
    panel.bar_close.clicks += 1
    assert lab.settings.tour == 0 and not panel.bar.visible and not panel.start.visible  # no start button here


@pytest.mark.sweep
def test_presets_and_glossary():
    lab = NoiseLab()
    select = lab.controls.objects[0]
    for name, (tab, preset) in PRESETS.items():
        select.value = name  # as a click in the sidebar: the settings and the preset's tab
        assert lab.tabs.active == tab, name
        for key, value in preset.items():
            assert getattr(lab.settings, key) == value, name
        for view in lab.views:
            lab.tabs.active = lab.views.index(view)
            assert not view.alert.visible, (name, view.title, view.alert.object)
    wanted = {
        "epsilon",
        "delta",
        "rho",
        "psi (privacy boundary)",
        "ex post",
        "E|Z|",
        "sensitivity",
        "worst-case epsilon",
    }
    assert wanted <= set(GLOSSARY)
    html = lab.controls.objects[-1].objects[0].object
    assert html.count("<details>") == len(GLOSSARY)  # native disclosure: mouse, touch and keyboard


@pytest.mark.sweep
def test_headlines_lead_every_view():
    lab = NoiseLab()
    for view in lab.views:
        lab.tabs.active = lab.views.index(view)
        text = view.headline.object
        assert text.startswith("#####") and re.search(r"\d", text), view.title


def test_assets_are_inlined_from_package_data():
    assert logo_uri().startswith("data:image/svg+xml;base64,")
    css = page_css()
    assert css.count("@font-face") == 12 and "NoiselabKaTeX_Main" in css and "data:font/woff2;base64," in css


def _get(url, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=30) as resp:
                return resp.status, resp.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


@pytest.mark.subprocess
def test_installed_wheel_serves_a_session(tmp_path):
    """Build the wheel, install it outside the checkout (no editable paths), and serve one session:
    the frontier table, style sheet and fonts come from package data."""
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
    )
    wheel = next(dist.glob("noiselab-*.whl"))
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}
    check = (
        "import dashboard, noisecore; from noisecore import frontier; "
        "assert dashboard.__file__.startswith(%r), dashboard.__file__; "
        "assert len(frontier.load()['epsilon']) > 30; "
        "from dashboard.app import NoiseLab, create_app, page_css; assert 'NoiselabKaTeX' in page_css(); "
        "from bokeh.document import Document; create_app(NoiseLab()).server_doc(Document()); print('ok')"
    )
    out = subprocess.run(
        [sys.executable, "-c", check % str(target)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "w") as handle:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dashboard.serve", "--port", str(port)],
            cwd=tmp_path,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    try:
        status, body = _get(f"http://127.0.0.1:{port}/")
        assert status == 200 and "noiselab" in body
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert "Traceback" not in log.read_text(), log.read_text()[-3000:]


@pytest.mark.subprocess
def test_panel_serve_of_the_app_file_works(tmp_path):
    """The README's second way to serve: `panel serve dashboard/app.py` (absolute imports, inlined assets).
    The page's session is dropped unused after a second: its end callbacks must run cleanly (they once
    failed with "name 'pn' is not defined", because Bokeh clears the script module's globals first)."""
    port = free_port()
    log = tmp_path / "panel.log"
    with open(log, "w") as handle:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "panel",
                "serve",
                str(ROOT / "dashboard" / "app.py"),
                "--port",
                str(port),
                "--address",
                "127.0.0.1",
                "--unused-session-lifetime",
                "1000",
                "--check-unused-sessions",
                "500",
                "--log-level",
                "debug",
            ],
            cwd=tmp_path,
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    try:
        status, body = _get(f"http://127.0.0.1:{port}/app")
        assert status == 200 and "noiselab" in body and "NoiselabKaTeX_Main" in body
        deadline = time.monotonic() + 60
        while "Discarding session" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.5)
        time.sleep(1)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    text = log.read_text()
    assert "Discarding session" in text, text[-3000:]  # the unused session was dropped
    assert "Traceback" not in text and "ERROR" not in text and "failed" not in text, text[-3000:]


def test_reset_clears_the_preset_box():
    """After Reset the box still named the last preset while the sliders showed the defaults."""
    lab = NoiseLab()
    select = lab.controls.objects[0]
    reset = next(b for b in lab.controls.select(pn.widgets.Button) if b.name == "Reset")
    name = next(n for n, (_, values) in PRESETS.items() if any(DEFAULTS.get(k) != v for k, v in values.items()))
    select.value = name
    assert any(getattr(lab.settings, k) != v for k, v in DEFAULTS.items())
    reset.clicks += 1
    assert select.value == select.options[0]
    assert all(getattr(lab.settings, k) == v for k, v in DEFAULTS.items())


def test_reset_resets_the_demo_not_the_room():
    """Reset put Large type and presenter mode off (the room's display, not the demo's state); now they
    stay, with expert wording, while every other setting is back at its default."""
    lab = NoiseLab()
    reset = next(b for b in lab.controls.select(pn.widgets.Button) if b.name == "Reset")
    lab.settings.param.update(present=True, expert=True, epsilon=10.0, seed=4, stop_rule="peek")
    assert lab.settings.large_type  # presenter mode brings large type
    reset.clicks += 1
    kept = {"large_type": True, "present": True, "expert": True}
    assert all(getattr(lab.settings, k) == kept.get(k, v) for k, v in DEFAULTS.items())


def test_the_preset_box_names_a_preset_only_while_its_settings_hold():
    """The box kept naming the last preset after a slider moved; a preset's own settings keep the name,
    a slider moved, a tour step or a link clear it."""
    lab = NoiseLab()
    select = lab.controls.objects[0]
    select.value = "Low privacy: epsilon = 10"
    assert lab.settings.epsilon == 10.0 and select.value == "Low privacy: epsilon = 10"
    lab.settings.large_type = True  # the room's display: the scenario stays
    assert select.value == "Low privacy: epsilon = 10"
    lab.settings.epsilon = 8.0
    assert select.value == select.options[0]
    select.value = "Counter-example: peeking"
    assert (lab.settings.stop_rule, lab.settings.seed) == ("peek", 2) and select.value == "Counter-example: peeking"
    lab.settings.tour = 3
    assert select.value == select.options[0]


def test_the_experiments_status_never_says_none():
    """After Reset the status said "target None"; a run setting is said in words."""
    from dashboard.views.experiments import setting_words

    assert setting_words("target", None) == "target loss from the public data"
    assert setting_words("target", 0.3994) == "target loss 0.3994"
    assert setting_words("levels", (0.16, 5.0)) == "levels 0.16 to 5"
    assert setting_words("trials", 250) == "trials 250"


def test_a_tab_built_in_presenter_mode_opens_without_its_title():
    """Presenter mode hid the titles of the tabs built before it was switched on only (issue 43:
    ``?present=1``, then key 2, showed the boundaries' title)."""
    lab = NoiseLab()
    lab.settings.present = True
    for view in lab.views:  # built now, after presenter mode
        assert not view.title_pane.visible, type(view).__name__
    lab.settings.present = False
    assert all(view.title_pane.visible for view in lab.views)


def test_saved_pngs_are_named_for_their_view_and_settings():
    """A saved plot was "bokeh_plot.png" whatever it showed; now its name says the view, the figure and
    the settings, and follows them."""
    from dashboard.views.base import save_tools

    lab = NoiseLab()
    view = lab.rewind
    names = [t.callback.args["filename"] for f in view.figures for t in save_tools(f)]
    assert "noiselab-brownian-rewind-privacy-per-release-eps1-delta1e-06-seed0" in names
    assert len(names) == len(view.figures) == len(set(names))
    lab.settings.param.update(epsilon=2.5, seed=3)
    lab.settings.param.trigger("committed")
    names = [t.callback.args["filename"] for f in view.figures for t in save_tools(f)]
    assert all(name.endswith("eps2.5-delta1e-06-seed3") for name in names), names
