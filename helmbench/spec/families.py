"""Model families: which models are relatives, so a judge never silently marks its own kin.

A judge from the same family as a model under test is a conflict of interest: models of one
family share training data, style and blind spots, and a judge tends to prefer answers that
read like its own. The rule, in order:

1. `families:` in models.yml maps an id prefix to a family name (it overrides the table below
   for the prefixes it names): `families: {openai/o4: openai/gpt}` makes `openai/o4-mini` a GPT.
2. The default table `DEFAULT_FAMILIES`: the longest prefix that starts the id names its family.
3. Otherwise the id up to its size or version suffix: the provider prefix, then the name's
   `-`-separated parts with a trailing `:tag` and trailing size, variant and date parts removed
   (`openai/gpt-4.1-mini` → `openai/gpt-4.1`, `meta-llama/llama-3.3-70b-instruct` →
   `meta-llama/llama-3.3`).

Lives in spec/ because lint (the warning), score (the leaderboard's flag) and report all ask it.
"""

from __future__ import annotations

import re
from typing import Mapping

# Vendor lines whose versions and sizes are one family even where the generic rule would split
# them (claude-sonnet-4 and claude-3.5-haiku are both Claude). Prefixes end at a `-` boundary.
DEFAULT_FAMILIES: dict[str, str] = {
    "anthropic/claude": "anthropic/claude",
    "google/gemini": "google/gemini",
    "google/gemma": "google/gemma",
    "meta-llama/llama": "meta-llama/llama",
    "mistralai/mistral": "mistralai/mistral",
    "mistralai/ministral": "mistralai/mistral",
    "deepseek/deepseek": "deepseek/deepseek",
    "qwen/qwen": "qwen/qwen",
    "x-ai/grok": "x-ai/grok",
}

# A trailing part that names a size, variant or date rather than the model itself.
_SUFFIX = re.compile(
    r"^(mini|nano|micro|small|medium|large|xl|pro|flash|lite|turbo|preview|latest|instruct|chat|it|base|"
    r"exp|experimental|thinking|\d+(\.\d+)?[bmk]|a\d+b|\d{4}(\d{2}(\d{2})?)?|v\d+(\.\d+)*)$")
_DATE = re.compile(r"-\d{4}(-\d{2}){1,2}$")  # a dated snapshot (-2024-06, -2024-06-01), removed whole


def family_of(model_id: str, overrides: Mapping[str, str] | None = None) -> str:
    """The family name of `model_id` (see the module's rule); never empty."""
    for table in (overrides or {}, DEFAULT_FAMILIES):
        best = max((p for p in table if _starts(model_id, p)), key=len, default=None)
        if best is not None:
            return table[best]
    provider, _, name = model_id.partition("/")
    parts = _DATE.sub("", name.split(":", 1)[0]).split("-")
    while len(parts) > 1 and _SUFFIX.match(parts[-1].lower()):
        parts.pop()
    return f"{provider}/{'-'.join(parts)}" if name else model_id


def _starts(model_id: str, prefix: str) -> bool:
    """`prefix` starts the id at a boundary (`openai/o4` starts `openai/o4-mini`, not `openai/o40`)."""
    return model_id == prefix or (model_id.startswith(prefix) and model_id[len(prefix)] in "-:.")


def conflicts(judges: list[str], models: list[str], overrides: Mapping[str, str] | None = None) -> dict[str, list[str]]:
    """Each model under test that shares a family with a judge → those judges (in given order)."""
    fam = {j: family_of(j, overrides) for j in judges}
    out: dict[str, list[str]] = {}
    for m in models:
        kin = [j for j in judges if fam[j] == family_of(m, overrides)]
        if kin:
            out[m] = kin
    return out
