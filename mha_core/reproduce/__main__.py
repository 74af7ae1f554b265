"""python -m mha_core.reproduce NAME [--model SOURCE] [--corpus FILE] [--sentences N]
[--json FILE] [--out DIR] [--device D] [--threads N]: rerun a paper's measurement (or all of
them) and write NAME.json, NAME.md, NAME.png and NAME.svg into DIR (also `headscope
reproduce`)."""

import argparse
import sys
from pathlib import Path

import torch

from ..api import add_device_argument, load_model
from ..loading import CheckpointError
from . import PAPERS, reproduce
from .corpus import MAX_SENTENCES, MAX_TOKENS, CorpusError, read_corpus
from .report import markdown, to_json, write


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="headscope reproduce", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Rerun a paper's attention measurement on a model and write its numbers "
                    "(JSON), a figure (PNG, SVG) and a markdown table beside the published "
                    "values.\n\npapers:\n" + "".join(
                        f"  {k:<14}{m.PAPER.title}\n" for k, m in PAPERS.items())
                    + "  all           every one of them")
    ap.add_argument("name", metavar="NAME", choices=[*PAPERS, "all"],
                    help=f"{', '.join(PAPERS)} or all")
    ap.add_argument("--model", default=None,
                    help="a checkpoint directory, a .gguf file, bundled or bundled-decoder "
                         "(default: each paper's own; the bundled encoder, or the bundled "
                         "decoder where a paper needs a language-model head)")
    ap.add_argument("--corpus", default=None,
                    help="plain text (a sentence a line) or CoNLL-U (default: the bundled "
                         "headscope-sample.conllu, 153 sentences)")
    ap.add_argument("--sentences", type=int, default=None,
                    help=f"read the first N sentences (default: each paper's own; at most "
                         f"{MAX_SENTENCES:,}; sentences over {MAX_TOKENS} tokens are skipped)")
    ap.add_argument("--json", default=None, help="also write the record(s) to this file")
    ap.add_argument("--out", default="reproductions",
                    help="the folder for NAME.json, .md, .png, .svg (default: reproductions)")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads on the CPU (default 1: steadier on a shared machine, "
                         "where more threads wait on each other)")
    add_device_argument(ap)
    return ap


def main(argv=None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if args.sentences is not None and not 1 <= args.sentences <= MAX_SENTENCES:
        ap.error(f"--sentences must be between 1 and {MAX_SENTENCES:,}")
    if args.threads < 1:
        ap.error("--threads must be at least 1")
    torch.set_num_threads(args.threads)
    try:
        corpus = read_corpus(args.corpus)
    except CorpusError as e:
        ap.error(str(e))
    names = list(PAPERS) if args.name == "all" else [args.name]
    models, records = {}, {}
    for name in names:
        module = PAPERS[name]
        source = args.model if args.model is not None else module.PAPER.default_model
        if source not in models:
            try:
                models[source] = load_model(source, device=args.device)
            except (CheckpointError, ValueError, OSError) as e:
                ap.error(str(e))
        model = models[source]
        print(f"{name}: {model.name} on {corpus.name} …", file=sys.stderr, flush=True)
        try:
            rec = reproduce(name, model, corpus, args.sentences)
        except ValueError as e:  # a corpus that leaves no usable sentence, say
            print(f"headscope reproduce {name}: {e}", file=sys.stderr)
            if len(names) == 1:
                return 1
            continue
        records[name] = write(module, rec, Path(args.out))
        if "skipped" in rec:
            print(f"headscope reproduce {name}: {rec['skipped']}", file=sys.stderr)
        else:
            print(markdown(records[name]))
    if args.json:
        Path(args.json).write_text(to_json(records[names[0]] if len(names) == 1 and records
                                           else records), encoding="utf-8")
    if len(names) == 1 and "skipped" in records.get(names[0], {}):
        return 1
    print(f"wrote {len(records)} report(s) to {args.out}/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
