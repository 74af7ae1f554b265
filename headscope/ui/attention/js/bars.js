// The focus token's bars (the Explorer). For each head of one layer a stacked bar of how the focus
// token's attention splits over the keys, one segment per word bottom to top (a word's colour as in
// the focus grid; "other keys" grey), a 0..1 axis and the keys' legend at the right; hover reads
// "H3 → key: 0.123". data: values (S, H), names (S, null = other), colors.

import { decode, el, fitText, fontPx, labelRoom, markPx, shown, sizeCanvas } from "./core.js";
import { PRESENT_PX, projectorFactor } from "./grid.js";
import { exportPng } from "./main.js";

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

export function drawBars(b) {
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

export function setupBars(b) {
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

export function renderBars(b) {
  b.values = decode(b.data.values);
  b.names = b.data.names.map((n) => (n === null ? "other" : shown(n, 24)));
  drawBars(b);
  b.tip.hidden = true;
  const g = b.layout;
  b.host.dataset.keys = JSON.stringify(b.data.names);
  b.host.dataset.geometry = JSON.stringify({ left: g.left, top: g.top, slot: g.slot, h: g.plotH, W: g.W });
}
