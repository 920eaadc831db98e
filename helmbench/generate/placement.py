"""Write generated components and draft scenarios into the tree, in the tree's own layout.

Rules that keep an author's files safe:
- never overwrite: a component gets the next free code of its kind (PT5 after PT4) and is
  appended to the consolidated file (or written as a new `perturbations/PT5.md` when the
  scenario keeps one file per component); a draft scenario gets a new folder;
- never write outside the tree: every path is built from codes the loader already checked
  (`Scenario.folder`) and fixed names, never from model output, and a target that is a symlink
  is refused;
- never half-write: the new text is parsed again before anything is replaced, and written to a
  temporary file that is renamed over the old one only when its structure is exactly the old
  components followed by the new ones;
- idempotent: a component whose provenance (`generated_from` and `generated`) is already in the
  tree is not written again, so a second identical invocation writes nothing.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from helmbench import safewrite
from helmbench.errors import HelmbenchError
from helmbench.spec import markdown as md
from helmbench.spec.loader import CONSOLIDATED, INDIVIDUAL, META
from helmbench.spec.naming import COMPONENT_RE, SCENARIO_RE, natural_key
from helmbench.spec.tree import Component, Scenario
from helmbench.spec.yamlio import YamlError, load_yaml

PREFIX = {"condition": "C", "user_context": "U", "perturbation": "PT"}


class GenerateError(HelmbenchError):
    """Generation stopped before writing anything it could not write safely."""


@dataclass
class Draft:
    """One component to write: frontmatter in the order a reviewer reads it, and its sections as
    (`##` heading or None for text before the first heading, Markdown text already made safe)."""

    kind: str
    frontmatter: dict
    sections: list[tuple[str | None, str]] = field(default_factory=list)

    def provenance(self) -> tuple:
        return provenance_key(self.frontmatter.get("generated_from"), self.frontmatter.get("generated"))


@dataclass(frozen=True)
class Written:
    code: str
    path: str  # relative to the tree root
    new: bool  # False: the same generated component was already in the tree
    unchanged: bool = False  # a noise transform that left the text as it was: nothing to review, not written


def provenance_key(generated_from, generated) -> tuple:
    return (generated_from, yaml.safe_dump(generated, sort_keys=True) if generated else None)


def component_provenance(c: Component) -> tuple | None:
    if c.meta is None or not c.meta.is_generated:
        return None
    gen = c.meta.generated.model_dump(exclude_none=True) if c.meta.generated else None
    return provenance_key(c.meta.generated_from, gen)


def dump_yaml(data: dict) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1_000_000)


def render_body(sections: list[tuple[str | None, str]]) -> str:
    parts = []
    for heading, text in sections:
        parts.append(f"## {heading}\n\n{text}".rstrip() if heading is not None else text)
    return "\n\n".join(p for p in parts if p)


def render_component(code: str | None, draft: Draft) -> str:
    head = f"# {code}\n" if code else ""
    return f"{head}---\n{dump_yaml(draft.frontmatter)}---\n\n{render_body(draft.sections)}\n"


def next_codes(existing: list[str], kind: str, n: int) -> list[str]:
    prefix = PREFIX[kind]
    numbers = [int(c[len(prefix):].rstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ") or 0) for c in existing
               if COMPONENT_RE[kind].match(c)]
    start = max(numbers, default=0) + 1
    return [f"{prefix}{start + i}" for i in range(n)]


def inside(root: Path, path: Path) -> Path:
    """`path`, checked to stay in the tree and not to be a symlink."""
    resolved_root = root.resolve()
    if path.is_symlink() or not path.resolve().is_relative_to(resolved_root):
        raise GenerateError(f"{path} is a symlink or lies outside the benchmark folder; nothing was written",
                            hint="generate into a tree whose scenario files are ordinary files")
    return path


def _check_part(part_frontmatter: str | None, body: str, draft: Draft, where: str) -> None:
    """The written component reads back as exactly what was meant: valid frontmatter, same sections."""
    try:
        data, _ = load_yaml(part_frontmatter or "")
    except YamlError as exc:
        raise GenerateError(f"generated frontmatter for {where} does not read back: {exc.message}; nothing was written")
    try:
        META[draft.kind].model_validate(dict(data or {}))
    except Exception as exc:  # a pydantic ValidationError: our own writer produced a bad key
        raise GenerateError(f"generated frontmatter for {where} is not valid: {exc}; nothing was written") from None
    got = [s.heading for s in md.sections(body)]
    want = [h for h, t in draft.sections if h is not None or t]
    if got != want:
        raise GenerateError(f"generated text for {where} would change the file's structure (sections {got} instead "
                            f"of {want}); nothing was written", hint="generate again, or write this one by hand")


def _atomic_replace(root: Path, path: Path, before: bytes | None, data: bytes) -> None:
    """Replace `path` with `data` through the safe writer (a random, exclusive temporary name;
    no link followed), unless the file changed since it was read."""
    def unchanged() -> None:
        now = path.read_bytes() if path.exists() else None
        if now != before:
            raise GenerateError(f"{path} changed while generating; nothing was written", hint="run the command again")

    safewrite.write_bytes(path, data, root, before_replace=unchanged)


def write_components(root: Path, sc: Scenario, kind: str, drafts: list[Draft]) -> list[Written]:
    """Add `drafts` to scenario `sc` (skipping those already in the tree); returns one entry per draft."""
    existing = {component_provenance(c): c for c in sc.components[kind]}
    todo = [d for d in drafts if d.provenance() not in existing]
    codes = iter(next_codes([c.code for c in sc.components[kind]], kind, len(todo)))
    folder = inside(root, root / sc.folder)
    consolidated = folder / CONSOLIDATED[kind]
    individual = folder / INDIVIDUAL[kind]
    planned: list[tuple[str, Draft]] = [(next(codes), d) for d in todo]
    if planned:
        if individual.is_dir() and not consolidated.exists():
            _write_individual(root, individual, planned)
        else:
            _append_consolidated(root, consolidated, kind, planned)
    out, new = [], dict((id(d), code) for code, d in planned)
    for d in drafts:
        if id(d) in new:
            path = (individual / f"{new[id(d)]}.md") if individual.is_dir() and not consolidated.exists() else consolidated
            out.append(Written(new[id(d)], path.relative_to(root).as_posix(), True))
        else:
            c = existing[d.provenance()]
            out.append(Written(c.code, c.path, False))
    return out


def _write_individual(root: Path, folder: Path, planned: list[tuple[str, Draft]]) -> None:
    inside(root, folder)
    for code, draft in planned:
        text = render_component(None, draft)
        fm, body, _ = md.split_single(text)
        _check_part(fm.text, body, draft, f"{folder.name}/{code}.md")
    for code, draft in planned:  # exclusive: never overwrite
        safewrite.write_text(inside(root, folder / f"{code}.md"), render_component(None, draft), root, exclusive=True)


def _append_consolidated(root: Path, path: Path, kind: str, planned: list[tuple[str, Draft]]) -> None:
    inside(root, path)
    before = path.read_bytes() if path.exists() else None
    raw = before or b""
    bom = raw.startswith(b"\xef\xbb\xbf")
    old = raw.decode("utf-8-sig")
    crlf = "\r\n" in old
    old = old.replace("\r\n", "\n")
    old_parts = md.split_consolidated(old).parts if old.strip() else []
    added = "\n".join(render_component(code, d) for code, d in planned)
    text = (old.rstrip("\n") + "\n\n" + added) if old.strip() else added
    parts = md.split_consolidated(text).parts
    expected = [p.heading for p in old_parts] + [code for code, _ in planned]
    if [p.heading for p in parts] != expected:
        raise GenerateError(f"appending to {path.relative_to(root).as_posix()} would not give components "
                            f"{', '.join(expected)} (an unclosed code fence or frontmatter in the file?); nothing "
                            "was written", hint="run `helmbench lint` and fix the file first")
    for part, (code, draft) in zip(parts[len(old_parts):], planned):
        _check_part(part.frontmatter.text, part.body, draft, f"{path.name} {code}")
    data = text.replace("\n", "\r\n") if crlf else text
    _atomic_replace(root, path, before, (b"\xef\xbb\xbf" if bom else b"") + data.encode("utf-8"))


def next_scenario_code(taken: list[str]) -> str:
    numbers = [int(SCENARIO_RE.match(c).group(1)[1:].rstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ")) for c in taken
               if SCENARIO_RE.match(c)]
    return f"S{max(numbers, default=0) + 1}"


def write_scenario_folder(root: Path, folder: Path, files: dict[str, str]) -> None:
    """Create `folder` (which must not exist) holding `files`, all at once: written into a hidden
    sibling folder first, then renamed into place."""
    inside(root, folder.parent)
    if folder.exists():
        raise GenerateError(f"{folder.relative_to(root).as_posix()} already exists; nothing was written")
    tmp = safewrite.fresh_dir(folder.parent, f".{folder.name}.", root)
    try:
        for name, text in sorted(files.items(), key=lambda kv: natural_key(kv[0])):
            safewrite.write_text(tmp / name, text, tmp, exclusive=True)
        os.rename(tmp, folder)  # a folder that appeared meanwhile (not empty) makes this fail, never merge
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
