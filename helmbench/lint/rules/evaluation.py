"""Rules that check a scenario's evaluation against its response schema.

A deterministic evaluation reads one field of the model's structured output. If that field
does not exist, has the wrong shape, or cannot hold the expected value, every case of the
scenario fails for every model: the benchmark would measure its own typo.
"""

from __future__ import annotations

from helmbench.diagnostics import Collector
from helmbench.lint import schemas
from helmbench.lint.registry import rule
from helmbench.lint.where import evaluation_span, has_prompt, key_span, scenario_file, value_span
from helmbench.spec.models import CategoryMatch, ListIncludes, Sqe, TagThreshold
from helmbench.spec.tree import Benchmark, Scenario
from helmbench.spec.validate import suggest

LIST_TYPES = (ListIncludes, TagThreshold)


def _on_disk(bench: Benchmark, sc: Scenario, *patterns: str) -> bool:
    """The file exists but could not be read: the loader's HB103 is the one finding for it."""
    folder = bench.root / sc.folder
    return any(any(folder.glob(p)) for p in patterns)


@rule("HB202", "HB507")
def evaluation_inputs(bench: Benchmark, out: Collector) -> None:
    """The things an evaluation needs besides its own keys: an answer key and a schema."""
    for sc in bench.scenarios:
        if not has_prompt(sc):
            continue
        ev, path = sc.meta.evaluation, scenario_file(sc)
        if isinstance(ev, CategoryMatch) and ev.expected is None and sc.meta.category is None:
            out.add("HB202", path, key_span(sc.frontmatter, "evaluation"),
                    "category_match has no `expected` value and the scenario has no `category`",
                    hint="add `expected:` under `evaluation`, or `category:` to the frontmatter")
        if not isinstance(ev, Sqe) and sc.schema_source is None and not _on_disk(bench, sc, f"{sc.code}.json"):
            out.add("HB507", path, evaluation_span(sc, "type"),
                    f"{ev.type} reads `{ev.field}` of structured output, but there is no `{sc.code}.json` schema",
                    hint=f"add {sc.folder}/{sc.code}.json describing the response")


@rule("HB501", "HB502", "HB503")
def evaluation_against_schema(bench: Benchmark, out: Collector) -> None:
    for sc in bench.scenarios:
        if not has_prompt(sc) or isinstance(sc.meta.evaluation, Sqe) or sc.schema is None:
            continue
        found = schemas.inner(sc.schema)
        if found is not None and isinstance(found.schema, dict):
            check_field(sc, found.schema, out)


def check_field(sc: Scenario, schema: dict, out: Collector) -> None:
    ev, path = sc.meta.evaluation, scenario_file(sc)
    node = schemas.field(schema, ev.field)
    if node is None:
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        out.add("HB501", path, evaluation_span(sc, "field"),
                f"evaluation field `{ev.field}` is not a property of the response schema "
                f"({', '.join(f'`{p}`' for p in props) or 'it has none'})",
                hint=suggest(ev.field, list(props)))
        return
    types = schemas.types_of(node)
    is_list = isinstance(ev, LIST_TYPES)
    if is_list and types and "array" not in types:
        out.add("HB502", path, evaluation_span(sc, "field"),
                f"{ev.type} needs an array field, but `{ev.field}` is {'/'.join(sorted(types))}",
                hint="point `field` at an array property, or use category_match")
        return
    if not is_list and types == {"array"}:
        out.add("HB502", path, evaluation_span(sc, "field"),
                f"category_match compares one value, but `{ev.field}` is an array",
                hint="use list_includes or tag_threshold for array fields")
        return
    enum = schemas.enum_of(schema, node.get("items") if is_list else node)
    if enum is None:
        return
    if isinstance(ev, ListIncludes):
        key, values = "required", ev.required
    elif isinstance(ev, TagThreshold):
        key, values = "expected", ev.expected
    elif ev.expected is not None:
        key, values = "expected", ev.accepted()
    else:
        key, values = "category", [sc.meta.category] if sc.meta.category is not None else []
    for value in values:
        if value not in enum:
            at = value_span(sc.frontmatter, "category") if key == "category" else evaluation_span(sc, key, value=value)
            out.add("HB503", path, at,
                    f"`{key}` value `{value}` is not in the enum of `{ev.field}`, so no answer can match it",
                    hint=suggest(value, list(enum)) or f"allowed: {', '.join(map(str, enum))}")


@rule("HB505", "HB508")
def judged_scenarios(bench: Benchmark, out: Collector) -> None:
    for sc in bench.scenarios:
        if not has_prompt(sc):
            continue
        if isinstance(sc.meta.evaluation, Sqe) and not sc.criteria and not _on_disk(bench, sc, "criteria.md", "CR*.md"):
            out.add("HB505", scenario_file(sc), evaluation_span(sc, "type"),
                    f"scenario {sc.key} is judged (sqe) but has no criteria",
                    hint=f"add {sc.folder}/criteria.md, or CR1.md, CR2.md, …")
        elif not isinstance(sc.meta.evaluation, Sqe):
            for cr in sc.criteria:
                out.add("HB508", cr.path, 1,
                        f"criteria are only read for sqe scenarios; {sc.key} uses {sc.meta.evaluation.type}",
                        hint="set `evaluation: {type: sqe}` or remove the file")
