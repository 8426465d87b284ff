// tensorgraph graph view: draws the graph the kernel laid out (traits `graph` + `layout`) as
// SVG, with pan/zoom, search, a detail panel, hover highlights, group expand/collapse,
// overlays (heat maps) and marks. Plain ES module, no build step; loaded by anywidget.
//
// Contract for tests and user CSS: the root has class `tg-graph`; every drawn node is an
// element with `data-tg-node="<id>"` (the id dprint prints); closed groups have
// `data-tg-group="<group id>"`; the detail panel has class `tg-detail`.

const SVGNS = "http://www.w3.org/2000/svg";
const CHAR_W = 6.6, LINE_H = 15, PAD_Y = 10;
// node text is FONT_PX (graph_view.css); no automatic view draws it below READABLE_PX on
// screen: a drawing too big for that is shown in part, and the user pans
const FONT_PX = 11, READABLE_PX = 8;
const K_READABLE = READABLE_PX / FONT_PX, K_MAX = 1.2, MARGIN = 12;

function esc(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;",
    ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

function cut(text, n = 44) {
  text = String(text ?? "");
  return text.length <= n ? text : text.slice(0, n - 3) + "...";
}

// the two lines of a box, as layout.item_text draws them in Python (sizes come from there)
function itemLines(item) {
  if (item.group) return [cut(item.label, 64), `${item.n} nodes, closed`];
  if (item.k === "constant") return [cut(item.op), `[${item.id}]`];
  return [cut(item.op), cut(`[${item.id}] ${item.t || ""}`)];
}

function pathOf(points) {
  if (points.length < 4) return "";
  let d = `M${points[0]},${points[1]}`;
  const rest = points.length / 2 - 1;
  if (rest >= 3 && (rest - 1) % 3 === 0) {
    // dot's B-spline: start point, then (ctrl, ctrl, end) triples; the last point is the tip
    let i = 2;
    const n = points.length - 2;
    for (; i + 5 < n + 1; i += 6) {
      d += ` C${points[i]},${points[i + 1]} ${points[i + 2]},${points[i + 3]} ${points[i + 4]},${points[i + 5]}`;
    }
    d += ` L${points[points.length - 2]},${points[points.length - 1]}`;
    return d;
  }
  for (let i = 2; i < points.length; i += 2) d += ` L${points[i]},${points[i + 1]}`;
  return d;
}

// the heat map's ramp, light yellow to dark red (static_svg.HEAT_STOPS draws the same)
const HEAT_STOPS = [[255, 245, 200], [253, 190, 110], [240, 110, 60], [190, 30, 45], [120, 0, 40]];

function heat(t) {
  const x = Math.max(0, Math.min(1, t)) * (HEAT_STOPS.length - 1);
  const i = Math.min(HEAT_STOPS.length - 2, Math.floor(x)), f = x - i;
  return HEAT_STOPS[i].map((v, k) => Math.round(v + (HEAT_STOPS[i + 1][k] - v) * f));
}

// WCAG contrast: a heat-coloured box gets dark or white text, whichever reads better on it
// (the theme's text colour would be white on pale yellow in a dark theme)
function luminance(rgb) {
  const [r, g, b] = rgb.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
function contrast(a, b) {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}
const DARK_TEXT = [0, 0, 0], LIGHT_TEXT = [255, 255, 255];

function render({ model, el }) {
  el.classList.add("tg-graph-host");
  const root = document.createElement("div");
  root.className = "tg-graph";
  root.tabIndex = 0;
  root.setAttribute("data-lm-suppress-shortcuts", "true");
  root.innerHTML = `
    <div class="tg-toolbar">
      <span class="tg-title"></span>
      <input class="tg-search" type="search" placeholder="search id, op, name, dtype" aria-label="search nodes">
      <button class="tg-btn" data-act="fit" title="fit to view (f)">fit</button>
      <button class="tg-btn" data-act="zoomin" title="zoom in (+)">+</button>
      <button class="tg-btn" data-act="zoomout" title="zoom out (-)">&minus;</button>
      <button class="tg-btn" data-act="ancestors" title="highlight the selected node's ancestors (a)">ancestors</button>
      <button class="tg-btn" data-act="descendants" title="highlight the selected node's descendants (d)">descendants</button>
      <button class="tg-btn" data-act="fold" title="fold the highlighted ancestors or descendants into one box" disabled>fold</button>
      <span class="tg-hint" hidden>part shown: drag to see the rest</span>
      <span class="tg-status" role="status"></span>
    </div>
    <div class="tg-body">
      <svg class="tg-canvas" xmlns="${SVGNS}"><defs>
        <marker id="tg-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
          <path d="M0,0 L10,5 L0,10 z" class="tg-arrowhead"></path></marker>
      </defs><g class="tg-viewport"></g></svg>
      <div class="tg-detail" hidden></div>
    </div>
    <div class="tg-legend"></div>`;
  el.appendChild(root);
  const svg = root.querySelector(".tg-canvas");
  const viewport = root.querySelector(".tg-viewport");
  const panel = root.querySelector(".tg-detail");
  const status = root.querySelector(".tg-status");
  const search = root.querySelector(".tg-search");
  const legend = root.querySelector(".tg-legend");
  let view = { x: 0, y: 0, k: 1 };
  let drawnLayout = null;
  let lineage = "";
  let fitted = false;
  let autoView = true;  // the view is fit()'s own (no pan or zoom since): it follows resizes
  let nodeIndex = new Map();

  function setHeight() {
    root.style.setProperty("--tg-height", `${model.get("height") || 520}px`);
  }

  function applyView() {
    viewport.setAttribute("transform", `translate(${view.x},${view.y}) scale(${view.k})`);
    root.classList.toggle("tg-zoomed-out", view.k < 0.55);
  }

  // what the drawing covers, in layout pixels: its SVG bounding box (edges and labels that
  // stick out included), or the layout's box while nothing is drawn
  function contentBox() {
    const layout = model.get("layout") || {};
    try {
      const b = viewport.getBBox();
      if (b.width > 0 && b.height > 0) return [b.x, b.y, b.x + b.width, b.y + b.height];
    } catch (e) { /* not rendered yet */ }
    return layout.bbox || [0, 0, ...(layout.size || [1, 1])];
  }

  function boxOf(ids) {
    const items = (model.get("layout") || {}).items || {};
    const boxes = ids.map((id) => items[id]).filter(Boolean).map(boxEdges);
    if (!boxes.length) return null;
    return [Math.min(...boxes.map((b) => b[0])), Math.min(...boxes.map((b) => b[1])),
      Math.max(...boxes.map((b) => b[2])), Math.max(...boxes.map((b) => b[3]))];
  }

  // where a partial view looks: the selection, else what is marked (a rewrite step's change,
  // the stepper's node), else the outputs (or the closed groups holding them); as many of
  // them, in order, as fit on the screen at scale k
  function focusBox(k) {
    const [w, h] = size();
    const selected = model.get("selected");
    let ids = selected && boxOf([selected]) ? [selected] : Object.keys(model.get("marks") || {});
    if (!boxOf(ids)) {
      const groupOf = new Map(((model.get("graph") || {}).groups || []).map((g) => [g.id, g]));
      ids = [];
      for (const n of (model.get("graph") || {}).nodes || []) {
        if (!n.o) continue;
        ids.push(n.id);
        for (let g = n.g; g; g = (groupOf.get(g) || {}).parent) ids.push(`G:${g}`);
      }
    }
    // the largest group of them that fits, grown from each in turn (the first wins ties)
    const fits = (box) => (box[2] - box[0]) * k <= w - 2 * MARGIN && (box[3] - box[1]) * k <= h - 2 * MARGIN;
    const drawn = ids.filter((id) => boxOf([id]));
    let best = [];
    for (const start of drawn.slice(0, 40)) {
      const taken = [start];
      for (const id of drawn) if (id !== start && fits(boxOf([...taken, id]))) taken.push(id);
      if (taken.length > best.length) best = taken;
    }
    return boxOf(best);
  }

  function size() {
    return [svg.clientWidth || 800, svg.clientHeight || 500];
  }

  // (x0..x1) at scale k centred at screen c when it fits, else kept covering the screen
  // (no empty margin beyond the drawing's edge while there is more of it to see)
  function place(x0, x1, k, c, span) {
    const t = c - ((x0 + x1) / 2) * k;
    if ((x1 - x0) * k <= span - 2 * MARGIN) return (span - (x0 + x1) * k) / 2;
    return Math.min(MARGIN - x0 * k, Math.max(span - MARGIN - x1 * k, t));
  }

  // fit: the whole drawing, as large as K_MAX, when its text stays readable; else the part
  // around focusBox() at the readable scale
  function fit() {
    const layout = model.get("layout");
    if (!layout || !layout.items) return;
    const [w, h] = size();
    const [x0, y0, x1, y1] = contentBox();
    const whole = Math.min((w - 2 * MARGIN) / (x1 - x0 || 1), (h - 2 * MARGIN) / (y1 - y0 || 1));
    const partial = whole < K_READABLE;
    const k = partial ? K_READABLE : Math.min(K_MAX, whole);
    const [fx0, fy0, fx1, fy1] = (partial && focusBox(k)) || [x0, y0, x1, y1];
    view = { k, x: place(x0, x1, k, w / 2 - ((fx0 + fx1) / 2 - (x0 + x1) / 2) * k, w),
      y: place(y0, y1, k, h / 2 - ((fy0 + fy1) / 2 - (y0 + y1) / 2) * k, h) };
    root.querySelector(".tg-hint").hidden = !partial;
    autoView = true;
    applyView();
  }

  // bring a box into sight at the current zoom, not moving at all when it is in sight already
  function keepInSight([x0, y0, x1, y1]) {
    const [w, h] = size();
    const k = view.k;
    if (x0 * k + view.x >= 0 && x1 * k + view.x <= w && y0 * k + view.y >= 0 && y1 * k + view.y <= h) return;
    view = { k, x: w / 2 - ((x0 + x1) / 2) * k, y: h / 2 - ((y0 + y1) / 2) * k };
    applyView();
  }

  function centerOn(id) {
    const layout = model.get("layout");
    const box = layout && layout.items && layout.items[id];
    if (!box) return false;
    const [w, h] = size();
    view.k = Math.max(view.k, 0.8);
    view.x = w / 2 - box[0] * view.k;
    view.y = h / 2 - box[1] * view.k;
    applyView();
    return true;
  }

  function draw() {
    const graph = model.get("graph") || {};
    const layout = model.get("layout") || {};
    if (layout.items && layout.graph !== graph.serial) return;  // its positions are on their way
    root.querySelector(".tg-title").textContent = graph.title || "";
    nodeIndex = new Map((graph.nodes || []).map((n) => [n.id, n]));
    const groups = new Map((graph.groups || []).map((g) => [g.id, g]));
    if (!layout.items) { viewport.innerHTML = ""; return; }
    const parts = [];
    for (const [gid, bb] of Object.entries(layout.frames || {})) {
      const g = groups.get(gid) || { label: gid };
      const [x0, y0, x1, y1] = bb;
      parts.push(`<g class="tg-frame" data-tg-frame="${esc(gid)}">
        <rect x="${x0}" y="${y0}" width="${x1 - x0}" height="${y1 - y0}" rx="8"></rect>
        <text x="${x0 + (g.fold ? 70 : 24)}" y="${y0 + 13}" class="tg-frame-label">${esc(cut(g.label, 80))}</text>
        <g class="tg-collapse" data-tg-collapse="${esc(gid)}" role="button" aria-label="close group">
          <rect x="${x0 + 4}" y="${y0 + 3}" width="15" height="14" rx="3"></rect>
          <text x="${x0 + 11.5}" y="${y0 + 14}" text-anchor="middle">&minus;</text></g>${g.fold ? `
        <text x="${x0 + 24}" y="${y0 + 13}" class="tg-unfold" data-tg-unfold="${esc(gid)}" role="button">unfold</text>` : ""}</g>`);
    }
    for (const e of layout.edges || []) {
      const [a, b, n, label, pts] = e;
      const d = pathOf(pts);
      let labelSvg = "";
      if (label && pts.length >= 4) {
        // the middle point of a spline; the middle of a straight edge
        const mid = Math.floor(pts.length / 4) * 2;
        const [lx, ly] = pts.length === 4 ? [(pts[0] + pts[2]) / 2, (pts[1] + pts[3]) / 2] : [pts[mid], pts[mid + 1]];
        labelSvg = `<text class="tg-edge-label" x="${lx + 4}" y="${ly}">${esc(label)}</text>`;
      }
      parts.push(`<g class="tg-edge" data-from="${esc(a)}" data-to="${esc(b)}"><path d="${d}" marker-end="url(#tg-arrow)" style="stroke-width:${Math.min(4, 1 + Math.log2(n))}"></path>${labelSvg}</g>`);
    }
    for (const [id, box] of Object.entries(layout.items)) {
      const [cx, cy, w, h] = box;
      const x = cx - w / 2, y = cy - h / 2;
      if (id.startsWith("G:")) {
        const gid = id.slice(2);
        const g = groups.get(gid) || { label: gid, n: 0 };
        const lines = itemLines({ group: gid, label: g.label, n: g.n });
        parts.push(`<g class="tg-group" data-tg-group="${esc(gid)}" role="button" aria-label="open group ${esc(g.label)}">
          <rect x="${x}" y="${y}" width="${w}" height="${h}" rx="6"></rect>
          <text x="${cx}" y="${y + PAD_Y / 2 + 11}" text-anchor="middle">${esc(lines[0])}</text>
          <text x="${cx}" y="${y + PAD_Y / 2 + 11 + LINE_H}" text-anchor="middle" class="tg-sub">${esc(lines[1])}</text></g>`);
        continue;
      }
      const n = nodeIndex.get(id);
      if (!n) continue;
      const lines = itemLines(n);
      const cls = [`tg-node`, `tg-k-${n.k}`];
      if (n.c) cls.push(n.c === "C" ? "tg-runs-c" : "tg-runs-py");
      if (n.f && n.f.includes("i")) cls.push("tg-inplace");
      if (n.f && n.f.includes("v")) cls.push("tg-view");
      if (n.f && n.f.includes("f")) cls.push("tg-fused");
      if (n.o) cls.push("tg-output");
      const shape = n.k === "apply"
        ? `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="5"></rect>`
        : n.k === "constant" ? `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="2" class="tg-const-box"></rect>`
          : `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="${h / 2}"></rect>`;
      const badge = n.c ? `<text x="${x + w - 4}" y="${y + 10}" text-anchor="end" class="tg-badge">${n.c === "C" ? "C" : "Py"}</text>` : "";
      const outs = n.o ? `<text x="${cx}" y="${y + h + 11}" text-anchor="middle" class="tg-outlabel">${esc(cut(n.o.join(", "), 40))}</text>` : "";
      parts.push(`<g class="${cls.join(" ")}" data-tg-node="${esc(id)}"><title>${esc(n.op)} [id ${esc(id)}]${n.tv ? "\n" + esc(n.tv) : ""}</title>${shape}
        <text x="${cx}" y="${y + PAD_Y / 2 + 11}" text-anchor="middle">${esc(lines[0])}</text>
        <text x="${cx}" y="${y + PAD_Y / 2 + 11 + LINE_H}" text-anchor="middle" class="tg-sub">${esc(lines[1])}</text>${badge}${outs}</g>`);
    }
    viewport.innerHTML = parts.join("");
    const previous = drawnLayout;
    drawnLayout = layout;
    root.dataset.tgDrawn = String(graph.serial);
    decorate();
    if (!fitted) {
      // from one rewrite step to the next the boxes keep their places, and so does the view,
      // moving only to bring what the step changed (the marked nodes) into sight
      const sameUnion = !!(layout.union && previous && previous.union === layout.union);
      const marked = sameUnion && focusBox(view.k);
      if (marked) keepInSight(marked);
      else if (!sameUnion) fit();
      fitted = true;
    } else if (previous && previous !== layout) {
      keepAnchor(previous, layout);
    }
  }

  // a group opened or closed (a click, or expand()/collapse() in Python): it stays where it
  // was on the screen, the zoom unchanged: the opened frame's top and its first child start
  // where the closed box was (and the closed box where the frame's first child was), so the
  // view does not jump and the eye finds the group's content where it clicked
  let anchorGroup = null;
  function keepAnchor(before, after) {
    const spot = (layout, gid) => {
      const frame = (layout.frames || {})[gid];
      if (!frame) {
        const box = boxEdges((layout.items || {})[`G:${gid}`]);
        return box && [(box[0] + box[2]) / 2, box[1]];
      }
      // the first child: the topmost (then leftmost) box inside the frame
      let first = null;
      for (const [cx, cy] of Object.values(layout.items || {})) {
        if (cx < frame[0] || cx > frame[2] || cy < frame[1] || cy > frame[3]) continue;
        if (!first || cy < first[1] || (cy === first[1] && cx < first[0])) first = [cx, cy];
      }
      return [first ? first[0] : (frame[0] + frame[2]) / 2, frame[1]];
    };
    let gid = anchorGroup && spot(before, anchorGroup) && spot(after, anchorGroup) ? anchorGroup : null;
    if (!gid) {
      const opened = Object.keys(after.frames || {}).filter((g) => !(before.frames || {})[g]);
      const closed = Object.keys(before.frames || {}).filter((g) => !(after.frames || {})[g]);
      gid = [...opened, ...closed].find((g) => spot(before, g) && spot(after, g)) || null;
    }
    anchorGroup = null;
    if (!gid) return;
    const [ax, ay] = spot(before, gid), [bx, by] = spot(after, gid);
    view.x += (ax - bx) * view.k;
    view.y += (ay - by) * view.k;
    // an opened frame that fits on the screen is all on it (its collapse and unfold links too)
    const frame = (after.frames || {})[gid];
    const [w, h] = size();
    if (frame && (frame[2] - frame[0]) * view.k <= w - 2 * MARGIN) {
      view.x = Math.min(w - MARGIN - frame[2] * view.k, Math.max(MARGIN - frame[0] * view.k, view.x));
    } else if (frame && frame[0] * view.k + view.x < 0) {
      // wider than the screen: its left edge (the collapse and unfold links) comes into
      // sight as long as the first child stays there
      view.x = Math.min(MARGIN - frame[0] * view.k, w - MARGIN - bx * view.k);
    }
    if (frame && (frame[3] - frame[1]) * view.k <= h - 2 * MARGIN) {
      view.y = Math.min(h - MARGIN - frame[3] * view.k, Math.max(MARGIN - frame[1] * view.k, view.y));
    }
    autoView = false;
    applyView();
  }

  function boxEdges(box) {
    return box ? [box[0] - box[2] / 2, box[1] - box[3] / 2, box[0] + box[2] / 2, box[1] + box[3] / 2] : null;
  }

  // classes that change without a new layout: selection, highlights, overlay, marks, lineage
  function decorate() {
    const selected = model.get("selected");
    const highlight = new Set(model.get("highlight_ids") || []);
    const overlay = model.get("overlay") || {};
    const values = overlay.values || {};
    const marks = model.get("marks") || {};
    const nums = Object.values(values).filter((v) => Number.isFinite(v));
    const lo = nums.length ? Math.min(...nums) : 0, hi = nums.length ? Math.max(...nums) : 1;
    const related = lineage && selected ? walk(selected, lineage) : null;
    for (const g of viewport.querySelectorAll("[data-tg-node]")) {
      const id = g.getAttribute("data-tg-node");
      g.classList.toggle("tg-selected", id === selected);
      g.classList.toggle("tg-highlighted", highlight.has(id));
      g.classList.toggle("tg-related", !!related && related.has(id));
      g.classList.toggle("tg-dimmed", !!related && !related.has(id) && id !== selected);
      for (const cls of [...g.classList]) if (cls.startsWith("tg-mark-")) g.classList.remove(cls);
      if (marks[id]) g.classList.add(`tg-mark-${marks[id]}`);
      const rect = g.querySelector("rect");
      if (id in values && Number.isFinite(values[id])) {
        const fill = heat(hi > lo ? (values[id] - lo) / (hi - lo) : 1);
        rect.style.fill = `rgb(${fill.join(",")})`;
        g.classList.add("tg-heat");
        g.classList.toggle("tg-heat-dark", contrast(fill, LIGHT_TEXT) > contrast(fill, DARK_TEXT));
      } else {
        rect.style.fill = "";
        g.classList.remove("tg-heat", "tg-heat-dark");
      }
    }
    legend.innerHTML = overlay.title
      ? `<span>${esc(overlay.title)}</span> <span class="tg-ramp"></span> <span>${esc(fmt(lo))} .. ${esc(fmt(hi))}</span>`
      : "";
    legend.hidden = !overlay.title;
    const label = model.get("highlight_label");
    if (label) legend.innerHTML += ` <span class="tg-hl-label">${esc(label)}</span>`;
    if (label) legend.hidden = false;
    renderPanel();
  }

  function fmt(v) {
    if (!Number.isFinite(v)) return String(v);
    const a = Math.abs(v);
    return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(2) : String(Math.round(v * 1000) / 1000);
  }

  function showLineage() {
    root.querySelectorAll('[data-act="ancestors"],[data-act="descendants"]').forEach((b) =>
      b.classList.toggle("tg-on", b.getAttribute("data-act") === lineage));
    root.querySelector('[data-act="fold"]').disabled = !(lineage && model.get("selected"));
    decorate();
  }

  // ancestors / descendants among the drawn items (through the visible edges)
  function walk(start, direction) {
    const layout = model.get("layout") || {};
    const next = new Map();
    for (const [a, b] of layout.edges || []) {
      const [from, to] = direction === "ancestors" ? [b, a] : [a, b];
      if (!next.has(from)) next.set(from, []);
      next.get(from).push(to);
    }
    const seen = new Set();
    const stack = [start];
    while (stack.length) {
      const id = stack.pop();
      for (const other of next.get(id) || []) if (!seen.has(other)) { seen.add(other); stack.push(other); }
    }
    return seen;
  }

  function renderPanel() {
    const selected = model.get("selected");
    const d = model.get("detail") || {};
    if (!selected) { panel.hidden = true; return; }
    panel.hidden = false;
    const n = nodeIndex.get(selected) || {};
    const rows = [];
    rows.push(`<div class="tg-panel-head"><b>${esc(d.title || n.op || selected)}</b>
      <span class="tg-id">[id ${esc(selected)}]</span>
      <button class="tg-btn tg-close" data-act="close" aria-label="close panel">&times;</button></div>`);
    if (d.id !== selected) {
      rows.push(`<div class="tg-muted">${esc(n.t || "")} &middot; loading details...</div>`);
    } else {
      if (d.kind && d.kind !== "apply") rows.push(`<div>${esc(d.kind)} &middot; <code>${esc(d.type)}</code></div>`);
      if (d.runs) rows.push(`<div>runs: <b>${esc(d.runs)}</b>${d.why_python ? ` &mdash; ${esc(d.why_python)}` : ""}</div>`);
      if (d.outputs_of_graph) rows.push(`<div>${esc(d.outputs_of_graph.join(", "))}</div>`);
      if (d.params && Object.keys(d.params).length) {
        rows.push(`<div class="tg-sec">parameters</div><table>${Object.entries(d.params).map(([k, v]) =>
          `<tr><td>${esc(k)}</td><td><code>${esc(v)}</code></td></tr>`).join("")}</table>`);
      }
      if (d.inputs) {
        rows.push(`<div class="tg-sec">inputs</div><table>${d.inputs.map((i, k) =>
          `<tr><td>${k}</td><td><a href="#" data-goto="${esc(i.id)}">${esc(i.label)}</a> <span class="tg-id">[${esc(i.id)}]</span></td><td><code>${esc(i.type)}</code></td></tr>`).join("")}</table>`);
      }
      if (d.outputs) {
        rows.push(`<div class="tg-sec">outputs</div><table>${d.outputs.map((o, k) =>
          `<tr><td>${k}</td><td>${esc(o.label)}</td><td><code>${esc(o.type)}</code></td></tr>`).join("")}</table>`);
      }
      if (d.destroy_map) rows.push(`<div>destroy_map (inplace): <code>${esc(JSON.stringify(d.destroy_map))}</code></div>`);
      if (d.view_map) rows.push(`<div>view_map: <code>${esc(JSON.stringify(d.view_map))}</code></div>`);
      if (d.lines && d.lines.length) {
        rows.push(`<div class="tg-sec">built by</div>${d.lines.map((l) => `<pre class="tg-line">${esc(l)}</pre>`).join("")}`);
      }
      if (d.inner) {
        rows.push(`<details class="tg-inner" open><summary>fused loop (inner scalar graph)</summary><pre>${esc(d.inner.join("\n"))}</pre></details>`);
      }
      if (d.value) {
        const v = d.value;
        rows.push(`<div class="tg-sec">value</div><div><code>${esc(v.dtype)} ${esc(JSON.stringify(v.shape))}</code>${"min" in v ? ` min ${esc(fmt(v.min))} max ${esc(fmt(v.max))}` : ""}</div><pre>${esc(v.preview)}</pre>`);
      }
      if (d.test_values) {
        rows.push(`<div class="tg-sec">test value</div>${d.test_values.map((v) =>
          `<div class="tg-test-value"><code>${esc(v.label)}: ${esc(v.dtype)} ${esc(JSON.stringify(v.shape))}</code>${"min" in v ? ` min ${esc(fmt(v.min))} max ${esc(fmt(v.max))} mean ${esc(fmt(v.mean))}` : ""}${v.nan || v.inf ? ` <b class="tg-bad">${esc(v.nan || 0)} NaN, ${esc(v.inf || 0)} Inf</b>` : ""}<pre>${esc(v.preview)}</pre></div>`).join("")}`);
      }
    }
    panel.innerHTML = rows.join("");
  }

  function select(id) {
    model.set("selected", id || "");
    model.save_changes();
  }

  // after opening or closing a group, the next layout keeps that group in place (keepAnchor)
  function setExpanded(list, toggled) {
    anchorGroup = toggled || null;
    model.set("expanded", [...new Set(list)]);
    model.save_changes();
  }

  // -- events -------------------------------------------------------------------------------
  // the toolbar and the panel (HTML buttons and links); the drawing acts on taps (below)
  const onClick = (ev) => {
    if (svg.contains(ev.target)) return;
    const act = ev.target.closest("[data-act]");
    if (act) {
      const what = act.getAttribute("data-act");
      if (what === "fit") fit();
      else if (what === "zoomin") zoomAt(1.25);
      else if (what === "zoomout") zoomAt(0.8);
      else if (what === "ancestors" || what === "descendants") {
        lineage = lineage === what ? "" : what;
        showLineage();
      } else if (what === "fold" && lineage && model.get("selected")) {
        const selected = model.get("selected");
        const ids = [...walk(selected, lineage)].filter((id) => nodeIndex.has(id));
        model.send({ type: "fold", ids: [selected, ...ids], label: `${lineage} of [${selected}]` });
        lineage = "";
        showLineage();
      } else if (what === "close") select("");
      ev.preventDefault();
      return;
    }
    const goto = ev.target.closest("[data-goto]");
    if (goto) { select(goto.getAttribute("data-goto")); ev.preventDefault(); }
  };
  root.addEventListener("click", onClick);

  const onOver = (ev) => {
    const node = ev.target.closest("[data-tg-node],[data-tg-group]");
    viewport.querySelectorAll(".tg-hover-edge").forEach((e) => e.classList.remove("tg-hover-edge"));
    viewport.querySelectorAll(".tg-hover-near").forEach((e) => e.classList.remove("tg-hover-near"));
    if (!node) return;
    const id = node.getAttribute("data-tg-node") || `G:${node.getAttribute("data-tg-group")}`;
    for (const e of viewport.querySelectorAll(".tg-edge")) {
      const a = e.getAttribute("data-from"), b = e.getAttribute("data-to");
      if (a === id || b === id) {
        e.classList.add("tg-hover-edge");
        const other = a === id ? b : a;
        const el2 = other.startsWith("G:") ? viewport.querySelector(`[data-tg-group="${CSS.escape(other.slice(2))}"]`)
          : viewport.querySelector(`[data-tg-node="${CSS.escape(other)}"]`);
        if (el2) el2.classList.add("tg-hover-near");
      }
    }
  };
  svg.addEventListener("mouseover", onOver);

  // A tap (a press and a release less than TAP_PX apart) acts on what was pressed, named by
  // its id; a longer move pans. The browser's own click is not used on the drawing: it is
  // lost when what was pressed leaves the DOM or moves before the release (a layout arriving
  // from the kernel redraws the boxes; a cell above changing height shifts them), and then
  // only a second click worked (issue 26). The pointer is captured, so the release comes here.
  const TAP_PX = 5;
  let press = null;
  function pressed(el) {
    for (const [attr, kind] of [["data-tg-unfold", "unfold"], ["data-tg-collapse", "collapse"],
      ["data-tg-group", "group"], ["data-tg-node", "node"]]) {
      const hit = el.closest(`[${attr}]`);
      if (hit) return { kind, id: hit.getAttribute(attr) };
    }
    return null;
  }
  function tap({ kind, id }) {
    if (kind === "node") select(id);
    else if (kind === "group") setExpanded([...(model.get("expanded") || []), id], id);
    else if (kind === "unfold") model.send({ type: "unfold", group: id });
    else if (kind === "collapse") {
      const drop = new Set([id]);
      const groups = (model.get("graph") || {}).groups || [];
      let grew = true;
      while (grew) {
        grew = false;
        for (const g of groups) if (drop.has(g.parent) && !drop.has(g.id)) { drop.add(g.id); grew = true; }
      }
      setExpanded((model.get("expanded") || []).filter((g) => !drop.has(g)), id);
    }
  }
  svg.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0) return;
    press = { pointer: ev.pointerId, x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y,
      target: pressed(ev.target), moved: false };
    svg.setPointerCapture(ev.pointerId);
    root.focus({ preventScroll: true });
  });
  svg.addEventListener("pointermove", (ev) => {
    if (!press || ev.pointerId !== press.pointer) return;
    const dx = ev.clientX - press.x, dy = ev.clientY - press.y;
    if (!press.moved && Math.hypot(dx, dy) < TAP_PX) return;
    press.moved = true;
    autoView = false;
    view.x = press.vx + dx;
    view.y = press.vy + dy;
    applyView();
  });
  svg.addEventListener("pointerup", (ev) => {
    if (!press || ev.pointerId !== press.pointer) return;
    const done = press;
    press = null;
    if (!done.moved && done.target) tap(done.target);
  });
  svg.addEventListener("pointercancel", () => { press = null; });
  svg.addEventListener("lostpointercapture", () => { press = null; });

  function zoomAt(factor, px, py) {
    const w = svg.clientWidth || 800, h = svg.clientHeight || 500;
    px = px ?? w / 2; py = py ?? h / 2;
    const k = Math.max(0.03, Math.min(4, view.k * factor));
    view.x = px - ((px - view.x) * k) / view.k;
    view.y = py - ((py - view.y) * k) / view.k;
    view.k = k;
    autoView = false;
    applyView();
  }
  // the wheel zooms only while the view has focus (a click in it), so page scrolling works
  svg.addEventListener("wheel", (ev) => {
    if (document.activeElement !== root && !ev.ctrlKey && !ev.metaKey) return;
    ev.preventDefault();
    const r = svg.getBoundingClientRect();
    zoomAt(Math.exp(-ev.deltaY * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });

  root.addEventListener("keydown", (ev) => {
    if (ev.target === search) {
      if (ev.key === "Enter") runSearch(search.value);
      if (ev.key === "Escape") { search.value = ""; root.focus(); }
      ev.stopPropagation();
      return;
    }
    const keys = { f: () => fit(), "+": () => zoomAt(1.25), "=": () => zoomAt(1.25),
      "-": () => zoomAt(0.8), Escape: () => select(""), "/": () => search.focus(),
      a: () => root.querySelector('[data-act="ancestors"]').click(),
      d: () => root.querySelector('[data-act="descendants"]').click() };
    if (keys[ev.key]) { keys[ev.key](); ev.preventDefault(); ev.stopPropagation(); }
  });

  function runSearch(text) {
    text = (text || "").trim().toLowerCase();
    if (!text) return;
    const nodes = (model.get("graph") || {}).nodes || [];
    const hit = nodes.find((n) => n.id.toLowerCase() === text)
      || nodes.find((n) => (n.op || "").toLowerCase().includes(text))
      || nodes.find((n) => (n.t || "").toLowerCase().includes(text) || (n.cls || "").toLowerCase().includes(text));
    if (!hit) { status.textContent = `no node matches "${text}"`; return; }
    status.textContent = "";
    select(hit.id);
    if (!centerOn(hit.id)) pendingCenter = hit.id;  // inside a closed group: centre after relayout
  }
  let pendingCenter = null;

  function onStatus() {
    const s = model.get("status") || "";
    status.textContent = s;
    root.classList.toggle("tg-busy", s.startsWith("laying out"));
  }

  function onLayout() {
    draw();
    if (pendingCenter && centerOn(pendingCenter)) pendingCenter = null;
  }
  function drawnLayoutHas(id) { return !!(drawnLayout && drawnLayout.items && drawnLayout.items[id]); }

  const onMsg = (msg) => {
    if (msg && msg.type === "fit") fit();
    if (msg && msg.type === "center" && msg.id) centerOn(msg.id);
  };

  model.on("change:graph", () => { fitted = false; draw(); });
  model.on("change:layout", onLayout);
  model.on("change:selected", () => { showLineage(); const id = model.get("selected"); if (id && !drawnLayoutHas(id)) pendingCenter = id; });
  model.on("change:detail", renderPanel);
  model.on("change:highlight_ids", decorate);
  model.on("change:highlight_label", decorate);
  model.on("change:overlay", decorate);
  model.on("change:marks", decorate);
  model.on("change:status", onStatus);
  model.on("change:height", setHeight);
  model.on("msg:custom", onMsg);
  setHeight();
  onStatus();
  draw();
  // the view's size is known once the page lays it out, and changes with the window: the
  // automatic view follows it until the user pans or zooms
  const resized = new ResizeObserver(() => { if (autoView && drawnLayout) fit(); });
  resized.observe(svg);

  return () => {
    resized.disconnect();
    root.removeEventListener("click", onClick);
    svg.removeEventListener("mouseover", onOver);
    for (const ev of ["graph", "layout", "selected", "detail", "highlight_ids", "highlight_label",
      "overlay", "marks", "status", "height"]) model.off(`change:${ev}`);
    model.off("msg:custom", onMsg);
  };
}

export default { render };
