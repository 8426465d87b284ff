"""Symbolic tensors (``import tensorgraph.tensor as tt``): types, constructors and operations.

Every module below defines ``__all__``; its public functions are re-exported here so that
``tt.matrix``, ``tt.exp``, ``tt.sum``, ``tt.dot``, ``tt.reshape``... all live in one namespace.
"""

from tensorgraph.tensor.type import *  # noqa: F401,F403  constructors: scalar, fmatrix, dvectors...
from tensorgraph.tensor.type import CONSTRUCTORS, TensorType, tensor
from tensorgraph.tensor.basic import (  # noqa: F401
    NotScalarConstantError, as_tensor, as_tensor_variable, constant, get_scalar_constant_value,
    get_underlying_scalar_constant_value,
)
from tensorgraph.tensor.type_other import NoneConst  # noqa: F401
from tensorgraph.tensor.scalar_convert import scalar_from_tensor, tensor_from_scalar  # noqa: F401
from tensorgraph.tensor.variable import TensorConstant, TensorVariable
from tensorgraph.tensor.elemwise import DimShuffle, Elemwise
from tensorgraph.tensor.math import *  # noqa: F401,F403
from tensorgraph.tensor.reduction import *  # noqa: F401,F403
from tensorgraph.gradient import Lop, Rop, grad, hessian, jacobian  # noqa: E402
from tensorgraph.tensor import random  # noqa: E402,F401  (also registers shared(generator))
from tensorgraph.tensor.dot import *  # noqa: F401,F403
from tensorgraph.tensor import special  # noqa: E402,F401  (tt.special.softmax, ...)
from tensorgraph.tensor.special import binary_crossentropy, categorical_crossentropy, relu  # noqa: E402,F401
from tensorgraph.tensor.shape import *  # noqa: F401,F403
from tensorgraph.tensor.creation import *  # noqa: F401,F403
from tensorgraph.tensor.join import *  # noqa: F401,F403
from tensorgraph.tensor.subtensor import *  # noqa: F401,F403
from tensorgraph.tensor.extra_ops import *  # noqa: F401,F403
from tensorgraph.tensor.sort import argsort, sort  # noqa: F401
from tensorgraph.tensor.nonzero import flatnonzero, nonzero, nonzero_values  # noqa: F401
from tensorgraph.tensor.diagonal import *  # noqa: F401,F403
from tensorgraph.tensor.rearrange import *  # noqa: F401,F403
from tensorgraph.tensor.einsum import einsum  # noqa: F401
from tensorgraph.tensor import extra_ops  # noqa: E402,F401  (tt.extra_ops.cumsum, ...)
from tensorgraph.tensor import blockwise  # noqa: E402,F401  (registers vectorize_graph's rules)
from tensorgraph.tensor.functional import vectorize  # noqa: E402,F401
from numpy import e, euler_gamma, inf, nan, newaxis, pi  # noqa: E402,F401  (as in PyTensor)

# Subpackages loaded on first use (``tt.linalg.solve``): linear algebra pulls in scipy.linalg
# when it runs, and is not needed to build most graphs.
_LAZY_MODULES = ("linalg", "nlinalg", "slinalg")


def __getattr__(name):
    if name in _LAZY_MODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
