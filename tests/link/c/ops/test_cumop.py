"""The C of ``CumOp`` (``cumsum`` / ``cumprod``, float32 and float64) gives numpy's bits: the
same sequential accumulation along the axis, for every axis, strided and empty inputs; other
dtypes (int results) run ``perform``. One compiled function serves every case."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.tensor.extra_ops import cumprod, cumsum


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cumsum_and_cumprod_in_c_give_numpys_bits(dtype):
    x = tt.tensor(dtype, shape=(None, None, None))
    outs = [f(x, axis) for f in (cumsum, cumprod) for axis in (0, 1, 2)] + [cumsum(x[:, ::-2], 1)]
    fn = tg.function([x], outs)
    fn.wait_optimized()
    kinds = {type(n.op).__name__: t.kind for n, t in zip(fn.vm.nodes, fn.vm.thunks)}
    assert kinds["CumOp"] == "c", kinds
    rng = np.random.default_rng(0)
    for shape in [(3, 4, 5), (1, 7, 2), (0, 3, 2), (2, 0, 3)]:
        v = (rng.normal(size=shape) * 1.7).astype(dtype)
        want = [f(v, axis) for f in (np.cumsum, np.cumprod) for axis in (0, 1, 2)]
        want.append(np.cumsum(v[:, ::-2], 1))
        for got, ref in zip(fn(v), want, strict=True):
            assert got.dtype == ref.dtype and got.shape == ref.shape
            np.testing.assert_array_equal(got, ref)


def test_integer_cumsum_runs_perform():
    x = tt.ivector("x")
    fn = tg.function([x], cumsum(x))
    fn.wait_optimized()
    np.testing.assert_array_equal(fn(np.array([1, 2, 3], dtype="int32")), [1, 3, 6])
