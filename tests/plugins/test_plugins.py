"""Evaluators and lint rules as plugins: the built-ins are plugins found through HELMBench's own entry
points, and a third-party package installed for real (the published plugin page's code, built into a
package outside the repository: conftest.page_package; found through the `helmbench` entry-point group)
adds an evaluation type and a lint rule that work through lint, compile, run, report and publish."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plugin_trees import REPO, fresh_registry, page_package, pip_target, regex_tree
from tests.inprocess import helmbench as run_in_process

BUILTIN_TYPES = {"category_match", "list_includes", "tag_threshold", "sqe", "crisis_resources"}


def helmbench(env: dict, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "helmbench", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def in_process(env: dict, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`helmbench ARGS` in this process (tests/inprocess.py), with the plugin folders of `env`'s PYTHONPATH
    on sys.path and the registry reloaded, as `helmbench` above would see them: the plugins are found the same
    way (their entry points), without a fresh interpreter importing litellm and mkdocs for every command.
    `test_plugins_command_text_names_package_and_version` keeps the separate process with PYTHONPATH."""
    paths = [Path(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p) != REPO]
    undo = fresh_registry(*paths)
    try:
        return run_in_process(*args, cwd=cwd, env=env)
    finally:
        undo()


def cli(*args: str):
    from helmbench.cli import app

    return CliRunner().invoke(app, list(args))


def fake_dist(site: Path, name: str, module: str, source: str, version: str = "0.0.1") -> Path:
    """A minimal installed distribution (dist-info with an entry point) whose module is `source`."""
    dist = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(f"[helmbench]\n{module.removeprefix('helmbench_')} = {module}\n",
                                           encoding="utf-8")
    (site / f"{module}.py").write_text(source, encoding="utf-8")
    return site


# --- what is loaded ---------------------------------------------------------------------------


def test_the_built_in_evaluators_and_rules_are_plugins_and_listed():
    out = cli("plugins", "--format", "json")
    assert out.exit_code == 0, out.output
    loaded = json.loads(out.output)
    assert {t for p in loaded for t in p["evaluators"]} == BUILTIN_TYPES
    assert all(p["source"] == "built-in" for p in loaded), "a third-party plugin is installed in the test venv"
    # found through the entry points of helmbench's own distribution, exactly as a third party's are
    own = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="helmbench") if ep.dist.name == "helmbench"}
    assert {p["name"]: p["module"] for p in loaded} == own == {
        "helmbench-evaluators": "helmbench.run.evaluate.builtin", "helmbench-lint-rules": "helmbench.lint.rules",
        "crisis-resources": "helmbench.crisis"}
    rules = {r for p in loaded for r in p["rules"]}
    assert {"evaluation_against_schema", "schema_safety", "evaluator_checks"} <= rules


def test_the_plugin_is_found_through_its_entry_point_only(regex_site):
    from helmbench.plugins import registry

    assert "regex_match" not in registry.evaluation_types()
    undo = fresh_registry(regex_site)
    try:
        assert "helmbench_regex" not in sys.modules
        (ep,) = [e for e in importlib.metadata.entry_points(group="helmbench") if e.name == "regex"]
        assert (ep.dist.name, ep.dist.version, ep.value) == ("helmbench-regex", "0.1.0", "helmbench_regex")
        assert registry.evaluator("regex_match").field == "one"
        (info,) = [p for p in registry.plugins() if p.name == "regex"]
        assert (info.source, info.version, info.evaluators, info.rules) == \
            ("helmbench-regex", "0.1.0", ["regex_match"], ["invalid_patterns"])
        assert sorted(info.codes) == ["RX101", "RX102"]
    finally:
        undo()
    assert "regex_match" not in registry.evaluation_types()


def test_plugins_command_text_names_package_and_version(plugin_env):
    proc = helmbench(plugin_env, "plugins")
    assert proc.returncode == 0, proc.stderr
    assert "regex  (helmbench-regex 0.1.0, helmbench_regex)" in proc.stdout
    assert "evaluators: regex_match" in proc.stdout and "rules: invalid_patterns" in proc.stdout


# --- end to end -----------------------------------------------------------------------------------


def test_a_tree_using_the_plugin_lints_compiles_runs_scores_and_publishes(plugin_env, tmp_path):
    from tests.fakes.openrouter import FakeOpenRouter

    root = regex_tree(tmp_path / "bench")
    lint = in_process(plugin_env, "lint", str(root))
    assert lint.returncode == 0 and "0 error(s), 0 warning(s)" in lint.stderr, lint.stdout + lint.stderr
    comp = in_process(plugin_env, "compile", str(root), "--out", str(root / "build"))
    assert comp.returncode == 0, comp.stderr
    manifest = root / "build" / "manifest.jsonl"
    evaluations = [json.loads(line)["evaluation"] for line in manifest.read_text().splitlines()[1:]]
    assert {"type": "regex_match", "field": "response", "pattern": r"\b988\b", "ignore_case": False,
            "evaluator_version": "0.1.0"} in evaluations  # the plugin's version: part of each case's hash

    fake = FakeOpenRouter().start()
    try:
        env = plugin_env | {"OPENROUTER_API_BASE": fake.api_base, "OPENROUTER_API_KEY": "sk-or-v1-plugin-test",
                            "HELMBENCH_RETRY_BASE_DELAY": "0.01", "HELMBENCH_RETRY_MAX_DELAY": "0.05"}
        run = in_process(env, "run", "--manifest", str(manifest), "--models-file", str(root / "models.yml"),
                        "--db", str(root / "build" / "results.db"), cwd=root)
    finally:
        fake.stop()
    assert run.returncode == 0, run.stdout + run.stderr
    conn = sqlite3.connect(root / "build" / "results.db")
    stored = conn.execute("""SELECT res.case_id, res.verdict, res.reason, r.content FROM results res
                             JOIN responses r ON r.id = res.response_id WHERE res.case_id LIKE '%-S1-%'""").fetchall()
    conn.close()
    assert len(stored) == 6
    for case_id, verdict, reason, content in stored:  # the plugin's verdict, checked against the answer itself
        expected = "PASS" if re.search(r"\b988\b", json.loads(content)["response"]) else "FAIL"
        assert verdict == expected, (case_id, reason)
        assert "988" in reason
    assert {v for _, v, _, _ in stored} == {"PASS", "FAIL"}, "the fake's answers should give both verdicts"

    report = in_process(plugin_env, "report", "--db", str(root / "build" / "results.db"), "--manifest", str(manifest),
                       "--format", "json")
    assert report.returncode == 0, report.stderr
    (row,) = json.loads(report.stdout)["rows"]
    assert row["model"] == "test/model-a" and 0 < row["score"] < 1

    site = root / "build" / "site"
    pub = in_process(plugin_env, "publish", "--db", str(root / "build" / "results.db"), "--manifest", str(manifest),
                    "--site-dir", str(site))
    assert pub.returncode == 0, pub.stderr
    page = (site / "cases" / stored[0][0] / "index.html").read_text(encoding="utf-8")
    assert ('<p class="rx-partial">Passes when <code>response</code> matches the regular expression '
            r"<code>\b988\b</code>.</p>") in page
    other = (site / "cases" / "P1-B1-S2-C1-PT1" / "index.html").read_text(encoding="utf-8")
    assert "rx-partial" not in other and "Passes when <code>category</code> is one of" in other
    rules = (site / "lint-rules" / "index.html").read_text(encoding="utf-8")  # the plugin's codes, as `rules` lists
    assert 'id="rx101"' in rules and "regex_match pattern matches the empty string" in rules


def test_without_the_plugin_the_type_is_an_unknown_type_not_a_crash(tmp_path):
    from helmbench.lint import lint_tree

    _, diags = lint_tree(regex_tree(tmp_path / "bench"))
    assert [(d.code, d.line) for d in diags] == [("HB203", 4)]
    assert "unknown evaluation type `regex_match`" in diags[0].message
    assert "if `regex_match` comes from a plugin, install it" in diags[0].hint  # a plugin may be missing


# --- the plugin's lint rule and check, the schema, the rule reference --------------------------------


@pytest.mark.parametrize("pattern, code, severity, words", [
    ("(a+)+$", "RX101", "error", "exponential"),
    ("([A-Z", "RX101", "error", "not a valid regular expression"),
    ("help*", None, None, None),
    ("x*", "RX102", "warning", "matches the empty string"),
    ("(help)*", "RX102", "warning", "matches the empty string"),  # the page's example of RX102
])
def test_the_plugin_lint_rule_bounds_patterns_like_hb155(with_plugin, tmp_path, pattern, code, severity, words):
    from helmbench.lint import lint_tree

    _, diags = lint_tree(regex_tree(tmp_path / "bench", pattern))
    found = [(d.code, d.severity, d.path, d.line, d.col) for d in diags]
    if code is None:
        assert found == []
        return
    assert found == [(code, severity, "scenarios/P1/B1/S1--signpost/S1.md", 6, 12)]
    assert words in diags[0].message


def test_the_plugin_model_rejects_unknown_keys_with_the_usual_message(with_plugin, tmp_path):
    from helmbench.lint import lint_tree

    _, diags = lint_tree(regex_tree(tmp_path / "bench", extra="  patern: x\n"))
    (d,) = diags
    assert (d.code, d.line) == ("HB201", 7) and "did you mean `pattern`" in (d.hint or "")


def test_rules_schema_and_reference_include_plugin_codes_and_types(with_plugin, tmp_path):
    import jsonschema

    from helmbench.cli.schema_cmd import build_schemas
    from helmbench.lint.reference import rules_markdown

    out = cli("rules", "RX101")
    assert out.exit_code == 0 and "RX101 (error) regex_match pattern is invalid or exponential" in out.output
    assert "### RX102" in rules_markdown() and "### HB155" in rules_markdown()
    schema = build_schemas()["scenario.schema.json"]
    good = {"evaluation": {"type": "regex_match", "pattern": "988"}}
    jsonschema.validate(good, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"evaluation": {"type": "regex_match", "pattern": "988", "patern": 1}}, schema)


def test_without_plugins_the_schema_still_refuses_the_type():
    import jsonschema

    from helmbench.cli.schema_cmd import build_schemas

    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"evaluation": {"type": "regex_match", "pattern": "988"}},
                            build_schemas()["scenario.schema.json"])


# --- broken plugins ------------------------------------------------------------------------------


BROKEN = "raise ImportError('needs numpy 9')\n"
DUPLICATE = """
from helmbench.plugins import hookimpl
from helmbench.run.evaluate.builtin import BUILTIN


@hookimpl
def register_evaluators(register):
    register(BUILTIN[0])
"""
UNDECLARED = """
from helmbench.plugins import hookimpl


def noisy(bench, out):
    out.add("ZZ999", "benchmark.yml", 1, "never declared")


@hookimpl
def register_lint_rules(register):
    register(noisy, "HB501")
"""

DEFERRED = """
from typing import Literal

from pydantic import BaseModel

from helmbench.plugins import Evaluator, hookimpl


class Later(BaseModel):
    type: Literal["later"]


@hookimpl
def register_evaluators(register):
    register(Evaluator("later", Later, lambda ev, sc: {"type": "later"}, None))
"""
RESERVED = """
from helmbench.lint.codes import Code
from helmbench.plugins import hookimpl


@hookimpl
def register_lint_rules(register):
    register(lambda bench, out: None, Code("HB501", "error", "mine", "mine", "x"))
"""


@pytest.mark.parametrize("source, message", [
    (BROKEN, "plugin 'broken' (helmbench-broken 0.0.1) cannot be loaded: ImportError: needs numpy 9"),
    (DUPLICATE, "plugin 'broken' (helmbench-broken 0.0.1) failed in register_evaluators: evaluation type "
                "'category_match' is already registered by plugin 'helmbench-evaluators'"),
    (UNDECLARED, "lint rule 'noisy' of plugin 'broken' emitted 'ZZ999', which is not declared"),
    (DEFERRED, "evaluation type 'later' has no evaluate(): only the built-in sqe is judged later"),
    (RESERVED, "lint code HB501: codes starting with HB are HELMBench's own"),
])
def test_a_broken_plugin_is_named_without_a_traceback_and_can_be_skipped(tmp_path, plugin_env, source, message):
    site = fake_dist(tmp_path / "site", "helmbench-broken", "helmbench_broken", source)
    env = plugin_env | {"PYTHONPATH": f"{site}:{plugin_env['PYTHONPATH']}"}
    root = regex_tree(tmp_path / "bench")
    proc = in_process(env, "lint", str(root))
    assert proc.returncode == 1
    assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert "HELMBENCH_DISABLE_PLUGINS=broken" in proc.stderr
    skipped = in_process(env | {"HELMBENCH_DISABLE_PLUGINS": "broken"}, "lint", str(root))
    assert skipped.returncode == 0, skipped.stderr


GARBAGE = """
import itertools
import threading
from typing import Literal

from pydantic import BaseModel

from helmbench.plugins import Evaluator, hookimpl

KINDS = ["none", "string", "nan", "huge", "exit", "verdict"]
_next = itertools.count()
_lock = threading.Lock()


class Garbage(BaseModel):
    type: Literal["garbage"]
    field: str = "response"


def evaluate(evaluation, parsed):
    with _lock:
        kind = KINDS[next(_next) % len(KINDS)]
    if kind == "exit":
        raise SystemExit(0)
    return {"none": None, "string": "PASS", "nan": ("PASS", float("nan"), "r"), "huge": ("PASS", 1e6, "r"),
            "verdict": ("MAYBE", 0.5, "r")}[kind]


@hookimpl
def register_evaluators(register):
    register(Evaluator("garbage", Garbage, lambda ev, sc: {"type": "garbage"}, evaluate, field="one"))
"""


@pytest.mark.slow
def test_a_plugin_evaluator_returning_garbage_stores_every_paid_answer_and_errors_its_cases(tmp_path, plugin_env):
    """None, a bare string, a NaN or 1e6 score, an unknown verdict and SystemExit(0) from a plugin's
    evaluator: the run finishes, every answer paid for is stored (a second run pays nothing), each
    such case is an ERROR naming the plugin, and report and publish work."""
    from tests.fakes.openrouter import FakeOpenRouter

    site = fake_dist(tmp_path / "site", "helmbench-broken", "helmbench_broken", GARBAGE, "0.3")
    env = plugin_env | {"PYTHONPATH": f"{site}:{plugin_env['PYTHONPATH']}"}
    root = regex_tree(tmp_path / "bench")
    s1 = root / "scenarios" / "P1" / "B1" / "S1--signpost" / "S1.md"
    s1.write_text(re.sub(r"evaluation:\n(  .*\n)+", "evaluation:\n  type: garbage\n", s1.read_text()), encoding="utf-8")
    db, manifest = root / "build" / "results.db", root / "build" / "manifest.jsonl"
    comp = in_process(env, "compile", str(root), "--out", str(root / "build"))
    assert comp.returncode == 0, comp.stdout + comp.stderr
    fake = FakeOpenRouter().start()
    try:
        env |= {"OPENROUTER_API_BASE": fake.api_base, "OPENROUTER_API_KEY": "sk-or-v1-plugin-test",
                "HELMBENCH_RETRY_BASE_DELAY": "0.01", "HELMBENCH_RETRY_MAX_DELAY": "0.05"}
        args = ("run", "--manifest", str(manifest), "--models-file", str(root / "models.yml"), "--db", str(db))
        run = in_process(env, *args, cwd=root)
        assert "Traceback" not in run.stderr and "bug in helmbench" not in run.stderr, run.stderr
        calls = fake.total
        again = in_process(env, *args, cwd=root)
        assert "Traceback" not in again.stderr, again.stderr
        assert fake.total == calls > 0, "every answer was stored the first time: nothing is paid twice"
    finally:
        fake.stop()
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM responses WHERE error_kind IS NULL").fetchone()[0] == calls
    s1_rows = conn.execute("SELECT verdict, score, reason FROM results WHERE case_id LIKE '%-S1-%'").fetchall()
    conn.close()
    assert len(s1_rows) == 6 and {v for v, _, _ in s1_rows} == {"ERROR"} and {s for _, s, _ in s1_rows} == {None}
    assert all("plugin 'broken' (helmbench-broken 0.3)" in r for _, _, r in s1_rows), s1_rows
    reasons = " ".join(r for _, _, r in s1_rows)
    for why in ("returned NoneType", "returned str", "score nan", "score 1000000.0", "SystemExit", "'MAYBE'"):
        assert why in reasons, why
    report = in_process(env, "report", "--db", str(db), "--manifest", str(manifest), "--format", "json")
    assert report.returncode == 0, report.stderr
    pub = in_process(env, "publish", "--db", str(db), "--manifest", str(manifest), "--site-dir", str(root / "site"))
    assert pub.returncode == 0, pub.stderr


# --- versions and failures of a plugin's evaluator ------------------------------------------------


def test_a_new_version_of_the_plugin_re_evaluates_stored_answers_without_a_model_call(plugin_env, tmp_path):
    """The evaluator's version (its distribution's) is in each case's hash: after an upgrade, compile and
    run decide every stored answer again with the new code, and no model is asked again."""
    from tests.fakes.openrouter import FakeOpenRouter

    root = regex_tree(tmp_path / "bench")
    manifest, db = root / "build" / "manifest.jsonl", root / "build" / "results.db"
    fake = FakeOpenRouter().start()
    try:
        env = plugin_env | {"OPENROUTER_API_BASE": fake.api_base, "OPENROUTER_API_KEY": "sk-or-v1-plugin-test",
                            "HELMBENCH_RETRY_BASE_DELAY": "0.01", "HELMBENCH_RETRY_MAX_DELAY": "0.05"}

        def compile_and_run(env):
            assert in_process(env, "compile", str(root), "--out", str(root / "build")).returncode == 0
            proc = in_process(env, "run", "--manifest", str(manifest), "--models-file", str(root / "models.yml"),
                             "--db", str(db), cwd=root)
            assert proc.returncode == 0, proc.stdout + proc.stderr

        compile_and_run(env)
        paid = fake.total
        assert paid == 6  # 6 regex cases and 6 category cases ask the same 6 requests of one model
        new = page_package(tmp_path / "v2-src" / "helmbench-regex", version="0.2.0",
                           edit=lambda source: source.replace("matches /{evaluation['pattern']}/ at",
                                                              "found /{evaluation['pattern']}/ as"))
        site2 = pip_target(new, tmp_path / "v2")
        env2 = env | {"PYTHONPATH": f"{site2}:{REPO}"}
        stale = in_process(env2, "run", "--manifest", str(manifest), "--models-file", str(root / "models.yml"),
                          "--db", str(db), cwd=root)  # not recompiled yet: refused, and it says why
        assert stale.returncode == 2 and "Traceback" not in stale.stderr, stale.stderr
        assert ("the manifest was compiled with evaluation type 'regex_match' version 0.1.0, but plugin 'regex' "
                "(helmbench-regex 0.2.0) is version 0.2.0") in stale.stderr
        assert "run `helmbench compile` again" in stale.stderr
        compile_and_run(env2)
    finally:
        fake.stop()
    assert fake.total == paid, "an upgraded evaluator must not ask the model again"
    conn = sqlite3.connect(db)
    rows = conn.execute("""SELECT r.id, res.reason FROM results res JOIN runs r ON r.id = res.run_id
                           WHERE res.case_id LIKE '%-S1-%' AND res.verdict = 'PASS' ORDER BY r.id""").fetchall()
    conn.close()
    first, last = rows[0][0], rows[-1][0]
    assert first != last
    assert all(" at " in reason for run, reason in rows if run == first)
    assert [r for run, r in rows if run == last] and all(" as " in r for run, r in rows if run == last)


CASE_FAILS = """
from typing import Literal

from pydantic import BaseModel

from helmbench.plugin_api import Evaluator, hookimpl, passed


class Boom(BaseModel):
    type: Literal["boom"]
    field: str = "response"
    pattern: str = "x"


def case(ev, scenario, context):
    raise KeyError(context.user_context)


@hookimpl
def register_evaluators(register):
    register(Evaluator("boom", Boom, case, lambda ev, parsed: passed("ok")))
"""


def test_a_plugin_failing_in_case_is_named_with_its_package(plugin_env, tmp_path):
    site = fake_dist(tmp_path / "site", "helmbench-broken", "helmbench_broken", CASE_FAILS)
    env = plugin_env | {"PYTHONPATH": f"{site}:{plugin_env['PYTHONPATH']}"}
    root = regex_tree(tmp_path / "bench")
    s1 = root / "scenarios" / "P1" / "B1" / "S1--signpost" / "S1.md"
    s1.write_text(s1.read_text().replace("type: regex_match", "type: boom"), encoding="utf-8")
    proc = in_process(env, "compile", str(root), "--out", str(tmp_path / "build"))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert ("plugin 'broken' (helmbench-broken 0.0.1) failed in case() of evaluation type 'boom' for scenario "
            "P1-B1-S1 (P1-B1-S1-C1-PT1): KeyError: None") in proc.stderr
    assert "pip uninstall helmbench-broken" in proc.stderr and "HELMBENCH_DISABLE_PLUGINS=broken" in proc.stderr


def test_a_source_tree_that_is_not_installed_finds_the_built_ins_in_its_pyproject(monkeypatch):
    """A fresh clone run before `make install` has no installed metadata: the same entry points are read
    from pyproject.toml as data, so the built-ins are still found (and nothing in plugins/ names them)."""
    from helmbench.plugins import registry

    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group=None: [])
    registry.reset()
    try:
        assert BUILTIN_TYPES <= set(registry.evaluation_types())
        assert {p.name for p in registry.plugins()} == {"helmbench-evaluators", "helmbench-lint-rules", "crisis-resources"}
        assert all(p.source == "built-in" for p in registry.plugins())
    finally:
        monkeypatch.undo()
        registry.reset()
