"""``vectorize``: numpy's ``np.vectorize`` for symbolic functions, built on ``vectorize_graph``.

``vectorize(f, signature='(n),(n)->()')(xs, ys)`` builds ``f`` once on inputs of the core
shapes the signature gives and batches the graph over whatever leading dimensions ``xs`` and
``ys`` have (broadcasting them). Without a signature every input and output is a scalar
item, as for an elementwise function.
"""

from __future__ import annotations

import re

from tensorgraph.graph.replace import vectorize_graph
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.type import TensorType

__all__ = ["vectorize"]


def _parse(signature: str):
    match = re.fullmatch(r"\s*(.*?)\s*->\s*(.*?)\s*", signature)
    if match is None:
        raise ValueError(f"vectorize: signature {signature!r} is not of the form "
                         "'(m,n),(n)->(m)'")
    groups = [re.findall(r"\(([^)]*)\)", part) for part in match.groups()]
    return [[0 if not g.strip() else len(g.split(",")) for g in part] for part in groups]


def vectorize(func, signature=None):
    """A function applying the symbolic ``func`` over the leading (batch) dimensions of its
    inputs; ``signature`` gives the core dimensions of each input and output, as for
    ``np.vectorize``. Usable as a decorator: ``@partial(vectorize, signature=...)``."""
    core = _parse(signature) if signature is not None else None

    def vectorized(*inputs):
        inputs = [as_tensor_variable(i) for i in inputs]
        core_ndims = core[0] if core is not None else [0] * len(inputs)
        if len(core_ndims) != len(inputs):
            raise TypeError(f"vectorize: the signature {signature!r} has {len(core_ndims)} "
                            f"inputs, got {len(inputs)}")
        placeholders = []
        for k, (var, nd) in enumerate(zip(inputs, core_ndims)):
            if var.type.ndim < nd:
                raise ValueError(f"vectorize: input {k} ({var}, {var.type}) has fewer than "
                                 f"the {nd} core dimensions of the signature")
            placeholders.append(TensorType(var.type.dtype, var.type.shape[var.type.ndim - nd:])())
        outputs = func(*placeholders)
        single = not isinstance(outputs, (list, tuple))
        outputs = [outputs] if single else list(outputs)
        outputs = [as_tensor_variable(o) for o in outputs]
        batched = vectorize_graph(outputs, dict(zip(placeholders, inputs)))
        return batched[0] if single else batched

    vectorized.__name__ = getattr(func, "__name__", "vectorized")
    vectorized.__doc__ = getattr(func, "__doc__", None)
    return vectorized
