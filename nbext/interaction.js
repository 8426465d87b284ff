// Interaction: what the pointer, the wheel and the keys do in one view, turned into the
// camera's moves and the actions the entry module gives (`act`): select, open, close, unfold,
// toolbar buttons, search.

// A tap (a press and a release less than TAP_PX apart) acts on what was pressed, named by its
// id; a longer move pans. The browser's own click is not used on the drawing: it is lost when
// what was pressed leaves the DOM or moves before the release (a layout arriving from the
// kernel redraws the boxes; a cell above changing height shifts them), and then only a second
// click worked (issue 26). The pointer is captured, so the release comes here. A click with no
// press behind it (assistive technology, a script) still acts (listenToButtons).
const TAP_PX = 5;
const TAPPABLE = [["data-tg-unfold", "unfold"], ["data-tg-collapse", "close"],
  ["data-tg-folded", "select"],
  ["data-tg-group", "open"], ["data-tg-node", "select"]];

function tapped(el) {
  for (const [attr, action] of TAPPABLE) {
    const hit = el.closest(`[${attr}]`);
    if (hit) return { action, id: hit.getAttribute(attr) };
  }
  return null;
}

function listenToPointer({ root, svg, camera, act }) {
  let press = null;
  svg.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0) return;
    const { x, y } = camera.offset();
    press = { pointer: ev.pointerId, x: ev.clientX, y: ev.clientY, vx: x, vy: y,
      target: tapped(ev.target), moved: false };
    try {
      svg.setPointerCapture(ev.pointerId);
    } catch (e) { /* a script's pointerdown: no pointer to capture */ }
    root.focus({ preventScroll: true });
  });
  svg.addEventListener("pointermove", (ev) => {
    if (!press || ev.pointerId !== press.pointer) return;
    const dx = ev.clientX - press.x, dy = ev.clientY - press.y;
    if (!press.moved && Math.hypot(dx, dy) < TAP_PX) return;
    press.moved = true;
    camera.moveTo(press.vx + dx, press.vy + dy);
  });
  svg.addEventListener("pointerup", (ev) => {
    if (!press || ev.pointerId !== press.pointer) return;
    const done = press;
    press = null;
    if (!done.moved && done.target) act[done.target.action](done.target.id);
  });
  svg.addEventListener("pointercancel", () => { press = null; });
  svg.addEventListener("lostpointercapture", () => { press = null; });
  // the wheel zooms only while the view has focus (a click in it), so page scrolling works
  svg.addEventListener("wheel", (ev) => {
    if (document.activeElement !== root && !ev.ctrlKey && !ev.metaKey) return;
    ev.preventDefault();
    const r = svg.getBoundingClientRect();
    camera.zoomAt(Math.exp(-ev.deltaY * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
}

// hovering a box lights its edges and the boxes at their other ends, until the pointer
// leaves it (or the drawing)
function listenToHover({ svg, viewport }) {
  const clear = () => {
    viewport.querySelectorAll(".tg-hover-edge").forEach((e) => e.classList.remove("tg-hover-edge"));
    viewport.querySelectorAll(".tg-hover-near").forEach((e) => e.classList.remove("tg-hover-near"));
  };
  svg.addEventListener("mouseleave", clear);
  svg.addEventListener("mouseover", (ev) => {
    clear();
    const node = ev.target.closest("[data-tg-node],[data-tg-group]");
    if (!node) return;
    const id = node.getAttribute("data-tg-node") || `G:${node.getAttribute("data-tg-group")}`;
    for (const e of viewport.querySelectorAll(".tg-edge")) {
      const a = e.getAttribute("data-from"), b = e.getAttribute("data-to");
      if (a !== id && b !== id) continue;
      e.classList.add("tg-hover-edge");
      const other = a === id ? b : a;
      const near = other.startsWith("G:") ? viewport.querySelector(`[data-tg-group="${CSS.escape(other.slice(2))}"]`)
        : viewport.querySelector(`[data-tg-node="${CSS.escape(other)}"]`);
      if (near) near.classList.add("tg-hover-near");
    }
  });
}

// the toolbar's buttons and the panel's links and close button (HTML: their clicks are the
// browser's); the drawing acts on taps (above), and on clicks no pointer made (detail 0)
function listenToButtons({ root, svg, camera, act }) {
  root.addEventListener("click", (ev) => {
    if (svg.contains(ev.target)) {
      const target = ev.detail === 0 && tapped(ev.target);
      if (target) act[target.action](target.id);
      return;
    }
    const button = ev.target.closest("[data-act]");
    const goto = ev.target.closest("[data-goto]");
    if (!button && !goto) return;
    ev.preventDefault();
    if (goto) { act.select(goto.getAttribute("data-goto")); return; }
    const what = button.getAttribute("data-act");
    if (what === "fit") camera.fit();
    else if (what === "zoomin") camera.zoomAt(1.25);
    else if (what === "zoomout") camera.zoomAt(0.8);
    else if (what === "close") act.select("");
    else act.button(what);
  });
}

// keys while the view has focus: f fit, + and - zoom, Escape unselect, / search, a and d
// ancestors and descendants; Enter in the search box searches
function listenToKeys({ root, search, camera, act }) {
  root.addEventListener("keydown", (ev) => {
    if (ev.target === search) {
      if (ev.key === "Enter") act.search(search.value);
      if (ev.key === "Escape") { search.value = ""; root.focus(); }
      ev.stopPropagation();
      return;
    }
    const keys = { f: () => camera.fit(), "+": () => camera.zoomAt(1.25), "=": () => camera.zoomAt(1.25),
      "-": () => camera.zoomAt(0.8), Escape: () => act.select(""), "/": () => search.focus(),
      a: () => root.querySelector('[data-act="ancestors"]').click(),
      d: () => root.querySelector('[data-act="descendants"]').click() };
    if (keys[ev.key]) { keys[ev.key](); ev.preventDefault(); ev.stopPropagation(); }
  });
}

// every listener of a view; they go with its DOM
export function listen(parts) {
  listenToPointer(parts);
  listenToHover(parts);
  listenToButtons(parts);
  listenToKeys(parts);
}
