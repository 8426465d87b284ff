"""``OpFromGraph`` where PyTensor code imports it (``pytensor.compile.builders``).

It is defined in the graph layer (``tensorgraph.graph.op_from_graph``), so that ops of the
tensor layer (``tensor.einsum.Einsum``) can be built on it; its inlining rewrite
(``inline_op_from_graph``, canonicalize) is registered with the tensor rewrites.
"""

from tensorgraph.graph.op_from_graph import OpFromGraph

__all__ = ["OpFromGraph"]
