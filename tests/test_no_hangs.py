"""No input makes compiling loop or blow up: each case runs in a subprocess with a time limit,
so a regression fails instead of hanging CI."""

import textwrap

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.graph import FunctionGraph
from tensorgraph.rewriting import in2out, node_rewriter
from tensorgraph.rewriting.basic import RewriteLimitError
from tensorgraph.tensor.elemwise import Elemwise


def run_limited(run_python, code):
    """``code`` in a fresh interpreter (``run_python`` kills it after 120 s)."""
    proc = run_python("-c", textwrap.dedent(code))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_inplace_advanced_inc_whose_value_views_its_target_compiles(run_python):
    """FAST_RUN rewriting looped forever: a replacement refused by the destroy handler was
    undone, the undo re-imported the old node, and the walk took it for a new one."""
    out = run_limited(run_python, """
        import numpy as np, tensorgraph as tg, tensorgraph.tensor as tt
        from tensorgraph.tensor.subtensor import AdvancedIncSubtensor
        x2, i, j = tt.dtensor3("x2"), tt.lvector("i"), tt.lvector("j")
        op = AdvancedIncSubtensor(("array", ("slice", None, None, None), "array"), inplace=True)
        f = tg.function([x2, i, j], op(x2, x2[0, :, 0], i, j) * 2, accept_inplace=True)
        print("COMPILED", f(np.zeros((2, 3, 2)), np.array([0, 1]), np.array([1, 0])).shape)
    """)
    assert "COMPILED (2, 3, 2)" in out


def test_a_fused_chain_reading_each_value_twice_compiles_in_linear_time(run_python):
    """The Composite's readable name wrote the DAG as a tree: 2**60 characters for 60 steps."""
    out = run_limited(run_python, """
        import time, numpy as np, tensorgraph as tg, tensorgraph.tensor as tt
        x = tt.dvector("x")
        y = x
        for k in range(60):
            y = tt.tanh(y * (k + 1.5)) + tt.exp(-y) * k
        started = time.time()
        f = tg.function([x], y, mode=tg.Mode("py", "fast_run"))
        (node,) = f.maker.fgraph.apply_nodes
        print("NAME", len(str(node.op)), "NODES", len(node.op.scalar_op.nodes))
        print("VALUE", np.isfinite(f(np.zeros(3))).all(), time.time() - started < 30)
    """)
    assert "NODES 359" in out and "VALUE True True" in out
    assert int(out.split("NAME ")[1].split()[0]) < 300


class _Again(Elemwise):
    """An Elemwise whose rewrite below replaces it by a new copy of itself, forever."""


@node_rewriter([Elemwise])
def _rebuild_forever(fgraph, node):
    if isinstance(node.op, _Again):
        return [_Again(node.op.scalar_op)(*node.inputs)]
    return None


def test_a_walking_rewriter_that_never_settles_stops_with_a_clear_error():
    from tensorgraph.scalar import math as psm

    x = tt.dvector("x")
    y = _Again(psm.exp)(x)
    fgraph = FunctionGraph([x], [y])
    with pytest.raises(RewriteLimitError, match="_rebuild_forever.* was applied"):
        in2out(_rebuild_forever).rewrite(fgraph)


def test_ordinary_graphs_stay_far_from_the_limits():
    x = tt.dmatrix("x")
    w = tg.shared(np.ones((3, 3)), name="w")
    cost = ((tt.tanh(tt.dot(x, w)) - 1) ** 2).sum()
    f = tg.function([x], cost, updates=[(w, w - 0.1 * tg.grad(cost, w))])
    assert np.isfinite(f(np.eye(3)))
