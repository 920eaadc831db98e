"""Render diagnostics for people (text), GitHub pull requests (annotations) and tools (JSON).

Why in cli/: only the command line renders; `helmbench.api.lint` returns the findings, this prints them.

Paths in diagnostics are relative to the benchmark root; each renderer is given the root's
path as a prefix, chosen by the command for its reader:
- text: relative to the shell's current folder, so `path:line:col` opens with a click in a
  terminal or editor (`../bench/scenarios/…` when the tree is elsewhere);
- github: relative to the repository's top folder (the workflow's checkout, GITHUB_WORKSPACE, or the
  nearest `.git` above the root: lint_cmd.repository_prefix), as GitHub resolves annotation paths from
  there whichever folder the step runs in;
- json: each `path` stays relative to the benchmark root (stable whatever folder the tool runs
  in, so results can be compared and keyed), and the document's `root` field is the root as
  seen from the current folder: `root/path` opens the file.
Every format carries the token's extent: `end_line`/`end_col` (just past its last character)
in JSON, `endLine`/`endColumn` in GitHub annotations. A second location (where the YAML parser
noticed a bracket opened lines above was never closed) is a `note:` line in text, `related`
in JSON and part of the message on GitHub.
"""

from __future__ import annotations

import json
import re

from helmbench.api import Diagnostic
from helmbench.terminal import printable

_UNSAFE_IN_JSON = re.compile("[\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def summary(diags: list[Diagnostic]) -> tuple[int, int]:
    """(errors, warnings); notes are neither (`notes`)."""
    errors = sum(d.is_error for d in diags)
    return errors, len(diags) - errors - notes(diags)


def notes(diags: list[Diagnostic]) -> int:
    return sum(d.is_note for d in diags)


def text(diags: list[Diagnostic], prefix: str = "") -> str:
    """`path:line:col: HB### message`, a hint line under it when there is one."""
    lines = []
    for d in diags:
        tag = "" if d.is_error else f" ({d.severity})"
        lines.append(printable(f"{prefix}{d.path}:{d.line}:{d.col}: {d.code}{tag} {d.message}"))
        for line, col, note in d.related:
            lines.append(printable(f"    note: {prefix}{d.path}:{line}:{col}: {note}"))
        if d.hint:
            lines.append(printable(f"    hint: {d.hint}"))
    return "\n".join(lines)


def _escape_data(s: str) -> str:
    # GitHub's own escapes for line breaks, then every other unsafe character made visible:
    # no raw line break remains, so no data can end the command early.
    return printable(s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def github(diags: list[Diagnostic], prefix: str = "") -> str:
    """Workflow commands that GitHub shows as annotations on the pull request's diff."""
    out = []
    for d in diags:
        level = {"error": "error", "note": "notice"}.get(d.severity, "warning")
        msg = d.message + "".join(f" ({note} at line {l}, column {c})" for l, c, note in d.related)
        msg += f" (hint: {d.hint})" if d.hint else ""
        end_line, end_col = d.end
        out.append(
            f"::{level} file={_escape_prop(prefix + d.path)},line={d.line},col={d.col},"
            f"endLine={end_line},endColumn={end_col},"
            f"title={_escape_prop(d.code)}::{_escape_data(msg)}"
        )
    return "\n".join(out)


#: The version of `lint --format json`'s shape: lint.schema.json's `format` (bump both together).
LINT_FORMAT = 1


def as_json(diags: list[Diagnostic], prefix: str = "") -> str:
    """One JSON document: its format, counts, the root prefix, and every diagnostic as an object."""
    errors, warnings = summary(diags)
    doc = json.dumps(
        {"format": LINT_FORMAT, "root": prefix.rstrip("/") or ".", "errors": errors, "warnings": warnings, "notes": notes(diags),
         "diagnostics": [d.to_dict() for d in diags]},
        indent=2,
        ensure_ascii=False,
    )
    # JSON already escapes control characters; bidi overrides and line separators (which can
    # only occur inside strings) get the same `\uXXXX` form so the document reads true too.
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", doc)


RENDERERS = {"text": text, "github": github, "json": as_json}
