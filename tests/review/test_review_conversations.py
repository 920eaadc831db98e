"""Every judged output is an item. The shipped conversation scenario (P2-B1-S2: transcript
criteria, a crisis-resources check) and a single-reply scenario with a check (P2-B1-S1), run against the fake
OpenRouter, planned, sent as packets, reviewed by three clinicians in real headless Chromium by keyboard,
imported; `agreement` for a transcript criterion equals the κ and α recomputed here (κ by hand, α with the
`krippendorff` package); the review page with a transcript passes the accessibility checks and reads at 390 px."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import time
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helmbench.cli import app
from helmbench.publish.review.serve import prepare, running
from helmbench.score.review_items import CHECKER, judged_items
from tests.publish.browser_helpers import recording_page
from tests.review.shipped_conversations import JUDGE, MODELS
from tests.review.test_item_key_doc import recompute
from tests.review.test_output_schemas import errors
from tests.review.test_review_packets_browser import _packet_server

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REVIEWERS = ["Ana", "Ben", "Cleo"]


def _items(db: Path):
    conn = sqlite3.connect(db)
    try:
        return judged_items(conn)[1]
    finally:
        conn.close()


def _choice(reviewer: str, h: str, options: list[str]) -> str:
    """Mostly the same option for every reviewer of an item, sometimes another."""
    base = int(h[-4:], 16) % len(options)
    flip = hashlib.sha256(f"{reviewer}:{h}".encode()).digest()[0] < 60
    return options[(base + 1) % len(options)] if flip else options[base]


def test_every_judged_output_is_an_item(shipped):
    items = _items(shipped["db"])
    kinds = Counter((i.scenario, i.criterion["code"], i.kind) for i in items.values())
    assert {k for k in kinds} == {("P2-B1-S2", "CR1", "transcript"), ("P2-B1-S2", "CR2", "transcript"),
                                  ("P2-B1-S2", "CR3", "transcript (checked)"), ("P2-B1-S1", "CR1", "reply (checked)"),
                                  ("P2-B1-S1", "CR2", "reply")}
    conv = next(i for i in items.values() if i.kind == "transcript")
    assert conv.transcript[0]["by"] == "assistant" and any(t["by"] == "user (simulated)" for t in conv.transcript)
    assert [t["turn"] for t in conv.transcript] == sorted(t["turn"] for t in conv.transcript)
    assert conv.output == conv.transcript[-1]["content"], "the last reply is the output the judge assessed"
    checked = [i for i in items.values() if i.checked]
    assert {tuple(i.judges) for i in checked} == {(CHECKER,)} and {i.options == ["PASS", "FAIL"] for i in checked} == {True}
    assert {v for i in checked for _, v in i.judges.values()} == {"PASS", "FAIL"}, "the check both passes and fails"
    assert all("Checked, not judged" in i.criterion["text"] for i in checked if i.scenario == "P2-B1-S2"), \
        "a check's item shows its rule in plain words"
    assert all(set(i.judges) == {JUDGE} for i in items.values() if not i.checked)


def test_transcripts_and_checks_reviewed_through_packets_by_keyboard(browser, shipped, tmp_path):
    from tests.review.review_pipeline import copy_of

    db = copy_of(shipped["db"], tmp_path / "results.db")
    runner = CliRunner()
    r = runner.invoke(app, ["review", "plan", "--db", str(db), "--sample", "30", "--seed", "3",
                            *[a for n in REVIEWERS for a in ("-r", n)]])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["review", "packet", "--db", str(db), "--out-dir", str(tmp_path / "outbox")])
    assert r.exit_code == 0, r.output
    items = _items(db)
    plan = json.loads((db.parent / "review-plan.json").read_text())
    sample = {h for hs in plan["assigned"].values() for h in hs}
    strata = {(items[h].scenario, items[h].criterion["code"]) for h in sample}
    assert strata == {("P2-B1-S2", "CR1"), ("P2-B1-S2", "CR2"), ("P2-B1-S2", "CR3"), ("P2-B1-S1", "CR1"),
                      ("P2-B1-S1", "CR2")}, "conversations and checks have their own strata in the sample"

    secrets = [*MODELS, JUDGE, "judgment_json", '"judges']
    chosen: dict[tuple[str, str], str] = {}
    for name in REVIEWERS:
        home = tmp_path / f"clinician-{name.lower()}"
        home.mkdir()
        packet = home / f"{name.lower()}.review.json"
        shutil.copy(tmp_path / "outbox" / packet.name, packet)
        assert errors("review-packet", json.loads(packet.read_text(encoding="utf-8"))) == []
        sent = json.loads(packet.read_text(encoding="utf-8"))["items"]
        assert any("transcript" in i for i in sent) and any(i["criterion"]["code"] == "CR3" for i in sent)
        assert [recompute(i) for i in sent] == [i["item_hash"] for i in sent], "keys as SCHEMA.md words them"
        with _packet_server(packet) as (url, _), recording_page(browser, url) as page:
            page.goto(url + "/")
            while "All done" not in page.content():
                html = page.content()
                for secret in secrets:
                    assert secret not in html, f"the page shows {secret!r}"
                h = page.locator('input[name="item"]').get_attribute("value")
                item = items[h]
                if item.transcript is not None:
                    assert page.locator(".turns > li").count() == len(item.transcript)
                    assert "user (simulated)" in html
                option = _choice(name, h, item.options)
                page.keyboard.press(str(item.options.index(option) + 1))
                with page.expect_navigation():
                    page.keyboard.press("Enter")
                chosen[(name, h)] = option
            assert page.errors == [] and page.foreign == []
        r = runner.invoke(app, ["review", "import", str(home / f"{name.lower()}.review-verdicts.jsonl"), "--db", str(db)])
        assert r.exit_code == 0, r.output
    assert {(n, h) for n, hs in plan["assigned"].items() for h in hs} == set(chosen)

    r = runner.invoke(app, ["agreement", "--db", str(db), "--manifest", str(shipped["manifest"]), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert errors("agreement", json.loads(r.output)) == []
    report = {c["key"]: c for c in json.loads(r.output)["criteria"]}
    status = json.loads(runner.invoke(app, ["review", "status", "--db", str(db), "--format", "json"]).output)
    done = {c["key"]: c for c in status["criteria"]}
    for key in ("P2-B1-S2/CR1", "P2-B1-S2/CR3", "P2-B1-S1/CR1"):
        scenario, code = key.split("/")
        mine = [h for h in sample if (items[h].scenario, items[h].criterion["code"]) == (scenario, code)]
        got = report[key]
        assert got["n_reviewed"] == len(mine) and done[key]["done"] == 2 * len(mine) == done[key]["assigned"]
        # recomputed here: PASS/FAIL by the criterion's pass values, the majority of two (a split has none)
        pairs, units = [], []
        for h in mine:
            verdicts = ["PASS" if c == "PASS" else "FAIL" for (n, hh), c in chosen.items() if hh == h]
            units.append(verdicts)
            if len(set(verdicts)) == 1:
                judged = [v for _, v in items[h].judges.values()]
                pairs.append((judged[0], verdicts[0]))
        n = len(pairs)
        po = sum(a == b for a, b in pairs) / n
        pe = sum((sum(a == k for a, _ in pairs) / n) * (sum(b == k for _, b in pairs) / n) for k in ("PASS", "FAIL"))
        assert got["n"] == n and got["n_split"] == len(mine) - n
        if pe < 1:
            assert got["kappa"]["value"] == pytest.approx((po - pe) / (1 - pe)), key
        import krippendorff
        import numpy as np

        data = np.array([[{"PASS": 0, "FAIL": 1}[v] for v in u] for u in units], dtype=float).T
        if len({v for u in units for v in u}) > 1:
            assert got["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=data,
                                                                    level_of_measurement="nominal")), key


def _settled_scroll(page, before: float, start: float = 3.0, settle: float = 10.0) -> float:
    """window.scrollY after a key press once the page has stopped scrolling: first up to `start` seconds for it to
    leave `before` (a smooth scroll slowed by a loaded machine or pytest-cov may not have begun), then sampled every
    50 ms until three samples in a row agree (it may still be moving), for at most `settle` seconds. A page that
    never moves returns `before`: bounded waits, not an assumption about how fast a browser scrolls."""
    deadline = time.monotonic() + start
    y = page.evaluate("window.scrollY")
    while y == before and time.monotonic() < deadline:
        page.wait_for_timeout(20)
        y = page.evaluate("window.scrollY")
    same, deadline = 0, time.monotonic() + settle
    while same < 3 and time.monotonic() < deadline:
        page.wait_for_timeout(50)
        last, y = y, page.evaluate("window.scrollY")
        same = same + 1 if y == last else 0
    return y


def test_a_transcript_item_is_accessible_and_reads_at_390_px(browser, shipped, tmp_path):
    from axe_playwright_python.sync_playwright import Axe
    from tests.review.review_pipeline import copy_of

    db = copy_of(shipped["db"], tmp_path / "results.db")
    items = _items(db)
    convs = sorted(h for h, i in items.items() if i.transcript is not None)
    prepared = prepare(db, seed=0)
    prepared.app.sample, prepared.app.in_sample = convs[:1], set(convs[:1])  # the page on a transcript item
    with running(prepared.app) as url, recording_page(browser, url, viewport={"width": 390, "height": 800}) as page:
        page.goto(url + "/")
        page.fill("#reviewer", "Dee")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert page.locator("#h-conversation").count() == 1
        found = Axe().run(page, options={"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a",
                                                                               "wcag21aa", "wcag22aa"]},
                                         "resultTypes": ["violations"]})
        bad = [f"{v['id']}: {v['help']}" for v in found.response["violations"] if v["impact"] in ("serious", "critical")]
        assert bad == []
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, "no sideways scrolling at 390 px"
        # by keyboard: Space pages down through the whole conversation to the options, 1 picks, Enter saves
        bottom = "window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 8"
        # A press that moved nothing is tried again, up to three in a row: in a long run the first press has been
        # seen to move nothing within 3 s (presses=1, not at the end), then the page scrolls; a page whose Space
        # never scrolls still fails, after three presses.
        presses = stalled = 0
        while not page.evaluate(bottom) and presses < 200 and stalled < 3:
            before = page.evaluate("window.scrollY")
            page.keyboard.press("Space")
            presses += 1
            stalled = stalled + 1 if _settled_scroll(page, before) <= before else 0
        assert presses > stalled and page.evaluate(bottom), \
            f"Space pages down through the conversation to its end ({presses} presses, {stalled} that moved nothing)"
        page.keyboard.press("1")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert "All done" in page.content() and page.errors == []


def test_a_checked_criterion_is_calibrated_against_its_check(shipped, tmp_path):
    """κ of a checked criterion is against the check's verdict (said in `agreement`), and a check is never
    counted as a second judge."""
    from helmbench.score.calibration import load_calibration
    from helmbench.store import open_db
    from helmbench.store.reviews import save_review
    from tests.review.review_pipeline import copy_of

    db = copy_of(shipped["db"], tmp_path / "results.db")
    items = _items(db)
    conn = open_db(db)
    for h, item in items.items():
        if item.criterion["code"] == "CR3" and item.scenario == "P2-B1-S2":  # agree with the check
            save_review(conn, {"item_hash": h, "reviewer": "Ana", "case_id": item.case_id, "scenario": item.scenario,
                               "criterion": "CR3", "criterion_text": item.criterion["text"],
                               "judgment": item.judges[CHECKER][1]})
    conn.conn.close()
    report = load_calibration(sqlite3.connect(db))
    crit = report.of("P2-B1-S2", "CR3")
    assert crit.checked and crit.kappa.value == pytest.approx(1.0) and crit.n == 16 and crit.judges == 1
    assert not report.of("P2-B1-S2", "CR1").checked and report.overall.judges == 1
    r = CliRunner().invoke(app, ["agreement", "--db", str(db), "--manifest", str(shipped["manifest"])])
    line = next(x for x in r.output.splitlines() if x.startswith("P2-B1-S2/CR3"))
    assert "κ against the check" in line
