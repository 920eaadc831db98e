"""Helpers shared by the judge and report tests: models files with a judge, in-process runs against
the fake OpenRouter, the upstream sample's tree, and queries on results.db.

Importable as `tests.judge.judge_pipeline` (the report tests build their database with it).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from helmbench.run.config import RetryPolicy, RunOptions
from helmbench.run.session import run

REPO = Path(__file__).resolve().parents[2]
UPSTREAM = REPO.parent / "shared" / "fixtures" / "upstream-sample"
MODEL = "test/model-a"
OTHER = "test/model-b"
JUDGE = "test/judge-1"
FAST = RetryPolicy(max_attempts=3, base_delay=0.0, max_delay=0.0)


def write_models(path: Path, models: list[str], *, judge: str | None = JUDGE) -> Path:
    lines = []
    if judge:
        lines += ["marking_model:", f"  id: {judge}", "  max_tokens: 400"]
    lines.append("models:")
    for m in models:
        lines += [f"  - id: {m}", "    temperature: 0.7", "    max_tokens: 300"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@dataclass(frozen=True)
class JudgedPipeline:
    """A judged pipeline's files and its runs (tests/report/conftest.py): here, under one importable name, for
    tests.shared.build_once to hand to the other workers."""
    root: Path
    manifest: Path
    db: Path
    runs: list


def run_once(manifest: Path, models: Path, db: Path, **kw):
    """`helmbench run` in-process (OPENROUTER_* must point at the fake)."""
    opts = RunOptions(manifest=str(manifest), models_file=str(models), db=str(db),
                      logs_dir=str(Path(db).parent / "logs"), retry=kw.pop("retry", FAST), **kw)
    return run(opts, Console(stderr=True, width=160), live=False)


def q(db: Path, sql: str, params=()) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def copy_db(src: Path, dst: Path) -> Path:
    """A consistent copy (WAL included) through SQLite's backup API."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    a, b = sqlite3.connect(src), sqlite3.connect(dst)
    try:
        a.backup(b)
    finally:
        a.close()
        b.close()
    return dst


def upstream_tree(dest: Path) -> Path:
    shutil.copytree(UPSTREAM, dest)
    return dest


def compile_to(tree: Path, out: Path) -> Path:
    from helmbench.manifest import compile_tree

    return Path(compile_tree(tree, out).path)


def sqe_links(db: Path, run_id: int, scenario: str) -> dict[str, list[tuple]]:
    """case id → [(criterion, link verdict, link score, judgement id)] for a run's results of a scenario."""
    out: dict[str, list[tuple]] = {}
    for case_id, crit, verdict, score, jid in q(db, """
            SELECT res.case_id, j.criterion, rj.verdict, rj.score, j.id FROM results res
            JOIN cases c ON c.hash = res.case_hash JOIN result_judgements rj ON rj.result_id = res.id
            JOIN judgements j ON j.id = rj.judgement_id WHERE res.run_id = ? AND c.scenario = ?
            ORDER BY res.case_id, j.criterion""", (run_id, scenario)):
        out.setdefault(case_id, []).append((crit, verdict, score, jid))
    return out


def judged_fields(db: Path) -> list[dict]:
    return [json.loads(r[0]) for r in q(db, "SELECT judgment_json FROM judgements WHERE judgment_json IS NOT NULL")]
