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
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from rich.console import Console

from helmbench import __version__
from helmbench.errors import HelmbenchError, UsageError
from helmbench.run.budget import Budget
from helmbench.run.calls import ProviderError
from helmbench.run.config import RunOptions
from helmbench.run.plan import Plan, build_plan
from helmbench.run.progress import PhaseCounter, Progress
from helmbench.manifest.conversation import result_slots
from helmbench.run.selection import (load_models_file, needs_openrouter_key, parse_shard, refuse_other_user_model,
                                     refuse_structured_for_http,
                                     secret_values, select_models, select_scenarios)
from helmbench.store import DatabaseError
from helmbench.store.ledger import new_uid

log = logging.getLogger("helmbench.run")


@dataclass
class RunReport:
    plan: Plan
    dry_run: bool
    status: str  # completed / partial / interrupted / stopped_cost / dry-run
    runs: list[dict] = field(default_factory=list)
    spent: float = 0.0
    no_key: bool = False
    judge: object = None  # dry-run: judge.JudgeEstimate; run: judge.JudgeOutcome (None: no judge)
    invocation: str = field(default_factory=new_uid)  # names this invocation's calls in the ledger
    ledger: dict = field(default_factory=dict)  # run id → its calls in this invocation (queries.ledger.Ledger)
    stalled: dict = field(default_factory=dict)  # model → why its calls stopped (it never answered in time)


#: The exit code of a run stopped before its end by the money limit or by the provider (a rejected
#: key, an unreachable base URL): distinct from 1 (it ended, with some errors) so scripts can tell.
EXIT_STOPPED = 3


def _fatal_message(err: ProviderError) -> HelmbenchError:
    if err.kind == "auth":
        return HelmbenchError(
            "OpenRouter (or the provider of an entry with its own route) rejected the API key (HTTP 401): check "
            "OPENROUTER_API_KEY, or the variable the entry's `api_key_env` names. The run was stopped; nothing "
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
    from helmbench.run.evaluate.outcome import check_versions
    from helmbench.run.selection import split_values

    manifest = read_manifest(opts.manifest)
    check_versions(manifest.header)  # a plugin's evaluator upgraded since compile: recompile first
    models_path = Path(opts.models_file)
    models = load_models_file(models_path)
    entries = select_models(models, split_values(opts.models), models_path)
    catalog = list((manifest.header.get("catalog") or {}).get("scenarios", {}))
    scenarios = select_scenarios(catalog, split_values(opts.scenarios))
    if scenarios is not None and set(catalog) <= scenarios:
        scenarios = None
    return manifest, entries, scenarios, models


def run(opts: RunOptions, console: Console | None = None, *, verbose: bool = False, live: bool = False,
        on_progress: Callable[[Progress], None] | None = None) -> RunReport:
    """Run the invocation `opts` describes and return its report.

    `console`: where logs and the progress bar go (None: nowhere; pass `on_progress` to follow the
    calls, and read the run's log file). Raises `HelmbenchError` with a message for the user.
    """
    from helmbench.run.judge.judge_plan import estimate, judge_for
    from helmbench.run.logs import run_logging
    from helmbench.run.storage import check_integrity, storage_guard
    from helmbench.store import open_db, open_existing
    from helmbench.store.lock import RunLock

    if not opts.dry_run and opts.api_key is not None:
        from helmbench.run.provider import preload_litellm

        preload_litellm()
    opts = replace(opts, shard=parse_shard(opts.shard))  # "K/N" from a caller that built RunOptions itself
    manifest, entries, scenarios, models = prepare(opts)
    if opts.rejudge_sample and models.marking_model is None:  # else silently nothing: no judge to ask again
        raise UsageError(f"--rejudge-sample {opts.rejudge_sample}: {opts.models_file} names no judge "
                         "(marking_model), so there is no judgement to ask again",
                         hint="add a marking_model to models.yml, or drop --rejudge-sample")
    if manifest.header.get("unreviewed") and not opts.preview:  # generated text nobody signed off: never ranked
        opts = replace(opts, preview=True)
        log.warning("the manifest holds %d case(s) built from generated text not yet reviewed (compile "
                    "--include-unreviewed): this run is a preview, never ranked", int(manifest.header["unreviewed"]))
    case_ids = set(opts.case_ids) if opts.case_ids else None
    no_key = opts.api_key is None and needs_openrouter_key([*entries, *models.judges, *models.simulators])
    if opts.dry_run or no_key:
        db = open_existing(opts.db)
        _adopt_legacy(db, entries)
        plan = build_plan(manifest, entries, db, scenarios=scenarios, case_ids=case_ids, samples=opts.samples,
                          preview=opts.preview, shard=opts.shard, user_models=models.simulators)
        refuse_other_user_model(plan.conversations, models, Path(opts.models_file))
        refuse_structured_for_http(plan)
        judge = _adopt_legacy(db, [], judge_for(opts.models_file, plan))
        from helmbench.run.judge.judge_run import with_rejudge

        judged = with_rejudge(estimate(plan, db, judge), plan, db, judge, opts.rejudge_sample, opts.rejudge_seed)
        return RunReport(plan, True, "dry-run", no_key=no_key, judge=judged)

    console = console if console is not None else Console(stderr=True, quiet=True)
    lock = RunLock(opts.db, opts.command) if str(opts.db) != ":memory:" else nullcontext()
    with lock, storage_guard(opts.db, opts.command):
        db = open_db(opts.db)
        plan = start_runs(db, opts, manifest, entries, scenarios, case_ids, models)
        judge = _adopt_legacy(db, [], judge_for(opts.models_file, plan) if plan.sqe_cases else None)  # before any call
        report = RunReport(plan, False, "failed")
        with run_logging(console, verbose=verbose, live=live, secrets=[opts.api_key or "", *secret_values(models.every_entry)],
                         logs_dir=Path(opts.logs_dir), run_ids=[mp.run_id for mp in plan.models]):
            try:
                for mp in plan.models:
                    log.info("run %d: %s on manifest %s%s: %d new call(s) (%d answer(s), %d conversation turn(s); "
                             "the simulated user's up to %d more), %d stored", mp.run_id, mp.id, manifest.hash[:19],
                             f", shard {opts.shard}" if opts.shard else "", mp.new_calls, mp.new,
                             mp.conversation_turns, mp.user_turns, mp.stored, extra={"run_id": mp.run_id})

                def progress(total: int, phase: str) -> PhaseCounter:  # a live bar draws the events instead
                    phase = f"{phase} (shard {opts.shard})" if opts.shard else phase
                    return PhaseCounter(total, phase=phase, on_progress=on_progress, log_lines=not live)

                ended = call(plan, db, opts, judge, report, progress)
                if ended != "interrupted":  # Ctrl-C should not wait for a scan of the whole file
                    check_integrity(db, opts.db)
                report.status = ended  # until here it is 'failed'
            except ProviderError as err:
                if err.fatal:  # the CLI prints the one message; the run's log file keeps it too
                    log.debug("stopping: %s", err.message)
                    raise _fatal_message(err) from None
                raise
            except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C outside the event loop
                report.status = "interrupted"
            finally:
                finish_runs(db, opts, report,
                            partial=scenarios is not None or case_ids is not None or opts.shard is not None)
    return report


def start_runs(db, opts: RunOptions, manifest, entries, scenarios, case_ids, models) -> Plan:
    """Plan, check the simulated user, register the manifest and models, and open one run row per model."""
    from helmbench.store.catalog import is_registered, register_manifest, upsert_models
    from helmbench.store.responses import settled_results
    from helmbench.store.runs import start_run

    _adopt_legacy(db, entries)
    plan = build_plan(manifest, entries, db, scenarios=scenarios, case_ids=case_ids, samples=opts.samples,
                      preview=opts.preview, shard=opts.shard, user_models=models.simulators)
    refuse_other_user_model(plan.conversations, models, Path(opts.models_file))
    refuse_structured_for_http(plan)
    if not is_registered(db, manifest.hash):
        register_manifest(db, manifest.header, iter(manifest))
    upsert_models(db, [(e.id, e.name) for e in entries])
    for mp in plan.models:
        mp.run_id = start_run(db, manifest_hash=manifest.hash, model=mp.id, settings=mp.settings,
                              settings_hash=mp.settings_hash, samples=opts.samples,
                              n_cases=result_slots(manifest.header) * opts.samples, version=__version__,
                              preview=opts.preview, shard=opts.shard, families=models.families)
        mp.settled = settled_results(db, mp.run_id)
    return plan


def _adopt_legacy(db, entries, judge=None):
    """Rows stored under the settings hashes of older releases are moved to today's (returns `judge`)."""
    from helmbench.run.config import settings_hash
    from helmbench.run.settings_compat import adopt_legacy_hashes

    keyed = [(e.id, e.settings(), settings_hash(e.settings())) for e in entries]
    judges = judge.members if judge else ()  # a Panel: one marking model or an ensemble
    adopt_legacy_hashes(db, keyed + [(j.id, j.settings, j.settings_hash) for j in judges])
    return judge


def call(plan: Plan, db, opts: RunOptions, judge, report: RunReport, progress: Callable[[int, str], PhaseCounter]) -> str:
    """The run's phases (phases.py) on the engine, under one budget."""
    from helmbench.run.phases import Context, JudgePhase, phases, run_phases

    made: list = []

    def provider():  # one for the invocation: what it learnt of each model (a stalled one) holds in every phase
        if not made:
            from helmbench.run.provider import Provider

            from helmbench.run.selection import load_models_file

            entries = load_models_file(Path(opts.models_file)).every_entry
            made.append(Provider(opts.api_key or "", opts.api_base, entries=entries))
        return made[0]

    ctx = Context(plan, db, opts, judge, Budget(opts.max_cost), report.invocation, provider, progress)
    todo = phases()
    try:
        return run_phases(ctx, todo)
    finally:
        report.spent = ctx.budget.spent
        report.judge = next((p.outcome for p in todo if isinstance(p, JudgePhase)), None)
        report.stalled = dict(made[0].stalled) if made else {}


def finish_runs(db, opts: RunOptions, report: RunReport, *, partial: bool) -> None:
    """Record how each run ended (whatever ended it) with its counts refreshed from what was committed."""
    from helmbench.store.judgements import record_judge_totals
    from helmbench.store.queries.ledger import JUDGE_KINDS, invocation_ledger, invocation_rejudge_calls
    from helmbench.store.runs import finish_run

    status = report.status
    if status == "completed" and partial:
        report.status = "partial"
    recorded = "preview" if opts.preview and status != "failed" else report.status  # a preview is never scored
    try:
        report.runs = [record_judge_totals(db, finish_run(db, mp.run_id, "failed" if mp.id in report.stalled
                                                          else recorded)["id"]) for mp in report.plan.models]
        report.ledger = {mp.run_id: invocation_ledger(db, report.invocation, mp.run_id) for mp in report.plan.models}
        if report.judge is not None:  # every judge call of the invocation (answers' and transcripts')
            report.judge.calls = sum(led.calls(kinds=JUDGE_KINDS) for led in report.ledger.values())
            report.judge.cost = sum(led.cost(kinds=JUDGE_KINDS) or 0.0 for led in report.ledger.values())
            report.judge.rejudge = invocation_rejudge_calls(db, report.invocation)
    except DatabaseError as exc:
        if status != "failed":  # else the error that failed the run is already on its way up
            raise
        log.error("could not record how the run ended in %s: %s", opts.db, exc)
    for row in report.runs:
        abstained = f", {row['n_abstained']} abstained (not counted)" if row.get("n_abstained") else ""
        log.info("run %d finished: %s; %d pass, %d fail, %d error%s, %d awaiting the judge", row["id"],
                 row["status"], row["n_pass"], row["n_fail"], row["n_error"], abstained, row["n_awaiting_judge"],
                 extra={"run_id": row["id"]})
