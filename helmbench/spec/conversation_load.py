"""Read `conversation.md`: its frontmatter, then its `# Turn N`, `# Persona` and `# Goal` parts.

Kept apart from loader.py (the tree walk) because it is one file format with its own rules;
the loader hands it its guarded reader and collector, so the same size limits, symlink checks
and located YAML errors apply. Problems found while reading (a heading that is not a part, a
turn given twice) are reported here, at their line; rules that need the whole scenario (a
checkpoint beyond the last turn, a landmark beyond the maximum) live in lint/rules/conversation.py.
"""

from __future__ import annotations

from helmbench.spec import markdown as md
from helmbench.spec.conversation import SECTIONS, TURN_HEADING, Conversation, ConversationMeta, Part
from helmbench.spec.validate import suggest, validate


def load_conversation(loader, sc, path) -> None:
    """Fill `sc.conversation` from `path` (loader: spec.loader.Loader, for reading and reporting)."""
    if not (src := loader.read(path)):
        return
    out = loader.out
    lines = src.text.split("\n")
    fm = md.find_frontmatter(lines, 0, len(lines))
    data, ok = loader.frontmatter(fm, src.path)
    meta = None
    if ok:
        meta = validate(ConversationMeta, data, src.path, out, what="conversation frontmatter")
    conv = Conversation(src, meta, data)
    sc.conversation = conv
    if not ok and fm.text is None:  # unclosed, or not opened: the parts cannot be told from the keys
        return
    # Blank the frontmatter out (keeping its lines) so parts report their real line numbers.
    rest = [""] * fm.body_start + lines[fm.body_start:]
    split = md.split_consolidated("\n".join(rest))
    if split.preamble_line is not None:
        out.add("HB312", src.path, split.preamble_line, "text before the first `#` heading is ignored",
                hint="put the user's messages under `# Turn 2`, `# Turn 3`, …")
    for part in split.parts:
        if part.frontmatter.text is not None or part.frontmatter.unclosed_at is not None:
            out.add("HB704", src.path, part.frontmatter.line - 1,
                    f"`# {part.heading}` has frontmatter; only the top of conversation.md takes frontmatter",
                    hint="move these keys to the frontmatter at the top of the file")
            continue
        item = Part(part.heading, part.line, part.body, part.body_line)
        name = part.heading.strip().lower()
        if m := TURN_HEADING.match(name):
            n = int(m.group(1))
            if n == 1 and meta is not None and meta.opening == "simulated":  # the other message would mislead
                out.add("HB701", src.path, part.line, "`# Turn 1` is not written here: with `opening: simulated` the "
                        "simulated user writes turn 1 from the persona, the goal and the perturbation's `User's input`; "
                        "no landmark is due at turn 1",
                        hint="put what the person comes to say in the perturbation's `## User's input`, or the "
                             "landmark under `# Turn 2`")
            elif n == 1:
                out.add("HB701", src.path, part.line, "`# Turn 1` is not written here: turn 1 is the opening, "
                        "composed from the scenario, condition, user context and perturbation",
                        hint="start with `# Turn 2`")
            elif n in conv.turns:
                out.add("HB701", src.path, part.line, f"turn {n} is written twice (first at line {conv.turns[n].line})")
            else:
                conv.turns[n] = item
        elif name in SECTIONS:
            if name in conv.sections:
                out.add("HB704", src.path, part.line,
                        f"`# {part.heading}` is written twice (first at line {conv.sections[name].line})")
            else:
                conv.sections[name] = item
        else:
            hint = suggest(part.heading, ["Turn 2", "Persona", "Goal"]) or "write `# Turn 2`, `# Persona` or `# Goal`"
            out.add("HB704", src.path, part.line, f"heading `# {part.heading}` is not a part of a conversation",
                    hint=hint)
