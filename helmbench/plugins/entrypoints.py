"""Which plugins are declared: the `helmbench` entry-point group, read from the packages' metadata.

Why apart from the registry: the site's build cache keys its pages by the declared plugins (a
plugin's evaluator can add to a page) on every build, and a warm build must not import pluggy,
Pydantic and the plugin types (~0.2 s) to read a list of names. The registry loads what this
module lists; nothing here imports a plugin.
"""

from __future__ import annotations

import importlib.metadata
import os
import tomllib
from pathlib import Path

GROUP = "helmbench"  # the entry-point group (and pluggy's project name, hookspecs.PROJECT)
OWN = "helmbench"  # the distribution whose entry points are the built-in plugins
DISABLE_ENV = "HELMBENCH_DISABLE_PLUGINS"  # comma-separated entry-point names not to load


def disabled() -> set[str]:
    return {n.strip() for n in os.environ.get(DISABLE_ENV, "").split(",") if n.strip()}


def own_entry_points() -> list:
    """The built-in plugins of a source tree that is not installed: the same declarations, read from
    its pyproject.toml as data (an installed HELMBench, editable or not, lists them in its metadata)."""
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    try:
        found = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["entry-points"][GROUP]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return []
    return [importlib.metadata.EntryPoint(name, value, GROUP) for name, value in found.items()]


def entry_points() -> list[tuple[object, str, str | None]]:
    """(entry point, distribution name, version) of the group, in the order they are registered."""
    found = []
    own_installed = False
    for ep in importlib.metadata.entry_points(group=GROUP):
        dist = getattr(ep, "dist", None)
        source, version = (dist.name, dist.version) if dist is not None else ("unknown distribution", None)
        own_installed |= source == OWN
        found.append((ep, source, version))
    if not own_installed:
        found += [(ep, OWN, None) for ep in own_entry_points()]
    # HELMBench's core evaluators and rules first (their order is the order types and codes are listed in),
    # then the plugins that ship with it, then third parties', each group by name
    return sorted(found, key=lambda e: (e[1] != OWN, not e[0].name.startswith("helmbench-"), e[0].name))


def declared() -> list[tuple[str, str, str | None, str]]:
    """(entry-point name, distribution, version, object reference) of every plugin that would be
    loaded, without importing any plugin."""
    off = disabled()
    return [(ep.name, source, version, ep.value) for ep, source, version in entry_points()
            if not (ep.name in off and source != OWN)]
