"""Codes, slugs and ordering: the naming rules every stage agrees on."""

from __future__ import annotations

import re

# re.ASCII: `\d` means 0-9 only; `S١` (an Arabic-Indic digit) is not scenario 1.
PILLAR_RE = re.compile(r"^(P\d+)(?:--.*)?$", re.ASCII)
BEHAVIOUR_RE = re.compile(r"^(B\d+)(?:--.*)?$", re.ASCII)
SCENARIO_RE = re.compile(r"^(S\d+[A-Z]*)(?:--.*)?$", re.ASCII)
FLAT_RE = re.compile(r"^(P\d+)-(B\d+)-(S\d+[A-Z]*)(?:--.*)?$", re.ASCII)
COMPONENT_RE = {
    "condition": re.compile(r"^C\d+[A-Z]*$", re.ASCII),
    "user_context": re.compile(r"^U\d+[A-Z]*$", re.ASCII),
    "perturbation": re.compile(r"^PT\d+[A-Z]*$", re.ASCII),
}
CRITERION_RE = re.compile(r"^CR\d+[A-Z]*$", re.ASCII)
#: A folder name that starts like a pillar, behaviour or scenario code without being one (`Pillar1`, `b2`,
#: `S1 - slug`, `S١`): a misspelt code, not a folder kept there for another purpose. Any digit, any case.
CODE_LIKE_RE = re.compile(r"^(?:p(?:illar)?|b(?:ehaviou?r)?|s(?:cenario)?)[\W_]*\d", re.IGNORECASE)

_DIGITS = re.compile(r"(\d+)", re.ASCII)


def natural_key(text: str | int) -> tuple:
    """Sort key so that P2 < P10 and S1 < S1A < S2 (an int sorts as itself), identical on every machine: the one
    natural order of codes, from the tree's files to the site's tables."""
    if isinstance(text, int):
        return (text,)
    return tuple(int(p) if p.isdigit() else p for p in _DIGITS.split(str(text)))


_APOSTROPHES = re.compile(r"['\u2019\u2018`]")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def tag_name(heading: str) -> str:
    """XML tag for a `##` heading: lower-case, apostrophes dropped, other runs → `_`, trimmed.

    Only ASCII letters and digits survive so that every tag is a valid XML name chunk on
    every tokenizer; "User's input" → "users_input".
    """
    text = _APOSTROPHES.sub("", heading.lower())
    return _NON_ALNUM.sub("_", text).strip("_")


def case_id(scenario_key: str, condition: str, user_context: str | None, perturbation: str) -> str:
    parts = [scenario_key, condition] + ([user_context] if user_context else []) + [perturbation]
    return "-".join(parts)
