"""One invocation of `helmbench run`, start to finish: check inputs, plan, call, record.

The order matters for money and for trust: every input is checked (manifest hashes, model
ids, scenario codes) before anything is spent; litellm (seconds to import) is imported in a
background thread while the inputs are read and the plan is built, never for a dry run or
without a key; and however the invocation ends (done, Ctrl-C, cost limit, rejected key,
crash), each run row records how it ended and its counts are refreshed from what was committed. One run writes a database
at a time (store/lock.py), and a storage failure (disk full, a damaged file) ends the run
with a message saying what was saved, never a traceback and never "completed".
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from helmbench import __version__
from helmbench.errors import HelmbenchError
from helmbench.run.calls import ProviderError
from helmbench.run.config import RunOptions
from helmbench.run.plan import Plan, build_plan
from helmbench.run.selection import load_models_file, select_models, select_scenarios

log = logging.getLogger("helmbench.run")


@dataclass
class RunReport:
    plan: Plan
    dry_run: bool
    status: str  # completed / partial / interrupted / stopped_cost / dry-run
    runs: list[dict] = field(default_factory=list)
    spent: float = 0.0
    no_key: bool = False
    judge: object = None  # dry-run: judge_plan.JudgeEstimate; run: judge_run.JudgeOutcome (None: no judge)


#: The exit code of a run stopped before its end by the money limit or by the provider (a rejected
#: key, an unreachable base URL): distinct from 1 (it ended, with some errors) so scripts can tell.
EXIT_STOPPED = 3


def _fatal_message(err: ProviderError) -> HelmbenchError:
    if err.kind == "auth":
        return HelmbenchError(
            "OpenRouter rejected the API key (HTTP 401): check OPENROUTER_API_KEY. The run was stopped; nothing "
            "more was sent.", hint="export OPENROUTER_API_KEY=<a key from https://openrouter.ai/keys>, or use --dry-run",
            exit_code=EXIT_STOPPED)
    if err.kind == "payment_required":
        return HelmbenchError("OpenRouter refused the call: payment required (HTTP 402). Add credits and run again.",
                              exit_code=EXIT_STOPPED)
    if err.kind == "unreachable":
        return HelmbenchError(err.message, exit_code=EXIT_STOPPED,
                              hint="run again once it is reachable: nothing stored is asked again")
    return HelmbenchError(f"the run was stopped by a provider error: {err.message}", exit_code=EXIT_STOPPED)


def prepare(opts: RunOptions):
    """Read and check every input; returns (manifest, model entries, scenario selection)."""
    from helmbench.manifest import read_manifest
    from helmbench.run.selection import split_values

    manifest = read_manifest(opts.manifest)
    models_path = Path(opts.models_file)
    entries = select_models(load_models_file(models_path), split_values(opts.models), models_path)
    catalog = list((manifest.header.get("catalog") or {}).get("scenarios", {}))
    scenarios = select_scenarios(catalog, split_values(opts.scenarios))
    if scenarios is not None and set(catalog) <= scenarios:
        scenarios = None
    return manifest, entries, scenarios


def run(opts: RunOptions, console: Console, *, verbose: bool = False, live: bool = False) -> RunReport:
    from helmbench.store import open_existing

    if not opts.dry_run and opts.api_key is not None:
        from helmbench.run.provider import preload_litellm

        preload_litellm()
    manifest, entries, scenarios = prepare(opts)
    case_ids = set(opts.case_ids) if opts.case_ids else None
    no_key = opts.api_key is None
    if opts.dry_run or no_key:
        db = open_existing(opts.db)
        plan = build_plan(manifest, entries, db, scenarios=scenarios, case_ids=case_ids, samples=opts.samples,
                          preview=opts.preview)
        from helmbench.run.judge_plan import estimate, judge_for

        return RunReport(plan, True, "dry-run", no_key=no_key,
                         judge=estimate(plan, db, judge_for(opts.models_file, plan)))

    from helmbench.run.storage import storage_guard
    from helmbench.store.lock import RunLock

    lock = RunLock(opts.db, opts.command) if str(opts.db) != ":memory:" else nullcontext()
    with lock, storage_guard(opts.db, opts.command):
        return _run_locked(opts, console, manifest, entries, scenarios, case_ids, verbose=verbose, live=live)


def _run_locked(opts: RunOptions, console: Console, manifest, entries, scenarios, case_ids, *, verbose: bool,
                live: bool) -> RunReport:
    from helmbench.run.storage import check_integrity
    from helmbench.store import open_db
    from helmbench.store.catalog import is_registered, register_manifest, upsert_models
    from helmbench.store.responses import settled_results
    from helmbench.store.runs import finish_run, start_run

    db = open_db(opts.db)
    if not is_registered(db, manifest.hash):
        register_manifest(db, manifest.header, iter(manifest))
    upsert_models(db, [(e.id, e.name) for e in entries])
    plan = build_plan(manifest, entries, db, scenarios=scenarios, case_ids=case_ids, samples=opts.samples,
                      preview=opts.preview)
    from helmbench.run.judge_plan import judge_for
    from helmbench.store.judgements import record_judge_totals

    judge = judge_for(opts.models_file, plan) if plan.sqe_cases else None  # no judge for sqe: stop before any call
    for mp in plan.models:
        mp.run_id = start_run(db, manifest_hash=manifest.hash, model=mp.id, settings=mp.settings,
                              settings_hash=mp.settings_hash, samples=opts.samples,
                              n_cases=manifest.header.get("cases", 0) * opts.samples, version=__version__,
                              preview=opts.preview)
        mp.settled = settled_results(db, mp.run_id)
    status = "failed"
    report = RunReport(plan, False, status)
    from helmbench.run.logs import run_logging

    with run_logging(console, verbose=verbose, live=live, secrets=[opts.api_key or ""],
                     logs_dir=Path(opts.logs_dir), run_ids=[mp.run_id for mp in plan.models]):
        try:
            for mp in plan.models:
                log.info("run %d: %s on manifest %s: %d new call(s), %d stored", mp.run_id, mp.id,
                         manifest.hash[:19], mp.new, mp.stored, extra={"run_id": mp.run_id})
            ended, report.spent, report.judge = _execute(plan, db, opts, console, live, judge)
            if ended != "interrupted":  # Ctrl-C should not wait for a scan of the whole file
                check_integrity(db, opts.db)
            status = ended
        except ProviderError as err:
            if err.fatal:  # the CLI prints the one message; the run's log file keeps it too
                log.debug("stopping: %s", err.message)
                raise _fatal_message(err) from None
            raise
        except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C outside the event loop (e.g. while importing)
            status = "interrupted"
        finally:
            final = status
            if status == "completed" and (scenarios is not None or case_ids is not None):
                final = "partial"
            report.status = final
            recorded = "preview" if opts.preview and status != "failed" else final  # a preview is never scored
            try:
                report.runs = [record_judge_totals(db, finish_run(db, mp.run_id, recorded)["id"])
                               for mp in plan.models]
            except sqlite3.Error as exc:
                if status != "failed":  # else the error that failed the run is already on its way up
                    raise
                log.error("could not record how the run ended in %s: %s", opts.db, exc)
            for row in report.runs:
                log.info("run %d finished: %s; %d pass, %d fail, %d error, %d awaiting the judge", row["id"],
                         row["status"], row["n_pass"], row["n_fail"], row["n_error"], row["n_awaiting_judge"],
                         extra={"run_id": row["id"]})
    return report


def _execute(plan: Plan, db, opts: RunOptions, console: Console, live: bool, judge=None) -> tuple[str, float, object]:
    from helmbench.run.executor import Executor
    from helmbench.run.progress import Progress
    from helmbench.run.writer import Writer

    provider = None
    if plan.new_calls:
        from helmbench.run.provider import Provider

        provider = Provider(opts.api_key or "", opts.api_base)
    writer = Writer(opts.db)
    with Progress(plan.new_calls, console, live=live) as progress:
        ex = Executor(plan, db, provider, writer, progress, concurrency=opts.concurrency, policy=opts.retry,
                      max_cost=opts.max_cost)
        status = asyncio.run(ex.execute())
    spent = ex.spent
    if plan.conversations and status == "completed":  # each turn one call, stored before the next
        from helmbench.run.conversation.runner import run_conversations

        status, spent = run_conversations(plan, db, opts, console, live, judge, spent=spent)
    if judge is None or status == "interrupted":
        return status, spent, None
    from helmbench.run.judge_run import combine_status, run_judge

    judge_status, spent, outcome = run_judge(plan, db, opts, console, live, judge, spent=spent)
    return combine_status(status, judge_status), spent, outcome
