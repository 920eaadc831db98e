"""Golden test: a small tree compiles to the committed manifest, byte for byte.

The tree (tests/manifest/golden/tree/) holds one nested scenario with user contexts and
`list_includes` and a bare schema, one flat-layout scenario (`P2-B1-S1--hand-off/`) with
individual condition files, `category_match` and a pre-wrapped schema whose
perturbations.md has a BOM and CRLF line endings, and one `sqe` scenario (MCSQE.md, CR1/CR2,
partial credit, free-text answer). Any change to composition, canonical JSON, hashing or
the line layout changes these bytes.

When a change is intended (and the format version / release notes say so), regenerate:

    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/manifest/test_golden.py

and commit tests/manifest/golden/expected.jsonl with the change that caused it.
"""

from __future__ import annotations

import difflib
import json
import os

from helmbench import __version__
from helmbench.manifest import compile_tree

from ._util import EXPECTED, GOLDEN_TREE

REGENERATE = "UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/manifest/test_golden.py"


def _with_current_compiler(expected: bytes) -> bytes:
    """The header names the compiler release; a version bump alone is not a contract change."""
    header = json.loads(expected.split(b"\n", 1)[0])
    old = f'"compiler":{json.dumps(header["compiler"])}'.encode()
    new = f'"compiler":{json.dumps(f"helmbench {__version__}")}'.encode()
    return expected.replace(old, new, 1)


def _explain(expected: bytes, actual: bytes) -> str:
    """Say which lines and which fields differ, then show a short unified diff of the first one."""
    exp_lines, act_lines = expected.decode().split("\n"), actual.decode().split("\n")
    out = [f"compiled golden tree differs from {EXPECTED} "
           f"({len(exp_lines) - 1} expected lines, {len(act_lines) - 1} compiled)."]
    first = None
    for n in range(max(len(exp_lines), len(act_lines))):
        e = exp_lines[n] if n < len(exp_lines) else None
        a = act_lines[n] if n < len(act_lines) else None
        if e == a:
            continue
        first = first if first is not None else n
        try:
            ej, aj = json.loads(e) if e else {}, json.loads(a) if a else {}
            keys = sorted(k for k in ej.keys() | aj.keys() if ej.get(k) != aj.get(k))
            label = ej.get("id") or aj.get("id") or "header"
        except json.JSONDecodeError:
            keys, label = ["<not JSON>"], "?"
        out.append(f"  line {n + 1} ({label}): fields differ: {', '.join(keys) or 'byte layout only'}")
    if first is not None:
        def expand(obj):  # multi-line strings (message content, criteria) as lists of lines
            if isinstance(obj, str) and "\n" in obj:
                return obj.split("\n")
            if isinstance(obj, dict):
                return {k: expand(v) for k, v in obj.items()}
            return [expand(v) for v in obj] if isinstance(obj, list) else obj

        def pretty(line):
            obj = expand(json.loads(line)) if line else {}
            return json.dumps(obj, indent=1, ensure_ascii=False, sort_keys=True).splitlines()
        e = exp_lines[first] if first < len(exp_lines) else ""
        a = act_lines[first] if first < len(act_lines) else ""
        diff = list(difflib.unified_diff(pretty(e), pretty(a), "expected", "compiled", lineterm="", n=2))
        out.append(f"first difference, line {first + 1}:")
        out += diff[:80] + (["  …"] if len(diff) > 80 else [])
    out.append("If the change to composition, canonical JSON or hashing is intended, regenerate with:")
    out.append(f"  {REGENERATE}")
    return "\n".join(out)


def test_golden_tree_compiles_to_the_committed_manifest(tmp_path):
    actual = compile_tree(GOLDEN_TREE, tmp_path).path.read_bytes()
    if os.environ.get("UPDATE_GOLDEN"):
        EXPECTED.write_bytes(actual)
    assert EXPECTED.is_file(), f"no {EXPECTED}; create it with: {REGENERATE}"
    expected = _with_current_compiler(EXPECTED.read_bytes())
    assert actual == expected, _explain(expected, actual)


def test_golden_tree_still_exercises_what_it_claims():
    """Guard the fixture itself (e.g. against a checkout that converted its line endings)."""
    crlf = (GOLDEN_TREE / "scenarios/P2-B1-S1--hand-off/perturbations.md").read_bytes()
    assert crlf.startswith(b"\xef\xbb\xbf") and b"\r\n" in crlf, "the BOM/CRLF file lost its BOM or CRLF"
    lines = [json.loads(line) for line in EXPECTED.read_text(encoding="utf-8").splitlines()]
    header, cases = lines[0], lines[1:]
    assert header["cases"] == len(cases) == 14
    assert {c["evaluation"]["type"] for c in cases} == {"list_includes", "category_match", "sqe"}
    assert any(c["user_context"] is None for c in cases) and any(c["user_context"] for c in cases)
    assert any(c["request"]["response_format"] is None for c in cases)
    assert header["catalog"]["behaviours"]["P2-B1"]["weight"] == 7.5


def test_expected_manifest_is_lf_utf8_canonical():
    data = EXPECTED.read_bytes()
    assert b"\r" not in data and data.endswith(b"\n") and not data.startswith(b"\xef\xbb\xbf")
    text = data.decode("utf-8")
    assert "é" in text and "\\u00e9" not in text
    for line in text.splitlines():
        obj = json.loads(line)
        assert line == json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
