// Drawing: the SVG of the layout the kernel computed (frames, edges, boxes, with the text lines
// the kernel sent for each box), and what changes without a new layout: the classes of the
// selection, highlights, lineage and marks, the heat map's colours and the legend.
import { esc, cut, fmt } from "./text.js";

// a box's two lines of 11 px text, 15 px apart (layout.py sized the box for them)
const LINE_H = 15, PAD_Y = 10;

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

// the smallest and largest finite values of a heat map (its colours and its legend)
function heatRange(values) {
  const nums = Object.values(values).filter((v) => Number.isFinite(v));
  return nums.length ? [Math.min(...nums), Math.max(...nums)] : [0, 1];
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

function frameSvg(gid, [x0, y0, x1, y1], g) {
  return `<g class="tg-frame${g.k ? ` tg-frame-${g.k}` : ""}" data-tg-frame="${esc(gid)}">
    <rect x="${x0}" y="${y0}" width="${x1 - x0}" height="${y1 - y0}" rx="8"></rect>
    <text x="${x0 + (g.fold ? 70 : 24)}" y="${y0 + 13}" class="tg-frame-label">${esc(cut(g.label, 80))}</text>
    <g class="tg-collapse" data-tg-collapse="${esc(gid)}" role="button" aria-label="close group">
      <rect x="${x0 + 4}" y="${y0 + 3}" width="15" height="14" rx="3"></rect>
      <text x="${x0 + 11.5}" y="${y0 + 14}" text-anchor="middle">&minus;</text></g>${g.fold ? `
    <text x="${x0 + 24}" y="${y0 + 13}" class="tg-unfold" data-tg-unfold="${esc(gid)}" role="button">unfold</text>` : ""}</g>`;
}

function edgeSvg([a, b, n, label, pts]) {
  let labelSvg = "";
  if (label && pts.length >= 4) {
    // the middle point of a spline; the middle of a straight edge
    const mid = Math.floor(pts.length / 4) * 2;
    const [lx, ly] = pts.length === 4 ? [(pts[0] + pts[2]) / 2, (pts[1] + pts[3]) / 2] : [pts[mid], pts[mid + 1]];
    labelSvg = `<text class="tg-edge-label" x="${lx + 4}" y="${ly}">${esc(label)}</text>`;
  }
  // the label shows on hover and on the selected node's edges (graph_view.css); a wide
  // transparent twin of the path is what the pointer hovers
  const d = pathOf(pts);
  return `<g class="tg-edge" data-from="${esc(a)}" data-to="${esc(b)}"><path class="tg-edge-hit" d="${d}"></path><path d="${d}" marker-end="url(#tg-arrow)" style="stroke-width:${Math.min(4, 1 + Math.log2(n))}"></path>${labelSvg}</g>`;
}

// a box's lines, centred: the op, its id and type, then what folded into it (layout.folded:
// [kind, ids] per line after the second: "port" its constants, "shape" its shape plumbing),
// each naming its first folded node (a tap selects it, which draws it; the box's hover text
// lists them all)
function linesSvg(cx, y, [first, second, ...more], folded = []) {
  const extra = more.map((line, k) => {
    const [kind, ids] = folded[k] || ["port", []];
    return `
    <text x="${cx}" y="${y + PAD_Y / 2 + 11 + (k + 2) * LINE_H}" text-anchor="middle" class="tg-fold-${kind}" data-tg-folded="${esc(ids[0] || "")}">${esc(line)}</text>`;
  }).join("");
  return `<text x="${cx}" y="${y + PAD_Y / 2 + 11}" text-anchor="middle">${esc(first)}</text>
    <text x="${cx}" y="${y + PAD_Y / 2 + 11 + LINE_H}" text-anchor="middle" class="tg-sub">${esc(second)}</text>${extra}`;
}

function boxSvg(id, [cx, cy, w, h], lines, n, folded) {
  const x = cx - w / 2, y = cy - h / 2;
  const cls = [`tg-node`, `tg-k-${n.k}`];
  if (n.c) cls.push(n.c === "C" ? "tg-runs-c" : "tg-runs-py");
  if (n.f && n.f.includes("i")) cls.push("tg-inplace");
  if (n.f && n.f.includes("v")) cls.push("tg-view");
  if (n.f && n.f.includes("f")) cls.push("tg-fused");
  if (n.o) cls.push("tg-output");
  if (n.r) cls.push(`tg-role-${n.r}`);  // an inner input of a loop: sequence, state, ...
  const shape = n.k === "apply"
    ? `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="5"></rect>`
    : n.k === "constant" ? `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="2" class="tg-const-box"></rect>`
      : `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="${h / 2}"></rect>`;
  const badge = n.c ? `<text x="${x + w - 4}" y="${y + 10}" text-anchor="end" class="tg-badge">${n.c === "C" ? "C" : "Py"}</text>` : "";
  const outs = n.o ? `<text x="${cx}" y="${y + h + 11}" text-anchor="middle" class="tg-outlabel">${esc(cut(n.o.join(", "), 40))}</text>` : "";
  // the hover text names what folded into the box (its lines after the second say what)
  const into = (folded || []).map(([kind, ids]) => `\n${kind === "port" ? "constants" : "shape code"} folded in: ${ids.join(", ")} (click the line to draw it)`).join("");
  return `<g class="${cls.join(" ")}" data-tg-node="${esc(id)}"><title>${esc(n.op)} [id ${esc(id)}]${n.tv ? "\n" + esc(n.tv) : ""}${esc(into)}</title>${shape}
    ${linesSvg(cx, y, lines, folded)}${badge}${outs}</g>`;
}

function groupSvg(gid, [cx, cy, w, h], lines, g) {
  const x = cx - w / 2, y = cy - h / 2;
  // an inner graph's group (k: 'loop' for a scan, 'inner') looks apart from a line's
  return `<g class="tg-group${g.k ? ` tg-group-${g.k}` : ""}" data-tg-group="${esc(gid)}" role="button" aria-label="open group ${esc(g.label)}">
    <rect x="${x}" y="${y}" width="${w}" height="${h}" rx="6"></rect>
    ${linesSvg(cx, y, lines)}</g>`;
}

// the SVG markup of a layout of a graph (both traits of the widget)
export function drawingSvg(graph, layout) {
  const nodes = new Map((graph.nodes || []).map((n) => [n.id, n]));
  const groups = new Map((graph.groups || []).map((g) => [g.id, g]));
  const text = layout.text || {};
  const parts = [];
  for (const [gid, bb] of Object.entries(layout.frames || {})) {
    parts.push(frameSvg(gid, bb, groups.get(gid) || { label: gid }));
  }
  for (const edge of layout.edges || []) parts.push(edgeSvg(edge));
  for (const [id, box] of Object.entries(layout.items || {})) {
    const lines = text[id] || ["", ""];
    if (id.startsWith("G:")) {
      const gid = id.slice(2);
      parts.push(groupSvg(gid, box, lines, groups.get(gid) || { label: gid }));
    } else if (nodes.has(id)) {
      parts.push(boxSvg(id, box, lines, nodes.get(id), (layout.folded || {})[id]));
    }
  }
  return parts.join("");
}

// the drawn items a start item reaches through the drawn edges ("ancestors": against them)
export function lineage(layout, start, direction) {
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

// the classes and colours of the drawn nodes: selected, highlighted, related / dimmed (the
// selection's lineage), marked, heat-coloured
export function decorate(viewport, { selected, highlight, related, marks, values }) {
  const [lo, hi] = heatRange(values);
  for (const g of viewport.querySelectorAll("[data-tg-node]")) {
    const id = g.getAttribute("data-tg-node");
    g.classList.toggle("tg-selected", id === selected);
    g.classList.toggle("tg-highlighted", highlight.has(id));
    g.classList.toggle("tg-related", !!related && related.has(id));
    g.classList.toggle("tg-dimmed", !!related && !related.has(id) && id !== selected);
    for (const cls of [...g.classList]) if (cls.startsWith("tg-mark-")) g.classList.remove(cls);
    if (marks[id]) g.classList.add(`tg-mark-${marks[id]}`);
    paintHeat(g, values[id], lo, hi);
  }
  // the selected node's edges show their labels (dtype and shape); the others on hover
  for (const e of viewport.querySelectorAll(".tg-edge")) {
    e.classList.toggle("tg-edge-selected", !!selected && (e.getAttribute("data-from") === selected
      || e.getAttribute("data-to") === selected));
  }
  // a closed loop (or inner graph) box stands for its node: "in:E" shows the value of E (a
  // scan's time holds its iterations), else the hottest node of a profile drew uncoloured
  for (const g of viewport.querySelectorAll("[data-tg-group^='in:']")) {
    paintHeat(g, values[g.getAttribute("data-tg-group").slice(3)], lo, hi);
  }
}

function paintHeat(g, value, lo, hi) {
  const rect = g.querySelector("rect");
  if (!rect) return;
  if (Number.isFinite(value)) {
    const fill = heat(hi > lo ? (value - lo) / (hi - lo) : 1);
    rect.style.fill = `rgb(${fill.join(",")})`;
    g.classList.add("tg-heat");
    g.classList.toggle("tg-heat-dark", contrast(fill, LIGHT_TEXT) > contrast(fill, DARK_TEXT));
  } else {
    rect.style.fill = "";
    g.classList.remove("tg-heat", "tg-heat-dark");
  }
}

// the legend under the drawing: the heat map's title, ramp and range, and the highlight's
// label ("" when there is neither)
export function legendHtml(overlay, label) {
  let html = "";
  if (overlay.title) {
    const [lo, hi] = heatRange(overlay.values || {});
    html = `<span>${esc(overlay.title)}</span> <span class="tg-ramp"></span> <span>${esc(fmt(lo))} .. ${esc(fmt(hi))}</span>`;
  }
  if (label) html += ` <span class="tg-hl-label">${esc(label)}</span>`;
  return html;
}
