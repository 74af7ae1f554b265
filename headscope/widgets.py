"""The attention views in a notebook (anywidget: JupyterLab, Notebook 7, VS Code, marimo),
offline: the module is the Streamlit component's own drawing core with the anywidget adapter
(headscope.ui.attention.bundle), the maps travel as binary buffers.

    import headscope
    headscope.head_view("The cat sat on the mat.")            # the bundled model
    headscope.model_view(outputs.attentions, tokens)          # bertviz's inputs
    v = headscope.heads(result, layer=3); v.save_html("layer4.html")
"""

import base64

import anywidget
import traitlets

from headscope.ui.attention import bundle

from . import view_input


def _binary(x):
    """A payload with every packed array's base64 replaced by raw bytes (a binary buffer)."""
    if isinstance(x, dict):
        if "b64" in x and "dtype" in x:
            rest = {k: v for k, v in x.items() if k != "b64"}
            return rest | {"bytes": base64.b64decode(x["b64"])}
        return {k: _binary(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_binary(v) for v in x]
    return x


class View(anywidget.AnyWidget):
    """One attention view. payload: what the component draws (binary arrays); view: the head
    view's state from the browser ({mode, layer, heads, focus}); last_event: the last click
    ({"event": "head"|"token"|"cell", "value": ...})."""

    _esm = bundle.anywidget_js()
    css = traitlets.Unicode(bundle.css()).tag(sync=True)  # for its shadow root (host_anywidget.js)
    payload = traitlets.Dict().tag(sync=True)
    view = traitlets.Dict().tag(sync=True)

    def __init__(self, payload: dict, **kwargs):
        self._plain = payload  # base64 arrays: what save_html embeds
        super().__init__(payload=_binary(payload), **kwargs)
        self.last_event = None
        self.on_msg(self._on_msg)

    def _on_msg(self, _widget, content, _buffers):
        if isinstance(content, dict) and "event" in content:
            self.last_event = content

    def save_html(self, path) -> str:
        """Write this view as one self-contained HTML file (opens from file://, no network)."""
        from .export import write_html

        return write_html(self._plain, path)


def head_view(attention, tokens=None, model=None, layer: int = 0, heads=None,
              text_pair=None) -> View:
    """bertviz's head view: lines from each token to the tokens it attends to, one colour per
    head. attention: a text, an AttentionResult, or transformers' attention tuple (with tokens).
    layer, heads: 0-based, as bertviz."""
    a = view_input.read(attention, tokens, model, text_pair)
    return View(view_input.lines(a, "head", layer, heads))


def model_view(attention, tokens=None, model=None, text_pair=None) -> View:
    """Every layer x head as a small line view (bertviz's model view)."""
    return View(view_input.lines(view_input.read(attention, tokens, model, text_pair), "model"))


def heads(attention, tokens=None, model=None, layer: int = 0, text_pair=None) -> View:
    """The Explorer's grid of one layer (0-based): every head's map, the summed head and the
    mean of the heads. Hover a cell to see its row and column in every map; click a head to
    enlarge it."""
    return View(view_input.grid(view_input.read(attention, tokens, model, text_pair), layer))
