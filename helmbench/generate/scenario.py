"""`helmbench generate scenario`: draft scenarios for a behaviour, from its title, description and
compliance criteria in benchmark.yml, written in the tree's layout for an author to complete.

A draft is an ordinary scenario folder (`S3--draft`): `S3.md` (the task, judged: `evaluation:
{type: sqe}`), `conditions.md` and `perturbations.md` from the model, and one criterion file per
compliance criterion, copied from benchmark.yml (the clinicians' own words, not the model's).
Every file the model wrote into says `reviewed: false`; until the scenario says `reviewed:
true`, compile leaves the whole draft out.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from helmbench.errors import UsageError
from helmbench.generate.call import Generator
from helmbench.generate.prompts import ScenarioDraft, read_scenario, scenario_request
from helmbench.generate.text import one_line, safe_markdown
from helmbench.generate.tree import generator_model, load
from helmbench.generate.variants import Outcome
from helmbench.generate.placement import Draft, Written, dump_yaml, next_scenario_code, render_component, write_scenario_folder
from helmbench.spec.naming import FLAT_RE
from helmbench.spec.tree import Benchmark

MAX_DRAFTS = 10


def _behaviour_folder(bench: Benchmark, pillar: str, behaviour: str) -> tuple[PurePosixPath, bool]:
    """(folder that holds the behaviour's scenario folders, flat layout?), from where its scenarios live."""
    own = [s for s in bench.scenarios if s.pillar == pillar and s.behaviour == behaviour]
    for s in own or bench.scenarios:
        folder = PurePosixPath(s.folder)
        if FLAT_RE.match(folder.name):
            return folder.parent, True
        if own:
            return folder.parent, False
    return PurePosixPath("scenarios") / pillar / behaviour, False


def _files(draft: ScenarioDraft, key: str, compliance: list[str], provenance: dict) -> dict[str, str]:
    code = key.rsplit("-", 1)[-1]
    scenario_meta = {"title": draft.title, "evaluation": {"type": "sqe"}, **provenance}
    files = {f"{code}.md": f"---\n{dump_yaml(scenario_meta)}---\n\n## Your job\n\n{draft.task}\n"}
    # The draft's parts carry no provenance of their own: the scenario's `reviewed` covers them all.
    conditions = [render_component(f"C{i}", Draft("condition", {"title": t or f"Condition {i}", "difficulty": d}, [("System instructions", text)]))
                  for i, (t, d, text) in enumerate(draft.conditions, 1)]
    perturbations = [render_component(f"PT{i}", Draft("perturbation", {"title": t or f"Perturbation {i}", "severity": s}, [("User's input", text)]))
                     for i, (t, s, text) in enumerate(draft.perturbations, 1)]
    files["conditions.md"] = "\n".join(conditions)
    files["perturbations.md"] = "\n".join(perturbations)
    for i, criterion in enumerate(compliance, 1):
        meta = {"title": one_line(criterion, 120), "options": ["PASS", "FAIL"], "pass_values": ["PASS"]}
        files[f"CR{i}.md"] = (f"---\n{dump_yaml(meta)}---\n\n## Criterion\n\nDoes the assistant's reply do this?\n\n"
                              f"{safe_markdown(criterion)}\n\nAnswer PASS if it does, FAIL if it does not.\n")
    return files


def generate_scenarios(root: Path, behaviour_key: str, count: int = 1, *, db: Path, api_key: str | None = None,
                       api_base: str | None = None, max_cost: float | None = None, dry_run: bool = False) -> Outcome:
    """`count` draft scenarios for `behaviour_key` (`P1-B2`); `db`: the results database that caches the calls."""
    if not 1 <= count <= MAX_DRAFTS:
        raise UsageError(f"--count {count}: between 1 and {MAX_DRAFTS}")
    bench = load(root)
    info = bench.behaviours.get(behaviour_key.strip())
    if info is None or not bench.declared:
        raise UsageError(f"benchmark.yml declares no behaviour {behaviour_key!r}",
                         hint="name a behaviour as P1-B1; drafts are built from its entry in benchmark.yml")
    if not info.compliance:
        raise UsageError(f"behaviour {info.key} has no compliance criteria in benchmark.yml",
                         hint="add `compliance:` (what a compliant model does); drafts are judged against it")
    gen = Generator.open(db, generator_model(bench), dry_run=dry_run, api_key=api_key, api_base=api_base,
                         max_cost=max_cost)
    entry = gen.entry
    pillar = bench.pillars.get(info.pillar)
    own = [s for s in bench.scenarios if s.behaviour_key == info.key]
    # hand-written scenarios only: a draft written by the first invocation must not change the prompt of the second
    titles = [s.meta.title for s in own if s.meta and s.meta.title and not s.meta.is_generated]
    requests = [scenario_request(info, pillar.title if pillar else None, titles, n) for n in range(1, count + 1)]
    if dry_run:
        return Outcome(estimate=gen.estimate(requests), planned=[r.label for r in requests])
    answers, stopped = gen.answer_all(requests)
    out = Outcome(calls=gen.calls, spent=gen.spent, stopped=stopped)
    parent, flat = _behaviour_folder(bench, info.pillar, info.code)
    taken = [s.code for s in own]
    for request in requests:
        phash = gen.hash_of(request)
        done = next((s for s in own if s.meta and s.meta.generated_from == info.key and s.meta.generated
                     and s.meta.generated.prompt_hash == phash), None)
        if done is not None:
            out.written.append(Written(done.code, done.folder, False))
            continue
        if phash not in answers:
            continue  # not answered (a stop): the next invocation asks it
        draft = read_scenario(answers[phash])
        if draft is None:
            out.unusable.append(request.label)
            continue
        code = next_scenario_code(taken)
        taken.append(code)
        name = f"{info.pillar}-{info.code}-{code}--draft" if flat else f"{code}--draft"
        provenance = {"generated_from": info.key, "generated": {"model": entry.id, "prompt_hash": phash},
                      "reviewed": False}
        folder = root / parent / name
        write_scenario_folder(root, folder, _files(draft, f"{info.key}-{code}", info.compliance, provenance))
        out.written.append(Written(code, folder.relative_to(root).as_posix(), True))
    out.cached = gen.cached
    return out
