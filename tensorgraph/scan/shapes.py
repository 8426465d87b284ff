"""What a scan's outputs look like without running it: shapes and dependencies.

* ``inner_output_shapes``: the shape of each nit_sot output's step, from the inner graph's
  shape inference with each inner input's sizes replaced by the outer sizes they stand for
  (a sequence tap by the sequence's sizes after the first, ...); a size that needs inner
  values is left unknown (``None``).
* ``empty_output_shape``: the same sizes as numbers, for an output of a loop of zero steps.
* ``outer_dependencies``: which outer inputs each outer output depends on, through the
  recurrences (for ``connection_pattern``).
"""

from __future__ import annotations

import tensorgraph.tensor as tt
from tensorgraph.gradient import _run_graph
from tensorgraph.graph.basic import Constant, clone_replace, graph_inputs, io_toposort
from tensorgraph.graph.fg import FunctionGraph
from tensorgraph.tensor.join import make_vector
from tensorgraph.tensor.rewriting.shape import shape_feature
from tensorgraph.tensor.shape import Shape, Shape_i
from tensorgraph.tensor.type import TensorType


class _ShapeProgram:
    """Per nit_sot output, its step's sizes as expressions of symbols standing for the inner
    inputs' sizes (``symbols[i][d]``: size ``d`` of inner input ``i``), None where a size
    needs values."""

    def __init__(self, op):
        fg, _ = op.fgraph.clone_get_equiv()
        feature = shape_feature(fg)
        self.symbols = []
        replace = {}
        for i, inp in enumerate(fg.inputs):
            ndim = inp.type.ndim if isinstance(inp.type, TensorType) else 0
            self.symbols.append([tt.scalar(f"size{d} of inner input {i}", dtype="int64")
                                 for d in range(ndim)])
        positions = {inp: i for i, inp in enumerate(fg.inputs)}
        info = op.info
        self.exprs = []
        for m in range(info.n_nit_sot):
            out = fg.outputs[info.n_states + m]
            entries = []
            for entry in feature.shape_tuple(out) or ():
                for node in io_toposort(graph_inputs([entry]), [entry]):
                    src = node.inputs[0] if node.inputs else None
                    if src in positions and isinstance(node.op, Shape_i):
                        replace[node.outputs[0]] = self.symbols[positions[src]][node.op.i]
                    elif src in positions and isinstance(node.op, Shape):
                        replace[node.outputs[0]] = make_vector(*self.symbols[positions[src]])
                expr = clone_replace(entry, replace) if replace else entry
                free = [v for v in graph_inputs([expr]) if not isinstance(v, Constant)]
                known = {s for sizes in self.symbols for s in sizes}
                entries.append(expr if all(v in known for v in free) else None)
            self.exprs.append(entries)
        flat = [e for entries in self.exprs for e in entries if e is not None]
        all_symbols = [s for sizes in self.symbols for s in sizes]
        self._fgraph = FunctionGraph(all_symbols, flat, clone=False) if flat else None

    def evaluate(self, sizes: list) -> list:
        """The sizes of every nit_sot output (None where unknown) for these inner input
        sizes (``sizes[i]``: a tuple per inner input)."""
        values = []
        if self._fgraph is not None:
            flat_sizes = [int(s) for per_input in sizes for s in per_input]
            values = iter(_run_graph(self._fgraph, self._fgraph.toposort(), flat_sizes))
        return [[None if e is None else int(next(values)) for e in entries]
                for entries in self.exprs]


def _program(op) -> _ShapeProgram:
    if op._shape_exprs is None:
        op._shape_exprs = _ShapeProgram(op)
    return op._shape_exprs


def _inner_input_sizes(op, outer_sizes) -> list:
    """Per inner input, the sizes it has at every step, from the outer inputs' sizes
    (``outer_sizes[i]``: tuple per outer input, symbolic or numbers)."""
    info = op.info
    sizes = []
    for j, positions in enumerate(info.inner_seq_positions()):
        sizes.extend([tuple(outer_sizes[1 + j])[1:]] * len(positions))
    for k, positions in enumerate(info.inner_state_positions()):
        init = tuple(outer_sizes[info.outer_state_start + k])
        sizes.extend([init[1:] if info.is_buffer_init(k) else init] * len(positions))
    for pos in range(info.outer_shared_start, info.n_outer_inputs):
        sizes.append(tuple(outer_sizes[pos] or ()))
    return sizes


def inner_output_shapes(op, node, input_shapes) -> list:
    """Per nit_sot output, the sizes of one step (symbolic; None where unknown)."""
    program = _program(op)
    sizes = _inner_input_sizes(op, input_shapes)
    mapping = {}
    for symbols, values in zip(program.symbols, sizes):
        for s, v in zip(symbols, values):
            mapping[s] = v
    shapes = []
    for entries in program.exprs:
        shapes.append(tuple(None if e is None else clone_replace(e, mapping) for e in entries))
    return shapes


def empty_output_shape(op, node, inputs, m: int) -> tuple:
    """The shape of one step of nit_sot output ``m`` for a loop that ran no step: the static
    sizes, else the inferred ones, else 0."""
    import numpy as np

    static = node.outputs[op.info.n_states + m].type.shape[1:]
    if all(s is not None for s in static):
        return tuple(static)
    shapes = [np.shape(v) if isinstance(v, np.ndarray) else () for v in inputs]
    try:
        inferred = _program(op).evaluate(_inner_input_sizes(op, shapes))[m]
    except Exception:  # noqa: BLE001 - a size that cannot be computed without a step is 0
        inferred = [None] * len(static)
    return tuple(s if s is not None else (i if i is not None else 0)
                 for s, i in zip(static, inferred))


def outer_dependencies(op) -> list[set]:
    """Per outer output, the outer input positions it depends on (n_steps left out)."""
    info, fg = op.info, op.fgraph
    origin = {}  # inner input -> ("outer", position) or ("state", k) or ("shared", q)
    for j, positions in enumerate(info.inner_seq_positions()):
        for p in positions:
            origin[fg.inputs[p]] = ("outer", 1 + j)
    for k, positions in enumerate(info.inner_state_positions()):
        for p in positions:
            origin[fg.inputs[p]] = ("state", k)
    for q in range(info.n_shared):
        origin[fg.inputs[info.inner_shared_start + q]] = ("shared", q)
    for r in range(info.n_non_seqs):
        origin[fg.inputs[info.inner_non_seq_start + r]] = ("outer", info.outer_non_seq_start + r)
    direct = [{origin[v] for v in graph_inputs([out]) if v in origin} for out in fg.outputs]

    recurrent = {("state", k): info.outer_state_start + k for k in range(info.n_states)}
    recurrent.update({("shared", q): info.outer_shared_start + q
                      for q in range(info.n_shared)})
    inner_of = {("state", k): k for k in range(info.n_states)}
    inner_of.update({("shared", q): info.n_steps_outputs + q for q in range(info.n_shared)})

    def resolve(sources):
        """The outer inputs behind inner inputs: reading a state's past value brings in its
        initial value and what its steps depend on."""
        found = set()
        for source in sources:
            found |= {source[1]} if source[0] == "outer" else {recurrent[source]} | deps[source]
        return found

    # what each recurrence's steps depend on (a shared variable's final value is its initial
    # one after zero steps); grown until nothing changes
    deps = {key: ({pos} if key[0] == "shared" else set()) for key, pos in recurrent.items()}
    changed = True
    while changed:
        changed = False
        for key in recurrent:
            extra = resolve(direct[inner_of[key]])
            if not extra <= deps[key]:
                deps[key] |= extra
                changed = True

    result = [deps[("state", k)] for k in range(info.n_states)]
    result += [resolve(direct[info.n_states + m]) for m in range(info.n_nit_sot)]
    result += [deps[("shared", q)] for q in range(info.n_shared)]
    return result
