"""`helmbench lint` as CI and pre-commit use it: exit codes, output formats, no crash."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from helmbench.lint.codes import CODES
from lint_corpus import BASE, BROKEN, UPSTREAM, build, parse_text, run_cli

GITHUB_LINE = re.compile(
    r"^::(error|warning) file=([^,]+),line=(\d+),col=(\d+),endLine=\d+,endColumn=\d+,title=(HB\d{3})::(.+)$")


def test_clean_tree_exits_0_even_with_strict(clean_tree):
    proc = run_cli("lint", "--strict", clean_tree)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert "0 error(s), 0 warning(s)" in proc.stderr


def test_text_lines_have_path_line_col_code_and_hint(broken_tree):
    root = broken_tree("unknown-field")
    proc = run_cli("lint", ".", cwd=root)
    lines = proc.stdout.splitlines()
    m = parse_text(proc.stdout)[0]
    assert m["path"] == "scenarios/P1/B1/S1--late-planning/perturbations.md"
    assert (m["line"], m["col"], m["code"]) == ("3", "1", "HB201")
    assert lines[1] == "    hint: did you mean `severity`?"


def test_text_paths_are_relative_to_the_current_folder(tmp_path):
    """`path:line:col` opens with a click: from a sibling folder, from the parent, from inside."""
    build("unknown-field", tmp_path / "bench")
    (tmp_path / "elsewhere").mkdir()
    rel = "scenarios/P1/B1/S1--late-planning/perturbations.md"
    for cwd, arg, prefix in [(tmp_path, "bench", "bench/"), (tmp_path / "elsewhere", "../bench", "../bench/"),
                             (tmp_path / "bench/scenarios", "..", "../")]:
        proc = run_cli("lint", arg, cwd=cwd)
        paths = [m["path"] for m in parse_text(proc.stdout)]
        assert paths == [prefix + rel], proc.stdout
        assert (cwd / paths[0]).is_file()
    doc = json.loads(run_cli("lint", "--format", "json", "../bench", cwd=tmp_path / "elsewhere").stdout)
    assert doc["root"] == "../bench" and doc["diagnostics"][0]["path"] == rel


def test_all_findings_are_collected(tmp_path):
    """Three defects in three files: all three are reported in one run."""
    root = build("unknown-field", tmp_path / "t")
    shutil.copy(BROKEN / "duplicate-model/tree/models.yml", root / "models.yml")
    (root / "scenarios/P1/B1/S1--late-planning/S1.json").unlink()
    proc = run_cli("lint", root)
    assert {m["code"] for m in parse_text(proc.stdout)} == {"HB201", "HB605", "HB507"}
    assert proc.returncode == 1


def test_github_format_annotations_use_repo_relative_paths(tmp_path):
    build("prompt-tag-typo", tmp_path / "bench")
    (tmp_path / "bench/models.yml").unlink()
    shutil.copy(BASE / "models.yml", tmp_path / "bench/models.yml")
    (tmp_path / "bench/scenarios/P1/B1/S2--judged/CR2.md").write_text("---\npass_values: [OK]\n---\nx\n")
    proc = run_cli("lint", "--format", "github", "bench", cwd=tmp_path)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines and all(GITHUB_LINE.match(l) for l in lines), proc.stdout
    found = {(m[1], m[2], m[5]) for m in map(GITHUB_LINE.match, lines)}
    assert ("warning", "bench/scenarios/P1/B1/S1--late-planning/S1.md", "HB504") in found
    assert ("error", "bench/scenarios/P1/B1/S2--judged/CR2.md", "HB506") in found
    assert proc.stderr == ""  # annotations only, no summary mixed in


@pytest.mark.parametrize("where", ["git-sub", "git-inside-tree", "workspace-sub"])
def test_github_paths_start_at_the_repository_top_whatever_folder_lint_runs_in(tmp_path, monkeypatch, where):
    """A step with `working-directory: sub`, or lint run from inside the tree: GitHub resolves an annotation's
    file from the top of the checkout (a .git folder, or the workflow's GITHUB_WORKSPACE)."""
    repo = tmp_path / "repo"
    build("prompt-tag-typo", repo / "sub" / "bench")
    if where.startswith("git"):
        (repo / ".git").mkdir()
    else:
        monkeypatch.setenv("GITHUB_WORKSPACE", str(repo))
    args, cwd = (["bench"], repo / "sub") if where.endswith("sub") else ([], repo / "sub" / "bench" / "scenarios")
    proc = run_cli("lint", "--format", "github", *args, cwd=cwd)
    files = {m[2] for m in map(GITHUB_LINE.match, proc.stdout.splitlines()) if m}
    assert "sub/bench/scenarios/P1/B1/S1--late-planning/S1.md" in files, proc.stdout
    assert all(f.startswith("sub/bench/") for f in files), files


def test_github_format_escapes_commas_and_newlines():
    from helmbench.diagnostics import Diagnostic
    from helmbench.cli.lint_render import github

    out = github([Diagnostic("a,b:c.md", 2, 3, "HB101", "line one\nline two 100%", "error", None)], "x/")
    assert out == "::error file=x/a%2Cb%3Ac.md,line=2,col=3,endLine=2,endColumn=3,title=HB101::line one%0Aline two 100%25"


def test_github_format_carries_the_token_extent_and_the_parser_position():
    from helmbench.diagnostics import Diagnostic
    from helmbench.cli.lint_render import github

    d = Diagnostic("S1.md", 6, 13, "HB101", "unclosed", "error", None, 6, 14, ((7, 1, "the parser noticed here"),))
    assert github([d]) == ("::error file=S1.md,line=6,col=13,endLine=6,endColumn=14,title=HB101::"
                           "unclosed (the parser noticed here at line 7, column 1)")


def test_json_format_shape(broken_tree):
    proc = run_cli("lint", "--format", "json", broken_tree("no-benchmark-yml-no-weight"))
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert set(doc) == {"format", "root", "errors", "warnings", "notes", "diagnostics"}
    assert (doc["errors"], doc["warnings"]) == (1, 1)
    for d in doc["diagnostics"]:
        assert set(d) == {"path", "line", "col", "end_line", "end_col", "code", "message", "severity", "hint",
                          "related"}
        assert (d["end_line"], d["end_col"]) >= (d["line"], d["col"])
        assert d["code"] in CODES and d["severity"] == CODES[d["code"]].severity
    assert [d["code"] for d in doc["diagnostics"]] == ["HB601", "HB604"]


def test_missing_folder_is_a_usage_error(tmp_path):
    proc = run_cli("lint", tmp_path / "nope")
    assert proc.returncode == 2
    assert "benchmark folder not found" in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_file_instead_of_folder_is_a_usage_error(tmp_path):
    (tmp_path / "f.yml").write_text("x: 1\n")
    proc = run_cli("lint", tmp_path / "f.yml")
    assert proc.returncode == 2 and "not a folder" in proc.stderr


def test_unknown_format_is_a_usage_error(clean_tree):
    proc = run_cli("lint", "--format", "xml", clean_tree)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stdout + proc.stderr


def test_folder_without_scenarios_is_a_finding_not_a_crash(tmp_path):
    proc = run_cli("lint", tmp_path)
    assert proc.returncode == 1
    assert "HB310" in proc.stdout and "Traceback" not in proc.stderr


def test_summary_line_escapes_control_characters_in_the_root(tmp_path):
    """The folder name reaches the terminal in the summary too: a newline or an escape sequence
    in it is shown escaped, as it is in the findings above it."""
    root = tmp_path / "bench\n\x1b[31mred"
    root.mkdir()
    proc = run_cli("lint", root.name, cwd=tmp_path)
    assert proc.returncode == 1
    assert "\x1b" not in proc.stderr and proc.stderr.count("\n") == 1, repr(proc.stderr)
    assert "bench\\n\\x1b[31mred: 1 error(s)" in proc.stderr


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="upstream sample not present")
def test_upstream_sample_has_no_errors():
    proc = run_cli("lint", "--format", "json", UPSTREAM)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and doc["errors"] == 0, proc.stdout
    codes = {d["code"] for d in doc["diagnostics"]}
    # the sample has no titles; its conditions' `severity:` is the published format, accepted silently (no HB206)
    assert codes == {"HB601", "HB607", "HB504", "HB603", "HB318"}
    # untitled scenarios are the authors' way (MCSQE.md has no frontmatter): notes, which `--strict` lets pass
    assert {(d["path"], d["severity"]) for d in doc["diagnostics"] if d["code"] == "HB318"} == {
        ("scenarios/P1/B1/S1/S1.md", "note"), ("scenarios/P1/B5/S1/MCSQE.md", "note"), ("scenarios/P3/B1/S1/S1.md", "note")}
    assert doc["notes"] == 3 and doc["warnings"] == 8  # HB601, HB607, HB504 and five HB603
    tag = [d for d in doc["diagnostics"] if d["code"] == "HB504"]
    assert [(d["path"], d["line"]) for d in tag] == [("scenarios/P1/B1/S1/S1.md", 27)]
    assert "META_ENQUIRY" in tag[0]["message"] and "META_INQUIRY" in tag[0]["message"]
    weights = sorted(d["line"] for d in doc["diagnostics"] if d["code"] == "HB603")
    assert weights == [7, 8, 9, 11, 13]  # P1-B2, P1-B3, P1-B4, P2-B2, P4-B1: no scenarios


def test_lint_never_imports_litellm(clean_tree):
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['helmbench', 'lint', {str(clean_tree)!r}]\n"
        "try:\n"
        "    runpy.run_module('helmbench', run_name='__main__')\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "heavy = [m for m in ('litellm', 'openai', 'datasette', 'mkdocs', 'phonenumbers') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )  # phonenumbers: only a tree with a crisis-service registry (this one has none) needs its metadata
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_rules_lists_every_code_with_explanation_and_example():
    proc = run_cli("rules")
    assert proc.returncode == 0
    for c in CODES.values():
        assert f"{c.code} ({c.severity}) {c.summary}" in proc.stdout
        assert c.explanation in proc.stdout
    one = run_cli("rules", "HB504")
    assert one.stdout.startswith("HB504 (warning)") and "META_ENQUIRY" in one.stdout
    assert run_cli("rules", "HB999").returncode == 2


@pytest.mark.slow  # lints the 80-odd trees of the corpus: about 10 s
def test_lint_json_of_every_broken_tree_validates_against_lint_schema(tmp_path):
    """`lint --format json` follows lint.schema.json (`helmbench schema`) on every case of the broken-tree corpus
    (errors, warnings, notes, hints, related places), carries the format the code writes, and a renamed key fails."""
    from jsonschema import Draft202012Validator

    from helmbench.cli.schema_cmd import output_schemas
    from helmbench.cli.lint_render import LINT_FORMAT

    schema = output_schemas()["lint"]
    check = Draft202012Validator(schema)
    seen: set[str] = set()
    docs = []
    for case in sorted(p.name for p in BROKEN.iterdir() if p.is_dir()):
        doc = json.loads(run_cli("lint", "--format", "json", str(build(case, tmp_path / case))).stdout)
        assert [e.message for e in check.iter_errors(doc)] == [], case
        docs.append(doc)
        seen |= {d["severity"] for d in doc["diagnostics"]} | {"hint" for d in doc["diagnostics"] if d["hint"]} | {
            "related" for d in doc["diagnostics"] if d["related"]}
    assert seen >= {"error", "warning", "hint", "related"}, seen
    assert schema["properties"]["format"]["const"] == LINT_FORMAT == docs[0]["format"]
    renamed = json.loads(json.dumps(next(d for d in docs if d["diagnostics"])))
    renamed["diagnostics"][0]["column"] = renamed["diagnostics"][0].pop("col")
    assert list(check.iter_errors(renamed))
