"""Judgements as the site and the report read them: per result, and a run's judge totals."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from helmbench.store.judgements import judge_totals


def judgement_rows(conn: sqlite3.Connection, run_ids: Sequence[int]) -> list[sqlite3.Row]:
    """The judgements behind the runs' results, by result then criterion, with the verdict and score each
    gave that result (`result_judgements.verdict/score`, migration 3: a reused judgement is re-decided per
    case; the judgement's own on a database from before it), the output judged (`answer`, or a
    conversation's `transcript`; `answer` on a database from before migration 10) and the result's
    `scenario` (a criterion is its scenario and its code: every scenario may have a `CR1`)."""
    if not run_ids:
        return []
    link_cols = {r[1] for r in conn.execute("PRAGMA table_info(result_judgements)")}
    verdict = "COALESCE(rj.verdict, j.verdict)" if "verdict" in link_cols else "j.verdict"
    score = "COALESCE(rj.score, j.score)" if "score" in link_cols else "j.score"
    output = "j.output" if "output" in {r[1] for r in conn.execute("PRAGMA table_info(judgements)")} else "'answer'"
    cur = conn.execute(
        f"""SELECT rj.result_id, j.criterion, {verdict} AS verdict, {score} AS score, j.justification,
                   j.judgment_json, j.judge_model, j.error_kind, j.error_message, {output} AS output,
                   cs.scenario
            FROM result_judgements rj
            JOIN judgements j ON j.id = rj.judgement_id
            JOIN results res ON res.id = rj.result_id
            JOIN cases cs ON cs.hash = res.case_hash
            WHERE res.run_id IN ({",".join("?" * len(run_ids))})
            ORDER BY rj.result_id, j.criterion""", list(run_ids))
    cur.row_factory = sqlite3.Row
    return cur.fetchall()


def judges_of(conn: sqlite3.Connection, run_id: int) -> list[str]:
    """The judge models behind a run's results (through result_judgements), sorted; [] before the judge stage."""
    try:
        rows = conn.execute(
            """SELECT DISTINCT j.judge_model FROM result_judgements rj
               JOIN judgements j ON j.id = rj.judgement_id JOIN results res ON res.id = rj.result_id
               WHERE res.run_id = ? ORDER BY j.judge_model""", (run_id,)).fetchall()
    except sqlite3.OperationalError:
        return []
    return [r[0] for r in rows]


def run_families(conn: sqlite3.Connection, run_id: int) -> dict[str, str]:
    """models.yml's `families:` the run was made with (migration 12); {} when it had none, or on a database
    from before it (the default table alone then decides a family)."""
    from helmbench.store.schema_families import read_families

    try:
        row = conn.execute("SELECT families_json FROM runs WHERE id = ?", (run_id,)).fetchone()
    except sqlite3.OperationalError:
        return {}
    return read_families(row[0]) if row else {}


def judge_served(conn: sqlite3.Connection, run_ids: Sequence[int]
                 ) -> list[tuple[str, str, str, str | None, str | None, int]]:
    """(judge, scenario, criterion code, returned model version, serving provider, judgements) over the answered
    judge calls (the ledger's `calls`) behind the runs' results; [] on a database from before the ledger."""
    if not run_ids:
        return []
    marks = ",".join("?" * len(run_ids))
    try:
        rows = conn.execute(
            f"""SELECT j.judge_model, used.scenario, j.criterion, c.model_version, c.provider, COUNT(DISTINCT j.id)
                FROM judgements j
                JOIN (SELECT DISTINCT rj.judgement_id, cs.scenario FROM result_judgements rj
                      JOIN results res ON res.id = rj.result_id JOIN cases cs ON cs.hash = res.case_hash
                      WHERE res.run_id IN ({marks})) used ON used.judgement_id = j.id
                JOIN calls c ON c.kind = 'judge' AND c.request_key = j.judge_request_hash AND c.model = j.judge_model
                 AND c.settings_hash IS j.judge_settings_hash AND c.state = 'answered'
                GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5""", list(run_ids)).fetchall()
    except sqlite3.OperationalError:
        return []
    return [tuple(r) for r in rows]


def judge_versions(conn: sqlite3.Connection, run_ids: Sequence[int]) -> dict[int, set[str | None]]:
    """Per result of the runs that links judgements: the model versions the judge returned for them (the
    ledger's answered judge calls, as `judge_served` reads them); None for a judgement without such a row
    (a database from before the ledger, or a provider that named no version). {} before the ledger."""
    if not run_ids:
        return {}
    try:
        rows = conn.execute(
            f"""SELECT rj.result_id, c.model_version FROM result_judgements rj
                JOIN results res ON res.id = rj.result_id JOIN judgements j ON j.id = rj.judgement_id
                LEFT JOIN calls c ON c.kind = 'judge' AND c.request_key = j.judge_request_hash
                 AND c.model = j.judge_model AND c.settings_hash IS j.judge_settings_hash AND c.state = 'answered'
                WHERE res.run_id IN ({",".join("?" * len(run_ids))})""", list(run_ids)).fetchall()
    except sqlite3.OperationalError:
        return {}
    out: dict[int, set[str | None]] = {}
    for result_id, version in rows:
        out.setdefault(result_id, set()).add(version)
    return out


def judged_outputs(conn: sqlite3.Connection, run_ids: Sequence[int]) -> list[tuple[int, str, int]]:
    """(run id, case hash, sample) of the runs' results the judge decided (with linked judgements) as a PASS
    or a FAIL: the outputs a re-judge sample is drawn from."""
    if not run_ids:
        return []
    return [tuple(r) for r in conn.execute(
        f"""SELECT DISTINCT res.run_id, res.case_hash, res.sample FROM results res
            JOIN result_judgements rj ON rj.result_id = res.id
            WHERE res.run_id IN ({",".join("?" * len(run_ids))}) AND res.verdict IN ('PASS', 'FAIL')
            ORDER BY 1, 2, 3""", list(run_ids))]


def rejudge_pairs(conn: sqlite3.Connection, run_ids: Sequence[int], replicate: int = 1
                  ) -> list[tuple[str, str, str, str | None, str | None]]:
    """(judge, scenario, criterion code, first verdict, re-judge verdict) per judgement behind the runs' results that was
    asked again in re-judge lane `replicate` (the same request, judge and settings; store.judgements'
    `lane_settings_hash`); a verdict is None when that judgement is an ERROR. [] before the judge stage."""
    from helmbench.store.judgements import REJUDGE_MARK

    if not run_ids:
        return []
    try:
        rows = conn.execute(
            f"""SELECT DISTINCT j.id, j.judge_model, used.scenario, j.criterion,
                       CASE WHEN j.error_kind IS NULL THEN j.verdict END,
                       CASE WHEN again.error_kind IS NULL THEN again.verdict END
                FROM judgements j
                JOIN (SELECT DISTINCT rj.judgement_id, cs.scenario FROM result_judgements rj
                      JOIN results res ON res.id = rj.result_id JOIN cases cs ON cs.hash = res.case_hash
                      WHERE res.run_id IN ({",".join("?" * len(run_ids))})) used ON used.judgement_id = j.id
                JOIN judgements again ON again.judge_request_hash = j.judge_request_hash
                 AND again.judge_model = j.judge_model AND again.judge_settings_hash = j.judge_settings_hash || ?
                ORDER BY j.id, used.scenario""", [*run_ids, f"{REJUDGE_MARK}{replicate}"]).fetchall()
    except sqlite3.OperationalError:
        return []
    return [tuple(r[1:]) for r in rows]


def judge_totals_of(conn: sqlite3.Connection, run_id: int) -> dict:
    """`judge_totals` of a run, or {} on a database from before the judge stage."""
    try:
        return judge_totals(conn, run_id)
    except sqlite3.OperationalError:
        return {}
