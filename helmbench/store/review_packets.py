"""Review packets and plans as files: a packet goes to a clinician by email, a plan stays beside results.db.

A packet is one JSON document holding a reviewer's name and the items still for them to review,
each blinded (the messages the model was sent, its reply or a conversation's transcript, the
criterion's code, title, text and options: everything the page shows, all inside the item's hash) with the keys that make a verdict on it importable (item hash, case id, scenario).
`helmbench review --packet FILE` serves it without any database; the verdicts come back as the
JSONL that `helmbench review import` reads.

Why the reader checks so much: a packet arrives by email and is untrusted. It is bounded (size,
items, text lengths), every field is typed, and every item's hash is recomputed from what the
packet shows, so an altered packet cannot put verdicts under another item's key.

Why an atomic write (a temporary file in the target folder, then `os.replace`): a packet or a
plan half-written by a crash must not be mailed or read as whole.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from helmbench.errors import HelmbenchError
from helmbench.store.reviews import item_hash

PACKET_FORMAT = "helmbench-review-packet"
PLAN_FORMAT = "helmbench-review-plan"
MAX_BYTES = 64 << 20
MAX_ITEMS = 100_000
MAX_TEXT = 400_000
MAX_SHORT = 2_000
_HASH = re.compile(r"^sha256:[0-9a-f]{64}$")


def write_text(path: Path, text: str, root: Path | None = None) -> None:
    """Write `text` to `path` through the one safe writer (`helmbench.safewrite`): a temporary file
    with a random name, created exclusively in the same folder, renamed over `path`; never through
    a link. `root`: the folder it vouches for (default `path`'s folder, one the user named; the
    build folder when the path is a default inside it, so a link planted there is refused)."""
    from helmbench.safewrite import write_text as safe_write_text

    safe_write_text(path, text, path.parent if root is None else root, newline="")


def write_json(path: Path, data: dict, root: Path | None = None) -> None:
    """`data` as indented JSON, written atomically (`write_text`)."""
    write_text(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n", root)


def _load(path: Path, what: str, hint: str) -> dict:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise HelmbenchError(f"{path}: cannot read the {what} ({exc.strerror})", hint=hint) from None
    if size > MAX_BYTES:
        raise HelmbenchError(f"{path} is larger than {MAX_BYTES >> 20} MB: not a {what}", hint=hint)
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        raise HelmbenchError(f"{path}: not UTF-8 text, so not a {what}", hint=hint) from None
    except ValueError as exc:
        raise HelmbenchError(f"{path}: not valid JSON ({getattr(exc, 'msg', exc)}, line {getattr(exc, 'lineno', '?')})",
                             hint=hint) from None
    except RecursionError:
        raise HelmbenchError(f"{path}: JSON nested too deeply to be a {what}", hint=hint) from None
    if not isinstance(data, dict):
        raise HelmbenchError(f"{path}: expected a JSON object, got {type(data).__name__}", hint=hint)
    return data


class _Bad(Exception):
    pass


def _text(value, where: str, limit: int = MAX_SHORT, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise _Bad(f"{where} must be text, got {type(value).__name__}")
    if len(value) > limit:
        raise _Bad(f"{where} is longer than {limit} characters")
    return value


def _keys(obj, where: str, required: set[str], optional: set[str] = frozenset()) -> dict:
    if not isinstance(obj, dict):
        raise _Bad(f"{where} must be an object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - required - optional)
    if unknown:
        raise _Bad(f"{where} has unknown key(s) {', '.join(map(str, unknown))[:200]}")
    missing = sorted(required - set(obj))
    if missing:
        raise _Bad(f"{where} lacks {', '.join(missing)}")
    return obj


def _questions(questions, where: str) -> list[dict]:
    """A criterion's named questions in a packet: at most 50, each its id, text and 2 to 50 options."""
    if not isinstance(questions, list) or not questions or len(questions) > 50:
        raise _Bad(f"{where} must be a list of 1 to 50 questions")
    out = []
    for i, q in enumerate(questions):
        _keys(q, f"{where}[{i}]", {"id", "text", "options"})
        options = q["options"]
        if not isinstance(options, list) or not 2 <= len(options) <= 50:
            raise _Bad(f"{where}[{i}].options must be a list of 2 to 50 options")
        out.append({"id": _text(q["id"], f"{where}[{i}].id"), "text": _text(q["text"], f"{where}[{i}].text", MAX_TEXT),
                    "options": [_text(o, f"{where}[{i}].options[{k}]") for k, o in enumerate(options)]})
    return out


def _item(obj, where: str) -> dict:
    _keys(obj, where, {"item_hash", "case_id", "scenario", "criterion", "messages", "output"}, {"transcript"})
    h = _text(obj["item_hash"], f"{where}.item_hash")
    if not _HASH.match(h):
        raise _Bad(f"{where}.item_hash is not a sha256:… hash")
    crit = _keys(obj["criterion"], f"{where}.criterion", {"code", "text", "options"},
                 {"title", "response_type", "questions"})
    options = crit["options"]
    if not isinstance(options, list) or not options or len(options) > 50:
        raise _Bad(f"{where}.criterion.options must be a list of 1 to 50 options")
    criterion = {"code": _text(crit["code"], f"{where}.criterion.code"),
                 "title": _text(crit.get("title"), f"{where}.criterion.title", optional=True),
                 "text": _text(crit["text"], f"{where}.criterion.text", MAX_TEXT),
                 "options": [_text(o, f"{where}.criterion.options[{i}]") for i, o in enumerate(options)],
                 "response_type": _text(crit.get("response_type") or "single", f"{where}.criterion.response_type")}
    if criterion["response_type"] not in ("single", "multi"):
        raise _Bad(f"{where}.criterion.response_type must be single or multi")
    if crit.get("questions") is not None:
        criterion["questions"] = _questions(crit["questions"], f"{where}.criterion.questions")
    messages = obj["messages"]
    if not isinstance(messages, list) or len(messages) > 1000:
        raise _Bad(f"{where}.messages must be a list of at most 1000 messages")
    msgs = []
    for i, m in enumerate(messages):
        _keys(m, f"{where}.messages[{i}]", {"role", "content"})
        msgs.append({"role": _text(m["role"], f"{where}.messages[{i}].role"),
                     "content": _text(m["content"], f"{where}.messages[{i}].content", MAX_TEXT)})
    out = {"item_hash": h, "case_id": _text(obj["case_id"], f"{where}.case_id"),
           "scenario": _text(obj["scenario"], f"{where}.scenario"), "criterion": criterion, "messages": msgs,
           "output": _text(obj["output"], f"{where}.output", MAX_TEXT),
           "transcript": None if obj.get("transcript") is None else _turns(obj["transcript"], f"{where}.transcript")}
    if item_hash(msgs, out["output"], criterion, out["transcript"]) != h:
        raise _Bad(f"{where}: its item_hash does not match what it shows (messages, reply, transcript, criterion "
                   "title, text and options): the packet was altered")
    return out


def _turns(turns, where: str) -> list[dict]:
    """A conversation's turns as a packet shows them (`score.review_items.JudgedItem.transcript`), typed and bounded."""
    if not isinstance(turns, list) or len(turns) > 1000:
        raise _Bad(f"{where} must be a list of at most 1000 turns")
    out = []
    for i, t in enumerate(turns):
        at = f"{where}[{i}]"
        _keys(t, at, {"turn", "role", "by", "content", "checkpoint"})
        if not isinstance(t["turn"], int) or isinstance(t["turn"], bool) or not 0 < t["turn"] <= 10_000:
            raise _Bad(f"{at}.turn must be a whole number from 1")
        if t["role"] not in ("user", "assistant"):
            raise _Bad(f"{at}.role must be user or assistant")
        out.append({"turn": t["turn"], "role": t["role"], "by": _text(t["by"], f"{at}.by"),
                    "content": _text(t["content"], f"{at}.content", MAX_TEXT),
                    "checkpoint": _text(t["checkpoint"], f"{at}.checkpoint", optional=True)})
    return out


def read_packet(path: Path) -> dict:
    """The packet at `path`, checked: {reviewer, manifest_hash, items: [...]}; raises naming what is wrong."""
    hint = "open the file `helmbench review packet` wrote, as it was sent"
    data = _load(path, "review packet", hint)
    try:
        _keys(data, "the packet", {"format", "version", "reviewer", "manifest_hash", "items"}, {"about", "seed"})
        if data["format"] != PACKET_FORMAT or data["version"] != 1:
            raise _Bad(f"it is not a version-1 {PACKET_FORMAT} (format {str(data['format'])[:60]!r})")
        reviewer = _text(data["reviewer"], "reviewer", 200)
        if not reviewer.strip() or not reviewer.isprintable():
            raise _Bad("reviewer must be a printable name")
        items = data["items"]
        if not isinstance(items, list) or len(items) > MAX_ITEMS:
            raise _Bad(f"items must be a list of at most {MAX_ITEMS}")
        checked = [_item(obj, f"items[{i}]") for i, obj in enumerate(items)]
        if len({i["item_hash"] for i in checked}) != len(checked):
            raise _Bad("an item appears twice")
        manifest = _text(data["manifest_hash"], "manifest_hash", optional=True)
    except _Bad as exc:
        raise HelmbenchError(f"{path}: not a usable review packet: {exc}", hint=hint) from None
    return {"reviewer": reviewer, "manifest_hash": manifest, "items": checked}


def read_plan(path: Path) -> dict:
    """The review plan at `path` (written by `helmbench review plan`), checked."""
    hint = "write it again with `helmbench review plan`"
    data = _load(path, "review plan", hint)
    try:
        _keys(data, "the plan", {"format", "version", "manifest_hash", "seed", "reviewers_per_item", "sample",
                                 "reviewers", "assigned"})
        if data["format"] != PLAN_FORMAT or data["version"] != 1:
            raise _Bad(f"it is not a version-1 {PLAN_FORMAT}")
        if not isinstance(data["seed"], int) or not isinstance(data["reviewers_per_item"], int):
            raise _Bad("seed and reviewers_per_item must be whole numbers")
        if data["sample"] is not None and not isinstance(data["sample"], int):
            raise _Bad("sample must be a whole number or null")
        reviewers = data["reviewers"]
        if not isinstance(reviewers, list) or not all(isinstance(r, str) for r in reviewers):
            raise _Bad("reviewers must be a list of names")
        assigned = _keys(data["assigned"], "assigned", set(reviewers))
        for r, hs in assigned.items():
            if not isinstance(hs, list) or not all(isinstance(h, str) and _HASH.match(h) for h in hs):
                raise _Bad(f"assigned[{r!r}] must be a list of item hashes")
    except _Bad as exc:
        raise HelmbenchError(f"{path}: not a usable review plan: {exc}", hint=hint) from None
    return data
