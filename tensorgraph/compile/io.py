"""``In`` and ``Out``: how ``function`` treats each of its inputs and outputs.

A bare variable in ``function(inputs, outputs)`` is wrapped in ``In`` / ``Out`` with the
defaults; wrap it yourself to give an input a default value or a keyword name, or to let an
output be returned without a defensive copy.
"""

from __future__ import annotations

from tensorgraph.graph.basic import Constant, Variable

class _NoValue:
    """The marker of an input without a default (one object, also after unpickling)."""

    def __reduce__(self):
        return "_NO_VALUE"

    def __repr__(self):
        return "<no value>"


_NO_VALUE = _NoValue()


class In:
    """An input of a compiled function.

    Parameters
    ----------
    variable : Variable
        The symbolic input (no shared variable, no constant).
    name : str, optional
        The keyword to pass it by; defaults to ``variable.name``.
    value : optional
        Default value used when a call leaves this input out (checked against the type now).
    mutable : bool
        The function may overwrite the value it receives: inplace rewrites may write into the
        buffer when nothing else in the graph reads it (``x * 2`` computed in ``x``'s array).
        As in PyTensor, that is the caller's array itself unless ``borrow=False``.
    borrow : bool or None
        With ``mutable``: overwrite the caller's array itself (True) or a copy of it made at
        each call (False, the caller's array is safe). None (default): the value of
        ``mutable``, PyTensor's default.
    strict : bool
        Refuse any conversion of call values (dtype must match exactly).
    allow_downcast : bool or None
        Accept lossy conversions of call values (None: the function's ``allow_input_downcast``).
    update : Variable, optional
        Theano's stateful input: after each call the input's stored value becomes this
        expression's result (computed with the call's values), and the next call uses it as
        the default. ``value`` may then be a ``Container`` holding the state (shared with
        whoever else holds it).
    implicit : bool or None
        The input is not an argument of the calls: its value always comes from ``value``
        (it must be given). None: implicit when ``value`` is a ``Container``.
    """

    def __init__(self, variable, name: str | None = None, value=_NO_VALUE,
                 mutable: bool = False, borrow: bool | None = None, strict: bool = False,
                 allow_downcast: bool | None = None, update=None, implicit=None):
        from tensorgraph.compile.sharedvalue import Container

        if not isinstance(variable, Variable):
            raise TypeError(f"In() needs a symbolic variable, got {type(variable).__name__}: "
                            f"{variable!r}")
        if isinstance(variable, Constant):
            raise TypeError(f"constant {variable} cannot be an input of a function")
        self.variable = variable
        self.name = variable.name if name is None else name
        self.mutable = mutable
        self.borrow = mutable if borrow is None else borrow
        self.strict = strict
        self.allow_downcast = allow_downcast
        self.container = value if isinstance(value, Container) else None
        self._value = _NO_VALUE if value is _NO_VALUE or self.container is not None else \
            variable.type.filter(value, strict=strict, allow_downcast=allow_downcast)
        if update is not None:
            if not isinstance(update, Variable):
                raise TypeError(f"In(update=...) takes a symbolic expression, got "
                                f"{type(update).__name__}: {update!r}")
            converted = variable.type.convert_variable(update)
            if converted is None:
                raise TypeError(f"In(update=...): the update of {variable} ({variable.type}) "
                                f"has type {update.type}")
            update = converted
        self.update = update
        self.implicit = self.container is not None if implicit is None else bool(implicit)
        if self.implicit and not self.has_default:
            raise TypeError(f"In({variable}, implicit=True) needs a value (or a Container)")

    @property
    def value(self):
        """The default value: the container's current one when a Container was given."""
        return self.container.storage[0] if self.container is not None else self._value

    @property
    def has_default(self) -> bool:
        return self.container is not None or self._value is not _NO_VALUE

    def __repr__(self):
        extra = f", value={self.value!r}" if self.has_default else ""
        return f"In({self.variable}{extra})"


class Out:
    """An output of a compiled function.

    ``borrow=True`` returns the function's own storage: no copy, but the value may be
    overwritten by the next call and may alias an input or a shared variable. The default
    returns an array the caller owns.
    """

    def __init__(self, variable, borrow: bool = False):
        if not isinstance(variable, Variable):
            raise TypeError(f"Out() needs a symbolic variable, got {type(variable).__name__}: "
                            f"{variable!r}")
        self.variable = variable
        self.borrow = borrow

    def __repr__(self):
        return f"Out({self.variable}{', borrow=True' if self.borrow else ''})"
