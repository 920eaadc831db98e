"""Judging conversations that already happened (`helmbench import transcripts FILE --source NAME`).

Why through the run's own parts: an imported conversation is stored as the output of a run (model
`imported:NAME/LABEL`, status `imported`, store/imports.py): its turns in `turns` like a scripted
conversation's, a one-exchange answer of a single-turn scenario in `responses`. It is then judged by the run's
judge phase (`phases.JudgePhase` on the engine: the same work generator, judge prompt, cache, budget, writer
and call ledger), and nothing else: no answer phase, no conversation phase, so no model under test and no
simulated user is ever called. Each conversation is judged as the case it names (or the first case of the
scenario it names), the case's request replaced by what really happened: its opening is the file's system
messages and first user message, its later user messages are the conversation's "script" and its replies the
stored turns, so `transcript.walk` rebuilds exactly the file's conversation for the judge.
"""

from __future__ import annotations

import json
import logging
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from helmbench import __version__
from helmbench.errors import HelmbenchError
from helmbench.manifest.canonical import hash_of
from helmbench.manifest.conversation import is_conversation, turn_keys
from helmbench.run.config import DEFAULT_CONCURRENCY, RetryPolicy, RunOptions, settings_hash
from helmbench.store.imports import ImportRun, Imported, model_id
from helmbench.store.runs import IMPORTED, now
from helmbench.store.transcript_files import TranscriptLine, raise_problems, read

log = logging.getLogger("helmbench.run.imported")

#: A source's name: it is part of a model id and of the site's page addresses.
SOURCE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
MAX_SOURCE = 64


@dataclass
class ImportOptions:
    """Everything one `helmbench import transcripts` was asked to do."""

    file: str
    source: str
    manifest: str = "build/manifest.jsonl"
    models_file: str = "benchmark/models.yml"
    db: str = "build/results.db"
    dry_run: bool = False
    concurrency: int = DEFAULT_CONCURRENCY
    max_cost: float | None = None


@dataclass
class ImportReport:
    """What an import stored and what the judge did (or would do: a dry run)."""

    source: str
    file: str
    dry_run: bool
    status: str  # dry-run / imported / interrupted / stopped_cost
    conversations: int  # in the file
    new: int  # stored now (a dry run: would be)
    already: int  # stored before under the same content (a re-import)
    by_model: dict[str, int]  # model label → conversations in the file
    judge: str | None  # the judge(s)
    judge_calls: int  # a dry run: the calls it would make; else those made
    judge_cached: int  # criterion judgements reused from the store
    judge_cost_low: float | None  # a dry run's estimate (None: no known price)
    judge_cost_high: float | None
    judge_cost: float | None = None  # billed now (from the ledger)
    model_calls: int = 0  # calls to a model under test or a simulated user: none, by construction
    runs: list[dict] = field(default_factory=list)  # the imported runs' rows after judging


@dataclass
class Resolved:
    """One line of the file and the case it is judged as."""

    line: TranscriptLine
    case: dict  # the manifest's case (its criteria, its hash)
    judged: dict  # that case with the conversation's own request (what the judge is shown)
    content_hash: str
    model: str  # the model id it is stored under
    sample: int = 0
    stored: bool = False


def check_source(source: str) -> str:
    if not source or len(source) > MAX_SOURCE or not set(source) <= SOURCE_CHARS:
        raise HelmbenchError(f"--source {source[:80]!r}: a source's name is 1 to {MAX_SOURCE} letters, digits, `.`, "
                             "`_` or `-` (it names the imported model on the site)", exit_code=2)
    return source


def settings_of(source: str) -> dict:
    """An imported run's settings: only where it came from (its settings hash keys its turns and answers)."""
    return {"imported": source}


def judged_case(case: dict, messages: tuple[dict, ...]) -> dict:
    """`case` with the request the conversation really had: its system messages and first user message as the
    opening, its later user messages as a scripted conversation's turns (a single-turn case: the opening only).
    Free text: no response format (an imported reply was not asked for one)."""
    first = next(i for i, m in enumerate(messages) if m["role"] == "user")
    opening = [dict(m) for m in messages[:first + 1]]
    request: dict = {"messages": opening, "response_format": None}
    if is_conversation(case):
        later = [m["content"] for m in messages[first + 1:] if m["role"] == "user"]
        request["conversation"] = {"user": "scripted", "turns": later}
    return {**case, "request": request, "request_hash": hash_of(request)}


def _exchanges(messages: tuple[dict, ...]) -> list[tuple[str, str]]:
    chat = [m for m in messages if m["role"] != "system"]
    return [(chat[i]["content"], chat[i + 1]["content"]) for i in range(0, len(chat), 2)]


def resolve(lines: list[TranscriptLine], manifest, source: str, path: Path,
            problems: list[str] | None = None) -> list[Resolved]:
    """Each line against the manifest: its case (or its scenario's first case), judged (sqe) and of the right
    shape; every problem named at its line. Duplicates within the file: the same conversation once, a different
    one under the same key refused naming both lines."""
    by_id: dict[str, dict] = {}
    by_scenario: dict[str, dict] = {}
    for case in manifest:
        by_id[case["id"]] = case
        by_scenario.setdefault(case["scenario"], case)
    problems = list(problems or [])
    out: list[Resolved] = []
    seen: dict[tuple[str, str], Resolved] = {}
    for ln in lines:
        if ln.case is not None:
            case = by_id.get(ln.case)
            if case is None:
                problems.append(f"{ln.where}: `case`: {ln.case!r} is not a case of the manifest "
                                "(give `scenario` for a conversation that was not one of its cases)")
                continue
        else:
            case = by_scenario.get(ln.scenario)
            if case is None:
                problems.append(f"{ln.where}: `scenario`: {ln.scenario!r} is not a scenario of the tree")
                continue
        if case["evaluation"]["type"] != "sqe":
            problems.append(f"{ln.where}: {case['scenario']} is scored by `{case['evaluation']['type']}`, not by the "
                            "judge: only judged (sqe) scenarios can judge an imported conversation")
            continue
        if not is_conversation(case) and len(_exchanges(ln.messages)) != 1:
            problems.append(f"{ln.where}: `messages`: {case['scenario']} is a single-turn scenario: give one exchange "
                            "(the person's message and the assistant's reply)")
            continue
        content = hash_of({"case": ln.case, "scenario": ln.scenario, "model": ln.model,
                           "messages": list(ln.messages)})
        r = Resolved(ln, case, judged_case(case, ln.messages), content, model_id(source, ln.model))
        before = seen.get((ln.model, ln.id))
        if before is not None:
            if before.content_hash != content:
                problems.append(f"{ln.where}: conversation {ln.id!r} of model {ln.model!r} is on {before.line.where} "
                                "too, with other content: one key, two conversations")
            continue
        seen[(ln.model, ln.id)] = r
        out.append(r)
    if problems:
        problems.sort(key=_line_number)
        raise_problems(path, problems)
    return out


def _line_number(problem: str) -> int:
    head = problem.split(": ", 1)[0]
    number = head.rsplit(":", 1)[-1]
    return int(number) if number.isdigit() else 0


def against_store(items: list[Resolved], conn, manifest_hash: str, source: str, path: Path) -> None:
    """Mark what is stored already under the same content (a re-import), refuse a different conversation under
    a stored key (naming both), and give each new conversation its sample: its place among the imported
    conversations of its case for that model label."""
    from helmbench.store.imports import stored_imports, used_samples
    from helmbench.store.queries.runs import run_of

    stored = stored_imports(conn, [(source, r.line.model, r.line.id) for r in items]) if conn is not None else {}
    problems = []
    taken: dict[tuple[str, str], set[int]] = {}
    sh = settings_hash(settings_of(source))
    for r in items:
        row = stored.get((source, r.line.model, r.line.id))
        if row is not None:
            if row["content_hash"] != r.content_hash:
                problems.append(f"{r.line.where}: conversation {r.line.id!r} of model {r.line.model!r} from source "
                                f"{source!r} is already stored from {row['file']}:{row['line']} with other content; "
                                "a different conversation needs its own `id`")
            elif row["case_hash"] != r.case["hash"]:
                problems.append(f"{r.line.where}: conversation {r.line.id!r} is stored as case {row['case_id']} of "
                                "another manifest: import it against that manifest, or give it a new `id`")
            else:
                r.stored, r.sample = True, row["sample"]
                taken.setdefault((r.model, r.case["hash"]), set()).add(row["sample"])
    if problems:
        raise_problems(path, problems)
    for r in items:
        if r.stored:
            continue
        key = (r.model, r.case["hash"])
        if key not in taken:
            run = run_of(conn, manifest_hash, r.model, sh) if conn is not None else None
            taken[key] = used_samples(conn, run, r.case["hash"]) if run is not None else set()
        r.sample = next(n for n in range(len(taken[key]) + 1) if n not in taken[key])
        taken[key].add(r.sample)


def to_store(r: Resolved, source: str, manifest, at: str) -> Imported:
    """The rows of one new conversation: its turns (or its answer) and its `imports` row."""
    sh = settings_hash(settings_of(source))
    case, judged = r.case, r.judged
    base = {"model": r.model, "settings_hash": sh, "sample": r.sample, "case_id": case["id"],
            "request_hash": judged["request_hash"], "source": "imported", "created_at": at}
    turns: list[dict] = []
    response = None
    if is_conversation(case):
        for k, (key, (said, reply)) in enumerate(zip(turn_keys(judged), _exchanges(r.line.messages)), start=1):
            turns.append({**base, "turn_key": key, "role": "user", "turn": k, "content": said})
            turns.append({**base, "turn_key": key, "role": "assistant", "turn": k, "content": reply,
                          "finish_reason": "stop"})
    else:
        response = {"request_hash": judged["request_hash"], "model": r.model, "settings_hash": sh,
                    "sample": r.sample, "content": r.line.messages[-1]["content"], "finish_reason": "stop",
                    "created_at": at}
    row = {"source": source, "model_label": r.line.model, "conversation": r.line.id, "content_hash": r.content_hash,
           "case_id": case["id"], "case_hash": case["hash"], "scenario": case["scenario"], "sample": r.sample,
           "output": "transcript" if turns else "answer",
           "opening_json": json.dumps(judged["request"]["messages"], ensure_ascii=False),
           "occurred_at": r.line.occurred_at,
           "provenance": r.line.provenance, "file": r.line.file, "line": r.line.line, "imported_at": at}
    run = ImportRun(manifest.hash, r.model, json.dumps(settings_of(source), sort_keys=True), sh,
                    int(manifest.header.get("cases", 0)), __version__, at)
    return Imported(row, run, turns, response)


def _plan(items: list[Resolved], manifest, source: str, run_ids: dict[str, int]):
    """The judge phase's plan: each conversation a case of its own model label and sample (`case["imported"]`)."""
    from helmbench.run.plan import ModelPlan, Plan
    from helmbench.spec.models import ModelEntry

    settings = settings_of(source)
    sh = settings_hash(settings)
    models = [ModelPlan(ModelEntry.model_construct(id=m, name=None), settings, sh, run_id=run_ids.get(m))
              for m in dict.fromkeys(r.model for r in items)]
    cases = [{**r.judged, "imported": {"model": r.model, "sample": r.sample}} for r in items]
    plan = Plan(_Cases(cases, manifest.hash), models, None, None, 1)
    plan.cases = plan.sqe_cases = len(cases)
    return plan


class _Cases(list):
    """The plan's cases: a list, with the manifest's hash as the plan's manifest has it."""

    def __init__(self, cases, manifest_hash: str):
        super().__init__(cases)
        self.hash = manifest_hash


def _estimate(plan, items: list[Resolved], db, judge, models_file: str, db_path: str):
    """(judge calls, reused judgements, cost low, cost high) the judge phase would make now: the judge plan's own
    estimate over the stored conversations, and for those not stored yet, the same judge requests built from
    the file (priced by run/estimate.py as any call)."""
    from helmbench.run.conversation import verdict as V
    from helmbench.run.estimate import Estimator
    from helmbench.run.judge.judge_prompt import judge_request, judge_request_hash
    from helmbench.run.selection import load_models_file
    from helmbench.store.judgements import find_judgement

    entries = load_models_file(Path(models_file)).judges
    est = Estimator(entries, db_path if Path(db_path).exists() else None)
    needed: set[tuple[str, str]] = set()
    cached = 0
    settled = _settled(plan, db)
    for case, r in zip(plan.manifest, items):
        if (case["hash"], r.sample) in settled.get(r.model, set()):
            continue
        messages = list(r.line.messages)  # what the stored conversation replays as (transcript.walk)
        if is_conversation(case):
            pairs = V.criterion_requests(case, messages)
        else:
            pairs = [(cr, judge_request(cr, case["request"]["messages"], messages[-1]["content"]))
                     for cr in case["evaluation"]["criteria"]]
        for _, request in pairs:
            h = judge_request_hash(request)
            for member in judge.members:
                if db is not None and (row := find_judgement(db, h, member.id, member.settings_hash)) is not None \
                        and row.get("error_kind") is None:
                    cached += 1
                elif (member.id, h) not in needed:
                    needed.add((member.id, h))
                    est.add(member.id, {"request": request, "scenario": case["scenario"]}, 1)
    low, high = est.result().total()
    priced = all(m.price is not None for m in est.result().models if m.calls)
    return len(needed), cached, (low if priced else None), (high if priced else None)


def _settled(plan, db) -> dict[str, set]:
    from helmbench.store.responses import settled_results

    if db is None:
        return {}
    return {mp.id: settled_results(db, mp.run_id) for mp in plan.models if mp.run_id is not None}


def import_transcripts(opts: ImportOptions) -> ImportReport:
    """Read, check and store the file's conversations (one transaction), then judge them (the judge only)."""
    from helmbench.manifest import read_manifest
    from helmbench.run.judge.judge_plan import judge_for

    source = check_source(opts.source)
    path = Path(opts.file)
    manifest = read_manifest(opts.manifest)
    lines, problems = read(path)
    items = resolve(lines, manifest, source, path, problems)
    by_model: dict[str, int] = {}
    for r in items:
        by_model[r.line.model] = by_model.get(r.line.model, 0) + 1
    if opts.dry_run:
        return _dry_run(opts, manifest, source, items, by_model)

    from helmbench.run.storage import storage_guard
    from helmbench.store import open_db
    from helmbench.store.catalog import is_registered, register_manifest, upsert_models
    from helmbench.store.imports import write_imports
    from helmbench.store.lock import RunLock

    command = "helmbench import transcripts"
    lock = RunLock(opts.db, command) if str(opts.db) != ":memory:" else nullcontext()
    with lock, storage_guard(opts.db, command):
        db = open_db(opts.db)
        against_store(items, db.conn, manifest.hash, source, path)
        probe = _plan(items, manifest, source, {})
        judge = judge_for(opts.models_file, probe)  # before anything is stored: a tree without a judge is refused
        if not is_registered(db, manifest.hash):
            register_manifest(db, manifest.header, iter(manifest))
        upsert_models(db, [(r.model, f"{r.line.model} (imported from {source})") for r in items])
        at = now()
        new = [r for r in items if not r.stored]
        runs = write_imports(db, [to_store(r, source, manifest, at) for r in new])
        from helmbench.store.queries.runs import run_of

        sh = settings_hash(settings_of(source))
        run_ids = {m: runs.get(m) or run_of(db.conn, manifest.hash, m, sh) for m in dict.fromkeys(r.model for r in items)}
        plan = _plan(items, manifest, source, run_ids)
        status, outcome = _judge(plan, db, opts, judge)
        report = ImportReport(source, path.name, False, IMPORTED if status == "completed" else status, len(items),
                              len(new), len(items) - len(new), by_model, judge.id if judge else None,
                              outcome.calls if outcome else 0, outcome.reused if outcome else 0, None, None,
                              judge_cost=outcome.cost if outcome else None)
        from helmbench.store.judgements import record_judge_totals
        from helmbench.store.runs import finish_run

        report.runs = [record_judge_totals(db, finish_run(db, run_id, IMPORTED)["id"]) for run_id in run_ids.values()]
    return report


def _dry_run(opts: ImportOptions, manifest, source: str, items: list[Resolved], by_model: dict) -> ImportReport:
    from helmbench.run.judge.judge_plan import judge_for
    from helmbench.store import open_reader
    from helmbench.store.queries.runs import run_of

    db = open_reader(opts.db) if Path(opts.db).exists() else None
    path = Path(opts.file)
    against_store(items, db.conn if db is not None else None, manifest.hash, source, path)
    sh = settings_hash(settings_of(source))
    run_ids = {m: run_of(db.conn, manifest.hash, m, sh) if db is not None else None
               for m in dict.fromkeys(r.model for r in items)}
    plan = _plan(items, manifest, source, run_ids)
    judge = judge_for(opts.models_file, plan)
    calls, cached, low, high = _estimate(plan, items, db, judge, opts.models_file, opts.db)
    new = sum(not r.stored for r in items)
    return ImportReport(source, path.name, True, "dry-run", len(items), new, len(items) - new, by_model, judge.id,
                        calls, cached, low, high)


def _judge(plan, db, opts: ImportOptions, judge):
    """The run's judge phase, alone, on the engine under one budget: only the judge is called."""
    from helmbench.run.budget import Budget
    from helmbench.run.phases import Context, JudgePhase, run_phases
    from helmbench.run.progress import PhaseCounter
    from helmbench.store.ledger import new_uid

    made: list = []

    def provider():
        if not made:
            from helmbench.run.provider import Provider
            from helmbench.run.selection import load_models_file

            made.append(Provider(run_opts.api_key or "", run_opts.api_base,
                                 entries=load_models_file(Path(opts.models_file)).judges))
        return made[0]

    run_opts = RunOptions(manifest=opts.manifest, models_file=opts.models_file, db=opts.db,
                          concurrency=opts.concurrency, max_cost=opts.max_cost, command="helmbench import transcripts",
                          retry=RetryPolicy.from_env())
    ctx = Context(plan, db, run_opts, judge, Budget(opts.max_cost), new_uid(), provider,
                  lambda total, what: PhaseCounter(total, phase=what, log_lines=False))
    phase = JudgePhase()
    status = run_phases(ctx, [phase])
    if phase.outcome is not None:
        from helmbench.store.queries.ledger import JUDGE_KINDS, invocation_ledger

        ledgers = [invocation_ledger(db, ctx.invocation, mp.run_id) for mp in plan.models]
        phase.outcome.calls = sum(led.calls(kinds=JUDGE_KINDS) for led in ledgers)
        phase.outcome.cost = sum(led.cost(kinds=JUDGE_KINDS) or 0.0 for led in ledgers)
    return status, phase.outcome
