"""Numba for ``Assert`` (its conditions checked, its error raised with its message) and
``IndexLoop`` (the rows of ``jacobian`` / ``hessian``).
``ifelse`` is not in the table: the generated code puts each side's own nodes in the two
blocks of an ``if`` (``tensorgraph.link.numba.codegen``)."""

from __future__ import annotations

from tensorgraph.gradient import IndexLoop
from tensorgraph.link.numba import register
from tensorgraph.raise_op import Assert


@register(Assert)
def numba_assert(op, node, code):
    x, *conditions = code.inputs
    for k, condition in enumerate(conditions):
        with code.block(f"if not {condition}[()]:"):
            code.line(code.fail(op.error, f"{op.msg} (condition {k} is false)"))
    code.line(f"{code.outputs[0]} = {x}")


@register(IndexLoop)
def numba_index_loop(op, node, code):
    """The rows of a jacobian (or hessian): the inner graph written as a function of its own,
    called for each index, its outputs stacked."""
    from tensorgraph.link.random_plan import RandomPlan
    from tensorgraph.link.numba.codegen import GraphSource

    prefix = f"loop{code.position}_"
    inner = GraphSource(op.fgraph, RandomPlan(op.fgraph), prefix=prefix, inline_constants=True)
    functions = inner.as_helpers(f"{prefix}body")
    if functions is None:
        names = ", ".join(sorted({str(n.op) for n, _ in inner.problems}))
        raise NotImplementedError(f"its inner graph has ops Numba cannot run: {names}")
    for name, source in functions.items():
        code.helper(name, source)
    n, *outer = code.inputs
    length, index = code.name("n"), code.name("index")
    code.line(f"{length} = {n}[()]")
    for out, k, var in zip(code.outputs, op.shape_of, node.outputs):
        code.line(f"{out} = np.empty(({length},) + {outer[k]}.shape, np.{var.dtype})")
    row = code.name("row")
    with code.block(f"for {row} in range({length}):"):
        code.line(f"{index} = np.array(np.int64({row}))")
        results = code.name("r")
        code.line(f"{results} = {prefix}body({', '.join([index] + outer)})")
        for k, out in enumerate(code.outputs):
            code.line(f"{out}[{row}] = {results}[{k}]")
