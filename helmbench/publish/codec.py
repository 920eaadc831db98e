"""The site build's objects as JSON data, and back: the build cache's entries and the chart worker's messages.

Why not pickle: a pickle is a program, and the build cache lives under `build/`, which a pull request,
a CI cache or another user can write; a planted entry would run as whoever publishes. JSON is data.
What decoding can make is closed: JSON's values, tuples, sets, `Markup`, bytes, paths, and dataclasses
of the modules in `MODULES` and of `helmbench.score` (the site's data and the run rows), each built from its
fields as pickle would (no `__post_init__`, no other method). Anything else is refused (`DecodeError`),
and the cache then rebuilds the entry. Encoding refuses what it cannot give back (`TypeError`).

Tagged values are JSON objects with the key `TAG` ("\\u0000", which no authored name holds): a
dataclass is `{TAG: "module:Class", "v": [field values]}`, a tuple `{TAG: "t", "v": [...]}`, and so on;
a dict whose keys are not all strings (or that holds `TAG`) is `{TAG: "d", "v": [[key, value], ...]}`.

A string of `LONG` characters or more (a rendered page's HTML: most of a warm build's cache) travels beside the
JSON instead of inside it: after the JSON's one line and a newline, as raw UTF-8, and in the JSON as
`{TAG: "r", "v": [start, end]}`, its byte offsets there. Slicing it out is cheaper than scanning it as a JSON
string with every attribute's quotes escaped: for the site of 20 models in benchmarks/site_build.py, the two big
entries (60 MB) decode in 0.25 s instead of 0.36 s and encode in 0.59 s instead of 0.81 s (best of 3 each).
It is still data: the raw part is read once, in order (offsets that overlap, skip or go back are refused), and
bytes that are not UTF-8 are refused.
"""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from functools import lru_cache
from importlib import import_module
from numbers import Integral, Real
from pathlib import Path, PurePath

from markupsafe import Markup

TAG = "\x00"

#: The modules whose dataclasses may be decoded: what the score cache and the chart jobs hold (with every module
#: of `helmbench.score`, `SCORE`), and the modules that `allow` themselves (publish/data.py: SiteData, which
#: imports this module, so naming it here would be an import cycle).
MODULES = frozenset({"helmbench.publish.charts", "helmbench.publish.settings", "helmbench.store.queries.runs"})
SCORE = "helmbench.score."
_ALLOWED: set[str] = set()
#: The length from which a string is written beside the JSON (the module's docstring: why).
LONG = 256


def allow(module: str) -> None:
    """Let `module`'s dataclasses be decoded: a module that caches its own dataclasses says so when imported."""
    _ALLOWED.add(module)


def _allowed(module: str) -> bool:
    return (module in MODULES or module in _ALLOWED or module.startswith(SCORE)) and \
        all(p.isidentifier() for p in module.split("."))


class DecodeError(ValueError):
    """Bytes that are not an encoding of the site's data (bad JSON, an unknown tag or class)."""


def _plain(o, side: bytearray):
    t = type(o)
    if t is str:
        if len(o) < LONG:
            return o
        start = len(side)
        side += o.encode()
        return {TAG: "r", "v": [start, len(side)]}
    if o is None or t is int or t is float or t is bool:
        return o
    if t is list:
        return [_plain(x, side) for x in o]
    if t is dict:
        if TAG not in o and all(type(k) is str for k in o):
            return {k: _plain(v, side) for k, v in o.items()}
        return {TAG: "d", "v": [[_plain(k, side), _plain(v, side)] for k, v in o.items()]}
    if t is tuple:
        return {TAG: "t", "v": [_plain(x, side) for x in o]}
    if t is Markup:
        return {TAG: "m", "v": _plain(str(o), side)}
    if t is bytes:
        return {TAG: "b", "v": o.decode("latin-1")}
    if t is set or t is frozenset:
        return {TAG: "s" if t is set else "f", "v": [_plain(x, side) for x in sorted(o, key=repr)]}
    if isinstance(o, PurePath):
        return {TAG: "p", "v": str(o)}
    if is_dataclass(o) and not isinstance(o, type):
        name = f"{t.__module__}:{t.__qualname__}"
        if not _allowed(t.__module__):
            raise TypeError(f"{name} is not a dataclass the site's data may hold (codec.MODULES)")
        return {TAG: name, "v": [_plain(getattr(o, f.name), side) for f in fields(o)]}
    if isinstance(o, bool):
        return bool(o)
    if isinstance(o, Integral):  # numpy's integers
        return int(o)
    if isinstance(o, Real):  # numpy's floats
        return float(o)
    raise TypeError(f"cannot encode {t.__name__} as the site's data")


def encode(obj) -> bytes:
    """`obj` as UTF-8 JSON, its long strings after it (the module's docstring); the same object gives the same
    bytes (sets are sorted), so it can be hashed. The JSON is one line: every newline in a string is escaped."""
    side = bytearray()
    text = json.dumps(_plain(obj, side), ensure_ascii=False, separators=(",", ":")).encode()
    return b"".join((text, b"\n", side)) if side else text


@lru_cache(maxsize=None)
def _dataclass(name: str):
    """(class, names of its fields, whether calling it only sets them) for `module:Class`, or DecodeError."""
    module, _, qualname = name.partition(":")
    if not _allowed(module) or not qualname.isidentifier():
        raise DecodeError(f"not a class the site's data holds: {name!r}")
    cls = getattr(import_module(module), qualname, None)
    if not (isinstance(cls, type) and is_dataclass(cls) and cls.__module__ == module):
        raise DecodeError(f"not a class the site's data holds: {name!r}")
    fs = fields(cls)
    plain_init = all(f.init for f in fs) and not hasattr(cls, "__post_init__")
    return cls, tuple(f.name for f in fs), plain_init


def _build(name: str, values):
    cls, names, plain_init = _dataclass(name)
    if type(values) is not list or len(values) != len(names):
        raise DecodeError(f"{name}: {len(names)} fields expected")
    if plain_init:
        return cls(*values)
    obj = object.__new__(cls)
    for field_name, value in zip(names, values):
        object.__setattr__(obj, field_name, value)
    return obj


_SIMPLE = {
    "t": tuple, "m": Markup, "p": Path, "s": set, "f": frozenset,
    "b": lambda v: v.encode("latin-1"), "d": lambda v: {k: x for k, x in v},
}


def _long(side: memoryview, at: list[int], v) -> str:
    """The next long string: the raw part is read once, in order, as `encode` wrote it (each string starts where
    the one before ended), so a few bytes of JSON cannot copy the same raw bytes over and over."""
    if type(v) is not list or len(v) != 2 or type(v[0]) is not int or type(v[1]) is not int \
            or not at[0] == v[0] <= v[1] <= len(side):
        raise DecodeError("a long string is {TAG: 'r', 'v': [start, end]}, each starting where the last one ended")
    text = str(side[v[0]:v[1]], "utf-8")
    if len(text) < LONG:
        raise DecodeError(f"a string shorter than {LONG} characters is written in the JSON")
    at[0] = v[1]
    return text


def _hook(side: memoryview, at: list[int], d: dict):
    tag = d.get(TAG)
    if tag is None:
        return d
    if len(d) != 2 or "v" not in d or type(tag) is not str:
        raise DecodeError("a tagged value is {TAG: tag, 'v': value}")
    if tag == "r":
        return _long(side, at, d["v"])
    simple = _SIMPLE.get(tag)
    try:
        return simple(d["v"]) if simple is not None else _build(tag, d["v"])
    except DecodeError:
        raise
    except (TypeError, ValueError, AttributeError, ImportError) as exc:  # a value of the wrong shape
        raise DecodeError(f"bad {tag!r} value: {exc}") from None


def decode(data: bytes):
    """What `encode` made, or DecodeError for anything else."""
    try:
        end = data.find(b"\n")
        text = data if end < 0 else data[:end]
        with memoryview(data) as whole, whole[len(data) if end < 0 else end + 1:] as side:
            at = [0]
            value = json.loads(text, object_hook=lambda d: _hook(side, at, d))
            if at[0] != len(side):
                raise DecodeError("raw bytes after the JSON that no string of it refers to")
            return value
    except DecodeError:
        raise
    except (ValueError, TypeError, AttributeError, RecursionError) as exc:  # UnicodeDecodeError, JSONDecodeError
        raise DecodeError(f"not the site's data: {exc}") from None
