"""The verdict of a finished conversation, from its checkpoints and its transcript criteria.

- A turn checkpoint runs its deterministic evaluator on the model's reply at that turn (its
  last reply when the conversation ended earlier), through the same checks as a single answer:
  an API error is an ERROR, empty, truncated or malformed output the model's FAIL.
- A judged scenario's criteria see the whole transcript: every message in order, graded as one
  conversation (judge_prompt's transcript request, with the same safeguards against text that
  tries to sway the judge as a single answer's). A deterministic scenario evaluation checks the last reply.
- A judged scenario's deterministic criteria (`checks`: a `CR#.md` with an `evaluation:`) read every
  reply of the assistant, with no judge call (judge.check_verdicts).
- The case passes when every checkpoint and criterion passes; its score is their mean, each
  criterion contributing the partial credit of its `scores` map; any ERROR makes the case an
  ERROR (no score, asked again next run), as judge.aggregate decides for single answers. A criterion that
  abstained or that its gate kept from being asked (ABSTAIN, NOT_APPLICABLE) is a row but leaves the verdict
  and the mean; a conversation with nothing else has no verdict (ABSTAIN).
"""

from __future__ import annotations

from helmbench.run.evaluate import Outcome, outcome_for
from helmbench.run.judge.judge import ABSTAIN, LEFT_OUT, NOT_APPLICABLE, CriterionVerdict, check_verdicts
from helmbench.run.judge.judge_prompt import transcript_judge_request


def _pseudo_case(case: dict, evaluation: dict) -> dict:
    return {"evaluation": evaluation, "request": {"response_format": case["request"].get("response_format")}}


def reply_at(replies: dict[int, dict], turn: int) -> tuple[int, dict]:
    """(turn, reply) checked for `turn`: that turn's reply, or the last one before it."""
    n = max((t for t in replies if t <= turn), default=max(replies))
    return n, replies[n]


def turn_checkpoints(case: dict, replies: dict[int, dict]) -> list[dict]:
    """A verdict row per checkpoint (and for a deterministic scenario evaluation, on the last reply)."""
    evaluation = case["evaluation"]
    wanted = [(f"turn {cp['turn']}", cp["turn"], cp.get("title"), cp["evaluation"])
              for cp in evaluation.get("checkpoints", [])]
    if evaluation["type"] != "sqe":
        plain = {k: v for k, v in evaluation.items() if k != "checkpoints"}
        wanted.append(("last reply", max(replies), None, plain))
    rows = []
    for name, turn, title, ev in wanted:
        at, reply = reply_at(replies, turn)
        outcome = outcome_for(_pseudo_case(case, ev), reply)
        reason = outcome.reason if at == turn else f"(the conversation ended at turn {at}) {outcome.reason}"
        rows.append({"checkpoint": name, "turn": at, "title": title, "verdict": outcome.verdict,
                     "score": outcome.score, "reason": reason})
    titles = {c["code"]: c.get("title") for c in evaluation.get("checks") or []}
    for v in check_verdicts(case, *(replies[t].get("content") for t in sorted(replies))):
        reason = v.error_message if v.verdict == "ERROR" else v.justification or ""
        rows.append({"checkpoint": v.criterion, "turn": None, "title": titles.get(v.criterion),
                     "verdict": v.verdict, "score": v.score, "reason": reason})
    return rows


def criterion_requests(case: dict, messages: list[dict]) -> list[tuple[dict, dict]]:
    """(criterion, judge request) for each transcript criterion. `messages`: the whole
    conversation as the model saw it, ending with its last reply."""
    if case["evaluation"]["type"] != "sqe":
        return []
    opening = len(case["request"]["messages"])
    return [(cr, transcript_judge_request(cr, messages, opening)) for cr in case["evaluation"]["criteria"]]


def criterion_row(verdict: CriterionVerdict, title: str | None) -> dict:
    reason = verdict.error_message if verdict.verdict == "ERROR" else (verdict.justification or "")
    if verdict.verdict == NOT_APPLICABLE:
        return {"checkpoint": verdict.criterion, "turn": None, "title": title, "verdict": NOT_APPLICABLE,
                "score": None, "reason": reason}
    shown = verdict.judgment if not isinstance(verdict.judgment, list) else ", ".join(map(str, verdict.judgment))
    if verdict.answers:  # the judge's answers to the criterion's named questions, before its justification
        answers = verdict.answers if isinstance(verdict.answers, list) else [verdict.answers]
        said = " | ".join("; ".join(f"{q} = {a}" for q, a in (one or {}).items()) for one in answers)
        reason = f"({said}) {reason}"
    return {"checkpoint": verdict.criterion, "turn": None, "title": title, "verdict": verdict.verdict,
            "score": verdict.score, "reason": f"{shown}: {reason}" if shown else reason}


def decide(rows: list[dict]) -> Outcome:
    """The case's verdict from every checkpoint and criterion row."""
    errors = [r for r in rows if r["verdict"] == "ERROR"]
    if errors or not rows:
        why = f"{errors[0]['checkpoint']}: {errors[0]['reason']}" if errors else "nothing to check"
        return Outcome("ERROR", None, why[:300])
    counted = [r for r in rows if r["verdict"] not in LEFT_OUT]
    detail = "conversation: " + ", ".join(f"{r['checkpoint']} {r['verdict']}" for r in rows)
    if not counted:
        return Outcome(ABSTAIN, None, detail[:300])
    score = sum(r["score"] for r in counted) / len(counted)
    verdict = "PASS" if all(r["verdict"] == "PASS" for r in counted) else "FAIL"
    return Outcome(verdict, score, detail)
