"""Where the app's files lie. A checkout keeps them at the repository's top level (pages/, docs/,
deploy/); an installed wheel carries the same folders inside this package (headscope/pages,
headscope/guide, headscope/deploy; pyproject.toml maps them). The wheel's copy is looked for
first, so a checkout's folders are never mistaken for another installed package's."""

from pathlib import Path

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent  # the repository, in a checkout


def _here_or_checkout(in_wheel: str, in_checkout: str) -> Path:
    wheel = HERE / in_wheel
    return wheel if wheel.is_dir() else CHECKOUT / in_checkout


# Streamlit's main script: alone in its folder, which Streamlit puts on sys.path, and with no
# pages/ folder beside it (that would switch on Streamlit's legacy multipage mode)
FRAME = HERE / "frame" / "app.py"
# What `streamlit run` serves: the frame as an ASGI app (st.App), with the app's HTTP route
SERVER = HERE / "frame" / "headscope_asgi.py"
PAGES = _here_or_checkout("pages", "pages")  # one script per page (st.navigation lists them)
GUIDE = _here_or_checkout("guide", "docs")  # teaching.md and glossary.md (About, Glossary)
DEPLOY = _here_or_checkout("deploy", "deploy")  # serve_many.py and its nginx template


def page_file(name: str) -> str:
    """A page's script, as st.page_link and st.switch_page take it."""
    return str(PAGES / f"{name}.py")
