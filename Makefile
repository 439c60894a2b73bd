# Two commands do all set-up on a fresh machine, idempotently: `make demo` and `make test`.
PYTHON ?= python3.11
VENV := .venv
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.vlaudit-installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_HUB_DISABLE_TELEMETRY := 1

.PHONY: demo test test-fast lint docs docs-build setup clean bench

setup: $(STAMP)

# Re-runs only when the venv is missing or the pins/project metadata changed.
$(STAMP): pyproject.toml constraints.txt
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q -c constraints.txt torch==2.14.1 torchvision==0.29.1
	$(PIP) install -q -c constraints.txt -e ".[dev,ray,hf]"
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/vlaudit demo --out runs/demo

# ruff, then the import layering (pyproject.toml [tool.importlinter], docs/architecture.md), then the types
# (pyproject.toml [tool.mypy]: zero errors over vlaudit/)
lint: $(STAMP)
	$(VENV)/bin/ruff check vlaudit tests benchmarks
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

# The docs build strictly (a broken link, reference or docstring fails the test run).
docs-build: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir site

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve

# The suite runs on every core (pytest-xdist; WORKERS=0: in this one process): tests that share a heavy module
# fixture carry one xdist_group mark, and --dist loadgroup sends each group to one worker so it is built once.
WORKERS ?= auto
XDIST := -n $(WORKERS) --dist loadgroup

test: $(STAMP) lint docs-build
	$(VENV)/bin/python -m pytest $(XDIST)

# The suite without the tests marked slow (the demo, the docs build, Ray, the end-to-end scoring runs): the
# quick loop while editing. `make test` still runs everything.
test-fast: $(STAMP)
	$(VENV)/bin/python -m pytest $(XDIST) -m "not slow"

# Every benchmark at a quick scale (a few minutes), one table of figures against their goals; FULL=1: full scale.
bench: $(STAMP)
	$(VENV)/bin/python benchmarks/suite.py $(if $(FULL),--full,)

clean:
	rm -rf $(VENV) runs site .pytest_cache
