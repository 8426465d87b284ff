// tensorgraph graph view: the widget's entry module (anywidget). It builds a view's DOM, keeps
// it in step with the model (the traits `graph`, `layout`, `selected`, `detail`, ...) and
// gives the interaction its actions. The parts, one job each: drawing (draw.js), where the
// view looks (camera.js), pointer, wheel and keys (interaction.js), the detail panel
// (panel.js), text helpers (text.js). Plain ES modules, no build step: the kernel joins them
// into the one module anywidget loads (tensorgraph/notebook/assets.py).
//
// Contract for tests and user CSS (docs/graph_view.md): the root has class `tg-graph`; every
// drawn node is an element with `data-tg-node="<id>"` (the id dprint prints); closed groups
// have `data-tg-group="<group id>"`; the detail panel has class `tg-detail`.
import { drawingSvg, decorate, legendHtml, lineage } from "./draw.js";
import { createCamera } from "./camera.js";
import { listen } from "./interaction.js";
import { panelHtml } from "./panel.js";

const SKELETON = `
  <div class="tg-toolbar">
    <span class="tg-title"></span>
    <input class="tg-search" type="search" placeholder="search id, op, name, dtype" aria-label="search nodes">
    <button class="tg-btn" data-act="fit" title="fit to view (f)">fit</button>
    <button class="tg-btn" data-act="zoomin" title="zoom in (+)">+</button>
    <button class="tg-btn" data-act="zoomout" title="zoom out (-)">&minus;</button>
    <button class="tg-btn" data-act="ancestors" title="highlight the selected node's ancestors (a)">ancestors</button>
    <button class="tg-btn" data-act="descendants" title="highlight the selected node's descendants (d)">descendants</button>
    <button class="tg-btn" data-act="fold" title="fold the highlighted ancestors or descendants into one box" disabled>fold</button>
    <button class="tg-btn" data-act="shapecode" title="draw shape plumbing (Shape_i, Alloc, DimShuffle adding axes, ...) as boxes, not as badges on the nodes they serve">shape code</button>
    <button class="tg-btn" data-act="constants" title="draw constants as boxes, not as ports of the nodes reading them">constants</button>
    <span class="tg-hint" hidden title="part of the graph is shown: drag to see the rest, fit (f) to see it whole">part shown: drag to see the rest</span>
    <span class="tg-status" role="status"></span>
  </div>
  <div class="tg-body">
    <svg class="tg-canvas" xmlns="http://www.w3.org/2000/svg"><defs>
      <marker id="tg-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
        <path d="M0,0 L10,5 L0,10 z" class="tg-arrowhead"></path></marker>
    </defs><g class="tg-viewport"></g></svg>
    <div class="tg-detail" hidden></div>
  </div>
  <div class="tg-legend"></div>`;

function render({ model, el }) {
  el.classList.add("tg-graph-host");
  const root = document.createElement("div");
  root.className = "tg-graph";
  root.tabIndex = 0;
  root.setAttribute("data-lm-suppress-shortcuts", "true");
  root.innerHTML = SKELETON;
  el.appendChild(root);
  const svg = root.querySelector(".tg-canvas");
  const viewport = root.querySelector(".tg-viewport");
  const panel = root.querySelector(".tg-detail");
  const status = root.querySelector(".tg-status");
  const search = root.querySelector(".tg-search");
  const legend = root.querySelector(".tg-legend");
  const camera = createCamera({ root, svg, viewport, model });
  let drawn = null;          // the layout on the screen
  let fitted = false;        // the graph on the screen has had its first view
  let lineageShown = "";     // "ancestors", "descendants" or ""
  let toggledGroup = null;   // the group a click opened or closed: the next layout keeps it in place
  let pendingCenter = null;  // a node searched for inside a closed group: centred once drawn
  let nodeIndex = new Map();

  function draw() {
    const graph = model.get("graph") || {};
    const layout = model.get("layout") || {};
    if (layout.items && layout.graph !== graph.serial) return;  // its positions are on their way
    root.querySelector(".tg-title").textContent = graph.title || "";
    nodeIndex = new Map((graph.nodes || []).map((n) => [n.id, n]));
    if (!layout.items) { viewport.innerHTML = ""; return; }
    viewport.innerHTML = drawingSvg(graph, layout);
    // a rewrite step at its places in the union of the steps draws every node: nothing to fold
    for (const act of ["shapecode", "constants"]) root.querySelector(`[data-act="${act}"]`).hidden = !!layout.fixed;
    const previous = drawn;
    drawn = layout;
    root.dataset.tgDrawn = String(graph.serial);
    restyle();
    if (!fitted) {
      camera.firstDrawing(previous, layout);
      fitted = true;
    } else if (previous && previous !== layout) {
      camera.keepGroupInPlace(previous, layout, toggledGroup);
      toggledGroup = null;
    }
  }

  // what changes without a new layout: classes, heat colours, the legend, the panel
  function restyle() {
    const selected = model.get("selected");
    const overlay = model.get("overlay") || {};
    decorate(viewport, {
      selected, highlight: new Set(model.get("highlight_ids") || []),
      related: lineageShown && selected ? lineage(model.get("layout") || {}, selected, lineageShown) : null,
      marks: model.get("marks") || {}, values: overlay.values || {} });
    legend.innerHTML = legendHtml(overlay, model.get("highlight_label"));
    legend.hidden = !legend.innerHTML;
    showPanel();
  }

  function showPanel() {
    const selected = model.get("selected");
    panel.hidden = !selected;
    if (selected) panel.innerHTML = panelHtml(selected, model.get("detail") || {}, nodeIndex.get(selected) || {});
  }

  function showLineage() {
    root.querySelectorAll('[data-act="ancestors"],[data-act="descendants"]').forEach((b) =>
      b.classList.toggle("tg-on", b.getAttribute("data-act") === lineageShown));
    root.querySelector('[data-act="fold"]').disabled = !(lineageShown && model.get("selected"));
    restyle();
  }

  function showFolding() {
    root.querySelector('[data-act="shapecode"]').classList.toggle("tg-on", !!model.get("show_shape_code"));
    root.querySelector('[data-act="constants"]').classList.toggle("tg-on", !model.get("inline_constants"));
  }

  function showStatus() {
    const s = model.get("status") || "";
    status.textContent = s;
    root.classList.toggle("tg-busy", s.startsWith("laying out"));
  }

  function setHeight() {
    root.style.setProperty("--tg-height", `${model.get("height") || 520}px`);
  }

  function setExpanded(list, toggled) {
    toggledGroup = toggled;
    model.set("expanded", [...new Set(list)]);
    model.save_changes();
  }

  const act = {
    select(id) {
      model.set("selected", id || "");
      model.save_changes();
    },
    open(gid) {
      setExpanded([...(model.get("expanded") || []), gid], gid);
    },
    // a group closes with the groups inside it
    close(gid) {
      const drop = new Set([gid]);
      const groups = (model.get("graph") || {}).groups || [];
      let grew = true;
      while (grew) {
        grew = false;
        for (const g of groups) if (drop.has(g.parent) && !drop.has(g.id)) { drop.add(g.id); grew = true; }
      }
      setExpanded((model.get("expanded") || []).filter((g) => !drop.has(g)), gid);
    },
    unfold(gid) {
      model.send({ type: "unfold", group: gid });
    },
    // ancestors / descendants toggle the lineage shown; fold folds it into one box (the
    // kernel does it: view.fold)
    button(what) {
      const selected = model.get("selected");
      // the folding toggles are traits: the kernel lays out again (GraphView.set_folding)
      const toggles = { shapecode: "show_shape_code", constants: "inline_constants" };
      if (toggles[what]) {
        model.set(toggles[what], !model.get(toggles[what]));
        model.save_changes();
        return;
      }
      if (what === "ancestors" || what === "descendants") {
        lineageShown = lineageShown === what ? "" : what;
      } else if (what === "fold" && lineageShown && selected) {
        const ids = [...lineage(model.get("layout") || {}, selected, lineageShown)].filter((id) => nodeIndex.has(id));
        model.send({ type: "fold", ids: [selected, ...ids], label: `${lineageShown} of [${selected}]` });
        lineageShown = "";
      } else {
        return;
      }
      showLineage();
    },
    // a node by id, else op, else type or class; selected and centred
    search(text) {
      text = (text || "").trim().toLowerCase();
      if (!text) return;
      const nodes = (model.get("graph") || {}).nodes || [];
      const hit = nodes.find((n) => n.id.toLowerCase() === text)
        || nodes.find((n) => (n.op || "").toLowerCase().includes(text))
        || nodes.find((n) => (n.t || "").toLowerCase().includes(text) || (n.cls || "").toLowerCase().includes(text));
      if (!hit) { status.textContent = `no node matches "${text}"`; return; }
      status.textContent = "";
      act.select(hit.id);
      if (!camera.centerOn(hit.id)) pendingCenter = hit.id;  // inside a closed group: after the relayout
    },
  };
  listen({ root, svg, viewport, search, camera, act });

  model.on("change:graph", () => { fitted = false; draw(); });
  model.on("change:layout", () => {
    draw();
    if (pendingCenter && camera.centerOn(pendingCenter)) pendingCenter = null;
  });
  model.on("change:selected", () => {
    showLineage();
    const id = model.get("selected");
    if (id && !(drawn && drawn.items && drawn.items[id])) pendingCenter = id;
  });
  model.on("change:detail", showPanel);
  for (const name of ["highlight_ids", "highlight_label", "overlay", "marks"]) model.on(`change:${name}`, restyle);
  model.on("change:status", showStatus);
  model.on("change:show_shape_code", showFolding);
  model.on("change:inline_constants", showFolding);
  model.on("change:height", setHeight);
  model.on("msg:custom", (msg) => { if (msg && msg.type === "fit") camera.fit(); });
  setHeight();
  showFolding();
  showStatus();
  draw();
  // the view's size is known once the page lays it out, and changes with the window: the
  // automatic view follows it until the user pans or zooms
  const resized = new ResizeObserver(() => { if (drawn) camera.resized(); });
  resized.observe(svg);
  // anywidget drops the listeners this view put on the model; its DOM takes the others along
  return () => resized.disconnect();
}

export default { render };
