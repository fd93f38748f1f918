# pyharness: every command the README and CI use.
#   make test   install what is missing, lint, build, run all three test tiers
#   make demo   build if needed, serve the widget demo on 127.0.0.1 (model from the env)
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
CHROMIUM ?= /usr/bin/chromium
# pytest and its dependencies, for the in-Pyodide tier (pure-Python wheels from PyPI).
TEST_WHEELS := pytest==9.2.0 pluggy==1.7.0 iniconfig==2.3.1 packaging==26.4 pygments==2.21.0 \
	hypothesis==6.155.7 sortedcontainers==2.4.0
# What builds dist/ for the steps that need it; `make test` builds once and passes BUILD=.
BUILD ?= build
# Extra packages in the sandbox's index (its micropip installs them); e2e needs tabulate.
PACKAGES ?= tabulate==0.10.0
E2E_JOBS ?= 2
# A row that has not ended in E2E_TIMEOUT seconds fails with its stack (pytest-timeout):
# a hang costs minutes and names itself, never the whole CI budget.
E2E_TIMEOUT ?= 240
E2E := PYHARNESS_CHROMIUM=$(CHROMIUM) $(VENV)/bin/pytest e2e -q -p no:cacheprovider --timeout $(E2E_TIMEOUT)
PIP_DOWNLOAD := $(PY) -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.14

.PHONY: help setup chromium host-git build test unit jstest pyodide-tests e2e lint typecheck demo bench bench-smoke screenshots clean fuzz

help:
	@echo "make test | make demo | make build | make lint | make typecheck | make e2e | make bench | make bench-smoke | make fuzz | make screenshots | make clean"

# --- installs -----------------------------------------------------------------

$(VENV)/.stamp: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

node_modules/.stamp: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

.cache/test-wheels/.stamp: $(VENV)/.stamp Makefile
	mkdir -p .cache/test-wheels
	$(PIP_DOWNLOAD) --dest .cache/test-wheels $(TEST_WHEELS)
	touch $@

# The MCP test server's environment (e2e/mcp_server.py): the Python MCP SDK, pinned, apart
# from .venv (it needs a newer jsonschema than the harness pins).
.cache/mcp-venv/.stamp: e2e/mcp-requirements.txt
	$(PYTHON) -m venv .cache/mcp-venv
	.cache/mcp-venv/bin/python -m pip install --quiet -r e2e/mcp-requirements.txt
	touch $@

# Both apt installs take one lock (`make test` installs chromium beside the other steps).
APT_INSTALL := flock /tmp/pyharness-apt.lock sh -c 'apt-get update -qq && \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$$0" >/dev/null'

chromium:
	@if ! command -v $(CHROMIUM) >/dev/null; then \
	  echo "installing Debian chromium"; $(APT_INSTALL) chromium; \
	fi
	@$(CHROMIUM) --version

# The host's own git (Debian's), which the git tests compare the shell's git against.
host-git:
	@command -v git >/dev/null || { echo "installing Debian git"; $(APT_INSTALL) git; }

setup: $(VENV)/.stamp node_modules/.stamp

# --- build ----------------------------------------------------------------------

build: setup
	$(VENV)/bin/pyharness build --out dist $(addprefix --package ,$(PACKAGES))

# --- tests ----------------------------------------------------------------------

# ruff and mypy for the Python; for the JavaScript, Biome (lint and format check,
# biome.jsonc; `node_modules/.bin/biome check --write` fixes what it can) and tsc --checkJs
# per realm (page, workers, Node), which also holds the .mjs exports to the published .d.ts;
# knip (knip.jsonc) for any file, dependency or export nothing uses.
lint: setup
	$(VENV)/bin/ruff check harness tooling shell/pyexec.py shell/pyharness_pip.py tests e2e
	$(VENV)/bin/mypy
	node_modules/.bin/biome ci --error-on-warnings
	node_modules/.bin/knip --no-progress
	node_modules/.bin/tsc -p tests/types/tsconfig.checkjs.json
	node_modules/.bin/tsc -p tests/types/tsconfig.checkjs.worker.json
	node_modules/.bin/tsc -p tests/types/tsconfig.checkjs.node.json

# The published .d.ts files through package.json's exports, against a usage file.
typecheck: $(BUILD)
	node_modules/.bin/tsc --noEmit -p tests/types
	node_modules/.bin/tsc --noEmit -p tests/types/tsconfig.node.json

# UNIT_AFTER: what must be made first (make test: the build, whose dist/ some rows read;
# alone, they skip without it).
UNIT_AFTER ?=
unit: setup $(UNIT_AFTER)
	$(VENV)/bin/pytest tests -q

# The pure JavaScript modules (tests/js-unit/*.test.mjs), with Node's own test runner.
jstest: setup host-git
	node --test tests/js-unit/

pyodide-tests: $(BUILD) .cache/test-wheels/.stamp
	node --experimental-wasm-stack-switching tests/pyodide/run.mjs dist .cache/test-wheels -- -q

# In E2E_JOBS processes (pytest-xdist, a Chromium each), then the rows marked serial
# alone (they time the page or the run, or measure: see e2e/conftest.py). The parallel
# rows run Pyodide's WebAssembly with V8's baseline compiler only (E2E_PARALLEL_FLAGS):
# every row boots a fresh context, and the optimizing compiler's background work on the
# 10 MB interpreter, thrown away at each row, took a third of their time on two cores.
# The serial rows, which time things, run the browser as visitors have it.
E2E_PARALLEL_FLAGS ?= --js-flags=--liftoff-only
e2e: $(BUILD) chromium host-git .cache/mcp-venv/.stamp
	PYHARNESS_E2E_FLAGS="$(E2E_PARALLEL_FLAGS)" $(E2E) -n $(E2E_JOBS) --dist worksteal \
	  -m "not serial and not bench_smoke"
	$(E2E) -m "serial and not bench_smoke"

# The bench's own rows (e2e/test_bench.py): `pyharness bench --smoke` runs every step once
# and reports every key, and the snapshot probe runs once: about 80 s of a browser alone,
# so they run in make fuzz and here, not in make test.
bench-smoke: $(BUILD) chromium
	$(E2E) -m bench_smoke

# Two jobs at a time on two cores, each one's output kept together: the installs, then
# the build beside lint, then the first three tiers and the .d.ts check, the longest
# (in-Pyodide, ~70 s) as soon as the build is done so that the rest share the second core
# beside it (one make: `build` runs once, and no step waits for a whole phase to end; the
# unit tier after the build, whose dist/ it reads); then the browser tier, with BUILD=
# (built already). What only the browser tier needs (Debian's chromium on a fresh
# machine, the MCP server's venv) is installed meanwhile, outside the two jobs: it is
# mostly the network's time, and in a job it held a core's turn for as long.
test:
	@mkdir -p .cache; \
	$(MAKE) --no-print-directory chromium .cache/mcp-venv/.stamp >.cache/e2e-installs.log 2>&1 & \
	installs=$$!; \
	$(MAKE) -j2 --output-sync=target UNIT_AFTER=build build .cache/test-wheels/.stamp \
	  pyodide-tests lint unit typecheck jstest; tiers=$$?; \
	wait $$installs; installed=$$?; cat .cache/e2e-installs.log; \
	test $$tiers -eq 0 -a $$installed -eq 0
	$(MAKE) BUILD= e2e

# --- benchmarks (docs/performance.md) -------------------------------------------

bench: build chromium
	PYHARNESS_CHROMIUM=$(CHROMIUM) $(VENV)/bin/pyharness bench --reps $(or $(REPS),5)

# --- demo -----------------------------------------------------------------------

# Model: PYHARNESS_MODEL_API, PYHARNESS_BASE_URL, PYHARNESS_API_KEY, PYHARNESS_MODEL, or
# OPENAI_API_KEY / ANTHROPIC_API_KEY; none: the offline scripted demo.
demo: setup
	$(VENV)/bin/pyharness demo --port $(PORT)

# Regenerates docs/widget.png (the README picture) and docs/widget-streaming.png.
screenshots: build chromium
	PYHARNESS_SCREENSHOTS=docs PYHARNESS_CHROMIUM=$(CHROMIUM) $(VENV)/bin/pytest e2e/test_widget.py e2e/test_widget_plan.py e2e/test_widget_budget.py e2e/test_widget_subagents.py e2e/test_widget_touch.py e2e/test_widget_preview.py -q -p no:cacheprovider -k "screenshots or plan or budget or subagent or phone or preview"

clean:
	rm -rf dist .cache $(VENV) node_modules

# --- adversarial suites, long mode (docs/reliability.md); not part of make test ---------

# PYHARNESS_FUZZ=long raises every count, with a random seed that each suite prints
# with its figures (PYHARNESS_FUZZ_SEED=N replays one; PYHARNESS_FUZZ_REPORT=FILE
# also appends the figures to FILE).
fuzz: setup
	PYHARNESS_FUZZ=long $(VENV)/bin/pytest tests/test_fuzz_*.py tests/test_soak.py -q -s -p no:cacheprovider
	PYHARNESS_CHECKPOINT_EXAMPLES=5000 $(VENV)/bin/pytest tests/test_checkpoints.py -q -p no:cacheprovider -k "random or conflicting"
	$(MAKE) build chromium && PYHARNESS_SOAK_PROMPTS=1000 PYHARNESS_BURST_MB=20 PYHARNESS_REOPEN_ROUNDS=7 \
	  PYHARNESS_CHROMIUM=$(CHROMIUM) $(VENV)/bin/pytest e2e/test_soak.py e2e/test_markdown.py \
	  e2e/test_reopen_scale.py -k "long_thread or burst or reopening" -q -s -p no:cacheprovider --timeout 900
	$(MAKE) BUILD= bench-smoke
