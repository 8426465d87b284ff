"""Where PyTensor is not installed (the main test venv): the bridge and tgn.debug_logp say
which extra to install."""

import importlib.util

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("pytensor") is not None,
                                reason="PyTensor is installed here")


def test_importing_the_bridge_names_the_extra():
    with pytest.raises(ImportError, match=r"pip install tensorgraph\[pytensor\]"):
        import tensorgraph.pytensor  # noqa: F401


def test_the_notebook_loads_and_debug_logp_names_the_extra():
    tgn = pytest.importorskip("tensorgraph.notebook")
    with pytest.raises(ImportError, match=r"pip install tensorgraph\[pytensor\]"):
        tgn.debug_logp
