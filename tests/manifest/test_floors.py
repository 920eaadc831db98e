"""Safety floors travel in the manifest's catalog only when benchmark.yml declares them: a tree
without floors compiles byte for byte as before (the golden manifest), one with floors gets
another manifest hash (its scores differ) and the floors as written."""

from __future__ import annotations

import json

from helmbench.manifest import compile_tree

from ._util import GOLDEN


def _header(path) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.loads(f.readline())


def test_no_floors_no_key_and_the_golden_manifest_is_unchanged(golden_manifest):
    header = _header(golden_manifest)
    assert "floors" not in header["catalog"]
    assert golden_manifest.read_bytes() == (GOLDEN / "expected.jsonl").read_bytes()


def test_declared_floors_are_in_the_catalog_and_change_the_hash(tree, tmp_path, golden_manifest):
    yml = tree / "benchmark.yml"
    yml.write_text(yml.read_text(encoding="utf-8")
                   + "floors:\n  - part: P1\n    minimum: 0.7\n    cap: 0.4\n"
                   + "  - {part: P2-B1, minimum: 0.5, cap: 0.4}\n", encoding="utf-8")
    header = compile_tree(tree, tmp_path / "build").header
    assert header["catalog"]["floors"] == [{"part": "P1", "minimum": 0.7, "cap": 0.4},
                                           {"part": "P2-B1", "minimum": 0.5, "cap": 0.4}]
    assert header["manifest_hash"] != _header(golden_manifest)["manifest_hash"]
