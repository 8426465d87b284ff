# The two set-up commands of the README.  Both create .venv on first use and reinstall only
# when pyproject.toml changes (a stamp file per command records its last install).
#   make run   installs what the tutorials use (the notebook layer, Dask, JAX and Numba);
#   make test  installs everything the tests use on top (PyTorch, Playwright, pytest, ...),
#              runs them, then runs the PyTensor bridge's tests (tests/pytensor_bridge) in
#              .venv-pymc: PyMC pins PyTensor 2.38, which pins a numba older than the numba
#              extra's, so the bridge gets a venv of its own (the pymc-test extra).
PYTHON ?= python3
VENV   := .venv
RUN_STAMP  := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test
PYMC_VENV  := .venv-pymc
PYMC_STAMP := $(PYMC_VENV)/.installed-pymc-test
PYMC_LOG   := $(PYMC_VENV).install.log
# JupyterLab refuses to start as root unless told; containers often run as root.
ROOT_OK := $(if $(filter 0,$(shell id -u)),--allow-root)

# The suite starts hundreds of Python processes (kernels, fresh compiles, workers); a shell
# with PYTHONDONTWRITEBYTECODE set makes each compile tensorgraph's sources again (0.3 s each)
unexport PYTHONDONTWRITEBYTECODE
# Inductor's default pool of compile processes (one per CPU) imports torch in each, in every
# process of the suite that compiles for mode PYTORCH; on two cores it only adds that work
test: export TORCHINDUCTOR_COMPILE_THREADS = 1

.PHONY: run test

run: $(RUN_STAMP)
	@echo "Starting JupyterLab on notebooks/ - open the http://127.0.0.1:... URL printed below."
	$(VENV)/bin/jupyter lab --no-browser --ip=127.0.0.1 --notebook-dir=notebooks $(ROOT_OK)

# .venv-pymc installs while the main suite runs (pip mostly waits on the network and disk);
# its log is printed only if the install fails
test: $(TEST_STAMP)
	@$(MAKE) --no-print-directory $(PYMC_STAMP) > $(PYMC_LOG) 2>&1 & pymc=$$!; \
	$(VENV)/bin/python -m pytest; status=$$?; \
	if ! wait $$pymc; then cat $(PYMC_LOG); exit 1; fi; \
	if [ $$status != 0 ]; then exit $$status; fi; \
	$(PYMC_VENV)/bin/python -m pytest tests/pytensor_bridge

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip

$(RUN_STAMP): pyproject.toml | $(VENV)/bin/python
	$(VENV)/bin/python -m pip install --quiet -e '.[tutorials]'
	touch $@

# the test extra includes the tutorials' packages, so a tested venv also runs the tutorials;
# --no-compile: of 2.2 GB of packages the suite imports a part, compiled once when first imported
$(TEST_STAMP): pyproject.toml | $(VENV)/bin/python
	$(VENV)/bin/python -m pip install --quiet --no-compile -e '.[notebook,test]'
	touch $@ $(RUN_STAMP)

$(PYMC_VENV)/bin/python:
	$(PYTHON) -m venv $(PYMC_VENV)
	$(PYMC_VENV)/bin/python -m pip install --quiet --upgrade pip

$(PYMC_STAMP): pyproject.toml | $(PYMC_VENV)/bin/python
	$(PYMC_VENV)/bin/python -m pip install --quiet --no-compile -e '.[pymc-test]'
	touch $@
