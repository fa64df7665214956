# The two Quickstart commands of the README. Both are idempotent: they create .venv when it is
# missing and reinstall only when pyproject.toml or constraints.txt changed. pip installs the
# exact versions of constraints.txt (pyproject.toml states ranges; this pins what is tested).
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
CONSTRAINTS := constraints.txt

# The first of these that runs and is Python 3.11 or newer (a pyenv shim for a version that is
# not selected exists but fails to run, so each is tried, not just looked up).
PYTHON_CANDIDATES := python3.11 python3.12 python3.13 python3
PYTHON ?= $(shell for p in $(PYTHON_CANDIDATES); do \
	$$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1 && { echo $$p; break; }; \
	done)

# What `make train` trains: override on the command line, e.g. make train ENV=gym:CartPole-v1
PRESET ?= gdi-i3
ENV ?= minatar:breakout
FRAMES ?= 1000000

# What ruff checks (docs/examples: the site's worked examples, run by tests/docs).
LINTED := gdi tests benchmarks scripts docs/examples

.PHONY: train test test-kernels lint setup docs serve-docs clean-venv

$(BIN)/python:
	@if [ -z "$(PYTHON)" ]; then \
		echo "error: no Python 3.11 or newer found (tried $(PYTHON_CANDIDATES))." >&2; \
		echo "Install Python 3.11, 3.12 or 3.13 (python.org, your package manager, or pyenv), then run" >&2; \
		echo "make again, or point at one: make PYTHON=/path/to/python3.11" >&2; exit 1; fi
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
		echo "error: PYTHON=$(PYTHON) does not run or is not Python 3.11 or newer" >&2; exit 1; }
	@echo "using $(PYTHON) ($$($(PYTHON) --version 2>&1))"
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -c $(CONSTRAINTS) -e ".[dev,video,docs]"
	touch $(STAMP)

setup: $(STAMP)

train: $(STAMP)
	$(BIN)/gdi train --preset $(PRESET) --env $(ENV) --frames $(FRAMES)

# The suite includes tests/docs/test_site.py, which builds the documentation site strictly: a
# broken link or API reference fails `make test` (and so CI).
test: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/python -m pytest -n 2 -q

# The suite once per CPU kernel set PyTorch can pick here (ATEN_CPU_CAPABILITY): default and
# avx2, and avx512 where the CPU has it. Convolutions (oneDNN), matmuls (MKL) and NumPy pick
# their instructions apart from ATEN_CPU_CAPABILITY, so on an AVX-512 CPU a last pass limits
# all of them to AVX2, as an AVX2-only CPU runs (the only setting that reproduced a tolerance
# failure seen on such a CPU). The tests' float comparisons allow what rounding explains
# (tests/tolerance.py), so every pass must pass.
HAS_AVX512 := $(shell grep -m1 -o avx512f /proc/cpuinfo 2>/dev/null)
KERNELS := default avx2 $(if $(HAS_AVX512),avx512)
AVX2_ONLY := ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 \
	NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR"
test-kernels: $(STAMP)
	@for k in $(KERNELS); do echo "== ATEN_CPU_CAPABILITY=$$k"; \
		ATEN_CPU_CAPABILITY=$$k $(BIN)/python -m pytest -n 2 -q || exit 1; done
	@if [ -n "$(HAS_AVX512)" ]; then echo "== as on an AVX2-only CPU (oneDNN, MKL and NumPy limited to AVX2 too)"; \
		$(AVX2_ONLY) $(BIN)/python -m pytest -n 2 -q; fi

lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)

# The documentation site (mkdocs.yml) into site/; --strict: every warning is an error.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The site on http://127.0.0.1:8000, rebuilt on every change of docs/, gdi/ or mkdocs.yml.
serve-docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --watch gdi --watch scripts/mkdocs_hooks.py

clean-venv:
	rm -rf $(VENV)
