// The main figure's smallest text by kind, its unlabelled tokens, the page's text contrast and
// cut control labels (tests/browser/test_projector_fit.py reads this file). Argument:
// [keys of the main figure's elements, the least px]. Plotly: tick and legend texts are labels,
// titles and annotations titles, the rest (cell text, colour-bar ticks) numbers; the attention
// component reports its own (data-label-px, data-title-px, data-number-px, data-unlabelled).
(([keys, least]) => {
  const px = el => parseFloat(getComputedStyle(el).fontSize);
  const seen = el => { const r = el.getBoundingClientRect();
                       return r.width > 0 && r.height > 0 && el.textContent.trim() !== ''; };
  const out = {label: Infinity, title: Infinity, number: Infinity, unlabelled: 0,
               contrast: Infinity, cut: [], top: Infinity, small: [], faint: []};
  const note = (kind, v, el) => {
    out[kind] = Math.min(out[kind], v);
    if (v < least && out.small.length < 5) out.small.push(kind + ' ' + v + ' px: ' + el.textContent.slice(0, 30));
  };
  const rgb = c => (c.match(/[\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const ratio = (a, b) => (Math.max(lum(a), lum(b)) + 0.05) / (Math.min(lum(a), lum(b)) + 0.05);
  // the Explorer's parts are inside its component's shadow root (testkit.browser.FIND)
  const find = (sel) => document.querySelector(sel) || [...document.querySelectorAll('[data-view=explorer]')]
    .map(h => h.shadowRoot && h.shadowRoot.querySelector(sel)).find(Boolean) || null;
  for (const k of keys) {
    const box = find('.st-key-' + k);
    out.top = Math.min(out.top, box.getBoundingClientRect().y);
    const host = box.querySelector('[data-drawn]');
    if (host) {
      for (const [kind, a] of [['label', 'labelPx'], ['title', 'titlePx'], ['number', 'numberPx']])
        if (host.dataset[a]) note(kind, parseFloat(host.dataset[a]), host);
      out.unlabelled += parseInt(host.dataset.unlabelled || '0');
      if (host.dataset.contrast) out.contrast = Math.min(out.contrast, parseFloat(host.dataset.contrast));
      continue;
    }
    const gd = box.querySelector('.js-plotly-plot');
    if (gd) {
      for (const t of gd.querySelectorAll('svg text')) {
        if (!seen(t)) continue;
        const kind = t.closest('.xtick, .ytick, .legendtext, .legend') ? 'label'
          : t.closest('.gtitle, .g-xtitle, .g-ytitle, .annotation, .cbtitle, .legendtitletext')
            || t.classList.contains('gtitle') ? 'title' : 'number';
        note(kind, px(t), t);
      }
      for (const layer of gd.querySelectorAll('.xaxislayer-above, .yaxislayer-above')) {
        const x = layer.classList.contains('xaxislayer-above');
        const rs = [...layer.querySelectorAll('text')].filter(seen).map(t => t.getBoundingClientRect())
          .sort((a, b) => x ? a.left - b.left : a.top - b.top);
        for (let i = 1; i < rs.length; i++)
          if (x ? rs[i].left < rs[i - 1].right - 2 : rs[i].top < rs[i - 1].bottom - 2) out.unlabelled++;
      }
      continue;
    }
    for (const el of box.querySelectorAll('*'))
      if ([...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()) && seen(el))
        note('label', px(el), el);
  }
  const main = document.querySelector('[data-testid="stMain"]');
  // text on its own background: the first ancestor with an opaque one (the page is white)
  const under = el => {
    for (let e = el; e; e = e.parentElement) {
      const [r, g, b, a = 1] = rgb(getComputedStyle(e).backgroundColor);
      if (a > 0.5 && getComputedStyle(e).backgroundColor !== 'transparent') return [r, g, b];
    }
    return [255, 255, 255];
  };
  // every element of a caption or markdown block that holds text itself (its own colour)
  const blocks = '[data-testid="stCaptionContainer"], [data-testid="stMarkdownContainer"]';
  const texts = [...main.querySelectorAll(blocks)].flatMap(b => [b, ...b.querySelectorAll('*')])
    .filter(e => [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()));
  for (const el of texts) {
    if (!seen(el) || el.closest('[data-testid="stSlider"], [data-baseweb], button')) continue;
    let [r, g, b, a = 1] = rgb(getComputedStyle(el).color);
    const bg = under(el);
    for (let e = el; e; e = e.parentElement) a *= parseFloat(getComputedStyle(e).opacity);  // captions fade by opacity
    const ink = [r, g, b].map((v, i) => v * a + bg[i] * (1 - a));
    const c = ratio(ink, bg);
    out.contrast = Math.min(out.contrast, c);
    if (c < 4.5 && out.faint.length < 3) out.faint.push(`${c.toFixed(2)}: ${el.textContent.slice(0, 40)}`);
  }
  for (const el of main.querySelectorAll('[data-testid="stWidgetLabel"] p, button p, [data-testid="stTab"] p')) {
    if (seen(el) && el.scrollWidth > el.clientWidth + 1) out.cut.push(el.textContent.trim().slice(0, 30));
  }
  return out;
})
