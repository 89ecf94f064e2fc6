"""The app factory: one fresh lab (settings, views, template) per browser session.

Serve with ``python -m dashboard.serve`` (see README) or ``panel serve dashboard/app.py``. Imports are
absolute and every static asset (logo, style sheet, KaTeX fonts) is inlined from package data, so
both ways work, from a checkout or from an installed wheel.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import logging
import urllib.parse
from importlib import resources

import panel as pn
import param
from bokeh.models import CustomJS, ImportedStyleSheet, UIElement
from panel.io.location import Location
from panel.io.resources import LOCAL_DIST
from panel.links import Callback
from panel.util import edit_readonly

from dashboard.compute import ComputePool
from dashboard.escape import plain
from dashboard.explorer import ExperimentSpec, available_sources, chunk_calls, level_grid, prepare
from dashboard.models import DEFAULTS, ExperimentSettings, Settings, right_kind
from dashboard.palette import HEADER
from dashboard.panes import Text, TextAlert
from dashboard.server_logging import quiet_closed_tabs
from dashboard.share import SharePanel
from dashboard.tabs import REGISTRY, tab_index, view_class
from dashboard.tour import PRESETS, TABS, TOUR, TourStep
from dashboard.uploads import SIZE_CHECK_JS
from dashboard.views import BoundaryView, ExperimentsView, NoiseView, RatView, RewindView
from dashboard.views.base import FONT_PREFIX
from dashboard.views.noise import cached_calibration, comparison_for, dropout_calls
from dashboard.views.rat import cached_study
from dashboard.widgets import InUse, TourPanel, controls
from noisecore import frontier

log = logging.getLogger("noiselab")
TITLE = "noiselab: differential-privacy noise, exactly"
INTRO = (
    "Drag **epsilon**, **delta**, **rho** and the **target error**; curves follow while you drag, heavier "
    "simulations refresh when you let go. Every draw comes from the **seed**, and the page address holds the "
    "settings, so a link reproduces what you see. New here? Start the guided tour, pick a preset, or open the "
    "glossary in the sidebar."
)
URL_KEYS = {
    "epsilon": "eps",
    "delta": "delta",
    "rho": "rho",
    "target": "target",
    "sensitivity": "sens",
    "dim": "d",
    "seed": "seed",
    "stop_rule": "stop",
    "arete_source": "arete",
    "alpha": "alpha",
    "theta": "theta",
    "lam": "lam",
    "users": "users",
    "example": "example",
    "expert": "expert",
    "large_type": "big",
    "present": "present",
    "tour": "tour",
}
# the page's own state, beyond the shared settings: open tab, rewind release (1-based, as the readout
# says), the experiments tab's settings
VIEW_KEYS = {
    "tab": "tab",
    "release": "release",
    "experiments.task": "task",
    "experiments.source": "data",
    "experiments.trials": "trials",
    "experiments.levels": "levels",
    "experiments.count": "count",
    "experiments.target": "loss",
    "experiments.unrun": "notrun",
}
# the top row's labels: (normal, presenter mode), where the tour's one-line bar shares the row
TOP_LABELS = {"expert": ("Expert wording", "Expert"), "share": ("Share (QR code)", "Share")}
KATEX_FACES = (
    "AMS-Regular",
    "Caligraphic-Regular",
    "Main-Bold",
    "Main-BoldItalic",
    "Main-Italic",
    "Main-Regular",
    "Math-BoldItalic",
    "Math-Italic",
    "Size1-Regular",
    "Size2-Regular",
    "Size3-Regular",
    "Size4-Regular",
)
VIEWPORT = "width=device-width, initial-scale=1"
# on load, phones start with the sidebar closed (it overlays the page when opened); the loading
# spinner's image is fetched now: Panel fetches it when a spinner first shows, which on a busy
# server came after the work it was meant to cover, so the first spinner stayed blank
ON_LOAD_JS = """
if (window.innerWidth < 700) {
  const sidebar = document.getElementById('sidebar');
  if (sidebar) { sidebar.classList.remove('show'); }
}
new Image().src = 'static/extensions/panel/assets/arc_spinner.svg';
// Panel's Location pushes a history entry for every change of the address: Play added one per synced
// release and a slider drag one per step, so Back walked the address back frame by frame. An entry is pushed only for
// the first change after a click, tap or key press; later changes replace it, so each deliberate
// change is one entry. Back and Forward open the address they reach, as a link does: Panel's Location does
// not follow them, so the page and its address told two states apart.
if (!window.noiselabHistory) {
  window.noiselabHistory = true;
  window.addEventListener('popstate', () => { window.location.reload(); });
  const push = history.pushState.bind(history);
  let asked = false;  // a person acted since the last entry (a page load is no new entry)
  for (const kind of ['pointerdown', 'keydown']) {
    window.addEventListener(kind, () => { asked = true; }, true);
  }
  history.pushState = (state, title, url) => {
    if (!asked) { return history.replaceState(state, title, url); }
    asked = false;
    return push(state, title, url);
  };
}
"""

# when the page's websocket closes (the server stopped or the network went), the page says so at once
# and offers a reload: without it sliders still moved and headlines and plots stayed stale, silently
CONNECTION_LOST_TEXT = "The connection to the lab's server was lost: this page no longer updates."
CONNECTION_LOST_JS = """
if (!document.getElementById('noiselab-connection-lost')) {
  const banner = document.createElement('div');
  banner.id = 'noiselab-connection-lost';
  banner.className = 'noiselab-connection-lost';
  banner.setAttribute('role', 'alert');
  const text = document.createElement('span');
  text.textContent = TEXT + ' ';
  const reload = document.createElement('button');
  reload.type = 'button';
  reload.textContent = 'Reload the page';
  reload.addEventListener('click', () => window.location.reload());
  banner.append(text, reload);
  document.body.prepend(banner);
  reload.focus();
}
""".replace("TEXT", json.dumps(CONNECTION_LOST_TEXT))

# accessible names the framework's markup lacks (axe-core found them on every tab): each slider handle is
# named by its slider's label and reads its shown value ("epsilon: 1", not the log10 position "0"); the
# number boxes' step buttons, the file input, the logo and its link get names; the template's sidebar list
# (a div inside a ul) is no list; a formula that scrolls sideways can take the keyboard; what the framework
# marks aria-hidden is inert while it is (and no longer once the mark goes). Applied on load and whenever
# a part of the page is drawn again, in every shadow root.
ACCESSIBLE_NAMES_JS = """
if (!window.noiselabNames) {
  window.noiselabNames = true;
  const titleOf = (el) => {
    const root = el.getRootNode();
    const title = root.querySelector ? root.querySelector('.bk-slider-title') : null;
    return title ? title.textContent.trim() : '';
  };
  // what a screen reader says for a slider: its value in its own words ("delta 1e-06, one in 1,000,000")
  const valueText = (label, title) => {
    const text = title.replace(':', '');
    const value = parseFloat(title.split(':')[1]);
    if ((label === 'delta' || label.startsWith('delta ')) && value > 0 && value < 1) {
      return `${text}, one in ${Math.round(1 / value).toLocaleString('en-US')}`;
    }
    return text;
  };
  // the slider model drawn in a handle's shadow root
  const sliderOf = (handle) => {
    const root = handle.getRootNode();
    for (const doc of (window.Bokeh ? Bokeh.documents : [])) {
      for (const m of doc.all_models) {
        if (m.type !== 'Slider') { continue; }
        const view = Bokeh.index.find_one(m);
        if (view && (view.shadow_el === root || view.el === root.host)) { return m; }
      }
    }
    return null;
  };
  // keys on a slider: Page Up / Down move a decade on a log slider (a tenth of the range on others); on
  // a log slider an arrow moves to the next value its label shows differently (one shown step)
  const sliderKey = (handle, event) => {
    const large = event.key === 'PageUp' || event.key === 'PageDown';
    const arrow = ['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown'].includes(event.key);
    if (!large && !arrow) { return; }
    const m = sliderOf(handle);
    if (!m || m.disabled) { return; }
    const digitsClass = m.css_classes.find((c) => c.startsWith('noiselab-digits-'));
    const log = m.css_classes.includes('noiselab-log');
    if (arrow && !log) { return; }  // the slider's own step
    const up = event.key === 'PageUp' || event.key === 'ArrowRight' || event.key === 'ArrowUp';
    const dir = up ? 1 : -1;
    let to = m.value;
    if (large) {
      to += dir * (log ? 1 : (m.end - m.start) / 10);
      if (!log) { to = m.start + Math.round((to - m.start) / m.step) * m.step; }
    } else {
      const digits = digitsClass ? Number(digitsClass.split('-')[2]) : 3;
      const shown = (p) => Number(Math.pow(10, p).toPrecision(digits));
      const before = shown(m.value);
      do { to += dir * m.step; } while (shown(to) === before && to > m.start && to < m.end);
    }
    event.preventDefault();
    event.stopImmediatePropagation();
    to = Math.min(m.end, Math.max(m.start, to));
    if (to !== m.value) {
      m.value = to;
      m.value_throttled = to;  // a key press is a release: the views commit
    }
  };
  // Bokeh's tab headers take the keyboard but answered no key (and Space reached the presenter's Play):
  // the tabs pattern of WAI-ARIA: Enter or Space opens, the arrows the next or previous tab, Home / End the ends
  const selectTabs = (tab) => {
    for (const other of tab.parentNode.querySelectorAll('.bk-tab')) {
      other.setAttribute('aria-selected', String(other.classList.contains('bk-active')));
    }
  };
  const tabRole = (tab) => {
    if (tab.getAttribute('role') !== 'tab') { tab.setAttribute('role', 'tab'); }
    const selected = String(tab.classList.contains('bk-active'));
    if (tab.getAttribute('aria-selected') !== selected) { tab.setAttribute('aria-selected', selected); }
    if (tab.dataset.noiselabKeys) { return; }
    tab.dataset.noiselabKeys = '1';
    tab.addEventListener('click', () => requestAnimationFrame(() => selectTabs(tab)));
    tab.addEventListener('keydown', (event) => {
      const tabs = [...tab.parentNode.querySelectorAll('.bk-tab')];
      let target = null;
      if (event.key === 'Enter' || event.key === ' ') { target = tab; }
      if (event.key === 'ArrowRight') { target = tabs[(tabs.indexOf(tab) + 1) % tabs.length]; }
      if (event.key === 'ArrowLeft') { target = tabs[(tabs.indexOf(tab) + tabs.length - 1) % tabs.length]; }
      if (event.key === 'Home') { target = tabs[0]; }
      if (event.key === 'End') { target = tabs[tabs.length - 1]; }
      if (!target) { return; }
      event.preventDefault();
      event.stopImmediatePropagation();
      target.click();
      target.focus();
    }, {capture: true});
  };
  const name = (el) => {
    if ((el.hasAttribute('aria-hidden') || el.dataset.noiselabInert) && el.tagName !== 'svg') {
      // what the framework hides from screen readers takes no keyboard focus either
      const hidden = el.getAttribute('aria-hidden') === 'true';
      if (hidden && !el.inert) { el.inert = true; el.dataset.noiselabInert = '1'; }
      if (!hidden && el.dataset.noiselabInert) { el.inert = false; delete el.dataset.noiselabInert; }
      return;
    }
    if (el.classList.contains('noUi-handle')) {
      const title = titleOf(el);
      const label = title.split(':')[0].trim() || 'value';
      el.setAttribute('aria-label', label);
      if (title) { el.setAttribute('aria-valuetext', valueText(label, title)); }
      if (!el.dataset.noiselabKeys) {
        el.dataset.noiselabKeys = '1';
        el.addEventListener('keydown', (event) => sliderKey(el, event), {capture: true});
      }
    } else if (el.matches('button.bk-spin-btn-up')) {
      el.setAttribute('aria-label', 'increase');
    } else if (el.matches('button.bk-spin-btn-down')) {
      el.setAttribute('aria-label', 'decrease');
    } else if (el.matches('input[type=file]') && !el.hasAttribute('aria-label')) {
      el.setAttribute('aria-label', 'Choose a CSV file (a header row, then numeric rows)');
    } else if (el.matches('img.app-logo')) {
      el.setAttribute('alt', 'noiselab logo');
    } else if (el.matches('a.navbar-brand')) {
      el.setAttribute('aria-label', 'noiselab: back to the first screen');
    } else if (el.matches('.bk-tab')) {
      tabRole(el);
    } else if (el.matches('div.bk-header') && el.parentNode instanceof ShadowRoot && el.querySelector('.bk-tab')) {
      // Bokeh draws a tab bar after its panels in the page (placed on top by the grid): the keyboard then
      // reached the tabs only after the whole open tab. Put it first, where it is seen
      const first = [...el.parentNode.children].find((c) => c.tagName === 'DIV');
      if (first && first !== el) { el.parentNode.insertBefore(el, first); }
      const list = el.querySelector('.bk-tab').parentNode;
      if (list.getAttribute('role') !== 'tablist') { list.setAttribute('role', 'tablist'); }
    } else if (el.matches('ul.nav.flex-column')) {
      el.setAttribute('role', 'none');
    } else if (el.matches('div#main')) {
      el.setAttribute('role', 'main');  // landmarks a screen reader jumps between (the header is a nav)
    } else if (el.matches('div#sidebar')) {
      el.setAttribute('role', 'complementary');
      el.setAttribute('aria-label', 'Settings');
    } else if (el.matches('div.app-header')) {
      el.setAttribute('role', 'heading');  // the page's one level-one heading: its title
      el.setAttribute('aria-level', '1');
    } else if (el.classList.contains('katex-display')) {
      // only while it scrolls sideways (a hidden tab's formula has no width, and must not take the keyboard)
      const shown = !el.checkVisibility || el.checkVisibility({visibilityProperty: true});
      if (shown && el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0) {
        el.setAttribute('tabindex', '0');
        el.setAttribute('role', 'group');
        if (!el.hasAttribute('aria-label')) { el.setAttribute('aria-label', 'scrolls sideways'); }
      } else if (el.getAttribute('tabindex') === '0') {
        el.removeAttribute('tabindex');
      }
    }
  };
  const SELECTOR = '[aria-hidden], [data-noiselab-inert], .noUi-handle, button.bk-spin-btn, input[type=file], '
    + 'img.app-logo, a.navbar-brand, ul.nav.flex-column, .katex-display, div.bk-header, .bk-tab, '
    + 'div#main, div#sidebar, div.app-header';
  const watched = new WeakSet();
  let pending = false;
  const sweep = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.matches(SELECTOR)) { name(el); }
      if (el.shadowRoot) { watch(el.shadowRoot); sweep(el.shadowRoot); }
    }
  };
  const again = () => {
    if (pending) { return; }
    pending = true;
    requestAnimationFrame(() => { pending = false; sweep(document); });
  };
  const watch = (root) => {
    if (watched.has(root)) { return; }
    watched.add(root);
    new MutationObserver(again).observe(root, {
      childList: true, subtree: true, characterData: true, attributes: true,
      attributeFilter: ['aria-valuenow', 'aria-hidden'],
    });
  };
  watch(document);
  sweep(document);
}
"""

# large type and presenter mode from the address (?big=true, ?present=1): the toggles' own callbacks
# run only when they change
LARGE_ON_LOAD_JS = "document.body.classList.add('noiselab-large');\n"
PRESENT_ON_LOAD_JS = "document.body.classList.add('noiselab-present');\n"
PRESENT_JS = "document.body.classList.toggle('noiselab-present', Boolean(toggle.active));"
# the presenter's keys, installed once per page: they press the buttons a person would press, and never
# act while a box, a list or a slider has the keyboard
KEYS_JS = """
if (!window.noiselabKeys) {
  window.noiselabKeys = true;
  const deep = (selector, root = document, found = []) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.matches(selector)) { found.push(el); }
      if (el.shadowRoot) { deep(selector, el.shadowRoot, found); }
    }
    return found;
  };
  const press = (name) => {
    const host = deep('.' + name)[0];
    const button = host && (host.shadowRoot ? host.shadowRoot.querySelector('button') : host.querySelector('button'));
    if (button) { button.click(); return true; }
    return false;
  };
  const playing = () => Object.keys(window).some(k => k.startsWith('noiselabTimer') && window[k]);
  const actions = {
    ' ': () => press(playing() ? 'rewind-pause' : 'rewind-play'),
    'ArrowLeft': () => press('rewind-back'),
    'ArrowRight': () => press('rewind-forward'),
    'Home': () => press('rewind-first'),
    'End': () => press('rewind-last'),
    'p': () => press('noiselab-present-toggle'),
    'P': () => press('noiselab-present-toggle'),
  };
  const tab = (i) => () => {
    const headers = deep('.bk-tab').filter(el => TAB_LABELS.includes(el.textContent.trim()));
    if (headers[i]) { headers[i].click(); return true; }
    return false;
  };
  TAB_LABELS.forEach((_, i) => { actions[String(i + 1)] = tab(i); });
  document.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.altKey || event.metaKey || event.repeat && event.key !== 'ArrowLeft'
        && event.key !== 'ArrowRight') { return; }
    const target = event.composedPath()[0];
    const tag = target && target.tagName ? target.tagName.toUpperCase() : '';
    const typing = ['INPUT', 'TEXTAREA', 'SELECT'].includes(tag) || (target && target.isContentEditable)
      || (target && target.getAttribute && ['slider', 'textbox', 'spinbutton'].includes(target.getAttribute('role')));
    const action = actions[event.key];
    // a focused tab, button or link keeps the keys it answers to (Space presses a focused button)
    const role = target && target.getAttribute ? target.getAttribute('role') || '' : '';
    const isTab = role === 'tab' || (target && target.classList && target.classList.contains('bk-tab'));
    const isButton = tag === 'BUTTON' || tag === 'SUMMARY' || role === 'button';
    const own = isTab ? ['Enter', ' ', 'ArrowLeft', 'ArrowRight', 'Home', 'End']
      : isButton ? ['Enter', ' '] : tag === 'A' ? ['Enter'] : [];
    if (typing || !action || own.includes(event.key)) { return; }
    if (action()) { event.preventDefault(); }
  }, true);
}
""".replace("TAB_LABELS", json.dumps(list(TABS)))


def _asset(*parts) -> resources.abc.Traversable:
    return resources.files("dashboard").joinpath("assets", *parts)


ASSETS_ROUTE = "noiselab-assets"


@functools.cache
def asset_url(route: str, *parts) -> str:
    """An asset's address under ``route`` (served by ``serve`` as static files), versioned by its
    content so the browser keeps it (Tornado marks versioned files cacheable for good)."""
    digest = hashlib.sha256(_asset(*parts).read_bytes()).hexdigest()[:12]
    return f"{route}/{'/'.join(parts)}?v={digest}"


@functools.cache
def logo_uri(route: str | None = None) -> str:
    if route is not None:
        return asset_url(route, "logo.svg")
    return "data:image/svg+xml;base64," + base64.b64encode(_asset("logo.svg").read_bytes()).decode()


@functools.cache
def page_css(route: str | None = None) -> str:
    """The style sheet and KaTeX's font faces, declared at document level: faces declared only inside
    a shadow root (where Panel's LaTeX pane links KaTeX's CSS) are ignored by the browser. With a
    static ``route`` the fonts are addresses fetched once; without (``panel serve``), inlined."""
    faces = []
    for face in KATEX_FACES:
        family, style = face.split("-")
        name = f"KaTeX_{family}-{style}.woff2"
        if route is not None:
            src = asset_url(route, "katex", name)
        else:
            src = "data:font/woff2;base64," + base64.b64encode(_asset("katex", name).read_bytes()).decode()
        weight = "700" if "Bold" in style else "400"
        slant = "italic" if "Italic" in style else "normal"
        faces.append(
            f"@font-face{{font-family:{FONT_PREFIX}KaTeX_{family};font-style:{slant};font-weight:{weight};"
            f"src:url({src}) format('woff2')}}"
        )
    return "\n".join(faces) + "\n" + _asset("style.css").read_text()


class NoiseLab(pn.viewable.Viewer):
    """The whole lab without a template: what a notebook shows.

    Views of hidden tabs compute their data the first time their tab is shown, behind a loading state.
    """

    VIEW_CLASSES = tuple(view_class(tab) for tab in REGISTRY)

    def __init__(self, settings: Settings | None = None, pool: ComputePool | None = None, **params):
        super().__init__(**params)
        self.settings = settings or Settings()
        self.experiment_config = ExperimentSettings()  # the experiments tab's, here so a link can set it
        self.pool = pool
        self._views = [None] * len(self.VIEW_CLASSES)
        self._slots = [pn.Column(sizing_mode="stretch_width", min_height=300) for _ in self.VIEW_CLASSES]
        self.in_use = InUse()
        self.controls = controls(
            self.settings, show_tab=self._show_tab, on_reset=self._reset_page_state, in_use=self.in_use
        )
        self.tabs = pn.Tabs(
            *zip(TABS, self._slots, strict=True),
            # not dynamic: re-rendering a tab on each switch left the old plots' data bounds in the
            # axis ranges (Bokeh keeps them per plot view), so axes stopped following the data
            dynamic=False,
            sizing_mode="stretch_width",
            stylesheets=[".bk-headers-wrapper { flex-wrap: wrap; }"],
        )
        # only the first tab's view is built now (a session opens in about half the time); the others
        # are built, and compute, when their tab is first shown
        self._activate(0, now=True)
        self.tabs.param.watch(lambda event: self._activate(event.new, deferred=True), "active")
        self.in_use.show(REGISTRY[self.tabs.active].uses)
        self.tabs.param.watch(lambda event: self.in_use.show(REGISTRY[event.new].uses), "active")
        self.tour = TourPanel(self.settings, self.show_step)
        self.intro = Text(INTRO, sizing_mode="stretch_width", css_classes=["noiselab-intro"])
        self.present_toggle = pn.widgets.Toggle.from_param(
            self.settings.param.present,
            label="Present (P)",
            css_classes=["noiselab-present-toggle"],
            width=130,
            margin=(4, 10),
        )
        self.present_toggle.jscallback(value=PRESENT_JS, args={"toggle": self.present_toggle})
        self.share = SharePanel()  # the served page gives it the page's address (create_app)
        # a toggle button, named by its text (a bare checkbox had no accessible name: axe's "label")
        self.expert_toggle = pn.widgets.Toggle.from_param(
            self.settings.param.expert, label="Expert wording", width=150, margin=(4, 10)
        )
        # page-wide preferences at the top right; they wrap on a phone
        self.present_row = pn.FlexBox(
            self.tour.bar,
            self.expert_toggle,
            self.share.button,
            self.present_toggle,
            justify_content="flex-end",
            flex_wrap="wrap",
            sizing_mode="stretch_width",
        )
        self.settings.param.watch(self._label_top_row, "present")
        self._label_top_row()

    def _label_top_row(self, *_events):
        """Short labels in presenter mode: the tour's one-line bar shares the top row at 1024 px."""
        short = int(self.settings.present)
        for button, key in ((self.expert_toggle, "expert"), (self.share.button, "share")):
            button.param.update(label=TOP_LABELS[key][short], width=(150, 85)[short])

    def _reset_page_state(self):
        """Reset's share beyond the settings: the first release and the experiments defaults, so on the
        first tab the address is bare again (the open tab stays)."""
        self.apply_link_state({"tab": self.tabs.active}, complete=True)  # an uploaded file stays chosen

    def _view(self, index: int):
        if self._views[index] is None:
            extra = {"config": self.experiment_config} if self.VIEW_CLASSES[index] is ExperimentsView else {}
            view = self.VIEW_CLASSES[index](self.settings, active=False, pool=self.pool, **extra)
            view._on_present()  # a tab built in presenter mode opens without its title and details
            self._views[index] = view
        return self._views[index]

    def release_browser_callbacks(self):
        """Forget the JavaScript callbacks of this lab's widgets (call when the session ends). Panel
        1.9 keeps every ``jscallback`` in a class-level registry whose entries refer to their own
        source, so without this every session stayed in memory (about 1.7 MB each)."""
        sources = [*self.controls.select(pn.widgets.Widget), self.present_toggle, self.share.button]
        sources.extend(self.share.card.select(pn.widgets.Widget))
        for view in self._views:
            if view is not None:
                sources.extend(view.layout.select(pn.widgets.Widget))
        for source in sources:
            Callback.registry.pop(source, None)

    def end_session(self):
        """The browser tab has closed: drop queued work nobody else waits for, and free the session."""
        for view in self._views:
            if view is not None:
                view.cancel_all()
        self.release_browser_callbacks()

    def _activate(self, index, deferred=False, now=False):
        doc = pn.state.curdoc
        if deferred and not self._slots[index].objects and doc is not None and doc.session_context is not None:
            # building a view takes a second or more on a busy server: the slot's spinner goes to the
            # browser first, and the view is built just after
            self._slots[index].loading = True
            doc.add_timeout_callback(functools.partial(self._activate, index), 30)
            return
        shown = self._view(index)
        unsent = not self._slots[index].objects
        active = self.tabs.active
        for i, view in enumerate(self._views):
            if view is not None:
                # a view not yet on the page computes before its plots are sent, so no plot reaches
                # the browser empty (Bokeh warns about the ranges of an empty plot)
                view.set_active(i == active, now=now or (unsent and view is shown))
        if unsent:
            self._slots[index].objects = [shown]
        self._slots[index].loading = False

    def _show_tab(self, index):
        self.tabs.active = index

    def show_step(self, step: TourStep):
        """Apply a tour step: its settings on top of the defaults, its tab, its rewind frame."""
        self.settings.apply(step.settings)
        self.tabs.active = step.tab
        if step.frame is not None:
            self.rewind.show_frame(step.frame)

    def link_state(self) -> dict:
        """The page's own state that differs from its defaults, by VIEW_KEYS name (what a link adds
        to the settings). An uploaded file cannot come from a link, so the data choice 'upload' is left
        out."""
        state = {"tab": self.tabs.active, "release": self.rewind.frame.value + 1}
        config = self.experiment_config
        for name in config.param.objects("existing"):
            if f"experiments.{name}" in VIEW_KEYS:
                state[f"experiments.{name}"] = getattr(config, name)
        if config.source == "upload" and self._views[tab_index("experiments")] is not None:
            state["experiments.unrun"] = True  # the file stays here: a link's receiver runs nothing
        defaults = {"tab": 0, "release": 1, "experiments.source": "upload"}
        defaults.update({f"experiments.{n}": p.default for n, p in config.param.objects("existing").items()})
        return {
            name: value
            for name, value in state.items()
            if value != defaults[name] and not (name == "experiments.source" and value == "upload")
        }

    def apply_link_state(self, values: dict, complete: bool = False) -> dict[str, str]:
        """Apply a link's page state (by VIEW_KEYS name) value by value; with ``complete``, names left
        out go back to their defaults. Returns ``{query key: reason}`` for the values refused."""
        config = self.experiment_config
        if complete:
            defaults = {f"experiments.{n}": p.default for n, p in config.param.objects("existing").items()}
            defaults.update({"tab": 0, "release": 1})
            values = {**{n: defaults[n] for n in VIEW_KEYS if n not in values}, **values}
            if config.source == "upload":  # a file the link cannot hold stays chosen
                values.pop("experiments.source", None)
        refused = {}
        # first whether the experiments were run: a tab the link opens is built seeing it
        values = dict(sorted(values.items(), key=lambda item: item[0] != "experiments.unrun"))
        for name, value in values.items():
            key = VIEW_KEYS[name]
            if name == "experiments.unrun":
                if not isinstance(value, bool):
                    refused[key] = "must be 1 (the settings were not run) or 0"
                elif self._views[tab_index("experiments")] is None:  # once built, the tab keeps it
                    config.unrun = value
                continue
            try:
                empty_target = value is None and name == "experiments.target"  # set from public data
                if not empty_target and (
                    isinstance(value, bool) or not isinstance(value, int | float | str | list | tuple)
                ):
                    raise TypeError(name)
                if name == "tab":
                    if not (isinstance(value, int) and 0 <= value < len(TABS)):
                        raise ValueError(name)
                    self.tabs.active = value
                elif name == "release":
                    if not (isinstance(value, int) and 1 <= value <= self.rewind.frame.end + 1):
                        raise ValueError(name)
                    if self.rewind.frame.value != value - 1:
                        self.rewind.show_frame(value - 1)
                else:
                    attr = name.split(".", 1)[1]
                    if attr == "source" and (value == "upload" or value not in available_sources()):
                        raise ValueError(name)
                    if isinstance(value, list | tuple):
                        value = tuple(value)
                        if attr != "levels" or len(value) != 2 or not value[0] < value[1]:
                            raise ValueError(name)
                    elif not (value is None or right_kind(config.param[attr], value)):
                        raise TypeError(name)
                    if getattr(config, attr) != value:
                        setattr(config, attr, value)
            except (ValueError, TypeError, OverflowError):
                refused[key] = f"must be {_link_allowed(self, name)}"
        return refused

    @property
    def rewind(self) -> RewindView:
        return self._view(tab_index("rewind"))

    @property
    def boundaries(self) -> BoundaryView:
        return self._view(tab_index("boundaries"))

    @property
    def noise(self) -> NoiseView:
        return self._view(tab_index("noise"))

    @property
    def rat(self) -> RatView:
        return self._view(tab_index("rat"))

    @property
    def experiments(self) -> ExperimentsView:
        return self._view(tab_index("experiments"))

    @property
    def views(self):
        """All the views (building any not built yet)."""
        return [self._view(i) for i in range(len(self.VIEW_CLASSES))]

    def __panel__(self):
        return pn.Row(
            pn.Column(self.controls, width=300),
            pn.Column(self.present_row, self.share, self.intro, self.tour, self.tabs, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
        )


def _link_allowed(lab: NoiseLab, name: str) -> str:
    if name == "tab":
        return f"a whole number from 0 to {len(TABS) - 1}"
    if name == "release":
        return f"a whole number from 1 to {lab.rewind.frame.end + 1}"
    parameter = lab.experiment_config.param[name.split(".", 1)[1]]
    if isinstance(parameter, param.Selector):
        objects = available_sources() if name == "experiments.source" else parameter.objects
        return "one of " + ", ".join(str(o) for o in objects if o != "upload")
    if isinstance(parameter, param.Range):
        low, high = parameter.bounds
        return f"two numbers from {low:g} to {high:g}, the lower first"
    if isinstance(parameter, param.Integer):
        low, high = parameter.bounds
        return f"a whole number from {low} to {high}"
    return "a positive number"


def warm_up(pool: ComputePool) -> int:
    """Start what a class asks for first on the pool, so those clicks answer at once: the dropout curves
    of the tour's and the presets' noise settings, the RAT study at the defaults and at the presets on its
    tab, and the experiments tab's default run. Returns the number of computations started (the
    experiment's chunks counted as one)."""
    table = frontier.load()
    # first the experiments tab's first screen: the default task (fitted in about 0.1 s), then its quick
    # run's chunks, queued before the rest (the same calls the view makes, so a session joins them)
    config, spec = ExperimentSettings(), ExperimentSpec()
    try:
        prepared = pool.future(prepare, spec).result(timeout=60)
    except Exception as exc:  # e.g. an unreachable Dask cluster: the views will say so when asked
        log.warning("warm-up skipped the experiments tab: %s", str(exc)[:200])
    else:
        for call in chunk_calls(
            prepared.task,
            levels=level_grid(*config.levels, count=config.count),
            trials=config.trials,
            rng=spec.seed,
            target=prepared.suggested_target,
            delta=Settings().delta,
        ):
            pool.future(call.func, *call.args, **call.keywords)
    started = 0
    heavy = tab_index("noise")  # the tabs from the noise view on compute on the pool
    scenarios = [{}] + [step.settings for step in TOUR if step.tab >= heavy]
    scenarios += [preset for tab, preset in PRESETS.values() if tab >= heavy]
    for preset in scenarios:
        settings = Settings()
        settings.apply(preset)
        exact = None
        if settings.arete_source == "calibrated":  # the noise view calibrates at the slider's epsilon
            exact = cached_calibration(settings.epsilon, settings.sensitivity)
        _, calls = dropout_calls(settings, comparison_for(settings, table, arete=exact))
        study = functools.partial(
            cached_study, epsilon=settings.epsilon, delta=settings.delta, rho=settings.rho, rng=settings.seed
        )
        for call in [*calls, study]:
            pool.future(call.func, *call.args, **call.keywords)
            started += 1
    return started + 1


def _warmed(pool: ComputePool) -> ComputePool:
    warm_up(pool)
    return pool


def _server_doc_in_one_pass(template, server_doc, doc=None, title=None, location=True, *, session_location=None):
    """Attach the page to its document with Bokeh's model graph recomputed once rather than after
    every JavaScript link Panel adds (about 20 passes): a session opens about 1 s sooner. With
    ``session_location``, that is the page's address object (see :class:`AddressLocation`)."""
    if session_location is not None:
        location = session_location
    doc = doc if doc is not None else pn.state.curdoc
    if doc is None:
        return server_doc(doc, title, location)
    with doc.models.freeze():
        result = server_doc(doc, title, location)
    _one_sheet_per_address(doc)
    # Panel adds the template's root to a process-wide list and never takes it out (its clean-up looks in
    # a map nothing fills): filled here, Panel's own clean-up removes it when the session ends. Found by
    # its document, not by position: Bokeh 3.10 builds and ends sessions on several threads at once.
    for ref in list(pn.state._fake_roots):
        if pn.state._views.get(ref, (None, None, None))[2] is doc:
            template._refs[doc] = ref
    return result


def _one_sheet_per_address(doc) -> int:
    """Share one style-sheet model per address among a page's models. Panel 1.10 looks up its per-document
    sheet cache through a model's document, which a model built inside ``_server_doc_in_one_pass``'s freeze
    does not have yet: every Column, Button and pane restyled during the build got sheets of its own (143
    extra models a first page on 1.10.0; none on 1.9.4, where the cache is found through the current
    document). Returns how many sheets were replaced."""
    sheets = [model for model in doc.models if type(model) is ImportedStyleSheet]
    if len(sheets) == len({sheet.url for sheet in sheets}):  # Panel 1.9: nothing to share
        return 0
    canonical, replaced = {}, 0
    with doc.models.freeze():
        for model in list(doc.models):
            if not isinstance(model, UIElement) or not model.stylesheets:
                continue
            own = model.stylesheets
            shared = [canonical.setdefault(s.url, s) if isinstance(s, ImportedStyleSheet) else s for s in own]
            changed = sum(a is not b for a, b in zip(shared, own, strict=True))
            if changed:
                replaced += changed
                model.stylesheets = shared
    return replaced


MAX_ADDRESS_VALUE = 64  # characters: longer address values are refused unread


def _address_text(raw) -> str:
    """One query argument as text (Bokeh hands over ``[bytes, ...]``; the last one counts)."""
    if isinstance(raw, list):
        raw = raw[-1] if raw else b""
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)


def link_values(arguments: dict) -> tuple[dict, dict]:
    """Settings from a page address's query arguments (``{key: [bytes, ...]}``, as Bokeh hands them
    over): values decoded like Panel's location sync (JSON where it parses, else text). Returns the
    values by setting name and, by query key, the reasons for the keys refused here: keys that name
    no setting and values too long to be one (a 4,300-digit number or a deeply nested list is never
    parsed)."""
    if not isinstance(arguments, dict):
        raise TypeError(f"arguments must be a dict of query arguments, got {type(arguments).__name__}")
    names = {key: name for name, key in {**URL_KEYS, **VIEW_KEYS}.items()}
    values, refused = {}, {}
    for key, raw in arguments.items():
        text = _address_text(raw)
        if key not in names:
            refused[key] = "not a setting"
        elif len(text) > MAX_ADDRESS_VALUE:
            refused[key] = f"longer than {MAX_ADDRESS_VALUE} characters"
        else:
            try:
                values[names[key]] = json.loads(text)
            except (ValueError, RecursionError):
                values[names[key]] = text
            if key in ("present", "big", "notrun") and values[names[key]] in (0, 1):  # ?big=1, as a person types it
                values[names[key]] = bool(values[names[key]])
    return values, refused


def refused_message(refused: dict, arguments: dict) -> str:
    """A plain note naming the address values that were ignored (keys and values shown short and as
    text: markup in either is displayed, never rendered)."""
    parts = []
    for key, reason in refused.items():
        shown = f"{plain(key, limit=40)}={plain(_address_text(arguments.get(key, [b''])), limit=40)}"
        parts.append(f'"{shown}" ({plain(reason)})')
    return (
        "Ignored from the page address: "
        + "; ".join(parts)
        + ". Everything else in the address was applied; the sliders show the values in use."
    )


def address_value(value) -> str:
    """A value as the address writes it: numbers in their shortest exact form (``50``, not ``50.0`` or
    ``49.99999999999999``; float noise below 12 significant digits dropped), pairs as a JSON list."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, tuple | list):
        return "[" + ",".join(address_value(v) for v in value) + "]"
    number = float(f"{float(value):.12g}")
    return str(int(number)) if number.is_integer() and abs(number) < 1e15 else repr(number)


def split_link_values(values: dict) -> tuple[dict, dict]:
    """Link values by setting name: (the shared settings', the page's own, by VIEW_KEYS name)."""
    own = {name: value for name, value in values.items() if name in VIEW_KEYS}
    return {name: value for name, value in values.items() if name not in VIEW_KEYS}, own


class AddressLocation(Location):
    """A session's page address, read and written only through :func:`link_values` and
    ``Settings.apply_values``. Panel 1.9's own reading gave HTTP 500 for a query value of over 4,300
    digits (an unbounded ``int()``) and for an IPv6 Host header (split on ':'), and took ``true`` as 1
    for a number; its query parsing is never used here."""

    @classmethod
    def for_request(cls, request) -> AddressLocation:
        """The address of ``request`` (a Bokeh session's request), its query left empty: the
        settings write it."""
        location = cls()
        host = str(getattr(request, "host", "") or "")
        if host.startswith("["):  # an IPv6 literal: [::1]:5006
            hostname, _, port = host.partition("]")
            hostname, port = hostname + "]", port[1:]
        else:
            hostname, _, port = host.partition(":")
        pathname = str(getattr(request, "uri", "/") or "/").split("?", 1)[0].split("#", 1)[0]
        with edit_readonly(location):
            location.param.update(hostname=hostname, port=port, pathname=pathname)
        return location

    def address(self) -> str:
        """The page's full address: the browser's scheme and host (as it reached the page, through any
        proxy), this server's path and the query the settings wrote."""
        scheme = self.protocol if self.protocol in ("http:", "https:") else "http:"
        host = self.hostname + (f":{self.port}" if self.port else "")
        return f"{scheme}//{host}{self.pathname or '/'}{self.search}"

    @property
    def query_params(self) -> dict:
        """The query as text, key by key (used by Panel's own watchers): long values left out."""
        pairs = urllib.parse.parse_qsl(self.search[1:], keep_blank_values=True, max_num_fields=200)
        return {k: v for k, v in pairs if len(k) <= MAX_ADDRESS_VALUE and len(v) <= MAX_ADDRESS_VALUE}

    def follow(self, lab: NoiseLab, on_refused) -> None:
        """Keep the address and ``lab`` in step: changes of its settings, tab, rewind release and
        experiments settings rewrite the query (defaults left out: the defaults give a bare address); a
        query the browser sends (on load) is applied value by value, and
        ``on_refused(refused, arguments)`` hears of values that were not; then the query is rewritten
        from the values in use."""
        settings = lab.settings
        write = lambda *_events: self._write(lab)  # noqa: E731
        settings.param.watch(write, list(URL_KEYS))
        lab.experiment_config.param.watch(write, [n.split(".", 1)[1] for n in VIEW_KEYS if n.startswith("exp")])
        lab.tabs.param.watch(write, "active")
        lab.rewind.frame.param.watch(write, "value")
        self.param.watch(lambda event: self._read(lab, event.new, on_refused), "search")
        self._write(lab)

    def _write(self, lab: NoiseLab) -> None:
        query = {}
        for name, key in URL_KEYS.items():
            value = getattr(lab.settings, name)
            if value != DEFAULTS[name] or isinstance(value, bool) != isinstance(DEFAULTS[name], bool):
                query[key] = "1" if name == "present" else address_value(value)
        for name, value in lab.link_state().items():
            query[VIEW_KEYS[name]] = "1" if value is True else address_value(value)
        search = "?" + urllib.parse.urlencode(query, safe="[],") if query else ""
        self._written = search  # its echo (from here or the browser) is not read back
        if search != self.search:
            self.search = search

    def _read(self, lab: NoiseLab, search: str, on_refused) -> None:
        if search == getattr(self, "_written", None):
            return
        settings = lab.settings
        try:
            pairs = urllib.parse.parse_qsl((search or "")[1:], keep_blank_values=True, max_num_fields=200)
        except ValueError:  # more than 200 fields
            pairs = []
        arguments = {key: [value.encode()] for key, value in pairs}
        values, refused = link_values(arguments)
        values, own = split_link_values(values)
        # a key left out of the address is at its default, or at its tour step's value in a tour link
        base, tour = dict(DEFAULTS), values.get("tour")
        if isinstance(tour, int) and not isinstance(tour, bool) and 1 <= tour <= len(TOUR):
            step = TOUR[tour - 1]
            base.update(step.settings)
            own = {"tab": step.tab, **({"release": step.frame + 1} if step.frame is not None else {}), **own}
        values = {**{n: v for n, v in base.items() if URL_KEYS[n] not in arguments}, **values}
        if values.get("present") is True and "big" not in arguments:
            values.pop("large_type")  # presenter mode brings large type
        changed = {
            name: value
            for name, value in values.items()
            if not (
                value == getattr(settings, name)
                and isinstance(value, bool) == isinstance(getattr(settings, name), bool)
            )
        }
        refused.update(
            {URL_KEYS[name]: why for name, why in settings.apply_values(changed).items() if name in URL_KEYS}
        )
        refused.update(lab.apply_link_state(own, complete=True))
        if refused:
            on_refused(refused, arguments)
        self._write(lab)


def create_app(
    lab: NoiseLab | None = None, pool: ComputePool | None = None, assets: str | None = None
) -> pn.template.BootstrapTemplate:
    """Build a fresh app: called once per browser session by the server (``pool`` is the server's
    compute pool, shared by its sessions; ``assets`` the route where it serves ``dashboard/assets``,
    else the logo and fonts are inlined into the page)."""
    # the address's ignored keys and values: shown as text, never typeset (disable_math) or rendered
    notice = TextAlert("", alert_type="warning", visible=False, sizing_mode="stretch_width")
    settings = lab.settings if lab is not None else Settings()
    doc = pn.state.curdoc
    served = doc is not None and doc.session_context is not None

    def show_refused(refused, arguments):
        notice.object = refused_message(refused, arguments)
        notice.visible = True
        log.info("ignored address values: %s", ", ".join(sorted(repr(k[:20]) for k in refused))[:200])

    if served:  # before the first view is built, so it computes once
        arguments = {k: v for k, v in (pn.state.session_args or {}).items() if not k.startswith("bokeh-")}
        values, refused = link_values(arguments)
        values, own = split_link_values(values)
        refused.update({URL_KEYS[name]: why for name, why in settings.apply_values(values).items() if name in URL_KEYS})
    lab = lab or NoiseLab(settings, pool=pool)
    if served:
        refused.update(lab.apply_link_state(own))
        if refused:
            show_refused(refused, arguments)
    template = pn.template.BootstrapTemplate(
        title=TITLE,
        logo=logo_uri(assets),
        sidebar=[lab.controls],
        main=[notice, lab.present_row, lab.share, lab.intro, lab.tour, lab.tabs],
        sidebar_width=320,
        header_background=HEADER,
        meta_viewport=VIEWPORT,
        # Panel's busy indicator follows the process-wide busy state: every event of any session
        # re-rendered every session's indicator (two thirds of the server's time with 25 sessions),
        # and it spun for other people's work. Each view shows its own loading state instead.
        busy_indicator=None,
    )
    template.config.raw_css = [page_css(assets)]
    template.server_doc = functools.partial(_server_doc_in_one_pass, template, template.server_doc)
    if served:
        on_load = ON_LOAD_JS + SIZE_CHECK_JS + KEYS_JS + ACCESSIBLE_NAMES_JS
        on_load += LARGE_ON_LOAD_JS if settings.large_type else ""
        on_load += PRESENT_ON_LOAD_JS if settings.present else ""
        doc.js_on_event("document_ready", CustomJS(code=on_load))
        doc.js_on_event("connection_lost", CustomJS(code=CONNECTION_LOST_JS))
        doc.on_session_destroyed(lambda _context: lab.end_session())
        # with several server processes a page's websocket may reach another process, which then builds
        # the session without rendering the page: Panel's style sheets must still come from this server
        doc._template_variables.setdefault(
            "dist_url", f"{pn.state.rel_path}/{LOCAL_DIST}" if pn.state.rel_path else LOCAL_DIST
        )
        location = AddressLocation.for_request(doc.session_context.request)
        location.follow(lab, show_refused)  # later changes of the query the same way
        lab.share.address = location.address
        location.param.watch(lambda _event: lab.share.refresh(), "search")
        template.server_doc = functools.partial(template.server_doc, session_location=location)
    return template


if pn.state.served and __name__ != "dashboard.app":
    # `panel serve dashboard/app.py` runs this file as a script in a throwaway module whose globals Bokeh
    # clears when a session ends, before the session's end callbacks run: the app comes from the imported
    # module, so those callbacks still find what they use.
    from dashboard import app as _imported

    quiet_closed_tabs()
    from dashboard.hardening import harden_running_servers

    # once per process (the search walks the garbage collector's objects): the lab's routes only from now
    # on, from the start with --setup
    if not pn.state.cache.setdefault("noiselab-hardening-checked", False) and harden_running_servers():
        log.warning(
            "served without --setup dashboard/panel_setup.py: the framework's extra routes were open "
            "until this first page"
        )
    pn.state.cache["noiselab-hardening-checked"] = True
    pn.extension("katex", notifications=False)
    from bokeh.settings import settings as _bokeh_settings

    _bokeh_settings.perform_document_validation.set_value(False)  # as serve does
    _imported.create_app(
        pool=pn.state.as_cached(
            "noiselab-compute-pool", lambda: _imported._warmed(_imported.ComputePool.from_environment())
        )
    ).servable()
