// A decoder's maps (data.causal): token i sees only tokens j <= i, so a cell above the diagonal
// (key after query) is not attendable: drawn neutral grey and hatched, never as zero weight, with
// its own legend swatch and hover. Shown maps keep the tokens in order (a window cuts rows and
// columns at the same place, whole words merge neighbouring pieces), so "above" is k > q there too.

import { fontPx } from "./core.js";

export const BLOCKED_RGB = [226, 226, 226];  // the cell: a neutral grey (the scale is blue, even its near-white 0)
const BLOCKED_LINE = "#aaaaaa";  // its hatch, neutral too

// Whether shown cell (q, k) of a map is not attendable
export function isBlocked(d, q, k) {
  return !!d.causal && k > q;
}

// The hatch over a map's upper triangle (m: a layout map of side m.size, G cells a side): one
// staircase path as the clip, diagonal lines every few px inside it
export function hatchBlocked(ctx, m, G) {
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
export function blockedRoom(d, px) {
  return d.causal ? Math.ceil(px * 1.9) : 0;
}

// The legend's swatch for not-attendable cells, on its own line under the colour bar's numbers
// (b: the colour bar's box; px: the legend's text size; W: the canvas's width)
export function blockedLegend(ctx, b, px, W) {
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
export function blockedTip(q, k) {
  return `${q} \u2192 ${k}: not attendable:\n\u201c${q}\u201d cannot see later tokens`;
}
