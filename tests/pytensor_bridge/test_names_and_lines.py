"""Names and user lines through mode TENSORGRAPH (issue 34): the outputs keep the names the
function was given (PyMC's ``mu_logprob``...), through PyTensor's rewrites and tensorgraph's;
named intermediates keep theirs; every converted node has a user line: PyTensor's own, or the
one of what it computes from (PyMC's value variables carry their model statement), or the call
that compiled it, so the stepper and errors never say "created at (unknown)"."""

import numpy as np
import pytest

pytensor = pytest.importorskip("pytensor")

import pytensor.tensor as pt

import tensorgraph.pytensor as tgp
from tensorgraph.graph.basic import io_toposort
from tensorgraph.graph.utils import format_user_line


def test_output_names_survive_both_rewritings():
    x = pt.vector("x")
    total = (pt.exp(x) * 2).sum()
    total.name = "total"
    double = x * 2
    double.name = "double"
    fn = tgp.unwrap(pytensor.function([x], [total, double], mode="TENSORGRAPH", name="f"))
    assert [o.name for o in fn.maker.fgraph.outputs] == ["total", "double"]
    assert "total" in fn.dprint(file="str")
    assert fn.name == "f"  # the name given; not PyTensor's default, its caller's file:line
    assert tgp.unwrap(pytensor.function([x], total, mode="TENSORGRAPH")).name is None


def test_named_intermediates_and_lines_are_kept_by_the_conversion():
    x = pt.vector("x")
    h = pt.exp(x)
    h.name = "h"
    [out] = tgp.from_pytensor([(h + 1).sum()], [x])[1]
    nodes = io_toposort([], [out])
    assert any(o.name == "h" for n in nodes for o in n.outputs)
    lines = [format_user_line(n) for n in nodes]
    assert all("test_names_and_lines.py" in line for line in lines), lines
    assert any("h = pt.exp(x)" in line for line in lines)


def test_an_error_names_the_expression_not_the_compile_call():
    x, y = pt.vector("x"), pt.vector("y")
    z = (x + y) * 2
    # PyTensor's rewrites rebuild the graph inside pytensor.function: the nodes hold that
    # line's stack too, which is not where the expression was written
    f = pytensor.function([x, y], z.sum(), mode="TENSORGRAPH")
    with pytest.raises(ValueError, match=r"created at .*: z = \(x \+ y\) \* 2"):
        f(np.ones(3), np.ones(4))
