"""Support for `run-single`: find one case in the manifest and what each model answered."""

from __future__ import annotations

from pathlib import Path

from helmbench.errors import UsageError


def find_case(manifest_path: Path, case_id: str) -> dict:
    from helmbench.manifest import read_manifest

    for case in read_manifest(manifest_path, verify=False):
        if case["id"] == case_id:
            return case
    raise UsageError(f"unknown case id {case_id!r}")


def answers_for(db_path: Path, case: dict, models) -> list[tuple[str, dict | None, dict | None]]:
    """(model id, stored response or None, this run's result or None) per model."""
    from helmbench.store import open_existing
    from helmbench.run.evaluate import outcome_for
    from helmbench.store.responses import stored_response, stored_result

    db = open_existing(db_path)
    out = []
    for mp in models:
        response = stored_response(db, case["request_hash"], mp.id, mp.settings_hash, 0) if db is not None else None
        result = None
        if db is not None and mp.run_id is not None:
            result = stored_result(db, mp.run_id, case["hash"], 0)
            if result is not None:
                from helmbench.store.judgements import judgements_of_result

                result["judgements"] = judgements_of_result(db, result["id"])
        if result is None and response is not None:
            outcome = outcome_for(case, response)
            if outcome is not None:
                result = {"verdict": outcome.verdict, "reason": outcome.reason}
        out.append((mp.id, response, result))
    return out
