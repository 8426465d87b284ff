// Where the view looks: the pan and zoom of the drawing (one transform on its viewport
// group). "fit" shows the whole drawing while its text stays readable, else the part around
// what matters at the readable size; a new layout keeps an opened or closed group where it
// was; a rewrite step keeps the boxes still and brings what it changed into sight.

// node text is FONT_PX (graph_view.css); no automatic view draws it below READABLE_PX on
// screen: a drawing too big for that is shown in part, and the user pans
const FONT_PX = 11, READABLE_PX = 8;
const K_READABLE = READABLE_PX / FONT_PX, K_MAX = 1.2, MARGIN = 12;

// [x0, y0, x1, y1] of a layout box [cx, cy, w, h]
function boxEdges(box) {
  return box ? [box[0] - box[2] / 2, box[1] - box[3] / 2, box[0] + box[2] / 2, box[1] + box[3] / 2] : null;
}

// (x0..x1) at scale k centred at screen c when it fits, else kept covering the screen
// (no empty margin beyond the drawing's edge while there is more of it to see)
function place(x0, x1, k, c, span) {
  const t = c - ((x0 + x1) / 2) * k;
  if ((x1 - x0) * k <= span - 2 * MARGIN) return (span - (x0 + x1) * k) / 2;
  return Math.min(MARGIN - x0 * k, Math.max(span - MARGIN - x1 * k, t));
}

// where a group is in a layout: the top middle of its closed box, or of its frame's first
// child (the topmost, then leftmost box inside the frame)
function groupSpot(layout, gid) {
  const frame = (layout.frames || {})[gid];
  if (!frame) {
    const box = boxEdges((layout.items || {})[`G:${gid}`]);
    return box && [(box[0] + box[2]) / 2, box[1]];
  }
  let first = null;
  for (const [cx, cy] of Object.values(layout.items || {})) {
    if (cx < frame[0] || cx > frame[2] || cy < frame[1] || cy > frame[3]) continue;
    if (!first || cy < first[1] || (cy === first[1] && cx < first[0])) first = [cx, cy];
  }
  return [first ? first[0] : (frame[0] + frame[2]) / 2, frame[1]];
}

// the camera of one view: `model` is read (layout, graph, selection, marks), never written
export function createCamera({ root, svg, viewport, model }) {
  let view = { x: 0, y: 0, k: 1 };
  let auto = true;  // the view is fit()'s own (no pan or zoom since): it follows resizes

  function size() {
    return [svg.clientWidth || 800, svg.clientHeight || 500];
  }

  function apply() {
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

  // the whole drawing, as large as K_MAX, when its text stays readable; else the part
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
    auto = true;
    apply();
  }

  // a box into sight at the current zoom, not moving at all when it is in sight already
  function keepInSight([x0, y0, x1, y1]) {
    const [w, h] = size();
    const k = view.k;
    if (x0 * k + view.x >= 0 && x1 * k + view.x <= w && y0 * k + view.y >= 0 && y1 * k + view.y <= h) return;
    view = { k, x: w / 2 - ((x0 + x1) / 2) * k, y: h / 2 - ((y0 + y1) / 2) * k };
    apply();
  }

  return {
    fit,

    // a new graph's first drawing: fit it; from one rewrite step to the next the boxes keep
    // their places (one union layout), and so does the view, moving only to bring what the
    // step changed (the marked nodes) into sight
    firstDrawing(previous, layout) {
      const sameUnion = !!(layout.union && previous && previous.union === layout.union);
      const marked = sameUnion && focusBox(view.k);
      if (marked) keepInSight(marked);
      else if (!sameUnion) fit();
    },

    // a group opened or closed (a click, or expand()/collapse() in Python): it stays where
    // it was on the screen, the zoom unchanged: the opened frame's top and its first child
    // start where the closed box was (and the closed box where the frame's first child was),
    // so the view does not jump and the eye finds the group's content where it clicked
    keepGroupInPlace(before, after, toggled) {
      let gid = toggled && groupSpot(before, toggled) && groupSpot(after, toggled) ? toggled : null;
      if (!gid) {
        const opened = Object.keys(after.frames || {}).filter((g) => !(before.frames || {})[g]);
        const closed = Object.keys(before.frames || {}).filter((g) => !(after.frames || {})[g]);
        gid = [...opened, ...closed].find((g) => groupSpot(before, g) && groupSpot(after, g)) || null;
      }
      if (!gid) return;
      const [ax, ay] = groupSpot(before, gid), [bx, by] = groupSpot(after, gid);
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
      auto = false;
      apply();
    },

    // a node in the middle, at 80% or more; false when it is not drawn
    centerOn(id) {
      const layout = model.get("layout");
      const box = layout && layout.items && layout.items[id];
      if (!box) return false;
      const [w, h] = size();
      view.k = Math.max(view.k, 0.8);
      view.x = w / 2 - box[0] * view.k;
      view.y = h / 2 - box[1] * view.k;
      apply();
      return true;
    },

    // zoom by `factor` keeping the screen point (px, py) still (default: the middle)
    zoomAt(factor, px, py) {
      const [w, h] = size();
      px = px ?? w / 2; py = py ?? h / 2;
      const k = Math.max(0.03, Math.min(4, view.k * factor));
      view.x = px - ((px - view.x) * k) / view.k;
      view.y = py - ((py - view.y) * k) / view.k;
      view.k = k;
      auto = false;
      apply();
    },

    // the drawing's offset on the screen, and moving it there (a pan)
    offset() { return { x: view.x, y: view.y }; },
    moveTo(x, y) {
      view.x = x;
      view.y = y;
      auto = false;
      apply();
    },

    // the view's size changed: the automatic view follows it, a panned or zoomed one stays
    resized() { if (auto) fit(); },
  };
}
