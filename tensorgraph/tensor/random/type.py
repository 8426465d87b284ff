"""``RandomGeneratorType``: variables holding a ``numpy.random.Generator``, and their shared form.

Random draws read a generator from a graph input (usually a shared variable) and return the
advanced generator as a separate output, so the state threads through the graph like any value
and a compiled function's update writes it back. ``shared(np.random.default_rng(0))`` makes
such a shared variable (the constructor is registered when this module is imported, which
``tensorgraph.tensor`` does).
"""

from __future__ import annotations

import copy

import numpy as np

from tensorgraph.graph.shared import SharedVariable, shared_constructor
from tensorgraph.graph.type import Type

__all__ = ["RandomGeneratorType", "RandomGeneratorSharedVariable", "random_generator_type",
           "rng", "shared_rng"]


class RandomGeneratorType(Type):
    """The type of a ``numpy.random.Generator`` value; all instances are equal."""

    def filter(self, data, strict: bool = False, allow_downcast: bool | None = None):
        if isinstance(data, np.random.Generator):
            return data
        raise TypeError(f"expected a numpy.random.Generator (e.g. np.random.default_rng(seed)), "
                        f"got {type(data).__name__}: {data!r}")

    def values_eq(self, a, b) -> bool:
        """Two generators are equal when they will produce the same numbers."""
        return (type(a.bit_generator) is type(b.bit_generator)
                and _states_equal(a.bit_generator.state, b.bit_generator.state))

    def value_signature(self, data):
        return repr(data.bit_generator.state)

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return "RandomGeneratorType"

    __repr__ = __str__


def _states_equal(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_states_equal(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    return a == b


random_generator_type = RandomGeneratorType()


class RandomGeneratorSharedVariable(SharedVariable):
    """A shared ``numpy.random.Generator``: the state random draws read and update."""

    def __str__(self):
        return self.name if self.name is not None else "RNG"


@shared_constructor
def random_generator_constructor(value, name=None, strict=False, allow_downcast=None,
                                 borrow=False):
    """``shared(generator)``: a RandomGeneratorSharedVariable (a copy unless ``borrow``)."""
    if not isinstance(value, np.random.Generator):
        return NotImplemented
    if not borrow:
        value = copy.deepcopy(value)
    return RandomGeneratorSharedVariable(random_generator_type, value, strict=strict,
                                         allow_downcast=allow_downcast, name=name)


def rng(name=None):
    """A symbolic generator input (given a ``numpy.random.Generator`` at each call)."""
    return random_generator_type(name)


def shared_rng(value=None, *, seed=None, name=None, borrow=False):
    """A shared generator: ``value`` (a ``numpy.random.Generator``) or a new one from
    ``seed`` (an int, a sequence of ints or None for fresh entropy)."""
    if value is not None and seed is not None:
        raise ValueError("shared_rng: give a generator or a seed, not both")
    if value is None:
        value = np.random.default_rng(seed)
    elif not isinstance(value, np.random.Generator):
        raise TypeError(f"shared_rng: expected a numpy.random.Generator, got "
                        f"{type(value).__name__}; pass seed=... to make one")
    return random_generator_constructor(value, name=name, borrow=borrow)
