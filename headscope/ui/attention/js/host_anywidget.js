// The notebook host (anywidget: JupyterLab, Notebook 7, VS Code, marimo) and the standalone
// HTML page (a stand-in model). The model's "payload" trait is the data; its arrays arrive as
// binary buffers (DataView) under "bytes" and become Uint8Arrays for decode(). The view is drawn
// in a shadow root, as in Streamlit, so the component's CSS comes with the model: its "css"
// trait (headscope.widgets.View; the standalone page's stand-in model holds it too).

import { el } from "./core.js";
import { draw } from "./main.js";

function fromBuffers(x) {
  if (x instanceof DataView) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  if (Array.isArray(x)) return x.map(fromBuffers);
  if (x && typeof x === "object" && !ArrayBuffer.isView(x)) {
    const o = {};
    for (const [k, v] of Object.entries(x)) o[k] = fromBuffers(v);
    return o;
  }
  return x;
}

function render({ model, el: parent }) {
  const host = el("div", "hs-host");
  const shadow = host.attachShadow({ mode: "open" });
  const style = document.createElement("style");
  style.textContent = model.get("css") || "";
  shadow.append(style);
  parent.append(host);
  let data = null;
  const component = {
    parentElement: shadow,
    // the head view's state (mode, layer, heads, pinned token) goes back as the "view" trait
    setStateValue(name, value) {
      if (name !== "view") return;
      model.set("view", value);
      model.save_changes();
    },
    // a click: a head of the grid is enlarged here (the app does it on the server); every
    // click also goes to Python as a custom message {event, value}
    setTriggerValue(name, value) {
      if (name === "head" && data && data.view === "grid") {
        data = { ...data, selected: value };
        draw({ ...component, data });
      }
      model.send({ event: name, value });
    },
  };
  const update = () => {
    data = fromBuffers(model.get("payload"));
    if (data && data.tokens) draw({ ...component, data });
  };
  update();
  model.on("change:payload", update);
  return () => model.off("change:payload", update);
}

export default { render };
