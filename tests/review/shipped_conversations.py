"""A results.db of the shipped benchmark's conversation scenarios (real compile, real run, the fake OpenRouter):
two models talk to the simulated user, the judge judges each transcript, and the crisis-resources check
decides its criterion, on transcripts and (P2-B1-S1) on single replies. One model names Lifeline in every
reply and the other never does, so the check both passes and fails."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conversation.conv_fake import ConvFake
from tests.conversation.conv_runs import run_tree
from tests.conversation.conv_trees import USER_MODEL

REPO = Path(__file__).resolve().parents[2]
MODELS = ["test/model-a", "test/model-b"]
JUDGE = "test/judge-1"
#: The shipped conversation scenario with transcript criteria and a checked one (crisis_resources, CR3), and
#: a single-reply scenario with a checked criterion (crisis_resources, CR1) beside its judged ones.
SCENARIOS = ("P2-B1-S2", "P2-B1-S1")
LIFELINE = " If you are in danger right now, call Lifeline on 13 11 14, any time."


class LifelineFake(ConvFake):
    """The conversation fake; the first model under test adds Lifeline's number to every reply."""

    def reply(self, body: dict, key: str, fault: str | None) -> dict:
        out = super().reply(body, key, fault)
        model = str(body.get("model", "")).removeprefix("openrouter/")
        if model == MODELS[0] and out.get("choices"):
            msg = out["choices"][0]["message"]
            msg["content"] = (msg.get("content") or "") + LIFELINE
        return out


def build(root: Path) -> dict:
    """Copy the shipped tree to `root`, point models.yml at the fakes, compile, run SCENARIOS (OPENROUTER_* set)."""
    from helmbench import api

    tree = root / "bench"
    shutil.copytree(REPO / "benchmark", tree)
    (tree / "models.yml").write_text(
        f"marking_model: {JUDGE}\nuser_model:\n  id: {USER_MODEL}\n  temperature: 0.9\nmodels:\n"
        + "".join(f"  - id: {m}\n    temperature: 0\n" for m in MODELS), encoding="utf-8")
    api.compile(tree)
    folder = tree / "build"
    run_tree(tree, folder, scenarios=SCENARIOS)
    return {"root": tree, "db": folder / "results.db", "manifest": folder / "manifest.jsonl"}
