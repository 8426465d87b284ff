"""NanGuardMode: finds the first node producing nan / inf / big values and names it."""

import warnings

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.tensor as tt
from tensorgraph.compile import NanGuardMode, get_mode
from tensorgraph.compile.nanguardmode import NanGuardError, count_bad, summarize_value
from tensorgraph.configdefaults import config


@pytest.fixture(autouse=True)
def _quiet_numpy():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def test_log_of_zero_is_found_and_named():
    x = tt.dvector("x")
    y = tt.log(x)  # the culprit
    z = (y * 2).sum()
    f = tg.function([x], z, mode="NanGuardMode")
    assert f([1.0, 2.0]) == pytest.approx(2 * np.log(2.0))
    with pytest.raises(NanGuardError) as info:
        f([0.0, 1.0, 2.0])
    text = str(info.value)
    assert "log" in text.splitlines()[0]
    assert "has 1 inf (of 3 elements)" in text
    assert "output 0" in text and "first node" in text
    # log and *2 are fused into one node, made where the fused expression's root was written
    assert "created at" in text and "test_nanguardmode.py" in text
    assert "inputs: x float64 (3,) min=0 max=2" in text
    unfused = tg.function([x], z, mode=NanGuardMode(optimizer=None))
    with pytest.raises(NanGuardError, match=r"(?s)Elemwise\{log\}.*y = tt.log\(x\)  # the culprit"):
        unfused([0.0, 1.0, 2.0])


def test_the_first_bad_node_is_reported_not_its_victims():
    x = tt.dvector("x")
    a = tt.sqrt(x - 5)  # nan for x < 5
    b = tt.exp(a) + 1
    f = tg.function([x], b, mode=NanGuardMode(optimizer=None))
    with pytest.raises(NanGuardError, match=r"(?s)Elemwise\{sqrt\} has 2 nan.*a = tt.sqrt"):
        f([1.0, 2.0, 9.0])


def test_big_values_and_graph_inputs():
    x = tt.dvector("x")
    f = tg.function([x], x * 1e6, mode=NanGuardMode(optimizer=None))
    with pytest.raises(NanGuardError, match="has 1 big"):
        f([1.0, 1e5])
    f = tg.function([x], x + 1, mode=NanGuardMode(optimizer=None))
    with pytest.raises(NanGuardError, match="graph input x has 1 nan"):
        f([np.nan, 1.0])


def test_arguments_override_flags_and_none_falls_back():
    x = tt.dvector("x")
    y = tt.log(x)
    allowed = NanGuardMode(inf_is_error=False)
    assert np.isneginf(tg.function([x], y, mode=allowed)([0.0])[0])
    with config.change_flags(NanGuardMode__inf_is_error=False):
        assert np.isneginf(tg.function([x], y, mode="NanGuardMode")([0.0])[0])
        with pytest.raises(NanGuardError):
            tg.function([x], y, mode=NanGuardMode(inf_is_error=True))([0.0])
    with config.change_flags(NanGuardMode__big_is_error=False):
        assert tg.function([x], x * 1e12, mode="NanGuardMode")([1.0])[0] == 1e12


def test_warn_action():
    x = tt.dvector("x")
    f = tg.function([x], tt.exp(tt.log(x) * 2) + 1, mode=NanGuardMode(action="warn",
                                                                       optimizer=None))
    with pytest.warns(RuntimeWarning, match="NanGuardMode: output 0") as record:
        out = f([0.0])
    assert out[0] == 1.0
    reports = [w for w in record if "NanGuardMode" in str(w.message)]
    assert len(reports) == 1 and "Elemwise{log}" in str(reports[0].message)  # not its victims
    with config.change_flags(NanGuardMode__action="warn"):
        with pytest.warns(RuntimeWarning, match="NanGuardMode"):
            tg.function([x], tt.log(x), mode="NanGuardMode")([0.0])
    with pytest.raises(ValueError, match="action"):
        NanGuardMode(action="explode")


def test_pdb_action_opens_the_debugger(monkeypatch, capsys):
    import pdb

    opened = []
    monkeypatch.setattr(pdb, "set_trace", lambda: opened.append(True))
    x = tt.dvector("x")
    tg.function([x], tt.log(x), mode=NanGuardMode(action="pdb"))([0.0])
    assert opened == [True]
    assert "NanGuardMode: output 0" in capsys.readouterr().out


def test_shared_variables_stay_unchanged_when_a_call_is_stopped():
    x = tt.dvector("x")
    acc = tg.shared(np.zeros(2), name="acc")
    f = tg.function([x], [], updates=[(acc, acc + tt.log(x))], mode="NanGuardMode")
    f([1.0, 1.0])
    with pytest.raises(NanGuardError):
        f([0.0, 1.0])
    assert acc.get_value().tolist() == [0.0, 0.0]


def test_integers_are_not_checked_and_helpers():
    i = tt.lvector("i")
    assert tg.function([i], i * 10 ** 11, mode="NanGuardMode")([1]).tolist() == [10 ** 11]
    assert count_bad(np.array([np.nan, np.inf, 1e11, 1.0]), True, True, True) == {
        "nan": 1, "inf": 1, "big": 1}
    assert count_bad(np.array([np.nan]), False, True, True) == {}
    assert summarize_value(np.array([1.0, np.nan])) == "float64 (2,) min=1 max=1 nan=1"


def test_named_mode_is_a_nanguardmode():
    assert isinstance(get_mode("NanGuardMode"), NanGuardMode)
