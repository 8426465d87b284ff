# The two set-up commands of the README.  Both create .venv on first use and reinstall
# only when pyproject.toml changes (the stamp file records the last install).
PYTHON ?= python3
VENV   := .venv
STAMP  := $(VENV)/.installed
# JupyterLab refuses to start as root unless told; containers often run as root.
ROOT_OK := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: run test

run: $(STAMP)
	@echo "Starting JupyterLab on notebooks/ - open the http://127.0.0.1:... URL printed below."
	$(VENV)/bin/jupyter lab --no-browser --ip=127.0.0.1 --notebook-dir=notebooks $(ROOT_OK)

test: $(STAMP)
	$(VENV)/bin/python -m pytest

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e '.[notebook,test]'
	touch $@
