"""JSON loading for response schemas: bounded, finite, and located at a line.

`json.loads` recurses once per nested bracket (1,000 levels raise RecursionError, and the
JSON Schema validator recurses several frames per level long before that), accepts `NaN` and
`Infinity`, and turns `1e999` into infinity; none of that may reach the manifest or a
provider. So nesting is measured with a flat scan first, numbers are checked as they are
parsed, and objects are counted (`MAX_OBJECTS`) before any rule walks them. Every problem is a `JsonError` carrying its diagnostic code and position.
"""

from __future__ import annotations

import json
import math
import re

MAX_DEPTH = 64  # nested objects/arrays; a strict response schema nests ~2 per property level
# Objects in one file. Checking a schema against the JSON Schema meta-schema costs about 1 ms
# per object, so 25,000 one-line properties (1 MB) took 14 s; the authors' schemas have < 30.
MAX_OBJECTS = 500
MAX_INT = 2**63

# Strings first, so brackets and number-like text inside strings are skipped. A string runs
# to its closing quote or, unterminated, to the end of the text, and the possessive `*+`
# never backtracks: one linear pass even over 1 MB of `"\"\"\"…` (a plain `(…)*"` retries
# from every quote, quadratically).
_TOKENS = re.compile(r'"(?:[^"\\]++|\\[\s\S])*+(?:"|\\?\Z)|[\[\]{}]|-?Infinity|NaN|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?',
                     re.ASCII)


class JsonError(Exception):
    def __init__(self, message: str, line: int, col: int, code: str = "HB104"):
        super().__init__(message)
        self.message, self.line, self.col, self.code = message, line, col, code


class _BadNumber(ValueError):
    def __init__(self, literal: str, why: str):
        super().__init__(why)
        self.literal, self.why = literal, why


def _position(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _too_deep_at(text: str) -> int | None:
    depth = 0
    for m in _TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return m.start()
        elif c in "]}":
            depth -= 1
    return None


def _constant(literal: str):
    raise _BadNumber(literal, f"`{literal}` is not a finite number")


def _float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _BadNumber(literal, f"number `{literal[:40]}` is too large (not finite)")
    return value


def _int(literal: str) -> int:
    if len(literal) > 20 or abs(int(literal)) >= MAX_INT:
        raise _BadNumber(literal, f"integer `{literal[:40]}` does not fit in 64 bits")
    return int(literal)


def load_json(text: str) -> tuple[object, list[tuple[str, int]]]:
    """Parse `text`; returns the value and each duplicated key with its line."""
    if (at := _too_deep_at(text)) is not None:
        raise JsonError(f"nesting deeper than {MAX_DEPTH} levels", *_position(text, at), code="HB151")
    dups: list[str] = []
    objects = 0

    def pairs(items):
        nonlocal objects
        objects += 1
        seen = set()
        for k, _ in items:
            if k in seen:
                dups.append(k)
            seen.add(k)
        return dict(items)

    try:
        data = json.loads(text, object_pairs_hook=pairs, parse_constant=_constant,
                          parse_float=_float, parse_int=_int)
    except json.JSONDecodeError as exc:
        raise JsonError(f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except _BadNumber as exc:
        hit = next((m.start() for m in _TOKENS.finditer(text) if m.group() == exc.literal), 0)
        raise JsonError(exc.why, *_position(text, hit), code="HB156") from None
    if objects > MAX_OBJECTS:
        raise JsonError(f"JSON with {objects:,} objects, more than the {MAX_OBJECTS:,} a response schema may hold",
                        1, 1, code="HB152")
    found = []
    for key in dups:
        hits = [m.start() for m in re.finditer(rf'"{re.escape(key)}"\s*:', text)]
        found.append((key, _position(text, hits[1])[0] if len(hits) > 1 else 1))
    return data, found
