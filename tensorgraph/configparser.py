"""The configuration machinery: flag types, where values come from, and ``change_flags``.

Every flag is declared once in :mod:`tensorgraph.configdefaults` with one of the parameter
types below.  This module is the only place in tensorgraph that reads the process
environment, so that every setting a user can make is visible (and explained) through
``tensorgraph.config``.

Precedence, highest first:

1. assignment (``config.floatX = "float32"``, ``config.change_flags``, ``%tg_config``);
2. ``TENSORGRAPH_FLAGS``: comma-separated ``name=value`` pairs, the right-most duplicate
   wins.  A piece without ``=`` continues the previous value, so that linker flags such
   as ``blas__ldflags=-Wl,-rpath,/opt/lib`` survive the comma split;
3. rc files: ``TENSORGRAPHRC`` is a ``:``-separated list of ini files (default
   ``~/.tensorgraphrc``); later files override earlier ones, missing files are skipped.
   Flags without ``__`` live in ``[global]``; ``a__b`` lives in section ``[a]`` as ``b``;
4. the declared default.

Bad input never passes silently: an unknown flag or an invalid value raises
:class:`ConfigError` naming the flag, the value, where it came from, what is allowed and,
for a misspelt name, the closest real one.
"""

from __future__ import annotations

import configparser as _ini
import difflib
import functools
import hashlib
import os
import textwrap
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

ENV_FLAGS = "TENSORGRAPH_FLAGS"
ENV_RC = "TENSORGRAPHRC"
DEFAULT_RC = "~/.tensorgraphrc"

DEFAULT = "default"
ASSIGNMENT = "assignment"
ENV_SOURCE = f"env {ENV_FLAGS}"


class ConfigError(ValueError):
    """A flag name or value that tensorgraph cannot accept; the message says why."""


class UnknownFlagError(ConfigError, AttributeError):
    """A name that is not a flag (also an AttributeError, so ``hasattr`` keeps working)."""


def close_match(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``name`` (case-insensitive), or None when nothing is close."""
    by_lower: dict[str, str] = {}
    for cand in candidates:
        by_lower.setdefault(cand.lower(), cand)
    hits = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.6)
    return by_lower[hits[0]] if hits else None


def _unknown_flag_message(name: str, origin: str, known: Iterable[str]) -> str:
    msg = f"tensorgraph config: unknown flag {name!r} (from {origin})."
    hint = close_match(name, known)
    if hint is not None:
        msg += f" Did you mean {hint!r}?"
    else:
        msg += " Run `python -m tensorgraph config` to list every flag."
    return msg


# --------------------------------------------------------------------------------------
# Parameter types
# --------------------------------------------------------------------------------------


class ConfigParam:
    """One flag's type, default and documentation.

    ``default`` may be a callable taking the config, for defaults that depend on the
    machine or on flags declared earlier (it is evaluated once, at declaration).
    ``mutable=False`` flags are fixed once the package is imported (they shape on-disk
    state such as the compile cache).  ``in_c_key=True`` flags change generated C code,
    so their values are part of :meth:`Config.c_key_hash`.

    A value goes through three steps (:meth:`convert`): the type's own :meth:`parse`
    (text from env/rc files becomes a bool, an int...), then ``apply`` (a function the
    declaration may give, e.g. ``str.lower``), then ``validate`` (a function that returns
    False or raises for a value the flag cannot use).  ``apply``/``validate`` and the
    optional ``doc`` follow PyTensor's ``ConfigParam``, so flags declared for PyTensor port;
    a second positional argument that is a function is PyTensor's: ``apply`` for
    ``ConfigParam`` itself, ``validate`` for the typed parameters (``IntParam(5, check)``).
    """

    type_name = "any"
    #: what a callable second positional argument means (PyTensor's signatures)
    _callable_second = "apply"

    def __init__(
        self,
        default: Any,
        doc: str | Callable = "",
        *,
        apply: Callable[[Any], Any] | None = None,
        validate: Callable[[Any], Any] | None = None,
        mutable: bool = True,
        in_c_key: bool = False,
    ):
        if callable(doc):
            if self._callable_second == "apply" and apply is None:
                apply = doc
            elif validate is None:
                validate = doc
            doc = ""
        self.default = default
        self.doc = " ".join(str(doc or "").split())
        self._mutable = mutable
        self.in_c_key = in_c_key
        self._apply_fn = apply
        self._validate_fn = validate
        #: the flag name, set when the parameter is declared with :meth:`Config.add`
        self.name: str | None = None

    @property
    def mutable(self) -> bool:
        """Whether the flag may change after import."""
        return self._mutable

    @mutable.setter
    def mutable(self, value: bool) -> None:
        self._mutable = bool(value)

    def parse(self, value: Any) -> Any:
        """Return the flag's value for ``value`` (a string from env/rc, or a Python object).

        Raises ``ValueError`` with a short reason; :class:`Config` adds the flag name,
        the value and where it came from.
        """
        return value

    def _parsed_applied(self, value: Any) -> Any:
        value = self.parse(value)
        if self._apply_fn is not None:
            value = self._apply_fn(value)
        return value

    def apply(self, value: Any) -> Any:
        """``value`` parsed by the type and passed through the declared ``apply`` function;
        a ValueError says ``Invalid value (...)`` and why."""
        try:
            return self._parsed_applied(value)
        except ValueError as exc:
            raise ValueError(self._invalid_message(value, exc)) from None

    def validate(self, value: Any) -> Any:
        """The declared ``validate`` function's verdict on an applied value (True without
        one); False means the value is refused."""
        return True if self._validate_fn is None else self._validate_fn(value)

    def convert(self, value: Any) -> Any:
        """:meth:`apply` then :meth:`validate`: the value the flag takes, or a ValueError
        with a short reason (what :class:`Config` uses for every setting)."""
        value = self._parsed_applied(value)
        if self.validate(value) is False:
            raise ValueError("refused by the flag's validate function")
        return value

    def _invalid_message(self, value: Any, exc: Exception | None = None) -> str:
        what = f"config flag {self.name!r}" if self.name else f"a {self.type_name} config flag"
        reason = str(exc) if exc is not None else ""
        reason = f": {reason}" if reason and "invalid literal" not in reason else ""
        return f"Invalid value ({value!r}) for {what}{reason}. Allowed: {self.allowed()}."

    # PyTensor declares flags as descriptors of its config class and tests them on their
    # own (``param.__set__(owner, value)``, then ``param.val``); tensorgraph's Config keeps
    # the values itself, and these two give a lone parameter the same behaviour.
    def __get__(self, owner, owner_type=None):
        if owner is None:
            return self
        if not hasattr(self, "val"):
            self.val = self.convert(self.default(owner) if callable(self.default)
                                    else self.default)
        return self.val

    def __set__(self, owner, value):
        if not self.mutable and hasattr(self, "val"):
            raise ConfigError(f"Can't change the value of {self.name or 'this'} config "
                              "parameter after initialization (it is read-only).")
        try:
            self.val = self.convert(value)
        except ValueError as exc:
            raise ValueError(self._invalid_message(value, exc)) from None

    def allowed(self) -> str:
        """Human description of the accepted values, used in errors and listings."""
        return self.type_name


class BoolParam(ConfigParam):
    type_name = "bool"
    _callable_second = "validate"
    _TRUE = ("true", "1", "yes", "on")
    _FALSE = ("false", "0", "no", "off")

    def parse(self, value):
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str):
            low = value.strip().lower()
            if low in self._TRUE:
                return True
            if low in self._FALSE:
                return False
        raise ValueError("not a boolean")

    def allowed(self):
        return "bool (True/False, 1/0, yes/no, on/off)"


class IntParam(ConfigParam):
    type_name = "int"
    _callable_second = "validate"

    def __init__(self, default, doc="", *, minimum: int | None = None, **kw):
        super().__init__(default, doc, **kw)
        self.minimum = minimum

    def parse(self, value):
        if isinstance(value, bool):
            raise ValueError("a bool is not an int")
        if isinstance(value, str):
            value = int(value.strip())
        elif not isinstance(value, int):
            raise ValueError(f"expected an int, got {type(value).__name__}")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"must be >= {self.minimum}")
        return value

    def allowed(self):
        return "int" if self.minimum is None else f"int >= {self.minimum}"


class FloatParam(ConfigParam):
    type_name = "float"
    _callable_second = "validate"

    def __init__(self, default, doc="", *, minimum: float | None = None, **kw):
        super().__init__(default, doc, **kw)
        self.minimum = minimum

    def parse(self, value):
        if isinstance(value, bool):
            raise ValueError("a bool is not a float")
        if isinstance(value, str):
            value = float(value.strip())
        elif isinstance(value, (int, float)):
            value = float(value)
        else:
            raise ValueError(f"expected a float, got {type(value).__name__}")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"must be >= {self.minimum}")
        return value

    def allowed(self):
        return "float" if self.minimum is None else f"float >= {self.minimum}"


class StrParam(ConfigParam):
    """Free text; ``check`` (optional) raises ValueError for text the flag cannot use."""

    type_name = "str"
    _callable_second = "validate"

    def __init__(self, default, doc="", *, check: Callable[[str], None] | None = None, **kw):
        super().__init__(default, doc, **kw)
        self.check = check

    def parse(self, value):
        if not isinstance(value, str):
            raise ValueError(f"expected a str, got {type(value).__name__}")
        if self.check is not None:
            self.check(value)
        return value


class EnumStr(ConfigParam):
    """One of a fixed set of strings.

    Two spellings: ``EnumStr(("a", "b", "c"), doc)`` (tensorgraph's: the default is the
    first choice) and PyTensor's ``EnumStr("a", ["b", "c"], validate=None, mutable=True)``
    (a default, then the other options).  ``all`` is every choice, the default first.
    """

    type_name = "enum"
    _callable_second = "validate"

    def __init__(self, default, options=(), doc: str | Callable = "", **kw):
        if isinstance(default, (tuple, list)):  # EnumStr(choices, doc)
            if isinstance(options, str) or callable(options):
                doc = options
            elif options:
                raise TypeError("EnumStr(choices, doc): give the choices once, as the first "
                                f"argument (got choices {default!r} and options {options!r})")
            choices = tuple(default)
        else:
            choices = (default, *options)
        bad = [c for c in choices if not isinstance(c, str)]
        if bad:
            raise ValueError(f"Non-str value(s) {bad!r} among the options of EnumStr: every "
                             "choice of an enum flag is a string")
        if not choices:
            raise ValueError("EnumStr needs at least one choice")
        super().__init__(choices[0], doc, **kw)
        self.choices = choices

    @property
    def all(self) -> tuple[str, ...]:
        """Every choice, the default first (PyTensor's name)."""
        return self.choices

    def parse(self, value):
        if isinstance(value, str) and value.strip() in self.choices:
            return value.strip()
        raise ValueError("")

    def allowed(self):
        return "{" + ", ".join(self.choices) + "}"


class DeviceParam(ConfigParam):
    """The compute device.  tensorgraph generates CPU code only, so 'cpu' is the one value;
    GPU names from other systems (``cuda``, ``cuda0``, ``opencl0:0``) get a plain refusal."""

    type_name = "device"

    def parse(self, value):
        if isinstance(value, str) and value.strip() == "cpu":
            return "cpu"
        if isinstance(value, str) and value.strip().startswith(("cuda", "gpu", "opencl")):
            raise ValueError("tensorgraph runs on the CPU only")
        raise ValueError("not a device")

    def allowed(self):
        return "device {cpu}"


class PathParam(ConfigParam):
    """A filesystem path; ``~`` is expanded and the result made absolute.  Nothing is
    created here: the code that writes to the path creates it when first needed."""

    type_name = "path"

    def parse(self, value):
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value.strip():
            raise ValueError("expected a non-empty path")
        return os.path.abspath(os.path.expanduser(value.strip()))


class ModeParam(ConfigParam):
    """A compilation mode: one of the named modes, or a ``Mode`` instance.

    The compile layer registers its ``Mode`` class (``accept_instances_of``) when it is
    imported: this module never imports the compiler, and no ``Mode`` instance can exist
    before that registration.
    """

    type_name = "mode"
    #: the classes whose instances the flag takes as they are (``tensorgraph.compile.mode.Mode``)
    instance_types: tuple[type, ...] = ()

    @classmethod
    def accept_instances_of(cls, mode_class: type) -> None:
        """Let the flag take instances of ``mode_class`` (called by ``tensorgraph.compile.mode``)."""
        if mode_class not in cls.instance_types:
            cls.instance_types += (mode_class,)

    def __init__(self, choices: tuple[str, ...], doc: str = "", **kw):
        super().__init__(choices[0], doc, **kw)
        self.choices = tuple(choices)

    def parse(self, value):
        if isinstance(value, str):
            if value.strip() in self.choices:
                return value.strip()
            # PyTensor's mode names are case-insensitive ('fast_run', 'cvm'): keep our spelling
            spelled = [c for c in self.choices if c.upper() == value.strip().upper()]
            if spelled:
                return spelled[0]
            raise ValueError("")
        if isinstance(value, self.instance_types):
            return value
        raise ValueError(f"expected a mode name or a Mode instance, got {type(value).__name__}")

    def allowed(self):
        return "{" + ", ".join(self.choices) + "} or a Mode instance"


# --------------------------------------------------------------------------------------
# Reading the environment and rc files
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RawSetting:
    """A flag value as text, before parsing, and the place it was written."""

    value: str
    source: str


def parse_flags_string(text: str, source: str = ENV_SOURCE) -> dict[str, RawSetting]:
    """Parse ``TENSORGRAPH_FLAGS`` text: ``a=1,b=2``; the right-most duplicate wins."""
    out: dict[str, RawSetting] = {}
    last: str | None = None
    for piece in text.split(","):
        if "=" not in piece:
            if not piece.strip():
                continue
            if last is None:
                raise ConfigError(
                    f"tensorgraph config: {piece.strip()!r} in {source} is not of the form "
                    "name=value (expected comma-separated name=value pairs, "
                    "e.g. floatX=float32,mode=FAST_COMPILE)."
                )
            out[last] = RawSetting(out[last].value + "," + piece, source)
            continue
        name, value = piece.split("=", 1)
        name = name.strip()
        if not name:
            raise ConfigError(
                f"tensorgraph config: {piece.strip()!r} in {source} has no flag name "
                "before '=' (expected comma-separated name=value pairs)."
            )
        out.pop(name, None)  # so the dict order follows the right-most occurrence
        out[name] = RawSetting(value.strip(), source)
        last = name
    return out


def rc_paths(environ: Mapping[str, str]) -> list[str]:
    """The rc files to read, in order (later ones override earlier ones)."""
    spec = environ.get(ENV_RC, DEFAULT_RC)
    return [os.path.abspath(os.path.expanduser(p)) for p in spec.split(":") if p.strip()]


def read_rc_file(path: str) -> dict[str, RawSetting]:
    """Flags set in one ini file; ``[a]`` key ``b`` is flag ``a__b``, ``[global]`` is top level."""
    ini = _ini.ConfigParser(interpolation=None, default_section="\0no default section")
    ini.optionxform = str  # flag names are case-sensitive (floatX)
    try:
        with open(path, encoding="utf-8") as fh:
            ini.read_file(fh, source=path)
    except _ini.MissingSectionHeaderError as exc:
        detail = f"line {exc.lineno}: {exc.line.strip()!r} comes before any [section] header"
    except _ini.ParsingError as exc:
        detail = "; ".join(f"line {n}: {text} is not 'name = value'" for n, text in exc.errors)
    except (_ini.Error, OSError, UnicodeDecodeError) as exc:
        detail = " ".join(str(exc).split())
    else:
        detail = ""
    if detail:
        raise ConfigError(
            f"tensorgraph config: cannot parse rc file {path}: {detail}. Expected ini "
            "sections such as [global] with lines like floatX = float32."
        )
    out: dict[str, RawSetting] = {}
    for section in ini.sections():
        for key, value in ini.items(section):
            name = key if section == "global" else f"{section}__{key}"
            out[name] = RawSetting(value.strip(), f"rc file {path} [{section}]")
    return out


def read_settings(environ: Mapping[str, str]) -> tuple[dict[str, RawSetting], list[str]]:
    """All text settings from rc files then ``TENSORGRAPH_FLAGS`` (later wins), and the
    rc files that were actually read."""
    settings: dict[str, RawSetting] = {}
    read: list[str] = []
    for path in rc_paths(environ):
        if not os.path.exists(path):
            continue  # a missing rc file is no error: ~/.tensorgraphrc is optional
        if not os.path.isfile(path):
            kind = "a directory" if os.path.isdir(path) else "not a regular file"
            where = f"{ENV_RC}={environ[ENV_RC]!r}" if ENV_RC in environ else "the default rc path"
            raise ConfigError(
                f"tensorgraph config: rc file {path} (from {where}) is {kind}; expected an ini "
                "file with sections such as [global] and lines like floatX = float32.")
        settings.update(read_rc_file(path))
        read.append(path)
    settings.update(parse_flags_string(environ.get(ENV_FLAGS, "")))
    return settings, read


# --------------------------------------------------------------------------------------
# The config object
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FlagInfo:
    """Everything known about one flag, for listings, errors and the notebook table."""

    name: str
    param: ConfigParam
    value: Any
    default: Any
    source: str

    @property
    def doc(self) -> str:
        return self.param.doc

    @property
    def allowed(self) -> str:
        return self.param.allowed()

    @property
    def mutable(self) -> bool:
        return self.param.mutable

    @property
    def in_c_key(self) -> bool:
        return self.param.in_c_key

    @property
    def is_default(self) -> bool:
        """The value equals the default (whatever set it)."""
        return _same(self.value, self.default)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


class Config:
    """Holds every flag; read them as attributes (``config.floatX``).

    Method and attribute names here never collide with flag names: flags are declared
    with :meth:`add`, which refuses a name the class already uses.
    """

    def __init__(self, environ: Mapping[str, str] | None = None):
        env = os.environ if environ is None else environ
        settings, read = read_settings(env)
        state = {
            "_params": {},
            "_values": {},
            "_defaults": {},
            "_sources": {},
            "_pending": settings,
            "_rc_files_read": tuple(read),
            "_finalized": False,
        }
        for key, val in state.items():
            object.__setattr__(self, key, val)

    # -- declaration ---------------------------------------------------------------

    def add(self, name: str, param: ConfigParam | str | None = None,
            configparam: ConfigParam | None = None, in_c_key: bool | None = None, *,
            doc: str | None = None) -> None:
        """Declare flag ``name``; its value comes from env/rc settings or the default.

        ``add(name, param)`` is tensorgraph's form (the doc lives in the parameter);
        PyTensor's ``add(name, doc, configparam, in_c_key=True)`` works too.
        """
        if isinstance(param, str):  # PyTensor's order: add(name, doc, configparam, in_c_key)
            doc, param = param, None
        if param is None:
            param, configparam = configparam, None
        if not isinstance(param, ConfigParam) or configparam is not None:
            raise TypeError(f"Config.add({name!r}, ...): expected one ConfigParam "
                            f"(BoolParam(...), EnumStr(...)...), got {param!r}")
        if "." in name:
            raise ValueError(f"Dot-based flag names such as {name!r} are not supported: "
                             f"sections are spelt with '__' ({name.replace('.', '__')!r})")
        if name in self._params or hasattr(type(self), name) or name.startswith("_"):
            raise ValueError(f"cannot declare config flag {name!r}: name already in use")
        if doc:
            param.doc = " ".join(doc.split())
        if in_c_key is not None:
            param.in_c_key = bool(in_c_key)
        param.name = name
        raw = self._pending.pop(name, None)
        if raw is None:
            default = param.default(self) if callable(param.default) else param.default
            try:
                default = param.convert(default)
            except ValueError as exc:
                raise ValueError(f"bad default for config flag {name!r}: {exc}") from None
            self._params[name] = param
            self._values[name] = default
            self._sources[name] = DEFAULT
        else:
            # a setting from env/rc replaces the default, which then need not be valid
            self._params[name] = param
            try:
                self._values[name] = self._parse(name, raw.value, raw.source)
            except ConfigError:
                del self._params[name]
                raise
            self._sources[name] = raw.source
            default = param.default(self) if callable(param.default) else param.default
            try:
                default = param.convert(default)
            except ValueError:
                default = self._values[name]
        self._defaults[name] = default

    def finalize(self) -> None:
        """End declaration: any leftover env/rc setting names no flag, which is an error.
        From now on read-only flags refuse changes."""
        if self._pending:
            name, raw = next(iter(self._pending.items()))
            raise UnknownFlagError(_unknown_flag_message(name, raw.source, self._params))
        object.__setattr__(self, "_finalized", True)

    # -- reading -------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        if name.startswith("__"):
            raise AttributeError(name)
        raise UnknownFlagError(
            _unknown_flag_message(name, "attribute access", self.__dict__.get("_params", {}))
        )

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._params))

    def __contains__(self, name: object) -> bool:
        return name in self._params

    def __iter__(self):
        """Flag names, in declaration order."""
        return iter(list(self._params))

    def __len__(self) -> int:
        return len(self._params)

    def info(self, name: str) -> FlagInfo:
        """Type, value, default, source and doc of flag ``name``."""
        self._check_known(name, "flag lookup")
        return FlagInfo(
            name, self._params[name], self._values[name], self._defaults[name], self._sources[name]
        )

    @property
    def rc_files_read(self) -> tuple[str, ...]:
        """The rc files whose settings were applied at import, in order."""
        return self._rc_files_read

    # -- writing -------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        self.update({name: value})

    def __delattr__(self, name: str) -> None:
        raise ConfigError(f"tensorgraph config: flags cannot be deleted ({name!r}).")

    def update(self, flags: Mapping[str, Any], source: str = ASSIGNMENT) -> None:
        """Set several flags at once, all or none: every name and value is checked before
        any flag changes."""
        parsed = self._validate(flags, source)
        for name, value in parsed.items():
            self._values[name] = value
            self._sources[name] = source

    def reset(self, names: Iterable[str] | None = None) -> list[str]:
        """Put mutable flags (all, or ``names``) back to their defaults.  Returns the names
        whose value or source changed.  Read-only flags are left alone (they cannot change
        after import), and naming one is an error."""
        targets = list(self._params) if names is None else list(names)
        for name in targets:
            self._check_known(name, "reset")
            if names is not None and not self._params[name].mutable:
                raise ConfigError(self._read_only_message(name))
        changed = []
        for name in targets:
            if self._params[name].mutable and self._sources[name] != DEFAULT:
                self._values[name] = self._defaults[name]
                self._sources[name] = DEFAULT
                changed.append(name)
        return changed

    def change_flags(self, *args: Mapping[str, Any], **kwargs: Any) -> "ChangeFlags":
        """Temporarily set flags: ``with config.change_flags(floatX="float32"): ...`` or as
        a decorator ``@config.change_flags(floatX="float32")``.  Previous values (and their
        sources) come back on exit, also when the block raises."""
        flags: dict[str, Any] = {}
        for mapping in args:
            flags.update(mapping)
        flags.update(kwargs)
        return ChangeFlags(self, flags)

    # -- C cache key ---------------------------------------------------------------

    def c_key_items(self) -> tuple[tuple[str, str], ...]:
        """``(name, repr(value))`` of every flag that changes generated C code, sorted."""
        return tuple(
            (name, repr(self._values[name]))
            for name in sorted(self._params)
            if self._params[name].in_c_key
        )

    def c_key_hash(self) -> str:
        """A stable hex digest of the C-affecting flags' current values: equal across
        processes for equal settings, so it can be part of on-disk cache keys."""
        text = "\n".join(f"{n}={v}" for n, v in self.c_key_items())
        return hashlib.sha256(text.encode()).hexdigest()

    # -- printing ------------------------------------------------------------------

    def __str__(self) -> str:
        return self.describe()

    def __repr__(self) -> str:
        return f"<tensorgraph Config: {len(self._params)} flags; print() it to list them>"

    def describe(self, names: Iterable[str] | None = None, only_changed: bool = False) -> str:
        """Plain-text listing of all flags (or ``names``; ``only_changed``: those whose
        value differs from the default) with type, value, source, default and doc."""
        chosen = list(self._params) if names is None else list(names)
        infos = [self.info(n) for n in chosen]
        if only_changed:
            infos = [i for i in infos if not i.is_default]
        rc = ", ".join(self._rc_files_read) or "none"
        header = f"tensorgraph config: {len(infos)} flag(s); rc files read: {rc}"
        return format_flags(infos, header)

    # -- internals -----------------------------------------------------------------

    def _check_known(self, name: str, origin: str) -> None:
        if name not in self._params:
            raise UnknownFlagError(_unknown_flag_message(name, origin, self._params))

    def _read_only_message(self, name: str) -> str:
        return (
            f"tensorgraph config: flag {name!r} is read-only after import (current value "
            f"{self._values[name]!r}). Set it before starting Python, in {ENV_FLAGS} "
            f"(e.g. {ENV_FLAGS}={name}=...) or in an rc file ({DEFAULT_RC})."
        )

    def _parse(self, name: str, value: Any, source: str) -> Any:
        param = self._params[name]
        try:
            return param.convert(value)
        except ValueError as exc:
            reason = str(exc)
            reason = f" ({reason})" if reason and "invalid literal" not in reason else ""
            raise ConfigError(
                f"tensorgraph config: invalid value {value!r} for flag {name!r} "
                f"(from {source}){reason}. Allowed: {param.allowed()}."
            ) from None

    def _validate(self, flags: Mapping[str, Any], source: str) -> dict[str, Any]:
        parsed = {}
        for name, value in flags.items():
            self._check_known(name, source)
            if self._finalized and not self._params[name].mutable:
                raise ConfigError(self._read_only_message(name))
            parsed[name] = self._parse(name, value, source)
        return parsed


def format_flags(infos: Iterable[FlagInfo], header: str) -> str:
    """Plain text for a list of flags: name and type, value and source, wrapped doc."""
    lines = [header, ""]
    for i in infos:
        ro = ", read-only" if not i.mutable else ""
        lines.append(f"{i.name} ({i.allowed}{ro})")
        where = i.source if i.is_default else f"{i.source}; default {i.default!r}"
        lines.append(f"    value: {i.value!r}  [{where}]")
        lines.extend(textwrap.wrap(i.doc, 88, initial_indent="    ", subsequent_indent="    "))
    return "\n".join(lines)


class ChangeFlags:
    """Context manager and decorator made by :meth:`Config.change_flags`."""

    def __init__(self, config: Config, flags: Mapping[str, Any]):
        self._config = config
        self._flags = dict(flags)
        self._saved: list[dict[str, tuple[Any, str]]] = []

    def __enter__(self) -> Config:
        cfg = self._config
        parsed = cfg._validate(self._flags, "change_flags")
        self._saved.append({n: (cfg._values[n], cfg._sources[n]) for n in parsed})
        for name, value in parsed.items():
            cfg._values[name] = value
            cfg._sources[name] = "change_flags"
        return cfg

    def __exit__(self, *exc_info) -> None:
        cfg = self._config
        for name, (value, source) in self._saved.pop().items():
            cfg._values[name] = value
            cfg._sources[name] = source

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with ChangeFlags(self._config, self._flags):
                return func(*args, **kwargs)

        return wrapper


def change_flags(*args: Mapping[str, Any], **kwargs: Any) -> ChangeFlags:
    """``tensorgraph.config.change_flags``, importable from here as in PyTensor."""
    from tensorgraph.configdefaults import config

    return config.change_flags(*args, **kwargs)
