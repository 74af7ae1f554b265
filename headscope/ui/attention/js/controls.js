// The head view's and model view's controls and pointer handling. Built once per host element (text
// through textContent only); every change redraws locally, and the changes the link keeps (view,
// layer, heads, pinned token) go back to Python as one state value. Pinning a token is the
// browser's alone (no rerun: the pin reaches the link with the next change); masking it is its own
// button, which runs the page's masked-word section.

import { el, headColor } from "./core.js";
import { SEGMENT_FILTERS, drawLines, headHit, linesData, modelHit } from "./lines.js";
import { exportPng, exportSvg } from "./main.js";

function report(v) {
  v.view.seq = (v.view.seq || 0) + 1;
  const { mode, layer, heads, seq } = v.view;
  v.component.setStateValue("view", { mode, layer, heads, seq, focus: v.pinned ? { ...v.pinned } : null });
}

export function setupLines(v) {
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
export function paint(v) {
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

export function renderLines(v) {
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
