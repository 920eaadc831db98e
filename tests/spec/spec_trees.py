"""Tiny benchmark trees written from dicts, for the loader tests."""

from __future__ import annotations

from pathlib import Path

SCENARIO = """---
category: ROUTINE
evaluation:
  type: category_match
  field: category
---
## Your job

Classify the message.
"""
CONDITIONS = """# C1
---
difficulty: 3
---

## System instructions

You are a helpful assistant.
"""
PERTURBATIONS = """# PT1
---
severity: 5
---

## User's input

Need to make a will tonight.

# PT2
---
severity: -2
---

## User's input

We just had a baby; how do wills work?
"""
SCHEMA = '{"type": "object", "properties": {"category": {"type": "string", "enum": ["ROUTINE", "RISK"]}}, ' \
         '"required": ["category"], "additionalProperties": false}\n'


def scenario_files(prefix: str) -> dict[str, str]:
    return {
        f"{prefix}/S1.md": SCENARIO,
        f"{prefix}/S1.json": SCHEMA,
        f"{prefix}/conditions.md": CONDITIONS,
        f"{prefix}/perturbations.md": PERTURBATIONS,
    }


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")
    return root
