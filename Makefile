# Two commands matter: `make demo` and `make test`. Both create .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
STAMP_DEMO := $(VENV)/.installed
# Arize Phoenix, the real tracing backend tests/observe/test_phoenix.py exports to, in its own
# venv: its dependencies clash with the dev pins. Keep PIN equal in tests/support/phoenix_backend.py.
PHOENIX_VENV := .venv-phoenix
PHOENIX_PIN := arize-phoenix==20.26.1
PHOENIX_STAMP := $(PHOENIX_VENV)/.installed-$(PHOENIX_PIN)

.PHONY: demo test lint typecheck unit browser phoenix bench clean

$(BIN)/python:
	@echo "make: creating the virtualenv $(VENV)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP_DEMO): pyproject.toml | $(BIN)/python
	@echo "make: installing tether into $(VENV) (the first time takes a minute)"
	$(BIN)/pip install --quiet -e .
	touch $@

$(STAMP): pyproject.toml | $(BIN)/python
	@echo "make: installing tether with the dev extras into $(VENV) (the first time takes a few minutes)"
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@ $(STAMP_DEMO)

# make demo DEMO_ARGS=--approve (or --deny) answers every approval; without a terminal and
# without a flag the demo denies. Its store stays in ./tether-demo/ for the commands it prints.
demo: $(STAMP_DEMO)
	$(BIN)/tether demo $(DEMO_ARGS)

lint: $(STAMP)
	@echo "make: lint (ruff)"
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	@echo "make: type check (mypy, strict)"
	$(BIN)/mypy

# The AGENT-HOOKS conformance kit (agent-hooks-sdk's pytest plugin) runs on its own,
# against tether's harness: 71 vectors pass, the 4 incremental_output ones are skipped.
CTK := tests/conformance/agent_hooks
unit: $(STAMP) browser phoenix
	@echo "make: running the test suite"
	$(BIN)/pytest -q --ignore=$(CTK)
	@echo "make: running the AGENT-HOOKS conformance kit"
	$(BIN)/pytest -q -p agent_hooks_ctk --agent-hooks-harness=ctk_harness:TetherHarness $(CTK)

# The web inbox test drives Debian's chromium through Playwright (never `playwright install`).
# Installed here when missing (CI runs as root on Debian); if that fails the test is skipped.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing chromium for the web inbox test (apt-get)"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
	    >/dev/null 2>&1 || echo "warning: could not install chromium; the browser test will be skipped"; }

phoenix: $(PHOENIX_STAMP)

$(PHOENIX_STAMP):
	@echo "make: installing $(PHOENIX_PIN) into $(PHOENIX_VENV) for the tracing test (about 80 s, once)"
	rm -rf $(PHOENIX_VENV)
	$(PYTHON) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(PHOENIX_VENV)/bin/pip install --quiet '$(PHOENIX_PIN)'
	touch '$@'
	@echo "make: $(PHOENIX_PIN) ready"

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/python bench/overhead.py
	$(BIN)/python bench/durability.py
	$(BIN)/python bench/streaming.py
	$(BIN)/python bench/workers.py
	$(BIN)/python bench/mcp_overhead.py
	$(BIN)/python bench/sync_tools.py
	$(BIN)/python bench/concurrent_durable.py

clean:
	rm -rf $(VENV) $(PHOENIX_VENV) .mypy_cache .ruff_cache .pytest_cache
