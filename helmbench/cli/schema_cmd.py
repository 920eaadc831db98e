"""`helmbench schema`: JSON Schemas of every authored file, for editors.

Generated from the same Pydantic models the loader validates with, so an editor that
validates frontmatter while an author types agrees with `helmbench lint` by construction.
"""

from __future__ import annotations

from pathlib import Path

import typer

from helmbench.cli.app import app

# file stem -> model name in helmbench.spec.models, and what the schema describes
SCHEMAS = {
    "scenario": ("ScenarioMeta", "Frontmatter of a scenario file (S1.md)"),
    "condition": ("ConditionMeta", "Frontmatter of a condition (# C1 in conditions.md, or conditions/C1.md)"),
    "user-context": ("UserContextMeta", "Frontmatter of a user context (# U1 in user-contexts.md)"),
    "perturbation": ("PerturbationMeta", "Frontmatter of a perturbation (# PT1 in perturbations.md)"),
    "criterion": ("CriterionMeta", "Frontmatter of judge criteria (criteria.md, CR1.md)"),
    "conversation": ("ConversationMeta", "Frontmatter of a conversation (conversation.md beside S1.md)"),
    "benchmark": ("BenchmarkFile", "benchmark.yml"),
    "models": ("ModelsFile", "models.yml"),
    "scoring": ("ScoringFile", "scoring.yaml"),
}
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _accept_shorthands(stem: str, schema: dict) -> dict:
    """Add the forms that the models' `mode="before"` validators accept but Pydantic cannot see:
    `marking_model: <id>` (or `generator_model:`) as a plain string, and a numeric `version: 1`."""
    props = schema.get("properties", {})
    model_id = {"type": "string", "description": "OpenRouter model id"}
    for key in ("marking_model", "generator_model", "user_model"):
        if stem == "models" and "anyOf" in props.get(key, {}):
            for variant in props[key]["anyOf"]:  # an ensemble's entries may be ids too
                if variant.get("type") == "array" and "items" in variant:
                    variant["items"] = {"anyOf": [model_id, variant["items"]]}
            props[key]["anyOf"].insert(0, model_id)
    if stem == "benchmark" and props.get("version", {}).get("type") == "string":
        props["version"] = {k: v for k, v in props["version"].items() if k != "type"}
        props["version"]["type"] = ["string", "number"]
    return schema


def build_schemas() -> dict[str, dict]:
    """{file name: JSON Schema} for every authored file type."""
    from helmbench.spec import conversation, models

    out = {}
    for stem, (name, what) in SCHEMAS.items():
        if name == "ScenarioMeta":
            model = models.scenario_meta()  # with plugins' evaluation types
        elif name == "CriterionMeta":
            model = models.criterion_meta()  # a checked criterion's `evaluation:`, plugins' types included
        else:
            model = getattr(models, name, None) or getattr(conversation, name)
        schema = _accept_shorthands(stem, model.model_json_schema())
        schema = {"$schema": DRAFT, "$id": f"{stem}.schema.json", "description": what, **schema}
        out[f"{stem}.schema.json"] = schema
    from helmbench.plugins import registry

    for ev in registry.evaluators().values():  # the data files evaluators read (crisis-services.yml)
        for stem, what, model in ev.schemas:
            out[f"{stem}.schema.json"] = {"$schema": DRAFT, "$id": f"{stem}.schema.json", "description": what,
                                          **model.model_json_schema()}
    return out


@app.command()
def schema(
    out: Path = typer.Option(Path("build/schemas"), "--out", "-o", help="Folder to write the schemas to."),
) -> None:
    """Write JSON Schemas of frontmatter and YAML files (scenario.schema.json, …) for editors.

    Example (VS Code, YAML extension): map `build/schemas/benchmark.schema.json` to
    `benchmark/benchmark.yml` under `yaml.schemas`.
    """
    import json

    from helmbench import safewrite
    from helmbench.cli import validate

    validate.output_dir(out, "--out")
    for name, schema in build_schemas().items():
        text = json.dumps(schema, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
        safewrite.write_text(out / name, text, out)
        print(out / name)
