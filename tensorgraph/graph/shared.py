"""Shared variables: symbolic variables with a value that persists between function calls.

A ``SharedVariable`` owns a ``Container``, a typed one-element storage cell. Every compiled
function using the variable reads that very cell (no copy per call), and writes its updates
into it after a successful call. ``shared(value)`` picks the variable class from a registry of
constructors, so each kind of value (tensors, random generators...) registers its own.

They live in the graph layer so that the tensor layer can subclass ``SharedVariable`` and
register its constructors without importing the compiler; ``tensorgraph.shared`` (and
``tensorgraph.compile.sharedvalue``, PyTensor's place for these names) also imports the
tensor constructors.
"""

from __future__ import annotations

import copy

import numpy as np

from tensorgraph.graph.basic import Constant, Variable


def copy_value(value):
    """A copy of a stored value that shares no memory with it."""
    if isinstance(value, np.ndarray):
        return value.copy()
    return copy.deepcopy(value)


class Container:
    """The storage of a shared variable: ``storage`` is the one-element list functions read.

    The list object never changes (functions keep a reference to it); only ``storage[0]`` does.
    """

    __slots__ = ("type", "storage", "name", "strict", "allow_downcast")

    def __init__(self, type, storage: list, name=None, strict=False, allow_downcast=None):
        if isinstance(type, Variable):      # PyTensor code gives the variable it holds
            type = type.type
        self.type = type
        self.storage = storage
        self.name = name
        self.strict = strict
        self.allow_downcast = allow_downcast

    @property
    def value(self):
        return self.storage[0]

    @value.setter
    def value(self, value):
        self.storage[0] = self.type.filter(value, strict=self.strict,
                                           allow_downcast=self.allow_downcast)

    #: PyTensor's name for ``value`` (``container.data = x`` filters ``x`` the same way)
    data = value

    def __repr__(self):
        return f"<Container {self.name or ''}: {self.storage[0]!r}>"


class SharedVariable(Variable):
    """A variable whose value lives in ``container`` and survives between calls.

    ``default_update`` (an expression, set e.g. by random streams) is the update functions
    apply to this variable unless told otherwise (``updates=`` or ``no_default_updates``).
    """

    default_update = None

    def __init__(self, type, value, strict: bool = False, allow_downcast: bool | None = None,
                 container: Container | None = None, name: str | None = None):
        super().__init__(type, None, None, name)
        if container is None:
            container = Container(type, [type.filter(value, strict=strict,
                                                     allow_downcast=allow_downcast)],
                                  name, strict, allow_downcast)
        self.container = container

    def get_value(self, borrow: bool = False, return_internal_type: bool = False):
        """The current value; a copy unless ``borrow`` (then do not modify it in place).

        ``return_internal_type`` is PyTensor's switch for GPU-era types whose storage is not a
        numpy array; here the stored value always is the type's own value, so it changes
        nothing."""
        value = self.container.storage[0]
        return value if borrow else copy_value(value)

    def set_value(self, value, borrow: bool = False) -> None:
        """Store ``value`` (converted by the type); a copy unless ``borrow``.

        With ``borrow=True`` the variable may keep ``value`` itself, so later in-place changes
        to it are seen by the functions.
        """
        filtered = self.type.filter(value, strict=self.container.strict,
                                    allow_downcast=self.container.allow_downcast)
        if not borrow and _may_alias(filtered, value):
            filtered = copy_value(filtered)
        self.container.storage[0] = filtered

    def get_test_value(self):
        return self.container.storage[0]

    def clone(self, name: str | None = None) -> SharedVariable:
        """A new variable of the same class using the *same* container (same value)."""
        cp = object.__new__(type(self))
        cp.__dict__.update(self.__dict__)
        cp.__dict__.pop("_eval_cache", None)
        cp.owner, cp.index = None, None
        cp.tag = self.tag.copy()
        if name is not None:
            cp.name = name
        return cp

    def filter_update(self, update) -> Variable:
        """``update`` as an expression of this variable's type, or a ``TypeError`` saying why.

        A value (not a Variable) becomes a constant if the type accepts it without loss; a
        constant of another dtype is converted the same way; other expressions must already
        have a compatible type.
        """
        if isinstance(update, Constant) and update.type != self.type:
            update = update.data
        if not isinstance(update, Variable):
            try:
                return self.type.make_constant(self.type.filter(update))
            except TypeError as exc:
                raise TypeError(f"the update of shared variable {self} ({self.type}) is a value "
                                f"it cannot hold: {exc}") from None
        _refuse_broadcast_update(self, update)
        converted = self.type.convert_variable(update)
        if converted is None:
            raise TypeError(
                f"the update of shared variable {self} has type {update.type} but the variable "
                f"has type {self.type}: an update must keep the type. Cast the expression "
                f"(e.g. tt.cast(expr, '{getattr(self.type, 'dtype', '...')}')) or create the "
                "shared variable with the type you need")
        return converted


def _refuse_broadcast_update(var, update) -> None:
    """A TypeError for an update that is broadcastable (static size 1) in a dimension where
    the shared variable is not: it would shrink the variable to size 1 there (a matrix
    updated with ``w.sum().dimshuffle('x', 'x')``), almost always a mistake, which PyTensor
    refuses too. Declare the variable's size 1 (``shared(value, shape=(1, None))``) when it
    is meant."""
    vshape = getattr(var.type, "shape", None)
    ushape = getattr(update.type, "shape", None)
    if vshape is None or ushape is None or len(vshape) != len(ushape):
        return
    dims = [d for d, (v, u) in enumerate(zip(vshape, ushape)) if u == 1 and v != 1]
    if dims:
        raise TypeError(
            f"the update of shared variable {var} ({var.type}) is broadcastable (size 1) in "
            f"dimension(s) {dims} ({update.type}), where the variable is not: the update would "
            "make it size 1 there. Broadcast the update to the variable's shape (e.g. "
            "tt.zeros_like(var) + update), or create the variable with shape=(1, ...) if "
            "size 1 is meant")


def _may_alias(stored, given) -> bool:
    if stored is given:
        return True
    return (isinstance(stored, np.ndarray) and isinstance(given, np.ndarray)
            and np.may_share_memory(stored, given))


# ----------------------------------------------------------------------------------------------
# The constructor registry

_constructors: list = []


def shared_constructor(ctor):
    """Register ``ctor(value, name=, strict=, allow_downcast=, borrow=, **kwargs)`` for ``shared``.

    The constructor returns a SharedVariable, or ``NotImplemented`` when it does not handle
    that kind of value (then the next one is tried; the last registered is tried first). Usable
    as a decorator.
    """
    _constructors.append(ctor)
    return ctor


@shared_constructor
def generic_constructor(value, name=None, strict=False, allow_downcast=None, borrow=False):
    """Other Python objects (a string, a dict, a model object) are held as they are, in a
    variable of type ``generic`` (tried after every other constructor). Lists, tuples and
    arrays are not: a list of numbers is meant as a tensor more often than not, so it is
    refused with the hint to pass ``np.asarray(value)`` (PyTensor would make it generic)."""
    from tensorgraph.graph.type import generic

    if isinstance(value, (list, tuple, np.ndarray, np.generic, int, float, complex)):
        return NotImplemented      # numbers and sequences are tensors (or refused as such)
    return SharedVariable(generic, value if borrow else copy.copy(value), strict=strict,
                          allow_downcast=allow_downcast, name=name)


def shared(value, name: str | None = None, strict: bool = False,
           allow_downcast: bool | None = None, borrow: bool = False, **kwargs) -> SharedVariable:
    """A shared variable holding ``value``.

    numpy arrays and numpy scalars keep their dtype, Python floats become ``config.floatX``
    scalars, Python ints int64 scalars, Python bools bool scalars; other objects (strings,
    dicts; not lists) are held as they are, with type ``generic``. The value is copied unless
    ``borrow=True``. ``strict`` / ``allow_downcast`` decide what ``set_value`` accepts later.
    Extra keywords (e.g. ``shape=``) go to the constructor.
    """
    if isinstance(value, Variable):
        raise TypeError(f"shared() takes a value, got the symbolic variable {value}; use "
                        "x.eval() or a function to compute its value first")
    refusals = []
    for ctor in reversed(_constructors):
        try:
            var = ctor(value, name=name, strict=strict, allow_downcast=allow_downcast,
                       borrow=borrow, **kwargs)
        except TypeError as exc:
            refusals.append(f"{getattr(ctor, '__name__', ctor)}: {exc}")
            continue
        if var is not NotImplemented:
            return var
    detail = "; ".join(refusals)
    raise TypeError(f"shared() cannot hold a value of type {type(value).__name__}"
                    + (f" ({detail})" if detail else "")
                    + ". Tensors take numpy arrays, numpy scalars and Python numbers")
