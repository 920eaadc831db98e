"""Line numbers for paths inside a JSON document.

`json.loads` forgets where things were, but an author fixing a schema needs the line of the
offending property. This small scanner re-reads already-valid JSON text and records the
offset of every member key and array element, so a path such as
`("properties", "tags", "items")` can be reported as `S1.json:14:7`.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


class _Scanner:
    def __init__(self, text: str):
        self.text = text
        self.at: dict[tuple, int] = {}

    def ws(self, i: int) -> int:
        return _WS.match(self.text, i).end()

    def value(self, i: int, path: tuple) -> int:
        i = self.ws(i)
        self.at.setdefault(path, i)
        c = self.text[i]
        if c == "{":
            return self.members(i + 1, path)
        if c == "[":
            return self.elements(i + 1, path)
        if c == '"':
            return json.decoder.scanstring(self.text, i + 1)[1]
        m = _SCALAR.match(self.text, i)
        if not m:
            raise ValueError(f"unexpected character at {i}")
        return m.end()

    def members(self, i: int, path: tuple) -> int:
        i = self.ws(i)
        if self.text[i] == "}":
            return i + 1
        while True:
            i = self.ws(i)
            key, j = json.decoder.scanstring(self.text, i + 1)
            self.at[path + (key,)] = i  # a member is reported at its key
            j = self.ws(j) + 1  # past ':'
            i = self.ws(self.value(j, path + (key,)))
            if self.text[i] == "}":
                return i + 1
            i += 1  # past ','

    def elements(self, i: int, path: tuple) -> int:
        i = self.ws(i)
        if self.text[i] == "]":
            return i + 1
        n = 0
        while True:
            i = self.ws(self.value(i, path + (n,)))
            if self.text[i] == "]":
                return i + 1
            i, n = i + 1, n + 1


@lru_cache(maxsize=64)
def _offsets(text: str) -> dict[tuple, int]:
    scanner = _Scanner(text)
    try:
        scanner.value(0, ())
    except (ValueError, IndexError):
        pass  # keep what was found; the loader reports invalid JSON itself
    return scanner.at


def locate(text: str, path) -> tuple[int, int]:
    """1-based (line, col) of the deepest existing prefix of `path` in the JSON `text`."""
    at = _offsets(text)
    path = tuple(path)
    while path and path not in at:
        path = path[:-1]
    offset = at.get(path, 0)
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col
