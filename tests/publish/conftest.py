"""Fixtures for the publishing tests: a results DB made by the real pipeline, and the site built once.

The database comes from the shipped benchmark compiled with `compile_tree` and run by the real
executor (litellm's HTTP path) against the fake OpenRouter, with three models. One model's
every answer carries an XSS payload inside its JSON (so it is still evaluated), another gets
some invalid-JSON and truncated answers (format failures), a third some HTTP 500s with no
retry (ERROR results). One judged case's justification quotes the payload too (the judge
stage's own row when it ran, else one recorded as it would). `small_pipeline` is a 9-case synthetic run of one
model, for tests of the build itself where 600 cases add only CPU. Everything here is session-scoped and built
once per test session, whichever xdist worker asks first (tests.shared.build_once): read it, copy it to write.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.fakes.openrouter import FakeOpenRouter, Rule  # noqa: E402
from tests.shared import build_once

from publish_helpers import (  # noqa: E402
    DATASETTE_URL, ERROR_MODEL, FORMAT_MODEL, MODELS, REPO, XSS, XSS_MODEL, Pipeline, hostile_tree, serve)


class XssFake(FakeOpenRouter):
    """The fake OpenRouter, except that XSS_MODEL puts the payload at the start of its reply."""

    def reply(self, body: dict, key: str, fault: str | None) -> dict:
        out = super().reply(body, key, fault)
        if str(body.get("model", "")).removeprefix("openrouter/") == XSS_MODEL:
            msg = out["choices"][0]["message"]
            try:
                obj = json.loads(msg["content"])
            except ValueError:
                obj = None
            if isinstance(obj, dict) and isinstance(obj.get("response"), str):
                obj["response"] = f"{XSS} {obj['response']}"
                msg["content"] = json.dumps(obj, ensure_ascii=False)
            else:
                msg["content"] = f"{XSS} {msg['content'] or ''}"
        return out


def _judged_case_with_payload(db: Path) -> str:
    """A judged case of XSS_MODEL whose judge justification quotes the payload (as a judge quoting
    the answer would). Uses the judge stage's own rows when it ran, else records one judgement
    the way the judge stage does."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    justification = f"The reply opens with markup {XSS} and never checks on safety."
    try:
        run_id = conn.execute("SELECT id FROM runs WHERE model = ?", [XSS_MODEL]).fetchone()[0]
        judged = conn.execute(
            """SELECT res.case_id, rj.judgement_id FROM result_judgements rj JOIN results res ON res.id = rj.result_id
               JOIN judgements j ON j.id = rj.judgement_id
               WHERE res.run_id = ? AND j.error_kind IS NULL ORDER BY res.id LIMIT 1""", [run_id]).fetchone()
        with conn:
            if judged is not None:
                conn.execute("UPDATE judgements SET justification = ? WHERE id = ?",
                             [justification, judged["judgement_id"]])
                return judged["case_id"]
            case = conn.execute(
                """SELECT c.hash, c.id, c.request_hash FROM cases c JOIN manifest_cases mc ON mc.case_hash = c.hash
                   WHERE c.evaluation_type = 'sqe' ORDER BY mc.position LIMIT 1""").fetchone()
            resp = conn.execute("SELECT id FROM responses WHERE request_hash = ? AND model = ?",
                                [case["request_hash"], XSS_MODEL]).fetchone()
            cur = conn.execute(
                """INSERT INTO judgements (judge_request_hash, judge_model, judge_settings_hash, response_id, criterion,
                   verdict, score, judgment_json, justification, raw, cost, created_at)
                   VALUES ('sha256:judge-test', 'openai/gpt-4.1', 'sha256:judge-settings', ?, 'CR1', 'FAIL', 0,
                   '{"judgment": "FAIL"}', ?, '', 0.0002, '2026-01-01T00:00:00+00:00')""",
                [resp["id"], justification])
            cur2 = conn.execute(
                """INSERT INTO results (run_id, case_id, case_hash, sample, response_id, verdict, score, reason, created_at)
                   VALUES (?, ?, ?, 0, ?, 'FAIL', 0.0, 'judge: CR1 = FAIL', '2026-01-01T00:00:00+00:00')""",
                [run_id, case["id"], case["hash"], resp["id"]])
            conn.execute("INSERT INTO result_judgements (result_id, judgement_id) VALUES (?, ?)",
                         [cur2.lastrowid, cur.lastrowid])
            return case["id"]
    finally:
        conn.close()


def _run(tree: Path, root: Path, models: tuple[str, ...]) -> tuple[Path, Path]:
    """Compile `tree` and run `models` on it against the fake OpenRouter; returns (manifest, db)."""
    from helmbench.manifest import compile_tree

    manifest = compile_tree(tree, root / "build").path
    db = root / "build" / "results.db"
    _run_manifest(manifest, tree / "models.yml", db, root, models)
    return manifest, db


def _run_manifest(manifest: Path, models_file: Path, db: Path, root: Path, models: tuple[str, ...]) -> None:
    """Run `models` of `models_file` on `manifest` into `db` against the fake OpenRouter (XssFake, its rules)."""
    from rich.console import Console

    from helmbench.run.config import RetryPolicy, RunOptions
    from helmbench.run.session import run

    fake = XssFake(rules=[
        Rule("invalid_json", match=FORMAT_MODEL, probability=0.06),
        Rule("truncated", match=FORMAT_MODEL, probability=0.04),
        Rule("500", match=ERROR_MODEL, probability=0.03),
    ]).start()
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("OPENROUTER_API_KEY", "sk-or-v1-publish-tests")
            mp.setenv("OPENROUTER_API_BASE", fake.api_base)
            opts = RunOptions(manifest=str(manifest), models_file=str(models_file), db=str(db),
                              models=models, logs_dir=str(root / "build" / "logs"), concurrency=16,
                              retry=RetryPolicy(max_attempts=1, base_delay=0.0, max_delay=0.0))
            report = run(opts, Console(stderr=True, width=160), live=False)
    finally:
        fake.stop()
    assert report.status == "completed", report.status


def _pipeline(root: Path) -> Pipeline:
    manifest, db = _run(REPO / "benchmark", root, MODELS)
    return Pipeline(root=root, manifest=manifest, db=db, judged_case=_judged_case_with_payload(db))


@pytest.fixture(scope="session")
def pipeline(tmp_path_factory) -> Pipeline:
    """The shipped benchmark run on MODELS (once per session, shared by the workers: read it, copy it to write)."""
    return build_once(tmp_path_factory, "publish-pipeline", _pipeline)


def _small_pipeline(root: Path) -> Pipeline:
    """A synthetic manifest (9 cases, 3 scenarios, no judge) run on one model: for a test of the build itself
    (its caches), where what the shipped benchmark's 600 cases add is CPU (each publish of `pipeline` ~4 s)."""
    from tests.fakes.manifests import synthetic_cases, write_manifest, write_models

    manifest = root / "build" / "manifest.jsonl"
    write_manifest(manifest, synthetic_cases(9, scenarios=3))  # the 4th scenario would need a judge
    models = write_models(root / "models.yml", [MODELS[0]], judge=None)
    db = root / "build" / "results.db"
    _run_manifest(manifest, models, db, root, (MODELS[0],))
    return Pipeline(root=root, manifest=manifest, db=db, judged_case="")


@pytest.fixture(scope="session")
def small_pipeline(tmp_path_factory) -> Pipeline:
    """`_small_pipeline`, once per session (read it, copy it to write)."""
    return build_once(tmp_path_factory, "publish-small-pipeline", _small_pipeline)


def _hostile_pipeline(root: Path) -> Pipeline:
    tree = hostile_tree(REPO / "benchmark", root / "benchmark")
    manifest, db = _run(tree, root, (XSS_MODEL, ERROR_MODEL))
    return Pipeline(root=root, manifest=manifest, db=db, judged_case="")


@pytest.fixture(scope="session")
def hostile_pipeline(tmp_path_factory) -> Pipeline:
    """The shipped benchmark with an XSS payload in every authored title, name, description and
    version (benchmark, pillars, behaviours, scenarios, components, criteria, models), run on two
    models: one answering with the payload too."""
    return build_once(tmp_path_factory, "publish-hostile-pipeline", _hostile_pipeline)


def _build_site(db: Path, manifest: Path, site_dir: Path) -> Path:
    """The real mkdocs build of the site of `db` and `manifest`, strict."""
    from helmbench.publish import PublishSettings, build_site

    settings = PublishSettings(db=db, manifest=manifest, datasette_url=DATASETTE_URL)
    return build_site(settings, config_file=REPO / "mkdocs.yml", site_dir=site_dir, strict=True)


def _site_of(tmp_path_factory, name: str, p) -> Path:
    """The site of pipeline `p` (into its root's site/), built once per session."""
    return build_once(tmp_path_factory, name, lambda _folder: _build_site(p.db, p.manifest, p.root / "site"))


@pytest.fixture(scope="session")
def hostile_site(hostile_pipeline, tmp_path_factory) -> Path:
    return _site_of(tmp_path_factory, "publish-hostile-site", hostile_pipeline)


@pytest.fixture(scope="session")
def empty_site(tmp_path_factory) -> Path:
    """The site with no database and no manifest (a fresh checkout)."""
    return build_once(tmp_path_factory, "publish-empty-site", lambda root: _build_site(
        root / "build" / "results.db", root / "build" / "manifest.jsonl", root / "site"))


@pytest.fixture(scope="session")
def site(pipeline, tmp_path_factory) -> Path:
    """The site built from the pipeline's database (once per session)."""
    return _site_of(tmp_path_factory, "publish-site", pipeline)


@pytest.fixture(scope="session")
def axe():
    """axe-core as axe-playwright-python bundles it (no network): for browser_helpers.wcag_violations."""
    from axe_playwright_python.sync_playwright import Axe

    return Axe()


@pytest.fixture(scope="session")
def site_url(site):
    """The built site served by http.server on 127.0.0.1 (random port)."""
    yield from serve(site)


@pytest.fixture(scope="session")
def hostile_url(hostile_site):
    yield from serve(hostile_site)


@pytest.fixture(scope="session")
def empty_url(empty_site):
    yield from serve(empty_site)


@pytest.fixture(scope="session")
def stats_url(stats_site):
    yield from serve(stats_site)


@pytest.fixture(scope="session")
def stats_site(stats_plain, tmp_path_factory):
    """The site of tests.score.stats_pipeline (no floors, `stats_plain` in tests/conftest.py): a clearly
    better model, identical twins, a partial run and a provider change, all run against the fake OpenRouter."""
    return _site_of(tmp_path_factory, "publish-stats-site", stats_plain)
