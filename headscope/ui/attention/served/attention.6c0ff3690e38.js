// headscope attention component, the first of its drawing core's files (bundle.CORE_FILES, joined
// in that order into one ES module): decoding, colours, small DOM helpers. Token text reaches the
// page only through textContent and canvas fillText; the data is never code or markup.

const STATES = new WeakMap(); // host element -> its state; listeners are attached once per host
const CANVAS_STATE = new WeakMap(); // a view's main canvas -> its state (for the PNG figure)
let EXPORT_DPR = 0; // device px per CSS px while a figure is drawn for export; 0 = the screen's

// An array sent by payload.pack: {dtype, shape, b64}, or {dtype, shape, bytes} (a Uint8Array: a
// host adapter's binary buffer), or {values} already decoded; 16/8-bit levels become weights in [0, 1]
function decode(d) {
  if (d.values) return d.values;  // already decoded (the Explorer's parts: explorer.js)
  const values = decodeValues(d);
  return d.tril ? untril(values, d.shape) : values;
}

function decodeValues(d) {
  const bytes = d.bytes ? d.bytes : Uint8Array.fromBase64 ? Uint8Array.fromBase64(d.b64)
    : Uint8Array.from(atob(d.b64), (c) => c.charCodeAt(0));
  const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  if (d.dtype === "f4") return new Float32Array(buf);
  if (d.dtype === "i2") return new Int16Array(buf);
  if (d.dtype === "u4") return new Uint32Array(buf);
  const lv = d.dtype === "u2" ? new Uint16Array(buf) : new Uint8Array(buf);
  const top = d.dtype === "u2" ? 65535 : 255;
  const out = new Float32Array(lv.length);
  for (let i = 0; i < lv.length; i++) out[i] = lv[i] / top;
  return out;
}

// A decoder's maps sent as lower triangles (payload.pack(tril=True)): each (T, T) map back in
// place, row by row, zeros above the diagonal
function untril(values, shape) {
  const T = shape[shape.length - 1], per = (T * (T + 1)) / 2;
  const maps = values.length / per, out = new Float32Array(maps * T * T);
  for (let m = 0, src = 0; m < maps; m++) {
    for (let q = 0; q < T; q++) {
      out.set(values.subarray(src, src + q + 1), (m * T + q) * T);
      src += q + 1;
    }
  }
  return out;
}

function parseColor(c) {
  const m = /rgb\((\d+),\s*(\d+),\s*(\d+)\)/.exec(c);
  if (m) return [+m[1], +m[2], +m[3]];
  const h = c.replace("#", "");
  return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16));
}

// 256 RGB entries from plotly-style stops [[0, "rgb(...)"], ..., [1, "rgb(...)"]]
function colorLut(stops) {
  const lut = new Uint8ClampedArray(256 * 3);
  const pts = stops.map(([t, c]) => [t, parseColor(c)]);
  for (let i = 0; i < 256; i++) {
    const t = i / 255;
    let j = 0;
    while (j < pts.length - 2 && t > pts[j + 1][0]) j++;
    const [t0, c0] = pts[j], [t1, c1] = pts[j + 1];
    const f = t1 > t0 ? Math.min(1, Math.max(0, (t - t0) / (t1 - t0))) : 0;
    for (let ch = 0; ch < 3; ch++) lut[i * 3 + ch] = c0[ch] + f * (c1[ch] - c0[ch]);
  }
  return lut;
}

// WCAG relative luminance of a colour, and the ink (near black or white) with the higher
// contrast on it: text printed on a coloured cell
function luminance(c) {
  const lin = parseColor(c).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
}

function contrast(a, b) {
  const la = luminance(a), lb = luminance(b);
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

function inkOn(c) {
  return contrast("#1f1f1f", c) >= contrast("#ffffff", c) ? "#1f1f1f" : "#ffffff";
}

function headColor(data, h) {
  const c = data.head_colors;
  return h < c.length ? c[h] : `hsl(${(h * 137.5) % 360}, 65%, 42%)`;
}

// An element with a class and, optionally, text (always textContent)
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// A canvas sized in CSS pixels, sharp on high-density screens
function sizeCanvas(cv, w, h) {
  const dpr = EXPORT_DPR || window.devicePixelRatio || 1; // EXPORT_DPR: a figure's scale (figure.js)
  cv.width = Math.max(1, Math.round(w * dpr));
  cv.height = Math.max(1, Math.round(h * dpr));
  cv.style.width = `${w}px`;
  cv.style.height = `${h}px`;
  const ctx = cv.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

// A token as one line of visible text (as headscope.ui.labels.visible): control characters as control
// pictures, format characters (bidi overrides, zero-width) as <U+XXXX>; long ones cut with "…"
function shown(s, max) {
  let t = String(s).replace(/[\u0000-\u001f\u007f]/g, (c) =>
    c === "\u007f" ? "\u2421" : String.fromCharCode(0x2400 + c.charCodeAt(0)))
    .replace(/[\p{Cf}\p{Zl}\p{Zp}\u0080-\u009f]/gu, (c) =>
      `<U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}>`);
  if (!t) t = "\u2423";
  return max && t.length > max ? t.slice(0, max - 1) + "\u2026" : t;
}

function fontPx(px) {
  return `${px}px "Source Sans Pro", "Source Sans 3", sans-serif`;
}

function download(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

// The widest label in px (capped) for a font
function labelRoom(ctx, labels, px, cap) {
  ctx.font = fontPx(px);
  let w = 0;
  for (const t of labels) w = Math.max(w, ctx.measureText(t).width);
  return Math.ceil(Math.min(w, cap)) + 6;
}

// Text in a box of `width` px: the font shrinks (from px down to `least` px, 8 unless given)
// before the text is cut with "…"
function fitText(ctx, text, width, px, least = 8) {
  let size = px;
  ctx.font = fontPx(size);
  while (size - 1 >= least && ctx.measureText(text).width > width) ctx.font = fontPx(--size);
  let t = text;
  while (t.length > 1 && ctx.measureText(t).width > width) t = t.slice(0, -2) + "\u2026";
  return t;
}

// The smallest px a view drew its text with, on the host element for tests: data-label-px
// (token labels), data-title-px (map and grid titles), data-number-px (printed numbers) and
// data-unlabelled (shown tokens without a label in the labelled maps); the focus grid also
// data-contrast (the lowest WCAG contrast of its text on its cells)
function markPx(host, px) {
  for (const [k, v] of Object.entries(px)) host.dataset[k] = Number.isFinite(v) ? String(Math.round(v * 10) / 10) : "";
}

// A decoder's maps (data.causal): token i sees only tokens j <= i, so a cell above the diagonal
// (key after query) is not attendable: drawn neutral grey and hatched, never as zero weight, with
// its own legend swatch and hover. Shown maps keep the tokens in order (a window cuts rows and
// columns at the same place, whole words merge neighbouring pieces), so "above" is k > q there too.

const BLOCKED_RGB = [226, 226, 226];  // the cell: a neutral grey (the scale is blue, even its near-white 0)
const BLOCKED_LINE = "#aaaaaa";  // its hatch, neutral too

// Whether shown cell (q, k) of a map is not attendable
function isBlocked(d, q, k) {
  return !!d.causal && k > q;
}

// The hatch over a map's upper triangle (m: a layout map of side m.size, G cells a side): one
// staircase path as the clip, diagonal lines every few px inside it
function hatchBlocked(ctx, m, G) {
  if (G < 2) return;
  const cell = m.size / G;
  ctx.save();
  ctx.beginPath();
  ctx.moveTo(m.x + cell, m.y);
  ctx.lineTo(m.x + m.size, m.y);
  ctx.lineTo(m.x + m.size, m.y + (G - 1) * cell);
  for (let q = G - 2; q >= 0; q--) {
    ctx.lineTo(m.x + (q + 1) * cell, m.y + (q + 1) * cell);
    ctx.lineTo(m.x + (q + 1) * cell, m.y + q * cell);
  }
  ctx.closePath();
  ctx.clip();
  hatchLines(ctx, m.x, m.y, m.size, Math.max(4, Math.min(7, cell / 2)));
  ctx.restore();
}

// Diagonal lines every `step` px over the square at (x, y) of side `size` (inside a clip)
function hatchLines(ctx, x, y, size, step) {
  ctx.strokeStyle = BLOCKED_LINE;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (let t = -size; t < size; t += step) {
    ctx.moveTo(x + t, y + size);
    ctx.lineTo(x + t + size, y);
  }
  ctx.stroke();
}

// The room the swatch's line takes under the colour bar's numbers (px: their size), 0 for an
// encoder's maps: each layout adds it to its legend's height (so a projector's fit counts it)
function blockedRoom(d, px) {
  return d.causal ? Math.ceil(px * 1.9) : 0;
}

// The legend's swatch for not-attendable cells, on its own line under the colour bar's numbers
// (b: the colour bar's box; px: the legend's text size; W: the canvas's width)
function blockedLegend(ctx, b, px, W) {
  const w = Math.round(px * 1.3), x = b.x, y = b.y + b.h + px * 1.5;
  ctx.fillStyle = `rgb(${BLOCKED_RGB.join(",")})`;
  ctx.fillRect(x, y, w, w);
  ctx.save();
  ctx.beginPath();
  ctx.rect(x, y, w, w);
  ctx.clip();
  hatchLines(ctx, x, y, w, 4);
  ctx.restore();
  ctx.strokeStyle = "#999";
  ctx.strokeRect(x, y, w, w);
  ctx.fillStyle = "#31333f";
  ctx.font = fontPx(px);
  ctx.textAlign = "left";
  ctx.textBaseline = "middle";
  ctx.fillText("not attendable (a later token)", x + w + px * 0.4, y + w / 2, W - x - w - px * 0.4 - 2);
}

// The hover's words for a not-attendable cell (two lines: the tip stays narrow)
function blockedTip(q, k) {
  return `${q} \u2192 ${k}: not attendable:\n\u201c${q}\u201d cannot see later tokens`;
}

// The head grid (the Explorer), its layout and drawing. The heads of one layer in a grid, the extra
// maps (single head, mean) beside them, one colour scale (data.range, 0..1 for weights, -1..1 for a
// difference) and its legend, all on one canvas. gridui.js adds the hover (an overlay canvas: a
// hover never redraws the maps and never asks the server) and the clicks.

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

function gridLayout(g, W) {
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
function projectorFactor() {
  return Math.min(2, Math.max(1, window.innerWidth / 1280));
}
const PRESENT_PX = 18; // presentation mode's smallest text (CSS px at 1280 px wide)

// A value's place in the colour table (g.lut, 3 bytes an entry); NaN (no value) is the scale's start
function lutIndex(g, val) {
  const [lo, hi] = g.range, t = (val - lo) / (hi - lo || 1);
  return (t >= 0 ? Math.min(255, Math.round(t * 255)) : 0) * 3;
}

function drawGrid(g) {
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


// The head grid's pointer. Hover highlights the hovered row and column in every map and reads the
// cell ("q → k: 0.123", signed for a difference, with the raw norm when sent); a click on a head
// enlarges it (trigger "head"); a click on a maskable query label masks that token (trigger
// "token", the label's index in data.tokens).

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

function renderGrid(g) {
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

function redrawGrid(g) {
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

// The head view (two columns of tokens, a line per head and pair) and the model view (every layer x
// head as a small line view). Lines come as sparse entries per head, the strongest first
// (payload.lines_payload). All lines of a frame go into one Path2D per head and opacity step: never
// a DOM element per line. At most CAP lines are drawn per frame.

const CAP_HEAD = 20000, CAP_MODEL = 60000, STEPS = 16;
const SEGMENT_FILTERS = { "all": null, "A\u2192A": [0, 0], "A\u2192B": [0, 1], "B\u2192A": [1, 0], "B\u2192B": [1, 1] };

function linesData(v) {
  const d = v.data;
  v.q = decode(d.q); v.k = decode(d.k); v.w = decode(d.w); v.off = decode(d.offsets);
  v.labels = d.tokens.map((t) => shown(t, 24));
  v.twoSegments = !!d.segments && d.segments.includes(0) && d.segments.includes(1);
}

// Entries of head h in the current layer that pass the threshold and the filters, strongest
// first, at most `cap`; calls put(q, k, w) for each. Returns how many passed the threshold.
function eachLine(v, layer, h, cap, put, keep) {
  const i0 = v.off[layer * v.data.heads + h], i1 = v.off[layer * v.data.heads + h + 1];
  const thr = v.threshold, seg = SEGMENT_FILTERS[v.segment], sg = v.data.segments;
  let n = 0, passed = 0;
  for (let i = i0; i < i1; i++) {
    const w = v.w[i];
    if (w < thr) break; // sorted: the rest are weaker
    const q = v.q[i], k = v.k[i];
    if (seg && (sg[q] !== seg[0] || sg[k] !== seg[1])) continue;
    if (keep && !keep(q, k)) continue;
    passed++;
    if (n < cap) { put(q, k, w); n++; }
  }
  return passed;
}

function alphaOf(v, q, k, w) {
  const sp = v.data.special, dim = v.dim && (sp[q] || sp[k]) ? 0.15 : 1;
  return Math.min(STEPS - 1, Math.floor(Math.min(1, w) * dim * STEPS));
}

// The lines of the selected heads, bucketed by opacity: {h: [sink x STEPS]} (a sink is a
// Path2D, or an SVG path builder for the export); also what the test hooks read
function collectHead(v, geo, sink = () => new Path2D()) {
  const on = v.view.heads, focus = v.hover ?? v.pinned;
  const keep = focus ? (focus.side === "q" ? (q) => q === focus.i : (q, k) => k === focus.i) : null;
  const cap = Math.floor(CAP_HEAD / Math.max(1, on.length));
  const paths = {}, qs = new Set(), ks = new Set();
  let drawn = 0, passed = 0;
  for (const h of on) {
    const b = Array.from({ length: STEPS }, sink);
    passed += eachLine(v, v.view.layer, h, cap, (q, k, w) => {
      const p = b[alphaOf(v, q, k, w)];
      p.moveTo(geo.xl, geo.y(q));
      p.lineTo(geo.xr, geo.y(k));
      qs.add(q); ks.add(k); drawn++;
    }, keep);
    paths[h] = b;
  }
  return { paths, drawn, passed, qs, ks };
}

function headGeometry(v) {
  const d = v.data, s = d.scale, G = d.tokens.length;
  const least = d.present ? PRESENT_PX * projectorFactor() : 0;  // a projector: 18 px and up
  const font = Math.max((G <= 64 ? 13 : G <= 160 ? 10 : 8) * s, G <= 64 ? least : 0);
  const rowH = Math.max(4, Math.min(Math.max(22 * s, font * 1.3), 2600 / G));
  const ctx = v.canvas.getContext("2d");
  const room = labelRoom(ctx, v.labels, font, 150 * s);
  const span = Math.max(120, Math.min(640 * s, v.width() - 2 * room - 20)); // the width it has
  const W = 2 * room + span + 20, top = 8 * s;
  return { font, rowH, room, W, H: top + G * rowH + 8 * s, xl: room + 10, xr: room + 10 + span,
    top, y: (t) => top + (t + 0.5) * rowH, G };
}

function drawHeadView(v) {
  const geo = (v.geo = headGeometry(v)), d = v.data;
  const ctx = sizeCanvas(v.canvas, geo.W, geo.H);
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, geo.W, geo.H);
  const got = collectHead(v, geo);
  // where the token rows are (CSS px on the canvas), for tests that point at a token
  v.host.dataset.geometry = JSON.stringify({ top: geo.top, row: geo.rowH, left: geo.xl, right: geo.xr });
  ctx.lineWidth = geo.G <= 64 ? 2 * d.scale : 1;
  for (const h of v.view.heads) {
    ctx.strokeStyle = headColor(d, h);
    got.paths[h].forEach((p, b) => { ctx.globalAlpha = (b + 0.5) / STEPS; ctx.stroke(p); });
  }
  ctx.globalAlpha = 1;
  const step = Math.max(1, Math.ceil((geo.font + 1) / geo.rowH));
  const focus = v.hover ?? v.pinned;
  ctx.font = fontPx(geo.font);
  ctx.textBaseline = "middle";
  for (let t = 0; t < geo.G; t++) {
    const mark = focus && focus.i === t;
    if (t % step && !mark) continue;
    const dim = v.dim && d.special[t];
    for (const [side, x, align] of [["q", geo.xl - 6, "right"], ["k", geo.xr + 6, "left"]]) {
      const here = mark && focus.side === side;
      if (here) {
        ctx.fillStyle = "rgba(255, 140, 0, 0.3)";
        ctx.fillRect(align === "right" ? 0 : geo.xr + 2, geo.y(t) - geo.rowH / 2, geo.room + 6, geo.rowH);
      }
      ctx.fillStyle = dim ? "#b0b0b0" : "#31333f";
      ctx.textAlign = align;
      ctx.fillText(v.labels[t], x, geo.y(t), geo.room - 4);
    }
  }
  markPx(v.host, { labelPx: geo.font, unlabelled: geo.G - Math.ceil(geo.G / step) });
  return got;
}

// Every layer x head as a small line view; the token labels (thinned to fit the tile's rows)
// left of the first column (queries) and right of the last (keys), in every layer's row
function modelGeometry(v) {
  const d = v.data, s = d.scale, Lr = d.layers, Hn = d.heads, G = d.tokens.length;
  const lab = 30 * s, gap = 4 * s, ctx = v.canvas.getContext("2d");
  const room = labelRoom(ctx, v.labels, 9 * s, 70 * s) + 6 * s, left = lab + room;
  const tw = Math.max(24, Math.floor((Math.min(v.width(), 1400 * s) - left - room) / Hn) - gap);
  const th = Math.max(24, Math.min(Math.round(tw * 1.25), 160 * s));
  const font = Math.max(7, Math.min(9 * s, (0.9 * th) / G));
  const step = Math.max(1, Math.ceil((font + 1) / (th / G)));
  return { lab, gap, tw, th, W: left + Hn * (tw + gap) + room, H: lab + Lr * (th + gap), top: lab, left,
    right: left + Hn * (tw + gap) - gap + 4, room, font, step };
}

// The model view's token labels: put(text, x, y, align) for each (queries left, keys right)
function modelLabels(v, geo, put) {
  const G = v.data.tokens.length;
  let n = 0;
  for (let l = 0; l < v.data.layers; l++) {
    const y0 = geo.top + l * (geo.th + geo.gap);
    for (let t = 0; t < G; t += geo.step) {
      const y = y0 + ((t + 0.5) * geo.th) / G;
      put(v.labels[t], geo.left - 4, y, "right");
      put(v.labels[t], geo.right, y, "left");
      n += 2;
    }
  }
  return n;
}

function drawModelView(v) {
  const geo = (v.mgeo = modelGeometry(v)), d = v.data, G = d.tokens.length;
  const ctx = sizeCanvas(v.canvas, geo.W, geo.H);
  v.host.dataset.geometry = JSON.stringify({ top: geo.top, left: geo.left, w: geo.tw, h: geo.th, gap: geo.gap });
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, geo.W, geo.H);
  ctx.font = fontPx(11 * d.scale);
  ctx.fillStyle = "#31333f";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  for (let h = 0; h < d.heads; h++) ctx.fillText(`H${h + 1}`, geo.left + h * (geo.tw + geo.gap) + geo.tw / 2, geo.lab / 2);
  for (let l = 0; l < d.layers; l++) ctx.fillText(`L${l + 1}`, geo.lab / 2, geo.top + l * (geo.th + geo.gap) + geo.th / 2);
  ctx.font = fontPx(geo.font);
  v.host.dataset.tokenLabels = String(modelLabels(v, geo, (t, x, y, align) => {
    ctx.textAlign = align;
    ctx.fillText(t, x, y, geo.room - 8);
  }));
  const cap = Math.floor(CAP_MODEL / (d.layers * d.heads));
  let drawn = 0, passed = 0;
  ctx.lineWidth = 1;
  for (let l = 0; l < d.layers; l++) {
    const y0 = geo.top + l * (geo.th + geo.gap);
    for (let h = 0; h < d.heads; h++) {
      const x0 = geo.left + h * (geo.tw + geo.gap), b = Array.from({ length: STEPS }, () => new Path2D());
      const y = (t) => y0 + ((t + 0.5) * geo.th) / G;
      passed += eachLine(v, l, h, cap, (q, k, w) => {
        const p = b[alphaOf(v, q, k, w)];
        p.moveTo(x0 + 2, y(q)); p.lineTo(x0 + geo.tw - 2, y(k)); drawn++;
      });
      ctx.globalAlpha = 1;
      ctx.strokeStyle = "#e6e6e6";
      ctx.strokeRect(x0 + 0.5, y0 + 0.5, geo.tw - 1, geo.th - 1);
      ctx.strokeStyle = headColor(d, h);
      b.forEach((p, i) => { ctx.globalAlpha = (i + 0.5) / STEPS; ctx.stroke(p); });
    }
  }
  ctx.globalAlpha = 1;
  return { drawn, passed, qs: new Set(), ks: new Set() };
}

function drawLines(v) {
  const got = v.view.mode === "model" ? drawModelView(v) : drawHeadView(v);
  const hs = v.host.dataset;
  hs.view = v.view.mode;
  hs.layer = String(v.view.layer + 1);
  hs.headsOn = v.view.heads.map((h) => h + 1).join(",");
  hs.lines = String(got.drawn);
  hs.linesAbove = String(got.passed);
  hs.lineQueries = [...got.qs].sort((a, b) => a - b).join(",");
  hs.lineKeys = [...got.ks].sort((a, b) => a - b).join(",");
  hs.threshold = v.threshold.toFixed(3);
  const capped = got.passed > got.drawn;
  v.status.textContent = `${got.drawn.toLocaleString("en")} lines` +
    (capped ? ` (the strongest of ${got.passed.toLocaleString("en")} above the threshold)` : "") +
    `; weights under ${v.data.floor.toFixed(3)} are not sent`;
}

// What the pointer is over in the head view: a token on the left (query) or right (key) side
function headHit(v, x, y) {
  const g = v.geo;
  if (!g || y < g.top || y >= g.top + g.G * g.rowH) return null;
  const i = Math.floor((y - g.top) / g.rowH);
  if (x < g.xl) return { side: "q", i };
  if (x > g.xr) return { side: "k", i };
  return null;
}

function modelHit(v, x, y) {
  const g = v.mgeo;
  if (!g) return null;
  const h = Math.floor((x - g.left) / (g.tw + g.gap)), l = Math.floor((y - g.top) / (g.th + g.gap));
  return h >= 0 && h < v.data.heads && l >= 0 && l < v.data.layers ? { l, h } : null;
}

// The head view's and model view's controls and pointer handling. Built once per host element (text
// through textContent only); every change redraws locally, and the changes the link keeps (view,
// layer, heads, pinned token) go back to Python as one state value. Pinning a token is the
// browser's alone (no rerun: the pin reaches the link with the next change); masking it is its own
// button, which runs the page's masked-word section.

function report(v) {
  v.view.seq = (v.view.seq || 0) + 1;
  const { mode, layer, heads, seq } = v.view;
  v.component.setStateValue("view", { mode, layer, heads, seq, focus: v.pinned ? { ...v.pinned } : null });
}

function setupLines(v) {
  const bar = el("div", "hs-bar"), heads = el("div", "hs-heads");
  v.tabs = ["head", "model"].map((mode) => {
    const b = el("button", "hs-tab", mode === "head" ? "Head view" : "Model view");
    b.dataset.mode = mode;
    b.addEventListener("click", () => { v.view.mode = mode; v.hover = null; report(v); paint(v); });
    return b;
  });
  v.layerBox = el("select", "hs-select");
  v.layerBox.title = "Layer";
  v.layerBox.addEventListener("change", () => { v.view.layer = +v.layerBox.value; report(v); paint(v); });
  const thrWrap = el("label", "hs-thr", "threshold ");
  v.thrBox = el("input");
  Object.assign(v.thrBox, { type: "range", min: "0", max: "0.5", step: "0.005" });
  v.thrText = el("span", "hs-thr-val");
  thrWrap.title = "Draw only lines whose weight is at least this";
  thrWrap.append(v.thrBox, v.thrText);
  v.thrBox.addEventListener("input", () => { v.thrUser = +v.thrBox.value; v.thrTouched = true; paint(v); });
  v.segBox = el("select", "hs-select");
  v.segBox.title = "Which segment attends to which (sentence A, sentence B)";
  for (const name of Object.keys(SEGMENT_FILTERS)) v.segBox.append(new Option(name === "all" ? "all segments" : name, name));
  v.segBox.addEventListener("change", () => { v.segment = v.segBox.value; paint(v); });
  v.maskBtn = el("button", "hs-btn hs-mask", "Mask");
  v.maskBtn.addEventListener("click", () => {
    if (!pinnedMaskable(v)) return;
    report(v);
    v.component.setTriggerValue("token", v.pinned.i);
  });
  const png = el("button", "hs-btn", "PNG"), svg = el("button", "hs-btn", "SVG");
  png.addEventListener("click", () => exportPng(v.canvas, `${v.data.filename || "attention"}_${v.view.mode}_view.png`));
  svg.title = "The view as an SVG drawing";
  svg.addEventListener("click", () => exportSvg(v));
  v.svgBtn = svg;
  bar.append(...v.tabs, v.layerBox, thrWrap, v.segBox, v.maskBtn, png, svg);
  v.headsRow = heads;
  v.canvas = el("canvas", "hs-lines");
  v.tip = el("div", "hs-tip");
  v.tip.append(el("div", "hs-tip-title"), el("div", "hs-tip-text"));
  v.tip.hidden = true;
  v.status = el("div", "hs-status");
  const box = el("div", "hs-box");
  box.append(v.canvas, v.tip);
  v.root.append(bar, heads, box, v.status);
  const pos = (e) => { const r = v.canvas.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
  v.canvas.addEventListener("mousemove", (e) => {
    const t0 = performance.now(), [x, y] = pos(e);
    if (v.view.mode === "model") return modelTip(v, modelHit(v, x, y), x, y);
    const hit = headHit(v, x, y), old = v.hover, mk = v.data.maskable;
    v.canvas.style.cursor = hit ? "pointer" : "default";
    v.canvas.title = hit && mk && mk[hit.i] ? "click: pin its lines and mask it" : hit ? "click: pin its lines" : "";
    if ((hit && old && hit.side === old.side && hit.i === old.i) || (!hit && !old)) return;
    v.hover = hit;
    drawLines(v);
    const t1 = performance.now();
    v.host.dataset.hoverMs = (t1 - e.timeStamp).toFixed(2);
    v.host.dataset.hoverWorkMs = (t1 - t0).toFixed(2);
    v.host.dataset.hover = hit ? `${hit.side}:${hit.i}` : "";
  });
  v.canvas.addEventListener("mouseleave", () => {
    v.tip.hidden = true;
    if (v.hover) { v.hover = null; drawLines(v); v.host.dataset.hover = ""; }
  });
  v.canvas.addEventListener("click", (e) => {
    const [x, y] = pos(e);
    if (v.view.mode === "model") {
      const hit = modelHit(v, x, y);
      if (!hit) return;
      Object.assign(v.view, { mode: "head", layer: hit.l, heads: [hit.h] });
      v.tip.hidden = true;
      report(v);
    } else {  // a pin: drawn here, no rerun
      const hit = headHit(v, x, y);
      const same = hit && v.pinned && hit.side === v.pinned.side && hit.i === v.pinned.i;
      v.pinned = same ? null : hit;
      v.host.dataset.pinned = v.pinned ? `${v.pinned.side}:${v.pinned.i}` : "";
    }
    v.hover = null;
    paint(v);
  });
}

function pinnedMaskable(v) {
  return !!(v.pinned && v.data.maskable && v.data.maskable[v.pinned.i]);
}

function modelTip(v, hit, x, y) {
  v.canvas.style.cursor = hit ? "pointer" : "default";
  if (!hit) { v.tip.hidden = true; return; }
  v.tip.firstChild.textContent = `layer ${hit.l + 1}, head ${hit.h + 1}`;
  v.tip.lastChild.textContent = "click: open in the head view";
  v.tip.hidden = false;
  v.tip.style.left = `${x + 14}px`;
  v.tip.style.top = `${y + 14}px`;
}

// The controls show the current state, then the canvas is drawn
function paint(v) {
  const d = v.data;
  v.threshold = Math.max(v.thrUser, d.floor);
  v.thrBox.value = String(v.thrUser);
  v.thrText.textContent = `\u2265 ${v.threshold.toFixed(3)}`;
  v.tabs.forEach((b) => b.classList.toggle("on", b.dataset.mode === v.view.mode));
  v.layerBox.value = String(v.view.layer);
  v.layerBox.disabled = v.view.mode === "model";
  v.segBox.hidden = !v.twoSegments;
  if (!v.twoSegments) v.segment = "all";
  v.segBox.value = v.segment;
  const label = v.pinned ? v.data.tokens[v.pinned.i] : "";
  v.maskBtn.hidden = v.view.mode === "model" || !v.data.maskable;
  v.maskBtn.disabled = !pinnedMaskable(v);
  v.maskBtn.textContent = v.maskBtn.disabled ? "Mask (pin a token first)"
    : `Mask \u201c${label.length > 16 ? label.slice(0, 15) + "\u2026" : label}\u201d`;
  v.maskBtn.title = "Replace the pinned token by [MASK]: below, what the model predicts there "
    + "and how every head's attention changes";
  v.headsRow.hidden = v.view.mode === "model";
  [...v.headsRow.children].forEach((b, h) => b.classList.toggle("off", !v.view.heads.includes(h)));
  drawLines(v);
}

function renderLines(v) {
  const d = v.data;
  linesData(v);
  const st = d.state || {};
  if (v.view === undefined || (st.seq ?? 0) >= (v.view.seq ?? 0)) {
    v.view = { mode: st.mode === "model" ? "model" : "head", layer: Math.min(Math.max(st.layer ?? 0, 0), d.layers - 1),
      heads: (st.heads ?? [...Array(d.heads).keys()]).filter((h) => h >= 0 && h < d.heads), seq: st.seq ?? 0 };
    const f = st.focus;
    v.pinned = f && (f.side === "q" || f.side === "k") && f.i >= 0 && f.i < d.tokens.length ? { side: f.side, i: f.i } : null;
  }
  if (!v.thrTouched) v.thrUser = d.tokens.length > 64 ? 0.05 : 0; // until the reader moves it
  v.segment = v.segment ?? "all";
  v.dim = v.dim ?? false;
  v.hover = null;
  v.layerBox.replaceChildren(...Array.from({ length: d.layers }, (_, l) => new Option(`layer ${l + 1}`, String(l))));
  v.headsRow.replaceChildren(...Array.from({ length: d.heads }, (_, h) => {
    const b = el("button", "hs-swatch", `H${h + 1}`);
    b.style.setProperty("--c", headColor(d, h));
    b.title = `head ${h + 1}: click to switch it on or off`;
    b.addEventListener("click", () => {
      const on = new Set(v.view.heads);
      on.has(h) ? on.delete(h) : on.add(h);
      v.view.heads = [...on].sort((a, b2) => a - b2);
      report(v);
      paint(v);
    });
    return b;
  }));
  paint(v);
}

// The focus grid (the Explorer). Where one query token attends in every head of every layer: an L x
// H grid of cells coloured by the top key (the token's colour, as in the focus bars) and labelled
// with it; hover reads "L2 H3 → key: weight"; a click opens that layer and head in the Explorer (a
// trigger back to Python).

function focusLayout(f) {
  const d = f.data, s = d.scale, L = d.layers, H = d.heads;
  if (d.present) {  // presentation mode: every text at least PRESENT_PX (grid.js), rows of two lines
    const k = projectorFactor(), px = PRESENT_PX * k, lab = Math.round(px * 3.4), title = Math.round(px * 2);
    const cw = Math.max(18, Math.min(Math.round(120 * k), Math.floor((f.width() - lab) / H)));
    const ch = Math.round(px * 2.5), top = title + px * 1.4;
    return { lab, title, cw, ch, W: lab + H * cw, H: top + L * ch + 4, top, px: { title: px * 1.1, head: px, token: px, number: px } };
  }
  const lab = 34 * s, title = 26 * s;
  // never wider than the column (a cell cut off at its right edge could not be read or clicked)
  const cw = Math.max(18, Math.min(72 * s, Math.floor((f.width() - lab) / H)));
  const ch = Math.round(34 * s);  // two lines: the top key and its weight
  return { lab, title, cw, ch, W: lab + H * cw, H: title + lab * 0.6 + L * ch + 4, top: title + lab * 0.6,
    px: { title: 14 * s, head: 11 * s, token: 11 * s, number: 10 * s } };
}

function drawFocus(f) {
  const d = f.data, g = (f.layout = focusLayout(f)), s = d.scale;
  const ctx = sizeCanvas(f.main, g.W, g.H);
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, g.W, g.H);
  ctx.fillStyle = "#31333f";
  const P = g.px, least = d.present ? P.token : 8;
  const drawn = { label: Infinity, title: Math.min(P.title, P.head), number: P.number, contrast: Infinity };
  ctx.font = fontPx(P.title);
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  const by = d.by ? `, ${d.by}` : "";
  ctx.fillText(`Top key of ${d.focus_title ?? `\u201c${shown(d.focus, 30)}\u201d`} in every head${by}`, g.W / 2, g.title / 2, g.W);
  for (let h = 0; h < d.heads; h++) {
    ctx.font = (h === d.head ? "bold " : "") + fontPx(P.head);
    ctx.fillStyle = h === d.head ? "#d62728" : "#31333f";
    ctx.fillText(`H${h + 1}`, g.lab + (h + 0.5) * g.cw, g.top - g.lab * 0.3);
  }
  for (let l = 0; l < d.layers; l++) {
    const y = g.top + l * g.ch, current = l === d.layer;
    ctx.fillStyle = current ? "#d62728" : "#31333f";
    ctx.font = (current ? "bold " : "") + fontPx(P.head);
    ctx.textAlign = "right";
    ctx.fillText(current ? `\u25b6 L${l + 1}` : `L${l + 1}`, g.lab - 6, y + g.ch / 2);
    ctx.textAlign = "center";
    for (let h = 0; h < d.heads; h++) {
      const i = l * d.heads + h, t = f.top[i], c = d.colors[t];
      const x = g.lab + h * g.cw;
      ctx.fillStyle = c;
      ctx.fillRect(x + 1, y + 1, g.cw - 2, g.ch - 2);
      ctx.fillStyle = inkOn(c);
      drawn.contrast = Math.min(drawn.contrast, contrast(ctx.fillStyle, c));
      ctx.fillText(fitText(ctx, shown(d.tokens[t]), g.cw - 4, P.token, least), x + g.cw / 2, y + g.ch * 0.33);
      drawn.label = Math.min(drawn.label, parseFloat(ctx.font));
      ctx.font = fontPx(P.number);
      ctx.fillText(f.weight[i].toFixed(2), x + g.cw / 2, y + g.ch * 0.72, g.cw - 2);
    }
  }
  if (d.layer !== null && d.layer !== undefined) {  // the layer shown above: its row framed
    ctx.strokeStyle = "#31333f";
    ctx.lineWidth = 2;
    ctx.strokeRect(g.lab, g.top + d.layer * g.ch, d.heads * g.cw, g.ch);
    if (d.head !== null && d.head !== undefined) {  // the enlarged head: its cell in red
      ctx.strokeStyle = "#d62728";
      ctx.lineWidth = 3;
      ctx.strokeRect(g.lab + d.head * g.cw + 1.5, g.top + d.layer * g.ch + 1.5, g.cw - 3, g.ch - 3);
    }
  }
  markPx(f.host, { labelPx: drawn.label, titlePx: drawn.title, numberPx: drawn.number, unlabelled: 0,
    contrast: drawn.contrast });
}

function focusHit(f, x, y) {
  const g = f.layout, d = f.data;
  const h = Math.floor((x - g.lab) / g.cw), l = Math.floor((y - g.top) / g.ch);
  return h >= 0 && h < d.heads && l >= 0 && l < d.layers && x >= g.lab && y >= g.top ? { l, h } : null;
}

function setupFocus(f) {
  f.main = el("canvas", "hs-main");
  f.tip = el("div", "hs-tip");
  f.tip.append(el("div", "hs-tip-title"), el("div", "hs-tip-text"));
  f.tip.hidden = true;
  const box = el("div", "hs-box");
  box.append(f.main, f.tip);
  f.root.append(box);
  const pos = (e) => { const r = f.main.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
  f.main.addEventListener("mousemove", (e) => {
    const [x, y] = pos(e), hit = focusHit(f, x, y), d = f.data;
    f.main.style.cursor = hit ? "pointer" : "default";
    f.host.dataset.hover = hit ? `${hit.l}:${hit.h}` : "";
    if (!hit) { f.tip.hidden = true; return; }
    const i = hit.l * d.heads + hit.h;
    f.tip.firstChild.textContent = "click: open this layer and head";
    f.tip.lastChild.textContent = `L${hit.l + 1} H${hit.h + 1} \u2192 ${d.tokens[f.top[i]]}: ${f.weight[i].toFixed(3)}`;
    f.tip.hidden = false;
    const right = x + 14 + f.tip.offsetWidth > f.layout.W;
    f.tip.style.left = `${right ? x - 14 - f.tip.offsetWidth : x + 14}px`;
    f.tip.style.top = `${y + 14}px`;
  });
  f.main.addEventListener("mouseleave", () => { f.tip.hidden = true; f.host.dataset.hover = ""; });
  f.main.addEventListener("click", (e) => {
    const hit = focusHit(f, ...pos(e));
    if (hit) f.component.setTriggerValue("cell", [hit.l, hit.h]);
  });
}

function renderFocus(f) {
  f.top = decode(f.data.top);
  f.weight = decode(f.data.weight);
  drawFocus(f);
  f.tip.hidden = true;
  f.host.dataset.geometry = JSON.stringify({ top: f.layout.top, left: f.layout.lab, w: f.layout.cw, h: f.layout.ch });
}

// The focus token's bars (the Explorer). For each head of one layer a stacked bar of how the focus
// token's attention splits over the keys, one segment per word bottom to top (a word's colour as in
// the focus grid; "other keys" grey), a 0..1 axis and the keys' legend at the right; hover reads
// "H3 → key: 0.123". data: values (S, H), names (S, null = other), colors.

function barsLayout(b) {
  const d = b.data, s = d.scale, W = b.width(), ctx = b.main.getContext("2d");
  const font = d.present ? PRESENT_PX * projectorFactor() : 12 * s;
  const sw = font, rowH = Math.round(font * 1.5);
  const legendW = Math.min(Math.floor(W * 0.3), labelRoom(ctx, b.names, font, 180 * s) + sw + 8 * s);
  const left = Math.round(font * 4.4), title = Math.round(font * 2.6), bottom = Math.round(font * 2);
  const plotW = Math.max(40, W - left - legendW - 12 * s);
  const legendH = title + (b.names.length + 1) * rowH;
  const H = Math.max(Math.round(340 * s), legendH + 8 * s);
  return { W, H, left, top: title, plotW, plotH: H - title - bottom, slot: plotW / d.heads,
    legendX: left + plotW + 12 * s, font, sw, rowH };
}

function drawBars(b) {
  const d = b.data, g = (b.layout = barsLayout(b)), S = b.names.length;
  const ctx = sizeCanvas(b.main, g.W, g.H), y = (v) => g.top + g.plotH * (1 - v);
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, g.W, g.H);
  ctx.textBaseline = "middle";
  // the 0..1 axis: gridlines, numbers, its title turned
  ctx.font = fontPx(g.font);
  for (let t = 0; t <= 5; t++) {
    const v = t / 5;
    ctx.fillStyle = "#e6e6ea";
    ctx.fillRect(g.left, Math.round(y(v)), g.plotW, 1);
    ctx.fillStyle = "#31333f";
    ctx.textAlign = "right";
    ctx.fillText(v.toFixed(1), g.left - 5, y(v));
  }
  ctx.save();
  ctx.translate(g.font * 0.8, g.top + g.plotH / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textAlign = "center";
  ctx.fillText(fitText(ctx, d.value, g.plotH, g.font, g.font), 0, 0);
  ctx.restore();
  // the bars, bottom to top, and the heads' names under them
  for (let h = 0; h < d.heads; h++) {
    const x = g.left + h * g.slot + g.slot * 0.1, w = g.slot * 0.8;
    let acc = 0;
    for (let i = 0; i < S; i++) {
      const v = b.values[i * d.heads + h];
      if (!(v > 0)) continue;
      ctx.fillStyle = d.colors[i];
      ctx.fillRect(x, y(acc + v), w, y(acc) - y(acc + v));
      acc += v;
    }
    ctx.fillStyle = "#31333f";
    ctx.textAlign = "center";
    ctx.fillText(`H${h + 1}`, x + w / 2, g.top + g.plotH + g.font, g.slot);
  }
  // the title over the plot; the legend (title "key") at the right
  ctx.font = fontPx(g.font * 1.15);
  ctx.textAlign = "center";
  const titlePx = g.font * 1.15;
  ctx.fillText(fitText(ctx, d.title, g.W - 8, titlePx, g.font), g.W / 2, g.top / 2);
  ctx.textAlign = "left";
  ctx.font = fontPx(g.font);
  ctx.fillText("key", g.legendX, g.top + g.rowH / 2);
  for (let i = 0; i < S; i++) {
    const yy = g.top + (i + 1.5) * g.rowH;
    ctx.fillStyle = d.colors[i];
    ctx.fillRect(g.legendX, yy - g.sw / 2, g.sw, g.sw);
    ctx.fillStyle = "#31333f";
    ctx.fillText(b.names[i], g.legendX + g.sw + 5, yy, g.W - g.legendX - g.sw - 6);
  }
  markPx(b.host, { labelPx: g.font, titlePx: Math.min(titlePx, parseFloat(ctx.font)), numberPx: g.font, unlabelled: 0 });
}

// The segment under the pointer: {h, i} (i: the segment's index, -1 over an empty part)
function barsHit(b, x, y) {
  const g = b.layout, d = b.data, h = Math.floor((x - g.left) / g.slot);
  if (h < 0 || h >= d.heads || y < g.top || y > g.top + g.plotH) return null;
  const v = 1 - (y - g.top) / g.plotH;
  let acc = 0;
  for (let i = 0; i < b.names.length; i++) {
    acc += Math.max(0, b.values[i * d.heads + h]);
    if (v <= acc) return { h, i };
  }
  return { h, i: -1 };
}

function setupBars(b) {
  b.main = el("canvas", "hs-main");
  b.tip = el("div", "hs-tip");
  b.tip.append(el("div", "hs-tip-title"), el("div", "hs-tip-text"));
  b.tip.hidden = true;
  const bar = el("div", "hs-bar"), png = el("button", "hs-btn", "PNG");
  png.title = "Save the bars as a PNG image";
  png.addEventListener("click", () => exportPng(b.main, `${b.data.filename || "attention"}.png`));
  bar.append(png);
  const box = el("div", "hs-box");
  box.append(b.main, b.tip);
  b.root.append(bar, box);
  b.main.addEventListener("mousemove", (e) => {
    const r = b.main.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
    const hit = barsHit(b, x, y), d = b.data;
    b.host.dataset.hover = hit ? `${hit.h}:${hit.i}` : "";
    if (!hit || hit.i < 0) { b.tip.hidden = true; return; }
    const v = b.values[hit.i * d.heads + hit.h].toFixed(3), other = d.names[hit.i] === null;
    b.tip.firstChild.textContent = d.title;
    b.tip.lastChild.textContent = other ? `H${hit.h + 1}: other keys ${v}` : `H${hit.h + 1} \u2192 ${d.names[hit.i]}: ${v}`;
    b.tip.hidden = false;
    const right = x + 14 + b.tip.offsetWidth > b.layout.W;
    b.tip.style.left = `${right ? x - 14 - b.tip.offsetWidth : x + 14}px`;
    b.tip.style.top = `${y + 14}px`;
  });
  b.main.addEventListener("mouseleave", () => { b.tip.hidden = true; b.host.dataset.hover = ""; });
}

function renderBars(b) {
  b.values = decode(b.data.values);
  b.names = b.data.names.map((n) => (n === null ? "other" : shown(n, 24)));
  drawBars(b);
  b.tip.hidden = true;
  const g = b.layout;
  b.host.dataset.keys = JSON.stringify(b.data.names);
  b.host.dataset.geometry = JSON.stringify({ left: g.left, top: g.top, slot: g.slot, h: g.plotH, W: g.W });
}

// The Explorer's numbers, derived in the browser from every layer's token-level maps (Python:
// explorer_payload.py): the view the switches choose (whole words, hidden [CLS]/[SEP], by norm),
// the mean of the heads, entropies, the default head, the rows of one or several focus tokens, the
// bars' segments and the summed head's summary. These live only here: tests/unit/test_explore_js.py
// checks them against numpy on the model's own maps and transformers' projections. No DOM here.

// The decoded payload: maps (L', H + 1, T, T) with the summed head last, norm shares (L', H, T, T),
// their row sums (L', H, T); long texts: the focus tokens' rows in every layer (frows*)
function exSource(d) {
  const T = d.tokens.length, H = d.heads, rows = (name) => decodeRows(d, name);
  const src = { T, H, L: d.layers, sent: d.sent, maps: rows("maps"), cache: new Map() };
  if (d.vnorm) src.vnorm = decode(d.vnorm);  // (L, H, T): ||f(x_j)|| per head and key
  if (d.frows) {
    src.frowsAt = d.frows_at;
    src.frows = rows("frows");
  }
  return src;
}

// Rows sent as explorer_payload.rows: the ordinary tokens' levels times their row's sum (name_ns)
function decodeRows(d, name) {
  const a = decode(d[name]), total = decode(d[`${name}_ns`]), T = d.tokens.length;
  const ordinary = [...Array(T).keys()].filter((t) => !d.special[t]);
  for (let r = 0; r < total.length; r++) for (const t of ordinary) a[r * T + t] *= total[r];
  return a;
}

// The shown labels for the switches: groups of token positions, their labels and flags, and for
// each the token a click masks. Whole words merge pieces (Clark et al. 2019); hiding drops the
// groups that are all special (unless nothing would be left), as mha_core.shown.explorer_view
// does for the pages that draw on the server (Head view, Two readings).
function shownView(d, words, hide) {
  const T = d.tokens.length;
  let groups = words ? d.groups : [...Array(T).keys()].map((t) => [t]);
  let labels = words ? d.words : d.tokens;
  let special = groups.map((g) => g.every((t) => d.special[t]));
  let punct = words ? d.word_punct : d.punct;
  const idx = [...groups.keys()].filter((i) => !(hide && special[i]));
  const kept = idx.length ? idx : [...groups.keys()];
  const hidden = kept.length < groups.length;
  groups = kept.map((i) => groups[i]);
  labels = kept.map((i) => labels[i]);
  punct = kept.map((i) => punct[i]);
  special = hidden ? kept.map(() => false) : kept.map((i) => special[i]);
  const maskable = groups.map((g) => d.maskable[g[0]]);
  return { words, hide: hidden, groups, labels, special, punct, maskable, G: groups.length };
}

// Where a token-level row lives: {arr, off, scale} for (layer, head, query), head H the summed
// head; byNorm: the norm map's row, alpha_ij ||f(x_j)|| (mul: the value norms at moff), divided by
// its sum unless raw (norms.norm_maps, row_normalised). null when not sent (a long text).
function tokenRow(src, layer, head, q, byNorm, raw) {
  const { T, H } = src, li = src.sent.indexOf(layer);
  let r = null;
  if (li >= 0) r = { arr: src.maps, off: ((li * (H + 1) + head) * T + q) * T, scale: 1 };
  else {
    const f = src.frowsAt ? src.frowsAt.indexOf(q) : -1;
    if (f < 0 || head >= H) return null;
    r = { arr: src.frows, off: ((layer * H + head) * src.frowsAt.length + f) * T, scale: 1 };
  }
  if (!byNorm || head >= H) return r;
  if (!src.vnorm) return null;
  const moff = (layer * H + head) * T;
  let tot = 0;
  for (let k = 0; k < T; k++) tot += r.arr[r.off + k] * src.vnorm[moff + k];
  return { ...r, mul: src.vnorm, moff, scale: raw ? 1 : tot > 0 ? 1 / tot : 0 };
}

// Shown row gi of (layer, head) into out[o..o+G): attention to a group summed over its pieces,
// from it averaged over its pieces; hidden tokens' rows renormalised (not raw). false if not sent.
function shownRow(src, sv, layer, head, gi, byNorm, raw, out, o) {
  const qs = sv.groups[gi];
  out.fill(0, o, o + sv.G);
  for (const q of qs) {
    const r = tokenRow(src, layer, head, q, byNorm, raw);
    if (!r) return false;
    for (let j = 0; j < sv.G; j++) {
      let s = 0;
      if (r.mul) for (const k of sv.groups[j]) s += r.arr[r.off + k] * r.mul[r.moff + k];
      else for (const k of sv.groups[j]) s += r.arr[r.off + k];
      out[o + j] += (s * r.scale) / qs.length;
    }
  }
  if (sv.hide && !raw) {
    let tot = 0;
    for (let j = 0; j < sv.G; j++) tot += out[o + j];
    if (tot > 0) for (let j = 0; j < sv.G; j++) out[o + j] /= tot;
  }
  return true;
}

// One layer as shown: maps (H + 2, G, G) = heads, summed head, mean of the heads; raw (H + 2, G, G)
// the raw norms behind by-norm maps (NaN for the summed head, which has no norm form), else null
function layerMaps(src, sv, layer, byNorm) {
  const key = `${layer}|${sv.words}|${sv.hide}|${byNorm}`;
  if (src.cache.has(key)) return src.cache.get(key);
  if (!src.sent.includes(layer)) return null;
  const { H } = src, G = sv.G, n = G * G;
  const maps = new Float32Array((H + 2) * n), raw = byNorm ? new Float32Array((H + 2) * n) : null;
  for (let h = 0; h <= H; h++) {
    for (let i = 0; i < G; i++) {
      shownRow(src, sv, layer, h, i, byNorm && h < H, false, maps, h * n + i * G);
      if (raw && h < H) shownRow(src, sv, layer, h, i, true, true, raw, h * n + i * G);
    }
  }
  for (let c = 0; c < n; c++) {
    let s = 0, r = 0;
    for (let h = 0; h < H; h++) { s += maps[h * n + c]; if (raw) r += raw[h * n + c]; }
    maps[(H + 1) * n + c] = s / H;
    if (raw) { raw[H * n + c] = NaN; raw[(H + 1) * n + c] = r / H; }
  }
  const out = { maps, raw, G, entropy: [...Array(H + 2).keys()].map((m) => entropyOf(maps, m * n, G)) };
  if (src.cache.size > 24) src.cache.delete(src.cache.keys().next().value);
  src.cache.set(key, out);
  return out;
}

// Mean row entropy in nats of the G x G map at maps[off..] (metrics.entropy)
function entropyOf(maps, off, G) {
  let tot = 0;
  for (let i = 0; i < G; i++) {
    let h = 0;
    for (let j = 0; j < G; j++) {
      const p = Math.max(0, maps[off + i * G + j]);
      h -= p * Math.log(Math.max(p, 1e-12));
    }
    tot += h;
  }
  return tot / G;
}

// The default head's word focus: per head, the mean over word queries of the largest weight a
// word puts on another word (not itself, not special, not punctuation); the default enlarged head
// is its argmax
function wordFocus(lm, sv, H) {
  const G = sv.G, n = G * G, isWord = sv.labels.map((_, i) => !(sv.special[i] || sv.punct[i]));
  const nw = isWord.filter(Boolean).length;
  return [...Array(H).keys()].map((h) => {
    if (nw < 2) return 0;
    let tot = 0;
    for (let i = 0; i < G; i++) {
      if (!isWord[i]) continue;
      let best = 0;
      for (let j = 0; j < G; j++) if (j !== i && isWord[j]) best = Math.max(best, lm.maps[h * n + i * G + j]);
      tot += best;
    }
    return tot / nw;
  });
}

function argmax(xs) {
  let b = 0;
  for (let i = 1; i < xs.length; i++) if (xs[i] > xs[b]) b = i;
  return b;
}

// The focus tokens' combined rows in every head of every layer: the mean of their shown rows
// (each sums to 1, so the mean does: the same rule as a word's pieces). (L, H, G) with NaN rows
// where a layer was not sent; byNorm: the norm shares
function focusRows(src, sv, focus, byNorm) {
  const { L, H } = src, G = sv.G, out = new Float32Array(L * H * G), row = new Float32Array(G);
  for (let l = 0; l < L; l++) {
    for (let h = 0; h < H; h++) {
      const o = (l * H + h) * G;
      for (const f of focus) {
        if (!shownRow(src, sv, l, h, f, byNorm, false, row, 0)) { out.fill(NaN, o, o + G); break; }
        for (let j = 0; j < G; j++) out[o + j] += row[j] / focus.length;
      }
    }
  }
  return out;
}

// Each head's top key and its weight from focus rows (L, H, G): the focus grid's cells
function topKeys(rows, L, H, G) {
  const top = new Int16Array(L * H), weight = new Float32Array(L * H);
  for (let i = 0; i < L * H; i++) {
    let b = 0;
    for (let j = 1; j < G; j++) if (rows[i * G + j] > rows[i * G + b]) b = j;
    top[i] = b;
    weight[i] = rows[i * G + b];
  }
  return { top, weight };
}

// One colour per shown token, a word (any case) the same everywhere (as figures.focus.token_colors)
function tokenColors(d, labels, special) {
  const words = new Map();
  return labels.map((t, i) => {
    if (special[i]) return d.special_colors[t] ?? d.special_color;
    const w = String(t).toLowerCase();
    if (!words.has(w)) words.set(w, words.size);
    return d.palette[words.get(w) % d.palette.length];
  });
}

// The bars' segments: one layer's focus rows (H, G) split by word (a word found twice is
// one target), in sentence order; words under minWeight in every head join "other keys" (null)
function keySegments(d, rows, sv, colors, minWeight = 0.05) {
  const H = rows.length / sv.G, G = sv.G, groups = new Map();
  sv.labels.forEach((w, t) => { const k = String(w).toLowerCase(); if (!groups.has(k)) groups.set(k, []); groups.get(k).push(t); });
  const segs = [], shown = new Float32Array(H);
  for (const pos of groups.values()) {
    const y = new Float32Array(H);
    for (let h = 0; h < H; h++) for (const t of pos) y[h] += rows[h * G + t];
    if (Math.max(...y) < minWeight) continue;
    for (let h = 0; h < H; h++) shown[h] += y[h];
    segs.push([sv.labels[pos[0]], colors[pos[0]], y]);
  }
  if (segs.length < groups.size) {
    const rest = new Float32Array(H);
    for (let h = 0; h < H; h++) { let s = 0; for (let j = 0; j < G; j++) s += rows[h * G + j]; rest[h] = s - shown[h]; }
    segs.push([null, d.other_color, rest]);
  }
  return segs;
}

// The caption's summary of the G x G map at maps[off..]: entropy, the key with the most weight on
// average (top, top_share), the mean weight on the previous token, itself and the next token
function mapSummary(maps, off, G) {
  const perKey = new Float32Array(G);
  for (let i = 0; i < G; i++) for (let j = 0; j < G; j++) perKey[j] += maps[off + i * G + j] / G;
  const top = argmax(perKey);
  const diag = (k) => {
    let s = 0, n = 0;
    for (let i = Math.max(0, -k); i < G && i + k < G; i++) { s += maps[off + i * G + i + k]; n++; }
    return n ? s / n : 0;
  };
  return { entropy: entropyOf(maps, off, G), top, top_share: perKey[top], prev_share: diag(-1),
    self_share: diag(0), next_share: diag(1) };
}

// link.resolve_focus: a token's text (first occurrence, any case) or "#i"; several as "#i,#j"
function resolveFocus(raw, labels) {
  const lowered = labels.map((x) => String(x).toLowerCase()), s = String(raw);
  const one = (p) => {
    if (lowered.includes(p.toLowerCase())) return lowered.indexOf(p.toLowerCase());
    const m = /^#(\d{1,6})$/.exec(p);
    return m && +m[1] < labels.length ? +m[1] : null;
  };
  const whole = one(s);
  if (whole !== null) return [whole];
  const parts = s.split(",").map((p) => (p.startsWith("#") ? one(p) : null));
  return parts.length > 1 && parts.every((p) => p !== null) ? [...new Set(parts)].sort((a, b) => a - b) : null;
}

// link.focus_param: one token by its text when that finds it, else "#i"; several as "#i,#j"
function focusParam(labels, focus) {
  if (focus.length === 1) {
    const r = resolveFocus(labels[focus[0]], labels);
    return r && r.length === 1 && r[0] === focus[0] ? String(labels[focus[0]]) : `#${focus[0]}`;
  }
  return focus.map((f) => `#${f}`).join(",");
}

// The Explorer as one view (data.view "explorer", explorer_payload.py): its controls
// (excontrols.js) and four parts drawn by the existing views: the heads of one layer
// (grid), where the focus tokens look in every head of every layer (focus), the enlarged head (big
// grid) and the focus tokens' bars. Every view change is drawn here from the maps sent once per
// sentence: nothing goes to the server but a click that masks a token, and, for a text longer
// than data.local tokens, a layer or focus the page has not sent (the wait is shown).

const EX_PARTS = [["grid", "ex_grid", "grid"], ["focus", "ex_focus_grid", "focus"],
  ["big", "ex_big", "grid"], ["bars", "ex_focus_bars", "bars"]];

function setupExplorer(x) {
  x.root.classList.add("hs-ex");
  x.controls = el("div", "hs-ex-controls");
  x.tokens = el("div", "hs-ex-tokens");
  x.status = el("div", "hs-ex-status");
  x.status.setAttribute("role", "status");
  x.status.setAttribute("aria-live", "polite");
  x.notes = el("div", "hs-ex-notes");
  const top = el("div", "hs-ex-top"), bottom = el("div", "hs-ex-bottom");
  const side = el("div", "hs-ex-side"), bigCol = el("div", "hs-ex-bigcol");
  x.parts = {};
  for (const [name, part, kind] of EX_PARTS) {
    // classed as a keyed Streamlit element would be, so that tests find a part as they find
    // one (testkit.browser.FIND): .st-key-ex_grid [data-drawn]
    const wrap = el("div", `hs-part st-key-${part}`), host = el("div", "hs-part-host");
    wrap.append(host);
    host.dataset.part = part;
    const root = el("div", "hs-root");
    host.append(root);
    const p = createState(host, root, kind);
    p.wrap = wrap;
    p.component = { setTriggerValue: (k, v) => exPartEvent(x, name, k, v), setStateValue() {} };
    x.parts[name] = p;
  }
  x.caption = el("div", "hs-ex-caption");
  side.append(x.parts.focus.wrap, x.caption);
  x.downloads = el("div", "hs-bar");
  bigCol.append(x.parts.big.wrap, x.downloads);
  top.append(x.parts.grid.wrap, side);
  bottom.append(bigCol, x.parts.bars.wrap);
  x.root.append(x.controls, x.tokens, x.notes, x.status, top, bottom);
  setupExplorerControls(x);
  // the maps' PNG and SVG at the end of the row of controls: the first screen is the maps'
  const bar = x.parts.grid.root.querySelector(".hs-bar");
  bar.classList.add("hs-ex-saves");
  x.controls.append(bar);
}

// A click inside a part: a head enlarged, a layer and head opened, a token masked (the server)
function exPartEvent(x, name, kind, value) {
  if (kind === "head" && name === "grid") exSet(x, { head: value, headAuto: false });
  else if (kind === "cell") exSet(x, { layer: value[0], head: value[1], headAuto: false });
  else if (kind === "token") {
    const i = x.view.lo + value, pos = x.sv.maskable[i];
    if (pos !== null && pos !== undefined) x.component.setTriggerValue("mask", [pos, String(x.sv.labels[i])]);
  }
}

// New data from the server: a new sentence, model or imposed view. The view the reader made is
// kept (the focus by its token: keptFocus) unless the server imposes one (a link or an
// example: data.impose with a new seq).
function renderExplorer(x) {
  const d = x.data, old = x.view, prevLabels = x.sv ? x.sv.labels : null;
  x.src = exSource(d);
  x.root.classList.toggle("present", !!d.present);
  let imp = d.impose && d.impose.seq !== x.seq ? d.impose : null;
  if (imp) x.seq = imp.seq;
  else if (!old && d.link) imp = exFromAddress(d);  // drawn afresh (a new session): the address bar's view
  const v = { layer: 0, head: 0, headAuto: true, focus: null, words: false, hide: false, norm: false, lo: 0 };
  if (old) Object.assign(v, old);
  if (imp) {
    for (const k of ["layer", "words", "hide", "norm"]) if (imp[k] !== undefined && imp[k] !== null) v[k] = imp[k];
    if (imp.head !== undefined && imp.head !== null) { v.head = imp.head; v.headAuto = false; }
  } else if (!old) v.layer = d.sent.length === 1 ? d.sent[0] : d.initial_layer ?? 0;
  v.norm = v.norm && d.norms;
  v.layer = Math.min(Math.max(0, v.layer), d.layers - 1);
  v.head = Math.min(Math.max(0, v.head), d.heads - 1);
  const sv = shownView(d, v.words, v.hide);
  if (imp && imp.focus) v.focus = imp.focus.filter((f) => f < sv.G);
  else if (v.focus && prevLabels) v.focus = keptFocus(v.focus, prevLabels, sv.labels);
  if (!v.focus || !v.focus.length) v.focus = [d.default_focus[v.words ? 1 : 0] ?? 0].filter((f) => f < sv.G);
  if (!v.focus.length) v.focus = [0];
  x.view = v;
  x.pending = null;
  exDraw(x, true);
}

// The view in the address bar (the link parameters explorer.js writes), or null without one
function exFromAddress(d) {
  const q = new URLSearchParams(window.location.search), on = (k) => /^(1|true|yes|on)$/i.test(q.get(k) ?? "");
  if (!q.has("layer")) return null;
  const n = (k, hi) => { const v = parseInt(q.get(k), 10); return Number.isFinite(v) ? Math.min(Math.max(v, 1), hi) - 1 : null; };
  const v = { layer: n("layer", d.layers), head: n("head", d.heads), words: on("words"), hide: on("nospecial"), norm: on("norms") };
  if (q.has("focus")) v.focus = resolveFocus(q.get("focus"), shownView(d, v.words, v.hide).labels);
  return v;
}

// The focus kept across a new sentence, token by token: the same position while it holds the
// same token, else the token's first occurrence; tokens not found are dropped
function keptFocus(focus, before, labels) {
  const out = [];
  for (const f of focus) {
    const t = before[f];
    if (f < labels.length && labels[f] === t) out.push(f);
    else { const r = resolveFocus(String(t ?? ""), labels); if (r && r.length === 1) out.push(r[0]); }
  }
  return [...new Set(out)].sort((a, b) => a - b);
}

// A view change from a control, a click or a key: redrawn here, the address bar follows
function exSet(x, change) {
  const v = x.view, before = { ...v };
  Object.assign(v, change);
  v.layer = Math.min(Math.max(0, v.layer), x.data.layers - 1);
  v.head = Math.min(Math.max(0, v.head), x.data.heads - 1);
  if (change.words !== undefined || change.hide !== undefined) {  // a position in another view
    const labels = x.sv.labels, sv = shownView(x.data, v.words, v.hide);
    v.focus = keptFocus(before.focus, labels, sv.labels);
    if (!v.focus.length) v.focus = [Math.min(x.data.default_focus[v.words ? 1 : 0] ?? 0, sv.G - 1)];
  }
  exDraw(x, false);
}

// Everything drawn for the current view. A long text's layer or focus not sent: asked for once
// (trigger "need"), the wait shown, the parts keep their last drawing until it comes.
function exDraw(x, fresh) {
  const t0 = performance.now(), d = x.data, v = x.view;
  const sv = (x.sv = shownView(d, v.words, v.hide));
  const lm = layerMaps(x.src, sv, v.layer, v.norm);
  const need = d.frows_at && v.focus.some((f) => sv.groups[f].some((t) => !d.frows_at.includes(t)));
  if (!lm || need) {
    const focus = [...new Set(v.focus.flatMap((f) => sv.groups[f]))].sort((a, b) => a - b);
    const ask = JSON.stringify([v.layer, focus]);
    if (x.pending !== ask) { x.pending = ask; x.component.setTriggerValue("need", { layer: v.layer, focus }); }
    exSyncControls(x);  // the controls show what was asked for; the status says the wait
    x.status.textContent = `Loading layer ${v.layer + 1} from the server (a text over ${d.local} tokens travels one layer at a time)\u2026`;
    x.host.dataset.waiting = "true";
    x.root.classList.add("waiting");  // the status shown, not only announced
    return;
  }
  x.host.dataset.waiting = "";
  x.root.classList.remove("waiting");
  if (v.headAuto && lm.focusHead === undefined) lm.focusHead = argmax(wordFocus(layerMaps(x.src, sv, v.layer, false), sv, d.heads));
  if (v.headAuto) v.head = lm.focusHead;
  const W = Math.min(d.window, sv.G);  // the most tokens a map shows (the page's window)
  if (fresh || v.lo + W > sv.G || !v.focus.some((f) => f >= v.lo && f < v.lo + W)) {
    v.lo = Math.min(Math.max(v.focus[0] - Math.floor(W / 2), 0), sv.G - W);
  }
  x.W = W;
  exDrawParts(x, sv, lm);
  exSyncControls(x);
  exWriteLink(x);
  x.host.dataset.drawMs = (performance.now() - t0).toFixed(1);
  x.host.dataset.view = "explorer";
  x.host.dataset.layer = String(v.layer + 1);
  x.host.dataset.head = String(v.head + 1);
  x.host.dataset.focus = v.focus.join(",");
  x.host.dataset.switches = `${v.words ? "words " : ""}${v.hide ? "hide " : ""}${v.norm ? "norm" : ""}`.trim();
  x.host.dataset.drawn = d.tokens.join(" ");
}

// The four parts' payloads, in the format of payload.py's grid/focus/bars payloads (arrays
// already decoded), drawn by grid.js, focus.js and bars.js
function exDrawParts(x, sv, lm) {
  const d = x.data, v = x.view, H = d.heads, G = sv.G, lo = v.lo, W = x.W, by = v.norm;
  // the notes above the maps first, then every part's width read at once: one layout of the
  // page, not one per part (a canvas resized makes the next read lay the page out again)
  exCaptions(x, sv, lm);
  const parts = Object.values(x.parts), live = parts.map((p) => p.width);
  const widths = live.map((w) => w());
  parts.forEach((p, i) => { p.width = () => widths[i]; });
  const labels = sv.labels.slice(lo, lo + W), special = sv.special.slice(lo, lo + W);
  const win = (maps, M) => sliceMaps(maps, M, G, lo, W);
  const nats = (m) => lm.entropy[m].toFixed(2);
  const titles = [...Array(H).keys()].map((h) => `head ${h + 1} \u00b7 ${nats(h)} nats`);
  titles.push(`summed head${by ? " (weights)" : ""} \u00b7 ${nats(H)} nats`, `mean of heads \u00b7 ${nats(H + 1)} nats`);
  const focusIn = v.focus.filter((f) => f >= lo && f < lo + W).map((f) => f - lo);
  const common = { tokens: labels, special, colorscale: d.colorscale, head_colors: d.head_colors,
    special_color: d.special_color, scale: d.scale, present: d.present, range: [0, 1], causal: !!d.causal,
    legend: by ? "share of \u2016\u03b1f\u2016" : "weight", focus: focusIn[0] ?? null, focus_set: focusIn };
  const meta = { model: d.meta?.model, text: d.meta?.text };
  const tag = `layer ${v.layer + 1}${by ? " by norm" : ""}`;
  exPart(x.parts.grid, { ...common, view: "grid", maps: { values: win(lm.maps, H + 2), shape: [H + 2, W, W] },
    raw: lm.raw ? { values: win(lm.raw, H + 2) } : null, titles, heads: H, selected: v.head, fit: true,
    maskable: sv.maskable.slice(lo, lo + W).map((m) => m !== null && m !== undefined),
    short_titles: [...Array(H).keys()].map((h) => `H${h + 1} \u00b7 ${nats(h)}`),
    filename: `attention_L${v.layer + 1}${by ? "_norm" : ""}`, tag, meta: { ...meta, title: tag } }, labels);
  const one = (arr) => arr.slice(v.head * G * G, (v.head + 1) * G * G);
  const bigTitle = `layer ${v.layer + 1}, head ${v.head + 1}${by ? " \u00b7 by norm" : ""}`;
  exPart(x.parts.big, { ...common, view: "grid", maps: { values: sliceMaps(one(lm.maps), 1, G, lo, W), shape: [1, W, W] },
    raw: lm.raw ? { values: sliceMaps(one(lm.raw), 1, G, lo, W) } : null, titles: [`${bigTitle} \u00b7 ${nats(v.head)} nats`],
    heads: 0, big: true, selected: null, fit: false, filename: exStem(v), tag: `${tag} head ${v.head + 1}`,
    meta: { ...meta, title: bigTitle } }, labels);
  const rows = focusRows(x.src, sv, v.focus, by), { top, weight } = topKeys(rows, d.layers, H, G);
  const colors = tokenColors(d, sv.labels, sv.special), name = exFocusName(sv, v.focus);
  exPart(x.parts.focus, { view: "focus", layers: d.layers, heads: H, top: { values: top }, weight: { values: weight },
    colors, focus: sv.labels[v.focus[0]], focus_title: name, layer: v.layer, head: v.head, by: by ? "by norm" : "", tokens: sv.labels,
    special: sv.labels.map(() => false), scale: d.scale, present: d.present, filename: "focus",
    tag: `focus ${v.focus.join(",")}${by ? " by norm" : ""}` }, sv.labels);
  const layerRows = rows.subarray(v.layer * H * G, (v.layer + 1) * H * G);
  const segs = keySegments(d, layerRows, sv, colors);
  exPart(x.parts.bars, { view: "bars", heads: H, values: { values: Float32Array.from(segs.flatMap((s) => [...s[2]])) },
    names: segs.map((s) => (s[0] === null ? null : String(s[0]))), colors: segs.map((s) => s[1]),
    title: `Layer ${v.layer + 1}: where ${name} attends, per head`, value: by ? "share of \u2016\u03b1f\u2016" : "weight",
    tokens: sv.labels, special: sv.labels.map(() => false), scale: d.scale, present: d.present,
    filename: `focus_bars_L${v.layer + 1}`, tag: `bars ${v.layer + 1} ${v.focus.join(",")}${by ? " by norm" : ""}` }, sv.labels);
  parts.forEach((p, i) => { p.width = live[i]; });  // live again (a resize of the window)
}

// One part drawn with its payload; its host marked as main.js marks a component's
function exPart(p, data, drawnTokens) {
  const t0 = performance.now();
  p.data = data;
  if (p.kind === "grid") renderGrid(p);
  else if (p.kind === "focus") renderFocus(p);
  else renderBars(p);
  p.host.dataset.view = p.kind;
  p.host.dataset.tag = data.tag;
  p.host.dataset.drawMs = (performance.now() - t0).toFixed(1);
  p.host.dataset.drawn = drawnTokens.join(" ");
  CANVAS_STATE.set(p.main, p);
}

// maps (M, G, G) -> (M, W, W): rows and columns lo..lo+W
function sliceMaps(maps, M, G, lo, W) {
  if (W === G) return maps;
  const out = new Float32Array(M * W * W);
  for (let m = 0; m < M; m++) for (let i = 0; i < W; i++) {
    out.set(maps.subarray(m * G * G + (lo + i) * G + lo, m * G * G + (lo + i) * G + lo + W), (m * W + i) * W);
  }
  return out;
}

function exStem(v) {
  return `attention_L${v.layer + 1}_H${v.head + 1}${v.norm ? "_norm" : ""}`;
}

// The focus tokens as the titles say them: \u201cwith\u201d, or \u201cwith\u201d + \u201ca\u201d (mean)
function exFocusName(sv, focus) {
  const q = focus.map((f) => `\u201c${shown(sv.labels[f], 20)}\u201d`);
  return q.length === 1 ? q[0] : `${q.slice(0, 4).join(" + ")}${q.length > 4 ? ` + ${q.length - 4} more` : ""} (mean)`;
}

// The Explorer's controls (explorer.js), native elements with accessible names: the layer slider,
// the head select, the switches, the focus tokens (a click picks one, shift-click or
// Shift+arrow adds; arrows move), the token window, Copy link and the enlarged head's CSV/JSON.
// The view they show is announced (a status region) and kept in the address bar.

function exControl(label, input, help) {
  const wrap = el("label", "hs-ex-ctl");
  wrap.append(el("span", "hs-ex-lab", label), input);
  if (help) wrap.title = help;
  return wrap;
}

function exSwitch(x, label, key, help) {
  const box = el("input");
  box.type = "checkbox";
  box.setAttribute("role", "switch");
  box.addEventListener("change", () => exSet(x, { [key]: box.checked }));
  const wrap = el("label", "hs-ex-switch");
  wrap.append(box, el("span", "", label));
  wrap.title = help;
  return { wrap, box };
}

function setupExplorerControls(x) {
  const c = (x.ctl = {});
  c.layer = el("input");
  c.layer.type = "range";
  c.layer.min = "1";
  c.layer.addEventListener("input", () => exSet(x, { layer: +c.layer.value - 1 }));
  c.layerOut = el("span", "hs-ex-out");
  const layerBox = exControl("Layer", c.layer);
  layerBox.append(c.layerOut);
  c.head = el("select", "hs-select");
  c.head.addEventListener("change", () => exSet(x, { head: +c.head.value, headAuto: false }));
  const headBox = exControl("Head", c.head, "The head shown large. Until you choose, it is the one whose words look most " +
    "sharply at other words (the mean, over the words, of the largest weight a word puts on another word, " +
    "leaving out the special tokens, punctuation and itself).");
  c.words = exSwitch(x, "Whole words", "words", "Merge subword pieces into words (Clark et al. 2019): attention to a word is summed over its pieces, attention from it averaged.");
  c.hide = exSwitch(x, "Hide [CLS]/[SEP]", "hide", "Drop the special tokens and renormalise each row to sum to 1.");
  c.norm = exSwitch(x, "By norm", "norm", "Kobayashi et al. 2020: how much of each token's vector reaches the token that looks, through the head: \u2016\u03b1 f(x)\u2016, the weight times the norm of the token's transformed value vector f(x) = (x W_V + b_V) W_O (each row divided by its sum; the hover gives the raw norm).");
  c.copy = el("button", "hs-btn", "Copy link");
  c.copy.addEventListener("click", () => exCopyLink(x));
  c.linkBox = el("div", "hs-ex-linkbox");
  c.linkBox.hidden = true;
  // the switches: in the row, or on a projector behind a "View" button (the row must stay one line)
  c.view = el("button", "hs-btn hs-ex-viewbtn", "View \u25be");
  c.view.setAttribute("aria-expanded", "false");
  c.switches = el("span", "hs-ex-switches");
  c.switches.append(c.words.wrap, c.hide.wrap, c.norm.wrap);
  c.view.addEventListener("click", () => {
    const open = c.view.getAttribute("aria-expanded") !== "true";
    c.view.setAttribute("aria-expanded", String(open));
    x.root.classList.toggle("view-open", open);
  });
  x.controls.append(layerBox, headBox, c.view, c.switches, c.copy);
  x.controls.setAttribute("role", "toolbar");
  x.controls.setAttribute("aria-label", "Explorer view");
  x.tokens.setAttribute("role", "group");
  x.tokens.setAttribute("aria-label", "Focus tokens");
  c.window = el("input");
  c.window.type = "range";
  c.window.min = "0";
  c.window.addEventListener("input", () => { x.view.lo = +c.window.value; exDraw(x, false); });
  c.windowBox = exControl("First token shown", c.window, "The maps show a window of tokens so that every label stays readable; the focus grid and bars use every token.");
  x.notes.before(c.linkBox);
  x.tokens.addEventListener("keydown", (e) => exTokenKey(x, e));
  const csv = el("button", "hs-btn", "Download CSV"), json = el("button", "hs-btn", "Download JSON");
  csv.addEventListener("click", () => exDownload(x, "csv"));
  json.addEventListener("click", () => exDownload(x, "json"));
  x.downloads.append(csv, json);
}

// The controls show the view (after any change, from whichever control or click)
function exSyncControls(x) {
  const d = x.data, v = x.view, c = x.ctl, sv = x.sv;
  c.layer.max = String(d.layers);
  c.layer.value = String(v.layer + 1);
  c.layer.disabled = d.layers < 2;
  c.layerOut.textContent = `${v.layer + 1} of ${d.layers}`;
  if (c.head.options.length !== d.heads) {
    c.head.replaceChildren(...[...Array(d.heads).keys()].map((h) => { const o = el("option", "", `head ${h + 1}`); o.value = String(h); return o; }));
  }
  c.head.value = String(v.head);
  c.words.box.checked = v.words;
  c.hide.box.checked = v.hide;
  c.hide.wrap.lastChild.textContent = `Hide ${d.names[0]}/${d.names[1]}`;
  c.hide.wrap.hidden = !d.special.some(Boolean);  // nothing to hide (a decoder adds no special tokens)
  c.norm.box.checked = v.norm;
  c.norm.wrap.hidden = !d.norms;
  exTokenButtons(x);
  if (sv.G > x.W) {
    c.window.max = String(sv.G - x.W);
    c.window.value = String(v.lo);
    x.tokens.after(c.windowBox);
  } else c.windowBox.remove();
  x.status.textContent = `Layer ${v.layer + 1} of ${d.layers}, head ${v.head + 1}, focus ${exFocusName(sv, v.focus)}` +
    `${v.words ? ", whole words" : ""}${v.hide ? `, ${d.names[0]} and ${d.names[1]} hidden` : ""}${v.norm ? ", by norm" : ""}`;
}

// One button per shown token, pressed when it is a focus token; one of them in the tab order
function exTokenButtons(x) {
  const sv = x.sv, v = x.view, on = new Set(v.focus);
  const key = sv.labels.join("\u0000");
  if (x.tokensKey !== key) {
    x.tokensKey = key;
    x.tokens.replaceChildren(el("span", "hs-ex-lab", "Focus"), ...sv.labels.map((t, i) => {
      const b = el("button", "hs-tok", shown(t, 24));
      b.type = "button";
      b.dataset.i = String(i);
      b.addEventListener("click", (e) => exPick(x, i, e.shiftKey));
      return b;
    }));
  }
  const last = Math.max(...v.focus), name = shown(sv.labels[last], 24);
  for (const b of x.tokens.querySelectorAll("button.hs-tok")) {
    const i = +b.dataset.i, later = isBlocked(x.data, last, i);
    b.setAttribute("aria-pressed", String(on.has(i)));
    b.tabIndex = i === v.focus[0] ? 0 : -1;
    b.classList.toggle("in-window", i >= v.lo && i < v.lo + x.W);
    b.classList.toggle("later", later);  // a decoder: the focus cannot see it
    b.title = later ? `not attendable: “${name}” cannot see later tokens` : "";
  }
}

// A click picks one focus token; shift-click adds it (or takes it out, keeping one)
function exPick(x, i, add) {
  const f = new Set(add ? x.view.focus : []);
  if (add && f.has(i) && f.size > 1) f.delete(i);
  else f.add(i);
  exSet(x, { focus: [...f].sort((a, b) => a - b) });
}

// Arrows move the focus token (Shift+arrow adds the next one), Home/End go to the ends
function exTokenKey(x, e) {
  const G = x.sv.G, f = x.view.focus, at = e.target.dataset?.i === undefined ? f[0] : +e.target.dataset.i;
  const to = { ArrowLeft: at - 1, ArrowUp: at - 1, ArrowRight: at + 1, ArrowDown: at + 1, Home: 0, End: G - 1 }[e.key];
  if (to === undefined || to < 0 || to >= G) return;
  e.preventDefault();
  exPick(x, to, e.shiftKey);
  x.tokens.querySelector(`button.hs-tok[data-i="${to}"]`)?.focus();
}

// The captions computed from the view: what is hidden or weighed, the token window, and the summed
// head's caption (captions.single_head) with this layer's "Is one head enough?" sentence
function exCaptions(x, sv, lm) {
  const d = x.data, v = x.view, [cls, sep] = d.names, notes = [];
  if (v.hide) notes.push(`${cls} and ${sep} are hidden: each row is renormalised over the remaining tokens to sum to 1, and entropies are of these maps.`);
  if (v.norm) notes.push("By norm (Kobayashi et al. 2020): each head's cell is \u2016\u03b1_ij f(x_j)\u2016, each row divided by its sum so that rows read like weights (the hover also gives the raw norm), and the focus grid and the enlarged head follow. The summed head has no norm form: it reads the layer's query and key weights as one head, and the model never sends value vectors through it, so its map stays the weights.");
  if (sv.G > x.W) notes.push(`Tokens ${v.lo}\u2013${v.lo + x.W - 1} of ${sv.G}: each map shows these rows and columns only (a row's weights on other tokens are outside the window).`);
  if (v.focus.length > 1) notes.push(`${v.focus.length} focus tokens: the focus grid and bars show the mean of their rows, so that each head's attention still sums to 1 (as a word's pieces are averaged in Whole words).`);
  x.notes.replaceChildren(...notes.map((t) => el("p", "hs-ex-note", t)));
  const s = mapSummary(lm.maps, d.heads * sv.G * sv.G, sv.G), parts = [];
  const kinds = { prev_share: "the previous token", self_share: "itself", next_share: "the next token" };
  const shares = { top_share: s.top_share, prev_share: s.prev_share, self_share: s.self_share, next_share: s.next_share };
  const kind = Object.keys(shares).reduce((a, b) => (shares[b] > shares[a] ? b : a));
  const top = `\u201c${shown(sv.labels[s.top])}\u201d`, e = s.entropy.toFixed(2);
  parts.push(["The ", false], ["summed head", true], [` reads layer ${v.layer + 1}'s weights as one head of width ${d.width}: the ${d.heads} heads' scores summed and put through one softmax. `, false]);
  if (kind === "top_share" && shares[kind] >= 0.5) parts.push(["Here it ", false], [`collapses onto ${top}`, true], [`: the rows put ${s.top_share.toFixed(2)} of their weight on it on average (entropy ${e} nats).`, false]);
  else if (shares[kind] >= 0.5) parts.push(["Here it ", false], ["does not collapse", true], [`: it is a sharp diagonal, each token looking at ${kinds[kind]} (${shares[kind].toFixed(2)} on average; entropy ${e} nats).`, false]);
  else parts.push(["Here it ", false], ["spreads its attention", true], [`: no token gets half of the weight (the most, ${top}, ${s.top_share.toFixed(2)} on average; entropy ${e} nats).`, false]);
  parts.push([" It is not a ", false], ["trained one-head model", true], [" (the Training lab trains one): the same weights, read as one head.", false]);
  const p = el("p", "hs-ex-note");
  p.append(...parts.map(([t, b]) => (b ? el("strong", "", t) : document.createTextNode(t))));
  const out = [p];
  if (d.notes && d.notes[v.layer]) out.push(el("p", "hs-ex-note", d.notes[v.layer]));
  x.caption.replaceChildren(...out);
}

// The address bar follows the view (a reload or a shared link restores it); the other parameters
// (model, text, present, ...) stay as they are
function exLinkParams(x) {
  const v = x.view;
  return { layer: String(v.layer + 1), head: v.headAuto ? null : String(v.head + 1), focus: focusParam(x.sv.labels, v.focus),
    words: v.words ? "1" : null, nospecial: v.hide ? "1" : null, norms: v.norm ? "1" : null };
}

function exWriteLink(x) {
  if (!x.data.link) return;  // a notebook: no address bar of its own
  const u = new URL(window.location.href);
  for (const [k, val] of Object.entries(exLinkParams(x))) {
    if (val === null) u.searchParams.delete(k);
    else u.searchParams.set(k, val);
  }
  if (u.href !== window.location.href) window.history.replaceState(window.history.state, "", u.href);
  try {  // for pages that open on this view (shared_view.listen): Streamlit clears the query on a page change
    sessionStorage.setItem(EX_STORE, JSON.stringify({ ...exLinkParams(x), stamp: `${Date.now()}` }));
  } catch { /* storage off: those pages open on their own defaults */ }
}

// Copy link: the link to the view shown (without present=1, for the students), copied and
// shown; the projector's link below it
function exCopyLink(x) {
  const u = new URL(window.location.href);
  u.searchParams.delete("present");
  const students = u.href;
  u.searchParams.set("present", "1");
  const box = x.ctl.linkBox, said = el("div", "hs-ex-note", "Copied: the link to this view, for the students' screens");
  const code = (t) => { const c = el("code", "hs-ex-link", t); return c; };
  box.replaceChildren(said, code(students), el("div", "hs-ex-note", "The same view for a projector (presentation mode):"), code(u.href));
  box.hidden = false;
  x.host.dataset.copied = students;
  x.component.setTriggerValue("share", students);  // the sidebar's box (its QR code) follows
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(students).catch(() => { said.textContent = "Select the link below and copy it:"; });
  else said.textContent = "Select the link below and copy it (this page is not served over https, so it cannot copy for you):";
}

// The enlarged head as CSV or JSON: the whole shown map (every token, not the window), from the
// 16-bit levels the page was sent (error <= 8e-6; the exact tensor: the "All heads" downloads)
function exDownload(x, kind) {
  const d = x.data, v = x.view, sv = x.sv, G = sv.G, lm = layerMaps(x.src, sv, v.layer, v.norm);
  if (!lm) return;
  const row = (i) => Array.from(lm.maps.subarray(v.head * G * G + i * G, v.head * G * G + (i + 1) * G));
  const stem = exStem(v);
  if (kind === "csv") {
    const q = (t) => (/[",\r\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t);
    const lines = [["query \\ key", ...sv.labels].map((t) => q(String(t))).join(",")];
    sv.labels.forEach((t, i) => lines.push([q(String(t)), ...row(i).map((w) => w.toFixed(6))].join(",")));
    download(new Blob([lines.join("\r\n") + "\r\n"], { type: "text/csv" }), `${stem}.csv`);
  } else {
    const body = { model: d.meta?.model, text: d.meta?.text, layer: v.layer + 1, head: v.head + 1, numbering: "from 1",
      view: { word_level: v.words, hide_special: v.hide, by_norm: v.norm }, precision: "16-bit levels, error <= 8e-6",
      tokens: sv.labels, weights: sv.labels.map((_, i) => row(i).map((w) => Math.round(w * 1e6) / 1e6)) };
    download(new Blob([JSON.stringify(body)], { type: "application/json" }), `${stem}.json`);
  }
  x.host.dataset.downloaded = `${stem}.${kind}`;
}

// A page that opens on the Explorer's view (shared_view.listen): the stored view, sent back once
// for each change (trigger "seen"), nothing drawn
const EX_STORE = "headscope.explorer.view";

function renderRecall(r) {
  let seen = null;
  try { seen = JSON.parse(sessionStorage.getItem(EX_STORE) || "null"); } catch { seen = null; }
  if (seen && seen.stamp !== r.data.stamp && r.sentStamp !== seen.stamp) {
    r.sentStamp = seen.stamp;
    r.component.setTriggerValue("seen", seen);
  }
}

// Exports (PNG from the canvas, SVG of the head view) and draw(component), the entry point a host
// adapter calls with each new data (one state per host element, kept in STATES): host_streamlit.js
// for the Streamlit component, host_anywidget.js for the notebook widget.

// A view's canvas as a PNG: the whole figure (figure.js) at the data's export scale
function exportPng(canvas, name) {
  const st = CANVAS_STATE.get(canvas);
  if (st) return exportFigure(st, name);
  canvas.toBlob((blob) => download(blob, name), "image/png");
}

const SVG_NS = "http://www.w3.org/2000/svg";

function svgEl(tag, attrs, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, val] of Object.entries(attrs)) e.setAttribute(k, String(val));
  if (text !== undefined) e.textContent = text;
  return e;
}

// The head view as shown (heads, layer, threshold, filters, hovered or pinned token): one
// <path> per head and opacity step, token labels as <text> (textContent: escaped by the
// serializer), never markup made of tokens; the caption above, a head-colour legend below.
// In the model view, figure.js's exportModelSvg.
function exportSvg(v) {
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

function createState(host, root, kind) {
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

function draw(component) {
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

// Figures for a paper: a view's PNG redrawn at the export scale (data.export_scale, 2 by default)
// with its caption lines (data.meta: sentence, model; the view, layer and heads shown) above and,
// for the head and model views, a head-colour legend below (the maps carry their colour scale);
// the model view (with its token labels) and the head grid as SVG. Text only through fillText and
// SVG textContent.

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

function exportFigure(st, name) {
  const k = st.data.export_scale || 2, src = st.kind === "lines" ? st.canvas : st.main;
  EXPORT_DPR = k;
  let img;
  try {
    redrawView(st);
    img = document.createElement("canvas");
    img.width = src.width;
    img.height = src.height;
    img.getContext("2d").drawImage(src, 0, 0);
  } finally {
    EXPORT_DPR = 0;
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
function svgFigure(v, W, bodyH, draw, attrs = {}) {
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
function svgHeadPaths(d, h, width, steps) {
  const g = svgEl("g", { stroke: headColor(d, h), "stroke-width": width, fill: "none" });
  steps.forEach((p, b) => { if (p) g.append(svgEl("path", { d: p, "stroke-opacity": ((b + 0.5) / STEPS).toFixed(3) })); });
  return g;
}

// The model view as SVG: one <path> per head and opacity step, layer and head labels
function exportModelSvg(v) {
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

function exportGridSvg(g) {
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

// The Streamlit host (Custom Components v2): Streamlit calls the module's default export with
// {data, parentElement, setStateValue, setTriggerValue}, which is what draw() takes. The data
// comes as one JSON string (component.py: Streamlit does not walk it for dataframes).
export default function (component) {
  const { data } = component;
  draw(typeof data === "string" ? { ...component, data: JSON.parse(data) } : component);
}
