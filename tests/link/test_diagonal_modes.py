"""``diagonal`` (``ExtractDiag``) runs its own code in every mode: C in FAST_RUN (no numpy
``perform`` in the loop), and the JAX, NUMBA and PYTORCH back ends, with numpy's values for every
offset and pair of axes; PyMC's log-densities take diagonals of Cholesky factors."""

import pickle

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.link.c.ops import implementation
from tensorgraph.tensor.diagonal import ExtractDiag
from thread_checks import run_in_threads

MODES = ["FAST_RUN", "FAST_COMPILE", "JAX", "NUMBA", "PYTORCH"]
CASES = [((4, 5), 0, 0, 1), ((4, 5), 2, 0, 1), ((4, 5), -3, 0, 1), ((4, 5), 7, 0, 1),
         ((3, 4, 5), 1, 1, 2), ((3, 4, 5), -1, 2, 0), ((2, 3, 4, 5), 0, -1, 1)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape, offset, axis1, axis2", CASES)
def test_diagonal_gives_numpys_values(mode, shape, offset, axis1, axis2):
    x = tt.tensor("x", dtype="float64", shape=(None,) * len(shape))
    f = tg.function([x], tt.diagonal(x, offset, axis1, axis2) * 2, mode=mode)
    value = np.arange(np.prod(shape), dtype="float64").reshape(shape)
    view = value.transpose(*range(len(shape) - 1, -1, -1))      # not contiguous
    for v in (value, view):
        np.testing.assert_array_equal(f(v), 2 * np.diagonal(v, offset, axis1, axis2))


@pytest.mark.parametrize("dtype", ["int32", "float32", "bool"])
def test_diagonal_has_c(dtype):
    x = tt.tensor("x", dtype=dtype, shape=(None, None, None))
    node = tt.diagonal(x, 1, 0, 2).owner
    assert isinstance(node.op, ExtractDiag)
    assert implementation(node.op) is not None
    f = tg.function([x], tt.diagonal(x, 1, 0, 2), mode="FAST_RUN")
    value = (np.arange(60) % 3).astype(dtype).reshape(3, 4, 5)
    np.testing.assert_array_equal(f(value), np.diagonal(value, 1, 0, 2))


@pytest.mark.parametrize("mode", MODES)
def test_diagonal_functions_pickle_and_run_from_threads(mode):
    x = tt.dmatrix("x")
    f = pickle.loads(pickle.dumps(tg.function([x], tt.diagonal(x, 1).sum(), mode=mode)))
    values = [np.random.default_rng(k).standard_normal((6, 6)) for k in range(8)]
    wrong = []

    def work(k):
        if not np.allclose(f(values[k]), np.trace(values[k], 1)):
            wrong.append(k)

    run_in_threads(work, len(values))
    assert wrong == []
