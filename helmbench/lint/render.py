"""Render diagnostics for people (text), GitHub pull requests (annotations) and tools (JSON).

Paths in diagnostics are relative to the benchmark root. GitHub resolves annotation paths
from the repository root, so the github renderer takes the root's path as a prefix.
"""

from __future__ import annotations

import json

from helmbench.diagnostics import Diagnostic


def summary(diags: list[Diagnostic]) -> tuple[int, int]:
    errors = sum(d.is_error for d in diags)
    return errors, len(diags) - errors


def text(diags: list[Diagnostic], prefix: str = "") -> str:
    """`path:line:col: HB### message`, a hint line under it when there is one."""
    lines = []
    for d in diags:
        tag = "" if d.is_error else " (warning)"
        lines.append(f"{d.path}:{d.line}:{d.col}: {d.code}{tag} {d.message}")
        if d.hint:
            lines.append(f"    hint: {d.hint}")
    return "\n".join(lines)


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def github(diags: list[Diagnostic], prefix: str = "") -> str:
    """Workflow commands that GitHub shows as annotations on the pull request's diff."""
    out = []
    for d in diags:
        level = "error" if d.is_error else "warning"
        msg = d.message + (f" (hint: {d.hint})" if d.hint else "")
        out.append(
            f"::{level} file={_escape_prop(prefix + d.path)},line={d.line},col={d.col},"
            f"title={_escape_prop(d.code)}::{_escape_data(msg)}"
        )
    return "\n".join(out)


def as_json(diags: list[Diagnostic], prefix: str = "") -> str:
    """One JSON document: counts, the root prefix, and every diagnostic as an object."""
    errors, warnings = summary(diags)
    return json.dumps(
        {"root": prefix.rstrip("/") or ".", "errors": errors, "warnings": warnings,
         "diagnostics": [d.to_dict() for d in diags]},
        indent=2,
        ensure_ascii=False,
    )


RENDERERS = {"text": text, "github": github, "json": as_json}
