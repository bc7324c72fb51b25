# Two entry points, both self-installing: `make demo` (the main job on embedded defaults) and
# `make test` (lint, format check, type check, the test suite and the docs site). Everything lands in $(VENV).
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.boi-installed

.PHONY: install demo test lint docs serve-docs test-container

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

# The site is built first, once: tests/test_docs_site.py measures that build in Chromium.
test: lint docs
	BOI_DOCS_SITE=$(CURDIR)/build/docs-site $(BIN)/python -m pytest -q -n auto --dist loadfile

# The documentation site, strict: a broken link, a missing page or a reference entry that no
# longer matches the code fails. The reference pages are generated from the code as it builds.
# (The two variables silence banners that Material and a plugin print on every build.)
MKDOCS := NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true $(BIN)/mkdocs

docs: $(STAMP)
	$(MKDOCS) build --strict --quiet

# The site served as you write (http://127.0.0.1:8000), with the same banners silenced as `docs`.
serve-docs: $(STAMP)
	$(MKDOCS) serve

# The sandbox suites again as in a default Docker container (root without CAP_SYS_ADMIN, no
# user namespaces: scripts/containerlike.py): the unprivileged tier must be reached and hold.
test-container: $(STAMP)
	BOI_EXPECT_ISOLATION=unprivileged python3 scripts/containerlike.py -- \
		$(BIN)/python -m pytest -q -p no:cacheprovider $(wildcard tests/test_sandbox_*.py)
