// The focus grid (the Explorer). Where one query token attends in every head of every layer: an L x
// H grid of cells coloured by the top key (the token's colour, as in the focus bars) and labelled
// with it; hover reads "L2 H3 → key: weight"; a click opens that layer and head in the Explorer (a
// trigger back to Python).

import { contrast, decode, el, fitText, fontPx, inkOn, markPx, shown, sizeCanvas } from "./core.js";
import { PRESENT_PX, projectorFactor } from "./grid.js";

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

export function setupFocus(f) {
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

export function renderFocus(f) {
  f.top = decode(f.data.top);
  f.weight = decode(f.data.weight);
  drawFocus(f);
  f.tip.hidden = true;
  f.host.dataset.geometry = JSON.stringify({ top: f.layout.top, left: f.layout.lab, w: f.layout.cw, h: f.layout.ch });
}
