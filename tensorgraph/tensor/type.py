"""``TensorType``: n-dimensional arrays of one dtype, with optionally known (static) sizes.

A dimension's static size is an ``int`` or ``None`` (unknown). A static size of 1 is what
PyTensor calls *broadcastable*: only such dimensions are broadcast by elementwise operations,
which keeps gradients exact (a gradient is summed back exactly over the broadcast dimensions).
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

from tensorgraph.configdefaults import config
from tensorgraph.graph.type import Type

#: dtypes a tensor may have, and the one-letter prefixes of the typed constructors.
DTYPE_PREFIXES = {
    "b": "int8", "w": "int16", "i": "int32", "l": "int64",
    "f": "float32", "d": "float64", "c": "complex64", "z": "complex128",
}
ALL_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64", "float16", "float32", "float64", "complex64", "complex128")
FLOAT_DTYPES = ("float16", "float32", "float64")
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
DISCRETE_DTYPES = ("bool",) + INT_DTYPES
COMPLEX_DTYPES = ("complex64", "complex128")

# The dtype groups under the names PyTensor gives them (lists, as code that concatenates or
# parametrizes over them expects): signed and unsigned integers, discrete (bool + integers),
# floats, complex, continuous (floats + complex), and all of them.
int_dtypes = ["int8", "int16", "int32", "int64"]
uint_dtypes = ["uint8", "uint16", "uint32", "uint64"]
integer_dtypes = int_dtypes + uint_dtypes
discrete_dtypes = ["bool"] + integer_dtypes
float_dtypes = list(FLOAT_DTYPES)
complex_dtypes = list(COMPLEX_DTYPES)
continuous_dtypes = float_dtypes + complex_dtypes
all_dtypes = discrete_dtypes + continuous_dtypes


def normalize_dtype(dtype) -> str:
    """A dtype name from a name, numpy dtype or type; ``'floatX'`` means ``config.floatX``."""
    if dtype == "floatX":
        return config.floatX
    try:
        name = np.dtype(dtype).name
    except TypeError:
        raise TypeError(f"unknown dtype {dtype!r}; expected one of {', '.join(ALL_DTYPES)}") from None
    if name not in ALL_DTYPES:
        raise TypeError(f"unsupported dtype {name!r}; expected one of {', '.join(ALL_DTYPES)}")
    return name


def _float_tolerances(dtype: str) -> tuple[float, float]:
    """(rtol, atol) for comparing computed values of a dtype (used by tests and DebugMode)."""
    return {"float16": (5e-3, 5e-3), "float32": (1e-5, 1e-5), "complex64": (1e-5, 1e-5)}.get(
        dtype, (1e-8, 1e-8))


def values_eq_approx_remove_nan(a, b) -> bool:
    """Whether ``b`` equals ``a`` within the float tolerance of their dtype, where a NaN in ``a``
    matches any value of ``b`` (PyTensor's comparison for results whose NaN entries carry no
    meaning, such as a gradient rewritten to avoid a 0/0)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind not in "fc":
        return bool(np.array_equal(a, b))
    keep = ~np.isnan(a)
    rtol, atol = _float_tolerances(np.result_type(a, b).name)
    return bool(np.allclose(a[keep], b[keep], rtol=rtol, atol=atol, equal_nan=True))


def _exactly_converted(raw, dtype):
    """``raw`` converted to ``dtype`` when every value survives unchanged (nothing lost), else
    None. This is how plain Python values are judged, as in PyTensor: ``[6]`` fits an int8
    vector and ``3.5`` a float32 scalar, ``[312]`` and ``0.1`` do not."""
    import warnings

    if raw.dtype.kind not in "biufc":      # strings, dates...: no number to keep
        return None
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        converted = raw.astype(dtype)
        same = np.array_equal(converted, raw, equal_nan=raw.dtype.kind in "fc")
    return converted if same else None


class NonNumericValueError(TypeError, ValueError):
    """Text (a str or bytes value) given for a numeric tensor: a TypeError (not a number), and
    the ValueError numpy (and so PyTensor) raises converting such text."""


def _short_repr(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_int_range(raw, dtype, type_) -> None:
    """An OverflowError for Python integers that ``dtype`` (an integer dtype) cannot hold, as
    numpy raises converting them (``np.asarray([312], dtype='int8')``) and PyTensor lets
    through: a value that does not fit is a range problem, not a wrong type."""
    if raw.dtype.kind not in "iu" or dtype not in INT_DTYPES or raw.size == 0:
        return
    info = np.iinfo(dtype)
    low, high = raw.min(), raw.max()
    if low < info.min or high > info.max:
        bad = high if high > info.max else low
        raise OverflowError(f"expected {dtype} ({type_}), got the Python integer {int(bad)}, "
                            f"out of the range [{info.min}, {info.max}] of {dtype}. Pass "
                            "values that fit, or compile with allow_input_downcast=True "
                            "(values then wrap around, as numpy's astype)")


#: the most dimensions a numpy array (so a tensor's value) can have: 64 in numpy 2, 32 before
MAX_NDIM = 64 if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else 32


class TensorType(Type):
    """The type of tensors of a ``dtype`` and a ``shape`` of static sizes (int or None).

    ``TensorType('float32', shape=(None, 1))`` is a float32 matrix whose second dimension is
    known to be 1 (broadcastable). ``broadcastable=(False, True)`` is accepted as the old spelling.
    Instances are callable: ``TensorType('float64', (None,))('x')`` makes a variable named x.
    """

    def __init__(self, dtype, shape=None, *, broadcastable=None, name: str | None = None):
        if shape is not None and broadcastable is not None:
            raise TypeError("give shape or broadcastable, not both")
        if broadcastable is not None:
            shape = tuple(1 if b else None for b in broadcastable)
        if shape is None:
            raise TypeError("TensorType needs a shape, e.g. shape=(None, None) for a matrix")
        if len(shape) > MAX_NDIM:    # no numpy array could ever be a value of this type
            raise ValueError(f"maximum supported dimension for a TensorType is currently "
                             f"{MAX_NDIM}, found {len(shape)} (numpy's own limit)")
        self.dtype = normalize_dtype(dtype)
        # compared with each call's inputs: ``ndarray.dtype == np.dtype`` is a C comparison,
        # while ``ndarray.dtype.name`` runs Python code in numpy (~3 us per input,
        # 2026-11-22 at 39cfe7f)
        self._np_dtype = np.dtype(self.dtype)
        checked = []
        for i, s in enumerate(shape):
            if s is None:
                checked.append(None)
            elif isinstance(s, (bool, np.bool_)):
                checked.append(1 if s else None)
            elif isinstance(s, (int, np.integer)) and s >= 0:
                checked.append(int(s))
            else:
                raise TypeError(f"static size of dimension {i} must be a non-negative int or "
                                f"None, got {s!r}")
        self.shape = tuple(checked)
        self.name = name

    # -- identity -------------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        return tuple(s == 1 for s in self.shape)

    @property
    def numpy_dtype(self) -> np.dtype:
        return self._np_dtype

    def __eq__(self, other):
        return type(self) is type(other) and self.dtype == other.dtype and self.shape == other.shape

    def __hash__(self):
        return hash((type(self), self.dtype, self.shape))

    def clone(self, dtype=None, shape=None) -> TensorType:
        return type(self)(self.dtype if dtype is None else dtype,
                          self.shape if shape is None else shape)

    def __str__(self):
        if self.name:
            return self.name
        kind = {0: "Scalar", 1: "Vector", 2: "Matrix"}.get(self.ndim, f"Tensor{self.ndim}")
        dims = ", ".join("?" if s is None else str(s) for s in self.shape)
        return f"{kind}({self.dtype}, shape=({dims}{',' if self.ndim == 1 else ''}))"

    __repr__ = __str__

    # -- variables --------------------------------------------------------------------------

    @property
    def variable_type(self):
        from tensorgraph.tensor.variable import TensorVariable

        return TensorVariable

    @property
    def constant_type(self):
        from tensorgraph.tensor.variable import TensorConstant

        return TensorConstant

    def make_variable(self, name: str | None = None):
        if self.dtype == "float64":
            _warn_float64(name)
        return self.variable_type(self, None, None, name)

    def __call__(self, name: str | None = None, *, dtype=None, shape=None):
        """A variable of this type named ``name``.

        The typed constructors (``tt.dmatrix``, ``tt.lscalar``...) are TensorType instances, so
        that ``x.type == tt.lscalar`` holds as in PyTensor; the keywords the generic
        constructors take are accepted too: ``dtype=`` (it must be this type's) and
        ``shape=`` (static sizes for this type's unknown ones: ``tt.dmatrix('m', shape=(2,
        None))``).
        """
        if dtype is not None and normalize_dtype(dtype) != self.dtype:
            raise TypeError(f"{self} makes {self.dtype} tensors; got dtype={dtype}")
        if shape is None:
            return self.make_variable(name)
        return self.clone(shape=self._refined(shape)).make_variable(name)

    def _refined(self, shape) -> tuple:
        """This type's static shape with the ``None`` sizes given by ``shape``."""
        shape = tuple(shape)
        if len(shape) != self.ndim:
            raise TypeError(f"{self} has {self.ndim} dimension{'s' if self.ndim != 1 else ''}; "
                            f"got shape={shape}")
        for i, (fixed, given) in enumerate(zip(self.shape, shape)):
            if fixed is not None and given is not None and given != fixed:
                raise TypeError(f"{self}: dimension {i} has size {fixed}; got shape={shape}")
        return tuple(fixed if fixed is not None else given
                     for fixed, given in zip(self.shape, shape))

    # -- values -----------------------------------------------------------------------------

    def filter(self, data, strict: bool = False, allow_downcast: bool | None = None):
        """Return ``data`` as an ndarray of this type, or raise ``TypeError`` saying why.

        Without ``allow_downcast``, only conversions that lose nothing are made (int32 -> float64,
        a Python float to float32 when float32 is ``config.floatX``, Python numbers and lists
        whose values survive: ``[6]`` for int8, ``3.5`` for float32). ``strict`` allows none.
        """
        if isinstance(data, np.ma.MaskedArray):
            raise TypeError(f"expected a value for {self}, got a numpy masked array: a tensor "
                            "holds every element, so the mask would be lost; pass "
                            "value.filled(fill_value) or value.data")
        if isinstance(data, np.ndarray) and data.dtype == self._np_dtype:
            arr = data
        elif strict:
            got = data.dtype.name if isinstance(data, np.ndarray) else type(data).__name__
            raise TypeError(f"expected a {self.dtype} ndarray ({self}), got {got} (strict mode)")
        else:
            arr = self._convert(data, allow_downcast)
        if arr.ndim != self.ndim:
            raise TypeError(f"expected {self.ndim} dimension{'s' if self.ndim != 1 else ''} "
                            f"({self}), got an array with {arr.ndim}: shape {arr.shape}")
        for i, (want, got) in enumerate(zip(self.shape, arr.shape)):
            if want is not None and want != got:
                raise TypeError(f"expected static shape {self.shape} ({self}), got shape "
                                f"{arr.shape} (dimension {i} is {got}, not {want})")
        return arr

    def _convert(self, data, allow_downcast):
        if hasattr(data, "type") and hasattr(data, "owner"):
            raise TypeError(f"expected a value for {self}, got the symbolic variable {data}; "
                            "symbolic inputs are given to function(), values to its calls")
        try:
            raw = np.asarray(data)
        except Exception as exc:
            raise TypeError(f"expected a {self.dtype} array-like ({self}), got "
                            f"{type(data).__name__}: {exc}") from None
        if raw.dtype == object:
            raise TypeError(f"expected a {self.dtype} array-like ({self}), got "
                            f"{type(data).__name__} that numpy sees as objects")
        if raw.dtype == self._np_dtype:
            return raw
        if raw.dtype.name == self.dtype:   # same type, other byte order: made native
            return np.asarray(raw, dtype=self._np_dtype)
        if allow_downcast or np.can_cast(raw.dtype, self.dtype, "safe"):
            return np.asarray(raw, dtype=self.dtype)
        if allow_downcast is None and self._python_scalar_fits(data, raw):
            return np.asarray(raw, dtype=self.dtype)
        if not isinstance(data, np.ndarray):
            # Python numbers, lists and numpy scalars (rng.integers(10) for an int32 input),
            # as PyTensor: [6] for int8, 3.5 for float32. Arrays keep the dtype rule.
            kept = _exactly_converted(raw, self.dtype)
            if kept is not None:
                return kept
            if not isinstance(data, np.generic):   # numpy scalars: a TypeError, as PyTensor
                _check_int_range(raw, self.dtype, self)
        if raw.dtype.kind in "USV" and self.dtype != raw.dtype.name:
            raise NonNumericValueError(
                f"expected {self.dtype} numbers ({self}), got {type(data).__name__} "
                f"{_short_repr(data)}, which holds no numbers of that dtype. Convert it "
                f"first (e.g. np.asarray(value, dtype='{self.dtype}'))")
        raise TypeError(
            f"expected {self.dtype} ({self}), got {raw.dtype.name}: converting would lose "
            f"precision. Cast the value (e.g. .astype('{self.dtype}')) or compile with "
            "allow_input_downcast=True")

    def _python_scalar_fits(self, data, raw) -> bool:
        """Python floats (and numpy float scalars, as PyTensor) may become ``config.floatX``;
        Python ints any dtype holding them."""
        if isinstance(data, np.floating) and data.ndim == 0:
            return self.dtype == config.floatX
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            return False
        if isinstance(data, float):
            return self.dtype == config.floatX
        info = np.iinfo(self.dtype) if self.dtype in INT_DTYPES else None
        return info is None or info.min <= data <= info.max

    def convert_variable(self, var):
        """``var`` if its type fits this one (possibly more precisely); a shape-checked view of
        it if it is more general; else ``None``."""
        vtype = var.type
        if vtype == self:
            return var
        if not isinstance(vtype, TensorType) or vtype.dtype != self.dtype or vtype.ndim != self.ndim:
            return None
        if self.is_super(vtype):
            return var
        if vtype.is_super(self):
            from tensorgraph.tensor.shape import specify_shape

            return specify_shape(var, self.shape)
        return None

    def is_super(self, other) -> bool:
        return (isinstance(other, TensorType) and other.dtype == self.dtype
                and other.ndim == self.ndim
                and all(s is None or s == o for s, o in zip(self.shape, other.shape)))

    @staticmethod
    def values_eq(a, b, force_same_dtype: bool = True) -> bool:
        """Whether two values are equal: shape, dtype (unless not ``force_same_dtype``) and
        entries, NaN equal to NaN. Static, as PyTensor's: ``TensorType.values_eq(a, b)``
        needs no type (the comparison reads only the values)."""
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or (force_same_dtype and a.dtype != b.dtype):
            return False
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc" and b.dtype.kind in "fc"))

    def values_eq_approx(self, a, b, rtol=None, atol=None) -> bool:
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind not in "fc":
            return np.array_equal(a, b)
        default_rtol, default_atol = _float_tolerances(self.dtype)
        return bool(np.allclose(a, b, rtol=rtol or default_rtol, atol=atol or default_atol,
                                equal_nan=True))

    def value_signature(self, data):
        arr = np.asarray(data)
        return (arr.dtype.name, arr.shape, arr.tobytes() if arr.nbytes <= 4096 else
                hash(arr.tobytes()))


def _warn_float64(name):
    action = config.warn_float64
    if action == "ignore":
        return
    message = (f"creating a float64 variable{f' {name!r}' if name else ''} "
               "(config.warn_float64 is on; set floatX=float32 or give dtype='float32')")
    if action == "warn":
        # point at the first frame outside this module (the user's constructor call)
        level, frame = 1, sys._getframe()
        while frame is not None and frame.f_code.co_filename == __file__:
            frame, level = frame.f_back, level + 1
        warnings.warn(message, stacklevel=level)
    elif action == "raise":
        raise TypeError(message)
    elif action == "pdb":
        import pdb

        pdb.set_trace()


# ----------------------------------------------------------------------------------------------
# Constructors


def _resolve_dtype(dtype):
    return normalize_dtype("floatX" if dtype is None else dtype)


def tensor(dtype_or_name=None, shape=None, name: str | None = None, *, dtype=None,
           broadcastable=None):
    """A symbolic tensor: ``tensor(name, dtype=..., shape=...)`` as in PyTensor
    (``tensor('x', dtype='int64', shape=(None, 3))``), or ``tensor('float32', shape=(None, 3),
    name='x')`` with the dtype first.

    A first positional string that is a dtype is the dtype (given with ``dtype=`` too, it is
    refused as ambiguous); any other first string is the name. ``dtype=`` defaults to
    ``config.floatX``; an unknown one raises a TypeError listing the valid dtypes.
    """
    if dtype is not None and dtype_or_name is not None:
        if (name is not None or not isinstance(dtype_or_name, str)
                or _is_dtype(dtype_or_name)):
            raise TypeError(f"tensor() got a dtype twice: {dtype_or_name!r} and dtype={dtype!r}")
        dtype_or_name, name = None, dtype_or_name
    if dtype is None:
        dtype = dtype_or_name
        if isinstance(dtype, str) and name is None and not _is_dtype(dtype):
            dtype, name = None, dtype
    if shape is None and broadcastable is None:
        raise TypeError("tensor() needs shape=..., e.g. tensor('x', dtype='float32', "
                        "shape=(None, None))")
    return TensorType(_resolve_dtype(dtype), shape, broadcastable=broadcastable)(name)


def _is_dtype(text: str) -> bool:
    """Whether ``text`` names a dtype tensors may have. Codes of one or two characters
    (numpy reads ``'b'`` as int8, ``'f8'`` as float64) are names, as in PyTensor."""
    if text == "floatX" or text in ALL_DTYPES:
        return True
    if len(text) <= 2:
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return np.dtype(text).name in ALL_DTYPES
    except TypeError:
        return False


def _make_constructor(ndim_shape, kind):
    def constructor(name: str | None = None, *, dtype=None, shape=None):
        return TensorType(_resolve_dtype(dtype), ndim_shape)(name, shape=shape)

    constructor.__doc__ = (f"A symbolic {kind} of dtype config.floatX (or dtype=...): name "
                           "first, then ``dtype=``/``shape=`` keywords.")
    return constructor


def _make_plural(single):
    def plural(*names, dtype=None):
        """Several variables at once, as in Theano and PyTensor: ``x, y = dmatrices('x', 'y')``,
        ``x, y = dscalars('xy')`` (a single string without separators: one variable per
        character; a one-character string gives that one variable, not a list),
        ``dscalars('x, y')`` (separated names) or a count: ``matrices(2)``."""
        kwargs = {} if dtype is None else {"dtype": dtype}
        if len(names) == 1 and isinstance(names[0], int):
            return [single(None, **kwargs) for _ in range(names[0])]
        if len(names) == 1 and isinstance(names[0], str):
            text = names[0]
            if "," in text or " " in text:
                names = tuple(text.replace(",", " ").split())
            elif len(text) == 1:
                return single(text, **kwargs)
            else:
                names = tuple(text)
        elif len(names) == 1 and isinstance(names[0], (list, tuple)):
            names = tuple(names[0])
        return [single(n, **kwargs) for n in names]

    return plural


_KINDS = {
    "scalar": (), "vector": (None,), "row": (1, None), "col": (None, 1),
    "matrix": (None, None), "tensor3": (None,) * 3, "tensor4": (None,) * 4,
    "tensor5": (None,) * 5, "tensor6": (None,) * 6, "tensor7": (None,) * 7,
}
_PLURAL = {"scalar": "scalars", "vector": "vectors", "row": "rows", "col": "cols",
           "matrix": "matrices", "tensor3": "tensor3s", "tensor4": "tensor4s",
           "tensor5": "tensor5s", "tensor6": "tensor6s", "tensor7": "tensor7s"}

#: every generated constructor, by name: scalar, fmatrix, dvectors, imatrices, ...
CONSTRUCTORS = {}
for _kind, _shape in _KINDS.items():
    CONSTRUCTORS[_kind] = _make_constructor(_shape, _kind)
    CONSTRUCTORS[_kind].__name__ = _kind
    CONSTRUCTORS[_PLURAL[_kind]] = _make_plural(CONSTRUCTORS[_kind])
    CONSTRUCTORS[_PLURAL[_kind]].__name__ = _PLURAL[_kind]
    for _prefix, _dtype in DTYPE_PREFIXES.items():
        # a type, not a function: ``x.type == tt.lscalar`` (and it is called like one)
        _single = TensorType(_dtype, _shape)
        CONSTRUCTORS[_prefix + _kind] = _single
        _many = _make_plural(_single)
        _many.__name__ = _prefix + _PLURAL[_kind]
        CONSTRUCTORS[_prefix + _PLURAL[_kind]] = _many
globals().update(CONSTRUCTORS)
