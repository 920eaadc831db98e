"""A results database made by the real pipeline with a judge: two models on the upstream sample
(or, when that is absent, on a small synthetic manifest), run against the fake OpenRouter."""

from __future__ import annotations

import pytest

from tests.fakes.manifests import synthetic_cases, write_manifest  # noqa: E402
from tests.fakes.openrouter import FakeOpenRouter, Rule  # noqa: E402
from tests.shared import build_once
from tests.judge.judge_pipeline import (  # noqa: E402
    MODEL, OTHER, UPSTREAM, JudgedPipeline, compile_to, run_once, upstream_tree, write_models,
)


@pytest.fixture(scope="session")
def judged_db(tmp_path_factory):
    """Read-only; built once per session, whichever worker asks first."""
    return build_once(tmp_path_factory, "report-judged", _judged_db)


def _judged_db(root):
    if UPSTREAM.is_dir():
        manifest = compile_to(upstream_tree(root / "tree"), root / "build")
    else:
        manifest = root / "build" / "manifest.jsonl"
        write_manifest(manifest, list(synthetic_cases(40)))
    models = write_models(root / "models.yml", [MODEL, OTHER])
    db = root / "build" / "results.db"
    fake = FakeOpenRouter(rules=[Rule("403", match=OTHER, probability=0.05)]).start()
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("OPENROUTER_API_BASE", fake.api_base)
            mp.setenv("OPENROUTER_API_KEY", "sk-or-v1-report-tests")
            report = run_once(manifest, models, db, concurrency=16)
    finally:
        fake.stop()
    return JudgedPipeline(root=root, manifest=manifest, db=db, runs=report.runs)
