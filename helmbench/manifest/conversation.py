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
    users = [{"id": u.id, "settings": u.settings()} for u in bench.models.simulators]
    request = {
        "user": "simulated",
        "max_turns": conv.meta.max_turns,
        "stop_when": conv.meta.stop_when,
        "persona": compose_body(conv.sections["persona"].body),
        "goal": compose_body(conv.sections["goal"].body),
        "landmarks": [{"turn": n, "text": compose_body(p.body)} for n, p in turns],
        "reply_field": REPLY_FIELD,
    }
    # one simulated user (a list of one included) is `user_model`, as it always was: its manifest and turn
    # keys stay byte for byte those of releases before lists; several are `user_models`, in models.yml's order
    if len(users) == 1:
        request["user_model"] = users[0]
    else:
        request["user_models"] = users
    if conv.meta.opening == "simulated":  # only then, so that every other conversation keeps its hashes
        request["opening"] = "simulated"
    return request


def simulators(conv: dict) -> list[dict]:
    """The simulated users (`{"id", "settings"}`) of a conversation request, in order ([] for a scripted one)."""
    if "user_models" in conv:
        return list(conv["user_models"])
    return [conv["user_model"]] if conv.get("user_model") else []


def samples_of(case: dict, samples: int) -> int:
    """How many results a case has per `--samples N`: N, times its simulated users for a conversation played
    by several. Why one axis: a case played by two simulated users is one case with twice the samples, so
    every score pools them per case (as repeated samples are) and no interval counts it twice."""
    conv = case["request"].get("conversation")
    return samples * max(1, len(conv["user_models"])) if conv and "user_models" in conv else samples


def played(case: dict, sample: int) -> tuple[dict, int]:
    """Result sample `sample` of `case` as it is walked: (the case with the one simulated user who plays
    it as its `user_model`, the sample its turns are stored under). Results interleave the simulated
    users (sample = turn sample × users + the user's position), so the user of a result is its sample
    modulo the number of users, and `--samples 2` adds results after those of `--samples 1`.

    The played case's conversation is exactly what a tree naming that one user compiles to, so each user's
    turn keys are the same whether it plays alone or beside others: adding a user asks only its own
    conversations, removing one asks nothing (the new manifest's results are taken from stored turns)."""
    conv = case["request"].get("conversation")
    if not conv or "user_models" not in conv:
        return case, sample
    users = conv["user_models"]
    one = {k: v for k, v in conv.items() if k != "user_models"}
    one["user_model"] = users[sample % len(users)]
    return {**case, "request": {**case["request"], "conversation": one}}, sample // len(users)


def simulator_of(case: dict, sample: int) -> str | None:
    """The id of the simulated user who played result sample `sample` of `case` (None: no simulated user)."""
    conv = case["request"].get("conversation")
    if not conv:
        return None
    um = played(case, sample)[0]["request"]["conversation"].get("user_model")
    return um["id"] if um else None


def result_slots(header: dict) -> int:
    """Results per `--samples 1` of a whole manifest (its header): one per case, and one more per further
    simulated user of each case played by several (the coverage denominator)."""
    played_by = header.get("simulated_users") or {}
    return int(header.get("cases", 0)) + int(played_by.get("cases", 0)) * max(0, len(played_by.get("users", [])) - 1)


def opens(conv: dict) -> bool:
    """Whether the simulated user writes the first turn too (`opening: simulated`)."""
    return conv.get("opening") == "simulated"


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
    first = {"messages": request["messages"], "response_format": request.get("response_format")}
    if opens(conv):  # the first user message is the simulated user's: who plays it is part of the key
        first["simulated_user"] = user_definition(conv, 1)
    key = hash_of(first)
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
