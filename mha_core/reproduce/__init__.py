"""The papers' results, rerun on any model: each paper's measurement as a function of a model
and a corpus, with the published value beside ours and what differs said in one sentence.

    python -m mha_core.reproduce clark2019 --out DIR      # or: headscope reproduce ...
    rec = reproduce("clark2019", load_model(), read_corpus())
    rec["results"], rec["rows"]      # the numbers; (measure, ours, published) for the table

One module per paper, each with PAPER (its title, model, data, our defaults), PUBLISHED, run(model,
corpus) -> dict, rows(), differs() and figure(). A model without what a paper needs (an LM head)
gives a record with "skipped": the one sentence that says so.
"""

import time

from . import (
    abnar2020,
    clark2019,
    gu2024,
    kobayashi2020,
    kovaleva2019,
    michel2019,
    voita2019,
)
from .common import Unsupported, model_info
from .corpus import Corpus, CorpusError, read_corpus
from .report import environment

PAPERS = {m.PAPER.key: m for m in (clark2019, kobayashi2020, kovaleva2019, voita2019, gu2024,
                                   abnar2020, michel2019)}

__all__ = ["PAPERS", "Corpus", "CorpusError", "Unsupported", "read_corpus", "reproduce"]


def reproduce(name: str, model, corpus: Corpus, sentences: int | None = None,
              progress=None) -> dict:
    """One paper on the model and the corpus's first `sentences` sentences (default: the
    paper's): its record, JSON-ready. progress(done, total) after each sentence."""
    if name not in PAPERS:
        raise ValueError(f"no paper named {name!r}; the papers are {', '.join(PAPERS)}")
    module = PAPERS[name]
    p = module.PAPER
    used = corpus.head(p.default_sentences if sentences is None else sentences)
    rec = {"paper": name, "title": p.title, "citation": p.citation, "paper_model": p.model,
           "paper_data": p.data, "model": model_info(model),
           "corpus": {"name": corpus.name, "sentences": len(used.texts),
                      "format": "CoNLL-U" if corpus.treebank is not None else "plain text"}}
    start = time.perf_counter()
    try:
        results = module.run(model, used, progress)
    except Unsupported as e:
        return rec | {"skipped": str(e)}
    return rec | {"results": results, "rows": [list(r) for r in module.rows(results, model)],
                  "differs": module.differs(results, model),
                  "published": [{"measure": q.measure, "value": q.value}
                                for q in module.PUBLISHED],
                  "seconds": round(time.perf_counter() - start, 1),
                  "environment": environment(model)}
