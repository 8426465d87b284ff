"""The fused form of ``Gemv``, ``Gemv(pair=f)``: ``X @ w``, an elementwise function of it, and
``X.T @`` that function, in one pass over ``X``.

The gradient of a linear model has this shape: ``z = X @ w``, ``d = f(z, ...)`` row by row,
``g = X.T @ d``. As two ``Gemv`` nodes, ``X`` is read twice; a 400 x 784 float32 ``X`` (1.25
MB) no longer fits one core's L2 cache, so the second read comes from L3 again. The pair walks
``X`` in blocks of 8 rows: the 8 dot products give 8 values of ``z``, ``f`` turns them into 8
values of ``d``, and those 8 rows of ``X``, still in L1, are added into ``g``. Each thread
(``config.openmp``) takes a block of rows and its own partial ``g``; the partial sums are added
in thread order. (The seed logistic-regression step: 37 us on one thread against 48 us for the
two products apart, 2026-11-22 at 20eea50.)

It stays a ``Gemv`` (the class, with the ``pair`` property set): it is two matrix-vector
products, and programs that look for a ``Gemv`` in the compiled graph to tell that the BLAS
path is used (Theano's logistic-regression example does) still find one.

Inputs ``(y1, alpha1, X, w, beta1, y2, alpha2, beta2, *extra)``; outputs

* ``z = beta1 * y1 + alpha1 * X @ w`` (``beta1 == 0``: ``y1`` not read), as ``Gemv``;
* ``d = f(z, *extra)``, ``f`` a scalar ``Composite`` whose first input is ``z``'s element and
  the others the ``extra`` vectors' (length ``X.shape[0]``, or static length 1: broadcast);
* ``g = beta2 * y2 + alpha2 * X.T @ d``.

The ``gemv_pair`` rewrite (``tensorgraph.tensor.rewriting.gemv_pair``) builds it from two
``Gemv`` nodes and the fused elementwise nodes between them; users do not.
"""

from __future__ import annotations

import numpy as np

from tensorgraph.graph.basic import Apply
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.dot import added_mismatch, dot_mismatch, product_name
from tensorgraph.tensor.type import TensorType

def make_node(op, y1, alpha1, X, w, beta1, y2, alpha2, beta2, *extra) -> Apply:
    """The node of ``Gemv(pair=f)`` (see the module docstring)."""
    f = op.pair
    y1, alpha1, X, w, beta1, y2, alpha2, beta2 = map(
        as_tensor_variable, (y1, alpha1, X, w, beta1, y2, alpha2, beta2))
    extra = [as_tensor_variable(e) for e in extra]
    dtype = X.dtype
    if dtype not in ("float32", "float64"):
        raise TypeError(f"{op}: X must be float32 or float64, got {X.type}")
    for name, var, ndim in (("y1", y1, 1), ("alpha1", alpha1, 0), ("X", X, 2), ("w", w, 1),
                            ("beta1", beta1, 0), ("y2", y2, 1), ("alpha2", alpha2, 0),
                            ("beta2", beta2, 0)):
        if var.ndim != ndim or var.dtype != dtype:
            raise TypeError(f"{op}: {name} must be a {ndim}-d {dtype} tensor, got {var.type}")
    if len(extra) + 1 != f.nin or f.nout != 1:
        raise TypeError(f"{op}: the scalar op takes {f.nin} inputs and gives {f.nout} "
                        f"outputs; expected 1 + {len(extra)} inputs and 1 output")
    for k, e in enumerate(extra):
        if e.ndim != 1:
            raise TypeError(f"{op}: extra input {k} must be a vector, got {e.type}")
    d_dtype = f.output_dtypes(dtype, *[e.dtype for e in extra])[0]
    if d_dtype != dtype:
        raise TypeError(f"{op}: the scalar op gives {d_dtype}, X.T @ d needs {dtype}")
    rows, cols = X.type.shape
    outputs = [TensorType(dtype, (rows,))(), TensorType(dtype, (rows,))(),
               TensorType(dtype, (cols,))()]
    return Apply(op, [y1, alpha1, X, w, beta1, y2, alpha2, beta2, *extra], outputs)


def perform(op, node, inputs, output_storage) -> None:
    """The numpy reference: two ``np.dot`` and the scalar op on whole vectors."""
    y1, alpha1, X, w, beta1, y2, alpha2, beta2, *extra = inputs
    n, m = X.shape
    if w.shape[0] != m or (beta1 != 0 and y1.shape[0] != n) or \
            (beta2 != 0 and y2.shape[0] != m):
        raise ValueError(f"{op}: shapes do not match: y1 {y1.shape}, X {X.shape}, "
                         f"w {w.shape}, y2 {y2.shape}")
    for k, (e, var) in enumerate(zip(extra, node.inputs[8:])):
        if e.shape[0] != n and var.type.shape[0] != 1:
            raise ValueError(f"{op}: extra input {k} has {e.shape[0]} elements, X has "
                             f"{n} rows")
    dtype = node.outputs[0].type.dtype
    z = alpha1 * np.dot(X, w)
    if beta1 != 0:
        z = z + beta1 * y1
    z = np.asarray(z, dtype=dtype)
    d = np.asarray(op.pair.impl(z, *extra), dtype=dtype)
    if d.shape != (n,):
        d = np.broadcast_to(d, (n,)).copy()
    g = alpha2 * np.dot(X.T, d)
    if beta2 != 0:
        g = g + beta2 * y2
    for cell, value in zip(output_storage, (z, d, np.asarray(g, dtype=dtype))):
        cell[0] = value


def error_headline(node, input_values) -> str | None:
    """A shape error of the pair in the user's names (see ``Op.error_headline``): the first
    product ``dot(X, w)``, the value added to it, the fused function's vectors, or the value
    added to ``dot(X.T, ...)``."""
    y1_var, _, X_var, w_var, _, y2_var, _, _, *extra_vars = node.inputs
    y1, _, X, w, beta1, y2, _, beta2, *extra = input_values
    n, m = np.shape(X)
    found = dot_mismatch(X_var, w_var, X, w) or (
        added_mismatch(product_name(X_var, w_var), (n,), y1_var, y1) if beta1 != 0 else None)
    for k, (e, var) in enumerate(zip(extra, extra_vars)):
        if found is None and np.shape(e)[0] != n and var.type.shape[0] != 1:
            found = (f"{var.name or f'vector {k} of the fused function'} has "
                     f"{np.shape(e)[0]} elements but {X_var.name or 'the matrix'} has {n} rows")
    if found is None and beta2 != 0:
        product = f"dot({X_var.name}.T, ...)" if X_var.name else "the second product"
        found = added_mismatch(product, (m,), y2_var, y2)
    return found
