# Two entry points, both self-installing: `make demo` (the main job on embedded defaults) and
# `make test` (lint, format check, type check and the test suite). Everything lands in $(VENV).
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.boi-installed

.PHONY: install demo test lint test-container

$(STAMP): pyproject.toml constraints.txt scripts/install.sh
	bash scripts/install.sh $(VENV)
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/boi models prepare
	$(BIN)/boi run --config demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest -q

# The sandbox suites again as in a default Docker container (root without CAP_SYS_ADMIN, no
# user namespaces: scripts/containerlike.py): the unprivileged tier must be reached and hold.
test-container: $(STAMP)
	BOI_EXPECT_ISOLATION=unprivileged python3 scripts/containerlike.py -- \
		$(BIN)/python -m pytest -q -p no:cacheprovider $(wildcard tests/test_sandbox_*.py)
