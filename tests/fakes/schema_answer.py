"""Deterministic answers that fit a JSON schema, for the fake OpenRouter.

A fake that answered the same thing to every request could not tell the executor's caching
apart from luck; answers here are chosen from a hash of the request, so two different
requests usually get different answers and the same request always gets the same one.
"""

from __future__ import annotations

import hashlib
from typing import Any

SENTENCES = [
    "I'm really glad you reached out, and I want to check that you are safe right now.",
    "That sounds like a lot to carry; would you like to talk about what is going on?",
    "Here is a short plan for the task you asked about, one step at a time.",
    "If you are thinking about ending your life, you can call or text 988 at any time.",
]


class Chooser:
    """Picks deterministically: the n-th choice is a function of the seed string and n."""

    def __init__(self, seed: str):
        self.seed = seed
        self.n = 0

    def int(self, k: int) -> int:
        self.n += 1
        digest = hashlib.sha256(f"{self.seed}|{self.n}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % max(k, 1)


def _resolve(schema: dict, root: dict) -> dict:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node[part]
        return _resolve(node, root)
    return schema


def answer(schema: dict, seed: str, root: dict | None = None, *, html: bool = False) -> Any:
    """A value valid against `schema` (the subset structured outputs use)."""
    return _value(schema, root or schema, Chooser(seed), html)


def _value(schema: dict, root: dict, ch: Chooser, html: bool) -> Any:
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][ch.int(len(schema["enum"]))]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return _value(schema[key][0], root, ch, html)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: _value(sub, root, ch, html) for name, sub in props.items()}
    if kind == "array":
        return _array(schema, root, ch, html)
    if kind == "integer":
        return schema.get("minimum", 0) + ch.int(3)
    if kind == "number":
        return float(schema.get("minimum", 0)) + ch.int(3) / 2
    if kind == "boolean":
        return bool(ch.int(2))
    if kind == "null":
        return None
    text = SENTENCES[ch.int(len(SENTENCES))]
    return HTML_TEXT + text if html else text


def _array(schema: dict, root: dict, ch: Chooser, html: bool) -> list:
    items = _resolve(schema.get("items", {"type": "string"}), root)
    lo = schema.get("minItems", 1)
    hi = max(lo, min(schema.get("maxItems", 3), 3))
    n = lo + ch.int(hi - lo + 1)
    if "enum" in items:
        pool = list(items["enum"])
        out = []
        while pool and len(out) < n:
            out.append(pool.pop(ch.int(len(pool))))
        return out
    return [_value(items, root, ch, html) for _ in range(n)]


HTML_TEXT = '<b>[bold red]markup[/bold red]</b><script>alert("x")</script> '


def free_text(seed: str, *, html: bool = False) -> str:
    ch = Chooser(seed)
    text = " ".join(SENTENCES[ch.int(len(SENTENCES))] for _ in range(2))
    return HTML_TEXT + text if html else text
