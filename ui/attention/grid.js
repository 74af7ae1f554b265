// part 2 of 5: the head grid (the Explorer). The heads of one layer in a grid, the extra maps
// (single head, mean) beside them, one colour scale and its legend, all on one canvas. An
// overlay canvas carries the hover highlight (the hovered row and column in every map), so a
// hover never redraws the maps and never asks the server.

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

function gridLayout(g, W) {
  const d = g.data, s = d.scale, G = d.tokens.length;
  const M = g.count, Hn = d.heads, extra = M - Hn;
  const font = (G <= 16 ? 11 : 9) * s, titleH = 18 * s, gap = 10 * s, legendH = 40 * s;
  const ctx = g.main.getContext("2d");
  const room = labelRoom(ctx, g.labels, font, 90 * s);
  if (d.fit) return fitLayout(g, W, { M, G, font, titleH, gap, legendH, room, s });
  const cols = Hn <= 4 ? Hn : Hn <= 12 ? 3 : 4, rows = Math.ceil(Hn / cols);
  const side = extra > 0 && W >= 560 ? Math.floor(W * 0.4) : 0;
  const gridW = W - side - (side ? 16 * s : 0);
  const tile = Math.max(40, Math.min(150 * s, Math.floor((gridW - room - (cols - 1) * gap) / cols)));
  const maps = [];
  for (let i = 0; i < Hn; i++) {
    const r = Math.floor(i / cols), c = i % cols;
    maps.push({ i, x: room + c * (tile + gap), y: titleH + r * (tile + titleH + gap), size: tile,
      left: c === 0, bottom: i + cols >= Hn });
  }
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
  return { maps, font, titleH, room, W, H: h + legendH, legend, G };
}

// A projector's layout (data.fit): every map (heads, then single head and mean) in one grid of
// the rows and columns that give the largest tiles within the width and the first screen's
// height (fitRoom); query labels left of the first column, key labels under the last row.
function fitLayout(g, W, o) {
  const { M, G, font, titleH, gap, legendH, room, s } = o;
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
  const maps = [];
  for (let i = 0; i < M; i++) {
    const r = Math.floor(i / cols), c = i % cols;
    maps.push({ i, x: room + c * (tile + gap), y: titleH + r * (tile + titleH + gap), size: tile,
      left: c === 0, bottom: i + cols >= M });
  }
  const h = rows * (tile + titleH + gap) + room;
  const legend = { x: room, y: h + 6 * s, w: 160 * s, h: 10 * s };
  return { maps, font, titleH, room, W, H: h + legendH, legend, G };
}

function drawGrid(g) {
  const d = g.data, L = g.layout, G = L.G, s = d.scale;
  const ctx = sizeCanvas(g.main, L.W, L.H);
  sizeCanvas(g.over, L.W, L.H);
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, L.W, L.H);
  // each map: G x G pixels through the colour table, then scaled up without smoothing
  const img = new ImageData(G, G), px = img.data, src = document.createElement("canvas");
  src.width = src.height = G;
  const sctx = src.getContext("2d");
  ctx.imageSmoothingEnabled = false;
  for (const m of L.maps) {
    const off = m.i * G * G;
    for (let c = 0; c < G * G; c++) {
      const v = g.values[off + c];
      const li = (v >= 0 ? Math.min(255, Math.round(v * 255)) : 0) * 3;
      px[c * 4] = g.lut[li]; px[c * 4 + 1] = g.lut[li + 1]; px[c * 4 + 2] = g.lut[li + 2];
      px[c * 4 + 3] = 255;
    }
    sctx.putImageData(img, 0, 0);
    ctx.drawImage(src, m.x, m.y, m.size, m.size);
    ctx.fillStyle = "#31333f";
    ctx.textAlign = "center";
    ctx.textBaseline = "bottom";
    const room = d.fit ? m.size + 8 * s : m.size + 60 * s;  // a title never overlaps the next
    ctx.fillText(fitText(ctx, shown(d.titles[m.i] ?? "", 40), room, 12 * s), m.x + m.size / 2,
      m.y - 3 * s);
    if (m.i === d.selected) {
      ctx.strokeStyle = "#d62728";
      ctx.lineWidth = 3;
      ctx.strokeRect(m.x - 3, m.y - 3, m.size + 6, m.size + 6);
    }
    drawLabels(g, ctx, m);
  }
  drawLegend(ctx, L.legend, g.lut, d.legend, s);
}

// Token labels left of a map (queries) and under it (keys), thinned to fit the cells
function drawLabels(g, ctx, m) {
  const G = g.layout.G, cell = m.size / G, f = g.layout.font;
  const step = Math.max(1, Math.ceil((f * 0.85) / cell));
  ctx.font = fontPx(f);
  for (let t = 0; t < G; t += step) {
    ctx.fillStyle = g.data.special[t] ? "#9a9a9a" : "#31333f";
    const mid = (t + 0.5) * cell;
    if (m.left) {
      ctx.textAlign = "right";
      ctx.textBaseline = "middle";
      ctx.fillText(g.labels[t], m.x - 4, m.y + mid, g.layout.room - 6);
    }
    if (m.bottom) {
      ctx.save();
      ctx.translate(m.x + mid, m.y + m.size + 4);
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = "right";
      ctx.textBaseline = "middle";
      ctx.fillText(g.labels[t], 0, 0, g.layout.room - 6);
      ctx.restore();
    }
  }
}

function drawLegend(ctx, b, lut, title, s) {
  for (let i = 0; i < b.w; i++) {
    const li = Math.round((i / (b.w - 1)) * 255) * 3;
    ctx.fillStyle = `rgb(${lut[li]},${lut[li + 1]},${lut[li + 2]})`;
    ctx.fillRect(b.x + i, b.y, 1.5, b.h);
  }
  ctx.strokeStyle = "#999";
  ctx.lineWidth = 1;
  ctx.strokeRect(b.x, b.y, b.w, b.h);
  ctx.fillStyle = "#31333f";
  ctx.font = fontPx(11 * s);
  ctx.textBaseline = "top";
  for (const v of [0, 0.5, 1]) {
    ctx.textAlign = v === 0 ? "left" : v === 1 ? "right" : "center";
    ctx.fillText(String(v), b.x + v * b.w, b.y + b.h + 2);
  }
  ctx.textAlign = "left";
  ctx.textBaseline = "middle";
  ctx.fillText(title, b.x + b.w + 8 * s, b.y + b.h / 2);
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
  const tip = g.tip;
  if (!hit || !hit.map) { tip.hidden = true; return; }
  const G = g.layout.G, w = g.values[hit.map.i * G * G + hit.q * G + hit.k];
  tip.firstChild.textContent = g.data.titles[hit.map.i] ?? "";
  tip.lastChild.textContent = `${g.data.tokens[hit.q]} \u2192 ${g.data.tokens[hit.k]}: ${w.toFixed(3)}`;
  tip.hidden = false;
  const right = x + 14 + tip.offsetWidth > g.layout.W;
  tip.style.left = `${right ? x - 14 - tip.offsetWidth : x + 14}px`;
  tip.style.top = `${y + 14}px`;
}

function setupGrid(g) {
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
  bar.append(png);
  g.box.append(g.main, g.over, g.tip);
  g.root.append(bar, g.box);
  const pos = (e) => { const r = g.over.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
  g.over.addEventListener("mousemove", (e) => {
    const t0 = performance.now(), [x, y] = pos(e);
    const hit = gridHit(g, x, y);
    drawHover(g, hit);
    gridTooltip(g, hit, x, y);
    g.over.style.cursor = hit && hit.map && hit.map.i < g.data.heads ? "pointer" : "default";
    const t1 = performance.now();
    g.host.dataset.hoverMs = (t1 - e.timeStamp).toFixed(2); // from the input event
    g.host.dataset.hoverWorkMs = (t1 - t0).toFixed(2); // the handler's own work
    g.host.dataset.hover = hit ? `${hit.q ?? ""}:${hit.k ?? ""}` : "";
  });
  g.over.addEventListener("mouseleave", () => { drawHover(g, null); gridTooltip(g, null); g.host.dataset.hover = ""; });
  g.over.addEventListener("click", (e) => {
    const hit = gridHit(g, ...pos(e));
    if (hit && hit.map && hit.map.i < g.data.heads) g.component.setTriggerValue("head", hit.map.i);
  });
}

function renderGrid(g) {
  const d = g.data;
  g.values = decode(d.maps);
  g.count = d.maps.shape[0];
  g.lut = colorLut(d.colorscale);
  g.labels = d.tokens.map((t) => shown(t, 14));
  redrawGrid(g);
}

function redrawGrid(g) {
  g.layout = gridLayout(g, g.width());
  drawGrid(g);
  drawHover(g, null);
  g.tip.hidden = true;
  g.host.dataset.maps = String(g.count);
  g.host.dataset.heads = String(g.data.heads);
  g.host.dataset.selected = g.data.selected === null ? "" : String(g.data.selected + 1);
  // where each map is on the canvas (CSS px), for tests that point at a cell
  g.host.dataset.layout = JSON.stringify(g.layout.maps.map(({ i, x, y, size }) => ({ i, x, y, size })));
}
