"""A conversation walked through its stored turns: how far it has got, and the transcript it makes.

Why apart from the job kind: two phases walk a conversation. The conversation phase walks it until
it needs a call (the model's reply, the simulated user's message) and asks it; once the last turn
is stored the transcript is a stored output like a single answer, and the judge phase (its work
generator, `run/judge/judge_plan.iter_work`) walks the same stored turns to rebuild the transcript
it judges. One walk serves both, so the judge sees exactly the transcript the turns make.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from helmbench.manifest.conversation import opens, played, turn_keys
from helmbench.run.conversation import verdict as V
from helmbench.run.conversation.turns import USERS_INPUT
from helmbench.run.judge.judge import precheck
from helmbench.run.neutralise import neutralise, tags_in
from helmbench.store.runs import now
from helmbench.store.turns import TurnWrite, Transcript, stored_turns


@dataclass(eq=False)
class Conversation:
    """One (case, model, sample) and how far it has got. `case` is the case as its simulated user plays it
    (`manifest.conversation.played`), `sample` the result's sample, `turn_sample` the one its turns are
    stored under (the same unless several simulated users play the case)."""

    case: dict
    mp: Any  # plan.ModelPlan
    sample: int
    keys: list[str]
    stored: dict  # (turn_key, role) → row
    turn_sample: int = 0
    opening: list[dict] | None = None  # `opening: simulated`: the opening's messages once the user wrote turn 1
    first: str | None = None  # … and the simulated user's first message as it wrote it (its own side of the chat)
    turn: int = 1
    step: str = "user"  # user → model → (next turn) … → end (every turn stored) → done (decided or handed on)
    pending: str | None = None  # the call it waits for: "user" or "model"
    transcript: list[dict] = field(default_factory=list)  # after the opening
    used: list[tuple[str, str]] = field(default_factory=list)
    replies: dict[int, dict] = field(default_factory=dict)
    user_attempts: int = 0
    user_cost: float | None = None
    rows: list[dict] = field(default_factory=list)  # checkpoint and criterion verdicts so far
    session: str | None = None  # a stateful service's session id for this walk (kind.new_session)

    @property
    def conv(self) -> dict:
        return self.case["request"]["conversation"]

    @property
    def messages(self) -> list[dict]:
        """The opening's messages as the model under test receives them."""
        return self.opening if self.opening is not None else self.case["request"]["messages"]

    @property
    def label(self) -> str:
        return f"{self.mp.id} {self.case['id']}#{self.sample} turn {self.turn}"

    def row(self, role: str, **values) -> dict:
        return {"turn_key": self.keys[self.turn - 1], "role": role, "turn": self.turn, "model": self.mp.id,
                "settings_hash": self.mp.settings_hash, "sample": self.turn_sample, "case_id": self.case["id"],
                "request_hash": self.case["request_hash"], "run_id": self.mp.run_id, "created_at": now(), **values}

    def stored_as(self) -> Transcript:
        """The checkpoint verdicts and turns its result is decided on."""
        return Transcript(self.rows, self.used, self.mp.id, self.mp.settings_hash,
                          self.turn_sample if self.turn_sample != self.sample else None)


def walk(s: Conversation, add: Callable[[TurnWrite], None] | None) -> None:
    """Walk `s` through what is stored or free until it needs a call (sets `pending`) or every turn is in
    (`step` "end"). `add` commits a free turn (the opening, a scripted message); None (a replay of
    what is stored) treats a free turn not stored as one still to come."""
    s.pending = None
    while s.step not in ("end", "done"):
        if s.turn > len(s.keys):
            s.step = "end"
            return
        key = s.keys[s.turn - 1]
        if s.step == "user":
            free = (s.turn == 1 and not opens(s.conv)) or (s.turn > 1 and s.conv["user"] == "scripted")
            if free and (key, "user") not in s.stored and add is not None:
                text = s.case["request"]["messages"][-1]["content"] if s.turn == 1 else s.conv["turns"][s.turn - 2]
                row = s.row("user", source="opening" if s.turn == 1 else "script", content=text)
                add(TurnWrite(row))  # costs nothing: committed with the round
                s.stored[(key, "user")] = row
            user = s.stored.get((key, "user"))
            if user is None or user.get("error_kind"):
                s.pending = "user"
                return
            s.used.append((key, "user"))
            if user.get("stop"):
                s.step = "end"
                return
            if s.turn == 1 and opens(s.conv):  # the simulated user's first message opens the conversation
                s.first = user["content"]
                # the block it goes into is defused too, whether or not the perturbation had one to replace
                tags = tuple(sorted({*tags_in(s.case["request"]["messages"]), "users_input"}))
                s.opening = opening_with(s.case, neutralise(user["content"], tags))
            elif s.turn > 1:
                content = user["content"]
                if user.get("source") == "user_model":  # a model's text, about to reach the model under test
                    content = neutralise(content, tags_in(s.case["request"]["messages"]))
                s.transcript.append({"role": "user", "content": content})
            s.step = "model"
            continue
        reply = s.stored.get((key, "assistant"))
        if reply is None or reply.get("error_kind"):
            s.pending = "model"
            return
        s.used.append((key, "assistant"))
        s.replies[s.turn] = reply
        s.transcript.append({"role": "assistant", "content": reply.get("content") or ""})
        s.turn, s.step = s.turn + 1, "user"


def opening_with(case: dict, first: str) -> list[dict]:
    """`opening: simulated`: the opening as composed for the case, the simulated user's first message in
    the place of the perturbation's `<users_input>` block (what the person came to say, which the
    simulated user was given instead), or after it all when the opening holds no such block."""
    *before, last = case["request"]["messages"]
    block = f"<users_input>\n{first}\n</users_input>"
    text = last["content"]
    found = list(USERS_INPUT.finditer(text))
    if found:
        m = found[-1]
        text = text[:m.start()] + block + text[m.end():]
    else:
        text = f"{text}\n\n{block}" if text else block
    return [*before, {**last, "content": text}]


def ending(s: Conversation) -> list[tuple[dict, dict]]:
    """At the end of a conversation: its checkpoint verdicts (`s.rows`) and the (criterion, judge request)
    its transcript is still to be judged on ([] when nothing is left to the judge)."""
    if not s.replies:
        s.rows = [{"checkpoint": "conversation", "turn": None, "title": None, "verdict": "ERROR", "score": None,
                   "reason": "the simulated user ended the conversation before the model replied"}]
        return []
    s.rows = V.turn_checkpoints(s.case, s.replies)
    pairs = V.criterion_requests(s.case, [*s.messages, *s.transcript])
    early = precheck(s.case, s.replies[max(s.replies)]) if pairs else None
    if early is not None:  # the last reply cannot be judged: its own verdict for every criterion
        s.rows += [{"checkpoint": cr["code"], "turn": None, "title": cr.get("title"), "verdict": early.verdict,
                    "score": early.score, "reason": early.reason} for cr, _ in pairs]
        return []
    return pairs


def conversation_of(case: dict, mp, sample: int, db) -> Conversation:
    """A conversation at its start, with its stored turns."""
    one, turn_sample = played(case, sample)
    keys = turn_keys(one)
    return Conversation(one, mp, sample, keys, stored_turns(db, keys, mp.id, mp.settings_hash, turn_sample),
                        turn_sample=turn_sample)


def stored_transcript(case: dict, mp, sample: int, db) -> Conversation | None:
    """The conversation replayed from the store when every turn of it is stored (its `rows` the
    checkpoint verdicts), else None (the conversation phase has turns left to ask)."""
    s = conversation_of(case, mp, sample, db)
    walk(s, None)
    return s if s.pending is None else None
