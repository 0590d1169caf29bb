# Two commands do all the set-up on a fresh machine: `make run` and `make test`
# (`make check` is the quick one: see below).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEMO   ?= data/demo.duckdb
STORE  ?= catalog
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home
# The local sandbox isolates the investigations' code with bubblewrap.  Where it
# is missing (`apt-get install bubblewrap`), `make run` still works, unisolated,
# and says so; set CATALOGER_SANDBOX_ISOLATION yourself to decide otherwise.
HAVE_BWRAP := $(shell command -v bwrap 2>/dev/null)
ifeq ($(HAVE_BWRAP),)
export CATALOGER_SANDBOX_ISOLATION ?= none
endif

.PHONY: run test check lint ui env demo bench clean realdata soda dbt

# The sandbox image's pins constrain the host venv too: a session script exported from the
# sandbox must see the same library versions on the host (tests/resources/sandbox/test_image.py),
# whatever newer release the registry has of a dependency neither side pins in pyproject.toml.
$(BIN)/cataloger: pyproject.toml cataloger_dagster/sandbox_recipe/requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip uv
	$(BIN)/uv pip install --python $(BIN)/python --quiet -c cataloger_dagster/sandbox_recipe/requirements.txt -e '.[dev]'
	touch $@

env: $(BIN)/cataloger

$(DAGSTER_HOME):
	mkdir -p $@

# The instance of `make run` and `make ui`: the run queue and a pool per database (docs/deployment.md,
# "A bounded load on the source"), telemetry off; one already there is kept
$(DAGSTER_HOME)/dagster.yaml: | $(DAGSTER_HOME)
	cp deploy/dagster.yaml $@

$(DEMO): | $(BIN)/cataloger
	mkdir -p $(dir $(DEMO))
	$(BIN)/cataloger demo-db $(DEMO)

demo: $(DEMO)

# Build the demo database (once), catalog every table, print where the catalog is
# (`cataloger demo`: `cataloger run` on the demo database, written first when missing).
run: $(BIN)/cataloger $(DAGSTER_HOME)/dagster.yaml | $(DAGSTER_HOME)
ifeq ($(HAVE_BWRAP),)
	@echo "warning: bubblewrap not found: the sandbox runs without isolation (apt-get install bubblewrap)" >&2
endif
	$(BIN)/cataloger demo --path $(DEMO) --store $(STORE)

# `dbt test` for the dbt export's tests (tests/e2e/test_export_dbt.py), in a venv of its own: dbt's
# pins do not resolve beside ours (deploy/tools/dbt-requirements.txt says why)
DBT_TOOL := .cache/tools/dbt
$(DBT_TOOL)/bin/dbt: deploy/tools/dbt-requirements.txt | $(BIN)/cataloger
	$(BIN)/uv venv --quiet --allow-existing --python $(BIN)/python $(DBT_TOOL)
	$(BIN)/uv pip install --python $(DBT_TOOL)/bin/python --quiet -r deploy/tools/dbt-requirements.txt
	touch $@

dbt: $(DBT_TOOL)/bin/dbt

# The real-data corpus of tests/support/realdata: downloaded once into .cache/realdata,
# checked by sha256; later runs find the cache valid and download nothing (standard library only).
realdata:
	$(PYTHON) tests/support/realdata/fetch.py

# Soda Core's CLI (`soda scan`), in a venv of its own (its pins are not the package's), for the
# SodaCL export's tests (tests/e2e/test_export_soda.py) and anyone scanning the exported checks
SODA_VENV := .cache/tools/soda
$(SODA_VENV)/bin/soda: deploy/tools/soda-requirements.txt | $(BIN)/cataloger
	rm -rf $(SODA_VENV)
	$(BIN)/uv venv --quiet --python $(BIN)/python $(SODA_VENV)
	$(BIN)/uv pip install --python $(SODA_VENV)/bin/python --quiet -r deploy/tools/soda-requirements.txt
	touch $@

soda: $(SODA_VENV)/bin/soda

# The whole suite.  CATALOGER_REQUIRE_SERVICES=1 turns "service absent" skips into failures.
# Without the network the corpus is not downloaded, and its tests skip, saying so.
# Two workers (pytest-xdist), each taking whole test files, so that a module's fixtures (a corpus
# loaded into a server, a `dagster dev`) are made once: much of the suite waits on subprocesses,
# servers and the browser, which a second worker fills.  TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 2
test: $(BIN)/cataloger
	$(PYTHON) tests/support/realdata/fetch.py || test -z "$$CATALOGER_REQUIRE_SERVICES"
	$(BIN)/python -m pytest -ra -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# The quick tests (markers in pyproject.toml): none that is slow or needs a server, Docker,
# bubblewrap, chromium, Soda's CLI or the real-data corpus; nothing is downloaded.
CHECK_MARKERS := not (slow or postgres or mysql or docker or bwrap or chromium or realdata or soda or dbt or gx)
check: $(BIN)/cataloger lint
	$(BIN)/python -m pytest -ra -m "$(CHECK_MARKERS)" $(PYTEST_ARGS)

# The package's lint and format (ruff) and types (mypy), as pyproject.toml configures them;
# `make check` and CI run it first.  `ruff format cataloger_dagster` writes the format.
lint: $(BIN)/cataloger
	$(BIN)/python -m ruff check cataloger_dagster
	$(BIN)/python -m ruff format --check cataloger_dagster
	$(BIN)/python -m mypy cataloger_dagster

# The Dagster UI on http://127.0.0.1:3000; Ctrl-C stops it.  Started in the background of a script,
# a command inherits SIGINT ignored, and `dagster dev` gives SIGTERM the same (ignored) handler: it
# would stop on neither.  So both are reset to their defaults first (a shell cannot: POSIX keeps a
# signal ignored on entry to a non-interactive shell ignored).
DEFAULT_SIGNALS := $(BIN)/python -c 'import os, signal, sys; \
  [signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGTERM)]; os.execv(sys.argv[1], sys.argv[1:])'
ui: $(BIN)/cataloger $(DEMO) $(DAGSTER_HOME)/dagster.yaml | $(DAGSTER_HOME)
	CATALOGER_DATABASE=$${CATALOGER_DATABASE:-duckdb://$(DEMO)} CATALOGER_STORE=$${CATALOGER_STORE:-$(STORE)} \
	  $(DEFAULT_SIGNALS) $(BIN)/dagster dev -w workspace.yaml -h 127.0.0.1 -p 3000

# the code before investigations could dismiss a finding: a whole run may take at most 1.5x its time
COST_BASELINE ?= 5efc460
bench: $(BIN)/cataloger realdata
	$(BIN)/uv pip install --python $(BIN)/python --quiet -e '.[dev,bench]'
	$(BIN)/python benchmarks/bench_profile.py
	$(BIN)/python benchmarks/bench_references.py
	$(BIN)/python benchmarks/real_data.py
	$(BIN)/python benchmarks/bench_investigation_cost.py --baseline $(COST_BASELINE)

clean:
	rm -rf $(VENV) data $(STORE) .dagster_home dist build .cache
