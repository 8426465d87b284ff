"""``tt.einsum``'s ``Einsum`` node is inlined when compiling into a graph of existing ops
(diagonal, sums, transposes, reshapes, matmul), so every whole-graph back end runs it with
numpy's values, in the contraction path's order too."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.graph.op_from_graph import OpFromGraph
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
    v = tt.tensor("v", shape=(3,))
    fixed = tt.specify_shape(m, (3, 3))   # static shapes: a searched path, ((1, 2), (0, 1))
    cases = [("bij,bjk->bik", (a, b)), ("ii->i", (m,)), ("ij,jk", (m, m)), ("...ij->...", (a,)),
             ("ij,jk,k->i", (fixed, fixed, v))]
    outs = [tt.einsum(s, *ops) for s, ops in cases]
    assert outs[-1].owner.op.optimized and outs[-1].owner.op.path == ((1, 2), (0, 1))
    f = tg.function([a, b, m, v], outs, mode=mode, on_unused_input="ignore")
    assert not any(isinstance(n.op, OpFromGraph) for n in f.maker.fgraph.toposort())
    rng = np.random.default_rng(0)
    values = {a: rng.normal(size=(2, 3, 4)), b: rng.normal(size=(2, 4, 3)),
              m: rng.normal(size=(3, 3)), v: rng.normal(size=3)}
    for (s, ops), got in zip(cases, f(values[a], values[b], values[m], values[v])):
        arrays = [values[m] if o is fixed else values[o] for o in ops]
        np.testing.assert_allclose(got, np.einsum(s, *arrays), rtol=1e-12,
                                   err_msg=s)
