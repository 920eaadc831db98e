"""Hostile trees are findings, never a stall, a traceback or a read outside the tree.

Each case of hostile_corpus.py is linted in-process through the real command (Typer's
CliRunner) in every output format: the exact expected findings, exit 1, no exception, no text
from outside the tree, and no control character reaching the terminal or forging a GitHub
workflow command. Compile refuses every tree lint rejects; the run stage's answer validator
never retrieves a `$ref`. Timing is measured by benchmarks/lint_hostile.py, not here.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import threading

import pytest
from typer.testing import CliRunner

from helmbench.cli import app
from helmbench.lint.codes import CODES
from hostile_corpus import CASES, EVIL_KEY, FORGED_FOLDER, S1, SECRET, build, by_name
from lint_corpus import parse_text

runner = CliRunner()
GITHUB_LINE = re.compile(r"^::(error|warning) file=[^,\n]*,line=\d+,col=\d+(,endLine=\d+,endColumn=\d+)?,title=HB\d{3}::[^\n]*$")
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def unescape(shown: str) -> str:
    """Undo the renderer's escapes of unsafe characters (`\\n`, `\\x1b`, `\\u202e`)."""
    return re.sub(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4}|[nrt])",
                  lambda m: m.group().encode("ascii").decode("unicode_escape"), shown)


def lint(root, *args):
    """Lint `root` in-process from inside it: text paths are relative to the current folder."""
    with contextlib.chdir(root):
        result = runner.invoke(app, ["lint", *args, "."])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_tree_is_a_finding(case, tmp_path):
    root = build(case, tmp_path)
    result = lint(root)
    got = {(unescape(m["path"]), int(m["line"]), m["code"]) for m in parse_text(result.stdout)}
    assert got == case.expected, result.stdout
    assert result.exit_code == (1 if case.expected else 0), result.stdout + result.stderr
    assert all(code in CODES for _, _, code in case.expected)
    outputs = {"text": result, "github": lint(root, "--format", "github"), "json": lint(root, "--format", "json")}
    for fmt, out in outputs.items():
        assert SECRET not in out.stdout + out.stderr
        assert not UNSAFE.search(out.stdout + out.stderr), f"{fmt}: {out.stdout!r}"
    as_json = json.loads(outputs["json"].stdout)
    assert {(d["path"], d["line"], d["code"]) for d in as_json["diagnostics"]} == case.expected
    lines = outputs["github"].stdout.splitlines()
    assert len(lines) == len(case.expected) and all(GITHUB_LINE.match(l) for l in lines), lines


@pytest.mark.parametrize("name", [c.name for c in CASES if c.expected and not c.large])
def test_compile_refuses_what_lint_rejects(name, tmp_path):
    from helmbench.manifest import LintFailed, compile_tree

    root = build(by_name(name), tmp_path)
    with pytest.raises(LintFailed):
        compile_tree(root, tmp_path / "build")
    assert not (tmp_path / "build" / "manifest.jsonl").exists()


def test_control_characters_cannot_forge_workflow_commands(tmp_path):
    root = build(by_name("control-characters"), tmp_path)
    text = lint(root).stdout
    github = lint(root, "--format", "github").stdout
    for out in (text, github):
        assert not any(line.startswith("::add-mask") or line.startswith("::error file=x") for line in out.splitlines())
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "S9\\n::error file=x::forged\\n::add-mask::pwned\\x1b[2J" in text  # visible, escaped
    assert "S9%0A%3A%3Aerror file=x%3A%3Aforged" in github  # GitHub's own escapes in a property
    assert "\\x1b]0;pwned\\x07colour\\u202e" in text
    as_json = json.loads(lint(root, "--format", "json").stdout)
    assert {d["path"] for d in as_json["diagnostics"]} >= {f"scenarios/P1/B1/{FORGED_FOLDER}"}
    assert any(EVIL_KEY in d["message"] for d in as_json["diagnostics"])  # JSON keeps the data, escaped by JSON


def test_a_character_yaml_refuses_is_located_and_the_rest_is_still_linted(tmp_path):
    """PyYAML's reader refuses the whole text before parsing; each file is one HB101 at the character
    (its code point named, since editors hide it), every other finding is still there, and compile
    refuses with the same words."""
    from helmbench.manifest import LintFailed, compile_tree

    root = build(by_name("yaml-escape-in-component"), tmp_path)
    by_name("yaml-bell-in-models-comment").make(root)
    by_name("yaml-control-in-scenario").make(root)
    (root / S1 / "conditions.md").write_text(
        (root / S1 / "conditions.md").read_text().replace("difficulty: 2\n", "difficulty: 2\ndifficulti: 3\n", 1))
    found = {(d["path"], d["line"], d["col"], d["code"]): d["message"]
             for d in json.loads(lint(root, "--format", "json").stdout)["diagnostics"]}
    assert set(found) == {("models.yml", 1, 37, "HB101"), (f"{S1}/perturbations.md", 3, 15, "HB101"),
                          (f"{S1}/S1.md", 2, 16, "HB101"), (f"{S1}/conditions.md", 5, 1, "HB201")}, found
    assert "U+0007" in found[("models.yml", 1, 37, "HB101")]
    assert "U+001B" in found[(f"{S1}/perturbations.md", 3, 15, "HB101")]
    assert "special characters" not in " ".join(found.values())  # PyYAML's words stay out
    github = lint(root, "--format", "github").stdout.splitlines()
    assert len(github) == 4 and all(GITHUB_LINE.match(l) for l in github), github
    with pytest.raises(LintFailed) as refused:
        compile_tree(root, tmp_path / "build")
    assert {(d.path, d.line, d.col, d.code): d.message for d in refused.value.diagnostics if d.is_error} == found


def test_yaml_read_outside_the_tree_reports_a_refused_character_too(tmp_path):
    """Readers outside the tree's loader (a models file passed to `run`, a site's mkdocs.yml, the
    crisis registry) get the same YamlError, never PyYAML's ReaderError."""
    from helmbench.spec.yamlio import YamlError, load_yaml

    for text, where in [("a: 1\n# \x07\n", (2, 3)), ("a: 1\r\nb: \x7f\r\n", (2, 4)), ("a: \ud800\n", (1, 4))]:
        with pytest.raises(YamlError) as exc:
            load_yaml(text)
        assert (exc.value.line, exc.value.col, exc.value.code) == (*where, "HB101")
    with pytest.raises(YamlError) as exc:
        load_yaml("x: 1\n\x1b\n", line_offset=4)
    assert (exc.value.line, exc.value.col) == (6, 1)
    with pytest.raises(YamlError):
        load_yaml("a: \x07\n", inert_tags=[])
    from helmbench.errors import HelmbenchError
    from helmbench.run.selection import load_models_file

    models = tmp_path / "models.yml"
    models.write_text("marking_model: openai/gpt-4o-mini # \x07\nmodels: []\n", encoding="utf-8")
    with pytest.raises(HelmbenchError, match=r"models\.yml:1:37: .*U\+0007"):
        load_models_file(models)


def test_list_escapes_titles(tmp_path):
    root = build(by_name("symlink-inside"), tmp_path)
    path = root / S1 / "S1.md"
    text = re.sub(r"(?m)^title: .*\n", "", path.read_text())
    path.write_text(text.replace("category: ASSISTANCE\n", 'category: ASSISTANCE\ntitle: "\\e[2Jwiped\\u202e"\n'))
    result = runner.invoke(app, ["list", str(root)])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout
    assert "\\x1b[2Jwiped" in result.stdout


def test_show_escapes_the_prompt_but_keeps_its_lines(tmp_path):
    root = build(by_name("symlink-inside"), tmp_path)
    path = root / S1 / "perturbations.md"
    path.write_text(path.read_text().replace("Need to make", "\x1b[2J\u202eNeed to make", 1))
    case_id = "P1-B1-S1-C1-U1-PT1"
    result = runner.invoke(app, ["show", case_id, "--root", str(root)])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout
    assert "\\x1b[2J\\u202e" in result.stdout and "\n--- message (user) ---\n" in result.stdout


def test_a_tree_reads_at_most_max_files(tmp_path, monkeypatch):
    import helmbench.spec.loader as loader

    monkeypatch.setattr(loader, "MAX_FILES", 5)
    root = build(by_name("symlink-inside"), tmp_path)
    result = lint(root)
    over = [m for m in parse_text(result.stdout) if m["code"] == "HB152"]
    assert len(over) == 1 and "more than 5 files" in over[0]["msg"], result.stdout
    assert result.exit_code == 1


def test_hostile_codes_are_documented_with_examples():
    hostile = {code for c in CASES for _, _, code in c.expected if code.startswith("HB15")}
    assert hostile == {f"HB15{i}" for i in range(7)}
    for code in hostile:
        assert CODES[code].example.strip() and CODES[code].severity == "error"


@pytest.mark.parametrize("ref", ["REMOTE", "/etc/hostname", "file:///etc/hostname", "other.json"])
def test_run_validator_never_retrieves_a_ref(ref):
    """A manifest edited by hand still cannot make the run stage fetch a URL or read a file."""
    from helmbench.run.evaluate.parse import OutputError, parse_output

    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"type": "integer"}')

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/s.json" if ref == "REMOTE" else ref
        schema = {"type": "object", "properties": {"a": {"$ref": url}}}
        rf = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
        with pytest.raises(OutputError, match="cannot be used"):
            parse_output('{"a": 1}', rf)
    finally:
        server.shutdown()
        server.server_close()
    assert hits == []


def test_run_validator_reports_an_invalid_pattern():
    from helmbench.run.evaluate.parse import OutputError, parse_output

    rf = {"type": "json_schema", "json_schema": {"name": "x", "schema": {
        "type": "object", "properties": {"a": {"type": "string", "pattern": "([A-Z"}}}}}
    with pytest.raises(OutputError, match="cannot be used"):
        parse_output('{"a": "x"}', rf)
