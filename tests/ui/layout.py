"""Layout checks run in the page: overlapping controls, clipped axis labels, tooltips off the window."""

# every element of the page, shadow roots included, with the shadow root (or document) it lives in
_WALK = """
const all = [];
const walk = (root) => root.querySelectorAll('*').forEach((e) => {
  all.push([e, root]);
  if (e.shadowRoot) walk(e.shadowRoot);
});
walk(document);
const shown = (e) => e.checkVisibility({checkOpacity: true, checkVisibilityCSS: true});
// whether inner is outer or lies within it, across shadow roots
const inside = (outer, inner) => {
  for (let n = inner; n; n = n.parentNode || n.host) if (n === outer) return true;
  return false;
};
"""

# Controls, headings and plots that overlap by more than 2 px both ways. Pairs inside one widget
# (a number box and its arrows, a card's header button and its title) share a shadow root and are
# not compared; neither are an element and one it contains.
LAYOUT_JS = (
    "() => {"
    + _WALK
    + """
  const items = [];
  for (const [e, root] of all) {
    const slider = e.classList.contains('noUi-target');
    if (!(['BUTTON', 'INPUT', 'SELECT', 'H3', 'TEXTAREA'].includes(e.tagName) || slider)) continue;
    if (e.tagName === 'INPUT' && ['hidden', 'file', 'radio', 'checkbox'].includes(e.type)) continue;
    const r = e.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || !shown(e)) continue;
    const label = (e.textContent || e.getAttribute('title') || e.value || '').trim().slice(0, 40);
    items.push({e, root, name: e.tagName.toLowerCase() + ' "' + label + '"', r});
  }
  // the plots on screen, each with its title (or name)
  const plots = [...Bokeh.index.all_views()]
    .filter((v) => v.model && ['Figure', 'Plot'].includes(v.model.type) && shown(v.el))
    .map((v) => ({v, r: v.el.getBoundingClientRect(),
                  title: v.model.title && v.model.title.text ? v.model.title.text : v.model.name || v.model.id}))
    .filter((p) => p.r.width >= 1);
  for (const p of plots) items.push({e: p.v.el, root: null, name: 'plot "' + p.title.slice(0, 40) + '"', r: p.r});
  const overlaps = [];
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      const a = items[i], b = items[j];
      if (a.root !== null && a.root === b.root) continue;
      if (inside(a.e, b.e) || inside(b.e, a.e)) continue;
      const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
      const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
      if (w > 2 && h > 2) overlaps.push(a.name + ' / ' + b.name + ` (${Math.round(w)}x${Math.round(h)} px)`);
    }
  }
  // an axis is clipped when its ticks, tick labels and label need more room than its panel has, or
  // its panel reaches past the plot's canvas
  const clipped = [];
  let axes = 0;
  for (const v of Bokeh.index.all_views()) {
    const m = v.model;
    if (!m || !m.type || !m.type.endsWith('Axis') || !m.visible || !v.plot_view || !shown(v.plot_view.el)) continue;
    const b = v.bbox, e = v.extents, canvas = v.plot_view.canvas_view.bbox;
    const need = e.tick + e.tick_label + e.axis_label;
    const have = v.dimension == 0 ? b.height : b.width;
    const onCanvas = b.left >= -0.5 && b.top >= -0.5
      && b.right <= canvas.width + 0.5 && b.bottom <= canvas.height + 0.5;
    axes += 1;
    if (need > have + 0.5 || !onCanvas) {
      clipped.push(`${m.axis_label || '(no label)'}: needs ${Math.round(need)} px, has ${Math.round(have)}`
        + (onCanvas ? '' : ', outside its canvas'));
    }
  }
  // a plot cut off by a container that hides its overflow, or by the window's sides
  for (const {v, r, title} of plots) {
    if (r.left < -0.5 || r.right > innerWidth + 0.5) clipped.push(`plot "${title}": past the window's side`);
    for (let n = v.el.parentNode || v.el.host; n && n.nodeType === 1; n = n.parentNode || n.host) {
      const style = getComputedStyle(n), box = n.getBoundingClientRect();
      const hidesX = style.overflowX !== 'visible', hidesY = ['hidden', 'clip'].includes(style.overflowY);
      if ((hidesX && (r.left < box.left - 0.5 || r.right > box.right + 0.5))
          || (hidesY && (r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5))) {
        clipped.push(`plot "${title}": cut off by a ${n.tagName.toLowerCase()} ${n.className}`.trim());
        break;
      }
    }
  }
  // a choice box too narrow for its longest choice (the box shows a chosen name cut off)
  const truncated = [];
  const measure = document.createElement('canvas').getContext('2d');
  for (const [e] of all) {
    if (e.tagName !== 'SELECT' || !shown(e)) continue;
    const style = getComputedStyle(e);
    measure.font = style.font;
    const room = e.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    for (const option of e.options) {
      const need = measure.measureText(option.text).width;
      if (need > room + 0.5) truncated.push(`"${option.text}": ${Math.round(need)} px in ${Math.round(room)}`);
    }
  }
  const overflow = document.documentElement.scrollWidth - innerWidth;
  // the main area wider than its box (it then scrolls sideways on its own)
  const main = document.getElementById('main');
  const mainOverflow = main ? main.scrollWidth - main.clientWidth : 0;
  return {overlaps, clipped, truncated, axes, controls: items.length, overflow, mainOverflow};
}"""
)
# what shows a tooltip on hover (description icons and tooltip icons), kept on the window; returns how many
# (with sidebar false, only those outside the sidebar)
TOOLTIP_TARGETS_JS = (
    "(sidebar) => {"
    + _WALK
    + """
  const bar = document.getElementById('sidebar');
  window.__tooltipTargets = all.map(([e]) => e).filter((e) => (e.classList.contains('bk-description')
      || e.classList.contains('bk-panel-models-widgets-TooltipIcon')) && shown(e)
      && (sidebar || !(bar && inside(bar, e))));
  return window.__tooltipTargets.length;
}"""
)
# scroll target i to the middle of the window; its centre there
TOOLTIP_TARGET_AT_JS = """(i) => {
  const e = window.__tooltipTargets[i];
  e.scrollIntoView({block: 'center', inline: 'nearest'});
  const r = e.getBoundingClientRect();
  return [r.left + r.width / 2, r.top + r.height / 2];
}"""

# the tooltips shown, as [left, top, right, bottom] in the window
TOOLTIP_BOXES_JS = (
    "() => {"
    + _WALK
    + """
  return all.map(([e]) => e).filter((e) => e.classList.contains('bk-Tooltip') && shown(e))
    .map((e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })
    .filter(([l, t, r, b]) => r - l > 0);
}"""
)


# (visible as the checks below count it: not hidden, not transparent)
VISIBLE_AXES_JS = """() => [...Bokeh.index.all_views()].filter((v) => v.model && v.model.type
  && v.model.type.endsWith('Axis') && v.plot_view
  && v.plot_view.el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})).length"""


# the view titles on screen (h3), by text, with their computed font size
TITLE_SIZES_JS = """() => {
  const sizes = {};
  const walk = (root) => root.querySelectorAll('*').forEach((e) => {
    const shown = e.tagName === 'H3' && e.getBoundingClientRect().width > 0;
    if (shown) sizes[e.textContent.trim()] = getComputedStyle(e).fontSize;
    if (e.shadowRoot) walk(e.shadowRoot);
  });
  walk(document);
  return sizes;
}"""


def wait_for_plots(page, count: int = 4) -> None:
    """Wait until ``count`` axes are drawn (a tab's plots go on the page with their first data)."""
    page.wait_for_function(f"() => ({VISIBLE_AXES_JS})() >= {count}", timeout=120_000)


def layout_problems(page) -> dict:
    """Overlapping controls and plots, clipped axes and plots, and page width past the window."""
    return page.evaluate(LAYOUT_JS)


def tooltips_outside(page, sidebar: bool = True) -> tuple[list, int]:
    """Hover every tooltip target shown (with ``sidebar`` false, only those outside the sidebar), scrolled
    into the window first. Returns the tooltips that reach past the window (with the target's position)
    and how many tooltips were shown."""
    outside, shown = [], 0
    for index in range(page.evaluate(TOOLTIP_TARGETS_JS, sidebar)):
        x, y = page.evaluate(TOOLTIP_TARGET_AT_JS, index)
        page.mouse.move(x, y)
        page.wait_for_function(f"() => ({TOOLTIP_BOXES_JS})().length > 0", timeout=5_000)
        width, height = page.evaluate("() => [innerWidth, innerHeight]")
        for left, top, right, bottom in page.evaluate(TOOLTIP_BOXES_JS):
            shown += 1
            if left < -0.5 or top < -0.5 or right > width + 0.5 or bottom > height + 0.5:
                outside.append({"at": (round(x), round(y)), "tooltip": [round(v) for v in (left, top, right, bottom)]})
        page.mouse.move(0, 0)
    return outside, shown
