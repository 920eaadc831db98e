"""`helmbench merge` used the way a hurried or hostile user would: OUT given as an input, a missing
input, a model id carrying terminal escapes, Ctrl-C half-way. Each ends in an `error:`/`hint:` (or a
clean result) and never in a traceback, a terminal that obeys the database, or a changed OUT."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from test_store_merge import _tiny, dump  # noqa: E402

from helmbench.cli import app  # noqa: E402
from helmbench.store import merge as merge_module  # noqa: E402
from helmbench.store.merge_rows import Merger  # noqa: E402


def _rename_model(db: Path, model: str) -> None:
    conn = sqlite3.connect(db)
    with conn:
        for table, col in (("models", "id"), ("runs", "model"), ("responses", "model"), ("calls", "model")):
            conn.execute(f"UPDATE {table} SET {col} = ?", [model])
    conn.close()


def _merge(*args) -> object:
    return CliRunner().invoke(app, ["merge", *map(str, args)])


def test_out_given_again_as_an_input_is_skipped_not_blamed_on_another_process(tmp_path):
    out = _tiny(tmp_path / "team.db")  # written by `run`: in WAL mode, as every run's database
    other = _tiny(tmp_path / "other.db", uid="u2")
    merge_module.merge(out, [other])
    conn = sqlite3.connect(out)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.close()
    before = dump(out)
    result = _merge(out, out, tmp_path / "." / "team.db", other)
    assert result.exit_code == 0, result.output
    assert "team.db: this is OUT itself, skipped" in result.stdout and "nothing new" in result.stdout
    assert dump(out) == before


def test_a_missing_input_is_named_without_talking_of_dry_runs(tmp_path):
    result = _merge(tmp_path / "out.db", tmp_path / "shard-9" / "results.db")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: IN: results database not found:") and "shard-9" in result.stderr
    assert "dry run" not in result.stderr and "OPENROUTER_API_KEY" not in result.stderr


def test_terminal_escapes_in_a_merged_model_id_are_shown_not_obeyed(tmp_path):
    db = _tiny(tmp_path / "a.db")
    hostile = "test/\x1b[31mred\x1b]0;title\x07\x9b2J"
    _rename_model(db, hostile)
    result = _merge(tmp_path / "out.db", db)
    assert result.exit_code == 0, result.output
    assert not any(c in result.stdout for c in "\x1b\x07\x9b"), repr(result.stdout)
    assert "\\x1b[31mred" in result.stdout


def test_report_on_a_merged_hostile_database_shows_escapes_and_markup_literally(tmp_path):
    db = _tiny(tmp_path / "a.db")
    hostile = "test/\x1b[31mred[bold]x[/bold]"
    _rename_model(db, hostile)
    out = tmp_path / "out.db"
    assert _merge(out, db).exit_code == 0
    result = CliRunner().invoke(app, ["report", "--db", str(out)], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout
    # in the leaderboard and as the header of the per-pillar and per-behaviour tables (where rich read markup)
    assert result.stdout.count("test/\\x1b[31mred[bold]x[/bold]") >= 3, result.stdout


def test_ctrl_c_half_way_leaves_out_as_it_was_and_no_scratch_behind(tmp_path, monkeypatch):
    out = tmp_path / "out.db"
    merge_module.merge(out, [_tiny(tmp_path / "a.db")])
    before = dump(out)
    later = _tiny(tmp_path / "b.db", shard="1/2", uid="u2")

    def interrupted(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(Merger, "refresh_runs", interrupted)
    with pytest.raises(KeyboardInterrupt):
        merge_module.merge(out, [later])
    assert dump(out) == before
    assert not list(tmp_path.glob(".merge-*"))


def test_an_input_with_a_run_still_running_is_merged_as_interrupted_and_said(tmp_path):
    running = _tiny(tmp_path / "copied-mid-run.db")
    conn = sqlite3.connect(running)
    with conn:
        conn.execute("UPDATE runs SET status = 'running', finished_at = NULL")
    conn.close()
    out = tmp_path / "out.db"
    result = _merge(out, running)
    assert result.exit_code == 0, result.output
    assert "copied-mid-run.db: a run in it was still running" in result.stdout
    conn = sqlite3.connect(out)
    try:  # `running` would hide the merged run from report and publish ("no finished runs")
        assert conn.execute("SELECT status FROM runs").fetchall() == [("interrupted",)]
    finally:
        conn.close()
    assert merge_module.merge(out, [running]).still_running == [running]  # again: the same, nothing new
