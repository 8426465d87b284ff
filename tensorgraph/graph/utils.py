"""Small helpers shared by the graph objects: tags, user source locations, graph errors.

Every Apply node remembers where the *user* created it (the first frames outside the
tensorgraph package), so that errors, DebugMode reports and notebook widgets can point at the
line the user wrote instead of at tensorgraph internals.
"""

from __future__ import annotations

import linecache
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class Scratchpad:
    """A free-form attribute bag (``var.tag``, ``node.tag``) for annotations such as test values."""

    def __repr__(self):
        return f"Scratchpad({self.__dict__!r})"

    def copy(self):
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new


class ValidatingScratchpad(Scratchpad):
    """A tag that runs one attribute through a filter when set.

    ``x.tag.test_value = value`` is converted by ``x.type.filter`` so that a value of the wrong
    ndim or dtype is refused where the user assigns it, not later inside a node.
    """

    def __init__(self, attr, filter_fn):
        object.__setattr__(self, "_validated_attr", attr)
        object.__setattr__(self, "_filter_fn", filter_fn)

    def __setattr__(self, name, value):
        if name == self._validated_attr:
            value = self._filter_fn(value)
        object.__setattr__(self, name, value)

    def copy(self):
        new = ValidatingScratchpad(self._validated_attr, self._filter_fn)
        for k, v in self.__dict__.items():
            object.__setattr__(new, k, v)
        return new


@dataclass(frozen=True)
class SourceFrame:
    """One user stack frame: file, line number and function name (source text read lazily)."""

    filename: str
    lineno: int
    name: str

    @property
    def line(self) -> str:
        return linecache.getline(self.filename, self.lineno).strip()

    def __str__(self):
        text = self.line
        where = f'File "{self.filename}", line {self.lineno}, in {self.name}'
        return f"{where}\n    {text}" if text else where


def _is_internal(code) -> bool:
    """Frames the user did not write as an expression: tensorgraph itself, and the
    ``make_node`` of a user-defined Op (the node belongs to the line that called the op)."""
    filename = code.co_filename
    return (filename.startswith(_PACKAGE_DIR) or filename.startswith("<frozen")
            or code.co_name == "make_node")


def user_frames(limit: int) -> tuple[SourceFrame, ...]:
    """Return up to ``limit`` innermost stack frames that lie outside the tensorgraph package.

    Walking raw frames (no ``traceback.extract_stack``) keeps this cheap enough to run for every
    node the user builds; the source text is only read when a frame is printed.
    """
    if limit == 0:
        return ()
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if not _is_internal(code):
            frames.append(SourceFrame(code.co_filename, frame.f_lineno, code.co_name))
            if limit > 0 and len(frames) >= limit:
                break
        frame = frame.f_back
    return tuple(frames)


def stack_frames(limit: int, skip: int = 0) -> tuple[SourceFrame, ...]:
    """Up to ``limit`` innermost frames (-1: all) of the caller, tensorgraph's own included,
    leaving out the ``skip`` innermost ones."""
    if limit == 0:
        return ()
    frames = []
    frame = sys._getframe(1 + skip)
    while frame is not None and (limit < 0 or len(frames) < limit):
        code = frame.f_code
        frames.append(SourceFrame(code.co_filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    return tuple(frames)


_compile_depth = [0]


@contextmanager
def compiling():
    """Mark the nodes created inside as made by compilation (rewrites), not by the user.

    Such nodes get no user trace of their own (the function() call line would be misleading):
    ``tensorgraph.graph.errors.InheritUserTrace`` gives them the trace of the node they replace.
    With ``config.traceback__compile_limit`` != 0 they also keep that many frames of where the
    rewrite made them, internal frames included, as ``tag.compile_trace``.
    """
    _compile_depth[0] += 1
    try:
        yield
    finally:
        _compile_depth[0] -= 1


def record_trace(tag) -> None:
    """Set ``tag.trace`` (and ``tag.compile_trace`` during compilation) for a new node."""
    from tensorgraph.configdefaults import config

    if _compile_depth[0]:
        tag.trace = ()
        limit = config.traceback__compile_limit
        if limit:
            tag.compile_trace = stack_frames(limit, skip=2)  # not us, not Apply
    else:
        tag.trace = user_frames(config.traceback__limit)


def format_user_line(node) -> str:
    """The innermost user frame where ``node`` was created, as one line, or '' if unknown."""
    trace = getattr(node.tag, "trace", ())
    if not trace:
        return ""
    frame = trace[0]
    text = frame.line
    where = f"{frame.filename}:{frame.lineno}"
    return f"{where}: {text}" if text else where


class MissingInputError(Exception):
    """A graph needs a variable that is neither an input nor computable from the inputs."""


class InconsistencyError(Exception):
    """A change to a FunctionGraph would break one of its invariants (raised by validators)."""


class TestValueError(Exception):
    """A test value is missing or a node failed while computing test values."""

    __test__ = False  # not a pytest test class
