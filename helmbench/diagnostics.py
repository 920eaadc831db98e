"""One finding about the benchmark tree, located at `path:line:col`.

Lives at the package top because both the loader (syntax, fields) and the lint rules
(semantics) emit them, and the compiler refuses a tree that has any error.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

#: error: compile refuses the tree; warning: `lint --strict` fails on it; note: shown, never fails (a fact to
#: know, such as a crisis service nobody has checked against its source yet).
Severity = Literal["error", "warning", "note"]


Span = tuple[int, int, int, int]  # 1-based (line, col, end_line, end_col); end_col just past the token


@dataclass(frozen=True, order=True)
class Diagnostic:
    path: str  # relative to the benchmark root, POSIX separators
    line: int  # 1-based: the offending token (the wrong value, the wrong list item)
    col: int  # 1-based
    code: str
    message: str
    severity: Severity = "error"
    hint: str | None = field(default=None, compare=False)
    end_line: int | None = field(default=None, compare=False)  # None: the token's end is unknown
    end_col: int | None = field(default=None, compare=False)  # just past the token's last character
    # a second location in the same file: where the parser noticed an unclosed bracket
    related: tuple[tuple[int, int, str], ...] = field(default=(), compare=False)

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    @property
    def is_note(self) -> bool:
        return self.severity == "note"

    @property
    def end(self) -> tuple[int, int]:
        """(end_line, end_col), the start itself when the token's end is unknown."""
        if self.end_line is None:
            return self.line, self.col
        return self.end_line, self.end_col if self.end_col is not None else self.col

    def to_dict(self) -> dict:
        d = asdict(self)
        d["end_line"], d["end_col"] = self.end
        d["related"] = [{"line": l, "col": c, "note": n} for l, c, n in self.related]
        return d


class Collector:
    """Accumulates diagnostics so every problem is reported, not just the first."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def add(
        self,
        code: str,
        path: str,
        line: int | Span,
        message: str,
        *,
        col: int = 1,
        hint: str | None = None,
        severity: Severity | None = None,
        related: tuple[tuple[int, int, str], ...] = (),
    ) -> None:
        """`line` is a line number, or a whole span (line, col, end_line, end_col) of the token."""
        from helmbench.codes import CODES

        sev = severity or CODES[code].severity
        end_line = end_col = None
        if isinstance(line, tuple):
            line, col, end_line, end_col = line
        self.items.append(Diagnostic(path, max(line, 1), max(col, 1), code, message, sev, hint,
                                     end_line, end_col, tuple(related)))

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
