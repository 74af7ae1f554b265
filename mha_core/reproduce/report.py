"""What a reproduction writes: its numbers as JSON, a figure (PNG and SVG) and a short markdown
table with ours beside the published value, the paper's model and data named and one sentence
on what differs.

Figures are drawn on matplotlib's Figure with the Agg canvas directly: no pyplot, no global
backend is changed. Text a user supplied (a model path, a file name) reaches a figure as plain
text ($ escaped, so matplotlib reads no math) and the markdown with | and < escaped.
"""

import datetime
import json
import os
import textwrap
from pathlib import Path

import torch

FIGSIZE = {1: (6.4, 4.2), 2: (11, 4.2), 3: (13, 4.2)}


def environment(model) -> dict:
    """Where and when the numbers were made."""
    return {"date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "device": str(model.device), "torch_threads": torch.get_num_threads(),
            "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
            else os.cpu_count()}


def md_cell(text) -> str:
    """Text for a markdown table cell or line: one line, | escaped, < as &lt; (no HTML)."""
    return " ".join(str(text).split()).replace("|", "\\|").replace("<", "&lt;")


def markdown(rec: dict) -> str:
    """The record as a short markdown section."""
    head = f"### {rec['title']} ({rec['citation']})\n\n"
    if "skipped" in rec:
        return head + md_cell(rec["skipped"]) + "\n"
    m, c = rec["model"], rec["corpus"]
    lines = [f"- **Paper:** {md_cell(rec['paper_model'])}; {md_cell(rec['paper_data'])}.",
             f"- **Ours:** {md_cell(m['name'])} ({md_cell(m['family'])}, {m['layers']} layers × "
             f"{m['heads']} heads); {rec['results']['sentences']} sentences of "
             f"{md_cell(c['name'])} (of {c['sentences']} read; each alone); "
             f"{rec['seconds']:.0f} s on {rec['environment']['device']}, "
             f"{rec['environment']['date']}.",
             f"- **What differs:** {md_cell(rec['differs'])}", "",
             "| measure | ours | published |", "|---|---|---|"]
    lines += [f"| {md_cell(a)} | {md_cell(b)} | {md_cell(c)} |" for a, b, c in rec["rows"]]
    files = rec.get("files", {})
    if files:
        lines += ["", "Files: " + ", ".join(f"`{Path(p).name}`" for p in files.values()) + "."]
    return head + "\n".join(lines) + "\n"


def plain(text: str) -> str:
    """User text for a matplotlib label: $ escaped (no math), one line."""
    return " ".join(str(text).split()).replace("$", r"\$")


def draw(module, rec: dict):
    """The paper's figure of a record: a matplotlib Figure (Agg canvas)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=FIGSIZE[module.PANELS], layout="constrained")
    FigureCanvasAgg(fig)
    module.figure(rec["results"], fig)
    ours = (f"{rec['model']['name']}, {rec['results']['sentences']} sentences of "
            f"{rec['corpus']['name']}")
    width = 60 if module.PANELS == 1 else 110  # characters a line holds
    fig.suptitle(rec["title"].split(",")[0] + "\n" + textwrap.shorten(plain(ours), width),
                 fontsize="medium")
    return fig


def write(module, rec: dict, out_dir) -> dict:
    """NAME.json, NAME.md, NAME.png and NAME.svg in out_dir: the record with their paths
    ("files"). A skipped paper gets its JSON and markdown only."""
    import matplotlib

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / rec["paper"]
    files = {"json": str(stem.with_suffix(".json")), "markdown": str(stem.with_suffix(".md"))}
    if "skipped" not in rec:
        fig = draw(module, rec)
        files["png"], files["svg"] = str(stem.with_suffix(".png")), str(stem.with_suffix(".svg"))
        with matplotlib.rc_context({"svg.hashsalt": "headscope"}):
            fig.savefig(files["png"], dpi=100, pil_kwargs={"optimize": True})
            fig.savefig(files["svg"], metadata={"Date": None})
    rec = rec | {"files": files}
    Path(files["json"]).write_text(to_json(rec), encoding="utf-8")
    Path(files["markdown"]).write_text(markdown(rec), encoding="utf-8")
    return rec


def to_json(obj) -> str:
    """Strict JSON (a NaN is an error: the records hold None where a number does not apply)."""
    return json.dumps(obj, indent=1, ensure_ascii=False, allow_nan=False)
