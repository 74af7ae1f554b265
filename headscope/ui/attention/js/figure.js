// Figures for a paper: a view's PNG redrawn at the export scale (data.export_scale, 2 by default)
// with its caption lines (data.meta: sentence, model; the view, layer and heads shown) above and,
// for the head and model views, a head-colour legend below (the maps carry their colour scale);
// the model view (with its token labels) and the head grid as SVG. Text only through fillText and
// SVG textContent.

import { download, fitText, fontPx, headColor, setExportDpr, shown } from "./core.js";
import { BLOCKED_RGB, isBlocked } from "./causal.js";
import { lutIndex } from "./grid.js";
import { redrawGrid } from "./gridui.js";
import { CAP_MODEL, STEPS, alphaOf, eachLine, modelGeometry, modelLabels } from "./lines.js";
import { paint } from "./controls.js";
import { renderFocus } from "./focus.js";
import { drawBars } from "./bars.js";
import { SVG_NS, draw, svgEl } from "./main.js";

function redrawView(st) {
  if (st.kind === "grid") redrawGrid(st);
  else if (st.kind === "focus") renderFocus(st);
  else if (st.kind === "bars") drawBars(st);
  else paint(st);
}

// What the figure says above the view: [what is shown, the sentence, the model]
function figureCaption(st) {
  const d = st.data, m = d.meta || {};
  let what = m.title || "";
  if (st.kind === "lines") {
    const heads = st.view.heads.map((h) => h + 1);
    const all = heads.length === d.heads;
    what = st.view.mode === "model" ? `model view · ${d.layers} layers × ${d.heads} heads`
      : `head view · layer ${st.view.layer + 1} · ${all ? "all heads" : `head${heads.length > 1 ? "s" : ""} ${heads.join(", ")}`}`;
    if (m.title) what = `${m.title} · ${what}`;
  }
  const lines = [what];
  if (m.text) lines.push(`“${shown(m.text, 160)}”`);
  if (m.model) lines.push(`model: ${shown(m.model, 80)}`);
  return lines.filter(Boolean);
}

// The heads a head-colour legend lists: those shown (head view) or all (model view)
function legendHeads(st) {
  if (st.kind !== "lines") return [];
  return st.view.mode === "model" ? [...Array(st.data.heads).keys()] : st.view.heads;
}

// The legend's items in rows that fit `width`: [{h, label, x, row}], rows
function legendItems(st, width, s) {
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.font = fontPx(12 * s);
  const items = [];
  let x = 4 * s, row = 0;
  for (const h of legendHeads(st)) {
    const label = `head ${h + 1}`, w = 25 * s + ctx.measureText(label).width;
    if (x + w > width && x > 4 * s) { x = 4 * s; row++; }
    items.push({ h, label, x, row });
    x += w;
  }
  return { items, rows: items.length ? row + 1 : 0 };
}

export function exportFigure(st, name) {
  const k = st.data.export_scale || 2, src = st.kind === "lines" ? st.canvas : st.main;
  setExportDpr(k);
  let img;
  try {
    redrawView(st);
    img = document.createElement("canvas");
    img.width = src.width;
    img.height = src.height;
    img.getContext("2d").drawImage(src, 0, 0);
  } finally {
    setExportDpr(0);
    redrawView(st);
  }
  const s = st.data.scale || 1, w = img.width / k, caption = figureCaption(st), leg = legendItems(st, w, s);
  const lineH = 18 * s, top = caption.length * lineH + 8 * s, legendH = leg.rows * 22 * s;
  const out = document.createElement("canvas");
  out.width = Math.round(w * k);
  out.height = Math.round((top + img.height / k + legendH + 4 * s) * k);
  const ctx = out.getContext("2d");
  ctx.scale(k, k);
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, w, out.height / k);
  ctx.fillStyle = "#31333f";
  ctx.textBaseline = "middle";
  caption.forEach((t, i) => {
    ctx.fillText(fitText(ctx, t, w - 8 * s, (i ? 13 : 15) * s), 4 * s, (i + 0.5) * lineH + 2 * s);
  });
  ctx.drawImage(img, 0, top, w, img.height / k);
  ctx.font = fontPx(12 * s);
  for (const { h, label, x, row } of leg.items) {
    const y = top + img.height / k + (row + 0.5) * 22 * s;
    ctx.fillStyle = headColor(st.data, h);
    ctx.fillRect(x, y - 5 * s, 12 * s, 10 * s);
    ctx.fillStyle = "#31333f";
    ctx.fillText(label, x + 15 * s, y);
  }
  st.host.dataset.figure = JSON.stringify({ width: out.width, height: out.height, screen: [src.clientWidth, src.clientHeight], caption, legend: leg.items.map((i) => i.h + 1) });
  out.toBlob((blob) => download(blob, name), "image/png");
}

// Caption lines (SVG <text>) from y = 0; returns their height
function svgCaption(parent, st, s) {
  const lines = figureCaption(st), lineH = 18 * s;
  lines.forEach((t, i) => parent.append(svgEl("text", { x: 4 * s, y: ((i + 0.5) * lineH + 2 * s).toFixed(1),
    "font-size": (i ? 13 : 15) * s, "dominant-baseline": "middle", fill: "#31333f" }, t)));
  return lines.length * lineH + 8 * s;
}

// A head-colour legend (SVG, legendItems' rows) from y0
function svgLegend(parent, st, leg, y0, s) {
  for (const { h, label, x, row } of leg.items) {
    const y = y0 + (row + 0.5) * 22 * s;
    parent.append(svgEl("rect", { x, y: y - 5 * s, width: 12 * s, height: 10 * s, fill: headColor(st.data, h) }));
    parent.append(svgEl("text", { x: x + 15 * s, y, "font-size": 12 * s, "dominant-baseline": "middle", fill: "#31333f" }, label));
  }
}

// An SVG figure W wide: the caption above, draw(body) in a group bodyH high below it, the
// head-colour legend under that
export function svgFigure(v, W, bodyH, draw, attrs = {}) {
  const s = v.data.scale, svg = svgEl("svg", { xmlns: SVG_NS });
  const cap = svgEl("g", { "font-family": "sans-serif" });
  const top = svgCaption(cap, v, s), leg = legendItems(v, W, s), H = top + bodyH + leg.rows * 22 * s;
  for (const [k, val] of Object.entries({ width: W, height: H, viewBox: `0 0 ${W} ${H}` })) svg.setAttribute(k, val);
  const body = svgEl("g", { transform: `translate(0 ${top.toFixed(1)})`, ...attrs });
  draw(body);
  const legend = svgEl("g", { "font-family": "sans-serif" });
  svgLegend(legend, v, leg, top + bodyH, s);
  svg.append(svgEl("rect", { width: W, height: H, fill: "#ffffff" }), cap, body, legend);
  return svg;
}

// One head's lines: a <g> in its colour with one <path> per opacity step (STEPS path strings)
export function svgHeadPaths(d, h, width, steps) {
  const g = svgEl("g", { stroke: headColor(d, h), "stroke-width": width, fill: "none" });
  steps.forEach((p, b) => { if (p) g.append(svgEl("path", { d: p, "stroke-opacity": ((b + 0.5) / STEPS).toFixed(3) })); });
  return g;
}

// The model view as SVG: one <path> per head and opacity step, layer and head labels
export function exportModelSvg(v) {
  const geo = modelGeometry(v), d = v.data, G = d.tokens.length;
  const cap = Math.floor(CAP_MODEL / (d.layers * d.heads));
  return svgFigure(v, geo.W, geo.H, (body) => {
    for (let h = 0; h < d.heads; h++) body.append(svgEl("text", { x: geo.left + h * (geo.tw + geo.gap) + geo.tw / 2, y: geo.lab / 2, "text-anchor": "middle", "dominant-baseline": "middle" }, `H${h + 1}`));
    for (let l = 0; l < d.layers; l++) {
      const y0 = geo.top + l * (geo.th + geo.gap), y = (t) => (y0 + ((t + 0.5) * geo.th) / G).toFixed(1);
      body.append(svgEl("text", { x: geo.lab / 2, y: y0 + geo.th / 2, "text-anchor": "middle", "dominant-baseline": "middle" }, `L${l + 1}`));
      for (let h = 0; h < d.heads; h++) {
        const x0 = geo.left + h * (geo.tw + geo.gap), parts = Array.from({ length: STEPS }, () => []);
        eachLine(v, l, h, cap, (q, k, w) => parts[alphaOf(v, q, k, w)].push(`M${x0 + 2} ${y(q)}L${x0 + geo.tw - 2} ${y(k)}`));
        body.append(svgEl("rect", { x: x0 + 0.5, y: y0 + 0.5, width: geo.tw - 1, height: geo.th - 1, fill: "none", stroke: "#e6e6e6" }));
        body.append(svgHeadPaths(d, h, 1, parts.map((p) => p.join(""))));
      }
    }
    const text = svgEl("g", { "font-size": geo.font });
    modelLabels(v, geo, (t, x, y, align) => text.append(svgEl("text", { x, y: y.toFixed(1),
      "text-anchor": align === "right" ? "end" : "start", "dominant-baseline": "middle" }, t)));
    body.append(text);
  }, { "font-family": "sans-serif", "font-size": 11 * d.scale });
}

// The head grid as SVG, laid out as shown (g.layout): each map as one <rect> per cell up to
// SVG_CELLS cells in all (an embedded G x G image drawn without smoothing above that), titles,
// token labels thinned as on the canvas, the colour scale; the caption above (svgFigure)
const SVG_CELLS = 60000;

export function exportGridSvg(g) {
  const L = g.layout, d = g.data, G = L.G, s = d.scale || 1;
  const rgb = (li) => `rgb(${g.lut[li]},${g.lut[li + 1]},${g.lut[li + 2]})`;
  const ctx = document.createElement("canvas").getContext("2d");
  const svg = svgFigure(g, L.W, L.H, (body) => {
    for (const m of L.maps) body.append(gridMapSvg(g, m, rgb, L.maps.length * G * G <= SVG_CELLS));
    const text = svgEl("g", { "font-size": L.px.title, "text-anchor": "middle", fill: "#31333f" });
    for (const m of L.maps) {
      const title = m.thumb && d.short_titles ? d.short_titles[m.i] : d.titles[m.i];
      const room = m.thumb ? m.size + 10 : d.fit ? m.size + 8 * s : m.size + 60 * s;
      const t = fitText(ctx, shown(title ?? "", 40), room, L.px.title, L.px.titleMin);
      text.append(svgEl("text", { x: m.x + m.size / 2, y: m.y - 3 * s, "font-size": parseFloat(ctx.font) }, t));
      if (m.i === d.selected) text.append(svgEl("rect", { x: m.x - 3, y: m.y - 3, width: m.size + 6, height: m.size + 6, fill: "none", stroke: "#d62728", "stroke-width": 3 }));
      if (m.left || m.bottom) text.append(gridLabelsSvg(g, m));
    }
    body.append(text, scaleSvg(g, L.legend, rgb, L.px.number));
  }, { "font-family": "sans-serif" });
  const xml = new XMLSerializer().serializeToString(svg);
  g.host.dataset.svgBytes = String(xml.length);
  download(new Blob([xml], { type: "image/svg+xml" }), `${d.filename || "attention"}.svg`);
}

function gridMapSvg(g, m, rgb, cells) {
  const G = g.layout.G, off = m.i * G * G, cell = m.size / G;
  if (!cells) {  // the map's G x G pixels as a PNG, scaled up without smoothing
    const c = document.createElement("canvas");
    c.width = c.height = G;
    const img = new ImageData(G, G);
    for (let i = 0; i < G * G; i++) {
      const li = lutIndex(g, g.values[off + i]);
      const rgb = isBlocked(g.data, Math.floor(i / G), i % G) ? BLOCKED_RGB : [g.lut[li], g.lut[li + 1], g.lut[li + 2]];
      img.data.set([...rgb, 255], i * 4);
    }
    c.getContext("2d").putImageData(img, 0, 0);
    return svgEl("image", { href: c.toDataURL("image/png"), x: m.x, y: m.y, width: m.size, height: m.size,
      preserveAspectRatio: "none", style: "image-rendering:pixelated" });
  }
  const grp = svgEl("g", { "shape-rendering": "crispEdges" });
  for (let q = 0; q < G; q++) for (let k = 0; k < G; k++) {
    grp.append(svgEl("rect", { x: (m.x + k * cell).toFixed(2), y: (m.y + q * cell).toFixed(2),
      width: cell.toFixed(2), height: cell.toFixed(2),
      fill: isBlocked(g.data, q, k) ? `rgb(${BLOCKED_RGB.join(",")})` : rgb(lutIndex(g, g.values[off + q * G + k])) }));
  }
  return grp;
}

// Query labels left of a map and key labels under it, thinned as drawLabels thins them
function gridLabelsSvg(g, m) {
  const G = g.layout.G, cell = m.size / G, f = g.layout.font, focus = g.data.focus;
  const step = Math.max(1, Math.ceil((f * 0.85) / cell)), grp = svgEl("g", { "font-size": f, "text-anchor": "end", "dominant-baseline": "middle" });
  for (let t = 0; t < G; t++) {
    if (t % step && t !== focus) continue;
    const fill = t === focus ? "#d62728" : g.data.special[t] ? "#767676" : "#31333f";
    const bold = t === focus ? { "font-weight": "bold" } : {}, mid = (t + 0.5) * cell;
    if (m.left) grp.append(svgEl("text", { x: m.x - 6, y: (m.y + mid).toFixed(1), fill, ...bold }, g.labels[t]));
    if (m.bottom) grp.append(svgEl("text", { transform: `translate(${(m.x + mid).toFixed(1)} ${m.y + m.size + 7}) rotate(-90)`, fill, ...bold }, g.labels[t]));
  }
  return grp;
}

// The colour scale: a gradient bar, its ends and middle, and its title (drawLegend's SVG twin)
function scaleSvg(g, b, rgb, px) {
  const grp = svgEl("g", { "font-size": px, fill: "#31333f" }), id = `hs-scale-${Math.random().toString(36).slice(2)}`;
  const grad = svgEl("linearGradient", { id });
  for (let i = 0; i <= 16; i++) grad.append(svgEl("stop", { offset: i / 16, "stop-color": rgb(Math.round((i / 16) * 255) * 3) }));
  grp.append(svgEl("defs", {}), svgEl("rect", { x: b.x, y: b.y, width: b.w, height: b.h, fill: `url(#${id})`, stroke: "#999" }));
  grp.firstChild.append(grad);
  const [lo, hi] = g.range;
  for (const f of [0, 0.5, 1]) {
    grp.append(svgEl("text", { x: b.x + f * b.w, y: b.y + b.h + 2, "dominant-baseline": "hanging",
      "text-anchor": f === 0 ? "start" : f === 1 ? "end" : "middle" }, String(lo + f * (hi - lo)).replace("-", "\u2212")));
  }
  grp.append(svgEl("text", { x: b.x + b.w + px * 0.6, y: b.y + b.h / 2, "dominant-baseline": "middle" }, g.data.legend));
  if (g.data.causal) {  // blockedLegend's twin: the not-attendable swatch (flat grey, no hatch)
    const w = Math.round(px * 1.3), x = b.x, y = b.y + b.h + px * 1.5;
    grp.append(svgEl("rect", { x, y, width: w, height: w, fill: `rgb(${BLOCKED_RGB.join(",")})`, stroke: "#999" }),
      svgEl("text", { x: x + w + px * 0.4, y: y + w / 2, "dominant-baseline": "middle" }, "not attendable (a later token)"));
  }
  return grp;
}
