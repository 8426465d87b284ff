"""BLAS-shaped ops that the 'blas' rewrites put in place of ``dot``.

* ``Gemv``: ``beta * y + alpha * dot(A, x)`` (matrix-vector); ``Gemv(pair=f)`` also gives
  ``f`` of that and ``X.T @`` it in the same pass (``tensorgraph.tensor.gemv_pair``);
* ``Gemm``: ``beta * z + alpha * dot(a, b)`` (matrix-matrix);
* ``Dot22``: ``dot(a, b)`` of two matrices.

``alpha`` and ``beta`` are 0-d tensors of the output dtype; ``beta == 0`` ignores ``y``/``z``
entirely (BLAS semantics: a nan in ``y`` does not leak). Users do not build these: the
rewrites do (see ``tensorgraph.tensor.rewriting.blas``), and their class names are what tools
(and the seed exercise) check to tell that the fast path is used. ``perform`` is numpy (the
reference); their C (``tensorgraph/link/c/ops/blas.py``) calls the BLAS that
``config.blas__ldflags`` picks, or tensorgraph's own kernels, for float32 and float64.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Apply
from tensorgraph.graph.op import Op
from tensorgraph.tensor import gemv_pair
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.dot import added_mismatch, dot_mismatch, product_name
from tensorgraph.tensor.type import TensorType

__all__ = ["Gemv", "Gemm", "Dot22", "gemv", "gemm", "dot22"]


def _check(op, names_vars, ndims, dtype):
    for (name, var), ndim in zip(names_vars, ndims):
        if var.ndim != ndim:
            raise TypeError(f"{op}: {name} must be {ndim}-d, got {var} ({var.type})")
        if var.dtype != dtype:
            raise TypeError(f"{op}: {name} must have dtype {dtype}, got {var} ({var.type})")


class Gemv(Op):
    """``beta * y + alpha * dot(A, x)``; inputs ``(y, alpha, A, x, beta)``.

    ``Gemv(pair=f)``, with ``f`` a scalar ``Composite``, is the fused form the ``gemv_pair``
    rewrite builds: ``X @ w``, ``f`` of it and ``X.T @`` that in one pass over ``X`` (see
    ``tensorgraph.tensor.gemv_pair``)."""

    __props__ = ("pair",)

    def __init__(self, pair=None):
        if isinstance(pair, (bool, np.bool_)):
            # PyTensor's Gemv(inplace) flag: here the inplace choice belongs to the rewrites
            raise TypeError(f"Gemv(pair=...) takes a scalar Composite or None, got {pair!r}; "
                            "tensorgraph's Gemv has no inplace flag (use Gemv())")
        self.pair = pair

    def __str__(self):
        return "Gemv" if self.pair is None else f"Gemv{{pair={self.pair}}}"

    def make_node(self, *inputs):
        if self.pair is not None:
            return gemv_pair.make_node(self, *inputs)
        y, alpha, A, x, beta = map(as_tensor_variable, inputs)
        _check(self, [("y", y), ("alpha", alpha), ("A", A), ("x", x), ("beta", beta)],
               (1, 0, 2, 1, 0), y.dtype)
        shape = (A.type.shape[0] if A.type.shape[0] is not None else y.type.shape[0],)
        return Apply(self, [y, alpha, A, x, beta], [TensorType(y.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        if self.pair is not None:
            return gemv_pair.perform(self, node, inputs, output_storage)
        y, alpha, A, x, beta = inputs
        if A.shape[1] != x.shape[0] or (beta != 0 and A.shape[0] != y.shape[0]):
            raise ValueError(f"Gemv: shapes do not match: y {y.shape}, A {A.shape}, x {x.shape}")
        out = alpha * np.dot(A, x)
        if beta != 0:
            out = out + beta * y
        output_storage[0][0] = np.asarray(out, dtype=node.outputs[0].type.dtype)

    def error_headline(self, node, input_values):
        if self.pair is not None:
            return gemv_pair.error_headline(node, input_values)
        y_var, _, A_var, x_var, _ = node.inputs
        y, _, A, x, beta = input_values
        return dot_mismatch(A_var, x_var, A, x) or (
            added_mismatch(product_name(A_var, x_var), np.shape(A)[:1], y_var, y)
            if beta != 0 else None)

    def infer_shape(self, fgraph, node, input_shapes):
        if self.pair is not None:
            rows, cols = input_shapes[2]
            return [(rows,), (rows,), (cols,)]
        return [(input_shapes[2][0],)]


class Gemm(Op):
    """``beta * z + alpha * dot(a, b)``; inputs ``(z, alpha, a, b, beta)``."""

    __props__ = ()

    def make_node(self, z, alpha, a, b, beta):
        z, alpha, a, b, beta = map(as_tensor_variable, (z, alpha, a, b, beta))
        _check(self, [("z", z), ("alpha", alpha), ("a", a), ("b", b), ("beta", beta)],
               (2, 0, 2, 2, 0), z.dtype)
        shape = tuple(s if s is not None else t for s, t in
                      zip((a.type.shape[0], b.type.shape[1]), z.type.shape))
        return Apply(self, [z, alpha, a, b, beta], [TensorType(z.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        z, alpha, a, b, beta = inputs
        if a.shape[1] != b.shape[0] or (beta != 0 and (a.shape[0], b.shape[1]) != z.shape):
            raise ValueError(f"Gemm: shapes do not match: z {z.shape}, a {a.shape}, b {b.shape}")
        out = alpha * np.dot(a, b)
        if beta != 0:
            out = out + beta * z
        output_storage[0][0] = np.asarray(out, dtype=node.outputs[0].type.dtype)

    def error_headline(self, node, input_values):
        z_var, _, a_var, b_var, _ = node.inputs
        z, _, a, b, beta = input_values
        return dot_mismatch(a_var, b_var, a, b) or (
            added_mismatch(product_name(a_var, b_var), (np.shape(a)[0], np.shape(b)[1]),
                           z_var, z) if beta != 0 else None)

    def infer_shape(self, fgraph, node, input_shapes):
        return [(input_shapes[2][0], input_shapes[3][1])]


class Dot22(Op):
    """``dot(a, b)`` of two matrices of the same dtype."""

    __props__ = ()

    def make_node(self, a, b):
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        _check(self, [("a", a), ("b", b)], (2, 2), a.dtype)
        return Apply(self, [a, b], [TensorType(a.dtype, (a.type.shape[0], b.type.shape[1]))()])

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        if a.shape[1] != b.shape[0]:
            raise ValueError(f"Dot22: inner dimensions differ: {a.shape} and {b.shape}")
        output_storage[0][0] = np.asarray(np.dot(a, b), dtype=node.outputs[0].type.dtype)

    def error_headline(self, node, input_values):
        return dot_mismatch(*node.inputs, *input_values)

    def infer_shape(self, fgraph, node, input_shapes):
        return [(input_shapes[0][0], input_shapes[1][1])]


gemv = Gemv()
gemm = Gemm()
dot22 = Dot22()
