"""Case expansion: the full product conditions × user contexts × perturbations of a scenario.

Each component body is composed once per scenario and reused for every case that uses it,
and the request is serialised once per case; that keeps compile close to the cost of just
serialising and hashing the records (see benchmarks/compile_speed.py).
"""

from __future__ import annotations

import hashlib
from typing import Iterator

from helmbench.manifest import conversation
from helmbench.manifest.canonical import canonical_normalised, hash_of, normalise
from helmbench.manifest.compose import compose_body, response_format
from helmbench.manifest.review import is_unreviewed_case
from helmbench.plugins.registry import evaluator, spell_case
from helmbench.plugins.types import CaseContext, ComponentContext
from helmbench.spec.naming import case_id, natural_key
from helmbench.spec.tree import Benchmark, Scenario


def _blocks(sc: Scenario) -> list:
    """Every evaluation block of the scenario: its own, its deterministic criteria's, its checkpoints'."""
    blocks = [sc.meta.evaluation] + [cr.meta.evaluation for cr in sc.criteria if cr.meta and cr.meta.deterministic]
    if sc.conversation is not None:
        blocks += [cp.evaluation for cp in sc.conversation.meta.checkpoints]
    return blocks


def needs_context(sc: Scenario) -> bool:
    """Whether some evaluator of the scenario spells its evaluation per case (it reads the user context)."""
    return any(evaluator(b.type).per_case for b in _blocks(sc))


def evaluation_of(sc: Scenario, context: CaseContext | None = None) -> dict:
    """The case's `evaluation`, as the scenario's evaluators (built-in or plugins') spell it: the
    scenario's own, then `checks` (its deterministic criteria, in criterion order) and a conversation's
    `checkpoints`, each only when there are some (other manifests keep their bytes)."""
    evaluation = spell_case(sc.meta.evaluation, sc, context)
    checks = [{"code": cr.code, "title": cr.meta.title, "text": cr.body,  # the rule in plain words: what a clinician reviews it by
               "evaluation": spell_case(cr.meta.evaluation, sc, context)}
              for cr in sc.criteria if cr.meta and cr.meta.deterministic]
    if checks:
        evaluation["checks"] = checks
    if sc.conversation is not None:
        evaluation["checkpoints"] = conversation.checkpoints(sc, context)
    return evaluation


def _component(c) -> ComponentContext:
    return ComponentContext(c.code, c.title, dict(c.frontmatter or {}))


def case_context(bench: Benchmark, sc: Scenario, cond, uc, pt) -> CaseContext:
    return CaseContext(bench.root, case_id(sc.key, cond.code, uc.code if uc else None, pt.code), _component(cond),
                       _component(uc) if uc else None, _component(pt))


def _source(src) -> dict:
    return {"path": src.path, "sha256": src.sha256}


def _sorted(components):
    return sorted(components, key=lambda c: natural_key(c.code))


def scenario_cases(bench: Benchmark, sc: Scenario) -> Iterator[dict]:
    """Yield the case records of one scenario in natural order of case id.

    Every value in a record is already normalised (see canonical.normalise), so the writer
    serialises records with `canonical_normalised` without walking them again.
    """
    per_case = needs_context(sc)
    conv_c = ""  # a conversation adds `request.conversation` and `evaluation.checkpoints`
    if sc.conversation is not None:
        conv = normalise(conversation.conversation_request(bench, sc))
        conv_c = '"conversation":' + canonical_normalised(conv) + ","
    if not per_case:  # spelt once for every case of the scenario
        evaluation = normalise(evaluation_of(sc))
        eval_c = canonical_normalised(evaluation)
    rf = normalise(response_format(sc.schema, sc.key))
    rf_c = canonical_normalised(rf)
    weight = normalise(bench.weight(sc.behaviour_key))
    shared = [s for s in (sc.source, sc.schema_source, bench.weight_source(sc.behaviour_key)) if s]
    shared += [cr.source for cr in sc.criteria]
    scenario_text = compose_body(sc.body)
    composed = {id(c): compose_body(c.body) for k in sc.components.values() for c in k}
    sources: dict[tuple, list[dict]] = {}  # one list per combination of source files
    sha256 = hashlib.sha256
    for cond in _sorted(sc.conditions):
        for uc in _sorted(sc.user_contexts) or [None]:
            for pt in _sorted(sc.perturbations):
                if per_case:
                    evaluation = normalise(evaluation_of(sc, case_context(bench, sc, cond, uc, pt)))
                    eval_c = canonical_normalised(evaluation)
                parts = [scenario_text, composed[id(cond)], composed[id(uc)] if uc else "", composed[id(pt)]]
                content = "\n\n".join(p for p in parts if p)
                messages = [{"role": "user", "content": content}]
                request = {"messages": messages, "response_format": rf}
                if conv_c:
                    request["conversation"] = conv
                req_c = '{' + conv_c + '"messages":' + canonical_normalised(messages) + ',"response_format":' + rf_c + "}"
                # canonical({"evaluation": …, "request": …}) built from the parts already serialised
                whole = '{"evaluation":' + eval_c + ',"request":' + req_c + "}"
                key = (cond.source.path, pt.source.path, uc.source.path if uc else None)
                if key not in sources:
                    files = {s.path: s for s in shared + [cond.source, pt.source] + ([uc.source] if uc else [])}
                    sources[key] = [_source(files[p]) for p in sorted(files)]
                sev_uc = uc.severity if uc else 0
                record = {
                    "id": case_id(sc.key, cond.code, uc.code if uc else None, pt.code),
                    "hash": "sha256:" + sha256(whole.encode()).hexdigest(),
                    "request_hash": "sha256:" + sha256(req_c.encode()).hexdigest(),
                    "pillar": sc.pillar,
                    "behaviour": sc.behaviour_key,
                    "scenario": sc.key,
                    "condition": f"{sc.key}-{cond.code}",
                    "user_context": f"{sc.key}-{uc.code}" if uc else None,
                    "perturbation": f"{sc.key}-{pt.code}",
                    "severity": {"perturbation": pt.severity, "user_context": sev_uc, "base": pt.severity + sev_uc},
                    "difficulty": cond.difficulty,
                    "weight": weight,
                    "request": request,
                    "evaluation": evaluation,
                    "sources": sources[key],
                }
                if is_unreviewed_case(sc, cond, uc, pt):  # only when present: other manifests keep their bytes
                    record["unreviewed"] = True
                yield record


def all_cases(bench: Benchmark) -> Iterator[dict]:
    for sc in bench.scenarios:
        yield from scenario_cases(bench, sc)


def catalog(bench: Benchmark) -> dict:
    """Titles and component metadata that later stages show next to the numbers."""
    comps = {}
    scenarios = {}
    for sc in bench.scenarios:
        scenarios[sc.key] = {
            "behaviour": sc.behaviour_key,
            "title": sc.meta.title if sc.meta else None,
            "category": sc.meta.category if sc.meta else None,
            "evaluation_type": sc.evaluation_type,
            "cases": sc.case_count,
        }
        if sc.unreviewed:
            scenarios[sc.key]["unreviewed"] = True
        if sc.conversation is not None:  # only then, so a tree without conversations keeps its manifest hash
            scenarios[sc.key]["conversation"] = "simulated" if sc.conversation.simulated else "scripted"
        for kind, items in sc.components.items():
            for c in _sorted(items):
                comps[f"{sc.key}-{c.code}"] = {
                    "scenario": sc.key, "kind": kind, "code": c.code, "title": c.title,
                    "difficulty": c.difficulty, "severity": c.severity,
                }
                if c.unreviewed:
                    comps[f"{sc.key}-{c.code}"]["unreviewed"] = True
    cat = {
        "pillars": {p.code: {"title": p.title, "description": p.description}
                    for p in sorted(bench.pillars.values(), key=lambda p: natural_key(p.code))},
        "behaviours": {b.key: {"pillar": b.pillar, "title": b.title, "description": b.description,
                               "compliance": b.compliance, "weight": bench.weight(b.key)}
                       for b in sorted(bench.behaviours.values(), key=lambda b: natural_key(b.key))},
        "scenarios": scenarios,
        "components": comps,
    }
    if data := evaluator_data(bench):  # only when an evaluator has some (the crisis-service registry)
        cat["evaluators"] = data
    if versions := evaluator_versions(bench):  # only with versioned evaluators (plugins, crisis_resources)
        cat["evaluator_versions"] = versions
    if bench.floors:  # only when declared, so a tree without floors keeps its manifest hash
        cat["floors"] = [dict(f) for f in bench.floors]
    if bench.calibration:  # likewise: only when declared
        cat["calibration"] = dict(bench.calibration)
    if bench.adjudication:  # likewise
        cat["adjudication"] = dict(bench.adjudication)
    return cat


def _users(bench: Benchmark) -> dict[str, list[Scenario]]:
    """evaluation type → the scenarios that use it (their own evaluation, a checked criterion, a checkpoint)."""
    users: dict[str, list[Scenario]] = {}
    for sc in bench.scenarios:
        if sc.meta is not None:
            for type_ in dict.fromkeys(b.type for b in _blocks(sc)):
                users.setdefault(type_, []).append(sc)
    return dict(sorted(users.items()))


def evaluator_versions(bench: Benchmark) -> dict[str, str]:
    """type → the version of its evaluator the manifest was compiled with (versioned evaluators only): a
    run refuses a manifest whose evaluator has changed since, rather than mix two versions' verdicts."""
    return {t: v for t in _users(bench) if (v := evaluator(t).version) is not None}


def evaluator_data(bench: Benchmark) -> dict:
    """type → what its evaluator's `catalog` gives for the scenarios that use it (the site shows it)."""
    out = {}
    for type_, scenarios in _users(bench).items():
        ev = evaluator(type_)
        if ev.catalog is not None and (data := ev.catalog(bench, scenarios)):
            out[type_] = data
    return out


def hash_catalog(cat: dict) -> str:
    return hash_of(cat)
