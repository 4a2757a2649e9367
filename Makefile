# The two commands of the README: `make demo` and `make test`. Both set up what they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup system test demo lint typecheck bench clean

setup: $(STAMP) system

# System parts the suite runs for real: the PostgreSQL server (the tests start their own
# throwaway cluster on loopback) and the NDNd forwarder (built from the Go module proxy). Each script is idempotent and fast when there is nothing to do.
system:
	deploy/postgres/install.sh
	deploy/forwarder/build.sh >/dev/null

# Re-install only when the packaging metadata changed; the install is editable.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip "setuptools>=77" wheel
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

test: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest

# The demo names include malformed ones on purpose: exit status 1 ("some could not be named")
# is the expected outcome there, anything else is a failure.
demo: setup
	$(BIN)/ndnsci scan tests/data/netcdf/cmip5 --metadata
	@echo
	$(BIN)/ndnsci translate --stdin < tests/data/demo/names.txt || test $$? -eq 1
	@echo
	$(BIN)/ndnsci inspect tests/data/netcdf/cmip5/output1/MOHC/HadGEM2-ES/esmControl/yr/ocnBgchem/Oyr/r1i1p1/v20120514/co3/co3_Oyr_HadGEM2-ES_esmControl_r1i1p1_2078-2100.nc

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck:
	$(BIN)/mypy

bench: setup
	$(BIN)/python bench/translate.py
	$(BIN)/python bench/extract.py
	$(BIN)/python bench/catalog.py
	$(BIN)/python bench/transfer.py --size-mb 1024 --rounds 3

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .pytest_cache .ruff_cache
