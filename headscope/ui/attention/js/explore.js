// The Explorer's numbers, derived in the browser from every layer's token-level maps (Python:
// explorer_payload.py): the view the switches choose (whole words, hidden [CLS]/[SEP], by norm),
// the mean of the heads, entropies, the default head, the rows of one or several focus tokens, the
// bars' segments and the summed head's summary. These live only here: tests/unit/test_explore_js.py
// checks them against numpy on the model's own maps and transformers' projections. No DOM here.

import { decode, shown } from "./core.js";

// The decoded payload: maps (L', H + 1, T, T) with the summed head last, norm shares (L', H, T, T),
// their row sums (L', H, T); long texts: the focus tokens' rows in every layer (frows*)
export function exSource(d) {
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
export function shownView(d, words, hide) {
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
export function layerMaps(src, sv, layer, byNorm) {
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
export function wordFocus(lm, sv, H) {
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

export function argmax(xs) {
  let b = 0;
  for (let i = 1; i < xs.length; i++) if (xs[i] > xs[b]) b = i;
  return b;
}

// The focus tokens' combined rows in every head of every layer: the mean of their shown rows
// (each sums to 1, so the mean does: the same rule as a word's pieces). (L, H, G) with NaN rows
// where a layer was not sent; byNorm: the norm shares
export function focusRows(src, sv, focus, byNorm) {
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
export function topKeys(rows, L, H, G) {
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
export function tokenColors(d, labels, special) {
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
export function keySegments(d, rows, sv, colors, minWeight = 0.05) {
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
export function mapSummary(maps, off, G) {
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
export function resolveFocus(raw, labels) {
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
export function focusParam(labels, focus) {
  if (focus.length === 1) {
    const r = resolveFocus(labels[focus[0]], labels);
    return r && r.length === 1 && r[0] === focus[0] ? String(labels[focus[0]]) : `#${focus[0]}`;
  }
  return focus.map((f) => `#${f}`).join(",");
}
