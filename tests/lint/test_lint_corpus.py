"""Every broken tree lints as expected, through the real command line.

Each case has one defect; the test asserts the exit code, that every expected finding is
reported at its file and line, that nothing else is, and that nothing crashed. Warning-only
cases must pass without --strict and fail with it. The subprocesses of all cases are started
together (a thread pool) so the corpus costs a few seconds, not one interpreter start each.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from helmbench.lint.codes import CODES
from lint_corpus import build, case_names, expected, parse_text, run_cli

CASES = case_names()


def _is_warning_only(name: str) -> bool:
    return all(CODES[code].severity == "warning" for _, _, code in expected(name) if code in CODES)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    top = tmp_path_factory.mktemp("corpus")
    roots = {name: build(name, top / name) for name in CASES}
    jobs = [(name, ()) for name in CASES] + [(name, ("--strict",)) for name in CASES if _is_warning_only(name)]
    with ThreadPoolExecutor(max_workers=(os.cpu_count() or 1) + 2) as pool:
        procs = pool.map(lambda job: run_cli("lint", *job[1], ".", cwd=roots[job[0]]), jobs)
        return {job: proc for job, proc in zip(jobs, procs)}


@pytest.mark.parametrize("name", CASES)
def test_broken_tree(name, results):
    proc = results[(name, ())]
    for stream in (proc.stdout, proc.stderr):
        assert "Traceback" not in stream
    got = {(m["path"], int(m["line"]), m["code"]) for m in parse_text(proc.stdout)}
    assert got == expected(name), proc.stdout
    if _is_warning_only(name):
        assert proc.returncode == 0, proc.stdout + proc.stderr
        strict = results[(name, ("--strict",))]
        assert strict.returncode == 1, strict.stdout + strict.stderr
        assert "Traceback" not in strict.stdout + strict.stderr
    else:
        assert proc.returncode == 1, proc.stdout + proc.stderr


def test_corpus_is_large_enough():
    assert len(CASES) >= 30


def test_every_code_is_exercised_by_a_broken_tree():
    exercised = {code for name in CASES for _, _, code in expected(name)}
    assert set(CODES) - exercised == set()
    assert exercised - set(CODES) == set(), "expected.txt names a code that is not in the catalogue"


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_code_is_documented(code):
    c = CODES[code]
    assert c.code == code and c.severity in ("error", "warning")
    assert c.summary.strip() and c.explanation.strip() and c.example.strip()
