"""``Type``: what values a Variable may hold, and how to convert raw data into such a value."""

from __future__ import annotations

from tensorgraph.graph.basic import Constant, Variable


class Type:
    """Base class of variable types (e.g. ``TensorType``, ``ScalarType``).

    Subclasses implement ``filter`` (convert or refuse a value) and equality/hashing, so that
    two variables with equal types are interchangeable.
    """

    variable_type = Variable
    constant_type = Constant

    def filter(self, data, strict: bool = False, allow_downcast: bool | None = None):
        """Return ``data`` as a valid value of this type, or raise ``TypeError`` saying why.

        ``strict`` refuses any conversion; ``allow_downcast`` permits lossy conversions.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement filter")

    def is_valid_value(self, data) -> bool:
        try:
            self.filter(data, strict=True)
        except (TypeError, ValueError):
            return False
        return True

    def make_variable(self, name: str | None = None) -> Variable:
        return self.variable_type(self, None, None, name)

    __call__ = make_variable

    def make_constant(self, value, name: str | None = None) -> Constant:
        return self.constant_type(self, value, name)

    def convert_variable(self, var: Variable) -> Variable | None:
        """``var`` made usable where this type is expected, or ``None`` if it can't be."""
        return var if var.type == self else None

    def is_super(self, other: Type) -> bool:
        """Whether every value of ``other`` is a value of this type."""
        return self == other

    def values_eq(self, a, b) -> bool:
        return a == b

    def values_eq_approx(self, a, b) -> bool:
        return self.values_eq(a, b)

    def value_signature(self, data):
        """A hashable summary of ``data`` such that equal signatures mean equal values."""
        return data


class Generic(Type):
    """Any Python object: a string, a list, a dict, a model object. Values pass through as
    they are (no conversion, whatever ``strict`` says); ``ifelse`` picks between them and a
    shared variable may hold one (``shared('text')``). Tensors have ``TensorType``."""

    def filter(self, data, strict: bool = False, allow_downcast: bool | None = None):
        return data

    def values_eq(self, a, b) -> bool:
        try:
            return bool(a == b)
        except Exception:    # noqa: BLE001  (arrays compare elementwise, objects may refuse)
            return a is b

    def value_signature(self, data):
        try:
            hash(data)
        except TypeError:
            return ("unhashable", id(data))
        return data

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return "Generic"

    __repr__ = __str__


#: the type of generic variables (``generic()`` makes one), as in Theano / PyTensor
generic = Generic()
