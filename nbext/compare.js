// tensorgraph mode comparison (tgn.compare): one row per mode with bars for the compile times
// (cold, warm) and the time per call (median, with the 25-75 % spread as a whisker), whether
// the results agree with the reference mode, and the node count after rewriting. A click on a
// row (or Enter on a focused row) selects the mode: the trait `selected`, which the kernel
// answers by showing that mode's graph below. The kernel computes every number; this module
// only draws the trait `rows`.
//
// While compile times are measured in the background, the trait `progress` is a line such as
// "compile times: 3 of 8 measured in new processes", drawn above the table with a Cancel
// button that sets the trait `cancelled`; cells still to come read "measuring…".
//
// Contract for tests and user CSS: the root has class `tg-compare`; each row is a `tr` with
// `data-tg-mode="<mode>"`, class `tg-cmp-error` when the mode failed, `tg-cmp-selected` when
// it is the selected one; the progress line is `.tg-cmp-progress`, its button
// `button.tg-cmp-cancel`.

function esc(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ({
    "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

function seconds(value) {
  if (value === null || value === undefined) return "–";
  if (value >= 1) return `${value.toFixed(2)} s`;
  if (value >= 1e-3) return `${(value * 1e3).toFixed(1)} ms`;
  return `${(value * 1e6).toFixed(0)} µs`;
}

function diffText(value) {
  if (value === 0) return "0";
  return Math.abs(value) >= 1e-3 && Math.abs(value) < 1e4 ? Number(value).toPrecision(2) : Number(value).toExponential(1);
}

const MEASURING = "measuring in new processes";

function bar(value, max, label, whisker, missing) {
  if ((value === null || value === undefined) && missing === MEASURING) {
    return `<span class="tg-cmp-none tg-cmp-pending" title="${esc(missing)}">measuring…</span>`;
  }
  if (value === null || value === undefined) {
    return `<span class="tg-cmp-none" title="${esc(missing || "")}">${missing ? (missing.startsWith("not measured") ? "not measured" : "failed") : "–"}</span>`;
  }
  const width = max > 0 ? Math.max(1, (100 * value) / max) : 1;
  let w = "";
  if (whisker) {
    const [lo, hi] = whisker;
    const left = (100 * lo) / max, right = Math.min(100, (100 * hi) / max);
    w = `<span class="tg-cmp-whisker" style="left:${left.toFixed(1)}%;width:${Math.max(0.5, right - left).toFixed(1)}%"></span>`;
  }
  return `<div class="tg-cmp-cell"><div class="tg-cmp-track"><span class="tg-cmp-bar" style="width:${width.toFixed(1)}%"></span>${w}</div><span class="tg-cmp-num">${esc(label)}</span></div>`;
}

function agreement(row, reference) {
  if (row.error) return "";
  if (row.mode === reference) return `<span class="tg-cmp-ref">reference</span>`;
  if (row.agrees === null || row.agrees === undefined) return "–";
  const diff = row.max_abs_diff === null ? "" : ` <span class="tg-cmp-sub">max |diff| ${diffText(row.max_abs_diff)}</span>`;
  const bad = (row.outputs || []).filter((o) => o.agrees === false).map((o) => `${o.name}${o.note ? ": " + o.note : ""}`);
  return row.agrees
    ? `<span class="tg-cmp-ok">✓ agrees</span>${diff}`
    : `<span class="tg-cmp-bad" title="${esc(bad.join("; "))}">✗ differs</span>${diff}`;
}

function tableHtml(model) {
  const rows = model.get("rows") || [];
  const reference = model.get("reference");
  const selected = model.get("selected");
  const ok = rows.filter((r) => !r.error);
  const maxOf = (key) => Math.max(0, ...ok.map((r) => r[key] || 0));
  const compileMax = Math.max(maxOf("compile_cold"), maxOf("compile_warm"), 1e-9);
  const callMax = Math.max(maxOf("call_p75"), maxOf("call_median"), 1e-12);
  const fastest = model.get("fastest");
  const body = rows.map((r) => {
    const cls = [r.error ? "tg-cmp-error" : "", r.mode === selected ? "tg-cmp-selected" : ""].join(" ");
    const head = `<th scope="row"><span class="tg-cmp-mode">${esc(r.mode)}</span>${r.mode === fastest ? ` <span class="tg-cmp-badge" title="smallest median time per call among the modes that agree">fastest</span>` : ""}</th>`;
    if (r.error) {
      return `<tr class="${cls}" data-tg-mode="${esc(r.mode)}" tabindex="0">${head}<td colspan="5" class="tg-cmp-why">${esc(r.error)}</td></tr>`;
    }
    const note = r.compile_note ? esc(r.compile_note) : "";
    const cold = bar(r.compile_cold, compileMax, seconds(r.compile_cold), null, r.compile_note);
    const warm = bar(r.compile_warm, compileMax, seconds(r.compile_warm), null, r.compile_note);
    const call = bar(r.call_median, callMax, `${seconds(r.call_median)}`, [r.call_p25, r.call_p75]);
    const spread = `<span class="tg-cmp-sub">${seconds(r.call_p25)}–${seconds(r.call_p75)}, ${r.calls} calls</span>`;
    return `<tr class="${cls}" data-tg-mode="${esc(r.mode)}" tabindex="0" title="${note}">${head}` +
      `<td>${cold}</td><td>${warm}</td><td>${call}${spread}</td>` +
      `<td>${agreement(r, reference)}</td><td class="tg-cmp-nodes">${r.nodes ?? "–"}</td></tr>`;
  }).join("");
  return `<table class="tg-cmp-table"><thead><tr><th>mode</th>` +
    `<th title="new process, empty compile directory: function() to the first result">compile, cold</th>` +
    `<th title="new process, this kernel's compile directory (filled by compiling the mode here)">compile, warm</th>` +
    `<th title="median time per call; whisker and small print: 25-75 %">time per call</th>` +
    `<th>results vs ${esc(reference || "–")}</th><th>nodes</th></tr></thead><tbody>${body}</tbody></table>`;
}

function render({ model, el }) {
  el.classList.add("tg-compare-host");
  const root = document.createElement("div");
  root.className = "tg-compare";
  root.setAttribute("data-lm-suppress-shortcuts", "true");
  el.appendChild(root);

  function draw() {
    const notes = [...new Set((model.get("rows") || []).filter((r) => !r.error && r.compile_note
      && !r.compile_note.startsWith("not measured") && r.compile_note !== MEASURING)
      .map((r) => `${r.mode}: ${r.compile_note}`))];
    const progress = model.get("progress");
    const busy = progress ? `<div class="tg-cmp-progress" role="status"><span class="tg-cmp-spinner" aria-hidden="true"></span>${esc(progress)} ` +
      `<button class="tg-cmp-cancel" type="button" title="stop measuring compile times (the running processes are killed)">Cancel</button></div>` : "";
    root.innerHTML = `<div class="tg-cmp-title">${esc(model.get("title"))}</div>${busy}${tableHtml(model)}` +
      `<div class="tg-cmp-foot">Click a row to see that mode's graph after rewriting. ` +
      `Compile: seconds from function() to the first result in a new process (cold: empty compile cache; warm: this kernel's cache, filled by compiling here; they run side by side, one per core).` +
      (notes.length ? ` ${notes.map(esc).join("; ")}` : "") + `</div>`;
  }
  function choose(event) {
    if (event.target.closest("button.tg-cmp-cancel")) {
      if (event.type === "click") {
        model.set("cancelled", true);
        model.save_changes();
      }
      return;
    }
    const tr = event.target.closest("tr[data-tg-mode]");
    if (!tr || !root.contains(tr)) return;
    if (event.type === "keydown" && event.key !== "Enter" && event.key !== " ") return;
    if (event.type === "keydown") event.preventDefault();
    model.set("selected", tr.getAttribute("data-tg-mode"));
    model.save_changes();
  }
  root.addEventListener("click", choose);
  root.addEventListener("keydown", choose);
  // anywidget drops a view's model listeners itself when the view goes
  model.on("change:rows", draw);
  model.on("change:selected", draw);
  model.on("change:title", draw);
  model.on("change:progress", draw);
  draw();
  return () => {
    root.removeEventListener("click", choose);
    root.removeEventListener("keydown", choose);
  };
}

export default { render };
