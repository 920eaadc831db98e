"""`helmbench review export` / `import`: pooling verdicts between machines, all or nothing."""

from __future__ import annotations

import json
import re
import signal
import time

import httpx
import pytest
from typer.testing import CliRunner

from helmbench.cli import app
from helmbench.score.review_items import judged_items
from helmbench.store import open_db
from helmbench.store.reviews import save_review
from tests import forked
from tests.review.review_pipeline import copy_of, rows


def _reviewed(db_path, reviewer="ana", n=6):
    db = open_db(db_path)
    _, items = judged_items(db)
    chosen = sorted(items)[:n]
    for i, h in enumerate(chosen):
        it = items[h]
        save_review(db, {"item_hash": h, "reviewer": reviewer, "case_id": it.case_id, "scenario": it.scenario,
                         "criterion": it.criterion["code"], "criterion_text": it.criterion["text"],
                         "judgment": ["PASS", "PARTIAL", "FAIL"][i % 3], "confidence": "medium",
                         "note": 'said "fine", then, a comma\nand a line' if i == 0 else None})
    db.conn.close()
    return chosen


def _a_real_item(db_path) -> str:
    db = open_db(db_path)
    try:
        return sorted(judged_items(db)[1])[0]
    finally:
        db.conn.close()


ALL = "SELECT item_hash, reviewer, judgment_json, confidence, note, created_at FROM reviews ORDER BY item_hash"


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_then_import_on_another_machine_gives_the_same_reviews(judged, judged_db, tmp_path, fmt):
    _reviewed(judged_db["db"])
    other = copy_of(judged["db"], tmp_path / "other.db")  # another machine: the same results, no reviews
    assert rows(other, "SELECT count(*) FROM reviews") == [(0,)]
    out = tmp_path / f"ana.{fmt}"
    runner = CliRunner()
    r = runner.invoke(app, ["review", "export", "--db", str(judged_db["db"]), "--format", fmt, "--out", str(out)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["review", "import", str(out), "--db", str(other)])
    assert r.exit_code == 0, r.output
    assert "6 added" in r.output
    assert rows(other, ALL) == rows(judged_db["db"], ALL)
    r = runner.invoke(app, ["review", "import", str(out), "--db", str(other)])
    assert r.exit_code == 0 and "0 added" in r.output and rows(other, ALL) == rows(judged_db["db"], ALL)


def test_an_import_with_one_bad_row_imports_nothing_and_names_the_line(judged_db, tmp_path):
    _reviewed(judged_db["db"])
    good = tmp_path / "all.jsonl"
    assert CliRunner().invoke(app, ["review", "export", "--db", str(judged_db["db"]), "--format", "jsonl",
                                    "--out", str(good)]).exit_code == 0
    lines = good.read_text().splitlines()
    row = json.loads(lines[3])
    lines[3] = json.dumps({**row, "reviewer": "ben", "judgment": "MAYBE"})  # line 4: not an option
    for i in range(len(lines)):
        if i != 3:
            lines[i] = json.dumps({**json.loads(lines[i]), "reviewer": "ben"})
    bad = tmp_path / "ben.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    before = rows(judged_db["db"], ALL)
    r = CliRunner().invoke(app, ["review", "import", str(bad), "--db", str(judged_db["db"])])
    assert r.exit_code == 1
    assert f"{bad}:4:" in r.output and "'MAYBE' is not one of the criterion's options" in r.output
    assert "nothing was imported" in r.output and "Traceback" not in r.output
    assert rows(judged_db["db"], ALL) == before


@pytest.mark.parametrize("text, line, why", [
    ("item_hash,reviewer\n", 1, "lacks the column"),
    ("{hdr}\nsha256:{h},ana,C1,S,CR1,text,\"\"\"PASS\"\"\",,,2026-11-20T10:00:00+00:00\n"
     "sha256:{h},ana,C1,S,CR1,text,\"\"\"PASS\"\"\",,,2026-11-20T10:00:00+00:00\n", 3, "second verdict"),
    ("{hdr}\nsha256:{h},ana,C1,S,CR1,text,PASS,sure,,2026-11-20T10:00:00+00:00\n", 2, "`confidence`"),
    ("{hdr}\nsha256:{h},ana,C1,S,CR1,text,PASS,,,yesterday\n", 2, "ISO 8601"),
    ("{hdr}\nnot-a-hash,ana,C1,S,CR1,text,PASS,,,2026-11-20T10:00:00+00:00\n", 2, "sha256"),
    ("{hdr}\nsha256:{h},,C1,S,CR1,text,PASS,,,2026-11-20T10:00:00+00:00\n", 2, "`reviewer` is missing"),
    ("{hdr}\nsha256:{h},ana,C1,S,CR1,text,PASS,,,2026-11-20T10:00:00+00:00,extra\n", 2, "more cells"),
])
def test_bad_csv_rows_are_named_by_line(judged_db, tmp_path, text, line, why):
    hdr = "item_hash,reviewer,case_id,scenario,criterion,criterion_text,judgment,confidence,note,created_at"
    f = tmp_path / "bad.csv"
    f.write_text(text.format(hdr=hdr, h=_a_real_item(judged_db["db"]).split(":")[1]))
    r = CliRunner().invoke(app, ["review", "import", str(f), "--db", str(judged_db["db"])])
    assert r.exit_code == 1, r.output
    assert f"{f}:{line}:" in r.output and why in r.output, r.output
    assert rows(judged_db["db"], "SELECT count(*) FROM reviews")[0][0] == 0


def test_an_unknown_file_type_is_a_usage_error(judged_db, tmp_path):
    f = tmp_path / "reviews.xlsx"
    f.write_text("x")
    r = CliRunner().invoke(app, ["review", "import", str(f), "--db", str(judged_db["db"])])
    assert r.exit_code == 2 and ".xlsx" in r.output


def test_the_review_command_serves_on_loopback_until_ctrl_c(judged_db):
    # From the pipeline's folder: its default manifest is the pipeline's, never a build/ in the repository.
    proc = forked.start("review", "--db", judged_db["db"], "--port", "0", "--sample", "4", stdout=None,
                        cwd=judged_db["root"])  # a server process of its own, forked (tests/forked.py)
    try:
        line = proc.stderr.readline()
        m = re.search(r"reviewing 4 of 24 judged item\(s\) of manifest sha256:\w+: (http://127\.0\.0\.1:\d+/)", line)
        assert m, line
        for _ in range(100):
            try:
                page = httpx.get(m.group(1), timeout=2)
                break
            except httpx.ConnectError:
                time.sleep(0.05)
        assert page.status_code == 200 and "Who is reviewing?" in page.text
        assert "default-src 'none'" in page.headers["content-security-policy"]
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) in (0, 130)


def test_a_deeply_nested_row_is_a_bad_line_not_a_crash(judged_db, tmp_path):
    """A shared file is untrusted: JSON nested past Python's recursion limit must be reported by line."""
    hdr = "item_hash,reviewer,case_id,scenario,criterion,criterion_text,judgment,confidence,note,created_at"
    deep = "[" * 5000 + "]" * 5000
    for name, text, line in [
        ("deep.jsonl", '{"reviewer": "ana"}\n' + deep + "\n", 2),
        ("deep.csv", f"{hdr}\nsha256:{'a' * 64},ana,C1,S,CR1,text,{deep},,,2026-11-20T10:00:00+00:00\n", 2),
    ]:
        f = tmp_path / name
        f.write_text(text)
        r = CliRunner().invoke(app, ["review", "import", str(f), "--db", str(judged_db["db"])])
        assert r.exit_code == 1, r.output
        assert f"{f}:{line}:" in r.output and "nested" in r.output and "bug in helmbench" not in r.output, r.output
        assert rows(judged_db["db"], "SELECT count(*) FROM reviews")[0][0] == 0


def test_an_import_into_a_database_that_does_not_exist_creates_nothing(judged_db, tmp_path):
    """A mistyped --db must not become a fresh, empty results database holding the imported verdicts."""
    _reviewed(judged_db["db"])
    out = tmp_path / "ana.jsonl"
    assert CliRunner().invoke(app, ["review", "export", "--db", str(judged_db["db"]), "--format", "jsonl",
                                    "--out", str(out)]).exit_code == 0
    typo = tmp_path / "resluts.db"
    r = CliRunner().invoke(app, ["review", "import", str(out), "--db", str(typo)])
    assert r.exit_code == 2, r.output
    assert str(typo) in r.output and "no results database" in r.output
    assert not typo.exists()


def test_an_export_into_a_folder_not_made_yet_creates_it(judged_db, tmp_path):
    """--out is validated as 'can be created', so the export must create its folder, not fail on a .tmp path."""
    _reviewed(judged_db["db"], n=2)
    out = tmp_path / "exports" / "2026-11" / "ana.csv"
    r = CliRunner().invoke(app, ["review", "export", "--db", str(judged_db["db"]), "--out", str(out)])
    assert r.exit_code == 0, r.output
    stored = rows(judged_db["db"], "SELECT count(*) FROM reviews")[0][0]
    import csv

    with open(out, encoding="utf-8", newline="") as f:
        assert stored >= 2 and len(list(csv.DictReader(f))) == stored  # every review (a note may hold a newline)
    assert not list(out.parent.glob("*.tmp"))


def test_an_older_review_written_in_another_time_zone_does_not_replace_a_newer_one(judged_db, tmp_path):
    """'Replaced only by a newer one' must compare instants, not the text of the timestamps."""
    _reviewed(judged_db["db"], n=1)
    out = tmp_path / "mine.jsonl"
    assert CliRunner().invoke(app, ["review", "export", "--db", str(judged_db["db"]), "--format", "jsonl",
                                    "--out", str(out)]).exit_code == 0
    row = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    before = rows(judged_db["db"], ALL)
    # 09:59 at UTC+14 is 19:59 UTC the day before: older than the stored review, though its text sorts later
    stamp = row["created_at"][:10] + "T09:59:00+14:00"
    older = tmp_path / "older.jsonl"
    older.write_text(json.dumps({**row, "judgment": "PASS" if row["judgment"] != "PASS" else "FAIL",
                                 "created_at": stamp}) + "\n", encoding="utf-8")
    r = CliRunner().invoke(app, ["review", "import", str(older), "--db", str(judged_db["db"])])
    assert r.exit_code == 0, r.output
    assert rows(judged_db["db"], ALL) == before


FORMULAS = ["=HYPERLINK(\"http://evil.example\",\"x\")", "+1+1", "-2+3", "@SUM(A1)", "\tindented", "\rreturn",
            "'quoted", "plain"]


def test_exported_csv_cells_never_start_a_formula_and_import_back_exactly(judged, judged_db, tmp_path):
    """OWASP CSV injection: a note or name a spreadsheet would run as a formula is written with a
    leading quote, and read back as written."""
    import csv

    db = open_db(judged_db["db"])
    _, items = judged_items(db)
    for i, (h, text) in enumerate(zip(sorted(items), FORMULAS)):
        it = items[h]
        save_review(db, {"item_hash": h, "reviewer": f"{text.strip()} {i}" if text.strip() else f"r{i}",
                         "case_id": it.case_id, "scenario": it.scenario, "criterion": it.criterion["code"],
                         "criterion_text": it.criterion["text"], "judgment": "PASS", "note": text})
    db.conn.close()
    out = tmp_path / "all.csv"
    assert CliRunner().invoke(app, ["review", "export", "--db", str(judged_db["db"]), "--out", str(out)]).exit_code == 0
    with open(out, newline="", encoding="utf-8") as f:
        cells = [c for row in csv.reader(f) for c in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")], "a cell a spreadsheet would run"
    assert "'=HYPERLINK" in out.read_text() and "''quoted" in out.read_text()
    other = copy_of(judged["db"], tmp_path / "other.db")
    r = CliRunner().invoke(app, ["review", "import", str(out), "--db", str(other)])
    assert r.exit_code == 0, r.output
    assert rows(other, ALL) == rows(judged_db["db"], ALL)
    assert {n for (n,) in rows(other, "SELECT note FROM reviews")} == set(FORMULAS)


def _jsonl_row(item, **over) -> str:
    row = {"item_hash": item.hash, "reviewer": "ana", "case_id": item.case_id, "scenario": item.scenario,
           "criterion": item.criterion["code"], "criterion_text": item.criterion["text"], "judgment": "PASS",
           "confidence": None, "note": None, "created_at": "2026-11-20T10:00:00+00:00"}
    return json.dumps({**row, **over})


@pytest.mark.parametrize("over, why", [
    ({"reviewer": "ana\x1b[31m"}, "control characters"),
    ({"reviewer": "ana\u202eevil"}, "control characters"),
    ({"created_at": "9999-01-01T00:00:00+00:00"}, "in the future"),
    ({"item_hash": "sha256:" + "b" * 64}, "matches no judged output"),
])
def test_an_import_refuses_control_characters_future_dates_and_unknown_items_by_line(judged_db, tmp_path, over, why):
    db = open_db(judged_db["db"])
    _, items = judged_items(db)
    db.conn.close()
    first, second = (items[h] for h in sorted(items)[:2])
    f = tmp_path / "in.jsonl"
    f.write_text(_jsonl_row(first) + "\n" + _jsonl_row(second, **over) + "\n")
    r = CliRunner().invoke(app, ["review", "import", str(f), "--db", str(judged_db["db"])])
    assert r.exit_code == 1, r.output
    assert f"{f}:2:" in r.output and why in r.output and "Traceback" not in r.output, r.output
    assert rows(judged_db["db"], "SELECT count(*) FROM reviews")[0][0] == 0


def test_one_person_is_one_reviewer_whatever_the_spacing_or_case(judged_db, tmp_path):
    db = open_db(judged_db["db"])
    _, items = judged_items(db)
    db.conn.close()
    a, b, c = (items[h] for h in sorted(items)[:3])
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join([_jsonl_row(a, reviewer="ana"), _jsonl_row(b, reviewer="ana "),
                            _jsonl_row(c, reviewer="  ANA")]) + "\n")
    r = CliRunner().invoke(app, ["review", "import", str(f), "--db", str(judged_db["db"])])
    assert r.exit_code == 0, r.output
    assert rows(judged_db["db"], "SELECT DISTINCT reviewer FROM reviews") == [("ana",)]
    dup = tmp_path / "dup.jsonl"
    dup.write_text(_jsonl_row(a, reviewer="Ana") + "\n" + _jsonl_row(a, reviewer="ANA ") + "\n")
    r = CliRunner().invoke(app, ["review", "import", str(dup), "--db", str(judged_db["db"])])
    assert r.exit_code == 1 and f"{dup}:2:" in r.output and "second verdict" in r.output, r.output
    wide = tmp_path / "wide.jsonl"  # a fullwidth spelling (NFKC) is the same person too
    wide.write_text(_jsonl_row(a, reviewer="Ana") + "\n" + _jsonl_row(a, reviewer="\uff41\uff4e\uff41") + "\n")
    r = CliRunner().invoke(app, ["review", "import", str(wide), "--db", str(judged_db["db"])])
    assert r.exit_code == 1 and f"{wide}:2:" in r.output and "second verdict" in r.output, r.output


def test_a_stale_review_exported_imports_back(judged_db, tmp_path):
    """A review of an earlier wording matches no current item, but it is this database's: the round trip works."""
    _reviewed(judged_db["db"], n=2)
    conn = __import__("sqlite3").connect(judged_db["db"])
    with conn:  # as if the criterion had been reworded since: the stored review's key is no current item
        conn.execute("UPDATE reviews SET item_hash = 'sha256:' || substr('cccccccccccccccccccccccccccccccccccccccc"
                     "cccccccccccccccccccccccc', 1, 64) WHERE rowid = (SELECT min(rowid) FROM reviews)")
    conn.close()
    out = tmp_path / "all.jsonl"
    assert CliRunner().invoke(app, ["review", "export", "--db", str(judged_db["db"]), "--format", "jsonl",
                                    "--out", str(out)]).exit_code == 0
    r = CliRunner().invoke(app, ["review", "import", str(out), "--db", str(judged_db["db"])])
    assert r.exit_code == 0 and "2 already here" in r.output, r.output
