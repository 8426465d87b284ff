"""Checks shared by the op test files."""

import numpy as np

import tensorgraph
import tensorgraph.tensor as tt
from tensorgraph.compile.mode import Mode

C = Mode("cvm", None)   # C linker, no rewrites: every node as written
PY = Mode("py", None)   # the numpy reference, no rewrites
#: the memory layouts of ``layout``
LAYOUTS = ["c", "f", "step", "reversed", "broadcast"]


def fn(inputs, outputs, **kwargs):
    """Compile without C or rewrites: the numpy reference path of the ops under test."""
    return tensorgraph.function(inputs, outputs, mode="FAST_COMPILE", **kwargs)


def check_infer_shape(output, inputs, values):
    """The shape ``infer_shape`` of ``output``'s node computes equals the real one."""
    node = output.owner
    shapes = [tuple(tt.shape_i(i, d) for d in range(i.ndim)) for i in node.inputs]
    inferred = node.op.infer_shape(None, node, shapes)[output.index]
    symbolic = [tt.as_tensor_variable(s) for s in inferred]
    got = fn(inputs, [output] + symbolic)(*values) if symbolic else [fn(inputs, output)(*values)]
    assert tuple(int(s) for s in got[1:]) == np.shape(got[0])


def both(inputs, outputs, **kwargs):
    """The function compiled with C (checked to run every node as C) and with Python."""
    f_c = tensorgraph.function(inputs, outputs, mode=C, **kwargs)
    kinds = {str(n.op): t.kind for n, t in zip(f_c.vm.nodes, f_c.vm.thunks)}
    assert set(kinds.values()) == {"c"}, kinds
    return f_c, tensorgraph.function(inputs, outputs, mode=PY, **kwargs)


def layout(value, how):
    """``value`` with the same elements in another memory layout (one of ``LAYOUTS``):
    C order, Fortran order, every other element of a bigger array, negative strides, or
    stride 0 along the first axis."""
    if how == "f":
        return np.asfortranarray(value)
    if how == "step":
        big = np.zeros(tuple(2 * s for s in value.shape), value.dtype)
        big[tuple(slice(None, None, 2) for _ in value.shape)] = value
        return big[tuple(slice(None, None, 2) for _ in value.shape)]
    if how == "reversed":
        flipped = np.ascontiguousarray(value[tuple(slice(None, None, -1) for _ in value.shape)])
        return flipped[tuple(slice(None, None, -1) for _ in value.shape)]
    if how == "broadcast" and value.size:
        return np.broadcast_to(value[:1], value.shape)
    return value


def assert_c_from_table(cases, *modules):
    """Ops say what they compute, the C back end says how: each ``(op, impl_class)`` of
    ``cases`` gets its C from ``impl_class`` registered in ``tensorgraph.link.c.ops``, its
    classes (up to ``Op``) define nothing named ``c_*``, and ``modules`` (the ops' tensor
    modules) import nothing of ``tensorgraph.link``."""
    import ast
    import inspect

    from tensorgraph.graph.op import Op
    from tensorgraph.link.c.ops import implementation

    for op, impl_class in cases:
        assert isinstance(implementation(op), impl_class), (op, implementation(op))
        mro = type(op).__mro__
        for klass in mro[:mro.index(Op)]:
            assert not [n for n in vars(klass) if n.startswith("c_")], klass
    for module in modules:
        tree = ast.parse(inspect.getsource(module))
        imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import)
                     for a in n.names]
        assert not [m for m in imported if m and m.startswith("tensorgraph.link")], module
