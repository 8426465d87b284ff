"""``RandomVariable``: an Op drawing from a distribution with a ``numpy.random.Generator``.

A node reads ``(rng, size, *params)`` and has two outputs, ``(next_rng, draw)``; calling the op
returns the draw. ``perform`` draws from a *copy* of the input generator (unless the op is
``inplace``, which declares it in ``destroy_map``), so the input value is never changed behind
the graph's back; the advanced copy is the ``next_rng`` output, which a shared generator takes
as its update.

``size`` is an int64 vector. An empty ``size`` (what ``size=None`` becomes) means "the
broadcast shape of the parameters", as in numpy; a non-empty one is the batch shape of the
draw, and must have a length known when the graph is built. ``size`` may be symbolic.

Random draws run in Python (numpy) in every mode, also once the C backend exists: numpy's
generators are the reference, and reproducing their streams in C would add nothing.
"""

from __future__ import annotations

import copy

import numpy as np

from tensorgraph.gradient import grad_undefined
from tensorgraph.graph.basic import Apply, Constant, Variable
from tensorgraph.graph.op import Op
from tensorgraph.graph.shared import shared
from tensorgraph.tensor.basic import as_tensor_variable, constant
from tensorgraph.tensor.join import stack
from tensorgraph.tensor.math import cast, maximum
from tensorgraph.tensor.random.type import RandomGeneratorType, random_generator_type
from tensorgraph.tensor.shape import shape_tuple
from tensorgraph.tensor.type import TensorType, normalize_dtype

__all__ = ["RandomVariable", "normalize_size"]


def normalize_size(size) -> Variable:
    """``size`` as an int64 vector variable: None -> empty, an int or scalar -> one entry."""
    if size is None:
        return constant(np.zeros(0, dtype="int64"))
    if isinstance(size, (int, np.integer)):
        size = (int(size),)
    if isinstance(size, (list, tuple)):
        if not size:
            return constant(np.zeros(0, dtype="int64"))
        if all(isinstance(s, (int, np.integer)) for s in size):
            return constant(np.asarray(size, dtype="int64"))
        entries = [constant(s, dtype="int64") if isinstance(s, (int, np.integer))
                   else as_tensor_variable(s) for s in size]
        for k, e in enumerate(entries):
            if e.type.ndim != 0 or not e.type.dtype.startswith(("int", "uint")):
                raise TypeError(f"size[{k}] must be an integer scalar, got {e} of type {e.type}")
        size = stack([cast(e, "int64") if e.type.dtype != "int64" else e for e in entries])
    size = as_tensor_variable(size)
    if size.type.ndim == 0:
        size = size.dimshuffle("x")
    if size.type.ndim != 1 or not size.type.dtype.startswith(("int", "uint")):
        raise TypeError(f"size must be None, an int, a tuple of ints or an integer vector, got "
                        f"{size} of type {size.type}")
    if size.type.shape[0] is None:
        raise TypeError(f"size must have a length known when the graph is built (it fixes the "
                        f"number of dimensions of the draw); {size} has an unknown length. "
                        "Give a tuple of scalars instead, e.g. size=(n, 3)")
    return cast(size, "int64") if size.type.dtype != "int64" else size


def _constant_entries(size: Variable) -> tuple:
    """Static sizes from a size vector: ints where known, None elsewhere."""
    if isinstance(size, Constant):
        return tuple(int(s) for s in size.data)
    node = size.owner
    if node is not None and type(node.op).__name__ == "MakeVector":
        return tuple(int(i.data) if isinstance(i, Constant) else None for i in node.inputs)
    if node is not None and type(node.op).__name__ == "Shape":   # size=x.shape
        return tuple(node.inputs[0].type.shape)
    return (None,) * size.type.shape[0]


class RandomVariable(Op):
    """A draw from the Generator method ``name`` (``uniform``, ``normal``, ...).

    Parameters
    ----------
    name : str
        The ``numpy.random.Generator`` method drawing the values (see ``rng_fn``).
    ndims_params : tuple of int
        Core number of dimensions of each parameter (0 for scalar parameters); extra leading
        dimensions are batch dimensions, broadcast like numpy.
    dtype : str
        Output dtype; ``'floatX'`` means ``config.floatX`` when the node is built.
    ndim_supp : int
        Number of dimensions of one draw (0: each draw is a scalar).
    inplace : bool
        Advance the input generator itself instead of a copy (set by rewrites).
    params : tuple of (name, default) pairs, optional
        The parameters' names and defaults (``inspect.Parameter.empty`` for a required one),
        so that the op is called like a function: ``normal(loc=1.0, size=(3,))``. Without
        them the parameters are positional.
    """

    __props__ = ("name", "ndims_params", "dtype", "ndim_supp", "inplace")
    default_output = 1
    # the draw's static shape reads the known entries of ``size`` (``size=x.shape``), so a
    # graph rebuilt with other inputs (``clone_replace(..., rebuild_strict=False)``) remakes
    # the node even where the size vector's type did not change
    _output_type_depends_on_input_value = True

    def __init__(self, name: str, ndims_params=(), dtype: str = "floatX", ndim_supp: int = 0,
                 inplace: bool = False, params=None):
        self.name = name
        self.ndims_params = tuple(ndims_params)
        self.dtype = dtype
        self.ndim_supp = ndim_supp
        self.inplace = inplace
        if inplace:
            self.destroy_map = {0: [0]}
        if params is not None and len(params) != len(self.ndims_params):
            raise ValueError(f"{name}: {len(params)} parameter names for "
                             f"{len(self.ndims_params)} parameters")
        self.params = None if params is None else tuple(params)

    def __str__(self):
        return f"{self.name}_rv{{inplace}}" if self.inplace else f"{self.name}_rv"

    # -- building ------------------------------------------------------------------------

    def __call__(self, *params, size=None, rng=None, dtype=None, name=None, **named):
        """Build a draw: ``op(*params, size=..., rng=...)`` returns the draw variable
        (parameters by name too, when the op has ``params``). A ``dtype`` other than the op's
        makes the draw with a copy of the op holding that dtype: the dtype is part of the op,
        so a node rebuilt by ``make_node`` (cloning, rewrites) keeps it."""
        params = self._bind(params, named)
        if rng is None:
            rng = shared(np.random.default_rng())
        op = self.with_dtype(dtype) if dtype is not None else self
        draw = Op.__call__(op, rng, size, *params)
        if name is not None:
            draw.name = name
        return draw

    def _bind(self, params, named) -> tuple:
        """The parameters in order, from positional and named arguments and defaults."""
        import inspect

        if self.params is None:
            if named:
                raise TypeError(f"{self.name}() got unexpected keyword arguments "
                                f"{sorted(named)}")
            return params
        names = [n for n, _ in self.params]
        if len(params) > len(names):
            raise TypeError(f"{self.name}() takes {len(names)} parameters ({', '.join(names)}),"
                            f" got {len(params)}")
        values = dict(zip(names, params))
        for key, value in named.items():
            if key not in names:
                raise TypeError(f"{self.name}() got an unexpected keyword argument {key!r}; "
                                f"its parameters are {', '.join(names)}")
            if key in values:
                raise TypeError(f"{self.name}() got parameter {key!r} twice")
            values[key] = value
        missing = [repr(key) for key, default in self.params
                   if key not in values and default is inspect.Parameter.empty]
        if missing:   # Python's own wording for a call without required arguments
            names = (missing[0] if len(missing) == 1 else
                     f"{', '.join(missing[:-1])} and {missing[-1]}")
            raise TypeError(f"{self.name}() missing {len(missing)} required positional "
                            f"argument{'s' if len(missing) > 1 else ''}: {names}")
        return tuple(values[key] if key in values else default for key, default in self.params)

    # -- the parts of a node, by PyTensor's names ----------------------------------------------

    def rng_param(self, node):
        """The generator input of a draw's node."""
        return node.inputs[0]

    def size_param(self, node):
        """The size input of a draw's node (an int64 vector; empty for size=None)."""
        return node.inputs[1]

    def dist_params(self, node):
        """The distribution parameters of a draw's node."""
        return node.inputs[2:]

    def with_dtype(self, dtype) -> "RandomVariable":
        """This op, or a copy of it whose draws have dtype ``dtype``."""
        dtype = normalize_dtype(dtype)
        if dtype == self.dtype:
            return self
        op = copy.copy(self)
        op.dtype = dtype
        return op

    def output_dtype(self, params) -> str:
        """The dtype of the draws for these parameters (the op's ``dtype``; 'floatX' is
        ``config.floatX`` when the node is built)."""
        return normalize_dtype(self.dtype)

    def make_node(self, rng, size, *params):
        if not isinstance(rng, Variable) or not isinstance(rng.type, RandomGeneratorType):
            raise TypeError(f"{self}: rng must be a variable holding a numpy.random.Generator "
                            f"(e.g. shared(np.random.default_rng(seed))), got {rng!r}")
        if len(params) != len(self.ndims_params):
            raise TypeError(f"{self}: expected {len(self.ndims_params)} parameters, got "
                            f"{len(params)}")
        size = normalize_size(size)
        params = [as_tensor_variable(p) for p in params]
        for k, (p, core) in enumerate(zip(params, self.ndims_params)):
            if p.type.ndim < core:
                raise TypeError(f"{self}: parameter {k} must have at least {core} dimension(s), "
                                f"got {p} of type {p.type}")
        shape = self._static_shape(size, params)
        draw = TensorType(self.output_dtype(params), shape)()
        return Apply(self, [rng, size, *params], [random_generator_type(), draw])

    def _batch_shape(self, params) -> tuple:
        """The broadcast static batch shape of the parameters."""
        batch = [p.type.shape[:p.type.ndim - core] for p, core in zip(params, self.ndims_params)]
        ndim = max((len(b) for b in batch), default=0)
        result = []
        for d in range(ndim):
            sizes = {b[d - ndim + len(b)] for b in batch if d - ndim + len(b) >= 0}
            known = {s for s in sizes if s is not None and s != 1}
            if len(known) > 1:
                raise ValueError(f"{self}: parameter shapes do not broadcast: "
                                 f"{[p.type.shape for p in params]}")
            if known:
                result.append(known.pop())
            elif sizes == {1}:
                result.append(1)
            else:
                result.append(None)
        return tuple(result)

    def _supp_shape(self, params) -> tuple:
        """Static shape of one draw (empty for scalar draws)."""
        return ()

    def _static_shape(self, size, params) -> tuple:
        entries = _constant_entries(size)
        batch = entries if entries else self._batch_shape(params)
        return tuple(batch) + self._supp_shape(params)

    # -- computing ---------------------------------------------------------------------------

    def rng_fn(self, rng, *params, **size):
        """Draw with ``rng`` (already copied if needed): ``rng_fn(rng, *params, size)``, the
        size (a tuple or None) last or by keyword, as PyTensor calls it."""
        if "size" in size:
            size = size.pop("size")
        elif len(params) == len(self.ndims_params) + 1:
            *params, size = params
        else:
            raise TypeError(f"{self.name}.rng_fn(rng, *params, size): expected "
                            f"{len(self.ndims_params)} parameters and the size")
        if size is not None and not isinstance(size, tuple):
            size = tuple(np.atleast_1d(size))
        return self.draw(rng, *params, size=size)

    def draw(self, rng, *params, size):
        """The draw itself (what subclasses define); ``size`` is a tuple or None."""
        return getattr(rng, self.name)(*params, size=size)

    def perform(self, node, inputs, output_storage):
        rng, size, *params = inputs
        if not self.inplace:
            rng = copy.deepcopy(rng)
        size = tuple(int(s) for s in size) if len(size) else None
        draw = self.draw(rng, *params, size=size)
        output_storage[0][0] = rng
        output_storage[1][0] = np.asarray(draw, dtype=node.outputs[1].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [None, self._infer_shape(node.inputs[1], node.inputs[2:], input_shapes[2:])]

    def _infer_shape(self, size, dist_params, param_shapes=None) -> tuple:
        """The symbolic shape of a draw: ``size`` (or the broadcast batch shape of the
        parameters when it is empty) followed by the shape of one draw."""
        size = normalize_size(size) if not isinstance(size, Variable) else size
        params = [as_tensor_variable(p) for p in dist_params]
        if param_shapes is None:
            param_shapes = [shape_tuple(p) for p in params]
        if size.type.shape[0]:
            batch = [size[k] for k in range(size.type.shape[0])]
        else:
            batch = _broadcast_shapes(
                [shape[:len(shape) - core] for shape, core in zip(param_shapes,
                                                                  self.ndims_params)],
                [p.type.shape[:p.type.ndim - core] for p, core in zip(params, self.ndims_params)])
        return tuple(batch) + self._supp_shape_symbolic(params, param_shapes)

    def _supp_shape_symbolic(self, params, param_shapes) -> tuple:
        return ()

    def connection_pattern(self, node):
        # the draw depends on everything, but is not differentiable w.r.t. anything
        return [[True, True] for _ in node.inputs]

    def L_op(self, inputs, outputs, output_grads):
        return [grad_undefined(self, k, inp, "Random draws have no gradient w.r.t. their "
                               "parameters here (no reparametrization).")
                for k, inp in enumerate(inputs)]


def _broadcast_shapes(shapes, static_shapes):
    """Symbolic numpy broadcasting of several shapes (tuples of symbolic sizes)."""
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for d in range(ndim):
        dims = []
        for shape, static in zip(shapes, static_shapes):
            k = d - ndim + len(shape)
            if k >= 0 and static[k] != 1:
                dims.append(shape[k])
        size = dims[0] if dims else constant(1, dtype="int64")
        for other in dims[1:]:
            size = maximum(size, other)
        result.append(size)
    return result
