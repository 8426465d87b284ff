// The detail panel: what the kernel sent about the selected node (its `detail` trait), as
// HTML. Its header shows at once from the graph; the rest when the details arrive.
import { esc, fmt } from "./text.js";

function table(rows) {
  return `<table>${rows.join("")}</table>`;
}

function detailRows(d) {
  const rows = [];
  if (d.kind && d.kind !== "apply") rows.push(`<div>${esc(d.kind)} &middot; <code>${esc(d.type)}</code></div>`);
  if (d.role) rows.push(`<div class="tg-role">${esc(d.role)}</div>`);
  if (d.runs) rows.push(`<div>runs: <b>${esc(d.runs)}</b>${d.why_python ? ` &mdash; ${esc(d.why_python)}` : ""}</div>`);
  if (d.outputs_of_graph) rows.push(`<div>${esc(d.outputs_of_graph.join(", "))}</div>`);
  if (d.params && Object.keys(d.params).length) {
    rows.push(`<div class="tg-sec">parameters</div>${table(Object.entries(d.params).map(([k, v]) =>
      `<tr><td>${esc(k)}</td><td><code>${esc(v)}</code></td></tr>`))}`);
  }
  if (d.inputs) {
    rows.push(`<div class="tg-sec">inputs</div>${table(d.inputs.map((i, k) =>
      `<tr><td>${k}</td><td><a href="#" data-goto="${esc(i.id)}">${esc(i.label)}</a> <span class="tg-id">[${esc(i.id)}]</span></td><td><code>${esc(i.type)}</code></td></tr>`))}`);
  }
  if (d.outputs) {
    rows.push(`<div class="tg-sec">outputs</div>${table(d.outputs.map((o, k) =>
      `<tr><td>${k}</td><td>${esc(o.label)}</td><td><code>${esc(o.type)}</code></td></tr>`))}`);
  }
  if (d.destroy_map) rows.push(`<div>destroy_map (inplace): <code>${esc(JSON.stringify(d.destroy_map))}</code></div>`);
  if (d.view_map) rows.push(`<div>view_map: <code>${esc(JSON.stringify(d.view_map))}</code></div>`);
  if (d.lines && d.lines.length) {
    rows.push(`<div class="tg-sec">built by</div>${d.lines.map((l) => `<pre class="tg-line">${esc(l)}</pre>`).join("")}`);
  }
  if (d.loop) {
    rows.push(`<div class="tg-sec">loop</div>${table(Object.entries(d.loop).map(([k, v]) =>
      `<tr><td>${esc(k)}</td><td><code>${esc(Array.isArray(v) ? v.join(", ") : v)}</code></td></tr>`))}`);
  }
  if (d.inner) {
    const what = d.inner_group ? "inner graph (open the group to see it drawn)" : "fused loop (inner scalar graph)";
    rows.push(`<details class="tg-inner" open><summary>${what}</summary><pre>${esc(d.inner.join("\n"))}</pre></details>`);
  }
  if (d.value) {
    const v = d.value;
    rows.push(`<div class="tg-sec">value</div><div><code>${esc(v.dtype)} ${esc(JSON.stringify(v.shape))}</code>${"min" in v ? ` min ${esc(fmt(v.min))} max ${esc(fmt(v.max))}` : ""}</div><pre>${esc(v.preview)}</pre>`);
  }
  if (d.test_values) {
    rows.push(`<div class="tg-sec">test value</div>${d.test_values.map((v) =>
      `<div class="tg-test-value"><code>${esc(v.label)}: ${esc(v.dtype)} ${esc(JSON.stringify(v.shape))}</code>${"min" in v ? ` min ${esc(fmt(v.min))} max ${esc(fmt(v.max))} mean ${esc(fmt(v.mean))}` : ""}${v.nan || v.inf ? ` <b class="tg-bad">${esc(v.nan || 0)} NaN, ${esc(v.inf || 0)} Inf</b>` : ""}<pre>${esc(v.preview)}</pre></div>`).join("")}`);
  }
  return rows;
}

// the panel of the selected id: `detail` is the kernel's (it may still be another node's),
// `node` the graph's entry for it
export function panelHtml(selected, detail, node) {
  const head = `<div class="tg-panel-head"><b>${esc(detail.title || node.op || selected)}</b>
      <span class="tg-id">[id ${esc(selected)}]</span>
      <button class="tg-btn tg-close" data-act="close" aria-label="close panel">&times;</button></div>`;
  if (detail.id !== selected) {
    return head + `<div class="tg-muted">${esc(node.t || "")} &middot; loading details...</div>`;
  }
  return head + detailRows(detail).join("");
}
