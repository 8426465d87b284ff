"""``tt.einsum`` is a graph of existing ops (diagonal, sums, transposes, reshapes, matmul), so
every whole-graph back end runs it with numpy's values."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.link.backend import available


@pytest.mark.parametrize("mode, library", [
    ("JAX", "jax"), ("NUMBA", "numba"),
    # Inductor's cold compile of this graph takes ~35 s: the fast suite checks the graph
    # einsum builds in JAX and NUMBA, CI (--all) in PyTorch too
    pytest.param("PYTORCH", "torch", marks=pytest.mark.slow)])
def test_einsum_runs_in_every_mode(mode, library):
    if not available(library):
        pytest.skip(f"{library} is not installed")
    a, b, m = tt.dtensor3("a"), tt.dtensor3("b"), tt.dmatrix("m")
    cases = [("bij,bjk->bik", (a, b)), ("ii->i", (m,)), ("ij,jk", (m, m)), ("...ij->...", (a,))]
    f = tg.function([a, b, m], [tt.einsum(s, *ops) for s, ops in cases], mode=mode,
                    on_unused_input="ignore")
    rng = np.random.default_rng(0)
    values = {a: rng.normal(size=(2, 3, 4)), b: rng.normal(size=(2, 4, 3)),
              m: rng.normal(size=(3, 3))}
    for (s, ops), got in zip(cases, f(values[a], values[b], values[m])):
        np.testing.assert_allclose(got, np.einsum(s, *[values[o] for o in ops]), rtol=1e-12,
                                   err_msg=s)
