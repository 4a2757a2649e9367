# The two commands of the README: `make demo` and `make test`. Both set up what they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# npm writes this file last; it is newer than package-lock.json once node_modules is complete
WEBUI_STAMP := webui/node_modules/.package-lock.json

.PHONY: setup demo-setup system native native-if-capable portal test check screenshots demo demo-check lint typecheck layers bench testbed clean

setup: $(STAMP) system $(WEBUI_STAMP) native-if-capable

# What the demo needs, without the native plane (which `make native` builds, ~40 minutes the
# first time; `ndnsci up` says whether it is there): the venv, the NDNd forwarder and npm's
# packages for the portal's build.
demo-setup: $(STAMP) $(WEBUI_STAMP)
	deploy/forwarder/build.sh >/dev/null

# System parts the suite runs for real, each installed by an idempotent script that is fast
# when there is nothing to do: the PostgreSQL server (the tests start their own throwaway
# cluster on loopback), Debian's Chromium (the portal's end-to-end tests), wget and curl (ESGF
# download scripts run for real), the NDNd forwarder and NDNd's own State Vector Sync node
# (built from the Go module proxy), the testbed's tools (iproute2, curl, its delay element) and
# Debian's XRootD (server, client tools, headers: deploy/xrootd/install.sh).
system:
	deploy/postgres/install.sh
	deploy/browser/install.sh >/dev/null
	deploy/tools/install.sh
	deploy/xrootd/install.sh
	deploy/forwarder/build.sh >/dev/null
	deploy/forwarder/build-svs-peer.sh >/dev/null
	deploy/testbed/install.sh

# The native data plane (NDN-DPDK forwarder, file server and fetcher; NDNc), built from the
# pinned sources (NDNSCI_NATIVE_SOURCES, else ../shared/native/vendor, else the upstream
# archives) into a cache outside the repository keyed by the pins (deploy/ndn-dpdk/common.sh):
# a no-op after the first time. deploy/ndn-dpdk/build.sh builds NDNc's chain (deploy/xrootd,
# which runs deploy/ndnc: ndn-cxx, NDNc, NDNc's XRootD storage plugin) beside its own, so the
# two lines after it find their prefixes built; times in docs/native.md. Build times are printed.
native:
	deploy/ndn-dpdk/build.sh >/dev/null
	deploy/ndnc/build.sh >/dev/null
	deploy/xrootd/build.sh >/dev/null
	@cat "$$(deploy/ndn-dpdk/build.sh 2>/dev/null)/share/ndnsci/build-times.txt" \
	    "$$(deploy/ndnc/build.sh 2>/dev/null)/share/ndnsci/build-times.txt" \
	    "$$(deploy/xrootd/build.sh 2>/dev/null)/share/ndnsci/build-times.txt" >&2

# `make setup` builds it where it can run (`ndnsci native check` exit status 1: it cannot).
# With NDNSCI_REQUIRE_NATIVE=1 (CI: .ci/run) a machine that cannot run it fails here, saying why.
native-if-capable: $(STAMP)
	@$(BIN)/ndnsci native check >/dev/null; status=$$?; \
	if [ $$status -ne 1 ]; then $(MAKE) --no-print-directory native; \
	elif [ "$${NDNSCI_REQUIRE_NATIVE:-}" = 1 ]; then \
	    echo "NDNSCI_REQUIRE_NATIVE=1 but this machine cannot run NDN-DPDK:" >&2; \
	    $(BIN)/ndnsci native check >&2; exit 1; \
	else echo "not building the native plane: this machine cannot run it (ndnsci native check)" >&2; fi

# `npm install --no-save` installs exactly the lock file's versions, as `npm ci` would; `npm ci`
# refuses this lock because the registry serves linux builds only of unrs-resolver's optional
# per-platform packages (the others are missing from the lock, which `npm ci` takes as out of
# sync). The stamp is touched: npm leaves it alone when nothing changed.
$(WEBUI_STAMP): webui/package-lock.json webui/package.json
	cd webui && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-save --no-audit --no-fund --loglevel=error
	@touch $@

# Re-install only when the packaging metadata or the C extensions changed; the three
# distributions (ndnsci, catalog/, translators/) are installed editable together (the extensions
# are compiled into the checkout by it).
$(STAMP): pyproject.toml catalog/pyproject.toml translators/pyproject.toml \
		ndnsci/ndn/_hotloop.c ndnsci/ndn/_serveloop.c ndnsci/ndn/_tlv.h catalog/ndnsci_catalog/_prepare.c
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip "setuptools>=77" wheel
	$(BIN)/python -m pip install --quiet -e ./translators -e ./catalog -e '.[dev]'
	@touch $@

# pytest in two passes: the tests that share nothing run on TEST_WORKERS pytest-xdist workers
# (each with its own forwarder, PostgreSQL, folders: tests/conftest.py; whole modules per
# worker, so a module's fixtures are built once), then the `serial` ones alone (tests/native:
# hugepages, tests/testbed: network namespaces), under the lock other users of the machine's
# hugepages take too. 4 workers on 2 cores: most tests wait on I/O (DEVELOPERS.md, "Testing").
TEST_WORKERS ?= 4
PYTEST_ARGS ?=

test: setup portal
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadscope -m "not serial" $(PYTEST_ARGS)
	flock /tmp/ndnsci-native.lock $(BIN)/pytest -m serial $(PYTEST_ARGS)
	npm --prefix webui run --silent api:check
	npm --prefix webui run --silent lint
	npm --prefix webui test
	NDNSCI_REQUIRE_NDN=1 NDNSCI_SCREENSHOTS=0 npm --prefix webui run e2e

# The quick tier for everyday work (< 3 minutes): lint, types, layers and the tests that need no
# running system (no forwarder, PostgreSQL, server or service: the `system` marker that
# tests/conftest.py applies). `make test` before a submission.
check: $(STAMP) portal
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/pytest -n 2 -m "not system" -q $(PYTEST_ARGS)

# The portal screenshots in docs/screenshots/ are taken by the end-to-end run.
screenshots: setup
	NDNSCI_REQUIRE_NDN=1 npm --prefix webui run e2e

# The whole stack on a generated sample archive: forwarder, catalog with the portal, producer.
# Prints the portal URL and commands that work; Ctrl-C stops everything.
demo: demo-setup portal
	$(BIN)/ndnsci up

# The same, non-interactive: start everything, one search and one verified fetch, stop.
demo-check: demo-setup portal
	$(BIN)/ndnsci up --check

# The portal's production build, inside the package so the catalog (and the wheel) serve it.
portal: catalog/ndnsci_catalog/portal/index.html

catalog/ndnsci_catalog/portal/index.html: $(WEBUI_STAMP) $(shell find webui/src webui/index.html -type f 2>/dev/null)
	npm --prefix webui run --silent build

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck:
	$(BIN)/mypy

# the layering contract of pyproject.toml (import-linter)
layers:
	$(BIN)/lint-imports

bench: setup
	$(BIN)/python bench/translate.py
	$(BIN)/python bench/quicklook.py
	$(BIN)/python bench/extract.py
	$(BIN)/python bench/catalog.py
	$(BIN)/python bench/catalog.py --sizes 1000000 --backends sqlite --publish-only --rounds 3
	$(BIN)/python bench/catalog_write.py
	$(BIN)/python bench/catalog_load.py
	$(BIN)/python bench/transfer.py --sizes 64,192,1024,4096 --rounds 3
	$(BIN)/python bench/esgf.py --files 1000000 --size-mb 1024 --rounds 3
	$(BIN)/python bench/federation.py --records 100000
	npm --prefix webui run build && node bench/webui.mjs

# The seed experiments on the emulated multi-site testbed (root: network namespaces), about
# 15 minutes; results and plots in bench/results/testbed-*.{json,png}, see docs/testbed.md.
testbed: $(STAMP)
	deploy/forwarder/build.sh >/dev/null
	deploy/testbed/install.sh
	$(BIN)/ndnsci testbed run all

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .pytest_cache .ruff_cache webui/node_modules catalog/ndnsci_catalog/portal
