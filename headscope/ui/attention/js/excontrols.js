// The Explorer's controls (explorer.js), native elements with accessible names: the layer slider,
// the head select, the switches, the focus tokens (a click picks one, shift-click or
// Shift+arrow adds; arrows move), the token window, Copy link and the enlarged head's CSV/JSON.
// The view they show is announced (a status region) and kept in the address bar.

import { download, el, shown } from "./core.js";
import { isBlocked } from "./causal.js";
import { focusParam, layerMaps, mapSummary } from "./explore.js";
import { exDraw, exFocusName, exSet, exStem } from "./explorer.js";

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

export function setupExplorerControls(x) {
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
export function exSyncControls(x) {
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
export function exCaptions(x, sv, lm) {
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

export function exWriteLink(x) {
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

export function renderRecall(r) {
  let seen = null;
  try { seen = JSON.parse(sessionStorage.getItem(EX_STORE) || "null"); } catch { seen = null; }
  if (seen && seen.stamp !== r.data.stamp && r.sentStamp !== seen.stamp) {
    r.sentStamp = seen.stamp;
    r.component.setTriggerValue("seen", seen);
  }
}
