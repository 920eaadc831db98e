"""The parts of one run merged into one: the least finished status of two parts, and `completed` only when the
parts make the whole.

Why a module: a run of several shards is one run (its key is manifest, model and settings), and its status is
decided from the merged rows by these rules, which the copy (store/merge_rows.py) applies to every run it touched.
"""

from __future__ import annotations


#: Run statuses from the most finished to the least: two parts of a run are as finished as the lesser.
_FINISHED_ORDER = ("completed", "partial", "stopped_cost", "interrupted", "running", "failed")


def least_finished(a: str, b: str) -> str:
    if a == b or "preview" in (a, b):
        return a
    return max(a, b, key=lambda s: _FINISHED_ORDER.index(s) if s in _FINISHED_ORDER else len(_FINISHED_ORDER))


def completed_if_whole(conn, run: dict) -> str:
    """`completed` for a run whose parts make the whole (`shard` NULL, every part finished) and whose every
    case of the manifest has a result for every sample; `partial` for finished parts that do not."""
    if run["status"] not in ("completed", "partial"):
        return run["status"]
    have = conn.execute("SELECT count(*) FROM results WHERE run_id = ?", [run["id"]]).fetchone()[0]
    expected = conn.execute("SELECT count(*) FROM manifest_cases WHERE manifest_hash = ?",
                            [run["manifest_hash"]]).fetchone()[0] * (run["samples"] or 1)
    whole = run.get("shard") is None and have >= expected and not run["n_awaiting_judge"]
    return "completed" if whole else "partial"
