"""What the browser tests read back from a drawn graph view: the scale its text is drawn at,
whether the whole drawing (or the part fit() chose) is on the screen, and the contrast of every
text with what is behind it, in the theme the page has.

Each is a JavaScript function of the view's root element (``.tg-graph``), for
``locator.evaluate``."""

from __future__ import annotations

#: the smallest node text fit() may draw, in screen pixels (READABLE_PX in nbext/camera.js)
READABLE_PX = 8
#: WCAG AA contrast for body text
MIN_CONTRAST = 4.5

GEOMETRY = """(root) => {
  const svg = root.querySelector('svg.tg-canvas'), vp = root.querySelector('.tg-viewport');
  const s = svg.getBoundingClientRect(), d = vp.getBoundingClientRect(), b = vp.getBBox();
  const text = vp.querySelector('[data-tg-node] text, [data-tg-group] text');
  const font = text ? parseFloat(getComputedStyle(text).fontSize) : 0;
  const k = vp.getScreenCTM().a;
  const inside = (r) => r.left >= s.left - 1 && r.right <= s.right + 1
    && r.top >= s.top - 1 && r.bottom <= s.bottom + 1;
  const seen = (el) => { const r = el.getBoundingClientRect();
    return r.right > s.left && r.left < s.right && r.bottom > s.top && r.top < s.bottom; };
  const focus = [...vp.querySelectorAll('.tg-selected, [class*="tg-mark-"]')];
  const outputs = [...vp.querySelectorAll('.tg-output')];
  return {
    scale: k, fontPx: font, textPx: k * font,
    // the scale at which the whole drawing would fit the canvas
    wholeScale: Math.min((s.width - 24) / b.width, (s.height - 24) / b.height),
    allInside: inside(d),
    partialHint: !root.querySelector('.tg-hint').hidden,
    focusSeen: (focus.length ? focus : outputs).some(seen),
    nodes: vp.querySelectorAll('[data-tg-node], [data-tg-group]').length,
  };
}"""

CONTRAST = """(root) => {
  function parse(c) {
    if (!c || c === 'none' || c.startsWith('url')) return null;
    let m = c.match(/^rgba?\\(([^)]*)\\)/);
    if (m) { const v = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
      return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; }
    m = c.match(/^color\\(srgb ([^)]*)\\)/);
    if (m) { const v = m[1].split(/[ /]+/).filter(Boolean).map(Number);
      return [v[0] * 255, v[1] * 255, v[2] * 255, v.length > 3 ? v[3] : 1]; }
    return null;
  }
  const over = (top, under) => top[3] >= 1 ? top
    : [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const lum = (c) => { const [r, g, b] = c.slice(0, 3).map((v) => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05); };
  // what is behind an HTML element: the first ancestor with a background, over the page's
  function htmlBackground(el) {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    return layers.reverse().reduce((acc, c) => over(c, acc), [255, 255, 255, 1]);
  }
  const canvas = htmlBackground(root.querySelector('.tg-canvas'));
  const bad = [];
  let checked = 0;
  for (const t of root.querySelectorAll('.tg-viewport text')) {
    const style = getComputedStyle(t);
    if (style.display === 'none' || !t.textContent.trim()) continue;
    if (t.closest('.tg-dimmed, .tg-mark-removed')) continue;  // faded on purpose
    const fg = parse(style.fill);
    if (!fg) continue;
    let bg = canvas;
    const owner = t.closest('[data-tg-node], [data-tg-group], .tg-collapse, .tg-frame');
    if (owner && !t.classList.contains('tg-outlabel') && !t.classList.contains('tg-frame-label')
        && !t.classList.contains('tg-unfold')) {
      const rect = [...owner.children].find((c) => c.tagName === 'rect');
      const fill = rect && parse(getComputedStyle(rect).fill);
      if (fill) bg = over(fill, canvas);
    } else if (owner && owner.classList.contains('tg-frame')) {
      const fill = parse(getComputedStyle(owner.querySelector(':scope > rect')).fill);
      if (fill) bg = over(fill, canvas);
    }
    const r = ratio(over(fg, bg), bg);
    checked++;
    if (r < %(min)s) bad.push(`${t.textContent.trim().slice(0, 40)} [${t.getAttribute('class') || ''} in ${(owner && owner.getAttribute('class')) || 'canvas'}]: ${r.toFixed(2)} (${style.fill} on rgb(${bg.slice(0, 3).map(Math.round)}))`);
  }
  for (const el of root.querySelectorAll('.tg-toolbar *, .tg-legend *, .tg-detail *')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || el.closest('[hidden]') || getComputedStyle(el).display === 'none') continue;
    const bg = htmlBackground(el);
    const fg = over(parse(getComputedStyle(el).color), bg);
    const r = ratio(fg, bg);
    checked++;
    if (r < %(min)s) bad.push(`${el.textContent.trim().slice(0, 40)} [${el.className}]: ${r.toFixed(2)}`);
  }
  return {checked, bad};
}""" % {"min": MIN_CONTRAST}


def set_theme(page, theme: str) -> None:
    """Switch JupyterLab's theme ('JupyterLab Light' or 'JupyterLab Dark') and wait for it."""
    light = "true" if "Light" in theme else "false"
    page.evaluate("(t) => window.jupyterapp.commands.execute('apputils:change-theme', "
                  "{theme: t})", theme)
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'",
                           timeout=30_000)
    page.wait_for_timeout(400)  # the theme's CSS variables apply


def check_view(view, name: str) -> dict:
    """Geometry and contrast of one drawn view (a ``.tg-graph`` locator): its text at a
    readable size, all of it on the screen when that fits, the focus in sight otherwise, every
    text readable on what is behind it. Returns the geometry."""
    geometry = view.evaluate(GEOMETRY)
    assert geometry["nodes"] > 0, f"{name}: nothing drawn"
    assert geometry["textPx"] >= READABLE_PX - 0.01, f"{name}: text at {geometry}"
    if geometry["wholeScale"] * geometry["fontPx"] >= READABLE_PX:
        assert geometry["allInside"] and not geometry["partialHint"], f"{name}: {geometry}"
    else:
        assert geometry["partialHint"] and geometry["focusSeen"], f"{name}: {geometry}"
    contrast = view.evaluate(CONTRAST)
    assert contrast["checked"] > 5 and not contrast["bad"], f"{name}: {contrast['bad']}"
    return geometry
