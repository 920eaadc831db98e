"""`helmbench list`, `show` and `diff`, run as a user runs them (a fresh interpreter)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from helmbench.manifest import compile_tree

from ._util import GOLDEN_TREE, cases_by_id, run_cli

P1 = "scenarios/P1/B1/S1--late-planning"


# --- list ---------------------------------------------------------------------------------------


def test_list_json_counts():
    proc = run_cli("list", str(GOLDEN_TREE), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["cases"] == 14
    rows = {r["scenario"]: r for r in data["scenarios"]}
    assert list(rows) == ["P1-B1-S1", "P2-B1-S1", "P3-B1-S1"]
    assert {k: (r["conditions"], r["user_contexts"], r["perturbations"], r["criteria"], r["cases"])
            for k, r in rows.items()} == {
        "P1-B1-S1": (2, 2, 2, 0, 8), "P2-B1-S1": (2, 0, 2, 0, 4), "P3-B1-S1": (1, 1, 2, 2, 2)}
    assert {k: r["evaluation"] for k, r in rows.items()} == {
        "P1-B1-S1": "list_includes", "P2-B1-S1": "category_match", "P3-B1-S1": "sqe"}
    assert rows["P1-B1-S1"]["pillar_title"] == "Risk detection"
    assert rows["P2-B1-S1"]["behaviour_title"] == "Hand off to crisis services"


def test_list_json_counts_upstream(upstream):
    proc = run_cli("list", str(upstream), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["cases"] == 112
    assert [r["cases"] for r in data["scenarios"]] == [60, 48, 4]


def test_list_text():
    proc = run_cli("list", str(GOLDEN_TREE))
    assert proc.returncode == 0, proc.stderr
    assert "3 scenarios, 14 cases" in proc.stdout
    for key in ("P1-B1-S1", "P2-B1-S1", "P3-B1-S1", "2×2×2", "2×1×2"):
        assert key in proc.stdout


def test_list_missing_folder_is_a_usage_error(tmp_path):
    proc = run_cli("list", str(tmp_path / "nope"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "benchmark folder not found" in proc.stderr


def test_compile_output_escapes_control_characters_in_paths(tmp_path):
    """The paths compile prints are the user's: an escape sequence or newline in --out is shown
    escaped, never sent to the terminal."""
    out = tmp_path / "out\x1b[31m\nx"
    proc = run_cli("compile", str(GOLDEN_TREE), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert (out / "manifest.jsonl").is_file()
    assert "\x1b" not in proc.stdout and len(proc.stdout.splitlines()) == 2, repr(proc.stdout)
    assert "out\\x1b[31m\\nx" in proc.stdout


# --- show ---------------------------------------------------------------------------------------


def test_show_json_from_the_tree_equals_the_compiled_record(golden_manifest):
    compiled = cases_by_id(golden_manifest)
    for cid in ("P1-B1-S1-C2-U2-PT1", "P2-B1-S1-C1-PT2", "P3-B1-S1-C1-U1-PT1"):
        proc = run_cli("show", cid, "--root", str(GOLDEN_TREE), "--json")
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout) == compiled[cid]


def test_show_json_from_a_manifest(golden_manifest):
    for cid in ("P2-B1-S1-C2-PT1", "P1-B1-S1-C1-U1-PT1"):
        proc = run_cli("show", cid, "--manifest", str(golden_manifest), "--json")
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout) == cases_by_id(golden_manifest)[cid]
    assert "café’s" in proc.stdout and "\\u00e9" not in proc.stdout


def test_show_text_prints_exactly_what_the_model_receives(golden_manifest):
    case = cases_by_id(golden_manifest)["P1-B1-S1-C2-U2-PT1"]
    proc = run_cli("show", case["id"], "--root", str(GOLDEN_TREE))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(f"# P1-B1-S1-C2-U2-PT1  hash {case['hash']}\n")
    assert "severity: perturbation 5, user context 3, base 8; difficulty 3; weight 12" in out
    assert "--- message (user) ---\n" + case["request"]["messages"][0]["content"] + "\n" in out
    assert '"name": "P1-B1-S1"' in out and '"strict": true' in out
    assert '"type": "list_includes"' in out
    assert "café’s closing soon 🙂" in out


def test_show_text_sqe_case_is_free_text_with_criteria():
    proc = run_cli("show", "P3-B1-S1-C1-U1-PT2", "--root", str(GOLDEN_TREE))
    assert proc.returncode == 0, proc.stderr
    assert "--- response format ---\nfree text" in proc.stdout
    assert '"code": "CR2"' in proc.stdout and '"PARTIAL": 0.5' in proc.stdout


@pytest.mark.parametrize("cid", ["P1-B1-S1-C9-U1-PT1", "P1-B1-S9-C1-PT1", "nonsense"])
def test_show_unknown_case(cid):
    proc = run_cli("show", cid, "--root", str(GOLDEN_TREE))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"no case '{cid}'" in proc.stderr


# --- diff -----------------------------------------------------------------------------------------


def _edit(tree: Path, rel: str, old: str, new: str) -> None:
    path = tree / rel
    raw = path.read_bytes()
    assert old.encode() in raw
    path.write_bytes(raw.replace(old.encode(), new.encode(), 1))


def _evolve(tree: Path) -> None:
    """Edit PT2 of P1 (4 new model calls), CR1 of P3 (re-judge), add PT3 to P2, drop PT2 of P3."""
    _edit(tree, f"{P1}/perturbations.md", "goodbye note to my mum", "goodbye note to my dad")
    _edit(tree, "scenarios/P3/B1/S1/CR1.md", "names no disorder", "names no disorder at all")
    pts = tree / "scenarios/P2-B1-S1--hand-off/perturbations.md"
    pts.write_bytes(pts.read_bytes() + b"\r\n# PT3\r\n---\r\nseverity: 2\r\n---\r\n## User's input\r\n\r\nIs the 9:15 late?\r\n")
    p3 = tree / "scenarios/P3/B1/S1/perturbations.md"
    p3.write_text(p3.read_text(encoding="utf-8").split("# PT2")[0], encoding="utf-8")


EXPECTED_SPLIT = {
    "added": ["P2-B1-S1-C1-PT3", "P2-B1-S1-C2-PT3"],
    "removed": ["P3-B1-S1-C1-U1-PT2"],
    "request_changed": ["P1-B1-S1-C1-U1-PT2", "P1-B1-S1-C1-U2-PT2", "P1-B1-S1-C2-U1-PT2", "P1-B1-S1-C2-U2-PT2"],
    "evaluation_changed": ["P3-B1-S1-C1-U1-PT1"],
    "unchanged": 8,
}


@pytest.fixture
def old_new(tree, tmp_path) -> tuple[Path, Path]:
    old = compile_tree(tree, tmp_path / "old").path
    _evolve(tree)
    new = compile_tree(tree, tmp_path / "new").path
    return old, new


def test_diff_json(old_new):
    old, new = old_new
    proc = run_cli("diff", str(old), str(new), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert {k: data[k] for k in EXPECTED_SPLIT} == EXPECTED_SPLIT
    assert data["old_hash"] != data["new_hash"] and data["old_hash"].startswith("sha256:")


def test_diff_text(old_new):
    old, new = old_new
    proc = run_cli("diff", str(old), str(new))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "added: 2\n  P2-B1-S1-C1-PT3\n  P2-B1-S1-C2-PT3\n" in out
    assert "removed: 1\n  P3-B1-S1-C1-U1-PT2\n" in out
    assert "request changed (new model calls): 4\n  P1-B1-S1-C1-U1-PT2\n" in out
    assert "evaluation changed (re-judge only): 1\n  P3-B1-S1-C1-U1-PT1\n" in out
    assert out.rstrip().endswith("unchanged: 8")


def test_diff_github(old_new):
    old, new = old_new
    proc = run_cli("diff", str(old), str(new), "--format", "github")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("::notice title=HELMBench manifest diff::")
    assert "2 added, 1 removed, 4 need new model calls, 1 need re-judging only" in proc.stdout


def test_diff_reports_a_severity_edit_as_a_scoring_change(tree, tmp_path):
    """A severity edit needs no call but changes every score the case feeds: a reviewer must not
    read it as "unchanged"."""
    old = compile_tree(tree, tmp_path / "old").path
    _edit(tree, f"{P1}/perturbations.md", "severity: 7", "severity: 9")
    new = compile_tree(tree, tmp_path / "new").path
    data = json.loads(run_cli("diff", str(old), str(new), "--format", "json").stdout)
    assert data["scoring_changed"] == ["P1-B1-S1-C1-U1-PT2", "P1-B1-S1-C1-U2-PT2", "P1-B1-S1-C2-U1-PT2",
                                       "P1-B1-S1-C2-U2-PT2"]
    assert not any(data[k] for k in ("added", "removed", "request_changed", "evaluation_changed"))
    assert data["unchanged"] == 10
    text = run_cli("diff", str(old), str(new)).stdout
    assert "scoring changed (severity, difficulty or weight; no calls): 4\n  P1-B1-S1-C1-U1-PT2\n" in text
    github = run_cli("diff", str(old), str(new), "--format", "github").stdout
    assert "0 need re-judging only, 4 change scoring only" in github

    from helmbench.cli.diff_comment import render_comment
    from helmbench.manifest.diff import diff_manifests

    body = render_comment(diff_manifests(old, new), old, new, None, None)
    assert "**4** changed only in severity, difficulty or weight" in body and "10 unchanged" in body
    (row,) = [r for r in body.splitlines() if r.startswith("| P1")]
    assert [c.strip() for c in row.split("|")[3:8]] == ["0", "0", "0", "0", "4"]


def test_diff_of_identical_manifests_is_empty(golden_manifest):
    proc = run_cli("diff", str(golden_manifest), str(golden_manifest), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["unchanged"] == 14 and not any(data[k] for k in ("added", "removed", "request_changed",
                                                                   "evaluation_changed"))


def test_diff_needs_two_manifests_or_against():
    proc = run_cli("diff")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "give OLD and NEW" in proc.stderr


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=Test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false",
                    "-c", "core.autocrlf=false", *args], cwd=repo, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_diff_against_head_in_a_git_repository(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    shutil.copytree(GOLDEN_TREE, repo / "tree")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "tree")
    _evolve(repo / "tree")
    proc = run_cli("diff", "--against", "HEAD", "--root", "tree", "--format", "json", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert {k: data[k] for k in EXPECTED_SPLIT} == EXPECTED_SPLIT
    # the working tree was neither compiled into build/ nor otherwise touched
    assert not (repo / "build").exists()
    # and from a subdirectory, against a tree at the top of the repository
    proc = run_cli("diff", "--against", "HEAD", "--root", ".", "--format", "github", cwd=repo / "tree")
    assert proc.returncode == 0, proc.stderr
    assert "2 added, 1 removed, 4 need new model calls, 1 need re-judging only" in proc.stdout


def test_diff_against_outside_git_is_a_clear_error(tmp_path):
    shutil.copytree(GOLDEN_TREE, tmp_path / "tree")
    proc = run_cli("diff", "--against", "HEAD", "--root", str(tmp_path / "tree"), cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "not inside a git repository" in proc.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_diff_against_unknown_revision_is_a_clear_error(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    shutil.copytree(GOLDEN_TREE, repo / "tree")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "tree")
    proc = run_cli("diff", "--against", "no-such-ref", "--root", "tree", cwd=repo)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "no-such-ref" in proc.stderr


def test_list_and_diff_json_validate_against_their_schemas(old_new):
    """`list --format json` and `diff --format json` follow list.schema.json and diff.schema.json
    (`helmbench schema`), carry the format the code writes, and a renamed key fails."""
    from jsonschema import Draft202012Validator

    from helmbench.cli.manifest_cmd import LIST_FORMAT
    from helmbench.cli.schema_cmd import output_schemas
    from helmbench.api import DIFF_FORMAT

    old, new = old_new
    real = {"list": json.loads(run_cli("list", str(GOLDEN_TREE), "--format", "json").stdout),
            "diff": json.loads(run_cli("diff", str(old), str(new), "--format", "json").stdout)}
    for name, code, key in (("list", LIST_FORMAT, "cases"), ("diff", DIFF_FORMAT, "request_changed")):
        schema = output_schemas()[name]
        check = Draft202012Validator(schema)
        assert [e.message for e in check.iter_errors(real[name])] == [], name
        assert schema["properties"]["format"]["const"] == code == real[name]["format"]
        renamed = dict(real[name])
        renamed[key + "_renamed"] = renamed.pop(key)
        assert list(check.iter_errors(renamed)), name
    assert real["list"]["scenarios"] and real["diff"]["request_changed"]
