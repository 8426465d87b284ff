"""JAX for indexing: ``Subtensor``, ``AdvancedSubtensor1``, ``AdvancedSubtensor`` (read) and
``IncSubtensor``, ``AdvancedIncSubtensor1``, ``AdvancedIncSubtensor`` (set and add: ``.at[]``),
``TakeAlongLastAxis`` and ``PutAlongLastAxis``.

JAX itself clamps an index that is out of range (reading) or drops the write (``.at[]``); here
every index computed at run time is checked (``runtime_check``), so an index out of range is an
``IndexError`` naming the node, as in every other mode. Slice bounds and boolean masks fix the
result's shape, so they must be known when tracing (computed from shapes or constants).
"""

from __future__ import annotations

import numpy as np

from tensorgraph.link import traced_indices
from tensorgraph.link.jax import register, runtime_check
from tensorgraph.link.jax.shape import static_ints
from tensorgraph.tensor import subtensor as st
from tensorgraph.tensor.special import PutAlongLastAxis, TakeAlongLastAxis


def _traced(value) -> bool:
    import jax

    return isinstance(value, jax.core.Tracer)


def _checked_position(value, size: int, axis: int, what):
    """An integer index (or index array) into an axis of ``size``: checked now when known,
    else at run time."""
    import jax.numpy as jnp

    checked = traced_indices.check_position(value, size, axis, what, _traced, runtime_check)
    if _traced(checked):
        return checked
    return int(checked) if checked.ndim == 0 else jnp.asarray(checked)


def numpy_index(op, idx_list, values, shape):
    """The index tuple JAX takes (ints, slices, index arrays), checked, and a stand-in tuple
    of numpy values with the same result shape (for shape arithmetic)."""
    values = iter(values)
    index, standin, d = [], [], 0
    for entry in idx_list:
        if entry == "int":
            value = next(values)
            index.append(_checked_position(value, shape[d], d, op))
            standin.append(0)
            d += 1
        elif entry == "array":
            value = next(values)
            dtype = value.dtype if _traced(value) else np.asarray(value).dtype
            if dtype == bool:
                mask = traced_indices.known_mask(op, value, shape[d:], "JAX", _traced)
                index.append(mask)
                standin.append(mask)
                d += mask.ndim
            else:
                index.append(_checked_position(value, shape[d], d, op))
                standin.append(np.zeros(np.shape(value), dtype=np.intp))
                d += 1
        else:
            parts = [None if p is None else static_ints(next(values), "a slice bound")[0]
                     for p in entry[1:]]
            index.append(slice(*parts))
            standin.append(slice(*parts))
            d += 1
    return tuple(index), tuple(standin)


def indexed_shape(shape, standin) -> tuple:
    """The shape of ``x[index]`` for an ``x`` of ``shape`` (no data is touched)."""
    return np.broadcast_to(np.zeros((), dtype=np.int8), shape)[standin].shape


@register(st.Subtensor)
@register(st.AdvancedSubtensor)
def jax_subtensor(op, node):
    def subtensor(x, *index):
        idx, _ = numpy_index(op, op.idx_list, index, np.shape(x))
        return x[idx]

    return subtensor


@register(st.IncSubtensor)
@register(st.AdvancedIncSubtensor)
def jax_inc_subtensor(op, node):
    import jax.numpy as jnp

    def inc_subtensor(x, y, *index):
        idx, standin = numpy_index(op, op.idx_list, index, np.shape(x))
        st._check_fits(op, y, indexed_shape(np.shape(x), standin))
        target = jnp.asarray(x).at[idx]
        return target.set(y) if op.set_instead_of_inc else target.add(y)

    return inc_subtensor


@register(st.AdvancedSubtensor1)
def jax_advanced_subtensor1(op, node):
    def take(x, ilist):
        return x[_checked_position(ilist, np.shape(x)[0], 0, op)]

    return take


@register(st.AdvancedIncSubtensor1)
def jax_advanced_inc_subtensor1(op, node):
    import jax.numpy as jnp

    def inc(x, y, ilist):
        ilist = _checked_position(ilist, np.shape(x)[0], 0, op)
        st._check_fits(op, y, (np.shape(ilist)[0],) + tuple(np.shape(x)[1:]))
        target = jnp.asarray(x).at[ilist]
        return target.set(y) if op.set_instead_of_inc else target.add(y)

    return inc


def _check_labels(op, x_shape, labels):
    traced_indices.check_labels(op, x_shape, labels, _traced, runtime_check, _checked_position)


@register(TakeAlongLastAxis)
def jax_take_along(op, node):
    import jax.numpy as jnp

    def take_along(x, labels):
        _check_labels(op, np.shape(x), labels)
        picked = jnp.take_along_axis(x, jnp.asarray(labels)[..., None].astype(np.int64), axis=-1)
        return picked[..., 0]

    return take_along


@register(PutAlongLastAxis)
def jax_put_along(op, node):
    import jax.numpy as jnp

    dtype = node.outputs[0].dtype

    def put_along(values, labels, like):
        shape = np.shape(like)
        _check_labels(op, shape, labels)
        hit = jnp.asarray(labels)[..., None] == jnp.arange(shape[-1])
        return jnp.where(hit, jnp.asarray(values, dtype=dtype)[..., None],
                         jnp.zeros((), dtype=dtype))

    return put_along
