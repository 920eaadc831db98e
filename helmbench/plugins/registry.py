"""The plugin manager, and the one place every stage asks what evaluators and lint rules exist.

Loading follows simonw/llm's plugins.py: a pluggy manager and the plugins found through the
`helmbench` entry-point group. The built-in evaluators and lint rules are entry points of
HELMBench's own distribution (pyproject.toml), found exactly as a third party's are, so this
module names no stage; "built-in" means "declared by the helmbench distribution" (a source tree
that is not installed reads the same declarations from its pyproject.toml). Entry points are
loaded one by one here (pluggy's
`load_setuptools_entrypoints` stops at the first failure without saying which plugin failed)
so a broken package is reported by name, distribution and version, never as a traceback.

Loading is lazy and happens once per process: `helmbench lint` on a tree that only uses
built-in types still pays for importing the installed plugins (a plugin may add lint rules
that apply to any tree), but nothing is imported until the first question is asked.
"""

from __future__ import annotations

import inspect
import re
import threading
import typing
from dataclasses import dataclass, field, replace

import pluggy
from pydantic import BaseModel

from helmbench.errors import HelmbenchError
from helmbench.plugins import hookspecs
from helmbench.plugins.entrypoints import DISABLE_ENV, GROUP, OWN, declared, disabled, entry_points  # noqa: F401 (re-exported)
from helmbench.plugins.types import Evaluator, LintRule, PluginInfo

BUILT_IN = "built-in"  # PluginInfo.source of the built-in plugins (entry points of OWN)
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


def spell_case(evaluation, scenario, context) -> dict:
    """The manifest's `evaluation` for one evaluation block (a scenario's, a criterion's, a checkpoint's),
    as its evaluator spells it: with the case's `context` when its `case` takes one, and with the
    evaluator's version when it has one (so the version is part of the case's hash).

    A third party's failure here is reported naming the plugin and its package, not as HELMBench's bug.
    """
    ev = evaluator(evaluation.type)
    where = getattr(scenario, "key", "?") + (f" ({context.case_id})" if context is not None else "")
    try:
        out = ev.case(evaluation, scenario, context) if ev.per_case else ev.case(evaluation, scenario)
        if not isinstance(out, dict) or out.get("type") != ev.type:
            raise TypeError(f"case() must return a dict with \"type\": {ev.type!r}, not {type(out).__name__}")
    except Exception as exc:  # noqa: BLE001  (a plugin's bug, reported by name)
        if ev.plugin is None or is_builtin(ev.plugin):
            raise  # HELMBench's own: its errors speak for themselves, its bugs reach the guard's report
        info = registry().plugins[ev.plugin]
        raise _broken(_label(info), info.name, info.distribution,
                      f"failed in case() of evaluation type {ev.type!r} for scenario {where}", exc) from None
    if ev.version is not None:
        out = {**out, "evaluator_version": ev.version}
    return out


def lint_rules() -> list[LintRule]:
    return registry().rules


def lint_codes() -> dict:
    return registry().codes


def plugins() -> list[PluginInfo]:
    return list(registry().plugins.values())


def is_builtin(plugin: str) -> bool:
    """Whether `plugin` (an entry-point name) comes with HELMBench itself: its bugs are HELMBench's."""
    info = registry().plugins.get(plugin) if _current is not None else None
    return info is not None and info.source == BUILT_IN


def plugin_label(name: str) -> str:
    """`plugin 'regex' (helmbench-regex 0.1.0)`: a loaded plugin as messages name it, with its package."""
    info = registry().plugins.get(name)
    return _label(info) if info is not None else f"plugin {name!r}"


def owner_label(type_or_code: str) -> str:
    """The plugin that registered an evaluation type or a code, as messages name it."""
    return plugin_label(registry().owner.get(type_or_code, "?"))


def _label(info: PluginInfo) -> str:
    if info.source == BUILT_IN:
        return f"plugin {info.name!r} (built into helmbench)"
    return f"plugin {info.name!r} ({info.source}{' ' + info.version if info.version else ''})"


# --- loading ------------------------------------------------------------------------------------


def _load() -> Registry:
    pm = pluggy.PluginManager(GROUP)
    pm.add_hookspecs(hookspecs)
    reg = Registry(pm)
    off = disabled()
    seen: set[str] = set()
    for ep, source, version in entry_points():
        if ep.name in seen or (ep.name in off and source != OWN):
            continue
        seen.add(ep.name)
        info = PluginInfo(ep.name, BUILT_IN if source == OWN else source, version, ep.value, distribution=source)
        try:
            plugin = ep.load()
            pm.register(plugin, name=ep.name)
        except Exception as exc:  # noqa: BLE001  (any failure of a third party's code is reported, by name)
            raise _broken(_label(info), ep.name, source, "cannot be loaded", exc) from None
        reg.plugins[ep.name] = info
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
        try:
            impl.function(register=make_register(reg, name))
        except Exception as exc:  # noqa: BLE001
            raise _broken(_label(info), name, info.distribution, f"failed in {hook}", exc) from None


def _model_type(model) -> str | None:
    """The single value of the model's `type: Literal[...]` field."""
    f = model.model_fields.get("type")
    if f is None or typing.get_origin(f.annotation) is not typing.Literal:
        return None
    args = typing.get_args(f.annotation)
    return args[0] if len(args) == 1 else None


def _takes_context(case) -> bool:
    """Whether `case(evaluation, scenario, context)` takes the case's context (then it is called once per
    case); a two-argument `case(evaluation, scenario)` is called once per scenario, as before."""
    try:
        params = [p for p in inspect.signature(case).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):
        return False
    return len(params) >= 3 or any(p.kind is p.VAR_POSITIONAL for p in params)


def _evaluator_register(reg: Registry, plugin: str):
    def register(ev: Evaluator) -> None:
        if not isinstance(ev, Evaluator):
            raise PluginError(f"register() takes a helmbench.plugins.Evaluator, not {type(ev).__name__}")
        if not isinstance(ev.type, str) or not TYPE_RE.match(ev.type):
            raise PluginError(f"evaluation type {ev.type!r} must be lower-case letters, digits and _")
        if not (isinstance(ev.model, type) and issubclass(ev.model, BaseModel)) or _model_type(ev.model) != ev.type:
            raise PluginError(f"the model of evaluation type {ev.type!r} must be a pydantic model with "
                              f"`type: Literal[{ev.type!r}]`")
        builtin = reg.plugins[plugin].source == BUILT_IN
        if ev.evaluate is None and not builtin:
            raise PluginError(f"evaluation type {ev.type!r} has no evaluate(): only the built-in sqe is judged "
                              "later, so a plugin's evaluator must give its verdict itself")
        if ev.type in reg.evaluators:
            raise PluginError(f"evaluation type {ev.type!r} is already registered by plugin {reg.owner[ev.type]!r}")
        if ev.version is not None and not isinstance(ev.version, str):
            raise PluginError(f"the version of evaluation type {ev.type!r} must be a string, not {ev.version!r}")
        for code in ev.codes:
            _add_code(reg, plugin, code)
        # A third party's evaluator is versioned by its distribution unless it says otherwise: the version is
        # part of each case's hash, so upgrading the plugin re-evaluates stored answers (no model call).
        version = ev.version if ev.version is not None or builtin else reg.plugins[plugin].version
        ev = replace(ev, version=version, plugin=plugin, per_case=_takes_context(ev.case))
        reg.evaluators[ev.type] = ev
        reg.owner[ev.type] = plugin
        reg.plugins[plugin].evaluators.append(ev.type)

    return register


def _add_code(reg: Registry, plugin: str, code) -> None:
    """`code` is a `helmbench.lint.codes.Code` (checked by its fields: that class lives in a later layer)."""
    fields = ("code", "severity", "summary", "explanation", "example")
    if not all(isinstance(getattr(code, f, None), str) for f in fields) or not CODE_RE.match(code.code) \
            or code.severity not in ("error", "warning", "note"):
        raise PluginError(f"{code!r} is not a helmbench.lint.codes.Code with a code like ABC101 and severity "
                          "error, warning or note")
    if code.code.startswith(RESERVED) and reg.plugins[plugin].source != BUILT_IN:
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
