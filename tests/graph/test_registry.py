"""The one registry class every back end's op table, scalar table and the vectorize rules are
instances of (``tensorgraph.graph.registry``), and its one lookup rule seen from every mode: a
user's subclass that changes what its registered parent computes never gets the parent's code."""

import importlib
import sys

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.graph.registry import Registry
from tensorgraph.graph.replace import vectorize_graph
from tensorgraph.link.backend import UnsupportedOpsError
from tensorgraph.tensor.blockwise import Blockwise
from tensorgraph.tensor.elemwise import Elemwise

from user_subclasses import ExpPlusOne, Hotter, hotter


class Base:
    pass


class Child(Base):
    pass


class Other:
    pass


def test_lookup_follows_the_class_hierarchy():
    table = Registry("Test")

    @table.register(Base)
    def base_impl(op, node):
        return "base"

    assert table.lookup(Child()) is base_impl and table.lookup(Other()) is None

    @table.register(Child)
    def child_impl(op, node):
        return "child"

    assert table.lookup(Child()) is child_impl and table.lookup(Base()) is base_impl
    assert table.registered() == [Base, Child]


def test_registering_something_not_a_class_is_a_clear_type_error():
    table = Registry("Test")
    with pytest.raises(TypeError, match=r"Test register\(\) takes an op class, got .* \(a Child\)"):
        table.register(Child())
    with pytest.raises(TypeError, match="takes an op class"):
        table.add("Child", object())


def test_the_builtin_modules_are_imported_on_the_first_lookup(tmp_path, monkeypatch):
    package = tmp_path / "h1_builtin_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from tensorgraph.graph.registry import Registry\n"
        "TABLE = Registry('Lazy', __name__, ('fill',))\n")
    (package / "fill.py").write_text("from h1_builtin_pkg import TABLE\nTABLE.register(int)(len)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    table = importlib.import_module("h1_builtin_pkg").TABLE
    try:
        assert "h1_builtin_pkg.fill" not in sys.modules
        assert table.lookup(3) is len and "h1_builtin_pkg.fill" in sys.modules
        assert table.registered() == [int]
    finally:
        sys.modules.pop("h1_builtin_pkg.fill", None)
        sys.modules.pop("h1_builtin_pkg", None)


# ----------------------------------------------------------------------------------------------
# One rule in every mode: a user's subclass overriding what its registered parent computes

VALUE = np.array([0.0, 1.0, 3.0])
#: (the user's op applied to x, what it computes in numpy, the name the refusal gives)
SUBCLASSES = {
    "op": (lambda x: Hotter(-1)(x), hotter, "Hotter"),
    "scalar op": (lambda x: Elemwise(ExpPlusOne())(x), lambda v: np.exp(v) + 1, "expplusone"),
}


@pytest.mark.parametrize("which", list(SUBCLASSES))
@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE", "JAX", "NUMBA", "PYTORCH"])
def test_a_subclass_overriding_what_it_computes_runs_its_own_code_in_every_mode(mode, which):
    """Softmax's (Exp's) C, JAX, Numba and PyTorch code must not serve a subclass with its own
    perform (impl): the per-node linkers run its perform, the whole-graph back ends refuse it
    by name (they cannot call Python), never its parent's result."""
    build, expected, name = SUBCLASSES[which]
    x = tt.dvector("x")
    if mode in ("JAX", "NUMBA", "PYTORCH"):
        with pytest.raises(UnsupportedOpsError, match=name):
            tg.function([x], build(x), mode=mode)
        return
    np.testing.assert_allclose(tg.function([x], build(x), mode=mode)(VALUE), expected(VALUE))


def test_vectorize_batches_a_subclass_with_its_own_perform_as_a_blockwise():
    """Softmax's batching rule (softmax of the batched input) must not serve Hotter."""
    x, rows = tt.dvector("x"), tt.dmatrix("rows")
    batched = vectorize_graph(Hotter(-1)(x), {x: rows})
    assert isinstance(batched.owner.op, Blockwise) and isinstance(batched.owner.op.core_op, Hotter)
    value = np.stack([VALUE, 2 * VALUE])
    np.testing.assert_allclose(tg.function([rows], batched, mode="FAST_RUN")(value), hotter(value))


class ExpPlusThree(ExpPlusOne):
    """exp(x) + 3: a user's scalar op given code of its own in the back ends below."""

    def impl(self, x):
        return np.exp(x) + 3


def _register_exp_plus_three(mode):
    """The scalar family's signature: ``impl(op, in_dtypes, out_dtypes, *context)``."""
    if mode == "JAX":
        from tensorgraph.link.jax import register_scalar

        @register_scalar(ExpPlusThree)
        def jax_exp_plus_three(op, in_dtypes, out_dtypes):
            import jax.numpy as jnp

            return lambda x: jnp.exp(x) + 3
    else:
        from tensorgraph.link.numba import register_scalar

        @register_scalar(ExpPlusThree)
        def numba_exp_plus_three(op, in_dtypes, out_dtypes, args, code):
            assert in_dtypes == out_dtypes == ("float64",)
            return f"(np.exp({args[0]}) + 3.0)"


@pytest.mark.parametrize("mode", ["JAX", "NUMBA"])
def test_scalar_implementations_take_the_dtypes_then_the_back_ends_context(mode):
    pytest.importorskip(mode.lower())
    _register_exp_plus_three(mode)
    x = tt.dvector("x")
    f = tg.function([x], Elemwise(ExpPlusThree())(x), mode=mode)
    np.testing.assert_allclose(f(VALUE), np.exp(VALUE) + 3)
