"""Graph objects: variables, nodes, ops, types, function graphs and traversal."""

from tensorgraph.graph.basic import (
    Apply,
    Constant,
    Variable,
    ancestors,
    applys_between,
    clone,
    clone_get_equiv,
    clone_replace,
    graph_inputs,
    io_toposort,
)
from tensorgraph.graph.fg import Feature, FunctionGraph
from tensorgraph.graph.op import Op
from tensorgraph.graph.type import Type
from tensorgraph.graph.utils import (
    InconsistencyError,
    MissingInputError,
    TestValueError,
)

__all__ = [
    "Apply", "Constant", "Variable", "ancestors", "applys_between", "clone", "clone_get_equiv",
    "clone_replace", "graph_inputs", "io_toposort", "Feature", "FunctionGraph", "Op", "Type",
    "InconsistencyError", "MissingInputError", "TestValueError",
]
