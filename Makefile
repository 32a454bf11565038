# The README's two commands: `make run` and `make test`. Both set up a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8501
export PYTHONPATH := $(CURDIR)

.PHONY: run test check slow-list lint docs unit e2e bench bench-app bench-load precompute screenshot chromium axe postgres nginx clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.runtime: requirements.txt | $(PY)
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt | $(PY)
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(VENV)/.runtime $@

# MALLOC_ARENA_MAX=2: glibc keeps up to 8 heap arenas per core, one per busy session thread,
# and holds their freed pages; with 2 the server's RSS peaked ~80 MB lower at 20 sessions and
# returned closer to its baseline after they closed (docs/hostile.md, bench/load.py).
# app.launch = `streamlit run app/main.py` with the library and the app's components imported
# before the server listens, so the first visitor does not wait for them (issue 43).
run: $(VENV)/.runtime
	MALLOC_ARENA_MAX=2 $(PY) -m app.launch --server.port $(PORT) --server.headless true \
		--browser.gatherUsageStats false

# Debian's chromium for the browser tests (Playwright cannot download browsers here).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "Installing Debian's chromium for the browser tests..."; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; }

# Debian's PostgreSQL server binaries (initdb, pg_ctl) for the ledger store's tests, which start
# their own throwaway server (tests/unit/_postgres.py; issue 46). Idempotent: skipped once there.
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || { \
		echo "Installing Debian's postgresql for the ledger store's tests..."; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq postgresql >/dev/null; }

# Debian's nginx for the replica recipe's browser test (tests/e2e/test_e2e_replicas.py runs
# docs/deploy.md's upstream block in front of two app replicas; issue 46). Idempotent.
nginx:
	@command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || { \
		echo "Installing Debian's nginx for the replica recipe's test..."; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq nginx >/dev/null; }

# axe-core, the accessibility checker the browser tests inject into every page
# (tests/e2e/test_e2e_a11y.py), from its npm package at a pinned version (npm checks the
# registry's integrity hash); Debian's npm is installed if missing. Idempotent: skipped once there.
AXE_VERSION := 4.14.1
AXE_DIR := tests/e2e/vendor/axe-core-$(AXE_VERSION)
axe: $(AXE_DIR)/axe.min.js
$(AXE_DIR)/axe.min.js:
	@command -v npm >/dev/null 2>&1 || { \
		echo "Installing Debian's npm to fetch axe-core..."; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq npm >/dev/null; }
	mkdir -p $(AXE_DIR)
	cd $(AXE_DIR) && npm pack --silent axe-core@$(AXE_VERSION) >/dev/null \
		&& tar -xzf axe-core-$(AXE_VERSION).tgz --strip-components=1 package/axe.min.js package/LICENSE \
		&& rm axe-core-$(AXE_VERSION).tgz

lint: $(VENV)/.dev
	$(VENV)/bin/ruff check dpviz app tests bench

# The API documentation site (mkdocs.yml): --strict, so a broken reference or docstring fails CI.
# NO_MKDOCS_2_WARNING silences mkdocs-material's banner about its successor.
docs: $(VENV)/.dev
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet
	touch $(DOCS_STAMP)

# `make test` rebuilds the site only when what it is built from changed (the pages, mkdocs.yml,
# the docstrings under dpviz/): an up-to-date build was ~1 min of every run (issue 38).
DOCS_STAMP := site/.built
DOCS_SOURCES := mkdocs.yml $(shell find docs -type f 2>/dev/null) $(shell find dpviz -name '*.py' 2>/dev/null)
$(DOCS_STAMP): $(DOCS_SOURCES) | $(VENV)/.dev
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet
	touch $@

# pytest-xdist workers (requirements-dev.txt): `auto` is one per core. Test modules stay whole on
# one worker (--dist loadfile), so a browser module keeps its one server and page; they are handed
# out heaviest first (tests/conftest.py HEAVY_FIRST, kept by --no-loadscope-reorder) so both
# cores stay busy to the end. Each worker, and what it starts, runs one BLAS/OpenMP thread
# (tests/conftest.py ONE_THREAD): the workers are the parallelism.
JOBS ?= auto
XDIST := -n $(JOBS) --dist loadfile --no-loadscope-reorder
PYTEST := $(PY) -m pytest

# The documentation site builds beside the tests, not before them (issue 45 item 5): no test reads
# it, and its build (a fresh clone's is the whole site) fills the cores the browser tests leave idle
# while they wait. Either failing fails `make test`.
test: $(VENV)/.dev chromium axe postgres nginx lint
	@$(MAKE) --no-print-directory $(DOCS_STAMP) & docs=$$!; \
	$(PYTEST) $(XDIST); status=$$?; \
	wait $$docs || { echo "make test: the documentation build failed (above)"; status=1; }; \
	exit $$status

# The inner loop (issue 38): lint, then the unit and app tests not marked slow (by a decorator, or
# listed in tests/slow_tests.txt: >= 1 s each), e2e or packaging (the wheel's own venv), on every
# core. `make test` runs everything.
check: $(VENV)/.dev
	$(VENV)/bin/ruff check dpviz app tests bench
	$(PYTEST) -q $(XDIST) -m "not slow and not e2e and not packaging" tests/unit tests/app

# The unit and app tests that take >= 1 s each (tests/slow_tests.txt), which tests/conftest.py marks
# slow so that `make check` leaves them to `make test`. Run on a quiet machine after tests change.
SLOW_REPORT := $(or $(TMPDIR),/tmp)/dpviz-slow-report.xml
slow-list: $(VENV)/.dev
	DPVIZ_SLOW_LIST=0 $(PYTEST) -q $(XDIST) -p no:cacheprovider \
		-m "not slow and not e2e and not packaging" tests/unit tests/app --junitxml=$(SLOW_REPORT) || true
	$(PY) tests/slow_list.py $(SLOW_REPORT)

unit: $(VENV)/.dev
	$(PY) -m pytest tests/unit

e2e: $(VENV)/.dev chromium axe postgres nginx
	$(PY) -m pytest tests/e2e

bench: $(VENV)/.dev
	$(PY) bench/averaging.py

# Slider -> redraw latency of the Explore page, measured in chromium (options: ARGS="--help").
bench-app: $(VENV)/.dev chromium
	$(PY) bench/app_latency.py $(ARGS)

# N concurrent sessions moving the ρ slider: latency and server memory (issue 19).
bench-load: $(VENV)/.dev
	$(PY) bench/load.py $(ARGS)

# The presets' Budget sweeps, precomputed for shared links, Compare's "Add all" on the default
# lesson (issue 43: about 4 of this target's minutes), and the default lesson's non-private
# reference (rerun after a library change: the app ignores a file while its code hash differs
# from the running code's; after a docstring-only change `$(PY) -m app.precompute_sweeps --stamp`).
precompute: $(VENV)/.runtime
	$(PY) -m app.precompute_sweeps --add-all
	$(PY) -m app.precompute_lesson

# Refresh the README screenshot from the browser test suite.
screenshot: $(VENV)/.dev chromium
	$(PY) tests/e2e/update_screenshot.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache site
