// The head view (two columns of tokens, a line per head and pair) and the model view (every layer x
// head as a small line view). Lines come as sparse entries per head, the strongest first
// (payload.lines_payload). All lines of a frame go into one Path2D per head and opacity step: never
// a DOM element per line. At most CAP lines are drawn per frame.

import { decode, fontPx, headColor, labelRoom, markPx, shown, sizeCanvas } from "./core.js";
import { PRESENT_PX, projectorFactor } from "./grid.js";

const CAP_HEAD = 20000;
export const CAP_MODEL = 60000;
export const STEPS = 16;
export const SEGMENT_FILTERS = { "all": null, "A\u2192A": [0, 0], "A\u2192B": [0, 1], "B\u2192A": [1, 0], "B\u2192B": [1, 1] };

export function linesData(v) {
  const d = v.data;
  v.q = decode(d.q); v.k = decode(d.k); v.w = decode(d.w); v.off = decode(d.offsets);
  v.labels = d.tokens.map((t) => shown(t, 24));
  v.twoSegments = !!d.segments && d.segments.includes(0) && d.segments.includes(1);
}

// Entries of head h in the current layer that pass the threshold and the filters, strongest
// first, at most `cap`; calls put(q, k, w) for each. Returns how many passed the threshold.
export function eachLine(v, layer, h, cap, put, keep) {
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

export function alphaOf(v, q, k, w) {
  const sp = v.data.special, dim = v.dim && (sp[q] || sp[k]) ? 0.15 : 1;
  return Math.min(STEPS - 1, Math.floor(Math.min(1, w) * dim * STEPS));
}

// The lines of the selected heads, bucketed by opacity: {h: [sink x STEPS]} (a sink is a
// Path2D, or an SVG path builder for the export); also what the test hooks read
export function collectHead(v, geo, sink = () => new Path2D()) {
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

export function headGeometry(v) {
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
export function modelGeometry(v) {
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
export function modelLabels(v, geo, put) {
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

export function drawLines(v) {
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
export function headHit(v, x, y) {
  const g = v.geo;
  if (!g || y < g.top || y >= g.top + g.G * g.rowH) return null;
  const i = Math.floor((y - g.top) / g.rowH);
  if (x < g.xl) return { side: "q", i };
  if (x > g.xr) return { side: "k", i };
  return null;
}

export function modelHit(v, x, y) {
  const g = v.mgeo;
  if (!g) return null;
  const h = Math.floor((x - g.left) / (g.tw + g.gap)), l = Math.floor((y - g.top) / (g.th + g.gap));
  return h >= 0 && h < v.data.heads && l >= 0 && l < v.data.layers ? { l, h } : null;
}
