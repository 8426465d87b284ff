"""The Op C API of docs/c_backend.md: the documented user op compiles and runs as C (under
every C linker, node by node too), reports its errors with the node, and the optional hooks
(support code, headers, libraries, NotImplementedError fallback) do what the page says."""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import Mode
from tensorgraph.graph import Apply, Op
from tensorgraph.link.c.op import COp

DOC = Path(__file__).resolve().parents[3] / "docs" / "c_backend.md"


@pytest.fixture(scope="module")
def doc_namespace():
    """The namespace after running the page's Python example (which asserts it ran as C)."""
    (code,) = re.findall(r"^```python\n(.*?)^```", DOC.read_text(), re.S | re.M)
    namespace = {"__name__": "c_backend_doc"}
    exec(compile(code, str(DOC), "exec"), namespace)
    return namespace


@pytest.mark.parametrize("linker", ["c|py", "c|py_nogc", "c", "cvm", "cvm_nogc"])
def test_documented_user_op_runs_as_c_under_every_linker(doc_namespace, linker):
    op = doc_namespace["ScaledCubeC"](0.5)
    x = tt.dvector("x")
    f = tensorgraph.function([x], op(x) + 1, mode=Mode(linker, None))
    values = np.linspace(-2, 2, 9)
    np.testing.assert_allclose(f(values), 0.5 * values**3 + 1)
    np.testing.assert_allclose(f(values[::-3]), 0.5 * values[::-3] ** 3 + 1)
    assert {t.kind for t in f.vm.thunks} == {"c"}  # the op, the DimShuffle and the add


def test_documented_user_op_error_names_the_node(doc_namespace):
    x = tt.dvector("x")
    f = tensorgraph.function([x], doc_namespace["ScaledCubeC"](2.0)(x), mode="FAST_RUN")
    with pytest.raises(ValueError) as info:
        f(np.zeros(0))
    message = str(info.value)
    assert message.startswith("ScaledCubeC: empty input")
    assert "in node ScaledCubeC{2.0}" in message and "float64 (0,)" in message


class Twice(COp):
    """2 * x with support code shared by every node, a header and a library, and C only for
    float64 (other dtypes fall back to perform)."""

    __props__ = ()

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2

    def c_headers(self):
        return ["<string.h>"]

    def c_libraries(self):
        return ["m"]

    def c_support_code(self, node=None):
        return "static double twice_helper(double v) { return v + v; }"

    def c_code(self, node, name, inputs, outputs, sub):
        if node.inputs[0].dtype != "float64":
            raise NotImplementedError("only float64")
        (x,), (z,) = inputs, outputs
        return f"""
        if (!tg_is_c_contiguous({x})) {{ tg_error({sub['ctx']}, "Twice: contiguous only"); {sub['fail']} }}
        if (tg_alloc({z}, {x}->ndim, {x}->shape, {x}->typenum, {sub['ctx']})) {{ {sub['fail']} }}
        int64_t n = tg_size({x});
        for (int64_t i = 0; i < n; i++)
            ((double *){z}->data)[i] = twice_helper(((const double *){x}->data)[i]);
        """

    def c_code_cache_version(self):
        return (1,)


def test_support_code_is_emitted_once_and_other_dtypes_fall_back():
    x, y = tt.dmatrix("x"), tt.fvector("y")
    twice = Twice()
    f = tensorgraph.function([x, y], [twice(twice(x)), twice(y)], mode=Mode("cvm", None))
    kinds = {str(n.inputs[0].type.dtype): t.kind for n, t in zip(f.vm.nodes, f.vm.thunks)}
    assert kinds == {"float64": "c", "float32": "py"}
    source = f.vm.cgraph.source
    assert source.count("static double twice_helper") == 1
    assert "#include <string.h>" in source
    a, b = f(np.ones((2, 3)), np.ones(2, "float32"))
    np.testing.assert_array_equal(a, 4.0)
    np.testing.assert_array_equal(b, 2.0)
    with pytest.raises(ValueError, match="Twice: contiguous only"):
        f(np.ones((3, 4))[:, ::2], np.ones(2, "float32"))


def test_a_plain_op_defining_c_code_is_told_its_c_is_not_used():
    """An op's C comes from tensorgraph.link.c.ops (a COp registers its methods there); a
    plain Op's c_code would silently never run, so making such a class warns."""
    with pytest.warns(UserWarning, match="PlainWithC defines c_code but is a plain Op"):
        class PlainWithC(Op):
            def c_code(self, node, name, inputs, outputs, sub):
                return ""
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        class WithC(COp):
            def c_code(self, node, name, inputs, outputs, sub):
                return ""


class PyTensorStyleDouble(COp):
    """2 * x with C written for PyTensor (PyArrayObject, the NumPy C API): tensorgraph cannot
    compile it, so its nodes run perform, with a warning that says why."""

    __props__ = ()

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2

    def c_code(self, node, name, inputs, outputs, sub):
        (x,), (z,) = inputs, outputs
        return f"""
        Py_XDECREF({z});
        {z} = (PyArrayObject *)PyArray_NewCopy({x}, NPY_ANYORDER);
        if (!{z}) {{ {sub['fail']} }}
        """


@pytest.mark.parametrize("linker", ["c|py", "c", "cvm"])
def test_a_cop_with_pytensor_c_api_code_runs_perform_and_says_why(linker):
    from tensorgraph.link.c import op as cop

    cop._warned.discard(PyTensorStyleDouble)
    x = tt.dvector("x")
    with pytest.warns(cop.PyTensorCCodeWarning, match=r"PyTensorStyleDouble\.c_code is written "
                                                      r"for PyTensor's C \(it uses Py_XDECREF"):
        f = tensorgraph.function([x], PyTensorStyleDouble()(x) + 1,
                                 mode=Mode(linker=linker, optimizer=None))
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [3.0, 5.0])
    kinds = {type(n.op).__name__: getattr(t, "kind", "py") for n, t in zip(f.vm.nodes, f.vm.thunks)}
    assert kinds["PyTensorStyleDouble"] == "py"
    with warnings.catch_warnings():     # once per op class
        warnings.simplefilter("error")
        tensorgraph.function([x], PyTensorStyleDouble()(x) * 3,
                             mode=Mode(linker=linker, optimizer=None))
