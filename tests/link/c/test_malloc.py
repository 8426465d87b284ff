"""config.malloc__trim_threshold: arrays of a few MB freed at every call stay in the process
instead of going back to the system and faulting in again (tensorgraph/link/c/malloc.py)."""

import os
import subprocess
import sys

import pytest

_SCRIPT = r"""
import resource
import numpy as np
import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.link.c import malloc

x = tt.dvector("x")
f = tg.function([x], x + 1, mode="FAST_RUN")   # loads the glue, which tunes malloc once
f.wait_optimized()
f(np.zeros(3))

def call():   # four 4 MB arrays made and freed, as a step's buffers are
    arrays = [np.ones(1 << 20, dtype="float32") for _ in range(4)]
    del arrays

for _ in range(3):
    call()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    call()
print(malloc.tune_malloc(), (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20)
"""


def _run(flags: str):
    env = dict(os.environ)
    env["TENSORGRAPH_FLAGS"] = ",".join(f for f in (env.get("TENSORGRAPH_FLAGS", ""), flags)
                                        if f)
    done = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    applied, faults = done.stdout.split()
    return applied == "True", float(faults)


@pytest.mark.skipif(not hasattr(os, "confstr") or os.confstr("CS_GNU_LIBC_VERSION") is None,
                    reason="glibc only")
def test_freed_arrays_stay_in_the_process():
    applied, faults = _run("")
    assert applied and faults < 50
    applied, faults = _run("malloc__trim_threshold=0")   # glibc's own settings
    assert not applied and faults > 500
