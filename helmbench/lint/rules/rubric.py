"""Rules about a criterion's gate, abstentions and named questions (`applies_when`, `abstain_values`,
`questions`, `decide`).

Why lint refuses rather than guesses: a gate that names nothing, or waits on an answer the judge can never
give, silently keeps a criterion from ever being asked (or always asks it); a `decide` that can fall through
leaves some answers without an option; a cycle of gates could never be judged. Every diagnostic of a gate is
at its `applies_when` key.
"""

from __future__ import annotations

import itertools

from helmbench.diagnostics import Collector
from helmbench.lint.rulebook import rule
from helmbench.lint.where import item_span, key_span, value_span
from helmbench.spec.models import Otherwise
from helmbench.spec.tree import Benchmark
from helmbench.spec.validate import closest

#: Answer combinations checked for a `decide` that falls through; beyond it the rules are not enumerated.
MAX_COMBINATIONS = 4096


def _judged(sc) -> dict:
    return {cr.code: cr for cr in sc.criteria if cr.meta is not None}


def _answers_of(gating, question: str | None) -> list[str] | None:
    """The answers a gate may wait for: the gating criterion's options, or those of its question (None: no
    such question)."""
    if question is None:
        return list(gating.meta.options)
    found = next((q for q in gating.meta.questions or [] if q.id == question), None)
    return list(found.options) if found is not None else None


@rule("HB512", "HB513", "HB514")
def gates(bench: Benchmark, out: Collector) -> None:
    for sc in bench.scenarios:
        criteria = _judged(sc)
        for cr in criteria.values():
            gate = cr.meta.applies_when
            if gate is None:
                continue
            where = key_span(cr.frontmatter, "applies_when")
            if gate.criterion == cr.code:
                out.add("HB514", cr.path, where, f"criterion {cr.code} is gated on itself: it could never be asked",
                        hint="name another criterion of the scenario in `applies_when: {criterion: …}`")
                continue
            gating = criteria.get(gate.criterion)
            if gating is None:
                meant = closest(gate.criterion, list(criteria))
                out.add("HB512", cr.path, where,
                        f"criterion {cr.code} is gated on `{gate.criterion}`, which is no criterion of scenario "
                        f"{sc.key} (it has {', '.join(criteria) or 'none'})",
                        hint=f"did you mean `{meant}`?" if meant else "name one of the scenario's criteria")
                continue
            if cr.meta.deterministic or gating.meta.deterministic:
                which = cr.code if cr.meta.deterministic else gating.code
                out.add("HB512", cr.path, where,
                        f"criterion {which} is checked by a rule (`evaluation:`), not judged: a gate links judged "
                        "criteria only",
                        hint="gate a judged criterion on another judged criterion")
                continue
            allowed = _answers_of(gating, gate.question)
            if allowed is None:
                names = ", ".join(q.id for q in gating.meta.questions or []) or "no questions"
                out.add("HB513", cr.path, where,
                        f"criterion {cr.code}'s gate asks for question `{gate.question}` of {gating.code}, which has "
                        f"{names}", hint="name one of its `questions` ids, or leave `question` out to read its option")
                continue
            for answer in gate.answers:
                if answer not in allowed:
                    what = f"question `{gate.question}` of {gating.code}" if gate.question else gating.code
                    meant = closest(answer, allowed)
                    out.add("HB513", cr.path, where,
                            f"criterion {cr.code}'s gate waits for `{answer}`, which {what} can never give "
                            f"(its options: {', '.join(allowed)})",
                            hint=f"did you mean `{meant}`?" if meant else "use one of those options")
        _cycles(sc, criteria, out)


def _cycles(sc, criteria: dict, out: Collector) -> None:
    """A chain of gates that comes back to where it started: none of its criteria could ever be asked."""
    reported: set[str] = set()
    for start in criteria:
        path, code = [], start
        while code in criteria and code not in path:
            gate = criteria[code].meta.applies_when
            if gate is None or gate.criterion == code:
                break
            path.append(code)
            code = gate.criterion
        if code in path and code not in reported:
            loop = path[path.index(code):]
            shown = " → ".join([*loop, loop[0]])
            for member in loop:
                if member in reported:
                    continue
                reported.add(member)
                m = criteria[member]
                out.add("HB514", m.path, key_span(m.frontmatter, "applies_when"),
                        f"criterion {member}'s gate is part of a cycle ({shown}): none of them could ever be asked",
                        hint="make one criterion of the cycle ungated, so the others can follow from it")


@rule("HB515")
def abstain_values(bench: Benchmark, out: Collector) -> None:
    for sc in bench.scenarios:
        for cr in _judged(sc).values():
            values = cr.meta.abstain_values or []
            for value in values:
                if value not in cr.meta.options:
                    out.add("HB515", cr.path, item_span(cr.frontmatter, "abstain_values", value=value),
                            f"abstain value `{value}` is not one of the options ({', '.join(cr.meta.options)})",
                            hint="add it to `options`, or correct the spelling")
                elif value in cr.meta.pass_values:
                    out.add("HB515", cr.path, item_span(cr.frontmatter, "abstain_values", value=value),
                            f"`{value}` is both a pass value and an abstain value: an answer either passes or "
                            "leaves the count", hint="remove it from `pass_values` or from `abstain_values`")
            if values and set(cr.meta.options) <= set(values):
                out.add("HB515", cr.path, key_span(cr.frontmatter, "abstain_values"),
                        "every option is an abstain value: the criterion could never count",
                        hint="keep at least one option that passes or fails")


@rule("HB516", "HB517")
def questions(bench: Benchmark, out: Collector) -> None:
    for sc in bench.scenarios:
        for cr in _judged(sc).values():
            meta, fm = cr.meta, cr.frontmatter
            if meta.decide and not meta.questions:
                out.add("HB516", cr.path, key_span(fm, "decide"),
                        f"criterion {cr.code} has `decide` rules but no `questions` for them to read",
                        hint="add the `questions:` the rules name, or remove `decide:`")
                continue
            if not meta.questions:
                continue
            qs = {}
            for i, q in enumerate(meta.questions):
                if q.id in qs:
                    out.add("HB516", cr.path, value_span(fm, "questions", i, "id"),
                            f"question id `{q.id}` is used twice in criterion {cr.code}", hint="give each question its own id")
                qs.setdefault(q.id, q)
            if meta.response_type == "multi":
                out.add("HB516", cr.path, key_span(fm, "response_type"),
                        f"criterion {cr.code} has named questions: the judge answers them, and `decide` gives one "
                        "option, so `response_type: multi` cannot apply", hint="remove `response_type: multi`")
            if meta.deterministic:
                out.add("HB516", cr.path, key_span(fm, "questions"),
                        f"criterion {cr.code} is checked by a rule (`evaluation:`): no judge answers its questions",
                        hint="remove `questions:` and `decide:`, or `evaluation:`")
            if not meta.decide:
                out.add("HB517", cr.path, key_span(fm, "questions"),
                        f"criterion {cr.code} asks named questions but has no `decide` rules to turn the answers into "
                        "one of its options", hint="add `decide:` ending with `- otherwise: <option>`")
                continue
            _rules(cr, qs, out)


def _rules(cr, qs: dict, out: Collector) -> None:
    meta, fm = cr.meta, cr.frontmatter
    options = meta.options
    for i, r in enumerate(meta.decide):
        option = r.otherwise if isinstance(r, Otherwise) else r.option
        key = "otherwise" if isinstance(r, Otherwise) else "option"
        if option not in options:
            meant = closest(option, options)
            out.add("HB516", cr.path, value_span(fm, "decide", i, key),
                    f"rule {i + 1} of `decide` gives `{option}`, which is not one of the options ({', '.join(options)})",
                    hint=f"did you mean `{meant}`?" if meant else "add it to `options`")
        if isinstance(r, Otherwise):
            if i + 1 < len(meta.decide):
                out.add("HB517", cr.path, value_span(fm, "decide", i + 1),
                        f"rule {i + 2} of `decide` comes after `otherwise`: it is never used",
                        hint="put `otherwise` last")
            continue
        for qid, answers in r.when.items():
            q = qs.get(qid)
            if q is None:
                out.add("HB516", cr.path, key_span(fm, "decide", i, "when", qid),
                        f"rule {i + 1} of `decide` reads question `{qid}`, which criterion {cr.code} does not ask "
                        f"(its questions: {', '.join(qs)})", hint="name one of the `questions` ids")
                continue
            for k, answer in enumerate(answers):
                if answer not in q.options:
                    out.add("HB516", cr.path, value_span(fm, "decide", i, "when", qid, k),
                            f"rule {i + 1} of `decide` waits for `{answer}` to question `{qid}`, whose options are "
                            f"{', '.join(q.options)}", hint="use one of the question's options")
    if any(isinstance(r, Otherwise) for r in meta.decide):
        return
    missed = _fall_through(meta.decide, list(qs.values()))
    if missed:
        shown = ", ".join(f"{q} = {a}" for q, a in missed.items())
        out.add("HB517", cr.path, key_span(fm, "decide"),
                f"the `decide` rules of criterion {cr.code} give no option when {shown}",
                hint="end the rules with `- otherwise: <option>`, or add a rule for those answers")


def _fall_through(rules, qs) -> dict | None:
    """The first combination of answers no rule matches (None: every combination is decided)."""
    sizes = 1
    for q in qs:
        sizes *= len(q.options)
    if sizes > MAX_COMBINATIONS:
        return {"(too many combinations to check)": "add `otherwise`"}
    for combo in itertools.product(*(q.options for q in qs)):
        answers = {q.id: a for q, a in zip(qs, combo)}
        if not any(all(answers.get(k) in v for k, v in r.when.items()) for r in rules):
            return answers
    return None
