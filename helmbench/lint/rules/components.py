"""Rules about the text of each scenario and its components (conditions, user contexts,
perturbations): what the model will actually be sent.

Bodies are checked only when their frontmatter loaded: a component whose frontmatter is
broken has already been reported, and its "body" would be the unparsed YAML.
"""

from __future__ import annotations

from helmbench.diagnostics import Collector
from helmbench.lint.rulebook import rule
from helmbench.spec import markdown as md
from helmbench.lint.where import is_blank
from helmbench.spec.loader import CONSOLIDATED, HEADING_CODE, INDIVIDUAL, TELLING_KEYS, WHAT
from helmbench.spec.naming import COMPONENT_RE
from helmbench.spec.text import SourceText, TextError, read_source
from helmbench.spec.tree import KINDS, Benchmark, Component


@rule("HB301")
def duplicate_codes(bench: Benchmark, out: Collector) -> None:
    for sc in bench.scenarios:
        for kind in KINDS:
            seen: dict[str, int] = {}
            for c in sc.components[kind]:
                if c.code in seen:
                    out.add("HB301", c.path, c.line,
                            f"duplicate code `{c.code}` in scenario {sc.key} (first at line {seen[c.code]})",
                            hint="number the components uniquely; case ids are built from these codes")
                else:
                    seen[c.code] = c.line


def _check_text(path: str, body: str, first_line: int, out: Collector, secs=None) -> None:
    """Headings that give empty tags, and fences that swallow the rest of the text."""
    for s in secs if secs is not None else md.sections(body):
        if s.heading is not None and not s.tag:
            out.add("HB305", path, first_line + s.line - 1, f"heading `## {s.heading}` gives an empty tag name",
                    hint="use words in `##` headings: they become XML tags such as <users_input>")
    if (fence := md.unclosed_fence(body)) is not None:
        out.add("HB304", path, first_line + fence - 1, "code fence is never closed",
                hint="add a closing ``` line; until then every heading after it is code")


def _component_code(heading: str) -> tuple[str, str] | None:
    """(`PT2`, its kind) for a heading that names a component (`PT2`, `C3: Tired`, `U1`), else None."""
    m = HEADING_CODE.match(heading)
    kind = next((k for k, r in COMPONENT_RE.items() if r.match(m.group(1))), None) if m else None
    return (m.group(1), kind) if kind else None


def _structure_in_text(path: str, body: str, first_line: int, owner: str, out: Collector,
                       c: Component | None = None) -> None:
    """Structure that lost its form and became text the model reads: a `## PT2` written for `# PT2`
    (HB320), or a frontmatter block in the middle of a text (HB321). A `## PT2` followed by PT2's
    frontmatter is one mistake, reported once, at the heading."""
    lines = body.split("\n")
    headed = set()
    for h in md.subheadings(body) if c is not None else ():
        if (named := _component_code(h.text)) is None:
            continue
        code, kind = named
        if kind != c.kind:  # `## C1 – Reading` in a perturbation: the user's own notes, not a lost component
            continue
        line = first_line + h.line - 1
        written = f"{h.markup} {h.text}"
        individual = c.path.rsplit("/", 1)[-1] == f"{c.code}.md"
        out.add("HB320", path, (line, 1, line, len(written) + 1),
                f"`{written}` looks like a component heading, but under `{h.markup}` it is a section of {c.code}: "
                f"what follows (frontmatter included) reaches the model inside {c.code}'s text",
                hint=f"a component of its own goes in its own file, `{INDIVIDUAL[kind]}/{code}.md`" if individual
                else f"start a new component with `# {code}` (one `#`)")
        nxt = next((i for i in range(h.line, len(lines)) if not md.is_blank(lines[i])), None)
        headed.add(nxt)
    for start, close, keys in md.frontmatter_blocks(body):
        if start - 1 in headed or not TELLING_KEYS.intersection(keys):
            continue
        key = next(k for k in keys if k in TELLING_KEYS)
        out.add("HB321", path, first_line + start - 1,
                f"a frontmatter block (`---`, `{key}: …`, `---` at line {first_line + close - 1}) inside "
                f"{owner}'s text: it reaches the model as text, not as frontmatter",
                hint="remove it, or move its keys into the frontmatter at the top of the file" if c is None
                else f"if it is the frontmatter of a new {WHAT[c.kind]}, put the {WHAT[c.kind]}'s heading above it "
                     f"(`# {PREFIX[c.kind]}` and its number: one `#`, then a space); otherwise remove it")


def _empty_input(c: Component, secs) -> md.Section | None:
    """The section of a perturbation's text that leaves the model without a user message: its
    `## User's input` with nothing under it, or the first of its headings when none has text."""
    blank = [s for s in secs if s.heading is not None and not s.text.strip()]
    if blank and not any(s.text.strip() for s in secs):
        return blank[0]
    return next((s for s in blank if s.tag == "users_input"), None)


def has_frontmatter(c: Component) -> bool:
    """A `---` block under the component's heading (or atop its own file), even an empty one."""
    if c.frontmatter is not None:
        return True
    lines = c.source.text.split("\n")
    individual = c.path.rsplit("/", 1)[-1] == f"{c.code}.md"  # conditions/C1.md: no heading line
    start = 0 if individual else c.line
    for line in lines[start:]:
        if line.strip():
            return line.rstrip() == "---"
    return False


@rule("HB302", "HB303", "HB304", "HB305", "HB319", "HB320", "HB321")
def component_bodies(bench: Benchmark, out: Collector) -> None:
    for sc in bench.scenarios:
        # `opening: simulated`: the simulated user writes the first message, so a perturbation may be a level
        # of severity with no text of its own (its `User's input`, when written, is what the person comes to say)
        opens = sc.conversation is not None and sc.conversation.simulated and sc.conversation.meta.opening == "simulated"
        if sc.source is not None and sc.meta is not None:
            _check_text(sc.source.path, sc.body, sc.body_line, out)
            _structure_in_text(sc.source.path, sc.body, sc.body_line, f"scenario {sc.key}", out)
        for c in (c for k in KINDS for c in sc.components[k]):
            if c.meta is None:
                continue
            if not c.body.strip():
                if c.kind == "perturbation" and has_frontmatter(c) and opens:
                    pass  # the simulated user writes the user's message
                elif c.kind == "perturbation" and has_frontmatter(c):  # an empty level, but of the user's message
                    out.add("HB319", c.path, c.line,
                            f"perturbation {c.code} has frontmatter but no text: its cases send the model no user input",
                            hint="write the user's message under `## User's input`, or remove the perturbation")
                elif not has_frontmatter(c):  # with frontmatter it is a deliberate empty level
                    out.add("HB302", c.path, c.line, f"{c.code} has no text and no frontmatter",
                            hint="write the text the model should receive, or remove the component; "
                                 "for a deliberate empty level (\"no extra context\") give it "
                                 "frontmatter such as `severity: 0`")
                continue
            secs = md.sections(c.body)
            if all(s.heading is None for s in secs):
                out.add("HB303", c.path, c.body_line,
                        f"{c.code} has no `##` section; its text reaches the model untagged, as written",
                        hint="fine for raw user text; to put it in a block, start it with a heading such as "
                             "`## User's input`")
            _check_text(c.path, c.body, c.body_line, out, secs)
            _structure_in_text(c.path, c.body, c.body_line, c.code, out, c)
            if c.kind == "perturbation" and not opens and (s := _empty_input(c, secs)) is not None:
                out.add("HB319", c.path, c.body_line + s.line - 1,
                        f"perturbation {c.code} has `## {s.heading}` with nothing under it: its cases send the "
                        f"model an empty <{s.tag}> and no user input",
                        hint="write the user's message under the heading, or remove the perturbation")


@rule("HB309", "HB316", "HB317")
def yields_cases(bench: Benchmark, out: Collector) -> None:
    """One finding per root cause, against the file at fault: an empty `perturbations.md` is
    reported on itself (HB316), an unreadable one only by the loader (HB103), and "no cases"
    against the scenario only when the file is truly absent."""
    for sc in bench.scenarios:
        if sc.source is not None and is_blank(sc.source):
            out.add("HB316", sc.source.path, 1, f"`{sc.source.path.rsplit('/', 1)[-1]}` is empty: "
                    f"scenario {sc.key} has no prompt and no evaluation",
                    hint="write the frontmatter (evaluation) and the `## Your job` prompt")
        for cr in sc.criteria if sc.evaluation_type == "sqe" else ():  # otherwise HB508 says they are unused
            if is_blank(cr.source):
                out.add("HB316", cr.path, 1, f"`{cr.path.rsplit('/', 1)[-1]}` is empty: the judge gets no criterion",
                        hint="write the criterion, or remove the file")
        uc_file = bench.root / sc.folder / CONSOLIDATED["user_context"]
        uc = None if sc.user_contexts else _readable(bench, uc_file)  # read again only when it gave nothing
        if uc is not None and is_blank(uc):
            out.add("HB317", uc.path, 1, "`user-contexts.md` is empty: the scenario's case ids drop their "
                    "user-context part (`…-C1-PT1` instead of `…-C1-U1-PT1`)",
                    hint="write `# U1` with its frontmatter (`severity: 0` and no text is a valid baseline), "
                         "or delete the file")
        missing = []
        for kind, name in (("condition", "conditions"), ("perturbation", "perturbations")):
            if sc.components[kind]:
                continue
            file, folder = bench.root / sc.folder / CONSOLIDATED[kind], bench.root / sc.folder / INDIVIDUAL[kind]
            if file.is_file():
                src = _readable(bench, file)
                if src is None:
                    continue  # the loader reported why it cannot be read
                if is_blank(src):
                    out.add("HB316", src.path, 1, f"`{file.name}` is empty, so scenario {sc.key} yields no cases",
                            hint=f"write at least one `# {PREFIX[kind]}1` component")
                elif not _headed(src.text):  # text but no component heading: say so at the file
                    out.add("HB309", src.path, 1, f"`{file.name}` has no `# {PREFIX[kind]}1` component, "
                            f"so scenario {sc.key} yields no cases",
                            hint=f"start each {WHAT[kind]} with a heading such as `# {PREFIX[kind]}1`")
            elif folder.is_dir():
                rel = f"{sc.folder}/{folder.name}"
                if not any(p.suffix == ".md" and COMPONENT_RE[kind].match(p.stem) for p in folder.iterdir()):
                    out.add("HB309", rel, 1, f"`{folder.name}/` holds no component file, so scenario {sc.key} "
                            "yields no cases", hint=f"add `{folder.name}/{PREFIX[kind]}1.md`")
            else:
                missing.append(name)
        if missing:
            where = sc.source.path if sc.source else sc.folder
            out.add("HB309", where, 1, f"scenario {sc.key} yields no cases: no {' and no '.join(missing)}",
                    hint="cases are conditions × user contexts × perturbations; add the missing file")


PREFIX = {"condition": "C", "user_context": "U", "perturbation": "PT"}


def _headed(text: str) -> bool:
    return any(line.startswith("# ") for line in text.split("\n"))


def _readable(bench: Benchmark, path) -> SourceText | None:
    if not path.is_file():
        return None
    try:
        return read_source(bench.root, path)
    except (TextError, OSError):
        return None
