"""Which C an op gets: an implementation registered for a class serves a subclass only when
the subclass computes as that class does (the rule of every back end's table, DESIGN.md "How
an op gets code"). A user's subclass with its own ``perform`` (or, for a scalar op inside an
Elemwise, its own ``impl``) runs its own Python, never its parent's C."""

import importlib
import pkgutil

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import Mode
from tensorgraph.graph.op import Op
from tensorgraph.link.c import ops as c_ops
from tensorgraph.link.c.ops import scalar as c_scalar
from tensorgraph.graph.lookup import OP_SAME, SCALAR_SAME, nearest
from tensorgraph.scalar.basic import ScalarOp
from tensorgraph.tensor.elemwise import Elemwise
from tensorgraph.tensor.special import Softmax

from user_subclasses import ExpPlusOne, Hotter, SameSoftmax

C_LINKERS = ("c", "cvm", "c|py")


def _run_everywhere(inputs, output, value):
    results = {linker: tg.function(inputs, output, mode=Mode(linker=linker))(value)
               for linker in C_LINKERS}
    fast_run = tg.function(inputs, output, mode="FAST_RUN")
    fast_run(value)
    results["FAST_RUN"] = fast_run.wait_optimized()(value)
    return results


def test_an_op_subclass_with_its_own_perform_runs_it_not_its_parents_c():
    x = tt.dvector("x")
    value = np.array([0.0, 1.0])
    e = np.exp(value / 2)
    for where, result in _run_everywhere([x], Hotter(-1)(x), value).items():
        np.testing.assert_allclose(result, e / e.sum(), err_msg=where)
    assert c_ops.implementation(Hotter(-1)) is None


def test_a_scalar_op_subclass_with_its_own_impl_gets_no_parent_c_expression():
    x = tt.dvector("x")
    value = np.array([0.0, 1.0])
    for where, result in _run_everywhere([x], Elemwise(ExpPlusOne())(x) * 2, value).items():
        np.testing.assert_allclose(result, (np.exp(value) + 1) * 2, err_msg=where)
    with pytest.raises(NotImplementedError, match="expplusone"):
        c_scalar.scalar_expr(ExpPlusOne(), ["a"], ("float64",), "float64")


def test_a_subclass_that_computes_the_same_keeps_its_parents_c():
    assert c_ops.implementation(SameSoftmax(-1)) is c_ops.implementation(Softmax(-1))
    x = tt.dvector("x")
    value = np.array([0.0, 1.0])
    f = tg.function([x], SameSoftmax(-1)(x), mode=Mode(linker="c"))
    np.testing.assert_allclose(f(value), np.exp(value) / np.exp(value).sum())


def _op_classes():
    import tensorgraph
    for info in pkgutil.walk_packages(tensorgraph.__path__, "tensorgraph."):
        if not any(part in info.name for part in ("notebook", "jax", "numba", "pytorch", "dask",
                                                 "pytensor")):
            importlib.import_module(info.name)
    seen, todo = set(), [Op]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen and sub.__module__.startswith("tensorgraph."):
                seen.add(sub)
                todo.append(sub)
    return seen


def test_every_builtin_op_class_below_a_registered_one_keeps_its_c():
    """The rule must not take C from tensorgraph's own ops: each class with a registered
    ancestor computes as it does (or registers its own)."""
    c_ops.implementation(Softmax(-1))  # loads the built-in implementations
    lost = []
    for cls in _op_classes():
        scalar = issubclass(cls, ScalarOp)
        table = dict.fromkeys((c_scalar.EXPR if scalar else c_ops.TABLE).registered(), True)
        inherits = any(klass in table for klass in cls.__mro__)
        if inherits and nearest(table, cls, SCALAR_SAME if scalar else OP_SAME) is None:
            lost.append(f"{cls.__module__}.{cls.__qualname__}")
    assert not lost, lost


class ExpPlusTwo(ExpPlusOne):
    """exp(x) + 2, with a C expression of its own."""

    def impl(self, x):
        return np.exp(x) + 2


@c_scalar.scalar_c(ExpPlusTwo)
def _exp_plus_two(op, in_dtypes, out_dtypes, args):
    """The scalar family's signature: the op, the dtypes, then C's context (the arguments)."""
    (x,), (out,) = args, out_dtypes
    assert in_dtypes == ("float64",) and out == "float64"
    return f"(exp({x}) + 2.0)"


def test_a_scalar_c_expression_takes_the_dtypes_then_the_arguments():
    x = tt.dvector("x")
    value = np.array([0.0, 1.0])
    f = tg.function([x], Elemwise(ExpPlusTwo())(x), mode=Mode(linker="c"))
    np.testing.assert_allclose(f(value), np.exp(value) + 2)
    assert "(exp(" in c_scalar.scalar_expr(ExpPlusTwo(), ["a"], ("float64",), "float64")


def test_the_item_table_is_a_registry_that_refuses_what_is_not_an_op_class():
    """``register_item`` (per-item C of Blockwise core ops) is one more Registry: the same
    lookup rule and the same clear error as every other table."""
    from tensorgraph.link.c.ops import batched
    from tensorgraph.tensor.linalg import Cholesky

    assert type(batched.ITEMS).__name__ == "Registry"
    assert Cholesky in batched.ITEMS.registered()
    with pytest.raises(TypeError, match=r"register\(\) takes an op class, got .*\(a Cholesky\)"):
        batched.register_item(Cholesky())
