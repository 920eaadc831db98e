"""The four built-in evaluation types, each one `Evaluator`, registered through the same hook and the
same entry-point group a third-party package uses (pyproject.toml names this module).

The models stay in spec/models.py (they are frontmatter, and the loader's defaults name
them); the verdicts of the deterministic three live in deterministic.py beside this; the page
partials are templates in publish/templates, read as files. This module is where each type's
parts meet; it sits in run, the first stage that may import all of them (spec, lint, run).
"""

from __future__ import annotations

from pathlib import Path

from helmbench.lint.where import evaluation_span, key_span, scenario_file
from helmbench.plugins.hookspecs import hookimpl
from helmbench.plugins.types import Evaluator
from helmbench.run.evaluate import deterministic as d
from helmbench.spec.models import CategoryMatch, ListIncludes, Sqe, TagThreshold

TEMPLATES = Path(__file__).resolve().parents[2] / "publish" / "templates"  # files, not an import


def _partial(type_: str) -> str:
    return (TEMPLATES / f"_evaluation_{type_}.html.j2").read_text(encoding="utf-8")


# --- category_match ---------------------------------------------------------------------------


def _category_case(ev: CategoryMatch, sc) -> dict:
    expected = ev.accepted() or ([sc.meta.category] if sc.meta.category else [])
    return {"type": ev.type, "field": ev.field, "expected": expected}


def _category_values(ev: CategoryMatch, sc) -> tuple[str, list]:
    if ev.expected is not None:
        return "expected", ev.accepted()
    return "category", [sc.meta.category] if sc.meta.category is not None else []


def _category_check(bench, sc, out) -> None:
    ev = sc.meta.evaluation
    if ev.expected is None and sc.meta.category is None:
        out.add("HB202", scenario_file(sc), key_span(sc.frontmatter, "evaluation"),
                "category_match has no `expected` value and the scenario has no `category`",
                hint="add `expected:` under `evaluation`, or `category:` to the frontmatter")


# --- sqe ----------------------------------------------------------------------------------------


def _sqe_case(ev: Sqe, sc) -> dict:
    criteria = []
    for cr in sc.criteria:
        meta = cr.meta
        if meta.deterministic:  # a check, not the judge's: the manifest lists it under `checks`
            continue
        criteria.append({
            "code": cr.code,
            "title": meta.title,
            "text": cr.body,
            "options": list(meta.options),
            "pass_values": list(meta.pass_values),
            "response_field": meta.response_field,
            "response_type": meta.response_type,
            "scores": {o: meta.score_of(o) for o in meta.options if o not in (meta.abstain_values or ())},
            **_gate_keys(meta),
        })
    return {"type": "sqe", "criteria": criteria}


def _gate_keys(meta) -> dict:
    """The keys of gates, abstentions and named questions, present only when the criterion uses them: a criterion
    without them compiles to the bytes it always did (the manifest's golden hashes)."""
    out: dict = {}
    if meta.abstain_values:
        out["abstain_values"] = list(meta.abstain_values)
    if meta.applies_when is not None:
        out["applies_when"] = meta.applies_when.model_dump(exclude_none=True)
    if meta.questions:
        out["questions"] = [q.model_dump() for q in meta.questions]
        out["decide"] = [r.model_dump() for r in meta.decide or []]
    return out


def _sqe_check(bench, sc, out) -> None:
    folder = bench.root / sc.folder
    if not sc.criteria and not any(any(folder.glob(p)) for p in ("criteria.md", "CR*.md")):
        out.add("HB505", scenario_file(sc), evaluation_span(sc, "type"),
                f"scenario {sc.key} is judged (sqe) but has no criteria",
                hint=f"add {sc.folder}/criteria.md, or CR1.md, CR2.md, …")


BUILTIN = (
    Evaluator("category_match", CategoryMatch, _category_case, d.category_match, field="one",
              values=_category_values, check=_category_check, partial=_partial("category_match"),
              summary="output[field] equals the expected value (or one of several)"),
    Evaluator("list_includes", ListIncludes, lambda ev, sc: {"type": ev.type, "field": ev.field,
                                                             "required": list(ev.required)},
              d.list_includes, field="list", values=lambda ev, sc: ("required", ev.required),
              partial=_partial("list_includes"), summary="the list output[field] includes every required value"),
    Evaluator("tag_threshold", TagThreshold,
              lambda ev, sc: {"type": ev.type, "field": ev.field, "expected": list(ev.expected),
                              "min_correct": ev.min_correct, "max_incorrect": ev.max_incorrect},
              d.tag_threshold, field="list", values=lambda ev, sc: ("expected", ev.expected),
              partial=_partial("tag_threshold"),
              summary="enough expected tags in output[field], few unexpected ones"),
    Evaluator("sqe", Sqe, _sqe_case, None, check=_sqe_check, partial=_partial("sqe"),
              summary="a judge model answers the scenario's criteria"),
)


@hookimpl
def register_evaluators(register) -> None:
    for ev in BUILTIN:
        register(ev)
