"""Node functions called from Python through ctypes, without the glue library.

The quick tier's first call should not wait for the glue library (``glue.h`` with Python.h
and numpy's headers: ~0.45 s of gcc, the longest compile of an empty cache, on the critical
path of the first result; 2026-12-07 at 7a8cf2b).
Its node functions need nothing of the glue: a node function
reads and writes ``tg_array``s and reports errors in a ``tg_ctx`` (runtime.h). So
``DirectCall`` lays those out with ctypes, passes the inputs' memory as borrowed arrays and
returns the outputs as ndarrays that own the buffers the function allocated. A parallel loop
runs its blocks one after another on the calling thread (no pool: ``tg_run``'s plain loop),
as many blocks as with the pool, so the bits are those of the glue's call. A call costs some
microseconds more than the glue's ``node_call``; the quick tier runs only until the
optimized code is ready.
"""

from __future__ import annotations

import ctypes

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.link.c.dtypes import MAXDIM

__all__ = ["DirectCall"]


class _Array(ctypes.Structure):
    """runtime.h's ``tg_array``."""

    _fields_ = [("data", ctypes.c_void_p), ("ndim", ctypes.c_int), ("typenum", ctypes.c_int),
                ("shape", ctypes.c_int64 * MAXDIM), ("strides", ctypes.c_int64 * MAXDIM),
                ("base", ctypes.c_void_p)]


class _Context(ctypes.Structure):
    """runtime.h's ``tg_ctx``."""

    _fields_ = [("errmsg", ctypes.c_char * 1024), ("nthreads", ctypes.c_int),
                ("pool_run", ctypes.c_void_p), ("node_seconds", ctypes.c_void_p),
                ("nallocs", ctypes.c_int64)]


_NODE_FUNCTION = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_Context),
                                  ctypes.POINTER(ctypes.POINTER(_Array)))
_free = ctypes.CDLL(None).free
_free.argtypes = [ctypes.c_void_p]
_free.restype = None


class _Buffer:
    """One reference to a ``tg_buffer`` a node function allocated: the last one frees it
    (runtime.h's ``tg_buffer_decref``; its count is the first field)."""

    __slots__ = ("address",)

    def __init__(self, address: int):
        self.address = address

    def __del__(self):
        count = ctypes.c_int64.from_address(self.address)
        count.value -= 1
        if count.value == 0:
            _free(self.address)


class DirectCall:
    """``call(k, *inputs)``: the outputs of node function ``k`` of a compiled ``CGraph``
    (``cgraph.addresses``, the glue not needed) as a tuple of ndarrays; ``report(message)``
    returns the exception raised when the function fails."""

    def __init__(self, cgraph, report):
        self._report = report
        self._functions = [_NODE_FUNCTION(address) for address in cgraph.addresses[:-1]]
        self._types = [([(np.dtype(v.type.dtype), v.type.ndim) for v in fn.node.inputs],
                        [np.dtype(v.type.dtype) for v in fn.node.outputs])
                       for fn in cgraph.functions]

    def __call__(self, k, *inputs):
        in_types, out_dtypes = self._types[k]
        if len(inputs) != len(in_types):
            raise TypeError(f"node {k} takes {len(in_types)} inputs, got {len(inputs)}")
        arrays = [_coerce(value, dtype, ndim, j)
                  for j, (value, (dtype, ndim)) in enumerate(zip(inputs, in_types))]
        structs = [_borrowed(a) for a in arrays] + [_Array() for _ in out_dtypes]
        io = (ctypes.POINTER(_Array) * len(structs))(*[ctypes.pointer(s) for s in structs])
        ctx = _Context()
        ctx.nthreads = int(config.pool__threads)
        failed = self._functions[k](ctypes.byref(ctx), io)
        outputs = [_owned(s, dtype, arrays) for s, dtype in zip(structs[len(arrays):],
                                                                out_dtypes)]
        if failed:
            raise self._report(ctx.errmsg.decode("utf-8", "replace"))
        return tuple(outputs)


def _coerce(value, dtype, ndim: int, j: int) -> np.ndarray:
    """``value`` as an aligned ndarray of the input's dtype, as the glue takes it."""
    array = np.require(value, dtype=dtype, requirements="A")
    if array.ndim != ndim:
        raise TypeError(f"input {j} of the node: expected a {ndim}-d array, got "
                        f"{array.ndim} dimensions")
    return array


def _borrowed(array: np.ndarray) -> _Array:
    s = _Array()
    s.data = array.ctypes.data
    s.ndim = array.ndim
    s.typenum = array.dtype.num
    for d in range(array.ndim):
        s.shape[d] = array.shape[d]
        s.strides[d] = array.strides[d]
    return s


def _owned(s: _Array, dtype, inputs):
    """The ndarray over output ``s``: it keeps the buffer the function allocated (its
    ``base``), or, for an output in an input's memory (``base`` NULL), those inputs."""
    if s.ndim < 0 or s.ndim > MAXDIM or (s.data is None and s.base is None):
        return None  # not written: the function failed before it
    shape = tuple(s.shape[:s.ndim])
    strides = tuple(s.strides[:s.ndim])
    low = high = 0
    for n, st in zip(shape, strides):
        if n == 0:
            low = high = 0
            break
        low, high = (low + (n - 1) * st, high) if st < 0 else (low, high + (n - 1) * st)
    span = high - low + dtype.itemsize if all(shape) else 0
    memory = (ctypes.c_char * span).from_address(s.data + low) if span else bytearray(0)
    array = np.ndarray(shape, dtype, buffer=memory, offset=-low if span else 0,
                       strides=strides if span else None)
    if span:
        memory.keep = _Buffer(s.base) if s.base else inputs
    elif s.base:
        _Buffer(s.base)  # an empty result: its buffer goes at once
    return array
