"""Export the leaderboard to Every Eval Ever (EEE), the EvalEval coalition's shared format for results.

Why: results otherwise leave HELMBench only as its own site, SQLite and JSON, so a leaderboard
cannot be submitted to the shared datastore or compared with other safety results without hand
work. Per ranked run (one per model, exactly the rows `helmbench report` ranks), two files are
written, laid out as the datastore expects (`data/<benchmark>/<developer>/<model>/`):

- `<uuid>.json`, the aggregate record (`EvaluationLog`, schema 0.3.0): the weighted score and the
  pass rate with their 95 % intervals, a score per pillar, the judge panel and the criteria as the
  evaluation method (`llm_scoring`), cost, tokens and coverage in `additional_details`;
- `<uuid>_samples.jsonl`, one instance record per result with a verdict (`InstanceLevelEvaluationLog`):
  a single-answer case as `single_turn` (its messages, the reply), a conversation as `multi_turn`
  (its transcript, with the judges' verdicts on the whole transcript and its turn checkpoints as the
  answer attributions it was decided from), the verdict's score, each criterion's judge verdict, tokens, cost and latency
  where the store knows them; a result clinicians' verdicts re-decided (benchmark.yml `adjudication:`,
  score/adjudication.py) carries their verdict and score, marked in `metadata.adjudication` (the judge's
  verdict and score, each reviewed criterion's verdicts and its review count). ERROR results have no verdict and count in no score: they are left
  out, and the aggregate says how many there were. So are ABSTAIN results (every criterion abstained or was not
  applicable: no verdict, outside every denominator); a record's `metadata.judgements` keeps an abstained
  criterion's verdict `ABSTAIN`.

Numbers come from the score layer (`score.report.load_report`: the same as the report and the
site) and rows from the store's named queries; files go through `safewrite`. The uuid is derived
from (manifest, model, settings), so exporting again rewrites the same files instead of adding
copies. Every string is written as JSON data (authored titles and model output included), and
each path component is made a portable name here: a benchmark, developer or model name never
becomes a path of its own choosing.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from helmbench import __version__, safewrite
from helmbench.errors import UsageError

#: The EEE schema version the records follow (`every_eval_ever.schema.get_schema_version()`).
SCHEMA_VERSION = "0.3.0"
#: The version of HELMBench's own additions to the records (eee-extras.schema.json's): an aggregate's
#: `additional_details` and a sample's `metadata`, each carrying it as `helmbench_format`.
EXTRAS_FORMAT = 2
SCORE_ID = "helmbench_score"
PASS_RATE_ID = "helmbench_pass_rate"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}


@dataclass(frozen=True)
class Exported:
    """What one export wrote: per ranked run its aggregate and samples files, and the samples' count."""

    out_dir: Path
    files: list[Path]
    records: int
    samples: int


def component(value: str, what: str) -> str:
    """`value` as one portable datastore path component (the validator's rule: no separators, control
    or reserved characters, no trailing dot or space, not `data` nor a device name)."""
    text = _UNSAFE.sub("-", value.replace(":", "_")).strip("-. ")
    if not text or text.lower() == "data" or text.split(".", 1)[0].upper() in _RESERVED or text in (".", ".."):
        raise UsageError(f"the {what} {value[:80]!r} gives no usable folder name in an Every Eval Ever datastore",
                         hint="name it with letters, digits, '.', '-' or '_'")
    return text


def model_folders(model_id: str) -> tuple[str, str]:
    """(developer, model) folders of a model id, as the datastore files it: `openai/gpt-4.1-mini` →
    (`openai`, `gpt-4.1-mini`), further slashes flattened with `_`."""
    parts = model_id.split("/")
    if len(parts) < 2 or not all(parts):
        raise UsageError(f"model id {model_id[:80]!r} names no developer (expected developer/model)",
                         hint="Every Eval Ever files a model under data/<benchmark>/<developer>/<model>/")
    return component(parts[0], "developer of model"), "_".join(component(p, "model") for p in parts[1:])


def _uuid(*parts: str) -> str:
    """A version-4-shaped UUID derived from `parts`: the same run exports to the same file names."""
    digest = hashlib.sha256("\x00".join(parts).encode("utf-8")).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, sort_keys=True)


def _interval(ci, method: str, n: int) -> dict | None:
    if ci is None:
        return None
    return {"confidence_interval": {"lower": float(ci[0]), "upper": float(ci[1]), "confidence_level": 0.95,
                                    "method": method}, "num_samples": n}


def _metric(metric_id: str, name: str, description: str, judging: dict | None) -> dict:
    out = {"metric_id": metric_id, "metric_name": name, "evaluation_description": description,
           "lower_is_better": False, "score_type": "continuous", "min_score": 0.0, "max_score": 1.0}
    if judging is not None:
        out["llm_scoring"] = judging
    return out


def _judging(judges: list[str], criteria: dict[str, str]) -> dict | None:
    """The judge panel and the criteria it applies (the evaluation method of judged scenarios)."""
    if not judges:
        return None
    return {
        "judges": [{"model_info": {"name": j, "id": j, "developer": j.split("/")[0] if "/" in j else None,
                                   "inference_platform": "openrouter",
                                   "additional_details": {"deployment_type": "externally_managed",
                                                          "model_availability": "unknown"}}} for j in judges],
        "input_prompt": ("HELMBench judge: the messages the model was sent, its reply, and one criterion (its text "
                         "and options); the judge answers with one option and a justification, per criterion."),
        "aggregation_method": "majority_vote" if len(judges) > 1 else None,
        "additional_details": {f"criterion {k}": v for k, v in sorted(criteria.items())},
    }


def _text(messages: list[dict]) -> str:
    return "\n\n".join(m.get("content") or "" for m in messages if isinstance(m.get("content"), str))


def _reference(evaluation: dict) -> list[str]:
    """What a deterministic evaluation expects (categories, tags); judged criteria have no reference answer."""
    values = evaluation.get("expected") or evaluation.get("required") or []
    return [str(v) for v in values] if isinstance(values, list) else [str(values)]


def _usage(usage: tuple | None) -> tuple[dict | None, dict | None, float | None]:
    """(token_usage, performance, cost) of a sample from (prompt, completion, cost, latency)."""
    if usage is None:
        return None, None, None
    prompt, completion, cost, latency = usage
    tokens = None
    if prompt is not None and completion is not None:
        tokens = {"input_tokens": int(prompt), "output_tokens": int(completion),
                  "total_tokens": int(prompt) + int(completion)}
    perf = {"latency_ms": float(latency)} if latency is not None else None
    return tokens, perf, cost


def _transcript_verdicts(judgements: list, checkpoints: list[dict]) -> list[dict]:
    """The judges' verdicts on a conversation's whole transcript (judgements of output `transcript`), one per
    judge and criterion, with the justification; a judgement that kept no per-result verdict (moved by
    migration 10) takes the criterion's from the result's checkpoint verdicts."""
    decided = {cp["checkpoint"]: cp for cp in checkpoints}
    out = []
    for j in judgements:
        if j["output"] != "transcript":
            continue
        fallback = decided.get(j["criterion"]) or {}
        verdict = j["verdict"] or fallback.get("verdict") or "ERROR"
        score = j["score"] if j["verdict"] else fallback.get("score")
        out.append({"criterion": j["criterion"], "judge": j["judge_model"], "verdict": verdict,
                    "score": score, "justification": j["justification"] or fallback.get("reason")})
    return out


def _attributions(shown: list[dict], transcript_verdicts: list[dict], checkpoints: list[dict]) -> list[dict]:
    """The intermediate verdicts a conversation's result was decided from, as EEE answer attributions: each
    turn checkpoint on the model's reply at that turn, each judge's verdict per criterion on the whole
    transcript (read at its last message)."""
    replies = [i for i, m in enumerate(shown) if m["role"] == "assistant"]
    last = len(shown) - 1
    out = []
    judged = {v["criterion"] for v in transcript_verdicts}
    for cp in checkpoints:
        if cp["checkpoint"] in judged:
            continue  # a judged criterion: each judge's verdict follows
        at = replies[min(int(cp["turn"]), len(replies)) - 1] if cp.get("turn") is not None and replies else last
        out.append({"turn_idx": at, "source": f"messages[{at}].content",
                    "extracted_value": f"{cp['checkpoint']}: {cp['verdict']}",
                    "extraction_method": "checkpoint", "is_terminal": False})
    for v in transcript_verdicts:
        out.append({"turn_idx": last, "source": f"messages[0:{last + 1}]",
                    "extracted_value": f"{v['criterion']}: {v['verdict']} ({v['judge']})",
                    "extraction_method": "llm_judge", "is_terminal": False})
    return out


def _sample(common: dict, row, case, judgements: list, usage: tuple | None, transcript: list[dict] | None,
            checkpoints: list[dict] | None = None) -> dict:
    """One instance record: a result with a verdict, single- or multi-turn (a conversation carries the judges'
    transcript-level verdicts and its checkpoints as the evaluation it was decided by)."""
    messages = json.loads(case["messages_json"])
    evaluation = json.loads(case["evaluation_json"])
    tokens, perf, cost = _usage(usage)
    judged = [{"criterion": j["criterion"], "verdict": j["verdict"], "judge": j["judge_model"]} for j in judgements]
    method = "llm_judge" if evaluation.get("type") == "sqe" else str(evaluation.get("type") or "custom")
    record = {
        **common,
        "sample_id": f"{row['case_id']}#{row['sample'] or 0}",
        "sample_hash": row["case_hash"],
        "input": {"raw": _text([m for m in messages if m.get("role") == "user"][-1:] or messages),
                  "formatted": _dumps(messages), "reference": _reference(evaluation)},
        "evaluation": {"score": float(row["score"]), "is_correct": row["verdict"] == "PASS"},
        "metadata": {"helmbench_format": EXTRAS_FORMAT, "case_id": row["case_id"], "sample": row["sample"] or 0,
                     "scenario": row["scenario"], "pillar": row["pillar"], "behaviour": row["behaviour"], "verdict": row["verdict"],
                     "reason": row["reason"], "evaluation_type": evaluation.get("type"), "judgements": judged,
                     "cost_usd": cost},
    }
    if isinstance(row, dict) and "adjudication" in row:  # clinicians' verdicts decided it: a human verdict, marked
        record["metadata"]["adjudication"] = row["adjudication"]
    if transcript is None:
        record.update(interaction_type="single_turn", output={"raw": [row["content"] or ""]})
        turn_of_answer = 0
    else:
        shown = [{"role": m["role"], "content": m.get("content")} for m in messages if m.get("role") == "system"]
        shown += [{"role": t["role"], "content": t["content"]} for t in transcript]
        if not any(t["role"] == "user" for t in transcript):  # the opening is authored: from the case
            shown[len(shown) - len(transcript):len(shown) - len(transcript)] = [
                {"role": m["role"], "content": m.get("content")} for m in messages if m.get("role") != "system"]
        record.update(interaction_type="multi_turn", messages=[{"turn_idx": i, **m} for i, m in enumerate(shown)])
        record["evaluation"]["num_turns"] = max(1, sum(m["role"] == "assistant" for m in shown))
        turn_of_answer = len(shown) - 1
        verdicts = _transcript_verdicts(judgements, checkpoints or [])
        record["metadata"]["transcript_judgements"] = verdicts
        record["metadata"]["checkpoints"] = [{k: cp.get(k) for k in ("checkpoint", "turn", "verdict", "score")}
                                             for cp in checkpoints or []]
        steps = _attributions(shown, verdicts, checkpoints or [])
    record["answer_attribution"] = [*(steps if transcript is not None else []), {
        "turn_idx": turn_of_answer, "source": "output.raw" if transcript is None else f"messages[{turn_of_answer}].content",
        "extracted_value": row["verdict"], "extraction_method": method, "is_terminal": True}]
    if tokens is not None:
        record["token_usage"] = tokens
    if perf is not None:
        record["performance"] = perf
    return record


def _adjudicated(row, run_id: int, adjudication):
    """The result row with the clinicians' verdict and score where they decide it, and `adjudication` (what
    `_sample` writes as `metadata.adjudication`); the row itself otherwise."""
    key = (run_id, row["case_id"], row["sample"] or 0)
    decision = adjudication.decisions.get(key) if adjudication is not None else None
    if decision is None:
        return row
    items = [{"criterion": h.criterion, "judge_verdict": h.judge_verdict, "verdict": h.verdict,
              "reviews": len(h.reviews)} for h in adjudication.history(*key) if h.adjudicated]
    return {**dict(row), "verdict": decision.verdict, "score": decision.score, "adjudication": {
        "judge_verdict": decision.judge_verdict, "judge_score": decision.judge_score, "criteria": items}}


def export_eee(db: Path, out_dir: Path, manifest: Path | None = None, *, bootstrap: int = 1000) -> Exported:
    """Write the EEE records of every ranked run of the leaderboard (see the module docstring)."""
    from helmbench.score.report import load_report
    from helmbench.store import open_readonly, queries
    from helmbench.store.turns import conversation_details

    report = load_report(Path(db), manifest, bootstrap=bootstrap)
    board = report.board
    if not board.ranked:
        raise UsageError(f"no ranked run in {db}: nothing to export",
                         hint="a run is ranked once it covers every case (`helmbench report` lists the others)")
    out_dir = Path(out_dir)
    bench = board.benchmark_name or "HELMBench"
    collection = component(bench, "benchmark name")
    conn = open_readonly(db)
    files: list[Path] = []
    samples = 0
    try:
        from helmbench.score.adjudication import adjudication_of

        adjudication = adjudication_of(conn, board.manifest_hash)
        cases = {r["hash"]: r for r in queries.manifest_case_rows(conn, board.manifest_hash)}
        criteria = {f"{c['scenario']}-{cr['code']}": str(cr.get("text") or "")
                    for c in cases.values() for cr in json.loads(c["evaluation_json"]).get("criteria") or []}
        for row in board.ranked:
            run = row.run
            developer, model = model_folders(run.model)
            folder = out_dir / "data" / collection / developer / model
            uid = _uuid(board.manifest_hash or "", run.model, run.settings_hash)
            repo_path = f"data/{collection}/{developer}/{model}/{uid}"
            judgements: dict[int, list] = {}
            for j in queries.judgement_rows(conn, [run.id]):
                judgements.setdefault(j["result_id"], []).append(j)
            judges = sorted({j["judge_model"] for js in judgements.values() for j in js if j["judge_model"]})
            usage = queries.result_usage(conn, run.id)
            conversations = conversation_details(conn, [run.id])
            common = {"schema_version": SCHEMA_VERSION, "evaluation_id": uid, "model_id": run.model,
                      "evaluation_name": bench, "evaluation_result_id": SCORE_ID}
            lines = []
            for r in queries.result_detail_rows(conn, run.id):
                if r["verdict"] not in ("PASS", "FAIL") or r["score"] is None or r["case_hash"] not in cases:
                    continue  # an ERROR or an ABSTAIN has no verdict and counts in no score
                convo = conversations.get(r["result_id"])
                record = _sample(common, _adjudicated(r, run.id, adjudication), cases[r["case_hash"]],
                                 judgements.get(r["result_id"], []), usage.get(r["result_id"]),
                                 convo[0] if convo else None, convo[1] if convo else None)
                lines.append(_dumps(record))
            if not lines:
                continue
            samples_path = folder / f"{uid}_samples.jsonl"
            with safewrite.atomic(samples_path, out_dir) as f:
                f.write(("\n".join(lines) + "\n").encode("utf-8"))
            aggregate = _aggregate(board, row, bench, uid, repo_path, len(lines), judges, criteria,
                                   report.pillar_titles, hashlib.sha256(("\n".join(lines) + "\n").encode()).hexdigest())
            aggregate_path = folder / f"{uid}.json"
            safewrite.write_text(aggregate_path, _dumps(aggregate) + "\n", out_dir)
            files += [aggregate_path, samples_path]
            samples += len(lines)
    finally:
        conn.close()
    return Exported(out_dir, files, len(files) // 2, samples)


def _aggregate(board, row, bench: str, uid: str, repo_path: str, n_samples: int, judges: list[str],
               criteria: dict[str, str], pillar_titles: dict[str, str], checksum: str) -> dict:
    run = row.run
    stamp = run.finished_at or run.started_at
    judging = _judging(judges, criteria)
    source = {"dataset_name": bench, "source_type": "other",
              "additional_details": {"manifest_hash": board.manifest_hash or "", "cases": str(board.n_cases),
                                     "benchmark_version": board.benchmark_version or ""}}

    def result(metric_id: str, name: str, description: str, score: float, ci, method: str, judged: bool) -> dict:
        details = {"score": float(score)}
        if (uncertainty := _interval(ci, method, row.n_verdicts)) is not None:
            details["uncertainty"] = uncertainty
        return {"evaluation_result_id": metric_id, "evaluation_name": name, "source_data": source,
                "evaluation_timestamp": stamp,
                "metric_config": _metric(metric_id, name, description, judging if judged else None),
                "score_details": details}

    results = [result(SCORE_ID, f"{bench}: weighted score",
                      "Severity- and behaviour-weighted mean of the verdicts' scores, after the safety floors",
                      row.score, row.score_ci, "closed-form interval of the weighted mean", True)]
    if row.pass_rate is not None:
        results.append(result(PASS_RATE_ID, f"{bench}: pass rate", "Share of results with the verdict PASS",
                              row.pass_rate, row.pass_rate_ci, "Wilson score interval", True))
    for pillar, score in sorted(row.pillar_scores.items()):
        if score is not None:
            title = pillar_titles.get(pillar) or pillar
            results.append(result(f"helmbench_pillar_{pillar}", f"{bench}: {pillar} {title}",
                                  f"Weighted score of pillar {pillar}", score, None, "", True))
    details = {k: str(v) for k, v in {
        "helmbench_format": EXTRAS_FORMAT, "rank": row.rank, "tie_group": row.group, "coverage": row.coverage,
        "n_results": row.summary.n_results,
        "n_errors": row.n_errors, "n_abstained": row.n_abstained, "cost_usd": row.cost, "model_cost_usd": row.model_cost,
        "judge_cost_usd": row.judge_cost, "prompt_tokens": row.prompt_tokens,
        "completion_tokens": row.completion_tokens, "run_status": run.status, "samples_per_case": run.samples,
        "settings_hash": run.settings_hash, "capped": row.capped,
        **({} if row.adjudicated is None else {"adjudicated": row.adjudicated[0], "overturned": row.adjudicated[1]}),
    }.items() if v is not None}
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": uid,
        "evaluation_timestamp": stamp,
        "retrieved_timestamp": stamp or "",
        "source_metadata": {"source_name": "HELMBench", "source_type": "evaluation_run",
                            "source_organization_name": bench, "evaluator_relationship": "third_party",
                            "additional_details": details},
        "eval_library": {"name": "helmbench", "version": __version__},
        "model_info": {"name": row.model_name or run.model, "id": run.model, "developer": run.model.split("/")[0],
                       "inference_platform": "openrouter",
                       "additional_details": {"deployment_type": "externally_managed",
                                              "model_availability": "unknown"}},
        "evaluation_results": results,
        "detailed_evaluation_results": {"format": "jsonl", "file_path": f"{repo_path}_samples.jsonl",
                                        "hash_algorithm": "sha256", "checksum": checksum,
                                        "total_rows": n_samples},
    }
