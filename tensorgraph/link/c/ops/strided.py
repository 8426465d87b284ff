"""What the C of the shape, creation, join and indexing ops shares.

``strided.h`` (support code, one text for every op, so a unit gets it once; guarded because
ops append their own helpers to it):

* ``tg_pair`` / ``tg_pair_setup`` / ``TG_PAIR_FOR``: walk a destination array and a source
  array broadcast to it (dimensions aligned on the right, size-1 source dimensions read with
  stride 0), with dimensions that are contiguous in both merged so that a contiguous copy is
  one loop. The callers have checked that the shapes are compatible.
* ``tg_copy_into(dst, src)``: ``dst[...] = src`` for arrays of one dtype (typed moves by
  element size, ``memcpy`` when both are contiguous and the same size).
* ``tg_check_fits``: the run-time form of the ops' "does this value fit that shape" rule, with
  the op's error message: dimensions of size 1 broadcast where ``static_one`` says so (``alloc``:
  only dimensions of *static* size 1, as in ``Elemwise``) or everywhere (``static_one`` NULL:
  set/inc values, as numpy's ``a[idx] += b``).
* ``tg_index_basic``: applies a basic index (ints and slices with optional parts, Python's
  slice rules) to an array description in place, checking bounds.

The Python helpers give the per-dtype bits the C cannot share: reading an integer scalar of any
dtype, adding into an element.
"""

from __future__ import annotations

from tensorgraph.link.c import dtypes as cd
from tensorgraph.link.c.ops import read_c


def support(*names: str) -> str:
    """The support code made of the C files ``names`` (``ops/<name>``), in order, each
    after a blank line."""
    return "".join("\n" + read_c(name) for name in names)


def read_int(arr: str, dtype: str) -> str:
    """The value of the 0-d integer array ``arr`` (a ``tg_array *`` expression) as int64."""
    return f"((int64_t)*(const {cd.storage_type(dtype)} *)({arr})->data)"


def read_int_at(arr: str, dtype: str, i: str) -> str:
    """Element ``i`` of the integer vector ``arr`` as int64 (any stride)."""
    return (f"((int64_t)*(const {cd.storage_type(dtype)} *)(({arr})->data + ({i}) * "
            f"({arr})->strides[0]))")


def add_into(dtype: str) -> str:
    """A statement adding the element at ``ps`` to the one at ``pd`` (``TG_PAIR_FOR``'s names),
    as numpy's ``+=`` does for ``dtype`` (integers wrap, bool is logical or)."""
    if dtype == "bool":
        return "*(uint8_t *)pd = (uint8_t)(*(uint8_t *)pd | *(const uint8_t *)ps);"
    t = cd.storage_type(dtype)
    return f"*({t} *)pd = ({t})(*({t} *)pd + *(const {t} *)ps);"


def int_list(values) -> str:
    """A C compound-literal body ``{1, 2}`` that is never empty."""
    values = [str(int(v)) for v in values] or ["0"]
    return "{" + ", ".join(values) + "}"
