"""`helmbench review` is one `helmbench.api.review_session` call and the lines it prints: what the page holds,
where it listens, the plan it follows (or why not) and the warning off loopback.

Why here and not in the browser tests: those serve the page for real; this checks the command's wiring to the
API, with `ReviewSession.serve` (the blocking loop, until Ctrl-C) replaced by a recorder on the real bound socket.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from helmbench.cli import app


def _recorded(monkeypatch) -> list:
    from helmbench.api import ReviewSession

    served = []

    def serve(self, sock, allow_hosts=()):
        served.append((self, sock.getsockname(), tuple(allow_hosts)))
        sock.close()

    monkeypatch.setattr(ReviewSession, "serve", serve)
    return served


def test_review_serves_the_sample_the_api_prepares(judged_db, monkeypatch):
    served = _recorded(monkeypatch)
    db, manifest = judged_db["db"], judged_db["manifest"]
    r = CliRunner().invoke(app, ["review", "--db", str(db), "--manifest", str(manifest), "--sample", "3",
                                 "--port", "0", "--allow-host", "review.lan"])
    assert r.exit_code == 0, r.output
    [(session, (host, port), allowed)] = served
    assert (host, allowed) == ("127.0.0.1", ("review.lan",)) and port > 0
    assert len(session.app.sample) == 3 and session.manifest_hash == judged_db["manifest_hash"]
    assert f"reviewing 3 of {len(session.app.items)} judged item(s) of manifest {judged_db['manifest_hash']}: " \
           f"http://127.0.0.1:{port}/" in r.output
    assert "not loopback" not in r.output and "review plan" not in r.output


def test_review_follows_the_plan_beside_the_database_and_says_when_it_cannot(judged_db, monkeypatch):
    served = _recorded(monkeypatch)
    db, manifest = judged_db["db"], judged_db["manifest"]
    runner = CliRunner()
    assert runner.invoke(app, ["review", "plan", "--db", str(db), "--manifest", str(manifest), "-r", "Ana", "-r", "Ben",
                               "--sample", "4"]).exit_code == 0
    r = runner.invoke(app, ["review", "--db", str(db), "--manifest", str(manifest), "--port", "0"])
    assert r.exit_code == 0, r.output
    assert "following the review plan (Ana, Ben)" in r.output
    assert len(served[-1][0].app.sample) == 4

    plan = db.parent / "review-plan.json"
    data = json.loads(plan.read_text(encoding="utf-8"))
    plan.write_text(json.dumps({**data, "manifest_hash": "sha256:" + "0" * 64}), encoding="utf-8")
    r = runner.invoke(app, ["review", "--db", str(db), "--manifest", str(manifest), "--port", "0"])
    assert r.exit_code == 0, r.output
    assert "the review plan is of another manifest; not followed" in r.output
    assert served[-1][0].app.plan is None
