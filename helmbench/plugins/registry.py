"""The plugin manager, and the one place every stage asks what evaluators and lint rules exist.

Loading follows simonw/llm's plugins.py: a pluggy manager whose built-in plugins are
registered like any other, then third-party plugins found through the `helmbench`
entry-point group. Entry points are loaded one by one here (pluggy's
`load_setuptools_entrypoints` stops at the first failure without saying which plugin failed)
so a broken package is reported by name, distribution and version, never as a traceback.

Loading is lazy and happens once per process: `helmbench lint` on a tree that only uses
built-in types still pays for importing the installed plugins (a plugin may add lint rules
that apply to any tree), but nothing is imported until the first question is asked.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import re
import threading
import typing
from dataclasses import dataclass, field

import pluggy
from pydantic import BaseModel

from helmbench.errors import HelmbenchError
from helmbench.plugins import hookspecs
from helmbench.plugins.types import Evaluator, LintRule, PluginInfo

GROUP = hookspecs.PROJECT  # the entry-point group
#: The built-in plugins: name → module, found by name (an import here would run up the layers).
DEFAULT_PLUGINS = {"helmbench-evaluators": "helmbench.run.evaluate.builtin", "helmbench-lint-rules": "helmbench.lint.rules"}
DISABLE_ENV = "HELMBENCH_DISABLE_PLUGINS"  # comma-separated entry-point names not to load
TYPE_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
CODE_RE = re.compile(r"^[A-Z]{2,6}[0-9]{3}$")
RESERVED = "HB"  # built-in codes (lint/codes.py); whether one exists is checked when a rule emits it


class PluginError(HelmbenchError):
    """A plugin could not be loaded, or registered something unusable."""


@dataclass
class Registry:
    manager: pluggy.PluginManager
    evaluators: dict[str, Evaluator] = field(default_factory=dict)
    rules: list[LintRule] = field(default_factory=list)
    codes: dict = field(default_factory=dict)  # declared by plugins (built-in codes: lint/codes.py)
    plugins: dict[str, PluginInfo] = field(default_factory=dict)
    owner: dict[str, str] = field(default_factory=dict)  # evaluation type or code -> plugin name


_lock = threading.Lock()
_current: Registry | None = None


def registry() -> Registry:
    global _current
    if _current is None:
        with _lock:
            if _current is None:
                _current = _load()
    return _current


def reset() -> None:
    """Forget what was loaded, so the next question loads the plugins again (tests install some)."""
    global _current
    with _lock:
        _current = None


def evaluators() -> dict[str, Evaluator]:
    return registry().evaluators


def evaluation_types() -> tuple[str, ...]:
    return tuple(registry().evaluators)


def evaluator(type_: str) -> Evaluator:
    try:
        return registry().evaluators[type_]
    except KeyError:
        raise ValueError(f"no evaluator for evaluation type {type_!r}") from None


def lint_rules() -> list[LintRule]:
    return registry().rules


def lint_codes() -> dict:
    return registry().codes


def plugins() -> list[PluginInfo]:
    return list(registry().plugins.values())


# --- loading ------------------------------------------------------------------------------------


def _disabled() -> set[str]:
    return {n.strip() for n in os.environ.get(DISABLE_ENV, "").split(",") if n.strip()}


def _load() -> Registry:
    pm = pluggy.PluginManager(GROUP)
    pm.add_hookspecs(hookspecs)
    reg = Registry(pm)
    try:
        own_version = importlib.metadata.version("helmbench")
    except importlib.metadata.PackageNotFoundError:  # a source checkout that is not installed
        own_version = None
    for name, module in DEFAULT_PLUGINS.items():
        pm.register(importlib.import_module(module), name=name)
        reg.plugins[name] = PluginInfo(name, "built-in", own_version, module)
    disabled = _disabled()
    seen: set[str] = set()
    for ep in sorted(importlib.metadata.entry_points(group=GROUP), key=lambda e: e.name):
        if ep.name in disabled or ep.name in seen:
            continue
        seen.add(ep.name)
        dist = getattr(ep, "dist", None)
        source, version = (dist.name, dist.version) if dist is not None else ("unknown distribution", None)
        label = f"plugin {ep.name!r} ({source}{' ' + version if version else ''})"
        try:
            plugin = ep.load()
            pm.register(plugin, name=ep.name)
        except Exception as exc:  # noqa: BLE001  (any failure of a third party's code is reported, by name)
            raise _broken(label, ep.name, source, "cannot be loaded", exc) from None
        reg.plugins[ep.name] = PluginInfo(ep.name, source, version, ep.value)
    _call(reg, "register_evaluators", _evaluator_register)
    _call(reg, "register_lint_rules", _rule_register)
    return reg


def _broken(label: str, name: str, source: str, what: str, exc: BaseException) -> PluginError:
    detail = exc.message if isinstance(exc, HelmbenchError) else f"{type(exc).__name__}: {exc}"
    return PluginError(f"{label} {what}: {detail}"[:1000],
                       hint=f"upgrade or uninstall it (`pip uninstall {source}`), or skip it with "
                            f"{DISABLE_ENV}={name}")


def _call(reg: Registry, hook: str, make_register) -> None:
    for impl in getattr(reg.manager.hook, hook).get_hookimpls():  # registration order: built-ins first
        name = impl.plugin_name
        info = reg.plugins[name]
        label = f"plugin {name!r}" if info.source == "built-in" else \
            f"plugin {name!r} ({info.source}{' ' + info.version if info.version else ''})"
        try:
            impl.function(register=make_register(reg, name))
        except Exception as exc:  # noqa: BLE001
            raise _broken(label, name, info.source, f"failed in {hook}", exc) from None


def _model_type(model) -> str | None:
    """The single value of the model's `type: Literal[...]` field."""
    f = model.model_fields.get("type")
    if f is None or typing.get_origin(f.annotation) is not typing.Literal:
        return None
    args = typing.get_args(f.annotation)
    return args[0] if len(args) == 1 else None


def _evaluator_register(reg: Registry, plugin: str):
    def register(ev: Evaluator) -> None:
        if not isinstance(ev, Evaluator):
            raise PluginError(f"register() takes a helmbench.plugins.Evaluator, not {type(ev).__name__}")
        if not isinstance(ev.type, str) or not TYPE_RE.match(ev.type):
            raise PluginError(f"evaluation type {ev.type!r} must be lower-case letters, digits and _")
        if not (isinstance(ev.model, type) and issubclass(ev.model, BaseModel)) or _model_type(ev.model) != ev.type:
            raise PluginError(f"the model of evaluation type {ev.type!r} must be a pydantic model with "
                              f"`type: Literal[{ev.type!r}]`")
        if ev.evaluate is None and plugin not in DEFAULT_PLUGINS:
            raise PluginError(f"evaluation type {ev.type!r} has no evaluate(): only the built-in sqe is judged "
                              "later, so a plugin's evaluator must give its verdict itself")
        if ev.type in reg.evaluators:
            raise PluginError(f"evaluation type {ev.type!r} is already registered by plugin {reg.owner[ev.type]!r}")
        for code in ev.codes:
            _add_code(reg, plugin, code)
        reg.evaluators[ev.type] = ev
        reg.owner[ev.type] = plugin
        reg.plugins[plugin].evaluators.append(ev.type)

    return register


def _add_code(reg: Registry, plugin: str, code) -> None:
    """`code` is a `helmbench.lint.codes.Code` (checked by its fields: that class lives in a later layer)."""
    fields = ("code", "severity", "summary", "explanation", "example")
    if not all(isinstance(getattr(code, f, None), str) for f in fields) or not CODE_RE.match(code.code) \
            or code.severity not in ("error", "warning"):
        raise PluginError(f"{code!r} is not a helmbench.lint.codes.Code with a code like ABC101 and severity "
                          "error or warning")
    if code.code.startswith(RESERVED) and plugin not in DEFAULT_PLUGINS:
        raise PluginError(f"lint code {code.code}: codes starting with {RESERVED} are HELMBench's own; "
                          "choose a prefix of the plugin's own")
    if code.code in reg.codes:
        if reg.codes[code.code] == code and reg.owner[code.code] == plugin:
            return
        raise PluginError(f"lint code {code.code} is already defined by plugin {reg.owner[code.code]!r}")
    reg.codes[code.code] = code
    reg.owner[code.code] = plugin
    reg.plugins[plugin].codes.append(code.code)


def _rule_register(reg: Registry, plugin: str):
    def register(fn, *codes) -> None:
        if not callable(fn) or not codes:
            raise PluginError("register(fn, *codes) needs a function and at least one code it may emit")
        names = []
        for c in codes:
            if not isinstance(c, str):
                _add_code(reg, plugin, c)
                c = c.code
            if not isinstance(c, str) or not (c.startswith(RESERVED) or c in reg.codes):
                raise PluginError(f"lint rule {getattr(fn, '__name__', fn)!r} names code {c!r}, which is neither "
                                  "built in nor declared (pass a helmbench.lint.codes.Code to declare it)")
            names.append(c)
        name = getattr(fn, "__name__", repr(fn))
        reg.rules.append(LintRule(name, tuple(names), fn, plugin))
        reg.plugins[plugin].rules.append(name)

    return register
