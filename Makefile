# Two commands matter: `make demo` and `make test`. Both create .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
STAMP_DEMO := $(VENV)/.installed

.PHONY: demo test lint typecheck unit bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP_DEMO): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@ $(STAMP_DEMO)

demo: $(STAMP_DEMO)
	$(BIN)/tether demo $(DEMO_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

# The AGENT-HOOKS conformance kit (agent-hooks-sdk's pytest plugin) runs on its own,
# against tether's harness: 71 vectors pass, the 4 incremental_output ones are skipped.
CTK := tests/conformance/agent_hooks
unit: $(STAMP)
	$(BIN)/pytest -q --ignore=$(CTK)
	$(BIN)/pytest -q -p agent_hooks_ctk --agent-hooks-harness=ctk_harness:TetherHarness $(CTK)

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/python bench/overhead.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
