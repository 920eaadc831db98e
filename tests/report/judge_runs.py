"""Shared by the judge tests of tests/report: a fake OpenRouter subclass served on an OS-chosen port,
and a manifest of the judged cases only (so every score is decided by the judges)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path


@contextmanager
def serving(server, monkeypatch):
    """Start `server` (port 0: the OS chooses), point OPENROUTER_* at it, stop it afterwards."""
    server.start()
    monkeypatch.setenv("OPENROUTER_API_BASE", server.api_base)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-judge-report-tests")
    try:
        yield server
    finally:
        server.stop()


def judged_manifest(tmp_path: Path) -> Path:
    from tests.fakes.manifests import write_manifest
    from tests.review.review_pipeline import cases

    manifest = tmp_path / "manifest.jsonl"
    write_manifest(manifest, [c for c in cases() if c["evaluation"]["type"] == "sqe"])
    return manifest


JUDGES = ["test/judge-1", "test/judge-2", "test/judge-3"]
A, B, C = "test/model-a", "test/model-b", "test/model-c"
MARK = {B: "ZZMARKB", C: "ZZMARKC"}


def marked_judges(failing: dict[str, tuple[str, ...]] | None = None, verdict=None):
    """A fake where models B and C sign their answers and each judge fails the answers of the models
    `failing` names for it (and passes every other); or, with `verdict(judge, prompt)`, gives what it says."""
    import json

    from tests.fakes.judge_answer import forced_judgement, judge_criterion
    from tests.fakes.openrouter import FakeOpenRouter

    class MarkedJudges(FakeOpenRouter):
        def reply(self, body: dict, key: str, fault: str | None) -> dict:
            out = super().reply(body, key, fault)
            model = str(body.get("model", "")).removeprefix("openrouter/")
            msg = out["choices"][0]["message"]
            if model in MARK:
                obj = json.loads(msg["content"])
                obj["response"] = f"{MARK[model]} {obj['response']}"
                msg["content"] = json.dumps(obj)
            elif judge_criterion(body):
                prompt = " ".join(str(m.get("content") or "") for m in body.get("messages", []))
                if verdict is not None:
                    forced = verdict(model, prompt)
                else:
                    forced = "FAIL" if any(MARK[m] in prompt for m in failing.get(model, ())) else "PASS"
                msg["content"], _ = forced_judgement(body["response_format"]["json_schema"]["schema"], forced)
            return out

    return MarkedJudges()


def ensemble_db(tmp_path: Path, monkeypatch, failing: dict[str, tuple[str, ...]] | None, extra: str = "",
                verdict=None, **run_options) -> Path:
    """results.db of one run: the three judges of JUDGES judge A, B and C (`marked_judges(failing, verdict)`) on
    the judged cases; `extra` is added to models.yml (e.g. a `families:` line); `run_options` go to the run
    (e.g. `rejudge_sample`)."""
    from tests.judge.judge_pipeline import run_once

    with serving(marked_judges(failing, verdict), monkeypatch):
        models = tmp_path / "models.yml"
        models.write_text("marking_model:\n" + "".join(f"  - {{id: {j}, max_tokens: 400}}\n" for j in JUDGES)
                          + extra + "models:\n" + "".join(f"  - {{id: {m}, max_tokens: 300}}\n" for m in (A, B, C)),
                          encoding="utf-8")
        db = tmp_path / "results.db"
        run_once(judged_manifest(tmp_path), models, db, **run_options)
    return db
