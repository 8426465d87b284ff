"""The conversions of PyTensor's op classes (see ``tensorgraph.pytensor.convert``).

Each builds the tensorgraph op that computes what the PyTensor op computes, from the op's
props and the node's converted inputs. They cover the ops PyMC's log-densities and their
gradients use after PyTensor's ``fast_run`` rewrites (elementwise scalar ops, reductions,
indexing and its increments, shapes, joins, dots, Cholesky and triangular solves), PyTensor's
``OpFromGraph`` (inlined) and ``Blockwise`` (the core op converted, then vectorized). A case
a conversion cannot express raises NotImplementedError and the node runs PyTensor's
``perform`` instead.
"""

from __future__ import annotations

import functools
import importlib
import inspect

from pytensor import scalar as ps
from pytensor.compile.builders import OpFromGraph
from pytensor.raise_op import CheckAndRaise as PtCheckAndRaise
from pytensor.tensor.blockwise import Blockwise as PtBlockwise
from pytensor.tensor.type_other import MakeSlice

from tensorgraph.compile.ops import DeepCopyOp
from tensorgraph.graph.basic import Constant, Variable, clone_replace
from tensorgraph.graph.replace import vectorize_graph
from tensorgraph.pytensor.convert import (
    convert_node,
    convert_type,
    from_pytensor,
    register,
)
from tensorgraph.pytensor.perform_node import PyTensorPerform
from tensorgraph.raise_op import CheckAndRaise
from tensorgraph.scalar.basic import Cast, ScalarOp
from tensorgraph.tensor import math as tm
from tensorgraph.tensor.basic import as_tensor_variable
from tensorgraph.tensor.creation import ARange, Eye, alloc
from tensorgraph.tensor.diagonal import ExtractDiag
from tensorgraph.tensor.dot import Dot
from tensorgraph.tensor.elemwise import DimShuffle, Elemwise
from tensorgraph.tensor.extra_ops import CumOp, Repeat
from tensorgraph.tensor.join import Join, MakeVector, Split
from tensorgraph.tensor.linalg.decomposition.cholesky import Cholesky
from tensorgraph.tensor.linalg.inverse import MatrixInverse
from tensorgraph.tensor.linalg.solvers import Solve, SolveTriangular
from tensorgraph.tensor.linalg.summary import Det
from tensorgraph.tensor.reduction import Argmax, CAReduce, Prod, Sum
from tensorgraph.tensor.scalar_convert import ScalarFromTensor, TensorFromScalar
from tensorgraph.tensor.shape import Reshape, Shape, Shape_i, specify_shape
from tensorgraph.tensor.special import LogSoftmax, Softmax
from tensorgraph.tensor.subtensor import (
    advanced_inc_subtensor1,
    advanced_set_subtensor1,
    advanced_subtensor1,
    getitem,
    inc_subtensor,
    set_subtensor,
)

__all__: list[str] = []

# by module path: ``pytensor.tensor``'s attributes ``shape``, ``math``... are functions too
ptb, pt_blas, pt_elemwise, pt_extra, pt_math, pt_shape, pt_slinalg, pt_sub = (
    importlib.import_module(f"pytensor.tensor.{name}") for name in (
        "basic", "blas", "elemwise", "extra_ops", "math", "shape", "slinalg", "subtensor"))

_SCALAR_MODULES = ("tensorgraph.scalar.basic", "tensorgraph.scalar.math",
                   "tensorgraph.tensor.scalar_special", "tensorgraph.scalar.special_functions")


@functools.cache
def _scalar_classes() -> dict:
    """tensorgraph's scalar op classes by name (they keep PyTensor's class names)."""
    out = {}
    for name in _SCALAR_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:  # pragma: no cover - a module that moved
            continue
        for cls_name, cls in vars(module).items():
            if inspect.isclass(cls) and issubclass(cls, ScalarOp):
                out.setdefault(cls_name, cls)
    return out


def scalar_op(pt_op):
    """The tensorgraph scalar op computing what PyTensor's scalar op ``pt_op`` computes."""
    name = type(pt_op).__name__
    if isinstance(pt_op, ps.Cast):
        return Cast(pt_op.o_type.dtype)
    cls = _scalar_classes().get(name)
    if cls is None or cls.__props__:
        raise NotImplementedError(f"tensorgraph has no scalar op {name}")
    return cls()


@register(pt_elemwise.Elemwise)
def _elemwise(op, node, *inputs):
    return Elemwise(scalar_op(op.scalar_op))(*inputs)


@register(pt_elemwise.DimShuffle)
def _dimshuffle(op, node, x):
    return DimShuffle(op.input_ndim, op.new_order)(x)


def _out_dtype(node) -> str:
    return node.outputs[0].type.dtype


@register(pt_elemwise.CAReduce)
def _careduce(op, node, x):
    axis = None if op.axis is None else tuple(op.axis)
    acc = getattr(op, "acc_dtype", None)
    if isinstance(op, pt_math.Sum):
        return Sum(axis, dtype=_out_dtype(node), acc_dtype=acc)(x)
    if isinstance(op, pt_math.Prod):
        if getattr(op, "no_zeros_in_input", False):
            pass  # the same product; only PyTensor's gradient reads it
        return Prod(axis, dtype=_out_dtype(node), acc_dtype=acc)(x)
    return CAReduce(scalar_op(op.scalar_op), axis, dtype=_out_dtype(node), acc_dtype=acc)(x)


# ----------------------------------------------------------------------------------------------
# indexing


def _index(op, values) -> tuple:
    """The index tuple of a basic (inc)subtensor: PyTensor's ``idx_list`` with its index inputs
    (already converted) in place of its scalar types."""
    return tuple(pt_sub.indices_from_subtensor(list(values), op.idx_list))


@register(MakeSlice)
def _make_slice(op, node, *parts):
    return slice(*parts)


@register(pt_sub.Subtensor)
def _subtensor(op, node, x, *index):
    return getitem(x, _index(op, index))


@register(pt_sub.IncSubtensor)
def _inc_subtensor(op, node, x, y, *index):
    view = getitem(x, _index(op, index))
    return set_subtensor(view, y) if op.set_instead_of_inc else inc_subtensor(view, y)


@register(pt_sub.AdvancedSubtensor1)
def _advanced_subtensor1(op, node, x, ilist):
    return advanced_subtensor1(x, ilist)


@register(pt_sub.AdvancedIncSubtensor1)
def _advanced_inc_subtensor1(op, node, x, y, ilist):
    if op.set_instead_of_inc:
        return advanced_set_subtensor1(x, y, ilist)
    return advanced_inc_subtensor1(x, y, ilist)


def _advanced_index(op, values) -> tuple:
    idx_list = getattr(op, "idx_list", None)
    if idx_list:  # PyTensor 3 keeps the slices' structure in the op, as basic indexing does
        return tuple(pt_sub.indices_from_subtensor(list(values), idx_list))
    return tuple(values)


@register(pt_sub.AdvancedSubtensor)
def _advanced_subtensor(op, node, x, *index):
    return getitem(x, _advanced_index(op, index))


@register(pt_sub.AdvancedIncSubtensor)
def _advanced_inc_subtensor(op, node, x, y, *index):
    view = getitem(x, _advanced_index(op, index))
    if op.set_instead_of_inc:
        return set_subtensor(view, y)
    # PyTensor's ignore_duplicates is numpy's x[idx] += y (a repeated index counts once)
    return inc_subtensor(view, y, ignore_duplicates=bool(getattr(op, "ignore_duplicates", False)))


# ----------------------------------------------------------------------------------------------
# shapes, joins, creation


def _constant_int(var, what: str) -> int:
    if isinstance(var, Constant):
        return int(var.data)
    raise NotImplementedError(f"the {what} is not a constant")


@register(ptb.Alloc)
def _alloc(op, node, value, *shape):
    return alloc(value, *shape)


@register(ptb.Join)
def _join(op, node, axis, *tensors):
    return Join(_constant_int(axis, "join axis"))(*tensors)


@register(ptb.Split)
def _split(op, node, x, axis, sizes):
    return Split(op.len_splits, _constant_int(axis, "split axis"))(x, sizes)


@register(ptb.MakeVector)
def _make_vector(op, node, *values):
    return MakeVector(op.dtype)(*values)


@register(pt_shape.Reshape)
def _reshape(op, node, x, shape):
    return Reshape(op.ndim)(x, shape)


@register(pt_shape.Shape)
def _shape(op, node, x):
    return Shape()(x)


@register(pt_shape.Shape_i)
def _shape_i(op, node, x):
    return Shape_i(op.i)(x)


@register(pt_shape.SpecifyShape)
def _specify_shape(op, node, x, *shape):
    return specify_shape(x, list(shape))


@register(pt_extra.CumOp)
def _cumop(op, node, x):
    return CumOp(op.axis, op.mode)(x)


@register(ptb.ExtractDiag)
def _extract_diag(op, node, x):
    return ExtractDiag(op.offset, op.axis1, op.axis2)(x)


# ----------------------------------------------------------------------------------------------
# products and linear algebra


@register(pt_math.Dot)
def _dot(op, node, a, b):
    return Dot()(a, b)


@register(pt_blas.Gemv)
def _gemv(op, node, y, alpha, a, x, beta):
    return tm.add(tm.mul(beta, y), tm.mul(alpha, Dot()(a, x)))


@register(pt_blas.Gemm)
def _gemm(op, node, z, alpha, a, b, beta):
    return tm.add(tm.mul(beta, z), tm.mul(alpha, Dot()(a, b)))


@register(pt_blas.Dot22)
def _dot22(op, node, a, b):
    return Dot()(a, b)


@register(pt_slinalg.Cholesky)
def _cholesky(op, node, x):
    # PyTensor's Cholesky gives NaNs where the matrix is not positive definite
    return Cholesky(lower=op.lower, on_error="nan")(x)


@register(pt_slinalg.SolveTriangular)
def _solve_triangular(op, node, a, b):
    return SolveTriangular(trans=0, lower=op.lower, unit_diagonal=op.unit_diagonal,
                           b_ndim=op.b_ndim)(a, b)


# ----------------------------------------------------------------------------------------------
# ops whose tensorgraph twin has the same name, props and inputs


def _twin(tg_class):
    """The conversion building ``tg_class`` from the PyTensor op's props of the same names (those
    tensorgraph lacks, PyTensor's ``overwrite_*`` flags, only say where PyTensor writes)."""

    def convert(op, node, *inputs):
        props = {name: getattr(op, name) for name in tg_class.__props__ if hasattr(op, name)}
        return tg_class(**props)(*inputs)

    return convert


_TWINS = {
    "pytensor.compile.ops.DeepCopyOp": DeepCopyOp,
    "pytensor.tensor.basic.ARange": ARange,
    "pytensor.tensor.basic.Eye": Eye,
    "pytensor.tensor.basic.ScalarFromTensor": ScalarFromTensor,
    "pytensor.tensor.basic.TensorFromScalar": TensorFromScalar,
    "pytensor.tensor.special.Softmax": Softmax,
    "pytensor.tensor.special.LogSoftmax": LogSoftmax,
    "pytensor.tensor.math.Argmax": Argmax,
    "pytensor.tensor.extra_ops.Repeat": Repeat,
    "pytensor.tensor.nlinalg.MatrixInverse": MatrixInverse,
    "pytensor.tensor.nlinalg.Det": Det,
    "pytensor.tensor.slinalg.Solve": Solve,
}
for _path, _tg_class in _TWINS.items():
    _module, _, _name = _path.rpartition(".")
    _pt_class = getattr(importlib.import_module(_module), _name, None)
    if _pt_class is not None:  # a PyTensor without it: its nodes run PyTensor's perform
        register(_pt_class)(_twin(_tg_class))


# ----------------------------------------------------------------------------------------------
# checks, inner graphs


@register(PtCheckAndRaise)
def _check_and_raise(op, node, x, *conditions):
    return CheckAndRaise(op.exc_type, str(op.msg))(x, *conditions)


@register(OpFromGraph)
def _op_from_graph(op, node, *inputs):
    inner_in, inner_out = from_pytensor(list(op.inner_outputs), list(op.inner_inputs))
    replace = {i: as_tensor_variable(v) if not isinstance(v, Variable) else v
               for i, v in zip(inner_in, inputs)}
    return clone_replace(inner_out, replace=replace)


@register(PtBlockwise)
def _blockwise(op, node, *inputs):
    core = op._create_dummy_core_node(node.inputs)
    dummies = [convert_type(i.type)(name=i.name) for i in core.inputs]
    core_out = convert_node(core, dummies)
    if any(isinstance(o.owner.op, PyTensorPerform) for o in core_out if o.owner is not None):
        raise NotImplementedError(f"the core op {op.core_op} has no conversion")
    return vectorize_graph(core_out, dict(zip(dummies, inputs)))
