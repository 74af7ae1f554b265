"""The order `make test` hands tests to its two pytest-xdist workers: the costliest modules first.

The Makefile runs `pytest -n 2 --dist loadscope --no-loadscope-reorder`: a module goes whole to
one worker (its module fixtures, e.g. a model's tables or an nginx with its app workers, are built
once, not once per worker), and the modules go out in collection order. tests/conftest.py sorts
that order by COST below, longest first (the greedy longest-processing-time schedule): a long
module started last would leave the other core idle at the end of the run. Modules not listed
keep their collection order after the listed ones.

COST is a module's seconds (junit times summed per module, scaled from a run at load ~14 to a
quiet machine); only the order matters, so round figures do. Re-measure when a module gets
much slower or faster.
"""

COST = {  # tests/<path>: seconds
    "fuzz/test_fuzz_pages.py": 58,
    "browser/test_hostile_browser.py": 58,
    "browser/test_projector_fit.py": 40,
    "browser/test_proxy.py": 39,
    "fuzz/test_hostile_list.py": 32,
    "browser/test_explorer_browser.py": 29,
    "app/test_family_pages.py": 28,
    "browser/test_start_card_browser.py": 26,
    "browser/test_installed_wheel.py": 25,
    "model/test_one_head_shipped.py": 20,
    "model/test_syntax_ewt.py": 20,
    "browser/test_pairs_masks_corpus_browser.py": 19,
    "browser/test_lab_pages_browser.py": 18,
    "browser/test_jupyterlab.py": 15,
    "browser/test_head_view_browser.py": 15,
    "browser/test_deep_link.py": 13,
    "unit/test_packaging.py": 13,
    "browser/test_proxy_limits.py": 12,
    "browser/test_decoder_explorer_browser.py": 20,
    "app/test_decoder_pages.py": 15,
    "app/test_papers_page.py": 12,
    "browser/test_family_words_browser.py": 10,
    "browser/test_analysis_pages_browser.py": 10,
    "browser/test_what_heads_learn_browser.py": 7,
    "browser/test_one_head_browser.py": 7,
    "fuzz/test_fuzz_treebank.py": 3,
    "model/test_bert_base_shape.py": 3,
}


def by_cost(items, tests_dir) -> None:
    """Sort pytest's collected items in place: the modules of COST longest first; a stable sort,
    so a module's tests stay together and in their own order."""
    def cost(item):
        return COST.get(item.path.resolve().relative_to(tests_dir).as_posix(), 0)

    items.sort(key=lambda item: -cost(item))
