// The head grid (the Explorer), its layout and drawing. The heads of one layer in a grid, the extra
// maps (single head, mean) beside them, one colour scale (data.range, 0..1 for weights, -1..1 for a
// difference) and its legend, all on one canvas. gridui.js adds the hover (an overlay canvas: a
// hover never redraws the maps and never asks the server) and the clicks.

import { fitText, fontPx, labelRoom, shown, sizeCanvas } from "./core.js";
import { BLOCKED_RGB, blockedLegend, blockedRoom, hatchBlocked, isBlocked } from "./causal.js";

// With data.fit, the room left on the first screen below the maps' top (CSS px): the page is
// laid out for a projector, where nothing may need scrolling. Infinity without data.fit.
function fitRoom(g) {
  if (!g.data.fit) return Infinity;
  const r = g.box.getBoundingClientRect();
  let s = g.host.parentElement;
  while (s && s !== document.body) {
    const o = getComputedStyle(s).overflowY;
    if ((o === "auto" || o === "scroll") && s.scrollHeight > s.clientHeight) break;
    s = s.parentElement;
  }
  if (!s || s === document.body) return window.innerHeight - (r.top + window.scrollY) - 8;
  const sr = s.getBoundingClientRect();
  return s.clientHeight - (r.top - sr.top + s.scrollTop) - 8;
}

// n maps of side `tile`, `cols` to a row, left to right and top to bottom: query labels left
// of the first column (room), a title above each map, key labels under the last row.
function tiles(n, cols, tile, { room, titleH, gap }) {
  const maps = [];
  for (let i = 0; i < n; i++) {
    const r = Math.floor(i / cols), c = i % cols;
    maps.push({ i, x: room + c * (tile + gap), y: titleH + r * (tile + titleH + gap), size: tile,
      left: c === 0, bottom: i + cols >= n });
  }
  return maps;
}

export function gridLayout(g, W) {
  const d = g.data, s = d.scale, G = d.tokens.length;
  const M = g.count, Hn = d.heads, extra = M - Hn;
  if (d.big) return bigLayout(g, W);
  if (d.present && d.fit) return presentLayout(g, W);
  const font = (G <= 16 ? 11 : 9) * s, titleH = 18 * s, gap = 10 * s;
  const legendH = 40 * s + blockedRoom(d, 11 * s);  // 11 * s: px.number below
  const ctx = g.main.getContext("2d");
  const room = labelRoom(ctx, g.labels, font, 90 * s);
  const px = { font, title: 12 * s, number: 11 * s, titleMin: 8 };
  if (d.fit) return fitLayout(g, W, { M, G, font, titleH, gap, legendH, room, s, px });
  const cols = Hn <= 4 ? Hn : Hn <= 12 ? 3 : 4, rows = Math.ceil(Hn / cols);
  const side = extra > 0 && W >= 560 ? Math.floor(W * 0.4) : 0;
  const gridW = W - side - (side ? 16 * s : 0);
  const tile = Math.max(40, Math.min(150 * s, Math.floor((gridW - room - (cols - 1) * gap) / cols)));
  const maps = tiles(Hn, cols, tile, { room, titleH, gap });
  let h = rows * (tile + titleH + gap) + room;
  const sideTile = side ? Math.max(40, Math.min(side - room - 8, 215 * s)) : tile;
  for (let j = 0; j < extra; j++) {
    const x = side ? gridW + 16 * s + room : room + j * (tile + room + gap);
    const y = side ? titleH + j * (sideTile + titleH + room) : h + titleH;
    maps.push({ i: Hn + j, x, y, size: sideTile, left: true, bottom: true });
  }
  if (side) h = Math.max(h, extra * (sideTile + titleH + room));
  else if (extra) h += sideTile + titleH + room;
  const legend = { x: side ? gridW + 16 * s + room : room, y: h + 6 * s, w: 160 * s, h: 10 * s };
  return { maps, font, titleH, room, W, H: h + legendH, legend, G, px };
}

// A projector's layout (data.fit): every map (heads, then single head and mean) in one grid of
// the rows and columns that give the largest tiles within the width and the first screen's
// height (fitRoom); query labels left of the first column, key labels under the last row.
function fitLayout(g, W, o) {
  const { M, G, font, titleH, gap, legendH, room, s, px } = o;
  const maxH = fitRoom(g);
  let best = null;
  for (let rows = 1; rows <= M; rows++) {
    const cols = Math.ceil(M / rows);
    const byW = Math.floor((W - room - (cols - 1) * gap) / cols);
    const byH = Math.floor((maxH - room - legendH - rows * (titleH + gap)) / rows);
    const tile = Math.min(150 * s, byW, byH);
    if (!best || tile > best.tile) best = { rows, cols, tile };
  }
  const { rows, cols } = best, tile = Math.max(40, best.tile);
  const maps = tiles(M, cols, tile, { room, titleH, gap });
  const h = rows * (tile + titleH + gap) + room;
  const legend = { x: room, y: h + 6 * s, w: 160 * s, h: 10 * s };
  return { maps, font, titleH, room, W, H: h + legendH, legend, G, px };
}

// Presentation mode (data.present with data.fit), designed for reading from the back of a room: the heads
// as clickable thumbnails (titles only), and the enlarged head and the extra maps (summed head,
// mean) large, every token labelled, all of it on the first screen (fitRoom). The thumbnails go
// above the large maps or in a block right of them, whichever leaves the large maps bigger; they
// shrink (72, 60, 48 px at 1280) only while the large maps would give a label less than 1.2
// lines of its own. Text is PRESENT_PX CSS px at a 1280 px wide window and grows with the window
// (projectorFactor).
function presentLayout(g, W) {
  const d = g.data, G = d.tokens.length, M = g.count, Hn = d.heads, k = projectorFactor();
  const font = PRESENT_PX * k, titleH = Math.round(font * 1.5), gap = Math.round(12 * k);
  const legendH = Math.round(font * 2.6) + blockedRoom(d, font);
  const ctx = g.main.getContext("2d");
  const room = labelRoom(ctx, g.labels, font, 170 * k), legendText = ctx.measureText(d.legend || "").width;
  const big = (d.selected === null || d.selected === undefined ? [] : [d.selected]);
  for (let j = Hn; j < M; j++) big.push(j);
  const nb = Math.max(1, big.length), bigGap = 2 * gap, fit = fitRoom(g);
  // the large maps' side with thumbnails of side t in `cols` columns, above them or beside
  const plan = (t, cols, beside) => {
    // (+ 4 px: the selected head's frame, 3 px outside its thumbnail)
    const blockH = Math.ceil(Hn / cols) * (t + titleH + gap), blockW = cols * (t + gap) - gap + 4;
    const byW = Math.floor((W - room - (nb - 1) * bigGap - (beside ? blockW + 2 * gap : 0)) / nb);
    const byH = Math.floor(fit - titleH - room - (beside ? 0 : blockH + gap + legendH));
    if ((blockW > W && cols > 1) || (beside && blockH + legendH > fit)) return null;
    return { t, cols, beside, blockH, byW, size: Math.min(byW, byH, Math.round(44 * k * G)) };
  };
  let best = null;
  for (const t of [72, 60, 48].map((v) => Math.round(v * k))) {
    for (const beside of [false, true]) {
      for (let cols = Hn; cols >= 1; cols--) {
        const p = plan(t, cols, beside);
        if (p && (!best || p.size > best.size)) best = p;
      }
    }
    if (best && best.size >= 1.2 * G * font) break;  // labels with room between them: enough
  }
  // a label's cell is 0.85 of its font at least (drawLabels labels every token), within the width
  const size = Math.max(40, Math.min(best.byW, Math.max(best.size, Math.ceil(G * font * 0.85))));
  const x0 = best.beside ? room + nb * size + (nb - 1) * bigGap + 2 * gap : 0, top = best.beside ? 0 : best.blockH + gap;
  const maps = tiles(Hn, best.cols, best.t, { room: x0, titleH, gap })
    .map((m) => ({ ...m, left: false, bottom: false, thumb: true }));
  big.forEach((i, j) => maps.push({ i, x: room + j * (size + bigGap), y: top + titleH, size,
    left: j === 0, bottom: true }));
  const h = top + titleH + size + room;
  const legend = best.beside
    ? { x: x0, y: best.blockH + 6 * k, w: Math.max(60, Math.min(220 * k, W - x0 - legendText - font)), h: 14 * k }
    : { x: room, y: h + 6 * k, w: 220 * k, h: 14 * k };
  return { maps, font, titleH, room, W, H: Math.max(h, legend.y - 6 * k) + legendH, legend, G,
    px: { font, title: font, number: font, titleMin: font } };
}

// The enlarged head (data.big): one map, large (520 px at scale 1, within the width), its title
// above and the legend under it; every token labelled while the labels fit (drawLabels thins)
function bigLayout(g, W) {
  const d = g.data, s = d.scale, G = d.tokens.length;
  const font = d.present ? PRESENT_PX * projectorFactor() : 12 * s, titleH = Math.round(font * 1.9);
  const room = labelRoom(g.main.getContext("2d"), g.labels, font, 120 * s);
  const size = Math.max(60, Math.min(W - room - 8, 520 * s));
  const maps = [{ i: 0, x: room, y: titleH, size, left: true, bottom: true }];
  const h = titleH + size + room, legend = { x: room, y: h + 6 * s, w: 160 * s, h: 10 * s };
  return { maps, font, titleH, room, W, H: h + Math.round(font * 2.4) + blockedRoom(d, font), legend, G,
    px: { font, title: font * 1.15, number: font, titleMin: font } };
}

// The size factor of presentation mode's text: 1 at a 1280 px wide window, up to 2
export function projectorFactor() {
  return Math.min(2, Math.max(1, window.innerWidth / 1280));
}
export const PRESENT_PX = 18; // presentation mode's smallest text (CSS px at 1280 px wide)

// A value's place in the colour table (g.lut, 3 bytes an entry); NaN (no value) is the scale's start
export function lutIndex(g, val) {
  const [lo, hi] = g.range, t = (val - lo) / (hi - lo || 1);
  return (t >= 0 ? Math.min(255, Math.round(t * 255)) : 0) * 3;
}

export function drawGrid(g) {
  const d = g.data, L = g.layout, G = L.G, s = d.scale;
  const ctx = sizeCanvas(g.main, L.W, L.H);
  sizeCanvas(g.over, L.W, L.H);
  g.drawnPx = { title: Infinity, label: Infinity };
  g.unlabelled = new Set();
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, L.W, L.H);
  // each map: G x G pixels through the colour table, then scaled up without smoothing
  const img = new ImageData(G, G), px = img.data, src = document.createElement("canvas");
  src.width = src.height = G;
  const sctx = src.getContext("2d");
  ctx.imageSmoothingEnabled = false;
  g.blocked = 0;  // cells of the first map drawn as not attendable (causal.js), for tests
  for (const m of L.maps) {
    const off = m.i * G * G;
    let blocked = 0;
    for (let c = 0; c < G * G; c++) {
      const li = lutIndex(g, g.values[off + c]);
      const rgb = isBlocked(d, Math.floor(c / G), c % G) ? (blocked++, BLOCKED_RGB) : [g.lut[li], g.lut[li + 1], g.lut[li + 2]];
      px[c * 4] = rgb[0]; px[c * 4 + 1] = rgb[1]; px[c * 4 + 2] = rgb[2];
      px[c * 4 + 3] = 255;
    }
    if (m === L.maps[0]) g.blocked = blocked;
    sctx.putImageData(img, 0, 0);
    ctx.drawImage(src, m.x, m.y, m.size, m.size);
    if (d.causal) hatchBlocked(ctx, m, G);
    ctx.fillStyle = "#31333f";
    ctx.textAlign = "center";
    ctx.textBaseline = "bottom";
    const room = m.thumb ? m.size + 10 : d.fit ? m.size + 8 * s : m.size + 60 * s;  // not over the next
    const title = m.thumb && d.short_titles ? d.short_titles[m.i] : d.titles[m.i];
    let fitted = fitText(ctx, shown(title ?? "", 40), room, L.px.title, L.px.titleMin);
    if (m.thumb && fitted.endsWith("\u2026")) fitted = fitText(ctx, `H${m.i + 1}`, room, L.px.title, L.px.titleMin);
    g.drawnPx.title = Math.min(g.drawnPx.title, parseFloat(ctx.font));
    ctx.fillText(fitted, m.x + m.size / 2, m.y - 3 * s);
    if (m.i === d.selected) {
      ctx.strokeStyle = "#d62728";
      ctx.lineWidth = 3;
      ctx.strokeRect(m.x - 3, m.y - 3, m.size + 6, m.size + 6);
    }
    drawLabels(g, ctx, m);
  }
  drawLegend(ctx, L.legend, g.lut, d.legend, L.px.number, g.range);
  if (d.causal) blockedLegend(ctx, L.legend, L.px.number, L.W);
}

// Token labels left of a map (queries) and under it (keys), thinned to fit the cells (never the
// focus tokens', drawn bold and red); tokens left without a label go to g.unlabelled
function drawLabels(g, ctx, m) {
  if (!m.left && !m.bottom) return;  // a thumbnail
  const G = g.layout.G, cell = m.size / G, f = g.layout.font, focus = g.focusSet;
  const step = Math.max(1, Math.ceil((f * 0.85) / cell));
  for (let t = 0; t < G; t++) {
    const isFocus = focus.has(t);
    if (t % step && !isFocus) { g.unlabelled.add(t); continue; }
    ctx.font = (isFocus ? "bold " : "") + fontPx(f);
    ctx.fillStyle = isFocus ? "#d62728" : g.data.special[t] ? "#767676" : "#31333f";
    const mid = (t + 0.5) * cell;
    if (m.left) {
      ctx.textAlign = "right";
      ctx.textBaseline = "middle";
      ctx.fillText(g.labels[t], m.x - 6, m.y + mid, g.layout.room - 6);  // clear of the outline
    }
    if (m.bottom) {
      ctx.save();
      ctx.translate(m.x + mid, m.y + m.size + 7);  // clear of the outline
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = "right";
      ctx.textBaseline = "middle";
      ctx.fillText(g.labels[t], 0, 0, g.layout.room - 6);
      ctx.restore();
    }
    g.drawnPx.label = Math.min(g.drawnPx.label, f);
  }
}

function drawLegend(ctx, b, lut, title, px, range) {
  for (let i = 0; i < b.w; i++) {
    const li = Math.round((i / (b.w - 1)) * 255) * 3;
    ctx.fillStyle = `rgb(${lut[li]},${lut[li + 1]},${lut[li + 2]})`;
    ctx.fillRect(b.x + i, b.y, 1.5, b.h);
  }
  ctx.strokeStyle = "#999";
  ctx.lineWidth = 1;
  ctx.strokeRect(b.x, b.y, b.w, b.h);
  ctx.fillStyle = "#31333f";
  ctx.font = fontPx(px);
  ctx.textBaseline = "top";
  const [lo, hi] = range;
  for (const f of [0, 0.5, 1]) {
    ctx.textAlign = f === 0 ? "left" : f === 1 ? "right" : "center";
    ctx.fillText(String(lo + f * (hi - lo)).replace("-", "\u2212"), b.x + f * b.w, b.y + b.h + 2);
  }
  ctx.textAlign = "left";
  ctx.textBaseline = "middle";
  ctx.fillText(title, b.x + b.w + px * 0.6, b.y + b.h / 2);
}

