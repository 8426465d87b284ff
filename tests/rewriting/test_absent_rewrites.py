"""PyTensor rewrite names with no counterpart here (rewriting.db.register_absent): ported code
may exclude them (nothing to exclude, the result is unchanged); including or requiring one is
refused with the reason, and a misspelt name is still an error."""

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import Mode, get_default_mode, get_mode
from tensorgraph.rewriting.db import ABSENT, RewriteDatabaseQuery
from tensorgraph.rewriting.optdb import optdb


@pytest.mark.parametrize("name", ["local_cut_useless_reduce",
                                  "local_useless_fill",
                                  "bool_idx_to_nonzero", "c_blas", "scipy_blas"])
def test_excluding_a_pytensor_only_rewrite_compiles_the_same_result(name):
    assert name in ABSENT
    x = tt.matrix("x")
    y = tt.vector("y")
    out = tt.dot(x, y) + tt.sum(x, axis=0)[:2].sum()
    mode = get_default_mode().excluding(name)
    assert name in mode.rewrite_excluding
    f = tg.function([x, y], out, mode=mode)
    xv = np.arange(6.0).reshape(2, 3)
    yv = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(f(xv, yv), xv @ yv + xv.sum(axis=0)[:2].sum())


def test_cvm_mode_excluding_c_and_scipy_blas_still_uses_blas():
    x, y = tt.matrix("x"), tt.matrix("y")
    f = tg.function([x, y], tt.dot(x, y), mode=get_mode("CVM").excluding("c_blas", "scipy_blas"))
    ops = {type(n.op).__name__ for n in f.maker.fgraph.toposort()}
    assert ops & {"Gemm", "Dot22", "Dot"}, ops
    a = np.ones((2, 3))
    np.testing.assert_allclose(f(a, a.T), a @ a.T)


@pytest.mark.parametrize("method", ["including", "requiring"])
def test_including_or_requiring_one_says_it_has_no_counterpart(method):
    with pytest.raises(ValueError, match="'c_blas' is a PyTensor rewrite or tag with no "
                                         "counterpart.*can be excluded"):
        getattr(get_default_mode(), method)("c_blas")


def test_a_misspelt_name_is_still_refused_when_excluded():
    with pytest.raises(ValueError, match="unknown rewrite name or tag 'c_blass'"):
        get_default_mode().excluding("c_blass")
    with pytest.raises(ValueError, match="unknown rewrite name or tag"):
        optdb.check_tags(["local_cut_useless_reduce_"], excluding=True)


def test_a_query_mode_accepts_the_exclusion_too():
    mode = Mode(optimizer=RewriteDatabaseQuery(include=["fast_run"])).excluding(
        "bool_idx_to_nonzero")
    x = tt.vector("x")
    f = tg.function([x], x[x > 0], mode=mode)
    np.testing.assert_array_equal(f(np.array([1.0, -1.0, 2.0])), [1.0, 2.0])


def test_built_in_rewrite_names_pass_every_query():
    # PyTensor's local_join_1 removes a Join of one tensor; concatenate builds none
    from tensorgraph.rewriting.db import BUILT_IN

    assert "local_join_1" in BUILT_IN
    m = tt.matrix("m")
    for mode in (get_default_mode().including("local_join_1"),
                 get_default_mode().requiring("local_join_1"),
                 get_default_mode().excluding("local_join_1")):
        f = tg.function([m], tt.concatenate([m]), mode=mode)
        assert "Join" not in [type(n.op).__name__ for n in f.maker.fgraph.toposort()]
        np.testing.assert_array_equal(f(np.eye(2)), np.eye(2))


def test_blasopt_names_the_blas_phase():
    x, y = tt.dmatrix("x"), tt.dmatrix("y")
    ops = {type(n.op).__name__ for n in tg.function(
        [x, y], tt.dot(x, y), mode=get_mode("FAST_RUN").excluding("BlasOpt")
    ).maker.fgraph.toposort()}
    assert not ops & {"Gemm", "Gemv", "Dot22"}, ops


def test_shape_unsafe_tags_the_assert_removal():
    assert "shape_unsafe" in optdb["specialize"].tags_of("local_remove_all_assert")
    x = tt.dvector("x")
    out = tt.specify_shape(x, (2,))
    f = tg.function([x], out, mode=get_default_mode().excluding("shape_unsafe"))
    with pytest.raises(AssertionError):
        f(np.ones(3))


@pytest.mark.parametrize("name", ["local_useless_slice", "extract_diag_lift_pass",
                                  "fuse_indexed_into_elemwise"])
def test_pytensor_subtensor_passes_are_absent(name):
    assert name in ABSENT
    get_default_mode().excluding(name)
    with pytest.raises(ValueError, match="no counterpart"):
        get_default_mode().including(name)
