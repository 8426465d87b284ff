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

from tensorgraph.configdefaults import config

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

    @property
    def location(self) -> str:
        """``file:line``, or what a registered formatter says (``Cell In[3], line 2``)."""
        return format_location(self.filename, self.lineno)

    def __str__(self):
        text = self.line
        shown = self.location
        if shown == f"{self.filename}:{self.lineno}":
            where = f'File "{self.filename}", line {self.lineno}, in {self.name}'
        else:
            where = f"{shown}, in {self.name}"
        return f"{where}\n    {text}" if text else where


#: callables (filename, lineno) -> str or None that name a location better than ``file:line``;
#: the notebook extension registers one turning IPython's cell files into ``Cell In[3], line 2``
_location_formatters: list = []


def register_location_formatter(formatter) -> None:
    """Let ``formatter(filename, lineno)`` name source locations (None: not one of its own)."""
    if formatter not in _location_formatters:
        _location_formatters.append(formatter)


def unregister_location_formatter(formatter) -> None:
    if formatter in _location_formatters:
        _location_formatters.remove(formatter)


def format_location(filename: str, lineno: int) -> str:
    """How errors and views name a source location."""
    for formatter in _location_formatters:
        try:
            shown = formatter(filename, lineno)
        except Exception:  # noqa: BLE001 - a broken formatter must not hide the error shown
            shown = None
        if shown:
            return shown
    return f"{filename}:{lineno}"


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
_gradient_depth = [0]


@contextmanager
def building_gradient():
    """Mark the nodes created inside as parts of a gradient (``tag.from_grad``): their user line
    is the ``grad(...)`` call, which says less about a failure than the forward expression a
    rewrite may have fused them with (see ``tensorgraph.graph.errors.inherit_user_traces``)."""
    _gradient_depth[0] += 1
    try:
        yield
    finally:
        _gradient_depth[0] -= 1


@contextmanager
def compiling():
    """Mark the nodes created inside as made by compilation (rewrites), not by the user.

    Such nodes get no user trace of their own (the function() call line would be misleading):
    ``tensorgraph.graph.errors.inherit_user_traces`` gives them the lines of the nodes they replace.
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
    if _compile_depth[0]:
        tag.trace = ()
        limit = config.traceback__compile_limit
        if limit:
            tag.compile_trace = stack_frames(limit, skip=2)  # not us, not Apply
    else:
        tag.trace = user_frames(config.traceback__limit)
        if _gradient_depth[0]:
            tag.from_grad = True


def format_frame(frame) -> str:
    """One user frame as one line: ``where: the line's text``."""
    text = frame.line
    return f"{frame.location}: {text}" if text else frame.location


def format_user_line(node) -> str:
    """The innermost user frame where ``node`` was created (for a node made by a rewrite: the
    most telling line of the expressions it replaced), as one line, or '' if unknown."""
    trace = getattr(node.tag, "trace", ())
    return format_frame(trace[0]) if trace else ""


def other_user_lines(node, limit: int = 3) -> list[str]:
    """For a node made by rewriting several user expressions (a fused loop, a BLAS call with
    its gradient): the other lines it came from, at most ``limit``, as ``format_frame`` lines."""
    trace = getattr(node.tag, "trace", ())
    first = (trace[0].filename, trace[0].lineno) if trace else None
    lines, seen = [], {first}
    for source in getattr(node.tag, "sources", ()):
        frame = source.frame
        if (frame.filename, frame.lineno) not in seen:
            seen.add((frame.filename, frame.lineno))
            lines.append(format_frame(frame))
    return lines[:limit]


class MissingInputError(Exception):
    """A graph needs a variable that is neither an input nor computable from the inputs."""


class MethodNotDefined(NotImplementedError):
    """An Op or Type does not define a method for this case (its gradient, its C for a
    dtype). A NotImplementedError, so code catching either catches it."""


class InconsistencyError(Exception):
    """A change to a FunctionGraph would break one of its invariants (raised by validators)."""


class TestValueError(Exception):
    """A test value is missing or a node failed while computing test values."""

    __test__ = False  # not a pytest test class
