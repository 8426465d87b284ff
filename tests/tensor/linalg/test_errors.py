"""The error rules: a matrix an op cannot handle raises numpy's LinAlgError naming the op,
the batch index of the matrix and the user's line; ``cholesky(on_error='nan')`` gives NaN
for that matrix only."""

from __future__ import annotations

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.tensor import linalg as la


def _stack_with_bad_item(bad, index=3, size=5):
    stack = np.stack([np.eye(3) * 2] * size)
    stack[index] = bad
    return stack


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_cholesky_of_a_matrix_not_positive_definite_names_op_batch_index_and_line(mode):
    A = tt.tensor3("A", dtype="float64")
    L = la.cholesky(A, on_error="raise")  # the line the error names
    f = tg.function([A], L, mode=mode)
    with pytest.raises(np.linalg.LinAlgError) as info:
        f(_stack_with_bad_item(-np.eye(3)))
    message = str(info.value)
    assert message.startswith("cholesky: the matrix is not positive definite (at batch index 3)")
    assert "test_errors.py" in message and "L = la.cholesky(A, on_error=\"raise\")" in message


def test_cholesky_on_error_nan_gives_nan_for_the_bad_matrix_only():
    A = tt.tensor3("A", dtype="float64")
    f = tg.function([A], la.cholesky(A), mode="FAST_COMPILE")   # on_error='nan': PyTensor's default
    out = f(_stack_with_bad_item(-np.eye(3)))
    assert np.isnan(out[3]).all()
    np.testing.assert_allclose(out[[0, 1, 2, 4]], np.sqrt(2) * np.eye(3)[None].repeat(4, 0))


@pytest.mark.parametrize("build, bad, words", [
    (lambda A, b: la.inv(A), np.zeros((3, 3)), "inv: the matrix is singular"),
    (lambda A, b: la.solve(A, b), np.ones((3, 3)), "solve: the matrix is singular"),
    (lambda A, b: la.solve(A, b, assume_a="pos"), -np.eye(3),
     "solve: the matrix is not positive definite"),
    (lambda A, b: la.solve_triangular(A, b, lower=True), np.tril(np.ones((3, 3)), -1),
     r"solve_triangular: the matrix is singular \(a zero on its diagonal\)"),
    (lambda A, b: la.lu_factor(A)[0], np.zeros((3, 3)), "lu_factor: the matrix is singular"),
])
def test_singular_matrices_raise_linalgerror_with_the_batch_index(build, bad, words):
    A, b = tt.tensor3("A", dtype="float64"), tt.tensor3("b", dtype="float64")
    f = tg.function([A, b], build(A, b), mode="FAST_COMPILE", on_unused_input="ignore")
    with pytest.raises(np.linalg.LinAlgError, match=rf"^{words} \(at batch index 1\)"):
        f(_stack_with_bad_item(bad, index=1, size=2), np.ones((2, 3, 1)))


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_a_single_matrix_has_no_batch_index(mode):
    A = tt.dmatrix("A")
    X = la.inv(A) * 2     # FAST_RUN runs the core op unbatched: the line is still this one
    f = tg.function([A], X, mode=mode)
    with pytest.raises(np.linalg.LinAlgError, match=r"^inv: the matrix is singular\n(.|\n)*"
                                                    r"test_errors.py:\d+: X = la.inv\(A\) \* 2"):
        f(np.zeros((3, 3)))
