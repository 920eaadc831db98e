"""Every broken tree lints as expected through the real command, in-process.

Each case has one defect; the test asserts the exit code, that every expected finding is
reported at its file and line, that nothing else is, and that nothing crashed. Warning-only
cases must pass without --strict and fail with it; note-only cases pass with it too. The command runs in-process (Typer's
CliRunner: the same parsing, rendering and exit codes without an interpreter start per case);
a few subprocess smoke tests check the real `python -m helmbench` entry point the way CI and
pre-commit call it.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from helmbench.cli import app
from helmbench.lint.codes import CODES
from hostile_corpus import CASES as HOSTILE
from lint_corpus import build, case_names, expected, expected_located, parse_text, run_subprocess

CASES = case_names()
SMOKE = ["duplicate-key", "prompt-tag-typo", "invalid-json"]  # an error, a warning-only case, a JSON file
runner = CliRunner()


def _severities(name: str) -> set[str]:
    return {CODES[code].severity for _, _, code in expected(name) if code in CODES}


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    top = tmp_path_factory.mktemp("corpus")
    return {name: build(name, top / name) for name in CASES}


def _lint(*args):
    """Lint in-process; the caller has made the tree the current folder (text paths are relative to it)."""
    result = runner.invoke(app, ["lint", *map(str, args)])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.stdout, result.stderr


def _check(name, lint) -> None:
    code, stdout, stderr = lint(".")
    assert "Traceback" not in stdout + stderr
    found = parse_text(stdout)
    got = {(m["path"], int(m["line"]), m["code"]) for m in found}
    assert got == expected(name), stdout
    columns = {(m["path"], int(m["line"]), m["code"]): int(m["col"]) for m in found}
    for path, line, col, rule in expected_located(name):
        if col is not None:
            assert columns[(path, line, rule)] == col, stdout
    if "error" not in _severities(name):  # warnings fail only with --strict, notes never
        assert code == 0, stdout + stderr
        strict_code, strict_out, strict_err = lint("--strict", ".")
        assert strict_code == (1 if "warning" in _severities(name) else 0), strict_out + strict_err
        assert "Traceback" not in strict_out + strict_err
    else:
        assert code == 1, stdout + stderr


@pytest.mark.parametrize("name", CASES)
def test_broken_tree(name, roots, monkeypatch):
    monkeypatch.chdir(roots[name])
    _check(name, _lint)


@pytest.mark.parametrize("name", SMOKE)
def test_broken_tree_subprocess_smoke(name, roots):
    def lint(*args):
        proc = run_subprocess("lint", *args, cwd=roots[name])
        return proc.returncode, proc.stdout, proc.stderr

    _check(name, lint)


def test_corpus_is_large_enough():
    assert len(CASES) >= 30


def test_every_code_is_exercised_by_a_broken_tree():
    exercised = {code for name in CASES for _, _, code in expected(name)}
    exercised |= {code for case in HOSTILE for _, _, code in case.expected}
    assert set(CODES) - exercised == set()
    assert exercised - set(CODES) == set(), "expected.txt names a code that is not in the catalogue"


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_code_is_documented(code):
    c = CODES[code]
    assert c.code == code and c.severity in ("error", "warning", "note")
    assert c.summary.strip() and c.explanation.strip() and c.example.strip()
