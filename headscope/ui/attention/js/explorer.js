// The Explorer as one view (data.view "explorer", explorer_payload.py): its controls
// (excontrols.js) and four parts drawn by the existing views: the heads of one layer
// (grid), where the focus tokens look in every head of every layer (focus), the enlarged head (big
// grid) and the focus tokens' bars. Every view change is drawn here from the maps sent once per
// sentence: nothing goes to the server but a click that masks a token, and, for a text longer
// than data.local tokens, a layer or focus the page has not sent (the wait is shown).

import { CANVAS_STATE, el, shown } from "./core.js";
import { renderGrid } from "./gridui.js";
import { renderFocus } from "./focus.js";
import { renderBars } from "./bars.js";
import { argmax, exSource, focusRows, keySegments, layerMaps, resolveFocus, shownView, tokenColors, topKeys, wordFocus } from "./explore.js";
import { exCaptions, exSyncControls, exWriteLink, setupExplorerControls } from "./excontrols.js";
import { listenForSentences, sentenceKey } from "./sentence.js";
import { createState, draw } from "./main.js";

const EX_PARTS = [["grid", "ex_grid", "grid"], ["focus", "ex_focus_grid", "focus"],
  ["big", "ex_big", "grid"], ["bars", "ex_focus_bars", "bars"]];

export function setupExplorer(x) {
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

// A sentence drawn from the route before its rerun (sentence.js): kept to know the rerun's data
// for it when it comes; data-fast says "drawn" until then, and "adopted" after
function listenOnce(x) {
  if (x.listening || !x.data.fast) return;
  x.listening = true;
  listenForSentences(x, (data) => {
    draw({ ...x.component, data });
    x.fast = { key: x.drawnKey, data };
    x.host.dataset.fast = "drawn";
  });
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
export function renderExplorer(x) {
  const d = x.data, old = x.view, prevLabels = x.sv ? x.sv.labels : null, fast = x.fast;
  x.fast = null;
  const adopted = !!fast && sameMaps(x, d, fast);
  x.host.dataset.fast = adopted ? "adopted" : "";
  listenOnce(x);
  if (adopted) return;  // the rerun's maps, drawn from the route already
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
  x.drawnKey = sentenceKey(d);
}

// Whether the page's data is for the sentence the route's answer drew (sentence.js), drawn the
// same way: then nothing is drawn again (the rest of the data only names and labels it)
function sameMaps(x, d, fast) {
  const f = fast.data;
  return sentenceKey(d) === fast.key && !(d.impose && d.impose.seq !== x.seq) && d.window === f.window
    && d.scale === f.scale && !!d.present === !!f.present && d.initial_layer === f.initial_layer;
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
export function exSet(x, change) {
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
export function exDraw(x, fresh) {
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

export function exStem(v) {
  return `attention_L${v.layer + 1}_H${v.head + 1}${v.norm ? "_norm" : ""}`;
}

// The focus tokens as the titles say them: \u201cwith\u201d, or \u201cwith\u201d + \u201ca\u201d (mean)
export function exFocusName(sv, focus) {
  const q = focus.map((f) => `\u201c${shown(sv.labels[f], 20)}\u201d`);
  return q.length === 1 ? q[0] : `${q.slice(0, 4).join(" + ")}${q.length > 4 ? ` + ${q.length - 4} more` : ""} (mean)`;
}
