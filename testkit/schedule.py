"""The order `make test` hands tests to its two pytest-xdist workers: the costliest modules first.

The Makefile runs `pytest -n 2 --dist loadscope --no-loadscope-reorder`: a module goes whole to
one worker (its module fixtures, e.g. a model's tables or an nginx with its app workers, are built
once, not once per worker), and the modules go out in collection order. tests/conftest.py sorts
that order by COST below, longest first (the greedy longest-processing-time schedule): a long
module started last would leave the other core idle at the end of the run. Modules not listed
keep their collection order after the listed ones.

COST is a module's seconds on one quiet core (`pytest --durations=0`, summed per module); only
the order matters, so round figures do. Re-measure when a module gets much slower or faster.
"""

COST = {  # tests/<path>: seconds
    "browser/test_hostile_browser.py": 55,
    "fuzz/test_hostile_list.py": 48,
    "model/test_corpus_budget.py": 47,
    "fuzz/test_fuzz_pages.py": 36,
    "model/test_syntax_ewt.py": 30,
    "browser/test_projector_fit.py": 30,
    "browser/test_installed_wheel.py": 25,
    "model/test_one_head_shipped.py": 25,
    "model/test_bert_base_shape.py": 22,
    "browser/test_pairs_masks_corpus_browser.py": 22,
    "browser/test_proxy.py": 21,
    "browser/test_explorer_browser.py": 18,
    "app/test_family_pages.py": 13,
    "browser/test_lab_pages_browser.py": 9,
    "browser/test_jupyterlab.py": 8,
    "browser/test_head_view_browser.py": 8,
    "browser/test_deep_link.py": 8,
    "browser/test_analysis_pages_browser.py": 8,
    "browser/test_family_words_browser.py": 7,
    "browser/test_what_heads_learn_browser.py": 6,
    "app/test_what_heads_learn_page.py": 5,
    "browser/test_proxy_limits.py": 5,
}


def by_cost(items, tests_dir) -> None:
    """Sort pytest's collected items in place: the modules of COST longest first; a stable sort,
    so a module's tests stay together and in their own order."""
    def cost(item):
        return COST.get(item.path.resolve().relative_to(tests_dir).as_posix(), 0)

    items.sort(key=lambda item: -cost(item))
