"""Transcript files (`helmbench import transcripts FILE`): conversations that happened elsewhere, as JSONL.

One conversation per line (transcripts.schema.json, `helmbench schema`):

    {"format": 1, "id": "conv-0001", "case": "P1-B1-S3-C1-PT1", "model": "vendor-bot-2",
     "messages": [{"role": "user", "content": "…"}, {"role": "assistant", "content": "…"}, …],
     "metadata": {"occurred_at": "2025-03-01T10:00:00Z", "provenance": "de-identified production log"}}

`case` names a case of the manifest, or `scenario` (instead) a scenario of the tree when the conversation
was not one of its cases; `id` is the conversation's own id in its source (with the source and `model` it
is the conversation's key); `messages`: optional `system` messages first, then the person (`user`) and the
assistant in turn, starting with the person and ending with the assistant.

Why so strict: a transcript file comes from outside (another team's logs, a published data set), and what
it holds reaches the judge's prompt, the database and a public site. The reader is bounded (file size, line
length, lines, messages per conversation, characters per field), refuses unknown keys (at every level),
duplicate keys, roles other than user/assistant/system and control characters where they are not text (in
an id, a label or a date: none at all; in a message: only tab and line breaks), and names the file, line
and field of every problem. A file with any bad line is refused whole (nothing is stored).
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from helmbench.errors import HelmbenchError

#: The version of a transcript file's lines (`format` on each line; transcripts.schema.json's).
TRANSCRIPTS_FORMAT = 1
MAX_BYTES = 64 << 20
MAX_LINE_BYTES = 2 << 20
MAX_LINES = 100_000
MAX_MESSAGES = 200
MAX_CONTENT = 100_000
MAX_NAME = 200
MAX_PROVENANCE = 2_000
MAX_SHOWN = 20
TOP_KEYS = ("format", "id", "case", "scenario", "model", "messages", "metadata")
MESSAGE_KEYS = ("role", "content")
METADATA_KEYS = ("occurred_at", "provenance")
ROLES = ("system", "user", "assistant")
#: What a message's text may hold of the control characters: tab, line feed, carriage return.
TEXT_CONTROLS = frozenset("\t\n\r")


@dataclass(frozen=True)
class TranscriptLine:
    """One conversation of a transcript file, checked."""

    file: str  # the file's name (no folder: it is stored and may be shown)
    line: int
    id: str
    case: str | None
    scenario: str | None
    model: str
    messages: tuple[dict, ...]
    occurred_at: str | None
    provenance: str | None

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


class BadLine(Exception):
    def __init__(self, field: str, what: str):
        super().__init__(f"{field}: {what}")


def _bad_name_char(text: str) -> str | None:
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"):
            return f"U+{ord(ch):04X}"
    return None


def _bad_text_char(text: str) -> str | None:
    for ch in text:
        if ch not in TEXT_CONTROLS and unicodedata.category(ch) in ("Cc", "Cs"):
            return f"U+{ord(ch):04X}"
    return None


def _name(obj: dict, key: str, required: bool = True, limit: int = MAX_NAME) -> str | None:
    value = obj.get(key)
    if value is None:
        if required:
            raise BadLine(f"`{key}`", "is missing")
        return None
    if not isinstance(value, str):
        raise BadLine(f"`{key}`", f"must be text, got {type(value).__name__}")
    if not value.strip() or len(value) > limit:
        raise BadLine(f"`{key}`", f"must be 1 to {limit} characters")
    bad = _bad_name_char(value)
    if bad:
        raise BadLine(f"`{key}`", f"holds a control or format character ({bad})")
    return value


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise BadLine(f"`{k}`", "appears twice")
        out[k] = v
    return out


def _refuse_constant(name):
    raise BadLine("the line", f"holds {name}, which is not JSON")


def _check_line(obj, file: str, line: int) -> TranscriptLine:
    if not isinstance(obj, dict):
        raise BadLine("the line", "must be a JSON object (one conversation)")
    unknown = sorted(set(obj) - set(TOP_KEYS))
    if unknown:
        raise BadLine(f"`{unknown[0][:40]}`", f"unknown key (the keys are {', '.join(TOP_KEYS)})")
    if obj.get("format") != TRANSCRIPTS_FORMAT or isinstance(obj.get("format"), bool):
        raise BadLine("`format`", f"must be {TRANSCRIPTS_FORMAT} (got {str(obj.get('format'))[:20]!r})")
    ident = _name(obj, "id")
    model = _name(obj, "model")
    case, scenario = _name(obj, "case", required=False), _name(obj, "scenario", required=False)
    if (case is None) == (scenario is None):
        raise BadLine("`case`/`scenario`", "give exactly one: the case id, or the scenario code of a conversation "
                                           "that was not one of the manifest's cases")
    messages = obj.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadLine("`messages`", "must be a non-empty list of {role, content} messages")
    if len(messages) > MAX_MESSAGES:
        raise BadLine("`messages`", f"holds {len(messages)} messages; at most {MAX_MESSAGES}")
    checked = []
    for i, m in enumerate(messages):
        where = f"`messages[{i}]`"
        if not isinstance(m, dict):
            raise BadLine(where, "must be an object {role, content}")
        extra = sorted(set(m) - set(MESSAGE_KEYS))
        if extra:
            raise BadLine(f"{where}.`{extra[0][:40]}`", "unknown key (a message has role and content)")
        role, content = m.get("role"), m.get("content")
        if role not in ROLES:
            raise BadLine(f"{where}.role", f"{str(role)[:40]!r} is not one of user, assistant, system")
        if not isinstance(content, str) or not content.strip():
            raise BadLine(f"{where}.content", "must be non-empty text")
        if len(content) > MAX_CONTENT:
            raise BadLine(f"{where}.content", f"is longer than {MAX_CONTENT} characters")
        bad = _bad_text_char(content)
        if bad:
            raise BadLine(f"{where}.content", f"holds a control character ({bad}) that is not text")
        checked.append({"role": role, "content": content})
    _check_order(checked)
    meta = obj.get("metadata")
    occurred = provenance = None
    if meta is not None:
        if not isinstance(meta, dict):
            raise BadLine("`metadata`", "must be an object")
        extra = sorted(set(meta) - set(METADATA_KEYS))
        if extra:
            raise BadLine(f"`metadata`.`{extra[0][:40]}`", f"unknown key (metadata has {', '.join(METADATA_KEYS)})")
        occurred = _name(meta, "occurred_at", required=False, limit=40)
        if occurred is not None:
            try:
                at = datetime.fromisoformat(occurred)
            except ValueError:
                raise BadLine("`metadata`.`occurred_at`", f"{occurred!r} is not an ISO 8601 date and time") from None
            if (at if at.tzinfo else at.replace(tzinfo=timezone.utc)) > datetime.now(timezone.utc):
                raise BadLine("`metadata`.`occurred_at`", f"{occurred!r} is in the future")
        provenance = meta.get("provenance")
        if provenance is not None:
            if not isinstance(provenance, str) or len(provenance) > MAX_PROVENANCE:
                raise BadLine("`metadata`.`provenance`", f"must be text of at most {MAX_PROVENANCE} characters")
            bad = _bad_text_char(provenance)
            if bad:
                raise BadLine("`metadata`.`provenance`", f"holds a control character ({bad}) that is not text")
    return TranscriptLine(file, line, ident, case, scenario, model, tuple(checked), occurred, provenance)


def _check_order(messages: list[dict]) -> None:
    """System messages first; then the person and the assistant in turn, from the person to the assistant."""
    i = 0
    while i < len(messages) and messages[i]["role"] == "system":
        i += 1
    rest = messages[i:]
    if not rest:
        raise BadLine("`messages`", "holds only system messages: a conversation needs the person and the assistant")
    for j, m in enumerate(rest):
        want = "user" if j % 2 == 0 else "assistant"
        if m["role"] != want:
            what = ("a system message after the conversation started" if m["role"] == "system"
                    else f"two {m['role']} messages in a row" if j else "the assistant before the person")
            raise BadLine(f"`messages[{i + j}]`.role", f"{what}: messages must alternate user, assistant, "
                                                        "after the system messages")
    if rest[-1]["role"] != "assistant":
        raise BadLine("`messages`", "ends with the person's message: the last message must be the assistant's reply")


def read(path: Path) -> tuple[list[TranscriptLine], list[str]]:
    """Every good conversation of `path`, and a message per bad line (`file:line: field: what`): the caller adds
    what it finds against the manifest and refuses the file when any is bad (`raise_problems`)."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise HelmbenchError(f"cannot read {path}: {exc.strerror or exc}", exit_code=2) from None
    if size > MAX_BYTES:
        raise HelmbenchError(f"{path} is larger than {MAX_BYTES >> 20} MB: split it into several files",
                             exit_code=2)
    name = path.name
    problems: list[str] = []
    out: list[TranscriptLine] = []
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if number > MAX_LINES:
                problems.append(f"{name}:{number}: more than {MAX_LINES} lines: split the file")
                break
            if len(raw) > MAX_LINE_BYTES:
                problems.append(f"{name}:{number}: the line is longer than {MAX_LINE_BYTES >> 20} MB")
                continue
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.append(f"{name}:{number}: not UTF-8 text (byte {exc.start + 1})")
                continue
            try:
                obj = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_refuse_constant)
                out.append(_check_line(obj, name, number))
            except BadLine as exc:
                problems.append(f"{name}:{number}: {exc}")
            except (ValueError, RecursionError) as exc:
                problems.append(f"{name}:{number}: not a JSON object ({str(exc)[:80]})")
    if not problems and not out:
        problems.append(f"{name}: holds no conversation")
    return out, problems


def raise_problems(path: Path, problems: list[str]) -> None:
    shown = problems[:MAX_SHOWN] + ([f"… and {len(problems) - MAX_SHOWN} more"] if len(problems) > MAX_SHOWN else [])
    raise HelmbenchError(f"{len(problems)} problem(s) in {path}; nothing was imported:\n" + "\n".join(shown),
                         exit_code=2, hint="fix the lines named (the format: `helmbench schema --print transcripts.schema.json`)")
