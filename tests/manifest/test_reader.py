"""The reader trusts nothing: a hand-edited, truncated or reordered manifest is refused
with a message naming the line, and the CLI shows that message without a traceback."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helmbench.manifest import ManifestError, read_manifest
from helmbench.manifest.reader import Manifest

from ._util import run_cli


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def _write(tmp_path: Path, lines: list[str]) -> Path:
    out = tmp_path / "tampered.jsonl"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _refused(path: Path, *fragments: str) -> str:
    with pytest.raises(ManifestError) as exc:
        read_manifest(path)
    msg = exc.value.message
    for f in fragments:
        assert f in msg, msg
    return msg


def test_untouched_manifest_reads_and_streams(golden_manifest):
    m = read_manifest(golden_manifest)
    assert m.hash.startswith("sha256:") and m.catalog["scenarios"]
    cases = list(m)
    assert len(cases) == m.header["cases"] == 14
    assert cases[0]["id"] == "P1-B1-S1-C1-U1-PT1"


def test_one_character_in_a_message_is_refused_naming_the_line(golden_manifest, tmp_path):
    lines = _lines(golden_manifest)
    assert "helpful assistant" in lines[2]
    lines[2] = lines[2].replace("helpful assistant", "helpful assistent", 1)
    _refused(_write(tmp_path, lines), "tampered.jsonl:3:", "P1-B1-S1-C1-U1-PT2", "does not match its hash")


def test_one_character_in_an_evaluation_is_refused(golden_manifest, tmp_path):
    lines = _lines(golden_manifest)
    lines[5] = lines[5].replace('"required":["ASSISTANCE"]', '"required":["ASSISTANCF"]', 1)
    _refused(_write(tmp_path, lines), ":6:", "does not match its hash")


def test_a_recomputed_hash_still_fails_the_manifest_hash(golden_manifest, tmp_path):
    """Even an edit whose case hashes were recomputed is caught by the header."""
    import hashlib

    lines = _lines(golden_manifest)
    case = json.loads(lines[1])
    case["request"]["messages"][0]["content"] += "!"

    def h(obj):
        return "sha256:" + hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":"),
                                                     ensure_ascii=False).encode()).hexdigest()

    case["request_hash"] = h(case["request"])
    case["hash"] = h({"evaluation": case["evaluation"], "request": case["request"]})
    lines[1] = json.dumps(case, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    _refused(_write(tmp_path, lines), ":1:", "manifest_hash")


def test_deleted_line_is_refused_naming_the_line(golden_manifest, tmp_path):
    lines = _lines(golden_manifest)
    gone = json.loads(lines.pop(4))["id"]
    _refused(_write(tmp_path, lines), "tampered.jsonl:5:", f"expected case {gone}", "deleted")


def test_deleted_last_line_is_refused(golden_manifest, tmp_path):
    lines = _lines(golden_manifest)
    gone = json.loads(lines.pop())["id"]
    _refused(_write(tmp_path, lines), f"tampered.jsonl:{len(lines) + 1}:", gone)


def test_reordered_lines_are_refused_naming_the_line(golden_manifest, tmp_path):
    lines = _lines(golden_manifest)
    lines[3], lines[4] = lines[4], lines[3]
    _refused(_write(tmp_path, lines), "tampered.jsonl:4:", "moved")


def test_duplicated_line_is_refused(golden_manifest, tmp_path):
    lines = _lines(golden_manifest)
    lines.insert(3, lines[3])
    _refused(_write(tmp_path, lines), "tampered.jsonl:5:")


def test_edited_catalog_title_is_refused(golden_manifest, tmp_path):
    lines = _lines(golden_manifest)
    assert '"title":"Risk detection"' in lines[0]
    lines[0] = lines[0].replace('"title":"Risk detection"', '"title":"Risk detectiom"', 1)
    _refused(_write(tmp_path, lines), "tampered.jsonl:1:", "catalog")


@pytest.mark.parametrize("old, new, field", [
    ('"severity":{"base":5,"perturbation":5,"user_context":0}', '"severity":{"base":9,"perturbation":9,"user_context":0}',
     "severity"),
    ('"difficulty":0', '"difficulty":7', "difficulty"),
    ('"weight":12', '"weight":13', "weight"),
    ('"perturbation":"P1-B1-S1-PT1"', '"perturbation":"P1-B1-S1-PT2"', "perturbation"),
])
def test_edited_scoring_fields_outside_the_hash_are_refused(golden_manifest, tmp_path, old, new, field):
    """Severity, difficulty and weight are outside the case hash; they must agree with the
    hash-checked catalog, so a hand edit is still caught, at its line."""
    lines = _lines(golden_manifest)
    assert old in lines[1], lines[1][:300]
    lines[1] = lines[1].replace(old, new, 1)
    _refused(_write(tmp_path, lines), "tampered.jsonl:2:", f"`{field}`")


def test_edited_case_count_is_refused(golden_manifest, tmp_path):
    lines = _lines(golden_manifest)
    lines[0] = lines[0].replace('"cases":14,', '"cases":15,', 1)
    _refused(_write(tmp_path, lines), "tampered.jsonl:1:", "15")


def test_line_that_is_not_json_is_refused(golden_manifest, tmp_path):
    lines = _lines(golden_manifest)
    lines[6] = lines[6][:-1]
    _refused(_write(tmp_path, lines), "tampered.jsonl:7:", "not valid JSON")


@pytest.mark.parametrize("content, fragment", [
    ("", ":1:"),
    ("not json\n", ":1:"),
    ('{"format": "something-else/9"}\n', "unsupported manifest format"),
    ("[1, 2]\n", "not a manifest header"),
])
def test_not_a_manifest(tmp_path, content, fragment):
    path = tmp_path / "x.jsonl"
    path.write_text(content, encoding="utf-8")
    _refused(path, fragment)


def test_missing_manifest(tmp_path):
    _refused(tmp_path / "nope.jsonl", "manifest not found")


def test_unverified_open_is_possible_but_explicit(golden_manifest, tmp_path):
    lines = _lines(golden_manifest)
    lines[2] = lines[2].replace("helpful assistant", "helpful assistent", 1)
    path = _write(tmp_path, lines)
    assert len(list(Manifest(path, verify=False))) == 14


def test_cli_show_refuses_a_tampered_manifest_without_traceback(golden_manifest, tmp_path):
    lines = _lines(golden_manifest)
    lines[2] = lines[2].replace("helpful assistant", "helpful assistent", 1)
    path = _write(tmp_path, lines)
    proc = run_cli("show", "P1-B1-S1-C1-U1-PT1", "--manifest", str(path))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert re.search(r"^error: .*tampered\.jsonl:3: case P1-B1-S1-C1-U1-PT2 does not match its hash", proc.stderr, re.M)
    assert "hint: recompile" in proc.stderr


def test_cli_diff_refuses_a_tampered_manifest_without_traceback(golden_manifest, tmp_path):
    lines = _lines(golden_manifest)
    lines.pop(4)
    path = _write(tmp_path, lines)
    proc = run_cli("diff", str(golden_manifest), str(path))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "tampered.jsonl:5:" in proc.stderr
