"""The warning ``/`` between two integers gives when ``config.int_division`` is 'int': it
floors, as ``//``, which silently changes a formula written for real numbers
(``xlogy(nu / 2 - 1, x)`` with an integer ``nu`` gives 0 where it means -0.5).

'int' stays the default (Theano's); the warning names the user's line, the flag and the value
that divides as floats, once per line (a loop building the same expression warns once). Only a
``/`` the user wrote warns: one built by tensorgraph's own code (rewrites, gradients) does not.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings

from tensorgraph.graph.utils import SourceFrame, _is_internal

__all__ = ["IntDivisionWarning", "warn_int_division"]


class IntDivisionWarning(UserWarning):
    """``/`` between two integers floored under ``config.int_division='int'``."""


#: the files holding the operators (``__truediv__``, ``__rtruediv__``) that call the division:
#: the frame above them is the one that wrote ``/``
_OPERATOR_FILES = tuple(os.path.join(os.path.dirname(os.path.dirname(__file__)), *parts)
                        for parts in (("tensor", "variable.py"), ("scalar", "variable.py")))
_warned: set = set()
_lock = threading.Lock()


def warn_int_division(a_dtype: str, b_dtype: str) -> None:
    """Warn (once per source line) that a ``/`` the user wrote between integers of these
    dtypes floors. Called by the division function itself (``tensor.math.true_div``, the
    scalars' ``/``): the frame that called that function, past the operators, wrote it."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename in _OPERATOR_FILES:
        frame = frame.f_back
    if frame is None or _is_internal(frame.f_code):
        return
    where = SourceFrame(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
    with _lock:
        if (where.filename, where.lineno) in _warned:
            return
        _warned.add((where.filename, where.lineno))
    line = f": {where.line}" if where.line else ""
    warnings.warn_explicit(
        f"/ between two integers ({a_dtype}, {b_dtype}) at {where.location}{line} floors, as //, "
        "because config.int_division='int' (7 / 2 == 3). Set int_division='floatX' for a "
        "division of floats, cast an operand to a float, or write // to keep the floor "
        "division and silence this warning.",
        IntDivisionWarning, where.filename, where.lineno,
        module=frame.f_globals.get("__name__"), registry=frame.f_globals.setdefault(
            "__warningregistry__", {}))
