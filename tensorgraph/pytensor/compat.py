"""The PyTensor names the bridge uses, found where each supported PyTensor keeps them.

Why one place: the bridge supports the PyTensor 2.38 that PyMC pins and PyTensor 3.x, which
moved a few names (graph traversal functions) and changed a few ops' props; every such
difference is answered here, so the conversions read one namespace. PyTensor is imported on
the first use, never by ``import tensorgraph``.
"""

from __future__ import annotations

import functools
import types

__all__ = ["pytensor_modules", "version"]


@functools.cache
def pytensor_modules() -> types.SimpleNamespace:
    """The PyTensor classes and functions the bridge reads, or an ImportError naming the extra."""
    try:
        import pytensor
    except ImportError as exc:
        raise ImportError(f"tensorgraph.pytensor needs PyTensor, which is not installed here "
                          f"({exc}); install it with: pip install tensorgraph[pytensor]") from None
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.basic import Constant, Variable
    from pytensor.graph.fg import FunctionGraph
    from pytensor.scalar.basic import ScalarType
    from pytensor.tensor.random.type import RandomGeneratorType
    from pytensor.tensor.type import TensorType
    from pytensor.tensor.type_other import NoneTypeT, SliceType

    try:  # PyTensor >= 2.31 keeps the traversals in graph.traversal
        from pytensor.graph.traversal import graph_inputs, io_toposort
    except ImportError:  # pragma: no cover - older PyTensor
        from pytensor.graph.basic import graph_inputs, io_toposort
    return types.SimpleNamespace(
        pytensor=pytensor, SharedVariable=SharedVariable, Constant=Constant, Variable=Variable,
        FunctionGraph=FunctionGraph, ScalarType=ScalarType,
        RandomGeneratorType=RandomGeneratorType, TensorType=TensorType, NoneTypeT=NoneTypeT,
        SliceType=SliceType, graph_inputs=graph_inputs, io_toposort=io_toposort)


def version() -> tuple[int, int]:
    """PyTensor's (major, minor) version."""
    major, minor = pytensor_modules().pytensor.__version__.split(".")[:2]
    return int(major), int(minor)
