// The head grid's pointer. Hover highlights the hovered row and column in every map and reads the
// cell ("q → k: 0.123", signed for a difference, with the raw norm when sent); a click on a head
// enlarges it (trigger "head"); a click on a maskable query label masks that token (trigger
// "token", the label's index in data.tokens).

import { colorLut, decode, el, markPx, shown } from "./core.js";
import { blockedTip, isBlocked } from "./causal.js";
import { drawGrid, gridLayout } from "./grid.js";
import { exportPng } from "./main.js";
import { exportGridSvg } from "./figure.js";

// A number as Python's "%.3g" writes it (the atlas's hover prints raw norms the same way)
function g3(v) {
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return "0";
  const [m, e] = v.toExponential(2).split("e"), ex = +e;
  const trim = (t) => (t.includes(".") ? t.replace(/\.?0+$/, "") : t);
  if (ex < -4 || ex >= 3) return `${trim(m)}e${ex < 0 ? "-" : "+"}${String(Math.abs(ex)).padStart(2, "0")}`;
  return trim(v.toFixed(2 - ex));
}

// What the pointer is over: {map, q, k} in a map, {q} on query labels, {k} on key labels
function gridHit(g, x, y) {
  const G = g.layout.G;
  for (const m of g.layout.maps) {
    const cell = m.size / G;
    const inX = x >= m.x && x < m.x + m.size, inY = y >= m.y && y < m.y + m.size;
    if (inX && inY) return { map: m, q: Math.floor((y - m.y) / cell), k: Math.floor((x - m.x) / cell) };
    if (m.left && inY && x < m.x && x >= m.x - g.layout.room) return { q: Math.floor((y - m.y) / cell) };
    if (m.bottom && inX && y >= m.y + m.size && y < m.y + m.size + g.layout.room)
      return { k: Math.floor((x - m.x) / cell) };
  }
  return null;
}

// A query label that a click masks (the page sent data.maskable)
function maskHit(g, hit) {
  const mk = g.data.maskable;
  return !!(hit && !hit.map && hit.q !== undefined && mk && mk[hit.q]);
}

// The highlight: the hovered query row and key column in every map at once
function drawHover(g, hit) {
  const L = g.layout, ctx = g.over.getContext("2d");
  ctx.clearRect(0, 0, L.W, L.H);
  if (!hit) return;
  ctx.fillStyle = "rgba(255, 140, 0, 0.22)";
  ctx.strokeStyle = "rgba(230, 100, 0, 0.95)";
  ctx.lineWidth = 1;
  for (const m of L.maps) {
    const cell = m.size / L.G, band = Math.max(cell, 2);
    if (hit.q !== undefined) {
      const y = m.y + hit.q * cell - (band - cell) / 2;
      ctx.fillRect(m.x, y, m.size, band);
      ctx.strokeRect(m.x, y, m.size, band);
    }
    if (hit.k !== undefined) {
      const x = m.x + hit.k * cell - (band - cell) / 2;
      ctx.fillRect(x, m.y, band, m.size);
      ctx.strokeRect(x, m.y, band, m.size);
    }
  }
}

function gridTooltip(g, hit, x, y) {
  const tip = g.tip, d = g.data;
  if (maskHit(g, hit)) {
    tip.firstChild.textContent = "click: mask this token";
    tip.lastChild.textContent = `${d.tokens[hit.q]} \u2192 [MASK]`;
  } else if (hit && !hit.map) {  // a label: the whole token (a long one is cut on the canvas)
    tip.firstChild.textContent = hit.q !== undefined ? "query (row)" : "key (column)";
    tip.lastChild.textContent = d.tokens[hit.q ?? hit.k];
  } else if (hit && hit.map && isBlocked(d, hit.q, hit.k)) {
    tip.firstChild.textContent = d.titles[hit.map.i] ?? "";
    tip.lastChild.textContent = blockedTip(d.tokens[hit.q], d.tokens[hit.k]);
  } else if (hit && hit.map) {
    const G = g.layout.G, c = hit.map.i * G * G + hit.q * G + hit.k, w = g.values[c];
    const signed = g.range[0] < 0 && w >= 0 ? "+" : "";
    const r = g.raw ? g.raw[c] : NaN;
    tip.firstChild.textContent = d.titles[hit.map.i] ?? "";
    tip.lastChild.textContent = `${d.tokens[hit.q]} \u2192 ${d.tokens[hit.k]}: ${signed}${w.toFixed(3)}` +
      (Number.isFinite(r) ? ` (\u2016\u03b1f\u2016 ${g3(r)})` : "");
  } else { tip.hidden = true; return; }
  tip.hidden = false;
  const right = x + 14 + tip.offsetWidth > g.layout.W;  // never past the left edge either
  tip.style.left = `${Math.max(0, right ? x - 14 - tip.offsetWidth : x + 14)}px`;
  tip.style.top = `${y + 14}px`;
}

export function setupGrid(g) {
  g.box = el("div", "hs-box");
  g.main = el("canvas", "hs-main");
  g.over = el("canvas", "hs-over");
  g.tip = el("div", "hs-tip");
  g.tip.append(el("div", "hs-tip-title"), el("div", "hs-tip-text"));
  g.tip.hidden = true;
  const bar = el("div", "hs-bar");
  const png = el("button", "hs-btn", "PNG");
  png.title = "Save the maps as a PNG image";
  png.addEventListener("click", () => exportPng(g.main, `${g.data.filename || "attention"}.png`));
  const svg = el("button", "hs-btn", "SVG");
  svg.title = "The maps as an SVG drawing";
  svg.addEventListener("click", () => exportGridSvg(g));
  bar.append(png, svg);
  g.box.append(g.main, g.over, g.tip);
  g.root.append(bar, g.box);
  const pos = (e) => { const r = g.over.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
  g.over.addEventListener("mousemove", (e) => {
    const t0 = performance.now(), [x, y] = pos(e);
    const hit = gridHit(g, x, y);
    drawHover(g, hit);
    gridTooltip(g, hit, x, y);
    const clickable = (hit && hit.map && hit.map.i < g.data.heads) || maskHit(g, hit);
    g.over.style.cursor = clickable ? "pointer" : "default";
    const t1 = performance.now();
    g.host.dataset.hoverMs = (t1 - e.timeStamp).toFixed(2); // from the input event
    g.host.dataset.hoverWorkMs = (t1 - t0).toFixed(2); // the handler's own work
    g.host.dataset.hover = hit ? `${hit.q ?? ""}:${hit.k ?? ""}` : "";
  });
  g.over.addEventListener("mouseleave", () => { drawHover(g, null); gridTooltip(g, null); g.host.dataset.hover = ""; });
  g.over.addEventListener("click", (e) => {
    const hit = gridHit(g, ...pos(e));
    if (hit && hit.map && hit.map.i < g.data.heads) g.component.setTriggerValue("head", hit.map.i);
    else if (maskHit(g, hit)) g.component.setTriggerValue("token", hit.q);
  });
}

export function renderGrid(g) {
  const d = g.data;
  g.values = decode(d.maps);
  g.raw = d.raw ? decode(d.raw) : null;
  g.range = d.range || [0, 1];
  g.count = d.maps.shape[0];
  g.lut = colorLut(d.colorscale);
  g.labels = d.tokens.map((t) => shown(t, 14));
  g.focusSet = new Set(d.focus_set ?? (d.focus === null || d.focus === undefined ? [] : [d.focus]));
  redrawGrid(g);
}

export function redrawGrid(g) {
  g.layout = gridLayout(g, g.width());
  drawGrid(g);
  drawHover(g, null);
  g.tip.hidden = true;
  g.host.dataset.maps = String(g.count);
  g.host.dataset.heads = String(g.data.heads);
  g.host.dataset.selected = g.data.selected === null ? "" : String(g.data.selected + 1);
  // where each map is on the canvas (CSS px), for tests that point at a cell
  g.host.dataset.room = String(g.layout.room);
  g.host.dataset.causal = String(!!g.data.causal);
  g.host.dataset.blocked = String(g.blocked);  // not-attendable cells drawn in the first map  // the labels' room left of and under the maps
  g.host.dataset.layout = JSON.stringify(g.layout.maps.map(({ i, x, y, size, thumb }) => ({ i, x, y, size, thumb: !!thumb })));
  markPx(g.host, { labelPx: g.drawnPx.label, titlePx: g.drawnPx.title, numberPx: g.layout.px.number,
    unlabelled: g.unlabelled.size });
}
