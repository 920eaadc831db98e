"""`helmbench plugins`: which plugins are loaded, from which package, and what each adds."""

from __future__ import annotations

import json
from enum import Enum

import typer

from helmbench.cli.app import app


class PluginsFormat(str, Enum):
    text = "text"
    json = "json"


@app.command()
def plugins(
    format: PluginsFormat = typer.Option(PluginsFormat.text, "--format", "-f", help="text or json."),
) -> None:
    """List the loaded plugins: name, package and version, evaluation types, lint rules and codes.

    The built-in evaluators and rules are plugins too. A third-party package adds its own through
    the `helmbench` entry-point group; set HELMBENCH_DISABLE_PLUGINS=name to skip one.

    Examples:

        helmbench plugins

        helmbench plugins --format json
    """
    from helmbench.api import plugins as loaded_plugins
    from helmbench.terminal import printable

    loaded = loaded_plugins()
    if format is PluginsFormat.json:
        print(json.dumps(loaded, indent=2, ensure_ascii=False))
        return
    for p in loaded:
        version = f" {p['version']}" if p["version"] else ""
        module = "" if p["module"] == p["name"] else f", {p['module']}"
        print(printable(f"{p['name']}  ({p['source']}{version}{module})"))
        for key in ("evaluators", "rules", "codes"):
            if p[key]:
                print(printable(f"    {key}: {', '.join(p[key])}"))
