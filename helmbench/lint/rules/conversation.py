"""Rules about conversations (`conversation.md`): turns, landmarks, checkpoints, the user model.

A conversation that cannot play as written costs money and measures nothing: a gap in a
script sends the model two user messages in a row, a landmark after the last turn is never
reached, a checkpoint on a turn that never happens always fails. Each is reported at the
heading or key to edit.
"""

from __future__ import annotations

from helmbench.diagnostics import Collector
from helmbench.lint import schemas
from helmbench.lint.rulebook import rule
from helmbench.lint.where import item_span, key_span, value_span
from helmbench.spec import markdown as md
from helmbench.spec.conversation import MAX_TURNS, Conversation
from helmbench.spec.models import CategoryMatch
from helmbench.spec.tree import Benchmark
from helmbench.spec.validate import suggest
from helmbench.spec.yamlio import LineDict


def _conversations(bench: Benchmark):
    for sc in bench.scenarios:
        if sc.conversation is not None and sc.conversation.meta is not None:
            yield sc, sc.conversation


def _fm_span(conv: Conversation, key: str):
    return key_span(conv.frontmatter, key) if isinstance(conv.frontmatter, LineDict) else 1


@rule("HB701", "HB702", "HB705", "HB707")
def turns_and_parts(bench: Benchmark, out: Collector) -> None:
    for sc, conv in _conversations(bench):
        meta, path = conv.meta, conv.path
        for part in [*conv.turns.values(), *conv.sections.values()]:
            secs = md.sections(part.body)
            if not part.body.strip():
                out.add("HB707", path, part.line, f"`# {part.heading}` has no text",
                        hint="write the user's message (or the landmark, persona or goal) under the heading")
            elif not any(s.text.strip() for s in secs):
                out.add("HB707", path, part.body_line + secs[0].line - 1,
                        f"`# {part.heading}` has only its heading `## {secs[0].heading}` and no text: the model "
                        f"would get an empty <{secs[0].tag}>",
                        hint="write the user's message (or the landmark, persona or goal) under the heading")
        if conv.simulated:
            for name in ("persona", "goal"):
                if name not in conv.sections:
                    out.add("HB705", path, _fm_span(conv, "user"),
                            f"a simulated user needs a `# {name.capitalize()}` part",
                            hint=f"add `# {name.capitalize()}` and describe the user's {name}")
            if meta.max_turns is None:
                out.add("HB705", path, _fm_span(conv, "user"), "a simulated user needs `max_turns`",
                        hint="add `max_turns: 6` (the opening counts as turn 1)")
            else:
                for n, part in sorted(conv.turns.items()):
                    if n > meta.max_turns:
                        out.add("HB702", path, part.line,
                                f"landmark for turn {n}, but the conversation stops at `max_turns: {meta.max_turns}`",
                                hint=f"raise max_turns to {n}, or move the landmark to an earlier turn")
            continue
        for name, part in conv.sections.items():
            out.add("HB705", path, part.line, f"`# {part.heading}` is only read for a simulated user",
                    hint="add `user: simulated` to the frontmatter, or remove the part")
        if meta.opening == "simulated":
            out.add("HB705", path, _fm_span(conv, "opening"),
                    "`opening: simulated` needs a simulated user: a scripted one cannot write the first turn",
                    hint="add `user: simulated` (with `# Persona`, `# Goal` and `max_turns`), or remove `opening`")
        for key in ("max_turns", "stop_when"):
            if getattr(meta, key) is not None:
                out.add("HB705", path, _fm_span(conv, key), f"`{key}` is only read for a simulated user",
                        hint="add `user: simulated`, or remove the key")
        if not conv.turns:
            out.add("HB705", path, 1, "a scripted conversation has no `# Turn 2`: it is a single-turn case",
                    hint="write the user's next message under `# Turn 2`, or remove conversation.md")
            continue
        expected = 2
        for n, part in sorted(conv.turns.items()):
            if n > MAX_TURNS:
                out.add("HB701", path, part.line, f"`# {part.heading}`: a conversation has at most {MAX_TURNS} turns",
                        hint="every turn re-sends the whole transcript: split it into two scenarios")
                break
            if n != expected:
                out.add("HB701", path, part.line,
                        f"`# {part.heading}` follows turn {expected - 1}: turn {expected} is missing",
                        hint=f"number the turns 2, 3, 4, … (rename this one `# Turn {expected}`)")
                break
            expected += 1


@rule("HB703")
def checkpoints_exist(bench: Benchmark, out: Collector) -> None:
    for sc, conv in _conversations(bench):
        last = conv.last_turn
        if conv.simulated and conv.meta.max_turns is None:
            continue  # HB705 says what is missing
        for i, cp in enumerate(conv.meta.checkpoints):
            if cp.turn > last:
                what = f"`max_turns` is {last}" if conv.simulated else f"the script ends at turn {last}"
                out.add("HB703", conv.path, value_span(conv.frontmatter, "checkpoints", i, "turn"),
                        f"checkpoint on turn {cp.turn}, but {what}",
                        hint=f"check a turn from 1 to {last}")


@rule("HB706")
def user_model_present(bench: Benchmark, out: Collector) -> None:
    models = bench.models
    if bench.models_source is None or (models is not None and models.user_model is not None):
        return
    if models is None and bench.models_data not in (None, {}):
        return  # models.yml is invalid: its own findings come first
    simulated = [sc.key for sc, conv in _conversations(bench) if conv.simulated]
    if simulated:
        more = f" and {len(simulated) - 1} more" if len(simulated) > 1 else ""
        out.add("HB706", bench.models_source.path, 1,
                f"scenario {simulated[0]}{more} has a simulated user, but models.yml has no `user_model`",
                hint="add `user_model: <openrouter id>` to models.yml")


@rule("HB202", "HB501", "HB502", "HB503", "HB507")
def checkpoint_fields(bench: Benchmark, out: Collector) -> None:
    for sc, conv in _conversations(bench):
        if not conv.meta.checkpoints:
            continue
        found = schemas.inner(sc.schema) if sc.schema is not None else None
        schema = found.schema if found is not None and isinstance(found.schema, dict) else None
        for i, cp in enumerate(conv.meta.checkpoints):
            ev = cp.evaluation
            at = value_span(conv.frontmatter, "checkpoints", i, "evaluation", "type")
            if isinstance(ev, CategoryMatch) and ev.expected is None and (sc.meta is None or sc.meta.category is None):
                out.add("HB202", conv.path, key_span(conv.frontmatter, "checkpoints", i, "evaluation"),
                        f"checkpoint on turn {cp.turn}: category_match has no `expected` value and the scenario "
                        "has no `category`", hint="add `expected:` under the checkpoint's `evaluation`")
            if sc.schema_source is None:
                out.add("HB507", conv.path, at,
                        f"checkpoint on turn {cp.turn} reads `{ev.field}` of structured output, but there is no "
                        f"`{sc.code}.json` schema", hint=f"add {sc.folder}/{sc.code}.json describing the response")
            elif schema is not None:
                _check_against_schema(sc, conv, i, schema, out)


def _check_against_schema(sc, conv: Conversation, i: int, schema: dict, out: Collector) -> None:
    """HB501/HB502/HB503 for checkpoint `i`, as for a scenario's own evaluation."""
    cp = conv.meta.checkpoints[i]
    ev, where = cp.evaluation, ("checkpoints", i, "evaluation")
    node = schemas.field(schema, ev.field)
    if node is None:
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        out.add("HB501", conv.path, value_span(conv.frontmatter, *where, "field"),
                f"checkpoint field `{ev.field}` is not a property of the response schema "
                f"({', '.join(f'`{p}`' for p in props) or 'it has none'})", hint=suggest(ev.field, list(props)))
        return
    is_list = not isinstance(ev, CategoryMatch)
    types = schemas.types_of(node)
    if is_list != ("array" in types) and types:
        need = "an array field" if is_list else "a single value"
        out.add("HB502", conv.path, value_span(conv.frontmatter, *where, "field"),
                f"checkpoint {ev.type} needs {need}, but `{ev.field}` is {'/'.join(sorted(types))}")
        return
    enum = schemas.enum_of(schema, node.get("items") if is_list else node)
    if enum is None:
        return
    key = "required" if ev.type == "list_includes" else "expected"
    values = ev.accepted() if isinstance(ev, CategoryMatch) else getattr(ev, key)
    for value in values:
        if value not in enum:
            out.add("HB503", conv.path, item_span(conv.frontmatter, *where, key, value=value),
                    f"checkpoint `{key}` value `{value}` is not in the enum of `{ev.field}`, so no answer can match it",
                    hint=suggest(value, list(enum)) or f"allowed: {', '.join(map(str, enum))}")
