"""The public Python API: what `import helmbench` exposes, that it stays cheap, and its errors.

The walkthrough on the API page (tests/test_api_page.py) exercises the full flow; these tests
pin the contract around it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
UPSTREAM = REPO.parent / "shared" / "fixtures" / "upstream-sample"
GOLDEN_TREE = REPO / "tests" / "manifest" / "golden" / "tree"
HEAVY = ("litellm", "mkdocs", "scipy", "statsmodels", "matplotlib", "datasette", "rich", "helmbench.api")


def _fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_helmbench_imports_nothing_heavy():
    out = _fresh(f"import sys, helmbench; print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    assert out == "[]"


def test_import_helmbench_and_its_all_still_import_nothing_heavy_for_lint():
    """`from helmbench import lint` and a lint call load neither litellm nor mkdocs nor the statistics."""
    out = _fresh(f"import sys\nfrom helmbench import lint\nlint({str(GOLDEN_TREE)!r})\n"
                 f"print(sorted(m for m in ('litellm', 'mkdocs', 'scipy', 'statsmodels', 'matplotlib') "
                 f"if m in sys.modules))")
    assert out == "[]"


def test_all_names_resolve():
    import helmbench

    assert "__version__" in helmbench.__all__
    for name in ("lint", "compile", "run", "report", "publish"):
        assert name in helmbench.__all__
        assert callable(getattr(helmbench, name)), name
    for name in helmbench.__all__:
        getattr(helmbench, name)
    with pytest.raises(AttributeError):
        helmbench.no_such_thing  # noqa: B018


@pytest.mark.parametrize("first", ["helmbench.lint.runner", "helmbench.run.plan", "helmbench.publish.settings"])
def test_the_functions_named_like_a_stage_work_whichever_was_imported_first(first):
    """Importing a stage subpackage sets `helmbench.<stage>`; it must still be callable as the API."""
    out = _fresh(f"import {first}\nimport helmbench\nfrom helmbench import lint, run, publish\n"
                 f"print(callable(helmbench.lint), callable(lint), callable(run), callable(publish), "
                 f"len(helmbench.lint({str(GOLDEN_TREE)!r})) >= 0, helmbench.lint.lint_tree.__name__)")
    assert out == "True True True True True lint_tree"


def test_lint_returns_diagnostics_and_the_authors_files_have_no_error():
    import helmbench
    from helmbench.diagnostics import Diagnostic

    if not UPSTREAM.is_dir():
        pytest.skip("the authors' sample is not on this machine")
    diags = helmbench.lint(UPSTREAM)
    assert all(isinstance(d, Diagnostic) for d in diags)
    assert [d for d in diags if d.is_error] == []


def test_compile_returns_the_manifest_and_refuses_a_tree_with_errors(tmp_path):
    import helmbench
    from helmbench.manifest import LintFailed

    manifest = helmbench.compile(GOLDEN_TREE, tmp_path / "out")
    assert isinstance(manifest, helmbench.Manifest)
    assert manifest.path == tmp_path / "out" / "manifest.jsonl"
    assert manifest.hash.startswith("sha256:") and manifest.copy.is_file()
    assert len(list(manifest)) == manifest.header["cases"] == 14

    broken = REPO / "tests" / "lint" / "broken"
    tree = next(p for p in sorted(broken.iterdir()) if p.is_dir()) if broken.is_dir() else None
    if tree is None:
        pytest.skip("no broken tree in tests/lint")
    with pytest.raises(LintFailed) as err:
        helmbench.compile(tree, tmp_path / "bad")
    assert isinstance(err.value, helmbench.HelmbenchError)
    assert any(d.is_error for d in err.value.diagnostics)


def test_bad_paths_raise_typed_errors_naming_the_path(tmp_path):
    import helmbench

    with pytest.raises(helmbench.UsageError, match="nowhere"):
        helmbench.lint(tmp_path / "nowhere")
    with pytest.raises(helmbench.UsageError, match="missing.jsonl"):
        helmbench.run(tmp_path / "missing.jsonl", dry_run=True)
    with pytest.raises(helmbench.HelmbenchError, match="results.db"):
        helmbench.report(tmp_path / "results.db")


def test_the_cli_is_thin_over_the_api():
    """Each pipeline command reaches its stage through helmbench.api, so both stay one behaviour."""
    cli = REPO / "helmbench" / "cli"
    # (that no cli module imports a stage at all is tests/test_layers.py's `cli-through-api` rule)
    for module, call in (("lint_cmd.py", "api.lint("), ("manifest_cmd.py", "api.compile("),
                         ("run_cmd.py", "api.run("), ("report_cmd.py", "from helmbench.api import in_build, report_data"),
                         ("publish_cmd.py", "api.publish(")):
        assert call in (cli / module).read_text(encoding="utf-8"), module


def test_the_stage_named_functions_show_the_api_signature():
    import inspect

    import helmbench
    import helmbench.api

    for name in ("lint", "run", "publish"):
        assert inspect.signature(getattr(helmbench, name)) == inspect.signature(getattr(helmbench.api, name))
    assert "on_progress" in inspect.signature(helmbench.run).parameters


def test_run_reports_progress_and_needs_no_console(tmp_path, monkeypatch, capsys):
    from tests.fakes.manifests import synthetic_cases, write_manifest, write_models
    from tests.fakes.openrouter import FakeOpenRouter

    import helmbench

    manifest = tmp_path / "build" / "manifest.jsonl"
    write_manifest(manifest, list(synthetic_cases(12)))
    models = write_models(tmp_path / "models.yml", ["test/model-a", "test/model-b"], max_tokens=200)
    steps: list = []
    with FakeOpenRouter() as fake:
        monkeypatch.setenv("OPENROUTER_API_BASE", fake.api_base)
        monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-test-not-a-key")
        result = helmbench.run(manifest, ["test/model-a"], models_file=models, on_progress=steps.append)
        assert fake.stats()["by_model"].get("test/model-b", 0) == 0  # only the model asked for
    answers = [s for s in steps if s.phase == "model calls"]
    judged = [s for s in steps if s.phase == "judge calls"]
    assert len(answers) + len(judged) == len(steps)  # no other phase
    assert result.status == "completed" and result.plan.new_calls == len(answers) > 0
    assert len(judged) == result.judge.calls > 0  # the judge's calls are reported too, in their own phase
    for phase in (answers, judged):
        assert [s.done for s in phase] == list(range(1, len(phase) + 1))
        assert all(isinstance(s, helmbench.Progress) and s.total == len(phase) for s in phase)
        assert phase[-1].errors == 0 and phase[-1].cost >= 0
    assert (tmp_path / "build" / "results.db").is_file()  # db defaults to beside the manifest
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""  # nothing printed: the report is returned
