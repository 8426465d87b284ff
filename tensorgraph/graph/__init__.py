"""Graph objects: variables, nodes, ops, types, function graphs and traversal."""

from tensorgraph.graph.basic import (
    Apply,
    Constant,
    Variable,
    ancestors,
    apply_ancestors,
    applys_between,
    clone,
    clone_get_equiv,
    clone_replace,
    equal_computations,
    graph_inputs,
    io_toposort,
)
from tensorgraph.graph.fg import Feature, FunctionGraph
from tensorgraph.graph.op import Op
from tensorgraph.graph.type import Type
from tensorgraph.graph.utils import (
    InconsistencyError,
    MethodNotDefined,
    MissingInputError,
    TestValueError,
)

__all__ = [
    "Apply", "Constant", "Variable", "ancestors", "apply_ancestors", "applys_between", "clone",
    "clone_get_equiv", "clone_replace", "equal_computations", "graph_inputs", "io_toposort",
    "Feature", "FunctionGraph", "Op", "Type", "InconsistencyError", "MethodNotDefined",
    "MissingInputError", "TestValueError", "rewrite_graph",
]

#: PyTensor keeps these in ``pytensor.graph``; here they live in a higher layer and are
#: imported on first use (the graph package itself never imports them)
_HIGHER_LAYER = {"rewrite_graph": "tensorgraph.rewriting.utils"}


def __getattr__(name):
    module = _HIGHER_LAYER.get(name)
    if module is None:
        raise AttributeError(f"module 'tensorgraph.graph' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
