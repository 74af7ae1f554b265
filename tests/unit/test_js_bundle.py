"""The attention views' JavaScript is one drawing core shared by two hosts, not two copies: both
modules are the same core files joined in order plus one thin adapter, each with one default
export; nothing in them loads anything from the network."""

import json
import re

from headscope.ui.attention import bundle


def test_both_hosts_share_the_one_core_and_add_only_an_adapter():
    core = bundle.core_js()
    for f in bundle.CORE_FILES:
        assert (bundle.HERE / f).read_text(encoding="utf-8") in core
    st, aw = bundle.streamlit_js(), bundle.anywidget_js()
    assert st.startswith(core) and core in aw
    for module, adapter in ((st, "host_streamlit.js"), (aw, "host_anywidget.js")):
        css = f"const HS_CSS = {json.dumps(bundle.css())};\n"  # anywidget's: the CSS inside
        rest = module.replace(core, "").replace(css, "")
        assert (bundle.HERE / adapter).read_text(encoding="utf-8") in rest
        assert len(rest) < 4000  # a thin adapter, not a copy
        assert len(re.findall(r"^export default", module, flags=re.M)) == 1
    assert "export default" not in core  # the core only defines draw(component)


def test_no_network_and_no_markup_from_data():
    for module in (bundle.streamlit_js(), bundle.anywidget_js()):
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", module)  # no CDN, no fetch
        assert "import(" not in module and not re.search(r"^import ", module, flags=re.M)
        assert "innerHTML" not in module and "insertAdjacentHTML" not in module
