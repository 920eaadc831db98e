"""Rules about models.yml.

Responses are stored per model id, so a repeated id would run and pay for the same model
twice under one name; judged scenarios cannot be scored without a judge.
"""

from __future__ import annotations

from helmbench.diagnostics import Collector
from helmbench.lint.rulebook import rule
from helmbench.lint.where import value_span
from helmbench.spec.tree import Benchmark
from helmbench.spec.yamlio import LineDict


@rule("HB605")
def duplicate_model_ids(bench: Benchmark, out: Collector) -> None:
    data = bench.models_data
    models = data.get("models") if isinstance(data, LineDict) else None
    if not isinstance(models, list) or bench.models_source is None:
        return
    seen: dict[str, int] = {}
    for entry in models:
        if not isinstance(entry, LineDict) or not isinstance(entry.get("id"), str):
            continue
        at = value_span(entry, "id")
        line = at[0]
        if entry["id"] in seen:
            out.add("HB605", bench.models_source.path, at,
                    f"model `{entry['id']}` is listed twice (first at line {seen[entry['id']]})",
                    hint="remove one of the two entries")
        else:
            seen[entry["id"]] = line
    duplicate_judges(bench, out)


def duplicate_judges(bench: Benchmark, out: Collector) -> None:
    """An ensemble (`marking_model` as a list) naming one judge twice would give it two votes."""
    data = bench.models_data
    judges = data.get("marking_model") if isinstance(data, LineDict) else None
    if not isinstance(judges, list) or bench.models_source is None:
        return
    seen: dict[str, int] = {}
    for i, entry in enumerate(judges):
        judge_id = entry.get("id") if isinstance(entry, LineDict) else entry
        if not isinstance(judge_id, str):
            continue
        at = value_span(entry, "id") if isinstance(entry, LineDict) else value_span(data, "marking_model", i)
        if judge_id in seen:
            out.add("HB605", bench.models_source.path, at,
                    f"judge `{judge_id}` is listed twice in the `marking_model` ensemble (first at line "
                    f"{seen[judge_id]}): it would get two votes", hint="remove one of the two entries")
        else:
            seen[judge_id] = at[0]


@rule("HB606")
def judge_present(bench: Benchmark, out: Collector) -> None:
    data = {} if bench.models_data is None else bench.models_data  # an empty file names no judge
    if bench.models_source is None or not isinstance(data, dict) or data.get("marking_model"):
        return
    judged = [sc.key for sc in bench.scenarios if sc.evaluation_type == "sqe"]
    if judged:
        more = f" and {len(judged) - 1} more" if len(judged) > 1 else ""
        out.add("HB606", bench.models_source.path, 1,
                f"scenario {judged[0]}{more} is judged (sqe), but models.yml has no `marking_model`",
                hint="add `marking_model: <openrouter id>` to models.yml")


@rule("HB609")
def judge_of_own_family(bench: Benchmark, out: Collector) -> None:
    """A model under test judged by a relative: flagged at the model's `id`, naming the judge."""
    from helmbench.spec.families import conflicts, family_of

    data, parsed = bench.models_data, bench.models
    if bench.models_source is None or parsed is None or not isinstance(data, LineDict):
        return
    models = data.get("models")
    if not isinstance(models, list):
        return
    found = conflicts([j.id for j in parsed.judges], [m.id for m in parsed.models], parsed.families)
    reported: set[str] = set()
    for entry in models:
        model_id = entry.get("id") if isinstance(entry, LineDict) else None
        if model_id not in found or model_id in reported:
            continue
        reported.add(model_id)
        judges = ", ".join(f"`{j}`" for j in found[model_id])
        out.add("HB609", bench.models_source.path, value_span(entry, "id"),
                f"model `{model_id}` is judged by {judges} of its own family "
                f"`{family_of(model_id, parsed.families)}`: a conflict of interest",
                hint="judge with a model from a family not under test (or an ensemble across families); "
                     "`families:` in models.yml corrects a wrong family")
