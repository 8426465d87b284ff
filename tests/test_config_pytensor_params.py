"""Flag parameters declared the PyTensor way (apply/validate, optional doc, EnumStr(default,
options), add(name, doc, param, in_c_key)) and a config that pickles."""

import pickle

import pytest

from tensorgraph.configdefaults import config
from tensorgraph.configparser import (
    BoolParam,
    Config,
    ConfigError,
    ConfigParam,
    EnumStr,
    IntParam,
)


def test_apply_then_validate_on_a_lone_param():
    p = ConfigParam("Low", apply=str.upper, validate=lambda v: v in ("LOW", "HIGH"))
    assert p.default == "Low" and p.doc == ""
    assert not hasattr(p, "val")
    with pytest.raises(ValueError, match=r"Invalid value \('mid'\)"):
        p.__set__(None, "mid")
    assert not hasattr(p, "val")
    p.__set__(None, "high")
    assert p.val == "HIGH"
    p.mutable = False
    with pytest.raises(ConfigError, match="Can't change"):
        p.__set__(None, "low")
    assert p.val == "HIGH"


def test_bool_param_apply_and_validate():
    p = BoolParam(None)
    assert p.default is None
    for text, want in [("1", True), (0, False), ("False", False), (True, True)]:
        assert p.apply(text) is want
        assert p.validate(p.apply(text)) is not False
    with pytest.raises(ValueError, match=r"Invalid value \('maybe'\)"):
        p.apply("maybe")


def test_second_positional_function_is_validate_for_typed_params():
    p = IntParam(5, lambda i: i > 0)
    assert p.convert("3") == 3
    with pytest.raises(ValueError, match="validate"):
        p.convert(-1)


def test_enumstr_both_spellings():
    ours = EnumStr(("a", "b"), "doc text")
    theirs = EnumStr("a", ["b", "c"])
    assert ours.all == ("a", "b") and ours.doc == "doc text"
    assert theirs.all == ("a", "b", "c") and theirs.default == "a"
    with pytest.raises(ValueError, match=r"Invalid value \('z'\)"):
        theirs.apply("z")
    with pytest.raises(ValueError, match="Non-str"):
        EnumStr("a", ["b", 3])


def _fresh():
    cfg = Config(environ={})
    return cfg


def test_add_pytensor_order_and_dots_refused():
    cfg = _fresh()
    cfg.add("test__colour", "The colour.", EnumStr("red", ["blue"]), in_c_key=False)
    assert cfg.test__colour == "red"
    assert cfg.info("test__colour").doc == "The colour."
    cfg.test__colour = "blue"
    assert cfg.test__colour == "blue"
    with pytest.raises(ConfigError, match="invalid value 'green'"):
        cfg.test__colour = "green"
    with pytest.raises(ValueError, match="Dot-based"):
        cfg.add("test.dotted", doc="d", configparam=ConfigParam(1), in_c_key=False)
    assert "test.dotted" not in cfg


def test_invalid_default_only_matters_without_a_setting():
    def check(v):
        if v == "bad":
            raise ValueError("bad value")
    cfg = _fresh()
    with pytest.raises(ValueError, match="bad default"):
        cfg.add("test__a", ConfigParam("bad", validate=check))
    cfg = Config(environ={"TENSORGRAPH_FLAGS": "test__b=good"})
    cfg.add("test__b", ConfigParam("bad", validate=check))
    assert cfg.test__b == "good"


def test_real_config_pickles_with_its_values():
    restored = pickle.loads(pickle.dumps(config))
    for name in config:
        assert getattr(restored, name) == getattr(config, name), name
    assert restored.info("floatX").doc == config.info("floatX").doc
