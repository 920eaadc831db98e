"""Composition: the one user message a model receives, built from component bodies.

Each `##` section becomes an XML block named by the tag-name rule; text before the first
`##` passes through untagged. Bodies arrive with frontmatter and `#` delimiters already
removed by the loader, so neither can reach a model. Line endings and a BOM are normalised
here too (as the loader does), so a body given with CRLF composes exactly like one with LF.
"""

from __future__ import annotations

from helmbench.spec.markdown import sections
from helmbench.spec.text import normalise


def compose_body(body: str) -> str:
    blocks = []
    for s in sections(normalise(body)):
        if s.heading is None:
            blocks.append(s.text)
        else:
            blocks.append(f"<{s.tag}>\n{s.text}\n</{s.tag}>" if s.text else f"<{s.tag}>\n</{s.tag}>")
    return "\n\n".join(blocks)


def compose(bodies: list[str]) -> str:
    """Bodies in order (scenario, condition, user context, perturbation), blank-line separated."""
    return "\n\n".join(b for b in (compose_body(x) for x in bodies) if b)


def response_format(schema: dict | None, name: str) -> dict | None:
    """Wrap a bare JSON Schema for strict structured outputs; pass a wrapped one through."""
    if schema is None:
        return None
    if schema.get("type") == "json_schema" and isinstance(schema.get("json_schema"), dict):
        return schema
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}
