"""The authored form of a conversation: `conversation.md` beside a scenario's `S1.md`.

Why a separate file in the existing tree rather than a new kind of scenario: the opening turn
is composed exactly as every single-turn case is (scenario, condition, user context,
perturbation), so severities, difficulties and the case product keep their meaning; the file
only adds what happens after the opening. Its frontmatter says who the user is (`scripted`: the
author wrote every turn; `simulated`: a user model plays a persona) and which turns are
checked; its `# Turn N` parts are the user's messages (scripted) or the landmarks the simulated
user must reach by that turn. `# Persona` and `# Goal` describe the simulated user.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated, Literal, Union

from pydantic import Field, model_validator

from helmbench.spec.models import CategoryMatch, ListIncludes, NoteProperties, Strict, TagThreshold
from helmbench.spec.text import SourceText
from helmbench.spec.yamlio import LineDict

FILE = "conversation.md"
#: The most turns a conversation may have: every turn re-sends the whole transcript, so the
#: cost of a conversation grows with the square of its length.
MAX_TURNS = 20
#: What a simulated user writes, alone, to end the conversation when its stop rule is met.
STOP_MARKER = "[END CONVERSATION]"

TURN_HEADING = re.compile(r"^turn\s*(\d+)$", re.IGNORECASE)
SECTIONS = ("persona", "goal")

TurnEvaluation = Annotated[Union[CategoryMatch, ListIncludes, TagThreshold], Field(discriminator="type")]


class Checkpoint(Strict):
    """A deterministic evaluation of the model's structured reply at one turn."""

    turn: Annotated[int, Field(ge=1, le=MAX_TURNS, description="the turn whose reply is checked (1 = the opening); "
                                                               "when the conversation ended earlier, its last reply")]
    title: str | None = None
    evaluation: TurnEvaluation

    @model_validator(mode="before")
    @classmethod
    def _default_type(cls, data):
        """`type` may be left out, as in a scenario's `evaluation`: it is then category_match."""
        if isinstance(data, dict) and isinstance(data.get("evaluation"), dict):
            return {**data, "evaluation": {"type": "category_match", **data["evaluation"]}}
        return data


class ConversationMeta(NoteProperties):
    """Frontmatter of `conversation.md`."""

    title: str | None = None
    user: Literal["scripted", "simulated"] = Field(
        "scripted", description="scripted: every `# Turn N` is the user's message; simulated: a user model "
                                "plays `# Persona` towards `# Goal`, and `# Turn N` are landmarks")
    opening: Literal["authored", "simulated"] = Field(
        "authored", description="authored: turn 1 is the composed opening; simulated (with `user: simulated`): the "
                                "simulated user writes turn 1 too, given the perturbation's `User's input` (if any) "
                                "as what the person has come to say")
    max_turns: Annotated[int, Field(ge=2, le=MAX_TURNS)] | None = Field(
        None, description="simulated: the most turns (the opening included) before the conversation stops")
    stop_when: str | None = Field(None, description="simulated: when the user should end the conversation early")
    checkpoints: list[Checkpoint] = Field([], description="deterministic checks of the reply at given turns")


@dataclass
class Part:
    """One `# Turn N`, `# Persona` or `# Goal` part of conversation.md."""

    heading: str
    line: int  # 1-based line of its `#` heading
    body: str
    body_line: int


@dataclass
class Conversation:
    source: SourceText
    meta: ConversationMeta | None  # None when the frontmatter is invalid
    frontmatter: LineDict | None = None
    turns: dict[int, Part] = field(default_factory=dict)  # by turn number
    sections: dict[str, Part] = field(default_factory=dict)  # "persona", "goal"

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def simulated(self) -> bool:
        return self.meta is not None and self.meta.user == "simulated"

    @property
    def last_turn(self) -> int:
        """The last turn that can exist: the maximum (simulated) or the last scripted turn."""
        if self.simulated:
            return self.meta.max_turns or 0
        return max(self.turns, default=1)


__all__ = ["Checkpoint", "Conversation", "ConversationMeta", "FILE", "MAX_TURNS", "Part", "STOP_MARKER"]
