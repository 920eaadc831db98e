"""Text that crosses from one model to another, made inert: the one `neutralise` for every crossing.

Why: a model's output is untrusted input to the next model. The simulated user's message goes
to the model under test, whose real system instructions sit in a tag the tree's own `##`
heading produced (`<system_instructions>`); a user message that opens that tag, or a chat
template's role marker (`<|im_start|>system`), could pass as instructions. A reply goes into the
judge's prompt inside `<model_response>`; a reply that closes that block early (`< /model_response>`)
could speak as the evaluator. So before text crosses, every such marker is defused:
- the tags the case's own messages use (found in them: `<tag>` on a line of its own, as
  composition writes them) and the judge prompt's delimiters: `<` becomes `&lt;`;
- common chat-template markers (`<|...|>` and its full-width form, `[INST]`, `<<SYS>>`,
  `<start_of_turn>`/`<end_of_turn>`): their opening bracket becomes an entity;
tolerant of spaces and case (`< / Model_Response`). Text holding no marker is returned as it
is, so a request without one keeps its bytes and its hash (nothing stored is asked again).

Two crossings call it, one place each: `run/conversation/kind.py` where a simulated user's
message joins the transcript the model under test is sent, and `run/judge/judge_prompt.py`
where a reply (and the prompt's messages) are placed into the judge's prompt.
"""

from __future__ import annotations

import re
from functools import lru_cache

#: The judge prompt's own delimiters (judge_prompt.py writes them).
JUDGE_TAGS = ("judge_criterion", "prompt_given_to_model", "prompt_message", "model_response")
#: The transcript judge's own delimiters, added at that crossing only (so a single answer's judge request, and
#: its cache key, stay as they were for a reply that happens to contain `<message`).
TRANSCRIPT_TAGS = ("conversation", "message")
#: The delimiters of a criterion's named questions, added only in the requests of a criterion that has them (so
#: every other judge request, and its cache key, stays as it was for a reply that happens to contain `<question`).
QUESTION_TAGS = ("judge_questions", "question")
_CHAT = re.compile(
    r"<(?=\s*\|[^|<>\n]{1,40}\|\s*>)"  # <|im_start|>, <|eot_id|>, < | system | >
    r"|<(?=\s*\uff5c[^\uff5c<>\n]{1,40}\uff5c\s*>)"  # <｜begin▁of▁sentence｜>
    r"|<(?=\s*/?\s*(?:start_of_turn|end_of_turn)\s*>)"
    r"|<(?=<\s*/?\s*SYS\s*>>)"
    r"|\[(?=\s*/?\s*INST\s*\])", re.IGNORECASE)
_ENTITY = {"<": "&lt;", "[": "&#91;"}
_CASE_TAG = re.compile(r"^<([a-z0-9_]{1,64})>$", re.MULTILINE)


@lru_cache(maxsize=256)
def _tag_pattern(tags: tuple[str, ...]) -> re.Pattern:
    names = "|".join(re.escape(t) for t in sorted(set(tags), key=len, reverse=True))
    return re.compile(r"<\s*(/?)\s*(" + names + r")\b", re.IGNORECASE)


def tags_in(messages: list[dict]) -> tuple[str, ...]:
    """The tags a case's messages use (one per `##` heading of its components), sorted."""
    found: set[str] = set()
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            found.update(_CASE_TAG.findall(content))
    return tuple(sorted(found))


def neutralise(text: str, tags: tuple[str, ...] = ()) -> str:
    """`text` with the judge's delimiters, `tags` and chat-template markers made inert (see above)."""
    out = _tag_pattern(tuple(sorted({*JUDGE_TAGS, *tags}))).sub(lambda m: f"&lt;{m.group(1)}{m.group(2)}", text)
    return _CHAT.sub(lambda m: _ENTITY[m.group(0)], out)


__all__ = ["JUDGE_TAGS", "QUESTION_TAGS", "TRANSCRIPT_TAGS", "neutralise", "tags_in"]
