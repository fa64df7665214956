# The two Quickstart commands of the README. Both are idempotent: they create .venv when it is
# missing and reinstall only when pyproject.toml changed.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev

# What `make train` trains: override on the command line, e.g. make train ENV=gym:CartPole-v1
PRESET ?= gdi-i3
ENV ?= minatar:breakout
FRAMES ?= 1000000

.PHONY: train test lint setup clean-venv

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found; install Python 3.11 or run make PYTHON=/path/to/python3.11" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

train: $(STAMP)
	$(BIN)/gdi train --preset $(PRESET) --env $(ENV) --frames $(FRAMES)

test: $(STAMP)
	$(BIN)/ruff check gdi tests benchmarks scripts
	$(BIN)/python -m pytest -n 2 -q

lint: $(STAMP)
	$(BIN)/ruff check gdi tests benchmarks scripts
