"""`helmbench serve`: a snapshot served read-only by Datasette, with generated metadata."""

from __future__ import annotations

import json
import signal
import socket
import sqlite3
import subprocess
import sys
from contextlib import contextmanager

import httpx
import pytest

from tests import forked
from tests.fakes.serving import stop, wait_for_datasette

from publish_helpers import MODELS, REPO


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _count(db, sql="SELECT count(*) FROM results") -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


def test_metadata_documents_every_table_and_column(pipeline, tmp_path):
    from helmbench.publish import datasette

    snap = datasette.snapshot(pipeline.db, tmp_path)
    meta = datasette.metadata(snap)
    tables = meta["databases"]["results"]["tables"]
    conn = sqlite3.connect(snap)
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
    for name in names:
        assert name in tables, name
        if "_fts" in name:
            continue
        assert tables[name]["description"] and tables[name]["title"]
        cols = [r[1] for r in conn.execute(f"PRAGMA table_info([{name}])")]
        assert set(tables[name]["columns"]) == set(cols), name
    conn.close()
    assert tables["results"]["facets"] == ["verdict", "run_id"]
    assert tables["responses"]["facets"] == ["model", "finish_reason", "error_kind"]
    assert set(meta["databases"]["results"]["queries"]) == {
        "leaderboard", "failures_by_behaviour", "cost_by_model", "calls_of_run", "case_across_models",
        "conversations_dropping_resource"}
    assert meta["title"] and meta["description"] and meta["license"]


def test_snapshot_is_consistent_and_canned_leaderboard_agrees_with_the_scorer(pipeline, tmp_path):
    from helmbench.publish import datasette
    from helmbench.score.leaderboard import build_leaderboard

    snap = datasette.new_snapshot(pipeline.db, tmp_path / "serve")
    assert snap.name == "results.db" and snap.parent.name.startswith("results-")
    assert _count(snap) == _count(pipeline.db)
    conn = sqlite3.connect(snap)
    conn.row_factory = sqlite3.Row
    rows = {r["model"]: r for r in conn.execute(datasette.QUERIES["leaderboard"]["sql"])}
    conn.close()
    for row in build_leaderboard(pipeline.db).rows:
        assert rows[row.model]["weighted_score"] == pytest.approx(row.score, abs=5e-5)  # after the floors
        assert rows[row.model]["uncapped_score"] == pytest.approx(row.uncapped_score, abs=5e-5)
        assert bool(rows[row.model]["below_floor"]) == row.capped
        assert rows[row.model]["errors"] == row.n_errors
    for _ in range(4):  # only the latest few snapshots are kept
        datasette.new_snapshot(pipeline.db, tmp_path / "serve")
    assert len(list((tmp_path / "serve").glob("results-*"))) == datasette.KEEP_SNAPSHOTS


@pytest.mark.slow
def test_serve_answers_json_refuses_writes_and_stops_cleanly(pipeline, tmp_path):
    from helmbench.score.leaderboard import build_leaderboard

    port = _free_port()
    before = _count(pipeline.db)
    log = open(tmp_path / "serve.log", "w+")  # a file, not a pipe: Datasette logs a lot on a refused query
    proc = forked.start("serve", "--port", port, "--db", pipeline.db, "--serve-dir", tmp_path / "serve", cwd=REPO,
                        stdout=log, stderr=forked.STDOUT)  # a process of its own, forked (tests/forked.py)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_datasette(base, proc, tmp_path / "serve.log")

        board = httpx.get(f"{base}/results/leaderboard.json?_shape=array", timeout=10)
        assert board.status_code == 200
        assert {r["model"] for r in board.json()} == set(MODELS)
        assert all(r["results"] > 0 and "weighted_score" in r for r in board.json())
        scorer = {row.model: row for row in build_leaderboard(pipeline.db).rows}  # one run per model here
        for r in board.json():  # over HTTP, the canned query shows the scorer's numbers
            assert r["weighted_score"] == pytest.approx(scorer[r["model"]].score, abs=5e-5)
            assert r["n_format_failures"] == scorer[r["model"]].n_format_failures
        assert any(r["n_format_failures"] for r in board.json())

        faceted = httpx.get(f"{base}/results/results.json", params={"_facet": "verdict"}, timeout=10).json()
        counts = {f["value"]: f["count"] for f in faceted["facet_results"]["verdict"]["results"]}
        assert {"PASS", "FAIL", "ERROR"} <= set(counts) and sum(counts.values()) == before

        case = httpx.get(f"{base}/results/case_across_models.json",
                         params={"case_id": "P1-B1-S1-C1-U1-PT1", "_shape": "array"}, timeout=10).json()
        assert {r["model"] for r in case} == set(MODELS)

        for sql in ("DELETE FROM results", "UPDATE results SET verdict = 'PASS'", "DROP TABLE results"):
            refused = httpx.get(f"{base}/results.json", params={"sql": sql}, timeout=10)
            assert refused.status_code == 400, sql
            assert "SELECT" in refused.json()["error"]
        assert httpx.get(f"{base}/results.json", params={"sql": "select count(*) as n from results", "_shape": "array"},
                         timeout=10).json() == [{"n": before}]
        assert json.loads((tmp_path / "serve" / "metadata.json").read_text())["title"] == "HELMBench results"
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    log.close()
    assert code in (0, 130), (tmp_path / "serve.log").read_text()
    assert "stopped" in (tmp_path / "serve.log").read_text()
    assert _count(pipeline.db) == before
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{base}/-/versions.json", timeout=2)


def test_publish_writes_a_snapshot_and_metadata_without_serving(pipeline, tmp_path):
    out = tmp_path / "publish"
    proc = forked.run("serve", "--db", pipeline.db, "--publish", out, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (out / "results.db").is_file() and (out / "metadata.json").is_file()
    assert _count(out / "results.db") == _count(pipeline.db)
    assert "datasette publish" in proc.stdout
    # what a public host must set to keep visitors' SQL plain: the plugin folder, named in the command shown
    plugin = out / "plugins" / "helmbench_plain_sql.py"
    assert f"--plugins-dir {out / 'plugins'}" in proc.stdout and "fts3_tokenizer" in plugin.read_text()
    assert "--plugins-dir" in plugin.read_text()


#: `fts3_tokenizer(name)` returns a native address; `fts3_tokenizer(name, pointer)` registers a function pointer.
FTS3_TOKENIZER = ("select fts3_tokenizer('simple') as p", "select fts3_tokenizer('planted', x'4141414141414141') as p",
                  "select hex(fts3_tokenizer('porter')) as p", "SELECT FTS3_TOKENIZER('simple') AS p")


def _refused_everywhere(base: str) -> None:
    for sql in FTS3_TOKENIZER:
        r = httpx.get(f"{base}/results.json", params={"sql": sql, "_shape": "array"}, timeout=10)
        assert r.status_code == 400 and "not authorized" in r.json()["error"], (sql, r.text[:300])
    plain = httpx.get(f"{base}/results.json", params={"sql": "select count(*) as n from runs", "_shape": "array"},
                      timeout=10)
    assert plain.status_code == 200 and plain.json()[0]["n"] >= 1  # plain SQL is still answered


@contextmanager
def _serving(args: list[str], tmp_path, cwd=REPO):
    """A server started with `args` plus a free port (`--port N`), yielding (its base URL, the port) once it answers."""
    port = _free_port()
    log = open(tmp_path / "server.log", "w+")  # a file, not a pipe: Datasette logs a lot on a refused query
    if args[0] == "helmbench":  # a process of its own, forked (tests/forked.py); Datasette is started fresh
        proc = forked.start(*args[1:], "--port", port, cwd=cwd, stdout=log, stderr=forked.STDOUT)
    else:
        proc = subprocess.Popen([sys.executable, "-m", *args, "--port", str(port)], cwd=cwd, stdout=log,
                                stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_datasette(base, proc, tmp_path / "server.log")
        yield base, port
    finally:
        stop(proc)
        log.close()


@pytest.mark.slow
def test_serve_refuses_the_fts3_tokenizer_interface_over_http(pipeline, tmp_path):
    """Issue #36 §5: both forms of fts3_tokenizer() are refused through a real `helmbench serve`, while
    plain SQL is answered."""
    with _serving(["helmbench", "serve", "--db", str(pipeline.db), "--serve-dir", str(tmp_path / "serve")],
                  tmp_path) as (base, _):
        _refused_everywhere(base)


@pytest.mark.slow
def test_the_plugin_serve_publish_writes_keeps_a_plain_datasette_plain(pipeline, tmp_path):
    """A public host started as `serve --publish` says (plain `datasette serve` with its --plugins-dir)
    refuses fts3_tokenizer() too."""
    out = tmp_path / "publish"
    made = forked.run("serve", "--db", pipeline.db, "--publish", out, cwd=REPO, timeout=120)
    assert made.returncode == 0, made.stderr
    with _serving(["datasette", "serve", str(out / "results.db"), "--metadata", str(out / "metadata.json"),
                   "--plugins-dir", str(out / "plugins"), "--host", "127.0.0.1"], tmp_path, cwd=tmp_path) as (base, _):
        _refused_everywhere(base)


@pytest.mark.slow
def test_serve_answers_only_requests_addressed_to_itself(pipeline, tmp_path):
    """DNS rebinding: a page on another name resolving to 127.0.0.1 sends that name as Host; the
    real server (a `helmbench serve` process) answers it 421, and the name allowed with
    --allow-host, loopback names and its own port 200."""
    with _serving(["helmbench", "serve", "--db", str(pipeline.db), "--serve-dir", str(tmp_path / "serve"),
                   "--allow-host", "bench.lan"], tmp_path) as (base, port):
        url = f"{base}/results/results.json"
        for host in ("evil.example", f"evil.example:{port}", "127.0.0.1:1", f"127.0.0.1.evil.example:{port}"):
            r = httpx.get(url, headers={"host": host}, timeout=10)
            assert r.status_code == 421 and "rows" not in r.text, host
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"bench.lan:{port}", f"LOCALHOST:{port}"):
            assert httpx.get(url, headers={"host": host}, timeout=10).status_code == 200, host
        forged = httpx.post(f"{base}/-/permissions", headers={"origin": "http://evil.example"}, timeout=10)
        assert forged.status_code == 403


def test_the_public_snapshot_holds_no_reviews_generations_or_notes(pipeline, tmp_path):
    """`serve --publish` is for public hosting: only the tables the leaderboard reads, and nothing of
    a dropped table left in the file's free pages."""
    from helmbench.store import open_db
    from helmbench.store.reviews import save_review
    from helmbench.store.snapshot import PUBLIC_TABLES

    db = tmp_path / "results.db"
    src = sqlite3.connect(pipeline.db)
    dst = sqlite3.connect(db)
    src.backup(dst)
    src.close(), dst.close()
    conn = open_db(db)
    save_review(conn, {"item_hash": "sha256:" + "a" * 64, "reviewer": "Dr Private Reviewer", "case_id": "x",
                       "scenario": "S1", "criterion": "CR1", "criterion_text": "t", "judgment": "PASS",
                       "note": "PRIVATE-CLINICIAN-NOTE"})
    conn.conn.close()
    out = tmp_path / "publish"
    proc = forked.run("serve", "--db", db, "--publish", out, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    snap = out / "results.db"
    tables = {r[0] for r in sqlite3.connect(snap).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "reviews" not in tables and "generations" not in tables
    assert {t for t in tables if "_fts" not in t} <= set(PUBLIC_TABLES)
    assert {"results", "runs", "models", "cases", "run_scores"} <= tables
    raw = snap.read_bytes()
    assert b"PRIVATE-CLINICIAN-NOTE" not in raw and b"Dr Private Reviewer" not in raw
    assert "PRIVATE-CLINICIAN-NOTE" not in (out / "metadata.json").read_text()
    assert _count(snap) == _count(db)
