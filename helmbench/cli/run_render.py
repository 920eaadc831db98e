"""What `helmbench run` and friends print: summaries, the dry-run estimate, the judge's lines, `costs`,
one case in full. Only the CLI renders: the run stage returns data (RunReport, the ledger's totals).

Model output is untrusted text: it is printed as `rich.text.Text` (never parsed as markup),
so `[red]` or `<script>` in an answer is shown literally and cannot restyle the terminal.
"""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table
from rich.text import Text

from helmbench.api import RunReport


def _money(value: float | None) -> str:
    return "—" if value is None else f"${value:.4f}"


def dry_run(report: RunReport, out: Console) -> None:
    plan = report.plan
    why = "no OPENROUTER_API_KEY is set" if report.no_key else "--dry-run"
    out.print(Text(f"Dry run ({why}): nothing was sent. {plan.cases} case(s) selected, {plan.samples} sample(s) each."))
    shard_share(plan, out)
    table = Table("model", "new calls", "of which conversation turns", "already stored", "est. input tokens", "goes to")
    for mp in plan.models:
        table.add_row(Text(mp.id), str(mp.new_calls), str(mp.conversation_turns), str(mp.stored),
                      f"{mp.est_input_tokens:,}", Text(mp.where))
    users = plan.user_calls
    for um in plan.user_models:  # each simulated user on its own line: its own calls, at its own price
        if n := plan.user_calls_of(um.id):
            table.add_row(Text(f"{um.id} (simulated user)"), str(n), str(n), "", "", Text(plan.user_where(um)))
    table.add_row(Text("total", style="bold"), str(sum(m.new_calls for m in plan.models) + users),
                  str(plan.new_turns + users), str(sum(m.stored for m in plan.models)),
                  f"{sum(m.est_input_tokens for m in plan.models):,}", "")
    out.print(table)
    out.print(Text("Input tokens of answers are estimated as characters ÷ 4; output tokens and cost of every call "
                   "are estimated below."))
    if plan.conversations:
        out.print(Text(f"Conversations: {len(plan.conversations)} case(s) asked turn by turn: {plan.new_turns:,} model "
                       f"turn(s) and {users:,} simulated-user turn(s) not stored yet (upper bounds: a simulated user "
                       "may end a conversation early). Each turn re-sends the transcript so far; the cost estimate "
                       "below counts every turn at its conversation's opening length."))
    if plan.reasked_turns:
        out.print(Text(f"{plan.reasked_turns:,} of those model turn(s) were stored by an earlier release, when the "
                       "simulated user was shown the model's whole structured answer; it now sees only the reply's "
                       "text field, as a person would, so those conversations are asked again from their second "
                       "turn (their clinician reviews go stale)."))
    render_dry_run(report.judge, out)


def shard_share(plan, out: Console) -> None:
    """With --shard: how much of the selected work this shard holds (the table counts only its part)."""
    if plan.shard is not None:
        share = f" ({100 * plan.shard_pairs / plan.pairs:.0f} %)" if plan.pairs else ""
        out.print(Text(f"Shard {plan.shard}: {plan.shard_pairs:,} of the {plan.pairs:,} selected (case, model) "
                       f"pair(s){share}; the other shards hold the rest."))


def summary(report: RunReport, out: Console) -> None:
    """Per run: its verdicts (from the run row) and the calls this invocation sent for it (from the ledger:
    answers, conversation turns and the simulated user; the judge's on the line below)."""
    from helmbench.api import MODEL_KINDS, Ledger

    table = Table("run", "model", "status", "calls made", "stored", "pass", "fail", "error", "awaiting judge",
                  "billed now")
    by_id = {r["id"]: r for r in report.runs}
    for mp in report.plan.models:
        row = by_id.get(mp.run_id, {})
        calls = report.ledger.get(mp.run_id) or Ledger()
        table.add_row(str(mp.run_id), Text(mp.id), row.get("status", "?"), str(calls.calls(kinds=MODEL_KINDS)),
                      str(mp.stored), str(row.get("n_pass", 0)), str(row.get("n_fail", 0)),
                      str(row.get("n_error", 0)), str(row.get("n_awaiting_judge", 0)),
                      _money(calls.cost(kinds=MODEL_KINDS)))
    out.print(table)
    shard_share(report.plan, out)
    render_summary(report.judge, report.runs, out)
    cut = sum(ledger.unknown() for ledger in report.ledger.values())
    if cut:
        out.print(Text(f"{cut} call(s) were cut before their answer was stored (they may be billed): `helmbench "
                       "costs` lists them; the next run asks them again."))
    errors = sum(r.get("n_error", 0) for r in report.runs)
    if errors:
        out.print(Text(f"{errors} result(s) are ERRORs (API or judge failures): they are excluded from scores and "
                       "will be retried by the next run."))


def _transcript(result: dict, out: Console) -> None:
    """A conversation's turns and checkpoint verdicts (model and user text printed literally)."""
    for t in result["turns"]:
        who = {"assistant": "model"}.get(t["role"], f"user ({t.get('source')})")
        out.print(Text(f"turn {t['turn']} · {who}", style="bold"))
        if t.get("landmark"):
            out.print(Text(f"landmark: {t['landmark']}", style="dim"))
        if t.get("error_kind"):
            out.print(Text(f"error ({t['error_kind']}): {t.get('error_message')}", style="red"))
        elif t.get("stop"):
            out.print(Text("(the simulated user ended the conversation)", style="dim"))
        else:
            out.print(Text(str(t.get("content") or "")))
    for cp in result.get("checkpoints") or []:
        out.print(Text(f"{cp['checkpoint']}: {cp['verdict']} — {cp.get('reason') or ''}"))
    style = {"PASS": "green", "FAIL": "red"}.get(result["verdict"], "yellow")
    out.print(Text.assemble(("verdict: ", "bold"), (result["verdict"], style), f" — {result.get('reason') or ''}"))


def costs(rows: list[dict], out: Console, outside=None, *, total: float, note: str | None = None, others=()) -> None:
    """Per run, from the call ledger; `outside`: the ledger of calls no run made (`generate`); `total`: what
    they were paid together (`api.Costs.total`); `note`: which manifest's runs these are (`report`'s sentence);
    `others`: the runs of other manifests, summed on one line."""
    if note:
        out.print(Text(note, style="yellow"))
    table = Table("run", "model", "status", "calls paid", "errors", "unpriced", "prompt tokens", "completion tokens",
                  "billed in run", "judge calls paid", "judge billed in run", "cost behind its results")
    for r in rows:
        table.add_row(str(r["run_id"]), Text(r["model"]), r["status"], str(r["calls"]), str(r["errors"]),
                      str(r["unpriced"]), f"{r['prompt_tokens'] or 0:,}",
                      f"{r['completion_tokens'] or 0:,}", _money(r["paid"]), str(r["judge_calls"]),
                      _money(r["judge_paid"]), _money(r["behind_results"]))
    out.print(table)
    for r in rows:  # the leaderboard's split of the cost behind the results, and the calls another run counts
        if r.get("behind_results") is None:
            continue
        shared = (f"; {r['shared_calls']} call(s) its results share, {_money(r['shared_cost'])}, counted in run "
                  + ", ".join(map(str, r["shared_with"]))) if r.get("shared_calls") else ""
        if r.get("status") == "imported":  # `import transcripts`: only the judge was asked
            out.print(Text(f"run {r['run_id']} behind its results: imported conversations (neither the model nor "
                           f"a simulated user was called); judge {_money(r['behind_judge'])}{shared}"))
            continue
        out.print(Text(f"run {r['run_id']} behind its results: model {_money(r['behind_model'])}, simulated user "
                       f"{_money(r['behind_user'])}, judge {_money(r['behind_judge'])}{shared}"))
    if outside is not None and outside.calls():
        out.print(Text(f"generation calls (no run): {outside.calls()}, {_money(outside.cost())}"))
    out.print(Text("billed in run: the calls the run sent (retries and cut calls included); cost behind its "
                   "results: the calls its results use, whichever run paid them, each paid call counted once (a "
                   "call several runs' results use is counted in the run that sent it, else the lowest-numbered "
                   "one; the leaderboard's cost)"))
    out.print(Text(f"total paid: ${total:.4f} (billed cost as reported by OpenRouter; calls it did not price are "
                   "counted as unknown, never estimated)"))
    if others:
        from helmbench.api import paid_in

        paid = paid_in(others)
        out.print(Text(f"runs of other manifests, not shown: {len(others)}, paid ${paid:.4f} "
                       f"(see one with `helmbench costs --run-id {others[-1]['run_id']}`)"))
    cut = [f"run {r['run_id']}: {r['unknown']}" for r in rows if r["unknown"]]
    if outside is not None and outside.unknown():
        cut.append(f"generation: {outside.unknown()}")
    if cut:
        out.print(Text(f"calls sent but never completed (a crash or kill cut them; OpenRouter may have billed them, "
                       f"their cost is not in the total): {', '.join(cut)}"))


def single_case(case: dict, answers: list[tuple[str, dict | None, dict | None]], out: Console, *, dry: bool) -> None:
    """The prompt, then per model the response and the verdict."""
    out.rule(Text(f"case {case['id']}  ({case['evaluation']['type']})"))
    for m in case["request"]["messages"]:
        out.print(Text(f"[{m['role']}]", style="bold"))
        out.print(Text(str(m.get("content") or "")))
    ev = {k: v for k, v in case["evaluation"].items() if k != "criteria"}
    out.print(Text("evaluation: " + json.dumps(ev, ensure_ascii=False), style="dim"))
    if dry:
        missing = sum(1 for _, r, _ in answers if r is None or r.get("error_kind"))
        out.print(Text(f"dry run: nothing was sent; {missing} of {len(answers)} model(s) have no stored answer and "
                       "would be asked."))
    for model_id, response, result in answers:
        out.rule(Text(model_id))
        if response is None and result is not None and result.get("turns"):
            _transcript(result, out)
            continue
        if response is None:
            out.print(Text("no response stored"))
            continue
        if response.get("error_kind"):
            out.print(Text(f"API error ({response['error_kind']}): {response.get('error_message')}", style="red"))
        else:
            out.print(Text(response.get("content") or "(empty)"))
        meta = f"finish_reason={response.get('finish_reason')} · {response.get('latency_ms')} ms · cost {_money(response.get('cost'))}"
        out.print(Text(meta, style="dim"))
        if result is not None:
            style = {"PASS": "green", "FAIL": "red"}.get(result["verdict"], "yellow")
            out.print(Text.assemble(("verdict: ", "bold"), (result["verdict"], style), f" — {result.get('reason') or ''}"))
            for j in result.get("judgements") or []:  # the judge's words are untrusted text too
                said = j.get("justification") if not j.get("error_kind") else f"{j['error_kind']}: {j.get('error_message')}"
                out.print(Text(f"  {j['criterion']} ({j['judge_model']}): {j.get('link_verdict') or j['verdict']} — "
                               f"{said or ''}"))
        elif not response.get("error_kind"):
            out.print(Text("verdict: awaiting the judge (sqe)" if case["evaluation"]["type"] == "sqe" else "verdict: none"))


def render_dry_run(est, out: Console) -> None:
    if est is None or est.model is None:
        return
    lines = [f"Judge ({est.model}), counted apart from the calls above: {est.calls} call(s) for answers already "
             f"stored, {est.cached} judgement(s) reused"]
    if est.gated_off:
        lines.append(f"; {est.gated_off} call(s) not needed: their gate (`applies_when`) says the criterion does "
                     "not apply")
    if est.gated_waiting:
        lines.append(f"; up to {est.gated_waiting} more for gated criteria once their gates are judged (not known "
                     "yet: a gate that says no skips them)")
    if est.unanswered:
        gated = (f", {est.gated_unknown} of them for gated criteria, which their gates may skip"
                 if est.gated_unknown else "")
        lines.append(f"; up to {est.upto_new} more once {est.unanswered} new answer(s) arrive (one per criterion"
                     f"{gated}; malformed answers are failed without judging)")
    if est.no_judge:
        lines.append(f"; {est.no_judge} stored answer(s) are decided without the judge")
    out.print(Text("".join(lines) + "."))
    if est.where:
        out.print(Text(f"Judge calls go to: {est.where}."))
    if est.rejudge_wanted:
        short = est.rejudge_wanted - est.rejudge_outputs
        out.print(Text(f"Re-judge (--rejudge-sample {est.rejudge_wanted}): {est.rejudge_calls} call(s) for "
                       f"{est.rejudge_outputs} judged output(s) drawn now"
                       + ((f"; up to {short} more output(s) once this run has judged its pending answers (their "
                           "criteria × judges in calls)" if est.calls or est.unanswered else
                           f"; only {est.rejudge_outputs} output(s) are judged: the sample is all of them")
                          if short > 0 else "") + "."))


def render_summary(outcome, runs: list[dict], out: Console) -> None:
    if outcome is None:
        return
    evaluations = sum(r.get("n_judgements") or 0 for r in runs)
    judged = sum(r.get("n_judged_cases") or 0 for r in runs)
    errors = sum(r.get("n_judge_errors") or 0 for r in runs)
    rejudge = f" ({outcome.rejudge} of them re-judge calls, --rejudge-sample)" if outcome.rejudge else ""
    text = (f"Judge {outcome.model}: {outcome.calls} call(s) now{rejudge} (${outcome.cost:.4f}), "
            f"{outcome.reused} reused; {evaluations} criterion evaluation(s) behind {judged} judged case(s)")
    if errors:
        text += f"; {errors} evaluation(s) failed: those cases are ERRORs, re-judged by the next run"
    if outcome.skipped:
        text += f"; {outcome.skipped} case(s) await the judge (run again to continue)"
    out.print(Text(text + "."))
