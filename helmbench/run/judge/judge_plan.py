"""What the judge has to do: the marking model, and per sqe case the criteria still to judge.

What criteria are judged on is a stored output: a single answer (`responses`) or a conversation's
transcript (its stored turns, replayed by `conversation.transcript`); both are work of the same
kind (`CaseWork`), judged by the same job kind, cached under the same key (the judge request).

Why a separate streaming pass: the judge request embeds the model's stored output, so what
needs judging is only known from the database. One generator (`iter_work`) serves the dry-run
estimate, the progress total and the judging itself, so the three always agree. It holds
nothing per single answer, like the run's plan, and looks each judgement up by its cache key; a
conversation's rebuilt transcript is kept in the phase's cache (`transcripts`) until its case is
decided, so that the estimate and every judge's lane read its turns once.

The re-judge lane (`run --rejudge-sample`) walks the same generator over a seeded sample of judged
outputs (`rejudge_sample`, `only`) with the panel's `lane(1)`: the same requests, keyed apart.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator

from helmbench.errors import HelmbenchError
from helmbench.run.config import settings_hash
from helmbench.run.evaluate.outcome import Outcome
from helmbench.run.judge.judge import (CriterionVerdict, check_verdicts, error, not_applicable, precheck,
                                      verdict_of)
from helmbench.run.judge.judge_prompt import judge_request, judge_request_hash
from helmbench.manifest.conversation import is_conversation
from helmbench.run.conversation.transcript import Conversation, ending, stored_transcript
from helmbench.run.plan import Job, Plan, iter_jobs
from helmbench.store.judgements import find_judgement
from helmbench.store.lanes import lane_settings_hash
from helmbench.store.responses import stored_response


@dataclass(frozen=True)
class JudgeModel:
    """The marking model and its settings (temperature 0 unless models.yml says otherwise)."""

    id: str
    settings: dict
    settings_hash: str
    concurrency: int | None = None  # models.yml's, else `--concurrency`

    @classmethod
    def from_entry(cls, entry) -> "JudgeModel":
        settings = {"temperature": 0, **entry.settings()}
        return cls(entry.id, settings, settings_hash(settings), entry.concurrency)


@dataclass(frozen=True)
class Panel:
    """The marking model(s) of an invocation: one judge, or an ensemble (models.yml lists several).

    Every member judges every criterion (each judgement cached under its own model and settings);
    the criterion's verdict is their majority, a tie being a FAIL (`judge.combine`).
    """

    members: tuple[JudgeModel, ...]

    @property
    def id(self) -> str:
        """The judge(s) in a message: `openai/gpt-4.1` or `a/one + b/two + c/three`."""
        return " + ".join(m.id for m in self.members)

    @property
    def where(self) -> str:
        """Where its calls go, per judge (the dry run names it)."""
        from helmbench.run.provider import openrouter_base, where_to

        return "; ".join(where_to(m.id, m.settings, openrouter_base()) for m in self.members)

    def lane(self, replicate: int) -> "Panel":
        """The same judges in re-judge lane `replicate` (`run --rejudge-sample`): the same requests with the
        same settings are sent, and their judgements are keyed apart (`store.lanes.lane_settings_hash`),
        so a rejudge is a new call and never touches the first lane's verdicts."""
        return Panel(tuple(replace(m, settings_hash=lane_settings_hash(m.settings_hash, replicate))
                           for m in self.members))


def judge_for(models_file: str | Path, plan: Plan) -> Panel | None:
    """The judge(s) of this invocation; a clear error, before anything is sent, if sqe cases have none."""
    from helmbench.run.selection import load_models_file

    entries = load_models_file(Path(models_file)).judges
    ids = [e.id for e in entries]
    twice = next((i for i in ids if ids.count(i) > 1), None)
    if twice is not None:
        raise HelmbenchError(f"{models_file} lists the judge `{twice}` twice in `marking_model`: it would vote twice",
                             exit_code=2, hint="remove one of the two entries (`helmbench lint` shows where)")
    if not entries:
        if plan.sqe_cases:
            raise HelmbenchError(
                f"{plan.sqe_cases} selected case(s) are judged (sqe) but {models_file} names no `marking_model`; "
                "nothing was sent",
                hint="add `marking_model: {id: openai/gpt-4.1, temperature: 0}` to models.yml, or run other "
                     "scenarios with --scenario")
        return None
    return Panel(tuple(JudgeModel.from_entry(e) for e in entries))


@dataclass
class Item:
    """One criterion of one case for one judge: the request, its cache key, and the stored judgement if any."""

    criterion: dict
    request: dict
    hash: str
    stored: dict | None
    judge: JudgeModel | None = None

    @property
    def cached(self) -> bool:
        return self.stored is not None and self.stored.get("error_kind") is None


@dataclass
class CaseWork:
    """One judged output (an answer or a transcript) of one (case, model, sample), and its criteria."""

    job: Job
    response: dict | None  # the stored answer; None for a transcript, or when the model has not answered yet
    outcome: Outcome | None  # a verdict that needs no judge (API error, malformed output)
    items: list[Item] = field(default_factory=list)
    checks: list = field(default_factory=list)  # verdicts of the case's deterministic criteria (no call)
    transcript: Conversation | None = None  # a conversation's, replayed from its stored turns (`rows`: checkpoints)
    gated: list = field(default_factory=list)  # verdicts of criteria its gates kept from being asked (no call)
    waiting: list = field(default_factory=list)  # criteria whose gate is not judged yet: asked in a later round

    @property
    def output(self) -> str:
        """What its criteria are judged on (`judgements.output`)."""
        return "transcript" if self.transcript is not None else "answer"

    @property
    def to_call(self) -> list[Item]:
        return [i for i in self.items if not i.cached]


def work_key(job: Job) -> tuple[str, str, int]:
    """One judged output of the run: (model id, case hash, sample)."""
    return job.model.id, job.case["hash"], job.sample


def iter_work(plan: Plan, db, judge: Panel, settled: dict[str, set] | None = None, *,
              unanswered: bool = False, transcripts: dict | None = None,
              only: frozenset | None = None, called: dict | None = None) -> Iterator[CaseWork]:
    """Every selected sqe (case, model, sample) without a verdict in its run, in manifest order, whose output
    is stored: a single answer, or a conversation whose every turn is stored (`unanswered`: the others too,
    without a response, for the estimate).

    Its items: per criterion, one per member of the panel (in the panel's order).

    `settled`: per model id, the (case_hash, sample) that have a PASS or FAIL in the run (read
    from the store: the answer phase's own bookkeeping counts a case handed to the judge as done).
    `transcripts`: the phase's cache of rebuilt transcripts (`work_key` → the transcript's work or None),
    so that the estimate and every judge's lane walk one rebuild per conversation.
    `only`: the `work_key`s to walk (a re-judge sample); None: every one.
    `called`: the judgements made earlier in this invocation ((judge, request hash) → row), which decide gates
    as stored ones do (`gated_items`).
    """
    settled = settled or {}
    for job in iter_jobs(plan, conversations=True):
        case, mp = job.case, job.model
        if case["evaluation"]["type"] != "sqe" or (case["hash"], job.sample) in settled.get(mp.id, ()):
            continue
        if only is not None and work_key(job) not in only:
            continue
        if is_conversation(case):
            work = transcript_work(job, db, judge, transcripts, called)
            if work is not None or unanswered:
                yield work or CaseWork(job, None, None)
            continue
        response = None
        if db is not None:
            response = stored_response(db, case["request_hash"], mp.id, mp.settings_hash, job.sample)
        if response is None:
            if unanswered:
                yield CaseWork(job, None, None)
            continue
        outcome = precheck(case, response)
        if outcome is not None:
            yield CaseWork(job, response, outcome)
            continue
        messages = case["request"]["messages"]
        items, gated, waiting = gated_items(case["evaluation"]["criteria"],
                                            lambda cr: judge_request(cr, messages, response["content"]),
                                            db, judge, called)
        yield CaseWork(job, response, None, items, check_verdicts(case, response["content"]), gated=gated,
                       waiting=waiting)


def items_of(pairs: list[tuple[dict, dict]], db, judge: Panel) -> list[Item]:
    """Per (criterion, judge request), one item per member of the panel, with its stored judgement if any."""
    items = []
    for criterion, request in pairs:
        h = judge_request_hash(request)
        for member in judge.members:
            items.append(Item(criterion, request, h, find_judgement(db, h, member.id, member.settings_hash), member))
    return items


def gated_items(criteria: list[dict], request_of, db, judge: Panel, called: dict | None = None,
                ) -> tuple[list[Item], list[CriterionVerdict], list[dict]]:
    """The items of a case's criteria in the order given, with their gates applied (`applies_when`):
    (items to judge or reuse, verdicts of the criteria a gate kept from being asked, criteria whose gate has
    no judgement yet). A gate is read from its judgements, stored or made earlier in this invocation (`called`),
    by every judge of the panel: it opens when at least half of them gave one of its answers (asking is the
    careful side of a split). A gate that was not asked (its own gate said no) keeps its criterion out too; one
    that errored keeps it from being asked, and the case is an ERROR through the gate's own verdict. Only
    `request_of(criterion)` of a criterion that may be asked is built."""
    by_code = {cr["code"]: cr for cr in criteria}
    state: dict[str, tuple] = {}  # code → ("asked", its items) | ("off", why) | ("waiting",) | ("error",)

    def resolve(cr: dict, depth: int = 0) -> tuple:
        code = cr["code"]
        if code in state:
            return state[code]
        gate = cr.get("applies_when")
        if gate is None or depth > len(criteria):  # lint refuses cycles; a hand-written one just asks
            found = ("asked", items_of([(cr, request_of(cr))], db, judge))
        else:
            found = _through(gate, by_code.get(gate["criterion"]), resolve, depth, called)
            if found[0] == "asked":
                found = ("asked", items_of([(cr, request_of(cr))], db, judge))
        state[code] = found
        return found

    items, gated, waiting = [], [], []
    for cr in criteria:
        found = resolve(cr)
        if found[0] == "asked":
            items.extend(found[1])
        elif found[0] == "off":
            gated.append(not_applicable(cr, found[1]))
        elif found[0] == "waiting":
            waiting.append(cr)
        else:
            gated.append(error(cr, "gate_error", f"not asked: its gate {cr['applies_when']['criterion']} errored"))
    return items, gated, waiting


def _through(gate: dict, gating: dict | None, resolve, depth: int, called: dict | None) -> tuple:
    """Whether a gate lets its criterion be asked: ("asked",) when it opens, ("off", why), ("waiting",) while
    the gating criterion's judgements are not all in, ("error",) when one of them failed."""
    if gating is None:  # lint refuses an unknown criterion; a manifest written by hand: the criterion is asked
        return ("asked",)
    upstream = resolve(gating, depth + 1)
    if upstream[0] == "off":
        return ("off", f"{gating['code']} was not applicable")
    if upstream[0] != "asked":
        return upstream
    rows = []
    for item in upstream[1]:
        row = item.stored if item.cached else (called or {}).get((item.judge.id, item.hash))
        if row is None:
            return ("waiting",)
        rows.append(row)
    verdicts = [verdict_of(gating, row) for row in rows]
    if any(v.verdict == "ERROR" for v in verdicts):
        return ("error",)
    question, allowed = gate.get("question"), set(gate["answers"])
    given = [(v.answers or {}).get(question) if question else v.judgment for v in verdicts]
    opens = sum(bool(set(g) & allowed) if isinstance(g, list) else g in allowed for g in given)
    if opens * 2 >= len(given):
        return ("asked",)
    what = f"{gating['code']} {question}" if question else gating["code"]
    return ("off", f"{what} = " + " / ".join(_said(g) for g in given))


def _said(given) -> str:
    return ", ".join(given) if isinstance(given, list) else str(given)


def transcript_work(job: Job, db, judge: Panel, transcripts: dict | None = None,
                    called: dict | None = None) -> CaseWork | None:
    """A conversation's transcript to judge: None while turns are left to ask, or when it needs no judge
    (the conversation phase decided it: no reply, or a last reply that cannot be judged).

    Why a cache (`transcripts`, one per judge phase): rebuilding a transcript reads every stored turn of
    the conversation; the phase's estimate and each judge's lane (the lanes of an ensemble walk the same
    cases) would otherwise rebuild it once each. The judge kind drops an entry once its case is decided,
    so what stays cached is the transcripts still awaiting their judgements. The cached items keep the
    stored judgements seen at the first rebuild: a lane that meets an open case takes the open one, and a
    decided case is skipped before its transcript is asked for."""
    if db is None:
        return None
    key = work_key(job)
    if transcripts is not None and key in transcripts:
        return transcripts[key]
    s = stored_transcript(job.case, job.model, job.sample, db)
    pairs = ending(s) if s is not None else []
    work = None
    if pairs:
        requests = {cr["code"]: request for cr, request in pairs}
        items, gated, waiting = gated_items([cr for cr, _ in pairs], lambda cr: requests[cr["code"]], db, judge,
                                            called)
        work = CaseWork(job, None, None, items, transcript=s, gated=gated, waiting=waiting)
    if transcripts is not None:
        transcripts[key] = work
    return work


@dataclass
class JudgeEstimate:
    """What judging would cost in calls; `calls` is exact (deduplicated), `upto_new` an upper bound."""

    model: str | None
    calls: int = 0  # judge calls for answers already stored
    cached: int = 0  # criterion judgements reused from the store
    no_judge: int = 0  # cases decided without the judge (API error, malformed output)
    unanswered: int = 0  # sqe cases whose answer is not stored yet
    upto_new: int = 0  # at most this many calls for them (one per criterion)
    gated_off: int = 0  # calls not needed: criteria whose gate said they do not apply (stored answers)
    gated_waiting: int = 0  # at most this many calls for gated criteria of stored answers whose gate is not judged yet
    gated_unknown: int = 0  # of `upto_new`, calls of gated criteria (their gates may skip them)
    rejudge_wanted: int = 0  # `--rejudge-sample N`: N (0: no re-judge lane)
    rejudge_outputs: int = 0  # judged outputs drawn for it now (fewer than N while fewer are judged)
    rejudge_calls: int = 0  # re-judge calls for them not yet stored (exact, as `calls`)
    where: str = ""  # where its calls go (the dry run names it): a route and base URL per judge

    @property
    def total(self) -> int:
        return self.calls + self.upto_new + self.gated_waiting


def rejudge_sample(plan: Plan, db, n: int, seed: int) -> frozenset[tuple[str, str, int]]:
    """The `work_key`s of `n` judged outputs of this invocation (`run --rejudge-sample N`): among the selected
    sqe outputs whose result the judge decided (PASS or FAIL), the `n` first by a seeded hash of
    (seed, model, case hash, sample). Why a hash rather than a random draw: the same manifest, outputs and
    seed give the same sample in any process or order, so a second run asks nothing again; and the sample
    grows by adding outputs, never by reshuffling those already drawn."""
    from helmbench.store.queries import judged_outputs, run_of

    if n <= 0 or db is None:
        return frozenset()
    # a dry run opens no run: the one the run would continue (its results are what it would draw from)
    ids = {mp.id: mp.run_id if mp.run_id is not None else run_of(db.conn, plan.manifest.hash, mp.id, mp.settings_hash)
           for mp in plan.models}
    model_of = {run: model for model, run in ids.items() if run is not None}
    judged = {(model_of[run], case_hash, sample)
              for run, case_hash, sample in judged_outputs(db.conn, list(model_of))}
    keys = [work_key(job) for job in iter_jobs(plan, conversations=True) if work_key(job) in judged]

    def rank(key: tuple[str, str, int]) -> str:
        return hashlib.sha256("\0".join(map(str, (seed, *key))).encode("utf-8")).hexdigest()

    return frozenset(sorted(keys, key=rank)[:n])


def estimate(plan: Plan, db, judge: Panel | None, settled: dict[str, set] | None = None,
             transcripts: dict | None = None, only: frozenset | None = None,
             called: dict | None = None) -> JudgeEstimate:
    est = JudgeEstimate(judge.id if judge else None, where=judge.where if judge else "")
    if judge is None or not plan.sqe_cases:
        return est
    needed: set[tuple[str, str]] = set()
    for work in iter_work(plan, db, judge, settled, unanswered=True, transcripts=transcripts, only=only,
                          called=called):
        if work.transcript is None and (work.response is None or work.response.get("error_kind")):
            # the model will be asked (again) first
            est.unanswered += 1
            criteria = work.job.case["evaluation"]["criteria"]
            est.upto_new += len(criteria) * len(judge.members)
            est.gated_unknown += sum("applies_when" in cr for cr in criteria) * len(judge.members)
        elif work.outcome is not None:
            est.no_judge += 1
        else:
            est.cached += sum(i.cached for i in work.items)
            needed.update((i.judge.id, i.hash) for i in work.to_call)
            est.gated_off += len(work.gated) * len(judge.members)
            est.gated_waiting += len(work.waiting) * len(judge.members)
    est.calls = len(needed)
    return est
