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

#: PyTensor keeps these in ``pytensor.graph``; here they live in the rewriting layer, which
#: registers each here when it is imported (``provide``): the graph package never imports
#: upward. Name -> where it is defined.
_HIGHER_LAYER = {"rewrite_graph": "tensorgraph.rewriting.rewrite_graph"}


def provide(name: str, value) -> None:
    """Make ``tensorgraph.graph.<name>`` the higher layer's ``value`` (one of ``_HIGHER_LAYER``)."""
    if name not in _HIGHER_LAYER:
        raise KeyError(f"tensorgraph.graph.provide: expected one of {sorted(_HIGHER_LAYER)}, "
                       f"got {name!r}")
    globals()[name] = value


def __getattr__(name):
    if name not in _HIGHER_LAYER:
        raise AttributeError(f"module 'tensorgraph.graph' has no attribute {name!r}")
    raise AttributeError(f"tensorgraph.graph.{name} is {_HIGHER_LAYER[name]}, set here when the "
                         f"rewriting layer is imported (importing tensorgraph.tensor does): "
                         f"import tensorgraph.rewriting first, or use {_HIGHER_LAYER[name]}")
