// Text in the view's HTML and SVG: escaped, shortened, numbers written short.

export function esc(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;",
    ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

export function cut(text, n) {
  text = String(text ?? "");
  return text.length <= n ? text : text.slice(0, n - 3) + "...";
}

export function fmt(v) {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(2) : String(Math.round(v * 1000) / 1000);
}
