"""Modes every scan test runs in: each linker, the named modes and the debugging modes."""

import pytest

import tensorgraph

MODE_NAMES = ["FAST_COMPILE", "FAST_RUN", "py", "vm", "c|py", "cvm", "c", "DebugMode",
              "NanGuardMode", "MonitorMode"]


def make_mode(name):
    if name in ("py", "vm", "c|py", "cvm", "c"):
        return tensorgraph.Mode(linker=name, optimizer="fast_run")
    return name


@pytest.fixture(params=MODE_NAMES)
def mode(request):
    """A mode (name or Mode) for function(..., mode=mode)."""
    return make_mode(request.param)
