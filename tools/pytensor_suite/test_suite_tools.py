"""Checks of the suite's own machinery (no PyTensor needed):

    .venv/bin/pytest -n0 -p no:cacheprovider tools/pytensor_suite/test_suite_tools.py -q
"""

import ast
import importlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import classify  # noqa: E402
import tg_probe_import  # noqa: E402
import tg_pytensor_map as mapping  # noqa: E402


@pytest.fixture(autouse=True)
def _mapping(monkeypatch):
    mapping.install()
    monkeypatch.setattr(mapping, "_KNOWN", {"pytensor", "pytensor.tensor", "pytensor.tensor.math",
                                            "pytensor.tensor.shape", "pytensor.tensor.extra_ops"})
    monkeypatch.setattr(mapping, "MODE", "strict")
    yield
    for name in [n for n in sys.modules if n == "pytensor" or n.startswith("pytensor.")]:
        del sys.modules[name]


def test_family_finds_a_name_in_another_file_of_the_package():
    from tensorgraph.tensor.reduction import Sum

    math = importlib.import_module("pytensor.tensor.math")
    assert math.Sum is Sum


def test_tensor_namespace_is_tensorgraph_tensor_alone():
    import tensorgraph.tensor as tt

    pt = importlib.import_module("pytensor.tensor")
    assert pt.exp is tt.exp
    with pytest.raises(AttributeError, match="pytensor.tensor"):
        pt.no_such_name_here  # noqa: B018


def test_strict_missing_name_is_an_import_error_naming_the_pytensor_module():
    with pytest.raises(ImportError, match="cannot import name 'no_such_name' from "
                                          "'pytensor.tensor.math'"):
        exec("from pytensor.tensor.math import no_such_name", {})


def test_a_pytensor_module_without_counterpart_resolves_through_its_family():
    extra_ops = importlib.import_module("pytensor.tensor.extra_ops")
    assert extra_ops.squeeze is importlib.import_module("tensorgraph.tensor.shape").squeeze
    with pytest.raises(ModuleNotFoundError, match="pytensor.xtensor"):
        importlib.import_module("pytensor.xtensor")


def test_a_not_provided_module_imports_and_its_names_fail_when_a_test_uses_them(monkeypatch):
    ns = {}
    exec("import pytensor.sparse\nfrom pytensor.sparse import SparseTensorType", ns)
    placeholder = ns["SparseTensorType"]
    assert mapping.missing_name_of(placeholder) == "pytensor.sparse.SparseTensorType"
    monkeypatch.setattr(mapping, "IN_TEST", True)
    with pytest.raises(mapping.MissingName, match="pytensor.sparse.SparseTensorType"):
        placeholder("csc", dtype="float64")


def test_strict_internal_name_is_a_placeholder_other_missing_names_raise(monkeypatch):
    monkeypatch.setattr(mapping, "_KNOWN", mapping._KNOWN | {"pytensor.tensor.subtensor"})
    ns = {}
    exec("from pytensor.tensor.subtensor import basic_shape", ns)   # internals.toml [names]
    assert mapping.missing_name_of(ns["basic_shape"]) == "pytensor.tensor.subtensor.basic_shape"
    with pytest.raises(ImportError, match="no_such_helper"):
        exec("from pytensor.tensor.subtensor import no_such_helper", {})


def test_a_test_tool_module_of_pytensor_is_answered_by_the_tools_stand_in():
    """pytensor.npy_2_compat (numpy 1/2 shim of PyTensor's tests) imports in strict mode,
    from the tool's stand-in, not from tensorgraph."""
    import numpy as np

    from pytensor.npy_2_compat import old_np_unique  # noqa: E402 (the mapping is installed)

    assert old_np_unique.__module__ == "tg_standin_npy_2_compat"
    arr = np.array([[3, 1], [1, 3]])
    values, inverse = old_np_unique(arr, return_inverse=True)
    assert values.tolist() == [1, 3] and inverse.shape == (4,)
    np.testing.assert_array_equal(values[inverse], arr.ravel())
    rows, index, inverse, counts = old_np_unique(arr, True, True, True, axis=0)
    assert inverse.shape == (2,) and counts.tolist() == [1, 1]


def test_foreign_objects_of_tensorgraph_modules_do_not_count():
    math = importlib.import_module("pytensor.tensor.math")
    with pytest.raises(AttributeError):
        math.np  # noqa: B018  (numpy, imported by tensorgraph.tensor.math)


def test_submodule_import_keeps_the_function_of_the_same_name():
    import tensorgraph.tensor as tt

    importlib.import_module("pytensor.tensor.shape")
    assert importlib.import_module("pytensor.tensor").shape is tt.shape


def test_a_module_that_is_also_a_function_stays_callable(monkeypatch):
    monkeypatch.setattr(mapping, "_KNOWN", mapping._KNOWN | {"pytensor.scan"})
    import numpy as np

    import tensorgraph as tg
    import tensorgraph.tensor as tt

    pscan = importlib.import_module("pytensor.scan")
    x = tt.dvector("x")
    out, _ = pscan(lambda acc: acc * 2, outputs_info=[x], n_steps=3)
    assert np.allclose(tg.function([x], out[-1])(np.ones(2)), 8.0)
    assert not callable(importlib.import_module("pytensor.tensor.math"))


def test_probe_placeholder_is_lazy_at_import_and_raises_in_a_test(monkeypatch):
    monkeypatch.setattr(mapping, "MODE", "probe")
    math = importlib.import_module("pytensor.tensor.math")
    missing = math.no_such_function
    assert missing(1) is not None        # at import time: another placeholder
    monkeypatch.setattr(mapping, "IN_TEST", True)
    with pytest.raises(mapping.MissingName) as err:
        missing(1)
    assert err.value.name == "pytensor.tensor.math.no_such_function"


def test_probe_import_wraps_module_and_class_statements():
    tree = ast.parse("x = 1\nclass T:\n    y = f()\n    def test(self): pass\n")
    body = tg_probe_import._wrap(tree.body)
    assert all(isinstance(s, ast.Try) for s in body)
    assert isinstance(body[1].body[0].body[0], ast.Try)
    namespace = {"__tg_probe_blocked__": lambda exc, line, names, ns: ns.update(
        {n: ("blocked", line) for n in names})}
    exec(compile(ast.fix_missing_locations(ast.Module(body, [])), "<t>", "exec"), namespace)
    assert namespace["T"].y == ("blocked", 3)


@pytest.mark.parametrize("exc, cause, name", [
    ({"type": "tg_pytensor_map.MissingName", "missing_name": "pytensor.x.y", "message": ""},
     "missing name", "pytensor.x.y"),
    ({"type": "builtins.ImportError",
      "message": "cannot import name 'zz' from 'pytensor.tensor.math' (/x.py)"},
     "missing name", "pytensor.tensor.math.zz"),
    ({"type": "builtins.TypeError", "raised_in": "test",
      "message": "jacobian() got an unexpected keyword argument 'vectorize'"},
     "missing name", "jacobian(vectorize=)"),
    ({"type": "builtins.AssertionError", "kinds": ["numpy.testing"],
      "message": "Not equal to tolerance"}, "wrong value", None),
    ({"type": "builtins.ValueError", "raised_in": "tensorgraph", "bases": [],
      "message": "unknown mode 'CVM'"}, "refusal", None),
    ({"type": "builtins.KeyError", "raised_in": "tensorgraph", "bases": [],
      "message": "'x'"}, "other", None),
])
def test_classification(exc, cause, name):
    internals = {"names": {}, "tests": {}, "helpers": {}}
    got = classify.classify_failure("tests/t.py::test", exc, [], internals, "strict")
    assert (got[0], got[2]) == (cause, name)


def test_internals_list_wins_over_the_missing_name():
    internals = {"names": {"pytensor.link.numba*": "back end"}, "tests": {}, "helpers": {}}
    exc = {"type": "tg_pytensor_map.MissingName", "message": "",
           "missing_name": "pytensor.link.numba.linker.NumbaLinker"}
    assert classify.classify_failure("t::x", exc, [], internals, "probe")[0] == "internals"
