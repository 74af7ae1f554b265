// headscope attention component, the module every other one imports from: decoding, colours,
// small DOM helpers, the per-host states. Token text reaches the
// page only through textContent and canvas fillText; the data is never code or markup.

export const STATES = new WeakMap(); // host element -> its state; listeners are attached once per host
export const CANVAS_STATE = new WeakMap(); // a view's main canvas -> its state (for the PNG figure)
let EXPORT_DPR = 0; // device px per CSS px while a figure is drawn for export; 0 = the screen's

// figure.js's export draws at k device px per CSS px, then back at the screen's (k = 0)
export function setExportDpr(k) { EXPORT_DPR = k; }

// An array sent by payload.pack: {dtype, shape, b64}, or {dtype, shape, bytes} (a Uint8Array: a
// host adapter's binary buffer), or {values} already decoded; 16/8-bit levels become weights in [0, 1]
export function decode(d) {
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
export function colorLut(stops) {
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

export function contrast(a, b) {
  const la = luminance(a), lb = luminance(b);
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

export function inkOn(c) {
  return contrast("#1f1f1f", c) >= contrast("#ffffff", c) ? "#1f1f1f" : "#ffffff";
}

export function headColor(data, h) {
  const c = data.head_colors;
  return h < c.length ? c[h] : `hsl(${(h * 137.5) % 360}, 65%, 42%)`;
}

// An element with a class and, optionally, text (always textContent)
export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// A canvas sized in CSS pixels, sharp on high-density screens
export function sizeCanvas(cv, w, h) {
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
export function shown(s, max) {
  let t = String(s).replace(/[\u0000-\u001f\u007f]/g, (c) =>
    c === "\u007f" ? "\u2421" : String.fromCharCode(0x2400 + c.charCodeAt(0)))
    .replace(/[\p{Cf}\p{Zl}\p{Zp}\u0080-\u009f]/gu, (c) =>
      `<U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}>`);
  if (!t) t = "\u2423";
  return max && t.length > max ? t.slice(0, max - 1) + "\u2026" : t;
}

export function fontPx(px) {
  return `${px}px "Source Sans Pro", "Source Sans 3", sans-serif`;
}

export function download(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

// The widest label in px (capped) for a font
export function labelRoom(ctx, labels, px, cap) {
  ctx.font = fontPx(px);
  let w = 0;
  for (const t of labels) w = Math.max(w, ctx.measureText(t).width);
  return Math.ceil(Math.min(w, cap)) + 6;
}

// Text in a box of `width` px: the font shrinks (from px down to `least` px, 8 unless given)
// before the text is cut with "…"
export function fitText(ctx, text, width, px, least = 8) {
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
export function markPx(host, px) {
  for (const [k, v] of Object.entries(px)) host.dataset[k] = Number.isFinite(v) ? String(Math.round(v * 10) / 10) : "";
}
