"""Float -> integer conversions of values an integer dtype cannot hold (negative values into
unsigned dtypes, huge values, inf, nan) give one defined result in C, whatever the -O level,
the loop position (vector body or scalar tail) and the tier, and it is numpy's on x86-64
(docs/architecture.md, "Compile tiers"). In C such a conversion is undefined behaviour, which
gcc compiled differently at -O0 and -O3 and in the vector body and the tail of one loop."""

from __future__ import annotations

import platform

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.compile.mode import Mode
from tensorgraph.link.c.linkers import CLinker

INTS = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
VALUES = [-1.0, -1.5, -200.0, 300.0, 7e4, -7e4, 3e9, -3e9, 5e9, 1e19, -1e19, 2e19, 1e30,
          np.inf, -np.inf, np.nan, 2.0**63, 2.0**64, 0.75, -0.75, 255.5, 65535.0]

pytestmark = [
    pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                       reason="the chosen results are numpy's on x86-64"),
    pytest.mark.filterwarnings("ignore::RuntimeWarning"),  # numpy on the values themselves
]


def _expected(x, dtype):
    """numpy's conversion of each element alone (its 0-d result: numpy's own vector loop
    gives other uint32 results for some lengths)."""
    return np.array([np.array(v).astype(dtype) for v in x], dtype=dtype)


@pytest.mark.parametrize("src", ["float32", "float64"])
@pytest.mark.parametrize("flags", ["", "-O0"])
def test_out_of_range_float_to_int_is_numpys_result_in_c_and_perform(src, flags):
    x = tt.vector("x", dtype=src)
    outputs = [tt.cast(x, dtype) for dtype in INTS]
    # each value at several positions: in a vector loop's body and in its scalar tail
    data = np.tile(np.array(VALUES, dtype=src), 5)
    with config.change_flags(gcc__cxxflags=flags):
        c_results = tg.function([x], outputs, mode=Mode(linker="cvm"))(data)
    perform = tg.function([x], outputs, mode=Mode(linker="py"))(data)
    for dtype, in_c, in_numpy in zip(INTS, c_results, perform):
        expected = _expected(data, dtype)
        assert in_c.dtype == dtype and np.array_equal(in_c, expected), (dtype, in_c, expected)
        assert np.array_equal(in_numpy, expected), (dtype, "perform", in_numpy, expected)


def test_out_of_range_float_to_int_is_the_same_on_the_quick_tier():
    x = tt.vector("x", dtype="float32")
    f = tg.function([x], [tt.cast(tt.exp(x), dtype) for dtype in INTS], mode=Mode(linker="cvm"))
    data = np.tile(np.array([*VALUES, 30.0, 50.0, -50.0], dtype="float32"), 3)
    optimized = f(data)
    vm = CLinker("cvm", None, whole_graph=True)._make_c_vm(f.maker.fgraph, None, None, ready={})
    vm.input_storage[0][0] = data
    vm()
    for dtype, a, (cell) in zip(INTS, optimized, vm.output_storage):
        assert np.array_equal(a, cell[0]), dtype
        assert np.array_equal(a, _expected(np.exp(data), dtype)), dtype
