"""JSON Schemas of every authored file, generated from the Pydantic models the loader validates with
(`helmbench schema`), so an editor validating frontmatter agrees with `helmbench lint` by construction.

Why in the API: the schemas are data a program or an editor setup can ask for; the command line only
writes or prints them (with the output schemas it ships, `cli/output_schemas/`).
"""

from __future__ import annotations

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


def input_schemas() -> dict[str, dict]:
    """{file name: JSON Schema} for every authored file type (`helmbench schema`), plugins' data files included."""
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
