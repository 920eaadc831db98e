"""`helmbench compile`: real trees compile, the output is a pure function of the tree, lint
errors stop it, and the read-only copy under manifests/ is always the manifest just written."""

from __future__ import annotations

import shutil
import stat
from collections import Counter
from pathlib import Path

import pytest

from helmbench.manifest import LintFailed, compile_tree, read_manifest

from ._util import GOLDEN_TREE, SHIPPED, read_lines, run_cli


def test_upstream_sample_compiles_to_112_cases(upstream, tmp_path):
    result = compile_tree(upstream, tmp_path)
    header, *cases = read_lines(result.path)
    assert header["cases"] == len(cases) == 112
    per_scenario = Counter(c["scenario"] for c in cases)
    assert per_scenario == {"P1-B1-S1": 60, "P1-B5-S1": 48, "P3-B1-S1": 4}
    assert {k: v["cases"] for k, v in header["catalog"]["scenarios"].items()} == per_scenario
    assert len({c["id"] for c in cases}) == 112
    assert read_manifest(result.path).header["cases"] == 112
    # scoring.yaml supplies the weights when there is no benchmark.yml
    assert {c["behaviour"]: c["weight"] for c in cases} == {"P1-B1": 12, "P1-B5": 10, "P3-B1": 8}
    # condition `severity:` is the published data model's name for difficulty: read as such, silently
    assert not any(d.code == "HB206" for d in result.diagnostics)
    assert {c["difficulty"] for c in cases if c["scenario"] == "P3-B1-S1"} == {0}


def test_upstream_sample_evaluations(upstream, tmp_path):
    cases = {c["scenario"]: c for c in read_lines(compile_tree(upstream, tmp_path).path)[1:]}
    assert cases["P1-B1-S1"]["evaluation"] == {"type": "list_includes", "field": "tags", "required": ["ASSISTANCE"]}
    sqe = cases["P1-B5-S1"]["evaluation"]
    assert sqe["type"] == "sqe" and [c["code"] for c in sqe["criteria"]] == ["CR1", "CR2"]
    assert all(c["text"] for c in sqe["criteria"])
    single = cases["P3-B1-S1"]["evaluation"]["criteria"]
    assert [c["code"] for c in single] == ["criteria"] and single[0]["options"] == ["PASS", "PARTIAL", "FAIL"]
    assert single[0]["scores"] == {"PASS": 1, "PARTIAL": 0, "FAIL": 0}
    assert cases["P3-B1-S1"]["request"]["response_format"] is None


def test_shipped_benchmark_compiles(tmp_path):
    result = compile_tree(SHIPPED, tmp_path)
    assert not [d for d in result.diagnostics if d.is_error]
    header, *cases = read_lines(result.path)
    assert header["cases"] == len(cases) >= 500
    assert header["benchmark"]["name"] == "HELMBench"
    ids = [c["id"] for c in cases]
    assert len(set(ids)) == len(ids)
    for case in cases:
        assert case["weight"] is not None, case["id"]
        assert case["request"]["messages"][0]["content"].strip()
    assert read_manifest(result.path).header["cases"] == len(cases)


def test_cases_are_in_natural_order(tmp_path):
    from helmbench.spec.naming import natural_key

    ids = [c["id"] for c in read_lines(compile_tree(GOLDEN_TREE, tmp_path).path)[1:]]
    assert ids == sorted(ids, key=natural_key)


def _copy_tree(dest: Path) -> Path:
    shutil.copytree(GOLDEN_TREE, dest)
    return dest


def test_byte_identical_from_other_directories_paths_and_hash_seeds(tmp_path):
    a = _copy_tree(tmp_path / "one" / "tree")
    b = _copy_tree(tmp_path / "a" / "much" / "deeper" / "place" / "benchmark")
    p1 = run_cli("compile", "tree", "--out", "build", cwd=tmp_path / "one", env={"PYTHONHASHSEED": "1"})
    assert p1.returncode == 0, p1.stderr
    out2 = tmp_path / "elsewhere" / "out"
    p2 = run_cli("compile", str(b), "--out", str(out2), cwd=Path("/"), env={"PYTHONHASHSEED": "2"})
    assert p2.returncode == 0, p2.stderr
    first = (tmp_path / "one" / "build" / "manifest.jsonl").read_bytes()
    second = (out2 / "manifest.jsonl").read_bytes()
    assert first == second
    assert str(tmp_path).encode() not in first and b"\r" not in first
    assert a.exists()


def test_read_only_copy_named_by_manifest_hash(tmp_path):
    result = compile_tree(GOLDEN_TREE, tmp_path / "build")
    h = result.header["manifest_hash"]
    assert result.copy == tmp_path / "build" / "manifests" / f"{h.removeprefix('sha256:')}.jsonl"
    assert result.copy.read_bytes() == result.path.read_bytes()
    assert stat.S_IMODE(result.copy.stat().st_mode) & 0o222 == 0, "the copy must not be writable"
    # recompiling the same tree keeps it, identical
    again = compile_tree(GOLDEN_TREE, tmp_path / "build")
    assert again.copy == result.copy and again.copy.read_bytes() == again.path.read_bytes()
    assert sorted(p.name for p in (tmp_path / "build").iterdir()) == ["manifest.jsonl", "manifests"]
    assert [p.name for p in (tmp_path / "build" / "manifests").iterdir()] == [result.copy.name]


def test_a_severity_edit_gives_a_new_immutable_copy(tree, tmp_path):
    """A severity edit keeps every case hash but not the catalog, so it is a new manifest:
    the old read-only copy stays as it was and a second one appears beside it."""
    out = tmp_path / "build"
    before = compile_tree(tree, out)
    old_bytes = before.copy.read_bytes()
    path = tree / "scenarios/P1/B1/S1--late-planning/perturbations.md"
    path.write_text(path.read_text(encoding="utf-8").replace("severity: 5", "severity: 6"), encoding="utf-8")
    after = compile_tree(tree, out)
    assert after.header["manifest_hash"] != before.header["manifest_hash"]
    assert after.copy != before.copy and before.copy.read_bytes() == old_bytes
    assert after.copy.read_bytes() == after.path.read_bytes()
    assert stat.S_IMODE(after.copy.stat().st_mode) & 0o222 == 0
    read_manifest(after.copy)


def test_cli_compile_reports_counts_and_hash(tmp_path):
    proc = run_cli("compile", str(GOLDEN_TREE), "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    h = read_lines(tmp_path / "manifest.jsonl")[0]["manifest_hash"]
    assert "compiled 14 cases from 3 scenarios" in proc.stdout and h in proc.stdout


# --- lint errors stop the compiler -------------------------------------------------------------


def _break(tree: Path) -> Path:
    path = tree / "scenarios/P1/B1/S1--late-planning/perturbations.md"
    path.write_text(path.read_text(encoding="utf-8").replace("severity: 7", "severity: 12"), encoding="utf-8")
    return path


def test_compile_refuses_a_tree_with_lint_errors(tree, tmp_path):
    _break(tree)
    with pytest.raises(LintFailed) as exc:
        compile_tree(tree, tmp_path / "build")
    assert any(d.code == "HB204" and d.is_error for d in exc.value.diagnostics)
    assert not (tmp_path / "build" / "manifest.jsonl").exists()


def test_cli_compile_refuses_and_prints_the_diagnostics(tree, tmp_path):
    _break(tree)
    out = tmp_path / "build"
    proc = run_cli("compile", str(tree), "--out", str(out))
    assert proc.returncode == 1
    assert "scenarios/P1/B1/S1--late-planning/perturbations.md:" in proc.stderr and "HB204" in proc.stderr
    assert "lint error" in proc.stderr and "Traceback" not in proc.stderr
    assert not (out / "manifest.jsonl").exists() and not (out / "manifests").exists()


def test_failed_compile_leaves_a_previous_manifest_alone(tree, tmp_path):
    out = tmp_path / "build"
    good = compile_tree(tree, out).path.read_bytes()
    _break(tree)
    with pytest.raises(LintFailed):
        compile_tree(tree, out)
    assert (out / "manifest.jsonl").read_bytes() == good


_NO_LITELLM = r"""
import runpy, sys
sys.argv = ["helmbench", *sys.argv[1:]]
try:
    runpy.run_module("helmbench", run_name="__main__")
except SystemExit as exc:
    assert not exc.code, exc.code
heavy = sorted(m for m in ("litellm", "openai", "datasette", "mkdocs") if m in sys.modules)
print("HEAVY:" + ",".join(heavy))
"""


@pytest.mark.parametrize("args", [["compile", "{tree}", "--out", "{out}"], ["list", "{tree}", "--format", "json"],
                                  ["show", "P1-B1-S1-C1-U1-PT1", "--root", "{tree}", "--json"]])
def test_manifest_commands_never_import_litellm(tmp_path, args):
    """DESIGN: lint and compile must never import litellm (~4 s, ~170 MB)."""
    import subprocess
    import sys

    argv = [a.format(tree=GOLDEN_TREE, out=tmp_path / "out") for a in args]
    proc = subprocess.run([sys.executable, "-c", _NO_LITELLM, *argv], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("HEAVY:"), proc.stdout[-300:]


def _minimal_scenario(folder: Path, conditions: list[str], perturbations: list[str]) -> None:
    folder.mkdir(parents=True)
    code = folder.name.split("--")[0].split("-")[-1]
    (folder / f"{code}.md").write_text("---\ncategory: OK\n---\n## Your job\n\nAnswer, then classify.\n")
    (folder / f"{code}.json").write_text(
        '{"type": "object", "properties": {"category": {"type": "string", "enum": ["OK", "NO"]}},'
        ' "required": ["category"], "additionalProperties": false}')
    (folder / "conditions.md").write_text("".join(f"# {c}\n## System\n\n{c} text\n\n" for c in conditions))
    (folder / "perturbations.md").write_text("".join(f"# {p}\n## User's input\n\n{p} text\n\n" for p in perturbations))


def test_natural_order_with_suffixes_and_multi_digit_codes(tmp_path):
    """P2 < P10, S1 < S1A < S2 < S10, C2 < C10, PT1 < PT1A < PT2; the reader expects the same order."""
    from helmbench.spec.naming import natural_key

    root = tmp_path / "tree"
    for name in ("P10-B1-S1", "P2-B1-S10--ten", "P2-B1-S2", "P2-B1-S1A--draft", "P2-B1-S1"):
        _minimal_scenario(root / "scenarios" / name, ["C10", "C2", "C1"], ["PT2", "PT1A", "PT1"])
    (root / "scoring.yaml").write_text("weights:\n  P2-B1: 1\n  P10-B1: 2.0\n")
    result = compile_tree(root, tmp_path / "out")
    ids = [c["id"] for c in read_lines(result.path)[1:]]
    assert len(ids) == 5 * 9
    assert ids == sorted(ids, key=natural_key)
    assert [i.rsplit("-", 2)[0] for i in ids[::9]] == ["P2-B1-S1", "P2-B1-S1A", "P2-B1-S2", "P2-B1-S10", "P10-B1-S1"]
    assert ids[:9] == [f"P2-B1-S1-{c}-{p}" for c in ("C1", "C2", "C10") for p in ("PT1", "PT1A", "PT2")]
    assert read_manifest(result.path).header["cases"] == 45
    assert {c["weight"] for c in read_lines(result.path)[1:]} == {1, 2}


def test_cli_compile_missing_folder_is_a_usage_error(tmp_path):
    proc = run_cli("compile", str(tmp_path / "nope"), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "benchmark folder not found" in proc.stderr
    assert not (tmp_path / "out").exists()
