// A sentence typed in the page's sentence box, drawn before the page reruns for it. The box is
// Streamlit's (the sidebar's, or presentation mode's one-line box); Streamlit commits it on
// Ctrl+Enter (Enter in the one-line box) and reruns the page's parts that read it. This holds
// that key press back, asks the server's route for the new sentence's maps (data.fast: its URL,
// the model, the pair and the box's key; explorer_route.py), draws them, and then hands the key
// press on to Streamlit: its rerun then brings the rest of the page (the masked word, the
// start card's answers, the address bar) and the same maps, which renderExplorer adopts without
// drawing them again. Held back first, because the rerun's work in the page (React drawing
// every element of the fragments) would otherwise hold up the answer's drawing behind it.
// Wherever the route declines (an empty, cut, long or unreadable text: the page says why), or
// takes over WAIT_MS, the key press goes on; a box left by a click commits as before. Listening
// starts with the first data that offers the route (data.fast: the Streamlit page, not a
// notebook) and ends at the first key press after the component has left the page.

const WAIT_MS = 1000;  // the most the route is waited for (300 students on 2 workers: p99 0.17-0.25 s)
// What the page's data adds to the maps (pages/explorer.py, component.py): kept from the page's
// last data when the route's maps are drawn (presentation mode's scale among them); the route
// names its sentence itself (sentence, tag, meta: explorer_cache.named)
const PAGES_OWN = ["scale", "present", "window", "initial_layer", "link", "filename", "fast"];
const HANDED = new WeakSet();  // the key presses handed on to Streamlit: not held again

// The sentence's identity: what the route's answer and the page's data both carry
export const sentenceKey = (d) => JSON.stringify(d.sentence ?? null);

export function listenForSentences(x, redraw) {
  const onKey = (e) => {
    if (!x.host.isConnected) { document.removeEventListener("keydown", onKey, true); return; }
    const f = x.data && x.data.fast, box = e.target;
    if (!f || HANDED.has(e) || e.key !== "Enter" || e.isComposing || e.shiftKey || !box.closest) return;
    const area = box instanceof HTMLTextAreaElement;
    if (!(area || box instanceof HTMLInputElement) || !box.closest(`.st-key-${f.box}`)) return;
    if (area && !(e.ctrlKey || e.metaKey)) return;  // Enter alone: a new line in a text area
    e.stopImmediatePropagation();  // before Streamlit's own listener (React's, on its root)
    const init = { key: e.key, code: e.code, ctrlKey: e.ctrlKey, metaKey: e.metaKey, altKey: e.altKey, bubbles: true, cancelable: true };
    let handed = false;
    const handOn = () => {
      if (handed) return;
      handed = true;
      const again = new KeyboardEvent("keydown", init);
      HANDED.add(again);
      box.dispatchEvent(again);
    };
    const timer = setTimeout(handOn, WAIT_MS);
    fetch(f.url, { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ model: f.model, text: box.value, pair: f.pair }) })
      .then((r) => (r.status === 200 ? r.json() : null))  // 204: the page's run answers
      .then((maps) => {
        if (maps && !handed && x.host.isConnected && sentenceKey(maps) !== x.drawnKey) {
          const own = Object.fromEntries(PAGES_OWN.filter((k) => k in x.data).map((k) => [k, x.data[k]]));
          redraw({ ...maps, ...own, impose: null });
        }
      })
      .catch(() => {})  // the rerun answers
      .finally(() => { clearTimeout(timer); handOn(); });
  };
  document.addEventListener("keydown", onKey, true);
}
