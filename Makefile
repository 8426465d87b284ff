# The two set-up commands of the README.  Both create .venv on first use and reinstall only
# when pyproject.toml changes (a stamp file per command records its last install).
#   make run   installs what the tutorials use (the notebook layer, Dask, JAX and Numba);
#   make test  installs everything the tests use on top (PyTorch, Playwright, pytest, ...).
PYTHON ?= python3
VENV   := .venv
RUN_STAMP  := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test
# JupyterLab refuses to start as root unless told; containers often run as root.
ROOT_OK := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: run test

run: $(RUN_STAMP)
	@echo "Starting JupyterLab on notebooks/ - open the http://127.0.0.1:... URL printed below."
	$(VENV)/bin/jupyter lab --no-browser --ip=127.0.0.1 --notebook-dir=notebooks $(ROOT_OK)

test: $(TEST_STAMP)
	$(VENV)/bin/python -m pytest

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip

$(RUN_STAMP): pyproject.toml | $(VENV)/bin/python
	$(VENV)/bin/python -m pip install --quiet -e '.[tutorials]'
	touch $@

# the test extra includes the tutorials' packages, so a tested venv also runs the tutorials
$(TEST_STAMP): pyproject.toml | $(VENV)/bin/python
	$(VENV)/bin/python -m pip install --quiet -e '.[notebook,test]'
	touch $@ $(RUN_STAMP)
