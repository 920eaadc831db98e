"""Render diagnostics for people (text), GitHub pull requests (annotations) and tools (JSON)."""

from __future__ import annotations

import json

from helmbench.diagnostics import Diagnostic


def text(diags: list[Diagnostic]) -> str:
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
    out = []
    for d in diags:
        level = "error" if d.is_error else "warning"
        msg = d.message + (f" ({d.hint})" if d.hint else "")
        out.append(
            f"::{level} file={_escape_prop(prefix + d.path)},line={d.line},col={d.col},title={d.code}::{_escape_data(msg)}"
        )
    return "\n".join(out)


def as_json(diags: list[Diagnostic]) -> str:
    errors = sum(d.is_error for d in diags)
    return json.dumps(
        {"errors": errors, "warnings": len(diags) - errors, "diagnostics": [d.to_dict() for d in diags]},
        indent=2,
        ensure_ascii=False,
    )


RENDERERS = {"text": text, "github": github, "json": as_json}
