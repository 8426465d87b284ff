"""docs/backends.md's table "Which ops each back end runs" says what the registries say.

The table is written by hand (its caveats are prose), so this test reads it back: every name in
backticks in a row's first cell is built into a node, and each back end is asked, without
compiling anything, whether it can run that node: the C table must give the node a C fragment
(``node_c_code``, what codegen asks; without one FAST_RUN runs its ``perform``), the JAX and
PYTORCH tables' implementation must exist and accept the node (``impl(op, node)`` may decline
with NotImplementedError), the NUMBA module writer must list no problem for it. A row saying
"yes" (with or without a caveat in parentheses) must be true of every name; a row saying "no"
must be false of every name.
"""

import re
from pathlib import Path

import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.graph.basic import Constant, graph_inputs
from tensorgraph.graph.fg import FunctionGraph
from tensorgraph.ifelse import IfElse, ifelse
from tensorgraph.raise_op import assert_op
from tensorgraph.tensor import blas, extra_ops, linalg, special
from tensorgraph.tensor.random.utils import RandomStream

PAGE = Path(__file__).parent.parent.parent / "docs" / "backends.md"
BACKENDS = ("C", "JAX", "NUMBA", "PYTORCH")


def table_rows() -> list[tuple[str, list[str], dict]]:
    """(first cell, its backticked names, {back end: True/False}) per row of the table."""
    text = PAGE.read_text().split("## Which ops each back end runs", 1)[1]
    table = text.split("\n|", 1)[1].split("\n\n", 1)[0]  # the first table of the section
    lines = ["|" + line for line in table.split("\n|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header[1:] == list(BACKENDS), f"the table's columns are {header}"
    rows = []
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        verdicts = {}
        for backend, cell in zip(BACKENDS, cells[1:]):
            assert re.match(r"(yes|no)\b", cell), \
                f"{backend} cell of row {cells[0]!r} starts with neither yes nor no: {cell!r}"
            verdicts[backend] = cell.startswith("yes")
        named = re.sub(r"\([^()]*\)", "", cells[0])  # names in parentheses are examples
        rows.append((cells[0], re.findall(r"`([^`\s]+)`", named), verdicts))
    return rows


# ----------------------------------------------------------------------------------------------
# A node of every name the table uses

def _zoo() -> dict:
    """{name: outputs whose graph holds nodes of that name}; each name gets its own graph."""
    x, y, m = tt.dvector("x"), tt.dvector("y"), tt.dmatrix("m")
    i, n, labels = tt.lvector("i"), tt.lscalar("n"), tt.lvector("labels")
    s = RandomStream(0)
    zoo = {"Elemwise": [x + y, tt.exp(x)], "exp": tt.exp(x), "tanh": tt.tanh(x),
           "sigmoid": tt.sigmoid(x), "softplus": tt.softplus(x), "log1mexp": tt.log1mexp(x),
           "erf": tt.erf(x), "erfc": tt.erfc(x), "tt.gamma": tt.gamma(x), "gammaln": tt.gammaln(x),
           "erfinv": tt.erfinv(x), "erfcinv": tt.erfcinv(x), "psi": tt.psi(x),
           "tri_gamma": tt.tri_gamma(x), "erfcx": tt.erfcx(x), "gammainc": tt.gammainc(x, y),
           "gammaincc": tt.gammaincc(x, y), "gammaincinv": tt.gammaincinv(x, y),
           "gammainccinv": tt.gammainccinv(x, y), "betainc": tt.betainc(x, y, x),
           "betaincinv": tt.betaincinv(x, y, x), "i0": tt.i0(x), "i1": tt.i1(x),
           "i0e": tt.i0e(x), "i1e": tt.i1e(x), "ive": tt.ive(x, y), "kve": tt.kve(x, y),
           "ndtr": tt.ndtr(x), "log_ndtr": tt.log_ndtr(x), "owens_t": tt.owens_t(x, y),
           "hyp2f1": tt.hyp2f1(x, y, x, y), "gammainc_dk": tt.math.gammainc_dk(x, y),
           "betainc_da": tt.math.betainc_da(x, y, x),
           "Hyp2F1Der": tt.math.hyp2f1_der(x, y, x, y, wrt=0),
           "j0": tt.j0(x), "j1": tt.j1(x), "jv": tt.jv(x, y), "gammau": tt.gammau(x, y),
           "gammal": tt.gammal(x, y),
           "DimShuffle": m.T, "Shape": x.shape, "SpecifyShape": tt.specify_shape(x, (3,)),
           "Reshape": m.reshape((-1,)), "MakeVector": tt.stack([n, n]),
           "Join": tt.concatenate([x, y]), "Split": tt.split(x, [1, 2], 2),
           "Alloc": tt.alloc(0.0, n, 2), "ARange": tt.arange(n), "Eye": tt.eye(n),
           "ExtractDiag": tt.diagonal(m, 1),
           "Tri": tt.tri(n), "Subtensor": x[1:], "IncSubtensor": tt.inc_subtensor(x[1:], 1.0),
           "AdvancedSubtensor1": x[i], "AdvancedIncSubtensor1": tt.inc_subtensor(x[i], 1.0),
           "AdvancedSubtensor": [m[i, i], m[m > 0]],
           "AdvancedIncSubtensor": tt.inc_subtensor(m[i, i], 1.0),
           "TakeAlongLastAxis": special.TakeAlongLastAxis()(m, labels),
           "PutAlongLastAxis": special.PutAlongLastAxis()(x, labels, m),
           "Sum": x.sum(), "Prod": x.prod(), "Max": x.max(), "Min": x.min(),
           "All": (x > 0).all(), "Any": (x > 0).any(), "Argmax": tt.argmax(x),
           "Argmin": tt.argmin(x), "Softmax": special.softmax(m),
           "LogSoftmax": special.log_softmax(m), "Dot": tt.dot(x, y),
           "TensorDot": tt.tensordot(m, m, 2), "MatMul": tt.matmul(tt.dtensor3("a"), tt.dtensor3("b")),
           "IfElse": ifelse(n > 0, x, y), "Assert": assert_op(x, n > 0),
           "IndexLoop": tg.gradient.jacobian(x**2, x),
           "Scan": tg.scan(lambda a, h: h + a, sequences=x, outputs_info=tt.zeros(()))[0],
           "scan": tg.scan(lambda a: a + s.normal(0.0, 1.0), sequences=x)[0]}
    draws = {"uniform": (), "normal": (), "standard_normal": (), "exponential": (),
             "beta": (2.0, 2.0), "integers": (0, 5), "binomial": (5, 0.5), "poisson": (),
             "bernoulli": (0.5,), "choice": (5,), "lognormal": (), "laplace": (),
             "logistic": (), "weibull": (2.0,), "geometric": (0.5,), "wald": (1.0, 1.0),
             "triangular": (0.0, 0.5, 1.0), "vonmises": (0.0, 1.0), "halfnormal": (),
             "pareto": (2.0,), "gumbel": (), "cauchy": (), "t": (3.0,),
             "hypergeometric": (5, 5, 3), "halfcauchy": (), "truncexpon": (2.0,),
             "nbinom": (5, 0.5), "betabinom": (5, 2.0, 2.0), "gengamma": (),
             "invgamma": (2.0, 1.0), "rayleigh": ()}
    for name, args in draws.items():
        draw = getattr(s, name)(*args, size=3)
        zoo[draw.owner.op.name] = draw  # the table's name: negative_binomial for nbinom
    zoo["gamma"] = s.gamma(2.0, scale=1.0, size=3)  # the draw; the function is tt.gamma
    zoo["permutation"] = s.permutation(5)
    zoo["multivariate_normal"] = s.multivariate_normal(tt.zeros(2), tt.eye(2))
    zoo["dirichlet"] = s.dirichlet(tt.ones(3))
    zoo["multinomial"] = s.multinomial(5, tt.ones(3) / 3)
    zoo["categorical"] = s.categorical(tt.ones(3) / 3)
    zoo["CumOp"] = extra_ops.cumsum(x)
    zoo["SearchsortedOp"] = extra_ops.searchsorted(x, y)
    zoo["Unique"] = extra_ops.unique(x)
    zoo["Blockwise"] = linalg.inv(tt.dtensor3("a"))
    for name, batched in (("MatrixInverse", linalg.inv(m)), ("Det", linalg.det(m)),
                          ("Cholesky", linalg.cholesky(m)), ("Solve", linalg.solve(m, x)),
                          ("Eigh", linalg.eigh(m)[0]), ("Eigvalsh", linalg.eigvalsh(m)),
                          ("GeneralizedEigh", linalg.eigh(m, m)[0]), ("Eig", linalg.eig(m)[0]),
                          ("SVD", linalg.svd(m)[0]), ("QR", linalg.qr(m)[0]),
                          ("Schur", linalg.schur(m)[0]), ("QZ", linalg.qz(m, m)[0]),
                          ("Expm", linalg.expm(m)),
                          ("SolveDiscreteARE", linalg.solve_discrete_are(m, m, m, m)),
                          ("SolveTriangular", linalg.solve_triangular(m, x)),
                          ("CholeskySolve", linalg.cho_solve((m, True), x)),
                          ("LUFactor", linalg.lu_factor(m)[0]), ("LU", linalg.lu(m)[0]),
                          ("LUSolve", linalg.lu_solve(linalg.lu_factor(m), x)),
                          ("PivotToPermutations", linalg.pivot_to_permutation(i)),
                          ("SLogDet", linalg.slogdet(m)[0]), ("MatrixPinv", linalg.pinv(m)),
                          ("BlockDiagonal", linalg.block_diag(m, m))):
        zoo[name] = batched.owner.op.core_op(*batched.owner.inputs)  # the op of one matrix
    zoo["QR{pivoting}"] = linalg.QR("economic", pivoting=True)(m)[0]
    zoo["QR{raw}"] = linalg.QR("raw")(m)[0]
    zoo["Lstsq"] = linalg.lstsq(m, x)[0]
    zoo["TensorSolve"] = linalg.tensorsolve(m, x)
    zoo["TensorInv"] = linalg.tensorinv(m, ind=1)
    zoo["KroneckerProduct"] = linalg.kron(m, m)
    zoo["Gemv"] = blas.gemv(y, 2.0, m, x, 1.0)
    zoo["Gemm"] = blas.gemm(m, 2.0, m, m, 1.0)
    zoo["Dot22"] = blas.Dot22()(m, m)
    # what only rewrites make: shape indices, fused loops, the fused pair of products
    rewritten = tg.function([x, m], [x.shape[0], tt.exp(x) * x + 1,
                                     tt.dot(m.T, tt.tanh(tt.dot(m, x)))],
                            mode=tg.Mode(linker="py", optimizer="fast_run")).maker.fgraph
    for name in ("Shape_i", "Composite", "Gemv{pair}"):
        zoo[name] = rewritten
    return zoo


def _graph(outputs) -> FunctionGraph:
    if isinstance(outputs, FunctionGraph):
        return outputs
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    inputs = [v for v in graph_inputs(outputs) if not isinstance(v, Constant)]
    return FunctionGraph(inputs, outputs, clone=False)


def _refused(fgraph) -> dict:
    """{back end: the nodes of ``fgraph`` it cannot run}, asked of its registry (no compile).
    For C: the nodes that get no C fragment of their own (their ``perform`` runs)."""
    from tensorgraph.link import jax as jax_backend
    from tensorgraph.link import pytorch as torch_backend
    from tensorgraph.link.backend import RandomPlan
    from tensorgraph.link.c.codegen import node_c_code
    from tensorgraph.link.numba.codegen import GraphSource

    source = GraphSource(fgraph, RandomPlan(fgraph))
    source.write()
    refused = {"NUMBA": {node for node, _ in source.problems}}
    sub = {"ctx": "ctx", "fail": "", "define": lambda _text: None}
    refused["C"] = {node for node in fgraph.toposort() if node_c_code(
        node, "node", [f"i{k}" for k in range(len(node.inputs))],
        [f"o{k}" for k in range(len(node.outputs))], sub) is None}
    for backend, table in (("JAX", jax_backend.TABLE), ("PYTORCH", torch_backend.TABLE)):
        refused[backend] = set()
        for node in fgraph.toposort():
            if isinstance(node.op, IfElse):
                continue  # the evaluator runs it (link/traced.py): it has no table entry
            impl = table.lookup(node.op)
            try:
                if impl is None or impl(node.op, node) is None:
                    refused[backend].add(node)
            except NotImplementedError:
                refused[backend].add(node)
    return refused


def _names(node) -> set:
    """The names a row may give this node: its op's class, its scalar op's class and name (an
    ``Elemwise``, also as ``tt.<name>``), its distribution (a draw), and ``scan`` for a loop
    whose step draws."""
    op = node.op
    names = {type(op).__name__}
    scalar = getattr(op, "scalar_op", None)
    if scalar is not None:
        names |= {type(scalar).__name__, scalar.name, f"tt.{scalar.name}"}
    if type(op).__name__ == "Scan" and any(_names(n) & {"normal"} for n in op.fgraph.apply_nodes):
        names.add("scan")
    if type(op).__name__ == "Gemv" and op.pair is not None:
        names.add("Gemv{pair}")
    if type(op).__name__ == "QR":                  # the variants some back ends lack
        names |= {"QR{pivoting}"} if op.pivoting else set()
        names |= {"QR{raw}"} if op.mode == "raw" else set()
    if "RandomVariable" in [k.__name__ for k in type(op).__mro__]:
        names.add(op.name)
    return names


@pytest.fixture(scope="module")
def support() -> dict:
    """{name: {back end: whether it runs every node of that name in the name's graph}}."""
    found = {}
    for name, outputs in _zoo().items():
        fgraph = _graph(outputs)
        refused = _refused(fgraph)
        nodes = [node for node in fgraph.toposort() if name in _names(node)]
        assert nodes, f"the graph built for {name!r} has no node of that name"
        found[name] = {backend: not any(node in refused[backend] for node in nodes)
                       for backend in BACKENDS}
    return found


def test_every_row_of_the_support_table_is_what_the_back_ends_register(support):
    rows = table_rows()
    assert len(rows) >= 10
    wrong = []
    for first, names, verdicts in rows:
        assert names, f"row {first!r} names no op"
        for name in names:
            assert name in support, f"the test builds no node for {name!r} (row {first!r})"
            for backend in BACKENDS:
                if support[name][backend] != verdicts[backend]:
                    wrong.append(f"{name}: the table says {backend} "
                                 f"{'runs' if verdicts[backend] else 'refuses'} it, "
                                 f"the {backend} registry {'runs' if support[name][backend] else 'refuses'} it")
    assert not wrong, "docs/backends.md's support table is wrong:\n" + "\n".join(wrong)


def test_the_table_names_every_distribution_and_every_name_the_test_builds(support):
    """No distribution is left to a vague "the others": each has its row."""
    from tensorgraph.tensor.random import basic

    functions = {n for n in basic.__all__ if n.islower() and n != "broadcast_shapes"}
    aliases = {"nbinom": "negative_binomial", "betabinom": "beta_binomial",
               "chisquare": "gamma"}  # chisquare(df) draws gamma(df / 2, 2)
    assert {aliases.get(n, n) for n in functions} <= set(support)
    named = {name for _, names, _ in table_rows() for name in names}
    assert set(support) <= named, f"not in the table: {sorted(set(support) - named)}"
