"""Review packets in real headless Chromium: three clinicians, k = 2, each on a fresh folder without a results
database, served by `helmbench review --packet`; the verdicts imported give the same agreement as the same
verdicts given on the maintainer's own review page."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from helmbench.cli import app
from helmbench.publish.review.serve import prepare, running
from helmbench.score.calibration import load_calibration
from helmbench.score.review_plan import load_plan
from tests import forked
from tests.publish.browser_helpers import recording_page
from tests.review.review_pipeline import JUDGE, MODELS, copy_of, rows

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REVIEWERS = ["Ana", "Ben", "Cleo"]
KEYS = {"PASS": "1", "PARTIAL": "2", "FAIL": "3"}


def _choice(reviewer: str, h: str) -> str:
    """A verdict per reviewer and item: mostly agreeing, sometimes not, both classes used."""
    base = ["PASS", "PARTIAL", "FAIL"][int(h[-4:], 16) % 3]
    flip = hashlib.sha256(f"{reviewer}:{h}".encode()).digest()[0] < 70
    return {"PASS": "FAIL", "PARTIAL": "PASS", "FAIL": "PASS"}[base] if flip else base


@contextmanager
def _packet_server(packet: Path):
    """`helmbench review --packet FILE` as a clinician would run it: in the packet's folder, nothing else there."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HELMBENCH_")}
    proc = forked.start("review", "--packet", packet.name, "--port", "0", cwd=packet.parent, stdout=None,
                        env=env)  # a server process of its own, forked (tests/forked.py)
    try:
        line = proc.stderr.readline()
        m = re.search(r"reviewing the packet of (\w+) \((\d+) item\(s\)\); verdicts go to (\S+): (http://127\.0\.0\.1:\d+)/",
                      line)
        assert m, line + proc.stderr.read() if proc.poll() is not None else line
        for _ in range(200):
            try:
                httpx.get(m.group(4) + "/static/review.css", timeout=2)
                break
            except httpx.ConnectError:
                time.sleep(0.05)
        yield m.group(4), m
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _review_all(page, reviewer: str, secrets: list[str], chosen: dict) -> int:
    """Answer every item the page shows with `_choice`, checking the page stays blind; returns how many."""
    n = 0
    while "All done" not in page.content():
        html = page.content()
        for secret in secrets:
            assert secret not in html, f"the page shows {secret!r}"
        h = page.locator('input[name="item"]').get_attribute("value")
        if n == 0:
            for key in ['"', "\\", "'", "]"]:  # keys that are not shortcuts do nothing (and throw nothing)
                page.keyboard.press(key)
            assert page.locator("input:checked").count() == 0
        option = _choice(reviewer, h)
        page.keyboard.press(KEYS[option])
        with page.expect_navigation():
            page.keyboard.press("Enter")
        chosen[(reviewer, h)] = option
        n += 1
    return n


def test_three_reviewers_round_trip_through_packets(browser, judged, judged_db, tmp_path):
    db = judged_db["db"]
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE judgements SET justification = 'judge-reasoning-' || id")
    conn.close()
    secrets = [*MODELS, JUDGE, "judge-reasoning-"]
    runner = CliRunner()
    r = runner.invoke(app, ["review", "plan", "--db", str(db), "--sample", "12", "--seed", "1",
                            *[a for n in REVIEWERS for a in ("-r", n)]])
    assert r.exit_code == 0, r.output
    plan_path = db.parent / "review-plan.json"
    plan = json.loads(plan_path.read_text())
    r = runner.invoke(app, ["review", "packet", "--db", str(db), "--out-dir", str(tmp_path / "outbox")])
    assert r.exit_code == 0, r.output

    chosen: dict[tuple[str, str], str] = {}
    returned = []
    for name in REVIEWERS:
        home = tmp_path / f"clinician-{name.lower()}"  # the clinician's own machine: the packet and nothing else
        home.mkdir()
        packet = home / f"{name.lower()}.review.json"
        shutil.copy(tmp_path / "outbox" / packet.name, packet)
        with _packet_server(packet) as (url, m):
            assert (m.group(1), int(m.group(2))) == (name, 8)
            with recording_page(browser, url) as page:
                page.goto(url + "/")
                assert "Who is reviewing?" not in page.content() and f"Reviewing as <b>{name}</b>" in page.content()
                assert "PARTIAL counts as FAIL" in page.content(), "the intro says how verdicts combine"
                assert _review_all(page, name, secrets, chosen) == 8
                assert "Send that file back" in page.content()
                assert page.errors == [] and page.foreign == []
        assert sorted(p.name for p in home.iterdir()) == sorted([packet.name, f"{name.lower()}.review-verdicts.jsonl"]), \
            "no database or other file is made on the clinician's machine"
        returned.append(home / f"{name.lower()}.review-verdicts.jsonl")
    assert {(n, h) for n, hs in plan["assigned"].items() for h in hs} == set(chosen)

    for f in returned:  # back on the maintainer's machine
        r = runner.invoke(app, ["review", "import", str(f), "--db", str(db)])
        assert r.exit_code == 0 and "8 added" in r.output, r.output
    per_item = dict(rows(db, "SELECT item_hash, count(DISTINCT reviewer) FROM reviews GROUP BY item_hash"))
    sample = {h for hs in plan["assigned"].values() for h in hs}
    assert set(per_item) == sample and set(per_item.values()) == {2}, "every planned item has exactly k = 2 reviews"
    assert {(n, h): json.loads(j) for n, h, j in rows(db, "SELECT reviewer, item_hash, judgment_json FROM reviews")} \
        == chosen

    # the same verdicts given directly, on the maintainer's review page following the same plan
    direct = copy_of(judged["db"], tmp_path / "direct.db")
    prepared = prepare(direct, seed=99, plan=load_plan(plan_path))
    assert prepared.app.plan is not None
    with running(prepared.app) as url:
        for name in REVIEWERS:
            with recording_page(browser, url) as page:
                page.goto(url + "/")
                page.fill("#reviewer", name)
                with page.expect_navigation():
                    page.keyboard.press("Enter")
                again: dict = {}
                assert _review_all(page, name, secrets, again) == 8
                assert again == {k: v for k, v in chosen.items() if k[0] == name}
                assert page.errors == []

    via_packets = load_calibration(sqlite3.connect(db))
    via_page = load_calibration(sqlite3.connect(direct))

    def numbers(report) -> list[dict]:
        return [{k: v for k, v in c.to_dict().items() if k not in ("last_review", "date")}
                for c in [*report.criteria, report.overall]]

    assert numbers(via_packets) == numbers(via_page)
    assert via_packets.overall.n_alpha == 12 and via_packets.overall.alpha is not None, "α on the planned overlap"
    assert via_packets.overall.reviewers == 3 and via_packets.overall.n_reviewed == 12
    status = json.loads(runner.invoke(app, ["review", "status", "--db", str(db), "--format", "json"]).output)
    assert [(r["reviewer"], r["assigned"], r["done"]) for r in status["reviewers"]] == [(n, 8, 8) for n in REVIEWERS]


def test_keys_that_are_not_shortcuts_throw_nothing_on_the_review_page(browser, judged_db):
    prepared = prepare(judged_db["db"], size=4, seed=0)
    with running(prepared.app) as url, recording_page(browser, url) as page:
        page.goto(url + "/")
        page.fill("#reviewer", "Ana")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        for key in ['"', "\\", "'", "]", "[", "#"]:
            page.keyboard.press(key)
        assert page.errors == [], page.errors
        page.keyboard.press("1")
        assert page.locator("input:checked").count() == 1, "the shortcuts still work"
