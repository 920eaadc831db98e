"""Names a package exports, loaded on first use (PEP 562 module `__getattr__`).

Why: a stage's `__init__` re-exports its main names for callers, and importing any one of its
modules runs that `__init__` first. Done eagerly, reading one small module (a warm site build
decodes dataclasses from spec, manifest and score) pays for every module of the stage:
Pydantic models, jsonschema, the plugin registry, about half a second in all. A package lists
where each name lives instead, and the module holding it is imported when the name is first read.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module


def exports(package: str, where: dict[str, str]) -> Callable[[str], object]:
    """The `__getattr__` for `package`: each name in `where` read from the module named beside it.

    A name its module is also called (`manifest.canonical.canonical`) cannot be lazy: importing that
    module sets the package's attribute to the module itself, and `__getattr__` is never asked.
    The package imports such names eagerly; listing one here is refused."""
    clashes = [name for name, module in where.items() if module.rpartition(".")[2] == name]
    if clashes:
        raise ValueError(f"{package}: import {', '.join(clashes)} eagerly (each is also its module's name)")

    def __getattr__(name: str) -> object:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(where[name]), name)
        setattr(import_module(package), name, value)  # the next read finds it without this hook
        return value

    return __getattr__
