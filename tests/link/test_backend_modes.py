"""The whole-graph back ends' shared parts: the mode names, 'DEBUG_MODE', the op tables, the
ifelse partition, and the rule that only tensorgraph/link/jax imports jax, only
tensorgraph/link/numba imports numba and only tensorgraph/link/pytorch imports torch."""

import pathlib
import re
import warnings

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph import config
from tensorgraph.compile.debugmode import DebugMode
from tensorgraph.compile.mode import get_mode
from tensorgraph.link.backend import branch_owners

import backend_checks as checks

PACKAGE = pathlib.Path(tg.__file__).parent


def test_debug_mode_is_debugmode_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="'DEBUG_MODE' is deprecated: use 'DebugMode'"):
        mode = get_mode("DEBUG_MODE")
    assert isinstance(mode, DebugMode)
    x = tt.vector("x")
    with pytest.warns(DeprecationWarning) as caught:
        f = tg.function([x], x * 2, mode="DEBUG_MODE")
    assert caught[0].filename == __file__  # the warning points at the user's line
    assert isinstance(f.maker.mode, DebugMode)
    np.testing.assert_allclose(f(np.ones(2)), [2.0, 2.0])


def test_the_mode_flag_takes_the_new_names():
    for name in ("JAX", "NUMBA", "PYTORCH", "DEBUG_MODE"):
        config.mode = name
    config.mode = "FAST_RUN"
    config.linker = "jax"
    config.linker = "numba"
    config.linker = "pytorch"


def test_ifelse_sides_own_the_nodes_only_they_need():
    from tensorgraph.graph.fg import FunctionGraph
    from tensorgraph.ifelse import ifelse

    x, c = tt.vector("x"), tt.scalar("c")
    shared_part = tt.exp(x)
    then_only = tt.log(shared_part).sum()
    else_only = tt.tanh(x).max()
    inner = ifelse(c > 1, tt.cos(x).sum(), x.min())
    out = ifelse(c > 0, [then_only + inner], [else_only])
    fgraph = FunctionGraph([x, c], out + [shared_part.sum()], clone=False)
    owners = branch_owners(fgraph)
    by_op = {str(n.op): side for n, (_, side) in owners.items()}
    ops_of = {n: str(n.op) for n in fgraph.apply_nodes}
    exp_node = next(n for n, o in ops_of.items() if o == "Elemwise{exp}")
    assert exp_node not in owners  # also needed outside the ifelse
    assert by_op["Elemwise{log}"] == 0 and by_op["Elemwise{tanh}"] == 1
    cos_node = next(n for n, o in ops_of.items() if o == "Elemwise{cos}")
    inner_if = inner.owner
    outer_if = out[0].owner
    assert owners[cos_node] == (inner_if, 0)  # the innermost side
    assert owners[inner_if] == (outer_if, 0)


def test_only_the_back_end_packages_import_their_library():
    pattern = re.compile(r"^\s*(from|import)\s+(jax|numba|torch)\b", re.M)
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).parts
        for match in pattern.finditer(path.read_text(encoding="utf-8")):
            library = match.group(2)
            if parts[:2] != ("link", {"torch": "pytorch"}.get(library, library)):
                offenders.append(f"{'/'.join(parts)} imports {library}")
    assert offenders == []


def test_compiling_in_fast_run_imports_neither_jax_nor_numba_nor_torch(run_python):
    code = ("import sys, numpy as np, tensorgraph as tg, tensorgraph.tensor as tt\n"
            "x = tt.vector('x')\n"
            "tg.function([x], tt.exp(x).sum(), mode='FAST_RUN')(np.ones(3))\n"
            "for name in ('JAX', 'NUMBA', 'PYTORCH'): tg.compile.mode.get_mode(name)\n"
            "print(sorted(m for m in ('jax', 'numba', 'torch') if m in sys.modules))\n")
    proc = run_python("-c", code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_unknown_modes_still_list_the_names():
    with pytest.raises(ValueError, match="unknown mode 'NO_SUCH_MODE'.*JAX.*NUMBA"):
        get_mode("NO_SUCH_MODE")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        get_mode("JAX")


@pytest.mark.parametrize("mode", ["JAX", "NUMBA", "PYTORCH"])
def test_a_stepper_of_a_whole_graph_function_says_why_it_cannot_step(mode):
    x = tt.vector("x")
    f = tg.function([x], tt.exp(x).sum(), mode=mode)
    with pytest.raises(TypeError, match="runs the whole graph as one .* program"):
        f.stepper(np.ones(3))


@pytest.mark.parametrize("mode", ["JAX", "NUMBA", "PYTORCH"])
def test_copies_and_a_pickle_unpickled_in_another_process(mode, run_python, tmp_path):
    import pickle

    x = tt.vector("x")
    w = tg.shared(np.arange(3.0), name="w")
    f = tg.function([x], tt.dot(w, x), updates=[(w, w * 2)], mode=mode, name="f")
    assert f(np.ones(3)) == 3.0
    g = f.copy(swap={w: tg.shared(np.ones(3), name="w2")})
    assert g(np.ones(3)) == 3.0 and f.copy(share_memory=True)(np.ones(3)) == 6.0
    (tmp_path / "f.pkl").write_bytes(pickle.dumps(f))
    code = ("import pickle, numpy as np\n"
            f"f = pickle.loads(open({str(tmp_path / 'f.pkl')!r}, 'rb').read())\n"
            "print(f(np.ones(3)), f(np.ones(3)), f.maker.mode.linker_name)\n")
    proc = run_python("-c", code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["12.0", "24.0", mode.lower()]


#: every mode, each compiling the integer-edge sweep (tests/backend_checks.py)
ALL_MODES = ["FAST_RUN", "FAST_COMPILE", "c", "py", "JAX", "NUMBA", "PYTORCH"]


def _mode(name):
    from tensorgraph.compile.mode import Mode

    return Mode(linker=name) if name in ("c", "py") else name


@pytest.mark.parametrize("dtype", [d if d in ("int8", "int64", "uint64") else pytest.param(
    d, marks=pytest.mark.slow) for d in checks.INT_DTYPES])  # each 3 s cold in NUMBA
@pytest.mark.parametrize("mode", ALL_MODES)
def test_integer_ops_follow_numpy_on_the_edges(mode, dtype):
    """One rule in every mode, numpy's: INT_MIN // -1, INT_MIN % -1, x // 0, wrap-around,
    powers up to INT_MAX (issue 31, 1.2)."""
    refused = ()
    if mode == "PYTORCH" and dtype == "uint64":  # no uint64 ordering in PyTorch: refused
        refused = ("a // b", "a % b", "int_div", "mod", "maximum", "minimum", "lt", "le", "gt",
                   "ge", "eq", "neq", "clip(a, min(a,b), b)", "switch(a<b,a,b)", "sign")
    checks.check_integer_edges(_mode(mode), dtype, refused)


@pytest.mark.parametrize("mode", ALL_MODES)
def test_integers_to_negative_powers_raise_numpys_error(mode):
    checks.check_negative_integer_powers(_mode(mode))
