"""What a conversation adds to a manifest case, and the cache key of each of its turns.

The request of a conversation case keeps its opening in `messages` (composed as for any case)
and adds `conversation`: the scripted user's later messages, or the simulated user's
definition and the user model's id and settings. All of it is inside `request_hash`, so an
edit to any of it is a new request. Checkpoints sit in `evaluation` (inside `hash` only), so an
edit to one re-scores stored turns without asking the model again.

Each turn is cached on its own, by `turn_keys`: a chain of hashes in which turn k's key covers
the opening and everything authored up to turn k. A re-run of an unchanged conversation finds
every turn stored; an edit to turn 4 changes the keys of turns 4 onward only. The keys cover
what was written, not the model's replies: those are the stored answers to the earlier keys of
the same chain, so they cannot change while the earlier keys stay the same.
"""

from __future__ import annotations

from helmbench.manifest.canonical import hash_of
from helmbench.manifest.compose import compose_body
from helmbench.plugins.registry import spell_case
from helmbench.spec.tree import Benchmark, Scenario

#: The field of a structured answer that a person in the conversation would read: the simulated user
#: is shown this field of each reply (a free-text reply whole), never the answer's other fields.
REPLY_FIELD = "response"


def conversation_request(bench: Benchmark, sc: Scenario) -> dict:
    """`request.conversation` of every case of `sc` (the lint rules guarantee a usable tree)."""
    conv = sc.conversation
    turns = sorted(conv.turns.items())
    if not conv.simulated:
        return {"user": "scripted", "turns": [compose_body(p.body) for _, p in turns]}
    user = bench.models.user_model
    return {
        "user": "simulated",
        "max_turns": conv.meta.max_turns,
        "stop_when": conv.meta.stop_when,
        "persona": compose_body(conv.sections["persona"].body),
        "goal": compose_body(conv.sections["goal"].body),
        "landmarks": [{"turn": n, "text": compose_body(p.body)} for n, p in turns],
        "user_model": {"id": user.id, "settings": user.settings()},
        "reply_field": REPLY_FIELD,
    }


def checkpoints(sc: Scenario, context=None) -> list[dict]:
    """`evaluation.checkpoints`: the deterministic checks of single turns, spelt by their evaluator
    exactly as a scenario's own evaluation is."""
    return [{"turn": cp.turn, "title": cp.title, "evaluation": spell_case(cp.evaluation, sc, context)}
            for cp in sc.conversation.meta.checkpoints]


def last_turn(case: dict) -> int:
    conv = case["request"]["conversation"]
    return conv["max_turns"] if conv["user"] == "simulated" else 1 + len(conv["turns"])


def user_definition(conv: dict, turn: int) -> dict:
    """What the simulated user is told at `turn`: who it is, its goal, the stop rule and the
    landmarks due by then (later landmarks are not shown yet, so an edit to one re-asks from its
    turn on). `max_turns` is left out: it decides only where the conversation stops. `reply_field`
    (what of a reply it reads) is in when the manifest has it: manifests compiled before it was
    added keep their turn keys."""
    definition = {
        "persona": conv["persona"], "goal": conv["goal"], "stop_when": conv.get("stop_when"),
        "landmarks": [lm for lm in conv["landmarks"] if lm["turn"] <= turn],
        "user_model": conv["user_model"],
    }
    if "reply_field" in conv:
        definition["reply_field"] = conv["reply_field"]
    return definition


def reply_text(conv: dict, content: str | None) -> str:
    """What a person would read of a model's reply: its `reply_field` when the reply is a JSON object
    holding that field as text, else the reply as it is (free text, or an answer that is no object)."""
    text = content or ""
    field = conv.get("reply_field")
    if field is None or not text.lstrip().startswith("{"):
        return text
    import json

    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    value = parsed.get(field) if isinstance(parsed, dict) else None
    return value if isinstance(value, str) else text


def turn_keys(case: dict) -> list[str]:
    """The cache key of each turn, turn 1 (the opening) first."""
    request = case["request"]
    conv = request["conversation"]
    key = hash_of({"messages": request["messages"], "response_format": request.get("response_format")})
    keys = [key]
    for turn in range(2, last_turn(case) + 1):
        if conv["user"] == "scripted":
            step = {"after": key, "user": conv["turns"][turn - 2]}
        else:
            step = {"after": key, "turn": turn, "simulated_user": user_definition(conv, turn)}
        key = hash_of(step)
        keys.append(key)
    return keys


def is_conversation(case: dict) -> bool:
    return "conversation" in case["request"]
