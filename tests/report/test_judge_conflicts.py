"""Conflicts of interest: a model under test judged by its own family is flagged (lint, leaderboard, report)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from helmbench.spec.families import conflicts, family_of

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("model_id, family", [
    ("openai/gpt-4.1", "openai/gpt-4.1"),
    ("openai/gpt-4.1-mini", "openai/gpt-4.1"),
    ("openai/gpt-4.1-nano", "openai/gpt-4.1"),
    ("openai/gpt-4o-mini", "openai/gpt-4o"),
    ("meta-llama/llama-3.3-70b-instruct", "meta-llama/llama"),
    ("anthropic/claude-3.5-haiku", "anthropic/claude"),
    ("anthropic/claude-sonnet-4", "anthropic/claude"),
    ("some/thing-7b-instruct:free", "some/thing"),
    ("some/model-2-pro-2024-06", "some/model-2"),
    ("test/judge-1", "test/judge-1"),
])
def test_family_is_the_id_up_to_its_size_or_version_suffix_or_the_table(model_id, family):
    assert family_of(model_id) == family


def test_models_yml_families_override_the_table_at_a_boundary():
    over = {"openai/o4": "openai/gpt", "openai/gpt-4.1": "openai/gpt"}
    assert family_of("openai/o4-mini", over) == family_of("openai/gpt-4.1-mini", over) == "openai/gpt"
    assert family_of("openai/o40", over) == "openai/o40"  # a prefix ends at a boundary
    assert conflicts(["openai/gpt-4.1"], ["openai/gpt-4.1-mini", "openai/gpt-4o", "x/y"]) == {
        "openai/gpt-4.1-mini": ["openai/gpt-4.1"]}
    assert conflicts(["openai/gpt-4.1"], ["openai/o4-mini"], over) == {"openai/o4-mini": ["openai/gpt-4.1"]}


def test_lint_warns_at_the_models_id_and_a_families_override_silences_it(tmp_path):
    import shutil

    from helmbench.lint import lint_tree

    root = tmp_path / "bench"
    shutil.copytree(REPO / "tests" / "lint" / "base", root)
    (root / "models.yml").write_text("marking_model: openai/gpt-4.1\nmodels:\n  - id: google/gemini-2.5-flash\n"
                                     "  - id: openai/gpt-4.1-mini\n", encoding="utf-8")
    found = [(d.code, d.line, d.col, d.is_error) for d in lint_tree(root)[1]]
    assert found == [("HB609", 4, 9, False)]
    (root / "models.yml").write_text("marking_model: openai/gpt-4.1\nfamilies: {openai/gpt-4.1-mini: openai/small}\n"
                                     "models:\n  - id: openai/gpt-4.1-mini\n", encoding="utf-8")
    assert [d.code for d in lint_tree(root)[1]] == []


# --- a real run through the fake OpenRouter ----------------------------------------------------

@pytest.fixture
def fake(monkeypatch):
    from tests.fakes.openrouter import FakeOpenRouter
    from tests.report.judge_runs import serving

    with serving(FakeOpenRouter(), monkeypatch) as server:
        yield server


def test_leaderboard_and_report_flag_the_model_judged_by_its_family(tmp_path, fake):
    from rich.console import Console

    from helmbench.cli import report_render
    from helmbench.score.leaderboard import build_leaderboard
    from helmbench.score.report import load_report
    from tests.fakes.manifests import write_manifest
    from tests.judge.judge_pipeline import run_once
    from tests.review.review_pipeline import cases

    manifest = tmp_path / "manifest.jsonl"
    write_manifest(manifest, cases())
    models = tmp_path / "models.yml"
    models.write_text("marking_model: {id: openai/gpt-4.1, max_tokens: 400}\nmodels:\n"
                      "  - {id: openai/gpt-4.1-mini, max_tokens: 300}\n  - {id: test/model-b, max_tokens: 300}\n",
                      encoding="utf-8")
    db = tmp_path / "results.db"
    run_once(manifest, models, db)
    board = build_leaderboard(db, bootstrap=0)
    flagged = {r.model: r.judge_conflicts for r in board.rows}
    assert flagged == {"openai/gpt-4.1-mini": ("openai/gpt-4.1",), "test/model-b": ()}

    report = load_report(db, None, None, bootstrap=0)
    rows = {r["model"]: r for r in json.loads(report_render.as_json(report))["rows"]}
    assert rows["openai/gpt-4.1-mini"]["judge_conflicts"] == ["openai/gpt-4.1"]
    assert rows["test/model-b"]["judge_conflicts"] == []
    out = io.StringIO()
    report_render.text(report, Console(file=out, width=200))
    assert "openai/gpt-4.1-mini: ⚠ judged by openai/gpt-4.1 of its own family" in out.getvalue()
    assert "test/model-b: ⚠" not in out.getvalue()


def test_leaderboard_cell_escapes_the_conflict_note():
    """The leaderboard's model cell (the page's own macro) shows the note with its text escaped."""
    from types import SimpleNamespace

    from helmbench.publish.render import environment

    source = environment().loader.get_source(environment(), "leaderboard.html.j2")[0]
    macro = source[source.index("{% macro model_cell"):source.index("{%- endmacro %}") + len("{%- endmacro %}")]
    template = environment().from_string(macro + "{{ model_cell(m) }}")
    row = SimpleNamespace(run=SimpleNamespace(status="completed"), drift=(), judge_conflicts=("a/<b>",),
                          conflict_note="judged by a/<script>x</script> of its own family",
                          adjudication_note="")
    html = template.render(m={"row": row, "name": "N", "id": "a/b-mini", "slug": "n", "imported_note": ""},
                           link=SimpleNamespace(model=lambda slug: f"models/{slug}/"))
    assert "judged by a/&lt;script&gt;x&lt;/script&gt; of its own family" in html and "<script>" not in html
    assert 'class="hb-conflict"' in html
    row = SimpleNamespace(run=row.run, drift=(), judge_conflicts=(), conflict_note="", adjudication_note="")
    assert "hb-conflict" not in template.render(m={"row": row, "name": "N", "id": "a/b", "slug": "n", "imported_note": ""},
                                                link=SimpleNamespace(model=lambda slug: slug))


@pytest.mark.parametrize("families, flagged", [
    ({"openai/o4": "openai/gpt-4.1"}, True),  # makes o4-mini a relative of the judge
    ({}, False),  # the default table: o4-mini is of its own family
])
def test_a_families_override_decides_the_conflict_alike_in_lint_report_and_leaderboard(tmp_path, fake, families,
                                                                                       flagged):
    """models.yml's `families:` reaches the leaderboard and the report through the run's record
    (`runs.families_json`), so the three agree with lint on the same file."""
    import shutil

    from rich.console import Console

    from helmbench.cli import report_render
    from helmbench.lint import lint_tree
    from helmbench.score.leaderboard import build_leaderboard
    from helmbench.score.report import load_report
    from tests.fakes.manifests import write_manifest
    from tests.judge.judge_pipeline import run_once
    from tests.review.review_pipeline import cases

    root = tmp_path / "bench"
    shutil.copytree(REPO / "tests" / "lint" / "base", root)
    text = ("marking_model: {id: openai/gpt-4.1, max_tokens: 400}\n"
            + (f"families: {json.dumps(families)}\n" if families else "")
            + "models:\n  - {id: test/model-b, max_tokens: 300}\n  - {id: openai/o4-mini, max_tokens: 300}\n")
    (root / "models.yml").write_text(text, encoding="utf-8")
    found = [(d.code, d.line) for d in lint_tree(root)[1]]
    assert found == ([("HB609", text.count("\n"))] if flagged else [])

    manifest = tmp_path / "manifest.jsonl"
    write_manifest(manifest, cases())
    db = tmp_path / "results.db"
    run_once(manifest, root / "models.yml", db)
    expected = ("openai/gpt-4.1",) if flagged else ()
    board = build_leaderboard(db, bootstrap=0)
    assert {r.model: r.judge_conflicts for r in board.rows} == {"openai/o4-mini": expected, "test/model-b": ()}
    report = load_report(db, None, None, bootstrap=0)
    rows = {r["model"]: r for r in json.loads(report_render.as_json(report))["rows"]}
    assert rows["openai/o4-mini"]["judge_conflicts"] == list(expected)
    out = io.StringIO()
    report_render.text(report, Console(file=out, width=200))
    assert ("openai/o4-mini: ⚠ judged by openai/gpt-4.1 of its own family" in out.getvalue()) is flagged
