"""Checks shared by the op test files."""

import numpy as np

import tensorgraph
import tensorgraph.tensor as tt


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
