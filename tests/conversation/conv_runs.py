"""Helpers for tests elsewhere (shards, export) that run the conversation tree with two models against
the conversation fake, in-process: the tree, the environment pointing at a fake, and one run."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

from tests.conversation.conv_fake import ConvFake
from tests.conversation.conv_trees import conversation_tree

FAST = {"HELMBENCH_RETRY_BASE_DELAY": "0.01", "HELMBENCH_RETRY_MAX_DELAY": "0.05", "HELMBENCH_MAX_ATTEMPTS": "3"}


def two_model_tree(dest: Path, other: str) -> Path:
    """The conversation tree (single-answer, judged, scripted and simulated conversations) with `other`
    as a second model under test; not compiled."""
    root = conversation_tree(dest)
    models = (root / "models.yml").read_text(encoding="utf-8")
    (root / "models.yml").write_text(models + f"  - id: {other}\n    temperature: 0\n", encoding="utf-8")
    return root


@contextmanager
def fake_openrouter():
    """A started ConvFake with OPENROUTER_* and fast retries in the environment (restored after)."""
    fake = ConvFake().start()
    values = {"OPENROUTER_API_BASE": fake.api_base, "OPENROUTER_API_KEY": "sk-or-v1-TEST-conv-runs", **FAST}
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield fake
    finally:
        fake.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_tree(tree: Path, folder: Path, **kw):
    """One in-process run of the compiled `tree` into `folder`/results.db."""
    from rich.console import Console

    from helmbench.run.config import RetryPolicy, RunOptions
    from helmbench.run.session import run

    opts = RunOptions(manifest=str(tree / "build/manifest.jsonl"), models_file=str(tree / "models.yml"),
                      db=str(folder / "results.db"), logs_dir=str(folder / "logs"),
                      retry=RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05), **kw)
    return run(opts, Console(stderr=True, width=160), live=False)
