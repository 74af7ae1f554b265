// Exports (PNG from the canvas, SVG of the head view) and draw(component), the entry point a host
// adapter calls with each new data (one state per host element, kept in STATES): host_streamlit.js
// for the Streamlit component, host_anywidget.js for the notebook widget.

import { CANVAS_STATE, STATES, download, el } from "./core.js";
import { redrawGrid, renderGrid, setupGrid } from "./gridui.js";
import { collectHead, headGeometry } from "./lines.js";
import { paint, renderLines, setupLines } from "./controls.js";
import { renderFocus, setupFocus } from "./focus.js";
import { drawBars, renderBars, setupBars } from "./bars.js";
import { renderExplorer, setupExplorer } from "./explorer.js";
import { renderRecall } from "./excontrols.js";
import { exportFigure, exportModelSvg, svgFigure, svgHeadPaths } from "./figure.js";

// A view's canvas as a PNG: the whole figure (figure.js) at the data's export scale
export function exportPng(canvas, name) {
  const st = CANVAS_STATE.get(canvas);
  if (st) return exportFigure(st, name);
  canvas.toBlob((blob) => download(blob, name), "image/png");
}

export const SVG_NS = "http://www.w3.org/2000/svg";

export function svgEl(tag, attrs, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, val] of Object.entries(attrs)) e.setAttribute(k, String(val));
  if (text !== undefined) e.textContent = text;
  return e;
}

// The head view as shown (heads, layer, threshold, filters, hovered or pinned token): one
// <path> per head and opacity step, token labels as <text> (textContent: escaped by the
// serializer), never markup made of tokens; the caption above, a head-colour legend below.
// In the model view, figure.js's exportModelSvg.
export function exportSvg(v) {
  const d = v.data, file = `${d.filename || "attention"}_${v.view.mode}_view.svg`;
  const svg = v.view.mode === "model" ? exportModelSvg(v) : headSvg(v);
  const xml = new XMLSerializer().serializeToString(svg);
  v.host.dataset.svgBytes = String(xml.length);
  download(new Blob([xml], { type: "image/svg+xml" }), file);
}

function headSvg(v) {
  const geo = headGeometry(v), d = v.data;
  const sink = () => {
    const parts = [];
    return { parts, moveTo: (x, y) => parts.push(`M${x.toFixed(1)} ${y.toFixed(1)}`), lineTo: (x, y) => parts.push(`L${x.toFixed(1)} ${y.toFixed(1)}`) };
  };
  const got = collectHead(v, geo, sink);
  const width = geo.G <= 64 ? 2 * d.scale : 1;
  return svgFigure(v, geo.W, geo.H, (body) => {
    for (const h of v.view.heads) body.append(svgHeadPaths(d, h, width, got.paths[h].map((p) => p.parts.join(""))));
    const text = svgEl("g", { "font-family": "sans-serif", "font-size": geo.font, "dominant-baseline": "middle" });
    for (let t = 0; t < geo.G; t++) {
      const fill = v.dim && d.special[t] ? "#b0b0b0" : "#31333f";
      text.append(svgEl("text", { x: geo.xl - 6, y: geo.y(t).toFixed(1), "text-anchor": "end", fill }, v.labels[t]));
      text.append(svgEl("text", { x: geo.xr + 6, y: geo.y(t).toFixed(1), fill }, v.labels[t]));
    }
    body.append(text);
  });
}

export function createState(host, root, kind) {
  const st = { kind, host, root, width: () => Math.max(320, Math.floor(host.getBoundingClientRect().width || 800)) };
  if (kind === "grid") setupGrid(st);
  else if (kind === "explorer") { setupExplorer(st); return st; }  // its parts have their own
  else if (kind === "recall") return st;
  else if (kind === "focus") setupFocus(st);
  else if (kind === "bars") setupBars(st);
  else setupLines(st);
  let lastW = 0;
  new ResizeObserver(() => {
    const w = st.width();
    if (st.data && Math.abs(w - lastW) > 2) {
      lastW = w;
      if (st.kind === "grid") redrawGrid(st);
      else if (st.kind === "focus") renderFocus(st);
      else if (st.kind === "bars") drawBars(st);
      else paint(st);
    }
  }).observe(host);
  // a projector layout (data.fit) follows the window's height too
  window.addEventListener("resize", () => { if (st.kind === "grid" && st.data && st.data.fit) redrawGrid(st); });
  return st;
}

export function draw(component) {
  const { data, parentElement } = component;
  const host = parentElement.host ?? parentElement;
  let st = STATES.get(host);
  if (!st || st.kind !== data.view) {
    let root = parentElement.querySelector(".hs-root");
    if (!root) { root = el("div", "hs-root"); parentElement.append(root); }
    root.replaceChildren();
    st = createState(host, root, data.view);
    STATES.set(host, st);
  }
  const t0 = performance.now();
  st.component = component;
  st.data = data;
  st.root.style.setProperty("--s", String(data.scale || 1));
  if (st.kind === "grid") renderGrid(st);
  else if (st.kind === "explorer") renderExplorer(st);
  else if (st.kind === "recall") renderRecall(st);
  else if (st.kind === "focus") renderFocus(st);
  else if (st.kind === "bars") renderBars(st);
  else renderLines(st);
  host.dataset.view = st.kind === "lines" ? st.view.mode : st.kind;  // the explorer: its own marks
  host.dataset.tag = String(data.tag ?? "");
  host.dataset.drawMs = (performance.now() - t0).toFixed(1); // decode + draw, in the page
  host.dataset.drawn = data.tokens.join(" ");
  if (st.main || st.canvas) CANVAS_STATE.set(st.kind === "lines" ? st.canvas : st.main, st);
}
