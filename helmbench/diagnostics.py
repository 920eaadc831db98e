"""One finding about the benchmark tree, located at `path:line:col`.

Lives at the package top because both the loader (syntax, fields) and the lint rules
(semantics) emit them, and the compiler refuses a tree that has any error.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True, order=True)
class Diagnostic:
    path: str  # relative to the benchmark root, POSIX separators
    line: int  # 1-based
    col: int  # 1-based
    code: str
    message: str
    severity: Severity = "error"
    hint: str | None = field(default=None, compare=False)

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def to_dict(self) -> dict:
        return asdict(self)


class Collector:
    """Accumulates diagnostics so every problem is reported, not just the first."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def add(
        self,
        code: str,
        path: str,
        line: int,
        message: str,
        *,
        col: int = 1,
        hint: str | None = None,
        severity: Severity | None = None,
    ) -> None:
        from helmbench.lint.codes import CODES

        sev = severity or CODES[code].severity
        self.items.append(Diagnostic(path, max(line, 1), max(col, 1), code, message, sev, hint))

    def extend(self, other: "Collector") -> None:
        self.items.extend(other.items)

    def sorted(self) -> list[Diagnostic]:
        return sorted(set(self.items), key=lambda d: (_natural(d.path), d.line, d.col, d.code, d.message))

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.is_error]


def _natural(path: str):
    from helmbench.spec.naming import natural_key

    return natural_key(path)
