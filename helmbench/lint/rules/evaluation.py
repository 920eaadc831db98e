"""Rules that check a scenario's evaluation against its response schema.

A deterministic evaluation reads one field of the model's structured output. If that field
does not exist, has the wrong shape, or cannot hold the expected value, every case of the
scenario fails for every model: the benchmark would measure its own typo.

Nothing here names an evaluation type: what a type reads (`field`: one value or a list),
which values its field must allow (`values`) and its own checks (`check`) come from its
registered evaluator (helmbench/plugins), so a plugin's type gets the same checks.
"""

from __future__ import annotations

from helmbench.diagnostics import Collector
from helmbench.lint import schemas
from helmbench.lint.rulebook import rule
from helmbench.lint.where import evaluation_span, has_prompt, scenario_file, value_span
from helmbench.plugins import registry as plugins
from helmbench.spec.tree import Benchmark, Scenario
from helmbench.spec.validate import suggest


def _on_disk(bench: Benchmark, sc: Scenario, *patterns: str) -> bool:
    """The file exists but could not be read: the loader's HB103 is the one finding for it."""
    folder = bench.root / sc.folder
    return any(any(folder.glob(p)) for p in patterns)


def _evaluated(bench: Benchmark):
    """(scenario, its evaluator) for every scenario whose frontmatter loaded."""
    for sc in bench.scenarios:
        if has_prompt(sc):
            yield sc, plugins.evaluator(sc.meta.evaluation.type)


@rule("HB507")
def evaluation_inputs(bench: Benchmark, out: Collector) -> None:
    """The things an evaluation needs besides its own keys: a schema for a field it reads."""
    for sc, evaluator in _evaluated(bench):
        ev, path = sc.meta.evaluation, scenario_file(sc)
        if evaluator.field and sc.schema_source is None and not _on_disk(bench, sc, f"{sc.code}.json"):
            out.add("HB507", path, evaluation_span(sc, "type"),
                    f"{ev.type} reads `{ev.field}` of structured output, but there is no `{sc.code}.json` schema",
                    hint=f"add {sc.folder}/{sc.code}.json describing the response")


@rule("HB202", "HB505")
def evaluator_checks(bench: Benchmark, out: Collector) -> None:
    """Each type's own checks (category_match's answer key, sqe's criteria, a plugin's own codes)."""
    for sc, evaluator in _evaluated(bench):
        if evaluator.check is not None:
            evaluator.check(bench, sc, out)


@rule("HB501", "HB502", "HB503")
def evaluation_against_schema(bench: Benchmark, out: Collector) -> None:
    for sc, evaluator in _evaluated(bench):
        if not evaluator.field or sc.schema is None:
            continue
        found = schemas.inner(sc.schema)
        if found is not None and isinstance(found.schema, dict):
            check_field(sc, found.schema, out)


def check_field(sc: Scenario, schema: dict, out: Collector) -> None:
    ev, path = sc.meta.evaluation, scenario_file(sc)
    evaluator = plugins.evaluator(ev.type)
    node = schemas.field(schema, ev.field)
    if node is None:
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        out.add("HB501", path, evaluation_span(sc, "field"),
                f"evaluation field `{ev.field}` is not a property of the response schema "
                f"({', '.join(f'`{p}`' for p in props) or 'it has none'})",
                hint=suggest(ev.field, list(props)))
        return
    types = schemas.types_of(node)
    is_list = evaluator.field == "list"
    if is_list and types and "array" not in types:
        out.add("HB502", path, evaluation_span(sc, "field"),
                f"{ev.type} needs an array field, but `{ev.field}` is {'/'.join(sorted(types))}",
                hint="point `field` at an array property, or use category_match")
        return
    if not is_list and types == {"array"}:
        out.add("HB502", path, evaluation_span(sc, "field"),
                f"{ev.type} compares one value, but `{ev.field}` is an array",
                hint="use list_includes or tag_threshold for array fields")
        return
    enum = schemas.enum_of(schema, node.get("items") if is_list else node)
    if enum is None or evaluator.values is None:
        return
    key, values = evaluator.values(ev, sc)
    for value in values:
        if value not in enum:
            at = value_span(sc.frontmatter, "category") if key == "category" else evaluation_span(sc, key, value=value)
            out.add("HB503", path, at,
                    f"`{key}` value `{value}` is not in the enum of `{ev.field}`, so no answer can match it",
                    hint=suggest(value, list(enum)) or f"allowed: {', '.join(map(str, enum))}")


@rule("HB508")
def unread_criteria(bench: Benchmark, out: Collector) -> None:
    """Criteria are read only by the judge: beside an evaluation decided on arrival they do nothing."""
    for sc, evaluator in _evaluated(bench):
        if not evaluator.deferred:
            for cr in sc.criteria:
                out.add("HB508", cr.path, 1,
                        f"criteria are only read for sqe scenarios; {sc.key} uses {sc.meta.evaluation.type}",
                        hint="set `evaluation: {type: sqe}` or remove the file")
