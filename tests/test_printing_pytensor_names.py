"""PyTensor's printing names (issue 21): PatternPrinter, default_printer, PPrinter.assign with
an Op instance or a (pstate, variable) predicate, min_informative_str."""

import pytest

import tensorgraph.tensor as tt
from tensorgraph.printing import (
    PatternPrinter, PPrinter, default_printer, min_informative_str, pprint,
)


def test_pattern_printer_for_an_op_instance_wins_over_a_catch_all_predicate():
    x, y = tt.dscalar("1"), tt.dscalar("2")
    out = tt.sub(x, y)
    pp = PPrinter()
    pp.assign(out.owner.op, PatternPrinter(("|%(0)s - %(1)s|", -1000)))
    pp.assign(lambda pstate, r: True, default_printer)
    assert pp(out) == "|1 - 2|"
    # the catch-all prints other ops as Op(args)
    other = tt.add(x, y)
    assert pp(other) == f"{other.owner.op}(1, 2)"


def test_pattern_printer_needs_a_pattern_and_leaves_the_global_printer_alone():
    with pytest.raises(TypeError, match="at least one pattern"):
        PatternPrinter()
    x, y = tt.dscalar("x"), tt.dscalar("y")
    assert pprint(x - y) == "(x - y)"


def test_min_informative_str_letters_each_variable_once():
    A, B, D, E = (tt.matrix(n) for n in "ABDE")
    C = A + B
    C.name = "C"
    G = C + (D + E)
    assert min_informative_str(G) == "A. Add\n B. C\n C. Add\n  D. D\n  E. E"
    H = G * G
    assert min_informative_str(H).splitlines()[1:] == [" B. Add", "  C. C", "  D. Add",
                                                        "   E. D", "   F. E", " B"]
